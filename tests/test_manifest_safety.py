"""The manifest is untrusted text: bounded work (size, YAML aliases, entries, patterns) and no
ambiguity (a key twice, two manifests in a folder, one file given two seats); a bad entry names
the manifest and the entry, and spares the entries that are fine."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from benchreport.load import load
from benchreport.load.harness import _manifest

VLLM = sorted((Path(__file__).parent / "fixtures" / "harness" / "vllm").rglob("*.json"))
SEAT = "seat: {id: tiny, model: tiny-gpt2}"


@pytest.fixture
def folder(tmp_path):
    shutil.copy(VLLM[0], tmp_path / "first.json")
    shutil.copy(VLLM[-1], tmp_path / "second.json")
    return tmp_path


def refusals(result) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for r in result.refused:
        out.setdefault(Path(r.path).name, []).append(f"{r.json_path}: {r.message}")
    return out


def test_alias_bomb_is_refused_at_once_and_its_files_with_it(folder):
    """Item 7: 10,000 aliases in 170 KB took 17 minutes to validate."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 1001)]
    lines += ["runs:", "  - {files: ['*.json'], " + SEAT + "}"] * 1
    (folder / "benchreport.yaml").write_text("\n".join(lines) + "\n")
    t0 = time.monotonic()
    result = load([folder])
    assert time.monotonic() - t0 < 10
    got = refusals(result)
    assert got["benchreport.yaml"] == ["$: expected at most 100 YAML aliases (*name), found more (line 12)"]
    assert not result.runs and set(got) == {"benchreport.yaml", "first.json", "second.json"}


def test_manifest_size_is_bounded(folder):
    (folder / "benchreport.yaml").write_text("runs: []\n# " + "x" * _manifest.MAX_MANIFEST_BYTES + "\n")
    assert refusals(load([folder]))["benchreport.yaml"] == ["$: expected a manifest of at most 1000 kB, found 1000 kB"]


def test_entries_and_patterns_are_bounded(folder):
    entries = [{"files": "nothing-here.json"}] * (_manifest.MAX_ENTRIES + 1)
    (folder / "benchreport.json").write_text(json.dumps({"runs": entries}))
    assert refusals(load([folder]))["benchreport.json"] == ["$.runs: expected at most 1000 entries, got 1001"]
    entries = [{"files": [f"p{i}-{j}.json" for j in range(200)]} for i in range(11)]
    (folder / "benchreport.json").write_text(json.dumps({"runs": entries}))
    assert refusals(load([folder]))["benchreport.json"] == [
        "$.runs[10].files: expected at most 2000 glob patterns in the whole manifest, got more (entry ignored)"
    ]


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            f"runs:\n  - files: '*.json'\n    {SEAT}\n    pass: 1\n    pass: 2\n",
            "$.runs[0].pass: expected each field once, got it more than once (line 5) (entry ignored)",
        ),
        (
            "runs:\n  - files: '*.json'\n    seat: {id: a, model: m, id: b}\n",
            "$.runs[0].seat.id: expected each field once, got it more than once (line 3) (entry ignored)",
        ),
        ("runs: []\nruns: []\n", "$.runs: expected each field once, got it more than once (line 2)"),
    ],
)
def test_a_key_given_twice_is_refused_with_its_line(folder, text, expected):
    (folder / "benchreport.yaml").write_text(text)
    result = load([folder])
    got = refusals(result)
    assert got["benchreport.yaml"] == [expected]
    assert not result.runs  # the files the entry was meant for are refused too, not guessed
    assert "benchreport.yaml" in got["first.json"][0]


def test_json_manifest_key_given_twice(folder):
    (folder / "benchreport.json").write_text(
        '{"runs": [{"files": "*.json", "seat": {"id": "a", "model": "m"}, "pass": 1, "pass": 2}]}'
    )
    assert refusals(load([folder]))["benchreport.json"] == [
        "$.runs[0].pass: expected each field once, got it more than once (entry ignored)"
    ]


def test_two_manifests_in_one_folder_neither_applies(folder):
    (folder / "benchreport.yaml").write_text(f"runs:\n  - {{files: '*.json', {SEAT}}}\n")
    (folder / "benchreport.json").write_text(json.dumps({"runs": [{"files": "*.json", "seat": {"id": "other"}}]}))
    result = load([folder])
    got = refusals(result)
    why = "$: expected one manifest in a folder, found benchreport.json and benchreport.yaml: neither applied"
    assert got["benchreport.yaml"] == [why] and got["benchreport.json"] == [why]
    assert not result.runs and f"{folder} holds benchreport.json and benchreport.yaml" in got["first.json"][0]


def test_one_file_given_two_seats_by_one_manifest_is_refused(folder):
    (folder / "benchreport.yaml").write_text(
        "runs:\n  - {files: '*.json', seat: {id: a, model: m}}\n  - {files: 'second.json', seat: {id: b}}\n"
    )
    result = load([folder])
    got = refusals(result)
    assert [lr.run.seat.id for lr in result.runs] == ["a"]  # first.json: one seat, fine
    assert got["second.json"] == [
        f"$: expected a manifest that says clearly which seat, pass and date this file measured; "
        f"{folder}/benchreport.yaml $.runs[0] gives it seat id 'a' and {folder}/benchreport.yaml $.runs[1] gives it 'b'"
    ]


def test_a_bad_date_names_the_manifest_and_entry_and_spares_the_others(folder):
    """Item 18: `date: 2026-02-30` refused every file as 'the vllm importer failed'."""
    (folder / "benchreport.yaml").write_text(
        "runs:\n  - {files: first.json, seat: {id: a, model: m}, date: 2026-02-30}\n"
        "  - {files: second.json, seat: {id: b, model: m}, date: 2026-09-10}\n"
    )
    result = load([folder])
    got = refusals(result)
    assert got["benchreport.yaml"] == [
        '$.runs[0].date: expected an ISO date YYYY-MM-DD or an RFC 3339 date-time such as "2026-09-10T08:00:00Z", got "2026-02-30" (entry ignored)'
    ]
    assert got["first.json"] == [
        f"$: expected a manifest that says clearly which seat, pass and date this file measured; "
        f"{folder}/benchreport.yaml $.runs[0] was refused ($.runs[0].date: expected an ISO date YYYY-MM-DD or an "
        f'RFC 3339 date-time such as "2026-09-10T08:00:00Z", got "2026-02-30")'
    ]
    assert [(lr.run.seat.id, lr.run.date) for lr in result.runs] == [("b", "2026-09-10")]
    assert "importer failed" not in str(got)


@pytest.mark.parametrize(
    "seat, expected",
    [
        ("{id: a, model: m, settings: {1: x}}", "$.runs[0].seat.settings: expected string keys, got the key 1"),
        ("{id: a, model: m, placement: {null: 1}}", "$.runs[0].seat.placement: expected string keys, got the key null"),
        (
            "{id: a, model: m, settings: {a: 1, a: 2}}",
            "$.runs[0].seat.settings.a: expected each field once, got it more than once (line 2)",
        ),
        (
            "{id: a, model: m, placement: {gpu_memory_bytes: .nan}}",
            "$.runs[0].seat.placement.gpu_memory_bytes: expected a number > 0.0, got NaN",
        ),
        ("{id: a, model: m, settings: {a: .inf}}", "$.runs[0].seat.settings.a: expected a finite number"),
        ("{id: a, model: m, settings: {a: !!set {x}}}", "$.runs[0].seat.settings.a: expected a JSON value, got set"),
    ],
)
def test_yaml_values_json_cannot_hold_are_refused_by_path(folder, seat, expected):
    (folder / "benchreport.yaml").write_text(f"runs:\n  - {{files: '*.json', seat: {seat}}}\n")
    assert refusals(load([folder]))["benchreport.yaml"] == [expected + " (entry ignored)"]


def test_settings_aliases_do_not_expand_the_work(folder):
    """Aliases nested 9 deep stand for 10^10 values; the settings walk stops at its bounds."""
    lines = ["  a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"  a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
    (folder / "benchreport.yaml").write_text(
        "defs:\n" + "\n".join(lines) + "\nruns:\n  - {files: '*.json', seat: {id: a, model: m, settings: {x: *a9}}}\n"
    )
    t0 = time.monotonic()
    got = refusals(load([folder]))["benchreport.yaml"]
    assert time.monotonic() - t0 < 10
    assert (
        "$.runs[0].seat.settings.x[0][0][0][0][0][0]: expected settings nested at most 6 levels (entry ignored)" in got
    )


def test_every_field_at_once_is_accepted_as_json_and_yaml(capsys):
    """benchmarks/bench_manifest.py's manifest (each entry uses every field) parses with no refusal."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import bench_manifest

    out = bench_manifest.main(["--entries", "20", "--repeat", "1"])  # asserts no refusal, 20 entries
    assert set(out) == {"benchreport.json", "benchreport.yaml", "benchreport.json checks", "benchreport.yaml checks"}
