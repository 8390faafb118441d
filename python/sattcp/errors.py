"""sattcp's exceptions: every failure a user can meet arrives as one of these."""

from __future__ import annotations

# Not `from typing import ...`: typing takes about 10 ms to import, and the `sattcp` command
# imports this module before its Ctrl-C handler is in place (cli.entry). Type checkers take
# the block below.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class SattcpError(Exception):
    """Base class of every sattcp error."""


class ScenarioError(SattcpError, ValueError):
    """The scenario is invalid; ``problems`` lists every problem found.

    Each problem is a dict ``{"path": "links.bottleneck.rate", "rule": "must be > 0",
    "got": "\\"-45Mbps\\""}``. The run cannot start.
    """

    def __init__(self, problems: list[dict[str, Any]] | str):
        if isinstance(problems, str):
            problems = [{"path": "", "rule": problems, "got": ""}]
        self.problems: list[dict[str, Any]] = list(problems)
        super().__init__(self._render())

    def _render(self) -> str:
        n = len(self.problems)
        lines = [f"invalid scenario ({n} problem{'s' if n != 1 else ''}):"]
        for p in self.problems:
            path = p.get("path") or "(scenario)"
            got = p.get("got") or ""
            lines.append(f"  {path}: {p.get('rule', '')}" + (f", got {got}" if got else ""))
        return "\n".join(lines)


class OutputPathError(SattcpError, ValueError):
    """An output file or folder cannot be written there (its folder is missing, a file is in
    the way, the file system refuses new files). Raised before any work is done; the message
    names the option or argument that gave the path."""


class AnalysisError(SattcpError, ValueError):
    """The data cannot be analysed as asked (``sattcp.analysis.allocation_of_variation``,
    ``sattcp.report.analyse_study``): a column or response that is not there or not numeric, a
    factor with one level, a design that is not a balanced full factorial, a block or study
    without successful runs. The message says which. Also a ``ValueError``, as these were."""


class PlainKeyError(KeyError):
    """A ``KeyError`` whose message prints as it is, not quoted as ``KeyError``'s: the base of
    sattcp's errors that are also ``KeyError``s, as what they replace were (``LevelMissing``,
    ``store.StudyMissing``)."""

    def __str__(self) -> str:
        return Exception.__str__(self)


class LevelMissing(AnalysisError, PlainKeyError):
    """An analysis has no such factor or level (``AllocationOfVariation.effect``); the message
    names the factor and the known factors or levels. Also a ``KeyError``, as ``effect`` raised
    before, so code that catches that keeps doing so."""


class WriteError(SattcpError, OSError):
    """A file could not be written (a full disk, an I/O error): not the user's input, so the
    CLI exits 1. The message names the file: ``cannot write PATH: No space left on device``.
    Also an ``OSError``, so code that catches write failures as such keeps doing so."""


class SimulationError(SattcpError):
    """A run could not complete for a reason other than its scenario (e.g. interrupted)."""


class SimulationInterrupted(SimulationError, KeyboardInterrupt):
    """The run was interrupted (Ctrl-C). Also a KeyboardInterrupt, so code that stops on
    Ctrl-C keeps doing so; the message says how far the run got."""


class InternalError(SattcpError):
    """A bug in sattcp (a Rust panic, for instance). The message names the scenario and seed."""
