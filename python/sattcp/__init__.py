"""sattcp: a laboratory for TCP/IP transport over satellite networks.

>>> import sattcp
>>> r = sattcp.run("scenarios/geo-bulk.toml", seed=1, overrides={"run.duration": "5s"})
>>> r.summary["efficiency"]  # doctest: +SKIP

Importing sattcp loads neither pandas nor the native core: both come when first needed. Nor
does it load :mod:`sattcp.api` (``run``, ``resolve``...: on first use), so that the ``sattcp``
command reaches its Ctrl-C handler (``cli.entry``) sooner.
"""

from __future__ import annotations

from .errors import AnalysisError, InternalError, OutputPathError, SattcpError, ScenarioError, SimulationError, SimulationInterrupted

# Not typing's: importing typing takes about 10 ms before the CLI's Ctrl-C handler is in place.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .api import RunResult, SattcpWarning, resolve, run

__version__ = "0.1.0"

_FROM_API = ("RunResult", "SattcpWarning", "resolve", "run")


def __getattr__(name: str) -> Any:
    if name in _FROM_API or name == "api":  # `sattcp.api` too, as when this imported it
        import importlib

        api = importlib.import_module(".api", __name__)  # not `from . import api`: that asks here again
        return api if name == "api" else getattr(api, name)
    raise AttributeError(f"module 'sattcp' has no attribute {name!r}")

__all__ = [
    "run", "resolve", "RunResult", "SattcpError", "ScenarioError", "SimulationError", "SimulationInterrupted", "InternalError",
    "OutputPathError", "AnalysisError",
    "SattcpWarning", "__version__",
]
