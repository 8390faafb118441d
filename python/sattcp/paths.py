"""Checking where output goes before any work is done: a result file (``run --out``), a results
store (``sweep --store``), an output folder (``reproduce --out``, ``analyze --html``).

``os.access`` is not enough: it says yes to root everywhere, /proc and /sys included, and those
refuse new files. So the folder is asked for real: a probe file is created and removed at once.
An existing file is opened for appending and closed, which changes nothing in it. Errors are
:class:`~sattcp.errors.OutputPathError` (a ``ValueError``), naming ``label`` (the option, e.g.
``--out``) and the path.

And writing it: every output file (a result, an export, a report's HTML, CSV, JSON and figures)
is written whole or not at all (:func:`write_whole`, :class:`WholeFiles` for writers that take a
path), a failure naming the file (:class:`~sattcp.errors.WriteError`), and the old ``report.html`` is removed before
anything beside it is rewritten (:func:`start_report`), so that an interrupted or failed write
leaves no report that looks complete.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from .errors import OutputPathError, WriteError

__all__ = ["WholeFiles", "as_path", "check_file", "check_folder", "shown", "start_report", "write_whole", "writing"]


def shown(path: str | os.PathLike[str]) -> str:
    """``path`` as UTF-8 text: a name that is not UTF-8 (``b"r\\xff.duckdb"``, which Python holds
    with a lone surrogate) has those bytes escaped, ``r\\xff.duckdb``. For messages, and for
    text that must be UTF-8 (DuckDB's)."""
    text = os.fspath(path)
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape" if _bytes_only(text) else "surrogatepass").decode("utf-8", "backslashreplace")


def _bytes_only(text: str) -> bool:
    """Whether every surrogate in ``text`` stands for a byte (``os.fsdecode``'s U+DC80-U+DCFF)."""
    return all(not 0xD800 <= ord(c) <= 0xDFFF or 0xDC80 <= ord(c) <= 0xDCFF for c in text)


def _reason(e: OSError) -> str:
    # Creating a file in /proc says "No such file or directory" of a folder that exists.
    if e.errno == errno.ENOENT:
        return "the file system there does not take new files"
    return e.strerror or str(e)


def _probe(folder: Path) -> OSError | None:
    """None if a file can be created (and was removed again) in ``folder``, else the error."""
    # Imported here, not at the top: tempfile brings shutil, random and the compressors (about
    # 8 ms), which a run that writes no file never needs (issue 15, sattcp run's start-up).
    import tempfile

    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".sattcp-probe-"):
            pass
    except OSError as e:
        return e
    return None


def _takes_files(folder: Path, refusal: str) -> None:
    """Raises :class:`OutputPathError` (``refusal``, then why) unless ``folder`` takes new files."""
    e = _probe(folder)
    if e is not None:
        raise OutputPathError(f"{refusal} ({_reason(e)})")


def as_path(path: object, label: str = "output") -> Path:
    """``path`` (a ``str``, an ``os.PathLike`` or ``bytes``) as a :class:`Path`; anything else
    (None, a number) is :class:`OutputPathError` naming ``label``, not pathlib's TypeError."""
    if isinstance(path, bytes):
        return Path(os.fsdecode(path))
    try:
        return Path(path)  # type: ignore[arg-type]
    except TypeError:
        raise OutputPathError(f"{label}: must be a path (a str or a pathlib.Path), got {type(path).__name__} {path!r:.60}") from None


def check_file(path: str | Path, label: str = "output", side_files: bool = False) -> Path:
    """Checks that ``path`` can be written as a file (an existing file is left as it is);
    raises :class:`OutputPathError` saying why not. A symbolic link is checked where it points.
    ``side_files``: the writer also creates files beside it (a DuckDB store's write-ahead log),
    so its folder must take new files even where the file exists."""
    path = as_path(path, label)
    # A dangling link "does not exist", but writing it creates its target, in the target's folder.
    folder = path.resolve().parent if path.is_symlink() else path.parent
    if path.is_dir():
        raise OutputPathError(f"{label} {path}: is a folder, not a file")
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise OutputPathError(f"{label} {path}: folder {folder} {what}")
    if path.exists():
        # Opened without blocking: a pipe that no process reads made `open(path, "ab")` wait
        # for a reader forever (a FIFO given as the store or an output).
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK))
        except OSError as e:
            why = "a pipe that no process reads" if e.errno == errno.ENXIO else _reason(e)
            raise OutputPathError(f"{label} {path}: cannot be written ({why})") from None
        if side_files:
            _takes_files(folder, f"{label} {path}: its folder {folder} takes no new files, which are "
                                 "written beside it")
        return path
    _takes_files(folder, f"{label} {path}: cannot be created in folder {folder}")
    return path


def check_folder(path: str | Path, label: str = "output folder") -> Path:
    """Checks that ``path`` is a folder that takes new files, or can be created as one (nothing
    is created); raises :class:`OutputPathError` saying why not."""
    path = Path(path)
    if path.exists():
        if not path.is_dir():
            raise OutputPathError(f"{label} {path}: not a folder")
        _takes_files(path, f"{label} {path}: cannot write in this folder")
        return path
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise OutputPathError(f"{label} {path}: cannot be created ({parent} is not a folder)")
    _takes_files(parent, f"{label} {path}: cannot be created in folder {parent}")
    return path


def start_report(out: Path) -> Path:
    """The path of ``out/report.html``, the old one removed: called once the analysis stands and
    before any figure or data file is rewritten (the report itself is written last, by
    :func:`write_whole`, after every file it shows), so that an interrupted rebuild leaves no report
    beside files it does not show (a rerun writes both). A failure before (the runs, the
    analysis) keeps the old report with the files it shows."""
    path = out / "report.html"
    path.unlink(missing_ok=True)
    return path


class WholeFiles:
    """A set of files written whole, together, or not at all, by writers that take a path
    (pandas, pyarrow, DuckDB's COPY)::

        with WholeFiles(stale=[old_side_file]) as files:
            with files.temp(path) as tmp:
                table.to_parquet(tmp)
            ...

    Each :meth:`temp` is a temporary file beside its target. When the ``with`` block ends
    without error, the ``stale`` files (an earlier output's side files that this one does not
    replace) are removed and every temporary file is renamed onto its target: all are written
    before any is renamed, so an interruption or failure while writing leaves the old files as
    they were, together. On failure every temporary file is removed. An ``OSError`` (a full
    disk) becomes :class:`~sattcp.errors.WriteError` naming the target."""

    def __init__(self, stale: Iterable[Path] = ()) -> None:
        self._stale = [Path(p) for p in stale]
        self._pending: list[tuple[Path, Path, Path]] = []  # (temporary, where it goes, as named)

    def __enter__(self) -> WholeFiles:
        return self

    @contextlib.contextmanager
    def temp(self, path: str | Path) -> Iterator[Path]:
        """A temporary path to write ``path`` to; an ``OSError`` inside becomes
        :class:`~sattcp.errors.WriteError` naming ``path``."""
        path = Path(path)
        # A symbolic link is written where it points, and stays a link.
        target = path.resolve() if path.is_symlink() else path
        if target.exists() and not target.is_file():
            # A device or a pipe cannot be replaced by a rename, and is not handed to a writer
            # either: pyarrow removes the file it failed to write, and root may remove /dev/full.
            raise WriteError(f"cannot write {path}: not a regular file")
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        self._pending.append((tmp, target, path))
        try:
            yield tmp
        except OSError as e:
            if isinstance(e, WriteError):
                raise
            raise WriteError(f"cannot write {path}: {e.strerror or e}") from e

    def parquet(self, path: str | Path, table: object) -> None:
        """Writes the pyarrow ``table`` to ``path`` as Parquet, as :meth:`temp` writes a file.
        Through a Python file: pyarrow takes a path as UTF-8 text, and a name with other bytes
        (``o\\xff.parquet``) failed with a UnicodeEncodeError after the work. (``table`` is a
        ``pyarrow.Table``, typed ``object``: ``sattcp run`` imports this module, and not typing.)"""
        import pyarrow.parquet as pq

        with self.temp(path) as tmp, open(tmp, "wb") as fh:
            pq.write_table(table, fh)

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        try:
            if kind is None:
                for p in self._stale:
                    try:
                        p.unlink(missing_ok=True)
                    except OSError as e:
                        raise WriteError(f"cannot remove {p} (left from an earlier output): {e.strerror or e}") from e
                for tmp, target, named in self._pending:
                    try:
                        os.replace(tmp, target)
                    except OSError as e:
                        raise WriteError(f"cannot write {named}: {e.strerror or e}") from e
        finally:
            for tmp, _, _ in self._pending:
                tmp.unlink(missing_ok=True)


@contextlib.contextmanager
def writing(path: str | Path) -> Iterator[Path]:
    """The path to write ``path`` through, whole or not at all: a temporary file beside it,
    renamed into place when the block ends without error (:class:`WholeFiles`), or, for a device
    or a pipe (``/dev/stdout``), the path itself: written in place, there is nothing to rename.
    For writers of our own, which leave a device as it is when they fail (pyarrow removes the
    file it failed to write: :class:`WholeFiles` refuses devices for it). A failure is
    :class:`~sattcp.errors.WriteError` naming ``path``."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        in_place = path.exists() and not path.is_file()
    except OSError as e:
        raise WriteError(f"cannot write {path}: {e.strerror or e}") from e
    if not in_place:
        with WholeFiles() as files, files.temp(path) as tmp:
            yield tmp
        return
    try:
        yield path
    except WriteError:
        raise
    except OSError as e:
        raise WriteError(f"cannot write {path}: {e.strerror or e}") from e


def write_whole(path: Path, data: str | bytes) -> Path:
    """Writes ``path`` (text as UTF-8) whole or not at all (:func:`writing`): a failure or an
    interruption leaves ``path`` as it was, and is :class:`~sattcp.errors.WriteError` naming
    ``path``."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with writing(path) as p:
        p.write_bytes(raw)
    return Path(path)
