"""Reading ``run.json``, an experiment's manifest, back: every field checked before anything uses it.

A results folder may have been edited, copied from elsewhere or damaged, so a
manifest is data to check, not to trust: :func:`read` returns it only if each
field :meth:`incast.sweep.SweepResult.manifest` writes has the type and the
values it writes, and otherwise raises :class:`ManifestError` naming the file
and the first bad field (``results/x/run.json: claims[0].text: must be text``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from incast.errors import ScenarioError
from incast.files import read_json

__all__ = ["VERDICTS", "ManifestError", "read"]

#: The verdicts a claim can have.
VERDICTS = ("holds", "fails", "disputed", "not-run")


class ManifestError(ScenarioError):
    """A ``run.json`` that is not a manifest incast wrote; the message names the file and the field."""


def _text(v: Any) -> str | None:
    return None if isinstance(v, str) else "must be text"


def _count(v: Any) -> str | None:
    ok = isinstance(v, int) and not isinstance(v, bool) and v >= 0
    return None if ok else "must be a whole number from 0 up"


def _seconds(v: Any) -> str | None:
    ok = v is None or (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0)
    return None if ok else "must be a number of seconds from 0 up"


def _one_of(*words: str) -> Callable[[Any], str | None]:
    def check(v: Any) -> str | None:
        return None if v in words else f"must be one of {', '.join(words)}"

    return check


_FIELDS: dict[str, Callable[[Any], str | None]] = {
    "name": _text,
    "mode": _one_of("quick", "full"),
    "points": _count,
    "done": _count,
    "cached": _count,
    "computed": _count,
    "wall_s": _seconds,
    "compute_s": _seconds,
    "engine": _text,
}
_CLAIM_FIELDS: dict[str, Callable[[Any], str | None]] = {
    "text": _text,
    "verdict": _one_of(*VERDICTS),
    "detail": _text,
    "reason": _text,
}


def read(path: Path) -> dict[str, Any] | None:
    """The manifest at ``path``, or None if there is none; :class:`ManifestError` if it is not valid."""
    if not os.path.lexists(path):
        return None
    try:
        doc = read_json(path)
    except OSError as e:
        raise ManifestError(f"{path}: {(e.strerror or str(e)).lower()}") from None
    except ScenarioError as e:
        raise ManifestError(str(e)) from None
    why = _problem(doc)
    if why:
        raise ManifestError(f"{path}: {why}")
    return doc  # type: ignore[no-any-return]


def _problem(doc: Any) -> str | None:
    """The first field of ``doc`` that is not as a manifest has it, and what it must be."""
    if not isinstance(doc, dict):
        return "must be a JSON object (a manifest incast wrote)"
    for name, check in _FIELDS.items():
        if name not in doc:
            return f"{name}: missing"
        why = check(doc[name])
        if why:
            return f"{name}: {why}"
    if doc["done"] > doc["points"]:
        return f"done: {doc['done']} is more than points ({doc['points']})"
    claims = doc.get("claims")
    if not isinstance(claims, list):
        return "claims: must be a list"
    for i, claim in enumerate(claims):
        if not isinstance(claim, dict):
            return f"claims[{i}]: must be a table"
        for name, check in _CLAIM_FIELDS.items():
            why = check(claim.get(name)) if name in claim else "missing"
            if why:
                return f"claims[{i}].{name}: {why}"
    tables, figures = doc.get("tables"), doc.get("figures")
    if not isinstance(tables, dict) or not all(isinstance(p, str) for p in tables.values()):
        return "tables: must be a table of paths"
    if not isinstance(figures, list) or not all(isinstance(p, str) for p in figures):
        return "figures: must be a list of paths"
    return None
