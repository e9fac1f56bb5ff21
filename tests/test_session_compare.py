"""Seat against seat with the variance between sessions (issue 30, "Levels of variance"): the pooled
between-session variance against statsmodels' MixedLM (REML), the two-level interval's coverage in a
simulation of the two-level model, and tables/comparisons.csv through the CLI."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats

from benchreport.cli import main
from benchreport.stats.passes import PassSummary, welch_log_ratio_test
from benchreport.stats.sessions import pooled_session_variance, session_variance, two_level_log_ratio_test

from request_runs import request_records, request_run, write_request_runs


def _groups(logs: np.ndarray) -> list[tuple[int, float, float]]:
    """(n, mean, within SS) of each row of a sessions x passes array of log values."""
    return [(row.shape[0], float(row.mean()), float(((row - row.mean()) ** 2).sum())) for row in logs]


def _summary(logs: np.ndarray) -> PassSummary:
    """A cell's pass summary from the log values of one session (t on n - 1 df)."""
    n, m = logs.shape[0], float(logs.mean())
    se = float(logs.std(ddof=1)) / math.sqrt(n)
    return PassSummary(
        estimate=math.exp(m),
        low=math.nan,
        high=math.nan,
        level=0.95,
        n_passes=n,
        log_mean=m,
        log_se=se,
        df=float(n - 1),
        route="t_log",
        reason="",
    )


def _two_seats(rng, *, sessions=3, passes=3, sigma_b=0.04, sigma_w=0.02, shift=0.0):
    """log values (seat, session, pass) of two seats under the two-level model; seat b shifted."""
    day = rng.normal(0.0, sigma_b, (2, sessions, 1))
    return 4.0 + np.array([0.0, shift])[:, None, None] + day + rng.normal(0.0, sigma_w, (2, sessions, passes))


def test_pooled_between_session_variance_is_mixedlm_reml_with_seat_fixed():
    rng = np.random.default_rng(3)
    logs = _two_seats(rng, sessions=6, passes=4, sigma_b=0.05, sigma_w=0.02, shift=0.3)
    est = pooled_session_variance([_groups(logs[0]), _groups(logs[1])])
    seat, day, _ = np.indices(logs.shape)
    df = pd.DataFrame({"y": logs.ravel(), "seat": seat.ravel(), "g": (seat * 100 + day).ravel()})
    fit = smf.mixedlm("y ~ C(seat)", df, groups="g").fit(reml=True)
    assert est.between_log_var > 0 and est.df_between == 10 and est.df_within == 36
    assert est.between_log_var == pytest.approx(float(fit.cov_re.iloc[0, 0]), rel=1e-4)
    assert est.ms_within == pytest.approx(float(fit.scale), rel=1e-4)
    # the seats' 0.3 difference in means is not session variance
    one_way = session_variance(np.exp(logs.reshape(12, 4)).ravel(), np.repeat(np.arange(12), 4))
    assert one_way.between_log_var > 3 * est.between_log_var


def test_one_seat_with_dates_is_the_one_way_estimator():
    rng = np.random.default_rng(4)
    logs = rng.normal(0, 0.03, (4, 1)) + rng.normal(0, 0.02, (4, 3))
    single = rng.normal(0, 0.02, (1, 3))  # a seat of one session adds to the within mean square only
    est = pooled_session_variance([_groups(logs), []])
    ref = session_variance(np.exp(logs).ravel(), np.repeat(np.arange(4), 3))
    assert est.between_log_var == pytest.approx(ref.between_log_var, rel=1e-12)
    both = pooled_session_variance([_groups(logs), _groups(single)])
    assert both.df_between == 3 and both.df_within == 10
    assert pooled_session_variance([_groups(single), _groups(single)]) is None  # no session replicated


def test_zero_between_variance_leaves_welch():
    rng = np.random.default_rng(5)
    a, b = rng.normal(0, 0.02, 5), rng.normal(0.01, 0.03, 4)
    flat = pooled_session_variance([[(3, 0.0, 0.01), (3, 0.0, 0.01)], []])  # MSB = 0 < MSW
    assert flat.between_log_var == 0.0
    two = two_level_log_ratio_test(_summary(a), _summary(b), flat)
    ref = stats.ttest_ind(b, a, equal_var=False)
    assert two.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    assert two.df == pytest.approx(welch_log_ratio_test(_summary(a), _summary(b)).df)


@pytest.mark.parametrize("sigma_b", [0.03, 0.05])
def test_two_level_interval_covers_where_welch_does_not(sigma_b):
    """The latest dates' ratio against the seats' long-run ratio (here 1): 3 dates x 3 passes per
    seat, pass noise 2%. Welch's interval over the latest passes misses the day effects."""
    rng = np.random.default_rng(int(sigma_b * 1000))
    reps, two_hit, welch_hit, widths = 2000, 0, 0, []
    for _ in range(reps):
        logs = _two_seats(rng, sigma_b=sigma_b)
        sa, sb = _summary(logs[0, -1]), _summary(logs[1, -1])
        between = pooled_session_variance([_groups(logs[0]), _groups(logs[1])])
        two, welch = two_level_log_ratio_test(sa, sb, between), welch_log_ratio_test(sa, sb)
        two_hit += two.low <= 1.0 <= two.high
        welch_hit += welch.low <= 1.0 <= welch.high
        widths.append(math.log(two.high / two.low))
    two_cov, welch_cov = two_hit / reps, welch_hit / reps
    print(
        f"sigma_b {sigma_b}: two-level {two_cov:.3f}, Welch {welch_cov:.3f}, median log width {np.median(widths):.3f}"
    )
    assert 0.93 <= two_cov <= 0.99, two_cov  # Satterthwaite's df on 4 between-session df: near 95%
    assert welch_cov < 0.75, welch_cov


def _day_run(rng, seat, date, p, factor, role):
    recs = request_records(rng, 60)
    for r in recs:  # the day's factor divides every time (multiplies every rate)
        r["ttft_ms"], r["e2e_latency_ms"] = round(r["ttft_ms"] / factor, 4), round(r["e2e_latency_ms"] / factor, 4)
    return request_run(seat, p, recs, date=date, role=role)


def test_cli_comparisons_count_every_date(tmp_path):
    rng = np.random.default_rng(11)
    dates = ("2026-11-29", "2026-11-30", "2026-12-01")
    runs = [
        _day_run(rng, seat, d, p, f, role)
        for seat, role in (("a", "incumbent"), ("b", "candidate"))
        for d, f in zip(dates, np.exp(rng.normal(0, 0.05, 3)))
        for p in (1, 2, 3)
    ]
    runs += [_day_run(rng, "c", dates[-1], p, 1.0, "candidate") for p in (1, 2, 3)]
    out = tmp_path / "out"
    assert main(["analyse", str(write_request_runs(tmp_path / "runs", runs)), "--out", str(out), "--quiet"]) == 0
    comp = pd.read_csv(out / "tables" / "comparisons.csv")
    base = comp[comp["kind"] == "baseline"]
    assert set(base.loc[base["candidate"] == "b", "variance_levels"]) == {"passes+sessions"}
    assert set(base.loc[base["candidate"] == "c", "variance_levels"]) == {"passes+sessions"}  # a's dates
    row = base[(base["candidate"] == "b") & (base["metric"] == "ttft_ms") & (base["statistic"] == "mean")].iloc[0]
    passes = pd.read_csv(out / "tables" / "passes.csv")
    p = passes[(passes["metric"] == "ttft_ms") & (passes["statistic"] == "mean")]
    logs = np.stack(
        [np.log(p[p["seat"] == s].sort_values(["date", "pass"])["value"].to_numpy()).reshape(3, 3) for s in ("a", "b")]
    )
    # every date counts, the date the unit (issue 43): Student's pooled t on the date means, as
    # scipy.stats.ttest_ind computes it
    means = logs.mean(axis=2)
    ref = stats.ttest_ind(means[1], means[0], equal_var=True)
    ci = ref.confidence_interval(0.95)
    assert math.log(row["ratio"]) == pytest.approx(means[1].mean() - means[0].mean(), rel=1e-9)
    assert row["p_value"] == pytest.approx(ref.pvalue, rel=1e-9)
    assert (math.log(row["ci_low"]), math.log(row["ci_high"])) == pytest.approx((ci.low, ci.high), rel=1e-9)
    assert row["df"] == 4 and "the date as the unit" in row["ci_method"]
    assert row["baseline_estimate"] == pytest.approx(math.exp(means[0].mean()), rel=1e-12)
    # the cells: the mean of the date means with t on 2 df, as scipy.stats.t.interval gives it
    cells = pd.read_csv(out / "tables" / "cells.csv")
    cell = cells[(cells["seat"] == "a") & (cells["metric"] == "ttft_ms") & (cells["statistic"] == "mean")].iloc[0]
    lo, hi = stats.t.interval(0.95, 2, loc=means[0].mean(), scale=stats.sem(means[0]))
    assert cell["ci_route"] == "t_log_sessions" and cell["df"] == 2
    assert (math.log(cell["ci_low"]), math.log(cell["ci_high"])) == pytest.approx((lo, hi), rel=1e-9)
    c_row = base[(base["candidate"] == "c") & (base["metric"] == "ttft_ms") & (base["statistic"] == "mean")].iloc[0]
    assert c_row["df"] == 2  # a's three dates and c's one


def test_cli_one_session_each_says_passes_only(tmp_path):
    rng = np.random.default_rng(12)
    runs = [
        _day_run(rng, seat, "2026-12-01", p, 1.0, role)
        for seat, role in (("a", "incumbent"), ("b", "candidate"))
        for p in (1, 2, 3)
    ]
    out = tmp_path / "out"
    assert main(["analyse", str(write_request_runs(tmp_path / "runs", runs)), "--out", str(out), "--quiet"]) == 0
    comp = pd.read_csv(out / "tables" / "comparisons.csv")
    with_ci = comp[comp["ci_low"].notna()]
    assert len(with_ci) and set(with_ci["variance_levels"]) == {"passes"}
    assert with_ci["ci_method"].str.startswith("Welch t on log pass values").all()


def test_a_run_store_gives_the_same_intervals(tmp_path):
    from benchreport.pipeline import Options, analyse_paths, analyse_store
    from benchreport.store import Store, ingest

    rng = np.random.default_rng(13)
    runs = [
        _day_run(rng, seat, d, p, f, role)
        for seat, role in (("a", "incumbent"), ("b", "candidate"))
        for d, f in zip(("2026-11-30", "2026-12-01"), np.exp(rng.normal(0, 0.05, 2)))
        for p in (1, 2, 3)
    ]
    folder = write_request_runs(tmp_path / "runs", runs)
    ingest([folder], tmp_path / "store")
    cols = ["metric", "statistic", "ratio", "ci_low", "ci_high", "df", "variance_levels"]
    stored = analyse_store(Store.open(tmp_path / "store"), Options(n_boot=100)).comparisons
    direct = analyse_paths([folder], Options(n_boot=100)).comparisons
    stored, direct = (c[c["kind"] == "baseline"][cols].reset_index(drop=True) for c in (stored, direct))
    assert len(direct) and set(direct["variance_levels"]) == {"passes+sessions"}
    pd.testing.assert_frame_equal(stored, direct, check_exact=False, rtol=1e-12)


def test_session_study_writes_two_seats_on_three_dates(tmp_path):
    import json
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from session_study import write_replicate

    write_replicate(tmp_path, 0.05, 1.0, 0)
    runs = [json.loads(p.read_text()) for p in sorted(tmp_path.glob("*.json"))]
    assert len(runs) == 18 and {r["seat"]["id"] for r in runs} == {"seat-00", "seat-01"}
    assert len({r["date"] for r in runs}) == 3 and all(len(r["requests"]) == 100 for r in runs)
    assert sorted(r["seat"]["role"] for r in runs).count("incumbent") == 9
