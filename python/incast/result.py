"""Run a scenario and read its result.

    >>> import incast
    >>> r = incast.run(servers=4, blocks=5)
    >>> r.goodput_mbps, r.timeouts, len(r.flows)

:func:`run` makes exactly one call into the engine, with the GIL released, so
runs in several threads proceed in parallel. The engine returns the summary,
one row per client, one row per flow, one row per completed block, one row per
retransmission timeout and the traces the scenario's ``[trace]`` table turned on
(``crates/incast-sim/src/stats``); :class:`Result` exposes the summary as
attributes and the rows and traces as DataFrames. With ``trace.pcap`` on, the
engine also returns one pcap file per host as ``bytes``
(``crates/incast-sim/src/stats/pcap.rs``), written by :meth:`Result.write_pcap`.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Mapping
from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from incast import _core
from incast.errors import ScenarioError
from incast.presets import with_preset
from incast.scenario import Scenario

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "BACKGROUND_COLUMNS",
    "BLOCK_COLUMNS",
    "CLIENT_COLUMNS",
    "FCT_COLUMNS",
    "FLOW_COLUMNS",
    "HTML_FIGURES",
    "PORT_COLUMNS",
    "QUERY_COLUMNS",
    "TIMEOUT_COLUMNS",
    "TRACE_COLUMNS",
    "BlockTimes",
    "Result",
    "Traces",
    "run",
]

#: Columns of :attr:`Result.flows`, one row per reading connection: client ``c``'s
#: ``j``-th server is flow ``c * servers + j``; ``server`` counts all server hosts
#: (with shared server sets, ``j``; with disjoint sets, the flow number).
FLOW_COLUMNS = (
    "flow",
    "client",
    "server",
    "bytes_delivered",
    "bytes_sent",
    "data_packets_sent",
    "retransmitted_packets",
    "timeouts",
    "fast_retransmits",
    "max_cwnd_bytes",
    "drops",
)
#: The summary figures :meth:`Result._repr_html_` shows, by their names in the summary (and its sweep columns).
HTML_FIGURES = (
    "goodput_mbps",
    "utilization",
    "throughput_mbps",
    "blocks",
    "sim_time_s",
    "block_time_ms.p50",
    "block_time_ms.p99",
    "block_time_ms.max",
    "timeouts",
    "fast_retransmits",
    "retransmitted_packets",
    "drops",
    "queue_peak_bytes",
)
#: Columns of :attr:`Result.background`, one row per background flow (no client, no server).
BACKGROUND_COLUMNS = tuple(c for c in FLOW_COLUMNS if c not in ("client", "server"))
#: Columns of :attr:`Result.clients`, one row per client.
CLIENT_COLUMNS = (
    "client",
    "goodput_mbps",
    "bytes_delivered",
    "blocks",
    "block_time_p50_ms",
    "block_time_max_ms",
    "timeouts",
    "drops",
)
#: Columns of :attr:`Result.blocks_table`, one row per completed block (``block`` counts each client's own).
BLOCK_COLUMNS = ("client", "block", "start_s", "time_ms", "max_flow_timeouts")
#: Columns of :attr:`Result.timeouts_table`, one row per retransmission timeout
#: (``crates/incast-sim/src/tcp/forensics.rs``: FAST08 §5.1 ``class``, GIP §III ``gip_class``).
TIMEOUT_COLUMNS = (
    "time_s",
    "flow",
    "client",
    "side",
    "block",
    "rto_us",
    "backoff",
    "cwnd_bytes",
    "flight_bytes",
    "dart",
    "class",
    "gip_class",
    "spurious",
)
#: Columns of :attr:`Result.ports`, one row per switch output port (one direction of a link).
PORT_COLUMNS = (
    "node",
    "peer",
    "rate_mbps",
    "frames",
    "drops",
    "lost",
    "ecn_marks",
    "peak_bytes",
    "peak_packets",
    "mean_bytes",
    "pause_frames",
    "paused_us",
    *(f"paused_p{p}_us" for p in range(8)),
)
#: Column dtypes where the unit suffix does not tell (used for empty frames).
_DTYPES = {
    "node": "object",
    "peer": "object",
    "rate_mbps": "float64",
    "mean_bytes": "float64",
    "paused_us": "float64",
    **{f"paused_p{p}_us": "float64" for p in range(8)},
    "side": "object",
    "class": "object",
    "gip_class": "object",
    "spurious": "bool",
    "rto_us": "float64",
}


#: What the engine's result holds besides its summary, built into tables when first read.
_TABLES = ("clients", "flows", "blocks", "timeouts", "ports", "background", "traces")

#: Columns and dtypes of each trace (``crates/incast-sim/src/stats/trace.rs``). ``ssthresh_bytes``
#: is null while ssthresh is still unset (before the first loss), ``srtt_us`` before the first RTT sample.
TRACE_COLUMNS: dict[str, dict[str, str]] = {
    "goodput": {"time_s": "float64", "goodput_mbps": "float64"},
    "queue": {"time_s": "float64", "queue_bytes": "int64", "dropped": "bool"},
    "flows": {
        "time_s": "float64",
        "flow": "int64",
        "cwnd_bytes": "int64",
        "ssthresh_bytes": "Int64",
        "rto_us": "float64",
        "srtt_us": "float64",
    },
    "bbr": {
        "time_s": "float64",
        "flow": "int64",
        "mode": "category",
        "bw_bps": "float64",
        "min_rtt_s": "float64",
        "pacing_gain": "float64",
        "cwnd_gain": "float64",
        "pacing_rate_bps": "float64",
        "delivery_rate_bps": "float64",
        "cwnd_pkts": "int64",
    },
    "block_cwnd": {"block": "int64", "flow": "int64", "cwnd_bytes": "int64"},
}


#: Columns and dtypes of :attr:`Result.fct_table` (``crates/incast-sim/src/stats/fct.rs``).
FCT_COLUMNS: dict[str, str] = {
    "src": "int64",
    "dst": "int64",
    "size_bytes": "int64",
    "delivered_bytes": "int64",
    "start_s": "float64",
    "fct_s": "float64",
    "ideal_s": "float64",
    "slowdown": "float64",
    "finished": "bool",
    "query": "int64",
    "path": "category",
}

#: Columns and dtypes of :attr:`Result.queries_table`.
QUERY_COLUMNS: dict[str, str] = {
    "aggregator": "int64",
    "fanin": "int64",
    "start_s": "float64",
    "time_s": "float64",
    "finished": "bool",
    "timed_out": "bool",
}


class Traces:
    """The time series of one run, one DataFrame per trace, ``None`` for a trace that was off.

    ``goodput`` (``time_s`` bin start, ``goodput_mbps``: FAST08 Figure 5),
    ``queue`` (``time_s``, ``queue_bytes``, ``dropped``: the switch port toward the
    client at every frame offered to it), ``flows`` (``time_s``, ``flow``,
    ``cwnd_bytes``, ``ssthresh_bytes``, ``rto_us``, ``srtt_us``: each server at
    every ACK and timeout), ``bbr`` (``time_s``, ``flow``, ``mode`` — ``startup``,
    ``drain``, ``probe_bw`` or ``probe_rtt`` —, ``bw_bps``, ``min_rtt_s``, ``pacing_gain``,
    ``cwnd_gain`` (ratios, ``tcp_bbr_info``'s over 256), ``pacing_rate_bps``,
    ``delivery_rate_bps``, ``cwnd_pkts``: each BBR server's model at every ACK and timeout, as
    ``TCP_CC_INFO`` and ``TCP_INFO`` report it; ``min_rtt_s`` and ``delivery_rate_bps`` NaN before a
    sample) and ``block_cwnd`` (``block``, ``flow``, ``cwnd_bytes``:
    GIP Figure 4).
    """

    goodput: pd.DataFrame | None
    queue: pd.DataFrame | None
    flows: pd.DataFrame | None
    bbr: pd.DataFrame | None
    block_cwnd: pd.DataFrame | None

    def __init__(self, engine_traces: list[tuple[str, list[EngineColumn]]]) -> None:
        on = dict(engine_traces)
        for name, dtypes in TRACE_COLUMNS.items():
            columns = on.get(name)
            frame = None if columns is None else _columns_frame(columns, dtypes)
            setattr(self, name, frame)

    def items(self) -> list[tuple[str, pd.DataFrame]]:
        """``(name, frame)`` of every trace that was on, in the order of :data:`TRACE_COLUMNS`."""
        return [(name, frame) for name in TRACE_COLUMNS if (frame := getattr(self, name)) is not None]

    def __repr__(self) -> str:
        on = ", ".join(f"{name} ({len(frame)} rows)" for name, frame in self.items()) or "none"
        return f"<Traces: {on}>"


#: One column as the engine hands it over (``incast_sim::stats::columns``): name, numpy dtype,
#: labels of a coded column (empty otherwise), little-endian values.
EngineColumn = tuple[str, str, list[str], bytes]


def _columns_frame(columns: list[EngineColumn], dtypes: Mapping[str, str]) -> pd.DataFrame:
    """A table from the engine's typed columns, each an array over its buffer in the given
    ``dtypes`` (and their order): coded columns categorical over their labels, a negative value of
    a nullable integer column (``Int64``) missing."""
    import numpy as np
    import pandas as pd

    data: dict[str, Any] = {}
    for name, dtype, labels, raw in columns:
        values = np.frombuffer(raw, dtype=dtype)
        if labels or dtypes[name] == "category":  # -1: no label
            data[name] = pd.Categorical.from_codes(values, labels)
        elif dtypes[name] == "Int64":
            data[name] = pd.array(np.where(values < 0, 0, values), dtype="Int64")
            data[name][values < 0] = pd.NA
        else:
            data[name] = values.astype(dtypes[name])
    return pd.DataFrame(data, columns=list(dtypes))


class BlockTimes(NamedTuple):
    """Block completion time percentiles in milliseconds (NaN when no block completed)."""

    p50: float
    p99: float
    max: float


def _f(value: Any) -> float:
    """An engine float; the engine's JSON writes NaN as null."""
    return math.nan if value is None else float(value)


class Result:
    """What one run produced.

    Summary attributes (see ``crates/incast-sim/src/stats/mod.rs`` for their exact
    definitions): ``goodput_mbps``, ``throughput_mbps``, ``best_goodput_mbps``,
    ``utilization``, ``blocks``, ``sim_time_s``, ``bytes_delivered``, ``timeouts``,
    ``spurious_timeouts`` (judged spurious by F-RTO or Eifel and undone), ``undropped_timeouts``
    (timeouts whose segment had a copy the network had not dropped: delivered or still on its way;
    every timeout judged), ``fast_retransmits``,
    ``loss_probes`` and ``lost_retransmits`` (RACK-TLP's tail loss probes, and retransmissions it
    found lost again),
    ``redundant_packets`` (GIP's tail copies), ``ecn_marks``, ``rude_drops``, ``send_losses``,
    ``rude_polite_s`` (when the last rude flow turned polite, NaN if none did),
    ``retransmitted_packets``, ``drops``, ``block_time_ms``
    (p50/p99/max), ``server_srtt_ms``, ``server_rttvar_ms`` and ``server_rto_ms`` (the servers' mean
    smoothed RTT, RTT variation as ``TCP_INFO`` reports it, and RTO as each request after a
    connection's first reached them, NaN without one: what the testbed's servers read from
    ``TCP_INFO``), ``data_packets``, ``packets_sent``, ``packets_delivered``,
    ``packets_in_flight``, ``queue_peak_bytes``, ``events``, ``timeout_classes``
    (FAST08 §5.1 counts: ``full_window_loss``, ``last_packet_loss``,
    ``lost_retransmit``, ``other``) and ``gip_timeout_classes`` (GIP §III:
    ``floss``, ``lack``, ``other``), ``lost_retransmit_dart_ge_thresh`` and
    ``lost_retransmit_dart_lt_thresh`` (FAST08 Table 3: lost retransmits after at least,
    or fewer than, the duplicate-ACK threshold's duplicate ACKs),
    ``unluckiest_flow_timeouts_per_block``, ``unluckiest_flow_floss_per_block`` and
    ``unluckiest_flow_lack_per_block`` (GIP §III: the mean over completed blocks of
    the most timeouts one server suffered in the block) and ``timed_out_block_fraction``
    (SIGCOMM09 §2.2: the share of completed blocks that met a timeout); the last
    four are NaN without a completed block. With several clients (``workload.clients``)
    every summary figure is the aggregate of all of them; ``best_goodput_mbps``
    is what all the clients' links carry together, ``queue_peak_bytes`` is the
    port toward client 0, and ``client_goodput_mbps`` lists each client's share
    of ``goodput_mbps``. Besides: ``wall_s`` (wall-clock seconds of
    the engine call), ``started_at`` (the wall-clock time it began, UTC),
    ``events_per_s``, the resolved ``scenario``, and
    DataFrames: ``clients`` (one row per client: its goodput, bytes, blocks,
    block-time median and maximum, timeouts and drops), ``flows`` (one row per
    reading connection, with its ``client`` and ``server``), ``blocks_table`` (one
    row per completed block, with its ``client``), ``timeouts_table`` (one row per retransmission timeout;
    empty when ``stats.timeouts`` is off) and ``ports`` (one row per switch output
    port: ``node``, ``peer``, ``rate_mbps``, ``frames``, ``drops``, ``lost`` on the
    wire, ``ecn_marks``,
    ``peak_bytes``, ``peak_packets``, ``mean_bytes``, ``pause_frames`` (802.3x
    PAUSE or 802.1Qbb PFC) sent to ``peer``, ``paused_us`` stopped by ``peer``
    (with PFC: its most-paused priority), ``paused_p0_us`` ... ``paused_p7_us``
    each priority stopped) and ``background`` (one row per
    background flow, columns as ``flows`` without ``client`` and ``server``;
    ``background_goodput_mbps`` sums them;
    ``udp_goodput_mbps`` is what the UDP source delivered); and ``traces`` (:class:`Traces`, the
    time series ``[trace]`` turned on), written as Parquet by :meth:`write_traces`;
    with ``trace.pcap`` on, :meth:`write_pcap` writes one pcap file per host.
    """

    #: When the engine call began (UTC): the date a capture's timestamps start from.
    started_at: datetime

    goodput_mbps: float
    client_goodput_mbps: list[float]
    throughput_mbps: float
    best_goodput_mbps: float
    utilization: float
    blocks: int
    sim_time_s: float
    bytes_delivered: int
    timeouts: int
    spurious_timeouts: int
    undropped_timeouts: int
    lost_retransmit_dart_ge_thresh: int
    lost_retransmit_dart_lt_thresh: int
    unluckiest_flow_timeouts_per_block: float
    unluckiest_flow_floss_per_block: float
    unluckiest_flow_lack_per_block: float
    timed_out_block_fraction: float
    fast_retransmits: int
    loss_probes: int
    lost_retransmits: int
    retransmitted_packets: int
    redundant_packets: int
    ecn_marks: int
    rude_drops: int
    send_losses: int
    rude_polite_s: float
    drops: int
    block_time_ms: BlockTimes
    server_srtt_ms: float
    server_rttvar_ms: float
    server_rto_ms: float
    data_packets: int
    packets_sent: int
    packets_delivered: int
    packets_in_flight: int
    queue_peak_bytes: int
    background_goodput_mbps: float
    udp_goodput_mbps: float
    events: int
    timeout_classes: dict[str, int]
    gip_timeout_classes: dict[str, int]
    # With [traffic] on only (``stats::fct::TrafficFigures``; each ``slowdown_<bucket>`` and ``fct_ms_<bucket>``
    # a dict of p50, p95, p99 and mean as well): absent attributes otherwise.
    open_flows: int
    open_flows_unfinished: int
    offered_load: float
    queries: int
    queries_unfinished: int
    query_time_ms: dict[str, float | None]
    queries_timed_out: int
    query_timeout_fraction: float

    def __init__(
        self,
        scenario: Scenario,
        engine_result: Mapping[str, Any],
        wall_s: float,
        pcap: list[bytes] | None = None,
        started_at: datetime | None = None,
    ) -> None:
        self.scenario = scenario
        self.started_at = started_at or datetime.now(timezone.utc)
        self._pcap = pcap or []
        self.wall_s = wall_s
        self._summary: dict[str, Any] = dict(engine_result["summary"])
        for key, value in self._summary.items():
            if key == "block_time_ms":
                value = BlockTimes(_f(value.get("p50")), _f(value.get("p99")), _f(value.get("max")))
            elif value is None or isinstance(value, float):
                value = _f(value)
            setattr(self, key, value)
        # The tables stay as the engine gave them (rows, typed columns) until first asked for:
        # a run whose caller reads only the summary never builds a DataFrame or imports pandas.
        self._tables = {k: engine_result[k] for k in _TABLES}

    @cached_property
    def clients(self) -> pd.DataFrame:
        """One row per client (columns :data:`CLIENT_COLUMNS`)."""
        return _frame(self._tables.pop("clients"), CLIENT_COLUMNS)

    @cached_property
    def flows(self) -> pd.DataFrame:
        """One row per reading connection (columns :data:`FLOW_COLUMNS`)."""
        return _frame(self._tables.pop("flows"), FLOW_COLUMNS)

    @cached_property
    def blocks_table(self) -> pd.DataFrame:
        """One row per completed block (columns :data:`BLOCK_COLUMNS`)."""
        return _frame(self._tables.pop("blocks"), BLOCK_COLUMNS)

    @cached_property
    def timeouts_table(self) -> pd.DataFrame:
        """One row per retransmission timeout (columns :data:`TIMEOUT_COLUMNS`)."""
        return _columns_frame(self._tables.pop("timeouts"), _TIMEOUT_DTYPES)

    @cached_property
    def ports(self) -> pd.DataFrame:
        """One row per switch output port (columns :data:`PORT_COLUMNS`)."""
        return _frame([_port_row(r) for r in self._tables.pop("ports")], PORT_COLUMNS)

    @cached_property
    def background(self) -> pd.DataFrame:
        """One row per background flow (columns :data:`BACKGROUND_COLUMNS`)."""
        return _frame(self._tables.pop("background"), BACKGROUND_COLUMNS)

    @cached_property
    def traces(self) -> Traces:
        """The time series ``[trace]`` turned on."""
        return Traces(self._tables["traces"])

    @cached_property
    def fct_table(self) -> pd.DataFrame:
        """One row per open-loop flow and query response (``[traffic]``; empty when off), columns
        :data:`FCT_COLUMNS`: ``fct_s`` and ``slowdown`` are NaN for a flow unfinished at the stop (``finished``
        false), ``ideal_s`` is the flow alone on the empty fabric (docs/GUIDE.md, "Open-loop traffic"),
        ``query`` the query a response answers (-1 for an open-loop flow), ``path`` the switches its data
        crosses by name, ``>`` between them (the route its 5-tuple hashes to; missing when the fabric sprays
        packets, ``topology.ecmp = "packet"``)."""
        return _columns_frame(dict(self._tables["traces"]).get("fct", []), FCT_COLUMNS)

    @cached_property
    def queries_table(self) -> pd.DataFrame:
        """One row per partition/aggregate query (columns :data:`QUERY_COLUMNS`; ``time_s`` NaN when unfinished)."""
        return _columns_frame(dict(self._tables["traces"]).get("queries", []), QUERY_COLUMNS)

    def write_traces(self, directory: str | Path) -> list[Path]:
        """Write each trace that was on as ``<directory>/<name>.parquet``; return the paths written.

        Creates ``directory`` (and its parents). Each file is written under a
        temporary name and renamed into place, so a failure never leaves a
        half-written file behind. The resolved scenario (TOML) is embedded in each
        file's metadata under ``incast.scenario``. Raises ``OSError`` if the
        directory cannot be created or written.
        """
        import pyarrow as pa
        import pyarrow.parquet as pq

        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        scenario = self.scenario.to_toml().encode()
        written: list[Path] = []
        for name, frame in self.traces.items():
            table = pa.Table.from_pandas(frame, preserve_index=False)
            table = table.replace_schema_metadata({**(table.schema.metadata or {}), b"incast.scenario": scenario})
            path = out / f"{name}.parquet"
            tmp = out / f".{name}.parquet.{os.getpid()}.tmp"
            try:
                pq.write_table(table, tmp)
                os.replace(tmp, path)
            finally:
                tmp.unlink(missing_ok=True)
            written.append(path)
        return written

    def write_pcap(self, directory: str | Path, start: datetime | None = None) -> list[Path]:
        """Write the packet capture as ``client.pcap`` and ``server-<i>.pcap`` in ``directory``; return the paths.

        With several clients the clients' files are ``client-<c>.pcap``.

        One file per host (classic libpcap, nanosecond timestamps, Ethernet), as
        the engine encoded it (``crates/incast-sim/src/stats/pcap.rs``): what the
        host sent as its NIC took it and what reached it. A record's timestamp is
        ``start`` (default :attr:`started_at`, when the run began) plus the
        simulated time, so a capture tool shows the date the run was made;
        ``start=datetime(1970, 1, 1, tzinfo=timezone.utc)`` keeps simulated time
        alone, and any fixed ``start`` gives the same bytes on every run. Raises
        ``ValueError`` if the run had ``trace.pcap`` off or ``start`` is before
        1970 or too late for the format, and ``OSError`` if the directory cannot be
        created or written. Every file is written under a temporary name first and
        the files are renamed into place only once all are written, so a failure
        leaves no file, whole or partial.
        """
        if not self._pcap:
            raise ValueError("no packet capture: run with trace.pcap = true (incast run --pcap DIR)")
        when = start or self.started_at
        if when.tzinfo is None:
            raise ValueError("start: a timezone-aware datetime, e.g. datetime(2026, 1, 1, tzinfo=timezone.utc)")
        delta = when - datetime(1970, 1, 1, tzinfo=timezone.utc)
        by_ns = (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1_000
        if by_ns < 0:
            raise ValueError(f"start: {when.isoformat()} is before 1970-01-01, where pcap time begins")
        blobs = [_core.pcap_shift(blob, by_ns) for blob in self._pcap]
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        clients = self.scenario.workload.clients
        names = ["client.pcap"] if clients == 1 else [f"client-{c}.pcap" for c in range(clients)]
        names += [f"server-{i}.pcap" for i in range(len(self._pcap) - clients)]
        pairs = [(out / name, out / f".{name}.{os.getpid()}.tmp") for name in names]
        try:
            for (_, tmp), blob in zip(pairs, blobs, strict=True):
                tmp.write_bytes(blob)
            for path, tmp in pairs:
                os.replace(tmp, path)
        finally:
            for _, tmp in pairs:
                tmp.unlink(missing_ok=True)
        return [path for path, _ in pairs]

    def dart_histogram(self) -> pd.Series:
        """Timeouts per DART value (FAST08 Figure 11: duplicate ACKs received at timeout), by ascending DART.

        Counts the rows of :attr:`timeouts_table`, so it is empty when ``stats.timeouts`` is off.
        """
        counts = self.timeouts_table["dart"].value_counts().sort_index().astype("int64")
        counts.index = counts.index.astype("int64")
        counts.index.name = "dart"
        counts.name = "timeouts"
        return counts

    @property
    def events_per_s(self) -> float:
        """Engine events processed per wall-clock second."""
        return self.events / self.wall_s if self.wall_s > 0 else math.nan

    def to_dict(self) -> dict[str, Any]:
        """The summary, ``wall_s``, ``events_per_s`` and the resolved ``scenario``: the CLI's ``--json`` object.

        JSON-safe: NaN (e.g. block-time percentiles of a run with no block) becomes ``None``.
        """
        out: dict[str, Any] = {}
        for key, value in self._summary.items():
            out[key] = dict(value) if isinstance(value, Mapping) else value
        out["wall_s"] = self.wall_s
        eps = self.events_per_s
        out["events_per_s"] = None if math.isnan(eps) else eps
        out["scenario"] = self.scenario.to_dict()
        return out

    def _repr_html_(self) -> str:
        """Jupyter's view: the scenario and the settings not at their default, the headline figures of the
        summary (:data:`HTML_FIGURES`) and the flows table (at most 60 rows shown), every text escaped."""
        from html import escape

        from incast.labels import format_number

        t = self.block_time_ms
        values = {**self._summary, "block_time_ms.p50": t.p50, "block_time_ms.p99": t.p99, "block_time_ms.max": t.max}
        figures = "".join(
            f"<tr><th style='text-align:left'>{escape(k)}</th><td>{escape(format_number(values[k]))}</td></tr>"
            for k in HTML_FIGURES
        )
        changed = self.scenario.describe_changes()
        flows = self.flows.to_html(index=False, max_rows=60, border=0)
        return (
            f"<div><p><strong>{escape(self.scenario.describe())}</strong>"
            + (f"<br>settings not at their default: {escape(changed)}" if changed else "")
            + "</p>"
            f"<table>{figures}</table><p>flows: one row per reading connection</p>{flows}</div>"
        )

    def __repr__(self) -> str:
        return (
            f"<Result {self.scenario.describe()}: goodput {self.goodput_mbps:.1f} Mbps "
            f"({self.utilization:.1%}), {self.blocks} blocks, {self.timeouts} timeouts>"
        )


def _port_row(row: dict[str, Any]) -> dict[str, Any]:
    """An engine port row with its per-priority pause times as columns ``paused_p0_us`` ... ``paused_p7_us``."""
    row = dict(row)
    for p, us in enumerate(row.pop("paused_priority_us")):
        row[f"paused_p{p}_us"] = us
    return row


def _frame(rows: list[dict[str, Any]], columns: tuple[str, ...]) -> pd.DataFrame:
    import pandas as pd

    if rows:
        return pd.DataFrame.from_records(rows, columns=list(columns))
    return pd.DataFrame({c: pd.Series(dtype=_dtype(c)) for c in columns})


def _dtype(column: str) -> str:
    if column in _DTYPES:
        return _DTYPES[column]
    return "float64" if column.endswith(("_s", "_ms")) else "int64"


#: The timeout table's dtypes: ``client`` missing for a background flow's timeout (``-1`` from the
#: engine); ``side``, ``class`` and ``gip_class`` come coded and become categorical.
_TIMEOUT_DTYPES = {c: "Int64" if c == "client" else _dtype(c) for c in TIMEOUT_COLUMNS}


def _scenario(scenario: Scenario | Mapping[str, Any] | None, fields: Mapping[str, Any]) -> Scenario:
    fields = dict(fields)
    preset = fields.pop("preset", None)
    if isinstance(scenario, Scenario):
        if preset is not None:
            raise ScenarioError("preset: give it with a mapping or keyword fields; a Scenario has every field set")
        return scenario.with_overrides(fields) if fields else scenario
    if scenario is not None and not isinstance(scenario, Mapping):
        raise TypeError(f"run() takes a Scenario, a mapping or keyword fields, not {type(scenario).__name__}")
    data = scenario or {}
    if preset is not None:
        if not isinstance(preset, str):
            raise ScenarioError(f"preset: must be a preset name (see incast presets), got {preset!r}")
        data = with_preset(preset, data)
    return Scenario.parse(data, fields)


def run(scenario: Scenario | Mapping[str, Any] | None = None, /, **fields: Any) -> Result:
    """Run one scenario to its stop condition.

    ``scenario`` is a :class:`~incast.scenario.Scenario`, a mapping in the TOML
    shape, or omitted; keyword ``fields`` (``servers=16``, ``blocks=5``,
    ``tcp={"rto_min": "1ms"}`` or dotted names through ``**{"tcp.rto_min": "1ms"}``)
    override it. ``preset="dctcp"`` (see :mod:`incast.presets`) starts from a
    named bundle of settings that everything else overrides. Raises
    :class:`~incast.errors.ScenarioError` for an invalid scenario and
    :class:`~incast.errors.SimulationError` if the engine fails.
    """
    resolved = _scenario(scenario, fields)
    payload = resolved.to_json()
    started_at = datetime.now(timezone.utc)
    start = time.perf_counter()
    out, timeouts, traces, pcap = _core.run(payload)
    wall_s = time.perf_counter() - start
    engine_result = json.loads(out)
    engine_result["timeouts"] = timeouts
    engine_result["traces"] = traces
    return Result(resolved, engine_result, wall_s, pcap, started_at)
