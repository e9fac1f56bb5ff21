"""Comparisons: candidate/baseline ratios with CIs, p-values and verdicts (tables/comparisons.csv).

For every cell the baseline seat and another seat share (kind ``baseline``;
same harness, probe, workload, concurrency, metric and statistic), and for
every earlier date of a seat's cell against its latest (kind ``history``), the
ratio of the two cells' centres (geometric means of pass values), with:

* a between-pass interval and Welch's test on the log scale when both sides
  have a between-pass variance (3+ passes, or a variance pooled from other
  dates), which is the only ground for ``better`` or ``worse`` between seats;
* where a seat has passes of the cell on `MIN_SESSIONS` (3) or more dates of its
  steady level and the other as many or one (a folder of several dates, a run
  store), every date counts and the date is the unit: the ratio of the seats'
  means of date means, Student's t pooled over both seats' dates (issue 43;
  benchreport.stats.sessions.date_means_test), the row's estimates those levels, as
  the cells table gives them; where a seat has two dates, the latest dates with one
  session effect per seat (the between-session variance pooled over both seats,
  benchreport.stats.sessions.two_level_log_ratio_test); either way a day effect is
  not called a difference between seats; ``variance_levels`` says which levels an
  interval counts ("passes" or "passes+sessions");
* for a seat against itself on another date (kind ``history``), a t interval
  from the night-to-night spread of the cell's earlier dates instead (nights
  differ by more than the passes of one night do: benchmarks/history_rows_study.py),
  and no interval with fewer than ``history_min_level`` earlier dates; the
  two nights' pass-level interval goes to ``within_low``/``within_high``;
* otherwise no interval (``ci_method`` says why) and, where both sides are
  single runs with within-run intervals, a ratio interval "within one run"
  (``within_low``/``within_high``; normal on the log scale from the two sides'
  within-run standard errors). It describes those two runs, not the seats.

Verdict, direction aware (benchreport.columns.higher_is_better):

* ``within_noise``: the CI lies inside [1 - noise, 1 + noise], noise the band of the row's
  statistic (``noise_band``: `Thresholds.noise_band`, wider for tails); ``verdict_detail`` then
  says ``better, within tolerance`` / ``worse, within tolerance`` when the CI excludes 1 on that
  side and the change stays significant after the correction below (a real change inside the
  band; empty otherwise);
* ``better`` / ``worse``: the CI lies wholly beyond the noise band on one side
  AND the change stays significant after the report's multiplicity correction
  (by default, issue 43: the rows split into families by metric, throughput, latency and
  start-up, exams a family of their own in their table; alpha split equally across the
  families tested (Bonferroni), and within each family a serial gatekeeping procedure: the
  family's first cell of each pair (the declared primary cell in its family, else
  `FAMILY_FIRST`) with Holm over those rows, then Holm over the family's other rows, tested
  only when every first row was rejected; benchreport.stats.multiplicity.family_gatekeeping);
* ``insufficient_data`` otherwise; ``verdict_reason`` says which condition failed, and
  ``verdict_detail`` says ``better, not shown beyond the band`` / ``worse, not shown beyond the
  band`` when the CI excludes 1, reaches into the band, and the change stays significant after
  the correction (a real change whose size the sample does not show beyond the band).

The noise band comes first, as criterion.rs does: a difference the CI pins
inside +/- noise is too small to call, however significant.

References
----------
Kalibera, T. & Jones, R. (2013), Rigorous benchmarking in reasonable time
(compare runs, not iterations); Davison & Hinkley (1997), §3.8; Miller, E.
(2024), Adding error bars to evals, §5; Welch (1947), Biometrika 34, 28-35;
Holm (1979); Bretz et al. (2009), Statistics in Medicine 28, 586-604 (alpha split across
families); criterion.rs `compare` (noise threshold); Searle, Casella &
McCulloch (1992), Variance Components, ch. 3 (the between-session variance);
Satterthwaite (1946) (the degrees of freedom of the combined variance).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.special import ndtr, ndtri, stdtr, stdtrit

from ..columns import (
    CELL_KEY,
    COMPARISON_COLUMNS,
    COMPARISON_EXTRA_COLUMNS,
    COMPARISONS,
    METRICS,
    STATISTICS,
    higher_is_better,
)
from ..thresholds import DEFAULT, PrimaryCell, Thresholds
from .common import resolve_baseline
from .cells import CellSet
from .multiplicity import FAMILIES, METHODS as MULTIPLICITY, adjust, family_gatekeeping, family_of
from .passes import PassSummary, welch_log_ratio_test
from .sessions import (
    MIN_SESSIONS,
    date_means_test,
    days_of,
    plain_key,
    pooled_session_variance,
    since_dates,
    two_level_log_ratio_test,
)

__all__ = [
    "COMPARISON_COLUMNS",
    "COMPARISON_EXTRA_COLUMNS",
    "VERDICTS",
    "PrimaryCell",
    "comparisons",
    "verdict",
    "verdict_reason",
    "verdict_detail",
    "WITHIN_BAND",
    "NOT_BEYOND_BAND",
    "primary_rows",
    "rejudge",
    "nights_needed",
    "family_first_mask",
    "FAMILY_FIRST",
    "FAMILIES",
]

VERDICTS = ("better", "worse", "within_noise", "insufficient_data")

_MATCH = ["_h", "_p", "_l", "workload", "_c", "metric", "statistic"]


def verdict(
    low: float, high: float, *, higher_is_better: bool, noise: float, p_adj: float | None = None, alpha: float = 0.05
) -> str:
    """Verdict of a candidate/baseline ratio CI (see `verdict_reason` for why).

    ``within_noise`` if the CI lies inside [1 - noise, 1 + noise]; ``better`` /
    ``worse`` if it lies wholly above 1 + noise or below 1 - noise (direction
    from `higher_is_better`) and, when `p_adj` is given, p_adj < alpha; else
    ``insufficient_data``.

    References
    ----------
    criterion.rs `compare` (noise_threshold: a change must clear it).
    """
    return verdict_reason(low, high, higher_is_better=higher_is_better, noise=noise, p_adj=p_adj, alpha=alpha)[0]


def verdict_reason(
    low, high, *, higher_is_better: bool, noise: float, p_adj=None, alpha: float = 0.05
) -> tuple[str, str]:
    """(verdict, reason): the reason is empty for better/worse and for within_noise, except a
    within_noise whose interval excludes 1: a change that is there but smaller than the band, said
    so (issue 43)."""
    if not (noise >= 0):
        raise ValueError(f"`noise` must be >= 0; got {noise!r}")
    if low is None or high is None or not (np.isfinite(low) and np.isfinite(high)):
        return "insufficient_data", "no interval"
    if 1.0 - noise <= low and high <= 1.0 + noise:
        if low > 1.0 or high < 1.0:  # said, not silently "same" (issue 43)
            if p_adj is not None and not (np.isfinite(p_adj) and p_adj < alpha):
                return "within_noise", (
                    "the interval excludes 1, but the change is not significant after the correction for "
                    "multiple comparisons"
                )
            return "within_noise", "a change smaller than the noise band: the interval excludes 1"
        return "within_noise", ""
    above, below = low > 1.0 + noise, high < 1.0 - noise
    if not (above or below):
        return "insufficient_data", (
            "the interval reaches into the noise band" if (low > 1.0 or high < 1.0) else "the interval includes 1"
        )
    if p_adj is not None and not (np.isfinite(p_adj) and p_adj < alpha):
        return "insufficient_data", "not significant after the correction for multiple comparisons"
    good = above if higher_is_better else below
    return ("better" if good else "worse"), ""


#: `verdict_detail` of a within_noise row whose change is real (its interval excludes 1 and it stays
#: significant after the correction) but smaller than the band: which side of 1 it is on
WITHIN_BAND = ("better, within tolerance", "worse, within tolerance")
#: `verdict_detail` of an insufficient_data row whose change is real (interval excluding 1, significant
#: after the correction) but whose interval reaches into the band: its size is not shown beyond it
NOT_BEYOND_BAND = ("better, not shown beyond the band", "worse, not shown beyond the band")


def verdict_detail(low, high, *, higher_is_better: bool, noise: float, p_adj=None, alpha: float = 0.05) -> str:
    """`better, within tolerance` / `worse, within tolerance` for a ``within_noise`` ratio whose
    interval excludes 1 on that side and, when `p_adj` is given, p_adj < alpha (the same
    correction a ``better``/``worse`` verdict needs, so the details keep the report's error rate);
    `better, not shown beyond the band` / `worse, not shown beyond the band` for an
    ``insufficient_data`` ratio whose interval excludes 1 but reaches into the band, under the same
    condition; empty otherwise (issue 43: a change that is there but not shown to clear the band,
    said with its direction; lower is better for latencies, as in `verdict`)."""
    v, why = verdict_reason(low, high, higher_is_better=higher_is_better, noise=noise, p_adj=p_adj, alpha=alpha)
    if v == "within_noise" and why.startswith("a change smaller"):
        words = WITHIN_BAND
    elif why == "the interval reaches into the noise band" and (
        p_adj is None or (np.isfinite(p_adj) and p_adj < alpha)
    ):
        words = NOT_BEYOND_BAND
    else:
        return ""
    good = (low > 1.0) == bool(higher_is_better)
    return words[0] if good else words[1]


def _side_reason(side: str, r) -> str:
    reason = str(r["ci_reason"]) if isinstance(r["ci_reason"], str) else ""
    words = {
        "single_pass": "single pass",
        "two_passes": "two passes",
        "equal_values": "all values equal",
        "non_positive": "non-positive values",
    }.get(reason, reason)
    if r["ci_route"] == "published":
        words = "single pass (published interval)"
    return f"{side} {words}" if words else ""


def _pair(b, c, th: Thresholds, level: float, sessions: dict | None = None, since: dict | None = None) -> dict:
    """Ratio, interval, p-value and the within-run interval of one pair of cells; with `sessions`
    (`benchreport.stats.sessions.session_groups`), where either seat has several dates of the
    cell's steady level (`since`), the date is the unit and every date counts (`_days_pair`)."""
    be, ce = float(b["estimate"]), float(c["estimate"])
    ratio = ce / be if be not in (0.0,) and math.isfinite(be) else math.nan
    out = dict(
        ratio=ratio,
        ci_low=math.nan,
        ci_high=math.nan,
        ci_level=math.nan,
        p_value=math.nan,
        df=math.nan,
        within_low=math.nan,
        within_high=math.nan,
        within_method="",
        variance_levels="",
    )
    days = _dates_of(b, c, sessions, since)
    if days is not None:
        return _days_pair(out, days, level)
    sb, sc = _summary(b), _summary(c)
    test = welch_log_ratio_test(sb, sc, level=level) if sb and sc else None
    if test is not None:
        pooled = "t_log_pooled" in (b["ci_route"], c["ci_route"])
        method = f"Welch t on log pass values (df={test.df:.1f})"
        between = _between_sessions(b, c, sessions)
        two = two_level_log_ratio_test(sb, sc, between, level=level) if between is not None else None
        if two is not None:
            test, method = two, _two_level_method(between, two)
        out.update(
            ratio=test.ratio,
            ci_low=test.low,
            ci_high=test.high,
            ci_level=level,
            p_value=test.p_value,
            df=test.df,
            variance_levels="passes+sessions" if two is not None else "passes",
            ci_method=method + (", pass variance pooled from other dates" if pooled else ""),
        )
        return out
    if sb and sc:
        out["ci_method"] = "none: no spread between passes on either side"
        return out
    why = [
        w for w in (_side_reason("baseline", b) if not sb else "", _side_reason("candidate", c) if not sc else "") if w
    ]
    out["ci_method"] = "none: " + ("; ".join(why) or "no between-pass interval")
    lb, lc = float(b["within_log_se"]), float(c["within_log_se"])
    if (
        int(b["n_passes"]) == 1
        and int(c["n_passes"]) == 1
        and math.isfinite(lb)
        and math.isfinite(lc)
        and be > 0
        and ce > 0
    ):
        z = float(ndtri(0.5 + level / 2.0))
        se = math.hypot(lb, lc)
        out.update(
            within_low=ratio * math.exp(-z * se),
            within_high=ratio * math.exp(z * se),
            within_method="normal on the log scale from both within-run intervals, within one run",
        )
    return out


def _dates_of(b, c, sessions: dict | None, since: dict | None):
    """Both seats' (n, mean, within SS, date) per date of the cell's steady level, when either seat
    has `MIN_SESSIONS` of them and the other one or as many (the seats whose cells are levels over
    their dates, benchreport.stats.sessions.session_level_cells, or a single date); else None (a
    seat of two dates: its latest date with a session effect added, `two_level_log_ratio_test`)."""
    if not sessions:
        return None
    since = since or {}
    days = []
    for r in (b, c):
        key = _session_key(r)
        days.append(days_of(sessions, key, since.get(key), str(r["date"])))
    if max(len(d) for d in days) < MIN_SESSIONS or any(1 < len(d) < MIN_SESSIONS or not d for d in days):
        return None
    return days


def _days_pair(out: dict, days: list, level: float) -> dict:
    """The ratio of the two seats' long-run levels, the date as the unit (every date of the steady
    level; benchreport.stats.sessions.date_means_test); the row's estimates become those levels."""
    test = date_means_test(days[0], days[1], level=level)
    lb, lc = (float(np.mean([g[1] for g in d])) for d in days)
    out.update(baseline_estimate=math.exp(lb), candidate_estimate=math.exp(lc), ratio=math.exp(lc - lb))
    if test is None:
        out["ci_method"] = "none: no spread between the dates' means"
        return out
    out.update(
        ratio=test.ratio,
        ci_low=test.low,
        ci_high=test.high,
        ci_level=level,
        p_value=test.p_value,
        df=test.df,
        variance_levels="passes+sessions",
        ci_method=(
            f"t on log date means, the date as the unit ({len(days[0])} + {len(days[1])} dates, "
            f"day-to-day variance pooled over both seats; df={test.df:.0f})"
        ),
    )
    return out


def _session_key(r) -> tuple:
    return tuple(plain_key(r.get(k)) for k in CELL_KEY)


def _between_sessions(b, c, sessions: dict | None):
    """The between-session variance of the pair's cell key pooled over both seats' dates (the
    nested ANOVA estimator, benchreport.stats.sessions.pooled_session_variance); None unless a
    seat has two or more dates of it."""
    if not sessions:
        return None
    per_seat = [sessions.get(_session_key(r), []) for r in (b, c)]
    if max(len(g) for g in per_seat) < 2:
        return None
    return pooled_session_variance(per_seat)


def _two_level_method(between, test) -> str:
    cv = math.sqrt(math.expm1(between.between_log_var))
    return (
        f"t on log pass values of the latest dates plus a session effect per seat (between-session "
        f"CV {cv:.1%}, ANOVA estimate from {between.n_sessions} dates of both seats; "
        f"Satterthwaite df={test.df:.1f})"
    )


def _summary(r) -> PassSummary | None:
    if not (math.isfinite(r["log_se"]) and math.isfinite(r["df"])):
        return None
    return PassSummary(
        estimate=float(r["estimate"]),
        low=float(r["ci_low"]),
        high=float(r["ci_high"]),
        level=float(r["ci_level"]),
        n_passes=int(r["n_passes"]),
        log_mean=math.log(float(r["estimate"])),
        log_se=float(r["log_se"]),
        df=float(r["df"]),
        route=str(r["ci_route"]),
        reason="",
    )


def _row(kind: str, b, c, res: dict) -> dict:
    res = dict(res)
    estimates = dict(
        baseline_estimate=res.pop("baseline_estimate", float(b["estimate"])),
        candidate_estimate=res.pop("candidate_estimate", float(c["estimate"])),
    )
    return dict(
        workload=c["workload"],
        concurrency=c["concurrency"],
        metric=c["metric"],
        statistic=c["statistic"],
        baseline=b["seat"],
        candidate=c["seat"],
        **estimates,
        harness=c["harness"],
        probe=c["probe"],
        load_id=c.get("load_id"),
        load=c.get("load"),
        kind=kind,
        baseline_date=b["date"],
        candidate_date=c["date"],
        baseline_n_passes=b["n_passes"],
        candidate_n_passes=c["n_passes"],
        n_baseline=b["n_obs"],
        n_candidate=c["n_obs"],
        **res,
    )


def _keyed(df: pd.DataFrame) -> pd.DataFrame:
    load = df["load_id"] if "load_id" in df else pd.Series([None] * len(df), index=df.index, dtype=object)
    return df.assign(
        _h=df["harness"].fillna(""),
        _p=df["probe"].fillna(""),
        _l=load.fillna(""),
        _c=df["concurrency"].fillna(-1).astype("int64"),
    )


def _records(df: pd.DataFrame) -> dict[tuple, dict]:
    return {tuple(r[k] for k in _MATCH): r for r in df.to_dict("records")}


def comparisons(
    cellset: CellSet,
    seats: pd.DataFrame | None = None,
    *,
    baseline: str | None = None,
    thresholds: Thresholds = DEFAULT,
    history: bool = True,
    multiplicity: str = "holm",
    primary: PrimaryCell = PrimaryCell(),
    levels: pd.DataFrame | None = None,
    sessions: dict | None = None,
    elsewhere=(),
) -> pd.DataFrame:
    """Candidate/baseline ratios with CIs, adjusted p-values and verdicts, as tables/comparisons.csv.

    Parameters
    ----------
    cellset : CellSet
        From `benchreport.stats.cells.estimate_cells` (nothing is re-estimated here).
    seats : DataFrame, optional
        The `seats` table: the baseline is the seat with role "incumbent".
    baseline : str, keyword-only
        Seat id of the baseline (overrides the incumbent); without one, no "baseline" rows.
    thresholds : Thresholds
        noise and alpha are used.
    history : {"previous", "all"} or bool
        Add kind="history" rows: a seat's cell on its latest date against the date
        before ("previous", also True), or against every earlier date ("all"); False: none
        (benchreport.stats.history judges each date against the steady level instead).
    multiplicity : {"holm", "bh", "none"}
        The correction across the rows of one kind with a p-value (benchreport.stats.multiplicity).
    primary : PrimaryCell
        Which cell of each seat pair is its headline (column ``primary``).
    levels : DataFrame, optional
        tables/history.csv (benchreport.stats.history): a history row's night-to-night spread
        is taken from the dates of the cell's current steady level (``level_since`` of its
        latest date) when it has `history_min_level` of them before the latest, so a level
        shift among the earlier dates does not widen it; else from the last `history_window`.
    sessions : dict, optional
        benchreport.stats.sessions.session_groups of the pass table: where either seat of a
        baseline row has passes of the cell on two or more dates, the row's interval adds a
        session effect per seat (between-session variance pooled over both seats;
        ``variance_levels`` "passes+sessions"); else it is over passes of one session ("passes").
    elsewhere : tuple of str
        Families of hypotheses tested in another table that share the report's alpha with these
        rows' families (e.g. ``("exams",)`` when exam deltas are tested): alpha is split
        equally over all of them (benchreport.stats.multiplicity.family_gatekeeping).

    Returns
    -------
    DataFrame
        COMPARISON_COLUMNS then COMPARISON_EXTRA_COLUMNS.
    """
    history = _comparisons_iv(cellset, history, multiplicity)
    cells = cellset.cells
    present = sorted(set(cells["seat"].astype(str))) if len(cells) else []
    base = resolve_baseline(baseline, seats, present)
    out: list[dict] = []
    if len(cells):
        by_seat = {s: _records(g) for s, g in _keyed(cells).groupby("seat", sort=True)}
        since = since_dates(levels) if sessions else None
        out += _baseline_rows(by_seat, base, thresholds, cellset.level, sessions, since)
        if history and cellset.dated is not None and len(cellset.dated) > len(cells):
            out += _history_rows(cellset, by_seat, thresholds, every=history == "all", levels=levels)
    df = pd.DataFrame(out)
    if len(df):
        df["primary"] = primary_mask(df, primary)
        df["family_first"] = family_first_mask(df, primary)
        df = _in_table_order(_judge(df, thresholds, multiplicity, elsewhere))
    return COMPARISONS.typed(df)


def _comparisons_iv(cellset, history, multiplicity: str):
    """Check `comparisons`' options; `history` as "previous", "all" or False."""
    if not isinstance(cellset, CellSet):
        raise ValueError("`cellset` must be the CellSet of benchreport.stats.cells.estimate_cells")
    if history is True:
        history = "previous"
    if history not in (False, "previous", "all"):
        raise ValueError(f"`history` must be 'previous', 'all' or False; got {history!r}")
    if multiplicity not in MULTIPLICITY:
        raise ValueError(f"`multiplicity` must be one of {sorted(MULTIPLICITY)}; got {multiplicity!r}")
    return history


def _baseline_rows(
    by_seat: dict, base: str | None, th: Thresholds, level: float, sessions: dict | None = None, since=None
) -> list[dict]:
    """kind="baseline" rows: every other seat's latest cells against the baseline's same cells."""
    base_cells = by_seat.get(base, {})
    out = []
    for seat, cur in by_seat.items():
        if seat == base or not base_cells:
            continue
        for k in sorted(set(cur) & set(base_cells), key=_sort_key):
            out.append(
                _row("baseline", base_cells[k], cur[k], _pair(base_cells[k], cur[k], th, level, sessions, since))
            )
    return out


def _in_table_order(df: pd.DataFrame) -> pd.DataFrame:
    """Baseline rows before history rows, then by candidate and cell (statistics in their order)."""
    df = df.assign(
        _kind=(df["kind"] == "history").astype(int),
        _c=df["concurrency"].fillna(-1).astype("int64"),
        _s=[_stat_pos(s) for s in df["statistic"]],
    )
    return df.sort_values(
        ["_kind", "candidate", "harness", "probe", "load_id", "workload", "_c", "metric", "_s", "baseline_date"],
        kind="stable",
        na_position="first",
    ).drop(columns=["_kind", "_c", "_s"])


def _history_rows(
    cellset: CellSet, by_seat: dict, th: Thresholds, *, every: bool, levels: pd.DataFrame | None = None
) -> list[dict]:
    """kind="history" rows: each cell's latest against its previous date, or every earlier date.

    A seat against itself on another night: the noise is the night-to-night spread of the
    cell's own earlier nights (`_night_spread`), not the passes of the two nights."""
    dated = _keyed(cellset.dated)
    keys = ["seat", *_MATCH]
    codes = dated.groupby(keys, sort=False, dropna=False).ngroup().to_numpy()
    first = pd.Series(np.arange(len(dated))).groupby(codes, sort=True).first().to_numpy()
    code_of = {tuple(r): i for i, r in enumerate(dated[keys].iloc[first].itertuples(index=False, name=None))}
    day, names = pd.factorize(dated["date"].astype("str"), sort=True)  # ISO dates: text order is date order
    names = np.asarray(names, dtype=object)
    day = np.asarray(day, dtype=np.int64)
    last = np.full(len(code_of), -1, dtype=np.int64)
    np.maximum.at(last, codes, day)
    before = day < last[codes]
    if not before.any():
        return []
    spread = _night_spread(
        codes,
        day,
        names,
        pd.to_numeric(dated["estimate"], errors="coerce").to_numpy(float),
        before,
        int(th.history_window),
        _level_since(levels, keys, code_of, names, last),
        nights_needed(th),
    )
    pick = before.copy()
    if not every:  # the date before each cell's latest only: select it before making records
        prev = np.full(len(code_of), -1, dtype=np.int64)
        np.maximum.at(prev, codes[before], day[before])
        pick &= day == prev[codes]
    earlier = dated[pick]
    if cellset.dated_rows is not None:  # a run store's dated cells hold a few columns: the chosen ones whole
        earlier = _keyed(cellset.dated_rows(earlier))
    out = []
    for seat, g in earlier.groupby("seat", sort=True):
        cur = by_seat.get(seat, {})
        for r in sorted(g.to_dict("records"), key=lambda r: (_sort_key(tuple(r[k] for k in _MATCH)), r["date"])):
            key = tuple(r[k] for k in _MATCH)
            c = cur.get(key)
            if c is not None and r["date"] < c["date"]:
                code = code_of.get((seat, *key))
                nights = spread.get(code) if code is not None and names[last[code]] == str(c["date"]) else None
                out.append(_row("history", r, c, _night_pair(r, c, nights, th, cellset.level)))
    return out


def _level_since(levels: pd.DataFrame | None, keys: list, code_of: dict, names: np.ndarray, last: np.ndarray) -> dict:
    """{cell code: first date of the level its latest date was judged against}, from each cell's
    latest row of tables/history.csv where that row is the cell's latest date here too."""
    if levels is None or not len(levels) or "level_since" not in levels:
        return {}
    k = _keyed(levels)
    latest = k.groupby(keys, sort=False)["date"].transform("max")
    k = k[(k["date"] == latest) & k["level_since"].notna()]
    out = {}
    for row, date, since in zip(
        k[keys].itertuples(index=False, name=None), k["date"].astype(str), k["level_since"].astype(str)
    ):
        code = code_of.get(tuple(row))
        if code is not None and names[last[code]] == date:
            out[code] = since
    return out


def nights_needed(th: Thresholds) -> int:
    """Earlier dates a dated row needs for its night-to-night spread: `history_min_level`, at least 3."""
    return max(int(th.history_min_level), 3)


def _night_spread(
    codes: np.ndarray,
    day: np.ndarray,
    names: np.ndarray,
    estimate: np.ndarray,
    before: np.ndarray,
    window: int,
    since: dict | None = None,
    need: int = 3,
) -> dict:
    """{cell code: (sd, n, since)}: the standard deviation (ddof 1) of the log night values (each
    date's centre, its pass noise included) over the dates before the cell's latest, and how
    many there were. The dates are those of the cell's current steady level (`since`: {code:
    first date}, from history.csv) when there are `need` of them, else the last `window`
    (`since` is then None). `codes`, `day`: each row's cell and date (an index into `names`, the
    dates in order); `before`: the rows before their cell's latest date."""
    ok = before & np.isfinite(estimate) & (estimate > 0)
    if not ok.any():
        return {}
    idx = np.flatnonzero(ok)
    idx = idx[np.lexsort((day[idx], codes[idx]))]  # by cell, then date
    x, c = np.log(estimate[idx]), codes[idx]
    bounds = np.flatnonzero(np.diff(c)) + 1
    out = {}
    for lo, hi in zip(np.r_[0, bounds], np.r_[bounds, len(c)]):
        code = int(c[lo])
        w = x[lo:hi][-window:]
        out[code] = (_sd(w), len(w), None)
        first = (since or {}).get(code)
        if first is not None:  # the nights of the current level, when there are enough
            level = x[lo:hi][names[day[idx[lo:hi]]] >= first][-window:]
            if len(level) >= need:
                out[code] = (_sd(level), len(level), first)
    return out


def _sd(w: np.ndarray) -> float:
    return float(np.std(w, ddof=1)) if len(w) > 1 else math.nan


def _night_pair(b, c, nights, th: Thresholds, level: float) -> dict:
    """One seat's cell on two dates: the ratio of the two night values with a t interval
    whose standard error is sqrt(2) times the night-to-night spread (log scale) of the
    cell's earlier nights (those of its current level, when there are enough), on n - 1
    df; the pass-level Welch interval of the two nights alone goes to within_low/within_high. Fewer than `history_min_level` earlier nights
    give no interval: a night's passes say nothing of how much the next night differs.

    References
    ----------
    Kalibera & Jones (2013), §3 (repeat at the level that varies: here the night);
    Hahn & Meeker (1991), §4.5; Welch (1947).
    """
    be, ce = float(b["estimate"]), float(c["estimate"])
    positive = be > 0 and ce > 0 and math.isfinite(be) and math.isfinite(ce)
    ratio = math.exp(math.log(ce) - math.log(be)) if positive else (ce / be if be else math.nan)  # as Welch's
    out = dict(
        ratio=ratio,
        ci_low=math.nan,
        ci_high=math.nan,
        ci_level=math.nan,
        p_value=math.nan,
        df=math.nan,
        within_low=math.nan,
        within_high=math.nan,
        within_method="",
        variance_levels="",
    )
    sb, sc = _summary(b), _summary(c)
    test = welch_log_ratio_test(sb, sc, level=level) if sb and sc else None
    if test is not None:
        out.update(
            within_low=test.low,
            within_high=test.high,
            within_method=f"Welch t on log pass values of these two dates only (df={test.df:.1f}); "
            "leaves out night-to-night variation",
        )
    need = nights_needed(th)
    sd, n, since = nights if nights is not None else (math.nan, 0, None)
    if not positive:
        out["ci_method"] = "none: non-positive values"
    elif n < need or not math.isfinite(sd):
        out.update(_first_nights(ratio, test, n, need, th, level))
    elif sd == 0.0:
        out["ci_method"] = "none: no spread between earlier nights"
    else:
        df = n - 1
        se = sd * math.sqrt(2.0)
        d = math.log(ratio)
        t = float(stdtrit(df, 0.5 + level / 2.0))
        out.update(
            ci_low=math.exp(d - t * se),
            ci_high=math.exp(d + t * se),
            ci_level=level,
            df=float(df),
            p_value=min(1.0, float(2.0 * stdtr(df, -abs(d) / se))),
            variance_levels="passes+sessions",
            ci_method=f"t on log night values, night-to-night spread of {n} earlier dates"
            + (f" of the level since {since}" if since else "")
            + f" (df={df})",
        )
    return out


def _first_nights(ratio: float, test, n: int, need: int, th: Thresholds, level: float) -> dict:
    """A dated row with too few earlier nights to measure how much nights differ: the two nights'
    pass-level interval widened by an assumed night-to-night spread (`history_prior_cv`, log SD,
    for each night), normal on the log scale with standard error
    sqrt(2 prior^2 + se_passes^2), so a first-night gate still calls a change well beyond that
    spread, and says it rests on an assumption. No pass-level interval: none.

    References
    ----------
    Kalibera & Jones (2013), §3 (the variation of the level that varies must be counted: here
    assumed, until measured); Box & Tiao (1973), §2.2 (a known variance: normal quantiles).
    """
    nights = f"{n} earlier date{'' if n == 1 else 's'}; needs {need}"
    prior = float(th.history_prior_cv)
    if test is None or not (prior > 0) or not math.isfinite(test.df):
        return dict(ci_method=f"none: night-to-night variation not estimated ({nights})")
    t = float(stdtrit(test.df, 0.5 + level / 2.0))
    se_pass = (math.log(test.high) - math.log(test.low)) / (2.0 * t) if test.high > test.low > 0 else 0.0
    se = math.hypot(math.sqrt(2.0) * prior, se_pass)
    d, z = math.log(ratio), float(ndtri(0.5 + level / 2.0))
    return dict(
        ci_low=math.exp(d - z * se),
        ci_high=math.exp(d + z * se),
        ci_level=level,
        p_value=min(1.0, float(2.0 * ndtr(-abs(d) / se))),
        variance_levels="passes+assumed sessions",
        ci_method=(
            f"normal on log night values, the passes' spread and an assumed night-to-night "
            f"spread of {prior:.0%} (history_prior_cv; not measured: {nights})"
        ),
    )


def _judge(df: pd.DataFrame, th: Thresholds, multiplicity: str, elsewhere=()) -> pd.DataFrame:
    """Adjusted p-values within each kind of comparison (the report's candidate-vs-baseline
    verdicts are one family, each seat's earlier dates vs its latest another: a year of
    history rows must not dilute the baseline verdicts), then each row's verdict and reason.
    Under ``holm`` the baseline rows are split into families by metric (throughput, latency,
    start-up; benchreport.stats.multiplicity.FAMILIES), alpha split equally across them
    (Bonferroni; `elsewhere`: families tested in another table, e.g. exams, that share it),
    and each family is a serial gatekeeping procedure of its own: its first cell, then the
    rest (benchreport.stats.multiplicity.family_gatekeeping)."""
    df = df.copy()
    p_adj = np.full(len(df), np.nan)
    rule = np.full(len(df), multiplicity, dtype=object)
    level = np.full(len(df), np.nan)
    kinds = df["kind"].to_numpy()
    families = np.asarray([family_of(m) for m in df["metric"]], dtype=object)
    first = _family_first(df)
    for kind in pd.unique(kinds):
        family = kinds == kind
        p = df["p_value"].to_numpy(float)[family]
        if multiplicity == "holm" and kind == "baseline":
            gk = family_gatekeeping(p, families[family], first[family], elsewhere=elsewhere)
            p_adj[family], rule[family] = gk.p_adj, gk.rule(float(th.alpha))
            level[family] = gk.family_alpha(float(th.alpha))
        else:
            p_adj[family] = adjust(p, multiplicity)
    df["p_adj"] = p_adj
    df["multiplicity"] = rule
    df["family"] = families
    df["family_alpha"] = level
    verdicts, reasons, details = [], [], []
    df["noise_band"] = [th.noise_band(s) for s in df["statistic"]]
    for r in df.itertuples(index=False):
        known = r.metric in METRICS
        judged = dict(
            higher_is_better=higher_is_better(r.metric) if known else True,
            noise=r.noise_band,
            p_adj=r.p_adj if np.isfinite(r.p_value) else None,
            alpha=th.alpha,
        )
        v, why = verdict_reason(r.ci_low, r.ci_high, **judged)
        details.append(verdict_detail(r.ci_low, r.ci_high, **judged) if known else "")
        if not known and v in ("better", "worse"):
            v, why = "insufficient_data", "direction of the metric unknown"
        if v == "insufficient_data" and why == "no interval":
            why = str(r.ci_method)[6:] if str(r.ci_method).startswith("none: ") else why
        if why.startswith("not significant") and "gatekeeping, secondary: not tested" in str(r.multiplicity):
            why = (
                f"not tested: the {r.family} family's first cell was not rejected (gatekeeping); the interval "
                "clears the noise band"
            )
        elif why.startswith("not significant") and np.isfinite(r.family_alpha):
            why = (
                f"not significant after the correction for multiple comparisons (p_adj {r.p_adj:.2g}; the "
                f"{r.family} family is tested at {r.family_alpha:.3g}); the interval clears the noise band"
            )
        verdicts.append(v)
        reasons.append(why)
    df["verdict"], df["verdict_reason"], df["verdict_detail"] = verdicts, reasons, details
    return df


def _family_first(df: pd.DataFrame) -> np.ndarray:
    """The rows each family of a seat pair tests first: the declared primary row in its family
    (column ``primary``), and in each other family the row `family_first_mask` picks, as the
    table records it (column ``family_first`` when present)."""
    primary = (
        np.array([False if pd.isna(v) else bool(v) for v in df["primary"]], dtype=bool)
        if "primary" in df
        else np.zeros(len(df), dtype=bool)
    )
    if "family_first" in df:
        extra = np.array([False if pd.isna(v) else bool(v) for v in df["family_first"]], dtype=bool)
        return primary | extra
    return primary


def rejudge(df: pd.DataFrame, th: Thresholds, multiplicity: str = "holm", elsewhere=()) -> pd.DataFrame:
    """The same rows with p_adj and verdicts again, a family of their own (a subset taken out of
    a larger table, e.g. one pair of `benchreport compare`)."""
    if not len(df):
        return df.reset_index(drop=True)
    return COMPARISONS.typed(
        _judge(
            df.drop(columns=["p_adj", "verdict", "verdict_reason", "verdict_detail", "noise_band"], errors="ignore"),
            th,
            multiplicity,
            elsewhere,
        )
    )


def primary_mask(df: pd.DataFrame, primary: PrimaryCell) -> np.ndarray:
    """True on the one row per (baseline, candidate) pair of kind baseline that is its primary cell."""
    mask = np.zeros(len(df), dtype=bool)
    base = df["kind"] == "baseline"
    for _pair_key, g in df[base].groupby(["baseline", "candidate"], sort=False):
        idx = _primary_index(g, primary)
        if idx is not None:
            mask[df.index.get_loc(idx)] = True
    return mask


#: the metrics, in order, whose mean is a family's first cell when the declared primary cell is
#: in another family (the same rule as `PrimaryCell`: its workload, its concurrency or the highest shared)
FAMILY_FIRST = {
    "throughput": ("output_tok_s", "decode_tok_s_per_stream", "prefill_tok_s", "request_rate"),
    "latency": ("ttft_ms", "e2e_latency_ms", "itl_ms"),
    "start-up": ("engine_init_s",),
}


def family_first_mask(df: pd.DataFrame, primary: PrimaryCell) -> np.ndarray:
    """True on the row each family of a (baseline, candidate) pair of kind baseline tests first,
    where that is not the declared primary row: for each family without the primary row, the
    mean of its first metric in `FAMILY_FIRST` the pair shares, at the primary cell's workload and
    concurrency (else the highest shared). Declared before any outcome, like the primary cell."""
    mask = np.zeros(len(df), dtype=bool)
    base = df["kind"] == "baseline"
    fam = pd.Series([family_of(m) for m in df["metric"]], index=df.index)
    prim = df["primary"].fillna(False).astype(bool) if "primary" in df else pd.Series(False, index=df.index)
    for _pair_key, g in df[base].groupby(["baseline", "candidate"], sort=False):
        for name, metrics in FAMILY_FIRST.items():
            mine = g[fam[g.index] == name]
            if not len(mine) or prim[mine.index].any():
                continue
            cell = PrimaryCell(
                metric=metrics[0],
                statistic="mean",
                workload=primary.workload,
                concurrency=primary.concurrency,
                fallback=metrics,
            )
            idx = _primary_index(mine, cell)
            if idx is not None:
                mask[df.index.get_loc(idx)] = True
    return mask


def _primary_index(g: pd.DataFrame, primary: PrimaryCell):
    metrics = [primary.metric] + [m for m in primary.fallback if m != primary.metric]
    for metric in metrics:
        stat = primary.statistic if metric == primary.metric else "mean"
        cand = g[(g["metric"] == metric) & (g["statistic"] == stat)]
        if primary.workload is not None and (cand["workload"] == primary.workload).any():
            cand = cand[cand["workload"] == primary.workload]
        if primary.concurrency is not None:
            cand = cand[cand["concurrency"] == primary.concurrency]
        if not len(cand):
            continue
        conc = cand["concurrency"].fillna(-1).astype("int64")
        return cand.index[int(np.argmax(conc.to_numpy()))]
    return None


def primary_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The primary comparison of each seat pair (the headline cells)."""
    if df is None or not len(df) or "primary" not in df:
        return df.iloc[0:0] if df is not None else pd.DataFrame()
    return df[df["primary"].fillna(False).astype(bool)]


def _stat_pos(s):
    return STATISTICS.index(s) if s in STATISTICS else len(STATISTICS)


def _sort_key(k):
    h, p, lid, w, c, m, s = k
    return (str(h), str(p), str(lid), str(w), c if c >= 0 else 1 << 62, str(m), _stat_pos(s))
