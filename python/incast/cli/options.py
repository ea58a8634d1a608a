"""What the verbs share: every named option, declared once from the engine's schema, and how a
command line becomes scenarios.

A named option stands for one setting (``--rto-min`` is ``tcp.rto_min``); its
help is that setting's doc line from the engine, and its metavar the
setting's type, so nothing here restates a default, a range or a doc. Each
is declared once, in :data:`NAMED`, and a verb takes the ones it has with
:func:`named_options`: a flag means the same in ``run``, ``testbed``,
``validate`` and ``read``. Where the real Linux stack runs a setting its own
way, the help says so (``--duration``, ``--delayed-ack``).

Where each setting comes from, later winning: the engine defaults, the
``--preset``, the scenario file, the named options, then ``--set KEY=VALUE``
in the order given; :func:`resolve` hands the whole list to the engine in one
call. A ``--set`` value is read as a TOML value, so ``--set
tcp.rto_min=0.001`` is a number of seconds and ``--set tcp.rto_min=1ms`` a
unit string.
"""

from __future__ import annotations

import functools
import inspect
import re
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, cast

import typer

from incast.errors import ScenarioError

if TYPE_CHECKING:
    from incast.scenario import Scenario

__all__ = [
    "NAMED",
    "OPTION_FIELDS",
    "AsJson",
    "Congestion",
    "Nodelay",
    "Rcvbuf",
    "ScenarioFile",
    "Servers",
    "SetOpt",
    "Sndbuf",
    "Timeout",
    "named_options",
    "named_overrides",
    "nonempty",
    "option",
    "parse_counts",
    "parse_names",
    "parse_servers",
    "parse_set",
    "resolve",
    "setting_help",
    "toml_value",
]

#: Named option -> dotted scenario setting; the option's flag is its name with dashes (``rto_min`` is
#: ``--rto-min``). ``--servers`` and ``run``'s ``--seed`` are apart: each may be a list.
OPTION_FIELDS = {
    "sru": "workload.sru",
    "block": "workload.block",
    "blocks": "blocks",
    "duration": "duration",
    "link": "link.rate",
    "rtt": "link.rtt",
    "buffer": "switch.buffer",
    "mss": "tcp.mss",
    "rto_min": "tcp.rto_min",
    "rto_max": "tcp.rto_max",
    "clock_granularity": "tcp.clock_granularity",
    "rto_flavor": "tcp.rto_flavor",
    "delayed_ack": "tcp.delayed_ack",
    "init_cwnd": "tcp.init_cwnd",
    "request_order": "workload.order",
    "tcp": "tcp.cc",
    "recovery": "tcp.recovery",
    "spurious_rto": "tcp.spurious_rto",
    "gip": "tcp.gip",
    "ecn_threshold": "switch.ecn_threshold",
    "max_inflight": "workload.max_inflight",
    "stagger": "workload.stagger",
    "clients": "workload.clients",
    "server_sets": "workload.server_sets",
    "buffer_model": "switch.buffer_model",
    "loss": "link.loss",
    "wan": "wan.delay",
    "wan_jitter": "wan.jitter",
    "pause_xoff": "switch.pause_xoff",
    "pause_xon": "switch.pause_xon",
}

#: ``--tcp`` names the congestion control (``tcp.cc``), as Linux's ``net.ipv4.tcp_congestion_control``
#: does, and leaves the loss recovery as the preset or file has it; ``newreno`` and ``sack`` stand for
#: Reno's window rules on that recovery (``tcp.recovery``), so ``--tcp newreno`` and ``--tcp sack`` run
#: what they name whatever the preset says.
_TCP_SHORTHANDS = {"newreno": ("reno", "newreno"), "sack": ("reno", "sack")}

#: What ``--tcp`` takes, and its help line.
_TCP = (
    "reno|cubic|dctcp|bbr|newreno|sack",
    "Congestion control [tcp.cc]; newreno and sack are reno on that loss recovery [tcp.recovery], "
    "which --recovery sets alone.",
)

#: How the real Linux stack runs a setting it has its own way of running (``incast.testbed.plan``), after
#: the setting's help: the flag keeps the setting's one meaning everywhere.
_ON_THE_REAL_STACK = {
    "duration": "The testbed starts no block after it (wall time) and lets the last one finish, as "
    "'incast read --start-until' does.",
    "delayed_ack": "The real stack (testbed, read) has linux and off; the testbed runs 40ms as linux.",
}

#: The metavar of each kind of setting (a choice lists its words instead).
_METAVARS = {
    "duration": "DURATION",
    "rate": "RATE",
    "size": "SIZE",
    "buffer": "SIZE|Npkt",
    "count": "N",
    "probability": "P",
    "number": "X",
    "flag": "true|false",
    "delayed ack": "DURATION|off|linux|adaptive",
    "buffer model": "static|qos:K|shared:ALPHA",
}

#: Kinds of setting whose option value is read as a TOML number (``--loss 0.01``); the others stay strings.
_NUMBERS = ("probability", "number")


def named_overrides(named: dict[str, Any]) -> list[tuple[str, Any]]:
    """The settings the named options given (not ``None``) stand for, in order (``--tcp sack`` is two).

    Raises ScenarioError for ``--sru`` beside ``--block``.
    """
    if named.get("sru") is not None and named.get("block") is not None:
        raise ScenarioError("workload: give --sru (bytes per server) or --block (bytes per block), not both")
    out: list[tuple[str, Any]] = []
    for name, value in named.items():
        field = OPTION_FIELDS[name]
        if value is None:
            continue
        if name == "tcp" and value in _TCP_SHORTHANDS:
            cc, recovery = _TCP_SHORTHANDS[value]
            out += [("tcp.cc", cc), ("tcp.recovery", recovery)]
        else:
            out.append((field, toml_value(value) if _settings()[field]["kind"] in _NUMBERS else value))
    return out


@functools.cache
def _settings() -> dict[str, dict[str, Any]]:
    from incast.scenario import schema

    return {s["name"]: s for s in schema()}


def setting_help(name: str) -> str:
    """The first sentence of a setting's doc line, and its dotted name."""
    doc: str = _settings()[name]["doc"]
    first = doc.split(". ")[0].rstrip(".")
    return f"{first}. [{name}]"


#: What ``--sample-every`` does, in every verb that has it (``testbed`` and ``validate`` sample only when
#: it is given; ``serve`` samples, every 1ms unless it is given, when ``--trace`` names a file).
SAMPLE_EVERY_HELP = "Sample each server's connections this often (TCP_INFO; BBR's model from TCP_CC_INFO), e.g. 1ms."
#: What ``--trace FILE`` does where the connections are sampled (``testbed`` writes FILE-N.csv for each
#: of several server counts).
TRACE_HELP = "Write the sampled connections as CSV to this file (one FILE-N.csv per server count of several)."


def option(flag: str, metavar: str, help: str) -> Any:
    """An option taking a value, with its default left out of the help."""
    return typer.Option(flag, metavar=metavar, help=help, show_default=False)


def _named_option(name: str) -> Any:
    """The option ``name`` of :data:`OPTION_FIELDS`: help from its setting's doc line, metavar from its type."""
    flag = "--" + name.replace("_", "-")
    if name == "tcp":
        return option(flag, *_TCP)
    s = _settings()[OPTION_FIELDS[name]]
    words = s["allowed"].replace('"', "").split(" or ") if s["kind"] == "choice" else None
    metavar = "|".join(words) if words else _METAVARS.get(s["kind"], "VALUE")
    if s["none"] and s["kind"] != "delayed ack":
        metavar = f"{metavar}|{s['none']}"
    real_stack = _ON_THE_REAL_STACK.get(name)
    return option(flag, metavar, setting_help(s["name"]) + (f" {real_stack}" if real_stack else ""))


#: Every named option, by parameter name: the one declaration each verb's option comes from.
NAMED: dict[str, Any] = {name: Annotated[str | None, _named_option(name)] for name in OPTION_FIELDS}

_Verb = TypeVar("_Verb", bound=Callable[..., Any])


def named_options(*names: str) -> Callable[[_Verb], _Verb]:
    """Give a verb the named options ``names`` of :data:`NAMED`, in that order.

    Typer reads a command's options from its signature: the options go after
    the verb's positional-or-keyword parameters, before its keyword-only
    ones, and the verb receives each (``None`` where not given) in its
    ``**named``.
    """

    def give(verb: _Verb) -> _Verb:
        signature = inspect.signature(verb)
        own = list(signature.parameters.values())
        if not own or own[-1].kind is not inspect.Parameter.VAR_KEYWORD:
            raise TypeError(f"{verb.__name__}: takes named options in a **named parameter")
        own.pop()
        at = next((i for i, p in enumerate(own) if p.kind is inspect.Parameter.KEYWORD_ONLY), len(own))
        kind = inspect.Parameter.KEYWORD_ONLY
        added = [inspect.Parameter(name, kind, default=None, annotation=NAMED[name]) for name in names]
        cast(Any, verb).__signature__ = signature.replace(parameters=[*own[:at], *added, *own[at:]])
        return verb

    return give


ScenarioFile = Annotated[
    str | None,
    typer.Argument(metavar="SCENARIO.toml", help="Scenario file; options below override it.", show_default=False),
]
Servers = Annotated[
    str | None,
    typer.Option(
        "--servers", metavar="N[,N...]", help="Servers; a list like 1,4,16 runs once per value.", show_default=False
    ),
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="KEY=VALUE",
        help="Any setting by dotted name ('incast settings' lists them), e.g. --set tcp.rto_min=1ms; "
        "repeatable, applied last.",
        show_default=False,
    ),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print one JSON object per run, one per line.")]
#: The socket options of ``incast serve`` and ``incast read``, each on that side's every connection.
Nodelay = Annotated[
    bool,
    typer.Option("--nodelay/--no-nodelay", help="TCP_NODELAY on every connection (default on).", show_default=False),
]
Congestion = Annotated[
    str | None, option("--congestion", "NAME", "TCP_CONGESTION of every connection, e.g. reno, cubic, bbr.")
]
Rcvbuf = Annotated[str | None, option("--rcvbuf", "SIZE", "SO_RCVBUF of every connection, e.g. 256KiB.")]
Sndbuf = Annotated[str | None, option("--sndbuf", "SIZE", "SO_SNDBUF of every connection, e.g. 4MiB.")]
#: The default is each verb's own: the testbed's allows for RTOs backing off.
Timeout = Annotated[
    str,
    typer.Option(
        "--timeout", metavar="DURATION", help="Fail when one block (or a connection to a server) takes longer."
    ),
]


#: A whole number in ASCII digits (``str.isdigit`` also takes ``"²"``, which ``int`` refuses).
_WHOLE = re.compile(r"[0-9]+", re.ASCII)


def parse_counts(text: str, field: str, example: str) -> list[int]:
    """``"1,4,16"`` -> ``[1, 4, 16]``; an error names ``field`` and gives ``example`` (``"a count like 16 or ..."``)."""
    values = [part.strip() for part in text.split(",")]
    for part in values:
        if not _WHOLE.fullmatch(part):
            raise ScenarioError(f"{field}: {part!r} is not a whole number; give {example}")
    return [int(part) for part in values]


def parse_servers(text: str) -> list[int]:
    """``"1,4,16"`` -> ``[1, 4, 16]``."""
    return parse_counts(text, "servers", "a count like 16 or a list like 1,4,16")


def parse_names(text: str, field: str) -> list[str]:
    """``"linux,ns2"`` -> ``["linux", "ns2"]``; an empty name is refused, naming ``field``."""
    names = [part.strip() for part in text.split(",")]
    if not all(names):
        raise ScenarioError(f"{field}: {text!r} has an empty name; give a name or a list like linux,ns2")
    return names


def nonempty(value: str | None, flag: str, example: str) -> str | None:
    """``value`` unless it is empty or blank (a path or name left out by mistake, not "the current folder")."""
    if value is not None and not value.strip():
        raise ScenarioError(f"{flag}: empty; give {example}")
    return value


def parse_set(item: str) -> tuple[str, Any]:
    """``"tcp.rto_min=1ms"`` -> ``("tcp.rto_min", "1ms")``."""
    key, sep, text = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ScenarioError(f"--set: {item!r} is not KEY=VALUE (e.g. --set tcp.rto_min=1ms)")
    return key, toml_value(text.strip())


def toml_value(text: str) -> Any:
    """``"0.001"`` -> 0.001, ``"64"`` -> 64, anything else (``"1ms"``, ``"off"``) stays a string."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    try:
        value = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text
    return value if isinstance(value, (int, float, str)) and not isinstance(value, bool) else text


def resolve(file: dict[str, Any], overrides: list[tuple[str, Any]], preset: str | None = None) -> Scenario:
    """The scenario of a command line, in one call into the engine: the ``preset``'s settings, the
    scenario ``file``'s, then ``overrides`` in order (the last of two writes to a setting wins)."""
    from incast.scenario import Scenario, apply_overrides

    if preset is None:
        return Scenario(**apply_overrides(file, overrides))
    from incast.presets import preset_overrides

    return Scenario(**apply_overrides({}, [*preset_overrides(preset), *file.items(), *overrides]))
