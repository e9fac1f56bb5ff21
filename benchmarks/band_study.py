"""Band study (issue 43): a real change inside the noise band, said; and the error rate it costs.

Usage:  python benchmarks/band_study.py [--power-replicates 100] [--null-replicates 200]
            [--passes 5] [--cv 0.02] [--effects 1.03,1.05] [--jobs 1] [--out FILE.json]
        python benchmarks/band_study.py --cv-of FOLDER... [--cv 0.02]

`--cv-of`: the measurement behind the noise bands per statistic (`Thresholds.noise_p90` ...): the
median pass-to-pass CV of each statistic's cells and its ratio to the mean's, in each folder of
real runs given and in simulated request-level seats (`cv_table`).

Each replicate writes native run files with request records (`benchreport.run/1`) with the
generator of benchmarks/verdict_study.py (`write_replicate`: two seats, `--passes` passes per
seat, a per-pass speed factor of CV `--cv`, 200 requests per cell at concurrency 1 and 4; seat 1
truly `effect` times as fast: every rate times it, every time divided by it), and runs
`benchreport analyse DIR --out OUT --quiet` through `benchreport.cli.main` (the command line, in
this process), then reads OUT/tables/comparisons.csv (kind baseline). Counted:

* power, per effect, on the primary cell (the per-stream decode rate's mean at the highest
  concurrency: the generator writes no aggregate throughput): the share called ``better``
  (the verdict, beyond the ±2% band), the share ``better`` or ``within_noise`` with
  ``verdict_detail`` "better, within tolerance", the share ``better`` or any detail saying
  "better" (also "better, not shown beyond the band": the change said), and the share significant
  after the correction with the ratio above 1 (p_adj < alpha: what a test without a band calls);
* identical seats (effect 1): reports with any ``better``/``worse``, with any ``verdict_detail``,
  and with either (a false statement of a change per report).

Rates carry Wilson 95% intervals (statsmodels proportion_confint, method "wilson").
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "analysis"))

from latency_family_study import pct, wilson  # noqa: E402
from verdict_study import Config, Model, write_replicate  # noqa: E402


def replicate(job: tuple) -> dict:
    """One replicate through the command line: what its comparisons say."""
    import pandas as pd

    from benchreport.cli import main

    effect, rep, passes, cv, seed = job
    cfg = Config("band", 2, passes, cv, 0.0, effect)
    with tempfile.TemporaryDirectory(prefix="band-study-") as tmp:
        runs = Path(tmp) / "runs"
        runs.mkdir()
        write_replicate(runs, cfg, rep, Model(), seed=seed, start_ms=True)
        with contextlib.redirect_stderr(io.StringIO()):
            code = main(["analyse", str(runs), "--out", str(Path(tmp) / "out"), "--quiet"])
        if code != 0:
            raise RuntimeError(f"benchreport analyse exited {code}")
        c = pd.read_csv(Path(tmp) / "out" / "tables" / "comparisons.csv")
    c = c[c["kind"] == "baseline"]
    primary = c[c["primary"].fillna(False).astype(bool)]
    p = primary.iloc[0] if len(primary) else None
    detail = c["verdict_detail"].notna() & (c["verdict_detail"].astype(str) != "")
    return {
        "effect": effect,
        "rep": rep,
        "primary": f"{p['metric']} {p['statistic']} c{p['concurrency']}" if p is not None else "",
        "verdict": str(p["verdict"]) if p is not None else "",
        "detail": str(p["verdict_detail"]) if p is not None and pd.notna(p["verdict_detail"]) else "",
        "significant_up": bool(p is not None and p["p_adj"] < 0.05 and p["ratio"] > 1),
        "ratio": float(p["ratio"]) if p is not None else None,
        "any_verdict": bool(c["verdict"].isin(["better", "worse"]).any()),
        "any_detail": bool(detail.any()),
        "rows": int(len(c)),
    }


def pass_cv(folder: Path):
    """The pass-to-pass CV (sqrt(exp(var of log pass values) - 1)) of every cell of 3+ passes of one
    date, by `benchreport analyse folder` and its tables/passes.csv; one row per cell with its family."""
    import numpy as np
    import pandas as pd

    from benchreport.cli import main as cli
    from benchreport.stats.multiplicity import family_of

    with tempfile.TemporaryDirectory(prefix="band-cv-") as tmp:
        with contextlib.redirect_stderr(io.StringIO()):
            code = cli(["analyse", str(folder), "--out", str(Path(tmp) / "out"), "--quiet", "--skip-bad"])
        if code not in (0, 1):
            raise RuntimeError(f"benchreport analyse {folder} exited {code}")
        p = pd.read_csv(Path(tmp) / "out" / "tables" / "passes.csv")
    p = p[pd.to_numeric(p["value"], errors="coerce") > 0]
    keys = ["seat", "harness", "probe", "load_id", "workload", "concurrency", "metric", "statistic", "date"]
    rows = []
    for k, g in p.groupby(keys, dropna=False):
        if len(g) >= 3:
            logs = np.log(g["value"].to_numpy(float))
            cv = float(np.sqrt(np.expm1(np.var(logs, ddof=1))))
            rows.append({"metric": k[6], "statistic": k[7], "cv": cv, "n_obs": float(g["n_obs"].median())})
    out = pd.DataFrame(rows, columns=["metric", "statistic", "cv", "n_obs"])
    out["family"] = [family_of(m) for m in out["metric"]]
    return out


def cv_table(folders: list[Path], n_requests: list[int], passes: int, cv: float, seed: int) -> str:
    """The median pass-to-pass CV per statistic (and its ratio to the mean's) of each folder, and of
    two simulated seats of `passes` passes at a pass CV `cv` per request count."""
    import pandas as pd

    parts = []
    for folder in folders:
        parts.append(pass_cv(folder).assign(source=folder.name))
    for n in n_requests:
        with tempfile.TemporaryDirectory(prefix="band-sim-") as tmp:
            runs = Path(tmp) / "runs"
            runs.mkdir()
            write_replicate(runs, Config("pair", 4, passes, cv, 0.0), 0, Model(n_requests=n), seed=seed, start_ms=True)
            parts.append(pass_cv(runs).assign(source=f"simulated {n} requests"))
    d = pd.concat(parts, ignore_index=True)
    med = d.groupby(["source", "family", "statistic"])["cv"].median().unstack("statistic")
    med = med[[s for s in ("mean", "p50", "p90", "p95", "p99") if s in med.columns]]
    ratio = med.div(med["mean"], axis=0).add_suffix("/mean")
    return pd.concat([med.round(4), ratio.round(2)], axis=1).to_string()


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--power-replicates", type=int, default=100)
    ap.add_argument("--null-replicates", type=int, default=200)
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--cv", type=float, default=0.02, help="CV of the per-pass speed factor (default 0.02)")
    ap.add_argument("--effects", default="1.03,1.05", help="true speed-ups of seat 1 (default 1.03,1.05)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    ap.add_argument(
        "--cv-of",
        nargs="*",
        type=Path,
        default=None,
        help="only measure the pass-to-pass CV per statistic of these folders of runs and of simulated "
        "seats (1,000 and 200 requests a pass, 10 passes, pass CV --cv), and print it",
    )
    a = ap.parse_args(argv)
    if a.cv_of is not None:
        table = cv_table(a.cv_of, [200, 1000], 10, a.cv, a.seed)
        print(table)
        return {"cv": table}
    effects = [float(e) for e in a.effects.split(",") if e]
    jobs = [(e, r, a.passes, a.cv, a.seed) for e in effects for r in range(a.power_replicates)]
    jobs += [(1.0, r, a.passes, a.cv, a.seed) for r in range(a.null_replicates)]
    with ProcessPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        done = list(pool.map(replicate, jobs))
    result = {"command": "python benchmarks/band_study.py " + " ".join(argv if argv is not None else sys.argv[1:])}
    for e in effects:
        rs = [r for r in done if r["effect"] == e]
        result[f"power {e:g}"] = {
            "better": wilson(sum(r["verdict"] == "better" for r in rs), len(rs)),
            "better or better within tolerance": wilson(
                sum(r["verdict"] == "better" or r["detail"] == "better, within tolerance" for r in rs), len(rs)
            ),
            "better or any detail saying better": wilson(
                sum(r["verdict"] == "better" or r["detail"].startswith("better") for r in rs), len(rs)
            ),
            "significant, ratio > 1 (no band)": wilson(sum(r["significant_up"] for r in rs), len(rs)),
            "primary": sorted({r["primary"] for r in rs}),
        }
    null = [r for r in done if r["effect"] == 1.0]
    result["null"] = {
        "any better/worse": wilson(sum(r["any_verdict"] for r in null), len(null)),
        "any verdict_detail": wilson(sum(r["any_detail"] for r in null), len(null)),
        "either": wilson(sum(r["any_verdict"] or r["any_detail"] for r in null), len(null)),
        "rows_per_report": sorted({r["rows"] for r in null}),
    }
    result["raw"] = done
    if a.out:
        a.out.write_text(json.dumps(result, indent=1), encoding="utf-8")
    print(f"{a.passes} passes a seat, pass CV {a.cv:g}, 200 requests a cell:")
    for e in effects:
        for k, w in result[f"power {e:g}"].items():
            if k != "primary":
                print(f"  true x{e:g}: {k}: {pct(w)}")
    for k, w in result["null"].items():
        if k != "rows_per_report":
            print(f"  identical seats, reports with {k}: {pct(w)}")
    return result


if __name__ == "__main__":
    main()
