"""``incast run``: run one scenario, or one per value of ``--servers 1,4,16``, ``--seed 1,2,3`` and
``--preset linux,ns2`` (every combination).

The header names the scenario (``Scenario.describe``) and then every other
setting that is not the engine's default, so a run says all it ran with. With
several runs the table has a row per preset and server count; over several
seeds each cell is the mean and the sample standard deviation (``mean ± sd``).

Where each setting comes from, later winning: the engine defaults, the
``--preset`` (``incast presets`` lists them), the scenario file, the named
options, then ``--set KEY=VALUE`` in the order given (``incast.cli.options``;
``incast settings`` lists every setting). Named options take unit strings
(``--rtt 100us``, ``--buffer 64pkt``); their help is the engine's doc line of
the setting each stands for.

``--trace-dir DIR`` turns every trace on (goodput in 5 ms bins unless
``trace.goodput_bin`` is set) and writes one Parquet file per trace into DIR,
or into ``DIR/servers=N/`` for each value of a server list.

``--pcap DIR`` turns the packet capture on (``trace.pcap``) and writes one
pcap file per host (``client.pcap``, or ``client-<c>.pcap`` with several
clients, and ``server-<i>.pcap``) into DIR, or into ``DIR/servers=N/`` for
each value of a server list.

``--clients N`` runs N clients reading at once, each its own block loop;
``--server-sets shared`` (the default) has them read from the same servers,
``disjoint`` gives each its own ``--servers``. Goodput is the clients'
aggregate; the summary lists each client's share.
"""

import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple

import typer

from incast.cli.options import (
    OPTION_FIELDS,
    AsJson,
    ScenarioFile,
    Servers,
    SetOpt,
    named_options,
    named_overrides,
    nonempty,
    option,
    parse_counts,
    parse_names,
    parse_servers,
    parse_set,
    resolve,
    setting_help,
)
from incast.cli.output import ms, plural, rate
from incast.errors import ScenarioError

if TYPE_CHECKING:
    from rich.console import Console

    from incast.result import Result
    from incast.scenario import Scenario

__all__ = ["register", "run"]

#: What ``--trace-dir`` turns on, after ``--set``; the goodput bin is apart (see :func:`_goodput_bin`).
_TRACES = [("trace.queue", True), ("trace.flows", True), ("trace.bbr", True), ("trace.block_cwnd", True)]


@named_options(*OPTION_FIELDS)
def run(
    scenario_file: ScenarioFile = None,
    servers: Servers = None,
    *,
    seed: Annotated[
        str | None, option("--seed", "N[,N...]", f"{setting_help('seed')} A list like 1,2,3 runs once per seed.")
    ] = None,
    topology: Annotated[
        str | None,
        option(
            "--topology",
            "star|tree:K|fat-tree:K|leaf-spine:LxSxH|FILE",
            "One switch; a two-tier tree with K edge switches; a k-ary fat tree; L leaves, S spines and H hosts "
            "per leaf; or a topology file. Fat trees and leaf-spines forward over equal-cost paths (topology.ecmp).",
        ),
    ] = None,
    wan_spikes: Annotated[
        str | None,
        option(
            "--wan-spikes",
            "GAP,HEIGHT,DURATION",
            "With --wan: delay spikes every GAP on average, raising the delay by HEIGHT for DURATION, "
            "e.g. 10s,100ms,200ms.",
        ),
    ] = None,
    pause: Annotated[
        bool, typer.Option("--pause", help="Ethernet flow control (802.3x PAUSE) at every switch port.")
    ] = False,
    pfc: Annotated[
        bool,
        typer.Option(
            "--pfc",
            help="Per-priority flow control (802.1Qbb PFC) instead of --pause, with its thresholds; needs traffic "
            "in several priorities (--set workload.priority=3 ...).",
        ),
    ] = False,
    background: Annotated[
        str | None,
        option(
            "--background",
            "tcp:N[@client|@server]|udp:RATE",
            "N bulk TCP flows (to receivers of their own, into client 0, or into server 0), or "
            "constant-bit-rate UDP into the client.",
        ),
    ] = None,
    traffic: Annotated[
        str | None,
        option(
            "--traffic",
            "SIZES:LOAD",
            "Open-loop flows at LOAD of each host link, sizes websearch, datamining, hadoop or a CDF file "
            "(e.g. websearch:0.5; with --duration). Without --servers no reads run beside them.",
        ),
    ] = None,
    preset: Annotated[
        str | None,
        option(
            "--preset",
            "NAME[,NAME...]",
            "Start from a named bundle of settings (see 'incast presets'); a list like linux,ns2 runs once per preset.",
        ),
    ] = None,
    set_: SetOpt = None,
    as_json: AsJson = False,
    trace_dir: Annotated[
        str | None,
        option(
            "--trace-dir", "DIR", "Record every trace (goodput bin 5ms unless set) and write them as Parquet into DIR."
        ),
    ] = None,
    pcap: Annotated[
        str | None,
        option(
            "--pcap",
            "DIR",
            "Capture every packet and write one pcap file per host (client.pcap, server-<i>.pcap) into DIR.",
        ),
    ] = None,
    **named: str | None,
) -> None:
    """Simulate synchronized reads and print goodput, block times, timeouts and drops."""
    from rich.console import Console

    from incast.result import run as run_scenario
    from incast.scenario import read_toml
    from incast.topology import parse_topology_flag
    from incast.traffic import parse_traffic_flag

    overrides = named_overrides(named)
    if topology is not None:
        overrides.insert(0, ("topology", parse_topology_flag(topology)))
    if pause:
        overrides.append(("switch.pause", True))
    if pfc:
        overrides.append(("switch.pfc", True))
    if background is not None:
        overrides.extend(_parse_background(background))
    if traffic is not None:
        overrides.extend(parse_traffic_flag(traffic))
    if wan_spikes is not None:
        overrides.extend(_parse_wan_spikes(wan_spikes))
    overrides += [parse_set(item) for item in set_ or []]
    overrides += [*(_TRACES if trace_dir is not None else []), *([("trace.pcap", True)] if pcap is not None else [])]
    file: dict[str, Any] = read_toml(scenario_file) if scenario_file is not None else {}
    presets = parse_names(preset, "preset") if preset is not None else [None]
    # Open-loop traffic alone needs no servers: without --servers (or a file's) it runs no reads.
    no_reads = traffic is not None and "servers" not in file
    counts = parse_servers(servers) if servers is not None else [0 if no_reads else None]
    seeds = parse_counts(seed, "seed", "a seed like 7 or a list like 1,2,3") if seed is not None else [None]
    runs = [_Run(p, n, s) for p in presets for n in counts for s in seeds]
    scenarios = [resolve(file, r.overrides() + overrides, r.preset) for r in runs]
    trace_dir, pcap = nonempty(trace_dir, "--trace-dir", "a folder"), nonempty(pcap, "--pcap", "a folder")
    trace_dirs: list[Path | None] = [None] * len(scenarios)
    if trace_dir is not None:
        scenarios = [_goodput_bin(s) for s in scenarios]
        trace_dirs = list(_run_dirs(trace_dir, runs))
    pcap_dirs: list[Path | None] = [None] * len(scenarios)
    if pcap is not None:
        pcap_dirs = list(_run_dirs(pcap, runs))

    # Wide enough for the per-server table when the output is a pipe or a file.
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 120)
    results: list[Result] = []
    for scenario, where, pcap_where in zip(scenarios, trace_dirs, pcap_dirs, strict=True):
        result = run_scenario(scenario)
        if where is not None:
            _wrote("traces", result.write_traces(where), where)
        if pcap_where is not None:
            _wrote("packet capture", result.write_pcap(pcap_where), pcap_where)
        if as_json:
            print(json.dumps(result.to_dict(), allow_nan=False), flush=True)
        results.append(result)
    if as_json:
        return
    if len(runs) > 1:
        _print_table(console, results, runs)
    else:
        _print_summary(console, results[0], runs[0].preset)


def _wrote(what: str, paths: list[Path], where: Path) -> None:
    """Say on standard error where files went (standard output may be JSON)."""
    names = ", ".join(p.name for p in paths) or "nothing"
    print(f"{what}: {names} in {where}/", file=sys.stderr)


def register(app: typer.Typer) -> None:
    """Add the ``run`` verb to ``app``."""
    app.command("run", no_args_is_help=False)(run)


# ---------------------------------------------------------------------------
# Inputs.


class _Run(NamedTuple):
    """One run of a command line: a value of each list option (None where it was not given)."""

    preset: str | None
    servers: int | None
    seed: int | None

    def overrides(self) -> list[tuple[str, Any]]:
        """The settings this run sets (the preset is its base, not a setting)."""
        return [(k, v) for k, v in (("servers", self.servers), ("seed", self.seed)) if v is not None]


def _run_dirs(root: str, runs: "list[_Run]") -> list[Path]:
    """One directory per run: ``root``, or below it ``preset=P/servers=N/seed=S`` for each option given
    several values. Made before any run, so that a bad path fails first."""
    several = [len({r[i] for r in runs}) > 1 for i in range(len(_Run._fields))]
    dirs = []
    for r in runs:
        d = Path(root)
        for name, value, listed in zip(_Run._fields, r, several, strict=True):
            d = d / f"{name}={value}" if listed else d
        d.mkdir(parents=True, exist_ok=True)
        dirs.append(d)
    return dirs


def _goodput_bin(scenario: "Scenario") -> "Scenario":
    """``scenario`` with the goodput trace's bin as set, else 5 ms (FAST08 Figure 5)."""
    return scenario if scenario.trace.goodput_bin is not None else scenario.with_overrides({"trace.goodput_bin": "5ms"})


def _parse_background(text: str) -> list[tuple[str, Any]]:
    """``tcp:N[@client|@server]`` or ``udp:RATE`` -> the settings it overrides (the scenario checks the values)."""
    kind, sep, value = text.partition(":")
    field = {"tcp": "background.tcp_flows", "udp": "background.udp_rate"}.get(kind.strip())
    value, at, receiver = value.partition("@")
    to = {"client": "background.tcp_to_client", "server": "background.tcp_to_server"}.get(receiver.strip())
    if field is None or not sep or (at and (kind.strip() != "tcp" or to is None)):
        raise ScenarioError(
            "background: must be tcp:N (N bulk TCP flows to receivers of their own), tcp:N@client or "
            f"tcp:N@server (into client 0 or server 0), or udp:RATE (e.g. udp:100Mbps), got {text!r}"
        )
    return [(field, value.strip())] + ([(to, True)] if to else [])


def _parse_wan_spikes(text: str) -> list[tuple[str, str]]:
    """``GAP,HEIGHT,DURATION`` -> the three spike settings (the scenario checks each value)."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 3:
        raise ScenarioError(
            f"wan.spike_interval: --wan-spikes takes GAP,HEIGHT,DURATION (e.g. 10s,100ms,200ms), got {text!r}"
        )
    return list(zip(("wan.spike_interval", "wan.spike_height", "wan.spike_duration"), parts, strict=True))


# ---------------------------------------------------------------------------
# Human output.


def _rate(events_per_s: float) -> str:
    if math.isnan(events_per_s):
        return "—"
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if events_per_s >= div:
            return f"{events_per_s / div:.2f} {unit}"
    return f"{events_per_s:.0f} "


def _print_header(console: "Console", scenario: "Scenario", preset: str | None, columns: "set[str]") -> None:
    """What ran: the scenario's one line and the preset, then every other setting that is not the
    engine's default (``name=value``, TOML form), but for the settings the table's ``columns`` show."""
    line = scenario.describe()
    if "servers" in columns:  # all but the server count
        wl = scenario.workload
        line = line.split(", ", 1)[-1]
        line = f"{wl.clients} clients ({wl.server_sets} servers), {line}" if wl.clients > 1 else line
    console.print(line + (f", preset {preset}" if preset is not None else ""), style="bold", markup=False)
    changed = scenario.describe_changes(omit=columns)
    if changed:
        console.print(f"settings not at their default: {changed}", markup=False)


def _traffic_rows(table: Any, r: "Result") -> None:
    """The open-loop traffic's lines: flows, slowdown by size bucket, queries."""

    def tail(t: dict[str, Any]) -> str:
        return "-" if t["p50"] is None else f"p50 {t['p50']:.2f}, p95 {t['p95']:.2f}, p99 {t['p99']:.2f}"

    table.add_row(
        "open-loop flows",
        f"{r.open_flows} ({r.open_flows_unfinished} unfinished), offered load {r.offered_load:.1%}",
    )
    for bucket, label in (
        ("under_10kb", "<=10KB"),
        ("10kb_100kb", "10KB-100KB"),
        ("100kb_1mb", "100KB-1MB"),
        ("1mb_10mb", "1MB-10MB"),
        ("over_10mb", ">10MB"),
    ):
        table.add_row(f"slowdown {label}", tail(getattr(r, f"slowdown_{bucket}")))
    if r.queries:
        q = r.query_time_ms
        qt = "-" if q["p50"] is None else f"p50 {q['p50']:.3f} ms, p99 {q['p99']:.3f} ms"
        counts = f"{r.queries_unfinished} unfinished, {r.queries_timed_out} with a timeout"
        table.add_row("queries", f"{r.queries} ({counts}), completion {qt}")


def _read_rows(table: Any, r: "Result") -> None:
    """The synchronized reads' lines: goodput (per client too), throughput, blocks and block times."""
    t = r.block_time_ms
    table.add_row(
        "goodput",
        f"{rate(r.goodput_mbps)} = {r.utilization:.1%} of the best achievable {rate(r.best_goodput_mbps)}",
    )
    if len(r.clients) > 1:
        shares = ", ".join(f"{c.client}: {c.goodput_mbps:.1f}" for c in r.clients.itertuples())
        table.add_row("per client", f"{shares} Mbps")
        table.add_row("client blocks", ", ".join(f"{c.client}: {c.blocks}" for c in r.clients.itertuples()))
    table.add_row("throughput", f"{rate(r.throughput_mbps)} (retransmissions included)")
    table.add_row("blocks", f"{r.blocks} in {r.sim_time_s:.6g} s simulated")
    table.add_row("block time", f"p50 {ms(t.p50)} ms, p99 {ms(t.p99)} ms, max {ms(t.max)} ms")


def _print_summary(console: "Console", r: "Result", preset: str | None) -> None:
    from rich.table import Table

    _print_header(console, r.scenario, preset, set())
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    if r.scenario.workload.kind != "none":
        _read_rows(table, r)
    table.add_row(
        "timeouts",
        f"{r.timeouts} (fast retransmits {r.fast_retransmits}, retransmitted packets {r.retransmitted_packets}"
        + ("" if r.scenario.tcp.spurious_rto == "off" else f", spurious {r.spurious_timeouts}")
        + ")",
    )
    c, g = r.timeout_classes, r.gip_timeout_classes
    table.add_row(
        "timeout classes",
        f"full window loss {c['full_window_loss']}, last packet loss {c['last_packet_loss']}, "
        f"lost retransmit {c['lost_retransmit']}, other {c['other']} "
        f"(GIP: floss {g['floss']}, lack {g['lack']}, other {g['other']})",
    )
    table.add_row("drops", f"{r.drops} (switch queue peak {r.queue_peak_bytes} bytes)")
    if r.scenario.background.tcp_flows:
        flows = r.scenario.background.tcp_flows
        table.add_row("background", f"{r.background_goodput_mbps:.1f} Mbps over {plural(flows, 'TCP flow')}")
    if hasattr(r, "open_flows"):
        _traffic_rows(table, r)
    lossy = r.ports[r.ports["drops"] > 0]
    if r.scenario.topology.kind != "star" and len(lossy):
        where = ", ".join(f"{p.node}->{p.peer} {p.drops}" for p in lossy.itertuples())
        table.add_row("drops by port", where)
    table.add_row("engine", f"{r.events:,} events in {r.wall_s:.3f} s = {_rate(r.events_per_s)}events/s")
    console.print(table)


def _columns() -> "tuple[tuple[str, Callable[[Result], float], Callable[[float], str]], ...]":
    """The table's columns: heading, the figure of one run, and how a value of it reads."""
    from incast.labels import format_number

    return (
        ("goodput Mbps", lambda r: r.goodput_mbps, lambda x: f"{x:.1f}"),
        ("util", lambda r: r.utilization, lambda x: f"{x:.0%}"),
        ("blocks", lambda r: r.blocks, format_number),
        ("block p50 ms", lambda r: r.block_time_ms.p50, ms),
        ("p99 ms", lambda r: r.block_time_ms.p99, ms),
        ("max ms", lambda r: r.block_time_ms.max, ms),
        ("timeouts", lambda r: r.timeouts, format_number),
        ("drops", lambda r: r.drops, format_number),
    )


def _print_table(console: "Console", results: "list[Result]", runs: "list[_Run]") -> None:
    """One row per preset and server count; over several seeds, each figure as its mean above ``± sd``
    (the sample standard deviation across the seeds), and without the engine's speed."""
    from rich.table import Table

    rows: dict[tuple[str | None, int], list[Result]] = {}
    for run, r in zip(runs, results, strict=True):
        rows.setdefault((run.preset, r.scenario.servers), []).append(r)
    presets = list(dict.fromkeys(run.preset for run in runs))
    seeds = list(dict.fromkeys(run.seed for run in runs))
    shown = {"servers", *(["seed"] if len(seeds) > 1 else [])}  # by the table, not the header
    for preset in presets:
        first = next(rs[0] for (p, _), rs in rows.items() if p == preset)
        _print_header(console, first.scenario, preset, shown)
    if len(seeds) > 1:
        console.print(f"over seeds {', '.join(map(str, seeds))}: mean ± sd (sample standard deviation)")
    spread = "\nmean\n± sd" if len(seeds) > 1 else ""
    table = Table()
    names = [*(["preset"] if len(presets) > 1 else []), "servers"]
    columns = _columns()
    names += [f"{heading}{spread}" for heading, _, _ in columns] + ([] if spread else ["events/s"])
    for name in names:
        table.add_column(name, justify="right", no_wrap=True)
    for (preset, servers), rs in rows.items():
        cells = [*([str(preset)] if len(presets) > 1 else []), str(servers)]
        for _, figure, fmt in columns:
            mean, sd = _mean_sd([float(figure(r)) for r in rs])
            cells.append(fmt(mean) if len(rs) == 1 else f"{fmt(mean)}\n± {fmt(sd)}")
        cells += [] if spread else [_rate(rs[0].events_per_s).strip()]
        table.add_row(*cells)
    console.print(table)


def _mean_sd(values: list[float]) -> tuple[float, float]:
    """The mean and the sample standard deviation (NaN for one value)."""
    mean = sum(values) / len(values)
    if len(values) < 2:
        return mean, math.nan
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
