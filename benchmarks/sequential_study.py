"""Sequential study (issue 30, "A sequential plan"): does adding passes and looking again inflate
false verdicts, with `analyse`'s verdict and with `benchreport plan`?

Usage:  nice -n 10 python benchmarks/sequential_study.py [--replicates R] [--power-replicates P]
            [--pass-cv C] [--max-passes N] [--spending obf|pocock] [--noise X] [--out FILE.json]

Two seats, one date, one native run file per pass with 100 request records of concurrency 1 in
send order (benchmarks/verdict_study.py's generator; every rate of a pass multiplied by a
lognormal pass factor of CV `--pass-cv`, default 8%). A replicate draws `--max-passes` passes per
seat once, then looks after 3, 4, ..., max passes per seat: the folder of the first n passes of
each seat is given to the CLI (`benchreport plan DIR --format json --quiet --max-passes N
--seed S`, a subprocess) and the primary row is read. Each row of the plan carries the verdict of
that row in tables/comparisons.csv (`verdict`, the same analysis `benchreport analyse` makes) and
the plan's sequential `status`. Two users are followed:

(a) peeking at `analyse`: stop at the first look whose verdict is better/worse;
(b) following `plan`: stop at the first look whose status is settled (better, worse or within
    noise), else at the maximum.

Null (identical seats): the share of replicates that ever got a false better/worse, and the same
at the last look alone (a fixed-sample design at the maximum). Power (seat-01 truly 10% faster):
the share settled `better`, and the passes per seat used. Rates with Wilson 95% intervals
(statsmodels proportion_confint). Results and the command: docs/statistics.md.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from verdict_study import Model, single_stream_run, wilson  # noqa: E402

DATE = "2026-12-01"
FIRST = 3
MODEL = Model(n_requests=100, concurrencies=(1,))
CLI = Path(sys.executable).parent / "benchreport"
CALLS = ("better", "worse")


def write_passes(folder: Path, effect: float, rep: int, pass_cv: float, max_passes: int) -> list[list[Path]]:
    """Every pass of both seats of one replicate; returns each seat's files in pass order."""
    ss = np.random.SeedSequence([20261206, zlib.crc32(f"seq:{effect}:{pass_cv}".encode()), rep])
    rng = np.random.default_rng(ss)
    sd_pass = math.sqrt(math.log1p(pass_cv**2))
    files = []
    for s in range(2):
        seat, speed, mine = f"seat-{s:02d}", (effect if s == 1 else 1.0), []
        for p in range(1, max_passes + 1):
            factor = math.exp(sd_pass * rng.standard_normal())
            run = single_stream_run(
                rng,
                MODEL,
                seat=seat,
                incumbent=s == 0,
                run_id=f"{seat}-p{p}",
                date=DATE,
                pass_no=p,
                factor=factor,
                speed=speed,
            )
            path = folder / f"{seat}-p{p}.json"
            path.write_text(json.dumps(run, separators=(",", ":")))
            mine.append(path)
        files.append(mine)
    return files


def look(files: list[list[Path]], n: int, tmp: Path, args, seed: int) -> dict:
    """The primary row of `benchreport plan` on the first n passes of each seat."""
    folder = tmp / f"look-{n}"
    folder.mkdir()
    for seat in files:
        for f in seat[:n]:
            shutil.copy(f, folder / f.name)
    out = subprocess.run(
        [
            str(CLI),
            "plan",
            str(folder),
            "--format",
            "json",
            "--quiet",
            "--max-passes",
            str(args.max_passes),
            "--spending",
            args.spending,
            "--seed",
            str(seed),
            *(["--noise", str(args.noise)] if args.noise is not None else []),
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    rows = [r for r in json.loads(out) if r.get("primary")]
    shutil.rmtree(folder)
    r = rows[0] if rows else {}
    return {
        "n": n,
        "verdict": r.get("verdict"),
        "status": r.get("status"),
        "metric": r.get("metric"),
        "more": r.get("more_per_seat"),
    }


def replicate(effect: float, rep: int, args) -> dict:
    """Look after every pass from FIRST to the maximum; stop once both users have stopped."""
    with tempfile.TemporaryDirectory(prefix="sequential-study-") as tmp:
        tmp = Path(tmp)
        pool = tmp / "pool"
        pool.mkdir()
        files = write_passes(pool, effect, rep, args.pass_cv, args.max_passes)
        seed = rep + 1
        peek = plan = None
        looks = []
        for n in range(FIRST, args.max_passes + 1):
            r = look(files, n, tmp, args, seed)
            looks.append(r)
            if peek is None and r["verdict"] in CALLS:
                peek = {"n": n, "call": r["verdict"]}
            if plan is None and str(r["status"]).startswith("settled"):
                plan = {"n": n, "call": str(r["status"]).split(": ", 1)[1]}
            if peek is not None and plan is not None:
                break
        last = looks[-1] if looks[-1]["n"] == args.max_passes else None
        return {
            "peek": peek,
            "plan": plan,
            "last_verdict": last["verdict"] if last else None,
            "looks": len(looks),
            "metric": looks[0]["metric"],
        }


def summarise(res: list[dict], effect: float, max_passes: int) -> dict:
    n = len(res)
    peek_call = sum(r["peek"] is not None for r in res)
    plan_call = sum(r["plan"] is not None and r["plan"]["call"] in CALLS for r in res)
    out = {
        "n": n,
        "metric": sorted({r["metric"] for r in res}),
        "peek_any_call": (peek_call, *wilson(peek_call, n)),
        "plan_call": (plan_call, *wilson(plan_call, n)),
        "plan_within_noise": sum(r["plan"] is not None and r["plan"]["call"] == "within noise" for r in res),
        "peek_mean_passes": float(np.mean([r["peek"]["n"] if r["peek"] else max_passes for r in res])),
        "plan_mean_passes": float(np.mean([r["plan"]["n"] if r["plan"] else max_passes for r in res])),
    }
    if effect == 1.0:
        fixed = sum(r["last_verdict"] in CALLS for r in res if r["last_verdict"] is not None)
        known = sum(r["last_verdict"] is not None for r in res)
        out["fixed_at_max"] = (fixed, *wilson(fixed, known)) if known else None
    else:
        good = sum(r["plan"] is not None and r["plan"]["call"] == "better" for r in res)
        out["plan_better"] = (good, *wilson(good, n))
        out["plan_wrong_direction"] = sum(r["plan"] is not None and r["plan"]["call"] == "worse" for r in res)
        out["peek_wrong_direction"] = sum(r["peek"] is not None and r["peek"]["call"] == "worse" for r in res)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicates", type=int, default=150)
    ap.add_argument("--power-replicates", type=int, default=60)
    ap.add_argument("--pass-cv", type=float, default=0.08)
    ap.add_argument("--max-passes", type=int, default=10)
    ap.add_argument("--spending", choices=["obf", "pocock"], default="obf")
    ap.add_argument(
        "--noise",
        type=float,
        default=None,
        help="the noise band given to the CLI (default: its own, 0.02); 0 shows the peeking alone",
    )
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out" / "sequential_study.json")
    args = ap.parse_args()
    results, t0 = {"command": " ".join(["python", "benchmarks/sequential_study.py", *sys.argv[1:]])}, time.time()
    for effect, reps in ((1.0, args.replicates), (1.10, args.power_replicates)):
        if not reps:
            continue
        res = [replicate(effect, rep, args) for rep in range(reps)]
        key = f"effect={effect:g}"
        results[key] = summarise(res, effect, args.max_passes)
        results[key + " records"] = res
        print(key, json.dumps(results[key]), f"{time.time() - t0:.0f} s", flush=True)
    results["elapsed_s"] = time.time() - t0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
