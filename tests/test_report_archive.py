"""The report of a nightly archive stays readable: consecutive nights measured the same way are
one row of the runs table, and nights whose request records the run store keeps out of memory
still show their counts (from the pass table)."""

from __future__ import annotations

import sys
from pathlib import Path

from benchreport.pipeline import Options, analyse_paths, analyse_store
from benchreport.report.model import sections
from benchreport.store import Store, ingest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from generate import generate  # noqa: E402


def _nights(runs: Path, dates, passes=3):
    for i, d in enumerate(dates):
        generate(runs / d, seats=2, passes=passes, requests=30, concurrencies=(1, 4), date=d, seed=11 + i)


def test_consecutive_nights_measured_the_same_way_are_one_row(tmp_path):
    _nights(tmp_path / "runs", ["2026-11-01", "2026-11-02", "2026-11-03"])
    _nights(tmp_path / "runs", ["2026-11-04"], passes=2)  # measured differently: its own row
    a = analyse_paths([tmp_path / "runs"], Options(n_boot=200))
    df = sections.runs_table(a).data
    assert len(df) == 4  # 2 seats x (three nights, then one)
    dates = list(df["Date"])
    assert dates.count("2026-11-01 to 2026-11-03 (3 dates)") == 2 and dates.count("2026-11-04") == 2
    assert set(df["Requests per cell"]) == {"90 in 2 cells", "60 in 2 cells"}


def test_the_store_route_counts_request_records_of_every_night(tmp_path):
    _nights(tmp_path / "runs", ["2026-11-01", "2026-11-02"])
    ingest([tmp_path / "runs"], tmp_path / "store")
    from_store = sections.runs_table(analyse_store(Store.open(tmp_path / "store"), Options(n_boot=200))).data
    from_files = sections.runs_table(analyse_paths([tmp_path / "runs"], Options(n_boot=200))).data
    assert from_store.to_dict("records") == from_files.to_dict("records")
    assert "none" not in set(from_store["Requests per cell"])


def test_history_comparisons_option_reaches_the_comparisons(tmp_path, capsys):
    from benchreport.cli import main
    from benchreport.pipeline import options_from

    _nights(tmp_path / "runs", ["2026-11-01", "2026-11-02", "2026-11-03"])
    prev = analyse_paths([tmp_path / "runs"], options_from({"n_boot": 200}))
    every = analyse_paths([tmp_path / "runs"], options_from({"n_boot": 200, "history_comparisons": "all"}))
    h_prev = prev.comparisons[prev.comparisons["kind"] == "history"]
    h_all = every.comparisons[every.comparisons["kind"] == "history"]
    assert set(h_prev["baseline_date"]) == {"2026-11-02"}
    assert set(h_all["baseline_date"]) == {"2026-11-01", "2026-11-02"} and len(h_all) == 2 * len(h_prev)
    assert (
        main(
            [
                "analyse",
                str(tmp_path / "runs"),
                "--out",
                str(tmp_path / "out"),
                "--quiet",
                "--history-comparisons",
                "all",
            ]
        )
        == 0
    )
    import pandas as pd

    written = pd.read_csv(tmp_path / "out" / "tables" / "comparisons.csv")
    assert set(written.loc[written["kind"] == "history", "baseline_date"]) == {"2026-11-01", "2026-11-02"}
