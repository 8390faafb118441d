"""The emulator's accuracy on seed 003's link (2.048 Mbps): delay, rate and kernel TCP goodput
against the link model's values. Needs root, /dev/net/tun and `ip` (sattcp emulate).

    .venv/bin/python scripts/netpipe_accuracy.py [--quick] [--json FILE]

Prints Markdown tables (docs/emulate.md quotes them); the measurements are
sattcp.netpipe.accuracy (also run by `sattcp reproduce netpipe-sat --real`):
- delay: median/min/max UDP echo RTT (100-byte payload, a 128-byte IP packet) against
  2 x (delay + 128 x 8 / rate), for one-way delays from 0.5 to 300 ms;
- rate: a saturated link (UDP at about twice the rate), the receiver's rate in IP bytes against
  rate x IP bytes / wire bytes, IP and ATM framing;
- TCP: the kernel's reno, cubic and bbr, 1 MB over 2.048 Mbps / 10 ms, goodput past the first
  64 KB against rate x MSS / wire bytes of a full packet.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from sattcp.netpipe import accuracy  # noqa: E402


def table(rows: list[dict]) -> str:
    cols = list(rows[0])
    fmt = lambda v: f"{v:.3f}" if isinstance(v, float) else str(v)  # noqa: E731
    return "\n".join(["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols), *("| " + " | ".join(fmt(r[c]) for c in cols) + " |" for r in rows)])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer delays and probes")
    ap.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    a = ap.parse_args()
    out = accuracy(a.quick)
    for name, rows in out.items():
        print(f"\n### {name}\n\n{table(rows)}")
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
