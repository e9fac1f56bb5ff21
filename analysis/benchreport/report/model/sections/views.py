"""Appendix views of load and latency: throughput against latency (the Pareto view), per-request
latency distributions, the lengths sent, a pass's timeline, failed requests against load and
request-rate sweeps.

Each is drawn from tables the analysis already has (`cells`, `pass_table`, `tables.requests`
with `tables.runs`) and only where they hold what it needs; otherwise the function returns None
and nothing is shown. Every seat keeps the one style `report_styles` gives it over all the
report's seats.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from benchreport import conditions
from benchreport import format as fmt
from benchreport.report.model import figures as F
from benchreport.report.model.figures import views as V

from .blocks import FigureBlock, division, figure_block, para, prose
from .cellview import result_cells
from .labels import report_styles

__all__ = [
    "report_styles",
    "load_views",
    "throughput_latency_figure",
    "latency_ecdf_figure",
    "lengths_sent_figure",
    "pass_timeline_figure",
    "failures_figure",
    "rate_sweep_figure",
    "VIEW_FIGURES",
]

#: the catalog names of this part's figures, in the order shown
VIEW_FIGURES = (
    "throughput-latency",
    "latency-ecdf",
    "lengths-sent",
    "pass-timeline",
    "failures-by-load",
    "rate-sweep",
)
#: the statistics a throughput point takes, the first a cell has
_THROUGHPUT_STATS = ("mean", "p50")
#: the panels of a rate sweep: (metric, statistic)
_RATE_PANELS = (("output_tok_s", "mean"), ("ttft_ms", "p95"), ("itl_ms", "p95"), ("e2e_latency_ms", "p95"))


def _condition(load_label, workload) -> str:
    """What was sent, in words (the load's label), else the workload's name."""
    return fmt.text(load_label) or fmt.text(workload)


def _requests(a) -> pd.DataFrame:
    """The request records with their run's harness and condition (empty when there are none).

    Harness and condition are worded once per run and per workload, not once per request (a
    fleet's 600,000 requests name 250 runs and a few workloads)."""
    r = a.tables.requests
    if r is None or r.empty:
        return pd.DataFrame(columns=["seat", "harness", "condition", "concurrency", "pass"])
    runs = a.tables.runs.drop_duplicates("run_id").set_index("run_id")
    if "counted_only" in r:
        r = r[~r["counted_only"].fillna(False).astype(bool)]
    r = r.copy()
    r["harness"] = r["run_id"].map(runs["harness"].map(fmt.text)).fillna("")
    labels = _per_run(r["run_id"], runs["load_label"].map(fmt.text)) if "load_label" in runs else ""
    r["condition"] = np.where(labels != "", labels, _worded(r["workload"]))
    r["seat"] = r["seat"].astype(str)
    return r


def _per_run(run_ids: pd.Series, worded: pd.Series) -> np.ndarray:
    """Each row's run's `worded` value ('' for a run the runs table does not hold)."""
    return run_ids.map(worded).fillna("").to_numpy(object)


def _worded(values: pd.Series) -> np.ndarray:
    """`fmt.text` of each value, worded once per distinct value."""
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    return np.array([fmt.text(u) for u in uniques] or [""], dtype=object)[codes]


def _said(fig, what: str) -> str:
    """' The first N of M WHAT are shown.' when the figure left some out."""
    drawn, total = getattr(fig, "benchreport_series", (0, 0))
    if total > drawn:
        return f" The first {fmt.count(drawn)} of {fmt.count(total)} {what} are shown."
    return ""


_SEAT_CUE = " Colour and marker: the seat, as in every figure."
_SEATS_CUE = (
    " Colour and marker: the seat, as in every figure; a seat's series differ by line style and"
    " are named in the legend by harness and what was sent."
)


# --- 1 ---------------------------------------------------------------------------------------
def _latency_points(a) -> pd.DataFrame:
    """(seat, harness, condition, concurrency) with aggregate throughput and ITL or TTFT p95."""
    c = result_cells(a)
    if c is None or c.empty:
        return pd.DataFrame()
    c = c[c["concurrency"].notna() & c["estimate"].map(fmt.finite)].copy()
    c["seat"] = c["seat"].astype(str)
    c["harness"] = c["harness"].map(fmt.text)
    c["condition"] = [
        _condition(lab, w) for lab, w in zip(c.get("load", pd.Series(pd.NA, index=c.index)), c["workload"])
    ]
    key = ["seat", "harness", "condition", "load_id", "workload", "concurrency"]
    c["load_id"] = c["load_id"].map(fmt.text)
    thr = c[(c["metric"] == "output_tok_s") & c["statistic"].isin(_THROUGHPUT_STATS)].copy()
    thr["_rank"] = thr["statistic"].map({s: i for i, s in enumerate(_THROUGHPUT_STATS)})
    thr = thr.sort_values("_rank").drop_duplicates(key)[key + ["estimate"]].rename(columns={"estimate": "throughput"})
    lat = c[c["metric"].isin(["itl_ms", "ttft_ms"]) & (c["statistic"] == "p95")]
    lat = lat[key + ["metric", "estimate"]].rename(columns={"metric": "latency_metric", "estimate": "latency"})
    return thr.merge(lat, on=key).drop_duplicates(key + ["latency_metric"])


def throughput_latency_figure(a) -> FigureBlock | None:
    """Aggregate throughput against ITL and TTFT p95 across concurrency levels, per seat and
    condition, with each series' Pareto front ringed."""
    fig = V.throughput_latency(_latency_points(a), report_styles(a))
    if fig is None:
        return None
    return figure_block(
        fig,
        "Aggregate throughput against the 95th-percentile latency as the number of concurrent "
        "streams grows (the number beside each point), one line per seat, harness and condition."
        " Ringed points are on the series' Pareto front: no other number of streams gave both more "
        "throughput and a lower tail. Read across to where the tail passes a limit to see how many "
        "streams a seat holds under it." + _SEATS_CUE + _said(fig, "series"),
        "throughput-latency",
    )


# --- 2 ---------------------------------------------------------------------------------------
def latency_ecdf_figure(a, requests: pd.DataFrame | None = None) -> FigureBlock | None:
    """Per-request TTFT and ITL distributions (ECDFs) per seat, harness and condition, one line
    per concurrency, from the request records (`requests`: `_requests(a)` when already made)."""
    r = _requests(a) if requests is None else requests
    if r.empty:
        return None
    fig = V.latency_ecdfs(r, report_styles(a))
    if fig is None:
        return None
    return figure_block(
        fig,
        "Share of requests at or below each latency (an empirical distribution), from the runs' "
        "request records, one row per seat, harness and condition, one line per number of "
        "concurrent streams (line style); failed requests are left out. A curve far to the right "
        "of its neighbours at its top is a tail that a mean would hide." + _SEAT_CUE + _said(fig, "rows"),
        "latency-ecdf",
    )


# --- 3 ---------------------------------------------------------------------------------------
def lengths_sent_figure(a, requests: pd.DataFrame | None = None) -> FigureBlock | None:
    """The prompt and output tokens each request carried, per seat, harness and condition
    (`requests`: `_requests(a)` when already made)."""
    r = _requests(a) if requests is None else requests
    if r.empty:
        return None
    fig = V.lengths_sent(r, report_styles(a))
    if fig is None:
        return None
    return figure_block(
        fig,
        "Prompt and output tokens of each request as the request records count them (what was "
        "actually sent and returned, not what the harness was asked for), one row per seat, "
        "harness and condition (every concurrency together): the box is the middle half, the "
        "seat's marker the median, the whiskers the smallest and largest; a marker alone is a "
        "length every request shared." + _SEAT_CUE + _said(fig, "rows"),
        "lengths-sent",
    )


# --- 4 ---------------------------------------------------------------------------------------
def _timeline_cells(r: pd.DataFrame, most: int) -> tuple[pd.DataFrame, int]:
    """The requests of the passes a timeline shows, and how many series could have been: per seat,
    harness and condition, the pass at its highest concurrency whose TTFT spreads widest (largest
    over median); the `most` widest of those, widest first."""
    r = r[r["start_ms"].notna()]
    if not r["ttft_ms"].notna().any():
        return r.iloc[0:0], 0
    series = ["seat", "harness", "condition"]
    top = r.groupby(series)["concurrency"].transform("max")
    r = r[(r["concurrency"] == top) | top.isna()]
    spread = r.groupby([*series, "pass"])["ttft_ms"].agg(lambda v: v.max() / max(v.median(), 1e-9)).dropna()
    best = spread.sort_values(ascending=False).groupby(level=[0, 1, 2]).head(1)
    order = list(best.index[:most])
    rank = {k: i for i, k in enumerate(order)}
    keys = list(zip(r["seat"], r["harness"], r["condition"], r["pass"]))
    r = r.assign(_rank=[rank.get(k, -1) for k in keys])
    return r[r["_rank"] >= 0].sort_values(["_rank", "start_ms"]).drop(columns="_rank"), len(best)


def pass_timeline_figure(a, requests: pd.DataFrame | None = None, *, max_panels: int = 6) -> FigureBlock | None:
    """Each request's TTFT against when it was sent within its pass, for the most contended cells
    (`requests`: `_requests(a)` when already made)."""
    r = _requests(a) if requests is None else requests
    if r.empty or "start_ms" not in r:
        return None
    d, total = _timeline_cells(r, max_panels)
    if d.empty:
        return None
    fig = V.pass_timelines(d, report_styles(a), max_panels=max_panels)
    if fig is None:
        return None
    shown = fig.benchreport_series[0]
    more = (
        f" The {fmt.count(shown)} of {fmt.count(total)} whose TTFT spreads widest are shown." if total > shown else ""
    )
    return figure_block(
        fig,
        "Time to first token of each request against when it was sent within one pass: per seat, "
        "harness and condition, the pass at the highest measured concurrency whose first tokens "
        "spread widest (largest against median). A pass whose requests wait longer and longer, or "
        "that stalls at one moment, was contended." + _SEAT_CUE + more,
        "pass-timeline",
    )


# --- 5 ---------------------------------------------------------------------------------------
def _failure_counts(a) -> pd.DataFrame:
    """Requests sent and failed per seat, harness, condition and concurrency (from the cells' counts)."""
    c = a.cells
    if c is None or c.empty or "n_requests" not in c:
        return pd.DataFrame()
    c = c[c["n_requests"].notna() & c["concurrency"].notna()].copy()
    if c.empty:
        return c
    c["seat"] = c["seat"].astype(str)
    c["harness"] = c["harness"].map(fmt.text)
    c["condition"] = [
        _condition(lab, w) for lab, w in zip(c.get("load", pd.Series(pd.NA, index=c.index)), c["workload"])
    ]
    c["n_failed"] = pd.to_numeric(c["n_failed"], errors="coerce").fillna(0)
    key = ["seat", "harness", "condition", "concurrency"]
    c = c.sort_values(["n_requests", "n_failed"], ascending=False).drop_duplicates(key + ["workload", "load_id"])
    return c.groupby(key, as_index=False)[["n_requests", "n_failed"]].sum()


def failures_figure(a) -> FigureBlock | None:
    """The share of requests that failed against concurrency, where any failed."""
    counts = _failure_counts(a)
    if counts.empty:
        return None
    fig = V.failures_by_load(counts, report_styles(a))
    if fig is None:
        return None
    clean = counts.groupby(["seat", "harness", "condition"])["n_failed"].sum()
    none = int((clean == 0).sum())
    rest = f" The other {fmt.counted(none, 'series', 'series')}, with no failed request, are not drawn." if none else ""
    return figure_block(
        fig,
        "Share of requests that failed at each number of concurrent streams, per seat, harness and "
        "condition with any failure; beside each point, how many failed of how many were sent. "
        "Figures from a load where many requests failed describe only the requests that succeeded." + _SEAT_CUE + rest,
        "failures-by-load",
    )


# --- 6 ---------------------------------------------------------------------------------------
def _rate_of(load_json) -> tuple[float, str]:
    """(offered rate, the load without its rate in words) of a run's load; (nan, '') for a run
    sent at a fixed concurrency."""
    try:
        load = json.loads(load_json) if isinstance(load_json, str) else None
    except ValueError:
        load = None
    if not isinstance(load, dict) or not fmt.finite(load.get("rate")):
        return np.nan, ""
    if load.get("arrival") in ("concurrent", "concurrency", "synchronous"):
        return np.nan, ""
    rest = {k: v for k, v in load.items() if k != "rate"}
    return float(load["rate"]), conditions.words(rest)


def _rate_passes(a) -> pd.DataFrame:
    """Every pass value of a run sent at an offered request rate, with that rate and its condition."""
    if "load" not in a.tables.runs:
        return pd.DataFrame()
    runs = a.tables.runs.drop_duplicates("run_id").set_index("run_id")
    rates = {rid: _rate_of(load) for rid, load in runs["load"].items()}
    if not any(fmt.finite(r) for r, _ in rates.values()):
        return pd.DataFrame()  # no run sent at a rate: the pass table (a store's may be large) is not read
    p = a.passes  # the whole pass table (from a run store, read from its cache when asked)
    if p is None or p.empty:
        return pd.DataFrame()
    got = [rates.get(rid, (np.nan, "")) for rid in p["run_id"]]
    p = p.assign(rate=[g[0] for g in got], condition=[g[1] for g in got])
    p = p[p["rate"].map(fmt.finite)].copy()
    if p.empty:
        return p
    p["seat"] = p["seat"].astype(str)
    p["harness"] = p["harness"].map(fmt.text)
    p["condition"] = [f"{w}, {c}" if c else fmt.text(w) for w, c in zip(p["workload"], p["condition"])]
    return p


def rate_sweep_figure(a) -> FigureBlock | None:
    """Runs sent at an offered request rate (GuideLLM and AIPerf rate sweeps) on a request-rate axis."""
    p = _rate_passes(a)
    if p.empty:
        return None
    fig = V.rate_sweep(p, report_styles(a), panels=_RATE_PANELS)
    if fig is None:
        return None
    dots = " Small dots: single passes; the line joins their medians." if "passes" in F.drawn(fig) else ""
    return figure_block(
        fig,
        "Runs sent at a fixed request rate rather than a fixed number of streams, against the rate "
        "offered: throughput rises with the rate until the server saturates, after which latency "
        "climbs instead." + dots + _SEATS_CUE,
        "rate-sweep",
    )


def load_views(a) -> list:
    """The part's heading and lead, then each of its figures that has data to draw; an empty list
    when none has (nothing is shown, not even the heading). The request records are joined to
    their runs once for the three views drawn from them."""
    requests = _requests(a)
    blocks = [make(a, requests) if make in _FROM_REQUESTS else make(a) for make in _MAKERS]
    drawn = [b for b in blocks if b is not None]
    if not drawn:
        return []
    lead = prose(
        division(
            "views",
            [
                para(
                    "The figures below draw the same runs as the report's body from the side of "
                    "load: how throughput trades against latency, how each request's latency is "
                    "spread, what was sent, how a pass unfolded in time, where requests failed and, "
                    "for runs sent at a fixed request rate, the rate offered. Each is shown only "
                    "where the runs record what it needs."
                )
            ],
            heading="Load, latency and requests",
        )
    )
    return [lead, *drawn]


_MAKERS = (
    throughput_latency_figure,
    latency_ecdf_figure,
    lengths_sent_figure,
    pass_timeline_figure,
    failures_figure,
    rate_sweep_figure,
)

#: the views drawn from the request records (`_requests`)
_FROM_REQUESTS = (latency_ecdf_figure, lengths_sent_figure, pass_timeline_figure)
