from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"


def pytest_configure(config: pytest.Config) -> None:
    # A shell without job control starts background commands (`make test &`, `nohup ... &`,
    # some CI runners) with SIGINT ignored, and an ignored signal stays ignored across exec: the
    # Ctrl-C tests' children (test_cli, test_sweep) would then never see the SIGINT they are
    # sent and run to their end. Restore Python's own handler here, so that every child starts
    # with SIGINT at its default, as it does from a terminal.
    import signal

    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False, help="run long studies marked slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="long study: opt in with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def emu_binary() -> Path:
    """The emulator program (sattcp-emu), built on first use when cargo is there (a fresh
    clone's `make test` does not build it). Used by test_emulate.py and test_netpipe_sat.py."""
    import shutil

    from sattcp import emulate

    try:
        return emulate.find_binary()
    except emulate.EmulateError:
        pass
    if shutil.which("cargo") is None:
        pytest.skip("sattcp-emu is not built and cargo is missing")
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "sattcp-emu"], cwd=ROOT, check=True, timeout=1800)
    return emulate.find_binary()


#: Marks a test that writes into /proc, which takes no new files even from root: the one
#: unwritable folder every Linux has.
NEEDS_PROC = pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc (refuses new files)")


def run_cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """Runs the installed `sattcp` command line as a user would."""
    return subprocess.run([sys.executable, "-m", "sattcp.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=600)


def disk_full_on(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """From now on, writing a file whose name contains ``name`` (its temporary file too) with
    ``Path.write_text`` or ``Path.write_bytes`` writes half the data, then fails as a full disk
    would: a report writer's failure midway through one file."""
    import errno
    from collections.abc import Callable
    from typing import Any

    def half(write: Callable[..., Any]) -> Callable[..., Any]:
        def f(self: Path, data: Any, *args: Any, **kwargs: Any) -> Any:
            if name not in self.name:
                return write(self, data, *args, **kwargs)
            write(self, data[: len(data) // 2], *args, **kwargs)
            raise OSError(errno.ENOSPC, "No space left on device", str(self))
        return f

    monkeypatch.setattr(Path, "write_text", half(Path.write_text))
    monkeypatch.setattr(Path, "write_bytes", half(Path.write_bytes))


def parquet_disk_full_after(monkeypatch: pytest.MonkeyPatch, n_ok: int) -> None:
    """pyarrow's write_table writes ``n_ok`` files, then the start of the next, and fails as a full disk would."""
    import errno
    from typing import Any

    import pyarrow.parquet as pq

    write, calls = pq.write_table, []

    def failing(table: Any, where: Any, *a: Any, **k: Any) -> Any:
        calls.append(where)
        if len(calls) <= n_ok:
            return write(table, where, *a, **k)
        write(table, where, *a, **k)
        if hasattr(where, "truncate"):  # a file the writer opened (sattcp writes through one)
            where.truncate(100)
        else:
            Path(where).write_bytes(Path(where).read_bytes()[:100])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pq, "write_table", failing)
