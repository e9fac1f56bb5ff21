"""Latency-family study (issue 43): is a latency-only regression called, through the command line?

Usage:  python benchmarks/latency_family_study.py [--replicates 30] [--null-replicates 100]
            [--passes 5] [--cv 0.02] [--ttft 1.2] [--n-boot 200] [--jobs 2] [--code DIR] [--out FILE.json]

Each replicate writes native run files with request records (`benchreport.run/1`) with the
generator of benchmarks/verdict_study.py (`write_replicate`: two seats, `--passes` passes per
seat, a per-pass speed factor of CV `--cv`, 200 requests per cell at concurrency 1 and 4), and
runs `benchreport analyse DIR --out OUT --n-boot B --seed S --quiet` in a child process (the
command line exactly as a user runs it), then reads OUT/tables/comparisons.csv. Two scenarios:

* ``ttft``: seat 1's time to first token is `--ttft` times seat 0's (its end-to-end latency
  longer by the same milliseconds; decode rate and throughput unchanged). Counted: the share of
  replicates whose TTFT mean row at the highest concurrency (the latency family's first cell) is
  `worse`, the share with every TTFT mean row `worse`, and false verdicts on throughput rows.
* ``null``: identical seats. Counted: reports with any `better`/`worse` (kind baseline).

Rates carry Wilson 95% intervals (statsmodels proportion_confint, method "wilson").
`--code DIR` puts DIR first on the child's PYTHONPATH: an `analysis/` folder of another commit
(`git archive COMMIT analysis | tar -x -C DIR`, then `--code DIR/analysis`) gives the numbers
before a change with the same replicates.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "analysis"))

from verdict_study import Config, Model, write_replicate  # noqa: E402


def run_cli(folder: Path, out: Path, *, seed: int, n_boot: int, code: str | None) -> Path:
    """`benchreport analyse folder --out out` in a child process; the comparisons table's path."""
    env = dict(os.environ)
    paths = [p for p in (code, str(ROOT / "analysis"), env.get("PYTHONPATH")) if p]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    cmd = [
        sys.executable,
        "-m",
        "benchreport",
        "analyse",
        str(folder),
        "--out",
        str(out),
        "--n-boot",
        str(n_boot),
        "--seed",
        str(seed),
        "--quiet",
    ]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"benchreport analyse exited {done.returncode}: {done.stderr[-500:]}")
    return out / "tables" / "comparisons.csv"


def replicate(scenario: str, rep: int, a) -> dict:
    """One replicate through the CLI: what its comparisons say."""
    import pandas as pd

    effect = a.ttft if scenario == "ttft" else 1.0
    cfg = Config(f"latency-{scenario}", 2, a.passes, a.cv, 0.0)
    with tempfile.TemporaryDirectory(prefix="latency-family-") as tmp:
        runs = Path(tmp) / "runs"
        runs.mkdir()
        _, seed = write_replicate(runs, cfg, rep, Model(), seed=a.seed, start_ms=True, ttft_effect=effect)
        c = pd.read_csv(run_cli(runs, Path(tmp) / "out", seed=seed, n_boot=a.n_boot, code=a.code))
    c = c[c["kind"] == "baseline"]
    ttft = c[(c["metric"] == "ttft_ms") & (c["statistic"] == "mean")]
    top = ttft[ttft["concurrency"] == ttft["concurrency"].max()]
    throughput = c[c["metric"].isin(["output_tok_s", "decode_tok_s_per_stream", "prefill_tok_s", "request_rate"])]
    return {
        "rep": rep,
        "ttft_top": str(top["verdict"].iloc[0]) if len(top) else "",
        "ttft_top_reason": str(top["verdict_reason"].iloc[0]) if len(top) else "",
        "ttft_top_ratio": float(top["ratio"].iloc[0]) if len(top) else None,
        "ttft_all_worse": bool(len(ttft)) and bool((ttft["verdict"] == "worse").all()),
        "false_throughput": int(throughput["verdict"].isin(["better", "worse"]).sum()),
        "any_verdict": bool(c["verdict"].isin(["better", "worse"]).any()),
        "rows": int(len(c)),
    }


def wilson(k: int, n: int) -> dict:
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson") if n else (float("nan"), float("nan"))
    return {"k": k, "n": n, "rate": k / n if n else float("nan"), "lo": float(lo), "hi": float(hi)}


def pct(w: dict) -> str:
    return f"{100 * w['rate']:.1f}% [{100 * w['lo']:.1f}, {100 * w['hi']:.1f}] ({w['k']}/{w['n']})"


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--replicates", type=int, default=30, help="replicates of the TTFT-only regression (default 30)")
    ap.add_argument("--null-replicates", type=int, default=100, help="replicates of identical seats (default 100)")
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--cv", type=float, default=0.02, help="CV of the per-pass speed factor (default 0.02)")
    ap.add_argument("--ttft", type=float, default=1.2, help="candidate's TTFT over the baseline's (default 1.2)")
    ap.add_argument(
        "--n-boot",
        type=int,
        default=200,
        help="bootstrap resamples of the cell intervals (default 200; "
        "the comparisons' intervals are Welch's on pass values and do not resample)",
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--code", default=None, help="an analysis/ folder to run instead of this checkout's")
    ap.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    a = ap.parse_args(argv)
    jobs = [("ttft", r) for r in range(a.replicates)] + [("null", r) for r in range(a.null_replicates)]
    with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        done = list(pool.map(lambda j: (j[0], replicate(j[0], j[1], a)), jobs))
    ttft = [r for s, r in done if s == "ttft"]
    null = [r for s, r in done if s == "null"]
    result = {
        "command": "python benchmarks/latency_family_study.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "ttft_top_worse": wilson(sum(r["ttft_top"] == "worse" for r in ttft), len(ttft)),
        "ttft_all_worse": wilson(sum(r["ttft_all_worse"] for r in ttft), len(ttft)),
        "ttft_false_throughput": wilson(sum(r["false_throughput"] > 0 for r in ttft), len(ttft)),
        "null_any_false": wilson(sum(r["any_verdict"] for r in null), len(null)),
        "reasons": sorted({r["ttft_top_reason"] for r in ttft if r["ttft_top"] != "worse"}),
        "rows_per_report": sorted({r["rows"] for _, r in done}),
        "raw": {"ttft": ttft, "null": null},
    }
    if a.out:
        a.out.write_text(json.dumps(result, indent=1), encoding="utf-8")
    print(f"TTFT x{a.ttft:g}, {a.passes} passes, CV {a.cv:g}:")
    print(f"  TTFT mean at the highest concurrency called worse: {pct(result['ttft_top_worse'])}")
    print(f"  every TTFT mean row called worse:                  {pct(result['ttft_all_worse'])}")
    print(f"  reports with a false throughput verdict:           {pct(result['ttft_false_throughput'])}")
    print(f"  reasons where not called: {result['reasons'] or '-'}")
    print(f"identical seats: reports with any false better/worse: {pct(result['null_any_false'])}")
    print(f"baseline rows per report: {result['rows_per_report']}")
    return result


if __name__ == "__main__":
    main()
