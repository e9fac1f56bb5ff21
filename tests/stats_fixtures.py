"""Builders of small tidy tables for the statistics tests (no loader involved).

Frames have the columns of benchreport.columns.TABLE_COLUMNS and the dtypes the
loader is specified to produce (pandas string dtype, nullable Int64/boolean).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from benchreport.columns import TABLE_COLUMNS

_STRING = {
    "run_id",
    "seat",
    "date",
    "workload",
    "metric",
    "statistic",
    "unit",
    "condition",
    "finish_reason",
    "error",
    "benchmark",
    "dimension",
    "count_rounding",
    "measured_on",
    "placement_note",
    "item_id",
    "model",
    "role",
    "quantisation",
    "engine",
    "interconnect",
}
_INT = {
    "pass",
    "concurrency",
    "n",
    "context_tokens",
    "prompt_tokens",
    "cached_prompt_tokens",
    "output_tokens",
    "reasoning_tokens",
    "content_chars",
    "reasoning_chars",
    "correct",
    "total",
    "checkpoint_bytes",
    "nodes",
    "gpus_per_node",
    "gpu_memory_bytes",
    "tensor_parallel",
}
_BOOL = {"fresh_prompt", "from_items", "from_earlier_run"}


def _typed(table: str, rows: list[dict]) -> pd.DataFrame:
    cols = TABLE_COLUMNS[table]
    df = pd.DataFrame(rows, columns=cols) if rows else pd.DataFrame(columns=cols)
    for c in cols:
        if table == "exam_items" and c == "correct":
            df[c] = df[c].astype(bool)
        elif c in _STRING:
            df[c] = df[c].astype("object").where(df[c].notna(), None).astype("string")
        elif c in _INT:
            df[c] = pd.array(pd.to_numeric(df[c].astype("object"), errors="coerce"), dtype="Int64")
        elif c in _BOOL:
            df[c] = pd.array(df[c].astype("object"), dtype="boolean")
        else:
            df[c] = pd.to_numeric(df[c], errors="coerce").astype(float)
    return df


_UNITS = {
    "decode_tok_s_per_stream": "tok/s",
    "output_tok_s": "tok/s",
    "prefill_tok_s": "tok/s",
    "ttft_ms": "ms",
    "itl_ms": "ms",
    "e2e_latency_ms": "ms",
    "request_rate": "req/s",
    "engine_init_s": "s",
}


def measurement(
    seat,
    date,
    pass_,
    workload,
    metric,
    value,
    *,
    concurrency=None,
    statistic="mean",
    n=None,
    condition=None,
    ci_low=np.nan,
    ci_high=np.nan,
    ci_level=np.nan,
    run_id=None,
) -> dict:
    """One measurements row."""
    return dict(
        run_id=run_id or f"{seat}-{date}-p{pass_}",
        seat=seat,
        date=date,
        **{"pass": pass_},
        workload=workload,
        concurrency=concurrency,
        metric=metric,
        statistic=statistic,
        value=float(value),
        unit=_UNITS[metric],
        n=n,
        context_tokens=None,
        fresh_prompt=None,
        condition=condition,
        ci_low=ci_low,
        ci_high=ci_high,
        ci_level=ci_level,
    )


def measurements_frame(rows: list[dict]) -> pd.DataFrame:
    return _typed("measurements", rows)


def request_rows(
    seat,
    date,
    pass_,
    workload,
    concurrency,
    ttft_ms,
    e2e_latency_ms,
    output_tokens,
    *,
    itl_ms=None,
    error=None,
    finish_reason=None,
    run_id=None,
    start_ms=None,
) -> list[dict]:
    """Request rows of one pass from arrays of equal length (send order; `start_ms` optional)."""
    ttft = np.asarray(ttft_ms, dtype=float)
    e2e = np.asarray(e2e_latency_ms, dtype=float)
    out = np.asarray(output_tokens)
    n = ttft.shape[0]
    itl = np.full(n, np.nan) if itl_ms is None else np.asarray(itl_ms, dtype=float)
    err = [None] * n if error is None else list(error)
    fin = ["stop"] * n if finish_reason is None else list(finish_reason)
    rid = run_id or f"{seat}-{date}-p{pass_}"
    start = np.full(n, np.nan) if start_ms is None else np.asarray(start_ms, dtype=float)
    return [
        dict(
            run_id=rid,
            seat=seat,
            date=date,
            **{"pass": pass_},
            workload=workload,
            concurrency=concurrency,
            prompt_tokens=512,
            cached_prompt_tokens=0,
            output_tokens=int(out[i]),
            reasoning_tokens=None,
            content_chars=1000,
            reasoning_chars=0,
            ttft_ms=ttft[i],
            e2e_latency_ms=e2e[i],
            itl_ms=itl[i],
            finish_reason=fin[i],
            error=err[i],
            start_ms=start[i],
        )
        for i in range(n)
    ]


def requests_frame(rows: list[dict]) -> pd.DataFrame:
    return _typed("requests", rows)


def simulated_requests(
    rng,
    seat,
    date,
    pass_,
    *,
    n=60,
    workload="decode",
    concurrency=1,
    ttft_median=40.0,
    tok_s=80.0,
    out_tokens=256,
    sigma=0.3,
    factor=1.0,
    rho=0.0,
) -> list[dict]:
    """Lognormal TTFT and per-stream decode speed: realistic skewed latencies.

    `factor` scales this pass's speed (run-to-run variation); `rho` is the lag-1
    correlation of the log speeds in send order (a stationary Gaussian AR(1)).
    Requests carry `start_ms` 100 ms apart.
    """
    ttft = ttft_median * rng.lognormal(0.0, sigma, n)
    e = rng.standard_normal(n)
    z = np.empty(n)
    z[0] = e[0]
    for i in range(1, n):
        z[i] = rho * z[i - 1] + np.sqrt(1 - rho**2) * e[i]
    speed = tok_s * factor * np.exp(z * sigma / 2)
    out = np.full(n, out_tokens)
    e2e = ttft + (out - 1) / speed * 1000.0
    itl = (e2e - ttft) / (out - 1)
    return request_rows(
        seat, date, pass_, workload, concurrency, ttft, e2e, out, itl_ms=itl, start_ms=np.arange(n) * 100.0
    )


def seats_frame(roles: dict[str, str]) -> pd.DataFrame:
    return _typed("seats", [dict(seat=s, model=f"model-{s}", role=r) for s, r in roles.items()])


def exam(
    seat,
    benchmark,
    correct,
    total,
    *,
    dimension=None,
    date="2026-09-10",
    run_id=None,
    from_items=False,
    count_rounding=None,
    score=np.nan,
    measured_on=None,
) -> dict:
    return dict(
        run_id=run_id or f"{seat}-{date}-exam",
        seat=seat,
        date=date,
        benchmark=benchmark,
        dimension=dimension,
        correct=correct,
        total=total,
        score=score,
        from_items=from_items,
        count_rounding=count_rounding,
        measured_on=measured_on,
        from_earlier_run=False,
        placement_note=None,
    )


def exams_frame(rows: list[dict]) -> pd.DataFrame:
    return _typed("exams", rows)


def exam_item_rows(
    seat, benchmark, verdicts, *, dimension=None, date="2026-09-10", run_id=None, ids=None
) -> list[dict]:
    ids = ids if ids is not None else [f"q{i:04d}" for i in range(len(verdicts))]
    return [
        dict(
            run_id=run_id or f"{seat}-{date}-exam",
            seat=seat,
            date=date,
            benchmark=benchmark,
            dimension=dimension,
            item_id=i,
            correct=bool(v),
        )
        for i, v in zip(ids, verdicts)
    ]


def exam_items_frame(rows: list[dict]) -> pd.DataFrame:
    return _typed("exam_items", rows)


def paired_verdicts(both, first_only, second_only, neither, *, seed=0):
    """Two verdict vectors over the same items with the given 2x2 table, shuffled."""
    a = [1] * both + [1] * first_only + [0] * second_only + [0] * neither
    b = [1] * both + [0] * first_only + [1] * second_only + [0] * neither
    perm = np.random.default_rng(seed).permutation(len(a))
    return [a[i] for i in perm], [b[i] for i in perm]
