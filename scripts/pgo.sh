#!/usr/bin/env bash
# A profile-guided build of the simulator (issue 15): the same results, digests included, in
# 10-28% less CPU time per run on every scenario file (README "Speed", with the command).
#
#   scripts/pgo.sh develop   # (make build-pgo) installs the optimised native module into .venv
#   scripts/pgo.sh wheel     # (make wheel-pgo) an optimised abi3 wheel in dist/, for cluster nodes
#
# Steps: (1) the native module is built with LLVM's instrumentation, (2) it runs a training set
# (scripts/pgo_train.py: every scenario in scenarios/, the seeds' study factors and the congestion
# controls on shorter runs, 10,000 flows), (3) llvm-profdata merges the counts into
# target/pgo/sattcp.profdata, (4) the module is built again with -Cprofile-use. Both builds live
# in target/pgo, apart from the plain one in target/release, so switching between them rebuilds
# nothing twice.
#
# The profile describes the code it was taken from: after a change to crates/, run this again
# (a plain `make build` replaces the optimised module as soon as a source changes). Opt-in
# because it costs a second, instrumented build and the training (`make build-pgo` from a fresh
# clone: 4.6 minutes on two cores): worth it for studies of many runs, not for one `make run`.
#
# Needs llvm-profdata of the Rust toolchain's own LLVM (rustup's llvm-tools component, added
# here if rustup can; a system llvm-profdata of another LLVM version cannot read the profiles).
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "pgo: $*" >&2; exit 2; }

mode=${1:-}
case "$mode" in
  develop|wheel) ;;
  *) die "usage: scripts/pgo.sh develop|wheel (got '${mode}')" ;;
esac

VENV=${VENV:-.venv}
[ -x "$VENV/bin/maturin" ] || die "$VENV/bin/maturin missing: run 'make build' once first"

sysroot=$(rustc --print sysroot) || die "rustc not found"
host=$(rustc -vV | sed -n 's/^host: //p')
profdata="$sysroot/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ] && command -v rustup >/dev/null 2>&1; then
  echo "pgo: adding rustup's llvm-tools component (for llvm-profdata)" >&2
  rustup component add llvm-tools >&2 || true
fi
[ -x "$profdata" ] || die "$profdata missing: install the toolchain's llvm-tools (rustup component add llvm-tools)"

top=$(pwd)
dir="$top/target/pgo"
raw="$dir/raw"
profile="$dir/sattcp.profdata"

train_profile() {
  # The profile must be taken from the module itself: the benchmark binary's sattcp-core is
  # compiled with other dependency features (its dev-dependencies), so its functions carry other
  # symbol names and its profile would match nothing in the module.
  echo "pgo: 1/4 building the instrumented module (target/pgo/gen)" >&2
  rm -rf "$raw" "$dir/train" "$dir/gen/wheel"
  CARGO_TARGET_DIR="$dir/gen" RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-generate=$raw" \
    "$VENV/bin/maturin" build --release -q --out "$dir/gen/wheel" >&2
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
toolchain=$(rustc -vV | tr '\n' ' ')
stale=$(find crates Cargo.toml Cargo.lock pyproject.toml scripts/pgo_train.py \( -name '*.rs' -o -name '*.toml' -o -name '*.lock' -o -name '*.py' \) -newer "$profile" 2>/dev/null | head -1 || true)
if [ -f "$profile" ] && [ -z "$stale" ] && [ "$(cat "$dir/toolchain" 2>/dev/null)" = "$toolchain" ] \
   && [ "${SATTCP_PGO_RETRAIN:-0}" != 1 ]; then
  echo "pgo: 1-3/4 the profile target/pgo/sattcp.profdata is newer than the sources: used again" >&2
else
  train_profile
fi

use_flags="${RUSTFLAGS:-} -Cprofile-use=$profile"
# `sattcp --version` says which build it is (sattcp._core.build_profile()).
export SATTCP_BUILD_PROFILE=profile-guided
echo "pgo: 4/4 building with the profile (target/pgo/use)" >&2
if [ "$mode" = develop ]; then
  CARGO_TARGET_DIR="$dir/use" RUSTFLAGS="$use_flags" VIRTUAL_ENV="$top/$VENV" \
    "$VENV/bin/maturin" develop --release --extras dev,cluster -q
else
  CARGO_TARGET_DIR="$dir/use" RUSTFLAGS="$use_flags" \
    "$VENV/bin/maturin" build --release -q --out dist
fi
echo "pgo: done" >&2
