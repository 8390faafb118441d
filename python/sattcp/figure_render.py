"""Figures drawn into their files' bytes (PNG, SVG, PDF), here or in worker processes.

A report's figures take most of its time (about 1.4 s each for the three formats on a slow
core, the 72-run study's report has seven): :class:`Renderer` draws them in worker processes
while the report goes on building the next ones (issue 15). This module imports matplotlib
only, so that a worker starts in about half a second; the settings every figure is drawn with
are here, for this process and the workers alike.
"""

from __future__ import annotations

import io
import os
import pickle
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from typing import Any

import matplotlib

from sattcp.pools import close, terminate

matplotlib.use("Agg")
# Text stays text in SVG (searchable, smaller); the same in every process that draws.
matplotlib.rcParams["svg.fonttype"] = "none"
# SVG element ids are hashes salted with a random UUID unless a salt is set: fixed, so that the
# same figure gives the same file.
matplotlib.rcParams["svg.hashsalt"] = "sattcp"

FORMATS = ("png", "svg", "pdf")
DPI = 110

#: Most worker processes one report uses.
MAX_JOBS = 4


def render(fig: Any, formats: Sequence[str] = FORMATS) -> dict[str, bytes]:
    """The bytes of ``fig`` in each format, PNG always among them (reports embed it)."""
    out = {}
    for fmt in dict.fromkeys([*formats, "png"]):
        # No date, so that the same results give the same files (SVG's key is Date, PDF's
        # CreationDate; a PDF had the time it was drawn until 2026-11-29).
        meta = {"Date": None} if fmt == "svg" else {"CreationDate": None} if fmt == "pdf" else {}
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, dpi=DPI, bbox_inches="tight", metadata=meta)
        out[fmt] = buf.getvalue()
    return out


def _warm() -> None:
    """A worker's first task: what drawing imports (the backends of the three formats), so
    that it is done while the report's process is still busy with its analysis."""
    import matplotlib.backends.backend_agg
    import matplotlib.backends.backend_pdf
    import matplotlib.backends.backend_svg
    import matplotlib.figure  # noqa: F401


def _render_pickled(data: bytes, formats: Sequence[str]) -> dict[str, bytes]:
    return render(pickle.loads(data), formats)  # noqa: S301 - our own figure, from our own process


def _worker_init(parent_pid: int) -> None:
    """The report's process handles Ctrl-C and SIGTERM (and stops the pool): a worker must not
    print a traceback of its own for them; and it ends with that process, as a sweep's workers
    do (`worker.worker_init`: a report killed by SIGTERM left its two workers running for good,
    holding its caller's pipes open)."""
    from sattcp.worker import worker_init

    worker_init(parent_pid)


def spawn_is_safe() -> bool:
    """Whether a spawned worker starts without running the caller's program again. A spawned
    process imports the main program when it is a file, so a script that builds a report
    without ``if __name__ == "__main__":`` would run again in every worker (a sweep documents
    that it needs the guard; a report never did). Safe: sattcp's own command (its console
    script or ``python -m sattcp.cli``) and a main program without a file (``python -c``, an
    interactive session, a notebook)."""
    main = sys.modules.get("__main__")
    if main is None or getattr(main, "__file__", None) is None:
        return True
    spec = getattr(main, "__spec__", None)
    if spec is not None and spec.name.partition(".")[0] == "sattcp":
        return True
    return getattr(getattr(main, "entry", None), "__module__", None) == "sattcp.cli"


def default_jobs() -> int:
    """Worker processes for a report: one per CPU this process may use, at most MAX_JOBS; 0
    (draw in this process) with one CPU, or where spawning could run the caller's program
    again (:func:`spawn_is_safe`; pass ``jobs`` to :class:`Renderer` to choose)."""
    if not spawn_is_safe():
        return 0
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return 0 if cpus < 2 else min(cpus, MAX_JOBS)


class Renderer:
    """Draws figures while the caller goes on. :meth:`submit` takes a finished figure (the
    caller must not change it afterwards) and returns a function that waits for its bytes.

    With ``jobs`` worker processes (default :func:`default_jobs`), started by :meth:`start` or
    on the first figure; with 0, each figure is drawn at once, here. A figure goes to a worker pickled
    (matplotlib figures pickle; the bytes drawn from the copy are the original's). If the
    pool breaks (a worker killed: the OOM killer, a crash), its workers are stopped and that
    figure and every later one are drawn here instead, which is said once on stderr."""

    def __init__(self, jobs: int | None = None) -> None:
        self.jobs = default_jobs() if jobs is None else jobs
        self._pool: ProcessPoolExecutor | None = None

    def start(self) -> None:
        """Starts the workers now (each importing what drawing needs) instead of at the first
        figure, so that their start-up runs beside the caller's work before it (issue 15: a
        report's analysis left the second core idle). Does nothing without workers, or where no
        processes are to be had (figures are then drawn here, as :meth:`submit` says)."""
        self._workers()

    def _workers(self) -> ProcessPoolExecutor | None:
        """The pool, started with its warm-up if it is not yet; None without workers or where
        no processes are to be had (a sandbox without semaphores)."""
        if self.jobs > 0 and self._pool is None:
            try:
                self._pool = ProcessPoolExecutor(self.jobs, mp_context=get_context("spawn"), initializer=_worker_init, initargs=(os.getpid(),))
                for _ in range(self.jobs):
                    self._pool.submit(_warm)
            except OSError:
                self.close(wait=False)
        return self._pool

    def submit(self, fig: Any, formats: Sequence[str] = FORMATS) -> Callable[[], dict[str, bytes]]:
        if self.jobs > 0:
            try:
                data = pickle.dumps(fig)  # here, not in the pool's feeder thread, while the caller draws on
                pool = self._workers()  # (started at the first figure, unless started before)
                future: Future[dict[str, bytes]] | None = pool.submit(_render_pickled, data, tuple(formats)) if pool is not None else None
            except BrokenProcessPool:
                # A worker died since the last figure: no more workers (below), drawn here.
                self._broken(pool)
                future = None
            except (pickle.PicklingError, TypeError, AttributeError, OSError):
                # A figure that does not pickle (an artist of the caller's), or no processes to
                # be had: drawn here.
                future = None
            if future is not None:

                def result() -> dict[str, bytes]:
                    try:
                        return future.result()
                    except BrokenProcessPool:
                        # Drawn here once the broken pool is stopped (not while its threads
                        # still wind down beside the drawing).
                        self._broken(pool)
                        return _render_pickled(data, formats)

                return result
        out = render(fig, formats)  # drawn here, at once
        return lambda: out

    def _broken(self, pool: ProcessPoolExecutor | None) -> None:
        """``pool`` broke (a worker died): it is stopped, and this renderer draws every later
        figure here (a worker that died once, of memory most likely, would die again); said
        once on stderr."""
        self.jobs = 0
        if pool is not None and pool is self._pool:
            self._pool = None
            print("sattcp: a figure worker process died (out of memory?); the remaining figures "
                  "are drawn in this process", file=sys.stderr)
            terminate(pool)

    def close(self, wait: bool = True) -> None:
        """Stops the workers: after the figures being drawn (``wait``), or at once (an error
        or Ctrl-C: they are killed, so that the caller's error is not held up by figures
        nobody will see); figures not started are dropped."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if wait:
            close(pool, what="report's figure")
        else:
            terminate(pool)

    def __enter__(self) -> Renderer:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self.close(wait=exc_type is None)
