"""Allocation of variation for full factorial designs (seed 000, section 4.4.1; Jain 1991).

The model is the one the seeds use: every observation is the overall mean plus one main effect
per factor plus one first-order interaction per pair of factors, plus an error::

    y = mu + sum_A alpha_A[a] + sum_{A<B} gamma_AB[a, b] + e

Main effects are level means minus the overall mean; an interaction is the mean of the cell
(a, b) minus (mu + alpha_A[a] + alpha_B[b]). The sum of squares of a factor is the sum of its
squared effects times the number of observations per level; of an interaction, the sum of its
squared interactions times the number of observations per (a, b) cell. Whatever the model does not
explain (higher-order interactions and, with replications, the pure error between replications)
is the error, with d_e = n - 1 - sum(N_A - 1) - sum_{A<B} (N_A - 1)(N_B - 1) degrees of freedom,
s_e = sqrt(SSE / d_e), s_A = s_e sqrt((N_A - 1) / n) and the confidence interval of a main
effect alpha +- t[1 - (1 - confidence)/2; d_e] s_A. For the seeds (4 x 3 x 2, no replications)
n = 24 and d_e = 24 - 1 - 6 - 11 = 6.
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sattcp.errors import AnalysisError, LevelMissing

__all__ = ["ROUNDING_TOLERANCE", "AllocationOfVariation", "allocation_of_variation", "interaction_name"]

#: Relative size below which a variation is rounding error, not data. The response does not
#: vary when the root mean square of its deviations from the mean is at most this times the
#: root mean square of its values (SST <= ROUNDING_TOLERANCE**2 * sum y^2); an effect smaller
#: than this times the root mean square of the values is never significant. Means carry a
#: relative rounding error of a few units of 2**-53 (1.1e-16), so 18 runs that all give 0.1
#: had SST = 3.5e-33, not 0, and 400% of it was put on one factor; 1e-12 leaves a margin of
#: thousands over that error and is far below any difference a simulation can measure
#: (one byte in a terabyte).
ROUNDING_TOLERANCE = 1e-12


def interaction_name(a: str, b: str) -> str:
    """Name of the first-order interaction of factors ``a`` and ``b`` (``"a:b"``)."""
    return f"{a}:{b}"


@dataclass(frozen=True)
class AllocationOfVariation:
    """The result of :func:`allocation_of_variation`.

    ``variation`` has one row per component (``individual``, ``mean``, ``total``, each factor,
    each ``a:b`` interaction, ``error`` and, with replications, its split into
    ``higher_order`` and ``pure_error``) with columns ``kind``, ``ss``, ``percent`` and ``dof``.
    ``effects`` has one row per factor level (``factor``, ``level``, ``effect``, ``std``,
    ``ci_low``, ``ci_high``, ``significant``); ``interactions`` one row per pair of levels
    (``factor_a``, ``level_a``, ``factor_b``, ``level_b``, ``interaction``).
    """

    response: str
    factors: tuple[str, ...]
    levels: Mapping[str, tuple[Any, ...]]
    n: int
    replications: int
    mean: float
    sst: float
    sse: float
    dof_error: int
    s_e: float
    confidence: float
    t_quantile: float
    variation: pd.DataFrame = field(repr=False)
    effects: pd.DataFrame = field(repr=False)
    interactions: pd.DataFrame = field(repr=False)
    residuals: pd.Series = field(repr=False)
    #: False when the response does not vary (within :data:`ROUNDING_TOLERANCE`): every sum of
    #: squares, effect and interaction is then 0, every percent NaN, and no effect significant.
    varies: bool = True

    def no_variation_text(self) -> str:
        """What to say instead of an allocation when the response does not vary."""
        return (f"{self.response} does not vary across the {self.n} observations (every one is "
                f"{self.mean:.6g}, to rounding): nothing to allocate, every effect is 0 and none is "
                "significant")

    def percent(self, component: str) -> float:
        """Percent of the total variation explained by a factor or an ``a:b`` interaction."""
        return float(self.variation.loc[component, "percent"])

    def effect(self, factor: str, level: Any) -> pd.Series:
        """The row of ``effects`` for one level of one factor. An unknown factor or level raises
        :class:`~sattcp.errors.LevelMissing` (an ``AnalysisError`` and a ``KeyError``) naming
        the known ones."""
        if factor not in self.factors:
            raise LevelMissing(f"no factor {factor!r} in the analysis of {self.response!r} "
                               f"(factors: {list(self.factors)!r})")
        e = self.effects
        row = e[(e["factor"] == factor) & (e["level"] == level)]
        if row.empty:
            raise LevelMissing(f"no level {level!r} of factor {factor!r} (levels: {list(self.levels[factor])!r})")
        return row.iloc[0]

    def to_text(self, digits: int = 4) -> str:
        """Plain-text rendering in the layout of the seeds' Tables 6 and 7."""
        f = f"{{:.{digits}f}}"
        lines = [
            (
                f"Allocation of variation of {self.response!r} "
                f"({self.n} observations, {self.replications} replication(s))"
            ),
        ]
        if not self.varies:
            return "\n".join([*lines, self.no_variation_text() + "."])
        lines.append(f"{'component':<32} {'SS':>12} {'%':>8} {'dof':>5}")
        for name, row in self.variation.iterrows():
            pct = "" if pd.isna(row["percent"]) else f"{row['percent']:8.2f}"
            lines.append(f"{name!s:<32} {f.format(row['ss']):>12} {pct:>8} {int(row['dof']):>5}")
        lines.append(
            f"s_e = {f.format(self.s_e)} with d_e = {self.dof_error}; "
            f"t[{1 - (1 - self.confidence) / 2:.3f}; {self.dof_error}] = {self.t_quantile:.4f}"
        )
        lines.append("")
        lines.append(f"Main effects and {100 * self.confidence:g}% confidence intervals")
        for _, r in self.effects.iterrows():
            mark = "" if r["significant"] else "  (not significant)"
            lines.append(
                f"{r['factor']!s:<20} {r['level']!s:<12} {f.format(r['effect']):>10}   "
                f"({f.format(r['ci_low'])}, {f.format(r['ci_high'])}){mark}"
            )
        return "\n".join(lines)


def _levels(df: pd.DataFrame, factors: Sequence[str], given: Mapping[str, Sequence[Any]] | None):
    levels: dict[str, tuple[Any, ...]] = {}
    for a in factors:
        present = list(dict.fromkeys(df[a].tolist()))
        if given and a in given:
            order = list(given[a])
            extra = [v for v in present if v not in order]
            if extra:
                raise AnalysisError(f"factor {a!r}: levels {extra!r} are not in the given levels")
            levels[a] = tuple(order)
        else:
            levels[a] = tuple(present)
        if len(levels[a]) < 2:
            raise AnalysisError(f"factor {a!r} has {len(levels[a])} level(s); at least 2 are needed")
    return levels


def allocation_of_variation(
    df: pd.DataFrame,
    factors: Sequence[str],
    response: str,
    confidence: float = 0.90,
    levels: Mapping[str, Sequence[Any]] | None = None,
) -> AllocationOfVariation:
    """Allocation of variation of ``response`` over a full factorial design in ``factors``.

    ``df`` has one row per observation; every combination of levels must appear the same number
    of times r >= 1 (r > 1 are replications). ``levels`` optionally fixes the order of levels
    (default: order of first appearance). Raises :class:`~sattcp.errors.AnalysisError` (a
    ``ValueError``) if the design is not a balanced full factorial or the response is missing
    or not finite.
    """
    factors = list(factors)
    if not factors:
        raise AnalysisError("at least one factor is needed")
    if len(set(factors)) != len(factors):
        raise AnalysisError(f"factors repeat: {factors!r}")
    missing = [c for c in [*factors, response] if c not in df.columns]
    if missing:
        raise AnalysisError(f"columns not found: {missing!r}; available: {list(df.columns)!r}")
    if isinstance(confidence, bool) or not isinstance(confidence, numbers.Real) or not 0 < confidence < 1:
        raise AnalysisError(f"confidence must be in (0, 1), got {confidence!r}")
    y = pd.to_numeric(df[response], errors="coerce").astype(float)
    if not np.isfinite(y.to_numpy()).all():
        raise AnalysisError(f"response {response!r} has missing or non-finite values")
    data = df[factors].copy()
    data["_y"] = y.to_numpy()
    lv = _levels(data, factors, levels)

    counts = data.groupby(factors, sort=False).size()
    cells = math.prod(len(v) for v in lv.values())
    reps = set(counts.tolist())
    if len(counts) != cells or len(reps) != 1:
        present = set(counts.index if len(factors) > 1 else [(i,) for i in counts.index])
        absent = [c for c in itertools.product(*lv.values()) if c not in present]
        raise AnalysisError(
            f"not a balanced full factorial design in {factors!r}: {cells} combinations "
            f"expected, {len(counts)} present with counts {sorted(reps)!r}"
            + (f"; missing e.g. {absent[:3]!r}" if absent else "")
        )
    r = reps.pop()
    n = len(data)

    mu = float(data["_y"].mean())
    sum_y2 = float((data["_y"] ** 2).sum())
    ss_mean = n * mu * mu
    # Sum of squares of deviations (numerically better than sum_y2 - ss_mean, same value).
    sst = float(((data["_y"] - mu) ** 2).sum())
    # Rounding error, not variation: all values equal, but mu carries an error of an ulp or so.
    varies = sst > ROUNDING_TOLERANCE**2 * sum_y2
    if not varies:
        sst = 0.0
    # An effect this small is rounding error whatever its interval says (s_e may be rounding
    # error too, when the runs are deterministic and replications repeat each other).
    effect_floor = ROUNDING_TOLERANCE * math.sqrt(sum_y2 / n)

    # Each observation's level of each factor by its place among the levels: looking effects up
    # by label (eff.loc[data[a]]) takes a column of True/False as a mask, not as labels.
    code = {a: pd.Index(list(lv[a])).get_indexer(data[a]) for a in factors}
    fitted = np.full(n, mu)
    main: dict[str, pd.Series] = {}
    rows_var: list[tuple[str, str, float, int]] = []
    eff_rows = []
    for a in factors:
        eff = data.groupby(a, sort=False)["_y"].mean().reindex(list(lv[a])) - mu
        if not varies:
            eff[:] = 0.0
        main[a] = eff
        fitted += eff.to_numpy()[code[a]]
        rows_var.append((a, "main", float((eff**2).sum()) * n / len(lv[a]), len(lv[a]) - 1))
        for level, e in eff.items():
            eff_rows.append((a, level, float(e)))

    int_rows = []
    for a, b in itertools.combinations(factors, 2):
        cell = data.groupby([a, b], sort=False)["_y"].mean()
        idx = pd.MultiIndex.from_product([list(lv[a]), list(lv[b])], names=[a, b])
        cell = cell.reindex(idx)
        ia = cell.index.get_level_values(0)
        ib = cell.index.get_level_values(1)
        # Cells in the order of idx: a's levels slowest, so gamma[i, j] is (a_i, b_j).
        gamma = (cell.to_numpy().reshape(len(lv[a]), len(lv[b])) - mu
                 - main[a].to_numpy()[:, None] - main[b].to_numpy()[None, :])
        if not varies:
            gamma = np.zeros_like(gamma)
        fitted += gamma[code[a], code[b]]
        gamma = gamma.ravel()
        per_cell = n / (len(lv[a]) * len(lv[b]))
        dof = (len(lv[a]) - 1) * (len(lv[b]) - 1)
        rows_var.append((interaction_name(a, b), "interaction", float((gamma**2).sum()) * per_cell, dof))
        for la, lb, v in zip(ia, ib, gamma, strict=False):
            int_rows.append((a, la, b, lb, float(v)))

    resid = data["_y"].to_numpy() - fitted
    sse = float((resid**2).sum()) if varies else 0.0
    dof_model = sum(d for _, _, _, d in rows_var)
    dof_error = n - 1 - dof_model
    if dof_error > 0:
        s_e = math.sqrt(sse / dof_error)
        # Student's t quantile: scipy.stats.t.ppf is this function (t_gen._ppf), without the
        # 1.1 s that importing scipy.stats takes (scipy.special: 0.45 s).
        from scipy.special import stdtrit

        tq = float(stdtrit(dof_error, 1 - (1 - confidence) / 2))
    else:
        s_e, tq = float("nan"), float("nan")

    def pct(ss: float) -> float:
        return 100.0 * ss / sst if sst > 0 else float("nan")

    var = [
        ("individual", "total", sum_y2, float("nan"), n),
        ("mean", "total", ss_mean, float("nan"), 1),
        ("total", "total", sst, 100.0 if sst > 0 else float("nan"), n - 1),
    ]
    var += [(name, kind, ss, pct(ss), dof) for name, kind, ss, dof in rows_var]
    var.append(("error", "error", sse, pct(sse), dof_error))
    if r > 1:
        cell_mean = data.groupby(factors, sort=False)["_y"].transform("mean").to_numpy()
        pure = float(((data["_y"].to_numpy() - cell_mean) ** 2).sum()) if varies else 0.0
        dof_pure = cells * (r - 1)
        higher = sse - pure
        var.append(("higher_order", "error", higher, pct(higher), dof_error - dof_pure))
        var.append(("pure_error", "error", pure, pct(pure), dof_pure))
    variation = pd.DataFrame(var, columns=["component", "kind", "ss", "percent", "dof"])
    variation = variation.set_index("component")

    effects = pd.DataFrame(eff_rows, columns=["factor", "level", "effect"])
    std = {a: s_e * math.sqrt((len(lv[a]) - 1) / n) for a in factors}
    effects["std"] = effects["factor"].map(std)
    effects["ci_low"] = effects["effect"] - tq * effects["std"]
    effects["ci_high"] = effects["effect"] + tq * effects["std"]
    effects["significant"] = (((effects["ci_low"] > 0) | (effects["ci_high"] < 0))
                              & (effects["effect"].abs() > effect_floor))
    interactions = pd.DataFrame(
        int_rows, columns=["factor_a", "level_a", "factor_b", "level_b", "interaction"]
    )
    return AllocationOfVariation(
        response=response,
        factors=tuple(factors),
        levels=lv,
        n=n,
        replications=r,
        mean=mu,
        sst=sst,
        sse=sse,
        dof_error=dof_error,
        s_e=s_e,
        confidence=confidence,
        t_quantile=tq,
        variation=variation,
        effects=effects,
        interactions=interactions,
        residuals=pd.Series(resid, index=df.index, name="residual"),
        varies=varies,
    )
