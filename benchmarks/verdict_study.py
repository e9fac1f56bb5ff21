"""Verdict study: do benchreport's verdicts and cell CIs survive run-to-run variation?

Usage:  python benchmarks/verdict_study.py [--quick] [--replicates N] [--fleet-replicates N]
            [--n-boot B] [--jobs J] [--halfwidth H --min-replicates M] [--max-minutes T]
            [--resume] [--out FILE.json] [--write-docs [--docs-section S --docs-title T]]
            [--from-json FILE.json] [--start-ms auto|on|off] [--passes 3 --cvs 0.5 --rhos 0]
            [--only KEY] [--keep-replicate KEY@REP:DIR]

Results and the command behind them: docs/statistics.md. `--quick` (make bench) takes
about a minute on an idle 2-core machine.

Simulates native run files (`benchreport.run/1`) of seats whose true performance is
known, analyses every replicate through the library exactly as a user would
(`benchreport.pipeline.analyse_paths(paths, Options(n_boot=..., seed=...))`), reads the
`cells` and `comparisons` tables and counts (issue 11, "What it must show"):

(a) false `better`/`worse` between two identical seats on the primary cell
    (workload decode, concurrency 1, decode_tok_s_per_stream, statistic mean);
(b) coverage of that cell's CI against the population value including run-to-run
    variation (the seat's true request-level mean decode rate at the median pass
    factor 1, by a large Monte-Carlo draw from the same generator), over the cells
    that have a CI, and the share of cells that have one;
(c) the share of replicates with any false `better`/`worse` among all comparison rows;
(d) a 10-seat identical fleet: share of reports with any `better`/`worse` (kind
    baseline) and the mean number per report;
(e) power: share of `better` on the primary cell when the candidate is truly 5% faster.

Every rate is given with a Wilson 95% binomial interval
(statsmodels.stats.proportion.proportion_confint, method="wilson").

The generator (one replicate)
-----------------------------
S seats, K passes per seat on one date (one file per pass). Each pass draws a speed
factor f ~ lognormal(median 1, CV c), i.e. log f ~ N(0, log(1 + c^2)), independently
per seat and pass; it multiplies every rate of the pass and divides every time. Per
cell (concurrency 1 and 4) n = 200 requests in send order with
  time per output token  tpot = 1000/decode_tok_s * load(conc) / f * exp(sd_tpot x1)
  time to first token    ttft = ttft_ms * load(conc) / f * exp(sd_ttft x2)
  output tokens          round(out_tokens * exp(sd_out x3)), at least 2
  e2e_latency_ms         ttft + tpot (output_tokens - 1)
where x1, x2, x3 are independent stationary Gaussian AR(1) series in send order with lag-1
correlation rho (x_t = rho x_{t-1} + sqrt(1 - rho^2) e_t, x_0 ~ N(0, 1)), and
load(conc) = 1 + 0.15 log2(conc). The derived per-stream decode rate
(output_tokens - 1) / ((e2e - ttft)/1000) is then exactly f * decode_tok_s / load *
exp(-sd_tpot x1): lognormal with log-sd sd_tpot (default 0.10, i.e. ~10% request-to-
request CV; the issue's 48% false verdicts at 1 pass and CV 2% imply about this value).
The `start_ms` request field (run-format.md, newly added) is written only when the
loader keeps it (`--start-ms auto`, the default, detects that by loading a probe file).
Seat 0 is the `incumbent`, the others `candidate`; same model, harness and probe.

Seeds: replicate r of a configuration draws from SeedSequence([seed, crc32(config), r])
and is analysed with an analysis seed derived from the same sequence, so any single
replicate can be reproduced (`replicate(config, r, ...)`), and results do not depend on
--jobs.

Monte-Carlo error: a rate near 50% from R replicates has a Wilson half-width of about
1/sqrt(R) (3.1 points at R = 1000); near 5% about 2.5 points at R = 300.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
from scipy.signal import lfilter

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PRIMARY = {"workload": "decode", "concurrency": 1, "metric": "decode_tok_s_per_stream", "statistic": "mean"}
FALSE = ("better", "worse")
DOCS = ROOT / "docs" / "statistics.md"
OUT_DIR = ROOT / "benchmarks" / "out"
DATE = "2026-12-01"


# --------------------------------------------------------------------------- model
@dataclass(frozen=True)
class Model:
    """The request-level generator (same for every seat up to the seat's speed)."""

    n_requests: int = 200
    concurrencies: tuple = (1, 4)
    decode_tok_s: float = 80.0  # median per-stream decode rate at concurrency 1
    sd_tpot: float = 0.10  # log-sd of time per output token (= of the decode rate)
    ttft_ms: float = 40.0  # median time to first token at concurrency 1
    sd_ttft: float = 0.30
    out_tokens: float = 256.0  # median output tokens
    sd_out: float = 0.30
    load_slope: float = 0.15  # times grow by 1 + load_slope * log2(concurrency)


@dataclass(frozen=True)
class Config:
    """One cell of the study grid."""

    study: str  # "pair" (a-c), "fleet" (d), "power" (e)
    seats: int
    passes: int
    cv: float  # CV of the per-pass speed factor
    rho: float  # lag-1 correlation of requests in send order
    effect: float = 1.0  # true speed of seat 1 relative to the others (power)

    @property
    def key(self) -> str:
        return f"{self.study}:S{self.seats}:K{self.passes}:cv{self.cv:g}:rho{self.rho:g}:e{self.effect:g}"

    @classmethod
    def from_key(cls, key: str) -> "Config":
        """The inverse of `key` ('pair:S2:K1:cv0.02:rho0:e1')."""
        import re

        m = re.fullmatch(r"(\w+):S(\d+):K(\d+):cv([\d.e-]+):rho([\d.e-]+):e([\d.e-]+)", key)
        if not m:
            raise ValueError(f"not a configuration key: {key!r} (e.g. 'pair:S2:K1:cv0.02:rho0:e1')")
        study, seats, passes, cv, rho, effect = m.groups()
        return cls(study, int(seats), int(passes), float(cv), float(rho), float(effect))

    @property
    def crc(self) -> int:
        return zlib.crc32(self.key.encode())


def _ar1(rng: np.random.Generator, rho: float, n: int, size: int = 1) -> np.ndarray:
    """`size` stationary Gaussian AR(1) series of length n, unit variance, shape (size, n)."""
    e = rng.standard_normal((size, n))
    if rho == 0:
        return e
    x0 = rng.standard_normal(size)
    b = [math.sqrt(1.0 - rho * rho)]
    a = [1.0, -rho]
    return np.stack([lfilter(b, a, e[i], zi=[rho * x0[i]])[0] for i in range(size)])


def _cell_requests(rng, model: Model, conc: int, factor: float, speed: float, rho: float, n: int | None = None):
    """ttft, e2e, output tokens of one cell's requests in send order (arrays)."""
    n = model.n_requests if n is None else n
    x = _ar1(rng, rho, n, 3)
    load = 1.0 + model.load_slope * math.log2(conc)
    scale = load / (factor * speed)
    tpot = 1000.0 / model.decode_tok_s * scale * np.exp(model.sd_tpot * x[0])
    ttft = model.ttft_ms * scale * np.exp(model.sd_ttft * x[1])
    out = np.maximum(2, np.rint(model.out_tokens * np.exp(model.sd_out * x[2]))).astype(np.int64)
    e2e = ttft + tpot * (out - 1)
    return ttft, e2e, out


def _send_times(e2e: np.ndarray, conc: int, t0: float) -> np.ndarray:
    """Send times (ms) of a closed loop of `conc` streams: each request goes out when a stream frees."""
    free = np.full(conc, t0)
    starts = np.empty(e2e.shape[0])
    for i, d in enumerate(e2e):
        j = int(np.argmin(free))
        starts[i] = free[j]
        free[j] = starts[i] + d + 1.0  # 1 ms client gap
    return starts


def single_stream_run(
    rng, model: Model, *, seat: str, incumbent: bool, run_id: str, date: str, pass_no: int, factor: float, speed: float
) -> dict:
    """One native run of a single-stream decode pass (`model.n_requests` requests in send order),
    as the studies that look at one cell write it (benchmarks/session_study.py, sequential_study.py)."""
    ttft, e2e, out = _cell_requests(rng, model, 1, factor, speed, 0.0)
    starts = _send_times(e2e, 1, 0.0)
    reqs = [
        {
            "workload": "decode",
            "concurrency": 1,
            "output_tokens": int(out[i]),
            "ttft_ms": round(float(ttft[i]), 4),
            "e2e_latency_ms": round(float(e2e[i]), 4),
            "finish_reason": "stop",
            "start_ms": round(float(starts[i]), 3),
        }
        for i in range(out.shape[0])
    ]
    return {
        "format": "benchreport.run/1",
        "run_id": run_id,
        "date": date,
        "seat": {"id": seat, "model": "Model-A", "role": "incumbent" if incumbent else "candidate"},
        "harness": {"name": "in-house", "version": "1.0", "probe": "study-256", "max_tokens": 4096},
        "pass": pass_no,
        "warmup_excluded": True,
        "requests": reqs,
    }


def seat_speed(cfg: Config, seat: int) -> float:
    return cfg.effect if seat == 1 else 1.0


def write_replicate(
    folder: Path, cfg: Config, rep: int, model: Model, *, seed: int, start_ms: bool, ttft_effect: float = 1.0
) -> tuple[list[Path], int]:
    """Write one replicate's run files into `folder`; returns (files, analysis seed).

    `ttft_effect`: seat 1's time to first token multiplied by it, and its end-to-end latency
    lengthened by the same milliseconds (a latency-only change: the decode rate is untouched;
    benchmarks/latency_family_study.py, issue 43). The random draws are the same for any value."""
    ss = np.random.SeedSequence([seed, cfg.crc, rep])
    data_ss, analysis_ss = ss.spawn(2)
    analysis_seed = int(analysis_ss.generate_state(1)[0] & 0x7FFFFFFF)
    sd_pass = math.sqrt(math.log1p(cfg.cv**2))
    files = []
    for s, seat_ss in enumerate(data_ss.spawn(cfg.seats)):
        rng = np.random.default_rng(seat_ss)
        seat_id = f"seat-{s:02d}"
        factors = np.exp(sd_pass * rng.standard_normal(cfg.passes))
        for p in range(cfg.passes):
            reqs, t0 = [], 0.0
            for conc in model.concurrencies:
                ttft, e2e, out = _cell_requests(rng, model, conc, float(factors[p]), seat_speed(cfg, s), cfg.rho)
                if s == 1 and ttft_effect != 1.0:
                    e2e = e2e + ttft * (ttft_effect - 1.0)
                    ttft = ttft * ttft_effect
                starts = _send_times(e2e, conc, t0) if start_ms else None
                for i in range(out.shape[0]):
                    r = {
                        "workload": "decode",
                        "concurrency": conc,
                        "output_tokens": int(out[i]),
                        "ttft_ms": round(float(ttft[i]), 4),
                        "e2e_latency_ms": round(float(e2e[i]), 4),
                        "finish_reason": "stop",
                    }
                    if start_ms:
                        r["start_ms"] = round(float(starts[i]), 3)
                    reqs.append(r)
                if start_ms:
                    t0 = float(np.max(starts + e2e)) + 1000.0
            run = {
                "format": "benchreport.run/1",
                "run_id": f"{seat_id}-p{p + 1}",
                "date": DATE,
                "seat": {
                    "id": seat_id,
                    "model": "Model-A",
                    "quantisation": "BF16",
                    "engine": "vllm 0.33.0",
                    "role": "incumbent" if s == 0 else "candidate",
                },
                "harness": {"name": "in-house", "version": "1.0", "probe": "study-256", "max_tokens": 4096},
                "pass": p + 1,
                "warmup_excluded": True,
                "requests": reqs,
            }
            path = folder / f"{seat_id}-p{p + 1}.json"
            path.write_text(json.dumps(run, separators=(",", ":")), encoding="utf-8")
            files.append(path)
    return files, analysis_seed


def true_mean_decode(
    model: Model, *, speed: float = 1.0, conc: int = 1, draws: int = 2_000_000, seed: int = 12345
) -> dict:
    """Population mean per-stream decode rate at pass factor 1, by Monte Carlo from the generator.

    rho is irrelevant for a mean (stationary marginals), so rho = 0 is drawn. Returns the
    Monte-Carlo value, its standard error and the closed form exp(mu + sd^2/2) as a check.
    """
    rng = np.random.default_rng([seed, conc, int(round(speed * 1e6))])
    total, total2, m, chunk = 0.0, 0.0, 0, 200_000
    while m < draws:
        k = min(chunk, draws - m)
        ttft, e2e, out = _cell_requests(rng, model, conc, 1.0, speed, 0.0, n=k)
        dec = (out - 1) / ((e2e - ttft) / 1000.0)
        total += float(dec.sum())
        total2 += float((dec * dec).sum())
        m += k
    mean = total / m
    sd = math.sqrt(max(total2 / m - mean * mean, 0.0))
    load = 1.0 + model.load_slope * math.log2(conc)
    closed = model.decode_tok_s * speed / load * math.exp(model.sd_tpot**2 / 2)
    return {"value": mean, "mc_se": sd / math.sqrt(m), "closed_form": closed, "draws": m}


# --------------------------------------------------------------------------- start_ms support
def loader_keeps_start_ms() -> bool:
    """True when the loader accepts `start_ms` and keeps it in the requests table (tried, not assumed)."""
    from benchreport.load import load
    from benchreport.tables import build_tables

    with tempfile.TemporaryDirectory(prefix="verdict-probe-") as tmp:
        run = {
            "format": "benchreport.run/1",
            "run_id": "probe-p1",
            "date": DATE,
            "seat": {"id": "probe", "model": "m"},
            "harness": {"name": "in-house"},
            "pass": 1,
            "requests": [
                {
                    "workload": "decode",
                    "concurrency": 1,
                    "output_tokens": 10,
                    "ttft_ms": 10.0,
                    "e2e_latency_ms": 100.0,
                    "start_ms": 5.0 + i,
                }
                for i in range(2)
            ],
        }
        p = Path(tmp) / "probe.json"
        p.write_text(json.dumps(run), encoding="utf-8")
        try:
            loaded = load([p], progress=False)
            if loaded.refused or not loaded.runs:
                return False
            req = build_tables(loaded).requests
        except Exception:
            return False
        if "start_ms" not in req.columns:
            return False
        try:
            vals = [float(v) for v in req["start_ms"].tolist()]
        except (TypeError, ValueError):
            return False
        return vals == [5.0, 6.0]


# --------------------------------------------------------------------------- one replicate
def _is_primary(df) -> np.ndarray:
    m = np.ones(len(df), dtype=bool)
    for k, v in PRIMARY.items():
        if k not in df.columns:
            return np.zeros(len(df), dtype=bool)
        col = df[k]
        if k == "concurrency":
            c = np.asarray(
                [
                    (-1 if (x is None or x is _NA or (isinstance(x, float) and math.isnan(x))) else int(x))
                    for x in col.astype(object).tolist()
                ]
            )
            m &= c == v
        else:
            m &= np.asarray([str(x) == v for x in col.astype(object).tolist()])
    return m


try:  # pandas.NA, without importing pandas at module import for the docs renderer
    import pandas as _pd

    _NA = _pd.NA
except Exception:  # pragma: no cover
    _NA = None


def _f(x) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def summarise(cells, comparisons) -> dict:
    """The numbers a replicate contributes, read by column name (extra columns are ignored)."""
    out: dict = {}
    pc = cells.loc[_is_primary(cells)]
    out["cells"] = [
        {
            "seat": str(r["seat"]),
            "est": _f(r["estimate"]),
            "lo": _f(r.get("ci_low")),
            "hi": _f(r.get("ci_high")),
            "method": str(r.get("ci_method")),
        }
        for _, r in pc.iterrows()
    ]
    lows = [_f(x) for x in (cells["ci_low"].tolist() if "ci_low" in cells.columns else [])]
    out["cells_ci_below_zero"] = int(sum(1 for x in lows if x is not None and x < 0))
    cmp = comparisons
    if "kind" in cmp.columns:
        cmp = cmp.loc[cmp["kind"].astype(object).astype(str) == "baseline"]
    verdicts = cmp["verdict"].astype(object).astype(str).tolist() if len(cmp) else []
    out["n_rows"] = len(verdicts)
    out["n_false"] = int(sum(v in FALSE for v in verdicts))
    by = {}
    if len(cmp):
        for (m, st), v in zip(zip(cmp["metric"].astype(str), cmp["statistic"].astype(str)), verdicts):
            if v in FALSE:
                by[f"{m}/{st}"] = by.get(f"{m}/{st}", 0) + 1
    out["false_by_metric"] = by
    clows = [_f(x) for x in (cmp["ci_low"].tolist() if len(cmp) else [])]
    out["ratio_ci_below_zero"] = int(sum(1 for x in clows if x is not None and x < 0))
    pr = cmp.loc[_is_primary(cmp)] if len(cmp) else cmp
    out["primary"] = [
        {
            "candidate": str(r["candidate"]),
            "verdict": str(r["verdict"]),
            "ratio": _f(r.get("ratio")),
            "lo": _f(r.get("ci_low")),
            "hi": _f(r.get("ci_high")),
            "method": str(r.get("ci_method")),
        }
        for _, r in pr.iterrows()
    ]
    return out


def replicate(
    cfg: Config,
    rep: int,
    *,
    model: Model = Model(),
    n_boot: int = 2000,
    seed: int = 0,
    start_ms: bool = False,
    keep: Path | None = None,
) -> dict:
    """Simulate, analyse and summarise replicate `rep` of `cfg` (reproducible on its own)."""
    from benchreport.pipeline import Options, analyse_paths
    from benchreport.stats.compare import PrimaryCell

    t0 = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix="verdict-"))
    try:
        files, aseed = write_replicate(tmp, cfg, rep, model, seed=seed, start_ms=start_ms)
        try:
            # the study's primary cell is declared as the report's (it is tested first under gatekeeping)
            primary = PrimaryCell(
                metric=PRIMARY["metric"],
                statistic=PRIMARY["statistic"],
                workload=PRIMARY["workload"],
                concurrency=PRIMARY["concurrency"],
            )
            a = analyse_paths([tmp], Options(n_boot=n_boot, seed=aseed, primary=primary))
            res = summarise(a.cells, a.comparisons)
            refused = len(a.loaded.refused)
            if refused:
                res["refused"] = refused
                res["refused_first"] = str(a.loaded.refused[0].as_dict())[:300]
            res["error"] = None
        except Exception as exc:  # a crash is a finding: count it, keep going
            res = {"error": f"{type(exc).__name__}: {exc}"[:500]}
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            for f in files:
                shutil.copy2(f, keep / f.name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    res.update(rep=rep, seconds=time.perf_counter() - t0)
    return res


def _interrupt(*_):
    raise KeyboardInterrupt


def _worker_init():
    """Workers leave interruption to the parent, which stops handing out replicates."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _work(args):
    i, cfg, rep, model, n_boot, seed, start_ms = args
    return i, replicate(cfg, rep, model=model, n_boot=n_boot, seed=seed, start_ms=start_ms)


# --------------------------------------------------------------------------- the grid
def grid(quick: bool, *, passes=None, cvs=None, rhos=None) -> list[Config]:
    """The study's configurations; `passes`, `cvs`, `rhos` replace the identical-pair grid."""
    if passes or cvs or rhos:
        return [
            Config("pair", 2, k, c, r)
            for k in (passes or (1, 3, 5, 10))
            for c in (cvs or (0.0, 0.02, 0.05))
            for r in (rhos or (0.0, 0.5))
        ]
    if quick:
        pair = [
            Config("pair", 2, k, c, r)
            for k, c, r in [(1, 0.0, 0.0), (1, 0.02, 0.0), (1, 0.0, 0.5), (3, 0.02, 0.0), (5, 0.05, 0.0)]
        ]
        fleet = [Config("fleet", 10, 1, 0.0, 0.0)]
        power = [Config("power", 2, 5, 0.02, 0.0, 1.05)]
        return pair + fleet + power
    pair = [Config("pair", 2, k, c, r) for k in (1, 3, 5, 10) for c in (0.0, 0.02, 0.05) for r in (0.0, 0.5)]
    fleet = [Config("fleet", 10, k, c, 0.0) for k in (1, 5) for c in (0.0, 0.05)]
    power = [Config("power", 2, k, 0.02, 0.0, 1.05) for k in (1, 3, 5, 10)]
    return pair + fleet + power


def wilson(k: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    from statsmodels.stats.proportion import proportion_confint

    if n == 0:
        return (math.nan, math.nan)
    lo, hi = proportion_confint(k, n, alpha=alpha, method="wilson")
    return float(lo), float(hi)


def _rate(k: int, n: int) -> dict:
    lo, hi = wilson(k, n)
    return {"k": int(k), "n": int(n), "rate": k / n if n else math.nan, "lo": lo, "hi": hi}


def _most_common(xs: list[str]) -> dict:
    out: dict[str, int] = {}
    for x in xs:
        out[x] = out.get(x, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def aggregate(cfg: Config, reps: list[dict], truth: dict) -> dict:
    ok = [r for r in reps if r.get("error") is None]
    errors = [r["error"] for r in reps if r.get("error") is not None]
    out: dict = {
        "config": asdict(cfg),
        "key": cfg.key,
        "replicates": len(reps),
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
        "seconds_per_replicate": float(np.mean([r["seconds"] for r in reps])) if reps else math.nan,
    }
    prim = [p for r in ok for p in r["primary"]]
    out["primary_verdicts"] = _most_common([p["verdict"] for p in prim])
    out["primary_methods"] = _most_common([p["method"] for p in prim])
    out["primary_rows"] = len(prim)
    # one verdict set per (replicate, candidate): robust to a table that one day gives
    # a cell several rows (e.g. a within-run ratio beside the between-pass one)
    sets = []
    for r in ok:
        by: dict[str, set] = {}
        for p in r["primary"]:
            by.setdefault(p["candidate"], set()).add(p["verdict"])
        sets += list(by.values())
    if cfg.study == "pair":
        out["false_primary"] = _rate(sum(bool(v & set(FALSE)) for v in sets), len(sets))
    if cfg.study == "power":
        out["power_better"] = _rate(sum("better" in v for v in sets), len(sets))
        out["power_worse"] = _rate(sum("worse" in v for v in sets), len(sets))
    # (b) coverage, identical seats only (in power, seat 1 has another truth)
    cells = [c for r in ok for c in r["cells"] if cfg.study != "power" or c["seat"] != "seat-01"]
    with_ci = [c for c in cells if c["lo"] is not None and c["hi"] is not None]
    t = truth["value"]
    out["cell_ci_given"] = _rate(len(with_ci), len(cells))
    out["cell_coverage"] = _rate(sum(c["lo"] <= t <= c["hi"] for c in with_ci), len(with_ci))
    out["cell_miss_low"] = sum(c["hi"] < t for c in with_ci)  # interval entirely below the truth
    out["cell_miss_high"] = sum(c["lo"] > t for c in with_ci)
    out["cell_methods"] = _most_common([c["method"] for c in cells])
    ests = [c["est"] for c in cells if c["est"] is not None]
    out["cell_estimate_mean"] = float(np.mean(ests)) if ests else math.nan
    out["cell_estimate_sd"] = float(np.std(ests, ddof=1)) if len(ests) > 1 else math.nan
    if with_ci:
        w = [(c["hi"] - c["lo"]) / t for c in with_ci]
        out["cell_ci_median_rel_width"] = float(np.median(w))
    # (c) / (d): all comparison rows of a report
    out["rows_per_report"] = float(np.mean([r["n_rows"] for r in ok])) if ok else math.nan
    if cfg.study != "power":
        out["any_false"] = _rate(sum(r["n_false"] > 0 for r in ok), len(ok))
        out["false_per_report"] = float(np.mean([r["n_false"] for r in ok])) if ok else math.nan
        out["false_per_row"] = _rate(sum(r["n_false"] for r in ok), sum(r["n_rows"] for r in ok))
        out["any_false_primary"] = _rate(sum(any(p["verdict"] in FALSE for p in r["primary"]) for r in ok), len(ok))
        fb: dict[str, int] = {}
        for r in ok:
            for k, v in r["false_by_metric"].items():
                fb[k] = fb.get(k, 0) + v
        out["false_by_metric"] = dict(sorted(fb.items(), key=lambda kv: -kv[1]))
    out["cells_ci_below_zero"] = sum(r["cells_ci_below_zero"] for r in ok)
    out["ratio_ci_below_zero"] = sum(r["ratio_ci_below_zero"] for r in ok)
    out["refused"] = sum(r.get("refused", 0) for r in ok)
    return out


def analysis_fingerprint() -> str:
    """sha256 over analysis/**/*.py: a resumed study must analyse with the same code."""
    import hashlib

    h = hashlib.sha256()
    for p in sorted((ROOT / "analysis").rglob("*.py")):
        h.update(str(p.relative_to(ROOT)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def headline_rates(agg: dict) -> list[dict]:
    """The rates a configuration is run for (what --halfwidth watches)."""
    study = agg["config"]["study"]
    names = {
        "pair": ("false_primary", "cell_coverage"),
        "fleet": ("any_false", "any_false_primary"),
        "power": ("power_better", "power_worse"),
    }[study]
    return [agg[n] for n in names if n in agg]


def git_state() -> dict:
    def run(*a):
        try:
            return subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True, timeout=10).stdout.strip()
        except Exception:
            return ""

    return {
        "commit": run("rev-parse", "HEAD"),
        "branch": run("rev-parse", "--abbrev-ref", "HEAD"),
        "analysis_commit": run("log", "-1", "--format=%H", "--", "analysis"),
        "dirty_analysis": bool(run("status", "--porcelain", "--", "analysis")),
    }


def _replicate_queue(configs: list[Config], targets: list[int], done: dict | None, task: tuple):
    """The records kept from `done` per configuration, and the `_work` arguments of the missing replicates,
    round-robin: each configuration's replicate r before any r + 1, in proportion to its target."""
    raw: list[list[dict]] = []
    tasks = []
    for i, (cfg, n) in enumerate(zip(configs, targets)):
        have = {r["rep"]: r for r in (done or {}).get(cfg.key, []) if r["rep"] < n}
        raw.append(list(have.values()))
        tasks += [((r + 0.5) / n, i, (i, cfg, r, *task)) for r in range(n) if r not in have]
    tasks.sort(key=lambda t: (t[0], t[1]))
    return raw, [t[2] for t in tasks]


class _Scheduler:
    """run_study's state: the queue, the records so far, progress notes, checkpoints, closed configurations."""

    def __init__(
        self, configs, targets, raw, queue, *, quiet, deadline, checkpoint, checkpoint_every, enough, min_replicates
    ):
        self.configs, self.targets, self.raw, self.queue = configs, targets, raw, queue
        self.quiet, self.deadline, self.enough, self.min_replicates = quiet, deadline, enough, min_replicates
        self.checkpoint, self.checkpoint_every = checkpoint, checkpoint_every
        self.t0 = time.monotonic()
        self.finished, self.last_note, self.last_ckpt, self.pos = 0, 0.0, self.t0, 0
        self.pending: set = set()
        self.reused = sum(len(r) for r in raw)
        self.closed: set[int] = set()
        self.checked: dict[int, int] = {}

    def note(self, force=False):
        """A progress line on stderr, at most every 10 s unless `force`."""
        now = time.monotonic() - self.t0
        if self.quiet or (not force and now - self.last_note < 10.0):
            return
        self.last_note = now
        left = sum(1 for t in self.queue[self.pos :] if t[0] not in self.closed) + len(self.pending)
        eta = now / self.finished * left if self.finished else math.nan
        least = (
            min(len(r) / n for i, (r, n) in enumerate(zip(self.raw, self.targets)) if i not in self.closed)
            if len(self.closed) < len(self.raw)
            else 1.0
        )
        print(
            f"[verdict-study] {self.finished} replicates done ({self.reused} reused), {left} to go at most, "
            f"{now / 60:.1f} min elapsed, ETA {eta / 60:.1f} min; {len(self.closed)} configuration(s) precise "
            f"enough; the others at >= {100 * least:.0f}% of their target",
            file=sys.stderr,
            flush=True,
        )

    def collect(self, i, res):
        """Keep a finished replicate of configuration i; checkpoint when it is time."""
        self.raw[i].append(res)
        self.finished += 1
        self.note()
        if self.checkpoint is not None and time.monotonic() - self.last_ckpt >= self.checkpoint_every:
            self.last_ckpt = time.monotonic()
            self.checkpoint(self.raw)

    def stop_now(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def is_closed(self, i: int) -> bool:
        """Whether configuration i is closed for good (`enough`, checked every 10 records)."""
        if i in self.closed or self.enough is None:
            return i in self.closed
        n = len(self.raw[i])
        if n >= self.min_replicates and n - self.checked.get(i, -10) >= 10:
            self.checked[i] = n
            if self.enough(i, self.raw[i]):
                self.closed.add(i)
                if not self.quiet:
                    print(
                        f"[verdict-study] {self.configs[i].key}: precise enough at {n} replicates",
                        file=sys.stderr,
                        flush=True,
                    )
        return i in self.closed

    def run_here(self) -> None:
        """The queue in this process."""
        for t in self.queue:
            self.pos += 1
            if self.stop_now():
                break
            if not self.is_closed(t[0]):
                self.collect(*_work(t))

    def run_in_pool(self, jobs: int) -> bool:
        """The queue over `jobs` worker processes, at most 3 per worker in flight; True if interrupted."""
        import multiprocessing as mp
        from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

        ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_worker_init) as ex:
            try:
                while self.pos < len(self.queue) or self.pending:
                    while self.pos < len(self.queue) and len(self.pending) < 3 * jobs and not self.stop_now():
                        t = self.queue[self.pos]
                        self.pos += 1
                        if not self.is_closed(t[0]):
                            self.pending.add(ex.submit(_work, t))
                    if not self.pending:
                        break
                    fin, self.pending = wait(self.pending, return_when=FIRST_COMPLETED)
                    for f in fin:
                        self.collect(*f.result())
            except KeyboardInterrupt:
                for f in self.pending:
                    f.cancel()
                ex.shutdown(wait=True, cancel_futures=True)
                for f in self.pending:
                    if f.done() and not f.cancelled() and f.exception() is None:
                        self.collect(*f.result())
                return True
        return False

    def complete(self) -> bool:
        """Every configuration has its target or was closed."""
        return all(len(r) >= n or i in self.closed for i, (r, n) in enumerate(zip(self.raw, self.targets)))


def run_study(
    configs: list[Config],
    *,
    replicates: int,
    fleet_replicates: int,
    model: Model,
    n_boot: int,
    seed: int,
    jobs: int,
    start_ms: bool,
    quiet: bool = False,
    done: dict | None = None,
    deadline: float | None = None,
    checkpoint=None,
    checkpoint_every: float = 60.0,
    enough=None,
    min_replicates: int = 100,
) -> tuple[list[list[dict]], bool]:
    """All replicates of all configs over `jobs` processes: (per-config records, complete?).

    Replicates are run round-robin (each configuration's replicate r before any r + 1,
    in proportion to its target), so a run stopped early (`deadline`, a time.monotonic()
    value after which nothing new starts, or SIGTERM / Ctrl-C) leaves every configuration
    with about the same share of its replicates. `done` ({config key: records}) are
    replicates of an earlier run that are kept instead of recomputed (--resume);
    `checkpoint(raw)` is called every `checkpoint_every` seconds. `enough(i, records)`,
    when given, closes configuration i for good once it returns True (checked from
    `min_replicates` on, every 10 records): sequential stopping on precision. Whatever
    stops a configuration, its replicates are always 0..n-1 (a prefix), so `--replicates n`
    reproduces it.
    """

    import signal

    targets = [fleet_replicates if c.study == "fleet" else replicates for c in configs]
    raw, queue = _replicate_queue(configs, targets, done, (model, n_boot, seed, start_ms))
    scheduler = _Scheduler(
        configs,
        targets,
        raw,
        queue,
        quiet=quiet,
        deadline=deadline,
        checkpoint=checkpoint,
        checkpoint_every=checkpoint_every,
        enough=enough,
        min_replicates=min_replicates,
    )
    interrupted = False
    old = signal.signal(signal.SIGTERM, _interrupt)
    try:
        if jobs > 1:
            interrupted = scheduler.run_in_pool(jobs)
        else:
            scheduler.run_here()
    except KeyboardInterrupt:
        interrupted = True
    finally:
        signal.signal(signal.SIGTERM, old)
    scheduler.note(force=True)
    for r in raw:
        r.sort(key=lambda x: x["rep"])
    complete = not interrupted and scheduler.complete()
    if interrupted and not quiet:
        print("[verdict-study] interrupted: keeping the replicates that finished", file=sys.stderr)
    return raw, complete


# --------------------------------------------------------------------------- docs
def _pct(r: dict, digits: int = 1) -> str:
    if not r or not r.get("n"):
        return "n/a"
    return f"{100 * r['rate']:.{digits}f}% [{100 * r['lo']:.{digits}f}, {100 * r['hi']:.{digits}f}]"


def _flag(text: str, bad: bool) -> str:
    return f"**{text}**" if bad else text


def _short_method(m: dict) -> str:
    """The most common ci_method, degrees of freedom left out (they vary from replicate to replicate)."""
    import re

    if not m:
        return ""
    merged: dict[str, int] = {}
    for k, v in m.items():
        k = re.sub(r"\s*\(df=[^)]*\)", "", k)
        merged[k] = merged.get(k, 0) + v
    top = max(merged, key=merged.get)
    short = top.replace("bootstrap BCa ", "BCa ").replace("Welch t on log pass values", "Welch t, log")
    return short + ("" if len(merged) == 1 else " (+%d other)" % (len(merged) - 1))


def render_tables(result: dict) -> str:
    meta = result["meta"]
    rows = result["configs"]
    lines = []
    pair = [r for r in rows if r["config"]["study"] == "pair"]
    fleet = [r for r in rows if r["config"]["study"] == "fleet"]
    power = [r for r in rows if r["config"]["study"] == "power"]
    cmds = meta.get("commands") or [meta["command"]]
    lines.append(
        f"Command: `{cmds[-1]}`"
        + ("" if len(cmds) == 1 else " (resuming replicates of " + ", ".join(f"`{c}`" for c in cmds[:-1]) + ")")
        + "  "
    )
    sm = (
        "yes"
        if meta["start_ms"]
        else "no (switched off)"
        if meta.get("loader_keeps_start_ms")
        else "no (the loader does not keep it yet)"
    )
    g = meta["git"]
    lines.append(
        f"Code analysed: `analysis/` as of commit `{(g.get('analysis_commit') or g['commit'] or '?')[:7]}`"
        f"{' plus uncommitted changes' if g['dirty_analysis'] else ''} (run from `{g['commit'][:7] or '?'}`); "
        f"{meta['replicates']} replicates per configuration as the target ({meta['fleet_replicates']} "
        f"for the 10-seat fleet; the count actually run is column n"
        f"{'' if meta.get('complete', True) else ', the run was stopped early'}); "
        f"n_boot = {meta['n_boot']} bootstrap resamples; seed {meta['seed']}; "
        f"`start_ms` written: {sm}; {meta['date']}; {meta['cores']} cores ({meta['machine']}), "
        f"{meta['jobs']} worker processes, {meta['elapsed_s'] / 60:.0f} min. True primary-cell value "
        f"{meta['truth']['value']:.3f} tok/s (Monte Carlo, {meta['truth']['draws']:,} draws, "
        f"SE {meta['truth']['mc_se']:.3f}; closed form {meta['truth']['closed_form']:.3f})."
    )
    if meta.get("halfwidth"):
        lines.append("")
        lines.append(
            f"Sequential stopping: a configuration stopped once the Wilson half-width of each of its "
            f"headline rates (false better/worse and cell coverage; fleet: reports with a false "
            f"verdict; power: `better` and `worse`) was at most {100 * meta['halfwidth']:g} points, "
            f"after at least {meta['min_replicates']} replicates"
            + (f", or when the {meta['max_minutes']:g}-minute budget ran out" if meta.get("max_minutes") else "")
            + "; n is the count run (replicates 0..n-1, so `--only KEY --replicates n` reproduces a row)."
        )
    lines.append("")
    lines.append(
        "Each rate with its Wilson 95% interval. Targets (issue 11): false `better`/`worse` "
        "at most 5%, cell CI coverage 93-97% wherever a CI is given; entries outside are in bold."
    )
    lines.append("")
    if pair:
        lines.append("**Two identical seats** (primary cell: decode, concurrency 1, `decode_tok_s_per_stream`, mean)")
        lines.append("")
        lines.append(
            "| passes | pass CV | rho | n | comparison CI | false better/worse, primary | "
            "any false verdict, all rows | cell CI | cell CI given | cell CI coverage |"
        )
        lines.append("|---|---|---|---|---|---|---|---|---|---|")
        for r in pair:
            c = r["config"]
            fp, cov = r["false_primary"], r["cell_coverage"]
            bad_f = fp["n"] and fp["rate"] > 0.05
            bad_c = cov["n"] and not (0.93 <= cov["rate"] <= 0.97)
            lines.append(
                f"| {c['passes']} | {100 * c['cv']:g}% | {c['rho']:g} | {r['replicates']} | "
                f"{_short_method(r['primary_methods'])} | {_flag(_pct(fp), bad_f)} | {_pct(r['any_false'])} of {r['rows_per_report']:.0f} | "
                f"{_short_method(r['cell_methods'])} | {_pct(r['cell_ci_given'], 0)} | "
                f"{_flag(_pct(cov), bad_c) if cov['n'] else 'no CI'} |"
            )
        lines.append("")
    if fleet:
        lines.append("**Ten identical seats** (9 candidates against the incumbent, kind `baseline`)")
        lines.append("")
        lines.append(
            "| passes | pass CV | rho | n | comparisons per report | reports with any false "
            "better/worse | false verdicts per report | reports with a false primary-cell verdict |"
        )
        lines.append("|---|---|---|---|---|---|---|---|")
        for r in fleet:
            c = r["config"]
            af = r["any_false"]
            lines.append(
                f"| {c['passes']} | {100 * c['cv']:g}% | {c['rho']:g} | {r['replicates']} | "
                f"{r['rows_per_report']:.0f} | "
                f"{_flag(_pct(af), af['n'] and af['rate'] > 0.05)} | {r['false_per_report']:.1f} | "
                f"{_pct(r['any_false_primary'])} |"
            )
        lines.append("")
    if power:
        lines.append("**Power**: candidate truly 5% faster (decode rate x1.05, times /1.05), primary cell")
        lines.append("")
        lines.append("| passes | pass CV | rho | n | comparison CI | `better` | `worse` (wrong direction) |")
        lines.append("|---|---|---|---|---|---|---|")
        for r in power:
            c = r["config"]
            lines.append(
                f"| {c['passes']} | {100 * c['cv']:g}% | {c['rho']:g} | {r['replicates']} | "
                f"{_short_method(r['primary_methods'])} | {_pct(r['power_better'])} | "
                f"{_pct(r['power_worse'])} |"
            )
        lines.append("")
    crashes = sum(r["errors"] for r in rows)
    neg_c = sum(r["cells_ci_below_zero"] for r in rows)
    neg_r = sum(r["ratio_ci_below_zero"] for r in rows)
    lines.append(f"Crashes: {crashes}. Cell CIs below zero: {neg_c}. Ratio CIs below zero: {neg_r}.")
    return "\n".join(lines) + "\n"


def _markers(section: str) -> tuple[str, str]:
    return (
        f"<!-- verdict-study:{section} begin (written by benchmarks/verdict_study.py --write-docs) -->",
        f"<!-- verdict-study:{section} end -->",
    )


def write_docs(result: dict, path: Path, section: str, title: str) -> None:
    """Replace the marked section `section` of `path` (appended when absent)."""
    begin, end = _markers(section)
    body = f"{begin}\n### {title}\n\n{render_tables(result)}{end}"
    text = path.read_text(encoding="utf-8") if path.exists() else "# Statistics\n"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        _, tail = rest.split(end, 1)
        text = head + body + tail
    else:
        text = text.rstrip("\n") + "\n\n" + body + "\n"
    path.write_text(text, encoding="utf-8")


# --------------------------------------------------------------------------- main
def _parser() -> argparse.ArgumentParser:
    """The command line (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--quick", action="store_true", help="small grid and 40 replicates (make bench; a few minutes on 2 cores)"
    )
    ap.add_argument(
        "--replicates", type=int, default=None, help="replicates per configuration (default 300; 40 with --quick)"
    )
    ap.add_argument(
        "--fleet-replicates", type=int, default=None, help="replicates of the 10-seat fleet (default: --replicates)"
    )
    ap.add_argument(
        "--n-boot",
        type=int,
        default=2000,
        help="bootstrap resamples per analysis (default 2000 for speed; the CLI's default is 10000)",
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (default: all cores)")
    ap.add_argument(
        "--sd-tpot", type=float, default=Model.sd_tpot, help="log-sd of the request-level decode rate (default 0.10)"
    )
    ap.add_argument("--requests", type=int, default=Model.n_requests, help="requests per cell (default 200)")
    ap.add_argument("--concurrencies", default="1,4", help="comma-separated (default 1,4; must include 1)")
    ap.add_argument(
        "--start-ms",
        choices=["auto", "on", "off"],
        default="auto",
        help="write the request field start_ms: auto = only if the loader keeps it (default)",
    )
    ap.add_argument("--passes", default=None, help="custom identical-pair grid: passes, e.g. 3 (replaces the grid)")
    ap.add_argument("--cvs", default=None, help="custom identical-pair grid: pass CVs, e.g. 0.5")
    ap.add_argument("--rhos", default=None, help="custom identical-pair grid: request correlations, e.g. 0")
    ap.add_argument("--only", default=None, help="run only configs whose key contains this (e.g. 'pair:S2:K1')")
    ap.add_argument(
        "--out", type=Path, default=None, help="results JSON (default benchmarks/out/verdict_study[_quick].json)"
    )
    ap.add_argument("--write-docs", action="store_true", help="rewrite the marked section of docs/statistics.md")
    ap.add_argument("--docs-section", default="current", help="name of the marked section (default 'current')")
    ap.add_argument("--docs-title", default=None, help="heading of the section")
    ap.add_argument(
        "--from-json", type=Path, default=None, help="do not simulate: render the docs from an earlier results JSON"
    )
    ap.add_argument(
        "--max-minutes",
        type=float,
        default=None,
        help="start no new replicate after this many minutes (replicates run round-robin, "
        "so every configuration gets about the same share; the counts are reported)",
    )
    ap.add_argument(
        "--halfwidth",
        type=float,
        default=None,
        help="stop a configuration once the Wilson 95%% half-width of each of its headline rates "
        "(false better/worse and cell coverage; fleet: reports with a false verdict; "
        "power: better and worse) is at most this, e.g. 0.03",
    )
    ap.add_argument(
        "--min-replicates",
        type=int,
        default=100,
        help="with --halfwidth: never stop a configuration before this many (default 100)",
    )
    ap.add_argument(
        "--resume",
        action="store_true",
        help="keep the replicates already in --out when it was made with the same options "
        "and the same analysis/ code, and run only the missing ones",
    )
    ap.add_argument(
        "--keep-replicate",
        default=None,
        metavar="KEY@REP:DIR",
        help="debug: write the run files of one replicate to DIR and exit",
    )
    return ap


def _floats(x):
    """A comma-separated list of floats (None when not given)."""
    return tuple(float(v) for v in x.split(",")) if x else None


def _model(a, ap) -> Model:
    """The generator with --sd-tpot, --requests and --concurrencies (which must include 1)."""
    concs = tuple(int(x) for x in a.concurrencies.split(","))
    if 1 not in concs:
        ap.error("--concurrencies must include 1 (the primary cell)")
    return replace(Model(), sd_tpot=a.sd_tpot, n_requests=a.requests, concurrencies=concs)


def _configs(a, ap) -> list[Config]:
    """The grid (--quick, or --passes/--cvs/--rhos), kept to the keys containing --only."""
    configs = [
        c
        for c in grid(
            a.quick,
            passes=tuple(int(v) for v in a.passes.split(",")) if a.passes else None,
            cvs=_floats(a.cvs),
            rhos=_floats(a.rhos),
        )
        if a.only is None or a.only in c.key
    ]
    if not configs:
        ap.error(f"--only {a.only!r} matches no configuration")
    return configs


def _show(a, result: dict) -> None:
    """The marked section of docs/statistics.md rewritten (--write-docs), and the tables on stdout."""
    if a.write_docs:
        write_docs(result, DOCS, a.docs_section, a.docs_title or a.docs_section)
        print(f"[verdict-study] wrote {DOCS}", file=sys.stderr)
    print(render_tables(result))


def _from_json(a) -> dict:
    """--from-json: an earlier result, re-aggregated from its records with this code, shown."""
    result = json.loads(a.from_json.read_text(encoding="utf-8"))
    if result.get("raw"):  # re-aggregate with this code (the records are what was measured)
        truth = result["meta"]["truth"]
        result["configs"] = [
            aggregate(Config(**c["config"]), result["raw"][c["key"]], truth) for c in result["configs"]
        ]
    _show(a, result)
    return result


def _keep_replicate(a, model: Model, start_ms: bool) -> dict:
    """--keep-replicate KEY@REP:DIR: one replicate run, its run files kept in DIR."""
    key, _, rest = a.keep_replicate.partition("@")
    rep, _, folder = rest.partition(":")
    cfg = Config.from_key(key)
    res = replicate(cfg, int(rep or 0), model=model, n_boot=a.n_boot, seed=a.seed, start_ms=start_ms, keep=Path(folder))
    print(json.dumps(res, indent=1))
    return res


def _resumed(a, out: Path, same: dict) -> tuple[dict, float, list[str]]:
    """With --resume, the earlier records in `out`, its elapsed seconds and commands, if made with `same`."""
    if not (a.resume and out.exists()):
        return {}, 0.0, []
    old = json.loads(out.read_text(encoding="utf-8"))
    om = old.get("meta", {})
    if not all(om.get(k) == v for k, v in same.items()):
        print(f"[verdict-study] not resuming {out}: made with other options or other analysis code", file=sys.stderr)
        return {}, 0.0, []
    done = old.get("raw", {})
    print(f"[verdict-study] resuming {out}: {sum(len(v) for v in done.values())} replicates kept", file=sys.stderr)
    return done, float(om.get("elapsed_s", 0.0)), om.get("commands", [om["command"]] if om.get("command") else [])


@dataclass
class _Run:
    """One run of the study from the command line: what its results record and where they are saved."""

    a: argparse.Namespace
    configs: list[Config]
    replicates: int
    fleet_replicates: int
    out: Path
    command: str
    earlier: list[str]  # the commands of the runs resumed
    previous_s: float  # their elapsed seconds
    same: dict  # what a resumed run must share (n_boot, seed, model, start_ms, analysis code)
    supported: bool  # whether the loader keeps start_ms
    truth: dict
    truth_fast: dict
    t0: float = field(default_factory=time.perf_counter)

    def result(self, raw: list[list[dict]], complete: bool) -> dict:
        """The results: meta, one aggregate per configuration, and the records."""
        a = self.a
        return {
            "meta": {
                "command": self.command,
                "commands": self.earlier + [self.command],
                "replicates": self.replicates,
                "fleet_replicates": self.fleet_replicates,
                "jobs": a.jobs,
                "cores": os.cpu_count(),
                "complete": complete,
                "machine": f"{platform.machine()}, Python {platform.python_version()}",
                "date": _dt.date.today().isoformat(),
                "elapsed_s": self.previous_s + time.perf_counter() - self.t0,
                "loader_keeps_start_ms": self.supported,
                "truth": self.truth,
                "truth_fast": self.truth_fast,
                "primary": PRIMARY,
                "git": git_state(),
                "quick": a.quick,
                "halfwidth": a.halfwidth,
                "min_replicates": a.min_replicates if a.halfwidth else None,
                "max_minutes": a.max_minutes,
                **self.same,
            },
            "configs": [aggregate(c, r, self.truth) for c, r in zip(self.configs, raw)],
            "raw": {c.key: r for c, r in zip(self.configs, raw)},
        }

    def save(self, result: dict) -> None:
        """`result` to --out, through a temporary file (a checkpoint is never half written)."""
        self.out.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.out.with_name(self.out.name + ".tmp")
        tmp.write_text(json.dumps(result, allow_nan=True), encoding="utf-8")
        tmp.replace(self.out)

    def enough(self, i: int, records: list[dict]) -> bool:
        """--halfwidth: every headline rate of configuration i is that precise."""
        agg = aggregate(self.configs[i], records, self.truth)
        return all((r["hi"] - r["lo"]) / 2 <= self.a.halfwidth for r in headline_rates(agg) if r["n"])


def _start(a, argv, model: Model, configs: list[Config], supported: bool, start_ms: bool) -> tuple[_Run, dict]:
    """The run's settings and true values (printed with the plan), and the records it resumes."""
    replicates = a.replicates or (40 if a.quick else 300)
    fleet_replicates = a.fleet_replicates or replicates
    out = a.out or OUT_DIR / ("verdict_study_quick.json" if a.quick else "verdict_study.json")
    argv_shown = " ".join(sys.argv[1:]) if argv is None else " ".join(argv)
    same = {
        "n_boot": a.n_boot,
        "seed": a.seed,
        "model": asdict(model),
        "start_ms": start_ms,
        "analysis_sha256": analysis_fingerprint(),
    }
    same = json.loads(json.dumps(same))  # as it reads back from the JSON (tuples become lists)
    command = f"python benchmarks/verdict_study.py {argv_shown}".strip()
    done, previous_s, earlier = _resumed(a, out, same)
    truth = true_mean_decode(model)
    truth_fast = true_mean_decode(model, speed=1.05)
    print(
        f"[verdict-study] true mean decode at pass factor 1: {truth['value']:.4f} tok/s "
        f"(MC SE {truth['mc_se']:.4f}; closed form {truth['closed_form']:.4f})",
        file=sys.stderr,
    )
    print(
        f"[verdict-study] {len(configs)} configurations, {replicates} replicates "
        f"({fleet_replicates} fleet), n_boot {a.n_boot}, {a.jobs} jobs",
        file=sys.stderr,
    )
    run = _Run(
        a=a,
        configs=configs,
        replicates=replicates,
        fleet_replicates=fleet_replicates,
        out=out,
        command=command,
        earlier=earlier,
        previous_s=previous_s,
        same=same,
        supported=supported,
        truth=truth,
        truth_fast=truth_fast,
    )
    return run, done


def main(argv=None) -> dict:
    """Run the study (or render an earlier one) as the command line asks; the results."""
    ap = _parser()
    a = ap.parse_args(argv)
    if a.from_json:
        return _from_json(a)
    model = _model(a, ap)
    configs = _configs(a, ap)
    supported = loader_keeps_start_ms()
    start_ms = {"auto": supported, "on": True, "off": False}[a.start_ms]
    print(f"[verdict-study] loader keeps start_ms: {supported}; writing it: {start_ms}", file=sys.stderr)
    if a.keep_replicate:
        return _keep_replicate(a, model, start_ms)
    run, done = _start(a, argv, model, configs, supported, start_ms)
    raw, complete = run_study(
        configs,
        replicates=run.replicates,
        fleet_replicates=run.fleet_replicates,
        model=model,
        n_boot=a.n_boot,
        seed=a.seed,
        jobs=a.jobs,
        start_ms=start_ms,
        done=done,
        deadline=time.monotonic() + 60 * a.max_minutes if a.max_minutes else None,
        min_replicates=a.min_replicates,
        enough=run.enough if a.halfwidth else None,
        checkpoint=lambda r: run.save(run.result(r, False)),
    )
    result = run.result(raw, complete)
    run.save(result)
    print(
        f"[verdict-study] {result['meta']['elapsed_s']:.0f} s; {'complete' if complete else 'INCOMPLETE'}; "
        f"results in {run.out}",
        file=sys.stderr,
    )
    _show(a, result)
    return result


if __name__ == "__main__":
    main()
