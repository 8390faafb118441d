"""Every packaged scenario (scenarios/*.toml) runs to its end as shipped, with no warning: a
researcher's first run of one must not start with a truncated trace or a refused estimate."""

from __future__ import annotations

import pytest

import sattcp
from conftest import SCENARIOS

PACKAGED = sorted(SCENARIOS.glob("*.toml"))


def test_the_scenarios_directory_is_found():
    assert len(PACKAGED) >= 17, PACKAGED


@pytest.mark.parametrize("path", PACKAGED, ids=lambda p: p.stem)
def test_a_packaged_scenario_runs_cleanly(path):
    r = sattcp.run(path)
    assert r.data["warnings"] == [], r.data["warnings"]
    assert r.data["events"] > 0 and sum(f["delivered_bytes"] for f in r.data["flows"]) > 0
