"""``sattcp emulate``: the kernel's own TCP through a satellite link that sattcp emulates.

Two network namespaces, "server" (A, 10.99.0.1) and "client" (B, 10.99.0.2), are joined by
two TUN devices; the Rust emulator ``sattcp-emu`` (crates/sattcp-emu) forwards IP packets
between them with the simulator's link model: rate, propagation delay, drop-tail queue, bit
errors, optionally ATM cells. Everything this module creates is removed on exit, on error and on
Ctrl-C: the processes in the namespaces, the namespaces, the emulator (its devices go with it).

    sattcp emulate SCENARIO [--set PATH=VALUE]... [--server CMD] [--wait-port PORT] -- COMMAND...

``--server CMD`` (a shell-quoted string) runs in the server namespace in the background,
``COMMAND...`` in the client namespace in the foreground; ``{server}`` and ``{client}`` in
either are replaced by the two addresses. The exit status is COMMAND's. When COMMAND ends the
server command has ``--linger`` seconds (default 5) to end by itself before it is stopped. Without COMMAND the
namespaces stay up until Ctrl-C (enter them with ``ip netns exec NAME ...``).
A server command that fails by itself (a status other than 0, or a signal) is reported with its
last lines on stderr, and the exit status is then 1 unless COMMAND's is another failure; one that
ends before ``--wait-port`` listens, or fails without COMMAND, ends the emulation at once.

Python use::

    with Emulation("scenarios/emulate-sat.toml", {"emulate.delay": "200ms"}) as em:
        em.popen("server", ["NPtcp"])
        em.run("client", ["NPtcp", "-h", em.addr("server")])
    em.stats   # the emulator's counters (docs/emulate.md)
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import secrets
import select
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .api import check_scenario_file, read_toml_file
from .cli import EXIT_BAD_INPUT, EXIT_FAILED, _parse_set, output_path
from .errors import SattcpError, ScenarioError
from .interrupts import deferred_signals

__all__ = ["ADDRS", "EmulateError", "Emulation", "PrivilegeError", "ServerCommand", "find_binary", "missing_privileges", "register"]

#: Addresses of the two ends (point-to-point, one /32 each; the namespaces are private, so every
#: emulation uses the same two).
ADDRS = {"server": "10.99.0.1", "client": "10.99.0.2"}
TUN_PATH = "/dev/net/tun"
#: linux/capability.h bit numbers.
CAP_NET_ADMIN = 12
CAP_SYS_ADMIN = 21
#: How long the emulator may take to create its devices, and to stop and report.
START_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 10.0
#: After COMMAND ends, how long the server command may take to end by itself (`--linger`).
LINGER_S = 5.0
#: How much of the server command's stderr a failure report shows.
SERVER_TAIL_LINES = 10
ROOT = Path(__file__).resolve().parents[2]


class EmulateError(SattcpError):
    """The emulation could not be set up or failed while running."""


class PrivilegeError(EmulateError):
    """Root (CAP_NET_ADMIN, CAP_SYS_ADMIN), /dev/net/tun or ``ip`` is missing."""


def find_binary() -> Path:
    """The ``sattcp-emu`` program: $SATTCP_EMU, the workspace's target/ (release first), PATH."""
    env = os.environ.get("SATTCP_EMU")
    candidates = [Path(env)] if env else []
    candidates += [ROOT / "target" / "release" / "sattcp-emu", ROOT / "target" / "debug" / "sattcp-emu"]
    which = shutil.which("sattcp-emu")
    if which:
        candidates.append(Path(which))
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    raise EmulateError("the emulator program sattcp-emu is not built: run `cargo build --release -p sattcp-emu` (or set SATTCP_EMU)")


def _effective_caps() -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16)
    except OSError:
        pass
    return 0


def missing_privileges() -> list[str]:
    """What this process lacks to emulate, in words ([] when nothing)."""
    missing = []
    caps = _effective_caps()
    if os.geteuid() != 0 and not (caps >> CAP_NET_ADMIN & 1 and caps >> CAP_SYS_ADMIN & 1):
        missing.append("root (or CAP_NET_ADMIN to create TUN devices and CAP_SYS_ADMIN for `ip netns`)")
    if not Path(TUN_PATH).exists():
        missing.append(f"{TUN_PATH} (modprobe tun; in a container, --device /dev/net/tun)")
    if shutil.which("ip") is None:
        missing.append("the `ip` command (iproute2)")
    return missing


def check_scenario(scenario: str | Path, overrides: dict[str, str] | None = None, binary: Path | None = None) -> dict[str, Any]:
    """The validated emulation (``sattcp-emu check``) as a dict; ScenarioError on bad input."""
    # Before looking for the program: the path's fault first, and a file that is not UTF-8 text
    # said as `sattcp run` says it (the program exited 2 saying it, which read as exit 1 here).
    read_toml_file(scenario)
    binary = binary or find_binary()
    p = subprocess.run([str(binary), "check", str(scenario), *_set_args(overrides)], capture_output=True, text=True, timeout=60)
    out = p.stdout.strip().splitlines()
    doc = json.loads(out[-1]) if out else {}
    if p.returncode == EXIT_BAD_INPUT and "problems" in doc:
        raise ScenarioError(doc["problems"])
    if p.returncode == EXIT_BAD_INPUT:  # bad input said in words only
        raise ScenarioError([{"path": "", "rule": p.stderr.strip().removeprefix("sattcp-emu: "), "got": None}])
    if p.returncode != 0:
        raise EmulateError(f"sattcp-emu check failed: {p.stderr.strip()}")
    return doc


def _set_args(overrides: dict[str, str] | None) -> list[str]:
    return [a for k, v in (overrides or {}).items() for a in ("--set", f"{k}={v}")]


def _ip(*args: str) -> None:
    p = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise EmulateError(f"`ip {' '.join(args)}` failed: {p.stderr.strip()}")


class Emulation:
    """Two namespaces joined by the emulated link; a context manager that always cleans up."""

    def __init__(self, scenario: str | Path, overrides: dict[str, str] | None = None, *, binary: Path | None = None) -> None:
        self.scenario = Path(scenario)
        self.overrides = dict(overrides or {})
        self.binary = binary or find_binary()
        token = secrets.token_hex(3)
        #: Namespace and device names, unique to this emulation.
        self.ns = {"server": f"sattcp-{token}-a", "client": f"sattcp-{token}-b"}
        self.tun = {"server": f"stc{token}a", "client": f"stc{token}b"}
        self.config: dict[str, Any] = {}
        self.stats: dict[str, Any] | None = None
        self._proc: subprocess.Popen[str] | None = None
        self._children: list[subprocess.Popen[Any]] = []
        self._made: list[str] = []

    # -- set-up and tear-down ---------------------------------------------------------------
    def __enter__(self) -> Emulation:
        self.config = check_scenario(self.scenario, self.overrides, self.binary)
        missing = missing_privileges()
        if missing:
            raise PrivilegeError("sattcp emulate needs " + "; ".join(missing))
        try:
            self._setup()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _setup(self) -> None:
        for side in ("server", "client"):
            # Counted as made before it is: a Ctrl-C while `ip netns add` runs may come after
            # the namespace exists (close() deletes what is not there without a word).
            self._made.append(self.ns[side])
            _ip("netns", "add", self.ns[side])
            # IPv6 off: no router solicitations or MLD reports on the emulated link.
            self._sysctl(side, "net.ipv6.conf.all.disable_ipv6", "1")
            self._sysctl(side, "net.ipv6.conf.default.disable_ipv6", "1")
        self._start_emulator()
        mtu = str(self.config["mtu"])
        for side, peer in (("server", "client"), ("client", "server")):
            ns, dev = self.ns[side], self.tun[side]
            _ip("link", "set", dev, "netns", ns)
            _ip("-n", ns, "link", "set", "lo", "up")
            _ip("-n", ns, "addr", "add", f"{ADDRS[side]}/32", "peer", f"{ADDRS[peer]}/32", "dev", dev)
            _ip("-n", ns, "link", "set", dev, "mtu", mtu, "up")
        cc = self.config.get("cc")
        if cc:
            self._check_cc(cc)
        for side in ("server", "client"):
            if cc:
                self._sysctl(side, "net.ipv4.tcp_congestion_control", cc)
            for k, v in self.config.get("sysctl", {}).items():
                self._sysctl(side, k, v, path=f"emulate.sysctl.{k}")

    def _start_emulator(self) -> None:
        cmd = [str(self.binary), "run", str(self.scenario), *_set_args(self.overrides), "--tun-a", self.tun["server"], "--tun-b", self.tun["client"]]
        # Its own session: Ctrl-C reaches sattcp, which stops the emulator last, after the
        # commands, so that their final packets still cross.
        self._proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        assert self._proc.stdout is not None
        ready, _, _ = select.select([self._proc.stdout], [], [], START_TIMEOUT_S)
        line = self._proc.stdout.readline().strip() if ready else ""
        if line != "ready":
            self._proc.kill()
            err = self._proc.communicate(timeout=STOP_TIMEOUT_S)[1].strip()
            cls = PrivilegeError if self._proc.returncode == EXIT_BAD_INPUT else EmulateError
            raise cls(err.removeprefix("sattcp-emu: ") or f"the emulator did not start within {START_TIMEOUT_S:g} s")

    def _check_cc(self, cc: str) -> None:
        avail_path = "/proc/sys/net/ipv4/tcp_available_congestion_control"
        avail = Path(avail_path).read_text().split()
        if cc not in avail and shutil.which("modprobe"):
            subprocess.run(["modprobe", f"tcp_{cc}"], capture_output=True, timeout=30)
            avail = Path(avail_path).read_text().split()
        if cc not in avail:
            raise ScenarioError([{"path": "emulate.cc", "rule": f"not available in this kernel (available: {', '.join(avail)})", "got": json.dumps(cc)}])
        # A namespace other than the host's may only choose an algorithm of the host's
        # tcp_allowed_congestion_control (EPERM otherwise, net/ipv4/tcp_cong.c): widen that
        # list (a host-wide setting; it only lets programs choose the algorithm too).
        allowed_path = Path("/proc/sys/net/ipv4/tcp_allowed_congestion_control")
        allowed = allowed_path.read_text().split()
        if cc not in allowed:
            allowed_path.write_text(" ".join([*allowed, cc]) + "\n")

    def _sysctl(self, side: str, key: str, value: str, path: str = "") -> None:
        p = subprocess.run(["ip", "netns", "exec", self.ns[side], "sysctl", "-q", "-w", f"{key}={value}"], capture_output=True, text=True, timeout=30)
        if p.returncode != 0:
            msg = p.stderr.strip()
            if path:
                raise ScenarioError([{"path": path, "rule": f"the kernel refused it ({msg})", "got": json.dumps(value)}])
            raise EmulateError(f"sysctl {key}={value} in {self.ns[side]}: {msg}")

    def close(self) -> dict[str, Any] | None:
        """Stops everything this emulation started and removes what it made; returns the
        emulator's counters. Safe to call more than once. Ctrl-C and SIGTERM wait until it is
        done (a server that ignores SIGTERM holds it 5 s): cut short, it left the namespaces
        and what ran in them."""
        with deferred_signals(f"sattcp emulate: removing {' and '.join(self.ns.values())} first"):
            return self._close()

    def _close(self) -> dict[str, Any] | None:
        for child in self._children:
            _stop(child)
        self._children.clear()
        for ns in self._made:
            pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True, timeout=30).stdout.split()
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
        if self._proc is not None:
            proc, self._proc = self._proc, None
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
            try:
                out, err = proc.communicate(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                out, err = proc.communicate()
            lines = [ln for ln in out.splitlines() if ln.startswith("{")]
            if lines:
                self.stats = json.loads(lines[-1])
            elif err.strip():
                print(f"sattcp emulate: emulator: {err.strip()}", file=sys.stderr)
        for ns in self._made:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)
        self._made.clear()
        return self.stats

    # -- running things in the namespaces ----------------------------------------------------
    def addr(self, side: str) -> str:
        return ADDRS[side]

    def command(self, side: str, argv: Sequence[str]) -> list[str]:
        """``argv`` as run inside ``side``'s namespace, with {server}/{client} filled in."""
        if side not in self.ns:
            raise ValueError(f"side must be 'server' or 'client', got {side!r}")
        return ["ip", "netns", "exec", self.ns[side], *(a.replace("{server}", ADDRS["server"]).replace("{client}", ADDRS["client"]) for a in argv)]

    def popen(self, side: str, argv: Sequence[str], **kw: Any) -> subprocess.Popen[Any]:
        """Starts ``argv`` in the background; it is stopped when the emulation closes."""
        p = subprocess.Popen(self.command(side, argv), **kw)
        self._children.append(p)
        return p

    def run(self, side: str, argv: Sequence[str], timeout: float | None = None, **kw: Any) -> subprocess.CompletedProcess[Any]:
        return subprocess.run(self.command(side, argv), timeout=timeout, **kw)

    def wait_listening(self, side: str, port: int, timeout: float = 10.0,
                       process: ServerCommand | subprocess.Popen[Any] | None = None, name: str = "") -> None:
        """Waits until a TCP socket listens on ``port`` in ``side``'s namespace; with
        ``process`` (the program that is to listen, a :class:`ServerCommand` or a process of
        :meth:`popen` named ``name``), EmulateError as soon as it has ended."""
        deadline = time.monotonic() + timeout
        want = f":{port:04X}"
        when = f"before anything listened on TCP port {port}"
        while time.monotonic() < deadline:
            if isinstance(process, ServerCommand) and process.proc.poll() is not None:
                raise EmulateError(process.ended(when))
            if isinstance(process, subprocess.Popen) and process.poll() is not None:
                raise EmulateError(f"{name or 'the server'} {_how_it_ended(process.returncode)} {when}")
            out = subprocess.run(self.command(side, ["cat", "/proc/net/tcp"]), capture_output=True, text=True, timeout=30).stdout
            # Columns: sl local_address rem_address st ...; st 0A is LISTEN.
            if any(f.split()[1].endswith(want) and f.split()[3] == "0A" for f in out.splitlines()[1:] if len(f.split()) > 3):
                return
            time.sleep(0.05)
        raise EmulateError(f"nothing listened on TCP port {port} in the {side} namespace within {timeout:g} s")


def _how_it_ended(rc: int | None) -> str:
    """``exited with status N`` or ``was killed by signal NAME``, from a Popen's return code."""
    if rc is not None and rc < 0:
        try:
            return f"was killed by signal {signal.Signals(-rc).name}"
        except ValueError:
            return f"was killed by signal {-rc}"
    return f"exited with status {rc}"


class ServerCommand:
    """``--server CMD`` started in the server namespace. Its stderr still reaches ours as it
    comes, through a pipe whose last lines are kept: if it fails, :meth:`failure` says so with
    them (the lines may be far up by then, among the client's). The pipe is this object's, not
    the Popen's, so that stopping the process never waits on a read."""

    def __init__(self, popen: Callable[..., subprocess.Popen[Any]], argv: Sequence[str]) -> None:
        self.argv = list(argv)
        self._tail: deque[bytes] = deque(maxlen=SERVER_TAIL_LINES + 1)
        self._lock = threading.Lock()  # the copier appends while tail() may read
        r, w = os.pipe()
        try:
            self.proc = popen("server", self.argv, stderr=w)
        except BaseException:
            os.close(r)
            raise
        finally:
            os.close(w)
        self._copier = threading.Thread(target=self._copy, args=(r,), daemon=True, name="sattcp-server-stderr")
        self._copier.start()

    def _copy(self, fd: int) -> None:
        text = codecs.getincrementaldecoder("utf-8")("replace")
        partial = b""
        try:
            while data := os.read(fd, 65536):
                sys.stderr.write(text.decode(data))
                sys.stderr.flush()
                lines = (partial + data).split(b"\n")
                partial = lines.pop()[-4096:]  # a line without its end yet (kept short)
                with self._lock:
                    self._tail.extend(ln[-4096:] for ln in lines)
        except (OSError, ValueError):  # our stderr closed
            pass
        finally:
            if partial:
                with self._lock:
                    self._tail.append(partial)
            os.close(fd)

    def tail(self) -> list[str]:
        """The last lines it wrote on stderr (all of them once it has ended and its stderr is
        closed; waits a moment for that)."""
        self._copier.join(timeout=1.0)
        with self._lock:
            lines = [ln.decode("utf-8", "replace").rstrip() for ln in self._tail]
        while lines and not lines[-1]:
            lines.pop()
        return lines[-SERVER_TAIL_LINES:]

    def ended(self, when: str = "") -> str:
        """What became of it (``when``: e.g. "before anything listened on TCP port 5002"), with
        its last lines on stderr."""
        how = _how_it_ended(self.proc.poll())
        tail = self.tail()
        said = ("; the end of its stderr:\n" + "\n".join(f"  | {ln}" for ln in tail)) if tail else " (nothing on stderr)"
        return f"the server command `{shlex.join(self.argv)}` {how}{' ' + when if when else ''}{said}"

    def failure(self, when: str = "") -> str | None:
        """:meth:`ended` if it has ended by itself with a failure (a status other than 0, or a
        signal), else None (still running, or done)."""
        rc = self.proc.poll()
        return self.ended(when) if rc is not None and rc != 0 else None


def _stop(p: subprocess.Popen[Any]) -> None:
    if p.poll() is None:
        p.terminate()
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    for f in (p.stdin, p.stdout, p.stderr):
        if f is not None:
            f.close()


def format_stats(stats: dict[str, Any]) -> str:
    """The emulator's counters, one line per direction."""
    lines = [f"emulator: {stats['duration_s']:.2f} s, {stats['config']['rate_bps'] / 1e6:g} Mbps, delay {stats['config']['delay_ns'] / 1e6:g} ms, {stats['config']['framing']} framing"]
    for d in stats["directions"]:
        lines.append(
            f"  {d['direction']}: {d['packets_in']:,} packets in, {d['packets_out']:,} out ({d['bytes_out']:,} B), "
            f"drops: queue {d['drops_queue_full']:,}, corrupted {d['drops_corrupted']:,}; peak queue {d['peak_queue_packets']:,} pkt; "
            f"late mean {d['late_mean_us']:.0f} us, max {d['late_max_us']:.0f} us"
        )
        if stats["config"].get("schedule"):
            # A moving link (issue 14): its reordering and its drops without a path.
            lines[-1] += f"; moving: reordered {d.get('reordered', 0):,}, no route {d.get('drops_no_route', 0):,}"
    return "\n".join(lines)


# -- the command line ------------------------------------------------------------------------
def _add_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--set", action="append", metavar="PATH=VALUE", help="override a scenario key, e.g. --set emulate.delay=200ms (repeatable, each key once)")
    p.add_argument("--server", metavar="CMD", help="command (one shell-quoted string) to run in the server namespace, in the background")
    p.add_argument("--wait-port", type=int, metavar="PORT", help="wait until the server listens on this TCP port before COMMAND")
    p.add_argument("--linger", type=float, metavar="SECONDS", help=f"after COMMAND, wait this long for the server command to end by itself (default {LINGER_S:g})")
    p.add_argument("--stats", metavar="FILE", type=output_path, help="write the emulator's counters as JSON")
    p.add_argument("--json", action="store_true", help="print the emulator's counters as JSON on stdout at the end")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("emulate", help="run real programs through an emulated satellite link (needs root)",
                              description=__doc__.split("\n\n")[1] if __doc__ else None)
    p.add_argument("scenario", help="emulate scenario (.toml with [emulate]) or a simulator scenario")
    _add_options(p)
    # argparse hands everything after SCENARIO here (options, then `--` and COMMAND):
    # cmd_emulate splits it at the first `--` and parses the options itself.
    p.add_argument("rest", nargs=argparse.REMAINDER, metavar="-- COMMAND...", help="runs in the client namespace")
    p.set_defaults(func=cmd_emulate)


def _split_rest(args: argparse.Namespace) -> list[str]:
    """Options given after SCENARIO are merged into ``args``; returns COMMAND."""
    rest = list(args.rest)
    # argparse drops a `--` that directly follows SCENARIO: then `rest` is COMMAND alone.
    if "--" in rest:
        cut = rest.index("--")
    elif rest and not rest[0].startswith("-"):
        return rest
    else:
        cut = len(rest)
    opts, command = rest[:cut], rest[cut + 1:]
    if opts:
        p = argparse.ArgumentParser(prog="sattcp emulate", add_help=False)
        _add_options(p)
        more, unknown = p.parse_known_args(opts)
        if unknown:
            raise ScenarioError([{"path": "", "rule": "unexpected arguments before `--` (COMMAND goes after `--`)", "got": " ".join(unknown)}])
        for k, v in vars(more).items():
            if k == "set" and v:
                args.set = (args.set or []) + v
            elif v is not None and v is not False:  # not `v not in (None, False)`: 0 == False (--linger 0)
                setattr(args, k, v)
    return command


def _check_program(argv: Sequence[str], label: str) -> None:
    """ValueError unless ``argv[0]`` can be executed: the namespaces share this file system, so a
    program missing here is missing there, and `ip netns exec` would only print "exec of ...
    failed" in the background."""
    prog = argv[0]
    if shutil.which(prog) is None:
        if "/" not in prog:
            raise ValueError(f"{label}: {prog}: no such program on PATH")
        p = Path(prog)
        why = ("does not exist" if not p.exists() else "is a directory" if p.is_dir() else
               "is not a regular file" if not p.is_file() else "is not executable")
        raise ValueError(f"{label}: {prog} {why}")


def check_options(args: argparse.Namespace, command: Sequence[str] = ()) -> None:
    """The options' values and the programs of ``--server`` and COMMAND, before any namespace
    is set up (no privileges needed); ValueError naming the option."""
    import math

    from .paths import check_file

    if args.server is not None:
        try:
            server = shlex.split(args.server)
        except ValueError as e:  # "No closing quotation"
            raise ValueError(f"--server {args.server!r}: {e}") from None
        if not server:
            raise ValueError("--server: empty command")
        _check_program(server, "--server")
    if command:
        _check_program(command, "COMMAND")
    if args.linger is not None and not (math.isfinite(args.linger) and args.linger >= 0):
        raise ValueError(f"--linger: must be a number of seconds >= 0, got {args.linger:g}")
    if args.wait_port is not None:
        if not 1 <= args.wait_port <= 65535:
            raise ValueError(f"--wait-port: must be a TCP port from 1 to 65535, got {args.wait_port}")
        if not args.server:
            raise ValueError("--wait-port needs --server (nothing else runs in the server namespace)")
    if args.stats is not None:
        check_file(args.stats, "--stats")  # written at the end: refuse now, not after the emulation


def _on_sigterm(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def cmd_emulate(args: argparse.Namespace) -> int:
    command = _split_rest(args)
    overrides = _parse_set(args.set or [])
    check_scenario_file(args.scenario)  # before the emulator program is looked for
    try:
        check_options(args, command)
    except ValueError as e:
        print(f"sattcp emulate: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    old = signal.signal(signal.SIGTERM, _on_sigterm)
    em = None
    status = 0
    failure = None  # the server command's, when it failed by itself
    try:
        em = Emulation(args.scenario, overrides)
        with em:
            print(f"sattcp emulate: server {ADDRS['server']} in netns {em.ns['server']}, client {ADDRS['client']} in netns {em.ns['client']}", file=sys.stderr)
            server = ServerCommand(em.popen, shlex.split(args.server)) if args.server is not None else None
            if args.wait_port:
                em.wait_listening("server", args.wait_port, process=server)
            if command:
                rc = em.run("client", command).returncode
                status = rc if rc >= 0 else 128 - rc  # killed by signal N: 128 + N, as a shell says
                # COMMAND's last bytes may still be crossing the link (a closed socket's data is
                # sent after its program exits): give the server the time to receive them.
                if server is not None:
                    try:
                        server.proc.wait(timeout=LINGER_S if args.linger is None else args.linger)
                    except subprocess.TimeoutExpired:
                        pass  # still running: stopped now, which is no failure of its own
                    failure = server.failure()
            else:
                print("sattcp emulate: no COMMAND; the link is up until Ctrl-C", file=sys.stderr)
                if server is not None:
                    server.proc.wait()
                    failure = server.failure("while the link was up")
                    if failure is None:
                        print("sattcp emulate: the server command ended (status 0); the link is up until Ctrl-C", file=sys.stderr)
                if failure is None:
                    signal.pause()
    except PrivilegeError as e:
        print(f"sattcp emulate: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except EmulateError as e:
        print(f"sattcp emulate: {e}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        status = 130
    finally:
        signal.signal(signal.SIGTERM, old)
    if em is not None and em.stats:
        print(format_stats(em.stats), file=sys.stderr)
        if args.stats is not None:
            Path(args.stats).write_text(json.dumps(em.stats, indent=1) + "\n")
        if args.json:
            print(json.dumps(em.stats))
    if failure is not None:
        # Last, after the counters: the line to see. COMMAND's own failure status is kept.
        print(f"sattcp emulate: {failure}", file=sys.stderr)
        status = status or EXIT_FAILED
    return status


# -- probes: small traffic programs run inside the namespaces (tests, docs/emulate.md) --------
#: Ports of the probes.
ECHO_PORT, UDP_PORT, TCP_PORT = 7000, 7001, 7002
#: How long a UDP sink waits for its first packet, then for the next one before it reports.
SINK_FIRST_WAIT_S, SINK_IDLE_S = 30.0, 1.0


def _ready() -> None:
    print("ready", flush=True)


def probe(mode: str, args: Sequence[str]) -> int:
    """``python -m sattcp.emulate probe MODE ARGS...``. Servers print ``ready`` once bound,
    then one JSON line with what they measured.

    - ``echo-server``; ``echo-client HOST N SIZE``: N UDP round trips of SIZE payload bytes,
      20 ms apart; prints the RTTs in seconds.
    - ``udp-sink``; ``udp-source HOST N SIZE BURST GAP``: N datagrams, BURST at a time, GAP
      seconds between bursts; the sink prints count, bytes and first/last arrival times.
    - ``tcp-sink MARK``; ``tcp-source HOST BYTES``: one connection; the sink prints the bytes
      received and the goodput from the byte MARK on (past slow start) to the end.
    """
    import socket

    if mode == "echo-server":
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("0.0.0.0", ECHO_PORT))
        _ready()
        while True:
            d, a = s.recvfrom(65535)
            s.sendto(d, a)
    elif mode == "echo-client":
        host, n, size = args[0], int(args[1]), int(args[2])
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(2)
        rtts = []
        for _ in range(n):
            t0 = time.monotonic()
            s.sendto(bytes(size), (host, ECHO_PORT))
            try:
                s.recvfrom(65535)
                rtts.append(time.monotonic() - t0)
            except TimeoutError:
                pass
            time.sleep(0.02)
        print(json.dumps(rtts))
    elif mode == "udp-sink":
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("0.0.0.0", UDP_PORT))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        _ready()
        times, sizes = [], []
        s.settimeout(SINK_FIRST_WAIT_S)
        while True:
            try:
                d = s.recv(65535)
            except TimeoutError:
                break
            times.append(time.monotonic())
            sizes.append(len(d))
            s.settimeout(SINK_IDLE_S)
        print(json.dumps({"n": len(times), "t_first": times[0] if times else None, "t_last": times[-1] if times else None, "bytes": sum(sizes), "first": sizes[0] if sizes else 0}))
    elif mode == "udp-source":
        host, n, size, burst, gap = args[0], int(args[1]), int(args[2]), int(args[3]), float(args[4])
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        for i in range(n):
            s.sendto(bytes(size), (host, UDP_PORT))
            if i % burst == burst - 1:
                time.sleep(gap)
    elif mode == "tcp-sink":
        mark = int(args[0])
        ls = socket.socket()
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind(("0.0.0.0", TCP_PORT))
        ls.listen(1)
        _ready()
        c, _ = ls.accept()
        got, got_mark, t_mark = 0, 0, 0.0
        while d := c.recv(1 << 16):
            got += len(d)
            if not got_mark and got >= mark:
                t_mark, got_mark = time.monotonic(), got
        t_end = time.monotonic()
        print(json.dumps({"bytes": got, "goodput_bps": (got - got_mark) * 8 / (t_end - t_mark) if got_mark and t_end > t_mark else None}))
    elif mode == "tcp-source":
        host, n = args[0], int(args[1])
        c = socket.create_connection((host, TCP_PORT))
        c.sendall(bytes(n))
        c.close()
    else:
        print(f"unknown probe {mode!r}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] != "probe":
        print("usage: python -m sattcp.emulate probe MODE ARGS...", file=sys.stderr)
        sys.exit(2)
    sys.exit(probe(sys.argv[2], sys.argv[3:]))
