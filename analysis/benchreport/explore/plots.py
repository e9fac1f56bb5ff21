"""Interactive figures for the analyst's notebook (plotly): hover gives each point's numbers.

Each function returns a `plotly.graph_objects.Figure` (None when there is nothing to draw),
built from precomputed intervals as the report's figures are (nothing re-estimated). Seats
keep the report's colours and marker shapes (`benchreport.report.model.figures.seat_styles`), so a
seat looks the same in the notebook and in the paper. Data strings are HTML-escaped before they reach plotly, which reads
a subset of HTML in every text it draws.
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd

from benchreport import format as fmt
from benchreport.report.model.figures import MARKERS, metric_label, seat_styles

from .views import cells_view, requests_view, seat_labels

__all__ = ["concurrency_plot", "passes_plot", "requests_plot", "comparison_plot", "SYMBOLS"]

#: plotly's names of the report's marker shapes (`benchreport.report.model.figures.MARKERS`)
PLOTLY_SYMBOL = {
    "o": "circle",
    "s": "square",
    "^": "triangle-up",
    "D": "diamond",
    "v": "triangle-down",
    "P": "cross",
    "X": "x",
    "*": "star",
}
#: marker shapes, one per seat in the order of `seat_styles`
SYMBOLS = tuple(PLOTLY_SYMBOL[m] for m in MARKERS)
_LAYOUT = dict(
    template="simple_white",
    height=430,
    margin=dict(l=70, r=20, t=50, b=60),
    legend=dict(font=dict(size=11)),
    hoverlabel=dict(align="left"),
)


def _esc(x) -> str:
    return html.escape(fmt.text(x), quote=False)


def _go():
    import plotly.graph_objects as go  # deferred: plotly is for the notebook only

    return go


def _styles(a, labels) -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    """(label -> seat id, seat id -> (colour, plotly symbol)) for the seat labels of a view,
    in the report's per-seat colour and marker."""
    ids = {v: k for k, v in seat_labels(a).items()}
    styles = seat_styles(seat_labels(a), a.baseline)
    return ids, {ids[s]: (styles[ids[s]].color, PLOTLY_SYMBOL[styles[ids[s]].marker]) for s in labels}


def _axis_title(metric: str, statistic: str | None) -> str:
    stat = "" if not statistic else f", {statistic}"
    name = metric_label(metric)
    if "(" in name:
        head, unit = name.rsplit(" (", 1)
        return _esc(f"{head}{stat} ({unit}")
    return _esc(name + stat)


def _ci_text(lo, hi, method) -> str:
    return f"[{fmt.num(lo)}, {fmt.num(hi)}]" if fmt.finite(lo) and fmt.finite(hi) else fmt.text(method)


def _cell_hover(d: pd.DataFrame) -> np.ndarray:
    return np.array(
        [
            [
                _esc(r.seat),
                _esc(r.workload),
                fmt.concurrency(r.concurrency),
                _esc(fmt.num(r.estimate) + " " + fmt.text(r.unit)),
                _esc(_ci_text(r.ci_low, r.ci_high, r.ci_method)),
                fmt.count(r.n_passes),
                _esc(fmt.series(r.values) or "–"),
            ]
            for r in d.itertuples(index=False)
        ],
        dtype=object,
    ).reshape(len(d), 7)


_CELL_HOVER = (
    "<b>%{customdata[0]}</b><br>%{customdata[1]}, concurrency %{customdata[2]}<br>"
    "estimate %{customdata[3]}<br>CI %{customdata[4]}<br>passes %{customdata[5]}: "
    "%{customdata[6]}<extra></extra>"
)


def concurrency_plot(a, metric: str, *, statistic: str = "mean", seats=None, workload=None, harness=None):
    """`metric` against concurrency (log 2 axis), one line per seat and workload, CI as error bars."""
    d = cells_view(a, metric=metric, statistic=statistic, seats=seats, workload=workload, harness=harness)
    d = d[pd.to_numeric(d["concurrency"], errors="coerce").notna()]
    if d.empty:
        return None
    go = _go()
    ids, styles = _styles(a, d["seat"].unique())
    fig = go.Figure()
    for (seat, wl), g in d.groupby(["seat", "workload"], sort=False):
        g = g.assign(_c=pd.to_numeric(g["concurrency"])).sort_values("_c")
        colour, symbol = styles[ids[seat]]
        has_ci = g["ci_low"].notna() & g["ci_high"].notna()
        fig.add_trace(
            go.Scatter(
                x=g["_c"],
                y=g["estimate"],
                mode="lines+markers",
                name=_esc(f"{ids[seat]} · {wl}"),
                line=dict(color=colour),
                customdata=_cell_hover(g),
                hovertemplate=_CELL_HOVER,
                marker=dict(symbol=[symbol if ci else symbol + "-open" for ci in has_ci], size=9, color=colour),
                error_y=dict(
                    type="data",
                    symmetric=False,
                    array=(g["ci_high"] - g["estimate"]).fillna(0),
                    arrayminus=(g["estimate"] - g["ci_low"]).fillna(0),
                    thickness=1.2,
                ),
            )
        )
    levels = sorted({int(c) for c in pd.to_numeric(d["concurrency"])})
    fig.update_xaxes(type="log", tickvals=levels, ticktext=[str(c) for c in levels], title="concurrency (streams)")
    fig.update_yaxes(title=_axis_title(metric, statistic), rangemode="tozero")
    fig.update_layout(
        title=_esc(f"{metric_label(metric, unit=False)} ({statistic}) against concurrency; hollow markers: no CI"),
        **_LAYOUT,
    )
    return fig


def passes_plot(a, metric: str, *, statistic: str = "mean", seats=None, workload=None, concurrency=None):
    """Each cell's per-pass values in pass order (warm-up drift rises, instability swings)."""
    d = cells_view(a, metric=metric, statistic=statistic, seats=seats, workload=workload, concurrency=concurrency)
    d = d[d["values"].map(len) >= 2]
    if d.empty:
        return None
    go = _go()
    ids, styles = _styles(a, d["seat"].unique())
    fig = go.Figure()
    for r in d.itertuples(index=False):
        colour, symbol = styles[ids[r.seat]]
        name = f"{ids[r.seat]} · {r.workload} · c={fmt.concurrency(r.concurrency)}"
        vals = list(r.values)
        fig.add_trace(
            go.Scatter(
                x=list(range(1, len(vals) + 1)),
                y=vals,
                mode="lines+markers",
                name=_esc(name),
                line=dict(color=colour),
                marker=dict(symbol=symbol, size=9, color=colour),
                customdata=[[_esc(name), _esc(fmt.num(v) + " " + fmt.text(r.unit))] for v in vals],
                hovertemplate="<b>%{customdata[0]}</b><br>pass %{x}: %{customdata[1]}<extra></extra>",
            )
        )
    n = int(d["values"].map(len).max())
    fig.update_xaxes(title="pass, in the order measured", tickvals=list(range(1, n + 1)))
    fig.update_yaxes(title=_axis_title(metric, statistic))
    fig.update_layout(title=_esc(f"{metric_label(metric, unit=False)} ({statistic}) per pass"), **_LAYOUT)
    return fig


def requests_plot(
    a,
    field: str = "ttft_ms",
    *,
    seats=None,
    workload=None,
    concurrency=None,
    pass_=None,
    harness=None,
    by: str = "pass",
):
    """One box per seat and group (`by`: pass, concurrency, workload or harness) with every
    request as a point; hover gives the request's value, finish reason and run."""
    r = requests_view(a, seats=seats, workload=workload, concurrency=concurrency, pass_=pass_, harness=harness)
    if r.empty or field not in r.columns:
        return None
    r = r.assign(_v=pd.to_numeric(r[field], errors="coerce")).dropna(subset=["_v"])
    if r.empty:
        return None
    if by not in ("pass", "concurrency", "workload", "harness"):
        raise ValueError(f"`by` must be pass, concurrency, workload or harness; got {by!r}")
    go = _go()
    ids, styles = _styles(a, r["seat"].unique())
    fig = go.Figure()
    for seat, g in r.groupby("seat", sort=False):
        colour, symbol = styles[ids[seat]]
        groups = [f"{by} {fmt.text(v)}" for v in g[by]]
        reasons = g["finish_reason"] if "finish_reason" in g else [""] * len(g)
        custom = [
            [_esc(ids[seat]), _esc(w), fmt.concurrency(c), fmt.text(p), _esc(fr), _esc(run)]
            for w, c, p, fr, run in zip(g["workload"], g["concurrency"], g["pass"], reasons, g["run_id"])
        ]
        fig.add_trace(
            go.Box(
                x=groups,
                y=g["_v"],
                name=_esc(ids[seat]),
                boxpoints="all",
                jitter=0.4,
                pointpos=0,
                marker=dict(color=colour, symbol=symbol, size=5),
                line=dict(color=colour),
                customdata=custom,
                hovertemplate=(
                    "<b>%{customdata[0]}</b><br>%{customdata[1]}, concurrency %{customdata[2]}, pass "
                    "%{customdata[3]}<br>" + _esc(field) + " %{y}<br>finish %{customdata[4]}<br>"
                    "run %{customdata[5]}<extra></extra>"
                ),
            )
        )
    fig.update_yaxes(title=_esc(metric_label(field) if field in ("ttft_ms", "e2e_latency_ms", "itl_ms") else field))
    fig.update_xaxes(title=by)
    fig.update_layout(boxmode="group", title=_esc(f"per-request {field} by seat and {by}"), **_LAYOUT)
    return fig


def comparison_plot(cmp):
    """A `compare` table as a forest plot: each cell's ratio with its CI, the noise band shaded."""
    if cmp is None or not len(cmp):
        return None
    go = _go()
    d = cmp.reset_index(drop=True)
    labels = [_esc(fmt.cell_phrase(r.workload, r.concurrency, r.metric, r.statistic)) for r in d.itertuples()]
    colours = {"better": "#009E73", "worse": "#D55E00", "within_noise": "#999999", "insufficient_data": "#0072B2"}
    symbols = {
        "better": "triangle-up",
        "worse": "triangle-down",
        "within_noise": "circle",
        "insufficient_data": "circle-open",
    }
    fig = go.Figure()
    for verdict, g in d.groupby("verdict", sort=False):
        idx = list(g.index)
        fig.add_trace(
            go.Scatter(
                x=g["ratio"],
                y=[labels[i] for i in idx],
                mode="markers",
                name=_esc(str(verdict).replace("_", " ")),
                marker=dict(color=colours.get(verdict, "#000000"), symbol=symbols.get(verdict, "circle"), size=11),
                error_x=dict(
                    type="data",
                    symmetric=False,
                    array=(g["ci_high"] - g["ratio"]).fillna(0),
                    arrayminus=(g["ratio"] - g["ci_low"]).fillna(0),
                ),
                customdata=[
                    [
                        fmt.ratio3(r.ratio),
                        _esc(_ci_text(r.ci_low, r.ci_high, r.ci_method)),
                        _esc(fmt.num(r.baseline_estimate) + " " + r.unit),
                        _esc(fmt.num(r.candidate_estimate) + " " + r.unit),
                        _esc(fmt.text(r.verdict_reason) or str(r.verdict)),
                        _esc(", ".join(r.flags) or "none"),
                    ]
                    for r in g.itertuples()
                ],
                hovertemplate=(
                    "ratio %{customdata[0]}<br>CI %{customdata[1]}<br>baseline %{customdata[2]}<br>"
                    "candidate %{customdata[3]}<br>%{customdata[4]}<br>flags: %{customdata[5]}<extra></extra>"
                ),
            )
        )
    noise = getattr(cmp, "noise", 0.02)
    fig.add_vrect(x0=1 - noise, x1=1 + noise, fillcolor="#bbbbbb", opacity=0.3, line_width=0)
    fig.add_vline(x=1, line_dash="dash", line_color="#555555")
    fig.update_xaxes(title="ratio, candidate / baseline (1: parity; shaded: within noise)")
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(
        title=_esc(f"{cmp.candidate} against {cmp.baseline}"), **{**_LAYOUT, "height": max(300, 60 + 28 * len(d))}
    )
    return fig
