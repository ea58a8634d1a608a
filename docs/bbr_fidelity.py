"""Writes docs/validation/bbr.md: the simulator's BBR against the kernel's BBR on the testbed.

Run as root: ``python docs/bbr_fidelity.py [--runs 3] [--raw FILE]`` runs both parts, ``--part table``
or ``--part flow`` one of them (the other kept from the last run), ``--render`` writes the page again
from the last run's numbers and ``--verify`` brings it current without the kernel: every run's
simulator figures recomputed, and every testbed run's plan compared with the one saved with it.
``--part simulator`` runs the simulator's side of the last run again at the current engine (the
table's lines, the one flow and the incast case), the kernel's runs kept (they do not depend on the
engine; each table line's testbed plans must be the ones saved with it).

The table runs ``incast validate --json --tcp bbr`` on each configuration once per run (simulator
seeds 1, 2, 3; the testbed afresh each time), with the machine's load average read before each line.
The flow part runs one server on the testbed with the kernel's BBR state sampled
(``incast testbed --json --sample``) and the same scenario in the simulator with its BBR trace, and
sets the two traces side by side phase by phase (:mod:`bbr_phases`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

import simulator_side
from pages import Run, generate, load_average, parser, render_again
from verify import Moved, Verification

PAGE = "bbr.md"
#: What the page's numbers depend on besides this script and the engine.
DEPENDS = [
    "python/incast/testbed",
    "python/incast/cli/validate.py",
    "python/incast/cli/testbed.py",
    "crates/incast-bench/src",
    "docs/bbr_phases.py",
]
#: Every configuration: the common options, then each row's own.
COMMON = ["--link", "200Mbps", "--sru", "256KiB", "--blocks", "40", "--tcp", "bbr"]
#: Goodput agrees within this fraction of the kernel's, retransmitted packets within this factor.
GOODPUT_TOLERANCE = 0.15
RETRANSMIT_FACTOR = 1.5


@dataclass(frozen=True)
class Config:
    """One row: servers, RTO_min, the switch buffer toward the client."""

    servers: int
    rto_min: str
    buffer: str

    def args(self, seed: int) -> list[str]:
        """``incast validate --json`` arguments for this row with the simulator's ``seed``."""
        return [
            *COMMON,
            *("--servers", str(self.servers), "--rto-min", self.rto_min, "--buffer", self.buffer),
            *("--set", f"seed={seed}"),
        ]


CONFIGS = [
    Config(1, "200ms", "32KiB"),
    Config(1, "200ms", "256KiB"),
    Config(4, "200ms", "32KiB"),
    Config(8, "200ms", "256KiB"),
    Config(16, "200ms", "32KiB"),
    Config(32, "200ms", "256KiB"),
    Config(4, "5ms", "256KiB"),
    Config(8, "5ms", "32KiB"),
    Config(16, "5ms", "256KiB"),
    Config(32, "5ms", "32KiB"),
    Config(4, "1ms", "32KiB"),
    Config(8, "1ms", "256KiB"),
    Config(16, "1ms", "32KiB"),
    Config(32, "1ms", "256KiB"),
]

ABOUT = """\
`incast validate --tcp bbr` runs one scenario with BBR on the testbed (the kernel's own `tcp_bbr.c`,
set on every socket with `TCP_CONGESTION`; see [the guide](../GUIDE.md#the-testbed)) and in the
simulator (its model of `tcp_bbr.c`, `tcp.cc = "bbr"`), both over the `linux` preset, and prints both
side by side; the simulator's ports are token buckets as deep as the testbed's `tbf` qdiscs
(`link.token_bucket`, with the testbed's `Shaping.burst`). This page runs it on fourteen
configurations at 200 Mbps with a 256 KiB SRU and 40 blocks. The testbed's 1 Gbps port does not yet
queue where the emulated switch port is, so no higher rate is in the table.

**What is compared.** Goodput, and the servers' retransmitted packets (the kernel's `RetransSegs`
summed over the server namespaces; the simulator's servers' retransmissions). A row agrees when the
simulator's mean goodput is within 15 % of the kernel's and its mean retransmitted packets within a
factor of 1.5 of the kernel's (both none also agrees). The timeouts (`TCPTimeouts`) are shown beside
them. The load column is the machine's 1-minute load average read before each of the row's runs
(mean, and range): the testbed shares two cores with everything else on this machine.
"""


def _spread(values: list[float], digits: int) -> str:
    mean = statistics.fmean(values)
    if len(values) == 1:
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ({min(values):.{digits}f}–{max(values):.{digits}f})"


def run_row(c: Config, runs: int, raw: Any) -> dict[str, Any]:
    """Every run of one configuration: both sides' goodput, retransmissions and timeouts, and the load."""
    keys = ("sim_g", "bed_g", "sim_r", "bed_r", "sim_t", "bed_t", "load", "plans", "path")
    row: dict[str, Any] = {k: [] for k in keys}
    for seed in range(1, runs + 1):
        row["load"].append(os.getloadavg()[0])
        args = c.args(seed)
        done = subprocess.run(["incast", "validate", "--json", *args], check=True, capture_output=True, text=True)
        d = json.loads(done.stdout.strip().splitlines()[-1])
        if raw:
            raw.write(done.stdout)
        for side, key in (("sim", "simulator"), ("bed", "testbed")):
            row[f"{side}_g"].append(d[key]["goodput_mbps"])
            row[f"{side}_r"].append(d[key]["retransmitted_packets"])
            row[f"{side}_t"].append(d[key]["timeouts"])
        row["path"].append(d["host_cost"]["path_rtt_s"])
        (blank,) = simulator_side.validate(args, row["path"][-1])
        row["plans"].append(blank["plans"])
        print(f"{c} seed {seed}: {d['simulator']['goodput_mbps']:.1f} / {d['testbed']['goodput_mbps']:.1f} Mbps, "
              f"{d['simulator']['retransmitted_packets']} / {d['testbed']['retransmitted_packets']} retransmitted, "
              f"load {row['load'][-1]:.2f}", flush=True)  # fmt: skip
    return row


def agreement(r: dict[str, Any]) -> tuple[bool, bool]:
    """Does the row's mean goodput agree within 15 % of the kernel's, its retransmissions within 1.5x?"""
    sim_g, bed_g = statistics.fmean(r["sim_g"]), statistics.fmean(r["bed_g"])
    sim_r, bed_r = statistics.fmean(r["sim_r"]), statistics.fmean(r["bed_r"])
    g_ok = abs(sim_g - bed_g) <= GOODPUT_TOLERANCE * bed_g
    r_ok = (sim_r == bed_r == 0) or (
        min(sim_r, bed_r) > 0 and max(sim_r, bed_r) / min(sim_r, bed_r) <= RETRANSMIT_FACTOR
    )
    return g_ok, r_ok


def table(rows: list[dict[str, Any]]) -> str:
    """The markdown table and its summary line."""
    heads = ["servers", "RTO_min", "buffer", "sim Mbps", "kernel Mbps", "sim/kernel", "sim retx", "kernel retx"]
    lines = ["| " + " | ".join([*heads, "sim TO", "kernel TO", "agree", "load"]) + " |"]
    lines.append("|" + "---:|" * 10 + ":---:|---:|")
    good = retx = both = 0
    for c, r in zip(CONFIGS, rows, strict=True):
        g_ok, r_ok = agreement(r)
        good, retx, both = good + g_ok, retx + r_ok, both + (g_ok and r_ok)
        ratio = statistics.fmean(r["sim_g"]) / statistics.fmean(r["bed_g"])
        mark = " ".join(w for w, ok in (("goodput", g_ok), ("retx", r_ok)) if ok) or "—"
        lines.append(
            f"| {c.servers} | {c.rto_min} | {c.buffer} | {_spread(r['sim_g'], 1)} | {_spread(r['bed_g'], 1)} "
            f"| {ratio:.2f} | {_spread(r['sim_r'], 0)} | {_spread(r['bed_r'], 0)} | {_spread(r['sim_t'], 0)} "
            f"| {_spread(r['bed_t'], 0)} | {mark} | {_spread(r['load'], 1)} |"
        )
    n = len(rows)
    lines.append(
        f"\nGoodput within 15 % of the kernel's: {good} of {n}; retransmitted packets within 1.5x: {retx} of {n}; "
        f"both: {both} of {n} ({both / n:.0%}; the issue asks for 75 % or more)."
    )
    return "\n".join(lines)


def render(run: Run, results: dict[str, Any]) -> None:
    """Write the page from a run's numbers."""
    body = [ABOUT]
    t = results.get("table")
    if t is not None:
        runs = t["runs"]
        body.append(
            f"## Testbed agreement\n\nRun at commit {t['commit']}, {t['started']}; load average {t['load_before']} "
            f"before and {t['load_after']} after"
            + (f"; the simulator's side run again at commit {t['simulator_commit']}" if "simulator_commit" in t else "")
            + f". Means over {runs} runs (simulator seeds 1–{runs}), the range in "
            f"brackets; options `{' '.join(COMMON)}` on every row, each line `incast validate --json "
            f"{' '.join(COMMON)} --servers N --rto-min R --buffer B --set seed=S`.\n\n{table(t['rows'])}\n"
        )
    f = results.get("flow")
    if f is not None:
        import bbr_phases

        body.append(bbr_phases.render(f))
    command = "python docs/bbr_fidelity.py" + (f" --runs {t['runs']}" if t is not None else "")
    run.write(PAGE, "BBR against the Linux kernel (the testbed)", command, "\n".join(body))


def _stamp() -> dict[str, Any]:
    from pages import commit

    return {"commit": commit(), "started": time.strftime("%Y-%m-%d %H:%M UTC"), "load_before": load_average()}


def measure_table(runs: int, raw: Any) -> dict[str, Any]:
    """Every configuration's runs, with the commit, the time and the load around them."""
    out = _stamp() | {"runs": runs}
    out["rows"] = [run_row(c, runs, raw) for c in CONFIGS]
    out["load_after"] = load_average()
    return out


def resimulate(t: dict[str, Any]) -> dict[str, Any]:
    """The saved table with its simulator side run again at the current engine, the kernel's runs kept."""
    for c, row in zip(CONFIGS, t["rows"], strict=True):
        for seed in range(1, t["runs"] + 1):
            (d,) = simulator_side.validate(c.args(seed), simulator_side.saved_path(row, seed))
            if d["plans"] != row["plans"][seed - 1]:
                raise SystemExit(
                    f"error: {c} seed {seed}: the testbed would now be set up differently; run --part table"
                )
            for key, name in (("sim_g", "goodput_mbps"), ("sim_r", "retransmitted_packets"), ("sim_t", "timeouts")):
                row[key][seed - 1] = d["simulator"][name]
    from pages import commit

    t["simulator_commit"] = commit()
    return t


def verify() -> None:
    """``--verify``: every run's simulator figures and testbed plans as saved."""
    run, results = Run.load(PAGE, current=False)
    check = Verification(PAGE, "python docs/bbr_fidelity.py --verify")
    try:
        t = results.get("table")
        for c, row in zip(CONFIGS, t["rows"] if t else [], strict=not t):
            for seed in range(1, t["runs"] + 1):
                (d,) = simulator_side.validate(c.args(seed), simulator_side.saved_path(row, seed))
                where = f"{c} seed {seed}"
                saved = [row[k][seed - 1] for k in ("sim_g", "sim_r", "sim_t")]
                fresh = [d["simulator"][k] for k in ("goodput_mbps", "retransmitted_packets", "timeouts")]
                check.same("simulator runs", saved, fresh, where, ("goodput", "retransmitted", "timeouts"))
                for k, (old, new) in enumerate(zip(row["plans"][seed - 1], d["plans"], strict=True)):
                    check.same_plan(old, new, f"{where} testbed run {k + 1} plan")
        f = results.get("flow")
        if f is not None:
            import bbr_phases

            fresh = bbr_phases.simulator_side(f)
            check.same("simulator runs", f["simulator"], fresh["flow"], "one flow")
            check.same("simulator runs", f["incast"]["simulator"], fresh["incast"], "four servers")
    except Moved as moved:
        raise check.refuse(moved, "docs/bbr_fidelity.py") from None
    check.restamp(run, results, DEPENDS, render, check.note(t["commit"] if t else None))


def main() -> int:
    """Run the table, the flow or both (the other part kept from the last run) and write the page."""
    ap = parser(__doc__)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--part", choices=("table", "flow", "both", "simulator"), default="both")
    ap.add_argument("--raw", type=argparse.FileType("w"), help="write every incast validate JSON object here")
    ap.add_argument("--verify", action="store_true", help="bring the page current if its results did not move")
    args = ap.parse_args()
    if args.render:
        return render_again(PAGE, render)
    if args.verify:
        verify()
        return 0

    def measure() -> dict[str, Any]:
        try:
            _, kept = Run.load(PAGE, current=False)
        except FileNotFoundError:
            kept = {}
        out = {"table": kept.get("table"), "flow": kept.get("flow")}
        if args.part in ("table", "both"):
            out["table"] = measure_table(args.runs, args.raw)
        if args.part == "simulator":
            out["table"] = resimulate(out["table"])
            if out["flow"] is not None:
                import bbr_phases

                fresh = bbr_phases.simulator_side(out["flow"])
                out["flow"]["simulator"] = fresh["flow"]
                out["flow"]["incast"]["simulator"] = fresh["incast"]
        if args.part in ("flow", "both"):
            import bbr_phases

            out["flow"] = bbr_phases.measure()
        return out

    return generate(PAGE, __file__, DEPENDS, measure, render)


if __name__ == "__main__":
    sys.exit(main())
