# sattcp developer entry points. `make run` and `make test` are the README's quickstart: each
# creates what it needs (virtualenv, Python dependencies, the Rust core built by maturin).

VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.sattcp-deps
BUILT  := $(VENV)/.sattcp-built
RUST_SOURCES := $(shell find crates -name '*.rs' -o -name Cargo.toml) Cargo.toml pyproject.toml

.PHONY: run test build rust-test py-test bench lint clean

run: build
	$(VENV)/bin/sattcp run scenarios/geo-bulk.toml

test: rust-test py-test

build: $(BUILT)

$(PY):
	python3 -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q 'maturin>=1.7,<2'
	touch $(STAMP)

# maturin develop also installs the project's dependencies and the named extras.
$(BUILT): $(STAMP) $(RUST_SOURCES)
	VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop --release --extras dev,cluster -q
	touch $(BUILT)

rust-test:
	cargo test -p sattcp-core -q

py-test: build
	$(VENV)/bin/pytest -q

bench: build
	cargo run --release -p sattcp-core --example bench_dumbbell

lint: build
	$(VENV)/bin/ruff check python tests
	cargo clippy -p sattcp-core -q

clean:
	rm -rf $(VENV) target
