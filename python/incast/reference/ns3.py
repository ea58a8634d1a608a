"""The synchronized read (incast) in ns-3 3.44, as a reference for the engine.

Run it with an interpreter that has the ``ns3`` wheel from PyPI (``pip install
ns3==3.44.post0``); it needs nothing of ``incast`` but :mod:`incast.reference.ns3_cppyy` beside
it, which reads the unit parser (``incast/units.py``) from beside this folder::

    python python/incast/reference/ns3.py --servers 16 --rto-min 1ms \\
        --buffer 32KiB --sru 256KiB --blocks 20 --json

``incast validate --against ns3`` runs it so, from a scenario
(:mod:`incast.reference.ns3_options`).

The scenario, the application and the counters are C++ handed to cppyy
(``cppyy.cppdef``), so the simulation runs at C++ speed; Python only parses the
options and prints the result.

What is modelled
----------------
* Topology: N server nodes and one client node, each on its own
  point-to-point link (``PointToPointNetDevice`` ``DataRate`` = ``--link``,
  ``PointToPointChannel`` ``Delay`` = ``--rtt`` / 4, server i's ``--skew``·i
  longer, as incast's ``link.skew``) to one switch node, an IPv4
  router (``Ipv4GlobalRoutingHelper``), so a server-client round trip crosses
  four one-way link delays: base RTT = ``--rtt`` plus serialization.
* The switch port toward the client is the only bounded buffer: the
  ``DropTailQueue<Packet>`` of the switch's device on the client link, with
  ``MaxSize`` = ``"<--buffer>B"``. The traffic-control layer's queue disc
  (the pfifo_fast ``Ipv4AddressHelper::Assign`` installs) is removed from every
  device with ``TrafficControlHelper::Uninstall``, so IP hands packets straight
  to the device queues. Every other device queue holds 100000 packets
  (``MaxSize`` ``"100000p"``) and never drops. The point-to-point device keeps
  ns-3's flow control (``NetDeviceQueueInterface``): it stops its queue once
  the queue could not take another MTU (1500 bytes), and while it is stopped
  the traffic-control layer drops whatever IP hands it (trace ``TcDrop``). For
  full-size packets that is the same limit as the queue's own drop tail (a
  32768-byte port takes its 21st 1502-byte packet and then stops); small
  packets (pure ACKs, SYN-ACKs) meet the same MTU-sized threshold.
* TCP: ``TcpL4Protocol::SocketType`` is a subclass of ``TcpNewReno`` that only
  counts events (below); its window arithmetic is NewReno's.
  ``TcpL4Protocol::RecoveryType`` = ``TcpPrrRecovery`` (ns-3's default, PRR,
  RFC 6937) or ``TcpClassicRecovery`` with ``--recovery classic``.
  ``TcpSocketBase::Sack`` = ``--sack``/``--no-sack``; without SACK ns-3 still
  keeps its scoreboard, guessing one segment SACKed per duplicate ACK.
  ``TcpSocketBase::MinRto`` = ``--rto-min``; ``TcpSocketBase::ClockGranularity``
  = ``--clock-granularity`` (ns-3's default 1 ms); the RTO is
  ``max(SRTT + max(G, 4·RTTVAR), MinRto)``, doubled at each timeout (capped at
  60 s) and recomputed without back-off on every ACK of new data
  (``TcpSocketBase::NewAck``). ``TcpSocket::DelAckCount`` = 1 (every segment
  ACKed at once: delayed ACKs off). ``TcpSocket::SegmentSize`` = ``--mss``
  (payload bytes; default 1460 without timestamps, 1448 with, so the IP
  packet is 1500 bytes either way). ``TcpSocket::InitialCwnd`` = ``--init-cwnd``
  (10). ``TcpSocketBase::Timestamp`` = ``--timestamps`` (default off: ns-3's
  TSval counts whole milliseconds, so with timestamps every RTT sample on a
  100 µs path is 1 µs or a whole number of ms; without them samples are exact
  and Karn's rule applies). ``TcpSocketBase::LimitedTransmit`` =
  ``--limited-transmit`` (ns-3's default, on). ``TcpSocketBase::WindowScaling``
  on (default). ``TcpSocket::SndBufSize`` = ``TcpSocket::RcvBufSize`` =
  ``--socket-buffer`` (default 1 MiB: the advertised window never limits a
  sender, and a server's whole SRU fits its send buffer up to that size;
  larger SRUs are written as space frees). ``TcpSocket::TcpNoDelay`` true
  (default: no Nagle). ``TcpSocket::DataRetries`` = 1000000 (ns-3's default 6
  would abort a connection after 6 consecutive timeouts). ns-3 has no
  restart after idle (RFC 5681 4.1 / RFC 7661): ``TcpSocketBase`` keeps cwnd
  across idle periods; nothing to switch off.
* Workload: the client connects to every server at time 0 (three-way
  handshakes, not timed). Once all are connected, each block
  sends a ``--request``-byte request on every connection at the same instant,
  in a seeded random order per block (``--order shuffled``; ``fixed`` for
  server 0 first) -- the order in which they queue on the client's link. A
  server that has received a whole request writes ``--sru`` bytes into its
  socket. When every server's SRU for this block has been delivered to the
  client application, the next block's requests go out at once, in the
  chosen order (scheduled at the same instant, after the event that completed
  the block). No server turnaround delay, no jitter.
* Counters: ``timeouts`` counts retransmission-timer expiries with data
  outstanding: ``TcpSocketBase::ReTxTimeout`` is the only caller of
  ``TcpCongestionOps::CwndEvent(CA_EVENT_LOSS)``, which the TcpNewReno
  subclass counts (every expiry, back-to-back ones of a backed-off timer
  included; SYN retransmissions are not counted). ``fast_recoveries`` counts
  ``CongestionStateSet(CA_RECOVERY)`` (``TcpSocketBase::EnterRecovery``).
  ``drops`` counts the switch's ``TrafficControlLayer`` ``TcDrop`` trace (only
  the port toward the client ever stops) plus the port queue's ``Drop`` trace;
  ``other_drops`` the same traces of every other device queue and host (0
  unless something is wrong).
* Output: goodput = application bytes delivered (blocks × servers × SRU) × 8
  over the time from the first block's requests to the last block's
  completion (connection setup excluded), in Mbps; blocks done; timeouts;
  drops; block times; the wall time of the simulation itself (import and
  compilation of this file's C++ excluded, reported apart).
* Trace (``--trace FILE``): one line per event, ``time_ns kind server a b``,
  server i the i-th (-1 where the trace cannot tell): ``T`` a data segment
  a server sent (sequence number, bytes), ``R`` one the client received,
  ``D`` one the port dropped, ``C`` a server's congestion state (before,
  after: ns-3's ``TcpCongState_t``, 3 recovery, 4 loss), ``W`` its cwnd and
  ``I`` its bytes in flight (before, after, bytes), ``L`` a retransmission
  timeout (SND.UNA and the highest sequence sent; it goes out with the
  retransmission ``T`` of the same instant, which names the server). Set
  beside incast's capture (``--set trace.pcap=true``), it finds the first
  event where the two differ (docs/validation/ns3.md).

What is approximated
--------------------
* No Ethernet framing: a full segment is a 1502-byte PPP frame on the wire
  (1500-byte IP packet + 2-byte PPP header), not 1518 bytes + 20 of preamble
  and gap, so the best goodput at 1 Gbps is 1460/1502 = 972 Mbps
  (``best_goodput_mbps`` in the output), not 1460/1538 = 949 Mbps.
* The port limit counts PPP frames waiting in the queue; the frame being
  serialized has left the queue (``PointToPointNetDevice`` dequeues it). A
  32 KiB port therefore holds 21 waiting full-size packets plus one on the
  wire.
* The switch forwards in zero time; routing is a static IPv4 router.
* One request per connection per block, sent at one instant: requests queue
  behind one another on the client's link in the chosen order.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING or __package__:
    from incast.reference.ns3_cppyy import PPP_HEADER, TCP_IP_HEADERS, TS_OPTION, define, duration, rate, size
else:  # run as a script, perhaps isolated (-I): its folder may not be on sys.path
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from ns3_cppyy import PPP_HEADER, TCP_IP_HEADERS, TS_OPTION, define, duration, rate, size

#: Queue limit of every device queue but the switch port toward the client.
AMPLE_QUEUE = "100000p"


CPP = r"""
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace incast_ns3_ref {
using namespace ns3;

struct Counters {
    uint64_t timeouts = 0;
    uint64_t fast_recoveries = 0;
    uint64_t drops = 0;
    uint64_t other_drops = 0;
};
static Counters g_counters;
// The --trace file, when asked for, and each client port's server.
static FILE* g_trace = nullptr;
static std::map<uint16_t, uint32_t> g_server_of_port;
static long long NowNs() { return (long long)Simulator::Now().GetNanoSeconds(); }
static void TraceSegment(char kind, long server, const TcpHeader& h, uint32_t bytes) {
    if (!g_trace) return;
    fprintf(g_trace, "%lld %c %ld %u %u\n", NowNs(), kind, server, h.GetSequenceNumber().GetValue(), bytes);
}
static void TraceDrop(const TcpHeader& h, uint32_t bytes) {
    auto it = g_server_of_port.find(h.GetDestinationPort());
    TraceSegment('D', it == g_server_of_port.end() ? -1 : (long)it->second, h, bytes);
}

// TcpNewReno that counts retransmission timeouts and fast-recovery entries.
class CountingNewReno : public TcpNewReno {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("incast_ns3_ref::CountingNewReno")
                                .SetParent<TcpNewReno>()
                                .SetGroupName("Internet")
                                .AddConstructor<CountingNewReno>();
        return tid;
    }
    CountingNewReno() {}
    CountingNewReno(const CountingNewReno& other) : TcpNewReno(other) {}
    std::string GetName() const override { return "CountingNewReno"; }
    void CwndEvent(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCAEvent_t event) override {
        // Only TcpSocketBase::ReTxTimeout raises CA_EVENT_LOSS.
        if (event == TcpSocketState::CA_EVENT_LOSS) {
            ++g_counters.timeouts;
            if (g_trace) fprintf(g_trace, "%lld L -1 %u %u\n", NowNs(), tcb->m_lastAckedSeq.GetValue(),
                                 tcb->m_highTxMark.Get().GetValue());
        }
        TcpNewReno::CwndEvent(tcb, event);
    }
    void CongestionStateSet(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCongState_t state) override {
        if (state == TcpSocketState::CA_RECOVERY) ++g_counters.fast_recoveries;
        TcpNewReno::CongestionStateSet(tcb, state);
    }
    Ptr<TcpCongestionOps> Fork() override { return CopyObject<CountingNewReno>(this); }
};

struct Params {
    uint32_t servers = 1;
    uint64_t sru = 262144;
    uint32_t request = 100;
    uint64_t blocks = 1;
    uint64_t buffer = 32768;
    double rate_bps = 1e9;
    double rtt_s = 100e-6;
    uint64_t skew_ns = 0;
    double rto_min_s = 1e-3;
    double clock_granularity_s = 1e-3;
    bool sack = true;
    bool timestamps = false;
    bool limited_transmit = true;
    bool prr = true;
    bool shuffle = true;
    uint32_t mss = 1460;
    uint32_t init_cwnd = 10;
    uint32_t socket_buffer = 1 << 20;
    uint64_t seed = 1;
    double max_sim_s = 1000.0;
};

struct Result {
    uint64_t blocks_done = 0;
    double first_block_start_s = -1;
    double end_s = -1;
    double sim_now_s = 0;
    uint64_t timeouts = 0;
    uint64_t fast_recoveries = 0;
    uint64_t drops = 0;
    uint64_t other_drops = 0;
    uint32_t bottleneck_limit_bytes = 0;
    std::vector<double> block_time_s;
};

// A drop at the port toward the client: the port queue's Drop sees the PPP
// header first (`ppp`), the TcDrop of a stopped queue the IP header.
static void OnBottleneckDropped(Ptr<const Packet> pkt, bool ppp) {
    ++g_counters.drops;
    if (!g_trace) return;
    Ptr<Packet> c = pkt->Copy();
    if (ppp) {
        PppHeader header;
        c->RemoveHeader(header);
    }
    Ipv4Header ip;
    TcpHeader h;
    c->RemoveHeader(ip);
    c->RemoveHeader(h);
    TraceDrop(h, c->GetSize());
}
static void OnBottleneckDrop(Ptr<const Packet> pkt) { OnBottleneckDropped(pkt, true); }
static void OnBottleneckTcDrop(Ptr<const Packet> pkt) { OnBottleneckDropped(pkt, false); }
static void OnTx(uint32_t i, Ptr<const Packet> pkt, const TcpHeader& h, Ptr<const TcpSocketBase>) {
    if (pkt->GetSize() > 0) TraceSegment('T', i, h, pkt->GetSize());
}
static void OnRx(uint32_t i, Ptr<const Packet> pkt, const TcpHeader& h, Ptr<const TcpSocketBase>) {
    if (pkt->GetSize() > 0) TraceSegment('R', i, h, pkt->GetSize());
}
static void TraceChange(char kind, uint32_t i, uint64_t before, uint64_t after) {
    if (g_trace) fprintf(g_trace, "%lld %c %u %llu %llu\n", NowNs(), kind, i, (unsigned long long)before,
                         (unsigned long long)after);
}
static void OnCongState(uint32_t i, TcpSocketState::TcpCongState_t a, TcpSocketState::TcpCongState_t b) {
    TraceChange('C', i, a, b);
}
static void OnCwnd(uint32_t i, uint32_t a, uint32_t b) { TraceChange('W', i, a, b); }
static void OnInFlight(uint32_t i, uint32_t a, uint32_t b) { TraceChange('I', i, a, b); }
static void OnOtherDrop(Ptr<const Packet>) { ++g_counters.other_drops; }

// One server: answers each whole request with `sru` bytes.
class Server {
  public:
    Server(Ptr<Node> node, uint16_t port, const Params& p, uint32_t index) : m_p(p), m_index(index) {
        m_listen = Socket::CreateSocket(node, TcpSocketFactory::GetTypeId());
        m_listen->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
        m_listen->Listen();
        m_listen->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                                    MakeCallback(&Server::Accepted, this));
    }
  private:
    void Accepted(Ptr<Socket> s, const Address&) {
        m_conn = s;
        if (g_trace) {
            s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTx, m_index));
            s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, m_index));
            s->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&OnCwnd, m_index));
            s->TraceConnectWithoutContext("BytesInFlight", MakeBoundCallback(&OnInFlight, m_index));
        }
        s->SetRecvCallback(MakeCallback(&Server::Received, this));
        s->SetSendCallback(MakeCallback(&Server::Writable, this));
    }
    void Received(Ptr<Socket> s) {
        Ptr<Packet> pkt;
        while ((pkt = s->Recv())) {
            m_rx += pkt->GetSize();
            while (m_rx >= m_p.request) {
                m_rx -= m_p.request;
                m_pending += m_p.sru;
            }
        }
        Push();
    }
    void Writable(Ptr<Socket>, uint32_t) { Push(); }
    void Push() {
        while (m_pending > 0 && m_conn) {
            uint32_t room = m_conn->GetTxAvailable();
            if (room == 0) return;
            uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(m_pending, room));
            int sent = m_conn->Send(Create<Packet>(n));
            if (sent <= 0) return;
            m_pending -= static_cast<uint64_t>(sent);
        }
    }
    const Params& m_p;
    uint32_t m_index;
    Ptr<Socket> m_listen;
    Ptr<Socket> m_conn;
    uint64_t m_rx = 0;
    uint64_t m_pending = 0;
};

// The client: one connection per server, a barrier per block.
class Client {
  public:
    Client(Ptr<Node> node, const std::vector<Ipv4Address>& servers, uint16_t port, const Params& p, Result& r)
        : m_p(p), m_r(r), m_rng(p.seed) {
        uint32_t n = servers.size();
        m_got.assign(n, 0);
        m_order.resize(n);
        for (uint32_t i = 0; i < n; ++i) {
            m_order[i] = i;
            Ptr<Socket> s = Socket::CreateSocket(node, TcpSocketFactory::GetTypeId());
            s->Bind();
            if (g_trace) {
                Address local;
                s->GetSockName(local);
                g_server_of_port[InetSocketAddress::ConvertFrom(local).GetPort()] = i;
                s->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnRx, i));
            }
            m_index[PeekPointer(s)] = i;
            s->SetConnectCallback(MakeCallback(&Client::Connected, this), MakeCallback(&Client::Failed, this));
            s->SetRecvCallback(MakeCallback(&Client::Received, this));
            s->Connect(InetSocketAddress(servers[i], port));
            m_socks.push_back(s);
        }
    }
  private:
    void Connected(Ptr<Socket>) {
        if (++m_connected == m_socks.size()) StartBlock();
    }
    void Failed(Ptr<Socket>) { NS_FATAL_ERROR("a connection failed"); }
    void StartBlock() {
        m_blockStart = Simulator::Now();
        if (m_r.first_block_start_s < 0) m_r.first_block_start_s = m_blockStart.GetSeconds();
        std::fill(m_got.begin(), m_got.end(), 0);
        m_complete = 0;
        if (m_p.shuffle) std::shuffle(m_order.begin(), m_order.end(), m_rng);
        for (uint32_t i : m_order) m_socks[i]->Send(Create<Packet>(m_p.request));
    }
    void Received(Ptr<Socket> s) {
        uint32_t i = m_index[PeekPointer(s)];
        Ptr<Packet> pkt;
        while ((pkt = s->Recv())) {
            bool before = m_got[i] >= m_p.sru;
            m_got[i] += pkt->GetSize();
            if (!before && m_got[i] >= m_p.sru) ++m_complete;
        }
        if (m_complete == m_socks.size()) {
            m_complete = 0;  // guard against re-entry before StartBlock resets it
            Time now = Simulator::Now();
            m_r.block_time_s.push_back((now - m_blockStart).GetSeconds());
            m_r.end_s = now.GetSeconds();
            if (++m_r.blocks_done >= m_p.blocks) {
                Simulator::Stop();
            } else {
                // After this event: called here, the request on the connection whose
                // data completed the block would leave ahead of the chosen order.
                Simulator::ScheduleNow(&Client::StartBlock, this);
            }
        }
    }
    const Params& m_p;
    Result& m_r;
    std::mt19937_64 m_rng;
    std::vector<Ptr<Socket>> m_socks;
    std::map<Socket*, uint32_t> m_index;
    std::vector<uint64_t> m_got;
    std::vector<uint32_t> m_order;
    uint32_t m_connected = 0;
    uint32_t m_complete = 0;
    Time m_blockStart;
};

static Result Run(const Params& p, const std::string& trace) {
    g_counters = Counters();
    g_server_of_port.clear();
    g_trace = trace.empty() ? nullptr : fopen(trace.c_str(), "w");
    if (!trace.empty() && !g_trace) NS_FATAL_ERROR("--trace: cannot write " << trace);
    Result r;
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(p.seed);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(CountingNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(p.prr ? TcpPrrRecovery::GetTypeId() : TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(p.sack));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(p.timestamps));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(p.limited_transmit));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(p.rto_min_s)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(Seconds(p.clock_granularity_s)));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(p.mss));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(p.init_cwnd));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(p.socket_buffer));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(p.socket_buffer));
    Config::SetDefault("ns3::TcpSocket::TcpNoDelay", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(1000000));

    NodeContainer servers;
    servers.Create(p.servers);
    Ptr<Node> client = CreateObject<Node>();
    Ptr<Node> sw = CreateObject<Node>();
    InternetStackHelper stack;
    stack.Install(servers);
    stack.Install(client);
    stack.Install(sw);

    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(static_cast<uint64_t>(p.rate_bps))));
    p2p.SetChannelAttribute("Delay", TimeValue(Seconds(p.rtt_s / 4.0)));
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize(AMPLE_QUEUE)));

    Ipv4AddressHelper addresses;
    NetDeviceContainer all;
    std::vector<Ipv4Address> serverAddr;
    for (uint32_t i = 0; i < p.servers; ++i) {
        p2p.SetChannelAttribute("Delay", TimeValue(Seconds(p.rtt_s / 4.0) + NanoSeconds(i * p.skew_ns)));
        NetDeviceContainer d = p2p.Install(servers.Get(i), sw);
        std::string base = "10." + std::to_string(1 + i / 256) + "." + std::to_string(i % 256) + ".0";
        addresses.SetBase(Ipv4Address(base.c_str()), "255.255.255.0");
        Ipv4InterfaceContainer ifc = addresses.Assign(d);
        serverAddr.push_back(ifc.GetAddress(0));
        all.Add(d);
    }
    p2p.SetChannelAttribute("Delay", TimeValue(Seconds(p.rtt_s / 4.0)));
    NetDeviceContainer cd = p2p.Install(client, sw);
    addresses.SetBase("192.168.0.0", "255.255.255.0");
    addresses.Assign(cd);
    all.Add(cd);

    TrafficControlHelper tch;
    tch.Uninstall(all);

    Ptr<PointToPointNetDevice> port = DynamicCast<PointToPointNetDevice>(cd.Get(1));
    Ptr<Queue<Packet>> portQueue = port->GetQueue();
    portQueue->SetMaxSize(QueueSize(QueueSizeUnit::BYTES, static_cast<uint32_t>(p.buffer)));
    r.bottleneck_limit_bytes = portQueue->GetMaxSize().GetValue();
    for (uint32_t k = 0; k < all.GetN(); ++k) {
        Ptr<Queue<Packet>> q = DynamicCast<PointToPointNetDevice>(all.Get(k))->GetQueue();
        if (q == portQueue) {
            q->TraceConnectWithoutContext("Drop", MakeCallback(&OnBottleneckDrop));
        } else {
            q->TraceConnectWithoutContext("Drop", MakeCallback(&OnOtherDrop));
        }
    }
    // With no queue disc, the traffic-control layer drops what arrives while
    // the device's flow control has stopped its queue (less than an MTU free):
    // on the switch that is only ever the port toward the client.
    sw->GetObject<TrafficControlLayer>()->TraceConnectWithoutContext("TcDrop", MakeCallback(&OnBottleneckTcDrop));
    client->GetObject<TrafficControlLayer>()->TraceConnectWithoutContext("TcDrop", MakeCallback(&OnOtherDrop));
    for (uint32_t i = 0; i < p.servers; ++i) {
        servers.Get(i)->GetObject<TrafficControlLayer>()->TraceConnectWithoutContext(
            "TcDrop", MakeCallback(&OnOtherDrop));
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    const uint16_t portNo = 5000;
    std::vector<std::unique_ptr<Server>> apps;
    for (uint32_t i = 0; i < p.servers; ++i) apps.emplace_back(new Server(servers.Get(i), portNo, p, i));
    Client reader(client, serverAddr, portNo, p, r);

    Simulator::Stop(Seconds(p.max_sim_s));
    Simulator::Run();
    r.sim_now_s = Simulator::Now().GetSeconds();
    if (g_trace) {
        fclose(g_trace);
        g_trace = nullptr;
    }
    Simulator::Destroy();
    r.timeouts = g_counters.timeouts;
    r.fast_recoveries = g_counters.fast_recoveries;
    r.drops = g_counters.drops;
    r.other_drops = g_counters.other_drops;
    return r;
}
}  // namespace incast_ns3_ref
""".replace("AMPLE_QUEUE", f'"{AMPLE_QUEUE}"')


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Build and run one scenario; the result as ``incast run --json``-like keys."""
    t0 = time.perf_counter()
    cpp = define(CPP, "incast_ns3_ref")
    t1 = time.perf_counter()
    mss = args.mss if args.mss is not None else (1500 - TCP_IP_HEADERS - (TS_OPTION if args.timestamps else 0))
    p = cpp.Params()
    p.servers = args.servers
    p.sru = args.sru
    p.request = args.request
    p.blocks = args.blocks
    p.buffer = args.buffer
    p.rate_bps = args.link
    p.rtt_s = args.rtt
    p.skew_ns = round(args.skew * 1e9)
    p.rto_min_s = args.rto_min
    p.clock_granularity_s = args.clock_granularity
    p.sack = args.sack
    p.timestamps = args.timestamps
    p.limited_transmit = args.limited_transmit
    p.prr = args.recovery == "prr"
    p.shuffle = args.order == "shuffled"
    p.mss = mss
    p.init_cwnd = args.init_cwnd
    p.socket_buffer = args.socket_buffer
    p.seed = args.seed
    p.max_sim_s = args.max_sim_time
    r = cpp.Run(p, args.trace or "")
    t2 = time.perf_counter()

    blocks_done = int(r.blocks_done)
    span = r.end_s - r.first_block_start_s if blocks_done else 0.0
    delivered = blocks_done * args.servers * args.sru
    times_ms = sorted(float(x) * 1e3 for x in r.block_time_s)
    frame = mss + TCP_IP_HEADERS + (TS_OPTION if args.timestamps else 0) + PPP_HEADER

    def pct(q: float) -> float | None:
        if not times_ms:
            return None
        return times_ms[min(len(times_ms) - 1, max(0, math.ceil(q * len(times_ms)) - 1))]

    best = args.link * mss / frame / 1e6
    goodput = delivered * 8 / span / 1e6 if span > 0 else float("nan")
    return {
        "simulator": "ns-3 3.44",
        "goodput_mbps": goodput,
        "best_goodput_mbps": best,
        "utilization": goodput / best,
        "blocks": blocks_done,
        "blocks_requested": args.blocks,
        "bytes_delivered": delivered,
        "sim_time_s": span,
        "timeouts": int(r.timeouts),
        "fast_recoveries": int(r.fast_recoveries),
        "drops": int(r.drops),
        "other_drops": int(r.other_drops),
        "block_time_ms": {"p50": pct(0.5), "p99": pct(0.99), "max": times_ms[-1] if times_ms else None},
        "wall_s": t2 - t1,
        "setup_wall_s": t1 - t0,
        "settings": {
            "servers": args.servers,
            "sru": args.sru,
            "request": args.request,
            "buffer_bytes": int(r.bottleneck_limit_bytes),
            "link_bps": args.link,
            "rtt_s": args.rtt,
            "skew_s": args.skew,
            "rto_min_s": args.rto_min,
            "clock_granularity_s": args.clock_granularity,
            "sack": args.sack,
            "timestamps": args.timestamps,
            "limited_transmit": args.limited_transmit,
            "recovery": args.recovery,
            "segment_size": mss,
            "init_cwnd": args.init_cwnd,
            "socket_buffer": args.socket_buffer,
            "order": args.order,
            "seed": args.seed,
        },
    }


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="ns3.py",
        description="Synchronized reads (TCP incast) through one switch in ns-3 3.44.",
    )
    ap.add_argument("--servers", type=int, required=True, help="servers answering each block")
    ap.add_argument("--sru", type=size, default=size("256KiB"), help="bytes each server returns per block")
    ap.add_argument("--blocks", type=int, required=True, help="stop after this many blocks")
    ap.add_argument("--buffer", type=size, default=size("32KiB"), help="switch port toward the client, bytes")
    ap.add_argument("--rto-min", type=duration, default=duration("200ms"), help="TcpSocketBase::MinRto")
    ap.add_argument("--link", type=rate, default=rate("1Gbps"), help="rate of every link")
    ap.add_argument("--rtt", type=duration, default=duration("100us"), help="base RTT, rtt/4 per link")
    ap.add_argument(
        "--skew", type=duration, default=0.0, help="server i's link i*skew longer (incast's link.skew), whole ns"
    )
    ap.add_argument("--sack", action=argparse.BooleanOptionalAction, default=True, help="TcpSocketBase::Sack")
    ap.add_argument("--seed", type=int, default=1, help="seed of the request order (and ns-3's run number)")
    ap.add_argument("--request", type=size, default=size("100B"), help="request bytes per server and block")
    ap.add_argument("--order", choices=["shuffled", "fixed"], default="shuffled", help="request order per block")
    ap.add_argument(
        "--clock-granularity",
        type=duration,
        default=duration("1ms"),
        help="TcpSocketBase::ClockGranularity (ns-3 default 1ms)",
    )
    ap.add_argument(
        "--timestamps", action=argparse.BooleanOptionalAction, default=False, help="TcpSocketBase::Timestamp"
    )
    ap.add_argument(
        "--limited-transmit",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="TcpSocketBase::LimitedTransmit (ns-3 default on)",
    )
    ap.add_argument("--recovery", choices=["prr", "classic"], default="prr", help="TcpL4Protocol::RecoveryType")
    ap.add_argument("--mss", type=int, default=None, help="TcpSocket::SegmentSize (default 1460, 1448 with TS)")
    ap.add_argument("--init-cwnd", type=int, default=10, help="TcpSocket::InitialCwnd, segments")
    ap.add_argument("--socket-buffer", type=size, default=size("1MiB"), help="TcpSocket::SndBufSize and RcvBufSize")
    ap.add_argument("--max-sim-time", type=duration, default=duration("1000s"), help="stop here regardless")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--trace", metavar="FILE", help="write every segment, drop and state change here (docstring)")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.servers < 1 or args.blocks < 1 or args.sru < 1 or args.request < 1:
        parser().error("servers, blocks, sru and request must be positive")
    if abs(args.skew * 1e9 - round(args.skew * 1e9)) > 1e-6:
        parser().error(f"--skew: ns-3 counts time in whole nanoseconds, got {args.skew * 1e9:g} ns")
    if args.trace:
        try:
            open(args.trace, "w").close()
        except OSError as e:
            parser().error(f"--trace: cannot write {args.trace}: {e.strerror}")
    out = run(args)
    if args.json:
        print(json.dumps(out))
    else:
        bt = out["block_time_ms"]
        print(
            f"ns-3: {args.servers} servers, {out['blocks']}/{args.blocks} blocks in {out['sim_time_s'] * 1e3:.3f} ms\n"
            f"goodput      {out['goodput_mbps']:.1f} Mbps "
            f"({out['utilization']:.1%} of {out['best_goodput_mbps']:.1f})\n"
            f"block time   p50 {bt['p50']} ms, max {bt['max']} ms\n"
            f"timeouts     {out['timeouts']}\n"
            f"fast recov.  {out['fast_recoveries']}\n"
            f"drops        {out['drops']} (other queues {out['other_drops']})\n"
            f"wall         {out['wall_s']:.2f} s (+ {out['setup_wall_s']:.1f} s loading ns-3 and compiling)"
        )
    return 0 if out["blocks"] == args.blocks else 1


if __name__ == "__main__":
    sys.exit(main())
