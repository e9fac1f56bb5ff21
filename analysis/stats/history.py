"""History: did a seat's cell get better or worse on a date, or is that noise?

For each seat and cell measured on several dates, every date's value (the geometric
mean of its passes, as in cells.csv) is compared with the seat's *steady level*: the
mean log value of up to `window` earlier dates since the last confirmed change. The
night is the unit here (nights differ by more than their passes do), so the test is a
prediction interval: with W level nights of mean m and standard deviation s (log
scale), a new night x is within the level when

    |log x - m| <= t_{W-1, 1-alpha/2} * s * sqrt(1 + 1/W)      (Hahn & Meeker 1991, §4.5)

The change exp(log x - m) gets that interval, and the verdict follows the same rule as
a comparison's (benchreport.stats.compare.verdict_reason), direction aware:

* ``within_noise``: the interval lies inside 1 +/- noise;
* ``regression`` / ``improvement``: it lies wholly beyond the noise band and the test
  stays significant at `alpha` after a Bonferroni correction over the seat's cells
  measured that date (so a seat has at most about 365 * alpha false verdicts a year,
  however many cells it has: benchmarks/history_study.py measures it);
* ``insufficient_data``: anything else, or fewer than `min_level` level nights.

A verdict is given on the night itself. The level moves only once the next night
confirms it (a change in the same direction, again beyond the band): then the level
restarts at the changed night, its spread borrowed from the old level until it has
`min_level` nights of its own. A night the next one does not confirm is an outlier:
reported, and left out of the level.

This is the rule of asv (step detection, then a significance test on the samples at
p < 0.002) and Bencher (a t-test against the last 64 samples), made a prediction
interval so that night-to-night variation, not the passes of one night, sets the noise.

References
----------
Hahn, G. J. & Meeker, W. Q. (1991). Statistical Intervals, Wiley, §4.5 (prediction
interval for one future observation). Daly, D. et al. (2020). The use of change point
detection to identify software performance regressions in a continuous integration
system. ICPE '20. asv `asv/step_detect.py`; Bencher's t-test threshold model.
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import pandas as pd
import pyarrow as pa
from scipy.special import stdtr, stdtrit

from ..columns import METRICS, higher_is_better

__all__ = ["HISTORY_COLUMNS", "HistoryRule", "HistoryDayCache", "history", "VERDICTS", "ORDER"]

HISTORY_COLUMNS = ["seat", "harness", "probe", "load_id", "workload", "concurrency", "metric", "statistic", "date",
                   "estimate", "n_passes", "level", "level_nights", "level_since", "change", "ci_low", "ci_high",
                   "p_value", "p_adj", "verdict", "verdict_reason"]
VERDICTS = ("regression", "improvement", "within_noise", "insufficient_data")
_KEY = ["seat", "harness", "probe", "load_id", "workload", "concurrency", "metric", "statistic"]


@dataclass(frozen=True)
class HistoryRule:
    """The parameters of the history verdicts (defaults: see each field)."""

    alpha: float = 0.001        # per seat and date, Bonferroni over its cells (asv uses p < 0.002)
    noise: float = 0.02         # the comparisons' noise band (criterion.rs' 2%)
    window: int = 64            # level nights at most (Bencher's default sample size)
    min_level: int = 5          # level nights before the first verdict
    level: float = 0.95         # the interval shown with each change

    @classmethod
    def from_thresholds(cls, th) -> "HistoryRule":
        """The rule an analysis uses (benchreport.thresholds): history_alpha, history_window and
        history_min_level, the comparisons' noise band, and intervals at 1 - alpha."""
        return cls(alpha=float(th.history_alpha), noise=float(th.noise), window=int(th.history_window),
                   min_level=int(th.history_min_level), level=1.0 - float(th.alpha))


@dataclass
class _Series:
    """One cell's level state while the dates are walked."""

    logs: list = field(default_factory=list)      # log values of the current level's nights
    since: str | None = None
    spread: tuple | None = None                   # (s, df) borrowed from the previous level
    pending: tuple | None = None                  # (log value, date, direction) awaiting confirmation
    decided: bool = False                         # the last row was a regression or an improvement


def _level(s: _Series, rule: HistoryRule) -> tuple[float, float, int]:
    """(mean, sd, n) of the level's last `window` log values (plain Python: a few dozen values)."""
    lv = s.logs[-rule.window:]
    w = len(lv)
    m = math.fsum(lv) / w
    sd = math.sqrt(math.fsum((v - m) ** 2 for v in lv) / (w - 1)) if w > 1 else math.nan
    return m, sd, w


def _test(s: _Series, x: float, rule: HistoryRule):
    """(change, low, high, p) of log value x against the level, or None without a level."""
    if len(s.logs) >= rule.min_level:
        m, sd, w = _level(s, rule)
        df = w - 1
    elif s.spread is not None and s.logs:
        m, _, w = _level(s, rule)
        sd, df = s.spread
    else:
        return None
    se = sd * math.sqrt(1 + 1 / w)
    d = x - m
    if se == 0:
        return math.exp(d), math.exp(d), math.exp(d), (1.0 if d == 0 else 0.0)
    t = float(stdtrit(df, 0.5 + rule.level / 2))  # Student t quantile (scipy.special: a ufunc, fast)
    p = float(2 * stdtr(df, -abs(d) / se))
    return math.exp(d), math.exp(d - t * se), math.exp(d + t * se), p


def _verdict(change, lo, hi, p_adj, metric, rule: HistoryRule) -> tuple[str, str]:
    if 1 - rule.noise <= lo and hi <= 1 + rule.noise:
        return "within_noise", ""
    above, below = lo > 1 + rule.noise, hi < 1 - rule.noise
    if not (above or below):
        return "insufficient_data", "the interval reaches into the noise band"
    if not p_adj < rule.alpha:
        return "insufficient_data", f"not significant at {rule.alpha:g} after the correction over the seat's cells"
    good = above == (higher_is_better(metric) if metric in METRICS else True)
    return ("improvement" if good else "regression"), ""


def _rebase(s: _Series, rule: HistoryRule) -> None:
    """Start a new level at the pending night, keeping the old level's spread until it has its own."""
    px, pdate, _ = s.pending
    if len(s.logs) >= 2:
        _, sd, w = _level(s, rule)
        s.spread = (sd, w - 1)
    s.logs, s.since, s.pending = [px], pdate, None


class HistoryDayCache(Protocol):
    """Where a walk over the dates is kept between analyses (benchreport.store.cache keeps it in the
    store): each date's walked rows, keyed by the digest of every input up to that date, and the
    series' level state after the last date walked."""

    #: set by `history_days`: the date its walk resumed after, None when it walked from the start
    resumed_after: str | None

    def load_state(self) -> dict | None:
        """{"upto": date, "digest": its digest, "series": {seat: {key: _Series}}, "pieces": {date:
        {"n": rows walked, "verdicts": {verdict: n}}}, "marked": the walked rows that are a
        regression or an improvement or follow one (Arrow)}, or None."""

    def save_state(self, state: dict) -> bool: ...

    def has_rows(self, day: str, digest: str) -> bool: ...

    def load_rows(self, day: str, digest: str) -> pa.Table | None: ...

    def save_rows(self, day: str, digest: str, rows: pa.Table) -> bool: ...


_WALK = ["seat", "harness", "probe", "load_id", "workload", "concurrency", "metric", "statistic", "date", "estimate",
         "n_passes"]
#: a walked row's cell key in the walk's own terms (harness, probe and load "" when none, concurrency -1)
_WKEY = ["seat", "_h", "_p", "_l", "workload", "_c", "metric", "statistic"]
#: the order of the history table: date first, then the cell (the order the dates are walked in)
ORDER = ["date", "seat", "_h", "_p", "_l", "workload", "_c", "metric", "statistic"]


def _walk_input(dated: pd.DataFrame) -> pd.DataFrame:
    """The rows to walk (positive estimates), with the walk's keys, in the table's order."""
    if "load_id" not in dated:  # a dated table of cells not keyed by load (tests, older callers)
        dated = dated.assign(load_id=None)
    d = dated[pd.to_numeric(dated["estimate"], errors="coerce").astype(float).to_numpy() > 0][_WALK].copy()
    # text stays pandas' own (a year of rows as Python strings was hundreds of MB at 50 seats)
    d["_h"], d["_p"] = d["harness"].astype("str").fillna(""), d["probe"].astype("str").fillna("")
    d["_l"] = d["load_id"].astype("str").fillna("")
    d["_c"] = pd.array(d["concurrency"], dtype="Int64").fillna(-1).astype("int64")
    d["date"] = d["date"].astype("str")
    return d.sort_values(ORDER, kind="stable").reset_index(drop=True)


def _walk(d: pd.DataFrame, series: dict, rule: HistoryRule, start: int = 0):
    """(date, rows) for every date of `d` from position `start` on: each seat's cells judged against
    their level, the levels moved (`_night`). Rows are dicts of HISTORY_COLUMNS plus ``_follows``
    (the cell's previous row was a regression or an improvement). One date's records at a time."""
    d = d.iloc[start:]  # a resumed walk: Python values for its own dates only
    dates = d["date"].to_numpy(dtype=object)
    seats = d["seat"].astype(object).to_numpy()
    i, n = 0, len(d)
    while i < n:
        j = i
        date = dates[i]
        while j < n and dates[j] == date:
            j += 1
        recs = d.iloc[i:j].to_dict("records")
        rows, first = [], 0
        for k in range(1, len(recs) + 1):  # rows sorted by date, then seat: one slice per seat and date
            if k == len(recs) or seats[i + k] != seats[i + first]:
                rows.extend(_night(recs[first:k], date, series.setdefault(seats[i + first], {}), rule))
                first = k
        yield str(date), rows
        i = j


def _multi(d: pd.DataFrame) -> np.ndarray:
    """Which walked rows belong to a cell with more than one date (the table has those only)."""
    return (d.groupby(_WKEY)["date"].transform("nunique") > 1).to_numpy()


def history(dated: pd.DataFrame, *, rule: HistoryRule = HistoryRule()) -> pd.DataFrame:
    """Dated verdicts for every seat and cell measured on several dates (the whole table in memory;
    a run store keeps it date by date: `history_days`).

    Parameters
    ----------
    dated : DataFrame
        Cells of every date (benchreport.stats.cells.CellSet.dated): seat, harness, probe,
        workload, concurrency, metric, statistic, date, estimate, n_passes.
    rule : HistoryRule

    Returns
    -------
    DataFrame with HISTORY_COLUMNS, one row per seat, cell and date, by date then cell (the first
    `min_level` dates of a cell are ``insufficient_data``: no level yet).
    """
    if dated is None or not len(dated):
        return _typed(pd.DataFrame({c: [] for c in HISTORY_COLUMNS}))
    d = _walk_input(dated)
    multi = _multi(d)
    parts, batch = [], []
    for _, rows in _walk(d, {}, rule):
        batch.extend(rows)
        if len(batch) >= 20_000:  # a year of rows as dicts would be most of a cold walk's memory
            parts.append(_typed(pd.DataFrame(batch, columns=HISTORY_COLUMNS)))
            batch = []
    if batch or not parts:
        parts.append(_typed(pd.DataFrame(batch, columns=HISTORY_COLUMNS)))
    walked = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    return walked[multi].reset_index(drop=True)


def _digests(d: pd.DataFrame, rule: HistoryRule, day_tokens: dict | None = None) -> dict[str, str]:
    """{date: SHA-256 of the rule and every walked row up to and including that date}; from each
    date's token instead of its rows when `day_tokens` knows every date (a year of rows hashed is
    most of a resumed walk's time)."""
    dates = sorted(d["date"].astype(str).unique().tolist())
    h = hashlib.sha256((repr(rule) + f"\x00history {HISTORY_VERSION}").encode())
    out = {}
    if day_tokens and all(day_tokens.get(x) for x in dates):
        for date in dates:
            h.update(f"\x00{date}\x00{day_tokens[date]}".encode())
            out[date] = h.copy().hexdigest()
        return out
    rows = pd.util.hash_pandas_object(d[_WALK].astype(object), index=False).to_numpy()
    for date, pos in d.groupby("date", sort=True).indices.items():
        h.update(str(date).encode() + np.ascontiguousarray(rows[pos]).tobytes())
        out[str(date)] = h.copy().hexdigest()
    return out


#: bump when what a walked row holds, or the walk's state, changes: kept walks of older code are not used
HISTORY_VERSION = 4  # 4: cells keyed by load_id too


_TEXT = ("seat", "harness", "probe", "load_id", "workload", "metric", "statistic", "date", "level_since", "verdict",
         "verdict_reason")
_INT = ("concurrency", "n_passes", "level_nights")


def _typed(df: pd.DataFrame) -> pd.DataFrame:
    """The history table's dtypes, the same however its rows were walked."""
    out = {}
    for c in HISTORY_COLUMNS:
        col = df[c]
        if c in _TEXT:  # text as pandas' str (missing is NaN: flags compare cells with ==)
            vals = col.astype(object)
            out[c] = pd.Series(vals.where(vals.notna(), None).to_numpy(), dtype=object).astype("str")
        elif c in _INT:  # Python ints, None where missing (a year of rows: no per-value Python calls)
            vals = pd.to_numeric(col.astype(object), errors="coerce")
            known = vals.notna().to_numpy()
            ints = np.full(len(vals), None, dtype=object)
            ints[known] = vals.to_numpy()[known].astype("int64").tolist()
            out[c] = pd.Series(ints, dtype=object)
        else:
            out[c] = pd.Series(pd.to_numeric(col, errors="coerce").astype(float).to_numpy())
    return pd.DataFrame(out, columns=HISTORY_COLUMNS)


def typed_from_arrow(t) -> pd.DataFrame:
    """The history table from Arrow (its cache), with the dtypes `_typed` gives."""
    return _typed(t.select(HISTORY_COLUMNS).to_pandas())


def _rows_to_arrow(rows: list[dict]) -> pa.Table:
    """One date's walked rows as Arrow: HISTORY_COLUMNS typed, and ``_follows``."""
    t = pa.Table.from_pandas(_typed(pd.DataFrame(rows, columns=HISTORY_COLUMNS)), preserve_index=False)
    return t.append_column("_follows", pa.array([bool(r["_follows"]) for r in rows], type=pa.bool_()))


def _judge(s: _Series, x: float, metric: str, m: int, rule: HistoryRule, t=False) -> tuple[dict, str, int]:
    """The row fields, verdict and direction of one night against the series' level
    (`t`: the night's `_test` when already computed)."""
    fields = dict(level=math.exp(_level(s, rule)[0]) if s.logs else math.nan,
                  level_nights=min(len(s.logs), rule.window), level_since=s.since)
    t = _test(s, x, rule) if t is False else t
    if t is None:
        fields.update(change=math.nan, ci_low=math.nan, ci_high=math.nan, p_value=math.nan, p_adj=math.nan,
                      verdict="insufficient_data", verdict_reason=f"no level yet ({len(s.logs)} night(s))")
        return fields, "insufficient_data", 0
    change, lo, hi, p = t
    p_adj = min(1.0, p * max(m, 1))
    verdict, why = _verdict(change, lo, hi, p_adj, metric, rule)
    fields.update(change=change, ci_low=lo, ci_high=hi, p_value=p, p_adj=p_adj, verdict=verdict, verdict_reason=why)
    return fields, verdict, (1 if change > 1 else -1)


def _night(recs: list[dict], date: str, series: dict, rule: HistoryRule) -> list[dict]:
    """The verdicts of one seat's cells on one date, Bonferroni over the cells with a level."""
    keys = [tuple(r[k] for k in ("_h", "_p", "_l", "workload", "_c", "metric", "statistic")) for r in recs]
    tests = [_test(series.setdefault(k, _Series()), math.log(float(r["estimate"])), rule) for r, k in zip(recs, keys)]
    m = sum(t is not None for t in tests)
    out = []
    for r, k, t in zip(recs, keys, tests):
        s, x, metric = series[k], math.log(float(r["estimate"])), str(r["metric"])
        fields, verdict, direction = _judge(s, x, metric, m, rule, t)
        decided = verdict in ("regression", "improvement")
        if s.pending is not None and decided and direction == s.pending[2]:
            # this night confirms the pending change: the level moves, and this night is told
            # against the new level (the change was reported on the night it happened)
            _rebase(s, rule)
            fields, verdict, direction = _judge(s, x, metric, m, rule)
            decided = False
        else:
            s.pending = None  # an unconfirmed change was an outlier night, left out of the level
        if decided:
            s.pending = (x, date, direction)
        else:
            s.since = s.since or date
            s.logs.append(x)
        row = {c: r.get(c) for c in HISTORY_COLUMNS if c in r}
        row.update(date=date, _follows=s.decided, **fields)
        s.decided = verdict in ("regression", "improvement")
        out.append(row)
    return out
