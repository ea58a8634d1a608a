"""``incast validate --json`` with the reference's run left out: the simulator's side and the testbed's plan.

A validation page's reference side (the kernel, ns-2, ns-3) is slow, and the kernel's is not
deterministic, but the simulator's side of every ``incast validate`` line is: it is the same
command with the reference's run replaced by a blank one. :func:`validate` runs the CLI in this
process that way, so everything the command does before and around the reference (option parsing,
presets, the reference's ``prepare``, its overrides and the simulator's figures as the reference
counts them) runs as it did; only the reference's own figures come back as ``null``.

Against the testbed the blank run records what the testbed would have set up instead: the plan
(:func:`incast.testbed.plan_for`) of every scenario it was handed, the one-server run that measures
the hosts included, without its notes (sentences for people, not settings). The privilege check is
skipped, since nothing is built. The one-server run reports the path round trip the run being
replayed measured (``host_cost.path_rtt_s``), since the simulator's side ran over it.

``python docs/simulator_side.py`` reads a JSON list on stdin, each item an argument list or an
object ``{"args": [...], "path_rtt_s": ...}``, and prints the JSON objects of each line, a list per
item, on stdout: that is how a verification runs this against an older commit's code (``PYTHONPATH``
at that commit's ``python/``). It uses only what both old and new code have: ``incast.cli.main``,
``incast.testbed.run``, ``require_privileges`` and ``plan_for``, and the ns-2 and ns-3 references'
``run`` method.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import sys
from dataclasses import asdict
from types import SimpleNamespace
from typing import Any


class Blank(dict[str, Any]):
    """A reference's figures when it did not run: every figure and part of one reads as missing."""

    def __missing__(self, key: str) -> Blank:
        return Blank()

    def __float__(self) -> float:
        return math.nan

    def __bool__(self) -> bool:
        return True


def _plan(scenario: Any) -> dict[str, Any]:
    from incast import testbed

    out = asdict(testbed.plan_for(scenario))
    out.pop("notes", None)
    return out


@contextlib.contextmanager
def _blank_references(plans: list[dict[str, Any]], path_rtt_s: float | None) -> Any:
    """Every reference's run made blank for as long as the context lasts; plans of testbed runs go to ``plans``,
    and each testbed run's server saw ``path_rtt_s`` as its least min_rtt (None: sampled none)."""
    from incast import testbed

    rtt = None if path_rtt_s is None else {"min_rtt_ms": path_rtt_s * 1e3}

    def testbed_run(scenario: Any, **_: Any) -> Any:
        plans.append(_plan(scenario))
        return SimpleNamespace(
            status="complete",
            error=None,
            blocks=0,
            block_time_ms=SimpleNamespace(p50=0.0),
            server_rtt=rtt,
            to_dict=lambda: Blank(),
        )

    saved: list[tuple[Any, str, Any]] = [
        (testbed, "run", testbed.run),
        (testbed, "require_privileges", testbed.require_privileges),
    ]
    with contextlib.suppress(ImportError):
        from incast.reference.ns2 import Ns2

        saved.append((Ns2, "run", Ns2.run))
        Ns2.run = lambda self, s: Blank(timeout_classes=Blank()) if getattr(self, "classes", False) else Blank()
    testbed.run = testbed_run
    testbed.require_privileges = lambda: None
    try:
        yield
    finally:
        for owner, name, value in saved:
            setattr(owner, name, value)


def saved_path(row: dict[str, Any], seed: int) -> float | None:
    """The path round trip a page row's run ``seed`` measured (its ``path`` list; None for runs from before it was
    measured), for :func:`validate` to replay."""
    paths: list[float | None] = row.get("path", [None] * seed)
    return paths[seed - 1]


def validate(args: list[str], path_rtt_s: float | None = None) -> list[dict[str, Any]]:
    """The JSON objects of ``incast validate --json ARGS``, the reference's figures blank.

    Against the testbed the last object gets ``plans``: every plan the testbed was asked for while
    the command ran (the host-cost run's, then each scenario's), in order; ``path_rtt_s`` is the
    path the replayed run's one-server run measured.
    """
    from incast.cli import main

    plans: list[dict[str, Any]] = []
    out = io.StringIO()
    quiet = contextlib.redirect_stderr(io.StringIO())
    with _blank_references(plans, path_rtt_s), contextlib.redirect_stdout(out), quiet:
        status = main(["validate", "--json", *args])
    if status != 0:
        raise SystemExit(f"error: incast validate {' '.join(args)} exited with status {status}")
    objects = [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]
    if plans:
        objects[-1]["plans"] = plans
    return objects


def main() -> int:
    items = [i if isinstance(i, dict) else {"args": i} for i in json.load(sys.stdin)]
    json.dump([validate(i["args"], i.get("path_rtt_s")) for i in items], sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
