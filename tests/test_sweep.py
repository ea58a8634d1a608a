"""Sweeps: the same tables on the process pool and on Dask, the cache, Ctrl-C, and resuming a killed run."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from incast.experiment import Experiment, load
from incast.sweep import summarize, sweep, t_975

from conftest import default_sigint

TINY = """
[meta]
name = "fast08-fig98"
paper = "FAST08"
section = "4"
figure = "Figure 98"
title = "a tiny sweep"

[base]
blocks = 3
[base.workload]
sru = "64KiB"

[sweep]
servers = [1, 4, 8]
"tcp.rto_min" = ["200ms", "1ms"]

[run]
seeds = 2

[[claim]]
text = "8 servers collapse with 200 ms"
metric = "goodput_mbps"
where = { servers = 8, "tcp.rto_min" = "200ms" }
op = "<"
than = { where = { servers = 1 }, scale = 0.5 }
"""

#: Twelve points of about 0.2-0.4 s each on one core: long enough to interrupt in the middle.
SLOW = TINY.replace("blocks = 3", 'duration = "20s"').replace('sru = "64KiB"', 'sru = "1MiB"').replace(
    "servers = [1, 4, 8]", "servers = [1, 2, 3, 4, 5, 6]"
).replace("seeds = 2", "seeds = 1")


def experiment(tmp_path: Path, text: str = TINY) -> tuple[Experiment, Path]:
    path = tmp_path / "tiny.toml"
    path.write_text(text)
    return load(path), path


def test_the_process_pool_and_dask_local_give_identical_tables(tmp_path: Path) -> None:
    exp, _ = experiment(tmp_path)
    pool = sweep(exp, out=tmp_path / "pool", jobs=2)
    dask = sweep(exp, out=tmp_path / "dask", dask="local", jobs=2)
    assert (pool.computed, dask.computed) == (12, 12)
    pd.testing.assert_frame_equal(pool.points, dask.points)
    pd.testing.assert_frame_equal(pool.summary, dask.summary)
    for name in ("points", "summary"):
        on_disk = [pd.read_parquet(tmp_path / run / "fast08-fig98" / f"{name}.parquet") for run in ("pool", "dask")]
        pd.testing.assert_frame_equal(*on_disk)
    assert [v.verdict for v in pool.verdicts] == ["holds"]


def test_the_tidy_table_has_one_row_per_point_and_seed_with_axis_columns(tmp_path: Path) -> None:
    exp, _ = experiment(tmp_path)
    result = sweep(exp, out=tmp_path, jobs=1)
    points = pd.read_csv(tmp_path / "fast08-fig98" / "points.csv")
    assert len(points) == 12 and {"servers", "tcp.rto_min", "seed", "goodput_mbps", "timeouts"} <= set(points)
    assert sorted(points["tcp.rto_min"].unique()) == [0.001, 0.2]
    summary = result.summary
    assert len(summary) == 6 and (summary["seeds"] == 2).all()
    row = points[(points.servers == 8) & (points["tcp.rto_min"] == 0.2)]["goodput_mbps"]
    mean = summary[(summary.servers == 8) & (summary["tcp.rto_min"] == 0.2)]
    assert mean["goodput_mbps_mean"].item() == pytest.approx(row.mean())
    assert mean["goodput_mbps_ci95"].item() == pytest.approx(12.706 * row.std(ddof=1) / math.sqrt(2))


def test_a_rerun_reuses_every_cached_point(tmp_path: Path) -> None:
    exp, _ = experiment(tmp_path)
    first = sweep(exp, out=tmp_path, jobs=2)
    again = sweep(exp, out=tmp_path, jobs=2)
    assert (first.cached, first.computed) == (0, 12)
    assert (again.cached, again.computed) == (12, 0)
    pd.testing.assert_frame_equal(first.points, again.points)
    manifest = json.loads((tmp_path / "fast08-fig98" / "run.json").read_text())
    assert (manifest["cached"], manifest["computed"], manifest["points"]) == (12, 0, 12)


def test_changing_one_setting_reruns_only_the_points_it_changes(tmp_path: Path) -> None:
    exp, path = experiment(tmp_path)
    sweep(exp, out=tmp_path, jobs=2)
    wider = load(path.write_text(TINY.replace("servers = [1, 4, 8]", "servers = [1, 4, 8, 16]")) and path)
    result = sweep(wider, out=tmp_path, jobs=2)
    assert (result.cached, result.computed) == (12, 4)


def incast_sweep(path: Path, out: Path) -> subprocess.Popen[str]:
    """``incast sweep`` on one core, in its own process group."""
    return subprocess.Popen(
        [sys.executable, "-m", "incast", "sweep", str(path), "--out", str(out), "--jobs", "1", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=default_sigint,
    )


def wait_for_points(cache: Path, n: int, proc: subprocess.Popen[str]) -> int:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        done = len(list(cache.glob("*.json"))) if cache.exists() else 0
        if done >= n:
            return done
        time.sleep(0.02)
    pytest.fail("the sweep finished or stalled before it could be interrupted")


def test_a_killed_sweep_resumes_and_runs_only_the_rest(tmp_path: Path) -> None:
    _, path = experiment(tmp_path, SLOW)
    cache = tmp_path / "results" / "fast08-fig98" / "cache"
    proc = incast_sweep(path, tmp_path / "results")
    wait_for_points(cache, 3, proc)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()
    kept = len(list(cache.glob("*.json")))
    assert 3 <= kept < 12
    rerun = incast_sweep(path, tmp_path / "results")
    out, err = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, err
    manifest = json.loads(out)
    assert (manifest["cached"], manifest["computed"], manifest["done"]) == (kept, 12 - kept, 12)


def test_ctrl_c_keeps_finished_points_writes_the_partial_table_and_exits_130(tmp_path: Path) -> None:
    _, path = experiment(tmp_path, SLOW)
    results = tmp_path / "results" / "fast08-fig98"
    proc = incast_sweep(path, tmp_path / "results")
    wait_for_points(results / "cache", 2, proc)
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert err.startswith("interrupted: ") and err.count("\n") == 1, err
    kept = len(list((results / "cache").glob("*.json")))
    assert 2 <= kept < 12
    assert len(pd.read_parquet(results / "points.parquet")) == kept
    assert json.loads((results / "run.json").read_text())["done"] == kept


def test_student_t_quantiles_match_the_table_and_its_tail() -> None:
    assert t_975(1) == 12.706 and t_975(30) == 2.042
    assert t_975(60) == pytest.approx(2.000, abs=1e-3)
    assert math.isnan(t_975(0))


def test_one_seed_has_no_confidence_interval(tmp_path: Path) -> None:
    exp, _ = experiment(tmp_path)
    metrics = __import__("incast.experiment", fromlist=["METRICS"]).METRICS
    table = pd.DataFrame({"servers": [1], "tcp.rto_min": [0.2], "seed": [1], **{m: [1.0] for m in metrics}})
    row = summarize(exp, table).iloc[0]
    assert row["seeds"] == 1 and row["goodput_mbps_mean"] == 1.0 and math.isnan(row["goodput_mbps_ci95"])


@pytest.mark.parametrize(
    ("tamper", "why"),
    [
        (lambda d, other: d["metrics"].update({"goodput_mbps": "abc"}), "MAC mismatch"),
        (lambda d, other: other, "computed for another point"),
        (lambda d, other: d["metrics"].update({"goodput_mbps": d["metrics"]["goodput_mbps"] * 10}), "MAC mismatch"),
        (lambda d, other: d["metrics"].update({"drops": None}), "MAC mismatch"),
    ],
)
def test_a_tampered_cache_entry_is_recomputed_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tamper: Any, why: str
) -> None:
    exp, _ = experiment(tmp_path)
    first = sweep(exp, out=tmp_path, jobs=1)
    entries = sorted((tmp_path / "fast08-fig98" / "cache").glob("*.json"))
    victim, donor = entries[0], entries[1]
    doc = json.loads(victim.read_text())
    replaced = tamper(doc, json.loads(donor.read_text()))
    victim.write_text(json.dumps(replaced if replaced is not None else doc))
    again = sweep(exp, out=tmp_path, jobs=1)
    assert (again.cached, again.computed) == (11, 1)
    err = capsys.readouterr().err
    assert f"warning: {victim}: " in err and why in err, err
    pd.testing.assert_frame_equal(first.points, again.points)


def test_an_implausible_entry_with_a_valid_mac_is_recomputed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Goodput above what the link carries, infinite or NaN is never used, even signed with this user's key."""
    from incast.cache import PointCache, point_key

    exp, _ = experiment(tmp_path)
    first = sweep(exp, out=tmp_path, jobs=1)
    cache = PointCache(tmp_path / "fast08-fig98" / "cache")
    point = exp.points()[0]
    victim = cache.directory / f"{point_key(point.scenario)}.json"
    for bad in (10 * 949.28, math.inf, math.nan):
        doc = json.loads(victim.read_text())
        doc["metrics"]["goodput_mbps"] = bad
        doc["mac"] = cache._mac(doc["key"], point.scenario, doc["metrics"], doc["compute_s"])
        victim.write_text(json.dumps(doc))
        again = sweep(exp, out=tmp_path, jobs=1)
        assert again.computed == 1 and "recomputing the point" in capsys.readouterr().err
    pd.testing.assert_frame_equal(first.points, again.points)


def test_a_directory_in_place_of_an_entry_leaves_no_temporary_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exp, _ = experiment(tmp_path)
    sweep(exp, out=tmp_path, jobs=1)
    cache = tmp_path / "fast08-fig98" / "cache"
    victim = sorted(cache.glob("*.json"))[0]
    victim.unlink()
    victim.mkdir()
    (victim / "x").write_text("")
    again = sweep(exp, out=tmp_path, jobs=1)
    assert again.computed == 1 and len(again.points) == 12
    assert "cannot cache this point" in capsys.readouterr().err
    assert not list(cache.glob(".*.tmp"))


def test_the_summary_table_prints_counts_as_integers_and_no_exponents(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from incast.cli import main

    _, path = experiment(tmp_path)
    assert main(["sweep", str(path), "--out", str(tmp_path / "out"), "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.strip().startswith(("1 ", "4 ", "8 "))]
    assert len(rows) == 6 and all(r[2] == "2" for r in rows), out  # servers, tcp.rto_min, seeds
    assert "e+" not in out and "e-" not in out and " 1.0 " not in out, out
    assert main(["experiments", "--out", str(tmp_path / "out")]) == 0
    first = capsys.readouterr().out.splitlines()[0].split()
    assert first[:4] == ["experiment", "paper", "figure", "status"]


ADDED_AXIS = TINY.replace(
    'where = { servers = 8, "tcp.rto_min" = "200ms" }', "where = { servers = 8 }"
) + """
[[plot]]
x = "servers"
y = "goodput_mbps"
"""


def test_an_axis_no_claim_or_plot_names_is_evaluated_and_drawn_per_value(tmp_path: Path) -> None:
    """A claim that leaves an added axis free is checked at each of its values, and
    the figure draws one line per value instead of joining them."""
    from incast.plots import _groups

    exp, _ = experiment(tmp_path, ADDED_AXIS)
    result = sweep(exp, out=tmp_path, jobs=2)
    (verdict,) = result.verdicts
    assert verdict.verdict == "fails", verdict  # 1 ms RTO_min does not collapse at 8 servers
    assert "RTO_min 200ms" in verdict.detail and "RTO_min 1ms" in verdict.detail
    labels = [parts for parts, _ in _groups(exp.spec.plot[0], result.summary)]
    assert labels == [["RTO_min 200ms"], ["RTO_min 1ms"]]


THRESHOLD = ADDED_AXIS + """
[[claim]]
text = "one server fills at least 90 % of the link"
metric = "goodput_mbps"
where = { servers = [1, 4] }
op = ">="
value = 900
"""


def test_a_claim_against_a_fixed_value_is_drawn_as_a_dashed_line_over_its_points(tmp_path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from incast.plots import _thresholds

    exp, _ = experiment(tmp_path, THRESHOLD)
    _, ax = plt.subplots()
    _thresholds(ax, exp, exp.spec.plot[0])
    (line,) = ax.collections
    assert line.get_label() == "claim: goodput_mbps >= 900"
    ((start, end),) = [seg[:, 0] for seg in line.get_segments()]
    assert (start, end) == (1, 4) and line.get_segments()[0][0, 1] == 900
    plt.close("all")


def test_the_manifest_keeps_what_the_points_took_to_compute_across_cached_reruns(tmp_path: Path) -> None:
    exp, _ = experiment(tmp_path)
    first = sweep(exp, out=tmp_path, jobs=1)
    again = sweep(exp, out=tmp_path, jobs=1)
    assert (first.computed, again.cached) == (12, 12)
    assert first.compute_s > 0 and again.compute_s == pytest.approx(first.compute_s, abs=1e-3)
    assert again.manifest()["compute_s"] == round(again.compute_s, 3)


def test_every_paper_name_of_a_setting_names_a_setting_the_engine_has() -> None:
    from incast.labels import _NAMES, axis_label
    from incast.scenario import settings

    assert set(_NAMES) <= set(settings())
    assert (axis_label("tcp.rto_min"), axis_label("tcp.dupack_threshold")) == ("RTO_min", "dupack threshold")
