"""Writes docs/validation/speed.md: the engine's speed, beside htsim, and what the Python side costs.

Run: ``python docs/engine_speed.py [--htsim PATH] [--htsim-tcp PATH] [--repeat 5] [--scale 2048]``, or
``--render`` to write the page again from the last run's numbers. It runs ``bench/speed.py --json``
(which builds and runs the engine's benchmark, counts its instructions with callgrind when valgrind is
installed, and runs htsim's incast driver alternately with it when given ``--htsim``), then
``bench/fattree_speed.py --json``: with ``--htsim-tcp``, the engine and htsim's ``htsim_tcp`` in turn
on htsim's fat tree at each k of ``FAT_TREES``. Then it times the command line: ``incast run`` on
64 senders with one row per timeout, and ``incast --help``. Open-loop traffic on large fat trees is
``docs/fabric_scale.py``'s page.
"""

from __future__ import annotations

import json
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

from pages import ROOT, Run, generate, parser, render_again

PAGE = "speed.md"
#: Speed depends on the engine's code itself, not only on its results.
DEPENDS = ["bench/speed.py", "bench/engine.rs", "bench/fattree_speed.py", "Cargo.toml", "crates/incast-sim/src"]
DEPENDS += ["python/incast/result.py"]
#: (k, simulated time, runs of each) beside htsim_tcp.
FAT_TREES = [(4, "5ms", 3), (8, "5ms", 3), (16, "1ms", 3)]
CLI_RUN = ["incast", "run", "--servers", "64", "--sru", "256KiB", "--buffer", "32KiB", "--rto-min", "200us"]
CLI_RUN += ["--delayed-ack", "off", "--blocks", "200", "--json"]

ABOUT = """\
**The benchmark.** `cargo bench -p incast-sim --bench engine` (`bench/engine.rs`) runs a 64-server
incast on one core in the release profile and prints simulated data packets and events per
wall-clock second and the process's peak resident memory; `--scenario FILE` runs any scenario (the
JSON `Scenario.to_json()` writes). `bench/speed.py` runs it on the scenario of htsim's incast driver
(N senders, 1 Gbps, 256 KiB per sender per block, a 32 KiB port, RTO_min 200 µs, delayed ACK off),
takes the median of `--repeat` runs, and counts the instructions per simulated data packet of a
shorter run with callgrind, the steadier figure on a shared machine. Given `--htsim PATH` (the driver
`../shared/peers/htsim/build_run.sh` builds from Broadcom's csg-htsim) the two run alternately on the
same scenario, so both see the same machine, and the ratio of their median wall times is printed.
Given `--scale N`, the engine also runs N senders (as many blocks as keep the data packets about
equal) alternately with the others, and the time a data packet takes at each scale is compared: the
ratio of the medians, and the median of the ratios run by run, which a change of the machine's load
between runs moves least.

**Three builds.** The engine is built three times over its per-packet path (`tcp::gated`). A
scenario that turns none of the optional mechanisms on (SACK, RACK-TLP, PRR, GIP, timestamps, F-RTO
and Eifel, cwnd validation, DCTCP, Rude TCP, Linux's receive window, arrival orders other than the
queueing order, PAUSE and traffic classes, ECN marking, rude policing, UDP, traces, capture,
sender-side loss, a NIC queue limit, ICTCP, pacing and rate samples) runs on the build without them,
which tests none of them per packet; one that paces (BBR, or `tcp.pacing`) and turns nothing else on
runs on a build with the pacer and the delivery-rate samples alone. The results are the same on every
build, and a build refuses to start if a part of the run says it runs a mechanism the build lacks.
The benchmark turns none on with Reno, and only pacing and rate samples with BBR.

**Memory** does not grow with simulated time: the benchmark keeps timeout counters, not one row per
timeout, and the event queue's second timer ring keeps only the room of its largest burst.

**On a fat tree beside htsim.** `bench/fattree_speed.py` runs htsim's `htsim_tcp` (Broadcom's
csg-htsim `sim/datacenter/main_tcp.cpp`, built as the script's docstring says: a `-end` flag and a
closing count of events and acknowledged bytes) and the engine alternately on htsim's k-ary fat
tree: 100 Gbps links of 1 µs, 8-packet queues, RTO_min 250 ms, an ACK for every packet, and its
full permutation (`-conns` equal to `-nodes`: every one of the k³/4 hosts sends one unending flow
to a distinct host), each flow on an equal-cost path picked at random (the engine: per-flow ECMP,
`background.tcp_permutation`). htsim's ACKs go straight back to their sender (its return route holds
the sender alone, no link or queue), the engine's cross the fabric, so its flows see twice the RTT
and deliver less: the goodputs are shown beside the times. Times are of the whole process for
htsim and of the whole `incast.run` for the engine, fabric building included; the CPU time is the
steadier figure on a shared machine, and each ratio is of the medians.

**Scale.** The engine alone on k = 16 and k = 8 fat trees with open-loop web-search traffic at
half load, its rates and its memory as the simulated time grows: [scale.md](scale.md).

**The command line.** What `incast run` costs beyond the engine is what crosses into Python: result
tables cross as typed columns and become DataFrames only when read, and a sweep point keeps no
timeout rows at all (the engine tallies the per-block figures the metrics need). `incast --help`
imports nothing heavy: every verb imports what it runs with when it runs.
"""


def cli_cost() -> dict[str, float]:
    """CPU seconds and peak memory of one ``incast run`` with a row per timeout; ``incast --help``'s time.

    The peak is the largest of this process's children so far, so this runs before any other child.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(CLI_RUN, check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    helps = []
    for _ in range(5):
        t = time.perf_counter()
        subprocess.run(["incast", "--help"], check=True, capture_output=True)
        helps.append(time.perf_counter() - t)
    return {
        "run_cpu_s": cpu,
        "run_peak_mib": after.ru_maxrss / 1024,
        "run_timeouts": json.loads(out)["timeouts"],
        "help_s": statistics.median(helps),
    }


def render(run: Run, results: dict[str, Any]) -> None:
    """Write the page from a run's numbers."""
    b, c, a = results["bench"], results["cli"], results["args"]
    rows = [
        ("scenario", b["scenario"]),
        ("data packets, events", f"{b['data_packets']:,.0f}, {b['events']:,.0f}"),
        (f"wall time, median of {a['repeat']}", f"{b['wall_s']:.3f} s"),
        ("data packets per second", f"{b['packets_per_s'] / 1e6:.2f} M"),
        ("events per second", f"{b['events_per_s'] / 1e6:.2f} M"),
        ("peak resident memory", f"{b['peak_rss_mib']:.1f} MiB"),
    ]
    if "instructions_per_packet" in b:
        rows.append(("instructions per data packet (callgrind, 10 blocks)", f"{b['instructions_per_packet']:,.0f}"))
    if "htsim_wall_s" in b:
        rows.append((f"htsim, same scenario, median of {a['repeat']}", f"{b['htsim_wall_s']:.3f} s"))
        rows.append(("engine / htsim wall time", f"{b['ratio_to_htsim']:.3f}"))
    else:
        rows.append(("htsim", "not run (no `--htsim` driver given)"))
    if "scale_servers" in b:
        rows.append(
            (
                f"a data packet at {b['scale_servers']:,} senders ({b['scale_blocks']} blocks) against 64",
                f"{b['scale_ns_per_packet']:.1f} ns against {b['ns_per_packet']:.1f} ns: {b['scale_ratio']:.3f} "
                f"times ({b['scale_ratio_run_by_run']:.3f} run by run)",
            )
        )
    table = "\n".join(["| figure | value |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows)])
    cli = (
        f"`{' '.join(CLI_RUN)}` ({c['run_timeouts']:,} timeouts, each a row of the timeout table) took "
        f"{c['run_cpu_s']:.1f} CPU-s with a peak of {c['run_peak_mib']:.0f} MiB; `incast --help` took "
        f"{c['help_s']:.2f} s (median of 5)."
    )
    body = [ABOUT, "## The engine\n", table]
    body += ["\n## On a fat tree beside htsim\n", fat_tree_table(results.get("fat_trees", []))]
    body += ["\n## The command line\n", cli]
    command = "python docs/engine_speed.py" + "".join(
        f" --{k.replace('_', '-')} {v}" for k, v in a.items() if v is not None
    )
    command = command.replace(f" --htsim {a.get('htsim')}", " --htsim PATH")
    command = command.replace(f" --htsim-tcp {a.get('htsim_tcp')}", " --htsim-tcp PATH")
    run.write(PAGE, "Speed", command, "\n".join(body))


def fat_tree_table(runs: list[dict[str, Any]]) -> str:
    """The engine beside htsim_tcp, a row per k."""
    if not runs:
        return "Not run (no `--htsim-tcp` given)."
    head = "| k | hosts = flows | simulated | runs | incast wall, CPU | htsim wall, CPU | ratio wall, CPU | "
    head += "goodput incast, htsim | load average before, after |"
    rows = [head, "|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        rows.append(
            f"| {r['k']} | {r['flows']:,} | {r['duration']} | {r['repeat']} | {r['wall_s']:.3f} s, {r['cpu_s']:.3f} s "
            f"| {r['htsim_wall_s']:.3f} s, {r['htsim_cpu_s']:.3f} s "
            f"| **{r['ratio_wall_s']:.2f}, {r['ratio_cpu_s']:.2f}** "
            f"| {r['goodput_gbps']:,.0f}, {r['htsim_goodput_gbps']:,.0f} Gbps "
            f"| {r['load_average'][0]:.1f}, {r['load_average'][1]:.1f} |"
        )
    return "\n".join(rows)


def fat_tree_runs(htsim_tcp: str | None) -> dict[str, Any]:
    """bench/fattree_speed.py beside htsim_tcp at each k (with its path)."""
    script = [sys.executable, str(ROOT / "bench" / "fattree_speed.py"), "--json"]

    def one(*args: str) -> dict[str, Any]:
        out = subprocess.run([*script, *args], check=True, capture_output=True, text=True).stdout
        report: dict[str, Any] = json.loads(out)
        return report

    fat_trees = []
    for k, duration, repeat in FAT_TREES if htsim_tcp else []:
        r = one("--htsim", str(htsim_tcp), "--k", str(k), "--duration", duration, "--repeat", str(repeat))
        fat_trees.append(r | {"repeat": repeat})
    return {"fat_trees": fat_trees}


def main() -> int:
    """Run the benchmark and the command-line timings (or take the last run's numbers) and write the page."""
    ap = parser(__doc__)
    ap.add_argument("--htsim", metavar="PATH", help="htsim's incast driver, built by its build_run.sh")
    ap.add_argument("--htsim-tcp", metavar="PATH", help="htsim's htsim_tcp, built as bench/fattree_speed.py says")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--scale", type=int, default=2048)
    args = ap.parse_args()
    if args.render:
        return render_again(PAGE, render)

    def measure() -> dict[str, Any]:
        cli = cli_cost()  # first: the children's peak memory is then this run's alone
        argv = [sys.executable, str(ROOT / "bench" / "speed.py"), "--json", "--repeat", str(args.repeat)]
        argv += ["--scale", str(args.scale), *(["--htsim", args.htsim] if args.htsim else [])]
        bench = json.loads(subprocess.run(argv, check=True, capture_output=True, text=True).stdout)
        given = {"repeat": args.repeat, "scale": args.scale, "htsim": args.htsim, "htsim_tcp": args.htsim_tcp}
        return {"args": given, "bench": bench, "cli": cli} | fat_tree_runs(args.htsim_tcp)

    return generate(PAGE, __file__, DEPENDS, measure, render)


if __name__ == "__main__":
    sys.exit(main())
