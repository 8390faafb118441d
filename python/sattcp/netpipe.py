"""NetPIPE (Debian's ``NPtcp``, netpipe-tcp 3.7) through ``sattcp emulate``: seed 003's
experiment on the kernel's own TCP.

``run_nptcp`` starts the NPtcp receiver in the server namespace and the transmitter in the
client namespace of an :class:`~sattcp.emulate.Emulation`, both with the same socket buffer
size (``-b``, which NPtcp applies with SO_SNDBUF and SO_RCVBUF, as seed 003's runs did), and
parses NPtcp's output file with :func:`parse_nptcp`.

NPtcp reports only the best round trip of each size, so seed 003's variance and %CDV (its
figure 5) cannot come from it. ``run_pingpong`` runs NetPIPE's method for one block size with
every repeat kept: ``python -m sattcp.netpipe pp-server`` / ``pp-client`` (below), the same
socket options as NPtcp (SO_SNDBUF and SO_RCVBUF before connecting, TCP_NODELAY), a 1-byte
exchange first (NetPIPE's synchronisation) and one untimed round trip of the block (NetPIPE's
connection has carried the smaller sizes before), then REPEATS round trips of one block each
way; the transfer time of each is half its round trip.

NPtcp's output file has one line per block size: bytes, throughput in NetPIPE's "Mbps" and
the block transfer time in seconds (half the best round trip over its repeats). NetPIPE's Mbps
are 2^20 bits per second (65536 bytes in 0.3105 s print as 1.61); the rows here carry both
that figure and bits per second.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .emulate import EmulateError, Emulation

__all__ = ["NETPIPE_MBPS", "NPTCP_PORT", "PINGPONG_PORT", "accuracy", "cells_wire", "parse_nptcp", "pingpong_stats", "run_nptcp", "run_pingpong"]

#: NetPIPE's "Mbps": 2^20 bits per second (netpipe.c divides by 1024 * 1024).
NETPIPE_MBPS = 1024 * 1024
#: NPtcp's default port.
NPTCP_PORT = 5002
#: How long one NPtcp run may take (an RTT of 600 ms and blocks up to 64 KB take minutes).
NPTCP_TIMEOUT_S = 3600.0
#: The port of ``pp-server`` (NPtcp's plus one, so both can run in one namespace).
PINGPONG_PORT = 5003


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
              timeout: float = NPTCP_TIMEOUT_S, lower: int | None = None, perturbation: int | None = None,
              rt_priority: int | None = None) -> list[dict[str, Any]]:
    """One NetPIPE run across ``em``: block sizes from ``lower`` (default 1) to ``upper``
    (NetPIPE's schedule with ``perturbation``-byte perturbations, default 3), socket buffers of
    ``buffer`` bytes (None: the kernel's defaults and autotuning); ``extra`` options go to the
    transmitter only (e.g. ``-n``). Returns :func:`parse_nptcp`'s rows.

    Both ends get the schedule (``-l``, ``-u``, ``-p``): NPtcp's receiver computes the block
    sizes itself, and one built with another perturbation waits for bytes that never come (the
    run hangs at the first perturbed size, 16 bytes).

    ``rt_priority``: both ends run at that SCHED_FIFO priority (``chrt -f``; root), so that on a
    busy machine their wake-ups do not wait milliseconds for a core and the times are the
    link's; keep it below the emulator's (10). None (the default): ordinary processes."""
    rt = _realtime(rt_priority)
    bopt = ["-b", str(buffer)] if buffer else []
    sched = ["-u", str(upper)]
    if lower is not None:
        sched += ["-l", str(lower)]
    if perturbation is not None:
        sched += ["-p", str(perturbation)]
    with tempfile.TemporaryDirectory(prefix="sattcp-netpipe-") as d:
        out = Path(d) / "np.out"
        srv = em.popen("server", [*rt, "NPtcp", *bopt, *sched], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        em.wait_listening("server", NPTCP_PORT, process=srv, name="the NPtcp receiver")
        r = em.run("client", [*rt, "NPtcp", "-h", em.addr("server"), *bopt, *sched, "-o", str(out), *(extra or [])],
                   capture_output=True, text=True, timeout=timeout)
        if not out.exists():
            raise EmulateError(f"NPtcp wrote no output (exit {r.returncode}): {r.stderr.strip()[-500:]}")
        return parse_nptcp(out.read_text())


def _realtime(rt_priority: int | None) -> list[str]:
    """The command prefix that runs an endpoint at SCHED_FIFO ``rt_priority`` (``chrt -f``), or
    none for ordinary processes."""
    if rt_priority is None:
        return []
    if not 1 <= rt_priority <= 99:
        raise ValueError(f"rt_priority must be 1 to 99, got {rt_priority}")
    return ["chrt", "-f", str(rt_priority)]


def pingpong_stats(nbytes: int, times: list[float]) -> dict[str, Any]:
    """One block size's row from its transfer times (s), one round trip per trial: the columns of
    the simulator's ``RunResult.netpipe`` (mean time, best time, population variance, throughput
    at the mean time, %CDV = standard deviation / mean x 100, seed 003 section 4)."""
    n = len(times)
    if n == 0:
        return {"bytes": nbytes, "repeats": 0, "time_s": float("nan"), "min_s": float("nan"), "variance_s2": float("nan"),
                "throughput_bps": 0.0, "cdv_pct": float("nan"), "nrepeat": 1}
    mean = sum(times) / n
    var = sum((t - mean) ** 2 for t in times) / n
    return {"bytes": nbytes, "repeats": n, "time_s": mean, "min_s": min(times), "variance_s2": var,
            "throughput_bps": nbytes * 8 / mean if mean > 0 else 0.0, "cdv_pct": var ** 0.5 / mean * 100 if mean > 0 and n > 1 else float("nan"),
            "nrepeat": 1}


def run_pingpong(em: Emulation, nbytes: int, repeats: int, buffer: int | None = None, deadline_s: float = 600.0,
                 rt_priority: int | None = None) -> dict[str, Any]:
    """NetPIPE's ping-pong of one block size across ``em`` with every repeat kept (kernel TCP):
    :func:`pingpong_stats`' row, after one untimed round trip (within ``deadline_s`` of its own).
    Repeats not finished within ``deadline_s`` are left out (the row's ``repeats`` says how many
    finished); a server that went away is an EmulateError. ``rt_priority``: as
    :func:`run_nptcp`'s."""
    me = [*_realtime(rt_priority), sys.executable, "-m", "sattcp.netpipe"]
    buf = str(buffer or 0)
    srv = em.popen("server", [*me, "pp-server", buf, str(nbytes)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    em.wait_listening("server", PINGPONG_PORT, process=srv, name="the ping-pong server")
    r = em.run("client", [*me, "pp-client", em.addr("server"), buf, str(nbytes), str(repeats), str(deadline_s)],
               capture_output=True, text=True, timeout=2 * deadline_s + 60)  # the untimed first block, then the repeats
    if r.returncode != 0 or not r.stdout.strip():
        raise EmulateError(f"the ping-pong client failed (exit {r.returncode}): {r.stderr.strip()[-500:]}")
    return pingpong_stats(nbytes, json.loads(r.stdout.strip().splitlines()[-1]))


# -- the emulator's accuracy on seed 003's link (scripts/netpipe_accuracy.py prints these) ----

#: Seed 003's E1 rate.
E1_RATE = 2_048_000
#: IPv4 + UDP headers.
UDP_IP = 28
#: A full TCP segment's payload at MTU 1500: 1500 - 20 (IP) - 20 (TCP) - 12 (timestamps).
FULL_MSS = 1448


#: SCHED_FIFO priority of the probe programs, below the emulator's own 10: a probe that waits
#: for a core on a busy machine adds its wait to the RTT it measures, which is the machine's
#: doing, not the link's (tests/test_emulate.py runs its probes so too).
PROBE_RT_PRIORITY = 5


def _probe() -> list[str]:
    rt = _realtime(PROBE_RT_PRIORITY) if shutil.which("chrt") else []
    return [*rt, sys.executable, "-m", "sattcp.emulate", "probe"]


def cells_wire(ip_bytes: int) -> int:
    """AAL5 + LLC/SNAP in 53-byte cells (crates/sattcp-core/src/atm/aal5.rs)."""
    return -(-(ip_bytes + 16) // 48) * 53


def _acc_scenario(tmp: Path, **keys: str) -> Path:
    p = tmp / "acc.toml"
    p.write_text("[emulate]\n" + "".join(f"{k} = {v}\n" for k, v in keys.items()))
    return p


def _start(em: Emulation, argv: list[str]) -> subprocess.Popen[str]:
    p = em.popen("server", argv, stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    return p


def _result(p: subprocess.Popen[str]) -> dict[str, Any]:
    out, _ = p.communicate(timeout=120)
    return json.loads(out.strip().splitlines()[-1])


def accuracy_delay(tmp: Path, quick: bool) -> list[dict[str, Any]]:
    """Median/min/max UDP echo RTT (100-byte payload, a 128-byte IP packet) against
    2 x (delay + 128 x 8 / rate), for one-way delays from 0.5 to 300 ms."""
    rows = []
    for one_way_ms in ([0.5, 50, 200] if quick else [0.5, 5, 50, 200, 300]):
        s = _acc_scenario(tmp, rate='"2.048Mbps"', delay=f'"{one_way_ms}ms"')
        n = 10 if quick or one_way_ms >= 200 else 30
        with Emulation(s) as em:
            _start(em, [*_probe(), "echo-server"])
            out = em.run("client", [*_probe(), "echo-client", "{server}", str(n), "100"], capture_output=True, text=True, timeout=600)
        rtts = sorted(json.loads(out.stdout))
        expected = 2 * (one_way_ms / 1e3 + 128 * 8 / E1_RATE)
        late = max(d["late_max_us"] for d in (em.stats or {}).get("directions", [{"late_max_us": float("nan")}]))
        rows.append({"delay_ms": one_way_ms, "probes": len(rtts), "expected_ms": expected * 1e3, "median_ms": rtts[len(rtts) // 2] * 1e3,
                     "min_ms": rtts[0] * 1e3, "max_ms": rtts[-1] * 1e3, "emulator_late_max_us": late})
    return rows


def accuracy_rate(tmp: Path, quick: bool) -> list[dict[str, Any]]:
    """A saturated link (UDP at about twice the rate): the receiver's rate in IP bytes against
    rate x IP bytes / wire bytes, IP and ATM framing."""
    rows = []
    payload = 1000
    for framing in ("ip", "atm"):
        s = _acc_scenario(tmp, rate='"2.048Mbps"', delay='"10ms"', queue='"20pkt"', framing=f'"{framing}"')
        n = 600 if quick else 1500
        with Emulation(s) as em:
            sink = _start(em, [*_probe(), "udp-sink"])
            em.run("client", [*_probe(), "udp-source", "{server}", str(n), str(payload), "10", "0.02"], check=True, timeout=600)
            r = _result(sink)
        ip = payload + UDP_IP
        wire = ip if framing == "ip" else cells_wire(ip)
        measured = (r["bytes"] + r["n"] * UDP_IP - ip) * 8 / (r["t_last"] - r["t_first"])
        expected = E1_RATE * ip / wire
        rows.append({"framing": framing, "packets": r["n"], "seconds": r["t_last"] - r["t_first"], "expected_ip_bps": expected, "measured_ip_bps": measured,
                     "error_pct": (measured / expected - 1) * 100})
    return rows


def accuracy_tcp(tmp: Path, quick: bool, ccs: tuple[str, ...] = ("reno", "cubic", "bbr")) -> list[dict[str, Any]]:
    """The kernel's TCP, 1 MB (quick: 400 KB) over 2.048 Mbps and 10 ms one way: goodput past the
    first 64 KB against rate x MSS / wire bytes of a full packet."""
    rows = []
    n = 400_000 if quick else 1_000_000
    for framing in ("ip", "atm"):
        for cc in ccs:
            s = _acc_scenario(tmp, rate='"2.048Mbps"', delay='"10ms"', framing=f'"{framing}"', cc=f'"{cc}"')
            with Emulation(s) as em:
                sink = _start(em, [*_probe(), "tcp-sink", "65536"])
                em.run("client", [*_probe(), "tcp-source", "{server}", str(n)], check=True, timeout=600)
                r = _result(sink)
            wire = 1500 if framing == "ip" else cells_wire(1500)
            expected = E1_RATE * FULL_MSS / wire
            rows.append({"framing": framing, "cc": cc, "bytes": r["bytes"], "expected_bps": expected, "goodput_bps": r["goodput_bps"],
                         "error_pct": (r["goodput_bps"] / expected - 1) * 100})
    return rows


def accuracy(quick: bool = False) -> dict[str, list[dict[str, Any]]]:
    """The three accuracy tables: ``{"delay": ..., "rate": ..., "tcp": ...}`` (needs root)."""
    with tempfile.TemporaryDirectory(prefix="sattcp-acc-") as d:
        tmp = Path(d)
        return {"delay": accuracy_delay(tmp, quick), "rate": accuracy_rate(tmp, quick), "tcp": accuracy_tcp(tmp, quick)}


def _socket(buffer: int) -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if buffer:  # as NPtcp -b: both buffers, before the connection exists
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, buffer)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, buffer)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def _recv_exactly(c: socket.socket, n: int, end: float | None = None) -> bool:
    """Reads ``n`` bytes; False if the peer closed first. With ``end`` (time.monotonic), each
    read waits only until then (TimeoutError after)."""
    while n > 0:
        if end is not None:
            c.settimeout(max(0.001, end - time.monotonic()))
        d = c.recv(min(n, 1 << 16))
        if not d:
            return False
        n -= len(d)
    return True


def _pingpong_main(mode: str, args: list[str]) -> int:
    """``pp-server BUFFER BYTES``: echoes blocks of BYTES (after a 1-byte synchronisation) until
    the client closes. ``pp-client HOST BUFFER BYTES REPEATS DEADLINE_S``: one untimed round
    trip of the block, then REPEATS timed ones, each part within DEADLINE_S; prints the timed
    ones' transfer times (half round trips, s) as one JSON list; the repeats not finished by
    the deadline are left out, and a server that closes the connection or resets it is a
    failure (exit 1, said on stderr), not a deadline."""
    if mode == "pp-server":
        buffer, nbytes = int(args[0]), int(args[1])
        ls = _socket(buffer)
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind(("0.0.0.0", PINGPONG_PORT))
        ls.listen(1)
        c, _ = ls.accept()
        if _recv_exactly(c, 1):
            c.sendall(b"s")
            block = bytes(nbytes)
            while _recv_exactly(c, nbytes):
                c.sendall(block)
        return 0
    if mode == "pp-client":
        host, buffer, nbytes, repeats, deadline = args[0], int(args[1]), int(args[2]), int(args[3]), float(args[4])
        c = _socket(buffer)
        try:
            c.connect((host, PINGPONG_PORT))
        except OSError as e:
            print(f"pp-client: cannot connect to {host} port {PINGPONG_PORT}: {e}", file=sys.stderr)
            return 1
        end = time.monotonic() + deadline
        c.settimeout(deadline)
        times: list[float] = []
        failure = ""
        try:
            c.sendall(b"s")
            if not _recv_exactly(c, 1):
                failure = "the server closed the connection before the synchronisation byte"
            block = bytes(nbytes)
            # One untimed round trip of the block first: NetPIPE's connection has carried every
            # smaller size before this one, ours only a byte, and from there Linux's receive
            # window takes one more round trip to open for the first block (at RTT 400 ms an
            # 8 KB block took 0.62 s once, then 0.238 s: %CDV 32% on an error-free link). It
            # has a deadline of its own, so that the repeats still have the whole of theirs.
            c.settimeout(max(0.001, end - time.monotonic()))
            if not failure and repeats > 0:
                c.sendall(block)
                if not _recv_exactly(c, nbytes, end):
                    failure = "the server closed the connection during the untimed first block"
                end = time.monotonic() + deadline
            for _ in range(repeats if not failure else 0):
                # sendall's timeout bounds the whole call; each read sets its own (the deadline).
                c.settimeout(max(0.001, end - time.monotonic()))
                t0 = time.monotonic()
                c.sendall(block)
                if not _recv_exactly(c, nbytes, end):
                    failure = f"the server closed the connection after {len(times)} of {repeats} repeats"
                    break
                times.append((time.monotonic() - t0) / 2)
        except TimeoutError:
            pass  # the deadline (or TCP giving up, ETIMEDOUT): the repeats not finished are left out
        except OSError as e:  # a reset, a broken pipe: a failure, not a deadline
            failure = f"{e} after {len(times)} of {repeats} repeats"
        print(json.dumps(times))
        if failure:
            print(f"pp-client: {failure}", file=sys.stderr)
            return 1
        return 0
    print(f"unknown mode {mode!r} (pp-server or pp-client)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(_pingpong_main(sys.argv[1], sys.argv[2:]) if len(sys.argv) > 1 else 2)
    except KeyboardInterrupt:  # Ctrl-C reaches the whole process group: the caller says it
        sys.exit(130)
