"""``incast serve``: answer synchronized-read requests until SIGINT or SIGTERM.

One server process serves any number of clients (``incast read``) over the
wire protocol of ``docs/PROTOCOL.md``, up to ``--max-connections`` at once
(one thread each; one more is refused at once). A request it cannot accept
(bad magic, version, flags or a count above ``--max-response``) is answered
with the reason, which ``incast read`` prints, and its connection closed; a
connection that has not sent a whole request within ``--idle-timeout`` of being
accepted or of its previous answer, or takes none of an answer for that long,
is closed. Nothing a client does stops the server: a failed accept (out of
descriptors) is retried after a back-off.

It logs one line when it starts (the address, useful with ``--port 0``), a
line per rejected request, refused or idle connection and failed accept (at a
bounded rate: the lines held back are counted) and one when it stops; on
SIGINT or SIGTERM it closes every connection and exits with status 0.

``--trace FILE`` samples every open connection every ``--sample-every``
(1 ms by default) into a CSV file: the kernel's pacing and delivery rates,
minimum RTT, smoothed RTT, window and retransmissions (``TCP_INFO``) and,
under BBR, its bandwidth estimate, minimum RTT, gains and the mode they imply
(``TCP_CC_INFO``); the server logs how many rows it wrote before its stop line.
"""

from typing import Annotated

import typer

from incast import bench
from incast.cli.options import SAMPLE_EVERY_HELP, TRACE_HELP, Congestion, Nodelay, Rcvbuf, Sndbuf, option
from incast.cli.output import EXIT_ENGINE, fail

__all__ = ["register", "serve"]


def serve(
    port: Annotated[int, typer.Option("--port", metavar="PORT", help="TCP port; 0 picks a free one (logged).")] = (
        bench.DEFAULT_PORT
    ),
    bind: Annotated[str, option("--bind", "ADDRESS", "Address to listen on (default 0.0.0.0, every IPv4 address).")] = (
        "0.0.0.0"
    ),
    max_response: Annotated[
        str, option("--max-response", "SIZE", "Largest byte count a request may ask for (default 64MiB).")
    ] = "64MiB",
    max_connections: Annotated[
        int,
        option(
            "--max-connections",
            "N",
            "Connections served at once, a thread each; more are refused (default 512; keep below ulimit -n).",
        ),
    ] = bench.DEFAULT_MAX_CONNECTIONS,
    idle_timeout: Annotated[
        str,
        option(
            "--idle-timeout",
            "DURATION",
            "Close a connection idle this long, or this slow to send a request or take its answer (default 60s).",
        ),
    ] = "60s",
    nodelay: Nodelay = True,
    congestion: Congestion = None,
    rcvbuf: Rcvbuf = None,
    sndbuf: Sndbuf = None,
    trace: Annotated[
        str | None,
        option(
            "--trace",
            "FILE",
            TRACE_HELP,
        ),
    ] = None,
    sample_every: Annotated[str, option("--sample-every", "DURATION", SAMPLE_EVERY_HELP)] = "1ms",
) -> int:
    """Serve synchronized-read requests until SIGINT or SIGTERM."""

    try:
        bench.serve(
            port,
            host=bind,
            max_response=max_response,
            max_connections=max_connections,
            idle_timeout=idle_timeout,
            nodelay=nodelay,
            congestion=congestion,
            rcvbuf=rcvbuf,
            sndbuf=sndbuf,
            trace=trace,
            sample_every=sample_every,
        )
    except OSError as e:
        return fail(str(e), EXIT_ENGINE)
    return 0


def register(app: typer.Typer) -> None:
    """Add the ``serve`` verb to ``app``."""
    app.command("serve")(serve)
