"""Run a scenario and read its result.

    >>> import incast
    >>> r = incast.run(servers=4, blocks=5)
    >>> r.goodput_mbps, r.timeouts, len(r.flows)

:func:`run` makes exactly one call into the engine, with the GIL released, so
runs in several threads proceed in parallel. The engine returns the summary,
one row per flow and one row per completed block (``crates/incast-sim/src/stats``);
:class:`Result` exposes the summary as attributes and the rows as DataFrames.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping
from typing import Any, NamedTuple

import pandas as pd
from pydantic import ValidationError

from incast import _core
from incast.config import Scenario
from incast.errors import ScenarioError, describe_validation_error, python_field

__all__ = ["BLOCK_COLUMNS", "FLOW_COLUMNS", "BlockTimes", "Result", "run"]

#: Columns of :attr:`Result.flows`, one row per connection (server).
FLOW_COLUMNS = (
    "flow",
    "bytes_delivered",
    "bytes_sent",
    "data_packets_sent",
    "retransmitted_packets",
    "timeouts",
    "fast_retransmits",
    "max_cwnd_bytes",
    "drops",
)
#: Columns of :attr:`Result.blocks_table`, one row per completed block.
BLOCK_COLUMNS = ("block", "start_s", "time_ms")


class BlockTimes(NamedTuple):
    """Block completion time percentiles in milliseconds (NaN when no block completed)."""

    p50: float
    p99: float
    max: float


def _f(value: Any) -> float:
    """An engine float; the engine's JSON writes NaN as null."""
    return math.nan if value is None else float(value)


class Result:
    """What one run produced.

    Summary attributes (see ``crates/incast-sim/src/stats/mod.rs`` for their exact
    definitions): ``goodput_mbps``, ``throughput_mbps``, ``best_goodput_mbps``,
    ``utilization``, ``blocks``, ``sim_time_s``, ``bytes_delivered``, ``timeouts``,
    ``fast_retransmits``, ``retransmitted_packets``, ``drops``, ``block_time_ms``
    (p50/p99/max), ``data_packets``, ``packets_sent``, ``packets_delivered``,
    ``packets_in_flight``, ``queue_peak_bytes``, ``events``. Besides: ``wall_s``
    (wall-clock seconds of the engine call), ``events_per_s``, the resolved
    ``scenario``, and two DataFrames: ``flows`` (one row per server) and
    ``blocks_table`` (one row per completed block).
    """

    goodput_mbps: float
    throughput_mbps: float
    best_goodput_mbps: float
    utilization: float
    blocks: int
    sim_time_s: float
    bytes_delivered: int
    timeouts: int
    fast_retransmits: int
    retransmitted_packets: int
    drops: int
    block_time_ms: BlockTimes
    data_packets: int
    packets_sent: int
    packets_delivered: int
    packets_in_flight: int
    queue_peak_bytes: int
    events: int

    def __init__(self, scenario: Scenario, engine_result: Mapping[str, Any], wall_s: float) -> None:
        self.scenario = scenario
        self.wall_s = wall_s
        self._summary: dict[str, Any] = dict(engine_result["summary"])
        for key, value in self._summary.items():
            if key == "block_time_ms":
                value = BlockTimes(_f(value.get("p50")), _f(value.get("p99")), _f(value.get("max")))
            elif value is None or isinstance(value, float):
                value = _f(value)
            setattr(self, key, value)
        self.flows = _frame(engine_result["flows"], FLOW_COLUMNS)
        self.blocks_table = _frame(engine_result["blocks"], BLOCK_COLUMNS)

    @property
    def events_per_s(self) -> float:
        """Engine events processed per wall-clock second."""
        return self.events / self.wall_s if self.wall_s > 0 else math.nan

    def to_dict(self) -> dict[str, Any]:
        """The summary, ``wall_s``, ``events_per_s`` and the resolved ``scenario``: the CLI's ``--json`` object.

        JSON-safe: NaN (e.g. block-time percentiles of a run with no block) becomes ``None``.
        """
        out: dict[str, Any] = {}
        for key, value in self._summary.items():
            out[key] = dict(value) if isinstance(value, Mapping) else value
        out["wall_s"] = self.wall_s
        eps = self.events_per_s
        out["events_per_s"] = None if math.isnan(eps) else eps
        out["scenario"] = self.scenario.to_dict()
        return out

    def __repr__(self) -> str:
        return (
            f"<Result {self.scenario.describe()}: goodput {self.goodput_mbps:.1f} Mbps "
            f"({self.utilization:.1%}), {self.blocks} blocks, {self.timeouts} timeouts>"
        )


def _frame(rows: list[dict[str, Any]], columns: tuple[str, ...]) -> pd.DataFrame:
    if rows:
        return pd.DataFrame.from_records(rows)
    return pd.DataFrame({c: pd.Series(dtype="float64" if c.endswith(("_s", "_ms")) else "int64") for c in columns})


def _scenario(scenario: Scenario | Mapping[str, Any] | None, fields: Mapping[str, Any]) -> Scenario:
    if isinstance(scenario, Scenario):
        return scenario.with_overrides(fields) if fields else scenario
    if scenario is None:
        return Scenario.parse({}, fields)
    if isinstance(scenario, Mapping):
        return Scenario.parse(scenario, fields)
    raise TypeError(f"run() takes a Scenario, a mapping or keyword fields, not {type(scenario).__name__}")


def run(scenario: Scenario | Mapping[str, Any] | None = None, /, **fields: Any) -> Result:
    """Run one scenario to its stop condition.

    ``scenario`` is a :class:`~incast.config.Scenario`, a mapping in the TOML
    shape, or omitted; keyword ``fields`` (``servers=16``, ``blocks=5``,
    ``tcp={"rto_min": "1ms"}`` or dotted names through ``**{"tcp.rto_min": "1ms"}``)
    override it. Raises :class:`~incast.errors.ScenarioError` for an invalid
    scenario and :class:`~incast.errors.SimulationError` if the engine fails.
    """
    try:
        resolved = _scenario(scenario, fields)
    except ValidationError as e:  # pragma: no cover - parse() already converts
        raise ScenarioError(describe_validation_error(e)) from e
    payload = resolved.to_engine_json()
    start = time.perf_counter()
    try:
        out = _core.run_json(payload)
    except ScenarioError as e:
        raise ScenarioError(python_field(str(e))) from e
    wall_s = time.perf_counter() - start
    return Result(resolved, json.loads(out), wall_s)
