"""The emulator's accuracy on seed 003's link (2.048 Mbps): delay, rate and kernel TCP goodput
against the link model's values. Needs root, /dev/net/tun and `ip` (sattcp emulate).

    .venv/bin/python scripts/netpipe_accuracy.py [--quick] [--json FILE]

Prints Markdown tables (docs/emulate.md quotes them):
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
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from sattcp.emulate import Emulation  # noqa: E402

RATE = 2_048_000  # seed 003: E1
PROBE = [sys.executable, "-m", "sattcp.emulate", "probe"]
UDP_IP = 28  # IPv4 + UDP headers
MSS = 1448  # 1500 - 20 (IP) - 20 (TCP) - 12 (timestamps)


def cells_wire(ip_bytes: int) -> int:
    """AAL5 + LLC/SNAP in 53-byte cells (crates/sattcp-core/src/atm/aal5.rs)."""
    return -(-(ip_bytes + 16) // 48) * 53


def scenario(tmp: Path, **keys: str) -> Path:
    p = tmp / "acc.toml"
    p.write_text("[emulate]\n" + "".join(f"{k} = {v}\n" for k, v in keys.items()))
    return p


def start(em: Emulation, argv: list[str]) -> subprocess.Popen[str]:
    p = em.popen("server", argv, stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    return p


def result(p: subprocess.Popen[str]) -> dict:
    out, _ = p.communicate(timeout=120)
    return json.loads(out.strip().splitlines()[-1])


def delay_rows(tmp: Path, quick: bool) -> list[dict]:
    rows = []
    for one_way_ms in ([0.5, 50, 200] if quick else [0.5, 5, 50, 200, 300]):
        s = scenario(tmp, rate='"2.048Mbps"', delay=f'"{one_way_ms}ms"')
        n = 10 if quick or one_way_ms >= 200 else 30
        with Emulation(s) as em:
            start(em, [*PROBE, "echo-server"])
            out = em.run("client", [*PROBE, "echo-client", "{server}", str(n), "100"], capture_output=True, text=True, timeout=600)
        rtts = sorted(json.loads(out.stdout))
        expected = 2 * (one_way_ms / 1e3 + 128 * 8 / RATE)
        late = max(d["late_max_us"] for d in em.stats["directions"])
        rows.append({"delay_ms": one_way_ms, "probes": len(rtts), "expected_ms": expected * 1e3, "median_ms": rtts[len(rtts) // 2] * 1e3,
                     "min_ms": rtts[0] * 1e3, "max_ms": rtts[-1] * 1e3, "emulator_late_max_us": late})
    return rows


def rate_rows(tmp: Path, quick: bool) -> list[dict]:
    rows = []
    payload = 1000
    for framing in ("ip", "atm"):
        s = scenario(tmp, rate='"2.048Mbps"', delay='"10ms"', queue='"20pkt"', framing=f'"{framing}"')
        n = 600 if quick else 1500
        with Emulation(s) as em:
            sink = start(em, [*PROBE, "udp-sink"])
            em.run("client", [*PROBE, "udp-source", "{server}", str(n), str(payload), "10", "0.02"], check=True, timeout=600)
            r = result(sink)
        ip = payload + UDP_IP
        wire = ip if framing == "ip" else cells_wire(ip)
        measured = (r["bytes"] + r["n"] * UDP_IP - ip) * 8 / (r["t_last"] - r["t_first"])
        expected = RATE * ip / wire
        rows.append({"framing": framing, "packets": r["n"], "seconds": r["t_last"] - r["t_first"], "expected_ip_bps": expected, "measured_ip_bps": measured,
                     "error_pct": (measured / expected - 1) * 100})
    return rows


def tcp_rows(tmp: Path, quick: bool) -> list[dict]:
    rows = []
    n = 400_000 if quick else 1_000_000
    for framing in ("ip", "atm"):
        for cc in ("reno", "cubic", "bbr"):
            s = scenario(tmp, rate='"2.048Mbps"', delay='"10ms"', framing=f'"{framing}"', cc=f'"{cc}"')
            with Emulation(s) as em:
                sink = start(em, [*PROBE, "tcp-sink", "65536"])
                em.run("client", [*PROBE, "tcp-source", "{server}", str(n)], check=True, timeout=600)
                r = result(sink)
            wire = 1500 if framing == "ip" else cells_wire(1500)
            expected = RATE * MSS / wire
            rows.append({"framing": framing, "cc": cc, "bytes": r["bytes"], "expected_bps": expected, "goodput_bps": r["goodput_bps"],
                         "error_pct": (r["goodput_bps"] / expected - 1) * 100})
    return rows


def table(rows: list[dict]) -> str:
    cols = list(rows[0])
    fmt = lambda v: f"{v:.3f}" if isinstance(v, float) else str(v)  # noqa: E731
    return "\n".join(["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols), *("| " + " | ".join(fmt(r[c]) for c in cols) + " |" for r in rows)])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer delays and probes")
    ap.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        out = {"delay": delay_rows(tmp, a.quick), "rate": rate_rows(tmp, a.quick), "tcp": tcp_rows(tmp, a.quick)}
    for name, rows in out.items():
        print(f"\n### {name}\n\n{table(rows)}")
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
