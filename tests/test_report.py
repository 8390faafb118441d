"""The reproduction report, built from fake results (no simulator needed)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.artist import Artist

from conftest import NEEDS_PROC, disk_full_on
from sattcp.plots import LEVEL_COLORS
from sattcp.report import (
    BUFFER_CLAIMS,
    CLAIMS,
    analyse_study,
    build_report,
    build_study_report,
    check_buffer_recommendations,
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


def test_an_interrupted_rebuild_leaves_no_stale_report_and_a_failed_one_keeps_it(tmp_path, monkeypatch):
    """Ctrl-C while the figures are rewritten: the old report.html (which would show other
    figures) is gone, not left beside them; a rebuild refused before any figure (unknown study)
    keeps it; a finished one is written whole (no temporary file left)."""
    import sattcp.report as report

    store = fake_store(tmp_path / "r.duckdb")
    out = tmp_path / "out"
    old = build_report(store, "kota-www", out, paper_dir=DATA).read_text()
    with pytest.raises(ValueError, match="no runs"):
        build_report(store, "nope", out, paper_dir=DATA)
    assert (out / "report.html").read_text() == old
    saved = []

    def interrupted(figures, fig, stem):
        saved.append(stem)
        raise KeyboardInterrupt

    monkeypatch.setattr(report.plots.Figures, "save", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build_report(store, "kota-www", out, paper_dir=DATA)
    assert saved and not (out / "report.html").exists()
    monkeypatch.undo()
    assert build_report(store, "kota-www", out, paper_dir=DATA).exists()
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == []


def _small_figure(*extra: Artist):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(3, 2))
    ax = fig.subplots()
    ax.plot([0, 1, 2], [1, 0, 2], label="cwnd")
    ax.set_title("a figure")
    ax.legend()
    for a in extra:
        fig.add_artist(a)
    return fig


def test_figures_drawn_in_worker_processes_are_the_figures_drawn_here(tmp_path):
    from sattcp import plots

    here = plots.save(_small_figure(), tmp_path / "here")
    with plots.Figures(jobs=2) as figures:
        later = [figures.save(_small_figure(), tmp_path / f"there{i}") for i in range(3)]
        assert not list(tmp_path.glob("there*"))  # the files are written by this process, when asked for
        pngs = [png() for png in later]
    assert pngs == [here] * 3 and (tmp_path / "there2.png").read_bytes() == here
    assert (tmp_path / "there0.pdf").read_bytes()[:5] == b"%PDF-" and b"<svg" in (tmp_path / "there0.svg").read_bytes()
    # The same figure gives the same files in every format, wherever and whenever it is drawn:
    # SVG's element ids were salted at random and the PDF carried the time it was drawn.
    for fmt in ("svg", "pdf"):
        drawn = {(tmp_path / f"{stem}.{fmt}").read_bytes() for stem in ("here", "there0", "there1", "there2")}
        assert len(drawn) == 1, fmt
    assert b"CreationDate" not in (tmp_path / "here.pdf").read_bytes()


def test_figures_use_worker_processes_only_where_spawning_cannot_run_the_callers_program_again(tmp_path):
    # A spawned worker imports the main program when it is a file: a script without
    # `if __name__ == "__main__":` that builds a report would run again in each worker.
    import sys

    probe = "from sattcp.figure_render import default_jobs; print(default_jobs())"
    cpus = len(os.sched_getaffinity(0))
    many = str(min(cpus, 4)) if cpus > 1 else "0"
    (tmp_path / "script.py").write_text(probe + "\n")
    (tmp_path / "console.py").write_text("from sattcp.cli import entry\n" + probe + "\n")  # as pip's sattcp script
    for args, want in (([str(tmp_path / "script.py")], "0"), ([str(tmp_path / "console.py")], many), (["-c", probe], many)):
        out = subprocess.run([sys.executable, *args], capture_output=True, text=True, check=True).stdout.strip()
        assert out == want, (args, out)


class _DiesInAWorker(Artist):
    """Kills the process that draws it, unless it is the one that made it."""

    def __init__(self, owner: int) -> None:
        super().__init__()
        self.owner = owner

    def draw(self, renderer) -> None:
        if os.getpid() != self.owner:
            os._exit(1)


class _Unpicklable(Artist):
    def __init__(self) -> None:
        super().__init__()
        self.hook = lambda: None  # a lambda does not pickle

    def draw(self, renderer) -> None:
        pass


def test_a_figure_that_does_not_pickle_is_drawn_here(tmp_path):
    from sattcp import plots

    here = plots.save(_small_figure(_Unpicklable()), tmp_path / "here")
    with plots.Figures(jobs=2) as figures:
        png = figures.save(_small_figure(_Unpicklable()), tmp_path / "there")()
    assert png == here == (tmp_path / "there.png").read_bytes()


def test_a_figure_whose_worker_dies_is_drawn_here_instead(tmp_path, capsys):
    import multiprocessing

    from sattcp import plots

    here = plots.save(_small_figure(_DiesInAWorker(os.getpid())), tmp_path / "here")
    with plots.Figures(jobs=1) as figures:
        png = figures.save(_small_figure(_DiesInAWorker(os.getpid())), tmp_path / "there")()
        assert not multiprocessing.active_children()  # the broken pool is stopped
        # The figures after it are drawn here too (the broken pool refused them: a traceback).
        later = [figures.save(_small_figure(_DiesInAWorker(os.getpid())), tmp_path / f"later{i}")
                 for i in range(2)]
        assert [f() for f in later] == [here, here]
    assert png == here == (tmp_path / "there.png").read_bytes()
    assert capsys.readouterr().err.count("a figure worker process died") == 1


def test_workers_started_early_draw_the_same_and_an_error_before_any_figure_kills_them(tmp_path):
    import multiprocessing

    from sattcp import plots

    here = plots.save(_small_figure(), tmp_path / "here")
    with plots.Figures(jobs=2).start() as figures:  # (workers up before the first figure)
        assert len(multiprocessing.active_children()) == 2
        png = figures.save(_small_figure(), tmp_path / "there")()
    assert png == here and not multiprocessing.active_children()
    # A report whose analysis fails (no such study) stops its workers at once.
    from sattcp import figure_render, report
    from sattcp.errors import AnalysisError
    from sattcp.store import Store

    with Store(tmp_path / "r.duckdb") as st:
        st.save_study("other", {"factors": {}})
    default_jobs = figure_render.default_jobs
    try:
        figure_render.default_jobs = lambda: 2
        with pytest.raises(AnalysisError, match="no runs of study 'kota-www'"):
            report.build_report_and_claims(tmp_path / "r.duckdb", "kota-www", tmp_path / "out")
    finally:
        figure_render.default_jobs = default_jobs
    assert not multiprocessing.active_children() and not (tmp_path / "out").exists()


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
    # The figures in the browser, in the seeds' order of link types, each decoded ("!" if not).
    order = re.search(r'data-figure-order="([^"]*)"', dom).group(1).split(",")
    assert order == ["wan-results", "wan-effects", "meo-results", "meo-effects", "geo-results", "geo-effects",
                     "allocation-of-variation"], order
    # The colour key as the browser paints it: each level its one colour.
    painted = dict(item.rsplit(":", 1) for item in re.search(r'data-key-colors="([^"]*)"', dom).group(1).split(";"))
    for factor, colors in LEVEL_COLORS.items():
        if factor == "link":
            continue
        for level, hex_color in colors.items():
            r, g, b = (int(hex_color[i:i + 2], 16) for i in (1, 3, 5))
            assert painted[f"{factor}={level}"] == f"rgb({r}, {g}, {b})", (factor, level, painted)
    # Every figure declares the same levels, in the same order and colours.
    declared = set(re.findall(r'<figure data-figure="[a-z]+-results" data-levels="([^"]*)"', dom))
    assert len(declared) == 1, declared
    assert declared.pop().startswith("tcp=Vanilla:#E69F00,Reno:#56B4E9,NewReno:#009E73,SACK:#CC79A7;buffer_rtt=0.5:")


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
    # The machine the runs' wall times (the Runs table) were measured on.
    from html import escape

    from sattcp.worker import host_id

    assert f"Wall times measured on {escape(host_id())}.</p>" in html


def kota_failing_runner(scenario, seed=None, overrides=None, progress=False):
    """test_sweep's fake runner, except that GEO's two runs of SACK with the 0.5 x BDP buffer fail."""
    from test_sweep import fake_runner

    if (overrides or {}).get("tcp.flavor") == "sack" and (overrides or {}).get("switch.buffer") == "29190cells":
        raise ValueError(f"simulated failure ({Path(scenario).name})")
    return fake_runner(scenario, seed=seed, overrides=overrides, progress=progress)


def test_cli_reproduce_kota_www_shows_the_runs_left_out(kota_standins, capsys):
    # The kota-www report had no run notes (the generic report's since c9befbb): GEO left out
    # of its analysis, and why, was not said under its Runs table.
    from sattcp.cli_study import main

    tmp_path = kota_standins
    rc = main(["reproduce", "kota-www", "--quick", "--runner", "test_report:kota_failing_runner", "-j", "2",
               "--no-progress", "--out", str(tmp_path / "out")])
    assert rc == 1, capsys.readouterr()
    html = (tmp_path / "out" / "report.html").read_text()
    notes = html[html.index("<h2>Runs</h2>"):html.index("<h3>Failed runs</h3>")]
    assert notes.rstrip().endswith(
        "<div class='note' id='left-out'><p>Not every run of the study is in this analysis:</p><ul>"
        "<li>block GEO is left out of the analysis, as its successful runs are no balanced design (every "
        "combination of levels the same number of times): 2 of its 24 runs failed (tcp.flavor=sack "
        "switch.policy=epd switch.buffer=0.5bdp seed 1, tcp.flavor=sack switch.policy=sd switch.buffer=0.5bdp "
        "seed 1)</li></ul></div>"), notes


def test_the_runs_table_names_the_machines_of_its_wall_times():
    from sattcp.report import _hosts_note

    runs = pd.DataFrame({"host": ["b: CPU <x>", "a: CPU", None, "b: CPU <x>"]})
    assert _hosts_note(runs) == (
        "<p class='note'>Wall times measured on 3 machines: b: CPU &lt;x&gt; (2 runs); a: CPU (1 run); "
        "a machine not recorded (a store written before schema 3) (1 run).</p>")
    assert _hosts_note(runs.iloc[[1]]) == "<p class='note'>Wall times measured on a: CPU.</p>"
    assert _hosts_note(runs.iloc[:0]) == "" and _hosts_note(pd.DataFrame({"x": [1]})) == ""


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


def test_cli_reproduce_set_changes_every_run_in_a_folder_of_its_own(kota_standins, capsys):
    # `reproduce --set`: one parameter of the paper's set-up changed from the command line, in
    # every run; the report says so, and the default folder is not the paper's.
    from sattcp.cli_study import main
    from sattcp.store import Store

    rc = main(["reproduce", "kota-www", "--quick", "--set", "run.duration=3s", "--set", "tcp={mss=1000}",
               "--runner", "test_sweep:fake_runner", "-j", "2", "--no-progress"])
    out = capsys.readouterr().out
    assert rc == 0, out
    folder = kota_standins / "out" / "kota-www-quick-run.duration=3s,tcp=_mss=1000_"
    assert sorted(p.name for p in (kota_standins / "out").iterdir()) == [folder.name]
    with Store(folder / "results.duckdb", read_only=True) as st:
        over = [json.loads(o) for o in st.runs("kota-www-quick")["overrides"]]
        assert len(over) == 72 and all(o["run.duration"] == "3s" and o["tcp.mss"] == 1000 for o in over)
        assert st.study_definition("kota-www-quick")["set"] == {"run.duration": "3s", "tcp.mss": 1000}
    html = (folder / "report.html").read_text()
    assert "Every run with --set run.duration=3s --set tcp={mss=1000}: the set-up differs from the paper" in html
    # A factor, the seed, or a study that runs its own experiments: refused before anything is made.
    for argv, err in ((["kota-www", "--set", "tcp.flavor=reno"], "--set tcp.flavor: is the study's factor tcp.flavor"),
                      (["modern-cc", "--set", "run.seed=4"], "--set run.seed: the seeds are the study's"),
                      (["zhou-sgw", "--set", "tcp.mss=1000"], "--set: for kota-www and modern-cc only, not zhou-sgw")):
        assert main(["reproduce", *argv, "--quick", "--runner", "test_sweep:fake_runner", "--no-progress",
                     "--out", str(kota_standins / "refused")]) == 2, argv
        assert err in capsys.readouterr().err, argv
        assert not (kota_standins / "refused").exists()


def test_the_folder_suffix_of_reproduce_set_is_a_safe_name():
    from sattcp.cli_study import sets_suffix

    assert sets_suffix(["tcp.mss=1024"]) == "-tcp.mss=1024"
    assert sets_suffix(["links.bottleneck.rate=10 Mbps", "tcp.flavor=sack/bbr"]) == \
        "-links.bottleneck.rate=10_Mbps,tcp.flavor=sack_bbr"
    long = sets_suffix([f"x.k{i}=1" for i in range(20)])
    assert long.startswith("-set-") and len(long) == 17 and long != sets_suffix([f"x.k{i}=2" for i in range(20)])


@pytest.mark.parametrize("given", ["0", "10", "high"])
def test_cli_reproduce_refuses_a_realtime_priority_not_below_the_emulators(capsys, given):
    from sattcp.cli_study import main

    with pytest.raises(SystemExit) as e:
        main(["reproduce", "netpipe-sat", "--real", "--rt-priority", given])
    assert e.value.code == 2
    assert f"must be a whole number from 1 to 9 (below the emulator's SCHED_FIFO priority 10), got '{given}'" in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "message"), [
    (["kota-www", "--quick", "--out", "{file}"], "--out {file}: not a folder"),
    (["kota-www", "--quick", "--out", "{file}/sub"], "--out {file}/sub: cannot be created ({file} is not a folder)"),
    pytest.param(["kota-www", "--quick", "--out", "/proc/rp"], "--out /proc/rp: cannot be created in folder /proc",
                 marks=NEEDS_PROC),
    (["kota-www", "--quick", "--runner", "nosuch:f"], "--runner 'nosuch:f': No module named 'nosuch'"),
    (["kota-www", "--quick", "--runner", "os:sep"], "--runner os:sep: must be a function runner(scenario, seed=, overrides=)"),
    # run_sweep refused it too, once the folder was made.
    (["kota-www", "--quick", "--runner", "test_sweep:unpicklable_runner"],
     "--runner test_sweep:unpicklable_runner: must pickle for the sweep's worker processes"),
    (["kota-www", "--quick", "--cluster", "bad", "--runner", "test_sweep:fake_runner"],
     "--cluster 'bad': not a scheduler address"),
    (["kota-www", "--replications", "100000000", "--runner", "test_sweep:fake_runner"],
     "--replications 100000000: kota-www-r100000000 would have 7,200,000,000 runs; at most 100,000"),
    (["zhou-sgw", "--quick", "--cluster", "tcp://10.0.0.1:8786"], "--cluster: for kota-www and modern-cc only, not zhou-sgw"),
    (["netpipe-sat", "--quick", "--replications", "2"], "--replications: for kota-www and modern-cc only"),
    (["netpipe-sat", "--quick", "--rt-priority", "5"], "--rt-priority is for netpipe-sat --real only"),
    (["kota-www", "--quick", "--rt-priority", "5"], "--rt-priority is for netpipe-sat --real only"),
    # Given empty, still given.
    (["zhou-sgw", "--quick", "--cluster", ""], "--cluster: for kota-www and modern-cc only, not zhou-sgw"),
    # Their default output folder, out/NAME, is checked too (here out is a file).
    (["zhou-sgw", "--quick", "--in-cwd"], "--out out/zhou-sgw-quick: cannot be created (out is not a folder)"),
    (["netpipe-sat", "--quick", "--in-cwd"], "--out out/netpipe-sat-quick: cannot be created (out is not a folder)"),
])
def test_cli_reproduce_refuses_bad_options_before_creating_anything(kota_standins, capsys, monkeypatch, argv, message):
    from sattcp.cli_study import main

    tmp_path = kota_standins
    (tmp_path / "file").write_text("kept")
    out = tmp_path / "out"
    argv = [a.format(file=tmp_path / "file") for a in argv]
    in_cwd = "--in-cwd" in argv
    if in_cwd:  # no --out: the default, out/NAME, under a working folder where out is a file
        argv.remove("--in-cwd")
        monkeypatch.chdir(tmp_path)
        out.write_text("kept")
    elif "--out" not in argv:
        argv += ["--out", str(out)]
    assert main(["reproduce", *argv, "--no-progress"]) == 2
    got, err = capsys.readouterr()
    assert message.format(file=tmp_path / "file") in err and not got, err
    assert (out.read_text() == "kept") if in_cwd else not out.exists()
    assert (tmp_path / "file").read_text() == "kept"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", *(["out"] if in_cwd else []), "scenarios"]


def test_cli_reproduce_counts_replications_before_making_their_seeds(kota_standins, capsys):
    """Were refused only after making every seed: 10^9 replications took minutes and gigabytes."""
    import tracemalloc

    from sattcp.cli_study import main

    tracemalloc.start()
    try:
        rc = main(["reproduce", "kota-www", "--replications", "2000000", "--runner", "test_sweep:fake_runner",
                   "--no-progress", "--out", str(kota_standins / "out")])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert rc == 2
    assert "--replications 2000000: kota-www-r2000000 would have 144,000,000 runs; at most 100,000 are allowed " \
           "(sattcp.sweep.MAX_RUNS), so at most 1,388 replications" in capsys.readouterr().err
    assert peak < 8e6, f"{peak:,} B: the seeds were made"  # 2 M seeds: a 16 MB tuple and 56 MB of ints


def _svg_levels(svg: str) -> list[tuple[str, str]]:
    """(level id, colour) of every bar (its fill) or point (its marker's stroke) a figure tagged
    with its level."""
    out = []
    for m in re.finditer(r'<g id="level-([^"]+?)__\d+">\s*(?:<defs>\s*)?<path[^>]*?style="[^"]*?(?:fill|stroke): ?(#[0-9a-fA-F]{6})', svg):
        out.append((m.group(1), m.group(2).upper()))
    return out


def test_figures_keep_one_order_and_one_colour_per_level(tmp_path):
    store = fake_store(tmp_path / "r.duckdb")
    build_report(store, "kota-www", tmp_path / "out", paper_dir=DATA)
    figs = tmp_path / "out" / "figures"
    want = {f"{f}-{lv}": c.upper() for f, levels in LEVEL_COLORS.items() for lv, c in levels.items()}
    for link in ("wan", "meo", "geo"):
        svg = (figs / f"{link}-results.svg").read_text()
        bars = _svg_levels(svg)
        assert len(bars) == 2 * 2 * 4 * 3, len(bars)  # responses x policies x flavours x buffers
        for level, color in bars:
            assert want[level] == color, (link, level, color)
        # Bars of each panel in buffer order 0.5, 1, 2; x labels in flavour order; panels EPD, SD.
        assert [lv for lv, _ in bars[:12]] == [f"buffer_rtt-{b}" for b in ("0.5", "1", "2") for _ in range(4)]
        texts = re.findall(r"<text[^>]*>([^<]+)</text>", svg)
        ticks = [t.strip() for t in texts if t.strip() in ("Vanilla", "Reno", "NewReno", "SACK")]
        assert ticks[:4] == ["Vanilla", "Reno", "NewReno", "SACK"], ticks
        panels = [t.strip() for t in texts if t.strip().startswith("policy ")]
        assert panels[:2] == ["policy EPD", "policy SD"], panels
        effects = _svg_levels((figs / f"{link}-effects.svg").read_text())
        assert [lv for lv, _ in effects[:9]] == ["tcp-Vanilla", "tcp-Reno", "tcp-NewReno", "tcp-SACK", "buffer_rtt-0.5",
                                                 "buffer_rtt-1", "buffer_rtt-2", "drop_policy-EPD", "drop_policy-SD"]
        for level, color in effects:
            assert want[level] == color, (link, level, color)


def test_results_axes_show_the_differences(tmp_path):
    """Efficiency of 0.83-0.94 is not drawn on a 0-1.05 axis."""
    from sattcp import plots

    store = fake_store(tmp_path / "r.duckdb")
    paper = load_paper(DATA).results
    meo = paper[paper["link"] == "MEO"]
    fig = plots.results_figure(meo, meo, responses=["efficiency", "fairness"], x="tcp", group="buffer_rtt",
                               panel="drop_policy", title="t")
    lo, hi = fig.axes[0].get_ylim()
    assert 0.75 < lo < meo.efficiency.min() and meo.efficiency.max() < hi < 1.0, (lo, hi)
    assert store.exists()


def test_buffer_recommendations_hold_on_the_papers_values():
    paper = load_paper(DATA).results
    checks = check_buffer_recommendations(paper, paper)
    assert [c.link for c in checks] == ["WAN", "MEO", "GEO"] and len(checks) == len(BUFFER_CLAIMS)
    assert all(c.holds_paper and c.holds_ours for c in checks), [(c.claim, c.paper) for c in checks]
    # A worse 0.5 RTT for SACK at GEO breaks the GEO recommendation.
    worse = paper.copy()
    sel = (worse.link == "GEO") & (worse.tcp == "SACK") & (worse.buffer_rtt == "0.5")
    worse.loc[sel, "efficiency"] -= 0.08
    geo = check_buffer_recommendations(worse, paper)[2]
    assert geo.holds_paper and geo.holds_ours is False


def test_report_lists_buffer_recommendations(tmp_path):
    store = fake_store(tmp_path / "r.duckdb")
    html = build_report(store, "kota-www", tmp_path / "out", paper_dir=DATA).read_text()
    assert "SACK with a 0.5 RTT buffer is the optimal choice" in html and "a 1 RTT buffer is enough" in html


def _two_factor_store(path: Path, blocks: list[str]) -> Path:
    """A 2 x 2 study with one run per combination in each block (zero degrees of freedom for
    error), blocks stored in the order given."""
    with Store(path) as st:
        st.save_study("tiny", {"description": "tiny", "factors": {"tcp.flavor": ["reno", "sack"], "switch.policy": ["epd", "sd"]},
                               "blocks": [{"name": b} for b in ("WAN", "MEO", "GEO")], "responses": ["efficiency"]})
        i = 0
        for b in blocks:
            for t, tv in (("reno", 0.0), ("sack", 0.05)):
                for p, pv in (("epd", 0.0), ("sd", 0.01)):
                    st.record_run("tiny", f"r{i}", factors={"tcp.flavor": t, "switch.policy": p}, status="ok", block=b,
                                  seed=1, summary={"efficiency": 0.8 + tv + pv + 0.003 * i, "events": 1, "wall_time_s": 0.1})
                    i += 1
    return path


def test_blocks_come_in_the_studys_order(tmp_path):
    store = _two_factor_store(tmp_path / "t.duckdb", ["MEO", "GEO", "WAN"])
    assert [b for b, _ in analyse_study(store, "tiny")] == ["WAN", "MEO", "GEO"]


def test_zero_degrees_of_freedom_says_replications_are_needed(tmp_path):
    store = _two_factor_store(tmp_path / "t.duckdb", ["GEO"])
    html = build_study_report(store, "tiny", tmp_path / "out").read_text()
    assert "Confidence intervals cannot be computed" in html and "Replications are needed" in html
    assert "not significant" not in html and "ci_low" not in html
    assert "no confidence intervals: zero degrees of freedom for error" in (tmp_path / "out" / "figures" / "geo-efficiency-effects.svg").read_text()


@pytest.mark.parametrize("failing", ["effects.csv", "allocation-of-variation.png"])
@pytest.mark.parametrize("generic", [False, True], ids=["analyze-html", "generic"])
def test_a_write_that_fails_midway_leaves_no_report_and_no_part_of_a_file(tmp_path, monkeypatch, failing, generic):
    """A full disk while a study's CSV or a figure is written: no report.html, no
    temporary file, and every file left whole (the earlier rebuild's)."""
    from sattcp.study_report import build_generic_report

    build = build_generic_report if generic else build_study_report
    store = _two_factor_store(tmp_path / "t.duckdb", ["GEO"])
    out = tmp_path / "out"
    build(store, "tiny", out)

    def files():
        return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
                if p.is_file() and p.suffix not in (".svg", ".pdf")}  # those two vary by save

    before = files()
    assert failing in {Path(k).name for k in before}
    with monkeypatch.context() as m, pytest.raises(OSError, match="No space left"):
        disk_full_on(m, failing)
        build(store, "tiny", out)
    assert files() == {k: v for k, v in before.items() if k != "report.html"}
    assert build(store, "tiny", out).exists()


def test_analyze_html_on_a_full_disk_names_the_file_and_exits_1(tmp_path, monkeypatch, capsys):
    from sattcp import cli

    store = _two_factor_store(tmp_path / "t.duckdb", ["GEO"])
    out = tmp_path / "out"
    disk_full_on(monkeypatch, "effects.csv")
    assert cli.main(["analyze", str(store), "--study", "tiny", "--html", str(out)]) == 1
    err = capsys.readouterr().err
    assert f"cannot write {out / 'effects.csv'}: No space left on device" in err and "Traceback" not in err, err


def test_the_generic_report_of_a_replicated_study_draws_each_combinations_mean(tmp_path):
    # reproduce modern-cc --replications 2 failed in results_figure ("float() argument must
    # be ... not 'Series'"): two runs per bar.
    from sattcp.study_report import build_generic_report

    store = tmp_path / "t.duckdb"
    with Store(store) as st:
        st.save_study("rep", {"factors": {"tcp.flavor": ["reno", "sack"], "switch.policy": ["epd", "sd"]},
                              "blocks": [{"name": "GEO"}], "seeds": [1, 2], "responses": ["efficiency"]})
        for i, (t, p, seed) in enumerate((t, p, s) for t in ("reno", "sack") for p in ("epd", "sd") for s in (1, 2)):
            st.record_run("rep", f"r{i}", factors={"tcp.flavor": t, "switch.policy": p}, status="ok", block="GEO",
                          seed=seed, summary={"efficiency": 0.8 + 0.05 * (t == "sack") + 0.01 * seed, "events": 1,
                                              "wall_time_s": 0.1})
    html = build_generic_report(store, "rep", tmp_path / "out").read_text()
    assert "rep: each combination&#x27;s mean response over its replications" in html
    svg = (tmp_path / "out" / "figures" / "results.svg").read_text()
    assert "rep: mean of each combination" in svg
