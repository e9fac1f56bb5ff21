"""Flags on the example data (every trap the seeds describe, on the right seat), on a clean data
set (no wolf cried), and the public API: records, table, --fail-on, sorting, limitations text."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from benchreport.flags import (
    CODES,
    FLAG_COLUMNS,
    SEVERITIES,
    compute_flags,
    decide_exclusions,
    drop_excluded,
    excluded_measurements,
    fail_on_met,
    flags_to_records,
    limitations_paragraphs,
    render_table,
)
from benchreport.flags.text import NO_FLAGS
from benchreport.thresholds import DEFAULT
from flag_fixtures import EXAMPLE, clean_frames, example_frames, example_tables, flags_of

NVFP4 = "glm-5.3-flash-nvfp4-tp4-2node"
QWEN = "qwen3.8-flash-next-tp2"
EXL3 = "glm-5.3-flash-exl3-4.0bpw-1node"
ENTRY = "gb10x4-glm-5.3-flash-2026-10-25-entry"
ORIG = "gb10x4-glm-5.3-flash-dspark-original-build"
NEW = "gb10x4-glm-5.3-flash-dspark-new-build"
DFLASH_SEATS = ("gb10x4-glm-5.3-flash-dflash2-4bit-dense", "gb10x4-glm-5.3-flash-knapcio-full-stack-dflash2")
FIELD_NOTE_0928 = {
    "gb10x4-glm-5.3-flash-dflash2-4bit-dense",
    NEW,
    ORIG,
    "gb10x4-glm-5.3-flash-knapcio-full-stack-dflash2",
    "gb10x4-glm-5.3-flash-speculation-off",
}

pytestmark = pytest.mark.skipif(not EXAMPLE.exists(), reason="example data not present")


@pytest.fixture(scope="module")
def example():
    tables, cells, comps, deltas = example_frames()
    flags = flags_of(tables, cells=cells, comparisons=comps, exam_deltas=deltas)
    return tables, flags


def section(flags) -> str:
    """The limitations section as plain text: one paragraph per group, led by its title."""
    paras = limitations_paragraphs(flags)
    return "\n\n".join(f"{p.title}. {p.text}" for p in paras) if paras else NO_FLAGS


def _rows(flags, code, seat=None):
    sel = flags[flags["code"] == code]
    if seat is not None:
        sel = sel[[seat in s for s in sel["seats"]]]
    return sel


def _one(flags, code, seat=None):
    sel = _rows(flags, code, seat)
    assert len(sel) == 1, f"{code} on {seat}: {len(sel)} rows\n{flags[['code', 'seats']]}"
    return sel.iloc[0]


# --- every trap the seeds describe, on the right seat --------------------------------------------


def test_cross_node_single_sweep(example):
    _, flags = example
    f = _one(flags, "sample.single_pass", NVFP4)
    assert f["severity"] == "warn"
    cells = f["evidence"]["cells"]
    decode = sorted(c["concurrency"] for c in cells if c["metric"] == "decode_tok_s_per_stream")
    assert decode == [1, 4, 8, 16]  # "a single sweep per concurrency level", one flag for the sweep
    assert "single pass" in f["message"]


def test_incumbent_two_passes_at_16(example):
    _, flags = example
    f = _one(flags, "sample.two_passes", QWEN)
    assert (f["workload"], f["concurrency"], f["metric"]) == ("decode", 16, "output_tok_s")
    assert "896.9 and 982.5" in f["message"]
    assert f["severity"] == "warn"


def test_exl3_warmup_climb(example):
    _, flags = example
    f = _one(flags, "drift.warmup", EXL3)
    assert "79.4 → 91.5 → 104.0" in f["message"]
    assert (f["concurrency"], f["metric"]) == (1, "output_tok_s")
    ev = f["evidence"]
    assert ev["cells"][0]["values"] == [79.4, 91.5, 104.0]
    assert ev["thresholds"]["drift_limit"] == DEFAULT.drift_limit
    assert _one(flags, "sample.few_passes", EXL3)["severity"] == "info"
    assert _rows(flags, "drift.unstable", EXL3).empty  # the climb is warm-up, not said twice


def test_cache_hit_95941(example):
    tables, flags = example
    f = _one(flags, "trap.prefix_cache", NVFP4)
    assert f["severity"] == "critical"
    assert "95,941" in f["message"] and "4,711" in f["message"] and "excluded" in f["message"]
    assert set(f["evidence"]["reasons"]) == {"not_fresh", "ratio"}
    assert f["evidence"]["ratio"] == pytest.approx(95941 / 4711)
    mask = excluded_measurements(tables, flags)
    assert mask.sum() == 1
    assert tables.measurements.loc[mask, "value"].tolist() == [95941.0]
    # the decision itself gives the same figures
    assert excluded_measurements(tables, decide_exclusions(tables, thresholds=DEFAULT)).equals(mask)
    kept = drop_excluded(tables, flags).measurements
    assert 95941.0 not in kept["value"].tolist() and 4711.0 in kept["value"].tolist()
    # the fresh figures of both seats are not flagged
    assert len(_rows(flags, "trap.prefix_cache")) == 1


def test_reasoning_field(example):
    _, flags = example
    f = _one(flags, "trap.reasoning_field", NVFP4)
    assert f["evidence"]["empty_content"] == 1 and f["evidence"]["reasoning_tokens"] == 512
    assert "reasoning field" in f["message"]


def test_capped_answers_28_of_30(example):
    _, flags = example
    f = _one(flags, "trap.capped_answers", ENTRY)
    assert (f["evidence"]["capped"], f["evidence"]["answers"]) == (28, 30)
    assert "28 of 30" in f["message"] and "1,024" in f["message"]


def test_rdma_fault_unreproduced(example):
    _, flags = example
    rec = _one(flags, "fault.recorded", NVFP4)
    assert rec["severity"] == "warn" and rec["concurrency"] == 16 and "RDMA" in rec["message"]
    unrep = _one(flags, "fault.unreproduced", NVFP4)
    assert unrep["evidence"]["reproduced"] is False
    defect = _one(flags, "defect.open", EXL3)
    assert "Grammar-engine" in defect["message"]


def test_noncommercial_drafter(example):
    _, flags = example
    f = _one(flags, "license.noncommercial")
    assert f["seats"] == DFLASH_SEATS
    assert f["evidence"]["license"] == "CC-BY-NC-ND-4.0" and "DFlash2" in f["evidence"]["component"]
    assert f["evidence"]["source"].startswith("https://")
    unknown = _one(flags, "license.unknown")
    assert unknown["evidence"]["license"] == "NOASSERTION" and unknown["severity"] == "info"


def test_checkpoint_does_not_fit_one_node(example):
    _, flags = example
    f = _one(flags, "fit.exceeds_node")
    assert f["seats"] == (NVFP4,)
    assert "204.5 GB" in f["message"] and "205.3 GB" in f["message"] and "lab result" in f["message"]
    assert f["evidence"]["used_share"] == pytest.approx(204.5e9 / (2 * 102641958912))
    assert _rows(flags, "fit.exceeds_node", EXL3).empty  # 175.8 GB leaves 14% headroom


def test_stale_exam_scores(example):
    _, flags = example
    for seat in (QWEN, EXL3):
        f = _one(flags, "compare.stale_scores", seat)
        assert all(e["reasons"].get("from_earlier_run") for e in f["evidence"]["exams"])
    assert "96.2" in _one(flags, "compare.stale_scores", QWEN)["message"]


def test_cross_model_qwen_vs_glm(example):
    _, flags = example
    rows = _rows(flags, "compare.cross_model")
    pairs = {tuple(r) for r in rows["seats"]}
    assert pairs == {tuple(sorted((QWEN, NVFP4))), tuple(sorted((QWEN, EXL3)))}
    with_exams = _one(flags, "compare.cross_model", EXL3)
    assert "96.2" in with_exams["message"] and "88.2" in with_exams["message"]
    assert with_exams["severity"] == "info"
    assert _one(flags, "compare.cross_model", NVFP4)["severity"] == "warn"  # no exam on the cross-node seat


def test_not_like_for_like_exl3_settings(example):
    _, flags = example
    f = _one(flags, "compare.not_like_for_like", EXL3)
    assert "settings.speculative" in f["evidence"]["differences"]
    assert "settings.prefix_caching" in f["evidence"]["stated_one_side"]
    assert _rows(flags, "compare.not_like_for_like", NVFP4).empty  # same harness, probe and settings


def test_missing_metric_ttft_form(example):
    _, flags = example
    f = flags[(flags["code"] == "compare.missing_metric") & (flags["severity"] == "warn")]
    assert len(f) == 1
    f = f.iloc[0]
    assert set(f["seats"]) == {QWEN, NVFP4}
    assert (f["metric"], f["concurrency"]) == ("ttft_ms", 1)
    assert "p50" in f["message"]


def test_humaneval_not_significant(example):
    _, flags = example
    rows = _rows(flags, "exam.not_significant")
    he = rows[[e["benchmark"] == "HumanEval" for e in rows["evidence"]]]
    assert len(he) == 1
    f = he.iloc[0]
    assert set(f["seats"]) == {ORIG, NEW}
    assert "153 of 164" in f["message"] and "154 of 164" in f["message"] and "p = 1.0" in f["message"]
    counts = [r for _, r in _rows(flags, "exam.counts_only").iterrows() if set(r["seats"]) == {ORIG, NEW}]
    assert len(counts) == 1


def test_no_incumbent_on_field_note_dates(example):
    _, flags = example
    rows = _rows(flags, "compare.no_incumbent")
    by_date = {r["evidence"]["date"]: set(r["seats"]) for _, r in rows.iterrows()}
    assert by_date == {"2026-10-25": {ENTRY}, "2026-10-28": FIELD_NOTE_0928}
    f = rows[[e["date"] == "2026-10-28" for e in rows["evidence"]]].iloc[0]
    assert "2026-10-28" in f["message"] and ORIG in f["message"] and QWEN in f["message"]


def test_no_incumbent_in_field_note_alone():
    from benchreport.load import load
    from benchreport.tables import build_tables
    from flag_fixtures import cells_from_tables

    tables = build_tables(load([str(EXAMPLE / "field-note")], progress=False))
    flags = flags_of(tables, cells=cells_from_tables(tables), comparisons=None, exam_deltas=None)
    rows = _rows(flags, "compare.no_incumbent")
    dates = sorted(e["date"] for e in rows["evidence"])
    assert dates == ["2026-10-25", "2026-10-28"]
    assert all("no incumbent" in m for m in rows["message"])


def test_warmup_unknown_seats(example):
    _, flags = example
    seats = {s for t in _rows(flags, "warmup.unknown")["seats"] for s in t}
    assert {NVFP4, QWEN} <= seats
    assert EXL3 not in seats and ENTRY not in seats


# --- with the statistics layer's own frames -------------------------------------------------------


def _stats(tables, baseline=None):
    """cells, comparisons and exam deltas of the statistics layer for `tables`."""
    from benchreport.stats import comparisons, estimate_cells, exam_deltas

    cs = estimate_cells(tables.measurements, tables.requests, tables.runs, n_resamples=500, seed=0)
    cp = comparisons(cs, tables.seats, baseline=baseline)
    return cs.cells, cp, exam_deltas(tables.exams, tables.exam_items, tables.seats, baseline=baseline)


@pytest.mark.parametrize("baseline", [None, ORIG])
def test_example_with_statistics_layer(baseline):
    tables = example_tables()
    clean = drop_excluded(tables, decide_exclusions(tables, thresholds=DEFAULT))
    c, cp, ed = _stats(clean, baseline)
    flags = flags_of(tables, cells=c, comparisons=cp, exam_deltas=ed, baseline=baseline)
    codes = set(flags["code"])
    for code in (
        "sample.single_pass",
        "sample.two_passes",
        "sample.few_passes",
        "drift.warmup",
        "trap.prefix_cache",
        "trap.reasoning_field",
        "trap.capped_answers",
        "compare.no_incumbent",
        "compare.stale_scores",
        "fit.exceeds_node",
        "license.noncommercial",
        "fault.recorded",
        "fault.unreproduced",
        "exam.not_significant",
        "exam.counts_only",
    ):
        assert code in codes, code
    assert "79.4 → 91.5 → 104.0" in _one(flags, "drift.warmup", EXL3)["message"]
    if baseline is None:
        assert {"compare.cross_model", "compare.missing_metric", "compare.not_like_for_like"} <= codes
    else:
        he = [e for e in _rows(flags, "exam.not_significant")["evidence"] if e["benchmark"] == "HumanEval"]
        assert he and he[0]["p_value"] == pytest.approx(1.0)


def test_clean_data_with_statistics_layer(tmp_path):
    tables, _, _, _ = clean_frames(tmp_path)
    c, cp, ed = _stats(tables)
    flags = flags_of(tables, cells=c, comparisons=cp, exam_deltas=ed)
    assert not fail_on_met(flags, "warn"), render_table(flags)


# --- it does not cry wolf -----------------------------------------------------------------------------


def test_clean_data_raises_no_warning(tmp_path):
    tables, cells, comps, deltas = clean_frames(tmp_path)
    flags = flags_of(tables, cells=cells, comparisons=comps, exam_deltas=deltas)
    assert not fail_on_met(flags, "warn"), render_table(flags)
    # clean data measured on one day still carry one note of scope (issue 30): the intervals
    # leave out day-to-day variation, said once for the seats of that day
    assert set(flags["code"]) == {"sample.one_session"} and set(flags["severity"]) == {"info"}, render_table(flags)
    assert "leave out day-to-day variation" in section(flags)
    assert section(flags.iloc[0:0]) == NO_FLAGS


# --- the API ---------------------------------------------------------------------------------------


def test_frame_shape_and_order(example):
    _, flags = example
    assert list(flags.columns) == FLAG_COLUMNS
    assert set(flags["severity"]) <= set(SEVERITIES)
    assert set(flags["code"]) <= set(CODES)
    ranks = [SEVERITIES.index(s) for s in flags["severity"]]
    assert ranks == sorted(ranks)
    for _sev, g in flags.groupby("severity", sort=False):
        assert list(g["code"]) == sorted(g["code"])
    assert all(isinstance(s, tuple) and s for s in flags["seats"])
    for _, r in flags.iterrows():
        th = r["evidence"].get("thresholds", {})
        for name, value in th.items():
            if hasattr(DEFAULT, name):
                assert value == getattr(DEFAULT, name)


def test_deterministic(example):
    tables, flags = example
    _, cells, comps, deltas = example_frames(tables)
    again = flags_of(tables, cells=cells, comparisons=comps, exam_deltas=deltas)
    assert json.dumps(flags_to_records(flags)) == json.dumps(flags_to_records(again))


def test_records_json_shape(example):
    _, flags = example
    recs = flags_to_records(flags)
    text = json.dumps(recs, allow_nan=False)
    assert json.loads(text) == recs
    for r in recs:
        assert list(r) == ["code", "severity", "seats", "cell", "message", "evidence"]
        assert isinstance(r["seats"], list)
        assert r["cell"] is None or set(r["cell"]) == {"workload", "concurrency", "metric", "statistic"}
    warm = [r for r in recs if r["code"] == "drift.warmup"][0]
    assert warm["cell"] == {"workload": "decode", "concurrency": 1, "metric": "output_tok_s", "statistic": "mean"}
    fit = [r for r in recs if r["code"] == "fit.exceeds_node"][0]
    assert fit["cell"] is None


def test_render_table(example):
    _, flags = example
    text = render_table(flags, width=120)
    assert text.splitlines()[0].split() == ["SEVERITY", "CODE", "SEATS", "CELL", "MESSAGE"]
    assert "trap.prefix_cache" in text and "critical" in text
    assert all(len(line) <= 120 for line in text.splitlines())
    assert re.search(r"\d+ flags: 1 critical, \d+ warn, \d+ info$", text)
    assert "No flags" in render_table(flags.iloc[0:0])


def test_fail_on_met(example):
    _, flags = example
    assert fail_on_met(flags, "warn") and fail_on_met(flags, "critical")
    no_crit = flags[flags["severity"] != "critical"]
    assert fail_on_met(no_crit, "warn") and not fail_on_met(no_crit, "critical")
    info_only = flags[flags["severity"] == "info"]
    assert not fail_on_met(info_only, "warn")
    assert not fail_on_met(flags.iloc[0:0], "warn")
    with pytest.raises(ValueError, match="level"):
        fail_on_met(flags, "info")


def test_unknown_extra_threshold_refused(example):
    tables, _ = example
    with pytest.raises(TypeError, match="min_pases"):
        compute_flags(
            tables,
            cells=None,
            comparisons=None,
            exam_deltas=None,
            min_pases=3,
            excluded=decide_exclusions(tables, thresholds=DEFAULT),
            thresholds=DEFAULT,
        )


def test_without_statistics_frames(example):
    tables, _ = example
    flags = flags_of(tables, cells=None, comparisons=None, exam_deltas=None)
    codes = set(flags["code"])
    assert "trap.prefix_cache" in codes and "compare.cross_model" in codes  # pairs from the incumbent
    assert not any(c.startswith("sample.") for c in codes)


# --- the limitations section ---------------------------------------------------------------------


def test_limitations_section_example(example):
    _, flags = example
    md = section(flags)
    titles = [p.title for p in limitations_paragraphs(flags)]
    assert titles == [
        "Sample sizes",
        "Stability",
        "Measurement traps",
        "Comparisons",
        "Exams",
        "Deployment",
        "Faults and defects",
    ]
    for figure in (
        "896.9 and 982.5",
        "79.4 → 91.5 → 104.0",
        "95,941",
        "4,711",
        "28 of 30",
        "204.5 GB",
        "CC-BY-NC-ND-4.0",
        "153 of 164",
        "p = 1.0",
        "RDMA",
        "2026-10-28",
    ):
        assert figure in md, figure
    assert "<" not in md
    # the single-pass seats are one sentence, not one per seat
    para = limitations_paragraphs(flags)[0]
    assert sum("single pass" in s for s in para.sentences) == 1


def test_limitations_say_nothing_beyond_the_flags(example):
    """Every number in the section appears in some flag's message or evidence."""
    _, flags = example
    md = section(flags)
    source = " ".join(flags["message"]) + " " + json.dumps(list(flags["evidence"]), ensure_ascii=False)
    numbers = set(re.findall(r"\d[\d,.]*\d|\d", md))
    missing = [n for n in numbers if n not in source]
    assert not missing, missing


def test_limitations_exam_mde_said_once(example):
    _, flags = example
    md = section(flags)
    assert md.count("7.6 points") == 1  # not-significant and underpowered are one sentence


def test_limitations_no_flags():
    from benchreport.flags import empty_flags

    empty = empty_flags()
    assert section(empty) == NO_FLAGS
    assert limitations_paragraphs(empty) == []
    assert isinstance(empty, pd.DataFrame) and list(empty.columns) == FLAG_COLUMNS


def test_harness_imports_without_manifest():
    """Harness outputs imported without a manifest: what the importer assumed is said, and runs of two
    harnesses pooled into one cell are caught."""
    from benchreport.load import load
    from benchreport.tables import build_tables
    from flag_fixtures import ROOT

    folder = ROOT / "tests" / "fixtures" / "harness"
    if not folder.exists():
        pytest.skip("harness fixtures not present")
    tables = build_tables(load([str(folder)], progress=False))
    flags = flags_of(tables, cells=None, comparisons=None, exam_deltas=None)
    assumed = _rows(flags, "import.assumed")
    assert len(assumed) == tables.runs.loc[tables.runs["assumptions"].notna(), "seat"].nunique()
    assert all("without a manifest" in m for m in assumed["message"])
    mixed = _rows(flags, "sample.mixed_runs")
    for _, f in mixed.iterrows():
        assert len(f["evidence"]["differences"]) >= 1 and len(f["evidence"]["runs"]) >= 2


def test_limitations_condense_many_findings_of_one_code():
    """At fleet scale a code with many findings states a few in full and names the rest."""
    from benchreport.flags.text import MAX_NAMED, MAX_STATED, STATED_WHEN_CONDENSED

    n = MAX_STATED + 4
    rows = [
        {
            "code": "fault.recorded",
            "severity": "warn",
            "seats": (f"seat-{i:02d}",),
            "workload": None,
            "concurrency": None,
            "metric": None,
            "statistic": None,
            "message": f"seat-{i:02d}: a fault was recorded at 16 streams (engine crash {i}).",
            "evidence": {"events": 1},
        }
        for i in range(n)
    ]
    text = section(pd.DataFrame(rows))
    for i in range(STATED_WHEN_CONDENSED):
        assert f"engine crash {i})" in text
    assert f"engine crash {STATED_WHEN_CONDENSED})" not in text
    assert f"holds for {n - STATED_WHEN_CONDENSED} more cases" in text
    rest = [f"seat-{i:02d}" for i in range(STATED_WHEN_CONDENSED, n)]
    named = rest[:MAX_NAMED]
    assert all(s in text for s in named) and f"and {len(rest) - len(named)} more" in text, text
    assert not any(s in text for s in rest[MAX_NAMED:])  # counted, not named: flags.json names each
    few = section(pd.DataFrame(rows[:MAX_STATED]))
    assert all(f"engine crash {i})" in few for i in range(MAX_STATED))
