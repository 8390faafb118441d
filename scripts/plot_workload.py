#!/usr/bin/env python3
"""Histograms of the WWW workload for docs/workload.md.

Reads the requests CSV and summary.json written by
``cargo run -p sattcp-core --example workload_stats`` and draws:

- docs/img/workload_file_sizes.png: requested file sizes (log bins), and each class's share of
  requests versus its share of bytes;
- docs/img/workload_server_load.png: per-server scheduled load S_i over one run, against the
  fair share C/100, and the total offered load of each run against C.

Usage: scripts/plot_workload.py [--csv target/workload/requests.csv] [--out docs/img]
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import defaultdict
from pathlib import Path

import matplotlib.pyplot as plt

# seed 000 §4.3: maximum TCP goodput of the 45 Mbps T3 after TCP/IP/LLC/AAL5/cell overheads.
CAPACITY_BPS = {"WAN, MSS 1024": 37.80e6, "MEO/GEO, MSS 9180": 40.39e6}
#: The command that writes --csv (its --out) and summary.json beside it.
PRODUCER = "cargo run -p sattcp-core --example workload_stats -- --out {csv}"
CLASS_NAMES = ["0: 0-1 KB", "1: 1-10 KB", "2: 10-100 KB", "3: 100 KB-1 MB", "4: 1-10 MB"]


def read_requests(path: Path) -> list[dict[str, int]]:
    with path.open(newline="") as f:
        return [
            {
                "seed": int(r["seed"]),
                "server": int(r["server"]),
                "class": int(r["class"]),
                "bytes": int(r["bytes"]),
            }
            for r in csv.DictReader(f)
        ]


def plot_file_sizes(rows: list[dict[str, int]], summary: dict, out: Path) -> None:
    sizes = [r["bytes"] for r in rows]
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.2))
    # The model has 45 discrete sizes (9 per class): one stem per size.
    counts: dict[int, int] = defaultdict(int)
    for b in sizes:
        counts[b] += 1
    xs = sorted(counts)
    ax.vlines(xs, 0, [counts[b] / len(sizes) for b in xs], color="tab:blue", linewidth=2)
    ax.set_xscale("log")
    ax.set_ylabel("fraction of requests")
    ax.set_xlabel("requested file size (bytes)")
    mean = summary["measured"]["mean_file_size_bytes"]
    analytic = summary["analytic"]["mean_file_size_bytes"]
    ax.axvline(mean, color="tab:red", linestyle="--", label=f"measured mean {mean / 1000:.1f} kB")
    ax.axvline(analytic, color="black", linestyle=":", label=f"analytic mean {analytic / 1000:.1f} kB")
    ax.set_title(f"File sizes ({len(sizes)} requests, {summary['seeds']} runs)")
    ax.legend(fontsize=8)

    n_req = [0] * 5
    n_bytes = [0] * 5
    for r in rows:
        n_req[r["class"]] += 1
        n_bytes[r["class"]] += r["bytes"]
    total_req, total_bytes = sum(n_req), sum(n_bytes)
    x = range(5)
    bx.bar([i - 0.2 for i in x], [100 * n / total_req for n in n_req], width=0.4, label="requests")
    bx.bar([i + 0.2 for i in x], [100 * b / total_bytes for b in n_bytes], width=0.4, label="bytes")
    bx.set_xticks(list(x), CLASS_NAMES, rotation=20, fontsize=8)
    bx.set_ylabel("% of total")
    bx.set_title("Share of requests and of bytes by class")
    bx.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "workload_file_sizes.png", dpi=110)
    plt.close(fig)


def plot_server_load(rows: list[dict[str, int]], summary: dict, out: Path) -> None:
    duration = summary["duration_s"]
    per_server: dict[tuple[int, int], int] = defaultdict(int)
    for r in rows:
        per_server[(r["seed"], r["server"])] += r["bytes"]
    # Servers that scheduled nothing in a run still count.
    loads = [
        per_server.get((seed, i), 0) * 8 / duration / 1e3
        for seed in range(1, summary["seeds"] + 1)
        for i in range(summary["servers"])
    ]
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.2))
    ax.hist(loads, bins=60, color="tab:green", edgecolor="white", linewidth=0.3)
    ax.set_xlabel(f"S_i: data scheduled by one server / {duration} s (kbps)")
    ax.set_ylabel("servers")
    per = summary["analytic"]["offered_load_bps_per_server"] / 1e3
    ax.axvline(per, color="black", linestyle=":", label=f"analytic mean {per:.0f} kbps")
    for (name, c), style in zip(CAPACITY_BPS.items(), ["--", "-."], strict=False):
        share = c / summary["servers"] / 1e3
        below = sum(1 for s in loads if s < share) / len(loads)
        ax.axvline(
            share, color="tab:red", linestyle=style, label=f"C/100 {name}: {share:.0f} kbps ({100 * below:.0f}% below)"
        )
    ax.set_title(f"Per-server scheduled load ({len(loads)} server-runs)")
    ax.legend(fontsize=7)

    runs = [b / 1e6 for b in summary["measured"]["run_offered_load_bps"]]
    bx.hist(runs, bins=12, color="tab:purple", edgecolor="white")
    bx.axvline(summary["analytic"]["offered_load_bps"] / 1e6, color="black", linestyle=":", label="analytic mean")
    for (name, c), style in zip(CAPACITY_BPS.items(), ["--", "-."], strict=False):
        bx.axvline(c / 1e6, color="tab:red", linestyle=style, label=f"C {name}")
    bx.set_xlabel(f"total offered load of {summary['servers']} servers over one run (Mbps)")
    bx.set_ylabel("runs")
    bx.set_title(f"Offered load per run ({len(runs)} seeds)")
    bx.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "workload_server_load.png", dpi=110)
    plt.close(fig)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--csv", type=Path, default=Path("target/workload/requests.csv"))
    ap.add_argument("--out", type=Path, default=Path("docs/img"))
    args = ap.parse_args()
    for need in (args.csv, args.csv.with_name("summary.json")):
        if not need.is_file():
            print(f"plot_workload.py: error: {need} not found; `{PRODUCER.format(csv=args.csv)}` writes it", file=sys.stderr)
            return 2
    summary = json.loads(args.csv.with_name("summary.json").read_text())
    rows = read_requests(args.csv)
    args.out.mkdir(parents=True, exist_ok=True)
    plot_file_sizes(rows, summary, args.out)
    plot_server_load(rows, summary, args.out)
    print(f"wrote {args.out}/workload_file_sizes.png and {args.out}/workload_server_load.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
