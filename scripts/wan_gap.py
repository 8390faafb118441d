"""Measure a candidate mechanism for the main study's WAN gap on all 72 cells (issue 11).

    .venv/bin/python scripts/wan_gap.py NAME [--set key=value ...] [--buffer-minus CELLS]

Runs the 72 cells of `python/sattcp/studies/kota-www.toml` (WAN, MEO, GEO x 4 flavours x EPD/SD
x 0.5/1/2 RTT buffers, seed 1, 100 s) with the overrides given, and prints per link type the
mean efficiency (baseline, candidate, paper) and the cells the WAN gap is about (Vanilla and
Reno at 0.5 RTT), then every cell. Nothing is tuned: the overrides are the mechanism's.
`--buffer-minus CELLS` runs the candidate with every cell's buffer CELLS cells smaller (a bound
on mechanisms that take that many cells of the buffer, e.g. other ports of a shared-memory
switch).
"""

from __future__ import annotations

import argparse
import csv
import statistics
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import sattcp

ROOT = Path(__file__).resolve().parents[1]
BUFFERS = {
    "WAN": ["531cells", "1062cells", "2300cells"],
    "MEO": ["10615cells", "21230cells", "42460cells"],
    "GEO": ["29190cells", "58380cells", "116760cells"],
}
RTT = ["0.5", "1", "2"]
FLAVOURS = ["vanilla", "reno", "newreno", "sack"]
POLICIES = ["epd", "sd"]


def cells() -> list[tuple[str, str, str, int]]:
    return [(link, f, p, i) for link in BUFFERS for f in FLAVOURS for p in POLICIES for i in range(3)]


def run(args: tuple[tuple[str, str, str, int], dict, int]) -> float:
    (link, f, p, i), extra, minus = args
    cells = int(BUFFERS[link][i].removesuffix("cells")) - minus
    ov = {"tcp.flavor": f, "switch.policy": p, "switch.buffer": f"{cells}cells", **extra}
    return sattcp.run(ROOT / f"scenarios/kota-{link.lower()}.toml", seed=1, overrides=ov).summary["efficiency"]


def paper() -> dict[tuple[str, str, str, int], float]:
    out = {}
    with open(ROOT / "data/seed000-tables-5-8-11.csv") as fh:
        for r in csv.DictReader(fh):
            i = RTT.index(r["buffer_rtt"].removesuffix(".0"))
            out[(r["link"], r["tcp"].lower(), r["drop_policy"].lower(), i)] = float(r["efficiency"])
    return out


def parse_value(v: str) -> object:
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(v, v)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("name")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--buffer-minus", type=int, default=0, metavar="CELLS")
    a = ap.parse_args()
    extra = {k: parse_value(v) for k, v in (s.split("=", 1) for s in a.set)}
    cs = cells()
    with ProcessPoolExecutor(a.jobs) as ex:
        base = dict(zip(cs, ex.map(run, [(c, {}, 0) for c in cs]), strict=True))
        changed = extra or a.buffer_minus
        cand = dict(zip(cs, ex.map(run, [(c, extra, a.buffer_minus) for c in cs]), strict=True)) if changed else base
    pap = paper()
    print(f"candidate {a.name}: {extra}, buffers {a.buffer_minus} cells smaller")
    print(
        "| link | mean efficiency: ours | with candidate | paper | WAN-style cells: Vanilla/Reno 0.5 RTT EPD, ours -> candidate (paper) |"
    )
    print("|---|---|---|---|---|")
    for link in BUFFERS:
        ks = [c for c in cs if c[0] == link]

        def m(d: dict, ks: list = ks) -> float:
            return statistics.mean(d[k] for k in ks)

        v, r = (link, "vanilla", "epd", 0), (link, "reno", "epd", 0)
        print(
            f"| {link} | {m(base):.3f} | {m(cand):.3f} | {m(pap):.3f} | Vanilla {base[v]:.3f} -> {cand[v]:.3f} ({pap[v]:.2f}), Reno {base[r]:.3f} -> {cand[r]:.3f} ({pap[r]:.2f}) |"
        )
    print("\nevery cell: link flavour policy buffer(RTT): ours -> candidate (paper)")
    for c in cs:
        print(f"  {c[0]} {c[1]:8} {c[2]} {RTT[c[3]]:>3}: {base[c]:.3f} -> {cand[c]:.3f} ({pap[c]:.3f})")


if __name__ == "__main__":
    main()
