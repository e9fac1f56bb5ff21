"""The analyst's notebook (notebooks/explore.ipynb): its tables, figures, widgets and `compare`.

`views` (pure: the analysis as readable tables), `pairs` (`compare(a, "seat-x", "seat-y")`),
`plots` (interactive plotly figures with hover values) and `display` (offline itables and
plotly, the `Explorer` widgets). The notebook stays thin: each cell calls one of these.
"""

from .pairs import COMPARE_COLUMNS, Comparison, compare, default_pair, pair_exams, shared_counts
from .views import (
    REQUEST_FIELDS,
    cells_view,
    comparisons_view,
    check_seats,
    choices,
    agreement_view,
    files_view,
    flags_view,
    pass_columns,
    request_summary,
    requests_view,
    seat_labels,
    seats_view,
)

__all__ = [
    "compare",
    "Comparison",
    "COMPARE_COLUMNS",
    "default_pair",
    "pair_exams",
    "shared_counts",
    "seat_labels",
    "check_seats",
    "choices",
    "seats_view",
    "flags_view",
    "agreement_view",
    "files_view",
    "cells_view",
    "comparisons_view",
    "requests_view",
    "request_summary",
    "pass_columns",
    "REQUEST_FIELDS",
    "open_runs",
    "report_figure",
    "Explorer",
    "offline_mode",
    "interactive_table",
    "export_html",
    "plots",
]


def open_runs(
    runs,
    *,
    n_boot: int = 2000,
    seed: int = 0,
    baseline: str | None = None,
    store=None,
    max_file_mb: float = 512,
    strict: bool = False,
    **options,
):
    """Load and analyse `runs` (a path or a list of paths; a string is one path) or a run `store`,
    refused files listed rather than fatal (`strict`: files that are not run files among them,
    rather than skipped); other analysis options and thresholds by name."""
    from benchreport.pipeline import options_from
    from benchreport.source import Source, SourceError, open_source

    opts = options_from({"n_boot": n_boot, "seed": seed, "baseline": baseline, **options})
    try:
        opened = open_source(Source.of(runs if store is None else None, store, max_file_mb=max_file_mb, strict=strict))
    except SourceError as exc:
        raise FileNotFoundError(f"runs: {exc}") from None
    opened.check_refused(skip_bad=True)  # the analyst sees the refused files listed (Explorer.refused)
    a = opened.analyse(opts)
    if baseline is not None:
        check_seats(a, [baseline])
    return a


def report_figure(a, name: str):
    """The report's figure `name` (analysis.report.catalog) as a matplotlib Figure, or None."""
    from benchreport.report import catalog

    block = catalog.figure(a, name)
    return None if block is None else block.figure


def __getattr__(name):
    if name in ("Explorer", "offline_mode", "interactive_table", "export_html"):
        from . import display

        return getattr(display, name)
    if name == "plots":
        import importlib

        return importlib.import_module("benchreport.explore.plots")
    raise AttributeError(name)
