"""Sweeps: study files, run keys, the pool, failures, resume after kill -9, Dask."""

from __future__ import annotations

import hashlib
import io
import json
import multiprocessing
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from conftest import NEEDS_PROC
from sattcp.store import Store, StoreError, build_id
from sattcp.sweep import Progress, StudyError, load_study, missing, run_sweep
from sattcp.worker import host_id

TESTS = Path(__file__).resolve().parent
PYTHON_DIR = TESTS.parent / "python"

LEVEL_VALUE = {"vanilla": 0.0, "reno": 0.1, "newreno": 0.2, "sack": 0.25, "epd": 0.0, "sd": 0.02}


def marker_name(seed: int | None, overrides: dict) -> str:
    return hashlib.sha256(json.dumps([seed, overrides], sort_keys=True).encode()).hexdigest()[:16]


#: A runner that does not pickle (pickle finds a function by its name, and <lambda> is none).
unpicklable_runner = lambda scenario, seed=None, overrides=None, progress=False: None  # noqa: E731


def fake_runner(scenario, seed=None, overrides=None, progress=False):
    """A deterministic stand-in for sattcp.api.run (module level, so it pickles)."""
    overrides = dict(overrides or {})
    markers = os.environ.get("SATTCP_TEST_MARKERS")
    if markers:
        Path(markers, marker_name(seed, overrides)).touch()
    delay = float(os.environ.get("SATTCP_TEST_DELAY", "0"))
    if delay:
        time.sleep(delay)
    gate = os.environ.get("SATTCP_TEST_GATE")
    if gate and seed == 2:  # the runs of seed 2 wait for the gate file (forever, in tests)
        while not Path(gate).exists():
            time.sleep(0.05)
    if str(overrides.get("tcp.flavor", "")).startswith("broken"):
        raise ValueError(f"tcp.flavor: unknown flavour, got {overrides['tcp.flavor']!r}")
    buf = str(overrides.get("switch.buffer", "1"))
    b = float("".join(c for c in buf if c.isdigit() or c == ".") or 1)
    eff = 0.5 + LEVEL_VALUE.get(overrides.get("tcp.flavor"), 0) \
        + LEVEL_VALUE.get(overrides.get("switch.policy"), 0) + 0.01 * min(b, 10) + 0.001 * (seed or 0)
    summary = {"efficiency": eff, "fairness": 1 - eff / 3, "events": 1000 + (seed or 0),
               "digest": f"{seed:x}", "sim_time_s": 1.0, "seed": seed, "custom_metric": 2 * eff}
    flows = pd.DataFrame({"flow": [0, 1], "throughput_bps": [eff * 1e6, eff * 2e6]})
    if overrides.get("tcp.flavor") == "unstorable":  # a table the store's declared columns refuse
        flows["completed_at_s"] = ["soon", "later"]
    return SimpleNamespace(summary=summary, flows=flows)


def write_study(tmp: Path, body: str) -> Path:
    (tmp / "base.toml").write_text("[run]\nduration = '1s'\n")
    p = tmp / "study.toml"
    p.write_text(textwrap.dedent(body))
    return p


SIMPLE = """
    name = "simple"
    scenario = "base.toml"
    responses = ["efficiency", "fairness", "custom_metric"]
    replications = 2
    [overrides]
    "run.duration" = "2s"
    [factors]
    tcp.flavor = ["reno", "sack"]
    "switch.policy" = ["epd", "sd"]
    "switch.buffer" = ["0.5bdp", "1bdp", "2bdp"]
    [quick]
    description = "shorter"
    overrides = { "run.duration" = "1s" }
"""


def test_a_study_that_is_not_a_path_is_a_study_error(tmp_path):
    for bad in (None, 3):
        with pytest.raises(StudyError, match=f"must be a path to a study file .*got {type(bad).__name__}"):
            load_study(bad)
        with pytest.raises(StudyError, match="must be a path to a study file"):
            run_sweep(bad, tmp_path / "r.duckdb", runner=fake_runner, progress=False)
    assert not (tmp_path / "r.duckdb").exists()


def test_jobs_of_the_wrong_kind_are_a_study_error_and_nothing_runs(tmp_path):
    study = write_study(tmp_path, SIMPLE)
    for jobs, got in ((0, "int 0"), (-1, "int -1"), ("2", "str '2'"), (1.5, "float 1.5"), (True, "bool True")):
        with pytest.raises(StudyError, match=f"jobs: must be a whole number >= 1 .*, got {got}$"):
            run_sweep(study, tmp_path / "r.duckdb", jobs=jobs, runner=fake_runner, progress=False)
    assert not (tmp_path / "r.duckdb").exists()


def test_flags_of_the_wrong_kind_are_a_study_error_with_the_others_and_nothing_runs(tmp_path):
    # Were taken for their truth: retry_failed="no" retried the failed runs, quick="false" ran
    # the quick study, progress=None hid the progress line.
    study = write_study(tmp_path, SIMPLE)
    for name, value, got in (("progress", None, "NoneType None"), ("progress", 1, "int 1"),
                             ("retry_failed", "no", "str 'no'"), ("quick", "false", "str 'false'"),
                             ("quick", 0, "int 0")):
        kwargs = {"progress": False, name: value}
        with pytest.raises(StudyError, match=f"^invalid study .*\n  {name}: must be True or False, got {got}$"):
            run_sweep(study, tmp_path / "r.duckdb", jobs=1, runner=fake_runner, **kwargs)
    # Reported together, and with jobs' problem, in one error.
    with pytest.raises(StudyError) as e:
        run_sweep(study, tmp_path / "r.duckdb", jobs=0, runner=fake_runner, progress="yes", retry_failed=None, quick=1)
    assert [p["path"] for p in e.value.problems] == ["progress", "retry_failed", "quick", "jobs"]
    assert not (tmp_path / "r.duckdb").exists()


def test_load_study_and_expand(tmp_path):
    st = load_study(write_study(tmp_path, SIMPLE))
    assert st.name == "simple" and st.seeds == (1, 2)
    assert list(st.factors) == ["tcp.flavor", "switch.policy", "switch.buffer"]
    runs = st.runs()
    assert len(runs) == 2 * 2 * 3 * 2
    assert len({r.run_key for r in runs}) == len(runs)
    # Keys are stable across loads and independent of where the study lives.
    assert [r.run_key for r in load_study(tmp_path / "study.toml").runs()] == [r.run_key for r in runs]
    assert runs[0].overrides == {"run.duration": "2s", "tcp.flavor": "reno",
                                 "switch.policy": "epd", "switch.buffer": "0.5bdp"}
    q = st.quick()
    assert q.name == "simple-quick" and q.runs()[0].overrides["run.duration"] == "1s"
    assert {r.run_key for r in q.runs()}.isdisjoint({r.run_key for r in runs})


def test_blocks_map_level_labels_to_values(tmp_path):
    (tmp_path / "wan.toml").write_text("")
    st = load_study(write_study(tmp_path, """
        name = "blocks"
        [factors]
        "tcp.flavor" = ["reno", "sack"]
        "switch.buffer" = ["0.5bdp", "1bdp"]
        [[blocks]]
        name = "WAN"
        scenario = "wan.toml"
        [blocks.levels.switch.buffer]
        "0.5bdp" = "531cells"
        "1bdp" = "1062cells"
        [[blocks]]
        name = "BASE"
        scenario = "base.toml"
    """))
    runs = st.runs()
    assert [r.block for r in runs].count("WAN") == 4
    wan = [r for r in runs if r.block == "WAN"]
    assert {r.overrides["switch.buffer"] for r in wan} == {"531cells", "1062cells"}
    assert {r.factors["switch.buffer"] for r in wan} == {"0.5bdp", "1bdp"}
    base = [r for r in runs if r.block == "BASE"]
    assert {r.overrides["switch.buffer"] for r in base} == {"0.5bdp", "1bdp"}


def test_invalid_study_lists_every_problem(tmp_path):
    p = write_study(tmp_path, """
        nme = "typo"
        scenario = "nowhere.toml"
        replications = 0
        [factors]
        "tcp.flavor" = ["reno"]
    """)
    with pytest.raises(StudyError) as ei:
        load_study(p)
    paths = {q["path"] for q in ei.value.problems}
    assert {"nme", "scenario", "replications", "factors.tcp.flavor"} <= paths
    assert isinstance(ei.value, ValueError)
    assert "nowhere.toml" in str(ei.value)


def test_a_study_with_a_byte_order_mark_runs_and_one_in_utf16_is_named(tmp_path, capsys):
    # Study and scenario files have one reader (api.read_toml_file): a UTF-8 byte-order mark is
    # dropped (before, a study with one was "not valid TOML"), and a file in UTF-16 is named as
    # not UTF-8 (before: "cannot read (UnicodeDecodeError)").
    from sattcp.cli_study import main

    study = write_study(tmp_path, SIMPLE)
    base = tmp_path / "base.toml"
    text, base_text = study.read_text(), base.read_text()
    study.write_bytes(b"\xef\xbb\xbf" + text.encode())
    base.write_bytes(b"\xef\xbb\xbf" + base_text.encode())
    argv = ["sweep", str(study), "--store", str(tmp_path / "r.duckdb"), "--runner", "test_sweep:fake_runner",
            "--no-progress"]
    assert main(argv) == 0, capsys.readouterr().err
    assert "24 ok" in capsys.readouterr().out
    study.write_text(text, encoding="utf-16")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert (f"invalid study {study} (1 problem, nothing was run):\n  (study): study file is not UTF-8 text (it "
            f"starts with a UTF-16 byte-order mark): save it as UTF-8, got {study}") in err, err
    study.write_text(text)
    base.write_text(base_text, encoding="utf-16")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert (f"  scenario: scenario file is not UTF-8 text (it starts with a UTF-16 byte-order mark): save it as "
            f"UTF-8, got {base}") in err and "UnicodeDecodeError" not in err, err


def test_a_study_whose_scenario_is_a_folder_or_a_device_says_so(tmp_path, capsys):
    # As `sattcp run` does (api.check_scenario_file); before, both were "file not found".
    from sattcp.cli_study import main

    (tmp_path / "scen").mkdir()
    for given, found, says in (("scen", tmp_path / "scen", "is a directory, not a scenario file"),
                               ("/dev/null", "/dev/null", "is not a regular file")):
        study = write_study(tmp_path, SIMPLE.replace('"base.toml"', f'"{given}"'))
        assert main(["sweep", str(study), "--store", str(tmp_path / "r.duckdb"), "--runner",
                     "test_sweep:fake_runner", "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert f"  scenario: {says} ({found}), got {given}" in err and "not found" not in err, err
        assert not (tmp_path / "r.duckdb").exists()


def test_sweep_runs_everything_then_nothing(tmp_path):
    study = write_study(tmp_path, SIMPLE)
    store = tmp_path / "r.duckdb"
    s = run_sweep(study, store, jobs=2, runner=fake_runner, progress=False)
    assert (s.total, s.skipped, s.ok, s.failed) == (24, 0, 24, 0)
    s2 = run_sweep(study, store, jobs=2, runner=fake_runner, progress=False)
    assert (s2.skipped, s2.ok) == (24, 24)
    with Store(store, read_only=True) as st:
        runs = st.runs("simple")
        assert len(runs) == 24 and set(runs["status"]) == {"ok"}
        assert runs["custom_metric"].notna().all()
        assert len(st.flows("simple")) == 48
    assert missing(load_study(study), store, runner=fake_runner) == []


def test_a_run_whose_table_the_store_refuses_is_a_failed_run_and_the_sweep_goes_on(tmp_path):
    # It stopped the sweep ("column 'completed_at_s' must be DOUBLE", exit 2) with the runs
    # after it never run, and the same again on every rerun.
    study = write_study(tmp_path, SIMPLE.replace('["reno", "sack"]', '["reno", "unstorable"]'))
    store = tmp_path / "r.duckdb"
    s = run_sweep(study, store, jobs=2, runner=fake_runner, progress=False)
    assert (s.ok, s.failed) == (12, 12)
    with Store(store, read_only=True) as st:
        runs = st.runs("simple")
        failed = runs[runs["status"] == "failed"]
        assert len(failed) == 12 and failed["efficiency"].isna().all()
        assert failed["error"].str.startswith("its results cannot be stored: column 'completed_at_s' must be DOUBLE").all()
        assert (json.loads(failed["factors"].iloc[0])["tcp.flavor"]) == "unstorable"
        flows = st.flows("simple")
        assert len(flows) == 24 and set(flows["run_key"]) == set(runs.loc[runs["status"] == "ok", "run_key"])


def test_failures_are_recorded_and_do_not_stop_the_sweep(tmp_path, capsys):
    study = write_study(tmp_path, SIMPLE.replace('["reno", "sack"]', '["reno", "broken"]'))
    store = tmp_path / "r.duckdb"
    s = run_sweep(study, store, jobs=2, runner=fake_runner, progress=True)
    assert (s.ok, s.failed) == (12, 12)
    err = capsys.readouterr().err
    assert "24/24 finished (12 failed), 0 running" in err and "ETA" in err  # (the last line said "1 running")
    with Store(store, read_only=True) as st:
        failed = st.runs("simple").query("status == 'failed'")
        assert failed["error"].str.contains("unknown flavour").all()
    # Failed runs are not retried unless asked.
    assert run_sweep(study, store, jobs=1, runner=fake_runner, progress=False).skipped == 24
    again = run_sweep(study, store, jobs=1, runner=fake_runner, progress=False, retry_failed=True)
    assert again.skipped == 12 and again.failed == 12


def _sweep_in_subprocess(study: Path, store: Path, markers: Path, delay: float = 0.0,
                         gate: Path | None = None) -> subprocess.Popen:
    """``sattcp sweep`` with the fake runner, in a new session (so that its processes can be
    found and signalled as a group). With ``gate`` (a file that does not exist) the runs of seed
    2 never finish: after the first two runs are stored both workers wait, and the sweep cannot
    end on its own however slow the machine is."""
    env = {**os.environ, "SATTCP_TEST_MARKERS": str(markers), "SATTCP_TEST_DELAY": str(delay),
           "PYTHONPATH": os.pathsep.join([str(TESTS), str(PYTHON_DIR)])}
    if gate is not None:
        env["SATTCP_TEST_GATE"] = str(gate)
    cmd = [sys.executable, "-m", "sattcp.cli_study", "sweep", str(study), "--store", str(store),
           "--runner", "test_sweep:fake_runner", "-j", "2", "--no-progress"]
    return subprocess.Popen(cmd, env=env, start_new_session=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def wait_for(condition, what: str, timeout: float = 300.0):
    """Polls ``condition`` until it is true (generous timeout: the machine may be loaded)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)


def stored_runs(store: Path, study: str = "simple") -> pd.DataFrame:
    """The runs a sweep has committed so far, read while it runs (empty if none yet)."""
    if not store.exists():
        return pd.DataFrame()
    try:
        with Store(store, read_only=True) as st:
            return st.runs(study)
    except StoreError:  # created but not initialised yet
        return pd.DataFrame()


def session_processes(sid: int) -> list[int]:
    """Live processes of session ``sid`` (the sweep, its workers, multiprocessing helpers)."""
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # state ppid pgrp session ...
        if int(fields[3]) == sid and fields[0] not in ("Z", "X"):
            pids.append(int(d.name))
    return pids


def _blocked_sweep(tmp_path: Path) -> tuple[Path, Path, subprocess.Popen]:
    study = write_study(tmp_path, SIMPLE)
    store = tmp_path / "r.duckdb"
    markers = tmp_path / "m1"
    markers.mkdir()
    proc = _sweep_in_subprocess(study, store, markers, gate=tmp_path / "never")
    # Partial results are readable while the sweep runs: the first two runs appear.
    wait_for(lambda: len(stored_runs(store)) >= 2 or proc.poll() is not None, "two stored runs")
    assert proc.poll() is None, proc.communicate()
    wait_for(lambda: len(session_processes(proc.pid)) >= 3, "the sweep and its two workers")
    return study, store, proc


def _resumes_with_only_the_missing_runs(tmp_path: Path, study: Path, store: Path,
                                        monkeypatch) -> None:
    saved = stored_runs(store)
    assert len(saved) == 2 and set(saved["status"]) == {"ok"} and set(saved["seed"]) == {1}
    second = tmp_path / "m2"
    second.mkdir()
    monkeypatch.setenv("SATTCP_TEST_MARKERS", str(second))
    s = run_sweep(study, store, jobs=2, runner=fake_runner, progress=False)
    assert (s.skipped, s.ok, s.failed) == (2, 24, 0)
    specs = load_study(study).runs()
    saved_keys = set(saved["run_key"])
    expected = {marker_name(r.seed, dict(r.overrides)) for r in specs if r.run_key not in saved_keys}
    assert {p.name for p in second.iterdir()} == expected  # only the missing runs ran


def test_sigterm_stops_the_workers_keeps_finished_runs_and_resumes(tmp_path, monkeypatch):
    study, store, proc = _blocked_sweep(tmp_path)
    os.kill(proc.pid, signal.SIGTERM)  # the parent only, as `kill PID` or a batch system does
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 143, (out, err)
    assert "terminated (SIGTERM); every finished run is saved" in err and "Traceback" not in err
    wait_for(lambda: not session_processes(proc.pid), "every worker to end")
    _resumes_with_only_the_missing_runs(tmp_path, study, store, monkeypatch)


def test_kill_9_of_the_sweep_ends_its_workers_and_resumes(tmp_path, monkeypatch):
    study, store, proc = _blocked_sweep(tmp_path)
    workers = [p for p in session_processes(proc.pid) if p != proc.pid]
    os.kill(proc.pid, signal.SIGKILL)  # the parent only: its workers must not live on
    proc.communicate(timeout=300)
    wait_for(lambda: not session_processes(proc.pid), f"workers {workers} to end with the sweep")
    _resumes_with_only_the_missing_runs(tmp_path, study, store, monkeypatch)


def test_resume_after_kill_9(tmp_path):
    study = write_study(tmp_path, SIMPLE)
    store = tmp_path / "r.duckdb"
    first, second = tmp_path / "m1", tmp_path / "m2"
    first.mkdir()
    second.mkdir()
    proc = _sweep_in_subprocess(study, store, first, gate=tmp_path / "never")
    wait_for(lambda: len(stored_runs(store)) >= 2 or proc.poll() is not None, "two stored runs")
    assert proc.poll() is None, "the sweep finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)  # the parent and its workers, as a lost node would
    proc.communicate()

    with Store(store, read_only=True) as st:
        saved = st.runs("simple")
    assert 0 < len(saved) < 24 and set(saved["status"]) == {"ok"}
    saved_keys = set(saved["run_key"])

    os.environ["SATTCP_TEST_MARKERS"] = str(second)
    try:
        s = run_sweep(study, store, jobs=2, runner=fake_runner, progress=False)
    finally:
        del os.environ["SATTCP_TEST_MARKERS"]
    assert (s.skipped, s.ok) == (len(saved_keys), 24)
    specs = load_study(study).runs()
    expected = {marker_name(r.seed, dict(r.overrides)) for r in specs if r.run_key not in saved_keys}
    assert {p.name for p in second.iterdir()} == expected  # only the missing runs ran
    with Store(store, read_only=True) as st:
        after = st.runs("simple").set_index("run_key")
    # Nothing finished before the kill was lost or changed.
    before = saved.set_index("run_key")
    keys = sorted(saved_keys)
    assert list(after.loc[keys, "finished_at"]) == list(before.loc[keys, "finished_at"])


def test_ctrl_c_keeps_finished_runs(tmp_path):
    study = write_study(tmp_path, SIMPLE)
    store = tmp_path / "r.duckdb"
    markers = tmp_path / "m"
    markers.mkdir()
    proc = _sweep_in_subprocess(study, store, markers, gate=tmp_path / "never")
    wait_for(lambda: len(stored_runs(store)) >= 2 or proc.poll() is not None, "two stored runs")
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the whole foreground group
    out, err = proc.communicate(timeout=300)
    assert proc.returncode != 0
    assert proc.returncode == 130 and "interrupted; every finished run is saved" in err, err
    wait_for(lambda: not session_processes(proc.pid), "every worker to end")
    with Store(store, read_only=True) as st:
        saved = st.runs("simple")
    assert 0 < len(saved) < 24 and set(saved["status"]) == {"ok"}
    s = run_sweep(study, store, jobs=2, runner=fake_runner, progress=False)
    assert s.ok == 24 and s.skipped == len(saved)


def test_a_resumed_sweep_says_how_many_runs_are_stored_before_its_progress(tmp_path, capsys):
    """Before: a resumed sweep's first words were "sweep simple: 0/12 finished", a study of 24."""
    study = write_study(tmp_path, SIMPLE.replace('["reno", "sack"]', '["reno", "broken"]'))
    store = tmp_path / "r.duckdb"
    run_sweep(study, store, jobs=2, runner=fake_runner, progress=False)
    run_sweep(study, store, jobs=2, runner=fake_runner, retry_failed=True)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "sweep simple: 12 of 24 runs already stored, 12 to run", lines
    assert lines[1].startswith("sweep simple: 0/12 finished (0 failed)"), lines
    run_sweep(study, store, jobs=2, runner=fake_runner)
    assert capsys.readouterr().err.splitlines()[0] == "sweep simple: 24 of 24 runs already stored, nothing to run"


def test_ctrl_c_with_the_store_held_to_the_end_does_not_say_every_run_is_saved(tmp_path, capsys, monkeypatch):
    """A reader that holds the store (a notebook's Store left open) keeps the sweep's finished
    runs in memory; after Ctrl-C the sweep waits for it (sweep.FINAL_WRITE_WAIT_S), then says
    that they could not be written and will run again. Before: the CLI's last words were then
    "interrupted; every finished run is saved"."""
    import _thread

    import sattcp.sweep as sweep
    from sattcp.cli_study import main
    from sattcp.store import StoreLocked

    def held(self, runs):
        raise StoreLocked(self.path, "held by the test")

    record = sweep._record

    def record_then_ctrl_c(writer, spec, rec):
        out = record(writer, spec, rec)
        _thread.interrupt_main()  # Ctrl-C, once a run has finished
        return out

    monkeypatch.setattr(Store, "_write", held)
    monkeypatch.setattr(sweep, "FINAL_WRITE_WAIT_S", 0.5)
    monkeypatch.setattr(sweep, "_record", record_then_ctrl_c)
    study = write_study(tmp_path, SIMPLE)
    store = tmp_path / "r.duckdb"
    assert main(["sweep", str(study), "--store", str(store), "--runner", "test_sweep:fake_runner",
                 "-j", "2", "--no-progress"]) == 130
    err = capsys.readouterr().err
    assert "every finished run is saved, run the same command" not in err, err
    n = int(re.search(r"sweep: (\d+) finished run\(s\) could not be written", err)[1])
    assert n >= 1 and f"sweep: {n} finished run(s) could not be written ({store} stayed locked); they will run again" in err
    assert (f"sattcp sweep: error: interrupted; every finished run is saved but the {n} that could not be written "
            "(they run again), run the same command to resume") in err, err
    assert not multiprocessing.active_children()


def test_a_full_disk_stops_the_sweep_naming_the_store_keeps_what_was_written_and_resumes(tmp_path, capsys,
                                                                                         monkeypatch):
    # The store on a small file system (tmpfs; root to mount it) that fills up while runs
    # finish. Before: "cannot read the results store (DuckDB: TransactionContext Error: cannot
    # rollback - no transaction is active); the file may be damaged", exit 2.
    import errno
    import re
    import shutil

    from sattcp.cli_study import main

    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("needs root and mount(8) to make a small tmpfs")
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(disk)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {mounted.stderr.strip()}")
    study = write_study(tmp_path, SIMPLE)
    store = disk / "r.duckdb"
    markers, gate = tmp_path / "m1", tmp_path / "gate"
    markers.mkdir()
    proc = _sweep_in_subprocess(study, store, markers, gate=gate)
    try:
        # Two runs are written, two wait at the gate; then the disk fills up and they finish.
        wait_for(lambda: len(stored_runs(store)) >= 2 or proc.poll() is not None, "two stored runs")
        assert proc.poll() is None, proc.communicate()
        with open(disk / "filler", "wb", buffering=0) as f:
            try:
                while True:
                    f.write(b"\0" * 4096)
            except OSError as e:
                assert e.errno == errno.ENOSPC
        gate.touch()
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 1, (out, err)
        m = re.fullmatch(rf"sattcp sweep: error: cannot write {store}: No space left on device\. The sweep "
                         r"stopped: the (\d+) run\(s\) it wrote are kept(, \d+ finished run\(s\) could not be "
                         r"written)?; once there is room, the same command runs the rest\n", err)
        assert m and "Traceback" not in err, err
        wait_for(lambda: not session_processes(proc.pid), "every worker to end")
        saved = stored_runs(store)
        assert len(saved) == int(m[1]) and 2 <= len(saved) < 24 and set(saved["status"]) == {"ok"}
        # The same command on a full disk says so (before it runs anything), and loses nothing.
        monkeypatch.setenv("SATTCP_TEST_MARKERS", str(tmp_path / "m1"))
        argv = ["sweep", str(study), "--store", str(store), "--runner", "test_sweep:fake_runner", "-j", "1",
                "--no-progress"]
        assert main(argv) == 1
        assert capsys.readouterr().err.startswith(f"sattcp sweep: error: cannot write {store}: No space left on device")
        assert len(stored_runs(store)) == len(saved)
        # With room, it resumes: only the runs not written run.
        (disk / "filler").unlink()
        second = tmp_path / "m2"
        second.mkdir()
        monkeypatch.setenv("SATTCP_TEST_MARKERS", str(second))
        assert main(argv) == 0
        assert f"24 runs, {len(saved)} already stored, 24 ok, 0 failed" in capsys.readouterr().out
        saved_keys = set(saved["run_key"])
        expected = {marker_name(r.seed, dict(r.overrides)) for r in load_study(study).runs()
                    if r.run_key not in saved_keys}
        assert {q.name for q in second.iterdir()} == expected
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
        wait_for(lambda: not session_processes(proc.pid), "every worker to end")
        subprocess.run(["umount", str(disk)], check=True)


def test_cli_runner_module_in_the_working_folder(tmp_path):
    """`sattcp sweep --runner mymod:run` run from mymod.py's folder: before, the `sattcp` command
    (a console script, whose path lacks the working folder) said "No module named 'mymod'"
    (exit 2), where `python -m sattcp.cli` found it."""
    study = write_study(tmp_path, SIMPLE)
    (tmp_path / "mymod.py").write_text(textwrap.dedent("""
        from types import SimpleNamespace

        def run(scenario, seed=None, overrides=None, progress=False):
            return SimpleNamespace(summary={"efficiency": 0.5, "fairness": 1.0, "custom_metric": seed})
    """))
    sattcp = Path(sys.executable).parent / "sattcp"
    if not sattcp.exists():
        pytest.skip(f"no sattcp command beside {sys.executable}")
    proc = subprocess.run([str(sattcp), "sweep", study.name, "--runner", "mymod:run", "--store", "r.duckdb",
                           "-j", "2", "--no-progress"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "24 ok, 0 failed" in proc.stdout


def test_dask_local_cluster(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    study = write_study(tmp_path, SIMPLE)
    store = tmp_path / "r.duckdb"
    # The dashboard on a free port: None means distributed's default, 8787, and where that is
    # taken (any Dask dashboard on the machine) its "Hosting the HTTP server on port N instead"
    # warning failed the test under filterwarnings = error.
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        s = run_sweep(study, store, cluster=client, runner=fake_runner, progress=False)
    assert (s.ok, s.failed) == (24, 0)
    with Store(store, read_only=True) as st:
        assert len(st.runs("simple")) == 24


# -- the CLI -----------------------------------------------------------------------------------


def test_cli_sweep_analyze_export(tmp_path, capsys):
    from sattcp.cli_study import main

    study = write_study(tmp_path, SIMPLE)
    store = tmp_path / "r.duckdb"
    args = ["sweep", str(study), "--store", str(store), "--runner", "test_sweep:fake_runner",
            "-j", "2", "--no-progress"]
    assert main(args) == 0
    assert "24 runs, 0 already stored, 24 ok, 0 failed" in capsys.readouterr().out
    assert main(args) == 0
    assert "24 already stored" in capsys.readouterr().out

    assert main(["analyze", str(store), "--study", "simple", "--response", "custom_metric"]) == 0
    out = capsys.readouterr().out
    assert "== simple / simple / custom_metric" in out and "tcp.flavor:switch.policy" in out
    assert "pure_error" in out  # two replications

    assert main(["analyze", str(store), "--study", "simple", "--html", str(tmp_path / "h")]) == 0
    html = (tmp_path / "h" / "report.html").read_text()
    assert html.count("data:image/png;base64,") == 3 * 1 + 1  # 3 responses + variation
    effects = pd.read_csv(tmp_path / "h" / "effects.csv")
    assert set(effects["response"]) == {"efficiency", "fairness", "custom_metric"}

    assert main(["export", str(store), "--out", str(tmp_path / "x"), "--format", "csv"]) == 0
    assert pd.read_csv(tmp_path / "x" / "runs.csv").shape[0] == 24


@pytest.mark.parametrize("argv, message", [
    (["sweep", "nowhere.toml"], "file not found"),
    (["analyze", "{store}", "--study", "nope"], "no study 'nope'"),
    (["analyze", "{store}", "--study", "simple", "--response", "nope"], "no response 'nope'"),
    (["analyze", "{tmp}/none.duckdb", "--study", "x"], "no results store"),
    (["sweep", "{study}", "--runner", "nomodule:f"], "--runner"),
    # Checked before the store is created (the sweep would store every run as failed).
    (["sweep", "{study}", "--runner", "os:sep", "--store", "{tmp}/new.duckdb"],
     "sattcp sweep: error: --runner os:sep: must be a function runner(scenario, seed=, overrides=) "
     "(the CLI's --runner takes MODULE:FUNCTION), got str '/'"),
    (["sweep", "{study}", "--runner", "test_sweep:unpicklable_runner", "--store", "{tmp}/new.duckdb"],
     "sattcp sweep: error: --runner test_sweep:unpicklable_runner: must pickle for the sweep's worker processes"),
    (["sweep", "{study}", "--store", "{tmp}/no/dir/new.duckdb"],
     "--store {tmp}/no/dir/new.duckdb: folder {tmp}/no/dir does not exist"),
    (["sweep", "{study}", "--store", "{tmp}", "--runner", "test_sweep:fake_runner"],
     "--store {tmp}: is a folder, not a file"),
    (["sweep", "{study}", "--cluster", "notanaddress", "--store", "{tmp}/new.duckdb",
      "--runner", "test_sweep:fake_runner"], "--cluster 'notanaddress': not a scheduler address"),
    # Responses are numeric summary values; the list offered holds only those.
    (["analyze", "{store}", "--study", "simple", "--response", "config"],
     "response 'config' is not numeric"),
    (["analyze", "{store}", "--study", "simple", "--response", "block"],
     "response 'block' is not numeric"),
    # Missing in every successful run, but a text column all the same.
    (["analyze", "{store}", "--study", "simple", "--response", "error"],
     "response 'error' is not numeric"),
    (["analyze", "{store}", "--study", "simple", "--response", "tcp.flavor"],
     "'tcp.flavor' is a factor of 'simple', not a response"),
    # An output folder that is a file: refused before the analysis or export.
    (["analyze", "{store}", "--study", "simple", "--html", "{study}"], "--html {study}: not a folder"),
    (["export", "{store}", "--out", "{study}"], "--out {study}: not a folder"),
])
def test_cli_bad_input_exits_2(tmp_path, capsys, argv, message):
    from sattcp.cli_study import main

    study = write_study(tmp_path, SIMPLE)
    store = tmp_path / "r.duckdb"
    run_sweep(study, store, jobs=1, runner=fake_runner, progress=False)
    argv = [a.format(store=store, tmp=tmp_path, study=study) for a in argv]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    message = message.format(tmp=tmp_path, study=study)
    assert err.startswith("sattcp ") and message in err, err
    assert not out  # nothing was analysed or exported first
    assert not (tmp_path / "new.duckdb").exists() and not (tmp_path / "no").exists()


def test_cli_an_unknown_response_is_offered_only_numeric_ones(tmp_path, capsys):
    from sattcp.cli_study import main

    study = write_study(tmp_path, SIMPLE)
    store = tmp_path / "r.duckdb"
    run_sweep(study, store, jobs=1, runner=fake_runner, progress=False)
    assert main(["analyze", str(store), "--study", "simple", "--response", "nope"]) == 2
    err = capsys.readouterr().err
    offered = err.split("available: ", 1)[1]
    assert "'efficiency'" in offered and "'custom_metric'" in offered, err
    for text in ("config", "error", "status", "block", "run_key", "started_at", "seed", "tcp.flavor"):
        assert f"'{text}'" not in offered, err


@NEEDS_PROC
@pytest.mark.parametrize("argv, message", [
    (["sweep", "{study}", "--store", "/proc/x.duckdb"],
     "--store /proc/x.duckdb: cannot be created in folder /proc"),
    (["analyze", "{store}", "--study", "simple", "--html", "/proc/rep"],
     "--html /proc/rep: cannot be created in folder /proc"),
    (["export", "{store}", "--out", "/proc/exp"], "--out /proc/exp: cannot be created in folder /proc"),
])
def test_cli_an_output_the_system_refuses_is_named(tmp_path, capsys, argv, message):
    # As root os.access says /proc is writable; only trying says otherwise.
    from sattcp.cli_study import main

    study = write_study(tmp_path, SIMPLE)
    store = tmp_path / "r.duckdb"
    run_sweep(study, store, jobs=1, runner=fake_runner, progress=False)
    assert main([a.format(store=store, study=study) for a in argv]) == 2
    out, err = capsys.readouterr()
    assert message in err and "No such file" not in err and not out, err


def test_a_store_path_that_is_not_utf8_is_refused_naming_it(tmp_path, capsys):
    # DuckDB opens only UTF-8 paths; before, each command ended in a traceback
    # ("RuntimeError: std::bad_cast").
    import shutil

    from sattcp.cli_study import main

    study = write_study(tmp_path, SIMPLE)
    good = tmp_path / "r.duckdb"
    run_sweep(study, good, jobs=1, runner=fake_runner, progress=False)
    bad = tmp_path / os.fsdecode(b"r\xff.duckdb")
    shown = f"{tmp_path}/r\\xff.duckdb"
    runner = ["--runner", "test_sweep:fake_runner", "--no-progress"]
    for argv, label in ((["sweep", str(study), "--store", str(bad), *runner], "--store"),
                        (["reproduce", "modern-cc", "--quick", "--out", str(bad), *runner], "--out"),
                        (["analyze", str(bad), "--study", "simple"], "results store"),
                        (["export", str(bad), "--out", str(tmp_path / "x")], "results store")):
        if argv[0] in ("analyze", "export"):
            shutil.copy(good, bad)
        assert main(argv) == 2, argv
        out, err = capsys.readouterr()
        what = f"{shown}/results.duckdb" if argv[0] == "reproduce" else shown
        assert err == (f"sattcp {argv[0]}: error: {label} {what}: the path is not UTF-8 text, and DuckDB opens "
                       "only UTF-8 paths; rename it or give another\n"), err
        assert not out and not (tmp_path / "x").exists()
        assert bad.exists() == (argv[0] in ("analyze", "export"))  # nothing created


def test_a_study_in_a_folder_whose_name_is_not_utf8_is_stored(tmp_path, capsys):
    # Before: "cannot read the results store (DuckDB: Invalid Input Error: Python Conversion
    # Failure: cannot encode str as UTF-8 ...); the file may be damaged", exit 2: the runs'
    # scenario path could not be given to DuckDB. It is stored with its bytes escaped.
    from sattcp.cli_study import main
    from sattcp.store import Store

    folder = tmp_path / os.fsdecode(b"d\xff")
    folder.mkdir()
    study = write_study(folder, """
        scenario = "base.toml"
        [factors]
        tcp.flavor = ["reno", "sack"]
    """)
    store = tmp_path / "ok.duckdb"
    runner = ["--runner", "test_sweep:fake_runner", "--no-progress"]
    assert main(["sweep", str(study), "--store", str(store), *runner]) == 0, capsys.readouterr().err
    with Store(store, read_only=True) as st:
        runs = st.runs("study")
    assert len(runs) == 2 and set(runs["scenario"]) == {f"{tmp_path}/d\\xff/base.toml"}
    # A study named after a file whose name is not UTF-8 cannot be stored under that name: it
    # is refused, saying how to name it (before: the same DuckDB error).
    named = folder / os.fsdecode(b"st\xffudy.toml")
    study.rename(named)
    capsys.readouterr()
    assert main(["sweep", str(named), "--store", str(store), *runner]) == 2
    err = capsys.readouterr().err
    assert err == (f"sattcp sweep: error: invalid study {tmp_path}/d\\xff/st\\xffudy.toml (1 problem, nothing was run):\n"
                   "  name: the study is named after its file, st\\xffudy.toml, whose name is not UTF-8 text: "
                   'give the study a name (name = "...") or rename the file\n'), err
    named.write_text('name = "mine"\n' + named.read_text())
    assert main(["sweep", str(named), "--store", str(store), *runner]) == 0


def test_a_new_store_in_a_missing_folder_says_so(tmp_path):
    from sattcp.store import Store

    with pytest.raises(StoreError, match=r"folder .*nope does not exist"):
        Store(tmp_path / "nope" / "r.duckdb")


@pytest.mark.parametrize("body, path, what", [
    ('[factors]\n"run.seed" = [1, 2]\n"tcp.flavor" = ["reno", "sack"]', "factors.run.seed",
     "cannot be a factor"),
    ('[factors.run]\nseed = [1, 2]', "factors.run.seed", "cannot be a factor"),
    ('[overrides]\n"run.seed" = 7\n[factors]\n"tcp.flavor" = ["reno", "sack"]',
     "overrides.run.seed", "cannot be an override"),
    ('[factors]\n"tcp.flavor" = ["reno", "sack"]\n[quick]\noverrides = { "run.seed" = 3 }',
     "quick.overrides.run.seed", "cannot be an override"),
    ('[factors]\n"tcp.flavor" = ["reno", "sack"]\n[[blocks]]\nscenario = "base.toml"\n'
     'overrides = { "run.seed" = 3 }', "blocks[0].overrides.run.seed", "cannot be an override"),
])
def test_run_seed_is_not_a_factor_nor_an_override(tmp_path, capsys, body, path, what):
    # Each run's seed is one of the study's seeds: run.seed set by the study would be ignored
    # and its "levels" would be the same runs.
    from sattcp.cli_study import main

    scenario = 'scenario = "base.toml"\n' if "[[blocks]]" not in body else ""
    study = write_study(tmp_path, f'name = "s"\nreplications = 2\n{scenario}{body}\n')
    with pytest.raises(StudyError) as ei:
        load_study(study)
    (p,) = ei.value.problems
    assert p["path"] == path and what in p["rule"] and "`seed`/`seeds`/`replications`" in p["rule"]
    store = tmp_path / "r.duckdb"
    assert main(["sweep", str(study), "--store", str(store), "--runner", "test_sweep:fake_runner",
                 "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert f"  {path}: run.seed cannot be " in err and not store.exists(), err


def test_cli_jobs_must_be_a_positive_integer(capsys):
    from sattcp.cli_study import main

    with pytest.raises(SystemExit) as e:
        main(["sweep", "study.toml", "-j", "many"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "argument --jobs/-j: must be a whole number >= 1, got 'many'" in err and "_jobs" not in err


def test_cli_sweep_with_failures_exits_1(tmp_path, capsys):
    from sattcp.cli_study import main

    study = write_study(tmp_path, SIMPLE.replace('["reno", "sack"]', '["reno", "broken"]'))
    assert main(["sweep", str(study), "--store", str(tmp_path / "r.duckdb"), "--runner",
                 "test_sweep:fake_runner", "--no-progress"]) == 1
    out, err = capsys.readouterr()
    assert "12 failed" in out
    # Why they failed, and how to see more and to rerun them, on stderr.
    failed = [line for line in err.splitlines() if line.startswith("failed: ")]
    assert len(failed) == 1 and failed[0].startswith("failed: 12 run(s): ") and "unknown flavour" in failed[0]
    assert "runs.error" in err and "--retry-failed" in err


def test_the_failure_summary_counts_only_the_current_studys_runs(tmp_path, capsys):
    # Failed runs of an earlier version of the study are stale: not counted, not named.
    from sattcp.cli_study import main

    old = write_study(tmp_path, SIMPLE.replace('["reno", "sack"]', '["reno", "broken"]'))
    store = str(tmp_path / "r.duckdb")
    assert main(["sweep", str(old), "--store", store, "--runner", "test_sweep:fake_runner", "--no-progress"]) == 1
    assert "failed: 12 run(s)" in capsys.readouterr().err
    now = write_study(tmp_path, SIMPLE.replace('["reno", "sack"]', '["reno", "broken2"]'))
    assert main(["sweep", str(now), "--store", store, "--runner", "test_sweep:fake_runner", "--no-progress"]) == 1
    out, err = capsys.readouterr()
    assert "12 already stored" in out and "12 failed" in out, out
    failed = [line for line in err.splitlines() if line.startswith("failed: ")]
    assert failed == [failed[0]] and failed[0].startswith("failed: 12 run(s): ") and "broken2" in failed[0], err


def test_cli_a_sweep_stopped_by_what_runs_it_exits_1_and_an_internal_error_stays_one(tmp_path, capsys, monkeypatch):
    """The sweep's own errors that are not the input's (ClusterError, BuildMismatch,
    WorkersCannotStart) are said by the subcommand, exit 1 (`python -m sattcp.cli_study` showed
    them as a traceback); a bug (InternalError) is still said as one by `sattcp`, exit 3."""
    import sattcp.sweep as sweep
    from sattcp.cli import main as sattcp_main
    from sattcp.cli_study import main
    from sattcp.errors import InternalError

    def raising(error: Exception):
        def run_sweep(*args, **kwargs):
            raise error
        return run_sweep

    study = write_study(tmp_path, SIMPLE)
    argv = ["sweep", str(study), "--store", str(tmp_path / "r.duckdb"), "--runner", "test_sweep:fake_runner"]
    for cli, error, status, said in (
            (sattcp_main, sweep.ClusterError("the Dask cluster stopped the sweep"), 1,
             "sattcp sweep: error: the Dask cluster stopped the sweep"),
            (main, sweep.WorkersCannotStart("no worker started"), 1, "sattcp sweep: error: no worker started"),
            (sattcp_main, InternalError("a panic"), 3, "sattcp: internal error (please report): a panic")):
        monkeypatch.setattr(sweep, "run_sweep", raising(error))
        assert cli(argv) == status
        err = capsys.readouterr().err
        assert said in err and "Traceback" not in err, err


def test_cli_without_simulator_is_a_clear_error(tmp_path, capsys, monkeypatch):
    # As if the native module had not been built: importing it fails.
    monkeypatch.setitem(sys.modules, "sattcp._core", None)
    from sattcp.cli_study import main

    study = write_study(tmp_path, SIMPLE)
    assert main(["sweep", str(study), "--store", str(tmp_path / "r.duckdb")]) == 1
    assert "simulator is not available" in capsys.readouterr().err


def crashing_runner(scenario, seed=None, overrides=None, progress=False):
    """Kills its own worker process for one level, as a crash in native code would."""
    if (overrides or {}).get("tcp.flavor") == "crash" and seed == 1:
        os._exit(3)
    return fake_runner(scenario, seed=seed, overrides=overrides, progress=progress)


def test_a_worker_that_dies_fails_only_its_own_run(tmp_path):
    study = write_study(tmp_path, SIMPLE.replace('["reno", "sack"]', '["reno", "crash"]'))
    store = tmp_path / "r.duckdb"
    s = run_sweep(study, store, jobs=2, runner=crashing_runner, progress=False)
    assert (s.ok, s.failed) == (18, 6)
    # Every pool's workers, the broken pools' survivors (killed) included, are gone and reaped.
    assert not multiprocessing.active_children()
    with Store(store, read_only=True) as st:
        runs = st.runs("simple")
    failed = runs[runs["status"] == "failed"]
    assert set(failed["tcp.flavor"]) == {"crash"} and set(failed["seed"]) == {1}
    assert failed["error"].str.contains("worker process died").all()


def rebuilding_runner(scenario, seed=None, overrides=None, progress=False):
    """As fake_runner; after the study's first run its worker process sees another sattcp build,
    as a worker started after the native module was rebuilt during the sweep does."""
    result = fake_runner(scenario, seed=seed, overrides=overrides, progress=progress)
    o = overrides or {}
    if (o.get("tcp.flavor"), o.get("switch.policy"), o.get("switch.buffer"), seed) == ("reno", "epd", "0.5bdp", 1):
        os.environ["SATTCP_BUILD_ID"] = "0.1.0+rebuilt"  # (this worker's environment only)
    return result


def test_a_local_worker_of_another_build_stops_the_sweep_and_records_nothing_as_failed(tmp_path, capsys):
    """As on a cluster (test_cluster.py). Before: each later run of that worker was recorded as
    failed ("BuildMismatch: the worker on ... install the same sattcp on every worker"), 23 of
    24 here, which only --retry-failed ran again."""
    from sattcp.cli_study import main

    study = write_study(tmp_path, SIMPLE)
    store = tmp_path / "r.duckdb"
    # One worker: the study's first run is its first, so its second is of the other build.
    assert main(["sweep", str(study), "--store", str(store), "--runner", "test_sweep:rebuilding_runner",
                 "-j", "1", "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "sattcp sweep: error: the sweep stopped: a worker process runs sattcp build 0.1.0+rebuilt, the sweep " \
           f"was planned with build {build_id()} (was the simulator rebuilt" in err, err
    assert "No run was recorded as failed for it and every finished run is kept" in err and "Traceback" not in err
    assert not multiprocessing.active_children()
    with Store(store, read_only=True) as st:
        assert st.run_keys("simple", "failed") == set()
        kept = st.run_keys("simple", "ok")
    assert len(kept) == 1
    s = run_sweep(study, store, jobs=2, runner=fake_runner, progress=False)
    assert (s.skipped, s.ok, s.failed) == (1, 24, 0)


# -- every run is checked before any runs ------------------------------------------------------

ROOT = TESTS.parent


def real_study(tmp: Path, body: str, base: str = "geo-bulk.toml") -> Path:
    """A study over a copy of a real scenario, for sweeps with sattcp's own simulator."""
    pytest.importorskip("sattcp._core")
    (tmp / "base.toml").write_text((ROOT / "scenarios" / base).read_text())
    p = tmp / "study.toml"
    p.write_text(textwrap.dedent(body))
    return p


TINY = """
    name = "tiny"
    scenario = "base.toml"
    responses = ["efficiency", "timeouts"]
    [overrides]
    "run.duration" = "1s"
    [factors]
    "tcp.flavor" = ["reno", "sack"]
"""


def test_a_worker_runs_without_pandas_and_its_tables_are_the_runs_own(tmp_path):
    # A worker imports the module of the function it runs and of what it unpickles: sattcp.worker
    # and sattcp.api, not pandas nor DuckDB (about 0.8 s of CPU per worker, issue 15). The store
    # gets the tables RunResult builds, here in the sweep's process.
    import pickle

    import sattcp
    from sattcp.sweep import _outputs_of

    # (With packets recorded: a worker sends no packet trace, which would be pickled as a table.)
    study = real_study(tmp_path, TINY.replace('"run.duration" = "1s"', '"run.duration" = "1s"\n"trace.packets" = "all"'))
    spec = load_study(study).runs(core=True)[1]
    (tmp_path / "spec.pkl").write_bytes(pickle.dumps(spec))
    code = textwrap.dedent(f"""
        import pickle, sys
        from sattcp.worker import execute
        sent = pickle.dumps(execute(pickle.loads(open({str(tmp_path / "spec.pkl")!r}, "rb").read())))
        heavy = [m for m in ("pandas", "numpy", "pyarrow", "duckdb", "sattcp.sweep", "sattcp.store") if m in sys.modules]
        sys.stdout.buffer.write(pickle.dumps((pickle.loads(sent), heavy)))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": str(PYTHON_DIR)})
    rec, heavy = pickle.loads(out.stdout)
    assert heavy == [] and rec["status"] == "ok" and "flows" not in rec
    stored = _outputs_of(rec)
    direct = sattcp.run(tmp_path / "base.toml", seed=spec.seed, overrides=dict(spec.overrides))
    assert "packets" not in vars(rec["result"])  # no packet table came
    assert stored["summary"]["digest"] == direct.summary["digest"] and stored["warnings"] == direct.data["warnings"]
    # The tables go to the store as rows, typed without pandas (issue 15): the same Arrow tables
    # as the DataFrames RunResult builds give.
    from sattcp.store import FLOW_COLUMNS, LINK_COLUMNS, _typed_frame, _typed_rows

    for table, declared in (("flows", FLOW_COLUMNS), ("links", LINK_COLUMNS)):
        fast = _typed_rows(stored[table], declared)
        assert fast is not None and fast[1] == {}
        assert fast[0].equals(_typed_frame(getattr(direct, table), declared)[0])
    # A result whose tables cannot be built is a failed run, as a failure in the worker is.
    res = rec["result"]
    bad = type(res)({**res.data, "flows": [1, 2]}, res.scenario, res.wall_time_s, res.config)
    broken = _outputs_of({**rec, "result": bad})
    assert broken["status"] == "failed" and broken["error"].startswith("TypeError")


def test_a_sweep_from_a_script_on_standard_input_says_its_workers_cannot_start(tmp_path):
    # A spawned worker runs the main program's file again: "<stdin>" is none, so every worker
    # died at its start and every run was recorded as a crash, each in a pool of its own.
    study = real_study(tmp_path, TINY)
    store = tmp_path / "r.duckdb"
    script = (f"from sattcp.sweep import run_sweep\n"
              f"run_sweep({str(study)!r}, {str(store)!r}, jobs=1, progress=False)\n")
    out = subprocess.run([sys.executable, "-"], input=script, text=True, capture_output=True, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": str(PYTHON_DIR)})
    assert out.returncode == 1, out.stderr
    assert "WorkersCannotStart: a sweep's worker processes start by running the main program again, " \
           "and its file '<stdin>' does not exist" in out.stderr
    assert out.stderr.count("Traceback") == 1  # (no worker's)
    with Store(store, read_only=True) as s:
        assert s.run_keys(load_study(study).name) == set()


def test_a_sweep_at_a_scripts_top_level_stops_with_why_its_workers_died(tmp_path):
    # Without the `if __name__ == "__main__":` guard each spawned worker ran the script again,
    # started a sweep of its own and died at its start; every run was then run again alone, in
    # a pool of its own, and died the same way (the sweep went on for minutes, a traceback per
    # worker). Now the pool whose workers never started stops the sweep, saying why.
    study = real_study(tmp_path, TINY)
    store = tmp_path / "r.duckdb"
    script = tmp_path / "unguarded.py"
    script.write_text(f"from sattcp.sweep import run_sweep\n"
                      f"run_sweep({str(study)!r}, {str(store)!r}, jobs=2, progress=False)\n")
    out = subprocess.run([sys.executable, str(script)], text=True, capture_output=True, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": str(PYTHON_DIR)}, timeout=600)
    assert out.returncode == 1, out.stderr
    # The error ends the main process's stderr. Python's resource tracker (a process of its own,
    # sharing that stderr) may print a warning after it, about a semaphore of the dead workers
    # that was already gone (seen once under load): such lines, and only those, may follow.
    lines = out.stderr.strip().splitlines()
    at = [i for i, ln in enumerate(lines) if ln.startswith("sattcp.sweep.WorkersCannotStart: ")]
    assert len(at) == 1, out.stderr
    last = lines[at[0]]
    assert last.startswith("sattcp.sweep.WorkersCannotStart: the sweep stopped: its workers died while starting, "
                           "before any run"), last
    assert f"the main program {str(script)!r} again" in last and 'if __name__ == "__main__":' in last
    after = lines[at[0] + 1:]
    assert all("resource_tracker" in ln for ln in after), after
    with Store(store, read_only=True) as s:
        assert s.run_keys(load_study(study).name) == set()
    # The same script with the guard runs its sweep.
    script.write_text("from sattcp.sweep import run_sweep\n"
                      "if __name__ == \"__main__\":\n"
                      f"    run_sweep({str(study)!r}, {str(store)!r}, jobs=2, progress=False)\n")
    subprocess.run([sys.executable, str(script)], check=True, capture_output=True, cwd=tmp_path,
                   env={**os.environ, "PYTHONPATH": str(PYTHON_DIR)}, timeout=600)
    with Store(store, read_only=True) as s:
        assert len(s.run_keys(load_study(study).name)) == len(load_study(study).runs())


def test_a_typo_in_a_factor_or_a_level_stops_the_sweep_before_any_run(tmp_path, capsys):
    from sattcp.cli_study import main

    study = real_study(tmp_path, TINY.replace('"tcp.flavor" = ["reno", "sack"]',
                                              '"tcp.flavour" = ["reno", "sack"]\n'
                                              '"switch.buffer" = ["1bdp", "lots"]'))
    store = tmp_path / "r.duckdb"
    with pytest.raises(StudyError) as ei:
        run_sweep(study, store, jobs=1, progress=False)
    paths = {(p["path"], p["rule"]) for p in ei.value.problems}
    assert ("factors.tcp.flavour", "unknown key (did you mean tcp.flavor?)") in paths
    assert any(p == "factors.switch.buffer" and "lots" in str(g["got"])
               for p, g in ((q["path"], q) for q in ei.value.problems))
    assert len(ei.value.problems) == 2  # each problem once, not once per run
    assert not store.exists()  # nothing was run or stored
    assert main(["sweep", str(study), "--store", str(store), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "nothing was run" in err and "factors.tcp.flavour: unknown key" in err
    assert "Traceback" not in err and not store.exists()


def test_the_study_files_problems_and_its_runs_problems_come_in_one_error(tmp_path, capsys):
    # Before, the study file's own problems came first (2 here), and the runs' (the simulator's
    # validation of the scenarios they load, the responses) only once those were fixed.
    from sattcp.cli_study import main

    study = real_study(tmp_path, """
        name = "tiny"
        scenario = "base.toml"
        responses = ["efficency"]
        replication = 2
        [overrides]
        "run.duration" = "1s"
        "tcp.mms" = 1000
        [factors]
        "tcp.flavour" = ["reno", "sack"]
        "switch.buffer" = ["1bdp", "lots"]
        "tcp.mss" = [1000]
    """)
    store = tmp_path / "r.duckdb"
    assert main(["sweep", str(study), "--store", str(store), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert f"invalid study {study} (6 problems, nothing was run):" in err, err
    for line in ("  replication: unknown key (did you mean replications? known: ",
                 "  factors.tcp.mss: must be a list of at least 2 levels, got [1000]",
                 "  factors.tcp.flavour: unknown key (did you mean tcp.flavor?)",
                 "  overrides.tcp.mms: unknown key (did you mean tcp.mss?)",
                 '  factors.switch.buffer: expected a size such as "9180B", "100pkt" or "0.5bdp", got "lots"',
                 "  responses[0]: not a summary value of a run (known: "):
        assert line in err, (line, err)
    assert not store.exists()
    # The Python API's load_study still checks the file alone.
    with pytest.raises(StudyError) as ei:
        load_study(study)
    assert [p["path"] for p in ei.value.problems] == ["replication", "factors.tcp.mss"]


def test_an_invalid_base_scenario_or_override_is_named_by_where_the_study_sets_it(tmp_path):
    study = real_study(tmp_path, TINY.replace('"run.duration" = "1s"',
                                              '"run.duration" = "1s"\n"tcp.mss" = 0'))
    with pytest.raises(StudyError) as ei:
        run_sweep(study, tmp_path / "r.duckdb", jobs=1, progress=False)
    assert [p["path"] for p in ei.value.problems] == ["overrides.tcp.mss"]
    (tmp_path / "base.toml").write_text((tmp_path / "base.toml").read_text()
                                        .replace('rate = "45Mbps"', 'rate = "45Mbs"'))
    study.write_text(textwrap.dedent(TINY))
    with pytest.raises(StudyError) as ei:
        run_sweep(study, tmp_path / "r.duckdb", jobs=1, progress=False)
    assert [p["path"] for p in ei.value.problems] == ["scenario base.toml: links.bottleneck.rate"]


def test_a_response_that_no_run_returns_is_an_error_up_front(tmp_path):
    study = real_study(tmp_path, TINY.replace('"timeouts"', '"efficency"'))
    with pytest.raises(StudyError) as ei:
        run_sweep(study, tmp_path / "r.duckdb", jobs=1, progress=False)
    (p,) = ei.value.problems
    assert p["path"] == "responses[1]" and p["got"] == "efficency" and "efficiency" in p["rule"]


@pytest.mark.parametrize("body, path, rule", [
    ('name = "x"\nscenario = "base.toml"\nfactors = 3', "factors", "must be a table"),
    ('scenario = "base.toml"\n[factors]\n"tcp.flavor" = "reno"', "factors.tcp.flavor",
     "must be a list"),
    ('scenario = "base.toml"\noverrides = ["a"]\n[factors]\nx = [1, 2]', "overrides",
     "must be a table"),
    ('blocks = "x"\n[factors]\nx = [1, 2]', "blocks", "must be an array of tables"),
    ('[[blocks]]\nscenario = 3\n[factors]\nx = [1, 2]', "blocks[0].scenario", "is required"),
    ('scenario = "base.toml"\nquick = 5\n[factors]\nx = [1, 2]', "quick", "must be a table"),
    ('scenario = "base.toml"\nname = 5\n[factors]\nx = [1, 2]', "name", "non-empty string"),
    ('scenario = "base.toml"\nresponses = "efficiency"\n[factors]\nx = [1, 2]', "responses",
     "must be a non-empty list"),
    ('scenario = "base.toml"\nseeds = [1, 2, 1]\n[factors]\nx = [1, 2]', "seeds",
     "must be distinct"),
    ('scenario = "base.toml"\nreplications = true\n[factors]\nx = [1, 2]', "replications",
     "integer >= 1"),
    ('scenario = "base.toml"\n[factors]\nx = [1, {a = 2}]', "factors.x",
     "levels must be strings, numbers or booleans"),
    ('scenario = "base.toml"\n[overrides]\n"run.duration" = ["1s"]\n[factors]\nx = [1, 2]',
     "overrides.run.duration", "must be a string, number or boolean"),
    ('scenario = "base.toml"\nreplications = 1000000000\n[factors]\nx = [1, 2]', "replications",
     "at most 100,000 runs"),
    ('scenario = "base.toml"\nreplications = 30000\n[factors]\nx = [1, 2]\ny = [1, 2]',
     "replications", "would have 120,000 runs (1 block(s) x 2 x 2 levels x 30,000 seeds); "
     "at most 100,000"),
])
def test_malformed_study_files_say_where_and_what(tmp_path, capsys, body, path, rule):
    from sattcp.cli_study import main

    study = write_study(tmp_path, body)
    with pytest.raises(StudyError) as ei:
        load_study(study)
    assert any(p["path"] == path and rule in p["rule"] for p in ei.value.problems), ei.value.problems
    assert main(["sweep", str(study), "--store", str(tmp_path / "r.duckdb"), "--runner",
                 "test_sweep:fake_runner", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert f"  {path}: " in err and "Traceback" not in err, err
    assert not (tmp_path / "r.duckdb").exists()


def test_editing_the_scenario_or_changing_build_runs_again_and_old_runs_are_not_analysed(
        tmp_path, monkeypatch, capsys):
    import sattcp
    from sattcp.cli_study import main

    monkeypatch.delenv("SATTCP_HOST_ID", raising=False)  # the machine's own name below
    study = real_study(tmp_path, TINY)
    store = tmp_path / "r.duckdb"
    s = run_sweep(study, store, jobs=1, progress=False)
    assert (s.total, s.ok, s.skipped, s.stale) == (2, 2, 0, 0)
    assert run_sweep(study, store, jobs=1, progress=False).skipped == 2
    with Store(store, read_only=True) as st:
        first = st.runs("tiny").set_index("tcp.flavor")
    # The run's record alone says what ran (every key, defaults included) and repeats it.
    cfg = json.loads(first.loc["sack", "config"])
    assert cfg["tcp"]["flavor"] == "sack" and cfg["run"] == {"duration": "1s", "seed": 1, "chain_hops": False}
    assert cfg["links"]["bottleneck"]["rate"] == "45Mbps" and cfg["tcp"]["min_rto"] == "200ms"
    assert sattcp.run(cfg).summary["digest"] == first.loc["sack", "digest"]
    assert first.loc["sack", "build"] == build_id() and first.loc["sack", "seed"] == 1
    # Where its wall time was measured: this machine (the workers' host_id).
    assert set(first["host"]) == {host_id()} and host_id().endswith(("CPU", "CPUs"))

    base = tmp_path / "base.toml"
    base.write_text(base.read_text().replace('rate = "45Mbps"', 'rate = "10Mbps"'))
    s = run_sweep(study, store, jobs=1, progress=False)
    assert (s.ok, s.skipped, s.stale) == (2, 0, 2)  # the edit made the runs run again
    with Store(store, read_only=True) as st:
        now = st.runs("tiny").set_index("tcp.flavor")
        assert len(st.runs("tiny", include_stale=True)) == 4
    assert set(now.index) == {"reno", "sack"}  # analyses see only the current runs
    cap = now.loc["sack", "summary"]
    assert json.loads(cap)["capacity_bps"] < json.loads(first.loc["sack", "summary"])["capacity_bps"]

    monkeypatch.setenv("SATTCP_BUILD_ID", "9.9.9+upgraded")
    monkeypatch.setenv("SATTCP_HOST_ID", "node-7 (a cluster's name)")
    assert main(["sweep", str(study), "--store", str(store), "--no-progress", "-j", "1"]) == 0
    out, err = capsys.readouterr()
    assert "2 runs, 0 already stored, 2 ok" in out and "4 stored run(s) of tiny" in err
    with Store(store, read_only=True) as st:
        assert set(st.runs("tiny")["build"]) == {"9.9.9+upgraded"}
        assert set(st.runs("tiny")["host"]) == {"node-7 (a cluster's name)"}
        assert st.builds("tiny") == {"9.9.9+upgraded": 2}


@pytest.mark.parametrize("body, path, rule, got", [
    ('seeds = [1, 1]', "seeds",
     "must be distinct: 1 is repeated (a repeated seed repeats the same run)", [1, 1]),
    ('seeds = [3, 1, 2, 1, 3]', "seeds",
     "must be distinct: 3 and 1 are repeated (a repeated seed repeats the same run)",
     [3, 1, 2, 1, 3]),
    ('seeds = [1, -1, 2]', "seeds", "must be integers from 0 to 2^64 - 1: -1 is not", [1, -1, 2]),
    (f'seeds = {list(range(12)) * 2}', "seeds", "must be distinct: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 "
     "and 2 more are repeated (a repeated seed repeats the same run)", list(range(12)) * 2),
    ('responses = ["efficiency", "efficiency"]', "responses",
     "must be distinct: efficiency is repeated", ["efficiency", "efficiency"]),
    ('[overrides]\nx = 3', "overrides.x",
     "is also a factor (a key is either a factor or an override)", 3),
])
def test_a_study_problem_shows_what_was_given_and_names_the_culprit_in_the_rule(
        tmp_path, body, path, rule, got):
    study = write_study(tmp_path, f'scenario = "base.toml"\n{body}\n[factors]\nx = [1, 2]\n')
    with pytest.raises(StudyError) as ei:
        load_study(study)
    assert ei.value.problems == [{"path": path, "rule": rule, "got": got}]


def test_repeated_levels_unknown_labels_and_block_names_show_what_was_given(tmp_path):
    study = write_study(tmp_path, """
        [factors]
        x = [1, 2, 1]
        y = ["a", "b"]
        [[blocks]]
        name = "one"
        scenario = "base.toml"
        levels.y = {a = 1, c = 2, d = 3}
        levels.z = {a = 1}
        [[blocks]]
        name = "one"
        scenario = "base.toml"
        """)
    with pytest.raises(StudyError) as ei:
        load_study(study)
    assert ei.value.problems == [
        {"path": "factors.x", "rule": "levels must be distinct: 1 is repeated", "got": [1, 2, 1]},
        {"path": "blocks[0].levels.y", "rule": "labels not among the levels ['a', 'b']: c, d",
         "got": {"a": 1, "c": 2, "d": 3}},
        {"path": "blocks[0].levels.z.a", "rule": "not a factor (or not a table of label = value)",
         "got": 1},
        {"path": "blocks[1].name", "rule": "must be distinct: one is also the name of blocks[0]",
         "got": "one"},
    ]
    assert "blocks[1].name: must be distinct: one is also the name of blocks[0], got one" in str(ei.value)


def test_a_study_file_nested_too_deeply_is_a_study_error(tmp_path, capsys):
    from sattcp.cli_study import main

    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 1000 + "]" * 1000 + "\n")
    assert main(["sweep", str(deep), "--store", str(tmp_path / "r.duckdb"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert f"invalid study {deep}" in err and "nested too deeply" in err and "Traceback" not in err, err
    assert not (tmp_path / "r.duckdb").exists()


def test_study_store_and_simulator_errors_are_sattcp_errors():
    # Before, StudyError and StoreError were bare ValueErrors and SimulatorUnavailable a
    # RuntimeError: `except sattcp.SattcpError` missed them.
    from sattcp.errors import SattcpError
    from sattcp.store import StoreLocked, StoreMissing
    from sattcp.sweep import SimulatorUnavailable

    for cls, base in ((StudyError, ValueError), (StoreError, ValueError), (StoreMissing, FileNotFoundError),
                      (StoreLocked, ValueError), (SimulatorUnavailable, RuntimeError)):
        assert issubclass(cls, SattcpError) and issubclass(cls, base), cls
    with pytest.raises(SattcpError, match="no results store"):
        Store("/nonexistent-sattcp-store.duckdb", read_only=True)


def test_a_key_given_twice_or_a_quick_override_of_a_factor_is_a_problem_not_dropped(tmp_path):
    # TOML takes `tcp.flavor = [...]` and `"tcp.flavor" = [...]` as two keys; flattened, the
    # last one won without a word, and a [quick] override of a factor was silently ignored
    # (the factor's levels are set after the overrides).
    study = real_study(tmp_path, TINY.replace('"tcp.flavor" = ["reno", "sack"]',
                                              'tcp.flavor = ["reno", "sack"]\n"tcp.flavor" = ["newreno", "vanilla"]')
                       .replace('"run.duration" = "1s"', '"run.duration" = "1s"\nrun.duration = "2s"')
                       + '[quick]\noverrides = { "tcp.flavor" = "vanilla", "run.duration" = "1s" }\n')
    with pytest.raises(StudyError) as ei:
        load_study(study)
    got = {(p["path"], p["rule"]) for p in ei.value.problems}
    twice = "is given twice (as a dotted key and as a quoted one, or as a table): give it once"
    assert got == {("factors.tcp.flavor", twice), ("overrides.run.duration", twice),
                   ("quick.overrides.tcp.flavor", "is also a factor (a key is either a factor or an override)")}, got
    # Given once each way, the same study is valid, and the nested and dotted forms agree.
    study.write_text(study.read_text().replace('"tcp.flavor" = ["newreno", "vanilla"]\n', "")
                     .replace('run.duration = "2s"\n', "").replace('"tcp.flavor" = "vanilla", ', ""))
    s = load_study(study)
    assert s.factors == {"tcp.flavor": ("reno", "sack")} and s.overrides == {"run.duration": "1s"}


def test_a_bad_override_is_named_where_the_study_sets_it(tmp_path):
    # An unknown override table ("bogus.key") was blamed on the base scenario ("scenario
    # base.toml: bogus: unknown key"), and a bad [quick] override was named as overrides.KEY.
    study = real_study(tmp_path, TINY.replace('"run.duration" = "1s"', '"run.duration" = "1s"\n"bogus.key" = 1'))
    with pytest.raises(StudyError) as ei:
        load_study(study).runs(core=True)
    assert [(p["path"], p["rule"]) for p in ei.value.problems] == [("overrides.bogus.key", "unknown key")], ei.value.problems
    study = real_study(tmp_path, TINY + '[quick]\noverrides = { "run.duration" = "-1s" }\n')
    with pytest.raises(StudyError) as ei:
        load_study(study).quick().runs(core=True)
    assert [p["path"] for p in ei.value.problems] == ["quick.overrides.run.duration"], ei.value.problems


def test_a_blocks_override_of_a_factor_is_a_problem(tmp_path):
    # It was dropped without a word: the block's runs took the factor's levels.
    study = write_study(tmp_path, '[factors]\nx = [1, 2]\n[[blocks]]\nname = "b"\nscenario = "base.toml"\n'
                                  'overrides = { x = 3 }\n')
    with pytest.raises(StudyError) as ei:
        load_study(study)
    assert ei.value.problems == [{"path": "blocks[0].overrides.x",
                                  "rule": "is also a factor (a key is either a factor or an override)", "got": 3}]


def test_a_runner_or_cluster_of_the_wrong_kind_is_refused_before_anything_runs(tmp_path):
    """A runner given as a string or as a lambda failed every run (each stored as failed, so that
    the rerun with the right runner skipped them); cluster=5 raised Dask's TypeError after the
    store was created."""
    study = write_study(tmp_path, SIMPLE)
    store = tmp_path / "r.duckdb"
    for runner, said in (("test_sweep:fake_runner", "runner: must be a function"), (lambda s, seed=None, overrides=None: None, "runner: must pickle")):
        with pytest.raises(StudyError) as e:
            run_sweep(study, store, jobs=2, runner=runner, progress=False)
        assert said in str(e.value), e.value
    with pytest.raises(ValueError, match=r"cluster: must be a scheduler address .* got int 5"):
        run_sweep(study, store, jobs=2, runner=fake_runner, cluster=5, progress=False)
    assert not store.exists()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_notice_during_a_sweep_gets_its_own_line_under_a_terminals_status_line():
    """Before, a notice (a locked store, a lost Dask worker) was printed over the start of the
    status line, which a terminal keeps after a carriage return: the line's end stayed after it."""
    term = _Terminal()
    prog = Progress("sweep s", 24, stream=term)
    prog.done = 3
    prog.update(force=True)
    prog.say("sweep: hello")
    screen = term.getvalue()
    # The status line, then (cleared) the notice on a line of its own, then the status line anew.
    first, notice, again = screen.split("\x1b[2K")[1:]
    assert first.startswith("sweep s: 3/24 finished") and first.endswith("\r")
    assert notice == "sweep: hello\n"
    assert again.startswith("sweep s: 3/24 finished") and again.endswith("\r")
    plain = io.StringIO()  # not a terminal (a log file): the message as a line, nothing else
    Progress("sweep s", 24, stream=plain).say("sweep: hello")
    assert plain.getvalue() == "sweep: hello\n"


def test_cli_sweep_set_overrides_every_run_but_not_a_factor_or_the_seed(tmp_path, capsys):
    # `sattcp sweep --set`: one parameter changed for the whole study from the command line,
    # over the study's (and its [quick]) overrides, recorded in the stored definition.
    from sattcp.cli_study import main

    study = write_study(tmp_path, SIMPLE)
    store = tmp_path / "r.duckdb"
    argv = ["sweep", str(study), "--store", str(store), "--runner", "test_sweep:fake_runner",
            "--no-progress", "--quick"]
    assert main([*argv, "--set", "run.duration=3s", "--set", "tcp={mss=1000}"]) == 0
    with Store(store, read_only=True) as s:
        over = [json.loads(o) for o in s.runs("simple-quick")["overrides"]]
        assert len(over) == 24 and all(o["run.duration"] == "3s" and o["tcp.mss"] == 1000 for o in over)
        assert s.study_definition("simple-quick")["set"] == {"run.duration": "3s", "tcp.mss": 1000}
    capsys.readouterr()
    fresh = tmp_path / "none.duckdb"
    for sets, err in ((["tcp.flavor=vegas"], "--set tcp.flavor: is the study's factor tcp.flavor"),
                      (["switch={policy='epd'}"], "--set switch.policy: is the study's factor switch.policy"),
                      (["run.seed=3"], "--set run.seed: the seeds are the study's"),
                      (["tcp.mss=1000", "tcp.mss=2000"], "--set tcp.mss=2000"),
                      (["tcp.bogus=1"], "--set tcp.bogus: unknown key")):
        args = ["sweep", str(study), "--store", str(fresh), "--no-progress", "--quick"]
        assert main([*args, *(x for s in sets for x in ("--set", s))]) == 2, sets
        got = capsys.readouterr().err
        assert err in got and not fresh.exists(), (sets, got)
