"""Which within-run interval? The candidates of issue 30 side by side, at the level of one series.

The choice study behind `benchreport.stats.within.series_interval` (the end-to-end check through
the command line is benchmarks/within_study.py). Each replicate is one pass of n values in send
order, value = 40 exp(0.5 x), x a stationary Gaussian AR(1) series with lag-1 correlation rho;
the interval is for the mean (true value 40 exp(0.125)) and, where a method has one, the p90
(true 40 exp(0.5 z_0.9)). Candidates:

* ``pretest``: the rule before issue 30 (Politis-White check `dependence_seen`; BCa over
  requests when it sees nothing, else the circular block bootstrap, percentile);
* ``cbb``: the circular block bootstrap with the Politis-White block always (no pre-test),
  percentile (`bootstrap.bootstrap_group(block=...)`, checked against arch in the tests);
* ``nw``: the Newey-West HAC standard error of statsmodels (OLS on a constant, cov_type "HAC",
  maxlags floor(4 (n/100)^(2/9)), small-sample correction) with t on n - 1 df;
* ``batch``: batch means over 10 contiguous batches, t on 9 df (Schmeiser 1982);
* ``ewc``: the interval adopted, `series_interval` (EWC long-run variance, B = max(2, n // 50),
  t_B; Woodruff for the p90).

    python benchmarks/within_methods.py [--reps 400] [--n-boot 1000] [--sizes 24 100 1000]

Coverage with Wilson 95% intervals (statsmodels proportion_confint); results in
docs/statistics.md (Issue 30, within-run intervals).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

sys.path.insert(0, str(Path(__file__).resolve().parent))
from within_study import ar1  # noqa: E402

from benchreport.stats.bootstrap import bootstrap_group  # noqa: E402
from benchreport.stats.within import block_length, block_size, dependence_seen, series_interval  # noqa: E402

TRUE = {"mean": 40.0 * math.exp(0.125), "p90": 40.0 * math.exp(0.5 * float(stats.norm.ppf(0.9)))}


def _boot(x, stat, block, n_boot, rng):
    method = "BCa" if block == 1 else "percentile"
    g = bootstrap_group(x, (stat,), method=method, n_resamples=n_boot, rng=rng, warn=False, block=block)
    return float(g.low[0, 0]), float(g.high[0, 0])


def intervals(x: np.ndarray, n_boot: int, rng) -> dict:
    """{(method, statistic): (low, high)} for one series."""
    n = len(x)
    out = {}
    b = block_size(block_length(x))
    pre = b if dependence_seen(x) else 1
    tail = n >= 50 and round(n * 0.1, 9) >= 10
    for stat in ("mean", "p90") if tail else ("mean",):
        if n >= 50 or stat == "mean":
            out[("pretest", stat)] = _boot(x, stat, pre, n_boot, rng)
            out[("cbb", stat)] = _boot(x, stat, b, n_boot, rng)
        s = series_interval(x, 0.9 if stat == "p90" else None)
        out[("ewc", stat)] = (s.low, s.high)
    lags = int(math.floor(4 * (n / 100) ** (2 / 9)))
    fit = sm.OLS(x, np.ones(n)).fit(cov_type="HAC", cov_kwds={"maxlags": lags, "use_correction": True})
    t = float(stats.t.ppf(0.975, n - 1))
    out[("nw", "mean")] = (float(fit.params[0] - t * fit.bse[0]), float(fit.params[0] + t * fit.bse[0]))
    k = 10 if n >= 20 else 4
    means = x[: n // k * k].reshape(k, -1).mean(axis=1)
    half = float(stats.t.ppf(0.975, k - 1) * means.std(ddof=1) / math.sqrt(k))
    out[("batch", "mean")] = (float(x.mean() - half), float(x.mean() + half))
    return out


def run(n: int, rho: float, reps: int, n_boot: int, seed: int) -> dict:
    rng = np.random.default_rng([seed, n, int(round(rho * 1000))])
    hits: dict = {}
    for _ in range(reps):
        x = 40.0 * np.exp(0.5 * ar1(rng, rho, n, 1)[0])
        for key, (lo, hi) in intervals(x, n_boot, rng).items():
            h = hits.setdefault(key, [0, 0])
            h[0] += int(lo <= TRUE[key[1]] <= hi)
            h[1] += 1
    return hits


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--sizes", type=int, nargs="+", default=[24, 100, 1000])
    ap.add_argument("--rhos", type=float, nargs="+", default=[0.0, 0.2, 0.5, 0.8])
    ap.add_argument("--seed", type=int, default=30)
    ap.add_argument("--quick", action="store_true", help="100 replicates, sizes 24 and 100")
    a = ap.parse_args(argv)
    reps, sizes = (100, [24, 100]) if a.quick else (a.reps, a.sizes)
    methods = ("pretest", "cbb", "nw", "batch", "ewc")
    print("| n | rho | statistic | " + " | ".join(methods) + " |")
    print("|---|---|---|" + "---|" * len(methods))
    t0 = time.perf_counter()
    for n in sizes:
        for rho in a.rhos:
            hits = run(n, rho, reps, a.n_boot, a.seed)
            for stat in ("mean", "p90"):
                cells = []
                for m in methods:
                    k, of = hits.get((m, stat), (0, 0))
                    if not of:
                        cells.append("-")
                        continue
                    lo, hi = proportion_confint(k, of, method="wilson")
                    cells.append(f"{k / of:.1%} [{lo:.1%}, {hi:.1%}]")
                if any(c != "-" for c in cells):
                    print(f"| {n} | {rho:g} | {stat} | " + " | ".join(cells) + " |", flush=True)
    print(
        f"\n{reps} replicates per row, {a.n_boot} resamples, seed {a.seed}, {time.perf_counter() - t0:.0f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
