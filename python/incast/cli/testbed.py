"""``incast testbed``: run a scenario on the real Linux TCP stack, in network namespaces on this machine.

One client and N server namespaces are joined by a bridge in a switch
namespace; the switch port toward the client is a ``tbf`` at the link rate
whose byte limit is the switch buffer (``incast.testbed.netns``). Each
namespace gets the scenario's TCP settings before its server starts, then
``incast read`` runs in the client namespace against ``incast serve`` in each
server namespace. The scenario comes as for ``incast run`` (file, named
options, ``--set``); fields the kernel cannot run are refused with one line,
and those it runs differently print a ``note:`` line on standard error
(``incast.testbed.plan``).

Needs root (one line and status 2 otherwise). Everything the run creates is
named ``incast-tb-<id>`` / ``ic<id>`` and removed on success, failure, Ctrl-C
and SIGTERM; ``incast testbed --cleanup`` removes what a killed run left.
"""

import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from incast.cli.options import (
    SAMPLE_EVERY_HELP,
    TRACE_HELP,
    AsJson,
    ScenarioFile,
    Servers,
    SetOpt,
    Timeout,
    named_options,
    named_overrides,
    parse_servers,
    parse_set,
    resolve,
)
from incast.cli.output import EXIT_ENGINE, EXIT_USAGE, fail, ms, rate

if TYPE_CHECKING:
    from rich.console import Console

    from incast.scenario import Scenario
    from incast.testbed import TestbedResult

__all__ = ["NAMED_OPTIONS", "register", "scenarios", "testbed"]

#: Exit status after Ctrl-C or SIGTERM, as a shell reports SIGINT.
EXIT_INTERRUPTED = 130

#: Sample the servers' connections (``incast.testbed.sampling``); shared with ``incast validate``.
SampleEvery = Annotated[
    str | None,
    typer.Option(
        "--sample-every",
        metavar="DURATION",
        help=SAMPLE_EVERY_HELP,
        show_default=False,
    ),
]
TraceFile = Annotated[
    str | None,
    typer.Option(
        "--trace",
        metavar="FILE",
        help=TRACE_HELP,
        show_default=False,
    ),
]

#: The named options of ``incast testbed`` and ``incast validate`` (``incast.cli.options``).
NAMED_OPTIONS = ("sru", "block", "blocks", "duration", "link", "buffer", "rto_min", "delayed_ack", "tcp", "recovery")


def scenarios(
    scenario_file: str | None,
    servers: str | None,
    named: dict[str, str | None],
    set_: list[str] | None,
    preset: str | None = None,
) -> "list[Scenario]":
    """The scenarios of a command line: the preset, the file, the named options, ``--set``; one per server count."""
    from incast.scenario import read_toml

    overrides = named_overrides(named) + [parse_set(item) for item in set_ or []]
    file: dict[str, Any] = read_toml(scenario_file) if scenario_file is not None else {}
    counts = parse_servers(servers) if servers is not None else [None]
    return [resolve(file, ([("servers", n)] if n is not None else []) + overrides, preset) for n in counts]


@named_options(*NAMED_OPTIONS)
def testbed(
    scenario_file: ScenarioFile = None,
    servers: Servers = None,
    *,
    set_: SetOpt = None,
    timeout: Timeout = "60s",
    as_json: AsJson = False,
    sample_every: SampleEvery = None,
    trace: TraceFile = None,
    do_cleanup: Annotated[
        bool, typer.Option("--cleanup", help="Remove what killed runs left behind (by prefix) and exit.")
    ] = False,
    **named: str | None,
) -> int:
    """Run a scenario on the real Linux TCP stack in network namespaces (needs root)."""
    from rich.console import Console

    from incast.bench import check_sample_every, check_timeout
    from incast.reference.testbed import simulator_overrides
    from incast.result import run as simulate
    from incast.testbed import TestbedError, TestbedUnavailable, cleanup, clock, require_privileges
    from incast.testbed import run as run_testbed
    from incast.testbed.emulation import port_check
    from incast.testbed.kernel import available_congestion_controls
    from incast.testbed.plan import plan
    from incast.testbed.sampling import write_csv

    check_timeout(timeout)
    every = None if sample_every is None else check_sample_every(sample_every)
    if trace is not None and every is None:
        return fail("--trace: needs --sample-every (the trace is what the servers sampled)", EXIT_USAGE)
    try:
        require_privileges()
    except TestbedUnavailable as e:
        return fail(str(e), EXIT_USAGE)
    if do_cleanup:
        try:
            removed = cleanup()
        except TestbedError as e:
            return fail(str(e), EXIT_ENGINE)
        for run_id, names in removed.items():
            print(f"removed run {run_id}: {', '.join(names) or 'its registry file'}")
        if not removed:
            print("nothing to remove")
        return 0
    todo = scenarios(scenario_file, servers, named, set_)
    kernel, controls = clock(), available_congestion_controls()
    plans = [plan(scenario, kernel, controls) for scenario in todo]  # every scenario refused or not, first
    for note in plans[0].notes:
        print(f"note: {note}", file=sys.stderr)
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 120)
    results: list[TestbedResult] = []
    for scenario in todo:
        try:
            result = run_testbed(scenario, timeout=timeout, sample_every=every)
        except TestbedError as e:
            return fail(str(e), EXIT_ENGINE)
        results.append(result)
        if trace is not None and result.trace is not None:
            path = Path(trace)
            write_csv(result.trace, path if len(todo) == 1 else path.with_stem(f"{path.stem}-{scenario.servers}"))
        measured = result.to_dict()
        if result.status == "complete":  # a failed or interrupted run ends now, with what it measured
            model = simulate(scenario.with_overrides(simulator_overrides(scenario, kernel.jiffy_s)))
            port = port_check(measured, model.to_dict())
            measured["port_check"] = port.to_dict()
            if (line := port.line()) is not None:
                print(f"warning: {line}", file=sys.stderr)
        if as_json:
            print(json.dumps(measured, allow_nan=False), flush=True)
        elif len(todo) == 1 or result.status != "complete":
            print_summary(console, result)
        if result.status == "failed":
            return fail(result.error or "incast read failed", EXIT_ENGINE)
        if result.status == "interrupted":
            return fail(f"interrupted after {result.blocks} blocks", EXIT_INTERRUPTED)
    if len(todo) > 1 and not as_json:
        print_table(console, results)
    return 0


def register(app: typer.Typer) -> None:
    """Add the ``testbed`` verb to ``app``."""
    app.command("testbed", no_args_is_help=False)(testbed)


def kernel_line(k: dict[str, Any]) -> str:
    """The kernel's tick, the RTO floor it gives and the congestion control (a result's ``kernel``), in one line."""
    from incast.units import format_duration

    return (
        f"kernel HZ={k['hz']} ({format_duration(k['jiffy_s'])} ticks): RTO_min {format_duration(k['rto_min_s'])} "
        f"arms as at least {format_duration(k['rto_floor_s'])}; congestion control {k['congestion']}"
    )


def rtt_cell(r: "TestbedResult") -> str:
    """The servers' kernel RTT, RTTVAR and RTO as requests arrived (``TCP_INFO``), or a dash."""
    k = r.server_rtt
    if k is None:
        return "—"
    return (
        f"RTT {k['rtt_ms']:.2f} ms, RTTVAR {k['rttvar_ms']:.2f} ms, RTO {k['rto_ms']:.1f} ms on average "
        f"(at most {k['rto_max_ms']:.0f} ms) over {k['requests']:,} requests"
    )


def print_summary(console: "Console", r: "TestbedResult") -> None:
    """One run: the scenario, the kernel line, goodput, block times and the kernel's counters."""
    from rich.table import Table

    state = "" if r.status == "complete" else f" — {r.status}, partial results"
    console.print(r.scenario.describe() + state, style="bold")
    console.print(kernel_line(r.kernel))
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    good = "—" if math.isnan(r.goodput_mbps) else f"{rate(r.goodput_mbps)} = {r.utilization:.1%}"
    table.add_row("goodput", f"{good} of the best achievable {rate(r.best_goodput_mbps)}")
    table.add_row("blocks", f"{r.blocks} in {r.wall_s:.3f} s")
    t = r.block_time_ms
    table.add_row("block time", f"p50 {ms(t.p50)} ms, p99 {ms(t.p99)} ms, max {ms(t.max)} ms")
    c = r.server_counters
    table.add_row(
        "timeouts",
        f"{r.timeouts} (servers' TCPTimeouts; per server {', '.join(map(str, r.timeouts_per_server))})",
    )
    table.add_row(
        "retransmits",
        f"{r.retransmitted_packets} segments (fast {c['TCPFastRetrans']}, after a timeout {c['TCPSlowStartRetrans']}, "
        f"loss probes {c['TCPLossProbes']})",
    )
    table.add_row("drops", f"{r.drops} at the client port ({r.port['frames']} frames sent)")
    table.add_row("servers' kernel", rtt_cell(r) + " (TCP_INFO as each request after a connection's first arrived)")
    console.print(table)


def print_table(console: "Console", results: "list[TestbedResult]") -> None:
    """Several runs: one row per server count."""
    from rich.table import Table

    console.print(results[0].scenario.describe().split(", ", 1)[-1], style="bold")
    console.print(kernel_line(results[0].kernel))
    table = Table()
    for name in ("servers", "goodput Mbps", "util", "blocks", "block p50 ms", "p99 ms", "max ms", "timeouts", "drops"):
        table.add_column(name, justify="right", no_wrap=True)
    for r in results:
        t = r.block_time_ms
        table.add_row(
            str(r.scenario.servers),
            f"{r.goodput_mbps:.1f}",
            f"{r.utilization:.0%}",
            str(r.blocks),
            ms(t.p50),
            ms(t.p99),
            ms(t.max),
            str(r.timeouts),
            str(r.drops),
        )
    console.print(table)
