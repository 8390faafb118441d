"""Writes scenarios/modern-starlink.toml: the Starlink block of the study modern-cc.

The study varies `links.bottleneck.ber` and `topology.pairs`, so its base scenarios are
dumbbells, while `[constellation]` drives one hop of a path (docs/leo.md). This script takes the
route the constellation model computes for Starlink shell 1 between Paris and Moscow over
inter-satellite links (`scenarios/leo-paris-moscow-isl.toml`: 550 km, 53 degrees, 72 x 22,
25 degrees minimum elevation, route recomputed every 15 s) and writes its one-way delay at each
reconfiguration as the `schedule` of the dumbbell's bottleneck (`links.bottleneck.schedule`,
the moving-link table of net/schedule.rs): the same delays to the nanosecond, with the same
rule for packets in flight at a change (docs/leo.md, "Moving links"). Everything else is the
study's LEO-like base scenario (45 Mbps, 1 BDP drop-tail buffer, MSS 1460, IW 10).

Run: .venv/bin/python scripts/make_modern_starlink.py [--check]
(deterministic; --check exits 1 if the file differs from what it would write;
tests/test_modern_cc.py runs the check.)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "scenarios" / "modern-starlink.toml"
SOURCE = ROOT / "scenarios" / "leo-paris-moscow-isl.toml"
#: The schedule covers this much simulated time: the study runs 30 s (10 s with --quick); a
#: longer run keeps the last delay.
SPAN = "120s"

HEADER = """\
# Base scenario of the study modern-cc's Starlink block (python/sattcp/studies/modern-cc.toml;
# issue 14). WRITTEN BY scripts/make_modern_starlink.py: do not edit by hand.
# The bottleneck is the path through Starlink shell 1 (550 km, 53 degrees, 72 x 22, FCC filing
# SAT-MOD-20190830-00087) from Paris to Moscow over inter-satellite links (+Grid), as the
# constellation model computes it in scenarios/leo-paris-moscow-isl.toml: the route is
# recomputed every 15 s (Starlink's reconfiguration interval) and its one-way delay holds until
# the next step (docs/leo.md). Packets keep the delay in force when they are sent, so a change
# can reorder them. The rest is the study's LEO-like path: 45 Mbps, drop-tail 1 BDP (at the
# first interval's RTT), MSS 1460, IW 10. The study varies tcp.flavor, links.bottleneck.ber and
# topology.pairs:
#   sattcp run scenarios/modern-starlink.toml --set tcp.flavor=sack/bbr --set links.bottleneck.ber=1e-6
name = "modern-starlink"
description = "bulk flows, drop-tail 1 BDP, 45 Mbps, Starlink shell 1 Paris-Moscow over ISLs (15 s steps), MSS 1460, IW 10"

[run]
duration = "30s"
seed = 1

[topology]
kind = "dumbbell"
pairs = 1

[links.access]
rate = "1Gbps"
delay = "5us"

[links.bottleneck]
rate = "45Mbps"
ber = 0.0
"""

FOOTER = """
[switch]
kind = "droptail"
buffer = "1bdp"

[tcp]
flavor = "sack/cubic"
mss = 1460
window = 65535
window_scale = 8
initial_cwnd = 10          # RFC 6928
ssthresh = "bdp"
timer_granularity = "1ms"
min_rto = "200ms"          # Linux's TCP_RTO_MIN
delayed_ack = false

[app]
kind = "bulk"
# Flows start 10 ms apart so that their slow starts do not coincide exactly.
stagger = "10ms"
"""


def constellation_delays() -> list[tuple[int, int | None]]:
    """(start ns, one-way delay ns or None without a path) of each 15 s interval."""
    import sattcp

    r = sattcp.api.run(str(SOURCE), overrides={"run.duration": SPAN, "app.kind": "bulk"})
    delay = r.traces["link/hop0/delay"]
    up = r.traces.get("link/hop0/up")
    down = set()
    if up is not None:
        down = {round(t * 1e9) for t, v in zip(up["t"], up["value"], strict=True) if not v}
    out = []
    for t, d in zip(delay["t"], delay["value"], strict=True):
        at = round(t * 1e9)
        out.append((at, None if at in down else round(d * 1e9)))
    return out


def render() -> str:
    lines = ["# (at, one-way delay) of each reconfiguration interval, from the constellation.",
             "schedule = ["]
    for at_ns, d in constellation_delays():
        at = f"{at_ns // 10**9}s" if at_ns % 10**9 == 0 else f"{at_ns}ns"
        if d is None:
            lines.append(f'    {{ at = "{at}", up = false }},')
        else:
            lines.append(f'    {{ at = "{at}", delay = "{d}ns" }},')
    lines.append("]")
    return HEADER + "\n".join(lines) + "\n" + FOOTER


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the file is not up to date")
    args = ap.parse_args()
    text = render()
    if args.check:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{OUT.relative_to(ROOT)} is not what scripts/make_modern_starlink.py writes", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
