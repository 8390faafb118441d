"""The DuckDB results store."""

from __future__ import annotations

import duckdb
import pandas as pd
import pytest

from sattcp.store import Store


def _flows(n: int, extra: bool = False) -> pd.DataFrame:
    df = pd.DataFrame({"flow": range(n), "throughput_bps": [1e6 * (i + 1) for i in range(n)]})
    if extra:
        df["retransmits"] = 3
    return df


def test_record_and_read_back(tmp_path):
    path = tmp_path / "r.duckdb"
    with Store(path) as s:
        s.save_study("st", {"factors": {"tcp.flavor": ["reno", "sack"]}})
        s.record_run("st", "k1", factors={"tcp.flavor": "reno"}, status="ok", seed=1,
                     summary={"efficiency": 0.5, "fairness": 0.9, "events": 10, "digest": "ab",
                              "custom": 7.5}, flows=_flows(2))
        s.record_run("st", "k2", factors={"tcp.flavor": "sack"}, status="failed",
                     error="SimulationError: boom")
    with Store(path, read_only=True) as s:
        runs = s.runs("st")
        assert list(runs["run_key"]) == ["k1", "k2"]
        ok = runs.set_index("run_key").loc["k1"]
        assert ok["efficiency"] == 0.5 and ok["tcp.flavor"] == "reno" and ok["custom"] == 7.5
        assert runs.set_index("run_key").loc["k2", "error"] == "SimulationError: boom"
        assert s.counts("st") == {"ok": 1, "failed": 1}
        assert len(s.flows("st")) == 2
        assert s.study_definition("st")["factors"] == {"tcp.flavor": ["reno", "sack"]}
        with pytest.raises(KeyError, match="no study"):
            s.study_definition("other")


def test_missing_runs_and_retry_failed(tmp_path):
    with Store(tmp_path / "r.duckdb") as s:
        s.record_run("st", "a", factors={}, status="ok")
        s.record_run("st", "b", factors={}, status="failed", error="x")
        assert s.missing_runs("st", ["a", "b", "c"]) == ["c"]
        assert s.missing_runs("st", ["a", "b", "c"], retry_failed=True) == ["b", "c"]
        assert s.missing_runs("other", ["a"]) == ["a"]


def test_rerecording_replaces_run_and_flows_and_new_columns_appear(tmp_path):
    with Store(tmp_path / "r.duckdb") as s:
        s.record_run("st", "a", factors={}, status="failed", error="x")
        s.record_run("st", "a", factors={}, status="ok", flows=_flows(3))
        s.record_run("st", "a", factors={}, status="ok", flows=_flows(2, extra=True))
        assert s.counts("st") == {"ok": 1}
        fl = s.flows("st")
        assert len(fl) == 2 and "retransmits" in fl.columns


def test_each_run_is_committed_on_its_own(tmp_path):
    path = tmp_path / "r.duckdb"
    s = Store(path)
    s.record_run("st", "a", factors={"x": 1}, status="ok", flows=_flows(1))
    # Another connection (as after a crash and restart) sees the committed run at once.
    s.con.execute("CHECKPOINT")
    s.close()
    con = duckdb.connect(str(path), read_only=True)
    assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 1
    con.close()


def test_export_parquet_and_csv(tmp_path):
    with Store(tmp_path / "r.duckdb") as s:
        s.record_run("st", "a", factors={"x": 1}, status="ok", summary={"efficiency": 0.1},
                     flows=_flows(2))
        s.record_run("other", "b", factors={"x": 2}, status="ok")
        files = s.export(tmp_path / "pq", "parquet", study="st")
        assert sorted(p.name for p in files) == ["flows.parquet", "runs.parquet"]
        assert len(pd.read_parquet(tmp_path / "pq" / "runs.parquet")) == 1
        s.export(tmp_path / "csv", "csv")
        assert len(pd.read_csv(tmp_path / "csv" / "runs.csv")) == 2
        with pytest.raises(ValueError, match="format"):
            s.export(tmp_path, "xlsx")


def test_bad_status_rejected(tmp_path):
    with Store(tmp_path / "r.duckdb") as s, pytest.raises(ValueError, match="status"):
        s.record_run("st", "a", factors={}, status="maybe")


def test_read_only_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        Store(tmp_path / "none.duckdb", read_only=True)
