"""Fabrics: the ``[topology]`` table, topology files, ``--topology`` and the per-port table."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import incast
from incast import Scenario
from incast.cli import main
from incast.errors import ScenarioError
from incast.presets import with_preset
from incast.result import PORT_COLUMNS
from incast.topology import parse_topology_flag

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

RING = """\
routing = "shortest_path"
nodes = [
    {name = "c", kind = "client"},
    {name = "s0", kind = "server"},
    {name = "s1", kind = "server"},
    {name = "x", kind = "switch"},
    {name = "y", kind = "switch"},
]
[[links]]
a = "c"
b = "x"
[[links]]
a = "x"
b = "y"
rate = "500Mbps"
delay = "5us"
[[links]]
a = "s0"
b = "y"
[[links]]
a = "s1"
b = "y"
"""


def test_default_scenario_is_a_star_and_has_one_port_per_host() -> None:
    r = incast.run(servers=3, blocks=2, workload={"sru": "64KiB"})
    assert Scenario(servers=3).topology.kind == "star"
    assert tuple(r.ports.columns) == PORT_COLUMNS
    assert sorted(r.ports["peer"]) == ["client", "server0", "server1", "server2"]
    assert set(r.ports["node"]) == {"switch"}
    assert r.ports["drops"].sum() == r.drops


def test_tree_scenario_round_trips_through_toml() -> None:
    s = Scenario(servers=4, topology={"kind": "tree", "edge_switches": 2, "trunk_rate": "10Gbps"})
    text = s.to_toml()
    assert 'trunk_rate = "10Gbps"' in text and 'trunk_delay = "link"' in text
    assert Scenario.parse(tomllib.loads(text)) == s
    assert "tree:2" in s.describe()


def test_a_slow_trunk_in_a_file_takes_the_drops(tmp_path: Path) -> None:
    (tmp_path / "ring.toml").write_text(RING)
    code = main(["run", "--servers", "2", "--duration", "50ms", "--topology", str(tmp_path / "ring.toml"), "--json"])
    assert code == 0
    s = Scenario(servers=2, duration="50ms", topology={"kind": "graph", **tomllib.loads(RING)})
    ports = incast.run(s).ports.set_index(["node", "peer"])
    assert ports.loc[("y", "x"), "rate_mbps"] == 500.0
    assert ports.loc[("y", "x"), "drops"] > 0
    assert ports.loc[("x", "c"), "drops"] == 0


def test_engine_names_the_offending_node(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bad.toml").write_text(RING.replace('b = "y"\n[[links]]\na = "s1"', 'b = "y"\n[[links]]\na = "s9"'))
    code = main(["run", "--servers", "2", "--topology", str(tmp_path / "bad.toml")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip().splitlines() == ['error: topology.links: link "s9"-"y" names unknown node "s9"']


@pytest.mark.parametrize(
    ("topology", "message"),
    [
        (
            {"kind": "star", "edge_switches": 3},
            'topology.kind: edge_switches needs kind = "tree", not "star"',
        ),
        ({"kind": "graph"}, "topology.nodes: a graph needs its nodes"),
        ({"kind": "ring"}, "topology.kind: must be"),
        ({"kind": "tree", "trunk_rate": "fast"}, 'topology.trunk_rate: must be "link"'),
        ({"kind": "fat_tree", "k": 5}, "topology.k: must be even"),
        ({"kind": "leaf_spine", "spines": 0}, "topology.spines: must be"),
        ({"kind": "star", "trunk_rate": "1Gbps"}, 'topology.kind: trunk_rate needs kind = "tree", "fat_tree" or'),
        ({"kind": "tree", "ecmp": "packet"}, 'topology.kind: ecmp needs kind = "fat_tree" or "leaf_spine"'),
        ({"kind": "fat_tree", "k": 2}, "topology.k: a fat tree of k = 2 has 2 hosts, fewer than the 3"),
    ],
)
def test_bad_topology_tables_name_the_field(topology: dict[str, object], message: str) -> None:
    with pytest.raises(ScenarioError, match="^" + message.replace("(", r"\(")):
        Scenario.parse({"servers": 2, "topology": topology})


def test_topology_flag_rejects_anything_else(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--servers", "2", "--topology", "mesh"]) == 2
    assert "topology: must be \"star\", \"tree:K\"" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("fat-tree:3", "error: topology.k: must be even (k/2 ports of a switch face down, k/2 up), got 3"),
        ("leaf-spine:4x0x2", "error: topology.spines: must be"),
        ("leaf-spine:4x2", "error: topology: leaf-spine needs LxSxH"),
    ],
)
def test_bad_datacenter_fabrics_get_one_line(flag: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--servers", "2", "--topology", flag]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(message)


def test_a_read_on_a_fat_tree_and_a_leaf_spine_crosses_pods_and_leaves() -> None:
    for flag, edge in (("fat-tree:4", "pod1.edge0"), ("leaf-spine:4x2x4", "leaf1")):
        s = Scenario(servers=3, duration="20ms", switch={"buffer": "1MiB"}, topology=parse_topology_flag(flag))
        r = incast.run(s)
        assert (r.drops, r.blocks > 0) == (0, True)
        ports = r.ports.set_index(["node", "peer"])
        assert (edge, "server0") in ports.index
        assert s.describe().split(", ")[4] == flag


def test_a_permutation_on_a_fat_tree_sends_from_every_host_to_another() -> None:
    s = Scenario(
        servers=1,
        duration="2ms",
        workload={"kind": "none"},
        topology=parse_topology_flag("fat-tree:4"),
        switch={"buffer": "1MiB"},
        background={"tcp_flows": 16, "tcp_permutation": True},
    )
    r = incast.run(s)
    flows = r.background
    assert len(flows) == 16 and (flows["bytes_delivered"] > 0).all()
    hosts = r.ports[~r.ports["peer"].str.startswith(("pod", "core"))]
    assert len(hosts) == 16 and (hosts["frames"] > 0).all(), "every host of the fat tree takes part"
    with pytest.raises(ScenarioError, match="background.tcp_flows: with background.tcp_permutation must be at least 2"):
        incast.run(servers=1, workload={"kind": "none"}, background={"tcp_flows": 1, "tcp_permutation": True})


def test_pause_and_background_reach_the_engine_and_round_trip() -> None:
    s = Scenario(
        servers=4,
        duration="50ms",
        topology={"kind": "tree", "trunk_rate": "10Gbps"},
        switch={"buffer": "64KiB", "pause": True, "pause_xoff": "20KiB"},
        background={"tcp_flows": 1},
    )
    sw = json.loads(s.to_json())["switch"]
    assert (sw["pause"], sw["pause_xoff"], sw["pause_xon"], sw["pause_quanta"]) == (True, "20KiB", "8KiB", 65535)
    assert Scenario.parse(tomllib.loads(s.to_toml())) == s
    r = incast.run(s)
    assert len(r.background) == 1 and r.background_goodput_mbps > 0
    assert r.ports["pause_frames"].sum() > 0
    assert r.packets_sent == r.packets_delivered + r.drops + r.packets_in_flight


def test_pause_thresholds_are_checked() -> None:
    with pytest.raises(ScenarioError, match="^switch.pause_xon: must be below switch.pause_xoff"):
        Scenario.parse({"servers": 2, "switch": {"pause": True, "pause_xon": "16KiB"}})
    with pytest.raises(ScenarioError, match="^switch.pause_xoff: must be below switch.buffer"):
        Scenario.parse({"servers": 2, "switch": {"pause": True, "pause_xoff": "32KiB"}})


def test_cli_flags_for_pause_and_background(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["run", "--servers", "4", "--duration", "20ms", "--topology", "tree:2", "--pause", "--pause-xoff", "12KiB"]
    assert main([*args, "--background", "tcp:1", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["scenario"]["switch"]["pause"] is True and d["scenario"]["switch"]["pause_xoff"] == 12 * 1024
    assert d["scenario"]["background"]["tcp_flows"] == 1 and d["background_goodput_mbps"] > 0
    assert main([*args, "--background", "udp:100Mbps", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["scenario"]["background"]["udp_rate"] == 100_000_000 and d["udp_goodput_mbps"] > 0
    assert main([*args, "--background", "icmp:5"]) == 2
    assert "background: must be tcp:N" in capsys.readouterr().err


@pytest.mark.parametrize(("model", "written"), [("qos:4", "qos:4"), ("Shared:0.50", "shared:0.5")])
def test_buffer_models_reach_the_engine(model: str, written: str) -> None:
    s = Scenario(servers=8, duration="50ms", switch={"buffer_model": model})
    assert json.loads(s.to_json())["switch"]["buffer_model"] == written
    assert Scenario.parse(tomllib.loads(s.to_toml())) == s
    r = incast.run(s)
    assert r.packets_sent == r.packets_delivered + r.drops + r.packets_in_flight


def test_qos_classes_shrink_the_port(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--servers", "8", "--duration", "50ms", "--buffer-model", "qos:4", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["queue_peak_bytes"] <= 8 * 1024
    assert main(["run", "--servers", "8", "--buffer-model", "shared:0"]) == 2
    assert capsys.readouterr().err.startswith("error: switch.buffer_model: must be")


def test_latency_client_beside_bulk_flows_into_its_server() -> None:
    """SIGCOMM09 2.2: ten bulk flows into one server; another client reads 1 KB at a time from it."""
    base = {
        "servers": 1,
        "duration": "1s",
        "workload": {"sru": "1000B"},
        "background": {"tcp_flows": 10, "tcp_to_server": True},
        "switch": {"buffer": "128pkt"},
    }
    coarse = incast.run(base)
    fine = incast.run(base, tcp={"rto_min": "200us", "delayed_ack": "off"})
    slow = lambda r: (r.blocks_table["time_ms"] >= 200).mean()  # noqa: E731
    assert slow(coarse) > 0
    assert slow(fine) == 0
    assert len(coarse.background) == 10 and coarse.background_goodput_mbps > 800


def test_random_loss_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--servers", "1", "--duration", "100ms", "--loss", "0.01", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["scenario"]["link"]["loss"] == 0.01
    assert 0.01 < d["drops"] / d["packets_sent"] < 0.03
    assert main(["run", "--servers", "1", "--loss", "1.5"]) == 2
    assert capsys.readouterr().err.startswith("error: link.loss: must be a probability")


def test_a_background_flow_into_the_client_shares_its_port_with_the_reads(capsys: pytest.CaptureFixture[str]) -> None:
    """GIP VII-B: the long-term TCP flow goes through the bottleneck port, so the reads and it split one link."""
    assert main(["run", "--servers", "4", "--duration", "1s", "--background", "tcp:1@client", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["scenario"]["background"]["tcp_to_client"] is True
    assert d["background_goodput_mbps"] > 50
    assert d["goodput_mbps"] + d["background_goodput_mbps"] <= d["best_goodput_mbps"]
    assert main(["run", "--servers", "4", "--background", "tcp:1@udp"]) == 2
    assert capsys.readouterr().err.startswith("error: background: must be tcp:N")
    with pytest.raises(incast.ScenarioError, match="background.tcp_to_client: cannot be set together"):
        incast.run(servers=2, background={"tcp_flows": 1, "tcp_to_server": True, "tcp_to_client": True})


def test_the_rtt_is_spent_in_the_hosts_so_pause_keeps_a_single_switch_lossless() -> None:
    """FAST08 §6 (Fig 14): on one switch, PAUSE stops the losses. Only the cable holds frames on
    the wire, and with the default 100 us RTT almost all of it is in the hosts: four servers into a
    32 KiB port lose nothing with PAUSE, and get several times the goodput they get without it.
    With the whole RTT on the cables (25 us per link), frames in flight outgrow the room above XOFF."""
    base = {"servers": 4, "blocks": 40, "switch": {"buffer": "32KiB"}}
    plain = incast.run(Scenario.parse(base))
    paused = incast.run(Scenario.parse(base, {"switch.pause": True}))
    on_the_wire = incast.run(Scenario.parse(base, {"switch.pause": True, "link.propagation": "25us"}))
    assert paused.drops == 0 and paused.timeouts == 0
    assert paused.goodput_mbps > 5 * plain.goodput_mbps
    assert on_the_wire.drops > 0
    sixteen = {"servers": 16, "blocks": 20, "switch": {"buffer": "32KiB", "pause": True}}
    long_cables = incast.run(Scenario.parse(sixteen, {"link.propagation": "25us"}))
    assert incast.run(Scenario.parse(sixteen)).drops < long_cables.drops


def test_the_rtt_split_is_stated_and_checked() -> None:
    s = Scenario(servers=4)
    assert "RTT 100us (hosts 99.8us)" in s.describe()
    same = Scenario(servers=4, link={"rtt": "100us", "propagation": "25us"})
    assert "RTT 100us (hosts 0)" in same.describe(), "the whole round trip on the cables"
    with pytest.raises(ScenarioError, match=r"^link.propagation: four links' propagation must fit in link.rtt"):
        Scenario(servers=4, link={"propagation": "30us"})


def test_servers_cables_that_differ_leave_the_tie_order_nothing_to_decide() -> None:
    """Four servers answering in lockstep into a 32-packet port: with equal cables their frames reach the
    switch at the same picosecond and ``link.arrival_order`` decides which ones the full port drops; with
    each server's cable a picosecond longer than the one before (``link.skew``) none arrive together and
    both orders give the same run."""
    shape = {"servers": 4, "blocks": 20, "switch": {"buffer": "32pkt"}, "workload": {"sru": "256000B"}}
    base = with_preset("ns2", shape)

    def run(skew: str, order: str, turnaround: str = "0") -> tuple[int, int, float]:
        fields = {"link.skew": skew, "link.arrival_order": order, "workload.server_jitter": turnaround}
        r = incast.run(Scenario.parse(base, fields))
        return r.timeouts, r.drops, r.goodput_mbps

    assert run("0", "queued") != run("0", "wire")
    assert run("1ps", "queued") == run("1ps", "wire")
    # Random turnarounds part the servers at each block's start, but the port's departures clock them
    # back into step: the order still decides.
    assert run("0", "queued", "10us") != run("0", "wire", "10us")
    with pytest.raises(ScenarioError, match=r"^link\.skew: 0 only with topology\.kind = \"graph\""):
        Scenario(servers=2, link={"skew": "1ps"}, topology={"kind": "graph", **tomllib.loads(RING)})


def test_a_server_in_step_with_the_port_finds_it_full_in_ns3s_order() -> None:
    """The first server's window reaches the switch back to back, at the very instants the port's frames
    leave: with ``wire`` order each departure goes first and that server never finds the full port full;
    ns-3 runs the arrival first (it was scheduled when its hop began), so the frame in service still
    counts, and that server loses segments too (``ns3``; ns-3 3.44 drops its eighth to tenth)."""
    shape = {"servers": 4, "blocks": 1, "switch": {"buffer": "34286B"}, "workload": {"order": "fixed"}}

    def drops(order: str) -> list[int]:
        fields = {"link.skew": "1ns", "link.arrival_order": order, "switch.admission": "fits"}
        return incast.run(Scenario.parse(with_preset("ns3", shape), fields)).flows["drops"].tolist()

    assert drops("wire")[0] == 0
    assert drops("ns3")[0] > 0
