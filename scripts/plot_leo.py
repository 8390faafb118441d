"""Plot RTT and throughput against time over Starlink shell 1 (Paris-Moscow with ISLs and as
a bent pipe through ground relays, New York-London with ISLs) and the GEO reference, with the
reconfigurations (handovers) marked, for docs/leo.md.

    .venv/bin/python scripts/plot_leo.py [--out docs/img/leo_rtt_throughput.png] [--duration 120s]

Per scenario, top: every RTT sample of the flow (`flow/0/rtt`) and the propagation RTT of the
route in force (twice `link/hop0/delay`); dotted lines at route changes (`link/hop0/handover`).
Bottom: throughput in 1 s bins from the bytes acknowledged (`flow/0/acked`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

import sattcp

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = [
    ("leo-paris-moscow-isl.toml", "Starlink shell 1, Paris-Moscow, ISLs"),
    ("leo-paris-moscow-bentpipe.toml", "Starlink shell 1, Paris-Moscow, bent pipe + relays"),
    ("leo-newyork-london-isl.toml", "Starlink shell 1, New York-London, ISLs"),
    ("geo-paris-moscow.toml", "GEO 36 E, Paris-Moscow, bent pipe"),
]
BIN_S = 1.0


def throughput(t: np.ndarray, acked: np.ndarray, end: float) -> tuple[np.ndarray, np.ndarray]:
    """Mbps per BIN_S bin from a cumulative byte count sampled at times t."""
    edges = np.arange(0.0, end + BIN_S, BIN_S)
    at_edges = np.interp(edges, t, acked, left=0.0)
    # The last bin may run past the last sample: left out.
    return edges[1:-1], (np.diff(at_edges) * 8 / BIN_S / 1e6)[:-1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default=str(ROOT / "docs/img/leo_rtt_throughput.png"))
    ap.add_argument("--duration", default="120s")
    args = ap.parse_args()
    fig = Figure(figsize=(13, 9), layout="constrained")
    axes = fig.subplots(2, len(SCENARIOS), sharex=True)
    for col, (name, title) in enumerate(SCENARIOS):
        r = sattcp.run(ROOT / "scenarios" / name, overrides={"run.duration": args.duration})
        tr = r.traces
        end = float(r.summary["sim_time_s"])
        top, bottom = axes[0][col], axes[1][col]
        rtt = tr["flow/0/rtt"]
        top.plot(rtt["t"], rtt["value"] * 1e3, ".", ms=1.5, color="tab:blue", label="RTT samples")
        d = tr["link/hop0/delay"]
        steps_t = np.append(d["t"].to_numpy(), end)
        steps_v = np.append(d["value"].to_numpy(), d["value"].to_numpy()[-1]) * 2e3
        top.step(steps_t, steps_v, where="post", color="tab:red", lw=1.2, label="propagation RTT of the route")
        for t in tr.get("link/hop0/handover", {"t": []})["t"]:
            top.axvline(t, color="grey", ls=":", lw=0.8)
            bottom.axvline(t, color="grey", ls=":", lw=0.8)
        lo = float(np.min(steps_v))
        hi = float(np.percentile(rtt["value"], 99)) * 1e3
        top.set_ylim(lo * 0.9, max(hi, lo * 1.2) * 1.05)
        top.set_title(title, fontsize=9)
        top.set_ylabel("RTT (ms)")
        a = tr["flow/0/acked"]
        x, y = throughput(a["t"].to_numpy(), a["value"].to_numpy(), end)
        bottom.step(x, y, where="pre", color="tab:green")
        bottom.set_ylabel("throughput (Mbps, 1 s bins)")
        bottom.set_xlabel("time (s); dotted: route changes")
        bottom.set_ylim(0, 110)
        if col == 0:
            top.legend(fontsize=7, loc="upper right")
    fig.suptitle("One bulk SACK flow, 100 Mbps uplink, 1 BDP queue: RTT and throughput against time", fontsize=11)
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
