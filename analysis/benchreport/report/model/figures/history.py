"""A seat's history across dates: one small panel per seat and metric, verdicts marked by shape.

Drawn from the history table (benchreport.stats.history.HISTORY_COLUMNS), nothing re-estimated:
each cell of a panel (its workloads and concurrencies) is one line, shown relative to that
cell's median over the dates so a panel's cells share one axis. Regressions are downward
triangles, improvements upward triangles, and a change the next date confirmed as a new
level is a diamond with a dotted vertical line: shapes, so the marks read without colour.
Date axes use matplotlib's AutoDateLocator with the ConciseDateFormatter, which stay readable
from a week to years of nightly dates.
"""

from __future__ import annotations

import math
from typing import Sequence

import matplotlib.dates as mdates
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from benchreport import format as fmt
from benchreport.stats.history_summary import change_status

from .theme import PALETTE, WIDTH_IN, metric_label, record_drawn, theme, wrap_id

__all__ = ["history_panels", "panel_keys", "MARKS", "DECIDED"]

#: verdict -> (marker, colour, legend words); a confirmed level shift is drawn with its own shape
MARKS = {
    "regression": ("v", "#c0392b", "regression"),
    "improvement": ("^", "#229954", "improvement"),
    "level_shift": ("D", "#222222", "confirmed level shift"),
}
DECIDED = ("regression", "improvement")
_PANEL = ["seat", "metric", "statistic"]
#: a seat's panels without verdicts, in this order (the headline metrics first)
PANEL_METRICS = ("output_tok_s", "ttft_ms", "decode_tok_s_per_stream", "itl_ms", "e2e_latency_ms")


def _rank(value, order: tuple) -> int:
    return order.index(value) if value in order else len(order)


_CELL = ["harness", "probe", "workload", "concurrency"]
#: line styles of the cells of one panel that share a concurrency (and so a colour)
CELL_LINESTYLES = ("-", "--", ":", "-.")


def panel_keys(
    history: pd.DataFrame, *, seats: Sequence[str] | None = None, max_panels: int = 8
) -> tuple[list[tuple], int]:
    """The (seat, metric, statistic) panels to draw, at most `max_panels`, and how many there were,
    from a history table or a summary's panels (seat, metric, statistic, n_decided).

    Every seat's first panel before any seat's second (one panel per seat where they fit); seats
    with more decided verdicts first, and within a seat its panels with most verdicts first."""
    if history is None or not len(history):
        return [], 0
    h = history if seats is None else history[history["seat"].astype(str).isin([str(s) for s in seats])]
    if not len(h):
        return [], 0
    if "n_decided" in h:  # the panels of a history summary (benchreport.days.history)
        score = h.set_index(_PANEL)["n_decided"].sort_index()
    else:
        decided = h["verdict"].isin(DECIDED)
        score = h.assign(_d=decided).groupby(_PANEL, sort=True, dropna=False)["_d"].sum()
    by_seat: dict[str, list] = {}
    for k in sorted(
        score.index,
        key=lambda k: (-int(score[k]), _rank(k[1], PANEL_METRICS), _rank(k[2], ("mean",)), str(k[1]), str(k[2])),
    ):
        by_seat.setdefault(str(k[0]), []).append(k)
    seat_order = sorted(by_seat, key=lambda s: (-int(sum(score[k] for k in by_seat[s])), s))
    order = [by_seat[s][i] for i in range(max(map(len, by_seat.values()))) for s in seat_order if i < len(by_seat[s])]
    return order[:max_panels], len(order)


def _rel(rows: pd.DataFrame, median: float) -> pd.Series:
    return (rows["estimate"].astype(float) / median - 1.0) * 100


def _draw_panel(ax, sel: pd.DataFrame, color_of: dict, marked: set) -> None:
    """One panel: a line per cell relative to its median, decided dates marked by shape."""
    at_concurrency: dict = {}
    for _, cell in sel.groupby(_CELL, sort=True, dropna=False):
        cell = cell.sort_values("_date")
        median = float(np.median(cell["estimate"].astype(float)))
        c = cell["_c"].iloc[0]
        color = color_of.get(int(c), "#555555") if pd.notna(c) and np.isfinite(float(c)) else "#555555"
        # cells of one concurrency (other workloads, harnesses or loads) share its colour: told apart
        # by line style, the first solid
        k = at_concurrency[color] = at_concurrency.get(color, -1) + 1
        if k:
            marked.add("line_styles")
        ax.plot(
            cell["_date"],
            _rel(cell, median),
            color=color,
            linewidth=0.8,
            alpha=0.9,
            linestyle=CELL_LINESTYLES[k % len(CELL_LINESTYLES)],
        )
        for verdict in DECIDED:
            one = cell[(cell["verdict"] == verdict) & (cell["_status"] != "level_shift")]
            if len(one):
                m, mc, _ = MARKS[verdict]
                ax.scatter(
                    one["_date"],
                    _rel(one, median),
                    marker=m,
                    s=22,
                    facecolor=mc,
                    edgecolor="black",
                    linewidth=0.4,
                    zorder=4,
                )
                marked.add(verdict)
        shift = cell[cell["verdict"].isin(DECIDED) & (cell["_status"] == "level_shift")]
        for d in shift["_date"]:
            ax.axvline(d, color="#444444", linestyle=":", linewidth=0.8, zorder=1)
        if len(shift):
            m, mc, _ = MARKS["level_shift"]
            ax.scatter(
                shift["_date"],
                _rel(shift, median),
                marker=m,
                s=24,
                facecolor="white",
                edgecolor=mc,
                linewidth=1.0,
                zorder=5,
            )
            marked.add("level_shift")
    ax.set_ylabel("vs median (%)")
    ax.axhline(0, color="#999999", linewidth=0.6, zorder=0)


def _legend(fig, concs: list, color_of: dict, marked: set) -> None:
    handles = [
        Line2D(
            [], [], color=color_of[c], linewidth=1.2, label=f"{fmt.concurrency(c)} streams" if c != 1 else "1 stream"
        )
        for c in concs
    ]
    for k in ("regression", "improvement", "level_shift"):
        if k in marked:
            m, mc, words = MARKS[k]
            shift = k == "level_shift"
            handles.append(
                Line2D(
                    [],
                    [],
                    linestyle="",
                    marker=m,
                    markersize=5,
                    label=words,
                    markerfacecolor="white" if shift else mc,
                    markeredgecolor=mc if shift else "black",
                )
            )
    if handles:
        fig.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), 4), fontsize=7)


def _date_axes(axes, first, last) -> None:
    """Concise date ticks on every panel (shared x), from `first` to `last`: at most 5 on a panel a
    quarter of the page wide, unless the dates span two years or more (matplotlib finds no tick
    interval for that few: it warns and falls back), else 7."""
    narrow = axes.shape[1] >= 4 and (last - first) < pd.Timedelta(days=700)
    for ax in axes.flat:
        loc = mdates.AutoDateLocator(minticks=3, maxticks=5 if narrow else 7)
        ax.xaxis.set_major_locator(loc)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(loc))
    if first != last:
        axes.flat[0].set_xlim(first, last)


#: characters of a seat id on one line of a panel's title, by the figure's columns
_TITLE_CHARS = {1: 60, 2: 44, 4: 24}


def history_panels(
    history: pd.DataFrame,
    *,
    seats: Sequence[str] | None = None,
    max_panels: int = 8,
    keys: list[tuple] | None = None,
    dates: tuple[str, str] | None = None,
    concurrencies: Sequence[int] | None = None,
) -> Figure | None:
    """Small multiples of the history table: one panel per (seat, metric, statistic), a line per
    cell relative to its median, verdicts marked by shape. None when nothing has a history.

    `keys`: the panels (else `panel_keys` of `history`), `history` then holding at least their
    rows; `dates` (first, last) and `concurrencies`: of the whole table (else of `history`)."""
    if keys is None:
        keys, _ = panel_keys(history, seats=seats, max_panels=max_panels)
    if not keys:
        return None
    h = history.copy()
    # confirmed by the next date, or not (a summary's rows carry it: benchreport.days.history)
    h["_status"] = h["status"].to_numpy(dtype=object) if "status" in h else change_status(h)
    h["_date"] = pd.to_datetime(h["date"].astype(str))
    h["_c"] = pd.to_numeric(h["concurrency"], errors="coerce")
    n = len(keys)
    ncols = 1 if n == 1 else 2 if n <= 4 else 4  # eight panels in two rows: a third of a page, not two thirds
    nrows = math.ceil(n / ncols)
    concs = sorted({int(c) for c in (h["_c"].dropna() if concurrencies is None else concurrencies)})
    color_of = {c: PALETTE[i % len(PALETTE)] for i, c in enumerate(concs)}
    with theme():
        fig = Figure(
            figsize=(WIDTH_IN if ncols > 1 else WIDTH_IN * 0.6, (1.55 if ncols < 4 else 1.05) * nrows + 0.5),
            layout="constrained",
        )
        axes = fig.subplots(nrows, ncols, squeeze=False, sharex=True)
        marked: set[str] = set()
        for ax, key in zip(axes.flat, keys):
            _draw_panel(
                ax, h[(h["seat"] == key[0]) & (h["metric"] == key[1]) & (h["statistic"] == key[2])], color_of, marked
            )
            stat = "" if key[2] == "mean" else f" {key[2]}"
            ax.set_title(
                f"{wrap_id(key[0], _TITLE_CHARS[ncols])}\n{metric_label(key[1], unit=False)}{stat}",
                fontsize=7.5 if ncols < 4 else 6.5,
                loc="left",
            )
        for ax in axes[:, 1:].flat:
            ax.set_ylabel("")
        first, last = (h["_date"].min(), h["_date"].max()) if dates is None else map(pd.Timestamp, dates)
        _date_axes(axes, first, last)
        for ax in list(axes.flat)[n:]:
            ax.set_visible(False)
        _legend(fig, concs, color_of, marked)
    record_drawn(fig, *({"line_styles"} & marked))
    return fig
