"""Pass by pass and day by day: per-pass values of a cell, a seat's history, one cell's requests."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from benchreport import format as fmt
from benchreport.stats.common import parse_values

from .theme import PALETTE, WIDTH_IN, axis_label, cell_title, date_axis, record_drawn, record_styles, seat_styles, theme


def per_pass_values(
    cells: pd.DataFrame,
    *,
    max_panels: int = 6,
    min_passes: int = 2,
    baseline: str | None = None,
    styles: dict | None = None,
) -> Figure | None:
    """Per-pass values of every cell with 2+ passes, in pass order: drift made visible.

    One small panel per cell (own y scale, values written on the points), the cells with
    the largest max/min spread first; at most `max_panels`.
    """
    if "values" not in cells.columns:
        return None
    rows = []
    for _, r in cells.iterrows():
        v = parse_values(r["values"])
        if len(v) >= min_passes:
            lo = min(v)
            spread = (max(v) / lo) if lo > 0 else float("inf")
            rows.append((spread, r, v))
    if not rows:
        return None
    rows.sort(key=lambda t: (-t[0], str(t[1]["seat"]), str(t[1]["workload"]), str(t[1]["metric"])))
    rows = rows[:max_panels]
    n = len(rows)
    ncols = min(3, n) if n != 4 else 2
    nrows = math.ceil(n / ncols)
    wrap = {1: 60, 2: 44, 3: 30}[ncols]
    styles = seat_styles([str(r["seat"]) for _, r, _ in rows], baseline, styles)
    with theme():
        fig = Figure(figsize=(WIDTH_IN if ncols > 1 else WIDTH_IN * 0.55, 1.65 * nrows + 0.2), layout="constrained")
        axes = fig.subplots(nrows, ncols, squeeze=False)
        for ax, (spread, r, v) in zip(axes.flat, rows):
            x = np.arange(1, len(v) + 1)
            style = styles[str(r["seat"])]
            ax.plot(x, v, color=style.color, marker=style.marker, zorder=3)
            for xi, yi in zip(x, v):
                ax.annotate(fmt.num(yi), (xi, yi), textcoords="offset points", xytext=(0, 5), ha="center", fontsize=7)
            lo, hi = min(v), max(v)
            pad = (hi - lo) * 0.35 or abs(hi) * 0.05 or 1.0
            ax.set_ylim(lo - pad * 0.6, hi + pad)
            ax.set_xlim(0.6, len(v) + 0.4)
            ax.set_xticks(x)
            ax.set_xlabel("pass")
            ax.set_ylabel(axis_label(str(r["metric"]), [r.get("statistic")]))
            ax.set_title(cell_title(r, wrap), fontsize=7.5, loc="left")
            ax.text(
                0.98,
                0.04,
                f"max/min {fmt.ratio(spread)}",
                transform=ax.transAxes,
                ha="right",
                va="bottom",
                fontsize=6.5,
                color="#555",
            )
        for ax in list(axes.flat)[n:]:
            ax.set_visible(False)
    return record_styles(fig, {str(r["seat"]): styles[str(r["seat"])] for _, r, _ in rows})


def seat_history(
    measurements: pd.DataFrame,
    *,
    seats: Sequence[str] | None = None,
    max_panels: int = 6,
    styles: dict | None = None,
) -> Figure | None:
    """A seat's figures across dates (median of the day's passes, each pass as a dot).

    Only cells measured on two or more dates are drawn; one panel per (seat, cell). Dates
    are ticked by matplotlib's AutoDateLocator and ConciseDateFormatter (`theme.date_axis`),
    so hundreds of dates stay readable.
    """
    if measurements is None or measurements.empty:
        return None
    m = measurements.copy()
    if seats is not None:
        m = m[m["seat"].astype(str).isin([str(s) for s in seats])]
    m["_c"] = pd.to_numeric(m["concurrency"], errors="coerce").fillna(-1)
    k2 = ["seat", "workload", "_c", "metric", "statistic"]
    dates = m.groupby(k2, dropna=False)["date"].nunique()
    keep = dates[dates >= 2].index
    if len(keep) == 0:
        return None
    panels = list(keep)[:max_panels]
    n = len(panels)
    ncols = min(2, n)
    nrows = math.ceil(n / ncols)
    styles = seat_styles([p[0] for p in panels], registry=styles)
    with theme():
        fig = Figure(figsize=(WIDTH_IN, 2.2 * nrows + 0.2), layout="constrained")
        axes = fig.subplots(nrows, ncols, squeeze=False)
        for ax, p in zip(axes.flat, panels):
            sel = m.set_index(k2).loc[[p]].reset_index()
            day = sel.groupby("date")["value"].median().sort_index()
            x = pd.to_datetime(day.index)
            style = styles[str(p[0])]
            ax.plot(
                x,
                day.to_numpy(float),
                color=style.color,
                marker=style.marker,
                markersize=4.5 if len(x) <= 40 else 2,
                zorder=3,
            )
            ax.scatter(
                pd.to_datetime(sel["date"]), sel["value"].astype(float), color=style.color, s=8, alpha=0.6, linewidth=0
            )
            row = {
                "seat": p[0],
                "workload": p[1],
                "concurrency": None if p[2] < 0 else p[2],
                "metric": p[3],
                "statistic": p[4],
            }
            ax.set_title(cell_title(row), fontsize=7.5, loc="left")
            ax.set_ylabel(axis_label(str(p[3]), [p[4]]))
            date_axis(ax)
        for ax in list(axes.flat)[n:]:
            ax.set_visible(False)
    record_drawn(fig, "passes")
    fig.benchreport_panels = (n, len(keep))  # drawn, and how many there were, for the caption
    return record_styles(fig, {str(p[0]): styles[str(p[0])] for p in panels})


def request_distribution(
    requests: pd.DataFrame,
    field: str = "ttft_ms",
    *,
    seat: str | None = None,
    workload: str | None = None,
    concurrency: int | None = None,
) -> Figure | None:
    """Per-request distribution of one field for one cell: histogram and ECDF side by side."""
    r = requests
    if seat is not None:
        r = r[r["seat"] == seat]
    if workload is not None:
        r = r[r["workload"] == workload]
    if concurrency is not None:
        r = r[pd.to_numeric(r["concurrency"], errors="coerce") == concurrency]
    v = pd.to_numeric(r[field], errors="coerce").dropna().to_numpy(float)
    if v.size == 0:
        return None
    with theme():
        fig = Figure(figsize=(WIDTH_IN, 2.6), layout="constrained")
        a1, a2 = fig.subplots(1, 2)
        bins = min(40, max(5, int(np.sqrt(v.size)) + 1))
        a1.hist(v, bins=bins, color=PALETTE[0], alpha=0.85)
        label = axis_label(field, per="per request")
        a1.set_xlabel(label)
        a1.set_ylabel("requests")
        xs = np.sort(v)
        a2.step(xs, np.arange(1, xs.size + 1) / xs.size, where="post", color=PALETTE[0])
        a2.set_xlabel(label)
        a2.set_ylabel("share of requests ≤ x")
        for q, ls, name in ((0.5, "--", "p50"), (0.95, ":", "p95")):
            a2.axvline(np.quantile(xs, q), color="#777", linestyle=ls, linewidth=0.9, label=name)
        a2.legend(loc="lower right", handlelength=2.0)
        fig.suptitle(f"n = {fmt.counted(v.size, 'request')}", fontsize=8)
    return record_styles(fig, {"requests": PALETTE[0]})
