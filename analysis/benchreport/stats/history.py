"""History: did a seat's cell get better or worse across dates, or is that noise?

For each seat and cell measured on several dates, every date's value x (log of the geometric
mean of its passes, as in cells.csv) is watched for a change over all the nights since the
change, not one night at a time (a step a one-night test misses on its night would otherwise
be absorbed into the level and never be found; a slow drift never shows on one night):

* The *reference level* is the first `window` nights since the last change (before it has
  them, every earlier night of the level: a self-starting chart, Hawkins 1987). Its mean and
  spread are robust (winsorised at the median +/- `clip` MADs). It is then frozen: the
  nights after it never move it, so a slow drift away from it accumulates.
* Each night is standardised against it, z = (x - m) / (s L sqrt(1 + 1/n)) (L: the long-run
  factor of the reference nights, 1 when they are independent; see below), made N(0, 1)
  through the t distribution on the reference's degrees of freedom (Quesenberry 1991),
  clipped to +/- `clip` (one heavy-tailed night cannot signal: Lucas & Crosier 1982), and fed
  to a two-sided tabular CUSUM with reference value `k` (Page 1954). A statistic beyond h
  signals; h gives each one-sided statistic an in-control average run length of
  `arl_factor` x 2 m / alpha nights by Siegmund's approximation (m: the seat's cells with a
  level that night, Bonferroni over them and the two directions).
* A signal is told on the night the CUSUM gives it, with the change's size estimated then: the
  mean of the nights since the estimated change point (`change_since`, Pignatiello & Samuel
  2001) against the reference, with a two-sample t interval; a ``change_kind`` of "drift" when a
  line through the level's recent nights fits them better than a step at `change_since`
  (Hinkley 1971), the change then the line's last value. It is a ``regression`` or
  ``improvement`` (by the metric's direction) when the change lies beyond the +/- `noise` band;
  inside the band it is ``within_noise`` with its change, interval and kind, and its reason says
  "within the noise band". Either way the level restarts at `change_since` (its spread borrowed
  until it has `min_level` nights), so a change inside the band is not re-estimated night after
  night until chance carries it past the band. Changes inside the band add up: when the level
  has moved past the band from the last level that was not such a change (the *anchor*), the
  signal that takes it there is a regression or improvement against the anchor.
* A single night beyond `outlier_z` SDs, beyond the band and significant at alpha after the
  Bonferroni correction is told on its own night (change_kind "night": Lucas 1982's
  combined Shewhart-CUSUM). It stays out of the level; the next night either repeats it (its
  CUSUM signals, or it is as far: the level restarts at the far night, a step) or does not
  (one bad night: taken out of the CUSUM too).
* Every other night once there is a reference is ``within_noise``, with its change against
  the level and the prediction interval of one night (Hahn & Meeker 1991, §4.5); the first
  `min_level` nights of a cell are ``insufficient_data`` (no level yet).

benchmarks/history_cli_study.py measures it through the CLI on request-level nightly stores:
false alarms per stable seat-year (heavy-tailed nights), and the nights to find steps of
3, 5 and 10% and a drift (docs/statistics.md, "History across dates").

Nights that follow each other: the CUSUM runs in units of the nights' long-run SD (Kim,
Alexopoulos, Tsui & Wilson 2007, IIE Transactions 39), the reference's SD times the AR(1)
factor sqrt((1 + r) / (1 - r)) of its nights' lag-1 autocorrelation r (clipped to [0, 0.8];
none below 16 reference nights; `history_cusum.long_run_factor`). Before it, nights of lag-1
correlation 0.5 raised 2.0 false alarms a seat-year [1.03, 3.49]; docs/statistics.md ("Regimes
the thresholds were not tuned on") has the numbers after and the price in detection delay.

References
----------
Page, E. S. (1954). Continuous inspection schemes. Biometrika 41. Hawkins, D. M. (1987).
Self-starting CUSUM charts for location and scale. The Statistician 36. Quesenberry, C. P.
(1991). SPC Q charts for start-up processes. J. Quality Technology 23. Lucas, J. M. (1982).
Combined Shewhart-CUSUM quality control schemes. JQT 14. Lucas, J. M. & Crosier, R. B.
(1982). Robust CUSUM. Comm. Statist. A 11. Siegmund, D. (1985). Sequential Analysis,
Springer. Montgomery, D. C. (2019). Introduction to Statistical Quality Control, 8th ed.,
§9.1. Hinkley, D. V. (1971). Inference in two-phase regression. JASA 66. Hahn, G. J. &
Meeker, W. Q. (1991). Statistical Intervals, §4.5. Daly, D. et al. (2020). Change point
detection in a CI system (MongoDB). ICPE '20. benchreport.stats.history_cusum has the pieces.
"""

from __future__ import annotations

import functools
import hashlib
import math
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import pandas as pd
import pyarrow as pa
from scipy.special import stdtr, stdtrit

from ..columns import DATED_COLUMNS, HISTORY, HISTORY_COLUMNS, METRICS, higher_is_better
from .history_cusum import Reference, change_kind, change_start, cusum_update, reference, standardise, threshold_for

__all__ = [
    "HISTORY_COLUMNS",
    "HistoryRule",
    "HistoryDayCache",
    "history",
    "VERDICTS",
    "ORDER",
    "LevelSeries",
    "WALK_KEY",
    "walk_input",
    "walk",
    "multi_date_cells",
    "input_digests",
    "typed_history",
    "rows_to_arrow",
]

VERDICTS = ("regression", "improvement", "within_noise", "insufficient_data")


@dataclass(frozen=True)
class HistoryRule:
    """The parameters of the history verdicts (defaults: see each field)."""

    alpha: float = 0.001  # per seat and date, Bonferroni over its cells (asv uses p < 0.002)
    noise: float = 0.02  # the comparisons' noise band (criterion.rs' 2%)
    window: int = 64  # level nights at most (Bencher's default sample size)
    min_level: int = 5  # level nights before the first verdict
    level: float = 0.95  # the interval shown with each change
    k: float = 0.5  # the CUSUM's reference value (SDs): tuned to a shift of 1 SD (Montgomery §9.1.3)
    clip: float = 2.5  # a night's most to the CUSUM, in SDs (Lucas & Crosier 1982)
    outlier_z: float = 10.0  # a single night this far (prediction SDs) is told on its own night (Lucas 1982)
    admit_after: int = 0  # nights a night within a growing level waits before joining it
    arl_factor: float = 3.0  # in-control ARL x this: an estimated reference and heavy-tailed nights shorten it

    def decision_interval(self, m: int) -> float:
        """The CUSUM's h for a seat with `m` cells with a level: each one-sided statistic has an
        in-control ARL of 2 m / alpha nights (Siegmund's approximation), so the seat would have
        about alpha false signals a night, Bonferroni over its cells and the two directions, with
        a known level; times `arl_factor`, since a level estimated from the reference nights and
        heavy-tailed nights shorten the real run length (Jones, Champ & Rigdon 2001, Technometrics
        43: with estimated parameters the in-control ARL falls well short of the nominal).
        benchmarks/history_study.py measures the false alarms per seat-year."""
        return _decision_interval(max(int(m), 1), self.alpha / self.arl_factor, self.k)

    @classmethod
    def from_thresholds(cls, th) -> "HistoryRule":
        """The rule an analysis uses (benchreport.thresholds): history_alpha, history_window and
        history_min_level, the comparisons' noise band, and intervals at 1 - alpha."""
        return cls(
            alpha=float(th.history_alpha),
            noise=float(th.noise),
            window=int(th.history_window),
            min_level=int(th.history_min_level),
            level=1.0 - float(th.alpha),
        )


@functools.lru_cache(maxsize=256)
def _decision_interval(m: int, alpha: float, k: float) -> float:
    return threshold_for(2.0 * m / alpha, k)


@dataclass
class LevelSeries:
    """One cell's state while the dates are walked: the reference nights of its current level
    (the first `window` nights since the last change; frozen after that, so slow drift shows),
    the two CUSUM statistics with the nights since each left zero, and a far night awaiting the
    next night's word. `to_state` / `from_state`: the same in JSON (the store's cache)."""

    logs: list = field(default_factory=list)  # log values of the reference nights
    since: str | None = None  # first date of the current level
    spread: tuple | None = None  # (s, df, long-run factor) borrowed from the previous level
    pending: tuple | None = None  # (log value, date, direction, CUSUM state before it)
    decided: bool = False  # the last row was a regression or an improvement
    up: float = 0.0  # C+ and C- (Page 1954)
    down: float = 0.0
    up_run: list = field(default_factory=list)  # [date, log value] of the nights since C+ left zero
    down_run: list = field(default_factory=list)
    recent: list = field(default_factory=list)  # [date, log value] of the level's last 2 `window` nights
    probation: list = field(default_factory=list)  # [date, log value] of nights awaiting the reference
    #: the level before the changes inside the band since the last change past it: {"mean", "n",
    #: "level_since", "first_change", "signs": each change's direction}; None when the level is not such a change's
    anchor: dict | None = None
    #: the reference of `logs` as last computed, keyed by their number and the borrowed spread (not saved)
    memo: tuple | None = field(default=None, repr=False, compare=False)

    def cusum_state(self) -> list:
        return [self.up, self.down, [list(r) for r in self.up_run], [list(r) for r in self.down_run]]

    def set_cusum(self, state) -> None:
        self.up, self.down = float(state[0]), float(state[1])
        self.up_run, self.down_run = [list(r) for r in state[2]], [list(r) for r in state[3]]

    def trim(self, keep: int) -> None:
        """Bound what is kept (the walk keeps no more than this itself, so a resumed walk is the
        cold one): the reference `keep` nights, the recent nights and each run 2 `keep` (a run
        its first night, the change's start, and its last 2 `keep` - 1)."""
        del self.logs[:-keep]
        del self.recent[: -2 * keep]
        for run in (self.up_run, self.down_run):
            del run[1 : max(1, len(run) - 2 * keep + 1)]

    def to_state(self) -> dict:
        return {
            "logs": self.logs,
            "since": self.since,
            "spread": list(self.spread) if self.spread else None,
            "pending": list(self.pending) if self.pending is not None else None,
            "decided": self.decided,
            "cusum": self.cusum_state(),
            "recent": self.recent,
            "probation": self.probation,
            "anchor": self.anchor,
        }

    @classmethod
    def from_state(cls, d: dict) -> "LevelSeries":
        s = cls(
            list(d["logs"]),
            d["since"],
            tuple(d["spread"]) if d["spread"] is not None else None,
            tuple(d["pending"]) if d["pending"] is not None else None,
            bool(d["decided"]),
        )
        s.set_cusum(d["cusum"])
        s.recent = [list(r) for r in d["recent"]]
        s.probation = [list(r) for r in d["probation"]]
        s.anchor = dict(d["anchor"]) if d.get("anchor") else None
        return s


def _reference(s: LevelSeries, rule: "HistoryRule") -> tuple[Reference | None, float]:
    """The current level's reference and the degrees of freedom of its spread, or (None, nan)
    before `min_level` nights (or `window`, if fewer; a level just restarted borrows the old
    spread until then)."""
    logs = s.logs[: rule.window]
    key = (len(logs), s.spread)
    if s.memo is not None and s.memo[0] == key:  # a frozen or unchanged reference: computed once
        return s.memo[1]
    out = (None, math.nan)
    if len(logs) >= min(rule.min_level, rule.window):
        out = reference(logs, clip=rule.clip), float(len(logs) - 1)
    elif s.spread is not None and logs:
        long_run = float(s.spread[2]) if len(s.spread) > 2 else 1.0
        out = reference(logs, borrowed=s.spread[0], clip=rule.clip, borrowed_long_run=long_run), float(s.spread[1])
    s.memo = (key, out)
    return out


class HistoryDayCache(Protocol):
    """Where a walk over the dates is kept between analyses (benchreport.days.store_files keeps it in the
    store): each date's walked rows, keyed by the digest of every input up to that date, and the
    series' level state after the last date walked."""

    #: set by `benchreport.days.history.history_days`: the date its walk resumed after, None when it
    #: walked from the start
    resumed_after: str | None

    def load_state(self) -> dict | None:
        """{"upto": date, "digest": its digest, "series": {seat: {key: LevelSeries}}, "pieces": {date:
        {"n": rows walked, "verdicts": {verdict: n}}}, "marked": the walked rows that are a
        regression or an improvement or follow one (Arrow)}, or None."""

    def save_state(self, state: dict) -> bool: ...

    def has_rows(self, day: str, digest: str) -> bool: ...

    def load_rows(self, day: str, digest: str) -> pa.Table | None: ...

    def save_rows(self, day: str, digest: str, rows: pa.Table) -> bool: ...


#: what the walk reads of a dated cell
_WALK = list(DATED_COLUMNS)
#: a walked row's cell key in the walk's own terms (harness, probe and load "" when none, concurrency -1)
WALK_KEY = ["seat", "_h", "_p", "_l", "workload", "_c", "metric", "statistic"]
#: the order of the history table: date first, then the cell (the order the dates are walked in)
ORDER = ["date", "seat", "_h", "_p", "_l", "workload", "_c", "metric", "statistic"]


def walk_input(dated: pd.DataFrame) -> pd.DataFrame:
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


def walk(d: pd.DataFrame, series: dict, rule: HistoryRule, start: int = 0):
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


def multi_date_cells(d: pd.DataFrame) -> np.ndarray:
    """Which walked rows belong to a cell with more than one date (the table has those only)."""
    return (d.groupby(WALK_KEY)["date"].transform("nunique") > 1).to_numpy()


def history(dated: pd.DataFrame, *, rule: HistoryRule = HistoryRule()) -> pd.DataFrame:
    """Dated verdicts for every seat and cell measured on several dates (the whole table in memory;
    a run store keeps it date by date: `benchreport.days.history.history_days`).

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
        return HISTORY.empty()
    d = walk_input(dated)
    multi = multi_date_cells(d)
    parts, batch = [], []
    for _, rows in walk(d, {}, rule):
        batch.extend(rows)
        if len(batch) >= 20_000:  # a year of rows as dicts would be most of a cold walk's memory
            parts.append(HISTORY.typed(pd.DataFrame(batch, columns=HISTORY_COLUMNS)))
            batch = []
    if batch or not parts:
        parts.append(HISTORY.typed(pd.DataFrame(batch, columns=HISTORY_COLUMNS)))
    walked = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    return walked[multi].reset_index(drop=True)


def input_digests(d: pd.DataFrame, rule: HistoryRule, day_tokens: dict | None = None) -> dict[str, str]:
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
#: 7: a change told when the CUSUM finds it, inside the band too, the level restarting there (6: the CUSUM in
#: long-run SDs; 5: CUSUM change detection; 4: cells keyed by load_id too)
HISTORY_VERSION = 7


def typed_history(df: pd.DataFrame) -> pd.DataFrame:
    """The history table's dtypes, the same however its rows were walked (benchreport.columns.HISTORY)."""
    return HISTORY.typed(df)


def typed_from_arrow(t) -> pd.DataFrame:
    """The history table from Arrow (its cache), with the dtypes of benchreport.columns.HISTORY."""
    return HISTORY.typed(t.select(HISTORY_COLUMNS).to_pandas())


def rows_to_arrow(rows: list[dict]) -> pa.Table:
    """One date's walked rows as Arrow: HISTORY_COLUMNS typed, and ``_follows``."""
    t = pa.Table.from_pandas(HISTORY.typed(pd.DataFrame(rows, columns=HISTORY_COLUMNS)), preserve_index=False)
    return t.append_column("_follows", pa.array([bool(r["_follows"]) for r in rows], type=pa.bool_()))


def _blank(s: LevelSeries, ref: Reference | None, rule: HistoryRule) -> dict:
    return dict(
        level=math.exp(ref.mean) if ref else math.nan,
        level_nights=ref.n if ref else len(s.logs),
        level_since=s.since,
        change=math.nan,
        ci_low=math.nan,
        ci_high=math.nan,
        p_value=math.nan,
        p_adj=math.nan,
        verdict="insufficient_data",
        verdict_reason="",
        change_kind="",
        change_since=None,
        cusum=math.nan,
    )


def _interval(d: float, se: float, df: float, m: int, rule: HistoryRule) -> dict:
    """change, its interval at `rule.level` (t on `df`), p and the Bonferroni p over m cells."""
    if not se > 0:
        p = 1.0 if d == 0 else 0.0
        return dict(change=math.exp(d), ci_low=math.exp(d), ci_high=math.exp(d), p_value=p, p_adj=p)
    t = float(stdtrit(df, 0.5 + rule.level / 2))
    p = float(2 * stdtr(df, -abs(d) / se))
    return dict(
        change=math.exp(d),
        ci_low=math.exp(d - t * se),
        ci_high=math.exp(d + t * se),
        p_value=p,
        p_adj=min(1.0, p * max(m, 1)),
    )


def _direction_verdict(direction: int, metric: str) -> str:
    good = (direction > 0) == (higher_is_better(metric) if metric in METRICS else True)
    return "improvement" if good else "regression"


def _sustained(s: LevelSeries, run: list, direction: int, ref: Reference) -> tuple[float, float, str]:
    """A CUSUM signal's change on the log scale, its standard error and kind: a step is the mean of
    the nights since the change began against the reference (two-sample, the reference's spread);
    a drift (`change_kind`) is the least-squares line through those nights at its last night.
    Standard errors in units of the nights' long-run SD (a mean of autocorrelated nights varies
    more than the SD / sqrt(n))."""
    vals = [float(v) for _, v in run]
    first = str(run[0][0])
    before = [float(v) for d, v in s.recent if str(d) < first]
    n, kind = len(vals), change_kind(before, vals, direction=direction)
    if kind == "drift":
        xm, ym = (n - 1) / 2.0, math.fsum(vals) / n
        sxx = math.fsum((i - xm) ** 2 for i in range(n))
        slope = math.fsum((i - xm) * (v - ym) for i, v in enumerate(vals)) / sxx
        d = ym + slope * (n - 1 - xm) - ref.mean
        se = ref.spread * ref.long_run * math.sqrt(1.0 / n + (n - 1 - xm) ** 2 / sxx + 1.0 / ref.n)
    else:
        d = math.fsum(vals) / n - ref.mean
        se = ref.spread * ref.long_run * math.sqrt(1.0 / n + 1.0 / ref.n)
    return d, se, kind


def _signalled(s: LevelSeries, signal: int, ref: Reference, df: float, m: int, metric: str, rule: HistoryRule) -> dict:
    """A CUSUM signal told on its night, with the change's size then (`_sustained`): a regression or
    an improvement beyond the band (or, with changes inside the band before it, when the level has
    moved past the band from their anchor), else within_noise with the change and "within the noise
    band" in its reason. The level restarts where the change began."""
    run = s.up_run if signal > 0 else s.down_run
    run = run[change_start([float(v) for _, v in run], ref.mean) :]
    since = str(run[0][0])
    d, se, kind = _sustained(s, run, signal, ref)
    out = dict(_interval(d, se, df, m, rule), change_kind=kind, change_since=since)
    anchor = s.anchor
    if abs(out["change"] - 1) > rule.noise:
        out["verdict"], anchor = _direction_verdict(signal, metric), None
    else:
        total = _from_anchor(anchor, ref, d, se, df, m, rule) if anchor else None
        if total is not None and abs(total["change"] - 1) > rule.noise:
            way = 1 if total["change"] > 1 else -1
            # changes inside the band, each the same way, that add up past it: a drift told in steps
            same = all(int(x) == way for x in anchor["signs"]) and signal == way
            out.update(total, change_kind="drift" if same else kind, verdict=_direction_verdict(way, metric))
            anchor = None
        else:
            lo, hi = out["ci_low"] - 1, out["ci_high"] - 1
            out["verdict"] = "within_noise"
            out["verdict_reason"] = (
                f"a sustained change of {out['change'] - 1:+.1%} [{lo:+.1%}, {hi:+.1%}] since {since} ({kind}), "
                f"within the ±{rule.noise:.0%} noise band; the level restarts there"
            )
            anchor = anchor or {
                "mean": ref.mean,
                "n": ref.n,
                "level_since": s.since,
                "first_change": since,
                "signs": [],
            }
            anchor = dict(anchor, signs=[*anchor["signs"], signal])
    _restart(s, run, since, ref, df, rule)
    s.anchor = anchor
    return out


def _from_anchor(anchor: dict, ref: Reference, d: float, se: float, df: float, m: int, rule: HistoryRule) -> dict:
    """A change inside the band added to the changes inside the band before it: the new level against
    their anchor (the level before the first of them), with its interval and the anchor as the level."""
    total = ref.mean + d - float(anchor["mean"])
    se_total = math.sqrt(se * se + (ref.spread * ref.long_run) ** 2 / max(int(anchor["n"]), 1))
    out = _interval(total, se_total, df, m, rule)
    out.update(
        level=math.exp(float(anchor["mean"])),
        level_nights=int(anchor["n"]),
        level_since=anchor["level_since"],
        change_since=anchor["first_change"],
        verdict_reason=(
            f"{len(anchor['signs']) + 1} sustained changes since {anchor['first_change']}, each within the "
            f"±{rule.noise:.0%} noise band, {out['change'] - 1:+.1%} together"
        ),
    )
    return out


def _restart(s: LevelSeries, nights: list, since: str, old: Reference, df: float, rule: HistoryRule) -> None:
    """A new level from `nights` (log values) on, the old level's spread and long-run factor
    borrowed until it has its own."""
    s.logs, s.since, s.pending = [v for _, v in nights][: rule.window], since, None
    s.spread = (old.spread, df, old.long_run)
    s.memo = None
    s.recent, s.probation, s.anchor = [list(r) for r in nights][-2 * rule.window :], [], None
    s.set_cusum([0.0, 0.0, [], []])


def _one_cell(s: LevelSeries, x: float, date: str, metric: str, m: int, rule: HistoryRule) -> dict:
    """One cell's night: its row's fields (the verdict among them). The reference level does not
    move on a night that is not within it; a far night the next does not repeat is left out."""
    ref, df = _reference(s, rule)
    fields = _blank(s, ref, rule)
    if ref is None:
        s.logs.append(x)
        s.recent.append([date, x])
        s.since = s.since or date
        fields["verdict_reason"] = f"no level yet ({len(s.logs) - 1} night(s))"
        return fields
    z = standardise(x, ref, df)
    far = _far(x, ref, df, rule)
    before = s.cusum_state()
    _cusum(s, z, date, x, rule)
    h = rule.decision_interval(m)
    if s.pending is not None:
        confirmed = _pending_confirmed(s, far, h)
        if confirmed:
            return _confirm(s, x, date, ref, df, m, rule)
        s.set_cusum(s.pending[3])  # one night off: out of the CUSUM as out of the level
        before = s.cusum_state()
        _cusum(s, z, date, x, rule)
        s.pending = None
    fields["cusum"] = s.up if s.up >= s.down else -s.down
    single = _interval(x - ref.mean, ref.spread * math.sqrt(1 + 1 / ref.n), df, m, rule)
    signal = 1 if s.up > h and s.up >= s.down else (-1 if s.down > h else 0)
    if signal:
        fields.update(_signalled(s, signal, ref, df, m, metric, rule))
        return fields
    if far and abs(single["change"] - 1) > rule.noise and single["p_adj"] < rule.alpha:
        direction = 1 if x > ref.mean else -1
        fields.update(single, verdict=_direction_verdict(direction, metric), change_kind="night", change_since=date)
        s.pending = (x, date, direction, before)
        return fields
    fields.update(single, verdict="within_noise")
    _keep(s, date, x, rule)
    return fields


def _confirm(s: LevelSeries, x: float, date: str, ref: Reference, df: float, m: int, rule: HistoryRule) -> dict:
    """The night after a far night repeats it: the level restarts at the far night, and this night
    is told against it."""
    px, pdate = float(s.pending[0]), str(s.pending[1])
    nights = [[pdate, px], [date, x]]
    _restart(s, nights, pdate, ref, df, rule)
    new, _ = _reference(s, rule)
    fields = _blank(s, new, rule)
    fields.update(
        _interval(x - new.mean, new.spread * math.sqrt(1 + 1 / new.n), df, m, rule),
        verdict="within_noise",
        verdict_reason=f"confirms the change of {nights[0][0]}",
        cusum=0.0,
    )
    return fields


def _keep(s: LevelSeries, date: str, x: float, rule: HistoryRule) -> None:
    """A night within the level: among the recent nights, and on its way into the reference."""
    _admit(s, [date, x], rule)
    s.recent.append([date, x])
    del s.recent[: -2 * rule.window]


def _admit(s: LevelSeries, night: list, rule: HistoryRule) -> None:
    """A night within the level joins the reference while it has fewer than `window` nights,
    `admit_after` nights later if no change was found meanwhile (0, the default: at once, the
    self-starting chart of Hawkins 1987, whose standardised nights are then independent under
    a stable level; a restart drops the nights still waiting)."""
    if len(s.logs) >= rule.window:
        s.probation = []
        return
    s.probation.append(night)
    while len(s.probation) > rule.admit_after and len(s.logs) < rule.window:
        s.logs.append(float(s.probation.pop(0)[1]))


def _cusum(s: LevelSeries, z: float, date: str, x: float, rule: HistoryRule) -> None:
    s.up, s.down = cusum_update(s.up, s.down, z, k=rule.k, clip=rule.clip)
    s.up_run = _extend(s.up_run, s.up, date, x, rule)
    s.down_run = _extend(s.down_run, s.down, date, x, rule)


def _extend(run: list, statistic: float, date: str, x: float, rule: HistoryRule) -> list:
    """The nights since a CUSUM statistic left zero: its first night and at most 2 `window` - 1 after."""
    if not statistic > 0:
        return []
    run.append([date, x])
    if len(run) > 2 * rule.window:
        del run[1]
    return run


def _far(x: float, ref: Reference, df: float, rule: HistoryRule) -> int:
    """+1 or -1 when the night is more than `outlier_z` prediction SDs above or below the level,
    with a spread of at least 2 `min_level` - 1 degrees of freedom (a spread of fewer nights is
    too often small by chance); else 0."""
    if not (df >= 2 * rule.min_level - 1 and ref.spread > 0):
        return 0
    t = (x - ref.mean) / (ref.spread * math.sqrt(1.0 + 1.0 / ref.n))
    return 1 if t > rule.outlier_z else (-1 if t < -rule.outlier_z else 0)


def _pending_confirmed(s: LevelSeries, far: int, h: float) -> bool:
    """The next night repeats a far night: the CUSUM (the far night in it) passes h that way, or
    this night is as far the same way."""
    direction = int(s.pending[2])
    cusum = s.up if direction > 0 else s.down
    return cusum > h or far == direction


def _night(recs: list[dict], date: str, series: dict, rule: HistoryRule) -> list[dict]:
    """The verdicts of one seat's cells on one date; m, the cells with a level, sets the CUSUM's
    decision interval and the Bonferroni correction of the far-night test."""
    keys = [tuple(r[k] for k in ("_h", "_p", "_l", "workload", "_c", "metric", "statistic")) for r in recs]
    m = sum(_reference(series.setdefault(k, LevelSeries()), rule)[0] is not None for k in keys)
    out = []
    for r, k in zip(recs, keys):
        s = series[k]
        fields = _one_cell(s, math.log(float(r["estimate"])), date, str(r["metric"]), m, rule)
        row = {c: r.get(c) for c in HISTORY_COLUMNS if c in r}
        row.update(date=date, _follows=s.decided, **fields)
        s.decided = fields["verdict"] in ("regression", "improvement")
        out.append(row)
    return out
