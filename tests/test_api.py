"""The Python API: running, results, overrides, determinism, errors with field paths."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

import sattcp
from conftest import SCENARIOS, disk_full_on, parquet_disk_full_after
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


def test_time_series_cross_from_the_core_as_arrays_once_and_exactly():
    from sattcp import _core

    # The core hands its time series over as arrays of f64, beside its JSON (which has none).
    overrides = [("run.duration", "5s"), ("trace.flows", "[0]"), ("trace.links", '["bottleneck"]')]
    sim = _core.Simulation(GEO.read_text(), overrides, None)
    sim.run_until(sim.duration_ns)
    assert json.loads(sim.finish())["traces"] == {}
    raw = sim.take_traces()
    names = [name for name, _, _ in raw]
    assert names == sorted(names) and "link/bottleneck/queue_packets" in names
    assert all(len(t) == len(v) > 0 and len(t) % 8 == 0 for _, t, v in raw)
    assert sim.take_traces() == [], "handed over once"
    # In the result: lists of floats in name order, as JSON would give them and keep them.
    r = sattcp.run(GEO, overrides=short(**{"trace.flows": [0], "trace.links": ["bottleneck"]}))
    tr = r.data["traces"]
    assert list(tr) == names
    for (name, t, v), (key, series) in zip(raw, tr.items(), strict=True):
        assert name == key and len(series["t"]) == len(t) // 8 and len(series["v"]) == len(v) // 8
        assert all(type(x) is float for x in series["t"] + series["v"])
    assert json.loads(r.to_json())["traces"] == tr


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
    ({"run.duration": "-1s"}, "run.duration", "must be > 0"),
    ({"tcp.flavor": "vegas"}, "tcp.flavor", "vanilla, tahoe, reno, newreno, sack"),
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


# -- the resolved scenario, scenarios as dicts, input guards (issue 10) ---------------------------


def test_every_result_carries_the_resolved_scenario_and_it_reproduces_the_run(tmp_path):
    import tomllib

    r = sattcp.run(GEO, seed=4, overrides=short(**{"links.bottleneck.ber": 1e-7}))
    cfg = r.to_dict()["config"]
    assert cfg == r.config == sattcp.resolve(GEO, seed=4, overrides=short(**{"links.bottleneck.ber": 1e-7}))
    # Every key with its effective value: defaults the file does not write are there.
    assert cfg["run"]["seed"] == 4 and cfg["run"]["duration"] == "5s"
    assert cfg["tcp"]["min_rto"] == "200ms" and cfg["tcp"]["recovery"] == "reno" and cfg["tcp"]["initial_cwnd"] == 1
    assert cfg["links"]["access"]["ber"] == 0.0 and cfg["app"]["kind"] == "bulk"
    # The record alone repeats the run: as TOML text, as a dict, and from the TOML form.
    toml_text = sattcp.resolve(GEO, seed=4, overrides=short(**{"links.bottleneck.ber": 1e-7}), format="toml")
    assert tomllib.loads(toml_text) == cfg
    assert sattcp.run(toml_text).summary["digest"] == r.summary["digest"]
    assert sattcp.run(cfg).summary["digest"] == r.summary["digest"]


def test_to_dict_is_a_copy_changing_it_leaves_the_result_as_it_was():
    r = sattcp.run(GEO, seed=2, overrides=short(**{"run.duration": "1s", "trace.flows": [0]}))
    before = r.to_json()
    d = r.to_dict()
    assert d == json.loads(before)
    d["config"]["tcp"]["mss"] = 1
    d["scenario"]["extra"] = 1
    d["summary"]["efficiency"] = -1.0
    d["flows"][0]["flow"] = 99
    d["links"][0]["drops_by_reason"]["x"] = 1
    d["warnings"].append("x")
    next(iter(d["traces"].values()))["t"].append(1e9)
    s = r.summary
    s["efficiency"] = -2.0
    assert r.to_json() == before
    assert r.config["tcp"]["mss"] != 1 and "extra" not in r.scenario
    assert r.summary["efficiency"] >= 0 and r.flows["flow"].iloc[0] == 0


def test_a_scenario_given_as_a_dict_runs():
    import tomllib

    d = tomllib.loads(GEO.read_text())
    d["run"]["duration"] = "5s"
    assert sattcp.run(d).summary["digest"] == sattcp.run(GEO, overrides=short()).summary["digest"]
    d["tcp"]["colour"] = "red"
    with pytest.raises(ScenarioError, match="tcp.colour: unknown key"):
        sattcp.run(d)
    with pytest.raises(ScenarioError, match="None has no TOML value"):
        sattcp.run({"tcp": {"mss": None}})


def test_an_empty_key_in_a_dict_says_so():
    # It was "tcp: unknown key (a quoted key with a dot is one name: write tcp = ... unquoted,
    # or tcp = ... under [])".
    for scenario, overrides, path in (({"tcp": {"": 1}}, None, "tcp"), ({"": 1}, None, ""),
                                      ({"links": {"bottleneck": {"": 1}}}, None, "links.bottleneck"),
                                      (GEO, {"tcp": {"": 1}}, "tcp")):
        with pytest.raises(ScenarioError) as e:
            sattcp.run(scenario, overrides=overrides)
        assert e.value.problems == [{"path": path, "rule": "an empty key", "got": ""}]


def test_an_integer_beyond_toml_in_a_dict_scenario_is_named_as_an_override_would_be():
    # It was "(scenario): TOML syntax error at line 2: number too large ...", a line of the text
    # made from the dict.
    import tomllib

    d = tomllib.loads(GEO.read_text())
    # (run.seed up to 2^64 - 1 is taken, as seed= is: the next test.)
    cases = [("topology", "pairs", 2**64 - 1, "topology.pairs", "allowed: 1 to 100000"),
             ("topology", "pairs", -(2**63) - 1, "topology.pairs", "allowed: 1 to 100000")]
    for table, key, value, path, allowed in cases:
        bad = {**d, table: {**d[table], key: value}}
        with pytest.raises(ScenarioError) as e:
            sattcp.run(bad)
        (p,) = e.value.problems
        assert (p["path"], p["got"]) == (path, str(value))
        assert p["rule"].startswith(f"is beyond TOML's integers (-2^63 to 2^63 - 1); {allowed}")
        # The same words as the core's for the override.
        with pytest.raises(ScenarioError) as o:
            sattcp.run(GEO, overrides={path: value})
        assert o.value.problems == e.value.problems
    with pytest.raises(ScenarioError) as e:
        sattcp.run({**d, "loss": [{"flow": 0, "offset": 2**70}]})
    assert e.value.problems[0]["path"] == "loss.0.offset" and "beyond TOML's integers" in e.value.problems[0]["rule"]
    assert sattcp.resolve({**d, "run": {**d["run"], "seed": 2**63 - 1}})["run"]["seed"] == 2**63 - 1


@pytest.mark.parametrize("seed", [0, 2**63 - 1, 2**63, 2**64 - 1])
def test_a_stored_config_runs_again_whatever_its_seed(seed):
    # A sweep's seeds go up to 2^64 - 1 and runs.config holds them; sattcp.run(config) said
    # "run.seed: is beyond TOML's integers" from 2^63 on (the dict became TOML text).
    r = sattcp.run(GEO, seed=seed, overrides={"run.duration": "1s"})
    assert r.config["run"]["seed"] == seed
    again = sattcp.run(json.loads(json.dumps(r.config)))
    assert (again.summary["seed"], again.summary["digest"]) == (seed, r.summary["digest"])
    assert sattcp.resolve(r.config) == r.config
    # An override of run.seed is taken as seed= is, too.
    by_override = sattcp.run(GEO, overrides={"run.duration": "1s", "run.seed": seed})
    assert by_override.summary["digest"] == r.summary["digest"]
    nested = sattcp.resolve(GEO, overrides={"run": {"duration": "1s", "seed": seed}})
    assert nested == r.config


def test_seed_wins_over_a_dict_or_override_run_seed_as_over_a_files():
    import tomllib

    d = tomllib.loads(GEO.read_text())
    assert d["run"]["seed"] == 1 and sattcp.resolve(GEO, seed=7)["run"]["seed"] == 7  # a file's
    for big in (2**63, 2**64 - 1):
        big_dict = {**d, "run": {**d["run"], "seed": big}}
        assert sattcp.resolve(big_dict)["run"]["seed"] == big
        assert sattcp.resolve(big_dict, seed=7)["run"]["seed"] == 7
        # The override's over the scenario's, either way round; seed= over both.
        assert sattcp.resolve(big_dict, overrides={"run.seed": 5})["run"]["seed"] == 5
        assert sattcp.resolve(GEO, overrides={"run.seed": big})["run"]["seed"] == big
        assert sattcp.resolve({**d, "run": {**d["run"], "seed": 5}}, overrides={"run.seed": big})["run"]["seed"] == big
        assert sattcp.resolve(big_dict, overrides={"run.seed": 2**63 + 1})["run"]["seed"] == 2**63 + 1
        assert sattcp.resolve(GEO, seed=7, overrides={"run.seed": big})["run"]["seed"] == 7
        assert sattcp.resolve(big_dict, seed=7, overrides={"run.seed": big})["run"]["seed"] == 7
        # A raw override (text, as after --set) the same, in a run table too.
        assert sattcp.resolve(GEO, overrides={"run.seed": str(big)}, raw_overrides=True)["run"]["seed"] == big
        assert sattcp.resolve(GEO, seed=7, overrides={"run.seed": str(big)}, raw_overrides=True)["run"]["seed"] == 7
        run = sattcp.resolve(GEO, overrides={"run": f'{{seed = {big}, duration = "2s"}}'}, raw_overrides=True)["run"]
        assert (run["seed"], run["duration"]) == (big, "2s")


@pytest.mark.parametrize(("value", "rule"), [
    (2**64, "must be an integer from 0 to 2^64 - 1"),
    (-(2**63) - 1, "must be an integer from 0 to 2^64 - 1"),
    (-1, "must be >= 0"),
    (1.5, "must be an integer"),
    (True, "must be an integer"),
    ("7", "must be an integer"),
])
def test_a_dict_or_override_run_seed_out_of_range_or_not_an_integer_names_run_seed(value, rule):
    import tomllib

    d = tomllib.loads(GEO.read_text())
    for scenario, overrides in (({**d, "run": {**d["run"], "seed": value}}, None), (GEO, {"run.seed": value}),
                                (GEO, {"run": {"seed": value}})):
        with pytest.raises(ScenarioError) as e:
            sattcp.run(scenario, overrides=overrides)
        (p,) = e.value.problems
        assert p["path"] == "run.seed" and p["rule"].startswith(rule) and "TOML" not in p["rule"], p


@pytest.mark.parametrize("path", ["scenarios/nope.tml", "no/such/dir/scenario", "missing.toml"])
def test_a_path_that_does_not_exist_is_a_missing_file(path):
    with pytest.raises(ScenarioError, match="scenario file not found") as e:
        sattcp.run(path)
    assert "TOML syntax" not in str(e.value) and e.value.problems[0]["got"] == path


def test_a_float_where_an_integer_belongs_says_so():
    for key, value in (("tcp.mss", 1024.0), ("topology.pairs", 2.0), ("tcp.window_scale", 6.0)):
        with pytest.raises(ScenarioError) as e:
            sattcp.run(GEO, overrides={key: value})
        p = e.value.problems[0]
        assert p["path"] == key and "integer" in p["rule"] and p["got"] == repr(value), p


def test_null_columns_are_floats_with_nan():
    # A bulk flow never completes; a transfer does.
    bulk = sattcp.run(GEO, overrides=short())
    assert bulk.flows.completed_at_s.dtype == "float64" and bulk.flows.completed_at_s.isna().all()
    done = sattcp.run(GEO, overrides=short(**{"app.kind": "transfer", "app.bytes": 100_000}))
    assert done.flows.completed_at_s.dtype == "float64" and 0 < done.flows.completed_at_s.iloc[0] < 5


def test_short_repr_and_html_repr():
    r = sattcp.run(GEO, seed=2, overrides=short())
    text = repr(r)
    assert text.startswith("<RunResult 'geo-bulk' seed 2: 5 s simulated, 1 flow, efficiency ") and r.summary["digest"] in text
    assert len(text) < 200 and "\n" not in text
    html = r._repr_html_()
    assert html.startswith("<div class='sattcp-result'><table>") and "<th style='text-align:left'>efficiency</th>" in html
    assert r.summary["digest"] in html and html.count("<tr>") == 13


def test_tables_are_built_only_when_asked():
    r = sattcp.run(GEO, overrides=short())
    assert "flows" not in r.__dict__ and "links" not in r.__dict__
    assert r.flows is r.flows, "built once"


def test_a_huge_scenario_file_is_refused_with_its_size(tmp_path):
    # Not a regular file: named, never read (a device or a pipe would be read without end).
    for path, says in ((Path("/dev/zero"), "not a regular file"), (tmp_path, "is a directory")):
        with pytest.raises(ScenarioError, match=says):
            sattcp.run(path)
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    with pytest.raises(ScenarioError, match="not a regular file"):
        sattcp.run(fifo)
    # A syntax error names the file (the core sees only the text).
    broken = tmp_path / "broken.toml"
    broken.write_text("name = \n")
    with pytest.raises(ScenarioError, match=r"broken\.toml: TOML syntax error at line 1"):
        sattcp.run(broken)
    with pytest.raises(ScenarioError, match=r"^invalid scenario \(1 problem\):\n  \(scenario\): TOML syntax error"):
        sattcp.run("name = \n[run\n")
    big = tmp_path / "big.toml"
    big.write_text(GEO.read_text() + "#" * (1 << 20) + "\n")
    with pytest.raises(ScenarioError, match=r"scenario file is 1,04\d,\d{3} bytes, more than the 1,048,576"):
        sattcp.run(big)


def test_an_enormous_run_or_trace_is_refused_before_it_starts():
    import time

    t0 = time.perf_counter()
    with pytest.raises(ScenarioError) as e:
        sattcp.run(GEO, overrides={"run.duration": "1000000s", "links.bottleneck.rate": "45Gbps"})
    p = e.value.problems[0]
    assert p["path"] == "run.duration" and "engine events" in p["rule"] and "force" in p["rule"], p
    # Time series past their bound (trace.max_points) and a packet log past its own.
    for trace in ({"trace.flows": [0], "trace.max_points": 10**12}, {"trace.packets": "all", "trace.max_packet_events": 2**63 - 1}):
        with pytest.raises(ScenarioError) as e:
            sattcp.run(GEO, overrides={"run.duration": "1000s", "links.bottleneck.rate": "45Gbps", **trace})
        p = e.value.problems[0]
        assert p["path"] == "trace" and "GiB" in p["rule"], p
    # Refused at once, not after running (a generous bound: it does no simulation at all).
    assert time.perf_counter() - t0 < 60


def test_the_trace_estimate_keeps_to_the_traces_bounds():
    """The time series stop at trace.max_points and the packet log at trace.max_packet_events
    (docs/traces.md "Bounds"), so the estimate does too: a bounded trace of a long run is not
    refused (it was: 21 GiB estimated for traces capped at 1,000 points)."""
    from sattcp.api import PACKET_EVENT_BYTES, PACKET_EVENTS_PER_PACKET, TRACE_BYTES_PER_POINT, estimate_work

    cfg = sattcp.resolve(GEO, overrides={"run.duration": "200000s", "topology.pairs": 10, "trace.links": ["bottleneck"], "trace.flows": list(range(10)), "trace.max_points": 1000})
    est = estimate_work(cfg)
    assert est["trace_points"] == 1000 and est["packet_events"] == 0
    assert est["trace_bytes"] == 1000 * TRACE_BYTES_PER_POINT
    # The packet log: every packet, then only some flows' packets, each within its bound.
    base = {"run.duration": "100s", "topology.pairs": 10}
    packets = estimate_work(sattcp.resolve(GEO, overrides=base))["packets"]
    every = estimate_work(sattcp.resolve(GEO, overrides={**base, "trace.packets": "all", "trace.max_packet_events": 10**12}))
    assert every["packet_events"] == pytest.approx(packets * PACKET_EVENTS_PER_PACKET)
    assert every["trace_bytes"] == pytest.approx(every["packet_events"] * PACKET_EVENT_BYTES)
    some = estimate_work(sattcp.resolve(GEO, overrides={**base, "trace.packets": {"flows": [0, 1]}, "trace.max_packet_events": 10**12}))
    assert some["packet_events"] == pytest.approx(every["packet_events"] * 2 / 10)
    capped = estimate_work(sattcp.resolve(GEO, overrides={**base, "run.duration": "100000s", "trace.packets": "all"}))
    assert capped["packet_events"] == 5_000_000, "the core's default bound"


def test_a_forced_packet_trace_says_the_log_stops_at_the_memory_available(monkeypatch):
    from sattcp import api
    from sattcp.api import SattcpWarning, check_resources

    # A machine of 2 GiB: 6 million packets' traces need more than half of it.
    monkeypatch.setattr(api, "_memory_bytes", lambda: (float(2 << 30), False))
    huge = {"run.duration": "10000s", "trace.max_packet_events": 2**63 - 1}
    with pytest.warns(SattcpWarning, match=r"more than half of this machine's .* GiB \(forced: the packet log will stop recording, with a warning, "
                      r"where it would outgrow the memory available\)"):
        check_resources(sattcp.resolve(GEO, overrides={**huge, "trace.packets": "all"}), force=True)
    # Time series have no such stop.
    with pytest.warns(SattcpWarning, match=r"more than half of this machine's .* GiB \(forced\)$"):
        check_resources(sattcp.resolve(GEO, overrides={**huge, "trace.flows": [0], "trace.max_points": 10**12}), force=True)
    # A batch job's cgroup of 2 GiB on a larger machine: its limit is the one named.
    monkeypatch.setattr(api, "_memory_bytes", lambda: (float(2 << 30), True))
    with pytest.raises(sattcp.ScenarioError, match=r"more than half of the 2\.0 GiB this process's cgroup allows"):
        check_resources(sattcp.resolve(GEO, overrides={**huge, "trace.packets": "all"}))


def test_a_sweep_refusal_does_not_offer_a_force_it_has_not():
    from sattcp.api import check_resources

    cfg = sattcp.resolve(GEO, overrides={"run.duration": "1000000s", "links.bottleneck.rate": "45Gbps"})
    with pytest.raises(ScenarioError) as e:
        check_resources(cfg, how_to_force=None)
    assert "force" not in e.value.problems[0]["rule"] and e.value.problems[0]["rule"].endswith("shorten run.duration")


def test_a_long_run_warns_with_its_estimate():
    from sattcp.api import SattcpWarning, check_resources

    cfg = sattcp.resolve(GEO, overrides={"run.duration": "1000000s"})
    with pytest.warns(SattcpWarning, match=r"a long run: about \d(\.\d+)?e\+\d+ engine events"):
        est = check_resources(cfg)
    assert est["packets"] == pytest.approx(45e6 * 1e6 / (8 * 9220))


def test_a_ping_pong_run_is_estimated_by_its_schedule_not_its_duration():
    """A ping-pong run ends when its schedule is done: its estimate is the schedule's packets
    (the core's Simulation.pingpong_work, or _core.pingpong_work for a sweep's check), not a
    bulk transfer at line rate until run.duration, which refused this run (about 5e12 events)
    and warned of hours for runs of milliseconds."""
    import warnings

    from sattcp import _core
    from sattcp.api import check_resources, estimate_work

    over = {"run.duration": "1000000s", "links.bottleneck.rate": "10Gbps", "links.bottleneck.payload_rate": "9Gbps",
            "links.access.rate": "10Gbps", "links.access.payload_rate": "10Gbps", "app.last_block": 4096, "app.repeats": 3}
    cfg = sattcp.resolve(SCENARIOS / "netpipe-e1.toml", overrides=over)
    bulk = {**cfg, "app": {"kind": "bulk"}}
    assert estimate_work(bulk)["events"] > 1e12, "a bulk run of the same links and duration is refused"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = sattcp.run(SCENARIOS / "netpipe-e1.toml", overrides=over)
        est = check_resources(cfg, how_to_force=None)  # as a sweep checks it, before it runs
    assert list(r.netpipe.repeats.unique()) == [3] and r.netpipe.bytes.max() == 4099, "the whole schedule ran"
    sim = _core.Simulation((SCENARIOS / "netpipe-e1.toml").read_text(), [(k, json.dumps(v)) for k, v in over.items()])
    round_trips, nbytes = sim.pingpong_work
    assert est == estimate_work(cfg, sim.pingpong_work), "the sweep's estimate is the run's"
    assert est["packets"] == pytest.approx(2 * (nbytes / 1460 + round_trips))
    assert r.data["events"] <= est["events"] <= 5 * r.data["events"], (r.data["events"], est)
    seed = sattcp.resolve(SCENARIOS / "netpipe-e1.toml", overrides=over, seed=2**64 - 1)
    assert estimate_work(seed) == est, "a seed beyond TOML's integers does not lose the schedule"


def test_parquet_keeps_flows_links_and_traces(tmp_path):
    import pyarrow.parquet as pq

    r = sattcp.run(GEO, overrides=short(**{"trace.flows": [0]}))
    r.save(tmp_path / "r.parquet")
    flows = pd.read_parquet(tmp_path / "r.parquet")
    links = pd.read_parquet(tmp_path / "r.links.parquet")
    traces = pd.read_parquet(tmp_path / "r.traces.parquet")
    assert list(flows.flow) == [0] and set(links.link) == set(r.links.link)
    assert "drops_by_reason" not in links.columns, "nested values become columns"
    assert set(traces.variable) == set(r.traces) and len(traces) == sum(len(t) for t in r.traces.values())
    meta = pq.read_schema(tmp_path / "r.links.parquet").metadata
    assert json.loads(meta[b"sattcp.config"]) == r.config
    # Without traces, no traces file.
    sattcp.run(GEO, overrides=short()).save(tmp_path / "s.parquet")
    assert (tmp_path / "s.links.parquet").exists() and not (tmp_path / "s.traces.parquet").exists()


def test_a_save_is_whole_and_all_of_one_result(tmp_path, monkeypatch):
    """A save replaces the files of an earlier one together or not at all, and leaves no side
    table of the earlier result beside it (a stale STEM.traces.parquet)."""
    traced = sattcp.run(GEO, overrides={"run.duration": "1s", "trace.flows": [0]})
    plain = sattcp.run(GEO, seed=2, overrides={"run.duration": "1s"})
    traced.save(tmp_path / "r.parquet")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert set(before) == {"r.parquet", "r.links.parquet", "r.traces.parquet"}
    # A full disk at the second table: the error names it, the earlier files stay, no temporary file.
    parquet_disk_full_after(monkeypatch, 1)
    with pytest.raises(sattcp.SattcpError, match=f"^cannot write {tmp_path / 'r.links.parquet'}: No space left on device$"):
        plain.save(tmp_path / "r.parquet")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    monkeypatch.undo()
    # Interrupted while writing: the same.
    monkeypatch.setattr("pyarrow.parquet.write_table", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt))
    with pytest.raises(KeyboardInterrupt):
        plain.save(tmp_path / "r.parquet")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    monkeypatch.undo()
    # A result without traces: the earlier traces table goes.
    plain.save(tmp_path / "r.parquet")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.links.parquet", "r.parquet"]
    assert pd.read_parquet(tmp_path / "r.parquet").equals(plain.flows)
    # JSON: a full disk leaves the earlier file whole.
    plain.save(tmp_path / "r.json")
    old = (tmp_path / "r.json").read_bytes()
    disk_full_on(monkeypatch, "r.json")
    with pytest.raises(sattcp.SattcpError, match=f"^cannot write {tmp_path / 'r.json'}: No space left on device$"):
        traced.save(tmp_path / "r.json")
    assert (tmp_path / "r.json").read_bytes() == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "r.links.parquet", "r.parquet"]


def test_docs_scenario_md_is_generated_from_the_schema():
    """docs/scenario.md is what scripts/gen_scenario_doc.py writes from the core's schema (the
    core's tests check that the schema lists every key the scenario accepts)."""
    import importlib.util
    import json as _json

    from conftest import ROOT
    from sattcp import _core

    spec = importlib.util.spec_from_file_location("gen_scenario_doc", ROOT / "scripts" / "gen_scenario_doc.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    want = gen.render(_json.loads(_core.schema()))
    have = (ROOT / "docs" / "scenario.md").read_text(encoding="utf-8")
    assert have == want, "docs/scenario.md is out of date: run `.venv/bin/python scripts/gen_scenario_doc.py` and commit the file"
    keys = [k["key"] for k in _json.loads(_core.schema())["keys"]]
    for k in ("tcp.mss", "switch.buffer", "links.<link>.rate", "loss[].segment"):
        assert k in keys and f"| `{k}` |" in have


def test_import_and_run_load_no_heavy_modules():
    """`import sattcp` and `sattcp run` stay fast (issue 15): pandas, numpy and pyarrow come only
    when a table is asked for, typing and tempfile not for a run (bench/startup.py measures the
    times)."""
    import subprocess
    import sys

    from conftest import ROOT

    code = ("import sys, contextlib, io\nimport sattcp\nheavy = ('pandas', 'numpy', 'pyarrow', 'matplotlib', 'duckdb', 'scipy')\n"
            "print(' '.join(m for m in heavy if m in sys.modules))\n"
            "from sattcp.cli import main\nwith contextlib.redirect_stdout(io.StringIO()):\n"
            "    main(['run', 'scenarios/geo-bulk.toml', '--set', 'run.duration=2s', '--json'])\n"
            "print(' '.join(m for m in heavy if m in sys.modules))\n"
            "print(' '.join(m for m in ('typing', 'tempfile') if m in sys.modules))\n"
            "r = sattcp.run('scenarios/geo-bulk.toml', overrides={'run.duration': '1s'}); r.flows\n"
            "print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    after_import, after_run, light, after_flows = out.stdout.split("\n")[:4]
    assert after_import == "" and after_run == "", out.stdout
    # Neither is needed by a run that writes no file: 5 and 8 ms of its start-up (issue 15).
    assert light == "", f"sattcp run imported {light}"
    assert after_flows == "True", "asking for a table loads pandas"


def test_numpy_scalars_are_the_values_they_hold():
    # A notebook's seeds and levels come from np.arange or a DataFrame. Before: seed=np.int64(3)
    # and overrides of np.int64/np.bool_ were refused, and an np.float64 became the text
    # "np.float64(1e-07)" (links.bottleneck.ber: must be a number).
    np = pytest.importorskip("numpy")
    r = sattcp.run(GEO, seed=np.int64(3), overrides={"run.duration": "1s", "tcp.mss": np.int64(1000),
                                                      "links.bottleneck.ber": np.float64(1e-7), "tcp.sack": np.bool_(True)})
    assert r.summary["seed"] == 3 and type(r.data["seed"]) is int
    tcp, ber = r.config["tcp"], r.config["links"]["bottleneck"]["ber"]
    assert (tcp["mss"], tcp["sack"], ber) == (1000, True, 1e-7)
    assert sattcp.resolve(GEO, seed=np.uint64(2**64 - 1))["run"]["seed"] == 2**64 - 1
    for bad in (np.float64(3.0), 3.0, np.bool_(True)):  # never truncated
        with pytest.raises(ScenarioError) as e:
            sattcp.run(GEO, seed=bad)
        assert e.value.problems[0]["path"] == "run.seed"


def test_text_beyond_the_basic_plane_and_text_that_is_not_unicode():
    # Before: an override {"name": "café 😀"} ran under the name '"caf\\u00e9 \\ud83d\\ude00"'
    # (json.dumps's surrogate pair is not TOML, so the core took the literal as text), a dict
    # scenario with it was a TOML syntax error, and a lone surrogate a UnicodeEncodeError.
    name = "café 😀 \x7f"
    assert sattcp.run(GEO, overrides={"run.duration": "0.1s", "name": name}).summary["name"] == name
    with pytest.raises(ScenarioError) as e:
        sattcp.resolve({"😀": 1, "name": name})
    assert {"path": "😀", "rule": "unknown key", "got": ""} in e.value.problems
    for scenario, overrides, raw in ((GEO, {"name": "\udcff"}, False), (GEO, {"name": "\udcff"}, True),
                                     ({"name": "\udcff"}, None, False), ('name = "\udcff"\n', None, False)):
        with pytest.raises(ScenarioError, match="not a lone surrogate"):
            sattcp.run(scenario, overrides=overrides, raw_overrides=raw)


@pytest.mark.parametrize("kwargs, rule", [
    ({"overrides": [("tcp.mss", 1000)]}, "overrides must be a dict"),     # before: AttributeError
    ({"overrides": "tcp.mss=1000"}, "overrides must be a dict"),          # before: AttributeError
    ({"overrides": {1: 2}}, "override keys must be strings"),             # before: "1: unknown key"
    ({"overrides": {"": 1}}, 'an empty override key: give a dotted path such as "tcp.mss"'),  # before: the file's
    ({"overrides": {" ": 1}, "raw_overrides": False}, "an empty override key"),
    ({"overrides": {"": "1"}, "raw_overrides": True}, "an empty override key"),
    ({"overrides": {"tcp.mss": 1000}, "raw_overrides": True}, "raw override values are text"),  # before: str(v)
    ({"overrides": {"name": None}, "raw_overrides": True}, "raw override values are text"),     # before: name "None"
    ({"force": "no"}, "force must be True or False"),                     # before: forced
    ({"raw_overrides": 1}, "raw_overrides must be True or False"),
    ({"progress": 5}, "progress must be True, False or a callable"),      # before: ignored
])
def test_arguments_of_the_wrong_kind_are_scenario_errors(kwargs, rule):
    with pytest.raises(ScenarioError) as e:
        sattcp.run(GEO, **kwargs)
    (p,) = e.value.problems
    assert p["rule"].startswith(rule) and str(GEO) not in p["rule"], p  # not the file's problem


def test_a_key_given_twice_in_overrides_is_refused_as_in_a_study_file():
    # {"tcp.mss": 1000, "tcp": {"mss": 2000}} ran with 2000 without a word (the last kept).
    twice = 'is given twice in overrides, by "tcp.mss" and by "tcp": give it once'
    for overrides, problems in [
        ({"tcp.mss": 1000, "tcp": {"mss": 2000}}, [("tcp.mss", twice)]),
        ({"tcp": {"mss": 2000}, "tcp.mss": 1000}, [("tcp.mss", 'is given twice in overrides, by "tcp" and by "tcp.mss": give it once')]),
        ({"tcp.mss": 1, "tcp": {"mss": 2, "window": 5}, "tcp.window": 6}, [("tcp.mss", twice), ("tcp.window", 'is given twice in overrides, by "tcp" and by "tcp.window": give it once')]),
        ({"run.seed": 2**63, "run": {"seed": 5}}, [("run.seed", 'is given twice in overrides, by "run.seed" and by "run": give it once')]),
        # A value and a key inside it: the core kept or refused the second by their order.
        ({"trace.packets": "all", "trace.packets.flows": [0]}, [("trace.packets", 'is given in overrides by "trace.packets", and a key inside it by "trace.packets.flows": give one or the other')]),
        ({"trace.packets.flows": [0], "trace.packets": "all"}, [("trace.packets", 'is given in overrides by "trace.packets", and a key inside it by "trace.packets.flows": give one or the other')]),
    ]:
        for call in (sattcp.run, sattcp.resolve):
            with pytest.raises(ScenarioError) as e:
                call(GEO, overrides=overrides)
            assert [(p["path"], p["rule"]) for p in e.value.problems] == problems, overrides
    # Different keys of one table, given either way, are not twice; nor is an empty table.
    cfg = sattcp.resolve(GEO, overrides={"tcp": {"mss": 2000}, "tcp.window": 1000, "run": {}, "run.seed": 2**63})
    assert (cfg["tcp"]["mss"], cfg["tcp"]["window"], cfg["run"]["seed"]) == (2000, 1000, 2**63)


def test_resolve_format_is_a_scenario_error():
    with pytest.raises(ScenarioError, match="format must be 'dict', 'json' or 'toml', got 'yaml'"):
        sattcp.resolve(GEO, format="yaml")  # before: a bare ValueError


def test_rows_of_an_unknown_table_is_a_scenario_error_naming_the_tables():
    r = sattcp.run(GEO, overrides={"run.duration": "1s"})
    assert r.rows("flows")[0]["capacity_bps"] == r.summary["capacity_bps"] and r.rows("links")
    for table in ("traces", "Flows", None, 1):
        with pytest.raises(ScenarioError) as e:  # before: a bare ValueError
            r.rows(table)
        assert isinstance(e.value, ValueError)
        assert e.value.problems == [{"path": "", "rule": "table must be 'flows' or 'links'", "got": repr(table)}]


def test_parquet_results_are_written_to_a_name_that_is_not_utf8(tmp_path):
    # pyarrow takes a path as UTF-8 text: `sattcp run ... --out $'o\xff.parquet'` failed with a
    # UnicodeEncodeError traceback after the whole run. The tables now go through a Python file.
    import pyarrow.parquet as pq

    r = sattcp.run(SCENARIOS / "geo-bulk.toml", overrides={"run.duration": "1s"})
    out = Path(os.fsdecode(bytes(tmp_path) + b"/o\xff.parquet"))
    r.save(out)
    names = sorted(os.listdir(bytes(tmp_path)))
    assert names == [b"o\xff.links.parquet", b"o\xff.parquet"], names
    with open(out, "rb") as fh:
        flows = pq.read_table(fh)
    assert flows.num_rows == len(r.flows) and flows.schema.metadata[b"sattcp.table"] == b"flows"
    # The packet table too (its writer had the same path-as-text call).
    t = sattcp.run(SCENARIOS / "geo-bulk.toml", overrides={"run.duration": "1s", "trace.packets": "all"})
    pk = Path(os.fsdecode(bytes(tmp_path) + b"/p\xff.parquet"))
    t.save_packets(pk)
    with open(pk, "rb") as fh:
        assert pq.read_table(fh).num_rows == len(t.packets) > 0


def test_keys_of_another_kind_are_run_warnings_not_silence():
    # `--set app.bytes=1KB` on a bulk scenario ran bulk without a word (so did [gateway] on a
    # dumbbell and the WWW keys on bulk or transfer); overrides cannot remove a file's key, so
    # switching kinds with --set must still run: a warning, first among the run's.
    r = sattcp.run(SCENARIOS / "geo-bulk.toml", overrides={"run.duration": "1s", "app.bytes": "1KB", "app.think_time": "5s"})
    assert r.data["warnings"][:2] == ['app.think_time: applies to app.kind = "www": ignored',
                              'app.bytes: applies to app.kind = "transfer" (a bulk source never runs out): ignored'], r.data["warnings"]
    plain = sattcp.run(SCENARIOS / "geo-bulk.toml", overrides={"run.duration": "1s"})
    assert plain.data["warnings"] == [] and plain.summary["digest"] == r.summary["digest"]
