"""Exam deltas: is the candidate's exam score different from the baseline's?

Paired items (the same item ids answered by both seats) get the exact McNemar
test and Tango's score interval for the paired difference; counts only get
Fisher's exact test (Boschloo's as a second column) and Newcombe's hybrid score
interval. Each proportion gets Wilson and Clopper-Pearson intervals, p-values
are Holm-adjusted across the rows of one report, and `mde` states the smallest
difference the sample could detect (Miller 2024).
"""

from __future__ import annotations

import json
import math
import re
from collections import namedtuple
from dataclasses import asdict, dataclass, replace

import numpy as np
import pandas as pd
from scipy.special import ndtri

from ..columns import EXAM_DELTA_COLUMNS, EXAM_DELTA_EXTRA_COLUMNS, EXAM_DELTAS, TABLE_COLUMNS, is_not_a_count
from .common import resolve_baseline
from .exact import counts_exact, holm, mcnemar_exact
from .intervals import clopper_pearson, newcombe_difference, tango_paired_difference, wilson

__all__ = [
    "exam_family",
    "Counts",
    "ExamDelta",
    "EXAM_DELTA_COLUMNS",
    "EXAM_DELTA_EXTRA_COLUMNS",
    "parse_counts",
    "exam_delta_counts",
    "exam_delta_paired",
    "exam_deltas",
    "mde_unpaired",
    "mde_paired",
    "chance_level",
]

#: the share a random guess scores on multiple-choice exams with one fixed number of options per
#: item (1 / options), by the exam's name as lm-evaluation-harness and the papers call it; most
#: specific first. MMLU, GPQA, ARC, HellaSwag, OpenBookQA, SciQ, RACE, LogiQA, MedMCQA: 4 options;
#: MMLU-Pro: 10 (Wang et al. 2024); CommonsenseQA and MathQA: 5; WinoGrande, PIQA, BoolQ, COPA: 2.
CHANCE_LEVELS: tuple[tuple[str, float], ...] = (
    ("mmlu_pro", 0.10),
    ("mmlu", 0.25),
    ("gpqa", 0.25),
    ("arc_challenge", 0.25),
    ("arc_easy", 0.25),
    ("hellaswag", 0.25),
    ("openbookqa", 0.25),
    ("sciq", 0.25),
    ("race", 0.25),
    ("logiqa", 0.25),
    ("medmcqa", 0.25),
    ("commonsense_qa", 0.20),
    ("mathqa", 0.20),
    ("winogrande", 0.50),
    ("piqa", 0.50),
    ("boolq", 0.50),
    ("copa", 0.50),
)


def chance_level(benchmark) -> float | None:
    """The score a random guess gets on `benchmark` (a share), where it is a multiple-choice exam
    with a known number of options (`CHANCE_LEVELS`); None otherwise (free-form answers: GSM8K,
    HumanEval)."""
    import re

    name = re.sub(r"[^a-z0-9]+", "_", str(benchmark or "").lower()).strip("_")
    name = re.sub(r"^(leaderboard|hendrycks|lighteval|openllm)_", "", name)
    for prefix, level in CHANCE_LEVELS:
        if name == prefix or name.startswith(prefix + "_"):
            return level
    return None


TEST_PAIRED = "McNemar exact (paired items)"
TEST_COUNTS = "Fisher exact (counts)"

Counts = namedtuple("Counts", ["correct", "total"])

_COUNTS_RE = re.compile(r"^\s*([+-]?[^/\s]+)\s*/\s*([+-]?[^/\s]+)\s*$")
_INT_RE = re.compile(r"^[+-]?\d+$")


def parse_counts(text) -> Counts:
    """Parse ``"153/164"`` into Counts(correct=153, total=164).

    Raises
    ------
    ValueError
        With a message saying what is wrong: not of the form CORRECT/TOTAL,
        not whole numbers, negative, total zero, or correct greater than total.
    """
    if not isinstance(text, str):
        raise ValueError(f"counts must be text like '153/164'; got {text!r}")
    m = _COUNTS_RE.match(text)
    if not m:
        raise ValueError(f"counts must be CORRECT/TOTAL, e.g. '153/164'; got {text!r}")
    a, b = m.group(1), m.group(2)
    if not (_INT_RE.match(a) and _INT_RE.match(b)):
        raise ValueError(f"counts must be whole numbers, e.g. '153/164'; got {text!r}")
    correct, total = int(a), int(b)
    if correct < 0 or total < 0:
        raise ValueError(f"counts must not be negative; got {text!r}")
    if total == 0:
        raise ValueError(f"total must be positive; got {text!r}")
    if correct > total:
        raise ValueError(f"correct ({correct}) must not exceed total ({total}); got {text!r}")
    return Counts(correct, total)


@dataclass(frozen=True)
class ExamDelta:
    """One exam delta: the fields of a tables/exam_deltas.csv row plus the per-seat CIs.

    `diff` is candidate minus baseline proportion; `p_holm` equals `p_value`
    for a single test (a family of one) and is adjusted by `exam_deltas`.
    """

    benchmark: str | None
    dimension: str | None
    baseline: str
    candidate: str
    test: str
    n_items: int | None
    baseline_correct: int
    candidate_correct: int
    baseline_only: int | None
    candidate_only: int | None
    p_value: float
    p_mid: float
    p_holm: float
    diff: float
    diff_ci_low: float
    diff_ci_high: float
    diff_ci_method: str
    mde: float
    p_boschloo: float
    baseline_total: int
    candidate_total: int
    ci_level: float
    baseline_ci_wilson: tuple
    candidate_ci_wilson: tuple
    baseline_ci_exact: tuple
    candidate_ci_exact: tuple
    note: str = ""

    def to_dict(self) -> dict:
        """JSON-ready dict (NaN -> None, pairs -> lists), spec columns first."""
        d = asdict(self)

        def clean(v):
            if isinstance(v, (tuple, list)):
                return [clean(u) for u in v]
            if isinstance(v, (float, np.floating)):
                return None if math.isnan(v) else float(v)
            if isinstance(v, np.integer):
                return int(v)
            return v

        return {k: clean(v) for k, v in d.items()}

    #: alias of `to_dict` (the name benchreport.cli uses)
    as_dict = to_dict

    def to_json(self, **kwargs) -> str:
        """The `benchreport exam-delta --json` object (strict JSON: no NaN)."""
        return json.dumps(self.to_dict(), allow_nan=False, **kwargs)

    def summary(self) -> str:
        """A few plain lines for `benchreport exam-delta` without --json."""
        pct = round(100 * self.ci_level)

        def pair(ci):
            return f"[{ci[0]:.4f}, {ci[1]:.4f}]"

        def p(v):
            return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.6g}"

        na, nb = self.baseline_total, self.candidate_total
        lines = [
            f"test: {self.test}",
            f"baseline:  {self.baseline_correct}/{na} = {self.baseline_correct / na:.4f}, "
            f"{pct}% CI Wilson {pair(self.baseline_ci_wilson)}, exact {pair(self.baseline_ci_exact)}",
            f"candidate: {self.candidate_correct}/{nb} = {self.candidate_correct / nb:.4f}, "
            f"{pct}% CI Wilson {pair(self.candidate_ci_wilson)}, exact {pair(self.candidate_ci_exact)}",
            f"difference (candidate - baseline): {self.diff:+.4f}, {pct}% CI "
            f"[{self.diff_ci_low:+.4f}, {self.diff_ci_high:+.4f}] ({self.diff_ci_method})",
            f"p = {p(self.p_value)}"
            + (f", mid-p = {p(self.p_mid)}" if not math.isnan(self.p_mid) else "")
            + (f", Boschloo p = {p(self.p_boschloo)}" if not math.isnan(self.p_boschloo) else ""),
            f"smallest difference detectable at this n (80% power): {p(self.mde)}",
        ]
        if self.baseline_only is not None:
            lines.insert(
                1,
                f"paired items: {self.n_items}, baseline only right: {self.baseline_only}, "
                f"candidate only right: {self.candidate_only}",
            )
        if self.note:
            lines.append(f"note: {self.note}")
        return "\n".join(lines)


def _alpha_power_iv(alpha, power):
    try:
        alpha, power = float(alpha), float(power)
    except (TypeError, ValueError):
        raise ValueError("`alpha` and `power` must be numbers") from None
    if not 0 < alpha < 1:
        raise ValueError(f"`alpha` must be in (0, 1); got {alpha}")
    if not 0 < power < 1:
        raise ValueError(f"`power` must be in (0, 1); got {power}")
    return alpha, power


def mde_unpaired(x1, n1, x2, n2, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """Smallest difference of two independent proportions detectable at `power`.

    (z_{1-alpha/2} + z_{power}) * sqrt(p(1-p)(1/n1 + 1/n2)) at the pooled p;
    with n1 = n2 = n this is Miller's sqrt(2 p(1-p)/n). NaN when p is 0 or 1.

    References
    ----------
    Miller, E. (2024), Adding error bars to evals: a statistical approach to
    language model evaluations, arXiv:2411.00640, §5 (power analysis).
    """
    alpha, power = _alpha_power_iv(alpha, power)
    p = (x1 + x2) / (n1 + n2)
    var = p * (1 - p) * (1.0 / n1 + 1.0 / n2)
    if var <= 0:
        return math.nan
    return float((ndtri(1 - alpha / 2) + ndtri(power)) * math.sqrt(var))


def mde_paired(b, c, n, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """Smallest difference of paired proportions detectable at `power`.

    (z_{1-alpha/2} + z_{power}) * sqrt(var_d / n), var_d = (b + c)/n - ((c - b)/n)^2
    the variance of the per-item difference (discordance-based: Miller's
    Var(s_A - s_B) = Var(s_A) + Var(s_B) - 2 Cov(s_A, s_B) for 0/1 scores).
    NaN when there are no discordant items (the data say nothing about the
    discordance rate).

    References
    ----------
    Miller, E. (2024), arXiv:2411.00640, §4.2 (paired differences) and §5.
    """
    alpha, power = _alpha_power_iv(alpha, power)
    psi = (b + c) / n
    d = (c - b) / n
    var = psi - d * d
    if var <= 0:
        return math.nan
    return float((ndtri(1 - alpha / 2) + ndtri(power)) * math.sqrt(var / n))


def _pair(ci) -> tuple:
    return (float(ci[0]), float(ci[1]))


def exam_delta_counts(
    a_correct,
    a_total,
    b_correct,
    b_total,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    benchmark=None,
    dimension=None,
    baseline=None,
    candidate=None,
    note: str = "",
    boschloo_max_n: int = 500,
) -> ExamDelta:
    """Exact test of an exam delta known only as counts (A = baseline, B = candidate).

    Fisher's exact test (p_value), Boschloo's exact unconditional test
    (p_boschloo), Newcombe's hybrid score CI for B - A, Wilson and
    Clopper-Pearson CIs for each proportion, and the unpaired `mde`.

    Parameters
    ----------
    a_correct, a_total, b_correct, b_total : int
    alpha : float, keyword-only
        1 - confidence level of every CI, and the test level of `mde`.
    power : float
        Power for `mde`.
    benchmark, dimension, baseline, candidate : str, optional
        Labels; baseline/candidate default to "A_CORRECT/A_TOTAL" and "B_CORRECT/B_TOTAL".
    note : str
        Carried into the result (e.g. how a 0-100 score became a count).
    boschloo_max_n : int
        See `counts_exact`.

    Returns
    -------
    ExamDelta

    References
    ----------
    Fisher (1935); Boschloo (1970); Newcombe (1998), Stat Med 17, 873-890,
    method 10; Wilson (1927); Clopper & Pearson (1934); Miller (2024),
    arXiv:2411.00640.

    Examples
    --------
    >>> r = exam_delta_counts(153, 164, 154, 164)
    >>> r.p_value
    1.0
    """
    alpha, power = _alpha_power_iv(alpha, power)
    a_correct, a_total = _counts_pair_iv(a_correct, a_total, "a")
    b_correct, b_total = _counts_pair_iv(b_correct, b_total, "b")
    level = 1.0 - alpha
    t = counts_exact(a_correct, a_total, b_correct, b_total, boschloo_max_n=boschloo_max_n)
    diff = newcombe_difference(a_correct, a_total, b_correct, b_total, level=level)
    notes = [s for s in (note, t.note) if s]
    return ExamDelta(
        benchmark=benchmark,
        dimension=dimension,
        baseline=baseline if baseline is not None else f"{a_correct}/{a_total}",
        candidate=candidate if candidate is not None else f"{b_correct}/{b_total}",
        test=TEST_COUNTS,
        n_items=a_total if a_total == b_total else None,
        baseline_correct=a_correct,
        candidate_correct=b_correct,
        baseline_only=None,
        candidate_only=None,
        p_value=t.p_fisher,
        p_mid=math.nan,
        p_holm=t.p_fisher,
        diff=diff.estimate,
        diff_ci_low=diff.low,
        diff_ci_high=diff.high,
        diff_ci_method=diff.method,
        mde=mde_unpaired(a_correct, a_total, b_correct, b_total, alpha=alpha, power=power),
        p_boschloo=t.p_boschloo,
        baseline_total=a_total,
        candidate_total=b_total,
        ci_level=level,
        **_seat_intervals(a_correct, a_total, b_correct, b_total, level),
        note="; ".join(notes),
    )


def _seat_intervals(a_correct, a_total, b_correct, b_total, level: float) -> dict:
    """Each seat's proportion correct with its Wilson and Clopper-Pearson intervals (the
    ExamDelta fields ``baseline_ci_wilson`` ... ``candidate_ci_exact``)."""
    return dict(
        baseline_ci_wilson=_pair(wilson(a_correct, a_total, level=level)),
        candidate_ci_wilson=_pair(wilson(b_correct, b_total, level=level)),
        baseline_ci_exact=_pair(clopper_pearson(a_correct, a_total, level=level)),
        candidate_ci_exact=_pair(clopper_pearson(b_correct, b_total, level=level)),
    )


def exam_delta_paired(
    both,
    baseline_only,
    candidate_only,
    neither,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    benchmark=None,
    dimension=None,
    baseline="baseline",
    candidate="candidate",
    note: str = "",
) -> ExamDelta:
    """Exact test of an exam delta on paired items (the same items answered by both seats).

    McNemar's exact test on the discordant items (p_value) and its mid-p
    (p_mid), Tango's score CI for the paired difference candidate - baseline,
    Wilson and Clopper-Pearson CIs for each proportion, and the paired `mde`.

    Parameters
    ----------
    both, baseline_only, candidate_only, neither : int
        The paired 2x2 table of item verdicts.

    Returns
    -------
    ExamDelta

    References
    ----------
    McNemar (1947); Fagerland, Lydersen & Laake (2013), BMC Med Res Methodol
    13:91 (mid-p); Tango (1998), Stat Med 17, 891-908; Miller (2024),
    arXiv:2411.00640.
    """
    alpha, power = _alpha_power_iv(alpha, power)
    cells = []
    for v, k in (
        (both, "both"),
        (baseline_only, "baseline_only"),
        (candidate_only, "candidate_only"),
        (neither, "neither"),
    ):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise ValueError(f"`{k}` must be a non-negative integer; got {v!r}")
        cells.append(int(v))
    a, b, c, d = cells
    n = a + b + c + d
    if n == 0:
        raise ValueError("no paired items (both + baseline_only + candidate_only + neither == 0)")
    level = 1.0 - alpha
    mc = mcnemar_exact(b, c)
    diff = tango_paired_difference(b, c, n, level=level)
    xa, xb = a + b, a + c
    return ExamDelta(
        benchmark=benchmark,
        dimension=dimension,
        baseline=baseline,
        candidate=candidate,
        test=TEST_PAIRED,
        n_items=n,
        baseline_correct=xa,
        candidate_correct=xb,
        baseline_only=b,
        candidate_only=c,
        p_value=mc.p_value,
        p_mid=mc.p_mid,
        p_holm=mc.p_value,
        diff=diff.estimate,
        diff_ci_low=diff.low,
        diff_ci_high=diff.high,
        diff_ci_method=diff.method,
        mde=mde_paired(b, c, n, alpha=alpha, power=power),
        p_boschloo=math.nan,
        baseline_total=n,
        candidate_total=n,
        ci_level=level,
        **_seat_intervals(xa, n, xb, n, level),
        note=note,
    )


def _counts_pair_iv(correct, total, side):
    for v, k in ((correct, f"{side}_correct"), (total, f"{side}_total")):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            if not (isinstance(v, (float, np.floating)) and float(v).is_integer()):
                raise ValueError(f"`{k}` must be an integer; got {v!r}")
    correct, total = int(correct), int(total)
    if correct < 0:
        raise ValueError(f"`{side}_correct` must be >= 0; got {correct}")
    if total <= 0:
        raise ValueError(f"`{side}_total` must be positive; got {total}")
    if correct > total:
        raise ValueError(f"`{side}_correct` ({correct}) must not exceed `{side}_total` ({total})")
    return correct, total


# --------------------------------------------------------------------------- tables
_NA_DIM = "\x00<NA>"


def _norm_dim(col: pd.Series) -> pd.Series:
    col = col.astype("object")
    return col.where(col.notna(), _NA_DIM)


def _latest_results(exams: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """One result per (seat, benchmark, dimension): the latest (measured_on or date, run_id).

    Results that exist only as item verdicts (no exams row) are counted from the items.
    """
    cols = [
        "run_id",
        "seat",
        "date",
        "benchmark",
        "dimension",
        "correct",
        "total",
        "from_items",
        "count_rounding",
        "measured_on",
        "score",
    ]
    ex = exams.reindex(columns=cols).astype("object")
    ex["dimkey"] = _norm_dim(ex["dimension"])
    if len(items):
        it = items.reindex(columns=["run_id", "seat", "date", "benchmark", "dimension", "correct"]).astype("object")
        it["dimkey"] = _norm_dim(it["dimension"])
        it["correct"] = it["correct"].astype(bool)
        agg = (
            it.groupby(["run_id", "seat", "date", "benchmark", "dimkey"], sort=True)["correct"]
            .agg(["sum", "size"])
            .reset_index()
            .rename(columns={"sum": "correct", "size": "total"})
        )
        known = set(zip(ex["run_id"], ex["seat"], ex["benchmark"], ex["dimkey"]))
        agg = agg[[k not in known for k in zip(agg["run_id"], agg["seat"], agg["benchmark"], agg["dimkey"])]]
        if len(agg):
            agg = agg.assign(
                dimension=agg["dimkey"].where(agg["dimkey"] != _NA_DIM, None),
                from_items=True,
                count_rounding=None,
                measured_on=None,
                score=None,
            )
            ex = pd.concat([ex, agg[cols + ["dimkey"]].astype("object")], ignore_index=True)
    ex = ex[ex["correct"].notna() & ex["total"].notna()]
    when = ex["measured_on"].where(ex["measured_on"].notna(), ex["date"])
    ex = ex.assign(_when=when.astype(str), _date=ex["date"].astype(str), _run=ex["run_id"].astype(str))
    ex = ex.sort_values(["seat", "benchmark", "dimkey", "_when", "_date", "_run"], kind="stable")
    return ex.groupby(["seat", "benchmark", "dimkey"], sort=False).tail(1)


#: with no baseline among the seats that took a benchmark, every pair is compared when
#: at most this many seats took it (15 pairs, Holm-adjusted); beyond, none (too many to read)
MAX_PAIRWISE_SEATS = 6


def _when(r) -> str:
    """When a result was measured: measured_on where given, else the run's date."""
    return str(r.measured_on if isinstance(r.measured_on, str) else r.date)


def _pairs(results: pd.DataFrame, base: str | None):
    """(baseline, candidate, benchmark, dim, baseline row, candidate row, note) to compare.

    Against the baseline seat where it took the benchmark; otherwise every pair of the
    seats that took it (the earlier-measured seat as baseline), so that an exam delta
    between two candidates (e.g. two builds of one seat) is still tested.
    """
    by_bench: dict = {}
    for r in results.itertuples(index=False):
        by_bench.setdefault((str(r.benchmark), str(r.dimkey)), []).append(r)
    for bench, dim in sorted(by_bench):
        rows = sorted(by_bench[(bench, dim)], key=lambda r: (_when(r), str(r.seat)))
        seats = [str(r.seat) for r in rows]
        if base is not None and base in seats:
            basr = rows[seats.index(base)]
            for cand in sorted(rows, key=lambda r: str(r.seat)):
                if str(cand.seat) != base:
                    yield base, str(cand.seat), cand.benchmark, cand.dimkey, basr, cand, ""
        elif 2 <= len(rows) <= MAX_PAIRWISE_SEATS:
            note = (
                "no baseline seat took this exam: every pair compared"
                if base is None
                else f"the baseline {base} did not take this exam: every pair compared"
            )
            for i, basr in enumerate(rows):
                for cand in rows[i + 1 :]:
                    yield str(basr.seat), str(cand.seat), cand.benchmark, cand.dimkey, basr, cand, note


def _item_groups(items: pd.DataFrame) -> dict:
    """{(run_id, seat, benchmark, dim): Series of bool verdicts indexed by item_id}."""
    if not len(items):
        return {}
    it = items.reindex(columns=["run_id", "seat", "benchmark", "dimension", "item_id", "correct"]).astype("object")
    it["dimkey"] = _norm_dim(it["dimension"])
    it["item_id"] = it["item_id"].astype(str)
    out = {}
    for key, g in it.groupby(["run_id", "seat", "benchmark", "dimkey"], sort=False):
        g = g.drop_duplicates("item_id", keep="last")
        out[key] = pd.Series(g["correct"].astype(bool).to_numpy(), index=g["item_id"].to_numpy())
    return out


def exam_deltas(
    exams: pd.DataFrame,
    exam_items: pd.DataFrame | None = None,
    seats: pd.DataFrame | None = None,
    *,
    baseline: str | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    boschloo_max_n: int = 500,
) -> pd.DataFrame:
    """Exam deltas of every seat against the baseline, per benchmark and dimension.

    Parameters
    ----------
    exams : DataFrame
        The `exams` tidy table (benchreport.columns.TABLE_COLUMNS["exams"]).
    exam_items : DataFrame, optional
        The `exam_items` table (item verdicts).
    seats : DataFrame, optional
        The `seats` table; the baseline is the seat with role "incumbent"
        unless `baseline` is given. A benchmark the baseline did not take (or
        any benchmark, without a baseline) is compared pairwise among the seats
        that took it, up to MAX_PAIRWISE_SEATS seats.
    baseline : str, keyword-only
    alpha : float
        1 - level of every CI, and the level of `mde`.
    power : float
        Power for `mde`.
    boschloo_max_n : int
        Boschloo's test only for totals up to this (see `counts_exact`).

    Returns
    -------
    DataFrame
        EXAM_DELTA_COLUMNS + EXAM_DELTA_EXTRA_COLUMNS, one row per (benchmark,
        dimension, baseline, candidate), sorted by benchmark, dimension, candidate.

    Notes
    -----
    Each seat's result for a (benchmark, dimension) is its latest one (by
    `measured_on`, else `date`, then run_id). When both seats' latest results
    have item verdicts, the items shared by id are paired (McNemar exact,
    Tango CI; items answered by one seat only are left out and counted in
    `note`); otherwise the counts are compared (Fisher exact, Boschloo,
    Newcombe CI). `p_holm` is Holm's adjustment over all rows of the table
    (one report = one family). `note` carries exams.count_rounding (how a
    published 0-100 score became a count) for either side.

    References
    ----------
    See `exam_delta_paired`, `exam_delta_counts` and `benchreport.stats.exact.holm`
    (Holm 1979).
    """
    alpha, power = _alpha_power_iv(alpha, power)
    items = _exam_tables_iv(exams, exam_items)
    results = _latest_results(exams, items)
    base = resolve_baseline(baseline, seats, set(results["seat"].astype(str)))
    groups = _item_groups(items)
    rows = [
        _pair_delta(pair, groups, alpha=alpha, power=power, boschloo_max_n=boschloo_max_n)
        for pair in _pairs(results, base)
    ]
    return _delta_frame(rows)


def exam_family(deltas: pd.DataFrame | None) -> tuple:
    """``("exams",)`` when an exam delta has a test, else ``()``: the exam deltas are a family
    of hypotheses of their own, sharing the report's alpha with the comparisons' families
    (benchreport.stats.multiplicity.family_gatekeeping), so they are judged at alpha/F too."""
    from .multiplicity import EXAMS

    if deltas is None or not len(deltas) or "p_value" not in deltas:
        return ()
    p = pd.to_numeric(deltas["p_value"], errors="coerce")
    return (EXAMS,) if bool(p.notna().any()) else ()


def _exam_tables_iv(exams, exam_items) -> pd.DataFrame:
    """Check the exams table; the item verdicts (an empty table when None)."""
    if not isinstance(exams, pd.DataFrame):
        raise ValueError("`exams` must be a pandas DataFrame")
    for c in ("seat", "benchmark", "correct", "total"):
        if c not in exams.columns:
            raise ValueError(f"`exams` lacks column {c!r}")
    items = exam_items if exam_items is not None else pd.DataFrame(columns=TABLE_COLUMNS["exam_items"])
    if not isinstance(items, pd.DataFrame):
        raise ValueError("`exam_items` must be a pandas DataFrame or None")
    return items


def _pair_delta(pair: tuple, groups: dict, *, alpha: float, power: float, boschloo_max_n: int) -> "ExamDelta":
    """The delta of one pair of `_pairs`: paired on the items both seats answered (by id), else
    from the counts (untested when a count is made up from a score that is no share of its items)."""
    pair_base, seat, bench, dim, basr, cand, pair_note = pair
    dimension = None if dim == _NA_DIM else dim
    notes = [pair_note] if pair_note else []
    for side, r in (("baseline", basr), ("candidate", cand)):
        if isinstance(r.count_rounding, str) and r.count_rounding:
            notes.append(f"{side}: {r.count_rounding}")
    labels = dict(alpha=alpha, power=power, benchmark=bench, dimension=dimension, baseline=pair_base, candidate=seat)
    empty = pd.Series(dtype=bool)
    ib = groups.get((basr.run_id, pair_base, bench, dim), empty)
    ic = groups.get((cand.run_id, seat, bench, dim), empty)
    shared = ib.index.intersection(ic.index) if len(ib) and len(ic) else []
    if len(shared):
        xb, xc = ib.loc[shared].to_numpy(), ic.loc[shared].to_numpy()
        left = (len(ib) - len(shared)) + (len(ic) - len(shared))
        if left:
            notes.append(f"{left} item(s) answered by one seat only were left out")
        return exam_delta_paired(
            int(np.sum(xb & xc)),
            int(np.sum(xb & ~xc)),
            int(np.sum(~xb & xc)),
            int(np.sum(~xb & ~xc)),
            note="; ".join(notes),
            **labels,
        )
    row = exam_delta_counts(
        int(basr.correct),
        int(basr.total),
        int(cand.correct),
        int(cand.total),
        note="; ".join(notes),
        boschloo_max_n=boschloo_max_n,
        **labels,
    )
    if is_not_a_count(basr.count_rounding) or is_not_a_count(cand.count_rounding):
        return _untested(row, _score_difference(basr, cand))
    return row


def _score_difference(basr, cand) -> float:
    """candidate - baseline as a share, from the published 0-100 scores; NaN without both."""
    scores = [pd.to_numeric(getattr(r, "score", None), errors="coerce") for r in (cand, basr)]
    return float(scores[0] - scores[1]) / 100.0 if all(pd.notna(x) for x in scores) else float("nan")


def _delta_frame(rows: list) -> pd.DataFrame:
    """The exam deltas table from its rows, p-values Holm-adjusted across all of them."""
    cols = EXAM_DELTAS.names
    if not rows:
        return EXAM_DELTAS.empty()
    df = pd.DataFrame([{c: getattr(r, c) for c in cols} for r in rows], columns=cols)
    df["p_holm"] = holm(df["p_value"].to_numpy(dtype=float))
    return EXAM_DELTAS.typed(df)


def _untested(row: "ExamDelta", score_difference: float) -> "ExamDelta":
    """A delta whose counts would be made up from a score that is no whole number of its items: no
    counts, test, p-value or interval (an exact test of invented counts is not exact;
    `exam.score_not_a_count` says why); the difference is the published scores' (issue 42: a
    delta only from counts, never from reconstructed ones)."""
    nan = float("nan")
    return replace(
        row,
        baseline_correct=None,
        candidate_correct=None,
        diff=score_difference,
        mde=nan,
        test="none: a score is not a whole number of items",
        p_value=nan,
        p_mid=nan,
        p_holm=nan,
        diff_ci_low=nan,
        diff_ci_high=nan,
        diff_ci_method="none: the difference of the published scores (a score is not a share of the stated items)",
        p_boschloo=nan,
    )
