"""The appendix's views of load and latency, as readers of GuideLLM's and AIPerf's own output know
them: throughput against latency with the Pareto front, per-request latency ECDFs, the lengths
sent, a pass's timeline, failed requests against load, and request-rate sweeps on a rate axis.

Each function takes long-form rows the section layer has already picked (cells, requests with
their run's harness and condition, passes with their offered rate) and `styles`, the report's one
style per seat (`seat_styles` over every seat of the report), so a seat keeps its colour and
marker in every figure; series of one seat are told apart in the legend by harness and condition
in words, and by line style. Each returns None when its rows hold nothing it can draw (no empty
figure). A panel holds at most `MAX_SERIES` series; more become further panels (small
multiples). An axis whose values span more than `LOG_SPAN` is drawn on a log scale, said in its
label.
"""

from __future__ import annotations

import textwrap
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

from benchreport import format as fmt

from .theme import (
    LINESTYLES,
    WIDTH_IN,
    Style,
    axis_label,
    record_drawn,
    record_styles,
    theme,
)

__all__ = [
    "MAX_SERIES",
    "LOG_SPAN",
    "pareto_front",
    "throughput_latency",
    "latency_ecdfs",
    "lengths_sent",
    "pass_timelines",
    "failures_by_load",
    "rate_sweep",
]

#: series one panel holds before the rest go to another panel (a reader follows about four)
MAX_SERIES = 4
#: largest/smallest value on an axis past which it is drawn on a log scale (one series would
#: flatten the others on a linear one)
LOG_SPAN = 20.0
#: characters of a legend entry or row label per line (wrapped, never cut)
LABEL_WIDTH = 70

_SERIES = ("seat", "harness", "condition")


def series_label(seat, harness, condition, *, width: int = LABEL_WIDTH) -> str:
    """'seat · harness · condition' wrapped at `width` characters (a legend entry, never cut)."""
    bits = [fmt.text(seat), fmt.text(harness), fmt.text(condition)]
    return textwrap.fill(" · ".join(b for b in bits if b), width=width, break_long_words=False, break_on_hyphens=False)


def pareto_front(x: Sequence[float], y: Sequence[float]) -> np.ndarray:
    """Which points are on the Pareto front of low `x` (latency) and high `y` (throughput): no
    other point has both a lower-or-equal x and a higher-or-equal y, one of them strictly."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    out = np.ones(x.size, bool)
    for i in range(x.size):
        better = (x <= x[i]) & (y >= y[i]) & ((x < x[i]) | (y > y[i]))
        out[i] = not better.any()
    return out


def _log_if_wide(ax, values, axis: str) -> bool:
    """A log scale on `axis` when the positive `values` span more than LOG_SPAN; True if so. Ticks
    at 1, 2 and 5 of each power of ten, written as plain numbers (mathtext is off in the theme)."""
    if isinstance(values, np.ndarray) and values.dtype.kind == "f":  # a request table's column: at once
        v = values[np.isfinite(values) & (values > 0)]
    else:
        v = np.asarray([x for x in values if fmt.finite(x) and x > 0], float)
    if v.size < 2 or v.max() / v.min() <= LOG_SPAN:
        return False
    which = ax.xaxis if axis == "x" else ax.yaxis
    (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
    which.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    which.set_major_formatter(FuncFormatter(lambda x, _pos: f"{x:g}"))
    which.set_minor_locator(NullLocator())
    return True


def _scaled(label: str, log: bool) -> str:
    return f"{label}, log scale" if log else label


def _linestyles(series: pd.DataFrame) -> dict[tuple, str]:
    """A line style per series, counted within each seat (a seat's second series dashed)."""
    out, seen = {}, {}
    for key in series.itertuples(index=False):
        n = seen.get(key[0], 0)
        seen[key[0]] = n + 1
        out[tuple(key)] = LINESTYLES[n % len(LINESTYLES)]
    return out


def _chunks(keys: list, size: int) -> list[list]:
    return [keys[i : i + size] for i in range(0, len(keys), size)]


def _legend(where, handles, *, ncols: int = 1) -> None:
    """A legend below `where` (a figure or subfigure), its entries wrapped, never cut."""
    where.legend(handles=handles, loc="outside lower center", ncols=ncols, handlelength=2.4, columnspacing=1.2)


def _handle(style: Style, linestyle: str, label: str) -> Line2D:
    return Line2D([], [], color=style.color, marker=style.marker, linestyle=linestyle, markersize=4, label=label)


# --- 1 throughput against latency ------------------------------------------------------------
def _legend_rows(fig, rows_handles: list[list], ncols: int, panel_h: float) -> list:
    """Rows of `ncols` panels, each row followed by its own legend (its entries wrapped, never
    cut) in a strip as tall as its lines; returns each row's axes."""
    lines = [sum(h.get_label().count("\n") + 1 for h in hs) for hs in rows_handles]
    ratios = [x for n in lines for x in (panel_h, 0.15 * n + 0.1)]
    fig.set_size_inches(WIDTH_IN, sum(ratios) + 0.2)
    grid = fig.add_gridspec(2 * len(rows_handles), ncols, height_ratios=ratios)
    out = []
    for i, hs in enumerate(rows_handles):
        out.append([fig.add_subplot(grid[2 * i, j]) for j in range(ncols)])
        strip = fig.add_subplot(grid[2 * i + 1, :])
        strip.axis("off")
        strip.legend(handles=hs, loc="center", ncols=1, handlelength=2.4, frameon=False)
    return out


def throughput_latency(
    points: pd.DataFrame, styles: Mapping[str, Style], *, max_rows: int = 3, row_height: float = 2.0
) -> Figure | None:
    """Aggregate throughput against a latency tail, one line per (seat, harness, condition) through
    its concurrency levels (each point labelled with its number of streams), the series' Pareto
    front ringed. `points`: seat, harness, condition, concurrency, latency_metric, latency (x),
    throughput (y). One column per latency metric; at most MAX_SERIES series a row (each row with
    its legend), `max_rows` rows. None without a series of two or more levels."""
    if points is None or points.empty:
        return None
    levels = points.groupby(list(_SERIES))["concurrency"].nunique()
    keys = sorted(k for k, n in levels.items() if n >= 2)
    if not keys:
        return None
    metrics = [m for m in ("itl_ms", "ttft_ms") if m in set(points["latency_metric"])]
    rows = _chunks(keys, MAX_SERIES)[:max_rows]
    line = _linestyles(pd.DataFrame(keys, columns=list(_SERIES)))
    with theme():
        fig = Figure(figsize=(WIDTH_IN, 4), layout="constrained")
        handles = [[_handle(styles[k[0]], line[k], series_label(*k)) for k in row] for row in rows]
        for axes, row in zip(_legend_rows(fig, handles, len(metrics), row_height), rows):
            for j, (ax, metric) in enumerate(zip(axes, metrics)):
                _throughput_panel(fig, ax, points, row, metric, styles, line)
                if j:
                    ax.set_ylabel("")
    fig.benchreport_series = (sum(len(r) for r in rows), len(keys))
    return record_styles(fig, {k[0]: styles[k[0]] for r in rows for k in r})


def _throughput_panel(fig, ax, points, row, metric: str, styles, line) -> None:
    d = points[points["latency_metric"] == metric]
    xs, ys = [], []
    for key in row:
        g = d[(d["seat"] == key[0]) & (d["harness"] == key[1]) & (d["condition"] == key[2])]
        g = g.sort_values("concurrency")
        if g.empty:
            continue
        st = styles[key[0]]
        x, y = g["latency"].to_numpy(float), g["throughput"].to_numpy(float)
        ax.plot(x, y, color=st.color, linestyle=line[key], marker=st.marker, markersize=4.5, zorder=3)
        front = pareto_front(x, y)
        ax.scatter(x[front], y[front], s=70, facecolor="none", edgecolor="black", linewidth=0.8, zorder=4)
        record_drawn(fig, "pareto")
        for xi, yi, c in zip(x, y, g["concurrency"]):
            ax.annotate(fmt.concurrency(c), (xi, yi), xytext=(3, 3), textcoords="offset points", fontsize=6.5)
        xs += list(x)
        ys += list(y)
    logx = _log_if_wide(ax, xs, "x")
    logy = _log_if_wide(ax, ys, "y")
    ax.set_xlabel(_scaled(axis_label(metric, ["p95"]), logx))
    ax.set_ylabel(_scaled(axis_label("output_tok_s", ["mean"]), logy))
    if not logy:
        ax.set_ylim(bottom=0)
    ax.margins(x=0.12, y=0.12)


# --- 2 per-request latency ECDFs -------------------------------------------------------------
def latency_ecdfs(
    requests: pd.DataFrame, styles: Mapping[str, Style], *, fields=("ttft_ms", "itl_ms"), max_rows: int = 4
) -> Figure | None:
    """The share of requests at or below each latency, one row per (seat, harness, condition), one
    column per field of `fields` the requests have, one line per concurrency (line style, named in
    the legend right of the row). Failed requests are left out. None when no request has a latency."""
    r = requests[requests["error"].isna()] if "error" in requests else requests
    fields = [f for f in fields if f in r and r[f].notna().any()]
    if not fields:
        return None
    r = r[r[fields].notna().any(axis=1)]
    keys = _most_levels(r)
    rows = keys[:max_rows]
    rows_of = r.groupby(list(_SERIES)).indices  # each series' rows, in order (a mask per series cost 0.1 s each)
    with theme():
        fig = Figure(figsize=(WIDTH_IN, 1.9 * len(rows) + 0.3), layout="constrained")
        subs = np.atleast_1d(fig.subfigures(len(rows), 1))
        for sub, key in zip(subs, rows):
            g = r.iloc[rows_of[key]]
            axes = np.atleast_1d(sub.subplots(1, len(fields), squeeze=False)[0])
            handles = {}
            for ax, field in zip(axes, fields):
                handles.update(_ecdf_panel(ax, g, field, styles[key[0]]))
                if ax is not axes[0]:
                    ax.set_ylabel("")
            sub.suptitle(series_label(*key, width=110), fontsize=7.5, x=0.01, ha="left")
            sub.legend(handles=list(handles.values()), loc="outside right upper", handlelength=2.4, fontsize=6.5)
    fig.benchreport_series = (len(rows), len(keys))
    return record_styles(fig, {k[0]: styles[k[0]] for k in rows})


def _most_levels(r: pd.DataFrame) -> list[tuple]:
    """The (seat, harness, condition) series of `r`, those with the most concurrency levels first,
    then the most requests, then by name."""
    g = r.groupby(list(_SERIES))
    levels, sizes = g["concurrency"].nunique(), g.size()
    return sorted(sizes.index, key=lambda k: (-levels[k], -sizes[k], k))


def _ecdf_panel(ax, g: pd.DataFrame, field: str, style: Style) -> dict:
    handles = {}
    levels = sorted(g["concurrency"].dropna().astype(int).unique()) or [None]
    values = []
    for i, c in enumerate(levels):
        part = g if c is None else g[g["concurrency"] == c]
        v = np.sort(pd.to_numeric(part[field], errors="coerce").dropna().to_numpy(float))
        if v.size == 0:
            continue
        ls = LINESTYLES[i % len(LINESTYLES)]
        y = np.arange(1, v.size + 1) / v.size
        ax.step(np.r_[v[0], v], np.r_[0, y], where="post", color=style.color, linestyle=ls, linewidth=1.3)
        label = (
            f"{fmt.counted(c, 'stream')} ({fmt.counted(v.size, 'request')})" if c else fmt.counted(v.size, "request")
        )
        handles[label] = Line2D([], [], color=style.color, linestyle=ls, label=label)
        values.append(v)
    name = "ITL, mean of each request" if field == "itl_ms" else axis_label(field, per="per request")
    if not values:
        ax.text(0.5, 0.5, f"{name}: not recorded", transform=ax.transAxes, ha="center", va="center", fontsize=7)
        ax.axis("off")
        return handles
    log = _log_if_wide(ax, np.concatenate(values), "x")
    name = "ITL, mean of each request" if field == "itl_ms" else axis_label(field, per="per request")
    ax.set_xlabel(_scaled(f"{name} (ms)" if field == "itl_ms" else name, log))
    ax.set_ylabel("share of requests ≤ x")
    ax.set_ylim(0, 1.02)
    return handles


# --- 3 the lengths sent ----------------------------------------------------------------------
def lengths_sent(requests: pd.DataFrame, styles: Mapping[str, Style], *, max_rows: int = 14) -> Figure | None:
    """The prompt and output tokens of each request, one box per (seat, harness, condition) (the
    box the middle half, the seat's marker the median, whiskers the range), in the seat's colour,
    each row naming how many requests it counts. None when no request counts its tokens."""
    fields = [f for f in ("prompt_tokens", "output_tokens") if f in requests and requests[f].notna().any()]
    if not fields:
        return None
    r = requests[requests[fields].notna().any(axis=1)]
    keys = sorted(r.groupby(list(_SERIES)).size().index)
    rows = keys[:max_rows]
    sizes = r.groupby(list(_SERIES)).size()
    rows_of = r.groupby(list(_SERIES)).indices  # each series' rows, in order
    labels = [f"{series_label(*k, width=40)}\n({fmt.counted(sizes[k], 'request')})" for k in rows]
    height = max(1.6, 0.1 + sum(0.16 * (lab.count("\n") + 1) + 0.08 for lab in labels))
    with theme():
        fig = Figure(figsize=(WIDTH_IN, height), layout="constrained")
        axes = np.atleast_1d(fig.subplots(1, len(fields), sharey=True, squeeze=False)[0])
        for ax, field in zip(axes, fields):
            stats = []
            for k in rows:
                g = r.iloc[rows_of[k]]
                v = pd.to_numeric(g[field], errors="coerce").dropna().to_numpy(float)
                stats.append(_box(v))
            _boxes(ax, stats, [styles[k[0]] for k in rows])
            vals = [s["whishi"] for s in stats if s] + [s["whislo"] for s in stats if s]
            log = _log_if_wide(ax, vals, "x")
            ax.set_xlabel(_scaled(f"{'prompt' if field == 'prompt_tokens' else 'output'} tokens of each request", log))
            ax.grid(True, axis="x")
            ax.grid(False, axis="y")
        axes[0].set_yticks(range(len(rows)), labels=labels, fontsize=6.5)
        axes[0].invert_yaxis()
    fig.benchreport_series = (len(rows), len(keys))
    return record_styles(fig, {k[0]: styles[k[0]] for k in rows})


def _box(v: np.ndarray) -> dict | None:
    if v.size == 0:
        return None
    q1, med, q3 = np.quantile(v, [0.25, 0.5, 0.75])
    return {"med": med, "q1": q1, "q3": q3, "whislo": v.min(), "whishi": v.max(), "fliers": [], "n": v.size}


def _boxes(ax, stats: list, row_styles: list) -> None:
    for i, (s, st) in enumerate(zip(stats, row_styles)):
        if s is None:
            continue
        props = {"color": st.color, "linewidth": 1.0, "linestyle": st.linestyle}
        ax.bxp(
            [s],
            positions=[i],
            orientation="horizontal",
            widths=0.55,
            patch_artist=True,
            boxprops={"facecolor": st.color, "alpha": 0.35, "edgecolor": st.color},
            medianprops={"color": st.color, "linewidth": 1.0},
            whiskerprops=props,
            capprops=props,
            manage_ticks=False,
        )
        ax.plot([s["med"]], [i], marker=st.marker, color=st.color, markeredgecolor="black", markersize=5, zorder=4)


# --- 4 a pass's timeline ---------------------------------------------------------------------
def pass_timelines(
    requests: pd.DataFrame, styles: Mapping[str, Style], *, field: str = "ttft_ms", max_panels: int = 6
) -> Figure | None:
    """Each request's `field` against when it was sent within one pass (seconds from the pass's
    first request), one panel per (seat, harness, condition, concurrency, pass) of the rows handed
    in, in their order, at most `max_panels`; failed requests as crosses on the time axis. None
    when no request has a start time and a value."""
    r = requests[requests["start_ms"].notna()]
    if r.empty or not r[field].notna().any():
        return None
    cells = list(dict.fromkeys(zip(r["seat"], r["harness"], r["condition"], r["concurrency"], r["pass"])))
    panels = cells[:max_panels]
    ncols = 1 if len(panels) == 1 else 2
    nrows = -(-len(panels) // ncols)
    with theme():
        fig = Figure(figsize=(WIDTH_IN, 2.1 * nrows + 0.3), layout="constrained")
        axes = list(fig.subplots(nrows, ncols, squeeze=False).flat)
        failed_any = False
        for ax, cell in zip(axes, panels):
            m = (
                (r["seat"] == cell[0])
                & (r["harness"] == cell[1])
                & (r["condition"] == cell[2])
                & (r["pass"] == cell[4])
            )
            g = r[m & (r["concurrency"] == cell[3])] if fmt.finite(cell[3]) else r[m]
            failed_any |= _timeline_panel(ax, g, field, styles[cell[0]])
            at = f"{fmt.counted(cell[3], 'stream')}, " if fmt.finite(cell[3]) else ""
            ax.set_title(
                f"{series_label(*cell[:3], width=48)}\n{at}pass {fmt.count(cell[4])}", fontsize=6.5, loc="left"
            )
        for ax in axes[len(panels) :]:
            ax.set_visible(False)
        if failed_any:
            cross = Line2D(
                [], [], color="black", marker="x", linestyle="none", label="a failed request, when it was sent"
            )
            _legend(fig, [cross])
    fig.benchreport_series = (len(panels), len(cells))
    return record_styles(fig, {c[0]: styles[c[0]] for c in panels})


def _timeline_panel(ax, g: pd.DataFrame, field: str, style: Style) -> bool:
    """One pass's requests by start time; returns whether any failed."""
    g = g.sort_values("start_ms")
    t = (g["start_ms"].to_numpy(float) - g["start_ms"].min()) / 1000.0
    ok = g["error"].isna().to_numpy(bool) if "error" in g else np.ones(len(g), bool)
    v = pd.to_numeric(g[field], errors="coerce").to_numpy(float)
    keep = ok & np.isfinite(v)
    ax.plot(t[keep], v[keep], color=style.color, linewidth=0.6, alpha=0.5)
    ax.scatter(t[keep], v[keep], color=style.color, marker=style.marker, s=14, zorder=3, linewidth=0)
    if (~ok).any():
        ax.scatter(
            t[~ok],
            np.zeros((~ok).sum()),
            marker="x",
            color="black",
            s=16,
            zorder=4,
            clip_on=False,
            transform=ax.get_xaxis_transform(),
        )
    log = _log_if_wide(ax, v[keep], "y")
    ax.set_xlabel("seconds since the pass's first request")
    ax.set_ylabel(_scaled(axis_label(field, per="per request"), log))
    if not log:
        ax.set_ylim(bottom=0)
    return bool((~ok).any())


# --- 5 failed requests against load ----------------------------------------------------------
def failures_by_load(counts: pd.DataFrame, styles: Mapping[str, Style], *, max_rows: int = 16) -> Figure | None:
    """The share of requests that failed at each concurrency of every (seat, harness, condition)
    that had a failure: one bar per concurrency, grouped by series, in the seat's colour, labelled
    'failed of sent'. `counts`: seat, harness, condition, concurrency, n_requests, n_failed. None
    when no request failed."""
    d = counts[(counts["n_requests"].fillna(0) > 0) & counts["concurrency"].notna()].copy()
    bad = d.groupby(list(_SERIES))["n_failed"].sum()
    keys = sorted(k for k, n in bad.items() if n > 0)
    if not keys:
        return None
    d = d[d.set_index(list(_SERIES)).index.isin(keys)].sort_values([*_SERIES, "concurrency"]).head(max_rows)
    labels = [
        f"{series_label(s, h, c, width=40)}\n{fmt.counted(n, 'stream')}"
        for s, h, c, n in zip(d["seat"], d["harness"], d["condition"], d["concurrency"])
    ]
    share = 100.0 * d["n_failed"].to_numpy(float) / d["n_requests"].to_numpy(float)
    height = 0.4 + sum(0.15 * (lab.count("\n") + 1) + 0.1 for lab in labels)
    with theme():
        fig = Figure(figsize=(WIDTH_IN, max(1.4, height)), layout="constrained")
        ax = fig.add_subplot()
        y = np.arange(len(d))
        colors = [styles[s].color for s in d["seat"]]
        ax.barh(y, share, color=colors, height=0.6, alpha=0.6)
        for yi, x, f, n, s in zip(y, share, d["n_failed"], d["n_requests"], d["seat"]):
            ax.plot([x], [yi], marker=styles[s].marker, color=styles[s].color, markeredgecolor="black", markersize=5)
            ax.annotate(
                f"{fmt.count(f)} of {fmt.count(n)}",
                (x, yi),
                xytext=(6, 0),
                textcoords="offset points",
                va="center",
                fontsize=6.5,
            )
        ax.set_yticks(y, labels=labels, fontsize=6.5)
        ax.invert_yaxis()
        ax.set_xlim(0, 118)
        ax.set_xticks([0, 25, 50, 75, 100])
        ax.set_xlabel("requests failed (% of those sent)")
        ax.grid(True, axis="x")
        ax.grid(False, axis="y")
    fig.benchreport_series = (len(d), len(keys))
    return record_styles(fig, {s: styles[s] for s in d["seat"]})


# --- 6 rate sweeps ---------------------------------------------------------------------------
def rate_sweep(
    passes: pd.DataFrame, styles: Mapping[str, Style], *, panels: Sequence[tuple[str, str]]
) -> Figure | None:
    """Request-rate sweeps on a request-rate axis: for each (metric, statistic) of `panels` the
    data hold, one line per (seat, harness, condition) through the median of its passes at each
    offered rate, each pass a small dot. `passes`: seat, harness, condition, rate, metric,
    statistic, value. None without a series measured at two or more rates."""
    d = passes[passes["rate"].map(fmt.finite) & passes["value"].map(fmt.finite)]
    if d.empty:
        return None
    rates = d.groupby(list(_SERIES))["rate"].nunique()
    keys = sorted(k for k, n in rates.items() if n >= 2)
    have = [p for p in panels if ((d["metric"] == p[0]) & (d["statistic"] == p[1])).any()]
    if not keys or not have:
        return None
    line = _linestyles(pd.DataFrame(keys, columns=list(_SERIES)))
    ncols = min(len(have), 2)
    nrows = -(-len(have) // ncols)
    with theme():
        fig = Figure(figsize=(WIDTH_IN, 2.2 * nrows + 0.5), layout="constrained")
        axes = fig.subplots(nrows, ncols, squeeze=False).flat
        for ax, (metric, stat) in zip(axes, have):
            _rate_panel(fig, ax, d[(d["metric"] == metric) & (d["statistic"] == stat)], keys, styles, line)
            ax.set_ylabel(
                axis_label(metric, [stat])
                if not ax.get_yscale() == "log"
                else _scaled(axis_label(metric, [stat]), True)
            )
            ax.set_xlabel("offered request rate (req/s)")
        for ax in list(axes)[len(have) :]:
            ax.set_visible(False)
        _legend(fig, [_handle(styles[k[0]], line[k], series_label(*k)) for k in keys])
    return record_styles(fig, {k[0]: styles[k[0]] for k in keys})


def _rate_panel(fig, ax, d: pd.DataFrame, keys, styles, line) -> None:
    values = []
    for key in keys:
        g = d[(d["seat"] == key[0]) & (d["harness"] == key[1]) & (d["condition"] == key[2])]
        if g.empty:
            continue
        st = styles[key[0]]
        med = g.groupby("rate")["value"].median().sort_index()
        ax.plot(
            med.index.to_numpy(float),
            med.to_numpy(float),
            color=st.color,
            linestyle=line[key],
            marker=st.marker,
            markersize=4.5,
        )
        if g.groupby("rate").size().max() > 1:
            ax.scatter(g["rate"].astype(float), g["value"].astype(float), color=st.color, s=7, linewidth=0, zorder=4)
            record_drawn(fig, "passes")
        values += list(g["value"].astype(float))
    if not _log_if_wide(ax, values, "y"):
        ax.set_ylim(bottom=0)
    ax.margins(x=0.08)
