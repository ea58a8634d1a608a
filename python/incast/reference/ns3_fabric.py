"""The fabric of the ns-3 traffic harness (``ns3_traffic.py``): one switch, or a leaf-spine with ECMP.

:data:`CPP` builds it in ns-3 3.44 (compiled with the harness's own C++), and
:func:`hops` gives the path of a host pair as the harness's ideal completion
time reads it (:mod:`ns3_ideal`).

What is modelled
----------------
* Star (``--hosts N``): every host on its own point-to-point link
  (``DataRate`` = ``--link``, ``Delay`` = ``--rtt`` / 4) to one switch node,
  an IPv4 router: a round trip between two hosts crosses four link delays.
* Leaf-spine (``--leaves L --spines S --hosts-per-leaf H``): L leaves of H
  hosts each, every leaf joined to every spine by a trunk (``--trunk``,
  ``--trunk-delay``). Host ``j`` sits on leaf ``j mod L`` (the engine's
  round-robin numbering, ``net::clos``). A host link's ``Delay`` is
  ``--rtt`` / 4 as on the star: the engine's cable plus its host's share of
  the RTT ((rtt − 4·cable) / 2, which the engine charges where a host
  receives), so a host pair's one-way time is the engine's.
* Routing: ``Ipv4GlobalRoutingHelper`` (shortest paths) everywhere. With
  ``--ecmp packet`` its ``RandomEcmpRouting`` spreads every packet at random
  over the equal-cost uplinks (ns-3's own ECMP, per packet). With ``--ecmp
  flow`` ns-3 3.44 has no per-flow ECMP, so each leaf also holds a
  :cpp:`FlowHashRouting` ahead of the global routing (``Ipv4ListRouting``
  priority 10): a packet for a host of another leaf goes up the uplink that
  hash-threshold picks (RFC 2992 §2: the 64-bit hash space cut into S equal
  regions) from the engine's hash (``net::ecmp``: splitmix64's finalizer over
  the addresses, then the ports and protocol, salted per leaf); every other
  packet falls through to the global routing (one path down).
* Each switch port is a queue disc (``TrafficControlHelper``) over a device
  queue of one packet (``MaxSize`` ``"1p"``), so what waits, waits in the
  disc; the hosts have no queue disc and a device queue that never drops
  (``"100000p"``), as the engine's NIC queues. Without ``--ecn-k`` the disc is
  a ``FifoQueueDisc``; with it a ``RedQueueDisc`` marking as a step at K:
  ``MinTh`` = ``MaxTh`` = K, ``Gentle`` false (with Gentle, RED would mark
  with probability up to 2·MaxTh instead of at K), ``QW`` 1 (the
  instantaneous queue, no averaging), ``UseEcn`` true, ``UseHardDrop``
  false: an ECN-capable packet arriving with K or more waiting is marked CE;
  one that is not ECN-capable is dropped there (RFC 3168's RED). K counts
  packets (``--ecn-k 20``) or bytes (``--ecn-k 30000B``), at every port.
* Buffer: the disc's internal queue is a ``DropTailQueue<QueueDiscItem>``
  that admits a packet only while the port's bytes stay within its limit:
  ``--buffer`` per port, or with ``--shared-alpha A`` one memory of
  ``--buffer`` × its ports for each switch, a port taking a packet only while
  its queue stays within A × its switch's memory free (Choudhury-Hahne
  dynamic thresholds, as the engine's ``shared:ALPHA``).
* Ethernet's framing, as the engine's (``net::frame``): every node's
  traffic-control layer (:cpp:`EthernetFraming`) pads each IP packet it
  sends to its Ethernet frame, header and FCS (18 bytes), 64 bytes at least
  (IEEE 802.3 §3.2.8, §4.4.2), so a queue disc and its limits and marking
  count frames; each device queue (:cpp:`WireQueue`) pads the PPP frame
  once more to the frame's link bytes, the frame with preamble and gap (20
  bytes, of which PPP's header is 2), so a frame's serialization is the
  engine's. A receiving node's IPv4 trims the padding
  (``Ipv4L3Protocol::Receive``).

What is approximated
--------------------
* A port's limit and its marking count the packets in its disc; one more
  waits in the device queue and one is on the wire.
* Switches forward in zero time; ns-3 counts time in nanoseconds, so a
  frame's serialization is rounded to one.
"""

from __future__ import annotations

#: Bytes an Ethernet frame adds to its IP packet: the MAC header (14) and the FCS (4).
ETHERNET_OVERHEAD = 18
#: The shortest Ethernet frame, bytes (its payload padded to 46).
MIN_FRAME = 64
#: Bytes of link time beside a frame: preamble with start delimiter (8) and inter-frame gap (12).
PREAMBLE_GAP = 20
#: The header ns-3's point-to-point device adds to every packet, taken out of the preamble and gap.
PPP_HEADER = 2


def frame_bytes(ip_bytes: int) -> int:
    """The Ethernet frame of an IP packet of ``ip_bytes``: what a switch port's queue counts."""
    return max(ip_bytes + ETHERNET_OVERHEAD, MIN_FRAME)


def wire_bytes(ip_bytes: int) -> int:
    """The link bytes of an IP packet of ``ip_bytes``: its frame with preamble and gap."""
    return frame_bytes(ip_bytes) + PREAMBLE_GAP


#: The fabric's C++: Ethernet's framing, the ports' shared memory, per-flow ECMP, and Build().
CPP = (
    r"""
#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace incast_ns3_traffic {
using namespace ns3;
"""
    + f"""
static const uint32_t kEthernetOverhead = {ETHERNET_OVERHEAD}, kMinFrame = {MIN_FRAME};
static const uint32_t kPreambleGapBeyondPpp = {PREAMBLE_GAP - PPP_HEADER};
"""
    + r"""
// A node's traffic-control layer that pads each IP packet to its Ethernet
// frame (header and FCS, 64 bytes at least) before a queue disc counts it.
class EthernetFraming : public TrafficControlLayer {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("incast_ns3_traffic::EthernetFraming")
                                .SetParent<TrafficControlLayer>()
                                .SetGroupName("TrafficControl")
                                .AddConstructor<EthernetFraming>();
        return tid;
    }
    void Send(Ptr<NetDevice> device, Ptr<QueueDiscItem> item) override {
        uint32_t ip = item->GetSize();
        item->GetPacket()->AddPaddingAtEnd(std::max(ip + kEthernetOverhead, kMinFrame) - ip);
        TrafficControlLayer::Send(device, item);
    }
};

// A device queue that pads each PPP frame to its Ethernet frame's link
// bytes (the preamble and gap beyond PPP's header), so it serializes as long.
class WireQueue : public DropTailQueue<Packet> {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("incast_ns3_traffic::WireQueue<Packet>")  // the helper names a queue by its item
                                .SetParent<DropTailQueue<Packet>>()
                                .SetGroupName("Network")
                                .AddConstructor<WireQueue>();
        return tid;
    }
    bool Enqueue(Ptr<Packet> p) override {
        p->AddPaddingAtEnd(kPreambleGapBeyondPpp);
        return DropTailQueue<Packet>::Enqueue(p);
    }
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

// splitmix64's finalizer, the engine's flow hash (net::ecmp): every input bit moves every output bit.
static uint64_t Mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// Per-flow ECMP on a leaf: a packet for another leaf's host goes up the
// uplink hash-threshold picks (RFC 2992 §2) from its 5-tuple's hash; any
// other packet is left to the next protocol of the node's Ipv4ListRouting.
class FlowHashRouting : public Ipv4RoutingProtocol {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("incast_ns3_traffic::FlowHashRouting")
                                .SetParent<Ipv4RoutingProtocol>()
                                .SetGroupName("Internet")
                                .AddConstructor<FlowHashRouting>();
        return tid;
    }
    const std::unordered_map<uint32_t, uint32_t>* m_leafOf = nullptr;  // host address -> leaf
    uint32_t m_leaf = 0;
    uint64_t m_seed = 0, m_salt = 0;
    std::vector<Ptr<NetDevice>> m_up;  // one uplink a spine
    std::vector<Ipv4Address> m_next;   // the spine's end of it

    Ptr<Ipv4Route> RouteOutput(Ptr<Packet>, const Ipv4Header&, Ptr<NetDevice>, Socket::SocketErrno& err) override {
        err = Socket::ERROR_NOROUTETOHOST;
        return nullptr;
    }
    bool RouteInput(Ptr<const Packet> p, const Ipv4Header& h, Ptr<const NetDevice>, const UnicastForwardCallback& ucb,
                    const MulticastForwardCallback&, const LocalDeliverCallback&, const ErrorCallback&) override {
        auto it = m_leafOf->find(h.GetDestination().Get());
        if (it == m_leafOf->end() || it->second == m_leaf) return false;
        // The transport header follows the IP header the node has taken off: its first 4 bytes are the ports.
        uint8_t b[4] = {0, 0, 0, 0};
        p->CopyData(b, 4);
        uint64_t hosts = (uint64_t(h.GetSource().Get()) << 32) | h.GetDestination().Get();
        uint64_t sport = (uint64_t(b[0]) << 8) | b[1], dport = (uint64_t(b[2]) << 8) | b[3];
        uint64_t key = Mix(Mix(m_seed ^ Mix(hosts)) ^ ((sport << 24) | (dport << 8) | h.GetProtocol()));
        uint64_t i = static_cast<uint64_t>((static_cast<unsigned __int128>(Mix(key ^ m_salt)) * m_up.size()) >> 64);
        Ptr<Ipv4Route> route = Create<Ipv4Route>();
        route->SetDestination(h.GetDestination());
        route->SetSource(h.GetSource());
        route->SetGateway(m_next[i]);
        route->SetOutputDevice(m_up[i]);
        ucb(route, p, h);
        return true;
    }
    void NotifyInterfaceUp(uint32_t) override {}
    void NotifyInterfaceDown(uint32_t) override {}
    void NotifyAddAddress(uint32_t, Ipv4InterfaceAddress) override {}
    void NotifyRemoveAddress(uint32_t, Ipv4InterfaceAddress) override {}
    void SetIpv4(Ptr<Ipv4>) override {}
    void PrintRoutingTable(Ptr<OutputStreamWrapper>, Time::Unit) const override {}
};

// What the fabric is: a star of `hosts` (leaves 0) or a leaf-spine, its links and its switch ports.
struct Shape {
    uint32_t hosts = 2;
    uint32_t leaves = 0, spines = 0, hosts_per_leaf = 0;
    double rate_bps = 1e9;
    double rtt_s = 100e-6;
    double trunk_bps = 1e9;
    double trunk_delay_s = 25e-6;
    bool ecmp_flow = true;
    uint64_t buffer = 32768;
    double alpha = -1;
    double ecn_k = -1;
    bool ecn_bytes = false;
    uint64_t seed = 1;
};

// The fabric built: its hosts (by number), their NICs, every switch port's disc.
struct Fabric {
    std::vector<Ptr<Node>> hosts;
    std::vector<Ipv4Address> addr;
    NetDeviceContainer nics;
    QueueDiscContainer ports;
    std::vector<Pool> pools;  // one a switch, sized before any port takes its address
    std::unordered_map<uint32_t, uint32_t> leaf_of;
    std::vector<uint32_t> uplinks;  // the ports (indices into `ports`) from each leaf to each spine, in that order
};

struct Port {
    Ptr<NetDevice> dev;
    uint32_t sw;
    double rate_bps, delay_s;
};

static void Build(const Shape& s, Fabric& fab) {
    bool star = s.leaves == 0;
    uint32_t n = star ? s.hosts : s.leaves * s.hosts_per_leaf;
    uint32_t nLeaves = star ? 1 : s.leaves, nSpines = star ? 0 : s.spines;
    Config::SetDefault("ns3::Ipv4GlobalRouting::RandomEcmpRouting", BooleanValue(!star && !s.ecmp_flow));
    NodeContainer hosts, leaves, spines;
    hosts.Create(n);
    leaves.Create(nLeaves);
    spines.Create(nSpines);
    NodeContainer every(hosts, leaves, spines);
    for (uint32_t i = 0; i < every.GetN(); ++i) every.Get(i)->AggregateObject(CreateObject<EthernetFraming>());
    InternetStackHelper stack;  // keeps each node's EthernetFraming as its TrafficControlLayer
    stack.Install(hosts);
    stack.Install(leaves);
    stack.Install(spines);
    PointToPointHelper p2p;
    WireQueue::GetTypeId();  // registered, for the helper's factory to find it by name
    p2p.SetQueue("incast_ns3_traffic::WireQueue", "MaxSize", QueueSizeValue(QueueSize("100000p")));
    Ipv4AddressHelper addresses;
    NetDeviceContainer all;
    std::vector<Port> ports;
    auto link = [&](Ptr<Node> a, Ptr<Node> b, double bps, double delay, const std::string& base) {
        p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(static_cast<uint64_t>(bps))));
        p2p.SetChannelAttribute("Delay", TimeValue(Seconds(delay)));
        NetDeviceContainer d = p2p.Install(a, b);
        addresses.SetBase(Ipv4Address(base.c_str()), "255.255.255.0");
        all.Add(d);
        return std::make_pair(d, addresses.Assign(d));
    };
    for (uint32_t j = 0; j < n; ++j) {
        uint32_t leaf = j % nLeaves;
        std::string base = "10." + std::to_string(1 + j / 256) + "." + std::to_string(j % 256) + ".0";
        auto [d, ifc] = link(hosts.Get(j), leaves.Get(leaf), s.rate_bps, s.rtt_s / 4.0, base);
        fab.hosts.push_back(hosts.Get(j));
        fab.addr.push_back(ifc.GetAddress(0));
        fab.nics.Add(d.Get(0));
        fab.leaf_of[ifc.GetAddress(0).Get()] = leaf;
        ports.push_back({d.Get(1), leaf, s.rate_bps, s.rtt_s / 4.0});
    }
    std::vector<Ptr<FlowHashRouting>> ecmp;
    for (uint32_t l = 0; l < nLeaves && nSpines > 0; ++l) {
        Ptr<FlowHashRouting> r = CreateObject<FlowHashRouting>();
        r->m_leafOf = &fab.leaf_of;
        r->m_leaf = l;
        r->m_seed = s.seed;
        r->m_salt = Mix(Mix(s.seed) ^ (0x6c656166ULL + l));  // "leaf" + l: each leaf salts apart
        for (uint32_t k = 0; k < nSpines; ++k) {
            std::string base = "11." + std::to_string(l) + "." + std::to_string(k) + ".0";
            auto [d, ifc] = link(leaves.Get(l), spines.Get(k), s.trunk_bps, s.trunk_delay_s, base);
            fab.uplinks.push_back(ports.size());
            ports.push_back({d.Get(0), l, s.trunk_bps, s.trunk_delay_s});
            ports.push_back({d.Get(1), nLeaves + k, s.trunk_bps, s.trunk_delay_s});
            r->m_up.push_back(d.Get(0));
            r->m_next.push_back(ifc.GetAddress(1));
        }
        ecmp.push_back(r);
    }
    TrafficControlHelper none;
    none.Uninstall(all);
    fab.pools.assign(nLeaves + nSpines, Pool());
    for (const Port& port : ports) fab.pools[port.sw].capacity += s.buffer;
    for (Pool& pool : fab.pools) pool.alpha = s.alpha;
    // Packets, unless K counts bytes: RED's thresholds are in the internal queue's unit.
    QueueSize ample = s.ecn_bytes ? QueueSize(QueueSizeUnit::BYTES, 0xffffffffu) : QueueSize("100000p");
    for (const Port& port : ports) {
        DynamicCast<PointToPointNetDevice>(port.dev)->GetQueue()->SetMaxSize(QueueSize("1p"));
        TrafficControlHelper tch;
        if (s.ecn_k >= 0) {
            tch.SetRootQueueDisc("ns3::RedQueueDisc", "MinTh", DoubleValue(s.ecn_k), "MaxTh", DoubleValue(s.ecn_k),
                                 "Gentle", BooleanValue(false), "QW", DoubleValue(1.0), "UseEcn", BooleanValue(true),
                                 "UseHardDrop", BooleanValue(false), "LinkBandwidth",
                                 DataRateValue(DataRate(static_cast<uint64_t>(port.rate_bps))), "LinkDelay",
                                 TimeValue(Seconds(port.delay_s)));
        } else {
            tch.SetRootQueueDisc("ns3::FifoQueueDisc");
        }
        Ptr<QueueDisc> disc = tch.Install(port.dev).Get(0);
        Ptr<PortQueue> q = CreateObject<PortQueue>();
        q->SetMaxSize(ample);
        q->m_pool = &fab.pools[port.sw];
        q->m_limit = s.buffer;
        disc->AddInternalQueue(q);
        fab.ports.Add(disc);
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    if (s.ecmp_flow) {
        for (uint32_t l = 0; l < ecmp.size(); ++l) {
            DynamicCast<Ipv4ListRouting>(leaves.Get(l)->GetObject<Ipv4>()->GetRoutingProtocol())
                ->AddRoutingProtocol(ecmp[l], 10);
        }
    }
}
}  // namespace incast_ns3_traffic
"""
)


def leaf(host: int, leaves: int) -> int:
    """The leaf of host ``host`` (round-robin, as the engine numbers a leaf-spine's hosts); 0 on a star."""
    return host % leaves if leaves else 0


def hops(
    src: int, dst: int, *, leaves: int, link: float, rtt: float, trunk: float, trunk_delay: float
) -> tuple[tuple[float, float], ...]:
    """The (rate bps, delay s) of each hop from host ``src`` to ``dst``, the sender's link first."""
    host = (link, rtt / 4)
    if leaf(src, leaves) == leaf(dst, leaves):
        return (host, host)
    return (host, (trunk, trunk_delay), (trunk, trunk_delay), host)
