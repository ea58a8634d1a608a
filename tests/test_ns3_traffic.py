"""ns-3's open-loop harness (``ns3_traffic.py``): what it refuses, the options it is given, the traffic it draws,
the fabric's paths and the ideal completion time its slowdowns divide by."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import incast
from incast.reference import ns3_fabric, ns3_ideal, ns3_options, ns3_traffic
from incast.reference import ns3_traffic_options as traffic
from incast.reference.base import Refused
from incast.reference.ns3_options import Ns3

#: The shipped web-search distribution, as the engine embeds it.
CDF = Path(__file__).resolve().parents[1] / "crates/incast-sim/src/workload/flow_sizes/websearch.cdf"


def benchmark(**fields: object) -> incast.Scenario:
    """DCTCP §4.3's rack in small: hosts on one shared-memory switch, web-search flows and queries."""
    raw: dict[str, object] = {
        "servers": 7,
        "duration": "20ms",
        "workload": {"kind": "none"},
        "switch": {"buffer": "88889B", "buffer_model": "shared:0.212"},
        "tcp": {"rto_min": "10ms", "recovery": "sack"},
        "traffic": {"load": 0.1, "sizes": "websearch", "query_rate": 300.0, "query_fanin": 7},
    }
    for key, value in fields.items():
        raw[key] = {**raw[key], **value} if isinstance(value, dict) and isinstance(raw.get(key), dict) else value
    return incast.Scenario(**raw)


def dctcp(**fields: object) -> incast.Scenario:
    """The same rack with DCTCP, marked above 20 packets."""
    return benchmark(tcp={"cc": "dctcp"}, switch={"ecn_threshold": "20pkt"}, **fields)


@pytest.mark.parametrize(
    ("fields", "setting"),
    [
        ({"topology": {"kind": "tree"}}, "topology.kind"),
        ({"topology": {"kind": "fat_tree", "k": 4}}, "topology.kind"),
        ({"workload": {"kind": "sync_read"}}, "workload.kind"),
        ({"traffic": {"pattern": "permutation"}}, "traffic.pattern"),
        ({"traffic": {"drain": "1s"}}, "traffic.drain"),
        ({"switch": {"buffer_model": "qos:2"}}, "switch.buffer_model"),
        ({"switch": {"ecn_threshold": "20pkt"}}, "switch.ecn_threshold"),
        ({"tcp": {"cc": "cubic"}}, "tcp.cc"),
        ({"tcp": {"delayed_ack": "linux"}}, "tcp.delayed_ack"),
        ({"link": {"loss": 0.001}}, "link.loss"),
    ],
)
def test_the_open_loop_harness_refuses_what_it_cannot_build_in_one_line_naming_the_setting(
    fields: dict[str, object], setting: str
) -> None:
    s = benchmark(**fields)
    assert [r.setting for r in Ns3().refusals(s)] == [setting]
    with pytest.raises(Refused) as e:
        Ns3().check(s)
    assert str(e.value).startswith(f"{setting}: ") and str(e.value).endswith(" (ns-3 3.44)")
    assert "\n" not in str(e.value)


def test_reno_marked_by_red_is_refused_since_ns3_drops_at_k_what_it_cannot_mark() -> None:
    message = str(pytest.raises(Refused, Ns3().check, benchmark(switch={"ecn_threshold": "20pkt"})).value)
    allowed = 'with tcp.cc = "dctcp" only: ns-3\'s RED drops at K what is not ECN-capable'
    assert message == f"switch.ecn_threshold: {allowed} (ns-3 3.44)"


def test_the_synchronized_read_harness_refuses_traffic_it_would_leave_out() -> None:
    s = incast.Scenario(servers=4, blocks=3, duration="1s", traffic={"load": 0.1})
    assert not traffic.is_traffic(incast.Scenario(servers=4, blocks=3))
    assert traffic.is_traffic(s)
    assert "traffic.load" in [r.setting for r in ns3_options.rules(s)]


def test_dctcp_runs_with_red_step_marking_at_k_and_the_rack_as_hosts(tmp_path: Path) -> None:
    s = dctcp()
    assert Ns3().refusals(s) == []
    args = ns3_traffic.parser().parse_args(traffic.options(s, tmp_path / "sizes.cdf"))
    assert (args.hosts, args.duration, args.load, args.seed) == (8, 0.02, 0.1, 1)
    assert (args.query_rate, args.query_fanin, args.query_response) == (300.0, 7, 2000)
    assert (args.buffer, args.shared_alpha, args.ecn_k, args.cc) == (88_889, 0.212, "20", "dctcp")
    assert (args.rto_min, args.delayed_ack, args.sack, args.recovery) == (0.01, 0.04, True, "classic")
    assert (args.mss, args.init_cwnd, args.socket_buffer) == (1460, 10, 65_536)
    notes = Ns3().notes(s)
    assert any("Gentle false" in n for n in notes) and any("two segments" in n for n in notes)


def test_the_drawn_traffic_offers_its_load_and_every_query_asks_distinct_other_hosts() -> None:
    args = ns3_traffic.parser().parse_args(
        ["--hosts", "10", "--duration", "20s", "--load", "0.2", "--sizes", str(CDF)]
        + ["--query-rate", "50", "--query-fanin", "9"]
    )
    flows, queries = ns3_traffic.arrivals(args)
    background = [f for f in flows if f[4] < 0]
    offered = sum(f[3] for f in background) * 8 / (args.duration * args.hosts * args.link)
    assert offered == pytest.approx(0.2, rel=0.25)  # heavy-tailed sizes: a few flows carry most bytes
    assert all(src != dst for _, src, dst, _, _ in flows)
    for q in range(len(queries)):
        workers = [src for _, src, _, _, query in flows if query == q]
        assert len(set(workers)) == len(workers) == 9
    assert math.isclose(ns3_traffic.mean_size(ns3_traffic.read_cdf(str(CDF))), 1_711_250.0)


def test_sizes_are_drawn_by_linear_interpolation_between_the_points() -> None:
    points = [(0.0, 0.0), (10_000.0, 0.5), (30_000.0, 1.0)]
    assert [ns3_traffic.quantile(points, u) for u in (0.0, 0.25, 0.5, 0.75)] == [1, 5_000, 10_000, 20_000]


@pytest.mark.slow
def test_a_small_rack_runs_in_ns3_every_query_and_short_flow_finishing() -> None:
    if ns3_options.wheel_missing():
        pytest.skip("this Python has no ns3 wheel")
    out = Ns3().run(dctcp(traffic={"load": 0.05, "query_rate": 300.0, "query_fanin": 7, "sizes": "websearch"}))
    assert out["simulator"] == "ns-3 3.44" and out["queries"] > 0
    assert out["queries_unfinished"] == 0 and out["query_time_ms"]["p50"] > 0
    assert out["late_connections"] == 0 and out["other_drops"] == 0


def test_the_figures_count_flows_by_size_bucket_and_a_query_timed_out_by_any_response() -> None:
    flows = [
        (0.0, 0, 1, 10_000, -1),  # under 10 KB, 2 ms
        (0.0, 1, 2, 10_001, -1),  # 10-100 KB, 4 ms
        (0.0, 2, 0, 500_000, -1),  # 100 KB-1 MB, unfinished
        (0.1, 1, 0, 2_000, 0),  # query 0's responses: one timed out, done at 0.115 s
        (0.1, 2, 0, 2_000, 0),
    ]
    ideal = [0.001, 0.001, 0.01, 0.001, 0.001]
    out = ns3_traffic.figures(flows, [0.1], [0.002, 0.004, -1.0, 0.103, 0.115], [0, 0, 0, 1, 0], [0.115], ideal)
    assert (out["open_flows"], out["open_flows_unfinished"]) == (3, 1)
    assert out["slowdown_under_10kb"]["p95"] == pytest.approx(2.0) and out["slowdown_10kb_100kb"]["p95"] == (
        pytest.approx(4.0)
    )
    assert out["slowdown"]["p50"] == pytest.approx(2.0) and out["slowdown_100kb_1mb"]["p95"] is None
    assert out["fct_ms_under_10kb"]["p99"] == pytest.approx(2.0) and out["fct_ms_10kb_100kb"]["p50"] == pytest.approx(
        4.0
    )
    assert out["fct_ms_100kb_1mb"] == {"p50": None, "p95": None, "p99": None, "mean": None}
    assert out["query_time_ms"]["p99"] == pytest.approx(15.0)
    assert (out["queries_timed_out"], out["query_timeout_fraction"], out["responses_timed_out"]) == (1, 1.0, 1)


def fabric(**fields: object) -> incast.Scenario:
    """HPCC §5.3's fabric in small: 2 leaves of 4 hosts, 2 spines on 400 Gbps trunks, DCTCP, Hadoop flows."""
    raw: dict[str, object] = {
        "servers": 7,
        "duration": "1ms",
        "workload": {"kind": "none"},
        "link": {"rate": "100Gbps", "rtt": "4us", "propagation": "1us"},
        "topology": {"kind": "leaf_spine", "leaves": 2, "spines": 2, "hosts_per_leaf": 4}
        | {"trunk_rate": "400Gbps", "trunk_delay": "2us"},
        "switch": {"buffer": "1600KB", "buffer_model": "shared:1", "ecn_threshold": "300KB"},
        "tcp": {"cc": "dctcp", "recovery": "sack", "mss": 1000, "init_cwnd": 162, "rto_min": "1ms"}
        | {"delayed_ack": "off"},
        "traffic": {"load": 0.3, "sizes": "hadoop", "fct_end": "acked"}
        | {"query_rate": 500.0, "query_fanin": 6, "query_response": "500KB"},
    }
    for key, value in fields.items():
        raw[key] = {**raw[key], **value} if isinstance(value, dict) and isinstance(raw.get(key), dict) else value
    return incast.Scenario(**raw)


def test_a_leaf_spine_runs_as_its_leaves_spines_and_trunks_every_host_taking_part(tmp_path: Path) -> None:
    s = fabric()
    assert Ns3().refusals(s) == []
    args = ns3_traffic.parser().parse_args(traffic.options(s, tmp_path / "sizes.cdf"))
    assert (args.hosts, args.leaves, args.spines, args.hosts_per_leaf) == (None, 2, 2, 4)
    assert ns3_traffic.hosts(args) == 8  # the fabric's hosts, not the workload's 7 servers and client
    assert (args.trunk, args.trunk_delay, args.ecmp, args.link, args.rtt) == (400e9, 2e-6, "flow", 100e9, 4e-6)
    assert (args.fct_end, args.cc, args.ecn_k, args.shared_alpha, args.buffer) == (
        "acked",
        "dctcp",
        "300000B",
        1.0,
        1_600_000,
    )
    assert (args.mss, args.init_cwnd, args.delayed_ack, args.rto_min) == (1000, 162, 0.0, 0.001)
    notes = Ns3().notes(s)
    assert any(n.startswith("topology.ecmp: ns-3 3.44 spreads only per packet") for n in notes)


def test_trunks_left_to_the_links_take_the_host_links_rate_and_cable(tmp_path: Path) -> None:
    s = fabric(topology={"trunk_rate": "link", "trunk_delay": "link"}, link={"propagation": "500ns"})
    args = ns3_traffic.parser().parse_args(traffic.options(s, tmp_path / "sizes.cdf"))
    assert (args.trunk, args.trunk_delay) == (100e9, 5e-7)
    assert any(n.startswith("link.rtt: ns-3 puts each host's share") for n in Ns3().notes(s))


def test_packet_spraying_is_ns3s_own_random_ecmp(tmp_path: Path) -> None:
    s = fabric(topology={"ecmp": "packet"})
    assert ns3_traffic.parser().parse_args(traffic.options(s, tmp_path / "sizes.cdf")).ecmp == "packet"
    assert any("RandomEcmpRouting draws every packet" in n for n in Ns3().notes(s))


def test_the_one_switch_command_line_is_unchanged_by_the_fabric_options(tmp_path: Path) -> None:
    command = traffic.options(dctcp(), tmp_path / "sizes.cdf")
    assert command[:2] == ["--hosts", "8"]
    assert not {"--leaves", "--trunk", "--ecmp", "--fct-end"} & set(command)


def test_a_fat_tree_is_refused_in_one_line_naming_what_the_harness_builds() -> None:
    message = str(pytest.raises(Refused, Ns3().check, benchmark(topology={"kind": "fat_tree", "k": 4})).value)
    assert message == """topology.kind: "star" or "leaf_spine": what the harness builds, got 'fat_tree' (ns-3 3.44)"""


def test_the_harness_refuses_a_leaf_spine_without_spines_and_hosts_with_leaves() -> None:
    with pytest.raises(SystemExit):
        ns3_traffic.main(["--leaves", "2", "--hosts-per-leaf", "4", "--duration", "1ms"])
    with pytest.raises(SystemExit):
        ns3_traffic.main(
            ["--leaves", "2", "--spines", "2", "--hosts-per-leaf", "4", "--hosts", "8", "--duration", "1ms"]
        )


def test_hosts_on_one_leaf_are_two_hops_apart_and_on_two_leaves_four() -> None:
    shape = {"leaves": 2, "link": 100e9, "rtt": 4e-6, "trunk": 400e9, "trunk_delay": 2e-6}
    host, trunk = (100e9, 1e-6), (400e9, 2e-6)
    assert ns3_fabric.hops(0, 2, **shape) == (host, host)  # hosts 0 and 2 on leaf 0 (round-robin)
    assert ns3_fabric.hops(0, 3, **shape) == (host, trunk, trunk, host)
    assert ns3_fabric.hops(0, 3, **(shape | {"leaves": 0})) == (host, host)  # the star


#: 1 Gbps hops of 5 us; Ethernet's frames: payload + 40 bytes of headers + 38 of framing, ACKs of 84 bytes.
HOP = (1e9, 5e-6)
STACK = ns3_ideal.Stack(mss=1000, headers=40, init_cwnd=10, window=1 << 20, delack_s=0.0, acked=False)
SEGMENT, ACK = 1078 * 8 / 1e9, 84 * 8 / 1e9


def test_the_harness_frames_as_the_engine_a_full_segment_and_a_minimum_frame() -> None:
    assert ns3_fabric.frame_bytes(1500) == 1518 and ns3_fabric.wire_bytes(1500) == 1538
    assert ns3_fabric.frame_bytes(40) == 64 and ns3_fabric.wire_bytes(40) == 84  # a pure ACK, padded


def test_one_segment_crosses_each_hop_store_and_forward() -> None:
    assert ns3_ideal.ideal_fct((HOP, HOP), (HOP, HOP), STACK, 1000) == pytest.approx(2 * SEGMENT + 10e-6)


def test_counted_to_the_senders_ack_a_flow_adds_the_acks_way_back() -> None:
    acked = STACK._replace(acked=True)
    back = 2 * (ACK + 5e-6)
    for size in (1000, 10_000, 11_000, 123_456):
        delivered = ns3_ideal.ideal_fct((HOP, HOP), (HOP, HOP), STACK, size)
        assert ns3_ideal.ideal_fct((HOP, HOP), (HOP, HOP), acked, size) == pytest.approx(delivered + back), size


def test_past_the_initial_window_the_ack_clock_paces_the_flow() -> None:
    one = STACK._replace(init_cwnd=1)
    first, ack = 2 * SEGMENT + 10e-6, 2 * (ACK + 5e-6)
    assert ns3_ideal.ideal_fct((HOP, HOP), (HOP, HOP), STACK, 10_000) == pytest.approx(11 * SEGMENT + 10e-6)
    assert ns3_ideal.ideal_fct((HOP, HOP), (HOP, HOP), one, 2000) == pytest.approx(first + ack + first)


def test_a_receive_window_below_the_initial_window_binds_first() -> None:
    two = STACK._replace(window=2000)
    first, ack = 2 * SEGMENT + 10e-6, 2 * (ACK + 5e-6)
    # Segments 1-2 at once, 3 on the first ACK; segment 3 is alone on the path then.
    assert ns3_ideal.ideal_fct((HOP, HOP), (HOP, HOP), two, 3000) == pytest.approx(first + ack + first)


def test_a_lone_segment_with_delayed_acks_waits_for_the_timeout() -> None:
    delayed = STACK._replace(init_cwnd=1, delack_s=0.04)
    assert 0.04 < ns3_ideal.ideal_fct((HOP, HOP), (HOP, HOP), delayed, 2000) < 0.041


def test_flows_of_one_size_on_one_path_share_their_ideal() -> None:
    paths = {(0, 1): (HOP, HOP), (1, 0): (HOP, HOP), (0, 2): (HOP, HOP, HOP), (2, 0): (HOP, HOP, HOP)}
    out = ns3_ideal.ideals([(0, 1, 5000), (1, 0, 5000), (0, 2, 5000)], lambda a, b: paths[(a, b)], STACK)
    assert out[0] == out[1] < out[2]


@pytest.mark.slow
def test_lone_flows_across_the_leaf_spine_finish_in_their_ideal_time() -> None:
    if ns3_options.wheel_missing():
        pytest.skip("this Python has no ns3 wheel")
    out = Ns3().run(fabric(duration="40ms", traffic={"load": 0.001, "query_rate": 0.0}))
    assert out["open_flows"] > 20 and out["open_flows_unfinished"] == 0 and out["drops"] == 0
    # Alone on the fabric a flow's FCT is its ideal, but for ns-3's nanosecond serialization.
    assert [out["slowdown"][q] for q in ("p50", "p99", "mean")] == pytest.approx([1.0, 1.0, 1.0], abs=0.01)


@pytest.mark.slow
def test_the_flows_of_one_host_pair_spread_over_the_spines_by_their_ports() -> None:
    if ns3_options.wheel_missing():
        pytest.skip("this Python has no ns3 wheel")
    # Two leaves of one host each: every flow joins the same two addresses, so only the ports can spread them.
    s = fabric(servers=1, topology={"hosts_per_leaf": 1}, traffic={"load": 0.05, "query_rate": 0.0})
    up = Ns3().run(s)["uplink_packets"]
    assert len(up) == 4 and all(n > 0 for n in up), up  # leaf 0 to spines 0 and 1, then leaf 1's


def test_the_engines_flows_reach_the_harness_as_drawn(tmp_path: Path) -> None:
    s = benchmark()
    r = incast.run(s)
    file = tmp_path / "engine.flows"
    file.write_text(traffic.flows_text(r))
    args = ns3_traffic.parser().parse_args(["--hosts", "8", "--duration", "20ms", "--flows", str(file)])
    flows, queries = ns3_traffic.arrivals(args)
    t = r.fct_table.sort_values("start_s", kind="stable")
    assert flows == [(x.start_s, x.src, x.dst, x.size_bytes, x.query) for x in t.itertuples()]
    assert len(queries) == r.queries > 0
    assert queries == [float(x) for x in r.queries_table["start_s"]]
    assert "--flows" in traffic.options(s, Path("sizes.cdf"), file)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0.1 0 0 100 -1\n", "--flows: line 1: not 'arrival_s sender receiver bytes query' on 8 hosts"),
        ("# ok\n0.1 0 8 100 -1\n", "--flows: line 2: not 'arrival_s sender receiver bytes query' on 8 hosts"),
        ("0.1 0 1 100\n", "--flows: line 1: not 'arrival_s sender receiver bytes query' on 8 hosts"),
        ("0.1 0 1 0 -1\n", "--flows: line 1: not 'arrival_s sender receiver bytes query' on 8 hosts"),
        ("0.1 0 1 10 0\n0.2 2 1 10 0\n", "--flows: line 2: query 0's responses arrive at 0.1 s"),
        ("0.1 0 1 10 1\n", "--flows: the queries must be numbered from 0 without a gap"),
    ],
)
def test_a_flows_file_that_does_not_fit_the_fabric_stops_the_harness_naming_the_line(text: str, message: str) -> None:
    with pytest.raises(SystemExit, match=f"^{message}$"):
        ns3_traffic.read_flows(text, 8)


def test_the_engines_flows_are_a_run_of_their_own_and_only_for_open_loop_traffic() -> None:
    s = benchmark()
    assert Ns3(flows="engine").fingerprint(s) != Ns3().fingerprint(s)
    assert any("runs the engine's flows" in n for n in Ns3(flows="engine").notes(s))
    reads = incast.Scenario(servers=4, blocks=2)
    with pytest.raises(Refused, match=r"^claim\.reference\.flows: \"own\" only: the engine's flows are open-loop"):
        Ns3(flows="engine").check(reads)


@pytest.mark.parametrize(("scenario", "duration"), [(benchmark, "500ms"), (fabric, "2ms")], ids=["star", "leaf_spine"])
def test_on_the_engines_flows_the_harness_ideal_is_the_engines(scenario: object, duration: str, tmp_path: Path) -> None:
    s = scenario(duration=duration, traffic={"query_rate": 0.0})  # type: ignore[operator]
    r = incast.run(s)
    args = ns3_traffic.parser().parse_args(traffic.options(s, tmp_path / "sizes.cdf"))
    t = r.fct_table
    flows = list(zip(t.src, t.dst, t.size_bytes, strict=True))
    ideal = ns3_ideal.ideals(flows, ns3_traffic.path(args), ns3_traffic.stack(args, args.mss))
    assert len(flows) > 10
    assert ideal == pytest.approx(list(t.ideal_s), rel=1e-9)


def test_a_change_to_the_harness_source_makes_its_recorded_runs_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = fabric()
    before = Ns3(flows="engine").fingerprint(s)
    assert Ns3(flows="engine").fingerprint(s) == before
    script, *beside = ns3_options.SOURCES["traffic"]
    changed = tmp_path / script.name
    changed.write_text(script.read_text(encoding="utf-8") + "# one more line\n", encoding="utf-8")
    monkeypatch.setitem(ns3_options.SOURCES, "traffic", (changed, *beside))
    assert Ns3(flows="engine").fingerprint(s) != before
