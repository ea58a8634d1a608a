"""Writes docs/validation/papers.md: every packaged experiment's claims and their verdicts.

Run: ``python docs/papers_verdicts.py [--full] [--jobs N]``, or ``--render`` to write the page again
from the last run's numbers. It runs ``incast reproduce --all --quick --json`` (``--full``: every
seed and axis value, several times longer) into a temporary results directory and lists, per
experiment, its points and how many of its claims hold, fail or are disputed, then every claim that
does not hold with what the run gave.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections import Counter
from typing import Any

from pages import Run, generate, parser, render_again

import incast.experiment

PAGE = "papers.md"
DEPENDS = [
    "python/incast/experiments",
    "python/incast/experiment.py",
    "python/incast/sweep.py",
    "python/incast/scenario.py",
]
VERDICTS = ("holds", "fails", "disputed")

ABOUT = """\
Every simulated figure and table of the five papers is an experiment file under
`python/incast/experiments/` (see [the guide](../GUIDE.md#experiments-and-sweeps)); its claims are
the paper's statements and stated numbers as checkable rules. A claim **holds** when the run bears
it out, **fails** when the simulator disagrees with the paper, and is **disputed** when its reference
runs (`[[claim.reference]]`: ns-2.35 for the simulated figures, the testbed for the measured ones)
fail it as well; their recorded numbers are in the reason, and `incast reproduce NAME --against ns2`
runs them again. The experiments of the papers' ns-2 figures run the `ns2` preset
(ns-2.35's stack); the real-cluster ones (CMU09 Figs. 1, 6, 7 and 15) run `linux-2.6`, Linux 2.6.28's.
"""


def escape(text: str) -> str:
    """A claim's text or detail as one markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def render(run: Run, results: dict[str, Any]) -> None:
    """Write the page from a run's numbers."""
    rows = results["experiments"]
    total = Counter(c["verdict"] for r in rows for c in r["claims"])
    points = sum(r["points"] for r in rows)
    lines = ["| experiment | paper | figure | points | holds | fails | disputed |", "|---|---|---|--:|--:|--:|--:|"]
    for r in rows:
        n = Counter(c["verdict"] for c in r["claims"])
        lines.append(
            f"| `{r['name']}` | {r['paper']} | {r['figure']} | {r['points']:,} | "
            + " | ".join(str(n[v]) for v in VERDICTS)
            + " |"
        )
    misses = ["| experiment | verdict | claim | what the run gave |", "|---|---|---|---|"]
    for r in rows:
        for c in r["claims"]:
            if c["verdict"] != "holds":
                misses.append(
                    f"| `{r['name']}` | {c['verdict']} | {escape(c['text'])} | {escape(c['reason'] or c['detail'])} |"
                )
    quick = " --quick" if results["mode"] == "quick" else ""
    body = [
        ABOUT,
        f"`incast reproduce --all{quick} --json`: {len(rows)} experiments, {points:,} points; of "
        f"{sum(total.values())} claims, {total['holds']} hold, {total['fails']} fail and {total['disputed']} "
        "are disputed.\n",
        "\n".join(lines),
        "\n## The claims that do not hold\n",
        "\n".join(misses),
    ]
    command = "python docs/papers_verdicts.py" + (" --full" if results["mode"] != "quick" else "")
    run.write(PAGE, "Reproducing the papers", command, "\n".join(body))


def main() -> int:
    """Reproduce every experiment (or take the last run's numbers) and write the page."""
    ap = parser(__doc__)
    ap.add_argument("--full", action="store_true", help="every seed and axis value, not the quick tables")
    ap.add_argument("--jobs", type=int, help="worker processes (default: all cores)")
    args = ap.parse_args()
    if args.render:
        return render_again(PAGE, render)
    return generate(PAGE, __file__, DEPENDS, lambda: reproduce(args.full, args.jobs), render)


def reproduce(full: bool, jobs: int | None) -> dict[str, Any]:
    """Every experiment's claims and verdicts, from ``incast reproduce --all --json``."""
    with tempfile.TemporaryDirectory() as out:
        argv = ["incast", "reproduce", "--all", "--json", "--out", out, *([] if full else ["--quick"])]
        argv += ["--jobs", str(jobs)] if jobs else []
        done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode not in (0, 1):  # 1: some claim fails, which the page reports
        raise SystemExit(f"error: incast reproduce exited {done.returncode}: {done.stderr.strip()[-500:]}")
    experiments = []
    for line in done.stdout.splitlines():
        d = json.loads(line)
        meta = incast.experiment.load(d["name"]).spec.meta
        claims = [{k: c[k] for k in ("text", "verdict", "detail", "reason")} for c in d["claims"]]
        paper, figure = meta.paper or "our own study", meta.figure or "-"
        experiments.append(
            {"name": d["name"], "paper": paper, "figure": figure, "points": d["points"], "claims": claims}
        )
    return {"mode": "full" if full else "quick", "experiments": experiments}


if __name__ == "__main__":
    sys.exit(main())
