"""Day-effect study (issue 43, "Day effects in every interval"): a seat measured on several dates.

Usage:  nice -n 10 python benchmarks/day_effect_study.py [--replicates 100] [--power-replicates 60]
            [--null-sigma-b 0.05=400 ...] [--before-tree DIR] [--out FILE.json]

Two seats, each measured on 3 dates with 3 passes a date (one native run file per pass, 100
request records of concurrency 1 in send order: benchmarks/session_study.py's `write_replicate`).
Every rate of a pass is multiplied by the seat's day factor exp(sigma_b z_day) (drawn per seat and
date) and a pass factor (lognormal, CV 2%). Each replicate is analysed through the command line,
`benchreport analyse DIR --out OUT --quiet` (the argument list handed to `benchreport.cli.main` in
one long-lived child process per code tree, so the imports are paid once), and counted:

* coverage: the cell decode_tok_s_per_stream / mean of each seat (tables/cells.csv) against the
  seat's long-run level, the request-level mean decode rate at day and pass factor 1 (closed
  form of the generator: decode_tok_s * speed * exp(sd_tpot^2 / 2)); two cells a replicate;
* false verdicts (identical seats): `better`/`worse` on the primary baseline row, and on any
  baseline row of the report;
* power (seat-01 truly 10% faster): `better` on the primary row.

`--null-sigma-b SIGMA=N` (repeatable) runs only the null regimes named, N replicates each (the
power regime then only when `--power-replicates` is given above 0); the rows that made a false
verdict are counted by metric and statistic. `--before-tree DIR` analyses the same files with the code in DIR/analysis too (make it with
`git archive <commit> analysis | tar -x -C DIR`). Rates carry Wilson 95% intervals. Results and
the command: docs/statistics.md ("Day effects in the cell interval").
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from session_study import MODEL, write_replicate  # noqa: E402
from verdict_study import wilson  # noqa: E402

CELL = ("decode_tok_s_per_stream", "mean")
#: the child: reads one JSON argument list a line, runs the CLI's main on it, answers its exit code
DRIVER = (
    "import json, sys\n"
    "from benchreport.cli import main\n"
    "for line in sys.stdin:\n"
    "    rc = main(json.loads(line))\n"
    "    print(rc, flush=True)\n"
)


class Cli:
    """`benchreport` in a child process on the code in `tree`/analysis (this checkout's without)."""

    def __init__(self, tree: Path | None):
        env = dict(os.environ)
        env["PYTHONPATH"] = str((tree or ROOT) / "analysis")
        self.proc = subprocess.Popen(
            [sys.executable, "-c", DRIVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )

    def __call__(self, *argv: str) -> int:
        self.proc.stdin.write(json.dumps(list(argv)) + "\n")
        self.proc.stdin.flush()
        return int(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def truth(speed: float) -> float:
    """The seat's long-run mean decode rate (day and pass factor 1), closed form of the generator."""
    return MODEL.decode_tok_s * speed * math.exp(MODEL.sd_tpot**2 / 2)


def outcome(out: Path, effect: float) -> dict:
    """What one analysis says: coverage of each seat's cell, the primary and any verdicts."""
    cells = pd.read_csv(out / "tables" / "cells.csv")
    cells = cells[(cells["metric"] == CELL[0]) & (cells["statistic"] == CELL[1])]
    covered = []
    for seat, lo, hi in zip(cells["seat"], cells["ci_low"], cells["ci_high"]):
        t = truth(effect if seat == "seat-01" else 1.0)
        covered.append(bool(lo <= t <= hi) if math.isfinite(lo) and math.isfinite(hi) else None)
    comp = pd.read_csv(out / "tables" / "comparisons.csv")
    rows = comp[comp["kind"] == "baseline"]
    primary = rows[rows["primary"].astype(str) == "True"]
    return {
        "covered": covered,
        "routes": sorted(set(cells["ci_route"].fillna("").astype(str))),
        "primary": str(primary["verdict"].iloc[0]) if len(primary) else "none",
        "any_call": bool(rows["verdict"].isin(["better", "worse"]).any()),
        "called": sorted(
            f"{m}/{st}"
            for m, st, v in zip(rows["metric"], rows["statistic"], rows["verdict"])
            if v in ("better", "worse")
        ),
    }


def summarise(res: list[dict], effect: float) -> dict:
    cov = [c for r in res for c in r["covered"] if c is not None]
    k_cov = sum(cov)
    out = {
        "replicates": len(res),
        "coverage": (k_cov, len(cov), *wilson(k_cov, len(cov))),
        "routes": sorted({x for r in res for x in r["routes"]}),
    }
    if effect == 1.0:
        k = sum(r["primary"] in ("better", "worse") for r in res)
        k_any = sum(r["any_call"] for r in res)
        out.update(false_primary=(k, *wilson(k, len(res))), false_any=(k_any, *wilson(k_any, len(res))))
        out["called_rows"] = dict(Counter(c for r in res for c in r["called"]).most_common())
    else:
        k = sum(r["primary"] == "better" for r in res)
        out.update(power=(k, *wilson(k, len(res))), wrong=sum(r["primary"] == "worse" for r in res))
    return out


def run_regime(sigma_b: float, effect: float, reps: int, clis: dict) -> dict:
    res: dict[str, list] = {side: [] for side in clis}
    for rep in range(reps):
        with tempfile.TemporaryDirectory(prefix="day-effect-") as tmp:
            folder = Path(tmp) / "runs"
            folder.mkdir()
            write_replicate(folder, sigma_b, effect, rep)
            for side, cli in clis.items():
                out = Path(tmp) / side
                rc = cli("analyse", str(folder), "--out", str(out), "--quiet")
                if rc != 0:
                    raise SystemExit(f"benchreport analyse exited {rc} ({side}, sigma_b {sigma_b}, rep {rep})")
                res[side].append(outcome(out, effect))
    return {side: summarise(r, effect) for side, r in res.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicates", type=int, default=100)
    ap.add_argument("--power-replicates", type=int, default=60)
    ap.add_argument("--null-sigma-b", action="append", default=[], metavar="SIGMA=N", help="null regimes only")
    ap.add_argument("--before-tree", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out" / "day_effect_study.json")
    args = ap.parse_args()
    clis = {"after": Cli(None)}
    if args.before_tree is not None:
        clis["before"] = Cli(args.before_tree)
    results = {}
    try:
        regimes = [(0.0, 1.0, args.replicates), (0.03, 1.0, args.replicates), (0.05, 1.0, args.replicates)]
        if args.null_sigma_b:
            regimes = [(float(a), 1.0, int(n)) for a, n in (x.split("=") for x in args.null_sigma_b)]
        if args.power_replicates > 0:
            regimes.append((0.05, 1.10, args.power_replicates))
        for sigma_b, effect, reps in regimes:
            key = f"sigma_b={sigma_b:g} effect={effect:g}"
            results[key] = run_regime(sigma_b, effect, reps, clis)
            print(key, json.dumps(results[key]), flush=True)
    finally:
        for cli in clis.values():
            cli.close()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
