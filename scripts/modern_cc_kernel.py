"""The kernel's reno, cubic and bbr beside the simulator's flavours on the study modern-cc's GEO,
MEO and Starlink paths (issue 14: "compare with the kernel's reno/cubic/bbr through the link
emulator, same scenario, same figure").

    sudo .venv/bin/python scripts/modern_cc_kernel.py [--duration 30] [--jobs 2] \
        [--out out/modern-cc-kernel.csv] [--figure docs/img/modern_cc_kernel.png]

For each path (GEO 275 ms, MEO 100 ms one way, Starlink) x BER (0, 1e-6) x kernel congestion
control, one bulk TCP connection through `sattcp emulate` (GEO, MEO:
scenarios/emulate/modern-geo.toml: 45 Mbps, 1 BDP drop-tail, IP framing, per-namespace
`net.ipv4.tcp_congestion_control`; Starlink: the simulator scenario scenarios/modern-starlink.toml
itself, its bottleneck's delay schedule followed by the emulator, with `emulate.cc`; `--paths`
runs a subset): a Python sender in
the client namespace writes for the run's duration, a receiver in the server namespace counts
the bytes it reads in the first `duration` seconds after accepting the connection. Efficiency =
those bytes x 8 / duration / (45 Mbps x 1448 / 1500), the kernel's payload rate (MSS 1448
with timestamps). The simulator's runs are the study's one-flow cells, same path, same BER,
same duration, efficiency over its own payload rate (MSS 1460). One CSV (both), one figure.

Without root, /dev/net/tun or `ip` it says what is missing and exits 2.
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from sattcp.emulate import Emulation, missing_privileges  # noqa: E402

SCENARIO = ROOT / "scenarios" / "emulate" / "modern-geo.toml"
STARLINK = ROOT / "scenarios" / "modern-starlink.toml"
#: Per path: (emulated scenario, its overrides, the key of its bit error rate, the simulator's scenario).
PATHS = {
    "GEO": (SCENARIO, {"emulate.delay": "275ms"}, "emulate.ber", ROOT / "scenarios" / "modern-geo.toml"),
    "MEO": (SCENARIO, {"emulate.delay": "100ms"}, "emulate.ber", ROOT / "scenarios" / "modern-meo.toml"),
    "Starlink": (STARLINK, {}, "links.bottleneck.ber", STARLINK),
}
RATE_BPS = 45e6
#: The kernel's payload per 1500-byte packet: 1500 - 20 (IP) - 20 (TCP) - 12 (timestamps).
KERNEL_MSS = 1448
PORT = 5001
SIM_FLAVOURS = ["sack/bbr", "sack/cubic", "newreno", "sack"]
KERNEL_CCS = ["reno", "cubic", "bbr"]
COLUMNS = ["path", "ber", "stack", "cc", "duration_s", "bytes", "efficiency", "retransmits", "late_max_us"]

RECEIVER = textwrap.dedent("""
    import socket, sys, time
    d = float(sys.argv[1])
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", PORT)); s.listen(1)
    c, _ = s.accept(); t0 = time.monotonic(); n = 0; buf = bytearray(1 << 20)
    c.settimeout(1.0)
    while True:
        left = t0 + d - time.monotonic()
        if left <= 0: break
        try: k = c.recv_into(buf)
        except socket.timeout: continue
        if k == 0: break
        n += k
    print(n, flush=True)
""").replace("PORT", str(PORT))

SENDER = textwrap.dedent("""
    import socket, sys, time
    d = float(sys.argv[1]); c = socket.create_connection((sys.argv[2], PORT))
    end = time.monotonic() + d; buf = b"x" * (1 << 20)
    try:
        while time.monotonic() < end: c.sendall(buf)
    except OSError: pass
    info = c.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 232)
    print(int.from_bytes(info[100:104], "little"), flush=True)  # tcpi_total_retrans
""").replace("PORT", str(PORT))


def kernel_run(path: str, ber: float, cc: str, duration: float) -> dict:
    scenario, ov, ber_key, _ = PATHS[path]
    ov = {**ov, ber_key: repr(ber), "emulate.cc": cc}
    t0 = time.monotonic()
    with Emulation(scenario, ov) as em:
        rx = em.popen("server", [sys.executable, "-c", RECEIVER, str(duration)], stdout=subprocess.PIPE, text=True)
        em.wait_listening("server", PORT)
        tx = em.run("client", [sys.executable, "-c", SENDER, str(duration + 3), "{server}"], capture_output=True, text=True, timeout=duration + 120)
        out, _ = rx.communicate(timeout=60)
    n = int(out.split()[0])
    rtx = int(tx.stdout.split()[0]) if tx.stdout.split() else -1
    late = max((d.get("late_max_us", 0) for d in (em.stats or {}).get("directions", [])), default=0)
    eff = n * 8 / duration / (RATE_BPS * KERNEL_MSS / 1500)
    print(f"kernel {cc} {path} ber {ber:g}: efficiency {eff:.3f}, {rtx} retransmits ({time.monotonic() - t0:.0f} s)", file=sys.stderr)
    return {"path": path, "ber": ber, "stack": "kernel", "cc": cc, "duration_s": duration, "bytes": n, "efficiency": eff, "retransmits": rtx, "late_max_us": late}


def sim_run(path: str, ber: float, flavour: str, duration: float) -> dict:
    import sattcp.api as api
    r = api.run(str(PATHS[path][3]), overrides={"tcp.flavor": flavour, "links.bottleneck.ber": ber, "run.duration": f"{duration:g}s"})
    f = r.flows.iloc[0]
    return {"path": path, "ber": ber, "stack": "sattcp", "cc": flavour, "duration_s": duration, "bytes": int(f.delivered_bytes),
            "efficiency": float(r.summary["efficiency"]), "retransmits": int(f.segments_retransmitted), "late_max_us": ""}


def figure(rows: list[dict], out: Path, paths: list[str]) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    cases = [(p, b) for p in paths for b in (0.0, 1e-6)]
    labels = [f"kernel {c}" for c in KERNEL_CCS] + [f"sattcp {f}" for f in SIM_FLAVOURS]
    ncol = min(len(cases), 4)
    nrow = (len(cases) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(3.2 * ncol, 3.6 * nrow), sharey=True, squeeze=False)
    for ax in axes.flat[len(cases):]:
        ax.axis("off")
    for ax, (p, b) in zip(axes.flat[:len(cases)], cases, strict=True):
        vals = []
        for lab in labels:
            stack, cc = lab.split(" ", 1)
            sel = [r["efficiency"] for r in rows if r["path"] == p and r["ber"] == b and r["stack"] == stack and r["cc"] == cc]
            vals.append(sel[0] if sel else 0.0)
        colours = ["#1f77b4"] * len(KERNEL_CCS) + ["#ff7f0e"] * len(SIM_FLAVOURS)
        ax.bar(range(len(labels)), vals, color=colours)
        ax.set_xticks(range(len(labels)), labels, rotation=60, ha="right", fontsize=8)
        ax.set_title(f"{p}, BER {b:g}", fontsize=9)
        ax.set_ylim(0, 1.05)
    for row in axes:
        row[0].set_ylabel("efficiency (one flow)")
    fig.suptitle("One bulk flow, 45 Mbps, 1 BDP drop-tail: kernel TCP (emulator) and sattcp", fontsize=10)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=30.0, help="seconds per run (the study's 30)")
    ap.add_argument("--jobs", type=int, default=2, help="emulations at once")
    ap.add_argument("--out", default="out/modern-cc-kernel.csv")
    ap.add_argument("--figure", default="docs/img/modern_cc_kernel.png")
    ap.add_argument("--paths", default=",".join(PATHS), help=f"comma-separated subset of {', '.join(PATHS)}")
    a = ap.parse_args()
    paths = [p for p in a.paths.split(",") if p]
    unknown = [p for p in paths if p not in PATHS]
    if unknown or not paths:
        print(f"modern_cc_kernel: --paths: unknown path {', '.join(unknown) or '(none given)'} (known: {', '.join(PATHS)})", file=sys.stderr)
        return 2
    missing = missing_privileges()
    if missing:
        print("modern_cc_kernel: needs " + "; ".join(missing), file=sys.stderr)
        return 2
    grid = [(p, b) for p in paths for b in (0.0, 1e-6)]
    rows = [sim_run(p, b, f, a.duration) for p, b in grid for f in SIM_FLAVOURS]
    with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        rows += list(ex.map(lambda g: kernel_run(*g), [(p, b, cc, a.duration) for p, b in grid for cc in KERNEL_CCS]))
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)
    figure(rows, ROOT / a.figure if not Path(a.figure).is_absolute() else Path(a.figure), paths)
    for r in rows:
        print(f"{r['path']} ber {r['ber']:g} {r['stack']} {r['cc']}: {r['efficiency']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
