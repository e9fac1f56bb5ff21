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
"""
from __future__ import annotations

import contextlib
import math
import os
import textwrap
from pathlib import Path
from typing import Iterable, Sequence

import matplotlib
import matplotlib.dates as mdates
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from analysis.columns import METRIC_WORDS, METRICS, higher_is_better
from analysis import format as fmt
from analysis.stats._common import parse_values

__all__ = [
    "DPI", "WIDTH_IN", "theme", "save_figure", "seat_colors", "pick_seats", "metric_label",
    "metric_vs_concurrency", "throughput_vs_concurrency", "ttft_vs_concurrency",
    "select_series", "cell_dotplot", "per_pass_values", "exam_forest", "ratio_forest", "seat_history", "request_distribution",
]

#: raster resolution of every PNG (fixed, so files compare byte for byte across builds)
DPI = 200
#: text width of the PDF page (A4, 2 cm margins), in inches
WIDTH_IN = 6.5
#: figure formats save_figure understands
FORMATS = ("png", "svg", "pdf")

_PALETTE = ["#1b4f72", "#c0392b", "#229954", "#b9770e", "#7d3c98", "#117a65",
            "#a04000", "#2e4053", "#d4ac0d", "#5d6d7e"]

#: one vocabulary for metrics across text, tables and figures
METRIC_LABELS = METRIC_WORDS


def metric_label(metric: str, *, unit: bool = True) -> str:
    """Human name of a metric, with its unit: 'aggregate throughput (tok/s)'."""
    name = METRIC_LABELS.get(metric, str(metric))
    if unit and metric in METRICS:
        return f"{name} ({METRICS[metric][0]})"
    return name


def _rc() -> dict:
    import seaborn as sns

    rc = {}
    rc.update(sns.axes_style("ticks"))
    rc.update(sns.plotting_context("paper"))
    rc.update({
        # deterministic vector output: fixed hash salt for SVG ids, text as paths
        "svg.hashsalt": "benchreport",
        "svg.fonttype": "path",
        "pdf.fonttype": 42,
        # data strings (seat ids, workloads) are text, never TeX/mathtext
        "text.parse_math": False,
        "text.usetex": False,
        "font.family": "serif",
        "font.serif": ["DejaVu Serif", "Bitstream Vera Serif", "serif"],
        "font.size": 8.5,
        "axes.titlesize": 8.5,
        "axes.labelsize": 8.5,
        "xtick.labelsize": 7.5,
        "ytick.labelsize": 7.5,
        "legend.fontsize": 7.5,
        "legend.title_fontsize": 7.5,
        "legend.frameon": False,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.grid": True,
        "axes.grid.axis": "y",
        "grid.color": "#dddddd",
        "grid.linewidth": 0.6,
        "lines.linewidth": 1.4,
        "lines.markersize": 4.5,
        "figure.dpi": 100,
        "savefig.dpi": DPI,
        "savefig.bbox": "tight",
        "savefig.pad_inches": 0.05,
        "figure.facecolor": "white",
        "savefig.facecolor": "white",
        "axes.prop_cycle": matplotlib.cycler(color=_PALETTE),
    })
    return rc


@contextlib.contextmanager
def theme():
    """The report's one theme (seaborn 'ticks' + 'paper', serif), as an rc context."""
    with matplotlib.rc_context(_rc()):
        yield


def save_figure(fig: Figure, folder: str | os.PathLike, stem: str,
                formats: Sequence[str] = ("png", "svg")) -> dict[str, Path]:
    """Write `fig` as FOLDER/STEM.png, .svg (and .pdf when asked); returns {format: path}.

    `stem` must be one of our own names (``figure-01``), never a data string. PNGs have a
    fixed dpi; SVG and PDF carry no date and a fixed hash salt, so the same figure gives
    the same bytes on every build.
    """
    if not stem or any(c in stem for c in "/\\\x00") or stem.startswith("."):
        raise ValueError(f"`stem` must be a plain file name, got {stem!r}")
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ValueError(f"`formats` must be among {', '.join(FORMATS)}; got {', '.join(map(str, unknown))}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    metadata = {"png": {"Software": None}, "svg": {"Date": None, "Creator": None},
                "pdf": {"CreationDate": None, "ModDate": None, "Creator": None, "Producer": None}}
    written = {}
    with theme():
        # constrained layout settles over a few draws; settle it first so every save of the
        # same figure, in any order, gives the same bytes
        if fig.get_layout_engine() is not None:
            for _ in range(3):
                fig.draw_without_rendering()
            fig.set_layout_engine("none")  # freeze the settled positions
        for fmt in formats:
            path = folder / f"{stem}.{fmt}"
            fig.savefig(path, format=fmt, dpi=DPI, metadata=metadata[fmt])
            written[fmt] = path
    return written


# --- helpers -------------------------------------------------------------------------

def seat_colors(seats: Iterable[str], baseline: str | None = None) -> dict[str, str]:
    """A stable colour per seat: the baseline always first (dark blue), then sorted order."""
    ordered = sorted({str(s) for s in seats})
    if baseline in ordered:
        ordered.remove(baseline)
        ordered.insert(0, baseline)
    return {s: _PALETTE[i % len(_PALETTE)] for i, s in enumerate(ordered)}


def _wrap(text: str, width: int = 34) -> str:
    """Wrap a long id at hyphens/dots for titles and legends (ids have no spaces)."""
    text = str(text)
    if len(text) <= width:
        return text
    spaced = text.replace("-", "- ").replace("_", "_ ")
    lines = textwrap.wrap(spaced, width=width, break_long_words=True, break_on_hyphens=False)
    return "\n".join(line.replace("- ", "-").replace("_ ", "_").rstrip() for line in lines)






def pick_seats(cells: pd.DataFrame, metric: str, *, baseline: str | None = None,
               top_n: int = 8, statistic: str | None = None) -> tuple[list[str], int]:
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


def _log2_axis(ax, levels: Iterable[int]) -> None:
    levels = sorted({int(c) for c in levels})
    if not levels:
        return
    if len(levels) > 1:
        ax.set_xscale("log", base=2)
        lo, hi = levels[0], levels[-1]
        ax.set_xlim(lo / 1.35, hi * 1.35)
    else:
        ax.set_xlim(levels[0] - 1, levels[0] + 1)
    ax.set_xticks(levels)
    ax.set_xticklabels([fmt.concurrency(c) for c in levels])
    ax.minorticks_off()


# --- figures ---------------------------------------------------------------------------

def select_series(cells: pd.DataFrame, metric: str, *, statistics: Sequence[str] = ("mean",),
                  seats: Sequence[str] | None = None, baseline: str | None = None,
                  top_n: int = 8) -> tuple[pd.DataFrame, int, int]:
    """The cells a concurrency plot of `metric` draws, and the (seat, workload) series it leaves out.

    Returns (cells drawn, series left out as single points of other days, series left out
    beyond `top_n`).

    A line needs two concurrency levels, so the plot holds every (seat, workload) measured
    at two or more levels, plus the single-level series of seats measured on the same day
    as one of those (the same-day context a comparison needs) and the baseline's. At most
    `top_n` series: the baseline first, then the most levels, then the highest figure.
    Per seat and workload the first of `statistics` it has is used.
    """
    d = cells[(cells["metric"] == metric) & cells["concurrency"].notna()].copy()
    d = d[d["estimate"].map(fmt.finite) & d["statistic"].isin(list(statistics))]
    if d.empty:
        return d, 0, 0
    d["concurrency"] = pd.to_numeric(d["concurrency"], errors="coerce")
    d = d[d["concurrency"].notna()]
    rank = {s: i for i, s in enumerate(statistics)}
    d["_rank"] = d["statistic"].map(rank)
    d = d[d["_rank"] == d.groupby(["seat", "workload"])["_rank"].transform("min")]
    d["seat"] = d["seat"].astype(str)
    levels = d.groupby(["seat", "workload"])["concurrency"].nunique()
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
        top = d.groupby(["seat", "workload"])["estimate"].max()
        if not higher_is_better(metric):
            top = -top

        def order(k):
            return (k[0] != baseline, -levels[k], -top[k], k)

        cand = []
        for k, n in levels.items():
            same_day = "date" in d.columns and bool(
                set(d.loc[(d["seat"] == k[0]) & (d["workload"] == k[1]), "date"].astype(str)) & days)
            if n >= 2 or k[0] == baseline or same_day:
                cand.append(k)
        eligible = len(cand)
        keep = sorted(cand, key=order)[:top_n]
    keyset = set(keep)
    d = d[[(s, w) in keyset for s, w in zip(d["seat"], d["workload"])]]
    return d, total - eligible, eligible - len(keyset)


def metric_vs_concurrency(cells: pd.DataFrame, metric: str, *, statistics: Sequence[str] = ("mean",),
                          seats: Sequence[str] | None = None, baseline: str | None = None,
                          top_n: int = 8, height: float = 2.9) -> Figure | None:
    """One line per (seat, workload) of `metric` against concurrency, CI band where one exists.

    Series are chosen by `select_series`. Filled markers carry a CI; hollow markers are
    cells without one (one or two passes): their per-pass values are drawn as small dots,
    never averaged away. Returns None when no series spans two concurrency levels.
    """
    d, _, _ = select_series(cells, metric, statistics=statistics, seats=seats, baseline=baseline, top_n=top_n)
    if d.empty:
        return None
    colors = seat_colors(d["seat"], baseline)
    several_stats = d["statistic"].nunique() > 1
    several_workloads = d["workload"].nunique() > 1
    markers = ["o", "s", "^", "D", "v", "P", "X", "*"]
    with theme():
        fig = Figure(figsize=(WIDTH_IN, height), layout="constrained")
        ax = fig.add_subplot()
        handles = []
        for (seat, workload), g in d.groupby(["seat", "workload"], sort=True):
            g = g.sort_values("concurrency")
            own = sorted(d.loc[d["seat"] == seat, "workload"].astype(str).unique())
            mk = markers[own.index(str(workload)) % len(markers)]
            color = colors[seat]
            x = g["concurrency"].to_numpy(float)
            y = g["estimate"].to_numpy(float)
            has_ci = (g["ci_low"].map(fmt.finite) & g["ci_high"].map(fmt.finite)).to_numpy(bool)
            if has_ci.any():
                lo = np.where(has_ci, pd.to_numeric(g["ci_low"], errors="coerce"), y)
                hi = np.where(has_ci, pd.to_numeric(g["ci_high"], errors="coerce"), y)
                if has_ci.sum() > 1:
                    ax.fill_between(x, lo, hi, color=color, alpha=0.16, linewidth=0)
                ax.vlines(x[has_ci], lo[has_ci], hi[has_ci], color=color, linewidth=0.9, alpha=0.8)
            if len(x) > 1:
                ax.plot(x, y, color=color, linewidth=1.3, zorder=2)
            ax.scatter(x[has_ci], y[has_ci], color=color, marker=mk, s=22, zorder=3)
            ax.scatter(x[~has_ci], y[~has_ci], facecolor="white", edgecolor=color, marker=mk,
                       s=24, linewidth=1.1, zorder=3)
            if "values" in g.columns:
                for xi, vals in zip(x, g["values"].tolist()):
                    pv = parse_values(vals)
                    if len(pv) > 1:
                        ax.scatter([xi] * len(pv), pv, color=color, s=7, zorder=4, linewidth=0)
            label = _wrap(seat, 48)
            if several_workloads:
                label += f" · {workload}"
            if several_stats:
                label += f" ({g['statistic'].iloc[0]})"
            handles.append(Line2D([], [], color=color, marker=mk, markersize=4, label=label))
        _log2_axis(ax, d["concurrency"].astype(int))
        ax.set_xlabel("concurrent streams")
        ax.set_ylabel(metric_label(metric))
        ax.set_ylim(bottom=0)
        fig.legend(handles=handles, loc="outside lower center", ncols=1 if len(handles) <= 2 else 2,
                   handlelength=1.8, columnspacing=1.2)
    return fig


def cell_dotplot(cells: pd.DataFrame, metric: str, *, concurrency: int | None = 1,
                 statistics: Sequence[str] = ("mean", "p50"), baseline: str | None = None,
                 top_n: int = 30) -> Figure | None:
    """Every (seat, workload) figure of `metric` at one concurrency, as a dot plot.

    Point: the estimate (filled with its CI bar where one exists, hollow without);
    small dots: per-pass values; a grey bar: the min-max range where the run gave one.
    Sorted best first (direction aware); at most `top_n` rows.
    """
    d = cells[cells["metric"] == metric].copy()
    conc = pd.to_numeric(d["concurrency"], errors="coerce")
    d = d[conc.isna()] if concurrency is None else d[conc == concurrency]
    d = d[d["estimate"].map(fmt.finite)]
    if d.empty:
        return None
    d["seat"] = d["seat"].astype(str)
    rows = []
    for (seat, workload), g in d.groupby(["seat", "workload"], sort=True):
        point = None
        for st in statistics:
            sel = g[g["statistic"] == st]
            if len(sel):
                point = sel.iloc[0]
                break
        lo = g.loc[g["statistic"] == "min", "estimate"]
        hi = g.loc[g["statistic"] == "max", "estimate"]
        rng = (float(lo.iloc[0]), float(hi.iloc[0])) if len(lo) and len(hi) else None
        if point is None and rng is None:
            continue
        y = float(point["estimate"]) if point is not None else (rng[0] + rng[1]) / 2
        rows.append({"seat": seat, "workload": str(workload), "y": y, "point": point, "range": rng})
    if not rows:
        return None
    hib = higher_is_better(metric)
    rows.sort(key=lambda r: (r["workload"], -r["y"] if hib else r["y"], r["seat"]))
    rows = rows[:top_n]
    # one block per workload (different probes are not comparable), best first inside it
    positions, headers, y = [], [], 0.0
    last = None
    for r in rows:
        if r["workload"] != last:
            if last is not None:
                y += 0.5
            headers.append((y, r["workload"]))
            y += 1.0
            last = r["workload"]
        positions.append(y)
        y += 1.0
    total = y
    colors = seat_colors([r["seat"] for r in rows], baseline)
    with theme():
        fig = Figure(figsize=(WIDTH_IN, 0.22 * total + 0.75), layout="constrained")
        ax = fig.add_subplot()
        ys = [total - p for p in positions]
        xs_all = []
        for yi, r in zip(ys, rows):
            color = colors[r["seat"]]
            if r["range"] is not None:
                ax.hlines(yi, r["range"][0], r["range"][1], color="#9a9a9a", linewidth=3.0, alpha=0.8, zorder=1)
                xs_all += list(r["range"])
            p = r["point"]
            right = [r["range"][1]] if r["range"] is not None else []
            if p is not None:
                xs_all.append(r["y"])
                right.append(r["y"])
                ci = fmt.finite(p.get("ci_low")) and fmt.finite(p.get("ci_high"))
                if ci:
                    ax.hlines(yi, float(p["ci_low"]), float(p["ci_high"]), color=color, linewidth=1.5, zorder=2)
                    ax.scatter([r["y"]], [yi], color=color, s=22, zorder=3)
                    xs_all += [float(p["ci_low"]), float(p["ci_high"])]
                    right.append(float(p["ci_high"]))
                else:
                    ax.scatter([r["y"]], [yi], facecolor="white", edgecolor=color, s=24, linewidth=1.1, zorder=3)
                pv = parse_values(p.get("values")) if "values" in p.index else []
                if len(pv) > 1:
                    ax.scatter(pv, [yi] * len(pv), color=color, s=7, zorder=4, linewidth=0)
                    xs_all += pv
                    right += pv
            label = fmt.num(r["y"]) if p is not None else ""
            if r["range"] is not None:
                rng = fmt.span(r["range"][0], r["range"][1])
                label = f"{label} (range {rng})" if label else f"range {rng}"
            ax.annotate(label, (max(right), yi), textcoords="offset points", xytext=(6, 0),
                        va="center", fontsize=6.3, color="#333333")
        ax.set_yticks(ys)
        ax.set_yticklabels([_wrap(r["seat"], 52) for r in rows], fontsize=6.5)
        for lab, r in zip(ax.get_yticklabels(), rows):
            if r["seat"] == baseline:
                lab.set_fontweight("bold")
        for (hy, workload) in headers:
            ax.annotate(workload, xy=(0, total - hy), xycoords=("axes fraction", "data"), xytext=(-5, 0),
                        textcoords="offset points", ha="right", va="center", fontsize=7,
                        fontweight="bold", fontstyle="italic")
            if hy > 0:
                ax.axhline(total - hy + 0.75, color="#cccccc", linewidth=0.6)
        ax.set_ylim(min(ys) - 0.7, total - headers[0][0] + 0.6)
        lo, hi = min(xs_all), max(xs_all)
        pad = (hi - lo) * 0.12 or abs(hi) * 0.1 or 1.0
        ax.set_xlim(lo - pad, hi + pad * 2.4)
        ax.grid(axis="x", color="#dddddd")
        ax.grid(axis="y", visible=False)
        where = f" at {fmt.streams(concurrency)}" if concurrency else ""
        ax.set_xlabel(metric_label(metric) + where)
    return fig


def throughput_vs_concurrency(cells: pd.DataFrame, *, metric: str = "output_tok_s",
                              seats: Sequence[str] | None = None, baseline: str | None = None,
                              top_n: int = 8) -> Figure | None:
    """Throughput against concurrency, one line per seat, CI bands where passes allow."""
    return metric_vs_concurrency(cells, metric, statistics=("mean", "p50"), seats=seats,
                                 baseline=baseline, top_n=top_n)


def ttft_vs_concurrency(cells: pd.DataFrame, *, seats: Sequence[str] | None = None,
                        baseline: str | None = None, top_n: int = 8) -> Figure | None:
    """Time to first token against concurrency; p50 where measured, else the harness's mean."""
    return metric_vs_concurrency(cells, "ttft_ms", statistics=("p50", "mean", "p90", "p95", "p99"),
                                 seats=seats, baseline=baseline, top_n=top_n)


def _cell_title(row, wrap: int = 30) -> str:
    conc = row.get("concurrency")
    c = f", c={fmt.concurrency(conc)}" if fmt.finite(conc) else ""
    stat = row.get("statistic")
    st = "" if fmt.missing(stat) or stat == "mean" else f" {stat}"
    return f"{_wrap(row['seat'], wrap)}\n{row['workload']}{c}: {metric_label(row['metric'], unit=False)}{st}"


def per_pass_values(cells: pd.DataFrame, *, max_panels: int = 9, min_passes: int = 2,
                    baseline: str | None = None) -> Figure | None:
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
    colors = seat_colors([str(r["seat"]) for _, r, _ in rows], baseline)
    with theme():
        fig = Figure(figsize=(WIDTH_IN if ncols > 1 else WIDTH_IN * 0.55, 2.05 * nrows + 0.2),
                     layout="constrained")
        axes = fig.subplots(nrows, ncols, squeeze=False)
        for ax, (spread, r, v) in zip(axes.flat, rows):
            x = np.arange(1, len(v) + 1)
            color = colors[str(r["seat"])]
            ax.plot(x, v, color=color, marker="o", zorder=3)
            for xi, yi in zip(x, v):
                ax.annotate(fmt.num(yi), (xi, yi), textcoords="offset points", xytext=(0, 5),
                            ha="center", fontsize=7)
            lo, hi = min(v), max(v)
            pad = (hi - lo) * 0.35 or abs(hi) * 0.05 or 1.0
            ax.set_ylim(lo - pad * 0.6, hi + pad)
            ax.set_xlim(0.6, len(v) + 0.4)
            ax.set_xticks(x)
            ax.set_xlabel("pass")
            unit = METRICS.get(str(r["metric"]), ("",))[0]
            ax.set_ylabel(unit)
            ax.set_title(_cell_title(r, wrap), fontsize=7.5, loc="left")
            ax.text(0.98, 0.04, f"max/min {fmt.ratio(spread)}", transform=ax.transAxes, ha="right",
                    va="bottom", fontsize=6.5, color="#555")
        for ax in list(axes.flat)[n:]:
            ax.set_visible(False)
    return fig


def exam_forest(exam_deltas: pd.DataFrame, *, max_rows: int = 30) -> Figure | None:
    """Exam deltas (candidate − baseline, percentage points) with their CIs, as a forest plot.

    The p-value of the exact test is written at the right of each row; a dashed line marks
    no difference.
    """
    if exam_deltas is None or exam_deltas.empty:
        return None
    d = exam_deltas[exam_deltas["diff"].map(fmt.finite)].head(max_rows)
    if d.empty:
        return None
    labels = []
    for _, r in d.iterrows():
        dim = fmt.text(r.get("dimension"))
        dim = f" / {dim}" if dim else ""
        labels.append(f"{r['benchmark']}{dim}\n{_wrap(r['candidate'], 40)}\nvs {_wrap(r['baseline'], 40)}")
    n = len(d)
    with theme():
        fig = Figure(figsize=(WIDTH_IN, 0.62 * n + 0.9), layout="constrained")
        ax = fig.add_subplot()
        y = np.arange(n)[::-1]
        diff = d["diff"].astype(float).to_numpy() * 100
        lo = pd.to_numeric(d["diff_ci_low"], errors="coerce").to_numpy(float) * 100
        hi = pd.to_numeric(d["diff_ci_high"], errors="coerce").to_numpy(float) * 100
        ok = np.isfinite(lo) & np.isfinite(hi)
        ax.hlines(y[ok], lo[ok], hi[ok], color=_PALETTE[0], linewidth=1.6)
        ax.scatter(diff, y, color=_PALETTE[0], zorder=3, s=26, marker="D")
        _forest_axes(ax, y, labels, ref=0, xlabel="difference in share correct, candidate − baseline "
                                                   "(percentage points)")
        for yi, (_, r) in zip(y, d.iterrows()):
            p = r.get("p_value")
            txt = f"p = {fmt.pval(p)}" if fmt.finite(p) else ""
            ax.annotate(txt, (1.01, yi), xycoords=("axes fraction", "data"), va="center", fontsize=7)
    return fig


def _forest_axes(ax, y, labels, *, ref: float, xlabel: str) -> None:
    """Shared look of the forest plots: a dashed line at `ref`, one labelled row per y."""
    ax.axvline(ref, color="#777", linestyle="--", linewidth=0.9)
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=6.8)
    ax.set_xlabel(xlabel)
    ax.grid(axis="x", color="#dddddd")
    ax.grid(axis="y", visible=False)
    ax.set_ylim(-0.7, len(y) - 0.3)


def ratio_forest(comparisons: pd.DataFrame, *, max_rows: int = 24) -> Figure | None:
    """Candidate / baseline ratios with CIs, one row per comparison; 1 marks parity.

    Rows without a CI are hollow; labels say metric, concurrency and candidate.
    """
    if comparisons is None or comparisons.empty:
        return None
    d = comparisons[comparisons["ratio"].map(fmt.finite)].head(max_rows)
    if d.empty:
        return None
    n = len(d)
    verdict_color = {"better": "#229954", "worse": "#c0392b", "within_noise": "#7f8c8d",
                     "insufficient_data": "#7f8c8d"}
    with theme():
        fig = Figure(figsize=(WIDTH_IN, 0.42 * n + 0.9), layout="constrained")
        ax = fig.add_subplot()
        y = np.arange(n)[::-1]
        labels = []
        for yi, (_, r) in zip(y, d.iterrows()):
            c = r.get("concurrency")
            cs = f" c={fmt.concurrency(c)}" if fmt.finite(c) else ""
            labels.append(f"{_wrap(r['candidate'], 40)}\n{metric_label(r['metric'], unit=False)}{cs}")
            color = verdict_color.get(str(r.get("verdict")), "#444")
            ratio = float(r["ratio"])
            if fmt.finite(r.get("ci_low")) and fmt.finite(r.get("ci_high")):
                ax.hlines(yi, float(r["ci_low"]), float(r["ci_high"]), color=color, linewidth=1.6)
                ax.scatter([ratio], [yi], color=color, s=24, zorder=3)
            else:
                ax.scatter([ratio], [yi], facecolor="white", edgecolor=color, s=26, zorder=3, linewidth=1.2)
            ax.annotate(str(r.get("verdict", "")).replace("_", " "), (1.01, yi),
                        xycoords=("axes fraction", "data"), va="center", fontsize=7, color=color)
        _forest_axes(ax, y, labels, ref=1, xlabel="candidate / baseline (ratio; > 1 means a larger figure)")
    return fig


def seat_history(measurements: pd.DataFrame, *, seats: Sequence[str] | None = None,
                 max_panels: int = 6) -> Figure | None:
    """A seat's figures across dates (median of the day's passes, each pass as a dot).

    Only cells measured on two or more dates are drawn; one panel per (seat, cell).
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
    colors = seat_colors([p[0] for p in panels])
    with theme():
        fig = Figure(figsize=(WIDTH_IN, 2.2 * nrows + 0.2), layout="constrained")
        axes = fig.subplots(nrows, ncols, squeeze=False)
        for ax, p in zip(axes.flat, panels):
            sel = m.set_index(k2).loc[[p]].reset_index()
            day = sel.groupby("date")["value"].median().sort_index()
            x = pd.to_datetime(day.index)
            color = colors[str(p[0])]
            ax.plot(x, day.to_numpy(float), color=color, marker="o", zorder=3)
            ax.scatter(pd.to_datetime(sel["date"]), sel["value"].astype(float), color=color, s=8, alpha=0.6)
            row = {"seat": p[0], "workload": p[1], "concurrency": None if p[2] < 0 else p[2],
                   "metric": p[3], "statistic": p[4]}
            ax.set_title(_cell_title(row), fontsize=7.5, loc="left")
            ax.set_ylabel(METRICS.get(str(p[3]), ("",))[0])
            ax.set_xticks(x)
            ax.xaxis.set_major_formatter(mdates.DateFormatter("%Y-%m-%d"))
            ax.tick_params(axis="x", labelrotation=30)
        for ax in list(axes.flat)[n:]:
            ax.set_visible(False)
    return fig


def request_distribution(requests: pd.DataFrame, field: str = "ttft_ms", *,
                         seat: str | None = None, workload: str | None = None,
                         concurrency: int | None = None) -> Figure | None:
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
        a1.hist(v, bins=bins, color=_PALETTE[0], alpha=0.85)
        a1.set_xlabel(field)
        a1.set_ylabel("requests")
        xs = np.sort(v)
        a2.step(xs, np.arange(1, xs.size + 1) / xs.size, where="post", color=_PALETTE[0])
        a2.set_xlabel(field)
        a2.set_ylabel("share of requests ≤ x")
        for q, ls in ((0.5, "--"), (0.95, ":")):
            a2.axvline(np.quantile(xs, q), color="#777", linestyle=ls, linewidth=0.9)
        fig.suptitle(f"n = {fmt.counted(v.size, 'request')}", fontsize=8)
    return fig
