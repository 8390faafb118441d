"""Figures for factorial studies: results per combination, main effects with confidence
intervals, and the allocation of variation as stacked bars. Functions return matplotlib
figures; :func:`save` writes one as PNG, SVG and PDF and returns the PNG bytes.

Every level keeps one colour and one place in every figure (:data:`LEVEL_COLORS`,
:func:`ordered`): the seeds' flavours Vanilla, Reno, NewReno, SACK; buffers 0.5, 1, 2 RTT; EPD
then SD; WAN, MEO, GEO. Bars and points carry their level in their SVG id
(``level-<factor>-<level>``), so tests and readers can check colours in the SVG files.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from sattcp.analysis import AllocationOfVariation

# figure_render chooses Agg and keeps text as text in the SVG files (searchable, and the tests
# read the tick labels' order), for this process and the workers that draw.
from sattcp.figure_render import FORMATS, Renderer, render
from sattcp.paths import write_whole

__all__ = ["LEVEL_COLORS", "LEVEL_ORDER", "Figures", "effects_figure", "level_color", "ordered", "results_figure",
           "save", "variation_figure"]

#: The seeds' levels in the order of their tables (seed 000 Tables 5-13), per factor.
LEVEL_ORDER: dict[str, list[str]] = {
    "tcp": ["Vanilla", "Reno", "NewReno", "SACK"],
    "buffer_rtt": ["0.5", "1", "2"],
    "drop_policy": ["EPD", "SD"],
    "link": ["WAN", "MEO", "GEO"],
}

#: One colour per level, the same in every figure and table (Okabe-Ito colours for the
#: flavours and policies, which colour-blind readers can tell apart; a light-to-dark blue
#: sequence for the ordered buffer sizes).
LEVEL_COLORS: dict[str, dict[str, str]] = {
    "tcp": {"Vanilla": "#E69F00", "Reno": "#56B4E9", "NewReno": "#009E73", "SACK": "#CC79A7"},
    "buffer_rtt": {"0.5": "#9ecae1", "1": "#4292c6", "2": "#08306b"},
    "drop_policy": {"EPD": "#D55E00", "SD": "#0072B2"},
    "link": {"WAN": "#66a61e", "MEO": "#e7298a", "GEO": "#7570b3"},
}

#: Colours of the components of the allocation of variation (factors and interactions).
#: (Paul Tol's muted scheme: none of them is a level's colour, so a component is never taken
#: for a level.)
COMPONENT_COLORS = {
    "tcp": "#332288", "buffer_rtt": "#88CCEE", "drop_policy": "#117733",
    "tcp:buffer_rtt": "#DDCC77", "tcp:drop_policy": "#CC6677", "buffer_rtt:drop_policy": "#AA4499",
    "error": "#bdbdbd",
}

#: For factors and components of other studies: colours taken in order of their levels.
CYCLE = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c"]


def ordered(factor: str, present: Sequence[Any], given: Sequence[Any] | None = None) -> list[Any]:
    """The levels of ``factor`` in their fixed order (the seeds' order, or ``given``), then any
    other level present in order of appearance."""
    order = list(given) if given is not None else LEVEL_ORDER.get(factor, [])
    seen = list(dict.fromkeys(present))
    return [lv for lv in order if lv in seen] + [lv for lv in seen if lv not in order]


def level_color(factor: str, level: Any, levels: Sequence[Any] | None = None) -> str:
    """The colour of one level: fixed for the seeds' factors, else by its place in ``levels``."""
    fixed = LEVEL_COLORS.get(factor, {})
    if str(level) in fixed:
        return fixed[str(level)]
    idx = list(levels).index(level) if levels is not None and level in levels else 0
    return CYCLE[idx % len(CYCLE)]


def component_color(name: str, k: int) -> str:
    return COMPONENT_COLORS.get(name, CYCLE[k % len(CYCLE)])


_GID_COUNTER = iter(range(1 << 62))


def _gid(factor: str, level: Any) -> str:
    """An SVG id naming a level: ``level-<factor>-<level>__<n>`` (n keeps ids unique)."""
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in f"{factor}-{level}")
    return f"level-{name}__{next(_GID_COUNTER)}"


def save(fig: Figure, stem: Path, formats: Sequence[str] = FORMATS) -> bytes:
    """Write ``stem.png/.svg/.pdf``, each whole or not at all, and return the PNG bytes (for
    embedding)."""
    return _write(stem, render(fig, formats), formats)


def _write(stem: Path, files: Mapping[str, bytes], formats: Sequence[str]) -> bytes:
    for fmt in formats:
        write_whole(stem.with_suffix(f".{fmt}"), files[fmt])
    return files["png"]  # the file's bytes serve the embedding too: drawn once


class Figures:
    """A report's figures, drawn in worker processes while the report goes on
    (:class:`sattcp.figure_render.Renderer`). :meth:`save` returns a function that waits for
    the figure, writes its files, each whole (here, in the order the caller asks for them), and
    returns the PNG bytes. Use it as a context manager: leaving it stops the workers."""

    def __init__(self, jobs: int | None = None) -> None:
        self._renderer = Renderer(jobs)

    def start(self) -> Figures:
        """Starts the workers now (:meth:`Renderer.start`): before work that precedes the first
        figure. Returns this object."""
        self._renderer.start()
        return self

    def save(self, fig: Figure, stem: Path, formats: Sequence[str] = FORMATS) -> Callable[[], bytes]:
        files = self._renderer.submit(fig, formats)
        return lambda: _write(stem, files(), formats)

    def __enter__(self) -> Figures:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self._renderer.close(wait=exc_type is None)


def _limits(values: Sequence[float], pad: float = 0.15) -> tuple[float, float] | None:
    """Axis limits that show the differences between ``values`` (a margin of ``pad`` of their
    range on each side, widened to at least 0.02), kept within [0, 1.05] for shares."""
    v = np.asarray([x for x in values if np.isfinite(x)], dtype=float)
    if v.size == 0:
        return None
    lo, hi = float(v.min()), float(v.max())
    span = max(hi - lo, 0.02)
    lo, hi = lo - pad * span, hi + pad * span
    if float(v.min()) >= 0:
        lo = max(lo, 0.0)
    if float(v.max()) <= 1.0:
        hi = min(hi, 1.05)
    return lo, hi


def results_figure(
    ours: pd.DataFrame,
    paper: pd.DataFrame | None,
    *,
    responses: Sequence[str],
    x: str,
    group: str,
    panel: str,
    title: str,
    orders: Mapping[str, Sequence[Any]] | None = None,
) -> Figure:
    """Grouped bars of each response: ``x`` levels on the axis, one bar per ``group`` level
    (its fixed colour), one panel per ``panel`` level; the paper's values (same columns) as
    black markers. The y axis spans the data (it does not start at 0), so that differences
    of a few percent show; the legend sits below the panels, never over a bar."""
    orders = orders or {}
    panels = ordered(panel, ours[panel], orders.get(panel))
    xs = ordered(x, ours[x], orders.get(x))
    groups = ordered(group, ours[group], orders.get(group))
    fig = Figure(figsize=(4.4 * len(panels), 2.9 * len(responses) + 0.7))
    axes = fig.subplots(len(responses), len(panels), squeeze=False, sharey="row")
    width = 0.8 / len(groups)
    for i, resp in enumerate(responses):
        shown: list[float] = []
        for j, pv in enumerate(panels):
            ax = axes[i][j]
            for k, gv in enumerate(groups):
                pos = np.arange(len(xs)) + (k - (len(groups) - 1) / 2) * width
                sel = ours[(ours[panel] == pv) & (ours[group] == gv)].set_index(x)
                vals = [float(sel[resp].get(xv, np.nan)) for xv in xs]
                bars = ax.bar(pos, vals, width, color=level_color(group, gv, groups), edgecolor="white", linewidth=0.5)
                for b in bars:
                    b.set_gid(_gid(group, gv))
                shown += vals
                if paper is not None:
                    ps = paper[(paper[panel] == pv) & (paper[group] == gv)].set_index(x)
                    pvals = [float(ps[resp].get(xv, np.nan)) for xv in xs]
                    ax.plot(pos, pvals, "D", color="black", markersize=3.5, markerfacecolor="white", markeredgewidth=1.0)
                    shown += pvals
            ax.set_xticks(np.arange(len(xs)), [str(v) for v in xs], fontsize=9)
            ax.set_title(f"{_pretty(panel)} {pv}", fontsize=10)
            if j == 0:
                ax.set_ylabel(resp, fontsize=9)
            ax.tick_params(axis="y", labelsize=8)
            ax.grid(axis="y", alpha=0.3)
        lim = _limits(shown)
        if lim is not None:
            axes[i][0].set_ylim(*lim)
    handles = [Patch(facecolor=level_color(group, gv, groups), label=f"{_pretty(group)} {gv}") for gv in groups]
    if paper is not None:
        handles.append(Line2D([], [], marker="D", color="black", markerfacecolor="white", linestyle="", label="paper"))
    fig.suptitle(title, fontsize=11)
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.06 if len(responses) > 1 else 0.1, 1, 1))
    return fig


def _pretty(factor: str) -> str:
    return {"tcp": "TCP", "buffer_rtt": "buffer (RTT)", "drop_policy": "policy", "link": "link"}.get(factor, factor)


def effects_figure(
    ours: Mapping[str, AllocationOfVariation],
    paper: Mapping[str, AllocationOfVariation] | None,
    title: str,
) -> Figure:
    """Main effects with their confidence intervals, one panel per response: each level in its
    colour, ours as filled circles, the paper's as open squares beside them. Without degrees of
    freedom for error there are no intervals, and the panel says so."""
    resps = list(ours)
    fig = Figure(figsize=(5.8 * len(resps), 3.8))
    axes = fig.subplots(1, len(resps), squeeze=False)
    for ax, resp in zip(axes[0], resps, strict=False):
        a = ours[resp]
        e = a.effects.reset_index(drop=True)
        levels_of = {f: list(a.levels.get(f, [])) for f in a.factors}
        pos = np.arange(len(e))
        no_ci = a.dof_error <= 0 or not np.isfinite(a.s_e)
        for n, row in e.iterrows():
            color = level_color(row["factor"], row["level"], levels_of.get(row["factor"]))
            lo, hi = row["effect"] - row["ci_low"], row["ci_high"] - row["effect"]
            yerr = None if no_ci or not (np.isfinite(lo) and np.isfinite(hi)) else [[lo], [hi]]
            c = ax.errorbar([n - 0.14], [row["effect"]], yerr=yerr, fmt="o", color=color, capsize=3, markersize=5)
            c[0].set_gid(_gid(row["factor"], row["level"]))
            if paper is not None and resp in paper:
                p = paper[resp].effects
                prow = p[(p["factor"] == row["factor"]) & (p["level"] == row["level"])]
                if len(prow):
                    q = prow.iloc[0]
                    ax.errorbar([n + 0.14], [q["effect"]], yerr=[[q["effect"] - q["ci_low"]], [q["ci_high"] - q["effect"]]],
                                fmt="s", color=color, markerfacecolor="white", capsize=3, markersize=5)
        # Factor boundaries and names under the level labels.
        bounds = [0]
        for f in a.factors:
            bounds.append(bounds[-1] + int((e["factor"] == f).sum()))
        for b in bounds[1:-1]:
            ax.axvline(b - 0.5, color="#cccccc", linewidth=0.8)
        ax.axhline(0, color="black", linewidth=0.7)
        ax.set_xticks(pos, [str(lv) for lv in e["level"]], fontsize=8)
        for f, b0, b1 in zip(a.factors, bounds[:-1], bounds[1:], strict=False):
            ax.annotate(_pretty(f), xy=((b0 + b1 - 1) / 2, 0), xycoords=("data", "axes fraction"), xytext=(0, -24),
                        textcoords="offset points", ha="center", va="top", fontsize=8, color="#444444")
        ax.tick_params(axis="y", labelsize=8)
        ci = "no confidence intervals: zero degrees of freedom for error" if no_ci else f"{100 * a.confidence:g}% CI"
        ax.set_title(f"{resp}: main effects, {ci}", fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    handles = [Line2D([], [], marker="o", color="#555555", linestyle="", label="ours")]
    if paper is not None:
        handles.append(Line2D([], [], marker="s", color="#555555", markerfacecolor="white", linestyle="", label="paper"))
    fig.suptitle(title, fontsize=11)
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


def variation_figure(results: Mapping[str, AllocationOfVariation], title: str) -> Figure:
    """Allocation of variation as stacked bars (percent), one bar per named result (in the
    order given), each component in its fixed colour; the legend beside the axes."""
    names = list(results)
    comps: list[str] = []
    for r in results.values():
        v = r.variation
        for c in v.index[v["kind"].isin(["main", "interaction"])]:
            if c not in comps:
                comps.append(c)
    comps.append("error")
    fig = Figure(figsize=(max(5.0, 0.55 * len(names) + 3.5), 4.2))
    ax = fig.subplots()
    bottom = np.zeros(len(names))
    for k, c in enumerate(comps):
        vals = np.array([
            float(results[n].variation["percent"].get(c, 0.0)) if results[n].sst > 0 else 0.0
            for n in names
        ])
        vals = np.nan_to_num(vals)
        label = " x ".join(_pretty(part) for part in c.split(":")) if c != "error" else "error (higher-order interactions)"
        bars = ax.bar(np.arange(len(names)), vals, 0.7, bottom=bottom, label=label, color=component_color(c, k))
        for b in bars:
            b.set_gid(_gid("component", c))
        bottom += vals
    for i, n in enumerate(names):
        if not results[n].varies:  # an empty bar would read as "nothing computed"
            ax.text(i, 50, "no variation", rotation=90, ha="center", va="center", fontsize=8, color="#444444")
    ax.set_xticks(np.arange(len(names)), names, rotation=40, ha="right", fontsize=8)
    ax.set_ylabel("% of total variation", fontsize=9)
    ax.set_ylim(0, 100)
    ax.legend(fontsize=7, bbox_to_anchor=(1.01, 1), loc="upper left", frameon=False)
    ax.set_title(title, fontsize=11)
    fig.tight_layout()
    return fig
