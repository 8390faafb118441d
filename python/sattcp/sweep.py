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
Before anything runs, every run is checked: the study file's types, seeds and size, and (with
sattcp's own simulator) each distinct scenario the runs would load, with the simulator's own
validation. Each run has a stable ``run_key``: a hash of its block, factor labels, seed, its
resolved configuration (``sattcp.resolve``: every key with its effective value, defaults
included) and the sattcp build (:func:`sattcp.store.build_id`). A sweep runs only the keys that the store does not hold yet, so
editing the base scenario or rebuilding sattcp runs the study again.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import math
import operator
import os
import signal
import sys
import threading
import time
import tomllib
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from itertools import product
from multiprocessing import get_context
from pathlib import Path
from typing import Any, TextIO

from sattcp.errors import OutputPathError, SattcpError, WriteError
from sattcp.interrupts import deferred_signals
from sattcp.paths import as_path, shown
from sattcp.pools import close, terminate
from sattcp.store import Store, StoreError, StoreWriter
from sattcp.worker import BuildMismatch, Runner, RunSpec, build_id, execute, failure, outputs, worker_init

__all__ = [
    "MAX_RUNS",
    "Block",
    "ClusterError",
    "RunSpec",
    "SimulatorUnavailable",
    "Study",
    "StudyError",
    "SweepSummary",
    "Terminated",
    "WorkersCannotStart",
    "check_cluster",
    "load_study",
    "packaged_study",
    "run_sweep",
]

#: Most runs one study may have (blocks x level combinations x seeds). A sweep of this many
#: runs of the seeds' 100 s scenario takes about a CPU-month; a larger count is almost always a
#: mistake (a replication count with extra zeros), and the list of runs alone would fill memory.
MAX_RUNS = 100_000

#: Summary values that ``sattcp.api.RunResult.summary`` adds to the core's summary.
API_SUMMARY = ("seed", "events", "wall_time_s", "events_per_s")

SEED_MAX = 2**64 - 1
#: The scenario key that each run's seed replaces (``_with_seed``, ``api.run(seed=...)``).
SEED_KEY = "run.seed"
_SEED_RULE = "seeds come from the study's `seed`/`seeds`/`replications`"

class StudyError(SattcpError, ValueError):
    """A study file is invalid; ``problems`` lists ``{path, rule, got}`` as ScenarioError does."""

    def __init__(self, source: str, problems: list[dict[str, Any]]) -> None:
        self.problems = problems
        lines = [problem_line(p) for p in problems]
        n = len(problems)
        super().__init__(f"invalid study {shown(source)} ({n} problem{'s' if n != 1 else ''}, "
                         "nothing was run):\n  " + "\n  ".join(lines))


def problem_line(p: Mapping[str, Any]) -> str:
    """A problem ``{path, rule, got}`` as one line: ``path: rule, got value``."""
    return f"{p['path'] or '(study)'}: {p['rule']}" + (f", got {_show(p['got'])}" if p.get("got") not in (None, "") else "")


def _unknown_key(key: str, known: Iterable[str]) -> str:
    """The rule of an unknown study key: the known keys, and the one or two the user most likely
    meant when one is close, by the rule of the scenario's unknown keys (the core's
    ``scenario::schema::closest``: a few edits, case ignored; none rather than a wrong one).
    Without the native module, or with one older than ``closest`` (a study can still be checked
    and run by another runner), the known keys only."""
    names = sorted(known)
    try:
        from sattcp._core import closest
    except ImportError:
        close: list[str] = []
    else:
        close = closest(key, names)
    meant = f"did you mean {' or '.join(close)}? " if close else ""
    return f"unknown key ({meant}known: {', '.join(names)})"


def _show(v: Any) -> str:
    s = v if isinstance(v, str) else repr(v)
    return s if len(s) <= 120 else s[:117] + "..."


class SimulatorUnavailable(SattcpError, RuntimeError):
    """``sattcp._core`` (the native simulator) cannot be imported, so nothing can run."""


class WorkersCannotStart(SattcpError, RuntimeError):
    """Local worker processes cannot start from this main program (see :func:`_check_spawn`)."""


def _main_script() -> str | None:
    """The file of the main program when it is a script, which a spawned worker begins by
    running again (Python's multiprocessing); None for no file (``python -c``, a notebook) or
    a module (``python -m``), which are not re-run."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    return None if path is None or getattr(main, "__spec__", None) is not None else path


def _check_spawn() -> None:
    """A main program that names a file that does not exist (a script read from standard
    input, ``python - < script.py``: ``<stdin>``) kills every spawned worker at its start
    (:func:`_main_script`), and each run would be recorded as a crash. Said once, here,
    instead."""
    path = _main_script()
    if path is None:
        return
    from multiprocessing import process

    full = path if os.path.isabs(path) or process.ORIGINAL_DIR is None else os.path.join(process.ORIGINAL_DIR, path)
    if not os.path.isfile(full):
        raise WorkersCannotStart(
            f"a sweep's worker processes start by running the main program again, and its file "
            f"{path!r} does not exist (a script read from standard input?): save the script to a "
            "file (the sweep under `if __name__ == \"__main__\":`) and run that, or use `sattcp sweep`")


def _not_started() -> WorkersCannotStart:
    """The workers of a pool died while starting, before any of them could take a run."""
    path = _main_script()
    why = "its workers died while starting, before any run (their errors are above)"
    if path is not None:
        why += (f": a spawned worker starts by running the main program {path!r} again, so a "
                "script that calls a sweep at its top level makes every worker start a sweep of its own; "
                "put the call under `if __name__ == \"__main__\":`")
    return WorkersCannotStart(f"the sweep stopped: {why}")


class Terminated(KeyboardInterrupt):
    """The sweep received SIGTERM (a batch system's time limit, ``kill``): handled as Ctrl-C
    (workers stopped, finished runs kept); the CLI exits with status 143 (128 + 15)."""


#: How long a stopped or finished sweep waits for a store that another process holds (a reader
#: left open) to write its last finished runs (seconds). A KeyboardInterrupt (or
#: :class:`Terminated`) that stopped the sweep then carries ``unsaved``, the count of finished
#: runs that could not be written (and run again on the rerun).
FINAL_WRITE_WAIT_S = 120.0


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
    #: The override keys ``[quick]`` set, in the variant :meth:`quick` makes (to name where a
    #: problem's value comes from; not part of :meth:`definition`).
    quick_keys: tuple[str, ...] = ()
    #: Overrides given for this sweep (``sattcp sweep --set``, :meth:`with_sets`): applied to
    #: every run over the study's and its blocks' overrides; part of :meth:`definition`.
    sets: Mapping[str, Any] = field(default_factory=dict)

    def with_sets(self, sets: Mapping[str, Any]) -> Study:
        """This study with ``sets`` (scenario keys -> values, a table value as its dotted keys)
        applied to every run, over the study's and its blocks' overrides. A factor's key (or a
        key below one) is refused, and so is ``run.seed``: the levels and seeds are the study's,
        which an override would replace in every run without a word. Raises
        :class:`StudyError` naming each ``--set`` refused."""
        flat = _flatten(sets)
        problems = []
        for k, v in flat.items():
            clash = [f for f in self.factors if f == k or f.startswith(k + ".") or k.startswith(f + ".")]
            if clash:
                problems.append({"path": f"--set {k}", "rule": f"is the study's factor {clash[0]} (its levels "
                                 "are the study's: change them in the study file)", "got": v})
            elif k == SEED_KEY:
                problems.append({"path": f"--set {k}", "rule": f"the seeds are the study's ({_SEED_RULE})",
                                 "got": v})
        if problems:
            raise StudyError(self.source, problems)
        return replace(self, sets={**self.sets, **flat})

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
            quick_keys=tuple(self.quick_overrides),
        )

    def size(self) -> int:
        return len(self.blocks) * math.prod(len(v) for v in self.factors.values()) * len(self.seeds)

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
            **({"set": dict(self.sets)} if self.sets else {}),
        }

    def runs(self, core: bool = False) -> list[RunSpec]:
        """Every combination of levels x seed, per block, in a stable order.

        With ``core`` (sweeps with sattcp's own simulator) every distinct scenario the runs
        would load is validated by the simulator (loading only: nothing runs) and the runs are
        keyed by their resolved configuration; the responses are checked against the summary
        the simulator returns. Every problem is raised at once as :class:`StudyError`."""
        if self.size() > MAX_RUNS:
            raise StudyError(self.source, [_too_many(self)])
        from sattcp.api import read_toml_file
        from sattcp.errors import ScenarioError

        build = build_id()
        specs: list[RunSpec] = []
        problems: list[dict[str, Any]] = []
        keys = list(self.factors)
        summary_keys: set[str] | None = None
        base_text: str | None = None  # a readable base scenario, for the responses
        for bi, block in enumerate(self.blocks):
            try:
                text = read_toml_file(block.scenario)
            except ScenarioError as e:
                where = f"blocks[{bi}].scenario" if len(self.blocks) > 1 else "scenario"
                problems.extend({**p, "path": where} for p in e.problems)
                continue
            base_text = text if base_text is None else base_text
            base_digest = hashlib.sha256(text.encode()).hexdigest()[:16]
            base_tree = _canonical_toml(text)
            for levels in product(*self.factors.values()):
                labels = dict(zip(keys, levels, strict=True))
                values = {k: block.values.get(k, {}).get(_label(v), v) for k, v in labels.items()}
                overrides = {**self.overrides, **block.overrides, **self.sets, **values}
                if core:
                    config, found = _core_config(text, overrides)
                    if found:
                        problems.extend(_locate(p, self, bi, labels) for p in found)
                        continue
                    if summary_keys is None:
                        summary_keys = _summary_keys(text, overrides)
                else:
                    config = {"scenario": base_tree, "overrides": dict(overrides)}
                digest = hashlib.sha256(_canon(config).encode()).hexdigest()[:16]
                for seed in self.seeds:
                    ident = {"block": block.name, "factors": labels, "seed": seed,
                             "config": digest, "build": build}
                    key = hashlib.sha256(_canon(ident).encode()).hexdigest()[:16]
                    specs.append(RunSpec(self.name, block.name, key, labels, seed,
                                         str(block.scenario), overrides, base_digest, text,
                                         _with_seed(config, seed), digest, build))
        if core and summary_keys is None and base_text is not None:
            # No run could be loaded (a misspelt factor key is in every one): the responses
            # are checked against a base scenario's own summary all the same.
            summary_keys = _summary_keys(base_text, {})
        if summary_keys is not None:
            known = summary_keys | set(API_SUMMARY)
            for i, r in enumerate(self.responses):
                if r not in known:
                    problems.append({"path": f"responses[{i}]", "rule": "not a summary value of "
                                     f"a run (known: {', '.join(sorted(known))})", "got": r})
        if problems:
            raise StudyError(self.source, _dedupe(problems))
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
    stale: int = 0


def _canon(v: Any) -> str:
    return json.dumps(v, sort_keys=True, separators=(",", ":"), default=str)


def _label(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v)


def _canonical_toml(text: str) -> Any:
    """The scenario's TOML as data (comments, layout and key order do not change a key)."""
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):  # (nested too deeply to read)
        return {"text": text}


def _too_many(study: Study) -> dict[str, Any]:
    shape = " x ".join(str(len(v)) for v in study.factors.values())
    return {"path": "replications" if len(study.seeds) > 1 else "factors",
            "rule": f"the study would have {study.size():,} runs ({len(study.blocks)} block(s) x "
                    f"{shape} levels x {len(study.seeds):,} seeds); at most {MAX_RUNS:,} are "
                    "allowed (sattcp.sweep.MAX_RUNS)", "got": study.size()}


def _core_config(text: str, overrides: Mapping[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The resolved configuration a run would load (every key with its effective value,
    defaults included, as ``sattcp.resolve`` gives it; ``run.seed`` is set per run), checked by
    the simulator and by sattcp's resource guards: (config, problems)."""
    import warnings

    from sattcp import _core
    from sattcp.api import _override_pairs
    from sattcp.errors import ScenarioError

    try:
        pairs = _override_pairs(overrides, raw=False)
        resolve = getattr(_core, "resolve", None)
        if resolve is None:  # an older native module: the scenario as data plus the overrides
            _core.validate(text, pairs)
            return {"scenario": _canonical_toml(text), "overrides": dict(overrides)}, []
        config = json.loads(resolve(text, pairs, None, "json"))
        guard = getattr(importlib.import_module("sattcp.api"), "check_resources", None)
        if guard is not None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # long runs warn when they run
                guard(config, how_to_force=None)  # a study's runs cannot be forced
    except ScenarioError as e:
        return {}, list(e.problems)
    return config, []


def _with_seed(config: Mapping[str, Any], seed: int) -> Mapping[str, Any]:
    """``config`` with ``run.seed`` = ``seed`` (a resolved configuration has a ``run`` table)."""
    run = config.get("run")
    if isinstance(run, Mapping) and "seed" in run:
        return {**config, "run": {**run, "seed": seed}}
    return config


def _summary_keys(text: str, overrides: Mapping[str, Any]) -> set[str] | None:
    """The summary values a run of this scenario returns (the simulation is built, not run)."""
    from sattcp import _core
    from sattcp.api import _override_pairs

    try:
        sim = _core.Simulation(text, _override_pairs(overrides, raw=False), None)
        return set(json.loads(sim.finish())["summary"])
    except Exception:  # noqa: BLE001 - then responses are checked when the runs come back
        return None


def _locate(p: Mapping[str, Any], study: Study, bi: int, labels: Mapping[str, Any]) -> dict[str, Any]:
    """A simulator problem, named by where the study file sets the value at fault."""
    path = str(p.get("path", ""))
    block = study.blocks[bi]
    multi = len(study.blocks) > 1

    def under(k: str) -> bool:
        return path == k or path.startswith(k + ".")

    def key_at(keys: Iterable[str]) -> str | None:
        """The key of ``keys`` the problem is about: at or under it, or a table above it (an
        unknown table, ``bogus`` of an override ``bogus.key``, which was blamed on the base
        scenario); the longer of the key and the path."""
        for k in keys:
            if under(k) or k.startswith(path + "."):
                return max(k, path, key=len)
        return None

    where = f"scenario {block.scenario.name}: {path}"
    for k in study.factors:
        if under(k):
            lab = _label(labels[k])
            where = (f"blocks[{bi}].levels.{k}.{lab}" if lab in block.values.get(k, {})
                     else f"factors.{k}")
            break
    else:
        if (k := key_at(study.sets)) is not None:
            where = f"--set {k}"
        elif (k := key_at(block.overrides)) is not None:
            where = f"blocks[{bi}].overrides.{k}"
        elif (k := key_at(study.quick_keys)) is not None:
            where = f"quick.overrides.{k}"
        elif (k := key_at(study.overrides)) is not None:
            where = f"overrides.{k}"
        elif multi:
            where = f"blocks[{bi}] ({block.name}) " + where
    return {"path": where, "rule": p.get("rule", ""), "got": p.get("got", "")}


def _dedupe(problems: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen, out = set(), []
    for p in problems:
        k = (p["path"], p["rule"], _show(p.get("got")))
        if k not in seen:
            seen.add(k)
            out.append(p)
    return out


# -- loading a study file ----------------------------------------------------------------------

_TOP = {"name", "description", "notes", "scenario", "responses", "replications", "seed", "seeds",
        "overrides", "factors", "blocks", "quick"}


def _flatten(d: Mapping[str, Any], prefix: str = "", twice: list[str] | None = None) -> dict[str, Any]:
    """``{"tcp": {"flavor": x}}`` and ``{"tcp.flavor": x}`` both give ``{"tcp.flavor": x}``.
    A key given both ways (TOML takes ``tcp.flavor = ...`` and ``"tcp.flavor" = ...`` as two
    keys) keeps its last value, and is appended to ``twice`` where given: a caller says so,
    since the first value was silently dropped."""
    out: dict[str, Any] = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        inner = _flatten(v, key + ".", twice) if isinstance(v, Mapping) else {key: v}
        for ik, iv in inner.items():
            if ik in out and twice is not None:
                twice.append(ik)
            out[ik] = iv
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
    """The file ``rel`` names, looked up relative to the study's folder, its parents, then the
    working folder; where none of these is a file, the first that exists (a folder, a device:
    the caller says what it is); None if nothing has that name."""
    p = Path(rel)
    if p.is_absolute():
        return p if p.exists() else None
    there = [base / p for base in [study_dir, *study_dir.parents, Path.cwd()] if (base / p).exists()]
    for q in there:
        if q.is_file():
            return q.resolve()
    return there[0].resolve() if there else None


def _not_utf8(name: str) -> bool:
    """A name taken from a file's name that is not UTF-8 (it holds :func:`os.fsdecode`'s
    surrogates): the store cannot keep it."""
    return shown(name) != name


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


_SCALAR = (str, int, float, bool)


def _listed(items: Sequence[Any], verb: str, most: int = 10) -> str:
    """``1 is repeated``, ``3 and 1 are repeated``, ``1, 2, ... (and 5 more) are not``: the
    culprits a rule names, at most ``most`` of them (the whole value is shown as got)."""
    names = [str(x) for x in items[:most]]
    if len(items) > most:
        names.append(f"{len(items) - most:,} more")
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"{listed} {'is' if len(items) == 1 else 'are'} {verb}"


def _repeated(items: Iterable[Any]) -> str:
    """Which items occur more than once (in the order of first occurrence), for a rule."""
    return _listed([x for x, n in Counter(items).items() if n > 1], "repeated")


def _type_name(v: Any) -> str:
    return {dict: "a table", list: "a list", str: "a string", bool: "a boolean", int: "an integer",
            float: "a number"}.get(type(v), type(v).__name__)


def _scenario_sections() -> set[str]:
    """The tables of a scenario file (the core's schema: run, topology, links, tcp, ...)."""
    from sattcp import _core

    return {k["key"].split(".")[0] for k in json.loads(_core.schema())["keys"]} - {"name", "description"}


def load_study(source: str | Path) -> Study:
    """Read and validate a study file; raises :class:`StudyError` listing every problem."""
    study, problems = _read_study(source)
    if problems:
        raise StudyError(study.source, problems)
    return study


def _read_study(source: str | Path) -> tuple[Study, list[dict[str, Any]]]:
    """The study a file describes and its problems (``{path, rule, got}``): what can be made of
    a study with problems (its valid factors, blocks and values) is there, so that the runs'
    own problems can be reported with the file's (:func:`run_sweep`). A file that cannot be
    read as a study at all raises :class:`StudyError`."""
    from sattcp.api import check_scenario_file, read_toml_file
    from sattcp.errors import ScenarioError

    try:
        path = as_path(source, "study")
    except OutputPathError:  # not a path at all (None, a number): an input, so a StudyError
        raise StudyError(f"{source!r:.60}", [{"path": "", "rule": "must be a path to a study file (a str or a pathlib.Path)",
                                              "got": type(source).__name__}]) from None
    try:
        # The reader of scenario files: a regular file, UTF-8 with or without a byte-order mark.
        text = read_toml_file(path, "study")
    except ScenarioError as e:
        raise StudyError(str(path), e.problems) from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise StudyError(str(path), [{"path": "", "rule": f"not valid TOML ({e})", "got": None}]) from e
    except RecursionError as e:  # tomllib recurses once per nested array or inline table
        raise StudyError(str(path), [{"path": "", "rule": "not valid TOML (arrays or inline tables nested too deeply to "
                                      "read; a study needs a few levels at most)", "got": None}]) from e
    # A scenario file where a study is expected: one problem saying so, not one per section.
    known = _scenario_sections()
    sections = sorted(k for k in raw if k in known)
    if "factors" not in raw and "scenario" not in raw and sections:
        raise StudyError(str(path), [{"path": "", "rule": f"this is a scenario file ({', '.join(f'[{k}]' for k in sections)}), not a "
                                      "study: `sattcp run` runs it, and a study names it as its base `scenario`", "got": None}])
    problems: list[dict[str, Any]] = []

    def bad(p: str, rule: str, got: Any) -> None:
        problems.append({"path": p, "rule": rule, "got": got})

    def no_seed(where: str, keys: Mapping[str, Any], role: str) -> None:
        """Each run's seed is one of the study's seeds (it replaces run.seed): a factor or an
        override on run.seed would change nothing, and its "levels" would be the same runs."""
        if SEED_KEY in keys:
            bad(f"{where}.{SEED_KEY}", f"{SEED_KEY} cannot be {role} ({_SEED_RULE})", keys[SEED_KEY])

    def table(p: str, v: Any) -> dict[str, Any]:
        """``v`` if it is a table, else a problem and an empty table."""
        if v is None:
            return {}
        if not isinstance(v, Mapping):
            bad(p, f"must be a table of dotted scenario keys, not {_type_name(v)}", v)
            return {}
        return dict(v)

    def scalars(p: str, d: Mapping[str, Any]) -> dict[str, Any]:
        out = {}
        for k, v in d.items():
            if isinstance(v, _SCALAR):
                out[k] = v
            else:
                bad(f"{p}.{k}", f"must be a string, number or boolean, not {_type_name(v)}", v)
        return out

    for k in raw:
        if k not in _TOP:
            bad(k, _unknown_key(k, _TOP), raw[k])
    name = raw.get("name", path.stem)
    if not isinstance(name, str) or not name.strip():
        bad("name", "must be a non-empty string", name)
        name = path.stem
    elif "name" not in raw and _not_utf8(name):
        # The store (DuckDB) keeps only UTF-8 text, and a name is what analyze --study takes.
        bad("name", f"the study is named after its file, {shown(path.name)}, whose name is not UTF-8 text: "
            "give the study a name (name = \"...\") or rename the file", None)
    for k in ("description",):
        if k in raw and not isinstance(raw[k], str):
            bad(k, f"must be a string, not {_type_name(raw[k])}", raw[k])
    def flat(p: str, d: Mapping[str, Any]) -> dict[str, Any]:
        """``d`` flattened (:func:`_flatten`); a key given twice is a problem at ``p.KEY``."""
        twice: list[str] = []
        out = _flatten(d, twice=twice)
        for k in dict.fromkeys(twice):
            bad(f"{p}.{k}", "is given twice (as a dotted key and as a quoted one, or as a table): give it once", out[k])
        return out

    factors_raw = table("factors", raw.get("factors"))
    factors = flat("factors", factors_raw)
    if not factors_raw and (raw.get("factors") is None or isinstance(raw["factors"], Mapping)):
        bad("factors", "at least one factor is needed", raw.get("factors"))
    for k, v in list(factors.items()):
        if not isinstance(v, list) or len(v) < 2:
            bad(f"factors.{k}", "must be a list of at least 2 levels", v)
            del factors[k]
        elif not all(isinstance(x, _SCALAR) for x in v):
            bad(f"factors.{k}", "levels must be strings, numbers or booleans", v)
            del factors[k]
        elif len({_label(x) for x in v}) != len(v):
            bad(f"factors.{k}", f"levels must be distinct: {_repeated(_label(x) for x in v)}", v)
    responses = raw.get("responses", ["efficiency", "fairness"])
    if not isinstance(responses, list) or not responses or \
            not all(isinstance(r, str) and r for r in responses):
        bad("responses", "must be a non-empty list of summary value names", responses)
        responses = ["efficiency"]
    elif len(set(responses)) != len(responses):
        bad("responses", f"must be distinct: {_repeated(responses)}", responses)
    seeds: list[int] = [1]
    if "seeds" in raw:
        given = raw["seeds"]
        if not isinstance(given, list) or not given or not all(_is_int(s) for s in given):
            bad("seeds", "must be a non-empty list of integers", given)
        elif not all(0 <= s <= SEED_MAX for s in given):
            out = [s for s in given if not 0 <= s <= SEED_MAX]
            bad("seeds", f"must be integers from 0 to 2^64 - 1: {_listed(out, 'not')}", given)
        elif len(set(given)) != len(given):
            bad("seeds", f"must be distinct: {_repeated(given)} (a repeated seed repeats the same "
                "run)", given)
        else:
            seeds = list(given)
        if "replications" in raw and raw["replications"] != len(given if isinstance(given, list) else []):
            bad("replications", "must equal the number of seeds when both are given", raw["replications"])
        if "seed" in raw:
            bad("seed", "give either seed (with replications) or seeds, not both", raw["seed"])
    else:
        reps, seed = raw.get("replications", 1), raw.get("seed", 1)
        ok = True
        if not _is_int(reps) or reps < 1:
            bad("replications", "must be an integer >= 1", reps)
            ok = False
        elif reps > MAX_RUNS:
            bad("replications", f"at most {MAX_RUNS:,} runs are allowed per study "
                "(sattcp.sweep.MAX_RUNS)", reps)
            ok = False
        if not _is_int(seed) or not 0 <= seed <= SEED_MAX:
            bad("seed", "must be an integer from 0 to 2^64 - 1", seed)
            ok = False
        elif ok and seed + reps - 1 > SEED_MAX:
            bad("replications", "seed + replications - 1 must be at most 2^64 - 1", reps)
            ok = False
        if ok:
            seeds = [seed + i for i in range(reps)]
    def not_factors(p: str, keys: Mapping[str, Any]) -> None:
        """A key is either a factor or an override: a run's factor values are set after its
        overrides, so an override of a factor would be dropped without a word."""
        for k in keys:
            if k in factors:
                bad(f"{p}.{k}", "is also a factor (a key is either a factor or an override)", keys[k])

    overrides = scalars("overrides", flat("overrides", table("overrides", raw.get("overrides"))))
    not_factors("overrides", overrides)
    no_seed("factors", factors, "a factor")
    no_seed("overrides", overrides, "an override")

    study_dir = path.resolve().parent
    blocks_raw = raw.get("blocks")
    if blocks_raw is None:
        blocks_raw = [{"name": name, "scenario": raw.get("scenario")}]
        where = [""]
    elif not isinstance(blocks_raw, list) or not blocks_raw or \
            not all(isinstance(b, Mapping) for b in blocks_raw):
        bad("blocks", "must be an array of tables ([[blocks]] with name and scenario)", blocks_raw)
        blocks_raw, where = [], []
    else:
        if "scenario" in raw:
            bad("scenario", "give either scenario or [[blocks]], not both", raw["scenario"])
        where = [f"blocks[{i}]." for i in range(len(blocks_raw))]
    blocks = []
    named: dict[str, str] = {}  # block name -> where the first block of that name is
    for w, b in zip(where, blocks_raw, strict=True):
        for k in b:
            if k not in ("name", "scenario", "overrides", "levels"):
                bad(f"{w}{k}", _unknown_key(k, ("levels", "name", "overrides", "scenario")), b[k])
        scen = b.get("scenario")
        resolved = None
        if not isinstance(scen, str) or not scen:
            bad(f"{w}scenario", "a base scenario path (a string) is required", scen)
        else:
            resolved = _resolve(scen, study_dir)
            if resolved is None:
                bad(f"{w}scenario", f"file not found (looked from {study_dir} upwards and in "
                    f"{Path.cwd()})", scen)
            else:
                try:  # a folder or a device, as `sattcp run` says
                    check_scenario_file(resolved)
                except ScenarioError as e:
                    bad(f"{w}scenario", f"{e.problems[0]['rule']} ({resolved})", scen)
                    resolved = None
        bname = b.get("name", resolved.stem if resolved else "")
        if not isinstance(bname, str) or not bname:
            bad(f"{w}name", "must be a non-empty string", bname)
            bname = str(bname)
        elif bname in named:
            bad(f"{w}name", f"must be distinct: {bname} is also the name of {named[bname].rstrip('.')}"
                + ("" if "name" in b else " (a block without a name is named after its scenario file)"),
                b.get("name"))
        else:
            named[bname] = w
        values: dict[str, dict[str, Any]] = {}
        for fk, mapping in _factor_maps(table(f"{w}levels", b.get("levels")), factors).items():
            if fk not in factors or not isinstance(mapping, Mapping):
                bad(f"{w}levels.{fk}", "not a factor (or not a table of label = value)", mapping)
                continue
            labels = {_label(x) for x in factors[fk]}
            unknown = [lab for lab in mapping if lab not in labels]
            if unknown:
                bad(f"{w}levels.{fk}", f"labels not among the levels {sorted(labels)}: "
                    f"{', '.join(unknown)}", dict(mapping))
            values[fk] = scalars(f"{w}levels.{fk}", mapping)
        block_over = scalars(f"{w}overrides", flat(f"{w}overrides", table(f"{w}overrides", b.get("overrides"))))
        no_seed(f"{w}overrides", block_over, "an override")
        not_factors(f"{w}overrides", block_over)
        if resolved is not None:
            blocks.append(Block(bname, resolved, block_over, values))
    quick = table("quick", raw.get("quick")) if "quick" in raw else None
    quick_overrides = None
    quick_description = ""
    if quick is not None:
        for k in quick:
            if k not in ("description", "overrides"):
                bad(f"quick.{k}", _unknown_key(k, ("description", "overrides")), quick[k])
        quick_overrides = scalars("quick.overrides",
                                  flat("quick.overrides", table("quick.overrides", quick.get("overrides"))))
        quick_description = str(quick.get("description", ""))
        no_seed("quick.overrides", quick_overrides, "an override")
        not_factors("quick.overrides", quick_overrides)
    notes = raw.get("notes", [])
    if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
        bad("notes", "must be a list of strings", notes)
        notes = []
    study = Study(
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
    if not problems and study.size() > MAX_RUNS:
        problems.append(_too_many(study))
    return study, problems


def packaged_study(name: str) -> Path:
    """Path of a study file shipped with sattcp (``sattcp/studies/NAME.toml``)."""
    p = Path(__file__).resolve().parent / "studies" / f"{name}.toml"
    if not p.exists():
        known = sorted(q.stem for q in p.parent.glob("*.toml"))
        raise StudyError(name, [{"path": "", "rule": f"no packaged study (known: {known})", "got": name}])
    return p


# -- a worker's record, as the store takes it (sattcp.worker runs the run) -----------------------


def _outputs_of(rec: Mapping[str, Any]) -> dict[str, Any]:
    """A worker's record as the store takes it: with sattcp's simulator the worker sent the
    result itself (no pandas in the worker, :mod:`sattcp.worker`), whose tables are built here."""
    if "result" not in rec:
        return dict(rec)
    out = {k: v for k, v in rec.items() if k != "result"}
    try:
        result = rec["result"]
        out.update(outputs(result, tables=False))
        # The tables as rows: the store types them without a DataFrame in between (issue 15).
        out.update(flows=result.rows("flows"), links=result.rows("links"))
    except Exception as e:  # noqa: BLE001 - as a failure in the worker: the run failed, the sweep goes on
        out.update(status="failed", summary={}, error=failure(e))
    return out


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
        #: What the sweep waits for, if not its runs (shown at the end of the line).
        self.waiting = ""

    def line(self) -> str:
        elapsed = time.monotonic() - self.t0
        finished = self.done + self.failed
        eta = "?"
        if finished:
            left = (self.total - finished) * elapsed / finished
            eta = _hms(left)
        return (f"{self.label}: {finished}/{self.total} finished ({self.failed} failed), "
                f"{self.running} running, elapsed {_hms(elapsed)}, ETA {eta}"
                + (f", {self.waiting}" if self.waiting else ""))

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

    def say(self, message: str) -> None:
        """``message`` on a line of its own (a notice during the sweep): on a terminal the status
        line is cleared first and drawn again below it (before, the message was written over the
        start of the status line, whose end stayed on screen after it)."""
        if not (self.enabled and self.tty):
            print(message, file=self.stream)
            return
        self.stream.write("\x1b[2K" + message + "\n")
        self.update(force=True)

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


def _record(writer: StoreWriter, spec: RunSpec, rec: Mapping[str, Any]) -> dict[str, Any]:
    """Queues a finished run for the store; returns the record as stored (its status)."""
    rec = _outputs_of(rec)
    writer.add(
        spec.study, spec.run_key, factors=spec.factors, status=rec["status"], block=spec.block,
        overrides=spec.overrides, seed=spec.seed, scenario=spec.scenario,
        scenario_digest=spec.scenario_digest, config=spec.config or None,
        config_digest=spec.config_digest or None, build=rec.get("build") or spec.build or None,
        version=rec.get("version"), host=rec.get("host"), summary=rec.get("summary"), flows=rec.get("flows"),
        links=rec.get("links"), traces=rec.get("traces"), warnings=rec.get("warnings"),
        error=rec.get("error"), started_at=rec.get("started_at"), wall_time_s=rec.get("wall_time_s"),
    )
    return rec


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM raises :class:`Terminated` (a KeyboardInterrupt) in the main thread; later
    SIGTERMs are ignored while the sweep stops its workers and saves what finished."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise Terminated(f"terminated (signal {signum})")

    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


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

    Every run is checked first (:meth:`Study.runs`); any problem raises :class:`StudyError`
    and nothing runs, as does a ``jobs`` that is not a whole number >= 1 or a ``progress``,
    ``retry_failed`` or ``quick`` that is not True or False (each a problem of its own). Local process pool of ``jobs`` workers (default ``os.cpu_count()``), or,
    with ``cluster`` (a scheduler address such as ``"tcp://10.0.0.1:8786"`` or a
    ``dask.distributed.Client``), a Dask cluster. ``runner(scenario, seed=, overrides=)``
    defaults to ``sattcp.api.run`` and must be picklable (a module-level function). Results are
    written by this process as each run finishes; a failing run is recorded with its error and
    the sweep goes on. Ctrl-C (KeyboardInterrupt) and SIGTERM (:class:`Terminated`) stop the
    workers and keep every finished run; running again resumes.
    """
    problems: list[dict[str, Any]] = []
    if not isinstance(study, Study):
        study, problems = _read_study(study)
    # A flag of another kind would be taken for its truth: retry_failed="no" retried every
    # failed run, quick="false" ran the quick study.
    flags = {"progress": progress, "retry_failed": retry_failed, "quick": quick}
    problems += [{"path": name, "rule": "must be True or False", "got": f"{type(v).__name__} {v!r:.60}"}
                 for name, v in flags.items() if not isinstance(v, bool)]
    if quick is True:
        try:
            study = study.quick()
        except StudyError as e:
            problems.extend(e.problems)
    if jobs is not None and (isinstance(jobs, bool) or not hasattr(jobs, "__index__") or jobs < 1):
        problems.append({"path": "jobs", "rule": "must be a whole number >= 1 (or None: every core)",
                         "got": f"{type(jobs).__name__} {jobs!r:.60}"})
    problems += _runner_problems(runner, cluster)
    if problems:
        # With the runs' own problems, as far as the valid part of the study shows them: one
        # error with every problem, not one round of fixes per stage.
        raise StudyError(study.source, _dedupe(problems + _run_problems(study, runner)))
    jobs = None if jobs is None else operator.index(jobs)
    if runner is None:
        _check_api()  # fail once, here, rather than record every run as failed
    check_cluster(cluster)
    specs = study.runs(core=runner is None)
    t0 = time.monotonic()
    keys = [s.run_key for s in specs]
    # (SIGTERM while the scheduler is being reached, 30 s at most, killed the sweep without a word.)
    with _sigterm_as_interrupt(), contextlib.ExitStack() as stack:
        if isinstance(cluster, str) and _has_work(store_path, study.name, keys, retry_failed):
            # Connected before the store is written: a scheduler that does not answer leaves the
            # store as it was (before, the study was saved in it, without runs, 30 s before the
            # sweep said it could not reach the scheduler).
            cluster = stack.enter_context(_connected(cluster))
        return _sweep(study, specs, t0, store_path, jobs, cluster, runner, progress, retry_failed)


def _has_work(store_path: str | Path, study: str, keys: list[str], retry_failed: bool) -> bool:
    """Whether ``store_path`` lacks some of ``keys`` (read only: nothing is created or written).
    A store that cannot be read here has work: the sweep's own opening says what is wrong."""
    path = Path(store_path)
    if not path.is_file() or path.stat().st_size == 0:
        return True
    try:
        with Store(path, read_only=True) as store:
            return bool(store.missing_runs(study, keys, retry_failed))
    except StoreError:
        return True


def _sweep(study: Study, specs: list[RunSpec], t0: float, store_path: str | Path, jobs: int | None,
           cluster: Any, runner: Runner | None, progress: bool, retry_failed: bool) -> SweepSummary:
    """:func:`run_sweep` once every check has passed (and its scheduler, if any, answered)."""
    keys = [s.run_key for s in specs]
    with Store(store_path) as store:
        store.save_study(study.name, study.definition(), keys)
        todo_keys = set(store.missing_runs(study.name, keys, retry_failed))
        stale = store.stale_runs(study.name)
    todo = [s for s in specs if s.run_key in todo_keys]
    if progress and len(todo) < len(specs):
        # A resumed sweep's progress counts the runs it runs: said once, so that "0/12" of a
        # study of 24 is not taken for a lost half.
        print(f"sweep {study.name}: {len(specs) - len(todo)} of {len(specs)} runs already stored, "
              + (f"{len(todo)} to run" if todo else "nothing to run"), file=sys.stderr)
    prog = Progress(f"sweep {study.name}", len(todo), progress)
    writer = StoreWriter(store_path, notice=lambda m: prog.say(f"sweep: {m}"))
    failed_write: WriteError | None = None
    stopped: KeyboardInterrupt | None = None
    counts: dict[str, int] = {}

    def count(st: Store) -> None:
        ours = set(keys)
        counts.update(ok=len(ours & st.run_keys(study.name, "ok")), failed=len(ours & st.run_keys(study.name, "failed")))

    with _sigterm_as_interrupt():
        try:
            if todo:
                if cluster is not None:
                    _run_dask(todo, writer, cluster, runner, prog, jobs)
                else:
                    _check_spawn()
                    _run_pool(todo, writer, jobs or os.cpu_count() or 1, runner, prog)
        except WriteError as e:
            # A full disk: nothing more could be kept, so the workers were stopped. The runs
            # written so far stay in the store; the rerun runs the others.
            failed_write = e
        except KeyboardInterrupt as e:
            stopped = e
            raise
        finally:
            # Whatever happened, what finished goes to the store (a reader may hold it a while),
            # a second Ctrl-C or a SIGTERM meanwhile acting only once it is written.
            try:
                # (The counts below are read in the same opening of the file, if it is opened.)
                with deferred_signals():
                    written = writer.flush(wait_s=FINAL_WRITE_WAIT_S, then=count)
                if not written:
                    prog.say(f"sweep: {len(writer.pending)} finished run(s) could not be written "
                             f"({store_path} stayed locked); they will run again")
                    if stopped is not None:  # (the CLI said "every finished run is saved")
                        stopped.unsaved = len(writer.pending)  # type: ignore[attr-defined]
            except WriteError as e:
                failed_write = e
                raise _not_all_written(e, writer) from None  # over a Ctrl-C's "all is saved"
            finally:
                prog.close()
    if failed_write is not None:
        raise _not_all_written(failed_write, writer) from None
    if not counts:
        with Store(store_path) as store:
            count(store)
    return SweepSummary(study.name, len(specs), len(specs) - len(todo), counts["ok"], counts["failed"],
                        time.monotonic() - t0, Path(store_path), stale)


def _not_all_written(e: WriteError, writer: StoreWriter) -> WriteError:
    """The store could not be written (``cannot write PATH: No space left on device``): what
    the stopped sweep kept, and how to go on."""
    lost = f", {len(writer.pending)} finished run(s) could not be written" if writer.pending else ""
    return WriteError(f"{e}. The sweep stopped: the {writer.written} run(s) it wrote are kept{lost}; "
                      "once there is room, the same command runs the rest")


def _run_problems(study: Study, runner: Runner | None) -> list[dict[str, Any]]:
    """What :meth:`Study.runs` finds in the runs of a study whose file has problems of its own
    (those problems left out: a factor with bad levels, a block without its scenario): the
    simulator's problems with the scenarios they would load. None without the simulator, or
    when there is nothing (no block) or too much (more than MAX_RUNS runs) to check."""
    if runner is None:
        try:
            _check_api()
        except SimulatorUnavailable:
            return []
    if not study.blocks or study.size() > MAX_RUNS:
        return []
    try:
        study.runs(core=runner is None)
    except StudyError as e:
        return e.problems
    return []


def _runner_problems(runner: Any, cluster: Any, label: str = "runner") -> list[dict[str, Any]]:
    """A runner that is not a function, or that does not pickle for the local pool's workers,
    failed every run (each recorded as failed, so that a rerun with the right runner skipped
    them unless retry_failed): refused before anything runs, as a problem at ``label``. (A Dask
    cluster pickles with cloudpickle, which takes lambdas and local functions.)"""
    if runner is None:
        return []
    if not callable(runner):
        return [{"path": label, "rule": "must be a function runner(scenario, seed=, overrides=) (the CLI's --runner takes MODULE:FUNCTION)",
                 "got": f"{type(runner).__name__} {runner!r:.60}"}]
    if cluster is None:
        import pickle

        try:
            pickle.dumps(runner)
        except Exception as e:  # noqa: BLE001 - pickle raises several kinds
            return [{"path": label, "rule": f"must pickle for the sweep's worker processes: a module-level function ({type(e).__name__}: {e})",
                     "got": f"{runner!r:.60}"}]
    return []


def check_runner(runner: Any, cluster: Any, label: str) -> None:
    """:func:`run_sweep`'s check of its runner, as a ValueError naming ``label`` (the CLI's
    ``--runner MODULE:FUNCTION``), for a caller that must refuse it before it creates anything."""
    for p in _runner_problems(runner, cluster, label):
        raise ValueError(problem_line(p))


def check_cluster(cluster: Any, label: str = "cluster") -> None:
    """A scheduler address (a string) must have the form Dask connects to; else ValueError
    naming ``label`` (the CLI passes ``--cluster``), before anything is created. Whether the
    scheduler answers is known only when the sweep connects. None and a
    ``dask.distributed.Client`` pass as they are."""
    if cluster is None:
        return
    if not isinstance(cluster, str):
        # (Dask's own TypeError came after the store was created.)
        if type(cluster).__name__ != "Client" or not type(cluster).__module__.startswith("distributed"):
            raise ValueError(f"{label}: must be a scheduler address such as tcp://10.0.0.1:8786 or a "
                             f"dask.distributed.Client, got {type(cluster).__name__} {cluster!r:.60}")
        return
    try:
        from distributed.comm.addressing import get_address_host_port, parse_address
    except ImportError:  # pragma: no cover - depends on the environment
        raise ValueError(f"{label} needs dask.distributed: pip install 'dask[distributed]'") from None
    try:
        # An empty address would make Client start a cluster of its own on this machine.
        if not cluster.strip():
            raise ValueError("empty")
        scheme, _ = parse_address(cluster)
        if scheme != "inproc":  # in-process schedulers have no host and port
            get_address_host_port(cluster)
    except ValueError as e:
        raise ValueError(f"{label} {cluster!r}: not a scheduler address ({e}); expected "
                         "e.g. tcp://10.0.0.1:8786") from None


def _tally(prog: Progress, rec: Mapping[str, Any]) -> None:
    if rec["status"] == "ok":
        prog.done += 1
    else:
        prog.failed += 1


def _run_pool(todo: list[RunSpec], writer: StoreWriter, jobs: int, runner: Runner | None,
              prog: Progress) -> None:
    """Run ``todo`` on process pools. A worker that dies (a crash in native code, the OOM
    killer...) breaks its pool and every run in flight with it; those runs are then run again
    one at a time, so that only the run that really kills its worker is recorded as failed."""
    queue = list(todo)
    suspects: list[RunSpec] = []
    while queue or suspects:
        if suspects:
            spec = suspects.pop(0)
            died, _ = _pool_pass([spec], 1, writer, runner, prog)
        else:
            died, queue = _pool_pass(queue, jobs, writer, runner, prog)
            if len(died) > 1:
                suspects.extend(died)
                continue
        for spec in died:
            rec = {"status": "failed", "error": "the worker process died during this run "
                   "(a crash or the OOM killer); it was alone in its pool"}
            _tally(prog, _record(writer, spec, rec))


def _pool_pass(queue: list[RunSpec], jobs: int, writer: StoreWriter, runner: Runner | None,
               prog: Progress) -> tuple[list[RunSpec], list[RunSpec]]:
    """Run ``queue`` (in order) on ``jobs`` workers until done or the pool breaks. Returns (runs
    submitted and not finished when the pool broke, runs not submitted).

    Up to ``2 x jobs`` runs are submitted at once: a worker that finishes a run starts the next
    one queued at once, instead of idling while this process records the finished run (a
    store commit takes up to a quarter of a second): 0.1-0.2 s of idle workers per commit in
    the 72-run study (issue 15). A run queued when the pool breaks is run again alone, as the
    runs in flight are."""
    pending = list(reversed(queue))  # pop() from the end keeps the order
    ctx = get_context("spawn")
    # Set to 1 by each worker that gets past its start (worker_init). Without a lock: a lock
    # taken by a worker and read here could hang this process if a worker died holding it, and
    # only "none started" matters.
    started = ctx.Value("i", 0, lock=False)
    ex = ProcessPoolExecutor(max_workers=min(jobs, len(pending)), mp_context=ctx,
                             initializer=worker_init, initargs=(os.getpid(), started))
    inflight: dict[Future[dict[str, Any]], RunSpec] = {}
    died: list[RunSpec] = []
    broken = False
    mismatch: BuildMismatch | None = None
    try:
        while pending or inflight:
            while pending and len(inflight) < 2 * jobs and not died and not broken and not mismatch:
                spec = pending.pop()
                try:
                    inflight[ex.submit(execute, spec, runner)] = spec
                except BrokenProcessPool:  # broke before we saw the dead run's future
                    pending.append(spec)
                    broken = True
            prog.running = min(len(inflight), jobs)
            prog.update()
            finished, _ = wait(inflight, timeout=1.0, return_when=FIRST_COMPLETED)
            for fut in finished:
                spec = inflight.pop(fut)
                try:
                    rec = fut.result()
                except BrokenProcessPool:
                    died.append(spec)
                    continue
                except BuildMismatch as e:  # the worker's, not the run's: nothing is recorded
                    mismatch = mismatch or e
                    continue
                except Exception as e:  # noqa: BLE001 - e.g. the runner does not pickle
                    rec = {"status": "failed", "error": f"{type(e).__name__}: {e}"}
                _tally(prog, _record(writer, spec, rec))
                prog.running = min(len(inflight), jobs)  # (the last line said "1 running" at 72/72)
                prog.update()
            writer.flush_due()  # runs queued by a recent commit, or while a reader held the file
            if ((died or broken) and not inflight) or mismatch:
                break
        if died or broken or mismatch:
            # Stop the pool's other workers now: their runs are lost with the pool (each is run
            # again), and they ignore the SIGTERM the broken pool sends them, so its shutdown
            # would wait for them to take its stop signals from a queue that may be full. (A
            # sweep whose worker died once hung in CI; where, is not known.)
            terminate(ex)
        else:
            close(ex, what="sweep")
    except BaseException:
        terminate(ex)
        raise
    if mismatch is not None:
        raise _build_changed(mismatch)
    if (died or broken) and started.value == 0:
        # Not a run's crash: no worker ever started (each would be recorded as one, a pool each).
        raise _not_started()
    died.extend(inflight.values())
    return died, list(reversed(pending))


def _build_changed(e: BuildMismatch) -> BuildMismatch:
    """A local worker of another build than the sweep's (the native module rebuilt, or sattcp
    reinstalled, while the sweep ran: a worker started since loads the new one), in the
    sweep's words. As on a cluster, the sweep stops and records no run as failed for it
    (before, a local pool recorded each run of such a worker as failed)."""
    stopped = BuildMismatch(
        f"the sweep stopped: a worker process runs sattcp build {e.worker_build or '?'}, the sweep was "
        f"planned with build {e.planned or '?'} (was the simulator rebuilt or sattcp reinstalled while "
        "the sweep ran?). No run was recorded as failed for it and every finished run is kept; the same "
        "command runs the rest, with the build installed now (a new build gives the runs new keys, so "
        "it runs the study again and keeps the runs stored so far as stale)")
    stopped.worker_build, stopped.planned = e.worker_build, e.planned
    return stopped


class ClusterError(SattcpError, RuntimeError):
    """The Dask cluster failed the sweep, not a run: its scheduler was lost, or it could not
    take or run a run at all (a scheduler or worker without sattcp or the runner's module). No
    run is recorded as failed for it; the sweep stops, keeping every finished run, and the same
    command runs the rest once the cluster is right (exit status 1)."""


#: How often a cluster sweep asks the scheduler how many worker threads it has (seconds): the
#: runs in flight follow the workers that come and go (dask-jobqueue's start late).
CLUSTER_POLL_S = 1.0
#: How long a cluster sweep waits for a run to finish before it commits and shows progress anyway.
CLUSTER_WAIT_S = 1.0
#: How long a cluster sweep waits for a finished run's result to come: a worker lost holding it
#: makes Dask run the run again, which the sweep then waits for with the others, committing and
#: showing progress meanwhile (a result slower to come than this is waited for in full the
#: next time).
CLUSTER_GATHER_S = 10.0


def _cluster_failed(e: BaseException, run_key: str | None = None) -> ClusterError:
    said = " ".join(str(e).split())
    first = said if len(said) <= 300 else said[:297] + "..."
    at = f" at run {run_key}" if run_key else ""
    return ClusterError(
        f"the Dask cluster stopped the sweep{at} ({type(e).__name__}: {first}). No run was "
        "recorded as failed for it and every finished run is kept; once the scheduler and its "
        "workers run (each with this sattcp build installed and the --runner's module importable, "
        "the scheduler included: its log says what it could not load), the same command runs the rest")


class _LostResults:
    """A logging filter that keeps Dask's "Couldn't gather N keys, rescheduling (...)" off stderr
    (the client's warning, and the error of a scheduler in this process) and notes that it came:
    a worker was lost holding a finished run's result, which Dask runs again. Nothing else is
    filtered."""

    def __init__(self) -> None:
        self.seen = False

    def filter(self, record: Any) -> bool:
        if str(record.msg).startswith("Couldn't gather"):
            self.seen = True
            return False
        return True


#: The loggers that say "Couldn't gather" (distributed/client.py, distributed/scheduler.py).
_GATHER_LOGGERS = ("distributed.client", "distributed.scheduler")


@contextlib.contextmanager
def _lost_results() -> Iterator[_LostResults]:
    """A :class:`_LostResults` filter on Dask's gather loggers for the block."""
    import logging

    lost = _LostResults()
    logs = [logging.getLogger(name) for name in _GATHER_LOGGERS]
    for log in logs:
        log.addFilter(lost)
    try:
        yield lost
    finally:
        for log in logs:
            log.removeFilter(lost)


@contextlib.contextmanager
def _quiet_dask() -> Iterator[None]:
    """Dask's own log records (a client that stops reconnecting to a lost scheduler logs its
    tracebacks) kept off stderr while the sweep, which says what happened, closes its client."""
    import logging

    logs = [logging.getLogger(name) for name in ["distributed", *logging.root.manager.loggerDict]
            if name == "distributed" or name.startswith("distributed.")]
    levels = [log.level for log in logs]
    for log in logs:
        log.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for log, level in zip(logs, levels, strict=True):
            log.setLevel(level)


def _connect(address: str) -> Any:
    """A ``dask.distributed.Client`` of the scheduler at ``address``, or :class:`ClusterError`
    naming the address when it does not answer (within Dask's
    ``distributed.comm.timeouts.connect``, 30 s by default)."""
    try:
        from dask.distributed import Client
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise RuntimeError("--cluster needs dask.distributed: pip install 'dask[distributed]'") from e
    try:
        return Client(address)
    except OSError as e:  # (the address was checked: the scheduler does not answer)
        said = " ".join(str(e).split()) or type(e).__name__
        raise ClusterError(f"cannot reach the Dask scheduler at {address} ({said}): is `dask scheduler` "
                           "running there, and reachable from this machine? Nothing ran and the results "
                           "store was not touched") from None


@contextlib.contextmanager
def _connected(address: str) -> Iterator[Any]:
    """A client of the scheduler at ``address`` (:func:`_connect`) for the block, closed after
    it: without Dask's log records after a :class:`ClusterError` (a client that stops
    reconnecting to a lost scheduler logs its tracebacks; the sweep has said what happened)."""
    client = _connect(address)
    try:
        yield client
    except ClusterError:
        with _quiet_dask():
            client.close()
        raise
    finally:
        if client.status != "closed":
            client.close()


def _run_dask(todo: list[RunSpec], writer: StoreWriter, cluster: Any, runner: Runner | None,
              prog: Progress, jobs: int | None) -> None:
    """Run ``todo`` on a Dask cluster: at most ``jobs`` runs in flight, or twice the cluster's
    worker threads as they are now (asked again every :data:`CLUSTER_POLL_S`), so that a worker
    that finishes a run has its next one at once.

    ``execute`` records a failing run itself, so an exception from a future is the cluster's:
    ``KilledWorker`` (Dask ran the run on ``distributed.scheduler.allowed-failures`` + 1 workers
    that each died during it: the run kills its worker) is recorded as the run's failure; any
    other (the scheduler lost, a task it could not deserialize) stops the sweep with
    :class:`ClusterError` and records nothing for that run, so that the rerun runs it. A worker
    lost once is Dask's to handle: it runs the worker's runs again elsewhere."""
    try:
        from dask.distributed import Client, KilledWorker, as_completed
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise RuntimeError("--cluster needs dask.distributed: pip install 'dask[distributed]'") from e
    own = not isinstance(cluster, Client)
    client = _connect(cluster) if own else cluster
    try:
        pending = list(reversed(todo))
        by_key: dict[Any, RunSpec] = {}
        futures: dict[Any, Any] = {}
        ac = as_completed()
        threads, working, asked = 1, 0, -math.inf
        slow: set[Any] = set()  # keys whose result took longer than CLUSTER_GATHER_S to come
        told: set[Any] = set()  # keys of runs whose worker was lost holding their result
        # Task keys of this sweep's own: a key the scheduler still holds (an earlier sweep's
        # failed task that something keeps referenced, or another client's sweep with another
        # runner) would give its result instead of running the run.
        token = os.urandom(4).hex()

        def submit() -> None:
            spec = pending.pop()
            fut = client.submit(execute, spec, runner, pure=False, key=f"sattcp-run-{spec.run_key}-{token}")
            by_key[fut.key] = spec
            futures[fut.key] = fut
            ac.add(fut)

        while pending or by_key:
            if time.monotonic() - asked >= CLUSTER_POLL_S:
                try:
                    working = sum(client.nthreads().values())
                except Exception as e:  # noqa: BLE001 - the scheduler lost, whatever its error
                    raise _cluster_failed(e) from None
                threads = max(1, working)
                # (Before, a cluster without workers yet showed "2 running".)
                prog.waiting = "" if working else "waiting for the cluster's workers"
                asked = time.monotonic()
            limit = jobs or 2 * threads
            try:
                while pending and len(by_key) < limit:
                    submit()
            except Exception as e:  # noqa: BLE001 - ClosedClientError and the like
                raise _cluster_failed(e) from None
            prog.running = min(len(by_key), jobs or threads, working)
            prog.update()
            # Not a blocking iteration: commits and progress go on while long runs run.
            deadline = time.monotonic() + CLUSTER_WAIT_S
            while not ac.has_ready() and time.monotonic() < deadline:
                time.sleep(0.02)
            for fut in ac.next_batch(block=False):
                spec = by_key[fut.key]
                rec: dict[str, Any] | None = None
                with _lost_results() as lost:
                    try:
                        rec = fut.result(timeout=None if fut.key in slow else CLUSTER_GATHER_S)
                    except TimeoutError:
                        if not lost.seen:  # a result slow to come: waited for in full next time
                            slow.add(fut.key)
                    except KilledWorker as e:
                        rec = {"status": "failed", "error": f"KilledWorker: {e} (each worker that "
                               "took this run died during it: a crash or the OOM killer)"}
                    except Exception as e:  # noqa: BLE001 - the cluster's failure, not the run's
                        del by_key[fut.key]
                        futures.pop(fut.key, None)
                        fut.release()
                        raise _cluster_failed(e, spec.run_key) from None
                if lost.seen and fut.key not in told:
                    # Dask's own words ("Couldn't gather 1 keys, rescheduling ...", once per try)
                    # were kept off stderr: one line, once per run.
                    told.add(fut.key)
                    prog.say(f"sweep: a Dask worker was lost holding the result of run {spec.run_key}; "
                             "Dask runs it again")
                if rec is None:  # its rerun goes on: waited for with the others, not here
                    ac.add(fut)
                    continue
                del by_key[fut.key]
                futures.pop(fut.key, None)
                fut.release()
                _tally(prog, _record(writer, spec, rec))
                # (The last line said "24/24 finished (0 failed), 1 running", as the local
                # pool's did before.)
                prog.running = min(len(by_key), jobs or threads, working)
            writer.flush_due()
    except ClusterError:
        if own:
            with _quiet_dask():
                client.close()
        raise
    finally:
        # Runs in flight when the sweep stops (Ctrl-C, a cluster's failure) are cancelled, also
        # on a client passed in, which outlives the sweep.
        if futures and client.status == "running":
            with contextlib.suppress(Exception), _quiet_dask():
                client.cancel(list(futures.values()))
        if own and client.status != "closed":
            client.close()


def missing(study: Study, store_path: str | Path, retry_failed: bool = False,
            runner: Runner | None = None) -> list[RunSpec]:
    """The runs of ``study`` that a sweep into ``store_path`` with ``runner`` would run now."""
    specs = study.runs(core=runner is None)
    if not Path(store_path).exists():
        return specs
    with Store(store_path, read_only=True) as store:
        keys = set(store.missing_runs(study.name, [s.run_key for s in specs], retry_failed))
    return [s for s in specs if s.run_key in keys]
