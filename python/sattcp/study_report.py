"""A compact HTML report for a factorial study that has no paper to compare with (our own
studies, e.g. ``modern-cc``): efficiency and fairness per factor level, every run's values, the
allocation of variation (seed 000 §4.4.1, :mod:`sattcp.analysis`) as one table over blocks and
responses, main effects, and a few figures. It reuses the building blocks of the seeds' report
(:mod:`sattcp.report`: styles, tables, embedded figures, colour key) and :mod:`sattcp.plots`.

Sections carry ids (``runs``, ``levels``, ``cells``, ``variation``, ``effects``, ``figures``)
so that tests and readers can find them. ``variation.csv``, ``effects.csv`` and ``cells.csv``
are written beside ``report.html``; figures as PNG/SVG/PDF under ``figures/``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from sattcp import plots
from sattcp.paths import start_report, write_whole
from sattcp.report import (
    _CSS,
    _SCRIPT,
    _color_key,
    _e,
    _img,
    _joined,
    _notes_html,
    _runs_table,
    _slug,
    _table,
    analyse_study,
    run_notes,
)
from sattcp.store import Store

__all__ = ["SECTIONS", "build_generic_report", "level_means"]

#: The ids of the report's sections, in order.
SECTIONS = ("runs", "levels", "cells", "variation", "effects", "figures")


def level_means(runs: pd.DataFrame, factors: Sequence[str], responses: Sequence[str],
                levels: dict[str, list[Any]], blocks: Sequence[str]) -> pd.DataFrame:
    """Mean of each response per (block, factor, level), blocks and levels in the study's order."""
    rows = []
    for b in blocks:
        sub = runs[runs["block"] == b]
        for f in factors:
            for lv in levels[f]:
                sel = sub[sub[f] == lv]
                rows.append({"block": b, "factor": f, "level": lv, "runs": len(sel),
                             **{r: float(sel[r].mean()) if len(sel) else float("nan")
                                for r in responses}})
    return pd.DataFrame(rows)


def _variation_table(results: dict[tuple[str, str], Any]) -> pd.DataFrame:
    """Percent of variation per component (rows) for each (block, response) (columns)."""
    cols = {}
    for (b, r), a in results.items():
        v = a.variation
        keep = v[v["kind"].isin(["main", "interaction", "error"])]
        cols[f"{b} {r}"] = keep["percent"]
    return pd.DataFrame(cols)


def build_generic_report(store_path: str | Path, study: str, out_dir: str | Path, *,
                         title: str = "", note: str = "", confidence: float = 0.90,
                         x: str | None = None, group: Sequence[str] = ()) -> Path:
    """Write ``out_dir/report.html`` for a stored study and return its path.

    ``x`` is the factor on the horizontal axis of the results figure (default: the first) and
    ``group`` the factors whose combinations make its bars (default: the others)."""
    out = Path(out_dir)
    figdir = out / "figures"
    # Figures are drawn in worker processes while the report goes on; they start while the
    # store is analysed.
    with plots.Figures().start() as figures:
        with Store(store_path, read_only=True) as st:
            runs = st.runs(study)
            definition = st.study_definition(study)
        results = analyse_study(store_path, study, confidence=confidence)
        path = start_report(out)  # the analysis stood: the old report goes before its figures
        factors = list(definition["factors"])
        levels = {k: list(v) for k, v in definition["factors"].items()}
        responses = list(definition.get("responses") or ["efficiency"])
        order = [b.get("name") for b in definition.get("blocks") or [] if isinstance(b, dict)] or None
        ok = runs[runs["status"] == "ok"]
        blocks = plots.ordered("link", ok["block"], order)
        parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
                 f"<title>sattcp study: {_e(study)}</title><style>{_CSS}</style></head><body>",
                 f"<h1>{_e(title or 'Study ' + study)}</h1>",
                 f"<p>{_e(definition.get('description', ''))}</p>"]
        if note:
            parts.append(f"<p class='note'>{_e(note)}</p>")
        notes = definition.get("notes") or []
        if notes:
            parts.append("<h2>Notes and choices</h2><ul>" + "".join(f"<li>{_e(n)}</li>" for n in notes)
                         + "</ul>")
        parts.append("<p>Allocation of variation, main effects and confidence intervals as in seed 000 "
                     "&sect;4.4.1 (docs/analysis.md), one full factorial per block.</p>")
        parts.append(f"<section id='runs'><h2>Runs</h2>{_runs_table(runs, order)}"
                     f"{_notes_html(run_notes(runs, definition))}</section>")
        parts.append(_color_key(levels))

        means = level_means(ok, factors, responses, levels, blocks)
        wide = means.pivot_table(index=["factor", "level"], columns="block", values=responses,
                                 sort=False)
        wide = wide.reindex(columns=[(r, b) for r in responses for b in blocks])
        parts.append("<section id='levels'><h2>Efficiency and fairness per factor level</h2>"
                     "<p>Mean over the runs of each block at that level (the other factors at all "
                     "their levels).</p>" + _table(wide) + "</section>")

        cells = ok[["block", *factors, *responses]].copy()
        cells["block"] = pd.Categorical(cells["block"], blocks, ordered=True)
        for f in factors:
            cells[f] = pd.Categorical(cells[f], levels[f], ordered=True)
        cells = cells.sort_values(["block", *factors]).reset_index(drop=True)
        parts.append("<section id='cells'><h2>Every run</h2>"
                     + _table(cells.set_index(["block", *factors])) + "</section>")

        var = _variation_table(results)
        constant = "".join(f"<p class='note'>{_e(b)}: {_e(a.no_variation_text())}.</p>"
                           for (b, _), a in results.items() if not a.varies)
        parts.append("<section id='variation'><h2>Allocation of variation (% of total)</h2>"
                     "<p>Main effects, first-order interactions and the error (higher-order "
                     "interactions; with one run per combination there is no pure error).</p>"
                     + constant + _table(var) + "</section>")

        parts.append("<section id='effects'><h2>Main effects</h2>")
        effects = []
        for (b, r), a in results.items():
            parts.append(f"<h3>{_e(b)}: {_e(r)}</h3><p>mean {a.mean:.4f}; s_e = {a.s_e:.4g} with "
                         f"d_e = {a.dof_error}; {100 * a.confidence:g}% intervals.</p>")
            if not a.varies:
                parts.append(f"<p class='note'>{_e(a.no_variation_text())}.</p>")
            parts.append(_table(a.effects.set_index(["factor", "level"])))
            effects.append(a.effects.assign(block=b, response=r))
        parts.append("</section>")

        parts.append("<section id='figures'><h2>Figures</h2>")
        x = x or factors[0]
        group = list(group) or [f for f in factors if f != x]
        fig_df = ok[["block", x, *group, *responses]].copy()
        combos = [" ".join(f"{f.split('.')[-1]}={v}" for f, v in zip(group, vals, strict=True))
                  for vals in pd.MultiIndex.from_product([levels[g] for g in group])]
        fig_df["combination"] = [" ".join(f"{g.split('.')[-1]}={row[g]}" for g in group)
                                 for _, row in fig_df.iterrows()]
        # One bar per combination: with replications (reproduce --replications 2), the mean of
        # its runs (results_figure takes one value per bar, and failed with two).
        replicated = bool(len(fig_df)) and fig_df.groupby(["block", x, "combination"], sort=False).size().max() > 1
        if replicated:
            fig_df = fig_df.groupby(["block", x, "combination"], sort=False)[responses].mean().reset_index()
        what = "mean of each combination's runs" if replicated else "responses per run"
        fig = plots.results_figure(fig_df, None, responses=responses, x=x, group="combination",
                                   panel="block", title=f"{study}: {what}",
                                   orders={"block": blocks, x: levels[x], "combination": combos})
        stem = figdir / "results"
        parts.append(_img(figures.save(fig, stem), f"{study}: " + ("each combination's mean response over its "
                          "replications" if replicated else "every run's responses"),
                          f"figures/{stem.name}.png/.svg/.pdf", name=stem.name))
        fig = plots.variation_figure({f"{b} {r}": a for (b, r), a in results.items()},
                                     "Allocation of variation")
        stem = figdir / "allocation-of-variation"
        parts.append(_img(figures.save(fig, stem), "Allocation of variation",
                          f"figures/{stem.name}.png/.svg/.pdf", name=stem.name))
        for b in dict.fromkeys(b for b, _ in results):  # the blocks analysed (run_notes: the others)
            fig = plots.effects_figure({r: results[(b, r)] for r in responses if (b, r) in results},
                                       None, f"{b}: main effects")
            stem = figdir / f"{_slug(b)}-effects"
            parts.append(_img(figures.save(fig, stem), f"{b}: main effects",
                              f"figures/{stem.name}.png/.svg/.pdf", name=stem.name, levels=levels))
        parts.append("</section>")
        parts.append(_SCRIPT + "</body></html>")

        html_text = _joined(parts)  # the figures' files first, as they were written before
        write_whole(out / "variation.csv", var.to_csv())
        write_whole(out / "effects.csv", pd.concat(effects).to_csv(index=False))
        write_whole(out / "cells.csv", cells.to_csv(index=False))
        return write_whole(path, html_text)
