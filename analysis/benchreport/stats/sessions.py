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

A cell measured on several dates (`session_level_cells`, issue 43): its passes' interval
describes its latest session only (coverage of the seat's long-run level 77% at 3% day effects,
docs/statistics.md). With `MIN_SESSIONS` or more dates of the cell's current steady level, the
date is the unit: each date's mean log pass value is one observation of mu + s_i + mean e_ij, the
cell's centre the mean of the date means and its interval Student's t on them with D - 1 df
(the summary-statistics approach to a two-level design, exact for balanced dates under the
model: Kalibera & Jones 2013, section 4; Cameron & Miller 2015, few clusters: t on G - 1 df).
With two dates the day effect is not estimable to any use (t on 1 df); the cell keeps its
passes' interval and `sample.few_sessions` says so.

Seat against seat (benchreport.stats.compare): where each seat's cell is a level over its dates
(`MIN_SESSIONS` or more) or a single date, every date of the steady level counts
(`date_means_test`): the difference of the two seats' means of their date means, with a
two-sample t pooled over both seats' dates (D_b + D_c - 2 df). Before issue 43 only each seat's
latest date counted (power 15% at a true 10% with 5% day effects). A seat of two dates still
compares its latest date with a session effect per seat: the log ratio of two latest dates
differs from the seats' long-run ratio by each latest session's effect as well as by its
passes' noise,

    Var(log ratio) = s_w,a^2 / n_a + s_w,b^2 / n_b + 2 sigma_b^2,

with sigma_b^2 one per cell key, pooled over the two seats (`pooled_session_variance`: seats
fixed, sessions random within seat, the ANOVA estimator of the nested model; a seat with one
session adds to the within mean square only, so one seat's several dates stand for both,
the equal-variance assumption of a pooled estimate), and Satterthwaite's degrees of freedom for
the sum (`two_level_log_ratio_test`).

References
----------
Searle, S. R., Casella, G. & McCulloch, C. E. (1992). Variance Components. Wiley, ch. 3
(ANOVA estimation; balanced and unbalanced one-way and nested classifications).
Satterthwaite, F. E. (1946). An approximate distribution of estimates of variance components.
Biometrics Bulletin 2, 110-114.
Kalibera, T. & Jones, R. (2013). Rigorous benchmarking in reasonable time (repeat, and count
the variance, at the level where it arises).
Cameron, A. C. & Miller, D. L. (2015). A practitioner's guide to cluster-robust inference.
J. Human Resources 50(2), 317-372 (few clusters: t on G - 1 df over cluster means).
Student (1908). The probable error of a mean. Biometrika 6, 1-25.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from scipy.special import stdtr, stdtrit

from ..columns import CELL_KEY, SESSION_COLUMNS
from .passes import LogRatioTest, PassSummary

__all__ = [
    "SessionVariance",
    "session_variance",
    "session_table",
    "SESSION_COLUMNS",
    "PooledSessions",
    "pooled_session_variance",
    "session_groups",
    "two_level_log_ratio_test",
    "plain_key",
    "MIN_SESSIONS",
    "SessionLevel",
    "session_level",
    "session_level_cells",
    "date_means_test",
    "since_dates",
    "days_of",
]

#: dates of a cell's steady level its interval needs to count the day effect, the date as the
#: unit (t on D - 1 df: at 2 dates t_0.975 = 12.7, an interval of no use)
MIN_SESSIONS = 3

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


@dataclass(frozen=True)
class PooledSessions:
    """The between-session variance of one cell key pooled over seats, with the mean squares
    behind it (for Satterthwaite's degrees of freedom): E[MSB] = MSW + coef * sigma_b^2."""

    between_log_var: float  # sigma_b^2, truncated at 0
    ms_between: float
    df_between: int
    ms_within: float
    df_within: int
    coef: float
    n_sessions: int

    @property
    def df_of_between(self) -> float:
        """Satterthwaite's df of the untruncated estimate (MSB - MSW) / coef (nan when it is <= 0)."""
        est = (self.ms_between - self.ms_within) / self.coef
        if not est > 0:
            return math.nan
        return est**2 * self.coef**2 / (self.ms_between**2 / self.df_between + self.ms_within**2 / self.df_within)


def pooled_session_variance(per_seat) -> PooledSessions | None:
    """sigma_b^2 of the nested model log x_sij = mu_s + b_si + e_sij (seat s fixed, session i random
    within seat), by the ANOVA estimator: per seat the sessions' sum of squares about the seat's
    own mean (so a difference between seats is never counted as session variance), pooled:
    MSB = sum SSB_s / sum (a_s - 1), MSW = SSW / (N - a), coef = sum (N_s - sum_i n_si^2 / N_s)
    / sum (a_s - 1), sigma_b^2 = max(0, (MSB - MSW) / coef). `per_seat`: for each seat a list of
    (n_i, mean_i, within SS_i) of its sessions (log values). None without a between df (two
    sessions of one seat) and a within df. With one seat it is the one-way estimator.

    References
    ----------
    Searle, Casella & McCulloch (1992), ch. 3 (ANOVA estimation; the nested classification).
    """
    ssb = ssw = k = 0.0
    df_b, big_n, a_tot = 0, 0.0, 0
    for groups in per_seat:
        groups = [g for g in groups if g[0] >= 1]
        if not groups:
            continue
        n = np.array([g[0] for g in groups], dtype=float)
        seat_n = float(n.sum())
        means = np.array([g[1] for g in groups])
        grand = float((n * means).sum() / seat_n)
        ssb += float((n * (means - grand) ** 2).sum())
        ssw += float(sum(g[2] for g in groups))
        k += seat_n - float((n * n).sum()) / seat_n
        df_b, big_n, a_tot = df_b + len(groups) - 1, big_n + seat_n, a_tot + len(groups)
    if df_b < 1 or big_n - a_tot < 1:
        return None
    msw, msb = ssw / (big_n - a_tot), ssb / df_b
    coef = k / df_b
    return PooledSessions(max(0.0, (msb - msw) / coef), msb, df_b, msw, int(big_n - a_tot), coef, a_tot)


def two_level_log_ratio_test(
    baseline: PassSummary, candidate: PassSummary, sessions: PooledSessions, *, level: float = 0.95
) -> LogRatioTest | None:
    """Ratio candidate/baseline of two seats' latest centres with a two-level variance: each side's
    passes (``log_se`` on ``df``, as Welch's) plus one session effect per side, 2 sigma_b^2
    (`sessions`), t on the Welch-Satterthwaite df of the three terms, the session term on the
    estimate's between-session df (sum (a_s - 1)). The uncertainty MSW adds to sigma_b^2 (N - a df)
    is left out of the df: counted with its negative coefficient, Satterthwaite's df falls towards
    0 when sigma_b^2 is estimated near 0 (a known weakness of the approximation for a difference of
    mean squares; Searle, Casella & McCulloch 1992). Coverage measured in tests/test_session_compare.py
    and docs/statistics.md. sigma_b^2 estimated at 0
    leaves Welch's interval. None when a side has no interval.

    References
    ----------
    Satterthwaite (1946); Searle, Casella & McCulloch (1992); Welch (1947).
    """
    sides = (baseline, candidate)
    if any(not (math.isfinite(s.log_se) and math.isfinite(s.df)) for s in sides):
        return None
    vb, vc, vs = baseline.log_se**2, candidate.log_se**2, 2.0 * sessions.between_log_var
    var = vb + vc + vs
    if var == 0.0:
        return None
    df = var**2 / (
        (vb**2 / baseline.df if vb else 0.0)
        + (vc**2 / candidate.df if vc else 0.0)
        + (vs**2 / sessions.df_between if vs else 0.0)
    )
    se, d = math.sqrt(var), candidate.log_mean - baseline.log_mean
    t = float(stdtrit(df, 0.5 + level / 2.0))
    p = 2.0 * float(stdtr(df, -abs(d) / se))
    return LogRatioTest(
        ratio=math.exp(d), low=math.exp(d - t * se), high=math.exp(d + t * se), p_value=min(p, 1.0), df=df, level=level
    )


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


def plain_key(x):
    """A key part as a plain value: None for NA/NaN (which is never equal to itself as a dict key)."""
    if x is None or x is pd.NA or (isinstance(x, float) and math.isnan(x)):
        return None
    return int(x) if isinstance(x, (np.integer,)) else x


def _date_stats(passes: pd.DataFrame, acc: dict) -> None:
    """Add one date's (n, mean, within SS, date) of each cell key's log pass values to `acc`.

    The groups are numbered once (`ngroup`, in order of first appearance) and each group's values
    taken by position in table order, so every number is the one a loop over pandas' groups gives
    (the same values in the same order into the same numpy reductions) at a fraction of its cost:
    iterating 250,000 pandas groups was 25 of the 40 s of a new night's build of a 10-seat year.
    The groups of one size are reduced as the rows of one matrix, each row as its own 1-D array
    would be."""
    if passes is None or not len(passes):
        return
    v = pd.to_numeric(passes["value"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    ok = np.isfinite(v) & (v > 0)
    if not ok.any():
        return
    p = passes.loc[ok, list(KEY) + ["date"]].astype(object)
    log_values = np.log(v[ok])
    codes = p.groupby(list(KEY) + ["date"], dropna=False, sort=False).ngroup().to_numpy()
    order = np.argsort(codes, kind="stable")
    counts = np.bincount(codes)
    ends = np.cumsum(counts)
    keys = p.to_numpy(dtype=object)[order[ends - counts]]  # each group's first row: KEY..., date
    means, sums = np.empty(len(counts)), np.empty(len(counts))
    for n in np.unique(counts).tolist():  # the groups of each size as the rows of one matrix
        g = np.flatnonzero(counts == n)
        x = log_values[order[(ends[g] - n)[:, None] + np.arange(n)]]
        mean = x.mean(axis=1)  # a row's reduction is the 1-D array's (tests/test_sessions_block.py)
        means[g], sums[g] = mean, ((x - mean[:, None]) ** 2).sum(axis=1)
    for key, n, mean, ss in zip(keys, counts.tolist(), means.tolist(), sums.tolist()):
        acc.setdefault(tuple(plain_key(part) for part in key[:-1]), []).append((n, mean, ss, str(key[-1])))


#: the name a date's session statistics are kept under beside its pass rows (bump when
#: `_date_stats` or `_date_stats_table` changes: older files are then not read)
SESSION_STATS_NAME = "sessions-2"

#: a date's session statistics as kept: the cell key's parts (text, the concurrency a whole
#: number), then (n, mean, within SS, date) of its log pass values; a row per key and date
_STATS_SCHEMA = pa.schema(
    [pa.field(k, pa.int64() if k == "concurrency" else pa.string()) for k in KEY]
    + [pa.field("n", pa.int64()), pa.field("mean", pa.float64()), pa.field("ss", pa.float64())]
    + [pa.field("date", pa.string())]
)


def _date_stats_table(passes: pd.DataFrame) -> pa.Table:
    """`_date_stats` of one date as an Arrow table (`_STATS_SCHEMA`), its keys in order: read back
    (`_add_date_stats`) to the same keys, numbers and order, since Arrow keeps every float's bits.
    A key whose parts are not text and whole numbers (never seen, but a run file is free) is kept
    as JSON, one text cell holding the date's whole statistics."""
    acc: dict[tuple, list] = {}
    _date_stats(passes, acc)
    rows = [(key, x) for key, days in acc.items() for x in days]
    typed = all(
        (part is None or type(part) is (int if k == "concurrency" else str))
        for key, _ in rows
        for k, part in zip(KEY, key)
    )
    if not typed:
        text = json.dumps([[list(key), [list(x) for x in days]] for key, days in acc.items()])
        return pa.table({"json": pa.array([text], type=pa.string())})
    columns = [[key[i] for key, _ in rows] for i in range(len(KEY))]
    columns += [[x[i] for _, x in rows] for i in range(4)]
    return pa.Table.from_arrays(
        [pa.array(c, type=f.type) for c, f in zip(columns, _STATS_SCHEMA)], schema=_STATS_SCHEMA
    )


def _add_date_stats(acc: dict, table: pa.Table) -> None:
    """A date's kept statistics (`_date_stats_table`) into `acc`, as `_date_stats` adds them."""
    if "json" in table.column_names:
        for key, days in json.loads(table.column("json")[0].as_py()):
            acc.setdefault(tuple(key), []).extend(tuple(x) for x in days)
        return
    keys = zip(*(table.column(k).to_pylist() for k in KEY))
    dates = table.column("date")
    if dates.null_count == 0 and len(dates) and pc.count_distinct(dates).as_py() == 1:
        # one date a table: one text object for all its rows (a year of a fleet's keys had 1.25
        # million copies of 367 dates, a third of the statistics' memory)
        dates = itertools.repeat(dates[0].as_py(), len(dates))
    else:
        dates = dates.to_pylist()
    stats = zip(*(table.column(c).to_pylist() for c in ("n", "mean", "ss")), dates)
    for key, x in zip(keys, stats):
        acc.setdefault(key, []).append(x)


def session_groups(pass_table) -> dict[tuple, list[tuple[int, float, float]]]:
    """{cell key (CELL_KEY, parts as `plain_key`): [(n, mean, within SS, date) of the log pass
    values of each date]}, dates in order. `pass_table`: the pass table (DataFrame) or a run store's
    `PassDays` (read one date at a time)."""
    acc: dict[tuple, list] = {}
    if hasattr(pass_table, "days") and hasattr(pass_table, "derived"):  # kept per date beside its rows
        for d in pass_table.days:
            _add_date_stats(acc, pass_table.derived(d, SESSION_STATS_NAME, _date_stats_table))
    elif hasattr(pass_table, "days") and hasattr(pass_table, "typed"):
        for d in pass_table.days:
            _date_stats(pass_table.typed(d), acc)
    elif pass_table is not None and len(pass_table):
        for _, g in pass_table.groupby("date", sort=True):
            _date_stats(g, acc)
    return acc


def session_table(pass_table, groups: dict | None = None) -> pd.DataFrame:
    """tables/sessions.csv: one row per cell key measured on two or more dates with a within df.

    `pass_table`: the pass table (DataFrame) or a run store's `PassDays` (read one date at a time);
    `groups`: its `session_groups`, when already made (then `pass_table` is not read)."""
    acc = session_groups(pass_table) if groups is None else groups
    rows = []
    for k, per_date in acc.items():
        est = _from_groups(per_date)
        if est is None:
            continue
        rows.append(
            dict(
                zip(KEY, k),
                n_sessions=est.n_sessions,
                n_passes=est.n_passes,
                within_log_var=est.within_log_var,
                between_log_var=est.between_log_var,
                between_session_cv=est.between_session_cv,
                icc=est.icc,
                method=METHOD,
            )
        )
    out = pd.DataFrame(rows, columns=SESSION_COLUMNS)
    return out.sort_values(
        list(KEY[:1]) + ["workload", "metric", "statistic"], kind="stable", key=lambda s: s.astype(str)
    ).reset_index(drop=True)


# --------------------------------------------------------------------------- the date as the unit
@dataclass(frozen=True)
class SessionLevel:
    """A cell's long-run level from its dates: the mean of the date means of log pass values,
    its standard error from their spread and the t degrees of freedom (dates - 1)."""

    log_mean: float
    log_se: float
    df: float
    n_sessions: int
    n_passes: int


def days_of(groups: dict | None, key: tuple, since: str | None = None, until: str | None = None) -> list:
    """A cell key's (n, mean, within SS, date) per date from `session_groups`, only the dates from
    `since` (the first date of its steady level) to `until` (ISO dates), when given."""
    days = (groups or {}).get(key, [])
    return [g for g in days if g[0] >= 1 and (since is None or g[3] >= since) and (until is None or g[3] <= until)]


def session_level(days, *, min_sessions: int = MIN_SESSIONS) -> SessionLevel | None:
    """The long-run level of a cell from `days` ((n, mean, within SS, ...) per date): the mean of the
    date means, t on D - 1 df (each date one observation of mu + s_i + mean e_ij; Kalibera & Jones
    2013). None with fewer than `min_sessions` dates or no spread between them."""
    y = np.array([g[1] for g in days if g[0] >= 1], dtype=float)
    if len(y) < max(int(min_sessions), 2):
        return None
    se = float(y.std(ddof=1)) / math.sqrt(len(y))
    if not (se > 0 and math.isfinite(se)):
        return None
    return SessionLevel(float(y.mean()), se, float(len(y) - 1), len(y), int(sum(g[0] for g in days if g[0] >= 1)))


def date_means_test(baseline_days, candidate_days, *, level: float = 0.95) -> LogRatioTest | None:
    """Ratio candidate/baseline of two seats' long-run levels, the date as the unit: the difference
    of their means of date means (log pass values) with a two-sample t pooled over both seats'
    dates (D_b + D_c - 2 df; a seat of one date contributes its date mean, the day-to-day spread
    is the other seat's, the equal-variance assumption of a pooled t). None without a df or a
    spread.

    References
    ----------
    Student (1908); Kalibera, T. & Jones, R. (2013), Rigorous benchmarking in reasonable time
    (replicate, and test, at the level that varies); benchreport.stats.sequential.day_summary
    (the same statistic, for `plan`).
    """
    yb = np.array([g[1] for g in baseline_days if g[0] >= 1], dtype=float)
    yc = np.array([g[1] for g in candidate_days if g[0] >= 1], dtype=float)
    df = len(yb) + len(yc) - 2
    if not len(yb) or not len(yc) or df < 1:
        return None
    ss = float(((yb - yb.mean()) ** 2).sum() + ((yc - yc.mean()) ** 2).sum())
    se = math.sqrt(ss / df * (1.0 / len(yb) + 1.0 / len(yc)))
    if not (se > 0 and math.isfinite(se)):
        return None
    d = float(yc.mean() - yb.mean())
    t = float(stdtrit(df, 0.5 + level / 2.0))
    p = 2.0 * float(stdtr(df, -abs(d) / se))
    return LogRatioTest(
        ratio=math.exp(d),
        low=math.exp(d - t * se),
        high=math.exp(d + t * se),
        p_value=min(p, 1.0),
        df=float(df),
        level=level,
    )


def since_dates(levels: pd.DataFrame | None) -> dict[tuple, str]:
    """{cell key (as `session_groups`): the first date of its current steady level} from the latest
    rows of tables/history.csv (benchreport.stats.history_summary: `level_since`), so the dates
    before a step are not averaged into a level."""
    if levels is None or not len(levels) or "level_since" not in levels:
        return {}
    k = levels[levels["level_since"].notna()]
    out: dict[tuple, str] = {}
    for row, date, since in zip(
        k[list(KEY)].astype(object).itertuples(index=False, name=None),
        k["date"].astype(str),
        k["level_since"].astype(str),
    ):
        key = tuple(plain_key(x) for x in row)
        if key not in out or date > out[key][0]:
            out[key] = (date, since)
    return {key: since for key, (_, since) in out.items()}


SESSION_METHOD = "t on log date means, the date as the unit ({dates} dates, {passes} passes; df={df})"


def session_level_cells(
    cells: pd.DataFrame, groups: dict | None, *, level: float, since: dict | None = None
) -> pd.DataFrame:
    """The described cells with the day effect in their intervals: a cell whose key was measured on
    `MIN_SESSIONS` or more dates of its steady level (`since`, up to the cell's date) gets the
    mean of its date means as its estimate and Student's t on them as its interval (ci_route
    ``t_log_sessions``; `session_level`); other cells are returned as they were."""
    if cells is None or not len(cells) or not groups:
        return cells
    since = since or {}
    out = cells.copy()
    cols = {c: out[c].to_numpy(dtype=object).copy() for c in ("ci_route", "ci_reason", "ci_method")}
    num = {
        c: out[c].to_numpy(dtype=float).copy() for c in ("estimate", "ci_low", "ci_high", "ci_level", "log_se", "df")
    }
    for i, row in enumerate(out[list(KEY) + ["date"]].astype(object).itertuples(index=False, name=None)):
        key = tuple(plain_key(x) for x in row[:-1])
        lv = session_level(days_of(groups, key, since.get(key), str(row[-1])))
        if lv is None:
            continue
        t = float(stdtrit(lv.df, 0.5 + level / 2.0))
        num["estimate"][i] = math.exp(lv.log_mean)
        num["ci_low"][i] = math.exp(lv.log_mean - t * lv.log_se)
        num["ci_high"][i] = math.exp(lv.log_mean + t * lv.log_se)
        num["ci_level"][i], num["log_se"][i], num["df"][i] = level, lv.log_se, lv.df
        cols["ci_route"][i], cols["ci_reason"][i] = "t_log_sessions", ""
        cols["ci_method"][i] = SESSION_METHOD.format(dates=lv.n_sessions, passes=lv.n_passes, df=int(lv.df))
    for c, v in num.items():
        out[c] = v
    for c, v in cols.items():
        out[c] = pd.array(v, dtype=out[c].dtype)
    return out
