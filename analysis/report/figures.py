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
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from analysis.columns import METRICS, higher_is_better

__all__ = [
    "DPI", "WIDTH_IN", "theme", "save_figure", "seat_colors", "pick_seats", "metric_label",
    "metric_vs_concurrency", "throughput_vs_concurrency", "ttft_vs_concurrency",
    "per_pass_values", "exam_forest", "ratio_forest", "seat_history", "request_distribution",
]

#: raster resolution of every PNG (fixed, so files compare byte for byte across builds)
DPI = 200
#: text width of the PDF page (A4, 2 cm margins), in inches
WIDTH_IN = 6.5
#: figure formats save_figure understands
FORMATS = ("png", "svg", "pdf")

_PALETTE = ["#1b4f72", "#c0392b", "#229954", "#b9770e", "#7d3c98", "#117a65",
            "#a04000", "#2e4053", "#d4ac0d", "#5d6d7e"]

METRIC_LABELS = {
    "decode_tok_s_per_stream": "per-stream decode",
    "output_tok_s": "aggregate throughput",
    "prefill_tok_s": "prefill throughput",
    "ttft_ms": "time to first token",
    "itl_ms": "inter-token latency",
    "e2e_latency_ms": "end-to-end latency",
    "request_rate": "request rate",
    "engine_init_s": "engine start-up",
}


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


def _num(x: float) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    ax = abs(x)
    if ax >= 1000:
        return f"{x:,.0f}"
    if ax >= 1:
        return f"{x:.1f}"
    return f"{x:.3g}"


def _values(v) -> list[float]:
    """The per-pass values of a cells.csv row (`;`-separated, in pass order)."""
    if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA:
        return []
    if isinstance(v, (list, tuple, np.ndarray)):
        return [float(x) for x in v]
    out = []
    for part in str(v).split(";"):
        part = part.strip()
        if part:
            try:
                out.append(float(part))
            except ValueError:
                continue
    return out


def _finite(x) -> bool:
    try:
        return x is not None and x is not pd.NA and math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def pick_seats(cells: pd.DataFrame, metric: str, *, baseline: str | None = None,
               top_n: int = 8, statistic: str | None = None) -> tuple[list[str], int]:
    """The seats a figure of `metric` shows: the baseline plus the best others, up to top_n.

    "Best" is direction aware (highest throughput, lowest latency) on each seat's figure
    at its highest measured concurrency. Returns (seats, number of seats with data).
    """
    d = cells[cells["metric"] == metric]
    if statistic is not None:
        d = d[d["statistic"] == statistic]
    d = d[d["estimate"].map(_finite)]
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
    ax.set_xticklabels([str(c) for c in levels])
    ax.minorticks_off()


# --- figures ---------------------------------------------------------------------------

def metric_vs_concurrency(cells: pd.DataFrame, metric: str, *, statistics: Sequence[str] = ("mean",),
                          seats: Sequence[str] | None = None, baseline: str | None = None,
                          top_n: int = 8, height: float = 3.0) -> Figure | None:
    """One line per (seat, workload) of `metric` against concurrency, CI band where one exists.

    For each seat the first of `statistics` it has is drawn (and named in the legend when
    seats differ). Filled markers carry a CI; hollow markers are cells without one (one or
    two passes): their per-pass values are drawn as small dots, never averaged away.
    """
    d = cells[(cells["metric"] == metric) & cells["concurrency"].notna()].copy()
    d = d[d["estimate"].map(_finite)]
    if d.empty:
        return None
    d["concurrency"] = pd.to_numeric(d["concurrency"], errors="coerce")
    d = d[d["concurrency"].notna()]
    rank = {s: i for i, s in enumerate(statistics)}
    d = d[d["statistic"].isin(list(statistics))]
    if d.empty:
        return None
    d["_rank"] = d["statistic"].map(rank)
    best = d.groupby(["seat", "workload"])["_rank"].transform("min")
    d = d[d["_rank"] == best]
    if seats is None:
        seats, _ = pick_seats(d, metric, baseline=baseline, top_n=top_n)
    d = d[d["seat"].astype(str).isin([str(s) for s in seats])]
    if d.empty:
        return None
    colors = seat_colors(d["seat"].astype(str), baseline)
    several_stats = d["statistic"].nunique() > 1
    markers = ["o", "s", "^", "D", "v", "P", "X", "*"]
    with theme():
        fig = Figure(figsize=(WIDTH_IN, height), layout="constrained")
        ax = fig.add_subplot()
        handles = []
        for (seat, workload), g in d.groupby(["seat", "workload"], sort=True):
            seat = str(seat)
            g = g.sort_values("concurrency")
            workloads = d.loc[d["seat"] == seat, "workload"].nunique()
            mk = markers[sorted(d.loc[d["seat"] == seat, "workload"].astype(str).unique()).index(str(workload)) % len(markers)]
            color = colors[seat]
            x = g["concurrency"].to_numpy(float)
            y = g["estimate"].to_numpy(float)
            has_ci = g["ci_low"].map(_finite).to_numpy() & g["ci_high"].map(_finite).to_numpy()
            if has_ci.any():
                lo = np.where(has_ci, pd.to_numeric(g["ci_low"], errors="coerce"), y)
                hi = np.where(has_ci, pd.to_numeric(g["ci_high"], errors="coerce"), y)
                ax.fill_between(x, lo, hi, color=color, alpha=0.18, linewidth=0)
                for xi, l, h, ok in zip(x, lo, hi, has_ci):
                    if ok:
                        ax.plot([xi, xi], [l, h], color=color, linewidth=0.8, alpha=0.7)
            ax.plot(x, y, color=color, linewidth=1.3, zorder=2)
            ax.scatter(x[has_ci], y[has_ci], color=color, marker=mk, s=22, zorder=3)
            ax.scatter(x[~has_ci], y[~has_ci], facecolor="white", edgecolor=color, marker=mk,
                       s=24, linewidth=1.1, zorder=3)
            for xi, vals in zip(x, g.get("values", pd.Series([None] * len(g))).tolist()):
                pv = _values(vals)
                if len(pv) > 1:
                    ax.scatter([xi] * len(pv), pv, color=color, s=6, alpha=0.8, zorder=4, linewidth=0)
            label = _wrap(seat, 44)
            if workloads > 1 or d["workload"].nunique() > 1:
                label += f" · {workload}"
            if several_stats:
                label += f" ({g['statistic'].iloc[0]})"
            handles.append(Line2D([], [], color=color, marker=mk, label=label))
        _log2_axis(ax, d["concurrency"].astype(int))
        ax.set_xlabel("concurrent streams")
        ax.set_ylabel(metric_label(metric))
        if higher_is_better(metric):
            ax.set_ylim(bottom=0)
        ax.legend(handles=handles, loc="center left", bbox_to_anchor=(1.01, 0.5), handlelength=1.6)
        handles2 = [Line2D([], [], color="#444", marker="o", linestyle="", label="estimate with CI"),
                    Line2D([], [], color="#444", marker="o", markerfacecolor="white", linestyle="",
                           label="no CI (too few passes)"),
                    Line2D([], [], color="#444", marker=".", linestyle="", label="per-pass value")]
        fig.legend(handles=handles2, loc="outside lower center", ncols=3, fontsize=7)
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


def _cell_title(row) -> str:
    conc = row.get("concurrency")
    c = f", c={int(conc)}" if _finite(conc) else ""
    stat = row.get("statistic")
    st = "" if stat in (None, "mean") or stat is pd.NA else f" {stat}"
    return f"{_wrap(row['seat'], 30)}\n{row['workload']}{c}: {metric_label(row['metric'], unit=False)}{st}"


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
        v = _values(r["values"])
        if len(v) >= min_passes:
            lo = min(v)
            spread = (max(v) / lo) if lo > 0 else float("inf")
            rows.append((spread, r, v))
    if not rows:
        return None
    rows.sort(key=lambda t: (-t[0], str(t[1]["seat"]), str(t[1]["workload"]), str(t[1]["metric"])))
    rows = rows[:max_panels]
    n = len(rows)
    ncols = min(3, n)
    nrows = math.ceil(n / ncols)
    colors = seat_colors([str(r["seat"]) for _, r, _ in rows], baseline)
    with theme():
        fig = Figure(figsize=(WIDTH_IN if ncols > 1 else WIDTH_IN * 0.5, 2.05 * nrows + 0.2),
                     layout="constrained")
        axes = fig.subplots(nrows, ncols, squeeze=False)
        for ax, (spread, r, v) in zip(axes.flat, rows):
            x = np.arange(1, len(v) + 1)
            color = colors[str(r["seat"])]
            ax.plot(x, v, color=color, marker="o", zorder=3)
            for xi, yi in zip(x, v):
                ax.annotate(_num(yi), (xi, yi), textcoords="offset points", xytext=(0, 5),
                            ha="center", fontsize=7)
            lo, hi = min(v), max(v)
            pad = (hi - lo) * 0.35 or abs(hi) * 0.05 or 1.0
            ax.set_ylim(lo - pad * 0.6, hi + pad)
            ax.set_xlim(0.6, len(v) + 0.4)
            ax.set_xticks(x)
            ax.set_xlabel("pass")
            unit = METRICS.get(str(r["metric"]), ("",))[0]
            ax.set_ylabel(unit)
            ax.set_title(_cell_title(r), fontsize=7.5, loc="left")
            ax.text(0.98, 0.04, f"max/min {spread:.2f}", transform=ax.transAxes, ha="right",
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
    d = exam_deltas[exam_deltas["diff"].map(_finite)].head(max_rows)
    if d.empty:
        return None
    labels = []
    for _, r in d.iterrows():
        dim = r.get("dimension")
        dim = f" / {dim}" if isinstance(dim, str) and dim else ""
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
        ax.axvline(0, color="#777", linestyle="--", linewidth=0.9)
        ax.set_yticks(y)
        ax.set_yticklabels(labels, fontsize=6.8)
        ax.set_xlabel("difference in share correct, candidate − baseline (percentage points)")
        ax.grid(axis="x", color="#dddddd")
        ax.grid(axis="y", visible=False)
        ax.set_ylim(-0.7, n - 0.3)
        for yi, (_, r) in zip(y, d.iterrows()):
            p = r.get("p_value")
            txt = f"p = {_p(p)}" if _finite(p) else ""
            ax.annotate(txt, (1.01, yi), xycoords=("axes fraction", "data"), va="center", fontsize=7)
    return fig


def _p(p) -> str:
    p = float(p)
    if p >= 0.995:
        return "1.0"
    if p >= 0.01:
        return f"{p:.2f}"
    if p >= 0.001:
        return f"{p:.3f}"
    return "< 0.001"


def ratio_forest(comparisons: pd.DataFrame, *, max_rows: int = 24) -> Figure | None:
    """Candidate / baseline ratios with CIs, one row per comparison; 1 marks parity.

    Rows without a CI are hollow; labels say metric, concurrency and candidate.
    """
    if comparisons is None or comparisons.empty:
        return None
    d = comparisons[comparisons["ratio"].map(_finite)].head(max_rows)
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
            cs = f" c={int(c)}" if _finite(c) else ""
            labels.append(f"{_wrap(r['candidate'], 40)}\n{metric_label(r['metric'], unit=False)}{cs}")
            color = verdict_color.get(str(r.get("verdict")), "#444")
            ratio = float(r["ratio"])
            if _finite(r.get("ci_low")) and _finite(r.get("ci_high")):
                ax.hlines(yi, float(r["ci_low"]), float(r["ci_high"]), color=color, linewidth=1.6)
                ax.scatter([ratio], [yi], color=color, s=24, zorder=3)
            else:
                ax.scatter([ratio], [yi], facecolor="white", edgecolor=color, s=26, zorder=3, linewidth=1.2)
            ax.annotate(str(r.get("verdict", "")).replace("_", " "), (1.01, yi),
                        xycoords=("axes fraction", "data"), va="center", fontsize=7, color=color)
        ax.axvline(1, color="#777", linestyle="--", linewidth=0.9)
        ax.set_yticks(y)
        ax.set_yticklabels(labels, fontsize=6.8)
        ax.set_xlabel("candidate / baseline (ratio; > 1 means a larger figure)")
        ax.grid(axis="x", color="#dddddd")
        ax.grid(axis="y", visible=False)
        ax.set_ylim(-0.7, n - 0.3)
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
    key = ["seat", "workload", "concurrency", "metric", "statistic"]
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
            ax.tick_params(axis="x", labelrotation=30)
            import matplotlib.dates as mdates
            ax.xaxis.set_major_formatter(mdates.DateFormatter("%Y-%m-%d"))
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
        fig.suptitle(f"n = {v.size} requests", fontsize=8)
    return fig
