"""The ``sattcp`` command line."""

from __future__ import annotations

import contextlib
import sys

from .errors import InternalError, SattcpError, ScenarioError, SimulationError

# argparse and typing (about 10 ms to import) come inside entry(), whose Ctrl-C handler then
# covers them: a Ctrl-C at start-up says "sattcp: interrupted", not a traceback.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    import types
    from collections.abc import Iterator, Sequence
    from typing import Any

    from .api import RunResult

EXIT_BAD_INPUT = 2
EXIT_FAILED = 1
EXIT_INTERNAL = 3


def _parse_set(items: Sequence[str], seed: int | None = None) -> dict[str, str]:
    """The ``--set`` options as raw overrides (key -> the value's text). A key given twice is
    refused, as in Python overrides (:func:`sattcp.api._each_given_once`): by two ``--set``, by
    a ``--set`` and a table value of another holding it (``--set tcp.mss=1000 --set
    'tcp={mss=2000}'``), or, for ``run.seed``, by a ``--set`` and ``--seed``, whatever the values;
    a dict would keep the last without a word."""
    from .api import _each_given_once, _raw_value

    out: dict[str, str] = {}
    problems = []
    settings: list[tuple[str, object, str]] = [] if seed is None else [("run.seed", seed, f"--seed {seed}")]
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            problems.append({"path": item, "rule": "--set takes dotted.path=value, e.g. --set tcp.flavor=sack", "got": repr(item)})
            continue
        key, value = key.strip(), value.strip()
        # Only a table value ("{mss = 1000}") sets keys inside its key: only that text is read
        # (the TOML reader would add its imports to every run's start).
        settings.append((key, _raw_value(value) if value.startswith("{") else value, f"--set {item}"))
        out[key] = value
    if problems:
        raise ScenarioError(problems)
    _each_given_once(settings, "")
    return out


def output_path(value: str) -> str:
    """argparse ``type`` of an output path (``--out``, ``--html``, ``--store``, ``--stats``): an
    empty one is refused (exit 2), not taken for "no option" or for the current folder."""
    import argparse

    if not value:
        raise argparse.ArgumentTypeError("empty path")
    return value


@contextlib.contextmanager
def warnings_to_stderr() -> Iterator[None]:
    """Warnings raised inside (sattcp's resource notes, "a long run: about 2e9 engine events...",
    before a run starts) print as ``sattcp: warning: MESSAGE``, without Python's source line."""
    import warnings

    from .api import SattcpWarning

    with warnings.catch_warnings():
        warnings.simplefilter("always", SattcpWarning)
        warnings.showwarning = lambda message, *a, **k: print(f"sattcp: warning: {message}", file=sys.stderr)
        yield


def run_saying_warnings(scenario: object, **kw: object) -> RunResult:
    """:func:`sattcp.run` with its warnings on stderr as ``sattcp: warning: ...``: those raised
    before the run starts (:func:`warnings_to_stderr`) and those the run reports in its result."""
    from .api import run

    with warnings_to_stderr():
        result = run(scenario, **kw)  # type: ignore[arg-type]
    for w in result.data.get("warnings", []):
        print(f"sattcp: warning: {w}", file=sys.stderr)
    return result


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
    """The readable summary of a run, from its plain data (no pandas: the command starts fast)."""
    s = result.summary
    out = [
        f"{s['name']}: seed {s['seed']}, {s['sim_time_s']:g} s simulated in {s['wall_time_s']:.2f} s wall "
        f"({s['events']:,} events, {s['events_per_s'] / 1e6:.1f} M events/s), digest {s['digest']}",
        f"efficiency {s['efficiency']:.4f} (total goodput {s['total_throughput_bps'] / 1e6:.3f} Mbps of "
        f"{s['capacity_bps'] / 1e6:.3f} Mbps capacity), fairness {_opt(s['fairness'])} (max-min), Jain {_opt(s['jain_fairness'])}",
        f"timeouts {s['timeouts']:,}, fast retransmits {s['fast_retransmits']:,}, "
        f"retransmitted {s['bytes_retransmitted']:,} B, queue drops {s['drops_queue_full']:,}, corrupted {s['drops_corrupted']:,}",
    ]
    # The flows that carry data: a source's own, and the legs a gateway relays (seed 004's
    # SGW, whose end-to-end bytes the summary counts); with a role column where both are shown.
    flows = [f for f in result.data["flows"] if f.get("role") in ("data", "relay")]
    roles = any(f.get("role") != "data" for f in flows)
    rows = [
        [
            int(f["flow"]),
            *([f["role"]] if roles else []),
            f"{f['throughput_bps'] / 1e6:.3f}",
            f"{f['delivered_bytes']:,}",
            f"{f['bytes_retransmitted']:,}",
            f"{int(f['timeouts']):,}",
            f"{int(f['fast_retransmits']):,}",
            f"{f['final_cwnd']:,}",
        ]
        for f in flows
    ]
    out.append("")
    heads = ["flow", *(["role"] if roles else []), "Mbps", "delivered B", "retx B", "RTOs", "fast rtx", "cwnd B"]
    out.append(_fmt_table(_elide(rows, len(heads)), heads))
    # The dumbbell's bottleneck and a path's hops by name; on a graph or a gateway, whose links
    # are named by their ends, every link that carried a packet.
    busy = [ln for ln in result.data["links"] if ln["link"].startswith(("bottleneck", "hop"))]
    busy = busy or [ln for ln in result.data["links"] if ln["packets"] > 0]
    if busy:
        out.append("")
        lrows = [
            [ln["link"], f"{ln['utilization']:.4f}", f"{ln['packets']:,}", f"{int(ln['drops_queue_full']):,}", f"{int(ln['drops_corrupted']):,}",
             f"{ln['peak_queue_bytes']:,}", f"{ln['mean_queue_bytes']:,.0f}"]
            for ln in busy
        ]
        out.append(_fmt_table(_elide(lrows, 7), ["link", "util", "packets", "drops", "corrupt", "peak queue B", "mean queue B"]))
    return "\n".join(out)


def cmd_run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .api import check_output_path, resolve
    from .paths import check_file, shown

    overrides = _parse_set(args.set or [], args.seed)
    if not args.scenario:  # Path("") is ".", which read as "is a directory, got ."
        print("sattcp: scenario: an empty path; give a scenario file (.toml)", file=sys.stderr)
        return EXIT_BAD_INPUT
    # On the command line the scenario is always a file.
    scenario = Path(args.scenario)
    if args.print_config:
        for opt, given in (("--out", args.out), ("--pcap", args.pcap)):
            if given is not None:  # --print-config runs nothing, so there would be nothing to write
                print(f"sattcp: {opt} cannot be given with --print-config (which prints the scenario and runs nothing)", file=sys.stderr)
                return EXIT_BAD_INPUT
        print(resolve(scenario, seed=args.seed, overrides=overrides, raw_overrides=True, format="toml"), end="")
        return 0
    try:
        for opt, given in (("--out", args.out), ("--pcap", args.pcap)):
            # The result would replace the scenario it came from.
            if given is not None and scenario.exists() and Path(given).exists() and Path(given).samefile(scenario):
                raise SattcpError(f"{opt} {shown(given)}: is the scenario file itself; give another file")
        if args.out is not None:
            check_output_path(args.out, "--out")
        if args.pcap is not None:
            if Path(args.pcap).is_dir():  # before the suffix: "give it the suffix" misled for a folder
                raise SattcpError(f"--pcap {args.pcap}: is a folder, not a file (give a file in it, e.g. {Path(args.pcap) / 'run.pcapng'})")
            if Path(args.pcap).suffix != ".pcapng":
                raise SattcpError(f"--pcap {args.pcap}: the file is pcapng; give it the suffix .pcapng")
            check_file(Path(args.pcap), "--pcap")
    except SattcpError as e:
        print(f"sattcp: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.pcap is not None:
        # A packet trace needs packets recorded: every packet unless the scenario (or --set)
        # already selects some (docs/traces.md).
        if resolve(scenario, seed=args.seed, overrides=overrides, raw_overrides=True)["trace"]["packets"] == "none":
            overrides = {**overrides, "trace.packets": '"all"'}
            print("sattcp: --pcap: recording every packet (trace.packets = \"all\"; set it to record fewer)", file=sys.stderr)
    progress = (not args.quiet and sys.stderr.isatty()) or args.progress
    result = run_saying_warnings(scenario, seed=args.seed, overrides=overrides, progress=progress, raw_overrides=True, force=args.force)
    if args.out is not None:
        result.save(args.out)
        for p in result.output_paths(args.out).values():
            print(f"wrote {shown(p)}", file=sys.stderr)
    if args.pcap is not None:
        on_links, drops = result.write_pcap(args.pcap)
        print(f"wrote {shown(args.pcap)} ({on_links:,} packets on the links, {drops:,} drops)", file=sys.stderr)
    if args.json:
        print(result.to_json())
    else:
        print(format_summary(result))
    return 0


#: The help of ``--set`` and ``--seed`` (``run``, ``netpipe``): :func:`_parse_set` refuses a
#: key given twice.
SET_HELP = "override a scenario key, e.g. --set tcp.flavor=sack (repeatable, each key once)"
SEED_HELP = "random seed, 0 to 2^64 - 1 (replaces the scenario's run.seed; not with --set run.seed=, even of the same value)"


def register_run(sub: argparse._SubParsersAction) -> None:
    r = sub.add_parser("run", help="run one scenario and print a summary")
    r.add_argument("scenario", help="scenario file (.toml)")
    r.add_argument("--set", action="append", metavar="PATH=VALUE", help=SET_HELP)
    r.add_argument("--seed", type=int, help=SEED_HELP)
    # What is printed: the result as JSON, or the resolved scenario without running.
    printed = r.add_mutually_exclusive_group()
    printed.add_argument("--json", action="store_true", help="print the whole result as one JSON document")
    r.add_argument("--out", metavar="FILE", type=output_path, help="write the result: FILE.json (everything), or FILE.parquet (flows) "
                   "with FILE.links.parquet and, when traces are recorded, FILE.traces.parquet beside it")
    r.add_argument("--pcap", metavar="FILE.pcapng", type=output_path, help="write the packet trace as pcapng for Wireshark/tshark "
                   "(one interface per link, drops on their own; docs/traces.md); records every packet unless trace.packets selects some")
    printed.add_argument("--print-config", action="store_true", help="print the resolved scenario (every key with its effective value, "
                   "defaults included) as TOML and exit without running")
    r.add_argument("--force", action="store_true", help="run even when the estimated work or trace memory is enormous")
    bar = r.add_mutually_exclusive_group()
    bar.add_argument("--quiet", action="store_true", help="no progress bar")
    bar.add_argument("--progress", action="store_true", help="progress bar even when stderr is not a terminal")
    r.set_defaults(func=cmd_run)


#: Modules whose ``register(subparsers)`` adds subcommands (each sets ``func`` to a function
#: ``(args) -> exit status``). A module that cannot be imported (optional dependencies
#: missing) is left out. Add a module here to add commands.
SUBCOMMAND_MODULES = ["sattcp.cli_study", "sattcp.emulate", "sattcp.netpipe_cli"]


def terminal_columns() -> int:
    """The terminal's width as :func:`shutil.get_terminal_size` gives it (``COLUMNS``, else the
    width of the terminal on stdout, else 80), without importing shutil: shutil brings zlib,
    bz2, lzma and fnmatch, about 4 ms of a ``sattcp run`` that needs none of them (issue 15)."""
    import os

    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


def _parser_class(argparse: types.ModuleType) -> type[argparse.ArgumentParser]:
    """ArgumentParser whose help (and every subcommand's, as ``add_subparsers`` makes them of
    the same class) is laid out for :func:`terminal_columns`. argparse's own formatter imports
    shutil for the width, and builds a formatter for every ``add_argument``."""

    class Formatter(argparse.HelpFormatter):
        def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None) -> None:
            super().__init__(prog, indent_increment, max_help_position, terminal_columns() - 2 if width is None else width)

    class Parser(argparse.ArgumentParser):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault("formatter_class", Formatter)
            super().__init__(*args, **kwargs)

    return Parser


def version_line() -> str:
    """``sattcp VERSION (KIND build[, DETAIL])``: KIND is how the native module was compiled
    (``release``, ``profile-guided``, ``debug``), DETAIL which profile (``stored profile of REV``
    for ``make build`` with the repository's profile; none for ``make build-pgo``'s own); the same
    results either way."""
    import importlib

    from sattcp import __version__

    try:
        _core = importlib.import_module("sattcp._core")
    except ImportError:
        return f"sattcp {__version__} (the simulator is not built: make build)"
    kind, _, detail = _core.build_profile().partition(", ")
    return f"sattcp {__version__} ({kind} build{', ' + detail if detail else ''})"


def _version_action(argparse: Any) -> Any:
    # argparse's own "version" action takes its text when the parser is built, which would import
    # the native module at every start; this one asks only when --version is given.
    class Version(argparse.Action):
        def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                     default: Any = argparse.SUPPRESS, help: str | None = None) -> None:
            super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

        def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
            print(version_line())
            parser.exit()

    return Version


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command; with ``command="run"`` only the run command's (the other
    commands' modules are not imported: ``sattcp run`` starts faster, issue 15)."""
    import argparse
    import importlib

    p = _parser_class(argparse)(prog="sattcp", description="TCP/IP over satellite networks: simulate, sweep, analyse.")
    p.add_argument("--version", action=_version_action(argparse), help="show the version and which build of the simulator this is, and exit")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    register_run(sub)
    for name in SUBCOMMAND_MODULES if command != "run" else []:
        try:
            module = importlib.import_module(name)
        except ImportError:  # e.g. the study commands need the optional analysis dependencies
            continue
        module.register(sub)
    return p


def entry() -> None:
    """The ``sattcp`` command (pyproject's ``[project.scripts]``, ``python -m sattcp.cli``):
    :func:`main`, and a Ctrl-C at any moment, start-up included (the imports and the parser,
    before :func:`main`'s handler is in place), exits 130 saying ``sattcp: interrupted``, without
    a traceback."""
    try:
        status = main()
    except KeyboardInterrupt as e:
        print(f"sattcp: {str(e) or 'interrupted'}", file=sys.stderr)
        status = 130
    sys.exit(status)


def _refuse_unknown_option(parser: argparse.ArgumentParser, first: str) -> None:
    """An unknown option before the command (``sattcp --versoin``) is named as such, with the
    option meant; argparse would say only that COMMAND is missing. Its prefixes of the known
    options (``--vers``) pass, as argparse takes them."""
    known = ("--help", "--version")
    if not first.startswith("-") or first in ("-h", "--") or (first.startswith("--") and any(k.startswith(first) for k in known)):
        return
    import difflib

    close = difflib.get_close_matches(first, known, n=1)
    parser.error(f"unknown option {first}" + (f" (did you mean {close[0]}?)" if close else "") + "; the options of a command come after it")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv[0] if argv else None)
    _refuse_unknown_option(parser, argv[0] if argv else "")
    args = parser.parse_args(argv)
    try:
        status = int(args.func(args) or 0)
        # Written here, inside the handlers: a reader that went away (`| head`) is a
        # BrokenPipeError now, not at interpreter exit.
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        # The reader (e.g. `head`) closed the pipe: stop quietly, as Unix tools do. Python
        # would flush stdout again at exit and fail; point it at /dev/null first.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt as e:
        # SimulationInterrupted says how far the run got; a bare Ctrl-C says nothing.
        print(f"sattcp: {str(e) or 'interrupted'}", file=sys.stderr)
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


if __name__ == "__main__":
    entry()
