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
import re
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

from sattcp.errors import SattcpError

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


def host_id() -> str:
    """The machine a run's wall time was measured on, in one line: host name, processor, its
    last-level cache and the CPUs this process may use, e.g. ``vm: AMD EPYC (family 23 model 1),
    L3 8 MiB, 2 CPUs``. Stored with every run (``runs.host``) and printed by the benchmarks
    (issue 15): the same kind of cloud machine came as processors whose figures differ 1.6-2.5x,
    so a time means little without it. ``SATTCP_HOST_ID`` in the environment replaces it (a
    cluster's own name for a node). Linux reads ``/proc/cpuinfo`` and sysfs; elsewhere the
    ``platform`` module's processor name."""
    return os.environ.get("SATTCP_HOST_ID") or _this_machine()


@cache
def _this_machine() -> str:
    cpu = _cpu_name()
    if cpu is None:
        import platform

        cpu = platform.processor() or platform.machine() or "unknown processor"
    parts = [cpu]
    if (cache_size := _last_level_cache()) is not None:
        parts.append(cache_size)
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    parts.append(f"{cpus} CPU{'s' if cpus != 1 else ''}")
    try:
        node = os.uname().nodename
    except AttributeError:  # not POSIX
        import platform

        node = platform.node()
    return f"{node or 'unknown host'}: {', '.join(parts)}"


def _cpu_name() -> str | None:
    """``model name (family F model M)`` of the first processor in ``/proc/cpuinfo``, or None.
    (The family and model tell apart processors that share a marketing name, as this project's
    two kinds of "AMD EPYC" cloud machine do.)"""
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return None
    first = text.split("\n\n", 1)[0]
    fields = {k.strip(): v.strip() for k, _, v in (ln.partition(":") for ln in first.splitlines()) if v}
    name = fields.get("model name") or fields.get("Processor") or fields.get("cpu model")
    if not name:
        return None
    name = " ".join(name.split())
    if "cpu family" in fields and "model" in fields:
        name += f" (family {fields['cpu family']} model {fields['model']})"
    return name


def _last_level_cache() -> str | None:
    """``L3 8 MiB``: the highest-level data or unified cache of CPU 0 (sysfs), or None."""
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    best: tuple[int, str] | None = None
    with contextlib.suppress(OSError):
        for index in base.glob("index*"):
            with contextlib.suppress(OSError, ValueError):
                if (index / "type").read_text().strip() == "Instruction":
                    continue
                level = int((index / "level").read_text())
                size = (index / "size").read_text().strip()
                if best is None or level > best[0]:
                    best = (level, size)
    if best is None:
        return None
    level, size = best
    m = re.fullmatch(r"(\d+)([KMG]?)", size)
    if m is None:
        return f"L{level} {size}"
    kib = int(m.group(1)) * {"": 1 / 1024, "K": 1, "M": 1024, "G": 1 << 20}[m.group(2)]
    shown = f"{kib / 1024:g} MiB" if kib >= 1024 else f"{kib:g} KiB"
    return f"L{level} {shown}"


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


class BuildMismatch(SattcpError, RuntimeError):
    """This worker's sattcp build (:func:`build_id`) is not the one the sweep planned its runs
    with (their keys hold it): the worker's installation is at fault, not the run (a cluster's
    worker with another sattcp installed; a local worker started after the native module was
    rebuilt). ``worker_build`` and ``planned`` are the two builds. The sweep stops on it, local
    or on a cluster, and records no run as failed for it."""

    worker_build: str = ""
    planned: str = ""


def execute(spec: RunSpec, runner: Runner | None = None) -> dict[str, Any]:
    """Run one spec and return a picklable record; never raises for a failing run, only
    :class:`BuildMismatch` when this worker is not the sweep's build. With
    sattcp's simulator the record holds the result itself (``result``: its tables are built by
    :func:`outputs` where the record is stored); with a custom runner, the outputs."""
    started = datetime.now(UTC).replace(tzinfo=None)
    t0 = time.perf_counter()
    build = build_id()
    rec: dict[str, Any] = {"run_key": spec.run_key, "build": build, "version": sattcp_version(),
                           "host": host_id(), "started_at": started}
    if spec.build and build != spec.build:
        # Not the run's failure: raised, so that the sweep stops instead of recording every run
        # this worker takes as failed.
        e = BuildMismatch(f"the worker on {host_id()} runs sattcp build {build}, the sweep was "
                          f"planned with build {spec.build}: install the same sattcp on every worker")
        e.worker_build, e.planned = build, spec.build  # (kept by pickle: an exception's __dict__)
        raise e
    try:
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
