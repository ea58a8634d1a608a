"""Invariants over random scenarios (Hypothesis): every run conserves packets,
never delivers more than it was asked for, is a pure function of its scenario
and seed, and never fails inside the engine.

Every generated scenario is valid (a refusal would also pass, so the
strategy keeps to valid settings). 200 scenarios run by default;
``pytest -m slow`` runs 4,000.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_pcap import ACK, read_pcap

import incast
from incast import Scenario, ScenarioError

#: Examples per property: a few hundred in the default run, more with INCAST_PROPERTY_EXAMPLES.
EXAMPLES = int(os.environ.get("INCAST_PROPERTY_EXAMPLES", "200"))

scenarios = st.fixed_dictionaries(
    {
        "servers": st.integers(1, 12),
        "blocks": st.integers(1, 3),
        "duration": st.sampled_from(["20ms", "50ms"]),
        "seed": st.integers(0, 2**32),
        "link": st.fixed_dictionaries(
            {
                "rate": st.sampled_from(["100Mbps", "1Gbps", "10Gbps"]),
                "loss": st.sampled_from([0.0, 0.0, 0.001]),
                "propagation": st.sampled_from(["50ns", "25us"]),
            }
        ),
        "switch": st.fixed_dictionaries({"buffer": st.sampled_from(["8KiB", "32KiB", "128KiB", "16pkt", "64pkt"])}),
        "tcp": st.fixed_dictionaries(
            {
                "cc": st.sampled_from(["reno", "cubic"]),
                "recovery": st.sampled_from(["reno", "newreno", "sack"]),
                "rto_min": st.sampled_from(["200us", "1ms", "200ms"]),
                "delayed_ack": st.sampled_from(["40ms", "off", "linux", "adaptive"]),
                "init_cwnd": st.integers(1, 10),
                "limited_transmit": st.booleans(),
                "timestamps": st.booleans(),
                "restart_after_idle": st.booleans(),
                "spurious_rto": st.sampled_from(["off", "frto"]),
                "rack_tlp": st.booleans(),
                "prr": st.booleans(),
                "prr_flavor": st.sampled_from(["rfc6937", "linux", "ns3"]),
                "cwnd_validation": st.sampled_from(["off", "linux"]),
                "idle_restart": st.sampled_from(["rfc5681", "linux"]),
                "rto_restart": st.sampled_from(["rfc6298", "head_retransmit"]),
                "cubic_hystart": st.booleans(),
                "sack_recovery": st.sampled_from(["rfc6675", "linux", "ns3"]),
                "ca_increase": st.sampled_from(["exact", "ns3"]),
            }
        ),
        "workload": st.fixed_dictionaries(
            {"sru": st.sampled_from(["1KiB", "32KiB", "256KiB"]), "server_jitter": st.sampled_from(["0", "10us"])}
        ),
    }
)

#: The port every server listens on (``stats::pcap``).
SERVER_PORT = 5001

pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.NonInteractiveExampleWarning")


def _run(data: dict[str, Any]) -> incast.Result | None:
    try:
        scenario = Scenario.parse(data)
    except ScenarioError:
        return None  # refused in one line: a valid outcome for a random scenario
    return incast.run(scenario)


def _comparable(r: incast.Result) -> dict[str, Any]:
    d = r.to_dict()
    for key in ("wall_s", "events_per_s"):
        d.pop(key)
    return d


def conserves_packets_and_delivers_no_more_than_asked(data: dict[str, Any]) -> None:
    r = _run(data)
    if r is None:
        return
    assert r.packets_sent == r.packets_delivered + r.drops + r.packets_in_flight
    block = r.scenario.workload.sru * r.scenario.servers
    assert r.blocks * block <= r.bytes_delivered <= (r.blocks + 1) * block
    assert 0 <= r.utilization <= 1


_quick = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_long = settings(max_examples=20 * EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
test_every_run_conserves_packets_and_delivers_no_more_than_asked = _quick(
    given(scenarios)(conserves_packets_and_delivers_no_more_than_asked)
)
test_every_run_conserves_packets_and_delivers_no_more_than_asked_many = pytest.mark.slow(
    _long(given(scenarios)(conserves_packets_and_delivers_no_more_than_asked))
)


@settings(max_examples=max(EXAMPLES // 4, 20), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios)
def test_a_run_is_a_pure_function_of_scenario_and_seed(data: dict[str, Any]) -> None:
    first = _run(data)
    if first is None:
        return
    assert _comparable(first) == _comparable(incast.run(Scenario.parse(data)))


def _without_what_sack1_lacks(tcp: dict[str, Any]) -> dict[str, Any]:
    """ns-2's Sack1 recovery is refused with PRR, RACK-TLP or lost-retransmit detection: draw it without them."""
    if tcp["sack_recovery"] == "ns2":
        return tcp | {"prr": False, "rack_tlp": False, "sack_lost_retransmit": False}
    return tcp


#: Scenarios whose every window fits the capture's 16-bit window field (no
#: window scaling is negotiated), over the mechanisms that choose what to send
#: next: SACK recovery with and without lost-retransmission detection, RACK-TLP
#: (whose probe may send new data beyond cwnd, never beyond the peer window),
#: PRR, cwnd validation, F-RTO, limited transmit, Linux's growing receive window, GIP, Rude TCP and
#: ns-2.35's recovery rules (limited transmit's resends, its partial-ACK deflation, Sack1's
#: recovery and its one timed segment among them).
windowed = st.fixed_dictionaries(
    {
        "servers": st.integers(1, 8),
        "blocks": st.integers(1, 3),
        "duration": st.just("30ms"),
        "seed": st.integers(0, 2**32),
        "link": st.fixed_dictionaries(
            {
                "loss": st.sampled_from([0.0, 0.0, 0.01]),
                "arrival_order": st.sampled_from(["queued", "wire", "ns2", "ns3"]),
            }
        ),
        "switch": st.fixed_dictionaries(
            {
                "buffer": st.sampled_from(["8KiB", "16pkt", "32KiB"]),
                "admission": st.sampled_from(["fits", "full_frame"]),
            }
        ),
        "tcp": st.fixed_dictionaries(
            {
                "cc": st.sampled_from(["reno", "cubic"]),
                "recovery": st.sampled_from(["reno", "newreno", "sack"]),
                "rto_min": st.sampled_from(["200us", "1ms"]),
                "delayed_ack": st.sampled_from(["off", "40ms"]),
                "init_cwnd": st.integers(1, 10),
                "rcv_wnd": st.sampled_from(["2KiB", "8KiB", "20000B", "64000B"]),
                "limited_transmit": st.booleans(),
                "limited_transmit_resends": st.booleans(),
                "rcv_window": st.sampled_from(["fixed", "linux"]),
                "rcv_buf_max": st.just("96KiB"),  # a Linux window then stays below 64 KiB
                "sack_lost_retransmit": st.booleans(),
                "rack_tlp": st.booleans(),
                "prr": st.booleans(),
                "prr_flavor": st.sampled_from(["rfc6937", "linux", "ns3"]),
                "cwnd_validation": st.sampled_from(["off", "linux"]),
                "spurious_rto": st.sampled_from(["off", "frto"]),
                "gip": st.sampled_from(["off", "333", "123"]),
                "rude_allowed": st.booleans(),
                # ns-2.35's rules (the ns2 preset's switches)
                "recovery_exit": st.sampled_from(["flight", "ssthresh"]),
                "recovery_burst": st.sampled_from(["off", 2]),
                "ssthresh_rule": st.sampled_from(["rfc5681", "ns2"]),
                "idle_restart": st.sampled_from(["rfc5681", "linux", "ns2"]),
                "rto_restart": st.sampled_from(["rfc6298", "fast_retransmit", "head_retransmit"]),
                "cubic_hystart": st.booleans(),
                "partial_ack_window": st.sampled_from(["deflate", "ns2", "ssthresh"]),
                "sack_recovery": st.sampled_from(["rfc6675", "ns2", "linux", "ns3"]),
                "rtt_timing": st.sampled_from(["every_ack", "ns2"]),
            }
        ).map(_without_what_sack1_lacks),
        "workload": st.fixed_dictionaries({"sru": st.sampled_from(["4KiB", "64KiB"])}),
        "trace": st.just({"pcap": True}),
    }
)


@settings(max_examples=max(EXAMPLES // 4, 20), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=windowed)
def test_no_sender_sends_beyond_the_peer_window(data: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> None:
    """RFC 9293 §3.8.6.2.1: a sender never sends past SND.UNA + SND.WND, the right
    edge of the last window the receiver offered (RFC 9293 §3.8.6.2.2: the window
    is not shrunk, so the right edge is the highest offered). Seen on the wire, in
    each server's own capture: every data byte it sends lies below the highest
    ACK + window that had reached it."""
    r = _run(data)
    if r is None:
        return
    out = tmp_path_factory.mktemp("wnd")
    r.write_pcap(out)
    for path in out.glob("server-*.pcap"):
        right_edge = None
        for p in read_pcap(path):
            if p.dport == SERVER_PORT and p.flags & ACK:
                right_edge = max(right_edge or 0, p.ack + p.window)
            elif p.sport == SERVER_PORT and p.payload:
                assert right_edge is not None and p.seq + p.payload <= right_edge, f"{path.name}: {p}"


#: The budget of the runs below, and the setting that names it.
BUDGET_MIB = 256

#: One run in a fresh interpreter: its outcome and how much the process's peak
#: resident memory grew while it ran (``ru_maxrss``, KiB on Linux).
_MEASURED_RUN = """
import json, resource, sys
import incast
from incast import ScenarioError
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    incast.run(incast.Scenario.parse(json.loads(sys.argv[1])))
    outcome = "complete"
except ScenarioError as e:
    outcome = str(e)
grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(json.dumps({"outcome": outcome, "grew_kib": grew}))
"""

#: Random scenarios with pathological retransmission timers (RTO_min 0, RTO_max
#: down to a microsecond, below one full frame's 12 us) and NIC queues with or
#: without a limit, long enough for a retransmission storm to pass the budget.
storms = st.fixed_dictionaries(
    {
        "servers": st.integers(1, 4),
        "duration": st.sampled_from(["20ms", "300ms"]),
        "seed": st.integers(0, 2**32),
        "memory_budget": st.just(f"{BUDGET_MIB}MiB"),
        "link": st.fixed_dictionaries(
            {"rate": st.sampled_from(["1Gbps", "10Gbps"]), "tx_queue": st.sampled_from(["off", "off", 100])}
        ),
        "tcp": st.fixed_dictionaries(
            {
                "rto_min": st.sampled_from(["0", "1ns", "200us"]),
                "rto_max": st.sampled_from(["1us", "5us", "100us", "120s"]),
                "delayed_ack": st.sampled_from(["40ms", "off"]),
            }
        ),
        "stats": st.fixed_dictionaries({"timeouts": st.booleans()}),
        "workload": st.fixed_dictionaries({"sru": st.sampled_from(["1KiB", "256KiB"])}),
    }
).filter(lambda d: d["tcp"]["rto_min"] != "200us" or d["tcp"]["rto_max"] == "120s")

#: The storm of issue 49 at a microsecond: it passes the budget in about a second of simulated time.
_STORM = {
    "servers": 2, "duration": "2s", "seed": 1, "memory_budget": f"{BUDGET_MIB}MiB",
    "link": {"rate": "1Gbps", "tx_queue": "off"}, "tcp": {"rto_min": "0", "rto_max": "1us", "delayed_ack": "40ms"},
    "stats": {"timeouts": False}, "workload": {"sru": "256KiB"},
}  # fmt: skip


@settings(max_examples=max(EXAMPLES // 25, 8), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(_STORM).via("issue 49")
@given(storms)
def test_a_run_completes_or_stops_at_its_memory_budget(data: dict[str, Any]) -> None:
    """Whatever grows with simulated time (records, packets in flight, NIC queues) is held to
    ``memory_budget``: a run completes, or stops with the budget's one-line error naming the
    setting to change, and the process's memory grows by less than the budget either way."""
    import json
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _MEASURED_RUN, json.dumps(data)], capture_output=True, text=True, check=True
    )
    measured = json.loads(done.stdout)
    outcome = measured["outcome"]
    budget_errors = ("link.tx_queue: the packets in flight (", "stats.timeouts: what it records grew past")
    assert outcome == "complete" or outcome.startswith(budget_errors), outcome
    assert f"memory_budget ({BUDGET_MIB}MiB)" in outcome or outcome == "complete"
    assert measured["grew_kib"] < BUDGET_MIB * 1024, measured
