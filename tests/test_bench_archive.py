"""The nightly-archive benchmark runs end to end on a tiny archive (its numbers are in docs/performance.md)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_archive  # noqa: E402


def test_the_archive_benchmark_runs_small(tmp_path):
    res = bench_archive.main(
        [
            "--seats",
            "2",
            "--nights",
            "4",
            "--requests",
            "10",
            "--json-nights",
            "2",
            "--no-build",
            "--engines",
            "ducklake",
            "--work",
            str(tmp_path),
            "--json",
            str(tmp_path / "r.json"),
        ]
    )
    assert res["request_records"] == 2 * 4 * 4 * 5 * 10 and res["json_nights"] == 2
    for step in (
        "ingest_all_but_last",
        "analyse_full",
        "ingest_one_night_analyse",
        "analyse_new_night",
        "analyse_no_change",
        "analyse_store_same_nights",
        "analyse_json",
    ):
        assert res[step]["wall_s"] > 0 and res[step]["peak_mb"] > 0, step
    assert set(res["ratios"]) >= {"analyse_new_night_over_full", "analyse_no_change_over_full", "json_over_store"}
    assert (tmp_path / "r.json").is_file() and (tmp_path / "out" / "analyse" / "tables" / "history.csv").is_file()


def test_the_archive_benchmark_times_full_new_night_and_no_change_builds(tmp_path):
    res = bench_archive.main(
        [
            "--seats",
            "2",
            "--nights",
            "3",
            "--requests",
            "10",
            "--builds-only",
            "--work",
            str(tmp_path),
            "--json",
            str(tmp_path / "b.json"),
        ]
    )
    for step in ("build_full", "ingest_one_night", "build_new_night", "build_no_change"):
        assert res[step]["wall_s"] > 0, step
    assert res["build_no_change"]["wall_s"] < res["build_full"]["wall_s"]
    assert set(res["ratios"]) == {"build_new_night_over_full", "build_no_change_over_full"}
    assert "analyse_full" not in res and (tmp_path / "b.json").is_file()
    assert list(res["by_engine"]) == ["ducklake", "parquet"]  # side by side in the one run
    for engine, steps in res["by_engine"].items():
        assert steps["build_full"]["cpu_s"] > 0 and steps["build_no_change"]["wall_s"] > 0, engine
        assert (tmp_path / "out" / f"build-{engine}" / "report.html").is_file()
    assert (tmp_path / "store-2x3-parquet" / "files.parquet").is_file()
    assert (tmp_path / "store-2x3-ducklake" / "catalog.sqlite").is_file()
