"""Allocation of variation: the seeds' Tables 6/7, 9/10, 12/13 from their Tables 5, 8, 11."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT, run_cli
from sattcp.analysis import allocation_of_variation

DATA = Path(__file__).resolve().parents[1] / "data"
FACTORS = ["tcp", "buffer_rtt", "drop_policy"]


def _table(name: str) -> pd.DataFrame:
    return pd.read_csv(DATA / name, dtype=str)


def _inputs() -> pd.DataFrame:
    return pd.read_csv(DATA / "seed000-tables-5-8-11.csv", dtype={"buffer_rtt": str})


def _ulp(printed: str) -> float:
    """One unit of the last printed digit of a value as the paper printed it."""
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    return 10.0**-decimals


def _close(ours: float, printed: str) -> bool:
    return abs(ours - float(printed)) <= _ulp(printed) * (1 + 1e-9)


@pytest.fixture(scope="module")
def ours() -> dict[tuple[str, str], object]:
    d = _inputs()
    return {
        (link, r): allocation_of_variation(d[d["link"] == link], FACTORS, r)
        for link in ("WAN", "MEO", "GEO")
        for r in ("efficiency", "fairness")
    }


@pytest.mark.parametrize("row", _table("seed000-tables-6-9-12.csv").to_dict("records"),
                         ids=lambda r: f"T{r['table']}-{r['component']}-{r['response']}-{r['quantity']}")
def test_tables_6_9_12(ours, row):
    a = ours[(row["link"], row["response"])]
    if row["quantity"] == "s_e":
        got = a.s_e
    else:
        got = float(a.variation.loc[row["component"], row["quantity"]])
    assert _close(got, row["value"]), (got, row["value"])


@pytest.mark.parametrize("row", _table("seed000-tables-7-10-13.csv").to_dict("records"),
                         ids=lambda r: f"T{r['table']}-{r['level']}-{r['response']}")
def test_tables_7_10_13(ours, row):
    a = ours[(row["link"], row["response"])]
    e = a.effect(row["factor"], row["level"])
    for col in ("effect", "ci_low", "ci_high"):
        assert _close(float(e[col]), row[col]), (col, float(e[col]), row[col])


def test_degrees_of_freedom_as_in_the_seed(ours):
    a = ours[("WAN", "efficiency")]
    assert a.dof_error == 24 - 1 - 6 - 11
    assert a.variation.loc["tcp:buffer_rtt", "dof"] == 6
    assert a.t_quantile == pytest.approx(1.943, abs=5e-4)


def test_text_rendering_names_components(ours):
    text = ours[("GEO", "efficiency")].to_text()
    assert "tcp:buffer_rtt" in text and "s_e" in text and "SACK" in text


def test_unbalanced_design_is_rejected():
    d = _inputs()
    d = d[d["link"] == "WAN"].iloc[1:]
    with pytest.raises(ValueError, match="balanced full factorial"):
        allocation_of_variation(d, FACTORS, "efficiency")


def test_unknown_column_is_rejected():
    with pytest.raises(ValueError, match="columns not found"):
        allocation_of_variation(_inputs(), ["nope"], "efficiency")


def test_bad_input_is_an_analysis_error_and_a_value_error_with_its_message(tmp_path):
    from sattcp.errors import AnalysisError, SattcpError
    from sattcp.report import analyse_study
    from sattcp.store import Store

    two = pd.DataFrame({"a": ["x", "y", "x", "y"], "b": [1, 1, 2, 2], "y": [1.0, 2.0, 3.0, 5.0]})
    cases = [
        (lambda: allocation_of_variation(two, [], "y"), "^at least one factor is needed$"),
        (lambda: allocation_of_variation(two, ["a", "a"], "y"), r"^factors repeat: \['a', 'a'\]$"),
        (lambda: allocation_of_variation(two, ["nope"], "y"), r"^columns not found: \['nope'\]"),
        (lambda: allocation_of_variation(two, ["a"], "y", confidence=1.5), r"^confidence must be in \(0, 1\), got 1.5$"),
        (lambda: allocation_of_variation(two, ["a"], "y", confidence="0.9"), r"^confidence must be in \(0, 1\), got '0.9'$"),
        (lambda: allocation_of_variation(two.assign(y=[1, 2, None, 4]), ["a"], "y"), "^response 'y' has missing"),
        (lambda: allocation_of_variation(two, ["a"], "y", levels={"a": ["x"]}), r"^factor 'a': levels \['y'\] are not"),
        (lambda: allocation_of_variation(two[two.a == "x"], ["a"], "y"), "^factor 'a' has 1 level"),
        (lambda: allocation_of_variation(two.iloc[1:], ["a", "b"], "y"), "^not a balanced full factorial"),
    ]
    store = tmp_path / "r.duckdb"
    with Store(store) as st:
        st.save_study("s", {"factors": {"a": ["x", "y"]}, "responses": ["efficiency"]})
        for i, a in enumerate(["x", "y", "x", "y"]):
            st.record_run("s", f"k{i}", block="B", factors={"a": a}, status="ok", seed=i // 2 + 1,
                          summary={"efficiency": 0.5 + i / 10})
    cases += [
        (lambda: analyse_study(store, "s", block="C"), r"^no block 'C' in study 's' \(blocks: \['B'\]\)$"),
        (lambda: analyse_study(store, "s", ["a"]), "^response 'a' is a factor of 's', not a response"),
        (lambda: analyse_study(store, "s", ["seed"]), "^response 'seed' is each run's replication seed"),
        (lambda: analyse_study(store, "s", ["nope"]), "^no response 'nope' in the runs"),
        (lambda: analyse_study(store, "s", ["build"]), "^response 'build' is not numeric"),
    ]
    for call, message in cases:
        with pytest.raises(AnalysisError, match=message) as e:
            call()
        assert isinstance(e.value, ValueError) and isinstance(e.value, SattcpError)
    assert analyse_study(store, "s")[("B", "efficiency")].n == 4


def test_an_unknown_level_or_factor_is_a_level_missing_error_naming_the_known_ones():
    # Was a bare KeyError("no level 'z' of factor 'a'"), not a SattcpError, naming nothing known.
    from sattcp.errors import AnalysisError, LevelMissing, SattcpError

    two = pd.DataFrame({"a": ["x", "y", "x", "y"], "b": [1, 1, 2, 2], "y": [1.0, 2.0, 3.0, 5.0]})
    a = allocation_of_variation(two, ["a", "b"], "y")
    cases = [(lambda: a.effect("a", "z"), r"^no level 'z' of factor 'a' \(levels: \['x', 'y'\]\)$"),
             (lambda: a.effect("b", 3), r"^no level 3 of factor 'b' \(levels: \[1, 2\]\)$"),
             (lambda: a.effect("c", "x"), r"^no factor 'c' in the analysis of 'y' \(factors: \['a', 'b'\]\)$")]
    for call, message in cases:
        with pytest.raises(LevelMissing, match=message) as e:
            call()
        assert isinstance(e.value, KeyError) and isinstance(e.value, AnalysisError) and isinstance(e.value, SattcpError)
    assert float(a.effect("a", "y")["effect"]) == pytest.approx(0.75)


def test_replications_split_error_into_pure_error():
    rng = np.random.default_rng(1)
    rows = [
        {"a": a, "b": b, "c": c, "y": a + 2 * b + (a * c) + rng.normal(0, 0.1)}
        for a, b, c in itertools.product(range(3), range(2), range(2))
        for _ in range(3)
    ]
    res = allocation_of_variation(pd.DataFrame(rows), ["a", "b", "c"], "y")
    v = res.variation
    assert res.replications == 3
    assert v.loc["pure_error", "dof"] == 12 * 2
    assert v.loc["higher_order", "dof"] + v.loc["pure_error", "dof"] == res.dof_error
    assert v.loc["higher_order", "ss"] + v.loc["pure_error", "ss"] == pytest.approx(res.sse)
    # The pure error variance estimates the noise variance.
    assert v.loc["pure_error", "ss"] / v.loc["pure_error", "dof"] == pytest.approx(0.01, rel=0.6)


@st.composite
def designs(draw):
    k = draw(st.integers(1, 4))
    nlev = [draw(st.integers(2, 4)) for _ in range(k)]
    reps = draw(st.integers(1, 2))
    cells = list(itertools.product(*[range(n) for n in nlev]))
    n = len(cells) * reps
    ys = draw(st.lists(st.floats(-100, 100, allow_nan=False), min_size=n, max_size=n))
    rows = [dict(zip([f"f{i}" for i in range(k)], c, strict=False), y=ys[j * len(cells) + i])
            for j in range(reps) for i, c in enumerate(cells)]
    return pd.DataFrame(rows), [f"f{i}" for i in range(k)]


@settings(max_examples=60, deadline=None)
@given(designs())
def test_properties(design):
    df, factors = design
    res = allocation_of_variation(df, factors, "y")
    v = res.variation
    parts = v[v["kind"].isin(["main", "interaction"])]["ss"].sum() + v.loc["error", "ss"]
    scale = max(1.0, float((df["y"] ** 2).sum()))
    # Components sum to the total; total = individual - mean.
    assert parts == pytest.approx(res.sst, abs=1e-9 * scale)
    assert v.loc["individual", "ss"] - v.loc["mean", "ss"] == pytest.approx(res.sst, abs=1e-9 * scale)
    # Degrees of freedom add up.
    model = v[v["kind"].isin(["main", "interaction"])]["dof"].sum()
    assert model + v.loc["error", "dof"] == res.n - 1
    # Effects sum to zero per factor.
    for _, g in res.effects.groupby("factor"):
        assert abs(g["effect"].sum()) <= 1e-9 * scale
    # Interactions sum to zero over each index.
    for (_fa, _fb), g in res.interactions.groupby(["factor_a", "factor_b"]):
        for col in ("level_a", "level_b"):
            assert g.groupby(col)["interaction"].sum().abs().max() <= 1e-9 * scale
    # The model plus residuals gives back the data.
    assert float((res.residuals**2).sum()) == pytest.approx(res.sse, abs=1e-9 * scale)


# -- a response that does not vary ---------------------------------------------------------------


def _two_factors(y) -> pd.DataFrame:
    """3 x 3 levels, 2 replications, y(a, b) given as a function."""
    return pd.DataFrame([{"a": a, "b": b, "y": y(a, b)}
                         for a, b in itertools.product("xyz", "pqr") for _ in range(2)])


def test_a_constant_response_has_nothing_to_allocate_and_no_significant_effect():
    # mu = mean(0.1 x 18) carries a rounding error, so SST was 3.5e-33, not 0, and dividing
    # rounding error by rounding error put 400% of it on factor a (100% on a:b), with every
    # "effect" of -0.0000 significant.
    res = allocation_of_variation(_two_factors(lambda a, b: 0.1), ["a", "b"], "y")
    assert not res.varies and res.sst == 0 and res.sse == 0
    assert res.variation["percent"].isna().all()
    assert (res.variation.drop(["individual", "mean"])["ss"] == 0).all()
    assert (res.effects["effect"] == 0).all() and not res.effects["significant"].any()
    assert (res.interactions["interaction"] == 0).all()
    text = res.to_text()
    assert ("y does not vary across the 18 observations (every one is 0.1, to rounding): nothing "
            "to allocate, every effect is 0 and none is significant.") in text
    assert "100.00" not in text and "400" not in text
    # Tiny but real differences (1e-9 of the values) still vary.
    tiny = allocation_of_variation(_two_factors(lambda a, b: 1e6 + 1e-3 * (a == "x")), ["a", "b"], "y")
    assert tiny.varies and tiny.percent("a") == pytest.approx(100)


def test_an_effect_of_rounding_error_is_not_significant():
    # y depends on b alone and the replications repeat each other (a deterministic
    # simulator): s_e is rounding error, and a's effects (-5.6e-17 each) had an interval
    # (-6.6e-17, -4.5e-17) that excluded 0, so a was "significant".
    value = {"p": 0.637, "q": 0.27, "r": 0.041}
    res = allocation_of_variation(_two_factors(lambda a, b: value[b]), ["a", "b"], "y")
    e = res.effects.set_index(["factor", "level"])
    assert res.percent("b") == pytest.approx(100)
    assert not e.loc["a", "significant"].any()
    assert e.loc["b", "significant"].all()
    assert "(not significant)" in res.to_text()


def _sweep_and_analyze(tmp_path, name: str, duration: str, factors: str) -> tuple[str, str]:
    """A study of ``factors`` (TOML lines) on geo-bulk, swept and analysed from the command line
    with --html: the analysis's stdout and its HTML."""
    (tmp_path / "s.toml").write_text(
        f'name = "{name}"\nscenario = "{(ROOT / "scenarios" / "geo-bulk.toml").as_posix()}"\n'
        f'responses = ["efficiency"]\nreplications = 2\n[overrides]\n"run.duration" = "{duration}"\n[factors]\n{factors}')
    store = tmp_path / "r.duckdb"
    p = run_cli("sweep", str(tmp_path / "s.toml"), "--store", str(store), "-j", "2", "--no-progress")
    assert p.returncode == 0, p.stderr
    p = run_cli("analyze", str(store), "--study", name, "--html", str(tmp_path / "html"))
    assert p.returncode == 0, p.stderr
    return p.stdout, (tmp_path / "html" / "report.html").read_text()


def test_cli_analyze_of_a_study_whose_response_does_not_vary(tmp_path):
    # The reviewer's study: on geo-bulk, 3 s, neither the flavour nor the duplicate-ACK
    # threshold changes anything (no loss), so every run has the same efficiency.
    out, html = _sweep_and_analyze(tmp_path, "const", "3s", '"tcp.flavor" = ["reno", "newreno", "sack"]\n"tcp.dupack_threshold" = [3, 4, 5]\n')
    assert "efficiency does not vary across the 18 observations" in out
    assert "nothing to allocate" in out
    assert "100.00" not in out and "-0.0000" not in out
    assert "efficiency does not vary across the 18 observations" in html


# -- levels that are True and False ------------------------------------------------------------


def test_boolean_levels_are_labels_not_a_mask():
    # eff.loc[data[a]] took a column of True/False as a mask: IndexingError "Unalignable
    # boolean Series provided as indexer".
    rng = np.random.default_rng(3)
    rows = [{"ack": ack, "ber": ber, "y": 0.5 + 0.2 * ack - 0.1 * ber + 0.05 * ack * ber + rng.normal(0, 0.01)}
            for ack, ber in itertools.product([True, False], [0, 1]) for _ in range(2)]
    df = pd.DataFrame(rows)
    res = allocation_of_variation(df, ["ack", "ber"], "y", levels={"ack": [True, False], "ber": [0, 1]})
    named = allocation_of_variation(df.assign(ack=df["ack"].map({True: "on", False: "off"})),
                                    ["ack", "ber"], "y", levels={"ack": ["on", "off"], "ber": [0, 1]})
    pd.testing.assert_frame_equal(res.variation, named.variation)
    assert np.allclose(res.residuals, named.residuals)
    assert float(res.effect("ack", True)["effect"]) == pytest.approx(float(named.effect("ack", "on")["effect"]))
    assert list(res.interactions["level_a"]) == [True, True, False, False]
    assert list(res.interactions["interaction"]) == pytest.approx(list(named.interactions["interaction"]))
    # A boolean second factor of an interaction too.
    both = allocation_of_variation(df.assign(big=df["ber"] == 1), ["ack", "big"], "y")
    assert both.percent("ack:big") == pytest.approx(named.percent("ack:ber"))


def test_cli_analyze_of_a_study_with_a_boolean_factor(tmp_path):
    out, html = _sweep_and_analyze(tmp_path, "acks", "2s", '"tcp.delayed_ack" = [true, false]\n"links.bottleneck.ber" = [0, 1e-6]\n')
    lines = out.splitlines()
    assert any(ln.split()[:2] == ["tcp.delayed_ack", "True"] for ln in lines), out
    assert any(ln.split()[:2] == ["tcp.delayed_ack", "False"] for ln in lines), out
    assert "data-figure=\"acks-efficiency-effects\"" in html and "tcp.delayed_ack=True:" in html
    effects = pd.read_csv(tmp_path / "html" / "effects.csv")
    assert list(effects[effects["factor"] == "tcp.delayed_ack"]["level"]) == ["True", "False"]
    for ext in ("png", "svg", "pdf"):
        assert (tmp_path / "html" / "figures" / f"acks-efficiency-effects.{ext}").stat().st_size > 0


# -- runs left out of the analysis -----------------------------------------------------------


def failing_runner(scenario, seed=None, overrides=None, progress=False):
    """test_sweep's fake runner, except that every run of a block whose scenario is b.toml
    fails, every run of seed 2 of a block whose scenario is flaky.toml, and the runs of seed 2
    with tcp.flavor = sack of a block whose scenario is partial.toml."""
    from test_sweep import fake_runner

    name = Path(scenario).name
    sack = (overrides or {}).get("tcp.flavor") == "sack"
    if name == "b.toml" or (name == "flaky.toml" and seed == 2) or (name == "partial.toml" and seed == 2 and sack):
        raise ValueError(f"simulated failure ({name}, seed {seed})")
    return fake_runner(scenario, seed=seed, overrides=overrides, progress=progress)


def _sweep_blocks(tmp_path: Path, scenarios: list[str]) -> Path:
    """A study of blocks A, B, ... on these scenario files, 2 x 2 levels, 2 replications,
    swept with :func:`failing_runner`; returns the store."""
    from sattcp.cli_study import main

    for s in scenarios:
        (tmp_path / s).write_text("[run]\nduration = '1s'\n")
    blocks = "".join(f'[[blocks]]\nname = "{chr(65 + i)}"\nscenario = "{s}"\n' for i, s in enumerate(scenarios))
    (tmp_path / "s.toml").write_text('name = "s"\nresponses = ["efficiency"]\nreplications = 2\n[factors]\n'
                                     '"tcp.flavor" = ["reno", "sack"]\n"switch.policy" = ["epd", "sd"]\n' + blocks)
    store = tmp_path / "r.duckdb"
    main(["sweep", str(tmp_path / "s.toml"), "--store", str(store), "--runner",
          "test_analysis:failing_runner", "-j", "2", "--no-progress"])
    return store


def _analyze_a_without_b(tmp_path: Path, capsys: pytest.CaptureFixture[str], scenarios: list[str]) -> tuple[Path, str, str]:
    """:func:`_sweep_blocks` of blocks A and B, then ``sattcp analyze --html``, which analyses
    block A alone (exit 0): the store, stderr and the report."""
    from sattcp.cli_study import main

    store = _sweep_blocks(tmp_path, scenarios)
    capsys.readouterr()
    assert main(["analyze", str(store), "--study", "s", "--html", str(tmp_path / "html")]) == 0
    out, err = capsys.readouterr()
    assert "== s / A / efficiency" in out and "/ B /" not in out
    return store, err, (tmp_path / "html" / "report.html").read_text()


def test_cli_analyze_names_a_block_left_out_because_every_run_failed(tmp_path, capsys):
    # Printed block A's analysis alone, exit 0, without a word about B.
    from sattcp.cli_study import main

    store, err, html = _analyze_a_without_b(tmp_path, capsys, ["a.toml", "b.toml"])
    assert ("note: block B is left out of the analysis, as none of its runs succeeded: all 8 of its "
            "runs failed\n") in err
    assert "failed: 4 run(s): ValueError: simulated failure (b.toml, seed 1)" in err
    assert "--retry-failed" in err
    assert "block A" not in err  # nothing is missing there
    assert ("<li>block B is left out of the analysis, as none of its runs succeeded: all 8 of its runs "
            "failed</li>") in html
    # Asked for block B alone: nothing to analyse, an error (exit 2) that says why.
    assert main(["analyze", str(store), "--study", "s", "--block", "B"]) == 2
    assert ("sattcp analyze: error: block 'B' cannot be analysed, as none of its runs succeeded: all 8 of its "
            "runs failed (blocks analysed: ['A'])\n") in capsys.readouterr().err


#: The note on block B of a study of _sweep_blocks whose second scenario is partial.toml.
PARTIAL_NOTE = ("block B is left out of the analysis, as its successful runs are no balanced design (every "
                "combination of levels the same number of times): 2 of its 8 runs failed (tcp.flavor=sack "
                "switch.policy=epd seed 2, tcp.flavor=sack switch.policy=sd seed 2)")


def test_cli_analyze_leaves_out_a_block_some_of_whose_runs_failed_naming_them(tmp_path, capsys):
    # Two runs of block B failed: its design was unbalanced and analyze stopped (exit 2, 'not a
    # balanced full factorial design'), block A's analysis with it.
    from sattcp.cli_study import main
    from sattcp.study_report import build_generic_report

    store, err, html = _analyze_a_without_b(tmp_path, capsys, ["a.toml", "partial.toml"])
    assert err.splitlines()[:2] == [
        f"note: {PARTIAL_NOTE}",
        "failed: 2 run(s): ValueError: simulated failure (partial.toml, seed 2)",
    ], err
    assert f"<li>{PARTIAL_NOTE}</li>" in html and "<h2>B: efficiency</h2>" not in html
    # The generic report (reproduce modern-cc's) the same, without an effects figure of B.
    html = build_generic_report(store, "s", tmp_path / "g").read_text()
    assert f"<li>{PARTIAL_NOTE}</li>" in html
    assert 'data-figure="a-effects"' in html and 'data-figure="b-effects"' not in html
    # Asked for block B alone: an error (exit 2) naming the runs it lacks.
    assert main(["analyze", str(store), "--study", "s", "--block", "B"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "sattcp analyze: error: block 'B' cannot be analysed, as " + PARTIAL_NOTE.split(", as ", 1)[1]
        + " (blocks analysed: ['A'])")


def test_cli_analyze_of_a_study_without_a_complete_block_is_an_error_naming_what_is_missing(tmp_path, capsys):
    from sattcp.cli_study import main

    store = _sweep_blocks(tmp_path, ["b.toml", "partial.toml"])
    capsys.readouterr()
    assert main(["analyze", str(store), "--study", "s"]) == 2
    out, err = capsys.readouterr()
    assert not out
    assert err.splitlines()[-1] == (
        f"sattcp analyze: error: study 's' has no block to analyse in {store}: block A is left out, as none of "
        "its runs succeeded: all 8 of its runs failed; block B is left out, as " + PARTIAL_NOTE.split(", as ", 1)[1])


def test_cli_analyze_says_when_replications_are_missing(tmp_path, capsys):
    # Every seed-2 run failed: analysed as '4 observations, 1 replication(s)' without a word.
    from sattcp.cli_study import main

    store = _sweep_blocks(tmp_path, ["flaky.toml"])
    capsys.readouterr()
    assert main(["analyze", str(store), "--study", "s"]) == 0
    out, err = capsys.readouterr()
    assert "(4 observations, 1 replication(s))" in out
    assert "note: block A: 4 of its 8 runs failed\n" in err
    assert "note: block A is analysed with 1 of the study's 2 replications: no run of seed 2 succeeded\n" in err


def test_cli_analyze_of_a_study_whose_runs_all_failed_is_an_error(tmp_path, capsys):
    from sattcp.cli_study import main

    store = _sweep_blocks(tmp_path, ["b.toml"])
    capsys.readouterr()
    assert main(["analyze", str(store), "--study", "s"]) == 2
    err = capsys.readouterr().err
    assert (f"sattcp analyze: error: study 's' has no block to analyse in {store}: block A is left out, as none of "
            "its runs succeeded: all 8 of its runs failed\n") in err


def test_run_notes_name_runs_missing_here_and_there():
    from sattcp.report import run_notes

    definition = {"factors": {"f": ["x", "y"]}, "seeds": [1, 2, 3],
                  "blocks": [{"name": "A"}, {"name": "B"}, {"name": "C"}, {"name": "D"}]}
    rows = [("A", f, s, "ok") for f in "xy" for s in (1, 2, 3)]
    # B: x has 2 successful runs, y 1: no balanced design.
    rows += [("B", "x", 1, "ok"), ("B", "x", 2, "ok"), ("B", "y", 1, "ok"), ("B", "y", 2, "failed")]
    # D: 2 each, of other seeds: balanced, analysed.
    rows += [("D", "x", 1, "ok"), ("D", "x", 2, "ok"), ("D", "x", 3, "failed"),
             ("D", "y", 1, "ok"), ("D", "y", 2, "failed"), ("D", "y", 3, "ok")]
    runs = pd.DataFrame(rows, columns=["block", "f", "seed", "status"])
    assert run_notes(runs, definition) == [
        "block B is left out of the analysis, as its successful runs are no balanced design (every combination "
        "of levels the same number of times): 1 of its 6 runs failed (f=y seed 2); 2 of its 6 runs are not in "
        "the store yet (f=x seed 3, f=y seed 3; an unfinished sweep: the same sattcp sweep command runs them)",
        "block C is left out of the analysis, as none of its runs succeeded: none of its 6 runs is in "
        "the store yet (an unfinished sweep: the same sattcp sweep command runs them)",
        "block D: 2 of its 6 runs failed",
        "block D: replications missing: seed 2 in 1 of 2 combinations, seed 3 in 1 of 2 combinations",
    ]
    assert run_notes(runs, definition, block="A") == []
    # At most NAMED_RUNS runs are named.
    many = {"factors": {"f": list(range(12))}, "seeds": [1], "blocks": [{"name": "E"}]}
    runs = pd.DataFrame([("E", f, 1, "ok" if f == 0 else "failed") for f in range(12)],
                        columns=["block", "f", "seed", "status"])
    assert run_notes(runs, many) == [
        "block E is left out of the analysis, as its successful runs are no balanced design (every combination "
        "of levels the same number of times): 11 of its 12 runs failed (" + ", ".join(f"f={f} seed 1" for f in range(1, 11))
        + " and 1 more)"]
