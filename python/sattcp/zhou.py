"""Seed 004 (Zhou, Liu, Baras, "Flow control at satellite gateways", 2002), reproduced:
``sattcp reproduce zhou-sgw [--quick]`` runs the experiments of its section V and writes an
HTML report with its figures redrawn from our runs and each of its statements checked.

Every run is a scenario of ``topology.kind = "gateway"`` (docs/gateway.md) built here from the
seed's parameters; nothing is fitted to the seed's figures. The checks and the tolerances they
use are written beside each statement in the report.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .paths import start_report, write_whole

MSS = 512
SEG_WIRE = MSS + 40
#: Seed 004 §V.A: one connection.
SAT_RATE_1, TERR_RATE_1, SAT_RTT, TERR_RTT_1 = 600e3, 1.2e6, 0.5, 0.08
#: Seed 004 §V.B: five connections.
SAT_RATE_5, TERR_RATE_5 = 3e6, 2e6
TERR_RTTS_5 = (0.002, 0.02, 0.04, 0.08, 0.16)
PEAK_5 = "900kbps"
#: The buffer of figures 3-4 (87 segments, "about the bandwidth delay product"), also used for
#: figures 7-8, whose buffer the seed does not give.
BUFFER_87 = 87 * MSS


def goodput(rate: float) -> float:
    """What a link of ``rate`` carries after 40 bytes of headers per 512-byte segment."""
    return rate * MSS / SEG_WIRE


def single(buffer: int | str = "41KB", ber: float = 0.0, ack_every: int | str = 1, semantics: str = "modified",
           scheme: str = "sgw", size: str | None = "3MB", duration: str = "80s", trace_server: bool = False) -> dict[str, Any]:
    """Seed 004 §V.A: 600 kbps satellite link (RTT 500 ms), 1.2 Mbps terrestrial link (RTT 80
    ms), 512-byte segments, a 3 MB file (``size=None``: a persistent source), 100 ms TCP timers."""
    # Only the keys the scheme reads (another key would be a run warning): semantics and
    # ack_every are the sgw scheme's own, and end-to-end TCP has no SGW buffer.
    scheme_keys: dict[str, Any] = {}
    if scheme != "e2e":
        scheme_keys["buffer"] = buffer if isinstance(buffer, str) else int(buffer)
    if scheme == "sgw":
        scheme_keys |= {"semantics": semantics, "ack_every": ack_every}
    sc: dict[str, Any] = {
        "name": "zhou-single",
        "run": {"duration": duration},
        "topology": {"kind": "gateway"},
        "tcp": {"flavor": "sack", "mss": MSS, "timer_granularity": "100ms"},
        "app": {"kind": "transfer", "bytes": size} if size else {"kind": "bulk"},
        "gateway": {
            "scheme": scheme, **scheme_keys,
            "satellite": {"rate": "600kbps", "delay": "250ms", "ber": float(ber)},
            "return": {"rate": "1Mbps", "delay": "250ms"},
            "servers": [{"rate": "1.2Mbps", "delay": "40ms"}],
        },
    }
    if trace_server:
        sc["trace"] = {"flows": [0]}
    return sc


def multi(scheme: str, ber: float, size: int | None = None, duration: str = "60s") -> dict[str, Any]:
    """Seed 004 §V.B: five servers (2 Mbps each, terrestrial RTTs 2/20/40/80/160 ms) through a
    3 Mbps satellite link (RTT 500 ms), 256 KB client buffers, SGW buffers for a 900 kbps peak
    rate; TCP SACK on the terrestrial legs (and on the satellite leg of split TCP); the client
    acknowledges as TCP does (every other in-order, every out-of-order packet)."""
    n = len(TERR_RTTS_5)
    return {
        "name": "zhou-multi",
        "run": {"duration": duration},
        "topology": {"kind": "gateway"},
        "tcp": {"flavor": "sack", "mss": MSS, "timer_granularity": "100ms", "window_scale": 4},
        "app": {"kind": "transfer", "bytes": size} if size else {"kind": "bulk"},
        "trace": {"flows": list(range(2 * n))} if scheme == "split_tcp" else {},
        "gateway": {
            # ack_every (the sgw scheme's client; split TCP's client is a TCP receiver).
            "scheme": scheme, "peak_rate": PEAK_5, **({"ack_every": "tcp"} if scheme == "sgw" else {}), "client_buffer": "256KiB",
            "satellite": {"rate": "3Mbps", "delay": "250ms", "ber": float(ber)},
            "return": {"rate": "1Mbps", "delay": "250ms"},
            "servers": [{"rate": "2Mbps", "delay": f"{rtt * 500:g}ms"} for rtt in TERR_RTTS_5],
        },
    }


@dataclass(frozen=True)
class Run:
    key: str
    scenario: Mapping[str, Any]
    seed: int = 1


def plan(quick: bool) -> list[Run]:
    """Every run of the reproduction (``quick``: fewer levels and one seed)."""
    runs: list[Run] = []
    for kb in (31, 41, 50):
        runs.append(Run(f"e1/buffer={kb}KB", single(buffer=f"{kb}KB")))
    n_levels = (1, 4, 16, 32) if quick else (1, 2, 4, 8, 16, 32)
    for ber in (1e-6, 1e-5):
        for n in n_levels:
            runs.append(Run(f"e2/ber={ber:g}/N={n}", single(buffer=BUFFER_87, ber=ber, ack_every=n, size=None, duration="60s")))
    for sem in ("normal", "modified"):
        runs.append(Run(f"e3/{sem}", single(buffer=BUFFER_87, ber=1e-6, semantics=sem, duration="150s", trace_server=True)))
    seeds = (1,) if quick else (1, 2, 3)
    bers = (1e-8, 1e-7, 1e-6, 1e-5)
    for scheme in ("sgw", "split_tcp"):
        for ber in bers:
            for seed in seeds:
                runs.append(Run(f"e4/{scheme}/ber={ber:g}/seed={seed}", multi(scheme, ber, duration="30s" if quick else "60s"), seed))
    runs.append(Run("e4/sgw/ber=5e-05/seed=1", multi("sgw", 5e-5, duration="30s" if quick else "60s")))
    sizes = (512, 2048, 10_000, 50_000, 150_000, 300_000) if quick else (512, 1024, 2048, 5000, 10_000, 20_000, 50_000, 100_000, 150_000, 200_000, 300_000)
    for scheme in ("sgw", "split_tcp"):
        for size in sizes:
            runs.append(Run(f"e5/{scheme}/size={size}", multi(scheme, 0.0, size=size, duration="30s")))
    return runs


def _one(run: Run) -> tuple[str, dict[str, Any]]:
    from sattcp.api import run as run_scenario

    r = run_scenario(dict(run.scenario), seed=run.seed)
    # Keep only what the figures and checks read (the result's own data, as netpipe_sat's _one
    # reads it: r is dropped, so no copy is needed).
    keep = ("summary", "flows", "links", "traces", "gateway", "seed", "digest")
    return run.key, {k: r.data[k] for k in keep if k in r.data}


def execute(runs: Sequence[Run], jobs: int | None = None, progress: Callable[[int, int], None] | None = None) -> dict[str, dict[str, Any]]:
    """Runs everything on a local process pool; returns results by key."""
    out: dict[str, dict[str, Any]] = {}
    with ProcessPoolExecutor(max_workers=jobs) as ex:
        for i, (key, res) in enumerate(ex.map(_one, runs), 1):
            out[key] = res
            if progress:
                progress(i, len(runs))
    return out


# -- reading results -------------------------------------------------------------------------


def conns(res: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per connection, the client side: delivered bytes, throughput, completion time, whatever
    the scheme (the gateway section for ``sgw``; the data flows, which end at the clients, for
    TCP on the satellite leg)."""
    if "gateway" in res:
        return list(res["gateway"]["conns"])
    return [{"delivered_bytes": f["delivered_bytes"], "throughput_bps": f["throughput_bps"], "completed_at_s": f["completed_at_s"]}
            for f in res["flows"] if f["role"] == "data"]


def series(res: Mapping[str, Any], name: str) -> tuple[list[float], list[float]]:
    tr = res["traces"].get(name)
    return (list(tr["t"]), list(tr["v"])) if tr else ([], [])


def value_at(t: Sequence[float], v: Sequence[float], x: float) -> float:
    """A recorded-on-change series' value at ``x``."""
    import bisect

    i = bisect.bisect_right(t, x)
    return v[i - 1] if i else 0.0


def time_mean(t: Sequence[float], v: Sequence[float], a: float, b: float) -> float:
    acc = 0.0
    for i in range(len(t)):
        s, e = max(t[i], a), min(t[i + 1] if i + 1 < len(t) else b, b)
        if e > s:
            acc += v[i] * (e - s)
    return acc / (b - a)


def jain(xs: Sequence[float]) -> float:
    s, q = sum(xs), sum(x * x for x in xs)
    return s * s / (len(xs) * q) if q > 0 else float("nan")


def utilisation(res: Mapping[str, Any], a: float, b: float, rate: float) -> float:
    """Share of [a, b) the forward satellite link was sending (sgw scheme)."""
    t, v = series(res, "sgw/sat_bytes")
    return (value_at(t, v, b) - value_at(t, v, a)) * 8 / rate / (b - a)


def client_rate(res: Mapping[str, Any], a: float, b: float, conn: int = 0) -> float:
    t, v = series(res, f"sgw/{conn}/client_segments")
    return (value_at(t, v, b) - value_at(t, v, a)) * MSS * 8 / (b - a)


# -- checks --------------------------------------------------------------------------------


@dataclass
class Check:
    experiment: str
    statement: str
    test: str
    ours: str
    holds: bool


@dataclass
class Analysis:
    checks: list[Check] = field(default_factory=list)
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def add(self, experiment: str, statement: str, test: str, ours: str, holds: bool) -> None:
        self.checks.append(Check(experiment, statement, test, ours, bool(holds)))


def analyse(res: Mapping[str, Mapping[str, Any]]) -> Analysis:
    a = Analysis()
    sat_bw = goodput(SAT_RATE_1)
    # E1: buffer requirement and utilisation (figures 5-6), steady state 20-40 s.
    rows = []
    # The loop's round trip: the propagation RTTs (580 ms) and, as a packet's RTT does, one
    # 552-byte packet and one 40-byte ACK serialised on each leg (11.6 ms).
    rtt = SAT_RTT + TERR_RTT_1 + SEG_WIRE * 8 / SAT_RATE_1 + 40 * 8 / 1e6 + (SEG_WIRE + 40) * 8 / TERR_RATE_1
    for kb in (31, 41, 50):
        r = res[f"e1/buffer={kb}KB"]
        buf = kb * 1000
        u = utilisation(r, 20, 40, SAT_RATE_1)
        tput = client_rate(r, 20, 40)
        t, v = series(r, "sgw/0/backlog_bytes")
        backlog = time_mean(t, v, 20, 40)
        rows.append({"buffer": f"{kb} KB", "utilisation": u, "throughput_bps": tput, "analytic_bps": min(sat_bw, buf * 8 / rtt),
                     "backlog_bytes": backlog, "analytic_backlog_bytes": max(0.0, buf - sat_bw / 8 * rtt),
                     "completed_s": conns(r)[0]["completed_at_s"]})
    a.tables["e1"] = rows
    r31, r41, r50 = rows
    a.add("1", "31 KB: buffer-bottlenecked, satellite utilisation about 75%", "utilisation in [0.70, 0.80]", f"{r31['utilisation']:.3f}", 0.70 <= r31["utilisation"] <= 0.80)
    a.add("1", "31 KB: no backlogged packets at the SGW", "mean backlog < one segment (512 B)", f"{r31['backlog_bytes']:.0f} B", r31["backlog_bytes"] < MSS)
    a.add("1", "41 KB (about the BDP): the satellite link is fully utilised", "utilisation >= 0.97", f"{r41['utilisation']:.3f}", r41["utilisation"] >= 0.97)
    a.add("1", "41 KB: very few backlogged packets", "mean backlog < 5 segments", f"{r41['backlog_bytes']:.0f} B", r41["backlog_bytes"] < 5 * MSS)
    a.add("1", "50 KB: link-bottlenecked, about 9 KB backlogged at the SGW", "utilisation >= 0.97 and backlog in [7, 11] KB",
          f"{r50['utilisation']:.3f}, {r50['backlog_bytes'] / 1000:.1f} KB", r50["utilisation"] >= 0.97 and 7000 <= r50["backlog_bytes"] <= 11000)
    ok = all(abs(r["throughput_bps"] - r["analytic_bps"]) / r["analytic_bps"] < 0.03 for r in rows)
    a.add("1", "throughput = min(SatBW, Buff/(SatRTT+TerrRTT)) (§II.A)", "within 3% for the three buffers (RTTs with serialisation, 591.6 ms)",
          ", ".join(f"{r['throughput_bps'] / r['analytic_bps'] - 1:+.1%}" for r in rows), ok)

    # E2: ACK frequency (figures 7-8), steady state 20-60 s.
    rows = []
    for key, r in res.items():
        if key.startswith("e2/"):
            _, b, n = key.split("/")
            ret = next(x for x in r["links"] if x["link"] == "sat-return")
            rows.append({"ber": float(b.split("=")[1]), "N": int(n.split("=")[1]), "throughput_bps": client_rate(r, 20, 60),
                         "return_bps": ret["bytes"] * 8 / r["summary"]["sim_time_s"]})
    rows.sort(key=lambda x: (x["ber"], x["N"]))
    a.tables["e2"] = rows
    by = {(x["ber"], x["N"]): x for x in rows}
    ns = sorted({x["N"] for x in rows})
    flat = all(by[(b, n)]["throughput_bps"] >= 0.95 * by[(b, 1)]["throughput_bps"] for b in (1e-6, 1e-5) for n in ns if n <= 8)
    a.add("2", "forward throughput is insensitive to the ACK frequency for N < 16", "throughput(N <= 8) >= 95% of throughput(N = 1), both BERs",
          "; ".join(f"BER {b:g}: " + ", ".join(f"N={n}: {by[(b, n)]['throughput_bps'] / by[(b, 1)]['throughput_bps']:.2f}" for n in ns) for b in (1e-6, 1e-5)), flat)
    drop = all(by[(b, 32)]["throughput_bps"] < 0.95 * by[(b, 1)]["throughput_bps"] for b in (1e-6, 1e-5))
    a.add("2", "from N = 16 on, the throughput begins to decrease", "throughput(N = 32) < 95% of throughput(N = 1), both BERs",
          ", ".join(f"BER {b:g}: {by[(b, 32)]['throughput_bps'] / by[(b, 1)]['throughput_bps']:.2f}" for b in (1e-6, 1e-5)), drop)
    inv = [by[(b, n)]["return_bps"] * n / by[(b, 1)]["return_bps"] for b in (1e-6, 1e-5) for n in ns]
    a.add("2", "return channel use falls exponentially as the ACK frequency does (about 1/N)", "N x use(N) / use(1) in [0.5, 1.5] for every N",
          ", ".join(f"{x:.2f}" for x in inv), all(0.5 <= x <= 1.5 for x in inv))
    more = all(by[(1e-5, n)]["return_bps"] > by[(1e-6, n)]["return_bps"] for n in ns)
    a.add("2", "a higher BER needs more return bandwidth for comparable forward throughput", "use(BER 1e-5) > use(BER 1e-6) at every N",
          ", ".join(f"N={n}: {by[(1e-5, n)]['return_bps'] / 1e3:.1f} vs {by[(1e-6, n)]['return_bps'] / 1e3:.1f} kbps" for n in ns), more)

    # E3: data in flight at the server, normal vs modified SACK (figures 3-4).
    rows = []
    for sem in ("normal", "modified"):
        r = res[f"e3/{sem}"]
        t, v = series(r, "flow/0/inflight")
        done = conns(r)[0]["completed_at_s"] or r["summary"]["sim_time_s"]
        lo, hi = 10.0, max(11.0, done - 2.0)
        mean = time_mean(t, v, lo, hi)
        sq = time_mean(t, [x * x for x in v], lo, hi)
        cv = math.sqrt(max(0.0, sq - mean * mean)) / mean if mean > 0 else float("nan")
        stalls = sum(1 for i in range(1, len(t)) if lo <= t[i] <= hi and v[i] == 0 and v[i - 1] > 0)
        rows.append({"semantics": sem, "completed_s": done, "mean_inflight_segments": mean / MSS, "cv_inflight": cv, "stalls": stalls})
    a.tables["e3"] = rows
    n3, m3 = rows
    a.add("3", "normal SACK: large oscillations of the server's data in flight (stall and burst)", "the server's flight falls to zero at least once in steady state",
          f"{n3['stalls']} stalls, CV {n3['cv_inflight']:.2f}", n3["stalls"] > 0)
    a.add("3", "modified SACK: a much smoother flow", "coefficient of variation of the flight lower than with normal SACK",
          f"CV {m3['cv_inflight']:.2f} vs {n3['cv_inflight']:.2f}", m3["cv_inflight"] < n3["cv_inflight"])
    a.add("3", "modified SACK finishes the transfer sooner", "completion time lower", f"{m3['completed_s']:.1f} s vs {n3['completed_s']:.1f} s", m3["completed_s"] < n3["completed_s"])

    # E4: five connections, throughput and fairness against BER (figures 9-12).
    rows = []
    c5 = goodput(SAT_RATE_5)
    groups: dict[tuple[str, float], list[Mapping[str, Any]]] = {}
    for key, r in res.items():
        if key.startswith("e4/"):
            _, scheme, b, _ = key.split("/")
            groups.setdefault((scheme, float(b.split("=")[1])), []).append(r)
    for (scheme, ber), rs in sorted(groups.items()):
        tputs = [sum(c["throughput_bps"] for c in conns(r)) for r in rs]
        fair = [jain([c["throughput_bps"] for c in conns(r)]) for r in rs]
        reorder = max((c.get("peak_reorder_segments", 0) for r in rs for c in conns(r)[2:3]), default=None) if scheme == "sgw" else None
        rows.append({"scheme": scheme, "ber": ber, "runs": len(rs), "throughput_bps": sum(tputs) / len(tputs), "utilisation": sum(tputs) / len(tputs) / c5,
                     "jain_fairness": sum(fair) / len(fair), "peak_reorder_conn3": reorder})
    a.tables["e4"] = rows
    g = {(x["scheme"], x["ber"]): x for x in rows}
    a.add("4", "BER 1e-8: both schemes achieve very high throughput", "aggregate >= 90% of the satellite goodput, both schemes",
          f"sgw {g[('sgw', 1e-8)]['utilisation']:.3f}, split TCP {g[('split_tcp', 1e-8)]['utilisation']:.3f}", min(g[("sgw", 1e-8)]["utilisation"], g[("split_tcp", 1e-8)]["utilisation"]) >= 0.9)
    a.add("4", "BER 1e-6: split TCP's performance degrades; ours stays higher", "sgw aggregate > split TCP aggregate",
          f"{g[('sgw', 1e-6)]['throughput_bps'] / 1e6:.2f} vs {g[('split_tcp', 1e-6)]['throughput_bps'] / 1e6:.2f} Mbps", g[("sgw", 1e-6)]["throughput_bps"] > g[("split_tcp", 1e-6)]["throughput_bps"])
    a.add("4", "BER 1e-5: split TCP's satellite utilisation is very low", "split TCP < 50% of the satellite goodput, and sgw above it",
          f"split TCP {g[('split_tcp', 1e-5)]['utilisation']:.3f}, sgw {g[('sgw', 1e-5)]['utilisation']:.3f}", g[("split_tcp", 1e-5)]["utilisation"] < 0.5 < g[("sgw", 1e-5)]["utilisation"] + 1e-9 and g[("sgw", 1e-5)]["throughput_bps"] > g[("split_tcp", 1e-5)]["throughput_bps"])
    a.add("4", "BER 1e-7 and 1e-8: fairness is very high for both schemes", "Jain's index >= 0.95",
          ", ".join(f"{s} {b:g}: {g[(s, b)]['jain_fairness']:.3f}" for s in ("sgw", "split_tcp") for b in (1e-8, 1e-7)),
          all(g[(s, b)]["jain_fairness"] >= 0.95 for s in ("sgw", "split_tcp") for b in (1e-8, 1e-7)))
    a.add("4", "BER 1e-6: our scheme improves fairness as well as throughput", "Jain's index sgw >= split TCP",
          f"{g[('sgw', 1e-6)]['jain_fairness']:.3f} vs {g[('split_tcp', 1e-6)]['jain_fairness']:.3f}", g[("sgw", 1e-6)]["jain_fairness"] >= g[("split_tcp", 1e-6)]["jain_fairness"])
    if ("sgw", 5e-5) in g:
        r1, r5 = g[("sgw", 1e-6)]["peak_reorder_conn3"], g[("sgw", 5e-5)]["peak_reorder_conn3"]
        a.add("4", "connection 3's reorder buffer: about one window at BER 1e-6, about three at 5e-5 (retransmissions lost again)",
              "peak at 5e-5 at least twice the peak at 1e-6", f"{r1} vs {r5} segments", bool(r1) and r5 >= 2 * r1)

    # E5: short transfers, response time of connection 3 (figures 13-14).
    rows = []
    for key, r in res.items():
        if key.startswith("e5/"):
            _, scheme, s = key.split("/")
            c = conns(r)[2]
            rows.append({"scheme": scheme, "size": int(s.split("=")[1]), "response_s": c["completed_at_s"]})
    rows.sort(key=lambda x: (x["scheme"], x["size"]))
    a.tables["e5"] = rows
    rt = {(x["scheme"], x["size"]): x["response_s"] for x in rows}
    sizes = sorted({x["size"] for x in rows})
    ratio = {s: rt[("split_tcp", s)] / rt[("sgw", s)] for s in sizes if rt.get(("split_tcp", s)) and rt.get(("sgw", s))}
    a.add("5", "a one-segment file: both schemes have the same response time", "ratio split/sgw in [0.9, 1.1]", f"{ratio.get(512, float('nan')):.2f}", 0.9 <= ratio.get(512, 0) <= 1.1)
    small = {s: x for s, x in ratio.items() if 2000 <= s <= 100_000}
    best = max(small.values()) if small else float("nan")
    a.add("5", "small files: our scheme is 2 to 2.5 times faster", "largest ratio split/sgw for 2-100 KB in [2.0, 2.5]",
          ", ".join(f"{s / 1000:g} KB: {x:.2f}" for s, x in sorted(small.items())), 2.0 <= best <= 2.5)
    lin = []
    for scheme in ("sgw", "split_tcp"):
        pts = [(s, rt[(scheme, s)]) for s in sizes if s >= 150_000 and rt.get((scheme, s))]
        lin.append(_r2(pts))
    a.add("5", "past about 150 KB the response time grows almost linearly for both", "R² of a line through the points >= 150 KB is >= 0.99, both schemes",
          ", ".join(f"{x:.4f}" for x in lin), all(x >= 0.99 for x in lin))
    return a


def _r2(pts: Sequence[tuple[float, float]]) -> float:
    if len(pts) < 3:
        return 1.0 if len(pts) == 2 else float("nan")
    n = len(pts)
    mx, my = sum(p[0] for p in pts) / n, sum(p[1] for p in pts) / n
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    sxy = sum((p[0] - mx) * (p[1] - my) for p in pts)
    syy = sum((p[1] - my) ** 2 for p in pts)
    return sxy * sxy / (sxx * syy) if sxx > 0 and syy > 0 else 1.0


# -- figures and report ----------------------------------------------------------------------

SCHEME_STYLE = {"sgw": ("#1f77b4", "-", "our scheme (sgw)"), "split_tcp": ("#d62728", "--", "split TCP-SACK")}


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return buf.getvalue()


def figures(res: Mapping[str, Mapping[str, Any]], a: Analysis) -> list[tuple[str, bytes]]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out: list[tuple[str, bytes]] = []
    # Figures 5-6.
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.8))
    for kb, colour in zip((31, 41, 50), ("#2ca02c", "#1f77b4", "#ff7f0e"), strict=True):
        r = res[f"e1/buffer={kb}KB"]
        t, v = series(r, "sgw/sat_bytes")
        end = int(conns(r)[0]["completed_at_s"] or 60)
        xs = list(range(1, end))
        ax1.plot(xs, [(value_at(t, v, x) - value_at(t, v, x - 1)) * 8 / SAT_RATE_1 for x in xs], color=colour, label=f"{kb} KB")
        bt, bv = series(r, "sgw/0/backlog_bytes")
        ax2.step(bt, [x / 1000 for x in bv], where="post", color=colour, label=f"{kb} KB")
    ax1.set(xlabel="time (s)", ylabel="satellite link utilisation (1 s bins)", title="Fig. 5: utilisation against SGW buffer", ylim=(0, 1.05))
    ax2.set(xlabel="time (s)", ylabel="backlog at the SGW (KB)", title="Fig. 6: backlogged data")
    for ax in (ax1, ax2):
        ax.legend(loc="lower right")
        ax.grid(alpha=0.3)
    out.append(("Figures 5-6: single connection, SGW buffers 31/41/50 KB, error-free", _png(fig)))
    # Figures 7-8.
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.8))
    for ber, colour in ((1e-6, "#1f77b4"), (1e-5, "#d62728")):
        rows = [x for x in a.tables["e2"] if x["ber"] == ber]
        ax1.plot([x["N"] for x in rows], [x["throughput_bps"] / 1e3 for x in rows], "o-", color=colour, label=f"BER {ber:g}")
        ax2.plot([x["N"] for x in rows], [x["return_bps"] / 1e3 for x in rows], "o-", color=colour, label=f"BER {ber:g}")
    ax1.axhline(goodput(SAT_RATE_1) / 1e3, color="grey", ls=":", label="link rate after headers")
    ax1.set(xscale="log", xlabel="ACK every N packets", ylabel="end-to-end throughput (kbps)", title="Fig. 7: throughput against ACK frequency")
    ax2.set(xscale="log", yscale="log", xlabel="ACK every N packets", ylabel="return channel use (kbps)", title="Fig. 8: return channel use")
    for ax in (ax1, ax2):
        ax.set_xticks([1, 2, 4, 8, 16, 32], labels=["1", "2", "4", "8", "16", "32"])
        ax.legend()
        ax.grid(alpha=0.3)
    out.append(("Figures 7-8: ACK frequency, BER 1e-6 and 1e-5", _png(fig)))
    # Figures 3-4.
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6), sharey=True)
    for ax, sem in zip(axes, ("normal", "modified"), strict=True):
        t, v = series(res[f"e3/{sem}"], "flow/0/inflight")
        ax.step(t, [x / MSS for x in v], where="post", lw=0.8, color="#1f77b4")
        ax.set(xlabel="time (s)", title=f"Fig. {3 if sem == 'normal' else 4}: {sem} SACK")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("server's data in flight (segments)")
    out.append(("Figures 3-4: data in flight at the server, SGW buffer 87 segments, BER 1e-6", _png(fig)))
    # Figure 9.
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.8))
    for scheme, (colour, ls, label) in SCHEME_STYLE.items():
        rows = [x for x in a.tables["e4"] if x["scheme"] == scheme and x["ber"] <= 1e-5]
        ax1.plot([x["ber"] for x in rows], [x["throughput_bps"] / 1e6 for x in rows], "o", ls=ls, color=colour, label=label)
        ax2.plot([x["ber"] for x in rows], [x["jain_fairness"] for x in rows], "o", ls=ls, color=colour, label=label)
    ax1.set(xscale="log", xlabel="bit error rate", ylabel="aggregate throughput (Mbps)", title="Fig. 9: five connections")
    ax2.set(xscale="log", xlabel="bit error rate", ylabel="Jain's fairness index", title="fairness", ylim=(0, 1.02))
    for ax in (ax1, ax2):
        ax.legend()
        ax.grid(alpha=0.3)
    out.append(("Figure 9: aggregate throughput and fairness against BER", _png(fig)))
    # Figure 10 and 11-12.
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.8))
    r = res.get("e4/sgw/ber=1e-06/seed=1")
    s = res.get("e4/split_tcp/ber=1e-06/seed=1")
    for i in range(5):
        if r:
            t, v = series(r, f"sgw/{i}/client_segments")
            ax1.step(t, v, where="post", color=f"C{i}", label=f"conn {i + 1} (sgw)")
        if s:
            t, v = series(s, f"flow/{5 + i}/received")
            ax1.step(t, [x / MSS for x in v], where="post", color=f"C{i}", ls="--")
    ax1.set(xlabel="time (s)", ylabel="segments received in order", title="Fig. 10: BER 1e-6 (solid sgw, dashed split TCP)")
    ax1.legend(fontsize=7)
    for ber, colour in ((1e-6, "#1f77b4"), (5e-5, "#d62728")):
        rr = res.get(f"e4/sgw/ber={ber:g}/seed=1")
        if rr:
            t, v = series(rr, "sgw/2/reorder_segments")
            ax2.step(t, v, where="post", color=colour, label=f"BER {ber:g}", lw=0.8)
    ax2.set(xlabel="time (s)", ylabel="reorder buffer (segments)", title="Figs. 11-12: connection 3's reorder buffer")
    ax2.legend()
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
    out.append(("Figures 10-12: received sequence numbers and the reorder buffer", _png(fig)))
    # Figures 13-14.
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.8))
    rt = {(x["scheme"], x["size"]): x["response_s"] for x in a.tables["e5"]}
    sizes = sorted({x["size"] for x in a.tables["e5"]})
    for scheme, (colour, ls, label) in SCHEME_STYLE.items():
        ax1.plot([s / 1000 for s in sizes], [rt.get((scheme, s)) for s in sizes], "o", ls=ls, color=colour, label=label)
    ax2.plot([s / 1000 for s in sizes], [(rt[("split_tcp", s)] or math.nan) / (rt[("sgw", s)] or math.nan) for s in sizes], "o-", color="#444")
    ax1.set(xlabel="file size (KB)", ylabel="response time (s)", title="Fig. 13: connection 3, error-free")
    ax2.set(xscale="log", xlabel="file size (KB)", ylabel="split TCP / sgw", title="Fig. 14: response time ratio")
    ax1.legend()
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
    out.append(("Figures 13-14: short transfers (HTTP/1.0 and the first file of HTTP/1.1 alike)", _png(fig)))
    return out


def _table(rows: Sequence[Mapping[str, Any]]) -> str:
    if not rows:
        return ""
    cols = list(rows[0])
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)

    def fmt(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.4g}"
        return "–" if v is None else html.escape(str(v))

    body = "".join("<tr>" + "".join(f"<td>{fmt(r[c])}</td>" for c in cols) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def report(res: Mapping[str, Mapping[str, Any]], a: Analysis, out: Path, note: str = "") -> Path:
    """Writes ``out/checks.json``, a JSON file per table, then ``out/report.html`` (figures
    embedded); returns the report's path. Each file is written whole or not at all, and the old
    report goes first: a failure leaves no report that looks complete (:mod:`sattcp.paths`)."""
    path = start_report(out)  # the analysis stood: the old report goes before its data
    figs = figures(res, a)
    held = sum(c.holds for c in a.checks)
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>sattcp: seed 004 reproduced</title><style>",
        "body{font-family:sans-serif;max-width:1150px;margin:2em auto;color:#222}table{border-collapse:collapse;margin:.5em 0}"
        "td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}th{background:#f0f0f0}.holds{color:#176117;font-weight:bold}"
        ".fails{color:#a11;font-weight:bold}figure{margin:1em 0}img{max-width:100%}",
        "</style></head><body>",
        "<h1>Flow control at satellite gateways (seed 004), reproduced by sattcp</h1>",
        f"<p>{len(res)} runs; {held} of {len(a.checks)} statements of the seed hold on our data. {html.escape(note)}</p>",
        "<p>Model and every choice the seed leaves open: docs/gateway.md. Nothing is fitted to the seed's figures.</p>",
        "<h2>The seed's statements</h2><table><thead><tr><th>§V exp.</th><th>statement</th><th>our test</th><th>ours</th><th>verdict</th></tr></thead><tbody>",
    ]
    for c in a.checks:
        verdict = '<span class="holds">holds</span>' if c.holds else '<span class="fails">does not hold</span>'
        parts.append(f"<tr><td>{c.experiment}</td><td style='text-align:left'>{html.escape(c.statement)}</td><td style='text-align:left'>{html.escape(c.test)}</td>"
                     f"<td style='text-align:left'>{html.escape(c.ours)}</td><td>{verdict}</td></tr>")
    parts.append("</tbody></table><h2>Figures</h2>")
    for caption, png in figs:
        parts.append(f"<figure><img alt='{html.escape(caption)}' src='data:image/png;base64,{base64.b64encode(png).decode()}'><figcaption>{html.escape(caption)}</figcaption></figure>")
    parts.append("<h2>Tables</h2>")
    for name, rows in a.tables.items():
        parts.append(f"<h3>{name}</h3>{_table(rows)}")
    parts.append("</body></html>")
    write_whole(out / "checks.json", json.dumps([c.__dict__ for c in a.checks], indent=1))
    for name, rows in a.tables.items():
        write_whole(out / f"{name}.json", json.dumps(rows, indent=1))
    return write_whole(path, "\n".join(parts))


def reproduce(out: Path, quick: bool = False, jobs: int | None = None, progress: bool = True) -> tuple[Path, Analysis]:
    """Runs seed 004's experiments and writes ``out/report.html``."""
    import sys

    runs = plan(quick)
    t0 = time.perf_counter()

    def show(i: int, n: int) -> None:
        if progress:
            print(f"\rzhou-sgw: {i}/{n} runs, {time.perf_counter() - t0:.0f} s", end="" if i < n else "\n", file=sys.stderr, flush=True)

    res = execute(runs, jobs, show)
    a = analyse(res)
    note = "Quick variant: fewer ACK frequencies and file sizes, one seed, 30 s runs for five connections." if quick else ""
    return report(res, a, out, note), a
