"""Cells as the report's tables show them: display strings, long and wide layouts, excluded figures."""

from __future__ import annotations

import re
from typing import Sequence

import pandas as pd

from benchreport import format as fmt
from benchreport.columns import METRICS, STATISTICS
from benchreport.report.model import figures as F
from benchreport.stats.common import parse_values

from .flagview import excluded_figures, first_chunk_cells
from .labels import column, order_seats, seat_label
from .memo import once_per_table
from .tables import drop_empty, wide_metric


#: display order of statistics inside a cell group (the one order, benchreport.columns.STATISTICS)
STAT_ORDER = {s: i for i, s in enumerate(STATISTICS)}


def _close(x: float, v: float) -> bool:
    return abs(float(x) - v) <= 1e-9 * max(1.0, abs(v))


def _first_chunk_rows(cells: pd.DataFrame, a) -> list:
    """Index of the TTFT cells that time an empty first chunk (`flagview.first_chunk_cells`)."""
    drop = []
    for e in first_chunk_cells(a):
        m = (cells["metric"].astype(str) == "ttft_ms") & (cells["seat"].astype(str) == str(e["seat"]))
        for col in ("workload", "harness", "load"):
            if not fmt.missing(e.get(col)) and col in cells.columns:
                m &= cells[col].astype(str) == str(e[col])
        if e.get("concurrency") is not None:
            m &= pd.to_numeric(cells["concurrency"], errors="coerce") == float(e["concurrency"])
        drop += list(cells.index[m.to_numpy(dtype=bool)])
    return drop


def result_cells(a) -> pd.DataFrame:
    """The cells Table 1 and the figures show: without any cell holding an excluded figure, nor a
    TTFT that times a chunk with no token (trap.first_chunk: not a time to first token)."""
    cells = a.cells
    if cells is None or cells.empty:
        return cells
    drop = _first_chunk_rows(cells, a)
    for e in excluded_figures(a):
        m = cells["seat"].astype(str) == str(e["seat"])
        if not fmt.missing(e.get("metric")):
            m &= cells["metric"].astype(str) == str(e["metric"])
        if not fmt.missing(e.get("workload")):
            m &= cells["workload"].astype(str) == str(e["workload"])
        for idx, r in cells[m].iterrows():
            vals = parse_values(r.get("values")) if "values" in cells.columns else []
            if any(_close(x, e["value"]) for x in vals) or (
                fmt.finite(r.get("estimate")) and _close(r["estimate"], e["value"])
            ):
                drop.append(idx)
    return cells.drop(index=sorted(set(drop))) if drop else cells


def _method_labels(a) -> dict:
    """(workload, harness, probe, load) -> the workload as tables show it: with the harness, probe
    and load (what was sent, in words) where one workload was measured by several of them (they are
    different cells). Made once per analysis (a report asks six times)."""
    return once_per_table(a, "method_labels", a.cells, lambda: _make_method_labels(a.cells))


def _make_method_labels(cells) -> dict:
    if cells is None or cells.empty or "harness" not in cells.columns:
        return {}
    keys = list(
        zip(_workload_names(cells), cells["harness"].map(fmt.text), cells["probe"].map(fmt.text), _loads(cells))
    )
    methods: dict[str, set] = {}
    for w, h, p, ld in keys:
        methods.setdefault(w, set()).add((h, p, ld))
    return {
        (w, h, p, ld): (
            f"{w} ({', '.join(x for x in _distinct(methods[w], (h, p, ld)) if x)})" if len(methods[w]) > 1 else w
        )
        for w, h, p, ld in set(keys)
    }


def _distinct(methods: set, mine: tuple) -> tuple:
    """The parts of `mine` (harness, probe, load) that tell it from the workload's other methods."""
    return tuple(x if len({m[i] for m in methods}) > 1 else "" for i, x in enumerate(mine))


def _loads(df: pd.DataFrame) -> list[str]:
    return df["load"].map(fmt.text).tolist() if "load" in df.columns else [""] * len(df)


def _workload_names(df: pd.DataFrame) -> list[str]:
    """Each row's workload with its measurement condition (`format.workload_label`: the
    `condition` column where the frame has one, never a split of the workload string)."""
    return [fmt.workload_label(w, c) for w, c in zip(df["workload"], column(df, "condition"))]


def workloads(a, df: pd.DataFrame) -> list[str]:
    """The display workload of each row of a cells or comparisons frame (`_method_labels`)."""
    labels = _method_labels(a)
    h = df["harness"].map(fmt.text) if "harness" in df.columns else [""] * len(df)
    p = df["probe"].map(fmt.text) if "probe" in df.columns else [""] * len(df)
    return [labels.get((w, hh, pp, ld), w) for w, hh, pp, ld in zip(_workload_names(df), h, p, _loads(df))]


def _as_printed(reported, recomputed, estimate) -> str:
    """The estimate as the harness printed it, with our recomputation beside it where they differ."""
    text = fmt.num(estimate)
    if (
        fmt.finite(reported)
        and fmt.finite(recomputed)
        and abs(reported - recomputed) > fmt.printed_rounding(reported) + 1e-12
    ):
        # a no-break space: the recomputation may go under the figure, but stays whole
        return f"{fmt.num(reported)} (recomputed\u00a0{fmt.num(recomputed)})"
    return text


def within_ci(lo, hi, style=None) -> str:
    """A within-run interval, labelled so it is never read as run-to-run: 'within one run [a, b]'."""
    ci = fmt.ci(lo, hi, style or fmt.num)
    return f"within one run {ci}" if ci else ""


def stat_rank(st) -> int:
    """Where a statistic sorts (benchreport.columns.STATISTICS order; others last)."""
    return STAT_ORDER.get(str(st), 99)


def cell_display(a, cells: pd.DataFrame) -> pd.DataFrame:
    """Cells sorted for display (seat, metric, workload, concurrency, statistic), as strings.

    The columns of the long table, plus ``_k``: one id per seat and cell (seat, workload,
    concurrency, metric; date where the data have one), for `spread_statistics`. Formatting goes
    column by column over plain lists: fleet scale has thousands of cells, and pandas'
    per-row access (iterrows) would cost seconds.
    """
    order = {s: i for i, s in enumerate(order_seats(a, cells["seat"]))}
    metric_order = {m: i for i, m in enumerate(METRICS)}
    seat = cells["seat"].astype(str)
    c = cells.assign(
        _seat=seat,
        _o=seat.map(order),
        _m=cells["metric"].map(lambda m: metric_order.get(m, 99)),
        _c=pd.to_numeric(cells["concurrency"], errors="coerce").fillna(-1),
        _st=cells["statistic"].map(stat_rank),
        _w=workloads(a, cells),
        _d=cells["date"].map(fmt.text) if "date" in cells.columns else "",
    )
    c = c.sort_values(["_o", "_m", "_w", "_c", "_d", "_st"], kind="stable")
    vals = [parse_values(v) for v in column(c, "values")]
    n_passes = [int(p) if fmt.finite(p) else len(v) for p, v in zip(column(c, "n_passes"), vals)]
    estimate = [
        _as_printed(r, q, e) if p == 1 else fmt.num(e)
        for r, q, e, p in zip(column(c, "reported"), column(c, "recomputed"), column(c, "estimate"), n_passes)
    ]
    per_pass = [", ".join(fmt.num(x) for x in v) if 1 < len(v) <= 4 else "" for v in vals]
    for i, (p, v, med) in enumerate(zip(n_passes, vals, column(c, "median"))):
        if p == 2 and len(v) == 2:
            # two observations give no reliable mean: both values, as the fleet paper does
            estimate[i], per_pass[i] = f"{fmt.num(v[0])}, {fmt.num(v[1])}", "both shown"
        elif 3 <= p <= 4 and len(v) == p and fmt.finite(med):
            per_pass[i] += f"; median {fmt.num(med)}, range {fmt.span(min(v), max(v))}"
    ci = [
        fmt.ci(lo, hi) or within_ci(wl, wh) or no_ci(m)
        for lo, hi, wl, wh, m in zip(
            column(c, "ci_low"),
            column(c, "ci_high"),
            column(c, "within_low"),
            column(c, "within_high"),
            column(c, "ci_method"),
        )
    ]
    labels = {s: seat_label(a, s) for s in c["_seat"].unique()}
    metric_labels = {m: F.metric_label(str(m), unit=False) for m in c["metric"].unique()}
    return pd.DataFrame(
        {
            "seat": c["_seat"].map(labels).tolist(),
            "Metric": c["metric"].map(metric_labels).tolist(),
            "Workload": c["_w"].tolist(),
            "Conc.": [fmt.concurrency(x) for x in column(c, "concurrency")],
            "Stat.": [fmt.stat_words(fmt.text(x), short=True) for x in column(c, "statistic")],
            "Passes": [fmt.count(p) for p in n_passes],
            "n": [fmt.count(x) for x in column(c, "n_obs")],
            "Estimate": estimate,
            "Unit": [fmt.text(u) or fmt.unit_of(m) for u, m in zip(column(c, "unit"), column(c, "metric"))],
            "CI": ci,
            "Per pass, in order": per_pass,
            "_metric": c["metric"].astype(str).tolist(),
            "_stat": [fmt.text(x) for x in column(c, "statistic")],
            "_date": c["_d"].tolist(),
            "_k": c.groupby(["_o", "_m", "_w", "_c", "_d", "_seat"], sort=False, dropna=False).ngroup().tolist(),
        }
    )


def cells_frame(a, cells: pd.DataFrame, ci_pct: str) -> pd.DataFrame:
    """The long table: one row per seat, cell and statistic (the layout for small data)."""
    d = cell_display(a, cells).rename(columns={"CI": f"{ci_pct} CI"})
    return d[
        [
            "seat",
            "Metric",
            "Workload",
            "Conc.",
            "Stat.",
            "Passes",
            "n",
            "Estimate",
            "Unit",
            f"{ci_pct} CI",
            "Per pass, in order",
        ]
    ]


def stat_heading(st) -> str:
    """A statistic as a column heading: 'Mean', 'p95'."""
    return {"mean": "Mean", "min": "Min", "max": "Max"}.get(str(st), str(st))


def spread_statistics(d: pd.DataFrame, value: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Long display rows (sorted, one per statistic, keyed by ``_k``) to one row per key.

    Returns the headline row of each key (its first statistic in `STAT_ORDER`: the mean
    where there is one) and, aligned with it, one column per other statistic holding its
    `value` ('' where the key has none).
    """
    d = d.reset_index(drop=True)
    head = d.drop_duplicates("_k")
    rest = d.drop(index=head.index)
    head = head.reset_index(drop=True)
    if rest.empty:
        return head, pd.DataFrame(index=head.index)
    wide = rest.pivot(index="_k", columns="Stat.", values=value)
    stats = sorted(wide.columns, key=lambda st: (stat_rank(st), str(st)))
    wide = wide.reindex(index=head["_k"].to_numpy(), columns=stats).fillna("")
    wide.columns = [stat_heading(st) for st in stats]
    return head, wide.reset_index(drop=True)


def cells_wide(a, cells: pd.DataFrame, ci_pct: str) -> pd.DataFrame:
    """The wide table: one row per seat and cell (workload, concurrency, metric).

    The mean (or, where a cell has none, its first statistic, named in a Stat. column)
    comes with its passes, n, CI or why none, and per-pass values (3 or 4 passes); the
    other statistics (p50 ... p99, min, max) with their estimates. Columns no row fills
    are left out.
    """
    ci = f"{ci_pct} CI"
    head, other = spread_statistics(cell_display(a, cells), "Estimate")
    all_mean = bool((head["Stat."] == "mean").all())
    out = pd.DataFrame(
        {
            "seat": head["seat"],
            "Metric": [wide_metric(m, u) for m, u in zip(head["_metric"], head["Unit"])],
            "Workload": head["Workload"],
            "Conc.": head["Conc."],
            "Passes": head["Passes"],
            "n": head["n"],
            "Stat.": head["Stat."],
            "Mean" if all_mean else "Estimate": head["Estimate"],
            ci: head["CI"],
        }
    )
    if all_mean:
        out = out.drop(columns="Stat.")
    out = pd.concat([out, other.drop(columns=[c for c in other.columns if c in out.columns])], axis=1)
    out["Per pass, in order"] = head["Per pass, in order"]
    stat_cols = [c for c in out.columns if c in {"Mean", "Estimate", *other.columns}]
    for c in stat_cols:
        out[c] = out[c].map(recomputed_mark)
    return drop_empty(out, [*other.columns, "Per pass, in order"])


#: in a wide table, a figure whose recomputation differs carries this mark (the note says so)
RECOMPUTED_MARK = "†"
_RECOMPUTED = re.compile(r"^(\S+) \(recomputed\u00a0\S+\)$")


def recomputed_mark(text: str) -> str:
    """'38.6 (recomputed 37.6)' as '38.6†' (a wide table has no room for both figures)."""
    return _RECOMPUTED.sub(r"\1" + RECOMPUTED_MARK, text) if isinstance(text, str) else text


_SHORT_REASONS = (
    ("two passes, both values reported", "2 passes"),
    ("single pass", "1 pass"),
    ("baseline 1 pass; candidate 1 pass", "1 pass each"),
)


def no_ci(method) -> str:
    """Why a cell or comparison has no CI, from its ci_method, shortened for a table cell."""
    m = fmt.text(method) or "none"
    for long, short in _SHORT_REASONS:
        m = m.replace(long, short)
    return m


def cell_rows_per_seat(cells: pd.DataFrame) -> pd.Series:
    """Rows of the wide table per seat: its cells (workload, concurrency, metric, date)."""
    keys = [k for k in ("seat", "workload", "concurrency", "metric", "date") if k in cells.columns]
    return cells.assign(seat=cells["seat"].astype(str)).drop_duplicates(keys).groupby("seat").size()


CELLS_NOTE = (
    "Conc.: concurrent streams; n: observations behind the figure where the run states "
    "them. With several passes the estimate is the geometric mean of the pass values and the "
    "CI a log-scale t-interval over passes (run-to-run variation included); a single pass has "
    "no such CI, and an interval over its requests is marked 'within one run'. A harness's "
    "figure is shown as printed, with our recomputation from its requests beside it where they "
    "differ."
)


def wide_note(pct: str, columns: Sequence[str], *, marked: bool = False) -> str:
    """What a wide table of cells holds, for its note."""
    stats = [c for c in columns if c in {stat_heading(s) for s in STAT_ORDER} and c != "Mean"]
    bits = [
        f"One row per seat and cell. The mean is given with its {pct} CI"
        + (" (a cell without a mean: its first statistic, named under Stat.)" if "Stat." in columns else "")
        + (f"; {fmt.join_words(stats)}: the estimates of those statistics" if stats else "")
        + ".",
        "tables/cells.csv beside this report has every statistic with its CI and per-pass values.",
    ]
    if marked:
        bits.append(
            f"{RECOMPUTED_MARK}: the harness's figure as printed; our recomputation from its requests "
            "differs (tables/cells.csv has both)."
        )
    return " ".join(bits)
