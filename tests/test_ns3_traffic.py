"""ns-3's open-loop harness (``ns3_traffic.py``): what it refuses, the options it is given, the traffic it draws."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import incast
from incast.reference import ns3_options, ns3_traffic
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
        ({"workload": {"kind": "sync_read"}}, "workload.kind"),
        ({"traffic": {"pattern": "permutation"}}, "traffic.pattern"),
        ({"traffic": {"fct_end": "acked"}}, "traffic.fct_end"),
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
    out = ns3_traffic.figures(flows, [0.1], [0.002, 0.004, -1.0, 0.103, 0.115], [0, 0, 0, 1, 0], [0.115])
    assert (out["open_flows"], out["open_flows_unfinished"]) == (3, 1)
    assert out["fct_ms_under_10kb"]["p99"] == pytest.approx(2.0) and out["fct_ms_10kb_100kb"]["p50"] == pytest.approx(
        4.0
    )
    assert out["fct_ms_100kb_1mb"] == {"p50": None, "p95": None, "p99": None, "mean": None}
    assert out["query_time_ms"]["p99"] == pytest.approx(15.0)
    assert (out["queries_timed_out"], out["query_timeout_fraction"], out["responses_timed_out"]) == (1, 1.0, 1)
