"""The ``sattcp`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .errors import InternalError, SattcpError, ScenarioError, SimulationError

EXIT_BAD_INPUT = 2
EXIT_FAILED = 1
EXIT_INTERNAL = 3


def _parse_set(items: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    problems = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            problems.append({"path": item, "rule": "--set takes dotted.path=value, e.g. --set tcp.flavor=sack", "got": repr(item)})
            continue
        out[key.strip()] = value.strip()
    if problems:
        raise ScenarioError(problems)
    return out


def _fmt_table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = lambda r: "  ".join(str(c).rjust(w) for c, w in zip(r, widths, strict=False))  # noqa: E731
    return "\n".join([line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def _elide(rows: list[list], width: int, keep: int = 5) -> list[list]:
    """The first and last `keep` rows of a long table, with a row of dots between."""
    if len(rows) <= 2 * keep + 2:
        return rows
    return rows[:keep] + [["..."] * width] + rows[-keep:]


def _opt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4f}"


def format_summary(result) -> str:  # noqa: ANN001 - RunResult, imported lazily
    s = result.summary
    out = [
        f"{s['name']}: seed {s['seed']}, {s['sim_time_s']:g} s simulated in {s['wall_time_s']:.2f} s wall "
        f"({s['events']:,} events, {s['events_per_s'] / 1e6:.1f} M events/s), digest {s['digest']}",
        f"efficiency {s['efficiency']:.4f} (total goodput {s['total_throughput_bps'] / 1e6:.3f} Mbps of "
        f"{s['capacity_bps'] / 1e6:.3f} Mbps capacity), fairness {_opt(s['fairness'])} (max-min), Jain {_opt(s['jain_fairness'])}",
        f"timeouts {s['timeouts']}, fast retransmits {s['fast_retransmits']}, "
        f"retransmitted {s['bytes_retransmitted']:,} B, queue drops {s['drops_queue_full']}, corrupted {s['drops_corrupted']}",
    ]
    flows = result.flows[result.flows.role == "data"]
    rows = [
        [
            int(f.flow),
            f"{f.throughput_bps / 1e6:.3f}",
            f"{f.delivered_bytes:,}",
            f"{f.bytes_retransmitted:,}",
            int(f.timeouts),
            int(f.fast_retransmits),
            f"{f.final_cwnd:,}",
        ]
        for f in flows.itertuples()
    ]
    rows = _elide(rows, 7)
    out.append("")
    out.append(_fmt_table(rows, ["flow", "Mbps", "delivered B", "retx B", "RTOs", "fast rtx", "cwnd B"]))
    links = result.links
    busy = links[(links.link.str.startswith("bottleneck")) | (links.link.str.startswith("hop"))]
    if len(busy):
        out.append("")
        lrows = [
            [ln.link, f"{ln.utilization:.4f}", f"{ln.packets:,}", int(ln.drops_queue_full), int(ln.drops_corrupted), f"{ln.peak_queue_bytes:,}", f"{ln.mean_queue_bytes:,.0f}"]
            for ln in busy.itertuples()
        ]
        out.append(_fmt_table(_elide(lrows, 7), ["link", "util", "packets", "drops", "corrupt", "peak queue B", "mean queue B"]))
    return "\n".join(out)


def cmd_run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .api import check_output_path, run

    overrides = _parse_set(args.set or [])
    if args.out:
        try:
            check_output_path(args.out)
        except SattcpError as e:
            print(f"sattcp: {e}", file=sys.stderr)
            return EXIT_BAD_INPUT
    # On the command line the scenario is always a file.
    result = run(Path(args.scenario), seed=args.seed, overrides=overrides, progress=not args.quiet and sys.stderr.isatty() or args.progress, raw_overrides=True)
    for w in result.data.get("warnings", []):
        print(f"sattcp: warning: {w}", file=sys.stderr)
    if args.out:
        path = result.save(args.out)
        print(f"wrote {path}", file=sys.stderr)
    if args.json:
        print(result.to_json())
    else:
        print(format_summary(result))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sattcp", description="TCP/IP over satellite networks: simulate, sweep, analyse.")
    p.add_argument("--version", action="version", version=f"sattcp {__import__('sattcp').__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    r = sub.add_parser("run", help="run one scenario and print a summary")
    r.add_argument("scenario", help="scenario file (.toml)")
    r.add_argument("--set", action="append", metavar="PATH=VALUE", help="override a scenario key, e.g. --set tcp.flavor=sack (repeatable)")
    r.add_argument("--seed", type=int, help="random seed (replaces run.seed)")
    r.add_argument("--json", action="store_true", help="print the whole result as one JSON document")
    r.add_argument("--out", metavar="FILE", help="write the result (.json or .parquet)")
    r.add_argument("--quiet", action="store_true", help="no progress bar")
    r.add_argument("--progress", action="store_true", help="progress bar even when stderr is not a terminal")
    r.set_defaults(func=cmd_run)
    try:
        from . import cli_study
    except ImportError:  # the study commands need the optional analysis dependencies
        cli_study = None
    if cli_study is not None:
        cli_study.register(sub)
    from . import emulate

    emulate.register(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt as e:
        # SimulationInterrupted says how far the run got; a bare Ctrl-C says nothing.
        print(f"sattcp: {e or 'interrupted'}", file=sys.stderr)
        return 130
    except ScenarioError as e:
        print(f"sattcp: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except InternalError as e:
        print(f"sattcp: internal error (please report): {e}", file=sys.stderr)
        return EXIT_INTERNAL
    except (SimulationError, SattcpError) as e:
        print(f"sattcp: {e}", file=sys.stderr)
        return EXIT_FAILED
    except OSError as e:
        # Writing a result or reading a file failed: say which and why, no traceback.
        print(f"sattcp: {e.strerror or e}: {e.filename or ''}".rstrip(": "), file=sys.stderr)
        return EXIT_FAILED
    except BrokenPipeError:
        # The reader (e.g. `head`) closed the pipe: stop quietly, as Unix tools do.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
