"""`make bench`: every benchmark in one run, printed as the table of docs/performance.md.

    python benchmarks/run_all.py [--quick]
"""
from __future__ import annotations

import argparse
import platform
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import bench_ci  # noqa: E402
import bench_ingest  # noqa: E402
import bench_one_file  # noqa: E402
import bench_scale  # noqa: E402
from generate import generate  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats and groups")
    args = ap.parse_args()
    repeat = "1" if args.quick else "5"
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "fleet50"
        generate(data)
        ingest = bench_ingest.main([str(data), "--repeat", repeat])
        ci = bench_ci.main([str(data), "--groups", "2" if args.quick else "6"])
    scale = bench_scale.main(["--repeat", "1" if args.quick else "3"])
    one = bench_one_file.main(["--requests", "200000" if args.quick else "200000,2000000"])
    print()
    print(f"machine: {platform.machine()}, {platform.processor() or 'cpu'}, Python {platform.python_version()}, "
          f"{__import__('os').cpu_count()} cores")
    print("| target | measured | goal |")
    print("|---|---|---|")
    print(f"| ingest vs json.load + json_normalize | {ingest['ratio']:.1f}x ({ingest['ours_s']:.2f} s vs {ingest['alternative_s']:.2f} s) | >= 5x |")
    print(f"| CI engine vs scipy.stats.bootstrap loop (BCa, 10k) | {ci['ratio']:.1f}x ({ci['cells']} cells) | >= 10x |")
    a50 = scale["analyse"].get(50)
    if a50:
        print(f"| analyse, 50 seats | {a50['median_s']:.1f} s, peak {a50['peak_mb']:.0f} MB | < 30 s, <= 2 GB |")
    if scale.get("build"):
        b = scale["build"]
        print(f"| build HTML+PDF, {b['seats']} seats | {b['s']:.1f} s, peak {b['peak_mb']:.0f} MB | <= 60 s, <= 2 GB |")
    for n, row in one.items():
        print(f"| load {n:,} requests, one file vs {bench_one_file.FILES} files | {row['ratio']:.2f}x CPU "
              f"({row['one']['cpu_s']:.1f} s vs {row['many']['cpu_s']:.1f} s), peak {row['one']['peak_mb']:.0f} MB "
              f"| <= 2x, <= 2 GB |")
    if scale.get("growth"):
        g = scale["growth"]
        print(f"| growth 10 -> 50 seats | {g['data_ratio']:.0f}x data, {g['time_ratio']:.2f}x time | <= 6.5x time |")


if __name__ == "__main__":
    main()
