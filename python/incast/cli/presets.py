"""``incast presets``: the named bundles of settings ``--preset`` applies."""

import json
import sys
from typing import Annotated

import typer

__all__ = ["presets", "register"]


def presets(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per preset, one per line.")] = False,
) -> None:
    """List the presets with what each sets and why."""
    from rich.console import Console
    from rich.table import Table

    from incast.presets import PRESETS

    if as_json:
        for p in PRESETS.values():
            print(json.dumps({"name": p.name, "summary": p.summary, "why": p.why, "settings": dict(p.settings)}))
        return
    table = Table(show_lines=True)
    for column in ("preset", "settings", "what and why"):
        table.add_column(column)
    for p in PRESETS.values():
        settings = "\n".join(f"{k} = {json.dumps(v)}" for k, v in p.settings.items())
        table.add_row(p.name, settings, f"{p.summary}\n{p.why}")
    Console(highlight=False, width=None if sys.stdout.isatty() else 140).print(table)


def register(app: typer.Typer) -> None:
    """Add the ``presets`` verb to ``app``."""
    app.command("presets")(presets)
