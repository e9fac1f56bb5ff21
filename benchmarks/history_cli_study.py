"""History verdicts by simulation through the CLI, on request-level nightly run stores.

Each replicate writes a run store of native run files, one a night, seat and pass: every
pass holds `--requests` requests in send order (start_ms), each with a lognormal TTFT and
inter-token latency around the seat's level, times a pass factor (lognormal, CV
`--pass-cv`) and a night factor shared by the night's passes: heavy-tailed, `--night-scale`
x a Student t with 3 degrees of freedom. Seats:

* ``stable-*``: no change (false alarms per seat-year);
* ``step3``, ``step5``, ``step10``: every request 3, 5 or 10% slower from night `--step-night` on;
* ``drift``: 0.02% slower every night from night 0 (7% over a year).

The store is ingested (`benchreport ingest RUNS --store S`) and analysed once
(`benchreport analyse --store S --out O`); tables/history.csv is read. Measured, over
replicates and both 3 and 5 passes a night:

* false alarms per stable seat-year: dates with any regression or improvement on a stable
  seat (exact Poisson 95% CI);
* each step found (a regression of the seat's headline cell, decode throughput per stream, on or after
  the step night: Wilson 95% CI) and the delay in nights, and what it was called;
* the drift found, the night of the first regression and its change_kind;
* the share of a stable seat's cell-nights that are within_noise.

    python benchmarks/history_cli_study.py [--quick] [--replicates 2] [--nights 365] [--json OUT]

Same arguments, same numbers (every random draw is seeded by replicate, seat, night, pass).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

CHANGED = {"step3": ("step", 0.03), "step5": ("step", 0.05), "step10": ("step", 0.10), "drift": ("drift", 0.0002)}


def seats_of(n_stable: int = 3, *, changed: bool = True) -> dict:
    """The seats of a store: `n_stable` stable ones, and the changed ones unless `changed` is False."""
    out = {f"stable-{i}": None for i in range(n_stable)}
    return {**out, **CHANGED} if changed else out


SEATS = seats_of()
HEADLINE = ("decode_tok_s_per_stream", "mean")  # the throughput a request-level pass gives


def _nights(n: int) -> list[str]:
    d0 = dt.date(2026, 1, 1)
    return [(d0 + dt.timedelta(days=i)).isoformat() for i in range(n)]


def _slowdown(change, night: int, step_night: int) -> float:
    """The factor every latency of this seat is multiplied by on this night (>= 1)."""
    if change is None:
        return 1.0
    kind, size = change
    if kind == "step":
        return 1.0 / (1.0 - size) if night >= step_night else 1.0
    return float(np.exp(size * night))


def _pass_json(rng, seat: str, date: str, p: int, factor: float, requests: int) -> str:
    """One pass: `requests` requests in send order, every latency times `factor`."""
    ttft = 80.0 * factor * rng.lognormal(0.0, 0.2, requests)
    itl = 12.0 * factor * rng.lognormal(0.0, 0.05, requests)
    out = rng.integers(200, 257, requests)
    e2e = ttft + itl * (out - 1)
    start = np.cumsum(e2e) - e2e
    reqs = ",".join(
        f'{{"workload":"decode","concurrency":1,"prompt_tokens":512,"output_tokens":{o},"ttft_ms":{t:.3f},'
        f'"e2e_latency_ms":{e:.3f},"itl_ms":{i:.4f},"finish_reason":"stop","start_ms":{s:.3f}}}'
        for o, t, e, i, s in zip(out.tolist(), ttft.tolist(), e2e.tolist(), itl.tolist(), start.tolist())
    )
    head = {
        "format": "benchreport.run/1",
        "run_id": f"{seat}-{date}-p{p}",
        "date": date,
        "seat": {"id": seat, "model": "Model-A", "role": "candidate", "placement": {"nodes": 1, "gpus_per_node": 1}},
        "harness": {"name": "in-house", "version": "1.0", "probe": "nightly", "max_tokens": 256},
        "pass": p,
        "warmup_excluded": True,
    }
    return json.dumps(head, separators=(",", ":"))[:-1] + ',"requests":[' + reqs + "]}"


def write_store_runs(
    root: Path,
    *,
    seed: int,
    nights: int,
    passes: int,
    requests: int,
    pass_cv: float,
    night_scale: float,
    step_night: int,
    seats: dict = SEATS,
) -> None:
    """The native run files of one replicate, one folder a night."""
    ps = float(np.sqrt(np.log1p(pass_cv**2)))
    for k, date in enumerate(_nights(nights)):
        folder = root / date
        folder.mkdir(parents=True, exist_ok=True)
        for i, (seat, change) in enumerate(seats.items()):
            rng = np.random.default_rng([seed, i, k])
            night = night_scale * float(rng.standard_t(3))
            slow = _slowdown(change, k, step_night) * float(np.exp(night))
            for p in range(1, passes + 1):
                factor = slow * float(np.exp(rng.normal(0.0, ps)))
                (folder / f"{seat}-p{p}.json").write_text(
                    _pass_json(rng, seat, date, p, factor, requests), encoding="utf-8"
                )


def _cli(*args) -> None:
    exe = Path(sys.executable).with_name("benchreport")
    r = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True)
    if r.returncode not in (0, 3):
        raise RuntimeError(f"benchreport {' '.join(map(str, args[:1]))} exit {r.returncode}: {r.stderr[-2000:]}")


def analyse_replicate(work: Path, **kw) -> pd.DataFrame:
    """Write, ingest and analyse one replicate; its tables/history.csv."""
    runs, store, out = work / "runs", work / "store", work / "out"
    write_store_runs(runs, **kw)
    _cli("ingest", runs, "--store", store, "--quiet")
    _cli("analyse", "--store", store, "--out", out, "--quiet")
    return pd.read_csv(out / "tables" / "history.csv")


def score(h: pd.DataFrame, *, step_night: int, dates: list[str]) -> dict:
    """What one replicate's history says of each seat."""
    decided = h["verdict"].isin(["regression", "improvement"])
    out = {
        "false_alarm_dates": 0,
        "false_alarm_kinds": {},
        "stable_rows": 0,
        "stable_within": 0,
        "steps": {},
        "drift": None,
        "n_stable": 0,
    }
    for seat in sorted(set(h["seat"].astype(str))):
        mine = h[h["seat"] == seat]
        if seat.startswith("stable"):
            out["n_stable"] += 1
            alarms = mine[decided[mine.index]].drop_duplicates("date")
            out["false_alarm_dates"] += len(alarms)
            for kind in alarms.get("change_kind", pd.Series(["(none)"] * len(alarms))).fillna("(none)"):
                out["false_alarm_kinds"][str(kind)] = out["false_alarm_kinds"].get(str(kind), 0) + 1
            ok = mine["verdict"] != "insufficient_data"
            out["stable_rows"] += int(ok.sum())
            out["stable_within"] += int((mine.loc[ok, "verdict"] == "within_noise").sum())
            continue
        head = mine[(mine["metric"] == HEADLINE[0]) & (mine["statistic"] == HEADLINE[1])]
        first = step_night if seat.startswith("step") else 0
        hit = head[(head["verdict"] == "regression") & (head["date"] >= dates[first])]
        found = None
        if len(hit):
            r = hit.iloc[0]
            found = {
                "night": dates.index(r["date"]),
                "kind": str(r.get("change_kind", "")),
                "change": float(r["change"]),
            }
        if seat.startswith("step"):
            out["steps"][seat] = found
        else:
            out["drift"] = found
    out["has_drift"] = "drift" in set(h["seat"].astype(str))
    return out


def summarise(results: list[dict], *, nights: int, step_night: int) -> dict:
    """Poisson and Wilson intervals over the replicates of one setting."""
    seat_years = sum(r["n_stable"] for r in results) * nights / 365.0
    fa = sum(r["false_alarm_dates"] for r in results)
    lo = stats.chi2.ppf(0.025, 2 * fa) / 2 if fa else 0.0
    hi = stats.chi2.ppf(0.975, 2 * fa + 2) / 2
    rows = sum(r["stable_rows"] for r in results)
    kinds: dict = {}
    for r in results:
        for kind, n in r["false_alarm_kinds"].items():
            kinds[kind] = kinds.get(kind, 0) + n
    out = {
        "stable_seat_years": seat_years,
        "false_alarms": fa,
        "false_alarms_per_seat_year": fa / seat_years,
        "false_alarms_ci": [lo / seat_years, hi / seat_years],
        "false_alarm_kinds": kinds,
        "stable_within_noise": sum(r["stable_within"] for r in results) / rows if rows else float("nan"),
    }
    for seat in ("step3", "step5", "step10"):
        if not all(seat in r["steps"] for r in results):
            continue
        hits = [r["steps"][seat] for r in results]
        n, k = len(hits), sum(x is not None for x in hits)
        wl, wh = proportion_confint(k, n, method="wilson")
        delays = [x["night"] - step_night for x in hits if x]
        out[seat] = {
            "found": k,
            "of": n,
            "ci": [float(wl), float(wh)],
            "delays": delays,
            "kinds": [x["kind"] for x in hits if x],
        }
    drifts = [r["drift"] for r in results]
    if not all(r["has_drift"] for r in results):
        return out
    out["drift"] = {
        "found": sum(x is not None for x in drifts),
        "of": len(drifts),
        "nights": [x["night"] for x in drifts if x],
        "kinds": [x["kind"] for x in drifts if x],
        "changes": [round(x["change"], 3) for x in drifts if x],
    }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicates", type=int, default=2, help="stores per number of passes")
    ap.add_argument("--nights", type=int, default=365)
    ap.add_argument("--requests", type=int, default=32)
    ap.add_argument("--pass-cv", type=float, default=0.02)
    ap.add_argument("--night-scale", type=float, default=0.01)
    ap.add_argument("--passes", type=int, nargs="+", default=[3, 5])
    ap.add_argument("--stable", type=int, default=3, help="stable seats per store")
    ap.add_argument("--stable-only", action="store_true", help="no changed seats (false alarms only)")
    ap.add_argument("--seed", type=int, default=7000, help="first seed (replicates: seed + 100 x passes + r)")
    ap.add_argument("--quick", action="store_true", help="1 replicate of 120 nights at 3 passes")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    nights, reps, passes = (120, 1, [3]) if args.quick else (args.nights, args.replicates, args.passes)
    step_night, dates = nights // 2, _nights(nights)
    report = {}
    for n_passes in passes:
        results = []
        for rep in range(reps):
            t0 = time.perf_counter()
            with tempfile.TemporaryDirectory(prefix="history-study-") as tmp:
                h = analyse_replicate(
                    Path(tmp),
                    seed=args.seed + 100 * n_passes + rep,
                    nights=nights,
                    passes=n_passes,
                    requests=args.requests,
                    pass_cv=args.pass_cv,
                    night_scale=args.night_scale,
                    step_night=step_night,
                    seats=seats_of(args.stable, changed=not args.stable_only),
                )
            results.append(score(h, step_night=step_night, dates=dates))
            print(
                f"{n_passes} passes, replicate {rep}: {time.perf_counter() - t0:.0f} s {json.dumps(results[-1])}",
                file=sys.stderr,
            )
        report[f"{n_passes}_passes"] = summarise(results, nights=nights, step_night=step_night)
        print(json.dumps({f"{n_passes}_passes": report[f"{n_passes}_passes"]}, indent=1), file=sys.stderr)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
