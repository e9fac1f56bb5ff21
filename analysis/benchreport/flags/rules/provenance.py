"""Provenance: what an importer assumed, harness figures their own request records do not
reproduce, and a figure one run reports twice with two values (import.assumed,
import.figure_mismatch, sample.repeated_figure)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from benchreport import format as F
from benchreport.thresholds import Thresholds

from .._common import cell_dict, cell_order, plain, used
from ..findings import CellKey, Finding, key, one_cell

__all__ = [
    "ImportAssumed",
    "MismatchCell",
    "FigureMismatch",
    "RepeatedFigure",
    "import_assumed",
    "figure_mismatch",
    "repeated_figure",
]


@dataclass(frozen=True, kw_only=True)
class ImportAssumed(Finding):
    """Runs of one seat imported without a manifest, and what the importer assumed (said once per shape)."""

    CODES = ("import.assumed",)
    runs: list[str]
    assumptions: list[str]
    source_formats: list[str]
    source_files: list[str]


@dataclass(frozen=True, kw_only=True)
class MismatchCell(CellKey):
    harness: str | None
    date: str
    pass_: int = key("pass")
    reported: float
    recomputed: float
    relative_difference: float | None
    n_obs: int | None
    #: for an importer's check of a harness aggregate against the files read (runs.figure_checks)
    against: str | None = None
    label: str | None = None
    basis: str | None = None
    #: a check of the harness's summary against its own records: the harness's key, and the
    #: requests a share (`statistic` share, e.g. an error rate) is of
    field: str | None = None
    of: int | None = None

    def evidence(self) -> dict:
        ev = super().evidence()
        for k in ("against", "label", "basis", "field", "of"):
            if ev.get(k) is None:
                ev.pop(k, None)
        return ev


@dataclass(frozen=True, kw_only=True)
class FigureMismatch(Finding):
    CODES = ("import.figure_mismatch",)
    n_cells: int
    cells: list[MismatchCell]
    worst_relative_difference: float
    thresholds: dict[str, float]


@dataclass(frozen=True, kw_only=True)
class RepeatedFigure(Finding):
    """One run reporting the same figure (workload, concurrency, metric, statistic, measurement
    condition and context) more than once with different values; the first one is used."""

    CODES = ("sample.repeated_figure",)
    run_id: str
    source_file: str | None
    condition: str | None
    values: list[float]
    used: float


#: what makes two figures of one run the same figure (the pass rows' key within a run)
_FIGURE_KEY = ["run_id", "workload", "concurrency", "metric", "statistic", "condition", "context_tokens"]


def repeated_figure(tables, excluded=None) -> list[RepeatedFigure]:
    """`sample.repeated_figure`: a run gives one figure twice with different values (a file written
    by hand or by two tools). The statistics use the first, as printed; the finding names both
    values and the file, so no value is dropped in silence. Figures decided not to be results
    (prefix-cache hits, benchreport.flags.exclusions) are told by their own flag and left out."""
    m = tables.measurements
    if m is None or len(m) < 2:
        return []
    if excluded is not None:
        m = m[~excluded.mask(m).to_numpy(dtype=bool)]
    m = m.assign(statistic=m["statistic"].astype(object).where(m["statistic"].notna(), "mean"))
    groups: dict[tuple, list[int]] = {}
    for i, figure in enumerate(zip(*(F.plain_values(m[k]) for k in _FIGURE_KEY))):
        groups.setdefault(figure, []).append(i)
    repeated = [pos for pos in groups.values() if len(pos) > 1]
    if not repeated:
        return []
    files = (
        dict(zip(tables.runs["run_id"].astype(str), tables.runs["source_file"].astype(object)))
        if tables.runs is not None and "source_file" in tables.runs
        else {}
    )
    out = []
    for pos in repeated:
        g = m.iloc[pos]
        values = [float(v) for v in g["value"]]
        if len(set(values)) < 2:
            continue
        r = g.iloc[0]
        rid = str(r["run_id"])
        cond = (
            " ".join(
                x
                for x in (
                    F.text(r["condition"]),
                    F.text(r["context_tokens"]) and f"{F.num(r['context_tokens'])} context tokens",
                )
                if x
            )
            or None
        )
        out.append(
            RepeatedFigure(
                code="sample.repeated_figure",
                severity="warn",
                seats=(str(r["seat"]),),
                **cell_dict(r["workload"], r["concurrency"], r["metric"], r["statistic"]),
                run_id=rid,
                source_file=plain(files.get(rid)),
                condition=cond,
                values=values,
                used=values[0],
            )
        )
    return sorted(out, key=lambda f: (f.seats, f.run_id, cell_order(f.evidence())))


def _said_once(texts) -> list[str]:
    """The '; '-joined clauses of runs, each said once; clauses that differ only in their numbers
    ("pass 1 inferred ...", "pass 2 inferred ...") once, with the number of runs they apply to."""
    shapes: dict[str, list[str]] = {}
    for text in texts:
        for clause in (c.strip() for c in text.split(";")):
            if clause:
                shapes.setdefault(re.sub(r"\d+", "#", clause), []).append(clause)
    said = []
    for clauses in shapes.values():
        distinct = list(dict.fromkeys(clauses))
        said.append(distinct[0] if len(distinct) == 1 else f"{distinct[0]} (and so on for each of {len(clauses)} runs)")
    return said


def import_assumed(runs: pd.DataFrame) -> list[ImportAssumed]:
    """`import.assumed`: runs an importer read from harness output without a manifest, so that seat,
    pass, date or a derived figure were inferred; one finding per seat (`runs.assumptions`)."""
    if runs is None or runs.empty or "assumptions" not in runs.columns:
        return []
    sub = runs[runs["assumptions"].notna() & runs["assumptions"].astype(str).str.strip().ne("")]
    out = []
    for seat, g in sub.groupby("seat"):
        out.append(
            ImportAssumed(
                code="import.assumed",
                severity="info",
                seats=(str(seat),),
                runs=sorted(g["run_id"].astype(str)),
                assumptions=_said_once(g.sort_values("run_id")["assumptions"].astype(str)),
                source_formats=sorted(set(g["source_format"].dropna().astype(str))) if "source_format" in g else [],
                source_files=sorted(set(g["source_file"].dropna().astype(str))) if "source_file" in g else [],
            )
        )
    return out


def _mismatch_cell(r: dict) -> MismatchCell:
    return MismatchCell(
        **cell_dict(r["workload"], r["concurrency"], r["metric"], r["statistic"]),
        harness=None if pd.isna(r["harness"]) else str(r["harness"]),
        date=str(r["date"]),
        pass_=int(r["pass"]),
        reported=float(r["reported"]),
        recomputed=float(r["recomputed"]),
        relative_difference=plain(r["_rel"]),
        n_obs=None if pd.isna(r["n_obs"]) else int(r["n_obs"]),
    )


def _pass_mismatches(passes: pd.DataFrame | None) -> list[tuple[str, MismatchCell]]:
    """(seat, cell) where a pass's reported figure and our recomputation differ beyond rounding."""
    if passes is None or not len(passes):
        return []
    rep = passes["reported"].astype(float).to_numpy()
    rec = passes["recomputed"].astype(float).to_numpy()
    ok = np.isfinite(rep) & np.isfinite(rec)
    if not ok.any():
        return []
    tol = np.array([F.printed_rounding(v) if math.isfinite(v) else math.nan for v in rep])
    hit = ok & (np.abs(rep - rec) > tol + 1e-12 * np.abs(rep))
    rel = (rec - rep)[hit] / np.where(rep[hit] == 0, np.nan, rep[hit])
    return [(str(r["seat"]), _mismatch_cell(r)) for r in passes[hit].assign(_rel=rel).to_dict("records")]


def run_checks(runs: pd.DataFrame | None):
    """(run row, check dict) of the importers' checks that differ (runs.figure_checks: JSON lists)."""
    if runs is None or "figure_checks" not in runs or not len(runs):
        return
    for r in runs[runs["figure_checks"].notna()].to_dict("records"):
        try:
            checks = json.loads(str(r["figure_checks"]))
        except ValueError:
            continue
        for k in checks if isinstance(checks, list) else []:
            rep, rec = k.get("reported"), k.get("recomputed")
            if isinstance(k, dict) and isinstance(rep, (int, float)) and isinstance(rec, (int, float)):
                yield r, k


def _import_mismatches(runs: pd.DataFrame | None) -> list[tuple[str, MismatchCell]]:
    """(seat, cell) of the importers' checks that differ, but for the requests a harness was asked
    to send against the records it kept (metric `sent`: requests.missing tells those)."""
    out = []
    for r, k in run_checks(runs):
        if k.get("metric") == "sent":
            continue
        rep, rec = float(k["reported"]), float(k["recomputed"])
        of = k.get("of") if isinstance(k.get("of"), int) else None
        out.append(
            (
                str(r["seat"]),
                MismatchCell(
                    **cell_dict(k.get("workload"), k.get("concurrency"), k.get("metric"), k.get("statistic")),
                    harness=None if pd.isna(r["harness"]) else str(r["harness"]),
                    date=str(r["date"]),
                    pass_=int(r["pass"]),
                    reported=rep,
                    recomputed=rec,
                    relative_difference=(rec - rep) / rep if rep else None,
                    n_obs=None,
                    against=str(k.get("against", "")),
                    label=str(k.get("label", "")),
                    basis=str(k.get("basis", "")),
                    field=plain(k.get("field")) if isinstance(k.get("field"), str) else None,
                    of=of,
                ),
            )
        )
    return out


#: statistics of checks on counts (benchreport.load.harness._common.COUNT_STATISTICS): exact
_COUNTS = ("count", "share")


def figure_mismatch(
    passes: pd.DataFrame | None, runs: pd.DataFrame | None = None, *, thresholds: Thresholds
) -> list[FigureMismatch]:
    """`import.figure_mismatch`: a figure the harness reported that the data it came from does not
    reproduce beyond rounding (`benchreport.format.printed_rounding`).

    Two sources: the per-pass table (a run's reported figure against our statistic of its request
    records), and the checks an importer made of an aggregate the harness wrote against the files
    read (the runs table's `figure_checks`: e.g. AIPerf's mean over trials against the trials
    found). warn when the difference exceeds the noise band (`noise`), info otherwise (different
    conventions: percentile definitions, token counts, a measurement window); warn whenever a
    count or a share of the harness's summary contradicts its own records (genai-bench's
    `error_rate` 0 where 10 of 19 records failed: a count has no convention to differ by). One
    finding per seat.
    """
    by_seat: dict[str, list[MismatchCell]] = {}
    for seat, c in _pass_mismatches(passes) + _import_mismatches(runs):
        by_seat.setdefault(seat, []).append(c)
    out = []
    for seat, cl in sorted(by_seat.items()):
        cl = sorted(
            cl,
            key=lambda c: (
                c.metric != "trials",
                c.statistic not in _COUNTS,
                c.against is None,
                cell_order(c.evidence()),
            ),
        )
        worst = max((abs(c.relative_difference) for c in cl if c.relative_difference is not None), default=0)
        counts = any(c.statistic in _COUNTS for c in cl)
        out.append(
            FigureMismatch(
                code="import.figure_mismatch",
                severity="warn" if worst > thresholds.noise or counts else "info",
                seats=(seat,),
                **one_cell(cl),
                n_cells=len(cl),
                cells=cl,
                worst_relative_difference=worst,
                thresholds=used(thresholds, "noise"),
            )
        )
    return out
