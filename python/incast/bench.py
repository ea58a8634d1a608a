"""Synchronized reads over real sockets: the measurement the simulator models.

    >>> from incast import bench
    >>> with bench.Server() as s:                       # a server on a free loopback port
    ...     r = bench.read([s.address] * 4, sru="256KiB", blocks=50)
    >>> r.goodput_mbps, r.block_time_ms.p99, r.connections

:func:`serve` runs a server until SIGINT or SIGTERM (``incast serve``);
:class:`Server` runs one in the background; :func:`read` drives
barrier-synchronized reads from a list of servers (``incast read``) and returns
a :class:`ReadResult` whose figures carry the names of ``incast run``'s
(``goodput_mbps``, ``blocks``, ``block_time_ms``, ``bytes_delivered``,
``wall_s``), plus per-connection ``TCP_INFO`` and the host's TcpExt counters.
The wire protocol is in ``docs/PROTOCOL.md``; the Rust side in
``crates/incast-bench``.

Sizes are bytes and durations seconds; unit strings (``"256KiB"``,
``"100us"``) work too. Invalid settings raise :class:`~incast.errors.ScenarioError`
naming the parameter. A server that refuses, stalls or closes raises
:class:`ReadError` (a refusal with the server's reason: ``refused: ...``), and
Ctrl-C :class:`ReadInterrupted`; both carry the blocks completed so far as
``.result``.
"""

from __future__ import annotations

import ipaddress
import json
import math
import re
from collections.abc import Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

from incast import _core
from incast.errors import IncastError, ScenarioError
from incast.signals import stop_signals_raise_keyboard_interrupt
from incast.units import UnitError, parse_duration, parse_size

if TYPE_CHECKING:
    import pandas as pd

    from incast.result import BlockTimes

__all__ = [
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_MAX_CONNECTIONS",
    "DEFAULT_MAX_RESPONSE",
    "DEFAULT_PORT",
    "DEFAULT_SAMPLE_EVERY",
    "MAX_TIMEOUT_S",
    "SAMPLE_COLUMNS",
    "ReadError",
    "ReadInterrupted",
    "ReadResult",
    "Server",
    "read",
    "check_sample_every",
    "check_timeout",
    "serve",
]

#: The port ``incast serve`` listens on and the one a server named without a port is reached on.
DEFAULT_PORT = 7470
#: Largest response a server sends unless told otherwise (64 MiB).
DEFAULT_MAX_RESPONSE = 64 * 2**20
#: Connections a server serves at once unless told otherwise; one more is refused.
DEFAULT_MAX_CONNECTIONS = 512
#: Seconds a server waits for a request (or for a client to take its answer) before closing the connection.
DEFAULT_IDLE_TIMEOUT = 60.0
#: Seconds between two sweeps of a server's sampler over its connections (``trace``).
DEFAULT_SAMPLE_EVERY = 0.001
#: Columns of a server's ``trace`` file, one row per open connection per sweep
#: (``crates/incast-bench/src/sampler.rs``): the wall-clock time, the connection's number, BBR's
#: model (``TCP_CC_INFO``) and ``TCP_INFO``'s rates and window; rates in bit/s, times in seconds.
SAMPLE_COLUMNS = (
    "unix_s",
    "flow",
    "mode",
    "bw_bps",
    "min_rtt_s",
    "pacing_gain",
    "cwnd_gain",
    "pacing_rate_bps",
    "delivery_rate_bps",
    "cwnd_pkts",
    "srtt_s",
    "total_retrans",
    "delivered_pkts",
    "unacked_pkts",
)
#: Columns of :attr:`ReadResult.connections`, one row per server (``TCP_INFO`` over the measured blocks).
CONNECTION_COLUMNS = (
    "server",
    "bytes_delivered",
    "retransmits",
    "lost",
    "total_retrans",
    "rto_us",
    "ato_us",
    "rtt_us",
    "rttvar_us",
    "rcv_rtt_us",
    "snd_cwnd",
    "bytes_received",
    "segs_in",
    "segs_out",
)


class ReadResult:
    """What one read run measured.

    Attributes: ``status`` (``"complete"``, ``"failed"`` or ``"interrupted"``),
    ``error`` (one line naming the server and block, or ``None``), ``servers``
    (``host:port`` each), ``sru_bytes`` (``None`` when a block size was given),
    ``block_bytes``, ``warmup_blocks``, ``blocks`` (measured blocks completed),
    ``bytes_delivered``, ``wall_s`` (first measured block's start to the last
    one's end), ``goodput_mbps`` (NaN without a block), ``block_time_ms``
    (p50/p99/max, nearest rank, as ``incast run``), ``tcpext`` (host counter
    name -> ``{"before", "after", "delta"}``), ``config`` (the settings used);
    and two DataFrames: ``connections`` (:data:`CONNECTION_COLUMNS`, one row per
    server: the counters as growth over the measured blocks, the gauges such as
    ``rto_us`` and ``rtt_us`` as at the end) and ``blocks_table`` (``block``,
    ``start_s``, ``time_ms`` and ``last_server``, the index in ``servers`` of
    the answer that completed last; one row per measured block).
    """

    status: str
    error: str | None
    servers: list[str]
    sru_bytes: int | None
    block_bytes: int
    warmup_blocks: int
    blocks: int
    bytes_delivered: int
    wall_s: float
    goodput_mbps: float
    block_time_ms: BlockTimes
    tcpext: dict[str, dict[str, int]]
    connections: pd.DataFrame
    blocks_table: pd.DataFrame

    def __init__(self, report: dict[str, Any], config: dict[str, Any]) -> None:
        self._report = report
        self.config = config
        failure = report["error"]
        self.error = None if failure is None else _failure_line(failure)
        for key in ("status", "servers", "sru_bytes", "block_bytes", "warmup_blocks", "blocks", "bytes_delivered"):
            setattr(self, key, report[key])
        self.wall_s = float(report["wall_s"])
        self.goodput_mbps = _f(report["goodput_mbps"])
        from incast.result import BlockTimes

        t = report["block_time_ms"]
        self.block_time_ms = BlockTimes(_f(t["p50"]), _f(t["p99"]), _f(t["max"]))
        self.tcpext = report["tcpext"]
        import pandas as pd

        self.connections = pd.DataFrame.from_records(report["connections"], columns=list(CONNECTION_COLUMNS))
        rows = report["block_rows"]
        self.blocks_table = pd.DataFrame(
            {
                "block": pd.Series([r["block"] for r in rows], dtype="int64"),
                "start_s": pd.Series([r["start_s"] for r in rows], dtype="float64"),
                "time_ms": pd.Series([r["time_ms"] for r in rows], dtype="float64"),
                "last_server": pd.Series([r["last_server"] for r in rows], dtype="int64"),
            }
        )

    def to_dict(self) -> dict[str, Any]:
        """The summary, ``connections`` and ``tcpext`` as one JSON-safe object: ``incast read --json``.

        Tagged ``"source": "bench"``. The keys shared with ``incast run --json``
        mean the same; NaN becomes ``None``.
        Per-block rows are left out (see :attr:`blocks_table`).
        """
        out: dict[str, Any] = {"source": "bench"}
        out.update((k, v) for k, v in self._report.items() if k not in ("block_rows", "error"))
        out["error"] = self.error
        out["config"] = self.config
        return out

    def __repr__(self) -> str:
        state = "" if self.status == "complete" else f" ({self.status})"
        return (
            f"<ReadResult {len(self.servers)} servers{state}: goodput {self.goodput_mbps:.1f} Mbps, "
            f"{self.blocks} blocks, block p99 {self.block_time_ms.p99:.3g} ms>"
        )


class ReadError(IncastError):
    """A server refused, stalled past the timeout, closed or misbehaved; ``result`` holds the blocks done before."""

    def __init__(self, result: ReadResult) -> None:
        super().__init__(result.error)
        self.result = result


class ReadInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`read`; ``result`` holds the blocks done before."""

    def __init__(self, result: ReadResult) -> None:
        super().__init__(f"interrupted after {result.blocks} blocks")
        self.result = result


def _f(value: Any) -> float:
    return math.nan if value is None else float(value)


def _failure_line(failure: dict[str, Any]) -> str:
    where = f"server {failure['server']}"
    if failure["block"] is not None:
        where += f", block {failure['block']}"
    return f"{where}: {failure['reason']}"


#: The largest byte count the protocol carries (a 64-bit field) and the largest
#: socket buffer the kernel takes (a C int).
_MAX_COUNT, _MAX_SOCKET_BUFFER = 2**64 - 1, 2**31 - 1


def _size(name: str, value: Any, most: int = _MAX_COUNT) -> int | None:
    if value is None:
        return None
    try:
        size = parse_size(value)
    except UnitError as e:
        raise ScenarioError(f"{name}: {e}") from None
    if size > most:
        raise ScenarioError(f"{name}: {value!r} is more than the largest allowed, {most} bytes")
    return size


def _duration(name: str, value: Any) -> float | None:
    if value is None:
        return None
    try:
        return parse_duration(value)
    except UnitError as e:
        raise ScenarioError(f"{name}: {e}") from None


#: Longest per-block timeout, in seconds (``MAX_TIMEOUT`` of ``crates/incast-bench/src/config.rs``).
MAX_TIMEOUT_S = 86_400


def check_timeout(value: Any) -> float:
    """A per-block timeout in seconds, more than 0 and at most a day; ScenarioError naming ``timeout`` if not.

    The engine checks the same when a read starts; this lets a caller refuse it before building anything.
    """
    seconds = _duration("timeout", value)
    if seconds is None or not 0 < seconds <= MAX_TIMEOUT_S:
        raise ScenarioError(f"timeout: {value!r} must be more than 0 and at most one day (86400s)")
    return seconds


#: The longest time between two samples of a server's connections (``MAX_INTERVAL`` of
#: ``crates/incast-bench/src/sampler.rs``), in seconds.
MAX_SAMPLE_EVERY_S = 60.0


def check_sample_every(value: Any) -> float:
    """A sampling interval in seconds, more than 0 and at most a minute; ScenarioError naming ``sample_every`` if not.

    The server checks the same when it starts; this lets a caller refuse it before building anything.
    """
    seconds = _duration("sample_every", value)
    if seconds is None or not 0 < seconds <= MAX_SAMPLE_EVERY_S:
        raise ScenarioError(f"sample_every: {value!r} must be more than 0 and at most 60s")
    return seconds


def _count(name: str, value: Any, most: int = _MAX_COUNT) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ScenarioError(f"{name}: {value!r} is not a whole number from 0 up")
    if value > most:
        raise ScenarioError(f"{name}: {value} is more than the largest allowed, {most}")
    return value


def _socket(nodelay: bool, delayed_ack: bool, congestion: str | None, rcvbuf: Any, sndbuf: Any) -> dict[str, Any]:
    return {
        "nodelay": bool(nodelay),
        "quickack": not delayed_ack,
        "congestion": congestion,
        "rcvbuf": _size("rcvbuf", rcvbuf, _MAX_SOCKET_BUFFER),
        "sndbuf": _size("sndbuf", sndbuf, _MAX_SOCKET_BUFFER),
    }


def read(
    servers: Sequence[str],
    *,
    sru: int | str | None = None,
    block: int | str | None = None,
    blocks: int | None = None,
    duration: float | str | None = None,
    warmup: int = 0,
    timeout: float | str = 10.0,
    max_inflight: int | None = None,
    stagger: float | str = 0.0,
    nodelay: bool = True,
    delayed_ack: bool = True,
    congestion: str | None = None,
    rcvbuf: int | str | None = None,
    sndbuf: int | str | None = None,
) -> ReadResult:
    """Read barrier-synchronized blocks from ``servers`` (``HOST[:PORT]`` each, port 7470 by default).

    Each block asks every server for ``sru`` bytes (default 256 KiB), or splits
    ``block`` bytes over them, and ends when every byte has arrived. The run
    stops after ``blocks`` measured blocks (default 100) or at the first block
    boundary after ``duration``; ``warmup`` blocks come first and are not
    counted. ``max_inflight`` caps the servers answering at once; ``stagger``
    delays the i-th request of a block by ``i × stagger``. Socket knobs:
    ``nodelay`` (``TCP_NODELAY``), ``delayed_ack=False`` (``TCP_QUICKACK``,
    re-armed after every receive), ``congestion`` (``TCP_CONGESTION``),
    ``rcvbuf``/``sndbuf`` (``SO_RCVBUF``/``SO_SNDBUF``).

    Raises :class:`~incast.errors.ScenarioError` for invalid settings,
    :class:`ReadError` when a server refuses, stalls past ``timeout`` or closes,
    and :class:`ReadInterrupted` on Ctrl-C.
    """
    if isinstance(servers, str):
        servers = [servers]
    config: dict[str, Any] = {
        "servers": [_server(s) for s in servers],
        "sru": _size("sru", sru),
        "block": _size("block", block),
        "blocks": _count("blocks", blocks),
        "duration": _duration("duration", duration),
        "warmup": _count("warmup", warmup),
        "timeout": _duration("timeout", timeout),
        "max_inflight": _count("max_inflight", max_inflight),
        "stagger": _duration("stagger", stagger),
        "socket": _socket(nodelay, delayed_ack, congestion, rcvbuf, sndbuf),
    }
    report = json.loads(_core.bench_read_json(json.dumps(config)))
    result = ReadResult(report, config)
    if result.status == "failed":
        raise ReadError(result)
    if result.status == "interrupted":
        raise ReadInterrupted(result)
    return result


#: ``[IPv6]`` or ``[IPv6]:PORT``, as RFC 3986 §3.2.2 writes an IPv6 host beside a port.
_BRACKETED = re.compile(r"\[([^\[\]]*)\](?::([^:]*))?")


def _server(text: Any) -> str:
    """A server's ``HOST[:PORT]`` with its brackets checked; the engine resolves the name.

    A bracket opens an IPv6 address and must close after it (``[::1]:7470``):
    ``[::1`` is refused, not looked up as the host name ``[:``.
    """
    if not isinstance(text, str):
        raise ScenarioError(f"servers: {text!r} is not HOST[:PORT]")
    name = text.strip()
    if "[" not in name and "]" not in name:
        return text
    m = _BRACKETED.fullmatch(name)
    if m is None:
        raise ScenarioError(
            f"servers: {text!r}: a '[' opens an IPv6 address and needs its ']', e.g. [::1]:{DEFAULT_PORT}"
        )
    try:
        ipaddress.IPv6Address(m.group(1))
    except ValueError:
        raise ScenarioError(f"servers: {text!r}: {m.group(1)!r} inside brackets is not an IPv6 address") from None
    return text


def _server_config(
    max_response: int | str,
    max_connections: int,
    idle_timeout: float | str,
    nodelay: bool,
    congestion: str | None,
    rcvbuf: Any,
    sndbuf: Any,
    trace: str | None = None,
    sample_every: float | str = DEFAULT_SAMPLE_EVERY,
) -> str:
    config: dict[str, Any] = {
        "max_response": _size("max_response", max_response),
        "max_connections": _count("max_connections", max_connections),
        "idle_timeout": _duration("idle_timeout", idle_timeout),
        "socket": _socket(nodelay, True, congestion, rcvbuf, sndbuf),
    }
    if trace is not None:
        config["sample"] = {"interval": _duration("sample_every", sample_every), "path": str(trace)}
    return json.dumps(config)


def _bind(host: str, port: int) -> str:
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ScenarioError(f"port: {port!r} is not a port number from 0 to 65535")
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def serve(
    port: int = DEFAULT_PORT,
    *,
    host: str = "0.0.0.0",
    max_response: int | str = DEFAULT_MAX_RESPONSE,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    idle_timeout: float | str = DEFAULT_IDLE_TIMEOUT,
    nodelay: bool = True,
    congestion: str | None = None,
    rcvbuf: int | str | None = None,
    sndbuf: int | str | None = None,
    trace: str | None = None,
    sample_every: float | str = DEFAULT_SAMPLE_EVERY,
) -> None:
    """Serve the benchmark protocol on ``host:port`` until SIGINT or SIGTERM, then close every connection and return.

    A request for more than ``max_response`` bytes is refused: the server
    sends the reason (which :func:`read` reports) and closes the connection.
    At most ``max_connections`` connections (1 to 65536) are served at once,
    each by one thread; one more is refused at once, so keep it below the
    open-file limit (``ulimit -n``). A connection that has not sent a whole
    request within ``idle_timeout`` (more than 0, at most a day) of being
    accepted or of its previous answer, or takes none of an answer for that
    long, is closed. Socket knobs as
    for :func:`read`; ``congestion`` here is the one that shapes the
    responses. Log lines (listening, rejected requests, refused and idle
    connections, at a bounded rate; shutdown) go to standard error. With
    ``trace`` (a file name), every open connection's sending state is sampled
    every ``sample_every`` (default 1 ms) into that CSV file, one row per
    connection per sweep (:data:`SAMPLE_COLUMNS`). Raises
    :class:`~incast.errors.ScenarioError` for invalid settings and ``OSError``
    when the address cannot be bound or the trace file created.
    """
    config = _server_config(
        max_response, max_connections, idle_timeout, nodelay, congestion, rcvbuf, sndbuf, trace, sample_every
    )
    with stop_signals_raise_keyboard_interrupt():
        _core.bench_serve(_bind(host, port), config)


class Server:
    """A benchmark server on a background thread, for tests and in-process experiments.

    ``Server()`` listens on a free loopback port; ``address`` is its
    ``host:port``. Use it as a context manager, or call :meth:`stop`.
    Arguments as for :func:`serve`.
    """

    def __init__(
        self,
        port: int = 0,
        *,
        host: str = "127.0.0.1",
        max_response: int | str = DEFAULT_MAX_RESPONSE,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        idle_timeout: float | str = DEFAULT_IDLE_TIMEOUT,
        nodelay: bool = True,
        congestion: str | None = None,
        rcvbuf: int | str | None = None,
        sndbuf: int | str | None = None,
        trace: str | None = None,
        sample_every: float | str = DEFAULT_SAMPLE_EVERY,
    ) -> None:
        config = _server_config(
            max_response, max_connections, idle_timeout, nodelay, congestion, rcvbuf, sndbuf, trace, sample_every
        )
        self._server = _core.bench_start_server(_bind(host, port), config)

    @property
    def address(self) -> str:
        """The ``host:port`` the server listens on."""
        return self._server.address

    @property
    def port(self) -> int:
        """The port the server listens on."""
        return int(self.address.rsplit(":", 1)[1])

    def stop(self) -> None:
        """Stop serving and close every connection (again: nothing)."""
        self._server.stop()

    def __enter__(self) -> Server:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
