#!/usr/bin/env python3
"""How far the work estimate of a ping-pong run (``sattcp.api.estimate_work``, by its NetPIPE
schedule) is above the events the run takes: scenarios/netpipe-e1.toml and variants of it, one
line each (README, "A run estimated to be enormous").

    .venv/bin/python scripts/pingpong_estimate.py
"""

from __future__ import annotations

import argparse
from pathlib import Path

import sattcp
from sattcp.api import estimate_work

SCENARIO = Path(__file__).resolve().parent.parent / "scenarios" / "netpipe-e1.toml"

#: The variants: overrides of netpipe-e1.toml (the last: no delay anywhere, where NetPIPE's
#: own nrepeat is bounded by the blocks' serialisation alone).
VARIANTS: list[dict[str, object]] = [
    {},
    {"links.bottleneck.ber": 1e-6},
    {"app.nrepeat": "netpipe"},
    {"app.nrepeat": "netpipe", "links.bottleneck.delay": "1ms"},
    {"tcp.send_buffer": 65536, "tcp.receive_buffer": 65536},
    {"app.nrepeat": 5, "tcp.mss": 536},
    {"app.blocks": [1, 100, "8KB"], "app.repeats": 3},
    {"app.nrepeat": "netpipe", "links.bottleneck.delay": "0s", "links.access.delay": "0s", "app.last_block": "8KB"},
]


def main() -> int:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()
    for over in VARIANTS:
        estimated = estimate_work(sattcp.resolve(SCENARIO, overrides=over))["events"]
        events = sattcp.run(SCENARIO, overrides=over).data["events"]
        print(f"{estimated:12.3g} estimated {events:10,} taken  {estimated / events:6.2f}x  {over or 'as shipped'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
