"""``incast reproduce NAME… | --all``: regenerate the papers' figures and check their claims.

Each packaged experiment is swept (cached, resumable; see ``incast sweep``),
its tables and figure written under ``<out>/<name>/``, and every claim of the
paper checked against the data. ``--json`` prints one object per experiment:
``name``, ``claims`` (``text``, ``verdict`` = holds|fails|disputed|not-run, ``detail``, ``reason``),
``points``, ``wall_s``, ``tables`` and ``figures``.

``--against ns2|ns3|testbed`` first runs again the reference runs of the
experiments' claims on that harness (``[[claim.reference]]``; with ``--all``,
of every experiment that has one), rewrites their record beside the
experiment file (:mod:`incast.disputes`), and then checks the claims with it:
a claim is ``disputed`` when every reference fails it too.
"""

import sys
import time
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from incast.cli.output import plural
from incast.cli.sweep import DaskOption, JobsOption, MaxPointsOption, OutOption, QuickOption, run_experiments
from incast.errors import ScenarioError

if TYPE_CHECKING:
    from incast.experiment import Experiment

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
    against: Annotated[
        Literal["ns2", "ns3", "testbed"] | None,
        typer.Option(
            "--against",
            metavar="ns2|ns3|testbed",
            help="First run again the claims' reference runs on this harness and record them.",
        ),
    ] = None,
) -> int:
    """Regenerate the papers' simulated figures and check each claim against the data."""
    from incast.experiment import load, packaged
    from incast.verdicts import count_verdicts

    if all_ == bool(names):
        raise ScenarioError("NAME: give experiment names or --all, not both or neither; see 'incast experiments'")
    experiments = [load(p) for p in packaged()] if all_ else [load(n) for n in names or []]
    start = time.perf_counter()
    if against is not None:
        experiments = _references(experiments, against, jobs, every=all_, quiet=as_json)
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


def _references(
    experiments: "list[Experiment]", against: str, jobs: int | None, *, every: bool, quiet: bool
) -> "list[Experiment]":
    """Run the reference runs on ``against`` of each experiment; those that have any (every one named must)."""
    from incast.disputes import record_path
    from incast.reference.base import Unavailable
    from incast.reference_runs import run

    has = [e for e in experiments if any(r.harness == against for c in e.spec.claim for r in c.reference)]
    lacking = [e.name for e in experiments if e not in has]
    if not every and lacking:
        raise ScenarioError(f"NAME: {lacking[0]} has no claim with an {against} reference run ([[claim.reference]])")
    for e in has:

        def progress(done: int, total: int, name: str = e.name) -> None:
            if not quiet:
                print(f"\r{name}: {against} reference runs {done}/{total}", end="", file=sys.stderr, flush=True)

        try:
            n = run(e, against, jobs=jobs, progress=progress)
        except Unavailable as err:
            raise ScenarioError(f"--against: {err}") from None
        if not quiet:
            print(f"\r{e.name}: {plural(n, f'{against} reference run')} recorded in {record_path(e)}", file=sys.stderr)
    return has


def register(app: typer.Typer) -> None:
    """Add the ``reproduce`` verb to ``app``."""
    app.command("reproduce")(reproduce)
