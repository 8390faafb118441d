"""The command line as a user meets it: summaries, JSON, output files, bad input (exit 2)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from conftest import NEEDS_PROC, ROOT, SCENARIOS, parquet_disk_full_after, run_cli


def test_run_prints_a_readable_summary():
    p = run_cli("run", "scenarios/geo-bulk.toml", "--set", "run.duration=5s")
    assert p.returncode == 0, p.stderr
    assert "efficiency" in p.stdout and "bottleneck" in p.stdout and "digest" in p.stdout


def test_the_summary_gives_the_results_counts_with_thousands_separated():
    # The counts were printed bare ("queue drops 4332") beside "retransmitted 8,242,176 B".
    args = ("run", "scenarios/geo-dumbbell-droptail.toml", "--set", "tcp.mss=1024")
    s = json.loads(run_cli(*args, "--json").stdout)["summary"]
    assert s["drops_queue_full"] >= 1000 and s["timeouts"] >= 1 and s["fast_retransmits"] >= 1, s
    text = run_cli(*args).stdout
    assert (f"timeouts {s['timeouts']:,}, fast retransmits {s['fast_retransmits']:,}, retransmitted "
            f"{s['bytes_retransmitted']:,} B, queue drops {s['drops_queue_full']:,}, corrupted {s['drops_corrupted']:,}") in text, text
    bottleneck = next(ln for ln in text.splitlines() if ln.split()[:1] == ["bottleneck"])
    assert f" {s['drops_queue_full']:,} " in bottleneck, bottleneck


def test_json_document_and_out_file(tmp_path):
    out = tmp_path / "r.parquet"
    p = run_cli("run", "scenarios/geo-bulk.toml", "--set", "run.duration=3s", "--seed", "9", "--json", "--out", str(out))
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert {"name", "seed", "events", "digest", "summary", "flows", "links", "traces", "scenario", "wall_time_s"} <= set(doc)
    assert doc["seed"] == 9 and doc["scenario"]["run"]["duration"] == "3s"
    assert out.exists()


def test_set_changes_one_parameter():
    a = json.loads(run_cli("run", "scenarios/geo-bulk.toml", "--set", "run.duration=3s", "--json").stdout)
    b = json.loads(run_cli("run", "scenarios/geo-bulk.toml", "--set", "run.duration=3s", "--set", "links.bottleneck.rate=10Mbps", "--json").stdout)
    assert b["links"][0]["rate_bps"] == 10_000_000 and a["links"][0]["rate_bps"] == 45_000_000


def test_set_with_a_table_value_merges_into_the_files_table():
    import tomllib

    def config(*sets: str) -> dict:
        p = run_cli("run", "scenarios/geo-bulk.toml", *(a for s in sets for a in ("--set", s)), "--print-config")
        assert p.returncode == 0, p.stderr
        return tomllib.loads(p.stdout)

    # tcp={mss=1000} is tcp.mss=1000: geo-bulk's window_scale 6 and 100 ms timer stay.
    merged = config("tcp={mss=1000}")
    assert merged == config("tcp.mss=1000")
    assert (merged["tcp"]["mss"], merged["tcp"]["window_scale"], merged["tcp"]["timer_granularity"]) == (1000, 6, "100ms")


def test_a_study_and_a_scenario_given_to_the_wrong_command_are_named_as_such():
    # Were 10 and 8 problems: an unknown key for each of the file's keys, and the missing links.
    p = run_cli("run", "python/sattcp/studies/modern-cc.toml")
    assert p.returncode == 2
    assert p.stderr.splitlines()[1:] == ["  (scenario): python/sattcp/studies/modern-cc.toml: this is a study file (factors), "
                                         "not a scenario: `sattcp sweep` runs a study"], p.stderr
    p = run_cli("sweep", "scenarios/geo-bulk.toml")
    assert p.returncode == 2
    assert p.stderr.splitlines()[1:] == ["  (study): this is a scenario file ([app], [links], [run], [switch], [tcp], [topology]), "
                                         "not a study: `sattcp run` runs it, and a study names it as its base `scenario`"], p.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--set", "links.bottleneck.rate=45Mbs"], "links.bottleneck.rate: unknown rate unit"),
        (["--set", "tcp.mss=0"], "tcp.mss"),
        (["--set", "tcp.window_scale=15"], "tcp.window_scale"),
        (["--set", "run.duration=0s"], "run.duration: must be > 0"),
        (["--set", "switch.buffer=10B"], "switch.buffer"),
        (["--set", "links.access.rate=-1Mbps"], "links.access.rate"),
        (["--set", "tcp.unknown=3"], "tcp.unknown: unknown key"),
        (["--set", "novalue"], "--set takes dotted.path=value"),
    ],
)
def test_bad_input_exits_2_with_the_field_path(args, needle):
    p = run_cli("run", "scenarios/geo-bulk.toml", *args)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert needle in p.stderr
    assert "Traceback" not in p.stderr


def test_a_list_whose_strings_the_shell_unquoted_is_one_problem_line_with_the_value_meant():
    """`--set trace.links=[bottleneck]` (the shell took the quotes of `'["bottleneck"]'`): toml's
    two-line message once broke the problem list; now one line, and the value quoted."""
    p = run_cli("run", "scenarios/geo-bulk.toml", "--set", "trace.links=[bottlenek]")
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stderr.splitlines() == [
        "sattcp: invalid scenario (1 problem):",
        '  trace.links: must be a list; as written it is no TOML value (invalid array: expected `]`; '
        'strings in it are quoted: ["bottlenek"]), got [bottlenek]',
    ]


def test_missing_file_and_syntax_error(tmp_path):
    p = run_cli("run", str(tmp_path / "nope.toml"))
    assert p.returncode == 2 and "scenario file not found" in p.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text("[tcp\nmss = 1\n")
    p = run_cli("run", str(bad))
    assert p.returncode == 2 and "TOML syntax error at line 1" in p.stderr and "Traceback" not in p.stderr


def test_a_scenario_file_in_utf16_or_latin1_is_named_as_not_utf8_and_a_bom_is_accepted(tmp_path):
    # Before: "cannot read scenario file (UnicodeDecodeError)".
    text = (SCENARIOS / "geo-bulk.toml").read_text()
    u16 = tmp_path / "u16.toml"
    u16.write_text(text, encoding="utf-16")
    p = run_cli("run", str(u16))
    assert p.returncode == 2, p.stderr
    assert (f"(scenario): scenario file is not UTF-8 text (it starts with a UTF-16 byte-order mark): save it as UTF-8, "
            f"got {u16}") in p.stderr and "UnicodeDecodeError" not in p.stderr, p.stderr
    latin1 = tmp_path / "latin1.toml"
    latin1.write_bytes(b'name = "caf\xe9"\n')
    p = run_cli("run", str(latin1))
    assert p.returncode == 2 and f"scenario file is not UTF-8 text (byte 0xe9 at offset 11): save it as UTF-8, got {latin1}" in p.stderr, p.stderr
    bom = tmp_path / "bom.toml"
    bom.write_bytes(b"\xef\xbb\xbf" + text.encode())
    p = run_cli("run", str(bom), "--set", "run.duration=1s")
    assert p.returncode == 0, p.stderr


def test_unknown_output_format_is_an_error(tmp_path):
    p = run_cli("run", "scenarios/geo-bulk.toml", "--set", "run.duration=1s", "--out", str(tmp_path / "r.xlsx"))
    assert p.returncode == 2 and "unknown format" in p.stderr


def test_output_problems_are_found_before_the_run(tmp_path):
    # A 10^5 s run would take minutes: the bad --out must be reported at once.
    for out, needle in ((tmp_path / "nope" / "r.json", "does not exist"), (tmp_path / "r.csv", "unknown format"),
                        (tmp_path, f"--out {tmp_path}: is a folder, not a file")):
        p = run_cli("run", "scenarios/kota-geo.toml", "--set", "run.duration=100000s", "--out", str(out))
        assert p.returncode == 2 and needle in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_a_folder_given_as_the_pcap_is_named_as_a_folder(tmp_path):
    # Was "the file is pcapng; give it the suffix .pcapng" for a folder without the suffix.
    p = run_cli("run", "scenarios/geo-bulk.toml", "--set", "run.duration=1s", "--pcap", str(tmp_path))
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stderr.strip() == f"sattcp: --pcap {tmp_path}: is a folder, not a file (give a file in it, e.g. {tmp_path}/run.pcapng)"


@pytest.mark.parametrize("out", [pytest.param("/proc/x.parquet", marks=NEEDS_PROC), pytest.param("/proc/x.json", marks=NEEDS_PROC),
                                 "{tmp}/d.json", "{tmp}/d.links.parquet"])
def test_an_out_that_cannot_be_written_is_named_before_the_run(tmp_path, out):
    # A folder in the way (d.json, or the links table beside d.parquet) or a folder that takes
    # no new files (/proc, even for root): refused at once, not after 10^5 s of simulation.
    (tmp_path / "d.json").mkdir()
    (tmp_path / "d.links.parquet").mkdir()
    out = out.format(tmp=tmp_path)
    arg = out.replace(".links", "")
    p = run_cli("run", "scenarios/kota-geo.toml", "--set", "run.duration=100000s", "--out", arg, "--quiet")
    assert p.returncode == 2, p.stderr
    assert f"--out {out}: " in p.stderr and "No such file" not in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_checking_an_out_file_changes_nothing(tmp_path):
    from sattcp.paths import check_file, check_folder

    f = tmp_path / "r.json"
    f.write_text("kept")
    check_file(f, "--out")
    check_file(tmp_path / "new.json", "--out")
    check_folder(tmp_path / "a" / "b", "--out")
    assert f.read_text() == "kept" and sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_a_dangling_link_as_out_is_checked_where_it_points(tmp_path):
    # Writing the link would create its target, in a folder that does not exist: refused at once.
    link = tmp_path / "r.json"
    link.symlink_to(tmp_path / "missing" / "r.json")
    p = run_cli("run", "scenarios/kota-geo.toml", "--set", "run.duration=100000s", "--out", str(link), "--quiet")
    assert p.returncode == 2 and f"--out {link}: folder {tmp_path / 'missing'} does not exist" in p.stderr, p.stderr


def test_a_store_needs_a_folder_that_takes_new_files_even_when_it_exists(tmp_path, monkeypatch):
    # DuckDB writes its log beside the store. Root writes anywhere, so the folder's refusal is
    # simulated: every probe fails as a read-only file system would.
    import errno

    import sattcp.paths as paths

    store = tmp_path / "r.duckdb"
    store.write_bytes(b"x")
    monkeypatch.setattr(paths, "_probe", lambda folder: OSError(errno.EROFS, "Read-only file system"))
    paths.check_file(store, "--out")  # an existing file written in place: nothing beside it
    with pytest.raises(paths.OutputPathError, match=r"--store .*r\.duckdb: its folder .* takes no new files"):
        paths.check_file(store, "--store", side_files=True)
    assert store.read_bytes() == b"x"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--json", "--print-config"], "argument --print-config: not allowed with argument --json"),
        (["--quiet", "--progress"], "argument --progress: not allowed with argument --quiet"),
        (["--print-config", "--out", "r.json"], "--out cannot be given with --print-config"),
    ],
)
def test_conflicting_options_are_refused(args, needle):
    p = run_cli("run", "scenarios/geo-bulk.toml", "--set", "run.duration=1s", *args)
    assert p.returncode == 2 and needle in p.stderr and not p.stdout, p.stderr


def test_seed_out_of_range_is_bad_input():
    p = run_cli("run", "scenarios/geo-bulk.toml", "--seed", str(2**64))
    assert p.returncode == 2 and "run.seed" in p.stderr and "Traceback" not in p.stderr


def test_set_run_seed_takes_every_seed_that_seed_takes():
    # --set run.seed=18446744073709551615 was refused ("run.seed: is beyond TOML's integers ...
    # (`--seed` up to 2^64 - 1 replaces it)") while --seed 18446744073709551615 ran.
    for seed in (2**63, 2**64 - 1):
        by_set = json.loads(run_cli("run", "scenarios/geo-bulk.toml", "--set", "run.duration=1s",
                                    "--set", f"run.seed={seed}", "--json").stdout)
        by_seed = json.loads(run_cli("run", "scenarios/geo-bulk.toml", "--set", "run.duration=1s",
                                     "--seed", str(seed), "--json").stdout)
        assert (by_set["seed"], by_set["digest"]) == (seed, by_seed["digest"])
    # In a run table too, and --print-config says how to run such a seed again.
    p = run_cli("run", "scenarios/geo-bulk.toml", "--set", f'run={{seed = {2**64 - 1}, duration = "2s"}}', "--print-config")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0] == f"# run.seed = {2**64 - 1} is above TOML's largest integer: run this file with --seed {2**64 - 1}"
    assert 'duration = "2s"' in p.stdout


@pytest.mark.parametrize(("value", "rule"), [
    (str(2**64), f"must be an integer from 0 to 2^64 - 1, got {2**64}"),
    ("1_8446_7440_7370_9551_6160", "must be an integer from 0 to 2^64 - 1, got 184467440737095516160"),
    (str(-(2**63) - 1), f"must be an integer from 0 to 2^64 - 1, got {-(2**63) - 1}"),
    ("-1", "must be >= 0, got -1"),
])
def test_set_run_seed_beyond_the_seeds_or_negative_is_bad_input(value, rule):
    p = run_cli("run", "scenarios/geo-bulk.toml", "--set", f"run.seed={value}")
    assert p.returncode == 2 and not p.stdout, p.stderr
    assert p.stderr.splitlines()[1:] == [f"  run.seed: {rule}"], p.stderr


@pytest.mark.parametrize(("args", "line"), [
    # Two --set of one key ran with the last, without a word.
    (["--set", "tcp.mss=1000", "--set", "tcp.mss=2000"],
     "tcp.mss: is given twice, by --set tcp.mss=1000 and by --set tcp.mss=2000: give it once"),
    (["--set", "tcp.mss=1000", "--set", "tcp.mss=1000"],
     "tcp.mss: is given twice, by --set tcp.mss=1000 and by --set tcp.mss=1000: give it once"),
    (["--set", "tcp.mss=1000", "--set", "tcp={mss = 2000, window = 5}"],
     "tcp.mss: is given twice, by --set tcp.mss=1000 and by --set tcp={mss = 2000, window = 5}: give it once"),
    (["--set", "trace.packets=all", "--set", "trace.packets.flows=[0]"],
     "trace.packets: is given by --set trace.packets=all, and a key inside it by --set trace.packets.flows=[0]: give one or the other"),
    # --seed is run.seed: with --set run.seed= (the --seed won), whatever the values.
    (["--seed", "7", "--set", "run.seed=8"], "run.seed: is given twice, by --seed 7 and by --set run.seed=8: give it once"),
    (["--set", "run.seed=7", "--seed", "7"], "run.seed: is given twice, by --seed 7 and by --set run.seed=7: give it once"),
    (["--seed", "7", "--set", 'run={seed = 8, duration = "1s"}'],
     'run.seed: is given twice, by --seed 7 and by --set run={seed = 8, duration = "1s"}: give it once'),
])
def test_a_key_given_twice_on_the_command_line_is_refused_naming_it(args, line):
    for cmd in (["run", "scenarios/geo-bulk.toml"], ["run", "scenarios/geo-bulk.toml", "--print-config"],
                ["netpipe", "scenarios/netpipe-e1.toml"]):
        p = run_cli(*cmd, *args)
        assert p.returncode == 2 and not p.stdout, (cmd, p.stderr)
        assert p.stderr.splitlines() == ["sattcp: invalid scenario (1 problem):", f"  {line}"], (cmd, p.stderr)


def test_keys_given_once_each_on_the_command_line_run():
    # Different keys of one table, given either way, are not twice; nor is an empty table.
    p = run_cli("run", "scenarios/geo-bulk.toml", "--set", "tcp={window = 65535}", "--set", "tcp.mss=1000",
                "--set", "run={}", "--set", "run.seed=3", "--print-config")
    assert p.returncode == 0, p.stderr
    cfg = tomllib.loads(p.stdout)
    assert (cfg["tcp"]["window"], cfg["tcp"]["mss"], cfg["run"]["seed"]) == (65535, 1000, 3)


def test_a_seed_beyond_toml_integers_in_a_file_names_the_rule(tmp_path):
    # A file cannot hold such a seed (TOML has no such integer): its reader says so.
    f = tmp_path / "s.toml"
    f.write_text((SCENARIOS / "geo-bulk.toml").read_text().replace("seed = 1", f"seed = {2**64 - 1}"))
    p = run_cli("run", str(f))
    assert p.returncode == 2 and "beyond TOML's integers" in p.stderr, p.stderr


@pytest.mark.parametrize(("key", "value"), [("run.duration", "1e-12s"), ("run.duration", "0.5ns"), ("links.bottleneck.delay", "1e-12s")])
def test_a_duration_below_one_nanosecond_is_refused_for_every_key(key, value):
    # run.duration=1e-12s said "must be > 0", 0.5ns ran as 1 ns, and a delay of 1e-12s ran as none.
    p = run_cli("run", "scenarios/geo-bulk.toml", "--set", f"{key}={value}")
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stderr.splitlines()[1:] == [f'  {key}: must be at least 1ns (simulated time counts whole nanoseconds), got "{value}"'], p.stderr


@pytest.mark.parametrize(("key", "value", "rule"), [
    ("links.bottleneck.rate", "0.5bps", "must be at least 1bps (rates count whole bits per second)"),
    ("links.access.rate", "0.5bps", "must be at least 1bps (rates count whole bits per second)"),
    ("links.bottleneck.rate", "0.4bps", "must be at least 1bps (rates count whole bits per second)"),
    ("switch.buffer", "0.4B", "must be at least 1B (sizes count whole bytes)"),
    ("tcp.send_buffer", "4e-4KB", "must be at least 1B (sizes count whole bytes)"),
    ("switch.buffer", "0.5pkt", "must be at least 1pkt (sizes in packets count whole packets)"),
])
def test_a_rate_or_size_below_one_whole_unit_is_refused_for_every_key(key, value, rule):
    # links.access.rate=0.5bps ran as 1 bps, the bottleneck's was blamed on the bdp it made 0,
    # 0.4bps said "must be > 0 (rounds to 0 bps)", 0.5pkt ran as one packet and 0.4B was 0 bytes
    # ("must hold at least one segment (MSS), got 0" of tcp.send_buffer).
    p = run_cli("run", "scenarios/geo-bulk.toml", "--set", f"{key}={value}")
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stderr.splitlines()[1:] == [f'  {key}: {rule}, got "{value}"'], p.stderr


def test_a_fraction_of_a_bdp_stays_a_valid_size():
    p = run_cli("run", "scenarios/geo-bulk.toml", "--set", "switch.buffer=0.5bdp", "--print-config")
    assert p.returncode == 0, p.stderr
    assert 'buffer = "0.5bdp"' in p.stdout


@pytest.mark.parametrize(("scenario", "key", "value"), [("geo-bulk", "tcp.timer_granularity", "0ms"),
                                                      ("zhou-single", "gateway.timer_granularity", "-10ms")])
def test_a_duration_that_must_be_positive_says_so_with_the_value_as_written(scenario, key, value):
    # Were "got 0s" whatever was written, and "must be >= 0" for the gateway's negative one.
    p = run_cli("run", f"scenarios/{scenario}.toml", "--set", f"{key}={value}")
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stderr.splitlines()[1:] == [f'  {key}: must be > 0, got "{value}"'], p.stderr


@pytest.mark.parametrize(("value", "rule"), [("0", "must be between 1 and 10000, got 0"),
                                           ("99999999999999999999", "is beyond TOML's integers (-2^63 to 2^63 - 1); "
                                                                    "allowed: 1 to 10000, got 99999999999999999999")])
def test_a_shell_size_out_of_range_names_the_range(value, rule):
    # Was "constellation.shell.planes: is required, between 1 and 10000, got 0" (with phasing blamed
    # too) and "must be an integer" of the huge one.
    p = run_cli("run", "scenarios/leo-paris-moscow-isl.toml", "--set", f"constellation.shell.planes={value}")
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stderr.splitlines()[1:] == [f"  constellation.shell.planes: {rule}"], p.stderr


def test_a_zero_delay_names_itself_where_sizes_in_bdp_come_to_zero():
    # Was "tcp.ssthresh: must be > 0, got 0" (and switch.buffer's "got "1bdp""): nothing named the delay.
    p = run_cli("run", "scenarios/geo-bulk.toml", "--set", "links.bottleneck.delay=0s")
    assert p.returncode == 2, (p.stdout, p.stderr)
    bdp0 = "= 0 bytes (bdp = links.bottleneck.rate x 2 x links.bottleneck.delay = 45Mbps x 2 x 0s)"
    assert p.stderr.splitlines()[1:] == [f'  tcp.ssthresh: must be > 0, got "bdp" {bdp0}',
                                         f'  switch.buffer: must hold at least one packet (9220 bytes at MSS 9180), got "1bdp" {bdp0}'], p.stderr
    # The delay itself is valid: with the sizes in bytes and packets, the run goes ahead.
    p = run_cli("run", "scenarios/geo-bulk.toml", "--set", "links.bottleneck.delay=0s", "--set", "tcp.ssthresh=100000",
                "--set", "switch.buffer=100pkt", "--set", "run.duration=1s")
    assert p.returncode == 0, p.stderr


def test_ctrl_c_stops_a_long_run_promptly():
    import signal
    import subprocess
    import sys
    import threading

    from conftest import ROOT

    # 10^5 s of the 100-pair GEO study would take minutes even on an idle machine. Ctrl-C is sent
    # once the run is under way (its progress line appears: the interpreter has started and the
    # simulation loop is running), not after a fixed sleep, so a loaded machine changes nothing.
    proc = subprocess.Popen(
        [sys.executable, "-m", "sattcp.cli", "run", "scenarios/kota-geo.toml", "--set", "run.duration=100000s", "--progress"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    seen: list[str] = []
    started = threading.Event()

    def read_stderr() -> None:
        while ch := proc.stderr.read(1):
            seen.append(ch)
            if not started.is_set() and "s simulated" in "".join(seen[-200:]):
                started.set()

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    try:
        assert started.wait(timeout=300), "the run never showed progress: " + "".join(seen)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=300)
    finally:
        proc.kill()
        reader.join(timeout=60)
        proc.stdout.close()
        proc.stderr.close()
    err = "".join(seen)
    assert proc.returncode == 130, err
    # Stopped by the signal, long before the end: "interrupted at simulated time 12.345 s of 100000.000 s".
    m = __import__("re").search(r"interrupted at simulated time ([\d.]+) s of 100000\.000 s", err)
    assert m and float(m.group(1)) < 100000, err
    assert "Traceback" not in err


def test_warnings_go_to_stderr(tmp_path):
    from conftest import SCENARIOS

    text = (SCENARIOS / "geo-three-losses.toml").read_text()
    f = tmp_path / "s.toml"
    f.write_text(text + "\n[[loss]]\nflow = 0\nsegment = 5000\n")
    p = run_cli("run", str(f), "--set", "run.duration=2s")
    assert p.returncode == 0
    assert "warning: scripted loss never happened: flow 0 did not send data offset 45900000" in p.stderr


def test_readme_documents_every_json_key():
    """The README's table of JSON keys names every key a result has (and no key it lacks)."""
    import re

    from conftest import ROOT

    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("### The JSON result"):readme.index("## Speed")]
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `([a-z_\[\]]+)`[^|]*\| (.*) \|$", table, re.M)}
    doc = json.loads(run_cli("run", "scenarios/kota-geo.toml", "--set", "run.duration=2s", "--set", "topology.pairs=2", "--json").stdout)

    def documented(row: str) -> set[str]:
        return set(re.findall(r"`([a-z_]+)`", rows[row]))

    # Top-level keys: the backticked names in each row's first cell (`flows[]` -> flows).
    first_cells = re.findall(r"^\| ([^|]+) \|", table, re.M)
    top = {name.removesuffix("[]") for cell in first_cells for name in re.findall(r"`([a-z_\[\]]+)`", cell)}
    assert set(doc) <= top, f"undocumented top-level keys: {set(doc) - top}"
    assert set(doc["summary"]) <= documented("summary"), set(doc["summary"]) - documented("summary")
    assert set(doc["flows"][0]) <= documented("flows[]"), set(doc["flows"][0]) - documented("flows[]")
    link_keys = set().union(*(set(link) for link in doc["links"]))
    assert link_keys <= documented("links[]"), link_keys - documented("links[]")


def test_print_config_prints_the_resolved_scenario_which_repeats_the_run(tmp_path):
    import tomllib

    p = run_cli("run", "scenarios/geo-bulk.toml", "--set", "run.duration=3s", "--seed", "5", "--print-config")
    assert p.returncode == 0, p.stderr
    cfg = tomllib.loads(p.stdout)
    assert cfg["run"] == {"duration": "3s", "seed": 5, "chain_hops": False} and cfg["tcp"]["max_rto"] == "64s"
    f = tmp_path / "resolved.toml"
    f.write_text(p.stdout)
    again = json.loads(run_cli("run", str(f), "--json").stdout)
    first = json.loads(run_cli("run", "scenarios/geo-bulk.toml", "--set", "run.duration=3s", "--seed", "5", "--json").stdout)
    assert again["digest"] == first["digest"] and again["config"] == first["config"] == cfg


def test_the_summary_shows_the_flows_and_links_of_a_graph_and_a_gateway():
    """The summary's tables listed only flows of role "data" and links named bottleneck* or
    hop*: a gateway's run (whose flows relay) showed an empty flow table, a graph's no links."""
    p = run_cli("run", "scenarios/zhou-single.toml", "--set", "run.duration=5s")
    assert p.returncode == 0, p.stderr
    flows, links = p.stdout.split("\n\n")[1:3]
    assert flows.split("\n")[0].split() == ["flow", "role", "Mbps", "delivered", "B", "retx", "B", "RTOs", "fast", "rtx", "cwnd", "B"]
    assert flows.split("\n")[2].split()[:2] == ["0", "relay"]
    assert {ln.split()[0] for ln in links.split("\n")[2:] if ln} == {"srv0->sgw", "sgw->srv0", "sat", "sat-return"}  # the client's links carried nothing
    p = run_cli("run", "scenarios/graph-diamond.toml", "--set", "run.duration=2s")
    flows, links = p.stdout.split("\n\n")[1:3]
    assert [ln.split()[0] for ln in flows.split("\n")[2:] if ln] == ["0", "1"] and "role" not in flows
    assert "r1->r2" in links and "r3->d" in links


def test_print_config_names_the_keys_without_effect():
    """A key of another kind (app.bytes on a bulk source) stays in the printed scenario, as the
    run reads it, under a comment that says it has no effect; the run warns of the same key."""
    import tomllib

    p = run_cli("run", "scenarios/geo-bulk.toml", "--set", "app.bytes=1000", "--print-config")
    assert p.returncode == 0, p.stderr
    why = 'app.bytes: applies to app.kind = "transfer" (a bulk source never runs out): ignored'
    assert p.stdout.startswith(f"# given but without effect (the run warns of each):\n#   {why}\n"), p.stdout[:300]
    assert tomllib.loads(p.stdout)["app"]["bytes"] == 1000
    ran = run_cli("run", "scenarios/geo-bulk.toml", "--set", "app.bytes=1000", "--set", "run.duration=1s")
    assert ran.returncode == 0 and f"sattcp: warning: {why}" in ran.stderr, ran.stderr
    assert not run_cli("run", "scenarios/geo-bulk.toml", "--print-config").stdout.startswith("#")


def test_gateway_keys_the_scheme_does_not_read_are_run_warnings():
    """[gateway] keys that only the sgw scheme reads, given to end-to-end TCP, ran without a word
    and changed nothing (a review, 2026-11-29): each is a run warning now, naming the schemes
    that read it; the run is the same as without them."""
    sets = ["--set", "gateway.scheme=e2e", "--set", "run.duration=5s"]
    extra = ["--set", "gateway.ack_pacing=true", "--set", "gateway.timer_copies=5", "--set", "gateway.satellite.queue=20pkt"]
    p = run_cli("run", "scenarios/zhou-single.toml", *sets, *extra, "--json")
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)
    sgw, split = 'gateway.scheme = "sgw"', 'gateway.scheme = "sgw" or "split_tcp"'
    # The file's buffer, semantics and ack_every, then the overrides (the queue applies to e2e).
    assert got["warnings"] == [f"gateway.buffer: applies to {split}: ignored", f"gateway.semantics: applies to {sgw}: ignored",
                               f"gateway.ack_every: applies to {sgw}: ignored", f"gateway.ack_pacing: applies to {sgw}: ignored",
                               f"gateway.timer_copies: applies to {sgw}: ignored"], got["warnings"]
    assert f'sattcp: warning: gateway.ack_pacing: applies to {sgw}: ignored' in p.stderr, p.stderr
    plain = json.loads(run_cli("run", "scenarios/zhou-single.toml", *sets, "--set", "gateway.satellite.queue=20pkt", "--json").stdout)
    assert plain["digest"] == got["digest"]
    # The sgw scheme reads them all: no warning.
    assert json.loads(run_cli("run", "scenarios/zhou-single.toml", "--set", "run.duration=5s", "--set", "gateway.ack_pacing=true", "--json").stdout)["warnings"] == []


@pytest.mark.parametrize(("first", "said"), [
    ("--versoin", "unknown option --versoin (did you mean --version?)"),
    ("--seed", "unknown option --seed; the options of a command come after it"),
    ("-x", "unknown option -x;"),
])
def test_an_unknown_option_before_the_command_is_named(first, said):
    """argparse alone says only that COMMAND is missing."""
    p = run_cli(first, "run", "scenarios/geo-bulk.toml")
    assert p.returncode == 2 and f"sattcp: error: {said}" in p.stderr and "required: COMMAND" not in p.stderr, p.stderr
    # A prefix of a known option is argparse's, as before.
    assert run_cli("--vers").stdout.startswith("sattcp ")


def test_json_into_a_closed_pipe_is_quiet_and_succeeds():
    import subprocess
    import sys

    from conftest import ROOT

    # `sattcp run ... --json | head -c 100`: the reader leaves before the document is written.
    proc = subprocess.Popen(
        [sys.executable, "-m", "sattcp.cli", "run", "scenarios/kota-geo.toml", "--set", "run.duration=2s", "--json"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    head = proc.stdout.read(100)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=600) == 0, err
    assert head.startswith(b"{") and err == "", err


def test_out_parquet_writes_every_table(tmp_path):
    out = tmp_path / "r.parquet"
    p = run_cli("run", "scenarios/geo-bulk.toml", "--set", "run.duration=2s", "--set", "trace.links=[\"bottleneck\"]", "--out", str(out))
    assert p.returncode == 0, p.stderr
    for name in ("r.parquet", "r.links.parquet", "r.traces.parquet"):
        assert (tmp_path / name).exists() and f"wrote {tmp_path / name}" in p.stderr


@pytest.mark.parametrize(("name", "module"), [("zhou-sgw", "sattcp.zhou"), ("netpipe-sat", "sattcp.netpipe_sat"),
                                              ("kota-www", "sattcp.cli_study")])
def test_ctrl_c_in_reproduce_says_what_was_kept(tmp_path, monkeypatch, capsys, name, module):
    """zhou-sgw and netpipe-sat keep their runs in memory: an interruption must not promise a
    resume. kota-www sweeps into a store, which keeps every finished run."""
    import importlib

    from sattcp import cli_study

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    attr = "run_sweep" if name == "kota-www" else "reproduce"
    if name == "kota-www":
        monkeypatch.setattr("sattcp.sweep.run_sweep", interrupted)
        monkeypatch.setattr("sattcp.sweep._check_api", lambda: None)
    else:
        monkeypatch.setattr(importlib.import_module(module), attr, interrupted)
    assert cli_study.main(["reproduce", name, "--quick", "--no-progress", "--out", str(tmp_path / "o")]) == 130
    err = capsys.readouterr().err
    if name == "kota-www":
        assert "interrupted; every finished run is saved, run the same command to resume" in err, err
    else:
        assert "interrupted; this study keeps its runs in memory: nothing was saved, a rerun starts over" in err, err
        assert "resume" not in err


def test_ctrl_c_in_analyze_or_export_promises_nothing():
    from sattcp.cli_study import IN_MEMORY, SAVED, interrupted_message

    assert interrupted_message(False, None) == "interrupted"
    assert interrupted_message(True, SAVED) == f"terminated (SIGTERM); {SAVED}"
    assert interrupted_message(False, IN_MEMORY).startswith("interrupted; this study keeps its runs in memory")


def test_netpipe_prints_a_resource_warning_as_sattcp_does(monkeypatch, capsys):
    # A ping-pong is estimated by its schedule (about 670 events here, tests/test_api.py): the
    # warning's threshold lowered below that, in process, shows how the command prints it.
    from sattcp import api, cli

    monkeypatch.setattr(api, "WARN_EVENTS", 100)
    assert cli.main(["netpipe", str(SCENARIOS / "netpipe-e1.toml"), "--set", "app.last_block=1024", "--set", "app.repeats=1", "--quiet"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("sattcp: warning: a long run: about"), err
    assert "SattcpWarning" not in err and "netpipe_cli.py" not in err, err


@pytest.mark.parametrize("args", [
    ["run", "scenarios/geo-bulk.toml", "--set", "run.duration=1s", "--out", ""],
    ["run", "scenarios/geo-bulk.toml", "--print-config", "--out", ""],
    ["netpipe", "scenarios/netpipe-e1.toml", "--out", ""],
    ["sweep", "study.toml", "--store", ""],
    ["analyze", "results.duckdb", "--study", "s", "--html", ""],
    ["export", "results.duckdb", "--out", ""],
    ["reproduce", "kota-www", "--quick", "--out", ""],
    ["emulate", "scenarios/emulate/modern-geo.toml", "--stats", "", "--", "true"],
])
def test_an_empty_output_path_is_refused(tmp_path, args):
    # Was ignored (`if args.out:`), or taken for the current folder (export, sweep). Run in an
    # empty folder, which must stay empty (scenarios by absolute path).
    from conftest import ROOT

    args = [str(ROOT / a) if a.startswith("scenarios/") else a for a in args]
    p = run_cli(*args, cwd=tmp_path)
    opt = args[args.index("") - 1]
    assert p.returncode == 2 and f"argument {opt}: empty path" in p.stderr, (p.stdout, p.stderr)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_names_the_file_and_exits_1(tmp_path, monkeypatch, capsys):
    out = tmp_path / "r.json"
    out.symlink_to("/dev/full")  # JSON only: pyarrow removes a file it failed to write, /dev/full too
    p = run_cli("run", "scenarios/geo-bulk.toml", "--set", "run.duration=1s", "--out", str(out))
    assert p.returncode == 1 and p.stderr == f"sattcp: cannot write {out}: No space left on device\n", p.stderr
    assert Path("/dev/full").exists()
    # Parquet: the second table fails.
    from sattcp import cli

    parquet_disk_full_after(monkeypatch, 1)
    out = tmp_path / "r.parquet"
    assert cli.main(["run", str(SCENARIOS / "geo-bulk.toml"), "--set", "run.duration=1s", "--out", str(out), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err == f"sattcp: cannot write {tmp_path / 'r.links.parquet'}: No space left on device\n", err
    assert sorted(f.name for f in tmp_path.iterdir()) == ["r.json"], "no table, no temporary file"


def test_parquet_to_a_device_is_refused_before_the_run(tmp_path):
    out = tmp_path / "r.parquet"
    out.symlink_to("/dev/null")
    p = run_cli("run", "scenarios/geo-bulk.toml", "--set", "run.duration=1s", "--out", str(out))
    assert p.returncode == 2 and f"--out {out}: not a regular file" in p.stderr, p.stderr
    assert Path("/dev/null").exists()


def test_a_bare_ctrl_c_says_interrupted(monkeypatch, capsys):
    from sattcp import cli

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr("sattcp.api.run", interrupted)
    assert cli.main(["run", str(SCENARIOS / "geo-bulk.toml")]) == 130
    assert capsys.readouterr().err == "sattcp: interrupted\n"


def test_ctrl_c_at_start_up_exits_130_without_a_traceback(monkeypatch, capsys):
    """The console script is cli.entry, which covers main's start-up (the parser, the imports)
    too; importing sattcp.cli imports neither argparse nor typing (10 ms before entry runs)."""
    import subprocess
    import sys
    import tomllib

    from conftest import ROOT
    from sattcp import cli

    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]["sattcp"] == "sattcp.cli:entry"

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    monkeypatch.setattr(sys, "argv", ["sattcp", "run", "x.toml"])
    with pytest.raises(SystemExit) as e:
        cli.entry()
    assert e.value.code == 130 and capsys.readouterr().err == "sattcp: interrupted\n"
    loaded = subprocess.run([sys.executable, "-c", "import sys, sattcp.cli; print(sorted({'argparse', 'typing', 'sattcp.api'} & set(sys.modules)))"],
                            capture_output=True, text=True, check=True).stdout
    assert loaded == "[]\n", loaded


def test_version_names_the_build_without_importing_the_simulator_at_start(monkeypatch, capsys):
    """`sattcp --version` says which build of the native module runs (profile-guided, with the
    stored profile or make build-pgo's, or the plain release build); building the parser does not
    import it."""
    import subprocess
    import sys

    from sattcp import __version__, _core, cli

    with pytest.raises(SystemExit) as e:
        cli.main(["--version"])
    assert e.value.code == 0
    profile = _core.build_profile()
    assert profile in ("release", "profile-guided", "debug") or profile.startswith("profile-guided, stored profile of "), profile
    kind, _, detail = profile.partition(", ")
    assert capsys.readouterr().out == f"sattcp {__version__} ({kind} build{', ' + detail if detail else ''})\n"
    loaded = subprocess.run([sys.executable, "-c", "import sys, sattcp.cli as c; c.build_parser(); print('sattcp._core' in sys.modules)"],
                            capture_output=True, text=True, check=True).stdout
    assert loaded == "False\n", loaded
    # make build with the repository's stored profile names the sources it was taken from.
    stored = type("Core", (), {"build_profile": staticmethod(lambda: "profile-guided, stored profile of 55c50ed")})
    monkeypatch.setitem(sys.modules, "sattcp._core", stored)
    assert cli.version_line() == f"sattcp {__version__} (profile-guided build, stored profile of 55c50ed)"
    # Without the native module (a source tree never built) it says so instead of failing.
    monkeypatch.setitem(sys.modules, "sattcp._core", None)
    assert cli.version_line() == f"sattcp {__version__} (the simulator is not built: make build)"


def test_an_output_that_is_a_pipe_nobody_reads_is_refused_at_once(tmp_path):
    # The check that an existing output can be written opened it for appending, which for a
    # FIFO with no reader waits forever: the command hung before running anything.
    import os

    fifo = tmp_path / "r.json"
    os.mkfifo(fifo)
    p = run_cli("run", "scenarios/geo-bulk.toml", "--out", str(fifo))
    assert p.returncode == 2 and f"--out {fifo}: cannot be written (a pipe that no process reads)" in p.stderr, p.stderr


def test_run_refuses_an_empty_scenario_path_and_an_output_over_its_scenario(tmp_path):
    # "" was read as the current folder ("is a directory, got ."), and `run s.json --out s.json`
    # replaced the scenario with its result without a word.
    p = run_cli("run", "")
    assert p.returncode == 2 and "scenario: an empty path" in p.stderr, p.stderr
    s = tmp_path / "s.json"
    s.write_text((ROOT / "scenarios" / "geo-bulk.toml").read_text())
    before = s.read_text()
    p = run_cli("run", str(s), "--out", str(s))
    assert p.returncode == 2 and f"--out {s}: is the scenario file itself" in p.stderr, p.stderr
    assert s.read_text() == before
