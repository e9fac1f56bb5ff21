"""Each flag rule on both sides of its threshold (just below: silent; just above: raised)."""

from __future__ import annotations

import math

import pytest

from benchreport.flags import decide_exclusions, excluded_measurements
from benchreport.flags import rules as R
from benchreport.flags import words
from benchreport.flags.codes import CODES, SEVERITIES
from benchreport.thresholds import DEFAULT
from flag_fixtures import cells_frame, comparisons_frame, exam_frame, flags_of, m_, mkrun, tables_of


def codes(flags) -> list[str]:
    return [f.code for f in flags]


def cell(
    seat="s1",
    values=(100.0,),
    *,
    n_obs=None,
    statistic="mean",
    ci=None,
    ci_method=None,
    date="2026-11-02",
    metric="output_tok_s",
    concurrency=16,
    workload="decode",
    source="reported",
) -> dict:
    vals = list(values)
    row = {
        "seat": seat,
        "workload": workload,
        "concurrency": concurrency,
        "metric": metric,
        "source": source,
        "statistic": statistic,
        "unit": "tok/s",
        "n_passes": len(vals),
        "n_obs": n_obs or len(vals),
        "estimate": sum(vals) / len(vals),
        "values": ";".join(repr(float(v)) for v in vals),
        "date": date,
        "ci_level": 0.95,
        "ci_method": ci_method or ("none: single pass" if len(vals) == 1 else "t over passes"),
    }
    if ci:
        row["ci_low"], row["ci_high"] = ci
    return row


# --- sampling ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "n, code",
    [
        (1, "sample.single_pass"),
        (2, "sample.two_passes"),
        (3, "sample.few_passes"),
        (4, "sample.few_passes"),
        (5, None),
    ],
)
def test_sample_passes_classes(n, code):
    flags = R.sample_passes(cells_frame([cell(values=[100.0 + i for i in range(n)])]), thresholds=DEFAULT)
    assert codes(flags) == ([code] if code else [])


def test_sample_passes_min_passes_is_a_threshold():
    frame = cells_frame([cell(values=[100, 101, 100, 101, 100])])
    assert R.sample_passes(frame, thresholds=DEFAULT) == []
    flags = R.sample_passes(frame, thresholds=DEFAULT.replace(min_passes=6))
    assert codes(flags) == ["sample.few_passes"] and flags[0].evidence()["thresholds"]["min_passes"] == 6


def test_sample_passes_one_flag_per_seat():
    frame = cells_frame([cell(concurrency=c) for c in (1, 4, 8, 16)] + [cell(seat="s2")])
    flags = R.sample_passes(frame, thresholds=DEFAULT)
    assert [(f.code, f.seats) for f in flags] == [("sample.single_pass", ("s1",)), ("sample.single_pass", ("s2",))]
    assert "1, 4, 8 and 16 streams" in words.message(flags[0])
    assert flags[0].concurrency is None and flags[1].concurrency == 16  # cell only when one cell


def test_small_n_ci_below_min_obs():
    below = cells_frame([cell(values=[100.0], n_obs=DEFAULT.min_obs - 1, ci=(95, 105), ci_method="published")])
    at = cells_frame([cell(values=[100.0], n_obs=DEFAULT.min_obs, ci=(95, 105), ci_method="published")])
    f = R.small_n(below, thresholds=DEFAULT)
    assert codes(f) == ["sample.small_n"] and f[0].severity == "info"
    assert R.small_n(at, thresholds=DEFAULT) == []
    assert R.small_n(cells_frame([cell(values=[100.0], n_obs=5)]), thresholds=DEFAULT) == []  # no CI, nothing to doubt
    boot = cells_frame([cell(values=[100.0], n_obs=10, ci=(95, 105), ci_method="bootstrap BCa over requests")])
    assert R.small_n(boot, thresholds=DEFAULT)[0].severity == "warn"


def test_small_n_tail_quantile():
    # p99 needs n*(1-0.99) >= 10: n = 1000 is just enough, 999 is not
    assert codes(R.small_n(cells_frame([cell(statistic="p99", n_obs=999)]), thresholds=DEFAULT)) == ["sample.small_n"]
    assert R.small_n(cells_frame([cell(statistic="p99", n_obs=1000)]), thresholds=DEFAULT) == []
    f = R.small_n(cells_frame([cell(statistic="p95", n_obs=100)]), thresholds=DEFAULT)
    assert f[0].severity == "warn" and f[0].evidence()["cells"][0]["needed_n"] == 200
    assert (
        R.small_n(cells_frame([cell(statistic="p50", n_obs=3)]), thresholds=DEFAULT) == []
    )  # the median is not a tail


def test_small_n_never_warns_about_figures_the_analysis_derived():
    # a p95 the run did not report, derived from its requests, is not a claim of the run
    assert R.small_n(cells_frame([cell(statistic="p95", n_obs=100, source="requests")]), thresholds=DEFAULT) == []
    assert R.small_n(cells_frame([cell(statistic="p95", n_obs=100, source="reported+requests")]), thresholds=DEFAULT)


def comparison(lo, hi, *, ratio=None, baseline="inc", candidate="s1", verdict="insufficient_data") -> dict:
    return {
        "workload": "decode",
        "concurrency": 16,
        "metric": "output_tok_s",
        "statistic": "mean",
        "baseline": baseline,
        "candidate": candidate,
        "baseline_estimate": 100.0,
        "candidate_estimate": 100.0 * (ratio or math.sqrt(lo * hi)),
        "ratio": ratio or math.sqrt(lo * hi),
        "ci_low": lo,
        "ci_high": hi,
        "ci_method": "Welch t on log pass values",
        "verdict": verdict,
        "kind": "baseline",
        "ci_level": 0.95,
    }


def test_underpowered_comparison():
    noise = DEFAULT.noise
    straddle = comparisons_frame([comparison(1 - noise - 0.001, 1.01)])
    inside_noise = comparisons_frame([comparison(1 - noise + 0.001, 1 + noise - 0.001, verdict="within_noise")])
    decided = comparisons_frame([comparison(1.03, 1.2, verdict="better")])
    assert codes(R.underpowered(straddle, thresholds=DEFAULT)) == ["sample.underpowered"]
    assert R.underpowered(inside_noise, thresholds=DEFAULT) == []
    assert R.underpowered(decided, thresholds=DEFAULT) == []
    single = R.underpowered(comparisons_frame([comparison(float("nan"), float("nan"), ratio=0.8)]), thresholds=DEFAULT)
    assert codes(single) == ["sample.underpowered"]
    assert single[0].evidence()["cells"][0]["passes_needed"] == 3 and "at least 3 passes" in words.message(single[0])


def test_more_days_not_more_passes_where_the_interval_holds_day_to_day_variation():
    """More passes cannot narrow the variance between sessions: such rows ask for more days."""
    row = comparison(1 - DEFAULT.noise - 0.001, 1.01)
    plain = R.underpowered(comparisons_frame([{**row, "variance_levels": "passes"}]), thresholds=DEFAULT)
    assert plain[0].evidence()["cells"][0]["passes_needed"] >= 3 and "passes per seat needed" in words.message(plain[0])
    for levels in ("passes+sessions", "passes+assumed sessions"):
        found = R.underpowered(comparisons_frame([{**row, "variance_levels": levels}]), thresholds=DEFAULT)
        assert codes(found) == ["sample.underpowered"]
        assert found[0].evidence()["cells"][0]["passes_needed"] is None
        said = words.message(found[0])
        assert "more passes on one day cannot narrow it, more days can" in said and "passes per seat" not in said


def test_underpowered_passes_needed_value():
    from scipy import stats

    lo, hi = 0.9, 1 / 0.9
    row = {**comparison(lo, hi, ratio=1.0), "df": 6.0, "baseline_n_passes": 4, "candidate_n_passes": 4}
    f = R.underpowered(comparisons_frame([row]), thresholds=DEFAULT)[0]
    se = math.log(hi / lo) / (2 * stats.t.ppf(0.975, 6.0))
    s2 = se**2 / (1 / 4 + 1 / 4)
    gap = math.log(1.05) - math.log(1.02)
    expected = math.ceil(2 * s2 * (stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) ** 2 / gap**2)
    assert f.evidence()["cells"][0]["passes_needed"] == expected
    assert f"about {expected} passes per seat" in words.message(f)


def delta(
    p,
    *,
    diff=0.0,
    mde=0.05,
    p_holm=None,
    test="Fisher exact (counts)",
    b_only=None,
    c_only=None,
    bench="HumanEval",
    dim=None,
) -> dict:
    return {
        "benchmark": bench,
        "dimension": dim,
        "baseline": "a",
        "candidate": "b",
        "test": test,
        "n_items": 164,
        "baseline_correct": 154,
        "candidate_correct": 153,
        "baseline_only": b_only,
        "candidate_only": c_only,
        "p_value": p,
        "p_holm": p if p_holm is None else p_holm,
        "diff": diff,
        "mde": mde,
    }


def test_underpowered_exam():
    assert codes(R.underpowered(None, exam_frame([delta(1.0, diff=-0.006, mde=0.076)]), thresholds=DEFAULT)) == [
        "sample.underpowered"
    ]
    assert (
        R.underpowered(None, exam_frame([delta(0.2, diff=0.08, mde=0.076)]), thresholds=DEFAULT) == []
    )  # could have been detected
    assert (
        R.underpowered(None, exam_frame([delta(0.01, diff=-0.006, mde=0.076)]), thresholds=DEFAULT) == []
    )  # significant


def test_exam_not_significant_at_alpha():
    a = DEFAULT.alpha
    assert codes(R.exam_not_significant(exam_frame([delta(a)]), thresholds=DEFAULT)) == ["exam.not_significant"]
    assert R.exam_not_significant(exam_frame([delta(a - 1e-9)]), thresholds=DEFAULT) == []
    holm = R.exam_not_significant(exam_frame([delta(0.04, p_holm=0.06)]), thresholds=DEFAULT)
    assert codes(holm) == ["exam.not_significant"] and "Holm" in words.message(holm[0])
    f = R.exam_not_significant(exam_frame([delta(1.0, diff=-1 / 164, mde=0.0762)]), thresholds=DEFAULT)[0]
    assert "153 of 164" in words.message(f) and "p = 1.0" in words.message(f) and "7.6 points" in words.message(f)
    assert f.evidence()["thresholds"] == {"alpha": 0.05}


def test_exam_counts_only():
    counts = exam_frame([delta(1.0), delta(1.0, bench="GSM8K")])
    f = R.exam_counts_only(counts)
    assert codes(f) == ["exam.counts_only"] and "GSM8K and HumanEval" in words.message(f[0])
    paired = exam_frame([delta(0.5, test="McNemar exact (paired items)", b_only=3, c_only=2)])
    assert R.exam_counts_only(paired) == []


# --- stability ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "values, code",
    [
        ([100, 102, 105.1], "drift.warmup"),  # +5.1% monotone > drift_limit 5%
        ([100, 102, 104.9], None),  # +4.9%: below
        ([106, 102, 100], "drift.warmup"),  # falling counts too (-5.7% of the first pass)
        ([100, 110, 105], None),  # not monotone, CV 4.8%
        ([100, 115], None),  # CV 9.9%, spread 1.15
        ([100, 116], "drift.unstable"),  # CV 10.5% > cv_limit 10%
        ([100] * 50 + [149], None),  # spread 1.49, CV 6.8%
        ([100] * 50 + [151], "drift.unstable"),  # spread 1.51 > spread_limit 1.5, CV 7%
    ],
)
def test_drift_thresholds(values, code):
    flags = R.drift(cells_frame([cell(values=values)]), thresholds=DEFAULT)
    assert codes(flags) == ([code] if code else [])


def test_drift_warmup_not_also_unstable():
    flags = R.drift(cells_frame([cell(values=[50, 100, 160])]), thresholds=DEFAULT)  # 3.2-fold and monotone
    assert codes(flags) == ["drift.warmup"]
    assert flags[0].evidence()["cells"][0]["spread"] == pytest.approx(3.2)


def test_drift_days_are_not_mixed():
    frame = cells_frame(
        [cell(values=[100, 101, 100], date="2026-11-01"), cell(values=[120, 121, 120], date="2026-11-02")]
    )
    assert R.drift(frame, thresholds=DEFAULT) == []
    # without a date column, a seat measured on two days is read from the measurements per day
    runs = [
        mkrun("s1", p, date=d, measurements=[m_(v)])
        for d, vs in (("2026-11-01", [100, 101, 100]), ("2026-11-02", [120, 121, 120]))
        for p, v in enumerate(vs, 1)
    ]
    tables = tables_of(*runs)
    undated = cells_frame([cell(values=[100, 101, 100, 120, 121, 120], date=None)]).drop(columns="date")
    assert R.drift(undated, tables, thresholds=DEFAULT) == []


def test_drift_thresholds_are_read_from_the_object():
    frame = cells_frame([cell(values=[100, 102, 103])])
    assert R.drift(frame, thresholds=DEFAULT) == []
    assert codes(R.drift(frame, thresholds=DEFAULT.replace(drift_limit=0.02))) == ["drift.warmup"]


def test_warmup_unknown_and_included():
    t = tables_of(
        mkrun("s1", warmup_excluded=None), mkrun("s2", warmup_excluded=True), mkrun("s3", warmup_excluded=False)
    )
    flags = R.warmup_unknown(t.runs)
    assert [(f.code, f.seats) for f in flags] == [("warmup.unknown", ("s1",)), ("warmup.included", ("s3",))]


# --- measurement traps ------------------------------------------------------------------------------


def prefill(value, **extra):
    return m_(value, "prefill_tok_s", workload="prefill", concurrency=None, **extra)


def cache_flags(tables, thresholds=DEFAULT):
    return R.prefix_cache(decide_exclusions(tables, thresholds=thresholds))


def test_prefix_cache_not_fresh():
    t = tables_of(mkrun(measurements=[prefill(4711, fresh_prompt=True), prefill(5000, fresh_prompt=False)]))
    f = cache_flags(t)
    assert codes(f) == ["trap.prefix_cache"] and f[0].severity == "critical"
    assert f[0].evidence()["reasons"] == ["not_fresh"] and f[0].evidence()["value"] == 5000


def test_prefix_cache_ratio_threshold():
    ratio = DEFAULT.cache_ratio
    above = tables_of(mkrun(measurements=[prefill(1000, fresh_prompt=True), prefill(1000 * ratio + 1)]))
    below = tables_of(mkrun(measurements=[prefill(1000, fresh_prompt=True), prefill(1000 * ratio - 1)]))
    f = cache_flags(above)
    assert codes(f) == ["trap.prefix_cache"] and f[0].evidence()["reasons"] == ["ratio"]
    assert cache_flags(below) == []
    # without any fresh-marked figure, the seat's other prefill figures are the reference
    unmarked = tables_of(mkrun(measurements=[prefill(4711), prefill(95941)]))
    f = cache_flags(unmarked)
    assert len(f) == 1 and f[0].evidence()["value"] == 95941 and f[0].evidence()["reference_kind"] == "other"


def test_prefix_cache_cached_tokens():
    req = lambda cached: {"workload": "prefill", "prompt_tokens": 31000, "cached_prompt_tokens": cached}
    hit = tables_of(mkrun(measurements=[prefill(5000)], requests=[req(0), req(30000)]))
    miss = tables_of(mkrun(measurements=[prefill(5000)], requests=[req(0), req(0)]))
    f = cache_flags(hit)
    assert codes(f) == ["trap.prefix_cache"] and f[0].evidence()["reasons"] == ["cached_tokens"]
    assert f[0].severity == "critical"
    assert cache_flags(miss) == []
    no_prefill = tables_of(mkrun(measurements=[m_(100)], requests=[req(100)]))
    f = cache_flags(no_prefill)
    assert codes(f) == ["trap.prefix_cache"] and f[0].severity == "warn" and f[0].evidence()["excluded"] == []


def test_excluded_measurements_mask():
    t = tables_of(mkrun(measurements=[prefill(4711, fresh_prompt=True), prefill(95941, fresh_prompt=False), m_(100)]))
    flags = flags_of(t, cells=None, comparisons=None, exam_deltas=None)
    mask = excluded_measurements(t, flags)
    assert mask.tolist() == [False, True, False]
    assert t.measurements.loc[mask, "value"].tolist() == [95941.0]


def answers(n_empty, n_total, **extra):
    return [
        {"workload": "decode", "output_tokens": 512, "reasoning_tokens": 512, "content_chars": 0, **extra}
    ] * n_empty + [{"workload": "decode", "output_tokens": 300, "reasoning_tokens": 100, "content_chars": 900}] * (
        n_total - n_empty
    )


def test_reasoning_field_share():
    assert codes(R.reasoning_field(tables_of(mkrun(requests=answers(1, 10))).requests, thresholds=DEFAULT)) == [
        "trap.reasoning_field"
    ]
    assert R.reasoning_field(tables_of(mkrun(requests=answers(0, 10))).requests, thresholds=DEFAULT) == []
    th = DEFAULT.replace(reasoning_share=0.1)
    assert R.reasoning_field(tables_of(mkrun(requests=answers(1, 10))).requests, thresholds=th) == []
    assert codes(R.reasoning_field(tables_of(mkrun(requests=answers(2, 10))).requests, thresholds=th)) == [
        "trap.reasoning_field"
    ]
    # an empty answer with no delivered tokens is a failed request, not this trap
    empty = [{"workload": "decode", "output_tokens": 0, "content_chars": 0}] * 3
    assert R.reasoning_field(tables_of(mkrun(requests=empty)).requests, thresholds=DEFAULT) == []


def test_reasoning_field_says_the_ttft_of_empty_answers():
    timed = tables_of(mkrun(requests=answers(2, 4, ttft_ms=40.0, e2e_latency_ms=900.0)))
    f = R.reasoning_field(timed.requests, thresholds=DEFAULT)
    assert f[0].evidence()["with_ttft"] == 2 and f[0].evidence()["ttft_p50_ms"] == 40.0
    assert "times reasoning, not an answer" in words.message(f[0])
    untimed = R.reasoning_field(tables_of(mkrun(requests=answers(2, 4))).requests, thresholds=DEFAULT)
    assert "with_ttft" not in untimed[0].evidence() and "TTFT" not in words.message(untimed[0])


def timed(n_reasoning, n_total, *, late=3.0, ttft=50.0, harness="guidellm", **extra):
    """Requests with a TTFT and a first content token: `n_reasoning` of them got reasoning first
    (their answer `late` times later), the others the answer first (the two times equal)."""
    return mkrun(
        harness={"name": harness},
        requests=[
            {
                "workload": "decode",
                "concurrency": 2,
                "ttft_ms": ttft + i,
                "e2e_latency_ms": 2000.0,
                "output_tokens": 64,
                "first_content_ms": (ttft + i) * (late if i < n_reasoning else 1.0),
                **extra,
            }
            for i in range(n_total)
        ],
    )


def test_reasoning_ttft_on_both_sides_of_its_ratio():
    t = tables_of(timed(6, 12))
    f = R.reasoning_ttft(t.requests, t.runs, thresholds=DEFAULT)
    assert codes(f) == ["trap.reasoning_ttft"] and f[0].severity == "warn"
    c = f[0].cells[0]
    assert (c.reasoning_first, c.requests, c.concurrency, c.harness) == (6, 12, 2, "guidellm")
    assert c.first_content_mean_ms == pytest.approx(
        (sum(3 * (50 + i) for i in range(6)) + sum(50 + i for i in range(6, 12))) / 12
    )
    msg = words.message(f[0])
    assert "time_to_first_token_ms" in msg and "time_to_first_output_token_ms" in msg and "6 of 12" in msg
    # no reasoning: the first content token is the first token, nothing to say
    none = tables_of(timed(0, 12))
    assert R.reasoning_ttft(none.requests, none.runs, thresholds=DEFAULT) == []
    # a little reasoning on one request of twelve: neither p50 nor mean moves by 25%
    little = tables_of(timed(1, 12, late=1.5))
    assert R.reasoning_ttft(little.requests, little.runs, thresholds=DEFAULT) == []
    assert codes(
        R.reasoning_ttft(little.requests, little.runs, thresholds=DEFAULT.replace(reasoning_ttft_ratio=1.01))
    ) == ["trap.reasoning_ttft"]
    # failed requests are not figures
    failed = tables_of(timed(6, 12, finish_reason="error", error="HTTP 500"))
    assert R.reasoning_ttft(failed.requests, failed.runs, thresholds=DEFAULT) == []
    # a harness that records no first content token (the column empty): nothing to compare
    plain_run = tables_of(mkrun(requests=[{"workload": "decode", "ttft_ms": 50.0}] * 4))
    assert R.reasoning_ttft(plain_run.requests, plain_run.runs, thresholds=DEFAULT) == []


def chunky(ttft, itl, n=12, **extra):
    return mkrun(
        harness={"name": "in-house"},
        requests=[
            {
                "workload": "decode",
                "concurrency": 4,
                "ttft_ms": ttft + 0.1 * i,
                "itl_ms": itl + 0.1 * i,
                "e2e_latency_ms": 3000.0,
                "output_tokens": 64,
                **extra,
            }
            for i in range(n)
        ],
    )


def test_first_chunk_by_the_inter_token_gap():
    t = tables_of(chunky(5.9, 30.0))
    f = R.first_chunk(t.requests, t.runs, thresholds=DEFAULT)
    assert codes(f) == ["trap.first_chunk"] and f[0].severity == "warn"
    c = f[0].cells[0]
    assert c.basis == "itl" and c.requests == 12 and c.ttft_p50_ms == pytest.approx(5.9 + 0.55)
    assert "not to be quoted as TTFT" in words.message(f[0]) and "inter-token gap" in words.message(f[0])
    # just above half a gap: silent; a prefix-cache hit or a tiny prompt still takes one step
    above = tables_of(chunky(15.6, 30.0))
    assert R.first_chunk(above.requests, above.runs, thresholds=DEFAULT) == []
    cached = tables_of(chunky(28.0, 30.0, prompt_tokens=64, cached_prompt_tokens=48))
    assert R.first_chunk(cached.requests, cached.runs, thresholds=DEFAULT) == []
    # too few requests to judge by a median
    few = tables_of(chunky(1.0, 30.0, n=2))
    assert R.first_chunk(few.requests, few.runs, thresholds=DEFAULT) == []


def test_first_chunk_by_a_chunk_without_a_token():
    # the importer saw one chunk more than tokens: the first token came at first_token_chunk_ms
    marked = tables_of(chunky(6.0, 8.0, first_token_chunk_ms=40.0))
    f = R.first_chunk(marked.requests, marked.runs, thresholds=DEFAULT)
    c = f[0].cells[0]
    assert c.basis == "chunks" and c.empty_first_chunk == 12 and c.first_token_p50_ms == 40.0
    # the token-less chunk came just before the first token: TTFT is near enough
    near = tables_of(chunky(36.0, 8.0, first_token_chunk_ms=40.0))
    assert R.first_chunk(near.requests, near.runs, thresholds=DEFAULT) == []


def capped(n_capped, n_total, *, by="finish"):
    if by == "finish":
        capped_req = {"workload": "decode", "finish_reason": "length"}
    else:
        capped_req = {"workload": "decode", "output_tokens": 512}
    return [capped_req] * n_capped + [{"workload": "decode", "finish_reason": "stop", "output_tokens": 200}] * (
        n_total - n_capped
    )


def test_capped_answers_share():
    below, above = tables_of(mkrun(requests=capped(1, 10))), tables_of(mkrun(requests=capped(2, 10)))
    assert R.capped_answers(below.requests, below.runs, thresholds=DEFAULT) == []
    f = R.capped_answers(above.requests, above.runs, thresholds=DEFAULT)
    assert codes(f) == ["trap.capped_answers"] and f[0].evidence()["max_tokens"] == 512
    # reaching max_tokens counts even without a finish reason
    t = tables_of(mkrun(requests=capped(2, 10, by="tokens")))
    assert codes(R.capped_answers(t.requests, t.runs, thresholds=DEFAULT)) == ["trap.capped_answers"]


def test_capped_answers_leave_out_fixed_output_runs():
    # ignore_eos with an output length: every answer runs to the length by design (issue 26)
    fixed = mkrun(requests=capped(9, 10), run_id="fixed")
    fixed["load"] = {"fixed_output": True, "output_tokens": {"mean": 512}}
    free = mkrun(requests=capped(9, 10), run_id="free", pass_=2)
    free["load"] = {"fixed_output": False, "output_tokens": {"mean": 512}}
    only_fixed = tables_of(fixed)
    assert R.capped_answers(only_fixed.requests, only_fixed.runs, thresholds=DEFAULT) == []
    both = tables_of(fixed, free)
    f = R.capped_answers(both.requests, both.runs, thresholds=DEFAULT)
    assert codes(f) == ["trap.capped_answers"] and f[0].evidence()["runs"] == ["free"]
    assert f[0].evidence()["answers"] == 10


# --- comparisons --------------------------------------------------------------------------------------


def test_no_incumbent_same_day_same_probe():
    inc = mkrun("inc", role="incumbent")
    ok = tables_of(inc, mkrun("s1"))
    assert R.no_incumbent(ok) == []
    other_probe = tables_of(inc, mkrun("s1", harness={"name": "in-house", "probe": "other", "max_tokens": 512}))
    f = R.no_incumbent(other_probe)
    assert codes(f) == ["compare.no_incumbent"] and "another harness or probe" in words.message(f[0])
    other_day = tables_of(inc, mkrun("s1", date="2026-11-03"))
    f = R.no_incumbent(other_day)
    assert (
        f[0].seats == ("s1",) and "2026-11-03" in words.message(f[0]) and "not measured that day" in words.message(f[0])
    )


def test_no_incumbent_at_all():
    assert R.no_incumbent(tables_of(mkrun("s1"))) == []  # one seat, nothing compared
    f = R.no_incumbent(tables_of(mkrun("s1"), mkrun("s2")))
    assert codes(f) == ["compare.no_incumbent"] and f[0].seats == ("s1", "s2")
    assert "2026-11-02" in words.message(f[0]) and "no incumbent" in words.message(f[0])
    # a chosen baseline stands in for the incumbent
    assert R.no_incumbent(tables_of(mkrun("s1"), mkrun("s2")), baseline="s1") == []


def pair_frame(a="inc", b="s1"):
    return comparisons_frame([comparison(0.9, 1.2, baseline=a, candidate=b)])


def test_cross_model():
    same = tables_of(mkrun("inc", role="incumbent"), mkrun("s1"))
    assert R.cross_model(same, pair_frame()) == []
    diff = tables_of(mkrun("inc", role="incumbent", model="Qwen"), mkrun("s1", model="GLM"))
    f = R.cross_model(diff, pair_frame())
    assert codes(f) == ["compare.cross_model"] and f[0].severity == "warn"
    exams = [{"benchmark": "frontier", "dimension": "flat", "score": 96.8, "total": 94}]
    with_exams = tables_of(
        mkrun("inc", role="incumbent", model="Qwen", exams=exams, measurements=[m_(1)]),
        mkrun(
            "s1",
            model="GLM",
            measurements=[m_(1)],
            exams=[{"benchmark": "frontier", "dimension": "flat", "score": 90.8, "total": 94}],
        ),
    )
    f = R.cross_model(with_exams, pair_frame())
    assert f[0].severity == "info" and "90.8 against 96.8" in words.message(f[0])
    # history rows (a seat against its own earlier date) are not a cross-model comparison
    assert R.cross_model(diff, comparisons_frame([comparison(0.9, 1.2, baseline="s1", candidate="s1")])) == []


def test_not_like_for_like():
    settings = {"max_model_len": 131000, "speculative": False}
    base = mkrun("inc", role="incumbent", settings=settings)
    same = tables_of(base, mkrun("s1", settings=settings, seat_extra={"quantisation": "NVFP4", "engine": "sglang"}))
    assert R.not_like_for_like(same, pair_frame()) == []  # identity (quantisation, engine) is not a reason
    cap = tables_of(
        base, mkrun("s1", settings=settings, harness={"name": "in-house", "probe": "fixed-512", "max_tokens": 1024})
    )
    f = R.not_like_for_like(cap, pair_frame())
    assert codes(f) == ["compare.not_like_for_like"] and f[0].severity == "warn"
    assert f[0].evidence()["differences"]["max_tokens"] == {"baseline": [512], "candidate": [1024]}
    spec = tables_of(base, mkrun("s1", settings={**settings, "speculative": True}))
    assert "speculation true against false" in words.message(R.not_like_for_like(spec, pair_frame())[0])
    one_side = tables_of(base, mkrun("s1", settings={**settings, "prefix_caching": True}))
    f = R.not_like_for_like(one_side, pair_frame())
    assert f[0].severity == "info" and "prefix caching" in words.message(f[0])


def test_not_like_for_like_history_rows_name_the_dates():
    old = mkrun("s1", date="2026-11-01", harness={"name": "vllm bench serve", "probe": "p", "max_tokens": 512})
    new = mkrun("s1", date="2026-11-02", harness={"name": "guidellm", "probe": "p", "max_tokens": 512})
    t = tables_of(old, new)
    hist = comparisons_frame(
        [
            {
                **comparison(0.9, 1.2, baseline="s1", candidate="s1"),
                "kind": "history",
                "baseline_date": "2026-11-01",
                "candidate_date": "2026-11-02",
            }
        ]
    )
    f = R.not_like_for_like(t, hist)
    assert codes(f) == ["compare.not_like_for_like"] and f[0].seats == ("s1",)
    assert words.message(f[0]).startswith(
        "s1 on 2026-11-02 and s1 on 2026-11-01 were not measured alike: harness guidellm against vllm bench serve"
    )


def test_mixed_runs_in_one_cell():
    a = mkrun("s1", 1, run_id="r1", harness={"name": "aiperf", "probe": "p", "max_tokens": 256})
    b = mkrun("s1", 2, run_id="r2", harness={"name": "aiperf", "probe": "p", "max_tokens": 1024})
    c = mkrun("s1", 3, run_id="r3", harness={"name": "aiperf", "probe": "p", "max_tokens": 256})
    f = R.mixed_runs(tables_of(a, b, c))
    assert codes(f) == ["sample.mixed_runs"] and f[0].severity == "warn"
    assert set(f[0].evidence()["differences"]["max_tokens"]) == {256, 1024}
    assert R.mixed_runs(tables_of(a, c)) == []  # the same set-up twice is two passes
    # another harness or probe is another cell (benchreport.stats.cells), never pooled: nothing to say
    g = mkrun("s1", 2, run_id="r5", harness={"name": "guidellm", "probe": "p", "max_tokens": 256})
    assert R.mixed_runs(tables_of(a, g)) == []
    d = mkrun(
        "s1",
        1,
        run_id="r4",
        harness={"name": "aiperf", "probe": "other"},
        measurements=[m_(100, workload="other-probe")],
    )
    assert R.mixed_runs(tables_of(a, d)) == []


def test_prefix_cache_cached_tokens_one_flag_per_seat():
    req = {"workload": "decode", "concurrency": 16, "prompt_tokens": 100, "cached_prompt_tokens": 40}
    runs = [mkrun("s1", p, measurements=[m_(100)], requests=[req] * 4) for p in (1, 2, 3)]
    f = cache_flags(tables_of(*runs))
    assert codes(f) == ["trap.prefix_cache"] and f[0].severity == "warn"
    assert "12 of 12 requests in 3 runs" in words.message(f[0]) and "40%" in words.message(f[0])


def test_missing_metric_forms():
    inc = mkrun("inc", role="incumbent", measurements=[m_(35, "ttft_ms", concurrency=1, statistic="p50"), m_(900)])
    other_form = tables_of(inc, mkrun("s1", measurements=[m_(226, "ttft_ms", concurrency=1), m_(760)]))
    f = [x for x in R.missing_metric(other_form, pair_frame()) if x.severity == "warn"]
    assert len(f) == 1 and f[0].metric == "ttft_ms" and "p50" in words.message(f[0])
    same_form = tables_of(inc, mkrun("s1", measurements=[m_(30, "ttft_ms", concurrency=1, statistic="p50"), m_(760)]))
    assert R.missing_metric(same_form, pair_frame()) == []
    one_side = tables_of(
        inc,
        mkrun("s1", measurements=[m_(30, "ttft_ms", concurrency=1, statistic="p50"), m_(760), m_(60, concurrency=4)]),
    )
    f = R.missing_metric(one_side, pair_frame())
    assert [(x.code, x.severity) for x in f] == [("compare.missing_metric", "info")]
    assert "for s1 only" in words.message(f[0])


def test_stale_scores():
    def exams(**extra):
        return [{"benchmark": "GSM8K", "correct": 247, "total": 250, **extra}]

    assert R.stale_scores(tables_of(mkrun(exams=exams(measured_on="2026-11-02"))).exams) == []
    assert R.stale_scores(tables_of(mkrun(exams=exams())).exams) == []
    f = R.stale_scores(tables_of(mkrun(exams=exams(measured_on="2026-08-20"))).exams)
    assert codes(f) == ["compare.stale_scores"] and "2026-08-20" in words.message(f[0])
    assert codes(R.stale_scores(tables_of(mkrun(exams=exams(placement_note="ran on node B"))).exams)) == [
        "compare.stale_scores"
    ]
    assert codes(R.stale_scores(tables_of(mkrun(exams=exams(from_earlier_run=True))).exams)) == ["compare.stale_scores"]


# --- deployment ----------------------------------------------------------------------------------------

GPU = 102641958912


def seat_with(checkpoint, nodes=1):
    return {"checkpoint_bytes": checkpoint, "placement": {"nodes": nodes, "gpus_per_node": 2, "gpu_memory_bytes": GPU}}


def test_fit_headroom_threshold():
    node = 2 * GPU
    limit = (1 - DEFAULT.fit_headroom) * node
    assert R.fit_exceeds_node(tables_of(mkrun(seat_extra=seat_with(limit - 1e6))).seats, thresholds=DEFAULT) == []
    f = R.fit_exceeds_node(tables_of(mkrun(seat_extra=seat_with(limit + 1e6))).seats, thresholds=DEFAULT)
    assert codes(f) == ["fit.exceeds_node"] and "less than the 10% needed" in words.message(f[0])
    assert f[0].evidence()["thresholds"] == {"fit_headroom": DEFAULT.fit_headroom}
    over = R.fit_exceeds_node(tables_of(mkrun(seat_extra=seat_with(node + 1e9, nodes=2))).seats, thresholds=DEFAULT)
    assert "exceeds one node's raw GPU memory" in words.message(over[0]) and "2 nodes" in words.message(over[0])
    unknown = tables_of(mkrun(seat_extra={"checkpoint_bytes": 1e12}))  # no placement: cannot judge
    assert R.fit_exceeds_node(unknown.seats, thresholds=DEFAULT) == []


def test_licenses_rule():
    comps = [
        {"name": "drafter", "role": "drafter", "license": "cc-by-nc-4.0"},
        {"name": "engine", "role": "engine", "license": "Apache-2.0"},
        {"name": "patches", "role": "patches", "license": "NOASSERTION"},
        {"name": "kernels", "role": "kernels"},
    ]
    t = tables_of(mkrun("s1", seat_extra={"components": comps}), mkrun("s2", seat_extra={"components": comps[:1]}))
    f = R.licenses(t.components)
    assert [(x.code, x.evidence()["component"], x.seats) for x in f] == [
        ("license.noncommercial", "drafter", ("s1", "s2")),
        ("license.unknown", "kernels", ("s1",)),
        ("license.unknown", "patches", ("s1",)),
    ]
    assert "cc-by-nc-4.0, which forbids commercial use" in words.message(f[0])
    assert "has no licence recorded" in words.message(f[1]) and "NOASSERTION" in words.message(f[2])


def test_faults_and_defects():
    events = [
        {"kind": "fault", "message": "RDMA fault. More text.", "concurrency": 16, "reproduced": False},
        {"kind": "crash", "message": "engine died", "reproduced": True},
        {"kind": "defect", "message": "grammar engine fails"},
        {"kind": "note", "message": "pulled the image twice"},
    ]
    f = R.faults(tables_of(mkrun(events=events)).events)
    assert codes(f) == ["fault.recorded", "fault.unreproduced", "fault.recorded", "defect.open"]
    assert f[0].concurrency == 16 and words.message(f[0]).endswith("RDMA fault.")
    assert "reproduced in a later run" in words.message(f[2])


def test_import_assumed():
    t = tables_of(
        mkrun("s1", run_id="r1"), mkrun("s2", run_id="r2"), assumptions={"r1": ("seat id from the file name", "pass 1")}
    )
    f = R.import_assumed(t.runs)
    assert codes(f) == ["import.assumed"] and f[0].seats == ("s1",)
    assert "seat id from the file name; pass 1" in words.message(f[0])
    assert f[0].evidence()["assumptions"] == ["seat id from the file name", "pass 1"]


# --- the entry point -------------------------------------------------------------------------------------


def test_every_rule_reads_thresholds_by_name():
    """Changing a threshold changes the outcome (nothing hard-coded)."""
    t = tables_of(mkrun(requests=capped(2, 10)))
    assert "trap.capped_answers" in set(flags_of(t, cells=None, comparisons=None, exam_deltas=None)["code"])
    relaxed = flags_of(t, cells=None, comparisons=None, exam_deltas=None, thresholds=DEFAULT.replace(capped_share=0.25))
    assert "trap.capped_answers" not in set(relaxed["code"])


def test_compute_flags_min_passes():
    t = tables_of(mkrun())
    frame = cells_frame([cell(seat="s1", values=[100, 101, 100, 101, 100])])
    # every run on one date: sample.one_session (info, issue 30) is raised whatever min_passes is
    assert list(flags_of(t, cells=frame, comparisons=None, exam_deltas=None)["code"]) == ["sample.one_session"]
    f = flags_of(t, cells=frame, comparisons=None, exam_deltas=None, thresholds=DEFAULT.replace(min_passes=6))
    assert sorted(f["code"]) == ["sample.few_passes", "sample.one_session"]


def test_codes_registry_is_complete():
    for code, c in CODES.items():
        assert c.code == code and set(c.severities) <= set(SEVERITIES) and c.group and c.trigger and c.topic
        assert code.count(".") == 1


def test_every_code_has_a_finding_type_and_words():
    from benchreport.flags.findings import finding_types
    from benchreport.flags.words._common import WRITERS

    for code in CODES:
        types = finding_types(code)
        assert types, code
        assert all(t in WRITERS for t in types), code


# --- stability judged against each pass's own sampling error ----------------------------------------


def _noisy_runs(seed: int, *, trend: float = 0.0, n: int = 250, passes: int = 5):
    """Runs of one seat with request records whose TTFT is lognormal (sigma 0.9, very noisy),
    scaled by (1 + trend * pass); and the p95 cell built from them by hand."""
    import numpy as np

    rng = np.random.default_rng(seed)
    runs, vals = [], []
    for p in range(1, passes + 1):
        ttft = rng.lognormal(np.log(100), 0.9, n) * (1 + trend * p)
        vals.append(float(np.quantile(ttft, 0.95)))
        runs.append(
            mkrun(
                "s1",
                p,
                measurements=[],
                requests=[{"workload": "decode", "concurrency": 16, "ttft_ms": round(float(t), 6)} for t in ttft],
            )
        )
    frame = cells_frame([cell(values=vals, metric="ttft_ms", statistic="p95", n_obs=n * passes)])
    return tables_of(*runs), frame, vals


@pytest.mark.parametrize("seed, effect", [(6, "cv"), (9, "monotone")])
def test_drift_sampling_noise_is_not_drift(seed, effect):
    tables, frame, vals = _noisy_runs(seed)
    # judged by effect size alone these passes would be flagged ...
    alone = codes(R.drift(frame, thresholds=DEFAULT))
    assert alone == (["drift.unstable"] if effect == "cv" else ["drift.warmup"])
    # ... but the requests show each pass's p95 is that uncertain: no finding
    assert R.drift(frame, tables, thresholds=DEFAULT) == []


def test_drift_real_trend_beyond_sampling_noise():
    tables, frame, vals = _noisy_runs(9, trend=0.15)
    f = R.drift(frame, tables, thresholds=DEFAULT)
    assert codes(f) == ["drift.warmup"]
    c = f[0].evidence()["cells"][0]
    assert c["change_p_adj"] < 0.05 and len(c["within_pass_se"]) == 5


def test_drift_thin_tail_not_judged():
    # p99 from 250 requests per pass has 2.5 requests beyond it: not compared between passes
    tables, frame, vals = _noisy_runs(9, trend=0.15)
    p99 = frame.assign(statistic="p99")
    assert R.drift(p99, tables, thresholds=DEFAULT) == []


def test_a_figures_key_is_each_value_as_text_or_none_as_the_scalar_rules_say():
    """`sample.repeated_figure` keys a run's figures a column at a time (a fleet's store holds
    hundreds of thousands of rows); each key part must be what the scalar rule gives, `str` of the
    value or None where `format.missing` says missing, on every kind of column a run file fills."""
    import numpy as np
    import pandas as pd

    from benchreport import format as F

    columns = [
        pd.Series(["a", None, "nan", np.nan, 4, 4.0, pd.NA, True], dtype=object),
        pd.Series([1.0, np.nan, 0.1, 1e-300, -0.0, np.inf]),
        pd.Series([1, None, 3], dtype="Int64"),
        pd.Series(["x", None, "y"], dtype="string"),
        pd.Series(["x", None, "y"], dtype="string[pyarrow]"),
        pd.Series(pd.to_datetime(["2026-01-01", None])),
        pd.Series(["p", "q", None], dtype="category"),
    ]
    for column in columns:
        assert F.plain_values(column) == [None if F.missing(v) else str(v) for v in column.tolist()], column.dtype
