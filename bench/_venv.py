"""For the Python benchmarks here: the project's module must be importable (they run with
`.venv/bin/python` after `make build`); without it, one line and exit 2 instead of a traceback."""

from __future__ import annotations

import sys


def require_sattcp(script: str) -> None:
    try:
        import sattcp  # noqa: F401
    except ModuleNotFoundError as e:
        print(f"{script}: cannot import {e.name} with {sys.executable}: run it with the project's .venv/bin/python "
              "after `make build`", file=sys.stderr)
        raise SystemExit(2) from None
