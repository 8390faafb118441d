"""Print the measured sensitivities quoted in docs/reproduction.md and docs/tcp.md.

    .venv/bin/python scripts/sensitivities.py

Every figure is the summary's efficiency (and fairness) of `scenarios/kota-*.toml` runs with
the overrides shown; seeds as stated.
"""

from __future__ import annotations

import statistics
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import sattcp

ROOT = Path(__file__).resolve().parents[1]


def run(link: str, seed: int = 1, **overrides: object) -> tuple[float, float]:
    s = sattcp.run(ROOT / f"scenarios/kota-{link}.toml", seed=seed, overrides=overrides).summary
    return s["efficiency"], s["fairness"]


def _eff(args: tuple[str, int, dict]) -> float:
    link, seed, ov = args
    return run(link, seed, **ov)[0]


def main() -> None:
    flavours = ["vanilla", "reno", "newreno", "sack"]
    print("RTO floor, WAN EPD 0.5 RTT, seed 1: efficiency (fairness) with min_rto 200ms -> 1s")
    for f in flavours:
        a, b = run("wan", **{"tcp.flavor": f}), run("wan", **{"tcp.flavor": f, "tcp.min_rto": "1s"})
        print(f"  {f:8} {a[0]:.3f} ({a[1]:.3f}) -> {b[0]:.3f} ({b[1]:.3f})")
    print("first batches all at t = 0 (app.first_batch=zero), WAN EPD 0.5 RTT, seed 1")
    for f in ["vanilla", "sack"]:
        a, b = run("wan", **{"tcp.flavor": f}), run("wan", **{"tcp.flavor": f, "app.first_batch": "zero"})
        print(f"  {f:8} {a[0]:.3f} ({a[1]:.3f}) -> {b[0]:.3f} ({b[1]:.3f})")
    print("slow-start restart off (tcp.slow_start_restart=false), GEO EPD 0.5 RTT, seed 1")
    for f in flavours:
        a, b = run("geo", **{"tcp.flavor": f}), run("geo", **{"tcp.flavor": f, "tcp.slow_start_restart": False})
        print(f"  {f:8} {a[0]:.3f} -> {b[0]:.3f}")
    print("single-run noise: efficiency over seeds 1-5, EPD 0.5 RTT")
    with ProcessPoolExecutor() as ex:
        for link, f in [("geo", "sack"), ("geo", "vanilla"), ("wan", "vanilla")]:
            e = list(ex.map(_eff, [(link, s, {"tcp.flavor": f, "switch.policy": "epd"}) for s in range(1, 6)]))
            print(f"  {link} {f:8} {' '.join(f'{x:.4f}' for x in e)}  sd {statistics.stdev(e):.4f}")
        print("NewReno vs SACK on WAN with smaller buffers: mean efficiency over seeds 1-3")
        for buf in ["531cells", "300cells", "150cells", "60cells", "30cells"]:
            row = []
            for pol in ["epd", "sd"]:
                for f in ["newreno", "sack"]:
                    e = list(ex.map(_eff, [("wan", s, {"tcp.flavor": f, "switch.policy": pol, "switch.buffer": buf}) for s in (1, 2, 3)]))
                    row.append(f"{statistics.mean(e):.3f}")
            print(f"  | {buf.removesuffix('cells')} | " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
