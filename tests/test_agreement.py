"""Do the harnesses agree? (issue 46): the definitions table, tables/agreement.csv through the
command line, the common definition recomputed from request records, and harness.disagree."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchreport.cli import main
from benchreport.load.harness.definitions import definitions
from benchreport.stats.agreement import AGREEMENT_COLUMNS, ratio_interval

HERE = Path(__file__).parent
#: the figures agreement compares (independent of benchreport.stats.agreement.METRICS)
METRICS = ("ttft_ms", "itl_ms", "decode_tok_s_per_stream", "output_tok_s")
CAPTURES = HERE / "fixtures" / "captures" / "agreement"
LOAD = {
    "endpoint": "chat",
    "streaming": True,
    "prompt_tokens": {"mean": 64},
    "output_tokens": {"mean": 32},
    "fixed_output": True,
}


def _run(harness: str, requests: list[dict], *, seat="tiny-r1", date="2026-12-07", load=None) -> dict:
    return {
        "format": "benchreport.run/1",
        "run_id": f"{seat}-{harness.replace(' ', '_')}",
        "date": date,
        "seat": {"id": seat, "model": seat, "role": "candidate"},
        "harness": {"name": harness},
        "pass": 1,
        "warmup_excluded": True,
        "load": load or LOAD,
        "requests": requests,
    }


def _requests(rng, *, ttft, first_content=None, reasoning_chars=None, n=40, tokens=32, gap=5.0) -> list[dict]:
    """`n` requests at 1 stream: TTFT around `ttft` ms, the answer's first token around
    `first_content` ms (None: not recorded), then `tokens` - 1 gaps of about `gap` ms."""
    out = []
    for _ in range(n):
        t = float(ttft * rng.lognormal(0, 0.05))
        fc = None if first_content is None else float(first_content * rng.lognormal(0, 0.05))
        first = t if fc is None or first_content < ttft else t
        e2e = first + (tokens - 1) * gap * float(rng.lognormal(0, 0.03))
        r = {"workload": "decode", "concurrency": 1, "ttft_ms": round(t, 4), "e2e_latency_ms": round(e2e, 4)}
        r["output_tokens"] = tokens
        if fc is not None:
            r["first_content_ms"] = round(max(fc, t), 4)
        if reasoning_chars:
            r["reasoning_chars"] = reasoning_chars
        out.append(r)
    return out


def _analyse(tmp_path, runs: list[dict], *options: str) -> tuple[pd.DataFrame, list[dict]]:
    folder = tmp_path / "runs"
    folder.mkdir(parents=True)
    for i, r in enumerate(runs):
        (folder / f"run{i}.json").write_text(json.dumps(r), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["analyse", str(folder), "--out", str(out), "--quiet", *options]) == 0
    return pd.read_csv(out / "tables" / "agreement.csv"), json.loads((out / "flags.json").read_text())


#: every verdict a pair may get, and the flag each raises (docs/importers.md, "Do the harnesses agree?")
VERDICTS = {
    "agree": None,
    "explained": None,
    "explained by definition": None,
    "unexplained": "harness.disagree",
    "not tested, figures close": None,
    "not tested, figures differ": "harness.untested",
}


def _flagged_pairs(flags: list[dict], code: str) -> set:
    """(seat, concurrency, metric, harness_a, harness_b) of every pair a flag of `code` names."""
    return {
        (f["seats"][0], p["concurrency"], p["metric"], p["harness_a"], p["harness_b"])
        for f in flags
        if f["code"] == code
        for p in f["evidence"]["pairs"]
    }


def _throughput_run(harness: str, rng, value: float) -> dict:
    run = _run(harness, _requests(rng, ttft=20), seat="tiny-s1")
    run["measurements"] = [
        {"workload": "decode", "concurrency": 1, "metric": "output_tok_s", "value": value, "unit": "tok/s"}
    ]
    return run


def test_definitions_table_cites_every_harness_and_names_every_value():
    d = definitions()
    assert {"vllm bench serve", "sglang bench_serving", "guidellm", "aiperf", "genai-bench"} <= set(d.harnesses)
    for name, h in d.harnesses.items():
        assert h["source"] and any(ch.isdigit() for ch in h["source"]), name  # a file at a version
        for aspect in d.aspects:
            assert d.value(name, aspect, "chat") in d.aspects[aspect]["values"], (name, aspect)
    assert d.value("vllm bench serve", "ttft_stop", "chat") == "first_chunk"
    assert d.value("sglang bench_serving", "ttft_stop", "chat") == "first_content"
    assert d.value("aiperf", "output_tokens") == "client_tokenizer"


def test_docs_table_is_the_definitions_data():
    """docs/importers.md's definitions table says what definitions.json says, harness by harness."""
    text = (HERE.parent / "docs" / "importers.md").read_text(encoding="utf-8")
    text = text.split("## Do the harnesses agree?")[1].split("\n## ")[0]
    d = definitions()
    rows = {}
    for line in text.splitlines():
        if line.startswith("| "):
            rows[line.split(" | ")[0].lstrip("| ")] = line
    for name, h in d.harnesses.items():
        assert name in rows, name
        for aspect in d.aspects:
            assert f"`{d.value(name, aspect, 'chat')}`" in rows[name], (name, aspect)
        assert h["source"] in rows[name]


def test_ratio_interval_matches_the_delta_method_by_hand():
    # two intervals of 10% either way on the log scale at 95%: se = log(1.1) / z each
    z = 1.959963984540054
    r, lo, hi = ratio_interval((100.0, 100 / 1.1, 110.0), (120.0, 120 / 1.1, 132.0))
    se = math.sqrt(2) * math.log(1.1) / z
    assert r == pytest.approx(1.2)
    assert lo == pytest.approx(1.2 * math.exp(-z * se)) and hi == pytest.approx(1.2 * math.exp(z * se))
    assert math.isnan(ratio_interval((100.0, math.nan, math.nan), (120.0, 110.0, 130.0))[1])


def test_reasoning_ttft_definition_explains_the_gap_and_recomputation_closes_it(tmp_path):
    """GuideLLM stops TTFT at the first reasoning token, SGLang's chat client at the first answer
    token: 4x apart on reasoning answers. Recomputed as the answer's first token for both, they agree."""
    rng = np.random.default_rng(46)
    runs = [
        _run("guidellm", _requests(rng, ttft=20, first_content=80, reasoning_chars=120)),
        _run("sglang bench_serving", _requests(rng, ttft=80)),
    ]
    t, flags = _analyse(tmp_path, runs)
    assert list(t.columns) == AGREEMENT_COLUMNS
    row = t[t["metric"] == "ttft_ms"].iloc[0]
    assert (row.harness_a, row.harness_b) == ("guidellm", "sglang bench_serving")
    assert row.verdict == "differ" and row.ratio == pytest.approx(4, rel=0.1) and row.ratio_low > 1
    assert "what stops the TTFT clock" in row.differs_in and "first_content" in row.differs_in
    assert row.common == "TTFT from request sent to the answer's first token"
    assert row.common_verdict == "agree" and row.common_ratio_low <= 1 <= row.common_ratio_high
    assert row.explained == "explained"
    assert not [f for f in flags if f["code"] == "harness.disagree"]


def test_a_true_difference_is_flagged_unexplained(tmp_path):
    """GuideLLM and AIPerf stop TTFT at the same event; one of them twice as late is not a
    definition: recomputed from the records it stays, so harness.disagree is raised."""
    rng = np.random.default_rng(7)
    runs = [
        _run("guidellm", _requests(rng, ttft=20), seat="tiny-s1"),
        _run("aiperf", _requests(rng, ttft=40), seat="tiny-s1"),
    ]
    t, flags = _analyse(tmp_path, runs)
    row = t[t["metric"] == "ttft_ms"].iloc[0]
    assert row.verdict == "differ" and pd.isna(row.differs_in)
    assert row.common_verdict == "differ" and row.explained == "unexplained"
    hits = [f for f in flags if f["code"] == "harness.disagree"]
    assert len(hits) == 1 and hits[0]["severity"] == "warn" and hits[0]["seats"] == ["tiny-s1"]
    assert hits[0]["cell"]["metric"] == "ttft_ms"
    assert "aiperf" in hits[0]["message"] and "guidellm" in hits[0]["message"]
    pair = hits[0]["evidence"]["pairs"][0]
    assert pair["ratio"] == pytest.approx(row.ratio) and pair["common_ratio"] == pytest.approx(row.common_ratio)
    # the decode figures of the same runs agree: one flag only, on TTFT
    assert set(t.loc[t["metric"] != "ttft_ms", "explained"]) <= {"agree", "no interval"}


def test_pairs_of_other_loads_or_days_are_left_out_with_the_reason(tmp_path):
    rng = np.random.default_rng(3)
    long_prompt = dict(LOAD, prompt_tokens={"mean": 512})
    runs = [
        _run("guidellm", _requests(rng, ttft=20)),
        _run("aiperf", _requests(rng, ttft=20), load=long_prompt),
        _run("genai-bench", _requests(rng, ttft=20), date="2026-12-01"),
    ]
    t, _ = _analyse(tmp_path, runs)
    ttft = t[t["metric"] == "ttft_ms"].set_index(["harness_a", "harness_b"])
    assert ttft.loc[("aiperf", "guidellm"), "verdict"] == "left out"
    assert "prompt lengths differ (512 / 64 tokens)" in ttft.loc[("aiperf", "guidellm"), "left_out"]
    assert "different days (2026-12-01 / 2026-12-07)" in ttft.loc[("genai-bench", "guidellm"), "left_out"]


@pytest.mark.skipif(not any(CAPTURES.rglob("*.json")), reason="captures/agreement not captured")
def test_captures_every_difference_is_explained_or_flagged(tmp_path):
    """Five harnesses against one tiny server (tests/fixtures/captures/agreement): every pair that
    differs beyond its interval is explained by a named definition or raises harness.disagree."""
    out = tmp_path / "out"
    assert main(["analyse", str(CAPTURES), "--out", str(out), "--quiet"]) == 0
    t = pd.read_csv(out / "tables" / "agreement.csv")
    flags = json.loads((out / "flags.json").read_text())
    comparable = t[t["verdict"] != "left out"]
    assert len(set(comparable["harness_a"]) | set(comparable["harness_b"])) >= 5
    differ = comparable[comparable["verdict"] == "differ"]
    assert len(differ)
    assert set(differ["explained"]) <= {"explained", "explained by definition", "unexplained"}
    named = differ[differ["explained"].str.startswith("explained")]
    assert named["differs_in"].notna().all() or (named["common_verdict"] == "agree").all()
    flagged = {
        (f["seats"][0], f["cell"]["concurrency"], f["cell"]["metric"]) for f in flags if f["code"] == "harness.disagree"
    }
    unexplained = differ[differ["explained"] == "unexplained"]
    assert {(r.seat, int(r.concurrency), r.metric) for r in unexplained.itertuples()} == flagged


def test_one_pass_throughput_apart_is_flagged_untested_and_close_is_said_close(tmp_path):
    """One pass each: a harness's output throughput has no interval (its wall clock is in no
    request record). 100 and 105 tok/s are within cv_limit (10%): "not tested, figures close", no
    flag; 140 is 1.33x and 1.4x the others: "not tested, figures differ", harness.untested names
    both pairs. With --cv-limit 0.5 all three are close and nothing is flagged."""
    rng = np.random.default_rng(11)
    runs = [
        _throughput_run("guidellm", rng, 100.0),
        _throughput_run("aiperf", rng, 105.0),
        _throughput_run("genai-bench", rng, 140.0),
    ]
    t, flags = _analyse(tmp_path, runs)
    tput = t[t["metric"] == "output_tok_s"].set_index(["harness_a", "harness_b"])
    assert len(tput) == 3 and set(tput["verdict"]) == {"no interval"}
    assert tput.loc[("aiperf", "guidellm"), "explained"] == "not tested, figures close"
    apart = {("aiperf", "genai-bench"), ("genai-bench", "guidellm")}
    for pair in apart:
        assert tput.loc[pair, "explained"] == "not tested, figures differ"
        assert "measure several passes" in tput.loc[pair, "explanation"]
    hits = [f for f in flags if f["code"] == "harness.untested"]
    assert len(hits) == 1 and hits[0]["severity"] == "info" and hits[0]["cell"]["metric"] == "output_tok_s"
    assert {(p["harness_a"], p["harness_b"]) for p in hits[0]["evidence"]["pairs"]} == apart
    assert "several passes" in hits[0]["message"] and "140" in hits[0]["message"]
    assert not [f for f in flags if f["code"] == "harness.disagree"]

    t2, flags2 = _analyse(tmp_path / "loose", runs, "--cv-limit", "0.5")
    assert set(t2.loc[t2["metric"] == "output_tok_s", "explained"]) == {"not tested, figures close"}
    assert not [f for f in flags2 if f["code"].startswith("harness.")]


@pytest.mark.skipif(not any(CAPTURES.rglob("*.json")), reason="captures/agreement not captured")
def test_captures_no_pair_is_silent(tmp_path):
    """On the five harnesses' captures, every pair of every metric (TTFT, ITL, per-stream decode,
    output throughput) agrees, is explained, or is flagged: each verdict is one of the six, each
    flagged verdict is named by its flag and each flag names only such pairs. A pair without an
    interval is close (within cv_limit, recomputed here from its two figures) or flagged untested."""
    out = tmp_path / "out"
    assert main(["analyse", str(CAPTURES), "--out", str(out), "--quiet"]) == 0
    t = pd.read_csv(out / "tables" / "agreement.csv")
    flags = json.loads((out / "flags.json").read_text())
    kept = t[t["verdict"] != "left out"]
    # one load for all: every pair of the harnesses that gave a cell's mean is there, none left out
    cells = pd.read_csv(out / "tables" / "cells.csv")
    means = cells[(cells["statistic"] == "mean") & cells["metric"].isin(METRICS)]
    n = means.groupby(["seat", "concurrency", "metric"])["harness"].nunique()
    pairs = kept.groupby(["seat", "concurrency", "metric"]).size()
    assert set(n.index.get_level_values("metric")) == set(METRICS) and (n >= 4).all()
    assert pairs.to_dict() == (n * (n - 1) // 2).to_dict()
    assert len(kept) == len(t)
    assert kept["explained"].notna().all() and set(kept["explained"]) <= set(VERDICTS)
    for verdict, code in VERDICTS.items():
        rows = kept[kept["explained"] == verdict]
        pairs = {(r.seat, int(r.concurrency), r.metric, r.harness_a, r.harness_b) for r in rows.itertuples()}
        if code:
            assert pairs == _flagged_pairs(flags, code), verdict
    untested = kept[kept["verdict"] == "no interval"]
    apart = (untested["estimate_b"] / untested["estimate_a"] - 1).abs() > 0.10
    assert (untested.loc[apart, "explained"].isin(["not tested, figures differ", "explained"])).all()
    assert (untested.loc[~apart, "explained"] == "not tested, figures close").all()
    # with 3 passes a harness every figure has an interval over passes: throughput is tested too
    tput = means[means["metric"] == "output_tok_s"]
    if (tput["n_passes"] >= 3).all():
        assert not len(untested)
        assert (
            kept.loc[kept["common"].notna() & (kept["common_verdict"] != "not recomputed"), "common"]
            .str.contains("over pass means")
            .all()
        )


def test_section_counts_every_verdict_and_says_agreeing_pairs_alike_only_inside_the_band():
    """The report's counts: an agreeing pair is "alike" only when its ratio interval lies inside
    0.8-1.25; the untested sentence appears only when a pair was not tested."""
    from types import SimpleNamespace

    from benchreport.report.model.sections.agreement import agreement_text

    def row(explained, low, high, verdict="agree"):
        return {"verdict": verdict, "explained": explained, "ratio_low": low, "ratio_high": high, "left_out": None}

    rows = [
        row("agree", 0.9, 1.1),
        row("agree", 0.5, 2.0),
        row("agree", 0.79, 1.2),
        row("unexplained", 1.3, 2, "differ"),
    ]
    text = str(agreement_text(SimpleNamespace(agreement=pd.DataFrame(rows))))
    assert "under one load: 4." in text and "intervals: 3 (1 with the ratio" in text
    assert "unexplained (each said in Section 7): 1." in text and "Not tested" not in text
    rows += [row("not tested, figures close", None, None, "no interval")] * 2
    rows += [row("not tested, figures differ", None, None, "no interval")]
    text = str(agreement_text(SimpleNamespace(agreement=pd.DataFrame(rows))))
    assert "figures close 2, apart 1" in text
