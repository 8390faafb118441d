"""This machine's headline speed figures in one command (issue 15): the figures the README's
"Speed" section gives per host, each from the command that measures it, and the row of its
per-host table. Prints figures; asserts nothing.

    .venv/bin/python bench/headline.py [--sweeps 3] [--peers]

Why per host: this project's 2-core cloud machine has come as three processors sold as "AMD
EPYC", whose figures differ up to 2.7x for the same build (README, "Speed"). A target such as
"the study's sweep under 10 s" holds on one and not on another, so each figure is given with
the host line (`sattcp.worker.host_id()`) it was measured under. What it runs, in this order:

1. `bench --repeat 3` (`make bench`, built first by cargo): CPU ns per bottleneck packet of
   the 100-flow GEO drop-tail dumbbell with MSS 1024 and of the seeds' ATM WWW scenario.
2. `bench --scale --no-pending --repeat 1` (`make bench-scale`): CPU ns per bottleneck packet
   at 10 and 100,000 flows, their ratio, and the kernel's part at 100,000 (fresh pages).
3. `bench/startup.py --repeat 10`: the least wall time of `sattcp run scenarios/geo-bulk.toml`.
4. `sattcp sweep python/sattcp/studies/kota-www.toml --jobs 2 --no-progress` into a new store,
   `--sweeps` times: the sweep's own time, as it prints it.
5. With `--peers`, `bench/peers --repeat 1` (a few minutes with ns-3; a peer that is not
   installed is skipped): sattcp's CPU-time ratio to ns-2 and ns-3 at GEO and WAN.

Run it on an idle machine: it prints the load average beside the host.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "target/release/examples/bench"
STUDY = ROOT / "python/sattcp/studies/kota-www.toml"

#: `bench`'s per-case rows: name, wall s, cpu s, events, Mev/s, ev/bnpkt, ns/bnpkt, ...
_CASE = re.compile(r"^(?P<name>\S.*?)\s+[\d.]+\s+[\d.]+\s+\d+\s+[\d.]+\s+[\d.]+\s+(?P<ns>\d+)\s")
#: `bench --scale`'s summary rows: flows, cpu ns/bnpkt, vs smallest, of it sys, ...
_SCALE = re.compile(r"^\s+(?P<flows>\d+)\s+(?P<ns>\d+)\s+(?P<ratio>[\d.]+)x\s+(?P<sys>\S+)\s")
#: `bench/startup.py`'s rows of `import sattcp` and of the plain run: the command, then wall min in ms.
_STARTUP = re.compile(r"^(?:python -c 'import (?P<imp>sattcp)'|sattcp run scenarios/geo-bulk\.toml)\s+(?P<ms>[\d.]+) ms")
#: The sweep's last line: `kota-www: 72 runs, ... 72 ok, 0 failed (5.3 s) -> STORE`.
_SWEEP = re.compile(r"(?P<ok>\d+) ok, (?P<failed>\d+) failed \((?P<s>[\d.]+) s\)")
#: `bench/peers`' summary table: | case | peer (flavour) | ... | CPU ratio | wall ratio |.
_PEER = re.compile(r"^\| (?P<case>\w+) \| (?P<peer>ns-\d) \(.*\| (?P<ratio>[\d.]+)x \| [\d.]+x \|$")

#: `bench`'s standing cases quoted (its row names).
CASES = {"droptail GEO, MSS 1024": "dumbbell", "ATM GEO WWW (kota-geo)": "atm_www"}


def parse_cases(out: str) -> dict[str, int]:
    """CPU ns per bottleneck packet of the quoted standing cases, by short name."""
    got = {}
    for line in out.splitlines():
        m = _CASE.match(line)
        if m and m["name"] in CASES:
            got[CASES[m["name"]]] = int(m["ns"])
    return got


def parse_scale(out: str) -> dict[int, tuple[int, float, str]]:
    """Per flow count: CPU ns per bottleneck packet, ratio to the smallest count, the kernel's ns."""
    return {int(m["flows"]): (int(m["ns"]), float(m["ratio"]), m["sys"])
            for m in map(_SCALE.match, out.splitlines()) if m}


def parse_startup(out: str) -> dict[str, float]:
    """The least wall times of `import sattcp` ("import") and `sattcp run
    scenarios/geo-bulk.toml` ("run"), in ms."""
    return {("import" if m["imp"] else "run"): float(m["ms"]) for m in map(_STARTUP.match, out.splitlines()) if m}


def parse_sweep(out: str) -> float | None:
    """The sweep's own time in seconds, if every run was ok."""
    m = _SWEEP.search(out)
    return float(m["s"]) if m and m["failed"] == "0" else None


def parse_peers(out: str) -> dict[tuple[str, str], float]:
    """sattcp's CPU-time ratio to each peer, by (case, peer)."""
    return {(m["case"], m["peer"]): float(m["ratio"]) for m in map(_PEER.match, out.splitlines()) if m}


def _run(cmd: list[str], what: str, *, optional: bool = False) -> str:
    """The command's standard output; a failure ends the script (exit 2) naming the step, or,
    for an optional step, is noted on stderr and gives no output (its figures: not measured)."""
    print(f"{time.strftime('%H:%M:%S')} {what}: {' '.join(str(c) for c in cmd)}", file=sys.stderr, flush=True)
    try:
        p = subprocess.run([str(c) for c in cmd], cwd=ROOT, capture_output=True, text=True)
    except OSError as e:
        why = f"cannot start {cmd[0]}: {e.strerror}"
    else:
        if p.returncode == 0:
            return p.stdout
        tail = (p.stderr or p.stdout).strip().splitlines()[-3:]
        why = f"exit {p.returncode}: {' / '.join(tail)}"
    if optional:
        print(f"bench/headline.py: {what} failed ({why}); its figures are left out", file=sys.stderr)
        return ""
    print(f"bench/headline.py: {what} failed ({why})", file=sys.stderr)
    raise SystemExit(2)


def _span(xs: list[float], fmt: str) -> str:
    lo, hi = min(xs), max(xs)
    return format(lo, fmt) if format(lo, fmt) == format(hi, fmt) else f"{lo:{fmt}}-{hi:{fmt}}"


def _int(n: int | None) -> str | None:
    return None if n is None else f"{n:,}"


def _ratio(r: float | None) -> str:
    """A speed ratio as the README gives it: one decimal below 100."""
    return "-" if r is None else f"{r:.1f}x" if r < 100 else f"{r:.0f}x"


def _build_name() -> str:
    """The commit, with "+" where tracked files differ from it (what ran is then not that commit);
    "?" without git."""
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True).stdout.strip()
    except OSError:
        return "?"
    return (rev + "+" * bool(dirty)) if rev else "?"


def main() -> int:
    from _venv import require_sattcp

    require_sattcp("bench/headline.py")
    from sattcp.cli_study import positive_int
    from sattcp.worker import host_id

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sweeps", type=positive_int, default=3, help="runs of the study's sweep (default: %(default)s)")
    ap.add_argument("--peers", action="store_true", help="also run bench/peers --repeat 1 (minutes with ns-3)")
    args = ap.parse_args()
    sattcp = Path(sys.executable).parent / "sattcp"
    if not sattcp.exists():
        print(f"bench/headline.py: {sattcp} not found: run it with the project's .venv/bin/python after `make build`",
              file=sys.stderr)
        return 2

    host, load, rev = host_id(), os.getloadavg()[0], _build_name()
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    # Every step after the build is optional: one that fails is noted and its figures left out,
    # so that the minutes of figures measured before and after it are still printed.
    _run(["cargo", "build", "--release", "-q", "-p", "sattcp-core", "--example", "bench"], "build")
    cases = parse_cases(_run([BENCH, "--repeat", "3"], "bench --repeat 3", optional=True))
    scale = parse_scale(_run([BENCH, "--scale", "--no-pending", "--repeat", "1"], "bench --scale", optional=True))
    startup = parse_startup(_run([sys.executable, ROOT / "bench/startup.py", "--repeat", "10"], "bench/startup.py", optional=True))
    sweeps = []
    with tempfile.TemporaryDirectory(prefix="sattcp-headline-") as tmp:
        for i in range(args.sweeps):
            store = Path(tmp) / f"sweep{i}.duckdb"
            s = parse_sweep(_run([sattcp, "sweep", STUDY, "--jobs", "2", "--no-progress", "--store", store], "sweep", optional=True))
            if s is not None:
                sweeps.append(s)
    peers = parse_peers(_run([ROOT / "bench/peers", "--repeat", "1"], "bench/peers", optional=True)) if args.peers else {}
    load_after = os.getloadavg()[0]

    small, large = min(scale, default=None), max(scale, default=None)
    print(f"host: {host}; load average {load:.2f} before, {load_after:.2f} after; {when}; build {rev}")
    print("| figure | value | command |\n|---|---|---|")
    rows = [
        ("CPU ns per bottleneck packet, 100-flow GEO dumbbell, MSS 1024", _int(cases.get("dumbbell")), "`bench --repeat 3`"),
        ("CPU ns per bottleneck packet, seeds' ATM WWW (kota-geo)", _int(cases.get("atm_www")), "`bench --repeat 3`"),
    ]
    if small is not None:
        ns, ratio, sys_ns = scale[large]
        rows += [(f"CPU ns per bottleneck packet, {small:,} -> {large:,} flows", f"{scale[small][0]:,} -> {ns:,} ({ratio:.2f}x)",
                  "`bench --scale --no-pending --repeat 1`"),
                 (f"of it in the kernel at {large:,} flows (fresh pages)", f"{sys_ns} ns", "the same")]
    rows += [("`import sattcp`, least wall", f"{startup['import']:.1f} ms" if "import" in startup else None, "`bench/startup.py --repeat 10`"),
             ("`sattcp run scenarios/geo-bulk.toml`, least wall", f"{startup['run']:.1f} ms" if "run" in startup else None, "the same"),
             (f"the 72-run study's sweep on 2 cores ({len(sweeps)} of {args.sweeps} sweeps with every run ok)",
              f"{_span(sweeps, '.1f')} s" if sweeps else None, "`sattcp sweep .../kota-www.toml --jobs 2`")]
    for (case, peer), r in sorted(peers.items()):
        rows.append((f"CPU-time ratio to {peer} at {case.upper()}", _ratio(r), "`bench/peers --repeat 1`"))
    for name, value, cmd in rows:
        print(f"| {name} | {value if value is not None else 'not measured'} | {cmd} |")
    print("\nThe README's row (host | date, build | ns per packet: dumbbell / ATM WWW | 10 -> 100,000 flows "
          "| run geo-bulk (import sattcp) | sweep | ns-2 GEO / WAN, ns-3 GEO / WAN):")
    ns_cell = " / ".join(f"{cases[c]:,}" if c in cases else "-" for c in ("dumbbell", "atm_www"))
    scale_cell = "-"
    if small is not None:
        kernel = f"; {scale[large][2]} ns of it the kernel's" if scale[large][2] != "-" else ""
        scale_cell = f"{scale[small][0]:,} -> {scale[large][0]:,} ns ({scale[large][1]:.2f}x{kernel})"
    startup_cell = " ".join(f"{v}" for v in (f"{startup['run']:.0f} ms" if "run" in startup else "-",
                                             f"({startup['import']:.1f} ms)" if "import" in startup else "") if v)
    sweep_cell = f"{_span(sweeps, '.1f')} s" if sweeps else "-"
    peer_cell = " / ".join(_ratio(peers.get((c, p))) for p in ("ns-2", "ns-3") for c in ("geo", "wan"))
    print(f"| `{host}` | {when[:10]}, {rev} | {ns_cell} | {scale_cell} | {startup_cell} | {sweep_cell} | {peer_cell} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
