"""Statistics layer: cell estimates with honest CIs, comparisons, exam deltas.

Takes the tidy tables (benchreport.columns.TABLE_COLUMNS) and returns DataFrames
with the columns of spec/cli.md; touches no files.

Public API
----------
estimate_cells(measurements, requests, runs, *, ...) -> CellSet (cells, per-pass values)
cells(measurements, requests, runs, *, ...)      -> tables/cells.csv rows
comparisons(cellset, seats, *, ...)              -> tables/comparisons.csv rows
exam_deltas(exams, exam_items, seats, *, ...)    -> tables/exam_deltas.csv rows
exam_delta_counts(a, n_a, b, n_b, *, alpha)      -> ExamDelta (``benchreport exam-delta --json``)
parse_counts("153/164")                          -> Counts(correct, total)
bootstrap_ci(sample, statistic, *, method, n_resamples, level, rng) -> BootstrapCI
bootstrap_group(values, statistics, *, ...)      -> GroupBootstrap (batched engine)
"""

from .bootstrap import (
    BootstrapCI,
    GroupBootstrap,
    bootstrap_ci,
    bootstrap_group,
    hierarchical_bootstrap,
    jackknife_values,
)
from .cells import CELL_COLUMNS, CELL_EXTRA_COLUMNS, PASS_COLUMNS, CellSet, cells, estimate_cells, request_metrics
from .compare import (
    COMPARISON_COLUMNS,
    COMPARISON_EXTRA_COLUMNS,
    VERDICTS,
    PrimaryCell,
    comparisons,
    verdict,
    verdict_reason,
)
from .exact import CountsTestResult, McNemarResult, counts_exact, holm, mcnemar_exact
from .exams import (
    EXAM_DELTA_COLUMNS,
    EXAM_DELTA_EXTRA_COLUMNS,
    Counts,
    ExamDelta,
    exam_delta_counts,
    exam_delta_paired,
    exam_deltas,
    mde_paired,
    mde_unpaired,
    parse_counts,
)
from .intervals import (
    DifferenceCI,
    RatioCI,
    TInterval,
    clopper_pearson,
    fieller_ratio,
    newcombe_difference,
    newcombe_paired_difference,
    t_interval,
    tango_paired_difference,
    tango_score,
    welch_log_ratio,
    wilson,
)

__all__ = [
    "cells",
    "comparisons",
    "exam_deltas",
    "exam_delta_counts",
    "exam_delta_paired",
    "parse_counts",
    "request_metrics",
    "estimate_cells",
    "CellSet",
    "PrimaryCell",
    "verdict",
    "verdict_reason",
    "PASS_COLUMNS",
    "bootstrap_ci",
    "bootstrap_group",
    "hierarchical_bootstrap",
    "jackknife_values",
    "t_interval",
    "welch_log_ratio",
    "fieller_ratio",
    "wilson",
    "clopper_pearson",
    "newcombe_difference",
    "tango_paired_difference",
    "newcombe_paired_difference",
    "tango_score",
    "mcnemar_exact",
    "counts_exact",
    "holm",
    "mde_unpaired",
    "mde_paired",
    "BootstrapCI",
    "GroupBootstrap",
    "TInterval",
    "RatioCI",
    "DifferenceCI",
    "McNemarResult",
    "CountsTestResult",
    "ExamDelta",
    "Counts",
    "CELL_COLUMNS",
    "CELL_EXTRA_COLUMNS",
    "COMPARISON_COLUMNS",
    "COMPARISON_EXTRA_COLUMNS",
    "EXAM_DELTA_COLUMNS",
    "EXAM_DELTA_EXTRA_COLUMNS",
    "VERDICTS",
]
