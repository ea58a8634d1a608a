"""The fabric of a scenario: the Python mirror of ``crates/incast-sim/src/net/fabric.rs``.

The ``[topology]`` table of a scenario picks one of three fabrics::

    [topology]
    kind = "star"               # every host on one switch (default)

    [topology]
    kind = "tree"               # client on a core switch, servers round-robin on edge switches
    edge_switches = 4           # 1 = GIP Fig 14's path: the trunk is the intermediate link
    trunk_rate = "link"         # or a rate, e.g. "500Mbps" ("link": the host links' rate)
    trunk_delay = "link"        # or a one-way delay ("link": link.rtt / 4)

    [topology]
    kind = "graph"              # node by node, as a topology file gives it
    routing = "shortest_path"   # or "static": only the routes listed
    nodes = [{name = "c", kind = "client"}, {name = "s0", kind = "server"}, {name = "sw", kind = "switch"}]
    links = [{a = "c", b = "sw"}, {a = "s0", b = "sw", rate = "10Gbps", delay = "5us"}]
    routes = [{at = "sw", to = "s0", via = "s0"}]

A link's ``rate``/``delay``/``loss`` default to the host links' (``link.rate``,
``link.rtt / 4``, ``link.loss``); ``rate_ba``/``delay_ba`` set the ``b -> a``
direction apart. With the ``[wan]`` model on, the client's link carries it
unless links say otherwise: ``wan = true`` puts it on a link (both ways),
``wan = false`` keeps it off.
A topology file (``incast run --topology FILE``) holds ``routing``,
``[[nodes]]``, ``[[links]]`` and ``[[routes]]`` at its top level
(:func:`read_topology`). Pydantic checks the shapes here; the engine checks
the graph (unknown nodes, hosts without exactly one link, missing routes,
loops) and names the offending node or link.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import PlainValidator, field_serializer, model_validator
from pydantic_core import PydanticCustomError

from incast.config import (
    BitsPerSecond,
    Seconds,
    _choice,
    _count,
    _duration,
    _field_error,
    _flag,
    _invalid,
    _Model,
    _optional,
    _probability,
    _rate,
)
from incast.errors import ScenarioError
from incast.units import format_duration, format_rate, seconds_to_ps

__all__ = ["Topology", "TopologyLink", "TopologyNode", "TopologyRoute", "parse_topology_flag", "read_topology"]

_MAX_EDGE_SWITCHES = 100_000


def _same_as_link(check: Any) -> Any:
    """``"link"`` (or ``None``) for the host links' value, else ``check``."""

    def inner(value: Any) -> Any:
        if value is None or (isinstance(value, str) and value.strip().lower() == "link"):
            return None
        try:
            return check(value)
        except PydanticCustomError as e:
            raise _invalid(f'must be "link" (the host links\' value) or a value: {e.message()}') from None

    return inner


def _name(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise _invalid(f"must be a non-empty node name, got {value!r}")
    return value


Name = Annotated[str, PlainValidator(_name)]
OptionalRate = Annotated[int | None, PlainValidator(_same_as_link(_rate))]
OptionalSeconds = Annotated[float | None, PlainValidator(_same_as_link(_duration(positive=False)))]


class TopologyNode(_Model):
    """One node of a graph: ``client`` (exactly one), ``server`` (numbered in the order listed) or ``switch``."""

    name: Name
    kind: Annotated[str, PlainValidator(_choice("client", "server", "switch"))]


class TopologyLink(_Model):
    """A full-duplex link between nodes ``a`` and ``b``; unset rates and delays are the host links'."""

    a: Name
    b: Name
    rate: OptionalRate = None
    delay: OptionalSeconds = None
    rate_ba: OptionalRate = None
    delay_ba: OptionalSeconds = None
    loss: Annotated[float | None, PlainValidator(_optional(_probability))] = None
    wan: Annotated[bool | None, PlainValidator(_optional(_flag))] = None

    def to_engine(self) -> dict[str, Any]:
        """The engine's ``LinkSpec``."""
        return {
            "a": self.a,
            "b": self.b,
            "rate": self.rate,
            "delay": None if self.delay is None else seconds_to_ps(self.delay),
            "rate_ba": self.rate_ba,
            "delay_ba": None if self.delay_ba is None else seconds_to_ps(self.delay_ba),
            "loss_ppb": None if self.loss is None else round(self.loss * 1e9),
            "wan": self.wan,
        }

    def to_toml(self) -> dict[str, Any]:
        """Only the fields that are set, in human units."""
        out: dict[str, Any] = {"a": self.a, "b": self.b}
        for key in ("rate", "rate_ba"):
            if (rate := getattr(self, key)) is not None:
                out[key] = format_rate(rate)
        for key in ("delay", "delay_ba"):
            if (delay := getattr(self, key)) is not None:
                out[key] = format_duration(delay)
        if self.loss is not None:
            out["loss"] = self.loss
        if self.wan is not None:
            out["wan"] = self.wan
        return out


class TopologyRoute(_Model):
    """A static route: switch ``at`` sends frames for host ``to`` to its neighbour ``via``."""

    at: Name
    to: Name
    via: Name


class Topology(_Model):
    """How hosts and switches are wired (``crates/incast-sim/src/net/fabric.rs``).

    Default values: ``kind`` star; for trees one edge switch and trunks like
    the host links; for graphs shortest-path routing.
    """

    kind: Annotated[str, PlainValidator(_choice("star", "tree", "graph"))] = "star"
    edge_switches: Annotated[int, PlainValidator(_count(1, _MAX_EDGE_SWITCHES, "edge switches"))] = 1
    trunk_rate: OptionalRate = None
    trunk_delay: OptionalSeconds = None
    routing: Annotated[str, PlainValidator(_choice("shortest_path", "static"))] = "shortest_path"
    nodes: tuple[TopologyNode, ...] = ()
    links: tuple[TopologyLink, ...] = ()
    routes: tuple[TopologyRoute, ...] = ()

    @field_serializer("nodes", "links", "routes")
    def _dump_as_lists(self, value: tuple[_Model, ...]) -> list[dict[str, Any]]:
        return [item.model_dump() for item in value]

    @field_serializer("trunk_rate", "trunk_delay")
    def _dump_same_as_link(self, value: int | float | None) -> int | float | str:
        return "link" if value is None else value

    @model_validator(mode="after")
    def _fields_of_the_kind(self) -> Topology:
        tree = self.edge_switches != 1 or self.trunk_rate is not None or self.trunk_delay is not None
        if tree and self.kind != "tree":
            raise _field_error("topology.kind", f'edge_switches, trunk_rate and trunk_delay need kind = "tree", not "{self.kind}"')
        graph = self.nodes or self.links or self.routes or self.routing != "shortest_path"
        if graph and self.kind != "graph":
            raise _field_error("topology.kind", f'nodes, links, routes and routing need kind = "graph", not "{self.kind}"')
        if self.kind == "graph" and not self.nodes:
            raise _field_error("topology.nodes", 'a graph needs its nodes (a "client", the "server"s and the switches)')
        return self

    def to_engine(self) -> Any:
        """The engine's ``TopologyConfig``."""
        if self.kind == "star":
            return "star"
        if self.kind == "tree":
            delay = None if self.trunk_delay is None else seconds_to_ps(self.trunk_delay)
            return {"tree": {"edge_switches": self.edge_switches, "trunk_rate": self.trunk_rate, "trunk_delay": delay}}
        return {
            "graph": {
                "nodes": [n.model_dump() for n in self.nodes],
                "links": [link.to_engine() for link in self.links],
                "routing": self.routing,
                "routes": [r.model_dump() for r in self.routes],
            }
        }

    def to_toml(self) -> dict[str, Any]:
        """The ``[topology]`` table with human units, only the fields of its kind."""
        if self.kind == "star":
            return {"kind": "star"}
        if self.kind == "tree":
            return {
                "kind": "tree",
                "edge_switches": self.edge_switches,
                "trunk_rate": "link" if self.trunk_rate is None else format_rate(self.trunk_rate),
                "trunk_delay": "link" if self.trunk_delay is None else format_duration(self.trunk_delay),
            }
        out: dict[str, Any] = {
            "kind": "graph",
            "routing": self.routing,
            "nodes": [n.model_dump() for n in self.nodes],
            "links": [link.to_toml() for link in self.links],
        }
        if self.routes:
            out["routes"] = [r.model_dump() for r in self.routes]
        return out

    def describe(self) -> str:
        """``star``, ``tree:4`` or ``graph (9 nodes)``."""
        if self.kind == "tree":
            return f"tree:{self.edge_switches}"
        return f"graph ({len(self.nodes)} nodes)" if self.kind == "graph" else "star"


def read_topology(path: str | Path) -> dict[str, Any]:
    """A topology file as a ``[topology]`` table of kind ``graph``.

    The file holds ``routing`` (optional), ``[[nodes]]``, ``[[links]]`` and
    ``[[routes]]`` (optional). Raises ``OSError`` if unreadable and
    ScenarioError if it is not TOML or holds other keys.
    """
    from incast.config import read_toml  # late: config imports this module

    data = read_toml(path)
    unknown = sorted(set(data) - {"routing", "nodes", "links", "routes"})
    if unknown:
        raise ScenarioError(f"{path}: unknown key {unknown[0]!r}; a topology file has routing, nodes, links and routes")
    return {"kind": "graph", **data}


def parse_topology_flag(value: str) -> dict[str, Any]:
    """``star``, ``tree:K`` or a topology file's path, as a ``[topology]`` table."""
    text = value.strip()
    if text == "star":
        return {"kind": "star"}
    if text.startswith("tree:"):
        return {"kind": "tree", "edge_switches": text[len("tree:") :]}
    if text == "tree":
        return {"kind": "tree"}
    if not Path(text).is_file():
        raise ScenarioError(f'topology: must be "star", "tree:K" (K edge switches) or a topology file, got {value!r}')
    return read_topology(text)
