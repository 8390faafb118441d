"""Studies (TOML files naming a base scenario, factors, replications and responses) and sweeps
that run every combination on a local process pool or a Dask cluster, into a results store.

A study file::

    name = "buffers"                       # the study's name in the store
    description = "..."                    # optional
    notes = ["..."]                        # optional: deviations, tuning (shown in reports)
    scenario = "base.toml"                 # relative to this file (or use [[blocks]])
    responses = ["efficiency", "fairness"] # summary values to analyse
    replications = 2                       # seeds seed, seed+1, ... (or seeds = [7, 11])
    seed = 1

    [overrides]                            # fixed for every run (dotted scenario keys)
    "run.duration" = "100s"

    [factors]                              # dotted scenario key -> levels
    "tcp.flavor" = ["reno", "sack"]
    "switch.buffer" = ["0.5bdp", "1bdp"]

    [[blocks]]                             # optional: one full factorial per block, analysed
    name = "GEO"                           # separately (e.g. one per link type)
    scenario = "scenarios/kota-geo.toml"
    overrides = { }
    [blocks.levels."switch.buffer"]        # optional: a level's label -> the value passed
    "0.5bdp" = "29190cells"

    [quick]                                # optional: what --quick changes
    description = "20 pairs, 20 s"
    overrides = { "run.duration" = "20s" }

Paths are resolved relative to the study file, then its parent folders, then the working folder.
Each run has a stable ``run_key``: a hash of its block, factor labels, seed and the overrides
passed to the simulator. A sweep runs only the keys that the store does not hold yet.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import signal
import sys
import time
import tomllib
import traceback
from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from itertools import product
from multiprocessing import get_context
from pathlib import Path
from typing import Any, TextIO

import pandas as pd

from sattcp.store import Store

__all__ = [
    "Block",
    "RunSpec",
    "SimulatorUnavailable",
    "Study",
    "StudyError",
    "SweepSummary",
    "load_study",
    "packaged_study",
    "run_sweep",
]

Runner = Callable[..., Any]


class StudyError(ValueError):
    """A study file is invalid; ``problems`` lists ``{path, rule, got}`` as ScenarioError does."""

    def __init__(self, source: str, problems: list[dict[str, Any]]) -> None:
        self.problems = problems
        lines = [f"{p['path']}: {p['rule']}, got {p['got']!r}" for p in problems]
        super().__init__(f"invalid study {source}:\n  " + "\n  ".join(lines))


class SimulatorUnavailable(RuntimeError):
    """``sattcp._core`` (the native simulator) cannot be imported, so nothing can run."""


def _check_api() -> None:
    try:
        # sattcp.api imports the native module only when a run starts: check the module itself.
        importlib.import_module("sattcp._core")
    except ImportError as e:
        raise SimulatorUnavailable(
            f"the simulator is not available ({e}); build it first (make build / "
            "maturin develop) or pass another runner"
        ) from e


@dataclass(frozen=True)
class Block:
    """One full factorial: a base scenario, fixed overrides and per-level values."""

    name: str
    scenario: Path
    overrides: Mapping[str, Any] = field(default_factory=dict)
    values: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class RunSpec:
    """One run of a study: what to give ``api.run`` and where to store it."""

    study: str
    block: str
    run_key: str
    factors: Mapping[str, Any]
    seed: int
    scenario: str
    overrides: Mapping[str, Any]
    scenario_digest: str


@dataclass(frozen=True)
class Study:
    name: str
    factors: Mapping[str, tuple[Any, ...]]
    blocks: tuple[Block, ...]
    seeds: tuple[int, ...]
    responses: tuple[str, ...]
    overrides: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""
    quick_overrides: Mapping[str, Any] | None = None
    quick_description: str = ""
    source: str = "<study>"
    notes: tuple[str, ...] = ()

    def quick(self) -> Study:
        """The reduced variant (``[quick]``), stored under ``NAME-quick``."""
        if self.quick_overrides is None:
            raise StudyError(self.source, [{"path": "quick", "rule": "no [quick] section", "got": None}])
        return replace(
            self,
            name=f"{self.name}-quick",
            overrides={**self.overrides, **self.quick_overrides},
            description=f"{self.description} (quick: {self.quick_description})".strip(),
            quick_overrides=None,
        )

    def definition(self) -> dict[str, Any]:
        """A JSON-able description, saved in the store's ``studies`` table."""
        return {
            "name": self.name,
            "description": self.description,
            "factors": {k: list(v) for k, v in self.factors.items()},
            "blocks": [
                {"name": b.name, "scenario": str(b.scenario), "overrides": dict(b.overrides),
                 "values": {k: dict(v) for k, v in b.values.items()}}
                for b in self.blocks
            ],
            "seeds": list(self.seeds),
            "responses": list(self.responses),
            "overrides": dict(self.overrides),
            "notes": list(self.notes),
            "source": self.source,
        }

    def runs(self) -> list[RunSpec]:
        """Every combination of levels x seed, per block, in a stable order."""
        specs = []
        keys = list(self.factors)
        for block in self.blocks:
            base_digest = _file_digest(block.scenario)
            for levels in product(*self.factors.values()):
                labels = dict(zip(keys, levels, strict=False))
                values = {k: block.values.get(k, {}).get(_label(v), v) for k, v in labels.items()}
                overrides = {**self.overrides, **block.overrides, **values}
                for seed in self.seeds:
                    ident = {"block": block.name, "factors": labels, "seed": seed,
                             "overrides": overrides}
                    key = hashlib.sha256(_canon(ident).encode()).hexdigest()[:16]
                    digest = hashlib.sha256((base_digest + _canon(overrides)).encode()).hexdigest()
                    specs.append(RunSpec(self.name, block.name, key, labels, seed,
                                         str(block.scenario), overrides, digest[:16]))
        return specs


@dataclass
class SweepSummary:
    study: str
    total: int
    skipped: int
    ok: int
    failed: int
    wall_time_s: float
    store: Path


def _canon(v: Any) -> str:
    return json.dumps(v, sort_keys=True, separators=(",", ":"), default=str)


def _label(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v)


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- loading a study file ----------------------------------------------------------------------

_TOP = {"name", "description", "notes", "scenario", "responses", "replications", "seed", "seeds",
        "overrides", "factors", "blocks", "quick"}


def _flatten(d: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"tcp": {"flavor": x}}`` and ``{"tcp.flavor": x}`` both give ``{"tcp.flavor": x}``."""
    out: dict[str, Any] = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


def _factor_maps(levels: Mapping[str, Any], factors: Mapping[str, Any],
                 prefix: str = "") -> dict[str, Any]:
    """Per-factor label maps, whether the factor key was quoted or written as nested tables."""
    out: dict[str, Any] = {}
    for k, v in levels.items():
        key = f"{prefix}{k}"
        if key in factors or not isinstance(v, Mapping):
            out[key] = v
        else:
            out.update(_factor_maps(v, factors, key + "."))
    return out


def _resolve(rel: str, study_dir: Path) -> Path | None:
    p = Path(rel)
    if p.is_absolute():
        return p if p.exists() else None
    for base in [study_dir, *study_dir.parents, Path.cwd()]:
        if (base / p).exists():
            return (base / p).resolve()
    return None


def load_study(source: str | Path) -> Study:
    """Read and validate a study file; raises :class:`StudyError` listing every problem."""
    path = Path(source)
    if not path.exists():
        raise StudyError(str(source), [{"path": "", "rule": "file not found", "got": str(source)}])
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise StudyError(str(path), [{"path": "", "rule": f"not valid TOML ({e})", "got": None}]) from e
    problems: list[dict[str, Any]] = []

    def bad(p: str, rule: str, got: Any) -> None:
        problems.append({"path": p, "rule": rule, "got": got})

    for k in raw:
        if k not in _TOP:
            bad(k, f"unknown key (known: {', '.join(sorted(_TOP))})", raw[k])
    name = raw.get("name", path.stem)
    if not isinstance(name, str) or not name:
        bad("name", "must be a non-empty string", name)
    factors = _flatten(raw.get("factors", {}))
    if not factors:
        bad("factors", "at least one factor is needed", raw.get("factors"))
    for k, v in factors.items():
        if not isinstance(v, list) or len(v) < 2:
            bad(f"factors.{k}", "must be a list of at least 2 levels", v)
        elif len({_label(x) for x in v}) != len(v):
            bad(f"factors.{k}", "levels must be distinct", v)
    responses = raw.get("responses", ["efficiency", "fairness"])
    if not isinstance(responses, list) or not all(isinstance(r, str) for r in responses):
        bad("responses", "must be a list of names", responses)
    if "seeds" in raw:
        seeds = raw["seeds"]
        if not isinstance(seeds, list) or not seeds or not all(isinstance(s, int) for s in seeds):
            bad("seeds", "must be a non-empty list of integers", seeds)
            seeds = [1]
        if "replications" in raw and raw["replications"] != len(seeds):
            bad("replications", "must equal the number of seeds when both are given", raw["replications"])
    else:
        reps, seed = raw.get("replications", 1), raw.get("seed", 1)
        if not isinstance(reps, int) or reps < 1:
            bad("replications", "must be an integer >= 1", reps)
            reps = 1
        if not isinstance(seed, int):
            bad("seed", "must be an integer", seed)
            seed = 1
        seeds = [seed + i for i in range(reps)]
    overrides = _flatten(raw.get("overrides", {}))
    clash = set(overrides) & set(factors)
    if clash:
        bad("overrides", "keys are also factors", sorted(clash))

    study_dir = path.resolve().parent
    blocks_raw = raw.get("blocks")
    if blocks_raw is None:
        blocks_raw = [{"name": name, "scenario": raw.get("scenario")}]
        where = [""]
    else:
        if "scenario" in raw:
            bad("scenario", "give either scenario or [[blocks]], not both", raw["scenario"])
        where = [f"blocks[{i}]." for i in range(len(blocks_raw))]
    blocks = []
    for w, b in zip(where, blocks_raw, strict=False):
        for k in b:
            if k not in ("name", "scenario", "overrides", "levels"):
                bad(f"{w}{k}", "unknown key (known: levels, name, overrides, scenario)", b[k])
        scen = b.get("scenario")
        resolved = None
        if not isinstance(scen, str):
            bad(f"{w}scenario", "a base scenario path is required", scen)
        else:
            resolved = _resolve(scen, study_dir)
            if resolved is None:
                bad(f"{w}scenario", f"file not found (looked from {study_dir} upwards and in "
                    f"{Path.cwd()})", scen)
        values: dict[str, dict[str, Any]] = {}
        for fk, mapping in _factor_maps(b.get("levels") or {}, factors).items():
            fk_flat = fk
            if fk_flat not in factors or not isinstance(mapping, Mapping):
                bad(f"{w}levels.{fk}", "not a factor", fk)
                continue
            labels = {_label(x) for x in factors[fk_flat]}
            unknown = [lab for lab in mapping if lab not in labels]
            if unknown:
                bad(f"{w}levels.{fk}", f"labels not among the levels {sorted(labels)}", unknown)
            values[fk_flat] = dict(mapping)
        if resolved is not None:
            blocks.append(Block(str(b.get("name", resolved.stem)), resolved,
                                _flatten(b.get("overrides") or {}), values))
    names = [b.name for b in blocks]
    if len(set(names)) != len(names):
        bad("blocks", "block names must be distinct", names)
    quick = raw.get("quick")
    quick_overrides = None
    quick_description = ""
    if quick is not None:
        for k in quick:
            if k not in ("description", "overrides"):
                bad(f"quick.{k}", "unknown key (known: description, overrides)", quick[k])
        quick_overrides = _flatten(quick.get("overrides", {}))
        quick_description = str(quick.get("description", ""))
    notes = raw.get("notes", [])
    if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
        bad("notes", "must be a list of strings", notes)
    if problems:
        raise StudyError(str(path), problems)
    return Study(
        name=name,
        factors={k: tuple(v) for k, v in factors.items()},
        blocks=tuple(blocks),
        seeds=tuple(seeds),
        responses=tuple(responses),
        overrides=overrides,
        description=str(raw.get("description", "")),
        quick_overrides=quick_overrides,
        quick_description=quick_description,
        source=str(path),
        notes=tuple(notes),
    )


def packaged_study(name: str) -> Path:
    """Path of a study file shipped with sattcp (``sattcp/studies/NAME.toml``)."""
    p = Path(__file__).resolve().parent / "studies" / f"{name}.toml"
    if not p.exists():
        known = sorted(q.stem for q in p.parent.glob("*.toml"))
        raise StudyError(name, [{"path": "", "rule": f"no packaged study (known: {known})", "got": name}])
    return p


# -- executing one run (in a worker) -----------------------------------------------------------


def _default_runner(scenario: str, seed: int | None = None, overrides: Mapping[str, Any] | None = None,
                    progress: bool = False) -> Any:
    from sattcp.api import run  # lazily: the native module is only needed to really run

    return run(scenario, seed=seed, overrides=dict(overrides or {}), progress=progress)


def _worker_init() -> None:
    # The parent handles Ctrl-C; workers must not die half-way through writing a result.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def execute(spec: RunSpec, runner: Runner | None = None) -> dict[str, Any]:
    """Run one spec and return a picklable record; never raises for a failing run."""
    runner = runner or _default_runner
    started = datetime.now(UTC).replace(tzinfo=None)
    t0 = time.perf_counter()
    try:
        result = runner(spec.scenario, seed=spec.seed, overrides=dict(spec.overrides))
        summary = dict(getattr(result, "summary", None) or {})
        flows = getattr(result, "flows", None)
        if flows is not None and not isinstance(flows, pd.DataFrame):
            flows = pd.DataFrame(flows)
        status, error = "ok", None
    except Exception as e:  # noqa: BLE001 - every failure is recorded, the sweep goes on
        summary, flows, status = {}, None, "failed"
        tb = traceback.format_exception(e)
        error = f"{type(e).__name__}: {e}\n" + "".join(tb[-3:])
    return {"run_key": spec.run_key, "status": status, "summary": summary, "flows": flows,
            "error": error, "started_at": started, "wall_time_s": time.perf_counter() - t0}


# -- progress ----------------------------------------------------------------------------------


class Progress:
    """One status line on stderr: done, running, failed and ETA (rewritten in place on a tty)."""

    def __init__(self, label: str, total: int, enabled: bool = True, stream: TextIO | None = None):
        self.label, self.total, self.enabled = label, total, enabled
        self.stream = stream or sys.stderr
        self.tty = getattr(self.stream, "isatty", lambda: False)()
        self.t0 = time.monotonic()
        self.last = 0.0
        self.done = self.failed = self.running = 0

    def line(self) -> str:
        elapsed = time.monotonic() - self.t0
        finished = self.done + self.failed
        eta = "?"
        if finished:
            left = (self.total - finished) * elapsed / finished
            eta = _hms(left)
        return (f"{self.label}: {finished}/{self.total} finished ({self.failed} failed), "
                f"{self.running} running, elapsed {_hms(elapsed)}, ETA {eta}")

    def update(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self.last < (0.2 if self.tty else 10.0):
            return
        self.last = now
        end = "\r" if self.tty else "\n"
        self.stream.write(("\x1b[2K" if self.tty else "") + self.line() + end)
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.update(force=True)
            if self.tty:
                self.stream.write("\n")
                self.stream.flush()


def _hms(s: float) -> str:
    s = round(s)
    return f"{s // 3600}h{s % 3600 // 60:02d}m{s % 60:02d}s" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


# -- the sweep ---------------------------------------------------------------------------------


def _record(store: Store, spec: RunSpec, rec: Mapping[str, Any]) -> None:
    store.record_run(
        spec.study, spec.run_key, factors=spec.factors, status=rec["status"], block=spec.block,
        overrides=spec.overrides, seed=spec.seed, scenario=spec.scenario,
        scenario_digest=spec.scenario_digest, summary=rec.get("summary"), flows=rec.get("flows"),
        error=rec.get("error"), started_at=rec.get("started_at"), wall_time_s=rec.get("wall_time_s"),
    )


def run_sweep(
    study: Study | str | Path,
    store_path: str | Path,
    jobs: int | None = None,
    cluster: Any = None,
    runner: Runner | None = None,
    progress: bool = True,
    retry_failed: bool = False,
    quick: bool = False,
) -> SweepSummary:
    """Run every run of ``study`` that ``store_path`` does not hold yet.

    Local process pool of ``jobs`` workers (default ``os.cpu_count()``), or, with ``cluster``
    (a scheduler address such as ``"tcp://10.0.0.1:8786"`` or a ``dask.distributed.Client``), a
    Dask cluster. ``runner(scenario, seed=, overrides=)`` defaults to ``sattcp.api.run`` and must
    be picklable (a module-level function). Results are written by this process as each run
    finishes; a failing run is recorded with its error and the sweep goes on. Ctrl-C stops the
    workers and keeps every finished run; running again resumes.
    """
    if not isinstance(study, Study):
        study = load_study(study)
    if quick:
        study = study.quick()
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    if runner is None:
        _check_api()  # fail once, here, rather than record every run as failed
    specs = study.runs()
    t0 = time.monotonic()
    with Store(store_path) as store:
        store.save_study(study.name, study.definition())
        todo_keys = set(store.missing_runs(study.name, [s.run_key for s in specs], retry_failed))
        todo = [s for s in specs if s.run_key in todo_keys]
        prog = Progress(f"sweep {study.name}", len(todo), progress)
        if todo:
            if cluster is not None:
                _run_dask(todo, store, cluster, runner, prog, jobs)
            else:
                _run_pool(todo, store, jobs or os.cpu_count() or 1, runner, prog)
        prog.close()
        keys = {s.run_key for s in specs}
        ok = len(keys & store.run_keys(study.name, "ok"))
        failed = len(keys & store.run_keys(study.name, "failed"))
    return SweepSummary(study.name, len(specs), len(specs) - len(todo), ok, failed,
                        time.monotonic() - t0, Path(store_path))


def _tally(prog: Progress, rec: Mapping[str, Any]) -> None:
    if rec["status"] == "ok":
        prog.done += 1
    else:
        prog.failed += 1


def _run_pool(todo: list[RunSpec], store: Store, jobs: int, runner: Runner | None,
              prog: Progress) -> None:
    """Run ``todo`` on process pools. A worker that dies (a crash in native code, the OOM
    killer...) breaks its pool and every run in flight with it; those runs are then run again
    one at a time, so that only the run that really kills its worker is recorded as failed."""
    queue = list(todo)
    suspects: list[RunSpec] = []
    while queue or suspects:
        if suspects:
            spec = suspects.pop(0)
            died, _ = _pool_pass([spec], 1, store, runner, prog)
        else:
            died, queue = _pool_pass(queue, jobs, store, runner, prog)
            if len(died) > 1:
                suspects.extend(died)
                continue
        for spec in died:
            rec = {"status": "failed", "error": "the worker process died during this run "
                   "(a crash or the OOM killer); it was alone in its pool"}
            _record(store, spec, rec)
            _tally(prog, rec)


def _pool_pass(queue: list[RunSpec], jobs: int, store: Store, runner: Runner | None,
               prog: Progress) -> tuple[list[RunSpec], list[RunSpec]]:
    """Run ``queue`` (in order) with at most ``jobs`` in flight until done or the pool breaks.
    Returns (runs in flight when the pool broke, runs not started)."""
    pending = list(reversed(queue))  # pop() from the end keeps the order
    ex = ProcessPoolExecutor(max_workers=min(jobs, len(pending)), mp_context=get_context("spawn"),
                             initializer=_worker_init)
    inflight: dict[Future[dict[str, Any]], RunSpec] = {}
    died: list[RunSpec] = []
    broken = False
    try:
        while pending or inflight:
            while pending and len(inflight) < jobs and not died and not broken:
                spec = pending.pop()
                try:
                    inflight[ex.submit(execute, spec, runner)] = spec
                except BrokenProcessPool:  # broke before we saw the dead run's future
                    pending.append(spec)
                    broken = True
            prog.running = len(inflight)
            prog.update()
            finished, _ = wait(inflight, timeout=1.0, return_when=FIRST_COMPLETED)
            for fut in finished:
                spec = inflight.pop(fut)
                try:
                    rec = fut.result()
                except BrokenProcessPool:
                    died.append(spec)
                    continue
                except Exception as e:  # noqa: BLE001 - e.g. the runner does not pickle
                    rec = {"status": "failed", "error": f"{type(e).__name__}: {e}"}
                _record(store, spec, rec)
                _tally(prog, rec)
                prog.update()
            if (died or broken) and not inflight:
                break
    except BaseException:
        _terminate(ex)
        raise
    finally:
        ex.shutdown(wait=True, cancel_futures=True)
    died.extend(inflight.values())
    return died, list(reversed(pending))


def _terminate(ex: ProcessPoolExecutor) -> None:
    procs = list((getattr(ex, "_processes", None) or {}).values())
    ex.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.terminate()
    for p in procs:
        p.join(timeout=5)


def _run_dask(todo: list[RunSpec], store: Store, cluster: Any, runner: Runner | None,
              prog: Progress, jobs: int | None) -> None:
    try:
        from dask.distributed import Client, as_completed
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise RuntimeError("--cluster needs dask.distributed: pip install 'dask[distributed]'") from e
    own = not isinstance(cluster, Client)
    client = Client(cluster) if own else cluster
    try:
        limit = jobs or max(1, sum(client.nthreads().values())) * 2
        pending = list(reversed(todo))
        by_key: dict[Any, RunSpec] = {}
        ac = as_completed()

        def submit() -> None:
            spec = pending.pop()
            fut = client.submit(execute, spec, runner, pure=False, key=f"sattcp-run-{spec.run_key}")
            by_key[fut.key] = spec
            ac.add(fut)

        while pending and len(by_key) < limit:
            submit()
        prog.running = len(by_key)
        prog.update()
        for fut in ac:
            spec = by_key.pop(fut.key)
            try:
                rec = fut.result()
            except Exception as e:  # noqa: BLE001 - a lost worker (KilledWorker) and the like
                rec = {"status": "failed", "error": f"{type(e).__name__}: {e}"}
            fut.release()
            _record(store, spec, rec)
            _tally(prog, rec)
            if pending:
                submit()
            prog.running = len(by_key)
            prog.update()
    finally:
        if own:
            client.close()


def missing(study: Study, store_path: str | Path, retry_failed: bool = False) -> list[RunSpec]:
    """The runs of ``study`` that a sweep into ``store_path`` would run now."""
    specs = study.runs()
    if not Path(store_path).exists():
        return specs
    with Store(store_path, read_only=True) as store:
        try:
            keys = set(store.missing_runs(study.name, [s.run_key for s in specs], retry_failed))
        except Exception:  # noqa: BLE001 - an empty or foreign file: everything is missing
            return specs
    return [s for s in specs if s.run_key in keys]
