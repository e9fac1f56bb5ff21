"""A build with a very long model name vs the same build without (issue 16, item 6).

Copies data/example, gives every run of one seat a `seat.model` of N characters (a random
run of letters, digits and dots: no space, so no line may break inside it), and times
`benchreport build --format html,pdf` on both copies in separate processes.

    python benchmarks/bench_long_names.py [--length 5000] [--n-boot 1000]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "data" / "example"


def long_name(n: int, seed: int = 16) -> str:
    """`n` characters without a space (letters, digits, dots), reproducible."""
    alphabet = np.array(list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789."))
    return "".join(np.random.default_rng(seed).choice(alphabet, n))


def write_copy(folder: Path, length: int) -> Path:
    """data/example with one seat's model `length` characters long (0: unchanged)."""
    shutil.copytree(EXAMPLE, folder)
    if length:
        files = sorted(folder.rglob("*.json"))
        seat = json.loads(files[0].read_text(encoding="utf-8"))["seat"]["id"]
        name = long_name(length)
        for f in files:
            d = json.loads(f.read_text(encoding="utf-8"))
            if isinstance(d, dict) and d.get("seat", {}).get("id") == seat:
                d["seat"]["model"] = name
                f.write_text(json.dumps(d, indent=1), encoding="utf-8")
    return folder


def build_seconds(runs: Path, out: Path, n_boot: int) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchreport",
            "build",
            str(runs),
            "--out",
            str(out),
            "--n-boot",
            str(n_boot),
            "--format",
            "html,pdf",
            "--quiet",
        ],
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"build failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return elapsed


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--length", type=int, default=5000)
    ap.add_argument("--n-boot", type=int, default=1000)
    args = ap.parse_args(argv)
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for label, n in (("normal", 0), (f"model of {args.length} characters", args.length)):
            runs = write_copy(tmp / f"runs-{n}", n)
            out[label] = build_seconds(runs, tmp / f"report-{n}", args.n_boot)
            print(f"{label}: {out[label]:.1f} s", flush=True)
    ratio = out[f"model of {args.length} characters"] / out["normal"]
    print(f"ratio: {ratio:.2f} (issue 16 asks for at most 2)")
    return out


if __name__ == "__main__":
    main()
