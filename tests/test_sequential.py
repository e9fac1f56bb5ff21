"""The sequential plan (issue 30): group-sequential boundaries checked against published values
(Reboussin, DeMets, Kim & Lan 2000; Jennison & Turnbull 2000, Table 2.1), the recursive
integration against scipy's multivariate normal (Genz's algorithm), the crossing probability
under the null by Monte Carlo, and `benchreport plan` through the CLI."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from benchreport.stats.sequential import (
    Rule,
    boundaries,
    conditional_power,
    day_summary,
    exit_probabilities,
    sequential_look,
    spending,
    t_boundary,
)
from request_runs import request_records, request_run, write_request_runs

EQUAL5 = np.arange(1, 6) / 5


def test_obrien_fleming_type_spending_matches_the_published_bounds():
    # Lan-DeMets O'Brien-Fleming type, 5 equally spaced looks, two-sided 0.05 (ldbounds, Reboussin
    # et al. 2000; gsDesign's sfLDOF at one-sided 0.025 gives the same upper bounds)
    np.testing.assert_allclose(boundaries(EQUAL5, 0.05, "obf"), [4.877, 3.357, 2.680, 2.290, 2.031], atol=6e-4)


def test_pocock_type_spending_matches_its_bounds():
    # Lan-DeMets Pocock type, 5 equal looks, two-sided 0.05: 2.438, 2.427, 2.410, 2.397, 2.386
    # (gsDesign sfLDPocock; recomputed by root-finding on scipy's multivariate normal, 6 digits)
    np.testing.assert_allclose(boundaries(EQUAL5, 0.05, "pocock"), [2.438, 2.427, 2.410, 2.397, 2.386], atol=6e-4)


@pytest.mark.parametrize(
    "k, pocock, obf", [(2, 2.178, 1.977), (3, 2.289, 2.004), (4, 2.361, 2.024), (5, 2.413, 2.040), (10, 2.555, 2.087)]
)
def test_classic_pocock_and_obrien_fleming_constants_spend_alpha(k, pocock, obf):
    # Jennison & Turnbull (2000), Table 2.1 (C_P) and Table 2.3 (C_B), two-sided alpha = 0.05:
    # the recursion's crossing probability of those boundaries is 0.05 to the tables' 3 decimals
    t = np.arange(1, k + 1) / k
    assert exit_probabilities(t, np.full(k, pocock)).sum() == pytest.approx(0.05, abs=4e-4)
    assert exit_probabilities(t, obf * np.sqrt(k / np.arange(1, k + 1))).sum() == pytest.approx(0.05, abs=4e-4)


@pytest.mark.parametrize(
    "t, z", [([0.3, 0.4, 0.5, 0.7, 1.0], [3.9, 3.4, 3.0, 2.5, 2.1]), ([0.25, 0.6, 0.9], [2.3, 2.4, 2.2])]
)
def test_exit_probabilities_match_the_multivariate_normal(t, z):
    # Z_k = B(t_k) / sqrt(t_k): corr(Z_i, Z_j) = sqrt(t_i / t_j); P(no crossing) by Genz's algorithm
    t, z = np.asarray(t), np.asarray(z)
    corr = np.sqrt(np.minimum.outer(t, t) / np.maximum.outer(t, t))
    mvn = stats.multivariate_normal(np.zeros(len(t)), corr, abseps=1e-8, releps=1e-8, maxpts=1_000_000)
    assert exit_probabilities(t, z).sum() == pytest.approx(1.0 - mvn.cdf(z, lower_limit=-z), abs=2e-5)


@pytest.mark.parametrize("kind", ["hsd", "obf", "pocock"])
def test_bounds_spend_exactly_the_spending_function(kind):
    t = np.array([0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0])
    spent = np.cumsum(exit_probabilities(t, boundaries(t, 0.05, kind)))
    np.testing.assert_allclose(spent, [spending(x, 0.05, kind) for x in t], atol=1e-7)
    assert spending(1.0, 0.05, kind) == pytest.approx(0.05)
    assert spending(2.0, 0.05, kind) == pytest.approx(0.05) and spending(0.0, 0.05, kind) == 0.0


@pytest.mark.parametrize("gamma", [-4.0, -2.0, 1.0])
def test_hwang_shih_decani_bounds_spend_its_function_by_the_multivariate_normal(gamma):
    # an independent computation: scipy's multivariate normal (Genz's algorithm) puts the chance of
    # crossing some boundary by each look, 1 - P(|Z_j| < c_j for every look so far), at the HSD
    # spending alpha (1 - exp(-gamma t)) / (1 - exp(-gamma)), written out here
    t = np.array([0.3, 0.5, 0.75, 1.0])
    corr = np.sqrt(np.minimum.outer(t, t) / np.maximum.outer(t, t))
    spent = 0.05 * (1 - np.exp(-gamma * t)) / (1 - np.exp(-gamma))
    z = boundaries(t, 0.05, "hsd", gamma)
    for k in range(1, len(t)):
        mvn = stats.multivariate_normal(np.zeros(k + 1), corr[: k + 1, : k + 1], abseps=1e-8, releps=1e-8)
        assert 1 - mvn.cdf(z[: k + 1], lower_limit=-z[: k + 1]) == pytest.approx(spent[k], abs=2e-5)
    assert 2 * stats.norm.sf(z[0]) == pytest.approx(spent[0], rel=1e-9)
    # gamma -4 ends near the O'Brien-Fleming type and starts lower; gamma 0 spends alpha t
    if gamma == -4.0:
        obf = boundaries(t, 0.05, "obf")
        assert z[-1] == pytest.approx(obf[-1], abs=0.03) and z[0] < obf[0] - 0.5
    assert spending(0.4, 0.05, "hsd", 0.0) == pytest.approx(0.02)


def test_a_look_past_the_maximum_has_nothing_left():
    z = boundaries([0.5, 1.0, 1.2], 0.05, "obf")
    assert math.isfinite(z[1]) and math.isinf(z[2])


@pytest.mark.parametrize("kind", ["hsd", "obf", "pocock"])
def test_null_crossing_rate_is_alpha_by_monte_carlo(kind):
    # Brownian motion observed at 3..10 of 10 passes per seat: the share of paths that ever cross
    # the two-sided bounds is alpha within its binomial (Wilson 99.9%) interval
    rng = np.random.default_rng(7)
    t = np.arange(3, 11) / 10
    z = boundaries(t, 0.05, kind)
    paths = 40_000
    b = np.cumsum(rng.standard_normal((paths, len(t))) * np.sqrt(np.diff(np.r_[0.0, t])), axis=1)
    k = int((np.abs(b / np.sqrt(t)) >= z).any(axis=1).sum())
    lo, hi = proportion_confint(k, paths, alpha=0.001, method="wilson")
    assert lo <= 0.05 <= hi


def test_t_boundary_keeps_the_nominal_level():
    z = 2.5
    assert 2 * stats.t.sf(t_boundary(z, 7.0), 7.0) == pytest.approx(2 * stats.norm.sf(z), rel=1e-9)
    assert math.isinf(t_boundary(math.inf, 5.0))


def _welch(a, b):
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    return float(b.mean() - a.mean()), se, df


def test_the_rule_with_estimated_variance_keeps_alpha_where_peeking_does_not():
    # normal log pass values, Welch's se and df at every look from 3 to 10 passes per seat, no
    # noise band (the futility rule off: it can only stop a row without a verdict): the plan's rule,
    # Hwang-Shih-DeCani (the default) and O'Brien-Fleming type, calls a false difference at most
    # alpha (within Monte Carlo error), Welch's test read after every pass far more often
    # (Armitage et al. 1969)
    rng = np.random.default_rng(11)
    rules = {kind: Rule(0.05, 10, kind=kind, noise=0.0) for kind in ("hsd", "obf")}
    reps, plan_calls, peek_calls = 2000, dict.fromkeys(rules, 0), 0
    for _ in range(reps):
        a, b = rng.normal(0, 0.05, 10), rng.normal(0, 0.05, 10)
        looks = [_welch(a[:n], b[:n]) for n in range(3, 11)]
        for kind, rule in rules.items():
            for n, (d, se, df) in zip(range(3, 11), looks):
                status = sequential_look(d, se, df, n, n, rule).status
                if status.startswith("settled"):
                    plan_calls[kind] += status in ("settled: better", "settled: worse")
                    break
        peek_calls += any(2 * stats.t.sf(abs(d / se), df) < 0.05 for d, se, df in looks)
    for kind in rules:
        assert proportion_confint(plan_calls[kind], reps, alpha=0.01, method="wilson")[0] <= 0.05
    assert proportion_confint(peek_calls, reps, alpha=0.01, method="wilson")[0] > 0.08


def test_false_verdicts_stay_under_alpha_with_the_band_and_the_futility_rule():
    # the default rule (HSD -4, 2% band, futility at 10%) on 8%-CV log pass values of two identical
    # seats, looked at after every pass from 3 to 10, vectorised: false better/worse at most alpha
    # (upper Wilson 99% bound checked against the share, the share itself under alpha), and the
    # futility rule stops most such rows before the maximum
    rng = np.random.default_rng(5)
    reps, sd = 4000, math.sqrt(math.log1p(0.08**2))
    a, b = rng.normal(0, sd, (reps, 10)), rng.normal(0, sd, (reps, 10))
    rule = Rule(0.05, 10, futility_effect=0.10)
    called, stopped, alive = 0, np.zeros(reps), np.ones(reps, bool)
    for n in range(3, 11):
        for i in np.flatnonzero(alive):
            d, se, df = _welch(a[i, :n], b[i, :n])
            status = sequential_look(d, se, df, n, n, rule).status
            if status != "continue":
                alive[i] = False
                called += status in ("settled: better", "settled: worse")
                stopped[i] = n if status.startswith("stop") else 0
    assert called / reps <= 0.05 and proportion_confint(called, reps, alpha=0.01, method="wilson")[0] <= 0.05
    assert (stopped > 0).mean() > 0.5 and np.mean(stopped[stopped > 0]) < 8


def test_conditional_power_matches_a_simulation_of_the_remaining_passes():
    # given d at n = 4 per seat and a spread per pass, draw the remaining 6 passes of each seat
    # under a true change of +/-10% and count final repeated intervals beyond the 2% band
    rule = Rule(0.05, 10, futility_effect=0.10)
    c_final = t_boundary(float(boundaries(np.arange(3, 11) / 10, 0.05)[-1]), 18.0)
    rng = np.random.default_rng(2)
    for d, sd in ((0.01, 0.06), (0.05, 0.05), (-0.03, 0.04)):
        shares = []
        for theta in (math.log(1.1), -math.log(1.1)):
            rest = rng.normal(theta, sd, (200_000, 6)).mean(axis=1) - rng.normal(0, sd, (200_000, 6)).mean(axis=1)
            final = (4 * d + 6 * rest) / 10
            half = c_final * sd * math.sqrt(2 / 10)
            shares.append(np.mean((final - half > math.log(1.02)) | (final + half < math.log(0.98))))
        assert conditional_power(d, sd, 4.0, 0.10, rule) == pytest.approx(max(shares), abs=4e-3)
    assert math.isnan(conditional_power(0.0, 0.05, 10.0, 0.10, rule))


def test_statuses_and_the_passes_that_would_settle():
    d = math.log(1.10)
    # 10% better, se 0.04 at 3 passes: not yet (the first O'Brien-Fleming look is strict), settles later
    rule = Rule(0.05, 10)
    look = sequential_look(d, 0.04, 4.0, 3, 3, rule)
    assert look.status == "continue" and look.settle_as == "settled: better" and 3 < look.settle_at <= 10
    # the projection: at settle_at the repeated interval clears 1.02, one pass earlier it does not
    unit = 0.04 / math.sqrt(2 / 3)
    z = boundaries(np.arange(3, 11) / 10, 0.05, "hsd")
    for n, clears in ((look.settle_at, True), (look.settle_at - 1, False)):
        c = t_boundary(float(z[n - 3]), 2 * n - 2)
        assert (math.exp(d - c * unit * math.sqrt(2 / n)) > 1.02) is clears
    # lower is better (a latency) turns the same interval into worse
    assert sequential_look(d, 0.005, 18.0, 10, 10, rule, higher_is_better=False).status == "settled: worse"
    assert sequential_look(0.0, 0.002, 18.0, 10, 10, rule).status == "settled: within noise"
    assert sequential_look(0.0, 0.03, 18.0, 10, 10, rule).status == "cannot settle within the maximum"
    assert sequential_look(d, math.nan, math.nan, 1, 2, rule).status == "needs an interval"
    # futility: no change, a tight spread at 7 of 10 passes: a 10% change is out of reach of the
    # data; the same row without the rule continues, and a row at 10% keeps going
    futile = Rule(0.05, 10, futility_effect=0.10)
    stop = sequential_look(0.0, 0.02, 12.0, 7, 7, futile)
    assert stop.status == "stop: no verdict beyond the band is likely" and stop.conditional_power < 0.10
    assert sequential_look(0.0, 0.02, 12.0, 7, 7, rule).status == "continue"
    assert sequential_look(math.log(1.1), 0.04, 8.0, 5, 5, futile).status in ("continue", "settled: better")


def test_day_summary_is_students_t_on_the_date_means():
    rng = np.random.default_rng(3)
    groups = []
    for _ in range(2):
        days = []
        for _ in range(rng.integers(2, 5)):
            x = rng.normal(rng.normal(0, 0.03), 0.01, rng.integers(2, 5))
            days.append((len(x), float(x.mean()), float(((x - x.mean()) ** 2).sum())))
        groups.append(days)
    s = day_summary(*groups)
    yb, yc = (np.array([g[1] for g in days]) for days in groups)
    ref = stats.ttest_ind(yc, yb, equal_var=True)
    assert s.log_ratio / s.se == pytest.approx(ref.statistic, rel=1e-9)
    assert s.df == ref.df and (s.days_baseline, s.days_candidate) == (len(yb), len(yc))
    assert day_summary([(3, 0.0, 0.1)], [(3, 0.1, 0.1)]) is None


# --- through the CLI ---------------------------------------------------------------------------


def _runs(folder, *, passes: int, speed: float, dates=("2026-12-01",), day_cv: float = 0.0, seed: int = 0):
    """Two seats of request-level native runs; the candidate `speed` times faster; a day factor."""
    rng = np.random.default_rng(seed)
    runs = []
    for seat, role, v in (("seat-a", "incumbent", 1.0), ("seat-b", "candidate", speed)):
        for date in dates:
            day = math.exp(day_cv * rng.standard_normal())
            for p in range(1, passes + 1):
                f = v * day * math.exp(0.03 * rng.standard_normal())
                recs = request_records(rng, 60)
                for r in recs:
                    r["ttft_ms"], r["e2e_latency_ms"] = round(r["ttft_ms"] / f, 4), round(r["e2e_latency_ms"] / f, 4)
                runs.append(request_run(seat, p, recs, date=date, role=role))
    return write_request_runs(folder, runs)


def test_plan_through_the_cli(cli, tmp_path):
    runs = _runs(tmp_path / "runs", passes=4, speed=1.3)
    r = cli("plan", runs, "--quiet", "--format", "json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    primary = [x for x in rows if x["primary"]]
    assert len(primary) == 1
    p = primary[0]
    assert p["unit"] == "passes" and (p["baseline_n"], p["candidate_n"]) == (4, 4) and p["max_n"] == 10
    # two families (throughput, latency) share alpha (issue 43): the primary is its family's first at 0.025
    assert p["alpha"] == pytest.approx(0.025) and "first cell of the throughput family" in p["correction"]
    assert p["status"] in ("settled: better", "continue") and p["ratio"] > 1.2
    # --metric adds rows, planned at the secondary level; csv carries every column
    r = cli("plan", runs, "--quiet", "--format", "csv", "--metric", "ttft_ms", "--spending", "pocock")
    df = pd.read_csv(pd.io.common.StringIO(r.stdout))
    assert (df["metric"] == "ttft_ms").sum() >= 1 and set(df["spending"]) == {"pocock"}
    assert (df.loc[~df["primary"].astype(bool), "alpha"] < 0.05).all()
    out = tmp_path / "plan.md"
    r = cli("plan", runs, "--quiet", "--out", out)
    assert r.returncode == 0 and out.read_text().startswith("| candidate |")


def test_plan_counts_days_where_the_interval_holds_them(cli, tmp_path):
    runs = _runs(
        tmp_path / "runs", passes=3, speed=1.0, dates=("2026-11-29", "2026-11-30", "2026-12-01"), day_cv=0.03, seed=5
    )
    rows = json.loads(cli("plan", runs, "--quiet", "--format", "json").stdout)
    p = [x for x in rows if x["primary"]][0]
    assert p["unit"] == "days" and (p["baseline_n"], p["candidate_n"]) == (3, 3) and p["df"] == 4
    # a run store of the same runs plans the same (RUNS or --store, as every command)
    assert cli("ingest", runs, "--store", tmp_path / "store", "--quiet").returncode == 0
    stored = json.loads(cli("plan", "--store", tmp_path / "store", "--quiet", "--format", "json").stdout)
    assert [x for x in stored if x["primary"]][0] == p


def test_plan_usage_errors(cli, tmp_path):
    runs = _runs(tmp_path / "runs", passes=3, speed=1.0)
    assert cli("plan", runs, "--metric", "no_such_metric").returncode == 2
    assert cli("plan", runs, "--out", tmp_path / "plan.pdf").returncode == 2
    assert cli("plan", tmp_path / "missing").returncode == 2
    with pytest.raises(SystemExit) as exc:  # argparse: one line, exit 2
        cli("plan", runs, "--max-passes", "2")
    assert exc.value.code == 2


def test_the_plans_verdict_is_analyses(cli, tmp_path):
    # the sequential study reads `analyse`'s verdict from the plan's `verdict` column: the same rows
    runs = _runs(tmp_path / "runs", passes=5, speed=1.06, seed=9)
    assert cli("analyse", runs, "--out", tmp_path / "a", "--quiet").returncode == 0
    table = pd.read_csv(tmp_path / "a" / "tables" / "comparisons.csv")
    table = table[(table["kind"] == "baseline")]
    rows = json.loads(
        cli("plan", runs, "--quiet", "--format", "json", "--metric", ",".join(set(table["metric"]))).stdout
    )
    assert len(rows) == len(table)
    got = {(r["metric"], r["statistic"], r["workload"], r["concurrency"]): r["verdict"] for r in rows}
    want = {(r.metric, r.statistic, r.workload, r.concurrency): r.verdict for r in table.itertuples()}
    assert got == want


def test_futility_stops_a_no_change_seat_and_not_a_ten_percent_one(cli, tmp_path):
    # two identical seats at 6 passes (3% pass noise): no verdict beyond the 2% band is within
    # reach even were the true change 10%, so the plan stops the row and says why with its numbers;
    # the same runs with the rule off continue (it is non-binding: nothing else changes)
    same = _runs(tmp_path / "same", passes=6, speed=1.0, seed=4)
    row = [x for x in json.loads(cli("plan", same, "--quiet", "--format", "json").stdout) if x["primary"]][0]
    assert row["status"] == "stop: no verdict beyond the band is likely"
    assert row["conditional_power"] < 0.10 and row["futility_effect"] == pytest.approx(0.10)
    text = cli("plan", same, "--quiet").stdout
    assert "stop: no verdict beyond the band is likely" in text
    want = f"{100 * row['conditional_power']:.0f}% chance of better/worse by 10 passes even at a true +/-10% change"
    assert want in text
    off = json.loads(cli("plan", same, "--quiet", "--format", "json", "--futility-effect", "0").stdout)
    off = [x for x in off if x["primary"]][0]
    assert off["status"] == "continue" and off["conditional_power"] is None
    assert {k: off[k] for k in ("z_boundary", "t_boundary", "rci_low", "rci_high")} == {
        k: row[k] for k in ("z_boundary", "t_boundary", "rci_low", "rci_high")
    }
    # a true 10% change at the same passes: the rule does not fire
    for seed in (4, 6, 8):
        faster = _runs(tmp_path / f"faster{seed}", passes=6, speed=1.10, seed=seed)
        rows = json.loads(cli("plan", faster, "--quiet", "--format", "json").stdout)
        row = [x for x in rows if x["primary"]][0]
        assert row["status"] in ("settled: better", "continue"), row
