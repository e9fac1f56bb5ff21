"""The verdict study's harness (benchmarks/verdict_study.py): generator, plumbing, docs section.

These check the harness, not the library's verdicts: the rates themselves are the study's
output (docs/statistics.md), and they are expected to change with the statistics.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import verdict_study as vs  # noqa: E402
from benchreport.load import load  # noqa: E402
from benchreport.tables import build_tables  # noqa: E402


def _bytes(folder: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_replicate_files_are_reproducible_and_load(tmp_path):
    cfg = vs.Config("pair", 2, 3, 0.05, 0.5)
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    fa, seed_a = vs.write_replicate(a, cfg, 7, vs.Model(), seed=0, start_ms=False)
    fb, seed_b = vs.write_replicate(b, cfg, 7, vs.Model(), seed=0, start_ms=False)
    assert _bytes(a) == _bytes(b) and seed_a == seed_b
    assert len(fa) == 2 * 3
    loaded = load([a], progress=False)
    assert not loaded.refused and len(loaded.runs) == 6
    t = build_tables(loaded)
    assert set(t.seats["role"]) == {"incumbent", "candidate"}
    assert len(t.requests) == 6 * 2 * vs.Model().n_requests
    # another replicate draws other data
    c = tmp_path / "c"
    c.mkdir()
    vs.write_replicate(c, cfg, 8, vs.Model(), seed=0, start_ms=False)
    assert _bytes(a) != _bytes(c)


def test_start_ms_files_load_whether_or_not_the_loader_keeps_it(tmp_path):
    supported = vs.loader_keeps_start_ms()
    assert supported in (True, False)
    files, _ = vs.write_replicate(tmp_path, vs.Config("pair", 2, 1, 0.0, 0.0), 0, vs.Model(), seed=0, start_ms=True)
    loaded = load([tmp_path], progress=False)
    assert not loaded.refused
    req = build_tables(loaded).requests
    if supported:
        assert "start_ms" in req.columns
    import json

    doc = json.loads(files[0].read_text())
    starts = [r["start_ms"] for r in doc["requests"] if r["concurrency"] == 1]
    assert all(x < y for x, y in zip(starts, starts[1:]))


def test_decode_rate_is_the_speed_factor_times_a_lognormal():
    rng = np.random.default_rng(3)
    m = vs.Model()
    ttft, e2e, out = vs._cell_requests(rng, m, 1, 1.1, 1.05, 0.0, n=50_000)
    dec = (out - 1) / ((e2e - ttft) / 1000.0)
    logsd = np.std(np.log(dec))
    assert abs(logsd - m.sd_tpot) < 0.003
    assert abs(np.median(dec) / (m.decode_tok_s * 1.1 * 1.05) - 1) < 0.003


def test_ar1_is_stationary_with_the_asked_lag1_correlation():
    x = vs._ar1(np.random.default_rng(0), 0.5, 200, 400)
    assert abs(x.var() - 1) < 0.03
    lag = np.mean([np.corrcoef(r[1:], r[:-1])[0, 1] for r in x])
    assert abs(lag - 0.5) < 0.02


def test_true_value_by_monte_carlo_matches_the_closed_form():
    t = vs.true_mean_decode(vs.Model(), draws=400_000)
    assert abs(t["value"] - t["closed_form"]) < 5 * t["mc_se"]


def test_one_replicate_through_the_pipeline_and_extra_columns_ignored():
    res = vs.replicate(vs.Config("pair", 2, 3, 0.02, 0.0), 0, n_boot=200)
    assert res["error"] is None
    assert len(res["cells"]) == 2 and len(res["primary"]) == 1
    assert res["primary"][0]["verdict"] in ("better", "worse", "within_noise", "insufficient_data")
    assert res["n_rows"] > 0

    from benchreport.pipeline import Options, analyse_paths
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        _, seed = vs.write_replicate(
            Path(tmp), vs.Config("pair", 2, 1, 0.0, 0.0), 0, vs.Model(), seed=0, start_ms=False
        )
        a = analyse_paths([tmp], Options(n_boot=200, seed=seed))
    base = vs.summarise(a.cells, a.comparisons)
    wider = vs.summarise(
        a.cells.assign(zz_new="x", p_value=0.5).iloc[:, ::-1],
        a.comparisons.assign(zz_new="x", p_holm=0.5).iloc[:, ::-1],
    )
    assert base == wider


def test_aggregate_and_docs_section_are_rewritten_in_place(tmp_path):
    cfgs = [
        vs.Config("pair", 2, 1, 0.0, 0.0),
        vs.Config("fleet", 3, 1, 0.0, 0.0),
        vs.Config("power", 2, 3, 0.02, 0.0, 1.05),
    ]
    raw, complete = vs.run_study(
        cfgs, replicates=2, fleet_replicates=1, model=vs.Model(), n_boot=200, seed=0, jobs=1, start_ms=False, quiet=True
    )
    truth = {"value": 80.4, "mc_se": 0.01, "closed_form": 80.4, "draws": 1}
    assert complete
    aggs = [vs.aggregate(c, r, truth) for c, r in zip(cfgs, raw)]
    assert aggs[0]["false_primary"]["n"] == 2 and aggs[0]["cell_ci_given"]["n"] == 4
    assert 0 <= aggs[2]["power_better"]["rate"] <= 1
    result = {
        "meta": {
            "command": "python benchmarks/verdict_study.py --test",
            "replicates": 2,
            "fleet_replicates": 1,
            "n_boot": 200,
            "seed": 0,
            "jobs": 1,
            "cores": 2,
            "machine": "test",
            "date": "2026-12-01",
            "elapsed_s": 1.0,
            "start_ms": False,
            "truth": truth,
            "git": {"commit": "0" * 40, "dirty_analysis": False},
        },
        "configs": aggs,
    }
    doc = tmp_path / "statistics.md"
    doc.write_text("# Statistics\n\nintro\n\n## After\n\nkept\n", encoding="utf-8")
    vs.write_docs(result, doc, "before", "Before")
    once = doc.read_text()
    assert "intro" in once and "kept" in once and "| passes |" in once
    vs.write_docs(result, doc, "before", "Before")
    assert doc.read_text() == once
    vs.write_docs(result, doc, "after", "After the change")
    assert doc.read_text().count("verdict-study:before begin") == 1
    assert "verdict-study:after begin" in doc.read_text()


def test_wilson_interval():
    lo, hi = vs.wilson(48, 100)
    assert lo < 0.48 < hi and math.isclose(lo, 0.3846, abs_tol=1e-3)
    assert vs.wilson(0, 40)[0] == 0.0


def test_configuration_keys_round_trip():
    for cfg in vs.grid(False) + vs.grid(True) + vs.grid(False, passes=(3,), cvs=(0.5,), rhos=(0.0,)):
        assert vs.Config.from_key(cfg.key) == cfg
    with pytest.raises(ValueError):
        vs.Config.from_key("pair:K1")
