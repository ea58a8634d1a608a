"""Writes docs/validation/scale.md: open-loop traffic on large fat trees, its rates and whether its memory levels off.

Run: ``python docs/fabric_scale.py [--jobs 2]``, or ``--render`` to write the page again from the last
run's numbers. It runs ``bench/fattree_speed.py --websearch LOAD --set tcp.rto_min=1ms --json`` for each
(k, simulated time) of ``RUNS``, each in a process of its own so that its peak memory is its own,
``--jobs`` of them at a time, the longest first.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pages import ROOT, Run, generate, parser, render_again

from incast.units import parse_duration

PAGE = "scale.md"
DEPENDS = ["bench/fattree_speed.py", "Cargo.toml", "crates/incast-sim/src", "python/incast/result.py"]
#: The load of the web-search traffic, and the RTO_min it runs with.
LOAD, RTO_MIN = 0.5, "1ms"
#: (k, simulated times): one process each.
RUNS = [(16, ["5ms", "10ms", "20ms", "40ms"]), (8, ["20ms", "40ms", "80ms"])]

ABOUT = f"""\
**The runs.** `bench/fattree_speed.py --websearch {LOAD}` runs the engine alone on a k-ary fat tree of
100 Gbps links (k³/4 hosts: 1,024 at k = 16) with open-loop web-search flows (DCTCP's sizes, up to
30 MB) between any two hosts, offering half of every host link's rate (`traffic.load = {LOAD}`), with
the engine's default switch buffer (32 KiB a port) and TCP, but for an RTO_min of {RTO_MIN}. Each
column is a run of its own from time 0. Packets are those handed to a host NIC (data and ACKs,
`packets_sent`); the peak resident memory is that of the Python process running it, the interpreter
included.

**Why RTO_min {RTO_MIN}.** Memory follows the connections still open: each holds a slot, its
segments in flight and its reassembly state until its flow completes, and the packets in flight
follow them. With the default RTO_min of 200 ms a flow whose window was lost stays open for 200 ms,
so the open count cannot level off before about 200 ms of simulated time, far beyond what these
runs reach. At {RTO_MIN} a flow's stall is short, so the open count can level off within the runs;
the rows of unfinished flows and of packets in flight show how far it does. What grows with simulated
time whatever the traffic is the flow table, one row for every flow that arrived (its start, size,
path and finish), kept by design; the line under each table divides the memory added between its last
two runs by the flows that arrived in between.
"""


def per_s(r: dict[str, Any], key: str) -> str:
    """``r[key]`` per wall-clock second and per CPU second, in millions."""
    return f"{r[key] / r['wall_s'] / 1e6:.2f} M, {r[key] / r['cpu_s'] / 1e6:.2f} M"


def table(runs: list[dict[str, Any]]) -> str:
    """The runs of one fabric, a column per simulated time."""
    figures: list[tuple[str, Callable[[dict[str, Any]], str]]] = [
        ("flows arrived, unfinished at the end", lambda r: f"{r['flows']:,}, {r['unfinished_flows']:,.0f}"),
        ("packets in flight at the end", lambda r: f"{r['packets_in_flight']:,.0f}"),
        ("events", lambda r: f"{r['events'] / 1e6:.2f} M"),
        ("packets sent by hosts (data and ACKs)", lambda r: f"{r['packets'] / 1e6:.2f} M"),
        ("wall time, CPU time", lambda r: f"{r['wall_s']:.1f} s, {r['cpu_s']:.1f} s"),
        ("events per wall-clock second, per CPU second", lambda r: per_s(r, "events")),
        ("packets per wall-clock second, per CPU second", lambda r: per_s(r, "packets")),
        ("simulated seconds per wall-clock second", lambda r: f"{r['sim_s_per_wall_s']:.2e}"),
        ("simulated seconds per CPU second", lambda r: f"{r['sim_s_per_s']:.2e}"),
        ("peak resident memory", lambda r: f"{r['peak_rss_mib']:.0f} MiB"),
        ("load average before, after", lambda r: f"{r['load_average'][0]:.1f}, {r['load_average'][1]:.1f}"),
    ]
    rows = [f"Scenario: {runs[0]['scenario']}, web-search flows at load {LOAD}.\n"]
    rows += ["| figure | " + " | ".join(r["duration"] for r in runs) + " |", "|---" * (len(runs) + 1) + "|"]
    rows += [f"| {name} | " + " | ".join(show(r) for r in runs) + " |" for name, show in figures]
    a, b = runs[-2], runs[-1]
    per_flow = (b["peak_rss_mib"] - a["peak_rss_mib"]) * 2**20 / (b["flows"] - a["flows"])
    rows.append(
        f"\nMemory added from {a['duration']} to {b['duration']}: "
        f"{b['peak_rss_mib'] - a['peak_rss_mib']:.0f} MiB for {b['flows'] - a['flows']:,} more flows arrived, "
        f"{per_flow:,.0f} bytes a flow; the flows unfinished at the end went from "
        f"{a['unfinished_flows']:,.0f} to {b['unfinished_flows']:,.0f}."
    )
    return "\n".join(rows)


def one(k: int, duration: str) -> dict[str, Any]:
    """One run of bench/fattree_speed.py, in a process of its own."""
    argv = [sys.executable, str(ROOT / "bench" / "fattree_speed.py"), "--json", "--k", str(k)]
    argv += ["--websearch", str(LOAD), "--set", f"tcp.rto_min={RTO_MIN}", "--duration", duration, "--repeat", "1"]
    report: dict[str, Any] = json.loads(subprocess.run(argv, check=True, capture_output=True, text=True).stdout)
    return report


def render(run: Run, results: dict[str, Any]) -> None:
    """Write the page from a run's numbers."""
    body = [ABOUT]
    for k, runs in results["fabrics"]:
        body += [f"\n## k = {k}: {k**3 // 4:,} hosts\n", table(runs)]
    command = f"python docs/fabric_scale.py --jobs {results['jobs']}"
    run.write(PAGE, "Scale: open-loop traffic on a fat tree", command, "\n".join(body))


def main() -> int:
    """Run the fabrics (or take the last run's numbers) and write the page."""
    ap = parser(__doc__)
    ap.add_argument("--jobs", type=int, default=2, help="runs at a time (default 2)")
    args = ap.parse_args()
    if args.render:
        return render_again(PAGE, render)

    def measure() -> dict[str, Any]:
        todo = sorted(((k, d) for k, ds in RUNS for d in ds), key=lambda x: -(x[0] ** 3) * parse_duration(x[1]))
        with ThreadPoolExecutor(args.jobs) as pool:
            done = dict(zip(todo, pool.map(lambda x: one(*x), todo), strict=True))
        return {"jobs": args.jobs, "fabrics": [(k, [done[(k, d)] for d in ds]) for k, ds in RUNS]}

    return generate(PAGE, __file__, DEPENDS, measure, render)


if __name__ == "__main__":
    sys.exit(main())
