"""Scenario: the Python mirror of the engine's ``Scenario`` (``crates/incast-sim/src/scenario.rs``).

A scenario is written in TOML or passed as keyword fields; every quantity
accepts a unit string (``"100us"``, ``"1Gbps"``, ``"32KiB"``) or a plain number
in SI base units (seconds, bit/s, bytes)::

    servers = 16
    seed = 1
    blocks = 100            # optional
    duration = "1s"         # optional; if neither blocks nor duration is given, duration = 1s
    [link]
    rate = "1Gbps"
    rtt = "100us"           # round-trip propagation delay
    loss = 0.0              # probability that a link loses a frame (random loss)
    [topology]
    kind = "star"           # or "tree" (edge_switches, trunk_rate, trunk_delay), "graph" (see incast.topology)
    [switch]
    buffer = "32KiB"        # or "64pkt"
    buffer_model = "static" # or "qos:4" (a quarter of each port), "shared:1" (dynamic thresholds, alpha 1)
    ecn_threshold = "off"   # or a size / "20pkt": mark ECN-capable frames above it (DCTCP)
    pause = false           # Ethernet flow control (802.3x PAUSE); see incast-sim net/pause.rs
    pause_xoff = "16KiB"    # a port above this pauses the links feeding it
    pause_xon = "8KiB"      # ... and releases them once drained to this
    pause_quanta = 65535    # pause time per PAUSE frame, in 512-bit-time quanta
    pfc = false             # per-priority flow control (802.1Qbb PFC) instead of PAUSE, same thresholds;
                            # see incast-sim net/pfc.rs (needs traffic in more than one priority)
    pfc_priorities = "all"  # or a list, e.g. [3]: the lossless priorities; the others drop
    rude_policy = "pass"    # or "drop": kill rude flows (RUDE's policing router)
    [tcp]
    mss = 1460
    init_cwnd = 10
    rcv_wnd = "64KiB"
    dupack_threshold = 3
    rto_min = "200ms"
    rto_max = "120s"
    rto_initial = "1s"
    clock_granularity = "0"     # 0 = high-resolution timers; "1ms"/"4ms" = jiffy clock
    delayed_ack = "40ms"        # or "off", "linux", "adaptive"
    variant = "newreno"         # or "reno", "sack", "cubic", "dctcp"
    limited_transmit = false    # RFC 3042
    slow_start = true           # false: additive increase only (FAST08 5.1.3)
    restart_after_idle = true   # RFC 5681 4.1 restart window (Linux default)
    sack = false                # SACK option + RFC 6675 recovery (implied by variant "sack"; with "cubic" as Linux)
    timestamps = false          # RFC 7323 option on every segment (payload mss - 12)
    timestamp_tick = "1ms"      # TSval clock tick (Linux: 1ms)
    spurious_rto = "off"        # or "frto" (RFC 5682), "eifel" (RFC 3522, needs timestamps)
    gip = "off"                 # or "333" (GIP: cwnd 2 at unit head, last packet resent up to 3x), "123"
    gip_copies = 3
    gip_head_cwnd = 2
    ictcp = false               # ICTCP at the client (receive windows from measured throughput)
    rude_allowed = false        # the hosts' gate for Rude TCP (RUDE's tcp_rude sysctl)
    rude = false                # every flow starts rude: congestion control off
    rude_off_at = "never"       # or a time: rude flows turn congestion control back on
    rude_off = "nicely"         # or "now"
    rude_servers = "all"        # or K: only the first K servers' connections start rude
    send_loss = 0               # sender-side random loss: probability a data segment never reaches the wire
    # ictcp_alpha = 0.9, ictcp_beta = 0.75, ictcp_gamma1 = 0.1, ictcp_gamma2 = 0.5,
    # ictcp_min_wnd = 2, ictcp_init_wnd = 2 (segments)
    # sub-knobs: cubic_beta = 0.7, cubic_c = 0.4, cubic_fast_convergence = true,
    # delayed_ack_quickack_segments = 16, delayed_ack_ato_min = "40ms", delayed_ack_ato_max = "500ms",
    # delayed_ack_adaptive_gain_shift = 3, delayed_ack_adaptive_multiplier = 2,
    # delayed_ack_adaptive_min = "1us", delayed_ack_adaptive_max = "40ms"
    [workload]
    kind = "sync_read"
    sru = "256KiB"              # fixed SRU per server (default), or
    # block = "1MiB"            # a fixed block split over the servers (exactly one of sru/block)
    request = "100B"
    order = "shuffled"          # or "fixed"
    server_jitter = "10us"      # each server's turnaround is uniform in [0, server_jitter]
    max_inflight = "all"        # or K: at most K servers answer at once (the next asked as each completes)
    stagger = "0"               # the i-th request of a block leaves i x stagger after the block starts
    clients = 1                 # clients reading at once, each its own block loop from time zero
    server_sets = "shared"      # or "disjoint": each client reads from servers of its own (clients x servers in all)
    priority = 0                # 802.1p priority (0-7) of the reads' frames, ACKs included
    [background]
    tcp_flows = 0               # long-lived bulk TCP flows beside the reads (GIP VII-B)
    tcp_to_server = false       # true: they all send to server 0 (SIGCOMM09 2.2 latency experiment)
    tcp_to_client = false       # true: they all send to client 0, through its port (GIP VII-B)
    udp_rate = "off"            # or e.g. "100Mbps": constant-bit-rate UDP into the client (GIP VI-C)
    priority = 0                # 802.1p priority of the TCP flows (several priorities: one FIFO each per port)
    udp_priority = 0            # 802.1p priority of the UDP source
    [wan]                       # wide-area delay on the client's link, both ways (CMU09 8); off by default
    delay = "off"               # or a base one-way delay, e.g. "20ms": turns the model on
    jitter = "0"                # per-frame jitter: the mean (exponential) or the limit (uniform)
    jitter_dist = "exponential" # or "uniform"
    spike_interval = "off"      # or the mean time between delay spikes (a Poisson process), e.g. "10s"
    spike_height = "0"          # how much a spike raises the delay, e.g. "100ms"
    spike_duration = "0"        # how long it lasts, e.g. "200ms"
    shift_interval = "off"      # or the mean time between level shifts (route changes), e.g. "30s"
    shift = "0"                 # a shift redraws the base delay uniformly within delay +/- shift
    [stats]
    timeouts = true             # one row per retransmission timeout (false: class counters only)
    [trace]                     # time series, all off by default (Result.traces)
    goodput_bin = "off"         # or a bin length, e.g. "5ms" (FAST08 Fig 5)
    queue = false               # bottleneck port occupancy at every frame offered to it
    flows = false               # each server's cwnd/ssthresh/RTO/SRTT at every ACK and timeout
    block_cwnd = false          # every server's cwnd at each block start (GIP Fig 4)
    pcap = false                # every packet at each host, as pcap files (Result.write_pcap)

The models store plain SI numbers (seconds as ``float``, bit/s and bytes as
``int``; a packet-count buffer as the string ``"64pkt"``; delayed ACK off as
``None``). :meth:`Scenario.to_engine_json` converts to the engine's integer
units (picoseconds, bit/s, bytes). Every field is checked here first, with
messages that name the dotted field, and again by the engine.

Defaults follow the engine's, which cite their sources (FAST08 Table 1, Linux);
the only exception is ``seed``, which defaults to 1. ``servers`` has no default.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, ClassVar

import tomli_w
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_serializer,
    model_validator,
)
from pydantic_core import PydanticCustomError

from incast.errors import ScenarioError, describe_validation_error
from incast.units import (
    UnitError,
    format_buffer,
    format_duration,
    format_rate,
    format_size,
    parse_buffer,
    parse_duration,
    parse_rate,
    parse_size,
    seconds_to_ps,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = [
    "MAX_CLIENTS",
    "MAX_SERVERS",
    "Background",
    "Link",
    "Scenario",
    "Stats",
    "Switch",
    "Tcp",
    "Trace",
    "Workload",
    "apply_overrides",
    "frame_bytes",
    "read_toml",
    "settings",
]

#: Most servers one run may have, and most reading connections (clients × servers): the engine's ``MAX_SERVERS``.
MAX_SERVERS = 100_000
#: Most clients one run may have (the engine's ``MAX_CLIENTS``).
MAX_CLIENTS = 10_000
_U32_MAX = 2**32 - 1
_U64_MAX = 2**64 - 1
#: IPv4 + TCP headers (40) and Ethernet header + FCS (18): a frame is ``mss + 58`` bytes.
_FRAME_OVERHEAD = 58
_MIN_FRAME = 64
#: Largest MSS the engine accepts: an IPv4 datagram holds at most 65535 bytes.
_MAX_MSS = 65_535 - 40
_DEFAULT_DURATION_S = 1.0
_DEFAULT_SRU = 256 * 1024


def frame_bytes(mss: int) -> int:
    """Bytes of the Ethernet frame carrying one full segment: what a switch buffer holds."""
    return max(mss + _FRAME_OVERHEAD, _MIN_FRAME)


# ---------------------------------------------------------------------------
# Field validators. Each raises a PydanticCustomError whose message says what
# is allowed; errors.describe_validation_error prefixes the dotted field.


def _invalid(message: str) -> PydanticCustomError:
    return PydanticCustomError("incast", message)


def _count(lo: int, hi: int, what: str = "") -> Callable[[Any], int]:
    """A whole number in ``[lo, hi]``; also accepts integral floats and digit strings."""
    top = {_U64_MAX: "2^64-1", _U32_MAX: "2^32-1"}.get(hi, str(hi))
    of = f" of {what}" if what else ""
    allowed = f"a whole number{of} between {lo} and {top}"

    def check(value: Any) -> int:
        n: int | None = None
        if isinstance(value, bool):
            n = None
        elif isinstance(value, int):
            n = value
        elif isinstance(value, float) and value.is_integer():
            n = int(value)
        elif isinstance(value, str) and value.strip().isdigit():
            n = int(value.strip())
        if n is None:
            raise _invalid(f"{value!r} is not {allowed}")
        if not lo <= n <= hi:
            raise _invalid(f"must be {allowed}, got {n}")
        return n

    return check


def _unit(parse: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        try:
            return parse(value)
        except UnitError as e:
            raise _invalid(str(e)) from None

    return check


def _duration(*, positive: bool) -> Callable[[Any], float]:
    parse = _unit(parse_duration)

    def check(value: Any) -> float:
        seconds: float = parse(value)
        ps = seconds_to_ps(seconds)
        if ps > _U64_MAX:
            raise _invalid(f"{value!r} is too long: the engine counts at most 2^64 ps (about 213 days)")
        if positive and ps == 0:
            raise _invalid(f"must be positive (at least 1ps), got {value!r}")
        return seconds

    return check


def _rate(value: Any) -> int:
    bps: int = _unit(parse_rate)(value)
    if bps == 0:
        raise _invalid(f'must be a positive rate (e.g. "1Gbps"), got {value!r}')
    if bps > _U64_MAX:
        raise _invalid(f"{value!r} is too fast: at most 2^64-1 bit/s")
    return bps


def loss_ppb(probability: float) -> int:
    """A loss probability in the engine's parts per billion."""
    return round(probability * 1e9)


def _optional_rate(value: Any) -> int | None:
    """``"off"`` (or ``None``) for none, else a positive rate."""
    if value is None or (isinstance(value, str) and value.strip().lower() == "off"):
        return None
    return _rate(value)


def _size(*, min_bytes: int) -> Callable[[Any], int]:
    parse = _unit(parse_size)

    def check(value: Any) -> int:
        n: int = parse(value)
        if n < min_bytes:
            raise _invalid(f"must be at least {min_bytes} byte{'s' if min_bytes != 1 else ''}, got {value!r}")
        if n > _U64_MAX:
            raise _invalid(f"{value!r} is too large: at most 2^64-1 bytes")
        return n

    return check


def _optional(check: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda value: None if value is None else check(value)


def _buffer(value: Any) -> int | str:
    limit = _unit(parse_buffer)(value)
    if isinstance(limit, tuple):
        packets = limit[1]
        if not 1 <= packets <= _U32_MAX:
            raise _invalid(f"must hold at least 1 and at most 2^32-1 packets, got {value!r}")
        return f"{packets}pkt"
    if limit > _U64_MAX:
        raise _invalid(f"{value!r} is too large: at most 2^64-1 bytes")
    return int(limit)


def _buffer_model(value: Any) -> str:
    """``static``, ``qos:K`` (K classes, 1-64) or ``shared:ALPHA`` (Choudhury-Hahne alpha > 0), normalized."""
    allowed = 'must be "static", "qos:K" (K QoS classes, 1 to 64) or "shared:ALPHA" (e.g. "shared:1")'
    text = value.strip().lower() if isinstance(value, str) else ""
    kind, _, arg = text.partition(":")
    if text == "static":
        return text
    try:
        if kind == "qos" and 1 <= int(arg) <= 64:
            return f"qos:{int(arg)}"
        if kind == "shared" and 0.001 <= float(arg) <= 1e6:
            return f"shared:{float(arg):g}"
    except ValueError:
        pass
    raise _invalid(f"{allowed}, got {value!r}")


def _buffer_model_engine(value: str) -> Any:
    """Engine ``BufferModel``: ``"static"``, ``{"qos": {"classes": K}}`` or ``{"shared": {"alpha_thousandths": n}}``."""
    kind, _, arg = value.partition(":")
    if kind == "qos":
        return {"qos": {"classes": int(arg)}}
    if kind == "shared":
        return {"shared": {"alpha_thousandths": round(float(arg) * 1000)}}
    return "static"


def _optional_buffer(value: Any) -> int | str | None:
    """``"off"`` (or ``None``) for no threshold, else a buffer size as for ``switch.buffer``."""
    if value is None or (isinstance(value, str) and value.strip().lower() == "off"):
        return None
    return _buffer(value)


def _buffer_engine(value: int | str) -> dict[str, int]:
    """Engine ``BufferLimit``: ``{"packets": n}`` or ``{"bytes": n}``."""
    return {"packets": int(value[: -len("pkt")])} if isinstance(value, str) else {"bytes": value}


#: Named delayed-ACK modes besides "off" (crates/incast-sim/src/tcp/delayed_ack.rs).
DELAYED_ACK_MODES = ("linux", "adaptive")
_DELAYED_ACK_FORMS = 'a positive duration (e.g. "40ms"), "off" (ACK every segment), "linux" or "adaptive"'


def _delayed_ack(value: Any) -> float | str | None:
    word = value.strip().lower() if isinstance(value, str) else None
    if value is None or value is False or word == "off":
        return None
    if word in DELAYED_ACK_MODES:
        return word
    try:
        seconds: float = _duration(positive=False)(value)
    except PydanticCustomError as e:
        raise _invalid(f"must be {_DELAYED_ACK_FORMS}; {e.message()}") from None
    if seconds_to_ps(seconds) == 0:
        raise _invalid(f"must be {_DELAYED_ACK_FORMS}; got {value!r}")
    return seconds


def _delayed_ack_toml(value: float | str | None) -> str:
    if value is None:
        return "off"
    return value if isinstance(value, str) else format_duration(value)


def _delayed_ack_engine(value: float | str | None) -> dict[str, Any]:
    """Engine ``DelayedAckConfig``: ``mode`` plus the ``standard`` mode's ``timeout`` in ps."""
    if value is None:
        return {"mode": "off", "timeout": None}
    if isinstance(value, str):
        return {"mode": value, "timeout": None}
    return {"mode": "standard", "timeout": seconds_to_ps(value)}


def _goodput_bin(value: Any) -> float | None:
    """``"off"`` (or ``None``/``false``) for no goodput trace, else a positive bin length in seconds."""
    if value is None or value is False or (isinstance(value, str) and value.strip().lower() == "off"):
        return None
    try:
        seconds: float = _duration(positive=True)(value)
    except PydanticCustomError as e:
        raise _invalid(f'must be a positive duration (e.g. "5ms") or "off"; {e.message()}') from None
    return seconds


def _choice(*allowed: str) -> Callable[[Any], str]:
    listed = " or ".join(f'"{a}"' for a in allowed)

    def check(value: Any) -> str:
        if not isinstance(value, str) or value not in allowed:
            raise _invalid(f"must be {listed}, got {value!r}")
        return value

    return check


def _number(lo: float, hi: float, *, lo_closed: bool, hi_closed: bool, what: str) -> Callable[[Any], float]:
    """A validator of a plain number in the interval from ``lo`` to ``hi``; ``what`` says it in the error."""

    def check(value: Any) -> float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        ok = ok and (lo <= value if lo_closed else lo < value) and (value <= hi if hi_closed else value < hi)
        if not ok:
            raise _invalid(f"must be {what}, got {value!r}")
        return float(value)

    return check


#: Strictly between 0 and 1 (Cubic's β).
_fraction = _number(0, 1, lo_closed=False, hi_closed=False, what="a number between 0 and 1 (exclusive)")
#: From 0 up to, not including, 1.
_probability = _number(0, 1, lo_closed=True, hi_closed=False, what="a probability from 0 up to 1 (exclusive)")
#: From 0 to 1.
_unit_interval = _number(0, 1, lo_closed=True, hi_closed=True, what="a number from 0 to 1")
#: Positive and finite.
_positive_number = _number(0, float("inf"), lo_closed=False, hi_closed=False, what="a positive number")


def _never_or_duration(value: Any) -> float | None:
    """``"never"`` (or ``None``) for no time, else a duration in seconds."""
    if value is None or (isinstance(value, str) and value.strip().lower() == "never"):
        return None
    try:
        seconds: float = _duration(positive=False)(value)
    except PydanticCustomError as e:
        raise _invalid(f'must be "never" or a duration; {e.message()}') from None
    return seconds


def _all_or_count(value: Any) -> int | None:
    """``"all"`` (or ``None``) for no limit, else a whole number of servers, at least 1."""
    if value is None or (isinstance(value, str) and value.strip().lower() == "all"):
        return None
    try:
        return _count(1, _U32_MAX, "servers")(value)
    except PydanticCustomError as e:
        raise _invalid(f'must be "all" or {e.message()}') from None


def _priorities(value: Any) -> tuple[int, ...]:
    """``"all"``, or 802.1p priorities as a list, one number or a comma-separated string; sorted, no repeats."""
    allowed = 'must be "all" or a list of 802.1p priorities between 0 and 7'
    if isinstance(value, str) and value.strip().lower() == "all":
        return _ALL_PRIORITIES
    items: Any = value.split(",") if isinstance(value, str) else value
    if isinstance(items, int) and not isinstance(items, bool):
        items = [items]
    try:
        chosen = sorted({_count(0, 7)(p) for p in items})
    except (TypeError, PydanticCustomError):
        raise _invalid(f"{allowed}, got {value!r}") from None
    if not chosen:
        raise _invalid(f"{allowed}; name at least one")
    return tuple(chosen)


#: Every 802.1p priority (IEEE 802.1Q: a 3-bit PCP).
_ALL_PRIORITIES = tuple(range(8))


def _flag(value: Any) -> bool:
    """``true``/``false`` (TOML booleans, or those words from ``--set``)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value in ("true", "false"):
        return value == "true"
    raise _invalid(f"must be true or false, got {value!r}")


Flag = Annotated[bool, PlainValidator(_flag)]
Priority = Annotated[int, PlainValidator(_count(0, 7))]
Seconds = Annotated[float, PlainValidator(_duration(positive=False))]
PositiveSeconds = Annotated[float, PlainValidator(_duration(positive=True))]
BitsPerSecond = Annotated[int, PlainValidator(_rate)]


# ---------------------------------------------------------------------------
# Models.


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)


class Link(_Model):
    """Every host link (server-switch and client-switch), both directions.

    Default values: ``rate`` 1 Gbps and ``rtt`` 100 µs (FAST08 Table 1).
    """

    rate: BitsPerSecond = Field(default=10**9, description="Line rate of every link, in bit/s.")
    rtt: Seconds = Field(
        default=100e-6,
        description="Round-trip propagation delay server-client, in seconds, without serialization or "
        "queueing; each of the four link hops gets rtt/4.",
    )
    loss: Annotated[float, PlainValidator(_probability)] = Field(
        default=0.0,
        description="Probability that any link loses a frame on the wire (random loss, each direction from "
        "its own seeded substream); 0 for none.",
    )


class Switch(_Model):
    """The switch.

    Default values: ``buffer`` 32 KiB per output port, the estimate for the HP
    Procurve 2848 of FAST08 §3.2 and CMU09 §3; ``ecn_threshold`` off (no
    marking, as on the papers' switches); ``pause`` off, with ``pause_xoff``
    16 KiB, ``pause_xon`` 8 KiB and ``pause_quanta`` 65535 when on
    (``crates/incast-sim/src/net/pause.rs`` says when a port is lossless);
    ``pfc`` off, with every priority lossless when on
    (``crates/incast-sim/src/net/pfc.rs``).
    """

    buffer: Annotated[int | str, PlainValidator(_buffer)] = Field(
        default=32 * 1024,
        description='Drop-tail limit of each output port: bytes of Ethernet frames, or "Npkt" frames.',
    )
    rude_policy: Annotated[str, PlainValidator(_choice("pass", "drop"))] = Field(
        default="pass",
        description='Packets carrying the rude bit: "pass", or "drop" all of them (RUDE §2.3\'s policing router).',
    )
    ecn_threshold: Annotated[int | str | None, PlainValidator(_optional_buffer)] = Field(
        default=None,
        description='ECN marking threshold K of each output port (RFC 8257 3.1): frames arriving above it are '
        'marked CE if ECN-capable; bytes, "Npkt", or None (TOML: "off").',
    )

    buffer_model: Annotated[str, PlainValidator(_buffer_model)] = Field(
        default="static",
        description='How each switch allocates its buffer: "static" (every port owns it), "qos:K" (K classes '
        'share each port; traffic sees 1/K, FAST08 4.1) or "shared:ALPHA" (one memory of buffer x ports per '
        "switch, dynamic thresholds alpha x free memory, Choudhury-Hahne).",
    )
    pause: Flag = Field(
        default=False,
        description="Ethernet flow control (IEEE 802.3x PAUSE) at every switch port (FAST08 6).",
    )
    pause_xoff: Annotated[int, PlainValidator(_size(min_bytes=1))] = Field(
        default=16 * 1024, description="A port holding more frame bytes than this pauses the links feeding it."
    )
    pause_xon: Annotated[int, PlainValidator(_size(min_bytes=0))] = Field(
        default=8 * 1024, description="A congested port that drains to this many bytes releases them (XON)."
    )
    pause_quanta: Annotated[int, PlainValidator(_count(1, 65535, "pause quanta"))] = Field(
        default=65535, description="Pause time of each PAUSE frame, in quanta of 512 bit times (802.3 31B)."
    )
    pfc: Flag = Field(
        default=False,
        description="Priority-based flow control (IEEE 802.1Qbb PFC) at every switch port instead of PAUSE: a "
        "priority's FIFO above pause_xoff pauses only that priority upstream. Needs traffic in more than one "
        "priority; excludes pause (a port runs one or the other).",
    )
    pfc_priorities: Annotated[tuple[int, ...], PlainValidator(_priorities)] = Field(
        default=_ALL_PRIORITIES,
        description='The priorities PFC keeps lossless; the others drop at a full buffer. "all" or a list.',
    )

    @field_serializer("pfc_priorities")
    def _dump_pfc_priorities(self, value: tuple[int, ...]) -> str | list[int]:
        return "all" if value == _ALL_PRIORITIES else list(value)

    @field_serializer("ecn_threshold")
    def _dump_ecn_threshold(self, value: int | str | None) -> int | str:
        return "off" if value is None else value

    @property
    def buffer_bytes(self) -> int | None:
        """The limit in bytes, or ``None`` for a packet limit."""
        return self.buffer if isinstance(self.buffer, int) else None

    @property
    def buffer_packets(self) -> int | None:
        """The limit in packets, or ``None`` for a byte limit."""
        return int(self.buffer[: -len("pkt")]) if isinstance(self.buffer, str) else None


class Tcp(_Model):
    """TCP at every host.

    Default values: ``mss`` 1460 bytes (Ethernet MTU minus IPv4 and TCP headers);
    ``init_cwnd`` 10 segments (RFC 6928, Linux); ``rcv_wnd`` 64 KiB (what
    Linux advertises with its default receive buffer); ``dupack_threshold`` 3 (RFC 5681 3.2);
    ``rto_min`` 200 ms (Linux ``TCP_RTO_MIN``, FAST08 Table 1); ``rto_max`` 120 s
    (Linux ``TCP_RTO_MAX``); ``rto_initial`` 1 s (RFC 6298 (2.1));
    ``clock_granularity`` 0 (high-resolution timers; 1 ms / 4 ms are Linux jiffies
    at HZ=1000 / HZ=250); ``delayed_ack`` 40 ms (Linux ``TCP_DELACK_MIN``; a duration is the
    engine's ``standard`` mode, "off" ACKs every segment, "linux" and
    "adaptive" are the engine modes of those names);
    ``variant`` newreno (RFC 6582, Linux, FAST08 Table 1); ``limited_transmit``
    false (FAST08 Table 1); ``slow_start`` true (RFC 5681 3.1);
    ``restart_after_idle`` true (Linux ``tcp_slow_start_after_idle``, RFC 5681 4.1);
    ``rto_randomize`` false (CMU09 §5 "randomized timeout delay" off);
    ``rto_max_backoff`` 64 doublings (no cap but ``rto_max``, as Linux);
    ``rto_scheduling_delay`` 0 (CMU09 §3 used up to 20 µs); ``rto_flavor``
    rfc6298 (RFC 6298; "linux" is ``tcp_rtt_estimator`` / ``__tcp_set_rto``);
    ``sack`` and ``timestamps`` false (FAST08 Table 1; Linux negotiates both);
    ``timestamp_tick`` 1 ms (Linux ``TCP_TS_HZ``); ``spurious_rto`` off (the
    papers' stacks); ``gip`` off, ``gip_copies`` 3 and ``gip_head_cwnd`` 2 (GIP §V);
    ``ictcp`` off with the paper's α 0.9, β 0.75, γ1 0.1, γ2 0.5 and windows of
    2 segments at least and at the start (Wu et al. 2010 §3); ``cubic_beta`` 0.7, ``cubic_c`` 0.4 and
    ``cubic_fast_convergence`` true (RFC 9438, Linux ``tcp_cubic.c``);
    ``delayed_ack_quickack_segments`` 16, ``delayed_ack_ato_min`` 40 ms and
    ``delayed_ack_ato_max`` 500 ms (Linux, "linux" mode);
    ``delayed_ack_adaptive_gain_shift`` 3, ``delayed_ack_adaptive_multiplier`` 2,
    ``delayed_ack_adaptive_min`` 1 µs and ``delayed_ack_adaptive_max`` 40 ms
    ("adaptive" mode). docs/MODEL.md gives each default's reason.
    """

    mss: Annotated[int, PlainValidator(_count(1, _MAX_MSS, "bytes"))] = Field(
        default=1460, description="Maximum segment size: payload bytes per segment."
    )
    init_cwnd: Annotated[int, PlainValidator(_count(1, _U32_MAX, "segments"))] = Field(
        default=10, description="Initial congestion window, in segments."
    )
    rcv_wnd: Annotated[int, PlainValidator(_size(min_bytes=1))] = Field(
        default=64 * 1024, description="Receive window advertised by every receiver, in bytes."
    )
    dupack_threshold: Annotated[int, PlainValidator(_count(1, _U32_MAX, "duplicate ACKs"))] = Field(
        default=3, description="Duplicate ACKs that trigger fast retransmit."
    )
    rto_min: Seconds = Field(
        default=0.2, description="Lower bound on the retransmission timeout (RTO_min), in seconds."
    )
    rto_max: PositiveSeconds = Field(
        default=120.0, description="Upper bound on the retransmission timeout, in seconds."
    )
    rto_initial: PositiveSeconds = Field(default=1.0, description="RTO before any RTT sample, in seconds.")
    clock_granularity: Seconds = Field(
        default=0.0, description="Timer granularity G in seconds: 0 for exact timers, else the jiffy length."
    )
    rto_randomize: Flag = Field(
        default=False,
        description="CMU09 §5 randomized timeout: each armed retransmission timer lasts RTO + rand(0, 0.5)·RTO.",
    )
    rto_max_backoff: Annotated[int, PlainValidator(_count(0, _U32_MAX, "doublings"))] = Field(
        default=64, description="Most doublings of the RTO after consecutive timeouts (rto_max still applies)."
    )
    rto_scheduling_delay: Seconds = Field(
        default=0.0,
        description="CMU09 §3 timer scheduling delay: each retransmission-timer expiry is late by "
        "a uniform draw from [0, this], in seconds.",
    )
    rto_flavor: Annotated[str, PlainValidator(_choice("rfc6298", "linux"))] = Field(
        default="rfc6298",
        description='RTO formula: "rfc6298" (max(RTO_min, SRTT + 4·RTTVAR)) or "linux" '
        "(tcp_rtt_estimator / __tcp_set_rto: SRTT + max(4·mdev, RTO_min)).",
    )
    delayed_ack: Annotated[float | str | None, PlainValidator(_delayed_ack)] = Field(
        default=0.04,
        description='How long a lone segment may wait for its ACK, in seconds; None (TOML: "off") '
        'acknowledges every segment at once; "linux" runs Linux quick-ACK mode and its adaptive ATO; '
        '"adaptive" delays by twice the smoothed inter-arrival gap (CMU09 §5).',
    )

    delayed_ack_quickack_segments: Annotated[int, PlainValidator(_count(0, _U32_MAX, "ACKs"))] = Field(
        default=16, description='"linux" mode: most ACKs sent at once in quick-ACK mode (TCP_MAX_QUICKACKS).'
    )
    delayed_ack_ato_min: PositiveSeconds = Field(
        default=0.04, description='"linux" mode: the smallest and starting ACK timeout (TCP_ATO_MIN), in seconds.'
    )
    delayed_ack_ato_max: PositiveSeconds = Field(
        default=0.5, description='"linux" mode: cap on a delayed ACK\'s timeout, in seconds.'
    )
    delayed_ack_adaptive_gain_shift: Annotated[int, PlainValidator(_count(0, 16))] = Field(
        default=3, description='"adaptive" mode: the inter-arrival estimator moves 1/2^shift toward each sample.'
    )
    delayed_ack_adaptive_multiplier: Annotated[int, PlainValidator(_count(1, _U32_MAX))] = Field(
        default=2, description='"adaptive" mode: timeout = multiplier × smoothed inter-arrival gap.'
    )
    delayed_ack_adaptive_min: PositiveSeconds = Field(
        default=1e-6, description='"adaptive" mode: lower clamp on the timeout, in seconds.'
    )
    delayed_ack_adaptive_max: PositiveSeconds = Field(
        default=0.04, description='"adaptive" mode: upper clamp on the timeout and on each gap sample, in seconds.'
    )

    variant: Annotated[str, PlainValidator(_choice("reno", "newreno", "sack", "cubic", "dctcp"))] = Field(
        default="newreno",
        description='Loss recovery: "reno" (RFC 5681 3.2: any new ACK ends fast recovery), "newreno" '
        '(RFC 6582: partial ACKs retransmit the next hole), "sack" (RFC 5681 windows with RFC 6675 '
        'SACK recovery), "cubic" (RFC 9438 window growth and β = 0.7 decrease, on NewReno recovery, '
        'or on SACK recovery with sack = true) or "dctcp" (RFC 8257: ECN-capable, cwnd cut by α/2 on marks; '
        "needs switch.ecn_threshold).",
    )
    dctcp_alpha_init: Annotated[float, PlainValidator(_unit_interval)] = Field(
        default=1.0, description="DCTCP's initial α (kept in 1/1024 steps, as Linux)."
    )
    dctcp_g_shift: Annotated[int, PlainValidator(_count(1, 10))] = Field(
        default=4, description="DCTCP's gain g = 1/2^shift for α's moving average (RFC 8257: 1/16)."
    )
    cubic_beta: Annotated[float, PlainValidator(_fraction)] = Field(
        default=0.7, description="Cubic β, the multiplicative decrease (kept in 1/1024 steps, as Linux)."
    )
    cubic_c: Annotated[float, PlainValidator(_positive_number)] = Field(
        default=0.4, description="Cubic C, in segments per second cubed (kept in thousandths)."
    )
    cubic_fast_convergence: Flag = Field(
        default=True, description="Cubic fast convergence (RFC 9438 4.7): release bandwidth to new flows."
    )
    limited_transmit: Flag = Field(
        default=False,
        description="Limited transmit (RFC 3042): one new segment on each of the first two duplicate ACKs.",
    )
    slow_start: Flag = Field(
        default=True, description="Slow start (RFC 5681 3.1); false grows cwnd by additive increase only."
    )
    restart_after_idle: Flag = Field(
        default=True,
        description="After sending nothing for longer than the RTO, restart from min(init_cwnd, cwnd) "
        "(RFC 5681 4.1; Linux tcp_slow_start_after_idle).",
    )
    sack: Flag = Field(
        default=False,
        description="SACK option (RFC 2018) and SACK-based loss recovery (RFC 6675); the sack variant implies it.",
    )
    timestamps: Flag = Field(
        default=False,
        description="Timestamps option (RFC 7323) on every segment: 12 header bytes, so segments carry mss - 12 "
        "payload bytes; echoed timestamps give RTT samples where Karn's rule gives none.",
    )
    timestamp_tick: PositiveSeconds = Field(default=0.001, description="Tick of the TSval clock, in seconds.")
    gip: Annotated[str, PlainValidator(_choice("off", "333", "123"))] = Field(
        default="off",
        description='GIP (Zhang et al.): "333" resets cwnd to gip_head_cwnd at each stripe unit head and resends '
        'the unit\'s last packet once per ACK, up to gip_copies times; "123" resends the last three in turn.',
    )
    gip_copies: Annotated[int, PlainValidator(_count(0, 255, "copies"))] = Field(
        default=3, description="GIP: most redundant copies per stripe unit."
    )
    gip_head_cwnd: Annotated[int, PlainValidator(_count(1, _U32_MAX, "segments"))] = Field(
        default=2, description="GIP: cwnd at the head of each stripe unit, in segments."
    )
    ictcp: Flag = Field(
        default=False,
        description="ICTCP (Wu et al. 2010) at the client: each connection's receive window follows its measured "
        "throughput, growing only while the link has spare bandwidth.",
    )
    ictcp_alpha: Annotated[float, PlainValidator(_unit_interval)] = Field(
        default=0.9, description="ICTCP α: the fraction of the link rate its connections may use."
    )
    ictcp_beta: Annotated[float, PlainValidator(_unit_interval)] = Field(
        default=0.75, description="ICTCP β: weight of the old value in the measured-throughput average."
    )
    ictcp_gamma1: Annotated[float, PlainValidator(_unit_interval)] = Field(
        default=0.1, description="ICTCP γ1: grow a window when (expected − measured)/expected is at most this."
    )
    ictcp_gamma2: Annotated[float, PlainValidator(_unit_interval)] = Field(
        default=0.5, description="ICTCP γ2: shrink a window after three intervals above this."
    )
    ictcp_min_wnd: Annotated[int, PlainValidator(_count(1, _U32_MAX, "segments"))] = Field(
        default=2, description="ICTCP: smallest receive window, in segments."
    )
    ictcp_init_wnd: Annotated[int, PlainValidator(_count(1, _U32_MAX, "segments"))] = Field(
        default=2, description="ICTCP: receive window at the start, in segments."
    )
    rude_allowed: Flag = Field(
        default=False, description="The hosts allow rude flows (RUDE §3.1's tcp_rude sysctl; off by default)."
    )
    rude: Flag = Field(
        default=False,
        description="Every flow starts rude (RUDE): congestion control off, the receive window the only limit, "
        "every segment marked with the rude bit. Needs rude_allowed.",
    )
    rude_off_at: Annotated[float | None, PlainValidator(_never_or_duration)] = Field(
        default=None, description='When rude flows turn congestion control back on, in seconds; None (TOML: "never").'
    )
    rude_off: Annotated[str, PlainValidator(_choice("nicely", "now"))] = Field(
        default="nicely",
        description='How: "now" (a congestion event if over the fair window) or "nicely" (an artificial window '
        "converging to the fair one, RUDE Table 1).",
    )
    rude_servers: Annotated[int | None, PlainValidator(_all_or_count)] = Field(
        default=None,
        description='Only each client\'s connections to its first K servers start rude (background flows then '
        'never); None (TOML: "all") for all.',
    )
    send_loss: Annotated[float, PlainValidator(_probability)] = Field(
        default=0.0,
        description="Sender-side random loss (RUDE §4's kernel patch): each data segment is discarded before the "
        "wire with this probability (kept in parts per billion).",
    )
    spurious_rto: Annotated[str, PlainValidator(_choice("off", "frto", "eifel"))] = Field(
        default="off",
        description='Spurious-timeout detection, with undo of the window reduction: "off", "frto" (RFC 5682) '
        'or "eifel" (RFC 3522, needs timestamps).',
    )

    @field_serializer("delayed_ack")
    def _dump_delayed_ack(self, value: float | str | None) -> float | str:
        return "off" if value is None else value


class Workload(_Model):
    """Barrier-synchronized reads (FAST08 §3, CMU09 §4).

    Exactly one of ``sru`` and ``block``. Default values: ``sru`` 256 KiB
    (FAST08 Table 1), ``request`` 100 bytes, ``order`` shuffled,
    ``server_jitter`` 10 µs (breaks the phase lock of identical servers at a
    drop-tail queue; 0 makes every server answer at once); no application-level
    mitigation: ``max_inflight`` all, ``stagger`` 0; ``priority`` 0 (best effort); one client
    (``clients`` 1, ``server_sets`` shared).

    With several clients each runs its own block loop from time zero over
    ``servers`` servers (``crates/incast-sim/src/workload/clients.rs``):
    ``shared`` sets read from the same servers, which answer every client and
    share their uplinks among them; ``disjoint`` sets give each client a group
    of its own (``clients × servers`` server hosts). The other fields apply to
    each client.
    """

    kind: Annotated[str, PlainValidator(_choice("sync_read"))] = Field(
        default="sync_read", description="The workload; synchronized reads are the only one so far."
    )
    sru: Annotated[int | None, PlainValidator(_optional(_size(min_bytes=1)))] = Field(
        default=None, description="Fixed server request unit: bytes every server returns per block."
    )
    block: Annotated[int | None, PlainValidator(_optional(_size(min_bytes=1)))] = Field(
        default=None, description="Fixed block: bytes the servers share per block, block/servers each."
    )
    request: Annotated[int, PlainValidator(_size(min_bytes=1))] = Field(
        default=100, description="Bytes of the request the client sends each server per block."
    )
    order: Annotated[str, PlainValidator(_choice("shuffled", "fixed"))] = Field(
        default="shuffled",
        description='Order of the requests within a block: "shuffled" (a seeded permutation per block) or "fixed".',
    )
    server_jitter: Seconds = Field(
        default=10e-6,
        description="Each server starts its response a delay drawn uniformly from [0, server_jitter] after the "
        "request arrives, in seconds.",
    )
    max_inflight: Annotated[int | None, PlainValidator(_all_or_count)] = Field(
        default=None,
        description='At most this many servers answer at once; the client asks the next server as each response '
        'completes. None (TOML: "all") asks every server at once.',
    )
    stagger: Seconds = Field(
        default=0.0, description="The i-th request of a block leaves i × stagger after the block starts, in seconds."
    )
    priority: Priority = Field(
        default=0, description="IEEE 802.1p priority (0-7) of the reads' frames, requests and ACKs included."
    )

    clients: Annotated[int, PlainValidator(_count(1, MAX_CLIENTS, "clients"))] = Field(
        default=1, description="Clients reading at once, each its own barrier-synchronized block loop from time zero."
    )
    server_sets: Annotated[str, PlainValidator(_choice("shared", "disjoint"))] = Field(
        default="shared",
        description='"shared": every client reads from the same servers; "disjoint": each client from a group of '
        "its own (clients × servers server hosts).",
    )

    @field_serializer("max_inflight")
    def _dump_max_inflight(self, value: int | None) -> int | str:
        return "all" if value is None else value

    @model_validator(mode="before")
    @classmethod
    def _one_response_size(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            sru, block = data.get("sru"), data.get("block")
            if sru is not None and block is not None:
                raise _invalid("set either sru (bytes per server) or block (bytes per block), not both")
            if sru is None and block is None:
                return {**data, "sru": _DEFAULT_SRU}
        return data


class Background(_Model):
    """Traffic beside the reads (``crates/incast-sim/src/workload/background.rs``).

    Default values: no background flow; each flow has its own receiver;
    ``priority`` and ``udp_priority`` 0 (best effort).
    """

    tcp_flows: Annotated[int, PlainValidator(_count(0, 10_000, "background flows"))] = Field(
        default=0,
        description="Long-lived bulk TCP flows, each between its own sender and receiver (GIP VII-B); "
        "in a tree the sender is on the first edge switch and the receiver on the core.",
    )
    tcp_to_server: Flag = Field(
        default=False,
        description="Every background flow sends to server 0 instead of a receiver of its own (SIGCOMM09 2.2: "
        "bulk flows into the server a latency-sensitive client reads 1 KB at a time from).",
    )
    tcp_to_client: Flag = Field(
        default=False,
        description="Every background flow sends to client 0 instead of a receiver of its own, sharing the "
        "bottleneck port with the reads (GIP VII-B's long-term TCP flow, Figs. 19-20).",
    )
    udp_rate: Annotated[int | None, PlainValidator(_optional_rate)] = Field(
        default=None,
        description='A constant-bit-rate UDP source sending full-sized datagrams to the client at this rate, in '
        'bit/s of link time (GIP VI-C: "100Mbps"); None (TOML: "off") for none.',
    )

    priority: Priority = Field(
        default=0,
        description="IEEE 802.1p priority (0-7) of the background TCP flows; with traffic in several priorities "
        "every port keeps one FIFO per priority, served round robin (crates/incast-sim/src/net/pfc.rs).",
    )
    udp_priority: Priority = Field(default=0, description="IEEE 802.1p priority (0-7) of the UDP source.")

    @field_serializer("udp_rate")
    def _dump_udp_rate(self, value: int | None) -> int | str:
        return "off" if value is None else value


def _off_or_duration(*, positive: bool) -> Callable[[Any], float | None]:
    """``"off"`` (or ``None``) for none, else a duration in seconds (positive if ``positive``)."""
    check = _duration(positive=positive)
    wanted = "a positive duration" if positive else "a duration"

    def inner(value: Any) -> float | None:
        if value is None or (isinstance(value, str) and value.strip().lower() == "off"):
            return None
        try:
            seconds: float = check(value)
        except PydanticCustomError as e:
            raise _invalid(f'must be "off" or {wanted}; {e.message()}') from None
        return seconds

    return inner


class Wan(_Model):
    """Wide-area delay on the client's link, both ways (``crates/incast-sim/src/net/wan.rs``):
    a base one-way delay, per-frame jitter, Poisson delay spikes and Poisson
    level shifts (CMU09 §3.2 and §8, after Allman and Paxson 1999). The wire
    stays FIFO: a frame never arrives before the one sent ahead of it.

    Default values: off (``delay`` "off"); when on, no jitter (exponential when
    set), no spikes and no level shifts until their interval is set.
    """

    delay: Annotated[float | None, PlainValidator(_off_or_duration(positive=False))] = Field(
        default=None,
        description='Base one-way delay added to each direction of the client\'s link, in seconds, on top of '
        'link.rtt / 4; None (TOML: "off") turns the model off.',
    )
    jitter: Seconds = Field(
        default=0.0, description="Per-frame jitter, in seconds: the mean (exponential) or the limit (uniform)."
    )
    jitter_dist: Annotated[str, PlainValidator(_choice("exponential", "uniform"))] = Field(
        default="exponential", description='Distribution of the jitter: "exponential" or "uniform" in [0, jitter].'
    )
    spike_interval: Annotated[float | None, PlainValidator(_off_or_duration(positive=True))] = Field(
        default=None,
        description='Mean time between delay spikes (a Poisson process), in seconds; None (TOML: "off") for none.',
    )
    spike_height: Seconds = Field(default=0.0, description="How much a spike raises the delay, in seconds.")
    spike_duration: Seconds = Field(default=0.0, description="How long a spike lasts, in seconds.")
    shift_interval: Annotated[float | None, PlainValidator(_off_or_duration(positive=True))] = Field(
        default=None,
        description='Mean time between level shifts (route changes, a Poisson process), in seconds; None '
        '(TOML: "off") for none.',
    )
    shift: Seconds = Field(
        default=0.0, description="A level shift redraws the base delay uniformly within delay ± shift, in seconds."
    )

    @field_serializer("delay", "spike_interval", "shift_interval")
    def _dump_off(self, value: float | None) -> float | str:
        return "off" if value is None else value

    @model_validator(mode="after")
    def _agree(self) -> Wan:
        if self.delay is None:
            for name in ("jitter", "spike_interval", "shift_interval"):
                if getattr(self, name):
                    raise _field_error(f"wan.{name}", "needs the wide-area model on (set wan.delay)")
            return self
        if self.spike_interval is not None:
            for name in ("spike_height", "spike_duration"):
                if seconds_to_ps(getattr(self, name)) == 0:
                    raise _field_error(f"wan.{name}", "must be positive when wan.spike_interval is set")
        if self.shift_interval is not None and seconds_to_ps(self.shift) == 0:
            raise _field_error("wan.shift", "must be positive when wan.shift_interval is set")
        if seconds_to_ps(self.shift) > seconds_to_ps(self.delay):
            raise _field_error(
                "wan.shift",
                f"must not exceed wan.delay ({format_duration(self.delay)}): a delay is never negative, "
                f"got {format_duration(self.shift)}",
            )
        return self

    def to_toml(self) -> dict[str, Any]:
        """The ``[wan]`` table in human units."""
        def off(v: float | None) -> str:
            return "off" if v is None else format_duration(v)

        return {
            "delay": off(self.delay),
            "jitter": format_duration(self.jitter),
            "jitter_dist": self.jitter_dist,
            "spike_interval": off(self.spike_interval),
            "spike_height": format_duration(self.spike_height),
            "spike_duration": format_duration(self.spike_duration),
            "shift_interval": off(self.shift_interval),
            "shift": format_duration(self.shift),
        }

    def to_engine(self) -> dict[str, Any]:
        """The engine's ``WanConfig``: picoseconds."""
        def ps(v: float | None) -> int | None:
            return None if v is None else seconds_to_ps(v)

        return {
            "delay": ps(self.delay),
            "jitter": seconds_to_ps(self.jitter),
            "jitter_dist": self.jitter_dist,
            "spike_interval": ps(self.spike_interval),
            "spike_height": seconds_to_ps(self.spike_height),
            "spike_duration": seconds_to_ps(self.spike_duration),
            "shift_interval": ps(self.shift_interval),
            "shift": seconds_to_ps(self.shift),
        }


class Stats(_Model):
    """What the run records beyond its counters.

    Default values: ``timeouts`` true. Per-class timeout counters and each
    block's ``max_flow_timeouts`` are always kept; the per-timeout table grows
    with the number of timeouts, so long sweeps may turn it off.
    """

    timeouts: Flag = Field(
        default=True,
        description="Keep one row per retransmission timeout (Result.timeouts); false keeps only the class counters.",
    )


class Trace(_Model):
    """Time series the run records (``Result.traces``); a run with all of them off does no trace work.

    Default values: every trace off. A common ``goodput_bin`` is 5 ms, the bin of
    FAST08 Figure 5's instantaneous goodput; ``incast run --trace-dir`` turns
    every trace on, with that bin unless one is set.
    """

    goodput_bin: Annotated[float | None, PlainValidator(_goodput_bin)] = Field(
        default=None,
        description='Bin length of the goodput trace, in seconds; None (TOML: "off") turns it off.',
    )
    queue: Flag = Field(
        default=False, description="Sample the switch port toward the client at every frame offered to it."
    )
    flows: Flag = Field(
        default=False,
        description="Sample each server's cwnd, ssthresh, RTO and SRTT at every ACK it processes and every timeout.",
    )
    block_cwnd: Flag = Field(default=False, description="Record every server's cwnd at each block start.")
    pcap: Flag = Field(
        default=False,
        description="Capture every packet at the client and each server (Result.write_pcap: one pcap file per host).",
    )

    @field_serializer("goodput_bin")
    def _dump_goodput_bin(self, value: float | None) -> float | str:
        return "off" if value is None else value

    def any(self) -> bool:
        """Is any trace on?"""
        return self.goodput_bin is not None or self.queue or self.flows or self.block_cwnd


def _field_error(field: str, message: str) -> PydanticCustomError:
    """A cross-field error that names its own dotted field (see errors.describe_validation_error)."""
    return PydanticCustomError("incast_field", "{field}: {detail}", {"field": field, "detail": message})


# The topology models reuse the field validators above.
from incast.topology import Topology  # noqa: E402


class Scenario(_Model):
    """One complete run description; a run is a pure function of it (``seed`` included).

    Construct it with keyword fields (``Scenario(servers=16, link={"rate": "10Gbps"})``),
    from a mapping (:meth:`parse`) or from a TOML file (:meth:`from_toml`).
    Models are immutable; :meth:`with_overrides` returns a changed copy.
    """

    servers: Annotated[int, PlainValidator(_count(1, MAX_SERVERS, "servers"))] = Field(
        description="Number of servers answering each block."
    )
    seed: Annotated[int, PlainValidator(_count(0, _U64_MAX))] = Field(
        default=1, description="Master seed; every random choice derives from it."
    )
    blocks: Annotated[int | None, PlainValidator(_optional(_count(1, _U64_MAX, "blocks")))] = Field(
        default=None, description="Stop once this many blocks have completed."
    )
    duration: Annotated[float | None, PlainValidator(_optional(_duration(positive=True)))] = Field(
        default=None, description="Stop at this simulated time, in seconds (1 s if neither blocks nor duration is set)."
    )
    link: Link = Field(default_factory=Link)
    topology: Topology = Field(default_factory=Topology)
    switch: Switch = Field(default_factory=Switch)
    tcp: Tcp = Field(default_factory=Tcp)
    workload: Workload = Field(default_factory=Workload)
    background: Background = Field(default_factory=Background)
    wan: Wan = Field(default_factory=Wan)
    stats: Stats = Field(default_factory=Stats)
    trace: Trace = Field(default_factory=Trace)

    #: Tables of the scenario and the model of each.
    TABLES: ClassVar[dict[str, type[BaseModel]]] = {}

    @model_validator(mode="wrap")
    @classmethod
    def _default_stop(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Scenario:
        defaulted = isinstance(data, Mapping) and data.get("blocks") is None and data.get("duration") is None
        if defaulted:
            data = {**data, "duration": _DEFAULT_DURATION_S}
        scenario: Scenario = handler(data)
        if defaulted:  # the default is not the user's: keep it out of model_fields_set
            scenario.__pydantic_fields_set__.discard("duration")
        return scenario

    @model_validator(mode="after")
    def _cross_checks(self) -> Scenario:
        tcp = self.tcp
        if not tcp.mss <= tcp.rcv_wnd <= _U32_MAX:
            raise _field_error(
                "tcp.rcv_wnd", f"must be between one MSS ({tcp.mss} bytes) and 4 GiB, got {tcp.rcv_wnd} bytes"
            )
        if seconds_to_ps(tcp.rto_min) > seconds_to_ps(tcp.rto_max):
            raise _field_error(
                "tcp.rto_min",
                f"must not exceed tcp.rto_max ({format_duration(tcp.rto_max)}), got {format_duration(tcp.rto_min)}",
            )
        if tcp.sack and tcp.variant in ("reno", "newreno"):
            raise _field_error(
                "tcp.sack",
                f'SACK recovery (RFC 6675) replaces {tcp.variant} recovery: use tcp.variant = "sack" (or "cubic")',
            )
        if tcp.rude and not tcp.rude_allowed:
            raise _field_error(
                "tcp.rude",
                "refused: the hosts do not allow rude flows (set tcp.rude_allowed = true, RUDE's tcp_rude sysctl)",
            )
        if tcp.rude_servers is not None and not tcp.rude:
            raise _field_error("tcp.rude_servers", "needs rude flows (tcp.rude = true)")
        if tcp.rude_off_at is not None and not tcp.rude:
            raise _field_error("tcp.rude_off_at", "needs rude flows to turn off (tcp.rude = true)")
        if tcp.spurious_rto == "eifel" and not tcp.timestamps:
            raise _field_error("tcp.spurious_rto", "eifel needs the timestamps option (tcp.timestamps = true)")
        if tcp.timestamps and tcp.mss <= 12:
            raise _field_error("tcp.mss", f"must exceed the 12 bytes of the timestamps option, got {tcp.mss}")
        for lo, hi in (("ato_min", "ato_max"), ("adaptive_min", "adaptive_max")):
            a, b = getattr(tcp, f"delayed_ack_{lo}"), getattr(tcp, f"delayed_ack_{hi}")
            if seconds_to_ps(a) > seconds_to_ps(b):
                raise _field_error(
                    f"tcp.delayed_ack_{lo}",
                    f"must not exceed tcp.delayed_ack_{hi} ({format_duration(b)}), got {format_duration(a)}",
                )
        full = frame_bytes(tcp.mss)
        if self.switch.buffer_bytes is not None and self.switch.buffer_bytes < full:
            raise _field_error(
                "switch.buffer",
                f"{self.switch.buffer_bytes} bytes cannot hold one full frame ({full} bytes for MSS {tcp.mss})",
            )
        sw = self.switch
        if sw.buffer_model.startswith("shared") and (sw.pause or sw.buffer_bytes is None):
            raise _field_error(
                "switch.buffer_model", "shared memory needs switch.buffer in bytes and switch.pause off"
            )
        self._check_classes()
        if (sw.pause or sw.pfc) and sw.pause_xon >= sw.pause_xoff:
            raise _field_error("switch.pause_xon", f"must be below switch.pause_xoff ({sw.pause_xoff} bytes), got {sw.pause_xon}")
        if (sw.pause or sw.pfc) and sw.buffer_bytes is not None and sw.pause_xoff >= sw.buffer_bytes:
            raise _field_error(
                "switch.pause_xoff", f"must be below switch.buffer ({sw.buffer_bytes} bytes), got {sw.pause_xoff}"
            )
        if self.background.tcp_to_server and self.background.tcp_to_client:
            raise _field_error("background.tcp_to_client", "cannot be set together with background.tcp_to_server")
        if self.wan.delay is not None and (sw.pause or sw.pfc):
            raise _field_error("wan.delay", "the wide-area model together with PAUSE or PFC is not modelled")
        if self.workload.clients * self.servers > MAX_SERVERS:
            raise _field_error(
                "workload.clients",
                f"{self.workload.clients} clients × {self.servers} servers is more than {MAX_SERVERS} connections",
            )
        if self.workload.block is not None and self.workload.block < self.servers:
            raise _field_error(
                "workload.block",
                f"must give every server at least 1 byte: at least {self.servers} bytes for {self.servers} servers",
            )
        return self

    def priorities(self) -> set[int]:
        """The 802.1p priorities the traffic uses: the reads', and the background's and UDP's when present."""
        bg = self.background
        used = {self.workload.priority}
        if bg.tcp_flows > 0:
            used.add(bg.priority)
        if bg.udp_rate is not None:
            used.add(bg.udp_priority)
        return used

    def _check_classes(self) -> None:
        """PFC excludes PAUSE and needs several priorities; classes are not modelled in shared memory."""
        sw = self.switch
        classes = len(self.priorities()) > 1
        if classes and sw.buffer_model.startswith("shared"):
            raise _field_error(
                "switch.buffer_model", "shared memory together with traffic classes (several priorities) is not modelled"
            )
        if not sw.pfc:
            return
        if sw.pause:
            raise _field_error("switch.pfc", "replaces 802.3x PAUSE at every port: set switch.pause or switch.pfc, not both")
        if not classes:
            raise _field_error(
                "switch.pfc",
                "needs traffic in more than one priority (workload.priority, background.priority, "
                "background.udp_priority); with one class use 802.3x PAUSE (switch.pause)",
            )
        if sw.buffer_model.startswith("qos") and sw.buffer_bytes is not None:
            k = int(sw.buffer_model.partition(":")[2])
            if sw.pause_xoff >= sw.buffer_bytes // k:
                raise _field_error(
                    "switch.pause_xoff",
                    f"must be below a 1/{k} partition of switch.buffer ({sw.buffer_bytes // k} bytes) with PFC, "
                    f"got {sw.pause_xoff}",
                )

    # -- construction ------------------------------------------------------

    @classmethod
    def parse(cls, data: Mapping[str, Any], overrides: Mapping[str, Any] | None = None) -> Scenario:
        """Validate a mapping in the TOML shape, after applying dotted ``overrides``.

        Raises :class:`~incast.errors.ScenarioError` with a one-line message
        naming the dotted field.
        """
        if not isinstance(data, Mapping):
            raise ScenarioError(f"scenario: must be a table of settings, got {type(data).__name__}")
        merged = apply_overrides(data, overrides or {})
        try:
            return cls.model_validate(merged)
        except ValidationError as e:
            raise ScenarioError(describe_validation_error(e)) from e

    @classmethod
    def from_toml(cls, path: str | Path, overrides: Mapping[str, Any] | None = None) -> Scenario:
        """Read a scenario file. Raises ``OSError`` if it cannot be read, ScenarioError if it is invalid."""
        return cls.parse(read_toml(path), overrides)

    def get(self, path: str) -> Any:
        """The value of the dotted setting ``path`` in plain SI units, as :meth:`to_dict` holds it
        (``"tcp.rto_min"`` -> ``0.2``). An unknown path raises ScenarioError naming it."""
        parts = _check_path(path)
        data = self.to_dict()
        return data[parts[0]] if len(parts) == 1 else data[parts[0]][parts[1]]

    def with_overrides(self, overrides: Mapping[str, Any]) -> Scenario:
        """A copy with dotted-path ``overrides`` applied, e.g. ``{"tcp.rto_min": "1ms", "servers": 64}``.

        Setting ``workload.sru`` clears ``workload.block`` and vice versa; setting
        ``blocks`` on a scenario whose 1 s duration was only the default drops it.
        An unknown path raises ScenarioError naming it.
        """
        flat = _flatten(overrides)
        data = self.to_dict()
        if "duration" not in self.model_fields_set and "blocks" in flat and "duration" not in flat:
            data.pop("duration", None)
        return type(self).parse(data, flat)

    # -- output ------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Plain SI numbers in the TOML shape (JSON-safe); ``Scenario.parse`` reads it back."""
        data = self.model_dump()
        for key in ("blocks", "duration"):
            if data[key] is None:
                del data[key]
        for key in ("sru", "block"):
            if data["workload"][key] is None:
                del data["workload"][key]
        return data

    def to_toml(self) -> str:
        """The scenario as TOML with human units; :meth:`from_toml` reads it back exactly."""
        d = self.to_dict()
        top: dict[str, Any] = {"servers": d["servers"], "seed": d["seed"]}
        if "blocks" in d:
            top["blocks"] = d["blocks"]
        if "duration" in d:
            top["duration"] = format_duration(d["duration"])
        tcp = self.tcp
        workload: dict[str, Any] = {"kind": self.workload.kind}
        if self.workload.sru is not None:
            workload["sru"] = format_size(self.workload.sru)
        if self.workload.block is not None:
            workload["block"] = format_size(self.workload.block)
        workload["request"] = format_size(self.workload.request)
        workload["order"] = self.workload.order
        workload["server_jitter"] = format_duration(self.workload.server_jitter)
        workload["max_inflight"] = "all" if self.workload.max_inflight is None else self.workload.max_inflight
        workload["stagger"] = format_duration(self.workload.stagger)
        workload["clients"] = self.workload.clients
        workload["server_sets"] = self.workload.server_sets
        workload["priority"] = self.workload.priority
        doc = {
            **top,
            "link": {"rate": format_rate(self.link.rate), "rtt": format_duration(self.link.rtt), "loss": self.link.loss},
            "topology": self.topology.to_toml(),
            "switch": {
                "buffer": format_buffer(self.switch.buffer),
                "buffer_model": self.switch.buffer_model,
                "ecn_threshold": "off" if self.switch.ecn_threshold is None else format_buffer(self.switch.ecn_threshold),
                "pause": self.switch.pause,
                "pause_xoff": format_size(self.switch.pause_xoff),
                "pause_xon": format_size(self.switch.pause_xon),
                "pause_quanta": self.switch.pause_quanta,
                "pfc": self.switch.pfc,
                "pfc_priorities": "all" if self.switch.pfc_priorities == _ALL_PRIORITIES else list(self.switch.pfc_priorities),
                "rude_policy": self.switch.rude_policy,
            },
            "tcp": {
                "mss": tcp.mss,
                "init_cwnd": tcp.init_cwnd,
                "rcv_wnd": format_size(tcp.rcv_wnd),
                "dupack_threshold": tcp.dupack_threshold,
                "rto_min": format_duration(tcp.rto_min),
                "rto_max": format_duration(tcp.rto_max),
                "rto_initial": format_duration(tcp.rto_initial),
                "clock_granularity": format_duration(tcp.clock_granularity),
                "rto_randomize": tcp.rto_randomize,
                "rto_max_backoff": tcp.rto_max_backoff,
                "rto_scheduling_delay": format_duration(tcp.rto_scheduling_delay),
                "rto_flavor": tcp.rto_flavor,
                "delayed_ack": _delayed_ack_toml(tcp.delayed_ack),
                "delayed_ack_quickack_segments": tcp.delayed_ack_quickack_segments,
                "delayed_ack_ato_min": format_duration(tcp.delayed_ack_ato_min),
                "delayed_ack_ato_max": format_duration(tcp.delayed_ack_ato_max),
                "delayed_ack_adaptive_gain_shift": tcp.delayed_ack_adaptive_gain_shift,
                "delayed_ack_adaptive_multiplier": tcp.delayed_ack_adaptive_multiplier,
                "delayed_ack_adaptive_min": format_duration(tcp.delayed_ack_adaptive_min),
                "delayed_ack_adaptive_max": format_duration(tcp.delayed_ack_adaptive_max),
                "variant": tcp.variant,
                "cubic_beta": tcp.cubic_beta,
                "cubic_c": tcp.cubic_c,
                "cubic_fast_convergence": tcp.cubic_fast_convergence,
                "limited_transmit": tcp.limited_transmit,
                "slow_start": tcp.slow_start,
                "restart_after_idle": tcp.restart_after_idle,
                "sack": tcp.sack,
                "timestamps": tcp.timestamps,
                "timestamp_tick": format_duration(tcp.timestamp_tick),
                "spurious_rto": tcp.spurious_rto,
                "gip": tcp.gip,
                "gip_copies": tcp.gip_copies,
                "gip_head_cwnd": tcp.gip_head_cwnd,
                "dctcp_alpha_init": tcp.dctcp_alpha_init,
                "dctcp_g_shift": tcp.dctcp_g_shift,
                "ictcp": tcp.ictcp,
                "ictcp_alpha": tcp.ictcp_alpha,
                "ictcp_beta": tcp.ictcp_beta,
                "ictcp_gamma1": tcp.ictcp_gamma1,
                "ictcp_gamma2": tcp.ictcp_gamma2,
                "ictcp_min_wnd": tcp.ictcp_min_wnd,
                "ictcp_init_wnd": tcp.ictcp_init_wnd,
                "rude_allowed": tcp.rude_allowed,
                "rude": tcp.rude,
                "rude_off_at": "never" if tcp.rude_off_at is None else format_duration(tcp.rude_off_at),
                "rude_off": tcp.rude_off,
                "rude_servers": "all" if tcp.rude_servers is None else tcp.rude_servers,
                "send_loss": tcp.send_loss,
            },
            "workload": workload,
            "background": {
                "tcp_flows": self.background.tcp_flows,
                "tcp_to_server": self.background.tcp_to_server,
                "tcp_to_client": self.background.tcp_to_client,
                "udp_rate": "off" if self.background.udp_rate is None else format_rate(self.background.udp_rate),
                "priority": self.background.priority,
                "udp_priority": self.background.udp_priority,
            },
            "wan": self.wan.to_toml(),
            "stats": {"timeouts": self.stats.timeouts},
            "trace": self._trace_dict(lambda b: "off" if b is None else format_duration(b)),
        }
        return tomli_w.dumps(doc)

    def _trace_dict(self, bin_as: Callable[[float | None], Any]) -> dict[str, Any]:
        """The ``[trace]`` table, the goodput bin (None when off) written by ``bin_as``."""
        tr = self.trace
        return {
            "goodput_bin": bin_as(tr.goodput_bin),
            "queue": tr.queue,
            "flows": tr.flows,
            "block_cwnd": tr.block_cwnd,
            "pcap": tr.pcap,
        }

    def to_engine_dict(self) -> dict[str, Any]:
        """The engine's JSON shape: integer picoseconds, bit/s and bytes."""
        tcp, wl = self.tcp, self.workload
        return {
            "servers": self.servers,
            "link": {"rate": self.link.rate, "rtt": seconds_to_ps(self.link.rtt), "loss_ppb": loss_ppb(self.link.loss)},
            "topology": self.topology.to_engine(),
            "switch": {
                "buffer": _buffer_engine(self.switch.buffer),
                "buffer_model": _buffer_model_engine(self.switch.buffer_model),
                "ecn_threshold": None if self.switch.ecn_threshold is None else _buffer_engine(self.switch.ecn_threshold),
                "pause": self._pause_engine(),
                "pfc": self.switch.pfc,
                "pfc_priorities": list(self.switch.pfc_priorities),
                "rude_policy": self.switch.rude_policy,
            },
            "tcp": {
                "mss": tcp.mss,
                "init_cwnd": tcp.init_cwnd,
                "rcv_wnd": tcp.rcv_wnd,
                "dupack_threshold": tcp.dupack_threshold,
                "rto": {
                    "min": seconds_to_ps(tcp.rto_min),
                    "max": seconds_to_ps(tcp.rto_max),
                    "initial": seconds_to_ps(tcp.rto_initial),
                    "granularity": seconds_to_ps(tcp.clock_granularity),
                    "randomize": tcp.rto_randomize,
                    "max_backoff": tcp.rto_max_backoff,
                    "scheduling_delay": seconds_to_ps(tcp.rto_scheduling_delay),
                    "flavor": tcp.rto_flavor,
                },
                "delayed_ack": {
                    **_delayed_ack_engine(tcp.delayed_ack),
                    "quickack_segments": tcp.delayed_ack_quickack_segments,
                    "ato_min": seconds_to_ps(tcp.delayed_ack_ato_min),
                    "ato_max": seconds_to_ps(tcp.delayed_ack_ato_max),
                    "adaptive_gain_shift": tcp.delayed_ack_adaptive_gain_shift,
                    "adaptive_multiplier": tcp.delayed_ack_adaptive_multiplier,
                    "adaptive_min": seconds_to_ps(tcp.delayed_ack_adaptive_min),
                    "adaptive_max": seconds_to_ps(tcp.delayed_ack_adaptive_max),
                },
                "variant": tcp.variant,
                "cubic": {
                    "beta": min(1023, max(1, round(tcp.cubic_beta * 1024))),
                    "c_thousandths": max(1, round(tcp.cubic_c * 1000)),
                    "fast_convergence": tcp.cubic_fast_convergence,
                },
                "limited_transmit": tcp.limited_transmit,
                "slow_start": tcp.slow_start,
                "restart_after_idle": tcp.restart_after_idle,
                "sack": tcp.sack,
                "timestamps": tcp.timestamps,
                "timestamp_tick": seconds_to_ps(tcp.timestamp_tick),
                "spurious_rto": tcp.spurious_rto,
                "dctcp": {"alpha_init": round(tcp.dctcp_alpha_init * 1024), "g_shift": tcp.dctcp_g_shift},
                "gip": tcp.gip,
                "gip_copies": tcp.gip_copies,
                "gip_head_cwnd": tcp.gip_head_cwnd,
                "ictcp": {
                    "on": tcp.ictcp,
                    "alpha_permille": round(tcp.ictcp_alpha * 1000),
                    "beta_permille": round(tcp.ictcp_beta * 1000),
                    "gamma1_permille": round(tcp.ictcp_gamma1 * 1000),
                    "gamma2_permille": round(tcp.ictcp_gamma2 * 1000),
                    "min_wnd": tcp.ictcp_min_wnd,
                    "init_wnd": tcp.ictcp_init_wnd,
                },
                "rude_allowed": tcp.rude_allowed,
                "rude": tcp.rude,
                "rude_off_at": None if tcp.rude_off_at is None else seconds_to_ps(tcp.rude_off_at),
                "rude_off": tcp.rude_off,
                "rude_servers": tcp.rude_servers,
                "send_loss_ppb": round(tcp.send_loss * 1e9),
            },
            "workload": {
                "response": {"sru": wl.sru} if wl.sru is not None else {"block": wl.block},
                "request": wl.request,
                "order": wl.order,
                "server_jitter": seconds_to_ps(wl.server_jitter),
                "max_inflight": wl.max_inflight,
                "stagger": seconds_to_ps(wl.stagger),
                "clients": wl.clients,
                "server_sets": wl.server_sets,
                "priority": wl.priority,
            },
            "background": {
                "tcp_flows": self.background.tcp_flows,
                "tcp_to_server": self.background.tcp_to_server,
                "tcp_to_client": self.background.tcp_to_client,
                "udp_rate": self.background.udp_rate,
                "priority": self.background.priority,
                "udp_priority": self.background.udp_priority,
            },
            "wan": self.wan.to_engine(),
            "stop": {
                "blocks": self.blocks,
                "duration": None if self.duration is None else seconds_to_ps(self.duration),
            },
            "stats": {"timeouts": self.stats.timeouts},
            "trace": self._trace_dict(lambda b: None if b is None else seconds_to_ps(b)),
            "seed": self.seed,
        }

    def _pause_engine(self) -> dict[str, int] | None:
        """Engine ``PauseConfig`` (the thresholds of PAUSE or PFC), or ``None`` when flow control is off."""
        sw = self.switch
        on = sw.pause or sw.pfc
        return {"xoff": sw.pause_xoff, "xon": sw.pause_xon, "quanta": sw.pause_quanta} if on else None

    def to_engine_json(self) -> str:
        """:meth:`to_engine_dict` as compact JSON, the input of ``incast._core.run_json``."""
        return json.dumps(self.to_engine_dict(), separators=(",", ":"))

    # -- description ---------------------------------------------------------

    def describe(self) -> str:
        """One line for humans: ``16 servers, 256KiB SRU, 1Gbps, RTT 100us, buffer 32KiB, RTO_min 200ms``.

        With several clients it starts ``2 clients x 16 servers (disjoint)``.
        """
        wl = self.workload
        response = f"{format_size(wl.sru)} SRU" if wl.sru is not None else f"{format_size(wl.block or 0)} block"
        servers = f"{self.servers} server{'s' if self.servers != 1 else ''}"
        if wl.clients > 1:
            servers = f"{wl.clients} clients x {servers} ({wl.server_sets})"
        return ", ".join(
            [
                servers,
                response,
                format_rate(self.link.rate),
                f"RTT {format_duration(self.link.rtt)}",
                *([] if self.topology.kind == "star" else [self.topology.describe()]),
                *([] if self.wan.delay is None else [f"WAN {format_duration(self.wan.delay)}"]),
                f"buffer {format_buffer(self.switch.buffer)}",
                f"RTO_min {format_duration(self.tcp.rto_min)}",
            ]
        )


Scenario.TABLES.update(
    {
        "link": Link,
        "topology": Topology,
        "switch": Switch,
        "tcp": Tcp,
        "workload": Workload,
        "background": Background,
        "wan": Wan,
        "stats": Stats,
        "trace": Trace,
    }
)


# ---------------------------------------------------------------------------
# Files and dotted overrides.


def read_toml(path: str | Path) -> dict[str, Any]:
    """The raw table of a TOML file. ``OSError`` if unreadable; ScenarioError if not TOML."""
    p = Path(path)
    with p.open("rb") as f:
        raw = f.read()
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ScenarioError(f"{p}: not valid TOML: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{p}: not valid TOML: {e}") from None


def _flatten(overrides: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"tcp": {"rto_min": "1ms"}}`` -> ``{"tcp.rto_min": "1ms"}``; dotted keys pass through."""
    flat: dict[str, Any] = {}
    for key, value in overrides.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping) and path.split(".", 1)[0] in Scenario.TABLES and "." not in path:
            flat.update(_flatten(value, f"{path}."))
        else:
            flat[path] = value
    return flat


def settings() -> list[str]:
    """Every dotted setting a scenario has, e.g. ``["servers", ..., "tcp.rto_min", ...]``."""
    out: list[str] = []
    for name in Scenario.model_fields:
        table = Scenario.TABLES.get(name)
        out.extend([f"{name}.{f}" for f in table.model_fields] if table else [name])
    return out


def _check_path(path: str) -> tuple[str, ...]:
    parts = tuple(path.split("."))
    if len(parts) == 1 and parts[0] in Scenario.model_fields:
        return parts
    if len(parts) == 2 and parts[0] in Scenario.TABLES and parts[1] in Scenario.TABLES[parts[0]].model_fields:
        return parts
    if parts[0] in Scenario.TABLES and len(parts) >= 2:
        allowed = ", ".join(Scenario.TABLES[parts[0]].model_fields)
        raise ScenarioError(f"{path}: unknown setting; [{parts[0]}] has {allowed}")
    if len(parts) > 1 and parts[0] in Scenario.model_fields:
        raise ScenarioError(f"{path}: unknown setting; {parts[0]} is a single value, not a table")
    raise ScenarioError(
        f"{path}: unknown setting; the settings are {', '.join(Scenario.model_fields)} "
        f"and the tables {', '.join(f'[{t}]' for t in Scenario.TABLES)}"
    )


def apply_overrides(data: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the raw ``data`` with dotted ``overrides`` applied in order.

    Setting ``workload.sru`` removes ``workload.block`` and vice versa, so an
    override never produces a both-set conflict with the file underneath.
    """
    out: dict[str, Any] = {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in data.items()}
    for path, value in _flatten(overrides).items():
        parts = _check_path(path)
        if len(parts) == 1:
            out[parts[0]] = value
            continue
        table, key = parts
        current = out.get(table)
        if current is None:
            current = out[table] = {}
        elif not isinstance(current, dict):
            raise ScenarioError(f"{table}: must be a table, got {current!r}")
        current[key] = value
        if table == "workload" and key in ("sru", "block"):
            current.pop("block" if key == "sru" else "sru", None)
    return out
