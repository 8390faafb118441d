"""The scripts in scripts/ (and bench/startup.py) on bad input: exit 2 with a one-line message
naming what is wrong, no traceback, and no work done first."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import NEEDS_PROC, ROOT


def _script(path: str, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / path), *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def _refused(p: subprocess.CompletedProcess[str], needle: str) -> None:
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert needle in p.stderr and "Traceback" not in p.stderr, p.stderr


@pytest.mark.parametrize(("path", "args", "needle"), [
    ("bench/startup.py", ["--repeat", "0"], "argument --repeat: must be a whole number >= 1, got '0'"),
    ("bench/headline.py", ["--sweeps", "0"], "argument --sweeps: must be a whole number >= 1, got '0'"),
    ("bench/peers", ["--repeat", "0"], "argument --repeat: must be a whole number > 0, got '0'"),
    ("bench/peers", ["--duration", "0"], "argument --duration: must be a number > 0, got '0'"),
    ("bench/peers", ["--peer", "ns2"], "unknown peer 'ns2'; choose from ns-2, ns-3"),
    ("bench/module_ab.py", ["{tmp}", "{tmp}"], "{tmp}: holds no sattcp package"),
    ("bench/module_ab.py", [str(ROOT / "python"), str(ROOT / "python"), "--rounds", "0"],
     "argument --rounds: must be a whole number >= 1, got '0'"),
    ("bench/module_ab.py", [str(ROOT / "python"), str(ROOT / "python"), "scenarios/none.toml"],
     "scenarios/none.toml: no such scenario file"),
    ("bench/results_ab.py", ["{tmp}", str(ROOT / "python")], "{tmp}: holds no sattcp package"),
    ("scripts/study_digests.py", ["--jobs", "0"], "argument --jobs: must be a whole number >= 1, got '0'"),
    ("scripts/plot_cwnd.py", ["--out", "{tmp}"], "--out {tmp}: is a folder, not a file"),
    pytest.param("scripts/plot_cwnd.py", ["--out", "/proc/x.png"], "--out /proc/x.png: cannot be created in folder /proc",
                 marks=NEEDS_PROC),
    ("scripts/plot_workload.py", ["--csv", "{tmp}/w/requests.csv", "--out", "{tmp}/img"],
     "{tmp}/w/requests.csv not found; `cargo run -p sattcp-core --example workload_stats -- --out {tmp}/w/requests.csv` writes it"),
    ("scripts/reproduction_numbers.py", ["{tmp}/none.duckdb"], "no results store at {tmp}/none.duckdb"),
    # Checked before the privileges, so these say it without root too.
    ("scripts/modern_cc_kernel.py", ["--ccs", "bbr,vegas"], "--ccs: unknown cc vegas (known: reno, cubic, bbr)"),
    ("scripts/modern_cc_kernel.py", ["--paths", "LEO"], "--paths: unknown path LEO (known: GEO, MEO, Starlink)"),
    ("scripts/modern_cc_kernel.py", ["--flavours", ""], "--flavours: unknown flavour (none given) (known: sack/bbr, sack/cubic, newreno, sack)"),
    ("scripts/modern_cc_kernel.py", ["--bers", "0,1.5"], "--bers: must be comma-separated bit error rates >= 0 and < 1, got '0,1.5'"),
    ("scripts/modern_cc_kernel.py", ["--repeat", "0"], "argument --repeat: must be a whole number >= 1, got '0'"),
    ("scripts/modern_cc_kernel.py", ["--sim-seeds", "x"], "argument --sim-seeds: must be a whole number >= 1, got 'x'"),
    ("scripts/modern_cc_kernel.py", ["--set", "emulate.seed"], "--set: must be KEY=VALUE, got 'emulate.seed'"),
])
def test_bad_arguments_are_refused_before_any_work(tmp_path: Path, path: str, args: list[str], needle: str) -> None:
    # Were tracebacks: min() of no repeats, a pool of 0 workers, savefig after a minute of
    # simulations, a missing summary.json, StoreMissing; bench/peers: an IndexError after 0 pairs,
    # a division by zero, a misspelt peer ignored.
    p = _script(path, *(a.format(tmp=tmp_path) for a in args), cwd=tmp_path)
    _refused(p, needle.format(tmp=tmp_path))
    assert not (tmp_path / "img").exists()


@pytest.mark.parametrize(("args", "needle"), [
    (["{tmp}", str(ROOT)], "{tmp} has no python/sattcp (a source tree is wanted)"),
    ([str(ROOT), str(ROOT), "0"], "ROUNDS must be a whole number >= 1, got '0'"),
    ([str(ROOT), str(ROOT), "1", "--fast"], "usage: "),
])
def test_ab_reproduce_refuses_bad_arguments(tmp_path: Path, args: list[str], needle: str) -> None:
    p = subprocess.run(["bash", str(ROOT / "bench" / "ab_reproduce.sh"), *(a.format(tmp=tmp_path) for a in args)],
                       capture_output=True, text=True, timeout=60)
    _refused(p, needle.format(tmp=tmp_path))


def test_plot_workload_names_the_missing_summary(tmp_path: Path) -> None:
    (tmp_path / "requests.csv").write_text("seed,server,class,bytes\n")
    p = _script("scripts/plot_workload.py", "--csv", str(tmp_path / "requests.csv"), "--out", str(tmp_path / "img"))
    _refused(p, f"{tmp_path}/summary.json not found; `cargo run -p sattcp-core --example workload_stats")


@pytest.mark.parametrize(("study", "factors", "needle"), [
    ("kota-www-quick", {"tcp.flavor": "reno", "switch.policy": "epd", "switch.buffer": "1bdp"},
     "no kota-www study in this store (it has: kota-www-quick); this script needs the full study's factors"),
    ("kota-www", {"tcp.flavor": "reno"}, "the kota-www runs here lack the full study's factors (switch.policy, switch.buffer)"),
])
def test_reproduction_numbers_says_what_the_store_lacks(tmp_path: Path, study: str, factors: dict[str, str], needle: str) -> None:
    # A --quick store was a KeyError 'tcp.flavor' traceback.
    from sattcp.store import Store

    path = tmp_path / "results.duckdb"
    with Store(path) as s:
        s.save_study(study, {"factors": {k: [v] for k, v in factors.items()}})
        s.record_run(study, "k1", factors=factors, status="ok", seed=1,
                     summary={"efficiency": 0.5, "fairness": 0.9, "events": 10, "digest": "ab", "sim_time_s": 1.0})
    p = _script("scripts/reproduction_numbers.py", str(path))
    _refused(p, needle)
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_zhou_initial_window_prints_the_ratios_docs_gateway_quotes(tmp_path: Path) -> None:
    # docs/gateway.md quotes these (deterministic runs, seed 1): with split TCP's initial
    # window of 1 segment the largest ratio is the reproduction's 3.36; with RFC 2414's 4 it is
    # 2.28, within the seed's "2 to 2.5 times"; a one-segment file is 1.00 whatever the window.
    p = _script("scripts/zhou_initial_window.py", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()[1:]
    assert [ln.split(":")[0].strip() for ln in lines] == ["1", "2", "4"]
    assert [ln.rsplit("largest ", 1)[1] for ln in lines] == ["3.36", "2.81", "2.28"]
    assert all("512: 1.00," in ln for ln in lines), lines
    assert _script("scripts/zhou_initial_window.py", "--x", cwd=tmp_path).returncode == 2


# The kinds of every part the profile-guided build must see run (scripts/pgo_train.py): a part
# no training run reaches is compiled as cold code, slower than in the plain build.
_PGO_COVERED = ("topology.kind", "switch.kind", "switch.policy", "tcp.recovery", "tcp.cc", "app.kind")


def test_pgo_training_set_runs_every_scenario_and_every_kind() -> None:
    import json

    import sattcp
    from sattcp import _core

    if str(ROOT / "scripts") not in sys.path:
        sys.path.insert(0, str(ROOT / "scripts"))
    import pgo_train

    runs = pgo_train.training_set()
    assert {p.name for p, _ in runs} >= {p.name for p in (ROOT / "scenarios").glob("*.toml")}
    allowed = {r["key"]: {a.strip(" `") for a in r["allowed"].split(",")}
               for r in json.loads(_core.schema())["keys"] if r["key"] in _PGO_COVERED}
    seen: dict[str, set[str]] = {k: set() for k in _PGO_COVERED}
    for scenario, overrides in runs:
        config = sattcp.resolve(scenario, overrides=overrides)   # every override is a valid key and value
        for key in _PGO_COVERED:
            table, name = key.split(".")
            value = config.get(table, {}).get(name)
            if value is not None:
                seen[key].add(value)
        for key in ("tcp.flavor", "switch.policy"):
            if key in overrides:
                table, name = key.split(".")
                assert config[table][name] == overrides[key], (scenario, key)
    assert seen == allowed


def test_pgo_script_refuses_an_unknown_mode() -> None:
    p = subprocess.run(["bash", str(ROOT / "scripts/pgo.sh"), "install"], capture_output=True, text=True, timeout=60)
    _refused(p, "usage: scripts/pgo.sh build|plan|develop|wheel|store (got 'install')")


_STORED = ROOT / "crates/sattcp-py/pgo"


def test_the_stored_profile_is_an_llvm_profile_with_its_provenance() -> None:
    """What `make build` compiles with: an indexed LLVM profile (its magic number), and
    profile.json naming the sources and the toolchain it was taken with."""
    import json
    import lzma
    import re

    meta = json.loads((_STORED / "profile.json").read_text())
    assert re.fullmatch(r"[0-9a-f]{7,40}", meta["source"]), meta   # taken from committed sources
    assert re.fullmatch(r"rustc \S+ .*", meta["rustc"]), meta
    assert re.fullmatch(r"\d+\.\d+(\.\d+)?", meta["llvm"]), meta
    with lzma.open(_STORED / "sattcp.profdata.xz") as f:
        assert f.read(8) == b"\xfflprofi\x81"   # llvm-profdata's indexed format


def _plan(tmp_path: Path, llvm: str | None, env: dict[str, str] | None = None,
          stored: bool = True, tree: bool = True) -> subprocess.CompletedProcess[str]:
    """`scripts/pgo.sh plan` in a copy of the tree holding only the script and (if ``stored``)
    the stored profile (made unless ``tree`` is False: already there), with a rustc on PATH
    whose LLVM is ``llvm``."""
    import os
    import shutil

    if tree:
        (tmp_path / "scripts").mkdir()
        shutil.copy(ROOT / "scripts/pgo.sh", tmp_path / "scripts/pgo.sh")
        if stored:
            shutil.copytree(_STORED, tmp_path / "crates/sattcp-py/pgo")
    bin_dir = tmp_path.parent / f"{tmp_path.name}-bin"
    bin_dir.mkdir(exist_ok=True)
    rustc = bin_dir / "rustc"
    rustc.write_text("#!/bin/sh\necho 'rustc 9.99.0 (test)'\necho 'host: x86_64-unknown-linux-gnu'\n"
                     + (f"echo 'LLVM version: {llvm}'\n" if llvm else ""))
    rustc.chmod(0o755)
    e = {k: v for k, v in os.environ.items() if k != "SATTCP_PGO"}
    e.update(PATH=f"{bin_dir}:{os.environ['PATH']}", **(env or {}))
    return subprocess.run(["bash", str(tmp_path / "scripts/pgo.sh"), "plan"], capture_output=True,
                          text=True, timeout=60, env=e, cwd=tmp_path)


def test_make_build_uses_the_stored_profile_only_with_the_same_llvm(tmp_path: Path) -> None:
    import json

    want = json.loads((_STORED / "profile.json").read_text())["llvm"]
    major = int(want.split(".")[0])
    cases = [
        (f"{major}.0.0", None, True, "stored"),          # another minor version of the same LLVM
        (want, {"SATTCP_PGO": "0"}, True, "plain: SATTCP_PGO=0"),
        (f"{major + 1}.1.0", None, True,
         f"plain: the stored profile is of LLVM {want} (rustc "),
        (None, None, True, "plain: the stored profile is of LLVM"),     # rustc names no LLVM
        (want, None, False, "plain: no stored profile (crates/sattcp-py/pgo/sattcp.profdata.xz)"),
    ]
    for i, (llvm, env, stored, expect) in enumerate(cases):
        d = tmp_path / str(i)
        d.mkdir()
        p = _plan(d, llvm, env, stored)
        assert p.returncode == 0, p.stderr
        assert p.stdout.startswith(expect), (llvm, env, p.stdout)
        assert p.stdout.count("\n") == 1, p.stdout


def test_make_build_notes_when_the_module_changed_since_the_stored_profile(tmp_path: Path) -> None:
    """The stored profile names the commit it was taken at; `plan` (so `make build`) says how
    many of the module's files changed since, and says when git cannot tell."""
    import json
    import shutil

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts/pgo.sh", tmp_path / "scripts/pgo.sh")
    shutil.copytree(_STORED, tmp_path / "crates/sattcp-py/pgo")
    src = tmp_path / "crates/sattcp-core/src/lib.rs"
    src.parent.mkdir(parents=True)
    src.write_text("pub fn f() {}\n")
    (tmp_path / "crates/sattcp-emu").mkdir()
    (tmp_path / "crates/sattcp-emu/main.rs").write_text("fn main() {}\n")
    bench = tmp_path / "crates/sattcp-core/examples/bench.rs"  # the core's, but not in the module
    bench.parent.mkdir()
    bench.write_text("fn main() {}\n")

    def git(*args: str) -> str:
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path,
                              capture_output=True, text=True, check=True, timeout=60).stdout.strip()

    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "sources")
    meta_path = tmp_path / "crates/sattcp-py/pgo/profile.json"
    meta = json.loads(meta_path.read_text())
    llvm = meta["llvm"]

    def with_source(rev: str) -> None:
        meta_path.write_text(json.dumps({**meta, "source": rev}, indent=2) + "\n")

    with_source(git("rev-parse", "--short", "HEAD"))
    git("commit", "-qam", "the profile")          # the stored profile's own files do not count
    p = _plan(tmp_path, llvm, tree=False)
    assert (p.stdout, p.stderr) == ("stored\n", ""), p
    src.write_text("pub fn f() { g() }\n")          # the module's source, not yet committed
    (tmp_path / "crates/sattcp-emu/main.rs").write_text("fn main() { }\n")  # not the module's
    bench.write_text("fn main() { }\n")                                    # nor is this
    p = _plan(tmp_path, llvm, tree=False)
    assert p.stdout == "stored\n"
    assert "1 file(s) of the module's sources changed since" in p.stderr, p.stderr
    with_source("0123abc")                           # a commit this clone does not have
    p = _plan(tmp_path, llvm, tree=False)
    assert p.stdout == "stored\n"
    assert "taken at 0123abc, which git does not know here" in p.stderr, p.stderr


def test_headline_reads_the_figures_each_command_prints() -> None:
    # bench/headline.py quotes other programs' output: excerpts of each, as printed on
    # 2026-11-29, so that a change of their format shows here rather than as "not measured".
    import importlib.util
    spec = importlib.util.spec_from_file_location("headline", ROOT / "bench" / "headline.py")
    h = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(h)
    bench = """case                           wall s    cpu s      events   Mev/s ev/bnpkt  ns/bnpkt   cells/s   peak MB alloc/pkt  pending floor ns xfloor
droptail GEO, MSS 9180          0.022    0.022      355743   16.24     6.20       382         -       0.7    0.0134      103     35.2    1.7
droptail GEO, MSS 1024          0.159    0.158     2858897   18.15     6.00       331         -       1.8    0.0030      103     35.2    1.6
ATM GEO bulk, EPD               0.064    0.060      119210    1.98     2.25      1133    170.1M       1.8    0.0379      102     34.7   14.5
ATM GEO WWW (kota-geo)          0.073    0.070      132528    1.89     2.29      1215    142.7M       1.8    0.0491      103     35.1   15.1
"""
    assert h.parse_cases(bench) == {"dumbbell": 331, "atm_www": 1215}
    scale = """   flows cpu ns/bnpkt  vs smallest  of it, sys  faults/kpkt  floor ns/op  alloc/bnpkt     B/flow   goodput/flow
      10          291        1.00x           -          0.0            -       0.1181      17801        142 kbps
   10000          609        2.10x           -         25.7            -       0.1267      15136        135 kbps
  100000          861        2.96x         181         29.4            -       0.1262      14252        136 kbps
"""
    assert h.parse_scale(scale) == {10: (291, 1.0, "-"), 10000: (609, 2.1, "-"), 100000: (861, 2.96, "181")}
    startup = """python -c pass (floor)                        10.1 ms      10.1 ms    9.9 ms
python -c 'import sattcp'                     10.7 ms      10.7 ms   10.4 ms
sattcp run scenarios/geo-bulk.toml            51.7 ms      51.7 ms   51.3 ms
sattcp run scenarios/geo-bulk.toml --json     65.6 ms      65.6 ms   65.1 ms
"""
    assert h.parse_startup(startup) == {"import": 10.7, "run": 51.7}
    # The sweep's line from its own printer (a summary with no failures: no store is opened).
    import contextlib
    import io

    from sattcp.cli_study import _print_sweep
    from sattcp.sweep import SweepSummary
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        _print_sweep(SweepSummary("kota-www", total=72, skipped=0, ok=72, failed=0, wall_time_s=5.27, store=Path("/tmp/s.duckdb")))
    assert h.parse_sweep(out.getvalue()) == 5.3
    assert h.parse_sweep("kota-www: 72 runs, 0 already stored, 71 ok, 1 failed (5.3 s) -> /tmp/s.duckdb") is None
    peers = """| case | peer | peer goodput | sattcp goodput | difference | peer CPU s | sattcp CPU s | CPU ratio | wall ratio |
|---|---|---|---|---|---|---|---|---|
| geo | ns-2 (Reno) | 38.33 Mbps | 38.47 Mbps | +0.4% | 1.69 | 0.163 | 10.4x | 10.3x |
| wan | ns-3 (NewReno) | 40.64 Mbps | 41.04 Mbps | +1.0% | 44.52 | 0.198 | 224.7x | 220.1x |
"""
    assert h.parse_peers(peers) == {("geo", "ns-2"): 10.4, ("wan", "ns-3"): 224.7}
    assert [h._ratio(r) for r in (10.44, 224.7, None)] == ["10.4x", "225x", "-"]


def test_headline_names_the_step_that_could_not_start(tmp_path: Path) -> None:
    # A PATH without cargo: the first step (building the bench) cannot start; one line, exit 2.
    import os
    env = {**os.environ, "PATH": str(tmp_path)}
    p = subprocess.run([sys.executable, str(ROOT / "bench" / "headline.py"), "--sweeps", "1"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=60, env=env)
    _refused(p, "bench/headline.py: build failed (cannot start cargo: No such file or directory)")


@pytest.mark.parametrize("script", ["headline.py", "startup.py", "module_ab.py", "results_ab.py", "trace_memory.py"])
def test_python_benchmarks_without_the_module_say_how_to_run_them(tmp_path: Path, script: str) -> None:
    # Run by an interpreter without sattcp (-S: no site-packages), as by `python3 bench/X.py`:
    # was a ModuleNotFoundError traceback.
    args = [str(tmp_path), str(tmp_path)] if script.endswith("_ab.py") else []
    p = subprocess.run([sys.executable, "-S", str(ROOT / "bench" / script), *args], cwd=tmp_path,
                       capture_output=True, text=True, timeout=60)
    _refused(p, f"bench/{script}: cannot import sattcp with {sys.executable}: run it with the project's .venv/bin/python")


def test_modern_cc_kernel_summary_gives_each_cells_spread_and_the_gap_in_standard_errors() -> None:
    if str(ROOT / "scripts") not in sys.path:
        sys.path.insert(0, str(ROOT / "scripts"))
    import modern_cc_kernel as m

    def row(stack: str, cc: str, eff: float, seed: int) -> dict:
        return {"path": "GEO", "ber": 1e-6, "stack": stack, "cc": cc, "efficiency": eff, "retransmits": 100, "timeouts": 0, "seed": seed}

    rows = [row("kernel", "bbr", e, i + 1) for i, e in enumerate([0.60, 0.70])]
    rows += [row("sattcp", "sack/bbr", e, i + 1) for i, e in enumerate([0.70, 0.72, 0.74])]
    lines = m.summary(rows)
    assert lines[0] == "GEO ber 1e-06 kernel bbr: n 2, efficiency mean 0.650 sd 0.071 min-max 0.600-0.700; per run: retransmits 100, timeouts 0.0"
    assert lines[1].startswith("GEO ber 1e-06 sattcp sack/bbr: n 3, efficiency mean 0.720 sd 0.020 min-max 0.700-0.740;")
    # (0.72 - 0.65) / sqrt(0.0707^2 / 2 + 0.02^2 / 3) = 0.07 / 0.0513
    assert lines[2] == "GEO ber 1e-06: sattcp sack/bbr - kernel bbr = +0.070 (+1.4 standard errors; combined standard error 0.051)"
    assert m.tcp_ext("TcpExt: TCPTimeouts TCPLossProbes\nTcpExt: 3 7\nIpExt: A\nIpExt: 1\n") == {"TCPTimeouts": 3, "TCPLossProbes": 7}


def test_modern_cc_kernels_sattcp_side_sums_the_flows_of_a_multi_flow_cell() -> None:
    # `--flows N`: sattcp's cell is topology.pairs = N, its counters summed over the flows as
    # the kernel's namespace counts its N connections.
    if str(ROOT / "scripts") not in sys.path:
        sys.path.insert(0, str(ROOT / "scripts"))
    import modern_cc_kernel as m

    from sattcp.api import run

    got = m.sim_run("MEO", 1e-6, "sack/bbr", 3.0, seed=2, flows=3)
    r = run(str(ROOT / "scenarios" / "modern-meo.toml"), overrides={
        "tcp.flavor": "sack/bbr", "links.bottleneck.ber": 1e-6, "run.duration": "3s", "run.seed": 2, "topology.pairs": 3})
    assert len(r.flows) == 3 and got["flows"] == 3 and got["stack"] == "sattcp"
    assert got["bytes"] == int(r.flows.delivered_bytes.sum()) > 0
    assert got["retransmits"] == int(r.flows.segments_retransmitted.sum()) > 0
    assert got["efficiency"] == r.summary["efficiency"]
