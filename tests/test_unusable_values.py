"""Values a harness file holds that cannot be used are counted and said by the harness's own JSON
path, never silently missing (issue 40): NaN, Infinity and text where a time or count belongs, a
negative count, a per-request list shorter than its siblings. Checked through the command line on
a real vLLM capture, and for no false alarm on every fixture, the example and the corpus."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchreport.load import load

ROOT = Path(__file__).resolve().parents[1]
VLLM = (
    ROOT
    / "tests"
    / "fixtures"
    / "harness"
    / "vllm"
    / "pass1"
    / "vllm-infqps-concurrency4-tiny-gpt2-s1-20261129-235733.json"
)


def _set(path, value):
    def change(d):
        *head, last = path
        for k in head:
            d = d[k]
        d[last] = value

    return change


CASES = {
    "nan": (_set(("ttfts", 3), float("nan")), "1 value(s) of $.ttfts[i] cannot be used (NaN: $.ttfts[3])"),
    "infinity": (_set(("ttfts", 3), float("inf")), "(Infinity: $.ttfts[3])"),
    "text": (_set(("ttfts", 3), "abc"), "(the text 'abc': $.ttfts[3])"),
    "four": (_set(("max_concurrency",), "four"), "$.max_concurrency cannot be used (the text 'four'"),
    "negative": (_set(("completed",), -3), "$.completed cannot be used (negative: $.completed)"),
    "short": (
        lambda d: d.__setitem__("ttfts", d["ttfts"][:-2]),
        "per-request lists of $ differ in length (ttfts 10 against 12",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_unusable_value_is_said_with_its_path(tmp_path, case):
    change, words = CASES[case]
    doc = json.loads(VLLM.read_text())
    change(doc)
    (tmp_path / "run.json").write_text(json.dumps(doc))  # Python writes NaN and Infinity as vLLM's json.dump does
    proc = subprocess.run(
        [sys.executable, "-m", "benchreport", "flags", str(tmp_path), "--json", "--quiet"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assumed = [f["message"] for f in json.loads(proc.stdout) if f["code"] == "import.assumed"]
    assert any(words in m for m in assumed), assumed


@pytest.mark.parametrize("folder", ["tests/fixtures", "tests/wild", "data/example"])
def test_no_false_alarm_on_real_files(folder):
    said = [
        (r.run.run_id, a)
        for r in load([str(ROOT / folder)]).runs
        for a in r.assumptions
        if "cannot be used" in a or "differ in length" in a
    ]
    assert not said, said[:5]
