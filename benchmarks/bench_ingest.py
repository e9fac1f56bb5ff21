"""Ingest: benchreport's loader + tidy tables vs json.load + pandas.json_normalize, same files.

The alternative builds the same long-form requests and measurements tables the obvious way
(json.load per file, json_normalize with record_path and meta). Both are timed in one
process, alternating, median of --repeat runs.

    python benchmarks/bench_ingest.py DATA_DIR [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import pandas as pd

from benchreport.load import load
from benchreport.tables import build_tables

META = ["run_id", "date", "pass", ["seat", "id"]]


def ours(folder: Path):
    tables = build_tables(load([folder], progress=False))
    return len(tables.requests), len(tables.measurements)


def alternative(folder: Path):
    req_frames, meas_frames = [], []
    for path in sorted(folder.rglob("*.json")):
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        req_frames.append(pd.json_normalize(doc, record_path="requests", meta=META))
        meas_frames.append(pd.json_normalize(doc, record_path="measurements", meta=META))
    requests = pd.concat(req_frames, ignore_index=True)
    measurements = pd.concat(meas_frames, ignore_index=True)
    return len(requests), len(measurements)


def timed(fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t0, out


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", type=Path)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    t_ours, t_alt = [], []
    for _ in range(args.repeat):
        t, n_ours = timed(ours, args.data)
        t_ours.append(t)
        t, n_alt = timed(alternative, args.data)
        t_alt.append(t)
    assert n_ours == n_alt, (n_ours, n_alt)
    result = {"rows": n_ours, "ours_s": statistics.median(t_ours), "alternative_s": statistics.median(t_alt)}
    result["ratio"] = result["alternative_s"] / result["ours_s"]
    print(
        f"ingest {n_ours[0]} requests: ours {result['ours_s']:.2f} s, "
        f"json.load+json_normalize {result['alternative_s']:.2f} s, ratio {result['ratio']:.1f}x"
    )
    return result


if __name__ == "__main__":
    main()
