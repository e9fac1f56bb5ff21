"""Request records as the statistics read them: one group per (run, workload, concurrency), in send order.

The statistics never need all request records at once. They read each group once for its
per-pass statistics (`GroupStats`) and come back later only for the groups whose cell is a
single pass (its within-run interval). A `RequestSource` gives both: `FrameSource` over the
`requests` tidy table in memory, and the run store's source over Parquet via DuckDB
(benchreport.store), so a year of nightly runs is analysed one date at a time with the same
numbers. The store computes its summaries by SQL (benchreport.store.figures), bit for bit
`summarise`'s: the mean and the lag-1 autocorrelation are left-to-right sums for that reason
(`statistic`, benchreport.stats.within.lag1_autocorrelation).

Metric values per request: ttft_ms, itl_ms and e2e_latency_ms as recorded;
decode_tok_s_per_stream = (output_tokens - 1) / ((e2e_latency_ms - ttft_ms)/1000) when
output_tokens > 1 and e2e > ttft (1000/TPOT, TPOT as vLLM's benchmark_serving defines it).
Failed requests (an error, or finish_reason error/cancelled/incomplete) are counted and
left out of every statistic.

Two values of a tail quantile (p90, p95, p99) per group: numpy's 'linear' quantile
(`statistic`), the convention harnesses print, which checks a printed figure; and the pass
estimate (`pass_estimate`), the pass value of a cell measured from request records: Hyndman &
Fan's definition 8 (`TAIL_ESTIMATOR`, benchreport.stats.common.median_unbiased_sorted), about
median-unbiased in a small pass where the linear quantile reads low (issue 43: at 100 requests a
pass the linear p90's bias took 10-pass cells' coverage to 91.5%; docs/statistics.md, "Tail cells
of several passes").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Protocol

import numpy as np
import pandas as pd

from ..columns import QUANTILES, REQUEST_METRICS, REQUEST_STATISTICS
from ..thresholds import Thresholds
from .common import (
    harrell_davis_sorted,
    lerp,
    median_unbiased_sorted,
    quantile_positions,
    quantile_sorted,
    sorted_mean,
    tail_supported,
)
from .within import lag1_autocorrelation

__all__ = [
    "FAILED_REASONS",
    "RequestGroup",
    "GroupSummary",
    "GroupStats",
    "RequestSource",
    "FrameSource",
    "summarise",
    "failed_mask",
    "metric_values",
    "request_metrics",
    "group_stats",
    "supported",
    "from_requests",
    "statistic",
    "pass_estimate",
    "estimate_key",
    "TAIL_STATISTICS",
    "TAIL_ESTIMATORS",
    "TAIL_ESTIMATOR",
]

#: finish reasons of a failed request (spec/run-format.md: `error`; harnesses add the others)
FAILED_REASONS = ("error", "cancelled", "incomplete")
#: the statistics whose pass value from requests is `TAIL_ESTIMATOR`'s (the tail quantiles)
TAIL_STATISTICS = tuple(stat for stat in REQUEST_STATISTICS if QUANTILES.get(stat, 0.0) > 0.5)
#: the tail quantiles' estimators of one pass, by name (docs/statistics.md, "Issue 43")
TAIL_ESTIMATORS = {
    "linear": quantile_sorted,
    "harrell_davis": harrell_davis_sorted,
    "median_unbiased": median_unbiased_sorted,
}
#: the estimator of a tail quantile's pass value from request records
TAIL_ESTIMATOR = "median_unbiased"
#: the columns a group is keyed and described by
GROUP_KEY = ("run_id", "workload", "concurrency")


@dataclass
class RequestGroup:
    """The successful requests of one (run, workload, concurrency) in send order, and the counts."""

    key: tuple  # (run_id, workload, concurrency or -1)
    seat: str
    date: str
    pass_: int
    values: np.ndarray  # (n_successful, len(REQUEST_METRICS)), NaN where a metric is undefined
    n_requests: int
    n_failed: int


@dataclass
class GroupSummary:
    """What the pass table needs of one group: counts, and per metric every request statistic
    (computed whether or not the sample supports it), n and the lag-1 autocorrelation."""

    key: tuple
    seat: str
    date: str
    pass_: int
    n_requests: int
    n_failed: int
    stats: dict  # metric -> (values by statistic, n, lag1)


@dataclass
class GroupStats:
    """What the cells need of one group: per metric, its sorted finite values' statistics."""

    group: RequestGroup
    sorted_values: dict  # metric -> sorted finite values
    lag1: dict  # metric -> lag-1 autocorrelation in send order


class RequestSource(Protocol):
    """Where request records come from (memory or the run store)."""

    def summaries(self) -> Iterator[GroupSummary]:
        """Every group's summary, each once (the run store reads them from its cache)."""

    def group(self, key: tuple) -> RequestGroup:
        """One group in full (for a within-run interval)."""


def failed_mask(requests: pd.DataFrame) -> np.ndarray:
    """True for failed requests: an `error`, or finish_reason error/cancelled/incomplete."""
    failed = np.zeros(len(requests), dtype=bool)
    if "error" in requests:
        failed |= requests["error"].notna().to_numpy()
    if "finish_reason" in requests:
        fr = requests["finish_reason"].astype("string").isin(list(FAILED_REASONS))
        failed |= fr.fillna(False).to_numpy(dtype=bool)
    return failed


def _num(df: pd.DataFrame, col: str) -> np.ndarray:
    if col not in df:
        return np.full(len(df), np.nan)
    return pd.to_numeric(df[col], errors="coerce").astype("Float64").to_numpy(dtype=float, na_value=np.nan)


def metric_values(r: pd.DataFrame) -> np.ndarray:
    """(n, len(REQUEST_METRICS)) metric values of request rows (NaN where undefined)."""
    ttft, e2e, itl, out_tok = _num(r, "ttft_ms"), _num(r, "e2e_latency_ms"), _num(r, "itl_ms"), _num(r, "output_tokens")
    with np.errstate(invalid="ignore", divide="ignore"):
        ok = (out_tok > 1) & (e2e > ttft) & np.isfinite(out_tok) & np.isfinite(e2e) & np.isfinite(ttft)
        dec = np.where(ok, (out_tok - 1) / ((e2e - ttft) / 1000.0), np.nan)
    vals = {"ttft_ms": ttft, "itl_ms": itl, "e2e_latency_ms": e2e, "decode_tok_s_per_stream": dec}
    # a finite value + 0.0: -0.0 is 0.0 (the SQL route sorts them as equal, so neither may be kept)
    return np.column_stack([np.where(np.isfinite(vals[m]), vals[m] + 0.0, np.nan) for m in REQUEST_METRICS])


def request_metrics(requests: pd.DataFrame) -> pd.DataFrame:
    """Per-request metric values of the successful requests, in table order.

    Returns run_id, seat, date, pass, workload, concurrency and one column per metric of
    benchreport.columns.REQUEST_METRICS (NaN where undefined).
    """
    r = requests.loc[~failed_mask(requests)]
    out = r[["run_id", "seat", "date", "pass", "workload", "concurrency"]].copy()
    vals = metric_values(r)
    for j, m in enumerate(REQUEST_METRICS):
        out[m] = vals[:, j]
    return out.reset_index(drop=True)


def _send_order(start: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """Positions of one group in send order: by `start_ms` when every record has it, else as stored."""
    s = start[pos]
    if len(s) and np.all(np.isfinite(s)):
        return pos[np.argsort(s, kind="stable")]
    return pos


class FrameSource:
    """Request groups of the `requests` tidy table held in memory."""

    def __init__(self, requests: pd.DataFrame | None):
        self._groups: list[RequestGroup] = []
        self._index: dict[tuple, int] = {}
        if requests is None or not len(requests):
            return
        r = requests.reset_index(drop=True)
        failed = failed_mask(r)
        conc = pd.array(r["concurrency"], dtype="Int64").fillna(-1).astype("int64")
        keys = pd.DataFrame(
            {"run_id": r["run_id"].astype(str), "workload": r["workload"].astype(str), "_c": np.asarray(conc)}
        )
        values = metric_values(r)
        start = _num(r, "start_ms")
        seat, date, pss = (r[c].to_numpy(dtype=object) for c in ("seat", "date", "pass"))
        for key, pos in sorted(keys.groupby(["run_id", "workload", "_c"], sort=False).indices.items()):
            pos = _send_order(start, np.asarray(pos))
            ok = pos[~failed[pos]]
            self._index[key] = len(self._groups)
            self._groups.append(
                RequestGroup(
                    key=key,
                    seat=str(seat[pos[0]]),
                    date=str(date[pos[0]])[:10],
                    pass_=int(pss[pos[0]]),
                    values=values[ok],
                    n_requests=len(pos),
                    n_failed=int(failed[pos].sum()),
                )
            )

    def groups(self) -> Iterator[RequestGroup]:
        return iter(self._groups)

    def summaries(self) -> Iterator[GroupSummary]:
        return (summarise(g) for g in self._groups)

    def group(self, key: tuple) -> RequestGroup:
        return self._groups[self._index[key]]


def group_stats(g: RequestGroup) -> GroupStats:
    """Sorted finite values and lag-1 autocorrelation of each metric of a group."""
    sorted_values, lag1 = {}, {}
    for j, metric in enumerate(REQUEST_METRICS):
        v = g.values[:, j]
        v = v[np.isfinite(v)]
        if v.shape[0]:
            sorted_values[metric] = np.sort(v)
            lag1[metric] = lag1_autocorrelation(v)
    return GroupStats(g, sorted_values, lag1)


def estimate_key(stat: str) -> str:
    """The key of a statistic's pass estimate in a summary's values: "pass:p90" for a tail
    quantile (`TAIL_STATISTICS`), the statistic itself otherwise."""
    return f"pass:{stat}" if stat in TAIL_STATISTICS else stat


def pass_estimate(sorted_v: np.ndarray, stat: str) -> float:
    """A pass's value of a statistic from its sorted request values: `TAIL_ESTIMATOR` for a tail
    quantile (`TAIL_STATISTICS`), else `statistic` (the mean, the linear median)."""
    if stat in TAIL_STATISTICS:
        return TAIL_ESTIMATORS[TAIL_ESTIMATOR](sorted_v, QUANTILES[stat])
    return statistic(sorted_v, stat)


def _values(sv: np.ndarray) -> dict:
    """Every request statistic of sorted values (linear quantiles), and the tail quantiles'
    pass estimates under `estimate_key`."""
    values = {stat: statistic(sv, stat) for stat in REQUEST_STATISTICS}
    values.update({estimate_key(stat): pass_estimate(sv, stat) for stat in TAIL_STATISTICS})
    return values


def summarise(g: RequestGroup) -> GroupSummary:
    """A group's counts and, per metric, every request statistic (`_values`), n and lag-1
    autocorrelation."""
    gs = group_stats(g)
    stats = {metric: (_values(sv), int(sv.shape[0]), gs.lag1[metric]) for metric, sv in gs.sorted_values.items()}
    return GroupSummary(g.key, g.seat, g.date, g.pass_, g.n_requests, g.n_failed, stats)


def from_requests(stat: str) -> bool:
    """Whether a statistic can be recomputed from request records (the mean or a quantile)."""
    return stat == "mean" or stat in QUANTILES


def supported(stat: str, n: int, th: Thresholds) -> bool:
    """Whether n observations support a statistic: the mean and median from 1, a tail
    quantile q only where n(1 - q) >= min_tail_obs, computed exactly (`tail_supported`)."""
    if n < 1:
        return False
    return tail_supported(n, QUANTILES.get(stat), th.min_tail_obs)


def statistic(sorted_v: np.ndarray, stat: str) -> float:
    """The mean (`sorted_mean`: the left-to-right sum of the sorted values over n, which SQL
    reproduces bit for bit), or numpy's 'linear' quantile (bit-identical to np.quantile), of
    sorted values."""
    if stat == "mean":
        return sorted_mean(sorted_v)
    lo, hi, g = quantile_positions(sorted_v.shape[0], QUANTILES[stat])
    return float(lerp(sorted_v[lo], sorted_v[hi], g))


def column_metric(g: RequestGroup, metric: str) -> np.ndarray:
    """One metric's finite values of a group, in send order."""
    v = g.values[:, REQUEST_METRICS.index(metric)]
    return v[np.isfinite(v)]
