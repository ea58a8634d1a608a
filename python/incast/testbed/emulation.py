"""Did the testbed emulate its port? The servers' round trip against what the switch buffer allows.

A frame waits at the client's port behind at most the buffer's bytes, so the
port adds at most ``buffer / rate`` to a round trip (0.26 ms for 32 KiB at
1 Gbps); the veths and the bridge add some microseconds when the machine keeps
up (an idle round trip here is about 10 us). When the machine's cores cannot
move the frames at the link rate, the frames wait in front of the port instead
(in the servers' NIC queues and the CPUs' backlogs), where no buffer limits
them: the port then seldom fills and drops, and the round trip grows past what
the buffer allows. The kernel's smoothed RTT, as the servers saw it when each
request arrived, tells the two apart: :data:`QUEUE_ALLOWANCE` times the
buffer's drain time leaves room for each server's own NIC queue, which in an
incast holds less than the port's buffer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from incast.units import format_buffer, format_rate

__all__ = ["QUEUE_ALLOWANCE", "PortCheck"]

#: How many times the buffer's drain time the servers' mean SRTT may reach before the port counts as not emulated.
QUEUE_ALLOWANCE = 2.0


@dataclass(frozen=True)
class PortCheck:
    """The client port at ``rate`` bit/s with ``buffer`` bytes, and the servers' mean kernel SRTT (None: unsampled)."""

    rate: int
    buffer: int
    srtt_ms: float | None

    @property
    def allowed_ms(self) -> float:
        """The longest the buffer holds a frame: its bytes at the link rate, in milliseconds."""
        return self.buffer * 8 / self.rate * 1e3

    @property
    def emulated(self) -> bool | None:
        """Did the round trip stay within :data:`QUEUE_ALLOWANCE` times :attr:`allowed_ms`? None when unsampled."""
        return None if self.srtt_ms is None else self.srtt_ms <= QUEUE_ALLOWANCE * self.allowed_ms

    def line(self) -> str | None:
        """One line saying the port was not emulated and what was measured; None when it was (or unsampled)."""
        if self.emulated is not False:
            return None
        assert self.srtt_ms is not None
        return (
            f"testbed: this machine did not emulate a {format_rate(self.rate)} port: the servers' kernel SRTT "
            f"averaged {self.srtt_ms:.2f} ms, where a {format_buffer(self.buffer)} buffer at {format_rate(self.rate)} "
            f"queues a frame at most {self.allowed_ms:.2f} ms (the frames waited in front of the port, not in it)"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: the port, the measured SRTT, the buffer's drain time and the verdict."""
        return {
            "rate_bps": self.rate,
            "buffer_bytes": self.buffer,
            "srtt_ms": self.srtt_ms,
            "allowed_ms": self.allowed_ms,
            "emulated": self.emulated,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PortCheck:
        """The check :meth:`to_dict` wrote (a testbed result's ``port_check``)."""
        return cls(int(d["rate_bps"]), int(d["buffer_bytes"]), d["srtt_ms"])
