"""Tail-cell study: how often does a multi-pass p90/p95/p99 cell's interval cover the true quantile?

Simulates seats measured in K passes as native run files (`benchreport.run/1`, one file per seat and
pass, request records only: no harness figure) and runs each configuration through the command line
once, exactly as a user would (``python -m benchreport analyse DIR --out OUT``), then reads
``OUT/tables/cells.csv``: every seat is one independent replicate, its K-pass cells carry the
between-pass interval (``ci_low``/``ci_high``, log-scale t over the per-pass values), and the share
of them that contain the population value is the coverage (issue 43, tail cells).

One configuration: R seats (one folder), each K passes of N requests at concurrency 1, workload
`decode`, in send order, requests independent:

  time to first token    ttft = f 40 ms exp(0.50 x1)
  time per output token  tpot = f 12.5 ms exp(0.25 x2)        (decode rate 1000 / tpot)
  output tokens          max(2, round(256 exp(0.30 x3)))
  e2e_latency_ms         ttft + tpot (output_tokens - 1)

x1-x3 independent standard normal per request; f the pass's speed factor, lognormal with median 1
and CV c, drawn per seat and pass (it multiplies every time). The truth is the population value at
the median pass (f = 1), closed-form:

  ttft_ms                   q-quantile 40 exp(0.50 z_q),  mean 40 exp(0.5^2 / 2)
  decode_tok_s_per_stream   q-quantile 80 exp(0.25 z_q),  mean 80 exp(0.25^2 / 2)

(the geometric mean over passes of the per-pass population value is this value: E log f = 0).
Statistics counted: p90 (both sizes), p95 and p99 where the tail rule gives them (1,000 requests), and
the mean as a control. Each rate has a Wilson 95% interval (statsmodels proportion_confint,
method="wilson"). The 5-pass folder holds the first 5 passes of the same seats as the 10-pass one.
Seeds: size N draws from SeedSequence([seed, N, round(1e4 c)]).

    python benchmarks/tail_study.py [--replicates 200] [--sizes 100 1000] [--passes 5 10]
                                    [--cv 0.02] [--quick] [--json OUT]
    python benchmarks/tail_study.py --compare before=A.json after=B.json   # one table of both

Results and the command behind them: docs/statistics.md (Issue 43, tail cells).
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
from statsmodels.stats.proportion import proportion_confint

sys.path.insert(0, str(Path(__file__).resolve().parent))
from within_study import seat_requests  # noqa: E402  (the same requests, independent: rho 0)

DATE = "2026-12-01"
#: metric -> (scale, log-sd): the value at the median pass is scale * exp(+-sd * x)
MODELS = {"ttft_ms": (40.0, 0.50), "decode_tok_s_per_stream": (80.0, 0.25)}
Q = {"p90": 0.9, "p95": 0.95, "p99": 0.99}
COUNTED = ("mean", "p90", "p95", "p99")


def true_value(metric: str, statistic: str) -> float:
    """Population mean or quantile of a metric of `MODELS` at the median pass."""
    scale, sd = MODELS[metric]
    if statistic == "mean":
        return scale * math.exp(sd * sd / 2.0)
    return scale * math.exp(sd * float(stats.norm.ppf(Q[statistic])))


def write_seats(folders: dict[int, Path], rng: np.random.Generator, *, seats: int, n: int, cv: float) -> None:
    """`seats` seats of max(folders) passes; folder K gets each seat's first K passes."""
    log_sd = math.sqrt(math.log1p(cv * cv))
    for s in range(seats):
        for p in range(1, max(folders) + 1):
            run = {
                "format": "benchreport.run/1",
                "run_id": f"seat-{s:04d}-p{p}",
                "date": DATE,
                "seat": {"id": f"seat-{s:04d}", "model": "Model-A", "role": "candidate"},
                "harness": {"name": "in-house", "probe": "tail-study", "max_tokens": 4096},
                "pass": p,
                "warmup_excluded": True,
                "requests": seat_requests(rng, n, 0.0, math.exp(log_sd * rng.standard_normal())),
            }
            text = json.dumps(run, separators=(",", ":"))
            for k, folder in folders.items():
                if p <= k:
                    (folder / f"seat-{s:04d}-p{p}.json").write_text(text, encoding="utf-8")


def analyse(folder: Path, out: Path) -> pd.DataFrame:
    """The cells table of one `benchreport analyse` of `folder`."""
    cmd = [sys.executable, "-m", "benchreport", "analyse", str(folder), "--out", str(out), "--quiet"]
    subprocess.run(cmd, check=True, env=os.environ.copy(), stdout=subprocess.DEVNULL)
    return pd.read_csv(out / "tables" / "cells.csv")


def _rate(k: int, m: int) -> dict:
    lo, hi = proportion_confint(k, m, method="wilson") if m else (math.nan, math.nan)
    return {"k": int(k), "of": int(m), "rate": k / m if m else math.nan, "wilson95": [float(lo), float(hi)]}


def coverage(cells: pd.DataFrame, passes: int) -> dict:
    """{metric/statistic: coverage of the between-pass interval, its share below the truth, the
    median log bias of the estimate, and the median width over the truth}."""
    out = {}
    for metric in MODELS:
        for stat in COUNTED:
            rows = cells[(cells["metric"] == metric) & (cells["statistic"] == stat) & (cells["n_passes"] == passes)]
            given = rows[np.isfinite(rows["ci_low"]) & np.isfinite(rows["ci_high"])]
            if not len(given):
                continue
            truth = true_value(metric, stat)
            hit = int(((given["ci_low"] <= truth) & (truth <= given["ci_high"])).sum())
            missed_low = int((given["ci_high"] < truth).sum())
            out[f"{metric}/{stat}"] = {
                "coverage": _rate(hit, len(given)),
                "interval_below_truth": _rate(missed_low, len(given)),
                "mean_log_bias": float(np.log(given["estimate"] / truth).mean()),
                "median_width_over_truth": float(((given["ci_high"] - given["ci_low"]) / truth).median()),
                "given": int(len(given)),
            }
    return out


def run_size(*, seats: int, n: int, passes: list[int], cv: float, seed: int) -> list[dict]:
    """Every pass count of one size: one folder and one analysis each."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, n, int(round(cv * 1e4))]))
    results = []
    with tempfile.TemporaryDirectory(prefix="tail-study-") as tmp:
        folders = {k: Path(tmp) / f"runs{k}" for k in passes}
        for f in folders.values():
            f.mkdir()
        write_seats(folders, rng, seats=seats, n=n, cv=cv)
        for k, folder in folders.items():
            t0 = time.perf_counter()
            cells = analyse(folder, Path(tmp) / f"out{k}")
            results.append(
                {
                    "n_requests": n,
                    "passes": k,
                    "cv": cv,
                    "seats": seats,
                    "seconds": round(time.perf_counter() - t0, 1),
                    "cells": coverage(cells, k),
                }
            )
    return results


def _pct(r: dict) -> str:
    return f"{r['rate']:.1%} [{r['wilson95'][0]:.1%}, {r['wilson95'][1]:.1%}]" if r["of"] else "-"


def table(results: list[dict]) -> str:
    """A markdown table: one row per (N, K, metric, statistic)."""
    lines = [
        "| requests | passes | metric | statistic | coverage | interval below truth | mean log bias | width / truth |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        for key, c in r["cells"].items():
            metric, stat = key.split("/")
            lines.append(
                f"| {r['n_requests']} | {r['passes']} | {metric} | {stat} | {_pct(c['coverage'])} | "
                f"{_pct(c['interval_below_truth'])} | {c['mean_log_bias']:+.4f} | {c['median_width_over_truth']:.3f} |"
            )
    return "\n".join(lines)


def compare_table(labelled: list[tuple[str, list[dict]]]) -> str:
    """One markdown table of several runs of the same configurations (e.g. before and after):
    per (N, K, metric, statistic) each run's coverage, and its share of intervals below the truth
    and mean log bias as "below / bias"."""
    first = labelled[0][1]
    head = " | ".join(f"{name} coverage | {name} below / bias" for name, _ in labelled)
    lines = [f"| requests | passes | metric | statistic | {head} |", "|---|---|---|---|" + "---|---|" * len(labelled)]
    for i, r in enumerate(first):
        for key in r["cells"]:
            metric, stat = key.split("/")
            parts = []
            for _name, results in labelled:
                c = results[i]["cells"][key]
                below = c["interval_below_truth"]["rate"]
                parts.append(f"{_pct(c['coverage'])} | {below:.1%} / {c['mean_log_bias']:+.4f}")
            lines.append(f"| {r['n_requests']} | {r['passes']} | {metric} | {stat} | " + " | ".join(parts) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicates", type=int, default=200, help="seats per configuration")
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 1000], help="requests per pass")
    ap.add_argument("--passes", type=int, nargs="+", default=[5, 10], help="passes per seat")
    ap.add_argument("--cv", type=float, default=0.02, help="pass-to-pass CV of the speed factor")
    ap.add_argument("--seed", type=int, default=43)
    ap.add_argument("--quick", action="store_true", help="40 seats, 100 requests, 5 passes")
    ap.add_argument("--json", type=Path, default=None, help="write the results here")
    ap.add_argument(
        "--compare",
        nargs="+",
        metavar="LABEL=JSON",
        help="print one table of earlier runs' --json files (same configurations) and exit",
    )
    a = ap.parse_args(argv)
    if a.compare:
        labelled = [(lab, json.loads(Path(path).read_text())) for lab, path in (x.split("=", 1) for x in a.compare)]
        print(compare_table(labelled))
        return 0
    seats, sizes, passes = a.replicates, a.sizes, sorted(a.passes)
    if a.quick:
        seats, sizes, passes = 40, [100], [5]
    results, t0 = [], time.perf_counter()
    for n in sizes:
        for r in run_size(seats=seats, n=n, passes=passes, cv=a.cv, seed=a.seed):
            results.append(r)
            summary = "; ".join(f"{k} {_pct(c['coverage'])}" for k, c in r["cells"].items())
            print(f"N={n} K={r['passes']} ({r['seconds']} s): {summary}", file=sys.stderr, flush=True)
    print(table(results))
    print(f"\n{time.perf_counter() - t0:.0f} s", file=sys.stderr)
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
