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
            side = build_over_analyse(data, Path(tmp), repeat=max(1, min(args.repeat, 3)), label=f"{args.build_seats} seats")
            out["build"] = {"seats": args.build_seats, "s": side["build_s"], "peak_mb": side["build_peak_mb"],
                            "over_analyse": side["ratio"], "weasyprint_s": side["weasyprint_s"],
                            "weasyprint_over_analyse": side["weasyprint_s"] / side["analyse_s"]}
            print(f"build (HTML+PDF) {args.build_seats} seats: {side['build_s']:.1f} s, peak {side['build_peak_mb']:.0f} MB")
        out["example"] = build_over_analyse(Path(__file__).resolve().parents[1] / "data" / "example", Path(tmp),
                                            repeat=max(1, args.repeat), label="example")
    return out


def build_over_analyse(data: Path, tmp: Path, *, repeat: int = 3, label: str = "example") -> dict:
    """`build` (HTML+PDF, the default PDF engine) against `analyse` of the same data, run
    alternately `repeat` times each, medians (issue 27's ratio); and one build with
    ``--pdf-engine weasyprint`` beside them, for the other engine's cost."""
    a_times, b_times, peaks = [], [], []
    for i in range(repeat):
        a, _ = run(["analyse", str(data), "--out", str(tmp / f"{label}-analyse"), "--quiet"])
        # a new folder each time: a folder built from the same inputs is "up to date" and not rebuilt
        b, peak = run(["build", str(data), "--out", str(tmp / f"{label}-build-{i}"), "--quiet"])
        a_times.append(a)
        b_times.append(b)
        peaks.append(peak)
    w, _ = run(["build", str(data), "--out", str(tmp / f"{label}-weasyprint"), "--quiet", "--pdf-engine", "weasyprint"])
    a, b = statistics.median(a_times), statistics.median(b_times)
    print(f"{label}: analyse {a:.2f} s, build (HTML+PDF) {b:.2f} s (medians of {repeat}, alternating): "
          f"build / analyse {b / a:.2f}x; with --pdf-engine weasyprint {w:.2f} s ({w / a:.2f}x)")
    return {"analyse_s": a, "build_s": b, "ratio": b / a, "weasyprint_s": w, "build_peak_mb": max(peaks)}


if __name__ == "__main__":
    main()
