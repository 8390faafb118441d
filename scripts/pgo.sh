#!/usr/bin/env bash
# The profile-guided builds of the simulator (issue 15): the same results, digests included, in
# 13-33% less CPU time per run than the plain build on every scenario file (README "Speed", with
# the command).
#
#   scripts/pgo.sh build     # (make build) the module with the profile stored in the repository,
#                            # or the plain release build where that profile cannot be used
#   scripts/pgo.sh plan      # says which of the two `build` would do, and why
#   scripts/pgo.sh develop   # (make build-pgo) a profile taken now from the current sources
#   scripts/pgo.sh wheel     # (make wheel-pgo) the same as an abi3 wheel in dist/, for cluster nodes
#   scripts/pgo.sh store     # (make pgo-store) takes a profile now and stores it in the repository
#
# Taking a profile: (1) the native module is built with LLVM's instrumentation, (2) it runs a
# training set (scripts/pgo_train.py: every scenario in scenarios/, the seeds' study factors and
# the congestion controls on shorter runs, 10,000 flows), (3) llvm-profdata merges the counts
# into target/pgo/sattcp.profdata, (4) the module is built again with -Cprofile-use. Every build
# here lives in target/pgo, apart from the plain one in target/release (which `cargo build
# --release` and the benchmarks share), so switching between them rebuilds nothing twice.
#
# The stored profile (crates/sattcp-py/pgo/: the profile merged sparse, xz-compressed, about
# 0.1 MB, and profile.json saying which sources and toolchain it was taken from) gives every
# `make build` the profile-guided module for the cost of a plain build: no instrumented build,
# no training. It describes the code it was taken from: a function changed since builds without
# its counts (LLVM matches each function's counts by a hash of its control flow and drops those
# that differ; the others keep theirs), so it is refreshed with `make pgo-store` after changes
# to the simulator's hot paths; `build` notes when the module's sources changed since. It is used only with
# a toolchain of the same LLVM major version (another may not read the file); otherwise, or with
# SATTCP_PGO=0, `build` is the plain release build and says why.
#
# Taking a profile needs llvm-profdata of the Rust toolchain's own LLVM (rustup's llvm-tools
# component, added here if rustup can; a system llvm-profdata of another LLVM version cannot
# read the profiles). Using the stored one needs nothing but rustc.
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "pgo: $*" >&2; exit 2; }

mode=${1:-}
case "$mode" in
  build|plan|develop|wheel|store) ;;
  *) die "usage: scripts/pgo.sh build|plan|develop|wheel|store (got '${mode}')" ;;
esac

VENV=${VENV:-.venv}
top=$(pwd)
dir="$top/target/pgo"
raw="$dir/raw"
profile="$dir/sattcp.profdata"
stored_dir="crates/sattcp-py/pgo"
stored="$stored_dir/sattcp.profdata.xz"
stored_meta="$stored_dir/profile.json"
py="$VENV/bin/python"
[ -x "$py" ] || py=python3
rustc_v=$(rustc -vV) || die "rustc not found"
toolchain=$(echo "$rustc_v" | tr '\n' ' ')
llvm=$(echo "$rustc_v" | sed -n 's/^LLVM version: //p')

# The sources a profile describes: the module's crates and the workspace's manifests (its
# release profile), without the stored profile itself and without what is not compiled into
# the module (the core's examples, such as the bench, its integration tests and proptest
# regressions) (git pathspecs).
module_sources=(Cargo.toml Cargo.lock crates/sattcp-core crates/sattcp-py ":!$stored_dir"
  ":!crates/sattcp-core/examples" ":!crates/sattcp-core/tests" ":!crates/sattcp-core/proptest-regressions")

# RUSTFLAGS (or CARGO_ENCODED_RUSTFLAGS) as cargo would split them, then the arguments whole (a
# path may hold spaces), in the form cargo reads first: CARGO_ENCODED_RUSTFLAGS, joined by 0x1f.
encoded_flags() {
  local -a f=()
  local x
  if [ -n "${CARGO_ENCODED_RUSTFLAGS:-}" ]; then
    IFS=$'\x1f' read -r -a f <<< "$CARGO_ENCODED_RUSTFLAGS"
  else
    set -f
    for x in ${RUSTFLAGS:-}; do f+=("$x"); done
    set +f
  fi
  f+=("$@")
  local IFS=$'\x1f'
  echo "${f[*]}"
}

# One field of profile.json (a flat object of strings).
meta() {
  sed -n "s/^ *\"$1\": *\"\\([^\"]*\\)\".*/\\1/p" "$stored_meta"
}

# Prints "stored" or "plain: WHY" for `build`, and to stderr a note when the module's sources
# changed since the stored profile was taken (or when git cannot tell).
plan() {
  if [ "${SATTCP_PGO:-1}" = 0 ]; then
    echo "plain: SATTCP_PGO=0"; return
  fi
  if [ ! -f "$stored" ] || [ ! -f "$stored_meta" ]; then
    echo "plain: no stored profile ($stored)"; return
  fi
  local want
  want=$(meta llvm)
  if [ -z "$llvm" ] || [ "${llvm%%.*}" != "${want%%.*}" ]; then
    echo "plain: the stored profile is of LLVM $want ($(meta rustc)), this rustc's LLVM is ${llvm:-unknown} (make build-pgo takes one with it)"
    return
  fi
  if ! "$py" -c "import lzma" 2>/dev/null; then
    echo "plain: $py has no lzma module to unpack the stored profile"; return
  fi
  local rev changed
  rev=$(meta source)
  if ! git rev-parse -q --verify "${rev%-dirty}^{commit}" >/dev/null 2>&1; then
    echo "pgo: note: the stored profile was taken at ${rev}, which git does not know here: cannot tell whether the module's sources changed since" >&2
  else
    changed=$(git diff --name-only "${rev%-dirty}" -- "${module_sources[@]}" | wc -l)
    if [ "$changed" -gt 0 ]; then
      echo "pgo: note: the stored profile was taken at ${rev}; ${changed} file(s) of the module's sources changed since build without counts where their functions changed (make pgo-store takes a new one)" >&2
    fi
  fi
  echo "stored"
}

# Installs the module into $VENV (editable), with the project's dependencies and the extras
# make build installs; the caller's environment assignments (target folder, flags) reach cargo.
develop_module() {
  VIRTUAL_ENV="$(cd "$VENV" && pwd)" "$VENV/bin/maturin" develop --release --extras dev,cluster -q
}

# The module with the stored profile, decompressed under a name of its own digest so that a new
# profile changes the compiler flags and cargo rebuilds with it.
build_stored() {
  local digest use
  digest=$("$py" -c "import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], 'rb').read()).hexdigest()[:16])" "$stored")
  use="$dir/stored/$digest.profdata"
  if [ ! -f "$use" ]; then
    mkdir -p "$dir/stored"
    rm -f "$dir"/stored/*.profdata  # an earlier stored profile's copy
    "$py" -c "import lzma, sys; open(sys.argv[2] + '.tmp', 'wb').write(lzma.open(sys.argv[1]).read())" "$stored" "$use"
    mv "$use.tmp" "$use"
  fi
  # -no-pgo-warn-mismatch: LLVM warns for each function whose counts it drops, which is every
  # function changed since the profile was taken; the note of plan() says it once.
  CARGO_TARGET_DIR="$dir/stored" \
    CARGO_ENCODED_RUSTFLAGS="$(encoded_flags "-Cprofile-use=$use" -Cllvm-args=-no-pgo-warn-mismatch)" \
    SATTCP_BUILD_PROFILE="profile-guided, stored profile of $(meta source)" develop_module
}

if [ "$mode" = plan ]; then
  plan
  exit 0
fi
[ -x "$VENV/bin/maturin" ] || die "$VENV/bin/maturin missing: run 'make build' once first"
if [ "$mode" = build ]; then
  how=$(plan)
  if [ "$how" = stored ]; then
    echo "pgo: building with the stored profile of $(meta source) (crates/sattcp-py/pgo)" >&2
    build_stored
  else
    echo "pgo: the plain release build (${how#plain: })" >&2
    develop_module  # as make build always was (target/release)
  fi
  exit 0
fi

sysroot=$(rustc --print sysroot)
host=$(echo "$rustc_v" | sed -n 's/^host: //p')
profdata="$sysroot/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ] && command -v rustup >/dev/null 2>&1; then
  echo "pgo: adding rustup's llvm-tools component (for llvm-profdata)" >&2
  rustup component add llvm-tools >&2 || true
fi
[ -x "$profdata" ] || die "$profdata missing: install the toolchain's llvm-tools (rustup component add llvm-tools)"

train_profile() {
  # The profile must be taken from the module itself: the benchmark binary's sattcp-core is
  # compiled with other dependency features (its dev-dependencies), so its functions carry other
  # symbol names and its profile would match nothing in the module.
  echo "pgo: 1/4 building the instrumented module (target/pgo/gen)" >&2
  rm -rf "$raw" "$dir/train" "$dir/gen/wheel"
  CARGO_TARGET_DIR="$dir/gen" CARGO_ENCODED_RUSTFLAGS="$(encoded_flags "-Cprofile-generate=$raw")" \
    "$VENV/bin/maturin" build --release -q --out "$dir/gen/wheel" >&2
  # The build scripts and procedural macros of that build are instrumented too (RUSTFLAGS reach
  # them) and leave their own counts in $raw when they run; those describe the compiler's
  # helpers, not the module (merged, they made the sparse profile 2.9x larger, and generic
  # instances named as the module's own, drop_in_place of a Vec and others, met them with other
  # control flow), so only the training's counts are kept.
  rm -rf "$raw"
  wheel=$(echo "$dir"/gen/wheel/sattcp-*.whl)  # the one just built
  # The training imports the package from a copy of python/ with the instrumented module in it,
  # so the installed one is not touched until the end.
  mkdir -p "$dir/train"
  cp -r python/sattcp "$dir/train/"
  rm -f "$dir/train/sattcp/"_core*.so
  "$VENV/bin/python" -c "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); n = [m for m in z.namelist() if m.startswith('sattcp/_core') and m.endswith('.so')]; z.extract(n[0], sys.argv[2])" "$wheel" "$dir/train"

  echo "pgo: 2/4 training runs (scripts/pgo_train.py)" >&2
  PYTHONPATH="$dir/train" "$VENV/bin/python" scripts/pgo_train.py || die "a training run failed"

  echo "pgo: 3/4 merging the profiles into target/pgo/sattcp.profdata" >&2
  "$profdata" merge -o "$profile" "$raw"
  echo "$toolchain" > "$dir/toolchain"
}

# A profile newer than every Rust source and manifest, taken with this toolchain (another LLVM
# may not read it), is used again (`make wheel-pgo` after `make build-pgo` trains nothing);
# SATTCP_PGO_RETRAIN=1 forces the training.
stale=$(find crates Cargo.toml Cargo.lock pyproject.toml scripts/pgo_train.py scripts/pgo.sh \( -name '*.rs' -o -name '*.toml' -o -name '*.lock' -o -name '*.py' -o -name '*.sh' \) -newer "$profile" 2>/dev/null | head -1 || true)
if [ -f "$profile" ] && [ -z "$stale" ] && [ "$(cat "$dir/toolchain" 2>/dev/null)" = "$toolchain" ] \
   && [ "${SATTCP_PGO_RETRAIN:-0}" != 1 ]; then
  echo "pgo: 1-3/4 the profile target/pgo/sattcp.profdata is newer than the sources: used again" >&2
else
  train_profile
fi

if [ "$mode" = store ]; then
  # Sparse: the functions no training run reached are left out (they are compiled as without a
  # profile instead of as cold), which keeps the file at a quarter of the size at the same speed
  # (bench/README.md "The stored profile").
  echo "pgo: 4/4 storing the profile, sparse and compressed, in $stored_dir" >&2
  "$profdata" merge --sparse -o "$dir/sparse.profdata" "$profile"
  mkdir -p "$stored_dir"
  "$VENV/bin/python" -c "import lzma, sys; lzma.open(sys.argv[2], 'wb', preset=9 | lzma.PRESET_EXTREME).write(open(sys.argv[1], 'rb').read())" "$dir/sparse.profdata" "$stored"
  rev=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
  # Changed or new files the profile depends on, committed or not: the module's sources, the
  # training and this script.
  [ -z "$(git status --porcelain -- "${module_sources[@]}" scripts/pgo_train.py scripts/pgo.sh 2>/dev/null)" ] || rev="$rev-dirty"
  cat > "$stored_meta" <<JSON
{
  "what": "the profile of scripts/pgo.sh store: llvm-profdata merge --sparse of scripts/pgo_train.py's counts, xz",
  "source": "$rev",
  "taken": "$(date -u +%Y-%m-%dT%H:%MZ)",
  "rustc": "$(echo "$rustc_v" | head -1)",
  "llvm": "$llvm"
}
JSON
  echo "pgo: stored $stored ($(wc -c < "$stored") bytes) and $stored_meta; make build uses them" >&2
  exit 0
fi

use_flags=$(encoded_flags "-Cprofile-use=$profile")
# `sattcp --version` says which build it is (sattcp._core.build_profile()).
export SATTCP_BUILD_PROFILE=profile-guided
echo "pgo: 4/4 building with the profile (target/pgo/use)" >&2
if [ "$mode" = develop ]; then
  CARGO_TARGET_DIR="$dir/use" CARGO_ENCODED_RUSTFLAGS="$use_flags" develop_module
else
  CARGO_TARGET_DIR="$dir/use" CARGO_ENCODED_RUSTFLAGS="$use_flags" \
    "$VENV/bin/maturin" build --release -q --out dist
fi
echo "pgo: done" >&2
