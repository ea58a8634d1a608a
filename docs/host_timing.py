"""How long the testbed's hosts take to answer, and whose frames its port drops (docs/GUIDE.md, "The testbed").

Run as root: ``python docs/host_timing.py [OPTIONS...]``, where OPTIONS are
``incast testbed``'s (a scenario file, ``--servers``, ``--set`` ...). It runs
``incast testbed`` once and records every TCP frame in the run's switch
namespace with a packet socket (kernel timestamps): the frames each server
hands the switch, the client's ACKs, and what the client's port lets through.
Then it runs ``incast run`` with the same options and ``--pcap`` and prints,
for both:

- the servers' turnaround: from an ACK passing the switch toward a server to
  the next segment that server hands the switch (not after a request, where
  the application's wake-up counts too), when nothing of it was on
  its link in the 130 us before (so no frame waited behind another): its
  percentiles, and its mean beyond the 1st percentile (the fixed part), the
  mean of ``link.host_jitter``'s exponential draws;
- the share of first transmissions and of retransmissions the client's port
  dropped: a frame offered by a server that never left toward the client.

The simulator's turnaround is its fixed host time, so only the kernel's is
printed.
"""

from __future__ import annotations

import bisect
import collections
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RECORD = struct.Struct("<QIIHHIIHB")  # ns, src, dst, sport, dport, seq, ack, payload, where
OFFERED, PASSED, ACK = 1, 2, 3  # a server's frame in; a frame out toward the client; the client's frame in
SERVER_PORT = 7470  # incast serve's port; the simulator's servers use 5001
SO_TIMESTAMPNS = 35


def sniff(out: Path) -> None:
    """Record every TCP frame on this namespace's interfaces until SIGTERM."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 20)
    f, held = out.open("wb"), bytearray()

    def stop(*_: object) -> None:
        f.write(held)
        f.close()
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    while True:
        data, anc, _, addr = s.recvmsg(128, 64)
        if len(data) < 54 or data[12:14] != b"\x08\x00" or data[23] != 6:
            continue
        ihl, total = (data[14] & 15) * 4, struct.unpack("!H", data[16:18])[0]
        src, dst = struct.unpack("!II", data[26:34])
        sport, dport, seq, ack, off = struct.unpack("!HHIIB", data[14 + ihl : 27 + ihl])
        outgoing, client_port = addr[2] == socket.PACKET_OUTGOING, addr[0].endswith("-c")
        where = PASSED if outgoing and client_port else ACK if client_port else OFFERED if not outgoing else 0
        stamps = [struct.unpack("qq", d[:16]) for _, t, d in anc if t == SO_TIMESTAMPNS]
        ts = stamps[0][0] * 10**9 + stamps[0][1] if stamps else 0
        if where:
            held += RECORD.pack(ts, src, dst, sport, dport, seq, ack, total - ihl - (off >> 4) * 4, where)


def kernel(options: list[str], out: Path) -> list[tuple[int, int, int, int, int, int]]:
    """Run the testbed with a recorder in its switch namespace; (ns, where, server, seq, ack, payload) rows."""
    before = set(subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split())
    bed = subprocess.Popen(["incast", "testbed", *options, "--json"], stdout=subprocess.PIPE, text=True)
    rec = None
    for _ in range(2000):
        names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
        ns = [n for n in names if n.startswith("incast-tb-") and n.endswith("-sw") and n not in before]
        if ns:
            rec = subprocess.Popen(["ip", "netns", "exec", ns[0], sys.executable, "-I", __file__, "--record", str(out)])
            break
        time.sleep(0.005)
    stdout, _ = bed.communicate()
    if rec is not None:
        rec.send_signal(signal.SIGTERM)
        rec.wait()
    if bed.returncode != 0 or rec is None:
        raise SystemExit(f"error: incast testbed failed (status {bed.returncode}) or its namespace was not found")
    run = json.loads(stdout.strip().splitlines()[-1])
    print(f"kernel: {run['goodput_mbps']:.1f} Mbps, {run['timeouts']} timeouts, {run['drops']} drops")
    b = out.read_bytes()
    rows = []
    for i in range(0, len(b) - RECORD.size + 1, RECORD.size):
        ts, src, dst, sport, dport, seq, ack, payload, where = RECORD.unpack_from(b, i)
        server = src if sport == SERVER_PORT else dst
        rows.append((ts, where, server, seq, ack, payload))
    return rows


def pcap_data(path: Path) -> list[tuple[int, int, int, int]]:
    """(ns, source address, seq, payload) of every data segment from port 5001 in a nanosecond pcap file."""
    b, at, out = path.read_bytes(), 24, []
    while at < len(b):
        sec, nsec, incl, _ = struct.unpack_from("<IIII", b, at)
        frame, at = b[at + 16 : at + 16 + incl], at + 16 + incl
        ihl, total = (frame[14] & 15) * 4, struct.unpack_from("!H", frame, 16)[0]
        sport, _, seq, _, off = struct.unpack_from("!HHIIB", frame, 14 + ihl)
        payload = total - ihl - (off >> 4) * 4
        if sport == 5001 and payload > 0:
            out.append((sec * 10**9 + nsec, struct.unpack_from("!I", frame, 26)[0], seq, payload))
    return out


def simulator(options: list[str], pcaps: Path) -> list[tuple[int, int, int, int, int, int]]:
    """Run the simulator with pcap files; the same rows (its servers' NICs as offered, the client's as passed)."""
    out = subprocess.run(["incast", "run", *options, "--json", "--pcap", str(pcaps)], check=True, capture_output=True)
    run = json.loads(out.stdout)
    print(f"simulator: {run['goodput_mbps']:.1f} Mbps, {run['timeouts']} timeouts, {run['drops']} drops")
    rows = []
    for f in pcaps.glob("*.pcap"):
        where = PASSED if f.name == "client.pcap" else OFFERED  # a server's file holds what it sent
        rows += [(ts, where, server, seq, 0, payload) for ts, server, seq, payload in pcap_data(f)]
    return rows


def turnaround_us(rows: list[tuple[int, int, int, int, int, int]]) -> list[float]:
    """For each segment a server offers with its link idle for 130 us, the time since the client's last
    frame to it, when that was an ACK (after a request the application's wake-up counts too: that is
    ``workload.server_jitter``'s, and ``incast validate`` measures it as ``host_cost``)."""
    client, data = collections.defaultdict(list), collections.defaultdict(list)
    for ts, where, server, _, _, payload in rows:
        if where == ACK:
            client[server].append((ts, payload > 0))
        elif where == OFFERED and payload > 0:
            data[server].append(ts)
    out = []
    for server, sent in data.items():
        frames = sorted(client[server])
        times, prev = [t for t, _ in frames], None
        for ts in sorted(sent):
            i = bisect.bisect_right(times, ts) - 1
            idle = prev is None or ts - prev > 130_000
            if i >= 0 and idle and not frames[i][1] and ts - times[i] < 1_000_000:
                out.append((ts - times[i]) / 1000)
            prev = ts
    return sorted(out)


def drops(rows: list[tuple[int, int, int, int, int, int]]) -> dict[str, tuple[int, int]]:
    """(sent, dropped) of first transmissions and of retransmissions at the client's port."""
    offers: dict[tuple[int, int], list[list[int]]] = collections.defaultdict(list)
    for ts, where, server, seq, _, payload in sorted(rows):
        if where == OFFERED and payload > 0:
            offers[(server, seq)].append([ts, 0])
        elif where == PASSED and payload > 0 and (server, seq) in offers:
            waiting = [o for o in offers[(server, seq)] if o[0] <= ts and not o[1]]
            if waiting:
                waiting[-1][1] = 1
    out = {"first": [0, 0], "retransmitted": [0, 0]}
    for sends in offers.values():
        for k, (_, passed) in enumerate(sends):
            c = out["first" if k == 0 else "retransmitted"]
            c[0] += 1
            c[1] += not passed
    return {k: (v[0], v[1]) for k, v in out.items()}


def report(name: str, rows: list[tuple[int, int, int, int, int, int]]) -> None:
    for kind, (sent, dropped) in drops(rows).items():
        print(f"{name}: {kind} transmissions {sent:,}, dropped {dropped:,} ({dropped / max(1, sent):.3f})")


def main() -> int:
    if sys.argv[1:2] == ["--record"]:
        sniff(Path(sys.argv[2]))
        return 0
    options = sys.argv[1:]
    with tempfile.TemporaryDirectory(prefix="incast-timing-") as tmp:
        rows = kernel(options, Path(tmp) / "frames.bin")
        t = turnaround_us(rows)
        if t:
            q = [t[int(p * (len(t) - 1))] for p in (0.01, 0.25, 0.5, 0.75, 0.9)]
            spread = " / ".join(f"{x:.1f}" for x in q)
            mean = sum(t) / len(t)
            print(f"kernel: server turnaround over {len(t):,} segments, p1 / 25 / 50 / 75 / 90: {spread} us;")
            print(f"        mean {mean:.1f} us, {mean - q[0]:.1f} us beyond the p1 (the fixed part)")
        else:
            print("kernel: no segment left a server with its link idle after an ACK: no turnaround to measure")
        report("kernel", rows)
        report("simulator", simulator(options, Path(tmp) / "pcap"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
