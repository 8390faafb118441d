#!/usr/bin/env python3
"""Regenerate the ns-2 reference traces of crates/sattcp-core/tests/data/ns2/ (issue 11).

Needs ns-2.35 (`ns`) and Debian's `ns2-examples` (the test suites and their shipped reference
outputs under /usr/share/doc/ns2/examples/tcl/test). CI does not run this: it reads the stored
traces. For every test it

1. runs `ns test-suite-<suite>.tcl <test> quiet` in a scratch copy of the test directory,
   exactly as `test-all-<suite>` does (the `finish` step, which needs xgraph and perl tools
   that Debian does not ship, fails after `all.tr` is complete and is ignored);
2. checks that `all.tr` reproduces the suite's shipped reference output
   (`test-output-<suite>/<test>.gz`: the `+`/`-` events and drops of the data link r1 -> k1,
   as `getrc -s 2 -d 3 | raw2xg -s 0.01 -m 90` plots them), and stops if it does not;
3. writes `<test>.txt`: one line per event of the TCP sender's data packets, in trace order:
   `s <time_ns> <seqno>` when the sender hands a packet to its link (the `+` at node 0) and
   `d <time_ns> <seqno>` when the network drops it (a `d` anywhere), times in integer
   nanoseconds (ns-2 prints them exactly: every delay is a whole number of microseconds).

Usage: scripts/ns2_refs.py [--out DIR] [--check-only]
"""

import argparse
import gzip
import shutil
import subprocess
import sys
import tempfile
from decimal import Decimal
from pathlib import Path

TEST_DIR = Path("/usr/share/doc/ns2/examples/tcl/test")
ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "crates/sattcp-core/tests/data/ns2"

SCENARIOS = ["onedrop", "twodrops", "threedrops", "fourdrops", "multiple", "multiple2"]
FLAVOURS = ["tahoe", "reno", "newreno", "sack"]
# (suite, test) pairs: tcpVariants without and with limited transmit (`_SA_`).
TESTS = [("tcpVariants", f"{s}_{f}") for s in SCENARIOS for f in FLAVOURS] + [
    ("tcpVariants", f"{s}_SA_{f}") for s in SCENARIOS for f in FLAVOURS
]
# test-suite-newreno.tcl (same topology): many losses in one window, timeouts with backoff,
# bugFix_ on and off, RFC 2582's newreno_changes1_ / partial_window_deflation_ /
# exit_recovery_fix_.
TESTS += [
    ("newreno", t) for t in ["reno1", "reno2", "reno2_bugfix", "newreno1_A", "newreno1_B0", "newreno2_B", "newreno_rto_loss", "newreno6"]
]
# test-suite-sack.tcl, the single-flow tests without maxburst_ (Topology/net0: 8 Mb/s 5 ms
# feeders, 800 kb/s 100 ms bottleneck, drop-tail limit 6): losses by queue overflow, lost
# retransmissions, timeouts with backoff.
TESTS += [("sack", t) for t in ["sack1", "sack1a", "sack1b", "sack1c"]]
# Variants that ns-2 does not ship: (suite, test, variant, Tcl lines inserted before the suite's
# last line `TestSuite runTest`, after its own defaults, and (old, new) replacements in the
# suite's text), written as `<suite>-<test>-<variant>.txt`. `tick100ms`: ns-2.1b3's clock
# (100 ms ticks, no minrto_, so the RTO's floor is two ticks), where ns-2's random tick phase
# (`boot_time_`) decides RTT samples and so when timeouts fire; the FTP starts at 1.01 s
# instead of 1.0 s, which puts the flow's packets where ns-2's phase and a phase of 0 differ.
TICK100 = ["Agent/TCP set tcpTick_ 0.1", "Agent/TCP set minrto_ 0"]
START_1010 = [('$ns_ at 1.0 "$ftp1 start"', '$ns_ at 1.01 "$ftp1 start"')]
VARIANTS: list[tuple[str, str, str, list[str], list[tuple[str, str]]]] = [
    ("sack", t, "tick100ms", TICK100, []) for t in ["sack1a", "sack1b", "sack1c"]
]
VARIANTS += [
    ("tcpVariants", t, "tick100ms", TICK100, START_1010)
    for t in ["twodrops_reno", "multiple_reno", "multiple_tahoe", "multiple_newreno", "multiple_sack"]
]
VARIANTS += [("newreno", "newreno_rto_loss", "tick100ms", TICK100, START_1010)]
# newreno_rto_loss (17 losses: a retransmission lost, timeouts backed off) with the other
# agents of the suite's `setup` (Tahoe = `Agent/TCP`, Reno, Sack1).
RTO_LOSS_LIST = "{15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 37}"
VARIANTS += [
    ("newreno", "newreno_rto_loss", agent.lower(), [], [(f"setup Newreno {RTO_LOSS_LIST}", f"setup {agent} {RTO_LOSS_LIST}")])
    for agent in ["Tahoe", "Reno", "Sack1"]
]

# Situations the suites do not cover, run by scripts/ns2_fidelity.tcl (Topology/net4 and the
# tcpVariants defaults, FTP from 1 s): name -> (flavour, window, data drops, ACK drops, end (s),
# Tcl lines run after the defaults, delayed-ACK sink). Written as `fid-<name>.txt`; compared by
# tests/ns2_conformance.rs `fidelity`, which lists the same cases with our configuration.
AGENTS = {
    "tahoe": ("TCP", "TCPSink"),
    "reno": ("TCP/Reno", "TCPSink"),
    "newreno": ("TCP/Newreno", "TCPSink"),
    "sack": ("TCP/Sack1", "TCPSink/Sack1"),
}
FIDELITY: dict[str, tuple[str, int, list[int], list[int], float, str, bool]] = {}
for _f in FLAVOURS:
    _backoff = [14, 29, 30, 31] if _f == "tahoe" else [14, 29, 43, 44]
    FIDELITY |= {
        # the fast retransmission lost too: a timeout
        f"rtx_loss_{_f}": (_f, 28, [14, 29], [], 6.0, "", False),
        # the retransmission lost again after each timeout: 1 s, 2 s, 4 s backed off
        f"rto_backoff_{_f}": (_f, 28, _backoff, [], 12.0, "", False),
        # too few packets in flight for three duplicates
        f"small_window_{_f}": (_f, 4, [14], [], 6.0, "", False),
        # limited by the receiver's window (8 packets) with two losses
        f"rwnd8_{_f}": (_f, 8, [14, 20], [], 6.0, "", False),
        # ACKs lost in slow start and among the duplicates
        f"ack_loss_{_f}": (_f, 28, [14], [3, 16, 17, 20], 6.0, "", False),
        # bugFix_ false: a second fast retransmit in one window
        f"bugfix_off_{_f}": (_f, 28, [14, 24, 26, 28], [], 6.0, "Agent/TCP set bugFix_ false", False),
    }
    # ns-2's DelAckSink (interval_ 100 ms), one loss and three. With one loss Reno and NewReno
    # stop at 4.1 s: at 4.11832 s a delayed-ACK timer and an arrival fall on the same instant,
    # which ns-2's double-precision clock orders by rounding (the timer first), ours by
    # scheduling order (the arrival, scheduled first)
    FIDELITY[f"delack_{_f}"] = (_f, 28, [14], [], 4.1 if _f in ("reno", "newreno") else 6.0, "", True)
    FIDELITY[f"delack_multi_{_f}"] = (_f, 28, [14, 26, 28], [], 6.0, "", True)
    # 40 arrivals lost in a row (minrto_ 0.2): the backoff passes 64 under rfc2988_ until the
    # RTO reaches maxrto_ (60 s)
    FIDELITY[f"outage_{_f}"] = (_f, 8, list(range(20, 60)), [], 250.0, "Agent/TCP set minrto_ 0.2", False)
    # the SYN (packet 0) lost: resent at rtxcur_init_ (7 s); timeout() then treats it as a
    # lost packet 0 (ssthresh_ 2 and, with bugfix_ss_, wnd_init_ 1; RFC 5681 §3.1). To 14.425 s:
    # at 14.42556 s an arrival at r1 and a departure from its full queue fall on the same
    # instant (the exact ties of `delack` above)
    FIDELITY[f"syn_loss_{_f}"] = (_f, 28, [0], [], 14.425, "", False)
for _f in ["reno", "newreno"]:
    FIDELITY[f"exitfr_off_{_f}"] = (_f, 28, [11, 12, 13, 14, 16, 17, 18, 19], [], 6.0, "Agent/TCP set exitFastRetrans_ false", False)
# The seeds' choices in ns-2.35: Hoe's flywheel (newreno_changes_ 1) and Sack1's oldCode_.
FIDELITY["nrc1_threedrops_newreno"] = ("newreno", 28, [14, 26, 28], [], 6.0, "Agent/TCP/Newreno set newreno_changes_ 1", False)
FIDELITY["nrc1_multiple_newreno"] = (
    "newreno",
    28,
    [11, 12, 13, 14, 16, 17, 18, 19],
    [],
    6.0,
    "Agent/TCP/Newreno set newreno_changes_ 1",
    False,
)
FIDELITY["oldcode_threedrops_sack"] = ("sack", 28, [14, 26, 28], [], 6.0, "Agent/TCP/Sack1 set oldCode_ true", False)
FIDELITY["oldcode_multiple_sack"] = ("sack", 28, [11, 12, 13, 14, 16, 17, 18, 19], [], 6.0, "Agent/TCP/Sack1 set oldCode_ true", False)


def fidelity_events(work: Path, name: str) -> list[str]:
    flavour, window, drops, ack_drops, end, extra, delack = FIDELITY[name]
    agent, sink = AGENTS[flavour]
    sink += "/DelAck" if delack else ""
    args = [agent, sink, str(window), " ".join(map(str, drops)), " ".join(map(str, ack_drops)), str(end), extra]
    tr = work / "all.tr"
    tr.unlink(missing_ok=True)
    subprocess.run(["ns", str(ROOT / "scripts/ns2_fidelity.tcl"), *args], cwd=work, capture_output=True, check=True)
    return events([line.split() for line in tr.read_text().splitlines() if line.strip()])


# raw2xg's plot of a sequence number: -s 0.01 -m 90 (test-suite-tcpVariants.tcl `finish`).
WRAP = 90


def ns_time(s: str) -> int:
    return int(Decimal(s) * 1_000_000_000)


def run_test(workdir: Path, suite: str, test: str, script: str | None = None) -> list[list[str]]:
    tr = workdir / "all.tr"
    if tr.exists():
        tr.unlink()
    script = script or f"test-suite-{suite}.tcl"
    subprocess.run(["ns", script, test, "quiet"], cwd=workdir, capture_output=True, check=False)
    if not tr.exists():
        sys.exit(f"{suite}/{test}: ns wrote no all.tr")
    return [line.split() for line in tr.read_text().splitlines() if line.strip()]


def plotted(rows: list[list[str]]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Our rendering of the reference's "packets" and "drops" sets for link 2 -> 3."""
    pk, dr = [], []
    for r in rows:
        if r[2] == "2" and r[3] == "3" and r[4] == "tcp":
            # raw2xg offsets each flow by its flow id (1 in tcpVariants, 0 in the sack suite)
            y = f"{int(r[7]) + (int(r[10]) % WRAP) * 0.01:.2f}"
            t = f"{Decimal(r[1]):.5f}"
            if r[0] in "+-":
                pk.append((t, y))
            elif r[0] == "d":
                dr.append((t, y))
    return sorted(pk), sorted(set(dr))


def reference(suite: str, test: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]] | None:
    path = TEST_DIR / f"test-output-{suite}" / f"{test}.gz"
    if not path.exists():
        return None
    sections: dict[str, list[tuple[str, str]]] = {}
    cur = None
    for line in gzip.open(path, "rt"):
        line = line.strip()
        if line.startswith('"'):
            cur = line[1:]
            if cur in sections:  # the second block (ACKs) repeats the names
                cur = cur + "#2"
            sections[cur] = []
        elif cur and line and line[0].isdigit():
            t, y = line.split()
            sections[cur].append((f"{Decimal(t):.5f}", f"{Decimal(y):.2f}"))
    # raw2xg plots each drop twice
    return sorted(sections.get("packets", [])), sorted(set(sections.get("drops", [])))


def events(rows: list[list[str]]) -> list[str]:
    out = []
    for r in rows:
        if r[4] != "tcp":
            continue
        if r[0] == "+" and r[2] == "0":
            out.append(f"s {ns_time(r[1])} {r[10]}")
        elif r[0] == "d":
            out.append(f"d {ns_time(r[1])} {r[10]}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--check-only", action="store_true", help="only compare with the shipped outputs")
    ap.add_argument(
        "--suite", action="append", help="only this suite (repeatable; `fidelity`: scripts/ns2_fidelity.tcl's cases; default: all)"
    )
    a = ap.parse_args()
    if shutil.which("ns") is None or not TEST_DIR.exists():
        sys.exit("needs ns-2 and ns2-examples (apt-get install ns2 ns2-examples)")
    version = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "ns2"], capture_output=True, text=True).stdout
    a.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "test"
        shutil.copytree(TEST_DIR, work)
        for suite, test in TESTS:
            if a.suite and suite not in a.suite:
                continue
            rows = run_test(work, suite, test)
            ref = reference(suite, test)
            ours = plotted(rows)
            if ref is not None and ours != ref:
                sys.exit(f"{suite}/{test}: all.tr does not reproduce test-output-{suite}/{test}.gz")
            status = "matches the shipped output" if ref is not None else "no shipped output"
            print(f"{suite}/{test}: {status}")
            if a.check_only:
                continue
            ev = events(rows)
            head = [
                f"# ns-2 {version} test-suite-{suite}.tcl {test} ({status}), regenerated by scripts/ns2_refs.py",
                "# s <time_ns> <seqno>: the sender hands packet <seqno> to its link; d: the network drops it",
            ]
            name = test if suite == "tcpVariants" else f"{suite}-{test}"
            (a.out / f"{name}.txt").write_text("\n".join(head + ev) + "\n")
        for suite, test, variant, lines, replacements in VARIANTS:
            if a.suite and suite not in a.suite:
                continue
            text = (work / f"test-suite-{suite}.tcl").read_text()
            for old, new in replacements:
                assert text.count(old) == 1, f"test-suite-{suite}.tcl: {old!r} not found once"
                text = text.replace(old, new)
            anchor = "\nTestSuite runTest"
            assert anchor in text, f"test-suite-{suite}.tcl: no {anchor!r}"
            script = f"test-suite-{suite}-{variant}.tcl"
            at = text.rindex(anchor)
            (work / script).write_text(text[:at] + "".join(f"\n{line}" for line in lines) + text[at:])
            rows = run_test(work, suite, test, script)
            change = "; ".join(lines + [f"{o} -> {n}" for o, n in replacements])
            print(f"{suite}/{test} {variant}: {change}")
            if a.check_only:
                continue
            head = [
                f"# ns-2 {version} test-suite-{suite}.tcl {test} with {change} (lines added before `TestSuite runTest`), regenerated by scripts/ns2_refs.py",
                "# s <time_ns> <seqno>: the sender hands packet <seqno> to its link; d: the network drops it",
            ]
            (a.out / f"{suite}-{test}-{variant}.txt").write_text("\n".join(head + events(rows)) + "\n")
        if a.suite and "fidelity" not in a.suite:
            return
        for name, (flavour, window, drops, ack_drops, end, extra, delack) in FIDELITY.items():
            ev = fidelity_events(work, name)
            print(f"fidelity/{name}: {len(ev)} events")
            if a.check_only:
                continue
            what = f"{AGENTS[flavour][0]}, window_ {window}, drops {drops}, ACK drops {ack_drops}, to {end} s"
            what += (f", {extra}" if extra else "") + (", DelAck sink" if delack else "")
            head = [
                f"# ns-2 {version} scripts/ns2_fidelity.tcl fid-{name}: {what}, regenerated by scripts/ns2_refs.py",
                "# s <time_ns> <seqno>: the sender hands packet <seqno> to its link; d: the network drops it",
            ]
            (a.out / f"fid-{name}.txt").write_text("\n".join(head + ev) + "\n")


if __name__ == "__main__":
    main()
