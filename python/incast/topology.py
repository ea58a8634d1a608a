"""Topologies from the command line and from files (the engine reads the ``[topology]`` table).

The ``[topology]`` table of a scenario picks one of five fabrics::

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

    [topology]
    kind = "fat_tree"           # k-ary fat tree: k^3/4 hosts, equal-cost multipath
    k = 4                       # even
    ecmp = "flow"               # or "packet" (spraying)

    [topology]
    kind = "leaf_spine"         # every leaf joined to every spine, equal-cost multipath
    leaves = 4
    spines = 2
    hosts_per_leaf = 4
    trunk_rate = "link"         # the leaf-spine links (oversubscription), as trunk_delay

A link's ``rate``/``delay``/``loss`` default to the host links' (``link.rate``,
``link.rtt / 4``, ``link.loss``); ``rate_ba``/``delay_ba`` set the ``b -> a``
direction apart. With the ``[wan]`` model on, the client's link carries it
unless links say otherwise: ``wan = true`` puts it on a link (both ways),
``wan = false`` keeps it off. A topology file (``incast run --topology FILE``)
holds ``routing``, ``[[nodes]]``, ``[[links]]`` and ``[[routes]]`` at its top
level. The engine checks the table and the graph (unknown nodes, hosts
without exactly one link, missing routes, loops) and names the offending
setting, node or link (``crates/incast-sim/src/net/fabric_table.rs``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from incast.errors import ScenarioError
from incast.scenario import read_toml

__all__ = ["parse_topology_flag", "read_topology"]


def read_topology(path: str | Path) -> dict[str, Any]:
    """A topology file as a ``[topology]`` table of kind ``graph``.

    The file holds ``routing`` (optional), ``[[nodes]]``, ``[[links]]`` and
    ``[[routes]]`` (optional). Raises ``OSError`` if unreadable and
    ScenarioError if it is not TOML or holds other keys.
    """
    data = read_toml(path)
    unknown = sorted(set(data) - {"routing", "nodes", "links", "routes"})
    if unknown:
        raise ScenarioError(f"{path}: unknown key {unknown[0]!r}; a topology file has routing, nodes, links and routes")
    return {"kind": "graph", **data}


_FLAG_FORMS = (
    '"star", "tree:K" (K edge switches), "fat-tree:K" (a k-ary fat tree), '
    '"leaf-spine:LxSxH" (L leaves, S spines, H hosts per leaf) or a topology file'
)


def parse_topology_flag(value: str) -> dict[str, Any]:
    """``star``, ``tree:K``, ``fat-tree:K``, ``leaf-spine:LxSxH`` or a topology file's path, as a ``[topology]`` table.

    The counts go to the engine as written, which checks them (``k`` even, at
    least one spine, ...) and names the setting.
    """
    text = value.strip()
    if text == "star":
        return {"kind": "star"}
    if text.startswith("tree:"):
        return {"kind": "tree", "edge_switches": text[len("tree:") :]}
    if text == "tree":
        return {"kind": "tree"}
    if text.startswith("fat-tree:"):
        return {"kind": "fat_tree", "k": text[len("fat-tree:") :]}
    if text.startswith("leaf-spine:"):
        counts = text[len("leaf-spine:") :].split("x")
        if len(counts) != 3:
            raise ScenarioError(f"topology: leaf-spine needs LxSxH (leaves x spines x hosts per leaf), got {value!r}")
        return {"kind": "leaf_spine", **dict(zip(("leaves", "spines", "hosts_per_leaf"), counts, strict=True))}
    if not Path(text).is_file():
        raise ScenarioError(f"topology: must be {_FLAG_FORMS}, got {value!r}")
    return read_topology(text)
