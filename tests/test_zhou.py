"""Seed 004 reproduced (`sattcp reproduce zhou-sgw --quick`): the command runs every
experiment, writes the report with its figures, and the checks are computed from the runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import disk_full_on, run_cli
from sattcp import zhou


def test_plan_covers_every_experiment_of_section_v() -> None:
    runs = zhou.plan(quick=True)
    keys = [r.key for r in runs]
    assert len(keys) == len(set(keys))
    for prefix in ("e1/", "e2/", "e3/", "e4/", "e5/"):
        assert any(k.startswith(prefix) for k in keys), prefix
    # Figures 11-12 need BER 5e-5 for connection 3.
    assert "e4/sgw/ber=5e-05/seed=1" in keys


def test_scenarios_are_the_seeds_parameters() -> None:
    s = zhou.single()
    g = s["gateway"]
    assert (g["satellite"]["rate"], g["satellite"]["delay"], g["servers"][0]["rate"], g["servers"][0]["delay"]) == ("600kbps", "250ms", "1.2Mbps", "40ms")
    assert s["tcp"]["mss"] == 512 and s["app"]["bytes"] == "3MB"
    m = zhou.multi("sgw", 1e-6)
    assert [srv["delay"] for srv in m["gateway"]["servers"]] == ["1ms", "10ms", "20ms", "40ms", "80ms"]
    assert m["gateway"]["peak_rate"] == "900kbps" and m["gateway"]["satellite"]["rate"] == "3Mbps"


def test_jain_and_r2() -> None:
    assert zhou.jain([1.0, 1.0, 1.0]) == pytest.approx(1.0)
    assert zhou.jain([1.0, 0.0]) == pytest.approx(0.5)
    assert zhou._r2([(0, 1.0), (1, 3.0), (2, 5.0)]) == pytest.approx(1.0)
    assert zhou._r2([(0, 0.0), (1, 1.0), (2, 0.0)]) == pytest.approx(0.0)


def test_reproduce_quick_writes_a_report_with_checked_statements(tmp_path: Path) -> None:
    out = tmp_path / "z"
    p = run_cli("reproduce", "zhou-sgw", "--quick", "--out", str(out), "--no-progress", "--jobs", "2")
    assert p.returncode == 0, p.stderr
    assert "statements of seed 004 hold" in p.stdout
    html = (out / "report.html").read_text(encoding="utf-8")
    assert html.count("<img") == 6
    checks = json.loads((out / "checks.json").read_text(encoding="utf-8"))
    assert len(checks) >= 20 and {c["experiment"] for c in checks} == {"1", "2", "3", "4", "5"}
    by = {c["statement"]: c for c in checks}
    # The analysis of seed 004 §II.A is exact for our model (within 3%), whatever else differs.
    assert by["throughput = min(SatBW, Buff/(SatRTT+TerrRTT)) (§II.A)"]["holds"]
    e1 = json.loads((out / "e1.json").read_text(encoding="utf-8"))
    assert all(r["utilisation"] >= 0.97 for r in e1[1:])


# -- writing the report: whole or not at all ------------------------------------------------------


def tiny_analysis(holds: bool = True) -> zhou.Analysis:
    """Enough for zhou.report (with the figures stood in for): one check, one table."""
    a = zhou.Analysis()
    a.add("1", "a statement", "a test", "ours", holds)
    a.tables["e1"] = [{"buffer_kb": 31, "utilisation": 0.98 if holds else 0.5}]
    return a


@pytest.fixture
def no_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(zhou, "figures", lambda res, a: [("a figure", b"not really a png")])


@pytest.mark.parametrize("failing", ["report.html", "checks.json", "e1.json"])
def test_a_write_that_fails_midway_leaves_no_report_and_no_part_of_a_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_figures: None, failing: str) -> None:
    out = tmp_path / "z"
    zhou.report({}, tiny_analysis(), out)  # an earlier run's
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    with monkeypatch.context() as m, pytest.raises(OSError, match="No space left"):
        disk_full_on(m, failing)
        zhou.report({}, tiny_analysis(holds=False), out)
    assert not (out / "report.html").exists()
    left = {p.name: p.read_bytes() for p in out.iterdir()}
    assert set(left) == set(before) - {"report.html"}  # no temporary file either
    for name, data in left.items():  # each one whole: this run's, or the earlier run's
        assert json.loads(data) is not None, name
    if failing != "report.html":
        assert left[failing] == before[failing]
    assert zhou.report({}, tiny_analysis(), out).read_bytes() == before["report.html"]


def test_a_report_that_fails_after_the_analysis_leaves_no_stale_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_figures: None) -> None:
    """The figures fail (or Ctrl-C while they are drawn): the earlier run's report.html is
    gone, not left looking like this run's."""
    out = tmp_path / "z"
    zhou.report({}, tiny_analysis(), out)

    def broken(res: object, a: object) -> list[tuple[str, bytes]]:
        raise RuntimeError("a figure failed")

    monkeypatch.setattr(zhou, "figures", broken)
    with pytest.raises(RuntimeError, match="a figure failed"):
        zhou.report({}, tiny_analysis(holds=False), out)
    assert not (out / "report.html").exists()


def test_reproduce_interrupted_keeps_the_earlier_report_until_the_analysis_stands(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_figures: None, capsys: pytest.CaptureFixture[str]) -> None:
    """Ctrl-C during the runs (nothing new is written) keeps the earlier report with the files
    it shows, as a refused rebuild of a stored study does; Ctrl-C once the analysis stands, while
    the report is written, leaves none."""
    from sattcp.cli_study import main

    out = tmp_path / "z"
    old = zhou.report({}, tiny_analysis(), out).read_bytes()

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(zhou, "execute", interrupted)
    argv = ["reproduce", "zhou-sgw", "--quick", "--out", str(out), "--no-progress"]
    assert main(argv) == 130
    assert "interrupted; this study keeps its runs in memory" in capsys.readouterr().err
    assert (out / "report.html").read_bytes() == old
    monkeypatch.setattr(zhou, "execute", lambda *args, **kwargs: {})
    monkeypatch.setattr(zhou, "analyse", lambda res: tiny_analysis(holds=False))
    monkeypatch.setattr(zhou, "figures", interrupted)
    assert main(argv) == 130
    assert not (out / "report.html").exists()
    assert sorted(p.name for p in out.iterdir()) == ["checks.json", "e1.json"]  # the earlier run's
