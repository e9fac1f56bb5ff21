"""The first-token traps on real harness captures (issue 26): a TTFT that times the reasoning
(`trap.reasoning_ttft`), a TTFT of a chunk that carried no token (`trap.first_chunk`), and the TTFT
of answers that were all reasoning (`trap.reasoning_field`); raised where the files show them and
nowhere else. The figures they quote are checked against the harness's own where it printed them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from benchreport import cli
from benchreport.load import load
from benchreport.tables import build_tables

FIXTURES = Path(__file__).parent / "fixtures"
HARNESS, CAPTURES = FIXTURES / "harness", FIXTURES / "captures"
EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "example"
NEW_CODES = ("trap.reasoning_ttft", "trap.first_chunk")


def flags_json(folder: Path, capsys, *extra: str) -> tuple[int, list[dict]]:
    """`benchreport flags FOLDER --json` as a user runs it: exit code and the flags printed."""
    capsys.readouterr()
    rc = cli.main(["flags", str(folder), "--json", "--quiet", *extra])
    return rc, json.loads(capsys.readouterr().out)


def of(flags: list[dict], code: str) -> list[dict]:
    return [f for f in flags if f["code"] == code]


def test_guidellm_chat_ttft_times_the_reasoning(tmp_path, capsys):
    """GuideLLM 0.8.1, chat and completions at 2 streams against a server that reasons on every
    second chat request: the chat run's TTFT is the first reasoning token, its answer came later
    (GuideLLM's own means: time_to_first_token_ms 32.93, time_to_first_output_token_ms 56.13 ms)."""
    src = tmp_path / "guidellm-mixed"
    shutil.copytree(CAPTURES / "guidellm-mixed", src)
    rc, flags = flags_json(src, capsys)
    assert rc == 0
    (f,) = of(flags, "trap.reasoning_ttft")
    assert f["severity"] == "warn" and f["seats"] == ["tiny-gpt2-s1"]
    (c,) = f["evidence"]["cells"]  # the chat run only: on completions both times are one
    doc = json.loads((src / "benchmarks-chat.json").read_text())
    m = doc["benchmarks"][0]["metrics"]
    assert c["load"].startswith("chat") and c["concurrency"] == 2 and c["harness"] == "guidellm"
    assert (c["reasoning_first"], c["requests"]) == (6, 12)
    assert c["ttft_mean_ms"] == pytest.approx(m["time_to_first_token_ms"]["successful"]["mean"])
    assert c["first_content_mean_ms"] == pytest.approx(m["time_to_first_output_token_ms"]["successful"]["mean"])
    assert c["ttft_p50_ms"] == pytest.approx(24.756, abs=1e-3)
    assert c["first_content_p50_ms"] == pytest.approx(61.628, abs=1e-3)
    assert f["evidence"]["thresholds"] == {"reasoning_ttft_ratio": 1.25}
    for words in (
        "time_to_first_token_ms",
        "time_to_first_output_token_ms",
        "6 of 12 requests got reasoning first",
        "24.8 ms against 61.6 ms",
    ):
        assert words in f["message"], words
    assert not of(flags, "trap.reasoning_field")  # every answer has content
    assert not of(flags, "trap.first_chunk")


def test_first_content_times_are_imported_from_guidellm_and_aiperf():
    t = build_tables(load([str(CAPTURES / "guidellm-mixed"), str(HARNESS / "aiperf" / "c4")], progress=False))
    r = t.requests.merge(t.runs[["run_id", "harness", "load_label"]], on="run_id")
    completions = r[r["load_label"].str.startswith("completions")]
    assert len(completions) == 12 and (completions["first_content_ms"] == completions["ttft_ms"]).all()
    aiperf = r[r["harness"] == "aiperf"]
    assert len(aiperf) == 16 and aiperf["first_content_ms"].notna().all()
    reasoned = aiperf["reasoning_tokens"].fillna(0) > 0
    assert reasoned.sum() == 8
    assert (aiperf.loc[reasoned, "first_content_ms"] > aiperf.loc[reasoned, "ttft_ms"]).all()
    assert (aiperf.loc[~reasoned, "first_content_ms"] == aiperf.loc[~reasoned, "ttft_ms"]).all()


def test_aiperf_ttft_times_the_reasoning(capsys):
    """AIPerf 0.13 at 1 and 4 streams: at 4 streams its own aggregate gives time_to_first_token
    93.65 ms (p50 78.04) and time_to_first_output_token 254.66 ms (p50 197.83)."""
    rc, flags = flags_json(HARNESS / "aiperf", capsys)
    (f,) = of(flags, "trap.reasoning_ttft")
    cells = {c["concurrency"]: c for c in f["evidence"]["cells"]}
    assert set(cells) == {1, 4}
    agg = json.loads((HARNESS / "aiperf" / "c4" / "profile_export_aiperf.json").read_text())
    c4 = cells[4]
    assert (c4["reasoning_first"], c4["requests"]) == (8, 16)
    assert c4["ttft_mean_ms"] == pytest.approx(agg["time_to_first_token"]["avg"])
    assert c4["ttft_p50_ms"] == pytest.approx(agg["time_to_first_token"]["p50"])
    assert c4["first_content_mean_ms"] == pytest.approx(agg["time_to_first_output_token"]["avg"])
    assert c4["first_content_p50_ms"] == pytest.approx(agg["time_to_first_output_token"]["p50"])
    assert (cells[1]["reasoning_first"], cells[1]["requests"]) == (18, 36)  # 3 trials of 12
    assert "AIPerf's time_to_first_token" in f["message"] and "time_to_first_output_token" in f["message"]


def test_answers_all_reasoning_say_their_ttft_is_in_the_ttft_figures(capsys):
    """GuideLLM against a server that answers only in the reasoning field: no answer token ever came
    (no time_to_first_output_token_ms), so it is the reasoning-field trap, whose TTFT it says."""
    rc, flags = flags_json(HARNESS / "guidellm-reasoning", capsys)
    (f,) = of(flags, "trap.reasoning_field")
    assert f["evidence"]["empty_content"] == 12 and f["evidence"]["with_ttft"] == 12
    assert f["evidence"]["ttft_p50_ms"] == pytest.approx(37.561, abs=1e-3)
    assert "37.6 ms" in f["message"] and "in the TTFT figures" in f["message"]
    assert not of(flags, "trap.reasoning_ttft")


def test_vllm_chat_ttft_times_the_role_only_first_chunk(capsys):
    """vLLM 0.7.3 `--backend openai-chat`: TTFT median 6.709 ms (1 stream) and 8.756 ms (4 streams) as
    printed, while the first chunk that carried a token came at TTFT + the first gap."""
    folder = CAPTURES / "vllm-chat"
    rc, flags = flags_json(folder, capsys)
    (f,) = of(flags, "trap.first_chunk")
    assert f["severity"] == "warn" and f["seats"] == ["tiny-gpt2-s1"]
    cells = {c["concurrency"]: c for c in f["evidence"]["cells"]}
    assert set(cells) == {1, 4}
    for conc, name in ((1, "concurrency1"), (4, "concurrency4")):
        doc = json.loads(next(folder.glob(f"*{name}*.json")).read_text())
        marked = [i for i, (g, n) in enumerate(zip(doc["itls"], doc["output_lens"])) if len(g) == n]
        assert len(marked) == 11  # one chunk more than tokens on 11 of 12 requests
        c = cells[conc]
        assert c["basis"] == "chunks" and (c["empty_first_chunk"], c["requests"]) == (11, 11)
        ttft = sorted(doc["ttfts"][i] * 1000 for i in marked)
        first = sorted((doc["ttfts"][i] + doc["itls"][i][0]) * 1000 for i in marked)
        assert c["ttft_p50_ms"] == pytest.approx(ttft[5]) and c["first_token_p50_ms"] == pytest.approx(first[5])
        assert c["ratio"] < 0.5
    assert cells[1]["ttft_p50_ms"] == pytest.approx(7.382, abs=1e-3)
    assert cells[1]["first_token_p50_ms"] == pytest.approx(31.212, abs=1e-3)
    assert "not to be quoted as TTFT" in f["message"] and "only the role" in f["message"]
    assert not of(flags, "trap.reasoning_ttft")  # vLLM's client times no first content token


@pytest.mark.parametrize(
    "folder",
    [
        HARNESS / "vllm",
        HARNESS / "vllm-bench-serve",
        HARNESS / "vllm-0.6",
        CAPTURES / "vllm-two-loads",
        CAPTURES / "vllm-repeated",
        HARNESS / "sglang",
        HARNESS / "aiperf-sweep",
        CAPTURES / "aiperf-trials",
        HARNESS / "llmperf",
        HARNESS / "genai-bench",
        HARNESS / "inference-perf",
        HARNESS / "trtllm",
    ],
    ids=lambda p: p.name,
)
def test_no_first_token_trap_on_clean_captures(folder, capsys):
    """Completions endpoints (one chunk a token) and servers without reasoning: neither trap."""
    rc, flags = flags_json(folder, capsys)
    assert not [f for f in flags if f["code"] in NEW_CODES]


@pytest.mark.skipif(not EXAMPLE.exists(), reason="example data not present")
def test_the_example_gains_no_warning(capsys):
    rc, flags = flags_json(EXAMPLE, capsys, "--fail-on", "warn")
    assert not [f for f in flags if f["code"] in NEW_CODES]


def test_a_generated_fleet_raises_neither(tmp_path, capsys):
    """benchmarks/generate.py's lognormal fleet: TTFT 20-200 ms against 5-25 ms per token, never a
    first chunk; no reasoning recorded."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "generate", Path(__file__).resolve().parents[1] / "benchmarks" / "generate.py"
    )
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    gen.generate(tmp_path / "fleet", seats=50, passes=2, requests=40)
    rc, flags = flags_json(tmp_path / "fleet", capsys)
    assert flags and not [f for f in flags if f["code"] in NEW_CODES]


def test_a_first_chunk_ttft_is_not_quoted_as_ttft():
    """vLLM's chat client times the role-only first chunk (TTFT p50 6.7 ms, first token 31 ms): the
    report's Table 1 and figures leave those TTFT cells out and say why; cells.csv keeps them."""
    from benchreport.load import load
    from benchreport.pipeline import Options, analyse
    from benchreport.report.model import sections
    from benchreport.report.model.sections.cellview import result_cells

    a = analyse(load([str(CAPTURES / "vllm-chat")], progress=False), Options(n_boot=100))
    assert (a.cells["metric"] == "ttft_ms").sum() > 0
    assert not (result_cells(a)["metric"] == "ttft_ms").any()
    t1 = sections.results_table(a)
    assert not [c for c in t1.data.columns if c.startswith("TTFT")]
    assert "time to first token of 2 cells is left out" in t1.note and "(Section 5)" in t1.note
    assert "trap.first_chunk" not in t1.note  # the reader's words: the section, not the flag's code
