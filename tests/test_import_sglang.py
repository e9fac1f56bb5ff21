"""SGLang bench_serving `--output-file` JSON Lines: one run a line, reproduces SGLang's own figures."""

from __future__ import annotations

import json

import numpy as np
import pytest

from benchreport.flags import decide_exclusions
from benchreport.flags.rules import prefix_cache
from benchreport.thresholds import DEFAULT
from benchreport.load import load
from benchreport.tables import build_tables
from harness_oracle import HARNESS, copy_with_manifest, load_tables, oracle, pass_row, requests_of, value

FOLDER = "sglang"
MANIFEST = "version: 1\nruns:\n  - files: '**'\n    seat: {id: tiny-gpt2-s1, model: tiny-gpt2-s1}\n"
ORACLE = oracle(FOLDER)["results"]


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    folder = copy_with_manifest(FOLDER, tmp_path_factory.mktemp("sg") / FOLDER, MANIFEST)
    return (folder,) + load_tables(folder)


def _run(result, folder, file, line):
    """The run of one line of one file (several lines: run id ends -lineNNN)."""
    runs = [r for r in result.runs if r.source_file == str(folder / file)]
    if len(runs) == 1:
        return runs[0]
    return next(r for r in runs if r.run.run_id.endswith(f"-line{line:03d}"))


def _lines(file):
    return [json.loads(ln) for ln in (HARNESS / FOLDER / file).read_text().splitlines() if ln.strip()]


def test_every_line_is_a_run_and_nothing_is_refused(loaded):
    folder, result, tables, _ = loaded
    assert not result.refused, [str(r) for r in result.refused]
    assert len(result.runs) == len(ORACLE) == 5
    assert {r.run.harness.name for r in result.runs} == {"sglang bench_serving"}
    skipped = {s.path: s.reason for s in result.skipped}
    assert "test oracle" in skipped[str(folder / "expected.json")]


@pytest.mark.parametrize("entry", ORACLE, ids=lambda e: f"{e['file']}:{e['line']}")
def test_our_figures_are_sglangs(loaded, entry):
    """TTFT and ITL p50, output throughput and the request counts equal SGLang's own. Our median
    of the imported TTFTs is SGLang's too (numpy over the same seconds x 1000); its ITL median
    pools every gap of every request, which per-request records cannot reproduce, so that figure
    is SGLang's as reported."""
    folder, result, tables, passes = loaded
    run = _run(result, folder, entry["file"], entry["line"]).run
    ttft = pass_row(passes, run.run_id, "ttft_ms", "p50")
    assert ttft.value == value(entry["ttft_p50_ms"])
    assert ttft.recomputed == pytest.approx(value(entry["ttft_p50_ms"]), rel=1e-9)
    assert pass_row(passes, run.run_id, "ttft_ms", "mean").recomputed == pytest.approx(
        value(entry["ttft_mean_ms"]), rel=1e-9
    )
    assert pass_row(passes, run.run_id, "itl_ms", "p50").value == value(entry["itl_p50_ms"])
    assert pass_row(passes, run.run_id, "output_tok_s", "mean").value == value(entry["output_tok_s"])
    req = requests_of(tables, run.run_id)
    assert len(req) == value(entry["request_count"])
    assert int(req.error.notna().sum()) == value(entry["failed"])
    assert int(req.error.isna().sum()) == value(entry["completed"])
    assert req.loc[req.error.isna(), "output_tokens"].sum() == value(entry["total_output_tokens"])
    assert {m.concurrency for m in run.measurements} == {entry["max_concurrency"]}
    for printed in ("ttft_p50_ms", "itl_p50_ms", "output_tok_s"):
        ours = pass_row(passes, run.run_id, *_metric(printed)).value
        assert f"{ours:.2f}" == entry["console_lines"][printed]["value"]


def _metric(name):
    return {
        "ttft_p50_ms": ("ttft_ms", "p50"),
        "itl_p50_ms": ("itl_ms", "p50"),
        "output_tok_s": ("output_tok_s", "mean"),
    }[name]


def test_failed_requests_carry_their_errors(loaded):
    folder, result, tables, _ = loaded
    run = _run(result, folder, "failed.jsonl", 1).run
    bad = [r for r in run.requests if r.finish_reason == "error"]
    assert len(bad) == 3
    assert all(r.error.startswith("Bad Request: ") and "maximum context length is 70" in r.error for r in bad)
    assert all(r.ttft_ms is None and r.output_tokens is None and r.prompt_tokens for r in bad)


def test_infinity_rate_seconds_and_workload(loaded):
    """`request_rate: Infinity` is read (Python's token), gives no rate suffix; times are seconds."""
    folder, result, tables, _ = loaded
    assert b"Infinity" in (HARNESS / FOLDER / "completions.jsonl").read_bytes()
    run = _run(result, folder, "completions.jsonl", 1).run
    doc = _lines("completions.jsonl")[0]
    assert {m.workload for m in run.measurements} == {"decode"}
    assert run.requests[0].ttft_ms == pytest.approx(doc["ttfts"][0] * 1000)
    assert run.requests[0].itl_ms == pytest.approx(np.mean(doc["itls"][0]) * 1000)
    assert run.harness.probe is None  # what was sent is the load (issue 25), lengths drawn in [len * ratio, len]
    assert (run.load.dataset, run.load.prompt_tokens.min, run.load.prompt_tokens.max) == ("random-ids", 24, 48)
    assert (run.load.output_tokens.min, run.load.output_tokens.max, run.load.endpoint) == (16, 32, "completions")
    assert run.warmup_excluded is True


def test_passes_are_not_mixed_across_prompt_sets(loaded):
    """Three runs at concurrency 2 with three prompt sets are three cells of one pass each."""
    _, result, tables, _ = loaded
    runs = tables.runs
    assert set(runs["pass"]) == {1}
    assert runs.load_id.nunique() == 3 and runs.load_label.nunique() == 3


def test_without_a_model_the_seat_is_named_after_its_folder(tmp_path):
    """SGLang's bench_serving records no model: never refused for that alone (issue 25); the seat is
    its folder, said as an assumption, and two folders of one name are two seats."""
    for where, name in (("node-a/results", "failed.jsonl"), ("node-b/results", "completions.jsonl")):
        (tmp_path / where).mkdir(parents=True)
        (tmp_path / where / "x.jsonl").write_bytes((HARNESS / FOLDER / name).read_bytes())
    result = load([tmp_path])
    assert not result.refused and result.runs
    seats = {lr.run.seat.id for lr in result.runs}
    assert seats == {f"{tmp_path.name}_node-a_results", f"{tmp_path.name}_node-b_results"}
    notes = "; ".join(result.runs[0].assumptions)
    assert "recorded no model name" in notes and "benchreport.yaml manifest" in notes


def test_model_from_server_info(tmp_path):
    doc = _lines("failed.jsonl")[0]
    doc["server_info"] = {"model_path": "Qwen/Qwen3-8B", "tp_size": 1}
    (tmp_path / "x.jsonl").write_text(json.dumps(doc))
    result = load([tmp_path])
    assert not result.refused
    assert result.runs[0].run.seat.model == "Qwen/Qwen3-8B"
    assert "seat id inferred from SGLang server_info model" in "; ".join(result.runs[0].assumptions)


def test_newer_release_cache_report_and_cached_tokens(tmp_path):
    """sglang.benchmark.serving with --cache-report: per-request cached tokens arrive and raise the
    prefix-cache trap; later key names (`total_output`) and a finite rate are read."""
    doc = _lines("completions.jsonl")[0]
    doc["total_output"] = doc.pop("total_output_tokens")
    doc["request_rate"] = 4.0
    doc["cached_tokens"] = [0] + [16] * (len(doc["errors"]) - 1)
    doc["cache_report"] = {"total_prompt_tokens": 393, "total_cached_tokens": 176, "cache_hit_rate_pct": 44.78}
    doc["server_info"] = {"served_model_name": "tiny"}
    (tmp_path / "x.jsonl").write_text(json.dumps(doc))
    result = load([tmp_path])
    assert not result.refused
    run = result.runs[0].run
    assert [r.cached_prompt_tokens for r in run.requests][:3] == [0, 16, 16]
    assert {m.workload for m in run.measurements} == {"decode-4rps"}
    assert "176 of 393 prompt tokens" in run.notes
    assert [f.code for f in prefix_cache(decide_exclusions(build_tables(result), thresholds=DEFAULT))] == [
        "trap.prefix_cache"
    ]


def test_cache_report_without_details_marks_ttft_not_fresh(tmp_path):
    doc = {
        k: v
        for k, v in _lines("completions.jsonl")[0].items()
        if k not in ("input_lens", "output_lens", "ttfts", "itls", "generated_texts", "errors")
    }
    doc["cache_report"] = {"total_prompt_tokens": 393, "total_cached_tokens": 176}
    doc["server_info"] = {"served_model_name": "tiny"}
    (tmp_path / "x.jsonl").write_text(json.dumps(doc))
    result = load([tmp_path])
    run = result.runs[0].run
    assert not run.requests
    assert {m.fresh_prompt for m in run.measurements if m.metric == "ttft_ms"} == {False}
    assert {f.code for f in prefix_cache(decide_exclusions(build_tables(result), thresholds=DEFAULT))} == {
        "trap.prefix_cache"
    }


def test_no_reasoning_tokens_are_claimed(loaded):
    """SGLang records no reasoning tokens (its chat client reads only `content`)."""
    folder, result, tables, passes = loaded
    run = _run(result, folder, "reasoning-chat.jsonl", 1).run
    assert all(r.reasoning_tokens is None for r in run.requests)
    assert "requested lengths" in "; ".join(next(r for r in result.runs if r.run is run).assumptions)


@pytest.mark.parametrize(
    "edit, where",
    [
        (lambda d: d.update(ttfts="oops"), "$[0].ttfts"),  # a JSON Lines file: line 1 is $[0]
        (lambda d: d["itls"].pop(), "$[0].itls"),
        (lambda d: d["ttfts"].__setitem__(2, "x"), "$[0].ttfts[2]"),
    ],
)
def test_a_broken_line_is_refused_with_its_path(tmp_path, edit, where):
    doc = _lines("failed.jsonl")[0]
    doc["server_info"] = {"model_path": "m"}
    edit(doc)
    (tmp_path / "x.jsonl").write_text(json.dumps(doc))
    result = load([tmp_path])
    assert not result.runs
    assert result.refused[0].json_path == where, str(result.refused[0])
    assert result.refused[0].message.startswith("expected ")


def test_a_document_of_no_known_kind_is_refused_even_when_nan_is_read(tmp_path):
    # NaN/Infinity are read in harness files (Python's json.dump writes them; issue 16), but a
    # document no importer recognises is still refused, by what it is (with strict: without, a
    # file that claims to be no run is skipped, issue 31), and skipped as what it is
    (tmp_path / "x.json").write_text('{"hello": NaN}')
    assert "of no known kind" in str(load([tmp_path], strict=True).refused[0])
    (skipped,) = load([tmp_path]).skipped
    assert skipped.not_a_run and 'keys "hello"' in skipped.reason


def test_a_completed_count_its_own_records_contradict_is_a_figure_check(tmp_path):
    """`completed: 100` beside 12 request records: the figures' n is SGLang's, but the
    contradiction is checked and flagged (import.figure_mismatch), never accepted in silence."""
    from benchreport.pipeline import Options, analyse

    doc = json.loads((HARNESS / "sglang" / "completions.jsonl").read_text(encoding="utf-8").splitlines()[0])
    n_records = len(doc["ttfts"])
    doc["completed"] = 100
    path = tmp_path / "sglang.jsonl"
    path.write_text(json.dumps(doc) + "\n", encoding="utf-8")
    result = load([path])
    assert not result.refused
    (check,) = [c for c in result.runs[0].checks if c["metric"] == "requests"]
    assert (check["reported"], check["recomputed"]) == (100.0, float(n_records))
    flags = analyse(result, Options(n_boot=200)).flags
    msgs = flags.loc[flags["code"] == "import.figure_mismatch", "message"].tolist()
    assert any("says 100, ours gives 12" in m for m in msgs), msgs
    doc["completed"] = n_records  # as SGLang writes it: no check fails
    path.write_text(json.dumps(doc) + "\n", encoding="utf-8")
    flags = analyse(load([path]), Options(n_boot=200)).flags
    assert not any("completed count" in m for m in flags.loc[flags["code"] == "import.figure_mismatch", "message"])
