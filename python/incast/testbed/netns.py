"""The testbed's network: one client and N server namespaces on a bridge in a switch namespace.

::

    incast-tb-<id>-c        incast-tb-<id>-sw                     incast-tb-<id>-s<i>
    ic<id>-e0 ──veth── ic<id>-c ┐                    ┌ ic<id>-s<i> ──veth── ic<id>-e0
     10.0.0.1          (tbf: link rate,  bridge      │                        10.0.1.<i+1>
                        limit = buffer)  ic<id>-br ──┘                        (tbf: link rate)

Every name carries the run's prefix ``incast-tb-<id>`` (namespaces) or
``ic<id>`` (interfaces), where ``<id>`` is six random hex digits. Every veth has TSO, GSO and GRO
off and ``gso_max_segs 1`` (TCP keeps software GSO whatever the device says),
so every skb is one MTU-sized frame, as from a NIC without offloads. Every
veth's receive queue steers each flow to one CPU by its hash (RPS,
``net.core.rps_default_mask`` of every CPU in each namespace before its veths
exist): a veth hands a frame to the backlog of whichever CPU sent it
(``veth_xmit`` through ``netif_rx``), so without steering two frames of one flow
sent from two CPUs leave the bridge in either order, and the receiver's
duplicate ACKs make the sender retransmit frames that were never lost. Both ends of
every veth are created inside the run's own namespaces (``ip link add ... peer
... netns``), so nothing is ever created in, moved through or sent into the
host's namespace; deleting the namespaces deletes every veth and the bridge
with them.

The switch port toward the client is the client port's egress qdisc: ``tbf``
at the link rate, its byte limit the switch buffer. Each server's own egress is
a ``tbf`` at the link rate with a deep limit, a NIC that cannot send faster
than its line, so the bottleneck is the client port as in the papers. Both
count 24 bytes of overhead per frame (preamble, FCS and inter-frame gap), so
a frame occupies the line as long as the simulator's does.

With a delay line (``Shaping.delay_s``), an ``NFQUEUE`` rule on the client's
``INPUT`` chain hands every TCP segment into the client to queue 0 of its
namespace, where :mod:`incast.testbed.delay` holds it.

With ``tcp.send_loss``, a rule on the bridge's ``prerouting`` hook drops each data
segment a server sends at random as it reaches the switch: the sender believes it sent
it, as RUDE §4's kernel patch has it (the frame has taken its line time, which the
simulator's sender-side loss does not spend).

With ``link.loss``, every direction of every link loses frames at random on
the wire, as the simulator's links do: an nftables rule draws ``numgen random``
for each frame where it arrives, after the sender's queue and line time, and
drops it when the draw falls below the loss in parts per billion (IPv4 frames
only: the simulator's links carry no ARP). The links
into the switch lose theirs on the bridge's ``prerouting`` hook in the switch
namespace; the links out of it on the ``ingress`` hook of each host's NIC.

A registry file ``/run/incast-testbed/<id>.json`` records the owning process;
:func:`cleanup` removes the namespaces of runs whose owner is gone, found by
prefix only, and kills the processes left in them.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from incast.errors import ScenarioError
from incast.files import read_json, read_text
from incast.testbed.errors import TestbedError

__all__ = [
    "IPTABLES",
    "NAMESPACE_PREFIX",
    "REGISTRY",
    "Network",
    "Shaping",
    "alive",
    "cleanup",
    "command",
    "every_cpu_mask",
    "leftovers",
    "namespaces",
    "owner",
    "run_of",
]

#: Every namespace the testbed creates starts with this.
NAMESPACE_PREFIX = "incast-tb-"
#: One file per live run, naming its owner process.
REGISTRY = Path("/run/incast-testbed")
#: Subnet every host's route covers; the client is .0.1, server i is 10.0.1.(i+1).
SUBNET = "10.0.0.0/16"
#: Most servers one run may have (one address each in 10.0.1.0/24).
MAX_SERVERS = 250
#: Preamble (8), FCS (4) and inter-frame gap (12): line bytes of a frame that ``skb->len`` does not count.
FRAME_OVERHEAD = 24
#: Ethernet header counted in ``skb->len`` at the qdisc.
ETHERNET_HEADER = 14
#: Queue limit of each server's own egress: deep, so that a NIC never drops what TCP hands it.
SERVER_QUEUE = 4 * 2**20
#: Lateness of tbf's watchdog timer the token bucket absorbs, in microseconds (see :attr:`Shaping.burst`).
TIMER_SLACK_US = 100
#: nftables' random draw is in [0, LOSS_SCALE): the loss probability is kept in parts of it, as the engine keeps it.
LOSS_SCALE = 10**9
#: The nftables table (bridge family in the switch, netdev in each host) that holds a run's random loss.
LOSS_TABLE = "incast"
#: The nftables table (bridge family, in the switch) of the servers' sender-side loss.
SEND_LOSS_TABLE = "incast_send"
#: The iptables of the delay line's rule (Debian's iptables package; its xt targets over nftables).
IPTABLES = "iptables-nft"
#: The helper that sets sysctls and turns offloads off inside a namespace (stdlib only, run with ``-I``).
_NSCONFIG = Path(__file__).with_name("nsconfig.py")


@dataclass(frozen=True)
class Shaping:
    """How the switch and the NICs are shaped: ``rate`` in bit/s, ``buffer`` in bytes, ``mtu`` in bytes, and
    ``loss_ppb``, the probability in parts per billion that each direction of each link loses a frame; ``delay_s``,
    how long the client's delay line holds every TCP segment into it (0: no delay line); ``send_loss_ppb``, the
    probability in parts per billion that a server's data segment is lost as it leaves (``tcp.send_loss``)."""

    rate: int
    buffer: int
    mtu: int
    loss_ppb: int = 0
    delay_s: float = 0.0
    send_loss_ppb: int = 0

    @property
    def burst(self) -> int:
        """Token bucket depth: one frame, plus what the line sends while tbf's watchdog timer is late.

        tbf holds a frame until its bucket has the frame's tokens and arms an hrtimer for that moment;
        tokens beyond the bucket's depth are lost. With a bucket of one frame, every microsecond the
        timer fires late is a microsecond of line lost: on this project's 2-core VM a bulk flow through
        a 200 Mbit/s tbf of one-frame depth got 131.8 Mbit/s, with ``TIMER_SLACK_US`` more 188.2 (the
        line's most for 1448-byte payloads, 188.3). After an idle line the deeper bucket lets
        ``TIMER_SLACK_US`` of frames leave back to back: the price of keeping the rate.
        """
        return self.mtu + ETHERNET_HEADER + 64 + self.rate * TIMER_SLACK_US // 8_000_000

    @property
    def bucket_line_bytes(self) -> int:
        """The bucket's depth in bytes of line, as the simulator's ``link.token_bucket`` counts frames.

        tc hands ``burst`` to the kernel as ``TCA_TBF_BURST``, which ``tbf_change`` turns into time with
        ``psched_l2t_ns``, adding the ``overhead`` every frame is charged too (``FRAME_OVERHEAD``).
        """
        return self.burst + FRAME_OVERHEAD


@dataclass
class Network:
    """One run's namespaces and links; :meth:`build` creates them, :meth:`teardown` removes them."""

    servers: int
    run_id: str = field(default_factory=lambda: secrets.token_hex(3))

    @property
    def prefix(self) -> str:
        """Prefix of every namespace of this run."""
        return f"{NAMESPACE_PREFIX}{self.run_id}"

    @property
    def client(self) -> str:
        """The client's namespace."""
        return f"{self.prefix}-c"

    @property
    def switch(self) -> str:
        """The switch's namespace (the bridge and every switch port)."""
        return f"{self.prefix}-sw"

    def server(self, i: int) -> str:
        """Server ``i``'s namespace (from 0)."""
        return f"{self.prefix}-s{i}"

    @property
    def hosts(self) -> list[str]:
        """The client's namespace, then every server's."""
        return [self.client] + [self.server(i) for i in range(self.servers)]

    @property
    def all_namespaces(self) -> list[str]:
        """Every namespace of this run."""
        return [self.switch, *self.hosts]

    @property
    def nic(self) -> str:
        """The interface name of every host's NIC (inside its own namespace)."""
        return f"ic{self.run_id}-e0"

    @property
    def bridge(self) -> str:
        """The bridge in the switch namespace."""
        return f"ic{self.run_id}-br"

    def port(self, host: str) -> str:
        """The switch port (in the switch namespace) toward ``host``: ``ic<id>-c`` or ``ic<id>-s<i>``."""
        return f"ic{self.run_id}-{host.rsplit('-', 1)[1]}"

    @property
    def client_address(self) -> str:
        """The client's IPv4 address."""
        return "10.0.0.1"

    def server_address(self, i: int) -> str:
        """Server ``i``'s IPv4 address."""
        return f"10.0.1.{i + 1}"

    def address(self, host: str) -> str:
        """The IPv4 address of ``host`` (a namespace of this run)."""
        return self.client_address if host == self.client else self.server_address(int(host.rsplit("-s", 1)[1]))

    # -- building ------------------------------------------------------------

    def build(self, shaping: Shaping, sysctls: dict[str, dict[str, str]], routes: dict[str, list[str]]) -> None:
        """Create the namespaces, bridge, veths, addresses, routes and qdiscs.

        ``sysctls`` maps a namespace to the ``/proc/sys`` settings it gets
        (dotted names) before anything else is set up; ``routes`` the route
        options (``ip route`` words) of its route to the subnet. The run is
        registered first, so that a crash at any point leaves only what
        :func:`cleanup` finds.
        """
        REGISTRY.mkdir(parents=True, exist_ok=True)
        record = {"pid": os.getpid(), "start": _start_time(os.getpid()), "namespaces": self.all_namespaces}
        (REGISTRY / f"{self.run_id}.json").write_text(json.dumps(record))
        for ns in self.all_namespaces:
            command("ip", "netns", "add", ns)
            command("ip", "-n", ns, "link", "set", "lo", "up")
        every = {
            "net.ipv6.conf.all.disable_ipv6": "1",
            "net.ipv6.conf.default.disable_ipv6": "1",
            "net.core.rps_default_mask": every_cpu_mask(),
        }
        _nsconfig(self.switch, every, [])
        for host in self.hosts:
            _nsconfig(host, {**every, **sysctls.get(host, {})}, [])
        sw = self.switch
        command("ip", "-n", sw, "link", "add", self.bridge, "type", "bridge", "stp_state", "0", "forward_delay", "0")
        mtu = str(shaping.mtu)
        for host in self.hosts:
            port = self.port(host)
            one = ("mtu", mtu, "gso_max_segs", "1")  # one segment per skb, as from a NIC without TSO
            command(
                "ip", "-n", sw, "link", "add", port, *one, "type", "veth", "peer", "name", self.nic, *one, "netns", host
            )
            command("ip", "-n", sw, "link", "set", port, "master", self.bridge)
        _nsconfig(sw, {}, [self.port(h) for h in self.hosts] + [self.bridge])
        command("ip", "-n", sw, "link", "set", self.bridge, "up")
        for host in self.hosts:
            address = self.address(host)
            _nsconfig(host, {}, [self.nic])
            command("ip", "-n", host, "addr", "add", f"{address}/16", "dev", self.nic, "noprefixroute")
            command("ip", "-n", host, "link", "set", self.nic, "up")
            command("ip", "-n", host, "route", "add", SUBNET, "dev", self.nic, "src", address, *routes.get(host, []))
            command("ip", "-n", sw, "link", "set", self.port(host), "up")
        _tbf(sw, self.port(self.client), shaping, shaping.buffer)
        for i in range(self.servers):
            _tbf(self.server(i), self.nic, shaping, SERVER_QUEUE)
        if shaping.loss_ppb:
            _lossy(sw, "bridge", "type filter hook prerouting priority -300", shaping.loss_ppb)
            for host in self.hosts:
                _lossy(host, "netdev", f'type filter hook ingress device "{self.nic}" priority -500', shaping.loss_ppb)
        if shaping.send_loss_ppb:
            # Data only: a pure ACK is at most 80 bytes of IP (60 of TCP header); a SYN or FIN is spared.
            data = f'iifname != "{self.port(self.client)}" ip length > 80 tcp flags & (syn | fin) == 0'
            hook = "type filter hook prerouting priority -300"
            _lossy(sw, "bridge", hook, shaping.send_loss_ppb, table=SEND_LOSS_TABLE, frames=data)
        if shaping.delay_s:
            # nftables' own queue statement needs nft_queue, which this kernel lacks; xt's NFQUEUE is there.
            command("ip", "netns", "exec", self.client, IPTABLES, "-A", "INPUT", "-p", "tcp", "-j", "NFQUEUE")

    def teardown(self) -> None:
        """Kill every process left in this run's namespaces, delete them, drop the registry file."""
        _remove(self.run_id, [ns for ns in namespaces() if ns == self.prefix or ns.startswith(self.prefix + "-")])

    def lost(self) -> int:
        """Frames this run's links have lost on the wire (the counters of the rules ``link.loss`` built)."""
        places = [(self.switch, "bridge"), *((host, "netdev") for host in self.hosts)]
        return sum(_dropped(ns, family, LOSS_TABLE) for ns, family in places)

    def send_losses(self) -> int:
        """Data segments the servers' sender-side loss dropped (the counter of ``tcp.send_loss``'s rule)."""
        return _dropped(self.switch, "bridge", SEND_LOSS_TABLE)

    def counters(self, host: str) -> dict[str, int]:
        """The TCP counters of ``host``'s namespace (``/proc/net/snmp`` Tcp and ``/proc/net/netstat`` TcpExt)."""
        out = command("ip", "netns", "exec", host, sys.executable, "-I", str(_NSCONFIG), json.dumps({"counters": True}))
        counters: dict[str, int] = json.loads(out)
        return counters


def every_cpu_mask(cpus: int | None = None) -> str:
    """The cpumask of CPUs 0 to ``cpus - 1`` (this machine's by default): hex, a comma every 32 bits."""
    n = cpus or os.cpu_count() or 1
    digits = f"{(1 << n) - 1:x}"
    groups = [digits[max(0, end - 8) : end] for end in range(len(digits), 0, -8)]
    return ",".join(reversed(groups))


def _tbf(ns: str, dev: str, shaping: Shaping, limit: int) -> None:
    command(
        "tc",
        "-n",
        ns,
        "qdisc",
        "replace",
        "dev",
        dev,
        "root",
        "tbf",
        "rate",
        f"{shaping.rate}bit",
        "burst",
        str(shaping.burst),
        "limit",
        str(limit),
        "overhead",
        str(FRAME_OVERHEAD),
    )


def _lossy(
    ns: str, family: str, hook: str, loss_ppb: int, *, table: str = LOSS_TABLE, frames: str = "meta protocol ip"
) -> None:
    """In ``ns``'s ``table``, drop each of the ``frames`` on ``hook`` (IPv4 by default) when its random draw in
    [0, LOSS_SCALE) is below ``loss_ppb``, counting them (:func:`_dropped`).

    ARP is spared: the simulator's links carry no ARP, and a lost request would hold a connection a second.
    """
    rule = f"{frames} numgen random mod {LOSS_SCALE} < {loss_ppb} counter drop"
    chain = f"chain loss {{ {hook}; policy accept; {rule}; }}"
    command("ip", "netns", "exec", ns, "nft", f"table {family} {table} {{ {chain}; }}")


def _dropped(ns: str, family: str, table: str) -> int:
    """Frames the rules of ``ns``'s ``table`` (one :func:`_lossy` built) have dropped, from their counters."""
    listed = json.loads(command("ip", "netns", "exec", ns, "nft", "-j", "list", "table", family, table))
    return sum(
        e.get("counter", {}).get("packets", 0) for i in listed["nftables"] for e in i.get("rule", {}).get("expr", [])
    )


def _nsconfig(ns: str, sysctls: dict[str, str], offload_off: list[str]) -> None:
    """Set ``sysctls`` and turn TSO, GSO and GRO off on the ``offload_off`` devices, inside ``ns``."""
    request = json.dumps({"sysctls": sysctls, "offload_off": offload_off})
    command("ip", "netns", "exec", ns, sys.executable, "-I", str(_NSCONFIG), request)


def command(*argv: str) -> str:
    """Run ``argv``; its standard output, or TestbedError with the command and its first error line."""
    done = subprocess.run(argv, check=False, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        shown = " ".join(a if len(a) < 60 else a[:57] + "..." for a in argv[:8])
        raise TestbedError(f"testbed: `{shown}` failed: {reason}")
    return done.stdout


# ---------------------------------------------------------------------------
# Finding and removing runs by prefix.


def namespaces() -> list[str]:
    """Every network namespace whose name starts with the testbed's prefix, and only those."""
    try:
        names = [line.split()[0] for line in command("ip", "netns", "list").splitlines() if line.strip()]
    except TestbedError:
        return []
    return sorted(n for n in names if n.startswith(NAMESPACE_PREFIX))


def run_of(ns: str) -> str:
    """The run id in the name of one of the testbed's namespaces."""
    return ns[len(NAMESPACE_PREFIX) :].split("-", 1)[0]


def _start_time(pid: int) -> str | None:
    """The start time of ``pid`` in clock ticks since boot (``/proc/PID/stat`` field 22), or None if it is gone."""
    try:
        stat = read_text(f"/proc/{pid}/stat")
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


def owner(run_id: str) -> int | None:
    """The running process that owns run ``run_id`` (its registry file names it), or None if it is gone."""
    try:
        record = read_json(REGISTRY / f"{run_id}.json")
    except (OSError, ScenarioError):
        return None
    if not isinstance(record, dict):
        return None
    pid, start = record.get("pid"), record.get("start")
    if not isinstance(pid, int) or start is None or not alive(pid) or _start_time(pid) != start:
        return None
    return pid


def leftovers() -> dict[str, list[str]]:
    """Run id -> namespaces of every run whose owner process is gone (a crashed or killed run)."""
    runs: dict[str, list[str]] = {}
    for ns in namespaces():
        runs.setdefault(run_of(ns), []).append(ns)
    if REGISTRY.is_dir():
        for path in REGISTRY.glob("*.json"):
            runs.setdefault(path.stem, [])
    return {run_id: names for run_id, names in runs.items() if owner(run_id) is None}


def cleanup() -> dict[str, list[str]]:
    """Remove every leftover run (see :func:`leftovers`); returns what was removed."""
    found = leftovers()
    for run_id, names in found.items():
        _remove(run_id, names)
    return found


def _remove(run_id: str, names: Sequence[str]) -> None:
    """Kill the processes inside ``names`` (namespaces of one run), delete them and the run's registry file."""
    for sig in ("TERM", "KILL"):
        pids = [pid for ns in names for pid in _pids(ns)]
        if not pids:
            break
        subprocess.run(["kill", f"-{sig}", *pids], check=False, capture_output=True)
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline and any(map(alive, pids)):
            time.sleep(0.02)
    errors = []
    for ns in names:
        done = subprocess.run(["ip", "netns", "del", ns], check=False, capture_output=True, text=True)
        if done.returncode != 0 and ns in namespaces():
            errors.append(f"{ns}: {done.stderr.strip()}")
    (REGISTRY / f"{run_id}.json").unlink(missing_ok=True)
    if errors:
        raise TestbedError(f"testbed: could not delete {'; '.join(errors)}")


def alive(pid: int | str) -> bool:
    """Is process ``pid`` running (not gone, and not a zombie waiting for a parent that may never reap it)?"""
    try:
        stat = read_text(f"/proc/{pid}/stat")
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _pids(ns: str) -> list[str]:
    done = subprocess.run(["ip", "netns", "pids", ns], check=False, capture_output=True, text=True)
    return [p for p in done.stdout.split() if p.isascii() and p.isdigit() and int(p) != os.getpid()]
