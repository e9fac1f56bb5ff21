"""Dated comparisons (`kind` history in comparisons.csv) of a stable seat: how often do they say
`better` or `worse` when nothing changed?

A seat is measured on D nights, 5 passes a night, at 4 concurrencies x 2 metrics (throughput,
TTFT). Nothing changes between nights except noise: each pass has its own lognormal factor
(`pass_cv`), each night one shared by its passes (`night_cv`, the run-to-run variation of
a real fleet). The dated rows compare the latest night with the previous one
(`--history-comparisons previous`, the default) or with every earlier night (`all`), with
the night-to-night spread of the cell's earlier nights as the noise (Holm within the history
rows). Printed: the share of replicates with any false better/worse among the history rows,
with its Wilson 95% interval. The regime that breaks the rule: a heavy-tailed night effect
(`outliers`: one night in 20 is 10% slower), where the latest night is called worse when it
is one of those nights, which is true of that night but not of the seat.

    python benchmarks/history_rows_study.py [--reps 200] [--only null|power] [--json OUT]

The study is of the comparison rows only; benchmarks/history_study.py is the study of the
dated verdicts of tables/history.csv (the night as the unit), which is what a nightly job
should act on.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from benchreport.columns import TABLE_COLUMNS
from benchreport.stats import comparisons, estimate_cells
from benchreport.stats.history import HistoryRule, history
from benchreport.thresholds import DEFAULT
from benchreport.tables import tidy_frame

UNITS = {"output_tok_s": "tok/s", "ttft_ms": "ms"}
CONCURRENCIES = (1, 4, 16, 64)


def _frame(
    rng, nights: int, pass_cv: float, night_cv: float, passes: int = 5, outliers: float = 0.0, last_step: float = 1.0
) -> pd.DataFrame:
    sp, sn = math.sqrt(math.log1p(pass_cv**2)), math.sqrt(math.log1p(night_cv**2))
    cols = {c: [] for c in TABLE_COLUMNS["measurements"]}
    d0 = dt.date(2026, 1, 1)
    for k in range(nights):
        date = (d0 + dt.timedelta(days=k)).isoformat()
        night = rng.lognormal(0.0, sn) * (0.9 if rng.random() < outliers else 1.0)
        night *= last_step if k == nights - 1 else 1.0
        for p in range(1, passes + 1):
            f = night * rng.lognormal(0.0, sp)
            for conc in CONCURRENCIES:
                for metric, base in (("output_tok_s", 900.0 * conc), ("ttft_ms", 40.0 + conc)):
                    row = dict(
                        run_id=f"s-{date}-p{p}",
                        seat="s",
                        date=date,
                        workload="decode",
                        concurrency=conc,
                        metric=metric,
                        statistic="mean",
                        unit=UNITS[metric],
                        **{"pass": p},
                        value=base * f if metric == "output_tok_s" else base / f,
                    )
                    for c in cols:
                        cols[c].append(row.get(c))
    return tidy_frame("measurements", cols)


def _wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return math.nan, math.nan
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, c - h), min(1.0, c + h)


def _history_rows(frame: pd.DataFrame, mode: str) -> pd.DataFrame:
    """The dated rows as benchreport.pipeline makes them: the history walk's levels passed in."""
    cs = estimate_cells(frame, n_resamples=200)
    levels = history(cs.dated, rule=HistoryRule.from_thresholds(DEFAULT))
    c = comparisons(cs, None, history=mode, levels=levels)
    return c[c["kind"] == "history"]


def study(reps: int, seed: int = 20261201, nights_only: int | None = None) -> list[dict]:
    """False better/worse per report, and how often a row's CI covers 1 (the seat never changed)."""
    out = []
    regimes = [(n, cv, 0.0) for n in (2, 8, 30) for cv in (0.0, 0.01, 0.03)] + [(30, 0.01, 0.05)]
    for nights, night_cv, outliers in regimes:
        if nights_only is not None and nights != nights_only:
            continue
        for mode in ("previous", "all"):
            hits = rows = with_ci = covered = 0
            for r in range(reps):
                rng = np.random.default_rng([seed, nights, int(night_cv * 1000), int(outliers * 100), r])
                h = _history_rows(_frame(rng, nights, 0.01, night_cv, outliers=outliers), mode)
                rows += len(h)
                hits += int(h["verdict"].isin(["better", "worse"]).any())
                ci = h[h["ci_low"].notna()]
                with_ci += len(ci)
                covered += int(((ci["ci_low"] <= 1) & (ci["ci_high"] >= 1)).sum())
            lo, hi = _wilson(hits, reps)
            cover = covered / with_ci if with_ci else math.nan
            out.append(
                dict(
                    nights=nights,
                    night_cv=night_cv,
                    outliers=outliers,
                    mode=mode,
                    reps=reps,
                    rows_per_report=rows / reps,
                    false_reports=hits / reps,
                    wilson_low=lo,
                    wilson_high=hi,
                    rows_with_ci=with_ci,
                    coverage_of_1=cover,
                )
            )
            print(
                f"nights {nights:3d}  night CV {night_cv:4.0%}  outliers {outliers:3.0%}  {mode:8s}  "
                f"rows {rows / reps:5.0f}  reports with a false better/worse {hits / reps:6.1%} [{lo:.1%}, {hi:.1%}]"
                f"  CI covers 1: {cover:6.1%} of {with_ci} rows",
                flush=True,
            )
    return out


def power(reps: int, seed: int = 20261202, step: float = 0.9) -> list[dict]:
    """The other side: the latest night `step` times the rest (a 10% regression by default).
    Printed: the share of reports whose latest-vs-previous throughput row at 16 streams says
    `worse` (the change is found), with its Wilson interval."""
    out = []
    for nights in (8, 30):
        for night_cv in (0.01, 0.03):
            found = 0
            for r in range(reps):
                rng = np.random.default_rng([seed, nights, int(night_cv * 1000), r])
                h = _history_rows(_frame(rng, nights, 0.01, night_cv, last_step=step), "previous")
                h = h[(h["metric"] == "output_tok_s") & (h["concurrency"] == 16)]
                found += int((h["verdict"] == "worse").any())
            lo, hi = _wilson(found, reps)
            out.append(
                dict(
                    nights=nights,
                    night_cv=night_cv,
                    step=step,
                    reps=reps,
                    found=found / reps,
                    wilson_low=lo,
                    wilson_high=hi,
                )
            )
            print(
                f"step {step - 1:+.0%} on the latest night: nights {nights:3d}  night CV {night_cv:4.0%}  "
                f"found {found / reps:6.1%} [{lo:.1%}, {hi:.1%}]",
                flush=True,
            )
    return out


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--only", choices=["null", "power"], default=None, help="run one half of the study")
    ap.add_argument("--nights", type=int, default=None, help="the null regimes of this many nights only")
    args = ap.parse_args(argv)
    res = (study(args.reps, nights_only=args.nights) if args.only != "power" else []) + (
        power(args.reps) if args.only != "null" else []
    )
    if args.json:
        args.json.write_text(json.dumps(res, indent=2) + "\n")
    return res


if __name__ == "__main__":
    sys.exit(main() and 0)
