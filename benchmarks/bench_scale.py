"""Fleet scale: `benchreport analyse` and `build` at 10, 25 and 50 seats; time, peak memory, growth.

Each size is generated (benchmarks/generate.py, deterministic) and run as a separate
`benchreport` process, so peak memory (the child's own high-water mark, benchmarks/measure.py)
is the command's own. `build` is set against `analyse` of the same data (`build_over_analyse`)
in wall seconds and in CPU seconds of the whole process tree: the command and every process
descended from it, Chromium and its helpers included (the `rusage` that `os.wait4` gives for the
child, plus the descendants that outlived their parent, which measure.py adopts as their
subreaper and waits for: Chromium's zygote and renderers outlive the browser the build waits for).

    python benchmarks/bench_scale.py [--seats 10,25,50] [--repeat 3] [--build-seats 50]
        [--before TREE]    # also time `build` from another checkout (TREE/analysis first on PYTHONPATH)
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from generate import generate  # noqa: E402
from measure import run_measured  # noqa: E402

BIN = [sys.executable, "-m", "benchreport"]


def run(args, tree: Path | None = None):
    """One benchreport process, measured (benchmarks/measure.py: wall, CPU of it and its waited-for
    children, peak RSS); `tree`: another checkout's package first on PYTHONPATH."""
    env = None
    if tree is not None:
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(Path(tree) / "analysis"), os.environ.get("PYTHONPATH", "")]).rstrip(
                os.pathsep
            ),
        }
    m = run_measured(BIN + args, env=env)
    if m.returncode != 0:
        raise SystemExit(f"benchreport {' '.join(args)} failed: {m.stderr}")
    return m


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seats", default="10,25,50")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--build-seats", type=int, default=50, help="seats for the timed HTML+PDF build (0: skip)")
    ap.add_argument(
        "--before",
        type=Path,
        default=None,
        metavar="TREE",
        help="another checkout whose build is timed beside this one's (e.g. `git worktree add`)",
    )
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.seats.split(",")]
    out: dict = {"analyse": {}, "build": None}
    with tempfile.TemporaryDirectory() as tmp:
        for seats in sizes:
            data = Path(tmp) / f"fleet{seats}"
            generate(data, seats=seats)
            times, peaks = [], []
            for _ in range(args.repeat):
                m = run(["analyse", str(data), "--out", str(Path(tmp) / f"out{seats}"), "--quiet"])
                times.append(m.wall_s)
                peaks.append(m.peak_mb)
            out["analyse"][seats] = {"median_s": statistics.median(times), "peak_mb": max(peaks)}
            print(
                f"analyse {seats} seats ({seats * 4000} requests): median {statistics.median(times):.2f} s "
                f"of {args.repeat}, peak {max(peaks):.0f} MB"
            )
        if len(sizes) > 1:
            lo, hi = sizes[0], sizes[-1]
            growth = out["analyse"][hi]["median_s"] / out["analyse"][lo]["median_s"]
            out["growth"] = {"data_ratio": hi / lo, "time_ratio": growth}
            print(f"growth: {hi / lo:.1f}x the data costs {growth:.2f}x the time")
        if args.build_seats:
            data = Path(tmp) / f"fleet{args.build_seats}"
            if not data.exists():
                generate(data, seats=args.build_seats)
            side = build_over_analyse(
                data,
                Path(tmp),
                repeat=max(1, min(args.repeat, 3)),
                label=f"{args.build_seats} seats",
                before=args.before,
            )
            out["build"] = {
                "seats": args.build_seats,
                "s": side["build_s"],
                "peak_mb": side["build_peak_mb"],
                "over_analyse": side["ratio"],
                "cpu_over_analyse": side["cpu_ratio"],
                "cpu_s": side["build_cpu_s"],
                "analyse_cpu_s": side["analyse_cpu_s"],
                "weasyprint_s": side["weasyprint_s"],
                "weasyprint_over_analyse": side["weasyprint_s"] / side["analyse_s"],
            }
            print(
                f"build (HTML+PDF) {args.build_seats} seats: {side['build_s']:.1f} s, peak {side['build_peak_mb']:.0f} MB"
            )
        out["example"] = build_over_analyse(
            Path(__file__).resolve().parents[1] / "data" / "example",
            Path(tmp),
            repeat=max(1, args.repeat),
            label="example",
            before=args.before,
        )
    return out


def build_over_analyse(
    data: Path, tmp: Path, *, repeat: int = 3, label: str = "example", before: Path | None = None
) -> dict:
    """`build` (HTML+PDF, the default PDF engine) against `analyse` of the same data, run
    alternately `repeat` times each, medians of wall seconds and of CPU seconds (the whole process
    tree: `run`); with `before`, that checkout's build in the same alternation; and one build with
    ``--pdf-engine weasyprint`` beside them, for the other engine's cost."""
    runs: dict[str, list] = {"analyse": [], "build": [], "before": []}
    for i in range(repeat):
        runs["analyse"].append(run(["analyse", str(data), "--out", str(tmp / f"{label}-analyse"), "--quiet"]))
        # a new folder each time: a folder built from the same inputs is "up to date" and not rebuilt
        runs["build"].append(run(["build", str(data), "--out", str(tmp / f"{label}-build-{i}"), "--quiet"]))
        if before is not None:
            runs["before"].append(
                run(["build", str(data), "--out", str(tmp / f"{label}-before-{i}"), "--quiet"], tree=before)
            )
    w = run(["build", str(data), "--out", str(tmp / f"{label}-weasyprint"), "--quiet", "--pdf-engine", "weasyprint"])
    wall = {k: statistics.median(m.wall_s for m in v) for k, v in runs.items() if v}
    cpu = {k: statistics.median(m.cpu_s for m in v) for k, v in runs.items() if v}
    a, b = wall["analyse"], wall["build"]
    print(
        f"{label} (medians of {repeat}, alternating): analyse {a:.2f} s wall, {cpu['analyse']:.2f} s CPU; "
        f"build (HTML+PDF) {b:.2f} s wall, {cpu['build']:.2f} s CPU (every process, Chromium included): "
        f"build / analyse {b / a:.2f}x wall, {cpu['build'] / cpu['analyse']:.2f}x CPU; "
        f"with --pdf-engine weasyprint {w.wall_s:.2f} s ({w.wall_s / a:.2f}x), {w.cpu_s:.2f} s CPU"
    )
    if "before" in wall:
        print(
            f"{label}: before ({before}) build {wall['before']:.2f} s wall ({wall['before'] / a:.2f}x), "
            f"{cpu['before']:.2f} s CPU ({cpu['before'] / cpu['analyse']:.2f}x)"
        )
    return {
        "analyse_s": a,
        "build_s": b,
        "ratio": b / a,
        "analyse_cpu_s": cpu["analyse"],
        "build_cpu_s": cpu["build"],
        "cpu_ratio": cpu["build"] / cpu["analyse"],
        "weasyprint_s": w.wall_s,
        "weasyprint_cpu_s": w.cpu_s,
        "build_peak_mb": max(m.peak_mb for m in runs["build"]),
        **({"before_s": wall["before"], "before_cpu_s": cpu["before"]} if "before" in wall else {}),
    }


if __name__ == "__main__":
    main()
