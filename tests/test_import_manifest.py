"""The harness manifest (benchreport.yaml/.json): seat, pass, date and probe for harness files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from benchreport.load import load
from benchreport.load.harness._manifest import glob_regex

VLLM = sorted((Path(__file__).parent / "fixtures" / "harness" / "vllm").rglob("*.json"))

MANIFEST = """\
version: 1
runs:
  - files: "**"
    seat: {role: candidate}
  - files: ["a/*.json"]
    seat:
      id: tiny-fp16-tp1
      model: tiny-gpt2
      role: incumbent
      quantisation: FP16
      engine: vllm 0.11.0
      placement: {nodes: 1, gpus_per_node: 1, tensor_parallel: 1}
      settings: {max_model_len: 2048, prefix_caching: true}
      components: [{name: tiny-gpt2, role: checkpoint, license: MIT}]
    probe: random-32x24
    date: 2026-09-10
    warmup_excluded: true
    workload: chat
  - files: a/second.json
    pass: 2
"""


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "a").mkdir()
    shutil.copy(VLLM[0], tmp_path / "a" / "first.json")
    shutil.copy(VLLM[-1], tmp_path / "a" / "second.json")
    return tmp_path


def test_manifest_names_seat_pass_date_and_probe(folder):
    (folder / "benchreport.yaml").write_text(MANIFEST)
    result = load([folder])
    assert not result.refused, [str(r) for r in result.refused]
    runs = {Path(r.source_file).name: r for r in result.runs}
    first, second = runs["first.json"], runs["second.json"]
    for lr in (first, second):
        seat = lr.run.seat
        assert (seat.id, seat.model, seat.role, seat.quantisation) == (
            "tiny-fp16-tp1",
            "tiny-gpt2",
            "incumbent",
            "FP16",
        )
        assert seat.placement.tensor_parallel == 1 and seat.settings["prefix_caching"] is True
        assert lr.run.date == "2026-09-10" and lr.run.harness.probe == "random-32x24"
        assert lr.run.warmup_excluded is True
        assert {m.workload for m in lr.run.measurements} == {"chat"}
        assert not any("seat id" in a for a in lr.assumptions)
    assert second.run.pass_ == 2
    assert first.run.pass_ == 1  # inferred, skipping the pass the manifest took
    assert not any("pass" in a for a in second.assumptions)
    assert "manifest:" in first.run.notes


def test_json_manifest_and_deeper_manifest_overrides(folder):
    (folder / "benchreport.json").write_text(
        json.dumps({"runs": [{"files": "**", "seat": {"id": "outer", "model": "tiny-gpt2"}}]})
    )
    (folder / "a" / "benchreport.yml").write_text("runs:\n  - files: first.json\n    seat: {id: inner}\n")
    result = load([folder])
    assert not result.refused
    ids = {Path(r.source_file).name: r.run.seat.id for r in result.runs}
    assert ids == {"first.json": "inner", "second.json": "outer"}


@pytest.mark.parametrize(
    "entry,json_path,words",
    [
        ({"files": "../*.json", "seat": {"id": "x"}}, "$.runs[0].files", "relative to the manifest"),
        ({"files": "/etc/*.json"}, "$.runs[0].files", "relative to the manifest"),
        ({"files": "*.json", "seat": {"id": "../../evil"}}, "$.runs[0].seat.id", "expected an id"),
        ({"files": "*.json", "seat": {"id": "ok", "role": "champion"}}, "$.runs[0].seat.role", "expected one of"),
        ({"files": "*.json", "pass": 0}, "$.runs[0].pass", "expected an integer >= 1"),
        ({"files": "*.json", "date": "10 Sept"}, "$.runs[0].date", "expected an ISO date"),
        ({"files": "*.json", "passes": 2}, "$.runs[0].passes", "unknown field"),
        ({"seat": {"id": "x"}}, "$.runs[0]", "missing required field files"),
        ({"files": "*.json", "seat": {"model": "a\x00b"}}, "$.runs[0].seat.model", "control characters"),
        # what msgspec checks, in our words: the path, what was expected and what was found
        ({"files": []}, "$.runs[0].files", "expected a list of length >= 1, got 0 items"),
        ({"files": ["a/*.json", 4]}, "$.runs[0].files[1]", "expected a string, got 4"),
        ({"files": "*.json", "pass": True}, "$.runs[0].pass", "expected an integer, got true"),
        ({"files": "*.json", "pass": "2"}, "$.runs[0].pass", 'expected an integer, got "2"'),
        ({"files": "*.json", "seat": {"id": 12}}, "$.runs[0].seat.id", "expected an id of 1 to 128 characters"),
        ({"files": "*.json", "seat": {"model": None}}, "$.runs[0].seat.model", "expected a string, got null"),
        (
            {"files": "*.json", "seat": {"model": "m" * 201}},
            "$.runs[0].seat.model",
            "expected a string of length <= 200, got 201 characters",
        ),
        ({"files": "*.json", "seat": "qwen"}, "$.runs[0].seat", "expected a map of seat fields (id, model, role"),
        (
            {"files": "*.json", "seat": {"placement": {"gpus": 8}}},
            "$.runs[0].seat.placement.gpus",
            "unknown placement field (known: nodes, gpus_per_node, gpu_memory_bytes, tensor_parallel, interconnect)",
        ),
        (
            {"files": "*.json", "seat": {"placement": {"gpu_memory_bytes": -1}}},
            "$.runs[0].seat.placement.gpu_memory_bytes",
            "expected a number > 0.0, got -1",
        ),
        (
            {"files": "*.json", "seat": {"components": [{"role": "x"}]}},
            "$.runs[0].seat.components[0]",
            "missing required field name",
        ),
        (
            {"files": "*.json", "seat": {"components": [{"name": "x"}] * 51}},
            "$.runs[0].seat.components",
            "expected a list of length <= 50, got 51 items",
        ),
        (
            {"files": "*.json", "seat": {"settings": {"a": {"b": [1, "x\x01"]}}}},
            "$.runs[0].seat.settings.a.b[1]",
            "control characters",
        ),
        (
            {"files": "*.json", "warmup_excluded": "yes"},
            "$.runs[0].warmup_excluded",
            'expected true or false, got "yes"',
        ),
        ("just text", "$.runs[0]", "expected a map of entry fields (files, seat, pass, date"),
    ],
)
def test_bad_entries_are_refused_and_the_rest_applies(folder, entry, json_path, words):
    good = {"files": "a/second.json", "seat": {"id": "good", "model": "tiny-gpt2"}}
    (folder / "benchreport.json").write_text(json.dumps({"runs": [entry, good]}))
    result = load([folder])
    manifest_refusals = [r for r in result.refused if r.path.endswith("benchreport.json")]
    assert len(manifest_refusals) == 1, [str(r) for r in result.refused]
    assert manifest_refusals[0].json_path == json_path and words in manifest_refusals[0].message
    ids = {Path(r.source_file).name: r.run.seat.id for r in result.runs}
    assert ids["second.json"] == "good"
    assert len(result.runs) == 2  # the bad entry is ignored: first.json falls back to inference


def test_unparsable_manifest_is_refused_once_and_its_files_with_it(folder):
    """The files below a manifest that cannot be read are not imported under a guessed seat."""
    (folder / "benchreport.yaml").write_text("runs: [\n  - files: *x\n")
    result = load([folder])
    refusals = [r for r in result.refused if r.path.endswith("benchreport.yaml")]
    assert len(refusals) == 1 and "YAML" in refusals[0].message
    assert not result.runs
    others = [r for r in result.refused if not r.path.endswith("benchreport.yaml")]
    assert len(others) == 2 and all(
        f"{folder}/benchreport.yaml could not be read ($: expected a YAML manifest" in r.message for r in others
    )


@pytest.mark.parametrize(
    "pattern,path,hit",
    [
        ("*.json", "x.json", True),
        ("*.json", "a/x.json", False),
        ("**/*.json", "a/b/x.json", True),
        ("**/*.json", "x.json", True),
        ("a", "a/b/x.json", True),
        ("a/*", "a/b/x.json", True),
        ("r?n_[0-9]*", "run_0001/x.json", True),
        ("[!a]*", "a.json", False),
    ],
)
def test_glob_semantics(pattern, path, hit):
    assert bool(glob_regex(pattern).match(path)) is hit
