"""The exceptions incast raises.

Hierarchy (the classes live in the native module and are re-exported here)::

    IncastError           base of everything below
    ├── ScenarioError     a scenario is invalid: the message starts with the dotted setting
    └── SimulationError   the engine failed on a valid scenario (a bug: please report it)

Messages have the form ``<setting>: <what is allowed>``, e.g.
``switch.buffer: 1000 bytes cannot hold one full frame (1518 bytes for MSS 1460)``;
the engine writes them, naming the setting as the user wrote it.
"""

from __future__ import annotations

from incast._core import IncastError, ScenarioError, SimulationError

__all__ = ["IncastError", "ScenarioError", "SimulationError"]
