"""A scenario with open-loop ``[traffic]`` as the options of the ns-3 harness ``ns3_traffic.py``.

:class:`~incast.reference.ns3_options.Ns3` runs ``ns3_traffic.py`` in place of
``ns3.py`` for a scenario with flows or queries (:func:`is_traffic`). What
maps: the fabric (a star of ``servers`` + ``workload.clients`` hosts, or a
``leaf_spine``'s leaves, spines, hosts per leaf, trunks and ``ecmp``), the
link rate and RTT, ``traffic.load``, ``sizes``, ``query_rate``,
``query_fanin``, ``query_response``, ``fct_end`` and ``duration``, each
switch's buffer (``switch.buffer`` per port, or ``shared:ALPHA``'s one
memory a switch with dynamic thresholds), the marking threshold
(``switch.ecn_threshold``, as a RED step at K), ``tcp.cc`` (TcpLinuxReno, or
TcpDctcp with Linux's two-segment ssthresh floor), RTO_min, SACK, PRR or
classic recovery, delayed ACK's timeout, timestamps, limited transmit, the
initial window, the segment size and the receive window as both socket
buffers. What the harness cannot
express is refused (:func:`rules`); what it runs differently is noted
(:func:`notes`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from incast._core import flow_sizes_cdf
from incast.reference.base import Figure, Rule, one_star
from incast.scenario import Scenario
from incast.traffic import PUBLISHED
from incast.units import format_duration, format_rate

if TYPE_CHECKING:
    from incast.result import Result

__all__ = ["FIGURES", "SCRIPT", "flows_text", "is_traffic", "notes", "options", "rules", "sizes_text"]

#: The harness, run as a script.
SCRIPT = Path(__file__).with_name("ns3_traffic.py")
#: Figures of open-loop traffic a comparison shows.
FIGURES = (
    Figure("open flows", "open_flows"),
    Figure("open flows unfinished", "open_flows_unfinished"),
    Figure("queries", "queries"),
    Figure("query p50 ms", "query_time_ms", "p50"),
    Figure("query p99 ms", "query_time_ms", "p99"),
    Figure("queries timed out", "queries_timed_out"),
    Figure("FCT 100KB-1MB p95 ms", "fct_ms_100kb_1mb", "p95"),
    Figure("slowdown <10KB p95", "slowdown_under_10kb", "p95"),
    Figure("slowdown 1-10MB p95", "slowdown_1mb_10mb", "p95"),
)
#: The fabrics the harness builds (:mod:`incast.reference.ns3_fabric`).
FABRICS = ("star", "leaf_spine")


def is_traffic(s: Scenario) -> bool:
    """Does ``s`` run open-loop flows or queries (the traffic harness's scenarios)?"""
    return s.traffic.load is not None or bool(s.traffic.query_rate)


def _alpha(s: Scenario) -> str | None:
    """α of a ``shared:ALPHA`` buffer model, as written; None for ``static``."""
    model = str(s.switch.buffer_model)
    return model.split(":", 1)[1] if model.startswith("shared:") else None


def rules(s: Scenario) -> list[Rule]:
    """What the traffic harness restricts, beyond :func:`~incast.reference.base.one_star`."""
    tcp, traffic, model = s.tcp, s.traffic, str(s.switch.buffer_model)
    kind = s.topology.kind
    return [
        Rule("topology.kind", kind not in FABRICS, f'"star" or "leaf_spine": what the harness builds, got {kind!r}'),
        *(r for r in one_star(s) if r.setting != "topology.kind"),
        Rule("workload.kind", s.workload.kind != "none", '"none": the harness runs no synchronized reads beside it'),
        Rule("traffic.pattern", traffic.pattern != "all_to_all", '"all_to_all" only: any host to any other'),
        Rule("traffic.drain", traffic.drain is not None, '"off" only: the run ends with the arrivals'),
        Rule("switch.buffer", isinstance(s.switch.buffer, str), "bytes: the harness's ports count bytes"),
        Rule("switch.buffer_model", model != "static" and _alpha(s) is None, '"static" or "shared:ALPHA"'),
        Rule("switch.admission", s.switch.admission != "fits", '"fits": a port takes a packet that fits'),
        Rule(
            "switch.ecn_threshold",
            s.switch.ecn_threshold is not None and tcp.cc != "dctcp",
            'with tcp.cc = "dctcp" only: ns-3\'s RED drops at K what is not ECN-capable',
        ),
        Rule("tcp.cc", tcp.cc not in ("reno", "dctcp"), '"reno" (TcpLinuxReno) or "dctcp" (TcpDctcp)'),
        Rule("tcp.recovery", tcp.recovery == "reno", '"newreno" or "sack": ns-3 recovers as NewReno'),
        Rule("tcp.delayed_ack", isinstance(tcp.delayed_ack, str), 'a timeout or "off": ns-3 has DelAckTimeout'),
        Rule("tcp.slow_start", not tcp.slow_start, "slow start is always on"),
        Rule("tcp.dupack_threshold", tcp.dupack_threshold != 3, "3 only: ns-3's ReTxThreshold is kept"),
        Rule("tcp.gip", tcp.gip != "off", '"off" only: no GIP in ns-3'),
        Rule("tcp.rcv_window", tcp.rcv_window != "fixed", '"fixed": the harness\'s socket buffers do not grow'),
        Rule("tcp.spurious_rto", tcp.spurious_rto != "off", '"off" only: ns-3 has no spurious-timeout detection'),
        Rule("tcp.pacing", bool(tcp.pacing), "off only: ns-3's TcpSocketBase sends as the window allows"),
        Rule("tcp.rack_tlp", bool(tcp.rack_tlp), "off only: the harness runs ns-3 without RACK"),
    ]


def sizes_text(s: Scenario) -> str:
    """The flow-size CDF's text: a shipped distribution's file, as the engine holds it, or the scenario's own."""
    sizes = str(s.traffic.sizes)
    return flow_sizes_cdf(sizes) if sizes in PUBLISHED else sizes


def _threshold(s: Scenario) -> list[str]:
    k = s.switch.ecn_threshold
    if k is None:
        return []
    text = str(k)
    return ["--ecn-k", text.removesuffix("pkt") if text.endswith("pkt") else f"{int(k)}B"]


def _fabric(s: Scenario) -> list[str]:
    """The fabric's options: the star's hosts, or the leaf-spine's shape and trunks (``"link"``: the host
    links' rate and cable, ``net::fabric``)."""
    t = s.topology
    if t.kind == "star":
        return ["--hosts", str(s.servers + s.workload.clients)]
    trunk = int(s.link.rate if t.trunk_rate is None else t.trunk_rate)
    delay = min(float(s.link.propagation), float(s.link.rtt) / 4) if t.trunk_delay is None else float(t.trunk_delay)
    return [
        *("--leaves", str(t.leaves), "--spines", str(t.spines), "--hosts-per-leaf", str(t.hosts_per_leaf)),
        *("--trunk", format_rate(trunk), "--trunk-delay", format_duration(delay), "--ecmp", str(t.ecmp)),
    ]


def flows_text(result: Result) -> str:
    """The flows of an engine run as ``ns3_traffic.py --flows`` reads them: a line a flow, by arrival."""
    t = result.fct_table.sort_values("start_s", kind="stable")
    lines = (f"{x.start_s!r} {x.src} {x.dst} {x.size_bytes} {x.query}\n" for x in t.itertuples())
    return "# the engine's flows: arrival_s sender receiver bytes query\n" + "".join(lines)


def options(s: Scenario, sizes: Path, flows: Path | None = None) -> list[str]:
    """The harness's command line for ``s`` (``--json`` apart), its CDF in the file ``sizes``, and the flows
    of the file ``flows`` in place of its own draws."""
    tcp, traffic = s.tcp, s.traffic
    alpha = _alpha(s)
    delayed = 0.0 if tcp.delayed_ack is None else float(tcp.delayed_ack)
    return [
        *_fabric(s),
        *("--duration", format_duration(s.duration)),
        *("--load", repr(traffic.load or 0.0), "--sizes", str(sizes)),
        *("--query-rate", repr(float(traffic.query_rate)), "--query-fanin", str(traffic.query_fanin)),
        *("--query-response", f"{int(traffic.query_response)}B", "--seed", str(s.seed)),
        *("--link", format_rate(int(s.link.rate)), "--rtt", format_duration(s.link.rtt)),
        *("--buffer", f"{int(s.switch.buffer)}B", *(("--shared-alpha", alpha) if alpha else ())),
        *_threshold(s),
        *("--cc", str(tcp.cc), "--rto-min", format_duration(tcp.rto_min), "--delayed-ack", format_duration(delayed)),
        "--sack" if tcp.recovery == "sack" else "--no-sack",
        *("--recovery", "prr" if tcp.prr else "classic"),
        "--timestamps" if tcp.timestamps else "--no-timestamps",
        "--limited-transmit" if tcp.limited_transmit else "--no-limited-transmit",
        *("--mss", str(int(tcp.mss) - (12 if tcp.timestamps else 0)), "--init-cwnd", str(tcp.init_cwnd)),
        *("--socket-buffer", f"{int(tcp.rcv_wnd)}B"),
        *(("--fct-end", "acked") if traffic.fct_end == "acked" else ()),
        *(("--flows", str(flows)) if flows is not None else ()),
    ]


def notes(s: Scenario, engine_flows: bool = False) -> list[str]:
    """What ns-3 runs differently from the engine on this traffic, one line each (``engine_flows``: it runs
    the engine's flows)."""
    tcp = s.tcp
    draws = (
        "ns-3 runs the engine's flows of the same scenario and seed (each flow's arrival, hosts and size)"
        if engine_flows
        else "ns-3 draws its own arrivals and sizes from the same distributions (Python's random, not the engine's)"
    )
    out = [
        draws,
        "each ns-3 flow opens its connection 10 ms before its arrival (a handshake the engine does not run)",
        "a port's limit and marking count the packets in ns-3's queue disc; one more waits in the device queue",
    ]
    if s.switch.ecn_threshold is not None:
        out.append("switch.ecn_threshold: ns-3 marks as RED with MinTh = MaxTh = K, Gentle false, QW 1")
    if tcp.cc == "dctcp":
        out.append("tcp.cc: ns-3's TcpDctcp with Linux's ssthresh floor of two segments (it has none of its own)")
    else:
        out.append("tcp.cc: ns-3 runs TcpLinuxReno, Linux's Reno growth (the parent of its TcpDctcp)")
    if tcp.clock_granularity:
        out.append("tcp.clock_granularity: ns-3 runs with ClockGranularity 0 and fires its timers on time")
    if tcp.restart_after_idle:
        out.append("tcp.restart_after_idle: ns-3 has none (each flow's connection is fresh, idle only before it)")
    if tcp.delayed_ack is not None:
        out.append("tcp.delayed_ack: ns-3 ACKs every second segment (DelAckCount 2), the engine past one MSS")
    out.append("slowdown: ns-3's ideal is the engine's formula on the harness's paths, with the engine's frames")
    if s.topology.kind == "leaf_spine":
        out += _leaf_spine_notes(s)
    return out


def _leaf_spine_notes(s: Scenario) -> list[str]:
    """What ns-3 runs differently on a leaf-spine."""
    out = ["topology: ns-3 counts time in nanoseconds, so each frame's serialization is rounded to one"]
    if s.topology.ecmp == "flow":
        out.append(
            "topology.ecmp: ns-3 3.44 spreads only per packet (RandomEcmpRouting); each leaf hashes ns-3's "
            "5-tuple (its addresses and ports) with the engine's mix and hash-threshold"
        )
    else:
        out.append("topology.ecmp: ns-3's RandomEcmpRouting draws every packet's uplink from its own stream")
    if float(s.link.rtt) > 4 * float(s.link.propagation):
        out.append("link.rtt: ns-3 puts each host's share of the RTT on its link (rtt / 4), not where it receives")
    return out
