"""``incast validate``: the same scenario in the simulator and a reference, side by side.

``--against testbed`` (the default) compares with the real Linux stack;
``--against ns2`` with ns-2.35, the papers' simulator (``incast.reference.ns2``),
both running the scenario over the ``ns2`` preset unless ``--preset`` names
another; ns-2's approximations print as ``note:`` lines and what it cannot
express is refused in one line.

Against the testbed, the scenarios sit on the ``linux`` preset unless
``--preset`` names another (the kernel's defaults: Cubic, SACK, timestamps,
F-RTO, IW 10), and the simulator runs each as the kernel will: with the
kernel's own recovery rules (``incast.presets.LINUX_STACK``), its clock
granularity set to the kernel's jiffy (4 ms at HZ=250) with RTT samples in
microseconds (as every kernel since 3.15 takes them), NewReno's recovery
where the scenario says ``reno`` (Linux's reno congestion control recovers as
NewReno), and Linux's delayed ACK where the scenario asks for the default
40 ms; the heading names the preset and lists these settings. The testbed runs
the scenario as ``incast testbed`` does. Each row shows both figures and the
ratio testbed / simulator. Needs root, like ``incast testbed``.

Before the comparison, a short run of the first scenario with one server on
both sides measures what the real hosts cost (:func:`host_cost`): the
difference of the median block times, and the server turnaround
(``workload.server_jitter``, the wake-up between a request's arrival and its
answer's start) with which the simulator's one-server block takes as long as
the testbed's. It is printed, and put in every JSON object as
``host_cost``; with ``--calibrate`` the simulator runs the comparison with
that turnaround. One server shows the hosts lightly loaded: what many
servers sharing this machine's cores add is not in it.
"""

import json
import math
import sys
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from incast.cli.options import AsJson, ScenarioFile, SetOpt
from incast.cli.output import EXIT_ENGINE, EXIT_USAGE, fail, ms
from incast.cli.testbed import (
    Block,
    Blocks,
    Buffer,
    DelayedAck,
    Duration,
    Link,
    Recovery,
    RtoMin,
    Servers,
    Sru,
    Tcp,
    Timeout,
    kernel_line,
    scenarios,
)

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from incast.result import Result
    from incast.scenario import Scenario
    from incast.testbed import TestbedResult

__all__ = ["HostCost", "host_cost", "register", "simulator_overrides", "validate"]

#: Exit status after Ctrl-C or SIGTERM.
EXIT_INTERRUPTED = 130
#: Blocks of the one-server run that measures the hosts' cost.
HOST_COST_BLOCKS = 20
#: The longest turnaround the calibration tries (a one-server block slower than this implies is a broken testbed).
_MAX_TURNAROUND_S = 1.0
#: Settings shown as durations, not seconds, in the overrides line and the JSON.
_DURATIONS = ("tcp.clock_granularity", "workload.server_jitter")
#: Figures compared, as (label, key in both results' JSON, key inside it or None).
_FIGURES: tuple[tuple[str, str, str | None], ...] = (
    ("goodput Mbps", "goodput_mbps", None),
    ("utilization", "utilization", None),
    ("blocks", "blocks", None),
    ("block p50 ms", "block_time_ms", "p50"),
    ("block p99 ms", "block_time_ms", "p99"),
    ("block max ms", "block_time_ms", "max"),
    ("timeouts", "timeouts", None),
    ("retransmitted packets", "retransmitted_packets", None),
    ("drops", "drops", None),
)
#: Figures the kernel counts too (the servers' TCPSackRecovery and TCPRenoRecovery, TCPLossProbes,
#: TCPLostRetransmit), after the others in a comparison with the testbed.
_KERNEL_FIGURES: tuple[tuple[str, str, str | None], ...] = (
    ("fast recoveries", "fast_retransmits", None),
    ("loss probes", "loss_probes", None),
    ("lost retransmissions", "lost_retransmits", None),
    ("servers' SRTT ms", "server_srtt_ms", None),
    ("servers' RTTVAR ms", "server_rttvar_ms", None),
    ("servers' RTO ms", "server_rto_ms", None),
)
#: The servers' timeouts by class (FAST08 §5.1, GIP §III), after the others with ``--against ns2 --classes``.
_CLASS_FIGURES: tuple[tuple[str, str, str | None], ...] = (
    ("timeouts: full window loss", "timeout_classes", "full_window_loss"),
    ("timeouts: lost retransmit", "timeout_classes", "lost_retransmit"),
    ("timeouts: last packet loss", "timeout_classes", "last_packet_loss"),
    ("timeouts: other", "timeout_classes", "other"),
    ("timeouts: FLoss-TO", "gip_timeout_classes", "floss"),
    ("timeouts: LAck-TO", "gip_timeout_classes", "lack"),
)
_LABELS = {
    key if sub is None else f"{key}.{sub}": label for label, key, sub in _FIGURES + _KERNEL_FIGURES + _CLASS_FIGURES
}


def simulator_overrides(scenario: "Scenario", jiffy_s: float) -> dict[str, Any]:
    """The settings that make the simulator run ``scenario`` as the kernel with this jiffy does."""
    from incast.presets import LINUX_STACK

    overrides: dict[str, Any] = {"tcp.clock_granularity": jiffy_s, "tcp.rtt_resolution": "us", **LINUX_STACK}
    if scenario.tcp.recovery == "reno":
        overrides["tcp.recovery"] = "newreno"
    d = scenario.tcp.delayed_ack
    if isinstance(d, float) and math.isclose(d, 0.04):
        overrides["tcp.delayed_ack"] = "linux"
    return overrides


@dataclass(frozen=True)
class HostCost:
    """What the real hosts add to a block, measured with one server.

    ``testbed_block_ms`` and ``simulator_block_ms`` are the median block
    times of the scenario with one server on the testbed and in the
    simulator (with :func:`simulator_overrides`), over ``blocks`` blocks;
    ``overhead_ms`` is the first less the second. ``server_jitter_s`` is the
    ``workload.server_jitter`` with which the simulator's median equals the
    testbed's (to the microsecond): each server then starts its answer a
    uniform draw from [0, it] after the request, so the median one-server
    block is longer by about half of it. ``None`` when even no turnaround at
    all leaves the simulator slower.
    """

    blocks: int
    testbed_block_ms: float
    simulator_block_ms: float
    overhead_ms: float
    server_jitter_s: float | None

    def to_dict(self, calibrated: bool) -> dict[str, Any]:
        """JSON-safe, with ``calibrated``: whether the simulator ran with ``server_jitter_s``."""
        return {"servers": 1, **asdict(self), "calibrated": calibrated}

    def line(self, calibrated: bool) -> str:
        """One line for humans."""
        from incast.units import format_duration

        out = (
            f"hosts, one server, {self.blocks} blocks: block p50 {self.testbed_block_ms:.3f} ms on the testbed, "
            f"{self.simulator_block_ms:.3f} ms simulated ({self.overhead_ms:+.3f} ms per block); "
        )
        if self.server_jitter_s is None:
            return out + "no server turnaround makes the simulator's as short"
        out += f"a server turnaround up to {format_duration(self.server_jitter_s)} (workload.server_jitter) matches it"
        return out + (", and the simulator runs with it (--calibrate)" if calibrated else "")


def host_cost(scenario: "Scenario", jiffy_s: float, timeout: str) -> HostCost:
    """Run ``scenario`` with one server on the testbed and in the simulator, and find the turnaround that matches.

    The simulator's median block time grows with ``workload.server_jitter``
    (its draws scale with it); bisection between none and twice the
    scenario's (doubled until it is slow enough, up to 1 s) finds the one of
    the testbed's median.
    Raises :class:`~incast.testbed.TestbedError` when the testbed run fails,
    and ``KeyboardInterrupt`` when it was interrupted.
    """
    from incast.result import run as simulate
    from incast.testbed import TestbedError
    from incast.testbed import run as run_testbed

    one = scenario.with_overrides({"servers": 1, "blocks": HOST_COST_BLOCKS, "duration": None})
    bed = run_testbed(one, timeout=timeout)
    if bed.status == "interrupted":
        raise KeyboardInterrupt
    if bed.status != "complete":
        raise TestbedError(f"testbed: the one-server run that measures the hosts failed: {bed.error}")
    target = bed.block_time_ms.p50
    sim = one.with_overrides(simulator_overrides(one, jiffy_s))

    def block_ms(jitter_s: float) -> float:
        return simulate(sim.with_overrides({"workload.server_jitter": jitter_s})).block_time_ms.p50

    as_given = simulate(sim).block_time_ms.p50
    lo, hi = 0.0, max(2 * scenario.workload.server_jitter, 1e-4)
    found: float | None = None
    while block_ms(hi) < target and hi < _MAX_TURNAROUND_S:
        lo, hi = hi, min(2 * hi, _MAX_TURNAROUND_S)
    if block_ms(lo) <= target <= block_ms(hi):
        while hi - lo > 1e-6:
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if block_ms(mid) < target else (lo, mid)
        found = round(hi, 6)
    return HostCost(HOST_COST_BLOCKS, target, as_given, target - as_given, found)


def _figure(data: dict[str, Any], key: str, sub: str | None) -> float:
    value = data[key] if sub is None else data[key][sub]
    return math.nan if value is None else float(value)


def comparison(
    sim: "Result", ref: dict[str, Any], name: str = "testbed", counted: dict[str, Any] | None = None
) -> dict[str, dict[str, float | None]]:
    """Each figure: ``simulator``, the reference ``name`` and ``ratio`` (reference / simulator, or None).

    ``counted`` replaces simulator figures by what the reference can count (ns-2: the servers' timeouts,
    and by class when ``ref`` has them). Against the testbed, the kernel's own counters follow
    (:data:`_KERNEL_FIGURES`).
    """
    s = sim.to_dict() | (counted or {})
    extra = _KERNEL_FIGURES if name == "testbed" else _CLASS_FIGURES if ref.get("timeout_classes") else ()
    out: dict[str, dict[str, float | None]] = {}
    for _, key, sub in _FIGURES + extra:
        a, b = _figure(s, key, sub), _figure(ref, key, sub)
        ratio = b / a if a and not math.isnan(a) and not math.isnan(b) else math.nan
        out[key if sub is None else f"{key}.{sub}"] = {
            n: None if math.isnan(v) else v for n, v in (("simulator", a), (name, b), ("ratio", ratio))
        }
    return out


def _cell(label: str, value: float | None) -> str:
    if value is None:
        return "—"
    if label == "utilization":
        return f"{value:.1%}"
    if label.endswith("ms"):
        return ms(value)
    return f"{value:.1f}" if label.endswith("Mbps") else f"{value:.0f}"


def validate(
    scenario_file: ScenarioFile = None,
    servers: Servers = None,
    sru: Sru = None,
    block: Block = None,
    blocks: Blocks = None,
    duration: Duration = None,
    link: Link = None,
    buffer: Buffer = None,
    rto_min: RtoMin = None,
    delayed_ack: DelayedAck = None,
    tcp: Tcp = None,
    recovery: Recovery = None,
    set_: SetOpt = None,
    timeout: Timeout = "60s",
    as_json: AsJson = False,
    against: Annotated[
        Literal["testbed", "ns2"],
        typer.Option(
            "--against",
            metavar="testbed|ns2",
            help="The reference: the Linux testbed (needs root) or ns-2.35 (the 'ns' command).",
        ),
    ] = "testbed",
    preset: Annotated[
        str | None,
        typer.Option(
            "--preset",
            metavar="NAME",
            help="Start from a named bundle of settings (default: linux against the testbed, ns2 against ns2).",
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
) -> int:
    """Run a scenario in the simulator and on the testbed (needs root) or in ns-2.35, and compare them."""
    from rich.console import Console

    from incast.result import run as simulate
    from incast.testbed import TestbedError, TestbedUnavailable, clock, notes, require_privileges
    from incast.testbed import run as run_testbed
    from incast.units import format_duration

    named = {
        "sru": sru,
        "block": block,
        "blocks": blocks,
        "duration": duration,
        "link": link,
        "buffer": buffer,
        "rto_min": rto_min,
        "delayed_ack": delayed_ack,
        "tcp": tcp,
        "recovery": recovery,
    }
    if against == "ns2":
        if calibrate:
            return fail("--calibrate: measures the testbed's hosts; it does not apply with --against ns2", EXIT_USAGE)
        todo = scenarios(scenario_file, servers, named, set_, preset or "ns2")
        return _against_ns2(todo, preset or "ns2", as_json, classes)
    if classes:
        return fail("--classes: only with --against ns2 (the kernel does not say why a timer expired)", EXIT_USAGE)
    try:
        require_privileges()
    except TestbedUnavailable as e:
        return fail(str(e), EXIT_USAGE)
    preset = preset or "linux"
    todo = scenarios(scenario_file, servers, named, set_, preset)
    kernel = clock()
    for note in notes(todo[0]):
        print(f"note: testbed: {note}", file=sys.stderr)
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 120)
    try:
        cost = host_cost(todo[0], kernel.jiffy_s, timeout)
    except TestbedError as e:
        return fail(str(e), EXIT_ENGINE)
    calibrated = calibrate and cost.server_jitter_s is not None
    if calibrate and not calibrated:
        print("note: --calibrate: no turnaround matches the testbed; the simulator keeps its own", file=sys.stderr)
    hosts = {"workload.server_jitter": cost.server_jitter_s} if calibrated else {}
    if not as_json:
        console.print(cost.line(calibrated))
    rows = []
    for scenario in todo:
        overrides = {**simulator_overrides(scenario, kernel.jiffy_s), **hosts}
        sim = simulate(scenario.with_overrides(overrides))
        try:
            bed = run_testbed(scenario, timeout=timeout)
        except TestbedError as e:
            return fail(str(e), EXIT_ENGINE)
        figures = comparison(sim, bed.to_dict())
        if as_json:
            shown = {k: format_duration(v) if k in _DURATIONS else v for k, v in overrides.items()}
            out = {
                "source": "validate",
                "preset": preset,
                "host_cost": cost.to_dict(calibrated),
                "simulator_overrides": shown,
                "figures": figures,
                "simulator": sim.to_dict(),
                "testbed": bed.to_dict(),
            }
            print(json.dumps(out, allow_nan=False), flush=True)
        elif len(todo) == 1:
            _print_one(console, scenario, preset, overrides, bed, figures)
        rows.append((scenario, bed, figures))
        if bed.status == "failed":
            return fail(bed.error or "incast read failed", EXIT_ENGINE)
        if bed.status == "interrupted":
            return fail(f"interrupted after {bed.blocks} testbed blocks", EXIT_INTERRUPTED)
    if len(todo) > 1 and not as_json:
        _print_rows(console, rows, preset, {**simulator_overrides(todo[0], kernel.jiffy_s), **hosts})
    return 0


def _against_ns2(todo: "list[Scenario]", preset: str, as_json: bool, classes: bool) -> int:
    """``incast validate --against ns2``: each scenario in the simulator and in ns-2.35."""
    from rich.console import Console

    from incast.reference import ns2
    from incast.result import run as simulate

    runs = []
    for scenario in todo:
        ns2.script(scenario)  # refuses what ns-2 cannot express before anything runs
    for i, asked in enumerate(todo):
        scenario, rounded = ns2.whole_segments(asked)
        sim = simulate(scenario)
        try:
            done = ns2.run(scenario, classes=classes)
        except ns2.Ns2Error as e:
            return fail(str(e), EXIT_ENGINE)
        timeouts, requests = ns2.response_timeouts(sim)
        for note in ([*done.notes, rounded] if i == 0 else []) + [requests]:
            if note:
                print(f"note: ns2: {note}", file=sys.stderr)
        ref = done.to_dict(sim.best_goodput_mbps)
        counted = {"timeouts": timeouts} | (ns2.response_classes(sim) if classes else {})
        figures = comparison(sim, ref, "ns2", counted)
        if as_json:
            out = {"source": "validate", "against": "ns2", "preset": preset, "figures": figures}
            out |= {"simulator": sim.to_dict(), "ns2": ref}
            print(json.dumps(out, allow_nan=False), flush=True)
        runs.append((scenario, figures))
    if as_json:
        return 0
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 120)
    heading = f"simulator and ns-2.35 both with preset {preset}"
    if len(runs) == 1:
        console.print(runs[0][0].describe(), style="bold")
        console.print(heading)
        console.print(_figures_table(runs[0][1], "ns2", "ns2/sim"))
    else:
        console.print(runs[0][0].describe().split(", ", 1)[-1], style="bold")
        console.print(heading)
        console.print(_rows_table([(s.servers, f) for s, f in runs], "ns2"))
    return 0


def _figures_table(figures: dict[str, Any], ref: str, ratio_head: str) -> "Table":
    from rich.table import Table

    table = Table()
    for name in ("", "simulator", ref, ratio_head):
        table.add_column(name, justify="left" if not name else "right", no_wrap=True)
    for key, f in figures.items():
        label = _LABELS[key]
        ratio = "—" if f["ratio"] is None else f"{f['ratio']:.2f}"
        table.add_row(label, _cell(label, f["simulator"]), _cell(label, f[ref]), ratio)
    return table


def _rows_table(rows: list[tuple[int, dict[str, Any]]], ref: str) -> "Table":
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


def _overrides_line(preset: str, overrides: dict[str, Any]) -> str:
    from incast.units import format_duration

    shown = [f"{k}={format_duration(v) if k in _DURATIONS else v}" for k, v in overrides.items()]
    return f"both over preset {preset}; simulator with " + ", ".join(shown).replace("True", "true")


def _print_one(
    console: "Console",
    scenario: "Scenario",
    preset: str,
    overrides: dict[str, Any],
    bed: "TestbedResult",
    figures: dict[str, Any],
) -> None:
    console.print(scenario.describe(), style="bold")
    console.print(kernel_line(bed))
    console.print(_overrides_line(preset, overrides))
    console.print(_figures_table(figures, "testbed", "testbed/sim"))
    console.print("servers' SRTT, RTTVAR, RTO: means as each request after a connection's first arrived (TCP_INFO)")


def _print_rows(
    console: "Console",
    rows: "list[tuple[Scenario, TestbedResult, dict[str, Any]]]",
    preset: str,
    overrides: dict[str, Any],
) -> None:
    console.print(rows[0][0].describe().split(", ", 1)[-1], style="bold")
    console.print(kernel_line(rows[0][1]))
    console.print(_overrides_line(preset, overrides))
    console.print(_rows_table([(s.servers, f) for s, _, f in rows], "testbed"))
    console.print("servers' SRTT and RTO as each request after a connection's first arrived (kernel: TCP_INFO):")
    for s, _, f in rows:
        srtt, rto = f["server_srtt_ms"], f["server_rto_ms"]
        sim = f"{_cell('ms', srtt['simulator'])} and {_cell('ms', rto['simulator'])} ms"
        kernel = f"{_cell('ms', srtt['testbed'])} and {_cell('ms', rto['testbed'])} ms"
        console.print(f"  {s.servers} servers: simulator {sim}, kernel {kernel}")


def register(app: typer.Typer) -> None:
    """Add the ``validate`` verb to ``app``."""
    app.command("validate", no_args_is_help=False)(validate)
