"""Packet traces from Python: the packet table (``RunResult.packets``), its Parquet export and
the pcapng file (docs/traces.md).

The core hands the table over as one little-endian buffer per column (``packet_columns``),
which numpy wraps without a Python object per event.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .errors import OutputPathError, SattcpError
from .paths import WholeFiles, check_file, writing

#: The table's columns, in order (docs/traces.md says what each holds).
COLUMNS = [
    "t", "t_ns", "event", "reason", "link", "node", "flow", "dir", "src", "dst", "uid", "seq", "ack", "len", "bytes",
    "flags", "window", "wscale", "sack_permitted", "tx_count", "n_sack",
    "sack1_start", "sack1_end", "sack2_start", "sack2_end", "sack3_start", "sack3_end",
]

#: Bits of the ``flags`` column (the simulator's, not the TCP header's).
SYN, ACK, FIN = 1, 2, 4


def packet_table(source: Any) -> pd.DataFrame:
    """The packet events of a finished ``_core.Simulation`` as a DataFrame (empty with the same
    columns when packets were not traced)."""
    got = source.packet_columns() if source is not None else None
    if got is None:
        return pd.DataFrame({c: pd.Series(dtype="float64" if c == "t" else "object") for c in COLUMNS})
    columns, links, events, reasons = got
    raw = {name: np.frombuffer(buf, dtype=dtype) for name, dtype, buf in columns}
    # Reason code 0 is "no drop": missing, so that only drops have a reason.
    reason_codes = raw["reason"].astype(np.int8) - 1
    data = {
        "t": raw["t_ns"] / 1e9,
        "t_ns": raw["t_ns"],
        "event": pd.Categorical.from_codes(raw["event"].astype(np.int8), categories=events),
        "reason": pd.Categorical.from_codes(reason_codes, categories=reasons[1:]),
        # Code -1: an event at a host (sent, received, a scripted drop), on no link.
        "link": pd.Categorical.from_codes(raw["link"], categories=links),
        "dir": pd.Categorical.from_codes(raw["dir"].astype(np.int8), categories=["data", "ack"]),
    }
    for name in COLUMNS:
        if name not in data:
            data[name] = raw[name]
    return pd.DataFrame(data, columns=COLUMNS)


def save_packets(table: pd.DataFrame, path: str | Path, metadata: dict[bytes, bytes] | None = None) -> Path:
    """Writes a packet table as Parquet (categories become dictionary columns)."""
    import pyarrow as pa

    path = Path(path)
    table_pa = pa.Table.from_pandas(table, preserve_index=False)
    if metadata:
        table_pa = table_pa.replace_schema_metadata({**(table_pa.schema.metadata or {}), **metadata})
    # Whole or not at all, a failure naming the file (paths.WholeFiles).
    with WholeFiles() as files:
        files.parquet(path, table_pa)
    return path


def check_packet_output(source: Any, path: str | Path, suffix: str | None = None, copied: bool = False) -> Path:
    """``path`` as a Path, once the finished ``_core.Simulation`` is known to hold a packet
    trace (SattcpError) and ``path`` to be writable (:func:`~sattcp.paths.check_file`:
    :class:`~sattcp.errors.OutputPathError` for a folder, a missing folder, a path that is
    not one) with ``suffix``, if given. ``copied``: the trace's table came with a copy of the
    result (``RunResult.__getstate__``), without ``source``. Nothing is written."""
    if not copied and (source is None or not source.has_packets):
        raise SattcpError("no packet trace in this result: set trace.packets (e.g. --set trace.packets=all)")
    path = check_file(path)
    if suffix is not None and path.suffix != suffix:
        raise OutputPathError(f"output {path}: the packet table is written as Parquet; give it the suffix {suffix}")
    return path


def write_pcap(source: Any, path: str | Path) -> tuple[int, int]:
    """Writes the packet trace of a finished ``_core.Simulation`` as pcapng, whole or not at
    all (:func:`~sattcp.paths.writing`: a full disk is :class:`~sattcp.errors.WriteError` naming
    the file, and leaves no partial file); returns (packets on the links' interfaces, packets on
    the drops interface)."""
    path = check_packet_output(source, path)
    with writing(path) as p:
        return source.write_pcapng(p)
