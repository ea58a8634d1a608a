"""Verdicts: a claim checked on a summary table, and on the tables of its reference runs.

A claim (:class:`~incast.experiment.Claim`) is a rule on the mean over seeds at
each point it names. :func:`evaluate` checks every claim of an experiment on
its summary table; a claim that fails and carries reference runs
(``[[claim.reference]]``) is checked on each run's table too
(:mod:`incast.disputes` reads them), and is ``disputed`` when every one of
them fails it as well: the paper's own kind of system does not bear it out
under the stated settings either. A reference that bears the claim out, or
has no result here, leaves it ``fails``; what each gave is in the reason.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from incast.experiment import Claim, ClaimReference, Experiment, Scalar
from incast.labels import describe

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ReferenceTable", "ReferenceVerdict", "Verdict", "count_verdicts", "evaluate"]


@dataclass(frozen=True)
class Verdict:
    """A claim checked against a summary table: ``holds``, ``fails``, ``disputed`` or ``not-run``, and why.

    ``detail`` lists every point the claim was checked at; ``reason`` says in one
    line why a claim fails (the points that miss and the one that misses most),
    and what each of its reference runs gave (``disputed``: every one fails it
    too), or why no reference run can bear on it (the claim's ``no_reference``); or why it was not
    run; it is empty when the claim holds.
    ``references`` holds the claim checked on each reference run's table.
    """

    text: str
    verdict: Literal["holds", "fails", "disputed", "not-run"]
    detail: str
    reason: str = ""
    references: tuple[ReferenceVerdict, ...] = ()


@dataclass(frozen=True)
class ReferenceVerdict:
    """A claim checked on one reference run: the harness, its verdict there (``not-run`` when it has no
    result here, with the reason), and every point as :class:`Verdict` lists them."""

    harness: str
    title: str
    verdict: Literal["holds", "fails", "not-run"]
    detail: str
    reason: str = ""

    def to_dict(self) -> dict[str, str]:
        """The verdict as ``run.json`` holds it."""
        return {
            "harness": self.harness,
            "title": self.title,
            "verdict": self.verdict,
            "detail": self.detail,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class ReferenceTable:
    """What a reference run of a claim gave: its summary table, or None and why (not run, stale)."""

    harness: str
    title: str
    summary: pd.DataFrame | None
    missing: str = ""


def count_verdicts(verdicts: Sequence[str]) -> str:
    """``["holds", "fails", "fails"]`` -> ``"1 holds, 2 fail"`` (in the order holds, fails, disputed, not run)."""
    words = {
        "holds": ("holds", "hold"),
        "fails": ("fails", "fail"),
        "disputed": ("disputed", "disputed"),
        "not-run": ("not run", "not run"),
    }
    counts = ((sum(v == verdict for v in verdicts), forms) for verdict, forms in words.items())
    return ", ".join(f"{n} {forms[n != 1]}" for n, forms in counts if n)


def evaluate(
    experiment: Experiment,
    summary: pd.DataFrame | None,
    references: Mapping[tuple[int, int], ReferenceTable] | None = None,
) -> list[Verdict]:
    """Check every claim against ``summary`` (one row per point, ``<metric>_mean`` columns).

    A claim whose points are missing from the table (or whose mean is NaN) is
    ``not-run``. Where a claim leaves an axis free and the table has several
    values of it (an axis added to a copy of an experiment), the claim is
    checked at each value and the detail lists them. A claim that fails is
    checked on the table of each of its reference runs too (``references``,
    keyed by the claim's and the reference's place; :func:`incast.disputes.tables`),
    and is ``disputed`` when every one of them fails it as well.
    """
    verdicts = []
    for i, claim in enumerate(experiment.spec.claim):
        verdict = _check(experiment, claim, summary)
        if claim.reference and verdict.verdict == "fails":
            tables = references or {}
            verdict = _disputed(experiment, claim, verdict, [tables.get((i, j)) for j in range(len(claim.reference))])
        elif claim.no_reference and verdict.verdict == "fails":
            verdict = replace(verdict, reason=f"{verdict.reason}; no reference run: {claim.no_reference}")
        verdicts.append(verdict)
    return verdicts


def _disputed(experiment: Experiment, claim: Claim, ours: Verdict, tables: list[ReferenceTable | None]) -> Verdict:
    """``ours`` (a claim that fails) with its reference runs' verdicts: ``disputed`` when every one fails it too."""
    checked: list[ReferenceVerdict] = []
    for reference, table in zip(claim.reference, tables, strict=True):
        title = table.title if table is not None else reference.harness
        if table is None or table.summary is None:
            why = table.missing if table is not None else "not run"
            checked.append(ReferenceVerdict(reference.harness, title, "not-run", "", why))
            continue
        theirs = _check(experiment, claim, table.summary, held=True)
        verdict: Literal["holds", "fails", "not-run"] = "holds" if theirs.verdict == "holds" else theirs.verdict  # type: ignore[assignment]
        checked.append(ReferenceVerdict(reference.harness, title, verdict, theirs.detail, theirs.reason))
    said = []
    for r, reference in zip(checked, claim.reference, strict=True):
        run = f"{r.title} ({_reference_settings(reference)})"
        command = f"incast reproduce {experiment.name} --against {r.harness}"
        if r.verdict == "fails":
            said.append(f"{run} fails it too: {r.detail}")
        elif r.verdict == "holds":
            said.append(f"{run} bears it out: {r.detail}")
        else:
            said.append(f"{run} has no result here ({r.reason}): {command}")
    disputed = all(r.verdict == "fails" for r in checked)
    return Verdict(
        ours.text, "disputed" if disputed else "fails", ours.detail, "; ".join([ours.reason, *said]), tuple(checked)
    )


def _reference_settings(reference: ClaimReference) -> str:
    """``"blocks 20, seeds 1-3"``: what a reference run sets over the experiment's scenario."""
    parts = [describe(reference.set)] if reference.set else []
    parts.append("seed 1" if reference.seeds == 1 else f"seeds 1-{reference.seeds}")
    return ", ".join(parts)


def _lookup(experiment: Experiment, summary: pd.DataFrame, coords: Mapping[str, Scalar], metric: str) -> float:
    import pandas as pd

    mask = pd.Series(True, index=summary.index)
    for k, v in coords.items():
        mask &= summary[k] == v
    rows = summary.loc[mask, f"{metric}_mean"]
    return float(rows.iloc[0]) if len(rows) == 1 else math.nan


def _holds_row(summary: pd.DataFrame, coords: Mapping[str, Scalar]) -> bool:
    """Whether ``summary`` has a row at ``coords``."""
    import pandas as pd

    mask = pd.Series(True, index=summary.index)
    for k, v in coords.items():
        mask &= summary[k] == v
    return bool(mask.any())


def _per_value(experiment: Experiment, summary: pd.DataFrame, coords: Mapping[str, Scalar]) -> list[dict[str, Scalar]]:
    """``coords`` once per value of the axes it leaves free where several rows match
    (an axis added to a copied experiment): the claim is checked at each."""
    import pandas as pd

    mask = pd.Series(True, index=summary.index)
    for k, v in coords.items():
        mask &= summary[k] == v
    free = [a for a in experiment.axis_names if a not in coords]
    if mask.sum() <= 1 or not free:
        return [dict(coords)]
    values = summary.loc[mask, free].drop_duplicates()
    return [{**coords, **dict(zip(free, row, strict=True))} for row in values.itertuples(index=False)]


def _check(experiment: Experiment, claim: Claim, summary: pd.DataFrame | None, held: bool = False) -> Verdict:
    """The claim on ``summary``; ``held``: at the points the table holds only (a reference's smaller grid)."""
    if summary is None or summary.empty:
        return Verdict(claim.text, "not-run", "no results", "no results")
    results: list[bool] = []
    shown: list[str] = []
    misses: list[tuple[float, str]] = []
    wheres = [c for where in experiment.select(claim.where) for c in _per_value(experiment, summary, where)]
    if held:
        wheres = [c for c in wheres if _holds_row(summary, c)]
        if not wheres:
            return Verdict(claim.text, "not-run", "none of the claim's points", "none of the claim's points")
    for coords in wheres:
        lhs = _lookup(experiment, summary, coords, claim.metric)
        if claim.than is not None:
            other = {**coords, **experiment.select(claim.than.where)[0]} if claim.than.where else coords
            base = _lookup(experiment, summary, other, claim.than.metric or claim.metric)
            rhs = claim.than.scale * base + claim.than.offset
        else:
            rhs = float(claim.value)  # type: ignore[arg-type]
        if math.isnan(lhs) or math.isnan(rhs):
            missing = f"no result at {describe(coords)}"
            return Verdict(claim.text, "not-run", missing, missing)
        ok = _compare(lhs, claim.op, rhs, _tolerance(claim, rhs))
        results.append(ok)
        shown.append(f"{describe(coords)}: {lhs:.4g} {claim.op} {rhs:.4g} {'✓' if ok else '✗'}")
        if not ok:
            need = f"within {_within(claim)} of {rhs:.4g}" if claim.op == "approx" else f"{claim.op} {rhs:.4g}"
            misses.append((_shortfall(lhs, rhs), f"{describe(coords)}: {claim.metric} {lhs:.4g}, needs {need}"))
    holds = all(results) if claim.quantifier == "all" else any(results)
    if holds:
        return Verdict(claim.text, "holds", "; ".join(shown))
    worst = max(misses)[1]
    where = "the only point" if len(results) == 1 else f"{len(misses)} of {len(results)} points miss; furthest"
    return Verdict(claim.text, "fails", "; ".join(shown), f"{where}: {worst}")


def _shortfall(lhs: float, rhs: float) -> float:
    """How far ``lhs`` misses ``rhs``, relative to the larger of the two (0 when equal)."""
    scale = max(abs(lhs), abs(rhs))
    return abs(lhs - rhs) / scale if scale else 0.0


def _tolerance(claim: Claim, rhs: float) -> float:
    """How far from ``rhs`` an ``approx`` claim allows: ``rel_tol`` of it, or ``abs_tol`` in the metric's unit."""
    return claim.abs_tol if claim.abs_tol is not None else (claim.rel_tol or 0.0) * abs(rhs)


def _within(claim: Claim) -> str:
    return f"{claim.abs_tol:.4g}" if claim.abs_tol is not None else f"{claim.rel_tol:.0%}"


def _compare(lhs: float, op: str, rhs: float, tolerance: float) -> bool:
    if op == "<":
        return lhs < rhs
    if op == "<=":
        return lhs <= rhs
    if op == ">":
        return lhs > rhs
    if op == ">=":
        return lhs >= rhs
    return abs(lhs - rhs) <= tolerance
