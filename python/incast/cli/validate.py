"""``incast validate``: the same scenario in the simulator and a reference, side by side.

``--against testbed`` (the default) compares with the real Linux stack
(needs root, like ``incast testbed``), ``--against ns2`` with ns-2.35, the
papers' simulator (the ``ns`` command), ``--against ns3`` with ns-3 3.44 (the
``ns3`` wheel in this Python). Each is a :class:`~incast.reference.base.Reference`:
the scenarios sit on its preset (``linux``, ``ns2``, ``ns3``) unless
``--preset`` names another; what it cannot run is refused in one line before
anything runs, and what it runs differently prints as ``note:`` lines. Each
row shows both figures and the ratio reference / simulator
(:mod:`incast.reference.compare`).

Against the testbed the simulator runs each scenario as the kernel will
(:mod:`incast.reference.testbed`), and the heading lists those settings.
Before the comparison a short run of the first scenario with one server on
both sides measures what the real hosts cost
(:func:`~incast.reference.testbed.host_cost`); it is printed, and put in
every JSON object as ``host_cost``; with ``--calibrate`` the simulator runs
the comparison with the server turnaround that matches.
"""

import json
import sys
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from incast.cli.options import AsJson, ScenarioFile, Servers, SetOpt, Timeout, named_options, nonempty
from incast.cli.output import EXIT_ENGINE, EXIT_USAGE, fail, ms
from incast.cli.testbed import NAMED_OPTIONS, SampleEvery, kernel_line, scenarios

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from incast.reference.base import Reference
    from incast.reference.compare import SideBySide

__all__ = ["register", "validate"]

#: Exit status after Ctrl-C or SIGTERM.
EXIT_INTERRUPTED = 130


def _cell(label: str, value: float | None) -> str:
    if value is None:
        return "—"
    if label == "utilization":
        return f"{value:.1%}"
    if label.endswith("ms"):
        return ms(value)
    return f"{value:.1f}" if label.endswith("Mbps") else f"{value:.0f}"


@named_options(*NAMED_OPTIONS)
def validate(
    scenario_file: ScenarioFile = None,
    servers: Servers = None,
    *,
    set_: SetOpt = None,
    timeout: Timeout = "60s",
    as_json: AsJson = False,
    sample_every: SampleEvery = None,
    against: Annotated[
        Literal["testbed", "ns2", "ns3"],
        typer.Option(
            "--against",
            metavar="testbed|ns2|ns3",
            help="The reference: the Linux testbed (needs root), ns-2.35 (the 'ns' command) "
            "or ns-3 3.44 (the ns3 wheel).",
        ),
    ] = "testbed",
    preset: Annotated[
        str | None,
        typer.Option(
            "--preset",
            metavar="NAME",
            help="Start from a named bundle of settings (default: the reference's: linux, ns2 or ns3).",
        ),
    ] = None,
    calibrate: Annotated[
        bool,
        typer.Option(
            "--calibrate",
            help="Run the simulator with the server turnaround that matches the testbed's one-server block time.",
        ),
    ] = False,
    classes: Annotated[
        bool,
        typer.Option(
            "--classes",
            help="With --against ns2: also compare the servers' timeouts by FAST08 and GIP class "
            "(ns-2's from traces of its agents and of the client's port).",
        ),
    ] = False,
    **named: str | None,
) -> int:
    """Run a scenario in the simulator and on the testbed (needs root), in ns-2.35 or in ns-3 3.44, and compare."""
    from rich.console import Console

    from incast.bench import check_sample_every
    from incast.reference.base import Unavailable
    from incast.reference.compare import prepared, side_by_side
    from incast.reference.ns2 import Ns2, Ns2Error
    from incast.reference.ns3_options import Ns3, Ns3Error
    from incast.reference.testbed import Testbed
    from incast.testbed import TestbedError
    from incast.testbed.emulation import port_check

    nonempty(preset, "--preset", "a preset's name; see 'incast presets'")
    if calibrate and against != "testbed":
        why = f"--calibrate: measures the testbed's hosts; it does not apply with --against {against}"
        return fail(why, EXIT_USAGE)
    if classes and against != "ns2":
        why = "the kernel does not say why a timer expired" if against == "testbed" else "ns-2's traces class them"
        return fail(f"--classes: only with --against ns2 ({why})", EXIT_USAGE)
    if sample_every is not None and against != "testbed":
        return fail(
            f"--sample-every: samples the testbed's servers; it does not apply with --against {against}", EXIT_USAGE
        )
    bed = Testbed(timeout=timeout, sample_every=None if sample_every is None else check_sample_every(sample_every))
    reference: Reference = {"testbed": bed, "ns2": Ns2(classes=classes), "ns3": Ns3()}[against]
    try:
        reference.require()
    except Unavailable as e:
        return fail(str(e), EXIT_USAGE)
    preset = preset or reference.preset
    todo = scenarios(scenario_file, servers, named, set_, preset)
    shown: set[str] = set()
    for scenario in todo:
        reference.check(scenario)  # refuses what it cannot run before anything runs
        for note in prepared(reference, scenario)[1]:
            if note not in shown:
                shown.add(note)
                print(f"note: {against}: {note}", file=sys.stderr)
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 120)
    host: dict[str, Any] = {}
    if reference is bed:
        try:
            cost = bed.measure_hosts(todo[0], calibrate=calibrate)
        except TestbedError as e:
            return fail(str(e), EXIT_ENGINE)
        calibrated = bed.turnaround is not None
        if calibrate and not calibrated:
            print("note: --calibrate: no turnaround matches the testbed; the simulator keeps its own", file=sys.stderr)
        host = {"host_cost": cost.to_dict(calibrated)}
        if not as_json:
            console.print(cost.line(calibrated))
    runs = []
    for scenario in todo:
        try:
            run = side_by_side(reference, scenario)
        except (TestbedError, Ns2Error, Ns3Error) as e:
            return fail(str(e), EXIT_ENGINE)
        for note in run.notes:
            print(f"note: {against}: {note}", file=sys.stderr)
        check = {}
        if reference is bed and run.measured.get("status") == "complete":  # as incast testbed checks its ports
            port = port_check(run.measured, run.simulator.to_dict())
            check = {"port_check": port.to_dict()}
            if (line := port.line()) is not None:
                print(f"warning: {line}", file=sys.stderr)
        if as_json:
            print(json.dumps(run.to_dict(preset) | host | check, allow_nan=False), flush=True)
        elif len(todo) == 1:
            _print_one(console, run, preset)
        runs.append(run)
        status, error = run.measured.get("status"), run.measured.get("error")
        if status == "failed":
            return fail(error or "incast read failed", EXIT_ENGINE)
        if status == "interrupted":
            return fail(f"interrupted after {run.measured['blocks']} testbed blocks", EXIT_INTERRUPTED)
    if len(todo) > 1 and not as_json:
        _print_rows(console, runs, preset)
    return 0


def _figures_table(run: "SideBySide", ref: str, ratio_head: str) -> "Table":
    from rich.table import Table

    table = Table()
    for name in ("", "simulator", ref, ratio_head):
        table.add_column(name, justify="left" if not name else "right", no_wrap=True)
    for key, f in run.figures.items():
        label = run.labels[key]
        ratio = "—" if f["ratio"] is None else f"{f['ratio']:.2f}"
        table.add_row(label, _cell(label, f["simulator"]), _cell(label, f[ref]), ratio)
    return table


def _rows_table(rows: list[tuple[int, dict[str, dict[str, float | None]]]], ref: str) -> "Table":
    from rich.table import Table

    table = Table()
    heads = ("servers", "sim Mbps", f"{ref} Mbps", f"{ref}/sim", "sim timeouts", f"{ref} timeouts")
    for name in heads:
        table.add_column(name, justify="right", no_wrap=True)
    for servers, f in rows:
        g, t = f["goodput_mbps"], f["timeouts"]
        ratio = "—" if g["ratio"] is None else f"{g['ratio']:.2f}"
        table.add_row(
            str(servers),
            _cell("Mbps", g["simulator"]),
            _cell("Mbps", g[ref]),
            ratio,
            _cell("", t["simulator"]),
            _cell("", t[ref]),
        )
    return table


def _heading(run: "SideBySide", preset: str) -> str:
    """Both sides' preset, and the settings the simulator ran with beside the reference."""
    out = f"simulator and {run.reference.title} both over preset {preset}"
    if not run.overrides:
        return out
    shown = [f"{k}={v}" for k, v in run.shown_overrides().items()]
    return out + "; simulator with " + ", ".join(shown).replace("True", "true")


def _print_one(console: "Console", run: "SideBySide", preset: str) -> None:
    name = run.reference.name
    console.print(run.scenario.describe(), style="bold")
    if name == "testbed":
        console.print(kernel_line(run.measured["kernel"]))
    console.print(_heading(run, preset))
    console.print(_figures_table(run, name, f"{name}/sim"))
    if name == "testbed":
        console.print("servers' SRTT, RTTVAR, RTO: means as each request after a connection's first arrived (TCP_INFO)")


def _print_rows(console: "Console", runs: "list[SideBySide]", preset: str) -> None:
    name = runs[0].reference.name
    console.print(runs[0].scenario.describe().split(", ", 1)[-1], style="bold")
    if name == "testbed":
        console.print(kernel_line(runs[0].measured["kernel"]))
    console.print(_heading(runs[0], preset))
    console.print(_rows_table([(r.scenario.servers, r.figures) for r in runs], name))
    if name != "testbed":
        return
    console.print("servers' SRTT and RTO as each request after a connection's first arrived (kernel: TCP_INFO):")
    for r in runs:
        srtt, rto = r.figures["server_srtt_ms"], r.figures["server_rto_ms"]
        sim = f"{_cell('ms', srtt['simulator'])} and {_cell('ms', rto['simulator'])} ms"
        kernel = f"{_cell('ms', srtt['testbed'])} and {_cell('ms', rto['testbed'])} ms"
        console.print(f"  {r.scenario.servers} servers: simulator {sim}, kernel {kernel}")


def register(app: typer.Typer) -> None:
    """Add the ``validate`` verb to ``app``."""
    app.command("validate", no_args_is_help=False)(validate)
