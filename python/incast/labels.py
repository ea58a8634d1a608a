"""Axis names and values as a reader of the papers writes them: ``buffer 32KiB``, ``RTO_min 200ms``.

Experiments, sweeps and the engine name a setting by its dotted path and hold
its value in SI units (``switch.buffer = 1048576``, ``tcp.rto_min = 0.0002``);
figures, claim details and tables show ``buffer 1MiB`` and ``RTO_min 200us``.
Which values carry units comes from the engine's schema (each setting's kind).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from incast.scenario import schema
from incast.units import format_buffer, format_duration, format_rate

__all__ = ["axis_label", "describe", "format_number", "format_value", "has_units"]

_FORMATS: dict[str, Callable[[Any], str]] = {
    "duration": lambda v: format_duration(float(v)),
    "delayed ack": lambda v: format_duration(float(v)),
    "rate": lambda v: format_rate(int(v)),
    "size": lambda v: format_buffer(int(v)),
    "buffer": lambda v: format_buffer(int(v)),
}

#: Names the papers use where a setting's last dotted part would read worse.
_NAMES = {
    "switch.buffer": "buffer",
    "link.rate": "link",
    "tcp.cc": "TCP",
    "tcp.recovery": "recovery",
    "tcp.rto_min": "RTO_min",
    "tcp.rto_max": "RTO_max",
    "tcp.rto_initial": "initial RTO",
    "tcp.init_cwnd": "IW",
    "tcp.mss": "MSS",
    "tcp.rcv_wnd": "window",
    "tcp.gip": "GIP",
    "workload.sru": "SRU",
    "workload.block": "block",
}


@functools.cache
def _kinds() -> dict[str, str]:
    """Each setting's type, from the engine's schema."""
    return {s["name"]: s["kind"] for s in schema()}


def has_units(axis: str) -> bool:
    """Is ``axis`` a duration, rate or size, printed in human units?"""
    return _kinds().get(axis, "") in _FORMATS


def format_number(x: float) -> str:
    """A number for a table: whole numbers as integers, others to a precision that suits their size."""
    if x != x:
        return "—"
    if float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.1f}" if abs(x) >= 100 else f"{x:.2f}" if abs(x) >= 1 else f"{x:.3g}"


def format_value(axis: str, value: Any) -> str:
    """An axis value in human units: ``("tcp.rto_min", 0.2)`` -> ``"200ms"``."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        fmt = _FORMATS.get(_kinds().get(axis, ""))
        return fmt(value) if fmt else format_number(value)
    if axis == "tcp.delayed_ack" and value is None:
        return "off"
    return str(value)


def axis_label(axis: str) -> str:
    """A setting's short name: ``"switch.buffer"`` -> ``"buffer"``, ``"tcp.cc"`` -> ``"TCP"``.

    The papers' own names where they have one (``RTO_min``, ``SRU``, ``IW``), else the last dotted part.
    """
    return _NAMES.get(axis) or axis.rsplit(".", 1)[-1].replace("_", " ")


def describe(coords: Mapping[str, Any]) -> str:
    """A point named for a reader: ``{"servers": 64, "switch.buffer": 1048576}`` -> ``"servers 64, buffer 1MiB"``."""
    return ", ".join(f"{axis_label(k)} {format_value(k, v)}" for k, v in coords.items()) or "every point"
