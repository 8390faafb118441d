"""Two builds' results side by side (issue 15): the seeds' 72 study runs and 11 other ATM runs,
each run through both builds and compared whole (every summary, flow and link figure, traces,
warnings) except its event count, digest and wall time. For a change meant to alter speed or
the order of simultaneous events only (docs/atm.md, "Woken late by the egress delay"): prints
the runs that differ and where.

    .venv/bin/python bench/results_ab.py A_PYTHON_DIR B_PYTHON_DIR [--duration 20s]

Each *_PYTHON_DIR is a folder holding a `sattcp` package with its native module, as for
bench/module_ab.py. Each build runs in a process of its own; 100 s runs take a few minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# Beside the study: other drop policies, small buffers with and without partial packet discard,
# bit errors (per cell, drawn as cells leave), the E1 NetPIPE path, bulk traffic, a traced port.
OTHERS: list[tuple[str, dict[str, Any]]] = [
    ("scenarios/kota-wan.toml", {"switch.policy": "ubr"}),
    ("scenarios/kota-wan.toml", {"switch.policy": "ppd"}),
    ("scenarios/kota-wan.toml", {"switch.policy": "fba"}),
    ("scenarios/kota-wan.toml", {"switch.partial_packet_discard": False, "switch.buffer": "150cells", "switch.policy": "ubr"}),
    ("scenarios/kota-wan.toml", {"switch.policy": "sd", "switch.buffer": "120cells"}),
    ("scenarios/kota-wan.toml", {"links.bottleneck.ber": 1e-7}),
    ("scenarios/kota-geo.toml", {"links.bottleneck.ber": 1e-6, "switch.policy": "ppd"}),
    ("scenarios/kota-geo.toml", {"app.kind": "bulk", "switch.policy": "epd"}),
    ("scenarios/netpipe-e1.toml", {"links.bottleneck.ber": 1e-6}),
    ("scenarios/netpipe-e1.toml", {}),
    ("scenarios/kota-wan.toml", {"trace.links": ["bottleneck"], "run.duration": "20s"}),
]
# What may differ: the events popped and their hash, and the time the run took.
VOLATILE = ("events", "digest", "wall_time_s")

_CHILD = """
import json, sys, sattcp
out = []
for scenario, seed, overrides in json.load(sys.stdin):
    d = sattcp.run(scenario, seed=seed, overrides=overrides).to_dict()
    out.append({k: v for k, v in d.items() if k not in sys.argv[1:]})
json.dump(out, sys.stdout)
"""


def _runs(duration: str | None) -> list[tuple[str, int | None, dict[str, Any]]]:
    from sattcp.sweep import load_study, packaged_study

    study = [(s.scenario, s.seed, dict(s.overrides)) for s in load_study(packaged_study("kota-www")).runs()]
    runs = study + [(str(ROOT / s), None, o) for s, o in OTHERS]
    return [(s, seed, {**o, "run.duration": duration} if duration else o) for s, seed, o in runs]


def _results(tree: Path, runs: list[tuple[str, int | None, dict[str, Any]]]) -> list[dict[str, Any]]:
    p = subprocess.run([sys.executable, "-c", _CHILD, *VOLATILE], input=json.dumps(runs), capture_output=True, text=True,
                       cwd=ROOT, env={**os.environ, "PYTHONPATH": str(tree)})
    if p.returncode != 0:
        sys.exit(f"results_ab.py: the build in {tree} failed: {p.stderr.strip().splitlines()[-1] if p.stderr else p.returncode}")
    return json.loads(p.stdout)


def _differences(a: Any, b: Any, path: str = "") -> list[str]:
    """Where two JSON documents differ, as `path: a -> b` lines."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [line for k in sorted(a.keys() | b.keys(), key=str)
                for line in _differences(a.get(k), b.get(k), f"{path}.{k}" if path else str(k))]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [line for i, (x, y) in enumerate(zip(a, b, strict=True)) for line in _differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {json.dumps(a)[:60]} -> {json.dumps(b)[:60]}"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    ap.add_argument("--duration", help="run.duration of every run (default: the scenarios', 100 s for the study)")
    args = ap.parse_args()
    from _venv import require_sattcp

    require_sattcp("bench/results_ab.py")
    for tree in (args.a, args.b):
        if not (tree / "sattcp").is_dir():
            ap.error(f"{tree}: holds no sattcp package (give a folder like the repository's python/)")
    sys.path.insert(0, str(args.b.resolve()))  # (the study's runs, as the build compared sees them)
    runs = _runs(args.duration)
    a, b = (_results(t.resolve(), runs) for t in (args.a, args.b))
    differ = 0
    for (scenario, _, overrides), x, y in zip(runs, a, b, strict=True):
        lines = _differences(x, y)
        if lines:
            differ += 1
            print(f"{Path(scenario).name} {json.dumps(overrides, sort_keys=True)}: {len(lines)} figures differ")
            print("".join(f"    {line}\n" for line in lines[:8]), end="")
    print(f"{len(runs)} runs compared: {len(runs) - differ} identical, {differ} differ "
          f"(everything but {', '.join(VOLATILE)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
