"""What every reference is: a name, the settings it refuses, what it runs differently, and a run.

ns-2, ns-3 and the Linux testbed each implement :class:`Reference`. A
reference says what it cannot run as a list of :class:`Rule` — the dotted
setting, whether this scenario's value is refused, and what the reference
allows — and :meth:`Reference.check` is the one place a refusal becomes an
error: :class:`Refused`, a :class:`~incast.errors.ScenarioError` of one line,
``<setting>: <what is allowed> (<reference>)``. A machine that cannot run the
reference at all (no ``ns``, no ns-3 wheel, not root) raises
:class:`Unavailable` from :meth:`Reference.require`. What a reference runs
differently but can run is a note (:meth:`Reference.notes`), one line each.

:func:`star_read` holds the rules every simulator reference's synchronized
read shares: their harnesses build one star of a client and its servers
reading in lock step through drop-tail ports, and nothing else;
:func:`one_star`, those of any harness building one star of hosts (ns-3's
open-loop traffic too).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NamedTuple

from incast.errors import ScenarioError
from incast.scenario import Scenario

if TYPE_CHECKING:
    from incast.result import Result

__all__ = [
    "Figure",
    "Flows",
    "Reference",
    "Refused",
    "Rule",
    "Unavailable",
    "check",
    "one_star",
    "refusals",
    "star_read",
]

#: Whose draws of open-loop traffic a reference runs: its own, or the engine's for the same scenario and
#: seed (:class:`~incast.experiment.ClaimReference`'s ``flows``).
Flows = Literal["own", "engine"]


class Refused(ScenarioError):
    """A reference cannot run this scenario; the message names the setting and what the reference allows."""


class Unavailable(Exception):
    """This machine cannot run the reference (a missing program, no root); the message says what it needs."""


class Rule(NamedTuple):
    """One setting a reference restricts: ``refused`` when the scenario's value is outside ``allowed``."""

    setting: str
    refused: bool
    allowed: str


class Figure(NamedTuple):
    """A figure compared: its label, its key in both sides' JSON, and the key inside it (or None)."""

    label: str
    key: str
    sub: str | None = None


def refusals(rules: Iterable[Rule]) -> list[Rule]:
    """The rules that refuse, in order."""
    return [r for r in rules if r.refused]


def check(rules: Iterable[Rule], title: str) -> None:
    """Raise :class:`Refused` for the first of ``rules`` that refuses, ending with the reference's ``title``."""
    refused = refusals(rules)
    if refused:
        raise Refused(f"{refused[0].setting}: {refused[0].allowed} ({title})")


class Reference(ABC):
    """A reference the simulator is compared with (``incast validate --against NAME``)."""

    #: The ``--against`` value.
    name: ClassVar[str]
    #: What it is, for people: the last words of a refusal and the heading of a comparison.
    title: ClassVar[str]
    #: The preset a comparison starts from unless ``--preset`` names another.
    preset: ClassVar[str]

    @abstractmethod
    def require(self) -> None:
        """Raise :class:`Unavailable` when this machine cannot run the reference."""

    @abstractmethod
    def rules(self, scenario: Scenario) -> list[Rule]:
        """Every setting this reference restricts, refused or not, for ``scenario``."""

    @abstractmethod
    def notes(self, scenario: Scenario) -> list[str]:
        """What this reference runs differently from the simulator on ``scenario``, one line each."""

    @abstractmethod
    def run(self, scenario: Scenario) -> dict[str, Any]:
        """Run ``scenario`` (refused first as :meth:`check` says); its figures under ``incast run --json``'s keys."""

    def refusals(self, scenario: Scenario) -> list[Rule]:
        """The rules ``scenario`` breaks, in order."""
        return refusals(self.rules(scenario))

    def check(self, scenario: Scenario) -> None:
        """Raise :class:`Refused` for the first setting this reference cannot run."""
        check(self.rules(scenario), self.title)

    def prepare(self, scenario: Scenario) -> tuple[Scenario, list[str]]:
        """The scenario both sides run in place of ``scenario``, and a note on each change (none by default)."""
        return scenario, []

    def fingerprint(self, scenario: Scenario) -> str:
        """What identifies this reference's run of ``scenario``: equal exactly when it would run the same.

        By default the content hash of the scenario it runs (:meth:`prepare`); a reference that
        builds its own input from fewer settings (ns-2's Tcl) hashes that input instead, so a
        setting it does not read leaves a recorded run valid (:mod:`incast.disputes`).
        """
        return self.prepare(scenario)[0].hash

    def simulator_overrides(self, scenario: Scenario) -> dict[str, Any]:
        """Settings the simulator runs with beside this reference (none unless the reference says)."""
        return {}

    def simulator_figures(self, result: Result) -> tuple[dict[str, Any], list[str]]:
        """The simulator's figures as this reference counts them, and a note on each difference.

        By default all of ``result.to_dict()``, as measured.
        """
        return result.to_dict(), []

    def figures(self, measured: dict[str, Any]) -> tuple[Figure, ...]:
        """Figures this reference counts beyond those every reference has, given what :meth:`run` returned."""
        return ()


def one_star(s: Scenario) -> list[Rule]:
    """The rules of a harness that builds one star of hosts on one switch, and nothing more on it."""
    return [
        Rule("topology.kind", s.topology.kind != "star", f'"star" only: one switch is built, got {s.topology.kind!r}'),
        Rule("background.tcp_flows", s.background.tcp_flows != 0, "no background traffic"),
        Rule("background.udp_rate", s.background.udp_rate is not None, "no background traffic"),
        Rule("wan.delay", s.wan.delay is not None, "no wide-area delay model"),
        Rule("switch.pause", bool(s.switch.pause), "no Ethernet flow control"),
        Rule("switch.pfc", bool(s.switch.pfc), "no Ethernet flow control"),
        Rule("link.loss", s.link.loss != 0, "no random loss"),
        Rule("link.tx_queue", s.link.tx_queue is not None, "a sender hands its segments to its link's queue"),
        Rule("link.host_jitter", s.link.host_jitter != 0, "0 only: the harness's hosts answer in a fixed time"),
        Rule("tcp.send_loss", s.tcp.send_loss != 0, "no random loss"),
        Rule("tcp.rude", bool(s.tcp.rude), "no Rude TCP"),
        Rule("tcp.ictcp", bool(s.tcp.ictcp), "no ICTCP receiver"),
        Rule("tcp.rto_randomize", bool(s.tcp.rto_randomize), "the timer is armed for exactly the RTO"),
        Rule("tcp.rto_scheduling_delay", s.tcp.rto_scheduling_delay != 0, "timers fire on time"),
    ]


def star_read(s: Scenario) -> list[Rule]:
    """The rules of a harness that builds one star of a client and its servers reading in lock step, only."""
    return [
        Rule("blocks", s.blocks is None, "required: the comparison runs a number of blocks"),
        Rule("workload.clients", s.workload.clients != 1, "one client only"),
        Rule("workload.max_inflight", s.workload.max_inflight is not None, "every server answers at once"),
        Rule("workload.stagger", s.workload.stagger != 0, "no staggered requests"),
        Rule("switch.ecn_threshold", s.switch.ecn_threshold is not None, "drop-tail ports only"),
        Rule("switch.buffer_model", s.switch.buffer_model != "static", "one drop-tail queue per port"),
        Rule("traffic.load", s.traffic.load is not None, "no open-loop flows beside the reads"),
        Rule("traffic.query_rate", bool(s.traffic.query_rate), "no queries beside the reads"),
        *one_star(s),
    ]
