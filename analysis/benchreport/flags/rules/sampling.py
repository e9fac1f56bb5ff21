"""Sampling: too few passes, too few observations, pooled runs that differ, correlated
requests, and comparisons this sample cannot decide (spec/flags.md, "Sampling").

Repetitive findings are grouped so a reader can bear them: one finding per seat (per
compared pair for `sample.underpowered`), every cell concerned listed in `cells`; the
finding's cell is filled when exactly one cell is concerned.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import norm, t as student_t

from benchreport import conditions
from benchreport import format as F
from benchreport.columns import QUANTILES
from benchreport.stats.common import parse_values, tail_count, tail_needed_n, tail_supported
from benchreport.stats.notable import DEPENDENT, dependent_mask
from benchreport.stats.sessions import MIN_SESSIONS
from benchreport.stats.within import lag1_pvalue
from benchreport.thresholds import Thresholds

from .._common import cell_dict, cell_order, int_or_none, na, norm_cells, plain, used
from ..findings import ABSENT, CellKey, Finding, key, one_cell
from .runs import RunIndex

__all__ = [
    "PassCell",
    "PassCount",
    "SmallNCell",
    "SmallN",
    "PowerCell",
    "UnderpoweredComparison",
    "UnderpoweredExam",
    "MixedRuns",
    "MixedConditions",
    "LagCell",
    "CorrelatedRequests",
    "sample_passes",
    "small_n",
    "underpowered",
    "passes_needed",
    "mixed_runs",
    "mixed_conditions",
    "correlated_requests",
    "OneSession",
    "one_session",
    "few_sessions",
    "corrected_alpha",
    "family_sizes",
]


@dataclass(frozen=True, kw_only=True)
class PassCell(CellKey):
    n_passes: int
    values: list[float]
    date: str | None = ABSENT
    #: which harness measured the cell, and the load it sent in words (issue 42: cells that read
    #: alike are told apart by these in the sentence)
    harness: str | None = ABSENT
    load: str | None = ABSENT


@dataclass(frozen=True, kw_only=True)
class PassCount(Finding):
    """Cells of one seat measured in one pass, two passes, or 3 to min_passes - 1 passes."""

    CODES = ("sample.single_pass", "sample.two_passes", "sample.few_passes")
    n_cells: int
    cells: list[PassCell]
    thresholds: dict[str, float]


@dataclass(frozen=True, kw_only=True)
class SmallNCell(CellKey):
    n_obs: int
    beyond_quantile: float = ABSENT
    needed_n: int = ABSENT
    ci_method: str | None = ABSENT


@dataclass(frozen=True, kw_only=True)
class SmallN(Finding):
    """CIs of one seat from too few observations (`kind` ci or bootstrap), or thin tail quantiles (tail)."""

    CODES = ("sample.small_n",)
    n_cells: int
    cells: list[SmallNCell]
    kind: str
    thresholds: dict[str, float]


@dataclass(frozen=True, kw_only=True)
class PowerCell(CellKey):
    ratio: float | None
    verdict: str | None
    reason: str | None
    #: passes per seat a verdict needs; None where the interval holds day-to-day variation
    passes_needed: int | None
    ci_low: float | None
    ci_high: float | None
    #: the significance level the cell's test will face after the multiplicity correction
    test_alpha: float = ABSENT
    #: which correction that is, in words (primary: full alpha; secondary: Holm's worst case alpha/m)
    correction: str = ABSENT
    #: the interval clears the noise band: the verdict was withheld by the correction for multiple
    #: comparisons (`reason` says how), not by the sample; `passes_needed` is then None (issue 43)
    withheld: bool = ABSENT


@dataclass(frozen=True, kw_only=True)
class UnderpoweredComparison(Finding):
    """Comparison cells of one pair without a verdict, with the passes per seat a verdict needs."""

    CODES = ("sample.underpowered",)
    kind: str = "comparison"
    baseline: str
    candidate: str
    n_cells: int
    cells: list[PowerCell]
    thresholds: dict[str, float]

    @classmethod
    def matches(cls, evidence: dict) -> bool:
        return evidence.get("kind") == "comparison"


@dataclass(frozen=True, kw_only=True)
class UnderpoweredExam(Finding):
    """An exam delta not significant and below the smallest difference its test detects."""

    CODES = ("sample.underpowered",)
    kind: str = "exam"
    benchmark: str
    dimension: str | None
    baseline: str
    candidate: str
    n_items: int | None
    diff: float | None
    mde: float | None
    p_value: float | None
    thresholds: dict[str, float]

    @classmethod
    def matches(cls, evidence: dict) -> bool:
        return evidence.get("kind") == "exam"


@dataclass(frozen=True, kw_only=True)
class MixedRuns(Finding):
    """Runs of one seat and day pooled as passes of a cell although they were measured differently."""

    CODES = ("sample.mixed_runs",)
    date: str
    differences: dict[str, list]
    runs: list[str]
    n_cells: int
    cells: list[CellKey]


@dataclass(frozen=True, kw_only=True)
class MixedConditions(Finding):
    """Runs that one stated probe (the user's label) groups, although they sent different loads:
    each load is its own cell; `loads` lists them, `differences` what differed (in words)."""

    CODES = ("sample.mixed_conditions",)
    date: str
    harness: str
    probe: str
    loads: list[dict]
    differences: dict[str, list]
    n_cells: int
    cells: list[CellKey]


@dataclass(frozen=True, kw_only=True)
class LagCell(CellKey):
    pass_: int = key("pass")
    date: str
    lag1: float
    n_obs: int | None
    p_value: float | None = None


@dataclass(frozen=True, kw_only=True)
class CorrelatedRequests(Finding):
    """Passes of one seat whose requests are correlated in send order."""

    CODES = ("sample.correlated_requests",)
    n_cells: int
    cells: list[LagCell]
    thresholds: dict[str, float]


@dataclass(frozen=True, kw_only=True)
class OneSession(Finding):
    """A seat whose every pass ran on one date: its intervals leave out day-to-day variation."""

    CODES = ("sample.one_session",)
    date: str
    n_runs: int
    n_cells: int  # cells measured in two or more passes
    n_intervals: int  # of which with an interval over their passes
    session: str = "calendar date of the run's recorded date"


@dataclass(frozen=True, kw_only=True)
class FewSessions(Finding):
    """A seat measured on two dates only: too few to estimate the day effect, so its cells' intervals
    describe their latest date's passes (benchreport.stats.sessions.session_level_cells)."""

    CODES = ("sample.few_sessions",)
    dates: tuple
    n_runs: int
    n_cells: int  # cells measured in two or more passes
    n_intervals: int  # of which with an interval over their passes
    min_sessions: int
    session: str = "calendar date of the run's recorded date"


# --- rules ---------------------------------------------------------------------------------------

_PASS_CODES = {1: "sample.single_pass", 2: "sample.two_passes"}


def _text_or_absent(value):
    return ABSENT if F.missing(value) or not str(value) else str(value)


def sample_passes(cells: pd.DataFrame | None, *, thresholds: Thresholds) -> list[PassCount]:
    """`sample.single_pass` / `sample.two_passes` / `sample.few_passes`, one finding per seat and kind.

    From `cells.n_passes`. One pass says nothing of run-to-run variability; two passes are
    reported as both values, not a mean; 3 to `min_passes - 1` passes as median and range (a
    CI from so few clusters is fragile: Cameron & Miller 2015).
    """
    cells = norm_cells(cells)
    if cells is None or cells.empty:
        return []
    min_passes = int(thresholds.min_passes)
    kinds: dict[tuple, list] = {}
    for row in cells.itertuples(index=False):
        n = int_or_none(row.n_passes)
        if n is None or n < 1 or n >= max(min_passes, 3):
            continue
        code = _PASS_CODES.get(n, "sample.few_passes")
        date = _text_or_absent(row.date)
        kinds.setdefault((row.seat, code), []).append(
            PassCell(
                **cell_dict(row.workload, row.concurrency, row.metric, row.statistic),
                n_passes=n,
                values=parse_values(row.values),
                date=date,
                harness=_text_or_absent(getattr(row, "harness", None)),
                load=_text_or_absent(getattr(row, "load", None)),
            )
        )
    out = []
    for (seat, code), cl in sorted(kinds.items()):
        cl = sorted(cl, key=lambda c: cell_order(c.evidence()))
        sev = "info" if code == "sample.few_passes" else "warn"
        out.append(
            PassCount(
                code=code,
                severity=sev,
                seats=(seat,),
                **one_cell(cl),
                n_cells=len(cl),
                cells=cl,
                thresholds=used(thresholds, "min_passes"),
            )
        )
    return out


def one_session(cells: pd.DataFrame | None, runs: pd.DataFrame | None) -> list[OneSession]:
    """`sample.one_session` (info): every pass of a seat ran in one session, so the variance
    between sessions (a server start, a day's thermal state, the neighbours on the network) is
    not in its intervals.

    A cell's interval rests on its passes as independent draws of the seat's performance; passes
    of one session share that session's factor, so the interval describes that session only
    (a two-level design: passes within sessions; the between-session component is not
    estimable from one session, Searle, Casella & McCulloch 1992, ch. 3). The run format records
    no server start, so a session is a calendar date of a run's `date`. Raised for a seat with a
    cell of two or more passes whose runs all fall on one date.
    """
    cells = norm_cells(cells)
    if cells is None or cells.empty or runs is None or not len(runs) or "date" not in runs:
        return []
    n = pd.to_numeric(cells["n_passes"], errors="coerce")
    multi = cells[(n >= 2).fillna(False).to_numpy(dtype=bool)]
    if multi.empty:
        return []
    has_ci = (
        (multi["ci_low"].notna() & multi["ci_high"].notna()).to_numpy(dtype=bool)
        if "ci_low" in multi and "ci_high" in multi
        else [False] * len(multi)
    )
    per_seat, dates, counts = _cells_and_dates_per_seat(multi, has_ci, runs)
    out = []
    for seat in sorted(per_seat):
        if seat not in dates.index or len(dates[seat]) != 1:
            continue
        n_cells, n_ci = per_seat[seat]
        out.append(
            OneSession(
                code="sample.one_session",
                severity="info",
                seats=(seat,),
                date=dates[seat][0],
                n_runs=int(counts[seat]),
                n_cells=n_cells,
                n_intervals=n_ci,
            )
        )
    return out


def _cells_and_dates_per_seat(multi: pd.DataFrame, has_ci, runs: pd.DataFrame):
    """({seat: [cells of 2+ passes, of them with an interval]}, {seat: its sorted dates}, {seat:
    its runs}) for the session rules (`one_session`, `few_sessions`)."""
    per_seat: dict[str, list[int]] = {}
    for seat, ci in zip(multi["seat"].astype(str).tolist(), has_ci):
        per_seat.setdefault(seat, [0, 0])
        per_seat[seat][0] += 1
        per_seat[seat][1] += int(bool(ci))
    r = runs[["seat", "date"]].dropna()
    dates = r.groupby(r["seat"].astype(str))["date"].agg(lambda s: sorted({str(d)[:10] for d in s}))
    counts = r.groupby(r["seat"].astype(str)).size()
    return per_seat, dates, counts


def few_sessions(cells: pd.DataFrame | None, runs: pd.DataFrame | None) -> list[FewSessions]:
    """`sample.few_sessions` (info, issue 43): a seat whose passes ran on 2 to `MIN_SESSIONS` - 1
    dates. A cell measured on `MIN_SESSIONS` or more dates takes the date as the unit, so its
    interval holds the day effect; with two dates t has one degree of freedom (t_0.975 = 12.7),
    so the cell keeps its latest date's interval over passes, which leaves the day effect out
    (benchreport.stats.sessions.session_level_cells; Searle, Casella & McCulloch 1992, ch. 3).
    Raised for a seat with a cell of two or more passes; a session is a calendar date, as for
    `sample.one_session`.
    """
    cells = norm_cells(cells)
    if cells is None or cells.empty or runs is None or not len(runs) or "date" not in runs:
        return []
    n = pd.to_numeric(cells["n_passes"], errors="coerce")
    multi = cells[(n >= 2).fillna(False).to_numpy(dtype=bool)]
    multi = multi[multi["ci_route"].astype(str) != "t_log_sessions"] if "ci_route" in multi else multi
    if multi.empty:
        return []
    has_ci = (multi["ci_low"].notna() & multi["ci_high"].notna()).to_numpy(dtype=bool)
    per_seat, dates, counts = _cells_and_dates_per_seat(multi, has_ci, runs)
    out = []
    for seat in sorted(per_seat):
        if seat not in dates.index or not (2 <= len(dates[seat]) < MIN_SESSIONS):
            continue
        n_cells, n_ci = per_seat[seat]
        out.append(
            FewSessions(
                code="sample.few_sessions",
                severity="info",
                seats=(seat,),
                dates=tuple(dates[seat]),
                n_runs=int(counts[seat]),
                n_cells=n_cells,
                n_intervals=n_ci,
                min_sessions=MIN_SESSIONS,
            )
        )
    return out


def _is_bootstrap(method) -> bool:
    m = "" if F.missing(method) else str(method).lower()
    return any(k in m for k in ("bootstrap", "bca", "percentile"))


def small_n(cells: pd.DataFrame | None, *, thresholds: Thresholds) -> list[SmallN]:
    """`sample.small_n`: a figure a run reported whose CI rests on fewer than `min_obs`
    observations, or a reported tail quantile with n*(1-q) < `min_tail_obs`.

    A bootstrap CI below `min_obs` under-covers (percentile/BCa give about 75% at n=3 when
    95% is asked: Davison & Hinkley 1997, ch. 5), hence warn; a t-interval or a published CI
    from few observations is noted (info). A p99 from 100 requests is essentially the maximum
    of one or two requests (MLPerf sets minimum query counts for its tail percentiles), warn.
    Statistics the analysis derives itself are computed only where the sample supports them.
    """
    cells = norm_cells(cells)
    if cells is None or cells.empty:
        return []
    if "source" in cells:  # only figures the runs claim: what we computed ourselves is never warned about
        cells = cells[cells["source"].astype("string").fillna("").str.contains("reported")]
    min_obs, min_tail = int(thresholds.min_obs), int(thresholds.min_tail_obs)
    found: dict[tuple, list] = {}
    for row in cells.itertuples(index=False):
        n = int_or_none(row.n_obs)
        if n is None:
            continue
        q = QUANTILES.get(str(row.statistic))
        key = cell_dict(row.workload, row.concurrency, row.metric, row.statistic)
        if not tail_supported(n, q, min_tail):
            found.setdefault((row.seat, "tail"), []).append(
                SmallNCell(**key, n_obs=n, beyond_quantile=float(tail_count(n, q)), needed_n=tail_needed_n(q, min_tail))
            )
        elif n < min_obs and (
            (not F.missing(row.ci_low) and not F.missing(row.ci_high))
            or not F.missing(getattr(row, "within_low", None))
        ):
            kind = "bootstrap" if _is_bootstrap(row.ci_method) else "ci"
            found.setdefault((row.seat, kind), []).append(SmallNCell(**key, n_obs=n, ci_method=na(row.ci_method)))
    out = []
    for (seat, kind), cl in sorted(found.items()):
        cl = sorted(cl, key=lambda c: cell_order(c.evidence()))
        sev = "info" if kind == "ci" else "warn"
        out.append(
            SmallN(
                code="sample.small_n",
                severity=sev,
                seats=(seat,),
                **one_cell(cl),
                n_cells=len(cl),
                cells=cl,
                kind=kind,
                thresholds=used(thresholds, "min_obs", "min_tail_obs"),
            )
        )
    return out


def underpowered(
    comparisons: pd.DataFrame | None, exam_deltas: pd.DataFrame | None = None, *, thresholds: Thresholds
) -> list[Finding]:
    """`sample.underpowered`: a difference this sample could not have told from none.

    Comparisons (kind baseline) without a verdict: how many passes per seat would detect a
    true `min_effect` difference with the interval clear of the noise band
    (`passes_needed`); one finding per compared pair. Exam deltas: a delta with p >= alpha
    whose observed difference lies below the smallest difference detectable at `power`
    (`mde`, from the statistics layer).
    """
    out: list[Finding] = []
    if comparisons is not None and not comparisons.empty:
        out += _underpowered_comparisons(comparisons, thresholds)
    if exam_deltas is not None and not exam_deltas.empty:
        out += _underpowered_exams(exam_deltas, thresholds)
    return out


def _underpowered_comparisons(comparisons: pd.DataFrame, th: Thresholds) -> list[UnderpoweredComparison]:
    alpha, power, effect = float(th.alpha), float(th.power), float(th.min_effect)
    family = family_sizes(comparisons)
    pairs: dict[tuple, list] = {}
    for row in comparisons.itertuples(index=False):
        if (
            getattr(row, "verdict", None) in ("better", "worse", "within_noise")
            or getattr(row, "kind", "baseline") == "history"
        ):
            continue
        test_alpha, correction = corrected_alpha(
            getattr(row, "multiplicity", None),
            alpha,
            family=getattr(row, "family", None),
            family_alpha=getattr(row, "family_alpha", None),
            **family,
        )
        sessions = _sessions_in_interval(row)
        band = getattr(row, "noise_band", None)  # the band of the row's statistic (issue 43)
        noise = float(band) if F.finite(band) else th.noise_band(getattr(row, "statistic", "mean"))
        withheld = _clears_band(row, noise)
        needed = (
            None
            if sessions or withheld
            else passes_needed(row, alpha=alpha, power=power, effect=effect, noise=noise, test_alpha=test_alpha)
        )
        if needed is None and not sessions and not withheld:
            continue
        pairs.setdefault((row.baseline, row.candidate), []).append(
            PowerCell(
                **cell_dict(row.workload, row.concurrency, row.metric, getattr(row, "statistic", "mean")),
                ratio=plain(getattr(row, "ratio", None)),
                verdict=na(getattr(row, "verdict", None)),
                reason=na(getattr(row, "verdict_reason", None)),
                passes_needed=needed,
                ci_low=plain(row.ci_low),
                ci_high=plain(row.ci_high),
                test_alpha=test_alpha,
                correction=correction,
                withheld=True if withheld else ABSENT,
            )
        )
    out = []
    for (base, cand), cl in sorted(pairs.items(), key=lambda kv: tuple(map(str, kv[0]))):
        cl = sorted(cl, key=lambda c: cell_order(c.evidence()))
        out.append(
            UnderpoweredComparison(
                code="sample.underpowered",
                severity="info",
                seats=tuple(sorted({str(base), str(cand)})),
                **one_cell(cl),
                baseline=base,
                candidate=cand,
                n_cells=len(cl),
                cells=cl,
                thresholds=used(th, "alpha", "power", "noise", "noise_p90", "noise_p95", "noise_p99", "min_effect"),
            )
        )
    return out


def _clears_band(row, noise: float) -> bool:
    """The interval lies wholly beyond the noise band, yet no verdict (issue 43): the verdict was
    withheld by the correction for multiple comparisons, not by the sample, so more passes are
    not what it lacks and none are advised; the words say why instead."""
    lo, hi = getattr(row, "ci_low", None), getattr(row, "ci_high", None)
    if F.missing(lo) or F.missing(hi):
        return False
    return float(lo) > 1.0 + noise or float(hi) < 1.0 - noise


def _sessions_in_interval(row) -> bool:
    """The interval holds the variance between sessions (`variance_levels`, issue 30): more passes
    cannot narrow that part, so no number of passes is advised; more sessions (days, server
    starts) of each seat are what would narrow it, and the words say so."""
    levels = getattr(row, "variance_levels", None)
    return isinstance(levels, str) and "sessions" in levels


def family_sizes(comparisons: pd.DataFrame) -> dict:
    """Rows of the baseline family: primary rows, the others, all (what each correction divides by),
    and per family of metrics (column ``family``, issue 43) its first rows and its others."""
    kind = comparisons["kind"].astype(object) if "kind" in comparisons else pd.Series(["baseline"] * len(comparisons))
    base = (kind.fillna("baseline") == "baseline").to_numpy(dtype=bool)

    def flag(col):
        return (
            np.array([False if pd.isna(v) else bool(v) for v in comparisons[col]], dtype=bool)
            if col in comparisons
            else np.zeros(len(comparisons), dtype=bool)
        )

    first = flag("primary")
    by_family = {}
    if "family" in comparisons:
        fam = comparisons["family"].astype(object).to_numpy()
        lead = first | flag("family_first")
        for name in pd.unique(fam[base]):
            mine = base & (fam == name)
            by_family[str(name)] = (int((mine & lead).sum()), int((mine & ~lead).sum()))
    return {
        "n_primary": int((base & first).sum()),
        "n_secondary": int((base & ~first).sum()),
        "n_all": int(base.sum()),
        "by_family": by_family,
    }


def corrected_alpha(
    rule, alpha: float, *, n_primary: int, n_secondary: int, n_all: int, by_family=None, family=None, family_alpha=None
) -> tuple[float, str]:
    """(level, words): the significance level a comparison row's test faces after the correction
    named in its `multiplicity` column (benchreport.stats.multiplicity), taken at its worst case.

    Families (issue 43; the rule names the row's family): the family is tested at its share of
    alpha, `family_alpha` (alpha/F, Bonferroni across F families), and within it by gatekeeping:
    a first row at the family's alpha when it is the family's only one (else Holm over its k first
    rows, worst case /k), any other row only once the first rows are rejected, Holm's worst case
    (family alpha)/m over the m others. Gatekeeping without families (before issue 43): the same
    with the full alpha and the report's primary rows. Plain Holm or Benjamini-Hochberg over n
    rows: alpha/n. No correction, or none stated: alpha.

    References
    ----------
    Holm (1979); Dmitrienko & Tamhane (2007); Bretz et al. (2009).
    """
    rule = "" if rule is None or (not isinstance(rule, str) and pd.isna(rule)) else str(rule)
    if " family, at " in rule and family is not None and not F.missing(family):
        a = float(family_alpha) if not F.missing(family_alpha) else float(alpha)
        k, m = (by_family or {}).get(str(family), (1, max(1, n_secondary)))
        share = f"the {family} family at {a:.2g}"
        if "gatekeeping, primary" in rule:
            k = max(1, k)
            return (
                (a, f"first cell of {share}")
                if k == 1
                else (a / k, f"first cell of {share}, Holm over its {k} first cells, worst case /{k}")
            )
        m = max(1, m)
        return a / m, (
            f"other cell of {share}: tested only once the family's first cell is rejected, Holm's worst case /{m}"
        )
    if rule.startswith("gatekeeping, primary"):
        k = max(1, n_primary)
        return (
            (alpha, "primary cell: tested first, at the full alpha")
            if k == 1
            else (alpha / k, f"primary cell: Holm over {k} primary cells, worst case alpha/{k}")
        )
    if rule.startswith("gatekeeping, secondary"):
        m = max(1, n_secondary)
        return alpha / m, (
            f"secondary cell: tested only once the primary cell is rejected, Holm's worst case alpha/{m}"
        )
    if rule in ("holm", "bh"):
        m = max(1, n_all)
        return alpha / m, f"{'Holm' if rule == 'holm' else 'Benjamini-Hochberg'} over {m} rows, worst case alpha/{m}"
    return alpha, "no correction for multiple comparisons"


def _underpowered_exams(exam_deltas: pd.DataFrame, th: Thresholds) -> list[UnderpoweredExam]:
    out = []
    for row in exam_deltas.itertuples(index=False):
        p = getattr(row, "p_value", None)
        mde, diff = getattr(row, "mde", None), getattr(row, "diff", None)
        if F.missing(p) or float(p) < float(th.alpha) or F.missing(mde):
            continue
        if not F.missing(diff) and abs(float(diff)) >= float(mde):
            continue
        out.append(
            UnderpoweredExam(
                code="sample.underpowered",
                severity="info",
                seats=tuple(sorted({str(row.baseline), str(row.candidate)})),
                benchmark=row.benchmark,
                dimension=na(getattr(row, "dimension", None)),
                baseline=row.baseline,
                candidate=row.candidate,
                n_items=int_or_none(getattr(row, "n_items", None)),
                diff=plain(diff),
                mde=plain(mde),
                p_value=plain(p),
                thresholds=used(th, "alpha", "power"),
            )
        )
    return out


def passes_needed(
    row, *, alpha: float, power: float, effect: float, noise: float, test_alpha: float | None = None
) -> int | None:
    """Passes per seat a comparison needs to detect a true `effect` with its CI clear of the noise band.

    n = 2 s^2 (z_{1-alpha/2} + z_power)^2 / (ln(1 + effect) - ln(1 + noise))^2 (Cohen 1988,
    ch. 2, on the log scale), s^2 the per-pass log variance recovered from the Welch interval
    (s^2 = se^2 / (1/k_b + 1/k_c), the two sides taken as equally variable). Without a
    between-pass interval: 3, the fewest passes that measure run-to-run variation. None when
    the effect does not clear the noise band. `test_alpha` is the level the test faces after
    the correction for multiple comparisons (`corrected_alpha`; default `alpha`, no correction);
    `alpha` sets the interval's level where the row does not say it.
    """
    gap = math.log1p(effect) - math.log1p(noise)
    if gap <= 0:
        return None
    lo, hi, df = getattr(row, "ci_low", None), getattr(row, "ci_high", None), getattr(row, "df", None)
    if F.missing(lo) or F.missing(hi) or F.missing(df) or lo <= 0 or hi <= lo:
        return 3
    kb, kc = int_or_none(getattr(row, "baseline_n_passes", None)), int_or_none(getattr(row, "candidate_n_passes", None))
    if not kb or not kc:
        return 3
    level = getattr(row, "ci_level", None)
    level = 1 - alpha if F.missing(level) else float(level)
    se = (math.log(hi) - math.log(lo)) / (2 * float(student_t.ppf(0.5 + level / 2, float(df))))
    s2 = se * se / (1 / kb + 1 / kc)
    a = alpha if test_alpha is None else float(test_alpha)
    n = 2 * s2 * (float(norm.ppf(1 - a / 2)) + float(norm.ppf(power))) ** 2 / gap**2
    return max(3, int(math.ceil(n)))


def mixed_runs(tables) -> list[MixedRuns]:
    """`sample.mixed_runs`: the passes pooled in one cell come from runs measured differently.

    The statistics treat the runs of one (seat, day, harness, probe, workload, concurrency)
    as passes of one sweep. When those runs differ in answer cap, temperature, thinking
    mode or settings, their spread is not run-to-run variability and their mean describes
    no set-up. One finding per seat and day.
    """
    index = RunIndex.of(tables)
    profiles = index.profiles
    found: dict[tuple, dict] = {}
    for seat, date, w, c, metric, ids in index.pooled_cells():
        if len(ids) < 2:
            continue
        if len({id(profiles[r]) for r in ids if r in profiles}) < 2:
            continue  # the runs share one profile (runs stating the same values do): nothing differs
        differing = {f: sorted(v, key=str) for f, v in index.profile(ids).items() if len(v) > 1}
        if not differing:
            continue
        g = found.setdefault((seat, date), {"fields": {}, "cells": [], "runs": set()})
        for f, v in differing.items():
            g["fields"].setdefault(f, set()).update(v)
        g["cells"].append(CellKey(**cell_dict(w, c, metric, None)))
        g["runs"].update(ids)
    out = []
    for (seat, date), g in sorted(found.items()):
        cl = sorted(g["cells"], key=lambda c: cell_order(c.evidence()))
        out.append(
            MixedRuns(
                code="sample.mixed_runs",
                severity="warn",
                seats=(seat,),
                **one_cell(cl),
                date=date,
                differences={f: sorted(v, key=str) for f, v in g["fields"].items()},
                runs=sorted(g["runs"]),
                n_cells=len(cl),
                cells=cl,
            )
        )
    return out


def mixed_conditions(tables) -> list[MixedConditions]:
    """`sample.mixed_conditions`: a probe the runs state (a run file's or a manifest's label) groups
    runs whose recorded loads differ (benchreport.conditions). The statistics keep each load a cell
    of its own, so no pass is pooled with another condition; the finding says the label covers
    more than one condition and what differed. One finding per seat, day, harness and probe."""
    index = RunIndex.of(tables)
    found: dict[tuple, dict] = {}
    for seat, date, w, c, metric, h, probe, loads in index.labelled_cells():
        g = found.setdefault((seat, date, h, probe), {"loads": {}, "cells": []})
        for lid, ids in loads.items():
            g["loads"].setdefault(lid, set()).update(ids)
        g["cells"].append(CellKey(**cell_dict(w, c, metric, None)))
    out = []
    for (seat, date, h, probe), g in sorted(found.items()):
        loads = []
        for lid, ids in sorted(g["loads"].items()):
            label, desc = index.load_of(min(ids))
            loads.append(
                {"load_id": lid or None, "label": label or "load not described", "runs": sorted(ids), "_desc": desc}
            )
        diff: dict[str, list] = {}
        for a in loads:
            for b in loads:
                for f_, (va, vb) in conditions.differences(a["_desc"], b["_desc"]).items():
                    diff.setdefault(f_, [])
                    for v in (va, vb):
                        shown = conditions.value_words(f_, v)
                        if shown not in diff[f_]:
                            diff[f_].append(shown)
        cl = sorted(set(g["cells"]), key=lambda c: cell_order(c.evidence()))
        out.append(
            MixedConditions(
                code="sample.mixed_conditions",
                severity="warn",
                seats=(seat,),
                **one_cell(cl),
                date=date,
                harness=h,
                probe=probe,
                loads=[{k: v for k, v in d.items() if k != "_desc"} for d in loads],
                differences=diff,
                n_cells=len(cl),
                cells=cl,
            )
        )
    return out


def correlated_requests(passes: pd.DataFrame | None, *, thresholds: Thresholds) -> list[CorrelatedRequests]:
    """`sample.correlated_requests`: requests of one pass, in send order, correlated at lag 1.

    One decision rule (`benchreport.stats.within.dependent_passes`): each pass and metric is
    tested (one-sided Ljung-Box at lag 1, Ljung & Box 1978), Holm's step-down over the tests of
    one seat and date keeps the chance of flagging a seat whose requests are independent at
    most `alpha` (Holm 1979), and the autocorrelation must exceed `lag1_limit`, the size that
    matters (Box & Jenkins' r_1). Without the family rule, a threshold on every pass fired on
    most seats of fleets with short independent passes (issue 30).

    Requests served in the same batches are not independent: a bootstrap over them one by
    one overstates what a single run shows. The within-run intervals use blocks (Politis &
    White 2004) for this reason; the finding says where it mattered. One per seat (info).
    A run store's kept rows carry the decision made on their whole date (column
    `lag1_dependent`); a full pass table is decided here.
    """
    if passes is None or not len(passes) or "lag1" not in passes:
        return []
    dep = passes[DEPENDENT].to_numpy(dtype=bool) if DEPENDENT in passes else dependent_mask(passes, thresholds)
    p = passes[dep]
    out = []
    for seat, g in p.groupby("seat", sort=True):
        cl = [
            LagCell(
                **cell_dict(r["workload"], r["concurrency"], r["metric"], None),
                pass_=int(r["pass"]),
                date=str(r["date"]),
                lag1=float(r["lag1"]),
                n_obs=None if pd.isna(r["n_obs"]) else int(r["n_obs"]),
                p_value=None if pd.isna(r["n_obs"]) else lag1_pvalue(float(r["lag1"]), int(r["n_obs"])),
            )
            for r in g.to_dict("records")
        ]
        cl = sorted(cl, key=lambda c: cell_order(c.evidence()))
        out.append(
            CorrelatedRequests(
                code="sample.correlated_requests",
                severity="info",
                seats=(str(seat),),
                **one_cell(cl),
                n_cells=len(cl),
                cells=cl,
                thresholds=used(thresholds, "lag1_limit", "alpha"),
            )
        )
    return out
