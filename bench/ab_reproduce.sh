#!/bin/bash
# Times `sattcp reproduce kota-www` from two source trees alternately (issue 15): each tree's
# python/ (with its native module, e.g. a worktree of another commit with a module copied in)
# runs the whole command, sweep and report, ROUNDS times. Prints per run the sweep's own line,
# the CPU of the command and its children, and the wall time of the whole command.
#
#   bench/ab_reproduce.sh /tmp/base /work/main 2 [--quick]
#
# The trees' modules say which build they are: PYTHONPATH=TREE/python .venv/bin/python -c
# 'from sattcp import _core; print(_core.build_profile())'.
set -euo pipefail
usage() { echo "usage: $0 TREE_A TREE_B [ROUNDS] [--quick]" >&2; exit 2; }
[ $# -ge 2 ] || usage
a=$1 b=$2 rounds=${3:-2} quick=${4:-}
for t in "$a" "$b"; do
    [ -f "$t/python/sattcp/__init__.py" ] || { echo "$0: $t has no python/sattcp (a source tree is wanted)" >&2; exit 2; }
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "$0: ROUNDS must be a whole number >= 1, got '$rounds'" >&2; exit 2; }
[ -z "$quick" ] || [ "$quick" = --quick ] || usage
root=$(cd "$(dirname "$0")/.." && pwd)
py=$root/.venv/bin/python
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for _ in $(seq "$rounds"); do
    for t in "$a" "$b"; do
        rm -rf "$out/r"
        start=$(date +%s%N)
        lines=$(cd "$root" && PYTHONPATH=$t/python /usr/bin/time -f "cpu user %U s sys %S s" \
            "$py" -m sattcp.cli reproduce kota-www $quick --out "$out/r" --no-progress 2>&1 | grep -E "ok, .* failed|^cpu user")
        end=$(date +%s%N)
        echo "$t: $(echo "$lines" | tr '\n' ' ')whole $(( (end - start) / 1000000 )) ms"
    done
done
