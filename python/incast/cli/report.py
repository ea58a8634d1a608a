"""``incast report``: one self-contained static HTML page of every experiment's figure and verdicts."""

from typing import Annotated

import typer

__all__ = ["register", "report"]


def report(
    out: Annotated[
        str,
        typer.Option(
            "--out",
            "--results",
            metavar="DIR",
            help="Results directory 'incast sweep' and 'incast reproduce' wrote (default: ./results).",
            show_default=False,
        ),
    ] = "results",
    html: Annotated[
        str | None, typer.Option("--html", metavar="FILE", help="Where to write the page (default DIR/report.html).")
    ] = None,
) -> None:
    """Write one HTML page: your studies found in DIR first, then the papers'; figures, claims, verdicts, runtimes."""
    from incast.report import write_report

    print(write_report(out, html))


def register(app: typer.Typer) -> None:
    """Add the ``report`` verb to ``app``."""
    app.command("report")(report)
