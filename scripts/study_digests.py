"""The 72 run digests of the seeds' study (`sattcp reproduce kota-www`), the guard that a
refactor changes no behaviour.

    .venv/bin/python scripts/study_digests.py            # compare with tests/data/kota-www-digests.tsv
    .venv/bin/python scripts/study_digests.py --write    # record them (a deliberate change only)

Each row: block, flavour, policy, buffer label, seed, events, digest, efficiency, fairness.
tests/test_digests.py runs the same comparison in the suite.
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STORED = ROOT / "tests" / "data" / "kota-www-digests.tsv"
HEADER = "block\ttcp.flavor\tswitch.policy\tswitch.buffer\tseed\tevents\tdigest\tefficiency\tfairness"


def _one(args: tuple[str, str, dict, int, dict]) -> str:
    import sattcp

    block, scenario, overrides, seed, labels = args
    r = sattcp.run(scenario, seed=seed, overrides=overrides)
    s = r.summary
    return "\t".join([block, labels["tcp.flavor"], labels["switch.policy"], labels["switch.buffer"], str(seed),
                      str(s["events"]), s["digest"], f"{s['efficiency']:.6f}", f"{s['fairness']:.6f}"])


def compute(jobs: int = 2) -> list[str]:
    from sattcp.sweep import load_study, packaged_study

    study = load_study(packaged_study("kota-www"))
    work = [(spec.block, str(ROOT / spec.scenario) if not Path(spec.scenario).is_absolute() else spec.scenario,
             dict(spec.overrides), spec.seed, {k: str(v) for k, v in spec.factors.items()}) for spec in study.runs()]
    with ProcessPoolExecutor(max_workers=jobs) as ex:
        return [HEADER, *ex.map(_one, work)]


def diff(now: list[str], stored: list[str]) -> list[str]:
    """Readable differences, one line per changed row."""
    out = []
    if len(now) != len(stored):
        out.append(f"row count: {len(stored)} stored, {len(now)} now")
    for a, b in zip(stored, now, strict=False):
        if a != b:
            out.append(f"- {a}\n+ {b}")
    return out


def main() -> int:
    from sattcp.cli_study import positive_int

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="record the digests instead of comparing")
    ap.add_argument("--jobs", type=positive_int, default=2, help="parallel runs (default: %(default)s)")
    a = ap.parse_args()
    rows = compute(a.jobs)
    if a.write:
        STORED.write_text("\n".join(rows) + "\n", encoding="utf-8")
        print(f"wrote {len(rows) - 1} digests to {STORED.relative_to(ROOT)}")
        return 0
    d = diff(rows, STORED.read_text(encoding="utf-8").splitlines())
    print("\n".join(d) if d else f"all {len(rows) - 1} digests identical")
    return 1 if d else 0


if __name__ == "__main__":
    sys.exit(main())
