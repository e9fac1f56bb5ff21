"""CI engine: benchreport's batched bootstrap vs a loop calling scipy.stats.bootstrap per cell.

Cells are the within-pass bootstrap cells of the fleet data set: (seat, concurrency, pass)
groups of requests x metrics (ttft_ms, itl_ms, e2e_latency_ms, decode_tok_s_per_stream) x
statistics (mean, p50, p90, p95, p99), BCa, 10,000 resamples. scipy is run on a
deterministic sample of groups (all of them would take an hour); ours runs on the same
groups (for the ratio and the agreement check) and on all groups (for the absolute time).

    python benchmarks/bench_ci.py DATA_DIR [--groups 6] [--n-resamples 10000]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import scipy.stats

from benchreport.load import load
from benchreport.stats.bootstrap import bootstrap_group
from benchreport.stats.cells import request_metrics
from benchreport.tables import build_tables

METRICS = ["ttft_ms", "itl_ms", "e2e_latency_ms", "decode_tok_s_per_stream"]
STATISTICS = ["mean", "p50", "p90", "p95", "p99"]


def scipy_statistic(name):
    if name == "mean":
        return lambda x, axis=-1: np.mean(x, axis=axis)
    q = {"p50": 0.5, "p90": 0.9, "p95": 0.95, "p99": 0.99}[name]
    return lambda x, axis=-1: np.quantile(x, q, axis=axis)


def groups_of(folder):
    tables = build_tables(load([folder], progress=False))
    per_request = request_metrics(tables.requests)
    out = []
    for _, g in per_request.groupby(["seat", "concurrency", "pass"], sort=True):
        out.append(np.vstack([g[m].to_numpy(dtype=float) for m in METRICS]))
    return out


def ours(groups, n_resamples, seed=0):
    results = []
    for i, x in enumerate(groups):
        res = bootstrap_group(
            x, STATISTICS, method="BCa", n_resamples=n_resamples, rng=np.random.default_rng([seed, i]), warn=False
        )
        results.append((res.low, res.high))
    return results


def alternative(groups, n_resamples, seed=0):
    results = []
    for i, x in enumerate(groups):
        low = np.empty((len(METRICS), len(STATISTICS)))
        high = np.empty_like(low)
        for j in range(len(METRICS)):
            for k, stat in enumerate(STATISTICS):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ci = scipy.stats.bootstrap(
                        (x[j],),
                        scipy_statistic(stat),
                        n_resamples=n_resamples,
                        method="BCa",
                        vectorized=True,
                        rng=np.random.default_rng([seed, i, j, k]),
                    ).confidence_interval
                low[j, k], high[j, k] = ci.low, ci.high
        results.append((low, high))
    return results


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data")
    ap.add_argument("--groups", type=int, default=6, help="groups timed with scipy (x20 cells each)")
    ap.add_argument("--n-resamples", type=int, default=10000)
    args = ap.parse_args(argv)
    groups = groups_of(args.data)
    pick = np.linspace(0, len(groups) - 1, args.groups).round().astype(int)
    sample = [groups[i] for i in pick]
    n_cells = len(sample) * len(METRICS) * len(STATISTICS)
    ours(sample[:1], 1000)  # warm-up (imports, first allocation)
    t0 = time.perf_counter()
    mine = ours(sample, args.n_resamples)
    t_ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    theirs = alternative(sample, args.n_resamples)
    t_alt = time.perf_counter() - t0
    t0 = time.perf_counter()
    ours(groups, args.n_resamples)
    t_all = time.perf_counter() - t0
    # agreement: endpoint differences relative to the CI width (Monte-Carlo error is a few %)
    rel = []
    for (l1, h1), (l2, h2) in zip(mine, theirs):
        width = np.maximum(h2 - l2, 1e-12)
        rel.append(np.abs(np.concatenate([(l1 - l2) / width, (h1 - h2) / width]).ravel()))
    rel = np.concatenate(rel)
    rel = rel[np.isfinite(rel)]
    result = {
        "cells": n_cells,
        "ours_s": t_ours,
        "scipy_s": t_alt,
        "ratio": t_alt / t_ours,
        "all_groups": len(groups),
        "all_cells": len(groups) * len(METRICS) * len(STATISTICS),
        "ours_all_s": t_all,
        "median_rel_diff": float(np.median(rel)),
        "p95_rel_diff": float(np.quantile(rel, 0.95)),
    }
    print(
        f"CI engine, {n_cells} cells (n=~200, BCa, {args.n_resamples} resamples): ours {t_ours:.2f} s, "
        f"scipy.stats.bootstrap loop {t_alt:.2f} s, ratio {result['ratio']:.1f}x; "
        f"all {result['all_cells']} cells: ours {t_all:.1f} s; endpoint difference / CI width: "
        f"median {result['median_rel_diff']:.3f}, p95 {result['p95_rel_diff']:.3f}"
    )
    return result


if __name__ == "__main__":
    main()
