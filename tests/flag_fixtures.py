"""Hand-made statistics frames and data sets for the flag tests.

The flags take the statistics layer's frames (cells, comparisons, exam_deltas; columns
of spec/cli.md) as arguments. These builders make frames with those columns from the
tidy tables by simple, transparent rules (per-pass medians, a t-interval across passes,
Fisher's exact test for counts), so the flag rules can be tested on their own.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from benchreport.flags import compute_flags, decide_exclusions, drop_excluded
from benchreport.load import load
from benchreport import stats as _stats
from benchreport.tables import build_tables
from benchreport.thresholds import DEFAULT

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "data" / "example"

# the statistics layer's own columns, so the fixtures cannot drift from what it writes
CELL_COLUMNS = _stats.CELL_COLUMNS + _stats.CELL_EXTRA_COLUMNS
COMPARISON_COLUMNS = _stats.COMPARISON_COLUMNS + _stats.COMPARISON_EXTRA_COLUMNS
EXAM_COLUMNS = [
    "benchmark",
    "dimension",
    "baseline",
    "candidate",
    "test",
    "n_items",
    "baseline_correct",
    "candidate_correct",
    "baseline_only",
    "candidate_only",
    "p_value",
    "p_mid",
    "p_holm",
    "diff",
    "diff_ci_low",
    "diff_ci_high",
    "diff_ci_method",
    "mde",
    "p_boschloo",
    "note",
]


def flags_of(
    tables, *, cells=None, comparisons=None, exam_deltas=None, thresholds=DEFAULT, baseline=None, passes=None
) -> pd.DataFrame:
    """`compute_flags` with the exclusions decided from the same thresholds, as benchreport.pipeline does."""
    return compute_flags(
        tables,
        cells=cells,
        comparisons=comparisons,
        exam_deltas=exam_deltas,
        excluded=decide_exclusions(tables, thresholds=thresholds),
        thresholds=thresholds,
        baseline=baseline,
        passes=passes,
    )


def cells_frame(rows: list[dict]) -> pd.DataFrame:
    """A cells frame from dicts (missing columns NA)."""
    df = pd.DataFrame(rows, columns=CELL_COLUMNS)
    df["concurrency"] = df["concurrency"].astype("Int64")
    return df


def comparisons_frame(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=COMPARISON_COLUMNS)
    df["concurrency"] = df["concurrency"].astype("Int64")
    return df


def exam_frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=EXAM_COLUMNS)


def cells_from_tables(tables, *, level: float = 0.95) -> pd.DataFrame:
    """One cell per (seat, date, workload, concurrency, metric, statistic) from the measurements:
    per-pass medians in pass order, a t-interval across passes when there are >= 2."""
    m = tables.measurements
    rows = []
    keys = ["seat", "date", "workload", "concurrency", "metric", "statistic"]
    for key, g in m.groupby(keys, dropna=False, sort=True):
        per_pass = g.groupby("pass")["value"].median().sort_index()
        vals = per_pass.to_numpy(dtype=float)
        n_passes = len(vals)
        ns = g["n"]
        n_obs = int(ns.sum()) if ns.notna().all() and len(ns) else n_passes
        row = dict(zip(keys, key))
        row.update(
            {
                "unit": g["unit"].iloc[0],
                "n_passes": n_passes,
                "n_obs": n_obs,
                "estimate": float(np.median(vals)),
                "ci_level": level,
                "values": ";".join(repr(float(v)) for v in vals),
                "source": "measurements",
            }
        )
        if n_passes >= 2:
            se = float(np.std(vals, ddof=1) / math.sqrt(n_passes))
            t = stats.t.ppf((1 + level) / 2, n_passes - 1)
            row.update(
                {
                    "estimate": float(np.mean(vals)),
                    "ci_low": float(np.mean(vals) - t * se),
                    "ci_high": float(np.mean(vals) + t * se),
                    "ci_method": "t (passes)",
                    "se": se,
                }
            )
        elif g["ci_low"].notna().any():
            row.update(
                {
                    "ci_low": float(g["ci_low"].iloc[0]),
                    "ci_high": float(g["ci_high"].iloc[0]),
                    "ci_level": float(g["ci_level"].iloc[0]),
                    "ci_method": "given by source",
                }
            )
        else:
            row.update({"ci_method": "none: single pass"})
        rows.append(row)
    return cells_frame(rows)


def comparisons_from_cells(cells: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """The baseline against every other seat on the cells both report in the same form."""
    base = cells[cells["seat"] == baseline]
    rows = []
    key = ["workload", "concurrency", "metric", "statistic"]
    for _, b in base.iterrows():
        same = cells[(cells["seat"] != baseline)]
        for col in key:
            same = same[same[col].isna()] if pd.isna(b[col]) else same[same[col].eq(b[col]).fillna(False).astype(bool)]
        for _, c in same.iterrows():
            ratio = c["estimate"] / b["estimate"]
            rows.append(
                {
                    **{k: b[k] for k in key},
                    "baseline": baseline,
                    "candidate": c["seat"],
                    "baseline_estimate": b["estimate"],
                    "candidate_estimate": c["estimate"],
                    "ratio": ratio,
                    "ci_method": "none: single pass",
                    "verdict": "insufficient_data",
                    "kind": "baseline",
                    "baseline_date": b["date"],
                    "candidate_date": c["date"],
                    "ci_level": 0.95,
                }
            )
    return comparisons_frame(rows)


def mde_two_proportions(p: float, n: int, alpha: float = 0.05, power: float = 0.8) -> float:
    """Normal-approximation smallest detectable difference of two proportions at n each."""
    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    p = min(max(p, 1 / n), 1 - 1 / n)
    return float(z * math.sqrt(2 * p * (1 - p) / n))


def exam_delta(benchmark, dimension, baseline, candidate, bc, cc, n, *, test="fisher_exact") -> dict:
    """One counts-only exam delta row (Fisher's exact test, two-sided)."""
    p = float(stats.fisher_exact([[cc, n - cc], [bc, n - bc]])[1])
    return {
        "benchmark": benchmark,
        "dimension": dimension,
        "baseline": baseline,
        "candidate": candidate,
        "test": test,
        "n_items": n,
        "baseline_correct": bc,
        "candidate_correct": cc,
        "baseline_only": pd.NA,
        "candidate_only": pd.NA,
        "p_value": p,
        "p_mid": pd.NA,
        "p_holm": p,
        "diff": (cc - bc) / n,
        "mde": mde_two_proportions((bc + cc) / (2 * n), n),
        "p_boschloo": pd.NA,
        "note": pd.NA,
    }


def example_tables():
    return build_tables(load([str(EXAMPLE)], progress=False))


def example_frames(tables=None):
    """(tables, cells, comparisons, exam_deltas) for data/example with hand-made statistics:
    comparisons against the incumbent (Qwen), exam deltas the documents state."""
    tables = tables or example_tables()
    clean = drop_excluded(tables, decide_exclusions(tables, thresholds=DEFAULT))
    cells = cells_from_tables(clean)
    comparisons = comparisons_from_cells(cells, "qwen3.8-flash-next-tp2")
    orig, new = "gb10x4-glm-5.3-flash-dspark-original-build", "gb10x4-glm-5.3-flash-dspark-new-build"
    qwen, exl3 = "qwen3.8-flash-next-tp2", "glm-5.3-flash-exl3-4.0bpw-1node"
    deltas = exam_frame(
        [
            exam_delta("HumanEval", None, orig, new, 154, 153, 164),
            exam_delta("GSM8K", None, orig, new, 247, 247, 250),
            exam_delta("frontier", "agentic", qwen, exl3, 90, 83, 94),
            exam_delta("frontier", "flat", qwen, exl3, 91, 85, 94),
        ]
    )
    return tables, cells, comparisons, deltas


# --- a clean data set: what a careful benchmark looks like ----------------------------------------


def _clean_run(
    seat: dict, pass_: int, values: dict, *, date="2026-11-02", role="candidate", exams=None, requests=None
) -> dict:
    run = {
        "format": "benchreport.run/1",
        "run_id": f"{seat['id']}-{date}-p{pass_}",
        "date": date,
        "seat": {**copy.deepcopy(seat), "role": role},
        "harness": {
            "name": "vllm bench serve",
            "version": "0.33.0",
            "probe": "fixed-512",
            "max_tokens": 512,
            "temperature": 0.0,
            "thinking": False,
        },
        "pass": pass_,
        "warmup_excluded": True,
        "measurements": [
            {"workload": "decode", "concurrency": c, "metric": "output_tok_s", "value": v, "unit": "tok/s", "n": 200}
            for c, v in values["output"].items()
        ]
        + [
            {
                "workload": "prefill",
                "metric": "prefill_tok_s",
                "value": values["prefill"],
                "unit": "tok/s",
                "context_tokens": 31000,
                "fresh_prompt": True,
                "n": 40,
            },
            {
                "workload": "decode",
                "concurrency": 1,
                "metric": "ttft_ms",
                "statistic": "p50",
                "value": values["ttft"],
                "unit": "ms",
                "n": 200,
            },
        ],
    }
    if requests is not None:
        run["requests"] = requests
    if exams is not None:
        run["exams"] = exams
    return run


CLEAN_SETTINGS = {
    "max_model_len": 131000,
    "kv_cache_dtype": "fp8",
    "gpu_memory_utilization": 0.9,
    "speculative": False,
    "prefix_caching": False,
}
GPU = 102641958912


def clean_runs() -> list[dict]:
    """Three seats of one model family, 5 passes each, stable, same harness/probe/settings,
    incumbent measured the same day, permissive licences, checkpoints that fit, items-level exams
    with a clearly significant delta, fresh prompts, uncapped answers."""
    seats = {
        "inc": {
            "id": "clean-incumbent",
            "model": "Model-A",
            "quantisation": "FP8",
            "engine": "vllm 0.33.0",
            "checkpoint_bytes": 120e9,
            "placement": {"nodes": 1, "gpus_per_node": 2, "gpu_memory_bytes": GPU, "tensor_parallel": 2},
            "settings": CLEAN_SETTINGS,
            "components": [
                {"name": "Model-A FP8 checkpoint", "role": "checkpoint", "license": "Apache-2.0"},
                {"name": "vllm", "role": "engine", "license": "Apache-2.0"},
            ],
        },
        "c1": {
            "id": "clean-candidate-nvfp4",
            "model": "Model-A",
            "quantisation": "NVFP4",
            "engine": "vllm 0.33.0",
            "checkpoint_bytes": 80e9,
            "placement": {"nodes": 1, "gpus_per_node": 2, "gpu_memory_bytes": GPU, "tensor_parallel": 2},
            "settings": CLEAN_SETTINGS,
            "components": [
                {"name": "Model-A NVFP4 checkpoint", "role": "checkpoint", "license": "MIT"},
                {"name": "vllm", "role": "engine", "license": "Apache-2.0"},
            ],
        },
        "c2": {
            "id": "clean-candidate-sglang",
            "model": "Model-A",
            "quantisation": "FP8",
            "engine": "sglang 0.6.1",
            "checkpoint_bytes": 120e9,
            "placement": {"nodes": 1, "gpus_per_node": 2, "gpu_memory_bytes": GPU, "tensor_parallel": 2},
            "settings": CLEAN_SETTINGS,
            "components": [
                {"name": "Model-A FP8 checkpoint", "role": "checkpoint", "license": "Apache-2.0"},
                {"name": "sglang", "role": "engine", "license": "Apache-2.0 OR MIT"},
            ],
        },
    }
    base = {"inc": (900.0, 7400.0, 35.0), "c1": (1200.0, 9000.0, 30.0), "c2": (950.0, 7600.0, 34.0)}
    wiggle = [1.0, 1.006, 0.996, 1.003, 0.998]  # CV well under 1%, not monotone
    n_items = 200
    runs = []
    for key, seat in seats.items():
        out16, pre, ttft = base[key]
        for p in range(1, 6):
            w = wiggle[p - 1]
            vals = {
                "output": {1: round(out16 / 8 * w, 2), 16: round(out16 * w, 2)},
                "prefill": round(pre * w, 1),
                "ttft": round(ttft * (2 - w), 2),
            }
            exams = None
            if p == 1:
                correct = {"inc": 120, "c1": 118, "c2": 170}[key]
                exams = [
                    {
                        "benchmark": "HumanEval+",
                        "items": [{"id": f"q{i}", "correct": i < correct} for i in range(n_items)],
                    }
                ]
            reqs = [
                {
                    "workload": "decode",
                    "concurrency": 16,
                    "prompt_tokens": 512,
                    "cached_prompt_tokens": 0,
                    "output_tokens": 300 + i,
                    "reasoning_tokens": 0,
                    "content_chars": 1200 + i,
                    "finish_reason": "stop",
                }
                for i in range(30)
            ]
            runs.append(
                _clean_run(seat, p, vals, role="incumbent" if key == "inc" else "candidate", exams=exams, requests=reqs)
            )
    return runs


def write_runs(runs: list[dict], folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for r in runs:
        (folder / f"{r['run_id']}.json").write_text(json.dumps(r), encoding="utf-8")
    return folder


def tables_from_runs(runs: list[dict], tmp_path: Path):
    result = load([str(write_runs(runs, tmp_path / "runs"))], progress=False)
    assert not result.refused, [str(r) for r in result.refused]
    return build_tables(result)


def clean_frames(tmp_path: Path):
    """(tables, cells, comparisons, exam_deltas) of the clean data set; the exam delta is paired
    (McNemar on discordant items) and clearly significant for clean-candidate-sglang."""
    tables = tables_from_runs(clean_runs(), tmp_path)
    cells = cells_from_tables(tables)
    comps = comparisons_from_cells(cells, "clean-incumbent")
    # a ratio CI from the two t-intervals would be narrow; give the comparisons a decisive verdict
    comps["ci_low"] = comps["ratio"] * 0.99
    comps["ci_high"] = comps["ratio"] * 1.01
    comps["ci_method"] = "welch log-ratio"
    comps["verdict"] = np.where(
        comps["ratio"] > 1.02, "better", np.where(comps["ratio"] < 0.98, "worse", "within_noise")
    )
    n = 200
    rows = []
    for cand, cc in (("clean-candidate-nvfp4", 118), ("clean-candidate-sglang", 170)):
        b, c = max(0, 120 - cc), max(0, cc - 120)  # discordant items (nested item sets)
        p = float(stats.binomtest(min(b, c), b + c, 0.5).pvalue) if b + c else 1.0
        rows.append(
            {
                "benchmark": "HumanEval+",
                "dimension": pd.NA,
                "baseline": "clean-incumbent",
                "candidate": cand,
                "test": "mcnemar_exact",
                "n_items": n,
                "baseline_correct": 120,
                "candidate_correct": cc,
                "baseline_only": b,
                "candidate_only": c,
                "p_value": p,
                "p_mid": pd.NA,
                "p_holm": p,
                "diff": (cc - 120) / n,
                "mde": 0.09,
                "p_boschloo": pd.NA,
                "note": pd.NA,
            }
        )
    deltas = exam_frame(rows)
    # keep only the significant delta: the clean set has a clearly significant exam result
    deltas = deltas[deltas["candidate"] == "clean-candidate-sglang"].reset_index(drop=True)
    return tables, cells, comps, deltas


# --- in-memory runs for rule tests ------------------------------------------------------------------


def mkrun(
    seat: str = "s1",
    pass_: int = 1,
    *,
    date: str = "2026-11-02",
    model: str = "Model-A",
    role: str = "candidate",
    measurements=None,
    requests=None,
    exams=None,
    events=None,
    harness: dict | None = None,
    settings: dict | None = None,
    warmup_excluded=True,
    seat_extra: dict | None = None,
    run_id: str | None = None,
) -> dict:
    """A valid native run with only what a rule test needs (override anything)."""
    run = {
        "format": "benchreport.run/1",
        "run_id": run_id or f"{seat}-{date}-p{pass_}",
        "date": date,
        "seat": {"id": seat, "model": model, "role": role, **(seat_extra or {})},
        "harness": harness or {"name": "in-house", "probe": "fixed-512", "max_tokens": 512},
        "pass": pass_,
    }
    if settings is not None:
        run["seat"]["settings"] = settings
    if warmup_excluded is not None:
        run["warmup_excluded"] = warmup_excluded
    if measurements is None and requests is None and exams is None:
        measurements = [m_(100.0)]
    for key, val in (("measurements", measurements), ("requests", requests), ("exams", exams), ("events", events)):
        if val is not None:
            run[key] = val
    return run


def m_(value, metric="output_tok_s", *, workload="decode", concurrency=16, **extra) -> dict:
    """A measurement (unit from the metric)."""
    from benchreport.columns import unit_of

    m = {"workload": workload, "metric": metric, "value": value, "unit": unit_of(metric)}
    if concurrency is not None:
        m["concurrency"] = concurrency
    m.update(extra)
    return m


def tables_of(*runs: dict, assumptions: dict | None = None):
    """Tidy tables of runs given as dicts, without touching the disk.

    `assumptions`: run_id -> tuple of what an importer assumed (the runs.assumptions column).
    """
    from benchreport.load import LoadedRun, LoadResult
    from benchreport.load.native import from_object

    assumptions = assumptions or {}
    loaded = [
        LoadedRun(
            from_object(copy.deepcopy(r)),
            f"mem/{r['run_id']}.json",
            "0" * 64,
            "native" if r["run_id"] not in assumptions else "vllm",
            tuple(assumptions.get(r["run_id"], ())),
        )
        for r in runs
    ]
    return build_tables(LoadResult(runs=loaded))
