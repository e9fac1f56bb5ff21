"""Within-run interval study: how often does a single pass's within-run interval cover the truth?

Simulates single-pass seats as native run files (`benchreport.run/1`) with request records in send
order and runs each configuration through the command line once, exactly as a user would
(``python -m benchreport analyse DIR --out OUT``), then reads ``OUT/tables/cells.csv``: every seat is
one independent replicate, its single-pass cells carry the within-run interval
(``within_low``/``within_high``), and the share of them that contain the population value is the
coverage (issue 30, item 3).

One configuration: R seats (one folder), each one pass of N requests at concurrency 1, workload
`decode`, in send order (`start_ms` from a closed loop of one stream):

  time to first token    ttft = 40 ms * exp(0.50 x1)           (heavy-ish right tail)
  time per output token  tpot = 12.5 ms * exp(0.25 x2)         (decode rate 1000 / tpot)
  output tokens          max(2, round(256 exp(0.30 x3)))
  e2e_latency_ms         ttft + tpot (output_tokens - 1)

x1, x2, x3 independent stationary Gaussian AR(1) series with lag-1 correlation rho (the
correlation of the lognormal values themselves is (exp(s^2 rho) - 1) / (exp(s^2) - 1), a little
below rho). The library derives the per-stream decode rate (output_tokens - 1) / (e2e - ttft),
which is 1000 / tpot, so both cells checked have closed-form population values:

  ttft_ms                   mean 40 exp(0.5^2 / 2),  q-quantile 40 exp(0.5 z_q)
  decode_tok_s_per_stream   mean 80 exp(0.25^2 / 2), q-quantile 80 exp(0.25 z_q)

(an AR process does not move a marginal distribution). Statistics counted: mean, p50 and p90 (p95
and p99 where the tail rule gives them, reported apart). Each rate has a Wilson 95% interval
(statsmodels.stats.proportion.proportion_confint, method="wilson"). Seeds: configuration (N, rho)
draws from SeedSequence([seed, N, round(1000 rho)]).

    python benchmarks/within_study.py [--replicates 200] [--sizes 24 100 1000]
                                      [--rhos 0 0.2 0.5 0.8] [--n-boot 2000] [--quick] [--json OUT]

Results and the command behind them: docs/statistics.md (Issue 30, within-run intervals).
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
from scipy import stats
from scipy.signal import lfilter
from statsmodels.stats.proportion import proportion_confint

DATE = "2026-12-01"
#: metric -> (scale, log-sd, sign of the driver): value = scale * exp(sign * sd * x)
MODELS = {"ttft_ms": (40.0, 0.50, 1.0), "decode_tok_s_per_stream": (80.0, 0.25, -1.0)}
COUNTED = ("mean", "p50", "p90")
EXTRA = ("p95", "p99")
Q = {"p50": 0.5, "p90": 0.9, "p95": 0.95, "p99": 0.99}


def true_value(metric: str, statistic: str) -> float:
    """Population mean or quantile of a lognormal metric of `MODELS`."""
    scale, sd, _sign = MODELS[metric]
    if statistic == "mean":
        return scale * math.exp(sd * sd / 2.0)
    return scale * math.exp(sd * float(stats.norm.ppf(Q[statistic])))


def ar1(rng: np.random.Generator, rho: float, n: int, size: int) -> np.ndarray:
    """`size` stationary Gaussian AR(1) series of length n, unit variance, shape (size, n)."""
    e = rng.standard_normal((size, n))
    if rho == 0:
        return e
    x0 = rng.standard_normal((size, 1))
    return lfilter([math.sqrt(1.0 - rho * rho)], [1.0, -rho], e, axis=1, zi=rho * x0)[0]


def seat_requests(rng: np.random.Generator, n: int, rho: float, factor: float = 1.0) -> list[dict]:
    """One pass of n requests in send order (see the module docstring); `factor` multiplies every
    time (a pass's speed: benchmarks/tail_study.py)."""
    x = ar1(rng, rho, n, 3)
    ttft = factor * 40.0 * np.exp(0.50 * x[0])
    tpot = factor * 12.5 * np.exp(0.25 * x[1])
    out = np.maximum(2, np.rint(256 * np.exp(0.30 * x[2]))).astype(int)
    e2e = ttft + tpot * (out - 1)
    start = np.concatenate([[0.0], np.cumsum(e2e + 1.0)[:-1]])
    return [
        {
            "workload": "decode",
            "concurrency": 1,
            "output_tokens": int(out[i]),
            "ttft_ms": round(float(ttft[i]), 6),
            "e2e_latency_ms": round(float(e2e[i]), 6),
            "finish_reason": "stop",
            "start_ms": round(float(start[i]), 3),
        }
        for i in range(n)
    ]


def write_seats(folder: Path, rng: np.random.Generator, *, seats: int, n: int, rho: float) -> None:
    """`seats` single-pass seats, one native run file each, no incumbent (no comparisons)."""
    for s in range(seats):
        run = {
            "format": "benchreport.run/1",
            "run_id": f"seat-{s:04d}-p1",
            "date": DATE,
            "seat": {"id": f"seat-{s:04d}", "model": "Model-A", "role": "candidate"},
            "harness": {"name": "in-house", "probe": "within-study", "max_tokens": 4096},
            "pass": 1,
            "warmup_excluded": True,
            "requests": seat_requests(rng, n, rho),
        }
        (folder / f"seat-{s:04d}-p1.json").write_text(json.dumps(run, separators=(",", ":")), encoding="utf-8")


def analyse(folder: Path, out: Path, n_boot: int) -> pd.DataFrame:
    """The cells table of one `benchreport analyse` of `folder`."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "benchreport",
            "analyse",
            str(folder),
            "--out",
            str(out),
            "--n-boot",
            str(n_boot),
            "--quiet",
        ],
        check=True,
        env=os.environ.copy(),
        stdout=subprocess.DEVNULL,
    )
    return pd.read_csv(out / "tables" / "cells.csv")


def _rate(k: int, m: int) -> dict:
    lo, hi = proportion_confint(k, m, method="wilson") if m else (math.nan, math.nan)
    return {"k": int(k), "of": int(m), "rate": k / m if m else math.nan, "wilson95": [float(lo), float(hi)]}


def coverage(cells: pd.DataFrame, seats: int) -> dict:
    """{metric/statistic: coverage of the within-run interval, share given, methods used}."""
    out = {}
    for metric in MODELS:
        for stat in COUNTED + EXTRA:
            rows = cells[(cells["metric"] == metric) & (cells["statistic"] == stat) & (cells["n_passes"] == 1)]
            given = rows[np.isfinite(rows["within_low"]) & np.isfinite(rows["within_high"])]
            if not len(rows):
                continue
            truth = true_value(metric, stat)
            hit = int(((given["within_low"] <= truth) & (truth <= given["within_high"])).sum())
            width = ((given["within_high"] - given["within_low"]) / truth).median() if len(given) else math.nan
            methods = sorted({str(m).split(" over ")[0].split(" (")[0] for m in given["within_method"]})
            out[f"{metric}/{stat}"] = {
                "coverage": _rate(hit, len(given)),
                "given": _rate(len(given), seats),
                "median_width_over_truth": float(width),
                "methods": methods,
            }
    return out


def run_config(*, seats: int, n: int, rho: float, seed: int, n_boot: int) -> dict:
    rng = np.random.default_rng(np.random.SeedSequence([seed, n, int(round(rho * 1000))]))
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="within-study-") as tmp:
        runs, out = Path(tmp) / "runs", Path(tmp) / "out"
        runs.mkdir()
        write_seats(runs, rng, seats=seats, n=n, rho=rho)
        cells = analyse(runs, out, n_boot)
    return {
        "n_requests": n,
        "rho": rho,
        "seats": seats,
        "seconds": round(time.perf_counter() - t0, 1),
        "cells": coverage(cells, seats),
    }


def _pct(r: dict) -> str:
    if not r["of"]:
        return "-"
    return f"{r['rate']:.1%} [{r['wilson95'][0]:.1%}, {r['wilson95'][1]:.1%}]"


def table(results: list[dict]) -> str:
    """A markdown table: one row per (N, rho, metric, statistic) with an interval given."""
    lines = [
        "| requests | rho | metric | statistic | coverage | given | median width / truth | method |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        for key, c in r["cells"].items():
            if not c["coverage"]["of"]:
                continue
            metric, stat = key.split("/")
            lines.append(
                f"| {r['n_requests']} | {r['rho']:g} | {metric} | {stat} | {_pct(c['coverage'])} | "
                f"{c['given']['k']}/{c['given']['of']} | {c['median_width_over_truth']:.3f} | "
                f"{', '.join(c['methods'])} |"
            )
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicates", type=int, default=200, help="single-pass seats per configuration")
    ap.add_argument("--sizes", type=int, nargs="+", default=[24, 100, 1000], help="requests per pass")
    ap.add_argument("--rhos", type=float, nargs="+", default=[0.0, 0.2, 0.5, 0.8])
    ap.add_argument("--n-boot", type=int, default=2000, help="bootstrap resamples (where a bootstrap is used)")
    ap.add_argument("--seed", type=int, default=30)
    ap.add_argument("--quick", action="store_true", help="40 seats, sizes 24 and 100, rho 0 and 0.8")
    ap.add_argument("--json", type=Path, default=None, help="write the results here")
    a = ap.parse_args(argv)
    seats, sizes, rhos = a.replicates, a.sizes, a.rhos
    if a.quick:
        seats, sizes, rhos = 40, [24, 100], [0.0, 0.8]
    results, t0 = [], time.perf_counter()
    for n in sizes:
        for rho in rhos:
            r = run_config(seats=seats, n=n, rho=rho, seed=a.seed, n_boot=a.n_boot)
            results.append(r)
            print(
                f"N={n} rho={rho:g}: "
                + "; ".join(f"{k} {_pct(c['coverage'])}" for k, c in r["cells"].items() if c["coverage"]["of"]),
                file=sys.stderr,
                flush=True,
            )
    print(table(results))
    print(f"\n{time.perf_counter() - t0:.0f} s", file=sys.stderr)
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
