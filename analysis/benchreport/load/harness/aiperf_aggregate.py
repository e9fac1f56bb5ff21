"""AIPerf's aggregates over trials (`aggregate/...aggregate.json`, a sweep's `...sweep.json`),
checked against the trials read: an aggregate is not a result of its own (the trials are the
passes), but a disagreement between it and the trials says a trial is missing or foreign.
Split from aiperf.py, which calls `check_aggregate` for every aggregate file it recognises.
"""

from __future__ import annotations

import re

from benchreport.load.harness import SourceFile
from benchreport.load.harness._common import (
    Check,
    Draft,
    dig,
    first,
    ms_factor,
    num,
    positive_int,
    rate_ok,
    request_values,
    statistic_of,
    successful_count,
)

#: the aggregate figures checked against the trials: (aggregate key, native metric, statistic)
AGGREGATE_CHECKS = (
    ("time_to_first_token_avg", "ttft_ms", "mean"),
    ("time_to_first_token_p50", "ttft_ms", "p50"),
    ("inter_token_latency_avg", "itl_ms", "mean"),
    ("inter_token_latency_p50", "itl_ms", "p50"),
    ("request_latency_avg", "e2e_latency_ms", "mean"),
    ("request_latency_p50", "e2e_latency_ms", "p50"),
    ("output_token_throughput_avg", "output_tok_s", "mean"),
    ("request_count_avg", "requests", "count"),
)


def aggregation(doc) -> str | None:
    """AIPerf's aggregation type ("confidence" over trials, "sweep" over parameter values), or None."""
    if not isinstance(doc, dict):
        return None
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    kind = first(doc.get("aggregation_type"), meta.get("aggregation_type"))
    if (
        kind is None
        and ("num_profile_runs" in meta or "num_profile_runs" in doc)
        and (isinstance(doc.get("metrics"), dict) or isinstance(doc.get("per_combination_metrics"), list))
    ):
        kind = "confidence"
    return str(kind)[:40] if kind is not None else None


def check_aggregate(agg: SourceFile, drafts: list[Draft]) -> None:
    """Recompute an AIPerf aggregate (mean over trials of each trial's figure) from the trials read.

    AIPerf's aggregate of a figure is the mean of the trials' figures (aiperf's
    ConfidenceAggregator). Ours: each trial's TTFT, ITL and request latency (mean and p50)
    from its request records (linear-interpolated percentiles, as AIPerf's numpy), else its
    summary; output throughput from its summary; request counts from its records. The result
    lands on the trials as a note (agreement) or a check the `import.figure_mismatch` flag reads.
    """
    root = _invocation_folder(agg)
    trials = [d for d in drafts if _under(d.source.path, root / "profile_runs")]
    if not trials:  # an aggregate beside its run folders (run_0001/, run_1/ ...)
        trials = [
            d
            for d in drafts
            if _under(d.source.path, root) and _RUN_FOLDER.match(d.source.path.relative_to(root).parts[0])
        ]
    doc = agg.doc
    if aggregation(doc) == "sweep":
        combos = [
            (c.get("parameters"), c.get("metrics"))
            for c in doc.get("per_combination_metrics") or []
            if isinstance(c, dict)
        ]
        runs_per = positive_int(dig(doc, "metadata", "num_trials_per_value"))
    else:
        combos = [(dig(doc, "metadata", "variation_values"), doc.get("metrics"))]
        runs_per = positive_int(
            first(dig(doc, "metadata", "num_successful_runs"), dig(doc, "metadata", "num_profile_runs"))
        )
    where = agg.relative if agg.root is not None else agg.path.name
    for params, metrics in combos:
        if not isinstance(metrics, dict):
            continue
        conc = _concurrency_of(params)
        mine = [d for d in trials if conc is None or _draft_concurrency(d) == conc]
        if mine:
            _compare(mine, metrics, runs_per, f"AIPerf's aggregate over trials ({where})")


#: a run folder beside an aggregate that is not in an `aggregate/` folder
_RUN_FOLDER = re.compile(r"^(run|trial)_\d+$")


def _invocation_folder(agg: SourceFile):
    """The folder of the invocation an aggregate belongs to: the parent of its `aggregate/` folder,
    else the aggregate's own folder (an `..._aggregate.json` written beside the run folders)."""
    for parent in agg.path.parents:
        if parent.name == "aggregate":
            return parent.parent
    return agg.path.parent


def _under(path, folder) -> bool:
    """Whether `path` lies inside `folder` (lexically)."""
    try:
        path.relative_to(folder)
    except ValueError:
        return False
    return True


def _concurrency_of(params) -> int | None:
    """The concurrency of an aggregate's variation ({"phases.profiling.concurrency": C} or {"concurrency": C})."""
    if not isinstance(params, dict):
        return None
    for k, v in params.items():
        if str(k).split(".")[-1] == "concurrency":
            return positive_int(v)
    return None


def _draft_concurrency(d: Draft) -> int | None:
    """The concurrency of a trial run (from its first measurement or request that has one)."""
    for m in d.measurements + d.requests:
        if m.get("concurrency") is not None:
            return m["concurrency"]
    return None


def _compare(trials: list[Draft], metrics: dict, runs_per: int | None, against: str) -> None:
    """Checks of one aggregate figure set against the mean over `trials`, put on every trial."""
    first_trial = min(trials, key=lambda d: (d.timestamp or 0.0, d.source.relative))
    wl = next((m["workload"] for m in first_trial.measurements + first_trial.requests), "")
    conc = _draft_concurrency(first_trial)
    checks = []
    if runs_per is not None:
        checks.append(Check(against, wl, conc, "trials", "count", float(runs_per), float(len(trials)), "trials found"))
    for key, metric, stat in AGGREGATE_CHECKS:
        theirs = _aggregate_value(metrics.get(key), metric)
        per_trial = [_trial_figure(d, metric, stat) for d in trials]
        if theirs is None or any(v is None for v in per_trial):
            continue
        ours = sum(per_trial) / len(per_trial)
        basis = "latencies from each trial's request records, the rest from its summary, then the mean over trials"
        checks.append(Check(against, wl, conc, metric, stat, theirs, ours, basis))
    for d in trials:
        d.checks.extend(checks if d is first_trial else [c for c in checks if c.agrees])


def _aggregate_value(entry, metric: str) -> float | None:
    """An aggregate entry's mean across trials, in the native unit (None if absent or unit unknown)."""
    if not isinstance(entry, dict):
        return None
    v = num(entry.get("mean"))
    if v is None:
        return None
    if metric.endswith("_ms"):
        factor = ms_factor(entry.get("unit"))
        return v * factor if factor is not None else None
    if metric == "output_tok_s":
        return v if rate_ok(entry.get("unit"), "tok") else None
    return v


def _trial_figure(d: Draft, metric: str, stat: str) -> float | None:
    """A trial's figure: from its request records where it has them, else its summary."""
    if metric == "requests":
        n = successful_count(d.requests)
        return float(n) if d.requests else _measured(d, "ttft_ms", "mean", "n")
    if metric.endswith("_ms") and d.requests:
        return statistic_of(request_values(d.requests, metric), stat)
    return _measured(d, metric, stat)


def _measured(d: Draft, metric: str, stat: str, key: str = "value") -> float | None:
    """A field (`value`, `n`) of the run's measurement of (metric, statistic), or None."""
    m = next((m for m in d.measurements if m["metric"] == metric and m.get("statistic") == stat), None)
    return float(m[key]) if m is not None and m.get(key) is not None else None
