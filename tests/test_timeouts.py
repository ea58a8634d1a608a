"""Timeout forensics from Python: the per-timeout table, the DART histogram, the class counters.

The classes are FAST08 §5.1 (Table 3, Figure 11) and GIP §III (FLoss-TO, LAck-TO);
``crates/incast-sim/src/tcp/forensics.rs`` defines them.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import incast
from incast import Result, Scenario
from incast.presets import with_preset
from incast.result import BLOCK_COLUMNS, TIMEOUT_COLUMNS

#: FAST08 Table 3's setting, shrunk: 16 servers, 64-packet port, 256 KiB SRU.
TABLE3 = {"servers": 16, "duration": "1s", "switch": {"buffer": "64pkt"}, "tcp": {"recovery": "reno"}}
FAST08_CLASSES = {"full_window_loss", "last_packet_loss", "lost_retransmit", "other"}
GIP_CLASSES = {"floss", "lack", "other"}


@pytest.fixture(scope="module")
def table3() -> Result:
    return incast.run(**TABLE3)


def test_timeouts_table_has_one_row_per_timeout(table3: Result) -> None:
    """FAST08 §5.1: every timeout is recorded and classified."""
    t = table3.timeouts_table
    assert tuple(t.columns) == TIMEOUT_COLUMNS
    assert table3.timeouts > 0 and len(t) == table3.timeouts
    assert set(t["class"]) <= FAST08_CLASSES and set(t["gip_class"]) <= GIP_CLASSES
    assert set(t["side"]) <= {"server", "client"}
    assert t["time_s"].is_monotonic_increasing
    assert not t["spurious"].any()
    assert (t["block"] <= table3.blocks).all()
    assert t["class"].value_counts().to_dict() == {k: v for k, v in table3.timeout_classes.items() if v}


def test_timeout_columns_keep_their_types_and_a_background_flows_client_is_missing() -> None:
    """The table crosses from the engine as typed columns: whole numbers stay
    int64, a background flow's timeout has no client (a missing value in a
    nullable column), and its gip_class counts are the summary's."""
    background = {"tcp_flows": 1, "tcp_to_client": True}  # into the client's port: it times out too
    r = incast.run(servers=16, blocks=5, tcp={"rto_min": "200us"}, background=background)
    t = r.timeouts_table
    reads = t[t["flow"] < 16]
    assert len(reads) == r.timeouts > 0  # the summary counts the reads' timeouts
    assert {c: str(t[c].dtype) for c in ("flow", "block", "backoff", "cwnd_bytes", "dart", "client")} == {
        "flow": "int64", "block": "int64", "backoff": "int64", "cwnd_bytes": "int64", "dart": "int64", "client": "Int64"
    }  # fmt: skip
    bulk = t[t["flow"] == 16]  # the bulk flow comes after the 16 reading connections
    assert len(bulk) > 0 and bulk["client"].isna().all() and reads["client"].eq(0).all()
    assert reads["gip_class"].value_counts().to_dict() == {k: v for k, v in r.gip_timeout_classes.items() if v}


def test_dart_histogram_counts_timeouts_by_dart(table3: Result) -> None:
    """FAST08 Figure 11: the distribution of duplicate ACKs received at timeout."""
    h = table3.dart_histogram()
    assert isinstance(h, pd.Series)
    assert h.index.name == "dart" and h.index.is_monotonic_increasing
    assert h.sum() == table3.timeouts
    assert h.to_dict() == table3.timeouts_table["dart"].value_counts().to_dict()


def test_class_counters_sum_to_timeouts_and_reach_the_json(table3: Result) -> None:
    """FAST08 §5.1 and GIP §III: each classification covers every timeout."""
    assert set(table3.timeout_classes) == FAST08_CLASSES
    assert set(table3.gip_timeout_classes) == GIP_CLASSES
    assert sum(table3.timeout_classes.values()) == table3.timeouts
    assert sum(table3.gip_timeout_classes.values()) == table3.timeouts
    d = json.loads(json.dumps(table3.to_dict(), allow_nan=False))
    assert d["timeout_classes"] == table3.timeout_classes
    assert d["gip_timeout_classes"] == table3.gip_timeout_classes


def test_blocks_table_has_the_unluckiest_flows_timeouts(table3: Result) -> None:
    """GIP §III: timeouts of the most unfortunate flow in each block."""
    b = table3.blocks_table
    assert tuple(b.columns) == BLOCK_COLUMNS
    per_block = table3.timeouts_table.groupby("block").size()
    for block, worst in zip(b["block"], b["max_flow_timeouts"], strict=True):
        assert 0 <= worst <= per_block.get(block, 0)


def test_stats_timeouts_off_keeps_only_the_counters(table3: Result) -> None:
    off = incast.run(Scenario.parse(TABLE3, {"stats.timeouts": False}))
    assert off.scenario.stats.timeouts is False
    assert off.timeout_classes == table3.timeout_classes and off.timeouts == table3.timeouts
    assert tuple(off.timeouts_table.columns) == TIMEOUT_COLUMNS and off.timeouts_table.empty
    assert off.dart_histogram().empty
    assert off.timeouts_table.dtypes["spurious"] == np.dtype(bool)
    assert off.timeouts_table.dtypes["rto_us"] == np.dtype(float)


def test_stats_table_round_trips_through_toml(tmp_path: Path) -> None:
    s = Scenario.parse({"servers": 2, "stats": {"timeouts": False}})
    assert json.loads(s.to_json())["stats"] == {"timeouts": False}
    path = tmp_path / "s.toml"
    path.write_text(s.to_toml(), encoding="utf-8")
    assert "[stats]" in s.to_toml() and Scenario.from_toml(path) == s


def _per_block_from_rows(r: Result) -> dict[str, float]:
    """The summary's per-block timeout figures, reckoned again from the per-timeout table."""
    t = r.timeouts_table
    completed = r.clients.sort_values("client")["blocks"].to_numpy()
    client = t["client"].to_numpy(dtype="int64", na_value=-1)
    read = t[(client >= 0) & (t["block"].to_numpy() < completed[client.clip(0)])]  # blocks completed, no background
    server = read[read["side"] == "server"]
    figures = {}
    for name, rows in (
        ("unluckiest_flow_timeouts_per_block", server),
        ("unluckiest_flow_floss_per_block", server[server["gip_class"] == "floss"]),
        ("unluckiest_flow_lack_per_block", server[server["gip_class"] == "lack"]),
    ):
        worst = rows.groupby(["client", "block"])["flow"].value_counts().groupby(level=["client", "block"]).max()
        figures[name] = float(worst.sum()) / r.blocks
    figures["timed_out_block_fraction"] = len(read[["client", "block"]].drop_duplicates()) / r.blocks
    lost = t[(client >= 0) & (t["class"] == "lost_retransmit")]
    figures["lost_retransmit_dart_ge_thresh"] = int((lost["dart"] >= r.scenario.tcp.dupack_threshold).sum())
    figures["lost_retransmit_dart_lt_thresh"] = int((lost["dart"] < r.scenario.tcp.dupack_threshold).sum())
    return figures


def test_per_block_timeout_figures_are_the_tables_whether_or_not_rows_are_kept() -> None:
    """GIP §III's unluckiest flow (all, FLoss-TOs, LAck-TOs), SIGCOMM09 §2.2's
    timed-out blocks and FAST08 Table 3's DART split, tallied by the engine as
    the run goes: two clients reading on, with GIP's classes and a bulk flow
    into the client whose timeouts belong to no block (it starves client 0,
    which completes one block, while client 1 reads on)."""
    setting = {
        "servers": 24,
        "duration": "300ms",
        "workload": {"clients": 2},
        "tcp": {"rto_min": "1ms", "gip": "333"},
        "background": {"tcp_flows": 1, "tcp_to_client": True},
    }
    r = incast.run(**setting)
    expected = _per_block_from_rows(r)
    assert {name: getattr(r, name) for name in expected} == expected
    assert r.blocks >= 4 and 0 < r.timed_out_block_fraction <= 1
    assert r.unluckiest_flow_floss_per_block > 0 and r.unluckiest_flow_lack_per_block > 0
    assert r.lost_retransmit_dart_ge_thresh + r.lost_retransmit_dart_lt_thresh == r.timeout_classes["lost_retransmit"]
    assert r.timeouts_table["client"].isna().any()  # the bulk flow timed out too
    off = incast.run(Scenario.parse(setting, {"stats.timeouts": False}))
    assert {name: getattr(off, name) for name in expected} == expected


def test_per_block_timeout_figures_are_nan_without_a_completed_block() -> None:
    r = incast.run(servers=4, duration="100us")
    assert r.blocks == 0
    assert math.isnan(r.unluckiest_flow_timeouts_per_block) and math.isnan(r.timed_out_block_fraction)


def test_hosts_answering_at_random_times_lose_fewer_retransmissions() -> None:
    """Servers that answer every ACK in the same fixed time keep a drop-tail port dropping by phase
    (Floyd and Jacobson, 1992), retransmissions included; a random handling time per frame
    (``link.host_jitter``, as the testbed's hosts measure) breaks the lockstep."""
    shape = {"servers": 32, "blocks": 20, "switch": {"buffer": "96KiB"}, "workload": {"sru": "96KiB"}}
    base = with_preset("linux", {**shape, "tcp": {"cc": "cubic", "rto_min": "5ms"}})
    lost = {}
    for jitter in ("0", "30us"):
        r = incast.run(Scenario(**{**base, "link": {"rate": "200Mbps", "host_jitter": jitter}}))
        lost[jitter] = int((r.timeouts_table["class"] == "lost_retransmit").sum())
    assert lost["30us"] < 0.7 * lost["0"], lost
