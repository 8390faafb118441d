"""Stopping process pools (sattcp.pools): at once, or after their work without waiting for ever."""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

from sattcp.pools import close, terminate


def _stays() -> None:
    """A worker initializer that leaves a thread behind: the worker cannot exit (Python waits for
    its non-daemon threads), as a worker stuck in a system call would not."""
    threading.Thread(target=time.sleep, args=(3600,), daemon=False).start()


def _pid() -> int:
    return os.getpid()


def test_terminate_returns_with_every_worker_reaped():
    # The pool's own thread reaps the killed workers too; terminate() waits for it, so that no
    # killed worker is still listed as alive when it returns (it was, 1 time in 40, before).
    for _ in range(8):
        ex = ProcessPoolExecutor(2, mp_context=get_context("spawn"))
        futures = [ex.submit(_pid) for _ in range(2)]
        futures[0].result()  # a worker is up and idle
        terminate(ex)
        assert not multiprocessing.active_children()


def test_close_waits_for_the_work_then_kills_workers_that_do_not_leave(capfd):
    ex = ProcessPoolExecutor(2, mp_context=get_context("spawn"), initializer=_stays)
    pids = {f.result() for f in [ex.submit(_pid) for _ in range(4)]}
    close(ex, grace=2.0, what="test")
    assert not multiprocessing.active_children()
    err = capfd.readouterr().err
    assert "the test's workers had not left 2 s after their work; killing" in err
    assert all(str(p) in err for p in pids)


def test_close_of_workers_that_leave_says_nothing(capfd):
    ex = ProcessPoolExecutor(2, mp_context=get_context("spawn"))
    assert sorted(f.result() for f in [ex.submit(abs, -i) for i in range(4)]) == [0, 1, 2, 3]
    close(ex, grace=600.0, what="test")
    assert not multiprocessing.active_children()
    assert capfd.readouterr().err == ""
