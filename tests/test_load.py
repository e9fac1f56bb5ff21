"""The native loader: every rule of spec/run-format.md, valid and invalid, and across files."""

from __future__ import annotations

import hashlib
import json

import jsonschema
import pytest

from benchreport.load import load
from benchreport.schema import packaged_schema, schema_text
from runs import make_run, set_path, write_run


def refusals(tmp_path, run, name="run.json", **kwargs):
    write_run(tmp_path, name, run)
    result = load([tmp_path], **kwargs)
    return result, [str(r) for r in result.refused]


def test_valid_run_loads_with_provenance(tmp_path):
    path = write_run(tmp_path, "a.json", make_run())
    result = load([tmp_path])
    assert result.ok and len(result.runs) == 1
    lr = result.runs[0]
    assert lr.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert lr.source_file.endswith("a.json") and lr.source_format == "native"


def test_unknown_fields_are_ignored(tmp_path):
    run = make_run(future_field={"x": 1})
    run["seat"]["new_thing"] = "y"
    result, refused = refusals(tmp_path, run)
    assert refused == [] and len(result.runs) == 1


@pytest.mark.parametrize(
    "path,value,json_path,words",
    [
        ("format", "benchreport.run/2", "$.format", 'expected "benchreport.run/1"'),
        ("run_id", "../etc/passwd", "$.run_id", "expected an id of 1 to 128"),
        ("run_id", "a/b", "$.run_id", "no '/'"),
        ("date", "10 Sept 2026", "$.date", "expected an ISO date"),
        ("date", "2026-13-40", "$.date", "expected an ISO date"),
        ("pass", 0, "$.pass", "expected int >= 1, got 0"),
        ("pass", "1", "$.pass", "expected int, got str"),
        ("seat.model", 7, "$.seat.model", "expected str, got int"),
        ("seat.role", "champion", "$.seat.role", "expected one of incumbent, candidate, reference, got 'champion'"),
        (
            "measurements.0.unit",
            "tokens/s",
            "$.measurements[0].unit",
            'expected "tok/s" for output_tok_s, got "tokens/s"',
        ),
        ("measurements.2.unit", "s", "$.measurements[2].unit", 'expected "ms" for ttft_ms'),
        ("measurements.0.metric", "tokens_per_second", "$.measurements[0].metric", "got 'tokens_per_second'"),
        ("measurements.0.statistic", "p42", "$.measurements[0].statistic", "got 'p42'"),
        ("measurements.0.concurrency", 0, "$.measurements[0].concurrency", "expected int >= 1"),
        ("measurements.0.value", "fast", "$.measurements[0].value", "expected float, got str"),
        ("measurements.0.value", 1e400, "$.measurements[0].value", "finite"),
    ],
)
def test_each_field_rule(tmp_path, path, value, json_path, words):
    run = set_path(make_run(), path, value)
    result, refused = refusals(tmp_path, run)
    assert not result.runs
    assert len(refused) == 1
    assert refused[0].startswith(f"{tmp_path / 'run.json'}: {json_path}: "), refused[0]
    assert words in refused[0]


def test_missing_required_field(tmp_path):
    run = make_run()
    del run["seat"]["model"]
    _, refused = refusals(tmp_path, run)
    assert refused == [f"{tmp_path / 'run.json'}: $.seat: missing required field model"]


def test_at_least_one_of_measurements_requests_exams(tmp_path):
    run = make_run()
    del run["measurements"]
    _, refused = refusals(tmp_path, run)
    assert "expected at least one of measurements, requests, exams" in refused[0]


@pytest.mark.parametrize(
    "exam,json_path,words",
    [
        (
            {"benchmark": "HumanEval", "correct": 165, "total": 164},
            "$.exams[0].correct",
            "expected at most total (164), got 165",
        ),
        ({"benchmark": "HumanEval", "correct": 5}, "$.exams[0].total", "expected the number of items"),
        ({"benchmark": "HumanEval", "score": 96.2}, "$.exams[0].total", "expected the number of items"),
        ({"benchmark": "HumanEval", "score": 101, "total": 94}, "$.exams[0].score", "<= 100"),
        (
            {"benchmark": "HumanEval", "items": [{"id": "1", "correct": "yes"}]},
            "$.exams[0].items[0].correct",
            "expected bool, got str",
        ),
        (
            {"benchmark": "HumanEval", "items": [{"id": "1", "correct": True}, {"id": "1", "correct": False}]},
            "$.exams[0].items[1].id",
            "unique item ids",
        ),
        (
            {"benchmark": "HumanEval", "items": [{"id": "1", "correct": True}], "correct": 1, "total": 1},
            "$.exams[0]",
            "got both",
        ),
        (
            {"benchmark": "HumanEval", "correct": 1, "total": 2, "measured_on": "last week"},
            "$.exams[0].measured_on",
            "ISO date",
        ),
    ],
)
def test_exam_rules(tmp_path, exam, json_path, words):
    _, refused = refusals(tmp_path, make_run(exams=[exam]))
    assert refused and f": {json_path}: " in refused[0] and words in refused[0], refused


@pytest.mark.parametrize(
    "request_,json_path,words",
    [
        (
            {"workload": "decode", "prompt_tokens": 10, "cached_prompt_tokens": 11},
            "$.requests[0].cached_prompt_tokens",
            "at most prompt_tokens",
        ),
        (
            {"workload": "decode", "output_tokens": 10, "reasoning_tokens": 11},
            "$.requests[0].reasoning_tokens",
            "at most output_tokens",
        ),
        ({"workload": "decode", "ttft_ms": -1}, "$.requests[0].ttft_ms", ">= 0"),
        ({"workload": "decode", "output_tokens": -3}, "$.requests[0].output_tokens", ">= 0"),
    ],
)
def test_request_rules(tmp_path, request_, json_path, words):
    _, refused = refusals(tmp_path, make_run(requests=[request_]))
    assert refused and f": {json_path}: " in refused[0] and words in refused[0], refused


def test_duplicate_run_id_names_both_files(tmp_path):
    write_run(tmp_path, "a.json", make_run())
    write_run(tmp_path, "b.json", set_path(make_run(), "pass", 2))
    result = load([tmp_path])
    assert len(result.runs) == 1
    (msg,) = [str(r) for r in result.refused]
    assert str(tmp_path / "b.json") in msg and str(tmp_path / "a.json") in msg and "$.run_id" in msg


def test_one_seat_id_one_model_names_both_files(tmp_path):
    write_run(tmp_path, "a.json", make_run())
    other = set_path(make_run(run_id="other"), "seat.model", "Another-Model")
    write_run(tmp_path, "b.json", other)
    result = load([tmp_path])
    (msg,) = [str(r) for r in result.refused]
    assert "$.seat.model" in msg and "a.json" in msg and "b.json" in msg and "Another-Model" in msg


def test_one_seat_id_one_placement(tmp_path):
    write_run(tmp_path, "a.json", make_run())
    write_run(tmp_path, "b.json", set_path(make_run(run_id="other"), "seat.placement.tensor_parallel", 4))
    result = load([tmp_path])
    (msg,) = [str(r) for r in result.refused]
    assert "$.seat.placement" in msg and "a.json" in msg


@pytest.mark.parametrize(
    "raw,words",
    [
        (b"", "empty file"),
        (b'{"format": "benchreport.run/1", "run_id": "x"', "ends early"),
        ('{"format": "benchreport.run/1", "x": "caf\xe9"}'.encode("latin-1"), "undecodable bytes"),
    ],
)
def test_unreadable_files(tmp_path, raw, words):
    _, refused = refusals(tmp_path, raw)
    assert len(refused) == 1 and words in refused[0], refused


# issue 31: in a folder, a file that is not a run and does not claim to be one is skipped (its
# reason recorded); with strict it is refused as before, and so is a file named directly
@pytest.mark.parametrize(
    "raw,words",
    [
        (b"\x00\x01\x02\xff\xfe binary", "expected UTF-8 JSON text"),
        (b"[1, 2, 3]", "of no known kind"),
        (b'{"hello": "world"}', "of no known kind"),
        (b"[" * 20000 + b"]" * 20000, "found deeper nesting"),
    ],
)
def test_files_that_are_not_runs_are_skipped_unless_strict_or_named(tmp_path, raw, words):
    result, refused = refusals(tmp_path, raw)
    assert not refused and len(result.skipped) == 1 and result.skipped[0].not_a_run, result.skipped
    result, refused = refusals(tmp_path, raw, strict=True)
    assert len(refused) == 1 and words in refused[0] and not result.skipped, refused
    named = load([tmp_path / "run.json"])
    assert len(named.refused) == 1 and words in str(named.refused[0]), named.refused


def test_nan_is_refused_with_its_path(tmp_path):
    text = json.dumps(make_run()).replace("896.9", "NaN")
    _, refused = refusals(tmp_path, text)
    assert refused == [
        f"{tmp_path / 'run.json'}: $.measurements[0].value: expected a finite number, got NaN (not valid JSON)"
    ]


def test_bad_files_never_lose_good_ones(tmp_path):
    write_run(tmp_path, "good1.json", make_run())
    write_run(tmp_path, "good2.json", make_run(run_id="second", **{"pass": 2}))
    write_run(tmp_path, "trunc.json", json.dumps(make_run(run_id="t"))[:100])
    write_run(tmp_path, "other.json", {"not": "a run"})
    write_run(tmp_path, "unit.json", set_path(make_run(run_id="u"), "measurements.0.unit", "tokens/s"))
    write_run(tmp_path, "notes.txt", "a note")
    result = load([tmp_path])
    assert sorted(lr.run.run_id for lr in result.runs) == ["qwen-tp2-2026-09-10-p1", "second"]
    # other.json is not a run file and claims to be none: skipped (issue 31), not refused
    assert sorted(r.path.rsplit("/", 1)[1] for r in result.refused) == ["trunc.json", "unit.json"]
    assert [s.path.rsplit("/", 1)[1] for s in result.skipped] == ["notes.txt", "other.json"]


def test_missing_path_is_refused(tmp_path):
    result = load([tmp_path / "nope"])
    assert "found nothing at this path" in str(result.refused[0])


def test_oversized_file_refused_with_size_message(tmp_path):
    write_run(tmp_path, "big.json", make_run())
    result = load([tmp_path], max_file_bytes=100)
    assert "expected a file of at most" in str(result.refused[0]) and "MB" in str(result.refused[0])


def test_packaged_schema_is_current():
    assert json.loads(schema_text()) == packaged_schema()


def test_schema_agrees_with_loader_on_valid_and_invalid(tmp_path):
    schema = packaged_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    assert not list(validator.iter_errors(make_run()))
    for path, value in [("pass", 0), ("measurements.0.metric", "nope"), ("run_id", "a b"), ("format", "x")]:
        bad = set_path(make_run(), path, value)
        assert list(validator.iter_errors(bad)), path
        _, refused = refusals(tmp_path, bad)
        assert refused, path


def test_a_refusal_names_the_keys_seen_and_the_formats_considered(tmp_path):
    from benchreport.load import harness

    keys = {f"k{i}": i for i in range(12)}
    _, refused = refusals(tmp_path, json.dumps({"hello\nworld": 1, **keys}).encode(), strict=True)
    msg = refused[0]
    assert 'found an object with keys "hello\\nworld", "k0", "k1"' in msg and "and 5 more" in msg
    assert f"(considered: {'; '.join(harness.considered())})" in msg
    assert "AIPerf" in msg and "GuideLLM" in msg and "vLLM" in msg and "lm-evaluation-harness" in msg


def test_fixture_oracles_are_skipped(tmp_path):
    (tmp_path / "expected.json").write_text(json.dumps({"fixture_oracle": "x", "tool": "aiperf", "results": []}))
    result = load([tmp_path])
    assert not result.refused and "test oracle" in result.skipped[0].reason
