"""Variance between sessions: passes within dates, a two-level model (issue 30).

The intervals over passes use the passes of one date; a seat measured on several dates shows how
much a session (a day, a server start) moves it beyond the passes of one session. Per cell key,
the one-way random-effects model on log pass values,

    log x_ij = mu + s_i + e_ij,  s_i ~ N(0, sigma_b^2) per session i, e_ij ~ N(0, sigma_w^2),

is fitted by the ANOVA (method-of-moments) estimator for unbalanced groups (Searle, Casella &
McCulloch 1992, Variance Components, section 3.5): MSW = SSW / (N - a), MSB = SSB / (a - 1),
n0 = (N - sum n_i^2 / N) / (a - 1), sigma_b^2 = max(0, (MSB - MSW) / n0). For balanced data
with a positive estimate it equals the REML fit of ``statsmodels`` MixedLM (tests).

Computed from each date's sufficient statistics (count, mean and within sum of squares of the
log values), so a run store's year is read one date at a time.

References
----------
Searle, S. R., Casella, G. & McCulloch, C. E. (1992). Variance Components. Wiley, ch. 3.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..columns import CELL_KEY, SESSION_COLUMNS

__all__ = ["SessionVariance", "session_variance", "session_table", "SESSION_COLUMNS"]

KEY = tuple(CELL_KEY)
METHOD = "one-way random effects on log pass values, sessions = dates (ANOVA estimator)"


@dataclass(frozen=True)
class SessionVariance:
    """Within- and between-session variance of log values (ANOVA estimator)."""

    n_sessions: int
    n_passes: int
    within_log_var: float
    between_log_var: float

    @property
    def between_session_cv(self) -> float:
        """The CV of the session factor on the original scale, sqrt(exp(sigma_b^2) - 1)."""
        return math.sqrt(math.expm1(self.between_log_var))

    @property
    def icc(self) -> float:
        """Share of the variance between sessions, sigma_b^2 / (sigma_b^2 + sigma_w^2)."""
        tot = self.between_log_var + self.within_log_var
        return self.between_log_var / tot if tot > 0 else math.nan


def _from_groups(groups: list[tuple[int, float, float]]) -> SessionVariance | None:
    """(n_i, mean_i, within SS_i) per session -> the estimate; None without 2 sessions and a within df."""
    groups = [g for g in groups if g[0] >= 1]
    a = len(groups)
    n = np.array([g[0] for g in groups], dtype=float)
    big_n = float(n.sum()) if a else 0.0
    if a < 2 or big_n - a < 1:
        return None
    means = np.array([g[1] for g in groups])
    grand = float((n * means).sum() / big_n)
    ssb = float((n * (means - grand) ** 2).sum())
    ssw = float(sum(g[2] for g in groups))
    msw, msb = ssw / (big_n - a), ssb / (a - 1)
    n0 = (big_n - float((n * n).sum()) / big_n) / (a - 1)
    return SessionVariance(a, int(big_n), msw, max(0.0, (msb - msw) / n0))


def session_variance(values, sessions) -> SessionVariance | None:
    """The estimate from positive values and their session labels; None when it cannot be made."""
    v = np.log(np.asarray(values, dtype=float))
    s = np.asarray(sessions, dtype=object)
    groups = []
    for lab in dict.fromkeys(s.tolist()):
        x = v[s == lab]
        groups.append((x.shape[0], float(x.mean()), float(((x - x.mean()) ** 2).sum())))
    return _from_groups(groups)


def _plain(x):
    """A key part as a plain value: None for NA/NaN (which is never equal to itself as a dict key)."""
    if x is None or x is pd.NA or (isinstance(x, float) and math.isnan(x)):
        return None
    return int(x) if isinstance(x, (np.integer,)) else x


def _date_stats(passes: pd.DataFrame, acc: dict) -> None:
    if passes is None or not len(passes):
        return
    v = pd.to_numeric(passes["value"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    ok = np.isfinite(v) & (v > 0)
    p = passes.loc[ok, list(KEY) + ["date"]].astype(object).assign(_lv=np.log(v[ok]))
    for k, g in p.groupby(list(KEY) + ["date"], dropna=False, sort=False):
        x = g["_lv"].to_numpy()
        acc.setdefault(tuple(_plain(x) for x in k[:-1]), []).append((x.shape[0], float(x.mean()), float(((x - x.mean()) ** 2).sum())))


def session_table(pass_table) -> pd.DataFrame:
    """tables/sessions.csv: one row per cell key measured on two or more dates with a within df.

    `pass_table`: the pass table (DataFrame) or a run store's `PassDays` (read one date at a time)."""
    acc: dict[tuple, list] = {}
    if hasattr(pass_table, "days") and hasattr(pass_table, "typed"):
        for d in pass_table.days:
            _date_stats(pass_table.typed(d), acc)
    elif pass_table is not None and len(pass_table):
        for _, g in pass_table.groupby("date", sort=True):
            _date_stats(g, acc)
    rows = []
    for k, groups in acc.items():
        est = _from_groups(groups)
        if est is None:
            continue
        rows.append(dict(zip(KEY, k), n_sessions=est.n_sessions, n_passes=est.n_passes,
                         within_log_var=est.within_log_var, between_log_var=est.between_log_var,
                         between_session_cv=est.between_session_cv, icc=est.icc, method=METHOD))
    out = pd.DataFrame(rows, columns=SESSION_COLUMNS)
    return out.sort_values(list(KEY[:1]) + ["workload", "metric", "statistic"], kind="stable",
                           key=lambda s: s.astype(str)).reset_index(drop=True)
