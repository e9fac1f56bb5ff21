"""Load side of one huge file: N requests in one run file vs the same N requests in 250 files.

Both data sets hold the same request records (the same bytes per record); "one" is a single
run of one seat and pass, "many" is 250 runs of 50 seats x 5 passes. Each is loaded in a
separate process (`benchreport.load.load` + `benchreport.tables.build_tables`, every check
included), so peak memory (its own high-water mark, benchmarks/measure.py) is that load's own.
Statistics are not timed here: one pass of N requests is one bootstrap over N observations, a
cost of the stats layer.

    python benchmarks/bench_one_file.py [--requests 200000,2000000] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from measure import run_measured  # noqa: E402

FILES = 250
LOAD = (
    "import sys; from benchreport.load import load; from benchreport.tables import build_tables; "
    "r = load([sys.argv[1]], progress=False); assert r.ok, [str(x) for x in r.refused[:3]]; "
    "t = build_tables(r); assert len(t.requests) == int(sys.argv[2]), len(t.requests)"
)


def _requests(rng: np.random.Generator, n: int) -> list[str]:
    """`n` request records as compact JSON text (lognormal latencies, as benchmarks/generate.py)."""
    ttft = rng.lognormal(np.log(80), 0.35, n).round(3)
    tpot = rng.lognormal(np.log(12), 0.15, n).round(3)
    out_tok = rng.integers(128, 513, n)
    prompt = rng.integers(256, 2049, n)
    e2e = (ttft + tpot * (out_tok - 1)).round(3)
    conc = np.array([1, 4, 16, 64])[rng.integers(0, 4, n)]
    return [
        json.dumps(
            {
                "workload": "decode",
                "concurrency": int(conc[i]),
                "prompt_tokens": int(prompt[i]),
                "output_tokens": int(out_tok[i]),
                "ttft_ms": float(ttft[i]),
                "e2e_latency_ms": float(e2e[i]),
                "itl_ms": float(tpot[i]),
                "finish_reason": "stop",
            },
            separators=(",", ":"),
        )
        for i in range(n)
    ]


def _run(run_id: str, seat: str, pass_: int) -> str:
    head = {
        "format": "benchreport.run/1",
        "run_id": run_id,
        "date": "2026-11-01",
        "seat": {"id": seat, "model": "Model-1", "role": "candidate"},
        "harness": {"name": "in-house", "probe": "fleet-512", "max_tokens": 512},
        "pass": pass_,
        "warmup_excluded": True,
    }
    return json.dumps(head, separators=(",", ":"))[:-1] + ',"requests":['


def write(folder: Path, n: int, *, one: bool, seed: int = 20261201) -> int:
    """Write the data set; returns its size in bytes."""
    folder.mkdir(parents=True, exist_ok=True)
    records = _requests(np.random.default_rng(seed), n)
    size = 0
    if one:
        path = folder / "one.json"
        with open(path, "w", encoding="utf-8") as f:
            f.write(_run("one", "seat-000", 1) + ",".join(records) + "]}")
        return path.stat().st_size
    per = n // FILES
    for i in range(FILES):
        seat, pass_ = f"seat-{i // 5:03d}", i % 5 + 1
        part = records[i * per : (i + 1) * per] if i < FILES - 1 else records[i * per :]
        path = folder / f"{seat}-p{pass_}.json"
        path.write_text(_run(f"{seat}-p{pass_}", seat, pass_) + ",".join(part) + "]}", encoding="utf-8")
        size += path.stat().st_size
    return size


def load_once(folder: Path, n: int) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (MiB) of loading `folder` in a fresh
    process. CPU time is the fairer measure on a shared machine; both are reported."""
    m = run_measured([sys.executable, "-c", LOAD, str(folder), str(n)], stdout=None)
    if m.returncode != 0:
        raise SystemExit(f"loading {folder} failed: {m.stderr}")
    return m.wall_s, m.cpu_s, m.peak_mb


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", default="200000,2000000", help="comma-separated request counts")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args(argv)
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in args.requests.split(",")):
            row = {}
            for kind in ("one", "many"):
                folder = Path(tmp) / f"{kind}-{n}"
                size = write(folder, n, one=kind == "one")
                runs = [load_once(folder, n) for _ in range(args.repeat)]
                row[kind] = {
                    "s": statistics.median(r[0] for r in runs),
                    "cpu_s": statistics.median(r[1] for r in runs),
                    "peak_mb": max(r[2] for r in runs),
                    "mb": size / 1e6,
                }
                shutil.rmtree(folder)
            row["ratio"] = row["one"]["cpu_s"] / row["many"]["cpu_s"]
            out[n] = row
            one, many = row["one"], row["many"]
            print(
                f"load {n:,} requests: one file ({one['mb']:.0f} MB) {one['cpu_s']:.1f} s CPU "
                f"({one['s']:.1f} s wall), peak {one['peak_mb']:.0f} MB; {FILES} files {many['cpu_s']:.1f} s CPU "
                f"({many['s']:.1f} s wall), peak {many['peak_mb']:.0f} MB; one/many {row['ratio']:.2f}x CPU"
            )
    return out


if __name__ == "__main__":
    main()
