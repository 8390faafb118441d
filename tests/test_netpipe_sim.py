"""NetPIPE's ping-pong in the simulator (seed 003, docs/netpipe.md): ``RunResult.netpipe``,
its JSON and Parquet forms, the ``sattcp netpipe`` command, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

import sattcp
from conftest import SCENARIOS, parquet_disk_full_after, run_cli
from sattcp.api import NETPIPE_COLUMNS

E1 = SCENARIOS / "netpipe-e1.toml"


def small(**extra):
    return {"app.blocks": [1, 1460, 8192], "app.repeats": 2, **extra}


def test_netpipe_table_has_exactly_the_columns_and_one_row_per_block():
    r = sattcp.run(E1, overrides=small())
    t = r.netpipe
    assert isinstance(t, pd.DataFrame)
    assert list(t.columns) == NETPIPE_COLUMNS
    assert list(t.bytes) == [1, 1460, 8192] and list(t.repeats) == [2, 2, 2]
    assert t.throughput_bps.tolist() == pytest.approx((t.bytes * 8 / t.time_s).tolist())
    assert (t.min_s <= t.time_s).all()
    assert r.data["warnings"] == []


def test_other_applications_have_no_netpipe_table():
    r = sattcp.run(SCENARIOS / "geo-bulk.toml", overrides={"run.duration": "1s"})
    assert r.netpipe is None
    assert "netpipe" not in r.to_dict()


def test_json_and_parquet_carry_the_table(tmp_path):
    r = sattcp.run(E1, overrides=small())
    d = json.loads(r.to_json())
    assert [row["bytes"] for row in d["netpipe"]] == [1, 1460, 8192]
    assert set(d["netpipe"][0]) == set(NETPIPE_COLUMNS)
    out = tmp_path / "np.parquet"
    r.save(out)
    back = pq.read_table(tmp_path / "np.netpipe.parquet")
    assert back.schema.metadata[b"sattcp.table"] == b"netpipe"
    pd.testing.assert_frame_equal(back.to_pandas(), r.netpipe)


SMALL = ["--set", "app.blocks=[1, 1460, 8192]", "--set", "app.repeats=2"]


def test_cli_prints_netpipes_table_and_writes_csv_and_parquet(tmp_path):
    csv = tmp_path / "t.csv"
    p = run_cli("netpipe", str(E1), *SMALL, "--out", str(csv))
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("netpipe-e1: NetPIPE ping-pong, seed 1")
    assert lines[1].split() == ["bytes", "repeats", "time", "s", "Mbps", "NP", "Mbps", "variance", "s^2", "%CDV"]
    body = [ln.split() for ln in lines[3:]]
    assert [int(r[0]) for r in body] == [1, 1460, 8192]
    # 200 ms + 476 us of cells + 442 us of the piggybacked ACK's 2 cells ahead (tests/netpipe.rs;
    # 0.200476 before scenarios/netpipe-e1.toml turned tcp.piggyback_acks on)
    assert float(body[0][2]) == pytest.approx(0.200917, abs=1e-6)
    table = pd.read_csv(csv)
    assert list(table.columns) == NETPIPE_COLUMNS and list(table.bytes) == [1, 1460, 8192]
    # NetPIPE's Mbps are 2^20 bit/s: the two throughput columns differ by that factor.
    assert float(body[2][4]) == pytest.approx(float(body[2][3]) * 1e6 / 2**20, rel=1e-4)
    pq_path = tmp_path / "t.parquet"
    assert run_cli("netpipe", str(E1), *SMALL, "--out", str(pq_path)).returncode == 0
    back = pq.read_table(pq_path)
    assert back.schema.metadata[b"sattcp.table"] == b"netpipe"
    pd.testing.assert_frame_equal(back.to_pandas(), table, check_exact=False, rtol=1e-12)


def test_cli_refuses_a_scenario_that_is_not_a_ping_pong():
    p = run_cli("netpipe", str(SCENARIOS / "geo-bulk.toml"))
    assert p.returncode == 2
    assert 'app.kind: must be "pingpong" for sattcp netpipe' in p.stderr and 'got "bulk"' in p.stderr
    assert "Traceback" not in p.stderr


def test_cli_refuses_an_unknown_output_format_before_running(tmp_path):
    p = run_cli("netpipe", str(E1), "--out", str(tmp_path / "t.xlsx"))
    assert p.returncode == 2 and "unknown format '.xlsx' (use .csv or .parquet)" in p.stderr


def test_cli_refuses_an_out_that_cannot_be_written_before_running(tmp_path):
    (tmp_path / "t.csv").mkdir()
    p = run_cli("netpipe", str(E1), "--out", str(tmp_path / "t.csv"))
    assert p.returncode == 2 and f"--out {tmp_path / 't.csv'}: is a folder, not a file" in p.stderr, p.stderr
    if Path("/proc/self").is_dir():  # /proc takes no new files, even from root
        p = run_cli("netpipe", str(E1), "--out", "/proc/t.csv")
        assert p.returncode == 2 and "--out /proc/t.csv: cannot be created in folder /proc" in p.stderr, p.stderr
    assert not p.stdout  # refused before the run


@pytest.mark.parametrize(
    ("sets", "message"),
    [
        (["app.blocks=[0]"], "app.blocks.0: must be > 0 (a block of at least one byte), got 0"),
        (["app.first_block=2048", "app.last_block=1024"], "app.first_block: must be <= app.last_block (1024), got 2048"),
        (["app.repeats=0"], "app.repeats: must be between 1 and 1000000, got 0"),
        (["tcp.send_buffer=1000"], "tcp.send_buffer: must hold at least one segment (MSS), got 1000"),
        (["tcp.receive_buffer=1000"], "tcp.receive_buffer: must hold at least one segment (MSS 1460)"),
        (["topology.pairs=3"], "app.kind: pingpong runs one connection: the topology must have one pair (topology.pairs = 1), not 3"),
        (["links.bottleneck.delay=-5ms"], "links.bottleneck.delay"),
        (["app.blocks=[]"], "app.blocks: must list at least one block size, got []"),
        (["app.blocks=[8192, 1024]"], "app.blocks.1: must be larger than app.blocks.0 (8192): sizes increase, each once, got 1024"),
        (["app.blocks=[1, 1]"], "app.blocks.1: must be larger than app.blocks.0 (1): sizes increase, each once, got 1"),
        (["app.perturbation=-3"], "app.perturbation: must be between 0 and 1000000, got -3"),
    ],
)
def test_bad_input_is_a_scenario_error_naming_the_field(sets, message):
    with pytest.raises(sattcp.ScenarioError) as e:
        sattcp.run(E1, overrides=dict(s.split("=", 1) for s in sets), raw_overrides=True)
    assert message in str(e.value)
    p = run_cli("netpipe", str(E1), *[a for s in sets for a in ("--set", s)])
    assert p.returncode == 2 and message in p.stderr and "Traceback" not in p.stderr


def test_pingpong_on_a_graph_names_the_flows_to_change():
    """A graph has no topology.pairs: the message names its flows."""
    p = run_cli("netpipe", "scenarios/graph-diamond.toml", "--set", "app.kind=pingpong")
    assert p.returncode == 2 and 'the topology must have one flow (topology.flows = ["a->b"]), not 2' in p.stderr, p.stderr


def test_cli_run_json_carries_the_netpipe_rows():
    p = run_cli("run", str(E1), *SMALL, "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert [row["bytes"] for row in doc["netpipe"]] == [1, 1460, 8192]
    assert all(row["repeats"] == 2 for row in doc["netpipe"])
    assert doc["config"]["app"] == {"kind": "pingpong", "repeats": 2, "blocks": [1, 1460, 8192], "last_block": 65536}


def test_cli_full_disk_names_the_file_and_leaves_the_old_one(tmp_path, monkeypatch, capsys):
    from sattcp import cli

    out = tmp_path / "t.parquet"
    out.write_bytes(b"old")
    parquet_disk_full_after(monkeypatch, 0)
    assert cli.main(["netpipe", str(E1), *SMALL, "--quiet", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.endswith(f"sattcp: cannot write {out}: No space left on device\n"), err
    assert out.read_bytes() == b"old" and [f.name for f in tmp_path.iterdir()] == ["t.parquet"]
