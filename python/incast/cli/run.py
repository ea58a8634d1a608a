"""``incast run``: run one scenario, or one per value of ``--servers 1,4,16``.

Where each setting comes from, later winning: the engine defaults, the
``--preset`` (``incast presets`` lists them), the scenario file, the named
options, then ``--set KEY=VALUE`` in the order given.
Named options take unit strings (``--rtt 100us``, ``--buffer 64pkt``); a
``--set`` value is read as a TOML value, so ``--set tcp.rto_min=0.001`` is a
number of seconds and ``--set tcp.rto_min=1ms`` a unit string.

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

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from incast.scenario import Scenario, apply_overrides, read_toml
from incast.errors import ScenarioError
from incast.presets import with_preset
from incast.result import Result
from incast.result import run as run_scenario
from incast.topology import parse_topology_flag

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["register", "run"]

#: Named option -> dotted scenario setting (``--servers`` is handled apart: it may be a list).
OPTION_FIELDS = {
    "sru": "workload.sru",
    "block": "workload.block",
    "blocks": "blocks",
    "duration": "duration",
    "link": "link.rate",
    "rtt": "link.rtt",
    "buffer": "switch.buffer",
    "mss": "tcp.mss",
    "rto_min": "tcp.rto_min",
    "rto_max": "tcp.rto_max",
    "clock_granularity": "tcp.clock_granularity",
    "rto_flavor": "tcp.rto_flavor",
    "delayed_ack": "tcp.delayed_ack",
    "init_cwnd": "tcp.init_cwnd",
    "seed": "seed",
    "request_order": "workload.order",
    "tcp": "tcp.variant",
    "spurious_rto": "tcp.spurious_rto",
    "gip": "tcp.gip",
    "ecn_threshold": "switch.ecn_threshold",
    "max_inflight": "workload.max_inflight",
    "stagger": "workload.stagger",
    "clients": "workload.clients",
    "server_sets": "workload.server_sets",
    "buffer_model": "switch.buffer_model",
    "loss": "link.loss",
    "wan": "wan.delay",
    "wan_jitter": "wan.jitter",
    "pause_xoff": "switch.pause_xoff",
    "pause_xon": "switch.pause_xon",
}


def _opt(flag: str, metavar: str, help: str) -> Any:
    return typer.Option(flag, metavar=metavar, help=help, show_default=False)


def run(
    scenario_file: Annotated[
        str | None,
        typer.Argument(metavar="SCENARIO.toml", help="Scenario file; options below override it.", show_default=False),
    ] = None,
    servers: Annotated[
        str | None, _opt("--servers", "N[,N...]", "Servers; a list like 1,4,16,64 runs once per value.")
    ] = None,
    sru: Annotated[str | None, _opt("--sru", "SIZE", "Fixed bytes per server per block, e.g. 256KiB.")] = None,
    block: Annotated[
        str | None, _opt("--block", "SIZE", "Fixed bytes per block split over the servers, e.g. 1MiB.")
    ] = None,
    blocks: Annotated[str | None, _opt("--blocks", "N", "Stop after N blocks.")] = None,
    duration: Annotated[str | None, _opt("--duration", "DURATION", "Stop at this simulated time, e.g. 1s.")] = None,
    link: Annotated[str | None, _opt("--link", "RATE", "Rate of every link, e.g. 1Gbps.")] = None,
    rtt: Annotated[str | None, _opt("--rtt", "DURATION", "Round-trip propagation delay, e.g. 100us.")] = None,
    buffer: Annotated[str | None, _opt("--buffer", "SIZE|Npkt", "Switch output buffer, e.g. 32KiB or 64pkt.")] = None,
    mss: Annotated[str | None, _opt("--mss", "BYTES", "TCP maximum segment size.")] = None,
    rto_min: Annotated[str | None, _opt("--rto-min", "DURATION", "Minimum retransmission timeout, e.g. 200ms.")] = None,
    rto_max: Annotated[str | None, _opt("--rto-max", "DURATION", "Maximum retransmission timeout, e.g. 120s.")] = None,
    clock_granularity: Annotated[
        str | None, _opt("--clock-granularity", "DURATION", "Timer granularity: 0 (exact), 1ms or 4ms (jiffies).")
    ] = None,
    rto_flavor: Annotated[
        str | None, _opt("--rto-flavor", "rfc6298|linux", "RTO formula: RFC 6298, or Linux (SRTT + max(4·mdev, RTO_min)).")
    ] = None,
    delayed_ack: Annotated[
        str | None,
        _opt(
            "--delayed-ack",
            "DURATION|off|linux|adaptive",
            "Delayed-ACK timeout, e.g. 40ms; off; linux (quick-ACK, adaptive ATO); adaptive (CMU09 §5).",
        ),
    ] = None,
    init_cwnd: Annotated[str | None, _opt("--init-cwnd", "SEGMENTS", "Initial congestion window.")] = None,
    seed: Annotated[str | None, _opt("--seed", "N", "Master seed.")] = None,
    request_order: Annotated[
        str | None, _opt("--request-order", "shuffled|fixed", "Order of the requests in a block.")
    ] = None,
    tcp: Annotated[
        str | None,
        _opt(
            "--tcp",
            "reno|newreno|sack|cubic|dctcp",
            "Loss recovery: Reno (RFC 5681), NewReno (RFC 6582), SACK (RFC 6675), Cubic (RFC 9438) or DCTCP (RFC 8257).",
        ),
    ] = None,
    spurious_rto: Annotated[
        str | None,
        _opt("--spurious-rto", "off|frto|eifel", "Detect and undo spurious timeouts: F-RTO (RFC 5682) or Eifel (RFC 3522)."),
    ] = None,
    ecn_threshold: Annotated[
        str | None, _opt("--ecn-threshold", "SIZE|Npkt|off", "Mark ECN-capable frames above this queue (DCTCP's K).")
    ] = None,
    gip: Annotated[
        str | None,
        _opt("--gip", "off|333|123", "GIP: cwnd 2 at each stripe unit head, redundant copies of its last packet(s)."),
    ] = None,
    max_inflight: Annotated[
        str | None, _opt("--max-inflight", "K|all", "At most K servers answer at once (the next asked as one completes).")
    ] = None,
    stagger: Annotated[
        str | None, _opt("--stagger", "DURATION", "The i-th request of a block leaves i x DURATION after its start.")
    ] = None,
    clients: Annotated[
        str | None, _opt("--clients", "N", "N clients reading at once, each its own barrier-synchronized blocks.")
    ] = None,
    server_sets: Annotated[
        str | None,
        _opt("--server-sets", "shared|disjoint", "Clients read from the same servers, or each from --servers of its own."),
    ] = None,
    topology: Annotated[
        str | None,
        _opt("--topology", "star|tree:K|FILE", "One switch; a two-tier tree with K edge switches; or a topology file."),
    ] = None,
    buffer_model: Annotated[
        str | None,
        _opt("--buffer-model", "static|qos:K|shared:ALPHA", "Per-port buffers, K QoS classes per port, or shared memory."),
    ] = None,
    loss: Annotated[
        str | None, _opt("--loss", "P", "Probability that a link loses a frame on the wire, e.g. 0.001.")
    ] = None,
    wan: Annotated[
        str | None,
        _opt("--wan", "DELAY", "Wide-area delay on the client's link, each way, e.g. 20ms (the [wan] model)."),
    ] = None,
    wan_jitter: Annotated[
        str | None, _opt("--wan-jitter", "DURATION", "With --wan: mean per-frame jitter (exponential), e.g. 2ms.")
    ] = None,
    wan_spikes: Annotated[
        str | None,
        _opt(
            "--wan-spikes",
            "GAP,HEIGHT,DURATION",
            "With --wan: delay spikes every GAP on average, raising the delay by HEIGHT for DURATION, e.g. 10s,100ms,200ms.",
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
    pause_xoff: Annotated[
        str | None,
        _opt("--pause-xoff", "SIZE", "With --pause (--pfc): a port (priority) above this pauses the links feeding it."),
    ] = None,
    pause_xon: Annotated[
        str | None,
        _opt("--pause-xon", "SIZE", "With --pause (--pfc): paused links restart once it drains to this."),
    ] = None,
    background: Annotated[
        str | None,
        _opt(
            "--background",
            "tcp:N[@client|@server]|udp:RATE",
            "N bulk TCP flows (to receivers of their own, into client 0, or into server 0), or "
            "constant-bit-rate UDP into the client.",
        ),
    ] = None,
    preset: Annotated[
        str | None, _opt("--preset", "NAME", "Start from a named bundle of settings (see 'incast presets').")
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            metavar="KEY=VALUE",
            help="Any setting by dotted name, e.g. --set tcp.rto_min=1ms; repeatable, applied last.",
            show_default=False,
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object per run, one per line.")] = False,
    trace_dir: Annotated[
        str | None,
        _opt("--trace-dir", "DIR", "Record every trace (goodput bin 5ms unless set) and write them as Parquet into DIR."),
    ] = None,
    pcap: Annotated[
        str | None,
        _opt("--pcap", "DIR", "Capture every packet and write one pcap file per host (client.pcap, server-<i>.pcap) into DIR."),
    ] = None,
) -> None:
    """Simulate synchronized reads and print goodput, block times, timeouts and drops."""
    named = {
        "sru": sru, "block": block, "blocks": blocks, "duration": duration, "link": link, "rtt": rtt,
        "buffer": buffer, "mss": mss, "rto_min": rto_min, "rto_max": rto_max,
        "clock_granularity": clock_granularity, "rto_flavor": rto_flavor, "delayed_ack": delayed_ack, "init_cwnd": init_cwnd,
        "seed": seed, "request_order": request_order, "tcp": tcp, "spurious_rto": spurious_rto, "gip": gip, "ecn_threshold": ecn_threshold,
        "max_inflight": max_inflight, "stagger": stagger, "pause_xoff": pause_xoff, "pause_xon": pause_xon,
        "clients": clients, "server_sets": server_sets,
        "buffer_model": buffer_model, "loss": None if loss is None else _toml_value(loss),
        "wan": wan, "wan_jitter": wan_jitter,
    }  # fmt: skip
    if sru is not None and block is not None:
        raise ScenarioError("workload: give --sru (bytes per server) or --block (bytes per block), not both")
    overrides: list[tuple[str, Any]] = [(OPTION_FIELDS[name], v) for name, v in named.items() if v is not None]
    if topology is not None:
        overrides.insert(0, ("topology", parse_topology_flag(topology)))
    if pause:
        overrides.append(("switch.pause", True))
    if pfc:
        overrides.append(("switch.pfc", True))
    if background is not None:
        overrides.extend(_parse_background(background))
    if wan_spikes is not None:
        overrides.extend(_parse_wan_spikes(wan_spikes))
    extra = [_parse_set(item) for item in set_ or []]
    base: dict[str, Any] = read_toml(scenario_file) if scenario_file is not None else {}
    if preset is not None:
        base = with_preset(preset, base)
    counts = _parse_servers(servers) if servers is not None else [None]
    scenarios = [_resolve(base, ([("servers", n)] if n is not None else []) + overrides + extra) for n in counts]
    trace_dirs: list[Path | None] = [None] * len(scenarios)
    if trace_dir is not None:
        scenarios = [_all_traces(s) for s in scenarios]
        root = Path(trace_dir)
        several = servers is not None and "," in servers
        dirs = [root / f"servers={s.servers}" if several else root for s in scenarios]
        for d in dirs:  # a bad path fails before any run
            d.mkdir(parents=True, exist_ok=True)
        trace_dirs = list(dirs)
    pcap_dirs: list[Path | None] = [None] * len(scenarios)
    if pcap is not None:
        scenarios = [s.with_overrides({"trace.pcap": True}) for s in scenarios]
        root = Path(pcap)
        several = servers is not None and "," in servers
        pdirs = [root / f"servers={s.servers}" if several else root for s in scenarios]
        for d in pdirs:  # a bad path fails before any run
            d.mkdir(parents=True, exist_ok=True)
        pcap_dirs = list(pdirs)

    # Wide enough for the per-server table when the output is a pipe or a file.
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 120)
    results: list[Result] = []
    for scenario, where, pcap_where in zip(scenarios, trace_dirs, pcap_dirs):
        result = run_scenario(scenario)
        if where is not None:
            result.write_traces(where)
        if pcap_where is not None:
            result.write_pcap(pcap_where)
        if as_json:
            print(json.dumps(result.to_dict(), allow_nan=False), flush=True)
        results.append(result)
    if as_json:
        return
    if servers is not None and "," in servers:
        _print_table(console, results)
    else:
        _print_summary(console, results[0])


def register(app: typer.Typer) -> None:
    """Add the ``run`` verb to ``app``."""
    app.command("run", no_args_is_help=False)(run)


# ---------------------------------------------------------------------------
# Inputs.


def _resolve(base: dict[str, Any], overrides: list[tuple[str, Any]]) -> Scenario:
    data = base
    for path, value in overrides:  # one at a time: the last of two writes to a field wins
        data = apply_overrides(data, {path: value})
    return Scenario.parse(data)


def _all_traces(scenario: Scenario) -> Scenario:
    """``scenario`` with every trace on; the goodput bin stays as set, else 5 ms (FAST08 Figure 5)."""
    goodput_bin = scenario.trace.goodput_bin if scenario.trace.goodput_bin is not None else "5ms"
    on = {"trace.goodput_bin": goodput_bin, "trace.queue": True, "trace.flows": True, "trace.block_cwnd": True}
    return scenario.with_overrides(on)


def _parse_servers(text: str) -> list[int]:
    values = [part.strip() for part in text.split(",")]
    for part in values:
        if not part.isdigit():
            raise ScenarioError(f"servers: {part!r} is not a whole number; give a count like 16 or a list like 1,4,16")
    return [int(part) for part in values]


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
    return list(zip(("wan.spike_interval", "wan.spike_height", "wan.spike_duration"), parts))


def _parse_set(item: str) -> tuple[str, Any]:
    key, sep, text = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ScenarioError(f"--set: {item!r} is not KEY=VALUE (e.g. --set tcp.rto_min=1ms)")
    return key, _toml_value(text.strip())


def _toml_value(text: str) -> Any:
    """``"0.001"`` -> 0.001, ``"64"`` -> 64, anything else (``"1ms"``, ``"off"``) stays a string."""
    try:
        value = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text
    return value if isinstance(value, (int, float, str)) and not isinstance(value, bool) else text


# ---------------------------------------------------------------------------
# Human output.


def _ms(x: float) -> str:
    return "—" if math.isnan(x) else f"{x:.3g}" if x < 10 else f"{x:.1f}"


def _rate(events_per_s: float) -> str:
    if math.isnan(events_per_s):
        return "—"
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if events_per_s >= div:
            return f"{events_per_s / div:.2f} {unit}"
    return f"{events_per_s:.0f} "


def _print_summary(console: Console, r: Result) -> None:
    t = r.block_time_ms
    console.print(r.scenario.describe(), style="bold")
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    table.add_row(
        "goodput",
        f"{r.goodput_mbps:.1f} Mbps = {r.utilization:.1%} of the best achievable {r.best_goodput_mbps:.1f} Mbps",
    )
    if len(r.clients) > 1:
        shares = ", ".join(f"{c.client}: {c.goodput_mbps:.1f}" for c in r.clients.itertuples())
        table.add_row("per client", f"{shares} Mbps")
        table.add_row("client blocks", ", ".join(f"{c.client}: {c.blocks}" for c in r.clients.itertuples()))
    table.add_row("throughput", f"{r.throughput_mbps:.1f} Mbps (retransmissions included)")
    table.add_row("blocks", f"{r.blocks} in {r.sim_time_s:.6g} s simulated")
    table.add_row("block time", f"p50 {_ms(t.p50)} ms, p99 {_ms(t.p99)} ms, max {_ms(t.max)} ms")
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
        table.add_row("background", f"{r.background_goodput_mbps:.1f} Mbps over {r.scenario.background.tcp_flows} TCP flows")
    lossy = r.ports[r.ports["drops"] > 0]
    if r.scenario.topology.kind != "star" and len(lossy):
        where = ", ".join(f"{p.node}->{p.peer} {p.drops}" for p in lossy.itertuples())
        table.add_row("drops by port", where)
    table.add_row("engine", f"{r.events:,} events in {r.wall_s:.3f} s = {_rate(r.events_per_s)}events/s")
    console.print(table)


def _print_table(console: Console, results: list[Result]) -> None:
    common = results[0].scenario.describe().split(", ", 1)[-1]  # all but the server count
    wl = results[0].scenario.workload
    if wl.clients > 1:
        common = f"{wl.clients} clients ({wl.server_sets} servers), {common}"
    console.print(common, style="bold")
    table = Table()
    for name in (
        "servers",
        "goodput Mbps",
        "util",
        "blocks",
        "block p50 ms",
        "p99 ms",
        "max ms",
        "timeouts",
        "drops",
        "events/s",
    ):
        table.add_column(name, justify="right", no_wrap=True)
    for r in results:
        t = r.block_time_ms
        table.add_row(
            str(r.scenario.servers), f"{r.goodput_mbps:.1f}", f"{r.utilization:.0%}", str(r.blocks),
            _ms(t.p50), _ms(t.p99), _ms(t.max), str(r.timeouts), str(r.drops), _rate(r.events_per_s).strip(),
        )  # fmt: skip
    console.print(table)
