"""incast: a laboratory for the TCP incast problem.

A deterministic packet-level simulator of synchronized reads through one
switch (Rust engine, ``incast._core``) with this Python front::

    import incast

    r = incast.run(servers=16, blocks=20, switch={"buffer": "64KiB"})
    print(r.goodput_mbps, r.timeouts)
    r.flows            # pandas DataFrame, one row per server

    s = incast.Scenario.from_toml("scenario.toml").with_overrides({"tcp.rto_min": "1ms"})
    incast.run(s)

    df = incast.sweep("my-study.toml")   # an experiment's sweep, one DataFrame row per point

In Jupyter a result shows as its summary and its table of flows.

The command line does the same: ``incast run --servers 1,4,16,64 --blocks 20``.
"""

import typing as _typing

from incast._core import engine_version as _engine_version
from incast.errors import IncastError, ScenarioError, SimulationError

if _typing.TYPE_CHECKING:
    from incast.result import Result, run
    from incast.scenario import Scenario

__version__: str = _engine_version()

#: Names imported from their module when first used, so that ``import incast`` (and the
#: command line, whose ``--help`` needs neither) does not load the result and scenario code.
_LAZY = {"Result": "incast.result", "run": "incast.result", "Scenario": "incast.scenario"}
#: Submodules reachable as attributes of ``incast`` (``incast.presets``), loaded when first used;
#: ``incast.sweep(...)`` calls its module.
_SUBMODULES = ("presets", "result", "scenario", "sweep", "units")

__all__ = [
    "IncastError",
    "Result",
    "Scenario",
    "ScenarioError",
    "SimulationError",
    "__version__",
    "run",
]


def __getattr__(name: str) -> _typing.Any:
    import importlib

    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
