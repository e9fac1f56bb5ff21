"""Harnesses that disagree: one seat's cell measured by two harnesses differs beyond what their
definitions explain (harness.disagree), or differs and cannot be tested, a figure having no
interval (harness.untested); issue 46. Reads the agreement table (benchreport.stats.agreement),
never recomputes it."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .._common import int_or_none
from ..findings import Finding, Record

__all__ = ["DisagreePair", "HarnessDisagree", "HarnessUntested", "UntestedPair", "harness_disagree", "harness_untested"]


@dataclass(frozen=True, kw_only=True)
class DisagreePair(Record):
    """One pair of harnesses whose figures for one cell differ, unexplained."""

    metric: str
    concurrency: int | None
    harness_a: str
    harness_b: str
    estimate_a: float
    estimate_b: float
    ratio: float
    ratio_low: float
    ratio_high: float
    differs_in: str
    common: str
    common_ratio: float | None
    common_ratio_low: float | None
    common_ratio_high: float | None
    explanation: str


@dataclass(frozen=True, kw_only=True)
class HarnessDisagree(Finding):
    """Two harnesses measured one seat's cell under one load and their figures differ beyond their
    intervals, and neither a definitional difference nor the common recomputation explains it (warn)."""

    CODES = ("harness.disagree",)
    pairs: list[DisagreePair]


@dataclass(frozen=True, kw_only=True)
class UntestedPair(Record):
    """One pair of harnesses whose figures for one cell are apart but have no interval to test them."""

    metric: str
    concurrency: int | None
    harness_a: str
    harness_b: str
    estimate_a: float
    estimate_b: float
    ratio: float
    differs_in: str
    explanation: str


@dataclass(frozen=True, kw_only=True)
class HarnessUntested(Finding):
    """Two harnesses measured one seat's cell under one load, their figures are further apart than the
    tolerance, and a figure has no interval (one pass of a figure no request record holds), so whether
    they differ is not tested (info)."""

    CODES = ("harness.untested",)
    pairs: list[UntestedPair]


def _cells(agreement: pd.DataFrame | None, explained: str):
    """(seat, workload, concurrency, metric, statistic), pairs of one `explained` verdict, by cell."""
    if agreement is None or not len(agreement):
        return []
    bad = agreement[agreement["explained"] == explained]
    return bad.groupby(["seat", "workload", "concurrency", "metric", "statistic"], dropna=False, sort=True)


def _findings(agreement, explained: str, finding, code: str, severity: str, pair_of) -> list:
    """One `finding` per seat's cell with pairs of the verdict `explained`, each pair by `pair_of(row)`."""
    out = []
    for (seat, workload, conc, metric, statistic), g in _cells(agreement, explained):
        out.append(
            finding(
                code=code,
                severity=severity,
                seats=(str(seat),),
                workload=None if pd.isna(workload) else str(workload),
                concurrency=int_or_none(conc),
                metric=str(metric),
                statistic=str(statistic),
                pairs=[pair_of(r) for r in g.itertuples(index=False)],
            )
        )
    return out


def _pair_fields(r) -> dict:
    """What every pair record holds, from a row of the agreement table."""
    return {
        "metric": str(r.metric),
        "concurrency": int_or_none(r.concurrency),
        "harness_a": str(r.harness_a),
        "harness_b": str(r.harness_b),
        "estimate_a": float(r.estimate_a),
        "estimate_b": float(r.estimate_b),
        "ratio": float(r.ratio),
        "differs_in": str(r.differs_in) if pd.notna(r.differs_in) else "",
        "explanation": str(r.explanation),
    }


def harness_untested(agreement: pd.DataFrame | None) -> list[HarnessUntested]:
    """`harness.untested` (info): one finding per seat's cell with a "not tested, figures differ" pair."""
    return _findings(
        agreement,
        "not tested, figures differ",
        HarnessUntested,
        "harness.untested",
        "info",
        lambda r: UntestedPair(**_pair_fields(r)),
    )


def _num(v) -> float | None:
    return None if v is None or pd.isna(v) else float(v)


def harness_disagree(agreement: pd.DataFrame | None) -> list[HarnessDisagree]:
    """`harness.disagree` (warn): one finding per seat's cell with an unexplained pair."""
    return _findings(
        agreement,
        "unexplained",
        HarnessDisagree,
        "harness.disagree",
        "warn",
        lambda r: DisagreePair(
            **_pair_fields(r),
            ratio_low=float(r.ratio_low),
            ratio_high=float(r.ratio_high),
            common=str(r.common) if pd.notna(r.common) else "",
            common_ratio=_num(r.common_ratio),
            common_ratio_low=_num(r.common_ratio_low),
            common_ratio_high=_num(r.common_ratio_high),
        ),
    )
