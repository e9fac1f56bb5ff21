"""Section 2's figures: throughput, per-stream decode, single stream, TTFT, per-pass values, history."""

from __future__ import annotations

import pandas as pd

from benchreport import format as fmt
from benchreport.report.model import figures as F
from benchreport.stats.common import parse_values

from .blocks import FigureBlock, figure_block
from .cellview import result_cells
from .labels import report_styles
from .tables import TOP_SEATS


def _omitted_note(cells, metric: str, a, top_n: int, statistics) -> str:
    """What a concurrency figure leaves out (series beyond the top ones, single points of other days)."""
    d, other_day, over = F.select_series(cells, metric, statistics=statistics, baseline=a.baseline, top_n=top_n)
    if d.empty:
        return ""
    bits = []
    if over > 0:
        bits.append(
            f"the figure shows {fmt.counted(d.groupby(['seat', 'series']).ngroups, 'series', 'series')} "
            f"({'the baseline, then ' if a.baseline else ''}each seat's best at the highest concurrency "
            f"before any seat's second); {fmt.count(over)} more "
            f"{'is' if over == 1 else 'are'} in the tables"
        )
    if other_day > 0:
        bits.append(
            f"{fmt.counted(other_day, 'series', 'series')} measured at a single concurrency level on "
            "days without a curve to compare with are not drawn"
        )
    return (" " + "; ".join(bits)[0].upper() + "; ".join(bits)[1:] + ".") if bits else ""


def marks_text(fig, *, what: str = "markers") -> str:
    """What the marks of a figure mean, for its caption: only the kinds it drew (`figures.drawn`),
    said briefly (three figures in a row carry it: issue 27)."""
    kinds = F.drawn(fig)
    bits = []
    if "ci" in kinds:
        bits.append(f"filled {what} with bars" + (" and bands" if "band" in kinds else "") + ": a confidence interval")
    if "no_ci" in kinds:
        bits.append(f"hollow {what}: too few passes for one")
    if "passes" in kinds:
        bits.append("small dots: single passes")
    if "range" in kinds:
        bits.append("a grey bar: the min-max range the run reported")
    return (" " + "; ".join(bits)[0].upper() + "; ".join(bits)[1:] + ".") if bits else ""


def _seats_cue(fig) -> str:
    """How the seats (and a seat's workloads) are told apart in a concurrency figure."""
    told = [part for part in F.SERIES_PARTS if f"lines_by_{part}" in F.drawn(fig)]
    lines = f"; line style, the seat's {' and '.join(told)}" if told else ""
    return f" Colour and marker shape: the seat{lines}."


def throughput_figure(
    a, *, top_n: int = TOP_SEATS, metric: str | None = None, statistic: str | None = None
) -> FigureBlock | None:
    """Aggregate throughput (or `metric`) against concurrency, per seat, with CI bands; the mean,
    else the median (or `statistic`)."""
    return _concurrency_figure(
        a,
        metric or "output_tok_s",
        (statistic,) if statistic else F.THROUGHPUT_STATISTICS,
        top_n,
        "Aggregate throughput (all streams together) against concurrency, per seat."
        if metric in (None, "output_tok_s")
        else None,
        "throughput",
    )


def per_stream_figure(
    a, *, top_n: int = TOP_SEATS, metric: str | None = None, statistic: str | None = None
) -> FigureBlock | None:
    """Per-stream decode rate (or `metric`) against concurrency."""
    return _concurrency_figure(
        a,
        metric or "decode_tok_s_per_stream",
        (statistic,) if statistic else F.THROUGHPUT_STATISTICS,
        top_n,
        "Per-stream decode rate against concurrency, per seat."
        if metric in (None, "decode_tok_s_per_stream")
        else None,
        "per-stream",
    )


def _concurrency_figure(a, metric: str, stats, top_n: int, lead: str | None, key: str) -> FigureBlock | None:
    """`metric` against concurrency, one line per seat and series, and its caption."""
    cells = result_cells(a)
    fig = F.metric_vs_concurrency(
        cells, metric, statistics=stats, baseline=a.baseline, top_n=top_n, styles=report_styles(a)
    )
    lead = lead or f"{fmt.metric_words(metric).capitalize()} against concurrency, per seat."
    return figure_block(
        fig, lead + _seats_cue(fig) + marks_text(fig) + _omitted_note(cells, metric, a, top_n, stats), key
    )


def single_stream_figure(
    a, *, top_n: int = 30, min_rows: int = 3, metric: str | None = None, statistic: str | None = None
) -> FigureBlock | None:
    """Per-stream decode (or `metric`) at one stream, every seat and workload (the field note's table)."""
    cells = result_cells(a)
    metric = metric or "decode_tok_s_per_stream"
    stats = (statistic,) if statistic else ("mean", "p50")
    if cells is None or cells.empty:
        return None
    conc = pd.to_numeric(cells["concurrency"], errors="coerce")
    d = cells[(cells["metric"] == metric) & (conc == 1) & cells["statistic"].isin(list(stats))]
    n = d.groupby(["seat", "workload"]).ngroups if len(d) else 0
    if n < min_rows:
        return None
    fig = F.cell_dotplot(
        cells, metric, concurrency=1, statistics=stats, baseline=a.baseline, top_n=top_n, styles=report_styles(a)
    )
    more = f" The top {fmt.count(top_n)} of {fmt.count(n)} are shown; Table 1 has all." if n > top_n else ""
    return figure_block(
        fig,
        "Single-stream decode rate of every seat and workload, best first, each seat in its "
        "own colour and marker shape." + marks_text(fig) + " Workloads are different probes: "
        "compare rows only within one workload." + more,
        "single-stream",
    )


def ttft_figure(
    a, *, top_n: int = TOP_SEATS, metric: str | None = None, statistic: str | None = None
) -> FigureBlock | None:
    """Time to first token (or `metric`) against concurrency: p50 where measured, else the
    harness's mean (or `statistic`)."""
    if metric not in (None, "ttft_ms"):
        return _concurrency_figure(a, metric, (statistic,) if statistic else F.TTFT_STATISTICS, top_n, None, "ttft")
    cells = result_cells(a)
    stats_wanted = (statistic,) if statistic else F.TTFT_STATISTICS
    fig = F.metric_vs_concurrency(
        cells, "ttft_ms", statistics=stats_wanted, baseline=a.baseline, top_n=top_n, styles=report_styles(a)
    )
    if fig is None:
        return None
    ttft = cells[cells["metric"] == "ttft_ms"]
    stats = sorted(set((ttft if statistic is None else ttft[ttft["statistic"] == statistic])["statistic"].astype(str)))
    extra = (
        (
            " Seats report TTFT in different forms ("
            + ", ".join(fmt.stat_words(s) for s in stats)
            + "); the legend names each, and they are not directly comparable."
        )
        if len(stats) > 1
        else ""
    )
    return figure_block(
        fig,
        "Time to first token against concurrency (lower is better)."
        + _seats_cue(fig)
        + marks_text(fig)
        + extra
        + _omitted_note(cells, "ttft_ms", a, top_n, stats_wanted),
        "ttft",
    )


def per_pass_figure(a, *, max_panels: int = 6) -> FigureBlock | None:
    """Per-pass values in pass order for every cell with two or more passes: at most `max_panels`
    (two rows of three: a third row pushed the exam tables to the next page); tables/cells.csv has
    every pass of every cell."""
    cells = result_cells(a)
    fig = F.per_pass_values(cells, max_panels=max_panels, baseline=a.baseline, styles=report_styles(a))
    n = 0
    if cells is not None and "values" in cells.columns:
        n = sum(len(parse_values(v)) >= 2 for v in cells["values"])  # an empty column sums to ''
    more = (
        f" The {fmt.count(max_panels)} cells with the largest spread of {fmt.count(n)} are shown; "
        "tables/cells.csv has every pass of every cell."
        if n > max_panels
        else ""
    )
    return figure_block(
        fig,
        "Values of each pass in the order measured, for every cell measured more than "
        "once: a rise from pass to pass is warm-up drift, a swing is instability. Each "
        "panel has its own scale; max/min is the ratio of the extreme passes." + more,
        "per-pass",
    )


def history_figure(a) -> FigureBlock | None:
    """A seat's figures across dates, when a seat was measured on more than one day."""
    fig = F.seat_history(a.tables.measurements, styles=report_styles(a))
    drawn, total = getattr(fig, "benchreport_panels", (0, 0))
    more = f" The first {fmt.count(drawn)} of {fmt.count(total)} are shown." if total > drawn else ""
    return figure_block(
        fig,
        "History: seats measured on more than one date, the median of each day's "
        "passes (line) and the individual passes (dots), one panel per seat and cell." + more,
        "history",
    )
