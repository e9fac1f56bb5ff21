"""History verdicts by simulation through the CLI, on request-level nightly run stores.

Each replicate writes a run store of native run files, one a night, seat and pass: every
pass holds `--requests` requests in send order (start_ms), each with a lognormal TTFT and
inter-token latency around the seat's level, times a pass factor (lognormal, CV
`--pass-cv`) and a night factor shared by the night's passes: heavy-tailed, `--night-scale`
x a Student t with 3 degrees of freedom. Seats:

* ``stable-*``: no change (false alarms per seat-year);
* ``step3``, ``step5``, ``step10``: every request 3, 5 or 10% slower from night `--step-night` on
  (``step1.5``, ``step2``: 1.5 and 2%, inside the noise band, in `--layout` only);
* ``drift``: 0.02% slower every night from night 0 (7% over a year).

Regimes the thresholds were not tuned on (issue 43; the thresholds were set on independent nights),
chosen per seat by the first part of its name in `--layout`, e.g. `--layout ar1:5,weekly:5,stable:2`:

* ``ar1-*``: stable, the night factor an AR(1) series with lag-1 correlation `--ar-rho` (0.5) of
  the same marginal scale, innovations t(3): z_k = rho z_(k-1) + sqrt(1 - rho^2) e_k;
* ``weekly-*``: stable, the night factor plus a weekly cycle, `--weekly-amplitude` (2%) x
  sin(2 pi k / 7) on the log scale;
* ``step5-*`` (and ``step3-*``, ``step10-*``): as step5; with `--noisy-week` every seat's night
  scale and pass CV are doubled on the 7 nights from 3 before the step night to 3 after.

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
    python benchmarks/history_cli_study.py --layout ar1:5,weekly:5,stable:2 --passes 3 --replicates 1
    python benchmarks/history_cli_study.py --layout step5:6,stable:2 --noisy-week --nights 240 --passes 3

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
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

CHANGED = {
    "step1.5": ("step", 0.015),
    "step2": ("step", 0.02),
    "step3": ("step", 0.03),
    "step5": ("step", 0.05),
    "step10": ("step", 0.10),
    "drift": ("drift", 0.0002),
}


def seats_of(n_stable: int = 3, *, changed: bool = True) -> dict:
    """The seats of a store: `n_stable` stable ones, and the changed ones unless `changed` is False."""
    out = {f"stable-{i}": None for i in range(n_stable)}
    return {**out, **CHANGED} if changed else out


SEATS = seats_of()
#: seats of these groups (the first part of the name) never change: their verdicts are false alarms
NULL_GROUPS = ("stable", "ar1", "weekly")


def group_of(seat: str) -> str:
    """A seat's regime: the part of its name before the first '-' (stable-0 -> stable, step5 -> step5)."""
    return seat.split("-")[0]


def seats_from_layout(layout: str) -> dict:
    """`ar1:5,weekly:5,stable:2` -> {'ar1-0': None, ..., 'stable-1': None}; a changed group's seats
    (step3, step5, step10, drift) carry its change."""
    out: dict = {}
    for part in layout.split(","):
        group, _, n = part.strip().partition(":")
        if group not in NULL_GROUPS and group not in CHANGED:
            raise SystemExit(f"--layout: unknown seat group {group!r} (expected one of {NULL_GROUPS + tuple(CHANGED)})")
        out.update({f"{group}-{i}": CHANGED.get(group) for i in range(int(n or 1))})
    return out


@dataclass(frozen=True)
class Nights:
    """How a seat's night factor (log scale) moves from night to night, beyond its t(3) draw."""

    ar_rho: float = 0.5
    weekly_amplitude: float = 0.02
    noisy_week: bool = False

    def noise_factor(self, night: int, step_night: int) -> float:
        """2 on the noisy week's nights (3 before to 3 after the step night), else 1."""
        return 2.0 if self.noisy_week and abs(night - step_night) <= 3 else 1.0

    def level(self, seat: str, night: int, draw: float, state: dict) -> float:
        """The seat's log night factor on this night from its scaled t(3) draw; `state` keeps the
        AR(1) series of each ar1 seat."""
        group = group_of(seat)
        if group == "ar1":
            prev = state.get(seat)
            state[seat] = draw if prev is None else self.ar_rho * prev + np.sqrt(1 - self.ar_rho**2) * draw
            return state[seat]
        if group == "weekly":
            return draw + float(np.log1p(self.weekly_amplitude)) * float(np.sin(2 * np.pi * night / 7))
        return draw


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
    process: Nights = Nights(),
) -> None:
    """The native run files of one replicate, one folder a night."""
    ps = float(np.sqrt(np.log1p(pass_cv**2)))
    state: dict = {}
    for k, date in enumerate(_nights(nights)):
        folder = root / date
        folder.mkdir(parents=True, exist_ok=True)
        noisy = process.noise_factor(k, step_night)
        for i, (seat, change) in enumerate(seats.items()):
            rng = np.random.default_rng([seed, i, k])
            night = process.level(seat, k, noisy * night_scale * float(rng.standard_t(3)), state)
            slow = _slowdown(change, k, step_night) * float(np.exp(night))
            for p in range(1, passes + 1):
                factor = slow * float(np.exp(rng.normal(0.0, noisy * ps)))
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
    return pd.read_csv(out / "tables" / "history.csv", low_memory=False)


def _first_regression(mine: pd.DataFrame, first_date: str, dates: list[str]) -> dict | None:
    """The first regression of the seat's headline cell on or after `first_date`: its night, kind, size;
    and `report`, the first slowdown the history told at all (a regression, or a sustained change
    inside the noise band: a within_noise row with a change_kind and a change below 1), its night and size."""
    head = mine[(mine["metric"] == HEADLINE[0]) & (mine["statistic"] == HEADLINE[1]) & (mine["date"] >= first_date)]
    kinds = head.get("change_kind", pd.Series("", index=head.index)).fillna("").astype(str)
    told = (head["verdict"] == "regression") | (
        (head["verdict"] == "within_noise") & (kinds != "") & (head["change"] < 1)
    )
    report = None
    if told.any():
        t = head[told].iloc[0]
        report = {"night": dates.index(t["date"]), "change": float(t["change"]), "verdict": str(t["verdict"])}
    hit = head[head["verdict"] == "regression"]
    if not len(hit):
        return {"night": None, "report": report} if report else None
    r = hit.iloc[0]
    return {
        "night": dates.index(r["date"]),
        "kind": str(r.get("change_kind", "")),
        "change": float(r["change"]),
        "report": report,
    }


def score(h: pd.DataFrame, *, step_night: int, dates: list[str]) -> dict:
    """What one replicate's history says of each seat: per null group (stable, ar1, weekly) its
    false-alarm dates, their kinds and the within-noise share; per changed seat its first regression."""
    decided = h["verdict"].isin(["regression", "improvement"])
    out: dict = {"null": {}, "steps": {}, "drift": None}
    for seat in sorted(set(h["seat"].astype(str))):
        mine, group = h[h["seat"] == seat], group_of(seat)
        if group in NULL_GROUPS:
            g = out["null"].setdefault(group, {"seats": 0, "alarm_dates": 0, "kinds": {}, "rows": 0, "within": 0})
            g["seats"] += 1
            alarms = mine[decided[mine.index]].drop_duplicates("date")
            g["alarm_dates"] += len(alarms)
            for kind in alarms.get("change_kind", pd.Series(["(none)"] * len(alarms))).fillna("(none)"):
                g["kinds"][str(kind)] = g["kinds"].get(str(kind), 0) + 1
            ok = mine["verdict"] != "insufficient_data"
            g["rows"] += int(ok.sum())
            g["within"] += int((mine.loc[ok, "verdict"] == "within_noise").sum())
        elif group.startswith("step"):
            out["steps"][seat] = _first_regression(mine, dates[step_night], dates)
            before = out.setdefault("before_step", {"seats": 0, "alarm_dates": 0})
            before["seats"] += 1  # a step seat is stable until its step: its false alarms before it
            before["alarm_dates"] += int(
                mine[decided[mine.index] & (mine["date"] < dates[step_night])]["date"].nunique()
            )
        else:
            out["drift"] = _first_regression(mine, dates[0], dates)
    out["has_drift"] = "drift" in set(h["seat"].astype(str))
    return out


def poisson_rate(events: int, exposure: float) -> dict:
    """Events per unit exposure with the exact Poisson 95% interval (Garwood 1936)."""
    lo = stats.chi2.ppf(0.025, 2 * events) / 2 if events else 0.0
    hi = stats.chi2.ppf(0.975, 2 * events + 2) / 2
    return {"events": events, "exposure": exposure, "rate": events / exposure, "ci": [lo / exposure, hi / exposure]}


def summarise(results: list[dict], *, nights: int, step_night: int) -> dict:
    """Poisson and Wilson intervals over the replicates of one setting, per seat group."""
    out: dict = {}
    for group in NULL_GROUPS:
        parts = [r["null"][group] for r in results if group in r["null"]]
        if not parts:
            continue
        kinds: dict = {}
        for g in parts:
            for kind, n in g["kinds"].items():
                kinds[kind] = kinds.get(kind, 0) + n
        rows = sum(g["rows"] for g in parts)
        out[group] = {
            "seat_years": sum(g["seats"] for g in parts) * nights / 365.0,
            "false_alarms_per_seat_year": poisson_rate(
                sum(g["alarm_dates"] for g in parts), sum(g["seats"] for g in parts) * nights / 365.0
            ),
            "false_alarm_kinds": kinds,
            "within_noise": sum(g["within"] for g in parts) / rows if rows else float("nan"),
        }
    before = [r["before_step"] for r in results if "before_step" in r]
    if before:
        exposure = sum(b["seats"] for b in before) * step_night / 365.0
        out["step_seats_before_their_step"] = {
            "seat_years": exposure,
            "false_alarms_per_seat_year": poisson_rate(sum(b["alarm_dates"] for b in before), exposure),
        }
    hits_by: dict = {}
    for r in results:
        for seat, hit in r["steps"].items():
            hits_by.setdefault(group_of(seat), []).append(hit)
    for group, hits in sorted(hits_by.items()):
        regressions = [x for x in hits if x and x["night"] is not None]
        reports = [x["report"] for x in hits if x and x.get("report")]
        n, k = len(hits), len(regressions)
        wl, wh = proportion_confint(k, n, method="wilson")
        out[group] = {
            "found": k,
            "of": n,
            "ci": [float(wl), float(wh)],
            "delays": [x["night"] - step_night for x in regressions],
            "changes": [round(x["change"], 4) for x in regressions],
            "kinds": [x["kind"] for x in regressions],
            "reported": len(reports),
            "report_delays": [x["night"] - step_night for x in reports],
            "report_changes": [round(x["change"], 4) for x in reports],
            "report_verdicts": [x["verdict"] for x in reports],
        }
    if results and all(r["has_drift"] for r in results):
        drifts = [x for x in (r["drift"] for r in results) if x and x["night"] is not None]
        out["drift"] = {
            "found": len(drifts),
            "of": len(results),
            "nights": [x["night"] for x in drifts],
            "kinds": [x["kind"] for x in drifts],
            "changes": [round(x["change"], 3) for x in drifts],
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
    ap.add_argument("--layout", default=None, help="seat groups and counts, e.g. ar1:5,weekly:5,stable:2")
    ap.add_argument("--ar-rho", type=float, default=0.5, help="lag-1 correlation of the ar1 seats' nights")
    ap.add_argument("--weekly-amplitude", type=float, default=0.02, help="the weekly seats' cycle (log scale)")
    ap.add_argument("--noisy-week", action="store_true", help="double the noise on the 7 nights around the step")
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
                    seats=seats_from_layout(args.layout)
                    if args.layout
                    else seats_of(args.stable, changed=not args.stable_only),
                    process=Nights(args.ar_rho, args.weekly_amplitude, args.noisy_week),
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
