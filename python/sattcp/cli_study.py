"""Command-line subcommands for studies: ``sweep``, ``analyze``, ``export`` and ``reproduce``.

``sattcp.cli`` calls :func:`register` with its argparse subparsers; each subcommand sets
``handler`` (and ``func``) to a function ``(args) -> int`` returning the exit status:
0 success, 1 runs failed, the simulator is unavailable, the store is locked by another
process or cannot be written (a full disk), or what runs the sweep stopped it (a Dask scheduler
that does not answer or fails the sweep, workers of another sattcp build), 2 bad input (invalid
study, missing/damaged/foreign store, unknown study), 130 interrupted (Ctrl-C), 143 terminated
(SIGTERM).
``python -m sattcp.cli_study ...`` runs them without the main CLI.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["main", "positive_int", "register"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED, EXIT_TERMINATED = 0, 1, 2, 130, 143


def _err(cmd: str, msg: str) -> None:
    print(f"sattcp {cmd}: error: {msg}", file=sys.stderr)


def _load_runner(spec: str | None, cluster: str | None) -> Callable[..., Any] | None:
    """``--runner module:function`` (a stand-in for sattcp.api.run, e.g. for tests), checked
    as run_sweep checks a runner (:func:`sattcp.sweep.check_runner`), before anything is created."""
    from sattcp.sweep import check_runner

    if not spec:
        return None
    mod, _, name = spec.partition(":")
    if not name:
        raise ValueError(f"--runner must be MODULE:FUNCTION, got {spec!r}")
    # MODULE may be a file in the working folder, as with `python -m` (and gunicorn's or uvicorn's
    # MODULE:FUNCTION), which the `sattcp` command's path lacks: appended, so that it shadows no
    # installed module (a sweep's spawned workers inherit the path; a cluster's need it their own).
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())
    try:
        fn = getattr(importlib.import_module(mod), name)
    except (ImportError, AttributeError) as e:
        raise ValueError(f"--runner {spec!r}: {e}") from e
    check_runner(fn, cluster, f"--runner {spec}")
    return fn


#: What an interrupted command has kept, by how it keeps its runs (see :func:`_guard`).
SAVED = "every finished run is saved, run the same command to resume"
IN_MEMORY = "this study keeps its runs in memory: nothing was saved, a rerun starts over"
#: Studies of ``reproduce`` that run their own experiments in memory, with no results store.
IN_MEMORY_STUDIES = ("zhou-sgw", "netpipe-sat")


def interrupted_message(terminated: bool, kept: str | None) -> str:
    """What ``_guard`` says when Ctrl-C (or SIGTERM) stops a command; ``kept`` is what is left
    (:data:`SAVED`, :data:`IN_MEMORY`), None for a command that runs nothing (analyze, export)."""
    how = "terminated (SIGTERM)" if terminated else "interrupted"
    return f"{how}; {kept}" if kept else how


def _guard(cmd: str, body: Callable[[], int], kept: str | None = SAVED) -> int:
    """Run a handler body, turning expected errors into a message and an exit status. ``kept``:
    what an interruption leaves, for its message (:func:`interrupted_message`)."""
    import duckdb

    from sattcp.errors import InternalError, SattcpError, WriteError
    from sattcp.store import StoreLocked
    from sattcp.sweep import SimulatorUnavailable, Terminated

    try:
        return body()
    except KeyboardInterrupt as e:
        terminated = isinstance(e, Terminated)
        unsaved = getattr(e, "unsaved", 0)  # (run_sweep's: its store stayed locked to the end)
        if unsaved and kept == SAVED:
            kept = (f"every finished run is saved but the {unsaved} that could not be written (they "
                    "run again), run the same command to resume")
        _err(cmd, interrupted_message(terminated, kept))
        return EXIT_TERMINATED if terminated else EXIT_INTERRUPTED
    except SimulatorUnavailable as e:
        _err(cmd, str(e))
        return EXIT_FAILED
    except StoreLocked as e:
        _err(cmd, str(e))
        return EXIT_FAILED
    except WriteError as e:  # a full disk: "cannot write PATH: ..."
        _err(cmd, str(e))
        return EXIT_FAILED
    except duckdb.Error as e:
        # Damage found while reading (opening the file checks only its header and catalogue).
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        _err(cmd, f"cannot read the results store (DuckDB: {first}); the file may be damaged")
        return EXIT_USAGE
    except (ValueError, FileNotFoundError, KeyError) as e:
        msg = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
        _err(cmd, str(msg))
        return EXIT_USAGE
    except InternalError:
        raise  # (sattcp.cli says it as a bug to report, with its own exit status)
    except SattcpError as e:
        # What stops a sweep that is not the input's fault: a Dask scheduler that does not
        # answer or fails the sweep (ClusterError), workers of another build (BuildMismatch),
        # workers that cannot start. (They came out as a traceback of `python -m
        # sattcp.cli_study`; `sattcp` said them as `sattcp: ...`, exit 1.)
        _err(cmd, str(e))
        return EXIT_FAILED


def _add_run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--jobs", "-j", type=positive_int, default=None,
                   help="parallel runs on this machine (default: all cores); with --cluster, the most "
                        "runs in flight (default: twice the cluster's worker threads)")
    p.add_argument("--cluster", metavar="ADDRESS", default=None,
                   help="run on a Dask distributed scheduler, e.g. tcp://10.0.0.1:8786")
    p.add_argument("--retry-failed", action="store_true", help="run again the runs that failed")
    p.add_argument("--no-progress", action="store_true", help="no progress line on stderr")
    p.add_argument("--runner", metavar="MODULE:FUNCTION", default=None,
                   help="use another function than sattcp.api.run (testing, other simulators)")


def register(subparsers: Any) -> None:
    """Add ``sweep``, ``analyze``, ``export`` and ``reproduce`` to an argparse subparsers object."""
    from sattcp.cli import output_path

    p = subparsers.add_parser("sweep", help="run every combination of a study's factors",
                              description="Run a study's full factorial x replications into a "
                              "DuckDB store; runs already stored are skipped (resume).")
    p.add_argument("study", metavar="STUDY.toml", help="study file")
    p.add_argument("--store", default="results.duckdb", type=output_path, help="results file (default: %(default)s)")
    p.add_argument("--quick", action="store_true", help="the study's reduced [quick] variant")
    p.add_argument("--set", action="append", metavar="PATH=VALUE",
                   help="override a scenario key in every run, over the study's overrides, e.g. "
                        "--set tcp.rtt_estimator=ns2 (repeatable, each key once; not a factor or run.seed)")
    _add_run_options(p)
    p.set_defaults(handler=cmd_sweep, func=cmd_sweep)

    p = subparsers.add_parser("analyze", help="allocation of variation of a stored study",
                              description="Allocation of variation, main effects and confidence "
                              "intervals (seed 000 4.4.1) per block and response.")
    p.add_argument("store", metavar="STORE", help="results file (.duckdb)")
    p.add_argument("--study", required=True, help="study name in the store")
    p.add_argument("--response", action="append", default=None,
                   help="response to analyse (repeatable; default: the study's responses)")
    p.add_argument("--block", default=None, help="only this block (e.g. GEO)")
    p.add_argument("--confidence", type=float, default=0.90, help="default: %(default)s")
    p.add_argument("--html", metavar="DIR", default=None, type=output_path,
                   help="also write DIR/report.html (figures embedded), variation.csv, effects.csv")
    p.add_argument("--allow-mixed-builds", action="store_true",
                   help="analyse even if the runs were made by different sattcp builds")
    p.set_defaults(handler=cmd_analyze, func=cmd_analyze)

    p = subparsers.add_parser("export", help="write a store's tables as Parquet or CSV files",
                              description="Write runs (factors and summary values as columns), "
                              "flows, links, traces and studies, keyed by study and run_key "
                              "(docs/analysis.md).")
    p.add_argument("store", metavar="STORE")
    p.add_argument("--out", required=True, type=output_path, help="output folder")
    p.add_argument("--format", choices=["parquet", "csv"], default="parquet")
    p.add_argument("--study", default=None, help="only this study")
    p.add_argument("--include-stale", action="store_true",
                   help="also the runs of earlier definitions or builds of a study (column current)")
    p.set_defaults(handler=cmd_export, func=cmd_export)

    p = subparsers.add_parser("reproduce", help="reproduce a seed study and write a report",
                              description="Run a packaged study (kota-www: seed 000 Tables 5-13) "
                              "and write an HTML report comparing with the paper.")
    p.add_argument("name", choices=["kota-www", "zhou-sgw", "modern-cc", "netpipe-sat"],
                   help="kota-www: seeds 000-002 Tables 5-13; zhou-sgw: seed 004's satellite gateway "
                        "experiments; modern-cc: our own, CUBIC/BBR/Hybla/NewReno/SACK; netpipe-sat: "
                        "seed 003's NetPIPE experiments")
    p.add_argument("--real", action="store_true",
                   help="netpipe-sat: also on the kernel's TCP through `sattcp emulate` (root, NPtcp)")
    p.add_argument("--rt-priority", type=rt_priority, default=None, metavar="N",
                   help="netpipe-sat --real: run NPtcp and the ping-pong at SCHED_FIFO priority N (1-9, below "
                        "the emulator's 10), so that a busy machine's scheduling does not enter the times")
    p.add_argument("--quick", action="store_true", help="reduced variant (about a minute)")
    p.add_argument("--replications", type=positive_int, default=None, metavar="N",
                   help="N runs (seeds 1..N) per combination instead of the paper's one; the "
                        "analysis then separates pure error from interactions")
    p.add_argument("--set", action="append", metavar="PATH=VALUE",
                   help="kota-www, modern-cc: override a scenario key in every run, e.g. --set tcp.mss=1024 "
                        "(repeatable, each key once; not a factor or run.seed); the report says so, and the "
                        "default folder becomes out/NAME-PATH=VALUE")
    p.add_argument("--out", default=None, type=output_path,
                   help="output folder (default: out/NAME[-quick][-rN][-PATH=VALUE...])")
    _add_run_options(p)
    p.set_defaults(handler=cmd_reproduce, func=cmd_reproduce)


def _print_failures(st: Any, store: str | Path, study: str, block: str | None, again: str) -> None:
    """Why runs failed, without opening the store by hand: on stderr, the commonest first lines
    of the errors (:meth:`Store.failures`, of ``block`` if given) and where the rest is;
    ``again`` says how to run them again."""
    failures = st.failures(study, block=block)
    for first, n in failures:
        print(f"failed: {n} run(s): {first}", file=sys.stderr)
    if failures:
        print(f"note: each failed run's whole error is in the store (runs.error; sattcp export "
              f"{store} --out DIR writes it); {again}", file=sys.stderr)


def _print_sweep(s: Any) -> None:
    print(f"{s.study}: {s.total} runs, {s.skipped} already stored, {s.ok} ok, {s.failed} failed "
          f"({s.wall_time_s:.1f} s) -> {s.store}")
    if s.failed:
        from sattcp.store import Store

        with Store(s.store, read_only=True) as st:
            _print_failures(st, s.store, s.study, None, "the same command with --retry-failed runs them again")
    if s.stale:
        print(f"note: {s.stale} stored run(s) of {s.study} come from an earlier version of its "
              "scenario, study file or sattcp build; they are kept but not analysed (sattcp "
              "export --include-stale writes them)", file=sys.stderr)


def _check_cluster(address: str | None) -> None:
    from sattcp.sweep import check_cluster

    check_cluster(address, "--cluster")


def _with_sets(study: Any, items: list[str]) -> Any:
    """``study`` (a :class:`sattcp.sweep.Study`) with the ``--set`` options applied to every run
    (:meth:`sattcp.sweep.Study.with_sets`), each value as the core reads ``--set`` text (a table
    value, ``--set 'tcp={mss=1000}'``, sets its dotted keys)."""
    from sattcp.api import _raw_value
    from sattcp.cli import _parse_set

    return study.with_sets({k: _raw_value(v) for k, v in _parse_set(items).items()})


def sets_suffix(items: list[str]) -> str:
    """The default output folder's suffix for ``reproduce --set``: the settings as given
    (``-tcp.mss=1024``), characters a folder name should not hold replaced by ``_``; a hash of
    them where they would make a name longer than 60 characters. So a changed set-up never
    lands in the paper's folder (whose runs its definition would make stale)."""
    import hashlib

    text = ",".join(items)
    safe = re.sub(r"[^A-Za-z0-9._=,+-]", "_", text)
    if len(safe) > 60:
        safe = "set-" + hashlib.sha256(text.encode()).hexdigest()[:12]
    return "-" + safe


def cmd_sweep(args: argparse.Namespace) -> int:
    from sattcp.paths import check_file
    from sattcp.store import check_store_path
    from sattcp.sweep import run_sweep

    def body() -> int:
        # Every option is checked before the store is created.
        runner = _load_runner(args.runner, args.cluster)
        _check_cluster(args.cluster)
        check_store_path(args.store, "--store")
        check_file(args.store, "--store", side_files=True)
        study: Any = args.study
        if args.set:
            from sattcp.sweep import load_study

            study = _with_sets(load_study(args.study), args.set)
        s = run_sweep(study, args.store, jobs=args.jobs, cluster=args.cluster,
                      runner=runner, progress=not args.no_progress,
                      retry_failed=args.retry_failed, quick=args.quick)
        _print_sweep(s)
        return EXIT_FAILED if s.failed else EXIT_OK

    return _guard("sweep", body)


def analyze_text(store: str | Path, study: str, responses: Sequence[str] | None = None,
                 block: str | None = None, confidence: float = 0.90) -> str:
    """The text that ``sattcp analyze`` prints."""
    from sattcp.report import analyse_study

    results = analyse_study(store, study, list(responses or []) or None, block, confidence)
    return "\n".join(f"== {study} / {b} / {r}\n{a.to_text()}\n" for (b, r), a in results.items())


def _check_builds(store: str | Path, study: str, allow_mixed: bool) -> None:
    from sattcp.store import Store

    with Store(store, read_only=True) as st:
        st.study_definition(study)  # KeyError naming the studies present
        if allow_mixed:
            builds = st.builds(study)
            if len(builds) > 1:
                print(f"warning: the runs of {study} come from {len(builds)} sattcp builds: "
                      + ", ".join(f"{b} ({n})" for b, n in builds.items()), file=sys.stderr)
        else:
            st.check_one_build(study)


def _print_left_out(store: str | Path, study: str, block: str | None) -> None:
    """On stderr, before the analysis: the runs it leaves out (failed, not stored) and the
    replications it lacks (:func:`sattcp.report.run_notes`), and why runs failed."""
    from sattcp.report import run_notes
    from sattcp.store import Store

    with Store(store, read_only=True) as st:
        definition = st.study_definition(study)
        runs = st.runs(study)
        for n in run_notes(runs, definition, block):
            print(f"note: {n}", file=sys.stderr)
        _print_failures(st, store, study, block, "sattcp sweep with --retry-failed runs them again")


def cmd_analyze(args: argparse.Namespace) -> int:
    def body() -> int:
        if args.html is not None:  # before the analysis, which may take a while
            from sattcp.paths import check_file, check_folder

            check_folder(args.html, "--html")
            if Path(args.html).is_dir():  # the report's own file (a folder there failed after the analysis)
                check_file(Path(args.html) / "report.html", "--html")
        _check_builds(args.store, args.study, args.allow_mixed_builds)
        _print_left_out(args.store, args.study, args.block)
        print(analyze_text(args.store, args.study, args.response, args.block, args.confidence))
        if args.html is not None:
            from sattcp.report import build_study_report

            path = build_study_report(args.store, args.study, args.html, args.response,
                                      args.confidence)
            print(f"report: {path}")
        return EXIT_OK

    return _guard("analyze", body, kept=None)


def cmd_export(args: argparse.Namespace) -> int:
    from sattcp.store import Store

    def body() -> int:
        from sattcp.errors import OutputPathError
        from sattcp.paths import check_folder
        from sattcp.store import EXPORT_TABLES

        check_folder(args.out, "--out")
        # A folder where the export writes or removes a file failed after the reading (exit 1).
        for t in EXPORT_TABLES:
            if (p := Path(args.out) / f"{t}.{args.format}").is_dir():
                raise OutputPathError(f"--out {args.out}: {p} is a folder, where the export writes a file")
        with Store(args.store, read_only=True) as st:
            for study in [args.study] if args.study else st.studies():
                builds = st.builds(study)
                if len(builds) > 1:
                    print(f"warning: the runs of {study} come from {len(builds)} sattcp builds "
                          "(column build): " + ", ".join(f"{b} ({n})" for b, n in builds.items()),
                          file=sys.stderr)
            for p in st.export(args.out, args.format, args.study, args.include_stale):
                print(p)
        return EXIT_OK

    return _guard("export", body, kept=None)


def rt_priority(v: str) -> int:
    """``--rt-priority``: a SCHED_FIFO priority below the emulator's own (sattcp-emu's 10), so
    that the emulated link's deadlines still come first."""
    try:
        n = int(v)
    except ValueError:
        n = 0
    if not 1 <= n <= 9:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to 9 (below the emulator's SCHED_FIFO priority 10), got {v!r}")
    return n


def positive_int(v: str) -> int:
    try:
        n = int(v)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {v!r}") from None
    if n < 1:  # also -j/--jobs
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {v!r}")
    return n


def cmd_reproduce(args: argparse.Namespace) -> int:
    from sattcp.paths import check_folder
    from sattcp.report import build_report_and_claims, claims_summary
    from sattcp.store import check_store_path
    from sattcp.sweep import MAX_RUNS, _check_api, load_study, packaged_study, run_sweep

    def body() -> int:
        # Every option is checked before anything is created; --out (or the default out/NAME)
        # by each branch below, once its folder is known.
        if args.real and args.name != "netpipe-sat":
            raise ValueError("--real is for netpipe-sat only")
        if args.rt_priority is not None and not args.real:
            raise ValueError("--rt-priority is for netpipe-sat --real only (it sets the kernel side's endpoints' priority)")
        if args.name in IN_MEMORY_STUDIES:  # they run their own experiments, not a study
            given = [opt for opt, v in (("--replications", args.replications), ("--cluster", args.cluster),
                                        ("--runner", args.runner), ("--retry-failed", args.retry_failed or None),
                                        ("--set", args.set))
                     if v is not None]
            if given:
                raise ValueError(f"{', '.join(given)}: for kota-www and modern-cc only, not {args.name}")
        if args.name == "netpipe-sat":
            from sattcp.netpipe_sat import cmd_reproduce as netpipe_sat

            return netpipe_sat(args)
        if args.name == "zhou-sgw":
            from sattcp.zhou import reproduce

            out = Path(args.out or Path("out") / ("zhou-sgw-quick" if args.quick else "zhou-sgw"))
            check_folder(out, "--out")  # the default folder too
            path, a = reproduce(out, quick=args.quick, jobs=args.jobs, progress=not args.no_progress)
            print(f"{sum(c.holds for c in a.checks)} of {len(a.checks)} statements of seed 004 hold")
            print(f"report: {path}")
            return EXIT_OK
        runner = _load_runner(args.runner, args.cluster)
        _check_cluster(args.cluster)
        study = load_study(packaged_study(args.name))
        note = ""
        if args.quick:
            note = (f"Quick variant: {study.quick_description}. Results are noisier than the "
                    "full study's; run without --quick for the paper's set-up.")
            study = study.quick()
        if args.replications:
            from dataclasses import replace

            first = study.seeds[0]
            name = f"{study.name}-r{args.replications}"
            # Counted before the seeds are made: --replications 1000000000 would take minutes
            # and gigabytes to make them, then be refused.
            per_seed = replace(study, seeds=(first,)).size()
            if per_seed * args.replications > MAX_RUNS:  # the argument's fault, not the packaged study's
                raise ValueError(f"--replications {args.replications}: {name} would have "
                                 f"{per_seed * args.replications:,} runs; at most {MAX_RUNS:,} are allowed "
                                 f"(sattcp.sweep.MAX_RUNS), so at most {MAX_RUNS // per_seed:,} replications")
            study = replace(study, name=name, seeds=tuple(range(first, first + args.replications)))
        suffix = ""
        if args.set:
            study = _with_sets(study, args.set)  # StudyError (exit 2) naming each --set refused
            suffix = sets_suffix(args.set)
            shown = " ".join(f"--set {i}" for i in args.set)
            note = (f"{note} " if note else "") + (
                f"Every run with {shown}: the set-up differs from the paper's there, and the comparison "
                "with the paper shows what that change does.")
        if runner is None:
            _check_api()  # SimulatorUnavailable before the folder is made
        out = Path(args.out or Path("out") / (study.name + suffix))
        check_folder(out, "--out")
        check_store_path(out / "results.duckdb", "--out")
        made = not out.exists()
        out.mkdir(parents=True, exist_ok=True)
        try:
            s = run_sweep(study, out / "results.duckdb", jobs=args.jobs, cluster=args.cluster,
                          runner=runner, progress=not args.no_progress,
                          retry_failed=args.retry_failed)
        except BaseException:
            if made and not any(out.iterdir()):  # (a scheduler that did not answer: nothing written)
                out.rmdir()
            raise
        _print_sweep(s)
        if not args.no_progress:  # the report takes seconds of its own after the sweep's last line
            print(f"report: analysing {study.name} and drawing its figures", file=sys.stderr)
        if args.name == "modern-cc":  # our own study: no paper to compare with
            from sattcp.study_report import build_generic_report

            path = build_generic_report(out / "results.duckdb", study.name, out, note=note)
            print(f"report: {path}")
            return EXIT_FAILED if s.failed else EXIT_OK
        path, claims = build_report_and_claims(out / "results.duckdb", study.name, out, note=note)
        print(claims_summary(claims))
        print(f"report: {path}")
        return EXIT_FAILED if s.failed else EXIT_OK

    return _guard("reproduce", body, kept=IN_MEMORY if args.name in IN_MEMORY_STUDIES else SAVED)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="sattcp")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":
    sys.exit(main())
