"""Memory per packet-log event (docs/traces.md, "Bounds"; api.PACKET_EVENT_BYTES).

Runs the GEO drop-tail dumbbell (MSS 1024, 300 s, every packet traced) with the log bounded at
each of N events, each in a fresh process, and prints the process's peak resident memory after
the run and after building the Python table (``RunResult.packets``), and the bytes an event
between the smallest and the largest N:

    .venv/bin/python bench/trace_memory.py [--events 1000000,4000000]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def measure(events: int) -> dict[str, float]:
    """One fresh process: the run, then its table; peak resident bytes after each."""
    import sattcp

    r = sattcp.run(ROOT / "scenarios/geo-dumbbell-droptail.toml",
                   overrides={"tcp.mss": 1024, "trace.packets": "all", "trace.max_packet_events": events, "run.duration": "300s"})
    after_run = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    rows = len(r.packets)
    after_table = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"events": rows, "run": after_run, "table": after_table}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", default="1000000,4000000", help="log bounds, comma-separated (at least two)")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    a = ap.parse_args()
    from _venv import require_sattcp

    require_sattcp("bench/trace_memory.py")
    if a.child:
        print(json.dumps(measure(a.child)))
        return 0
    try:
        counts = sorted({int(x) for x in a.events.split(",")})
    except ValueError:
        print(f"bench/trace_memory.py: --events must be whole numbers separated by commas, got {a.events!r}", file=sys.stderr)
        return 2
    if len(counts) < 2 or counts[0] < 1:
        print(f"bench/trace_memory.py: --events needs at least two different positive counts, got {a.events!r}", file=sys.stderr)
        return 2
    rows = []
    print(f"{'events':>10} {'peak MiB after run':>19} {'after table':>12}")
    for n in counts:
        out = subprocess.run([sys.executable, __file__, "--child", str(n)], capture_output=True, text=True, check=True).stdout
        m = json.loads(out)
        rows.append(m)
        print(f"{m['events']:>10,} {m['run'] / 2**20:>19,.0f} {m['table'] / 2**20:>12,.0f}")
    lo, hi = rows[0], rows[-1]
    dn = hi["events"] - lo["events"]
    if dn <= 0:
        print("the runs recorded the same number of events: raise the larger count")
        return 0
    print(f"bytes an event ({lo['events']:,} -> {hi['events']:,}): the run {(hi['run'] - lo['run']) / dn:.0f}, "
          f"with the table built {(hi['table'] - lo['table']) / dn:.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
