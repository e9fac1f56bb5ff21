"""Native runs (`benchreport.run/1`) carrying request records, for tests that go through the CLI."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np


def ar1(rng: np.random.Generator, rho: float, n: int) -> np.ndarray:
    """A stationary Gaussian AR(1) series of unit variance and lag-1 correlation rho."""
    e = rng.standard_normal(n)
    x = np.empty(n)
    x[0] = e[0]
    s = math.sqrt(1.0 - rho * rho)
    for i in range(1, n):
        x[i] = rho * x[i - 1] + s * e[i]
    return x


def request_records(
    rng: np.random.Generator, n: int, *, rho: float = 0.0, concurrency: int = 1, workload: str = "decode"
) -> list[dict]:
    """n requests in send order: lognormal TTFT and time per output token (each an AR(1) in the log
    with lag-1 correlation rho), lognormal output lengths; `start_ms` from a closed loop of one stream."""
    tpot = 12.5 * np.exp(0.1 * ar1(rng, rho, n))
    ttft = 40.0 * np.exp(0.3 * ar1(rng, rho, n))
    out = np.maximum(2, np.rint(256 * np.exp(0.3 * ar1(rng, rho, n)))).astype(int)
    recs, t = [], 0.0
    for i in range(n):
        e2e = float(ttft[i] + tpot[i] * (out[i] - 1))
        recs.append(
            {
                "workload": workload,
                "concurrency": concurrency,
                "output_tokens": int(out[i]),
                "ttft_ms": round(float(ttft[i]), 4),
                "e2e_latency_ms": round(e2e, 4),
                "finish_reason": "stop",
                "start_ms": round(t, 3),
            }
        )
        t += e2e + 1.0
    return recs


def request_run(
    seat: str,
    pass_: int,
    requests: list[dict],
    *,
    date: str = "2026-12-01",
    role: str = "candidate",
    run_id: str | None = None,
) -> dict:
    """A native run of one seat and pass carrying `requests`."""
    return {
        "format": "benchreport.run/1",
        "run_id": run_id or f"{seat}-{date[:10]}-p{pass_}",
        "date": date,
        "seat": {"id": seat, "model": "Model-A", "role": role},
        "harness": {"name": "in-house", "probe": "study-256", "max_tokens": 4096},
        "pass": pass_,
        "warmup_excluded": True,
        "requests": requests,
    }


def write_request_runs(folder: Path, runs: list[dict]) -> Path:
    """One file per run, named by run_id; returns the folder."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for r in runs:
        (folder / f"{r['run_id']}.json").write_text(json.dumps(r), encoding="utf-8")
    return folder
