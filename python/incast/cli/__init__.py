"""The ``incast`` command: one module per verb, errors as one line.

Every bad input (an unknown unit, an out-of-range value, an unknown TOML key,
a missing or malformed file, a malformed option) prints exactly one line,
``error: <field>: <what is allowed>``, to stderr and exits with status 2; no
traceback, no usage box. An engine failure on a valid scenario prints one line
and exits with status 1.

Start-up: typer builds every verb's command on every invocation, ``--help``
included, so a verb module imports at module level only what its command's
signature needs and the rest inside the functions that run. The verb modules
do without ``from __future__ import annotations``: typer would evaluate each
string annotation of a command twice (for its signature and its type hints),
where evaluated once at import they cost a quarter as much; annotations of
names imported only for type checking are quoted. Help is Click's plain text
(``rich_markup_mode=None``): typer's rich renderer alone took 0.2 s of every
``--help``, and nothing from rich is imported until a verb prints a table.
"""

import functools
import importlib
import re
import sys
from collections.abc import Sequence
from typing import Annotated

import typer
from typer.main import get_command

from incast._core import engine_build, engine_version
from incast.cli.output import EXIT_ENGINE, EXIT_USAGE, fail
from incast.errors import IncastError, ScenarioError

#: Base of the parser's usage errors: typer >= 0.29 carries its own parser, earlier versions use click's.
_ParseError: type[Exception] = getattr(typer, "TyperException", None) or importlib.import_module("click").ClickException

__all__ = ["app", "fail", "main"]


app = typer.Typer(
    name="incast",
    help="A laboratory for the TCP incast problem: simulate synchronized reads through one switch.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"incast {engine_version()} (engine {engine_build()})")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool | None,
        typer.Option("--version", help="Print the version and exit.", callback=_show_version, is_eager=True),
    ] = None,
) -> None:
    """A laboratory for the TCP incast problem: simulate synchronized reads through one switch."""


from incast.cli import experiments as _experiments  # noqa: E402  (each verb registers itself on `app`)
from incast.cli import presets as _presets  # noqa: E402
from incast.cli import read as _read  # noqa: E402
from incast.cli import report as _report  # noqa: E402
from incast.cli import reproduce as _reproduce  # noqa: E402
from incast.cli import run as _run  # noqa: E402
from incast.cli import serve as _serve  # noqa: E402
from incast.cli import settings as _settings  # noqa: E402
from incast.cli import sweep as _sweep  # noqa: E402
from incast.cli import testbed as _testbed  # noqa: E402
from incast.cli import validate as _validate  # noqa: E402

_run.register(app)
_presets.register(app)
_settings.register(app)
_serve.register(app)
_read.register(app)
_sweep.register(app)
_reproduce.register(app)
_experiments.register(app)
_report.register(app)
_testbed.register(app)
_validate.register(app)


def _parse_error_line(e: Exception) -> str:
    """One line for a command-line parsing error, naming the option when there is one."""
    message = str(getattr(e, "message", e)).strip().rstrip(".")
    option = getattr(e, "option_name", None)
    param = getattr(e, "param", None)
    if option is None and param is not None:
        opts = getattr(param, "opts", None) or [getattr(param, "name", "") or ""]
        option = max(opts, key=len) if opts else None
    hint = getattr(e, "param_hint", None)
    if option is None and hint:
        option = hint if isinstance(hint, str) else " / ".join(hint)
    possibilities = getattr(e, "possibilities", None)
    if possibilities:
        message += f" (did you mean {', '.join(sorted(possibilities))}?)"
    if type(e).__name__ == "MissingParameter" and option:
        message = "required"
    if type(e).__name__ == "NoSuchOption":
        message = "no such option" + message[len(str(getattr(e, "message", ""))) :]
        message += (
            "; see 'incast run --help'"
            if getattr(getattr(e, "ctx", None), "info_name", "") == "run"
            else "; see 'incast --help'"
        )
    elif m := re.match(r"No such command '(.*?)'\.?\s*(.*)$", message):
        name, suggestion = m.groups()
        hint = f" ({suggestion[:1].lower()}{suggestion[1:]})" if suggestion else ""
        return f"{name}: no such command{hint}; see 'incast --help'"
    if option:
        message = message.replace(f"Option '{option}' ", "").replace(f"'{option}' ", "")
        return f"{option}: {message[:1].lower()}{message[1:]}"
    return f"usage: {message[:1].lower()}{message[1:]}"


#: The command line, built once: building it takes half the time of a short in-process call.
_command = functools.cache(functools.partial(get_command, app))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``incast`` console script; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    command = _command()
    try:
        rv = command.main(args=args, prog_name="incast", standalone_mode=False)
    except _ParseError as e:
        if type(e).__name__ == "NoArgsIsHelpError":
            print(getattr(e, "message", str(e)), file=sys.stderr)
            return EXIT_USAGE
        return fail(_parse_error_line(e))
    except ScenarioError as e:
        return fail(str(e))
    except OSError as e:
        where = e.filename if e.filename is not None else "file"
        return fail(f"{where}: {(e.strerror or str(e)).lower()}")
    except IncastError as e:
        return fail(f"engine: {e}", EXIT_ENGINE)
    except (typer.Abort, KeyboardInterrupt):
        return fail("interrupted", 130)
    return rv if isinstance(rv, int) else 0
