"""Seed 004's experiment 5 (short transfers) with split TCP's initial window at 1, 2 and 4
segments: the response-time ratio split TCP / our scheme that docs/gateway.md quotes.

    .venv/bin/python scripts/zhou_initial_window.py

The seed does not give its TCP's initial window; the reproduction keeps 1 segment (ns-2's
`windowInit_` default, and the seed cites larger initial windows, RFC 2414, as a proposal);
this prints what 2 and 4 (RFC 2414's for 512-byte segments) would give. The scenario is
`sattcp.zhou.multi` (experiment 5's runs, seed 1), connection 3 as in the reproduction.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from sattcp import zhou  # noqa: E402
from sattcp.api import run  # noqa: E402

SIZES = (512, 2048, 5000, 10_000, 20_000, 50_000, 100_000)


def response_s(scheme: str, size: int, initial_cwnd: int) -> float:
    sc = zhou.multi(scheme, 0.0, size=size, duration="30s")
    sc["tcp"]["initial_cwnd"] = initial_cwnd
    return zhou.conns(run(sc, seed=1).to_dict())[2]["completed_at_s"]


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # --help; no options
    print("initial window (segments): ratio split TCP / ours for each file size (bytes), then the largest from 2 to 100 KB")
    for iw in (1, 2, 4):
        ratio = {s: response_s("split_tcp", s, iw) / response_s("sgw", s, iw) for s in SIZES}
        small = max(r for s, r in ratio.items() if 2000 <= s <= 100_000)
        print(f"  {iw}: " + ", ".join(f"{s:,}: {r:.2f}" for s, r in ratio.items()) + f"; largest {small:.2f}", flush=True)


if __name__ == "__main__":
    main()
