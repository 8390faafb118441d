"""The reproduction report, built from fake results (no simulator needed)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from sattcp.report import (
    CLAIMS,
    build_report,
    check_conclusions,
    load_paper,
)
from sattcp.store import Store

DATA = Path(__file__).resolve().parents[1] / "data"
BUFFER_LABEL = {"0.5": "0.5bdp", "1": "1bdp", "2": "2bdp"}


def fake_store(path: Path, study: str = "kota-www", drop: int = 0, noise: float = 0.01) -> Path:
    """A store holding the kota-www study with the paper's values plus a little noise."""
    paper = load_paper(DATA).results
    rng = np.random.default_rng(7)
    with Store(path) as st:
        st.save_study(study, {"description": "fake results for the report test",
                              "notes": ["fake: nothing was simulated"]})
        for i, r in enumerate(paper.itertuples()):
            if i < drop:
                continue
            factors = {"tcp.flavor": r.tcp.lower(), "switch.policy": r.drop_policy.lower(),
                       "switch.buffer": BUFFER_LABEL[r.buffer_rtt]}
            summary = {"efficiency": r.efficiency + rng.normal(0, noise),
                       "fairness": min(1.0, r.fairness + rng.normal(0, noise)),
                       "events": 1000, "wall_time_s": 0.5}
            st.record_run(study, f"k{i:03d}", factors=factors, status="ok", block=r.link, seed=1,
                          summary=summary)
        st.record_run(study, "broken", factors={"tcp.flavor": "sack", "switch.policy": "sd",
                                                "switch.buffer": "1bdp"},
                      status="failed", block="GEO", seed=99, error="SimulationError: boom\ntrace")
    return path


def test_every_conclusion_holds_on_the_papers_own_values():
    a = load_paper(DATA).analysis()
    checks = check_conclusions(a, a)
    assert len(checks) == len(CLAIMS) + 2
    assert all(c.holds_paper and c.holds_ours for c in checks)


def test_report_structure(tmp_path):
    store = fake_store(tmp_path / "r.duckdb")
    html = build_report(store, "kota-www", tmp_path / "out", paper_dir=DATA).read_text()
    for t in range(5, 14):
        assert f"Table {t}:" in html
    assert html.count("<table") >= 1 + 1 + 1 + 3 * 3  # runs, failures, claims, 3 per link
    assert "TCP flavour explains the largest share" in html
    assert "69.16%" in html  # the paper's GEO share of TCP flavour
    assert "holds" in html and "SimulationError: boom" in html
    assert "<li>fake: nothing was simulated</li>" in html
    imgs = re.findall(r'<img alt="[^"]*" src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert len(imgs) == 3 * 2 + 1
    assert all(len(b) > 1000 for b in imgs)
    for stem in ("wan-results", "meo-effects", "geo-results", "allocation-of-variation"):
        for ext in ("png", "svg", "pdf"):
            assert (tmp_path / "out" / "figures" / f"{stem}.{ext}").stat().st_size > 0


def test_report_with_missing_runs_says_so(tmp_path):
    store = fake_store(tmp_path / "r.duckdb", drop=3)
    html = build_report(store, "kota-www", tmp_path / "out", paper_dir=DATA).read_text()
    assert "Analysis not possible for WAN" in html
    assert "not available" in html


def test_report_of_unknown_study_is_an_error(tmp_path):
    store = fake_store(tmp_path / "r.duckdb")
    with pytest.raises(ValueError, match="no runs"):
        build_report(store, "nope", tmp_path / "out", paper_dir=DATA)


CHROMIUM = next((shutil.which(c) for c in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(c)), None)


@pytest.mark.skipif(CHROMIUM is None, reason="no headless Chromium installed (apt-get install -y "
                    "chromium); CI installs it so this test runs there")
def test_report_renders_in_headless_chromium(tmp_path):
    store = fake_store(tmp_path / "r.duckdb")
    path = build_report(store, "kota-www", tmp_path / "out", paper_dir=DATA)
    proc = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=5000",
         "--dump-dom", path.as_uri()],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = proc.stdout
    assert 'data-images-loaded="7"' in dom, dom[:500]
    tables = int(re.search(r'data-tables="(\d+)"', dom).group(1))
    assert tables >= 12
    assert "Table 12: allocation of variation" in dom


@pytest.fixture
def kota_standins(tmp_path, monkeypatch):
    """A working folder with stand-ins for the three kota scenarios (the fake runner ignores
    their content)."""
    scen = tmp_path / "scenarios"
    scen.mkdir()
    for link in ("wan", "meo", "geo"):
        (scen / f"kota-{link}.toml").write_text("# stand-in\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_cli_reproduce_quick_with_a_fake_simulator(kota_standins, capsys):
    from sattcp.cli_study import main

    tmp_path = kota_standins
    rc = main(["reproduce", "kota-www", "--quick", "--runner", "test_sweep:fake_runner", "-j", "2",
               "--no-progress", "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "kota-www-quick: 72 runs" in out and "report:" in out
    assert "GEO" in out and "TCP flavour explains the largest share" in out
    html = (tmp_path / "out" / "report.html").read_text()
    assert "Quick variant: 20 s of simulated time" in html


def test_cli_reproduce_with_replications(kota_standins, capsys):
    from sattcp.cli_study import main
    from sattcp.store import Store

    tmp_path = kota_standins
    rc = main(["reproduce", "kota-www", "--quick", "--replications", "2", "--runner", "test_sweep:fake_runner",
               "-j", "2", "--no-progress", "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "kota-www-quick-r2: 144 runs" in out
    with Store(tmp_path / "out" / "results.duckdb", read_only=True) as st:
        assert sorted(st.runs("kota-www-quick-r2").seed.unique()) == [1, 2]
    with pytest.raises(SystemExit) as e:
        main(["reproduce", "kota-www", "--replications", "0"])
    assert e.value.code == 2
    assert "must be a whole number >= 1" in capsys.readouterr().err
