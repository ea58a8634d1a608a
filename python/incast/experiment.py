"""Experiment files: one TOML per study of one's own or paper figure or table, and the rules that check claims.

An experiment names itself (and the figure it reproduces), a base scenario, the axes swept
(a cartesian product of dotted settings, optionally times named *cases*), the
seeds per point, the metrics, the plots, and the paper's claims and reference
points as data::

    preset = "ns2"                   # optional: the stack the paper ran ('incast presets'), under [base]

    [meta]
    name = "fast08-fig06"            # any slug (buffer-study); the papers' are <paper>-<fig|table><NN>
    paper = "FAST08"                 # paper, section, figure: only for a paper's figure
    section = "4.3"
    figure = "Figure 6"
    title = "Effect of varying switch buffer size"

    [base]                           # a scenario in the TOML shape (see incast.scenario)
    blocks = 40

    [sweep]                          # axes: dotted setting -> values
    servers = [1, 2, 4, 8, 16, 32, 64]
    "switch.buffer" = ["32KiB", "64KiB"]

    [[case]]                         # optional named series of overrides: the ``case`` axis
    name = "NewReno"
    preset = "ns2"                   # optional: the stack of this case, in place of the file's preset
    set = { "tcp.recovery" = "newreno" }

    [run]
    seeds = 3
    metrics = ["goodput_mbps", "timeouts"]

    [quick]                          # --quick: fewer seeds, cheaper settings, fewer axis values
    seeds = 1
    set = { blocks = 10 }
    sweep = { servers = [1, 4, 16, 64] }

    [[plot]]
    x = "servers"
    y = "goodput_mbps"
    series = "switch.buffer"
    logx = true

    [[claim]]                        # checked against the mean over seeds at each point
    text = "goodput at 64 servers with a 32 KiB buffer is below 1/10 of the 1-server value"
    metric = "goodput_mbps"
    where = { servers = 64, "switch.buffer" = "32KiB" }
    op = "<"
    than = { where = { servers = 1 }, scale = 0.1 }

    [[reference]]                    # a number the paper states, drawn on the figure
    metric = "goodput_mbps"
    where = { servers = 64, "switch.buffer" = "1024KiB" }
    value = 650
    source = "§4.3: 64 servers only utilize about 65% of the client's link"

A case may also set values that follow a swept axis one for one (``per``), and a
reference may give the value of a setting the paper plots (``setting``) or a
value computed from the paper's own formula (``computed = true``)::

    [[case]]
    name = "closed-form S_u"
    per = { servers = { "workload.sru" = ["305KB", "95KB"] } }   # one per [sweep].servers value

    [[reference]]
    setting = "workload.sru"
    where = { servers = 2 }
    value = "305KB"
    computed = true
    source = "GIP §VIII eq. (1)-(3): S_u = A_ss+ca / i"

Axis columns of the result tables are named by their dotted key and hold the
resolved value in SI units (seconds, bit/s, bytes; a packet buffer stays
``"64pkt"``); claim and plot ``where`` values are written in any unit and
resolved the same way. A claim ``where`` value may be a list: the rule must
hold at every listed point (``quantifier = "all"``) or at one (``"any"``).
``than.where`` overrides the coordinates of each point, so a claim compares a
point with its neighbour on one axis.

A claim the paper's own kind of system may not bear out carries a reference run,
``[[claim.reference]]``: the harness (``ns2``, ``ns3`` or ``testbed``, as
``incast validate --against`` names them), settings over the experiment's own
scenario, for ns-3's open-loop traffic whose flows it runs (``flows``: its own draws, or
the engine's), a smaller grid (values of ``[sweep]`` axes; it must hold every point of a claim on
``any`` point, and at least one of a claim on ``all``, which a reference then fails
by failing one) and the seeds::

    [[claim.reference]]
    harness = "ns2"
    set = { blocks = 20 }
    sweep = { servers = [1, 8, 16, 32, 64] }
    seeds = 1

``incast reproduce NAME --against ns2`` runs it and records what it measured
(:mod:`incast.disputes`); the claim is then checked on the reference's table
too. It is ``disputed`` when our run fails it and every reference fails it as
well, and stays ``fails`` when a reference bears it out or has not run. A claim
no reference can bear on (the paper ran it on a system that is not here, such as
a kernel of its own) says why in one line, ``no_reference``, which its failing
verdict's reason ends with. Nothing in an experiment is evaluated as code.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from incast import _core
from incast.errors import ScenarioError
from incast.files import check_depth, read_toml
from incast.labels import describe, format_value
from incast.presets import with_preset
from incast.reference.base import Flows
from incast.scenario import Scenario, apply_overrides
from incast.units import format_duration

__all__ = [
    "AXIS_CASE",
    "METRICS",
    "TIMEOUT_FRACTIONS",
    "PAPERS",
    "HARNESSES",
    "Claim",
    "ClaimReference",
    "Experiment",
    "Meta",
    "Point",
    "experiments_dir",
    "find",
    "load",
    "packaged",
]

#: Short names of the papers (shared papers index).
PAPERS = ("FAST08", "CMU09", "SIGCOMM09", "RUDE", "GIP", "DCTCP10", "HPCC19")

#: The column holding the name of a ``[[case]]``.
AXIS_CASE = "case"

#: CMU09 Table 1's "Spurious Fraction" two ways, each a count of the engine's summary over all its
#: timeouts: as F-RTO or Eifel judged them (a segment's first timeout only), and by the engine's ground
#: truth, every timeout whose segment the network had not dropped.
TIMEOUT_FRACTIONS = {
    "spurious_timeout_fraction": "spurious_timeouts",
    "undropped_timeout_fraction": "undropped_timeouts",
}

#: Every metric a point records, one column each in the tidy table (see :func:`incast.sweep.metrics_of`):
#: every single-number figure of the engine's summary (its parts as ``figure.part``) but the engine's
#: own count of events, which a faster engine changes without changing the run, and the timeout
#: fractions computed from them.
METRICS = (
    *(name for name in json.loads(_core.summary_figures_json()) if name != "events"),
    *TIMEOUT_FRACTIONS,
)

#: An experiment's name: a slug, also the name of its results directory (``fast08-fig06``, ``buffer-study``).
_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
#: The longest name.
NAME_MAX = 64

Scalar = bool | int | float | str
Where = dict[str, Scalar | list[Scalar]]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=False)


class Meta(_Strict):
    """The experiment's name and title; for a paper's figure or table also ``paper``, ``section`` and ``figure``."""

    name: str = Field(description="a slug: lower-case letters, digits and hyphens, e.g. buffer-study, fast08-fig06")
    paper: Literal["FAST08", "CMU09", "SIGCOMM09", "RUDE", "GIP", "DCTCP10", "HPCC19"] | None = None
    section: str = ""
    figure: str = Field("", description='"Figure 6", "Table 3"')
    title: str = ""
    notes: str = ""

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if len(v) > NAME_MAX or not _NAME.fullmatch(v):
            raise ValueError(
                f"must be lower-case letters, digits and single hyphens, at most {NAME_MAX} characters, "
                "e.g. buffer-study or fast08-fig06"
            )
        return v

    @model_validator(mode="after")
    def _cites(self) -> Meta:
        if len({self.paper is not None, bool(self.section), bool(self.figure)}) > 1:
            raise ValueError("give paper, section and figure together (a paper's figure) or none (your own study)")
        return self

    @property
    def heading(self) -> str:
        """``"fast08-fig06: FAST08 Figure 6 (§4.3)"``; a study of one's own: its name and title, no paper."""
        if self.paper is None:
            return f"{self.name}: {self.title}" if self.title else self.name
        return f"{self.name}: {self.paper} {self.figure} (§{self.section})"


class Case(_Strict):
    """A named series: overrides applied on top of the base scenario.

    ``preset`` names the stack the case runs (``incast presets``) in place of the file's
    ``preset``: ``[base]`` and the case's ``set`` apply over it, as they do over the file's.

    ``per`` gives settings that follow a swept axis value for value: ``per = {servers =
    {"workload.sru" = ["305KB", "95KB"]}}`` with ``[sweep] servers = [2, 3]`` runs 2 servers with
    305 KB and 3 with 95 KB (a paper's curve whose setting depends on the axis, GIP Fig. 21).
    """

    name: str
    preset: str | None = Field(None, description="a preset under the case: over the file's preset, under [base]")
    set: dict[str, Any] = Field(default_factory=dict)
    per: dict[str, dict[str, list[Any]]] = Field(default_factory=dict)


class Run(_Strict):
    """Seeds per point and the metrics the summary shows."""

    seeds: int = Field(3, ge=1, le=100)
    metrics: list[str] = Field(default_factory=lambda: ["goodput_mbps"], min_length=1)

    @field_validator("metrics")
    @classmethod
    def _metrics(cls, v: list[str]) -> list[str]:
        for m in v:
            _check_metric(m)
        return v


class Quick(_Strict):
    """What ``--quick`` changes: seeds, cheaper settings, fewer axis values."""

    seeds: int | None = Field(None, ge=1, le=100)
    set: dict[str, Any] = Field(default_factory=dict)
    sweep: dict[str, list[Any]] = Field(default_factory=dict)


class Plot(_Strict):
    """One figure panel: metrics against an axis, one line (or bar) per metric and series value.

    ``series`` names the axes whose values tell the lines apart (one axis or a list).
    Instead of metrics, a panel may plot the value of a ``setting`` at each point
    (GIP Fig. 21 plots the stripe unit a formula gives): then ``y`` is left out,
    the line is what was run, and ``[[reference]]`` values of that setting are
    drawn beside it.
    """

    kind: Literal["line", "bar"] = "line"
    x: str
    y: str | list[str] = Field(default_factory=list)
    setting: str | None = None
    series: str | list[str] = Field(default_factory=list)
    where: Where = Field(default_factory=dict)
    logx: bool = False
    logy: bool = False
    title: str = ""
    xlabel: str = ""
    ylabel: str = ""
    ylim: tuple[float, float] | None = None

    @field_validator("y")
    @classmethod
    def _y(cls, v: str | list[str]) -> str | list[str]:
        for m in [v] if isinstance(v, str) else v:
            _check_metric(m)
        return v

    @model_validator(mode="after")
    def _what(self) -> Plot:
        if bool(self.metrics) == (self.setting is not None):
            raise ValueError("give exactly one of y (metrics) or setting")
        if self.setting is not None and self.kind != "line":
            raise ValueError("a setting is drawn as a line (kind = line)")
        return self

    @property
    def metrics(self) -> list[str]:
        """The plotted metrics (none when the panel plots a setting)."""
        return [self.y] if isinstance(self.y, str) else list(self.y)

    @property
    def series_axes(self) -> list[str]:
        """The axes that tell the lines apart."""
        return [self.series] if isinstance(self.series, str) else list(self.series)


class Than(_Strict):
    """The right-hand side of a comparison: ``scale · metric(point with where applied) + offset``."""

    metric: str | None = None
    where: Where = Field(default_factory=dict)
    scale: float = 1.0
    offset: float = 0.0

    @field_validator("metric")
    @classmethod
    def _metric(cls, v: str | None) -> str | None:
        return None if v is None else _check_metric(v)


#: The harnesses a claim's reference runs on (``incast validate --against``'s names).
HARNESSES = ("ns2", "ns3", "testbed")


class ClaimReference(_Strict):
    """A claim's reference run: the experiment's own scenario through another harness.

    ``set`` applies over every point's scenario (``blocks``, ``tcp.gip_copies``: what the
    harness needs); ``sweep`` narrows axes of ``[sweep]`` to some of their values (the grid
    must hold every point the claim reads); ``seeds`` seeds, 1 to ``seeds``, per point.
    ``flows`` (ns-3's open-loop traffic only): ``"own"``, the harness draws its own arrivals
    and sizes from the same distributions, or ``"engine"``, it runs the very flows the
    engine's run of the point draws (arrival, hosts, size, query), so that a tail figure
    that hinges on a few draws (how many incasts arrive) compares the stacks alone.
    """

    harness: Literal["ns2", "ns3", "testbed"]
    set: dict[str, Any] = Field(default_factory=dict)
    sweep: dict[str, list[Any]] = Field(default_factory=dict)
    seeds: int = Field(1, ge=1, le=100)
    flows: Flows = "own"

    @field_validator("flows")
    @classmethod
    def _engine_flows_on_ns3(cls, flows: str, info: ValidationInfo) -> str:
        harness = info.data.get("harness")
        if flows == "engine" and harness != "ns3":
            raise ValueError(f'"engine" only with harness "ns3" (its open-loop traffic), not {harness!r}')
        return flows


class Claim(_Strict):
    """A claim of the paper as a rule on the mean over seeds: ``metric(where) op value | than``."""

    text: str
    metric: str
    where: Where = Field(default_factory=dict)
    op: Literal["<", "<=", ">", ">=", "approx"]
    value: float | None = None
    than: Than | None = None
    rel_tol: float | None = Field(None, gt=0, description="for op = approx: |lhs - rhs| <= rel_tol * |rhs|")
    abs_tol: float | None = Field(
        None, gt=0, description="for op = approx: |lhs - rhs| <= abs_tol, in the metric's unit (a stated difference)"
    )
    quantifier: Literal["all", "any"] = "all"
    reference: list[ClaimReference] = Field(
        default_factory=list,
        description="reference runs of the paper's own kind of system: the claim is disputed when it fails "
        "in every one of them too",
    )
    no_reference: str | None = Field(
        None,
        min_length=1,
        description="one line: why no reference run can bear on the claim (the paper's system is not here); "
        "a claim that fails says it",
    )

    @field_validator("metric")
    @classmethod
    def _metric(cls, v: str) -> str:
        return _check_metric(v)

    @model_validator(mode="after")
    def _rhs(self) -> Claim:
        if (self.value is None) == (self.than is None):
            raise ValueError("give exactly one of value or than")
        if (self.op == "approx") != ((self.rel_tol is None) != (self.abs_tol is None)):
            raise ValueError("op = approx takes exactly one of rel_tol or abs_tol, and only it takes them")
        if self.reference and self.no_reference is not None:
            raise ValueError("a claim with a reference run takes no no_reference")
        if self.no_reference is not None and "\n" in self.no_reference:
            raise ValueError("no_reference is one line")
        return self


class Reference(_Strict):
    """A value the paper states in its text or tables, drawn on the figure beside the simulation.

    The value is of a ``metric``, or of a ``setting`` where the paper's figure plots an input
    (GIP Fig. 21: the smallest stripe unit that fills the link), written in any unit.
    ``computed = true`` marks a value worked out from the paper's own formula rather than
    stated by it; ``source`` then names the formula.
    """

    metric: str | None = None
    setting: str | None = None
    where: Where = Field(default_factory=dict)
    value: float | str
    source: str
    computed: bool = False

    @field_validator("metric")
    @classmethod
    def _metric(cls, v: str | None) -> str | None:
        return None if v is None else _check_metric(v)

    @model_validator(mode="after")
    def _what(self) -> Reference:
        if (self.metric is None) == (self.setting is None):
            raise ValueError("give exactly one of metric or setting")
        if self.metric is not None and isinstance(self.value, str):
            raise ValueError("the value of a metric is a number")
        return self


def _check_metric(name: str) -> str:
    if name not in METRICS:
        raise ValueError(f"unknown metric {name!r}; the metrics are {', '.join(METRICS)}")
    return name


class _File(_Strict):
    meta: Meta
    preset: str | None = Field(None, description="the stack the paper ran, under base: e.g. ns2 for its simulations")
    base: dict[str, Any] = Field(default_factory=dict)
    sweep: dict[str, list[Any]] = Field(default_factory=dict)
    case: list[Case] = Field(default_factory=list)
    run: Run = Field(default_factory=Run)  # type: ignore[arg-type]
    quick: Quick = Field(default_factory=Quick)  # type: ignore[arg-type]
    plot: list[Plot] = Field(default_factory=list)
    claim: list[Claim] = Field(default_factory=list)
    reference: list[Reference] = Field(default_factory=list)


@dataclass(frozen=True)
class Point:
    """One simulation: the coordinates on every axis, the seed and the resolved scenario."""

    coords: dict[str, Scalar]
    seed: int
    scenario: Scenario


class Experiment:
    """A validated experiment file. Build with :func:`load`."""

    def __init__(self, spec: _File, path: Path | None) -> None:
        self.spec = spec
        self.path = path
        #: The base scenario: the ``[base]`` table over the settings of ``preset``.
        try:
            self.base = with_preset(spec.preset, spec.base) if spec.preset else spec.base
            #: The base scenario of each case that names a preset of its own, in place of the file's.
            self.case_bases = {c.name: with_preset(c.preset, spec.base) for c in spec.case if c.preset}
        except ScenarioError as e:
            raise ExperimentError(f"case.{e}" if hasattr(self, "base") else str(e)) from None
        self._points: dict[bool, list[Point]] = {}
        self._probe = self._base_scenario()
        self.axes = self._axes(quick=False)
        self.quick_axes = self._axes(quick=True)
        self._check_references()

    @property
    def name(self) -> str:
        """The experiment's name, e.g. ``fast08-fig06``."""
        return self.spec.meta.name

    @property
    def axis_names(self) -> list[str]:
        """Axis columns in table order: the swept settings, then ``case`` if there are cases."""
        return list(self.axes)

    # -- expansion -----------------------------------------------------

    def points(self, quick: bool = False) -> list[Point]:
        """Every (point, seed) of the sweep, each with its resolved scenario (built once per mode)."""
        if quick not in self._points:
            self._points[quick] = self._expand(quick)
        return list(self._points[quick])

    def reference_points(self, reference: ClaimReference) -> list[Point]:
        """The points a claim's reference run runs: the full sweep's on its grid, with its settings and seeds."""
        return self._expand(False, reference)

    def _expand(self, quick: bool, reference: ClaimReference | None = None) -> list[Point]:
        """The points of the sweep (``--quick``'s), or of a reference run's grid with its settings and seeds."""
        spec = self.spec
        axes = self.quick_axes if quick else self.axes
        seeds = (spec.quick.seeds or spec.run.seeds) if quick else spec.run.seeds
        extra: dict[str, Any] = {}
        if reference is not None:
            grid = {k: {self.resolve(k, v) for v in values} for k, values in reference.sweep.items()}
            axes = {
                k: [v for v in values if k not in grid or self.resolve(k, v) in grid[k]] for k, values in axes.items()
            }
            seeds, extra = reference.seeds, reference.set
        pairs: list[tuple[str | None, dict[str, Any]]] = [(None, self.base), *self.case_bases.items()]
        bases = {case: apply_overrides(base, spec.quick.set if quick else {}) for case, base in pairs}
        cases = {c.name: c.set for c in spec.case}
        out: list[Point] = []
        names = list(axes)
        for combo in itertools.product(*(axes[n] for n in names)):
            raw = dict(zip(names, combo, strict=True))
            settings = {k: v for k, v in raw.items() if k != AXIS_CASE}
            case = str(raw[AXIS_CASE]) if AXIS_CASE in raw else None
            if case is not None:
                settings = {**cases[case], **self._per(case, raw), **settings}
            base = bases.get(case, bases[None])
            coords = {k: self.resolve(k, v) for k, v in raw.items()}
            for seed in range(1, seeds + 1):
                scenario = Scenario.parse(base, {**settings, **extra, "seed": seed})
                out.append(Point(coords, seed, scenario))
        return out

    def setting_values(self, setting: str, quick: bool = False) -> dict[tuple[Scalar, ...], Scalar]:
        """The resolved value (SI units) of ``setting`` at every point, keyed by its axis values in
        :attr:`axis_names` order."""
        return {
            tuple(point.coords[a] for a in self.axis_names): point.scenario.get(setting)
            for point in self.points(quick)
            if point.seed == 1
        }

    def resolve(self, axis: str, value: Any) -> Scalar:
        """An axis value in its table form: the setting parsed to SI units (``"200ms"`` -> ``0.2``)."""
        if axis == AXIS_CASE:
            return str(value)
        resolved = self._probe.with_overrides({axis: value}).get(axis)
        if axis == "tcp.delayed_ack":  # a duration or a mode: one column type, the TOML form
            return (
                "off" if resolved is None else (format_duration(resolved) if isinstance(resolved, float) else resolved)
            )
        return resolved  # type: ignore[no-any-return]

    def select(self, where: Mapping[str, Any]) -> list[dict[str, Scalar]]:
        """The axis coordinates a ``where`` names, with list values expanded; unknown axes raise."""
        keys = list(where)
        for k in keys:
            if k not in self.axes:
                raise ValueError(f"{k!r} is not an axis of {self.name}; the axes are {', '.join(self.axes) or 'none'}")
        lists = [v if isinstance(v, list) else [v] for v in where.values()]
        return [
            {k: self.resolve(k, v) for k, v in zip(keys, combo, strict=True)} for combo in itertools.product(*lists)
        ]

    def _per(self, case: str, raw: Mapping[str, Any]) -> dict[str, Any]:
        """The ``per`` settings of ``case`` at the axis values ``raw`` (index in the full ``[sweep]`` list)."""
        out: dict[str, Any] = {}
        for c in self.spec.case:
            if c.name == case:
                for axis, settings in c.per.items():
                    i = self.spec.sweep[axis].index(raw[axis])
                    out.update({k: values[i] for k, values in settings.items()})
        return out

    # -- construction helpers --------------------------------------------

    def _base_scenario(self, case: str | None = None) -> Scenario:
        spec = self.spec
        first = {k: v[0] for k, v in spec.sweep.items() if v and k == "servers"}
        try:
            return Scenario.parse(self.case_bases.get(case, self.base) if case else self.base, first)
        except ScenarioError as e:
            raise ExperimentError(f"base.{e}") from None

    def _axes(self, quick: bool) -> dict[str, list[Scalar]]:
        spec = self.spec
        axes: dict[str, list[Any]] = dict(spec.sweep)
        if quick:
            for k, values in spec.quick.sweep.items():
                if k not in axes:
                    raise ExperimentError(f"quick.sweep.{k}: not an axis of [sweep] ({', '.join(axes) or 'none'})")
                axes[k] = values
        where = "quick.sweep" if quick else "sweep"
        probe = self._probe.with_overrides(spec.quick.set) if quick else self._probe
        for k, values in axes.items():
            if not values:
                raise ExperimentError(f"{where}.{k}: needs at least one value")
            for i, v in enumerate(values):
                try:
                    probe.with_overrides({k: v})
                except ScenarioError as e:
                    raise ExperimentError(f"{where}.{k}[{i}]: {e}") from None
        if spec.case:
            names = [c.name for c in spec.case]
            if len(set(names)) != len(names):
                raise ExperimentError("case.name: every case needs a distinct name")
            for i, c in enumerate(spec.case):
                case_probe = self._base_scenario(c.name) if c.preset else self._probe
                case_probe = case_probe.with_overrides(spec.quick.set) if quick else case_probe
                try:
                    case_probe.with_overrides(c.set)
                except ScenarioError as e:
                    raise ExperimentError(f"case[{i}].set.{e}") from None
                for axis, settings in c.per.items():
                    if axis not in spec.sweep:
                        raise ExperimentError(
                            f"case[{i}].per.{axis}: not an axis of [sweep] ({', '.join(spec.sweep) or 'none'})"
                        )
                    if any(v not in spec.sweep[axis] for v in axes[axis]):
                        raise ExperimentError(f"case[{i}].per.{axis}: {where}.{axis} has values not in [sweep].{axis}")
                    for k, values in settings.items():
                        if len(values) != len(spec.sweep[axis]):
                            raise ExperimentError(
                                f"case[{i}].per.{axis}.{k}: needs one value per value of [sweep].{axis} "
                                f"({len(spec.sweep[axis])})"
                            )
                        for j, v in enumerate(values):
                            try:
                                case_probe.with_overrides({**c.set, k: v})
                            except ScenarioError as e:
                                raise ExperimentError(f"case[{i}].per.{axis}.{k}[{j}]: {e}") from None
            axes[AXIS_CASE] = names
        if quick:
            try:
                probe.with_overrides(spec.quick.set)
            except ScenarioError as e:
                raise ExperimentError(f"quick.set.{e}") from None
        return axes

    def _check_references(self) -> None:
        spec = self.spec
        for i, claim in enumerate(spec.claim):
            for j, reference in enumerate(claim.reference):
                self._check_reference(claim, reference, f"claim[{i}].reference[{j}]")
        groups: list[tuple[str, Sequence[Any]]] = [
            ("claim", spec.claim),
            ("reference", spec.reference),
            ("plot", spec.plot),
        ]
        for group, items in groups:
            for i, item in enumerate(items):
                try:
                    self.select(item.where)
                    if isinstance(item, Claim) and item.than is not None:
                        self.select(item.than.where)
                    if isinstance(item, Reference) and item.setting is not None:
                        self._probe.with_overrides({item.setting: item.value})
                    if isinstance(item, Plot):
                        for axis in (item.x, *item.series_axes):
                            if axis not in self.axes:
                                raise ValueError(f"{axis!r} is not an axis ({', '.join(self.axes)})")
                except (ValueError, ScenarioError) as e:
                    raise ExperimentError(f"{group}[{i}].where: {e}") from None
                if isinstance(item, Plot) and item.setting is not None:
                    try:
                        self._probe.get(item.setting)
                    except ScenarioError as e:
                        raise ExperimentError(f"plot[{i}].setting: {e}") from None

    def _check_reference(self, claim: Claim, reference: ClaimReference, field: str) -> None:
        """A reference run's settings apply, its grid narrows [sweep] and holds every point the claim reads."""
        try:
            self._probe.with_overrides(reference.set)
        except ScenarioError as e:
            raise ExperimentError(f"{field}.set.{e}") from None
        for axis, values in reference.sweep.items():
            if axis not in self.axes:
                raise ExperimentError(f"{field}.sweep.{axis}: not an axis ({', '.join(self.axes) or 'none'})")
            if not values:
                raise ExperimentError(f"{field}.sweep.{axis}: needs at least one value")
            known = set(self.axes[axis]) if axis == AXIS_CASE else {self.resolve(axis, v) for v in self.axes[axis]}
            for k, v in enumerate(values):
                if (v if axis == AXIS_CASE else self.resolve(axis, v)) not in known:
                    raise ExperimentError(f"{field}.sweep.{axis}[{k}]: {v!r} is not a value of [sweep].{axis}")
        grid = {k: {self.resolve(k, v) for v in values} for k, values in reference.sweep.items()}

        def outside(where: Mapping[str, Scalar]) -> str | None:
            """The first axis whose value at ``where`` the grid leaves out."""
            return next((a for a, v in where.items() if a in grid and v not in grid[a]), None)

        points = self.select(claim.where)
        held = [w for w in points if outside(w) is None]
        if not held or (claim.quantifier == "any" and len(held) < len(points)):
            where = next(w for w in points if outside(w) is not None)
            left = str(outside(where))
            which = "every point" if claim.quantifier == "any" else "at least one point"
            raise ExperimentError(
                f"{field}.sweep.{left}: the grid must hold {which} the claim reads; it leaves out "
                f"{left} = {format_value(left, where[left])}"
            )
        if claim.than is not None and claim.than.where:
            for w in held:
                other = outside({**w, **self.select(claim.than.where)[0]})
                if other is not None:
                    raise ExperimentError(
                        f"{field}.sweep.{other}: the claim compares {describe(w)} with a point the grid leaves out"
                    )


class ExperimentError(ScenarioError):
    """An experiment file is invalid; the message names the dotted field."""


# ---------------------------------------------------------------------------
# Loading.


def experiments_dir() -> Path:
    """The directory of the packaged experiment files."""
    return Path(__file__).parent / "experiments"


def packaged() -> list[Path]:
    """Every packaged experiment file, sorted by name."""
    return sorted(experiments_dir().glob("*.toml"))


def find(name_or_path: str) -> Path:
    """A packaged experiment by name (``fast08-fig06``), or a path to a file."""
    p = Path(name_or_path)
    if p.suffix == ".toml" or p.exists():
        return p
    candidate = experiments_dir() / f"{name_or_path}.toml"
    if candidate.exists():
        return candidate
    names = ", ".join(q.stem for q in packaged())
    raise ExperimentError(f"{name_or_path}: no such experiment; see 'incast experiments' ({names})")


def load(source: str | Path | Mapping[str, Any]) -> Experiment:
    """Read and validate an experiment (a name, a path or a mapping in the TOML shape).

    Raises :class:`ExperimentError` with one line naming the dotted field, e.g.
    ``fast08-fig06.toml: claim[0].op: must be one of '<', '<=', '>', '>=', 'approx'``.
    """
    path: Path | None = None
    if isinstance(source, Mapping):
        data: Mapping[str, Any] = source
        label = "experiment"
        check_depth(data, label)
    else:
        path = find(str(source))
        label = path.name
        try:
            data = read_toml(path, label)
        except ScenarioError as e:
            raise ExperimentError(str(e)) from None
    try:
        spec = _File.model_validate(data)
    except ValidationError as e:
        raise ExperimentError(f"{label}: {_describe(e)}") from None
    name = spec.meta.name
    packaged_file = experiments_dir() / f"{name}.toml"
    if path is not None and packaged_file.exists() and path.resolve() != packaged_file.resolve():
        raise ExperimentError(
            f"{label}: meta.name: {name!r} is a packaged experiment's name, and its results would be "
            f"overwritten; give your copy a name of its own, e.g. {name + 'x'!r}"
        )
    try:
        return Experiment(spec, path)
    except ExperimentError as e:
        raise ExperimentError(f"{label}: {e}") from None


def _describe(err: ValidationError) -> str:
    first = err.errors()[0]
    loc = ""
    for part in first["loc"]:
        loc += f"[{part}]" if isinstance(part, int) else (f".{part}" if loc else str(part))
    message = str(first["msg"])
    if first["type"] == "extra_forbidden":
        message = "unknown field"
    elif first["type"] == "literal_error":
        message = message.replace("Input should be", "must be")
    message = message.removeprefix("Value error, ")
    return f"{loc or 'experiment'}: {message[:1].lower()}{message[1:]}"
