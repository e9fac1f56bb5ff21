"""Figures excluded from results, decided once with the user's thresholds, as data.

A prefill figure that is a prefix-cache hit is not prefill (spec/flags.md, trap.prefix_cache).
`decide_exclusions` says which figures those are; the statistics drop them (`drop_excluded`)
and the trap.prefix_cache findings are written from the same decision
(`compute_flags(excluded=...)`), so a figure is left out of the cells exactly when a flag
says why.

    excluded = decide_exclusions(tables, thresholds=th)
    kept = drop_excluded(tables, excluded)            # -> the statistics
    flags = compute_flags(tables, ..., excluded=excluded, thresholds=th)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pandas as pd

from benchreport.thresholds import Thresholds

from ._common import int_or_none, na, plain, true_mask
from .findings import Record

__all__ = [
    "CacheHit",
    "CachedRun",
    "Exclusions",
    "EXCLUSION_COLUMNS",
    "PREFILL_METRICS",
    "CACHE_SENSITIVE_METRICS",
    "decide_exclusions",
    "excluded_measurements",
    "drop_excluded",
]

PREFILL_METRICS = ("prefill_tok_s",)
#: figures a cache hit falsifies when the prompt was not fresh
CACHE_SENSITIVE_METRICS = ("prefill_tok_s", "ttft_ms")


@dataclass(frozen=True, kw_only=True)
class CachedRun(Record):
    """A run whose requests report cached prompt tokens (a record of trap.prefix_cache evidence)."""

    run_id: str
    requests_with_cache_hits: int
    requests: int
    cached_prompt_tokens: int
    prompt_tokens: int | None
    seat: str
    date: str


@dataclass(frozen=True)
class CacheHit:
    """One figure decided to be a prefix-cache hit (excluded from results).

    `reasons`: "not_fresh" (its prompt was not fresh), "cached_tokens" (its run's requests
    report cached prompt tokens), "ratio" (more than cache_ratio times the `reference`).
    """

    seat: str
    run_id: str
    date: str
    pass_: int
    workload: str | None
    concurrency: int | None
    metric: str
    statistic: str | None
    value: float
    fresh_prompt: bool | None
    context_tokens: int | None
    reasons: tuple[str, ...]
    reference: float | None = None
    reference_kind: str | None = None
    ratio: float | None = None

    def key(self) -> tuple:
        """How the figure is found among the measurements."""
        return (self.run_id, self.workload, self.concurrency, self.metric, self.statistic, self.value)


EXCLUSION_COLUMNS = [f.name for f in dataclasses.fields(CacheHit)]


@dataclass(frozen=True)
class Exclusions:
    """The decision: which figures are cache hits, which runs report cached prompt tokens,
    and the `cache_ratio` it was made with."""

    hits: tuple[CacheHit, ...]
    cached_runs: tuple[CachedRun, ...]
    cache_ratio: float

    def mask(self, measurements: pd.DataFrame) -> pd.Series:
        """Boolean mask over `measurements`: True for the excluded figures."""
        return _mask(measurements, {h.key() for h in self.hits})

    def to_frame(self) -> pd.DataFrame:
        """The hits as a table (columns `EXCLUSION_COLUMNS`)."""
        return pd.DataFrame([dataclasses.asdict(h) for h in self.hits], columns=EXCLUSION_COLUMNS)

    def cached_run(self, run_id: str) -> CachedRun | None:
        return next((r for r in self.cached_runs if r.run_id == run_id), None)


def decide_exclusions(tables, *, thresholds: Thresholds) -> Exclusions:
    """Which figures of `tables.measurements` are prefix-cache hits.

    Any of: the figure says its prompt was not fresh (`fresh_prompt` false; prefill and
    TTFT); its run's requests report cached prompt tokens (prefill); it is more than
    `thresholds.cache_ratio` times the same seat's fresh-prompt prefill (the median of the
    figures marked fresh; without any, the median of the seat's other prefill figures).
    The seeds' 95,941 against 4,711 tok/s is 20 times.
    """
    cached = _cached_runs(tables.requests)
    m = tables.measurements
    reasons: dict[int, dict] = {}
    if m is not None and not m.empty:
        _marked(m, set(cached), reasons)
        _ratio(m, float(thresholds.cache_ratio), reasons)
    hits = tuple(_hit(m.loc[idx], r) for idx, r in sorted(reasons.items()))
    return Exclusions(hits, tuple(cached[k] for k in sorted(cached)), float(thresholds.cache_ratio))


def _cached_runs(req: pd.DataFrame | None) -> dict[str, CachedRun]:
    if req is None or req.empty:
        return {}
    hit = true_mask(req["cached_prompt_tokens"].astype("Int64").gt(0))
    hit_runs = set(req.loc[hit.to_numpy(), "run_id"].astype(str))
    out = {}
    sub = req[req["run_id"].astype(str).isin(hit_runs)]
    sub_hit = hit.loc[sub.index]
    for run_id, g in sub.groupby("run_id"):
        gh = g[sub_hit.loc[g.index].to_numpy()]
        out[str(run_id)] = CachedRun(
            run_id=str(run_id),
            requests_with_cache_hits=int(len(gh)),
            requests=int(len(g)),
            cached_prompt_tokens=int(gh["cached_prompt_tokens"].sum()),
            prompt_tokens=plain(g["prompt_tokens"].sum(min_count=1)),
            seat=str(g["seat"].iloc[0]),
            date=str(g["date"].iloc[0]),
        )
    return out


def _marked(m: pd.DataFrame, cached_run_ids: set, reasons: dict) -> None:
    """Figures marked not fresh, and prefill figures of runs whose requests hit the cache."""
    not_fresh = m["fresh_prompt"].astype("boolean").eq(False).fillna(False).astype(bool).to_numpy()
    metric = m["metric"].astype(str)
    sensitive = metric.isin(CACHE_SENSITIVE_METRICS).to_numpy()
    prefill = metric.isin(PREFILL_METRICS).to_numpy()
    in_cached = m["run_id"].astype(str).isin(cached_run_ids).to_numpy()
    for idx in m.index[sensitive & not_fresh]:
        reasons.setdefault(idx, {"reasons": []})["reasons"].append("not_fresh")
    for idx in m.index[prefill & in_cached]:
        reasons.setdefault(idx, {"reasons": []})["reasons"].append("cached_tokens")


def _ratio(m: pd.DataFrame, ratio_limit: float, reasons: dict) -> None:
    """Prefill figures more than `ratio_limit` times the seat's fresh (else other) prefill."""
    is_fresh = m["fresh_prompt"].astype("boolean").eq(True).fillna(False).astype(bool)
    pre = m[m["metric"].astype(str).isin(PREFILL_METRICS).to_numpy()]
    for _seat, g in pre.groupby("seat"):
        g_fresh = is_fresh.loc[g.index].to_numpy()
        fresh_vals = g.loc[g_fresh, "value"]
        for idx, value, fr in zip(g.index, g["value"].to_numpy(dtype=float), g_fresh):
            if fr:
                continue  # a figure stated fresh is the reference, not the suspect
            if len(fresh_vals):
                ref, ref_kind = float(fresh_vals.median()), "fresh"
            else:
                others = g["value"].drop(index=idx)
                if others.empty:
                    continue
                ref, ref_kind = float(others.median()), "other"
            if ref > 0 and value > ratio_limit * ref:
                r = reasons.setdefault(idx, {"reasons": []})
                r["reasons"].append("ratio")
                r.update({"reference": ref, "reference_kind": ref_kind, "ratio": value / ref})


def _hit(row, r: dict) -> CacheHit:
    return CacheHit(
        str(row["seat"]),
        str(row["run_id"]),
        str(row["date"]),
        int(row["pass"]),
        na(row["workload"]),
        int_or_none(row["concurrency"]),
        str(row["metric"]),
        na(row["statistic"]),
        float(row["value"]),
        plain(row["fresh_prompt"]),
        plain(row["context_tokens"]),
        tuple(r["reasons"]),
        r.get("reference"),
        r.get("reference_kind"),
        r.get("ratio"),
    )


def _mask(m: pd.DataFrame, keys: set) -> pd.Series:
    if m.empty or not keys:
        return pd.Series(False, index=m.index, dtype=bool)
    rows = zip(
        m["run_id"].astype(str),
        [na(x) for x in m["workload"]],
        [int_or_none(x) for x in m["concurrency"]],
        m["metric"].astype(str),
        [na(x) for x in m["statistic"]],
        m["value"].astype(float),
    )
    return pd.Series([k in keys for k in rows], index=m.index, dtype=bool)


def excluded_measurements(tables, excluded) -> pd.Series:
    """Boolean mask over `tables.measurements`: True for the figures excluded from results.

    `excluded` is the decision (`Exclusions`) or a flags table, whose trap.prefix_cache
    flags list the figures in `evidence["excluded"]` (for flags read back from flags.json).
    """
    if isinstance(excluded, Exclusions):
        return excluded.mask(tables.measurements)
    if not isinstance(excluded, pd.DataFrame):
        raise TypeError(f"`excluded` must be Exclusions or a flags DataFrame; got {type(excluded).__name__}")
    entries = []
    for ev in excluded.loc[excluded["code"] == "trap.prefix_cache", "evidence"] if len(excluded) else []:
        entries.extend((ev or {}).get("excluded", []))
    keys = {
        (e["run_id"], e["workload"], e["concurrency"], e["metric"], e["statistic"], float(e["value"])) for e in entries
    }
    return _mask(tables.measurements, keys)


def drop_excluded(tables, excluded):
    """A copy of the tables without the measurements `excluded` marks (`excluded_measurements`)."""
    mask = excluded_measurements(tables, excluded)
    return dataclasses.replace(tables, measurements=tables.measurements[~mask.to_numpy()].reset_index(drop=True))
