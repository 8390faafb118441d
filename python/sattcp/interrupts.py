"""Ctrl-C and SIGTERM held back while work that must not be cut in half finishes: a store's
commit (:mod:`sattcp.store`), an emulation's teardown (:mod:`sattcp.emulate`). Kept apart from
both so that neither imports the other's dependencies (DuckDB and pandas for the store)."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def deferred_signals(say: str = "") -> Iterator[None]:
    """SIGINT/SIGTERM wait until the block is complete (then act as usual, once each); ``say``
    is printed on stderr when the first one arrives, so that the wait is not taken for a hang.

    The Python-level handlers are replaced for the time of the block, not the main thread's
    signal mask: a sweep has other threads (its pool's manager, DuckDB's), to which the kernel
    then delivered the signal, and DuckDB, which checks for Python's pending signals while it
    runs a statement, aborted the commit ("Query interrupted"), so that a second Ctrl-C (or a
    SIGTERM arriving during a commit) lost the finished runs it held (a review helper's finding:
    9-13 of 10-14 finished runs lost, or the store reported as damaged). Here DuckDB's check runs
    a handler that only notes the signal. Outside the main thread (where Python runs no signal
    handler) the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []

    def note(signum: int, frame: Any) -> None:
        if say and not caught:
            print(say, file=sys.stderr, flush=True)
        caught.append(signum)

    old = {s: signal.signal(s, note) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in old.items():
            # (None: a handler installed from C, which Python cannot reinstate; the default.)
            signal.signal(s, signal.SIG_DFL if h is None else h)
        # Each once, in the order they came; a handler's exception (Ctrl-C's KeyboardInterrupt)
        # after the others have run.
        raised: BaseException | None = None
        for s in dict.fromkeys(caught):
            try:
                signal.raise_signal(s)
            except BaseException as e:  # noqa: BLE001 - re-raised below
                raised = raised or e
        if raised is not None:
            raise raised
