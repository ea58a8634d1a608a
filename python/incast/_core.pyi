"""Native core of the incast package (private: import ``incast`` instead).

Hand-written stub of ``crates/incast-py/src/lib.rs``; checked against the
compiled module with ``python -m mypy.stubtest incast._core``.
"""

__all__ = [
    "IncastError",
    "ScenarioError",
    "SimulationError",
    "default_scenario_json",
    "engine_version",
    "run_json",
    "run_json_capture",
]

def run_json(scenario_json: str) -> str:
    """Run one scenario given as engine JSON; return the run result as JSON.

    Fields left out take the engine's defaults. Raises ScenarioError for JSON
    that is not a valid scenario and
    SimulationError if the engine fails. Releases the GIL while it runs.
    """

def run_json_capture(scenario_json: str) -> tuple[str, list[bytes]]:
    """Run one scenario given as engine JSON; return the run result as JSON and one pcap file per host.

    The files come client first, then server 0, 1, ...; the list is empty when
    ``trace.pcap`` is off. Errors as for :func:`run_json`. Releases the GIL while
    it runs and encodes.
    """

def default_scenario_json() -> str:
    """The engine's default scenario as JSON (``servers`` is 0 there, which is invalid)."""

def engine_version() -> str:
    """Version of the engine this module was built from."""

class IncastError(Exception):
    """Base class of every error the incast engine raises."""

class ScenarioError(IncastError):
    """A scenario is malformed or a field is out of range; the message starts with the field's dotted path."""

class SimulationError(IncastError):
    """The engine failed while running a valid scenario (a bug: please report it with the scenario)."""
