"""Seed 003 (NetPIPE over an E1 ATM satellite path), reproduced:
``sattcp reproduce netpipe-sat [--quick] [--real] [--out DIR] [--jobs N]`` runs the seed's
experiments in the simulator (NetPIPE's ping-pong application, ``app.kind = "pingpong"``, on
``scenarios/netpipe-e1.toml``) and, with ``--real``, on the kernel's own TCP through
``sattcp emulate`` (Debian's NPtcp and a ping-pong that keeps every repeat), and writes
``DIR/report.html`` with our Table 1 and figures 1-5 beside the seed's numbers, every statement
of the seed checked, the data of every table and figure as CSV and the figures as PNG/SVG.

Nothing is fitted to the seed. Each statement's rule is written beside it; where a rule needs a
number, it comes from the seed's own Table 1 or text (its variance column gives the spread of
its measurements) or, where the seed gives none, is stated as our reading (docs/netpipe-sat.md).

Throughput compared with the seed is in NetPIPE's "Mbps", 2^20 bit/s: the seed's Table 1 is
NetPIPE's output (24576 bytes in 1.257 s print as 0.149190).

The runs are independent and short, so they go to a local process pool as seed 004's
reproduction does (``sattcp.zhou``); the sweep store (DuckDB) keeps one summary row per run and
these results are per block size, so it is not used.
"""

from __future__ import annotations

import base64
import csv
import html
import io
import math
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .netpipe import NETPIPE_MBPS
from .paths import check_folder, start_report, write_whole

__all__ = ["Check", "Data", "Reproduction", "Run", "analyse", "plan", "real_plan", "reproduce"]

ROOT = Path(__file__).resolve().parents[2]
#: Seed 003's path in the simulator (netpipe helper's scenario: E1 ATM, RTT 400 ms, 8 KB buffers).
SCENARIO = ROOT / "scenarios" / "netpipe-e1.toml"
#: The same link for the kernel's TCP (docs/emulate.md).
EMU_SCENARIO = ROOT / "scenarios" / "emulate" / "e1.toml"

# -- the seed's numbers ---------------------------------------------------------------------

#: Seed 003 Table 1 (RTT 400 ms, 8 KB socket buffer): bytes, block transfer time (s),
#: throughput (NetPIPE Mbps, 2^20 bit/s), variance of the transfer time (s^2). The 128-byte
#: row's throughput is printed "0.0.0048" in the seed.
SEED_TABLE1: tuple[tuple[int, float, float, float], ...] = (
    (1, 0.2045, 0.000037, 0.000001),
    (128, 0.2052, 0.0048, 0.000003),
    (512, 0.2054, 0.019, 0.000004),
    (1024, 0.211, 0.038, 0.000004),
    (2048, 0.214, 0.073, 0.000006),
    (4096, 0.253, 0.123, 0.00218),
    (6144, 0.320, 0.147, 0.00255),
    (8192, 0.653, 0.096, 0.004443),
    (12288, 0.719, 0.131, 0.00438),
    (16384, 0.951, 0.132, 0.016791),
    (24576, 1.257, 0.149190, 0.012120),
)
TABLE1_SIZES = tuple(r[0] for r in SEED_TABLE1)
#: Seed 003 section 3: "at small transfer times (0.33 s), both buffer lengths have the same throughput".
SEED_CROSSING_S = 0.33
#: Seed 003 section 3, figure 3 at RTT 600 ms: y = 0.0125 x (Mbps, KB).
SEED_SLOPE_600 = 0.0125
#: The seed's own formula for that line, buffer / RTT: 8 bits per byte x 1 KB / 0.6 s, in
#: 10^6 bit/s per KB as the seed writes it ("Mbps x Time in s = M buffer size in bits").
SEED_FORMULA_SLOPE_600 = 8 / 600
#: How far the seed's fitted slope is from its own formula: the tolerance of our slope check.
SLOPE_TOL = abs(SEED_FORMULA_SLOPE_600 - SEED_SLOPE_600) / SEED_SLOPE_600
#: Seed 003 section 2: the default socket size, 8192 bytes.
DEFAULT_BUFFER = 8192
#: Seed 003 section 2: the satellite RTT of Table 1 and figures 1, 4 and 5.
GEO_RTT_MS = 400.0
#: Figure 2's RTTs (ms), seed 003 section 2.
RTTS_MS = (1.0, 10.0, 20.0, 50.0, 100.0, 200.0, 400.0, 600.0)
#: Figure 3's RTTs and socket buffers (8 KB to 64 KB).
FIG3_RTTS_MS = (100.0, 400.0, 600.0)
FIG3_BUFFERS = tuple(k * 1024 for k in (8, 16, 24, 32, 40, 48, 56, 64))
#: Figure 3's runs go up to the seed's "maximum block size (64 k bytes)"; its other measure is
#: the throughput of that block alone.
FIG3_BLOCK = 65536
#: What figure 3 plots per buffer (docs/netpipe-sat.md, "Figure 3's measure"): ``"peak"``, the
#: peak throughput of a NetPIPE run (its schedule up to 64 KB with the +-3-byte perturbations,
#: stopped as NetPIPE stops it, after the first size taking STOPTM = 1 s); or ``"block"``, the
#: throughput of one 64 KB block (the study's measure before).
FIG3_MEASURE = "peak"
#: NetPIPE's STOPTM (netpipe.h, 2.x and 3.x): the run ends once a size's best time reaches 1 s.
NETPIPE_STOPTM_S = 1.0
#: Figure 1's second buffer (the seed does not name it; 64 KB, the largest of figure 3).
LARGE_BUFFER = 65536
#: Figures 4-5: BER 1e-12 to 1e-4, one point per decade.
BERS = tuple(10.0 ** e for e in range(-12, -3))
#: Figures 4-5's block: "default block size", read as a block of the default socket size.
BER_BLOCK = 8192
#: Round trips per trial in the study: NetPIPE's own choice per size (``app.nrepeat =
#: "netpipe"``: max(RUNTM / (previous size / (previous size - inc + 1) x tlast), TRIALS), NetPIPE
#: 2.x netpipe.c), so that each row is NetPIPE's statistic as the seed's NetPIPE printed it: the
#: best of 7 trial means, and the variance of the trial means (docs/netpipe.md). 1 gives the
#: single round trips of the ping-pong's default.
NREPEAT: int | str = "netpipe"
#: Trials of figures 4-5's runs with NetPIPE's statistic: NetPIPE's TRIALS (with single round
#: trips, 20, or 10 quick: more repeats for a steadier %CDV).
BER_TRIALS = 7
#: A run's cap on simulated time (a pingpong run ends when its schedule is done; at BER 1e-4
#: twenty 8 KB round trips take hours of simulated time in RTO back-offs).
RUN_CAP = "200000s"


def seed_row(nbytes: int) -> tuple[int, float, float, float] | None:
    return next((r for r in SEED_TABLE1 if r[0] == nbytes), None)


def seed_cdv_pct(nbytes: int) -> float:
    """The seed's %CDV at one Table 1 size (error rate 1e-12): sqrt(variance) / time x 100."""
    r = seed_row(nbytes)
    assert r is not None
    return math.sqrt(r[3]) / r[1] * 100


def netpipe_mbps(bps: float) -> float:
    return bps / NETPIPE_MBPS


# -- the runs -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """One simulator run: a ping-pong on the E1 path."""

    key: str
    rtt_ms: float
    buffer: int
    ber: float = 0.0
    seed: int = 1
    #: Explicit block sizes (app.blocks), or None for NetPIPE's schedule up to last_block.
    blocks: tuple[int, ...] | None = None
    last_block: int = 65536
    perturbation: int = 3
    #: Trials per size: NetPIPE's TRIALS (the app's default, docs/netpipe.md).
    repeats: int = 7
    #: Round trips per trial (``app.nrepeat``): NetPIPE's own choice (:data:`NREPEAT`), or a
    #: number (1: each trial one round trip, the app's default).
    nrepeat: int | str = "netpipe"


def plan(quick: bool = False, nrepeat: int | str = NREPEAT, fig3: str = FIG3_MEASURE) -> list[Run]:
    """Every simulator run (``quick``: fewer RTTs, buffers, BERs and seeds, blocks to 32 KB, no
    perturbations); ``nrepeat``: round trips per trial (:data:`NREPEAT`); ``fig3``: figure 3's
    measure (:data:`FIG3_MEASURE`)."""
    runs: list[Run] = []
    last, pert = (32768, 0) if quick else (65536, 3)
    rtts = (1.0, 20.0, 100.0, 400.0, 600.0) if quick else RTTS_MS
    # Table 1 and figure 2 (8 KB buffer), figure 1 (8 KB and 64 KB at 400 ms).
    for rtt in rtts:
        runs.append(Run(sched_key(rtt, DEFAULT_BUFFER), rtt, DEFAULT_BUFFER, last_block=last, perturbation=pert, nrepeat=nrepeat))
    runs.append(Run(sched_key(GEO_RTT_MS, LARGE_BUFFER), GEO_RTT_MS, LARGE_BUFFER, last_block=last, perturbation=pert, nrepeat=nrepeat))
    # Figure 3.
    bufs = tuple(k * 1024 for k in (8, 16, 32, 64)) if quick else FIG3_BUFFERS
    for rtt in FIG3_RTTS_MS:
        for b in bufs:
            key = f"fig3/rtt={rtt:g}/buf={b}/m={fig3}"
            if fig3 == "peak":
                runs.append(Run(key, rtt, b, last_block=FIG3_BLOCK, perturbation=0 if quick else 3, nrepeat=nrepeat))
            else:
                runs.append(Run(key, rtt, b, blocks=(FIG3_BLOCK,), nrepeat=nrepeat))
    # Figures 4-5.
    bers = (1e-12, 1e-10, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4) if quick else BERS
    seeds = (1, 2) if quick else (1, 2, 3, 4, 5)
    for ber in bers:
        for s in seeds:
            runs.append(Run(ber_key(ber, s), GEO_RTT_MS, DEFAULT_BUFFER, ber=ber, seed=s, blocks=(BER_BLOCK,), nrepeat=nrepeat,
                            repeats=BER_TRIALS if nrepeat == "netpipe" else (10 if quick else 20)))
    return runs


def sched_key(rtt_ms: float, buffer: int) -> str:
    return f"sched/rtt={rtt_ms:g}/buf={buffer}"


def ber_key(ber: float, seed: int) -> str:
    return f"ber/ber={ber:g}/seed={seed}"


def sim_overrides(run: Run) -> dict[str, Any]:
    """The scenario keys of one run (scenarios/netpipe-e1.toml, docs/netpipe.md)."""
    o: dict[str, Any] = {
        "links.bottleneck.delay": f"{rtt_one_way_ms(run.rtt_ms):g}ms",
        "links.bottleneck.ber": float(run.ber),
        "tcp.send_buffer": run.buffer,
        "tcp.receive_buffer": run.buffer,
        "app.repeats": run.repeats,
        "app.nrepeat": run.nrepeat,
        "run.duration": RUN_CAP,
    }
    if run.blocks is not None:
        o["app.blocks"] = list(run.blocks)
    else:
        o["app.last_block"] = run.last_block
        o["app.perturbation"] = run.perturbation
    return o


def rtt_one_way_ms(rtt_ms: float) -> float:
    """The bottleneck's one-way delay for an imposed RTT: half of it (seed 003's analyser
    imposes the delay on the E1 link; our LAN hops add their own microseconds)."""
    return rtt_ms / 2


def _one(run: Run) -> tuple[str, dict[str, Any]]:
    from sattcp.api import run as run_scenario

    r = run_scenario(SCENARIO, seed=run.seed, overrides=sim_overrides(run))
    df = r.netpipe
    rows = [] if df is None else [{k: (int(v) if k in ("bytes", "repeats") else float(v)) for k, v in rec.items()}
                                  for rec in df.to_dict("records")]
    return run.key, {"rows": rows, "warnings": list(r.data.get("warnings", []) or []), "sim_time_s": r.summary.get("sim_time_s")}


def execute(runs: Sequence[Run], jobs: int | None = None, progress: Callable[[int, int], None] | None = None,
            one: Callable[[Run], tuple[str, dict[str, Any]]] = _one) -> dict[str, dict[str, Any]]:
    """Runs everything on a local process pool; results by key."""
    out: dict[str, dict[str, Any]] = {}
    # A stand-in runner (tests) runs in this process: it need not be importable by workers.
    pool = ProcessPoolExecutor(max_workers=jobs) if one is _one else ThreadPoolExecutor(max_workers=1)
    with pool as ex:
        for i, (key, res) in enumerate(ex.map(one, runs), 1):
            out[key] = res
            if progress:
                progress(i, len(runs))
    return out


# -- the data the checks read ---------------------------------------------------------------


@dataclass
class Data:
    """One stack's measurements in the shape of the seed's figures. Rows have the columns of
    ``RunResult.netpipe``: bytes, time_s, throughput_bps (and repeats, min_s, variance_s2,
    cdv_pct where known)."""

    #: (rtt_ms, buffer) -> rows of NetPIPE's schedule.
    sched: dict[tuple[float, int], list[dict[str, Any]]] = field(default_factory=dict)
    #: (rtt_ms, buffer) -> figure 3's throughput (bit/s), the run's peak or its 64 KB block's
    #: (:data:`FIG3_MEASURE`).
    fig3: dict[tuple[float, int], float] = field(default_factory=dict)
    #: (rtt_ms, buffer) -> the throughput (bit/s) of the 64 KB block in figure 3's runs.
    fig3_block: dict[tuple[float, int], float] = field(default_factory=dict)
    #: ber -> one row per seed (figures 4-5's 8 KB block at RTT 400 ms).
    ber: dict[float, list[dict[str, Any]]] = field(default_factory=dict)


def netpipe_view(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row as NetPIPE reports it: the block transfer time is the best repeat's (NetPIPE prints
    the best of its trials; seed 003's Table 1 throughput is its bytes over that time), the
    throughput is at that time; the mean time and the throughput at it are kept as
    ``mean_s`` and ``mean_throughput_bps``; variance and %CDV are over all repeats. Rows without
    ``min_s`` (NPtcp's) are already NetPIPE's."""
    x = dict(row)
    if "min_s" in x and x.get("repeats", 1) and not math.isnan(float(x["min_s"])):
        x["mean_s"], x["mean_throughput_bps"] = x["time_s"], x["throughput_bps"]
        x["time_s"] = float(x["min_s"])
        x["throughput_bps"] = x["bytes"] * 8 / x["time_s"] if x["time_s"] > 0 else 0.0
    if int(x.get("repeats", 2)) < 2:
        x["cdv_pct"] = float("nan")  # no spread from one repeat
    return x


def sim_data(res: Mapping[str, Mapping[str, Any]]) -> Data:
    """Results by run key (``sched/...``, ``fig3/...``, ``ber/...``) as :class:`Data`, each row
    as NetPIPE reports it (:func:`netpipe_view`)."""
    d = Data()
    for key, r in res.items():
        kind, *parts = key.split("/")
        kv = dict(p.split("=") for p in parts)
        rows = [netpipe_view(x) for x in r["rows"]]
        if kind == "sched":
            d.sched[(float(kv["rtt"]), int(kv["buf"]))] = rows
        elif kind == "fig3":
            k = (float(kv["rtt"]), int(kv["buf"]))
            d.fig3_block[k] = block_throughput(rows, FIG3_BLOCK)
            d.fig3[k] = netpipe_peak(rows) if kv.get("m") == "peak" else d.fig3_block[k]
        elif kind == "ber":
            row = next((x for x in rows if x["bytes"] == BER_BLOCK), None)
            d.ber.setdefault(float(kv["ber"]), []).append(row or {"bytes": BER_BLOCK, "repeats": 0, "throughput_bps": 0.0, "cdv_pct": float("nan")})
    return d


def block_throughput(rows: Iterable[Mapping[str, Any]], nbytes: int) -> float:
    """The throughput of one block size (0 when it never finished: "next to nothing")."""
    for x in rows:
        if x["bytes"] == nbytes and x.get("repeats", 1):
            return float(x["throughput_bps"])
    return 0.0


def netpipe_groups(sizes: Sequence[int], perturbation: int = 3) -> list[int]:
    """The index of each size's group in NetPIPE's loop: a scheduled size and its perturbed
    neighbours (n - 3, n, n + 3 with ``-p 3``) are one group, and NetPIPE checks ``tlast <
    STOPTM`` only between groups. NetPIPE's schedule never has two sizes 3 bytes apart
    otherwise, so a step of exactly ``perturbation`` within a group of fewer than 3 continues it."""
    out: list[int] = []
    g, members, prev = -1, 0, None
    for n in sizes:
        if prev is not None and n - prev == perturbation and members < 3:
            members += 1
        else:
            g, members = g + 1, 1
        out.append(g)
        prev = n
    return out


def netpipe_stop(rows: Sequence[Mapping[str, Any]], stoptm: float = NETPIPE_STOPTM_S) -> list[Mapping[str, Any]]:
    """The rows NetPIPE would have measured: its main loop runs ``while tlast < STOPTM``, tlast
    being the last size's best time, so it ends after the first group (a size and its
    perturbations) in which a size took ``stoptm`` or more (NetPIPE 2.x ``netpipe.c``: ``n <
    NSAMP - 3 && tlast < STOPTM && len <= end``)."""
    groups = netpipe_groups([int(x["bytes"]) for x in rows])
    out: list[Mapping[str, Any]] = []
    for i, x in enumerate(rows):
        if i and groups[i] != groups[i - 1] and float(rows[i - 1]["time_s"]) >= stoptm:
            break
        out.append(x)
    return out


def netpipe_peak(rows: Sequence[Mapping[str, Any]]) -> float:
    """A NetPIPE run's peak throughput (bit/s) over the sizes it measured (:func:`netpipe_stop`):
    the one number NetPIPE users quote for a run; 0 without rows."""
    kept = [x for x in netpipe_stop(rows) if x.get("repeats", 1)]
    return max((float(x["throughput_bps"]) for x in kept), default=0.0)


def by_bytes(rows: Iterable[Mapping[str, Any]]) -> dict[int, Mapping[str, Any]]:
    return {int(x["bytes"]): x for x in rows}


# -- the statements -------------------------------------------------------------------------


@dataclass
class Check:
    id: str
    figure: str
    statement: str
    rule: str
    ours: str
    holds: bool
    value: float = float("nan")


def _mean(xs: Sequence[float]) -> float:
    xs = [x for x in xs if not math.isnan(x)]
    return sum(xs) / len(xs) if xs else float("nan")


def _fit_origin(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """Least-squares slope of y = a x and the fit's R² (against the mean of y)."""
    sxx = sum(x * x for x in xs)
    a = sum(x * y for x, y in zip(xs, ys, strict=True)) / sxx if sxx else float("nan")
    my = sum(ys) / len(ys)
    ss_tot = sum((y - my) ** 2 for y in ys)
    ss_res = sum((y - a * x) ** 2 for x, y in zip(xs, ys, strict=True))
    return a, (1 - ss_res / ss_tot) if ss_tot > 0 else float("nan")


def _slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx if sxx else float("nan")


def check_table1(rows: Sequence[Mapping[str, Any]]) -> list[Check]:
    """Table 1 (RTT 400 ms, 8 KB buffer). "About" a seed value is within two of the seed's own
    standard deviations (its variance column) of it."""
    out: list[Check] = []
    b = by_bytes(rows)
    if 1 in b:
        _, t, _, var = SEED_TABLE1[0]
        tol = 2 * math.sqrt(var)
        ours = float(b[1]["time_s"])
        out.append(Check("T1.1", "Table 1", "1 byte takes about 0.2045 s",
                         f"within 2 sd of the seed (sd from its variance {var:g} s²): {t - tol:.4f}-{t + tol:.4f} s",
                         f"{ours:.4f} s ({ours - t:+.4f} s)", abs(ours - t) <= tol, ours))
    if 24576 in b:
        _, t, mbps, var = SEED_TABLE1[-1]
        tol = 2 * math.sqrt(var)
        ours = float(b[24576]["time_s"])
        out.append(Check("T1.2", "Table 1", "24 KB take about 1.26 s",
                         f"within 2 sd of the seed's 1.257 s (variance {var:g} s²): {t - tol:.3f}-{t + tol:.3f} s",
                         f"{ours:.3f} s ({ours - t:+.3f} s)", abs(ours - t) <= tol, ours))
        lo, hi = 24576 * 8 / (t + tol) / NETPIPE_MBPS, 24576 * 8 / (t - tol) / NETPIPE_MBPS
        m = netpipe_mbps(float(b[24576]["throughput_bps"]))
        out.append(Check("T1.3", "Table 1", "24 KB at about 0.15 Mbps (NetPIPE Mbps, 2^20 bit/s)",
                         f"the throughput of the T1.2 time band: {lo:.3f}-{hi:.3f} Mbps",
                         f"{m:.3f} Mbps ({m - mbps:+.3f})", lo <= m <= hi, m))
    sizes = [s for s in TABLE1_SIZES if s in b]
    if len(sizes) >= 2 and 6144 in b and 8192 in b:
        ratios = {(p, q): float(b[q]["time_s"]) / float(b[p]["time_s"]) for p, q in zip(sizes, sizes[1:], strict=False)}
        (p, q), r = max(ratios.items(), key=lambda kv: kv[1])
        r68 = ratios.get((6144, 8192), float("nan"))
        out.append(Check("T1.4", "Table 1", "the jump in time comes between 6 KB and 8 KB blocks (seed: x2.04)",
                         "the largest ratio of consecutive Table 1 sizes' times is 8192 / 6144",
                         f"largest x{r:.2f} between {p} and {q}; 6144->8192 x{r68:.2f}", (p, q) == (6144, 8192), r))
    return out


def check_fig1(small: Sequence[Mapping[str, Any]], large: Sequence[Mapping[str, Any]]) -> list[Check]:
    """Figure 1: throughput against transfer time for the 8 KB and 64 KB buffers at 400 ms."""
    if not small or not large:
        return []
    s, lg = by_bytes(small), by_bytes(large)
    common = sorted(set(s) & set(lg))
    # The seed's noise at each Table 1 size below its crossing: "the same" is within two of
    # its relative standard deviations there.
    eq = []
    for n in TABLE1_SIZES:
        r = seed_row(n)
        if n in common and r and r[1] < SEED_CROSSING_S:
            tol = 2 * math.sqrt(r[3]) / r[1]
            ratio = float(lg[n]["throughput_bps"]) / float(s[n]["throughput_bps"])
            eq.append((n, ratio, tol))
    out: list[Check] = []
    if eq:
        worst = max(eq, key=lambda e: abs(e[1] - 1) - e[2])
        out.append(Check("F1.1", "Fig. 1", "at small transfer times (below 0.33 s) both buffers give the same throughput",
                         "at each Table 1 size the seed measured below 0.33 s, 64 KB / 8 KB throughput within 2 of the seed's relative sd there (1.0%-37%)",
                         "; ".join(f"{n} B: {r:.3f} (±{t:.1%})" for n, r, t in eq), all(abs(r - 1) <= t for _, r, t in eq), abs(worst[1] - 1)))
    beyond = [n for n in common if float(s[n]["time_s"]) > SEED_CROSSING_S]
    if beyond:
        ratios = {n: float(lg[n]["throughput_bps"]) / float(s[n]["throughput_bps"]) for n in beyond}
        lo = min(ratios.values())
        # Our crossing: the 8 KB buffer's transfer time of the last block where 64 KB is not ahead.
        ahead = [n for n in common if float(lg[n]["throughput_bps"]) > float(s[n]["throughput_bps"]) * 1.001]
        first = min(ahead) if ahead else None
        below = [n for n in common if first is None or n < first]
        cross = float(s[max(below)]["time_s"]) if below else float("nan")
        out.append(Check("F1.2", "Fig. 1", "beyond the crossing (0.33 s) the larger buffer gives more throughput",
                         "64 KB throughput > 8 KB throughput at every block whose 8 KB transfer time exceeds 0.33 s",
                         f"smallest ratio {lo:.2f} over {len(beyond)} blocks; ours cross after {cross:.3f} s", lo > 1, lo))
    return out


def check_fig2(sched: Mapping[tuple[float, int], Sequence[Mapping[str, Any]]], buffer: int = DEFAULT_BUFFER) -> list[Check]:
    """Figure 2: throughput against block size at each RTT (8 KB buffer)."""
    curves = {rtt: by_bytes(rows) for (rtt, b), rows in sched.items() if b == buffer and rows}
    rtts = sorted(curves)
    if len(rtts) < 2:
        return []
    common = sorted(set.intersection(*(set(c) for c in curves.values())))
    if len(common) < 2:
        return []
    peak = {r: max(float(curves[r][n]["throughput_bps"]) for n in common) for r in rtts}
    lo, hi = common[0], common[-1]
    slope = {r: (float(curves[r][hi]["throughput_bps"]) - float(curves[r][lo]["throughput_bps"])) / math.log2(hi / lo) for r in rtts}
    pairs = list(zip(rtts, rtts[1:], strict=False))
    return [
        Check("F2.1", "Fig. 2", "throughput is lower as the RTT grows",
              f"the peak throughput over the common blocks ({lo}-{hi} B) falls at each step of RTT",
              ", ".join(f"{r:g} ms: {netpipe_mbps(peak[r]):.3f}" for r in rtts) + " Mbps",
              all(peak[a] > peak[b] for a, b in pairs), min(peak[a] / peak[b] if peak[b] else math.inf for a, b in pairs)),
        Check("F2.2", "Fig. 2", "the curve is flatter as the RTT grows",
              f"the mean slope of throughput against log2(block) from {lo} to {hi} B falls at each step of RTT",
              ", ".join(f"{r:g} ms: {netpipe_mbps(slope[r]) * 1e3:.1f}" for r in rtts) + " kbit/s per doubling",
              all(slope[a] > slope[b] for a, b in pairs), min(slope[a] / slope[b] if slope[b] else math.inf for a, b in pairs)),
    ]


def check_fig3(fig3: Mapping[tuple[float, int], float]) -> list[Check]:
    """Figure 3: throughput of a 64 KB block against the socket buffer at 100, 400, 600 ms."""
    out: list[Check] = []

    def curve(rtt: float) -> list[tuple[float, float]]:
        return sorted((b / 1024, netpipe_mbps(t)) for (r, b), t in fig3.items() if r == rtt)

    c600 = curve(600.0)
    if len(c600) >= 3:
        a, r2 = _fit_origin([x for x, _ in c600], [y for _, y in c600])
        out.append(Check("F3.1", "Fig. 3", "at RTT 600 ms throughput grows linearly with the buffer",
                         "R² of the line y = a x through the points >= 0.99", f"R² {r2:.4f}", r2 >= 0.99, r2))
        out.append(Check("F3.2", "Fig. 3", "at RTT 600 ms the line is y = 0.0125 x (Mbps, KB): buffer / RTT",
                         f"slope within {SLOPE_TOL:.1%} of 0.0125 (the gap between the seed's slope and its own formula 8/600 = 0.0133)",
                         f"{a:.5f} Mbps per KB ({a / SEED_SLOPE_600 - 1:+.1%}); buffer/RTT {8 * 1024 / 0.6 / NETPIPE_MBPS:.5f}",
                         abs(a / SEED_SLOPE_600 - 1) <= SLOPE_TOL, a))
    # A point of no throughput (a kernel run that finished no repeat) is no reference to divide by.
    c100 = {kb: t for kb, t in curve(100.0) if t > 0}
    if 32 in c100 and 64 in c100:
        r = c100[64] / c100[32]
        c6 = dict(c600)
        contrast = f"; at 600 ms x{c6[64] / c6[32]:.2f}" if 32 in c6 and 64 in c6 and c6[32] else ""
        out.append(Check("F3.3", "Fig. 3", "at short RTTs (100 ms) throughput saturates: nearly constant beyond a 32 KB buffer",
                         "throughput at 64 KB within 10% of that at 32 KB (either way), RTT 100 ms",
                         f"64 KB / 32 KB x{r:.3f}{contrast}", abs(r - 1) <= 0.10, r))
    c400 = curve(400.0)
    if len(c400) >= 3 and 64 in c100:
        _, r2 = _fit_origin([x for x, _ in c400], [y for _, y in c400])
        j = dict(c400).get(64, float("nan")) / c100[64]
        out.append(Check("F3.4", "Fig. 3", "at RTT 400 ms throughput grows quite linearly and joins the 100 ms curve at 64 KB",
                         "R² of y = a x >= 0.99 and throughput at 64 KB within 10% of the 100 ms curve's",
                         f"R² {r2:.4f}; 400 ms / 100 ms at 64 KB {j:.2f}", r2 >= 0.99 and abs(j - 1) <= 0.10, j))
    return out


def ber_summary(ber: Mapping[float, Sequence[Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """Figures 4-5 per BER: mean, min and max over the seeds of throughput and %CDV."""
    out = []
    for b in sorted(ber):
        rows = ber[b]
        t = [float(x["throughput_bps"]) for x in rows]
        c = [float(x.get("cdv_pct", float("nan"))) for x in rows]
        c_ok = [x for x in c if not math.isnan(x)]
        out.append({"ber": b, "seeds": len(rows), "throughput_bps": _mean(t), "throughput_min_bps": min(t), "throughput_max_bps": max(t),
                    "cdv_pct": _mean(c), "cdv_min_pct": min(c_ok) if c_ok else float("nan"), "cdv_max_pct": max(c_ok) if c_ok else float("nan"),
                    "repeats_done": sum(int(x.get("repeats", 0)) for x in rows)})
    return out


def _at(values: Mapping[float, float], bers: Sequence[float]) -> dict[float, float] | None:
    """``values`` at exactly these BERs (keys compared in log10 to 1e-6), or None if one is missing."""
    out = {}
    for n in bers:
        hit = [b for b in values if b > 0 and abs(math.log10(b) - math.log10(n)) < 1e-6]
        if not hit:
            return None
        out[n] = values[hit[0]]
    return out


def check_fig4(ber: Mapping[float, Sequence[Mapping[str, Any]]]) -> list[Check]:
    """Figure 4: throughput against BER, RTT 400 ms (mean over seeds)."""
    t = _at({x["ber"]: x["throughput_bps"] for x in ber_summary(ber)}, (1e-12, 1e-6, 1e-4))
    if t is None or t[1e-12] <= 0:  # no error-free throughput to compare with (no repeat finished)
        return []
    base = t[1e-12]
    before = (base - t[1e-6]) / 6
    after = (t[1e-6] - t[1e-4]) / 2
    return [
        Check("F4.1", "Fig. 4", "a gradual decline of throughput up to BER 1e-6",
              "throughput at 1e-6 >= half of that at 1e-12 (our reading of 'gradual')",
              f"{t[1e-6] / base:.2f} of 1e-12's ({netpipe_mbps(t[1e-6]):.3f} vs {netpipe_mbps(base):.3f} Mbps)", t[1e-6] >= 0.5 * base, t[1e-6] / base),
        Check("F4.2", "Fig. 4", "a much steeper decline from 1e-6 to 1e-4",
              "loss of throughput per decade of BER over 1e-6..1e-4 > over 1e-12..1e-6",
              f"{netpipe_mbps(after) * 1e3:.2f} vs {netpipe_mbps(before) * 1e3:.2f} kbit/s per decade", after > before,
              after / before if before > 0 else math.inf),
        Check("F4.3", "Fig. 4", "throughput disappears at BER 1e-4",
              "throughput at 1e-4 <= 10% of that at 1e-12 (our reading of 'next to nothing')",
              f"{t[1e-4] / base:.3f} of 1e-12's", t[1e-4] <= 0.10 * base, t[1e-4] / base),
    ]


def check_fig5(ber: Mapping[float, Sequence[Mapping[str, Any]]]) -> list[Check]:
    """Figure 5: %CDV against BER, RTT 400 ms (mean over seeds)."""
    c = {x["ber"]: x["cdv_pct"] for x in ber_summary(ber) if not math.isnan(x["cdv_pct"])}
    at = _at(c, (1e-8, 1e-5, 1e-4))
    if at is None:
        return []
    keys = sorted(c)
    small = [b for b in keys if b <= 1e-8 * 1.000001]
    limit = seed_cdv_pct(BER_BLOCK)
    mid = [b for b in keys if 1e-8 * 0.999999 <= b <= 1e-5 * 1.000001]
    slope_mid = _slope([math.log10(b) for b in mid], [c[b] for b in mid]) if len(mid) >= 2 else float("nan")
    slope_hi = at[1e-4] - at[1e-5]
    return [
        Check("F5.1", "Fig. 5", "%CDV is small for BER up to 1e-8",
              f"%CDV <= {limit:.1f}% (the seed's own %CDV of an {BER_BLOCK}-byte block at 1e-12, Table 1) at every BER <= 1e-8",
              ", ".join(f"{b:g}: {c[b]:.2f}%" for b in small), all(c[b] <= limit for b in small), max(c[b] for b in small)),
        Check("F5.2", "Fig. 5", "%CDV rises from 1e-8 to 1e-5",
              "%CDV at 1e-5 > at 1e-8, and a positive least-squares slope against log10(BER) over 1e-8..1e-5",
              f"{at[1e-8]:.2f}% -> {at[1e-5]:.2f}%, slope {slope_mid:.2f} points per decade",
              at[1e-5] > at[1e-8] and slope_mid > 0, slope_mid),
        Check("F5.3", "Fig. 5", "%CDV rises steeply from 1e-5 to 1e-4",
              "the rise over the decade 1e-5..1e-4 > the slope per decade over 1e-8..1e-5",
              f"{slope_hi:.2f} vs {slope_mid:.2f} points per decade", slope_hi > slope_mid, slope_hi),
    ]


def analyse(d: Data) -> list[Check]:
    """Every statement of the seed that ``d`` has the data for."""
    out: list[Check] = []
    t1 = d.sched.get((GEO_RTT_MS, DEFAULT_BUFFER), [])
    out += check_table1(t1)
    out += check_fig1(t1, d.sched.get((GEO_RTT_MS, LARGE_BUFFER), []))
    out += check_fig2(d.sched)
    out += check_fig3(d.fig3)
    out += check_fig4(d.ber)
    out += check_fig5(d.ber)
    return out


# -- the kernel's TCP through `sattcp emulate` (--real) ---------------------------------------


@dataclass(frozen=True)
class RealRun:
    """One emulation: NPtcp's schedule (``kind="nptcp"``) or the ping-pong of one block with every
    repeat kept (``kind="pingpong"``), the kernel's congestion control ``cc``."""

    key: str
    kind: str
    cc: str
    rtt_ms: float
    buffer: int
    ber: float = 0.0
    seed: int = 1
    lower: int = 1
    upper: int = 24576
    #: The ping-pong's block and repeats.
    block: int = BER_BLOCK
    repeats: int = 10
    deadline_s: float = 600.0
    #: SCHED_FIFO priority of both endpoints (``--rt-priority``), None: ordinary processes.
    rt_priority: int | None = None


#: NPtcp's perturbation in our runs: none (NetPIPE's +-3 bytes triple the number of sizes and
#: with them the run time; the sizes themselves are NetPIPE's schedule).
NPTCP_PERTURBATION = 0
#: NPtcp's round trips per trial (``-n``); its time is the best of its 7 trials (TRIALS).
#: Without ``-n`` NPtcp 3.7 sizes its repeats for a LAN (``RUNTM`` / latency): 7 sizes at RTT
#: 100 ms took over 500 s, against 14 s with ``-n 1`` (measured here). One round trip per
#: trial, as the simulator's ping-pong (docs/netpipe.md, "Why repeats = 7").
NPTCP_REPEATS = 1

_LIVE: set[Any] = set()
_LIVE_LOCK = threading.Lock()


def real_plan(quick: bool = False, rt_priority: int | None = None) -> list[RealRun]:
    """The kernel's runs. NPtcp for Table 1 and figures 1-2 (its schedule from 1 byte); our
    ping-pong for figure 3 (one 64 KB block: NPtcp first times 100 round trips of its smallest
    block, over 15 minutes for 64 KB at 600 ms with an 8 KB buffer) and figures 4-5 (every
    repeat kept, for %CDV).

    Quick (a few minutes): 400 ms with cubic (8 and 64 KB buffers) and reno (8 KB) up to
    24 KB, figure 2 at 20 and 100 ms, figure 3 at 100 ms (32, 64 KB) and 600 ms (8, 32, 64 KB),
    figures 4-5 at five BERs, one seed. Full: reno, cubic and bbr at 400 ms up to 64 KB, cubic
    at every RTT of figure 2, figure 3 at 8/16/32/48/64 KB, nine BERs x three seeds.
    ``rt_priority``: every run's endpoints at that SCHED_FIFO priority (``--rt-priority``)."""
    runs: list[RealRun] = []
    upper = 24576 if quick else 65536

    def sched(cc: str, rtt: float, buf: int) -> None:
        runs.append(RealRun(f"{cc}/{sched_key(rtt, buf)}", "nptcp", cc, rtt, buf, upper=upper))

    for cc in ("cubic", "reno") if quick else ("cubic", "reno", "bbr"):
        sched(cc, GEO_RTT_MS, DEFAULT_BUFFER)
        if cc == "cubic" or not quick:
            sched(cc, GEO_RTT_MS, LARGE_BUFFER)
    for rtt in (20.0, 100.0) if quick else tuple(r for r in RTTS_MS if r != GEO_RTT_MS):
        sched("cubic", rtt, DEFAULT_BUFFER)
    grid = ((100.0, (32768, 65536)), (600.0, (8192, 32768, 65536))) if quick else \
        tuple((r, tuple(k * 1024 for k in (8, 16, 32, 48, 64))) for r in FIG3_RTTS_MS)
    for rtt, bufs in grid:
        for b in bufs:
            runs.append(RealRun(f"cubic/fig3/rtt={rtt:g}/buf={b}", "pingpong", "cubic", rtt, b, block=FIG3_BLOCK,
                                repeats=3, deadline_s=300.0 if quick else 900.0))
    bers = (1e-12, 1e-8, 1e-6, 1e-5, 1e-4) if quick else BERS
    for ber in bers:
        for s in (1,) if quick else (1, 2, 3):
            runs.append(RealRun(f"cubic/{ber_key(ber, s)}", "pingpong", "cubic", GEO_RTT_MS, DEFAULT_BUFFER, ber=ber, seed=s,
                                repeats=5 if quick else 20, deadline_s=150.0 if quick else 900.0))
    return [replace(r, rt_priority=rt_priority) for r in runs] if rt_priority is not None else runs


def real_missing() -> list[str]:
    """What ``--real`` lacks on this machine, in words ([] when nothing)."""
    import shutil

    from .emulate import EmulateError, find_binary, missing_privileges

    missing = list(missing_privileges())
    try:
        find_binary()
    except EmulateError as e:
        missing.append(str(e))
    if shutil.which("NPtcp") is None:
        missing.append("NPtcp (Debian's netpipe-tcp: apt-get install netpipe-tcp)")
    return missing


def _real_one(run: RealRun) -> tuple[str, dict[str, Any]]:
    from .emulate import Emulation
    from .netpipe import run_nptcp, run_pingpong

    overrides = {"emulate.cc": run.cc, "emulate.delay": f"{rtt_one_way_ms(run.rtt_ms):g}ms", "emulate.ber": repr(float(run.ber)),
                 "emulate.seed": str(run.seed)}
    t0 = time.monotonic()
    with Emulation(EMU_SCENARIO, overrides) as em:
        with _LIVE_LOCK:
            _LIVE.add(em)
        try:
            if run.kind == "nptcp":
                rows = run_nptcp(em, buffer=run.buffer, upper=run.upper, lower=run.lower, perturbation=NPTCP_PERTURBATION,
                                 extra=["-n", str(NPTCP_REPEATS)], rt_priority=run.rt_priority)
            else:
                rows = [run_pingpong(em, run.block, run.repeats, buffer=run.buffer, deadline_s=run.deadline_s,
                                     rt_priority=run.rt_priority)]
        finally:
            with _LIVE_LOCK:
                _LIVE.discard(em)
    return run.key, {"rows": rows, "stats": em.stats, "wall_s": time.monotonic() - t0}


def execute_real(runs: Sequence[RealRun], jobs: int, progress: Callable[[int, int], None] | None = None,
                 one: Callable[[RealRun], tuple[str, dict[str, Any]]] = _real_one) -> dict[str, dict[str, Any]]:
    """Runs the emulations, ``jobs`` at a time (each mostly waits on its link); results by key.
    A run that fails is reported and left out."""
    out: dict[str, dict[str, Any]] = {}
    done = 0

    def wrapped(r: RealRun) -> tuple[str, dict[str, Any] | None]:
        try:
            return one(r)
        except Exception as e:  # one failed emulation should not lose the others
            print(f"netpipe-sat --real: {r.key} failed: {e}", file=sys.stderr)
            return r.key, None

    # The longest runs (long RTTs) first, so they overlap the short ones.
    order = sorted(runs, key=lambda r: -r.rtt_ms)

    def on_sigterm(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    main = threading.current_thread() is threading.main_thread()
    old = signal.signal(signal.SIGTERM, on_sigterm) if main else None
    ex = ThreadPoolExecutor(max_workers=max(1, jobs))
    try:
        for key, res in ex.map(wrapped, order):
            done += 1
            if res is not None:
                out[key] = res
            if progress:
                progress(done, len(runs))
    except BaseException:
        # Ctrl-C or SIGTERM: tear every emulation down now (their runs then fail and end).
        ex.shutdown(wait=False, cancel_futures=True)
        with _LIVE_LOCK:
            live = list(_LIVE)
        for em in live:
            em.close()
        raise
    finally:
        ex.shutdown(wait=True)
        if main:
            signal.signal(signal.SIGTERM, old)
    return out


def kernel_data(res: Mapping[str, Mapping[str, Any]]) -> dict[str, Data]:
    """The kernel's results per congestion control, in the shape the checks read."""
    by_cc: dict[str, dict[str, Any]] = {}
    for key, r in res.items():
        cc, rest = key.split("/", 1)
        by_cc.setdefault(cc, {})[rest] = r
    return {cc: sim_data(rs) for cc, rs in by_cc.items()}


# -- figures, tables and the report -----------------------------------------------------------

SIM_STYLE = {"ls": "-", "marker": "o", "ms": 3}
KERNEL_STYLE = {"ls": "--", "marker": "x", "ms": 4}
SEED_STYLE = {"ls": "none", "marker": "s", "ms": 5, "color": "black", "mfc": "none"}


def _mbps_rows(rows: Sequence[Mapping[str, Any]]) -> tuple[list[int], list[float], list[float]]:
    rows = sorted(rows, key=lambda x: x["bytes"])
    return [int(x["bytes"]) for x in rows], [float(x["time_s"]) for x in rows], [netpipe_mbps(float(x["throughput_bps"])) for x in rows]


def figures(sim: Data, kernel: Mapping[str, Data], out: Path) -> list[tuple[str, str, bytes]]:
    """The five figures (sim solid, kernel dashed, the seed's Table 1 as squares); written as
    out/figures/NAME.png/.svg; returns (name, caption, png)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .plots import save

    k = kernel.get("cubic")
    figs: list[tuple[str, str, bytes]] = []

    def done(fig: Any, name: str, caption: str) -> None:
        png = save(fig, out / "figures" / name, ("png", "svg"))
        plt.close(fig)
        figs.append((name, caption, png))

    # Figure 1.
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for buf, colour in ((DEFAULT_BUFFER, "C0"), (LARGE_BUFFER, "C3")):
        rows = sim.sched.get((GEO_RTT_MS, buf))
        if rows:
            _, t, m = _mbps_rows(rows)
            ax.plot(t, m, color=colour, label=f"sim, {buf // 1024} KB buffer", **SIM_STYLE)
        if k and k.sched.get((GEO_RTT_MS, buf)):
            _, t, m = _mbps_rows(k.sched[(GEO_RTT_MS, buf)])
            ax.plot(t, m, color=colour, label=f"kernel cubic, {buf // 1024} KB", **KERNEL_STYLE)
    ax.plot([r[1] for r in SEED_TABLE1], [r[2] for r in SEED_TABLE1], label="seed Table 1 (8 KB)", **SEED_STYLE)
    ax.axvline(SEED_CROSSING_S, color="grey", ls=":", lw=1)
    ax.set(xscale="log", xlabel="block transfer time (s)", ylabel="throughput (NetPIPE Mbps, 2^20 bit/s)",
           title="Fig. 1: network signature graph, RTT 400 ms")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    done(fig, "fig1_signature", "Figure 1: throughput against block transfer time, 8 KB and 64 KB socket buffers, RTT 400 ms (dotted: the seed's crossing, 0.33 s)")

    # Figure 2.
    fig, ax = plt.subplots(figsize=(7, 4.2))
    rtts = sorted({r for (r, b) in sim.sched if b == DEFAULT_BUFFER})
    for i, rtt in enumerate(rtts):
        n, _, m = _mbps_rows(sim.sched[(rtt, DEFAULT_BUFFER)])
        ax.plot(n, m, color=f"C{i}", label=f"sim {rtt:g} ms", **SIM_STYLE)
        if k and k.sched.get((rtt, DEFAULT_BUFFER)):
            n, _, m = _mbps_rows(k.sched[(rtt, DEFAULT_BUFFER)])
            ax.plot(n, m, color=f"C{i}", label=f"kernel {rtt:g} ms", **KERNEL_STYLE)
    ax.plot(TABLE1_SIZES, [r[2] for r in SEED_TABLE1], label="seed Table 1 (400 ms)", **SEED_STYLE)
    ax.set(xscale="log", xlabel="block size (bytes)", ylabel="throughput (NetPIPE Mbps)", title="Fig. 2: throughput against block size, 8 KB buffer")
    ax.legend(fontsize=7, ncol=2)
    ax.grid(alpha=0.3)
    done(fig, "fig2_rtt", "Figure 2: throughput against block size at each RTT, default (8 KB) socket buffer")

    # Figure 3.
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for i, rtt in enumerate(FIG3_RTTS_MS):
        pts = sorted((b / 1024, netpipe_mbps(t)) for (r, b), t in sim.fig3.items() if r == rtt)
        if pts:
            ax.plot(*zip(*pts, strict=True), color=f"C{i}", label=f"sim {rtt:g} ms", **SIM_STYLE)
        if k:
            pts = sorted((b / 1024, netpipe_mbps(t)) for (r, b), t in k.fig3.items() if r == rtt)
            if pts:
                ax.plot(*zip(*pts, strict=True), color=f"C{i}", label=f"kernel {rtt:g} ms", **KERNEL_STYLE)
    xs = [8, 64]
    ax.plot(xs, [SEED_SLOPE_600 * x for x in xs], color="black", ls=":", label="seed: y = 0.0125 x (600 ms)")
    ax.set(xlabel="socket buffer (KB)", ylabel="throughput (NetPIPE Mbps)", title="Fig. 3: throughput against socket buffer")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    done(fig, "fig3_buffer", "Figure 3: throughput against the socket buffer at RTT 100, 400, 600 ms (simulator: "
         + ("the peak of a NetPIPE run to 64 KB blocks stopped at STOPTM" if FIG3_MEASURE == "peak" else "a 64 KB block")
         + "; kernel: a 64 KB block)")

    # Figures 4 and 5.
    for name, col, lo, hi, ylabel, title in (
            ("fig4_ber_throughput", "throughput_bps", "throughput_min_bps", "throughput_max_bps", "throughput (NetPIPE Mbps)", "Fig. 4: throughput against BER, RTT 400 ms"),
            ("fig5_ber_cdv", "cdv_pct", "cdv_min_pct", "cdv_max_pct", "%CDV (sd / mean x 100)", "Fig. 5: %CDV against BER, RTT 400 ms")):
        fig, ax = plt.subplots(figsize=(7, 4.2))
        scale = netpipe_mbps(1) if col == "throughput_bps" else 1.0
        for data, label, style, colour in ((sim, "sim", SIM_STYLE, "C0"), (k, "kernel cubic", KERNEL_STYLE, "C3")):
            if not data or not data.ber:
                continue
            summ = ber_summary(data.ber)
            x = [s["ber"] for s in summ]
            y = [s[col] * scale for s in summ]
            err = [[max(0.0, (s[col] - s[lo]) * scale) for s in summ], [max(0.0, (s[hi] - s[col]) * scale) for s in summ]]
            ax.errorbar(x, y, yerr=err, color=colour, label=f"{label} (mean, min-max over seeds)", capsize=3, **style)
        if col == "cdv_pct":
            ax.axhline(seed_cdv_pct(BER_BLOCK), color="grey", ls=":", label=f"seed Table 1 %CDV of {BER_BLOCK} B at 1e-12")
        ax.set(xscale="log", xlabel="bit error rate", ylabel=ylabel, title=f"{title}, {BER_BLOCK}-byte block, 8 KB buffer")
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
        done(fig, name, title + f" ({BER_BLOCK}-byte block, 8 KB buffer); bars: the spread over seeds")
    return figs


def table1_rows(sim: Data, kernel: Mapping[str, Data]) -> list[dict[str, Any]]:
    """Table 1 side by side: the seed's, ours, and the kernel's (NPtcp's best time)."""
    s = by_bytes(sim.sched.get((GEO_RTT_MS, DEFAULT_BUFFER), []))
    ks = {cc: by_bytes(d.sched.get((GEO_RTT_MS, DEFAULT_BUFFER), [])) for cc, d in sorted(kernel.items())}
    rows = []
    for n, t, mbps, var in SEED_TABLE1:
        row: dict[str, Any] = {"bytes": n, "seed_time_s": t, "seed_mbps": mbps, "seed_variance_s2": var}
        x = s.get(n)
        row["sim_time_s"] = float(x["time_s"]) if x else None
        row["sim_mbps"] = netpipe_mbps(float(x["throughput_bps"])) if x else None
        row["sim_variance_s2"] = float(x["variance_s2"]) if x and "variance_s2" in x else None
        for cc, kb in ks.items():
            y = kb.get(n)
            row[f"{cc}_time_s"] = float(y["time_s"]) if y else None
            row[f"{cc}_mbps"] = netpipe_mbps(float(y["throughput_bps"])) if y else None
        rows.append(row)
    return rows


def _write_csv(path: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    cols: list[str] = []
    for r in rows:
        cols += [c for c in r if c not in cols]
    f = io.StringIO(newline="")
    w = csv.DictWriter(f, fieldnames=cols)
    w.writeheader()
    w.writerows(rows)
    write_whole(path, f.getvalue())


def data_rows(stack: str, d: Data) -> dict[str, list[dict[str, Any]]]:
    """Every figure's data as rows (one CSV per figure)."""
    sched = [{"stack": stack, "rtt_ms": r, "buffer": b, **x} for (r, b), rows in sorted(d.sched.items()) for x in rows]
    return {
        "fig1": [x for x in sched if x["rtt_ms"] == GEO_RTT_MS],
        "fig2": [x for x in sched if x["buffer"] == DEFAULT_BUFFER],
        "fig3": [{"stack": stack, "rtt_ms": r, "buffer": b, "throughput_bps": t, "netpipe_mbps": netpipe_mbps(t),
                  "block_throughput_bps": d.fig3_block.get((r, b), float("nan"))}
                 for (r, b), t in sorted(d.fig3.items())],
        "fig4_5_runs": [{"stack": stack, "ber": b, "seed_index": i, **x} for b, rows in sorted(d.ber.items()) for i, x in enumerate(rows)],
        "fig4_5": [{"stack": stack, **x} for x in ber_summary(d.ber)],
    }


def _html_table(rows: Sequence[Mapping[str, Any]]) -> str:
    if not rows:
        return "<p>(none)</p>"
    cols: list[str] = []
    for r in rows:
        cols += [c for c in r if c not in cols]

    def fmt(v: Any) -> str:
        if isinstance(v, float):
            return "–" if math.isnan(v) else f"{v:.4g}"
        return "–" if v is None else html.escape(str(v))

    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{fmt(r.get(c))}</td>" for c in cols) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _verdict(c: Check | None) -> str:
    if c is None:
        return "<td>–</td><td>no data</td>"
    v = '<span class="pass">PASS</span>' if c.holds else '<span class="fail">FAIL</span>'
    return f"<td style='text-align:left'>{html.escape(c.ours)}</td><td>{v}</td>"


def report(sim: Data, checks: Sequence[Check], out: Path, kernel: Mapping[str, Data] | None = None,
           kernel_checks: Mapping[str, Sequence[Check]] | None = None, accuracy: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
           notes: Sequence[str] = ()) -> Path:
    """Writes the figures, the CSV files, then out/report.html; returns the report's path. Each
    file is written whole or not at all, and the old report goes first: a failure leaves no
    report that looks complete (:mod:`sattcp.paths`)."""
    kernel = dict(kernel or {})
    kernel_checks = dict(kernel_checks or {})
    path = start_report(out)  # the analysis stood: the old report goes before its figures
    figs = figures(sim, kernel, out)
    t1 = table1_rows(sim, kernel)
    _write_csv(out / "table1.csv", t1)
    tables: dict[str, list[dict[str, Any]]] = {}
    for stack, d in [("sim", sim), *((f"kernel-{cc}", kd) for cc, kd in sorted(kernel.items()))]:
        for name, rows in data_rows(stack, d).items():
            tables.setdefault(name, []).extend(rows)
    for name, rows in tables.items():
        if rows:
            _write_csv(out / f"{name}.csv", rows)
    ccs = sorted(kernel_checks)
    check_rows = []
    for c in checks:
        row = {"id": c.id, "figure": c.figure, "statement": c.statement, "rule": c.rule, "sim": c.ours, "sim_holds": c.holds, "sim_value": c.value}
        for cc in ccs:
            kc = next((x for x in kernel_checks[cc] if x.id == c.id), None)
            row[f"kernel_{cc}"] = kc.ours if kc else None
            row[f"kernel_{cc}_holds"] = kc.holds if kc else None
        check_rows.append(row)
    _write_csv(out / "checks.csv", check_rows)
    for name, rows in (accuracy or {}).items():
        if rows:
            _write_csv(out / f"accuracy_{name}.csv", list(rows))

    held = sum(c.holds for c in checks)
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>sattcp: seed 003 (NetPIPE over satellite) reproduced</title><style>",
        "body{font-family:sans-serif;max-width:1200px;margin:2em auto;color:#222}table{border-collapse:collapse;margin:.5em 0}"
        "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right;vertical-align:top}th{background:#f0f0f0}"
        ".pass{color:#176117;font-weight:bold}.fail{color:#a11;font-weight:bold}img{max-width:100%}",
        "</style></head><body>",
        "<h1>TCP over an E1 ATM satellite path with NetPIPE (seed 003), reproduced by sattcp</h1>",
        f"<p>Simulator: {held} of {len(checks)} statements of the seed hold on our runs."
        + "".join(f" Kernel {cc}: {sum(x.holds for x in kernel_checks[cc])} of {len(kernel_checks[cc])} checked." for cc in ccs) + "</p>",
        *(f"<p>{html.escape(n)}</p>" for n in notes),
        "<p>Throughput is in NetPIPE's Mbps (2^20 bit/s), as the seed's Table 1. The rule of each check is beside it; "
        "the model, the choices and where we differ: docs/netpipe-sat.md, docs/netpipe.md, docs/emulate.md.</p>",
        "<h2>The seed's statements</h2><table><thead><tr><th>id</th><th>fig.</th><th>statement</th><th>rule</th><th>simulator</th><th></th>"
        + "".join(f"<th>kernel {cc}</th><th></th>" for cc in ccs) + "</tr></thead><tbody>",
    ]
    for c in checks:
        parts.append(f"<tr><td>{c.id}</td><td>{html.escape(c.figure)}</td><td style='text-align:left'>{html.escape(c.statement)}</td>"
                     f"<td style='text-align:left'>{html.escape(c.rule)}</td>{_verdict(c)}"
                     + "".join(_verdict(next((x for x in kernel_checks[cc] if x.id == c.id), None)) for cc in ccs) + "</tr>")
    parts.append("</tbody></table>")
    parts.append("<h2>Table 1: RTT 400 ms, 8 KB socket buffer</h2>" + _html_table(t1))
    parts.append("<h2>Figures</h2>")
    for name, caption, png in figs:
        parts.append(f"<figure><img alt='{html.escape(caption)}' src='data:image/png;base64,{base64.b64encode(png).decode()}'>"
                     f"<figcaption>{html.escape(caption)} (figures/{name}.png/.svg)</figcaption></figure>")
    parts.append("<h2>Figures 4-5 per BER</h2>" + _html_table(tables.get("fig4_5", [])))
    parts.append("<h2>Figure 3</h2>" + _html_table(tables.get("fig3", [])))
    if accuracy:
        parts.append("<h2>The emulator's accuracy on this link</h2>")
        for name, rows in accuracy.items():
            parts.append(f"<h3>{html.escape(name)}</h3>" + _html_table(list(rows)))
    parts.append("<p>Data: table1.csv, checks.csv, fig1.csv, fig2.csv, fig3.csv, fig4_5.csv, fig4_5_runs.csv"
                 + (", accuracy_*.csv" if accuracy else "") + "; figures/*.png/.svg.</p></body></html>")
    return write_whole(path, "\n".join(parts))


@dataclass
class Reproduction:
    """What :func:`reproduce` made: the report, the data and the checks of each stack."""

    path: Path
    sim: Data
    checks: list[Check]
    kernel: dict[str, Data] = field(default_factory=dict)
    kernel_checks: dict[str, list[Check]] = field(default_factory=dict)
    accuracy: dict[str, list[dict[str, Any]]] | None = None


def reproduce(out: Path, quick: bool = False, real: bool = False, jobs: int | None = None, progress: bool = True,
              one: Callable[[Run], tuple[str, dict[str, Any]]] = _one, rt_priority: int | None = None) -> Reproduction:
    """Runs seed 003's experiments (and with ``real`` the kernel's, their endpoints at SCHED_FIFO
    ``rt_priority`` if given) and writes ``out/report.html``. ``one`` runs one simulator run (a
    stand-in for tests)."""
    t0 = time.perf_counter()

    def show(what: str) -> Callable[[int, int], None]:
        def f(i: int, n: int) -> None:
            if progress:
                print(f"\rnetpipe-sat {what}: {i}/{n} runs, {time.perf_counter() - t0:.0f} s", end="" if i < n else "\n",
                      file=sys.stderr, flush=True)
        return f

    runs = plan(quick)
    res = execute(runs, jobs, show("simulator"), one=one)
    sim = sim_data(res)
    checks = analyse(sim)
    notes = [f"{len(runs)} simulator runs ({'quick variant: RTTs 1/20/100/400/600 ms, blocks to 32 KB without perturbation, 4 buffers, 7 BERs x 2 seeds' if quick else 'full grid'}) in {time.perf_counter() - t0:.0f} s."]
    warned = sorted({w for r in res.values() for w in r.get("warnings", [])})
    if warned:
        notes.append("Simulator warnings: " + "; ".join(str(w) for w in warned[:5]))
    kernel: dict[str, Data] = {}
    kchecks: dict[str, list[Check]] = {}
    acc = None
    if real:
        from .netpipe import accuracy

        t1 = time.perf_counter()
        acc = accuracy(quick=True)
        t2 = time.perf_counter()
        rruns = real_plan(quick, rt_priority)
        kres = execute_real(rruns, jobs=max(jobs or 0, 8), progress=show("kernel"))
        kernel = kernel_data(kres)
        kchecks = {cc: analyse(d) for cc, d in kernel.items()}
        failed = len(rruns) - len(kres)
        notes.append(f"Kernel: {len(kres)} of {len(rruns)} emulations through sattcp emulate (NPtcp {NPTCP_PERTURBATION and '+-3' or 'without perturbation'}, "
                     f"time = NPtcp's best trial; figures 4-5: our ping-pong, every repeat; endpoints "
                     f"{f'at SCHED_FIFO priority {rt_priority}' if rt_priority is not None else 'as ordinary processes'}) in {time.perf_counter() - t2:.0f} s"
                     f"{f', {failed} failed (see stderr)' if failed else ''}; the emulator's accuracy measured first in {t2 - t1:.0f} s.")
    path = report(sim, checks, out, kernel, kchecks, acc, notes)
    return Reproduction(path, sim, checks, kernel, kchecks, acc)


def cmd_reproduce(args: Any) -> int:
    """``sattcp reproduce netpipe-sat`` (cli_study): 0, or 2 when ``--real`` cannot run here."""
    if args.real:
        missing = real_missing()
        if missing:
            print("sattcp reproduce netpipe-sat --real: cannot run the kernel's side: needs " + "; ".join(missing)
                  + " (without --real, the simulator's side runs anywhere)", file=sys.stderr)
            return 2
    out = Path(args.out or Path("out") / ("netpipe-sat" + ("-real" if args.real else "") + ("-quick" if args.quick else "")))
    check_folder(out, "--out")  # the default folder too, before the runs
    r = reproduce(out, quick=args.quick, real=args.real, jobs=args.jobs, progress=not args.no_progress, rt_priority=args.rt_priority)
    print(f"simulator: {sum(c.holds for c in r.checks)} of {len(r.checks)} statements of seed 003 hold")
    for cc, cs in sorted(r.kernel_checks.items()):
        print(f"kernel {cc}: {sum(c.holds for c in cs)} of {len(cs)} checked statements hold")
    print(f"report: {r.path}")
    return 0
