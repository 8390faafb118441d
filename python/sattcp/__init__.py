"""sattcp: a laboratory for TCP/IP transport over satellite networks.

>>> import sattcp
>>> r = sattcp.run("scenarios/geo-bulk.toml", seed=1, overrides={"run.duration": "5s"})
>>> r.summary["efficiency"]  # doctest: +SKIP

Importing sattcp loads neither pandas nor the native core: both come when first needed.
"""

from .api import RunResult, SattcpWarning, resolve, run
from .errors import InternalError, OutputPathError, SattcpError, ScenarioError, SimulationError, SimulationInterrupted

__version__ = "0.1.0"

__all__ = [
    "run", "resolve", "RunResult", "SattcpError", "ScenarioError", "SimulationError", "SimulationInterrupted", "InternalError",
    "OutputPathError",
    "SattcpWarning", "__version__",
]
