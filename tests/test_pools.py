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


def test_a_reports_figure_workers_end_with_it_when_it_is_killed():
    """A report killed by SIGTERM (no handler: the process just ends) left its figure workers
    running for good, holding its caller's pipes open (a review helper's harness waited ten
    minutes for them). They now end with it, as a sweep's workers do."""
    import signal
    import subprocess
    import sys

    code = (
        "import os, signal, sys\n"
        "from sattcp.figure_render import Renderer\n"
        "r = Renderer(jobs=2)\n"
        "r.start()\n"
        "pids = {f.result() for f in [r._pool.submit(os.getpid) for _ in range(8)]}\n"
        "print(' '.join(map(str, sorted(pids))), flush=True)\n"
        "os.kill(os.getpid(), signal.SIGTERM)\n"
    )
    # stdout only (the workers inherit stderr too): the test reads the pids, then checks them.
    p = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=300)
    assert p.returncode == -signal.SIGTERM, p
    pids = [int(x) for x in p.stdout.split()]
    assert pids

    def alive(pid: int) -> bool:
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] != "Z"
        except FileNotFoundError:
            return False

    deadline = time.monotonic() + 120
    while any(alive(pid) for pid in pids):
        assert time.monotonic() < deadline, f"figure workers {pids} outlived their report"
        time.sleep(0.05)
