"""Results store: one DuckDB file with the studies, their runs and the runs' per-flow results.

Tables:

- ``studies``: one row per study (``study``, ``definition`` as JSON: factors, levels, blocks,
  responses, replications), so a store can be analysed without its study file.
- ``runs``: one row per run, keyed by ``(study, run_key)``: ``block``, ``factors`` (JSON of the
  factor labels), ``overrides`` (JSON of what was passed to the simulator), ``seed``,
  ``scenario``, ``scenario_digest``, ``status`` (``ok``/``failed``), ``error``, the common
  responses as columns (``efficiency``, ``fairness``, ``jain_fairness``, ``events``,
  ``sim_time_s``, ``wall_time_s``, ``digest``), every summary value in ``summary`` (JSON),
  ``started_at`` and ``finished_at`` (UTC).
- ``flows``: the per-flow table of each run, with ``study`` and ``run_key`` in front; its other
  columns are those of ``RunResult.flows`` (added as new ones appear).

Every run is written in its own transaction, so a sweep that is killed loses no finished run.
Only one process writes (the sweep's parent); DuckDB locks the file against other writers.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

import duckdb
import pandas as pd

__all__ = ["RESPONSE_COLUMNS", "Store"]

#: Summary values also stored as columns of ``runs`` (all are kept in ``summary`` as JSON).
RESPONSE_COLUMNS: dict[str, str] = {
    "efficiency": "DOUBLE",
    "fairness": "DOUBLE",
    "jain_fairness": "DOUBLE",
    "events": "BIGINT",
    "sim_time_s": "DOUBLE",
    "wall_time_s": "DOUBLE",
    "digest": "VARCHAR",
}

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS studies (
    study VARCHAR PRIMARY KEY,
    definition VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    study VARCHAR NOT NULL,
    run_key VARCHAR NOT NULL,
    block VARCHAR,
    factors VARCHAR NOT NULL,
    overrides VARCHAR,
    seed BIGINT,
    scenario VARCHAR,
    scenario_digest VARCHAR,
    status VARCHAR NOT NULL,
    error VARCHAR,
    {", ".join(f"{k} {t}" for k, t in RESPONSE_COLUMNS.items())},
    summary VARCHAR,
    started_at TIMESTAMP,
    finished_at TIMESTAMP,
    PRIMARY KEY (study, run_key)
);
"""


def _jsonable(v: Any) -> Any:
    if hasattr(v, "item") and callable(v.item):  # numpy scalars
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, Mapping):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    return str(v)


def _dumps(v: Any) -> str:
    return json.dumps(_jsonable(v))  # key order kept: factor order matters


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


class Store:
    """A DuckDB results file. Use as a context manager or call :meth:`close`."""

    def __init__(self, path: str | Path, read_only: bool = False) -> None:
        self.path = Path(path)
        if read_only and not self.path.exists():
            raise FileNotFoundError(f"no results store at {self.path}")
        self.con = duckdb.connect(str(self.path), read_only=read_only)
        if not read_only:
            self.con.execute(_SCHEMA)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.con.close()

    # -- studies -------------------------------------------------------------------------------

    def save_study(self, study: str, definition: Mapping[str, Any]) -> None:
        """Record (or update) a study's definition."""
        self.con.execute(
            "INSERT OR REPLACE INTO studies VALUES (?, ?, ?)", [study, _dumps(definition), _now()]
        )

    def studies(self) -> list[str]:
        return [r[0] for r in self.con.execute("SELECT study FROM studies ORDER BY study").fetchall()]

    def study_definition(self, study: str) -> dict[str, Any]:
        row = self.con.execute("SELECT definition FROM studies WHERE study = ?", [study]).fetchone()
        if row is None:
            known = ", ".join(self.studies()) or "none"
            raise KeyError(f"no study {study!r} in {self.path} (studies: {known})")
        return json.loads(row[0])

    # -- runs ----------------------------------------------------------------------------------

    def record_run(
        self,
        study: str,
        run_key: str,
        *,
        factors: Mapping[str, Any],
        status: str,
        block: str | None = None,
        overrides: Mapping[str, Any] | None = None,
        seed: int | None = None,
        scenario: str | None = None,
        scenario_digest: str | None = None,
        summary: Mapping[str, Any] | None = None,
        flows: pd.DataFrame | None = None,
        error: str | None = None,
        started_at: datetime | None = None,
        wall_time_s: float | None = None,
    ) -> None:
        """Write one finished run (and its flows) in one transaction, replacing an earlier one."""
        if status not in ("ok", "failed"):
            raise ValueError(f"status must be 'ok' or 'failed', got {status!r}")
        summary = dict(summary or {})
        if wall_time_s is not None:
            summary.setdefault("wall_time_s", wall_time_s)
        cols = {k: _jsonable(summary.get(k)) for k in RESPONSE_COLUMNS}
        if cols["digest"] is not None:
            cols["digest"] = str(cols["digest"])
        values = [
            study, run_key, block, _dumps(factors), _dumps(overrides or {}), seed, scenario,
            scenario_digest, status, error, *cols.values(), _dumps(summary),
            started_at, _now(),
        ]
        con = self.con
        con.execute("BEGIN TRANSACTION")
        try:
            gone = con.execute("DELETE FROM runs WHERE study = ? AND run_key = ? RETURNING run_key",
                               [study, run_key]).fetchall()
            if gone and self._has_table("flows"):
                con.execute("DELETE FROM flows WHERE study = ? AND run_key = ?", [study, run_key])
            con.execute(f"INSERT INTO runs VALUES ({', '.join('?' * len(values))})", values)
            if flows is not None and len(flows):
                self._insert_flows(study, run_key, flows)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise

    def _has_table(self, name: str) -> bool:
        q = "SELECT count(*) FROM information_schema.tables WHERE table_name = ?"
        row = self.con.execute(q, [name]).fetchone()
        return bool(row and row[0] > 0)

    def _insert_flows(self, study: str, run_key: str, flows: pd.DataFrame) -> None:
        df = flows.reset_index(drop=True).copy()
        df.insert(0, "run_key", run_key)
        df.insert(0, "study", study)
        self.con.register("_new_flows", df)
        try:
            if not self._has_table("flows"):
                self.con.execute("CREATE TABLE flows AS SELECT * FROM _new_flows")
                return
            have = {r[0] for r in self.con.execute("DESCRIBE flows").fetchall()}
            for name, typ, *_ in self.con.execute("DESCRIBE _new_flows").fetchall():
                if name not in have:
                    self.con.execute(f'ALTER TABLE flows ADD COLUMN "{name}" {typ}')
            self.con.execute("INSERT INTO flows BY NAME SELECT * FROM _new_flows")
        finally:
            self.con.unregister("_new_flows")

    def run_keys(self, study: str, status: str | None = None) -> set[str]:
        q = "SELECT run_key FROM runs WHERE study = ?"
        args: list[Any] = [study]
        if status is not None:
            q += " AND status = ?"
            args.append(status)
        return {r[0] for r in self.con.execute(q, args).fetchall()}

    def missing_runs(self, study: str, keys: Iterable[str], retry_failed: bool = False) -> list[str]:
        """The keys (in the given order) without a recorded run (or with a failed one if
        ``retry_failed``)."""
        done = self.run_keys(study, "ok" if retry_failed else None)
        return [k for k in keys if k not in done]

    def runs(self, study: str | None = None, expand: bool = True) -> pd.DataFrame:
        """The runs table; with ``expand`` the factor labels and every summary value become
        columns (factor columns are named by their dotted keys)."""
        q = "SELECT * FROM runs" + (" WHERE study = ?" if study else "") + " ORDER BY study, run_key"
        df = self.con.execute(q, [study] if study else []).df()
        if not expand or df.empty:
            return df
        fac = pd.DataFrame([json.loads(s) for s in df["factors"]], index=df.index)
        summ = pd.DataFrame([json.loads(s) if s else {} for s in df["summary"]], index=df.index)
        summ = summ[[c for c in summ.columns if c not in df.columns and c not in fac.columns]]
        return pd.concat([df, fac, summ], axis=1)

    def flows(self, study: str | None = None) -> pd.DataFrame:
        if not self._has_table("flows"):
            return pd.DataFrame(columns=["study", "run_key"])
        q = "SELECT * FROM flows" + (" WHERE study = ?" if study else "")
        return self.con.execute(q, [study] if study else []).df()

    def counts(self, study: str) -> dict[str, int]:
        rows = self.con.execute(
            "SELECT status, count(*) FROM runs WHERE study = ? GROUP BY status", [study]
        ).fetchall()
        return {s: n for s, n in rows}

    # -- export --------------------------------------------------------------------------------

    def export(self, out_dir: str | Path, fmt: str = "parquet", study: str | None = None) -> list[Path]:
        """Write ``runs`` and ``flows`` (optionally of one study) as Parquet or CSV files."""
        if fmt not in ("parquet", "csv"):
            raise ValueError(f"format must be 'parquet' or 'csv', got {fmt!r}")
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for table in ("runs", "flows"):
            if not self._has_table(table):
                continue
            path = out / f"{table}.{fmt}"
            where = " WHERE study = $study" if study else ""
            opts = "(FORMAT parquet)" if fmt == "parquet" else "(FORMAT csv, HEADER true)"
            # COPY does not take prepared parameters; quote the path and the study name.
            sel = f"SELECT * FROM {table}{where}".replace("$study", _sql_str(study or ""))
            self.con.execute(f"COPY ({sel}) TO {_sql_str(str(path))} {opts}")
            written.append(path)
        return written


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"
