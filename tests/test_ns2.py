"""The ns-2.35 reference harness and ``incast validate --against ns2``."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Hashable, Sequence
from datetime import datetime, timezone
from pathlib import Path

import pytest
from test_pcap import read_pcap

import incast
from incast.cli import main
from incast.presets import with_preset
from incast.reference import ns2
from incast.reference.base import Refused

NS2 = ns2.Ns2()

# Runs ns-2 wherever it is installed; CI installs it, so there a missing ns fails.
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
needs_ns = pytest.mark.skipif(
    shutil.which("ns") is None and not os.environ.get("CI"), reason="ns-2 (apt-get install -y ns2) is not installed"
)


def scenario(**fields: object) -> incast.Scenario:
    return incast.Scenario(**with_preset("ns2", {"servers": 4, "blocks": 3, **fields}))


def test_script_carries_each_setting_as_ns2_names_it() -> None:
    s = scenario(switch={"buffer": "64pkt"}, tcp={"rcv_wnd": "64000B", "delayed_ack": "40ms", "recovery": "sack"})
    p = ns2.parameters(s)
    assert (p["agent"], p["sink"]) == ("Sack1", "TCPSink/Sack1/DelAck")
    assert (p["queue"], p["window"], p["init_cwnd"]) == ("64", "64", "2")
    assert (float(p["rto_min"]), float(p["tick"]), float(p["delayed_ack"])) == (0.2, 0.01, 0.04)
    assert p["segments"] == "263", "256 KiB in whole 1000-byte segments"
    # ns-2 adds 40 header bytes to packetSize_; a packet is as long as the engine's frame on the wire
    # (1000 + 40 + 18 of Ethernet header and FCS + 20 of preamble and gap), an ACK as its smallest frame.
    assert (p["packet"], p["wire"], p["ack"], p["rate"]) == ("1038", "1078", "84", "1000000000")
    # With timestamps the engine's segment carries 12 option bytes out of its MSS, its ACK 12 more;
    # ns-2 counts 10 more header bytes on data only.
    ts = ns2.parameters(scenario(tcp={"timestamps": True}))
    assert (ts["packet"], ts["wire"], ts["ack"]) == ("1028", "1078", "90")
    # The engine's 100 us RTT: 50 ns of cable per link, the rest in the hosts, charged where a frame arrives.
    assert (float(p["up"]), float(p["down"])) == (50e-9, 49.95e-6)
    assert (p["skew"], ns2.parameters(scenario(link={"skew": "2ps"}))["skew"]) == ("0.0", "2e-12")
    text = ns2.script(s)
    assert text.splitlines()[1].startswith("set P(") and "Agent/TCP/$P(agent)" in text


def test_ns2s_best_goodput_is_the_engines_on_the_same_wire() -> None:
    """ns-2's packets take the link as long as the engine's frames, so its utilization has the same denominator."""
    for timestamps in (False, True):
        s = scenario(blocks=1, tcp={"timestamps": timestamps})
        assert ns2.Ns2Run(s, [], 0, 0, 0, 0).best_goodput_mbps == incast.run(s).best_goodput_mbps


def test_equal_cables_are_noted_as_ties_each_simulator_breaks_its_own_way() -> None:
    def tied(**fields: object) -> bool:
        return any(n.startswith("link.skew: every server's cable is as long") for n in NS2.notes(scenario(**fields)))

    assert tied() and not tied(link={"skew": "1ps"}) and not tied(servers=1)
    # Random turnarounds part the servers only until the port's departures clock them again.
    assert tied(workload={"server_jitter": "10us"})


def test_a_byte_buffer_becomes_whole_packets_with_a_note() -> None:
    s = scenario(switch={"buffer": "32KiB"})
    assert ns2.parameters(s)["queue"] == str(32768 // 1058)
    assert any(n.startswith("switch.buffer: 32768 bytes become 30 packets") for n in NS2.notes(s))


def noted(start: str, **tcp: object) -> bool:
    """True when ns-2 on the ns2 preset with these TCP settings gets a note beginning with ``start``."""
    return any(n.startswith(start) for n in NS2.notes(scenario(tcp=tcp)))


def test_newrenos_partial_ack_window_is_noted_unless_the_scenario_runs_ns2s() -> None:
    """ns-2's NewReno takes a partial ACK's excess deflation out of its exit window; the ns2 preset does too."""
    assert not noted("tcp.partial_ack_window: ", recovery="newreno")
    assert noted("tcp.partial_ack_window: ", recovery="newreno", partial_ack_window="deflate")
    assert not noted("tcp.partial_ack_window: ", recovery="sack", partial_ack_window="deflate")


def test_sack_recovery_is_noted_unless_the_scenario_runs_sack1s() -> None:
    """ns-2's Sack1 recovers by its own pipe_ estimate; the ns2 preset runs it, RFC 6675 is noted."""
    assert not noted("tcp.sack_recovery: ", recovery="sack")
    assert noted("tcp.sack_recovery: ", recovery="sack", sack_recovery="rfc6675")


def test_only_the_servers_timeouts_are_compared_with_ns2s_agents() -> None:
    """ns-2's request is a delay; the engine's client times out when a whole first response window is lost."""
    r = incast.run(scenario(servers=32, switch={"buffer": "32pkt"}, blocks=5))
    client = int((r.timeouts_table["side"] == "client").sum())
    assert client > 0, "a request's acknowledgment rides on the response"
    timeouts, note = ns2.response_timeouts(r)
    assert timeouts == r.timeouts - client
    assert note is not None
    assert note.startswith(f"timeouts at 32 servers: the simulator's servers' ({timeouts:,}) only; ")
    untabled = incast.run(scenario(servers=32, switch={"buffer": "32pkt"}, blocks=5, stats={"timeouts": False}))
    assert ns2.response_timeouts(untabled) == (r.timeouts, None), "no table: the total, as before"


def test_both_sides_run_the_whole_segments_ns2_sends() -> None:
    """A 256 KiB SRU is 263 whole 1000-byte segments in ns-2; the simulator runs the same 263,000 bytes."""
    s, note = ns2.whole_segments(scenario())
    assert int(s.workload.sru) == 263_000 and ns2.parameters(s)["segments"] == "263"
    assert note == (
        "workload.sru: both run 263,000 bytes (263 whole 1000-byte segments per server) in place of 262,144, "
        "as ns-2's agents send whole packets"
    )
    assert ns2.whole_segments(s) == (s, None)
    blocked, note = ns2.whole_segments(scenario(workload={"block": "1MiB"}))
    assert int(blocked.workload.block) == 4 * 263_000 and note is not None and note.startswith("workload.block: ")


def test_renos_recover_guard_is_noted_unless_the_scenario_runs_it() -> None:
    """ns-2's Reno keeps NewReno's recover_ guard (bug_fix_); the ns2 preset sets it."""
    assert noted("tcp.reno_recover_guard: ", recovery="reno", reno_recover_guard=False)
    assert not noted("tcp.reno_recover_guard: ", recovery="reno")
    assert not noted("tcp.reno_recover_guard: ", recovery="newreno", reno_recover_guard=False)


def test_renos_exit_at_the_half_window_is_noted_unless_the_scenario_runs_it() -> None:
    """ns-2's Reno leaves recovery at the unrounded halfwin; the ns2 preset does too."""
    note = "Agent/TCP/Reno leaves recovery"
    assert not noted(note, recovery="reno")
    assert noted(note, recovery="reno", recovery_exit="flight")
    assert noted(note, recovery="reno", ssthresh_rule="rfc5681")
    assert not noted(note, recovery="newreno", recovery_exit="flight")


def test_slow_start_off_runs_as_limited_slow_start_that_adds_a_segment_per_rtt() -> None:
    """FAST08 §5.1.3's TCP without slow start: ns-2's agents run RFC 3742's limited slow start with
    max_ssthresh_ 2 (one segment per RTT above 2); a scenario with slow start gets the same Tcl as before."""
    off = ns2.script(scenario(tcp={"slow_start": False}))
    assert "Agent/TCP set max_ssthresh_ 2" in off.splitlines()
    assert "max_ssthresh_" not in ns2.script(scenario())
    assert any(
        n.startswith("tcp.slow_start: off in ns-2 as limited slow start")
        for n in NS2.notes(scenario(tcp={"slow_start": False}))
    )


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"topology": {"kind": "tree", "edge_switches": 2}}, 'topology.kind: "star" only: one switch is built'),
        ({"tcp": {"cc": "cubic"}}, "tcp.cc: reno: the Reno, Newreno and Sack1 agents grow the window by RFC 5681"),
        ({"background": {"tcp_flows": 2}}, "background.tcp_flows: 0, or flows into the client's port"),
        ({"tcp": {"delayed_ack": "linux"}}, "tcp.delayed_ack:"),
        ({"switch": {"pause": True}}, "switch.pause: no Ethernet flow control"),
        ({"tcp": {"rcv_window": "linux"}}, 'tcp.rcv_window: "fixed": the agents\' window_ never grows'),
        ({"link": {"host_jitter": "30us"}}, "link.host_jitter: 0 only: the harness's hosts answer in a fixed time"),
        (
            {"background": {"udp_rate": "100Mbps", "udp_priority": 1}},
            "background.udp_priority: 0 only: each port is one drop-tail FIFO",
        ),
    ],
)
def test_what_ns2_cannot_express_is_refused_naming_the_setting(fields: dict[str, object], message: str) -> None:
    s = scenario(**fields)
    assert NS2.refusals(s)[0].setting == message.split(":")[0]
    with pytest.raises(Refused, match="^" + message.replace("(", r"\(")) as e:
        ns2.script(s)
    assert str(e.value).endswith(" (ns-2.35)") and "\n" not in str(e.value)


def test_the_ns2_preset_runs_in_ns2_with_no_refusal() -> None:
    assert NS2.refusals(scenario()) == []


def test_cli_refusal_is_one_line_with_status_2(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["validate", "--against", "ns2", "--servers", "4", "--blocks", "2", "--tcp", "cubic"])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    why = "reno: the Reno, Newreno and Sack1 agents grow the window by RFC 5681"
    assert err == f"error: tcp.cc: {why} (ns-2.35)\n"


@needs_ns
def test_ns2_runs_the_blocks_and_delivers_every_segment() -> None:
    s = scenario(workload={"sru": "64KiB"}, switch={"buffer": "64pkt"}, tcp={"rcv_wnd": "16000B"})
    r = ns2.run(s)
    assert r.blocks == 3
    assert r.bytes_delivered == 3 * 4 * 66 * 1000
    # Four servers' 66 segments leave one 1 Gbps port: at least 264 frames of
    # 1078 bytes of link time per block; four 16-segment windows fit a 64-packet port.
    assert min(r.block_time_ms) > 264 * 1078 * 8 / 1e9 * 1e3
    assert r.goodput_mbps < 1000 and (r.drops, r.timeouts) == (0, 0)


def test_gips_window_reset_is_set_at_each_stripe_units_head() -> None:
    """GIP section V-C without its copies: ns-2 sets cwnd_ before each advanceby; without GIP it does not."""
    gip = ns2.script(scenario(tcp={"gip": "333", "gip_copies": 0, "gip_head_cwnd": 3}))
    assert "set P(gip_head_cwnd) {3}" in gip
    assert ns2.parameters(scenario())["gip_head_cwnd"] == "0"


def test_a_background_flow_into_the_clients_port_is_added_before_the_run_and_nothing_else_changes() -> None:
    """GIP section VII-B's long-term flow: its text goes in only when the scenario has one."""
    plain = ns2.script(scenario())
    assert "P(background)" not in plain and plain.endswith("$ns run\n")
    flow = ns2.script(scenario(background={"tcp_flows": 1, "tcp_to_client": True}))
    assert "set P(background) {1}" in flow and flow.endswith("$ns run\n")
    assert flow.replace("set P(background) {1}\n", "").startswith(plain.removesuffix("$ns run\n"))
    assert any(
        n.startswith("background.tcp_flows: 1 FTP source")
        for n in NS2.notes(scenario(background={"tcp_flows": 1, "tcp_to_client": True}))
    )


def test_the_udp_source_is_added_before_the_run_and_nothing_else_changes() -> None:
    """GIP section VI-C's 100 Mbps of UDP: a CBR source of full frames, its text in only when the scenario has it."""
    plain = ns2.script(scenario())
    assert "Agent/UDP" not in plain
    udp = ns2.script(scenario(background={"udp_rate": "100Mbps"}))
    params = "set P(udp_rate) {100000000}\nset P(udp_wire) {1538}\nset P(udp_flow) {4}\n"
    assert params in udp and "Application/Traffic/CBR" in udp and udp.endswith("$ns run\n")
    assert udp.replace(params, "").startswith(plain.removesuffix("$ns run\n"))
    assert any(
        n.startswith(
            "background.udp_rate: a CBR source over UDP from a host of its own on the switch, one "
            "1538-byte datagram every 123.04 us"
        )
        for n in NS2.notes(scenario(background={"udp_rate": "100Mbps"}))
    )


def test_gips_copies_are_added_before_the_run_and_nothing_else_changes() -> None:
    """GIP sections IV-B and V-B: the copies' text goes in only when the scenario sends copies."""
    reset = ns2.script(scenario(tcp={"gip": "333", "gip_copies": 0}))
    assert "P(gip_pattern)" not in reset and "gip_chan" not in reset
    copies = ns2.script(scenario(tcp={"gip": "123"}))
    assert "set P(gip_pattern) {123}" in copies and "set P(gip_copies) {3}" in copies
    assert "chan create write gip_chan" in copies and copies.endswith("$ns run\n")
    head = copies.replace("set P(gip_pattern) {123}\nset P(gip_copies) {3}\n", "")
    assert head.startswith(reset.removesuffix("$ns run\n"))


@needs_ns
@pytest.mark.parametrize("pattern", ["333", "123"])
def test_ns2_resends_three_packets_at_each_stripe_units_tail(pattern: str) -> None:
    """Without a drop, GIP's copies are retransmissions ns-2 counts: at least three per server and unit
    (the duplicate ACKs they draw may add a fast retransmit), none without them; every block still ends
    with exactly its segments delivered."""
    base = {"workload": {"sru": "64KiB"}, "switch": {"buffer": "64pkt"}, "blocks": 4}
    reset = ns2.run(scenario(**base, tcp={"rcv_wnd": "16000B", "gip": pattern, "gip_copies": 0}))
    gip = ns2.run(scenario(**base, tcp={"rcv_wnd": "16000B", "gip": pattern}))
    assert (reset.drops, reset.retransmitted_packets, gip.drops) == (0, 0, 0)
    assert gip.retransmitted_packets >= 3 * 4 * 4
    assert gip.blocks == 4 and gip.bytes_delivered == 4 * 4 * 66 * 1000


def test_a_request_limit_is_added_before_the_run_and_nothing_else_changes() -> None:
    """workload.max_inflight: the held requests' text goes in only when the scenario limits them."""
    plain = ns2.script(scenario())
    assert "P(max_inflight)" not in plain and "rename next_block" not in plain
    limited = ns2.script(scenario(workload={"max_inflight": 2}))
    assert "set P(max_inflight) {2}" in limited and limited.endswith("$ns run\n")
    assert limited.replace("set P(max_inflight) {2}\n", "").startswith(plain.removesuffix("$ns run\n"))


def test_a_request_limit_with_delayed_acks_is_refused() -> None:
    """With delayed ACKs the sinks are polled: no agent's "done" tells when a held request may go."""
    s = scenario(workload={"max_inflight": 2}, tcp={"delayed_ack": "40ms"})
    assert [r.setting for r in NS2.refusals(s)] == ["workload.max_inflight"]


@needs_ns
@pytest.mark.parametrize("limit", [1, 2])
def test_a_client_asking_few_servers_at_once_blocks_as_long_in_ns2_as_in_the_engine(limit: int) -> None:
    """Four servers asked one or two at a time through a port that never fills: each held request leaves as a
    response completes, so ns-2's blocks take the engine's time; one at a time, a block is four one-server blocks
    back to back."""
    base = {"workload": {"sru": "64KiB"}, "switch": {"buffer": "64pkt"}, "tcp": {"rcv_wnd": "16000B"}}
    s = scenario(**{**base, "workload": {"sru": "64KiB", "max_inflight": limit}})
    r = ns2.run(s)
    assert r.blocks == 3 and r.drops == 0
    assert r.block_time_ms == pytest.approx(list(incast.run(s).blocks_table["time_ms"]), rel=0.01)
    one = ns2.run(scenario(**base, servers=1))
    if limit == 1:
        assert r.block_time_ms[1:] == pytest.approx([4 * t for t in one.block_time_ms[1:]])


@needs_ns
def test_a_background_flow_shares_the_clients_port_with_the_reads() -> None:
    """The reads take longer beside a flow that keeps the client's port busy, and every block still ends."""
    base = {"workload": {"sru": "64KiB"}, "switch": {"buffer": "64pkt"}, "tcp": {"rcv_wnd": "16000B"}}
    alone = ns2.run(scenario(**base))
    shared = ns2.run(scenario(**base, background={"tcp_flows": 1, "tcp_to_client": True}))
    assert shared.blocks == alone.blocks == 3
    assert min(shared.block_time_ms) > max(alone.block_time_ms)


@needs_ns
def test_the_udp_source_takes_its_rate_of_the_clients_port() -> None:
    """100 Mbps of UDP leave the reads at most 90 % of the link: alone a block's frames take under 0.9 of
    its time, beside the UDP source each block is slower than that, and every block still ends."""
    base = {"workload": {"sru": "64KiB"}, "switch": {"buffer": "64pkt"}, "tcp": {"rcv_wnd": "16000B"}}
    alone = ns2.run(scenario(**base))
    shared = ns2.run(scenario(**base, background={"udp_rate": "100Mbps"}))
    assert shared.blocks == alone.blocks == 3 and shared.bytes_delivered == alone.bytes_delivered
    frames_ms = 4 * 66 * 1078 * 8 / 1e9 * 1e3
    assert max(alone.block_time_ms) < frames_ms / 0.9 < min(shared.block_time_ms)


@needs_ns
def test_ns2_restarts_every_stripe_unit_from_gips_window() -> None:
    """Without GIP a block starts from the window the last one grew to; with it, from 2 segments again."""
    base = {"workload": {"sru": "64KiB"}, "switch": {"buffer": "64pkt"}, "blocks": 4}
    plain = ns2.run(scenario(**base, tcp={"rcv_wnd": "16000B"}))
    gip = ns2.run(scenario(**base, tcp={"rcv_wnd": "16000B", "gip": "333", "gip_copies": 0}))
    assert (plain.drops, gip.drops) == (0, 0)
    assert plain.block_time_ms[0] == pytest.approx(gip.block_time_ms[0]), "the first block starts at IW 2 in both"
    assert min(gip.block_time_ms[1:]) > max(plain.block_time_ms[1:]), "slow start again from 2 segments"


@needs_ns
def test_ns2_drops_and_retransmits_when_the_port_overflows() -> None:
    r = ns2.run(scenario(servers=16, workload={"sru": "64KiB"}, switch={"buffer": "8pkt"}))
    assert r.drops > 0 and r.retransmitted_packets > 0 and r.blocks == 3


@needs_ns
def test_validate_against_ns2_prints_both_side_by_side_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["validate", "--against", "ns2", "--servers", "4", "--blocks", "2", "--sru", "32KiB", "--json"])
    stdout, stderr = capsys.readouterr()
    assert code == 0, stderr
    assert stderr.startswith("note: ns2: ns-2 has no Ethernet framing")
    out = json.loads(stdout)
    assert (out["source"], out["against"], out["preset"]) == ("validate", "ns2", "ns2")
    assert set(out["figures"]["goodput_mbps"]) == {"simulator", "ns2", "ratio"}
    assert out["ns2"]["blocks"] == out["simulator"]["blocks"] == 2


def classes_of(tmp_path: Path, queue: list[str], variables: list[str]) -> tuple[dict[str, int], dict[str, int]]:
    """ns-2's classes of the timeouts in a scripted queue trace and variable trace (4 segments a block)."""
    (tmp_path / "q.tr").write_text("".join(line + "\n" for line in queue))
    (tmp_path / "v.tr").write_text("".join(line + "\n" for line in variables))
    s = scenario(workload={"sru": "4000B"})
    return ns2.timeout_classes(s, tmp_path / "q.tr", tmp_path / "v.tr")


def sent(t: float, flow: int, seqno: int) -> str:
    """A queue-trace line: the client's port took data segment ``seqno`` of ``flow`` at ``t``."""
    return f"+ {t} 0 1 tcp 1040 ------- {flow} {flow + 2}.0 1.0 {seqno} 7"


def var(t: float, flow: int, name: str, value: int) -> str:
    """A variable-trace line of server ``flow``'s agent."""
    return f"{t:.5f}  {flow + 2}  0  1  {flow}  {name} {value}"


def test_ns2_timeouts_are_classed_by_the_engines_rules(tmp_path: Path) -> None:
    # Block 1 is seqnos 2-5. Flow 0 resent its head (3) by fast retransmit after three duplicate
    # ACKs, and the copy was lost too: a lost retransmission with DART 3. Flow 1 sent the whole
    # block and lost its last segment: no duplicate ACK can come (last packet loss, LAck-TO).
    # Flow 2 sent two segments of the block and lost both: no feedback (FLoss-TO).
    queue = [sent(0.001, 0, 3), sent(0.002, 0, 3), sent(0.001, 1, 5), sent(0.001, 2, 2)]
    variables = [var(0.001, f, "maxseq_", m) for f, m in ((0, 5), (1, 5), (2, 3))]
    variables += [var(0.001, f, "ack_", h) for f, h in ((0, 2), (1, 4), (2, 1))]
    variables += [var(0.0015, 0, "dupacks_", d) for d in (1, 2, 3)]
    variables += [var(0.2, 0, "dupacks_", 0), var(0.2, 0, "nrexmit_", 1)]
    variables += [var(0.2, 1, "nrexmit_", 1), var(0.2, 2, "nrexmit_", 1)]
    fast08, gip = classes_of(tmp_path, queue, variables)
    assert fast08 == {
        "full_window_loss": 1,
        "last_packet_loss": 1,
        "lost_retransmit": 1,
        "other": 0,
        "lost_retransmit_dart_ge_thresh": 1,
        "lost_retransmit_dart_lt_thresh": 0,
    }
    assert gip == {"floss": 1, "lack": 1, "other": 1}


def client_port_order(pcap: Path) -> list[tuple[str, int]]:
    """(sending server, segment number) of every data segment the client received, in order."""
    first: dict[str, int] = {}
    out = []
    for p in read_pcap(pcap):
        if p.sport == 5001 and p.payload > 0:  # a server's data (the requests go the other way)
            first.setdefault(p.src, p.seq)
            out.append((p.src, (p.seq - first[p.src]) // p.payload))
    return out


def by_first_appearance(order: Sequence[tuple[Hashable, int]]) -> list[tuple[int, int]]:
    """Servers renumbered by when they first appear: the two simulators shuffle requests differently."""
    seen: dict[Hashable, int] = {}
    return [(seen.setdefault(server, len(seen)), segment) for server, segment in order]


@needs_ns
def test_ns2_serves_a_block_through_the_clients_port_in_the_simulators_order(tmp_path: Path) -> None:
    # Packets and links mirror the engine's wire, and both take simultaneous arrivals in the order
    # their transmissions started: 8 servers' slow starts into a 64-packet port leave it in the same
    # order for the first 400 data packets (with 964.75 Mbps links of RTT/4 each, the 20th differed).
    theirs, ours = port_orders(scenario(servers=8, blocks=1, switch={"buffer": "64pkt"}), tmp_path)
    assert by_first_appearance(theirs)[:400] == by_first_appearance(ours)[:400]


def port_orders(s: incast.Scenario, out: Path) -> tuple[list[tuple[int, int]], list[tuple[str, int]]]:
    """(server, segment) of every data segment through the client's port in ns-2, and in the engine."""
    s, _ = ns2.whole_segments(s)
    ns2.run(s, trace=out / "q.tr")
    theirs = []
    for line in (out / "q.tr").read_text().splitlines():
        w = line.split()
        if w[0] == "-" and int(w[5]) > 100 and int(w[10]) >= 2:  # data of block 1 (seqnos 0 and 1: handshake)
            theirs.append((int(w[7]), int(w[10]) - 2))
    incast.run(s.with_overrides({"trace.pcap": True})).write_pcap(out, start=EPOCH)
    return theirs, client_port_order(out / "client.pcap")


@needs_ns
def test_cables_a_picosecond_apart_leave_no_ties_and_ns2_agrees_packet_for_packet(tmp_path: Path) -> None:
    # With equal cables 8 servers' frames reach the port at the same picosecond and each simulator's
    # rule for such ties decides the order; with server i's cable i picoseconds longer (link.skew) no
    # two arrive together, and with the requests in server order both send the whole block, 2,112
    # data packets, through the port in one order, whatever rule the engine would apply to ties.
    def parted(skew: str, arrival_order: str) -> int | None:
        link = {"skew": skew, "arrival_order": arrival_order}
        s = scenario(servers=8, blocks=1, switch={"buffer": "64pkt"}, link=link, workload={"order": "fixed"})
        theirs, ours = port_orders(s, tmp_path)
        ours_by_server = [(int(ip.rsplit(".", 1)[1]) - 2, segment) for ip, segment in ours]  # server i is 10.0.0.(i+2)
        assert len(theirs) == len(ours) > 2000
        return next((i for i, (a, b) in enumerate(zip(theirs, ours_by_server, strict=True)) if a != b), None)

    assert parted("1ps", "queued") is None and parted("1ps", "wire") is None
    first = parted("0", "queued")
    assert first is not None and first < 100


@needs_ns
def test_ns2_classes_every_timeout_of_its_servers() -> None:
    r = ns2.run(scenario(servers=32, tcp={"recovery": "reno"}, switch={"buffer": "32pkt"}), classes=True)
    assert r.timeouts > 0 and r.timeout_classes is not None and r.gip_timeout_classes is not None
    c = r.timeout_classes
    # Go-back-N resends after synchronized timeouts are lost here too: the class needs each agent's
    # highest ACK (Tcl's ack_), whose trace tells the head of every timeout.
    assert c["lost_retransmit"] > 0
    assert c["full_window_loss"] + c["last_packet_loss"] + c["lost_retransmit"] + c["other"] == r.timeouts
    assert c["lost_retransmit_dart_ge_thresh"] + c["lost_retransmit_dart_lt_thresh"] == c["lost_retransmit"]
    assert sum(r.gip_timeout_classes.values()) == r.timeouts


def test_classes_are_refused_against_the_testbed_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--servers", "4", "--classes"]) == 2
    assert capsys.readouterr().err == (
        "error: --classes: only with --against ns2 (the kernel does not say why a timer expired)\n"
    )


@needs_ns
def test_validate_against_ns2_compares_timeouts_by_class(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["validate", "--against", "ns2", "--servers", "16", "--blocks", "2", "--buffer", "32pkt"]
    args += ["--recovery", "reno"]
    assert main([*args, "--classes", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    classes = [k for k in out["figures"] if k.startswith("timeout_classes.")]
    names = ("full_window_loss", "lost_retransmit", "last_packet_loss", "other")
    assert classes == [f"timeout_classes.{c}" for c in names]
    assert sum(out["figures"][k]["ns2"] for k in classes) == out["figures"]["timeouts"]["ns2"] > 0
    assert sum(out["figures"][k]["simulator"] for k in classes) == out["figures"]["timeouts"]["simulator"]
