"""NetPIPE's ping-pong in the simulator (seed 003, docs/netpipe.md): ``RunResult.netpipe``,
its JSON and Parquet forms, the ``sattcp netpipe`` command, and bad input."""

from __future__ import annotations

import json

import pandas as pd
import pyarrow.parquet as pq
import pytest

import sattcp
from conftest import SCENARIOS
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
