"""A delay line for the testbed: every frame into the client waits ``delay`` seconds, with no netem.

This kernel has no netem, so the testbed adds a round trip the veths do not
have by holding frames in the kernel's netfilter queue (``nfnetlink_queue``):
an nftables rule in the client's namespace (``queue num 0`` on the ``input``
hook, TCP only) hands each arriving segment to queue 0, and this process,
run inside that namespace (``python -I delay.py DELAY``), notes when the
kernel told it of each one and accepts them in arrival order once they have
waited ``delay``. One verdict covers every segment up to an id
(``NFQNL_MSG_VERDICT_BATCH``), so a segment whose message the socket dropped
under load is still released with the ones around it.

The kernel copies only the segments' metadata (``NFQNL_COPY_META``); the
queue holds up to :data:`QUEUE_MAXLEN` segments and drops beyond that, as a
full emulator would. Segments wait from when this process read them, after
the kernel's own queueing to user space: :class:`Lateness` counts how much
later than ``delay`` each one went, the measure of how well a loaded machine
keeps the line (milliseconds suit it; a delay of microseconds would be mostly
the machine's own scheduling).

Standard library only: it runs with ``-I`` in a namespace, like
:mod:`incast.testbed.nsconfig`. It prints ``delaying`` on standard error once
bound, and on SIGTERM releases what it holds and prints one line of counts.
"""

from __future__ import annotations

import collections
import errno
import os
import select
import signal
import socket
import struct
import sys
import time

#: NETLINK_NETFILTER, and the queue subsystem's messages (linux/netfilter/nfnetlink_queue.h).
_NETLINK_NETFILTER = 12
_NFNL_SUBSYS_QUEUE = 3
_MSG_PACKET, _MSG_CONFIG, _MSG_VERDICT_BATCH = 0, 2, 3
_CFG_CMD, _CFG_PARAMS, _CFG_QUEUE_MAXLEN = 1, 2, 3
_CMD_BIND = 1
_COPY_META = 1
_PACKET_HDR = 1
_VERDICT_HDR = 2
_NF_ACCEPT = 1
_NLM_F_REQUEST = 1
_NLM_F_ACK = 4
_NLMSG_ERROR = 2
_SO_RCVBUFFORCE = 33
#: Segments the kernel's queue holds before it drops.
QUEUE_MAXLEN = 1 << 16
#: The queue number of the client's rule.
QUEUE = 0
#: SCHED_FIFO priority of the delay line (1-99): above every normal process, below the kernel's own threads.
REALTIME_PRIORITY = 10


def attribute(kind: int, payload: bytes) -> bytes:
    size = 4 + len(payload)
    return struct.pack("=HH", size, kind) + payload + b"\0" * (-size % 4)


def message(kind: int, queue: int, attrs: bytes, seq: int = 0, flags: int = _NLM_F_REQUEST) -> bytes:
    """One nfnetlink message of the queue subsystem: header, ``nfgenmsg`` (version 0, the queue), attributes."""
    body = struct.pack("=BB", socket.AF_UNSPEC, 0) + struct.pack(">H", queue) + attrs
    return struct.pack("=IHHII", 16 + len(body), (_NFNL_SUBSYS_QUEUE << 8) | kind, flags, seq, 0) + body


def bind_messages(queue: int) -> list[bytes]:
    """Bind ``queue``, copy metadata only, and let it hold :data:`QUEUE_MAXLEN` segments; each asks for an ACK."""
    config = [
        attribute(_CFG_CMD, struct.pack(">BBH", _CMD_BIND, 0, socket.AF_INET)),
        attribute(_CFG_PARAMS, struct.pack(">IB", 0, _COPY_META)),
        attribute(_CFG_QUEUE_MAXLEN, struct.pack(">I", QUEUE_MAXLEN)),
    ]
    return [message(_MSG_CONFIG, queue, a, seq, _NLM_F_REQUEST | _NLM_F_ACK) for seq, a in enumerate(config, 1)]


def accept_through(queue: int, packet_id: int) -> bytes:
    """Accept every segment of ``queue`` whose id is at most ``packet_id``."""
    return message(_MSG_VERDICT_BATCH, queue, attribute(_VERDICT_HDR, struct.pack(">II", _NF_ACCEPT, packet_id)))


def packet_ids(data: bytes) -> list[int]:
    """The ids of the queued segments a read from the socket announces (errors raise OSError)."""
    return _read(data)[0]


def acks(data: bytes) -> int:
    """How many requests a read from the socket acknowledges (errors raise OSError)."""
    return _read(data)[1]


def _read(data: bytes) -> tuple[list[int], int]:
    ids = []
    acked = 0
    at = 0
    while at + 16 <= len(data):
        size, kind = struct.unpack_from("=IH", data, at)
        if size < 16:
            break
        if kind == _NLMSG_ERROR:
            (code,) = struct.unpack_from("=i", data, at + 16)
            if code:
                raise OSError(-code, "nfnetlink_queue refused a request")
            acked += 1
        elif kind == (_NFNL_SUBSYS_QUEUE << 8) | _MSG_PACKET:
            a = at + 20
            while a + 4 <= at + size:
                alen, atype = struct.unpack_from("=HH", data, a)
                if alen < 4:
                    break
                if atype & 0x3FFF == _PACKET_HDR:
                    ids.append(struct.unpack_from(">I", data, a + 4)[0])
                a += alen + (-alen % 4)
        at += size + (-size % 4)
    return ids, acked


class Lateness:
    """How much later than the delay each released segment went: count, total and most, in seconds."""

    def __init__(self) -> None:
        self.segments = 0
        self.total_s = 0.0
        self.most_s = 0.0

    def add(self, late_s: float) -> None:
        self.segments += 1
        self.total_s += late_s
        self.most_s = max(self.most_s, late_s)

    def line(self, delay_s: float) -> str:
        mean = self.total_s / self.segments if self.segments else 0.0
        return (
            f"delay line: {self.segments} segments held {delay_s * 1e3:g} ms, "
            f"late by {mean * 1e6:.0f} us on average and {self.most_s * 1e6:.0f} us at most"
        )


def serve(delay_s: float, queue: int = QUEUE) -> Lateness:
    """Hold every segment of ``queue`` for ``delay_s``, until SIGTERM; what was released and how late."""
    stop = False

    def on_term(_signum: int, _frame: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_term)
    # A real-time priority: under load a normal process wakes milliseconds after its deadline.
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(REALTIME_PRIORITY))
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, _NETLINK_NETFILTER)
    sock.setsockopt(socket.SOL_SOCKET, _SO_RCVBUFFORCE, 64 * 2**20)
    sock.bind((0, 0))
    requests = bind_messages(queue)
    for m in requests:
        sock.send(m)
    acked = 0
    while acked < len(requests):
        acked += acks(sock.recv(1 << 16))
    held: collections.deque[tuple[float, int]] = collections.deque()
    late = Lateness()
    print("delaying", file=sys.stderr, flush=True)
    while not stop:
        now = time.monotonic()
        due = None
        while held and held[0][0] + delay_s <= now:
            arrived, due = held.popleft()
            late.add(now - arrived - delay_s)
        if due is not None:
            sock.send(accept_through(queue, due))
        wait = held[0][0] + delay_s - now if held else 0.1
        try:
            ready, _, _ = select.select([sock], [], [], max(0.0, wait))
        except InterruptedError:
            continue
        if ready:
            try:
                data = sock.recv(1 << 20)
            except OSError as e:  # ENOBUFS: messages lost, the segments still queued; a later batch frees them
                if e.errno != errno.ENOBUFS:
                    raise
                continue
            arrived = time.monotonic()
            held.extend((arrived, i) for i in packet_ids(data))
    if held:
        sock.send(accept_through(queue, held[-1][1]))
    return late


def main(argv: list[str]) -> int:
    """``delay.py SECONDS``: run the delay line in this namespace until SIGTERM."""
    delay_s = float(argv[0])
    late = serve(delay_s)
    print(late.line(delay_s), file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
