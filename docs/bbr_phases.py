"""One BBR flow phase by phase: the kernel's sampled trace against the simulator's, for docs/validation/bbr.md.

The kernel side is one server on the testbed sending one long answer with the kernel's BBR, its
connection sampled every :data:`SAMPLE_EVERY` (``incast testbed --json --sample-every``): the mode
comes from the gains of ``TCP_CC_INFO`` (``crates/incast-bench/src/bbr_info.rs``). The simulator side
is the same scenario in the simulator with its BBR trace (``trace.bbr``, the same first ten
columns, a row at every ACK) and the path's round trip set to the smallest min_rtt of the kernel's
trace (the testbed cannot apply ``link.rtt``: its RTT is what the veths give). :func:`phases`
reads either trace the same way: when STARTUP ends (in time, and on the kernel's side in rounds
counted from the delivered and unacknowledged packets as ``bbr_update_bw`` counts them, a round
ending when the packets in flight at its start are delivered; the simulator's trace has no such
columns), how long DRAIN lasts, the PROBE_BW cycle (the time between two phases at gain 1.25, and
its length in minimum RTTs), every PROBE_RTT (its start and length), and the bandwidth and
minimum-RTT estimates in PROBE_BW (medians).
"""

from __future__ import annotations

import json
import math
import statistics
import subprocess
from typing import Any

#: The one flow: a server sending 512 MiB, long enough for two PROBE_RTTs 10 s apart at 200 Mbps.
ARGS = ["--link", "200Mbps", "--servers", "1", "--sru", "512MiB", "--blocks", "1", "--buffer", "256KiB"]
ARGS += ["--tcp", "bbr", "--rto-min", "200ms"]
#: How often the kernel's state is sampled: well under one round at this RTT would be per ACK,
#: which a sampler cannot do; 100 µs is what one thread keeps up on a loaded 2-core machine.
SAMPLE_EVERY = "100us"
#: Estimates agree within this fraction, the end of STARTUP within this many rounds.
ESTIMATE_TOLERANCE = 0.05
ROUND_TOLERANCE = 1


def _col(trace: dict[str, Any], name: str) -> int:
    return list(trace["columns"]).index(name)


def rounds(rows: list[list[Any]], trace: dict[str, Any]) -> list[int | None]:
    """Each row's round: a round ends once the packets in flight when it started have been delivered.

    None for every row of a trace without the delivered and unacknowledged packets.
    """
    if "delivered_pkts" not in trace["columns"]:
        return [None] * len(rows)
    d, u = _col(trace, "delivered_pkts"), _col(trace, "unacked_pkts")
    out: list[int | None] = []
    n, mark = 0, None
    for row in rows:
        delivered, unacked = row[d] or 0, row[u] or 0
        if mark is None:
            mark = delivered + unacked
        elif delivered >= mark:
            n += 1
            mark = delivered + unacked
        out.append(n)
    return out


def segments(rows: list[list[Any]], trace: dict[str, Any]) -> list[dict[str, Any]]:
    """Runs of one mode: mode, start and end time, first round, rows."""
    t, m = _col(trace, "time_s"), _col(trace, "mode")
    r = rounds(rows, trace)
    out: list[dict[str, Any]] = []
    for row, k in zip(rows, r, strict=True):
        if out and out[-1]["mode"] == row[m]:
            out[-1]["end_s"] = row[t]
            out[-1]["rows"] += 1
        else:
            out.append({"mode": row[m], "start_s": row[t], "end_s": row[t], "round": k, "rows": 1})
    return out


def phases(trace: dict[str, Any], flow: int = 0) -> dict[str, Any]:
    """What one flow's trace shows of BBR's modes and estimates (the module docstring)."""
    f, t, g = _col(trace, "flow"), _col(trace, "time_s"), _col(trace, "pacing_gain")
    bw, rtt, m = _col(trace, "bw_bps"), _col(trace, "min_rtt_s"), _col(trace, "mode")
    rows = [row for row in trace["rows"] if row[f] == flow and row[m] is not None and row[t] >= 0]
    srtt = _col(trace, "srtt_s") if "srtt_s" in trace["columns"] else None
    segs = segments(rows, trace)
    first_other = next((s for s in segs if s["mode"] != "startup"), None)
    drain = next((s for s in segs if s["mode"] == "drain"), None)
    probe_rtt = [s for s in segs if s["mode"] == "probe_rtt"]
    cruise = [row for row in rows if row[m] == "probe_bw"]
    up = [row[t] for i, row in enumerate(cruise) if row[g] == 1.25 and (i == 0 or cruise[i - 1][g] != 1.25)]
    cycles = [b - a for a, b in zip(up, up[1:], strict=False)]
    bw_est = statistics.median(row[bw] for row in cruise) if cruise else None
    rtt_est = statistics.median(row[rtt] for row in cruise if row[rtt] is not None) if cruise else None
    cycle = statistics.median(cycles) if cycles else None
    end = first_other["start_s"] if first_other else None
    at_end = next((row for row in rows if row[t] >= end), None) if end is not None else None
    return {
        "rows": len(rows),
        "startup_end_s": end,
        "startup_end_srtt_s": at_end[srtt] if at_end is not None and srtt is not None else None,
        "startup_end_round": first_other["round"] if first_other else None,
        "drain_s": drain["end_s"] - drain["start_s"] if drain else None,
        "drain_seen": drain is not None,
        "probe_bw_cycle_s": cycle,
        "probe_bw_cycle_min_rtts": cycle / rtt_est if cycle and rtt_est else None,
        "probe_bw_up_phases": len(up),
        "probe_rtt_starts_s": [s["start_s"] for s in probe_rtt],
        "probe_rtt_lengths_s": [s["end_s"] - s["start_s"] for s in probe_rtt],
        "bw_bps": bw_est,
        "min_rtt_s": rtt_est,
    }


def path_rtt(trace: dict[str, Any]) -> float:
    """The path's round trip as the kernel saw it: the smallest min_rtt of its trace."""
    r = _col(trace, "min_rtt_s")
    return float(min(row[r] for row in trace["rows"] if row[r] is not None))


def simulator_trace(rtt_s: float) -> dict[str, Any]:
    """The same flow in the simulator, as ``incast validate`` runs it beside the testbed, with ``trace.bbr``.

    The path's round trip is ``rtt_s`` (``link.rtt``), the one the kernel measured.
    """
    from incast.cli.testbed import scenarios
    from incast.reference.testbed import Testbed
    from incast.result import run as simulate

    names = dict(zip(ARGS[::2], ARGS[1::2], strict=True))
    named = {k.removeprefix("--").replace("-", "_"): v for k, v in names.items() if k != "--servers"}
    (scenario,) = scenarios(None, names["--servers"], named, [f"link.rtt={rtt_s * 1e6:.0f}us"], "linux")
    bed = Testbed()
    sc, _ = bed.prepare(scenario)
    r = simulate(sc.with_overrides(bed.simulator_overrides(sc) | {"trace.bbr": True}))
    if r.traces.bbr is None:
        raise SystemExit("error: the simulator recorded no BBR trace with trace.bbr on")
    return _as_trace(r.traces.bbr)


def _as_trace(df: Any) -> dict[str, Any]:
    """A simulator trace's DataFrame as a sampled trace: its columns, and rows with NaN as None."""
    cols = list(df.columns)
    rows = [
        [None if isinstance(v, float) and math.isnan(v) else v for v in row]
        for row in df.astype(object).itertuples(index=False)
    ]
    return {"columns": cols, "rows": [list(row) for row in rows]}


def kernel_trace(raw_path: str | None = None) -> dict[str, Any]:
    """The one flow on the testbed, sampled; the trace of ``incast testbed --json --sample-every``."""
    argv = ["incast", "testbed", "--json", *ARGS, "--sample-every", SAMPLE_EVERY]
    done = subprocess.run(argv, check=True, capture_output=True, text=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if raw_path:
        with open(raw_path, "w") as f:
            json.dump(result, f)
    trace: dict[str, Any] = result["trace"]
    return trace


#: The incast case the sampled traces are compared on: four servers into a 256 KiB port.
DIAG_ARGS = ["--link", "200Mbps", "--servers", "4", "--sru", "256KiB", "--blocks", "40", "--buffer", "256KiB"]
DIAG_ARGS += ["--tcp", "bbr", "--rto-min", "5ms"]
DIAG_SAMPLE_EVERY = "1ms"
#: The link rate of both cases, bit/s.
LINK_BPS = 200e6
#: Bytes of a full segment's payload (the linux preset's MSS less the timestamp option).
_MSS = 1448
#: Full frames the incast case's 256 KiB port holds: the MSS, the timestamp option and 54 bytes of headers each.
PORT_FRAMES = 256 * 1024 // (_MSS + 12 + 54)


def target_cwnd(row: dict[str, Any]) -> int:
    """``bbr_set_cwnd``'s target without ACK-aggregation headroom, from one sample's model and rates.

    ``bbr_bdp`` (the gain times bandwidth times min_rtt, rounded up) plus ``bbr_quantization_budget``
    (three of ``bbr_tso_segs_goal``'s quanta, rounded up to even, two more in PROBE_BW's first phase),
    at least ``bbr_cwnd_min_target``.
    """
    bdp = math.ceil(row["bw_bps"] / 8 * row["min_rtt_s"] * row["cwnd_gain"] / _MSS)
    quantum = max(min(int(min(row["pacing_rate_bps"] / 8 / 1024, 65_535 - 1 - 320) // _MSS), 127), 2)
    cwnd = (bdp + 3 * quantum + 1) & ~1
    return max(cwnd + (2 if row["pacing_gain"] == 1.25 else 0), 4)


def bbr_state(trace: dict[str, Any], flows: int) -> dict[str, Any]:
    """One side's BBR in PROBE_BW under incast: its estimates against the link, its window against the target.

    The smoothed RTT where the trace has it (the kernel's sampled ``srtt_s``).
    """
    cols = list(trace["columns"])
    rows = [dict(zip(cols, r, strict=True)) for r in trace["rows"]]
    cruise = [r for r in rows if r["mode"] == "probe_bw" and r["min_rtt_s"] is not None and r["pacing_rate_bps"]]
    bw = [r["bw_bps"] for r in cruise]
    return {
        "samples": len(cruise),
        "bw_mbps": statistics.median(bw) / 1e6,
        "bw_sum_of_flows_mbps": statistics.median(bw) * flows / 1e6,
        "above_link": sum(b > LINK_BPS for b in bw) / len(bw),
        "min_rtt_us": statistics.median(r["min_rtt_s"] for r in cruise) * 1e6,
        "srtt_ms": statistics.median(r["srtt_s"] for r in cruise) * 1e3 if "srtt_s" in cols else None,
        "cwnd_pkts": statistics.median(r["cwnd_pkts"] for r in cruise),
        "cwnd_over_target_pkts": statistics.median(r["cwnd_pkts"] - target_cwnd(r) for r in cruise),
    }


def simulator_state() -> dict[str, Any]:
    """The simulator's BBR in the same case, from its BBR trace (``trace.bbr``) read as the kernel's is."""
    from incast.cli.testbed import scenarios
    from incast.reference.testbed import Testbed
    from incast.result import run as simulate

    names = dict(zip(DIAG_ARGS[::2], DIAG_ARGS[1::2], strict=True))
    named = {k.removeprefix("--").replace("-", "_"): v for k, v in names.items() if k != "--servers"}
    (scenario,) = scenarios(None, names["--servers"], named, [], "linux")
    bed = Testbed()
    s, _ = bed.prepare(scenario)
    r = simulate(s.with_overrides(bed.simulator_overrides(s) | {"trace.bbr": True, "trace.flows": True}))
    if r.traces.bbr is None or r.traces.flows is None:
        raise SystemExit("error: the simulator recorded no BBR or flow trace with trace.bbr and trace.flows on")
    state = bbr_state(_as_trace(r.traces.bbr), int(names["--servers"]))
    state["srtt_ms"] = float(r.traces.flows["srtt_us"].median()) / 1e3
    return state | {"goodput_mbps": r.goodput_mbps, "retransmitted_packets": r.retransmitted_packets}


def diagnose() -> dict[str, Any]:
    """Both sides of the incast case: the kernel's sampled trace, the simulator's flow trace."""
    argv = ["incast", "testbed", "--json", *DIAG_ARGS, "--sample-every", DIAG_SAMPLE_EVERY]
    done = subprocess.run(argv, check=True, capture_output=True, text=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    kernel = bbr_state(result["trace"], int(DIAG_ARGS[DIAG_ARGS.index("--servers") + 1]))
    kernel |= {"goodput_mbps": result["goodput_mbps"], "retransmitted_packets": result["retransmitted_packets"]}
    return {"args": DIAG_ARGS, "sample_every": DIAG_SAMPLE_EVERY, "kernel": kernel, "simulator": simulator_state()}


def simulator_side(flow: dict[str, Any]) -> dict[str, Any]:
    """The simulator's side of a saved flow part: the one flow (on the saved ``link_rtt_s``) and the incast case."""
    return {"flow": phases(simulator_trace(flow["link_rtt_s"])), "incast": simulator_state()}


def measure() -> dict[str, Any]:
    """The kernel's phases, and the simulator's when it has a trace."""
    import os
    import time

    load = os.getloadavg()[0]
    started = time.strftime("%Y-%m-%d %H:%M UTC")
    trace = kernel_trace()
    kernel = phases(trace)
    rtt = path_rtt(trace)
    return {
        "args": ARGS,
        "sample_every": SAMPLE_EVERY,
        "started": started,
        "load": load,
        "kernel": kernel,
        "link_rtt_s": rtt,
        "simulator": phases(simulator_trace(rtt)),
        "incast": diagnose(),
    }


def _fmt(value: Any, unit: str = "", scale: float = 1.0, digits: int = 3) -> str:
    if value is None:
        return "—"
    return f"{value * scale:.{digits}f}{unit}"


def render(flow: dict[str, Any]) -> str:
    """The page's section on the one flow."""
    k, s = flow["kernel"], flow["simulator"]
    cmd = f"incast testbed --json {' '.join(flow['args'])} --sample-every {flow['sample_every']}"
    rows = [
        ("STARTUP ends (s)", "startup_end_s", 1.0, 4),
        ("STARTUP ends (round)", "startup_end_round", 1.0, 0),
        ("smoothed RTT as STARTUP ends (ms)", "startup_end_srtt_s", 1e3, 3),
        ("DRAIN lasts (ms)", "drain_s", 1e3, 2),
        ("PROBE_BW cycle (ms)", "probe_bw_cycle_s", 1e3, 2),
        ("PROBE_BW cycle (min RTTs)", "probe_bw_cycle_min_rtts", 1.0, 1),
        ("bandwidth estimate in PROBE_BW (Mbit/s)", "bw_bps", 1e-6, 1),
        ("min_rtt estimate in PROBE_BW (µs)", "min_rtt_s", 1e6, 0),
    ]
    lines = [
        "## One flow, phase by phase\n",
        f"Run {flow['started']}, 1-minute load average {flow['load']:.2f} before it: `{cmd}` (one server sending "
        f"512 MiB; its connection's `TCP_INFO` and `TCP_CC_INFO` sampled every {flow['sample_every']}). The mode "
        "is the one `bbr_update_gains` sets the sampled pair of gains in: pacing and window gain 2.885 is "
        "STARTUP (and both 0, before the first ACK, is `bbr_init`'s STARTUP), pacing gain 0.344 with window gain "
        "2.885 is DRAIN, window gain 2 is PROBE_BW whatever its phase's pacing gain (1.25, 0.75, 1), both 1 is "
        "PROBE_RTT. Rounds are counted from the sampled `tcpi_delivered` and `tcpi_unacked`: a round ends once "
        "the packets in flight at its start are delivered, as `bbr_update_bw` ends one at the ACK of the first "
        "packet sent after it began; a sample every 100 µs can miss a round shorter than that, and a PROBE_BW "
        "phase too (a phase ends after one min_rtt, here a few microseconds, at the next ACK), so the cycle is "
        "the median time between two phases at gain 1.25 that a sample caught: at most the kernel's cycle, "
        "often several of them.\n",
        "| | kernel | simulator |",
        "|---|---:|---:|",
    ]
    for label, key, scale, digits in rows:
        lines.append(f"| {label} | {_fmt(k[key], '', scale, digits)} | {_fmt(s[key], '', scale, digits)} |")
    for name, side in (("Kernel", k), ("Simulator", s)):
        starts = ", ".join(f"{t:.2f}" for t in side["probe_rtt_starts_s"]) or "none"
        lengths = ", ".join(f"{t * 1e3:.0f}" for t in side["probe_rtt_lengths_s"]) or "—"
        drain = "seen" if side["drain_seen"] else "not seen (shorter than a sample, or none)"
        ups = side["probe_bw_up_phases"]
        lines.append(
            f"\n{name}: PROBE_RTT starts at {starts} s, lasting {lengths} ms; DRAIN {drain}; "
            f"{ups} PROBE_BW phases at gain 1.25 over {side['rows']} samples."
        )
    # One round at the end of STARTUP is the kernel's smoothed RTT there.
    one_round = k["startup_end_srtt_s"]
    ok_round = (
        None not in (k["startup_end_s"], s["startup_end_s"], one_round)
        and abs(k["startup_end_s"] - s["startup_end_s"]) <= ROUND_TOLERANCE * one_round
    )
    ok_bw = abs(s["bw_bps"] - k["bw_bps"]) <= ESTIMATE_TOLERANCE * k["bw_bps"]
    ok_rtt = abs(s["min_rtt_s"] - k["min_rtt_s"]) <= ESTIMATE_TOLERANCE * k["min_rtt_s"]
    yes = {True: "yes", False: "no"}
    lines.append(
        f"\nThe simulator ran with `link.rtt` = {flow['link_rtt_s'] * 1e6:.0f} µs, the smallest min_rtt the "
        "kernel's trace holds (the path's round trip on the testbed, which cannot apply `link.rtt`). STARTUP "
        "ends within one round (the kernel's smoothed RTT then, "
        f"{_fmt(one_round, ' ms', 1e3, 2)}) of the kernel's: {yes[ok_round]}; bandwidth estimate within 5 %: "
        f"{yes[ok_bw]}; min_rtt estimate within 5 %: {yes[ok_rtt]}. Both sides' ports are token buckets (next "
        "section): the testbed's `tbf`, and the simulator's `link.token_bucket` as deep, which let an unqueued "
        "frame through with no serialization time and frames back to back after an idle moment."
    )
    if "incast" in flow:
        lines.append(render_incast(flow["incast"]))
    return "\n".join(lines) + "\n"


def render_incast(d: dict[str, Any]) -> str:
    """The section on why the kernel retransmits more under incast, from both BBR traces."""
    k, s = d["kernel"], d["simulator"]
    cmd = f"incast testbed --json {' '.join(d['args'])} --sample-every {d['sample_every']}"
    return f"""
## Where they differ: four servers into a 256 KiB port

`{cmd}` against the simulator's BBR trace of the same scenario (`trace.bbr`, and `trace.flows` for
its smoothed RTT), both read the same way over their samples in PROBE_BW ({k["samples"]} on the
kernel's side, {s["samples"]} on the simulator's). The kernel delivered {k["goodput_mbps"]:.1f} Mbit/s
with {k["retransmitted_packets"]} packets retransmitted, the simulator {s["goodput_mbps"]:.1f} Mbit/s with
{s["retransmitted_packets"]}.

| PROBE_BW, medians | kernel | simulator |
|---|---:|---:|
| a flow's bandwidth estimate (Mbit/s) | {k["bw_mbps"]:.0f} | {s["bw_mbps"]:.0f} |
| the four flows' estimates together (Mbit/s) | {k["bw_sum_of_flows_mbps"]:.0f} | {s["bw_sum_of_flows_mbps"]:.0f} |
| samples above the 200 Mbit/s link | {k["above_link"]:.0%} | {s["above_link"]:.0%} |
| min_rtt (µs) | {k["min_rtt_us"]:.0f} | {s["min_rtt_us"]:.0f} |
| smoothed RTT (ms) | {k["srtt_ms"]:.2f} | {s["srtt_ms"]:.2f} |
| window (packets) | {k["cwnd_pkts"]:.0f} | {s["cwnd_pkts"]:.0f} |
| window above `bbr_bdp` + `bbr_quantization_budget` (packets) | {k["cwnd_over_target_pkts"]:.0f} | \
{s["cwnd_over_target_pkts"]:.0f} |

The window above the target computed from the sampled estimates is the headroom
`bbr_update_ack_aggregation` adds (`bbr_ack_aggregation_cwnd`). Four windows of {k["cwnd_pkts"]:.0f}
packets are more than the port holds (256 KiB: {PORT_FRAMES} full frames of {_MSS + 12 + 54} bytes as the
`tbf` counts them), so the kernel's port overflows.

**The mechanism: the testbed's port is a token bucket.** A `tbf` sends a frame the moment its bucket
holds the frame's tokens, at the veth's speed, and its bucket is one frame and 100 µs of line deep
(`Shaping.burst` in `incast.testbed.netns`): an unqueued frame crosses it with no serialization
time, and after an idle moment two or three frames leave back to back. So the kernel's min_rtt is the
veths' few microseconds, and its delivery-rate samples over those back-to-back frames exceed the link,
which BBR's max filter keeps for ten rounds: estimates above the link make a larger ACK-aggregation
headroom and pacing rate, and so larger windows. Beside the testbed the simulator's ports are token
buckets as deep (`link.token_bucket`, `tbf_dequeue`'s rule, with the testbed's depth), so its
estimates see the same bursts; its min_rtt ({s["min_rtt_us"]:.0f} µs) is then the path's round trip, the
scenario's `link.rtt`, which the simulator charges in its hosts and the testbed, with no netem, cannot
apply. No BBR constant is tuned for either.
"""
