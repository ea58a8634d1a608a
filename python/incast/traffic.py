"""Open-loop traffic (``[traffic]``) from the Python side: the ``--traffic`` flag, and the user's CDF and
traffic-matrix files read into the scenario.

The engine defines every setting (``crates/incast-sim/src/workload/traffic.rs``) and checks every value:
a CDF that is not monotone, a load of 1 or more, a matrix of the wrong shape are refused there, naming the
setting. This module only reads a file the user names (``traffic.sizes = "my.cdf"``, ``traffic.pattern =
"matrix.txt"``) and hands its text to the engine, which parses it (the shipped distributions are parsed
by the same code).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from incast.errors import ScenarioError

__all__ = ["PUBLISHED", "inline_files", "parse_traffic_flag"]

#: The flow-size distributions shipped with the engine.
PUBLISHED = ("websearch", "datamining", "hadoop")
#: The traffic patterns that are words.
_PATTERNS = ("all_to_all", "permutation")


def _file_text(setting: str, value: str) -> str:
    """The text of the file ``value`` names, for ``setting``; one-line ScenarioError if unreadable."""
    path = Path(value)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else "not a readable UTF-8 text file"
        raise ScenarioError(f"{setting}: cannot read {value!r}: {reason}") from None
    # The engine reads a file's text by its newlines: one line alone still is a file.
    return text if "\n" in text else text + "\n"


def inline_files(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with a CDF or traffic-matrix file named in ``[traffic]`` replaced by the file's text."""
    table = data.get("traffic")
    if not isinstance(table, dict):
        return data
    out = dict(table)
    for key, words in (("sizes", PUBLISHED), ("pattern", _PATTERNS)):
        value = out.get(key)
        if isinstance(value, str) and value not in words and "\n" not in value:
            out[key] = _file_text(f"traffic.{key}", value)
    return {**data, "traffic": out}


def parse_traffic_flag(text: str) -> list[tuple[str, Any]]:
    """``--traffic SIZES:LOAD`` (``websearch:0.5``, ``my.cdf:0.3``) as overrides of ``traffic.sizes`` and
    ``traffic.load``; the engine checks both values."""
    sizes, sep, load = text.rpartition(":")
    if not sep or not sizes:
        raise ScenarioError(
            f"--traffic: expected SIZES:LOAD like websearch:0.5 (sizes {', '.join(PUBLISHED)} or a CDF file), "
            f"got {text!r}"
        )
    try:
        value: Any = float(load)
    except ValueError:
        value = load
    if sizes not in PUBLISHED:
        sizes = _file_text("traffic.sizes", sizes)
    return [("traffic.sizes", sizes), ("traffic.load", value)]
