"""One cell, one condition (issue 25) on real harness folders that mix several runs, as users'
folders do (tests/fixtures/captures/, captured by its capture.sh). Each folder is copied to a
temporary folder and analysed through the CLI (`benchreport analyse FOLDER --out OUT`); the
tests read OUT/tables/cells.csv, passes.csv, provenance.csv and flags.json.

The figures are compared with the harness's own, copied into each folder's expected.json by
scripts/harness_expected.py (never computed by benchreport); which file is which load is read
from the harness's own files (GuideLLM's request format, vLLM's total_input_tokens).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from benchreport import cli

CAPTURES = Path(__file__).parent / "fixtures" / "captures"

#: benchreport (metric, statistic) -> expected.json figure name
FIGURES = {
    ("ttft_ms", "mean"): "ttft_mean",
    ("ttft_ms", "p50"): "ttft_p50",
    ("itl_ms", "mean"): "itl_mean",
    ("itl_ms", "p50"): "itl_p50",
    ("output_tok_s", "mean"): "output_token_throughput",
}


class Analysed:
    def __init__(self, src: Path, out: Path):
        self.src = src
        self.cells = pd.read_csv(out / "tables" / "cells.csv", dtype={"load_id": str})
        self.passes = pd.read_csv(out / "tables" / "passes.csv", dtype={"load_id": str})
        self.provenance = pd.read_csv(out / "provenance.csv")
        self.flags = json.loads((out / "flags.json").read_text(encoding="utf-8"))
        self.expected = json.loads((src / "expected.json").read_text(encoding="utf-8"))

    def cell(self, metric="ttft_ms", statistic="mean") -> pd.DataFrame:
        return self.cells[(self.cells["metric"] == metric) & (self.cells["statistic"] == statistic)]

    def pass_rows(self, metric="ttft_ms", statistic="mean") -> pd.DataFrame:
        return self.passes[(self.passes["metric"] == metric) & (self.passes["statistic"] == statistic)]

    def run_of(self, rel: str) -> str:
        """The run id benchreport gave the harness file at `rel` (from provenance.csv)."""
        rows = self.provenance[
            (self.provenance["status"] == "read") & self.provenance["path"].map(lambda p: Path(p) == self.src / rel)
        ]
        assert len(rows) == 1, (rel, self.provenance[["status", "path"]].to_string())
        return rows["run_id"].iloc[0]

    def codes(self) -> set[str]:
        return {f["code"] for f in self.flags}


def _analyse(tmp_path_factory, name: str) -> Analysed:
    base = tmp_path_factory.mktemp(name)
    src = base / name
    shutil.copytree(CAPTURES / name, src)
    out = base / "out"
    assert cli.main(["analyse", str(src), "--out", str(out), "--quiet"]) == 0
    return Analysed(src, out)


@pytest.fixture(scope="module")
def guidellm(tmp_path_factory):
    return _analyse(tmp_path_factory, "guidellm-mixed")


@pytest.fixture(scope="module")
def vllm_two(tmp_path_factory):
    return _analyse(tmp_path_factory, "vllm-two-loads")


@pytest.fixture(scope="module")
def vllm_rep(tmp_path_factory):
    return _analyse(tmp_path_factory, "vllm-repeated")


@pytest.fixture(scope="module")
def aiperf(tmp_path_factory):
    return _analyse(tmp_path_factory, "aiperf-trials")


def _harness_doc(a: Analysed, rel: str):
    return json.loads((a.src / rel).read_text(encoding="utf-8"))


def _assert_pass_figures(a: Analysed, result: dict) -> None:
    """Every figure the harness wrote for this file is the value of its run's pass."""
    run_id = a.run_of(result["file"])
    checked = 0
    for (metric, stat), fig in FIGURES.items():
        want = result["figures"][fig]["value"]
        rows = a.pass_rows(metric, stat)
        rows = rows[rows["run_id"] == run_id]
        assert len(rows) == 1, (result["file"], metric, stat)
        assert rows["value"].iloc[0] == pytest.approx(want, rel=1e-9), (result["file"], metric, stat)
        assert rows["reported"].iloc[0] == pytest.approx(want, rel=1e-9), (result["file"], metric, stat)
        checked += 1
    assert checked == len(FIGURES)


# --- GuideLLM 0.8.1: a chat run and a completions run, same token targets ----------------------


def test_guidellm_chat_and_completions_are_two_cells_of_one_pass(guidellm):
    formats = {}
    for name in ("benchmarks-chat.json", "benchmarks-completions.json"):
        fmt = _harness_doc(guidellm, name)["config"]["spec"]["backend"]["request_format"]
        formats[guidellm.run_of(name)] = fmt
    assert sorted(formats.values()) == ["/v1/chat/completions", "/v1/completions"]
    ttft = guidellm.cell()
    assert len(ttft) == 2 and ttft["load_id"].nunique() == 2
    assert ttft["n_passes"].tolist() == [1, 1]
    assert ttft["concurrency"].tolist() == [2, 2]
    # one cell per run, and the cell's endpoint is that run's request format
    rows = guidellm.pass_rows()
    for run_id, fmt in formats.items():
        load_id = rows.loc[rows["run_id"] == run_id, "load_id"].iloc[0]
        words = ttft.loc[ttft["load_id"] == load_id, "load"].iloc[0]
        assert words.split(",")[0] == ("chat" if "chat" in fmt else "completions"), words
    # the rest of the condition reads the same: only the endpoint differs
    assert len({w.split(",", 1)[1] for w in ttft["load"]}) == 1
    # no probe was stated, so nothing claims they are one condition
    assert "sample.mixed_conditions" not in guidellm.codes()


@pytest.mark.parametrize("which", ["benchmarks-chat.json", "benchmarks-completions.json"])
def test_guidellm_figures_are_the_harness_figures(guidellm, which):
    (result,) = [r for r in guidellm.expected["results"] if r["file"] == which]
    assert result["figures"]["request_count"]["value"] == 12
    _assert_pass_figures(guidellm, result)
    run_id = guidellm.run_of(which)
    load_id = guidellm.pass_rows().set_index("run_id").loc[run_id, "load_id"]
    cell = guidellm.cell()
    cell = cell[cell["load_id"] == load_id]
    # a cell of one pass shows the harness's figure as its estimate
    assert cell["estimate"].iloc[0] == pytest.approx(result["figures"]["ttft_mean"]["value"], rel=1e-9)
    assert cell["n_requests"].iloc[0] == 12


# --- vLLM benchmark_serving.py 0.7.3 ----------------------------------------------------------


def _vllm_by_input(a: Analysed) -> dict[int, str]:
    """total_input_tokens (vLLM's own) -> run id, for each result file."""
    out = {}
    for r in a.expected["results"]:
        out[_harness_doc(a, r["file"])["total_input_tokens"]] = a.run_of(r["file"])
    return out


def test_vllm_64_and_512_token_prompts_are_two_cells(vllm_two):
    by_input = _vllm_by_input(vllm_two)
    assert sorted(by_input) == [361, 3668]  # vLLM's totals for 12 prompts asked at 64 and 512 tokens
    rows = vllm_two.pass_rows()
    loads = {n: rows.loc[rows["run_id"] == rid, "load_id"].iloc[0] for n, rid in by_input.items()}
    assert loads[361] != loads[3668]
    ttft = vllm_two.cell()
    assert len(ttft) == 2 and ttft["n_passes"].tolist() == [1, 1]
    # the prompt length each cell names is the mean of the lengths vLLM says it sent
    for n, rid in by_input.items():
        (result,) = [r for r in vllm_two.expected["results"] if vllm_two.run_of(r["file"]) == rid]
        lens = _harness_doc(vllm_two, result["file"])["input_lens"]
        words = ttft.loc[ttft["load_id"] == loads[n], "load"].iloc[0]
        assert words.startswith("completions, ") and f"{sum(lens) / len(lens):.3g}" in words, words
    assert "sample.mixed_conditions" not in vllm_two.codes()  # no probe stated over the two


def test_vllm_two_loads_figures_are_the_harness_figures(vllm_two):
    """Whatever the grouping, each run's figures are vLLM's own."""
    assert len(vllm_two.expected["results"]) == 2
    for result in vllm_two.expected["results"]:
        assert result["figures"]["request_count"]["value"] == 12
        _assert_pass_figures(vllm_two, result)


def test_vllm_one_load_three_times_is_three_passes_of_one_cell(vllm_rep):
    results = vllm_rep.expected["results"]
    assert len(results) == 3
    docs = [_harness_doc(vllm_rep, r["file"]) for r in results]
    assert len({json.dumps(d["input_lens"]) for d in docs}) == 1  # the same prompts each time
    ttft = vllm_rep.cell()
    assert len(ttft) == 1 and ttft["n_passes"].iloc[0] == 3
    rows = vllm_rep.pass_rows().sort_values("pass")
    assert rows["pass"].tolist() == [1, 2, 3]
    # passes numbered in the order vLLM ran them (its file dates), each with vLLM's own figure
    by_date = sorted(results, key=lambda r: _harness_doc(vllm_rep, r["file"])["date"])
    assert rows["run_id"].tolist() == [vllm_rep.run_of(r["file"]) for r in by_date]
    for result in results:
        _assert_pass_figures(vllm_rep, result)
    est = ttft["estimate"].iloc[0]
    figs = [r["figures"]["ttft_mean"]["value"] for r in results]
    assert min(figs) <= est <= max(figs)


# --- AIPerf 0.13: --num-profile-runs 3 ---------------------------------------------------------

TRIALS = [f"profile_runs/run_000{i}/profile_export_aiperf.json" for i in (1, 2, 3)]


def test_aiperf_three_trials_are_three_passes_and_the_aggregate_is_not_a_fourth(aiperf):
    ttft = aiperf.cell()
    assert len(ttft) == 1 and ttft["n_passes"].iloc[0] == 3
    rows = aiperf.pass_rows()
    assert sorted(rows["run_id"]) == sorted(aiperf.run_of(t) for t in TRIALS)
    assert sorted(rows["pass"]) == [1, 2, 3]
    prov = aiperf.provenance
    agg = prov[prov["path"].str.endswith("aggregate/profile_export_aiperf_aggregate.json")]
    assert agg["status"].tolist() == ["skipped"] and "aggregate" in agg["reason"].iloc[0]
    # nor are the first trial's per-phase copies (profiling, warm-up) runs of their own
    runs_read = prov[(prov["status"] == "read") & prov["run_id"].notna()]  # the rest: files read with a run
    assert set(runs_read["run_id"]) == set(rows["run_id"])
    assert len(set(runs_read["path"].map(lambda p: str(Path(p).parent)))) == 3


def test_aiperf_trial_figures_are_the_harness_figures(aiperf):
    trials = {r["file"]: r for r in aiperf.expected["results"] if r["phase"] == "profiling"}
    assert sorted(trials) == TRIALS
    for result in trials.values():
        assert result["figures"]["request_count"]["value"] == 10
        _assert_pass_figures(aiperf, result)
    # the warm-up phase's figure is no pass's value
    (warm,) = [r for r in aiperf.expected["results"] if r["phase"] == "warmup"]
    values = aiperf.pass_rows("ttft_ms", "p50")["value"]
    assert not (values - warm["figures"]["ttft_p50"]["value"]).abs().lt(1e-9).any()
    # AIPerf's aggregate is the plain mean of these same three trials' figures
    (agg,) = aiperf.expected["aggregates"]
    assert sorted(values) == pytest.approx(sorted(trials[t]["figures"]["ttft_p50"]["value"] for t in TRIALS), rel=1e-9)
    assert agg["figures"]["ttft_p50_across_trials_mean"]["value"] == pytest.approx(values.mean(), rel=1e-9)


def test_vllm_same_load_with_another_seed_is_still_one_cell(tmp_path):
    """vLLM writes no target length, so the load names the lengths it sent; another seed draws
    other lengths from the same range (here: re-drawn within each file's min and max), which must
    stay passes of one cell, while the 64/512 runs above stay two."""
    import numpy as np

    src = tmp_path / "vllm-seeds"
    shutil.copytree(CAPTURES / "vllm-repeated", src)
    files = sorted(p for p in src.rglob("*.json") if p.name != "expected.json")
    for seed, path in enumerate(files[1:], start=1):
        doc = json.loads(path.read_text(encoding="utf-8"))
        lens = doc["input_lens"]
        drawn = np.random.default_rng(seed).integers(min(lens), max(lens) + 1, len(lens)).tolist()
        doc["input_lens"], doc["total_input_tokens"] = drawn, int(sum(drawn))
        path.write_text(json.dumps(doc), encoding="utf-8")
    means = [np.mean(json.loads(p.read_text(encoding="utf-8"))["input_lens"]) for p in files]
    assert len({round(m, 3) for m in means}) == len(files)  # the draws differ
    out = tmp_path / "out"
    assert cli.main(["analyse", str(src), "--out", str(out), "--quiet"]) == 0
    cells = pd.read_csv(out / "tables" / "cells.csv", dtype={"load_id": str})
    ttft = cells[(cells["metric"] == "ttft_ms") & (cells["statistic"] == "mean")]
    assert len(ttft) == 1 and ttft["n_passes"].iloc[0] == len(files)
