"""The flag rules: pure functions of the tidy tables and the statistics, returning typed findings.

One module per family of spec/flags.md, each holding its finding types and the rules that
make them; none writes a word (that is `benchreport.flags.words`). Every threshold a rule uses
comes in as `thresholds` (keyword-only, required) and is recorded in the finding's
`thresholds`; the prefix-cache rule speaks for the exclusions decided once
(`benchreport.flags.exclusions`).

    sampling     sample.single_pass/two_passes/few_passes, small_n, underpowered, mixed_runs,
                 correlated_requests
    stability    drift.warmup, drift.unstable, warmup.unknown, warmup.included
    history      history.regression, history.improvement
    traps        trap.prefix_cache, trap.reasoning_field, trap.reasoning_ttft, trap.first_chunk,
                 trap.capped_answers
    comparisons  compare.no_incumbent, cross_model, not_like_for_like, missing_metric, stale_scores
    harness      harness.disagree (two harnesses on one cell, beyond their definitions),
                 harness.untested (apart, but a figure has no interval to test them)
    exams        exam.not_significant, exam.counts_only, exam.score_not_a_count
    deployment   fit.exceeds_node, license.noncommercial, license.unknown
    faults       fault.recorded, fault.unreproduced, defect.open, requests.failed, requests.missing
    provenance   import.assumed, import.figure_mismatch, sample.repeated_figure
    runs         the run index mixed_runs and not_like_for_like share
"""

from .comparisons import compared_pairs, cross_model, missing_metric, no_incumbent, not_like_for_like, stale_scores
from .deployment import fit_exceeds_node, licenses
from .exams import exam_counts_only, exam_not_significant, exam_score_not_a_count
from .faults import faults, requests_failed, requests_missing
from .harness import harness_disagree, harness_untested
from .history import history_changes
from .provenance import figure_mismatch, import_assumed, repeated_figure
from .sampling import (
    correlated_requests,
    one_session,
    few_sessions,
    mixed_conditions,
    mixed_runs,
    passes_needed,
    sample_passes,
    small_n,
    underpowered,
)
from .stability import drift, warmup_unknown
from .traps import capped_answers, first_chunk, prefix_cache, reasoning_field, reasoning_ttft

__all__ = [
    "sample_passes",
    "small_n",
    "underpowered",
    "passes_needed",
    "mixed_runs",
    "mixed_conditions",
    "correlated_requests",
    "one_session",
    "few_sessions",
    "drift",
    "warmup_unknown",
    "history_changes",
    "prefix_cache",
    "reasoning_field",
    "reasoning_ttft",
    "harness_disagree",
    "harness_untested",
    "first_chunk",
    "capped_answers",
    "compared_pairs",
    "no_incumbent",
    "cross_model",
    "not_like_for_like",
    "missing_metric",
    "stale_scores",
    "exam_not_significant",
    "exam_counts_only",
    "exam_score_not_a_count",
    "fit_exceeds_node",
    "licenses",
    "faults",
    "requests_failed",
    "requests_missing",
    "import_assumed",
    "figure_mismatch",
    "repeated_figure",
]
