"""Writes docs/validation/linux.md: ``incast validate`` against the Linux kernel on a set of configurations.

Run as root: ``python docs/linux_fidelity.py [--runs 3] [--calibrate] [--raw FILE]``, or
``--render`` to write the page again from the numbers of the last run, or ``--verify`` to bring it
current without the kernel (``docs/verify.py``): every run's simulator figures recomputed, and every
testbed run's plan compared with the plan of the run's own commit. Each configuration runs
``incast validate --json`` once per run, the simulator with seeds 1, 2, 3 and the testbed afresh each
time, twice over: as the simulator runs by default, and with ``--set link.host_jitter=30us`` (each
host takes a random time to handle each frame). Each table gives both goodputs (mean and range),
both timeout counts, whether the means agree within 15 % (goodput) and a factor of 2 (timeouts), and
the server turnaround that matched each run's one-server block time (``host_cost``; the simulator
runs with it under ``--calibrate``). A third table runs twelve configurations at 1 Gbps (4 to 16
servers, the ``linux`` preset) and sets beside the goodputs both ports' drops, both sides' servers'
SRTT and the testbed's port check (``incast.testbed.emulation``). ``--raw`` keeps every JSON object.
The load average before and after is stamped on the page, and each 1 Gbps row's load average when
it ran: the testbed shares two cores with everything else.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import simulator_side
from pages import ROOT, Run, generate, parser, render_again
from verify import Moved, Verification

from incast.units import parse_size

PAGE = "linux.md"
#: What the page's numbers depend on besides this script and the engine.
DEPENDS = [
    "python/incast/testbed",
    "python/incast/cli/validate.py",
    "python/incast/cli/testbed.py",
    "crates/incast-bench/src",
]
#: Every configuration: the common options, then each row's own.
COMMON = ["--link", "200Mbps", "--sru", "96KiB", "--blocks", "40"]
#: The two tables: a name and the settings every run of it adds.
VARIANTS = {"default": [], "host_jitter": ["link.host_jitter=30us"]}


@dataclass(frozen=True)
class Config:
    """One row: servers, RTO_min, `--tcp` (sack: reno with SACK), SACK, switch buffer."""

    servers: int
    rto_min: str
    tcp: str
    sack: bool
    buffer: str

    def argv(self, seed: int, calibrate: bool, sets: list[str]) -> list[str]:
        """``incast validate`` for this row with the simulator's ``seed`` and the settings ``sets``."""
        return [
            *("incast", "validate", "--json", *COMMON, *(["--calibrate"] if calibrate else [])),
            *("--servers", str(self.servers), "--rto-min", self.rto_min, "--tcp", self.tcp),
            *("--buffer", self.buffer, "--recovery", "sack" if self.sack else "newreno", "--set", f"seed={seed}"),
            *(a for kv in sets for a in ("--set", kv)),
        ]


CONFIGS = [
    Config(1, "200ms", "reno", False, "48KiB"),
    Config(4, "200ms", "reno", False, "48KiB"),
    Config(16, "200ms", "reno", False, "48KiB"),
    Config(4, "5ms", "reno", False, "48KiB"),
    Config(16, "5ms", "reno", False, "48KiB"),
    Config(32, "1ms", "reno", False, "48KiB"),
    Config(4, "200ms", "cubic", True, "48KiB"),
    Config(16, "200ms", "cubic", True, "48KiB"),
    Config(8, "5ms", "cubic", True, "96KiB"),
    Config(32, "5ms", "cubic", True, "96KiB"),
    Config(8, "1ms", "sack", True, "96KiB"),
    Config(16, "1ms", "cubic", False, "96KiB"),
]

#: The 1 Gbps table's common options (the ``linux`` preset's defaults otherwise: Cubic, SACK, a 256 KiB SRU).
GIGABIT_COMMON = ["--link", "1Gbps", "--blocks", "20"]


@dataclass(frozen=True)
class Gigabit:
    """One row of the 1 Gbps table: servers, switch buffer, RTO_min."""

    servers: int
    buffer: str
    rto_min: str

    def argv(self, seed: int, calibrate: bool) -> list[str]:
        """``incast validate`` for this row with the simulator's ``seed``."""
        return [
            *("incast", "validate", "--json", *GIGABIT_COMMON, *(["--calibrate"] if calibrate else [])),
            *("--servers", str(self.servers), "--buffer", self.buffer, "--rto-min", self.rto_min),
            *("--set", f"seed={seed}"),
        ]


GIGABIT = [Gigabit(n, buffer, rto) for n in (4, 8, 16) for buffer in ("32KiB", "128KiB") for rto in ("200ms", "5ms")]

ABOUT = """\
`incast validate` runs one scenario on the testbed (the real Linux TCP stack of this machine in
network namespaces; see [the guide](../GUIDE.md#the-testbed)) and in the simulator, and prints both
side by side. This page runs it on twelve configurations at 200 Mbps, a 96 KiB SRU and 40 blocks,
and on twelve at 1 Gbps (the last table).

**What is compared.** Goodput and the servers' retransmission timeouts (the kernel's `TCPTimeouts`
summed over the server namespaces; the simulator's servers' timeouts). `incast validate` also prints
the retransmissions (`RetransSegs`), fast recoveries (`TCPSackRecovery`, `TCPRenoRecovery`), tail
loss probes (`TCPLossProbes`), retransmissions found lost again (`TCPLostRetransmit`), the drops at
the client port's `tbf`, and both sides' servers' SRTT, RTTVAR and RTO, each side sampled as each
request after a connection's first arrives.

**How the two are made alike.** Both sides run the `linux` preset (the kernel's defaults: Cubic,
SACK, timestamps, F-RTO, initial window 10, RACK-TLP, PRR). The simulator adds the kernel's own rules
(`LINUX_STACK` in `incast.presets`), each an engine setting: the Linux RTO estimator
(`tcp.rto_flavor = "linux"`, RTO_min kept in jiffies as `icsk_rto_min` keeps it), new data on the first
duplicate ACKs (`tcp.limited_transmit`), cwnd = ssthresh when recovery ends
(`tcp.recovery_exit`), the timer rearmed whenever the head is retransmitted
(`tcp.rto_restart = "head_retransmit"`, `tcp_xmit_retransmit_queue`), cwnd grown only while it limits
the sender (`tcp.cwnd_validation`, `tcp_is_cwnd_limited`), the window after idle halved per idle RTO
(`tcp.idle_restart = "linux"`, `tcp_cwnd_restart`), Cubic's HyStart and its arithmetic as
`tcp_cubic.c` has it (`tcp.cubic_hystart`, `tcp.cubic_flavor = "linux"`), PRR as
`tcp_cwnd_reduction` counts it (`tcp.prr_flavor = "linux"`), only what is marked lost resent with SACK
(`tcp.sack_recovery = "linux"`), a 4 ms jiffy clock (`tcp.clock_granularity`, HZ=250 read from the
kernel) whose timers fire as the kernel's timer wheel fires them, one tick after the tick they expire
at (`tcp.clock_wheel = "linux"`, Linux 4.8 on; `calc_index` rounds each expiry up), RTT samples in
microseconds (`tcp.rtt_resolution = "us"`, Linux 3.15 on), NewReno's recovery where the row says
`reno` (Linux's reno recovers as NewReno), Linux's delayed ACK (`tcp.delayed_ack = "linux"`), and
every port a token bucket as deep as the testbed's `tbf` (`link.token_bucket`, one frame and 100 µs of
line, `Shaping.burst`) in front of a line that takes no time, as the `tbf` is in front of a veth: an
unqueued frame crosses it with no serialization time, and frames after an idle moment leave back to
back. `--tcp sack` is Linux reno with SACK; "SACK off" sets `tcp.sack=false`.

**What differs, and why.** The testbed has no netem, so its RTT is what the veths give, not
`link.rtt`: the simulator runs over the path the one-server run measured instead (the least
`tcpi_min_rtt` of its server, `host_cost.path_rtt_s`). Its `tbf` waits for tokens on a timer, which
fires late on these busy cores and sends the client port's frames at uneven gaps; the simulator's
bucket releases each frame the moment it holds its tokens. The real hosts take a varying time to
handle each frame, where the simulator's hosts answer in a fixed time by default; with many servers
in lockstep with the port's departures a drop-tail queue then drops by phase, not by chance (Floyd
and Jacobson's phase effects), and a retransmission sent the moment an ACK arrives falls in the same
unlucky phase as the frames lost before it. `link.host_jitter` (an exponential time with that mean
per frame received, frames kept in order) stands for the hosts' timing; `python docs/host_timing.py`
measures it on the testbed (as root) and counts, for both sides, how often the port drops first
transmissions and retransmissions. The second table runs with 30 µs. The last column is empty when
the testbed's one-server blocks were as fast as the simulator's or faster: no server turnaround then
makes the simulator's as short.
"""


GIGABIT_ABOUT = """\
The papers' clusters ran at 1 Gbps. Options `--link 1Gbps --blocks 20` and the `linux` preset's
defaults (Cubic with SACK, a 256 KiB SRU), with the buffer and RTO_min of each row. Beside the
goodputs: the frames each side's client port dropped (the means agree when within a factor of 2, or
both 0); both sides' servers' mean SRTT; the buffer's
drain time at 1 Gbps (the most the port adds to a round trip); in how many runs the port was
emulated, that is the kernel's SRTT exceeded the simulator's by at most that drain time and its port
dropped at least a tenth of the simulator's drops (`incast validate` prints a `warning:` line for
each run where it did not); and the load average (1 min) as
each run started. A port that drops nothing where the simulator's drops, with a kernel SRTT far
above the simulator's, means the frames waited in front of the port (the cores could not move them
at 1 Gbps), not in it.
"""


def _spread(values: list[float], digits: int) -> str:
    mean = statistics.fmean(values)
    if len(values) == 1:
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ({min(values):.{digits}f}–{max(values):.{digits}f})"


def run_row(c: Config, runs: int, calibrate: bool, sets: list[str], raw: Any) -> dict[str, list[float]]:
    """Every run of one configuration: both goodputs, both timeout counts, the turnarounds found."""
    row: dict[str, list[Any]] = {"sim_g": [], "bed_g": [], "sim_t": [], "bed_t": [], "turnaround": [], "path": []}
    for seed in range(1, runs + 1):
        done = subprocess.run(c.argv(seed, calibrate, sets), check=True, capture_output=True, text=True)
        d = json.loads(done.stdout)
        if raw:
            raw.write(done.stdout)
        if d["host_cost"]["server_jitter_s"] is not None:
            row["turnaround"].append(d["host_cost"]["server_jitter_s"] * 1e6)
        row["path"].append(d["host_cost"]["path_rtt_s"])
        row["sim_g"].append(d["simulator"]["goodput_mbps"])
        row["bed_g"].append(d["testbed"]["goodput_mbps"])
        row["sim_t"].append(d["simulator"]["timeouts"])
        row["bed_t"].append(d["testbed"]["timeouts"])
        print(f"{c} seed {seed}: {d['simulator']['goodput_mbps']:.1f} / {d['testbed']['goodput_mbps']:.1f}", flush=True)
    return row


def run_gigabit(c: Gigabit, runs: int, calibrate: bool, raw: Any) -> dict[str, list[float]]:
    """Every run of one 1 Gbps row: goodputs, drops and SRTTs of both sides, the port check, the load average."""
    keys = ("sim_g", "bed_g", "sim_d", "bed_d", "sim_rtt", "bed_rtt", "emulated", "load", "path")
    row: dict[str, list[Any]] = {k: [] for k in keys}
    for seed in range(1, runs + 1):
        load = os.getloadavg()[0]
        done = subprocess.run(c.argv(seed, calibrate), check=True, capture_output=True, text=True)
        d = json.loads(done.stdout)
        if raw:
            raw.write(done.stdout)
        sim, bed = d["simulator"], d["testbed"]
        row["sim_g"].append(sim["goodput_mbps"])
        row["bed_g"].append(bed["goodput_mbps"])
        row["sim_d"].append(sim["drops"])
        row["bed_d"].append(bed["drops"])
        row["sim_rtt"].append(sim["server_srtt_ms"])
        row["bed_rtt"].append(math.nan if bed["server_srtt_ms"] is None else bed["server_srtt_ms"])
        row["emulated"].append(float(d["port_check"]["emulated"] is not False))
        row["load"].append(load)
        row["path"].append(d["host_cost"]["path_rtt_s"])
        print(f"{c} seed {seed}: {sim['goodput_mbps']:.1f} / {bed['goodput_mbps']:.1f}, load {load:.2f}", flush=True)
    return row


def gigabit_table(rows: list[dict[str, list[float]]]) -> str:
    """The 1 Gbps table and its summary lines."""
    heads = ["servers", "buffer", "RTO_min", "sim Mbps", "kernel Mbps", "kernel/sim", "sim drops", "kernel drops"]
    heads += ["sim SRTT ms", "kernel SRTT ms", "buffer drain ms", "port emulated", "load"]
    lines = ["| " + " | ".join(heads) + " |", "|" + "---:|" * 3 + "---:|" * 8 + ":---:|---:|"]
    good = drops = emulated = 0
    for c, r in zip(GIGABIT, rows, strict=True):
        ratio = statistics.fmean(r["bed_g"]) / statistics.fmean(r["sim_g"])
        good += abs(ratio - 1) <= 0.15
        sd, bd = statistics.fmean(r["sim_d"]), statistics.fmean(r["bed_d"])
        drops += (sd == bd == 0) or (min(sd, bd) > 0 and max(sd, bd) / min(sd, bd) <= 2)
        emulated += all(r["emulated"])
        drain = parse_size(c.buffer) * 8 / 1e9 * 1e3
        lines.append(
            f"| {c.servers} | {c.buffer} | {c.rto_min} | {_spread(r['sim_g'], 1)} | {_spread(r['bed_g'], 1)} "
            f"| {ratio:.2f} | {_spread(r['sim_d'], 0)} | {_spread(r['bed_d'], 0)} | {_spread(r['sim_rtt'], 2)} "
            f"| {_spread(r['bed_rtt'], 2)} | {drain:.2f} | {sum(map(int, r['emulated']))} of {len(r['emulated'])} "
            f"| {_spread(r['load'], 1)} |"
        )
    n = len(GIGABIT)
    lines.append(
        f"\nGoodput within 15 %: {good} of {n}; the kernel's port drops where the simulator's does (within a factor "
        f"of 2): {drops} of {n}; "
        f"the port emulated in every run: {emulated} of {n}."
    )
    return "\n".join(lines)


def table(rows: list[dict[str, list[float]]]) -> str:
    """One markdown table and its summary line."""
    heads = ["servers", "RTO_min", "--tcp", "SACK", "buffer", "sim Mbps", "kernel Mbps", "kernel/sim"]
    lines = ["| " + " | ".join([*heads, "sim TO", "kernel TO", "agree", "turnaround µs"]) + " |"]
    lines.append("|" + "---:|" * 5 + "---:|" * 5 + ":---:|---:|")
    good = timeouts_ok = 0
    for c, r in zip(CONFIGS, rows, strict=True):
        ratio = statistics.fmean(r["bed_g"]) / statistics.fmean(r["sim_g"])
        st, bt = statistics.fmean(r["sim_t"]), statistics.fmean(r["bed_t"])
        g_ok = abs(ratio - 1) <= 0.15
        t_ok = (st == bt == 0) or (min(st, bt) > 0 and max(st, bt) / min(st, bt) <= 2)
        good += g_ok
        timeouts_ok += t_ok
        mark = ("goodput" if g_ok else "") + (" timeouts" if t_ok else "")
        lines.append(
            f"| {c.servers} | {c.rto_min} | {c.tcp} | {'on' if c.sack else 'off'} | {c.buffer} "
            f"| {_spread(r['sim_g'], 1)} | {_spread(r['bed_g'], 1)} | {ratio:.2f} "
            f"| {_spread(r['sim_t'], 0)} | {_spread(r['bed_t'], 0)} | {mark.strip() or '—'} "
            f"| {_spread(r['turnaround'], 0) if r['turnaround'] else '—'} |"
        )
    n = len(CONFIGS)
    lines.append(f"\nGoodput within 15 %: {good} of {n}; timeouts within a factor of 2: {timeouts_ok} of {n}.")
    return "\n".join(lines)


def render(run: Run, results: dict[str, Any]) -> None:
    """Write the page from a run's numbers."""
    runs = results["runs"]
    calibrate = " --calibrate" if results["calibrate"] else ""
    body = [ABOUT, f"Means over {runs} runs (simulator seeds 1–{runs}), the range in brackets; options "
            f"`{' '.join(COMMON)}{calibrate}` on every row.\n"]  # fmt: skip
    titles = {"default": "As the simulator runs by default", "host_jitter": "With `--set link.host_jitter=30us`"}
    for name, rows in results["tables"].items():
        body.append(f"## {titles[name]}\n\n{table(rows)}\n")
    body.append(f"## At 1 Gbps\n\n{GIGABIT_ABOUT}\n{gigabit_table(results['gigabit'])}\n")
    command = f"python docs/linux_fidelity.py --runs {runs}{calibrate}"
    run.write(PAGE, "Against the Linux kernel (the testbed)", command, "\n".join(body))


def _lines(results: dict[str, Any]) -> list[tuple[str, int, int, list[str]]]:
    """Every ``incast validate`` line of the run: variant, row, seed, and its arguments after ``--json``."""
    seeds = range(1, results["runs"] + 1)
    variants = [
        (name, i, seed, c.argv(seed, results["calibrate"], sets)[3:])
        for name, sets in VARIANTS.items()
        for i, c in enumerate(CONFIGS)
        for seed in seeds
    ]
    gigabit = [
        ("gigabit", i, seed, c.argv(seed, results["calibrate"])[3:]) for i, c in enumerate(GIGABIT) for seed in seeds
    ]
    return variants + (gigabit if "gigabit" in results else [])


#: Run in the run's own commit's docs/: that generator's ``incast validate`` lines, as ``_lines`` makes them.
_OLD_LINES = """\
import json, sys
import linux_fidelity as g
runs, calibrate = int(sys.argv[1]), sys.argv[2] == "1"
print(json.dumps([c.argv(seed, calibrate, sets)[3:] for sets in g.VARIANTS.values()
                  for c in g.CONFIGS for seed in range(1, runs + 1)]
                 + [c.argv(seed, calibrate)[3:] for c in getattr(g, "GIGABIT", []) for seed in range(1, runs + 1)]))
"""


def _config(name: str, i: int) -> Config | Gigabit:
    return GIGABIT[i] if name == "gigabit" else CONFIGS[i]


def _saved_sim(results: dict[str, Any], name: str, i: int, seed: int) -> list[float]:
    if name == "gigabit":
        row = results["gigabit"][i]
        return [row["sim_g"][seed - 1], row["sim_d"][seed - 1]]
    row = results["tables"][name][i]
    return [row["sim_g"][seed - 1], row["sim_t"][seed - 1]]


def _saved_path(results: dict[str, Any], name: str, i: int, seed: int) -> float | None:
    """The path round trip the line's one-server run measured (:func:`simulator_side.saved_path`)."""
    row = results["gigabit"][i] if name == "gigabit" else results["tables"][name][i]
    return simulator_side.saved_path(row, seed)


def baseline(run: Run, results: dict[str, Any], core: Path) -> dict[str, Any]:
    """Every line's testbed plans as the run's own commit's code makes them.

    Kept with the first verification's note (each distinct plan once, and each line's plans as
    indices), so a later verification need not run that commit again; otherwise made in a temporary git
    worktree at the commit with ``core`` as its engine, which must give every simulator figure the
    run saved (else it is not that commit's engine).
    """
    for note in run.verified:
        if note.get("baseline", {}).get("commit") == run.commit:
            return dict(note["baseline"])
    with tempfile.TemporaryDirectory(prefix="incast-baseline-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), run.commit], cwd=ROOT, check=True,
                       capture_output=True)  # fmt: skip
        try:
            shutil.copy(core, tree / "python" / "incast" / "_core.abi3.so")
            env = os.environ | {"PYTHONPATH": str(tree / "python")}
            flags = [str(results["runs"]), "1" if results["calibrate"] else "0"]
            argv = subprocess.run([sys.executable, "-c", _OLD_LINES, *flags], cwd=tree / "docs", env=env, check=True,
                                  capture_output=True, text=True).stdout  # fmt: skip
            paths = [_saved_path(results, name, i, seed) for name, i, seed, _ in _lines(results)]
            items = [{"args": a, "path_rtt_s": p} for a, p in zip(json.loads(argv), paths, strict=True)]
            done = subprocess.run([sys.executable, str(ROOT / "docs" / "simulator_side.py")], input=json.dumps(items),
                                  cwd=tmp, env=env, capture_output=True, text=True)  # fmt: skip
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True)
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise SystemExit(f"error: the code of {run.commit} with {core} as its engine failed ({why}): "
                         "give --baseline-core an engine built at that commit")  # fmt: skip
    objects = [line[0] for line in json.loads(done.stdout)]
    for (name, i, seed, _), d in zip(_lines(results), objects, strict=True):
        counted = "drops" if name == "gigabit" else "timeouts"
        if _saved_sim(results, name, i, seed) != [d["simulator"]["goodput_mbps"], d["simulator"][counted]]:
            where = f"{name} {_config(name, i)} seed {seed}"
            raise SystemExit(f"error: {core} does not give the run's simulator figures at {run.commit} "
                             f"({where}): give --baseline-core one built there")  # fmt: skip
    distinct: dict[str, int] = {}
    lines = [[distinct.setdefault(json.dumps(p, sort_keys=True), len(distinct)) for p in d["plans"]] for d in objects]
    return {
        "commit": run.commit,
        "engine_sha256": hashlib.sha256(core.read_bytes()).hexdigest(),
        "simulator_runs_reproduced": len(objects),
        "plans": list(distinct),
        "lines": lines,
    }


def verify(core: Path) -> None:
    """``--verify``: every line's simulator figures as saved, its testbed plans as at the run's commit."""
    run, results = Run.load(PAGE, current=False)
    check = Verification(PAGE, "python docs/linux_fidelity.py --verify")
    if results["calibrate"]:
        raise SystemExit("error: a --calibrate run's simulator ran with the kernel's turnaround: run it again")
    old = baseline(run, results, core)
    try:
        for (name, i, seed, args), indices in zip(_lines(results), old["lines"], strict=True):
            (d,) = simulator_side.validate(args, _saved_path(results, name, i, seed))
            where = f"{name} {_config(name, i)} seed {seed}"
            counted = "drops" if name == "gigabit" else "timeouts"
            fresh = [d["simulator"]["goodput_mbps"], d["simulator"][counted]]
            check.same("simulator runs", _saved_sim(results, name, i, seed), fresh, where, ("goodput", counted))
            if len(indices) != len(d["plans"]):
                raise Moved(f"{where}: {len(indices)} testbed runs at {run.commit}, {len(d['plans'])} now")
            for k, (j, plan) in enumerate(zip(indices, d["plans"], strict=True)):
                check.same_plan(json.loads(old["plans"][j]), plan, f"{where} testbed run {k + 1} plan")
    except Moved as moved:
        raise check.refuse(moved, "docs/linux_fidelity.py") from None
    note = check.note(run.commit)
    if not any("baseline" in n for n in run.verified):
        note["baseline"] = old
    check.restamp(run, results, DEPENDS, render, note)


def main() -> int:
    """Run every configuration in both variants (or take the last run's numbers) and write the page."""
    ap = parser(__doc__)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--calibrate", action="store_true", help="run incast validate --calibrate")
    ap.add_argument("--raw", type=argparse.FileType("w"), help="write every incast validate JSON object here")
    ap.add_argument("--verify", action="store_true", help="bring the page current if its results did not move")
    ap.add_argument(
        "--baseline-core",
        type=Path,
        default=ROOT / "python" / "incast" / "_core.abi3.so",
        help="with --verify, the engine to run the run's own commit's code with (built at that commit)",
    )
    args = ap.parse_args()
    if args.render:
        return render_again(PAGE, render)
    if args.verify:
        verify(args.baseline_core)
        return 0

    def measure() -> dict[str, Any]:
        gigabit = [run_gigabit(c, args.runs, args.calibrate, args.raw) for c in GIGABIT]
        tables = {
            name: [run_row(c, args.runs, args.calibrate, sets, args.raw) for c in CONFIGS]
            for name, sets in VARIANTS.items()
        }
        return {"runs": args.runs, "calibrate": args.calibrate, "tables": tables, "gigabit": gigabit}

    return generate(PAGE, __file__, DEPENDS, measure, render)


if __name__ == "__main__":
    sys.exit(main())
