"""Findings are data and words are written from them: every flag's evidence is its finding's,
read back exactly; its message is the words' for that finding; the exclusions are one decision."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from benchreport.flags import (
    Exclusions,
    compute_flags,
    decide_exclusions,
    drop_excluded,
    excluded_measurements,
    finding_from_flag,
    flags_to_records,
)
from benchreport.flags import words
from benchreport.flags.exclusions import EXCLUSION_COLUMNS
from benchreport.flags.findings import ABSENT
from benchreport.load import load
from benchreport.pipeline import Options, analyse
from benchreport.thresholds import DEFAULT
from flag_fixtures import EXAMPLE, ROOT, example_tables, m_, mkrun, tables_of

HARNESS = ROOT / "tests" / "fixtures" / "harness"


@pytest.fixture(scope="module", params=["example", "harness"])
def analysed(request):
    folder = EXAMPLE if request.param == "example" else HARNESS
    if not folder.exists():
        pytest.skip(f"{folder.name} not present")
    return analyse(load([str(folder)], progress=False), Options(n_boot=200))


def test_flags_are_their_findings(analysed):
    records = flags_to_records(analysed.flags)
    assert len(records) == len(analysed.findings)
    for r in json.loads(json.dumps(records)):  # as flags.json holds them
        f = finding_from_flag(r["code"], r["severity"], r["seats"], r["evidence"], r["cell"])
        assert json.loads(json.dumps(f.evidence())) == r["evidence"], r["code"]
        assert f.cell == r["cell"], r["code"]
        if not (r["code"] == "compare.missing_metric" and r["evidence"]["kind"] == "one_side"):
            # (read back, a one-sided missing_metric does not know which side was the baseline)
            assert words.message(f) == r["message"], r["code"]


def test_findings_carry_no_words(analysed):
    """A finding is data: its fields are numbers, names and records, never the flag's message."""
    messages = set(analysed.flags["message"])
    for f in analysed.findings:
        assert not any(isinstance(v, str) and v in messages for v in vars(f).values())


def test_exclusions_are_a_typed_table():
    tables = example_tables()
    ex = decide_exclusions(tables, thresholds=DEFAULT)
    assert isinstance(ex, Exclusions) and ex.cache_ratio == DEFAULT.cache_ratio
    (hit,) = ex.hits
    assert (hit.seat, hit.metric, hit.value) == ("glm-5.3-flash-nvfp4-tp4-2node", "prefill_tok_s", 95941.0)
    assert hit.reasons == ("not_fresh", "ratio") and hit.reference == 4711.0 and hit.reference_kind == "fresh"
    frame = ex.to_frame()
    assert list(frame.columns) == EXCLUSION_COLUMNS and len(frame) == 1
    mask = excluded_measurements(tables, ex)
    assert tables.measurements.loc[mask, "value"].tolist() == [95941.0]
    assert len(drop_excluded(tables, ex).measurements) == len(tables.measurements) - 1


def test_exclusions_need_the_same_thresholds_as_the_flags():
    tables = example_tables()
    ex = decide_exclusions(tables, thresholds=DEFAULT)
    with pytest.raises(ValueError, match="cache_ratio"):
        compute_flags(
            tables,
            cells=None,
            comparisons=None,
            exam_deltas=None,
            excluded=ex,
            thresholds=DEFAULT.replace(cache_ratio=25),
        )
    with pytest.raises(TypeError):
        drop_excluded(tables)  # no hidden default: the decision is an argument
    with pytest.raises(TypeError, match="Exclusions"):
        excluded_measurements(tables, None)


def test_cache_ratio_decides_the_exclusion():
    prefill = [
        m_(4711, "prefill_tok_s", workload="prefill", concurrency=None, fresh_prompt=True),
        m_(95941, "prefill_tok_s", workload="prefill", concurrency=None),
    ]
    tables = tables_of(mkrun(measurements=prefill))
    assert len(decide_exclusions(tables, thresholds=DEFAULT).hits) == 1
    assert decide_exclusions(tables, thresholds=DEFAULT.replace(cache_ratio=25)).hits == ()


def test_the_pipeline_keeps_the_decision(analysed):
    assert isinstance(analysed.excluded, Exclusions)
    assert analysed.excluded.cache_ratio == analysed.options.thresholds.cache_ratio


def test_absent_evidence_is_left_out_not_null():
    """Evidence a finding does not have is not written (not null): a hit found only because its prompt
    was not fresh has no reference, ratio or cache counts."""
    tables = tables_of(
        mkrun(measurements=[m_(5000, "prefill_tok_s", workload="prefill", concurrency=None, fresh_prompt=False)])
    )
    flags = compute_flags(
        tables,
        cells=None,
        comparisons=None,
        exam_deltas=None,
        excluded=decide_exclusions(tables, thresholds=DEFAULT),
        thresholds=DEFAULT,
    )
    (ev,) = flags.loc[flags["code"] == "trap.prefix_cache", "evidence"]
    assert ev["reasons"] == ["not_fresh"] and ev["context_tokens"] is None
    assert not {"reference", "reference_kind", "ratio", "cache"} & set(ev)
    assert repr(ABSENT) == "ABSENT" and not ABSENT


def test_the_warmup_sentences_are_written_in_one_place():
    """The flag's message, the limitations sentence and the report's summary say the same thing."""
    t = tables_of(
        mkrun("s1", warmup_excluded=None), mkrun("s2", 1, warmup_excluded=None), mkrun("s2", 2, warmup_excluded=None)
    )
    flags = compute_flags(
        t,
        cells=None,
        comparisons=None,
        exam_deltas=None,
        excluded=decide_exclusions(t, thresholds=DEFAULT),
        thresholds=DEFAULT,
    )
    unknown = flags[flags["code"] == "warmup.unknown"]
    assert list(unknown["message"]) == [
        "s1: 1 run (2026-11-02) does not say whether warm-up requests were excluded, so the first requests may "
        "carry start-up effects.",
        "s2: 2 runs (2026-11-02) do not say whether warm-up requests were excluded, so the first requests may "
        "carry start-up effects.",
    ]
    from benchreport.flags import limitations_paragraphs

    (para,) = [p for p in limitations_paragraphs(flags) if p.group == "stability"]
    assert (
        "The runs of s1 (1 run) and s2 (2 runs) do not say whether warm-up requests were excluded, so their "
        "first requests may carry start-up effects." in para.text
    )
    assert words.warmup_unknown_summary(["s1", "s2"]) == (
        "2 seats' runs do not say whether warm-up requests were excluded, so their first requests may carry "
        "start-up effects: s1, s2."
    )
    assert words.warmup_unknown_summary(["s1"]).startswith("1 seat's runs does not say")


def test_limitations_read_flags_loaded_from_json(analysed):
    """The section is the same from the flags table and from flags.json read back."""
    from benchreport.flags import limitations_paragraphs

    recs = json.loads(json.dumps(flags_to_records(analysed.flags)))
    back = pd.DataFrame(
        [
            {
                "code": r["code"],
                "severity": r["severity"],
                "seats": tuple(r["seats"]),
                "message": r["message"],
                "evidence": r["evidence"],
            }
            for r in recs
        ]
    )
    assert [p.text for p in limitations_paragraphs(back)] == [p.text for p in limitations_paragraphs(analysed.flags)]
