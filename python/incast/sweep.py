"""Sweeps: run every point of an experiment on all cores or a Dask cluster, cached and resumable.

Each (point, seed) is one :func:`incast.run`. Its metrics are cached in
``<out>/<name>/cache/<key>.json`` where ``key`` is the SHA-256 of the
engine's hash of the resolved scenario and the engine version, so a rerun
reuses finished points and an interrupted sweep resumes where it stopped. An
entry is signed with this user's cache key and checked before use; one that
fails is recomputed with a warning (:mod:`incast.cache`). The executor is a local
``ProcessPoolExecutor`` on all cores, or the ``concurrent.futures`` executor of
a Dask ``distributed.Client`` (``dask="tcp://host:8786"``, or ``"local"`` for a
``LocalCluster`` started here). A local worker dies with the sweep
(``PR_SET_PDEATHSIG`` on Linux), so a sweep killed with SIGKILL leaves no
worker behind; SIGTERM stops a sweep as Ctrl-C does.

A sweep expands at most :data:`MAX_POINTS` (point, seed) pairs unless told
more (``max_points``): the product of the axes' lengths and the seeds is
checked before anything is built.

Output under ``<out>/<name>/``:

* ``points.parquet`` / ``points.csv``: one row per point and seed; the axis
  columns (dotted setting names, SI values, and ``case``), ``seed``, and every
  metric of :data:`incast.experiment.METRICS`.
* ``summary.parquet`` / ``summary.csv``: one row per point; ``seeds``, and for
  each metric ``<metric>_mean`` and ``<metric>_ci95``, the half-width of the
  95% Student-t confidence interval of the mean across seeds (NaN for one seed).
* ``figure-<harness>.png`` / ``.svg``: the figure drawn again from the recorded
  reference runs of its claims (``ns2``, ``ns3``, ``testbed``; :mod:`incast.disputes`).
* ``run.json``: the run's manifest (the experiment's ``[meta]``, mode, points,
  cache hits, wall time, claims and their verdicts, paths of tables and figures).

From a notebook, ``incast.sweep(experiment)`` runs :func:`table`: the same sweep,
its summary returned as a DataFrame.

These files are replaced as one set (:mod:`incast.publish`): a failed write
leaves the previous set whole.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import signal
import sys
import time
import types
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from incast._core import engine_build
from incast.cache import PointCache
from incast.disputes import harness_tables, tables
from incast.errors import ScenarioError
from incast.experiment import HARNESSES, METRICS, TIMEOUT_FRACTIONS, Experiment, Point, load
from incast.publish import publish, recover
from incast.result import Result
from incast.result import run as run_scenario
from incast.scenario import Scenario
from incast.signals import STOP_SIGNALS, signals_held, stop_signals_raise_keyboard_interrupt
from incast.summary import summarize, t_975
from incast.verdicts import Verdict, evaluate

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = [
    "DASK_MISSING",
    "MAX_POINTS",
    "OUTPUTS",
    "Interrupted",
    "SweepResult",
    "check_size",
    "executor",
    "metrics_of",
    "read_manifest",
    "reproduce",
    "simulate",
    "summarize",
    "sweep",
    "t_975",
    "table",
]


class Interrupted(Exception):
    """Ctrl-C during a sweep: the finished points are cached and the partial tables written."""

    def __init__(self, result: SweepResult) -> None:
        super().__init__(f"interrupted: {result.done} of {result.total} points done")
        self.result = result


@dataclass
class SweepResult:
    """What a sweep produced: the tables, where they are, and how much was reused."""

    name: str
    directory: Path
    quick: bool
    total: int
    cached: int
    computed: int
    wall_s: float
    compute_s: float
    points: pd.DataFrame
    summary: pd.DataFrame
    verdicts: list[Verdict] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)
    #: The experiment's ``[meta]`` table: what ``incast report`` heads a study of one's own with.
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def done(self) -> int:
        """Points with a result (cached or computed)."""
        return self.cached + self.computed

    @property
    def tables(self) -> dict[str, str]:
        """Paths of the tidy tables."""
        return {
            f"{t}_{ext}": str(self.directory / f"{t}.{ext}")
            for t in ("points", "summary")
            for ext in ("parquet", "csv")
        }

    def manifest(self) -> dict[str, Any]:
        """The JSON object ``incast reproduce --json`` prints and ``run.json`` holds."""
        return {
            "name": self.name,
            "meta": self.meta,
            "mode": "quick" if self.quick else "full",
            "claims": [
                {
                    "text": v.text,
                    "verdict": v.verdict,
                    "detail": v.detail,
                    "reason": v.reason,
                    "references": [r.to_dict() for r in v.references],
                }
                for v in self.verdicts
            ],
            "points": self.total,
            "done": self.done,
            "cached": self.cached,
            "computed": self.computed,
            "wall_s": round(self.wall_s, 3),
            "compute_s": round(self.compute_s, 3),
            "engine": engine_build(),
            "tables": self.tables,
            "figures": [str(p) for p in self.figures],
        }


# ---------------------------------------------------------------------------
# One point.


def simulate(scenario: Mapping[str, Any]) -> dict[str, float]:
    """Run one scenario (its ``to_dict()`` form) and return its metrics.

    The engine keeps no per-timeout rows here (``stats.timeouts`` off): every
    metric comes from its counters, and the rows of a point with hundreds of
    thousands of timeouts would cost more than its simulation.
    """
    return metrics_of(run_scenario(Scenario.parse(scenario, {"stats.timeouts": False})))


def _timed(scenario: Mapping[str, Any]) -> tuple[dict[str, float], float]:
    """:func:`simulate`, and the seconds it took (engine and metrics); runs in a worker."""
    start = time.perf_counter()
    metrics = simulate(scenario)
    return metrics, time.perf_counter() - start


def metrics_of(result: Result) -> dict[str, float]:
    """Every metric of :data:`~incast.experiment.METRICS` from one result's summary.

    All of them are the engine's summary figures (``crates/incast-sim/src/stats/mod.rs``
    defines each), sub-figures flattened to ``key.sub``: among them the FAST08
    Table 3 split of lost retransmits by DART against the duplicate-ACK
    threshold, GIP's "number of TOs suffered by the unluckiest flow per stripe
    unit" (Fig 1, 16) and SIGCOMM09 §2.2's share of blocks that met a timeout;
    besides them, CMU09 Table 1's spurious fraction two ways
    (:data:`~incast.experiment.TIMEOUT_FRACTIONS`): timeouts F-RTO or Eifel judged
    spurious, and timeouts whose segment was not dropped, over all timeouts.
    """
    d = result.to_dict()
    flat: dict[str, float | None] = {}
    for key, value in d.items():
        if isinstance(value, Mapping) and key != "scenario":
            for sub, v in value.items():
                flat[f"{key}.{sub}"] = v
        elif value is None or isinstance(value, (int, float)):  # None: a NaN the JSON form could not hold
            flat[key] = value
    timeouts = int(d["timeouts"])
    for fraction, count in TIMEOUT_FRACTIONS.items():
        flat[fraction] = int(d[count]) / timeouts if timeouts else math.nan
    # The open-loop traffic's figures are in the summary only when [traffic] is on: NaN without it.
    values = {m: flat.get(m) for m in METRICS}
    return {m: math.nan if v is None else float(v) for m, v in values.items()}


# ---------------------------------------------------------------------------
# Executors.


#: ``PR_SET_PDEATHSIG`` of ``<linux/prctl.h>``: the signal a process gets when the thread that forked it exits.
_PR_SET_PDEATHSIG = 1


def _worker_init(sweep: int, start_method: str) -> None:
    """Start of a local worker: Ctrl-C and SIGTERM are the sweep's to handle, and the worker dies with the sweep.

    Linux's ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` kills the worker when its
    parent exits, however it exits (SIGKILL included). A sweep gone before the
    signal was armed is caught after arming it: a forked worker has been
    handed to another parent (``getppid`` is no longer the sweep); a worker
    started by a fork server, whose parent is that server, asks whether the
    sweep is alive.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)  # held by the sweep while it forked this worker
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if start_method == "fork":
        if os.getppid() != sweep:
            os._exit(1)
        return
    parent = multiprocessing.parent_process()
    if parent is not None and not parent.is_alive():
        os._exit(1)


#: The line a Dask cluster asked for without Dask installed gives.
DASK_MISSING = "--dask: needs the 'distributed' package; install it with: pip install 'incast[dask]'"


@contextmanager
def executor(dask: str | None = None, jobs: int | None = None) -> Iterator[Executor]:
    """A ``concurrent.futures`` executor: a process pool on ``jobs`` cores (all by default),
    or a Dask cluster's (``dask="tcp://host:8786"``; ``"local"`` starts a ``LocalCluster``).
    """
    workers = jobs or os.cpu_count() or 1
    if dask is None:
        context = multiprocessing.get_context()
        pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=context,
            initializer=_worker_init,
            initargs=(os.getpid(), context.get_start_method()),
        )
        try:
            yield pool
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        return
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ScenarioError(DASK_MISSING) from None

    cluster = None
    if dask == "local":
        cluster = LocalCluster(  # type: ignore[no-untyped-call]
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        )
        client = Client(cluster)  # type: ignore[no-untyped-call]
    else:
        try:
            client = Client(dask, timeout="10s")  # type: ignore[no-untyped-call]
        except (OSError, TimeoutError, ValueError) as e:
            raise ScenarioError(f"--dask: cannot reach a Dask scheduler at {dask} ({e})") from None
    try:
        with client.get_executor() as ex:  # type: ignore[no-untyped-call]
            yield ex
    finally:
        client.close()  # type: ignore[no-untyped-call]
        if cluster is not None:
            cluster.close()


# ---------------------------------------------------------------------------
# The sweep.


Progress = Callable[[int, int], None]

#: Most (point, seed) pairs a sweep expands unless told more (a packaged experiment has at most a few thousand).
MAX_POINTS = 100_000


def check_size(experiment: Experiment, quick: bool = False, max_points: int = MAX_POINTS) -> int:
    """The number of (point, seed) pairs of the sweep; ScenarioError if more than ``max_points``.

    Counted from the axes' lengths and the seeds, before any point is built.
    """
    axes = experiment.quick_axes if quick else experiment.axes
    spec = experiment.spec
    seeds = (spec.quick.seeds or spec.run.seeds) if quick else spec.run.seeds
    total = math.prod(len(v) for v in axes.values()) * seeds
    if total > max_points:
        factors = " x ".join([*(f"{len(v)} {k}" for k, v in axes.items()), f"{seeds} seeds"])
        raise ScenarioError(
            f"sweep: {experiment.name} has {total:,} points ({factors}), more than {max_points:,}; "
            "pass --max-points N to run that many"
        )
    return total


def sweep(
    experiment: Experiment,
    *,
    out: str | Path = "results",
    quick: bool = False,
    dask: str | None = None,
    jobs: int | None = None,
    progress: Progress | None = None,
    max_points: int = MAX_POINTS,
) -> SweepResult:
    """Run the missing points of ``experiment``, write its tables, and return them.

    ``progress(done, total)`` is called as points finish. On Ctrl-C or SIGTERM
    the pending points are cancelled, the finished ones kept, the partial
    tables written, and :class:`Interrupted` raised carrying the partial
    result. More than ``max_points`` (point, seed) pairs raise ScenarioError
    before anything is run or written.
    """
    return _run(experiment, Path(out), quick, dask, jobs, progress, max_points, figures=False)


def _run(
    experiment: Experiment,
    out: Path,
    quick: bool,
    dask: str | None,
    jobs: int | None,
    progress: Progress | None,
    max_points: int,
    figures: bool,
) -> SweepResult:
    """Compute the missing points, then publish the tables (and with ``figures`` the figures) as one set."""
    result, interrupted = _compute(experiment, out, quick, dask, jobs, progress, max_points)
    publish(result.directory, OUTPUTS, partial(_write, experiment, result, figures))
    if interrupted:
        raise Interrupted(result)
    return result


def _compute(
    experiment: Experiment,
    out: Path,
    quick: bool,
    dask: str | None,
    jobs: int | None,
    progress: Progress | None,
    max_points: int,
) -> tuple[SweepResult, bool]:
    """Run the missing points; the result (tables not yet written), and whether it was interrupted."""
    check_size(experiment, quick, max_points)
    points = experiment.points(quick)
    directory = out / experiment.name
    recover(directory)
    cache = PointCache(directory / "cache")
    rows: dict[int, dict[str, float]] = {}
    compute_s: dict[int, float] = {}
    todo: list[tuple[int, Point]] = []
    for i, p in enumerate(points):
        hit = cache.get(p)
        if hit is None:
            todo.append((i, p))
        else:
            rows[i], compute_s[i] = hit
    cached = len(rows)
    start = time.perf_counter()
    interrupted = False
    if progress:
        progress(len(rows), len(points))
    if todo:
        workers = min(jobs or os.cpu_count() or 1, len(todo))  # no more processes than points to run
        with stop_signals_raise_keyboard_interrupt(), executor(dask, workers) as ex:
            futures: dict[Future[tuple[dict[str, float], float]], tuple[int, Point]] = {}
            try:
                with signals_held():  # the workers are forked here: a stop waits until they all are
                    futures.update({ex.submit(_timed, p.scenario.to_dict()): (i, p) for i, p in todo})
                for f in as_completed(futures):
                    i, p = futures[f]
                    rows[i], compute_s[i] = f.result()
                    cache.put(p, rows[i], compute_s[i])
                    if progress:
                        progress(len(rows), len(points))
            except KeyboardInterrupt:
                interrupted = True
                for f in futures:
                    f.cancel()
                for f, (i, p) in futures.items():
                    if f.done() and not f.cancelled() and f.exception() is None and i not in rows:
                        rows[i], compute_s[i] = f.result()
                        cache.put(p, rows[i], compute_s[i])
    table = _points_table(experiment, points, rows)
    summary = summarize(experiment, table)
    result = SweepResult(
        name=experiment.name,
        directory=directory,
        quick=quick,
        total=len(points),
        cached=cached,
        computed=len(rows) - cached,
        wall_s=time.perf_counter() - start,
        compute_s=sum(compute_s.values()),
        points=table,
        summary=summary,
        meta=experiment.spec.meta.model_dump(),
    )
    result.verdicts = evaluate(experiment, summary, tables(experiment))
    return result, interrupted


def _points_table(experiment: Experiment, points: list[Point], rows: Mapping[int, Mapping[str, float]]) -> pd.DataFrame:
    import pandas as pd

    records = [{**p.coords, "seed": p.seed, **rows[i]} for i, p in enumerate(points) if i in rows]
    columns = [*experiment.axis_names, "seed", *METRICS]
    return pd.DataFrame.from_records(records, columns=columns)


#: The files of an experiment's output set (:func:`incast.publish.publish` replaces them together).
OUTPUTS = (
    "points.parquet",
    "points.csv",
    "summary.parquet",
    "summary.csv",
    "run.json",
    "figure.png",
    "figure.svg",
    *(f"figure-{h}.{ext}" for h in HARNESSES for ext in ("png", "svg")),
)


def _write(experiment: Experiment, result: SweepResult, figures: bool, folder: Path) -> None:
    """Write the output set of ``result`` into ``folder``: the tables, the figures if asked, ``run.json``."""
    import pyarrow as pa

    meta = {
        b"incast.experiment": experiment.name.encode(),
        b"incast.engine": engine_build().encode(),
        b"incast.mode": (b"quick" if result.quick else b"full"),
    }
    for name, frame in (("points", result.points), ("summary", result.summary)):
        table = pa.Table.from_pandas(_uniform(frame, experiment.axis_names), preserve_index=False)
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), **meta})
        _write_parquet(table, folder / f"{name}.parquet")
        _write_csv(frame, folder / f"{name}.csv")
    if figures:
        from incast.plots import draw

        drawn = draw(experiment, result.summary, folder, quick=result.quick)
        for name, (title, summary) in harness_tables(experiment).items():
            drawn += draw(experiment, summary, folder, stem=f"figure-{name}", source=title)
        result.figures = [result.directory / p.name for p in drawn]
    (folder / "run.json").write_text(json.dumps(result.manifest(), indent=1, allow_nan=False), encoding="utf-8")


def _write_parquet(table: pa.Table, path: Path) -> None:
    import pyarrow.parquet as pq

    pq.write_table(table, path)


def _write_csv(frame: pd.DataFrame, path: Path) -> None:
    frame.to_csv(path, index=False)


def _uniform(frame: pd.DataFrame, axes: list[str]) -> pd.DataFrame:
    """Axis columns mixing numbers and strings (``32768`` and ``"64pkt"``) as strings, for Parquet."""
    mixed = [a for a in axes if frame[a].map(type).nunique() > 1]
    return frame.astype({a: str for a in mixed}) if mixed else frame


def read_manifest(out: str | Path, name: str) -> dict[str, Any] | None:
    """The last ``run.json`` of experiment ``name`` under ``out``, or None if it never ran.

    Raises :class:`~incast.manifest.ManifestError` naming the file and the
    field if the file is there but not a manifest incast wrote.
    """
    from incast.manifest import read

    return read(Path(out) / name / "run.json")


def reproduce(
    experiment: Experiment,
    *,
    out: str | Path = "results",
    quick: bool = False,
    dask: str | None = None,
    jobs: int | None = None,
    progress: Progress | None = None,
    max_points: int = MAX_POINTS,
) -> SweepResult:
    """:func:`sweep`, with the figures drawn and their paths recorded in ``run.json``, all in one set.

    An interrupted sweep still draws what it has before :class:`Interrupted` propagates.
    """
    return _run(experiment, Path(out), quick, dask, jobs, progress, max_points, figures=True)


def table(
    experiment: Experiment | str | Path | Mapping[str, Any],
    *,
    out: str | Path = "results",
    quick: bool = False,
    points: bool = False,
    jobs: int | None = None,
    dask: str | None = None,
) -> pd.DataFrame:
    """Sweep an experiment and return its table as a DataFrame; ``incast.sweep(...)`` calls this.

    ``experiment`` is an :class:`~incast.experiment.Experiment`, an experiment file's path, a
    packaged experiment's name (``"fast08-fig06"``) or the file's tables as a mapping. The
    missing points run as :func:`sweep` runs them (on ``jobs`` cores or a Dask cluster, cached
    and resumable under ``<out>/<name>/``, whose tables it writes). Returned: the summary, one
    row per point with the axis columns, ``seeds``, and ``<metric>_mean`` and ``<metric>_ci95``
    (half-width of the 95% Student-t interval across seeds) for every metric; with
    ``points=True``, one row per point and seed. No figure is drawn (:func:`reproduce` draws it).
    Raises :class:`~incast.experiment.ExperimentError` naming the field of an invalid experiment.

    In a notebook::

        import incast

        df = incast.sweep(
            {
                "meta": {"name": "buffer-study", "title": "Goodput against the switch buffer"},
                "base": {"blocks": 10},
                "sweep": {"servers": [1, 4, 16], "switch.buffer": ["32KiB", "128KiB"]},
                "run": {"seeds": 2},
            }
        )
        df.pivot(index="servers", columns="switch.buffer", values="goodput_mbps_mean")
    """
    if not isinstance(experiment, Experiment):
        experiment = load(experiment)
    result = sweep(experiment, out=out, quick=quick, dask=dask, jobs=jobs)
    return result.points if points else result.summary


class _CallableModule(types.ModuleType):
    """This module, callable: ``incast.sweep(...)`` is :func:`table`, a notebook's one line."""

    def __call__(self, *args: Any, **kwargs: Any) -> pd.DataFrame:
        return table(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
