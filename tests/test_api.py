"""incast.run: a small run end to end, determinism, threads, typed errors."""

from __future__ import annotations

import json
import math
import threading
from typing import Any

import pandas as pd
import pytest

import incast
from incast import IncastError, Result, Scenario, ScenarioError, SimulationError, _core
from incast.result import BLOCK_COLUMNS, FLOW_COLUMNS

SMALL: dict[str, Any] = {"servers": 4, "blocks": 5}
WALL_CLOCK = {"wall_s", "events_per_s"}


def deterministic(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k not in WALL_CLOCK}


@pytest.fixture(scope="module")
def small() -> Result:
    return incast.run(**SMALL)


def test_small_run_returns_sensible_numbers(small: Result) -> None:
    r = small
    assert r.blocks == 5
    assert 0 < r.goodput_mbps <= r.best_goodput_mbps
    assert r.best_goodput_mbps == pytest.approx(949.28, abs=0.01)
    assert r.utilization == pytest.approx(r.goodput_mbps / r.best_goodput_mbps)
    assert r.throughput_mbps >= r.goodput_mbps
    assert r.bytes_delivered >= 5 * 4 * 256 * 1024
    assert r.sim_time_s > 0
    assert r.events > 0 and r.wall_s > 0 and r.events_per_s > 0
    assert r.block_time_ms.p50 <= r.block_time_ms.p99 <= r.block_time_ms.max
    assert r.timeouts >= 0 and r.drops >= 0 and r.retransmitted_packets >= r.fast_retransmits >= 0
    assert r.scenario == Scenario(servers=4, blocks=5)


def test_flows_has_one_row_per_server(small: Result) -> None:
    assert isinstance(small.flows, pd.DataFrame)
    assert tuple(small.flows.columns) == FLOW_COLUMNS
    assert list(small.flows["flow"]) == [0, 1, 2, 3]
    assert small.flows["bytes_delivered"].sum() == small.bytes_delivered
    assert small.flows["drops"].sum() <= small.drops


def test_blocks_table_has_one_row_per_completed_block(small: Result) -> None:
    assert tuple(small.blocks_table.columns) == BLOCK_COLUMNS
    assert list(small.blocks_table["block"]) == [0, 1, 2, 3, 4]
    assert small.blocks_table["time_ms"].max() == pytest.approx(small.block_time_ms.max)
    assert small.blocks_table["start_s"].is_monotonic_increasing


def test_to_dict_is_the_cli_json_object(small: Result) -> None:
    d = small.to_dict()
    for key in (
        "goodput_mbps", "throughput_mbps", "best_goodput_mbps", "utilization", "blocks", "sim_time_s",
        "timeouts", "fast_retransmits", "retransmitted_packets", "drops", "events", "wall_s", "events_per_s",
        "bytes_delivered", "queue_peak_bytes", "scenario",
    ):  # fmt: skip
        assert key in d, key
    assert set(d["block_time_ms"]) == {"p50", "p99", "max"}
    assert json.loads(json.dumps(d, allow_nan=False)) == d
    assert Scenario.parse(d["scenario"]) == small.scenario


def test_run_accepts_a_scenario_a_mapping_or_fields(small: Result) -> None:
    expected = deterministic(small.to_dict())
    for result in (
        incast.run(Scenario(**SMALL)),
        incast.run(dict(SMALL)),
        incast.run({"servers": 2, "blocks": 5}, servers=4),
        incast.run(Scenario(servers=2, blocks=5), servers=4),
    ):
        assert deterministic(result.to_dict()) == expected


def test_run_takes_nested_and_dotted_fields() -> None:
    r = incast.run(servers=2, blocks=2, tcp={"rto_min": "1ms"}, **{"switch.buffer": "64pkt"})
    assert r.scenario.tcp.rto_min == 0.001 and r.scenario.switch.buffer == "64pkt"


def test_same_seed_gives_the_same_result_but_for_wall_clock() -> None:
    a = incast.run(servers=4, blocks=3, seed=9)
    b = incast.run(servers=4, blocks=3, seed=9)
    assert deterministic(a.to_dict()) == deterministic(b.to_dict())
    pd.testing.assert_frame_equal(a.flows, b.flows)
    pd.testing.assert_frame_equal(a.blocks_table, b.blocks_table)


def test_runs_in_two_threads_both_complete_with_serial_results() -> None:
    scenarios = [Scenario(servers=4, blocks=3, seed=s) for s in (1, 2)]
    results: dict[int, Result] = {}

    def work(i: int) -> None:
        results[i] = incast.run(scenarios[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(results) == [0, 1]
    for i, s in enumerate(scenarios):
        assert deterministic(results[i].to_dict()) == deterministic(incast.run(s).to_dict())


def test_a_panic_crosses_as_one_simulation_error_line() -> None:
    """A bug in the engine (a panic) is an ordinary exception of the package's, never PyO3's
    PanicException (a BaseException, which escapes ``except Exception``), and one line."""
    with pytest.raises(SimulationError) as e:
        _core.panic_for_test("boom\nsecond line")
    assert isinstance(e.value, Exception)
    assert str(e.value).startswith("internal error: boom second line (at crates/incast-py/src/lib.rs:")
    assert str(e.value).endswith("a bug in incast: please report it with the scenario")
    with pytest.raises(ScenarioError):  # the guard is left as it was: errors are errors again
        incast.run(servers=0)


def test_invalid_scenario_raises_scenario_error() -> None:
    with pytest.raises(
        ScenarioError, match=r"^servers: 0 runs no reads and nothing else runs: give traffic\.load, traffic\.query_rate"
    ):
        incast.run(servers=0)
    with pytest.raises(ScenarioError, match=r"^switch\.buffer: 1000 bytes cannot hold one full frame"):
        incast.run(servers=4, switch={"buffer": "1000B"})
    with pytest.raises(TypeError, match="takes a Scenario"):
        incast.run(42)  # type: ignore[arg-type]


def test_error_classes_form_one_hierarchy() -> None:
    assert issubclass(ScenarioError, IncastError) and issubclass(SimulationError, IncastError)
    assert issubclass(IncastError, Exception) and not issubclass(ScenarioError, SimulationError)
    assert incast.errors.ScenarioError is _core.ScenarioError
    assert ScenarioError.__module__ == "incast._core"


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ("not json", r"^scenario: not JSON: expected .* at line 1 column 2$"),
        ('{"servers": 4, "bogus": 1}', r"^bogus: unknown setting; a scenario has servers, seed, blocks, duration"),
        ('{"servers": 0}', r"^servers: 0 runs no reads and nothing else runs: give traffic\.load, traffic\.query_rate"),
        (
            '{"servers": 4, "tcp": {"rto_min": "1s", "rto_max": "500ms"}}',
            r"^tcp\.rto_min: must not exceed tcp\.rto_max",
        ),
    ],
)
def test_the_engine_reads_and_checks_the_users_shape(payload: str, message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        _core.run(payload)


def test_version_is_the_engine_version() -> None:
    assert incast.__version__ == _core.engine_version()
    assert incast.__version__.count(".") == 2


def test_block_percentiles_are_nan_without_a_completed_block() -> None:
    r = incast.run(servers=1, duration="1us")
    assert r.blocks == 0 and len(r.blocks_table) == 0
    assert tuple(r.blocks_table.columns) == BLOCK_COLUMNS
    assert all(math.isnan(x) for x in r.block_time_ms)
    assert r.to_dict()["block_time_ms"] == {"p50": None, "p99": None, "max": None}


def test_the_servers_rtt_is_taken_as_each_request_after_a_connections_first_arrives() -> None:
    one = incast.run(incast.Scenario.parse({"servers": 2, "blocks": 1}))
    assert math.isnan(one.server_srtt_ms) and math.isnan(one.server_rto_ms), "no second request: nothing to take"
    r = incast.run(incast.Scenario.parse({"servers": 1, "blocks": 4, "tcp": {"rto_min": "5ms"}}))
    # One server alone: its smoothed RTT is the 100 us round trip plus its own queueing, well
    # under a millisecond, and its RTO the 5 ms floor.
    assert 0.1 <= r.server_srtt_ms < 1.0
    assert r.server_rto_ms == pytest.approx(5.0)
