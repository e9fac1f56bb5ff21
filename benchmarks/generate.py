"""Deterministic fleet-scale data set: seats x concurrencies x passes x requests, native JSON.

Default: 50 seats x 4 concurrencies x 5 passes x 200 requests = 200,000 request records in
250 files (one file per seat and pass), about 40 MB. Latencies are lognormal around a
per-seat level that grows with concurrency; a few seats drift across passes so the flags
have something to find. Same arguments, same bytes.

    python benchmarks/generate.py OUT_DIR [--seats 50] [--passes 5] [--requests 200]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

CONCURRENCIES = (1, 4, 16, 64)


def generate(
    out: Path,
    *,
    seats: int = 50,
    passes: int = 5,
    requests: int = 200,
    concurrencies=CONCURRENCIES,
    seed: int = 20261129,
    date: str = "2026-11-01",
) -> list[Path]:
    """Write the data set into `out`; returns the files written (sorted)."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for s in range(seats):
        rng = np.random.default_rng([seed, s])
        seat_id = f"seat-{s:03d}"
        base_ttft = rng.uniform(20, 200)
        base_tpot = rng.uniform(5, 25)
        drift = 0.08 if s % 10 == 3 else 0.0
        for p in range(1, passes + 1):
            reqs, meas = [], []
            for c in concurrencies:
                load = 1 + 0.15 * np.log2(c)
                ttft = rng.lognormal(np.log(base_ttft * load * (1 - drift * (passes - p))), 0.35, requests)
                tpot = rng.lognormal(np.log(base_tpot * load), 0.15, requests)
                out_tok = rng.integers(128, 513, requests)
                prompt = rng.integers(256, 2049, requests)
                e2e = ttft + tpot * (out_tok - 1)
                for i in range(requests):
                    reqs.append(
                        {
                            "workload": "decode",
                            "concurrency": c,
                            "prompt_tokens": int(prompt[i]),
                            "output_tokens": int(out_tok[i]),
                            "ttft_ms": round(float(ttft[i]), 3),
                            "e2e_latency_ms": round(float(e2e[i]), 3),
                            "itl_ms": round(float(tpot[i]), 3),
                            "finish_reason": "stop",
                        }
                    )
                meas.append(
                    {
                        "workload": "decode",
                        "concurrency": c,
                        "metric": "output_tok_s",
                        "value": round(float(c * 1000 / (base_tpot * load) * (1 - drift * (passes - p))), 2),
                        "unit": "tok/s",
                    }
                )
            run = {
                "format": "benchreport.run/1",
                "run_id": f"{seat_id}-{date}-p{p}",
                "date": date,
                "seat": {
                    "id": seat_id,
                    "model": f"Model-{s % 7}",
                    "role": "incumbent" if s == 0 else "candidate",
                    "checkpoint_bytes": 60e9,
                    "placement": {"nodes": 1, "gpus_per_node": 2, "gpu_memory_bytes": 102641958912},
                },
                "harness": {"name": "in-house", "version": "1.0", "probe": "fleet-512", "max_tokens": 512},
                "pass": p,
                "warmup_excluded": True,
                "measurements": meas,
                "requests": reqs,
            }
            path = out / f"{seat_id}-{date}-p{p}.json"
            path.write_text(json.dumps(run, separators=(",", ":")), encoding="utf-8")
            written.append(path)
    return sorted(written)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--seats", type=int, default=50)
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--requests", type=int, default=200)
    args = ap.parse_args()
    files = generate(args.out, seats=args.seats, passes=args.passes, requests=args.requests)
    size = sum(f.stat().st_size for f in files)
    print(f"{len(files)} files, {size / 1e6:.1f} MB in {args.out}")


if __name__ == "__main__":
    main()
