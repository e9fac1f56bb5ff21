"""estimate_cells(): which interval each kind of cell gets, checked against independent implementations.

The between-pass interval against scipy's t-test on the log pass values and the
pooled variance against pingouin's ANOVA; the within-run EWC / Woodruff interval against the
cosine sums and Student's t written out (issue 30); sectioning against a t-interval over batch means.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pingouin as pg
import pytest
from scipy import stats

from benchreport.stats import CELL_COLUMNS, CELL_EXTRA_COLUMNS, PASS_COLUMNS, cells, estimate_cells, request_metrics
from benchreport.thresholds import DEFAULT

try:
    from tests.stats_fixtures import measurement, measurements_frame, request_rows, requests_frame, simulated_requests
except ImportError:
    from stats_fixtures import measurement, measurements_frame, request_rows, requests_frame, simulated_requests

DAY = "2026-09-10"
NB = 2000  # resamples in these tests: enough to check the wiring, fast


def _req(seat, passes, n, seed=0, date=DAY, **kw):
    rng = np.random.default_rng(seed)
    rows = []
    for p in passes:
        rows += simulated_requests(rng, seat, date, p, n=n, **kw)
    return rows


def _cell(df, **key):
    sel = np.ones(len(df), dtype=bool)
    for k, v in key.items():
        sel &= (df[k] == v).fillna(False).to_numpy()
    assert sel.sum() == 1, f"{key}: {sel.sum()} rows"
    return df[sel].iloc[0]


def _runs(rows: dict[str, tuple]) -> pd.DataFrame:
    return pd.DataFrame([{"run_id": r, "harness": h, "probe": p} for r, (h, p) in rows.items()])


def test_columns_are_the_spec_columns_then_the_extras():
    cs = estimate_cells(None, requests_frame(_req("A", [1], 30)), n_resamples=NB)
    assert list(cs.cells.columns) == CELL_COLUMNS + CELL_EXTRA_COLUMNS
    assert list(cs.passes.columns) == PASS_COLUMNS
    assert CELL_COLUMNS == [
        "seat",
        "workload",
        "concurrency",
        "metric",
        "statistic",
        "unit",
        "n_passes",
        "n_obs",
        "estimate",
        "ci_low",
        "ci_high",
        "ci_level",
        "ci_method",
        "values",
    ]
    assert str(cs.cells["concurrency"].dtype) == "Int64"


def test_request_metrics_derive_decode_speed_and_drop_failed_requests():
    rows = request_rows(
        "A",
        DAY,
        1,
        "decode",
        1,
        ttft_ms=[40, 50, 60, 70],
        e2e_latency_ms=[1040, 2050, 60, 900],
        output_tokens=[101, 201, 1, 50],
        error=[None, None, None, "timeout"],
        finish_reason=["stop", "length", "stop", "error"],
    )
    rm = request_metrics(requests_frame(rows))
    assert len(rm) == 3  # the failed request is gone
    np.testing.assert_allclose(rm["decode_tok_s_per_stream"].to_numpy()[:2], [100.0, 100.0])
    assert np.isnan(rm["decode_tok_s_per_stream"].to_numpy()[2])  # one token: no decode phase


def test_failed_requests_are_counted_and_left_out_of_the_statistics():
    rows = request_rows(
        "A",
        DAY,
        1,
        "decode",
        1,
        [40.0] * 60 + [1.0] * 40,
        [1040.0] * 60 + [2.0] * 40,
        [101] * 100,
        error=[None] * 60 + ["HTTP 400"] * 40,
    )
    out = cells(None, requests_frame(rows), n_resamples=NB)
    row = _cell(out, metric="ttft_ms", statistic="mean")
    assert row["estimate"] == 40.0 and row["n_obs"] == 60
    assert row["n_requests"] == 100 and row["n_failed"] == 40


def test_a_single_pass_has_no_between_pass_ci_and_a_within_run_one():
    req = requests_frame(_req("A", [1], 200, seed=4))
    out = cells(None, req)
    row = _cell(out, seat="A", metric="ttft_ms", statistic="p90")
    assert row["ci_method"] == "none: single pass" and pd.isna(row["ci_low"]) and pd.isna(row["ci_high"])
    x = request_metrics(req)["ttft_ms"].to_numpy()
    # a tail quantile's pass value: Hyndman & Fan's definition 8 (issue 43)
    assert row["estimate"] == pytest.approx(np.quantile(x, 0.9, method="median_unbiased"), rel=1e-12)
    assert row["recomputed"] == row["estimate"]
    assert row["n_passes"] == 1 and row["n_obs"] == 200
    assert "within one run" in row["within_method"] and row["within_level"] == 0.95
    assert row["within_low"] < row["estimate"] < row["within_high"]


def _ewc_by_hand(x: np.ndarray, b: int) -> float:
    """The EWC long-run variance with its cosine sums written out (no FFT)."""
    n = len(x)
    t = np.arange(1, n + 1)
    lam = [
        math.sqrt(2.0 / n) * float(np.sum(np.cos(math.pi * j * (t - 0.5) / n) * (x - x.mean())))
        for j in range(1, b + 1)
    ]
    return float(np.mean(np.square(lam)))


def test_within_run_interval_is_ewc_t_and_woodruff_whatever_the_correlation():
    rows = _req("A", [1], 400, seed=11, rho=0.6, sigma=0.5)
    out = cells(None, requests_frame(rows))
    x = request_metrics(requests_frame(rows))["decode_tok_s_per_stream"].to_numpy()
    b = 400 // 50
    t = stats.t.ppf(0.975, b)
    mean = _cell(out, metric="decode_tok_s_per_stream", statistic="mean")
    assert mean["within_method"].startswith(f"t with EWC long-run variance over requests in send order (B={b}, df={b})")
    se = math.sqrt(_ewc_by_hand(x, b) / len(x))
    assert mean["within_low"] == pytest.approx(x.mean() - t * se, rel=1e-9)
    assert mean["within_high"] == pytest.approx(x.mean() + t * se, rel=1e-9)
    p90 = _cell(out, metric="decode_tok_s_per_stream", statistic="p90")
    est = np.quantile(x, 0.9)
    sp = math.sqrt(_ewc_by_hand((x <= est).astype(float), b) / len(x))
    assert p90["within_method"].startswith("Woodruff with EWC long-run variance")
    assert p90["within_low"] == pytest.approx(np.quantile(x, 0.9 - t * sp), rel=1e-9)
    assert p90["within_high"] == pytest.approx(np.quantile(x, min(1.0, 0.9 + t * sp)), rel=1e-9)
    # the same requests in a random order: the same method (no pre-test), a narrower interval
    iid = cells(
        None,
        requests_frame(
            [{**r, "start_ms": np.nan} for r in np.random.default_rng(0).permutation(np.array(rows, dtype=object))]
        ),
    )
    narrow = _cell(iid, metric="decode_tok_s_per_stream", statistic="mean")
    assert narrow["within_method"] == mean["within_method"]
    assert narrow["within_high"] - narrow["within_low"] < 0.8 * (mean["within_high"] - mean["within_low"])


def test_ewc_t_ratio_of_independent_gaussian_values_is_student_t_with_b_df():
    """Exact for independent Gaussian values (Sun 2013): the t-ratio's distribution is t_B."""
    from benchreport.stats.within import ewc_long_run_variance

    rng = np.random.default_rng(2)
    n, b = 120, 4
    ratios = []
    for _ in range(3000):
        x = rng.standard_normal(n)
        ratios.append(x.mean() / math.sqrt(ewc_long_run_variance(x, b) / n))
    assert stats.kstest(ratios, stats.t(b).cdf).pvalue > 0.01
    assert stats.kstest(ratios, stats.norm.cdf).pvalue < 0.01


def test_requests_are_read_in_start_ms_order_whatever_the_row_order():
    rows = _req("A", [1], 120, seed=3, rho=0.5)
    base = cells(None, requests_frame(rows), n_resamples=NB)
    shuffled = [rows[i] for i in np.random.default_rng(1).permutation(len(rows))]
    again = cells(None, requests_frame(shuffled), n_resamples=NB)
    assert base.to_csv(index=False) == again.to_csv(index=False)


def test_small_single_pass_gets_a_within_run_ewc_t_for_the_mean_and_nothing_for_quantiles():
    req = requests_frame(_req("A", [1], 12))
    out = cells(None, req, n_resamples=NB)
    mean = _cell(out, metric="e2e_latency_ms", statistic="mean")
    x = request_metrics(req)["e2e_latency_ms"].to_numpy()
    se = math.sqrt(_ewc_by_hand(x, 2) / len(x))
    t = stats.t.ppf(0.975, 2)
    assert mean["within_method"].startswith("t with EWC long-run variance over requests in send order (B=2, df=2)")
    assert mean["within_low"] == pytest.approx(x.mean() - t * se) and mean["within_high"] == pytest.approx(
        x.mean() + t * se
    )
    p50 = _cell(out, metric="e2e_latency_ms", statistic="p50")
    assert p50["within_method"] == f"none: n < {DEFAULT.min_obs}" and pd.isna(p50["within_low"])


def test_only_supported_tail_quantiles_are_computed():
    out = cells(None, requests_frame(_req("A", [1], 300)), n_resamples=NB)
    stats_seen = set(out.loc[out["metric"] == "ttft_ms", "statistic"])
    # n(1-q) >= 10: p90 (30) and p95 (15) are supported, p99 (3) is not
    assert stats_seen == {"mean", "p50", "p90", "p95"}
    big = cells(None, requests_frame(_req("A", [1], 1000)), n_resamples=200)
    assert "p99" in set(big["statistic"])


def test_three_passes_geometric_mean_log_t_median_and_range():
    vals = [310.0, 905.0, 520.0]
    ms = measurements_frame(
        [measurement("A", DAY, p + 1, "decode", "output_tok_s", v, concurrency=16) for p, v in enumerate(vals)]
    )
    row = _cell(cells(ms), metric="output_tok_s")
    lv = np.log(vals)
    ref = stats.ttest_1samp(lv, 0).confidence_interval(0.95)
    assert row["ci_method"] == "t on log pass values (df=2)" and row["ci_route"] == "t_log"
    assert row["estimate"] == pytest.approx(math.exp(lv.mean()))
    assert row["ci_low"] == pytest.approx(math.exp(ref.low)) and row["ci_high"] == pytest.approx(math.exp(ref.high))
    assert row["ci_low"] > 0
    assert (row["median"], row["min"], row["max"]) == (520.0, 310.0, 905.0)
    assert row["range_level"] == 0.75
    assert row["values"] == "310.0;905.0;520.0"


def test_two_passes_give_both_values_and_no_ci():
    ms = measurements_frame(
        [
            measurement("A", DAY, 2, "decode", "output_tok_s", 910.0, concurrency=16),
            measurement("A", DAY, 1, "decode", "output_tok_s", 896.9, concurrency=16),
        ]
    )
    row = _cell(cells(ms), metric="output_tok_s")
    assert row["ci_method"] == "none: two passes, both values reported"
    assert row["values"] == "896.9;910.0" and pd.isna(row["ci_low"]) and row["n_passes"] == 2


def test_few_passes_borrow_the_pass_variance_of_other_dates():
    rng = np.random.default_rng(5)
    rows = []
    days = {"2026-09-01": 4, "2026-09-05": 5, "2026-09-10": 1}
    data = {}
    for d, k in days.items():
        v = 900 * rng.lognormal(0, 0.05, k)
        data[d] = v
        rows += [measurement("A", d, p + 1, "decode", "output_tok_s", x, concurrency=8) for p, x in enumerate(v)]
    cs = estimate_cells(measurements_frame(rows))
    row = _cell(cs.cells, metric="output_tok_s")
    assert row["ci_route"] == "t_log_pooled" and row["date"] == "2026-09-10"
    long = pd.DataFrame([{"day": d, "y": math.log(x)} for d in ("2026-09-01", "2026-09-05") for x in data[d]])
    aov = pg.anova(data=long, dv="y", between="day", detailed=True)
    ms_within = float(aov.loc[aov["Source"] == "Within", "MS"].iloc[0])
    df_within = int(aov.loc[aov["Source"] == "Within", "DF"].iloc[0])
    t = stats.t.ppf(0.975, df_within)
    x = data["2026-09-10"][0]
    assert row["ci_low"] == pytest.approx(x * math.exp(-t * math.sqrt(ms_within)))
    assert row["ci_high"] == pytest.approx(x * math.exp(t * math.sqrt(ms_within)))
    assert "pooled from 2 other date(s) (df=7)" in row["ci_method"]


def test_the_harness_figure_is_shown_as_printed_beside_our_recomputation():
    rows = _req("A", [1], 200, seed=2)
    ours = request_metrics(requests_frame(rows))["decode_tok_s_per_stream"].mean()
    ms = measurements_frame(
        [
            measurement(
                "A", DAY, 1, "decode", "decode_tok_s_per_stream", 70.2, concurrency=1, run_id=rows[0]["run_id"], n=200
            ),
            measurement(
                "A", DAY, 1, "decode", "ttft_ms", 99.0, concurrency=1, statistic="max", run_id=rows[0]["run_id"]
            ),
        ]
    )
    cs = estimate_cells(ms, requests_frame(rows), n_resamples=NB)
    row = _cell(cs.cells, metric="decode_tok_s_per_stream", statistic="mean")
    assert row["estimate"] == 70.2 and row["reported"] == 70.2
    assert row["recomputed"] == pytest.approx(ours)
    assert "within one run" in row["within_method"]
    assert _cell(cs.cells, metric="ttft_ms", statistic="max")["estimate"] == 99.0
    p = _cell(cs.passes, metric="decode_tok_s_per_stream", statistic="mean")
    assert p["value"] == 70.2 and p["source"] == "reported"


def test_harnesses_and_probes_are_separate_cells():
    a = _req("A", [1], 60, seed=1)
    b = [{**r, "run_id": "b"} for r in _req("A", [2], 60, seed=2)]
    c = [{**r, "run_id": "c"} for r in _req("A", [3], 60, seed=3)]
    req = requests_frame(a + b + c)
    runs = _runs({a[0]["run_id"]: ("aiperf", None), "b": ("guidellm", None), "c": ("guidellm", None)})
    out = cells(None, req, runs, n_resamples=NB)
    sel = out[(out["metric"] == "ttft_ms") & (out["statistic"] == "mean")]
    assert sorted(zip(sel["harness"], sel["n_passes"])) == [("aiperf", 1), ("guidellm", 2)]
    grouped = runs.assign(harness_group=["same", "same", "same"])
    g = cells(None, req, grouped, n_resamples=NB)
    row = _cell(g, metric="ttft_ms", statistic="mean")
    assert row["n_passes"] == 3 and row["harness"] == "same"


def test_single_aggregate_and_published_ci():
    ms = measurements_frame(
        [
            measurement("A", DAY, 1, "decode", "output_tok_s", 896.9, concurrency=16),
            measurement("A", DAY, 1, "prefill", "prefill_tok_s", 98.9, ci_low=95.7, ci_high=102.1, ci_level=0.9),
        ]
    )
    out = cells(ms)
    one = _cell(out, metric="output_tok_s")
    assert one["ci_method"] == "none: single pass" and one["source"] == "reported"
    pub = _cell(out, metric="prefill_tok_s")
    assert (pub["ci_low"], pub["ci_high"], pub["ci_level"]) == (95.7, 102.1, 0.9)
    assert pub["ci_method"] == "published"
    z = stats.norm.ppf(0.95)
    assert pub["within_log_se"] == pytest.approx((math.log(102.1) - math.log(95.7)) / (2 * z))


def test_sectioning_for_very_long_passes_matches_batch_means():
    rows = _req("A", [1], 3000, seed=8, rho=0.3)
    th = DEFAULT.replace(max_bootstrap_obs=1000)
    out = cells(None, requests_frame(rows), thresholds=th, n_resamples=NB)
    row = _cell(out, metric="ttft_ms", statistic="mean")
    assert row["within_method"] == "sectioning (30 sections), within one run"
    x = request_metrics(requests_frame(rows))["ttft_ms"].to_numpy()
    batch = x.reshape(30, 100).mean(axis=1)
    ref = stats.ttest_1samp(batch, 0).confidence_interval(0.95)
    assert row["within_low"] == pytest.approx(ref.low) and row["within_high"] == pytest.approx(ref.high)


def test_conditions_are_separate_cells():
    ms = measurements_frame(
        [
            measurement("A", DAY, 1, "init", "engine_init_s", 61.0, condition="cold"),
            measurement("A", DAY, 1, "init", "engine_init_s", 19.0, condition="warm"),
        ]
    )
    out = cells(ms)
    assert set(out["workload"]) == {"init:cold", "init:warm"}
    assert _cell(out, workload="init:cold")["condition"] == "cold"
    assert _cell(out, workload="init:cold")["estimate"] == 61.0


def test_only_the_latest_date_of_each_seat():
    ms = measurements_frame(
        [
            measurement("A", "2026-09-01", 1, "decode", "output_tok_s", 800.0, concurrency=16),
            measurement("A", "2026-09-10", 1, "decode", "output_tok_s", 900.0, concurrency=16),
            measurement("A", "2026-09-01", 1, "prefill", "prefill_tok_s", 7000.0),
        ]
    )
    cs = estimate_cells(ms)
    assert len(cs.cells) == 1 and cs.cells.iloc[0]["estimate"] == 900.0 and cs.cells.iloc[0]["date"] == "2026-09-10"
    assert len(cs.dated) == 3
    assert len(cells(ms, latest="cell")) == 2


def test_all_values_equal_and_non_positive():
    ms = measurements_frame(
        [measurement("A", DAY, p, "decode", "output_tok_s", 900.0, concurrency=1) for p in (1, 2, 3)]
    )
    assert _cell(cells(ms), metric="output_tok_s")["ci_method"] == "none: all values equal"
    zero = measurements_frame(
        [measurement("A", DAY, p, "decode", "ttft_ms", v, concurrency=1) for p, v in ((1, 0.0), (2, 3.0), (3, 4.0))]
    )
    assert _cell(cells(zero), metric="ttft_ms")["ci_method"] == "none: non-positive pass values"


def test_byte_identical_for_the_same_data_whatever_the_seed():
    req = requests_frame(_req("A", [1], 60, seed=3) + _req("B", [1, 2, 3], 30, seed=5))
    a = cells(None, req, seed=7, n_resamples=NB).to_csv(index=False).encode()
    b = cells(None, req, seed=7, n_resamples=NB).to_csv(index=False).encode()
    c = cells(None, req, seed=8, n_resamples=NB).to_csv(index=False).encode()
    # since issue 30 nothing in a cell is resampled (the within-run interval is EWC / Woodruff)
    assert a == b == c
    assert b"EWC" in a


def test_a_seats_cis_do_not_depend_on_other_seats():
    a_rows = _req("A", [1], 60, seed=3)
    alone = cells(None, requests_frame(a_rows), n_resamples=NB)
    others = requests_frame(_req("B", [1], 60, seed=9) + a_rows + _req("C", [1], 25, seed=1))
    with_b = cells(None, others, n_resamples=NB)
    assert alone.to_csv(index=False) == with_b[with_b["seat"] == "A"].to_csv(index=False)


def test_invalid_arguments():
    with pytest.raises(ValueError, match="seed"):
        cells(None, requests_frame(_req("A", [1], 20)), seed=-1)
    with pytest.raises(ValueError, match="method"):
        cells(None, requests_frame(_req("A", [1], 20)), method="studentized")
    with pytest.raises(ValueError, match="latest"):
        cells(None, requests_frame(_req("A", [1], 20)), latest="day")
    with pytest.raises(ValueError, match="measurements"):
        cells(pd.DataFrame({"x": [1]}))
    assert len(cells(None, None)) == 0


def test_the_median_of_a_cells_passes_is_numpys_bit_for_bit():
    """A cell's median of its passes is taken the short way for positive values (thousands of
    cells a date); it must be `np.median`'s float, odd and even counts, ties, tiny and huge values,
    and `np.median` itself for anything not positive."""
    import numpy as np

    from benchreport.stats.passes import _median

    rng = np.random.default_rng(3)
    cases = [rng.lognormal(0, s, k) for s in (0.01, 1, 30) for k in range(3, 13) for _ in range(40)]
    cases += [np.array([1.0, 1.0, 2.0, 2.0]), np.array([5e-324, 5e-324, 1e308, 1.7e308]), np.array([3.0, 1.0, 2.0])]
    cases += [np.array([0.0, -0.0, 1.0, 2.0]), np.array([-1.0, -3.0, -2.0]), np.array([np.nan, 1.0, 2.0])]
    for v in cases:
        want, got = float(np.median(v)), _median(v)
        assert (np.isnan(want) and np.isnan(got)) or got.hex() == want.hex(), v
