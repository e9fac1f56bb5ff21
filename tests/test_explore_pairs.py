"""The pair the explore notebook shows first, and `compare` with the exam deltas (issue 45).

On the real captures of tests/fixtures (ten harnesses, no baseline, two seats that took the same
exams and share no cell): the default pair shares cells, the exam pair's `compare` carries its
deltas checked against scipy's exact binomial test on the items read afresh from the run files,
and the cells table names what tells its rows apart (harness, load in words, date) first.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy.stats import binomtest

from benchreport import compare, explore
from runs import make_run, write_run

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"


@pytest.fixture(scope="module")
def mixed():
    return explore.open_runs(str(FIXTURES), n_boot=100)


def _exam_seats(a) -> tuple[str, str]:
    seats = sorted(set(a.tables.exams["seat"].astype(str)))
    assert len(seats) == 2, seats  # the fixtures' two exam seats
    return seats[0], seats[1]


def test_the_default_pair_shares_the_most_cells(mixed):
    x, y, why = explore.default_pair(mixed)
    shown = compare(mixed, x, y)
    assert len(shown) > 0 and "sharing the most" in why
    # no other pair shares more: each pair's count as compare itself finds it, on the busiest seats
    busiest = mixed.cells["seat"].astype(str).value_counts().index[:5].tolist()
    for i, s in enumerate(busiest):
        for t in busiest[i + 1 :]:
            assert len(compare(mixed, s, t)) + len(compare(mixed, s, t).exams) <= len(shown) + len(shown.exams)
    ex = explore.Explorer(mixed)
    assert (ex.state["baseline"], ex.state["candidate"]) == (x, y)
    assert len(ex.comparison()) == len(shown) and x in ex.pair_note() and y in ex.pair_note()


def test_compare_carries_the_exam_deltas_of_a_pair_sharing_no_cell(mixed):
    base, cand = _exam_seats(mixed)
    pair = compare(mixed, base, cand)
    assert len(pair) == 0 and len(pair.exams) == 2
    assert "2 shared exam tasks" in pair.summary() and "arith2_mc" in pair._repr_html_()
    # independently: each seat's item verdicts read from lm-evaluation-harness's own samples file
    verdicts = {}
    for seat in (base, cand):
        (path,) = (FIXTURES / "harness" / "lmeval").glob(f"*/{seat}/samples_arith2_mc_*.jsonl")
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        verdicts[seat] = {int(x["doc_id"]): x["acc"] == 1.0 for x in lines}
    shared = sorted(set(verdicts[base]) & set(verdicts[cand]))
    only_b = sum(verdicts[base][i] and not verdicts[cand][i] for i in shared)
    only_c = sum(verdicts[cand][i] and not verdicts[base][i] for i in shared)
    row = pair.exams[pair.exams["benchmark"] == "arith2_mc"].iloc[0]
    assert row["n_items"] == len(shared) and (row["baseline_only"], row["candidate_only"]) == (only_b, only_c)
    assert row["diff"] == pytest.approx((only_c - only_b) / len(shared))
    b, c = int(row["baseline_only"]), int(row["candidate_only"])
    assert row["p_value"] == pytest.approx(binomtest(min(b, c), b + c, 0.5).pvalue)
    # the other way round: the same test, the difference's sign turned
    back = compare(mixed, cand, base).exams.set_index("benchmark")
    assert back.loc["arith2_mc", "diff"] == pytest.approx(-row["diff"])
    assert back.loc["arith2_mc", "p_value"] == pytest.approx(row["p_value"])


def test_the_cells_table_names_harness_load_and_date_first(mixed):
    t = explore.Explorer(mixed).cells_table()
    assert list(t.columns[:4]) == ["seat", "harness", "load", "date"]
    key = ["seat", "harness", "load", "date", "workload", "concurrency", "metric", "statistic"]
    # every row told apart by the columns before the figures (no row reads as a duplicate)
    assert not t.duplicated(subset=key).any() and (t["load"] != "").any()


def test_no_pair_sharing_anything_is_said(tmp_path):
    for seat, workload in (("left", "decode"), ("right", "prefill")):
        for p in (1, 2, 3):
            run = make_run(run_id=f"{seat}-{p}", **{"pass": p})
            run["seat"] = {**run["seat"], "id": seat, "role": "candidate"}
            for m in run["measurements"]:
                m["workload"] = workload
            write_run(tmp_path / seat, f"{seat}-{p}.json", run)
    a = explore.open_runs(str(tmp_path), n_boot=100)
    x, y, why = explore.default_pair(a)
    assert {x, y} == {"left", "right"} and "no two seats share" in why
    assert len(compare(a, x, y)) == 0 and "no two seats share" in explore.Explorer(a).pair_note()
