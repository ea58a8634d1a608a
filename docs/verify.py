"""Bring a validation page current without running it again, when its results provably did not move.

A page goes stale (``docs/pages.py``) whenever a file its numbers depend on changes, and most
changes (a refactor, a renamed flag) move no result. ``python docs/<generator>.py --verify``
recomputes what of the page is deterministic and cheap and compares it with the saved numbers: the
simulator's figures of every run exactly, a reference's figures exactly where the reference is
deterministic (ns-2 and ns-3 for a seed) on a sample, and, for the kernel, which is not, what the
testbed sets up. :class:`Verification` collects the comparisons; the first difference refuses in
one line naming it, and nothing is written. When nothing differs, :meth:`Verification.restamp`
takes the current inputs' fingerprint as the record's, appends a note of what was compared to it
(commit, date, counts, the differences found equivalent and why) and writes the page again, whose
provenance then says it was verified, not rerun, and keeps the run's own commit, date and load.

The testbed's plan is compared with the plan the run's own commit made, where only option
spellings may differ, and each such difference must be one of :data:`RENAMES`: a flag of ``incast
read`` or ``incast serve`` renamed with its meaning kept, with the commit that did it; and a
field added to the plan since (:data:`ADDED`) is taken at the value that sets up what was run before.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pages import Run, commit

#: Spellings of the testbed's command-line options that changed with their meaning kept: the old
#: tokens, the new ones, and where that is documented.
RENAMES: list[tuple[tuple[str, ...], tuple[str, ...], str]] = [
    (
        ("--delayed-ack", "on"),
        ("--delayed-ack", "linux"),
        "976ec8d: incast read's --delayed-ack takes tcp.delayed_ack's words, linux for the kernel's own "
        "delayed ACK where it said on; both leave TCP_QUICKACK alone",
    ),
    (
        ("--duration",),
        ("--start-until",),
        "976ec8d: incast read's 'start no block after this much measured time' is --start-until, "
        "so that --duration means the scenario's duration everywhere; the read's limit is the same",
    ),
]

#: Fields a testbed plan gained after a run, each with the value that sets up what plans without it did,
#: and why: a saved plan lacking one is compared as if it had that value.
ADDED: dict[tuple[str, str], tuple[Any, str]] = {
    ("shaping", "delay_s"): (0.0, "the testbed's delay line for a link.rtt of 1 ms or more; 0 is none, as before"),
    ("shaping", "send_loss_ppb"): (0, "the testbed's sender-side loss (tcp.send_loss); 0 is none, as before"),
}


#: The plural nouns of what a verification counts, and their singular.
_SINGULAR = {"runs": "run", "points": "point", "cases": "case", "plans": "plan"}


def counted(n: int, what: str) -> str:
    """``n`` and ``what`` (a plural phrase such as ``ns-3 runs``), in the singular when ``n`` is 1."""
    if n == 1:
        words = what.split(" ")
        k = next((i for i, w in enumerate(words) if w in _SINGULAR), None)
        if k is not None:
            words[k] = _SINGULAR[words[k]]
        what = " ".join(words)
    return f"{n:,} {what}"


class Moved(Exception):
    """A recomputed figure or setting differs from the saved one; the message names the first."""


def first_difference(saved: Any, fresh: Any, where: str) -> str | None:
    """Where ``fresh`` first differs from ``saved`` (numbers exactly, NaN equal to NaN), or None."""
    if isinstance(saved, dict) and isinstance(fresh, dict):
        for key in sorted(saved.keys() | fresh.keys()):
            if key not in saved or key not in fresh:
                return f"{where}.{key}: {'saved' if key in saved else 'recomputed'} only"
            found = first_difference(saved[key], fresh[key], f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(saved, list) and isinstance(fresh, list):
        if len(saved) != len(fresh):
            return f"{where}: {len(saved)} saved, {len(fresh)} recomputed"
        for i, (a, b) in enumerate(zip(saved, fresh, strict=True)):
            found = first_difference(a, b, f"{where}[{i}]")
            if found:
                return found
        return None
    both_nan = isinstance(saved, float) and isinstance(fresh, float) and math.isnan(saved) and math.isnan(fresh)
    if saved == fresh or both_nan:
        return None
    return f"{where}: saved {saved!r}, recomputed {fresh!r}"


def renamed(old: list[str], new: list[str]) -> tuple[list[str], list[int]]:
    """``old`` with :data:`RENAMES` applied, and the index in :data:`RENAMES` of each rename applied.

    An old spelling that ``new`` still has at the same place is kept: it was not renamed there.
    """
    out: list[str] = []
    used: list[int] = []
    i = 0
    while i < len(old):
        for k, (before, after, _) in enumerate(RENAMES):
            if tuple(old[i : i + len(before)]) == before and before != tuple(new[len(out) : len(out) + len(before)]):
                out += after
                used.append(k)
                i += len(before)
                break
        else:
            out.append(old[i])
            i += 1
    return out, used


@dataclass
class Verification:
    """The comparisons of one ``--verify``: what was compared, how many of each, the renames found."""

    page: str
    command: str
    compared: Counter[str] = field(default_factory=Counter)
    renames: Counter[int] = field(default_factory=Counter)

    def same(self, what: str, saved: Any, fresh: Any, where: str, labels: tuple[str, ...] = ()) -> None:
        """Count one ``what``; raise :class:`Moved` unless ``fresh`` is ``saved`` exactly.

        ``labels`` name the figures of two lists, so that a difference names its figure.
        """
        if len(set(labels)) != len(labels):
            raise ValueError(f"labels must differ: {labels}")
        if labels:
            saved, fresh = dict(zip(labels, saved, strict=True)), dict(zip(labels, fresh, strict=True))
        found = first_difference(saved, fresh, where)
        if found:
            raise Moved(found)
        self.compared[what] += 1

    def same_plan(self, saved: dict[str, Any], fresh: dict[str, Any], where: str) -> None:
        """Count one testbed plan; raise :class:`Moved` unless it differs from ``saved`` by :data:`RENAMES` only."""
        old = dict(saved)
        for (table, key), (value, _) in ADDED.items():
            if isinstance(old.get(table), dict) and key not in old[table] and key in fresh.get(table, {}):
                old[table] = {**old[table], key: value}
        for key in ("read_options", "serve_options"):
            if key in old and key in fresh:
                old[key], used = renamed(old[key], fresh[key])
                self.renames.update(used)
        self.same("testbed plans", old, fresh, where)

    def refuse(self, moved: Moved, generator: str) -> SystemExit:
        """The one line a verification that found a difference ends with."""
        return SystemExit(
            f"error: {self.page} does not verify: {moved}; nothing was written: run python {generator} again"
        )

    def summary(self, baseline: str | None) -> str:
        """One sentence for the page: what was compared, and the renames found."""
        figures = {what: n for what, n in self.compared.items() if what != "testbed plans"}
        text = "recomputed and identical to the run's: " + ", ".join(counted(n, what) for what, n in figures.items())
        if "testbed plans" in self.compared:
            text += (
                f"; the testbed's plans of {counted(self.compared['testbed plans'], 'testbed runs')} (sysctls, "
                f"qdiscs, routes, serve and read options) as commit {baseline} made them"
            )
        if self.renames:
            names = [f"`{' '.join(RENAMES[k][0])}` now `{' '.join(RENAMES[k][1])}`" for k in sorted(self.renames)]
            text += ", but for option spellings renamed with their meaning kept: " + ", ".join(names)
        return text + "."

    def note(self, baseline: str | None = None, **extra: Any) -> dict[str, Any]:
        """The record's note of this verification."""
        return {
            "commit": commit(),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "command": self.command,
            "compared": dict(self.compared),
            "differences": [
                {"was": " ".join(RENAMES[k][0]), "now": " ".join(RENAMES[k][1]), "times": n, "why": RENAMES[k][2]}
                for k, n in sorted(self.renames.items())
            ],
            "summary": self.summary(baseline),
            **extra,
        }

    def restamp(
        self,
        run: Run,
        results: Any,
        depends: list[str],
        render: Callable[[Run, Any], None],
        note: dict[str, Any],
    ) -> None:
        """Take the current inputs as the record's, note the verification, save and write the page again."""
        run.restamp(depends, note)
        run.save(self.page, results)
        render(run, results)
        print(f"{self.page}: verified ({note['summary']})")


def sample(items: list[Any], n: int) -> list[Any]:
    """``n`` of ``items`` spread evenly over them, the first and the last included (all when n >= len)."""
    if n >= len(items):
        return list(items)
    if n <= 1:
        return items[:1]
    return [items[round(i * (len(items) - 1) / (n - 1))] for i in range(n)]
