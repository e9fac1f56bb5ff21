"""`make bench`: every benchmark in one run, printed as the table of docs/performance.md.

    python benchmarks/run_all.py [--quick] [--no-verdicts]

Ends with the quick verdict study (benchmarks/verdict_study.py --quick, about a minute on
2 cores; its numbers are a smoke check, docs/statistics.md has the full study).
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import bench_archive  # noqa: E402
import bench_ci  # noqa: E402
import bench_ingest  # noqa: E402
import bench_manifest  # noqa: E402
import bench_one_file  # noqa: E402
import bench_scale  # noqa: E402
import verdict_study  # noqa: E402
from generate import generate  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats and groups")
    ap.add_argument("--no-verdicts", action="store_true", help="skip the quick verdict study")
    ap.add_argument(
        "--no-archive",
        action="store_true",
        help="skip the nightly archive (a year of 10 seats: about an hour on 2 cores; 30 nights with --quick)",
    )
    args = ap.parse_args()
    repeat = "1" if args.quick else "5"
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "fleet50"
        generate(data)
        ingest = bench_ingest.main([str(data), "--repeat", repeat])
        ci = bench_ci.main([str(data), "--groups", "2" if args.quick else "6"])
    scale = bench_scale.main(["--repeat", "1" if args.quick else "3"])
    one = bench_one_file.main(["--requests", "200000" if args.quick else "200000,2000000"])
    manifest = bench_manifest.main(["--repeat", "3" if args.quick else "7"])
    archive = None
    if not args.no_archive:
        with tempfile.TemporaryDirectory() as tmp:
            archive = bench_archive.main(
                ["--seats", "10", "--nights", "30" if args.quick else "365", "--json-nights", "30", "--work", tmp]
                + (["--no-build"] if args.quick else [])
            )
    study = None
    if not args.no_verdicts:
        print()
        study = verdict_study.main(["--quick"])
    print()
    print(
        f"machine: {platform.machine()}, {platform.processor() or 'cpu'}, Python {platform.python_version()}, "
        f"{__import__('os').cpu_count()} cores"
    )
    print("| target | measured | goal |")
    print("|---|---|---|")
    print(
        f"| ingest vs json.load + json_normalize | {ingest['ratio']:.1f}x ({ingest['ours_s']:.2f} s vs {ingest['alternative_s']:.2f} s) | >= 5x |"
    )
    print(f"| CI engine vs scipy.stats.bootstrap loop (BCa, 10k) | {ci['ratio']:.1f}x ({ci['cells']} cells) | >= 10x |")
    a50 = scale["analyse"].get(50)
    if a50:
        print(f"| analyse, 50 seats | {a50['median_s']:.1f} s, peak {a50['peak_mb']:.0f} MB | < 30 s, <= 2 GB |")
    if scale.get("build"):
        b = scale["build"]
        print(f"| build HTML+PDF, {b['seats']} seats | {b['s']:.1f} s, peak {b['peak_mb']:.0f} MB | <= 60 s, <= 2 GB |")
        if "over_analyse" in b:
            print(
                f"| build / analyse, {b['seats']} seats | {b['cpu_over_analyse']:.2f}x CPU ({b['cpu_s']:.1f} s vs "
                f"{b['analyse_cpu_s']:.1f} s, every process), {b['over_analyse']:.2f}x wall (WeasyPrint: "
                f"{b['weasyprint_over_analyse']:.2f}x) | <= 2x CPU, <= 2.5x wall |"
            )
    if scale.get("example"):
        e = scale["example"]
        print(
            f"| build / analyse, the example | {e['cpu_ratio']:.2f}x CPU ({e['build_cpu_s']:.2f} s vs "
            f"{e['analyse_cpu_s']:.2f} s, every process), {e['ratio']:.2f}x wall ({e['build_s']:.2f} s vs "
            f"{e['analyse_s']:.2f} s; WeasyPrint {e['weasyprint_s'] / e['analyse_s']:.2f}x) | <= 2x CPU, <= 2.5x wall |"
        )
    for n, row in one.items():
        print(
            f"| load {n:,} requests, one file vs {bench_one_file.FILES} files | {row['ratio']:.2f}x CPU "
            f"({row['one']['cpu_s']:.1f} s vs {row['many']['cpu_s']:.1f} s), peak {row['one']['peak_mb']:.0f} MB "
            f"| <= 2x, <= 2 GB |"
        )
    print(
        f"| manifest at its limits (1,000 entries), parse + checks | JSON {manifest['benchreport.json'] * 1000:.0f} ms "
        f"(checks without glob compilation {manifest['benchreport.json checks'] * 1000:.0f} ms), "
        f"YAML {manifest['benchreport.yaml'] * 1000:.0f} ms | - |"
    )
    if archive:
        r = archive["ratios"]
        print(
            f"| a nightly archive, {archive['nights']} nights x {archive['seats']} seats "
            f"({archive['request_records']:,} requests) | ingest {archive['ingest_per_night_s']:.2f} s a night; "
            f"analyse from the store {archive['analyse_full']['wall_s']:.0f} s, peak "
            f"{archive['analyse_full']['peak_mb']} MB; a new night {r['analyse_new_night_over_full']:.0%} of it"
            + (
                f"; build from the store {archive['build_full']['wall_s']:.0f} s, a new night "
                f"{r['build_new_night_over_full']:.0%} of it, no change {r['build_no_change_over_full']:.1%}"
                if "build_full" in archive
                else ""
            )
            + f"; peak {archive['peak_mb_max']} MB (process tree, kernel included: "
            f"{archive['tree_peak_mb_max']} MB resident, {archive.get('tree_pss_mb_max')} MB proportional); JSON files / store on {archive['json_nights']} nights "
            f"{r['json_over_store']:.2f}x | <= 10% a new night, <= 2% no change, <= 2 GB |"
        )
    if scale.get("growth"):
        g = scale["growth"]
        print(f"| growth 10 -> 50 seats | {g['data_ratio']:.0f}x data, {g['time_ratio']:.2f}x time | <= 6.5x time |")
    if study:
        for line in verdict_rows(study):
            print(line)


def verdict_rows(study: dict) -> list[str]:
    """Summary rows of the quick verdict study (targets from issue 11)."""
    cfgs = study["configs"]
    reps = study["meta"]["replicates"]
    pct = verdict_study._pct
    rows = []
    pair = [c for c in cfgs if c["config"]["study"] == "pair" and c["false_primary"]["n"]]
    if pair:
        worst = max(pair, key=lambda c: c["false_primary"]["rate"])
        w = worst["config"]
        rows.append(
            f"| verdict study (quick, {reps} reps): worst false better/worse, 2 identical seats "
            f"({w['passes']} pass(es), CV {100 * w['cv']:g}%, rho {w['rho']:g}) | "
            f"{pct(worst['false_primary'])} | <= 5% |"
        )
        cov = [c for c in pair if c["cell_coverage"]["n"]]
        if cov:
            lo = min(cov, key=lambda c: c["cell_coverage"]["rate"])
            hi = max(cov, key=lambda c: c["cell_coverage"]["rate"])
            rows.append(
                f"| verdict study: cell CI coverage, range over the quick grid | "
                f"{100 * lo['cell_coverage']['rate']:.0f}-{100 * hi['cell_coverage']['rate']:.0f}% | 93-97% |"
            )
    for c in cfgs:
        if c["config"]["study"] == "fleet":
            f = c["config"]
            rows.append(
                f"| verdict study: 10 identical seats ({f['passes']} pass(es), CV {100 * f['cv']:g}%), "
                f"reports with any false better/worse | {pct(c['any_false'])}, "
                f"{c['false_per_report']:.1f} per report | <= 5% of reports |"
            )
        if c["config"]["study"] == "power":
            f = c["config"]
            rows.append(
                f"| verdict study: power at a true +5% ({f['passes']} passes, CV {100 * f['cv']:g}%) | "
                f"{pct(c['power_better'])} | (reported) |"
            )
    errors = sum(c["errors"] for c in cfgs)
    if errors:
        rows.append(f"| verdict study: replicates that crashed | {errors} | 0 |")
    return rows


if __name__ == "__main__":
    main()
