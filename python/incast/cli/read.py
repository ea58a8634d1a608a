"""``incast read``: barrier-synchronized reads from real ``incast serve`` servers.

Each block asks every server for ``--sru`` bytes (or splits ``--block`` over
them) and ends when every byte has arrived; the next block starts then. The
summary uses ``incast run``'s terms (goodput, block time p50/p99/max, blocks;
``--json`` has the same keys where they apply), then one row per connection
(``TCP_INFO`` over the measured blocks) and the host's TcpExt/Tcp counters.

Without ``--blocks`` or ``--start-until`` it reads 100 measured blocks, and
without ``--sru`` or ``--block`` 256KiB from each server. The options that
``incast run`` has too mean the same here (``incast.cli.options``).

A server that refuses, stalls past ``--timeout`` or closes mid-block ends the
run: the partial results are printed, then one line naming the server and the
block, and the status is 1. Ctrl-C prints the partial results too (status 130).
"""

import json
import math
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from incast.cli.options import (
    AsJson,
    Congestion,
    Nodelay,
    Rcvbuf,
    Sndbuf,
    Timeout,
    named_options,
    nonempty,
    option,
    toml_value,
)
from incast.cli.output import EXIT_ENGINE, fail, ms
from incast.errors import ScenarioError

if TYPE_CHECKING:
    from incast import bench

__all__ = ["read", "register"]

#: Exit status after Ctrl-C, as a shell reports SIGINT.
EXIT_INTERRUPTED = 130
#: TCP_INFO columns of the per-connection table, with their headings.
_CONNECTION_COLUMNS = {
    "total_retrans": "retrans",
    "lost": "lost",
    "retransmits": "RTOs now",
    "rto_us": "rto ms",
    "rtt_us": "rtt us",
    "rcv_rtt_us": "rcv rtt us",
    "ato_us": "ato ms",
}

#: Host counters printed even when they did not move; the others only when they did.
_ALWAYS_SHOWN = ("TCPTimeouts", "TCPLossProbes", "RetransSegs")


@named_options("sru", "block", "blocks", "max_inflight", "stagger", "delayed_ack")
def read(
    servers: Annotated[
        list[str] | None,
        typer.Argument(metavar="HOST[:PORT]", help="Servers, port 7470 unless given.", show_default=False),
    ] = None,
    servers_file: Annotated[
        str | None, option("--servers-file", "FILE", "Servers, one HOST[:PORT] per line ('#' starts a comment).")
    ] = None,
    *,
    start_until: Annotated[
        str | None,
        option(
            "--start-until",
            "DURATION",
            "Start blocks until this much measured time has passed, then let the last one finish "
            "(instead of --blocks; the simulator's --duration stops at its time).",
        ),
    ] = None,
    warmup: Annotated[int, option("--warmup", "N", "Blocks run first and not counted.")] = 0,
    timeout: Timeout = "10s",
    nodelay: Nodelay = True,
    congestion: Congestion = None,
    rcvbuf: Rcvbuf = None,
    sndbuf: Sndbuf = None,
    as_json: AsJson = False,
    **named: str | None,
) -> int:
    """Read synchronized blocks from real servers and print goodput, block times and TCP counters."""
    from incast import bench

    for name, value in named.items():  # an empty value is a mistake, not the default
        nonempty(value, f"--{name.replace('_', '-')}", "a value (leave the option out for the default)")
    delayed_ack = named["delayed_ack"] or "linux"
    if delayed_ack not in ("linux", "off"):
        raise ScenarioError(f"delayed_ack: the kernel has linux (its own, the default) or off, got {delayed_ack!r}")
    if start_until is not None and named["blocks"] is not None:
        raise ScenarioError("start_until: give --blocks or --start-until, not both")
    names = list(servers or []) + (_servers_file(servers_file) if servers_file is not None else [])
    if not names:
        raise ScenarioError("servers: required; give HOST[:PORT]... or --servers-file FILE")

    try:
        result = bench.read(
            names,
            sru=named["sru"],
            block=named["block"],
            blocks=_count(named["blocks"]),
            duration=_start_until(start_until),
            warmup=warmup,
            timeout=timeout,
            max_inflight=None if named["max_inflight"] == "all" else _count(named["max_inflight"]),
            stagger=named["stagger"] or 0,
            nodelay=nodelay,
            delayed_ack=delayed_ack == "linux",
            congestion=congestion,
            rcvbuf=rcvbuf,
            sndbuf=sndbuf,
        )
    except bench.ReadError as e:
        _print(e.result, as_json)
        return fail(str(e), EXIT_ENGINE)
    except bench.ReadInterrupted as e:
        _print(e.result, as_json)
        return fail(f"interrupted after {e.result.blocks} measured blocks", EXIT_INTERRUPTED)
    _print(result, as_json)
    return 0


def register(app: typer.Typer) -> None:
    """Add the ``read`` verb to ``app``."""
    app.command("read")(read)


def _count(text: str | None) -> Any:
    """A count given as text: ``"16"`` is 16; anything else goes on as it is, for the bench to refuse by name."""
    return None if text is None else toml_value(text)


def _start_until(text: str | None) -> float | None:
    """``--start-until`` in seconds: a positive duration."""
    from incast.units import UnitError, parse_duration

    if text is None:
        return None
    try:
        seconds = parse_duration(text)
    except UnitError as e:
        raise ScenarioError(f"start_until: {e}") from None
    if seconds <= 0:
        raise ScenarioError(f"start_until: must be more than 0, got {text!r}")
    return seconds


def _servers_file(path: str) -> list[str]:
    """The servers listed in ``path``: one per line, blank lines and ``#`` comments skipped."""
    from incast.files import read_text

    try:
        lines = read_text(path).splitlines()
    except ScenarioError as e:
        raise ScenarioError(f"servers_file: {e}") from None
    names = [line.split("#", 1)[0].strip() for line in lines]
    names = [name for name in names if name]
    if not names:
        raise ScenarioError(f"servers_file: {path} lists no server; give one HOST[:PORT] per line")
    return names


def _print(result: "bench.ReadResult", as_json: bool) -> None:
    if as_json:
        print(json.dumps(result.to_dict(), allow_nan=False), flush=True)
        return
    from rich.console import Console
    from rich.table import Table

    from incast.units import format_size

    console = Console(highlight=False, width=None if sys.stdout.isatty() else 120)
    r = result
    size = f"{format_size(r.sru_bytes)} SRU" if r.sru_bytes is not None else f"{format_size(r.block_bytes)} block"
    state = "" if r.status == "complete" else f" — {r.status}, partial results"
    heading = [f"{len(r.servers)} servers", size, f"{r.warmup_blocks} warm-up blocks", *_knobs(r.config)]
    console.print(", ".join(heading) + state, style="bold")
    table = Table.grid(padding=(0, 2))
    goodput = "—" if math.isnan(r.goodput_mbps) else f"{r.goodput_mbps:.1f} Mbps ({r.goodput_mbps / 1e3:.2f} Gbit/s)"
    table.add_row("goodput", goodput)
    table.add_row("blocks", f"{r.blocks} ({r.bytes_delivered:,} bytes) in {r.wall_s:.3f} s")
    t = r.block_time_ms
    table.add_row("block time", f"p50 {ms(t.p50)} ms, p99 {ms(t.p99)} ms, max {ms(t.max)} ms")
    if r.blocks:
        slowest = r.blocks_table.loc[r.blocks_table["time_ms"].idxmax()]
        held_up_by = r.servers[int(slowest["last_server"])]
        time_ms = float(slowest["time_ms"])
        table.add_row(
            "slowest block", f"block {int(slowest['block'])}, {ms(time_ms)} ms, last answer from {held_up_by}"
        )
    shown = [name for name, c in r.tcpext.items() if name in _ALWAYS_SHOWN or c["delta"]]
    if shown:
        table.add_row("host TCP", ", ".join(f"{name} +{r.tcpext[name]['delta']}" for name in shown))
    console.print(table)
    conns = Table()
    for column in ("server", "bytes", *_CONNECTION_COLUMNS.values()):
        conns.add_column(column, justify="left" if column == "server" else "right", no_wrap=True)
    for row in r.connections.to_dict("records"):
        cells = [_cell(name, row[name]) for name in _CONNECTION_COLUMNS]
        conns.add_row(str(row["server"]), f"{row['bytes_delivered']:,}", *cells)
    console.print(conns)


def _knobs(config: dict[str, Any]) -> list[str]:
    """The settings that differ from the defaults, as the heading names them."""
    from incast.units import format_duration, format_size

    sock = config["socket"]
    knobs = []
    if config["max_inflight"] is not None:
        knobs.append(f"max inflight {config['max_inflight']}")
    if config["stagger"]:
        knobs.append(f"stagger {format_duration(config['stagger'])}")
    if sock["quickack"]:
        knobs.append("delayed ACK off")
    if not sock["nodelay"]:
        knobs.append("Nagle on")
    if sock["congestion"] is not None:
        knobs.append(f"congestion {sock['congestion']}")
    knobs += [f"{name} {format_size(sock[name])}" for name in ("rcvbuf", "sndbuf") if sock[name] is not None]
    return knobs


def _cell(column: str, value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if column in ("rto_us", "ato_us"):
        return f"{value / 1e3:g}"
    return str(int(value))
