"""A deterministic nightly archive: one folder a night, one native file per seat and pass.

Every night each seat is measured at 4 concurrencies in 5 passes of 200 requests (the
issue's fleet: 365 nights x 10 seats = 14.6 million request records). A night shares one
lognormal factor across its passes (`night_cv`), each pass has its own (`pass_cv`), and
`step` (seat index, night index, factor) multiplies that seat's throughput from that
night on (latencies divided by it): the change the history verdicts must find.

    python benchmarks/generate_archive.py OUT_DIR [--seats 10] [--nights 365] [--requests 200]

Same arguments, same bytes. Requests are written with numpy's formatting (the JSON is
assembled as text), so a year of a 10-seat fleet is written in a few minutes.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
from pathlib import Path

import numpy as np

CONCURRENCIES = (1, 4, 16, 64)


def nights(start: str, n: int) -> list[str]:
    d0 = dt.date.fromisoformat(start)
    return [(d0 + dt.timedelta(days=i)).isoformat() for i in range(n)]


def _requests_json(rng, conc: int, n: int, ttft0: float, tpot0: float) -> str:
    ttft = rng.lognormal(np.log(ttft0), 0.35, n)
    tpot = rng.lognormal(np.log(tpot0), 0.15, n)
    out_tok = rng.integers(128, 513, n)
    prompt = rng.integers(256, 2049, n)
    e2e = ttft + tpot * (out_tok - 1)
    return ",".join(
        f'{{"workload":"decode","concurrency":{conc},"prompt_tokens":{p},"output_tokens":{o},'
        f'"ttft_ms":{t:.3f},"e2e_latency_ms":{e:.3f},"itl_ms":{i:.3f},"finish_reason":"stop"}}'
        for p, o, t, e, i in zip(prompt.tolist(), out_tok.tolist(), ttft.tolist(), e2e.tolist(), tpot.tolist())
    )


def generate_archive(
    out: Path,
    *,
    seats: int = 10,
    n_nights: int = 365,
    passes: int = 5,
    requests: int = 200,
    concurrencies=CONCURRENCIES,
    start: str = "2026-01-01",
    pass_cv: float = 0.01,
    night_cv: float = 0.0,
    step: tuple[int, int, float] | None = (1, 200, 0.95),
    seed: int = 20261201,
    first_night: int = 0,
) -> list[Path]:
    """Write nights `first_night`..`n_nights - 1` into OUT/YYYY-MM-DD/; returns the files written."""
    out.mkdir(parents=True, exist_ok=True)
    ps, ns = np.sqrt(np.log1p(pass_cv**2)), np.sqrt(np.log1p(night_cv**2))
    dates = nights(start, n_nights)
    written = []
    for k in range(first_night, n_nights):
        date = dates[k]
        folder = out / date
        folder.mkdir(exist_ok=True)
        for s in range(seats):
            base = np.random.default_rng([seed, s])
            ttft0, tpot0 = base.uniform(20, 200), base.uniform(5, 25)
            rng = np.random.default_rng([seed, s, k])
            speed = float(np.exp(rng.normal(0, ns))) if night_cv else 1.0
            if step is not None and s == step[0] and k >= step[1]:
                speed *= step[2]
            seat_id = f"seat-{s:03d}"
            for p in range(1, passes + 1):
                f = speed * float(np.exp(rng.normal(0, ps)))
                meas, reqs = [], []
                for c in concurrencies:
                    load = 1 + 0.15 * np.log2(c)
                    meas.append(
                        {
                            "workload": "decode",
                            "concurrency": c,
                            "metric": "output_tok_s",
                            "value": round(c * 1000 / (tpot0 * load) * f, 3),
                            "unit": "tok/s",
                        }
                    )
                    if requests:
                        reqs.append(_requests_json(rng, c, requests, ttft0 * load / f, tpot0 * load / f))
                head = {
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
                }
                text = json.dumps(head, separators=(",", ":"))[:-1] + ',"requests":[' + ",".join(reqs) + "]}"
                path = folder / f"{seat_id}-p{p}.json"
                path.write_text(text, encoding="utf-8")
                written.append(path)
    return written


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--seats", type=int, default=10)
    ap.add_argument("--nights", type=int, default=365)
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--first-night", type=int, default=0, help="write only nights from this index on")
    args = ap.parse_args()
    files = generate_archive(
        args.out,
        seats=args.seats,
        n_nights=args.nights,
        passes=args.passes,
        requests=args.requests,
        first_night=args.first_night,
    )
    size = sum(f.stat().st_size for f in files)
    print(f"{len(files)} files, {size / 1e6:.1f} MB in {args.out}")


if __name__ == "__main__":
    main()
