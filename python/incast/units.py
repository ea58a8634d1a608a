"""Human units: parse ``"100us"``, ``"1Gbps"``, ``"32KiB"``, ``"64pkt"`` and print them back.

Every parser takes either a unit string or a plain number in SI base units
(seconds, bit/s, bytes) and returns the SI number. Strings must carry a unit:
a bare ``"100"`` is rejected rather than guessed, except ``"0"`` for a
duration. Parsing is exact (decimal, not binary floating point), so
``"1.1Gbps"`` is exactly 1 100 000 000 bit/s and ``"1.5KB"`` exactly 1500 bytes.

Errors are :class:`UnitError` (a ``ValueError``) whose message says what was
given and which forms are allowed, e.g.::

    '100xs' is not a duration: use a number with one of ps, ns, us, µs, ms, s (e.g. "100us"), or 0
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Final, Literal

__all__ = [
    "DURATION_UNITS",
    "PS_PER_S",
    "RATE_UNITS",
    "SIZE_UNITS",
    "UnitError",
    "format_buffer",
    "format_duration",
    "format_rate",
    "format_size",
    "parse_buffer",
    "parse_duration",
    "parse_rate",
    "parse_size",
    "seconds_to_ps",
]

PS_PER_S: Final = 10**12

#: Seconds per duration unit.
DURATION_UNITS: Final[dict[str, Decimal]] = {
    "ps": Decimal("1e-12"),
    "ns": Decimal("1e-9"),
    "us": Decimal("1e-6"),
    "µs": Decimal("1e-6"),  # MICRO SIGN
    "μs": Decimal("1e-6"),  # GREEK SMALL LETTER MU, which looks the same
    "ms": Decimal("1e-3"),
    "s": Decimal(1),
}
#: Bits per second per rate unit (SI prefixes: powers of 1000).
RATE_UNITS: Final[dict[str, int]] = {
    "bps": 1,
    "Kbps": 10**3,
    "Mbps": 10**6,
    "Gbps": 10**9,
    "Tbps": 10**12,
}
#: Bytes per size unit: KB/MB/GB are powers of 1000, KiB/MiB/GiB powers of 1024.
SIZE_UNITS: Final[dict[str, int]] = {
    "B": 1,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
}
_PACKET_UNITS: Final = ("pkt", "pkts")
#: Larger numbers are rejected before any arithmetic (no quantity here needs 10^40).
_MAX_DIGITS: Final = 40

_QUANTITY = re.compile(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([^\s0-9.][^\s]*)?\s*")

_DURATION_FORMS = 'a number with one of ps, ns, us, µs, ms, s (e.g. "100us"), or 0'
_RATE_FORMS = 'a number with one of bps, Kbps, Mbps, Gbps, Tbps (e.g. "1Gbps")'
_SIZE_FORMS = 'a whole number of bytes with one of B, KB, MB, GB, KiB, MiB, GiB (e.g. "32KiB")'
_BUFFER_FORMS = 'a size with one of B, KB, MB, GB, KiB, MiB, GiB (e.g. "32KiB"), or a packet count (e.g. "64pkt")'


class UnitError(ValueError):
    """A value that is not a valid quantity; the message names the allowed forms."""


def _split(text: str) -> tuple[Decimal, str] | None:
    """``"1.5 ms"`` -> ``(Decimal("1.5"), "ms")``; ``None`` if it is not number+unit."""
    m = _QUANTITY.fullmatch(text)
    return None if m is None else (Decimal(m.group(1)), m.group(2) or "")


def _number(value: object, what: str, forms: str) -> Decimal:
    """A plain (non-string) number given in SI units, as an exact decimal."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UnitError(f"{value!r} is not {what}: use {forms}")
    if isinstance(value, float) and not math.isfinite(value):
        raise UnitError(f"{value!r} is not {what}: it must be finite")
    if value < 0:
        raise UnitError(f"{value!r} is not {what}: it must not be negative")
    # repr() gives the shortest decimal that round-trips, so 1e-4 is exactly 0.0001.
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


def _quantity(value: object, units: Mapping[str, Decimal | int], what: str, forms: str) -> Decimal:
    """A number with a unit from ``units`` (string) or a plain SI number, as an exact decimal."""
    if not isinstance(value, str):
        return _number(value, what, forms)
    text = value.strip()
    if text.startswith("-"):
        raise UnitError(f"{value!r} is not {what}: it must not be negative")
    parts = _split(text)
    if parts is None or parts[1] not in units:
        if parts is not None and parts[1] == "":
            raise UnitError(f"{value!r} needs a unit: use {forms}")
        raise UnitError(f"{value!r} is not {what}: use {forms}")
    number, unit = parts
    if number.adjusted() > _MAX_DIGITS:
        raise UnitError(f"{value!r} is too large to be {what}")
    return number * units[unit]


def _whole(amount: Decimal, value: object, of_what: str) -> int:
    if amount != amount.to_integral_value():
        raise UnitError(f"{value!r} is not a whole number of {of_what}")
    return int(amount)


def parse_duration(value: object) -> float:
    """A duration in seconds, from ``"100us"``/``"1.5ms"``/``"0"`` or a number of seconds."""
    if isinstance(value, str) and value.strip() == "0":
        return 0.0
    return float(_quantity(value, DURATION_UNITS, "a duration", _DURATION_FORMS))


def parse_rate(value: object) -> int:
    """A rate in whole bit/s, from ``"1Gbps"``/``"2.5Mbps"`` or a number of bit/s."""
    return _whole(_quantity(value, RATE_UNITS, "a rate", _RATE_FORMS), value, "bit/s")


def parse_size(value: object) -> int:
    """A size in whole bytes, from ``"32KiB"``/``"1.5KB"``/``"100B"`` or a number of bytes."""
    return _whole(_quantity(value, SIZE_UNITS, "a size", _SIZE_FORMS), value, "bytes")


def parse_buffer(value: object) -> int | tuple[Literal["packets"], int]:
    """A buffer limit: bytes (as :func:`parse_size`), or ``("packets", n)`` for ``"64pkt"``."""
    if isinstance(value, str):
        parts = _split(value.strip())
        if parts is not None and parts[1] in _PACKET_UNITS:
            if parts[0].adjusted() > _MAX_DIGITS:
                raise UnitError(f"{value!r} is too large to be a buffer limit")
            return ("packets", _whole(parts[0], value, "packets"))
    units: dict[str, Decimal | int] = dict(SIZE_UNITS)
    return _whole(_quantity(value, units, "a buffer limit", _BUFFER_FORMS), value, "bytes")


def seconds_to_ps(seconds: float) -> int:
    """Seconds to whole picoseconds, rounded to nearest (ties to even), computed exactly."""
    return int((Decimal(repr(float(seconds))) * PS_PER_S).to_integral_value(ROUND_HALF_EVEN))


def _plain(d: Decimal) -> str:
    """``Decimal("100.000")`` -> ``"100"``, ``Decimal("1.50")`` -> ``"1.5"``, never exponent notation."""
    text = format(d.normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def format_duration(seconds: float) -> str:
    """Seconds as a readable string that parses back to the same float: ``1e-4`` -> ``"100us"``."""
    if seconds == 0:
        return "0"
    exact = Decimal(repr(float(seconds)))
    for unit in ("s", "ms", "us", "ns"):
        scaled = exact / DURATION_UNITS[unit]
        if scaled >= 1:
            return f"{_plain(scaled)}{unit}"
    return f"{_plain(exact / DURATION_UNITS['ps'])}ps"


def format_rate(bps: int) -> str:
    """bit/s as the largest unit that keeps it short and exact: ``10**9`` -> ``"1Gbps"``."""
    for unit in ("Tbps", "Gbps", "Mbps", "Kbps"):
        if bps >= RATE_UNITS[unit]:
            return f"{_plain(Decimal(bps) / RATE_UNITS[unit])}{unit}"
    return f"{bps}bps"


def format_size(nbytes: int) -> str:
    """Bytes with an exact binary or decimal unit when one fits: ``32768`` -> ``"32KiB"``."""
    for unit in ("GiB", "MiB", "KiB", "GB", "MB", "KB"):
        factor = SIZE_UNITS[unit]
        if nbytes >= factor and nbytes % factor == 0:
            return f"{nbytes // factor}{unit}"
    return f"{nbytes}B"


def format_buffer(limit: int | str) -> str:
    """A buffer limit as stored by the config (bytes, or ``"64pkt"``)."""
    return limit if isinstance(limit, str) else format_size(limit)
