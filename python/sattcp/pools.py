"""Process pools: stopping one's workers at once (the sweep's and the report's figure workers)."""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor


def terminate(ex: ProcessPoolExecutor) -> None:
    """Stops every worker of ``ex`` now (SIGKILL: a sweep's workers ignore SIGINT and SIGTERM)
    and waits for them to be gone; runs not started are dropped."""
    procs = list((getattr(ex, "_processes", None) or {}).values())
    for p in procs:
        if p.is_alive():
            p.kill()
    ex.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        p.join(timeout=30)
