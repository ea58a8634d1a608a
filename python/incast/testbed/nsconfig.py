"""Run inside one of the testbed's namespaces (``ip netns exec NS python -I nsconfig.py REQUEST``).

REQUEST is a JSON object: ``sysctls`` (dotted name -> value, written to
``/proc/sys`` of this namespace), ``offload_off`` (devices whose TSO, GSO and
GRO are turned off through the ``SIOCETHTOOL`` ioctl, so every frame is
MTU-sized, and checked off afterwards) and ``counters`` (print this
namespace's Tcp and TcpExt counters as one JSON object). Standard library
only, so that it starts in a few milliseconds; any failure is one line on
standard error and exit status 1.
"""

from __future__ import annotations

import ctypes
import fcntl
import json
import socket
import struct
import sys
from pathlib import Path

#: ``SIOCETHTOOL`` (linux/sockios.h).
_SIOCETHTOOL = 0x8946
#: (get, set) ethtool commands of each offload (linux/ethtool.h).
_OFFLOADS = {"tso": (0x1E, 0x1F), "gso": (0x23, 0x24), "gro": (0x2B, 0x2C)}
#: ``struct ifreq`` is 40 bytes on 64-bit Linux: a 16-byte name and a union holding ``ifr_data``.
_IFREQ_SIZE = 40


def _ethtool(sock: socket.socket, dev: str, cmd: int, data: int = 0) -> int:
    value = ctypes.create_string_buffer(struct.pack("II", cmd, data))
    ifreq = struct.pack("16sP", dev.encode(), ctypes.addressof(value)).ljust(_IFREQ_SIZE, b"\0")
    fcntl.ioctl(sock.fileno(), _SIOCETHTOOL, ifreq)
    result: int = struct.unpack("II", value.raw[:8])[1]
    return result


def offload_off(dev: str) -> None:
    """Turn TSO, GSO and GRO off on ``dev``; raise OSError if one stays on."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        for name, (get, set_) in _OFFLOADS.items():
            _ethtool(sock, dev, set_, 0)
            if _ethtool(sock, dev, get):
                raise OSError(f"{dev}: {name} is still on after turning it off")


def set_sysctl(name: str, value: str) -> None:
    """Write ``value`` to ``/proc/sys/<name with dots as slashes>``.

    An IPv6 setting of a kernel without IPv6 is skipped.
    """
    path = Path("/proc/sys", *name.split("."))
    if name.startswith("net.ipv6.") and not Path("/proc/sys/net/ipv6").exists():
        return
    path.write_text(f"{value}\n")


def counters() -> dict[str, int]:
    """This namespace's Tcp (``/proc/net/snmp``) and TcpExt (``/proc/net/netstat``) counters by name."""
    out: dict[str, int] = {}
    for path in ("/proc/net/snmp", "/proc/net/netstat"):
        lines = Path(path).read_text().splitlines()
        for head, values in zip(lines[::2], lines[1::2], strict=False):
            group, names = head.split(":", 1)
            if group in ("Tcp", "TcpExt"):
                out.update((n, int(v)) for n, v in zip(names.split(), values.split(":", 1)[1].split(), strict=False))
    return out


def main(request: str) -> int:
    """Carry out ``request`` (see the module docstring); the exit status."""
    req = json.loads(request)
    try:
        for name, value in req.get("sysctls", {}).items():
            set_sysctl(name, value)
        for dev in req.get("offload_off", []):
            offload_off(dev)
    except OSError as e:
        print(f"{getattr(e, 'filename', None) or ''} {e.strerror or e}".strip(), file=sys.stderr)
        return 1
    if req.get("counters"):
        print(json.dumps(counters()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
