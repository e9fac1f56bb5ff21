"""Fleet scale: `benchreport analyse` and `build` at 10, 25 and 50 seats; time, peak memory, growth.

Each size is generated (benchmarks/generate.py, deterministic) and run as a separate
`benchreport` process, so peak memory (the child's own high-water mark, benchmarks/measure.py)
is the command's own.

    python benchmarks/bench_scale.py [--seats 10,25,50] [--repeat 3] [--build-seats 50]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from generate import generate  # noqa: E402
from measure import run_measured  # noqa: E402

BIN = [sys.executable, "-m", "benchreport"]


def run(args) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one benchreport process (benchmarks/measure.py)."""
    m = run_measured(BIN + args)
    if m.returncode != 0:
        raise SystemExit(f"benchreport {' '.join(args)} failed: {m.stderr}")
    return m.wall_s, m.peak_mb


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seats", default="10,25,50")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--build-seats", type=int, default=50, help="seats for the timed HTML+PDF build (0: skip)")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.seats.split(",")]
    out: dict = {"analyse": {}, "build": None}
    with tempfile.TemporaryDirectory() as tmp:
        for seats in sizes:
            data = Path(tmp) / f"fleet{seats}"
            generate(data, seats=seats)
            times, peaks = [], []
            for _ in range(args.repeat):
                t, peak = run(["analyse", str(data), "--out", str(Path(tmp) / f"out{seats}"), "--quiet"])
                times.append(t)
                peaks.append(peak)
            out["analyse"][seats] = {"median_s": statistics.median(times), "peak_mb": max(peaks)}
            print(f"analyse {seats} seats ({seats * 4000} requests): median {statistics.median(times):.2f} s "
                  f"of {args.repeat}, peak {max(peaks):.0f} MB")
        if len(sizes) > 1:
            lo, hi = sizes[0], sizes[-1]
            growth = out["analyse"][hi]["median_s"] / out["analyse"][lo]["median_s"]
            out["growth"] = {"data_ratio": hi / lo, "time_ratio": growth}
            print(f"growth: {hi / lo:.1f}x the data costs {growth:.2f}x the time")
        if args.build_seats:
            data = Path(tmp) / f"fleet{args.build_seats}"
            if not data.exists():
                generate(data, seats=args.build_seats)
            t, peak = run(["build", str(data), "--out", str(Path(tmp) / "report"), "--quiet"])
            out["build"] = {"seats": args.build_seats, "s": t, "peak_mb": peak}
            print(f"build (HTML+PDF) {args.build_seats} seats: {t:.1f} s, peak {peak:.0f} MB")
            a = out["analyse"].get(args.build_seats)
            if a:  # issue 27: the build against analyse of the same data, side by side in this run
                out["build"]["over_analyse"] = t / a["median_s"]
                print(f"build / analyse at {args.build_seats} seats: {t / a['median_s']:.1f}x")
        out["example"] = build_over_analyse(Path(__file__).resolve().parents[1] / "data" / "example", Path(tmp))
    return out


def build_over_analyse(data: Path, tmp: Path) -> dict:
    """`build` (HTML+PDF) against `analyse` of the same data, one after the other (issue 27's ratio)."""
    a, _ = run(["analyse", str(data), "--out", str(tmp / "example-analyse"), "--quiet"])
    b, _ = run(["build", str(data), "--out", str(tmp / "example-build"), "--quiet"])
    print(f"example: analyse {a:.1f} s, build (HTML+PDF) {b:.1f} s: build / analyse {b / a:.1f}x")
    return {"analyse_s": a, "build_s": b, "ratio": b / a}


if __name__ == "__main__":
    main()
