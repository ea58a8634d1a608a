"""``incast experiments``: the experiments and the verdict of their last run.

Lists the studies of one's own that ran under the results directory
(``--results DIR``; by default ``results`` in the current directory, where
``incast sweep`` and ``incast reproduce`` write) first, then every packaged
experiment of the papers, run or not.
"""

import json
import sys
from typing import Annotated

import typer

__all__ = ["experiments", "register", "status"]


def status(manifest: dict[str, object] | str | None) -> str:
    """``claims hold``, ``N of M claims fail``, or ``not run`` for a run's manifest (a text: why it is unreadable)."""
    if manifest is None:
        return "not run"
    if isinstance(manifest, str):
        return manifest
    claims = manifest.get("claims")
    verdicts = [c.get("verdict") for c in claims] if isinstance(claims, list) else []
    fails = verdicts.count("fails") + verdicts.count("disputed")
    not_run = verdicts.count("not-run")
    mode = manifest.get("mode", "")
    if fails:
        return f"{fails} of {len(verdicts)} claims fail ({mode})"
    if not_run:
        return f"{not_run} of {len(verdicts)} claims not run ({mode})"
    return f"claims hold ({mode})" if verdicts else f"ran, no claims ({mode})"


def experiments(
    out: Annotated[
        str,
        typer.Option(
            "--results",
            "--out",
            metavar="DIR",
            help="Results directory to read verdicts and studies of your own from (default: ./results).",
            show_default=False,
        ),
    ] = "results",
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per experiment.")] = False,
) -> None:
    """List your studies found in the results directory, then the papers' experiments, and their status."""
    from incast.experiment import Meta, load, packaged
    from incast.manifest import ManifestError
    from incast.report import own_studies
    from incast.sweep import read_manifest

    found: list[tuple[Meta, dict[str, object] | str | None, int]] = [
        (meta, manifest, len((manifest or {}).get("claims", []))) for meta, manifest in own_studies(out)
    ]
    for path in packaged():
        experiment = load(path)
        meta = experiment.spec.meta
        try:
            manifest: dict[str, object] | str | None = read_manifest(out, meta.name)
        except ManifestError as e:
            print(f"warning: {e}", file=sys.stderr)
            manifest = "unreadable run.json"
        found.append((meta, manifest, len(experiment.spec.claim)))
    rows: list[tuple[str, ...]] = []
    for meta, manifest, claims in found:
        if as_json:
            doc = {"name": meta.name, "paper": meta.paper, "figure": meta.figure, "section": meta.section,
                   "title": meta.title, "status": status(manifest), "claims": claims}  # fmt: skip
            print(json.dumps(doc))
        else:
            rows.append((meta.name, meta.paper or "-", meta.figure or "-", status(manifest), meta.title))
    if as_json:
        return
    rows.insert(0, ("experiment", "paper", "figure", "status", "title"))
    widths = [max((len(r[i]) for r in rows), default=0) for i in range(4)]
    for row in rows:
        print(" ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)), row[4])


def register(app: typer.Typer) -> None:
    """Add the ``experiments`` verb to ``app``."""
    app.command("experiments")(experiments)
