"""Writes docs/validation/ns3.md: the simulator's ``ns3`` preset beside ns-3 3.44 on the same reads.

Run: ``python docs/ns3_fidelity.py --ns3-python PATH [--seeds 4] [--servers 4,16,32,64] [--jobs 2]``,
where PATH is an interpreter with the ``ns3`` wheel (``python3 -m venv ns3env && ns3env/bin/pip install
ns3==3.44.post0``, about 670 MiB), or ``--render`` to write the page again from the last run's numbers,
or ``--verify --ns3-python PATH [--sample 1]`` to bring it current without the full run
(``docs/verify.py``): every incast run recomputed, and ``--sample`` of the ns-3 runs, those of the
least data first.
Each point runs ``python/incast/reference/ns3.py`` and ``incast run --preset ns3`` for seeds 1 to
``--seeds``, with equal cables and with a 1 ns skew. Each ns-3 run first compiles its scenario
before it runs, so the full table, six points over four seeds, takes hours;
``--servers`` keeps only the points with those server counts.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pages import ROOT, Run, generate, parser, render_again, settings_table
from verify import Moved, Verification

PAGE = "ns3.md"
DEPENDS = ["python/incast/reference/ns3.py", "python/incast/reference/ns3_cppyy.py"]
HARNESS = ROOT / "python" / "incast" / "reference" / "ns3.py"
#: (servers, RTO_min, blocks): the points of the full table.
POINTS = [(4, "1ms", 100), (16, "1ms", 50), (32, "1ms", 30), (64, "1ms", 20), (4, "200ms", 100), (16, "200ms", 30)]
SKEWS = ["0ns", "1ns"]

#: The ``ns3`` preset's settings where ns-3's TCP differs from the RFCs, and the source of each.
SWITCHES = [
    ('tcp.rto_backoff_reset = "new_ack"', "the RTO back-off dropped by every ACK of new data (`NewAck`)"),
    ('tcp.ssthresh_rule = "ns3"', "ssthresh from half of RFC 6675's pipe, not FlightSize (`EnterRecovery`)"),
    (
        'link.arrival_order = "ns3"',
        "simultaneous arrivals in the order their transmissions started, and an arrival at the instant a "
        "port's frame ends before that departure",
    ),
    (
        'tcp.prr = true`, `tcp.prr_flavor = "ns3"',
        "`TcpPrrRecovery` counts a SACKing ACK as a segment more than it delivered, runs twice on an ACK that "
        "SACKs and advances, starts from the pipe; `ProcessAck` grows cwnd on the ACK that ends recovery",
    ),
    (
        'tcp.sack_recovery = "ns3"',
        "`TcpTxBuffer::Update` keeps a SACKed retransmission in the pipe until a cumulative ACK or a timeout; "
        "after a timeout `NextSeg` resends only what is lost below the highest SACK; no rescue retransmission; "
        "only the first partial ACK restarts the timer",
    ),
    (
        'tcp.ca_increase = "ns3"',
        "the increase truncated to whole bytes, and growth in whole segments of what an ACK newly delivered",
    ),
    (
        'switch.admission = "full_frame"',
        "a device queue stops once less than an MTU is free, and drops what arrives while it is stopped",
    ),
]

ABOUT = """\
`python/incast/reference/ns3.py` runs the same synchronized read in ns-3 3.44 (the PyPI wheel; the
script does not import incast, and its docstring lists every ns-3 attribute it sets): N servers and a
client on point-to-point links to one router whose port toward the client is a drop-tail queue of
`--buffer` bytes (the traffic-control queue discs removed), `TcpNewReno` with SACK, PRR (ns-3's
default), delayed ACK off, initial window 10, 1460-byte segments, 1 MiB socket buffers and 100-byte
requests behind a barrier. It counts every retransmission-timer expiry and every drop at the port.
The `ns3` preset sets the same stack on incast's side (`incast presets`).

**Commands** (N servers, RTO_min R, B blocks, seed S, cable skew K of 0 or 1 ns; 1 Gbps, 100 µs RTT,
256 KiB SRU; `--skew` gives server i's link i·K more delay, as `link.skew` does, in ns-3's whole
nanoseconds):

```sh
ns3env/bin/python python/incast/reference/ns3.py --servers N --rto-min R --buffer 32KiB \\
    --sru 256KiB --blocks B --sack --clock-granularity 0 --seed S --skew K --json
incast run --preset ns3 --servers N --rto-min R --buffer 34286B --blocks B --seed S \\
    --set link.skew=K --json
```

The port is 34,286 bytes on incast's side: ns-3's 32 KiB queue holds 21 full packets plus the one
on the wire, 22 frames, where a 32 KiB incast port holds 21. ns-3 runs with `ClockGranularity` 0,
its RTO then being RFC 6298's formula as incast's; its default of 1 ms adds `max(G, 4·RTTVAR)`,
which incast cannot express (its `tcp.clock_granularity` is a jiffy clock). ns-3 carries no Ethernet
framing, so its best goodput at 1 Gbps is higher than incast's; both are printed.

**ns-3's stack, as switches** (all in the `ns3` preset):

{switches}

The harness's `--trace FILE` (each server's segments sent, the client's received, every drop,
timeout, congestion state, cwnd and bytes in flight; the format is in its docstring) can be set
beside incast's capture of the same run (`--set trace.pcap=true`) to compare the two event by
event; each switch above came from the first difference such a comparison found.
"""


def ns3(python: str, servers: int, rto: str, blocks: int, seed: int, skew: str) -> dict[str, Any]:
    """One ns-3 run of a point."""
    args = [python, str(HARNESS), "--servers", str(servers), "--rto-min", rto, "--buffer", "32KiB"]
    args += ["--sru", "256KiB", "--blocks", str(blocks), "--sack", "--clock-granularity", "0"]
    args += ["--seed", str(seed), "--skew", skew, "--json"]
    out: dict[str, Any] = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    print(f"ns-3 {servers} {rto} seed {seed} skew {skew}: {out['goodput_mbps']:.0f}", file=sys.stderr, flush=True)
    return out


def incast(servers: int, rto: str, blocks: int, seed: int, skew: str) -> dict[str, Any]:
    """One incast run of a point with the ``ns3`` preset."""
    args = ["incast", "run", "--preset", "ns3", "--servers", str(servers), "--rto-min", rto, "--buffer", "34286B"]
    args += ["--blocks", str(blocks), "--seed", str(seed), "--set", f"link.skew={skew}", "--json"]
    out: dict[str, Any] = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    return out


def measure(python: str, points: list[tuple[int, str, int]], seeds: int, jobs: int) -> list[dict[str, Any]]:
    """Every point: goodput and timeouts of each seed, both sides, both skews."""
    runs = [(p, seed, skew) for p in points for skew in SKEWS for seed in range(1, seeds + 1)]

    def one(r: tuple[tuple[int, str, int], int, str]) -> dict[str, Any]:
        (servers, rto, blocks), seed, skew = r
        return ns3(python, servers, rto, blocks, seed, skew)

    with ThreadPoolExecutor(jobs) as pool:
        theirs = list(pool.map(one, runs))
    ours = [incast(*p, seed, skew) for p, seed, skew in runs]
    rows = []
    for p in points:
        row: dict[str, Any] = {"servers": p[0], "rto_min": p[1], "blocks": p[2]}
        for skew in SKEWS:
            pick = [i for i, r in enumerate(runs) if r[0] == p and r[2] == skew]
            row[skew] = {
                "ns3": [[theirs[i]["goodput_mbps"], theirs[i]["timeouts"], theirs[i]["drops"]] for i in pick],
                "incast": [[ours[i]["goodput_mbps"], ours[i]["timeouts"], ours[i]["drops"]] for i in pick],
            }
        rows.append(row)
    return rows


def cell(runs: list[list[float]]) -> str:
    """Goodput in Mbps (mean over the seeds), timeouts in brackets (mean)."""
    return f"{statistics.fmean(r[0] for r in runs):.0f} ({statistics.fmean(r[1] for r in runs):,.0f})"


def span(seeds: int) -> str:
    """``seed 1`` or ``seeds 1–N``."""
    return "seed 1" if seeds == 1 else f"seeds 1–{seeds}"


def render(run: Run, results: dict[str, Any]) -> None:
    """Write the page from a run's numbers."""
    seeds, rows = results["seeds"], results["rows"]
    full = len(rows) == len(POINTS) and seeds >= 4
    scope = (
        "the full table"
        if full
        else f"a smaller run than the full table's six points over seeds 1–4: {len(rows)} points, {span(seeds)}"
    )
    lines = [
        "| servers, RTO_min, blocks | ns-3 | incast | ns-3, 1 ns skew | incast, 1 ns skew |",
        "|---|--:|--:|--:|--:|",
    ]
    within = 0
    for r in rows:
        cells = [cell(r[s][side]) for s in SKEWS for side in ("ns3", "incast")]
        point = f"{r['servers']}, {r['rto_min'].replace('ms', ' ms')}, {r['blocks']}"
        lines.append(f"| {point} | " + " | ".join(cells) + " |")
        for s in SKEWS:
            g = [statistics.fmean(x[0] for x in r[s][side]) for side in ("ns3", "incast")]
            t = [statistics.fmean(x[1] for x in r[s][side]) for side in ("ns3", "incast")]
            within += abs(g[1] / g[0] - 1) <= 0.2 and (max(t) <= 1.5 * min(t) if min(t) > 0 else max(t) == 0)
    body = [
        ABOUT.format(switches=settings_table("ns-3 3.44 behaviour (source)", SWITCHES)),
        "## Goodput and timeouts\n",
        f"Means over {span(seeds)} on both sides ({scope}); goodput in Mbps, timeouts in brackets.\n",
        "\n".join(lines),
        f"\nGoodput within 20 % and timeouts within a factor of 1.5 at {within} of the {2 * len(rows)} cells.",
    ]
    servers = ",".join(sorted({str(r["servers"]) for r in rows}, key=int))
    command = f"python docs/ns3_fidelity.py --ns3-python PATH --seeds {seeds} --servers {servers}"
    run.write(PAGE, "Against ns-3 3.44", command, "\n".join(body))


#: The figures of each run the page keeps.
FIGURES = ("goodput", "timeouts", "drops")


def verify(python: str | None, n: int) -> None:
    """``--verify``: every incast run as saved, and the ``n`` ns-3 runs of the least data (servers times
    blocks), equal cables first (ns-3 is deterministic for a seed)."""
    run, results = Run.load(PAGE, current=False)
    check = Verification(PAGE, f"python docs/ns3_fidelity.py --verify --sample {n}")
    runs = [(r, seed, skew) for r in results["rows"] for skew in SKEWS for seed in range(1, results["seeds"] + 1)]
    picked = sorted(runs, key=lambda x: (x[0]["servers"] * x[0]["blocks"], SKEWS.index(x[2]), x[1]))[:n]
    if picked and python is None:
        raise SystemExit("error: --verify runs ns-3 too: give --ns3-python (or --sample 0)")
    try:
        for r, seed, skew in runs:
            point = (r["servers"], r["rto_min"], r["blocks"])
            where = f"{r['servers']} servers, RTO_min {r['rto_min']}, {r['blocks']} blocks, seed {seed}, skew {skew}"
            d = incast(*point, seed, skew)
            saved = r[skew]
            fresh = [d["goodput_mbps"], d["timeouts"], d["drops"]]
            check.same("incast runs", saved["incast"][seed - 1], fresh, where, FIGURES)
            if python is not None and (r, seed, skew) in picked:
                e = ns3(python, *point, seed, skew)
                fresh = [e["goodput_mbps"], e["timeouts"], e["drops"]]
                check.same("ns-3 runs", saved["ns3"][seed - 1], fresh, where, FIGURES)
    except Moved as moved:
        raise check.refuse(moved, "docs/ns3_fidelity.py") from None
    check.restamp(run, results, DEPENDS, render, check.note())


def main() -> int:
    """Run the points (or take the last run's numbers) and write the page."""
    ap = parser(__doc__)
    ap.add_argument("--ns3-python", metavar="PATH", help="an interpreter that has the ns3 wheel")
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--servers", default=",".join(sorted({str(p[0]) for p in POINTS}, key=int)))
    ap.add_argument("--jobs", type=int, default=1, help="ns-3 runs at once")
    ap.add_argument("--verify", action="store_true", help="bring the page current if its results did not move")
    ap.add_argument("--sample", type=int, default=1, help="with --verify, ns-3 runs to repeat (default 1)")
    args = ap.parse_args()
    if args.render:
        return render_again(PAGE, render)
    if args.verify:
        verify(args.ns3_python, args.sample)
        return 0
    if not args.ns3_python:
        ap.error("--ns3-python: give an interpreter that has the ns3 wheel (pip install ns3==3.44.post0)")
    wanted = {int(n) for n in args.servers.split(",")}
    points = [p for p in POINTS if p[0] in wanted]
    return generate(
        PAGE,
        __file__,
        DEPENDS,
        lambda: {"seeds": args.seeds, "rows": measure(args.ns3_python, points, args.seeds, args.jobs)},
        render,
    )


if __name__ == "__main__":
    sys.exit(main())
