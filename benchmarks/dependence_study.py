"""Dependence flag study: how often does `sample.correlated_requests` fire, with and without a real correlation?

Simulates fleets of native run files (`benchreport.run/1`) with request records and runs each
through the command line exactly as a user would (``python -m benchreport analyse DIR --out OUT``),
then reads ``OUT/flags.json`` (the flag as it now decides: one-sided Ljung-Box test at lag 1 per
pass and metric, Holm over a seat's passes of one date, r_1 above `lag1_limit`) and
``OUT/tables/passes.csv`` (the rule before issue 30, recomputed from the same rows: any mean row
with r_1 > `lag1_limit`).

One fleet: S seats x K passes on one date, each pass N requests at concurrency 1 in send order,
with `start_ms` from a closed loop of one stream:
  time per output token  tpot = 12.5 ms * exp(0.10 x1)
  time to first token    ttft = 40 ms * exp(0.30 x2)
  output tokens          max(2, round(256 exp(0.30 x3)))
  e2e_latency_ms         ttft + tpot (output_tokens - 1)
x1, x2, x3 independent stationary Gaussian AR(1) series with lag-1 correlation rho
(rho = 0: independent requests). Seats are independent, so the per-seat rates are binomial.

Measured per (N, rho): the share of seats flagged and the share of fleets with any seat flagged,
each with a Wilson 95% interval (statsmodels.stats.proportion.proportion_confint, method="wilson"),
for the rule now and the rule before.

    python benchmarks/dependence_study.py [--fleets 20] [--seats 30] [--passes 3] [--quick] [--json OUT]

Results and the command behind them: docs/statistics.md (Issue 30).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.signal import lfilter
from statsmodels.stats.proportion import proportion_confint

ROOT = Path(__file__).resolve().parents[1]
DATE = "2026-12-01"
LAG1_LIMIT = 0.3  # benchreport.thresholds.DEFAULT.lag1_limit, the rule before and a part of the rule now


def _ar1(rng: np.random.Generator, rho: float, n: int, size: int) -> np.ndarray:
    """`size` stationary Gaussian AR(1) series of length n, unit variance, shape (size, n)."""
    e = rng.standard_normal((size, n))
    if rho == 0:
        return e
    x0 = rng.standard_normal(size)
    return np.stack([lfilter([math.sqrt(1 - rho * rho)], [1.0, -rho], e[i], zi=[rho * x0[i]])[0] for i in range(size)])


def write_fleet(folder: Path, rng: np.random.Generator, *, seats: int, passes: int, n: int, rho: float) -> None:
    for s in range(seats):
        for p in range(1, passes + 1):
            x = _ar1(rng, rho, n, 3)
            tpot, ttft = 12.5 * np.exp(0.10 * x[0]), 40.0 * np.exp(0.30 * x[1])
            out = np.maximum(2, np.rint(256 * np.exp(0.30 * x[2]))).astype(int)
            e2e = ttft + tpot * (out - 1)
            start = np.concatenate([[0.0], np.cumsum(e2e + 1.0)[:-1]])
            reqs = [
                {
                    "workload": "decode",
                    "concurrency": 1,
                    "output_tokens": int(out[i]),
                    "ttft_ms": round(float(ttft[i]), 4),
                    "e2e_latency_ms": round(float(e2e[i]), 4),
                    "finish_reason": "stop",
                    "start_ms": round(float(start[i]), 3),
                }
                for i in range(n)
            ]
            run = {
                "format": "benchreport.run/1",
                "run_id": f"seat-{s:02d}-p{p}",
                "date": DATE,
                "seat": {"id": f"seat-{s:02d}", "model": "Model-A", "role": "incumbent" if s == 0 else "candidate"},
                "harness": {"name": "in-house", "probe": "study-256", "max_tokens": 4096},
                "pass": p,
                "warmup_excluded": True,
                "requests": reqs,
            }
            (folder / f"seat-{s:02d}-p{p}.json").write_text(json.dumps(run, separators=(",", ":")), encoding="utf-8")


def one_fleet(rng, *, seats: int, passes: int, n: int, rho: float) -> tuple[set, set]:
    """(seats flagged now, seats the rule before would have flagged) of one simulated fleet."""
    with tempfile.TemporaryDirectory(prefix="dependence-study-") as tmp:
        runs, out = Path(tmp) / "runs", Path(tmp) / "out"
        runs.mkdir()
        write_fleet(runs, rng, seats=seats, passes=passes, n=n, rho=rho)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "benchreport",
                "analyse",
                str(runs),
                "--out",
                str(out),
                "--n-boot",
                "200",
                "--quiet",
            ],
            check=True,
            env=os.environ.copy(),
            stdout=subprocess.DEVNULL,
        )
        flags = json.loads((out / "flags.json").read_text(encoding="utf-8"))
        now = {s for f in flags if f["code"] == "sample.correlated_requests" for s in f["seats"]}
        p = pd.read_csv(out / "tables" / "passes.csv")
        before = set(p[(p["statistic"] == "mean") & (p["lag1"] > LAG1_LIMIT)]["seat"].astype(str))
    return now, before


def _rate(k: int, m: int) -> dict:
    lo, hi = proportion_confint(k, m, method="wilson")
    return {"k": k, "of": m, "rate": k / m, "wilson95": [float(lo), float(hi)]}


def run(*, fleets: int, seats: int, passes: int, n: int, rho: float, seed: int) -> dict:
    rng = np.random.default_rng([seed, n, int(rho * 1000)])
    counts = {"now": [0, 0], "before": [0, 0]}  # seats flagged, fleets with any
    for _ in range(fleets):
        now, before = one_fleet(rng, seats=seats, passes=passes, n=n, rho=rho)
        for k, v in (("now", now), ("before", before)):
            counts[k][0] += len(v)
            counts[k][1] += int(bool(v))
    return {
        "n_requests": n,
        "rho": rho,
        "seats": seats,
        "passes": passes,
        "fleets": fleets,
        **{f"{k}_seats": _rate(v[0], fleets * seats) for k, v in counts.items()},
        **{f"{k}_fleets": _rate(v[1], fleets) for k, v in counts.items()},
    }


def _pct(r: dict) -> str:
    return f"{r['rate']:.1%} [{r['wilson95'][0]:.1%}, {r['wilson95'][1]:.1%}] ({r['k']}/{r['of']})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fleets", type=int, default=20, help="simulated fleets per configuration")
    ap.add_argument("--seats", type=int, default=30)
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--requests", type=int, nargs="+", default=[200, 30], help="requests per pass")
    ap.add_argument("--rhos", type=float, nargs="+", default=[0.0, 0.5])
    ap.add_argument("--seed", type=int, default=30)
    ap.add_argument("--quick", action="store_true", help="2 fleets of 10 seats per configuration")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    fleets, seats = (2, 10) if args.quick else (args.fleets, args.seats)
    out, t0 = [], time.perf_counter()
    for n in args.requests:
        for rho in args.rhos:
            r = run(fleets=fleets, seats=seats, passes=args.passes, n=n, rho=rho, seed=args.seed)
            out.append(r)
            print(
                f"N={n} rho={rho:g}: seats flagged now {_pct(r['now_seats'])}, before {_pct(r['before_seats'])}; "
                f"fleets with any: now {_pct(r['now_fleets'])}, before {_pct(r['before_fleets'])}",
                file=sys.stderr,
                flush=True,
            )
    print(f"{time.perf_counter() - t0:.0f} s", file=sys.stderr)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
