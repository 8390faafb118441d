"""``sattcp netpipe SCENARIO``: run a ping-pong scenario (``app.kind = "pingpong"``, seed 003)
and print NetPIPE's table: block size, transfer time (half the round trip, mean over the
repeats), throughput, the variance of the transfer time and %CDV; ``--out`` writes it as CSV or
Parquet (docs/netpipe.md).

The table gives the throughput twice: ``Mbps`` in 10^6 bit/s, and ``NP Mbps`` in NetPIPE's own
unit, 2^20 bit/s, the unit of seed 003's Table 1 (24576 bytes in 1.257 s print as 0.149).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .errors import OutputPathError, SattcpError, ScenarioError

__all__ = ["NETPIPE_MBPS", "OUT_FORMATS", "cmd_netpipe", "format_netpipe", "register", "write_table"]

#: NetPIPE's "Mbps": 2^20 bits per second (netpipe.c: bits / (t * 1024 * 1024)).
NETPIPE_MBPS = 1024 * 1024
#: What ``--out`` writes.
OUT_FORMATS = (".csv", ".parquet")


def format_netpipe(rows: list[dict[str, Any]]) -> str:
    """NetPIPE's table of a result's ``netpipe`` rows, as text (no pandas needed)."""
    from .cli import _fmt_table

    body = [
        [
            f"{r['bytes']:d}",
            f"{r['repeats']:d}",
            f"{r['time_s']:.6f}",
            f"{r['throughput_bps'] / 1e6:.6f}",
            f"{r['throughput_bps'] / NETPIPE_MBPS:.6f}",
            f"{r['variance_s2']:.3g}",
            f"{r['cdv_pct']:.3f}",
        ]
        for r in rows
    ]
    return _fmt_table(body, ["bytes", "repeats", "time s", "Mbps", "NP Mbps", "variance s^2", "%CDV"])


def write_table(result: Any, path: Path) -> Path:
    """Writes ``result.netpipe`` as CSV, or as Parquet with the scenario and resolved scenario in
    the file's metadata; whole or not at all, a failure naming the file
    (:class:`~sattcp.errors.WriteError`)."""
    from .paths import WholeFiles, write_whole

    table = result.netpipe
    if path.suffix == ".csv":
        return write_whole(path, table.to_csv(index=False))
    import pyarrow as pa

    t = pa.Table.from_pandas(table, preserve_index=False)
    meta = dict(t.schema.metadata or {})
    meta[b"sattcp.table"] = b"netpipe"
    meta[b"sattcp.scenario"] = json.dumps(result.scenario).encode()
    meta[b"sattcp.config"] = json.dumps(result.config).encode()
    with WholeFiles() as files:
        files.parquet(path, t.replace_schema_metadata(meta))
    return path


def _check_out(path: Path) -> None:
    """``--out``'s format, and that the file can be written (before the run)."""
    from .paths import check_file

    if path.is_dir():
        raise OutputPathError(f"--out {path}: is a folder, not a file")
    if path.suffix not in OUT_FORMATS:
        raise OutputPathError(f"--out {path}: unknown format {path.suffix!r} (use .csv or .parquet)")
    check_file(path, "--out")
    if path.suffix == ".parquet" and path.exists() and not path.is_file():  # a device or a pipe
        raise OutputPathError(f"--out {path}: not a regular file (Parquet tables are files; .csv can go to a device or pipe)")


def cmd_netpipe(args: argparse.Namespace) -> int:
    from .api import resolve
    from .cli import EXIT_BAD_INPUT, _parse_set, run_saying_warnings
    from .paths import shown

    overrides = _parse_set(args.set or [], args.seed)
    scenario = Path(args.scenario)
    out = Path(args.out) if args.out is not None else None
    if out is not None:
        try:
            _check_out(out)
        except SattcpError as e:
            print(f"sattcp netpipe: {e}", file=sys.stderr)
            return EXIT_BAD_INPUT
    kind = resolve(scenario, seed=args.seed, overrides=overrides, raw_overrides=True)["app"]["kind"]
    if kind != "pingpong":
        raise ScenarioError([{"path": "app.kind", "rule": "must be \"pingpong\" for sattcp netpipe (NetPIPE's ping-pong; "
                              "see scenarios/netpipe-e1.toml)", "got": json.dumps(kind)}])
    progress = not args.quiet and sys.stderr.isatty()
    result = run_saying_warnings(scenario, seed=args.seed, overrides=overrides, raw_overrides=True, progress=progress)
    s = result.summary
    print(f"{s['name']}: NetPIPE ping-pong, seed {s['seed']}, {s['sim_time_s']:g} s simulated, digest {s['digest']}")
    print(format_netpipe(result.data["netpipe"]))
    if out is not None:
        write_table(result, out)
        print(f"wrote {shown(out)}", file=sys.stderr)
    return 0


def register(subparsers: Any) -> None:
    from .cli import SEED_HELP, SET_HELP, output_path

    p = subparsers.add_parser("netpipe", help="run a ping-pong scenario and print NetPIPE's table",
                              description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("scenario", help="scenario file (.toml) with app.kind = \"pingpong\"")
    p.add_argument("--set", action="append", metavar="PATH=VALUE", help=SET_HELP)
    p.add_argument("--seed", type=int, help=SEED_HELP)
    p.add_argument("--out", metavar="FILE", type=output_path, help="write the table as FILE.csv or FILE.parquet")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_netpipe)
