"""Figures of an experiment, drawn from its summary table with matplotlib (Agg), as PNG and SVG.

Each ``[[plot]]`` of the experiment is one panel: the mean over seeds with its
95% confidence interval as error bars, one line (or bar) per metric and value
of the series axes, log scales where the paper used them; the paper's
reference points (``[[reference]]``) overlaid as black stars, and each claim
against a fixed value as a dashed line over the points it covers. Axes and
series are named as the papers name them (``RTO_min``, ``buffer``), their
values in human units (``200ms``, ``1Gbps``, ``32KiB``). Plotting never runs
a simulation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from incast.experiment import Experiment, Plot, Scalar
from incast.labels import axis_label, format_number, format_value, has_units

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["draw"]


def draw(
    experiment: Experiment,
    summary: pd.DataFrame,
    directory: str | Path,
    quick: bool = False,
    *,
    stem: str = "figure",
    source: str = "simulated",
) -> list[Path]:
    """Draw every panel of ``experiment`` into ``<stem>.png`` and ``<stem>.svg``; return their paths.

    ``quick``: the summary comes from a ``--quick`` run (a panel plotting a setting shows its quick value).
    ``source`` ends the title: ``simulated``, or the reference that measured ``summary`` (``ns-2.35``).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, NullFormatter

    plots = experiment.spec.plot
    if not plots or summary.empty:
        return []
    # At least 10 inches wide: the report shows a figure at the page's width.
    fig, axes = plt.subplots(1, len(plots), figsize=(max(10.0, 5.4 * len(plots)), 4.2), squeeze=False)
    for ax, plot in zip(axes[0], plots, strict=True):
        data = _rows(experiment, summary, plot.where)
        if plot.setting is not None:
            _setting_lines(ax, experiment, plot, data, quick)
        elif plot.kind == "bar":
            _bars(ax, plot, data)
        else:
            _lines(ax, plot, data)
        _references(ax, experiment, plot)
        _thresholds(ax, experiment, plot)
        if plot.logx:
            ax.set_xscale("log")
        # A reference may lack every plotted figure (ns-3's open-loop run has no slowdown): no log axis then.
        if plot.logy and _positive(data, plot.metrics):
            ax.set_yscale("log")
        if plot.ylim is not None:
            ax.set_ylim(*plot.ylim)
        xs = list(dict.fromkeys(data[plot.x]))
        if plot.kind == "line" and plot.logx and all(_numeric(v) for v in xs):
            ax.set_xticks(sorted(xs), [format_value(plot.x, v) for v in sorted(xs)], fontsize=8)
            ax.xaxis.set_minor_formatter(NullFormatter())
        elif plot.kind == "line" and has_units(plot.x):
            ax.xaxis.set_major_formatter(FuncFormatter(_formatter(plot.x)))
        ax.set_xlabel(plot.xlabel or axis_label(plot.x))
        ax.set_ylabel(plot.ylabel or (axis_label(plot.setting) if plot.setting else ", ".join(plot.metrics)))
        if plot.setting is not None and has_units(plot.setting):
            ax.yaxis.set_major_formatter(FuncFormatter(_formatter(plot.setting)))
        ax.set_title(plot.title, fontsize=10)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"{experiment.spec.meta.heading}, {source}", fontsize=11)
    fig.tight_layout()
    out = Path(directory)
    paths = [out / f"{stem}.png", out / f"{stem}.svg"]
    fig.savefig(paths[0], dpi=110)
    fig.savefig(paths[1])
    plt.close(fig)
    return paths


def _formatter(axis: str) -> Callable[[float, object], str]:
    def fmt(value: float, _pos: object) -> str:
        return format_value(axis, value)

    return fmt


def _rows(experiment: Experiment, summary: pd.DataFrame, where: Mapping[str, Any]) -> pd.DataFrame:
    if not where:
        return summary
    import pandas as pd

    mask = pd.Series(False, index=summary.index)
    for coords in experiment.select(where):
        hit = pd.Series(True, index=summary.index)
        for k, v in coords.items():
            hit &= summary[k] == v
        mask |= hit
    return summary[mask]


def _unplotted_axes(plot: Plot, data: pd.DataFrame) -> list[str]:
    """Axes that vary in ``data`` but are neither x nor a series of the plot (an axis
    added to a copy of an experiment): they become series too, so no line merges them."""

    def is_axis(column: str) -> bool:
        return column != "seeds" and not column.endswith(("_mean", "_ci95"))

    named = {plot.x, *plot.series_axes}
    return [c for c in data.columns if is_axis(c) and c not in named and data[c].nunique(dropna=False) > 1]


def _groups(plot: Plot, data: pd.DataFrame) -> list[tuple[list[str], pd.DataFrame]]:
    """(label parts, rows) per combination of the series axes' values, and of any other axis that varies."""
    extra = _unplotted_axes(plot, data)
    axes = [*plot.series_axes, *extra]
    groups = list(data.groupby(axes, sort=False, dropna=False)) if axes else [((), data)]
    out: list[tuple[list[str], pd.DataFrame]] = []
    for key, rows in groups:
        values = key if isinstance(key, tuple) else (key,)
        parts = [f"{axis_label(a)} {format_value(a, v)}" for a, v in zip(axes, values, strict=True)]
        out.append((parts, rows))
    return out


def _series(plot: Plot, data: pd.DataFrame) -> list[tuple[str, str, pd.DataFrame]]:
    """(label, metric, rows) per line: every metric times every combination of the series axes."""
    out: list[tuple[str, str, pd.DataFrame]] = []
    groups = _groups(plot, data)
    for metric in plot.metrics:
        for parts, rows in groups:
            if len(plot.metrics) > 1:
                parts = [metric, *parts]
            out.append((", ".join(parts) or metric, metric, rows))
    return out


def _lines(ax: Any, plot: Plot, data: pd.DataFrame) -> None:
    for label, metric, rows in _series(plot, data):
        rows = rows.sort_values(plot.x) if rows[plot.x].map(_numeric).all() else rows
        ax.errorbar(
            rows[plot.x],
            rows[f"{metric}_mean"],
            yerr=rows[f"{metric}_ci95"].fillna(0),
            marker="o",
            markersize=4,
            capsize=2,
            label=label,
        )


def _setting_lines(ax: Any, experiment: Experiment, plot: Plot, data: pd.DataFrame, quick: bool) -> None:
    """The value of ``plot.setting`` at each point that was run, one line per series value."""
    assert plot.setting is not None
    by_point = experiment.setting_values(plot.setting, quick)
    for parts, rows in _groups(plot, data):
        label = ", ".join(parts) or axis_label(plot.setting)
        rows = rows.sort_values(plot.x)
        ys = [by_point[tuple(r[a] for a in experiment.axis_names)] for _, r in rows.iterrows()]
        ax.plot(rows[plot.x], ys, marker="o", markersize=4, label=f"{label} (as run)")


def _bars(ax: Any, plot: Plot, data: pd.DataFrame) -> None:
    series = _series(plot, data)
    categories = [format_value(plot.x, v) for v in dict.fromkeys(data[plot.x])]
    width = 0.8 / max(len(series), 1)
    for i, (label, metric, rows) in enumerate(series):
        xs = [categories.index(format_value(plot.x, v)) + (i - (len(series) - 1) / 2) * width for v in rows[plot.x]]
        ax.bar(xs, rows[f"{metric}_mean"], width, yerr=rows[f"{metric}_ci95"].fillna(0), capsize=2, label=label)
    ax.set_xticks(range(len(categories)), categories, fontsize=8)


def _positive(data: pd.DataFrame, metrics: list[str]) -> bool:
    """Does ``data`` hold a positive value of one of ``metrics`` (or are there none, a setting's plot)?"""
    import pandas as pd

    if not metrics:
        return True
    return any((pd.to_numeric(data[m], errors="coerce") > 0).any() for m in metrics if m in data)


def _references(ax: Any, experiment: Experiment, plot: Plot) -> None:
    first = True
    for ref in experiment.spec.reference:
        if (ref.metric not in plot.metrics) if ref.metric is not None else (ref.setting != plot.setting):
            continue
        for coords in experiment.select(ref.where):
            if not _inside(experiment, coords, plot.where) or plot.x not in coords:
                continue
            x: Scalar = coords[plot.x]
            if plot.kind == "bar":
                ticks = [t.get_text() for t in ax.get_xticklabels()]
                tick = format_value(plot.x, x)
                if tick not in ticks:
                    continue
                x = ticks.index(tick)
            y = ref.value if ref.setting is None else experiment.resolve(ref.setting, ref.value)
            name = ("paper, computed" if ref.computed else "paper") if first else None
            ax.scatter([x], [y], marker="*", s=140, color="black", zorder=5, label=name)
            first = False


def _thresholds(ax: Any, experiment: Experiment, plot: Plot) -> None:
    """Each claim against a fixed value (``at least 90 %``) of a metric the panel
    plots, as a dashed line over the x values the claim covers."""
    if plot.kind != "line":
        return
    for claim in experiment.spec.claim:
        if claim.value is None or claim.op == "approx" or claim.metric not in plot.metrics:
            continue
        xs = [c[plot.x] for c in experiment.select(claim.where) if plot.x in c and _inside(experiment, c, plot.where)]
        if not xs and plot.x not in claim.where:
            xs = list(experiment.axes.get(plot.x, []))
        if not xs or not all(_numeric(x) for x in xs):
            continue
        ax.hlines(
            claim.value,
            min(xs),
            max(xs),
            colors="gray",
            linestyles="dashed",
            linewidth=1,
            label=f"claim: {claim.metric} {claim.op} {format_number(claim.value)}",
        )


def _inside(experiment: Experiment, coords: Mapping[str, Scalar], where: Mapping[str, Any]) -> bool:
    allowed = experiment.select(where) if where else [{}]
    return any(all(coords.get(k, v) == v for k, v in a.items()) for a in allowed)


def _numeric(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
