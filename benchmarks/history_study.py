"""History verdicts by simulation: false alarms on stable seats, detection of a real step.

Cell level only: it writes night values directly, without requests and without the CLI, so it
is a quick check of the walk, not the measurement of the claim (issue 30's audit). The
measurement is benchmarks/history_cli_study.py (request-level stores through the CLI,
docs/statistics.md "History across dates"); `seat_year` here also feeds tests of the figure.

A seat is measured every night for a year: 20 cells (4 concurrencies x 5 metric/statistic
pairs), 5 passes a night with a lognormal pass factor (CV `--pass-cv`), optionally a
lognormal night factor shared by the night's passes (`--night-cv`, the regime where the
passes of one night understate the noise), and heavy-tailed nights (`--outliers`, a share
of nights 10% off). Each night's cell value is the geometric mean of its passes, as in
cells.csv; `benchreport.stats.history.history` then gives the dated verdicts.

Measured: false regression (and improvement) verdicts per seat-year on stable seats, with
an exact Poisson 95% CI; the share of seats whose 5% step on night 200 is found on that
night, with a Wilson CI.

    python benchmarks/history_study.py [--seats 40] [--quick] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchreport.stats.history import HistoryRule, history  # noqa: E402

NIGHTS = 365
CELLS = [
    (c, m, s)
    for c in (1, 4, 16, 64)
    for m, s in (
        ("output_tok_s", "mean"),
        ("decode_tok_s_per_stream", "mean"),
        ("ttft_ms", "mean"),
        ("ttft_ms", "p50"),
        ("ttft_ms", "p90"),
    )
]
DATES = pd.date_range("2026-01-01", periods=NIGHTS).strftime("%Y-%m-%d")


def seat_year(rng, *, pass_cv, night_cv, outliers, step=None, step_night=200, passes=5) -> pd.DataFrame:
    """One seat's dated cells for a year (geometric mean of the night's passes)."""
    ps, ns = np.sqrt(np.log1p(pass_cv**2)), np.sqrt(np.log1p(night_cv**2))
    night = rng.normal(0, ns, NIGHTS) if night_cv else np.zeros(NIGHTS)
    if outliers:
        bad = rng.random(NIGHTS) < outliers
        night = night + np.where(bad, np.log(0.9), 0.0)
    rows = []
    for c, metric, stat in CELLS:
        logs = night[:, None] + rng.normal(0, ps, (NIGHTS, passes))
        gm = np.exp(logs.mean(axis=1))
        worse = np.ones(NIGHTS)
        if step is not None:
            worse[step_night:] = 1 - step
        base = 100.0 * c
        est = base * gm * worse if metric != "ttft_ms" else base * gm / worse
        rows += [
            dict(
                seat="S",
                harness="h",
                probe="p",
                workload="decode",
                concurrency=c,
                metric=metric,
                statistic=stat,
                date=d,
                estimate=float(v),
                n_passes=passes,
            )
            for d, v in zip(DATES, est)
        ]
    return pd.DataFrame(rows)


def run(seats: int, *, pass_cv: float, night_cv: float, outliers: float, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    false_reg = false_imp = found = 0
    for _ in range(seats):
        h = history(seat_year(rng, pass_cv=pass_cv, night_cv=night_cv, outliers=outliers), rule=HistoryRule())
        false_reg += int((h["verdict"] == "regression").sum())
        false_imp += int((h["verdict"] == "improvement").sum())
        s = history(
            seat_year(rng, pass_cv=pass_cv, night_cv=night_cv, outliers=outliers, step=0.05), rule=HistoryRule()
        )
        on = s[(s["date"] == DATES[200]) & (s["concurrency"] == 16) & (s["metric"] == "output_tok_s")]
        found += int((on["verdict"] == "regression").any())
    lo, hi = (
        stats.chi2.ppf(0.025, 2 * false_reg) / 2 if false_reg else 0.0,
        stats.chi2.ppf(0.975, 2 * false_reg + 2) / 2,
    )
    flo, fhi = proportion_confint(found, seats, method="wilson")
    return {
        "pass_cv": pass_cv,
        "night_cv": night_cv,
        "outliers": outliers,
        "seat_years": seats,
        "false_regressions_per_seat_year": false_reg / seats,
        "false_regressions_ci": [lo / seats, hi / seats],
        "false_improvements_per_seat_year": false_imp / seats,
        "step_found_on_its_night": found / seats,
        "step_found_ci": [float(flo), float(fhi)],
    }


REGIMES = [(0.01, 0.0, 0.0), (0.01, 0.01, 0.0), (0.05, 0.0, 0.0), (0.01, 0.02, 0.0), (0.01, 0.0, 0.01)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seats", type=int, default=40, help="simulated seat-years per regime")
    ap.add_argument("--quick", action="store_true", help="8 seat-years per regime (for make bench)")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    seats = 8 if args.quick else args.seats
    out = []
    t0 = time.perf_counter()
    for i, (pcv, ncv, outl) in enumerate(REGIMES):
        r = run(seats, pass_cv=pcv, night_cv=ncv, outliers=outl, seed=1000 + i)
        out.append(r)
        print(
            f"pass CV {pcv:.0%}, night CV {ncv:.0%}, outlier nights {outl:.0%}: "
            f"{r['false_regressions_per_seat_year']:.2f} false regressions per seat-year "
            f"[{r['false_regressions_ci'][0]:.2f}, {r['false_regressions_ci'][1]:.2f}], "
            f"{r['false_improvements_per_seat_year']:.2f} false improvements; 5% step found on its night "
            f"{r['step_found_on_its_night']:.0%} [{r['step_found_ci'][0]:.0%}, {r['step_found_ci'][1]:.0%}]",
            file=sys.stderr,
        )
    print(f"{time.perf_counter() - t0:.0f} s", file=sys.stderr)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
