"""Section 2, Measured results: Table 1 (and, at fleet scale, Table A1) and its lead."""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from benchreport import format as fmt
from benchreport.report.model import figures as F

from .blocks import Prose, Table, para, prose
from .cellview import (
    CELLS_NOTE,
    RECOMPUTED_MARK,
    STAT_ORDER,
    cell_rows_per_seat,
    cells_wide,
    result_cells,
    stat_heading,
    wide_note,
)
from .flagview import excluded_figures, first_chunk_cells
from .labels import ci_level, order_seats, seat_label
from .summary import (
    SUMMARY_LINES,
    SUMMARY_LINES_PORTRAIT,
    fit_summary,
    landscape,
    row_lines,
    summary_frame,
    summary_note,
    summary_table,
)
from .tables import TOP_SEATS, abbreviations, constant_columns


def results_table(a, *, max_lines: int | None = None, top_n: int = TOP_SEATS) -> Table | None:
    """Table 1, a one-page summary: per seat and measured condition, the headline figures
    (`summary.HEADLINE`: throughput at its mean, latencies at their median) with their intervals.

    Figures a flag excludes (a prefix-cache hit) are not in it. Every statistic and metric is in
    Table A1 and tables/cells.csv. Past `max_lines` printed lines (by default a page: `SUMMARY_LINES`
    landscape, `SUMMARY_LINES_PORTRAIT` portrait), the baseline
    and the top seats by aggregate throughput, as many as fit (at most `top_n`; at least two, the
    second with the conditions measured with the most passes), with a note saying so.
    """
    cells = result_cells(a)
    if cells is None or cells.empty:
        return None
    pct = ci_level(a)
    df = summary_frame(a, cells)
    if df.empty:
        return None
    lead = []
    if max_lines is None:
        max_lines = SUMMARY_LINES if landscape(df) else SUMMARY_LINES_PORTRAIT
    if row_lines(df).sum() + df["seat"].nunique() > max_lines:
        df, lead = _cut_to_a_page(a, cells, df, max_lines, top_n)
    chunk = first_chunk_cells(a)
    if chunk:
        lead.append(
            f"The time to first token of {fmt.counted(len(chunk), 'cell')} is left out: it times a first "
            "chunk that carried no token, not a first token (Section 5)."
        )
    ex = excluded_figures(a)
    if ex:
        lead.append(
            f"{fmt.counted(len(ex), 'figure')} flagged as a prefix-cache hit "
            f"{'is' if len(ex) == 1 else 'are'} excluded from this table (Section 5)."
        )
    df, note = summary_note(df, pct)
    return summary_table(
        df,
        f"Measured results: the headline figures of each seat and condition with their {pct} confidence intervals.",
        " ".join([*lead, note]),
    )


def _ranked_seats(a, cells: pd.DataFrame, top_n: int) -> list[str]:
    """Seat labels, the baseline first, then by aggregate throughput at the highest concurrency
    (`figures.pick_seats`, asked for one seat more each time), then the rest in report order."""
    ranked: list[str] = []
    for n in range(1, top_n + 1):
        keep, total = F.pick_seats(cells, "output_tok_s", baseline=a.baseline, top_n=n)
        ranked += [s for s in keep if s not in ranked]
        if n >= total:
            break
    ranked += [s for s in order_seats(a, cells["seat"]) if s not in ranked]
    return [seat_label(a, s) for s in ranked]


def _cut_to_a_page(
    a, cells: pd.DataFrame, df: pd.DataFrame, max_lines: int, top_n: int
) -> tuple[pd.DataFrame, list[str]]:
    """Table 1's rows cut to a page (`summary.fit_summary`) and the sentence that says what it shows."""
    total = df["seat"].nunique()
    df, shown, part = fit_summary(df, _ranked_seats(a, cells, top_n)[:top_n], max_lines)
    parts = "".join(
        f"; of {seat}'s {fmt.counted(n_all, 'condition')}, the {fmt.count(n)} measured with the most passes"
        for seat, (n, n_all) in part.items()
    )
    which = "the baseline and the highest aggregate throughput" if a.baseline else "the highest aggregate throughput"
    return df, [
        f"This table shows {fmt.count(len(shown))} of {fmt.count(total)} seats ({which}){parts}; "
        "Table A1 in the appendix lists every seat and cell."
    ]


def cells_wide_table(df: pd.DataFrame, kind: str, key: str, caption: str, lead: Sequence[str], pct: str) -> Table:
    """A wide table of cells (`cells_wide`) with its note; a column with one value moves to the note."""
    passes = []
    if (df["Passes"] == "2").any():
        passes.append("Cells with two passes show both values, not a mean.")
    if "Per pass, in order" in df.columns:
        passes.append("Cells with 3 or 4 passes list every pass in order.")
    df, same = constant_columns(df, ["Workload", "Passes"])
    stats = [c for c in df.columns if c in {stat_heading(s) for s in STAT_ORDER} or c == "Estimate"]
    marked = any(df[c].astype(str).str.endswith(RECOMPUTED_MARK).any() for c in stats)
    bits = [
        *lead,
        same,
        wide_note(pct, list(df.columns), marked=marked),
        abbreviations(df["Metric"]),
        CELLS_NOTE,
        *passes,
    ]
    note = " ".join(b for b in bits if b)
    return Table(
        df,
        caption,
        kind=kind,
        group="seat",
        numeric=("Conc.", "Passes", "n", *stats),
        note=note,
        small=True,
        dense=True,
        key=key,
        nowrap=("Metric", "Stat."),
    )


def all_cells_table(a) -> Table | None:
    """Table A1: one row per seat and cell, every statistic (Table 1 has the headline figures).

    The statistics are columns (`cells_wide`); the long table, one row per statistic with
    every CI, is tables/cells.csv beside the report. A reference, not reading: the HTML has
    it collapsed and the PDF says where it is (pages of it made the appendix most of the
    report, issue 27).
    """
    cells = result_cells(a)
    if cells is None or cells.empty:
        return None
    pct = ci_level(a)
    table = cells_wide_table(
        cells_wide(a, cells, pct),
        "appendix",
        "all-cells",
        f"Every seat and cell: the mean with its {pct} CI, number of passes and observations, and the "
        "percentiles, and each pass's value (Table 1 has the headline figures).",
        [],
        pct,
    )
    table.screen_only = "tables/cells.csv"
    return table


def results_text(a) -> Prose:
    """Section 2's lead: what Table 1 holds and how many cells rest on one pass."""
    cells = result_cells(a)
    if cells is None or cells.empty:
        return prose(para("No measurement could be turned into a cell estimate."))
    n = len(cells)
    np_ = pd.to_numeric(cells.get("n_passes"), errors="coerce")
    one = int((np_ == 1).sum())
    two = int((np_ == 2).sum())
    with_ci = int((cells["ci_low"].map(fmt.finite) & cells["ci_high"].map(fmt.finite)).sum())
    carry = "carries" if with_ci == 1 else "carry"
    out = [
        para(
            "The analysis gives {} estimates in {} (a seat's workload, concurrency and metric). {} rest on a "
            "single pass, {} on two passes; {} {} a confidence interval. Table 1 gives the headline figures "
            "of each seat and condition; Table A1 in the appendix and tables/cells.csv have every statistic.",
            fmt.count(n),
            fmt.counted(cell_rows_per_seat(cells).sum(), "cell"),
            fmt.count(one),
            fmt.count(two),
            fmt.count(with_ci),
            carry,
        )
    ]
    ex = excluded_figures(a)
    if ex:
        out.append(
            para(
                "{} excluded from the results: a prefix-cache hit is not a prefill measurement (Section 5).",
                fmt.counted(len(ex), "figure") + (" is" if len(ex) == 1 else " are"),
            )
        )
    return prose(out)
