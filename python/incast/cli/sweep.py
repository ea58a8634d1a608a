"""``incast sweep FILE``: run an experiment file's sweep, cached and resumable, and write its tables.

Runs every missing (point, seed) on all cores (``--jobs N`` for fewer), or on a
Dask cluster (``--dask tcp://HOST:8786``; ``--dask local`` starts one here).
Finished points are cached under ``<out>/<name>/cache/``: a rerun reuses them
and an interrupted sweep resumes. Ctrl-C cancels the pending points, keeps
the finished ones, writes the partial tables and exits with status 130.
"""

import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer

from incast.errors import ScenarioError

if TYPE_CHECKING:
    from rich.progress import Progress

    from incast.experiment import Experiment
    from incast.sweep import SweepResult

__all__ = [
    "DaskOption",
    "JobsOption",
    "MaxPointsOption",
    "OutOption",
    "QuickOption",
    "register",
    "run_experiments",
    "sweep",
]

QuickOption = Annotated[
    bool, typer.Option("--quick", help="Fewer seeds and cheaper settings (the file's [quick] table).")
]
OutOption = Annotated[str, typer.Option("--out", metavar="DIR", help="Results root; each experiment writes DIR/NAME/.")]
DaskOption = Annotated[
    str | None,
    typer.Option(
        "--dask", metavar="tcp://HOST:8786|local", help="Run on a Dask cluster; 'local' starts a LocalCluster here."
    ),
]
JobsOption = Annotated[
    int | None,
    typer.Option("--jobs", metavar="N", min=1, max=1024, help="Worker processes, at most 1024 (default: all cores)."),
]
MaxPointsOption = Annotated[
    int | None,
    typer.Option(
        "--max-points", metavar="N", min=1, help="Run a sweep of more than 100,000 (point, seed) pairs, up to N."
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object per experiment; no progress bar.")]


@contextmanager
def _progress(enabled: bool) -> "Iterator[Progress | None]":
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        Task,
        TextColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class _Rate(ProgressColumn):
        def render(self, task: Task) -> Text:
            speed = task.finished_speed or task.speed
            return Text(f"{speed:.1f} points/s" if speed else "– points/s")

    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        _Rate(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=False,
    )
    with bar:
        yield bar


#: A Dask scheduler's address: ``tcp://HOST:PORT``, an IPv6 host in brackets (``tcp://[::1]:8786``).
_DASK_ADDRESS = re.compile(r"tcp://(\[[0-9A-Fa-f:.]+\]|[^\s\[\]:/]+):[0-9]{1,5}", re.ASCII)


def _check_dask(dask: str | None) -> None:
    import importlib.util

    from incast.sweep import DASK_MISSING

    address = dask is not None and dask != "local" and _DASK_ADDRESS.fullmatch(dask)
    if dask is not None and dask != "local" and not (address and int(dask.rsplit(":", 1)[1]) <= 65535):
        raise ScenarioError(f"--dask: must be tcp://HOST:PORT (an IPv6 host in brackets) or local, got {dask!r}")
    if dask is not None and importlib.util.find_spec("distributed") is None:
        raise ScenarioError(DASK_MISSING)


def _check_out(out: str) -> None:
    from pathlib import Path

    if not out.strip():
        raise ScenarioError("--out: give the folder the results go to, e.g. --out results")
    if Path(out).exists() and not Path(out).is_dir():
        raise ScenarioError(f"--out: {out} is not a folder")


def run_experiments(
    experiments: "list[Experiment]",
    *,
    quick: bool,
    out: str,
    dask: str | None,
    jobs: int | None,
    as_json: bool,
    max_points: int | None = None,
) -> "tuple[list[SweepResult], int]":
    """Reproduce each experiment in turn with a progress bar; stop at Ctrl-C or SIGTERM.

    Every input is checked before the first point runs: the Dask address, and
    each experiment's size against ``max_points``. Returns the results and the
    exit status (130 if interrupted).
    """
    from incast.signals import stop_signals_raise_keyboard_interrupt
    from incast.sweep import MAX_POINTS, Interrupted, check_size, reproduce

    _check_dask(dask)
    _check_out(out)
    limit = max_points or MAX_POINTS
    for experiment in experiments:
        check_size(experiment, quick, limit)
    results: list[SweepResult] = []
    with stop_signals_raise_keyboard_interrupt(), _progress(not as_json) as bar:
        for experiment in experiments:
            task = bar.add_task(experiment.name, total=None) if bar else None

            def tick(done: int, total: int, task: object = task) -> None:
                if bar is not None and task is not None:
                    bar.update(task, completed=done, total=total)  # type: ignore[arg-type]

            try:
                result = reproduce(
                    experiment, out=out, quick=quick, dask=dask, jobs=jobs, progress=tick, max_points=limit
                )
            except Interrupted as e:
                if bar is not None:
                    bar.stop()
                r = e.result
                print(
                    f"interrupted: {r.done} of {r.total} points of {r.name} done and kept in {r.directory}; "
                    "rerun to resume",
                    file=sys.stderr,
                )
                return results, 130
            results.append(result)
            if as_json:
                print(json.dumps(result.manifest(), allow_nan=False), flush=True)
    return results, 0


def sweep(
    file: Annotated[
        str, typer.Argument(metavar="FILE", help="Experiment file (TOML) or a packaged experiment's name.")
    ],
    quick: QuickOption = False,
    out: OutOption = "results",
    dask: DaskOption = None,
    jobs: JobsOption = None,
    as_json: JsonOption = False,
    max_points: MaxPointsOption = None,
) -> int:
    """Run an experiment's sweep (cached, resumable) and write its tables and figure."""
    from incast.experiment import load

    experiment = load(file)
    results, status = run_experiments(
        [experiment], quick=quick, out=out, dask=dask, jobs=jobs, as_json=as_json, max_points=max_points
    )
    if status or as_json:
        return status
    _print_summary(experiment, results[0])
    return 0


def _print_summary(experiment: "Experiment", result: "SweepResult") -> None:
    from rich.console import Console
    from rich.table import Table

    from incast.labels import format_number, format_value

    console = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
    table = Table(
        box=None, title=f"{result.name}: {result.done} points ({result.cached} cached), {result.wall_s:.1f} s"
    )
    axes = experiment.axis_names
    metrics = experiment.spec.run.metrics
    several = bool((result.summary["seeds"] > 1).any())
    for name in [*axes, "seeds", *(f"{m} mean ± 95% CI" if several else m for m in metrics)]:
        table.add_column(name, justify="right")
    for _, row in result.summary.iterrows():
        cells = [format_value(a, row[a]) for a in axes] + [format_number(row["seeds"])]
        for m in metrics:
            mean, ci = row[f"{m}_mean"], row[f"{m}_ci95"]
            cells.append(format_number(mean) + (f" ± {format_number(ci)}" if ci == ci else ""))
        table.add_row(*cells)
    console.print(table)
    for v in result.verdicts:
        console.print(f"{v.verdict:>8}  {v.text}")
    console.print(f"tables and figure in {result.directory}")


def register(app: typer.Typer) -> None:
    """Add the ``sweep`` verb to ``app``."""
    app.command("sweep")(sweep)
