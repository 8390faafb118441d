"""Seed 003's NetPIPE experiment on the kernel's own TCP: NPtcp through `sattcp emulate` on the
E1 satellite path, for each congestion control x RTT x socket buffer x BER; one CSV.

    sudo .venv/bin/python scripts/netpipe_kernel.py --out out/netpipe-kernel.csv \
        [--cc reno,cubic,bbr] [--rtt-ms 1,10,20,50,100,200,400,600] [--buffer 8192,65536] \
        [--ber 0,1e-8,1e-6] [--upper 65536] [--framing atm] [--jobs 2]

Columns: cc, rtt_ms, buffer, ber, framing, bytes, time_s (NetPIPE's block transfer time, half
the best round trip), throughput_bps, netpipe_mbps (NetPIPE's own figure, 2^20 bit/s). The
link is scenarios/emulate/e1.toml's (ATM cells at the E1's 1.92 Mbps cell rate) with delay = RTT / 2 each way.
Runs are independent namespaces, so --jobs runs several at once (each mostly waits on the
link; the emulator's timing under load is in its counters, docs/emulate.md).
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from sattcp.emulate import Emulation  # noqa: E402
from sattcp.netpipe import run_nptcp  # noqa: E402

SCENARIO = ROOT / "scenarios" / "emulate" / "e1.toml"
COLUMNS = ["cc", "rtt_ms", "buffer", "ber", "framing", "bytes", "time_s", "throughput_bps", "netpipe_mbps"]


def one(cc: str, rtt_ms: float, buffer: int, ber: float, framing: str, upper: int) -> list[dict]:
    overrides = {"emulate.cc": cc, "emulate.delay": f"{rtt_ms / 2}ms", "emulate.ber": repr(ber), "emulate.framing": framing}
    t0 = time.monotonic()
    with Emulation(SCENARIO, overrides) as em:
        rows = run_nptcp(em, buffer=buffer, upper=upper)
    print(f"{cc} rtt {rtt_ms} ms buffer {buffer} ber {ber:g}: {len(rows)} sizes in {time.monotonic() - t0:.0f} s", file=sys.stderr)
    return [{"cc": cc, "rtt_ms": rtt_ms, "buffer": buffer, "ber": ber, "framing": framing, **r} for r in rows]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="CSV file to write")
    ap.add_argument("--cc", default="reno,cubic,bbr")
    ap.add_argument("--rtt-ms", default="1,10,20,50,100,200,400,600")
    ap.add_argument("--buffer", default="8192,65536", help="socket buffer sizes (NPtcp -b)")
    ap.add_argument("--ber", default="0")
    ap.add_argument("--upper", type=int, default=65536, help="largest block (NPtcp -u)")
    ap.add_argument("--framing", default="atm", choices=["atm", "ip"])
    ap.add_argument("--jobs", type=int, default=1)
    a = ap.parse_args()
    grid = [(cc, float(rtt), int(buf), float(ber)) for cc in a.cc.split(",") for rtt in a.rtt_ms.split(",") for buf in a.buffer.split(",") for ber in a.ber.split(",")]
    with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        results = list(ex.map(lambda g: one(*g, a.framing, a.upper), grid))
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        for rows in results:
            w.writerows(rows)
    print(f"wrote {out} ({sum(len(r) for r in results)} rows)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
