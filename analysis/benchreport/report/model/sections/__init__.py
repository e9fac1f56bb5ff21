"""The report's content as a view-model, section by section of the paper.

Pure functions of an `benchreport.pipeline.Analysis` (no I/O): paragraphs, `Table` and
`FigureBlock` objects that `benchreport.report.render.html` turns into HTML. Sections follow the
fleet paper, one module each:

    abstract      title block and Abstract
    seats         1 Seats and setup
    results       2 Measured results (Table 1, Table A1) and results_figures (Figures)
    comparisons   3 Comparison against the incumbent (headline: the headline sentence)
    exams         4 Exams
    traps         5 Measurement traps found
    faults        6 Faults and open defects
    limitations   7 What these numbers will not carry
    history       8 History across dates (the dated verdicts of a nightly archive)
    agreement     9 Do the harnesses agree? (one cell measured by several harnesses)
    appendix      Appendix: provenance
    views         Appendix: load, latency and requests (throughput against latency, ECDFs, ...)

Shared by them: `blocks` (the view-model types), `labels` (seat labels, shared words),
`flagview` (the flags as the report reads them), `cellview` (cells as tables show them)
and `tables` (row budgets, wide-table helpers). The notebook calls the section functions
re-exported here: ``from benchreport.report import sections; sections.abstract(a)``.
"""

from .abstract import abstract, strongest_caveat, title_block
from .agreement import agreement_table, agreement_text
from .appendix import (
    appendix_text,
    files_table,
    packages_table,
    parameters_table,
    provenance_table,
    provenance_text,
    refused_table,
    skipped_table,
    thresholds_table,
)
from .blocks import FigureBlock, Table
from .comparisons import VERDICT_MARKS, all_comparisons_table, comparison_table, comparison_text, ratio_figure
from .exams import exam_deltas_table, exam_figure, exam_scores_table, exams_text
from .faults import faults
from .flagview import excluded_figures, flag_seats, sorted_flags
from .headline import headline_sentence, verdict_rule
from .history import history_panels_figure, history_table, history_text
from .limitations import flags_table, limitations, limitations_html, limitations_paragraphs
from .results import all_cells_table, results_table, results_text
from .results_figures import (
    history_figure,
    per_pass_figure,
    per_stream_figure,
    single_stream_figure,
    throughput_figure,
    ttft_figure,
)
from .seats import runs_appendix_table, runs_table, seats_table, setup_text
from .tables import LONG_TABLE_ROWS, MAX_BODY_ROWS, MAX_COMPARISON_ROWS, TOP_SEATS
from .traps import evidence_text, traps
from .views import (
    failures_figure,
    latency_ecdf_figure,
    lengths_sent_figure,
    pass_timeline_figure,
    rate_sweep_figure,
    throughput_latency_figure,
    load_views,
)

__all__ = [
    "Table",
    "FigureBlock",
    "title_block",
    "abstract",
    "setup_text",
    "seats_table",
    "runs_table",
    "runs_appendix_table",
    "results_text",
    "results_table",
    "excluded_figures",
    "all_cells_table",
    "single_stream_figure",
    "throughput_figure",
    "per_stream_figure",
    "ttft_figure",
    "per_pass_figure",
    "history_figure",
    "comparison_text",
    "comparison_table",
    "all_comparisons_table",
    "ratio_figure",
    "exams_text",
    "exam_scores_table",
    "exam_deltas_table",
    "exam_figure",
    "history_text",
    "history_panels_figure",
    "history_table",
    "traps",
    "faults",
    "agreement_text",
    "agreement_table",
    "limitations",
    "limitations_html",
    "limitations_paragraphs",
    "flags_table",
    "evidence_text",
    "provenance_text",
    "provenance_table",
    "files_table",
    "refused_table",
    "skipped_table",
    "parameters_table",
    "thresholds_table",
    "packages_table",
    "appendix_text",
    "sorted_flags",
    "flag_seats",
    "headline_sentence",
    "strongest_caveat",
    "verdict_rule",
    "MAX_BODY_ROWS",
    "MAX_COMPARISON_ROWS",
    "LONG_TABLE_ROWS",
    "TOP_SEATS",
    "VERDICT_MARKS",
    "load_views",
    "throughput_latency_figure",
    "latency_ecdf_figure",
    "lengths_sent_figure",
    "pass_timeline_figure",
    "failures_figure",
    "rate_sweep_figure",
]
