"""A metric against concurrency, one line per seat and series (workload, harness, probe, load), CI
bands where passes allow."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from benchreport import format as fmt
from benchreport.columns import higher_is_better
from benchreport.stats.common import parse_values

from .series import with_series
from .theme import LINESTYLES, WIDTH_IN, axis_label, log2_axis, record_drawn, record_styles, seat_styles, theme, wrap_id


#: the statistic a throughput line shows, the first a cell has: the mean, else the median
THROUGHPUT_STATISTICS = ("mean", "p50")
#: the statistic a TTFT line shows: p50 where measured, else the harness's mean, else a tail
TTFT_STATISTICS = ("p50", "mean", "p90", "p95", "p99", fmt.NOT_STATED)


def pick_seats(
    cells: pd.DataFrame, metric: str, *, baseline: str | None = None, top_n: int = 8, statistic: str | None = None
) -> tuple[list[str], int]:
    """The seats a figure of `metric` shows: the baseline plus the best others, up to top_n.

    "Best" is direction aware (highest throughput, lowest latency) on each seat's figure
    at its highest measured concurrency. Returns (seats, number of seats with data).
    """
    d = cells[cells["metric"] == metric]
    if statistic is not None:
        d = d[d["statistic"] == statistic]
    d = d[d["estimate"].map(fmt.finite)]
    seats = sorted(d["seat"].astype(str).unique())
    if len(seats) <= top_n:
        return seats, len(seats)
    conc = pd.to_numeric(d["concurrency"], errors="coerce").fillna(0)
    d = d.assign(_c=conc)
    top = d.sort_values("_c").groupby("seat")["estimate"].last()
    top = top.sort_values(ascending=not higher_is_better(metric))
    chosen = [s for s in top.index.astype(str) if s != baseline]
    keep = ([baseline] if baseline in seats else []) + chosen
    return sorted(keep[:top_n]), len(seats)


def select_series(
    cells: pd.DataFrame,
    metric: str,
    *,
    statistics: Sequence[str] = ("mean",),
    seats: Sequence[str] | None = None,
    baseline: str | None = None,
    top_n: int = 8,
) -> tuple[pd.DataFrame, int, int]:
    """The cells a concurrency plot of `metric` draws (with their `series`, figures.series), and the
    (seat, series) series it leaves out.

    Returns (cells drawn, series left out as single points of other days, series left out
    beyond `top_n`).

    A line needs two concurrency levels, so the plot holds every (seat, series) measured
    at two or more levels, plus the single-level series of seats measured on the same day
    as one of those (the same-day context a comparison needs) and the baseline's. At most
    `top_n` series: the baseline first, then each seat's first series before any seat's second
    (no seat with a curve is left out for another seat's further series), then the most levels,
    then the highest figure. Per seat and series the first of `statistics` it has is used.
    """
    d = cells[(cells["metric"] == metric) & cells["concurrency"].notna()].copy()
    d = d[d["estimate"].map(fmt.finite) & d["statistic"].isin(list(statistics))]
    if d.empty:
        return d, 0, 0
    d = with_series(d)
    d["concurrency"] = pd.to_numeric(d["concurrency"], errors="coerce")
    d = d[d["concurrency"].notna()]
    rank = {s: i for i, s in enumerate(statistics)}
    d["_rank"] = d["statistic"].map(rank)
    d = d[d["_rank"] == d.groupby(["seat", "series"])["_rank"].transform("min")]
    d["seat"] = d["seat"].astype(str)
    levels = d.groupby(["seat", "series"])["concurrency"].nunique()
    total = len(levels)
    if seats is not None:
        wanted = {str(s) for s in seats}
        keep = [k for k in levels.index if k[0] in wanted]
        eligible = len(keep)
    else:
        multi = [k for k, n in levels.items() if n >= 2]
        if not multi:
            return d.iloc[0:0], total, 0
        days = set()
        if "date" in d.columns:
            days = set(d.loc[d["seat"].isin({k[0] for k in multi}), "date"].astype(str))
        top = d.groupby(["seat", "series"])["estimate"].max()
        if not higher_is_better(metric):
            top = -top

        def best(k):
            return (-levels[k], -top[k], k)

        def order(k):
            return (k[0] != baseline, turn[k], best(k))

        cand = []
        for k, n in levels.items():
            same_day = "date" in d.columns and bool(
                set(d.loc[(d["seat"] == k[0]) & (d["series"] == k[1]), "date"].astype(str)) & days
            )
            if n >= 2 or k[0] == baseline or same_day:
                cand.append(k)
        eligible = len(cand)
        turn = {}  # a series' place among its seat's series, best first
        for k in sorted(cand, key=best):
            turn[k] = sum(1 for j in turn if j[0] == k[0])
        keep = sorted(cand, key=order)[:top_n]
    keyset = set(keep)
    d = d[[(s, w) in keyset for s, w in zip(d["seat"], d["series"])]]
    return d, total - eligible, eligible - len(keyset)


def metric_vs_concurrency(
    cells: pd.DataFrame,
    metric: str,
    *,
    statistics: Sequence[str] = ("mean",),
    seats: Sequence[str] | None = None,
    baseline: str | None = None,
    top_n: int = 8,
    height: float = 2.1,
    styles: dict | None = None,
) -> Figure | None:
    """One line per (seat, series) of `metric` against concurrency, CI band where one exists: a line
    never joins figures of different harnesses, probes or loads.

    Series are chosen by `select_series`. Each seat has its own colour and marker shape
    (`seat_styles`); a seat's series differ by line style. Filled markers carry a CI;
    hollow markers are cells without one (one or two passes): their per-pass values are
    drawn as small dots, never averaged away. The axis names the statistic drawn. Returns
    None when no series spans two concurrency levels. What was drawn is noted on the
    figure (`theme.drawn`) for its caption.
    """
    d, _, _ = select_series(cells, metric, statistics=statistics, seats=seats, baseline=baseline, top_n=top_n)
    if d.empty:
        return None
    styles = seat_styles(d["seat"], baseline, styles)
    stats = [s for s in statistics if s in set(d["statistic"])]
    several_workloads = d["series"].nunique() > 1
    two_columns = d.groupby(["seat", "series"]).ngroups > 2
    with theme():
        fig = Figure(figsize=(WIDTH_IN, height), layout="constrained")
        ax = fig.add_subplot()
        handles = []
        for (seat, workload), g in d.groupby(["seat", "series"], sort=True):
            own = sorted(d.loc[d["seat"] == seat, "series"].astype(str).unique())
            style = styles[seat]
            linestyle = LINESTYLES[(LINESTYLES.index(style.linestyle) + own.index(str(workload))) % len(LINESTYLES)]
            record_drawn(fig, *(f"lines_by_{part}" for part in _told_apart(d[d["seat"] == seat])))
            _draw_series(fig, ax, g.sort_values("concurrency"), style, linestyle)
            label = wrap_id(seat, 48)
            if several_workloads:
                label += f" · {fmt.short(workload)}"
            if len(stats) > 1:
                label += f" ({fmt.stat_words(g['statistic'].iloc[0])})"
            handles.append(
                Line2D([], [], color=style.color, marker=style.marker, linestyle=linestyle, markersize=4, label=label)
            )
        log2_axis(ax, d["concurrency"].astype(int))
        ax.set_xlabel("concurrent streams")
        ax.set_ylabel(axis_label(metric, stats))
        ax.set_ylim(bottom=0)
        # two columns of labels as long as a workload's (60 characters) fit the figure's width in
        # 5.6 points with shorter handles; in 8 points they ran past both edges
        fig.legend(
            handles=handles,
            loc="outside lower center",
            ncols=2 if two_columns else 1,
            handlelength=2.0 if two_columns else 2.4,
            columnspacing=1.0,
            fontsize=5.6 if two_columns else None,
        )
    fig.benchreport_cells = d  # what was drawn: `benchreport figure` names its filters from it
    return record_styles(fig, {s: styles[s] for s in d["seat"].unique()})


#: what may tell one seat's series apart (figures.series), as a caption names it
SERIES_PARTS = {"workload": ("workload", "condition"), "harness": ("harness",), "probe": ("probe",), "load": ("load",)}


def _told_apart(seat_cells: pd.DataFrame) -> list[str]:
    """What differs between one seat's series (`SERIES_PARTS`' names): the caption says what its
    line styles stand for, never a workload when the lines differ by harness only."""
    if seat_cells["series"].nunique() < 2:
        return []
    out = []
    for part, columns in SERIES_PARTS.items():
        have = [c for c in columns if c in seat_cells.columns]
        if have and len(seat_cells[have].astype(str).drop_duplicates()) > 1:
            out.append(part)
    return out


def _draw_series(fig, ax, g: pd.DataFrame, style, linestyle: str) -> None:
    """One (seat, workload) series: CI band and bars, the line, filled/hollow markers, pass dots."""
    color, mk = style.color, style.marker
    x = g["concurrency"].to_numpy(float)
    y = g["estimate"].to_numpy(float)
    has_ci = (g["ci_low"].map(fmt.finite) & g["ci_high"].map(fmt.finite)).to_numpy(bool)
    if has_ci.any():
        lo = np.where(has_ci, pd.to_numeric(g["ci_low"], errors="coerce"), y)
        hi = np.where(has_ci, pd.to_numeric(g["ci_high"], errors="coerce"), y)
        if has_ci.sum() > 1:
            ax.fill_between(x, lo, hi, color=color, alpha=0.16, linewidth=0)
            record_drawn(fig, "band")
        ax.vlines(x[has_ci], lo[has_ci], hi[has_ci], color=color, linewidth=0.9, alpha=0.8)
        record_drawn(fig, "ci")
    if len(x) > 1:
        ax.plot(x, y, color=color, linewidth=1.3, linestyle=linestyle, zorder=2)
    ax.scatter(x[has_ci], y[has_ci], color=color, marker=mk, s=22, zorder=3)
    ax.scatter(x[~has_ci], y[~has_ci], facecolor="white", edgecolor=color, marker=mk, s=24, linewidth=1.1, zorder=3)
    if (~has_ci).any():
        record_drawn(fig, "no_ci")
    if "values" in g.columns:
        for xi, vals in zip(x, g["values"].tolist()):
            pv = parse_values(vals)
            if len(pv) > 1:
                ax.scatter([xi] * len(pv), pv, color=color, s=7, zorder=4, linewidth=0)
                record_drawn(fig, "passes")


def throughput_vs_concurrency(
    cells: pd.DataFrame,
    *,
    metric: str = "output_tok_s",
    seats: Sequence[str] | None = None,
    baseline: str | None = None,
    top_n: int = 8,
) -> Figure | None:
    """Throughput against concurrency, one line per seat, CI bands where passes allow."""
    return metric_vs_concurrency(
        cells, metric, statistics=THROUGHPUT_STATISTICS, seats=seats, baseline=baseline, top_n=top_n
    )


def ttft_vs_concurrency(
    cells: pd.DataFrame, *, seats: Sequence[str] | None = None, baseline: str | None = None, top_n: int = 8
) -> Figure | None:
    """Time to first token against concurrency; p50 where measured, else the harness's mean."""
    return metric_vs_concurrency(
        cells, "ttft_ms", statistics=TTFT_STATISTICS, seats=seats, baseline=baseline, top_n=top_n
    )
