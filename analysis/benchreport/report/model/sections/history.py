"""Section 8, History across dates: each seat's cells judged date by date against their steady level.

Written from `Analysis.history` (benchreport.stats.history: a two-sided CUSUM over the nights
since a change against a frozen reference level, and one far night told on its own night) and
nothing re-estimated:
a paragraph on the method and the counts, the newest date's verdicts, the small-multiple
figure (analysis.report.figures.history) and the table of dated regressions and improvements.
"""

from __future__ import annotations

import pandas as pd

from benchreport import format as fmt
from benchreport.report.model.figures.history import DECIDED, history_panels, panel_keys
from benchreport.report.model.figures.theme import drawn
from benchreport.stats.history_summary import HistorySummary, summarise_history

from .blocks import FigureBlock, Prose, Table, figure_block, idents, para, prose
from .labels import date_range

__all__ = [
    "history_text",
    "history_panels_figure",
    "history_table",
    "MAX_HISTORY_ROWS",
    "MAX_HISTORY_PANELS",
    "STATUS_LABELS",
]

#: dated changes the table shows before the rest is left to tables/history.csv
MAX_HISTORY_ROWS = 40
#: panels the figure shows (every seat's first panel before any seat's second)
MAX_HISTORY_PANELS = 8
#: panels it shows while no date of any panel has a verdict (every date too early to judge): lines
#: without a decision show only the shape, and four panels show it (issue 42: pages)
MAX_UNDECIDED_PANELS = 4
#: what the next date said of a change, as the table writes it
STATUS_LABELS = {"level_shift": "confirmed: new level", "one_date": "one date off its level", "latest": "newest date"}


def _summary(a) -> HistorySummary | None:
    """What the section reads of the analysis' history (benchreport.days.history), or None
    without one."""
    s = getattr(a, "history_summary", None)
    if s is None:
        h = getattr(a, "history", None)
        s = summarise_history(h) if h is not None and len(h) else None
    return s if s is not None and s.n_rows else None


def _decided(s: HistorySummary) -> pd.DataFrame:
    return s.decided.rename(columns={"status": "_status"})


def _panel_rows(s: HistorySummary, keys: list) -> pd.DataFrame:
    """Every row of the figure's panels: each date's value, the decided ones' verdicts and statuses."""
    return s.rows_of(keys)


def _too_early(h: HistorySummary, th) -> list:
    """The section while no date of any cell could be judged yet: what will judge them, and when
    (the method's whole account waits for its first verdict; the appendix's parameters table has it)."""
    return [
        para(
            "{} of {} measured on more than one date ({}, {}) will be judged date by date against their "
            "steady level (a two-sided CUSUM, Page 1954; a single far night, Lucas 1982) once a cell has {} "
            "dates; none has yet, so none of its {} dated figures is a regression or an improvement. "
            "tables/history.csv has every date of every cell.",
            fmt.counted(h.n_cells, "cell"),
            fmt.counted(len(h.seats), "seat"),
            date_range(h.dates),
            fmt.counted(len(h.dates), "date"),
            fmt.count(th.history_min_level),
            fmt.count(h.n_rows),
        )
    ]


def history_text(a) -> Prose | None:
    """The method in two sentences, the counts of verdicts, and what the newest date says; None
    when no cell was measured on two dates (the section is then not printed: issue 42)."""
    h = _summary(a)
    if h is None:
        return None
    th = a.options.thresholds
    dates, seats, cells = h.dates, h.seats, h.n_cells
    v = h.verdicts
    if int(v.get("insufficient_data", 0)) == h.n_rows:
        return prose(_too_early(h, th))
    out = [
        para(
            "{} of {} measured on more than one date ({}, {}) are judged date by date against their steady "
            "level: the level of up to {} nights since the last change, which later nights never move. A "
            "two-sided CUSUM of each night's standardised distance from it (Page 1954; in units of the nights' "
            "long-run SD, so nights that follow each other do not add up to a change, Kim et al. 2007; each "
            "night's part clipped, so one heavy-tailed night cannot signal) finds a sustained step or a slow drift over all "
            "the nights since it began, at about p < {} a night of a false signal after a Bonferroni "
            "correction over the seat's cells; a single night far off the level is told on its own night "
            "(Lucas 1982). A change counts as a regression or an improvement when it lies beyond the ±{} "
            "noise band, and is called a step, a drift or one bad night (a far night the next date did not "
            "repeat, left out of the level); the level then restarts where the change began. A sustained change "
            "inside the band is told on the night it is found, with its size, as within noise (tables/history.csv "
            "says so), and the level restarts there too. Every other night with a level is within noise.",
            fmt.counted(cells, "cell"),
            fmt.counted(len(seats), "seat"),
            date_range(dates),
            fmt.counted(len(dates), "date"),
            fmt.count(th.history_window),
            f"{th.history_alpha:g}",
            fmt.pct(th.noise),
        )
    ]
    d = _decided(h)
    shifts = int((d["_status"] == "level_shift").sum())
    if not len(d):
        out.append(
            para(
                "Of {} dated verdicts none is a regression or an improvement: {} within noise, and {} with "
                "too little to decide (no level yet in a cell's first {} dates). tables/history.csv has every "
                "date of every cell.",
                fmt.count(h.n_rows),
                fmt.count(int(v.get("within_noise", 0))),
                fmt.count(int(v.get("insufficient_data", 0))),
                fmt.count(th.history_min_level),
            )
        )
    else:
        out.append(
            para(
                "Of {} dated verdicts: {} and {} on {} ({} followed by a new level), {} within noise, and {} "
                "with too little to decide (no level yet in a cell's first {} dates). tables/history.csv has "
                "every date of every cell.",
                fmt.count(h.n_rows),
                fmt.counted(int(v.get("regression", 0)), "regression"),
                fmt.counted(int(v.get("improvement", 0)), "improvement"),
                fmt.counted(d["date"].nunique(), "date"),
                fmt.count(shifts),
                fmt.count(int(v.get("within_noise", 0))),
                fmt.count(int(v.get("insufficient_data", 0))),
                fmt.count(th.history_min_level),
            )
        )
    newest = dates[-1]
    last = d[d["date"].astype(str) == newest]
    if len(last):
        for verdict in DECIDED:
            who = sorted(set(last.loc[last["verdict"] == verdict, "seat"].astype(str)))
            if who:
                out.append(
                    para(
                        "On the newest date, {}, "
                        + ("a regression" if verdict == "regression" else "an improvement")
                        + " in {} of {}: {} (not yet "
                        "confirmed by a later date).",
                        newest,
                        fmt.counted(int((last["verdict"] == verdict).sum()), "cell"),
                        fmt.counted(len(who), "seat"),
                        idents(who),
                    )
                )
    else:
        out.append(para("On the newest date, {}, no seat's cell moved beyond its noise band.", newest))
    return prose(out)


def _kind_label(kind, since) -> str:
    """'step since 2026-03-02', 'drift since ...', 'one night' ('' for a table of older code)."""
    kind = "" if kind is None or kind != kind else str(kind)
    if kind == "night":
        return "one night"
    if kind in ("step", "drift"):
        return f"{kind} since {since}" if isinstance(since, str) and since else kind
    return kind


def history_panels_figure(a, *, max_panels: int = MAX_HISTORY_PANELS) -> FigureBlock | None:
    """One panel per seat and metric, every date, verdicts marked by shape."""
    h = _summary(a)
    if h is None:
        return None
    undecided = "n_decided" in h.panels and not (h.panels["n_decided"] > 0).any()
    if undecided:
        max_panels = min(max_panels, MAX_UNDECIDED_PANELS)
    keys, n = panel_keys(h.panels, max_panels=max_panels)
    fig = (
        history_panels(_panel_rows(h, keys), keys=keys, dates=(h.dates[0], h.dates[-1]), concurrencies=h.concurrencies)
        if keys
        else None
    )
    more = (
        f" {fmt.count(len(keys))} of {fmt.count(n)} seat and metric panels are shown ("
        + ("no date has a verdict yet" if undecided else "every seat's with the most verdicts first")
        + "); tables/history.csv has them all."
        if n > len(keys)
        else ""
    )
    styles = (
        " (cells of one concurrency, from other workloads, harnesses or loads, differ in line style)"
        if "line_styles" in drawn(fig)
        else ""
    )
    return figure_block(
        fig,
        "History of each seat across dates: every cell relative to its median over the dates, a colour per "
        f"concurrency{styles}. Downward triangles are regressions, upward triangles "
        "improvements, and a hollow diamond on a dotted line is a change the next date confirmed "
        "as a new level; a latency that rises is a regression." + more,
        "history",
    )


def history_table(a, *, max_rows: int = MAX_HISTORY_ROWS) -> Table | None:
    """The dated regressions and improvements, newest first."""
    h = _summary(a)
    if h is None:
        return None
    d = _decided(h)
    if not len(d):
        return None
    d = d.assign(_c=pd.to_numeric(d["concurrency"], errors="coerce").fillna(-1))
    d = d.sort_values(
        ["date", "seat", "metric", "statistic", "workload", "_c"],
        ascending=[False, True, True, True, True, True],
        kind="stable",
    )
    shown = d.head(max_rows)
    pct = fmt.level(a.options.thresholds.alpha)
    rows = pd.DataFrame(
        {
            "Date": shown["date"].astype(str),
            "Seat": shown["seat"].astype(str),
            "Cell": [
                fmt.cell_phrase(w, c, m, s)
                for w, c, m, s in zip(shown["workload"], shown["concurrency"], shown["metric"], shown["statistic"])
            ],
            "Value": [fmt.value_with_unit(v, m) for v, m in zip(shown["estimate"], shown["metric"])],
            "Change": [fmt.pct(float(c) - 1, signed=True) for c in shown["change"]],
            f"{pct} CI": [
                f"{fmt.pct(lo - 1, signed=True)} to {fmt.pct(hi - 1, signed=True)}"
                for lo, hi in zip(shown["ci_low"].astype(float), shown["ci_high"].astype(float))
            ],
            "p (adj.)": [fmt.pval(p) for p in shown["p_adj"]],
            "Verdict": shown["verdict"].astype(str).str.replace("_", " "),
            "Kind": [
                _kind_label(k, since)
                for k, since in zip(
                    shown.get("change_kind", pd.Series([""] * len(shown))),
                    shown.get("change_since", pd.Series([None] * len(shown))),
                )
            ],
            "Next date": [STATUS_LABELS.get(s, s) for s in shown["_status"]],
        }
    )
    note = (
        f"The newest {fmt.count(max_rows)} of {fmt.count(len(d))} dated changes; tables/history.csv has every date."
        if len(d) > max_rows
        else None
    )
    return Table(
        rows.reset_index(drop=True),
        "Dated regressions and improvements, newest first: each date's value "
        "(geometric mean of its passes) against the level of the earlier dates, the change with its "
        "interval (a step: the mean of the nights since it began; a drift: the line through them at its "
        "last night; one night: that night), the p-value after the Bonferroni correction, what kind of "
        "change it is, and whether the next date is judged against a new level.",
        note=note,
        numeric=("Value", "Change", f"{pct} CI", "p (adj.)"),
        mono=("Seat",),
        key="history-table",
        small=True,
        nowrap=("Date", "Seat", "Change", "p (adj.)"),
    )
