"""Session study (issue 30, "Levels of variance"): seat-versus-seat verdicts when days differ.

Usage:  nice -n 10 python benchmarks/session_study.py [--replicates R] [--power-replicates P]
            [--before-tree DIR] [--out FILE.json]

Two seats, each measured on 3 dates with 3 passes a date (one native run file per pass, request
records in send order: benchmarks/verdict_study.py's generator, 100 requests of concurrency 1 a
pass). Every rate of a pass is multiplied by the seat's day factor exp(sigma_b z_day) and the pass
factor (lognormal, CV 2%); day factors are drawn per seat and date, independently. Each replicate
is analysed through the CLI (`benchreport analyse DIR --out OUT --quiet --n-boot 200 --seed S`),
and the baseline rows of tables/comparisons.csv are read:

* null (identical seats, sigma_b 3% and 5%): a false verdict is `better`/`worse` on the primary
  row, and "any" is one on any baseline row of the report;
* power (seat-01 truly 10% faster, same sigma_b): `better` on the primary row.

`--before-tree DIR` also analyses every replicate with the code in DIR/analysis (the same CLI
with PYTHONPATH=DIR/analysis; make it with `git archive <commit> analysis | tar -x -C DIR`), so
before and after see the same files. Rates with Wilson 95% intervals
(statsmodels proportion_confint). Results and the command: docs/statistics.md.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from verdict_study import Model, single_stream_run, wilson  # noqa: E402

DATES = ("2026-11-29", "2026-11-30", "2026-12-01")
PASSES = 3
PASS_CV = 0.02
MODEL = Model(n_requests=100, concurrencies=(1,))
CLI = Path(sys.executable).parent / "benchreport"


def write_replicate(folder: Path, sigma_b: float, effect: float, rep: int) -> int:
    """One replicate's run files; returns the analysis seed."""
    ss = np.random.SeedSequence([20261206, zlib.crc32(f"{sigma_b}:{effect}".encode()), rep])
    rng = np.random.default_rng(ss)
    sd_pass = math.sqrt(math.log1p(PASS_CV**2))
    for s in range(2):
        seat = f"seat-{s:02d}"
        speed = effect if s == 1 else 1.0
        for date in DATES:
            day = math.exp(sigma_b * rng.standard_normal())
            for p in range(1, PASSES + 1):
                factor = day * math.exp(sd_pass * rng.standard_normal())
                run = single_stream_run(
                    rng,
                    MODEL,
                    seat=seat,
                    incumbent=s == 0,
                    run_id=f"{seat}-{date}-p{p}",
                    date=date,
                    pass_no=p,
                    factor=factor,
                    speed=speed,
                )
                (folder / f"{seat}-{date}-p{p}.json").write_text(json.dumps(run, separators=(",", ":")))
    return int(rng.integers(1, 2**31 - 1))


def analyse(folder: Path, out: Path, seed: int, tree: Path | None) -> pd.DataFrame:
    """The baseline rows of comparisons.csv from the CLI (the code in `tree`/analysis when given)."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = str(tree / "analysis")
    subprocess.run(
        [str(CLI), "analyse", str(folder), "--out", str(out), "--quiet", "--n-boot", "200", "--seed", str(seed)],
        check=True,
        env=env,
    )
    c = pd.read_csv(out / "tables" / "comparisons.csv")
    return c[c["kind"] == "baseline"]


def outcome(rows: pd.DataFrame) -> dict:
    primary = rows[rows["primary"].astype(str) == "True"]
    v = primary["verdict"].iloc[0] if len(primary) else "none"
    return {
        "primary": v,
        "any_call": bool(rows["verdict"].isin(["better", "worse"]).any()),
        "levels": str(primary["variance_levels"].iloc[0]) if len(primary) and "variance_levels" in primary else "",
        "metric": str(primary["metric"].iloc[0]) if len(primary) else "",
    }


def run_config(sigma_b: float, effect: float, reps: int, tree: Path | None) -> dict:
    res = {"after": [], "before": []}
    for rep in range(reps):
        with tempfile.TemporaryDirectory(prefix="session-study-") as tmp:
            folder = Path(tmp) / "runs"
            folder.mkdir()
            seed = write_replicate(folder, sigma_b, effect, rep)
            res["after"].append(outcome(analyse(folder, Path(tmp) / "after", seed, None)))
            if tree is not None:
                res["before"].append(outcome(analyse(folder, Path(tmp) / "before", seed, tree)))
    return res


def summarise(res: list[dict], effect: float) -> dict:
    n = len(res)
    if not n:
        return {}
    if effect == 1.0:
        k = sum(r["primary"] in ("better", "worse") for r in res)
        k_any = sum(r["any_call"] for r in res)
        return {
            "n": n,
            "false_primary": (k, *wilson(k, n)),
            "false_any": (k_any, *wilson(k_any, n)),
            "levels": sorted({r["levels"] for r in res}),
            "metric": sorted({r["metric"] for r in res}),
        }
    k = sum(r["primary"] == "better" for r in res)
    wrong = sum(r["primary"] == "worse" for r in res)
    return {
        "n": n,
        "power": (k, *wilson(k, n)),
        "wrong_direction": wrong,
        "levels": sorted({r["levels"] for r in res}),
        "metric": sorted({r["metric"] for r in res}),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicates", type=int, default=200)
    ap.add_argument("--power-replicates", type=int, default=100)
    ap.add_argument("--before-tree", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out" / "session_study.json")
    args = ap.parse_args()
    results = {}
    for sigma_b in (0.03, 0.05):
        for effect, reps in ((1.0, args.replicates), (1.10, args.power_replicates)):
            res = run_config(sigma_b, effect, reps, args.before_tree)
            key = f"sigma_b={sigma_b:g} effect={effect:g}"
            results[key] = {side: summarise(r, effect) for side, r in res.items()}
            print(key, json.dumps(results[key]), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
