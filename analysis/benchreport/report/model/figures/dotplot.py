"""Every seat's figure of one metric at one concurrency, as a dot plot, best first."""

from __future__ import annotations

from typing import Sequence

import pandas as pd
from matplotlib.figure import Figure

from benchreport import format as fmt
from benchreport.columns import higher_is_better
from benchreport.stats.common import parse_values

from .series import with_series
from .theme import NEUTRAL, WIDTH_IN, axis_label, record_drawn, record_styles, seat_styles, theme, wrap_id


def cell_dotplot(
    cells: pd.DataFrame,
    metric: str,
    *,
    concurrency: int | None = 1,
    statistics: Sequence[str] = ("mean", "p50"),
    baseline: str | None = None,
    top_n: int = 30,
    styles: dict | None = None,
) -> Figure | None:
    """Every (seat, workload) figure of `metric` at one concurrency, as a dot plot.

    Point: the estimate (filled with its CI bar where one exists, hollow without), in the
    seat's colour and marker shape; small dots: per-pass values; a grey bar: the min-max
    range where the run gave one. Sorted best first (direction aware); at most `top_n`
    rows. What was drawn is noted on the figure (`theme.drawn`) for its caption.
    """
    rows = _dot_rows(cells, metric, concurrency, statistics)
    if not rows:
        return None
    hib = higher_is_better(metric)
    rows.sort(key=lambda r: (r["workload"], -r["y"] if hib else r["y"], r["seat"]))
    rows = rows[:top_n]
    positions, headers, total = _dot_layout(rows)
    styles = seat_styles([r["seat"] for r in rows], baseline, styles)
    with theme():
        fig = Figure(figsize=(WIDTH_IN, 0.14 * total + 0.7), layout="constrained")
        ax = fig.add_subplot()
        ys = [total - p for p in positions]
        xs_all = []
        for yi, r in zip(ys, rows):
            xs_all += _draw_row(fig, ax, yi, r, styles[r["seat"]])
        _dot_axes(ax, rows, ys, headers, total, baseline)
        lo, hi = min(xs_all), max(xs_all)
        pad = (hi - lo) * 0.12 or abs(hi) * 0.1 or 1.0
        ax.set_xlim(lo - pad, hi + pad * 2.4)
        ax.grid(axis="x", color="#dddddd")
        ax.grid(axis="y", visible=False)
        where = f"at {fmt.streams(concurrency)}" if concurrency else ""
        shown = [r["point"]["statistic"] for r in rows if r["point"] is not None]
        ax.set_xlabel(axis_label(metric, [s for s in statistics if s in shown], per=where))
    return record_styles(fig, {r["seat"]: styles[r["seat"]] for r in rows})


def _dot_rows(cells: pd.DataFrame, metric: str, concurrency, statistics) -> list[dict]:
    """One row per (seat, series: workload, harness, probe, load): its point (first of `statistics`) and min-max range."""
    d = cells[cells["metric"] == metric].copy()
    conc = pd.to_numeric(d["concurrency"], errors="coerce")
    d = d[conc.isna()] if concurrency is None else d[conc == concurrency]
    d = d[d["estimate"].map(fmt.finite)]
    if d.empty:
        return []
    d["seat"] = d["seat"].astype(str)
    d = with_series(d)
    rows = []
    for (seat, workload), g in d.groupby(["seat", "series"], sort=True):
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
    return rows


def _dot_layout(rows: list[dict]) -> tuple[list[float], list[tuple[float, str]], float]:
    """Row positions top down, one block per series (different harnesses, probes or loads are not
    comparable)."""
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
    return positions, headers, y


def _draw_row(fig, ax, yi: float, r: dict, style) -> list[float]:
    """One seat's row: range bar, point with or without CI, pass values, label; the x it spans."""
    xs = []
    color, mk = style.color, style.marker
    if r["range"] is not None:
        ax.hlines(yi, r["range"][0], r["range"][1], color=NEUTRAL, linewidth=3.0, alpha=0.6, zorder=1)
        record_drawn(fig, "range")
        xs += list(r["range"])
    p = r["point"]
    right = [r["range"][1]] if r["range"] is not None else []
    if p is not None:
        xs.append(r["y"])
        right.append(r["y"])
        if fmt.finite(p.get("ci_low")) and fmt.finite(p.get("ci_high")):
            ax.hlines(yi, float(p["ci_low"]), float(p["ci_high"]), color=color, linewidth=1.5, zorder=2)
            ax.scatter([r["y"]], [yi], color=color, marker=mk, s=22, zorder=3)
            record_drawn(fig, "ci")
            xs += [float(p["ci_low"]), float(p["ci_high"])]
            right.append(float(p["ci_high"]))
        else:
            ax.scatter([r["y"]], [yi], facecolor="white", edgecolor=color, marker=mk, s=24, linewidth=1.1, zorder=3)
            record_drawn(fig, "no_ci")
        pv = parse_values(p.get("values")) if "values" in p.index else []
        if len(pv) > 1:
            ax.scatter(pv, [yi] * len(pv), color=color, s=7, zorder=4, linewidth=0)
            record_drawn(fig, "passes")
            xs += pv
            right += pv
    label = fmt.num(r["y"]) if p is not None else ""
    if r["range"] is not None:
        rng = fmt.span(r["range"][0], r["range"][1])
        label = f"{label} (range {rng})" if label else f"range {rng}"
    ax.annotate(
        label, (max(right), yi), textcoords="offset points", xytext=(6, 0), va="center", fontsize=6.3, color="#333333"
    )
    return xs


def _dot_axes(ax, rows: list[dict], ys: list[float], headers, total: float, baseline: str | None) -> None:
    """Seat names (the baseline in bold), workload headers and separators, the y range."""
    ax.set_yticks(ys)
    ax.set_yticklabels([wrap_id(r["seat"], 52) for r in rows], fontsize=6.5)
    for lab, r in zip(ax.get_yticklabels(), rows):
        if r["seat"] == baseline:
            lab.set_fontweight("bold")
    for hy, workload in headers:
        ax.annotate(
            fmt.short(workload),
            xy=(0, total - hy),
            xycoords=("axes fraction", "data"),
            xytext=(-5, 0),
            textcoords="offset points",
            ha="right",
            va="center",
            fontsize=7,
            fontweight="bold",
            fontstyle="italic",
        )
        if hy > 0:
            ax.axhline(total - hy + 0.75, color="#cccccc", linewidth=0.6)
    ax.set_ylim(min(ys) - 0.7, total - headers[0][0] + 0.6)
