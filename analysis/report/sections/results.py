"""Section 2, Measured results: Table 1 (and, at fleet scale, Table A1) and its lead."""
from __future__ import annotations

from typing import Sequence

import pandas as pd

from benchreport import format as fmt
from benchreport.report import figures as F

from .blocks import Prose, Table, para, prose
from .cellview import (CELLS_NOTE, RECOMPUTED_MARK, STAT_ORDER, TWO_PASSES, cell_rows_per_seat, cells_cut, cells_frame,
                       cells_wide, result_cells, stat_heading, wide_note)
from .flagview import excluded_figures
from .labels import ci_level, order_seats
from .tables import MAX_BODY_ROWS, TOP_SEATS, abbreviations, constant_columns


def results_table(a, *, max_rows: int = MAX_BODY_ROWS, top_n: int = TOP_SEATS) -> Table | None:
    """Table 1: every cell's estimate with its CI (or why none) and n; per-pass values if n ≤ 4.

    Figures a flag excludes (a prefix-cache hit) are not in it. One row per statistic while
    that fits in `max_rows`; else one row per cell with the statistics as columns; at fleet
    scale (not even that fits) the baseline and the top seats, as many as fit in
    `max_rows` (at least two, at most `top_n`), and Table A1 has every seat.
    """
    cells = result_cells(a)
    if cells is None or cells.empty:
        return None
    pct = ci_level(a)
    note_bits = []
    shown = cells
    wide = len(cells) > max_rows
    if wide and cells_cut(cells, max_rows):
        per_seat = int(cell_rows_per_seat(cells).max())
        n_seats = max(2, min(top_n, max_rows // max(per_seat, 1)))
        keep, total = F.pick_seats(cells, "output_tok_s", baseline=a.baseline, top_n=n_seats)
        if not keep:
            keep = order_seats(a, cells["seat"])[:n_seats]
            total = cells["seat"].nunique()
        shown = cells[cells["seat"].astype(str).isin(keep)]
        note_bits.append(f"This table shows {fmt.count(len(keep))} of {fmt.count(total)} seats (the baseline and the "
                         "highest aggregate throughput); Table A1 in the appendix lists every seat "
                         "and cell.")
    ex = excluded_figures(a)
    if ex:
        note_bits.append(f"{fmt.counted(len(ex), 'figure')} flagged as a prefix-cache hit "
                         f"{'is' if len(ex) == 1 else 'are'} excluded from this table (Section 5).")
    if wide:
        return cells_wide_table(cells_wide(a, shown, pct), "table", "results",
                                f"Measured results: estimates per seat and cell, the mean with its {pct} "
                                "confidence interval, number of passes and observations.", note_bits, pct)
    note_bits += [CELLS_NOTE, TWO_PASSES]
    df = cells_frame(a, shown, pct)
    return Table(df, f"Measured results: estimate per seat and cell with its {pct} confidence "
                 "interval, number of passes and observations.", kind="table", group="seat",
                 numeric=("Conc.", "Passes", "n", "Estimate"), note=" ".join(note_bits), small=True,
                 key="results", nowrap=("Metric", "Estimate", "Unit", "Stat."))


def cells_wide_table(df: pd.DataFrame, kind: str, key: str, caption: str, lead: Sequence[str],
                     pct: str) -> Table:
    """A wide table of cells (`cells_wide`) with its note; a column with one value moves to the note."""
    passes = []
    if (df["Passes"] == "2").any():
        passes.append("Cells with two passes show both values, not a mean.")
    if "Per pass, in order" in df.columns:
        passes.append("Cells with 3 or 4 passes list every pass in order.")
    df, same = constant_columns(df, ["Workload", "Passes"])
    stats = [c for c in df.columns if c in {stat_heading(s) for s in STAT_ORDER} or c == "Estimate"]
    marked = any(df[c].astype(str).str.endswith(RECOMPUTED_MARK).any() for c in stats)
    bits = [*lead, same, wide_note(pct, list(df.columns), marked=marked), abbreviations(df["Metric"]), CELLS_NOTE,
            *passes]
    note = " ".join(b for b in bits if b)
    return Table(df, caption, kind=kind, group="seat", numeric=("Conc.", "Passes", "n", *stats),
                 note=note, small=True, dense=True, key=key, nowrap=("Metric", "Stat."))


def all_cells_table(a, *, max_rows: int = MAX_BODY_ROWS) -> Table | None:
    """Table A1 (fleet scale only): one row per seat and cell, when Table 1 had to be cut.

    The statistics are columns (`cells_wide`); the long table, one row per statistic with
    every CI, is tables/cells.csv beside the report. A reference, not reading: the HTML has
    it collapsed and the PDF says where it is (pages of it made the appendix most of the
    report, issue 27).
    """
    cells = result_cells(a)
    if cells is None or not cells_cut(cells, max_rows):
        return None
    pct = ci_level(a)
    table = cells_wide_table(
        cells_wide(a, cells, pct), "appendix", "all-cells",
        f"Every seat and cell: the mean with its {pct} CI, number of passes and observations, and the "
        "percentiles (Table 1 shows the baseline and the top seats).", [], pct)
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
    if n <= MAX_BODY_ROWS:
        out = [para("Table 1 lists {} estimates. {} rest on a single pass, {} on two passes; {} "
                    "{} a confidence interval.", fmt.count(n), fmt.count(one), fmt.count(two), fmt.count(with_ci),
                    carry)]
    else:
        where = ("Table 1 lists them" if not cells_cut(cells, MAX_BODY_ROWS) else
                 "Table 1 lists them for the baseline and the top seats, Table A1 in the appendix for "
                 "every seat")
        out = [para("The analysis gives {} estimates in {} (a seat's workload, concurrency and metric); {}, "
                    "one row per cell with its statistics side by side. {} rest on a single pass, {} on two "
                    "passes; {} {} a confidence interval.", fmt.count(n),
                    fmt.counted(cell_rows_per_seat(cells).sum(), "cell"), where, fmt.count(one), fmt.count(two),
                    fmt.count(with_ci), carry)]
    ex = excluded_figures(a)
    if ex:
        out.append(para("{} excluded from the results: a prefix-cache hit is not a prefill "
                        "measurement (Section 5).", fmt.counted(len(ex), "figure") + (" is" if len(ex) == 1 else " are")))
    return prose(out)
