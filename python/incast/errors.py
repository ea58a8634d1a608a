"""The exceptions incast raises, and one-line descriptions of invalid scenarios.

Hierarchy (the classes live in the native module and are re-exported here)::

    IncastError           base of everything below
    ├── ScenarioError     a scenario is invalid: the message starts with the dotted field
    └── SimulationError   the engine failed on a valid scenario (a bug: please report it)

Messages have the form ``<field>: <what is allowed>``, e.g.
``switch.buffer: 1000 bytes cannot hold one full frame (1518 bytes for MSS 1460)``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from incast._core import IncastError, ScenarioError, SimulationError

__all__ = [
    "IncastError",
    "ScenarioError",
    "SimulationError",
    "describe_validation_error",
    "python_field",
]

#: Engine field paths (crates/incast-sim/src/scenario.rs) whose name differs in the TOML shape.
_ENGINE_FIELDS = {
    "tcp.rto.min": "tcp.rto_min",
    "tcp.rto.max": "tcp.rto_max",
    "tcp.rto.initial": "tcp.rto_initial",
    "tcp.rto.granularity": "tcp.clock_granularity",
    "tcp.delayed_ack.timeout": "tcp.delayed_ack",
    "tcp.delayed_ack.mode": "tcp.delayed_ack",
    "link.loss_ppb": "link.loss",
    "switch.pause.xoff": "switch.pause_xoff",
    "switch.pause.xon": "switch.pause_xon",
    "switch.pause.quanta": "switch.pause_quanta",
    "stop": "blocks/duration",
    "stop.blocks": "blocks",
    "stop.duration": "duration",
}

_TABLE_TYPES = {"model_type", "model_attributes_type", "dict_type"}


def python_field(engine_message: str) -> str:
    """Rename the field that starts an engine error message to its name in the TOML shape."""
    field, sep, rest = engine_message.partition(": ")
    return f"{_ENGINE_FIELDS.get(field, field)}{sep}{rest}" if sep else engine_message


def _model_at(root: type[BaseModel], path: tuple[str, ...]) -> type[BaseModel] | None:
    """The model class of the table at ``path`` below ``root``, if there is one."""
    model: Any = root
    for name in path:
        field = model.model_fields.get(name) if isinstance(model, type) and issubclass(model, BaseModel) else None
        if field is None:
            return None
        model = field.annotation
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def describe_validation_error(err: ValidationError, root: type[BaseModel] | None = None) -> str:
    """One line naming the dotted field of the first error and what it allows.

    ``root`` is the model that was validated (default: the scenario); it names
    the settings a table allows when the error is an unknown key.
    """
    from incast.config import Scenario  # late: config imports this module

    if root is None:
        root = Scenario
    first = err.errors(include_url=False)[0]
    loc = tuple(str(part) for part in first["loc"])
    field = ".".join(loc) or "scenario"
    kind = first["type"]
    ctx = first.get("ctx") or {}
    if kind == "incast_field":
        return f"{ctx['field']}: {ctx['detail']}"
    if kind == "incast":
        return f"{field}: {first['msg']}"
    if kind == "extra_forbidden":
        parent = _model_at(root, loc[:-1])
        allowed = ", ".join(parent.model_fields) if parent is not None else ""
        where = f"[{'.'.join(loc[:-1])}]" if loc[:-1] else "a scenario"
        return f"{field}: unknown setting; {where} has {allowed}" if allowed else f"{field}: unknown setting"
    if kind == "missing":
        if field == "servers":
            return "servers: required; a whole number of servers between 1 and 100000"
        return f"{field}: required"
    if kind in _TABLE_TYPES:
        return f"{field}: must be a table of settings, got {first.get('input')!r}"
    return f"{field}: {first['msg']}"
