"""Write the bad-input corpus: one file per way to be wrong, plus good files beside them.

Run from the repository root: `python tests/bad_inputs/make_corpus.py`. The files are
committed; this script documents how each was made and remakes them byte-identically.
Expected messages live in expected.json (file name -> the refusal after `PATH: `).
"""
from __future__ import annotations

import copy
import json
from pathlib import Path

HERE = Path(__file__).parent

GOOD = {
    "format": "benchreport.run/1",
    "run_id": "good-1",
    "date": "2026-09-10",
    "seat": {"id": "seat-a", "model": "Model-A", "role": "incumbent",
             "placement": {"nodes": 1, "gpus_per_node": 2, "gpu_memory_bytes": 102641958912}},
    "harness": {"name": "in-house", "probe": "fixed-512", "max_tokens": 512},
    "pass": 1,
    "warmup_excluded": True,
    "measurements": [
        {"workload": "decode", "concurrency": 16, "metric": "output_tok_s", "value": 896.9, "unit": "tok/s"},
        {"workload": "decode", "concurrency": 1, "metric": "ttft_ms", "statistic": "p50", "value": 35, "unit": "ms"},
    ],
    "exams": [{"benchmark": "HumanEval", "correct": 153, "total": 164}],
}


def run(run_id: str, **changes) -> dict:
    doc = copy.deepcopy(GOOD)
    doc["run_id"] = run_id
    for path, value in changes.items():
        target = doc
        parts = path.split("__")
        for p in parts[:-1]:
            target = target[int(p)] if isinstance(target, list) else target[p]
        last = parts[-1]
        if value is DELETE:
            del target[last]
        elif isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value
    return doc


DELETE = object()


def text(doc) -> str:
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def corpus() -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    put = lambda name, data: files.__setitem__(name, data if isinstance(data, bytes) else data.encode())
    put("good/good-1.json", text(run("good-1")))
    put("good/good-2.json", text(run("good-2", **{"pass": 2, "measurements__0__value": 901.2})))
    put("good/good-3.json", text(run("good-3", seat={"id": "seat-b", "model": "Model-B"})))
    put("truncated.json", text(run("truncated"))[:200])
    put("empty.json", b"")
    put("array.json", text([run("in-an-array")]))
    put("binary.json", bytes(range(256)) * 4)
    put("not-utf8.json", text(run("not-utf8", notes="caf\u00e9")).encode("latin-1"))
    put("unknown-version.json", text(run("unknown-version", format="benchreport.run/2")))
    put("missing-required.json", text(run("missing-required", harness=DELETE)))
    put("wrong-type.json", text(run("wrong-type", measurements__0__concurrency="sixteen")))
    put("nan.json", text(run("nan")).replace("896.9", "NaN"))
    put("infinity.json", text(run("infinity")).replace("896.9", "Infinity"))
    put("huge-number.json", text(run("huge-number")).replace("896.9", "1e999"))
    put("zero-pass.json", text(run("zero-pass", **{"pass": 0})))
    put("negative-tokens.json", text(run("negative-tokens", requests=[{"workload": "decode", "output_tokens": -5}])))
    put("zero-total.json", text(run("zero-total", exams=[{"benchmark": "GSM8K", "correct": 0, "total": 0}])))
    put("unit-mismatch.json", text(run("unit-mismatch", measurements__0__unit="tokens/s")))
    put("unknown-metric.json", text(run("unknown-metric", measurements__0__metric="goodput_tok_s")))
    put("bad-date.json", text(run("bad-date", date="10th of September")))
    put("correct-over-total.json", text(run("correct-over-total", exams=[{"benchmark": "HumanEval", "correct": 170, "total": 164}])))
    put("non-boolean-verdict.json", text(run("non-boolean-verdict", exams=[
        {"benchmark": "HumanEval", "items": [{"id": "HumanEval/0", "correct": True}, {"id": "HumanEval/1", "correct": "pass"}]}])))
    put("duplicate-run-id-a.json", text(run("duplicate", seat={"id": "seat-c", "model": "Model-C"})))
    put("duplicate-run-id-b.json", text(run("duplicate", seat={"id": "seat-c", "model": "Model-C"}, **{"pass": 2})))
    put("seat-two-models-a.json", text(run("two-models-1", seat={"id": "seat-d", "model": "Model-D"})))
    put("seat-two-models-b.json", text(run("two-models-2", seat={"id": "seat-d", "model": "Model-E"})))
    put("deep-nesting.json", b"[" * 20000 + b"]" * 20000)
    put("run-id-traversal.json", text(run("../../etc/passwd")))
    put("run-id-slash.json", text(run("runs/evil")))
    put("no-results.json", text(run("no-results", measurements=DELETE, exams=DELETE)))
    put("ci-reversed.json", text(run("ci-reversed", measurements__0__ci_low=950.0, measurements__0__ci_high=850.0)))
    # bounded and unambiguous (issue 16)
    put("huge-integer.json", text(run("huge-integer", measurements__0__concurrency=2**64)))
    put("long-model.json", text(run("long-model", seat={"id": "seat-long", "model": "M" * 5001})))
    put("many-components.json", text(run("many-components", seat={
        "id": "seat-a", "model": "Model-A", "components": [{"name": f"c{i}"} for i in range(101)]})))
    put("bidi-override.json", text(run("bidi-override", seat={"id": "seat-a", "model": "Llama\u202e"})))
    put("nul-in-workload.json", text(run("nul-in-workload", measurements__0__workload="de\x00code")))
    put("lone-surrogate.json", text(run("lone-surrogate")).replace("in-house", "in-house\\ud800"))
    # ambiguity refused (issue 16)
    put("duplicate-key.json", text(run("duplicate-key")).replace('"value": 896.9', '"value": 100,\n    "value": 999'))
    put("duplicate-format.json", text(run("duplicate-format")).replace(
        '"format": "benchreport.run/1"', '"format": "benchreport.run/1",\n "format": "benchreport.run/2"'))
    put("duplicate-measurement.json", text(run("duplicate-measurement", measurements=[
        {"workload": "decode", "concurrency": 16, "metric": "output_tok_s", "value": 896.9, "unit": "tok/s"},
        {"workload": "decode", "concurrency": 16, "metric": "output_tok_s", "value": 982.5, "unit": "tok/s"}])))
    put("duplicate-exam.json", text(run("duplicate-exam", exams=[
        {"benchmark": "HumanEval", "correct": 153, "total": 164}, {"benchmark": "HumanEval", "correct": 150, "total": 164}])))
    # two runs claiming one pass are two passes, the later renumbered (issue 25: tests/test_conditions.py)
    put("date-iso-basic.json", text(run("date-iso-basic", date="20260910T080000")))
    put("date-iso-week.json", text(run("date-iso-week", date="2026-W37-4")))
    put("negative-rate.json", text(run("negative-rate", measurements__0__value=-896.9)))
    put("ci-excludes-value.json", text(run("ci-excludes-value", measurements__0__ci_low=900.0,
                                           measurements__0__ci_high=950.0)))
    put("ttft-above-e2e.json", text(run("ttft-above-e2e", requests=[
        {"workload": "decode", "ttft_ms": 35.0, "e2e_latency_ms": 2400.0},
        {"workload": "decode", "ttft_ms": 2500.0, "e2e_latency_ms": 2400.0}])))
    put("score-disagrees.json", text(run("score-disagrees", exams=[
        {"benchmark": "HumanEval", "correct": 153, "total": 164, "score": 96.2}])))
    put("empty-request.json", text(run("empty-request", requests=[
        {"workload": "decode", "ttft_ms": 35.0}, {"workload": "decode", "concurrency": 16, "ttft_ms": None}])))
    deep = {"a": {"b": {"c": {"d": {"e": {"f": {"g": {"h": 1}}}}}}}}
    put("settings-too-deep.json", text(run("settings-too-deep", seat={"id": "seat-a", "model": "Model-A",
                                                                     "settings": deep})))
    return files


def main() -> None:
    for name, data in corpus().items():
        path = HERE / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


if __name__ == "__main__":
    main()
