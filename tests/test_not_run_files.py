"""Issue 31: a file that is not a run file is a skip, not a refusal.

A harness tree holds tokenizers, data sets and other tools' JSON beside the results. Those that
claim to be no run are skipped (one summary line, their reasons in refused.json); a file that
claims to be a run and breaks it is still refused; `--strict` refuses them all as before.
Through the command line (`cli.main`, in this process).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from benchreport.cli import main
from benchreport.load import load
from benchreport.load.errors import SHORT_CLAUSE, first_clause

EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "example" / "fleet-paper"
GOOD = EXAMPLE / "2026-09-10-qwen3.8-flash-next-tp2-pass1.json"
VLLM = next((Path(__file__).parent / "fixtures" / "harness" / "vllm" / "pass1").glob("vllm-*.json"))
NOT_RUNS = ["setup/dataset.jsonl", "setup/package.json", "setup/tokenizer.json", "setup/tokenizer_config.json"]


@pytest.fixture
def tree(tmp_path) -> Path:
    """A harness tree: one good native run, a tokenizer, its config, a data set, another tool's JSON."""
    root = tmp_path / "runs"
    (root / "setup").mkdir(parents=True)
    (root / "results").mkdir()
    shutil.copy(GOOD, root / "results" / GOOD.name)
    (root / "setup" / "tokenizer.json").write_text(
        json.dumps(
            {
                "version": "1.0",
                "truncation": None,
                "padding": None,
                "added_tokens": [],
                "model": {"type": "BPE", "vocab": {"hello": 0, "world": 1}, "merges": []},
            }
        )
    )
    (root / "setup" / "tokenizer_config.json").write_text(
        json.dumps(
            {"add_bos_token": True, "bos_token": "<s>", "model_max_length": 4096, "tokenizer_class": "LlamaTokenizer"}
        )
    )
    (root / "setup" / "dataset.jsonl").write_text(
        "".join(json.dumps({"prompt": f"q{i}", "completion": f"a{i}"}) + "\n" for i in range(5))
    )
    (root / "setup" / "package.json").write_text(json.dumps({"name": "harness-ui", "dependencies": {"x": "1"}}))
    return root


def cli(capsys, *args):
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_tree_with_files_that_are_not_runs_analyses_without_skip_bad(tree, tmp_path, capsys):
    code, _, err = cli(capsys, "analyse", tree, "--out", tmp_path / "out")
    assert code == 0, err
    refused = json.loads((tmp_path / "out" / "refused.json").read_text())
    assert refused["refused"] == []
    skipped = {str(Path(s["path"]).relative_to(tree)): s["reason"] for s in refused["skipped"]}
    assert sorted(skipped) == NOT_RUNS
    assert all(r.startswith("not a run file") for r in skipped.values())
    assert 'keys "add_bos_token"' in skipped["setup/tokenizer_config.json"]  # what it was, for the curious
    summary = [line for line in err.splitlines() if "not run files" in line]
    assert len(summary) == 1, err  # one line for all of them, not one each
    assert summary[0].startswith("skipped 4 file(s) that are not run files") and "refused.json" in summary[0]
    assert "tokenizer" not in err.replace(summary[0], "")
    assert "1 run(s) loaded, 0 file(s) refused, 4 skipped" in err
    runs = (tmp_path / "out" / "provenance.csv").read_text()
    assert runs.count("skipped,") == 4 and "not a run file" in runs  # the report's provenance has them


def test_strict_refuses_them_again(tree, tmp_path, capsys):
    code, _, err = cli(capsys, "analyse", tree, "--out", tmp_path / "out", "--strict")
    assert code == 1 and not (tmp_path / "out").exists()
    for name in NOT_RUNS:
        assert f"{tree / name}: $: expected a native run file" in err
    code, out, _ = cli(capsys, "validate", tree, "--strict")
    assert code == 1 and len(out.splitlines()) == 4
    code, out, _ = cli(capsys, "validate", tree)
    assert code == 0 and out == ""


def test_quiet_prints_one_short_line_per_refused_file(tree, tmp_path, capsys):
    (tree / "results" / "broken.jsonl").write_text('{"format": "benchreport.run/1"}\n{"nope\n{"x": 1\n')
    code, out, err = cli(capsys, "analyse", tree, "--out", tmp_path / "out", "--strict", "--quiet")
    assert code == 1 and out == ""
    lines = err.splitlines()
    assert len(lines) == 5, lines  # the four files that are not runs and broken.jsonl, once
    assert all("considered" not in line and len(line) < len(str(tree)) + 80 + SHORT_CLAUSE for line in lines)
    code, out, err = cli(capsys, "analyse", tree, "--out", tmp_path / "out2", "--quiet", "--skip-bad")
    assert code == 0 and err.splitlines() == [line for line in lines if "broken.jsonl" in line]


def test_a_broken_native_file_is_still_refused(tree, tmp_path, capsys):
    doc = json.loads(GOOD.read_text())
    doc["run_id"] = "other run"  # a space: not a run id
    (tree / "results" / "bad.json").write_text(json.dumps(doc))
    (tree / "results" / "cut.json").write_text(GOOD.read_text()[:200])  # a native run cut short
    code, _, err = cli(capsys, "analyse", tree, "--out", tmp_path / "out")
    assert code == 1
    assert (
        f"{tree}/results/bad.json: $.run_id: " in err and f"{tree}/results/cut.json: $: expected complete JSON" in err
    )


def test_a_truncated_harness_result_is_still_refused(tree, tmp_path, capsys):
    text = VLLM.read_text()
    (tree / "results" / "vllm-cut.json").write_text(text[:300])  # before any figure: opens as vLLM's
    (tree / "results" / "vllm-later.json").write_text(text[: len(text) // 2])  # holds vLLM's keys
    (tree / "results" / "profile_export_aiperf.json").write_text('{"x": ')  # AIPerf's name
    half = json.loads(text)
    del half["model_id"]  # vLLM's keys, not its layout: half recognised
    (tree / "results" / "vllm-half.json").write_text(json.dumps(half))
    code, out, _ = cli(capsys, "validate", tree)
    assert code == 1 and len(out.splitlines()) == 4
    result = load([tree])
    refused = {Path(r.path).name: r.message for r in result.refused}
    assert sorted(refused) == ["profile_export_aiperf.json", "vllm-cut.json", "vllm-half.json", "vllm-later.json"]
    assert "refused, not skipped: it opens as vllm results do" in refused["vllm-cut.json"]
    assert 'it holds "' in refused["vllm-later.json"] and "a key of" in refused["vllm-later.json"]
    assert "its name is one aiperf gives its results" in refused["profile_export_aiperf.json"]
    assert "of no known kind" in refused["vllm-half.json"]


def test_a_file_cut_short_that_claims_nothing_is_skipped_with_its_reason(tree):
    (tree / "setup" / "tokenizer.json").write_text('{"version": "1.0", "model": {"vocab": {"a": 0, ')
    (tree / "setup" / "empty.json").write_text("")
    result = load([tree])
    (skip,) = [s for s in result.skipped if s.path.endswith("setup/tokenizer.json")]
    assert skip.not_a_run and "ends early" in skip.reason
    # an empty file says nothing: most often a result not yet written, so it is refused
    assert [Path(r.path).name for r in result.refused] == ["empty.json"]


def test_a_file_named_on_the_command_line_is_refused_when_it_is_not_a_run(tree, capsys):
    code, out, _ = cli(capsys, "validate", tree / "setup" / "tokenizer.json")
    assert code == 1 and "expected a native run file" in out


def test_a_path_that_does_not_exist_is_exit_2_even_with_skip_bad(tree, tmp_path, capsys):
    gone = tmp_path / "runz"
    for args in (
        ["analyse", tree, gone, "--skip-bad", "--out", tmp_path / "out"],
        ["validate", tree, gone, "--skip-bad"],
        ["flags", tree, gone, "--skip-bad"],
        ["ingest", tree, gone, "--skip-bad", "--out", tmp_path / "out"],
        ["ingest", tree, gone, "--skip-bad", "--store", tmp_path / "store"],
        ["build", tree, gone, "--skip-bad", "--out", tmp_path / "out"],
    ):
        code, _, err = cli(capsys, *args)
        assert code == 2 and f"{gone}: no such file or folder" in err, (args, err)
    assert not (tmp_path / "out").exists() and not (tmp_path / "store").exists()


@pytest.mark.parametrize(
    "name,content,kind",
    [
        ("results.csv", "metric,value\nttft_ms,12\n", "a CSV file"),
        ("results.tsv", "metric\tvalue\nttft_ms\t12\n", "a TSV file"),
        ("results.json", "metric,value,unit\nttft_ms,12,ms\nitl_ms,3,ms\n", "a CSV file"),  # sniffed
    ],
)
def test_a_table_is_called_a_table_not_invalid_json(tmp_path, capsys, name, content, kind):
    path = tmp_path / name
    path.write_text(content)
    code, out, _ = cli(capsys, "validate", path)
    assert code == 1 and f"{path}: $: {kind}, not a run file: benchreport reads JSON run files" in out
    assert "invalid JSON" not in out and "expected valid JSON" not in out
    if name.endswith(".json"):  # in a folder: skipped, and said what it is
        (skip,) = load([tmp_path]).skipped
        assert skip.not_a_run and skip.reason.endswith(kind)


def test_the_run_store_skips_them_and_strict_reads_them_again(tree, tmp_path, capsys):
    store = tmp_path / "store"
    code, _, err = cli(capsys, "ingest", tree, "--store", store)
    assert code == 0 and "skipped 4 file(s) that are not run files" in err
    code, _, err = cli(capsys, "ingest", tree, "--store", store, "--strict")
    assert code == 1 and err.count("expected a native run file") == 4


def test_first_clause():
    assert first_clause("expected a finite number, got NaN (not valid JSON)") == "expected a finite number, got NaN"
    assert first_clause("line 7: expected x; the file's other 6 line(s) were read") == "line 7: expected x"
    assert first_clause("expected a (native (nested)) run; b") == "expected a run"
    assert len(first_clause("x" * 1000)) == SHORT_CLAUSE


def test_the_report_appendix_counts_them_as_one_kind(tree):
    from benchreport.pipeline import Options, analyse_paths
    from benchreport.report.model.sections.appendix import skipped_table

    rows = skipped_table(analyse_paths([tree], Options(n_boot=200))).data
    assert len(rows) == 1 and rows["Why skipped"].iloc[0].startswith("not a run file") and rows["Files"].iloc[0] == "4"
