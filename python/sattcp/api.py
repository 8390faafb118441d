"""Running scenarios from Python: ``sattcp.run(path_or_toml_or_dict, seed=..., overrides=...)``.

pandas, numpy and pyarrow are imported only when a table is asked for (``RunResult.flows``,
``links``, ``traces``, ``save(".parquet")``): ``import sattcp`` and ``sattcp run`` stay fast
(issue 15; ``bench/startup.py`` measures them).
"""

from __future__ import annotations

import json
import math
import os
import stat
import sys
import time
import warnings
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path

from .errors import OutputPathError, ScenarioError, SimulationInterrupted

# typing is for annotations only (strings here): not importing it saves about 5 ms of every
# sattcp run's start-up (issue 15).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn

    import pandas as pd

Progress = Callable[[float, float], None]

#: Largest scenario file read (bytes). Real scenarios are a few kB; a file this large is a
#: mistake (a results file or a trace given as the scenario).
MAX_SCENARIO_BYTES = 1 << 20


class SattcpWarning(UserWarning):
    """Something the user should know before a run goes ahead (a very long run, say)."""


def _plain(value: Any) -> Any:
    """A NumPy scalar (``np.int64(3)``, ``np.float64(0.5)``, ``np.bool_``), as from a
    DataFrame or ``np.arange``, as the Python value it holds; anything else as it is. NumPy is
    not imported for it: a value can be one only if NumPy is loaded already."""
    np = sys.modules.get("numpy")
    if np is not None and isinstance(value, np.generic):
        return value.item()
    return value


def _check_unicode(value: str, path: str) -> None:
    """A lone surrogate (text that is not Unicode, which neither TOML nor the core takes) is a
    ScenarioError naming ``path``."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ScenarioError([{"path": path, "rule": f"text must be valid Unicode, not a lone surrogate ({value[e.start]!r} at {e.start})",
                              "got": _short(value)}]) from None


def _toml_string(value: str, path: str) -> str:
    """A TOML basic string. Not ``json.dumps``'s: it writes a character beyond U+FFFF as a
    surrogate pair, which TOML refuses (and an override was then taken as the text ``"\\ud83d..."``).
    A lone surrogate is a ScenarioError (:func:`_check_unicode`)."""
    _check_unicode(value, path)
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")  # TOML escapes DEL too


def _toml_literal(value: Any, path: str = "", what: str = "values") -> str:
    """A Python value as the TOML literal the core parses (strings stay strings; dicts become
    inline tables)."""
    value = _plain(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if not -(2**63) <= value < 2**63 and what == "values":
            # In a dict scenario's TOML text it would be a syntax error "at line N" of a text the
            # user never saw; an override's literal goes to the core, which says the same.
            from . import _core  # the core's words for the same value given as an override

            raise ScenarioError([{"path": path, "rule": _core.beyond_toml_integers_rule(path), "got": str(value)}])
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ScenarioError([{"path": path, "rule": f"{what} must be finite", "got": repr(value)}])
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value, path)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_literal(v, f"{path}.{i}" if path else str(i), what) for i, v in enumerate(value)) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_toml_key(k, path)} = {_toml_literal(v, f'{path}.{k}' if path else str(k), what)}" for k, v in value.items()) + "}"
    if value is None:
        raise ScenarioError([{"path": path, "rule": "None has no TOML value: leave the key out for its default", "got": "None"}])
    raise ScenarioError([{"path": path, "rule": f"{what} must be str, int, float, bool, a list or a dict", "got": repr(value)}])


def _toml_key(k: Any, path: str) -> str:
    if not isinstance(k, str):
        raise ScenarioError([{"path": path, "rule": "keys must be strings", "got": repr(k)}])
    if not k:  # TOML's "" = ..., which the core takes for a quoted key with a dot
        raise ScenarioError([{"path": path, "rule": "an empty key", "got": ""}])
    return k if k and all(c.isascii() and (c.isalnum() or c in "_-") for c in k) else _toml_string(k, path)


def scenario_from_dict(d: Mapping[str, Any]) -> str:
    """A scenario given as a (nested) dict, as TOML text: ``{"tcp": {"mss": 9180}, ...}``."""
    return "".join(f"{_toml_key(k, '')} = {_toml_literal(v, str(k))}\n" for k, v in d.items())


def _looks_like_path(s: str) -> bool:
    """A one-line string is a path unless it holds a TOML assignment (``k = v``) and names no
    file: ``"scenarios/geo.tml"`` is a missing file, not TOML with a syntax error."""
    return "\n" not in s and ("=" not in s or Path(s).is_file())


def _is_path(scenario: Any) -> bool:
    """A scenario given as a file's path (a Path, or a string that reads as one)."""
    return isinstance(scenario, Path) or (isinstance(scenario, str) and _looks_like_path(scenario))


def check_scenario_file(scenario: str | Path, what: str = "scenario") -> None:
    """ScenarioError unless ``scenario`` names a regular file: a directory, or a device or a pipe
    (``/dev/zero`` would be read without end), is named for what it is. Reads nothing. ``what``
    names the kind of file in the message (``"study"`` for a study file)."""

    def refuse(rule: str) -> NoReturn:
        raise ScenarioError([{"path": "", "rule": rule, "got": str(scenario)}])

    try:
        mode = Path(scenario).stat().st_mode
    except FileNotFoundError:
        refuse(f"{what} file not found")
    except OSError as e:  # a folder on the way that cannot be searched, a name too long
        refuse(f"cannot read {what} file ({e.__class__.__name__})")
    if stat.S_ISDIR(mode):
        refuse(f"is a directory, not a {what} file")
    if not stat.S_ISREG(mode):
        refuse("is not a regular file")


def read_toml_file(path: str | Path, what: str = "scenario") -> str:
    """The text of a scenario or a study file (``what``): a regular file
    (:func:`check_scenario_file`) of at most :data:`MAX_SCENARIO_BYTES`, in UTF-8, with or
    without a byte-order mark (some Windows editors write one; it is dropped, as TOML has no
    use for it). Anything else is a ScenarioError naming the file: a UTF-16 file says so."""
    path = Path(path)
    check_scenario_file(path, what)

    def refuse(rule: str) -> NoReturn:
        raise ScenarioError([{"path": "", "rule": rule, "got": str(path)}])

    try:
        with path.open("rb") as f:
            data = f.read(MAX_SCENARIO_BYTES + 1)
    except FileNotFoundError:
        refuse(f"{what} file not found")
    except OSError as e:
        refuse(f"cannot read {what} file ({e.__class__.__name__})")
    if len(data) > MAX_SCENARIO_BYTES:
        refuse(f"{what} file is {path.stat().st_size:,} bytes, more than the {MAX_SCENARIO_BYTES:,} a {what} may have (is it a {what}?)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        why = ("it starts with a UTF-16 byte-order mark" if data[:2] in (b"\xff\xfe", b"\xfe\xff")
               else f"byte 0x{data[e.start]:02x} at offset {e.start:,}")
        refuse(f"{what} file is not UTF-8 text ({why}): save it as UTF-8")


def read_scenario(scenario: str | Path | Mapping[str, Any]) -> str:
    """The TOML text of a scenario given as a path (:func:`read_toml_file`), as TOML text, or
    as a dict. A one-line string without ``=`` (or naming an existing file) is a path."""
    if isinstance(scenario, Mapping):
        return scenario_from_dict(scenario)
    if _is_path(scenario):
        return read_toml_file(scenario)
    if isinstance(scenario, str):
        _check_unicode(scenario, "")
        if len(scenario.encode()) > MAX_SCENARIO_BYTES:
            raise ScenarioError([{"path": "", "rule": f"scenario text is {len(scenario.encode()):,} bytes, more than the {MAX_SCENARIO_BYTES:,} a scenario may have", "got": ""}])
        return scenario
    raise ScenarioError([{"path": "", "rule": "scenario must be a path, TOML text or a dict", "got": type(scenario).__name__}])


@contextmanager
def _naming_file(scenario: Any) -> Iterator[None]:
    """Problems the core finds in the text as a whole (a TOML syntax error: its path is empty)
    name the scenario's file where it came from one."""
    try:
        yield
    except ScenarioError as e:
        if not _is_path(scenario):
            raise
        problems = [dict(p, rule=f"{scenario}: {p.get('rule', '')}") if not p.get("path") else p for p in e.problems]
        raise ScenarioError(problems) from None


#: Seeds TOML cannot write (from 2^63, its largest integer + 1, to 2^64 - 1) that the core takes
#: as its ``seed`` argument (a u64): a sweep's seeds go up to 2^64 - 1, and a run's stored
#: config, a dict with that ``run.seed``, must run again (docs/analysis.md).
TOML_INT_END = 2**63


def _seed_beyond_toml(value: Any) -> int | None:
    """A dict's or an override's ``run.seed`` that TOML cannot write but the core's ``seed``
    takes (2^63 to 2^64 - 1); None for any other value, which stays in the text for the core to
    check as a file's. An integer beyond both is a ScenarioError naming run.seed, in
    :func:`_check_seed`'s words (its range, not TOML's: the dict may hold what ``seed=`` takes)."""
    value = _plain(value)
    if not isinstance(value, int) or isinstance(value, bool) or -TOML_INT_END <= value < TOML_INT_END:
        return None
    return _check_seed(value)


def _raw_value(text: Any) -> Any:
    """A raw override's value (text as typed after ``--set``) as the core reads it
    (``parse_override_value``): a TOML literal, else the text itself as a string. Python's
    TOML reader takes integers of any size (a ``run.seed`` of 2^63 to 2^64 - 1, which the
    core's reader refuses); it is imported here only, when a value is to be read (it brings
    ``typing``, which ``sattcp run`` does not load otherwise). A value that is not text is
    returned as it is (:func:`_literal_pairs` refuses it)."""
    if not isinstance(text, str):
        return text
    import tomllib

    try:
        doc = tomllib.loads(f"v = {text}")
    except tomllib.TOMLDecodeError:
        return text
    return doc.get("v", text)


def _taking_seed(scenario: Any, overrides: Any, raw: bool, seed: int | None) -> tuple[Any, Any, int | None]:
    """``(scenario, overrides, seed)`` with a ``run.seed`` of 2^63 to 2^64 - 1 in a dict
    scenario or in the overrides (``run.seed`` or a ``run`` table; a raw one as the core reads
    its text, :func:`_raw_value`) taken out of them and given as ``seed`` is: TOML has no such
    integer, the core's ``seed`` has. As for a file's ``run.seed``, ``seed`` wins over the
    override's, and the override's over the scenario's. Anything else is left as it is."""
    over = None  # the override's run.seed: (value,) if given
    if isinstance(overrides, Mapping):
        given = {k: _raw_value(overrides[k]) if raw else overrides[k] for k in ("run.seed", "run") if k in overrides}
        if "run.seed" in given:
            over = (given["run.seed"],)
        elif isinstance(given.get("run"), Mapping) and "seed" in given["run"]:
            over = (given["run"]["seed"],)
        if over is not None and (big := _seed_beyond_toml(over[0])) is not None:
            seed = big if seed is None else seed
            overrides = {k: v for k, v in overrides.items() if k != "run.seed"}
            if isinstance(given.get("run"), Mapping) and "seed" in given["run"]:
                run = {k: v for k, v in given["run"].items() if k != "seed"}
                overrides["run"] = _toml_literal(run, "run", "override values") if raw else run
    if isinstance(scenario, Mapping) and isinstance(scenario.get("run"), Mapping) and "seed" in scenario["run"]:
        big = _seed_beyond_toml(scenario["run"]["seed"])
        if big is not None:
            seed = big if seed is None and over is None else seed
            scenario = {**scenario, "run": {k: v for k, v in scenario["run"].items() if k != "seed"}}
    return scenario, overrides, seed


def _core_inputs(scenario: Any, seed: Any, overrides: Any, raw: bool) -> tuple[Any, str, list[tuple[str, str]], int | None]:
    """What :func:`run` and :func:`resolve` give the core: ``(scenario, text, override pairs,
    seed)``, ``scenario`` with a ``run.seed`` beyond TOML's integers taken out
    (:func:`_taking_seed`). The overrides are checked (:func:`_given_once`) before that
    ``run.seed`` is taken out of them: ``{"run.seed": 2**63, "run": {"seed": 5}}`` sets it twice."""
    seed = _check_seed(seed)
    _given_once(overrides, raw)
    scenario, overrides, seed = _taking_seed(scenario, overrides, raw, seed)
    text = read_scenario(scenario)
    return scenario, text, _literal_pairs(overrides, raw), seed  # their problems are not the file's


def _given_once(overrides: Any, raw: bool) -> None:
    """:func:`_each_given_once` of Python overrides, each named by its key (``"tcp.mss"``).
    Python overrides only (not ``raw``: a raw value is text, whose tables the core reads; the
    command line checks its ``--set`` options itself, as it reads them); anything but a dict is
    :func:`_literal_pairs`' to refuse."""
    if raw or not isinstance(overrides, Mapping):
        return
    # A key that is not text is refused by _literal_pairs.
    _each_given_once([(k, v, json.dumps(k)) for k, v in overrides.items() if isinstance(k, str)], " in overrides")


def _each_given_once(settings: Iterable[tuple[str, Any, str]], where: str) -> None:
    """ScenarioError naming every key that two settings set (``{"tcp.mss": 1000, "tcp":
    {"mss": 2000}}``: the core would keep the last, as a study file does not), or that one sets
    and another sets a key inside (``"trace.packets": "all"`` and ``"trace.packets.flows"``:
    the core keeps or refuses the second by their order). ``settings``: (dotted key, value, how
    the message names the setting), in the order given; ``where`` follows "is given" in the
    message (``" in overrides"``). A table value's keys are names whole, as the core takes
    them; an empty table sets nothing."""

    def leaves(path: tuple[str, ...], value: Any) -> Iterator[tuple[str, ...]]:
        value = _plain(value)
        if isinstance(value, Mapping):
            for k, v in value.items():
                yield from leaves((*path, str(k)), v)
        else:
            yield path

    setting: dict[tuple[str, ...], str] = {}  # a key set -> the setting that sets it
    above: dict[tuple[str, ...], str] = {}    # a table with a key set inside -> the setting
    problems: dict[str, dict[str, Any]] = {}
    for key, value, name in settings:
        for leaf in leaves(tuple(key.split(".")), value):
            tables = [leaf[:i] for i in range(1, len(leaf))]
            if leaf in setting:
                path, rule = leaf, f"is given twice{where}, by {setting[leaf]} and by {name}: give it once"
            elif leaf in above:
                path, rule = leaf, f"is given{where} by {name}, and a key inside it by {above[leaf]}: give one or the other"
            elif (t := next((t for t in tables if t in setting), None)) is not None:
                path, rule = t, f"is given{where} by {setting[t]}, and a key inside it by {name}: give one or the other"
            else:
                setting[leaf] = name
                for t in tables:
                    above.setdefault(t, name)
                continue
            problems.setdefault(".".join(path), {"path": ".".join(path), "rule": rule, "got": ""})
    if problems:
        raise ScenarioError(list(problems.values()))


def _override_pairs(overrides: Mapping[str, Any] | None, raw: bool) -> list[tuple[str, str]]:
    """``overrides`` checked (:func:`_given_once`) and as (dotted key, TOML literal) pairs for
    the core (:func:`_literal_pairs`)."""
    _given_once(overrides, raw)
    return _literal_pairs(overrides, raw)


def _literal_pairs(overrides: Mapping[str, Any] | None, raw: bool) -> list[tuple[str, str]]:
    """``overrides`` as (dotted key, TOML literal) pairs for the core. Keys are text (``1`` or
    ``Path("tcp.mss")`` is not a key); with ``raw`` the values are text as typed after ``--set``."""
    if overrides is None:
        return []
    if not isinstance(overrides, Mapping):
        raise ScenarioError([{"path": "", "rule": "overrides must be a dict of dotted keys to values ({\"tcp.mss\": 1000})",
                              "got": _short(overrides)}])
    pairs = []
    for k, v in overrides.items():
        if not isinstance(k, str):
            raise ScenarioError([{"path": "", "rule": "override keys must be strings (dotted keys like \"tcp.mss\")", "got": repr(k)}])
        if not k.strip():
            # Here, not in the core: its problem (without a path: there is none) was taken for
            # the scenario file's. Still without a path, which a sweep takes for its overrides'.
            raise ScenarioError([{"path": "", "rule": 'an empty override key: give a dotted path such as "tcp.mss"', "got": json.dumps(k)}])
        if raw and not isinstance(v, str):
            raise ScenarioError([{"path": k, "rule": "raw override values are text, as typed after --set (or pass raw_overrides=False)",
                                  "got": _short(v)}])
        pairs.append((k, _toml_literal(v, k, "override values") if not raw else v))
    for k, v in pairs:
        for text in (k, v):
            _check_unicode(text, k)  # here, not in the conversion to Rust
    return pairs


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _float_columns(df: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Columns that may be null (``completed_at_s`` of a flow that never completed) as floats
    with NaN, never object columns of None."""
    import pandas as pd

    for c in columns:
        if c in df.columns:
            df[c] = pd.to_numeric(df[c], errors="coerce").astype("float64")
    return df


#: Per-flow columns that are null for some flows (the core writes null; the table has NaN).
NULLABLE_FLOW_COLUMNS = ["completed_at_s", "final_srtt_s", "fair_share_bps", "throughput_bps"]


#: The columns of :attr:`RunResult.netpipe` (and of the result's ``netpipe`` section).
NETPIPE_COLUMNS = ["bytes", "repeats", "time_s", "min_s", "variance_s2", "throughput_bps", "cdv_pct", "nrepeat"]


def _copied(value: Any) -> Any:
    """A copy of JSON-like data (dicts and lists of scalars, nested): as ``copy.deepcopy`` but
    without its per-value bookkeeping, which a trace of millions of floats would pay."""
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [v if v is None or isinstance(v, (str, int, float)) else _copied(v) for v in value]
    return value


class RunResult:
    """The result of one run: a summary, per-flow and per-link tables, traces, and the resolved
    scenario (``config``: every key with its effective value, so that the run can be repeated
    from this record alone).

    The tables are built on first access (pandas is imported then, not before).
    """

    def __init__(self, data: dict[str, Any], scenario: dict[str, Any], wall_time_s: float, config: dict[str, Any] | None = None, packets_source: Any = None):
        self.data = data
        self.scenario = scenario
        self.wall_time_s = wall_time_s
        self.config: dict[str, Any] = config if config is not None else {}
        #: The finished core simulation holding the packet trace (sattcp.traces), if any.
        self._packets = packets_source

    def __getstate__(self) -> dict[str, Any]:
        """A pickled (or deep-copied) result, for a process pool or a cache: everything but the
        native packet trace, which cannot be pickled; its table (:attr:`packets`) goes in its
        place, so that a copy has the packets and saves them, but cannot write the pcapng file."""
        state = dict(self.__dict__)
        traced = self._packets is not None and self._packets.has_packets
        if traced:
            state["packets"] = self.packets
        state["_packets"] = None
        state["_copied_trace"] = traced
        return state

    @cached_property
    def flows(self) -> pd.DataFrame:
        """One row per TCP half-connection; ``capacity_bps`` (C) beside each ``fair_share_bps``."""
        import pandas as pd

        df = _float_columns(pd.DataFrame(self.data["flows"]), NULLABLE_FLOW_COLUMNS)
        # C beside each e_i (seed 000 §4.3), so the flow table alone gives x_i, e_i and C.
        df["capacity_bps"] = float(self.data["summary"]["capacity_bps"])
        return df

    def rows(self, table: str) -> list[dict[str, Any]]:
        """The rows of :attr:`flows` or :attr:`links` as plain dicts (None where the table has
        NaN), without pandas: what a sweep stores (issue 15). New dicts; the result's data is
        not shared. Any other ``table`` is a :class:`~sattcp.errors.ScenarioError`."""
        if table == "flows":
            cap = float(self.data["summary"]["capacity_bps"])
            return [{**r, "capacity_bps": cap} for r in self.data["flows"]]
        if table == "links":
            return [dict(r) for r in self.data["links"]]
        # sattcp's error for bad input, as resolve's format is (still a ValueError).
        raise ScenarioError([{"path": "", "rule": "table must be 'flows' or 'links'", "got": _short(table)}])

    @cached_property
    def links(self) -> pd.DataFrame:
        """One row per one-way link."""
        import pandas as pd

        return pd.DataFrame(self.data["links"])

    @cached_property
    def netpipe(self) -> pd.DataFrame | None:
        """NetPIPE's table of a ping-pong run (``app.kind = "pingpong"``, docs/netpipe.md): one
        row per block size, columns :data:`NETPIPE_COLUMNS` (``repeats`` trials of ``nrepeat``
        round trips each; ``time_s`` the mean trial's block transfer time, its duration / (2
        nrepeat); ``min_s`` the best trial's, NetPIPE's own statistic); None for other applications."""
        rows = self.data.get("netpipe")
        if rows is None:
            return None
        import pandas as pd

        df = pd.DataFrame(rows, columns=NETPIPE_COLUMNS)
        return df.astype({"bytes": "int64", "repeats": "int64", "nrepeat": "int64"} | {c: "float64" for c in NETPIPE_COLUMNS[2:-1]})

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
        import pandas as pd

        return {k: pd.DataFrame({"t": v["t"], "value": v["v"]}) for k, v in self.data["traces"].items()}

    @cached_property
    def packets(self) -> pd.DataFrame:
        """Every recorded packet event, one row each (``[trace] packets``; docs/traces.md)."""
        from .traces import packet_table

        return packet_table(self._packets)

    def write_pcap(self, path: str | Path) -> tuple[int, int]:
        """Writes the packet trace as pcapng (docs/traces.md): (packets on links, drops)."""
        from .traces import write_pcap

        if getattr(self, "_copied_trace", False):
            from .errors import SattcpError

            raise SattcpError("this result is a copy (pickled or deep-copied): it has the packet table (.packets, "
                              ".save_packets) but not the packet trace the pcapng file is written from; write it from the original result")
        return write_pcap(self._packets, path)

    def save_packets(self, path: str | Path) -> Path:
        """Writes the packet table as Parquet, the scenario in the file's metadata. Checked
        first, as :meth:`write_pcap` is: a result without a packet trace, or a ``path`` that is
        not ``.parquet`` or cannot be written, raises before anything is written."""
        from .traces import check_packet_output, save_packets

        path = check_packet_output(self._packets, path, ".parquet", copied=getattr(self, "_copied_trace", False))
        return save_packets(self.packets, path, {b"sattcp.scenario": json.dumps(self.scenario).encode()})

    def traces_long(self) -> pd.DataFrame:
        """Every trace in one table: ``variable`` (``flow/0/cwnd``...), ``t`` (s), ``value``."""
        import pandas as pd

        parts = [pd.DataFrame({"variable": k, "t": v["t"], "value": v["v"]}) for k, v in self.data["traces"].items()]
        if not parts:
            return pd.DataFrame({"variable": pd.Series(dtype=str), "t": pd.Series(dtype=float), "value": pd.Series(dtype=float)})
        return pd.concat(parts, ignore_index=True)

    def __repr__(self) -> str:
        s = self.data["summary"]
        eff = s.get("efficiency")
        eff_s = f", efficiency {eff:.4f}" if isinstance(eff, (int, float)) else ""
        n = s.get("flows", len(self.data.get("flows", [])))
        return (f"<RunResult {self.data['name']!r} seed {self.data['seed']}: {s.get('sim_time_s', 0):g} s simulated, "
                f"{n} flow{'s' if n != 1 else ''}{eff_s}, digest {self.data['digest']}>")

    def _repr_html_(self) -> str:
        import html

        s = self.summary
        rows = [
            ("scenario", s["name"]), ("seed", s["seed"]), ("simulated", f"{s.get('sim_time_s', 0):g} s"),
            ("wall time", f"{self.wall_time_s:.3f} s"), ("events", f"{s['events']:,}"), ("digest", s["digest"]),
            ("flows", s.get("flows")), ("efficiency", _fmt(s.get("efficiency"))), ("fairness (max-min)", _fmt(s.get("fairness"))),
            ("Jain fairness", _fmt(s.get("jain_fairness"))),
            ("goodput", f"{s.get('total_throughput_bps', 0) / 1e6:.3f} of {s.get('capacity_bps', 0) / 1e6:.3f} Mbps"),
            ("timeouts / fast retransmits", f"{s.get('timeouts')} / {s.get('fast_retransmits')}"),
            ("drops (queue full / corrupted)", f"{s.get('drops_queue_full')} / {s.get('drops_corrupted')}"),
        ]
        body = "".join(f"<tr><th style='text-align:left'>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>" for k, v in rows)
        extra = f"<p>Tables: <code>.flows</code> ({len(self.data['flows'])} rows), <code>.links</code> ({len(self.data['links'])} rows)"
        if self.data.get("traces"):
            extra += f", <code>.traces</code> ({len(self.data['traces'])} variables)"
        extra += "; <code>.config</code>: the resolved scenario.</p>"
        warn = "".join(f"<p>warning: {html.escape(w)}</p>" for w in self.data.get("warnings", []))
        return f"<div class='sattcp-result'><table>{body}</table>{extra}{warn}</div>"

    def _document(self) -> dict[str, Any]:
        """The whole result as one document, sharing this result's dicts and lists (for reading)."""
        d = dict(self.data)
        d["scenario"] = self.scenario
        d["config"] = self.config
        d["wall_time_s"] = self.wall_time_s
        return d

    def to_dict(self) -> dict[str, Any]:
        """The whole result as plain data (what :meth:`to_json` writes): a copy, so changing it
        leaves this result as it was."""
        return _copied(self._document())

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self._document(), indent=indent)

    def output_paths(self, path: str | Path) -> dict[str, Path]:
        """The files :meth:`save` writes for ``path``: ``.json`` one file; ``.parquet`` the flow
        table at ``path``, the link table at ``STEM.links.parquet`` and, when traces were
        recorded, every trace at ``STEM.traces.parquet`` (columns variable, t, value); a
        ping-pong run's NetPIPE table at ``STEM.netpipe.parquet``."""
        path = Path(path)
        if path.suffix != ".parquet":
            return {"result": path}
        out = {"flows": path, "links": path.with_name(f"{path.stem}.links.parquet")}
        if self.data.get("traces"):
            out["traces"] = path.with_name(f"{path.stem}.traces.parquet")
        if self.data.get("netpipe") is not None:
            out["netpipe"] = path.with_name(f"{path.stem}.netpipe.parquet")
        return out

    def save(self, path: str | Path) -> Path:
        """Writes the result: ``.json`` (the whole document) or ``.parquet`` (flows, links and
        traces as tables, see :meth:`output_paths`; each file carries the summary, the scenario
        and the resolved scenario in its metadata). Returns ``path``.

        Every file is written whole, and all of them together (:class:`~sattcp.paths.WholeFiles`):
        an interruption or a failure (a full disk: :class:`~sattcp.errors.WriteError` naming the
        file) leaves the files of an earlier save as they were, and no temporary file. A side
        table this result does not have (``STEM.traces.parquet`` of an earlier run with traces)
        is removed, so that the files at ``path`` are all of this result."""
        from .paths import WholeFiles, write_whole

        path = check_output_path(path)
        if path.suffix == ".json":
            return write_whole(path, self.to_json(indent=2) + "\n")
        import pandas as pd
        import pyarrow as pa

        # Nested values (a link's drops_by_reason) become columns of their own:
        # drops_by_reason.queue_full, ...
        links = pd.json_normalize(self.data["links"], sep=".") if self.data["links"] else self.links
        tables = {"flows": self.flows, "links": links}
        if self.data.get("traces"):
            tables["traces"] = self.traces_long()
        if self.netpipe is not None:
            tables["netpipe"] = self.netpipe
        paths = self.output_paths(path)
        stale = [p for what, p in _side_paths(path).items() if what not in paths]
        with WholeFiles(stale=stale) as files:
            for what, p in paths.items():
                table = pa.Table.from_pandas(tables[what], preserve_index=False)
                meta = dict(table.schema.metadata or {})
                meta[b"sattcp.table"] = what.encode()
                meta[b"sattcp.summary"] = json.dumps(self.summary).encode()
                meta[b"sattcp.scenario"] = json.dumps(self.scenario).encode()
                meta[b"sattcp.config"] = json.dumps(self.config).encode()
                files.parquet(p, table.replace_schema_metadata(meta))
        return path


#: The tables :meth:`RunResult.save` may write beside ``STEM.parquet`` (``STEM.WHAT.parquet``).
SIDE_TABLES = ("links", "traces", "netpipe")


def _side_paths(path: Path) -> dict[str, Path]:
    return {what: path.with_name(f"{path.stem}.{what}.parquet") for what in SIDE_TABLES}


def _fmt(x: Any) -> str:
    return "n/a" if x is None else f"{x:.4f}"


OUTPUT_FORMATS = (".json", ".parquet")


def check_output_path(path: str | Path, label: str = "output") -> Path:
    """Checks that a result can be written to ``path`` (known format; the file, and for
    ``.parquet`` the tables beside it, can be created or written) before any work is done;
    raises :class:`~sattcp.errors.OutputPathError` (a :class:`~sattcp.errors.SattcpError`) naming ``label``
    (the CLI passes ``--out``) and the problem. Nothing is left behind: a probe file is created
    and removed again, an existing file is opened for appending and closed unchanged."""
    from .paths import as_path, check_file

    path = as_path(path, label)
    if path.is_dir():  # before its format: a folder's name has none, most often
        raise OutputPathError(f"{label} {path}: is a folder, not a file (give a file in it, e.g. {path / 'result.json'})")
    if path.suffix not in OUTPUT_FORMATS:
        raise OutputPathError(f"{label} {path}: unknown format {path.suffix!r} (use .json or .parquet)")
    check_file(path, label)
    if path.suffix == ".parquet":
        if path.exists() and not path.is_file():  # a device or a pipe, e.g. /dev/stdout
            raise OutputPathError(f"{label} {path}: not a regular file (Parquet tables are files; .json can go to a device or pipe)")
        # The tables save() may write beside it (output_paths): none may be a folder.
        for side in _side_paths(path).values():
            check_file(side, label)
    return path


def _check_seed(seed: Any) -> int | None:
    """The seed as a Python int (a NumPy integer too, ``np.arange``'s); anything else, a float
    included (never truncated), is a ScenarioError."""
    seed = _plain(seed)
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**64):
        raise ScenarioError([{"path": "run.seed", "rule": "must be an integer from 0 to 2^64 - 1", "got": repr(seed)}])
    return seed


def _check_flag(value: Any, name: str) -> bool:
    """A True/False argument: ``force="no"`` would otherwise force."""
    value = _plain(value)
    if not isinstance(value, bool):
        raise ScenarioError([{"path": "", "rule": f"{name} must be True or False", "got": _short(value)}])
    return value


def resolve(
    scenario: str | Path | Mapping[str, Any],
    seed: int | None = None,
    overrides: Mapping[str, Any] | None = None,
    *,
    raw_overrides: bool = False,
    format: str = "dict",
) -> Any:
    """The resolved scenario: every key with its effective value, defaults included, in the
    scenario's own key names (what ``sattcp run --print-config`` prints and every
    ``RunResult.config`` holds). ``format``: ``"dict"`` (default), ``"json"`` or ``"toml"``.
    Raises :class:`ScenarioError` for an invalid scenario, as :func:`run` does."""
    from . import _core

    if format not in ("dict", "json", "toml"):
        raise ScenarioError([{"path": "", "rule": "format must be 'dict', 'json' or 'toml'", "got": _short(format)}])
    raw_overrides = _check_flag(raw_overrides, "raw_overrides")
    scenario, text, pairs, seed = _core_inputs(scenario, seed, overrides, raw_overrides)
    with _naming_file(scenario):
        out = _core.resolve(text, pairs, seed, "toml" if format == "toml" else "json")
    return json.loads(out) if format == "dict" else out


# -- resource guards ------------------------------------------------------------------------------

_RATE_UNITS = {"bps": 1.0, "b/s": 1.0, "kbps": 1e3, "Kbps": 1e3, "kb/s": 1e3, "Mbps": 1e6, "Mb/s": 1e6, "Gbps": 1e9, "Gb/s": 1e9}
_TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0}

#: Engine events per packet crossing the bottleneck, measured (README, "Speed": 356 k events
#: for about 58 k bottleneck packets of the GEO dumbbell, about 6 per packet and its ACK).
EVENTS_PER_PACKET = 6.2
#: Engine events per wall second on one core (README, "Speed": 19-20 M events/s).
EVENTS_PER_SECOND = 2e7
#: Above this many estimated events a run warns (about a minute of wall time)...
WARN_EVENTS = 1e9
#: ...and above this it is refused unless forced (about 14 hours).
MAX_EVENTS = 1e12
#: Bytes of memory per recorded trace point (two f64 in Rust, then JSON and two Python floats).
TRACE_BYTES_PER_POINT = 80
#: Packet-log events per packet crossing the bottleneck with every packet traced (7 million
#: events for 476 k bottleneck packets), and bytes per event of the run: the log's 64 in Rust
#: and the scratch of its final sort by time. `bench/trace_memory.py` (the GEO drop-tail
#: dumbbell, every packet traced, peak resident memory of a fresh process per bound): 110 MiB
#: at 1 million events, 384 MiB at 4 million, 96 bytes an event more. The Python table, if
#: asked for (`RunResult.packets`), takes about three times that while it is built (419 and
#: 1,336 MiB: 321 bytes an event); the log's own bound keeps room for it (docs/traces.md,
#: "Bounds").
PACKET_EVENTS_PER_PACKET = 15
PACKET_EVENT_BYTES = 128
#: Above this estimated trace memory a run warns; above MAX a share of RAM it is refused.
WARN_TRACE_BYTES = 1 << 30


def _number_unit(s: Any, units: dict[str, float]) -> float | None:
    if isinstance(s, (int, float)) and not isinstance(s, bool):
        return float(s)
    if not isinstance(s, str):
        return None
    t = s.strip()
    for u in sorted(units, key=len, reverse=True):
        if t.endswith(u):
            try:
                return float(t[: -len(u)].replace("_", "")) * units[u]
            except ValueError:
                return None
    return None


def estimate_work(config: Mapping[str, Any], pingpong_work: tuple[int, int] | None = None) -> dict[str, float]:
    """A rough upper estimate of a run's work from its resolved scenario: packets across the
    bottleneck at line rate, engine events, wall seconds, and trace points (each traced flow
    records about three values per packet it sends, each traced queue two per packet).

    A ping-pong run (``app.kind = "pingpong"``) ends when its schedule is done, so its packets
    are at most those of the schedule (every block each way in MSS-sized segments, one partial
    segment a block more) even where ``run.duration`` at line rate would be far more: the core
    gives the schedule's (round trips, bytes each way), ``pingpong_work`` where the caller has
    them (``Simulation.pingpong_work``), else from ``config`` (:func:`_pingpong_work`)."""
    app = config.get("app")
    if pingpong_work is None and isinstance(app, Mapping) and app.get("kind") == "pingpong":
        pingpong_work = _pingpong_work(config)
    links = config.get("links", {})
    hops = links.get("path") or [links.get("bottleneck") or {}]
    rates = [_number_unit(h.get("rate"), _RATE_UNITS) for h in hops]
    rate = min((r for r in rates if r), default=0.0)
    duration = _number_unit(config.get("run", {}).get("duration"), _TIME_UNITS) or 0.0
    tcp = config.get("tcp", {})
    mss = tcp.get("mss") if isinstance(tcp.get("mss"), int) else 1024
    packet_bits = 8 * (mss + 40)
    packets = rate * duration / packet_bits if packet_bits else 0.0
    if pingpong_work is not None:
        round_trips, nbytes = pingpong_work
        packets = min(packets, 2.0 * (nbytes / mss + round_trips))
    events = packets * EVENTS_PER_PACKET
    pairs = max(int(config.get("topology", {}).get("pairs") or 1), 1)
    trace = config.get("trace", {})
    points = 3 * packets * len(trace.get("flows") or []) / pairs + 2 * packets * len(trace.get("links") or [])
    # The traces' bounds, as resolved (the core's defaults filled in).
    points = min(points, _bound(trace.get("max_points")))
    sel = trace.get("packets", "none")
    if sel == "none" or not sel:
        packet_events = 0.0
    else:
        packet_events = packets * PACKET_EVENTS_PER_PACKET
        if isinstance(sel, Mapping) and sel.get("flows"):
            packet_events *= min(len(sel["flows"]) / pairs, 1.0)
        packet_events = min(packet_events, _bound(trace.get("max_packet_events")))
    return {"packets": packets, "events": events, "wall_s": events / EVENTS_PER_SECOND, "trace_points": points,
            "packet_events": packet_events, "trace_bytes": points * TRACE_BYTES_PER_POINT + packet_events * PACKET_EVENT_BYTES}


def _pingpong_work(config: Mapping[str, Any]) -> tuple[int, int] | None:
    """The core's (round trips, bytes each way) of a resolved ping-pong scenario (a sweep's
    run before it is built); None, and so the line-rate bound, if the core cannot read it."""
    from . import _core

    run = config.get("run")
    if isinstance(run, Mapping):  # a seed beyond TOML's integers; the schedule does not use it
        config = {**config, "run": {k: v for k, v in run.items() if k != "seed"}}
    try:
        return _core.pingpong_work(scenario_from_dict(config))
    except (ScenarioError, ValueError, TypeError):  # (not a scenario the core reads: no schedule)
        return None


def _bound(v: Any) -> float:
    """A trace bound of the resolved scenario (which always has one); no bound if absent."""
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.inf


def _memory_bytes() -> tuple[float, bool]:
    """The memory a run may use: the machine's, or a lower limit of the process's cgroup (a
    container's, a batch job's), with whether it is the cgroup's (the packet log's own reading,
    crates/sattcp-core/src/trace/memory.rs)."""
    from . import _core

    m = _core.memory()
    if m is not None:
        return float(m[1]), m[2]
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")), False
    except (ValueError, OSError, AttributeError):
        return float("inf"), False


def _trace_size(est: Mapping[str, float]) -> str:
    return f"{est['trace_points']:.2g} time-series points, {est['packet_events']:.2g} packet events"


def check_resources(config: Mapping[str, Any], force: bool = False, how_to_force: str | None = "force it (force=True, sattcp run --force)",
                    pingpong_work: tuple[int, int] | None = None) -> dict[str, float]:
    """Refuses (ScenarioError) a run whose estimated work or trace memory is enormous, and warns
    (:class:`SattcpWarning`) about a long one, each with the numbers; ``force`` turns refusals
    into warnings. ``how_to_force`` ends the refusal's advice (None where nothing can force it,
    as in a sweep); ``pingpong_work`` as :func:`estimate_work`'s."""
    est = estimate_work(config, pingpong_work)
    force_it = f", or {how_to_force}" if how_to_force else ""
    problems, notes = [], []
    if est["events"] > MAX_EVENTS:
        problems.append({"path": "run.duration", "rule": f"the run would take about {est['events']:.2g} engine events "
                         f"({est['packets']:.2g} packets across the bottleneck, roughly {est['wall_s'] / 3600:,.0f} hours); "
                         f"the limit is {MAX_EVENTS:.0e}: shorten run.duration{force_it}",
                         "got": json.dumps(config.get("run", {}).get("duration"))})
    elif est["events"] > WARN_EVENTS:
        notes.append(f"a long run: about {est['events']:.2g} engine events, roughly {est['wall_s']:,.0f} s of wall time")
    mem, cgroup = _memory_bytes()
    if est["trace_bytes"] > mem / 2:
        whose = f"the {mem / 2**30:,.1f} GiB this process's cgroup allows" if cgroup else f"this machine's {mem / 2**30:,.1f} GiB"
        problems.append({"path": "trace", "rule": f"the traces would need about {est['trace_bytes'] / 2**30:,.1f} GiB "
                         f"({_trace_size(est)}), more than half of {whose}: "
                         f"trace fewer flows, links or packets, lower trace.max_points or trace.max_packet_events, shorten run.duration{force_it}", "got": ""})
    elif est["trace_bytes"] > WARN_TRACE_BYTES:
        notes.append(f"large traces: about {est['trace_bytes'] / 2**30:,.1f} GiB ({_trace_size(est)})")
    if problems and not force:
        raise ScenarioError(problems)
    for p in problems:
        forced = " (forced)"
        if p["path"] == "trace" and est["packet_events"] > 0:
            # The core's packet log stops where it would outgrow the memory available (docs/traces.md, "Bounds").
            forced = " (forced: the packet log will stop recording, with a warning, where it would outgrow the memory available)"
        notes.append(p["rule"].split(": shorten")[0].split(": trace fewer")[0] + forced)
    for n in notes:
        warnings.warn(n, SattcpWarning, stacklevel=3)
    return est


def run(
    scenario: str | Path | Mapping[str, Any],
    seed: int | None = None,
    overrides: Mapping[str, Any] | None = None,
    progress: bool | Progress = False,
    *,
    raw_overrides: bool = False,
    force: bool = False,
) -> RunResult:
    """Runs a scenario (a ``.toml`` path, TOML text, or a dict of tables) and returns its
    :class:`RunResult`.

    ``overrides`` maps dotted scenario keys to values (``{"tcp.flavor": "sack"}``);
    ``raw_overrides=True`` takes the values as typed on a command line. ``progress`` is True
    for a progress bar on stderr, or a callable ``(now_s, duration_s)``. A run estimated to be
    enormous (see :func:`check_resources`) is refused unless ``force``.
    """
    from . import _core

    raw_overrides, force = _check_flag(raw_overrides, "raw_overrides"), _check_flag(force, "force")
    if not isinstance(progress, bool) and not callable(progress):
        raise ScenarioError([{"path": "", "rule": "progress must be True, False or a callable (now_s, duration_s)", "got": _short(progress)}])
    scenario, text, pairs, seed = _core_inputs(scenario, seed, overrides, raw_overrides)
    with _naming_file(scenario):
        sim = _core.Simulation(text, pairs, seed)
    config = json.loads(sim.config_json)
    check_resources(config, force=force, pingpong_work=sim.pingpong_work)
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
    # The time series come as arrays of f64, not in the JSON (whose parse of millions of
    # numbers was most of a traced run's time): the same lists of floats.
    data["traces"] = {name: {"t": array("d", t).tolist(), "v": array("d", v).tolist()} for name, t, v in sim.take_traces()}
    wall = time.perf_counter() - t0
    return RunResult(data=data, scenario=json.loads(sim.scenario_json), wall_time_s=wall, config=config, packets_source=sim)


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
