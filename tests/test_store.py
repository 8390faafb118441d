"""The DuckDB results store."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from sattcp.store import FLOW_COLUMNS, LINK_COLUMNS, RUN_COLUMNS, SCHEMA_VERSION, Store, StoreError, StoreLocked


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


# -- a declared schema: the store never takes its types from the data ------------------------

ROOT = Path(__file__).resolve().parents[1]


def test_flows_that_never_complete_then_flows_that_do(tmp_path):
    # Schema 1 typed completed_at_s NULL after a first run without completions and refused
    # every later value (a DuckDB traceback on every rerun).
    with Store(tmp_path / "r.duckdb") as s:
        s.record_run("www", "a", factors={}, status="ok",
                     flows=pd.DataFrame({"flow": [0, 1], "completed_at_s": [None, None]}))
        s.record_run("transfer", "b", factors={}, status="ok",
                     flows=pd.DataFrame({"flow": [0], "completed_at_s": [3.25]}))
        types = dict(s.con.execute("SELECT column_name, data_type FROM information_schema.columns "
                                   "WHERE table_name = 'flows'").fetchall())
        assert types["completed_at_s"] == "DOUBLE" and types["flow"] == "BIGINT"
        fl = s.flows().set_index("study")
        assert fl.loc["transfer", "completed_at_s"] == 3.25
        assert fl.loc["www", "completed_at_s"].isna().all()


def test_a_value_of_the_wrong_type_is_refused_and_nothing_is_written(tmp_path):
    with Store(tmp_path / "r.duckdb") as s:
        with pytest.raises(StoreError, match="completed_at_s"):
            s.record_run("st", "a", factors={}, status="ok",
                         flows=pd.DataFrame({"flow": [0], "completed_at_s": ["soon"]}))
        assert s.runs("st").empty and s.flows().empty


def test_counters_as_floats_are_stored_whole_and_a_fraction_is_refused_not_truncated(tmp_path):
    # The links' ATM counters are floats (NaN where a link has no cells) in a BIGINT column.
    with Store(tmp_path / "r.duckdb") as s:
        s.record_run("st", "a", factors={}, status="ok",
                     links=pd.DataFrame({"link": pd.Series(["x", None], dtype="string"), "cells": [2.0**53, np.nan],
                                         "drops_by_reason": [{}, {"cells_epd": 3}]}))
        got = s.con.execute("SELECT link, cells, drops_by_reason FROM links ORDER BY cells NULLS LAST").fetchall()
        assert got == [("x", 2**53, "{}"), (None, None, '{"cells_epd": 3}')]
        with pytest.raises(StoreError, match=r"column 'cells' must be BIGINT: .*1\.5.*truncated"):
            s.record_run("st", "b", factors={}, status="ok", links=pd.DataFrame({"cells": [1.5]}))
        assert s.missing_runs("st", ["a", "b"]) == ["b"]


# -- rows as the core writes them, typed without pandas; runs written in batches (issue 15) ---


def test_rows_are_typed_as_their_dataframe_is_or_left_to_it():
    from sattcp.store import _typed_frame, _typed_rows

    links = [{"link": "bn", "cells": 7, "delay_s": 0, "utilization": 0.5, "drops_by_reason": {"cells_epd": 3}},
             {"link": None, "cells": None, "delay_s": 0.25, "utilization": None, "drops_by_reason": {}},
             {"link": "acc", "cells": 2**53, "delay_s": 1, "utilization": 1, "drops_by_reason": None}]
    fast = _typed_rows(links, LINK_COLUMNS)
    assert fast is not None and fast[1] == {}
    assert fast[0].equals(_typed_frame(pd.DataFrame(links), LINK_COLUMNS)[0])
    assert fast[0].column("drops_by_reason").to_pylist() == ['{"cells_epd": 3}', "{}", None]
    assert fast[0].column("delay_s").type == "double" and fast[0].column("cells").to_pylist() == [7, None, 2**53]
    # Beyond 2^53 with a null beside it, the DataFrame path goes through a float; rows are exact.
    big = _typed_rows([{"flow": 2**62 - 1}, {"flow": None}], FLOW_COLUMNS)
    assert big is not None and big[0].column("flow").to_pylist() == [2**62 - 1, None]
    # Anything but plain values is left to the DataFrame path (which converts or refuses it).
    for rows in ([{"flow": 1.0}],                    # a float in a BIGINT column: a cast would truncate 1.5
                 [{"flow": True}],                   # a boolean
                 [{"flow": 1, "mine": 2}],           # an undeclared column
                 [{"flow": 1}, {"flow": 2, "role": "data"}],  # rows with other keys
                 [{"throughput_bps": 2**53 + 1}],    # an integer that no double holds
                 [{"role": 3}]):
        assert _typed_rows(rows, FLOW_COLUMNS) is None, rows


def test_rows_go_to_the_store_as_their_dataframe_does(tmp_path):
    with Store(tmp_path / "r.duckdb") as s:
        s.record_run("st", "a", factors={}, status="ok", flows=[{"flow": 0, "completed_at_s": None}, {"flow": 1, "completed_at_s": 2.5}],
                     links=[{"link": "x", "cells": 2.0}, {"link": "y", "cells": None}])
        assert s.con.execute("SELECT flow, completed_at_s FROM flows ORDER BY flow").fetchall() == [(0, None), (1, 2.5)]
        assert s.con.execute("SELECT link, cells FROM links ORDER BY link").fetchall() == [("x", 2), ("y", None)]
        with pytest.raises(StoreError, match=r"column 'cells' must be BIGINT: .*1\.5.*truncated"):
            s.record_run("st", "b", factors={}, status="ok", links=[{"cells": 1.5}])
        with pytest.raises(StoreError, match=r"summary value 'efficiency' must be DOUBLE, got str 'n/a'"):
            s.record_run("st", "b", factors={}, status="ok", summary={"efficiency": "n/a"})
        assert s.missing_runs("st", ["a", "b"]) == ["b"]


def test_runs_written_together_are_one_transaction_and_a_keys_later_record_wins(tmp_path):
    from sattcp.store import RecordRefused

    with Store(tmp_path / "r.duckdb") as s:
        s.record_runs([("st", "a", {"factors": {}, "status": "failed", "error": "x"}),
                       ("st", "b", {"factors": {}, "status": "ok", "flows": _flows(2)}),
                       ("st", "a", {"factors": {}, "status": "ok", "flows": _flows(3, extra=True)})])
        assert dict(s.con.execute("SELECT run_key, status FROM runs").fetchall()) == {"a": "ok", "b": "ok"}
        assert dict(s.con.execute("SELECT run_key, count(*) FROM flows GROUP BY run_key").fetchall()) == {"a": 3, "b": 2}
        assert s.con.execute("SELECT count(retransmits) FROM flows WHERE run_key = 'a'").fetchone() == (3,)
        # Rerun: the rows of the runs replaced go, the others stay.
        s.record_runs([("st", "b", {"factors": {}, "status": "ok", "flows": _flows(1)}),
                       ("st", "c", {"factors": {}, "status": "ok"})])
        assert dict(s.con.execute("SELECT run_key, count(*) FROM flows GROUP BY run_key").fetchall()) == {"a": 3, "b": 1}
        # A run that cannot be stored: nothing of the batch is written.
        with pytest.raises(RecordRefused, match="cells"):
            s.record_runs([("st", "d", {"factors": {}, "status": "ok"}),
                           ("st", "e", {"factors": {}, "status": "ok", "links": pd.DataFrame({"cells": [0.5]})})])
        assert s.missing_runs("st", ["a", "b", "c", "d", "e"]) == ["d", "e"]


def test_the_writer_commits_waiting_runs_together_and_spaces_commits_by_their_cost(tmp_path):
    import time

    from sattcp.store import StoreWriter

    w = StoreWriter(tmp_path / "w.duckdb", interval_s=1e6)  # (no commit but the first by itself)
    w.add("st", "a", factors={}, status="ok", links=[{"link": "x", "cells": 1}])
    assert w.written == 1 and w.took > 0 and w.due_in() > 0
    w.add("st", "b", factors={}, status="ok", links=[{"link": "x", "cells": 1.5}])  # refused: a failed run
    w.add("st", "c", factors={}, status="ok", flows=_flows(2))
    assert w.written == 1 and len(w.pending) == 2
    # Each waiting run was checked and typed as it came (a sweep's process does that while its
    # workers run, not in the commit after the last run): the refused one is already failed.
    assert [p.row.column("status").to_pylist() for p in w.pending] == [["failed"], ["ok"]]
    seen = []
    assert w.flush(then=lambda st: seen.append(sorted(st.run_keys("st", "ok")))) and w.written == 3 and not w.pending
    assert seen == [["a", "c"]]  # ``then`` reads the store after the commit, in the same opening
    assert w.flush(then=seen.append) and seen == [["a", "c"]]  # nothing waiting: no opening, no call
    with Store(tmp_path / "w.duckdb", read_only=True) as s:
        runs = s.con.execute("SELECT run_key, status, error FROM runs ORDER BY run_key").fetchall()
    assert [r[:2] for r in runs] == [("a", "ok"), ("b", "failed"), ("c", "ok")]
    assert runs[1][2].startswith("its results cannot be stored: column 'cells' must be BIGINT")
    # The next commit waits at least SHARE times as long as the last one took, at most MAX_INTERVAL_S.
    w.interval_s = 0.0
    w.last, w.took = time.monotonic(), 0.5
    assert 0.5 * w.SHARE - 5 < w.due_in() <= 0.5 * w.SHARE
    w.last, w.took = time.monotonic(), 100.0
    assert w.MAX_INTERVAL_S - 5 < w.due_in() <= w.MAX_INTERVAL_S
    w.took = 0.0
    assert w.due_in() == 0.0


def test_the_writer_commits_once_max_batch_runs_wait_whatever_the_spacing(tmp_path, monkeypatch):
    """The sweep's process peaks in a commit, by about 0.2 MB per run: before, the runs that
    waited for a commit had no bound but time (up to 10 s of them), and 3,000 quick runs of a
    local sweep peaked at 873 MB (312 MB with the bound)."""
    from sattcp.store import StoreWriter

    monkeypatch.setattr(StoreWriter, "MAX_BATCH", 5)
    w = StoreWriter(tmp_path / "w.duckdb", interval_s=1e6)  # (no commit but the first by spacing)
    most = 0
    for i in range(23):
        w.add("st", f"r{i}", factors={}, status="ok", flows=_flows(2))
        most = max(most, len(w.pending))
    assert most == 4 and w.written == 1 + 4 * 5 and len(w.pending) == 2
    assert w.flush() and w.written == 23


def _tiny_run(scenario: str, **overrides):
    sattcp = pytest.importorskip("sattcp")
    pytest.importorskip("sattcp._core")
    return sattcp.run(ROOT / "scenarios" / scenario, seed=1, overrides=overrides)


def test_www_study_and_transfer_study_in_one_store_with_links_and_traces(tmp_path):
    www = _tiny_run("kota-geo.toml", **{"run.duration": "3s", "topology.pairs": 2,
                                        "switch.buffer": "1000cells"})
    transfer = _tiny_run("geo-bulk.toml", **{"run.duration": "5s", "app.kind": "transfer",
                                             "app.bytes": 200000, "trace.flows": [0]})
    assert www.flows["completed_at_s"].isna().all()
    assert transfer.flows["completed_at_s"].notna().all()
    with Store(tmp_path / "r.duckdb") as s:
        for study, r in (("www", www), ("transfer", transfer)):
            s.record_run(study, "k", factors={}, status="ok", summary=r.summary, flows=r.flows,
                         links=r.links, traces=r.traces, config=r.config)
        fl = s.flows("transfer")
        assert fl["completed_at_s"].tolist() == transfer.flows["completed_at_s"].tolist()
        links = s.links("www")
        assert len(links) == len(www.links) and links["cells"].notna().any()
        assert json.loads(links["drops_by_reason"].iloc[0]) == www.links["drops_by_reason"].iloc[0]
        tr = s.traces("transfer")
        cwnd = transfer.traces["flow/0/cwnd"]
        got = tr[tr["trace"] == "flow/0/cwnd"]
        assert got["t"].tolist() == cwnd["t"].tolist() and got["value"].tolist() == cwnd["value"].tolist()
        assert json.loads(s.runs("transfer")["config"].iloc[0]) == transfer.config


# -- old, foreign, damaged, newer and locked files ---------------------------------------------

_SCHEMA_1 = """
CREATE TABLE studies (study VARCHAR PRIMARY KEY, definition VARCHAR NOT NULL,
                      created_at TIMESTAMP NOT NULL);
CREATE TABLE runs (study VARCHAR NOT NULL, run_key VARCHAR NOT NULL, block VARCHAR,
    factors VARCHAR NOT NULL, overrides VARCHAR, seed BIGINT, scenario VARCHAR,
    scenario_digest VARCHAR, status VARCHAR NOT NULL, error VARCHAR, efficiency DOUBLE,
    fairness DOUBLE, jain_fairness DOUBLE, events BIGINT, sim_time_s DOUBLE, wall_time_s DOUBLE,
    digest VARCHAR, summary VARCHAR, started_at TIMESTAMP, finished_at TIMESTAMP,
    PRIMARY KEY (study, run_key));
INSERT INTO studies VALUES ('www', '{"factors": {"tcp.flavor": ["reno", "sack"]}}', now());
INSERT INTO runs VALUES ('www', 'k1', 'GEO', '{"tcp.flavor": "reno"}', '{}', 1, 'geo.toml',
    'ab', 'ok', NULL, 0.9, 0.8, 0.95, 10, 1.0, 0.5, 'd1', '{"efficiency": 0.9}', now(), now());
CREATE TABLE flows AS SELECT 'www' AS study, 'k1' AS run_key, 0 AS flow, NULL AS completed_at_s,
    1.5e6 AS throughput_bps, 7 AS custom_counter;
"""


def _schema_1_store(path: Path) -> Path:
    con = duckdb.connect(str(path))
    con.execute(_SCHEMA_1)
    con.close()
    return path


def test_a_schema_1_store_is_migrated_and_keeps_its_runs(tmp_path):
    path = _schema_1_store(tmp_path / "old.duckdb")
    with Store(path, read_only=True) as s:  # reading migrates it too
        assert s.schema_version() == SCHEMA_VERSION
        runs = s.runs("www")
        assert runs["efficiency"].tolist() == [0.9] and runs["tcp.flavor"].tolist() == ["reno"]
        assert runs["build"].tolist() == ["unknown (store schema 1)"]
        assert runs["host"].isna().all()  # not recorded then
        assert s.flows("www")["custom_counter"].tolist() == [7]
    with Store(path) as s:
        s.record_run("transfer", "k2", factors={}, status="ok",
                     flows=pd.DataFrame({"flow": [0], "completed_at_s": [2.5]}))
        assert sorted(s.flows()["completed_at_s"].dropna()) == [2.5]
        assert s.study_definition("www") == {"factors": {"tcp.flavor": ["reno", "sack"]}}


def _as_written_by_schema(path, version, *statements):
    """Rewrites the store at `path` as sattcp with store schema `version` wrote it: `statements`
    drop the columns that schema lacked (and add a user's own), then its version is set."""
    con = duckdb.connect(str(path))
    for sql in statements:
        con.execute(sql)
    con.execute(f"UPDATE meta SET value = '{version}' WHERE key = 'schema_version'")
    con.close()


def test_a_schema_2_store_gains_the_host_column_and_keeps_its_runs(tmp_path, monkeypatch):
    path = tmp_path / "v2.duckdb"
    with Store(path) as s:
        s.record_run("www", "k1", factors={"tcp.flavor": "reno"}, status="ok", seed=3,
                     summary={"efficiency": 0.9, "wall_time_s": 1.5}, flows=_flows(3))
    _as_written_by_schema(path, 2, "ALTER TABLE runs DROP COLUMN host",  # as sattcp 0.1.0 wrote it
                          "ALTER TABLE runs ADD COLUMN \"my note\" VARCHAR DEFAULT 'checked'")  # a user's own
    monkeypatch.setenv("SATTCP_HOST_ID", "node-2")
    with Store(path, read_only=True) as s:  # reading migrates it
        assert s.schema_version() == SCHEMA_VERSION == 5
        runs = s.runs("www")
        assert runs["efficiency"].tolist() == [0.9] and runs["seed"].tolist() == [3]
        assert runs["host"].isna().all() and len(s.flows("www")) == 3
        # Through schema 3 (runs.host) and 4 (links.reordered) to 5 (flows.loss_probes).
        assert s.con.execute("SELECT value FROM meta WHERE key = 'migrated_from'").fetchone() == ("2 3 4",)
        # The declared order, as in a new store's table (exports list the columns in it).
        cols = [r[0] for r in s.con.execute("DESCRIBE runs").fetchall()]
        assert cols == [*RUN_COLUMNS, "my note"] and runs["my note"].tolist() == ["checked"]
    with Store(path) as s:
        s.record_run("www", "k2", factors={"tcp.flavor": "sack"}, status="ok")
        s.record_run("www", "k3", factors={"tcp.flavor": "vegas"}, status="failed", host=None)
        hosts = s.runs("www").set_index("run_key")["host"]
        assert hosts["k2"] == "node-2" and hosts.drop("k2").isna().all()


def test_a_schema_3_store_gains_the_reordered_column_and_keeps_its_links(tmp_path):
    path = tmp_path / "v3.duckdb"
    links = [{"link": "hop0", "from": 0, "to": 1, "packets": 10, "cells": None},
             {"link": "hop0-rev", "from": 1, "to": 0, "packets": 9, "cells": None}]
    with Store(path) as s:
        s.record_run("leo", "k1", factors={}, status="ok", links=links)
    _as_written_by_schema(path, 3, "ALTER TABLE links DROP COLUMN reordered",
                          "ALTER TABLE links ADD COLUMN \"my flag\" BOOLEAN DEFAULT true")  # a user's own
    with Store(path, read_only=True) as s:  # reading migrates it
        assert s.schema_version() == SCHEMA_VERSION == 5
        got = s.links("leo")
        assert got["packets"].tolist() == [10, 9] and got["reordered"].isna().all()
        assert got["my flag"].tolist() == [True, True]
        assert s.con.execute("SELECT value FROM meta WHERE key = 'migrated_from'").fetchone() == ("3 4",)
        # The declared order, as in a new store's table, the user's column after it.
        cols = [r[0] for r in s.con.execute("DESCRIBE links").fetchall()]
        assert cols == ["study", "run_key", *LINK_COLUMNS, "my flag"]
    with Store(path) as s:  # and takes a moving link's count
        s.record_run("leo", "k2", factors={}, status="ok", links=[{**links[0], "reordered": 5}])
        assert s.links("leo").set_index("run_key")["reordered"].get("k2") == 5


def test_a_schema_4_store_gains_the_loss_probe_columns_and_keeps_its_flows(tmp_path):
    path = tmp_path / "v4.duckdb"
    with Store(path) as s:
        s.record_run("mcc", "k1", factors={}, status="ok", flows=_flows(2))
    _as_written_by_schema(path, 4, "ALTER TABLE flows DROP COLUMN loss_probes",
                          "ALTER TABLE flows DROP COLUMN loss_probe_recoveries",
                          "ALTER TABLE flows ADD COLUMN \"my mark\" VARCHAR DEFAULT 'x'")  # a user's own
    with Store(path, read_only=True) as s:  # reading migrates it
        assert s.schema_version() == SCHEMA_VERSION == 5
        got = s.flows("mcc")
        assert len(got) == 2 and got["loss_probes"].isna().all() and got["loss_probe_recoveries"].isna().all()
        assert got["my mark"].tolist() == ["x", "x"]
        assert s.con.execute("SELECT value FROM meta WHERE key = 'migrated_from'").fetchone() == ("4",)
        cols = [r[0] for r in s.con.execute("DESCRIBE flows").fetchall()]
        assert cols == ["study", "run_key", *FLOW_COLUMNS, "my mark"]
    with Store(path) as s:  # and takes a run's counts
        s.record_run("mcc", "k2", factors={}, status="ok",
                     flows=pd.DataFrame({"flow": [0], "loss_probes": [3], "loss_probe_recoveries": [1]}))
        row = s.flows("mcc").set_index("run_key").loc["k2"]
        assert (row["loss_probes"], row["loss_probe_recoveries"]) == (3, 1)


def test_a_moving_links_reordering_is_stored_beside_the_fixed_links_null(tmp_path):
    # The Starlink path falls from 20.7 to 19.9 ms RTT at 15 s under a full window (docs/leo.md).
    r = _tiny_run("modern-starlink.toml", **{"run.duration": "16s"})
    with Store(tmp_path / "r.duckdb") as s:
        s.record_run("leo", "k", factors={}, status="ok", summary=r.summary, flows=r.flows,
                     links=r.links)
        got = s.links("leo").set_index("link")["reordered"]
    moving = got[["bottleneck", "bottleneck-rev"]]
    assert moving.notna().all() and moving["bottleneck"] > 0, got
    assert got.drop(["bottleneck", "bottleneck-rev"]).isna().all(), got


def _garbled(path: Path) -> Path:
    with Store(path) as s:
        for i in range(50):
            s.record_run("st", f"k{i}", factors={"x": i}, status="ok", flows=_flows(200))
    data = bytearray(path.read_bytes())
    for i in range(8192, len(data) - 4096):  # keep the header, damage the blocks
        data[i] = (data[i] * 7 + 3) % 256
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("make, message", [
    (lambda p: p.write_text("name,value\na,1\n"), "not a readable sattcp results store (not a DuckDB file: it lacks DuckDB's header)"),
    (lambda p: p.write_bytes(b""), "not a readable sattcp results store"),
    (lambda p: _garbled(p), "not a readable sattcp results store"),
    (lambda p: duckdb.connect(str(p)).execute("CREATE TABLE sales (x INT)").close(),
     "not a sattcp results store (its tables: sales)"),
    (lambda p: duckdb.connect(str(p)).close(), "holds no results"),
    (lambda p: Store(p).con.execute("UPDATE meta SET value = '99' WHERE key = "
                                    "'schema_version'").close(), "newer sattcp"),
])
def test_unusable_files_are_refused_plainly(tmp_path, capsys, make, message):
    from sattcp.cli_study import main

    path = tmp_path / "bad.duckdb"
    make(path)
    with pytest.raises(StoreError, match=re.escape(message)):
        Store(path, read_only=True).close()
    before = path.read_bytes()
    out = tmp_path / "export"
    for argv in (["analyze", str(path), "--study", "st"],
                 ["export", str(path), "--out", str(out)]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith(f"sattcp {argv[0]}: error:") and "Traceback" not in err, err
        assert "still writing" not in err and "locked" not in err, err
    assert not out.exists()  # no empty files
    (tmp_path / "base.toml").write_text("[run]\nduration = '1s'\n")
    study = tmp_path / "study.toml"
    study.write_text('scenario = "base.toml"\n[factors]\n"tcp.flavor" = ["reno", "sack"]\n')
    sweep = ["sweep", str(study), "--store", str(path), "--runner", "test_sweep:fake_runner",
             "--no-progress"]
    if message == "holds no results" or before == b"":
        assert main(sweep) == 0  # an empty file (touch, mktemp) becomes a new store
    else:
        assert main(sweep) == 2
        err = capsys.readouterr().err
        assert err.startswith("sattcp sweep: error:") and "Traceback" not in err, err
        assert path.read_bytes() == before  # never rewritten


def test_missing_study_in_export_and_analyze(tmp_path, capsys):
    from sattcp.cli_study import main

    with Store(tmp_path / "r.duckdb") as s:
        s.save_study("st", {"factors": {"x": [1, 2]}})
        s.record_run("st", "a", factors={"x": 1}, status="ok", summary={"efficiency": 0.5})
    for argv in (["analyze", str(tmp_path / "r.duckdb"), "--study", "nope"],
                 ["export", str(tmp_path / "r.duckdb"), "--study", "nope", "--out",
                  str(tmp_path / "x")]):
        assert main(argv) == 2
        assert capsys.readouterr().err == f"sattcp {argv[0]}: error: no study 'nope' in {tmp_path / 'r.duckdb'} (studies: st)\n"
    assert not (tmp_path / "x").exists()


def test_a_missing_study_is_a_store_error_and_a_key_error(tmp_path):
    from sattcp.errors import SattcpError
    from sattcp.store import StudyMissing

    with Store(tmp_path / "r.duckdb") as s:
        s.save_study("st", {"factors": {"x": [1, 2]}})
        s.record_run("st", "a", factors={"x": 1}, status="ok")
        for call in (lambda: s.study_definition("nope"), lambda: s.export(tmp_path / "x", study="nope")):
            with pytest.raises(StudyMissing) as e:
                call()
            assert isinstance(e.value, StoreError) and isinstance(e.value, SattcpError) and isinstance(e.value, KeyError)
            assert str(e.value) == f"no study 'nope' in {tmp_path / 'r.duckdb'} (studies: st)"  # not quoted as a KeyError's


def test_locked_hint_only_when_another_process_holds_the_file(tmp_path, capsys, monkeypatch):
    from sattcp.cli_study import main

    # The CLI waits SATTCP_STORE_WAIT_S (30 s by default) for the lock, saying so after 1 s.
    monkeypatch.setenv("SATTCP_STORE_WAIT_S", "1.5")

    path = tmp_path / "r.duckdb"
    with Store(path) as s:
        s.record_run("st", "a", factors={}, status="ok")
    holder = subprocess.Popen(
        [sys.executable, "-c", "import duckdb, sys; c = duckdb.connect(sys.argv[1]); "
         "print('holding', flush=True); sys.stdin.read()", str(path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        with pytest.raises(StoreLocked) as ei:
            Store(path, read_only=True, wait_s=0.5)
        assert ei.value.pid == holder.pid
        t0 = time.monotonic()
        assert main(["export", str(path), "--out", str(tmp_path / "x")]) == 1
        assert time.monotonic() - t0 >= 1.5
        err = capsys.readouterr().err
        assert f"locked by process {holder.pid}" in err and "Traceback" not in err
        assert f"sattcp: the results store {path} is locked by process {holder.pid}" in err
        assert "s more for it (SATTCP_STORE_WAIT_S sets the wait)" in err
        assert err.count("waiting up to") == 1
        with pytest.raises(StoreLocked):  # an explicit wait is that wait: no notice before 1 s
            Store(path, read_only=True, wait_s=0.3)
        assert capsys.readouterr().err == ""
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
        holder.stdout.close()
    assert main(["export", str(path), "--out", str(tmp_path / "x")]) == 0  # free again


@pytest.mark.parametrize("value", ["soon", "-1", "nan", "inf"])
def test_a_bad_store_wait_is_refused_naming_the_variable(tmp_path, capsys, monkeypatch, value):
    from sattcp.cli_study import main

    path = tmp_path / "r.duckdb"
    with Store(path) as s:
        s.record_run("st", "a", factors={}, status="ok")
    monkeypatch.setenv("SATTCP_STORE_WAIT_S", value)
    assert main(["export", str(path), "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert f"SATTCP_STORE_WAIT_S: must be a number of seconds, 0 or more, got {value!r}" in err
    assert "Traceback" not in err
    monkeypatch.setenv("SATTCP_STORE_WAIT_S", "0")
    with Store(path, read_only=True) as s:  # 0: no wait at all, and nothing holds it
        assert s.run_keys("st") == {"a"}


# -- stale runs, builds, exports ---------------------------------------------------------------


def test_only_the_current_definition_is_read_unless_asked(tmp_path):
    with Store(tmp_path / "r.duckdb") as s:
        s.save_study("st", {}, run_keys=["old1", "old2"])
        for k in ("old1", "old2"):
            s.record_run("st", k, factors={"x": 1}, status="ok", summary={"efficiency": 0.1})
        s.save_study("st", {}, run_keys=["new1", "new2"])  # the base scenario was edited
        s.record_run("st", "new1", factors={"x": 1}, status="ok", summary={"efficiency": 0.2})
        assert s.stale_runs("st") == 2
        assert s.runs("st")["run_key"].tolist() == ["new1"]
        allr = s.runs("st", include_stale=True).set_index("run_key")
        assert allr["current"].to_dict() == {"new1": True, "old1": False, "old2": False}
        assert s.counts("st") == {"ok": 1}


def test_mixed_builds_are_refused_by_analyze(tmp_path, capsys):
    from sattcp.cli_study import main

    path = tmp_path / "r.duckdb"
    with Store(path) as s:
        s.save_study("st", {"factors": {"x": [1, 2]}, "responses": ["efficiency"]})
        for i, (x, build) in enumerate([(1, "0.1.0+aaa"), (2, "0.1.0+aaa"), (1, "0.2.0+bbb"),
                                         (2, "0.2.0+bbb")]):
            s.record_run("st", f"k{i}", factors={"x": x}, status="ok", build=build, seed=i, block="B",
                         summary={"efficiency": 0.1 * x})
        assert s.builds("st") == {"0.1.0+aaa": 2, "0.2.0+bbb": 2}
    assert main(["analyze", str(path), "--study", "st"]) == 2
    err = capsys.readouterr().err
    assert "2 different sattcp builds: 0.1.0+aaa (2 runs), 0.2.0+bbb (2 runs)" in err
    assert main(["analyze", str(path), "--study", "st", "--allow-mixed-builds"]) == 0
    assert "warning: the runs of st come from 2 sattcp builds" in capsys.readouterr().err
    assert main(["export", str(path), "--out", str(tmp_path / "x")]) == 0
    assert "warning" in capsys.readouterr().err
    assert sorted(pd.read_parquet(tmp_path / "x" / "runs.parquet")["build"]) == [
        "0.1.0+aaa", "0.1.0+aaa", "0.2.0+bbb", "0.2.0+bbb"]


def test_export_has_typed_columns_and_every_table(tmp_path):
    path = tmp_path / "r.duckdb"
    with Store(path) as s:
        s.save_study("st", {"factors": {}}, run_keys=["a", "b"])
        for k, flavor, buf, eff in (("a", "reno", 0.5, 0.25), ("b", "sack", 1, 0.5)):
            s.record_run("st", k, factors={"tcp.flavor": flavor, "switch.buffer": buf},
                         status="ok", seed=7, config={"tcp": {"flavor": flavor}},
                         summary={"efficiency": eff, "timeouts": 3, "custom": "x"},
                         flows=_flows(2),
                         links=pd.DataFrame({"link": ["bottleneck"], "utilization": [0.9],
                                             "drops_by_reason": [{"queue_full": 2}]}),
                         traces={"flow/0/cwnd": pd.DataFrame({"t": [0.0, 1.0], "value": [1.0, 2.0]})})
        s.record_run("st", "stale", factors={"tcp.flavor": "reno", "switch.buffer": 2},
                     status="ok", summary={"efficiency": 0.9})
        pq_files = s.export(tmp_path / "pq", "parquet")
        csv_files = s.export(tmp_path / "csv", "csv", study="st")
    names = ["flows", "links", "runs", "studies", "traces"]
    assert sorted(p.stem for p in pq_files) == names == sorted(p.stem for p in csv_files)
    runs = pd.read_parquet(tmp_path / "pq" / "runs.parquet")
    assert runs["run_key"].tolist() == ["a", "b"]  # the stale run is left out
    assert runs["tcp.flavor"].tolist() == ["reno", "sack"]
    assert runs["switch.buffer"].dtype == "float64" and runs["efficiency"].dtype == "float64"
    assert runs["timeouts"].tolist() == [3, 3] and runs["custom"].tolist() == ["x", "x"]
    assert "factors" not in runs.columns and "summary" not in runs.columns
    assert json.loads(runs["config"].iloc[1]) == {"tcp": {"flavor": "sack"}}
    links = pd.read_parquet(tmp_path / "pq" / "links.parquet")
    assert links[["run_key", "link"]].values.tolist() == [["a", "bottleneck"], ["b", "bottleneck"]]
    traces = pd.read_csv(tmp_path / "csv" / "traces.csv")
    assert traces.columns.tolist() == ["study", "run_key", "trace", "t", "value"]
    assert len(traces) == 4
    csv_runs = pd.read_csv(tmp_path / "csv" / "runs.csv")
    assert csv_runs["efficiency"].tolist() == [0.25, 0.5]
    with Store(path, read_only=True) as s:
        s.export(tmp_path / "all", "parquet", include_stale=True)
    assert len(pd.read_parquet(tmp_path / "all" / "runs.parquet")) == 3


def test_export_writes_integers_beyond_64_bits_as_their_digits(tmp_path):
    """A runner's summary value of 2**70 was stored, then export failed with OverflowError."""
    path = tmp_path / "r.duckdb"
    with Store(path) as s:
        s.save_study("st", {"factors": {}}, run_keys=["a", "b"])
        for k, big in (("a", 2**70), ("b", -3)):
            s.record_run("st", k, factors={}, status="ok", summary={"efficiency": 0.5, "big": big, "u": 2**64 - 1})
        s.export(tmp_path / "pq", "parquet")
        s.export(tmp_path / "csv", "csv")
    runs = pd.read_parquet(tmp_path / "pq" / "runs.parquet")
    assert runs["big"].tolist() == [str(2**70), "-3"] and runs["u"].tolist() == [2**64 - 1] * 2
    assert pd.read_csv(tmp_path / "csv" / "runs.csv", dtype={"big": str})["big"].tolist() == [str(2**70), "-3"]


def test_an_export_is_whole_and_all_of_one_export(tmp_path, monkeypatch):
    """Exporting again into a folder replaces the earlier export's files together, or (a full
    disk, Ctrl-C) not at all, and removes a table of the earlier export that this one lacks."""
    import errno

    out = tmp_path / "x"

    def files():
        return {p.name: p.read_bytes() for p in sorted(out.iterdir())}

    with Store(tmp_path / "r.duckdb") as s:
        s.record_run("st", "a", factors={"x": 1}, status="ok", summary={"efficiency": 0.1}, flows=_flows(2))
        s.record_run("other", "b", factors={"x": 2}, status="ok")
        for fmt in ("parquet", "csv"):
            s.export(out, fmt)
            before = files()
            assert f"flows.{fmt}" in before
            write = getattr(pd.DataFrame, f"to_{fmt}")

            def full(self, where, *a, write=write, **k):
                write(self, where, *a, **k)
                Path(where).write_bytes(Path(where).read_bytes()[:10])
                raise OSError(errno.ENOSPC, "No space left on device")

            with monkeypatch.context() as m:
                m.setattr(pd.DataFrame, f"to_{fmt}", full)
                with pytest.raises(OSError, match=f"^cannot write {out / f'runs.{fmt}'}: No space left on device$"):
                    s.export(out, fmt, study="other")
            assert files() == before, "the earlier export whole, no temporary file"

            # DuckDB's COPY (flows) on a full disk.
            class FullDisk:
                def __init__(self, con):
                    self.con = con

                def execute(self, sql, *a):
                    if sql.startswith("COPY"):
                        raise duckdb.IOException('IO Error: Could not write file "x": No space left on device')
                    return self.con.execute(sql, *a)

            with monkeypatch.context() as m:
                m.setattr(s, "con", FullDisk(s.con))
                with pytest.raises(OSError, match=f"^cannot write {out / f'flows.{fmt}'}: .*No space left on device$"):
                    s.export(out, fmt)
            assert files() == before
            # Study "other" has no flows: the earlier export's flows table goes.
            s.export(out, fmt, study="other")
            assert f"flows.{fmt}" not in files() and f"runs.{fmt}" in files()
        assert sorted(files()) == ["runs.csv", "runs.parquet"], "the other format's files stay"


def test_export_on_a_full_disk_names_the_file_and_exits_1(tmp_path, monkeypatch, capsys):
    import errno

    from sattcp import cli

    with Store(tmp_path / "r.duckdb") as s:
        s.record_run("st", "a", factors={"x": 1}, status="ok")

    def full(self, where, *a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_csv", full)
    assert cli.main(["export", str(tmp_path / "r.duckdb"), "--out", str(tmp_path / "x"), "--format", "csv"]) == 1
    err = capsys.readouterr().err
    assert err == f"sattcp export: error: cannot write {tmp_path / 'x' / 'runs.csv'}: No space left on device\n", err
    assert list((tmp_path / "x").iterdir()) == []


def test_a_store_path_that_is_not_a_path_is_a_store_or_output_path_error(tmp_path):
    from sattcp.errors import OutputPathError

    for bad in (None, 3.5):
        for ro in (False, True):
            with pytest.raises(StoreError, match=f"^results store: must be a path .*got {type(bad).__name__}"):
                Store(bad, read_only=ro)
    with Store(tmp_path / "r.duckdb") as s:
        s.record_run("st", "a", factors={"x": 1}, status="ok")
        with pytest.raises(OutputPathError, match="^out_dir: must be a path .*got NoneType"):
            s.export(None)


def test_arguments_of_the_wrong_kind_are_store_errors_not_duckdbs(tmp_path):
    with Store(tmp_path / "r.duckdb") as s:
        s.record_run("st", "a", factors={"x": 1}, status="ok", flows=_flows(1))
        for call in (lambda: s.runs(3), lambda: s.flows(3), lambda: s.traces(1.5), lambda: s.counts(3),
                     lambda: s.builds(3), lambda: s.run_keys(3), lambda: s.export_runs(3),
                     lambda: s.export(tmp_path / "x", study=3), lambda: s.study_definition(3),
                     lambda: s.save_study(3, {}), lambda: s.record_run(3, "b", factors={}, status="ok")):
            with pytest.raises(StoreError, match="^study: must be a str.*, got (int 3|float 1.5)$"):
                call()
        with pytest.raises(StoreError, match="^run_key: must be a str, got int 3$"):
            s.record_run("st", 3, factors={}, status="ok")
        with pytest.raises(StoreError, match="^format must be 'parquet' or 'csv', got 'xlsx'$"):
            s.export(tmp_path / "x", fmt="xlsx")
        with pytest.raises(StoreError, match="^status must be"):
            s.record_run("st", "b", factors={}, status="maybe")
        # Nothing was stored under a number's text, and "" is a study name, not "every study".
        assert s.studies() == [] and list(s.runs()["study"]) == ["st"]
        assert s.runs("").empty and s.flows("").empty and len(s.flows()) == 1
    assert not (tmp_path / "x").exists()


def test_a_closed_store_says_so(tmp_path):
    path = tmp_path / "r.duckdb"
    with Store(path) as s:
        s.record_run("st", "a", factors={"x": 1}, status="ok")
    s.close()  # closing again does nothing
    for call in (lambda: s.runs("st"), s.studies, lambda: s.record_run("st", "b", factors={}, status="ok"),
                 lambda: s.export(tmp_path / "x"), lambda: s.con):
        with pytest.raises(StoreError, match=f"^the results store {re.escape(str(path))} is closed"):
            call()
    with Store(path, read_only=True) as s2:
        assert list(s2.runs("st")["run_key"]) == ["a"]


def test_a_device_or_a_pipe_is_refused_as_a_store_and_left_alone(tmp_path, capsys):
    # A FIFO (or a device: `--store /dev/null`) has size 0, which was taken for an empty file to
    # replace with a new store: the sweep deleted it and wrote a store in its place.
    import os
    import stat

    from sattcp.cli_study import main

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(StoreError, match="is not a regular file"):
        Store(fifo)
    (tmp_path / "base.toml").write_text("[run]\nduration = '1s'\n")
    study = tmp_path / "study.toml"
    study.write_text('scenario = "base.toml"\n[factors]\n"tcp.flavor" = ["reno", "sack"]\n')
    for argv in (["sweep", str(study), "--store", str(fifo), "--runner", "test_sweep:fake_runner", "--no-progress"],
                 ["export", str(fifo), "--out", str(tmp_path / "out")],
                 ["analyze", str(fifo), "--study", "study"]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert f"{fifo}: is not a regular file (a device or a pipe?)" in err and "Traceback" not in err, err
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_a_folder_where_export_or_the_report_writes_a_file_is_refused_before_any_work(tmp_path, capsys):
    # Both failed after the work (exit 1): export after reading the store, analyze --html after
    # printing the whole analysis ("Is a directory: hq/report.html").
    from sattcp.cli_study import main

    with Store(tmp_path / "r.duckdb") as s:
        s.save_study("st", {"factors": {"x": [1, 2]}})
        s.record_run("st", "a", factors={"x": 1}, status="ok", summary={"efficiency": 0.5})
    (tmp_path / "ex" / "flows.parquet").mkdir(parents=True)
    assert main(["export", str(tmp_path / "r.duckdb"), "--out", str(tmp_path / "ex")]) == 2
    err = capsys.readouterr().err
    assert f"--out {tmp_path / 'ex'}: {tmp_path / 'ex' / 'flows.parquet'} is a folder, where the export writes a file" in err, err
    assert sorted(p.name for p in (tmp_path / "ex").iterdir()) == ["flows.parquet"]
    (tmp_path / "hq" / "report.html").mkdir(parents=True)
    assert main(["analyze", str(tmp_path / "r.duckdb"), "--study", "st", "--html", str(tmp_path / "hq")]) == 2
    out = capsys.readouterr()
    assert f"--html {tmp_path / 'hq' / 'report.html'}: is a folder, not a file" in out.err and not out.out, out


def test_a_csv_named_as_such_is_not_taken_for_a_duckdb_file(tmp_path):
    # DuckDB opens y.csv as a database holding a view of the CSV: the store said it was "a
    # DuckDB file but not a sattcp results store (its tables: file, y)", and a read-only open
    # failed with DuckDB's "Cannot launch in-memory database in read-only mode".
    y = tmp_path / "y.csv"
    y.write_text("a,b\n1,2\n")
    for read_only in (False, True):
        with pytest.raises(StoreError, match=r"y\.csv is not a readable sattcp results store \(not a DuckDB file"):
            Store(y, read_only=read_only)
    assert y.read_text() == "a,b\n1,2\n"


def test_a_signal_during_a_commit_acts_once_the_commit_is_written(tmp_path):
    """A second Ctrl-C, or a SIGTERM, that arrives while a sweep commits its finished runs acts
    only once they are written. The main thread's signal mask did not defer it: the kernel gave
    the signal to another thread, Python raised KeyboardInterrupt in the main thread all the
    same, and the transaction was rolled back (a review helper lost 9-13 of 10-14 finished runs
    to two Ctrl-Cs 50 ms apart). Here the signals are sent from another thread as the commit
    starts."""
    import textwrap

    code = textwrap.dedent("""
        import os, signal, sys, threading
        import pandas as pd
        from sattcp import store

        w = store.StoreWriter(sys.argv[1])
        flows = pd.DataFrame({"flow": range(50), "throughput_bps": 1.0})
        w.pending = [store.run_record("st", f"k{i}", factors={}, status="ok", flows=flows) for i in range(300)]
        started = threading.Event()
        write = store.Store._write

        def writing(self, pending):
            started.set()
            return write(self, pending)

        store.Store._write = writing
        signal.signal(signal.SIGTERM, lambda s, f: print("SIGTERM after", w.written))

        def interrupt():
            started.wait()
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGTERM)

        threading.Thread(target=interrupt).start()
        try:
            w.flush()
        except KeyboardInterrupt:
            print("interrupted after", w.written, "pending", len(w.pending))
    """)
    db = tmp_path / "s.duckdb"
    p = subprocess.run([sys.executable, "-c", code, str(db)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    # Both acted, once each, after the commit, in the order they came.
    assert p.stdout == "SIGTERM after 300\ninterrupted after 300 pending 0\n", p.stdout
    with Store(db, read_only=True) as st:
        assert len(st.runs("st")) == 300


def test_a_read_only_store_refuses_writes_naming_itself(tmp_path):
    path = tmp_path / "r.duckdb"
    with Store(path) as s:
        s.save_study("st", {"factors": {}}, run_keys=["a"])
    with Store(path, read_only=True) as s, pytest.raises(StoreError, match="is open read-only: open it with Store"):
        s.save_study("st", {"factors": {}}, run_keys=["a"])
    with pytest.raises(StoreError, match="read_only must be True or False, got str 'yes'"):
        Store(path, read_only="yes")
