"""What a sweep's worker process runs: one :class:`RunSpec` through the simulator
(:func:`execute`), and the build that ran it (:func:`build_id`).

Kept apart from :mod:`sattcp.sweep` and :mod:`sattcp.store` so that a worker imports neither
pandas nor DuckDB: the spawned worker imports the module of the function it runs and the
classes it unpickles, and pandas alone cost each worker about 0.8 s of CPU before its first run
(issue 15). With sattcp's own simulator the worker returns the run's result as it is
(:class:`sattcp.api.RunResult`, plain data) and the sweep's process builds the tables it
stores; a custom runner's tables are taken as it returns them.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

Runner = Callable[..., Any]


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
    scenario_text: str = ""
    config: Mapping[str, Any] = field(default_factory=dict)
    config_digest: str = ""
    build: str = ""


def build_id() -> str:
    """``VERSION+DIGEST``: the sattcp version and the first 12 hex digits of the SHA-256 of the
    native module (the simulator) file, found without importing it. Runs are keyed by it, so
    rebuilding or upgrading the simulator makes a sweep run again.
    ``SATTCP_BUILD_ID`` in the environment replaces it (tests simulate an upgrade with it)."""
    forced = os.environ.get("SATTCP_BUILD_ID")
    if forced:
        return forced
    return f"{sattcp_version()}+{_native_digest()}"


@cache
def _native_digest() -> str:
    try:
        spec = importlib.util.find_spec("sattcp._core")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.origin or not Path(spec.origin).is_file():
        return "no-native-module"
    h = hashlib.sha256()
    with open(spec.origin, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:12]


def sattcp_version() -> str:
    from sattcp import __version__

    return __version__


def _default_runner(scenario: str, seed: int | None = None, overrides: Mapping[str, Any] | None = None,
                    progress: bool = False) -> Any:
    from sattcp.api import run  # lazily: the native module is only needed to really run

    return run(scenario, seed=seed, overrides=dict(overrides or {}), progress=progress)


#: How often a worker checks that the sweep that started it is still alive (seconds).
PARENT_WATCH_S = 0.5
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def worker_init(parent_pid: int | None = None, started: Any = None) -> None:
    """Runs first in each local worker process, once it has started: ``started`` (a shared
    integer, the sweep's) is set to 1 once a worker got this far, so that the sweep can tell a
    pool whose workers died while starting from one that lost a worker in a run.

    The parent handles Ctrl-C and SIGTERM (it stops the workers itself), so workers ignore
    both: a signal sent to the whole process group must not kill a worker and make its run look
    like a crash. Workers end with their parent: on Linux the kernel kills them when it dies
    (prctl PR_SET_PDEATHSIG), elsewhere (and as a fallback) a thread notices that the parent is
    gone and exits."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if started is not None:
        started.value = 1
    if parent_pid is None:
        return
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True,
                     name="sattcp-parent-watch").start()


def _watch_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(PARENT_WATCH_S)
    os._exit(1)


def execute(spec: RunSpec, runner: Runner | None = None) -> dict[str, Any]:
    """Run one spec and return a picklable record; never raises for a failing run. With
    sattcp's simulator the record holds the result itself (``result``: its tables are built by
    :func:`outputs` where the record is stored); with a custom runner, the outputs."""
    started = datetime.now(UTC).replace(tzinfo=None)
    t0 = time.perf_counter()
    build = build_id()
    rec: dict[str, Any] = {"run_key": spec.run_key, "build": build, "version": sattcp_version(),
                           "started_at": started}
    try:
        if spec.build and build != spec.build:
            raise RuntimeError(f"this worker runs sattcp build {build}, the sweep was planned "
                               f"with build {spec.build}: install the same sattcp on every worker")
        if runner is None:
            text = spec.scenario_text or spec.scenario
            if spec.scenario_text and "\n" not in text:
                text += "\n"  # api.run reads a one-line string as a path
            result = _default_runner(text, seed=spec.seed, overrides=dict(spec.overrides))
            # Its data without the packet trace (a store keeps no packets; pickled, the trace
            # would become a table of every recorded packet event).
            rec.update(status="ok", error=None, result=type(result)(result.data, result.scenario, result.wall_time_s, result.config))
        else:
            result = runner(spec.scenario, seed=spec.seed, overrides=dict(spec.overrides))
            rec.update(status="ok", error=None, **outputs(result))
    except Exception as e:  # noqa: BLE001 - every failure is recorded, the sweep goes on
        rec.update(status="failed", summary={}, error=failure(e))
    rec["wall_time_s"] = time.perf_counter() - t0
    return rec


def failure(e: BaseException) -> str:
    """A failed run's ``error``: the exception and the last lines of its traceback."""
    tb = traceback.format_exception(e)
    return f"{type(e).__name__}: {e}\n" + "".join(tb[-3:])


def outputs(result: Any, tables: bool = True) -> dict[str, Any]:
    """What a run's result gives the store: summary, flows, links, traces and warnings, each
    taken from the attribute of that name where the result has one (without flows and links
    unless ``tables``)."""
    out = {"summary": dict(getattr(result, "summary", None) or {}),
           "traces": dict(getattr(result, "traces", None) or {}),
           "warnings": list((getattr(result, "data", None) or {}).get("warnings", []))}
    if tables:
        out.update(flows=_frame(getattr(result, "flows", None)), links=_frame(getattr(result, "links", None)))
    return out


def _frame(v: Any) -> Any:
    if v is None:
        return None
    import pandas as pd  # a custom runner's list of rows; sattcp's tables are DataFrames

    return v if isinstance(v, pd.DataFrame) else pd.DataFrame(v)
