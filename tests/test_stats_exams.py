"""Exact tests and exam deltas against published values and independent implementations."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.power import NormalIndPower

from benchreport.stats import (
    EXAM_DELTA_COLUMNS,
    counts_exact,
    exam_delta_counts,
    exam_delta_paired,
    exam_deltas,
    holm,
    mcnemar_exact,
    mde_paired,
    mde_unpaired,
    parse_counts,
    wilson,
)

try:
    from tests.stats_fixtures import exam, exam_item_rows, exam_items_frame, exams_frame, paired_verdicts, seats_frame
except ImportError:  # tests/ on sys.path instead of the repository root
    from stats_fixtures import exam, exam_item_rows, exam_items_frame, exams_frame, paired_verdicts, seats_frame


# --------------------------------------------------------------------------- McNemar
def test_mcnemar_3_10_is_189_over_2048():
    r = mcnemar_exact(3, 10)
    assert r.p_value == pytest.approx(189 / 2048, abs=1e-12)
    assert r.p_value == pytest.approx(stats.binomtest(3, 13, 0.5).pvalue, abs=1e-12)
    assert r.p_value == pytest.approx(mcnemar([[20, 3], [10, 30]], exact=True).pvalue, abs=1e-12)


def test_mcnemar_mid_p_hand_derived():
    # X ~ Bin(13, 1/2): P(X <= 3) = (1 + 13 + 78 + 286)/8192 = 378/8192, P(X = 3) = 286/8192;
    # mid-p = 2 (378 - 143)/8192 = 470/8192 = 235/4096
    assert mcnemar_exact(3, 10).p_mid == pytest.approx(235 / 4096, abs=1e-15)


def test_mcnemar_published_example_cavo_2012():
    # Fagerland, Lydersen & Laake (2013 BMC MRM 13:91; 2017 book ch. 8), Cavo et al. 2012:
    # discordant 6 and 16: exact conditional P = 0.052479, mid-P = 0.034690
    r = mcnemar_exact(6, 16)
    assert round(r.p_value, 6) == 0.052479
    assert round(r.p_mid, 6) == 0.034690


@pytest.mark.parametrize("b,c", [(0, 1), (5, 6), (6, 5), (0, 0), (7, 7)])
def test_mcnemar_is_one_when_discordance_is_balanced_or_tiny(b, c):
    assert mcnemar_exact(b, c).p_value == 1.0
    assert mcnemar_exact(b, c).p_mid <= 1.0


@pytest.mark.parametrize("b,c", [(0, 9), (2, 11), (30, 45), (100, 140)])
def test_mcnemar_equals_scipy_binomtest(b, c):
    assert mcnemar_exact(b, c).p_value == pytest.approx(stats.binomtest(b, b + c, 0.5).pvalue, rel=1e-12)


# --------------------------------------------------------------------------- counts
def test_153_vs_154_of_164_is_not_significant_any_way():
    r = exam_delta_counts(153, 164, 154, 164)
    assert r.p_value == 1.0
    assert stats.fisher_exact([[153, 11], [154, 10]]).pvalue == pytest.approx(1.0)
    for b, c in ((0, 1), (5, 6)):
        both = 153 - b
        p = exam_delta_paired(both, b, c, 164 - both - b - c)
        assert p.baseline_correct == 153 and p.candidate_correct == 154 and p.p_value == 1.0


def _boschloo_brute_force(x1, n1, x2, n2, grid=2001):
    """Boschloo's two-sided p-value from its definition, independently of scipy's implementation.

    The statistic is Fisher's one-sided p-value; for each side, the p-value is the
    largest, over the common success probability pi, of the probability of a table at
    least as extreme; two-sided is twice the smaller side, capped at 1 (Boschloo 1970).
    """
    a = np.arange(n1 + 1)[:, None]
    b = np.arange(n2 + 1)[None, :]
    k = a + b  # total successes of each table
    # Fisher one-sided p of each table: P(X1 <= a | margins) for "less", P(X1 >= a) for "greater"
    less = stats.hypergeom.cdf(a, n1 + n2, k, n1)
    greater = stats.hypergeom.sf(a - 1, n1 + n2, k, n1)
    pis = np.linspace(0, 1, grid)
    pa = stats.binom.pmf(np.arange(n1 + 1)[None, :], n1, pis[:, None])
    pb = stats.binom.pmf(np.arange(n2 + 1)[None, :], n2, pis[:, None])
    out = []
    for t in (less, greater):
        extreme = (t <= t[x1, x2] * (1 + 1e-9)).astype(float)
        prob = np.einsum("pi,ij,pj->p", pa, extreme, pb)
        out.append(prob.max())
    return min(1.0, 2 * min(out))


@pytest.mark.parametrize(
    "x1,n1,x2,n2,published",
    [
        (30, 30, 24, 30, 0.01350),  # issue 11's reference value
        (153, 164, 154, 164, 0.956),  # the field note's HumanEval delta
        (20, 40, 31, 40, None),
        (3, 12, 9, 14, None),
    ],
)
def test_boschloo_against_published_and_brute_force_values(x1, n1, x2, n2, published):
    t = counts_exact(x1, n1, x2, n2)
    ref = _boschloo_brute_force(x1, n1, x2, n2)
    assert t.p_boschloo == pytest.approx(ref, rel=2e-3)
    if published is not None:
        assert t.p_boschloo == pytest.approx(published, abs=6e-4)
    fisher = stats.hypergeom  # Fisher's two-sided p from the hypergeometric, as R's fisher.test
    k, n = x1 + x2, n1 + n2
    pmf = fisher.pmf(np.arange(0, min(k, n1) + 1), n, k, n1)
    p_obs = fisher.pmf(x1, n, k, n1)
    assert t.p_fisher == pytest.approx(min(1.0, pmf[pmf <= p_obs * (1 + 1e-7)].sum()), rel=1e-9)


def test_boschloo_skipped_above_the_size_limit():
    t = counts_exact(900, 1000, 910, 1000, boschloo_max_n=500)
    assert math.isnan(t.p_boschloo) and "boschloo_max_n" in t.note


# --------------------------------------------------------------------------- Holm
def holm_by_closed_testing(p) -> np.ndarray:
    """Holm (1979) as the closed test of Bonferroni tests (Marcus, Peritz & Gabriel 1976): the
    adjusted p of H_i is the largest min(1, |S| min_{j in S} p_j) over the subsets S holding i.
    Brute force over all subsets: an implementation that shares nothing with statsmodels'."""
    from itertools import combinations

    p = list(p)
    m = len(p)
    out = []
    for i in range(m):
        others = [j for j in range(m) if j != i]
        out.append(
            max(min(1.0, (k + 1) * min(p[j] for j in (i, *rest))) for k in range(m) for rest in combinations(others, k))
        )
    return np.array(out)


def test_holm_equals_closed_testing():
    p = np.random.default_rng(0).uniform(0, 0.2, 12)
    p[3] = 0.0
    p[7] = p[5]  # a tie
    np.testing.assert_allclose(holm(p), holm_by_closed_testing(p), rtol=1e-15)


def test_holm_ignores_nan():
    p = np.array([0.01, np.nan, 0.04, 0.03])
    out = holm(p)
    assert np.isnan(out[1])
    np.testing.assert_allclose(out[[0, 2, 3]], [0.03, 0.06, 0.06])


# --------------------------------------------------------------------------- mde
def test_mde_unpaired_equals_normal_power_solution():
    # Miller (2024): MDE = (z_{1-a/2} + z_power) sqrt(2 p(1-p)/n); statsmodels solves the same
    # two-sample z power problem (it adds the negligible far tail)
    n, p = 164, (153 + 154) / 328
    d = NormalIndPower().solve_power(effect_size=None, nobs1=n, alpha=0.05, power=0.8, ratio=1.0)
    assert mde_unpaired(153, 164, 154, 164) == pytest.approx(d * math.sqrt(p * (1 - p)), rel=1e-4)
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    assert mde_unpaired(153, 164, 154, 164) == pytest.approx(z * math.sqrt(2 * p * (1 - p) / n), rel=1e-12)


def test_mde_paired_uses_discordance():
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    b, c, n = 5, 6, 164
    d = np.array([0] * (n - b - c) + [-1] * b + [1] * c)  # per-item differences candidate - baseline
    assert mde_paired(b, c, n) == pytest.approx(z * np.std(d) / math.sqrt(n), rel=1e-12)
    assert mde_paired(5, 6, 164) < mde_unpaired(153, 164, 154, 164)
    assert math.isnan(mde_paired(0, 0, 50))


# --------------------------------------------------------------------------- parse_counts
def test_parse_counts_accepts_plain_counts():
    assert parse_counts("153/164") == (153, 164)
    assert parse_counts(" 0 / 7 ") == (0, 7)


@pytest.mark.parametrize(
    "text,msg",
    [
        ("153", "CORRECT/TOTAL"),
        ("153/164/1", "CORRECT/TOTAL"),
        ("", "CORRECT/TOTAL"),
        ("15.3/164", "whole numbers"),
        ("a/b", "whole numbers"),
        ("153/16x", "whole numbers"),
        ("-1/164", "negative"),
        ("1/-164", "negative"),
        ("0/0", "total must be positive"),
        ("165/164", "must not exceed"),
    ],
)
def test_parse_counts_rejects_malformed_counts_with_a_clear_message(text, msg):
    with pytest.raises(ValueError, match=msg):
        parse_counts(text)


def test_parse_counts_rejects_non_text():
    with pytest.raises(ValueError):
        parse_counts(153)


# --------------------------------------------------------------------------- exam-delta --json
def test_exam_delta_json_has_the_row_fields_and_the_four_pairs():
    r = exam_delta_counts(*parse_counts("153/164"), *parse_counts("154/164"))
    d = json.loads(r.to_json())
    for k in EXAM_DELTA_COLUMNS + [
        "baseline_ci_wilson",
        "candidate_ci_wilson",
        "baseline_ci_exact",
        "candidate_ci_exact",
    ]:
        assert k in d
    assert d["test"] == "Fisher exact (counts)"
    assert d["p_value"] == 1.0 and d["p_mid"] is None
    assert d["baseline_only"] is None and d["candidate_only"] is None
    assert d["baseline_ci_wilson"] == pytest.approx(list(wilson(153, 164)))
    assert d["diff"] == pytest.approx(1 / 164)
    assert d["diff_ci_low"] < 0 < d["diff_ci_high"]
    assert d["mde"] > 0.05


def test_exam_delta_counts_validates_arguments():
    with pytest.raises(ValueError, match="a_correct"):
        exam_delta_counts(165, 164, 1, 2)
    with pytest.raises(ValueError, match="b_total"):
        exam_delta_counts(1, 2, 0, 0)
    with pytest.raises(ValueError, match="alpha"):
        exam_delta_counts(1, 2, 1, 2, alpha=2)


# --------------------------------------------------------------------------- exam_deltas table
def _items(seat, first, bench="HumanEval", dim=None):
    return exam_item_rows(seat, bench, first, dimension=dim)


def test_exam_deltas_pairs_shared_items_and_uses_counts_otherwise():
    base_v, cand_v = paired_verdicts(140, 3, 10, 11, seed=1)
    ex = exams_frame(
        [
            exam("inc", "HumanEval", sum(base_v), 164, from_items=True),
            exam("new", "HumanEval", sum(cand_v), 164, from_items=True),
            exam("inc", "frontier", 90, 94, dimension="agentic", count_rounding="96.2% of 94 = 90.43, rounded to 90"),
            exam("new", "frontier", 92, 94, dimension="agentic"),
            exam("inc", "GSM8K", 1200, 1319),  # candidate has no GSM8K: no row
        ]
    )
    items = exam_items_frame(_items("inc", base_v) + _items("new", cand_v))
    out = exam_deltas(ex, items, seats_frame({"inc": "incumbent", "new": "candidate"}))
    assert list(out.columns[: len(EXAM_DELTA_COLUMNS)]) == EXAM_DELTA_COLUMNS
    assert "p_boschloo" in out.columns and "note" in out.columns
    assert len(out) == 2
    he = out[out["benchmark"] == "HumanEval"].iloc[0]
    assert he["test"] == "McNemar exact (paired items)"
    assert (he["baseline_only"], he["candidate_only"], he["n_items"]) == (3, 10, 164)
    assert he["p_value"] == pytest.approx(189 / 2048, abs=1e-12)
    assert he["diff"] == pytest.approx(7 / 164)
    assert he["diff_ci_method"] == "Tango score"
    fr = out[out["benchmark"] == "frontier"].iloc[0]
    assert fr["test"] == "Fisher exact (counts)" and fr["dimension"] == "agentic"
    assert "rounded to 90" in fr["note"]
    assert fr["p_value"] == pytest.approx(stats.fisher_exact([[90, 4], [92, 2]]).pvalue)
    assert fr["diff_ci_method"] == "Newcombe hybrid score"
    np.testing.assert_allclose(out["p_holm"], holm_by_closed_testing(out["p_value"]))


def test_exam_deltas_items_answered_by_one_seat_only_are_left_out():
    base_v, cand_v = paired_verdicts(50, 2, 4, 4, seed=2)
    items = exam_items_frame(_items("inc", base_v + [True, True]) + _items("new", cand_v))
    ex = exams_frame(
        [
            exam("inc", "HumanEval", sum(base_v) + 2, 62, from_items=True),
            exam("new", "HumanEval", sum(cand_v), 60, from_items=True),
        ]
    )
    out = exam_deltas(ex, items, None, baseline="inc")
    row = out.iloc[0]
    assert row["n_items"] == 60 and "2 item(s)" in row["note"]


def test_exam_deltas_uses_the_latest_result_of_each_seat():
    ex = exams_frame(
        [
            exam("inc", "MMLU", 50, 100, date="2026-08-01"),
            exam("inc", "MMLU", 70, 100, date="2026-09-01"),
            exam("new", "MMLU", 72, 100, date="2026-09-01"),
        ]
    )
    out = exam_deltas(ex, None, seats_frame({"inc": "incumbent", "new": "candidate"}))
    assert out.iloc[0]["baseline_correct"] == 70


def test_exam_deltas_without_a_baseline_compare_every_pair_of_a_few_seats():
    ex = exams_frame([exam("a", "MMLU", 50, 100), exam("b", "MMLU", 60, 100), exam("c", "MMLU", 70, 100)])
    out = exam_deltas(ex, None, seats_frame({"a": "candidate", "b": "candidate", "c": "candidate"}))
    assert list(zip(out["baseline"], out["candidate"])) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert out["note"].str.contains("every pair compared").all()
    ref = stats.fisher_exact([[50, 50], [60, 40]]).pvalue
    assert out["p_value"].iloc[0] == pytest.approx(ref, abs=1e-12)
    many = exams_frame([exam(f"s{i}", "MMLU", 50 + i, 100) for i in range(7)])
    out = exam_deltas(many, None, seats_frame({f"s{i}": "candidate" for i in range(7)}))
    assert len(out) == 0 and list(out.columns[:3]) == EXAM_DELTA_COLUMNS[:3]
    with pytest.raises(ValueError, match="baseline"):
        exam_deltas(ex, None, None, baseline="zzz")


def test_exam_delta_summary_and_as_dict_for_the_cli():
    r = exam_delta_counts(153, 164, 154, 164)
    assert r.as_dict() == r.to_dict()
    text = r.summary()
    assert "Fisher exact" in text and "p = 1" in text and "[0.8839, 0.9621]" in text
    paired = exam_delta_paired(140, 3, 10, 11)
    assert "baseline only right: 3" in paired.summary()


@pytest.mark.parametrize(
    "name, level",
    [
        ("mmlu", 0.25),
        ("MMLU-Pro", 0.10),
        ("mmlu_pro_math", 0.10),
        ("hendrycksTest-abstract_algebra", None),
        ("leaderboard_gpqa_diamond", 0.25),
        ("arc_challenge", 0.25),
        ("winogrande", 0.50),
        ("GSM8K", None),
        ("HumanEval", None),
        ("racecar", None),
    ],
)
def test_chance_level_of_multiple_choice_exams(name, level):
    """1 / options for exams with a fixed number of options per item; none for free-form answers."""
    from benchreport.stats.exams import chance_level

    assert chance_level(name) == level


def test_a_delta_of_scores_that_are_no_count_is_the_scores_difference(tmp_path):
    """Issue 42, on the example: 88.2 against 96.2 on 94 items is no count (82.91 items), so the
    delta is the published scores' -8.0 points, never one of made-up counts (83 against 90:
    -7.4), and no counts, test or interval are given. Through the command line."""
    from pathlib import Path

    import pandas as pd

    from benchreport.cli import main

    example = Path(__file__).resolve().parents[1] / "data" / "example"
    assert main(["analyse", str(example), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    d = pd.read_csv(tmp_path / "out" / "tables" / "exam_deltas.csv")
    rows = d[(d["benchmark"] == "frontier")].set_index("dimension")
    assert set(rows["baseline"]) == {"qwen3.8-flash-next-tp2"}
    assert rows.loc["agentic", "diff"] == pytest.approx(-0.080)  # 88.2 - 96.2
    assert rows.loc["flat", "diff"] == pytest.approx(-0.060)  # 90.8 - 96.8
    assert rows[["baseline_correct", "candidate_correct", "p_value", "diff_ci_low"]].isna().all().all()
