#!/usr/bin/env python3
"""The engine beside htsim's ``htsim_tcp`` on htsim's own fat tree: long TCP flows between distinct hosts.

    python3 bench/fattree_speed.py --htsim PATH [--k 8] [--duration 2ms] [--repeat 3] [--json]
    python3 bench/fattree_speed.py --k 16 --duration 1ms            # the engine alone
    python3 bench/fattree_speed.py --k 16 --websearch 0.5 --duration 2ms --repeat 1   # the scale run
    python3 bench/fattree_speed.py --k 16 --websearch 0.5 --set tcp.rto_min=1ms --duration 20ms --repeat 1

``htsim_tcp`` (Broadcom/csg-htsim, ``sim/datacenter/main_tcp.cpp``) runs a
permutation of unending TCP flows on its ``FatTreeTopology``: 100 Gbps links
(``HOST_NIC``), 1 us per link, 8-packet queues (``memFromPkt(8)``), each flow
on a path picked at random among the equal-cost ones, ACKs for every packet,
a 250 ms minimum RTO. Build it as ``../shared/peers/htsim/build_run.sh``
builds the incast driver (the same commit and patch, in a scratch folder),
then in ``sim/datacenter`` patch ``main_tcp.cpp`` twice more and ``make
htsim_tcp``: a ``-end US`` flag in its argument loop calling
``eventlist.setEndtime(timeFromUs(...))``, so that a run can end before the
hard-coded 4 s; and, after its event loop (which it counts), a line
``BENCH events E acked_bytes B`` with B the sum of every ``TcpSink``'s
``_cumulative_ack`` (each sink pushed onto a vector where it is made), so
that the two simulators' work can be compared.

``htsim_tcp -nodes N -conns N`` runs its full permutation: every one of the
N = k³/4 hosts sends one flow to a host picked at random among those not yet
picked, not itself. (Its ACKs go straight back to the sender: the return
route holds the sender alone, no link and no queue.) The engine runs the same
fabric (``topology.kind = "fat_tree"``, per-flow ECMP), rates, delays,
queues, RTO_min and ACK rule with N unending flows in a seeded random
permutation of all N hosts (``background.tcp_permutation``, no reads), its
ACKs crossing the fabric back. The two run alternately ``--repeat``
times for the same simulated ``--duration``, and the medians of their wall
times and CPU times (the whole process for htsim, the whole ``incast.run``
for the engine, fabric building included) and their ratios are printed (on a
shared machine the CPU times are the steadier), with each one's
goodput (htsim's counts packet headers: 1,500-byte packets), the engine's
events, packets and simulated seconds per CPU second and its peak resident
memory. Both run one core.

``--websearch LOAD`` runs the engine alone on the same fabric with open-loop
traffic in place of the permutation: flows arriving at random between any two
hosts, web-search sizes (DCTCP), offering LOAD of every host link's rate
(``traffic.load``), the engine's default switch buffer and TCP; it prints the
flows that arrived and those unfinished at the end beside the rates.
``--set KEY=VALUE`` (repeated) changes any setting of either run, as ``incast
run --set`` does.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import incast
from incast import Scenario
from incast.cli.options import parse_set
from incast.units import parse_duration


def fabric(k: int, duration: str) -> dict[str, Any]:
    """htsim's k-ary fat tree of 100 Gbps links, 1 us each, with no synchronized reads."""
    return {
        "servers": 1,
        "duration": duration,
        "workload": {"kind": "none"},
        "link": {"rate": "100Gbps", "propagation": "1us", "rtt": "4us"},
        "topology": {"kind": "fat_tree", "k": k},
    }


def scenario(k: int, duration: str) -> Scenario:
    """The engine's run of htsim_tcp's setup on a k-ary fat tree: a permutation of all k³/4 hosts."""
    return Scenario(
        **fabric(k, duration),
        switch={"buffer": "8pkt"},
        background={"tcp_flows": k**3 // 4, "tcp_permutation": True},
        tcp={"rto_min": "250ms", "delayed_ack": "off", "rcv_wnd": "16MiB"},
        stats={"timeouts": False},
    )


def websearch(k: int, duration: str, load: float) -> Scenario:
    """Web-search flows at ``load`` between any two of a k-ary fat tree's hosts, at 100 Gbps."""
    return Scenario(
        **fabric(k, duration),
        traffic={"load": load, "sizes": "websearch"},
        stats={"timeouts": False},
    )


def engine(s: Scenario) -> dict[str, float]:
    """One run of the engine: its wall time and rates."""
    start, cpu = time.perf_counter(), time.process_time()
    r = incast.run(s)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    packets = float(r.packets_sent)
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "events": float(r.events),
        "events_per_s": r.events / cpu,
        "packets": packets,
        "packets_per_s": packets / cpu,
        "sim_s": r.sim_time_s,
        "sim_s_per_s": r.sim_time_s / cpu,
        "sim_s_per_wall_s": r.sim_time_s / wall,
        "open_flows": float(getattr(r, "open_flows", 0)),  # present when traffic is on
        "unfinished_flows": float(getattr(r, "open_flows_unfinished", 0)),
        "packets_in_flight": float(r.packets_in_flight),
        "goodput_gbps": (r.goodput_mbps + r.background_goodput_mbps) / 1e3,
    }


def htsim(binary: str, k: int, duration_us: float) -> dict[str, float]:
    """One run of htsim_tcp's full permutation on its k-ary fat tree: its wall time, events and goodput."""
    hosts = k**3 // 4
    args = [binary, "-nodes", str(hosts), "-conns", str(hosts), "-end", f"{duration_us:g}"]
    # Its permutation (ConnectionMatrix::setPermutation, seeded with the second
    # it starts in) fails its own `src != dest` assertion for some seeds: try
    # again in the next second.
    for _ in range(10):
        with tempfile.TemporaryDirectory() as scratch:  # it writes logout.dat where it runs
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            done = subprocess.run(args, cwd=scratch, capture_output=True, text=True)
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode == 0:
            break
        if "src!=dest" not in done.stderr:
            raise SystemExit(f"error: htsim_tcp failed: {done.stderr.strip()[-300:]}")
        time.sleep(1)
    else:
        raise SystemExit("error: htsim_tcp's permutation failed ten times")
    out = done.stdout
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    found = re.search(r"BENCH events (\d+) acked_bytes (\d+)", out)
    if found is None:
        raise SystemExit("error: htsim_tcp printed no BENCH line (build it with the patch the docstring gives)")
    events, acked = (float(g) for g in found.groups())
    return {"wall_s": wall, "cpu_s": cpu, "events": events, "goodput_gbps": acked * 8 / (duration_us * 1e-6) / 1e9}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--htsim", metavar="PATH", help="htsim_tcp built as the module docstring says")
    p.add_argument("--k", type=int, default=8, help="fat tree k (even): k^3/4 hosts (default 8)")
    p.add_argument("--duration", default="2ms", help="simulated time of each run (default 2ms)")
    p.add_argument("--repeat", type=int, default=3, help="runs of each, alternately (default 3)")
    p.add_argument("--websearch", type=float, metavar="LOAD", help="web-search traffic at LOAD (0-1), the engine alone")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="change a setting (repeatable)")
    p.add_argument("--json", action="store_true", help="print one JSON line")
    a = p.parse_args()
    if a.websearch is not None and not 0 < a.websearch <= 1:
        p.error(f"--websearch: a load above 0 and at most 1, got {a.websearch}")
    if a.websearch is not None and a.htsim:
        p.error("--websearch runs the engine alone: give --htsim without it")
    if a.htsim and not Path(a.htsim).is_file():
        p.error(f"--htsim: {a.htsim} is not a file")
    if a.k < 2 or a.k % 2:
        p.error(f"--k: must be even and at least 2, got {a.k}")
    s = scenario(a.k, a.duration) if a.websearch is None else websearch(a.k, a.duration, a.websearch)
    try:
        s = s.with_overrides([parse_set(item) for item in a.set]) if a.set else s
    except (incast.ScenarioError, ValueError) as e:
        p.error(f"--set: {e}")
    load_before = os.getloadavg()[0]
    duration_us = parse_duration(a.duration) * 1e6
    ours: list[dict[str, float]] = []
    theirs: list[dict[str, float]] = []
    for _ in range(a.repeat):
        ours.append(engine(s))
        if a.htsim:
            theirs.append(htsim(a.htsim, a.k, duration_us))
    median = {key: statistics.median(r[key] for r in ours) for key in ours[0]}
    opened, unfinished = median.pop("open_flows"), median.pop("unfinished_flows")
    flows = a.k**3 // 4 if a.websearch is None else int(opened)
    report: dict[str, Any] = {"k": a.k, "hosts": a.k**3 // 4, "flows": flows, "duration": a.duration}
    report.update(median)
    report["scenario"] = s.describe()
    if a.websearch is not None:
        report["unfinished_flows"] = int(unfinished)
    report["load_average"] = [load_before, os.getloadavg()[0]]
    report["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if theirs:
        for key in theirs[0]:
            report[f"htsim_{key}"] = statistics.median(r[key] for r in theirs)
        for key in ("wall_s", "cpu_s"):
            report[f"ratio_{key}"] = median[key] / report[f"htsim_{key}"]
            report[f"ratios_{key}_run_by_run"] = [o[key] / t[key] for o, t in zip(ours, theirs, strict=True)]
    if a.json:
        print(json.dumps(report))
        return
    print(f"k = {a.k}: {report['hosts']} hosts, {report['flows']} flows, {a.duration} simulated, median of {a.repeat}; "
          f"load average {load_before:.1f} before, {report['load_average'][1]:.1f} after")  # fmt: skip
    print(f"incast: {median['wall_s']:.3f} s wall, {median['cpu_s']:.3f} s CPU, {median['goodput_gbps']:.0f} Gbps "
          f"goodput ({median['events']:,.0f} events, {median['events_per_s']:,.0f}/s; "
          f"{median['packets_per_s']:,.0f} packets/s; {median['sim_s_per_s']:.2e} simulated s per s; "
          f"peak RSS {report['peak_rss_mib']:.0f} MiB); rates per CPU second")  # fmt: skip
    if theirs:
        print(f"htsim_tcp: {report['htsim_wall_s']:.3f} s wall, {report['htsim_cpu_s']:.3f} s CPU, "
              f"{report['htsim_goodput_gbps']:.0f} Gbps acked ({report['htsim_events']:,.0f} events)")  # fmt: skip
        for key in ("wall_s", "cpu_s"):
            runs = ", ".join(f"{r:.2f}" for r in report[f"ratios_{key}_run_by_run"])
            print(f"ratio incast/htsim, {key[:-2]} time: {report[f'ratio_{key}']:.2f} (run by run: {runs})")


if __name__ == "__main__":
    main()
