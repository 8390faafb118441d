"""Process pools: stopping one's workers, at once or after their work, without waiting forever
(the sweep's and the report's figure workers)."""

from __future__ import annotations

import sys
import threading
from concurrent.futures import ProcessPoolExecutor
from multiprocessing.process import BaseProcess

#: How long :func:`close` lets a pool's workers leave by themselves before it kills them (seconds).
CLOSE_GRACE_S = 60.0


def terminate(ex: ProcessPoolExecutor) -> None:
    """Stops every worker of ``ex`` now (SIGKILL: a sweep's workers ignore SIGINT and SIGTERM)
    and waits for them to be gone; runs not started are dropped."""
    procs, manager = _parts(ex)
    _kill(procs)
    ex.shutdown(wait=False, cancel_futures=True)
    _reap(procs, manager)


def close(ex: ProcessPoolExecutor, grace: float = CLOSE_GRACE_S, what: str = "pool") -> None:
    """Shuts ``ex`` down once its work is done, as ``ex.shutdown(wait=True)`` does, but waits at
    most ``grace`` seconds for its workers to leave: then it kills them and says so on stderr
    (naming ``what``). A worker that never leaves (stuck in a system call, or ignoring the
    pool's SIGTERM after the pool broke) must not hold up the caller for ever."""
    procs, manager = _parts(ex)
    ex.shutdown(wait=False, cancel_futures=True)
    if manager is not None:
        manager.join(timeout=grace)
        if manager.is_alive():
            alive = [str(p.pid) for p in procs if p.is_alive()]
            print(f"sattcp: the {what}'s workers had not left {grace:g} s after their work; killing "
                  f"{len(alive)} of them (pids {', '.join(alive) or 'none'})", file=sys.stderr)
            _kill(procs)
    _reap(procs, manager)


def _parts(ex: ProcessPoolExecutor) -> tuple[list[BaseProcess], threading.Thread | None]:
    """The worker processes of ``ex`` and its own thread (the one that feeds and reaps them), taken
    before ``shutdown`` forgets both."""
    return list((getattr(ex, "_processes", None) or {}).values()), getattr(ex, "_executor_manager_thread", None)


def _kill(procs: list[BaseProcess]) -> None:
    for p in procs:
        if p.is_alive():
            p.kill()


def _reap(procs: list[BaseProcess], manager: threading.Thread | None) -> None:
    """Waits (at most 30 s each) for the pool's thread, then for its workers, to be gone."""
    # The pool's own thread reaps the workers too (a broken or closing pool joins each): wait for
    # it first. Two threads reaping one process race, and the loser (its waitpid fails) reports
    # the dead worker alive: multiprocessing.active_children() listed a killed worker after
    # terminate() returned, in 1 of 40 tries under load.
    if manager is not None:
        manager.join(timeout=30)
    for p in procs:
        p.join(timeout=30)
