"""Open-loop flows and partition/aggregate queries on one switch in ns-3 3.44, as a reference for the engine.

Run it with an interpreter that has the ``ns3`` wheel (``pip install
ns3==3.44.post0``); like ``ns3.py`` it needs nothing of ``incast`` but
:mod:`incast.reference.ns3_cppyy` beside it::

    python python/incast/reference/ns3_traffic.py --hosts 45 --duration 2s --load 0.101 \\
        --sizes websearch.cdf --query-rate 313 --query-fanin 44 --query-response 2KB \\
        --buffer 88889B --shared-alpha 0.212 --rto-min 10ms --json

``incast reproduce NAME --against ns3`` runs it so for a scenario with
``[traffic]`` (:mod:`incast.reference.ns3_options`), as DCTCP §4.3's
benchmark needs (``dctcp10-benchmark``).

What is modelled
----------------
* Topology: ``--hosts`` nodes, each on its own point-to-point link
  (``DataRate`` = ``--link``, ``Delay`` = ``--rtt`` / 4) to one switch node, an
  IPv4 router: a round trip between two hosts crosses four link delays.
* Each switch port is a queue disc (``TrafficControlHelper``) over a device
  queue of one packet (``MaxSize`` ``"1p"``), so what waits, waits in the
  disc; the hosts have no queue disc and a device queue that never drops
  (``"100000p"``), as the engine's NIC queues. Without ``--ecn-k`` the disc is
  a ``FifoQueueDisc``; with it a ``RedQueueDisc`` marking as a step at K:
  ``MinTh`` = ``MaxTh`` = K, ``Gentle`` false (with Gentle, RED would mark
  with probability up to 2·MaxTh instead of at K), ``QW`` 1 (the
  instantaneous queue, no averaging), ``UseEcn`` true, ``UseHardDrop``
  false: an ECN-capable packet arriving with K or more waiting is marked CE;
  one that is not ECN-capable is dropped there (RFC 3168's RED; reported as
  ``red_unmarkable_drops``). K counts packets (``--ecn-k 20``) or bytes
  (``--ecn-k 30000B``).
* Buffer: the disc's internal queue is a ``DropTailQueue<QueueDiscItem>``
  that admits a packet only while the port's bytes stay within its limit:
  ``--buffer`` per port, or with ``--shared-alpha A`` one memory of
  ``--buffer`` × ports for the switch, a port taking a packet only while its
  queue stays within A × the memory free (Choudhury-Hahne dynamic thresholds,
  as the engine's ``shared:ALPHA``).
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
  the run.
* Each flow and each response is a connection of its own. It is opened
  ``--open-ahead`` before its arrival (at 0 for earlier arrivals) so that, as
  the engine's flows, its data leaves at the arrival on an established
  connection with one RTT sample taken; the sender writes every byte at the
  arrival (as the send buffer frees) and closes. ``late_connections``
  counts the flows whose handshake had not ended by their arrival (they send
  at its end).
* Figures, as the engine's (``stats::fct``): a flow's FCT from its arrival
  to its last byte at the receiving application; a query's time from its
  arrival to its last response's last byte; a query timed out when a
  response's sender entered ``CA_LOSS`` (only ``TcpSocketBase::ReTxTimeout``
  sets it) before that response was complete. Percentiles nearest-rank over
  the finished; size buckets DCTCP Figure 22's. No slowdown: no ideal FCT
  is computed here.

What is approximated
--------------------
* No Ethernet framing: a queue counts IP packets' bytes (1500 for a full
  segment, 1518 as the engine's Ethernet frame) and a full segment is a
  1502-byte PPP frame on the wire.
* A port's limit and its marking count the packets in its disc; one more
  waits in the device queue and one is on the wire.
* The switch forwards in zero time; routing is a static IPv4 router.
"""

from __future__ import annotations

import argparse
import bisect
import json
import math
import os
import random
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING or __package__:
    from incast.reference.ns3_cppyy import TCP_IP_HEADERS, TS_OPTION, define, duration, rate, size
else:  # run as a script, perhaps isolated (-I): its folder may not be on sys.path
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
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

// One switch's memory: `capacity` bytes shared by its ports, or none (alpha < 0).
struct Pool {
    uint64_t capacity = 0;
    uint64_t bytes = 0;
    double alpha = -1;
};

// A port's queue: admits a packet while the port stays within `limit` bytes,
// or within alpha x the free memory of its switch's pool (Choudhury-Hahne).
class PortQueue : public DropTailQueue<QueueDiscItem> {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("incast_ns3_traffic::PortQueue")
                                .SetParent<DropTailQueue<QueueDiscItem>>()
                                .SetGroupName("TrafficControl")
                                .AddConstructor<PortQueue>();
        return tid;
    }
    Pool* m_pool = nullptr;
    uint64_t m_limit = 0;
    bool Enqueue(Ptr<QueueDiscItem> item) override {
        uint64_t bound = m_limit;
        if (m_pool->alpha >= 0) {
            uint64_t free = m_pool->capacity - m_pool->bytes;
            bound = std::min<uint64_t>(static_cast<uint64_t>(m_pool->alpha * free), GetNBytes() + free);
        }
        if (GetNBytes() + item->GetSize() > bound) {
            DropBeforeEnqueue(item);
            return false;
        }
        if (!DropTailQueue<QueueDiscItem>::Enqueue(item)) return false;
        m_pool->bytes += item->GetSize();
        return true;
    }
    Ptr<QueueDiscItem> Dequeue() override { return Left(DropTailQueue<QueueDiscItem>::Dequeue()); }
    Ptr<QueueDiscItem> Remove() override { return Left(DropTailQueue<QueueDiscItem>::Remove()); }
  private:
    Ptr<QueueDiscItem> Left(Ptr<QueueDiscItem> item) {
        if (item) m_pool->bytes -= item->GetSize();
        return item;
    }
};

struct Params {
    uint32_t hosts = 2;
    double rate_bps = 1e9;
    double rtt_s = 100e-6;
    uint64_t buffer = 32768;
    double alpha = -1;
    double ecn_k = -1;
    bool ecn_bytes = false;
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
    uint64_t seed = 1;
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
};

// The run's state, on the heap: cling runs the destructors of a cppdef's
// static objects twice at exit.
struct State {
    Flows* flows;
    std::vector<Ptr<Node>> nodes;
    std::vector<Ipv4Address> addr;
    std::vector<Ptr<Socket>> sock;
    std::vector<uint64_t> left, got;
    std::vector<uint8_t> connected, ready;
    std::vector<uint32_t> pending;
    std::unordered_map<uint64_t, uint32_t> flow_of;
    Pool pool;
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
static void Open(uint32_t f) {
    Ptr<Socket> s = Socket::CreateSocket(g_state->nodes[g_state->flows->src[f]], TcpSocketFactory::GetTypeId());
    s->Bind();
    Address local;
    s->GetSockName(local);
    g_state->flow_of[Key(g_state->addr[g_state->flows->src[f]], InetSocketAddress::ConvertFrom(local).GetPort())] = f;
    s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&CongState, f));
    s->SetConnectCallback(MakeBoundCallback(&Connected, f), MakeBoundCallback(&Failed, f));
    s->SetSendCallback(MakeBoundCallback(&Writable, f));
    s->Connect(InetSocketAddress(g_state->addr[g_state->flows->dst[f]], kPort));
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
    if (g_state->flows->done_s[f] >= 0 || g_state->got[f] < g_state->flows->bytes[f]) return;
    double now = Simulator::Now().GetSeconds();
    g_state->flows->done_s[f] = now;
    int64_t q = g_state->flows->query[f];
    if (q >= 0 && --g_state->pending[q] == 0) g_state->flows->query_done_s[q] = now;
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
    g_state->sock.assign(n, nullptr);
    g_state->left = flows.bytes;
    g_state->got.assign(n, 0);
    g_state->connected.assign(n, 0);
    g_state->ready.assign(n, 0);
    g_state->pending.assign(flows.query_start_s.size(), 0);
    for (int64_t q : flows.query) if (q >= 0) ++g_state->pending[q];
    g_state->flow_of.clear();
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(p.seed);

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

    NodeContainer hosts;
    hosts.Create(p.hosts);
    Ptr<Node> sw = CreateObject<Node>();
    InternetStackHelper stack;
    stack.Install(hosts);
    stack.Install(sw);
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(static_cast<uint64_t>(p.rate_bps))));
    p2p.SetChannelAttribute("Delay", TimeValue(Seconds(p.rtt_s / 4.0)));
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize("100000p")));
    Ipv4AddressHelper addresses;
    NetDeviceContainer hostSide, switchSide;
    for (uint32_t i = 0; i < p.hosts; ++i) {
        NetDeviceContainer d = p2p.Install(hosts.Get(i), sw);
        std::string base = "10." + std::to_string(1 + i / 256) + "." + std::to_string(i % 256) + ".0";
        addresses.SetBase(Ipv4Address(base.c_str()), "255.255.255.0");
        Ipv4InterfaceContainer ifc = addresses.Assign(d);
        g_state->nodes.push_back(hosts.Get(i));
        g_state->addr.push_back(ifc.GetAddress(0));
        hostSide.Add(d.Get(0));
        switchSide.Add(d.Get(1));
    }
    TrafficControlHelper none;
    none.Uninstall(hostSide);
    none.Uninstall(switchSide);
    for (uint32_t k = 0; k < hostSide.GetN(); ++k) {
        DynamicCast<PointToPointNetDevice>(hostSide.Get(k))->GetQueue()->TraceConnectWithoutContext(
            "Drop", MakeCallback(&OnOtherDrop));
        DynamicCast<PointToPointNetDevice>(switchSide.Get(k))->GetQueue()->SetMaxSize(QueueSize("1p"));
    }
    TrafficControlHelper tch;
    if (p.ecn_k >= 0) {
        tch.SetRootQueueDisc("ns3::RedQueueDisc", "MinTh", DoubleValue(p.ecn_k), "MaxTh", DoubleValue(p.ecn_k),
                             "Gentle", BooleanValue(false), "QW", DoubleValue(1.0), "UseEcn", BooleanValue(true),
                             "UseHardDrop", BooleanValue(false), "LinkBandwidth",
                             DataRateValue(DataRate(static_cast<uint64_t>(p.rate_bps))), "LinkDelay",
                             TimeValue(Seconds(p.rtt_s / 4.0)));
    } else {
        tch.SetRootQueueDisc("ns3::FifoQueueDisc");
    }
    QueueDiscContainer discs = tch.Install(switchSide);
    Pool& pool = g_state->pool;
    pool.capacity = p.buffer * p.hosts;
    pool.alpha = p.alpha;
    // Packets, unless K counts bytes: RED's thresholds are in the internal queue's unit.
    QueueSize ample = p.ecn_bytes ? QueueSize(QueueSizeUnit::BYTES, 0xffffffffu) : QueueSize("100000p");
    for (uint32_t k = 0; k < discs.GetN(); ++k) {
        Ptr<PortQueue> q = CreateObject<PortQueue>();
        q->SetMaxSize(ample);
        q->m_pool = &pool;
        q->m_limit = p.buffer;
        discs.Get(k)->AddInternalQueue(q);
        discs.Get(k)->TraceConnectWithoutContext("Drop", MakeCallback(&OnDrop));
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    std::vector<Ptr<Socket>> listeners;
    for (uint32_t i = 0; i < p.hosts; ++i) {
        Ptr<Socket> l = Socket::CreateSocket(hosts.Get(i), TcpSocketFactory::GetTypeId());
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
    for (uint32_t k = 0; k < discs.GetN(); ++k) {
        const QueueDisc::Stats& st = discs.Get(k)->GetStats();
        flows.marks += st.nTotalMarkedPackets;
        if (p.ecn_k >= 0) flows.unmarkable += st.GetNDroppedPackets(RedQueueDisc::FORCED_DROP);
    }
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


def arrivals(args: argparse.Namespace) -> tuple[list[tuple[float, int, int, int, int]], list[float]]:
    """Every flow (arrival s, sender, receiver, bytes, query or -1), by arrival, and every query's arrival."""
    rng = random.Random(args.seed)
    flows: list[tuple[float, int, int, int, int]] = []
    if args.load > 0:
        points = read_cdf(args.sizes)
        rate_per_s = args.load * args.hosts * args.link / (8 * mean_size(points))
        t = rng.expovariate(rate_per_s)
        while t < args.duration:
            src = rng.randrange(args.hosts)
            dst = rng.randrange(args.hosts - 1)
            flows.append((t, src, dst + (dst >= src), quantile(points, rng.random()), -1))
            t += rng.expovariate(rate_per_s)
    queries: list[float] = []
    if args.query_rate > 0:
        t = rng.expovariate(args.query_rate)
        while t < args.duration:
            aggregator = rng.randrange(args.hosts)
            others = [h for h in range(args.hosts) if h != aggregator]
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
) -> dict[str, Any]:
    """The open-loop figures (``stats::fct``'s) of ``flows`` and ``queries`` (as :func:`arrivals` drew them),
    given each flow's completion (s, or -1), whether it timed out before, and each query's completion."""
    out: dict[str, Any] = {}
    open_loop = [i for i, x in enumerate(flows) if x[4] < 0]
    out["open_flows"] = len(open_loop)
    out["open_flows_unfinished"] = sum(done[i] < 0 for i in open_loop)
    bounds = [0, *(hi for _, hi in BUCKETS), math.inf]
    for (name, _), lo, hi in zip([*BUCKETS, ("over_10mb", 0)], bounds[:-1], bounds[1:], strict=True):
        out[f"fct_ms_{name}"] = tail(
            [(done[i] - flows[i][0]) * 1e3 for i in open_loop if done[i] >= 0 and lo < flows[i][3] <= hi]
        )
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


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Build and run the traffic; its figures under ``incast run --json``'s keys."""
    t0 = time.perf_counter()
    cpp = define(CPP, "incast_ns3_traffic")
    t1 = time.perf_counter()
    flows, queries = arrivals(args)
    mss = args.mss if args.mss is not None else 1500 - TCP_IP_HEADERS - (TS_OPTION if args.timestamps else 0)
    ecn_bytes = args.ecn_k is not None and args.ecn_k.endswith("B")
    p = cpp.Params()
    for key, value in {
        **{"hosts": args.hosts, "rate_bps": args.link, "rtt_s": args.rtt, "buffer": args.buffer},
        **{"alpha": -1.0 if args.shared_alpha is None else args.shared_alpha, "dctcp": args.cc == "dctcp"},
        **{"ecn_k": -1.0 if args.ecn_k is None else float(args.ecn_k.rstrip("B")), "ecn_bytes": ecn_bytes},
        **{"sack": args.sack, "prr": args.recovery == "prr", "timestamps": args.timestamps},
        **{"limited_transmit": args.limited_transmit, "rto_min_s": args.rto_min, "del_ack_s": args.delayed_ack},
        **{"mss": mss, "init_cwnd": args.init_cwnd, "socket_buffer": args.socket_buffer},
        **{"duration_s": args.duration, "open_ahead_s": args.open_ahead, "seed": args.seed},
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
    out |= figures(flows, queries, list(f.done_s), list(f.timed_out), list(f.query_done_s))
    out["late_connections"] = sum(f.late)
    out["drops"] = int(f.drops)
    out["ecn_marks"] = int(f.marks)
    out["red_unmarkable_drops"] = int(f.unmarkable)
    out["other_drops"] = int(f.other_drops)
    out["wall_s"] = t2 - t1
    out["setup_wall_s"] = t1 - t0
    out["settings"] = {k: v for k, v in vars(args).items() if k != "json"} | {"segment_size": mss}
    return out


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="ns3_traffic.py", description="Open-loop flows and partition/aggregate queries on one switch in ns-3."
    )
    ap.add_argument("--hosts", type=int, required=True, help="hosts on the switch")
    ap.add_argument("--duration", type=duration, required=True, help="arrivals stop here, and the run")
    ap.add_argument("--load", type=float, default=0.0, help="fraction of each link the flows offer (0: none)")
    ap.add_argument("--sizes", help="flow-size CDF file: 'bytes fraction' a line (needed with --load)")
    ap.add_argument("--query-rate", type=float, default=0.0, help="queries per second across the hosts")
    ap.add_argument("--query-fanin", type=int, default=0, help="hosts answering each query")
    ap.add_argument("--query-response", type=size, default=size("2KB"), help="bytes of each answer")
    ap.add_argument("--link", type=rate, default=rate("1Gbps"), help="rate of every link")
    ap.add_argument("--rtt", type=duration, default=duration("100us"), help="base RTT, rtt/4 per link")
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
    ap.add_argument("--open-ahead", type=duration, default=duration("10ms"), help="connect this long before")
    ap.add_argument("--seed", type=int, default=1, help="seed of the arrivals (and ns-3's run number)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = parser()
    args = ap.parse_args(argv)
    if args.hosts < 2:
        ap.error("--hosts: at least 2")
    if args.load > 0 and not args.sizes:
        ap.error("--sizes: needed with --load")
    if args.query_rate > 0 and not 1 <= args.query_fanin < args.hosts:
        ap.error(f"--query-fanin: from 1 to {args.hosts - 1} (the other hosts)")
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
