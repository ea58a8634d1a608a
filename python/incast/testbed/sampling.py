"""The kernel's sending state on the testbed: every server's connection sampled while the client reads.

With ``sample_every`` set, each ``incast serve`` of a run samples its connection
(``--trace``, ``crates/incast-bench/src/sampler.rs``) into a file of a
temporary directory the run removes: ``TCP_INFO``'s pacing and delivery rates,
window, smoothed RTT and retransmissions and, under BBR, ``TCP_CC_INFO``'s
bandwidth estimate, minimum RTT and gains, with the mode the gains imply.
:func:`collect` sets every server's rows on the client's clock: ``time_s`` is
seconds after the first measured block started (the read's ``start_unix_s``;
all namespaces share the machine's clock), and ``flow`` is the server's index
in the read's order. Sampling is off by default: 32 servers sampled every
millisecond are 32,000 wake-ups a second on the cores the testbed measures.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from incast.bench import SAMPLE_COLUMNS
from incast.units import format_duration

__all__ = ["TRACE_COLUMNS", "collect", "serve_options", "trace_file", "write_csv"]

#: Columns of the sampled trace: the benchmark's (:data:`incast.bench.SAMPLE_COLUMNS`) on the client's
#: clock (``time_s`` in place of ``unix_s``); the simulator's BBR trace has the first ten.
TRACE_COLUMNS = ("time_s", *SAMPLE_COLUMNS[1:])
#: The columns that hold whole numbers; ``mode`` is text and the rest are real numbers.
_COUNTS = {"flow", "cwnd_pkts", "total_retrans", "delivered_pkts", "unacked_pkts", "bw_bps"}


def trace_file(directory: Path, server: int) -> Path:
    """Where server ``server`` writes its samples."""
    return directory / f"server-{server}.csv"


def serve_options(directory: Path, server: int, every_s: float) -> list[str]:
    """``incast serve`` options that sample server ``server``'s connections every ``every_s`` seconds."""
    return ["--trace", str(trace_file(directory, server)), "--sample-every", format_duration(every_s)]


def _value(column: str, text: str) -> Any:
    if column == "mode":
        return text or None
    if text == "":
        return None
    return int(text) if column in _COUNTS else float(text)


def collect(directory: Path, servers: int, start_unix_s: float | None, every_s: float) -> dict[str, Any]:
    """Every server's samples as one trace on the client's clock (the module docstring), rows in time order.

    A server whose file is missing or empty (it never started sampling) contributes no rows.
    Returns ``sample_every_s``, ``columns`` (:data:`TRACE_COLUMNS`) and ``rows`` (lists in that order).
    """
    rows: list[list[Any]] = []
    for server in range(servers):
        path = trace_file(directory, server)
        if not path.exists():
            continue
        with path.open(newline="") as f:
            for raw in csv.DictReader(f):
                t = float(raw["unix_s"])
                row = {c: _value(c, raw[c]) for c in TRACE_COLUMNS[2:]}
                time_s = t - start_unix_s if start_unix_s is not None else t
                rows.append([time_s, server, *row.values()])
    rows.sort(key=lambda r: (r[0], r[1]))
    return {"sample_every_s": every_s, "columns": list(TRACE_COLUMNS), "rows": rows}


def write_csv(trace: dict[str, Any], path: str | Path) -> None:
    """Write a trace of :func:`collect` as CSV: a header of its columns, a line a row, missing values empty."""
    with Path(path).open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(trace["columns"])
        out.writerows(["" if v is None else v for v in row] for row in trace["rows"])
