"""Print the figures quoted in docs/reproduction.md from a reproduction store.

    .venv/bin/sattcp reproduce kota-www --out out/kota-www
    .venv/bin/python scripts/reproduction_numbers.py out/kota-www/results.duckdb
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from sattcp.analysis import allocation_of_variation
from sattcp.store import Store, StoreError

ROOT = Path(__file__).resolve().parents[1]
FLAVOUR = {"vanilla": "Vanilla", "reno": "Reno", "newreno": "NewReno", "sack": "SACK"}
BUFFER = {"0.5bdp": 0.5, "1bdp": 1.0, "2bdp": 2.0}


STUDY = "kota-www"
#: The full study's factors this script reads (the --quick variant varies fewer).
FACTORS = ("tcp.flavor", "switch.policy", "switch.buffer")
USAGE_EXIT = 2


def load(store_path: str) -> pd.DataFrame:
    """The full study's runs; StoreError (a ValueError) saying what the store lacks."""
    with Store(store_path, read_only=True) as st:
        studies = st.studies()
        if STUDY not in studies:
            raise StoreError(f"{store_path}: no {STUDY} study in this store (it has: {', '.join(studies) or 'none'}); "
                             f"this script needs the full study's factors ({', '.join(FACTORS)}): "
                             f"run `sattcp reproduce {STUDY}` without --quick")
        ours = st.runs(STUDY)
    missing = [f for f in FACTORS if f not in ours.columns]
    if ours.empty or missing:
        raise StoreError(f"{store_path}: the {STUDY} runs here lack the full study's factors "
                         f"({', '.join(missing or FACTORS)}): run `sattcp reproduce {STUDY}` without --quick")
    return ours


def main(store_path: str) -> None:
    ours = load(store_path)
    ours = ours.assign(
        link=ours.block,
        tcp=ours["tcp.flavor"].map(FLAVOUR),
        drop_policy=ours["switch.policy"].str.upper(),
        buffer_rtt=ours["switch.buffer"].map(BUFFER),
    )
    paper = pd.read_csv(ROOT / "data/seed000-tables-5-8-11.csv")
    factors = ["tcp", "buffer_rtt", "drop_policy"]
    print("| link | response | mean (paper / ours) | TCP flavour | buffer | drop policy | s_e (paper / ours) |")
    print("|---|---|---|---|---|---|---|")
    for link in ["WAN", "MEO", "GEO"]:
        for resp in ["efficiency", "fairness"]:
            p = paper[paper.link == link]
            o = ours[ours.link == link]
            ap = allocation_of_variation(p, factors, resp)
            ao = allocation_of_variation(o, factors, resp)
            share = " | ".join(f"{ap.percent(f):.2f} / {ao.percent(f):.2f}" for f in factors)
            print(f"| {link} | {resp} | {p[resp].mean():.3f} / {o[resp].mean():.3f} | {share} | {ap.s_e:.4f} / {ao.s_e:.4f} |")
    both = ours.merge(paper, on=["link", "tcp", "drop_policy", "buffer_rtt"], suffixes=("", "_paper"))
    both["d_eff"] = both.efficiency - both.efficiency_paper
    print("\nefficiency, ours - paper, per link:")
    print(both.groupby("link").d_eff.agg(["min", "max", "mean"]).round(3).to_string())
    print("\nWAN efficiency and fairness per cell (ours / paper):")
    wan = both[both.link == "WAN"].set_index(["drop_policy", "tcp", "buffer_rtt"]).sort_index()
    print(wan[["efficiency", "efficiency_paper", "fairness", "fairness_paper"]].round(3).to_string())
    print("\nmean efficiency per flavour (ours):")
    print(both.groupby(["link", "tcp"]).efficiency.mean().round(3).unstack().to_string())


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    try:
        main(sys.argv[1])
    except StoreError as e:  # StoreMissing, a damaged or foreign file, the --quick variant
        print(f"reproduction_numbers.py: error: {e}", file=sys.stderr)
        sys.exit(USAGE_EXIT)
