"""Scenario: a thin typed view of the engine's scenario (``crates/incast-sim/src/scenario.rs``).

The engine owns every setting: its name, type and unit, default, doc line and
validation are declared once, beside the mechanism that uses it (see the
engine's ``settings`` module). This module reads and writes nothing itself: it
hands the user's mapping to the engine and keeps what comes back, the
canonical form (TOML shape, human units), the same settings in plain SI
numbers (seconds, bit/s, bytes), and the content hash.

A scenario is written in TOML or passed as keyword fields; every quantity
carries its unit (``"100us"``, ``"1Gbps"``, ``"32KiB"``, ``"64pkt"``). A plain
number other than 0 is refused, never guessed (``tcp.rto_min: 1 needs a unit,
e.g. "1s" or "200ms"``), in files, ``--set`` and this API alike::

    servers = 16
    duration = "2s"         # or blocks = 100; neither: 1 s
    [switch]
    buffer = "64KiB"
    [tcp]
    rto_min = "1ms"

**The plain-SI form** is the one place plain numbers are read: a mapping
whose top-level ``units`` is ``"si"`` gives every duration in seconds, every
rate in bit/s and every size or buffer in bytes. :meth:`Scenario.to_dict`
writes that form (marked so), and :meth:`Scenario.parse` reads it back to
the same scenario::

    Scenario.parse({"units": "si", "servers": 4, "tcp": {"rto_min": 0.001}})

``incast.scenario.schema()`` lists every setting with its type, default, what
it allows and its doc line (``incast run --help-settings`` prints it).
Attribute access reads the SI form: ``s.tcp.rto_min`` is ``0.2``; a setting
that is off (``"off"``, ``"never"``, ``"all"``, ``"link"``) reads as ``None``.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from incast import _core, files
from incast.errors import ScenarioError
from incast.traffic import inline_files
from incast.units import format_buffer, format_duration, format_rate, format_size

__all__ = ["DESCRIBED", "Scenario", "apply_overrides", "read_toml", "schema", "settings"]


@functools.cache
def schema() -> tuple[dict[str, Any], ...]:
    """Every setting, in order: ``{"name", "kind", "default", "allowed", "none", "doc"}`` each."""
    return tuple(json.loads(_core.schema_json()))


#: The settings :meth:`Scenario.describe` names whatever their value (a graph's nodes, links and routes as a count).
DESCRIBED = frozenset(
    {
        "servers",
        "workload.sru",
        "workload.block",
        "workload.clients",
        "link.rate",
        "link.rtt",
        "topology.kind",
        "topology.edge_switches",
        "topology.nodes",
        "topology.links",
        "topology.routes",
        "topology.k",
        "topology.leaves",
        "topology.spines",
        "topology.hosts_per_leaf",
        "topology.ecmp",
        "wan.delay",
        "switch.buffer",
        "switch.pause",
        "switch.pfc",
        "tcp.rto_min",
        "tcp.cc",
        "tcp.recovery",
    }
)


def settings() -> list[str]:
    """Every dotted setting a scenario has, e.g. ``["servers", ..., "tcp.rto_min", ...]``."""
    return [s["name"] for s in schema()]


@functools.cache
def _names() -> frozenset[str]:
    return frozenset(settings())


@functools.cache
def _none_words() -> dict[str, str]:
    return {s["name"]: s["none"] for s in schema() if s["none"]}


def _dumps(data: Any) -> str:
    """JSON of user data; values JSON lacks (TOML dates) become strings the engine then refuses."""
    _check_finite(data, "")
    return json.dumps(data, default=str, separators=(",", ":"))


def _check_finite(data: Any, path: str) -> None:
    """JSON has no infinity or NaN: refuse them here, naming the setting (after checking the nesting)."""
    files.check_depth(data, path or "scenario")
    _check_finite_values(data, path)


def _check_finite_values(data: Any, path: str) -> None:
    if isinstance(data, float) and not math.isfinite(data):
        raise ScenarioError(f"{path or 'scenario'}: {data!r} is not a finite number")
    if isinstance(data, Mapping):
        for k, v in data.items():
            _check_finite_values(v, f"{path}.{k}" if path else str(k))
    elif isinstance(data, (list, tuple)):
        for v in data:
            _check_finite_values(v, path)


#: Dotted settings and their values: a mapping, or ``(setting, value)`` pairs where one setting may come twice.
Overrides = Mapping[str, Any] | Sequence[tuple[str, Any]]


def _pairs(overrides: Overrides) -> list[list[Any]]:
    if isinstance(overrides, Mapping):
        return [[str(k), v] for k, v in overrides.items()]
    if isinstance(overrides, (list, tuple)) and all(isinstance(p, tuple) and len(p) == 2 for p in overrides):
        return [[str(k), v] for k, v in overrides]
    raise ScenarioError(
        f"overrides: must be a mapping of dotted settings to values, or (setting, value) pairs, got {overrides!r}"
    )


def apply_overrides(data: Mapping[str, Any], overrides: Overrides) -> dict[str, Any]:
    """A copy of the user's ``data`` with dotted ``overrides`` applied in order, in one call into the engine.

    Nested tables (``{"tcp": {"rto_min": "1ms"}}``) apply each setting;
    ``workload.sru`` and ``workload.block`` replace each other. An unknown
    path raises ScenarioError naming it; values are not checked until the
    scenario is read.
    """
    if not isinstance(data, Mapping):
        raise ScenarioError(f"scenario: must be a table of settings, got {data!r}")
    if not overrides:
        return dict(data)
    pairs = _pairs(overrides)
    for path, value in pairs:
        _check_finite(value, path)
    out: dict[str, Any] = json.loads(_core.apply_overrides_json(_dumps(data), _dumps(pairs)))
    return out


def read_toml(path: str | Path) -> dict[str, Any]:
    """The raw table of a TOML file. ``OSError`` if unreadable; ScenarioError if not TOML, not UTF-8,
    not a regular file, larger than :data:`~incast.files.MAX_FILE_BYTES` or nested too deep."""
    return files.read_toml(path)


class _Table:
    """One table of a scenario, read by attribute: ``s.tcp.rto_min``."""

    __slots__ = ("_name", "_values")

    def __init__(self, name: str, values: dict[str, Any]) -> None:
        self._name = name
        self._values = values

    def __getattr__(self, key: str) -> Any:
        name = f"{self._name}.{key}"
        if key.startswith("_") or name not in _names():
            raise AttributeError(f"[{self._name}] has no setting {key!r}")
        value = self._values.get(key)  # workload.sru or .block, whichever is not in use: None
        return None if _none_words().get(name) == value else value

    def __repr__(self) -> str:
        return f"[{self._name}] {self._values!r}"


class Scenario:
    """One complete run description; a run is a pure function of it (``seed`` included).

    Construct it with keyword fields (``Scenario(servers=16, link={"rate": "10Gbps"})``),
    from a mapping (:meth:`parse`) or from a TOML file (:meth:`from_toml`).
    Scenarios are immutable; :meth:`with_overrides` returns a changed copy.
    Raises :class:`~incast.errors.ScenarioError` naming the dotted setting.
    """

    __slots__ = ("_hash", "_host_rtt_s", "_raw", "_si", "_toml")

    def __init__(self, **fields: Any) -> None:
        self._raw: dict[str, Any] = inline_files(dict(fields))
        resolved = json.loads(_core.resolve_json(_dumps(self._raw)))
        self._toml: dict[str, Any] = resolved["toml"]
        self._si: dict[str, Any] = resolved["si"]
        self._hash: str = resolved["hash"]
        self._host_rtt_s: float = resolved["host_rtt_s"]

    @classmethod
    def parse(cls, data: Mapping[str, Any], overrides: Overrides | None = None) -> Scenario:
        """Read a mapping in the TOML shape, after applying dotted ``overrides``."""
        return cls(**apply_overrides(data, overrides or {}))

    @classmethod
    def from_toml(cls, path: str | Path, overrides: Overrides | None = None) -> Scenario:
        """Read a scenario file. Raises ``OSError`` if it cannot be read, ScenarioError if it is invalid."""
        return cls.parse(read_toml(path), overrides)

    def with_overrides(self, overrides: Overrides) -> Scenario:
        """A copy with dotted-path ``overrides`` applied, e.g. ``{"tcp.rto_min": "1ms", "servers": 64}``
        (or pairs, ``[("tcp.rto_min", "1ms"), ...]``).

        Overrides apply to the settings this scenario was given, so setting
        ``blocks`` on a scenario whose 1 s duration was only the default drops it.
        """
        _pairs(overrides)  # a mapping, or one line saying what is allowed
        return type(self).parse(self._raw, overrides)

    # -- reading -----------------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name in ("blocks", "duration") and name not in self._si:
            return None
        if name not in self._si:
            raise AttributeError(f"a scenario has no setting {name!r}")
        value = self._si[name]
        return _Table(name, value) if isinstance(value, dict) else value

    def get(self, path: str) -> Any:
        """The value of the dotted setting ``path`` in plain SI units, as :meth:`to_dict` holds it
        (``"tcp.rto_min"`` -> ``0.2``). An unknown path raises ScenarioError naming it."""
        if path not in _names():
            apply_overrides({}, {path: None})  # the engine names what is wrong with the path
        table, _, key = path.partition(".")
        value = self._si.get(table)
        return value.get(key) if key and isinstance(value, dict) else value

    @property
    def hash(self) -> str:
        """Content hash of the canonical form (SHA-256, hex): equal for scenarios that run alike."""
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Scenario) and other._hash == self._hash

    def __hash__(self) -> int:
        return hash(self._hash)

    def __repr__(self) -> str:
        return f"Scenario({self.describe()})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_from_raw, (self._raw,))

    # -- output ------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The plain-SI form: SI numbers in the TOML shape, marked ``units = "si"`` (JSON-safe);
        ``Scenario.parse`` reads it back (see the module's doc)."""
        return json.loads(json.dumps(self._si))  # type: ignore[no-any-return]

    def to_toml(self) -> str:
        """The scenario as TOML with human units; :meth:`from_toml` reads it back exactly."""
        import tomli_w

        return tomli_w.dumps(self._toml)

    def to_json(self) -> str:
        """The canonical form as compact JSON, the input of ``incast._core.run``."""
        return _dumps(self._toml)

    def changed(self) -> dict[str, Any]:
        """Every setting whose value is not the engine's default (the schema's), by dotted name, in the
        canonical TOML form: ``{"servers": 16, "seed": 2, "tcp.delayed_ack": "off"}``. A setting the
        scenario leaves out (``duration`` beside ``blocks``) is not listed."""
        defaults = {s["name"]: s["default"] for s in schema()}
        flat: dict[str, Any] = {}
        for key, value in self._toml.items():
            if key in defaults or not isinstance(value, dict):
                flat[key] = value
            else:
                flat.update({f"{key}.{k}": v for k, v in value.items()})
        return {name: value for name, value in flat.items() if value != defaults.get(name)}

    def describe_changes(self, omit: Collection[str] = ()) -> str:
        """The settings :meth:`changed` lists that :meth:`describe` does not name, as ``name=value`` in
        the TOML form (``"seed=2, blocks=5, tcp.delayed_ack=off"``), but for those in ``omit``."""
        return ", ".join(
            f"{k}={v if isinstance(v, str) else json.dumps(v)}"
            for k, v in self.changed().items()
            if k not in DESCRIBED and k not in omit
        )

    def describe(self) -> str:
        """One line for humans: ``16 servers, 256KiB SRU, 1Gbps, RTT 100us (hosts 99.8us), buffer 32KiB, ...``.

        With several clients it starts ``2 clients x 16 servers (disjoint)``, without reads
        (``workload.kind = "none"``, as ``servers = 0`` sets it) ``no reads``;
        PAUSE or PFC follow the buffer; a congestion control other than Reno and a loss recovery other
        than NewReno end it (``cubic, SACK``).
        """
        wl, topo = self.workload, self.topology
        response = f"{format_size(wl.sru)} SRU" if wl.sru is not None else f"{format_size(wl.block)} block"
        servers = f"{self.servers} server{'s' if self.servers != 1 else ''}"
        if wl.clients > 1:
            servers = f"{wl.clients} clients x {servers} ({wl.server_sets})"
        spraying = [] if topo.ecmp == "flow" else ["ECMP per packet"]
        fabric = {
            "star": [],
            "tree": [f"tree:{topo.edge_switches}"],
            "graph": [f"graph ({len(topo.nodes)} nodes)"],
            "fat_tree": [f"fat-tree:{topo.k}", *spraying],
            "leaf_spine": [f"leaf-spine:{topo.leaves}x{topo.spines}x{topo.hosts_per_leaf}", *spraying],
        }
        reads = [servers, response] if wl.kind != "none" else ["no reads"]
        return ", ".join(
            [
                *reads,
                format_rate(self.link.rate),
                f"RTT {format_duration(self.link.rtt)} (hosts {format_duration(self._host_rtt_s)})",
                *fabric[topo.kind],
                *([] if self.wan.delay is None else [f"WAN {format_duration(self.wan.delay)}"]),
                f"buffer {format_buffer(self.switch.buffer)}",
                *(["PFC"] if self.switch.pfc else ["PAUSE"] if self.switch.pause else []),
                f"RTO_min {format_duration(self.tcp.rto_min)}",
                *([] if self.tcp.cc == "reno" else [self.tcp.cc]),
                *({"reno": ["Reno recovery"], "sack": ["SACK"]}.get(self.tcp.recovery, [])),
            ]
        )


def _from_raw(raw: dict[str, Any]) -> Scenario:
    """Unpickle: read the user's settings again."""
    return Scenario(**raw)
