"""The simulator beside a reference: each figure on both sides and their ratio (``incast validate``).

:func:`side_by_side` runs one scenario on both: the scenario the reference
asks both to run (:meth:`~incast.reference.base.Reference.prepare`), the
simulator with the reference's overrides, the reference, and the
simulator's figures as the reference counts them. :func:`comparison` sets
the figures every reference has (:data:`FIGURES`), then the reference's own
(:meth:`~incast.reference.base.Reference.figures`), side by side.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from incast.reference.base import Figure, Reference
from incast.result import Result
from incast.result import run as simulate
from incast.scenario import Scenario

__all__ = ["FIGURES", "SideBySide", "comparison", "side_by_side"]

#: Figures every reference has.
FIGURES = (
    Figure("goodput Mbps", "goodput_mbps"),
    Figure("utilization", "utilization"),
    Figure("blocks", "blocks"),
    Figure("block p50 ms", "block_time_ms", "p50"),
    Figure("block p99 ms", "block_time_ms", "p99"),
    Figure("block max ms", "block_time_ms", "max"),
    Figure("timeouts", "timeouts"),
    Figure("retransmitted packets", "retransmitted_packets"),
    Figure("drops", "drops"),
)


def _figure(data: dict[str, Any], f: Figure) -> float:
    """The figure in ``data``; NaN where that side does not count it (ns-3's open-loop run has no blocks)."""
    value = data.get(f.key) if f.sub is None else (data.get(f.key) or {}).get(f.sub)
    return math.nan if value is None else float(value)


def key(f: Figure) -> str:
    """The figure's key in a comparison: ``goodput_mbps``, ``block_time_ms.p50``."""
    return f.key if f.sub is None else f"{f.key}.{f.sub}"


def comparison(
    simulator: dict[str, Any], measured: dict[str, Any], name: str, figures: tuple[Figure, ...] = FIGURES
) -> dict[str, dict[str, float | None]]:
    """Each figure: ``simulator``, the reference ``name`` and ``ratio`` (reference / simulator, or None)."""
    out: dict[str, dict[str, float | None]] = {}
    for f in figures:
        a, b = _figure(simulator, f), _figure(measured, f)
        ratio = b / a if a and not math.isnan(a) and not math.isnan(b) else math.nan
        out[key(f)] = {n: None if math.isnan(v) else v for n, v in (("simulator", a), (name, b), ("ratio", ratio))}
    return out


@dataclass
class SideBySide:
    """One scenario on both sides.

    ``scenario`` as both ran it; ``overrides``, the settings the simulator
    ran with beside it; ``simulator``, its result; ``measured``, what the
    reference's run returned; ``figures``, :func:`comparison` of the two,
    and ``labels`` their names for people; ``notes``, the differences in
    what the two counted.
    """

    reference: Reference
    scenario: Scenario
    overrides: dict[str, Any]
    simulator: Result
    measured: dict[str, Any]
    figures: dict[str, dict[str, float | None]]
    labels: dict[str, str]
    notes: list[str] = field(default_factory=list)

    def shown_overrides(self) -> dict[str, Any]:
        """``overrides`` as JSON shows them: as given, quantities with their units (the engine reads no other)."""
        return dict(self.overrides)

    def to_dict(self, preset: str) -> dict[str, Any]:
        """``incast validate --json``'s object for this scenario."""
        name = self.reference.name
        return {
            "source": "validate",
            "against": name,
            "preset": preset,
            "simulator_overrides": self.shown_overrides(),
            "figures": self.figures,
            "simulator": self.simulator.to_dict(),
            name: self.measured,
        }


def prepared(reference: Reference, scenario: Scenario) -> tuple[Scenario, list[str]]:
    """The scenario both sides run in place of ``scenario``, and the reference's notes on it."""
    s, changes = reference.prepare(scenario)
    return s, reference.notes(s) + changes


def side_by_side(reference: Reference, scenario: Scenario) -> SideBySide:
    """Run ``scenario`` (as :func:`prepared` gives it) in the simulator and in ``reference``.

    The reference's errors pass through (its run's own exceptions).
    """
    s, _ = reference.prepare(scenario)
    overrides = reference.simulator_overrides(s)
    result = simulate(s.with_overrides(overrides) if overrides else s)
    measured = reference.run(s)
    counted, notes = reference.simulator_figures(result)
    figures = FIGURES + reference.figures(measured)
    return SideBySide(
        reference,
        s,
        overrides,
        result,
        measured,
        comparison(counted, measured, reference.name, figures),
        {key(f): f.label for f in figures},
        notes,
    )
