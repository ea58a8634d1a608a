"""``incast reproduce NAME… | --all``: regenerate the papers' figures and check their claims.

Each packaged experiment is swept (cached, resumable; see ``incast sweep``),
its tables and figure written under ``<out>/<name>/``, and every claim of the
paper checked against the data. ``--json`` prints one object per experiment:
``name``, ``claims`` (``text``, ``verdict`` = holds|fails|disputed|not-run, ``detail``, ``reason``),
``points``, ``wall_s``, ``tables`` and ``figures``.
"""

import time
from typing import Annotated

import typer

from incast.cli.output import plural
from incast.cli.sweep import DaskOption, JobsOption, MaxPointsOption, OutOption, QuickOption, run_experiments
from incast.errors import ScenarioError

__all__ = ["register", "reproduce"]


def reproduce(
    names: Annotated[
        list[str] | None, typer.Argument(metavar="NAME...", help="Experiments, e.g. fast08-fig06 cmu09-fig13.")
    ] = None,
    all_: Annotated[bool, typer.Option("--all", help="Every packaged experiment.")] = False,
    quick: QuickOption = False,
    out: OutOption = "results",
    dask: DaskOption = None,
    jobs: JobsOption = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object per experiment; no progress bar.")
    ] = False,
    max_points: MaxPointsOption = None,
) -> int:
    """Regenerate the papers' simulated figures and check each claim against the data."""
    from incast.experiment import count_verdicts, load, packaged

    if all_ == bool(names):
        raise ScenarioError("NAME: give experiment names or --all, not both or neither; see 'incast experiments'")
    experiments = [load(p) for p in packaged()] if all_ else [load(n) for n in names or []]
    start = time.perf_counter()
    results, status = run_experiments(
        experiments, quick=quick, out=out, dask=dask, jobs=jobs, as_json=as_json, max_points=max_points
    )
    if as_json:
        return status
    width = max((len(r.name) for r in results), default=0)
    for r in results:
        summary = count_verdicts([c.verdict for c in r.verdicts]) or "no claims"
        print(f"{r.name:<{width}} {summary:<28} {r.done:>4} points ({r.cached} cached) {r.wall_s:7.1f} s")
        for c in r.verdicts:
            if c.verdict != "holds":
                print(f"{'':<{width}} {c.verdict}: {c.text}")
                print(f"{'':<{width}}   {c.reason}")
    done = plural(len(results), "experiment")
    print(f"{done} in {time.perf_counter() - start:.1f} s; tables and figures under {out}/")
    return status


def register(app: typer.Typer) -> None:
    """Add the ``reproduce`` verb to ``app``."""
    app.command("reproduce")(reproduce)
