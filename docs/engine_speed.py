"""Writes docs/validation/speed.md: the engine's speed, beside htsim, and what the Python side costs.

Run: ``python docs/engine_speed.py [--htsim PATH] [--repeat 5] [--scale 2048]``, or ``--render`` to
write the page again from the last run's numbers. It runs ``bench/speed.py --json`` (which builds
and runs the engine's benchmark, counts its instructions with callgrind when valgrind is installed,
and runs htsim's incast driver alternately with it when given ``--htsim``), then times the command
line: ``incast run`` on 64 senders with one row per timeout, and ``incast --help``.
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
DEPENDS = ["bench/speed.py", "bench/engine.rs", "Cargo.toml", "crates/incast-sim/src", "python/incast/result.py"]
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
    body = [ABOUT, "## The engine\n", table, "\n## The command line\n", cli]
    command = "python docs/engine_speed.py" + "".join(f" --{k} {v}" for k, v in a.items() if v is not None)
    run.write(PAGE, "Speed", command.replace(f" --htsim {a.get('htsim')}", " --htsim PATH"), "\n".join(body))


def main() -> int:
    """Run the benchmark and the command-line timings (or take the last run's numbers) and write the page."""
    ap = parser(__doc__)
    ap.add_argument("--htsim", metavar="PATH", help="htsim's incast driver, built by its build_run.sh")
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
        return {"args": {"repeat": args.repeat, "scale": args.scale, "htsim": args.htsim}, "bench": bench, "cli": cli}

    return generate(PAGE, __file__, DEPENDS, measure, render)


if __name__ == "__main__":
    sys.exit(main())
