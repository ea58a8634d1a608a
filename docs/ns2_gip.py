"""GIP §VII's settings in the simulator and in ns-2.35: the GIP table of docs/validation/ns2.md.

``docs/ns2_fidelity.py`` writes it onto the page; ``python docs/ns2_gip.py`` prints it alone (needs
``ns``, Debian's ``ns2``). Each
point runs the ``ns2`` preset with GIP §VII's settings (1000-byte packets, a 128 KiB port, 117 µs RTT,
256 KiB stripe units, 20 units, delayed ACK off, a 1 µs ``tcpTick_``) for seeds 1, 2 and 3, in both
simulators: GIP's window reset alone (``tcp.gip = "333"`` with ``tcp.gip_copies = 0``, all ns-2's agents
can run), RTO_min 2 ms and NewReno at 200 ms; and in the simulator alone full GIP, its three copies
included. Goodput is normalized by the best the link allows; timeouts are the window reset's, the
servers' only (ns-2's request is a delay). Means over the seeds.
"""

from __future__ import annotations

import statistics
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import incast
from incast.presets import with_preset
from incast.reference import ns2

#: (link, senders) points: GIP Figs. 15-16 at 1 Gbps, Figs. 17-18 at 10 Gbps.
POINTS = [("1Gbps", n) for n in (16, 24, 32, 48, 64, 100, 128, 200)] + [
    ("10Gbps", n) for n in (4, 32, 64, 100, 128, 200)
]
SEEDS = (1, 2, 3)
#: Each case's settings over the common ones.
CASES: dict[str, dict[str, Any]] = {
    "reset": {"tcp.gip": "333", "tcp.gip_copies": 0, "tcp.rto_min": "200ms"},
    "full": {"tcp.gip": "333", "tcp.rto_min": "200ms"},
    "2ms": {"tcp.rto_min": "2ms"},
    "newreno": {"tcp.rto_min": "200ms"},
}


def scenario(rate: str, servers: int, seed: int, case: str) -> incast.Scenario:
    """One point's scenario, each server's share in the whole segments ns-2 sends."""
    common = {
        "servers": servers,
        "blocks": 20,
        "seed": seed,
        "link": {"rate": rate, "rtt": "117us"},
        "switch": {"buffer": "128KiB"},
        "workload": {"sru": "256KiB"},
        "tcp": {"mss": 1000, "delayed_ack": "off", "rto_tick": "1us"},
    }
    s, _ = ns2.whole_segments(incast.Scenario.parse(with_preset("ns2", common), CASES[case]))
    return s


def point(rate: str, servers: int, case: str, reference: bool) -> tuple[float, float, float, float]:
    """Means over the seeds: simulator utilization and timeouts, then ns-2's (NaN when not run)."""
    sim_u, sim_t, ref_u, ref_t = [], [], [], []
    for seed in SEEDS:
        s = scenario(rate, servers, seed, case)
        r = incast.run(s)
        best = r.to_dict()["best_goodput_mbps"]
        sim_u.append(r.goodput_mbps / best)
        sim_t.append(ns2.response_timeouts(r)[0])
        if reference:
            q = ns2.run(s)
            ref_u.append(q.goodput_mbps / best)
            ref_t.append(q.timeouts)
    nan = float("nan")
    mean = statistics.fmean
    return mean(sim_u), mean(sim_t), mean(ref_u) if ref_u else nan, mean(ref_t) if ref_t else nan


HEADS = ["link", "senders", "GIP reset: incast", "ns-2", "timeouts: incast", "ns-2", "full GIP: incast"]
HEADS += ["RTO_min 2 ms: incast", "ns-2", "NewReno: incast", "ns-2"]


def row(rate: str, n: int) -> list[float | str]:
    """One point's row: link, senders, then the figures in the order of ``HEADS``."""
    ru, rt, nu, nt = point(rate, n, "reset", True)
    fu = point(rate, n, "full", False)[0]
    mu, _, mnu, _ = point(rate, n, "2ms", True)
    wu, _, wnu, _ = point(rate, n, "newreno", True)
    print(f"GIP {rate} {n}: {ru:.2f} / {nu:.2f}", file=sys.stderr, flush=True)
    return [rate.replace("Gbps", " Gbps"), n, ru, nu, rt, nt, fu, mu, mnu, wu, wnu]


def rows(jobs: int = 1) -> list[list[float | str]]:
    """Every point's row, ``jobs`` points at once (each run releases the interpreter while it runs)."""
    with ThreadPoolExecutor(jobs) as pool:
        return list(pool.map(lambda p: row(*p), POINTS))


def table(points: list[list[float | str]]) -> str:
    """The markdown table of ``rows()``."""
    lines = ["| " + " | ".join(HEADS) + " |", "|" + "---:|" * len(HEADS)]
    for link, n, ru, nu, rt, nt, fu, mu, mnu, wu, wnu in points:
        lines.append(
            f"| {link} | {n} | {ru:.2f} | {nu:.2f} | {rt:,.0f} | {nt:,.0f} | {fu:.2f} "
            f"| {mu:.2f} | {mnu:.2f} | {wu:.2f} | {wnu:.2f} |"
        )
    return "\n".join(lines)


def main() -> int:
    print(table(rows()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
