"""Checking where output goes before any work is done: a result file (``run --out``), a results
store (``sweep --store``), an output folder (``reproduce --out``, ``analyze --html``).

``os.access`` is not enough: it says yes to root everywhere, /proc and /sys included, and those
refuse new files. So the folder is asked for real: a probe file is created and removed at once.
An existing file is opened for appending and closed, which changes nothing in it. Errors are
:class:`~sattcp.errors.OutputPathError` (a ``ValueError``), naming ``label`` (the option, e.g.
``--out``) and the path.

And writing it: every file of a report (the HTML, its CSV and JSON files, its figures) is
written whole or not at all (:func:`write_whole`), and the old ``report.html`` is removed before
anything beside it is rewritten (:func:`start_report`), so that an interrupted or failed write
leaves no report that looks complete.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

from .errors import OutputPathError

__all__ = ["check_file", "check_folder", "start_report", "write_whole"]


def _reason(e: OSError) -> str:
    # Creating a file in /proc says "No such file or directory" of a folder that exists.
    if e.errno == errno.ENOENT:
        return "the file system there does not take new files"
    return e.strerror or str(e)


def _probe(folder: Path) -> OSError | None:
    """None if a file can be created (and was removed again) in ``folder``, else the error."""
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


def check_file(path: str | Path, label: str = "output", side_files: bool = False) -> Path:
    """Checks that ``path`` can be written as a file (an existing file is left as it is);
    raises :class:`OutputPathError` saying why not. A symbolic link is checked where it points.
    ``side_files``: the writer also creates files beside it (a DuckDB store's write-ahead log),
    so its folder must take new files even where the file exists."""
    path = Path(path)
    # A dangling link "does not exist", but writing it creates its target, in the target's folder.
    folder = path.resolve().parent if path.is_symlink() else path.parent
    if path.is_dir():
        raise OutputPathError(f"{label} {path}: is a folder, not a file")
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise OutputPathError(f"{label} {path}: folder {folder} {what}")
    if path.exists():
        try:
            with open(path, "ab"):
                pass
        except OSError as e:
            raise OutputPathError(f"{label} {path}: cannot be written ({_reason(e)})") from None
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


def write_whole(path: Path, data: str | bytes) -> Path:
    """Writes ``path`` (text as UTF-8) whole or not at all: a temporary file beside it, renamed
    into place; a failure or an interruption removes the temporary file and leaves ``path`` as
    it was."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path

