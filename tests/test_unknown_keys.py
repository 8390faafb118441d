"""An unknown key names the key the user most likely meant (the core's schema for scenario keys,
sattcp.sweep for a study file's own keys), and a renamed key names its replacement."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import sattcp
from conftest import ROOT, run_cli
from sattcp import ScenarioError
from sattcp.sweep import StudyError, load_study

GEO = ROOT / "scenarios" / "geo-bulk.toml"


def test_cli_names_the_key_meant_and_exits_2(tmp_path):
    scen = tmp_path / "typo.toml"
    scen.write_text(GEO.read_text().replace("[tcp]", "[tcp]\nflavour = \"sack\"", 1))
    p = run_cli("run", str(scen), "--set", "links.bottleneck.rat=2Mbps", "--set", "tcp.colour=1")
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "tcp.flavour: unknown key (did you mean tcp.flavor?)" in p.stderr
    assert "links.bottleneck.rat: unknown key (did you mean links.bottleneck.rate?)" in p.stderr
    # Far from every key of [tcp]: no suggestion rather than a wrong one.
    assert "tcp.colour: unknown key\n" in p.stderr
    assert "Traceback" not in p.stderr


def test_cli_names_the_replacement_of_a_renamed_key():
    p = run_cli("run", str(GEO), "--set", "tcp.clear_backoff_when_acked=true")
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert ('tcp.clear_backoff_when_acked: unknown key (replaced by tcp.rto_backoff_reset in b1049f3: '
            'true is rto_backoff_reset = "all_acked", false is "sample")') in p.stderr


def test_problems_keep_path_rule_and_got():
    with pytest.raises(ScenarioError) as e:
        sattcp.resolve(str(GEO), overrides={"tcp.flavour": "sack"})
    assert e.value.problems == [{"path": "tcp.flavour", "rule": "unknown key (did you mean tcp.flavor?)", "got": ""}]


def study(tmp_path: Path, body: str) -> Path:
    p = tmp_path / "study.toml"
    p.write_text(textwrap.dedent(body).replace("BASE", str(GEO)))
    return p


def test_a_study_key_typo_names_the_key_meant_and_still_lists_the_known_ones(tmp_path):
    p = study(tmp_path, """
        name = "typo"
        responses = ["efficiency"]
        colour = "red"
        SEEDS = 3
        nmae = "typo"
        [factor]
        "tcp.flavor" = ["reno", "sack"]
        [[blocks]]
        senario = "BASE"
        [quick]
        overide = { "run.duration" = "1s" }
    """)
    with pytest.raises(StudyError) as ei:
        load_study(p)
    rules = {q["path"]: q["rule"] for q in ei.value.problems}
    top = ("known: blocks, description, factors, name, notes, overrides, quick, replications, responses, "
           "scenario, seed, seeds")
    assert rules["factor"] == f"unknown key (did you mean factors? {top})"
    assert rules["colour"] == f"unknown key ({top})"
    # The scenario keys' rule (the core's scenario::schema::closest): case ignored, a swap of
    # two letters is one edit.
    assert rules["SEEDS"] == f"unknown key (did you mean seeds? {top})"
    assert rules["nmae"] == f"unknown key (did you mean name? {top})"
    assert rules["blocks[0].senario"] == "unknown key (did you mean scenario? known: levels, name, overrides, scenario)"
    assert rules["quick.overide"] == "unknown key (did you mean overrides? known: description, overrides)"
