"""The report's figures: functions that take tidy tables and return a matplotlib Figure.

Nothing is re-estimated here: intervals come precomputed from the statistics layer
(`cells.csv`'s `ci_low`/`ci_high`, `exam_deltas.csv`'s `diff_ci_*`), as in seaborn's
objects interface (``so.Range(ymin=..., ymax=...)``). Every function draws inside one
theme (`theme()`), builds a `matplotlib.figure.Figure` without pyplot (so a notebook
never shows a figure twice, and nothing global leaks between figures) and returns
``None`` when the data hold nothing to draw. `save_figure` writes PNG and SVG (PDF on
request) with a fixed dpi and deterministic SVG/PDF bytes.

At fleet scale (tens of seats) a figure shows the baseline plus the top seats
(`pick_seats`) or small multiples; the report says which, and the full numbers are in
the tables.

Strings from run files (seat ids, workloads) only ever become matplotlib text with
mathtext parsing switched off (``text.parse_math: False``), never file names.

Seats are told apart by colour (Okabe-Ito), marker shape and, past seven seats, line
style (`seat_styles`); every axis names the statistic drawn (`axis_label`); SVG text is
text. Each figure notes the style of each seat (``fig.benchreport_styles``) and which
kinds of mark it drew (`drawn`), so a caption says only what is there.

Modules: `theme` (theme, sizes, colours, markers, `save_figure`), `concurrency` (a metric against
concurrency), `dotplot` (one concurrency, every seat), `passes` (per-pass values, history,
one cell's requests), `forest` (exam deltas, ratios).
"""

from .concurrency import (
    SERIES_PARTS,
    THROUGHPUT_STATISTICS,
    TTFT_STATISTICS,
    metric_vs_concurrency,
    pick_seats,
    select_series,
    throughput_vs_concurrency,
    ttft_vs_concurrency,
)
from .dotplot import cell_dotplot
from .forest import VERDICT_STYLES, exam_forest, ratio_forest
from .passes import per_pass_values, request_distribution, seat_history
from .theme import (
    DPI,
    FORMATS,
    LINESTYLES,
    MARKERS,
    METRIC_LABELS,
    PALETTE,
    WIDTH_IN,
    Style,
    axis_label,
    date_axis,
    drawn,
    metric_label,
    save_figure,
    seat_colors,
    seat_styles,
    theme,
)

__all__ = [
    "DPI",
    "WIDTH_IN",
    "FORMATS",
    "METRIC_LABELS",
    "theme",
    "save_figure",
    "seat_colors",
    "pick_seats",
    "metric_label",
    "metric_vs_concurrency",
    "throughput_vs_concurrency",
    "ttft_vs_concurrency",
    "THROUGHPUT_STATISTICS",
    "SERIES_PARTS",
    "TTFT_STATISTICS",
    "select_series",
    "cell_dotplot",
    "per_pass_values",
    "exam_forest",
    "ratio_forest",
    "seat_history",
    "request_distribution",
    "PALETTE",
    "MARKERS",
    "LINESTYLES",
    "Style",
    "seat_styles",
    "axis_label",
    "date_axis",
    "drawn",
    "VERDICT_STYLES",
]
