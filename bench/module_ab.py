"""Two builds of the Python module, alternately (issue 15): CPU seconds of `sattcp.run` per
scenario, for the plain build against the profile-guided one (`make build-pgo`), or any two.

    .venv/bin/python bench/module_ab.py A_PYTHON_DIR B_PYTHON_DIR [--rounds 3] [SCENARIO ...]

Each *_PYTHON_DIR is a folder holding a `sattcp` package with its native module (the repository's
`python/`, or a worktree's with another build's `_core.abi3.so` copied in). Every round runs each
build in a fresh process, one after the other, so the machine's drift is shared; each process
runs every scenario three times and keeps its least CPU time. Prints every round, the median
per build and scenario, and whether the run digests agree (they must: the build changes speed only).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ["scenarios/kota-wan.toml", "scenarios/kota-geo.toml", "scenarios/geo-dumbbell-droptail.toml"]

_CHILD = """
import json, sys, time, sattcp
out = {}
for s in sys.argv[1:]:
    best = None
    for _ in range(3):
        t = time.process_time()
        r = sattcp.run(s)
        dt = time.process_time() - t
        best = dt if best is None else min(best, dt)
    out[s] = (best, r.summary["digest"])
print(json.dumps(out))
"""


def _measure(tree: Path, scenarios: list[str]) -> dict[str, tuple[float, str]]:
    p = subprocess.run([sys.executable, "-c", _CHILD, *scenarios], env={**os.environ, "PYTHONPATH": str(tree)},
                       capture_output=True, text=True, cwd=ROOT)
    if p.returncode != 0:
        sys.exit(f"module_ab.py: the build in {tree} failed: {p.stderr.strip().splitlines()[-1] if p.stderr else p.returncode}")
    return {k: (v[0], v[1]) for k, v in json.loads(p.stdout).items()}


def main() -> int:
    # (The harness's own imports: the runs measured start in their own processes.)
    from _venv import require_sattcp

    require_sattcp("bench/module_ab.py")
    from sattcp.cli_study import positive_int
    from sattcp.worker import host_id

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    ap.add_argument("scenarios", nargs="*", default=DEFAULT)
    ap.add_argument("--rounds", type=positive_int, default=3)
    args = ap.parse_intermixed_args()
    for tree in (args.a, args.b):
        if not (tree / "sattcp").is_dir():
            ap.error(f"{tree}: holds no sattcp package (give a folder like the repository's python/)")
    for s in args.scenarios:
        if not (ROOT / s).is_file():
            ap.error(f"{s}: no such scenario file (paths are from the repository's root)")
    print(f"host: {host_id()}; load average {os.getloadavg()[0]:.1f}", flush=True)
    times: dict[tuple[str, str], list[float]] = {}
    digests: dict[str, set[str]] = {}
    for r in range(1, args.rounds + 1):
        for label, tree in (("A", args.a), ("B", args.b)):
            got = _measure(tree.resolve(), args.scenarios)
            print(f"round {r} {label}: " + "  ".join(f"{Path(s).stem} {t:.3f} s" for s, (t, _) in got.items()), flush=True)
            for s, (t, d) in got.items():
                times.setdefault((label, s), []).append(t)
                digests.setdefault(s, set()).add(d)
    print("\nscenario                      A median CPU s   B median CPU s   B/A   digests")
    for s in args.scenarios:
        a, b = statistics.median(times[("A", s)]), statistics.median(times[("B", s)])
        same = "same" if len(digests[s]) == 1 else "DIFFER"
        print(f"{Path(s).stem:<29} {a:>14.3f}   {b:>14.3f}   {b / a:.2f}   {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
