"""The Python API: running, results, overrides, determinism, errors with field paths."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import sattcp
from conftest import SCENARIOS
from sattcp import InternalError, ScenarioError

GEO = SCENARIOS / "geo-bulk.toml"


def short(**extra):
    return {"run.duration": "5s", **extra}


def test_run_returns_tables_and_identity():
    r = sattcp.run(GEO, seed=3, overrides=short())
    s = r.summary
    assert s["seed"] == 3 and s["events"] > 0 and len(s["digest"]) == 16
    assert isinstance(r.flows, pd.DataFrame) and list(r.flows.flow) == [0]
    assert {"throughput_bps", "delivered_bytes", "bytes_retransmitted", "timeouts", "fast_retransmits"} <= set(r.flows.columns)
    assert {"link", "utilization", "drops_queue_full", "peak_queue_bytes", "mean_queue_bytes"} <= set(r.links.columns)
    assert r.scenario["run"]["duration"] == "5s", "the result carries the scenario as run, overrides applied"
    f = r.flows.iloc[0]
    assert f.throughput_bps == pytest.approx(f.delivered_bytes * 8 / 5.0)
    # One flow that could use the whole link: its max-min share is all of C.
    assert f.capacity_bps == s["capacity_bps"] == pytest.approx(45e6 * 9180 / 9220)
    assert f.fair_share_bps == pytest.approx(f.capacity_bps)


def test_www_study_metrics_in_the_flow_table():
    r = sattcp.run(SCENARIOS / "kota-geo.toml", overrides={"run.duration": "20s", "topology.pairs": 10})
    data = r.flows[r.flows.role == "data"]
    assert len(data) == 10 and len(r.flows) == 20
    # C from the ATM framing: 45 Mbps x 9180 / (193 cells x 53 bytes) (seed 000 §4.3: 40.39 Mbps).
    assert data.capacity_bps.iloc[0] == pytest.approx(45e6 * 9180 / (193 * 53))
    assert r.summary["efficiency"] == pytest.approx(data.throughput_bps.sum() / data.capacity_bps.iloc[0])
    assert data.fair_share_bps.sum() <= data.capacity_bps.iloc[0] * (1 + 1e-9)
    assert r.flows[r.flows.role == "request"].fair_share_bps.isna().all()


def test_same_seed_same_digest():
    a = sattcp.run(GEO, seed=5, overrides=short(**{"links.bottleneck.ber": 1e-7}))
    b = sattcp.run(GEO, seed=5, overrides=short(**{"links.bottleneck.ber": 1e-7}))
    c = sattcp.run(GEO, seed=6, overrides=short(**{"links.bottleneck.ber": 1e-7}))
    assert a.summary["digest"] == b.summary["digest"]
    assert a.summary["digest"] != c.summary["digest"]


def test_traces_recorded_on_change():
    r = sattcp.run(GEO, overrides=short(**{"trace.flows": [0], "trace.links": ["bottleneck"]}))
    tr = r.traces
    assert {"flow/0/cwnd", "flow/0/ssthresh", "link/bottleneck/queue_packets"} <= set(tr)
    q = tr["link/bottleneck/queue_packets"]
    assert (q.value.diff().dropna() != 0).all(), "recorded on change only"
    assert q.t.is_monotonic_increasing


def test_progress_callback_reaches_the_end():
    seen = []
    sattcp.run(GEO, overrides=short(), progress=lambda now, dur: seen.append((now, dur)))
    assert seen[-1] == (5.0, 5.0) and len(seen) > 10


def test_save_json_and_parquet(tmp_path):
    r = sattcp.run(GEO, overrides=short())
    j = r.save(tmp_path / "r.json")
    doc = json.loads(j.read_text())
    assert doc["digest"] == r.summary["digest"] and doc["flows"][0]["flow"] == 0
    p = r.save(tmp_path / "r.parquet")
    back = pd.read_parquet(p)
    assert list(back.columns) == list(r.flows.columns)
    with pytest.raises(sattcp.SattcpError, match="unknown format"):
        r.save(tmp_path / "r.xlsx")
    with pytest.raises(sattcp.SattcpError, match="does not exist"):
        r.save(tmp_path / "no" / "such" / "r.json")


BAD = [
    ({"tcp.bogus": 1}, "tcp.bogus", "unknown key"),
    ({"links.bottleneck.rate": "45Mbs"}, "links.bottleneck.rate", "unknown rate unit"),
    ({"links.bottleneck.rate": "-45Mbps"}, "links.bottleneck.rate", "must be > 0"),
    ({"links.access.rate": "0Mbps"}, "links.access.rate", "must be > 0"),
    ({"tcp.mss": 0}, "tcp.mss", "between 1 and 65495"),
    ({"switch.buffer": "1000B"}, "switch.buffer", "at least one packet"),
    ({"tcp.window_scale": 15}, "tcp.window_scale", "between 0 and 14"),
    ({"run.duration": "0s"}, "run.duration", "must be > 0"),
    ({"run.duration": "-1s"}, "run.duration", ">= 0"),
    ({"tcp.flavor": "tahoe"}, "tcp.flavor", "vanilla, reno, newreno, sack"),
]


@pytest.mark.parametrize(("overrides", "path", "rule"), BAD, ids=[b[1] + ":" + str(list(b[0].values())[0]) for b in BAD])
def test_bad_input_names_the_field(overrides, path, rule):
    with pytest.raises(ScenarioError) as e:
        sattcp.run(GEO, overrides=overrides)
    assert isinstance(e.value, ValueError)
    probs = [p for p in e.value.problems if p["path"] == path]
    assert probs, e.value.problems
    assert rule in probs[0]["rule"], probs


def test_all_problems_listed_at_once():
    with pytest.raises(ScenarioError) as e:
        sattcp.run(GEO, overrides={"tcp.mss": 0, "tcp.window_scale": 20, "links.bottleneck.rate": "45Mbs", "tcp.nonsense": True})
    paths = {p["path"] for p in e.value.problems}
    assert paths == {"tcp.mss", "tcp.window_scale", "links.bottleneck.rate", "tcp.nonsense"}
    assert "tcp.mss" in str(e.value)


def test_toml_syntax_error_and_missing_file(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[run]\nduration = \n")
    with pytest.raises(ScenarioError, match="TOML syntax error at line 2"):
        sattcp.run(bad)
    with pytest.raises(ScenarioError, match="not found") as e:
        sattcp.run(tmp_path / "missing.toml")
    assert e.value.problems[0]["got"].endswith("missing.toml")


def test_bad_seed_and_bad_override_value():
    for seed in (-1, 2**64, True, 1.5):
        with pytest.raises(ScenarioError, match="run.seed"):
            sattcp.run(GEO, seed=seed)
    with pytest.raises(ScenarioError, match="override values"):
        sattcp.run(GEO, overrides={"tcp.mss": object()})


def test_rust_panic_becomes_internal_error():
    from sattcp import _core

    with pytest.raises(InternalError, match="deliberate test panic"):
        _core._panic_for_test()


def test_progress_bar_appears_only_after_its_delay():
    import io

    from sattcp.api import _ProgressBar

    quick = io.StringIO()
    bar = _ProgressBar(quick, delay_s=3600.0)
    bar(50.0, 100.0)
    bar.close()
    assert quick.getvalue() == "", "a run shorter than the delay shows nothing"
    slow = io.StringIO()
    bar = _ProgressBar(slow, delay_s=0.0)
    bar(25.0, 100.0)
    bar(100.0, 100.0)
    bar.close()
    out = slow.getvalue()
    assert "25.00/100.00 s simulated" in out and "100.00/100.00 s simulated" in out and "ETA" in out
    assert out.endswith("\n") and out.count("\r") == 2



def test_a_scenario_file_need_not_end_in_toml(tmp_path):
    p = tmp_path / "scenario.txt"
    p.write_text(GEO.read_text())
    assert sattcp.run(str(p), overrides=short()).summary["name"] == "geo-bulk"


def test_atm_traces_port_occupancy_and_access_queues():
    r = sattcp.run(SCENARIOS / "kota-geo.toml", overrides={"run.duration": "10s", "topology.pairs": 10, "trace.links": ["bottleneck", "src0->r1"]})
    tr = r.traces
    cells = tr["link/bottleneck/queue_cells"]
    assert len(cells) > 10 and cells.value.max() > 0
    assert cells.value.max() <= r.links.set_index("link").loc["bottleneck", "peak_queue_cells"]
    assert "link/src0->r1/queue_packets" in tr
