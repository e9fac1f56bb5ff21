"""The report's figures and tables by name, for one of them without a full build.

`benchreport figure NAME` and `benchreport table NAME` (benchreport.cli) and the exploration
notebook look them up here. Names are the keys the report gives them (``throughput``,
``results``); the functions are the report's own section functions, so a figure or table
got this way is the one the report shows, drawn from the same analysis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pandas as pd

from benchreport.report.model import sections
from benchreport.report.render.text import (
    headline,
    latex_escape,
    latex_table,
    markdown_table,
    select_columns,
    select_rows,
)

__all__ = [
    "Entry",
    "FIGURES",
    "TABLES",
    "figure",
    "table",
    "figure_numbers",
    "markdown_table",
    "latex_table",
    "latex_escape",
    "table_text",
    "TABLE_FORMATS",
    "FIGURE_SUFFIXES",
    "restrict_runs",
    "narrow",
]


@dataclass(frozen=True)
class Entry:
    """One figure or table of the report: its name, what it shows and the section function."""

    name: str
    what: str
    make: Callable


def _faults_table(a):
    return sections.faults(a)[1]


#: the report's figures in the order the report shows them (so Figure N is the Nth drawn)
FIGURES = {
    e.name: e
    for e in (
        Entry("throughput", "aggregate throughput against concurrency, per seat", sections.throughput_figure),
        Entry("per-stream", "per-stream decode rate against concurrency", sections.per_stream_figure),
        Entry("ttft", "time to first token against concurrency", sections.ttft_figure),
        Entry("single-stream", "single-stream decode rate of every seat and workload", sections.single_stream_figure),
        Entry("per-pass", "values of each pass in the order measured", sections.per_pass_figure),
        Entry("ratios", "candidate/baseline ratios with their confidence intervals", sections.ratio_figure),
        Entry("exams", "exam deltas with their confidence intervals", sections.exam_figure),
        Entry(
            "history",
            "each seat's cells across dates, regressions and level shifts marked (History across dates)",
            sections.history_panels_figure,
        ),
        # the appendix's views of load and latency (sections.views), drawn where the runs hold them
        Entry(
            "throughput-latency",
            "aggregate throughput against ITL and TTFT p95 across concurrency, Pareto front ringed (appendix)",
            sections.throughput_latency_figure,
        ),
        Entry(
            "latency-ecdf", "per-request TTFT and ITL distributions per cell (appendix)", sections.latency_ecdf_figure
        ),
        Entry("lengths-sent", "prompt and output tokens of each request sent (appendix)", sections.lengths_sent_figure),
        Entry(
            "pass-timeline",
            "each request's TTFT against its send time within a pass (appendix)",
            sections.pass_timeline_figure,
        ),
        Entry("failures-by-load", "share of requests failed against concurrency (appendix)", sections.failures_figure),
        Entry(
            "rate-sweep", "runs at a fixed request rate on a request-rate axis (appendix)", sections.rate_sweep_figure
        ),
    )
}

#: the report's tables in the order the report shows them
TABLES = {
    e.name: e
    for e in (
        Entry("seats", "seats and their setup", sections.seats_table),
        Entry("runs", "runs per seat: dates, harnesses, passes", sections.runs_table),
        Entry("results", "Table 1: measured results per seat and cell", sections.results_table),
        Entry("comparisons", "comparisons against the incumbent (or --baseline)", sections.comparison_table),
        Entry("exam-scores", "exam scores per seat", sections.exam_scores_table),
        Entry("exam-deltas", "exam deltas with exact tests", sections.exam_deltas_table),
        Entry("faults", "faults, crashes and defects recorded in the runs", _faults_table),
        Entry(
            "history", "dated regressions and improvements, newest first (History across dates)", sections.history_table
        ),
        Entry(
            "agreement",
            "one cell measured by several harnesses, side by side (Do the harnesses agree?)",
            sections.agreement_table,
        ),
        Entry("all-cells", "appendix: every cell", sections.all_cells_table),
        Entry("all-comparisons", "appendix: every comparison", sections.all_comparisons_table),
        Entry("flags", "appendix: every flag, its message whole", sections.flags_table),
        Entry("files", "appendix: the files read, by folder", sections.files_table),
        Entry("refused", "appendix: refused files and why", sections.refused_table),
        Entry("skipped", "appendix: skipped files, counted by reason", sections.skipped_table),
        Entry(
            "provenance",
            "every file read, refused or skipped, with its SHA-256 (provenance.csv)",
            sections.provenance_table,
        ),
        Entry("thresholds", "appendix: the thresholds used", sections.thresholds_table),
    )
}

TABLE_FORMATS = ("csv", "md", "tex")
FIGURE_SUFFIXES = (".png", ".svg", ".pdf")


def _entry(catalog: dict, name: str, kind: str) -> Entry:
    if name not in catalog:
        raise KeyError(f"no {kind} named {name!r}; the report's {kind}s are: {', '.join(catalog)}")
    return catalog[name]


#: the figures that draw one metric (against concurrency, or at one stream): `metric` and
#: `statistic` choose what they draw
METRIC_FIGURES = ("throughput", "per-stream", "ttft", "single-stream")
#: the figures whose cells (or comparisons) `metric` and `statistic` narrow
FILTERED_FIGURES = ("per-pass", "ratios")


def figure(a, name: str, *, metric: str | None = None, statistic: str | None = None):
    """The report's figure `name` (a `sections.FigureBlock`), or None when the data hold nothing to draw.

    `metric`, `statistic`: what a figure of `METRIC_FIGURES` draws in place of its own (a
    throughput figure of ``ttft_ms``), or which cells a figure of `FILTERED_FIGURES` keeps.
    Raises KeyError naming the figures there are when `name` is not one of them, ValueError
    when `metric` or `statistic` is given for a figure they do not apply to.
    """
    make = _entry(FIGURES, name, "figure").make
    if metric is None and statistic is None:
        return make(a)
    if name in METRIC_FIGURES:
        return make(a, metric=metric, statistic=statistic)
    if name in FILTERED_FIGURES:
        return make(_only(a, metric, statistic))
    raise ValueError(
        f"--metric and --statistic do not apply to the figure {name!r}; they apply to "
        f"{', '.join(METRIC_FIGURES + FILTERED_FIGURES)}"
    )


def _only(a, metric: str | None, statistic: str | None):
    """The analysis with only the cells and comparisons of `metric` and `statistic` (a copy)."""
    import dataclasses

    def keep(df):
        if df is None or df.empty:
            return df
        m = pd.Series(True, index=df.index)
        if metric is not None:
            m &= df["metric"].astype(str) == metric
        if statistic is not None and "statistic" in df.columns:
            m &= df["statistic"].astype(str) == statistic
        return df[m]

    return dataclasses.replace(a, cells=keep(a.cells), comparisons=keep(a.comparisons))


def restrict_runs(result, seats=(), *, harnesses=(), conditions=()):
    """The loaded runs of `seats`, `harnesses` and `conditions` only (each empty: any), a copy of
    the LoadResult with its refusals and skips kept: one figure or table of those runs, analysed as
    the report analyses them.

    A harness is named as its runs name it (case-insensitive: ``vllm bench serve``); a condition
    (what a run sent: benchreport.conditions) by its 12-digit id or by words of its description
    (``completions``, ``64 → 32 tok``), matched case-insensitively. ValueError naming the seats,
    harnesses or conditions there are when one given matches no run.
    """
    import dataclasses

    runs = list(result.runs)
    for what, option, wanted, keys in (
        ("seat", "--seats", seats, _seat_keys),
        ("harness", "--harness", harnesses, _harness_keys),
        ("condition", "--condition", conditions, _condition_keys),
    ):
        if not wanted:
            continue
        named = [(r, keys(r)) for r in runs]
        unknown = [w for w in wanted if not any(_matches(w, k, what) for _, k in named)]
        if unknown:
            shown = sorted({k[0] for _, k in named if k[0]})
            raise ValueError(
                f"{option}: no run of {', '.join(map(repr, unknown))}; the {_plural(what)} are: "
                + ("; " if what == "condition" else ", ").join(shown[:20])
                + (f" and {len(shown) - 20} more" if len(shown) > 20 else "")
            )
        runs = [r for r, k in named if any(_matches(w, k, what) for w in wanted)]
    return dataclasses.replace(result, runs=runs)


def _plural(what: str) -> str:
    return {"harness": "harnesses"}.get(what, what + "s")


def _seat_keys(r) -> tuple[str, ...]:
    return (r.run.seat.id,)


def _harness_keys(r) -> tuple[str, ...]:
    return (r.run.harness.name or "",)


def _condition_keys(r) -> tuple[str, ...]:
    """A run's condition as it is shown (id: words), then its id and its words."""
    import msgspec

    from benchreport import conditions

    load = msgspec.to_builtins(r.run.load) if r.run.load is not None else None
    ident, words = conditions.fingerprint(load), conditions.words(load)
    shown = f"{ident} ({words})" if ident else "(no condition recorded)"
    return (shown, ident or "", words or "")


def _matches(wanted: str, keys: tuple[str, ...], what: str) -> bool:
    """Whether a run with `keys` is one `wanted` names: a seat exactly, a harness case-insensitively,
    a condition by its id or by words of its description."""
    if what == "seat":
        return wanted == keys[0]
    w = " ".join(wanted.split()).lower()
    if what == "harness":
        return w == keys[0].lower()
    return bool(w) and (w == keys[1].lower() or w in keys[2].lower())


def narrow(a, *, metric: str | None = None, statistic: str | None = None):
    """The analysis with only the cells and comparisons of `metric` and `statistic` (a copy): a
    table of one metric. ValueError naming the metrics (statistics) the cells hold when none is
    `metric` (`statistic`)."""
    for option, column, value in (("--metric", "metric", metric), ("--statistic", "statistic", statistic)):
        if value is None or a.cells is None or a.cells.empty:
            continue
        have = sorted(set(a.cells[column].dropna().astype(str)))
        if value not in have:
            raise ValueError(f"{option}: these runs hold no {value!r}; they hold: {', '.join(have)}")
    return _only(a, metric, statistic) if metric or statistic else a


def table(a, name: str):
    """The report's table `name` (a `sections.Table`), or None when the data hold no such rows."""
    return _entry(TABLES, name, "table").make(a)


def figure_numbers(a) -> dict[str, int]:
    """Figure N of this data's report for each figure drawn (draws every figure once)."""
    out, n = {}, 0
    for name, e in FIGURES.items():
        if e.make(a) is not None:
            n += 1
            out[name] = n
    return out


# --- table text ----------------------------------------------------------------------------
def _flat(t) -> pd.DataFrame:
    """A table's rows with its group column (shown as a row above its rows) as a first column."""
    df = t.data.copy()
    if t.group and t.group in df.columns:
        df = df[[t.group] + [c for c in df.columns if c != t.group]]
        df = df.rename(columns={t.group: t.group_label or t.group.capitalize()})
    return df


def table_text(t, fmt: str, *, columns=None, rows=(), name: str | None = None, width: str | None = None) -> str:
    """A report table (`sections.Table`) as CSV, Markdown or LaTeX text.

    `columns`: the columns to keep (names as the table heads them, or ``["all"]``); by default
    every one, but LaTeX keeps the headline ones (`writers.HEADLINE_COLUMNS`) so that it fits
    a page (`name`: the table's name in `TABLES`, else its `key`). `rows`: filters as `writers.select_rows` reads them. ValueError on an unknown
    column or a malformed filter. `width`: LaTeX for a two-column page (``column`` or ``text``,
    `latex_table`'s `width`), ValueError when its columns cannot fit it.
    """
    if fmt not in TABLE_FORMATS:
        raise ValueError(f"`fmt` must be one of {', '.join(TABLE_FORMATS)}; got {fmt!r}")
    df = select_rows(_flat(t), list(rows))
    keep = (
        select_columns(df, columns) if columns else (headline(df, name or t.key) if fmt == "tex" else list(df.columns))
    )
    group = t.group_label or (t.group.capitalize() if t.group else None)
    if fmt == "tex" and group in keep and keep[0] != group:  # a group row stays first, above its rows
        keep = [group] + [c for c in keep if c != group]
    df = df[keep]
    if fmt == "csv":
        from benchreport.pipeline import neutralise_cell

        return df.map(neutralise_cell).to_csv(index=False, lineterminator="\n")
    caption = " ".join(str(t.caption).split())
    if fmt == "md":
        return markdown_table(df, caption, numeric=t.numeric)
    return latex_table(df, caption, numeric=t.numeric, group=group if t.group and group in keep else None, width=width)
