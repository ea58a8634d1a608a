#!/usr/bin/env python3
"""The engine's speed as a user measures it, and beside htsim where its driver is built.

    python3 bench/speed.py [--servers 64] [--blocks 200] [--repeat 5]
                           [--callgrind-blocks 10] [--htsim PATH]
                           [--scale 2048] [--json]

Builds the engine's benchmark (``cargo bench -p incast-sim --bench engine``,
release profile) and runs it on the scenario of htsim's incast driver
(``../shared/peers/htsim/``): N senders, 1 Gbps, 256 KiB per sender per block,
a 32 KiB switch port, RTO_min 200 us, delayed ACK off. It prints data packets
and events per wall-clock second (the median of ``--repeat`` runs), the peak
resident memory, and, when valgrind is installed, the instructions per
simulated data packet of a shorter run counted by callgrind (the steadier
figure on a shared machine), and the same count with BBR (``tcp.cc = "bbr"``)
beside it, with the ratio of the two. Given ``--htsim`` (the driver binary its
``build_run.sh`` builds), the two run alternately ``--repeat`` times each on
the same scenario, and the medians of their own wall times and their ratio
are printed. Given ``--scale N``, the engine also runs N senders (as many
blocks as keep the data packets about equal), alternately with the others,
and the time a data packet takes at each scale is printed with their ratio:
the ratio of the medians, and the median of the ratios run by run, which
a change in the machine's load between runs moves least. The engine runs
one core; so does htsim.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any, NoReturn

ROOT = Path(__file__).resolve().parent.parent


def bench_binary() -> str:
    """Build the engine's benchmark and return its executable's path."""
    out = subprocess.run(
        ["cargo", "bench", "-q", "-p", "incast-sim", "--bench", "engine", "--no-run", "--message-format=json"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("executable") and msg["target"]["name"] == "engine":
            return str(msg["executable"])
    raise SystemExit("error: cargo built no engine benchmark")


def bench_args(binary: str, servers: int, blocks: int, cc: str = "reno") -> list[str]:
    """The benchmark's command line for one run of the htsim driver's scenario, with congestion control ``cc``."""
    return [
        binary, "--servers", str(servers), "--blocks", str(blocks), "--repeat", "1", "--delayed-ack-off",
        "--cc", cc, "--json",
    ]  # fmt: skip


def engine(binary: str, servers: int, blocks: int) -> dict[str, float]:
    """One run of the benchmark: its JSON line, with the wall time it took."""
    out = subprocess.run(bench_args(binary, servers, blocks), check=True, capture_output=True, text=True).stdout
    d: dict[str, float] = json.loads(out)
    d["wall_s"] = d["data_packets"] / d["median_packets_per_s"]
    return d


def instructions(binary: str, servers: int, blocks: int, cc: str = "reno") -> tuple[int, int] | None:
    """Instructions callgrind counts for a run of ``blocks`` blocks with ``cc``, and its data packets."""
    if shutil.which("valgrind") is None:
        return None
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *bench_args(binary, servers, blocks, cc)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    collected = re.search(r"Collected : (\d+)", done.stderr)
    if collected is None:
        raise SystemExit("error: callgrind printed no instruction count")
    return int(collected.group(1)), int(json.loads(done.stdout)["data_packets"])


def htsim(binary: str, servers: int, blocks: int) -> dict[str, float]:
    """One run of htsim's incast driver on the same scenario: its JSON line."""
    args = [binary, "-n", str(servers), "-rounds", str(blocks)]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
    d: dict[str, float] = json.loads(out)
    return d


class Parser(argparse.ArgumentParser):
    """Bad options end in one line naming them, and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message}\n")


def ns_per_packet(run: dict[str, float]) -> float:
    """Wall-clock nanoseconds a simulated data packet took in one run."""
    return 1e9 / run["median_packets_per_s"]


def main() -> int:
    p = Parser(description=__doc__.split("\n\n")[0])
    p.add_argument("--servers", type=int, default=64)
    p.add_argument("--blocks", type=int, default=200)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--callgrind-blocks", type=int, default=10, help="blocks of the run callgrind counts (0: none)")
    p.add_argument("--htsim", metavar="PATH", help="htsim's incast driver, built by ../shared/peers/htsim/build_run.sh")
    p.add_argument("--scale", type=int, metavar="N", help="also run N senders; print the time a packet takes at each")
    p.add_argument("--json", action="store_true", help="one JSON object instead of the text")
    a = p.parse_args()
    if min(a.servers, a.blocks, a.repeat, 1 if a.scale is None else a.scale) < 1 or a.callgrind_blocks < 0:
        p.error("--servers, --blocks, --repeat and --scale take whole numbers from 1, --callgrind-blocks from 0")
    if a.htsim and not Path(a.htsim).is_file():
        p.error(f"--htsim: {a.htsim} is not a file (build it with ../shared/peers/htsim/build_run.sh)")
    binary = bench_binary()
    scale_blocks = max(1, round(a.blocks * a.servers / a.scale)) if a.scale else 0
    ours, theirs, scaled = [], [], []
    for _ in range(a.repeat):  # alternately, so all see the same machine
        ours.append(engine(binary, a.servers, a.blocks))
        if a.htsim:
            theirs.append(htsim(a.htsim, a.servers, a.blocks))
        if a.scale:
            scaled.append(engine(binary, a.scale, scale_blocks))
    report: dict[str, Any] = {
        "scenario": f"{a.servers} senders, 1Gbps, 256KiB each per block, 32KiB port, RTO_min 200us, "
        f"delayed ACK off, {a.blocks} blocks",
        "data_packets": ours[-1]["data_packets"],
        "events": ours[-1]["events"],
        "packets_per_s": statistics.median(r["median_packets_per_s"] for r in ours),
        "events_per_s": statistics.median(r["median_events_per_s"] for r in ours),
        "wall_s": statistics.median(r["wall_s"] for r in ours),
        "peak_rss_mib": max(r["peak_rss_kib"] for r in ours) / 1024,
    }
    counted = instructions(binary, a.servers, a.callgrind_blocks) if a.callgrind_blocks else None
    if counted is not None:
        report["instructions_per_packet"] = counted[0] / counted[1]
        bbr = instructions(binary, a.servers, a.callgrind_blocks, "bbr")
        if bbr is not None:
            report["bbr_instructions_per_packet"] = bbr[0] / bbr[1]
            report["bbr_to_reno_instructions"] = (
                report["bbr_instructions_per_packet"] / report["instructions_per_packet"]
            )
    if theirs:
        report["htsim_data_packets"] = theirs[-1]["data_packets"]
        report["htsim_events"] = theirs[-1]["events"]
        report["htsim_wall_s"] = statistics.median(r["wall_s"] for r in theirs)
        report["ratio_to_htsim"] = report["wall_s"] / report["htsim_wall_s"]
    if scaled:
        here = statistics.median(ns_per_packet(r) for r in ours)
        there = statistics.median(ns_per_packet(r) for r in scaled)
        report |= {
            "scale_servers": a.scale,
            "scale_blocks": scale_blocks,
            "scale_data_packets": scaled[-1]["data_packets"],
            "ns_per_packet": here,
            "scale_ns_per_packet": there,
            "scale_ratio": there / here,
            "scale_ratio_run_by_run": statistics.median(
                ns_per_packet(s) / ns_per_packet(o) for o, s in zip(ours, scaled, strict=True)
            ),
        }
    if a.json:
        print(json.dumps(report))
        return 0
    print(f"scenario: {report['scenario']}")
    print(f"engine: {report['data_packets']:,.0f} data packets, {report['events']:,.0f} events")
    print(f"  median of {a.repeat}: {report['wall_s']:.3f} s, {report['packets_per_s'] / 1e6:.2f} M packets/s, "
          f"{report['events_per_s'] / 1e6:.2f} M events/s, peak {report['peak_rss_mib']:.1f} MiB")  # fmt: skip
    if "instructions_per_packet" in report:
        print(
            f"  callgrind, {a.callgrind_blocks} blocks: {report['instructions_per_packet']:,.0f} instructions a packet"
        )
    if "bbr_instructions_per_packet" in report:
        print(f"  with BBR: {report['bbr_instructions_per_packet']:,.0f} instructions a packet, "
              f"{report['bbr_to_reno_instructions']:.3f} times Reno's")  # fmt: skip
    if theirs:
        print(f"htsim: {report['htsim_data_packets']:,.0f} data packets, {report['htsim_events']:,.0f} events, "
              f"median of {a.repeat}: {report['htsim_wall_s']:.3f} s")  # fmt: skip
        print(f"engine / htsim wall time: {report['ratio_to_htsim']:.3f}")
    if scaled:
        print(f"{a.scale} senders, {scale_blocks} blocks: {report['scale_data_packets']:,.0f} data packets")
        print(f"  a data packet, median of {a.repeat}: {report['scale_ns_per_packet']:.1f} ns, against "
              f"{report['ns_per_packet']:.1f} ns at {a.servers}: {report['scale_ratio']:.3f} times "
              f"({report['scale_ratio_run_by_run']:.3f}, the median of the ratios run by run)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
