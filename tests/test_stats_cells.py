"""cells(): which interval each kind of cell gets, checked against scipy on the same values."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis.stats import CELL_COLUMNS, CELL_EXTRA_COLUMNS, cells, ci_method_family, request_metrics
from analysis.thresholds import DEFAULT

try:
    from tests.stats_fixtures import (measurement, measurements_frame, request_rows, requests_frame,
                                      simulated_requests)
except ImportError:
    from stats_fixtures import (measurement, measurements_frame, request_rows, requests_frame,
                                simulated_requests)

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


def test_columns_are_the_spec_columns_then_the_extras():
    out = cells(None, requests_frame(_req("A", [1], 30)), n_resamples=NB)
    assert list(out.columns) == CELL_COLUMNS + CELL_EXTRA_COLUMNS
    assert CELL_COLUMNS == ["seat", "workload", "concurrency", "metric", "statistic", "unit", "n_passes",
                            "n_obs", "estimate", "ci_low", "ci_high", "ci_level", "ci_method", "values"]
    assert str(out["concurrency"].dtype) == "Int64"


def test_request_metrics_derive_decode_speed_and_drop_failed_requests():
    rows = request_rows("A", DAY, 1, "decode", 1, ttft_ms=[40, 50, 60, 70], e2e_latency_ms=[1040, 2050, 60, 900],
                        output_tokens=[101, 201, 1, 50], error=[None, None, None, "timeout"],
                        finish_reason=["stop", "length", "stop", "error"])
    rm = request_metrics(requests_frame(rows))
    assert len(rm) == 3  # the failed request is gone
    np.testing.assert_allclose(rm["decode_tok_s_per_stream"].to_numpy()[:2], [100.0, 100.0])
    assert np.isnan(rm["decode_tok_s_per_stream"].to_numpy()[2])  # one token: no decode phase
    rows2 = request_rows("A", DAY, 1, "decode", 1, [40, 41], [100, 100], [10, 10], finish_reason=["stop", "error"])
    assert len(request_metrics(requests_frame(rows2))) == 1


def test_single_pass_requests_get_a_bootstrap_ci_that_agrees_with_scipy():
    req = requests_frame(_req("A", [1], 200, seed=4))
    out = cells(None, req)
    row = _cell(out, seat="A", metric="ttft_ms", statistic="p90")
    assert row["ci_method"] == "bootstrap BCa over requests" and row["source"] == "requests"
    x = request_metrics(req)["ttft_ms"].to_numpy()
    assert row["estimate"] == np.quantile(x, 0.9)
    assert row["values"] == repr(float(np.quantile(x, 0.9)))
    assert row["n_passes"] == 1 and row["n_obs"] == 200 and row["ci_level"] == 0.95
    ref = [stats.bootstrap((x,), lambda a, axis: np.quantile(a, 0.9, axis=axis), n_resamples=10000,
                           rng=i).confidence_interval for i in range(3)]
    mean = np.mean([[r.low, r.high] for r in ref], axis=0)
    # a wiring check (the engine's Monte-Carlo agreement is tested in test_stats_bootstrap): at
    # 10,000 resamples an endpoint's Monte-Carlo SD is 1-2% of the CI width; allow 5%
    tol = 0.05 * (mean[1] - mean[0])
    assert abs(row["ci_low"] - mean[0]) < tol and abs(row["ci_high"] - mean[1]) < tol
    p99 = _cell(out, seat="A", metric="ttft_ms", statistic="p99")
    assert p99["ci_method"] == "none: n*(1-q) < 10" and np.isnan(p99["ci_low"])


def test_percentile_method_is_selectable():
    out = cells(None, requests_frame(_req("A", [1], 80)), method="percentile", n_resamples=NB)
    assert _cell(out, metric="itl_ms", statistic="mean")["ci_method"] == "bootstrap percentile over requests"


def test_small_single_pass_gets_t_for_the_mean_and_nothing_for_quantiles():
    req = requests_frame(_req("A", [1], 12))
    out = cells(None, req, n_resamples=NB)
    mean = _cell(out, metric="e2e_latency_ms", statistic="mean")
    x = request_metrics(req)["e2e_latency_ms"].to_numpy()
    ref = stats.ttest_1samp(x, 0).confidence_interval(0.95)
    assert mean["ci_method"] == "t (n<min_obs)"
    assert mean["ci_low"] == pytest.approx(ref.low) and mean["ci_high"] == pytest.approx(ref.high)
    p50 = _cell(out, metric="e2e_latency_ms", statistic="p50")
    assert p50["ci_method"] == f"none: n < {DEFAULT.min_obs}" and pd.isna(p50["ci_low"])


def test_passes_are_the_unit_t_interval_over_pass_values():
    req = requests_frame(_req("A", [1, 2, 3], 50, seed=1))
    out = cells(None, req, n_resamples=NB)
    row = _cell(out, metric="ttft_ms", statistic="p50")
    rm = request_metrics(req)
    per_pass = [np.quantile(rm.loc[rm["pass"] == p, "ttft_ms"].to_numpy(), 0.5) for p in (1, 2, 3)]
    assert row["ci_method"] == "t over passes (df=2)"
    assert row["n_passes"] == 3 and row["n_obs"] == 150
    assert row["values"] == ";".join(repr(float(v)) for v in per_pass)
    assert row["estimate"] == pytest.approx(np.mean(per_pass), rel=1e-15)
    ref = stats.ttest_1samp(per_pass, 0).confidence_interval(0.95)
    assert row["ci_low"] == pytest.approx(ref.low) and row["ci_high"] == pytest.approx(ref.high)


def test_two_passes_give_both_values_and_no_ci():
    ms = measurements_frame([measurement("A", DAY, 2, "decode", "output_tok_s", 910.0, concurrency=16),
                             measurement("A", DAY, 1, "decode", "output_tok_s", 896.9, concurrency=16)])
    row = _cell(cells(ms), metric="output_tok_s")
    assert row["ci_method"] == "none: two passes, both values reported"
    assert row["values"] == "896.9;910.0" and pd.isna(row["ci_low"]) and row["n_passes"] == 2


def test_single_aggregate_and_published_ci():
    ms = measurements_frame([
        measurement("A", DAY, 1, "decode", "output_tok_s", 896.9, concurrency=16),
        measurement("A", DAY, 1, "prefill", "prefill_tok_s", 98.9, ci_low=95.7, ci_high=102.1, ci_level=0.9),
    ])
    out = cells(ms)
    one = _cell(out, metric="output_tok_s")
    assert one["ci_method"] == "none: single pass" and one["source"] == "measurements"
    pub = _cell(out, metric="prefill_tok_s")
    assert (pub["ci_low"], pub["ci_high"], pub["ci_level"]) == (95.7, 102.1, 0.9)
    assert pub["ci_method"] == "published" and pub["source"] == "published"
    assert pub["se"] == pytest.approx(3.2 / stats.norm.ppf(0.95))


def test_many_passes_bootstrap_over_passes():
    vals = np.random.default_rng(2).normal(900, 20, 20)
    ms = measurements_frame([measurement("A", DAY, p + 1, "decode", "output_tok_s", v, concurrency=8)
                             for p, v in enumerate(vals)])
    row = _cell(cells(ms, thresholds=DEFAULT.replace(min_passes_bootstrap=20)), metric="output_tok_s")
    assert row["ci_method"] == "bootstrap BCa over passes" and row["n_passes"] == 20
    refs = np.array([[r.confidence_interval.low, r.confidence_interval.high] for r in
                     (stats.bootstrap((vals,), np.mean, n_resamples=10000, rng=i) for i in range(3))])
    width = refs[:, 1].mean() - refs[:, 0].mean()
    assert abs(row["ci_low"] - refs[:, 0].mean()) < 0.05 * width
    assert abs(row["ci_high"] - refs[:, 1].mean()) < 0.05 * width
    few = cells(ms, thresholds=DEFAULT.replace(min_passes_bootstrap=25))
    assert _cell(few, metric="output_tok_s")["ci_method"] == "t over passes (df=19)"


def test_conditions_are_separate_cells():
    ms = measurements_frame([
        measurement("A", DAY, 1, "init", "engine_init_s", 61.0, condition="cold"),
        measurement("A", DAY, 1, "init", "engine_init_s", 19.0, condition="warm"),
    ])
    out = cells(ms)
    assert set(out["workload"]) == {"init:cold", "init:warm"}
    assert _cell(out, workload="init:cold")["condition"] == "cold"
    assert _cell(out, workload="init:cold")["estimate"] == 61.0


def test_only_the_latest_date_of_each_seat():
    ms = measurements_frame([
        measurement("A", "2026-09-01", 1, "decode", "output_tok_s", 800.0, concurrency=16),
        measurement("A", "2026-09-10", 1, "decode", "output_tok_s", 900.0, concurrency=16),
        measurement("A", "2026-09-01", 1, "prefill", "prefill_tok_s", 7000.0),
    ])
    out = cells(ms)
    assert len(out) == 1 and out.iloc[0]["estimate"] == 900.0 and out.iloc[0]["date"] == "2026-09-10"
    by_cell = cells(ms, latest="cell")
    assert len(by_cell) == 2


def test_requests_take_precedence_over_the_same_passes_aggregate():
    rows = _req("A", [1], 40)
    ms = measurements_frame([measurement("A", DAY, 1, "decode", "ttft_ms", 35.0, concurrency=1,
                                         statistic="p50", run_id=rows[0]["run_id"]),
                             measurement("A", DAY, 1, "decode", "ttft_ms", 99.0, concurrency=1,
                                         statistic="max", run_id=rows[0]["run_id"])])
    out = cells(ms, requests_frame(rows), n_resamples=NB)
    assert _cell(out, metric="ttft_ms", statistic="p50")["source"] == "requests"
    assert _cell(out, metric="ttft_ms", statistic="max")["estimate"] == 99.0


def test_tied_latencies_get_a_bca_interval_with_zero_acceleration():
    # whole-millisecond TTFTs: the jackknife of the median is flat (scipy's BCa would be NaN)
    ttft = np.repeat([34.0, 35.0, 36.0, 37.0], [20, 50, 30, 20])
    rows = request_rows("A", DAY, 1, "decode", 1, ttft, ttft + 2000.0, np.full(120, 200))
    out = cells(None, requests_frame(rows), n_resamples=NB)
    p50 = _cell(out, metric="ttft_ms", statistic="p50")
    assert p50["ci_method"] == "bootstrap BCa over requests (acceleration 0: tied data)"
    assert p50["ci_low"] <= 35.0 <= p50["ci_high"]
    assert ci_method_family(p50["ci_method"]) == "requests"
    assert not out["ci_method"].str.contains("pending").any()


def test_all_values_equal():
    ms = measurements_frame([measurement("A", DAY, p, "decode", "output_tok_s", 900.0, concurrency=1)
                             for p in (1, 2, 3)])
    assert _cell(cells(ms), metric="output_tok_s")["ci_method"] == "none: all values equal"


def test_byte_identical_for_the_same_data_and_seed():
    req = requests_frame(_req("A", [1], 60, seed=3) + _req("B", [1, 2, 3], 30, seed=5))
    a = cells(None, req, seed=7, n_resamples=NB).to_csv(index=False).encode()
    b = cells(None, req, seed=7, n_resamples=NB).to_csv(index=False).encode()
    c = cells(None, req, seed=8, n_resamples=NB).to_csv(index=False).encode()
    assert a == b and a != c


def test_a_seats_cis_do_not_depend_on_other_seats_or_row_order():
    a_rows = _req("A", [1], 60, seed=3)
    alone = cells(None, requests_frame(a_rows), n_resamples=NB)
    others = requests_frame(_req("B", [1], 60, seed=9) + a_rows + _req("C", [1], 25, seed=1))
    with_b = cells(None, others, n_resamples=NB)
    assert alone.to_csv(index=False) == with_b[with_b["seat"] == "A"].to_csv(index=False)
    shuffled = requests_frame([a_rows[i] for i in np.random.default_rng(0).permutation(len(a_rows))])
    assert cells(None, shuffled, n_resamples=NB).to_csv(index=False) == alone.to_csv(index=False)


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
