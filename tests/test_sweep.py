"""Sweeps: study files, run keys, the pool, failures, resume after kill -9, Dask."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from sattcp.store import Store
from sattcp.sweep import StudyError, load_study, missing, run_sweep

TESTS = Path(__file__).resolve().parent
PYTHON_DIR = TESTS.parent / "python"

LEVEL_VALUE = {"vanilla": 0.0, "reno": 0.1, "newreno": 0.2, "sack": 0.25, "epd": 0.0, "sd": 0.02}


def marker_name(seed: int | None, overrides: dict) -> str:
    return hashlib.sha256(json.dumps([seed, overrides], sort_keys=True).encode()).hexdigest()[:16]


def fake_runner(scenario, seed=None, overrides=None, progress=False):
    """A deterministic stand-in for sattcp.api.run (module level, so it pickles)."""
    overrides = dict(overrides or {})
    markers = os.environ.get("SATTCP_TEST_MARKERS")
    if markers:
        Path(markers, marker_name(seed, overrides)).touch()
    delay = float(os.environ.get("SATTCP_TEST_DELAY", "0"))
    if delay:
        time.sleep(delay)
    if overrides.get("tcp.flavor") == "broken":
        raise ValueError("tcp.flavor: unknown flavour, got 'broken'")
    buf = str(overrides.get("switch.buffer", "1"))
    b = float("".join(c for c in buf if c.isdigit() or c == ".") or 1)
    eff = 0.5 + LEVEL_VALUE.get(overrides.get("tcp.flavor"), 0) \
        + LEVEL_VALUE.get(overrides.get("switch.policy"), 0) + 0.01 * min(b, 10) + 0.001 * (seed or 0)
    summary = {"efficiency": eff, "fairness": 1 - eff / 3, "events": 1000 + (seed or 0),
               "digest": f"{seed:x}", "sim_time_s": 1.0, "seed": seed, "custom_metric": 2 * eff}
    flows = pd.DataFrame({"flow": [0, 1], "throughput_bps": [eff * 1e6, eff * 2e6]})
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


def test_failures_are_recorded_and_do_not_stop_the_sweep(tmp_path, capsys):
    study = write_study(tmp_path, SIMPLE.replace('["reno", "sack"]', '["reno", "broken"]'))
    store = tmp_path / "r.duckdb"
    s = run_sweep(study, store, jobs=2, runner=fake_runner, progress=True)
    assert (s.ok, s.failed) == (12, 12)
    err = capsys.readouterr().err
    assert "24/24 finished (12 failed)" in err and "ETA" in err
    with Store(store, read_only=True) as st:
        failed = st.runs("simple").query("status == 'failed'")
        assert failed["error"].str.contains("unknown flavour").all()
    # Failed runs are not retried unless asked.
    assert run_sweep(study, store, jobs=1, runner=fake_runner, progress=False).skipped == 24
    again = run_sweep(study, store, jobs=1, runner=fake_runner, progress=False, retry_failed=True)
    assert again.skipped == 12 and again.failed == 12


def _sweep_in_subprocess(study: Path, store: Path, markers: Path, delay: float) -> subprocess.Popen:
    code = textwrap.dedent(f"""
        import sys
        sys.path[:0] = [{str(TESTS)!r}, {str(PYTHON_DIR)!r}]
        from test_sweep import fake_runner
        from sattcp.sweep import run_sweep
        run_sweep({str(study)!r}, {str(store)!r}, jobs=2, runner=fake_runner, progress=False)
    """)
    env = {**os.environ, "SATTCP_TEST_MARKERS": str(markers), "SATTCP_TEST_DELAY": str(delay),
           "PYTHONPATH": os.pathsep.join([str(TESTS), str(PYTHON_DIR)])}
    return subprocess.Popen([sys.executable, "-c", code], env=env, start_new_session=True)


def test_resume_after_kill_9(tmp_path):
    study = write_study(tmp_path, SIMPLE)
    store = tmp_path / "r.duckdb"
    first, second = tmp_path / "m1", tmp_path / "m2"
    first.mkdir()
    second.mkdir()
    proc = _sweep_in_subprocess(study, store, first, delay=0.3)
    deadline = time.monotonic() + 60
    while len(list(first.iterdir())) < 8 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "the sweep finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)  # the parent and its workers, as a lost node would
    proc.wait()

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
    proc = _sweep_in_subprocess(study, store, markers, delay=0.3)
    deadline = time.monotonic() + 60
    while len(list(markers.iterdir())) < 8 and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the whole foreground group
    assert proc.wait(timeout=30) != 0
    with Store(store, read_only=True) as st:
        saved = st.runs("simple")
    assert 0 < len(saved) < 24 and set(saved["status"]) == {"ok"}
    s = run_sweep(study, store, jobs=2, runner=fake_runner, progress=False)
    assert s.ok == 24 and s.skipped == len(saved)


def test_dask_local_cluster(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    study = write_study(tmp_path, SIMPLE)
    store = tmp_path / "r.duckdb"
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster, \
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
])
def test_cli_bad_input_exits_2(tmp_path, capsys, argv, message):
    from sattcp.cli_study import main

    study = write_study(tmp_path, SIMPLE)
    store = tmp_path / "r.duckdb"
    run_sweep(study, store, jobs=1, runner=fake_runner, progress=False)
    argv = [a.format(store=store, tmp=tmp_path, study=study) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("sattcp ") and message in err, err


def test_cli_sweep_with_failures_exits_1(tmp_path, capsys):
    from sattcp.cli_study import main

    study = write_study(tmp_path, SIMPLE.replace('["reno", "sack"]', '["reno", "broken"]'))
    assert main(["sweep", str(study), "--store", str(tmp_path / "r.duckdb"), "--runner",
                 "test_sweep:fake_runner", "--no-progress"]) == 1
    assert "12 failed" in capsys.readouterr().out


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
    with Store(store, read_only=True) as st:
        runs = st.runs("simple")
    failed = runs[runs["status"] == "failed"]
    assert set(failed["tcp.flavor"]) == {"crash"} and set(failed["seed"]) == {1}
    assert failed["error"].str.contains("worker process died").all()
