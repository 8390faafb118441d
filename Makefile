# sattcp developer entry points. `make run` and `make test` are the README's quickstart: each
# creates what it needs (virtualenv, Python dependencies, the Rust core built by maturin).

VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.sattcp-deps
BUILT  := $(VENV)/.sattcp-built
RUST_SOURCES := $(shell find crates -name '*.rs' -o -name Cargo.toml) Cargo.toml pyproject.toml

.PHONY: FORCE run test build build-pgo pgo-store wheel-pgo rust-test py-test bench bench-scale bench-peers bench-peers-scale bench-headline lint clean browser

# The main job: one bulk flow over GEO, then the seeds' whole 72-run study with its report.
run: build
	$(VENV)/bin/sattcp run scenarios/geo-bulk.toml
	$(VENV)/bin/sattcp reproduce kota-www --out out/kota-www

test: rust-test browser py-test

build: $(BUILT)

$(PY):
	python3 -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q 'maturin>=1.7,<2'
	touch $(STAMP)

# maturin develop also installs the project's dependencies and the named extras. The module is
# built with the profile stored in crates/sattcp-py/pgo (profile-guided, for the time of a plain
# build) where this toolchain can use it, else as the plain release build; `scripts/pgo.sh plan`
# says which and why, SATTCP_PGO=0 asks for the plain one.
# $(PLAN) holds that decision and changes only with it (SATTCP_PGO=0, another toolchain), so
# that a new decision rebuilds and the same one does not.
STORED_PROFILE := $(wildcard crates/sattcp-py/pgo/sattcp.profdata.xz crates/sattcp-py/pgo/profile.json)
PLAN := $(VENV)/.sattcp-plan
$(BUILT): $(STAMP) $(RUST_SOURCES) $(STORED_PROFILE) scripts/pgo.sh $(PLAN)
	VENV=$(VENV) scripts/pgo.sh build
	touch $(BUILT)

$(PLAN): FORCE | $(PY)
	@VENV=$(VENV) scripts/pgo.sh plan 2>/dev/null > $(PLAN).new
	@if cmp -s $(PLAN).new $(PLAN); then rm -f $(PLAN).new; else mv $(PLAN).new $(PLAN); fi

FORCE:

# Issue 15: the module built with a profile taken now from the current sources (scripts/pgo.sh:
# an instrumented build, training runs, a second build: about twice as long): the same results
# in 13-33% less CPU time per run than the plain build (README "Speed"). A later `make build`
# after a source change replaces it.
build-pgo: $(STAMP)
	VENV=$(VENV) scripts/pgo.sh develop
	touch $(BUILT)

# ... and that profile stored in crates/sattcp-py/pgo for every later `make build` (commit it).
pgo-store: $(STAMP)
	VENV=$(VENV) scripts/pgo.sh store

# ... and as an abi3 wheel in dist/, to install on a cluster's nodes (docs/analysis.md).
wheel-pgo: $(STAMP)
	VENV=$(VENV) scripts/pgo.sh wheel

rust-test:
	cargo test -p sattcp-core -q

py-test: build
	$(VENV)/bin/ruff check python tests scripts
	$(VENV)/bin/pytest -q

# The report test renders HTML in headless Chromium: install Debian's package when it is
# missing and we may (root with apt-get); otherwise that one test is skipped with its reason.
browser:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) || \
		echo "note: chromium not installed; the report rendering test will be skipped"; }

bench: build
	cargo run --release -q -p sattcp-core --example bench -- --repeat 5
	rm -rf out/bench-reproduce && time $(VENV)/bin/sattcp reproduce kota-www --out out/bench-reproduce >/dev/null

# Issue 15: cost per bottleneck packet and memory per flow from 10 to 100,000 flows, 5 s simulated
# (minutes; 1.4 GB of heap at 100,000 flows, its "peak MB" column; the bench's --no-pending skips its slower counting run).
bench-scale:
	cargo run --release -q -p sattcp-core --example bench -- --scale --repeat 1

# Issue 15: the same dumbbell in ns-2 (and ns-3 where installed), goodput and paired speed.
bench-peers:
	cargo build --release -q -p sattcp-core --example bench
	bench/peers --repeat 3

# Issue 15: how each tool's cost per delivered segment grows from 10 to 10,000 flows on the scaling
# dumbbell (about 45 minutes, most of it ns-3 at 10,000 flows until the script's 30-minute --timeout).
bench-peers-scale:
	bench/peers --scale --repeat 3

# Issue 15: this host's headline figures (bench, scale, start-up, the study's sweep, the peers
# where installed) with its host line, and the row of the README's per-host table.
bench-headline: build
	$(PY) bench/headline.py --peers

lint: build
	$(VENV)/bin/ruff check python tests scripts
	cargo clippy -q -p sattcp-core --all-targets -- -D warnings
	cargo clippy -q -p sattcp-core --example bench --features queue-stats -- -D warnings

clean:
	rm -rf $(VENV) target
