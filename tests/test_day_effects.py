"""Day effects in the cell interval (issue 43): a cell measured on several dates takes the date as
the unit, so its interval covers the seat's long-run level whatever the day-to-day spread.

A small simulation of the two-level model on the statistics, then a few replicates through the
command line on request-level runs (benchmarks/day_effect_study.py has the full study)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from benchreport.cli import main
from benchreport.stats.sessions import MIN_SESSIONS, session_level

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))


def _days(logs: np.ndarray) -> list[tuple]:
    return [
        (row.shape[0], float(row.mean()), float(((row - row.mean()) ** 2).sum()), f"d{i}") for i, row in enumerate(logs)
    ]


def test_date_unit_covers_the_long_run_level_where_passes_do_not():
    rng = np.random.default_rng(43)
    reps, hit_days, hit_passes = 1000, 0, 0
    for _ in range(reps):
        logs = 0.05 * rng.standard_normal((3, 1)) + 0.02 * rng.standard_normal((3, 3))  # true level 0
        lv = session_level(_days(logs))
        t = stats.t.ppf(0.975, lv.df)
        hit_days += abs(lv.log_mean) <= t * lv.log_se
        last = logs[-1]  # the latest date's passes alone, as before issue 43
        hit_passes += abs(last.mean()) <= stats.t.ppf(0.975, 2) * last.std(ddof=1) / math.sqrt(3)
    assert 0.93 <= hit_days / reps <= 0.97, hit_days
    assert hit_passes / reps < 0.75, hit_passes


def test_two_dates_are_too_few():
    logs = np.log([[100.0, 101.0], [104.0, 103.0]])
    assert MIN_SESSIONS == 3 and session_level(_days(logs)) is None


def test_cli_cells_cover_the_long_run_level(tmp_path):
    """15 replicates of two identical seats on 3 dates x 3 passes, 5% day effects: the cells of the
    per-stream decode mean cover the long-run level (in 30 cells, expected 28.5; the latest date's
    passes alone covered about 60%, 18)."""
    from day_effect_study import CELL, truth
    from session_study import write_replicate

    hits = 0
    for rep in range(15):
        runs, out = tmp_path / f"runs{rep}", tmp_path / f"out{rep}"
        runs.mkdir()
        write_replicate(runs, 0.05, 1.0, 1000 + rep)
        assert main(["analyse", str(runs), "--out", str(out), "--quiet"]) == 0
        cells = pd.read_csv(out / "tables" / "cells.csv")
        c = cells[(cells["metric"] == CELL[0]) & (cells["statistic"] == CELL[1])]
        assert set(c["ci_route"]) == {"t_log_sessions"}
        hits += int(((c["ci_low"] <= truth(1.0)) & (truth(1.0) <= c["ci_high"])).sum())
    assert hits >= 25, hits


def test_a_run_store_gives_the_same_cells_and_bootstrap(tmp_path):
    """The run store's route (passes read date by date) gives the folder's cells, the date-unit
    intervals and the seeded bootstrap alike."""
    from benchreport.pipeline import Options, analyse_paths, analyse_store
    from benchreport.store import Store, ingest
    from session_study import write_replicate

    folder = tmp_path / "runs"
    folder.mkdir()
    write_replicate(folder, 0.03, 1.0, 7)
    ingest([folder], tmp_path / "store")
    cols = ["seat", "metric", "statistic", "estimate", "ci_low", "ci_high", "ci_route", "ci_method"]
    for options in (Options(), Options(ci_method="bootstrap", n_boot=500, seed=4)):
        stored = analyse_store(Store.open(tmp_path / "store"), options).cells[cols]
        direct = analyse_paths([folder], options).cells[cols]
        assert set(direct["ci_route"]) == {"bootstrap_sessions" if options.ci_method != "t" else "t_log_sessions"}
        pd.testing.assert_frame_equal(stored.reset_index(drop=True), direct.reset_index(drop=True), rtol=1e-12)
