"""Results store: one DuckDB file with the studies, their runs and each run's flows, links and
traces. The schema is declared here (docs/analysis.md, "The results store"), versioned in the
file, and never inferred from the data.

Tables (schema version :data:`SCHEMA_VERSION`):

- ``meta``: ``key``, ``value``: ``schema_version``, ``created_by`` (the sattcp build).
- ``studies``: one row per study (``study``, ``definition`` as JSON: factors, levels, blocks,
  responses, seeds), so a store can be analysed without its study file.
- ``study_runs``: the run keys of each study's current definition (written by every sweep).
  Runs of a study whose key is not among them are *stale* (an earlier scenario, definition or
  sattcp build): kept, but left out of analyses and exports unless asked for.
- ``runs``: one row per run, keyed by ``(study, run_key)``: identity, the resolved configuration
  (``config``, JSON) and its digest, the sattcp version and build that produced it, the machine
  that ran it (``host``: its wall time was measured there), status and
  error, the common responses as columns and every summary value in ``summary`` (JSON).
- ``flows``, ``links``: the per-flow and per-link tables of each run (``RunResult.flows`` and
  ``.links``), with ``study`` and ``run_key`` in front, every column typed.
- ``traces``: every recorded variable of each run, one row per point (``trace``, ``t``,
  ``value``).

A run is written whole, in one transaction (with the other runs of the same commit), or not at
all. A sweep opens the file only while it writes (:class:`StoreWriter`), so other processes can
read it between two commits (DuckDB allows one process at a time).
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

import duckdb
import pandas as pd

from sattcp.errors import OutputPathError, PlainKeyError, SattcpError, WriteError
from sattcp.interrupts import deferred_signals
from sattcp.paths import WholeFiles, as_path, shown
from sattcp.worker import build_id, host_id, sattcp_version  # the build a run is keyed by (no pandas in workers)

__all__ = [
    "FLOW_COLUMNS",
    "LINK_COLUMNS",
    "RESPONSE_COLUMNS",
    "RUN_COLUMNS",
    "SCHEMA_VERSION",
    "STORE_WAIT_S",
    "Store",
    "StoreError",
    "StoreLocked",
    "StoreMissing",
    "StoreWriter",
    "StudyMissing",
    "build_id",
    "check_store_path",
    "store_wait_s",
]

#: Version of the tables below. 1: the unversioned store of sattcp <= 0.1.0 (flows typed by the
#: first run stored); 2: declared types, ``meta``, ``study_runs``, ``links``, ``traces``, the
#: resolved configuration and the build of every run; 3: the machine of every run (``host``).
SCHEMA_VERSION = 5

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

RUN_COLUMNS: dict[str, str] = {
    "study": "VARCHAR NOT NULL",
    "run_key": "VARCHAR NOT NULL",
    "block": "VARCHAR",
    "factors": "VARCHAR NOT NULL",      # JSON: factor key -> level label
    "overrides": "VARCHAR",             # JSON: what was passed to the simulator
    "seed": "UBIGINT",
    "scenario": "VARCHAR",              # base scenario file
    "scenario_digest": "VARCHAR",       # SHA-256 (16 hex) of the base scenario's text
    "config": "VARCHAR",                # JSON: the resolved configuration that ran
    "config_digest": "VARCHAR",         # SHA-256 (16 hex) of config
    "sattcp_version": "VARCHAR",
    "build": "VARCHAR",                 # version + native module digest (build_id())
    "host": "VARCHAR",                  # the machine that ran it (worker.host_id()); NULL before schema 3
    "status": "VARCHAR NOT NULL",       # ok | failed
    "error": "VARCHAR",
    **RESPONSE_COLUMNS,
    "summary": "VARCHAR",               # JSON: every summary value
    "warnings": "VARCHAR",              # JSON list
    "started_at": "TIMESTAMP",
    "finished_at": "TIMESTAMP",
}

#: ``RunResult.flows`` (crates/sattcp-core/src/metrics/result.rs ``FlowResult`` plus
#: ``capacity_bps``). Counters are BIGINT: sattcp's "unbounded" is 2^62 - 1.
FLOW_COLUMNS: dict[str, str] = {
    "flow": "BIGINT", "role": "VARCHAR", "src": "BIGINT", "dst": "BIGINT",
    "scheduled_bytes": "BIGINT", "bytes_sent": "BIGINT", "bytes_retransmitted": "BIGINT",
    "segments_sent": "BIGINT", "segments_retransmitted": "BIGINT", "timeouts": "BIGINT",
    "fast_retransmits": "BIGINT", "delivered_bytes": "BIGINT", "throughput_bps": "DOUBLE",
    "duplicate_bytes": "BIGINT", "completed_at_s": "DOUBLE", "final_cwnd": "BIGINT",
    "final_ssthresh": "BIGINT", "final_srtt_s": "DOUBLE", "fair_share_bps": "DOUBLE",
    "capacity_bps": "DOUBLE", "loss_probes": "BIGINT", "loss_probe_recoveries": "BIGINT",
}

#: ``RunResult.links`` (``LinkResult``); ``drops_by_reason`` is a JSON object.
LINK_COLUMNS: dict[str, str] = {
    "link": "VARCHAR", "from": "BIGINT", "to": "BIGINT", "rate_bps": "BIGINT",
    "delay_s": "DOUBLE", "utilization": "DOUBLE", "packets": "BIGINT", "bytes": "BIGINT",
    "drops_queue_full": "BIGINT", "drops_corrupted": "BIGINT", "drops_scripted": "BIGINT",
    "peak_queue_packets": "BIGINT", "peak_queue_bytes": "BIGINT", "mean_queue_bytes": "DOUBLE",
    "drops_by_reason": "VARCHAR", "cells": "BIGINT", "cells_arrived": "BIGINT",
    "cells_dropped": "BIGINT", "cells_corrupted": "BIGINT", "cells_buffered": "BIGINT",
    "peak_queue_cells": "BIGINT", "mean_queue_cells": "DOUBLE", "frames_discarded": "BIGINT",
    "reordered": "BIGINT",
}

TRACE_COLUMNS: dict[str, str] = {"trace": "VARCHAR NOT NULL", "t": "DOUBLE", "value": "DOUBLE"}

#: Per-run tables: declared columns after ``study`` and ``run_key``.
RUN_TABLES: dict[str, dict[str, str]] = {"flows": FLOW_COLUMNS, "links": LINK_COLUMNS,
                                         "traces": TRACE_COLUMNS}
#: The tables an export may write, each as ``NAME.FORMAT`` in its folder (:meth:`Store.export`).
EXPORT_TABLES = ("runs", *RUN_TABLES, "studies")

_KEY_COLUMNS = {"study": "VARCHAR NOT NULL", "run_key": "VARCHAR NOT NULL"}


def _cols(cols: Mapping[str, str]) -> str:
    return ", ".join(f'"{k}" {t}' for k, t in cols.items())


_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE IF NOT EXISTS studies (
    study VARCHAR PRIMARY KEY, definition VARCHAR NOT NULL, created_at TIMESTAMP NOT NULL);
CREATE TABLE IF NOT EXISTS study_runs (study VARCHAR NOT NULL, run_key VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS runs ({_cols(RUN_COLUMNS)}, PRIMARY KEY (study, run_key));
""" + "".join(f"CREATE TABLE IF NOT EXISTS {t} ({_cols({**_KEY_COLUMNS, **c})});\n"
              for t, c in RUN_TABLES.items())

_OURS = {"meta", "studies", "study_runs", "runs", *RUN_TABLES}

_ARROW = {"DOUBLE": "float64", "BIGINT": "int64", "UBIGINT": "uint64", "VARCHAR": "string",
          "BOOLEAN": "bool_", "TIMESTAMP": "timestamp"}
#: The type Arrow infers for Python values of a declared type (:func:`_typed_rows`).
_PLAIN_ARROW = {"BIGINT": ("int64",), "DOUBLE": ("double", "int64"), "VARCHAR": ("string",)}
#: (NumPy dtype kind, declared type) pairs that convert to Arrow as they are.
_NUMPY_AS_IS = {("f", "DOUBLE"), ("i", "BIGINT"), ("u", "UBIGINT"), ("b", "BOOLEAN")}


class StoreError(SattcpError, ValueError):
    """The store cannot be used: missing, damaged, foreign, newer, locked. The message says
    which, in plain words (the CLI prints it and exits with status 2)."""


class RecordRefused(StoreError):
    """A run's table has a value its declared column cannot hold ("column 'cells' must be
    BIGINT: ..."); nothing of that run was written. :class:`StoreWriter` records such a run as
    failed, with this message, instead of stopping the sweep."""


class StoreMissing(StoreError, FileNotFoundError):
    """No file at the store's path."""


class StudyMissing(StoreError, PlainKeyError):
    """The store holds no study of that name (the message lists those it holds). Also a
    ``KeyError``, as :meth:`Store.study_definition` raised before, so code that catches that
    keeps doing so."""


class StoreLocked(StoreError):
    """Another process holds the file (DuckDB allows one process at a time)."""

    def __init__(self, path: Path, detail: str) -> None:
        m = re.search(r"PID (\d+)", detail)
        self.pid = int(m.group(1)) if m else None
        who = f"process {self.pid}" if self.pid else "another process"
        cmd = _cmdline(self.pid) if self.pid else ""
        sweep = " (a sattcp sweep is writing to it)" if "sweep" in cmd or "reproduce" in cmd else ""
        #: What holds the file (the message without its advice), for a note while waiting.
        self.holder = f"the results store {path} is locked by {who}" + (f": {cmd}" if cmd else "") + sweep
        super().__init__(self.holder + "; wait for it to finish or stop it, then try again")


def _cmdline(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return " ".join(a.decode(errors="replace") for a in raw.split(b"\0") if a)[:200]


# -- values ------------------------------------------------------------------------------------


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


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _typed_frame(df: pd.DataFrame, declared: Mapping[str, str]) -> tuple[Any, dict[str, str]]:
    """``df`` as an Arrow table with the declared types (missing declared columns are left out,
    DuckDB fills them with NULL). Undeclared columns keep their own type, nested values become
    JSON text; an undeclared column with no value at all is left out (it is NULL either way).
    Returns (table, {undeclared column: DuckDB type})."""
    import pyarrow as pa

    # The columns are converted whole where their type allows, and otherwise by plain loops
    # over their values rather than pandas' map and where (issue 15: the sweep's parent writes
    # every run's tables while the workers run; this was 2 s of its CPU in the 72-run study).
    arrays, names, extra = [], [], {}
    for name in df.columns:
        col = df[name]
        if col.dtype == object:
            values = col.to_numpy()
            if any(isinstance(x, (dict, list, tuple)) for x in values):
                # (An empty object, most links' drops_by_reason, without the JSON encoder.)
                col = pd.Series([None if x is None else "{}" if type(x) is dict and not x else _dumps(x) for x in values],
                                index=col.index, dtype=object)
        typ = declared.get(name)
        if typ is not None:
            base = typ.split()[0]
            target = _arrow_type(base)
            kind = col.dtype.kind
            try:
                if (kind, base) in _NUMPY_AS_IS or (kind == "f" and base in ("BIGINT", "UBIGINT")):
                    # A plain NumPy column of the declared kind, or of floats for an integer
                    # column (counters absent on some links are NaN): straight to Arrow, NaN as
                    # NULL, without a Python object per value. A float that is not a whole
                    # number is refused ("... was truncated"), not truncated.
                    arr = pa.array(col.to_numpy(), type=target, from_pandas=True)
                elif base == "VARCHAR" and isinstance(col.dtype, pd.StringDtype):
                    arr = pa.array(col, type=target, from_pandas=True)  # missing (NaN, NA) as NULL
                elif base == "VARCHAR":
                    arr = pa.array([None if x is None or x != x else str(x) for x in col.to_numpy()], type=target)
                else:
                    arr = pa.array(col.astype(object).where(col.notna(), None), type=target, from_pandas=True)
            except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as e:
                raise RecordRefused(f"column {name!r} must be {base}: {e}") from e
        else:
            arr = pa.array(col, from_pandas=True)
            if pa.types.is_null(arr.type):
                continue
            extra[name] = _duck_type(arr.type)
        arrays.append(arr)
        names.append(name)
    return pa.Table.from_arrays(arrays, names=names), extra


def _typed_rows(rows: list[Mapping[str, Any]], declared: Mapping[str, str]) -> tuple[Any, dict[str, str]] | None:
    """Rows of a table as sattcp's core writes them (JSON values of each declared column's
    kind, every row with the same keys) as the Arrow table that ``_typed_frame(pd.DataFrame(rows),
    declared)`` gives, without pandas: building a DataFrame per table and taking it apart again
    was about 15 ms per run in the sweep's process (issue 15). Arrow infers each column's type
    and only a plain one is taken (integers or nulls for BIGINT; numbers for DOUBLE; text for
    VARCHAR, nested values as JSON text). None otherwise (an undeclared column, a float in a
    BIGINT column, which a cast would truncate, a boolean...): the caller then takes the
    DataFrame path, which converts or refuses it."""
    import pyarrow as pa

    keys = rows[0].keys()
    if any(r.keys() != keys for r in rows):
        return None
    arrays = []
    for name in keys:
        typ = declared.get(name)
        if typ is None:
            return None
        base = typ.split()[0]
        values = [r[name] for r in rows]
        if base == "VARCHAR" and any(isinstance(v, (dict, list, tuple)) for v in values):
            values = [None if v is None else "{}" if type(v) is dict and not v else _dumps(v) for v in values]
        try:
            arr = pa.array(values, from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            return None
        if pa.types.is_null(arr.type) or str(arr.type) in _PLAIN_ARROW.get(base, ()):
            try:
                arrays.append(arr.cast(_arrow_type(base)))  # (safe: an integer beyond 2^53 is refused)
            except (pa.ArrowInvalid, pa.ArrowTypeError):
                return None
        else:
            return None
    return pa.Table.from_arrays(arrays, names=list(keys)), {}


def _duck_type(t: Any) -> str:
    import pyarrow as pa

    if pa.types.is_boolean(t):
        return "BOOLEAN"
    if pa.types.is_integer(t):
        return "UBIGINT" if pa.types.is_uint64(t) else "BIGINT"
    if pa.types.is_floating(t):
        return "DOUBLE"
    if pa.types.is_timestamp(t):
        return "TIMESTAMP"
    return "VARCHAR"


@dataclass(frozen=True)
class _Prepared:
    """One run as the store writes it (:func:`run_record`): its ``runs`` row (a one-row Arrow
    table with the declared types) and its tables, typed (:func:`_typed_rows` or
    :func:`_typed_frame`: an Arrow table and its undeclared columns' DuckDB types)."""

    study: str
    run_key: str
    row: Any
    tables: dict[str, tuple[Any, dict[str, str]]]


def run_record(
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
    config: Mapping[str, Any] | None = None,
    config_digest: str | None = None,
    build: str | None = None,
    version: str | None = None,
    host: str | None = "",
    summary: Mapping[str, Any] | None = None,
    flows: pd.DataFrame | list[dict[str, Any]] | None = None,
    links: pd.DataFrame | list[dict[str, Any]] | None = None,
    traces: Mapping[str, pd.DataFrame] | None = None,
    warnings: Iterable[str] | None = None,
    error: str | None = None,
    started_at: datetime | None = None,
    wall_time_s: float | None = None,
) -> _Prepared:
    """One finished run as the store writes it (:meth:`Store.record_run`, :meth:`Store.record_runs`),
    checked and typed before anything is written: a value that its column cannot hold raises
    :class:`RecordRefused` naming the column. ``flows`` and ``links`` are DataFrames or lists
    of rows (dicts); ``traces`` maps a name to a DataFrame with columns ``t`` and ``value``;
    ``host`` the machine that ran it (by default this one, :func:`~sattcp.worker.host_id`;
    None: not known)."""
    import pyarrow as pa

    _check_name(study)
    _check_name(run_key, "run_key")
    if status not in ("ok", "failed"):
        raise StoreError(f"status must be 'ok' or 'failed', got {status!r}")
    summary = dict(summary or {})
    if wall_time_s is not None:
        summary.setdefault("wall_time_s", wall_time_s)
    cols = {k: _jsonable(summary.get(k)) for k in RESPONSE_COLUMNS}
    if cols["digest"] is not None:
        cols["digest"] = str(cols["digest"])
    row = {
        "study": study, "run_key": run_key, "block": block, "factors": _dumps(factors),
        # A path or a message may hold a name that is not UTF-8 (a folder d\xff), which
        # DuckDB cannot take: its bytes are stored escaped (paths.shown).
        "overrides": _dumps(overrides or {}), "seed": seed,
        "scenario": None if scenario is None else shown(scenario),
        "scenario_digest": scenario_digest,
        "config": None if config is None else _dumps(config), "config_digest": config_digest,
        "sattcp_version": version or sattcp_version(), "build": build or build_id(),
        "host": host_id() if host == "" else host, "status": status, "error": None if error is None else shown(error), **cols, "summary": _dumps(summary),
        "warnings": _dumps(list(warnings or [])), "started_at": started_at,
        "finished_at": _now(),
    }
    arrays = []
    for name, value in row.items():
        base = RUN_COLUMNS[name].split()[0]
        if base == "VARCHAR" and value is not None and not isinstance(value, str):
            value = str(value)  # (as DuckDB casts a parameter: a block named 3)
        try:
            arrays.append(pa.array([value], type=_arrow_type(base)))
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError) as e:
            what = f"summary value {name!r}" if name in RESPONSE_COLUMNS else repr(name)
            raise RecordRefused(f"{what} must be {base}, got {type(value).__name__} {value!r:.60}: {e}") from e
    typed: dict[str, tuple[Any, dict[str, str]]] = {}
    for t, data in (("flows", flows), ("links", links)):
        if data is not None and len(data):
            # Rows as the core writes them (the sweep's): straight to Arrow where they are plain.
            plain = _typed_rows(data, RUN_TABLES[t]) if type(data) is list and all(type(r) is dict for r in data) else None
            typed[t] = plain or _typed_frame(pd.DataFrame(data).reset_index(drop=True), RUN_TABLES[t])
    if traces:
        parts = [pd.DataFrame({"trace": name, "t": pd.Series(df["t"], dtype="float64"),
                               "value": pd.Series(df["value"], dtype="float64")})
                 for name, df in traces.items() if len(df)]
        if parts:
            typed["traces"] = _typed_frame(pd.concat(parts, ignore_index=True), TRACE_COLUMNS)
    return _Prepared(study, run_key, pa.Table.from_arrays(arrays, names=list(row)), typed)


def _arrow_type(base: str) -> Any:
    """The Arrow type of a declared DuckDB type's name (``BIGINT`` -> int64)."""
    import pyarrow as pa

    return pa.timestamp("us") if base == "TIMESTAMP" else getattr(pa, _ARROW[base])()


# -- the store ---------------------------------------------------------------------------------


#: How long opening a store waits for another process's lock by default (seconds): a sweep holds
#: the file only while it commits, so a reader seldom waits; ``SATTCP_STORE_WAIT_S`` sets
#: another (:func:`store_wait_s`).
STORE_WAIT_S = 30.0
#: After this many seconds of waiting, opening says once on standard error what it waits for.
_WAIT_NOTICE_S = 1.0


def store_wait_s() -> float:
    """The default wait for a locked store: ``SATTCP_STORE_WAIT_S`` (seconds, 0 or more) where
    set, else :data:`STORE_WAIT_S`. A value that is not such a number raises :class:`StoreError`
    naming the variable."""
    text = os.environ.get("SATTCP_STORE_WAIT_S", "").strip()
    if not text:
        return STORE_WAIT_S
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise StoreError(f"SATTCP_STORE_WAIT_S: must be a number of seconds, 0 or more, got {text!r:.60}")
    return value


def _connect(path: Path, read_only: bool, wait_s: float) -> duckdb.DuckDBPyConnection:
    """Opens the file, retrying while another process holds its lock (a sweep holds it only
    while it commits a run). Damaged or foreign files raise :class:`StoreError`. A wait longer
    than a second is said once on standard error (what holds the file, how long it waits)."""
    # DuckDB opens some other files as databases of its own (y.csv as a view of the CSV, which
    # read as "a DuckDB file but not a sattcp results store (its tables: file, y)"): a file
    # without DuckDB's header (its magic "DUCK" after an 8-byte checksum) is refused first.
    if path.is_file() and path.stat().st_size > 0:
        with open(path, "rb") as fh:
            if fh.read(12)[8:12] != b"DUCK":
                raise StoreError(f"{path} is not a readable sattcp results store (not a DuckDB file: "
                                 "it lacks DuckDB's header)")
    start = time.monotonic()
    deadline = start + wait_s
    pause = 0.02
    told = False
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only)
        except duckdb.IOException as e:
            if (failure := _write_failure(path, e)) is not None:  # opening writes a new file's header
                raise failure from None
            msg = str(e)
            if "lock" in msg.lower():
                now = time.monotonic()
                if now >= deadline:
                    raise StoreLocked(path, msg) from None
                if not told and now - start >= _WAIT_NOTICE_S:
                    told = True
                    print(f"sattcp: {StoreLocked(path, msg).holder}: waiting up to {deadline - now:.0f} s more for it "
                          "(SATTCP_STORE_WAIT_S sets the wait)", file=sys.stderr, flush=True)
                time.sleep(pause)
                pause = min(pause * 2, 0.5)
                continue
            raise StoreError(_damaged(path, msg)) from None
        except duckdb.Error as e:
            raise StoreError(_damaged(path, str(e))) from None


def check_store_path(path: str | Path, label: str = "results store") -> None:
    """DuckDB takes a file's path as UTF-8 text: a name with other bytes (``b"r\\xff.duckdb"``,
    which Python holds as a lone surrogate) cannot be opened at all (pybind11's
    ``std::bad_cast``), nor given in another form (bytes are refused, a file descriptor has
    no write-ahead log beside it). Raises :class:`StoreError` naming ``label`` (the option) and
    the path, its bytes shown."""
    text = shown(path)
    if text != str(path):
        raise StoreError(f"{label} {text}: the path is not UTF-8 text, and DuckDB opens only "
                         "UTF-8 paths; rename it or give another")
    # A device or a pipe (/dev/null) has size 0, which `Store` took for an empty file to replace
    # with a new store: it deleted the device.
    p = Path(path)
    if p.exists() and not p.is_dir() and not p.is_file():
        raise StoreError(f"{label} {text}: is not a regular file (a device or a pipe?); a results store is a file")


#: What the system says of a write it refused (``os.strerror``): a full disk, a quota, a file
#: too large, a file system (re)mounted read-only. DuckDB's message ends with it (``Could not
#: write file "r.duckdb.wal": No space left on device``).
_WRITE_FAILURES = tuple(os.strerror(n) for n in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS))


def _write_failure(path: Path, e: BaseException) -> WriteError | None:
    """``e`` as :class:`~sattcp.errors.WriteError` naming the store (``cannot write PATH: No
    space left on device``) if it is DuckDB failing to write the file or its write-ahead log
    (an I/O error too, when DuckDB says it was writing); else None."""
    if not isinstance(e, duckdb.Error):
        return None
    msg = str(e)
    eio = os.strerror(errno.EIO)
    writing = eio in msg and re.search(r"could not (write|fsync|sync|truncate)", msg, re.I)
    for reason in (*_WRITE_FAILURES, *([eio] if writing else [])):
        if reason in msg:
            return WriteError(f"cannot write {path}: {reason}")
    return None


def _damaged(path: Path, msg: str) -> str:
    first = msg.strip().splitlines()[0] if msg.strip() else type(msg).__name__
    return f"{path} is not a readable sattcp results store (DuckDB: {first})"


def _check_name(value: object, what: str = "study", optional: bool = False) -> None:
    """Raises :class:`StoreError` unless ``value`` is a name (a ``str``; None too if
    ``optional``): DuckDB would compare a number with the text column and fail
    (ConversionException), or store it as text."""
    if not (isinstance(value, str) or (optional and value is None)):
        raise StoreError(f"{what}: must be a str{' or None' if optional else ''}, got {type(value).__name__} {value!r:.60}")


class Store:
    """A DuckDB results file. Use as a context manager or call :meth:`close`.

    ``read_only`` stores can be opened while a sweep writes to the same file (the sweep holds
    the file only while it commits a run; opening waits up to ``wait_s`` seconds for it, by
    default :func:`store_wait_s`: 30, or ``SATTCP_STORE_WAIT_S``). An
    old store (schema 1 or 2) is migrated when opened; a damaged file, a DuckDB file without
    sattcp's tables or a store from a newer sattcp raise :class:`StoreError`.
    """

    def __init__(self, path: str | Path, read_only: bool = False, *, wait_s: float | None = None) -> None:
        try:
            self.path = as_path(path, "results store")
        except OutputPathError as e:  # None, a number: as every other problem of the store's path
            raise StoreError(str(e)) from None
        check_store_path(self.path)
        if not isinstance(read_only, bool):  # ("yes" raised DuckDB's TypeError)
            raise StoreError(f"read_only must be True or False, got {type(read_only).__name__} {read_only!r:.60}")
        if read_only and not self.path.exists():
            raise StoreMissing(f"no results store at {self.path}")
        if self.path.is_dir():
            raise StoreError(f"{self.path} is a folder, not a results store file")
        if not read_only and self.path.is_file() and self.path.stat().st_size == 0:
            self.path.unlink()  # an empty regular file (mktemp, touch): a new store
        if not read_only and not self.path.exists():
            # A new store: say why it cannot be created (DuckDB's error reads as a damaged file).
            from sattcp.paths import check_file

            try:
                check_file(self.path, "results store")
            except ValueError as e:
                raise StoreError(str(e)) from None
        self.read_only = read_only
        self._con: duckdb.DuckDBPyConnection | None = None
        if wait_s is None:
            wait_s = store_wait_s()
        self.con = _connect(self.path, read_only, wait_s)
        try:
            with self._writes():  # a new store's tables, a migration
                self._check_schema(wait_s)
        except BaseException:
            with contextlib.suppress(duckdb.Error):  # what went wrong first is what is said
                self.con.close()
            raise

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if kind is None:
            self.close()
            return
        with contextlib.suppress(duckdb.Error, WriteError):  # what went wrong first is what is said
            self.close()

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        """The DuckDB connection; after :meth:`close`, :class:`StoreError` saying so (not
        DuckDB's ConnectionException)."""
        if self._con is None:
            raise StoreError(f"the results store {self.path} is closed: open it again (Store(path)) to use it")
        return self._con

    @con.setter
    def con(self, con: duckdb.DuckDBPyConnection) -> None:
        self._con = con

    def close(self) -> None:
        """Closes the file (DuckDB then writes its write-ahead log into it, if it can). Closing
        a closed store does nothing; using one raises :class:`StoreError`."""
        con, self._con = self._con, None
        if con is not None:
            with self._writes():
                con.close()

    @contextlib.contextmanager
    def _writes(self) -> Iterator[None]:
        """DuckDB failing to write the file (a full disk) raises
        :class:`~sattcp.errors.WriteError` naming the store; other errors pass as they are."""
        try:
            yield
        except duckdb.Error as e:
            if (failure := _write_failure(self.path, e)) is not None:
                raise failure from e
            raise

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        """One transaction: committed if the block ends without error, else rolled back. A
        commit that cannot be written (:meth:`_writes`) has rolled back already: the ROLLBACK's
        "no transaction is active" must not hide why. A store opened read-only refuses, naming
        itself (DuckDB's InvalidInputException before)."""
        if self.read_only:
            raise StoreError(f"the results store {self.path} is open read-only: open it with Store(path) to write to it")
        con = self.con
        with self._writes():
            con.execute("BEGIN TRANSACTION")
            try:
                yield
                con.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(duckdb.Error):  # what went wrong first is what is said
                    con.execute("ROLLBACK")
                raise

    # -- schema --------------------------------------------------------------------------------

    def _tables(self) -> set[str]:
        return {r[0] for r in self.con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'").fetchall()}

    def schema_version(self) -> int:
        tables = self._tables()
        if "meta" in tables:
            row = self.con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            return int(row[0]) if row else 0
        if {"runs", "studies"} <= tables:
            return 1
        return 0

    def _check_schema(self, wait_s: float) -> None:
        tables = self._tables()
        if not tables & _OURS:
            if tables:
                raise StoreError(f"{self.path} is a DuckDB file but not a sattcp results store "
                                 f"(its tables: {', '.join(sorted(tables))}); use another file")
            if self.read_only:
                raise StoreError(f"{self.path} holds no results (an empty DuckDB file)")
            self.con.execute(_SCHEMA)
            self.con.executemany("INSERT INTO meta VALUES (?, ?)",
                                 [["schema_version", str(SCHEMA_VERSION)], ["created_by", build_id()]])
            return
        version = self.schema_version()
        if version > SCHEMA_VERSION:
            raise StoreError(f"{self.path} was written by a newer sattcp (store schema {version}; "
                             f"this sattcp {sattcp_version()} reads up to {SCHEMA_VERSION}): "
                             "upgrade sattcp to read it")
        if version < 1 or (version == 1 and not self._looks_like_v1()):
            raise StoreError(f"{self.path} is a DuckDB file but not a sattcp results store "
                             f"(its tables: {', '.join(sorted(tables))}); use another file")
        if version == SCHEMA_VERSION:
            missing = _OURS - tables
            if missing:
                raise StoreError(f"{self.path} is a damaged sattcp results store (tables "
                                 f"missing: {', '.join(sorted(missing))})")
            return
        # An older store: migrate it (a read-only connection cannot, so reopen for writing).
        if self.read_only:
            self.con.close()
            with Store(self.path, wait_s=wait_s):
                pass
            self.con = _connect(self.path, True, wait_s)
            return
        if version == 1:
            self._migrate_v1()  # straight to the current schema
            return
        if version == 2:
            self._migrate_v2()
        if version <= 3:
            self._migrate_v3()
        self._migrate_v4()

    def _looks_like_v1(self) -> bool:
        cols = {r[0] for r in self.con.execute("DESCRIBE runs").fetchall()}
        return {"study", "run_key", "factors", "status"} <= cols

    def _migrate_v1(self) -> None:
        """Schema 1 -> 2: every table rebuilt with the declared types (the flows table of a
        schema-1 store took its types from the first run stored: a column with no value in that
        run was typed NULL and refused every later value). Rows are kept; runs get
        ``build = 'unknown (store schema 1)'``."""
        con = self.con
        with self._transaction():
            old = self._tables()
            for t in ("runs", "flows", "studies"):
                if t in old:
                    con.execute(f"ALTER TABLE {t} RENAME TO {t}_v1")
            con.execute(_SCHEMA)
            con.execute("INSERT INTO studies SELECT study, definition, created_at FROM studies_v1")
            have = {r[0]: r[1] for r in con.execute("DESCRIBE runs_v1").fetchall()}
            common = [c for c in RUN_COLUMNS if c in have]
            sel = ", ".join(f'CAST("{c}" AS {RUN_COLUMNS[c].split()[0]}) AS "{c}"' for c in common)
            con.execute(f"INSERT INTO runs BY NAME SELECT {sel}, "
                        f"'unknown (store schema 1)' AS build FROM runs_v1")
            if "flows" in old:
                fhave = {r[0]: r[1] for r in con.execute("DESCRIBE flows_v1").fetchall()}
                for c, typ in fhave.items():
                    if c not in FLOW_COLUMNS and c not in _KEY_COLUMNS and typ != '"NULL"' \
                            and typ != "NULL":
                        con.execute(f'ALTER TABLE flows ADD COLUMN "{c}" {typ}')
                cols = [c for c in fhave if c in FLOW_COLUMNS or c in _KEY_COLUMNS
                        or fhave[c] not in ("NULL", '"NULL"')]
                decl = {**_KEY_COLUMNS, **FLOW_COLUMNS}
                sel = ", ".join(f'CAST("{c}" AS {decl[c].split()[0]}) AS "{c}"' if c in decl
                                else f'"{c}"' for c in cols)
                con.execute(f"INSERT INTO flows BY NAME SELECT {sel} FROM flows_v1")
            for t in ("runs", "flows", "studies"):
                if t in old:
                    con.execute(f"DROP TABLE {t}_v1")
            con.executemany("INSERT INTO meta VALUES (?, ?)",
                            [["schema_version", str(SCHEMA_VERSION)], ["created_by", build_id()],
                             ["migrated_from", "1"]])

    def _migrate_v2(self) -> None:
        """Schema 2 -> 3: ``runs`` gains ``host`` (NULL: the machine was not recorded), rebuilt
        so that its columns come in the declared order, as in a new store's; a column someone
        added to it (``ALTER TABLE runs ADD COLUMN note ...``) is kept, after them. Rows are
        kept."""
        with self._transaction():
            self._rebuild("runs", RUN_COLUMNS, ", PRIMARY KEY (study, run_key)")
            self._migrated(2)

    def _migrate_v3(self) -> None:
        """Schema 3 -> 4: ``links`` gains ``reordered`` (a moving link's packets delivered ahead
        of one sent before them; NULL on the runs stored before, as on fixed links), rebuilt in
        the declared order as :meth:`_migrate_v2` does ``runs``. Rows and run keys are kept."""
        with self._transaction():
            self._rebuild("links", {**_KEY_COLUMNS, **LINK_COLUMNS})
            self._migrated(3)

    def _migrate_v4(self) -> None:
        """Schema 4 -> 5: ``flows`` gains ``loss_probes`` and ``loss_probe_recoveries`` (the
        tail loss probes a Linux-like sender sent, and those that repaired a loss; NULL on the
        runs stored before), rebuilt in the declared order as :meth:`_migrate_v3` does
        ``links``. Rows and run keys are kept."""
        with self._transaction():
            self._rebuild("flows", {**_KEY_COLUMNS, **FLOW_COLUMNS})
            self._migrated(4)

    def _rebuild(self, table: str, declared: Mapping[str, str], constraints: str = "") -> None:
        """``table`` made again with the ``declared`` columns in their order (a declared column
        it lacks comes NULL), then the columns someone added to it, rows kept by name."""
        con = self.con
        have = con.execute(f"DESCRIBE {table}").fetchall()
        own = "".join(f', "{c}" {t}' for c, t, *_ in have if c not in declared)
        con.execute(f"ALTER TABLE {table} RENAME TO {table}_old")
        con.execute(f"CREATE TABLE {table} ({_cols(declared)}{own}{constraints})")
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM {table}_old")
        con.execute(f"DROP TABLE {table}_old")

    def _migrated(self, version: int) -> None:
        """Records a migration from schema ``version`` to the next (``migrated_from`` lists
        every version the store passed through, oldest first)."""
        con = self.con
        con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", [str(version + 1)])
        row = con.execute("SELECT value FROM meta WHERE key = 'migrated_from'").fetchone()
        con.execute("INSERT OR REPLACE INTO meta VALUES ('migrated_from', ?)",
                    [f"{row[0]} {version}" if row else str(version)])

    # -- studies -------------------------------------------------------------------------------

    def save_study(self, study: str, definition: Mapping[str, Any],
                   run_keys: Iterable[str] | None = None) -> None:
        """Record (or update) a study's definition and, if given, the run keys of that
        definition (runs of the study with other keys become stale)."""
        _check_name(study)
        con = self.con
        with self._transaction():
            con.execute("INSERT OR REPLACE INTO studies VALUES (?, ?, ?)",
                        [study, _dumps(definition), _now()])
            if run_keys is not None:
                con.execute("DELETE FROM study_runs WHERE study = ?", [study])
                keys = pd.DataFrame({"study": study, "run_key": list(run_keys)})
                with self._registered(_keys=keys):
                    con.execute("INSERT INTO study_runs SELECT study, run_key FROM _keys")

    def studies(self) -> list[str]:
        return [r[0] for r in self.con.execute("SELECT study FROM studies ORDER BY study").fetchall()]

    def study_definition(self, study: str) -> dict[str, Any]:
        _check_name(study)
        row = self.con.execute("SELECT definition FROM studies WHERE study = ?", [study]).fetchone()
        if row is None:
            raise self._missing(study)
        return json.loads(row[0])

    def _missing(self, study: str) -> StudyMissing:
        """``study`` is not in this store: the error naming the studies that are."""
        known = ", ".join(self.studies()) or "none"
        return StudyMissing(f"no study {study!r} in {self.path} (studies: {known})")

    def _has_plan(self, study: str) -> bool:
        row = self.con.execute("SELECT count(*) FROM study_runs WHERE study = ?", [study]).fetchone()
        return bool(row and row[0])

    # -- runs ----------------------------------------------------------------------------------

    def record_run(self, study: str, run_key: str, **record: Any) -> None:
        """Write one finished run (and its flows, links, traces) in one transaction, replacing
        an earlier record of the same key. ``record``: the keywords of :func:`run_record`
        (``factors`` and ``status`` at least); ``build`` and ``version`` default to this
        sattcp's."""
        self.record_runs([(study, run_key, record)])

    def record_runs(self, records: Iterable[tuple[str, str, Mapping[str, Any]]]) -> None:
        """Write finished runs, each ``(study, run_key, keywords of run_record)``, in one
        transaction: all of them or, if the commit fails, none. Every run is checked first; a
        value its column cannot hold raises :class:`RecordRefused` and nothing is written."""
        self._write([run_record(study, run_key, **rec) for study, run_key, rec in records])

    def _write(self, runs: list[_Prepared]) -> None:
        """Writes prepared runs in one transaction, a statement per table for all of them
        (issue 15: a statement costs DuckDB 1-5 ms whatever its rows, and the sweep's process
        wrote 5 per run). Of two records of one key the later one is kept, as writing them
        one after the other would."""
        import pyarrow as pa

        last: dict[tuple[str, str], _Prepared] = {}
        for r in runs:
            last.pop((r.study, r.run_key), None)
            last[(r.study, r.run_key)] = r
        runs = list(last.values())
        if not runs:
            return
        con = self.con
        rows = pa.concat_tables([r.row for r in runs]).combine_chunks()
        with self._transaction(), self._registered(_new_runs=rows):
            # A run's table rows are written in the transaction of its runs row, so only a run
            # recorded before has rows to replace (each DELETE scans its whole table: a sweep
            # that deleted for every new run spent time growing with the store, issue 15).
            # (The keys as two list parameters: a scan of the Arrow table costs DuckDB 2-3 ms more.)
            ours = "(study, run_key) IN (SELECT UNNEST(?), UNNEST(?))"
            keys = [[r.study for r in runs], [r.run_key for r in runs]]
            replaced = con.execute(f"DELETE FROM runs WHERE {ours}", keys).fetchone()
            if replaced and replaced[0]:
                for t in RUN_TABLES:
                    con.execute(f"DELETE FROM {t} WHERE {ours}", keys)
            names = ", ".join(f'"{k}"' for k in rows.column_names)
            con.execute(f"INSERT INTO runs ({names}) SELECT {names} FROM _new_runs")
            for t in RUN_TABLES:
                parts = [(r.tables[t], r.study, r.run_key) for r in runs if t in r.tables]
                if parts:
                    self._insert_rows(t, parts)

    @contextlib.contextmanager
    def _registered(self, **tables: Any) -> Iterator[None]:
        """Arrow tables visible to SQL under the given names for the block."""
        for name, table in tables.items():
            self.con.register(name, table)
        try:
            yield
        finally:
            for name in tables:
                self.con.unregister(name)

    def _insert_rows(self, table: str, parts: list[tuple[tuple[Any, dict[str, str]], str, str]]) -> None:
        """Inserts ``(typed table, study, run_key)`` parts into ``table``: in one statement
        where their columns agree in type (an undeclared column can differ between runs; then
        one statement each, as DuckDB casts each part to the column the first one made)."""
        import pyarrow as pa

        extra: dict[str, str] = {}
        keyed = []
        for (data, more), study, run_key in parts:
            for name, typ in more.items():
                extra.setdefault(name, typ)
            n = data.num_rows
            keyed.append(data.add_column(0, "run_key", pa.array([run_key] * n, pa.string()))
                         .add_column(0, "study", pa.array([study] * n, pa.string())))
        if extra:
            have = {r[0] for r in self.con.execute(f"DESCRIBE {table}").fetchall()}
            for name, typ in extra.items():
                if name not in have:
                    self.con.execute(f'ALTER TABLE {table} ADD COLUMN "{name}" {typ}')
        try:
            batches = [pa.concat_tables(keyed, promote_options="default").combine_chunks()]
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            batches = keyed
        for data in batches:
            with self._registered(_new_rows=data):
                names = ", ".join(f'"{c}"' for c in data.column_names)
                self.con.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM _new_rows")

    def run_keys(self, study: str, status: str | None = None) -> set[str]:
        _check_name(study)
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

    def failures(self, study: str, limit: int = 3, block: str | None = None) -> list[tuple[str, int]]:
        """The commonest errors of the failed runs of the study's current definition (not of
        stale runs), of one ``block`` if given: (the error's first line, runs), most frequent
        first, at most ``limit``."""
        _check_name(study)
        in_block = "" if block is None else " AND block = ?"
        rows = self.con.execute(
            "SELECT split_part(coalesce(error, 'no error recorded'), chr(10), 1) AS first, count(*) AS n"
            f" FROM runs r WHERE study = ? AND status = 'failed' AND {self._current_sql()}{in_block}"
            " GROUP BY first ORDER BY n DESC, first LIMIT ?", [study, *([] if block is None else [block]), limit]).fetchall()
        return [(str(first), int(n)) for first, n in rows]

    def stale_runs(self, study: str) -> int:
        """Stored runs of ``study`` that are not part of its current definition."""
        _check_name(study)
        if not self._has_plan(study):
            return 0
        row = self.con.execute(
            "SELECT count(*) FROM runs r WHERE study = ? AND NOT EXISTS (SELECT 1 FROM study_runs p"
            " WHERE p.study = r.study AND p.run_key = r.run_key)", [study]).fetchone()
        return int(row[0]) if row else 0

    def _current_sql(self, alias: str = "r") -> str:
        """SQL true for a run of its study's current definition (or of a study without one)."""
        return (f"(EXISTS (SELECT 1 FROM study_runs p WHERE p.study = {alias}.study AND "
                f"p.run_key = {alias}.run_key) OR NOT EXISTS (SELECT 1 FROM study_runs p "
                f"WHERE p.study = {alias}.study))")

    def runs(self, study: str | None = None, expand: bool = True,
             include_stale: bool = False) -> pd.DataFrame:
        """The runs of the study's current definition (with ``include_stale`` all of them, and a
        ``current`` column); with ``expand`` the factor labels and every summary value become
        columns (factor columns are named by their dotted keys)."""
        _check_name(study, optional=True)
        where = ["r.study = ?"] if study is not None else []
        if not include_stale:
            where.append(self._current_sql())
        q = (f"SELECT r.*, {self._current_sql()} AS current FROM runs r"
             + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY r.study, r.run_key")
        df = self.con.execute(q, [study] if study is not None else []).df()
        if not include_stale:
            df = df.drop(columns="current")
        if not expand or df.empty:
            return df
        fac = pd.DataFrame([json.loads(s) for s in df["factors"]], index=df.index)
        summ = pd.DataFrame([json.loads(s) if s else {} for s in df["summary"]], index=df.index)
        summ = summ[[c for c in summ.columns if c not in df.columns and c not in fac.columns]]
        return pd.concat([df, fac, summ], axis=1)

    def _per_run(self, table: str, study: str | None, include_stale: bool = False) -> pd.DataFrame:
        _check_name(study, optional=True)
        where = ["t.study = ?"] if study is not None else []
        if not include_stale:
            where.append(self._current_sql("t"))
        q = f"SELECT t.* FROM {table} t" + (" WHERE " + " AND ".join(where) if where else "")
        return self.con.execute(q, [study] if study is not None else []).df()

    def flows(self, study: str | None = None, include_stale: bool = False) -> pd.DataFrame:
        return self._per_run("flows", study, include_stale)

    def links(self, study: str | None = None, include_stale: bool = False) -> pd.DataFrame:
        return self._per_run("links", study, include_stale)

    def traces(self, study: str | None = None, include_stale: bool = False) -> pd.DataFrame:
        """Every trace point: ``study``, ``run_key``, ``trace`` (e.g. ``flow/0/cwnd``), ``t``
        (s), ``value``."""
        return self._per_run("traces", study, include_stale)

    def counts(self, study: str) -> dict[str, int]:
        _check_name(study)
        rows = self.con.execute(
            f"SELECT status, count(*) FROM runs r WHERE study = ? AND {self._current_sql()} "
            "GROUP BY status", [study]).fetchall()
        return {s: n for s, n in rows}

    def builds(self, study: str) -> dict[str, int]:
        """The sattcp builds that made the current successful runs of ``study``, with counts."""
        _check_name(study)
        rows = self.con.execute(
            f"SELECT coalesce(build, 'unknown'), count(*) FROM runs r WHERE study = ? AND "
            f"status = 'ok' AND {self._current_sql()} GROUP BY 1 ORDER BY 1", [study]).fetchall()
        return {b: n for b, n in rows}

    def check_one_build(self, study: str) -> None:
        """Raises :class:`StoreError` if the current runs of ``study`` were made by more than
        one sattcp build (their numbers may not be comparable)."""
        b = self.builds(study)
        if len(b) > 1:
            listed = ", ".join(f"{k} ({n} runs)" for k, n in b.items())
            raise StoreError(f"the runs of study {study!r} in {self.path} were made by "
                             f"{len(b)} different sattcp builds: {listed}. Their results may not "
                             "be comparable: rerun the study with one build (sattcp sweep), or "
                             "pass --allow-mixed-builds to analyse them anyway")

    # -- export --------------------------------------------------------------------------------

    def export_runs(self, study: str | None = None, include_stale: bool = False) -> pd.DataFrame:
        """The runs table for export: one row per run, factors and summary values as typed
        columns (not JSON), in the order of docs/analysis.md."""
        df = self.runs(study, expand=False, include_stale=True)
        if not include_stale:
            df = df[df["current"]]
        df = df.reset_index(drop=True)
        fac = pd.DataFrame([json.loads(s) for s in df["factors"]], index=df.index)
        summ = pd.DataFrame([json.loads(s) if s else {} for s in df["summary"]], index=df.index)
        fixed = ["study", "run_key", "block"]
        tail = ["seed", "status", "error"]
        ident = ["build", "sattcp_version", "host", "config_digest", "scenario", "scenario_digest",
                 "overrides", "config", "warnings", "started_at", "finished_at", "current"]
        responses = [c for c in RESPONSE_COLUMNS]
        more = [c for c in summ.columns if c not in df.columns and c not in fac.columns]
        out = pd.concat([df[fixed], _typed_columns(fac), df[tail], df[responses],
                         _typed_columns(summ[more]), df[ident]], axis=1)
        out["seed"] = out["seed"].astype("UInt64")
        return out

    def export(self, out_dir: str | Path, fmt: str = "parquet", study: str | None = None,
               include_stale: bool = False) -> list[Path]:
        """Write ``runs``, ``flows``, ``links``, ``traces`` and ``studies`` (optionally of one
        study) as Parquet or CSV files in ``out_dir``; tables without rows are not written.
        Raises :class:`StoreError` if there is nothing to export."""
        _check_name(study, optional=True)
        if fmt not in ("parquet", "csv"):
            raise StoreError(f"format must be 'parquet' or 'csv', got {fmt!r}")
        out = as_path(out_dir, "out_dir")
        runs = self.export_runs(study, include_stale)
        if runs.empty:
            if study is not None and study not in self.studies():
                raise self._missing(study)
            raise StoreError(f"no runs to export in {self.path}"
                             + (f" for study {study!r}" if study is not None else ""))
        if out.exists() and not out.is_dir():
            raise StoreError(f"--out {out} exists and is not a folder")
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise WriteError(f"cannot write {out}: {e.strerror or e}") from e
        studies = self.con.execute(
            "SELECT * FROM studies" + (" WHERE study = ?" if study is not None else "") + " ORDER BY study",
            [study] if study is not None else []).df()
        opts = "(FORMAT parquet)" if fmt == "parquet" else "(FORMAT csv, HEADER true)"
        copies = {}
        for table in RUN_TABLES:
            where = [] if include_stale else [self._current_sql("t")]
            if study is not None:
                where.append(f"t.study = {_sql_str(study)}")
            sel = f"SELECT t.* FROM {table} t" + (" WHERE " + " AND ".join(where) if where else "")
            n = self.con.execute(f"SELECT count(*) FROM ({sel})").fetchone()
            if n and n[0]:
                copies[table] = sel
        frames = {"runs": runs} | ({} if studies.empty else {"studies": studies})
        names = ["runs", *copies, *(["studies"] if "studies" in frames else [])]
        # A table of an earlier export to this folder that this one does not write (traces.parquet
        # of a study with traces) would be taken for this export's: removed with the rename.
        stale = [out / f"{t}.{fmt}" for t in EXPORT_TABLES if t not in names]
        written = [out / f"{t}.{fmt}" for t in names]
        # Every file whole and all together (paths.WholeFiles): a full disk or Ctrl-C leaves the
        # earlier export's files as they were.
        with WholeFiles(stale=stale) as files:
            for path in written:
                with files.temp(path) as tmp:
                    name = path.stem
                    if name in frames:
                        if fmt == "parquet":
                            frames[name].to_parquet(tmp, index=False)
                        else:
                            frames[name].to_csv(tmp, index=False)
                        continue
                    # COPY does not take prepared parameters: the path and study are quoted above.
                    try:
                        self.con.execute(f"COPY ({copies[name]} ORDER BY t.study, t.run_key) TO "
                                         f"{_sql_str(str(tmp))} {opts}")
                    except duckdb.IOException as e:
                        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
                        raise OSError(first.removeprefix("IO Error: ")) from e
        return written


def _typed_columns(df: pd.DataFrame) -> pd.DataFrame:
    """Each column as one type: numbers (and booleans) stay numbers, a column that mixes
    numbers and text (a factor whose levels are 1 and "2bdp") becomes text, as does one of
    integers that do not fit 64 bits."""
    out = {}
    for c in df.columns:
        col = df[c]
        vals = [v for v in col if v is not None and not (isinstance(v, float) and math.isnan(v))]
        if vals and all(isinstance(v, bool) for v in vals):
            out[c] = col.astype("boolean")
        elif vals and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
            num = pd.to_numeric(col)
            # Integers beyond 64 bits (a runner's summary value of 2**70) stay Python objects,
            # which Parquet refused with an OverflowError: written as their exact digits.
            out[c] = num if num.dtype != object else col.map(lambda v: None if v is None else str(v)).astype("string")
        elif vals and all(isinstance(v, str) for v in vals):
            out[c] = col.astype("string")
        elif vals:
            out[c] = col.map(lambda v: None if v is None else (json.dumps(v) if isinstance(
                v, (dict, list)) else str(v))).astype("string")
        else:
            out[c] = pd.Series([None] * len(col), index=col.index, dtype="float64")
    return pd.DataFrame(out, index=df.index)


# -- writing while others read -----------------------------------------------------------------


class StoreWriter:
    """Writes finished runs to a store, opening the file only for the time of each commit, so
    that other processes can open it (read-only) between commits. Runs that cannot be written
    yet because a reader holds the file wait in memory and go with the next commit.

    A commit writes every waiting run in one transaction. Commits are at least ``interval_s``
    apart, and at least :data:`SHARE` times as long as the last one took (capped at
    ``MAX_INTERVAL_S``): opening a DuckDB file costs about 30 ms of CPU and closing it as much
    again, whatever it holds, which in the 72-run study was a quarter of the sweep process's
    CPU, competing with the workers (issue 15)."""

    #: The time between two commits is at least this many times the last commit's.
    SHARE = 20
    #: ... but at most this far apart: a high-throughput sweep, whose commits take long because
    #: they hold many runs, would otherwise keep finished runs in memory (and lose them to a
    #: `kill -9`) for longer and longer.
    MAX_INTERVAL_S = 10.0
    #: ... and sooner once this many runs wait: the process's memory peaks in a commit, by about
    #: 0.2 MB per run written (a run of 20 flows and 82 links: its Arrow tables, then DuckDB's
    #: insert), so a commit of 10 s of quick runs (a cluster's) took hundreds of MB more than one
    #: of 1 s: 1,000 runs of 2 s of simulated time peaked at 458 MB against 255 MB for 200.
    MAX_BATCH = 200

    def __init__(self, path: str | Path, notice: Any = None, interval_s: float = 1.0) -> None:
        self.path = Path(path)
        #: Finished runs not written yet, checked and typed (:func:`run_record`).
        self.pending: list[_Prepared] = []
        self.notice = notice or (lambda msg: None)
        self.written = 0
        self.interval_s = interval_s
        self.last = -math.inf
        self.took = 0.0  # (the last commit's wall time)

    def add(self, study: str, run_key: str, **record: Any) -> None:
        """Queues a finished run; it is committed at once unless the last commit was too recent
        (then with the next :meth:`flush_due`, which the sweep calls at least every second), so
        that quick runs share one opening of the file.

        The run is checked and typed here (:func:`run_record`), as it comes: a sweep's process
        does that work while its workers run, rather than all of it in the commit after the
        last run, when the workers are done and only this process's work is left (issue 15: the
        72-run study ended up to 0.76 s after its last run, now about 0.2 s)."""
        try:
            prepared = run_record(study, run_key, **record)
        except RecordRefused as e:
            # (A runner's table that the store cannot take: the run failed, the sweep goes on.
            # Checked before any write, so nothing of it is in.)
            prepared = run_record(study, run_key, **_refused(record, e))
        self.pending.append(prepared)
        if len(self.pending) >= self.MAX_BATCH:
            self.flush(wait_s=0.0)
        else:
            self.flush_due()

    def due_in(self) -> float:
        """Seconds until the waiting runs may be committed (0: now)."""
        gap = max(self.interval_s, min(self.SHARE * self.took, self.MAX_INTERVAL_S))
        return max(0.0, self.last + gap - time.monotonic())

    def flush_due(self) -> None:
        if self.pending and self.due_in() == 0.0:
            self.flush(wait_s=0.0)

    def flush(self, wait_s: float = 0.0, then: Callable[[Store], Any] | None = None) -> bool:
        """Writes every pending run; returns False if the file stayed locked ``wait_s`` s.
        ``then(store)``, if given, runs on the store opened for the commit, after it (a sweep's
        last commit reads its counts there instead of opening the file once more); it is not
        called when nothing was pending or the file stayed locked."""
        if not self.pending:
            return True
        deadline = time.monotonic() + wait_s
        told = 0.0
        while True:
            try:
                opened = time.monotonic()
                with deferred_signals(), Store(self.path, wait_s=0.2) as st:
                    st._write(self.pending)  # all of them in one transaction (or none)
                    self.written += len(self.pending)
                    self.pending.clear()
                    if then is not None:
                        then(st)
                self.last = time.monotonic()
                self.took = self.last - opened
                return True
            except StoreLocked as e:
                now = time.monotonic()
                if now >= deadline:
                    return False
                if now - told > 10:
                    told = now
                    self.notice(f"{e}; {len(self.pending)} finished run(s) wait to be written")
                time.sleep(0.2)


def _refused(rec: Mapping[str, Any], e: RecordRefused) -> dict[str, Any]:
    """``rec`` as a failed run that says why its results were not stored, without them."""
    kept = {k: v for k, v in rec.items() if k not in ("summary", "flows", "links", "traces", "error")}
    return {**kept, "status": "failed", "error": f"its results cannot be stored: {e}"}


def bench_writer(runs: int = 50, flows: int = 200) -> str:
    """Cost per run of committing through :class:`StoreWriter` (open, commit, close) and on a
    file kept open, as quoted in docs/analysis.md:
    ``python -c "from sattcp.store import bench_writer; print(bench_writer())"``."""
    import tempfile

    fl = pd.DataFrame({"flow": range(flows), "throughput_bps": 1.0})
    with tempfile.TemporaryDirectory() as d:
        w = StoreWriter(Path(d) / "w.duckdb", interval_s=0.0)
        t = time.perf_counter()
        for i in range(runs):
            w.add("st", f"k{i}", factors={}, status="ok", flows=fl)
            w.flush()  # (every run: a commit of its own, whatever the writer's spacing)
        per_open = (time.perf_counter() - t) / runs
        with Store(Path(d) / "p.duckdb") as st:
            t = time.perf_counter()
            for i in range(runs):
                st.record_run("st", f"k{i}", factors={}, status="ok", flows=fl)
            per_commit = (time.perf_counter() - t) / runs
    return (f"per run ({flows} flows): open/commit/close {per_open * 1e3:.0f} ms, "
            f"commit on an open file {per_commit * 1e3:.0f} ms")
