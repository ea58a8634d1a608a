"""What the running kernel offers the testbed: privileges, tools, the jiffy clock, congestion controls.

The retransmission and delayed-ACK timers of Linux TCP are jiffy timers: an
RTO is armed as a whole number of ticks (``usecs_to_jiffies``, rounding up)
and fires on a tick, so at HZ=250 no real RTO is shorter than one 4 ms tick
whatever ``tcp_rto_min_us`` says — the granularity floor of CMU09 §6.
:func:`clock` finds HZ from the kernel's build configuration when it is
readable, and otherwise measures it by watching ``jiffies`` in
``/proc/timer_list`` advance.
"""

from __future__ import annotations

import gzip
import math
import os
import platform
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from incast.errors import ScenarioError
from incast.files import read_bytes, read_text
from incast.testbed.errors import TestbedUnavailable

__all__ = ["KernelClock", "available_congestion_controls", "clock", "require_privileges"]

#: HZ values Linux can be built with (``kernel/Kconfig.hz``); a measurement is rounded to the nearest.
_KNOWN_HZ = (100, 250, 300, 1000)
#: Commands the testbed runs; ``ip`` and ``tc`` come with iproute2.
_TOOLS = ("ip", "tc")


@dataclass(frozen=True)
class KernelClock:
    """The kernel's timer tick: ``hz`` ticks per second, ``source`` saying how it was found."""

    hz: int
    source: str

    @property
    def jiffy_s(self) -> float:
        """One tick, in seconds (4 ms at HZ=250)."""
        return 1.0 / self.hz

    def rto_floor_s(self, rto_min_s: float) -> float:
        """The shortest RTO the kernel can arm with this RTO_min: RTO_min rounded up to whole ticks, at least one."""
        ticks = max(1, math.ceil(round(rto_min_s * self.hz, 9)))
        return ticks / self.hz


def require_privileges() -> None:
    """Raise :class:`TestbedUnavailable` unless this process is root on Linux with ``ip`` and ``tc``."""
    if platform.system() != "Linux":
        raise TestbedUnavailable(f"testbed: needs Linux network namespaces; this is {platform.system()}")
    if os.geteuid() != 0:
        raise TestbedUnavailable("testbed: needs root (network namespaces, veths, a bridge and qdiscs); run as root")
    missing = [tool for tool in _TOOLS if shutil.which(tool) is None]
    if missing:
        raise TestbedUnavailable(f"testbed: {' and '.join(missing)} not found; install iproute2")


def available_congestion_controls() -> list[str]:
    """The congestion controls this kernel has built in or loaded (``tcp_available_congestion_control``)."""
    return read_text("/proc/sys/net/ipv4/tcp_available_congestion_control").split()


def clock() -> KernelClock:
    """The kernel's HZ: ``CONFIG_HZ`` from ``/boot/config-<release>`` or ``/proc/config.gz``, else measured."""
    release = platform.release()
    for path in (Path(f"/boot/config-{release}"), Path("/proc/config.gz")):
        try:
            text = gzip.decompress(read_bytes(path)).decode() if path.suffix == ".gz" else read_text(path)
        except (OSError, ScenarioError):
            continue
        if m := re.search(r"^CONFIG_HZ=([0-9]+)$", text, re.MULTILINE):
            return KernelClock(int(m.group(1)), f"CONFIG_HZ in {path}")
    return KernelClock(_measure_hz(), "measured from jiffies in /proc/timer_list")


def _jiffies() -> int:
    text = read_text("/proc/timer_list")
    m = re.search(r"^jiffies: ([0-9]+)$", text, re.MULTILINE)
    if m is None:
        raise TestbedUnavailable("testbed: cannot find the kernel's HZ (no CONFIG_HZ, no jiffies in /proc/timer_list)")
    return int(m.group(1))


def _measure_hz(span_s: float = 0.2) -> int:
    """Ticks per second over ``span_s`` of wall time, rounded to the nearest HZ Linux can be built with."""
    j0, t0 = _jiffies(), time.monotonic()
    time.sleep(span_s)
    j1, t1 = _jiffies(), time.monotonic()
    rate = (j1 - j0) / (t1 - t0)
    return min(_KNOWN_HZ, key=lambda hz: abs(hz - rate))
