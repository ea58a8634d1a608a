"""Several clients reading at once: ``workload.clients``, ``workload.server_sets``, ``--clients``, ``--server-sets``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import incast
from incast.cli import main
from incast.errors import ScenarioError
from incast.result import BACKGROUND_COLUMNS, CLIENT_COLUMNS
from incast.topology import read_topology

#: Two clients, one server each, 1 MiB per block: no incast, only the sharing of links.
ONE_SERVER_EACH = {"servers": 1, "duration": "200ms", "workload": {"sru": "1MiB", "clients": 2}}


def test_disjoint_clients_each_get_their_own_link_and_shared_ones_split_the_server() -> None:
    disjoint = incast.run(ONE_SERVER_EACH, **{"workload.server_sets": "disjoint"})
    shared = incast.run(ONE_SERVER_EACH)
    one_link = disjoint.best_goodput_mbps / 2
    assert all(g > 0.9 * one_link for g in disjoint.client_goodput_mbps), disjoint.client_goodput_mbps
    assert shared.goodput_mbps < one_link
    assert all(0.4 * one_link < g < 0.6 * one_link for g in shared.client_goodput_mbps), shared.client_goodput_mbps


def test_clients_table_and_client_columns_split_the_run() -> None:
    r = incast.run(
        servers=3, blocks=4, duration="1s", workload={"sru": "64KiB", "clients": 2}, background={"tcp_flows": 1}
    )
    assert tuple(r.clients.columns) == CLIENT_COLUMNS
    assert list(r.clients["client"]) == [0, 1]
    assert r.clients["goodput_mbps"].sum() == pytest.approx(r.goodput_mbps)
    assert list(r.clients["goodput_mbps"]) == r.client_goodput_mbps
    assert (r.clients["blocks"] >= 4).all() and r.clients["blocks"].sum() == r.blocks
    assert list(r.flows["client"]) == [0, 0, 0, 1, 1, 1]
    assert list(r.flows["server"]) == [0, 1, 2, 0, 1, 2]
    assert r.blocks_table.groupby("client").size().tolist() == r.clients["blocks"].tolist()
    assert tuple(r.background.columns) == BACKGROUND_COLUMNS and len(r.background) == 1
    assert str(r.timeouts_table["client"].dtype) == "Int64"
    assert r.to_dict()["client_goodput_mbps"] == r.client_goodput_mbps


def test_one_client_keeps_the_single_client_result() -> None:
    plain = incast.run(servers=8, blocks=5, seed=3)
    explicit = incast.run(servers=8, blocks=5, seed=3, workload={"clients": 1, "server_sets": "disjoint"})
    assert (plain.goodput_mbps, plain.timeouts, plain.events) == (
        explicit.goodput_mbps,
        explicit.timeouts,
        explicit.events,
    )
    assert plain.client_goodput_mbps == [plain.goodput_mbps]


TWO_CLIENTS_FILE = """\
nodes = [
    {name = "c0", kind = "client"},
    {name = "c1", kind = "client"},
    {name = "s0", kind = "server"},
    {name = "s1", kind = "server"},
    {name = "sw", kind = "switch"},
]
links = [{a = "c0", b = "sw"}, {a = "c1", b = "sw"}, {a = "s0", b = "sw"}, {a = "s1", b = "sw"}]
"""


def test_a_topology_file_lists_one_client_node_per_client(tmp_path: Path) -> None:
    path = tmp_path / "two.toml"
    path.write_text(TWO_CLIENTS_FILE)
    topology = read_topology(path)
    r = incast.run(
        servers=1, blocks=2, topology=topology, workload={"sru": "64KiB", "clients": 2, "server_sets": "disjoint"}
    )
    assert sorted(r.ports["peer"]) == ["c0", "c1", "s0", "s1"]
    with pytest.raises(
        ScenarioError, match='^topology.nodes: lists 2 nodes of kind "client" but workload.clients = 3$'
    ):
        incast.run(servers=2, blocks=2, topology=topology, workload={"clients": 3})


def test_pcap_writes_one_file_per_client(tmp_path: Path) -> None:
    r = incast.run(servers=1, blocks=1, workload={"sru": "16KiB", "clients": 2}, trace={"pcap": True})
    names = [p.name for p in r.write_pcap(tmp_path)]
    assert names == ["client-0.pcap", "client-1.pcap", "server-0.pcap"]


def test_cli_flags_reach_the_workload_and_the_summary_lists_each_client(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["run", "--servers", "2", "--blocks", "2", "--sru", "64KiB", "--clients", "3", "--server-sets", "disjoint"]
    assert main([*args, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert (d["scenario"]["workload"]["clients"], d["scenario"]["workload"]["server_sets"]) == (3, "disjoint")
    assert len(d["client_goodput_mbps"]) == 3
    assert main(args) == 0
    out = capsys.readouterr().out
    assert out.startswith("3 clients x 2 servers (disjoint)")
    assert "per client" in out and "0: " in out and "2: " in out


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--clients", "0"], "error: workload.clients: must be a whole number of clients between 1 and 10000, got 0\n"),
        (["--server-sets", "overlap"], "error: workload.server_sets: must be "),
    ],
)
def test_bad_client_flags_print_one_line_and_exit_2(
    args: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--servers", "2", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(expected), err
