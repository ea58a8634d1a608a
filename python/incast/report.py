"""One self-contained HTML page: every experiment's figure, the paper's claims and the verdicts.

The page reads what ``incast reproduce`` left under the results root (each
experiment's ``run.json`` and ``figure.svg``) and inlines the figures as SVG,
so the single file opens anywhere without the results directory. An
experiment that never ran is listed as not run.
"""

from __future__ import annotations

import html
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from incast._core import engine_version
from incast.experiment import count_verdicts, load, packaged
from incast.sweep import read_manifest

__all__ = ["write_report"]

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: .5em 0; }
td, th { padding: .25em .6em; text-align: left; vertical-align: top; }
tr:nth-child(even) { background: #f6f6f6; } .figure svg { max-width: 100%; height: auto; }
.holds { color: #1a7f37; font-weight: 600; } .fails { color: #cf222e; font-weight: 600; }
.not-run { color: #888; font-weight: 600; } .detail { color: #555; font-size: 12px; } .meta { color: #555; }
"""


def write_report(out: str | Path = "results", path: str | Path | None = None) -> Path:
    """Write the report for the results under ``out`` to ``path`` (default ``<out>/report.html``)."""
    root = Path(out)
    target = Path(path) if path is not None else root / "report.html"
    sections: list[str] = []
    rows: list[str] = []
    totals = {"holds": 0, "fails": 0, "not-run": 0}
    for file in packaged():
        meta = load(file).spec.meta
        manifest = read_manifest(root, meta.name)
        claims: list[dict[str, Any]] = manifest.get("claims", []) if manifest else []
        for c in claims:
            totals[c["verdict"]] = totals.get(c["verdict"], 0) + 1
        verdicts = count_verdicts([c["verdict"] for c in claims])
        run = f"{manifest['wall_s']:.1f} s, {manifest['done']} points ({manifest['mode']})" if manifest else "not run"
        rows.append(
            f"<tr><td><a href='#{meta.name}'>{meta.name}</a></td><td>{meta.paper} {html.escape(meta.figure)}</td>"
            f"<td>{html.escape(verdicts or 'no verdicts')}</td><td>{run}</td></tr>"
        )
        sections.append(
            _section(root, meta.name, meta.paper, meta.figure, meta.section, meta.title, meta.notes, manifest)
        )
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>incast: the papers reproduced</title>
<style>{_STYLE}</style></head><body>
<h1>incast: the papers' figures, simulated</h1>
<p class="meta">Engine {html.escape(engine_version())}; report written {when}
from <code>{html.escape(str(root))}</code>.
Claims: {totals['holds']} hold, {totals['fails']} fail, {totals['not-run']} not run.</p>
<table><tr><th>experiment</th><th>reproduces</th><th>claims</th><th>run</th></tr>{''.join(rows)}</table>
{''.join(sections)}
</body></html>
"""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(target)
    return target


def _section(
    root: Path,
    name: str,
    paper: str,
    figure: str,
    section: str,
    title: str,
    notes: str,
    manifest: dict[str, Any] | None,
) -> str:
    head = f"<h2 id='{name}'>{name}: {paper} {html.escape(figure)} (§{html.escape(section)}), {html.escape(title)}</h2>"
    head += f"<p class='meta'>{html.escape(notes)}</p>" if notes else ""
    if manifest is None:
        return head + "<p class='not-run'>not run</p>"
    svg = root / name / "figure.svg"
    figure_html = f"<div class='figure'>{_inline_svg(svg.read_text(encoding='utf-8'))}</div>" if svg.exists() else ""
    claims = "".join(
        f"<tr><td class='{c['verdict']}'>{c['verdict']}</td><td>{html.escape(c['text'])}"
        f"<div class='detail'>{html.escape(c['detail'])}</div></td></tr>"
        for c in manifest.get("claims", [])
    )
    run = (
        f"<p class='meta'>{manifest['done']} of {manifest['points']} points ({manifest['cached']} from the cache), "
        f"{manifest['mode']} mode, {manifest['wall_s']:.1f} s wall time, engine {html.escape(manifest['engine'])}.</p>"
    )
    return head + figure_html + (f"<table>{claims}</table>" if claims else "<p>No claims.</p>") + run


def _inline_svg(text: str) -> str:
    """An SVG file's markup without its XML prolog and DOCTYPE, ready to sit inside HTML."""
    start = text.find("<svg")
    return re.sub(r"<!--.*?-->", "", text[start:], flags=re.S) if start >= 0 else ""
