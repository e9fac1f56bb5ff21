"""Bootstrap study (issue 43, "A working bootstrap"): the cell interval by `--ci-method bootstrap`
beside the default t, through the command line.

Usage:  nice -n 10 python benchmarks/bootstrap_study.py [--replicates 30] [--n-boot 2000] [--out FILE.json]
        nice -n 10 python benchmarks/bootstrap_study.py --statistics-only

Two identical seats (benchmarks/verdict_study.py's `single_stream_run`: 100 request records of
concurrency 1 a pass, pass factor lognormal CV 2%, a day factor exp(sigma_b z) per seat and date).
Regimes: one date with 3 and with 5 passes; 3 dates x 3 passes at 3% day effects. Every replicate
is analysed twice, `benchreport analyse DIR --out OUT --quiet --ci-method t` and `... --ci-method
bootstrap --n-boot B --seed S` (benchmarks/day_effect_study.py's `Cli`: the CLI's main in one child
process), and the cell decode_tok_s_per_stream / mean of each seat is checked against the seat's
long-run level. Rates with Wilson 95% intervals. Results and the command: docs/statistics.md.

`--statistics-only`: the same comparison on the statistics alone, more replicates in less time
(the two-level model drawn directly on the log scale, pass sd 0.02, day sd `sigma_b`; 400
replicates a regime, 1000 resamples; t on log values or date means against
`benchreport.stats.bootstrap.hierarchical_bootstrap`, percentile and BCa).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from day_effect_study import Cli, outcome  # noqa: E402
from session_study import MODEL  # noqa: E402
from verdict_study import single_stream_run, wilson  # noqa: E402

DATES = ("2026-11-29", "2026-11-30", "2026-12-01")
PASS_CV = 0.02
#: (dates, passes a date, day-effect sd on the log scale)
REGIMES = ((1, 3, 0.0), (1, 5, 0.0), (3, 3, 0.03))


def write_replicate(folder: Path, dates: int, passes: int, sigma_b: float, rep: int) -> int:
    """One replicate's run files; returns the bootstrap's seed."""
    rng = np.random.default_rng([20261207, zlib.crc32(f"{dates}:{passes}:{sigma_b}".encode()), rep])
    sd_pass = math.sqrt(math.log1p(PASS_CV**2))
    for s in range(2):
        seat = f"seat-{s:02d}"
        for date in DATES[-dates:]:
            day = math.exp(sigma_b * rng.standard_normal())
            for p in range(1, passes + 1):
                run = single_stream_run(
                    rng,
                    MODEL,
                    seat=seat,
                    incumbent=s == 0,
                    run_id=f"{seat}-{date}-p{p}",
                    date=date,
                    pass_no=p,
                    factor=day * math.exp(sd_pass * rng.standard_normal()),
                    speed=1.0,
                )
                (folder / f"{seat}-{date}-p{p}.json").write_text(json.dumps(run, separators=(",", ":")))
    return int(rng.integers(0, 2**31 - 1))


def run_regime(dates: int, passes: int, sigma_b: float, reps: int, n_boot: int, cli: Cli) -> dict:
    hits: dict[str, list] = {"t": [], "bootstrap": []}
    routes: dict[str, set] = {"t": set(), "bootstrap": set()}
    for rep in range(reps):
        with tempfile.TemporaryDirectory(prefix="bootstrap-study-") as tmp:
            folder = Path(tmp) / "runs"
            folder.mkdir()
            seed = write_replicate(folder, dates, passes, sigma_b, rep)
            for method in hits:
                out = Path(tmp) / method
                argv = ["analyse", str(folder), "--out", str(out), "--quiet", "--ci-method", method]
                if method == "bootstrap":
                    argv += ["--n-boot", str(n_boot), "--seed", str(seed)]
                if cli(*argv) != 0:
                    raise SystemExit(f"benchreport {' '.join(argv)} failed")
                o = outcome(out, 1.0)
                hits[method] += [c for c in o["covered"] if c is not None]
                routes[method] |= set(o["routes"])
    return {
        m: {"coverage": (sum(h), len(h), *wilson(sum(h), len(h))), "routes": sorted(routes[m])} for m, h in hits.items()
    }


def statistics_only(reps: int = 400) -> None:
    """Coverage of the true log level 0 by t, percentile and BCa, regimes (dates, passes, sigma_b)."""
    from scipy import stats

    sys.path.insert(0, str(ROOT / "analysis"))
    from benchreport.stats.bootstrap import hierarchical_bootstrap

    rng = np.random.default_rng(7)
    for a, n, sb in ((1, 3, 0), (1, 5, 0), (1, 10, 0), (3, 3, 0.03), (5, 3, 0.03), (10, 3, 0.03)):
        hits = {"t": 0, "percentile": 0, "BCa": 0}
        for r in range(reps):
            x = sb * rng.standard_normal((a, 1)) + 0.02 * rng.standard_normal((a, n))
            y = x[0] if a == 1 else x.mean(axis=1)
            t = stats.t.ppf(0.975, y.shape[0] - 1)
            hits["t"] += abs(y.mean()) <= t * y.std(ddof=1) / math.sqrt(y.shape[0])
            for method in ("percentile", "BCa"):
                b = hierarchical_bootstrap(list(x), method=method, n_resamples=1000, rng=r)
                hits[method] += b.low <= 0 <= b.high
        print(f"dates={a} passes={n} sigma_b={sb:g}", {k: (v, reps, *wilson(v, reps)) for k, v in hits.items()})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicates", type=int, default=30)
    ap.add_argument("--n-boot", type=int, default=2000)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out" / "bootstrap_study.json")
    ap.add_argument("--statistics-only", action="store_true")
    args = ap.parse_args()
    if args.statistics_only:
        statistics_only()
        return
    cli = Cli(None)
    results = {}
    try:
        for dates, passes, sigma_b in REGIMES:
            key = f"dates={dates} passes={passes} sigma_b={sigma_b:g}"
            results[key] = run_regime(dates, passes, sigma_b, args.replicates, args.n_boot, cli)
            print(key, json.dumps(results[key]), flush=True)
    finally:
        cli.close()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
