"""The kernel's reno, cubic and bbr beside the simulator's flavours on the study modern-cc's GEO,
MEO and Starlink paths (issue 14: "compare with the kernel's reno/cubic/bbr through the link
emulator, same scenario, same figure").

    sudo .venv/bin/python scripts/modern_cc_kernel.py [--duration 30] [--jobs 2] \
        [--out out/modern-cc-kernel.csv] [--figure docs/img/modern_cc_kernel.png] \
        [--paths GEO,MEO,Starlink] [--bers 0,1e-6] [--ccs reno,cubic,bbr] \
        [--flavours sack/bbr,sack/cubic,newreno,sack] [--flows 1] [--repeat 1] [--sim-seeds N] [--set KEY=VALUE]...

For each path (GEO 275 ms, MEO 100 ms one way, Starlink) x BER (0, 1e-6) x kernel congestion
control, one bulk TCP connection (`--flows N`: N, started 10 ms apart as the study's `app.stagger`,
their counters summed) through `sattcp emulate` (GEO, MEO:
scenarios/emulate/modern-geo.toml: 45 Mbps, 1 BDP drop-tail, IP framing, per-namespace
`net.ipv4.tcp_congestion_control`; Starlink: the simulator scenario scenarios/modern-starlink.toml
itself, its bottleneck's delay schedule followed by the emulator, with `emulate.cc`; `--paths`
runs a subset): a Python sender in
the client namespace writes for the run's duration, a receiver in the server namespace counts
the bytes it reads in the first `duration` seconds after accepting the connection. Efficiency =
those bytes x 8 / duration / (45 Mbps x 1448 / 1500), the kernel's payload rate (MSS 1448
with timestamps). The simulator's runs are the study's one-flow cells, same path, same BER,
same duration, efficiency over its own payload rate (MSS 1460). One CSV (both), one figure.

The spread of single runs: `--repeat N` runs each kernel cell N times, repetition r (0, 1, ...)
with the emulator's bit-error seed r + 1 (`emulate.seed`; for Starlink the scenario's `run.seed`,
which the emulator takes), so that the repetitions are independent samples of the random loss;
`--sim-seeds M` (default N) runs each simulator cell with `run.seed` 1 to M. Seed 1 is the
default of both, so `--repeat 1` is the single run of before. The CSV gains a row per run and its
`seed`; the figure shows each cell's mean with its min-max; a summary per cell (mean, standard
deviation, min-max, and for each kernel control its sattcp counterpart's difference of means over
their combined standard error) is printed at the end. `--paths`, `--bers`, `--ccs` and
`--flavours` choose subsets. `--set KEY=VALUE` overrides a key of the kernel runs' emulation
(e.g. the receiver's `emulate.sysctl.net.ipv4.tcp_rmem`).

Without root, /dev/net/tun or `ip` it says what is missing and exits 2.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from sattcp.emulate import Emulation, missing_privileges  # noqa: E402

SCENARIO = ROOT / "scenarios" / "emulate" / "modern-geo.toml"
STARLINK = ROOT / "scenarios" / "modern-starlink.toml"
#: Per path: (emulated scenario, its overrides, the key of its bit error rate, the key of the
#: emulator's bit-error seed, the simulator's scenario).
PATHS = {
    "GEO": (SCENARIO, {"emulate.delay": "275ms"}, "emulate.ber", "emulate.seed", ROOT / "scenarios" / "modern-geo.toml"),
    "MEO": (SCENARIO, {"emulate.delay": "100ms"}, "emulate.ber", "emulate.seed", ROOT / "scenarios" / "modern-meo.toml"),
    "Starlink": (STARLINK, {}, "links.bottleneck.ber", "run.seed", STARLINK),
}
RATE_BPS = 45e6
#: The kernel's payload per 1500-byte packet: 1500 - 20 (IP) - 20 (TCP) - 12 (timestamps).
KERNEL_MSS = 1448
PORT = 5001
SIM_FLAVOURS = ["sack/bbr", "sack/cubic", "newreno", "sack"]
KERNEL_CCS = ["reno", "cubic", "bbr"]
#: The kernel's control and the simulator's flavour that the summary compares.
SIM_OF = {"reno": "sack", "cubic": "sack/cubic", "bbr": "sack/bbr"}
BERS = [0.0, 1e-6]
#: `seed`: the emulator's bit-error seed (kernel) or run.seed (sattcp); `timeouts`: the client
#: namespace's TcpExt TCPTimeouts (kernel) or the flow's timeouts; `recoveries`: TCPSackRecovery +
#: TCPRenoRecovery or the flow's fast retransmits; `loss_probes`: TCPLossProbes (kernel) or the
#: flows' tail loss probes (sattcp: BBR's only);
#: `duplicates`: segments the receiver got twice (kernel: the sender's tcpi_dsack_dups; sattcp:
#: the receiver's duplicate bytes / MSS); `rwnd_limited_s`, `sndbuf_limited_s`: the sender's
#: time limited by the receive window or its send buffer (kernel only; sattcp's 16.7 MB window
#: and its bulk application never are).
COLUMNS = ["path", "ber", "flows", "stack", "cc", "duration_s", "bytes", "efficiency", "retransmits", "late_max_us",
           "seed", "timeouts", "recoveries", "loss_probes", "duplicates", "rwnd_limited_s", "sndbuf_limited_s"]

#: The receiver takes `flows` connections, each read by a thread, and counts the bytes read
#: in the `duration` seconds after the first one was accepted (the window sattcp's efficiency
#: covers from its first flow's start).
RECEIVER = textwrap.dedent("""
    import socket, sys, threading, time
    d, flows = float(sys.argv[1]), int(sys.argv[2])
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", PORT)); s.listen(flows)
    counts = [0] * flows
    def read(i, c, t0):
        buf = bytearray(1 << 20); c.settimeout(1.0)
        while True:
            if t0 + d - time.monotonic() <= 0: break
            try: k = c.recv_into(buf)
            except socket.timeout: continue
            if k == 0: break
            counts[i] += k
    c, _ = s.accept(); t0 = time.monotonic(); readers = []
    for i in range(flows):
        if i: c, _ = s.accept()
        readers.append(threading.Thread(target=read, args=(i, c, t0))); readers[-1].start()
    for r in readers: r.join()
    print(sum(counts), flush=True)
""").replace("PORT", str(PORT))

#: The sender opens `flows` connections 10 ms apart (the study's `app.stagger`), each written
#: by a thread until the same end, and prints the sums of their tcp_info counters.
SENDER = textwrap.dedent("""
    import socket, sys, threading, time
    d, flows = float(sys.argv[1]), int(sys.argv[3])
    end = time.monotonic() + d; buf = b"x" * (1 << 20); infos = [None] * flows
    def send(i):
        time.sleep(0.01 * i)
        c = socket.create_connection((sys.argv[2], PORT))
        try:
            while time.monotonic() < end: c.sendall(buf)
        except OSError: pass
        infos[i] = c.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 232)
    senders = [threading.Thread(target=send, args=(i,)) for i in range(flows)]
    for t in senders: t.start()
    for t in senders: t.join()
    u = lambda a, b: sum(int.from_bytes(info[a:b], "little") for info in infos if info)
    # linux/tcp.h struct tcp_info: tcpi_total_retrans, tcpi_rwnd_limited and tcpi_sndbuf_limited
    # (microseconds), tcpi_dsack_dups; summed over the connections.
    print(u(100, 104), u(176, 184), u(184, 192), u(216, 220), flush=True)
""").replace("PORT", str(PORT))


def tcp_ext(text: str) -> dict[str, int]:
    """/proc/net/netstat's TcpExt counters: a line of names, then a line of values."""
    lines = [ln.split() for ln in text.splitlines() if ln.startswith("TcpExt:")]
    if len(lines) < 2:
        return {}
    return {k: int(v) for k, v in zip(lines[0][1:], lines[1][1:], strict=False)}


def kernel_run(path: str, ber: float, cc: str, duration: float, seed: int = 1, extra: dict[str, str] | None = None,
               flows: int = 1) -> dict:
    scenario, ov, ber_key, seed_key, _ = PATHS[path]
    ov = {**ov, ber_key: repr(ber), seed_key: str(seed), "emulate.cc": cc, **(extra or {})}
    t0 = time.monotonic()
    with Emulation(scenario, ov) as em:
        rx = em.popen("server", [sys.executable, "-c", RECEIVER, str(duration), str(flows)], stdout=subprocess.PIPE, text=True)
        em.wait_listening("server", PORT)
        tx = em.run("client", [sys.executable, "-c", SENDER, str(duration + 3 + 0.01 * flows), "{server}", str(flows)],
                    capture_output=True, text=True, timeout=duration + 120)
        out, _ = rx.communicate(timeout=60)
        # The sender's namespace holds these connections alone: its TcpExt counters are theirs.
        ext = tcp_ext(em.run("client", ["cat", "/proc/net/netstat"], capture_output=True, text=True, timeout=30).stdout)
    n = int(out.split()[0])
    info = [int(x) for x in tx.stdout.split()] or [-1, -1e6, -1e6, -1]
    late = max((d.get("late_max_us", 0) for d in (em.stats or {}).get("directions", [])), default=0)
    eff = n * 8 / duration / (RATE_BPS * KERNEL_MSS / 1500)
    rto = ext.get("TCPTimeouts", -1)
    print(f"kernel {cc} {path} ber {ber:g} seed {seed} flows {flows}: efficiency {eff:.3f}, {info[0]} retransmits, {rto} timeouts, "
          f"{ext.get('TCPLossProbes', -1)} loss probes, rwnd-limited {info[1] / 1e6:.1f} s, late {late} us "
          f"({time.monotonic() - t0:.0f} s)", file=sys.stderr)
    return {"path": path, "ber": ber, "flows": flows, "stack": "kernel", "cc": cc, "duration_s": duration, "bytes": n, "efficiency": eff,
            "retransmits": info[0],
            "late_max_us": late, "seed": seed, "timeouts": rto,
            "recoveries": ext.get("TCPSackRecovery", 0) + ext.get("TCPRenoRecovery", 0) if ext else -1, "loss_probes": ext.get("TCPLossProbes", -1),
            "duplicates": info[3], "rwnd_limited_s": info[1] / 1e6, "sndbuf_limited_s": info[2] / 1e6}


def sim_run(path: str, ber: float, flavour: str, duration: float, seed: int = 1, flows: int = 1) -> dict:
    import sattcp.api as api
    r = api.run(str(PATHS[path][4]), overrides={"tcp.flavor": flavour, "links.bottleneck.ber": ber, "run.duration": f"{duration:g}s",
                                                "run.seed": seed, "topology.pairs": flows})
    f = r.flows.sum(numeric_only=True)  # the flows' counters summed, as the kernel's namespace counts them
    return {"path": path, "ber": ber, "flows": flows, "stack": "sattcp", "cc": flavour, "duration_s": duration,
            "bytes": int(f.delivered_bytes), "efficiency": float(r.summary["efficiency"]), "retransmits": int(f.segments_retransmitted),
            "late_max_us": "", "seed": seed, "timeouts": int(f.timeouts), "recoveries": int(f.fast_retransmits), "loss_probes": int(f.loss_probes),
            "duplicates": int(f.duplicate_bytes) // r.config["tcp"]["mss"], "rwnd_limited_s": "", "sndbuf_limited_s": ""}


def spread(values: list[float]) -> tuple[float, float, float, float]:
    """Mean, sample standard deviation (0 for one value), min and max."""
    m = statistics.fmean(values)
    return m, statistics.stdev(values) if len(values) > 1 else 0.0, min(values), max(values)


def mean_of(rows: list[dict], key: str) -> float | None:
    """The mean of a column over the runs that have it (None when none has)."""
    values = [r[key] for r in rows if isinstance(r.get(key), (int, float))]
    return statistics.fmean(values) if values else None


def summary(rows: list[dict]) -> list[str]:
    """One line per cell (path, BER, stack, control) with the spread of its runs, and per kernel
    control the difference of sattcp's mean from it over their combined standard error."""
    cells: dict[tuple, list[dict]] = {}
    for r in rows:
        cells.setdefault((r["path"], r["ber"], r["stack"], r["cc"]), []).append(r)
    lines = []
    for (p, b, stack, cc), rs in cells.items():
        m, sd, lo, hi = spread([r["efficiency"] for r in rs])
        per_run = ", ".join(f"{k} {v:.{d}f}" for k, d in (("retransmits", 0), ("timeouts", 1), ("recoveries", 1), ("duplicates", 0),
                                                             ("rwnd_limited_s", 1)) if (v := mean_of(rs, k)) is not None)
        lines.append(f"{p} ber {b:g} {stack} {cc}: n {len(rs)}, efficiency mean {m:.3f} sd {sd:.3f} min-max {lo:.3f}-{hi:.3f}; per run: {per_run}")
    for (p, b, stack, cc), rs in cells.items():
        sim = cells.get((p, b, "sattcp", SIM_OF.get(cc, "")))
        if stack != "kernel" or not sim:
            continue
        (mk, sk, _, _), (ms, ss, _, _) = spread([r["efficiency"] for r in rs]), spread([r["efficiency"] for r in sim])
        se = (sk ** 2 / len(rs) + ss ** 2 / len(sim)) ** 0.5
        z = f"{(ms - mk) / se:+.1f} standard errors" if se > 0 else "no spread to compare with"
        lines.append(f"{p} ber {b:g}: sattcp {SIM_OF[cc]} - kernel {cc} = {ms - mk:+.3f} ({z}; combined standard error {se:.3f})")
    return lines


def figure(rows: list[dict], out: Path, paths: list[str], bers: list[float] = BERS, ccs: list[str] = KERNEL_CCS,
           flavours: list[str] = SIM_FLAVOURS, flows: int = 1) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    cases = [(p, b) for p in paths for b in bers]
    labels = [f"kernel {c}" for c in ccs] + [f"sattcp {f}" for f in flavours]
    ncol = min(len(cases), 4)
    nrow = (len(cases) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(3.2 * ncol, 3.6 * nrow), sharey=True, squeeze=False)
    for ax in axes.flat[len(cases):]:
        ax.axis("off")
    for ax, (p, b) in zip(axes.flat[:len(cases)], cases, strict=True):
        vals, lows, highs = [], [], []
        for lab in labels:
            stack, cc = lab.split(" ", 1)
            sel = [r["efficiency"] for r in rows if r["path"] == p and r["ber"] == b and r["stack"] == stack and r["cc"] == cc]
            m, _, lo, hi = spread(sel) if sel else (0.0, 0.0, 0.0, 0.0)
            vals.append(m)
            # max(): the mean of equal values may differ from them in the last bit.
            lows.append(max(0.0, m - lo))
            highs.append(max(0.0, hi - m))
        colours = ["#1f77b4"] * len(ccs) + ["#ff7f0e"] * len(flavours)
        # The mean of the cell's runs; with more than one, a bar of their min-max.
        ax.bar(range(len(labels)), vals, color=colours, yerr=[lows, highs] if any(lows) or any(highs) else None, capsize=2)
        ax.set_xticks(range(len(labels)), labels, rotation=60, ha="right", fontsize=8)
        ax.set_title(f"{p}, BER {b:g}", fontsize=9)
        ax.set_ylim(0, 1.05)
    for row in axes:
        row[0].set_ylabel("efficiency (one flow)" if flows == 1 else f"efficiency ({flows} flows)")
    what = "One bulk flow" if flows == 1 else f"{flows} bulk flows"
    fig.suptitle(f"{what}, 45 Mbps, 1 BDP drop-tail: kernel TCP (emulator) and sattcp", fontsize=10)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)


def subset(a: argparse.Namespace, name: str, known: list[str]) -> list[str] | None:
    """The comma-separated subset given as --NAME, or None (said on stderr) when it names
    something unknown or nothing."""
    chosen = [x for x in getattr(a, name).split(",") if x]
    unknown = [x for x in chosen if x not in known]
    if unknown or not chosen:
        print(f"modern_cc_kernel: --{name}: unknown {name[:-1]} {', '.join(unknown) or '(none given)'} (known: {', '.join(known)})", file=sys.stderr)
        return None
    return chosen


def bit_error_rates(text: str) -> list[float] | None:
    """--bers as numbers in [0, 1), or None (said on stderr)."""
    try:
        bers = [float(x) for x in text.split(",") if x]
    except ValueError:
        bers = []
    if not bers or any(not 0 <= b < 1 for b in bers):
        print(f"modern_cc_kernel: --bers: must be comma-separated bit error rates >= 0 and < 1, got {text!r}", file=sys.stderr)
        return None
    return bers


def whole(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            n = minimum - 1
        if n < minimum:
            raise argparse.ArgumentTypeError(f"must be a whole number >= {minimum}, got {text!r}")
        return n
    return parse


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=30.0, help="seconds per run (the study's 30)")
    ap.add_argument("--jobs", type=whole(1), default=2, help="emulations at once")
    ap.add_argument("--out", default="out/modern-cc-kernel.csv")
    ap.add_argument("--figure", default="docs/img/modern_cc_kernel.png")
    ap.add_argument("--paths", default=",".join(PATHS), help=f"comma-separated subset of {', '.join(PATHS)}")
    ap.add_argument("--bers", default=",".join(f"{b:g}" for b in BERS), help="comma-separated bit error rates")
    ap.add_argument("--ccs", default=",".join(KERNEL_CCS), help=f"comma-separated subset of the kernel's {', '.join(KERNEL_CCS)}")
    ap.add_argument("--flavours", default=",".join(SIM_FLAVOURS), help=f"comma-separated subset of sattcp's {', '.join(SIM_FLAVOURS)}")
    ap.add_argument("--flows", type=whole(1), default=1,
                    help="bulk flows per run, started 10 ms apart (the study's 1, 10 and 100; sattcp: topology.pairs)")
    ap.add_argument("--repeat", type=whole(1), default=1, help="kernel runs per cell, each with its own bit-error seed (1, 2, ...)")
    ap.add_argument("--sim-seeds", type=whole(1), default=None, help="sattcp runs per cell, run.seed 1, 2, ... (default: --repeat)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="an override of the kernel runs' emulation, e.g. emulate.sysctl.net.ipv4.tcp_rmem='4096 67108864 67108864' (repeatable)")
    a = ap.parse_args()
    bad = [kv for kv in a.set if "=" not in kv or not kv.split("=", 1)[0]]
    if bad:
        print(f"modern_cc_kernel: --set: must be KEY=VALUE, got {bad[0]!r}", file=sys.stderr)
        return 2
    extra = dict(kv.split("=", 1) for kv in a.set)
    paths, ccs, flavours = subset(a, "paths", list(PATHS)), subset(a, "ccs", KERNEL_CCS), subset(a, "flavours", SIM_FLAVOURS)
    bers = bit_error_rates(a.bers)
    if paths is None or ccs is None or flavours is None or bers is None:
        return 2
    missing = missing_privileges()
    if missing:
        print("modern_cc_kernel: needs " + "; ".join(missing), file=sys.stderr)
        return 2
    grid = [(p, b) for p in paths for b in bers]
    rows = [sim_run(p, b, f, a.duration, s, a.flows) for p, b in grid for f in flavours for s in range(1, (a.sim_seeds or a.repeat) + 1)]
    with ThreadPoolExecutor(max_workers=a.jobs) as ex:
        rows += list(ex.map(lambda g: kernel_run(*g), [(p, b, cc, a.duration, r + 1, extra, a.flows)
                                                       for r in range(a.repeat) for p, b in grid for cc in ccs]))
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)
    figure(rows, ROOT / a.figure if not Path(a.figure).is_absolute() else Path(a.figure), paths, bers, ccs, flavours, a.flows)
    if a.repeat == 1 and a.sim_seeds in (None, 1):
        for r in rows:
            print(f"{r['path']} ber {r['ber']:g} {r['stack']} {r['cc']}: {r['efficiency']:.3f}")
    else:
        print("\n".join(summary(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
