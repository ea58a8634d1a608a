"""The README's "Simulator against the kernel" table: ``incast validate`` on a set of configurations.

Run as root: ``python docs/linux_fidelity.py [--runs 3] [--calibrate] [--set KEY=VALUE ...] [--raw FILE]``. Each
configuration runs ``incast validate --json`` once per run, the simulator with seeds 1, 2, 3 and
the testbed afresh each time, and the table gives both goodputs (mean and range), both timeout
counts, and whether the means agree within 15 % (goodput) and a factor of 2 (timeouts), then the
server turnaround that matched each run's one-server block time (``host_cost``; the simulator runs
with it under ``--calibrate``). ``--set`` passes a setting to every ``incast validate`` (the testbed
notes what the kernel cannot take, such as ``link.host_jitter``). ``--raw`` keeps every JSON object.
The load average before and after is printed with it: the testbed shares two cores with everything
else.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass

#: Every configuration: the common options, then each row's own.
COMMON = ["--link", "200Mbps", "--sru", "96KiB", "--blocks", "40"]


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


def _spread(values: list[float], digits: int) -> str:
    mean = statistics.fmean(values)
    if len(values) == 1:
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ({min(values):.{digits}f}–{max(values):.{digits}f})"


def main() -> int:
    """Run every configuration; print the markdown table and the summary."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--calibrate", action="store_true", help="run incast validate --calibrate")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a setting for every run")
    ap.add_argument("--raw", type=argparse.FileType("w"), help="write every incast validate JSON object here")
    args = ap.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", file=sys.stderr)
    heads = ["servers", "RTO_min", "--tcp", "SACK", "buffer", "sim Mbps", "kernel Mbps", "kernel/sim"]
    print("| " + " | ".join([*heads, "sim TO", "kernel TO", "agree", "turnaround µs"]) + " |")
    print("|" + "---:|" * 5 + "---:|" * 5 + ":---:|---:|")
    good = timeouts_ok = 0
    for c in CONFIGS:
        sim_g, bed_g, sim_t, bed_t, turnaround = [], [], [], [], []
        for seed in range(1, args.runs + 1):
            done = subprocess.run(c.argv(seed, args.calibrate, args.set), check=True, capture_output=True, text=True)
            d = json.loads(done.stdout)
            if args.raw:
                args.raw.write(done.stdout)
            if d["host_cost"]["server_jitter_s"] is not None:
                turnaround.append(d["host_cost"]["server_jitter_s"] * 1e6)
            sim_g.append(d["simulator"]["goodput_mbps"])
            bed_g.append(d["testbed"]["goodput_mbps"])
            sim_t.append(d["simulator"]["timeouts"])
            bed_t.append(d["testbed"]["timeouts"])
        ratio = statistics.fmean(bed_g) / statistics.fmean(sim_g)
        st, bt = statistics.fmean(sim_t), statistics.fmean(bed_t)
        g_ok = abs(ratio - 1) <= 0.15
        t_ok = (st == bt == 0) or (min(st, bt) > 0 and max(st, bt) / min(st, bt) <= 2)
        good += g_ok
        timeouts_ok += t_ok
        mark = ("goodput" if g_ok else "") + (" timeouts" if t_ok else "")
        print(
            f"| {c.servers} | {c.rto_min} | {c.tcp} | {'on' if c.sack else 'off'} | {c.buffer} "
            f"| {_spread(sim_g, 1)} | {_spread(bed_g, 1)} | {ratio:.2f} "
            f"| {_spread(sim_t, 0)} | {_spread(bed_t, 0)} | {mark.strip() or '—'} "
            f"| {_spread(turnaround, 0) if turnaround else '—'} |",
            flush=True,
        )
    n = len(CONFIGS)
    print(f"\ngoodput within 15 %: {good} of {n}; timeouts within a factor of 2: {timeouts_ok} of {n}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
