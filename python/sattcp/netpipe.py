"""NetPIPE (Debian's ``NPtcp``, netpipe-tcp 3.7) through ``sattcp emulate``: seed 003's
experiment on the kernel's own TCP.

``run_nptcp`` starts the NPtcp receiver in the server namespace and the transmitter in the
client namespace of an :class:`~sattcp.emulate.Emulation`, both with the same socket buffer
size (``-b``, which NPtcp applies with SO_SNDBUF and SO_RCVBUF, as seed 003's runs did), and
parses NPtcp's output file with :func:`parse_nptcp`.

NPtcp's output file has one line per block size: bytes, throughput in NetPIPE's "Mbps" and
the block transfer time in seconds (half the best round trip over its repeats). NetPIPE's Mbps
are 2^20 bits per second (65536 bytes in 0.3105 s print as 1.61); the rows here carry both
that figure and bits per second.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path
from typing import Any

from .emulate import EmulateError, Emulation

__all__ = ["NETPIPE_MBPS", "NPTCP_PORT", "parse_nptcp", "run_nptcp"]

#: NetPIPE's "Mbps": 2^20 bits per second (netpipe.c divides by 1024 * 1024).
NETPIPE_MBPS = 1024 * 1024
#: NPtcp's default port.
NPTCP_PORT = 5002
#: How long one NPtcp run may take (an RTT of 600 ms and blocks up to 64 KB take minutes).
NPTCP_TIMEOUT_S = 3600.0


def parse_nptcp(text: str) -> list[dict[str, Any]]:
    """NPtcp's output file (``-o``) as rows ``{bytes, time_s, netpipe_mbps, throughput_bps}``."""
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        f = line.split()
        if not f:
            continue
        if len(f) < 3:
            raise ValueError(f"NPtcp output line {n}: expected bytes, Mbps, time; got {line!r}")
        nbytes, mbps, t = int(f[0]), float(f[1]), float(f[2])
        rows.append({"bytes": nbytes, "time_s": t, "netpipe_mbps": mbps, "throughput_bps": nbytes * 8 / t if t > 0 else 0.0})
    return rows


def run_nptcp(em: Emulation, buffer: int | None = None, upper: int = 65536, extra: list[str] | None = None,
              timeout: float = NPTCP_TIMEOUT_S) -> list[dict[str, Any]]:
    """One NetPIPE run across ``em``: block sizes from 1 byte to ``upper`` (NetPIPE's schedule
    with its 3-byte perturbations), socket buffers of ``buffer`` bytes (None: the kernel's
    defaults and autotuning). Returns :func:`parse_nptcp`'s rows."""
    bopt = ["-b", str(buffer)] if buffer else []
    with tempfile.TemporaryDirectory(prefix="sattcp-netpipe-") as d:
        out = Path(d) / "np.out"
        em.popen("server", ["NPtcp", *bopt], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        em.wait_listening("server", NPTCP_PORT)
        r = em.run("client", ["NPtcp", "-h", em.addr("server"), *bopt, "-u", str(upper), "-o", str(out), *(extra or [])],
                   capture_output=True, text=True, timeout=timeout)
        if not out.exists():
            raise EmulateError(f"NPtcp wrote no output (exit {r.returncode}): {r.stderr.strip()[-500:]}")
        return parse_nptcp(out.read_text())
