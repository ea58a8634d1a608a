"""The summary table of a sweep: one row per point, the mean over seeds and its 95% confidence interval.

``<metric>_mean`` and ``<metric>_ci95`` for every metric of
:data:`~incast.experiment.METRICS`, where ``_ci95`` is the half-width of the
95% Student-t confidence interval of the mean across seeds (NaN for one
seed). Sweeps (:mod:`incast.sweep`) and reference runs
(:mod:`incast.disputes`) summarize their points alike.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from incast.experiment import METRICS, Experiment

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["summarize", "t_975"]


def summarize(experiment: Experiment, table: pd.DataFrame) -> pd.DataFrame:
    """One row per point: ``seeds`` and ``<metric>_mean`` / ``<metric>_ci95`` (Student t, 95%)."""
    import pandas as pd

    axes = experiment.axis_names
    columns = [*axes, "seeds", *(f"{m}_{s}" for m in METRICS for s in ("mean", "ci95"))]
    if table.empty:
        return pd.DataFrame(columns=columns)
    groups = table.groupby(axes, sort=False, dropna=False) if axes else [((), table)]
    records = []
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        record: dict[str, Any] = dict(zip(axes, key, strict=True))
        n = len(g)
        record["seeds"] = n
        for m in METRICS:
            values = g[m].astype(float)
            record[f"{m}_mean"] = float(values.mean())
            record[f"{m}_ci95"] = t_975(n - 1) * float(values.std(ddof=1)) / math.sqrt(n) if n > 1 else math.nan
        records.append(record)
    return pd.DataFrame.from_records(records, columns=columns)


#: Two-sided 95% Student-t quantiles t(0.975, df) for df = 1..30.
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def t_975(df: int) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom (table to 30, then Cornish-Fisher)."""
    if df < 1:
        return math.nan
    if df <= len(_T975):
        return _T975[df - 1]
    z = 1.959964
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
