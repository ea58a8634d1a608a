"""``incast report``: one self-contained static HTML page of every experiment's figure and verdicts."""

from typing import Annotated

import typer

__all__ = ["register", "report"]


def report(
    out: Annotated[
        str, typer.Option("--out", metavar="DIR", help="Results root that 'incast reproduce' wrote.")
    ] = "results",
    html: Annotated[
        str | None, typer.Option("--html", metavar="FILE", help="Where to write the page (default DIR/report.html).")
    ] = None,
) -> None:
    """Write one HTML page: each experiment's figure, the paper's claims, the verdicts and runtimes."""
    from incast.report import write_report

    print(write_report(out, html))


def register(app: typer.Typer) -> None:
    """Add the ``report`` verb to ``app``."""
    app.command("report")(report)
