"""Open-loop traffic from Python and the command line: the flow table, the summary figures, and
one-line refusals of bad input."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import incast
from incast.cli import main
from incast.result import FCT_COLUMNS, QUERY_COLUMNS

RACK = {"servers": 7, "duration": "50ms", "workload": {"kind": "none"}}


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_fct_table_has_a_row_per_flow_and_counts_the_unfinished() -> None:
    r = incast.run({**RACK, "traffic": {"load": 0.5, "sizes": "hadoop", "query_rate": 500.0, "query_fanin": 4}})
    t = r.fct_table
    assert list(t.columns) == list(FCT_COLUMNS)
    assert len(t[t["query"] < 0]) == r.open_flows
    assert int((~t["finished"] & (t["query"] < 0)).sum()) == r.open_flows_unfinished
    done = t[t["finished"]]
    assert (done["delivered_bytes"] == done["size_bytes"]).all()
    assert (done["slowdown"] >= 1 - 1e-9).all()
    assert math.isclose(float(done["slowdown"].iloc[0]), float(done["fct_s"].iloc[0] / done["ideal_s"].iloc[0]))
    assert t.loc[~t["finished"], "fct_s"].isna().all()
    q = r.queries_table
    assert list(q.columns) == list(QUERY_COLUMNS) and len(q) == r.queries > 0
    assert r.query_time_ms["p99"] >= r.query_time_ms["p50"] > 0


def test_a_run_without_traffic_has_an_empty_fct_table_and_no_traffic_figures() -> None:
    r = incast.run(servers=2, blocks=2)
    assert r.fct_table.empty and not hasattr(r, "open_flows")


def test_the_traffic_flag_runs_open_loop_flows(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(
        capsys, "run", "--servers", "7", "--traffic", "websearch:0.5", "--duration", "20ms",
        "--set", "workload.kind=none", "--json",
    )  # fmt: skip
    assert (code, err) == (0, "")
    d = json.loads(out)
    assert d["open_flows"] > 0 and "slowdown_100kb_1mb" in d


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("websearch:1", 'error: traffic.load: must be a number between 0 and 1 (exclusive), got 1.0 (or "off")\n'),
        ("websearch", "error: --traffic: expected SIZES:LOAD like websearch:0.5"),
        ("zipf:0.5", "error: traffic.sizes: cannot read 'zipf'"),
    ],
)
def test_bad_traffic_is_refused_in_one_line(capsys: pytest.CaptureFixture[str], flag: str, message: str) -> None:
    code, out, err = cli(capsys, "run", "--servers", "3", "--traffic", flag, "--duration", "5ms")
    assert (code, out) == (2, "")
    assert err.startswith(message) and err.count("\n") == 1, err


def test_a_completion_time_counted_to_the_senders_ack_is_longer_and_a_bad_end_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    traffic = {"load": 0.3, "sizes": "hadoop"}
    delivered = incast.run({**RACK, "traffic": traffic}).fct_table
    acked = incast.run({**RACK, "traffic": {**traffic, "fct_end": "acked"}}).fct_table
    both = delivered["finished"] & acked["finished"]
    assert both.sum() > 10
    assert (acked.loc[both, "fct_s"] > delivered.loc[both, "fct_s"]).all()
    assert (acked["ideal_s"] > delivered["ideal_s"]).all()
    code, out, err = cli(capsys, "run", "--servers", "3", "--traffic", "hadoop:0.3", "--duration", "5ms",
                         "--set", "workload.kind=none", "--set", "traffic.fct_end=sender")  # fmt: skip
    assert (code, out) == (2, "")
    assert err.startswith('error: traffic.fct_end: must be "delivered" or "acked"') and err.count("\n") == 1, err


def test_a_drain_finishes_the_open_flows_and_a_bad_drain_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    traffic = {"load": 0.5, "sizes": "websearch"}
    cut = incast.run({**RACK, "traffic": traffic})
    drained = incast.run({**RACK, "traffic": {**traffic, "drain": "2s"}})
    assert cut.open_flows_unfinished > 0 and drained.open_flows_unfinished == 0
    assert drained.open_flows == cut.open_flows and drained.sim_time_s > cut.sim_time_s
    code, out, err = cli(capsys, "run", "--servers", "3", "--traffic", "hadoop:0.3", "--duration", "5ms",
                         "--set", "workload.kind=none", "--set", "traffic.drain=0")  # fmt: skip
    assert (code, out) == (2, "")
    assert err.startswith("error: traffic.drain: must be positive") and err.count("\n") == 1, err


def test_a_cdf_file_that_is_not_monotone_is_refused_naming_the_point(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cdf = tmp_path / "sizes.cdf"
    cdf.write_text("# mine\n1000 0.5\n800 0.7\n5000 1\n")
    code, out, err = cli(capsys, "run", "--servers", "3", "--traffic", f"{cdf}:0.3", "--duration", "5ms")
    assert (code, out) == (2, "")
    assert err == "error: traffic.sizes: not monotone: size 800 after 1000 at point 2\n"


def test_a_users_cdf_file_in_a_scenario_is_sampled(tmp_path: Path) -> None:
    cdf = tmp_path / "two.cdf"
    cdf.write_text("3000 0\n3000 1\n")
    r = incast.run({**RACK, "traffic": {"load": 0.2, "sizes": str(cdf)}})
    assert set(r.fct_table["size_bytes"]) == {3000}
    assert r.scenario.traffic.sizes == [[3000, 0.0], [3000, 1.0]]


def test_a_traffic_matrix_file_sends_only_where_it_has_weight(tmp_path: Path) -> None:
    matrix = tmp_path / "matrix.txt"
    rows = ["0 1 0 0", "0 0 0 0", "0 0 0 0", "2 0 0 0"]
    matrix.write_text("# host 0 sends to 1, host 3 to 0\n" + "\n".join(rows) + "\n")
    r = incast.run({"servers": 3, "duration": "50ms", "workload": {"kind": "none"},
                    "traffic": {"load": 0.3, "sizes": "hadoop", "pattern": str(matrix)}})  # fmt: skip
    pairs = set(zip(r.fct_table["src"], r.fct_table["dst"], strict=True))
    assert pairs == {(0, 1), (3, 0)}


def test_a_matrix_of_the_wrong_shape_is_refused_in_one_line(tmp_path: Path) -> None:
    matrix = tmp_path / "matrix.txt"
    matrix.write_text("0 1\n1 0\n")
    with pytest.raises(incast.ScenarioError, match=r"^traffic.pattern: a matrix must be 4 × 4 \(one row"):
        incast.Scenario(servers=3, duration="5ms", traffic={"load": 0.3, "pattern": str(matrix)})


def test_servers_zero_runs_the_fabric_without_reads() -> None:
    fabric = {"duration": "20ms", "topology": {"kind": "fat_tree", "k": 4}, "traffic": {"load": 0.3}}
    alone = incast.run({"servers": 0, **fabric})
    beside = incast.run({"servers": 4, "workload": {"kind": "none"}, **fabric})
    assert alone.scenario.workload.kind == "none" and alone.blocks == 0 and alone.open_flows > 0
    arrivals = ["src", "dst", "size_bytes", "start_s"]
    assert alone.fct_table[arrivals].equals(beside.fct_table[arrivals])
    with pytest.raises(incast.ScenarioError, match=r"^blocks: needs reads: servers = 0 runs none; give a duration$"):
        incast.Scenario(servers=0, blocks=2, topology={"kind": "fat_tree", "k": 4}, traffic={"load": 0.3})


def test_the_command_line_runs_traffic_alone_without_servers(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "run", "--topology", "fat-tree:4", "--traffic", "websearch:0.3", "--duration", "5ms")
    assert (code, err) == (0, "")
    assert out.startswith("no reads, 1Gbps") and "open-loop flows" in out and "block time" not in out
    code, out, err = cli(capsys, "run", "--servers", "4", "--set", "workload.kind=none", "--duration", "5ms")
    assert code == 2 and out == ""
    assert err.strip() == 'error: workload.kind: "none" runs no reads and nothing else runs: ' + (
        "give traffic.load, traffic.query_rate or background flows"
    )


def test_a_flows_path_names_the_switches_its_frames_cross(tmp_path: Path) -> None:
    sizes = tmp_path / "100kb.cdf"
    sizes.write_text("99000 0\n100000 1\n")
    alone = {"servers": 0, "duration": "10ms", "topology": {"kind": "fat_tree", "k": 4}}
    runs = (
        incast.run({**alone, "seed": seed, "traffic": {"load": 0.01, "sizes": str(sizes)}}) for seed in range(1, 50)
    )
    r = next(r for r in runs if len(r.fct_table) == 1)  # the first seed that draws one flow
    (flow,) = r.fct_table.itertuples()
    switches = flow.path.split(">")
    if switches[0][:4] != switches[-1][:4]:  # pods apart: edge, aggregation, core, aggregation, edge
        assert len(switches) == 5 and switches[2].startswith("core")
    # Alone on the fabric, its data frames are the only ones from switch to switch away from its
    # sender; its ACKs, one per two segments, cross the other way.
    segments = math.ceil(flow.size_bytes / 1460)
    busy = {(p.node, p.peer) for p in r.ports.itertuples() if p.frames >= segments and "host" not in p.node + p.peer}
    assert busy == set(zip(switches, switches[1:], strict=False))


def test_a_leaf_spine_flow_crosses_its_hosts_leaves_and_a_sprayed_one_has_no_path() -> None:
    fabric = {"kind": "leaf_spine", "leaves": 4, "spines": 3, "hosts_per_leaf": 4}
    r = incast.run({"servers": 0, "duration": "10ms", "topology": fabric, "traffic": {"load": 0.3, "sizes": "hadoop"}})
    t = r.fct_table
    for flow in t.itertuples():  # hosts go round-robin over the leaves
        there = f"leaf{flow.src % 4}" if flow.src % 4 == flow.dst % 4 else f"leaf{flow.src % 4}>spine"
        assert flow.path.startswith(there) and flow.path.endswith(f"leaf{flow.dst % 4}")
    sprayed = incast.run({"servers": 0, "duration": "10ms", "topology": {**fabric, "ecmp": "packet"},
                          "traffic": {"load": 0.3, "sizes": "hadoop"}})  # fmt: skip
    assert len(sprayed.fct_table) == len(t) and sprayed.fct_table["path"].isna().all()
