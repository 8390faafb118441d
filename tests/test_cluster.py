"""Sweeps on a Dask cluster (``run_sweep(cluster=...)``, ``sattcp sweep --cluster``): what the
cluster's own failures do to the store, runs in flight as workers come, commits while runs run.
An in-process cluster (``processes=False``), so that the test's runners see its state."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from sattcp.store import Store
from sattcp.sweep import ClusterError, load_study, run_sweep
from test_sweep import SIMPLE, fake_runner, marker_name, wait_for, write_study

distributed = pytest.importorskip("dask.distributed", reason="needs dask.distributed (the `cluster` extra)")
dask = pytest.importorskip("dask", reason="needs dask (the `cluster` extra)")


def _cluster(workers: int = 1, threads: int = 1) -> distributed.LocalCluster:
    return distributed.LocalCluster(n_workers=workers, threads_per_worker=threads, processes=False,
                                    dashboard_address=":0")


def _stored(store) -> int:
    if not store.exists():
        return 0
    with Store(store, read_only=True) as st:
        return len(st.run_keys("simple"))


def _count_commits(monkeypatch) -> list[int]:
    """The runs each commit of the sweep writes, as it writes them (this process cannot open
    the store beside the sweep's own connection: DuckDB refuses a second configuration)."""
    written: list[int] = []
    write = Store._write

    def counted(self, runs):
        write(self, runs)
        written.append(len(runs))

    monkeypatch.setattr(Store, "_write", counted)
    return written


def _unloadable() -> None:
    raise ModuleNotFoundError("No module named 'only_on_the_client'")


class UnloadableRunner:
    """A runner the scheduler cannot unpickle, as one whose module only the sweep's machine has."""

    def __call__(self, scenario, seed=None, overrides=None, progress=False):  # pragma: no cover
        return fake_runner(scenario, seed=seed, overrides=overrides)

    def __reduce__(self):
        return (_unloadable, ())


def _address_nobody_answers() -> str:
    """A scheduler address on this machine where nothing listens (a port just freed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{s.getsockname()[1]}"


def test_a_scheduler_that_does_not_answer_is_named_and_the_store_is_left_as_it_was(tmp_path, capsys):
    """Before: the study was saved in the store (a new store created for it) with no runs, before
    the sweep found, 30 s later, that the scheduler did not answer."""
    from sattcp.cli_study import main

    study = write_study(tmp_path, SIMPLE)
    store = tmp_path / "r.duckdb"
    address = _address_nobody_answers()
    argv = ["sweep", str(study), "--store", str(store), "--cluster", address,
            "--runner", "test_sweep:fake_runner", "--no-progress"]
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert f"sattcp sweep: error: cannot reach the Dask scheduler at {address} (" in err, err
        assert "Nothing ran and the results store was not touched" in err and "Traceback" not in err
        assert not store.exists()
        # A store with another study: as it was.
        run_sweep(study, store, jobs=2, runner=fake_runner, progress=False, quick=True)
        with pytest.raises(ClusterError, match=f"cannot reach the Dask scheduler at {address}"):
            run_sweep(study, store, cluster=address, runner=fake_runner, progress=False)
        with Store(store, read_only=True) as st:
            assert st.studies() == ["simple-quick"] and len(st.run_keys("simple-quick")) == 24
        # A study the store holds whole needs no scheduler: nothing to run, nothing to say.
        s = run_sweep(study, store, cluster=address, runner=fake_runner, progress=False, quick=True)
        # `reproduce` leaves no empty --out folder behind (it did), and keeps one that existed.
        capsys.readouterr()
        out = tmp_path / "out" / "kota"
        base = ["reproduce", "kota-www", "--quick", "--cluster", address, "--runner", "test_sweep:fake_runner",
                "--no-progress"]
        assert main([*base, "--out", str(out)]) == 1
        assert "cannot reach the Dask scheduler" in capsys.readouterr().err and not out.exists()
        out.mkdir(parents=True)
        assert main([*base, "--out", str(out)]) == 1
        assert out.is_dir() and not any(out.iterdir())
    assert (s.skipped, s.ok, s.failed) == (24, 24, 0)


def test_sigterm_while_the_scheduler_is_reached_is_said_and_leaves_no_store(tmp_path):
    """A batch system's SIGTERM while the sweep waits for its scheduler (up to 30 s). Before: the
    sweep died of it (status -15) without a word. Here the "scheduler" takes the connection and
    never answers, so the sweep waits in Dask's handshake."""
    import os
    import signal
    import subprocess
    import sys

    from test_sweep import PYTHON_DIR, TESTS

    study = write_study(tmp_path, SIMPLE)
    store = tmp_path / "r.duckdb"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), str(PYTHON_DIR)]),
           "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "600s"}
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        silent.settimeout(300)
        address = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
        proc = subprocess.Popen([sys.executable, "-m", "sattcp.cli_study", "sweep", str(study), "--store", str(store),
                                 "--cluster", address, "--runner", "test_sweep:fake_runner"],
                                env=env, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            conn, _ = silent.accept()  # the sweep is reaching its scheduler
            with conn:
                os.kill(proc.pid, signal.SIGTERM)
                out, err = proc.communicate(timeout=300)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 143, (proc.returncode, out, err)
    assert "sattcp sweep: error: terminated (SIGTERM)" in err and "Traceback" not in err, err
    assert not store.exists()


def test_a_cluster_that_cannot_take_the_runs_records_none_as_failed(tmp_path):
    """Before: every run was recorded as failed with Dask's "Error during deserialization of
    the task graph" (1,000 of 1,000 in 5 s, a scheduler started without the runner's module), so
    that the rerun on a corrected cluster ran nothing (ok 0) unless --retry-failed."""
    study = write_study(tmp_path, SIMPLE)
    store = tmp_path / "r.duckdb"
    with _cluster() as cluster, distributed.Client(cluster) as client:
        with pytest.raises(ClusterError, match=r"stopped the sweep at run \w+ \(RuntimeError: Error "
                           r"during deserialization .*the same command runs the rest"):
            run_sweep(study, store, cluster=client, runner=UnloadableRunner(), progress=False)
        assert _stored(store) == 0
        s = run_sweep(study, store, cluster=client, runner=fake_runner, progress=False)
    assert (s.skipped, s.ok, s.failed) == (0, 24, 0)


def test_a_run_the_cluster_drops_is_not_recorded_as_failed(tmp_path, monkeypatch):
    """A run the cluster gives up without running it to its end (a lost scheduler cancels every
    run in flight: FutureCancelledError ... scheduler-connection-lost; here one run cancelled by
    another client) stops the sweep with ClusterError and is not recorded. Before: it was recorded
    as failed, so the plain rerun skipped it, and a lost scheduler ended the sweep 30 s later in a
    traceback (ClosedClientError: the next submit). (Killing a real scheduler was tried by hand:
    docs/analysis.md, "On a cluster".)"""
    study = write_study(tmp_path, SIMPLE)
    store = tmp_path / "r.duckdb"
    gate = tmp_path / "gate"
    monkeypatch.setenv("SATTCP_TEST_GATE", str(gate))  # the runs of seed 2 wait for it
    written = _count_commits(monkeypatch)
    waiting = [f"sattcp-run-{s.run_key}" for s in load_study(study).runs() if s.seed == 2]
    stopped = threading.Event()
    try:
        with _cluster(threads=2) as cluster, distributed.Client(cluster) as client:
            def drop_a_run() -> None:
                try:
                    wait_for(lambda: sum(written) >= 1, "a first run stored", timeout=60)
                    with distributed.Client(cluster.scheduler_address) as other:
                        def running() -> list[str]:
                            return [k for keys in other.processing().values() for k in keys
                                    if str(k).startswith(waiting[0] + "-")]  # (KEY-TOKEN)

                        key = wait_for(running, "the first run of seed 2 running", timeout=60)[0]
                        other.cancel([distributed.Future(key, other)], force=True)
                    if not stopped.wait(60):  # the sweep went on, the others waiting at the gate
                        gate.touch()
                except BaseException:
                    gate.touch()  # (the sweep ends, and pytest.raises says it did not stop)
                    raise

            dropper = threading.Thread(target=drop_a_run, daemon=True)
            dropper.start()
            with pytest.raises(ClusterError, match=rf"Dask cluster stopped the sweep at run {waiting[0][11:]} "
                               r"\(FutureCancelledError"):
                try:
                    run_sweep(study, store, cluster=client, runner=fake_runner, progress=False)
                finally:
                    stopped.set()
            gate.touch()
            dropper.join(timeout=60)
            with Store(store, read_only=True) as st:
                assert st.run_keys("simple", "failed") == set()
                kept = st.run_keys("simple", "ok")
            assert kept
            s = run_sweep(study, store, cluster=client, runner=fake_runner, progress=False)
    finally:
        gate.touch()  # (the worker threads of seed 2's runs end)
    assert (s.skipped, s.ok, s.failed) == (len(kept), 24, 0)


def test_a_worker_of_another_build_stops_the_sweep(tmp_path, monkeypatch):
    """Before: each run such a worker took was recorded as failed ("this worker runs sattcp build
    ..."), a random part of the study on a mixed cluster, which only --retry-failed ran again."""
    import sattcp.worker

    study = write_study(tmp_path, SIMPLE)
    store = tmp_path / "r.duckdb"
    with _cluster() as cluster, distributed.Client(cluster) as client:
        monkeypatch.setattr(sattcp.worker, "build_id", lambda: "0.1.0+another")  # (the workers' only)
        # (excinfo keeps the sweep's frames, so its futures, as a notebook's last traceback does:
        # the rerun on the same client got the failed tasks' results again, before the sweep's
        # task keys were its own and it cancelled what it left in flight.)
        with pytest.raises(ClusterError, match=r"at run \w+ \(BuildMismatch: the worker on .* runs sattcp "
                           r"build 0\.1\.0\+another, the sweep was planned with build .*: install the same") as excinfo:
            run_sweep(study, store, cluster=client, runner=fake_runner, progress=False)
        assert _stored(store) == 0
        monkeypatch.undo()
        s = run_sweep(study, store, cluster=client, runner=fake_runner, progress=False)
    assert (s.skipped, s.ok, s.failed) == (0, 24, 0)
    assert excinfo.value


def test_a_worker_lost_holding_a_result_is_one_line_of_ours_and_the_run_is_stored_once(tmp_path, monkeypatch, capsys):
    """A worker lost after a run finished but before its result came (kill -9 of `dask worker`s
    during a sweep of quick runs, by hand): Dask runs the run again, and said so on stderr in its
    own words, "distributed.client - WARNING - Couldn't gather 1 keys, rescheduling
    ('sattcp-run-...',)", once per try; the sweep waited for the rerun without committing or
    showing progress. Simulated here: the first result asked for logs what Dask logs, and does
    not come within the sweep's wait (Dask's rerun of it takes longer)."""
    import logging

    study = write_study(tmp_path, SIMPLE)
    store = tmp_path / "r.duckdb"
    shown: list[str] = []

    class Shown(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            shown.append(record.getMessage())

    log = logging.getLogger("distributed.client")
    handler = Shown()
    log.addHandler(handler)
    result = distributed.Future.result
    asked: list[str] = []

    def lost_once(self, timeout=None):
        asked.append(self.key)
        if len(asked) == 1:
            for _ in range(2):
                log.warning("Couldn't gather %s keys, rescheduling %s", 1, (self.key,))
            log.warning("something else")  # not Dask's gather: shown
            raise TimeoutError
        return result(self, timeout)

    monkeypatch.setattr(distributed.Future, "result", lost_once)
    try:
        with _cluster(threads=2) as cluster, distributed.Client(cluster) as client:
            s = run_sweep(study, store, cluster=client, runner=fake_runner, progress=False)
    finally:
        log.removeHandler(handler)
    assert (s.ok, s.failed) == (24, 0)
    assert asked.count(asked[0]) == 2  # the lost one was asked for again once it came
    assert "something else" in shown and not [m for m in shown if "Couldn't gather" in m], shown
    err = capsys.readouterr().err
    run_key = str(asked[0]).split("-")[2]  # (sattcp-run-KEY-TOKEN)
    assert err.count("sweep: a Dask worker was lost") == 1, err
    assert f"sweep: a Dask worker was lost holding the result of run {run_key}; Dask runs it again" in err
    with Store(store, read_only=True) as st:
        assert len(st.run_keys("simple", "ok")) == 24


def test_ctrl_c_of_a_cluster_sweep_keeps_finished_runs_says_so_and_resumes(tmp_path, monkeypatch):
    """`sattcp sweep --cluster` stopped by Ctrl-C: exit 130 with the CLI's message and no
    traceback, the last progress line counting the runs kept, the runs in flight cancelled (the
    cluster's threads are free for the rerun), and the rerun runs only the others. The cluster
    runs in this process; the sweep is another, as `sattcp sweep` would be."""
    import os
    import re
    import signal
    import subprocess
    import sys

    from test_sweep import PYTHON_DIR, TESTS, stored_runs

    study = write_study(tmp_path, SIMPLE)
    store = tmp_path / "r.duckdb"
    gate = tmp_path / "gate"
    monkeypatch.setenv("SATTCP_TEST_GATE", str(gate))  # the runs of seed 2 wait for it (here)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), str(PYTHON_DIR)])}
    try:
        with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, protocol="tcp",
                                      host="127.0.0.1", dashboard_address=":0") as cluster:
            proc = subprocess.Popen([sys.executable, "-m", "sattcp.cli_study", "sweep", str(study), "--store", str(store),
                                     "--cluster", cluster.scheduler_address, "--runner", "test_sweep:fake_runner"],
                                    env=env, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                # Both threads wait at the gate once they have taken a run of seed 2 each (after
                # one or more runs of seed 1: the scheduler's order is not the submission's).
                wait_for(lambda: len(stored_runs(store)) >= 1 or proc.poll() is not None, "a stored run")
                assert proc.poll() is None, proc.communicate()
                os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the whole foreground group
                out, err = proc.communicate(timeout=300)
            finally:
                if proc.poll() is None:
                    proc.kill()
            assert proc.returncode == 130, (out, err)
            assert "sattcp sweep: error: interrupted; every finished run is saved" in err and "Traceback" not in err, err
            kept = set(stored_runs(store)["run_key"])
            progress = [ln for ln in err.splitlines() if ln.startswith("sweep simple: ")]
            assert re.match(rf"sweep simple: {len(kept)}/24 finished \(0 failed\)", progress[-1]), err
            gate.touch()
            with distributed.Client(cluster) as client:
                # The interrupted sweep's runs were cancelled: none is left on the cluster.
                wait_for(lambda: not any(client.processing().values()), "the cluster to be idle", timeout=60)
                s = run_sweep(study, store, cluster=client, runner=fake_runner, progress=False)
    finally:
        gate.touch()
    assert (s.skipped, s.ok, s.failed) == (len(kept), 24, 0)


#: Runs of the in-process cluster running at once, and the most seen (test_workers_that_come_later).
_running = {"now": 0, "most": 0}
_lock = threading.Lock()
_grow: list[distributed.LocalCluster] = []


def counting_runner(scenario, seed=None, overrides=None, progress=False):
    with _lock:
        if _grow:
            _grow.pop().scale(4)  # the cluster grows once the sweep has started
        _running["now"] += 1
        _running["most"] = max(_running["most"], _running["now"])
    try:
        time.sleep(0.2)
        return fake_runner(scenario, seed=seed, overrides=overrides)
    finally:
        with _lock:
            _running["now"] -= 1


def test_workers_that_come_later_get_runs(tmp_path):
    """dask-jobqueue's recipe (docs/analysis.md) starts the sweep before its batch jobs' workers
    exist. Before: the runs in flight were twice the worker threads at the start, for ever: 2
    with one worker (none: 2 too), so 4 workers ran 2 runs at a time."""
    study = write_study(tmp_path, SIMPLE.replace("replications = 2", "replications = 4"))
    _running.update(now=0, most=0)
    with _cluster(workers=1) as cluster, distributed.Client(cluster) as client:
        _grow.append(cluster)
        s = run_sweep(study, tmp_path / "r.duckdb", cluster=client, runner=counting_runner, progress=False)
    assert (s.ok, s.failed) == (48, 0)
    assert _running["most"] >= 3, _running


def test_the_last_progress_line_has_nothing_running(tmp_path, capsys):
    """Before: a cluster sweep's last line said "sweep simple: 24/24 finished (0 failed), 1
    running" (or 2: the runs in flight before the last ones came back)."""
    study = write_study(tmp_path, SIMPLE)
    with _cluster(threads=2) as cluster, distributed.Client(cluster) as client:
        run_sweep(study, tmp_path / "r.duckdb", cluster=client, runner=fake_runner, progress=True)
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("sweep simple: 24/24 finished (0 failed), 0 running, "), last


def test_a_cluster_without_workers_yet_shows_none_running(tmp_path, capsys):
    """dask-jobqueue's workers come after the sweep starts (docs/analysis.md). Before: the
    progress said "0/24 finished (0 failed), 2 running" while no worker existed."""
    study = write_study(tmp_path, SIMPLE)
    result: dict[str, object] = {}
    with _cluster(workers=0) as cluster, distributed.Client(cluster) as client:
        def sweep() -> None:
            result["summary"] = run_sweep(study, tmp_path / "r.duckdb", cluster=client, runner=fake_runner)

        t = threading.Thread(target=sweep, daemon=True)
        t.start()
        said: list[str] = []
        try:
            wait_for(lambda: said.extend(capsys.readouterr().err.splitlines()) or said, "a progress line", timeout=60)
        finally:
            cluster.scale(1)
            t.join(timeout=300)
    assert said[0].startswith("sweep simple: 0/24 finished (0 failed), 0 running, ") \
        and said[0].endswith(", waiting for the cluster's workers"), said
    assert result["summary"].ok == 24


def test_finished_runs_are_committed_while_runs_run(tmp_path, monkeypatch):
    """Before: the sweep waited for the next run to finish before it committed (or showed
    progress), so a run that finished within a second of the last commit stayed in memory as
    long as the runs after it ran (here, until the gate opens), unseen by readers and lost to a
    kill -9, against docs/analysis.md's "at least once every 10 s"."""
    study = write_study(tmp_path, SIMPLE)
    store = tmp_path / "r.duckdb"
    gate = tmp_path / "gate"
    monkeypatch.setenv("SATTCP_TEST_GATE", str(gate))  # the runs of seed 2 wait for it
    markers = tmp_path / "markers"  # each run touches its marker when it starts
    markers.mkdir()
    monkeypatch.setenv("SATTCP_TEST_MARKERS", str(markers))
    names = {s.seed: set() for s in load_study(study).runs()}
    for s in load_study(study).runs():
        names[s.seed].add(marker_name(s.seed, dict(s.overrides)))
    written = _count_commits(monkeypatch)
    result: dict[str, object] = {}
    with _cluster(threads=2) as cluster, distributed.Client(cluster) as client:
        def sweep() -> None:
            result["summary"] = run_sweep(study, store, cluster=client, runner=fake_runner, progress=False)

        def started(seed: int) -> int:
            return len(names[seed] & {p.name for p in markers.iterdir()})

        t = threading.Thread(target=sweep, daemon=True)
        t.start()
        try:
            # Both threads end up waiting at the gate, each in a run of seed 2, after the runs of
            # seed 1 the scheduler gave them first (its order is not the submission's): those
            # finished, and each must be committed while the others wait (runs are committed at
            # most once a second), the second one too.
            wait_for(lambda: started(2) >= 2, "both threads waiting at the gate", timeout=60)
            finished = started(1)
            if finished < 2:
                pytest.skip(f"the scheduler gave {finished} run(s) of seed 1 before both of seed 2: "
                            "the second commit cannot be shown")
            wait_for(lambda: sum(written) >= finished, f"the {finished} finished runs committed while "
                     "the others wait", timeout=30)
        finally:
            gate.touch()
            t.join(timeout=120)
    assert result["summary"].ok == 24
