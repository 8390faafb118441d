"""Checking where output goes before any work is done: a result file (``run --out``), a results
store (``sweep --store``), an output folder (``reproduce --out``, ``analyze --html``).

``os.access`` is not enough: it says yes to root everywhere, /proc and /sys included, and those
refuse new files. So the folder is asked for real: a probe file is created and removed at once.
An existing file is opened for appending and closed, which changes nothing in it. Errors are
:class:`~sattcp.errors.OutputPathError` (a ``ValueError``), naming ``label`` (the option, e.g.
``--out``) and the path.
"""

from __future__ import annotations

import errno
import tempfile
from pathlib import Path

from .errors import OutputPathError

__all__ = ["check_file", "check_folder"]


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
