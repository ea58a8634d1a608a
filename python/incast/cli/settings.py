"""``incast settings``: every setting a scenario has, from the engine's schema.

Each line gives the dotted name (what ``--set`` and scenario files use), the
type, the default, what a value may be, and the doc line the engine keeps
beside the mechanism that uses it.
"""

import json
import sys
from typing import Annotated

import typer

from incast.errors import ScenarioError

__all__ = ["register", "settings"]


def settings(
    match: Annotated[
        str | None,
        typer.Argument(
            metavar="TEXT", help="Only settings whose name contains TEXT, e.g. rto or tcp.", show_default=False
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per setting, one per line.")] = False,
) -> None:
    """List every setting: dotted name, type, default, what it allows and what it does."""
    from rich.console import Console
    from rich.table import Table

    from incast.scenario import schema

    chosen = [s for s in schema() if match is None or match in s["name"]]
    if not chosen:
        raise ScenarioError(f"settings: no setting's name contains {match!r}; 'incast settings' lists them all")
    if as_json:
        for s in chosen:
            print(json.dumps(s))
        return
    table = Table(show_lines=False, box=None, pad_edge=False)
    for column in ("setting", "default", "allowed", "what it does"):
        table.add_column(column, overflow="fold")
    for s in chosen:
        default = "(required)" if s["name"] == "servers" else "—" if s["default"] is None else json.dumps(s["default"])
        table.add_row(s["name"], default, s["allowed"], s["doc"])
    Console(highlight=False, markup=False, width=None if sys.stdout.isatty() else 160).print(table)


def register(app: typer.Typer) -> None:
    """Add the ``settings`` verb to ``app``."""
    app.command("settings")(settings)
