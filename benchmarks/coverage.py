"""Coverage of the confidence intervals the statistics layer gives, by simulation.

Usage:  python benchmarks/coverage.py [--quick] [--reps N] [--n-boot B] [--sigma S]
                                     [--method BCa|percentile] [--seed S] [--jobs J] [--strict]
        python benchmarks/coverage.py --verdicts [verdict_study.py options]

Prints a markdown table: for each interval, statistic and sample size, the
share of simulated data sets whose 95% CI covers the true value. Rows marked
"given" are the sizes at which benchreport.stats.cells() gives that interval
(n >= min_obs for means and medians, n(1-q) >= min_tail_obs for tail
quantiles, >= 3 passes for the t-interval over passes, >= min_passes_bootstrap
for the bootstrap over passes); their coverage should be 93-97%. Rows marked
"not given" show why: below those sizes the interval under-covers and cells()
gives none (or the t-interval instead, flagged sample.small_n).

Models
------
requests: skewed latencies, lognormal(0, sigma), sigma = 0.5 by default (true
    mean exp(sigma^2/2), true q-quantile exp(sigma z_q)); one pass of n requests.
passes:   each pass's figure ~ Normal(100, 5) (a normal between-pass model);
    k passes.

Monte-Carlo error: with R replications the standard error of a coverage near
95% is sqrt(.95 * .05 / R) (0.5 points at the default R = 2000, 1.3 at R = 300
with --quick). Each row has its own random stream (seed, row number), so the
table does not depend on --jobs. The default run takes about a minute on 2 cores.
The bootstrap uses `--n-boot` resamples (default 2000; coverage barely depends
on it above 1000, and the CI endpoints' own Monte-Carlo noise is included).

Since issue 30 the within-run interval of a single pass in cells() is no longer a
bootstrap but the EWC / Woodruff interval (benchreport.stats.within.series_interval), measured
under correlation by benchmarks/within_study.py; the bootstrap rows here check
bootstrap_group itself, still used by the library's public bootstrap API.

The intervals above are checked one estimator at a time, on data drawn the way
each estimator assumes. `--verdicts` runs the end-to-end study instead
(`benchmarks/verdict_study.py`, docs/statistics.md): native run files with
run-to-run variation and correlated requests, analysed through
`benchreport.pipeline.analyse_paths`, counting false `better`/`worse` verdicts,
cell CI coverage against the population value, the report-wide false-verdict
rate of a 10-seat fleet and power at a true 5% difference.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchreport.stats import bootstrap_group, t_interval  # noqa: E402
from benchreport.stats.common import tail_count, tail_supported  # noqa: E402
from benchreport.thresholds import DEFAULT  # noqa: E402

STATS = ("mean", "p50", "p90", "p95", "p99")
Q = {"p50": 0.5, "p90": 0.9, "p95": 0.95, "p99": 0.99}


def true_value(stat: str, sigma: float) -> float:
    if stat == "mean":
        return math.exp(sigma**2 / 2)
    return math.exp(sigma * stats.norm.ppf(Q[stat]))


def given_over_requests(stat: str, n: int, th=DEFAULT) -> bool:
    if n < th.min_obs:
        return False
    q = Q.get(stat)
    return tail_supported(n, q, th.min_tail_obs)


def request_rows(n: int, reps: int, n_boot: int, method: str, seed: tuple, wanted: set, sigma: float) -> list[dict]:
    """Bootstrap over the requests of one pass: all statistics from each simulated pass."""
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    names = tuple(s for s in STATS if s in wanted)
    cover = {s: 0 for s in names}
    valid = {s: 0 for s in names}
    widths = {s: [] for s in names}
    t_cover, t_widths = 0, []
    for _ in range(reps):
        x = rng.lognormal(0.0, sigma, n)
        g = bootstrap_group(x, names, method=method, n_resamples=n_boot, rng=rng, warn=False)
        for k, s in enumerate(names):
            lo, hi = g.low[0, k], g.high[0, k]
            if np.isfinite(lo) and np.isfinite(hi):
                valid[s] += 1
                cover[s] += lo <= true_value(s, sigma) <= hi
                widths[s].append((hi - lo) / true_value(s, sigma))
        if "mean" in names and n < DEFAULT.min_obs:
            t = t_interval(x, level=0.95)
            t_cover += t.low <= true_value("mean", sigma) <= t.high
            t_widths.append((t.high - t.low) / true_value("mean", sigma))
    rows = []
    for s in names:
        q = Q.get(s)
        rows.append(
            dict(
                interval=f"bootstrap {method} over requests",
                stat=s,
                n=n,
                tail="" if q is None or q <= 0.5 else f"{float(tail_count(n, q)):g}",
                given=given_over_requests(s, n),
                cover=cover[s],
                valid=valid[s],
                reps=reps,
                width=float(np.median(widths[s])) if widths[s] else math.nan,
            )
        )
    if "mean" in names and n < DEFAULT.min_obs:
        rows.append(
            dict(
                interval="t (n<min_obs) over requests",
                stat="mean",
                n=n,
                tail="",
                given="flagged",
                cover=t_cover,
                valid=reps,
                reps=reps,
                width=float(np.median(t_widths)),
            )
        )
    return rows


def pass_rows(k: int, reps: int, n_boot: int, method: str, seed: tuple) -> list[dict]:
    """k passes from a normal between-pass model: t over passes and bootstrap over passes."""
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    mu, tau = 100.0, 5.0
    tc, bc, bv, tw, bw = 0, 0, 0, [], []
    for _ in range(reps):
        v = rng.normal(mu, tau, k)
        t = t_interval(v, level=0.95)
        tc += t.low <= mu <= t.high
        tw.append((t.high - t.low) / mu)
        g = bootstrap_group(v, ("mean",), method=method, n_resamples=n_boot, rng=rng, warn=False)
        lo, hi = g.low[0, 0], g.high[0, 0]
        if np.isfinite(lo) and np.isfinite(hi):
            bv += 1
            bc += lo <= mu <= hi
            bw.append((hi - lo) / mu)
    th = DEFAULT
    return [
        dict(
            interval="t over passes",
            stat="mean",
            n=k,
            tail="",
            given=3 <= k < th.min_passes_bootstrap,
            cover=tc,
            valid=reps,
            reps=reps,
            width=float(np.median(tw)),
        ),
        dict(
            interval=f"bootstrap {method} over passes",
            stat="mean",
            n=k,
            tail="",
            given=k >= th.min_passes_bootstrap,
            cover=bc,
            valid=bv,
            reps=reps,
            width=float(np.median(bw)) if bw else math.nan,
        ),
    ]


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if "--verdicts" in args:
        args.remove("--verdicts")
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import verdict_study

        verdict_study.main(args)
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer replications (a few seconds)")
    ap.add_argument("--reps", type=int, default=None, help="replications per row (default 2000; 300 with --quick)")
    ap.add_argument("--n-boot", type=int, default=None, help="bootstrap resamples (default 2000; 1000 with --quick)")
    ap.add_argument("--method", default="BCa", choices=["BCa", "percentile"])
    ap.add_argument("--sigma", type=float, default=0.5, help="log-scale SD of the request model")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2, help="worker processes")
    ap.add_argument("--strict", action="store_true", help="exit 1 if a given interval covers outside 93-97%%")
    ap.add_argument(
        "--verdicts",
        action="store_true",
        help="run the verdict study (benchmarks/verdict_study.py) with the other options instead",
    )
    a = ap.parse_args(argv)
    reps = a.reps or (300 if a.quick else 2000)
    n_boot = a.n_boot or (1000 if a.quick else 2000)
    t0 = time.perf_counter()

    plan = {  # n -> statistics worth showing at that n
        5: {"mean", "p50"},
        10: {"mean", "p50"},
        20: {"mean", "p50"},
        50: {"mean", "p50", "p90"},
        100: {"p90", "p95"},
        200: {"mean", "p50", "p90", "p95", "p99"},
        400: {"p95", "p99"},
        1000: {"p99"},
    }
    if a.quick:
        plan[1000] = set()
    tasks = [
        (request_rows, (n, reps, n_boot, a.method, (a.seed, i), wanted, a.sigma))
        for i, (n, wanted) in enumerate(plan.items())
        if wanted
    ]
    tasks += [(pass_rows, (k, reps, n_boot, a.method, (a.seed, 100 + i))) for i, k in enumerate((2, 3, 5, 10, 20, 40))]
    # largest first, so two workers finish together
    order = sorted(range(len(tasks)), key=lambda i: -(tasks[i][1][0] if tasks[i][0] is request_rows else 1))
    results: dict[int, list] = {}
    if a.jobs > 1:
        with ProcessPoolExecutor(max_workers=a.jobs) as ex:
            futs = {i: ex.submit(tasks[i][0], *tasks[i][1]) for i in order}
            results = {i: f.result() for i, f in futs.items()}
    else:
        results = {i: tasks[i][0](*tasks[i][1]) for i in order}
    rows = [r for i in range(len(tasks)) for r in results[i]]

    print(
        f"Coverage of nominal 95% intervals: {reps} replications per row, {n_boot} bootstrap "
        f"resamples, requests ~ lognormal(0, {a.sigma}), passes ~ Normal(100, 5), seed {a.seed}; "
        f"min_obs={DEFAULT.min_obs}, min_tail_obs={DEFAULT.min_tail_obs}, "
        f"min_passes_bootstrap={DEFAULT.min_passes_bootstrap}.\n"
    )
    print(
        "| interval | statistic | n (requests or passes) | n(1-q) | cells() gives it | coverage | ± MC SE | "
        "undefined | median width / true | in 93-97%? |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    bad = 0
    for r in rows:
        cov = r["cover"] / r["valid"] if r["valid"] else math.nan
        se = math.sqrt(0.95 * 0.05 / max(r["valid"], 1))
        given = r["given"]
        label = "yes" if given is True else ("yes, flagged" if given == "flagged" else "no")
        band = ""
        if given is True:
            band = "ok" if 0.93 <= cov <= 0.97 else "**no**"
            bad += band != "ok"
        undefined = r["reps"] - r["valid"]
        print(
            f"| {r['interval']} | {r['stat']} | {r['n']} | {r['tail']} | {label} | {100 * cov:.1f}% | "
            f"{100 * se:.1f} | {undefined} | {r['width']:.3f} | {band} |"
        )
    print(f"\n{bad} given interval(s) outside 93-97%. Elapsed {time.perf_counter() - t0:.0f} s.")
    return 1 if (a.strict and bad) else 0


if __name__ == "__main__":
    raise SystemExit(main())
