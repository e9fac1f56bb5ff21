"""History: dated regressions and improvements of a seat's cells against their steady level
(history.regression, history.improvement).

The verdicts are the statistics layer's (`benchreport.stats.history`: a two-sided CUSUM over
the nights since a change against the reference level of up to `history_window` nights, and
one far night told on its own night); this rule only gathers them, one finding per seat and
code, newest first, with what kind of change each is (a step, a drift, one night) and whether
the next date is judged against a new level (a level shift), the old one (one date off its
level: for one far night, one bad night), or is still to come (the newest date).
"""

from __future__ import annotations

from dataclasses import dataclass

from benchreport.stats.history_summary import STATUSES, change_status
from benchreport.thresholds import Thresholds

from .._common import cell_dict, cell_order, na, plain, used
from ..findings import CellKey, Finding, one_cell

__all__ = ["HistoryChange", "HistoryChanges", "STATUSES", "history_changes", "change_status"]

#: what the next date said of a change: it moved the level, it did not, or there is no next date yet
_CODE = {"regression": "history.regression", "improvement": "history.improvement"}
_SEVERITY = {"history.regression": "warn", "history.improvement": "info"}


@dataclass(frozen=True, kw_only=True)
class HistoryChange(CellKey):
    """One cell's change on one date: its value against the level, the interval, and what followed."""

    harness: str | None
    probe: str | None
    date: str
    estimate: float
    level: float
    level_nights: int
    level_since: str | None
    change: float
    ci_low: float
    ci_high: float
    p_value: float
    p_adj: float
    status: str
    #: what kind of change: "step" or "drift" (a CUSUM over the nights since `change_since`), "night" (one
    #: far night, told on its own night), "" (a table of older code)
    change_kind: str = ""
    change_since: str | None = None


@dataclass(frozen=True, kw_only=True)
class HistoryChanges(Finding):
    """The dated regressions (or improvements) of one seat, newest first."""

    CODES = ("history.regression", "history.improvement")
    n_changes: int
    dates: list[str]
    changes: list[HistoryChange]
    thresholds: dict[str, float]


def _change(r: dict) -> HistoryChange:
    return HistoryChange(
        **cell_dict(r["workload"], r["concurrency"], r["metric"], r["statistic"]),
        harness=na(r["harness"]),
        probe=na(r["probe"]),
        date=str(r["date"]),
        estimate=plain(r["estimate"]),
        level=plain(r["level"]),
        level_nights=int(r["level_nights"]),
        level_since=na(r["level_since"]),
        change=plain(r["change"]),
        ci_low=plain(r["ci_low"]),
        ci_high=plain(r["ci_high"]),
        p_value=plain(r["p_value"]),
        p_adj=plain(r["p_adj"]),
        status=str(r["_status"]),
        change_kind=str(na(r.get("change_kind")) or ""),
        change_since=na(r.get("change_since")),
    )


def history_changes(history, *, thresholds: Thresholds) -> list[HistoryChanges]:
    """`history.regression` (warn) and `history.improvement` (info): one finding per seat and code,
    listing every dated change of its cells, newest date first (`benchreport.stats.history.history`
    decides them with `history_alpha`, `history_window`, `history_min_level` and `noise`).
    `history`: the history table, or its summary (benchreport.stats.history_summary.HistorySummary:
    the decided rows with what the next date said)."""
    if history is None or not len(history):
        return []
    if hasattr(history, "decided"):  # a summary: the decided rows are gathered already
        rows = history.decided.rename(columns={"status": "_status"}).to_dict("records")
    else:
        decided = history["verdict"].astype(str).isin(list(_CODE)).to_numpy()
        rows = history[decided].assign(_status=change_status(history)[decided]).to_dict("records")
    if not rows:
        return []
    groups: dict[tuple, list[HistoryChange]] = {}
    for r in rows:
        groups.setdefault((str(r["seat"]), _CODE[str(r["verdict"])]), []).append(_change(r))
    th = used(thresholds, "history_alpha", "history_window", "history_min_level", "noise", "alpha")
    out = []
    for (seat, code), changes in sorted(groups.items()):
        changes = sorted(sorted(changes, key=lambda c: cell_order(c.evidence())), key=lambda c: c.date, reverse=True)
        cells = {(c.harness, c.probe, c.workload, c.concurrency, c.metric, c.statistic): c for c in changes}
        out.append(
            HistoryChanges(
                code=code,
                severity=_SEVERITY[code],
                seats=(seat,),
                **one_cell(list(cells.values())),
                n_changes=len(changes),
                dates=sorted({c.date for c in changes}, reverse=True),
                changes=changes,
                thresholds=th,
            )
        )
    return out
