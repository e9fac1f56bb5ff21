"""benchreport.stats.stability against independent implementations and published values."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from benchreport.stats.stability import adjust_bh, change_test, ci_se, cochrans_q, mean_se, quantile_se, within_pass_se

#: BCG vaccine trials (Colditz et al. 1994; metafor's dat.bcg): tpos, tneg, cpos, cneg
BCG = [
    (4, 119, 11, 128),
    (6, 300, 29, 274),
    (3, 228, 11, 209),
    (62, 13536, 248, 12619),
    (33, 5036, 47, 5761),
    (180, 1361, 372, 1079),
    (8, 2537, 10, 619),
    (505, 87886, 499, 87892),
    (29, 7470, 45, 7232),
    (17, 1699, 65, 1600),
    (186, 50448, 141, 27197),
    (5, 2493, 3, 2338),
    (27, 16886, 29, 17825),
]


def _bcg_log_rr():
    y = [math.log((a / (a + b)) / (c / (c + d))) for a, b, c, d in BCG]
    v = [1 / a - 1 / (a + b) + 1 / c - 1 / (c + d) for a, b, c, d in BCG]
    return y, [math.sqrt(x) for x in v]


def test_cochrans_q_published_bcg_value():
    # metafor rma(measure="RR", data=dat.bcg): "Test for Heterogeneity: Q(df = 12) = 152.2330, p-val < .0001";
    # the fixed-effect estimate is -0.4303 (Viechtbauer 2010, J. Stat. Softw. 36(3))
    y, se = _bcg_log_rr()
    r = cochrans_q(y, se)
    assert r.statistic == pytest.approx(152.2330, abs=5e-5)
    assert r.df == 12 and r.pvalue < 1e-4
    assert r.pooled == pytest.approx(-0.4303, abs=5e-5)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cochrans_q_matches_statsmodels_meta_analysis(seed):
    from statsmodels.stats.meta_analysis import combine_effects

    rng = np.random.default_rng(seed)
    x, se = rng.normal(100, 5, 6), rng.uniform(1, 4, 6)
    want = combine_effects(x, se**2).test_homogeneity()
    got = cochrans_q(x, se)
    assert got.statistic == pytest.approx(float(want.statistic), rel=1e-9)
    assert got.pvalue == pytest.approx(float(want.pvalue), rel=1e-9)
    assert got.df == want.df


def test_cochrans_q_argument_checks():
    with pytest.raises(ValueError, match="se"):
        cochrans_q([1, 2], [1, 0])
    with pytest.raises(ValueError, match="same length"):
        cochrans_q([1, 2, 3], [1, 1])


def test_change_test_is_the_two_sample_z_test():
    z = stats.norm.ppf(0.975)
    assert change_test(100, 100 + z * math.sqrt(2 * 3**2), 3, 3) == pytest.approx(0.05, rel=1e-12)
    assert change_test(5, 5, 1, 2) == 1.0


def test_mean_and_ci_se():
    rng = np.random.default_rng(3)
    v = rng.lognormal(4, 0.5, 200)
    assert mean_se(v) == pytest.approx(stats.sem(v), rel=1e-12)
    assert ci_se(90, 110, 0.95) == pytest.approx(10 / 1.959963984540054, rel=1e-12)


@pytest.mark.parametrize("q", [0.5, 0.9, 0.95])
def test_quantile_se_against_asymptotics_and_maritz_jarrett(q):
    rng = np.random.default_rng(11)
    z = stats.norm.ppf(0.975)
    n, reps = 5000, 40
    samples = [np.sort(rng.standard_normal(n)) for _ in range(reps)]
    got = float(np.mean([quantile_se(v, q, z) for v in samples]))
    # sqrt(q(1-q)) / (f(x_q) sqrt(n)): the asymptotic SE of a sample quantile (e.g. Conover 1999, 3.2)
    asymptotic = math.sqrt(q * (1 - q)) / (stats.norm.pdf(stats.norm.ppf(q)) * math.sqrt(n))
    assert got == pytest.approx(asymptotic, rel=0.04)
    # and the spread of the sample quantile over the replications
    spread = float(np.std([np.quantile(v, q) for v in samples], ddof=1))
    assert got == pytest.approx(spread, rel=0.3)
    # Maritz & Jarrett (1978), an independent estimator (scipy.stats.mstats.mjci), on average
    small = [np.sort(rng.standard_normal(800)) for _ in range(reps)]
    mj = float(np.mean([stats.mstats.mjci(v, prob=[q])[0] for v in small]))
    assert float(np.mean([quantile_se(v, q, z) for v in small])) == pytest.approx(mj, rel=0.08)


def bh_by_step_up(p, q) -> np.ndarray:
    """Which hypotheses Benjamini & Hochberg's (1995) step-up rule rejects at level q:
    all H_(i) with i <= k, k the largest i with p_(i) <= i q / m."""
    p = np.asarray(p, dtype=float)
    order = np.argsort(p)
    ok = [i + 1 for i in range(len(p)) if p[order[i]] <= (i + 1) * q / len(p)]
    rejected = np.zeros(len(p), dtype=bool)
    rejected[order[: max(ok, default=0)]] = True
    return rejected


def test_adjust_bh_rejects_what_the_step_up_rule_rejects():
    p = [0.01, 0.04, 0.03, 0.2, 0.5, 0.001, 0.049]
    adj = np.array(adjust_bh(p))
    # the adjusted p-value of a hypothesis is the smallest q at which the step-up rule rejects it
    just_either_side = [a * (1 + e) for a in np.unique(adj) for e in (-1e-9, 1e-9)]
    for q in [*just_either_side, *np.linspace(0.001, 0.6, 300)]:
        np.testing.assert_array_equal(adj <= q, bh_by_step_up(p, q), err_msg=f"q = {q}")
    # Benjamini & Hochberg (1995), by hand: p(i) * m / i, then the running minimum from the top
    assert adjust_bh([0.01, 0.02, 0.03]) == pytest.approx([0.03, 0.03, 0.03])
    assert adjust_bh([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.04, 0.04])
    assert adjust_bh([]) == []


def test_within_pass_se_from_requests_and_measurements():
    rng = np.random.default_rng(5)
    ttft = rng.lognormal(4, 0.3, 100)
    requests = pd.DataFrame(
        {
            "seat": "s1",
            "run_id": "r1",
            "date": "2026-11-02",
            "pass": 1,
            "workload": "decode",
            "concurrency": 16,
            "ttft_ms": ttft,
        }
    )
    measurements = pd.DataFrame(
        [
            {
                "seat": "s1",
                "date": "2026-11-02",
                "pass": 2,
                "workload": "decode",
                "condition": None,
                "concurrency": 16,
                "metric": "output_tok_s",
                "statistic": "mean",
                "ci_low": 90.0,
                "ci_high": 110.0,
                "ci_level": None,
            }
        ]
    )
    se = within_pass_se(requests, measurements, z=stats.norm.ppf(0.975), min_tail_obs=10)
    assert se[("s1", "2026-11-02", "decode", 16, "ttft_ms", "mean")][1] == pytest.approx(stats.sem(ttft))
    assert math.isinf(se[("s1", "2026-11-02", "decode", 16, "ttft_ms", "p95")][1])  # 5 beyond p95 < 10
    assert se[("s1", "2026-11-02", "decode", 16, "output_tok_s", "mean")][2] == pytest.approx(ci_se(90, 110, 0.95))
