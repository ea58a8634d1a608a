"""Open-loop flows and partition/aggregate queries in ns-3 3.44, as a reference for the engine.

Run it with an interpreter that has the ``ns3`` wheel (``pip install
ns3==3.44.post0``); like ``ns3.py`` it needs nothing of ``incast`` but
:mod:`incast.reference.ns3_cppyy`, :mod:`~incast.reference.ns3_fabric` and
:mod:`~incast.reference.ns3_ideal` beside it::

    python python/incast/reference/ns3_traffic.py --hosts 45 --duration 2s --load 0.101 \\
        --sizes websearch.cdf --query-rate 313 --query-fanin 44 --query-response 2KB \\
        --buffer 88889B --shared-alpha 0.212 --rto-min 10ms --json

``incast reproduce NAME --against ns3`` runs it so for a scenario with
``[traffic]`` (:mod:`incast.reference.ns3_options`), as DCTCP §4.3's
benchmark (``dctcp10-benchmark``, one switch) and HPCC §5.3's fabric
(``hpcc19-fig11``, a leaf-spine: ``--leaves``, ``--spines``,
``--hosts-per-leaf``, ``--trunk``, ``--trunk-delay``, ``--ecmp``) need.

What is modelled
----------------
* The fabric, its switch ports, their shared memory and ECN marking, and
  the routing over it: :mod:`ns3_fabric`.
* TCP: ``TcpL4Protocol::SocketType`` is ``TcpLinuxReno`` (``--cc reno``;
  Linux's Reno, the parent of ns-3's DCTCP) or, with ``--cc dctcp``, a
  subclass of ``TcpDctcp`` whose ``GetSsThresh`` keeps Linux's floor of two
  segments (``dctcp_ssthresh``: ``max(cwnd - (cwnd * alpha >> 11), 2)``):
  ns-3's TcpDctcp has none, its window decays below one segment under
  marking and a sender with less than a segment of window never sends
  again. ``TcpSocketBase::Sack`` = ``--sack``; ``MinRto`` = ``--rto-min``;
  ``ClockGranularity`` 0; ``TcpSocket::DelAckCount`` 2 and ``DelAckTimeout``
  = ``--delayed-ack`` (``0``: an ACK per segment, ``DelAckCount`` 1);
  ``SegmentSize`` = ``--mss``; ``InitialCwnd`` = ``--init-cwnd``;
  ``SndBufSize`` = ``RcvBufSize`` = ``--socket-buffer``; ``LimitedTransmit`` =
  ``--limited-transmit``; ``RecoveryType`` PRR or classic (``--recovery``);
  ``DataRetries`` 1000000.
* Traffic, drawn here (Python's ``random.Random(--seed)``): flows arrive as
  one Poisson process of rate ``load`` × Σ link rates / (8 × mean size), the
  sender uniform over the hosts, the receiver uniform over the others, the
  size from ``--sizes`` (a CDF file, ``bytes fraction`` a line) by inverting
  it with linear interpolation, rounded, at least 1 byte. Queries arrive as a
  Poisson process of ``--query-rate``, each from a uniform aggregator to
  ``--query-fanin`` distinct other hosts, each answering with
  ``--query-response`` bytes. Arrivals stop at ``--duration``, and so does
  the run. Or, with ``--flows FILE``, the flows of that file, drawn by
  another simulator (:func:`read_flows`; ``--load``, ``--sizes`` and the
  ``--query-*`` options are then not read).
* Each flow and each response is a connection of its own. It is opened
  ``--open-ahead`` before its arrival (at 0 for earlier arrivals) so that, as
  the engine's flows, its data leaves at the arrival on an established
  connection with one RTT sample taken; the sender writes every byte at the
  arrival (as the send buffer frees) and closes. ``late_connections``
  counts the flows whose handshake had not ended by their arrival (they send
  at its end).
* Figures, as the engine's (``stats::fct``): a flow's FCT from its arrival
  to its last byte at the receiving application, or with ``--fct-end
  acked`` to the sender's ACK of it (``TcpSocketBase``'s ``HighestRxAck``
  trace); its slowdown, FCT over its ideal (:mod:`ns3_ideal`: the engine's
  formula for the flow alone on the empty fabric, on the harness's paths);
  a query's time from its arrival to its last response's end; a
  query timed out when a response's sender entered ``CA_LOSS`` (only
  ``TcpSocketBase::ReTxTimeout`` sets it) before that response was
  complete. Percentiles nearest-rank over the finished; size buckets DCTCP
  Figure 22's.
"""

from __future__ import annotations

import argparse
import bisect
import functools
import json
import math
import os
import random
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING or __package__:
    from incast.reference import ns3_fabric, ns3_ideal
    from incast.reference.ns3_cppyy import TCP_IP_HEADERS, TS_OPTION, define, duration, rate, size
else:  # run as a script, perhaps isolated (-I): its folder may not be on sys.path
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import ns3_fabric
    import ns3_ideal
    from ns3_cppyy import TCP_IP_HEADERS, TS_OPTION, define, duration, rate, size

#: DCTCP Figure 22's size buckets: name and largest size, bytes (decimal units).
BUCKETS = (("under_10kb", 10_000), ("10kb_100kb", 100_000), ("100kb_1mb", 1_000_000), ("1mb_10mb", 10_000_000))

CPP = r"""
#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace incast_ns3_traffic {
using namespace ns3;

// TcpDctcp with Linux's ssthresh floor of two segments (tcp_dctcp.c,
// dctcp_ssthresh: "return max(tcp_snd_cwnd(tp) - ((tcp_snd_cwnd(tp) * ca->dctcp_alpha) >> 11U), 2U)").
class FlooredDctcp : public TcpDctcp {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("incast_ns3_traffic::FlooredDctcp")
                                .SetParent<TcpDctcp>()
                                .SetGroupName("Internet")
                                .AddConstructor<FlooredDctcp>();
        return tid;
    }
    FlooredDctcp() {}
    FlooredDctcp(const FlooredDctcp& other) : TcpDctcp(other) {}
    std::string GetName() const override { return "FlooredDctcp"; }
    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override {
        return std::max(TcpDctcp::GetSsThresh(tcb, bytesInFlight), 2 * tcb->m_segmentSize);
    }
    Ptr<TcpCongestionOps> Fork() override { return CopyObject<FlooredDctcp>(this); }
};

struct Params {
    Shape shape;
    bool dctcp = false;
    bool sack = true;
    bool prr = true;
    bool timestamps = false;
    bool limited_transmit = false;
    double rto_min_s = 0.2;
    double del_ack_s = 0.04;
    uint32_t mss = 1460;
    uint32_t init_cwnd = 10;
    uint32_t socket_buffer = 65536;
    double duration_s = 1;
    double open_ahead_s = 0.01;
    bool acked = false;
};

// The flows (queries' responses among them) and what became of them.
struct Flows {
    std::vector<double> start_s;
    std::vector<uint32_t> src, dst;
    std::vector<uint64_t> bytes;
    std::vector<int64_t> query;
    std::vector<double> query_start_s;
    // Outputs: completion (-1: unfinished), a timeout before completion, a handshake still open at the arrival.
    std::vector<double> done_s, query_done_s;
    std::vector<uint32_t> timed_out, late;
    uint64_t drops = 0, marks = 0, unmarkable = 0, other_drops = 0;
    std::vector<uint64_t> uplink_packets;  // sent up from each leaf to each spine
};

// The run's state, on the heap: cling runs the destructors of a cppdef's
// static objects twice at exit.
struct State {
    Flows* flows;
    Fabric fabric;
    bool acked = false;
    std::vector<Ptr<Socket>> sock;
    std::vector<uint64_t> left, got;
    std::vector<uint8_t> connected, ready, drained;
    std::vector<uint32_t> pending;
    std::unordered_map<uint64_t, uint32_t> flow_of;
};
static State* g_state = nullptr;
static const uint16_t kPort = 5000;

static uint64_t Key(Ipv4Address a, uint16_t port) { return (uint64_t(a.Get()) << 16) | port; }

static void Push(uint32_t f) {
    Ptr<Socket> s = g_state->sock[f];
    while (g_state->left[f] > 0) {
        uint32_t room = s->GetTxAvailable();
        if (room == 0) return;
        uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(g_state->left[f], room));
        int sent = s->Send(Create<Packet>(n));
        if (sent <= 0) return;
        g_state->left[f] -= static_cast<uint64_t>(sent);
    }
    s->Close();
}
static void Writable(uint32_t f, Ptr<Socket>, uint32_t) {
    if (g_state->ready[f] && g_state->left[f] > 0) Push(f);
}
static void Connected(uint32_t f, Ptr<Socket>) {
    g_state->connected[f] = 1;
    if (g_state->ready[f]) Push(f);
}
static void Failed(uint32_t f, Ptr<Socket>) { NS_FATAL_ERROR("flow " << f << ": connection failed"); }
static void CongState(uint32_t f, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now) {
    if (now == TcpSocketState::CA_LOSS && g_state->flows->done_s[f] < 0) g_state->flows->timed_out[f] = 1;
}
// Flow f is complete: its FCT ends now, and its query's once its last response is.
static void Complete(uint32_t f) {
    double now = Simulator::Now().GetSeconds();
    g_state->flows->done_s[f] = now;
    int64_t q = g_state->flows->query[f];
    if (q >= 0 && --g_state->pending[q] == 0) g_state->flows->query_done_s[q] = now;
}
// The sender's highest ACK: ns-3 numbers a connection's SYN 0, so data byte k is sequence k and ACK n + 1
// covers a flow of n bytes.
static void Acked(uint32_t f, SequenceNumber32, SequenceNumber32 ack) {
    if (g_state->flows->done_s[f] < 0 && ack.GetValue() >= g_state->flows->bytes[f] + 1) Complete(f);
}
static void Open(uint32_t f) {
    const Fabric& fab = g_state->fabric;
    Ptr<Socket> s = Socket::CreateSocket(fab.hosts[g_state->flows->src[f]], TcpSocketFactory::GetTypeId());
    s->Bind();
    Address local;
    s->GetSockName(local);
    g_state->flow_of[Key(fab.addr[g_state->flows->src[f]], InetSocketAddress::ConvertFrom(local).GetPort())] = f;
    s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&CongState, f));
    if (g_state->acked) s->TraceConnectWithoutContext("HighestRxAck", MakeBoundCallback(&Acked, f));
    s->SetConnectCallback(MakeBoundCallback(&Connected, f), MakeBoundCallback(&Failed, f));
    s->SetSendCallback(MakeBoundCallback(&Writable, f));
    s->Connect(InetSocketAddress(fab.addr[g_state->flows->dst[f]], kPort));
    g_state->sock[f] = s;
}
static void Arrive(uint32_t f) {
    g_state->ready[f] = 1;
    if (g_state->connected[f]) Push(f);
    else g_state->flows->late[f] = 1;
}
static void Received(uint32_t f, Ptr<Socket> s) {
    Ptr<Packet> pkt;
    while ((pkt = s->Recv())) g_state->got[f] += pkt->GetSize();
    if (g_state->drained[f] || g_state->got[f] < g_state->flows->bytes[f]) return;
    g_state->drained[f] = 1;
    if (!g_state->acked) Complete(f);
    s->Close();
}
static void Accepted(Ptr<Socket> s, const Address& from) {
    InetSocketAddress peer = InetSocketAddress::ConvertFrom(from);
    auto it = g_state->flow_of.find(Key(peer.GetIpv4(), peer.GetPort()));
    if (it == g_state->flow_of.end()) NS_FATAL_ERROR("a connection from an unknown flow");
    s->SetRecvCallback(MakeBoundCallback(&Received, it->second));
}
static void OnDrop(Ptr<const QueueDiscItem>) { ++g_state->flows->drops; }
static void OnOtherDrop(Ptr<const Packet>) { ++g_state->flows->other_drops; }

static void Simulate(const Params& p, Flows& flows) {
    uint32_t n = flows.start_s.size();
    flows.done_s.assign(n, -1);
    flows.timed_out.assign(n, 0);
    flows.late.assign(n, 0);
    flows.query_done_s.assign(flows.query_start_s.size(), -1);
    g_state->acked = p.acked;
    g_state->sock.assign(n, nullptr);
    g_state->left = flows.bytes;
    g_state->got.assign(n, 0);
    g_state->connected.assign(n, 0);
    g_state->ready.assign(n, 0);
    g_state->drained.assign(n, 0);
    g_state->pending.assign(flows.query_start_s.size(), 0);
    for (int64_t q : flows.query) if (q >= 0) ++g_state->pending[q];
    g_state->flow_of.clear();
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(p.shape.seed);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                       TypeIdValue(p.dctcp ? FlooredDctcp::GetTypeId() : TcpLinuxReno::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(p.prr ? TcpPrrRecovery::GetTypeId() : TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(p.sack));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(p.timestamps));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(p.limited_transmit));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(p.rto_min_s)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(Seconds(0)));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(p.mss));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(p.init_cwnd));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(p.del_ack_s > 0 ? 2 : 1));
    if (p.del_ack_s > 0) Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(Seconds(p.del_ack_s)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(p.socket_buffer));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(p.socket_buffer));
    Config::SetDefault("ns3::TcpSocket::TcpNoDelay", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(1000000));

    Fabric& fab = g_state->fabric;
    Build(p.shape, fab);
    for (uint32_t k = 0; k < fab.nics.GetN(); ++k) {
        DynamicCast<PointToPointNetDevice>(fab.nics.Get(k))->GetQueue()->TraceConnectWithoutContext(
            "Drop", MakeCallback(&OnOtherDrop));
    }
    for (uint32_t k = 0; k < fab.ports.GetN(); ++k) {
        fab.ports.Get(k)->TraceConnectWithoutContext("Drop", MakeCallback(&OnDrop));
    }

    std::vector<Ptr<Socket>> listeners;
    for (Ptr<Node> host : fab.hosts) {
        Ptr<Socket> l = Socket::CreateSocket(host, TcpSocketFactory::GetTypeId());
        l->Bind(InetSocketAddress(Ipv4Address::GetAny(), kPort));
        l->Listen();
        l->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(), MakeCallback(&Accepted));
        listeners.push_back(l);
    }
    for (uint32_t f = 0; f < n; ++f) {
        Simulator::Schedule(Seconds(std::max(0.0, flows.start_s[f] - p.open_ahead_s)), &Open, f);
        Simulator::Schedule(Seconds(flows.start_s[f]), &Arrive, f);
    }
    Simulator::Stop(Seconds(p.duration_s));
    Simulator::Run();
    for (uint32_t k = 0; k < fab.ports.GetN(); ++k) {
        const QueueDisc::Stats& st = fab.ports.Get(k)->GetStats();
        flows.marks += st.nTotalMarkedPackets;
        if (p.shape.ecn_k >= 0) flows.unmarkable += st.GetNDroppedPackets(RedQueueDisc::FORCED_DROP);
    }
    for (uint32_t k : fab.uplinks) flows.uplink_packets.push_back(fab.ports.Get(k)->GetStats().nTotalDequeuedPackets);
    Simulator::Destroy();
}

static void Run(const Params& p, Flows& flows) {
    g_state = new State();
    g_state->flows = &flows;
    Simulate(p, flows);
    delete g_state;
    g_state = nullptr;
}
}  // namespace incast_ns3_traffic
"""


def read_cdf(path: str) -> list[tuple[float, float]]:
    """The points of a CDF file: ``bytes fraction`` a line, ``#`` comments (checked by the engine already)."""
    points = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            words = line.split("#", 1)[0].split()
            if words:
                points.append((float(words[0]), float(words[1])))
    return points


def quantile(points: list[tuple[float, float]], u: float) -> int:
    """The size at quantile ``u`` in [0, 1): linear between the points around it, rounded, at least 1."""
    fractions = [p for _, p in points]
    i = min(max(bisect.bisect_right(fractions, u), 1), len(points) - 1)
    (x0, p0), (x1, p1) = points[i - 1], points[i]
    x = x0 if p1 == p0 else x0 + (x1 - x0) * (u - p0) / (p1 - p0)
    return max(1, round(x))


def mean_size(points: list[tuple[float, float]]) -> float:
    """Each segment between points holds its share of flows at its midpoint size."""
    return sum((p1 - p0) * (x0 + x1) / 2 for (x0, p0), (x1, p1) in zip(points, points[1:], strict=False))


def hosts(args: argparse.Namespace) -> int:
    """The fabric's hosts: ``--hosts`` on the star, leaves x hosts per leaf on a leaf-spine."""
    return int(args.leaves * args.hosts_per_leaf if args.leaves else args.hosts)


def read_flows(text: str, n: int) -> tuple[list[tuple[float, int, int, int, int]], list[float]]:
    """The flows of a ``--flows`` file and their queries' arrivals, as :func:`arrivals` gives them.

    A line a flow, ``arrival_s sender receiver bytes query`` (``query`` -1 for an
    open-loop flow, else its query's number, from 0); ``#`` starts a comment. A
    query arrives when its responses do. A line that does not fit the ``n`` hosts
    stops the run naming it.
    """
    flows: list[tuple[float, int, int, int, int]] = []
    starts: dict[int, float] = {}
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        try:  # five words, or the unpacking fails too
            t, src, dst, size, query = float(words[0]), *(int(w) for w in words[1:])
            fits = t >= 0 and 0 <= src < n and 0 <= dst < n and src != dst and size >= 1
        except ValueError:
            fits = False
        if not fits:
            raise SystemExit(f"--flows: line {number}: not 'arrival_s sender receiver bytes query' on {n} hosts")
        if query >= 0 and starts.setdefault(query, t) != t:
            raise SystemExit(f"--flows: line {number}: query {query}'s responses arrive at {starts[query]} s")
        flows.append((t, src, dst, size, query))
    if sorted(starts) != list(range(len(starts))):
        raise SystemExit("--flows: the queries must be numbered from 0 without a gap")
    flows.sort(key=lambda f: f[0])
    return flows, [starts[q] for q in range(len(starts))]


def arrivals(args: argparse.Namespace) -> tuple[list[tuple[float, int, int, int, int]], list[float]]:
    """Every flow (arrival s, sender, receiver, bytes, query or -1), by arrival, and every query's arrival."""
    if args.flows is not None:
        with open(args.flows, encoding="utf-8") as f:
            return read_flows(f.read(), hosts(args))
    rng = random.Random(args.seed)
    n = hosts(args)
    flows: list[tuple[float, int, int, int, int]] = []
    if args.load > 0:
        points = read_cdf(args.sizes)
        rate_per_s = args.load * n * args.link / (8 * mean_size(points))
        t = rng.expovariate(rate_per_s)
        while t < args.duration:
            src = rng.randrange(n)
            dst = rng.randrange(n - 1)
            flows.append((t, src, dst + (dst >= src), quantile(points, rng.random()), -1))
            t += rng.expovariate(rate_per_s)
    queries: list[float] = []
    if args.query_rate > 0:
        t = rng.expovariate(args.query_rate)
        while t < args.duration:
            aggregator = rng.randrange(n)
            others = [h for h in range(n) if h != aggregator]
            for worker in rng.sample(others, args.query_fanin):
                flows.append((t, worker, aggregator, args.query_response, len(queries)))
            queries.append(t)
            t += rng.expovariate(args.query_rate)
    flows.sort(key=lambda f: f[0])
    return flows, queries


def tail(values: list[float]) -> dict[str, float | None]:
    """p50, p95, p99 (nearest rank) and the mean, or None each without values."""
    v = sorted(values)

    def pct(q: float) -> float | None:
        return v[min(len(v) - 1, max(0, math.ceil(q * len(v)) - 1))] if v else None

    return {"p50": pct(0.5), "p95": pct(0.95), "p99": pct(0.99), "mean": sum(v) / len(v) if v else None}


def figures(
    flows: list[tuple[float, int, int, int, int]],
    queries: list[float],
    done: list[float],
    timed_out: list[int],
    query_done: list[float],
    ideal: list[float],
) -> dict[str, Any]:
    """The open-loop figures (``stats::fct``'s) of ``flows`` and ``queries`` (as :func:`arrivals` drew them),
    given each flow's completion (s, or -1), whether it timed out before, each query's completion, and each
    flow's ideal completion time (s; its slowdown is its FCT over that)."""
    out: dict[str, Any] = {}
    open_loop = [i for i, x in enumerate(flows) if x[4] < 0 and done[i] >= 0]
    out["open_flows"] = sum(x[4] < 0 for x in flows)
    out["open_flows_unfinished"] = out["open_flows"] - len(open_loop)
    fct = {i: done[i] - flows[i][0] for i in open_loop}
    out["slowdown"] = tail([fct[i] / ideal[i] for i in open_loop])
    bounds = [0, *(hi for _, hi in BUCKETS), math.inf]
    for (name, _), lo, hi in zip([*BUCKETS, ("over_10mb", 0)], bounds[:-1], bounds[1:], strict=True):
        mine = [i for i in open_loop if lo < flows[i][3] <= hi]
        out[f"slowdown_{name}"] = tail([fct[i] / ideal[i] for i in mine])
        out[f"fct_ms_{name}"] = tail([fct[i] * 1e3 for i in mine])
    hit = [False] * len(queries)
    for i, x in enumerate(flows):
        if x[4] >= 0 and timed_out[i]:
            hit[x[4]] = True
    out["queries"] = len(queries)
    out["queries_unfinished"] = sum(d < 0 for d in query_done)
    out["query_time_ms"] = tail([(d - t) * 1e3 for d, t in zip(query_done, queries, strict=True) if d >= 0])
    out["queries_timed_out"] = sum(hit)
    out["query_timeout_fraction"] = sum(hit) / len(queries) if queries else 0.0
    out["responses_timed_out"] = sum(timed_out[i] for i, x in enumerate(flows) if x[4] >= 0)
    return out


def trunk(args: argparse.Namespace) -> float:
    """A trunk's rate, bps: ``--trunk``, or the host links' rate."""
    return float(args.trunk if args.trunk is not None else args.link)


def trunk_delay(args: argparse.Namespace) -> float:
    """A trunk's delay, s: ``--trunk-delay``, or the host links' (rtt / 4)."""
    return float(args.trunk_delay if args.trunk_delay is not None else args.rtt / 4)


def path(args: argparse.Namespace) -> Callable[[int, int], ns3_ideal.Hops]:
    """The hops between two hosts of the fabric ``args`` builds (:func:`ns3_fabric.hops`)."""
    shape = {"leaves": args.leaves, "link": args.link, "rtt": args.rtt}
    return functools.partial(ns3_fabric.hops, **shape, trunk=trunk(args), trunk_delay=trunk_delay(args))


def stack(args: argparse.Namespace, mss: int) -> ns3_ideal.Stack:
    """The TCP settings of ``args`` as the ideal completion time reads them."""
    return ns3_ideal.Stack(
        mss=mss,
        headers=TCP_IP_HEADERS + (TS_OPTION if args.timestamps else 0),
        init_cwnd=args.init_cwnd,
        window=args.socket_buffer,
        delack_s=args.delayed_ack,
        acked=args.fct_end == "acked",
    )


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Build and run the traffic; its figures under ``incast run --json``'s keys."""
    t0 = time.perf_counter()
    cpp = define(ns3_fabric.CPP + CPP, "incast_ns3_traffic")
    t1 = time.perf_counter()
    flows, queries = arrivals(args)
    mss = args.mss if args.mss is not None else 1500 - TCP_IP_HEADERS - (TS_OPTION if args.timestamps else 0)
    ecn_bytes = args.ecn_k is not None and args.ecn_k.endswith("B")
    p = cpp.Params()
    for key, value in {
        **{"hosts": hosts(args), "leaves": args.leaves, "spines": args.spines, "hosts_per_leaf": args.hosts_per_leaf},
        **{"rate_bps": args.link, "rtt_s": args.rtt, "trunk_bps": trunk(args), "trunk_delay_s": trunk_delay(args)},
        **{"ecmp_flow": args.ecmp == "flow", "buffer": args.buffer, "seed": args.seed},
        **{"alpha": -1.0 if args.shared_alpha is None else args.shared_alpha, "ecn_bytes": ecn_bytes},
        **{"ecn_k": -1.0 if args.ecn_k is None else float(args.ecn_k.rstrip("B"))},
    }.items():
        setattr(p.shape, key, value)
    for key, value in {
        **{"dctcp": args.cc == "dctcp", "sack": args.sack, "prr": args.recovery == "prr"},
        **{"timestamps": args.timestamps, "limited_transmit": args.limited_transmit},
        **{"rto_min_s": args.rto_min, "del_ack_s": args.delayed_ack, "acked": args.fct_end == "acked"},
        **{"mss": mss, "init_cwnd": args.init_cwnd, "socket_buffer": args.socket_buffer},
        **{"duration_s": args.duration, "open_ahead_s": args.open_ahead},
    }.items():
        setattr(p, key, value)
    import cppyy  # type: ignore[import-not-found,import-untyped,unused-ignore]  # loaded by define

    vector = cppyy.gbl.std.vector
    f = cpp.Flows()
    for name, i, kind in (("start_s", 0, "double"), ("src", 1, "uint32_t"), ("dst", 2, "uint32_t")):
        setattr(f, name, vector[kind]([x[i] for x in flows]))
    f.bytes = vector["uint64_t"]([x[3] for x in flows])
    f.query = vector["int64_t"]([x[4] for x in flows])
    f.query_start_s = vector["double"](queries)
    cpp.Run(p, f)
    t2 = time.perf_counter()

    out: dict[str, Any] = {"simulator": "ns-3 3.44"}
    ideal = ns3_ideal.ideals([(x[1], x[2], x[3]) for x in flows], path(args), stack(args, mss))
    out |= figures(flows, queries, list(f.done_s), list(f.timed_out), list(f.query_done_s), ideal)
    out["late_connections"] = sum(f.late)
    out["drops"] = int(f.drops)
    out["ecn_marks"] = int(f.marks)
    out["red_unmarkable_drops"] = int(f.unmarkable)
    out["other_drops"] = int(f.other_drops)
    out["uplink_packets"] = [int(x) for x in f.uplink_packets]
    out["wall_s"] = t2 - t1
    out["setup_wall_s"] = t1 - t0
    out["settings"] = {k: v for k, v in vars(args).items() if k != "json"} | {"segment_size": mss}
    return out


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="ns3_traffic.py",
        description="Open-loop flows and partition/aggregate queries on one switch or a leaf-spine in ns-3.",
    )
    ap.add_argument("--hosts", type=int, help="hosts on the one switch (without --leaves)")
    ap.add_argument("--leaves", type=int, default=0, help="a leaf-spine of this many leaves (0: one switch)")
    ap.add_argument("--spines", type=int, default=0, help="spines of the leaf-spine, each joined to every leaf")
    ap.add_argument("--hosts-per-leaf", type=int, default=0, help="hosts on each leaf")
    ap.add_argument("--trunk", type=rate, help="rate of a leaf-spine trunk (default: --link)")
    ap.add_argument("--trunk-delay", type=duration, help="delay of a leaf-spine trunk (default: rtt / 4)")
    ap.add_argument("--ecmp", choices=["flow", "packet"], default="flow", help="uplink by flow hash or per packet")
    ap.add_argument("--duration", type=duration, required=True, help="arrivals stop here, and the run")
    ap.add_argument("--load", type=float, default=0.0, help="fraction of each link the flows offer (0: none)")
    ap.add_argument("--sizes", help="flow-size CDF file: 'bytes fraction' a line (needed with --load)")
    ap.add_argument("--query-rate", type=float, default=0.0, help="queries per second across the hosts")
    ap.add_argument("--query-fanin", type=int, default=0, help="hosts answering each query")
    ap.add_argument("--query-response", type=size, default=size("2KB"), help="bytes of each answer")
    ap.add_argument("--flows", help="run the flows of this file, 'arrival_s sender receiver bytes query' a line")
    ap.add_argument("--link", type=rate, default=rate("1Gbps"), help="rate of every link")
    ap.add_argument("--rtt", type=duration, default=duration("100us"), help="base RTT, rtt/4 per host link")
    ap.add_argument("--buffer", type=size, default=size("32KiB"), help="bytes per switch port")
    ap.add_argument("--shared-alpha", type=float, help="one memory of buffer x ports, dynamic thresholds alpha")
    ap.add_argument("--ecn-k", help="RED step-marking threshold K: packets (20) or bytes (30000B)")
    ap.add_argument("--cc", choices=["reno", "dctcp"], default="reno", help="TcpLinuxReno or TcpDctcp, floored")
    ap.add_argument("--sack", action=argparse.BooleanOptionalAction, default=True, help="TcpSocketBase::Sack")
    ap.add_argument("--recovery", choices=["prr", "classic"], default="classic", help="TcpL4Protocol::RecoveryType")
    ap.add_argument("--rto-min", type=duration, default=duration("200ms"), help="TcpSocketBase::MinRto")
    ap.add_argument("--delayed-ack", type=duration, default=duration("40ms"), help="DelAckTimeout (0: off)")
    ap.add_argument("--timestamps", action=argparse.BooleanOptionalAction, default=False, help="Timestamp")
    ap.add_argument("--limited-transmit", action=argparse.BooleanOptionalAction, default=False)
    ap.add_argument("--mss", type=int, default=None, help="TcpSocket::SegmentSize (default 1460, 1448 with TS)")
    ap.add_argument("--init-cwnd", type=int, default=10, help="TcpSocket::InitialCwnd, segments")
    ap.add_argument("--socket-buffer", type=size, default=size("64KiB"), help="SndBufSize and RcvBufSize")
    ap.add_argument("--fct-end", choices=["delivered", "acked"], default="delivered", help="last byte in or acked")
    ap.add_argument("--open-ahead", type=duration, default=duration("10ms"), help="connect this long before")
    ap.add_argument("--seed", type=int, default=1, help="seed of the arrivals (and ns-3's run number)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = parser()
    args = ap.parse_args(argv)
    if args.leaves and args.hosts is not None:
        ap.error("--hosts: not with --leaves (a leaf-spine has leaves x hosts-per-leaf)")
    if args.leaves and (args.spines < 1 or args.hosts_per_leaf < 1):
        ap.error("--spines, --hosts-per-leaf: at least 1 each with --leaves")
    if not args.leaves and args.hosts is None:
        ap.error("--hosts: needed without --leaves")
    n = hosts(args)
    if n < 2:
        ap.error("--hosts: at least 2")
    if args.load > 0 and not args.sizes and args.flows is None:
        ap.error("--sizes: needed with --load")
    if args.query_rate > 0 and not 1 <= args.query_fanin < n and args.flows is None:
        ap.error(f"--query-fanin: from 1 to {n - 1} (the other hosts)")
    if args.ecn_k is not None and not args.ecn_k.rstrip("B").isdigit():
        ap.error(f"--ecn-k: a whole number of packets or of bytes (30000B), got {args.ecn_k!r}")
    out = run(args)
    if args.json:
        print(json.dumps(out))
    else:
        for key, value in out.items():
            if key != "settings":
                print(f"{key:24} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
