"""Every setting the testbed meets is honoured, noted or refused: none is ignored in silence.

No root needed: only the plan (:func:`incast.testbed.plan`) is built, from the linux preset, for
every setting of the engine's schema at another value.
"""

from __future__ import annotations

import re
from typing import Any

from incast import Scenario
from incast.errors import ScenarioError
from incast.presets import with_preset
from incast.scenario import schema as scenario_schema
from incast.testbed import KernelClock, plan

HZ250 = KernelClock(250, "test")
CONGESTION = ["reno", "bbr", "cubic"]


TOPOLOGY_KNOBS = ("edge_switches", "trunk_rate", "trunk_delay", "k", "leaves", "spines", "hosts_per_leaf", "ecmp")
TOPOLOGY_KNOBS += ("routing", "nodes", "links", "routes")
#: Settings whose other value needs others beside it, with them.
COMPANIONS: dict[str, dict[str, Any]] = {
    "switch.pfc": {"switch.pfc": True, "workload.priority": 1, "background.tcp_flows": 1, "background.priority": 2},
    "tcp.rude": {"tcp.rude": True, "tcp.rude_allowed": True},
    "tcp.ictcp": {"tcp.ictcp": True, "tcp.rcv_window": "fixed"},
    "workload.kind": {"workload.kind": "none", "traffic.load": 0.3, "duration": "10ms", "blocks": None},
    "background.tcp_permutation": {"background.tcp_permutation": True, "background.tcp_flows": 5},
    "traffic.load": {"traffic.load": 0.3, "duration": "10ms", "blocks": None},
    "traffic.query_rate": {"traffic.query_rate": 100.0, "traffic.query_fanin": 2, "duration": "10ms", "blocks": None},
}
#: Settings a testbed plan may leave alone: knobs of a mechanism the kernel-like base below has off (the
#: simulator ignores them too), and the simulator's own bookkeeping and tie rule.
INERT = {
    "memory_budget": "the simulator's memory limit",
    "stats.timeouts": "the simulator's result rows",
    "link.arrival_order": "the simulator's order of frames arriving at one picosecond",
    "link.propagation": "the cable's share of link.rtt, which is noted",
    "tcp.rto_tick": "ns2 RTO flavor only",
    "tcp.gip_copies": "tcp.gip only",
    "tcp.gip_head_cwnd": "tcp.gip only",
    "tcp.rude_allowed": "tcp.rude only",
    "tcp.rude_off": "tcp.rude only",
    "switch.rude_policy": "tcp.rude only",
    "tcp.dctcp_alpha_init": "dctcp only",
    "tcp.dctcp_g_shift": "dctcp only",
    "switch.pause_xoff": "switch.pause only",
    "switch.pause_xon": "switch.pause only",
    "switch.pause_quanta": "switch.pause only",
    "switch.pfc_priorities": "switch.pfc only",
    "workload.server_sets": "several clients only",
    "background.tcp_to_server": "background.tcp_flows only",
    "background.tcp_to_client": "background.tcp_flows only",
    "background.priority": "background flows only",
    "background.udp_priority": "background.udp_rate only",
    "wan.jitter_dist": "wan.delay only",
    "wan.spike_height": "wan.delay only",
    "wan.spike_duration": "wan.delay only",
    "wan.shift": "wan.delay only",
    "tcp.local_congestion": "link.tx_queue only (noted), where Linux enters CWR on a local drop itself",
    "tcp.rude_off_at": "tcp.rude only",
    "tcp.rude_servers": "tcp.rude only",
    "wan.jitter": "wan.delay only",
    "wan.spike_interval": "wan.delay only",
    "wan.shift_interval": "wan.delay only",
    **{f"topology.{k}": "a topology.kind other than star only" for k in TOPOLOGY_KNOBS},
    **{f"tcp.delayed_ack_adaptive_{k}": "adaptive delayed ACK only" for k in ("gain_shift", "multiplier", "min")},
    "tcp.delayed_ack_adaptive_max": "adaptive delayed ACK only",
    **{f"tcp.ictcp_{k}": "tcp.ictcp only" for k in ("alpha", "beta", "gamma1", "gamma2", "min_wnd", "init_wnd")},
    **{f"traffic.{k}": "traffic.load or query_rate only" for k in ("sizes", "pattern", "query_fanin")},
    **{f"traffic.{k}": "traffic.load or query_rate only" for k in ("query_response", "fct_end", "drain")},
}


def _other_value(entry: dict[str, Any], base: dict[str, Any]) -> Scenario | None:
    """A scenario of ``base`` with ``entry``'s setting at a valid value other than the base's, if one of a few is."""
    default = entry["default"]
    tries: list[Any] = [True, False] if isinstance(default, bool) else []
    tries += re.findall(r'"([^"]+)"', entry.get("allowed") or "")
    if isinstance(default, (int, float)) and not isinstance(default, bool):
        tries += [default * 2 + 1, default + 1, 0.5]
    if isinstance(default, str) and (amount := re.fullmatch(r"([0-9.]+)\s*([A-Za-z]+)", default)):
        tries.append(f"{float(amount[1]) * 2:g}{amount[2]}")
    tries += [True, 1, 2, "1ms", "10us", "1MiB", "1Gbps", 0.01, "10pkt"]
    given = Scenario.parse(base)
    if entry["name"] in COMPANIONS:
        return Scenario.parse(base, COMPANIONS[entry["name"]])
    for value in tries:
        try:
            s = Scenario.parse(base, {entry["name"]: value})
        except ScenarioError:
            continue
        if s.get(entry["name"]) != given.get(entry["name"]):
            return s
    return None


def test_every_setting_the_testbed_meets_is_honoured_noted_or_refused() -> None:
    """From the kernel's own settings (the linux preset), any other value of any setting either changes what the
    testbed sets up, adds a note, or is refused in one line: none is ignored in silence, but the inert ones."""
    base = with_preset("linux", {"servers": 4, "blocks": 10})
    kernel_like = plan(Scenario.parse(base), HZ250, CONGESTION)
    silent, untried = [], []
    for entry in scenario_schema():
        if entry["name"] in ("servers", "blocks", "duration", "seed") or entry["name"] in INERT:
            continue
        s = _other_value(entry, base)
        if s is None:
            untried.append(entry["name"])
            continue
        try:
            other = plan(s, HZ250, CONGESTION)
        except ScenarioError:
            continue
        if other.notes == kernel_like.notes and other == kernel_like:
            silent.append(entry["name"])
    assert silent == []
    assert untried == [], untried
