"""Helpers for the importer tests that check our figures against a harness's own (`expected.json`).

Our figure for a run is what the statistics layer uses: `benchreport.stats.estimate_cells`' per-pass
table, whose `value` is the harness's reported figure where the run has one, else our statistic
of its request records (`recomputed`). Nothing here re-implements a harness's formula.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd

from benchreport.load import load
from benchreport.stats import estimate_cells
from benchreport.tables import build_tables

HARNESS = Path(__file__).parent / "fixtures" / "harness"
#: The fixture folders the importers read, one a line (each joins when its importer reads it).
FOLDERS = [
    HARNESS / name
    for name in (
        "aiperf",
        "aiperf-errors",
        "aiperf-export",
        "aiperf-sweep",
        "aiperf-versions",
        "aiperf-warmup-failed",
        "genai-perf",
        "guidellm",
        "guidellm-reasoning",
        "guidellm-versions",
        "lmeval",
        "vllm",
        "vllm-0.6",
        "vllm-bench-serve",
    )
]


def oracle(folder: str) -> dict:
    return json.loads((HARNESS / folder / "expected.json").read_text())


def copy_with_manifest(folder: str, dest: Path, manifest: str | None = None) -> Path:
    """The fixture folder copied to `dest` (so a manifest can sit beside it), with `manifest` text."""
    shutil.copytree(HARNESS / folder, dest)
    if manifest is not None:
        (dest / "benchreport.yaml").write_text(manifest)
    return dest


def load_tables(*paths):
    result = load(list(paths))
    tables = build_tables(result)
    passes = estimate_cells(tables.measurements, tables.requests, tables.runs, n_resamples=200, seed=0).passes
    return result, tables, passes


def pass_row(passes: pd.DataFrame, run_id: str, metric: str, statistic: str) -> pd.Series:
    """Our (one) per-pass row of a run's metric and statistic."""
    rows = passes[(passes.run_id == run_id) & (passes.metric == metric) & (passes.statistic == statistic)]
    assert len(rows) == 1, (run_id, metric, statistic, len(rows))
    return rows.iloc[0]


def has_metric(passes: pd.DataFrame, run_id: str, metric: str) -> bool:
    return bool(((passes.run_id == run_id) & (passes.metric == metric)).any())


def requests_of(tables, run_id: str) -> pd.DataFrame:
    return tables.requests[tables.requests.run_id == run_id]


def value(entry):
    """An oracle entry's value (entries are {value, source})."""
    return entry["value"] if isinstance(entry, dict) else entry
