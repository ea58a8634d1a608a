"""Every setting of the engine's schema, with the values at and past its edges, through
``Scenario.parse`` and through ``incast run --set``: each gives a scenario or one
ScenarioError line (exit 2 on the command line), never another exception.

The values of a setting come from its schema line: its smallest and largest value and
one past the largest, 0, -0.0, a negative number, NaN, infinity and values of the wrong
type. Nothing runs: the command line's run is replaced by one that only says the
scenario was accepted.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

import pytest

import incast.result
from incast import Scenario, ScenarioError
from incast.cli import main
from incast.scenario import schema

MAX64 = 2**64 - 1
#: What every setting is tried with, beside the values of its kind.
COMMON: list[Any] = [0, -0.0, -1, math.nan, math.inf, {"a": [1]}, [1, 2], True, "", "not-a-value"]


def _bounds(allowed: str) -> tuple[int, int] | None:
    """``(lo, hi)`` of "a whole number ... between LO and HI"."""
    m = re.search(r"between (\d+) and (2\^64-1|2\^32-1|\d+)", allowed)
    if m is None:
        return None
    top = {"2^64-1": MAX64, "2^32-1": 2**32 - 1}.get(m.group(2))
    return int(m.group(1)), top if top is not None else int(m.group(2))


def edge_values(entry: dict[str, Any]) -> list[Any]:
    """The smallest and largest values of a setting and one past the largest, by its kind."""
    kind, allowed = entry["kind"], entry["allowed"]
    if kind == "count" and (b := _bounds(allowed)):
        return [b[0], b[1], b[1] + 1, 1.5, "7"]
    if kind in ("duration", "delayed ack"):
        return ["1ps", f"{MAX64}ps", f"{MAX64 + 1}ps", "0.4ps", 1, 0.2, "1", "-1ms"]
    if kind == "rate":
        return ["1bps", f"{MAX64}bps", f"{MAX64 + 1}bps", "1.5bps", 1, 1e9]
    if kind == "size":
        return ["0B", "1B", f"{MAX64}B", f"{MAX64 + 1}B", "1.5B", 1, 65536]
    if kind == "buffer":
        return ["1pkt", f"{2**32 - 1}pkt", f"{2**32}pkt", "0pkt", f"{MAX64}B", f"{MAX64 + 1}B", 1, 65536]
    if kind in ("number", "probability"):
        return [1e-300, 1e-9, 0.5, 1 - 1e-9, 1, 1 + 1e-9, 1.7976931348623157e308, 1000, "0.5"]
    if kind == "choice":
        words = re.findall(r'"([^"]+)"', allowed)
        return [words[0], words[-1], words[0].upper(), 333]
    if kind == "flag":
        return [False, "true", "yes", 1]
    if kind == "list":
        return [[], [{}], [{"name": "x"}], "x"]
    if kind == "buffer model":
        return ["static", "qos:1", "qos:64", "qos:65", "shared:0", "shared:1e309", "shared:-1"]
    if kind == "priorities":
        return ["all", [0, 7], [8], [-1], []]
    raise AssertionError(f"{entry['name']}: no edge values for kind {kind!r}")


INPUTS = [(e["name"], v) for e in schema() for v in [*edge_values(e), *COMMON]]
#: The command line's inputs: each setting's smallest, largest and one past it, 0, -0.0, a
#: negative number, NaN, infinity and a value of the wrong type (each call builds a run's options).
CLI_INPUTS = [
    (e["name"], v) for e in schema() for v in [*edge_values(e)[:3], 0, -0.0, -1, math.nan, math.inf, {"a": [1]}]
]
BASE = {"servers": 2, "blocks": 1}


def parse_outcome(name: str, value: Any) -> str:
    """``accepted``, ``refused`` (one ScenarioError line naming a setting) or ``bad: ...``."""
    try:
        Scenario.parse(BASE, {name: value})
    except ScenarioError as e:
        text = str(e)
        return "refused" if "\n" not in text and re.match(r"^[\w.\[\]]+: ", text) else f"bad: {text!r}"
    except Exception as e:  # noqa: BLE001 - any other exception is what the loop looks for
        return f"bad: {type(e).__name__}: {e}"
    return "accepted"


def test_every_setting_at_its_edges_parses_or_is_refused_in_one_line() -> None:
    outcomes = {(name, repr(value)): parse_outcome(name, value) for name, value in INPUTS}
    bad = {k: v for k, v in outcomes.items() if v.startswith("bad")}
    assert not bad, bad
    tally = Counter(outcomes.values())
    assert tally["accepted"] > 0 and tally["refused"] > 0, tally


class Accepted(Exception):
    """Raised in place of a run: the command line accepted the scenario."""


def _toml_text(value: Any) -> str:
    """``value`` as it is written after ``--set KEY=``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    if isinstance(value, (list, dict)):
        return str(value).replace("'", '"').replace(":", " =")
    return str(value)


def test_every_setting_at_its_edges_through_the_command_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def accept(scenario: Scenario) -> None:
        raise Accepted

    monkeypatch.setattr(incast.result, "run", accept)
    bad = []
    for name, value in CLI_INPUTS:
        args = ["run", "--servers", "2", "--blocks", "1", "--set", f"{name}={_toml_text(value)}"]
        try:
            code = main(args)
        except Accepted:
            capsys.readouterr()
            continue
        out, err = capsys.readouterr()
        if code != 2 or out or err.count("\n") != 1 or not err.startswith("error: "):
            bad.append((args, code, out, err))
    assert not bad, bad[:5]
