"""Comparisons: no incumbent beside a seat, different models, runs not measured alike, figures
in another form or on one side only, exam scores from elsewhere (spec/flags.md, "Comparisons").

The compared pairs come from the statistics layer's `comparisons`; without them, the
incumbent (or the chosen `baseline`) against every seat it shares a cell with.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from benchreport import format as F

from .._common import cell_dict, int_or_none, key_sort, na, norm_cells, plain, stat_rank
from ..findings import CellKey, Finding, Record, key, one_cell, unwritten
from .runs import RunIndex, seat_keys

__all__ = [
    "NoIncumbent",
    "CrossModel",
    "LikeCell",
    "NotLikeForLike",
    "FormCell",
    "MissingForm",
    "MissingOneSide",
    "StaleExam",
    "StaleScores",
    "compared_pairs",
    "no_incumbent",
    "cross_model",
    "not_like_for_like",
    "missing_metric",
    "stale_scores",
]


@dataclass(frozen=True, kw_only=True)
class NoIncumbent(Finding):
    """Seats measured on one day without the incumbent (or baseline) beside them."""

    CODES = ("compare.no_incumbent",)
    date: str
    missing: list[str] = key("seats")
    roles: dict[str, str | None]
    harness_probe: dict[str, list[str]]
    reference: list[str]
    reference_kind: str
    reference_days: list[str]


@dataclass(frozen=True, kw_only=True)
class CrossModel(Finding):
    """A compared pair serving different models; `exams` are the exams both took (seat -> score)."""

    CODES = ("compare.cross_model",)
    baseline: str
    candidate: str
    models: dict[str, str]
    exams: list[dict]


@dataclass(frozen=True, kw_only=True)
class LikeCell(CellKey):
    baseline_runs: list[str]
    candidate_runs: list[str]


@dataclass(frozen=True, kw_only=True)
class NotLikeForLike(Finding):
    """A compared pair whose runs differ in how they measured (`differences`) or state a field for one side."""

    CODES = ("compare.not_like_for_like",)
    baseline: str
    candidate: str
    baseline_date: str | None
    candidate_date: str | None
    differences: dict[str, dict[str, list]]
    stated_one_side: dict[str, dict]
    n_cells: int
    cells: list[LikeCell]


@dataclass(frozen=True, kw_only=True)
class FormCell(Record):
    workload: str | None
    concurrency: int | None
    metric: str
    statistics: dict[str, list[str]]


@dataclass(frozen=True, kw_only=True)
class MissingForm(Finding):
    """Figures a pair both report, in disjoint statistics (warn)."""

    CODES = ("compare.missing_metric",)
    pair: list[str] = key("seats")
    kind: str = "form"
    cells: list[FormCell]
    #: the pair as compared (baseline, candidate): the order the words name them in
    compared: tuple[str, str] = unwritten()

    @classmethod
    def matches(cls, evidence: dict) -> bool:
        return evidence.get("kind") == "form"


@dataclass(frozen=True, kw_only=True)
class MissingOneSide(Finding):
    """Figures of a pair reported for one side only (info)."""

    CODES = ("compare.missing_metric",)
    pair: list[str] = key("seats")
    kind: str = "one_side"
    only: dict[str, list[CellKey]]
    compared: tuple[str, str] = unwritten()

    @classmethod
    def matches(cls, evidence: dict) -> bool:
        return evidence.get("kind") == "one_side"


@dataclass(frozen=True, kw_only=True)
class StaleExam(Record):
    benchmark: str
    dimension: str | None
    run_date: str
    score: float | str | None
    reasons: dict


@dataclass(frozen=True, kw_only=True)
class StaleScores(Finding):
    CODES = ("compare.stale_scores",)
    exams: list[StaleExam]


def _reference_seats(seats: pd.DataFrame, baseline) -> tuple[list[str], str]:
    inc = sorted(
        seats.loc[seats["role"].astype("string").eq("incumbent").fillna(False).astype(bool), "seat"].astype(str)
    )
    if inc:
        return inc, "incumbent"
    if baseline is not None and baseline in set(seats["seat"].astype(str)):
        return [str(baseline)], "baseline"
    return [], "none"


def compared_pairs(tables, comparisons: pd.DataFrame | None, baseline=None) -> list[tuple[str, str]]:
    """(baseline, candidate) pairs of different seats that the analysis compares.

    From `comparisons` when given; otherwise the incumbent (or `baseline`) against every
    other seat with which it shares at least one (workload, concurrency, metric).
    """
    if comparisons is not None:
        if comparisons.empty:
            return []
        c = comparisons[comparisons["baseline"].astype(str) != comparisons["candidate"].astype(str)]
        return sorted({(str(a), str(b)) for a, b in zip(c["baseline"], c["candidate"])})
    refs, _ = _reference_seats(tables.seats, baseline)
    if not refs:
        return []
    keys = seat_keys(tables.measurements)
    pairs = set()
    for r in refs:
        for s, k in keys.items():
            if s != r and keys.get(r, set()) & k:
                pairs.add((r, str(s)))
    return sorted(pairs)


def no_incumbent(tables, comparisons: pd.DataFrame | None = None, *, baseline=None) -> list[NoIncumbent]:
    """`compare.no_incumbent`: seats measured without the incumbent beside them.

    Any claim that a seat is best, or beats what serves today, needs the incumbent (role
    "incumbent", else the chosen `baseline`) measured the same day with the same harness and
    probe (the fleet paper's section 4). One finding per day listing the seats measured that
    day with no such incumbent run; when the data have no incumbent at all and several seats
    (or comparisons), every day's seats are listed.
    """
    seats, runs = tables.seats, tables.runs
    if runs is None or runs.empty:
        return []
    refs, ref_kind = _reference_seats(seats, baseline)
    if not refs and runs["seat"].nunique() < 2 and (comparisons is None or comparisons.empty):
        return []
    role = dict(zip(seats["seat"].astype(str), seats["role"].astype("string").fillna("candidate")))
    runs = runs[["seat", "date", "harness", "probe"]].drop_duplicates()  # a year of runs: each way once
    rows = list(
        zip(runs["seat"].astype(str), runs["date"].astype(str), map(na, runs["harness"]), map(na, runs["probe"]))
    )
    ref_keys = {(d, h, p) for s, d, h, p in rows if s in refs}
    by_date: dict[str, dict[str, set]] = {}
    for s, d, h, p in rows:  # plain dicts: a year of days x seats as pandas groups took seconds
        if s not in refs:
            by_date.setdefault(d, {}).setdefault(s, set()).add((d, h, p))
    out = []
    for date in sorted(by_date):
        missing, how = [], {}
        for seat in sorted(by_date[date]):
            keys = by_date[date][seat]
            if not keys & ref_keys:
                missing.append(str(seat))
                how[str(seat)] = sorted({f"{k[1]} / {k[2]}" for k in keys})
        if missing:
            out.append(
                NoIncumbent(
                    code="compare.no_incumbent",
                    severity="warn",
                    seats=tuple(sorted(missing)),
                    date=date,
                    missing=missing,
                    roles={s: role.get(s) for s in missing},
                    harness_probe=how,
                    reference=refs,
                    reference_kind=ref_kind,
                    reference_days=sorted({k[0] for k in ref_keys}),
                )
            )
    return out


def _exam_scores(exams: pd.DataFrame) -> dict:
    """seat -> {(benchmark, dimension): score on 0-100 (published score, else correct/total)}."""
    out: dict = {}
    if exams is None or exams.empty:
        return out
    for r in exams.itertuples(index=False):
        score = (
            r.score
            if not F.missing(r.score)
            else (
                100.0 * r.correct / r.total if not F.missing(r.correct) and not F.missing(r.total) and r.total else None
            )
        )
        if score is None:
            continue
        out.setdefault(str(r.seat), {})[(str(r.benchmark), na(r.dimension))] = float(score)
    return out


def cross_model(tables, comparisons: pd.DataFrame | None = None, *, baseline=None) -> list[CrossModel]:
    """`compare.cross_model`: compared seats serve different models.

    Throughput does not say which seat is more useful when capability differs. One finding
    per compared pair; with exam scores both seats have, info (the report carries the
    capability comparison), otherwise warn.
    """
    model = dict(zip(tables.seats["seat"].astype(str), tables.seats["model"].astype(str)))
    scores = _exam_scores(tables.exams)
    out = []
    done = set()
    for a, b in compared_pairs(tables, comparisons, baseline):
        pair = tuple(sorted((a, b)))
        if pair in done or a not in model or b not in model or model[a] == model[b]:
            continue
        done.add(pair)
        shared = sorted(set(scores.get(a, {})) & set(scores.get(b, {})), key=lambda k: (k[0], key_sort(k[1])))
        out.append(
            CrossModel(
                code="compare.cross_model",
                severity="info" if shared else "warn",
                seats=pair,
                baseline=a,
                candidate=b,
                models={a: model[a], b: model[b]},
                exams=[{"benchmark": k[0], "dimension": k[1], a: scores[a][k], b: scores[b][k]} for k in shared],
            )
        )
    return out


def _compared_rows(tables, comparisons: pd.DataFrame | None, baseline) -> list[tuple]:
    """(baseline, candidate, workload, concurrency, metric, baseline date, candidate date) compared."""
    rows = []
    if comparisons is not None and not comparisons.empty:
        for r in comparisons.itertuples(index=False):
            bd, cd = na(getattr(r, "baseline_date", None)), na(getattr(r, "candidate_date", None))
            if str(r.baseline) == str(r.candidate) and (bd is None or cd is None or bd == cd):
                continue
            rows.append((str(r.baseline), str(r.candidate), r.workload, r.concurrency, r.metric, bd, cd))
        return rows
    keys = seat_keys(tables.measurements)
    for a, b in compared_pairs(tables, None, baseline):
        shared = keys.get(a, set()) & keys.get(b, set())
        for w, c, mt in sorted(shared, key=lambda k: tuple(key_sort(x) for x in k)):
            rows.append((a, b, w, c, mt, None, None))
    return rows


def _profile_difference(pa: dict, pb: dict) -> tuple[dict, dict]:
    """Fields stated on both sides with different values, and fields stated on one side only."""
    diff, one_sided = {}, {}
    for f in sorted(set(pa) | set(pb)):
        va, vb = pa.get(f, set()), pb.get(f, set())
        if va and vb and va != vb:
            diff[f] = {"baseline": sorted(va, key=str), "candidate": sorted(vb, key=str)}
        elif bool(va) != bool(vb):
            one_sided[f] = {"stated_for": "baseline" if va else "candidate", "value": sorted(va or vb, key=str)}
    return diff, one_sided


def not_like_for_like(tables, comparisons: pd.DataFrame | None = None, *, baseline=None) -> list[NotLikeForLike]:
    """`compare.not_like_for_like`: compared runs measured differently.

    For every compared cell, the runs behind each side are found and their harness, probe,
    answer cap, temperature, thinking mode and seat `settings` compared. A field stated on
    both sides with different values makes the finding warn; a field stated on one side
    only is listed and, alone, makes it info. The seat's identity (model, quantisation,
    engine, placement) is what a comparison compares and is not looked at. One finding per
    compared pair (per pair of dates for a seat against its own history).
    """
    if tables.runs is None or tables.runs.empty:
        return []
    pairs: dict[tuple, dict] = {}
    index = RunIndex.of(tables)
    for a, b, w, c, mt, da, db in _compared_rows(tables, comparisons, baseline):
        ids_a, ids_b = index.cell_runs(a, w, c, mt, da), index.cell_runs(b, w, c, mt, db)
        if not ids_a or not ids_b or ids_a == ids_b:
            continue
        diff, one_sided = _profile_difference(index.profile(ids_a), index.profile(ids_b))
        if not diff and not one_sided:
            continue
        history = a == b
        entry = pairs.setdefault(
            (a, b, da if history else None, db if history else None), {"diff": {}, "one_sided": {}, "cells": []}
        )
        for f, v in diff.items():
            entry["diff"].setdefault(f, v)
        for f, v in one_sided.items():
            entry["one_sided"].setdefault(f, v)
        entry["cells"].append(
            LikeCell(**cell_dict(w, c, mt, None), baseline_runs=sorted(ids_a), candidate_runs=sorted(ids_b))
        )
    out = []
    for (a, b, da, db), e in sorted(pairs.items(), key=lambda kv: tuple(map(str, kv[0]))):
        cl = e["cells"]
        cell = one_cell(cl)
        cell.pop("statistic", None)
        out.append(
            NotLikeForLike(
                code="compare.not_like_for_like",
                severity="warn" if e["diff"] else "info",
                seats=tuple(sorted({a, b})),
                **cell,
                baseline=a,
                candidate=b,
                baseline_date=da,
                candidate_date=db,
                differences=e["diff"],
                stated_one_side={f: v for f, v in e["one_sided"].items() if f not in e["diff"]},
                n_cells=len(cl),
                cells=cl,
            )
        )
    return out


def _seat_cell_keys(tables, cells: pd.DataFrame | None) -> dict[str, set]:
    src = norm_cells(cells) if cells is not None and not cells.empty else None
    if src is None:
        src = tables.measurements
    out: dict[str, set] = {}
    for r in src.itertuples(index=False):
        out.setdefault(str(r.seat), set()).add(
            (
                na(r.workload),
                int_or_none(r.concurrency),
                str(r.metric),
                "mean" if F.missing(r.statistic) else str(r.statistic),
            )
        )
    return out


def _by_cell(keys: set) -> dict[tuple, set]:
    out: dict[tuple, set] = {}
    for w, c, m, s in keys:
        out.setdefault((w, c, m), set()).add(s)
    return out


def missing_metric(
    tables, comparisons: pd.DataFrame | None = None, cells: pd.DataFrame | None = None, *, baseline=None
) -> list[Finding]:
    """`compare.missing_metric`: a figure one side of a comparison has and the other lacks.

    For each compared pair sharing at least one workload: a (workload, concurrency, metric)
    both report but in disjoint statistics (p50 on one side, a mean or single figure on the
    other: the fleet paper's cross-node TTFT) is warn; one reported on one side only is info
    (extra statistics beside a shared one, such as a min/max range next to the mean, are not
    counted). One finding of each kind per pair.
    """
    keys = _seat_cell_keys(tables, cells)
    out: list[Finding] = []
    done = set()
    for a, b in compared_pairs(tables, comparisons, baseline):
        pair = tuple(sorted((a, b)))
        if pair in done:
            continue
        done.add(pair)
        ka, kb = keys.get(a, set()), keys.get(b, set())
        if not ({k[0] for k in ka} & {k[0] for k in kb}):
            continue
        sa, sb = _by_cell(ka), _by_cell(kb)
        forms, only = [], {a: [], b: []}
        for k in sorted(set(sa) | set(sb), key=lambda k: tuple(key_sort(x) for x in k)):
            if k in sa and k in sb:
                if not (sa[k] & sb[k]):
                    forms.append(
                        FormCell(
                            workload=k[0],
                            concurrency=k[1],
                            metric=k[2],
                            statistics={a: sorted(sa[k], key=stat_rank), b: sorted(sb[k], key=stat_rank)},
                        )
                    )
            else:
                only[a if k in sa else b].append(CellKey(**cell_dict(k[0], k[1], k[2], None)))
        if forms:
            cell = (
                {"workload": forms[0].workload, "concurrency": forms[0].concurrency, "metric": forms[0].metric}
                if len(forms) == 1
                else {}
            )
            out.append(
                MissingForm(
                    code="compare.missing_metric",
                    severity="warn",
                    seats=pair,
                    **cell,
                    pair=list(pair),
                    cells=forms,
                    compared=(a, b),
                )
            )
        if only[a] or only[b]:
            out.append(
                MissingOneSide(
                    code="compare.missing_metric",
                    severity="info",
                    seats=pair,
                    pair=list(pair),
                    only={s: only[s] for s in (a, b) if only[s]},
                    compared=(a, b),
                )
            )
    return out


def _stale_reasons(r) -> dict:
    reasons = []
    mo = na(getattr(r, "measured_on", None))
    if mo is not None and str(mo)[:10] != str(r.date)[:10]:
        reasons.append(("measured_on", str(mo)[:10]))
    if getattr(r, "from_earlier_run", None) is True or (
        not F.missing(getattr(r, "from_earlier_run", None)) and bool(r.from_earlier_run)
    ):
        reasons.append(("from_earlier_run", True))
    pn = na(getattr(r, "placement_note", None))
    if pn is not None:
        reasons.append(("placement_note", str(pn)))
    return dict(reasons)


def stale_scores(exams: pd.DataFrame) -> list[StaleScores]:
    """`compare.stale_scores`: exam scores shown with runs they were not measured in.

    An exam row whose `measured_on` differs from its run's date, that comes from an earlier
    run (`from_earlier_run`), or that ran elsewhere (`placement_note`). One finding per seat.
    """
    if exams is None or exams.empty:
        return []
    by_seat: dict[str, list] = {}
    for r in exams.itertuples(index=False):
        reasons = _stale_reasons(r)
        if reasons:
            score = (
                r.score
                if not F.missing(r.score)
                else (f"{r.correct} of {r.total}" if not F.missing(r.correct) else None)
            )
            by_seat.setdefault(str(r.seat), []).append(
                StaleExam(
                    benchmark=str(r.benchmark),
                    dimension=na(r.dimension),
                    run_date=str(r.date),
                    score=plain(score),
                    reasons=reasons,
                )
            )
    return [
        StaleScores(
            code="compare.stale_scores",
            severity="warn",
            seats=(seat,),
            exams=sorted(items, key=lambda i: (i.benchmark, key_sort(i.dimension))),
        )
        for seat, items in sorted(by_seat.items())
    ]
