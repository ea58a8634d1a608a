"""One self-contained HTML page: every experiment's figure, the paper's claims and the verdicts.

The page reads what ``incast reproduce`` left under the results root (each
experiment's ``run.json`` and ``figure.svg``) and embeds each figure as an
image (``<img src="data:image/svg+xml;base64,...">``), so the single file
opens anywhere without the results directory. What the page shows from the
results folder is data, never markup: every text is escaped, a figure is an
image (an SVG shown as an image runs no script), and each ``run.json`` is
checked field by field (:mod:`incast.manifest`); a packaged experiment whose
manifest is not valid is listed as unreadable, a study of one's own left out,
each with a warning line on standard error naming the file and the field. A
results root with no manifest at all is refused: there is nothing to report. The studies
of one's own found there (every ``<out>/<name>/run.json`` of an experiment
that is not packaged) come first, then the papers' experiments, laid out by
paper: a table of contents with each group's verdict counts, then per group
an overview table, its failing claims each with a one-line reason (the
points that miss, and the one that misses most), and each experiment's figure
(at the page's width), claims with the numbers behind each verdict, and what
its points took to compute. An experiment that never ran is listed as not run, with the command
that runs it.
"""

from __future__ import annotations

import base64
import html
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from incast._core import engine_build
from incast.errors import ScenarioError
from incast.experiment import HARNESSES, PAPERS, Meta, load, packaged
from incast.files import read_bytes
from incast.manifest import ManifestError
from incast.sweep import read_manifest
from incast.verdicts import count_verdicts

__all__ = ["OWN", "own_studies", "write_report"]

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { font-size: 1.35em; margin-top: 2.5em; border-bottom: 2px solid #888; }
h3 { font-size: 1.1em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: .5em 0; }
td, th { padding: .25em .6em; text-align: left; vertical-align: top; }
tr:nth-child(even) { background: #f6f6f6; } .figure img { width: 100%; height: auto; }
.holds { color: #1a7f37; font-weight: 600; } .fails { color: #cf222e; font-weight: 600; }
.disputed { color: #9a6700; font-weight: 600; }
.not-run { color: #888; font-weight: 600; } .detail { color: #555; font-size: 12px; } .meta { color: #555; }
.reason { color: #cf222e; font-size: 13px; } .disputed-reason { color: #9a6700; } .not-run-reason { color: #888; }
"""


#: The papers' citations, by the short names experiment files use (``meta.paper``).
PAPER_TITLES = {
    "FAST08": "Phanishayee et al., Measurement and Analysis of TCP Throughput Collapse in Cluster-based "
    "Storage Systems (FAST 2008)",
    "CMU09": "Vasudevan et al., A (In)Cast of Thousands: Scaling Datacenter TCP to Kiloservers and Gigabits "
    "(CMU-PDL-09-101, 2009)",
    "SIGCOMM09": "Vasudevan et al., Safe and Effective Fine-grained TCP Retransmissions for Datacenter "
    "Communication (SIGCOMM 2009)",
    "RUDE": "Weigle and Feng, Enhancing TCP Performance for Dedicated Clusters and Grids (Rude TCP)",
    "GIP": "Zhang, Ren, Tang and Lin, Taming TCP Incast Throughput Collapse in Data Center Networks (GIP)",
    "DCTCP10": "Alizadeh et al., Data Center TCP (DCTCP) (SIGCOMM 2010)",
    "HPCC19": "Li et al., HPCC: High Precision Congestion Control (SIGCOMM 2019)",
}

#: The group of the studies of one's own, ahead of the papers'.
OWN = "Your studies"

#: The group of the packaged studies that reproduce no paper's figure (``meta.paper`` unset), after the papers'.
PACKAGED_STUDIES = "Studies"
_STUDIES_ABOUT = "Studies packaged with incast: each claim names its published source or is marked as our finding"


def write_report(out: str | Path = "results", path: str | Path | None = None) -> Path:
    """Write the report for the results under ``out`` to ``path`` (default ``<out>/report.html``)."""
    root = Path(out)
    target = Path(path) if path is not None else root / "report.html"
    if not root.is_dir():
        raise ScenarioError(f"--out: {root} is not a folder of results; run 'incast reproduce' first")
    unreadable: dict[str, str] = {}
    by_paper: dict[str, list[tuple[Meta, dict[str, Any] | None]]] = {OWN: own_studies(root)}
    by_paper.update({p: [] for p in (*PAPERS, PACKAGED_STUDIES)})
    for file in packaged():
        meta = load(file).spec.meta
        try:
            manifest = read_manifest(root, meta.name)
        except ManifestError as e:
            print(f"warning: {e}; {meta.name} is listed as unreadable", file=sys.stderr)
            unreadable[meta.name] = str(e)
            manifest = None
        by_paper[meta.paper or PACKAGED_STUDIES].append((meta, manifest))
    if not unreadable and all(m is None for runs in by_paper.values() for _, m in runs):
        raise ScenarioError(f"--out: {root} holds no results (no NAME/run.json); run 'incast reproduce' first")
    every = [c["verdict"] for runs in by_paper.values() for _, m in runs for c in (m or {}).get("claims", [])]
    toc: list[str] = []
    sections: list[str] = []
    for paper, runs in by_paper.items():
        if not runs:
            continue
        verdicts = [c["verdict"] for _, m in runs for c in (m or {}).get("claims", [])]
        ran = sum(m is not None for _, m in runs)
        counts = count_verdicts(verdicts) or "no claims checked"
        anchor = "own" if paper == OWN else paper.lower()
        about = f"Experiments of your own in {root}" if paper == OWN else _STUDIES_ABOUT
        toc.append(
            f"<li><a href='#paper-{anchor}'>{_e(paper)}</a>: {_e(counts)} "
            f"<span class='meta'>({ran} of {len(runs)} experiments run)</span></li>"
        )
        rows = "".join(_overview_row(meta, manifest) for meta, manifest in runs)
        failing = "".join(
            f"<li><a href='#{_e(meta.name)}'>{_e(meta.name)}</a>: {_e(c['text'])}"
            f"<div class='reason {c['verdict']}-reason'>{_e(c['reason'])}</div></li>"
            for meta, manifest in runs
            for c in (manifest or {}).get("claims", [])
            if c["verdict"] in ("fails", "disputed")
        )
        sections.append(
            f"<h2 id='paper-{anchor}'>{_e(paper)}</h2>"
            f"<p class='meta'>{_e(PAPER_TITLES.get(paper, about))}. "
            f"Claims: {_e(counts)}.</p>"
            f"<table><tr><th>experiment</th><th>{'reproduces' if paper in PAPERS else 'title'}</th><th>claims</th>"
            f"<th>run</th></tr>{rows}</table>"
            + (f"<p>Claims that fail or are disputed, and why:</p><ul class='failing'>{failing}</ul>" * bool(failing))
            + "".join(_section(root, meta, manifest, unreadable.get(meta.name)) for meta, manifest in runs)
        )
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>incast: your studies and the papers, simulated</title>
<style>{_STYLE}</style></head><body>
<h1>incast: your studies and the papers' figures, simulated</h1>
<p class="meta">Engine {html.escape(engine_build())}; report written {when}
from <code>{html.escape(str(root))}</code>.
Claims: {html.escape(count_verdicts(every) or "none checked")}.</p>
<nav><ul>{"".join(toc)}</ul></nav>
{"".join(sections)}
</body></html>
"""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(target)
    return target


def own_studies(root: str | Path) -> list[tuple[Meta, dict[str, Any] | None]]:
    """Every experiment that ran under ``root`` and is not packaged, by name, with its ``[meta]`` as
    ``run.json`` keeps it (a name alone if it keeps none; a directory no experiment could write is left out)."""
    root = Path(root)
    packaged_names = {p.stem for p in packaged()}
    studies: list[tuple[Meta, dict[str, Any] | None]] = []
    for run in sorted(root.glob("*/run.json")):
        name = run.parent.name
        if name in packaged_names:
            continue
        try:
            manifest = read_manifest(root, name)
        except ManifestError as e:
            print(f"warning: {e}; the study {name} is left out", file=sys.stderr)
            continue
        meta = None if manifest is None else _meta(name, manifest.get("meta"))
        if meta is not None:
            studies.append((meta, manifest))
    return studies


def _meta(name: str, kept: Any) -> Meta | None:
    """The ``[meta]`` a manifest keeps; the name alone if it keeps none that is valid; None if ``name`` is not one."""
    for table in ({**kept, "name": name} if isinstance(kept, dict) else {}, {"name": name}):
        try:
            return Meta.model_validate(table)
        except ValidationError:
            continue
    return None


def _e(value: object) -> str:
    """Any value as HTML text: escaped, quotes included."""
    return html.escape(str(value), quote=True)


def _overview_row(meta: Meta, manifest: dict[str, Any] | None) -> str:
    verdicts = count_verdicts([c["verdict"] for c in (manifest or {}).get("claims", [])])
    return (
        f"<tr><td><a href='#{_e(meta.name)}'>{_e(meta.name)}</a></td><td>{_e(meta.figure or meta.title)}</td>"
        f"<td>{_e(verdicts or 'no verdicts')}</td><td>{_e(_cost(manifest))}</td></tr>"
    )


def _cost(manifest: dict[str, Any] | None) -> str:
    """``"48 points (quick), 10.7 s to compute"``, or ``"not run"``."""
    if manifest is None:
        return "not run"
    return f"{manifest['done']} points ({manifest['mode']}), {_compute_time(manifest)}"


def _compute_time(manifest: dict[str, Any]) -> str:
    """What the points took to compute (summed over the points, cached ones included), not this run's wall time."""
    compute = manifest.get("compute_s")
    return f"{compute:.1f} s to compute" if isinstance(compute, (int, float)) and compute == compute else "time unknown"


def _section(root: Path, meta: Meta, manifest: dict[str, Any] | None, unreadable: str | None) -> str:
    name = _e(meta.name)
    head = f"<h3 id='{name}'>{_e(meta.heading + (f', {meta.title}' if meta.paper else ''))}</h3>"
    head += f"<p class='meta'>{_e(meta.notes)}</p>" if meta.notes else ""
    if manifest is None:
        why = f"<p class='meta'>Its results are unreadable: {_e(unreadable)}.</p>" if unreadable else ""
        return (
            head
            + "<p class='not-run'>not run</p>"
            + why
            + f"<p class='meta'>Run it with <code>incast reproduce {name}</code> "
            f"(or <code>incast reproduce {name} --quick</code> for the short version), "
            "then <code>incast report</code>.</p>"
        )
    claims = "".join(
        f"<tr><td class='{c['verdict']}'>{c['verdict']}</td><td>{_e(c['text'])}"
        + (f"<div class='reason {c['verdict']}-reason'>{_e(c['reason'])}</div>" if c["reason"] else "")
        + f"<div class='detail'>{_e(c['detail'])}</div></td></tr>"
        for c in manifest["claims"]
    )
    run = (
        f"<p class='meta'>{manifest['done']} of {manifest['points']} points, {manifest['mode']} mode: "
        f"{_e(_compute_time(manifest))}; the last run took {manifest['wall_s'] or 0:.1f} s of wall time "
        f"({manifest['cached']} points from the cache); engine {_e(manifest['engine'])}.</p>"
    )
    return (
        head
        + _figure(root / meta.name / "figure.svg")
        + "".join(_figure(root / meta.name / f"figure-{h}.svg", f"the figure as {h} ran it") for h in HARNESSES)
        + (f"<table>{claims}</table>" if claims else "<p>No claims.</p>")
        + run
    )


def _figure(svg: Path, alt: str = "the figure") -> str:
    """The experiment's figure as an image with the SVG inside a data URL, or nothing if there is none.

    An SVG placed as an image is never parsed as the page's markup and runs no
    script (HTML's image "secure animated mode"), whatever the file holds.
    """
    try:
        data = read_bytes(svg)
    except (OSError, ScenarioError):
        return ""
    url = "data:image/svg+xml;base64," + base64.b64encode(data).decode("ascii")
    return f"<div class='figure'><img alt='{_e(alt)}' src='{url}'></div>"
