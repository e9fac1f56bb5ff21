"""Sequential study (issue 30, "A sequential plan"; issue 43, its futility rule and less strict
early boundary): does adding passes and looking again inflate false verdicts, with `analyse`'s
verdict and with `benchreport plan`, and how many passes does each use?

Usage:  nice -n 10 python benchmarks/sequential_study.py [--replicates R] [--power-replicates P]
            [--effects 1.05,1.10] [--pass-cv C] [--requests N] [--max-passes N] [--noise X]
            [--check-before K] [--out FILE.json]

Two seats, one date, one native run file per pass with `--requests` request records (default 100)
of concurrency 1 in send order (benchmarks/verdict_study.py's generator; every rate of a pass
multiplied by a lognormal pass factor of CV `--pass-cv`, default 8%). A replicate draws
`--max-passes` passes per seat once, then looks after 3, 4, ..., max passes per seat: the first n
run files of each seat are given to the CLI (`benchreport plan FILES --format json --quiet
--max-passes N --seed S`, run in this process through `benchreport.cli.main`, so the libraries
are imported once) and the primary row is read. Each row carries the verdict of that row in
tables/comparisons.csv (`verdict`, the same analysis `benchreport analyse` makes) and the plan's
sequential `status`. Four users are followed:

(a) peeking at `analyse`: stop at the first look whose verdict is better/worse;
(b) the plan before issue 43 (`--spending obf --futility-effect 0`: O'Brien-Fleming-type spending,
    no futility rule): stop at the first settled status;
(c) the plan now (the defaults: Hwang-Shih-DeCani spending at gamma -4, futility at a 10% planned
    change and 10% conditional power): stop at the first settled or `stop:` status;
(d) `analyse` read once, at the maximum.

The plan's rule is a function of the row's ratio, standard error, df and passes, which the CLI's
row carries; (b)'s status is read from the same row by `benchreport.stats.sequential.sequential_look`
under the old rule, and the first `--check-before` replicates also run the CLI with
`--spending obf --futility-effect 0` at every look and stop the study if a status differs.

Why the old study was slow (46 min for 210 replicates): each look was a new `benchreport`
process (about 4 s of imports and start-up of a 6 s call), the run files were copied into a
folder per look, and statsmodels' Holm adjustment ran a full garbage collection on every call
(about 1 s of an analysis; benchreport now computes Holm itself). Now a look costs about 0.7 s.

Rates with Wilson 95% intervals (statsmodels proportion_confint). Results and the command:
docs/statistics.md, "A sequential plan", before and after.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import sys
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from verdict_study import Model, single_stream_run, wilson  # noqa: E402

from benchreport.cli import main as cli_main  # noqa: E402
from benchreport.columns import higher_is_better  # noqa: E402
from benchreport.stats.sequential import Rule, sequential_look  # noqa: E402

DATE = "2026-12-01"
FIRST = 3
CALLS = ("better", "worse")
USERS = ("peek", "before", "after")
#: the plan before issue 43, as CLI options
BEFORE_OPTIONS = ("--spending", "obf", "--futility-effect", "0")


def write_passes(folder: Path, effect: float, rep: int, args) -> list[list[Path]]:
    """Every pass of both seats of one replicate; returns each seat's files in pass order."""
    ss = np.random.SeedSequence([20261206, zlib.crc32(f"seq:{effect}:{args.pass_cv}".encode()), rep])
    rng = np.random.default_rng(ss)
    model = Model(n_requests=args.requests, concurrencies=(1,))
    sd_pass = math.sqrt(math.log1p(args.pass_cv**2))
    files = []
    for s in range(2):
        seat, speed, mine = f"seat-{s:02d}", (effect if s == 1 else 1.0), []
        for p in range(1, args.max_passes + 1):
            factor = math.exp(sd_pass * rng.standard_normal())
            run = single_stream_run(
                rng,
                model,
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


def plan_row(files: list[list[Path]], n: int, args, seed: int, extra=()) -> dict:
    """The primary row of `benchreport plan` (in this process) on the first n passes of each seat."""
    argv = ["plan", *(str(f) for seat in files for f in seat[:n]), "--format", "json", "--quiet"]
    argv += ["--max-passes", str(args.max_passes), "--seed", str(seed), *extra]
    argv += ["--noise", str(args.noise)] if args.noise is not None else []
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli_main(argv)
    if code != 0:
        raise RuntimeError(f"benchreport {' '.join(argv[:1])} ... exited {code}")
    rows = [r for r in json.loads(out.getvalue()) if r.get("primary")]
    return rows[0] if rows else {}


def before_status(row: dict, args) -> str:
    """The status the plan before issue 43 gives the same row (O'Brien-Fleming type, no futility)."""
    noise = 0.02 if args.noise is None else float(args.noise)
    rule = Rule(float(row["alpha"]), args.max_passes, kind="obf", noise=noise, futility_effect=0.0)
    d = math.log(row["plan_ratio"]) if row.get("plan_ratio") else math.nan
    se, df = (float(row[k]) if row.get(k) is not None else math.nan for k in ("log_se", "df"))
    higher = higher_is_better(str(row["metric"]))
    return sequential_look(d, se, df, row["baseline_n"], row["candidate_n"], rule, higher_is_better=higher).status


def _stop(status, n: int) -> dict | None:
    status = str(status)
    if status.startswith("settled"):
        return {"n": n, "call": status.split(": ", 1)[1]}
    if status.startswith("stop:"):
        return {"n": n, "call": "futility"}
    return None


def replicate(effect: float, rep: int, args) -> dict:
    """Look after every pass from FIRST to the maximum; stop once every user has stopped."""
    with tempfile.TemporaryDirectory(prefix="sequential-study-") as tmp:
        files = write_passes(Path(tmp), effect, rep, args)
        seed, stops, looks = rep + 1, dict.fromkeys(USERS), []
        for n in range(FIRST, args.max_passes + 1):
            row = plan_row(files, n, args, seed)
            old = before_status(row, args)
            if rep < args.check_before and old != plan_row(files, n, args, seed, BEFORE_OPTIONS)["status"]:
                raise AssertionError(
                    f"the old rule's status differs from the CLI's at effect {effect}, rep {rep}, n {n}"
                )
            looks.append({"n": n, "verdict": row.get("verdict"), "after": row.get("status"), "before": old})
            if stops["peek"] is None and row.get("verdict") in CALLS:
                stops["peek"] = {"n": n, "call": row["verdict"]}
            stops["before"] = stops["before"] or _stop(old, n)
            stops["after"] = stops["after"] or _stop(row.get("status"), n)
            if all(stops.values()):
                break
        last = looks[-1] if looks[-1]["n"] == args.max_passes else None
        return {**stops, "last_verdict": last["verdict"] if last else None, "metric": row.get("metric")}


def _passes(res: list[dict], user: str, max_passes: int) -> float:
    return float(np.mean([r[user]["n"] if r[user] else max_passes for r in res]))


def summarise(res: list[dict], effect: float, max_passes: int) -> dict:
    """Per user: the share that called a difference (better/worse), called better, called worse,
    stopped for futility; the mean passes per seat used (the maximum when never stopped)."""
    n, out = len(res), {"n": len(res), "metric": sorted({str(r["metric"]) for r in res})}
    for user in USERS:
        calls = [r[user]["call"] if r[user] else None for r in res]
        k = sum(c in CALLS for c in calls)
        out[user] = {
            "called": (k, *wilson(k, n)),
            "better": sum(c == "better" for c in calls),
            "worse": sum(c == "worse" for c in calls),
            "within_noise": sum(c == "within noise" for c in calls),
            "futility": sum(c == "futility" for c in calls),
            "mean_passes": _passes(res, user, max_passes),
        }
    known = [r["last_verdict"] for r in res if r["last_verdict"] is not None]
    k = sum(v in CALLS for v in known)
    out["fixed_at_max"] = {"called": (k, *wilson(k, len(known))), "n": len(known)} if known else None
    return out


def _run(args) -> dict:
    """Every replicate of every effect, each appended to `--out`'s .records.jsonl as it ends (a
    study cut short keeps what it ran: `--summarise` reads them back)."""
    records = args.out.with_suffix(".records.jsonl")
    plan = [(1.0, args.replicates)] + [(float(e), args.power_replicates) for e in args.effects.split(",") if e]
    t0 = time.time()
    with records.open("a") as sink:
        for effect, reps in plan:
            for rep in range(reps):
                record = {"effect": effect, "rep": rep, **replicate(effect, rep, args)}
                sink.write(json.dumps(record) + "\n")
                sink.flush()
            print(f"effect={effect:g}: {reps} replicates, {time.time() - t0:.0f} s", flush=True)
    return {"elapsed_s": time.time() - t0}


def _summary(paths: list[Path], max_passes: int) -> dict:
    """The summary of every record in `paths` (.records.jsonl), per effect."""
    by_effect: dict[float, dict] = {}
    for path in paths:
        for line in path.read_text().splitlines():
            r = json.loads(line)
            by_effect.setdefault(r["effect"], {})[r["rep"]] = r
    return {f"effect={e:g}": summarise(list(res.values()), e, max_passes) for e, res in sorted(by_effect.items())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicates", type=int, default=200, help="replicates of two identical seats")
    ap.add_argument("--power-replicates", type=int, default=100, help="replicates of each --effects")
    ap.add_argument("--effects", default="1.05,1.10", help="seat-01's true speed ratios (comma-separated)")
    ap.add_argument("--pass-cv", type=float, default=0.08)
    ap.add_argument("--requests", type=int, default=100, help="request records per pass")
    ap.add_argument("--max-passes", type=int, default=10)
    ap.add_argument("--noise", type=float, default=None, help="the noise band given to the CLI (default: its own)")
    ap.add_argument("--check-before", type=int, default=10, help="replicates whose old-rule status is checked")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out" / "sequential_study.json")
    ap.add_argument(
        "--summarise", nargs="+", type=Path, default=None, metavar="RECORDS", help="only summarise .records.jsonl files"
    )
    args = ap.parse_args()
    results = {"command": " ".join(["python", "benchmarks/sequential_study.py", *sys.argv[1:]])}
    if not args.summarise:
        results.update(_run(args))
    results.update(_summary(args.summarise or [args.out.with_suffix(".records.jsonl")], args.max_passes))
    print(json.dumps({k: v for k, v in results.items() if k.startswith("effect")}, indent=1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
