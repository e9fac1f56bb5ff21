"""Table 1 as a reader's summary: one row per seat and measured condition, the headline figures
side by side, each with its interval (issue 27: "Table 1 is a one-page summary").

Every statistic, every metric and the per-pass values stay in Table A1 (the appendix: collapsed
in the HTML, one line in the PDF) and tables/cells.csv; this table keeps what a reader of a
systems paper compares: throughput, time to first token, inter-token and end-to-end latency.
"""

from __future__ import annotations

import pandas as pd

from benchreport import format as fmt

from .blocks import Table
from .cellview import RECOMPUTED_MARK, cell_display, recomputed_mark
from .tables import WIDE_METRIC_LABELS, abbreviations, constant_columns, drop_empty

__all__ = [
    "HEADLINE",
    "SUMMARY_LINES",
    "SUMMARY_LINES_PORTRAIT",
    "landscape",
    "WORKLOAD_LINE",
    "fit_summary",
    "row_lines",
    "summary_frame",
    "summary_note",
    "summary_table",
]

#: the headline figures, in column order: metric -> the statistics that stand for it, preferred first
#: (throughput is a run's rate, so its mean over passes; a latency's headline is its median)
HEADLINE = {
    "output_tok_s": ("mean", "p50", "not_stated"),
    "decode_tok_s_per_stream": ("mean", "p50", "not_stated"),
    "prefill_tok_s": ("mean", "p50", "not_stated"),
    "ttft_ms": ("p50", "mean", "not_stated"),
    "itl_ms": ("p50", "mean", "not_stated"),
    "e2e_latency_ms": ("p50", "mean", "not_stated"),
}

#: the columns that say which row it is; every other column holds figures
ROW_COLUMNS = ("seat", "Workload", "Conc.", "Date", "Passes")

#: lines of dense type a landscape page holds for Table 1's rows (a seat's heading counts one),
#: leaving room for its caption, heading and note: past it, the top seats (measured on the
#: harness fixtures and captures: 23 rows, 16 of them wrapped, and a five-line note fill one)
SUMMARY_LINES = 34

#: the same on a portrait page (a summary of four headline metrics or fewer), where a table may
#: also run on to the next page
SUMMARY_LINES_PORTRAIT = 50

#: characters of a workload that fit on one line of Table 1 (landscape, dense type); a longer
#: one wraps
WORKLOAD_LINE = 48

#: how an interval reads in a summary cell: over passes in brackets, within one run in braces
_WITHIN = "within one run "


def _figure(estimate: str, ci: str) -> str:
    """'95.4 [93.1, 97.8]' (over passes), '95.4 {93.0, 98.1}' (within one run), '95.4' (no interval:
    the Passes column says why)."""
    estimate = recomputed_mark(estimate)
    if ci.startswith("["):
        return f"{estimate} {ci}"
    if ci.startswith(_WITHIN):
        return f"{estimate} {{{ci[len(_WITHIN) + 1 : -1]}}}"
    return estimate


#: a summary column's name (the note spells out the abbreviations)
_SHORT = {
    "output_tok_s": "Throughput",
    "decode_tok_s_per_stream": "Decode per stream",
    "prefill_tok_s": "Prefill",
    "ttft_ms": "TTFT",
    "itl_ms": "ITL",
    "e2e_latency_ms": "E2E latency",
}


def _heading(metric: str, statistic: str, unit: str) -> str:
    name = _SHORT.get(metric) or WIDE_METRIC_LABELS.get(metric, metric)
    stat = fmt.stat_words(statistic, short=True)
    return f"{name} {stat} ({unit})" if unit else f"{name} {stat}"


def summary_frame(a, cells: pd.DataFrame) -> pd.DataFrame:
    """One row per seat, workload (with its condition) and concurrency (and date, where the data
    have several); a column per headline metric at its headline statistic. A cell whose seat states
    another statistic than the column's says which after its figure."""
    shown = cells[cells["metric"].astype(str).isin(HEADLINE)]
    if shown.empty:
        return pd.DataFrame()
    d = cell_display(a, shown)
    several_dates = d["_date"].nunique() > 1
    d["_row"] = list(zip(d["seat"], d["Workload"], d["Conc."], d["_date"] if several_dates else [""] * len(d)))
    columns, rows = {}, set()
    for metric, preferred in HEADLINE.items():
        m = d[(d["_metric"] == metric) & d["_stat"].isin(preferred)]
        if m.empty:
            continue
        rank = {st: i for i, st in enumerate(preferred)}
        m = m.assign(_r=m["_stat"].map(rank)).sort_values("_r", kind="stable").drop_duplicates("_row")
        head_stat = min(m["_stat"], key=rank.get)
        heading = _heading(metric, head_stat, m["Unit"].iloc[0])
        columns[heading] = {
            row: _figure(e, c) + ("" if st == head_stat else f" ({fmt.stat_words(st, short=True)})")
            for row, e, c, st in zip(m["_row"], m["Estimate"], m["CI"], m["_stat"])
        }
        rows |= set(m["_row"])
    order = [r for r in dict.fromkeys(d["_row"]) if r in rows]
    passes = d.groupby("_row", sort=False)["Passes"].agg(lambda p: "–".join(sorted(set(p), key=_as_int)))
    out = pd.DataFrame(
        {
            "seat": [r[0] for r in order],
            "Workload": [r[1] for r in order],
            "Conc.": [r[2] for r in order],
            "Date": [r[3] for r in order],
            "Passes": [passes[r] for r in order],
        }
    )
    for heading, values in columns.items():
        out[heading] = [values.get(r, "") for r in order]
    return drop_empty(out, ["Date"])


def _as_int(text: str) -> int:
    return int(text) if str(text).isdigit() else 0


def summary_note(df: pd.DataFrame, pct: str) -> tuple[pd.DataFrame, str]:
    """The summary's note: what the brackets mean, the short names, where everything else is."""
    if "Date" in df.columns and (df.groupby("seat")["Date"].nunique() == 1).all():
        dates = df.groupby("seat")["Date"].first()
        df = df.assign(seat=[f"{seat}, {dates[seat]}" for seat in df["seat"]]).drop(columns="Date")
    df, same = constant_columns(df, ["Workload", "Passes"])
    marked = any(df[c].astype(str).str.contains(RECOMPUTED_MARK, regex=False).any() for c in _figures(df))
    bits = [
        same,
        f"Each figure with its {pct} confidence interval over passes in brackets, or, for a single pass, "
        "an interval over its requests in braces {…} that describes that one run only; a figure without "
        "either has too few passes for one (two passes show both values). 'Mean' is each pass's mean "
        "over its requests; over several passes the figure is the geometric mean of those pass means, "
        "its interval Student's t on their logarithms (over dates where a cell was measured on three or "
        "more: Table A1 names each interval's method).",
        f"{RECOMPUTED_MARK} the harness's figure, where our recomputation from its records differs (Table A1 has both)."
        if marked
        else "",
        abbreviations(df.columns),
        "Throughput: aggregate output tokens per second of all streams together. Conc.: concurrent streams.",
        "Every statistic (p90–p99, min, max), the other metrics and each pass's value: Table A1 in the "
        "appendix and tables/cells.csv.",
    ]
    return df, " ".join(b for b in bits if b)


def _figures(df: pd.DataFrame) -> tuple:
    """The summary's figure columns (one per headline metric)."""
    return tuple(c for c in df.columns if c not in ROW_COLUMNS)


def row_lines(df: pd.DataFrame) -> pd.Series:
    """Lines each row of a summary takes when printed: a long workload wraps (`WORKLOAD_LINE`)."""
    return df["Workload"].astype(str).str.len().sub(1).floordiv(WORKLOAD_LINE).add(1).clip(lower=1)


def fit_summary(
    df: pd.DataFrame, ranked: list[str], max_lines: int = SUMMARY_LINES, min_seats: int = 2
) -> tuple[pd.DataFrame, list[str], dict[str, tuple[int, int]]]:
    """The rows of `df` that fit in `max_lines` printed lines: whole seats in the order of `ranked`
    (seat labels, best first) while they fit. While fewer than `min_seats` are shown, a seat too
    long for the lines left shows the rows measured with the most passes that fit, leaving room
    for the next seat (at least half of the lines left).

    Returns (rows in their order in `df`, seats shown, {seat: (rows shown, rows it has)} for each
    seat shown in part).
    """
    lines = row_lines(df)
    need = {seat: 1 + int(lines[df["seat"] == seat].sum()) for seat in ranked}
    left, shown, part, rows = max_lines, [], {}, []
    for k, seat in enumerate(ranked):
        mine = df.index[df["seat"] == seat]
        if need[seat] <= left:
            shown.append(seat)
            rows += list(mine)
            left -= need[seat]
            continue
        if len(shown) >= min_seats or left < 3:
            break
        room = left
        if len(shown) + 1 < min_seats and k + 1 < len(ranked):
            room = max(left // 2, left - need[ranked[k + 1]])
        passes = df.loc[mine, "Passes"].astype(str).str.split("–").str[-1].map(_as_int)
        order = passes.sort_values(ascending=False, kind="stable").index
        keep = list(order[(lines[order].cumsum() <= room - 1).to_numpy()])
        part[seat] = (len(keep), len(mine))
        shown.append(seat)
        rows += keep
        left -= 1 + int(lines[keep].sum())
    return df.loc[[i for i in df.index if i in set(rows)]], shown, part


def landscape(df: pd.DataFrame) -> bool:
    """Whether the summary goes on a landscape page: five headline metrics or more."""
    return len(_figures(df)) > 4


def summary_table(df: pd.DataFrame, caption: str, note: str) -> Table:
    figures = _figures(df)
    return Table(
        df,
        caption,
        kind="table",
        group="seat",
        numeric=("Conc.", "Passes", *figures),
        note=note,
        small=True,
        dense=True,
        key="results",
        nowrap=("Conc.", "Date"),
        landscape=landscape(df),
    )
