"""One cell, one condition (issue 25): the load a run describes is part of its cell's key; a pass is
one repetition of one condition; two runs are never one pass; nothing is pooled or dropped."""

from __future__ import annotations

import json

import pytest

from benchreport import conditions
from benchreport.load import load as load_paths
from benchreport.pipeline import Options
from benchreport.pipeline import analyse_paths
from benchreport.tables import build_tables

from runs import make_run, write_run

CHAT = {
    "endpoint": "/v1/chat/completions",
    "streaming": True,
    "prompt_tokens": {"mean": 256, "stdev": 64},
    "output_tokens": {"mean": 64, "stdev": 16},
    "requests": 48,
    "seed": 1,
}


def _requests(n, ttft, *, workload="decode", concurrency=4):
    return [
        {
            "workload": workload,
            "concurrency": concurrency,
            "prompt_tokens": 250,
            "output_tokens": 60,
            "ttft_ms": ttft + (i % 5),
            "e2e_latency_ms": 400 + ttft + i,
            "itl_ms": 5.0,
            "finish_reason": "stop",
            "start_ms": 100.0 * i,
        }
        for i in range(n)
    ]


def _run(rid, pass_, load, ttft, **extra):
    run = make_run(
        run_id=rid,
        **{"pass": pass_},
        harness={"name": "guidellm", "version": "0.8.1"},
        measurements=None,
        requests=_requests(24, ttft),
        **extra,
    )
    run.pop("measurements")
    if load is not None:
        run["load"] = load
    return run


# --- the fingerprint and the words ------------------------------------------------------------


def test_fingerprint_leaves_out_seeds_and_sample_size_only():
    a = dict(CHAT)
    assert conditions.fingerprint(a) == conditions.fingerprint(
        {**a, "seed": 99, "requests": 24, "duration_s": 60, "concurrency": 8}
    )
    assert conditions.fingerprint(a) != conditions.fingerprint({**a, "endpoint": "/v1/completions"})
    assert conditions.fingerprint(a) != conditions.fingerprint({**a, "prompt_tokens": {"mean": 1900}})
    assert conditions.fingerprint(a) != conditions.fingerprint({**a, "fixed_output": True})
    assert conditions.fingerprint(None) == conditions.fingerprint({}) == conditions.fingerprint({"seed": 3}) == ""
    # the same endpoint as another harness spells it, a float written with noise: one condition
    assert conditions.fingerprint({**a, "endpoint": "chat"}) == conditions.fingerprint(a)
    assert conditions.fingerprint({**a, "rate": 2.0000000001}) == conditions.fingerprint({**a, "rate": 2})


def test_words_read_like_the_issue():
    assert conditions.words(CHAT) == "chat, 256±64 → 64±16 tok, streaming"
    assert (
        conditions.words(
            {
                "endpoint": "completions",
                "prompt_tokens": {"mean": 48, "min": 24, "max": 72},
                "output_tokens": {"mean": 32},
                "fixed_output": True,
                "dataset": "random",
            }
        )
        == "completions, 48 (24-72) → 32 tok fixed, random"
    )
    assert conditions.words({"arrival": "poisson", "rate": 2, "endpoint": "chat"}) == "chat, poisson 2 req/s"
    assert conditions.words({}) == ""


def test_differences_name_the_fields():
    d = conditions.differences(CHAT, {**CHAT, "endpoint": "completions", "prompt_tokens": {"mean": 1900}})
    assert set(d) == {"endpoint", "prompt_tokens"}
    words = conditions.difference_words(d)
    assert "endpoint chat vs completions" in words and "prompt length 256±64 vs 1,900" in words


# --- the native format ------------------------------------------------------------------------


def test_load_is_validated_with_its_json_path(tmp_path):
    bad = _run("r1", 1, {**CHAT, "prompt_tokens": {"mean": 10, "min": 20, "max": 30}}, 20)
    write_run(tmp_path, "bad.json", bad)
    res = load_paths([tmp_path])
    assert [(r.json_path, r.message) for r in res.refused] == [
        ("$.load.prompt_tokens.mean", "expected a mean between min and max, got 10")
    ]
    write_run(tmp_path, "bad.json", _run("r1", 1, {**CHAT, "sampling": {"temperature": {"x": 1}}}, 20))
    assert [r.json_path for r in load_paths([tmp_path]).refused] == ["$.load.sampling.temperature"]
    run = _run("r1", 1, {**CHAT, "max_tokens": 64}, 20)
    run["harness"]["max_tokens"] = 128
    write_run(tmp_path, "bad.json", run)
    assert [r.message for r in load_paths([tmp_path]).refused] == [
        "expected the answer cap of $.harness.max_tokens (128), got 64"
    ]


def test_runs_table_holds_the_load_its_id_and_words(tmp_path):
    write_run(tmp_path, "a.json", _run("r1", 1, CHAT, 20))
    runs = build_tables(load_paths([tmp_path])).runs
    assert runs["load_id"].iloc[0] == conditions.fingerprint(CHAT)
    assert runs["load_label"].iloc[0] == "chat, 256±64 → 64±16 tok, streaming"
    assert json.loads(runs["load"].iloc[0])["seed"] == 1  # stated whole, seed included


# --- cells and passes --------------------------------------------------------------------------


def _analyse(folder):
    return analyse_paths([str(folder)], Options(n_boot=200))


def test_runs_of_different_loads_are_different_cells(tmp_path):
    completions = {**CHAT, "endpoint": "/v1/completions", "requests": 24}
    for i in (1, 2, 3):
        write_run(tmp_path, f"chat-{i}.json", _run(f"chat-{i}", i, CHAT, 20 + i))
    write_run(tmp_path, "completions.json", _run("completions", 1, completions, 80))
    a = _analyse(tmp_path)
    ttft = a.cells[(a.cells["metric"] == "ttft_ms") & (a.cells["statistic"] == "mean")]
    assert sorted(ttft["n_passes"].tolist()) == [1, 3]  # never four passes of one cell
    assert set(ttft["load"]) == {"chat, 256±64 → 64±16 tok, streaming", "completions, 256±64 → 64±16 tok, streaming"}
    per_cell = a.passes.groupby("load_id")["run_id"].unique()
    assert all(len({r.split("-")[0] for r in ids}) == 1 for ids in per_cell)


def test_same_load_other_seed_or_count_is_another_pass(tmp_path):
    write_run(tmp_path, "a.json", _run("a", 1, CHAT, 20))
    write_run(tmp_path, "b.json", _run("b", 2, {**CHAT, "seed": 7, "requests": 96}, 21))
    a = _analyse(tmp_path)
    assert set(a.cells.loc[a.cells["metric"] == "ttft_ms", "n_passes"]) == {2}


def test_two_runs_claiming_one_pass_are_two_passes_never_one_dropped(tmp_path):
    write_run(tmp_path, "a.json", _run("a", 1, CHAT, 20))
    write_run(tmp_path, "b.json", _run("b", 1, CHAT, 30))
    res = load_paths([tmp_path])
    assert not res.refused
    passes = {lr.run.run_id: (lr.run.pass_, lr.assumptions) for lr in res.runs}
    assert passes["a"] == (1, ())
    assert passes["b"][0] == 2 and "claimed also by" in passes["b"][1][0] and "a.json" in passes["b"][1][0]
    a = _analyse(tmp_path)
    assert set(a.cells.loc[a.cells["metric"] == "ttft_ms", "n_passes"]) == {2}
    assert "import.assumed" in set(a.flags["code"])


def test_the_same_run_twice_is_still_refused(tmp_path):
    write_run(tmp_path, "a.json", _run("a", 1, CHAT, 20))
    write_run(tmp_path, "copy.json", _run("a", 1, CHAT, 20))
    res = load_paths([tmp_path])
    assert [r.json_path for r in res.refused] == ["$.run_id"]


def test_a_label_over_several_loads_is_flagged_not_pooled(tmp_path):
    short, long_ = {**CHAT, "prompt_tokens": {"mean": 256}}, {**CHAT, "prompt_tokens": {"mean": 1900}}
    for i, load in ((1, short), (2, long_)):
        run = _run(f"r{i}", 1, load, 20 * i)
        run["harness"]["probe"] = "random-4-streams"
        write_run(tmp_path, f"r{i}.json", run)
    a = _analyse(tmp_path)
    assert set(a.cells.loc[a.cells["metric"] == "ttft_ms", "n_passes"]) == {1}
    flag = a.flags[a.flags["code"] == "sample.mixed_conditions"]
    assert len(flag) == 1
    msg = flag["message"].iloc[0]
    assert "random-4-streams" in msg and "256" in msg and "1,900" in msg and "prompt length" in msg
    # no stated label: separate cells, and nothing to flag
    for i, load in ((1, short), (2, long_)):
        write_run(tmp_path, f"r{i}.json", _run(f"r{i}", 1, load, 20 * i))
    assert "sample.mixed_conditions" not in set(_analyse(tmp_path).flags["code"])


def test_figures_at_two_context_lengths_are_two_cells(tmp_path):
    run = make_run()
    run["measurements"] = [
        {
            "workload": "prefill",
            "metric": "prefill_tok_s",
            "value": 7412,
            "unit": "tok/s",
            "context_tokens": 31000,
            "fresh_prompt": True,
        },
        {"workload": "prefill", "metric": "prefill_tok_s", "value": 9100, "unit": "tok/s", "fresh_prompt": True},
    ]
    write_run(tmp_path, "r.json", run)
    a = _analyse(tmp_path)
    pre = a.cells[a.cells["metric"] == "prefill_tok_s"]
    assert sorted(pre["estimate"].tolist()) == [7412, 9100]
    assert set(pre["workload"]) == {"prefill", "prefill:31,000-token context"}


@pytest.mark.parametrize("values", [(7412, 7412), (7412, 8000)])
def test_a_figure_repeated_in_one_run_is_flagged_when_it_differs(tmp_path, values):
    run = make_run()
    run["measurements"] = [
        {"workload": "prefill", "metric": "prefill_tok_s", "value": v, "unit": "tok/s"} for v in values
    ]
    write_run(tmp_path, "r.json", run)
    a = _analyse(tmp_path)
    f = a.flags[a.flags["code"] == "sample.repeated_figure"]
    if values[0] == values[1]:
        assert f.empty
    else:
        assert len(f) == 1
        msg = f["message"].iloc[0]
        assert "7,412" in msg and "8,000" in msg and "r.json" in msg
