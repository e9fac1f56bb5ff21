"""The block-bootstrap pieces kept in benchreport.stats.within and .bootstrap, against arch.

The within-run interval of a single pass no longer uses them (issue 30: the EWC / Woodruff
interval, tests/test_stats_cells.py); `bootstrap_group(block=...)` and `block_length` remain
public, and benchmarks/within_methods.py measures them as a candidate.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.signal import lfilter

from benchreport.stats.bootstrap import bootstrap_group
from benchreport.stats.within import block_length, block_size


def _ar1(seed: int, rho: float, n: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return 80.0 * np.exp(0.2 * lfilter([math.sqrt(1 - rho * rho)], [1.0, -rho], rng.standard_normal(n)))


def test_circular_block_bootstrap_matches_arch():
    from arch.bootstrap import CircularBlockBootstrap

    x = _ar1(11, 0.6, 400)
    block = block_size(block_length(x))
    assert block > 1
    g = bootstrap_group(x, ("mean",), method="percentile", n_resamples=8000, rng=0, block=block)
    ref = [
        CircularBlockBootstrap(block, x, seed=i).conf_int(np.mean, reps=4000, method="percentile")[:, 0]
        for i in range(3)
    ]
    lo, hi = np.mean(ref, axis=0)
    tol = 0.06 * (hi - lo)  # Monte-Carlo error of both sides at a few thousand resamples
    assert abs(g.low[0, 0] - lo) < tol and abs(g.high[0, 0] - hi) < tol
