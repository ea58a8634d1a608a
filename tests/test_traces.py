"""Traces: the [trace] table, Result.traces DataFrames, Parquet files and ``incast run --trace-dir``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

import incast
from incast import Scenario, ScenarioError
from incast.cli import main
from incast.result import TRACE_COLUMNS

SMALL = {"servers": 4, "blocks": 3, "workload": {"sru": "64KiB"}}
ALL_ON = {"goodput_bin": "5ms", "queue": True, "flows": True, "bbr": True, "block_cwnd": True}


@pytest.fixture(scope="module")
def traced() -> incast.Result:
    return incast.run({**SMALL, "trace": ALL_ON})


@pytest.fixture(scope="module")
def bbr_traced() -> incast.Result:
    return incast.run({**SMALL, "tcp": {"cc": "bbr"}, "trace": {"bbr": True}})


def test_traces_are_off_by_default() -> None:
    r = incast.run(SMALL)
    assert (r.traces.goodput, r.traces.queue, r.traces.flows, r.traces.block_cwnd) == (None, None, None, None)
    assert r.traces.bbr is None
    assert r.traces.items() == []


def test_each_trace_is_a_dataframe_with_its_columns(traced: incast.Result, bbr_traced: incast.Result) -> None:
    for name, dtypes in TRACE_COLUMNS.items():
        frame = getattr((bbr_traced if name == "bbr" else traced).traces, name)
        assert isinstance(frame, pd.DataFrame), name
        assert list(frame.columns) == list(dtypes), name
        assert {c: str(t) for c, t in frame.dtypes.items()} == dtypes, name
        assert len(frame) > 0, name
    assert len(traced.traces.block_cwnd) == 4 * 3
    g = traced.traces.goodput
    assert g["goodput_mbps"].sum() * 1e6 * 0.005 / 8 == pytest.approx(traced.bytes_delivered)


def test_the_bbr_trace_follows_each_bbr_server_through_its_modes(
    traced: incast.Result, bbr_traced: incast.Result
) -> None:
    """Each of the 4 BBR servers starts in STARTUP at the high gain (2/ln 2) and is sampled at
    every ACK; a Reno run with the trace on has no rows."""
    assert len(traced.traces.bbr) == 0
    b = bbr_traced.traces.bbr
    assert set(b["flow"]) == {0, 1, 2, 3}
    first = b.groupby("flow").first()
    assert (first["mode"] == "startup").all()
    assert first["pacing_gain"].tolist() == [739 / 256] * 4
    assert set(b["mode"]) <= {"startup", "drain", "probe_bw", "probe_rtt"}
    assert (b["cwnd_pkts"] >= 1).all() and (b["pacing_rate_bps"] > 0).all()
    assert b["min_rtt_s"].notna().all()  # the handshake's RTT starts the estimate


def test_missing_values_of_the_flow_trace_are_missing(traced: incast.Result) -> None:
    f = traced.traces.flows
    assert f["ssthresh_bytes"].isna().any() and f["ssthresh_bytes"].notna().any()
    assert (f["ssthresh_bytes"].dropna() > 0).all()
    assert f["srtt_us"].notna().all()  # every sample follows the handshake's RTT sample


def test_the_most_goodput_bins_a_trace_keeps_fit_in_bounded_memory() -> None:
    """Ten million 1 ns bins over 10 ms cross as typed columns (they took 1.4 GB as JSON)."""
    code = (
        "import resource, incast\n"
        "r = incast.run(servers=4, duration='10ms', trace={'goodput_bin': '1ns'})\n"
        "print(len(r.traces.goodput), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    rows, rss_kib = int(out[0]), int(out[1])
    assert rows == 10_000_000
    assert rss_kib < 900 * 1024, f"{rss_kib / 1024:.0f} MiB"


def test_traces_do_not_change_the_result(traced: incast.Result) -> None:
    plain = incast.run(SMALL)
    ours, theirs = plain.to_dict(), traced.to_dict()
    for d in (ours, theirs):
        d.pop("wall_s"), d.pop("events_per_s"), d.pop("scenario")
    assert ours == theirs


def test_trace_table_round_trips_toml_and_reaches_the_engine(tmp_path: Path) -> None:
    s = Scenario.parse({"servers": 2, "trace": {"goodput_bin": "1ms", "flows": "true"}})
    assert json.loads(s.to_json())["trace"] == {
        "goodput_bin": "1ms",
        "queue": False,
        "flows": True,
        "bbr": False,
        "block_cwnd": False,
        "pcap": False,
    }
    path = tmp_path / "s.toml"
    path.write_text(s.to_toml())
    assert '[trace]\ngoodput_bin = "1ms"' in s.to_toml()
    assert Scenario.from_toml(path) == s
    assert Scenario.parse(json.loads(json.dumps(s.to_dict()))) == s
    off = Scenario(servers=2)
    assert 'goodput_bin = "off"' in off.to_toml()
    path.write_text(off.to_toml())
    assert Scenario.from_toml(path) == off
    assert s.with_overrides({"trace.goodput_bin": "off"}).trace.goodput_bin is None


@pytest.mark.parametrize("value", ["0", 0, "soon", -1])
def test_goodput_bin_must_be_positive_or_off(value: object) -> None:
    with pytest.raises(ScenarioError, match=r"^trace\.goodput_bin: "):
        Scenario.parse({"servers": 2, "trace": {"goodput_bin": value}})


def test_write_traces_writes_one_parquet_file_per_trace(traced: incast.Result, tmp_path: Path) -> None:
    paths = traced.write_traces(tmp_path / "a" / "b")
    assert sorted(p.name for p in paths) == sorted(f"{n}.parquet" for n in TRACE_COLUMNS)
    assert sorted(p.name for p in (tmp_path / "a" / "b").iterdir()) == sorted(p.name for p in paths)
    queue = pq.read_table(tmp_path / "a" / "b" / "queue.parquet")
    assert b"incast.scenario" in (queue.schema.metadata or {})
    pd.testing.assert_frame_equal(queue.to_pandas(), traced.traces.queue)


def test_cli_trace_dir_writes_readable_parquet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "traces"
    code = main(["run", "--servers", "2", "--blocks", "3", "--trace-dir", str(out), "--json"])
    captured = capsys.readouterr()
    assert code == 0
    names = "goodput.parquet, queue.parquet, flows.parquet, bbr.parquet, block_cwnd.parquet"
    assert captured.err == f"traces: {names} in {out}/\n"
    for name, dtypes in TRACE_COLUMNS.items():
        frame = pd.read_parquet(out / f"{name}.parquet")
        assert list(frame.columns) == list(dtypes), name
    goodput = pd.read_parquet(out / "goodput.parquet")
    assert goodput["time_s"].iloc[1] == pytest.approx(0.005)
    assert json.loads(captured.out)["scenario"]["trace"]["goodput_bin"] == pytest.approx(0.005)


def test_cli_trace_dir_keeps_a_goodput_bin_that_is_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "t"
    args = ["run", "--servers", "1,2", "--blocks", "1", "--set", "trace.goodput_bin=1ms"]
    assert main([*args, "--trace-dir", str(out), "--json"]) == 0
    capsys.readouterr()
    for n in (1, 2):
        goodput = pd.read_parquet(out / f"servers={n}" / "goodput.parquet")
        assert goodput["time_s"].iloc[1] == pytest.approx(0.001)


def test_bad_trace_dir_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    code = main(["run", "--servers", "2", "--blocks", "1", "--trace-dir", str(blocker / "sub")])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err.startswith(f"error: {blocker / 'sub'}: ") and err.count("\n") == 1, err
    assert blocker.read_text() == "not a directory"
