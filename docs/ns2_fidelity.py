"""Writes docs/validation/ns2.md: the simulator beside ns-2.35 on the same scenarios.

Run: ``python docs/ns2_fidelity.py [--seeds 40]`` (needs ``ns``, Debian's ``ns2``), or ``--render`` to
write the page again from the numbers of the last run, or ``--verify [--sample N]`` to bring it
current without the full run (``docs/verify.py``): the simulator's side of every line recomputed, and
both sides of N grid lines, a class case and a GIP point per link rate. It runs ``incast validate --against ns2`` on
the grid of NewReno and SACK, RTO_min 200 ms and 1 ms, 32- and 64-packet ports and 2 to 64 servers
(20 blocks, seeds 1 to ``--seeds``), once with equal cables and once with ``link.skew=1ps``; FAST08
Table 3's setting with ``--classes`` (timeouts by class, seeds 1 and 2); and GIP §VII's points
(``docs/ns2_gip.py``). The full grid, 40 seeds, takes hours on two shared cores.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import ns2_gip
import simulator_side
from pages import Run, generate, parser, render_again, settings_table
from verify import Moved, Verification, sample

PAGE = "ns2.md"
DEPENDS = [
    "docs/ns2_gip.py",
    "python/incast/reference/ns2.py",
    "python/incast/reference/ns2.tcl",
    "python/incast/cli/validate.py",
]
SERVERS = [2, 4, 8, 16, 32, 64]
BUFFERS = ["32pkt", "64pkt"]
#: Grid tables: (title, --tcp, RTO_min).
GRID = [
    ("NewReno", "newreno", "200ms"),
    ("NewReno", "newreno", "1ms"),
    ("SACK", "sack", "200ms"),
    ("SACK", "sack", "1ms"),
]
#: FAST08 Table 3's setting: (stack, --tcp, extra settings); seeds 1 and 2.
CLASS_CASES = [
    ("Reno", "reno", ["tcp.recovery=reno"]),
    ("NewReno", "newreno", []),
    ("NewReno, da_thresh 1", "newreno", ["tcp.dupack_threshold=1"]),
]
#: The ``ns2`` preset's settings where ns-2.35's agents differ from the RFCs, and the source of each.
SWITCHES = [
    ('tcp.rto_flavor = "ns2"', "the RTT estimator in ticks of `tcpTick_`"),
    ("tcp.ssthresh_rule", "ssthresh from half the window before inflation, at every loss"),
    ("tcp.recovery_burst", "two new segments per ACK in recovery"),
    ("tcp.recovery_exit", "recovery left at the unrounded half window (`RenoTcpAgent::recv` drops the inflation only)"),
    ("tcp.idle_restart", "the restart to one segment when the timer the last ACK armed expires idle"),
    ('tcp.rto_restart = "fast_retransmit"', "a fast retransmission restarts the timer (`reset_rtx_timer(1,0)`)"),
    ("tcp.limited_transmit_resends", "limited transmit sends `t_seqno_`, which a timeout rewound (`send_one`)"),
    ("tcp.reno_recover_guard", "Reno fast-retransmits again only past `recover_` (`dupack_action`, `bug_fix_`)"),
    ('tcp.partial_ack_window = "ns2"', "`partial_window_deflation_ 1`: a partial ACK deflates `cwnd_` itself"),
    (
        'tcp.sack_recovery = "ns2"',
        "`Sack1`'s `pipe_` (outstanding less three, one less per ACK), every hole resent in order, no rescue, "
        "the scoreboard cleared by a timeout (`tcp-sack1.cc`, `scoreboard-rq.cc`)",
    ),
    ('tcp.rtt_timing = "ns2"', "one segment timed at a time; only its ACK samples the RTT (`TcpAgent::output`)"),
    ("tcp.sack_blocks = 3", "the sinks' `maxSackBlocks_ 3`"),
    ('link.arrival_order = "wire"', "simultaneous arrivals in the order their transmissions started"),
]
CLASSES = ["full_window_loss", "lost_retransmit", "last_packet_loss", "other"]

ABOUT = """\
The papers' simulated figures came from ns-2, so `incast validate --against ns2 [SCENARIO] [options]`
runs the same scenario in ns-2.35 (Debian's `ns2` package; `.ci/run` installs it) and prints both.
The Tcl is generated from the scenario over a packaged template (`python/incast/reference/ns2.tcl`):
a star of one-way `Agent/TCP/Reno`, `Newreno` or `Sack1` agents with `TCPSink` (or `DelAck`) sinks, a
drop-tail port of `Npkt` packets, a handshake before the first block (the agents' SYNs one at a time,
so that none waits in a queue or times out; restart after idle off until each agent's first request;
block 1 on a tick boundary, with `cwnd_`, `ssthresh_` and the back-off as an established connection has
them), the requests as delays, a barrier between blocks, and the
request order and server turnaround drawn with ns-2's own generator; the constant-bit-rate UDP source
(`background.udp_rate`) is a CBR agent of full frames on a host of its own. What ns-2 cannot express
(trees, PAUSE, ECN, Cubic, ...) is refused in one line.

**The wire.** ns-2 has no Ethernet framing, so the harness gives it the engine's wire: packets as
long as the engine's frames with preamble and gap (`packetSize_` 1038, which ns-2's 40 header bytes
make 1078; ACKs of 84 bytes), the link rate itself, and simplex links of the engine's 50 ns cable
toward the switch and the cable plus the receiving host's share of the RTT toward a host. Byte
buffers become packets, and both sides send whole segments (`note:` lines say so). ns-2's request is
a delay, so only its servers can time out: the comparison counts the servers' timeouts and notes the
client's.

**ns-2.35's stack, as switches.** Both sides run the `ns2` preset unless `--preset` says otherwise:
`ns-default.tcl`'s defaults (1000-byte packets, initial window 2, a 20-packet window, limited
transmit, RTO_min 200 ms on a 10 ms `tcpTick_`; `tcp.rto_tick=1us` gives CMU09's fine timers) and the
places where ns-2's agents differ from the RFCs the engine follows by default, each an engine setting:

{switches}

**Ties.** Every cable of the star is as long, so frames of servers that the port's own departures
clock reach the port at the same picosecond, and which of them a full port drops is decided by how
each simulator orders simultaneous events. ns-2 (and ns-3) schedule an arrival when the frame's
transmission starts and run same-time events in the order they were scheduled; the engine's default
(`link.arrival_order = "queued"`) orders them by when they were queued. `wire` takes ns-2's order,
including its preference, among busy links that start together, for the run of back-to-back frames
that began last. `ns2` order also keeps each frame's arrival in a double beside its picosecond time,
summed per hop as `LinkDelay::recv` sums it (`sim::double_clock`), for ns-2 runs whose links do not
mirror the engine's (the papers' own, 1040-byte packets on 1 Gbps links), and takes an arrival
ahead of a departure at the same instant, as ns-2's FIFO scheduler does
(`DropTailQueue::admit_ahead_of_departure`). Random turnarounds (`workload.server_jitter`) do not
part the servers for long: the port's departures clock them back into step. `link.skew` makes
server i's cable i·skew longer both ways (the harness gives ns-2's links the same delays), so no two
servers' frames arrive together; with 1 ps both simulators break every tie alike. The papers' ns-2
runs had equal links, so the experiment files keep equal cables to reproduce them; a real cluster
has neither equal cables nor equal host timing, and the second grid shows how far a result made with
equal cables can be from one made without.

**Timeouts by class.** `--classes` compares the servers' timeouts by FAST08 §5.1's classes (full
window loss, lost retransmission, last packet loss, other) and GIP §III's (FLoss-TO, LAck-TO), ns-2's
counted by the engine's rules (`tcp::forensics`) from a trace of its agents' `nrexmit_`, `dupacks_`,
`ack_` (the Tcl name of `highest_ack_`) and `maxseq_` and of the client port's queue: a timeout is a
step of `nrexmit_`, its DART the `dupacks_` the timeout reset, its head `ack_ + 1`, a lost
retransmission if the port saw the head twice by then. The traces take about 100 bytes a packet in a
temporary directory.

**GIP.** GIP's window reset (cwnd 2 segments at each stripe unit's head, GIP §V-C) runs in ns-2 too:
the harness sets the agent's `cwnd_` before each unit's `advanceby`. Its redundant copies at a unit's
tail (GIP §IV-B, §V-B) run from Tcl (`ns2_gip.tcl`): each server agent's `ack_` and `dupacks_` are
traced into a Tcl channel, so every ACK is seen as it arrives, and the copy is sent by setting
`t_seqno_` back (Pattern 333: to the last packet, once per ACK; Pattern 123: to the third-last, cwnd cut
by three, the window sending the three). The table below runs the window reset alone
(`tcp.gip_copies` 0) in both; its "full GIP" column is the simulator's alone.
"""


def validate(args: list[str]) -> list[dict[str, Any]]:
    """One ``incast validate --against ns2 --json`` line: its JSON objects, one per server count."""
    done = subprocess.run(
        ["incast", "validate", "--against", "ns2", "--json", *args], check=True, capture_output=True, text=True
    )
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def grid_lines(seeds: int) -> list[tuple[str, str, str, int]]:
    """Every ``incast validate`` line of a grid: --tcp, RTO_min, buffer and seed."""
    return [(tcp, rto, buffer, seed) for _, tcp, rto in GRID for buffer in BUFFERS for seed in range(1, seeds + 1)]


def grid_args(line: tuple[str, str, str, int], skew: bool) -> list[str]:
    """The options of one grid line."""
    tcp, rto, buffer, seed = line
    args = ["--servers", ",".join(map(str, SERVERS)), "--blocks", "20", "--buffer", buffer]
    args += ["--rto-min", rto, "--tcp", tcp, "--set", f"seed={seed}"]
    args += ["--set", "tcp.rto_tick=1us"] if rto == "1ms" else []
    return args + (["--set", "link.skew=1ps"] if skew else [])


def grid(seeds: int, skew: bool, jobs: int) -> dict[str, dict[str, list[float]]]:
    """Every grid point: each seed's goodput and timeouts on both sides, keyed by point."""
    lines = grid_lines(seeds)

    def one(line: tuple[str, str, str, int]) -> list[dict[str, Any]]:
        tcp, rto, buffer, seed = line
        out = validate(grid_args(line, skew))
        print(f"grid {tcp} {rto} {buffer} seed {seed} skew={skew}: done", file=sys.stderr, flush=True)
        return out

    with ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(one, lines))
    out: dict[str, dict[str, list[float]]] = {}
    for (tcp, rto, buffer, _), objects in zip(lines, results, strict=True):
        for n, d in zip(SERVERS, objects, strict=True):
            p = out.setdefault(f"{tcp} {rto} {buffer} {n}", {"sim": [], "ns2": [], "sim_t": [], "ns2_t": []})
            f = d["figures"]
            p["sim"].append(f["goodput_mbps"]["simulator"])
            p["ns2"].append(f["goodput_mbps"]["ns2"])
            p["sim_t"].append(f["timeouts"]["simulator"])
            p["ns2_t"].append(f["timeouts"]["ns2"])
    return out


def classes() -> list[dict[str, Any]]:
    """FAST08 Table 3's setting in both simulators, timeouts by class."""
    return [class_row(stack, seed, validate(class_args(tcp, sets, seed))[0]) for stack, tcp, sets in CLASS_CASES
            for seed in (1, 2)]  # fmt: skip


def class_args(tcp: str, sets: list[str], seed: int) -> list[str]:
    """The options of one line of FAST08 Table 3's setting."""
    args = ["--servers", "16", "--blocks", "60", "--buffer", "64pkt", "--delayed-ack", "off", "--tcp", tcp]
    return args + ["--classes", "--set", f"seed={seed}", *(a for kv in sets for a in ("--set", kv))]


def class_row(stack: str, seed: int, d: dict[str, Any]) -> dict[str, Any]:
    """A row of the classes table from one ``incast validate --classes`` object."""
    f = d["figures"]
    row = {"stack": stack, "seed": seed, "timeouts": [f["timeouts"]["simulator"], f["timeouts"]["ns2"]]}
    for c in CLASSES:
        row[c] = [f[f"timeout_classes.{c}"]["simulator"], f[f"timeout_classes.{c}"]["ns2"]]
    return row


def agreement(points: dict[str, dict[str, list[float]]]) -> str:
    """How many points agree: goodput within ±20 % (and ±10 %), timeouts within 1.5 times (and 1.11)."""
    g20 = g10 = t15 = t111 = counted = 0
    for p in points.values():
        ratio = statistics.fmean(p["sim"]) / statistics.fmean(p["ns2"])
        g20 += abs(ratio - 1) <= 0.2
        g10 += abs(ratio - 1) <= 0.1
        a, b = sum(p["sim_t"]), sum(p["ns2_t"])
        if max(a, b) >= 10:
            counted += 1
            r = max(a, b) / min(a, b) if min(a, b) > 0 else float("inf")
            t15 += r <= 1.5
            t111 += r <= 1.11
    n = len(points)
    return (
        f"Goodput within ±20 % at {g20} of the {n} points (within ±10 % at {g10}); timeouts within a factor "
        f"of 1.5 at {t15} of the {counted} points where either side has 10 or more (within 1.11 at {t111})."
    )


def grid_tables(points: dict[str, dict[str, list[float]]], skew: bool) -> str:
    """The four grid tables: goodput in Mbps averaged over the seeds, timeouts summed in brackets."""
    parts = []
    for title, tcp, rto in GRID:
        head = f"{title}, RTO_min {rto.replace('ms', ' ms')}" + (", `link.skew` 1 ps" if skew else "")
        lines = [f"**{head}**\n", "| servers | 32pkt incast | 32pkt ns-2 | 64pkt incast | 64pkt ns-2 |"]
        lines.append("|--------:|-------------:|-----------:|-------------:|-----------:|")
        for n in SERVERS:
            cells = []
            for buffer in BUFFERS:
                p = points[f"{tcp} {rto} {buffer} {n}"]
                cells.append(f"{statistics.fmean(p['sim']):.0f} ({sum(p['sim_t']):,.0f})")
                cells.append(f"{statistics.fmean(p['ns2']):.0f} ({sum(p['ns2_t']):,.0f})")
            lines.append(f"| {n} | " + " | ".join(cells) + " |")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def classes_table(rows: list[dict[str, Any]]) -> str:
    """FAST08 Table 3's setting, incast / ns-2.35 in each cell."""
    heads = ["stack", "seed", "timeouts", "full window", "lost retransmit", "last packet", "other"]
    lines = ["| " + " | ".join(heads) + " |", "|---|--:|--:|--:|--:|--:|--:|"]
    for r in rows:
        cells = [f"{r[k][0]:,.0f} / {r[k][1]:,.0f}" for k in ["timeouts", *CLASSES]]
        lines.append(f"| {r['stack']} | {r['seed']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def render(run: Run, results: dict[str, Any]) -> None:
    """Write the page from a run's numbers."""
    seeds = results["seeds"]
    label = "the full grid" if seeds >= 40 else f"a smaller run than the full grid's 40 seeds: seeds 1–{seeds}"
    body = [
        ABOUT.format(switches=settings_table("ns-2.35 behaviour (source)", SWITCHES)),
        "## The grid, equal cables\n",
        f"`incast validate --against ns2 --servers 2,4,8,16,32,64 --blocks 20 --buffer Q --rto-min R --tcp T "
        f"--set seed=S` for seeds 1 to {seeds} ({label}), with `--set tcp.rto_tick=1us` at 1 ms; goodput in "
        "Mbps averaged over the seeds, the servers' timeouts summed in brackets.\n",
        agreement(results["equal"]) + "\n",
        grid_tables(results["equal"], skew=False),
        "\n## The grid, cables 1 ps apart\n",
        "The same with `--set link.skew=1ps`, so that both simulators break every tie alike.\n",
        agreement(results["skew"]) + "\n",
        grid_tables(results["skew"], skew=True),
        "\n## Timeouts by class\n",
        "FAST08 Table 3's setting: `incast validate --against ns2 --servers 16 --blocks 60 --buffer 64pkt "
        "--delayed-ack off --tcp T --classes --set seed=N` (`--set tcp.recovery=reno` for Reno, "
        "`--set tcp.dupack_threshold=1` for da_thresh 1); "
        "incast / ns-2.35 in each cell.\n",
        classes_table(results["classes"]),
        "\n## GIP\n",
        "GIP §VII's settings (the `gip-fig15` to `gip-fig18` files: 1000-byte packets, a 128 KiB port, 117 µs "
        "RTT, 256 KiB stripe units, RTO_min 200 ms, 20 units, delayed ACK off, a 1 µs tick), means of seeds "
        "1–3, goodput normalized by the best the link allows; timeouts are the window reset's, the servers' "
        "only. `python docs/ns2_gip.py` prints this table alone.\n",
        ns2_gip.table(results["gip"]),
    ]
    run.write(PAGE, "Against ns-2.35", f"python docs/ns2_fidelity.py --seeds {seeds}", "\n".join(body))


#: The figures of one grid point's seed, both sides.
GRID_FIGURES = ("goodput", "ns-2 goodput", "timeouts", "ns-2 timeouts")
#: The figures of a GIP row (``ns2_gip.HEADS``) the simulator gives, by index; the rest are ns-2's.
GIP_SIMULATOR = (0, 1, 2, 4, 6, 7, 9)
#: A GIP row's heads, each ns-2 column named after the simulator's beside it.
GIP_LABELS = tuple(
    prev.replace("incast", "ns-2") if head == "ns-2" else head
    for prev, head in zip(["", *ns2_gip.HEADS], ns2_gip.HEADS, strict=False)
)


def _sim(d: dict[str, Any]) -> list[Any]:
    f = d["figures"]
    return [f["goodput_mbps"]["simulator"], f["timeouts"]["simulator"]]


def verify(n: int) -> None:
    """``--verify``: the simulator's side of every line as saved; both sides of ``n`` grid lines, the first
    class case and the first GIP point of each link rate (ns-2 is deterministic for a seed)."""
    run, results = Run.load(PAGE, current=False)
    check = Verification(PAGE, f"python docs/ns2_fidelity.py --verify --sample {n}")
    lines = grid_lines(results["seeds"])
    both = [(line, skew) for skew in (False, True) for line in lines]
    picked = sample(both, n)
    try:
        for line, skew in both:
            tcp, rto, buffer, seed = line
            table = results["skew" if skew else "equal"]
            fresh = simulator_side.validate(["--against", "ns2", *grid_args(line, skew)])
            real = validate(grid_args(line, skew)) if (line, skew) in picked else None
            for k, (servers, d) in enumerate(zip(SERVERS, fresh, strict=True)):
                p, where = table[f"{tcp} {rto} {buffer} {servers}"], f"grid {tcp} {rto} {buffer} {servers} seed {seed}"
                where += ", link.skew=1ps" if skew else ""
                saved = [p["sim"][seed - 1], p["sim_t"][seed - 1]]
                check.same("simulator grid points", saved, _sim(d), where, ("goodput", "timeouts"))
                if real is not None:
                    f = real[k]["figures"]
                    both_sides = [f[x][side] for x in ("goodput_mbps", "timeouts") for side in ("simulator", "ns2")]
                    saved = [p[x][seed - 1] for x in ("sim", "ns2", "sim_t", "ns2_t")]
                    check.same("ns-2 grid points (both sides)", saved, both_sides, where, GRID_FIGURES)
        cases = [(stack, tcp, sets, seed) for stack, tcp, sets in CLASS_CASES for seed in (1, 2)]
        for (stack, tcp, sets, seed), saved in zip(cases, results["classes"], strict=True):
            args = class_args(tcp, sets, seed)
            (d,) = simulator_side.validate(["--against", "ns2", *args])
            fresh = class_row(stack, seed, d)
            where = f"classes {stack} seed {seed}"
            check.same("simulator class cases", {k: v[0] if isinstance(v, list) else v for k, v in saved.items()},
                       {k: v[0] if isinstance(v, list) else v for k, v in fresh.items()}, where)  # fmt: skip
            if (stack, tcp, sets, seed) == cases[0]:
                check.same("ns-2 class cases (both sides)", saved, class_row(stack, seed, validate(args)[0]), where)
        picked_gip = [next(p for p in ns2_gip.POINTS if p[0] == rate) for rate in ("1Gbps", "10Gbps")]
        for (rate, servers), saved in zip(ns2_gip.POINTS, results["gip"], strict=True):
            where = f"GIP {rate} {servers}"
            if (rate, servers) in picked_gip:
                check.same("GIP points (both sides)", saved, ns2_gip.row(rate, servers), where, GIP_LABELS)
                continue
            ru, rt, _, _ = ns2_gip.point(rate, servers, "reset", False)
            fu = ns2_gip.point(rate, servers, "full", False)[0]
            mu = ns2_gip.point(rate, servers, "2ms", False)[0]
            wu = ns2_gip.point(rate, servers, "newreno", False)[0]
            fresh = [rate.replace("Gbps", " Gbps"), servers, ru, rt, fu, mu, wu]
            labels = tuple(GIP_LABELS[i] for i in GIP_SIMULATOR)
            check.same("GIP points (simulator)", [saved[i] for i in GIP_SIMULATOR], fresh, where, labels)
    except Moved as moved:
        raise check.refuse(moved, "docs/ns2_fidelity.py") from None
    check.restamp(run, results, DEPENDS, render, check.note())


def main() -> int:
    """Run the grids, the classes and GIP's points (or take the last run's numbers) and write the page."""
    ap = parser(__doc__)
    ap.add_argument("--seeds", type=int, default=40, help="seeds 1..N of each grid point (default 40)")
    ap.add_argument("--jobs", type=int, default=1, help="grid lines run at once")
    ap.add_argument("--verify", action="store_true", help="bring the page current if its results did not move")
    ap.add_argument("--sample", type=int, default=4, help="with --verify, grid lines run in ns-2 too (default 4)")
    args = ap.parse_args()
    if args.render:
        return render_again(PAGE, render)
    if args.verify:
        verify(args.sample)
        return 0
    return generate(
        PAGE,
        __file__,
        DEPENDS,
        lambda: {
            "seeds": args.seeds,
            "equal": grid(args.seeds, False, args.jobs),
            "skew": grid(args.seeds, True, args.jobs),
            "classes": classes(),
            "gip": ns2_gip.rows(args.jobs),
        },
        render,
    )


if __name__ == "__main__":
    sys.exit(main())
