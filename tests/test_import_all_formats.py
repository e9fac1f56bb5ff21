"""One folder holding every harness format as the tools wrote it: loads without a refusal, and a
report builds from it without --skip-bad.

The harnesses that name no model in their files (SGLang without an SGLang server's
`server_info`, MLPerf LoadGen, trtllm-bench records without the text report) get it from a
manifest, as a user would give it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from benchreport.load import load
from harness_oracle import HARNESS

#: first-capture folders and the six of issue 12 item 2 (the later AIPerf/vLLM/GenAI-Perf captures
#: join when their layouts are read: issue 12 item 1)
FOLDERS = (
    "vllm",
    "vllm-sweep",
    "guidellm",
    "guidellm-reasoning",
    "aiperf",
    "lmeval",
    "sglang",
    "trtllm",
    "inference-perf",
    "genai-bench",
    "llmperf",
    "mlperf-loadgen",
)
HARNESSES = {
    "vllm bench serve",
    "guidellm",
    "aiperf",
    "lm-evaluation-harness",
    "sglang bench_serving",
    "trtllm-bench",
    "inference-perf",
    "genai-bench",
    "llmperf",
    "mlperf loadgen",
}
MANIFEST = """version: 1
runs:
  - files: ["sglang/**", "mlperf-loadgen/**", "trtllm/bench-77d7fe1/**"]
    seat: {id: tiny-gpt2-s1, model: tiny-gpt2-s1}
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("all") / "runs"
    for name in FOLDERS:
        shutil.copytree(HARNESS / name, root / name)
    (root / "benchreport.yaml").write_text(MANIFEST)
    return root


def test_every_format_loads_without_a_refusal(folder):
    result = load([folder])
    assert not result.refused, [str(r) for r in result.refused]
    assert {lr.run.harness.name for lr in result.runs} == HARNESSES
    assert len({lr.run.run_id for lr in result.runs}) == len(result.runs)
    loaded = {lr.source_file for lr in result.runs}
    assert not loaded & {s.path for s in result.skipped}


@pytest.mark.slow
def test_report_builds_from_one_folder_of_every_format(folder, tmp_path):
    out = tmp_path / "report"
    proc = subprocess.run(
        [sys.executable, "-m", "benchreport", "build", str(folder), "--out", str(out), "--quiet"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    html = (out / "report.html").read_text(encoding="utf-8")
    for name in ("sglang", "trtllm-bench", "inference-perf", "genai-bench", "llmperf", "mlperf loadgen"):
        assert name in html.lower(), name
    codes = {f["code"] for f in json.loads((out / "flags.json").read_text())}
    assert {"fault.recorded", "requests.failed", "trap.prefix_cache", "import.assumed"} <= codes
