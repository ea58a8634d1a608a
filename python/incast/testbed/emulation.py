"""Did the testbed emulate its port? The kernel's round trip against the simulator's, and what the buffer allows.

A frame waits at the client's port behind at most the buffer's bytes: the port
adds at most ``buffer / rate`` to a round trip (0.26 ms for 32 KiB at 1 Gbps).
The rest of a round trip (each server's own NIC queue, the link, the ACK that
waits for a second segment or for its timer) the simulator models as well, so
its servers' mean SRTT on the same scenario is what the kernel's should come to.
When the machine's cores cannot move the frames at the link rate, the frames
wait in front of the port instead (the CPUs' backlogs, deferred softirqs),
where no buffer limits them: the port seldom fills or drops, and the kernel's
round trip exceeds the simulator's by more than the whole buffer could hold.
The check is both: that excess, and a port that dropped under a tenth
(:data:`DROP_FACTOR`) of the simulator's drops. Either alone misses runs: the
simulator's own SRTT grows with its timeouts, and few drops are no fault where
the simulator has few.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from incast.units import format_buffer, format_rate

__all__ = ["DROP_FACTOR", "PortCheck", "port_check"]

#: A port that drops fewer than the simulator's drops over this was not where the frames queued.
DROP_FACTOR = 10


@dataclass(frozen=True)
class PortCheck:
    """The client port at ``rate`` bit/s with ``buffer`` bytes; the servers' mean SRTT on the kernel
    (``kernel_srtt_ms``, None when unsampled) and in the simulator (``model_srtt_ms``); the frames
    each side's port dropped."""

    rate: int
    buffer: int
    kernel_srtt_ms: float | None
    model_srtt_ms: float
    kernel_drops: int
    model_drops: int

    @property
    def allowed_ms(self) -> float:
        """The longest the buffer holds a frame: its bytes at the link rate, in milliseconds."""
        return self.buffer * 8 / self.rate * 1e3

    @property
    def emulated(self) -> bool | None:
        """Did the kernel's SRTT exceed the simulator's by at most :attr:`allowed_ms`, and its port drop at least
        a :data:`DROP_FACTOR`-th of the simulator's drops? None when the SRTT was not sampled."""
        if self.kernel_srtt_ms is None:
            return None
        queued = self.kernel_srtt_ms - self.model_srtt_ms <= self.allowed_ms
        return queued and self.kernel_drops * DROP_FACTOR >= self.model_drops

    def line(self) -> str | None:
        """One line saying the port was not emulated and what was measured; None when it was (or unsampled)."""
        if self.emulated is not False:
            return None
        assert self.kernel_srtt_ms is not None
        return (
            f"testbed: this machine did not emulate a {format_rate(self.rate)} port: the servers' kernel SRTT "
            f"averaged {self.kernel_srtt_ms:.2f} ms against the simulator's {self.model_srtt_ms:.2f} ms, "
            f"{self.kernel_srtt_ms - self.model_srtt_ms:.2f} ms more where a {format_buffer(self.buffer)} buffer "
            f"at {format_rate(self.rate)} queues a frame at most {self.allowed_ms:.2f} ms, and its port dropped "
            f"{self.kernel_drops:,} frames against the simulator's {self.model_drops:,} "
            "(the frames waited in front of the port, not in it)"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: the port, both SRTTs, the buffer's drain time and the verdict."""
        return {
            "rate_bps": self.rate,
            "buffer_bytes": self.buffer,
            "kernel_srtt_ms": self.kernel_srtt_ms,
            "simulator_srtt_ms": self.model_srtt_ms,
            "allowed_ms": self.allowed_ms,
            "kernel_drops": self.kernel_drops,
            "simulator_drops": self.model_drops,
            "emulated": self.emulated,
        }


def port_check(measured: dict[str, Any], model: dict[str, Any]) -> PortCheck:
    """The check of a testbed result's JSON object (``incast testbed --json``) against the simulator's."""
    shaping = measured["shaping"]
    return PortCheck(
        shaping["rate_bps"],
        shaping["buffer_bytes"],
        measured["server_srtt_ms"],
        model["server_srtt_ms"],
        measured["drops"],
        model["drops"],
    )
