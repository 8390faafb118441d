"""Start-up cost of the Python front (issue 15): ``import sattcp`` and a whole
``sattcp run scenarios/geo-bulk.toml`` (100 s of one GEO bulk flow), against a bare
interpreter. Prints figures; asserts nothing.

    .venv/bin/python bench/startup.py [--repeat 15]

For each command: the minimum and median wall time over the repeats, and the minimum CPU time
(user + system, from the children's rusage): on a loaded machine the CPU time is the steadier
figure, the wall-time minimum the closer to an idle machine's. It also checks that neither
pandas nor numpy nor pyarrow is imported by ``import sattcp`` or by ``sattcp run``.

The commands run as a user's would: with bytecode caches. ``PYTHONDONTWRITEBYTECODE`` is
removed from the children's environment (where it is set, as in this project's build sandbox,
every start compiles sattcp's sources again: about 20 ms more CPU time) and each command runs
once, unmeasured, before the repeats (it writes the caches).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
HEAVY = ("pandas", "numpy", "pyarrow", "matplotlib", "duckdb", "scipy")


#: The children's environment: as a user's, with bytecode caches written and read.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def measure(cmd: list[str], repeat: int) -> tuple[float, float, float]:
    subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=ENV)
    walls, cpus = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=ENV)
        walls.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return min(walls), statistics.median(walls), min(cpus)


def heavy_modules(code: str) -> list[str]:
    probe = f"{code}\nimport sys\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([PY, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # The minimum and median need one run at least. (Imported here, in the harness only: the
    # start-ups measured run in their own processes.)
    from _venv import require_sattcp

    require_sattcp("bench/startup.py")
    from sattcp.cli_study import positive_int
    from sattcp.worker import host_id

    ap.add_argument("--repeat", type=positive_int, default=15, help="runs of each command (default: %(default)s)")
    args = ap.parse_args()
    sattcp_cmd = [str(Path(PY).parent / "sattcp")] if (Path(PY).parent / "sattcp").exists() else [PY, "-m", "sattcp.cli"]
    cases = [
        ("python -c pass (floor)", [PY, "-c", "pass"]),
        ("python -c 'import sattcp'", [PY, "-c", "import sattcp"]),
        ("sattcp run scenarios/geo-bulk.toml", [*sattcp_cmd, "run", "scenarios/geo-bulk.toml"]),
        ("sattcp run scenarios/geo-bulk.toml --json", [*sattcp_cmd, "run", "scenarios/geo-bulk.toml", "--json"]),
    ]
    print(f"host: {host_id()}; load average {os.getloadavg()[0]:.1f}; {args.repeat} repeats each"
          f"{' (PYTHONDONTWRITEBYTECODE unset for the children: bytecode caches used)' if 'PYTHONDONTWRITEBYTECODE' in os.environ else ''}")
    print(f"{'command':<42} {'wall min':>9} {'wall median':>12} {'CPU min':>9}")
    for name, cmd in cases:
        wmin, wmed, cmin = measure(cmd, args.repeat)
        print(f"{name:<42} {wmin * 1e3:7.1f} ms {wmed * 1e3:9.1f} ms {cmin * 1e3:6.1f} ms")
    run_code = ("import sys; sys.argv = ['sattcp', 'run', 'scenarios/geo-bulk.toml']\n"
                "import contextlib, io\nfrom sattcp.cli import main\n"
                "with contextlib.redirect_stdout(io.StringIO()): main()")
    for what, code in (("import sattcp", "import sattcp"), ("sattcp run", run_code)):
        heavy = heavy_modules(code)
        print(f"modules loaded by {what}: {', '.join(heavy) if heavy else 'none of ' + ', '.join(HEAVY)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
