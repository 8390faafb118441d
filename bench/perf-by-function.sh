#!/bin/bash
# Where the CPU time of the scaling dumbbell goes, by function: samples the bench with `perf
# record -e cpu-clock` (a software clock: works in VMs without hardware counters) and prints, for
# the functions with the most samples, their share of the samples times the run's CPU ns per
# bottleneck packet (bench/README.md, "Where the remaining growth goes"). Inlined code counts
# in the function it was inlined into. Needs perf (apt-get install linux-perf).
#
#   bench/perf-by-function.sh FLOWS DURATION [REPEAT] [BENCH_BINARY]
#   e.g. bench/perf-by-function.sh 10000 20s    (REPEAT: runs in one process, for small cases)
set -euo pipefail
FLOWS=${1:?usage: bench/perf-by-function.sh FLOWS DURATION [REPEAT] [BENCH_BINARY]}
DURATION=${2:?usage: bench/perf-by-function.sh FLOWS DURATION [REPEAT] [BENCH_BINARY]}
REPEAT=${3:-1}
BIN=${4:-target/release/examples/bench}
TOP=${TOP:-16}
command -v perf >/dev/null || { echo "bench/perf-by-function.sh: perf is not installed (apt-get install linux-perf)" >&2; exit 2; }
[ -x "$BIN" ] || { echo "bench/perf-by-function.sh: $BIN is not an executable (cargo build --release -p sattcp-core --example bench)" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
perf record -q -e cpu-clock -F 2000 -o "$dir/perf.data" "$BIN" --scale --flows "$FLOWS" --duration "$DURATION" \
    --no-pending --repeat "$REPEAT" >"$dir/bench.txt" 2>/dev/null
# The bench's own figure: CPU ns per bottleneck packet (best of REPEAT; the samples cover all).
ns=$(awk '/^ +[0-9]+ +[0-9]+ +[0-9.]+x/ { print $2 }' "$dir/bench.txt")
echo "$FLOWS flows, $DURATION simulated: $ns CPU ns per bottleneck packet (bench); by function:"
perf report -q -i "$dir/perf.data" --no-children --sort symbol --percent-limit 0.5 2>/dev/null |
    awk -v ns="$ns" -v top="$TOP" 'NF >= 3 && $1 ~ /%$/ && n < top {
        pct = $1; sub(/%/, "", pct); name = $3; for (i = 4; i <= NF; i++) if ($i != "-") name = name " " $i
        printf "%8.1f ns  %5.1f%%  %s\n", ns * pct / 100, pct, name; n++ }'
