"""The training runs of the profile-guided build (scripts/pgo.sh): what users run, through the
Python module whose profile is taken (an instrumented build of sattcp._core on PYTHONPATH).

Every scenario in scenarios/ as written, then the seeds' study (every flavour and drop policy at
each orbit, shorter runs), the other drop policies, every congestion control and the other
recoveries on an IP path, and a dumbbell of 10,000 flows (bench --scale's). Only the counts the runs leave behind are wanted;
the results are checked for nothing but completing.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import sattcp

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"


def training_set() -> list[tuple[Path, dict[str, object]]]:
    runs: list[tuple[Path, dict[str, object]]] = [(p, {}) for p in sorted(SCENARIOS.glob("*.toml"))]
    for orbit in ("wan", "meo", "geo"):
        for flavor in ("vanilla", "reno", "newreno", "sack"):
            for policy in ("epd", "sd"):
                runs.append((SCENARIOS / f"kota-{orbit}.toml",
                             {"tcp.flavor": flavor, "switch.policy": policy, "run.duration": "10s"}))
    for policy in ("ubr", "ppd", "fba"):
        runs.append((SCENARIOS / "kota-wan.toml", {"switch.policy": policy, "run.duration": "10s"}))
    for flavor in ("newreno/cubic", "sack/cubic_hystart", "newreno/hybla", "sack/bbr", "newreno/westwood",
                   "sack/westwood_linux",
                   "tahoe", "newreno_rfc6582", "newreno_ns3", "sack_rfc6675"):
        runs.append((SCENARIOS / "modern-geo.toml", {"tcp.flavor": flavor, "run.duration": "20s"}))
    n = 10_000
    runs.append((SCENARIOS / "geo-dumbbell-droptail.toml",
                 {"tcp.mss": 1024, "topology.pairs": n, "links.bottleneck.rate": f"{450 * n}kbps",
                  "app.stagger": f"{1_000_000_000 // n}ns", "run.duration": "3s"}))
    return runs


def main() -> int:
    runs = training_set()
    start = time.monotonic()
    live = sys.stderr.isatty()
    for i, (scenario, overrides) in enumerate(runs, 1):
        sattcp.run(scenario, overrides=overrides)
        if live or i == len(runs):
            print(f"\rpgo: training run {i}/{len(runs)} ({time.monotonic() - start:.0f} s)",
                  end="" if i < len(runs) else "\n", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
