"""The seeds' whole study gives the same 72 run digests as recorded: any change of behaviour
anywhere in the core (TCP, ATM, workload, engine) shows up here. A deliberate change re-records
them with `scripts/study_digests.py --write` and says why in its commit."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def _script() -> ModuleType:
    # Imported by name (not from a file spec) so that its worker function pickles.
    if str(ROOT / "scripts") not in sys.path:
        sys.path.insert(0, str(ROOT / "scripts"))
    import study_digests

    return study_digests


def test_kota_www_digests_unchanged() -> None:
    mod = _script()
    stored = mod.STORED.read_text(encoding="utf-8").splitlines()
    assert len(stored) == 73 and stored[0] == mod.HEADER
    now = mod.compute(jobs=2)
    differences = mod.diff(now, stored)
    assert not differences, "study digests changed:\n" + "\n".join(differences[:10])


def test_diff_names_the_changed_row() -> None:
    mod = _script()
    stored = [mod.HEADER, "WAN\tsack\tepd\t1bdp\t1\t10\tabc\t0.9\t0.9"]
    now = [mod.HEADER, "WAN\tsack\tepd\t1bdp\t1\t11\tabd\t0.9\t0.9"]
    d = mod.diff(now, stored)
    assert len(d) == 1 and "abd" in d[0] and "abc" in d[0]
    assert mod.diff(stored, stored) == []
