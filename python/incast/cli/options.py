"""What the scenario verbs (``run``, ``testbed``, ``validate``) share: options built
from the engine's schema, and how a command line becomes scenarios.

A named option stands for one setting (``--rto-min`` is ``tcp.rto_min``); its
help is that setting's doc line from the engine, and its metavar the
setting's type, so nothing here restates a default, a range or a doc.
Where each setting comes from, later winning: the engine defaults, the
``--preset``, the scenario file, the named options, then ``--set KEY=VALUE``
in the order given. A ``--set`` value is read as a TOML value, so
``--set tcp.rto_min=0.001`` is a number of seconds and ``--set
tcp.rto_min=1ms`` a unit string.
"""

from __future__ import annotations

import functools
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from incast.errors import ScenarioError

if TYPE_CHECKING:
    from incast.scenario import Scenario

__all__ = [
    "OPTION_FIELDS",
    "TCP_HELP",
    "TCP_METAVAR",
    "AsJson",
    "ScenarioFile",
    "Servers",
    "SetOpt",
    "parse_counts",
    "parse_names",
    "parse_servers",
    "named_overrides",
    "parse_set",
    "resolve",
    "setting_option",
    "toml_value",
]

#: Named option -> dotted scenario setting (``--servers`` is handled apart: it may be a list).
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
    "seed": "seed",
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

#: What ``--tcp`` takes.
TCP_METAVAR = "reno|cubic|dctcp|newreno|sack"

#: Its help line.
TCP_HELP = (
    "Congestion control [tcp.cc]; newreno and sack are reno on that loss recovery [tcp.recovery], "
    "which --recovery sets alone."
)


def named_overrides(named: dict[str, Any]) -> list[tuple[str, Any]]:
    """The settings the named options given (not ``None``) stand for, in order (``--tcp sack`` is two)."""
    out: list[tuple[str, Any]] = []
    for name, value in named.items():
        if value is None:
            continue
        if name == "tcp" and value in _TCP_SHORTHANDS:
            cc, recovery = _TCP_SHORTHANDS[value]
            out += [("tcp.cc", cc), ("tcp.recovery", recovery)]
        else:
            out.append((OPTION_FIELDS[name], value))
    return out


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


@functools.cache
def _settings() -> dict[str, dict[str, Any]]:
    from incast.scenario import schema

    return {s["name"]: s for s in schema()}


def setting_help(name: str) -> str:
    """The first sentence of a setting's doc line, and its dotted name."""
    doc: str = _settings()[name]["doc"]
    first = doc.split(". ")[0].rstrip(".")
    return f"{first}. [{name}]"


def setting_option(flag: str, name: str, metavar: str | None = None) -> Any:
    """A named option for the setting ``name``: help from its doc line, metavar from its type."""
    s = _settings()[name]
    if metavar is None:
        words = s["allowed"].replace('"', "").split(" or ") if s["kind"] == "choice" else None
        metavar = "|".join(words) if words else _METAVARS.get(s["kind"], "VALUE")
        if s["none"] and s["kind"] != "delayed ack":
            metavar = f"{metavar}|{s['none']}"
    return typer.Option(flag, metavar=metavar, help=setting_help(name), show_default=False)


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


def parse_counts(text: str, field: str, example: str) -> list[int]:
    """``"1,4,16"`` -> ``[1, 4, 16]``; an error names ``field`` and gives ``example`` (``"a count like 16 or ..."``)."""
    values = [part.strip() for part in text.split(",")]
    for part in values:
        if not part.isdigit():
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


def resolve(base: dict[str, Any], overrides: list[tuple[str, Any]]) -> Scenario:
    """``base`` with ``overrides`` applied one at a time (the last of two writes to a setting wins)."""
    from incast.scenario import Scenario, apply_overrides

    data = base
    for path, value in overrides:
        data = apply_overrides(data, {path: value})
    return Scenario.parse(data)
