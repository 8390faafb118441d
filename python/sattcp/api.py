"""Running scenarios from Python: ``sattcp.run(path_or_toml, seed=..., overrides=...)``."""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd

from .errors import SattcpError, ScenarioError, SimulationInterrupted

Progress = Callable[[float, float], None]


def _toml_literal(value: Any) -> str:
    """A Python value as the TOML literal the core parses (strings stay strings)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ScenarioError([{"path": "", "rule": "override values must be finite", "got": repr(value)}])
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_literal(v) for v in value) + "]"
    raise ScenarioError([{"path": "", "rule": "override values must be str, int, float, bool or a list", "got": repr(value)}])


def _looks_like_path(s: str) -> bool:
    return "\n" not in s and (s.endswith(".toml") or Path(s).is_file())


def read_scenario(scenario: str | Path) -> str:
    """The TOML text of a scenario given as a path or as TOML text itself. A string with no
    newline that ends in ``.toml`` or names an existing file is a path."""
    if isinstance(scenario, Path) or (isinstance(scenario, str) and _looks_like_path(scenario)):
        path = Path(scenario)
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ScenarioError([{"path": "", "rule": "scenario file not found", "got": str(path)}]) from None
        except (IsADirectoryError, PermissionError, UnicodeDecodeError) as e:
            raise ScenarioError([{"path": "", "rule": f"cannot read scenario file ({e.__class__.__name__})", "got": str(path)}]) from None
    if isinstance(scenario, str):
        return scenario
    raise ScenarioError([{"path": "", "rule": "scenario must be a path or TOML text", "got": type(scenario).__name__}])


def _override_pairs(overrides: Mapping[str, Any] | None, raw: bool) -> list[tuple[str, str]]:
    if not overrides:
        return []
    if raw:
        return [(str(k), str(v)) for k, v in overrides.items()]
    return [(str(k), _toml_literal(v)) for k, v in overrides.items()]


@dataclass
class RunResult:
    """The result of one run: a summary, per-flow and per-link tables, and traces."""

    data: dict[str, Any]
    scenario: dict[str, Any]
    wall_time_s: float
    flows: pd.DataFrame = field(init=False)
    links: pd.DataFrame = field(init=False)
    #: The finished core simulation holding the packet trace (sattcp.traces).
    _packets: Any = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.flows = pd.DataFrame(self.data["flows"])
        # C beside each e_i (seed 000 §4.3), so the flow table alone gives x_i, e_i and C.
        self.flows["capacity_bps"] = self.data["summary"]["capacity_bps"]
        self.links = pd.DataFrame(self.data["links"])

    @property
    def summary(self) -> dict[str, Any]:
        """Scalars of the run: the core's summary plus identity (seed, events, digest...)."""
        s = dict(self.data["summary"])
        s.update(
            name=self.data["name"],
            seed=self.data["seed"],
            events=self.data["events"],
            digest=self.data["digest"],
            wall_time_s=self.wall_time_s,
            events_per_s=self.data["events"] / self.wall_time_s if self.wall_time_s > 0 else float("nan"),
        )
        return s

    @property
    def traces(self) -> dict[str, pd.DataFrame]:
        """Each recorded variable as a DataFrame with columns t (s) and value."""
        return {k: pd.DataFrame({"t": v["t"], "value": v["v"]}) for k, v in self.data["traces"].items()}

    @cached_property
    def packets(self) -> pd.DataFrame:
        """Every recorded packet event, one row each (``[trace] packets``; docs/traces.md)."""
        from .traces import packet_table

        return packet_table(self._packets)

    def write_pcap(self, path: str | Path) -> tuple[int, int]:
        """Writes the packet trace as pcapng (docs/traces.md): (packets on links, drops)."""
        from .traces import write_pcap

        return write_pcap(self._packets, path)

    def save_packets(self, path: str | Path) -> Path:
        """Writes the packet table as Parquet, the scenario in the file's metadata."""
        from .traces import save_packets

        return save_packets(self.packets, path, {b"sattcp.scenario": json.dumps(self.scenario).encode()})

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.data)
        d["scenario"] = self.scenario
        d["wall_time_s"] = self.wall_time_s
        return d

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def save(self, path: str | Path) -> Path:
        """Writes the result: ``.json`` (whole document) or ``.parquet`` (the flow table, with
        the summary in the file's metadata)."""
        path = check_output_path(path)
        if path.suffix == ".json":
            path.write_text(self.to_json(indent=2) + "\n", encoding="utf-8")
        elif path.suffix == ".parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            table = pa.Table.from_pandas(self.flows, preserve_index=False)
            meta = dict(table.schema.metadata or {})
            meta[b"sattcp.summary"] = json.dumps(self.summary).encode()
            meta[b"sattcp.scenario"] = json.dumps(self.scenario).encode()
            pq.write_table(table.replace_schema_metadata(meta), path)
        return path


OUTPUT_FORMATS = (".json", ".parquet")


def check_output_path(path: str | Path) -> Path:
    """Checks that a result can be written to ``path`` (known format, existing writable
    folder) before any work is done; raises :class:`SattcpError` naming the problem."""
    import os

    path = Path(path)
    if path.suffix not in OUTPUT_FORMATS:
        raise SattcpError(f"output {path}: unknown format {path.suffix!r} (use .json or .parquet)")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise SattcpError(f"output {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise SattcpError(f"output {path}: folder {folder} is not writable")
    return path


def run(
    scenario: str | Path,
    seed: int | None = None,
    overrides: Mapping[str, Any] | None = None,
    progress: bool | Progress = False,
    *,
    raw_overrides: bool = False,
) -> RunResult:
    """Runs a scenario (a ``.toml`` path or TOML text) and returns its :class:`RunResult`.

    ``overrides`` maps dotted scenario keys to values (``{"tcp.flavor": "sack"}``);
    ``raw_overrides=True`` takes the values as typed on a command line. ``progress`` is True
    for a progress bar on stderr, or a callable ``(now_s, duration_s)``.
    """
    from . import _core

    text = read_scenario(scenario)
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**64):
        raise ScenarioError([{"path": "run.seed", "rule": "must be an integer from 0 to 2^64 - 1", "got": repr(seed)}])
    sim = _core.Simulation(text, _override_pairs(overrides, raw_overrides), seed)
    t0 = time.perf_counter()
    report: Progress | None
    if progress is True:
        report = _ProgressBar(sys.stderr)
    elif callable(progress):
        report = progress
    else:
        report = None
    duration = sim.duration_ns
    try:
        if report is None:
            sim.run_until(duration)
        else:
            chunk = max(duration // 200, 1)
            t = 0
            while t < duration:
                t = min(t + chunk, duration)
                sim.run_until(t)
                report(t / 1e9, duration / 1e9)
    except KeyboardInterrupt:
        raise SimulationInterrupted(f"interrupted at simulated time {sim.now_ns / 1e9:.3f} s of {duration / 1e9:.3f} s") from None
    finally:
        if isinstance(report, _ProgressBar):
            report.close()
    data = json.loads(sim.finish())
    wall = time.perf_counter() - t0
    return RunResult(data=data, scenario=json.loads(sim.scenario_json), wall_time_s=wall, _packets=sim)


class _ProgressBar:
    """A one-line progress bar on simulated time, shown once a run has taken over a second."""

    def __init__(self, stream: Any, delay_s: float = 1.0):
        self.stream = stream
        self.t0 = time.perf_counter()
        self.delay_s = delay_s
        self.shown = False

    def __call__(self, now_s: float, duration_s: float) -> None:
        elapsed = time.perf_counter() - self.t0
        if elapsed < self.delay_s:
            return
        self.shown = True
        frac = now_s / duration_s if duration_s > 0 else 1.0
        width = 30
        bar = "#" * int(frac * width) + "-" * (width - int(frac * width))
        eta = elapsed * (1 - frac) / frac if frac > 0 else float("nan")
        self.stream.write(f"\r[{bar}] {now_s:8.2f}/{duration_s:.2f} s simulated, {elapsed:6.1f} s elapsed, ETA {eta:5.1f} s")
        self.stream.flush()

    def close(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()
