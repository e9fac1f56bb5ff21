"""Every rule over one data set: findings, then the flags table (spec/flags.md) with their words.

findings = find(tables, cells=..., comparisons=..., exam_deltas=..., excluded=..., thresholds=...)
flags = to_frame(findings)          # == compute_flags(tables, ...)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

import pandas as pd

from benchreport.columns import FLAG_COLUMNS
from benchreport.thresholds import Thresholds

from . import rules as R
from . import words
from ._common import int_or_none, key_sort, na, plain
from .codes import CODES, SEVERITIES
from .exclusions import Exclusions
from .findings import Finding

__all__ = ["FLAG_COLUMNS", "Inputs", "RULES", "find", "to_frame", "compute_flags", "empty_flags"]

_SEV_RANK = {s: i for i, s in enumerate(SEVERITIES)}


@dataclass(frozen=True)
class Inputs:
    """What the rules read: the tidy tables, the statistics' frames, the exclusions and thresholds."""

    tables: object
    cells: pd.DataFrame | None
    comparisons: pd.DataFrame | None
    exam_deltas: pd.DataFrame | None
    passes: pd.DataFrame | None
    excluded: Exclusions
    thresholds: Thresholds
    baseline: str | None
    history: pd.DataFrame | None = None
    #: one row per pair of harnesses that measured one cell (benchreport.stats.agreement)
    agreement: pd.DataFrame | None = None


#: (name, rule over the inputs) in the order they run
RULES: list[tuple[str, Callable[[Inputs], list[Finding]]]] = [
    ("sample_passes", lambda i: R.sample_passes(i.cells, thresholds=i.thresholds)),
    ("small_n", lambda i: R.small_n(i.cells, thresholds=i.thresholds)),
    ("mixed_runs", lambda i: R.mixed_runs(i.tables)),
    ("mixed_conditions", lambda i: R.mixed_conditions(i.tables)),
    ("underpowered", lambda i: R.underpowered(i.comparisons, i.exam_deltas, thresholds=i.thresholds)),
    ("drift", lambda i: R.drift(i.cells, i.tables, thresholds=i.thresholds)),
    ("history", lambda i: R.history_changes(i.history, thresholds=i.thresholds)),
    ("warmup_unknown", lambda i: R.warmup_unknown(i.tables.runs)),
    ("prefix_cache", lambda i: R.prefix_cache(i.excluded)),
    ("reasoning_field", lambda i: R.reasoning_field(i.tables.requests, thresholds=i.thresholds)),
    ("reasoning_ttft", lambda i: R.reasoning_ttft(i.tables.requests, i.tables.runs, thresholds=i.thresholds)),
    ("first_chunk", lambda i: R.first_chunk(i.tables.requests, i.tables.runs, thresholds=i.thresholds)),
    ("capped_answers", lambda i: R.capped_answers(i.tables.requests, i.tables.runs, thresholds=i.thresholds)),
    ("harness_disagree", lambda i: R.harness_disagree(i.agreement)),
    ("harness_untested", lambda i: R.harness_untested(i.agreement)),
    ("no_incumbent", lambda i: R.no_incumbent(i.tables, i.comparisons, baseline=i.baseline)),
    ("cross_model", lambda i: R.cross_model(i.tables, i.comparisons, baseline=i.baseline)),
    ("not_like_for_like", lambda i: R.not_like_for_like(i.tables, i.comparisons, baseline=i.baseline)),
    ("missing_metric", lambda i: R.missing_metric(i.tables, i.comparisons, i.cells, baseline=i.baseline)),
    ("stale_scores", lambda i: R.stale_scores(i.tables.exams)),
    (
        "exam_not_significant",
        lambda i: R.exam_not_significant(i.exam_deltas, thresholds=i.thresholds, comparisons=i.comparisons),
    ),
    ("exam_counts_only", lambda i: R.exam_counts_only(i.exam_deltas, i.tables.exams)),
    ("exam_score_not_a_count", lambda i: R.exam_score_not_a_count(i.tables.exams, i.exam_deltas)),
    ("fit_exceeds_node", lambda i: R.fit_exceeds_node(i.tables.seats, thresholds=i.thresholds)),
    ("licenses", lambda i: R.licenses(i.tables.components)),
    ("faults", lambda i: R.faults(i.tables.events)),
    ("import_assumed", lambda i: R.import_assumed(i.tables.runs)),
    ("requests_failed", lambda i: R.requests_failed(i.tables.requests, i.tables.runs, thresholds=i.thresholds)),
    ("requests_missing", lambda i: R.requests_missing(i.tables.runs)),
    ("correlated_requests", lambda i: R.correlated_requests(i.passes, thresholds=i.thresholds)),
    ("one_session", lambda i: R.one_session(i.cells, i.tables.runs)),
    ("few_sessions", lambda i: R.few_sessions(i.cells, i.tables.runs)),
    ("figure_mismatch", lambda i: R.figure_mismatch(i.passes, i.tables.runs, thresholds=i.thresholds)),
    ("repeated_figure", lambda i: R.repeated_figure(i.tables, i.excluded)),
]


def find(
    tables,
    *,
    cells: pd.DataFrame | None,
    comparisons: pd.DataFrame | None,
    exam_deltas: pd.DataFrame | None,
    excluded: Exclusions,
    thresholds: Thresholds,
    baseline: str | None = None,
    passes: pd.DataFrame | None = None,
    history: pd.DataFrame | None = None,
    agreement: pd.DataFrame | None = None,
) -> list[Finding]:
    """Every finding the data raise, in rule order (arguments as `compute_flags`)."""
    if float(excluded.cache_ratio) != float(thresholds.cache_ratio):
        raise ValueError(
            f"`excluded` was decided with cache_ratio {excluded.cache_ratio}, the thresholds "
            f"say {thresholds.cache_ratio}: decide the exclusions with the same thresholds"
        )
    inputs = Inputs(tables, cells, comparisons, exam_deltas, passes, excluded, thresholds, baseline, history, agreement)
    return [f for _name, rule in RULES for f in rule(inputs)]


def _row(f: Finding) -> dict:
    if f.code not in CODES:
        raise ValueError(f"unknown flag code {f.code!r}")
    if f.severity not in CODES[f.code].severities:
        raise ValueError(f"severity {f.severity!r} is not one of {f.code}'s {CODES[f.code].severities}")
    return {
        "code": f.code,
        "severity": f.severity,
        "seats": tuple(str(s) for s in f.seats),
        "workload": na(f.workload),
        "concurrency": int_or_none(f.concurrency),
        "metric": na(f.metric),
        "statistic": na(f.statistic),
        "message": words.message(f),
        "evidence": plain(f.evidence()),
    }


def to_frame(findings: Iterable[Finding]) -> pd.DataFrame:
    """The flags table of findings (columns `FLAG_COLUMNS`), most severe first, then code, seats, cell."""
    rows = [_row(f) for f in findings]
    rows.sort(
        key=lambda r: (
            _SEV_RANK[r["severity"]],
            r["code"],
            r["seats"],
            key_sort(r["workload"]),
            key_sort(r["concurrency"]),
            key_sort(r["metric"]),
            key_sort(r["statistic"]),
            r["message"],
        )
    )
    df = pd.DataFrame(rows, columns=FLAG_COLUMNS)
    for col in ("code", "severity", "workload", "metric", "statistic", "message"):
        df[col] = df[col].astype(object)
    df["concurrency"] = pd.array(list(df["concurrency"]) if len(df) else [], dtype="Int64")
    df.index = pd.RangeIndex(len(df))
    return df


def empty_flags() -> pd.DataFrame:
    """A flags table with no rows and the right columns."""
    return to_frame([])


def compute_flags(
    tables,
    *,
    cells: pd.DataFrame | None,
    comparisons: pd.DataFrame | None,
    exam_deltas: pd.DataFrame | None,
    excluded: Exclusions,
    thresholds: Thresholds,
    baseline: str | None = None,
    passes: pd.DataFrame | None = None,
    history: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Every flag the data raise, as a DataFrame (columns `FLAG_COLUMNS`), most severe first.

    Parameters
    ----------
    tables : benchreport.tables.Tables
        The tidy tables (`build_tables(load(...))`), exclusions not yet dropped.
    cells, comparisons, exam_deltas : DataFrame or None
        The statistics layer's frames (columns of tables/cells.csv, comparisons.csv,
        exam_deltas.csv in spec/cli.md). None skips the rules that need them (comparison
        rules then derive the compared pairs from the incumbent or `baseline`).
    excluded : Exclusions
        The figures excluded from results (`decide_exclusions(tables, thresholds=...)`, with
        these `thresholds`); trap.prefix_cache speaks for them.
    thresholds : Thresholds
        Every threshold a rule uses is read from here and recorded in the evidence.
    baseline : str, optional
        The seat comparisons are made against when no seat has role incumbent.
    passes : DataFrame, optional
        The per-pass table of the statistics layer (benchreport.stats.cells.PASS_COLUMNS):
        reported and recomputed figures, failed requests, lag-1 autocorrelation.
    history : DataFrame, optional
        The dated verdicts of `benchreport.stats.history.history` (history.regression/improvement).

    Returns
    -------
    DataFrame with columns code, severity ("info"/"warn"/"critical"), seats (tuple of seat
    ids), workload, concurrency, metric, statistic (NA where the flag concerns no single
    cell), message (plain sentences with the figures) and evidence (dict: the numbers behind
    it and the thresholds used, by name). Sorted by severity, code, seats, cell, message.
    """
    return to_frame(
        find(
            tables,
            cells=cells,
            comparisons=comparisons,
            exam_deltas=exam_deltas,
            excluded=excluded,
            thresholds=thresholds,
            baseline=baseline,
            passes=passes,
            history=history,
        )
    )
