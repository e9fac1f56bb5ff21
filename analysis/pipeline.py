"""The analysis in one call: loaded runs -> tidy tables -> statistics -> flags.

Pure in the middle: `analyse` takes a LoadResult and returns an `Analysis` holding
DataFrames; only `write_analysis` touches the file system. The report notebook, the
command line and the exploration notebook all go through here, so every route gives
the same numbers for the same data and seed.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from analysis.load import LoadResult, load
from analysis.progress import note
from analysis.stats.compare import PrimaryCell
from analysis.tables import Tables, build_tables
from analysis.thresholds import DEFAULT, Thresholds

if TYPE_CHECKING:
    from analysis.flags import Exclusions


@dataclass(frozen=True)
class Options:
    """Everything that changes the numbers, printed in the report's appendix."""

    baseline: str | None = None
    n_boot: int = 10000
    seed: int = 0
    ci_method: str = "BCa"
    thresholds: Thresholds = DEFAULT
    multiplicity: str = "holm"
    primary: PrimaryCell = PrimaryCell()

    def parameters(self) -> dict:
        """The options as plain data (papermill parameters, the appendix), thresholds excluded."""
        return {"baseline": self.baseline, "n_boot": self.n_boot, "seed": self.seed,
                "ci_method": self.ci_method, "multiplicity": self.multiplicity,
                "primary_metric": self.primary.metric, "primary_statistic": self.primary.statistic,
                "primary_workload": self.primary.workload, "primary_concurrency": self.primary.concurrency}

    def as_dict(self) -> dict:
        return {**self.parameters(), **self.thresholds.as_dict()}


def primary_cell(metric: str = "output_tok_s", statistic: str = "mean", workload: str | None = "decode",
                 concurrency: int | None = None) -> PrimaryCell:
    """The declared headline cell from plain parameters (CLI options, notebook parameters)."""
    return PrimaryCell(metric=metric, statistic=statistic, workload=workload or None,
                       concurrency=None if concurrency in (None, "", "max") else int(concurrency))


@dataclass
class Analysis:
    """One data set analysed: the loaded files, the tidy tables, statistics and flags."""

    loaded: LoadResult
    tables: Tables
    cells: pd.DataFrame
    comparisons: pd.DataFrame
    exam_deltas: pd.DataFrame
    flags: pd.DataFrame
    options: Options = field(default_factory=Options)
    passes: pd.DataFrame | None = None
    #: the figures excluded from results, decided once (analysis.flags.Exclusions)
    excluded: "Exclusions | None" = None
    #: the typed findings behind `flags`, in rule order (analysis.flags.findings)
    findings: list = field(default_factory=list)

    def flags_records(self) -> list[dict]:
        """The flags in the JSON shape of spec/flags.md."""
        from analysis.flags import flags_to_records

        return flags_to_records(self.flags)

    @property
    def baseline(self) -> str | None:
        """The seat every other seat is compared against (option, else the incumbent)."""
        if self.options.baseline:
            return self.options.baseline
        seats = self.tables.seats
        inc = seats.loc[seats["role"] == "incumbent", "seat"]
        return str(inc.iloc[0]) if len(inc) else None


def analyse(loaded: LoadResult, options: Options = Options(), *, quiet: bool = True) -> Analysis:
    """Statistics and flags for loaded runs (no I/O)."""
    from analysis.flags import decide_exclusions, drop_excluded, find, to_frame
    from analysis.stats.cells import estimate_cells
    from analysis.stats.compare import comparisons as compute_comparisons
    from analysis.stats.exams import exam_deltas as compute_exam_deltas

    th = options.thresholds
    tables = build_tables(loaded)
    note(f"analysing {len(tables.runs)} run(s) of {len(tables.seats)} seat(s)", quiet=quiet)
    # figures excluded from results (a prefix-cache hit is not prefill) are decided once, with
    # the user's thresholds: they never reach the statistics, and the flags say why from the
    # same decision
    excluded = decide_exclusions(tables, thresholds=th)
    kept = drop_excluded(tables, excluded)
    cellset = estimate_cells(kept.measurements, kept.requests, kept.runs, method=options.ci_method,
                             n_resamples=options.n_boot, seed=options.seed, thresholds=th)
    comparisons = compute_comparisons(cellset, kept.seats, baseline=options.baseline, thresholds=th,
                                      multiplicity=options.multiplicity, primary=options.primary)
    exam_deltas = compute_exam_deltas(tables.exams, tables.exam_items, tables.seats,
                                      baseline=options.baseline, alpha=th.alpha, power=th.power)
    findings = find(tables, cells=cellset.cells, comparisons=comparisons, exam_deltas=exam_deltas,
                    excluded=excluded, thresholds=th, baseline=options.baseline, passes=cellset.passes)
    return Analysis(loaded, tables, cellset.cells, comparisons, exam_deltas, to_frame(findings), options,
                    cellset.passes, excluded, findings)


def analyse_paths(paths, options: Options = Options(), *, max_file_bytes: int | None = None,
                  quiet: bool = True) -> Analysis:
    """Load and analyse in one call (for notebooks)."""
    kwargs = {} if max_file_bytes is None else {"max_file_bytes": max_file_bytes}
    return analyse(load(paths, progress=None if not quiet else False, **kwargs), options, quiet=quiet)


def _csv(df: pd.DataFrame, path: Path) -> None:
    df.to_csv(path, index=False, lineterminator="\n", float_format=None)


def write_analysis(analysis: Analysis, out_dir: str | os.PathLike) -> list[Path]:
    """`OUT/tables/{cells,comparisons,exam_deltas}.csv`, `OUT/flags.json`, `OUT/refused.json`."""
    out = Path(out_dir)
    tables_dir = out / "tables"
    tables_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name in ("cells", "comparisons", "exam_deltas", "passes"):
        path = tables_dir / f"{name}.csv"
        _csv(getattr(analysis, name), path)
        written.append(path)
    path = out / "flags.json"
    path.write_text(json.dumps(analysis.flags_records(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    written.append(path)
    path = out / "refused.json"
    path.write_text(analysis.loaded.refused_json(), encoding="utf-8")
    written.append(path)
    return written
