"""A flow's ideal completion time on the ns-3 harness's empty fabric, the denominator of its slowdown.

The engine's formula (``workload::ideal``, docs/MODEL.md):
the sender writes all ``size`` bytes at the flow's arrival and sends full
segments (the last one shorter) while the bytes in flight fit ``min(cwnd,
window)``; cwnd starts at the initial window and grows in slow start by
``min(bytes acked, MSS)`` per ACK (RFC 5681 (3.1)), never leaving it. Each
segment crosses every hop store-and-forward: it leaves a port at ``max(its
arrival, the port's previous departure)`` + its frame's serialization and
reaches the next node one delay later. The receiver ACKs every segment, or
with a delayed-ACK timeout once more than one MSS is unacknowledged and else
at the timeout (RFC 1122 (4.2.3.2)); an ACK is a header-only frame that takes
the reverse path's one-way time. The flow completes when its last byte
reaches the receiver, or (``acked``) when that byte's ACK reaches the sender.

On the harness's frames, which are the engine's (:func:`ns3_fabric.wire_bytes`):
a segment's link bytes are its payload, the IPv4 and TCP headers and the
timestamp option when on, in an Ethernet frame of 64 bytes at least, with
preamble and gap; an ACK's are those of no payload. The hops are the
harness's (:func:`ns3_fabric.hops`). As the engine's, the handshake is left out.
"""

from __future__ import annotations

import os
import sys
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING or __package__:
    from incast.reference.ns3_fabric import wire_bytes
else:  # beside the harness run as a script (ns3_traffic.py puts its folder on sys.path)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from ns3_fabric import wire_bytes

#: A path: each hop's (rate bps, delay s), the sender's link first.
Hops = tuple[tuple[float, float], ...]


class Stack(NamedTuple):
    """The sender's and receiver's settings that shape a lone flow."""

    #: Payload bytes of a full segment (ns-3's SegmentSize; cwnd counts in it).
    mss: int
    #: Bytes of IPv4 and TCP headers with their options on every segment and ACK.
    headers: int
    #: Initial window, segments.
    init_cwnd: int
    #: The most bytes in flight the receive window (and send buffer) allow.
    window: int
    #: The delayed-ACK timeout, s, or 0 to ACK every segment.
    delack_s: float
    #: Does the completion end at the sender's ACK (else at the receiver)?
    acked: bool


def one_way(hops: Hops, frame: int) -> float:
    """Seconds a lone ``frame``-byte frame takes over ``hops`` (store-and-forward)."""
    return sum(frame * 8 / rate + delay for rate, delay in hops)


def ideal_fct(hops: Hops, back: Hops, stack: Stack, size: int) -> float:
    """Seconds from the arrival of a ``size``-byte flow alone on ``hops`` (its ACKs on ``back``) to its end."""
    busy = [0.0] * len(hops)
    ack_s = one_way(back, wire_bytes(stack.headers))
    cwnd, snd_una, snd_nxt = stack.init_cwnd * stack.mss, 0, 0
    rcv_nxt, rcv_wup, deadline = 0, 0, None
    data: deque[tuple[float, int]] = deque()  # arrivals at the receiver: (time, end)
    acks: deque[tuple[float, int]] = deque()  # arrivals at the sender: (time, cumulative ACK)

    def send(now: float) -> None:
        nonlocal snd_nxt
        while snd_nxt < size:
            length = min(size - snd_nxt, stack.mss)
            if snd_nxt - snd_una + length > min(cwnd, stack.window):
                return
            at = now
            for h, (rate, delay) in enumerate(hops):
                busy[h] = max(at, busy[h]) + wire_bytes(length + stack.headers) * 8 / rate
                at = busy[h] + delay
            snd_nxt += length
            data.append((at, snd_nxt))

    send(0.0)
    while True:
        first = min(t for t in (data[0][0] if data else None, acks[0][0] if acks else None, deadline) if t is not None)
        if data and data[0][0] == first:
            at, rcv_nxt = data.popleft()
            if rcv_nxt == size and not stack.acked:
                return at
            if stack.delack_s > 0 and rcv_nxt - rcv_wup <= stack.mss:
                deadline = deadline if deadline is not None else at + stack.delack_s
            else:
                acks.append((at + ack_s, rcv_nxt))
                rcv_wup, deadline = rcv_nxt, None
        elif acks and acks[0][0] == first:
            at, ack = acks.popleft()
            if ack == size:
                return at
            if ack > snd_una:
                # RFC 5681 (3.1): "cwnd += min (N, SMSS)" (2) during slow start.
                cwnd += min(ack - snd_una, stack.mss)
                snd_una = ack
            send(at)
        else:
            acks.append((first + ack_s, rcv_nxt))
            rcv_wup, deadline = rcv_nxt, None


def ideals(flows: list[tuple[int, int, int]], path: Callable[[int, int], Hops], stack: Stack) -> list[float]:
    """The ideal of every (sender, receiver, size) in ``flows``; ``path(src, dst)`` gives a pair's hops.

    Flows of one size on one path share their ideal, computed once.
    """
    seen: dict[tuple[Hops, int], float] = {}
    out = []
    for src, dst, size in flows:
        there, back = path(src, dst), path(dst, src)
        key = (there + back, size)
        if key not in seen:
            seen[key] = ideal_fct(there, back, stack, size)
        out.append(seen[key])
    return out
