#!/bin/bash
# A/B comparison of two or more builds of the bench on a machine whose speed drifts: runs the
# builds alternately, ROUNDS times, each as `bench --scale --flows FLOWS --duration D
# --no-pending --repeat 1`, and prints every run's CPU ns per bottleneck packet, then the median
# per build and flow count. Alternating spreads the machine's drift over all builds; compare
# medians, and treat differences smaller than the spread of one build's runs as noise.
#
#   bench/ab.sh ROUNDS FLOWS DURATION BENCH_BINARY...
#   e.g. bench/ab.sh 3 10000,100000 5s /tmp/bench-before target/release/examples/bench
set -euo pipefail
ROUNDS=${1:?usage: bench/ab.sh ROUNDS FLOWS DURATION BENCH_BINARY...}
FLOWS=${2:?}
DURATION=${3:?}
shift 3
[ $# -ge 1 ] || { echo "bench/ab.sh: no bench binary given" >&2; exit 2; }
for b in "$@"; do
    [ -x "$b" ] || { echo "bench/ab.sh: $b is not an executable" >&2; exit 2; }
done
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for ((i = 1; i <= ROUNDS; i++)); do
    for b in "$@"; do
        # The summary table's rows: "flows  ns/bnpkt  ratio ...".
        "$b" --scale --flows "$FLOWS" --duration "$DURATION" --no-pending --repeat 1 2>/dev/null |
            awk -v b="$b" -v r="$i" '/^ +[0-9]+ +[0-9]+ +[0-9.]+x/ { print b, r, $1, $2 }' | tee -a "$out"
    done
done
echo "median CPU ns per bottleneck packet (build, flows, runs):"
python3 - "$out" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
seen = []
for b, _, f, _ in rows:
    if (b, f) not in seen:
        seen.append((b, f))
for b, f in sorted(seen, key=lambda k: (int(k[1]), seen.index(k))):
    v = [int(ns) for bb, _, ff, ns in rows if (bb, ff) == (b, f)]
    print(f"  {b}  {f} flows: {statistics.median(v):.0f} ns  ({' '.join(map(str, v))})")
PY
