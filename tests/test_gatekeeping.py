"""Gatekeeping (issue 30): the primary cell first, then Holm over the rest.

Checked against a fixed-sequence example worked by hand (Westfall & Krishen 2001), against the
closed testing procedure the serial gatekeeper is (computed by brute force over every
intersection, Dmitrienko & Tamhane 2007), against statsmodels' Holm for the second stage, and
through the comparisons table and the `sample.underpowered` flag.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from benchreport.flags import rules as R
from benchreport.flags import words
from benchreport.stats.compare import COMPARISON_COLUMNS, COMPARISON_EXTRA_COLUMNS, rejudge
from benchreport.stats.multiplicity import family_gatekeeping, gatekeeping
from benchreport.thresholds import DEFAULT


def test_fixed_sequence_worked_by_hand():
    # one primary hypothesis tested at the full alpha, then Holm over three secondaries:
    # Holm of (0.01, 0.02, 0.04) is (3 x 0.01, 2 x 0.02, 1 x 0.04) = (0.03, 0.04, 0.04);
    # each is raised to the primary's p when that is larger (Westfall & Krishen 2001, fixed sequence)
    g = gatekeeping([0.01, 0.01, 0.02, 0.04], [True, False, False, False])
    np.testing.assert_allclose(g.p_adj, [0.01, 0.03, 0.04, 0.04])
    assert g.is_open(0.05) and g.n_primary == 1 and g.n_secondary == 3
    # primary not rejected at 5%: nothing behind it is, however small its p
    g = gatekeeping([0.06, 0.001, 0.02, 0.04], [True, False, False, False])
    np.testing.assert_allclose(g.p_adj, [0.06, 0.06, 0.06, 0.06])
    assert not g.is_open(0.05)
    assert all("not tested" in r for r in g.rule(0.05)[1:])
    # the primary alone at the full alpha: 0.04 is rejected although Holm over all four would not
    assert gatekeeping([0.04, 0.5, 0.6, 0.7], [True, False, False, False]).p_adj[0] == pytest.approx(0.04)
    assert multipletests([0.04, 0.5, 0.6, 0.7], method="holm")[1][0] == pytest.approx(0.16)


def _closure(p: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Adjusted p-values of the closed testing procedure whose local test of an intersection I is
    Bonferroni over its primary members when it has any, else over its secondary members:
    p_adj(i) = max over I containing i of |J| min_{j in J} p_j, J = I's primaries or, if none, I."""
    m = len(p)
    out = np.zeros(m)
    for r in range(1, m + 1):
        for subset in itertools.combinations(range(m), r):
            idx = np.asarray(subset)
            j = idx[first[idx]] if first[idx].any() else idx
            local = min(1.0, len(j) * float(p[j].min()))
            out[idx] = np.maximum(out[idx], local)
    return out


@pytest.mark.parametrize("seed", range(12))
def test_gatekeeping_is_the_closure_of_its_bonferroni_local_tests(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(3, 9))
    first = np.zeros(m, dtype=bool)
    first[rng.choice(m, size=int(rng.integers(1, 3)), replace=False)] = True
    p = np.where(rng.random(m) < 0.5, rng.uniform(0, 0.03, m), rng.uniform(0, 1, m))
    np.testing.assert_allclose(gatekeeping(p, first).p_adj, _closure(p, first), rtol=1e-12)


def test_second_stage_is_statsmodels_holm_and_no_primary_opens_the_gate():
    rng = np.random.default_rng(4)
    p = rng.uniform(0, 0.2, 10)
    p[0] = 1e-6
    first = np.zeros(10, dtype=bool)
    first[0] = True
    g = gatekeeping(p, first)
    np.testing.assert_allclose(g.p_adj[1:], multipletests(p[1:], method="holm")[1])
    none = gatekeeping(p, np.zeros(10, dtype=bool))
    np.testing.assert_allclose(none.p_adj, multipletests(p, method="holm")[1])
    assert none.gate == 0.0


def test_a_primary_without_a_test_is_not_in_the_sequence_and_nan_stays_nan():
    """Too few passes for a test is a matter of design, known before any outcome: that primary is
    left out of the sequence (family 2 then gets Holm alone), never a closed gate for the rest."""
    g = gatekeeping([np.nan, 0.001, np.nan, 0.03], [True, False, False, False])
    assert np.isnan(g.p_adj[0]) and np.isnan(g.p_adj[2]) and g.gate == 0.0
    np.testing.assert_allclose(g.p_adj[[1, 3]], multipletests([0.001, 0.03], method="holm")[1])
    # with another primary that was tested, that one is the gate
    g = gatekeeping([np.nan, 0.2, 0.001], [True, True, False])
    assert g.gate == pytest.approx(0.2) and g.p_adj[2] == pytest.approx(0.2)
    assert not g.is_open(0.05)


def _comparison(metric, p, primary, *, low=1.1, high=1.3, concurrency=16) -> dict:
    return {
        "workload": "decode",
        "concurrency": concurrency,
        "metric": metric,
        "statistic": "mean",
        "baseline": "inc",
        "candidate": "new",
        "baseline_estimate": 100.0,
        "candidate_estimate": 120.0,
        "ratio": 1.2,
        "ci_low": low,
        "ci_high": high,
        "ci_method": "Welch t on log pass values (df=4.0)",
        "kind": "baseline",
        "ci_level": 0.95,
        "p_value": p,
        "p_adj": np.nan,
        "verdict": "",
        "verdict_reason": "",
        "primary": primary,
        "multiplicity": "",
        "df": 4.0,
        "baseline_n_passes": 3,
        "candidate_n_passes": 3,
    }


def _frame(rows) -> pd.DataFrame:
    return pd.DataFrame(rows).reindex(columns=COMPARISON_COLUMNS + COMPARISON_EXTRA_COLUMNS)


def test_comparisons_say_the_rule_and_why_a_secondary_was_not_tested():
    rows = [
        _comparison("output_tok_s", 0.03, True),
        _comparison("decode_tok_s_per_stream", 0.001, False),
        _comparison("prefill_tok_s", 0.002, False),
    ]
    out = rejudge(_frame(rows), DEFAULT)
    assert list(out["verdict"]) == ["better", "better", "better"]  # 0.03 < 0.05: the gate opens
    np.testing.assert_allclose(out["p_adj"], [0.03, 0.03, 0.03])
    rows[0]["p_value"] = 0.07
    closed = rejudge(_frame(rows), DEFAULT)
    assert list(closed["verdict"]) == ["insufficient_data"] * 3
    assert closed["verdict_reason"][0].startswith("not significant after the correction for multiple comparisons")
    assert set(closed["verdict_reason"][1:]) == {
        "not tested: the throughput family's first cell was not rejected (gatekeeping); the interval clears the "
        "noise band"
    }
    assert closed["multiplicity"][0] == (
        "throughput family, at the full alpha (the only family tested); "
        "gatekeeping, primary: tested first in its family, at the family's alpha"
    )


def _family_closure(p: np.ndarray, fam: np.ndarray, first: np.ndarray, n_families: int) -> np.ndarray:
    """Adjusted p-values of the closed testing procedure whose local test of an intersection I is
    a Bonferroni split of alpha over the F families, each family's alpha/F spent on I's first
    members in that family when it has any, else on I's members in that family (Bretz et al.
    2009, weighted Bonferroni local tests): p_I = min over families f touching I of
    F |J_f| min_{j in J_f} p_j; p_adj(i) = max over I containing i of p_I."""
    m = len(p)
    out = np.zeros(m)
    for r in range(1, m + 1):
        for subset in itertools.combinations(range(m), r):
            idx = np.asarray(subset)
            local = 1.0
            for f in set(fam[idx]):
                mine = idx[fam[idx] == f]
                j = mine[first[mine]] if first[mine].any() else mine
                local = min(local, n_families * len(j) * float(p[j].min()))
            out[idx] = np.maximum(out[idx], min(1.0, local))
    return out


@pytest.mark.parametrize("seed", range(12))
def test_family_gatekeeping_is_the_closure_of_weighted_bonferroni_local_tests(seed):
    """Issue 43: gatekeeping within each family at alpha/F (Bonferroni across families) is the
    closed procedure of weighted Bonferroni local tests, computed here by brute force."""
    rng = np.random.default_rng(100 + seed)
    m = int(rng.integers(3, 9))
    fam = rng.choice(np.array(["throughput", "latency", "start-up"], dtype=object), size=m)
    first = np.zeros(m, dtype=bool)
    for f in set(fam):  # one first cell in most families, none in some
        if rng.random() < 0.8:
            first[rng.choice(np.flatnonzero(fam == f))] = True
    p = np.where(rng.random(m) < 0.5, rng.uniform(0, 0.03, m), rng.uniform(0, 1, m))
    extra = ("exams",) if seed % 3 == 0 else ()
    got = family_gatekeeping(p, fam, first, elsewhere=extra)
    n = len(set(fam)) + len(extra)
    assert got.n_families == n
    np.testing.assert_allclose(got.p_adj, _family_closure(p, fam, first, n), rtol=1e-12)


def test_a_latency_only_change_is_called_behind_an_unchanged_throughput_cell():
    """The audit's case (issue 43): throughput unchanged (its interval across 1), TTFT 21% up with
    p = 8e-6. Before, the throughput primary closed the gate on every latency row; now the latency
    family is tested at alpha/2 behind its own first cell, and the TTFT rows are `worse`."""
    rows = [
        _comparison("output_tok_s", 0.6, True, low=0.97, high=1.02),
        _comparison("ttft_ms", 8e-6, False, low=1.162, high=1.270),
        _comparison("ttft_ms", 1e-4, False, low=1.12, high=1.30, concurrency=1),
        _comparison("e2e_latency_ms", 0.3, False, low=0.98, high=1.05),
    ]
    rows[1]["family_first"] = True
    out = rejudge(_frame(rows), DEFAULT)
    assert list(out["family"]) == ["throughput", "latency", "latency", "latency"]
    assert list(out["verdict"]) == ["insufficient_data", "worse", "worse", "insufficient_data"]
    np.testing.assert_allclose(out["p_adj"][:3], [min(1, 2 * 0.6), 2 * 8e-6, 2 * max(8e-6, 2 * 1e-4)])
    assert set(out["family_alpha"]) == {0.025}
    assert out["multiplicity"][1].startswith("latency family, at alpha/2 (Bonferroni across 2 families: ")
    # with exams tested in their table, three families share alpha
    three = rejudge(_frame(rows), DEFAULT, elsewhere=("exams",))
    np.testing.assert_allclose(three["family_alpha"], 0.05 / 3)
    assert list(three["verdict"]) == ["insufficient_data", "worse", "worse", "insufficient_data"]


def test_passes_needed_counts_the_correction_the_cell_faces():
    lo, hi = 0.9, 1 / 0.9
    rows = [_comparison("output_tok_s", 0.5, True, low=lo, high=hi)]
    rows += [_comparison("ttft_ms", 0.5, False, low=lo, high=hi, concurrency=c) for c in range(1, 30)]
    judged = rejudge(_frame(rows), DEFAULT)
    f = R.underpowered(judged, thresholds=DEFAULT)[0]
    cells = {(c["metric"], c["concurrency"]): c for c in f.evidence()["cells"]}
    se = math.log(hi / lo) / (2 * stats.t.ppf(0.975, 4.0))
    s2 = se**2 / (1 / 3 + 1 / 3)
    gap = math.log(1.05) - math.log(1.02)

    def need(a):
        return max(3, math.ceil(2 * s2 * (stats.norm.ppf(1 - a / 2) + stats.norm.ppf(0.8)) ** 2 / gap**2))

    # two families (throughput, latency) share alpha: 0.025 each (issue 43); the 29 latency rows
    # have no first cell in this table, so Holm over them at 0.025, worst case 0.025/29
    first, second = cells[("output_tok_s", 16)], cells[("ttft_ms", 1)]
    assert first["passes_needed"] == need(0.025) and first["test_alpha"] == pytest.approx(0.025)
    assert second["passes_needed"] == need(0.025 / 29) and second["test_alpha"] == pytest.approx(0.025 / 29)
    assert second["passes_needed"] > first["passes_needed"]
    assert "first cell of the throughput family at 0.025" == first["correction"]
    assert "latency family" in second["correction"] and "/29" in second["correction"]
    text = words.message(f)
    assert "tested at the 0.025 level the correction for multiple comparisons leaves" in text


def test_no_passes_are_asked_for_a_cell_whose_interval_clears_the_band():
    """Issue 43: a cell whose interval clears the noise band but whose verdict the correction
    withheld is not underpowered: no passes needed, and the flag says why instead."""
    rows = [
        _comparison("output_tok_s", 0.07, True, low=1.12, high=1.30),
        _comparison("decode_tok_s_per_stream", 0.001, False, low=1.12, high=1.30),
    ]
    judged = rejudge(_frame(rows), DEFAULT)
    assert list(judged["verdict"]) == ["insufficient_data", "insufficient_data"]
    f = R.underpowered(judged, thresholds=DEFAULT)[0]
    cells = f.evidence()["cells"]
    assert all(c["withheld"] is True and c["passes_needed"] is None for c in cells)
    text = words.message(f)
    assert "passes per seat needed" not in text
    assert "because of the correction for multiple comparisons, not the sample" in text
    assert "not tested: the throughput family's first cell was not rejected" in text


def test_the_exam_family_is_judged_at_its_share_of_alpha():
    """Exams are one of the families (issue 43): with the comparisons at alpha/2 each (throughput and
    exams sharing alpha), an exam delta with p = 0.03 is not significant, and the words say why."""
    exams = pd.DataFrame(
        [
            {
                "benchmark": "humaneval",
                "dimension": None,
                "baseline": "inc",
                "candidate": "new",
                "test": "mcnemar_exact",
                "n_items": 164,
                "baseline_correct": 140,
                "candidate_correct": 150,
                "p_value": 0.03,
                "p_holm": 0.03,
                "diff": 10 / 164,
                "mde": 0.05,
            }
        ]
    )
    rows = [_comparison("output_tok_s", 0.5, True, low=0.95, high=1.05)]
    judged = rejudge(_frame(rows), DEFAULT, elsewhere=("exams",))
    assert judged["family_alpha"][0] == pytest.approx(0.025)
    f = R.exam_not_significant(exams, thresholds=DEFAULT, comparisons=judged)
    assert len(f) == 1 and f[0].evidence()["family_alpha"] == pytest.approx(0.025)
    assert "split across the families tested" in words.message(f[0])
    assert R.exam_not_significant(exams, thresholds=DEFAULT) == []  # alone, at the full alpha
