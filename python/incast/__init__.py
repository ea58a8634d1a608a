"""incast: a laboratory for the TCP incast problem.

A deterministic packet-level simulator of synchronized reads through one
switch (Rust engine, ``incast._core``) with this Python front::

    import incast

    r = incast.run(servers=16, blocks=20, switch={"buffer": "64KiB"})
    print(r.goodput_mbps, r.timeouts)
    r.flows            # pandas DataFrame, one row per server

    s = incast.Scenario.from_toml("scenario.toml").with_overrides({"tcp.rto_min": "1ms"})
    incast.run(s)

The command line does the same: ``incast run --servers 1,4,16,64 --blocks 20``.
"""

from incast._core import engine_version as _engine_version
from incast.errors import IncastError, ScenarioError, SimulationError
from incast.result import Result, run
from incast.scenario import Scenario

__version__: str = _engine_version()

__all__ = [
    "IncastError",
    "Result",
    "Scenario",
    "ScenarioError",
    "SimulationError",
    "__version__",
    "run",
]
