"""Figures for factorial studies: results per combination, main effects with confidence
intervals, and the allocation of variation as stacked bars. Functions return matplotlib
figures; :func:`save` writes one as PNG, SVG and PDF and returns the PNG bytes."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from sattcp.analysis import AllocationOfVariation

__all__ = ["effects_figure", "results_figure", "save", "variation_figure"]

COLORS = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c"]


def save(fig: Figure, stem: Path, formats: Sequence[str] = ("png", "svg", "pdf")) -> bytes:
    """Write ``stem.png/.svg/.pdf`` and return the PNG bytes (for embedding)."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    for fmt in formats:
        # Fixed metadata so that the same results give the same files.
        meta = {"Date": None} if fmt in ("svg", "pdf") else {}
        fig.savefig(stem.with_suffix(f".{fmt}"), dpi=110, bbox_inches="tight", metadata=meta)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return buf.getvalue()


def results_figure(
    ours: pd.DataFrame,
    paper: pd.DataFrame | None,
    *,
    responses: Sequence[str],
    x: str,
    group: str,
    panel: str,
    title: str,
) -> Figure:
    """Grouped bars of each response: ``x`` levels on the axis, one bar per ``group`` level, one
    panel per ``panel`` level; the paper's values (same columns) as black markers."""
    panels = list(dict.fromkeys(ours[panel]))
    xs = list(dict.fromkeys(ours[x]))
    groups = list(dict.fromkeys(ours[group]))
    fig = Figure(figsize=(4.2 * len(panels), 3.0 * len(responses)))
    axes = fig.subplots(len(responses), len(panels), squeeze=False, sharey="row")
    width = 0.8 / len(groups)
    for i, resp in enumerate(responses):
        for j, pv in enumerate(panels):
            ax = axes[i][j]
            for k, gv in enumerate(groups):
                pos = np.arange(len(xs)) + (k - (len(groups) - 1) / 2) * width
                sel = ours[(ours[panel] == pv) & (ours[group] == gv)].set_index(x)
                vals = [float(sel[resp].get(xv, np.nan)) for xv in xs]
                ax.bar(pos, vals, width, color=COLORS[k % len(COLORS)], label=f"{group}={gv}")
                if paper is not None:
                    ps = paper[(paper[panel] == pv) & (paper[group] == gv)].set_index(x)
                    pvals = [float(ps[resp].get(xv, np.nan)) for xv in xs]
                    ax.plot(pos, pvals, "D", color="black", markersize=4,
                            label="paper" if k == 0 else None)
            ax.set_xticks(np.arange(len(xs)), [str(v) for v in xs])
            ax.set_title(f"{panel}={pv}", fontsize=9)
            if j == 0:
                ax.set_ylabel(resp)
            ax.set_ylim(0, 1.05 if resp in ("efficiency", "fairness") else None)
            ax.grid(axis="y", alpha=0.3)
    axes[0][-1].legend(fontsize=7, loc="lower right")
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def effects_figure(
    ours: Mapping[str, AllocationOfVariation],
    paper: Mapping[str, AllocationOfVariation] | None,
    title: str,
) -> Figure:
    """Main effects with their confidence intervals, one panel per response; ours in colour,
    the paper's in grey beside them."""
    resps = list(ours)
    fig = Figure(figsize=(5.5 * len(resps), 3.6))
    axes = fig.subplots(1, len(resps), squeeze=False)
    for ax, resp in zip(axes[0], resps, strict=False):
        e = ours[resp].effects
        labels = [f"{f}={lv}" for f, lv in zip(e["factor"], e["level"], strict=False)]
        pos = np.arange(len(e))
        ax.errorbar(pos - 0.12, e["effect"], yerr=[e["effect"] - e["ci_low"], e["ci_high"] - e["effect"]],
                    fmt="o", color=COLORS[0], capsize=3, label="ours")
        if paper is not None and resp in paper:
            p = paper[resp].effects
            ax.errorbar(pos + 0.12, p["effect"], yerr=[p["effect"] - p["ci_low"], p["ci_high"] - p["effect"]],
                        fmt="s", color="#666666", capsize=3, label="paper")
        ax.axhline(0, color="black", linewidth=0.7)
        ax.set_xticks(pos, labels, rotation=45, ha="right", fontsize=7)
        ax.set_title(f"{resp}: main effects, {100 * ours[resp].confidence:g}% CI", fontsize=9)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def variation_figure(results: Mapping[str, AllocationOfVariation], title: str) -> Figure:
    """Allocation of variation as stacked bars (percent), one bar per named result."""
    names = list(results)
    comps: list[str] = []
    for r in results.values():
        v = r.variation
        for c in v.index[v["kind"].isin(["main", "interaction"])]:
            if c not in comps:
                comps.append(c)
    comps.append("error")
    fig = Figure(figsize=(max(5.0, 0.7 * len(names) + 3), 4.0))
    ax = fig.subplots()
    bottom = np.zeros(len(names))
    for k, c in enumerate(comps):
        vals = np.array([
            float(results[n].variation["percent"].get(c, 0.0)) if results[n].sst > 0 else 0.0
            for n in names
        ])
        vals = np.nan_to_num(vals)
        ax.bar(np.arange(len(names)), vals, 0.7, bottom=bottom, label=c, color=COLORS[k % len(COLORS)])
        bottom += vals
    ax.set_xticks(np.arange(len(names)), names, rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("% of total variation")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=7, bbox_to_anchor=(1.01, 1), loc="upper left")
    ax.set_title(title)
    fig.tight_layout()
    return fig
