#!/bin/bash
# Instruction counts and simulated cache misses per bottleneck packet of the drop-tail GEO
# dumbbell at 10 flows (400 s simulated) and 10,000 flows (4 s), the bottleneck at 450 kbps per
# flow (bench/README.md, "Where the cost per packet grows with the flows"). Deterministic: use it
# to compare two builds of the core on a busy machine. Needs valgrind (apt-get install valgrind).
# The cache model: L1 data 32 KiB 8-way, last level 32 MiB 16-way (this project's machine's L3;
# pass --LL=SIZE,ASSOC,64 as $LL to model another, e.g. LL=4194304,16,64 to stand for 100,000
# flows at 10,000).
#
#   bench/cachegrind-scale.sh TAG [BENCH_BINARY]    (default target/release/examples/bench)
#
# Prints one line per case: events, bottleneck packets, delivered bytes and the run's digest
# (which a refactor must keep) and instructions, L1 data misses and last-level data misses per
# bottleneck packet.
set -euo pipefail
TAG=${1:?usage: bench/cachegrind-scale.sh TAG [BENCH_BINARY]}
BIN=${2:-target/release/examples/bench}
LL=${LL:-33554432,16,64}
OUT=${OUT:-target/cachegrind}
mkdir -p "$OUT"
SC="scenarios/geo-dumbbell-droptail.toml --set tcp.mss=1024"
run() { # name pairs rate stagger duration
    valgrind --tool=cachegrind --cache-sim=yes --D1=32768,8,64 --LL="$LL" --cachegrind-out-file="$OUT/$TAG.$1.out" \
        "$BIN" --kv $SC --set topology.pairs="$2" --set links.bottleneck.rate="$3" --set app.stagger="$4" \
        --set run.duration="$5" >"$OUT/$TAG.$1.kv" 2>"$OUT/$TAG.$1.err"
}
run 10 10 4500kbps 100000000ns 400s
run 10k 10000 4500000kbps 100000ns 4s
python3 - "$OUT" "$TAG" <<'PY'
import re, sys
out, tag = sys.argv[1:]
for n in ("10", "10k"):
    kv = open(f"{out}/{tag}.{n}.kv").read()
    err = open(f"{out}/{tag}.{n}.err").read()
    bn = int(re.search(r"bn_packets=(\d+)", kv).group(1))
    ev = re.search(r"events=(\d+)", kv).group(1)
    dlv = re.search(r"delivered_bytes=(\d+)", kv).group(1)
    digest = re.search(r"digest=(\w+)", kv).group(1)
    g = lambda k: int(re.search(k + r":\s+([\d,]+)", err).group(1).replace(",", ""))
    print(f"{tag} flows={'10' if n == '10' else '10000'} events={ev} bn_packets={bn} delivered_bytes={dlv} digest={digest} "
          f"instr/pkt={g('I   refs') / bn:.1f} D1miss/pkt={g('D1  misses') / bn:.2f} LLdmiss/pkt={g('LLd misses') / bn:.2f}")
PY
