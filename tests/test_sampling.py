"""The servers' sampled sending state: the benchmark's trace file, and the testbed's trace built from it."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from incast import bench
from incast.cli import main
from incast.errors import ScenarioError
from incast.testbed.sampling import TRACE_COLUMNS, collect, trace_file, write_csv


def test_a_bbr_server_traces_its_connections_with_the_mode_its_gains_imply(tmp_path: Path) -> None:
    path = tmp_path / "samples.csv"
    with bench.Server(congestion="bbr", trace=str(path), sample_every="1ms") as s:
        r = bench.read([s.address, s.address], sru="2MiB", blocks=10, congestion="bbr")
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert tuple(rows[0]) == bench.SAMPLE_COLUMNS
    assert {row["flow"] for row in rows} == {"1", "2"}
    assert {row["mode"] for row in rows} <= {"startup", "drain", "probe_bw", "probe_rtt"}
    assert all(float(row["bw_bps"]) >= 0 and row["cwnd_gain"] for row in rows)
    assert r.to_dict()["start_unix_s"] > 1.6e9  # the origin the testbed sets the samples on


def test_a_cubic_server_leaves_the_bbr_columns_empty(tmp_path: Path) -> None:
    path = tmp_path / "samples.csv"
    with bench.Server(congestion="cubic", trace=str(path)) as s:
        bench.read([s.address], sru="1MiB", blocks=5)
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows and all(row["mode"] == row["bw_bps"] == row["pacing_gain"] == "" for row in rows)
    assert all(int(row["cwnd_pkts"]) > 0 for row in rows)


@pytest.mark.parametrize("every", ["0s", "61s", "soon"])
def test_a_bad_sampling_interval_is_one_line_naming_it(every: str, capfd: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ScenarioError, match="^sample_every: "):
        bench.check_sample_every(every)
    capfd.readouterr()
    assert main(["serve", "--port", "0", "--trace", "/tmp/unused.csv", "--sample-every", every]) == 2
    err = capfd.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: "), err


def test_a_trace_file_that_cannot_be_created_is_named(capfd: pytest.CaptureFixture[str]) -> None:
    capfd.readouterr()
    code = main(["serve", "--port", "0", "--trace", "/no/such/dir/samples.csv"])
    err = capfd.readouterr().err
    assert code != 0 and err.count("\n") == 1 and 'sample.path: cannot create "/no/such/dir/samples.csv"' in err


def _server_file(directory: Path, server: int, rows: list[str]) -> None:
    header = ",".join(bench.SAMPLE_COLUMNS)
    trace_file(directory, server).write_text("\n".join([header, *rows]) + "\n")


def test_the_testbed_sets_every_servers_rows_on_the_clients_clock_in_time_order(tmp_path: Path) -> None:
    _server_file(
        tmp_path, 0, ["100.002000,1,probe_bw,196000000,0.00008,1.25,2,200000000,192000000,14,0.00025,3,900,12"]
    )
    _server_file(tmp_path, 1, ["100.001000,1,startup,0,,0,0,,0,10,0.0001,0,1,0"])
    trace = collect(tmp_path, 3, 100.0, 0.001)  # server 2 never wrote its file
    assert trace["columns"] == list(TRACE_COLUMNS) and trace["sample_every_s"] == 0.001
    (first, second) = trace["rows"]
    assert first[:3] == [pytest.approx(0.001), 1, "startup"] and first[4] is None and first[7] is None
    assert second[:10] == [pytest.approx(0.002), 0, "probe_bw", 196_000_000, 8e-5, 1.25, 2.0, 2e8, 1.92e8, 14]
    out = tmp_path / "trace.csv"
    write_csv(trace, out)
    lines = out.read_text().splitlines()
    assert lines[0] == ",".join(TRACE_COLUMNS) and ",startup,0,,0.0,0.0,," in lines[1]
