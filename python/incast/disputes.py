"""Reference runs of claims: a claim's ``[[claim.reference]]`` run through ns-2, ns-3 or the testbed, and its record.

A reference run is the experiment's own scenario at each point of the
reference's grid (:meth:`~incast.experiment.Experiment.reference_points`), run
by the harness ``incast validate --against`` names (:func:`harness`). What it
measured is kept in a record beside the experiment file,
``references/<name>.json`` (for a packaged experiment, package data committed
with it), so that ``incast reproduce`` and ``incast report`` check the claim on
the reference's table without running it again; ``incast reproduce NAME
--against ns2`` runs it again (:func:`incast.reference_runs.run`) and rewrites that harness's part.

A point of the record is keyed by what the harness runs
(:meth:`~incast.reference.base.Reference.fingerprint`: for ns-2 the SHA-256 of
its Tcl script), so a point stays valid while the harness would run the same
thing, and a changed scenario, experiment or harness leaves it unused: the
claim's reference then has no result here (:func:`tables` says how many points
are missing), and the claim stays ``fails`` until the run is repeated.

The record::

    {"experiment": "fast08-fig04",
     "harnesses": {"ns2": {"title": "ns-2.35", "commit": "010c6bd", "when": "2026-12-02T01:30:00Z",
                           "notes": ["..."],
                           "points": {"<fingerprint>": {"coords": {"servers": 8}, "seed": 1,
                                                        "metrics": {"goodput_mbps": 162.0, ...},
                                                        "wall_s": 1.9}}}}}
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from incast.errors import ScenarioError
from incast.experiment import HARNESSES, METRICS, TIMEOUT_FRACTIONS, ClaimReference, Experiment, experiments_dir
from incast.files import read_json
from incast.reference.base import Flows
from incast.scenario import Scenario
from incast.verdicts import ReferenceTable

if TYPE_CHECKING:
    import pandas as pd

    from incast.reference.base import Reference

__all__ = [
    "RECORDS",
    "DisputeError",
    "flatten",
    "harness",
    "harness_tables",
    "measure",
    "read_record",
    "record_path",
    "tables",
    "write_record",
]

#: The folder of the records, beside the experiment files.
RECORDS = "references"


class DisputeError(ScenarioError):
    """A record cannot be read or written, or a reference run failed; the message is one line."""


def harness(name: str, *, traced: bool = False, flows: Flows = "own") -> Reference:
    """The reference ``incast validate --against NAME`` runs: ns-2 (``traced``: counting its timeouts by class
    from its traces, as ``--classes`` does), ns-3 (``flows``: its own draws of open-loop traffic or the
    engine's, :class:`~incast.experiment.ClaimReference`), the testbed."""
    from incast.reference.ns2 import Ns2
    from incast.reference.ns3_options import Ns3
    from incast.reference.testbed import Testbed

    if name == "ns2":
        return Ns2(classes=traced)
    if name == "ns3":
        return Ns3(flows=flows)
    if name == "testbed":
        return Testbed()
    raise ScenarioError(f"--against: one of {', '.join(HARNESSES)}, got {name!r}")


def record_path(experiment: Experiment) -> Path:
    """``references/<name>.json`` beside the experiment's file (the packaged folder for one built from a mapping)."""
    folder = experiment.path.parent if experiment.path is not None else experiments_dir()
    return folder / RECORDS / f"{experiment.name}.json"


def read_record(experiment: Experiment) -> dict[str, Any]:
    """The experiment's record (``{"experiment": name, "harnesses": {}}`` when there is none)."""
    path = record_path(experiment)
    if not path.exists():
        return {"experiment": experiment.name, "harnesses": {}}
    doc = read_json(path)
    if (
        not isinstance(doc, dict)
        or doc.get("experiment") != experiment.name
        or not isinstance(doc.get("harnesses"), dict)
    ):
        raise DisputeError(f"{path}: not the record of {experiment.name}'s reference runs")
    return doc


def flatten(measured: Mapping[str, Any]) -> dict[str, float]:
    """A reference's figures (``incast run --json``'s keys) as metrics of :data:`~incast.experiment.METRICS`.

    Sub-figures become ``key.sub``, and one the engine counts at the top level
    (FAST08 Table 3's ``lost_retransmit_dart_ge_thresh``) keeps its own name; a
    figure the reference does not measure is absent, not zero.
    """
    flat: dict[str, float] = {}
    for key, value in measured.items():
        if isinstance(value, Mapping):
            for sub, v in value.items():
                name = f"{key}.{sub}" if f"{key}.{sub}" in METRICS else sub
                if name in METRICS and isinstance(v, (int, float)) and not isinstance(v, bool):
                    flat[name] = float(v)
        elif key in METRICS and isinstance(value, (int, float)) and not isinstance(value, bool):
            flat[key] = float(value)
    timeouts = flat.get("timeouts")
    for fraction, count in TIMEOUT_FRACTIONS.items():
        if count in flat and timeouts is not None:
            flat[fraction] = flat[count] / timeouts if timeouts else math.nan
    return flat


def measure(
    name: str, scenario: Mapping[str, Any], traced: bool, flows: Flows = "own"
) -> tuple[dict[str, float], list[str], float]:
    """Run one point (its ``to_dict()`` form) in harness ``name`` (:func:`harness`): its metrics, the
    harness's notes, the seconds it took."""
    from incast.reference.compare import prepared

    reference = harness(name, traced=traced, flows=flows)
    s, notes = prepared(reference, Scenario.parse(scenario))
    start = time.perf_counter()
    measured = reference.run(s)
    if measured.get("status") not in (None, "complete"):  # the testbed's runs say how they ended
        raise DisputeError(f"{name}: {measured.get('error') or measured.get('status')}")
    return flatten(measured), notes, time.perf_counter() - start


def write_record(experiment: Experiment, record: Mapping[str, Any]) -> None:
    """Write the experiment's record whole or not at all."""
    path = record_path(experiment)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(record, indent=1, allow_nan=True) + "\n", encoding="utf-8")
        tmp.replace(path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise DisputeError(f"{path}: cannot write the record ({e.strerror or e})") from None


def _table(experiment: Experiment, rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The summary (:func:`incast.summary.summarize`) of reference points; metrics a harness lacks are NaN."""
    import pandas as pd

    from incast.summary import summarize

    frame = pd.DataFrame.from_records(rows, columns=[*experiment.axis_names, "seed", *METRICS])
    return summarize(experiment, frame.astype({m: float for m in METRICS}))


#: Fingerprints computed in this process, by harness, its flows and scenario hash (building ns-2's Tcl
#: takes a while).
_FINGERPRINTS: dict[tuple[str, str, str], str | None] = {}


def _fingerprint(reference: ClaimReference, scenario: Scenario) -> str | None:
    """:meth:`~incast.reference.base.Reference.fingerprint` of ``scenario`` on the reference's harness; None if
    refused."""
    key = (reference.harness, reference.flows, scenario.hash)
    if key not in _FINGERPRINTS:
        try:
            _FINGERPRINTS[key] = harness(reference.harness, flows=reference.flows).fingerprint(scenario)
        except ScenarioError:
            _FINGERPRINTS[key] = None
    return _FINGERPRINTS[key]


def _rows(
    experiment: Experiment, reference: ClaimReference, entries: Mapping[str, Any]
) -> tuple[list[dict[str, Any]], int]:
    """The recorded rows of a reference's points, and how many of its points the record lacks."""
    rows, missing = [], 0
    for p in experiment.reference_points(reference):
        fingerprint = _fingerprint(reference, p.scenario)
        entry = entries.get(fingerprint) if fingerprint is not None else None
        if entry is None:
            missing += 1
        else:
            rows.append({**p.coords, "seed": p.seed, **entry["metrics"]})
    return rows, missing


def tables(experiment: Experiment) -> dict[tuple[int, int], ReferenceTable]:
    """Each claim reference's table from the record, keyed by (claim, reference) place; None where it lacks points."""
    if not any(claim.reference for claim in experiment.spec.claim):
        return {}
    record = read_record(experiment)["harnesses"]
    out: dict[tuple[int, int], ReferenceTable] = {}
    for i, claim in enumerate(experiment.spec.claim):
        for j, reference in enumerate(claim.reference):
            part = record.get(reference.harness)
            title = harness(reference.harness).title
            if part is None:
                out[i, j] = ReferenceTable(reference.harness, title, None, "not run")
                continue
            rows, missing = _rows(experiment, reference, part["points"])
            if missing:
                total = missing + len(rows)
                why = f"{missing} of its {total} points ran other settings, or none, in the record of {part['when']}"
                out[i, j] = ReferenceTable(reference.harness, part["title"], None, why)
            else:
                out[i, j] = ReferenceTable(reference.harness, part["title"], _table(experiment, rows))
    return out


def harness_tables(experiment: Experiment) -> dict[str, tuple[str, pd.DataFrame]]:
    """Per harness, its title and the summary of every recorded point its references read (for the figures)."""
    record = read_record(experiment)["harnesses"] if any(c.reference for c in experiment.spec.claim) else {}
    out: dict[str, tuple[str, pd.DataFrame]] = {}
    for name in HARNESSES:
        part = record.get(name)
        if part is None:
            continue
        rows: dict[tuple[Any, ...], dict[str, Any]] = {}
        for claim in experiment.spec.claim:
            for reference in claim.reference:
                if reference.harness == name:
                    for row in _rows(experiment, reference, part["points"])[0]:
                        rows.setdefault(tuple(row[a] for a in [*experiment.axis_names, "seed"]), row)
        if rows:
            out[name] = (part["title"], _table(experiment, list(rows.values())))
    return out
