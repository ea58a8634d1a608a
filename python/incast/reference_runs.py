"""Running a claim's reference runs again: ``incast reproduce NAME --against ns2|ns3|testbed``.

:func:`run` runs every ``[[claim.reference]]`` of an experiment on one harness
(:func:`incast.disputes.measure`, on a process pool for the simulators, one at a
time on the testbed) and rewrites that harness's part of the record beside the
experiment file, which :mod:`incast.disputes` reads.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from incast.disputes import harness, measure, read_record, write_record
from incast.experiment import Claim, Experiment, Point
from incast.reference.base import Flows

__all__ = ["run"]


def _plan(experiment: Experiment, name: str) -> dict[str, tuple[Point, Flows]]:
    """Every point the experiment's references on harness ``name`` run, with the flows it runs, by fingerprint."""
    out: dict[str, tuple[Point, Flows]] = {}
    for claim in experiment.spec.claim:
        for r in claim.reference:
            if r.harness == name:
                reference = harness(name, flows=r.flows)
                for p in experiment.reference_points(r):
                    out.setdefault(reference.fingerprint(p.scenario), (p, r.flows))
    return out


Progress = Callable[[int, int], None]


def run(experiment: Experiment, name: str, *, jobs: int | None = None, progress: Progress | None = None) -> int:
    """Run every reference of ``experiment`` on harness ``name`` again and rewrite its part of the record.

    ns-2 and ns-3 points run on ``jobs`` cores; the testbed's one at a time (they
    share this machine's namespaces). Every point is checked against what the
    harness can run before any runs. Returns the number of points run.
    """
    from incast.reference.ns2 import TRACED
    from incast.sweep import executor

    reference = harness(name)
    reference.require()
    todo = _plan(experiment, name)
    metrics = {m for c in experiment.spec.claim if any(r.harness == name for r in c.reference) for m in _read(c)}
    traced = name == "ns2" and bool(metrics & set(TRACED))
    for p, flows in todo.values():
        harness(name, flows=flows).check(p.scenario)
    points: dict[str, dict[str, Any]] = {}
    notes: dict[str, None] = {}

    def keep(fingerprint: str, p: Point, done: tuple[dict[str, float], list[str], float]) -> None:
        metrics, said, wall = done
        points[fingerprint] = {"coords": p.coords, "seed": p.seed, "metrics": metrics, "wall_s": round(wall, 3)}
        notes.update(dict.fromkeys(said))
        if progress:
            progress(len(points), len(todo))

    if name == "testbed" or jobs == 1 or len(todo) <= 1:
        for fingerprint, (p, flows) in todo.items():
            keep(fingerprint, p, measure(name, p.scenario.to_dict(), traced, flows))
    else:
        with executor(None, min(jobs or os.cpu_count() or 1, len(todo))) as ex:
            futures = {
                fp: ex.submit(measure, name, p.scenario.to_dict(), traced, flows) for fp, (p, flows) in todo.items()
            }
            for fingerprint, future in futures.items():
                keep(fingerprint, todo[fingerprint][0], future.result())
    record = read_record(experiment)
    record["harnesses"][name] = {
        "title": reference.title,
        "commit": _commit(),
        "when": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "notes": list(notes),
        "points": dict(sorted(points.items(), key=lambda kv: (sorted(kv[1]["coords"].items()), kv[1]["seed"]))),
    }
    write_record(experiment, record)
    return len(points)


def _read(claim: Claim) -> set[str]:
    """The metrics a claim reads."""
    return {claim.metric, *([claim.than.metric] if claim.than is not None and claim.than.metric else [])}


def _commit() -> str:
    """The short commit of the source tree this package is in, or ``"unknown"``."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).parent,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return done.stdout.strip() if done.returncode == 0 else "unknown"
