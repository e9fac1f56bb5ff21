"""Section 3, Comparison against the incumbent: ratios with CIs and verdicts, the forest plot."""

from __future__ import annotations

import pandas as pd

from benchreport import format as fmt
from benchreport.columns import METRICS, higher_is_better
from benchreport.report.model import figures as F
from benchreport.stats.common import parse_values
from benchreport.stats.multiplicity import describe as describe_multiplicity

from .blocks import FigureBlock, Prose, Table, figure_block, ident, para, prose
from .cellview import no_ci, spread_statistics, stat_rank, within_ci, workloads
from .headline import (
    METRIC_PRIORITY,
    band_words,
    baseline_comparisons,
    cell_words,
    headline_row,
    headline_sentence,
    primary_words,
    verdict_rule,
)
from .labels import baseline_word, ci_level, column
from .memo import once_per_table
from .tables import MAX_COMPARISON_ROWS, abbreviations, constant_columns, drop_empty, wide_metric


def comparison_text(a) -> Prose:
    """Section 3's prose: against whom, how ratios and verdicts are read."""
    base = a.baseline
    if not base:
        return prose(
            para(
                "No seat is marked as the incumbent and no baseline was given: no comparison is "
                "made. A claim that any seat is the best would need the incumbent measured the "
                "same day with the same harness."
            )
        )
    c = baseline_comparisons(a)
    out = [headline_sentence(a, "The headline comparison")]
    if c is None or c.empty:
        return prose(out)
    out.append(
        para(
            "The next table compares every candidate cell that matches a cell of {} (same harness, probe, "
            "workload, concurrency, metric and statistic). The ratio is candidate over baseline, of the "
            "geometric means of the pass values; the verdict is direction aware (lower is better for "
            "latencies): {}. Each candidate's headline is its primary cell ({}), declared before the "
            "analysis, never the best of many.",
            ident(base),
            verdict_rule(a),
            primary_words(a),
        )
    )
    cmp = a.comparisons
    # the family of the correction: the candidate-vs-baseline rows (history rows are their own)
    m = int((cmp["p_value"].notna() & (cmp["kind"] == "baseline")).sum()) if "p_value" in cmp.columns else 0
    if m:
        out.append(para("{}", describe_multiplicity(a.options.multiplicity, m, a.options.thresholds.alpha)))
    return prose(out)


def _comparison_candidates(a, c: pd.DataFrame, max_rows: int, rows: pd.Series | None = None) -> list[str]:
    """Candidates whose comparisons fit in `max_rows`, best on the headline cell first.

    `rows`: table rows per candidate (default: one per comparison).
    """
    row = headline_row(a)
    order = list(dict.fromkeys(c["candidate"].astype(str)))
    if row is not None:
        same = c[(c["metric"] == row["metric"]) & (c["workload"].astype(str) == str(row["workload"]))]
        same = same[
            pd.to_numeric(same["concurrency"], errors="coerce").fillna(-1)
            == (float(row["concurrency"]) if fmt.finite(row.get("concurrency")) else -1)
        ]
        hib = higher_is_better(str(row["metric"])) if str(row["metric"]) in METRICS else True
        ranked = same.sort_values("ratio", ascending=not hib)["candidate"].astype(str).tolist()
        order = list(dict.fromkeys(ranked + order))
    counts = c["candidate"].astype(str).value_counts() if rows is None else rows
    keep, n = [], 0
    for cand in order:
        if keep and n + counts[cand] > max_rows:
            break
        keep.append(cand)
        n += counts[cand]
    return keep


_COMPARISON_KEYS = (
    "candidate",
    "baseline",
    "kind",
    "candidate_date",
    "baseline_date",
    "workload",
    "concurrency",
    "metric",
)


def comparison_rows_per_candidate(c: pd.DataFrame) -> pd.Series:
    """Rows of the wide comparison table per candidate: one per cell (workload, concurrency, metric)."""
    keys = [k for k in _COMPARISON_KEYS if k in c.columns]
    return c.assign(candidate=c["candidate"].astype(str)).drop_duplicates(keys).groupby("candidate").size()


def comparisons_cut(c: pd.DataFrame, max_rows: int) -> bool:
    """Whether the body shows only some candidates: not even one row per cell fits in `max_rows`."""
    return len(c) > max_rows and int(comparison_rows_per_candidate(c).sum()) > max_rows


def comparison_table(a, *, max_rows: int = MAX_COMPARISON_ROWS) -> Table | None:
    """Ratios against the baseline with CIs and verdicts, grouped by candidate.

    One row per statistic while that fits in `max_rows`; else one row per cell with the
    verdict of each statistic as a column; at fleet scale (not even that fits) the
    candidates best on the headline cell, and `all_comparisons_table` puts every
    comparison in the appendix.
    """
    c = baseline_comparisons(a)
    if c is None or c.empty:
        return None
    note = None
    wide = len(c) > max_rows
    if wide and comparisons_cut(c, max_rows):
        keep = _comparison_candidates(a, c, max_rows, comparison_rows_per_candidate(c))
        note = (
            f"This table shows {fmt.count(len(keep))} of {fmt.count(c['candidate'].nunique())} candidates, the best on the "
            "headline cell; the appendix lists every comparison."
        )
        c = c[c["candidate"].astype(str).isin(keep)]
    return _comparison_frame(a, c, note=note, wide=wide)


def all_comparisons_table(a, *, max_rows: int = MAX_COMPARISON_ROWS) -> Table | None:
    """Every comparison against the baseline (appendix), when the body's table had to be cut.

    One row per candidate and cell, the verdict of each statistic as a column; the long
    table is tables/comparisons.csv beside the report.
    """
    c = baseline_comparisons(a)
    if c is None or not comparisons_cut(c, max_rows):
        return None
    t = _comparison_frame(a, c, wide=True)
    t.kind, t.key, t.screen_only = "appendix", "all-comparisons", "tables/comparisons.csv"
    t.caption = (
        "Every comparison against the baseline, one row per candidate and cell: the mean's "
        f"ratio with its {ci_level(a)} CI and verdict, and the verdicts of the percentiles."
    )
    return t


#: a verdict in a wide table's statistic column, after the ratio
VERDICT_MARKS = {"better": "+", "worse": "−", "within_noise": "≈", "insufficient_data": "?"}


#: a real change inside the noise band (verdict_detail), after the within-noise mark
DETAIL_MARKS = {"better, within tolerance": "≈+", "worse, within tolerance": "≈−"}


def _mark(verdict: str, detail: str) -> str:
    """A verdict's mark in a wide table: `VERDICT_MARKS`, or `DETAIL_MARKS` for a change inside the band."""
    return DETAIL_MARKS.get(detail, "") if verdict == "within_noise" and detail else VERDICT_MARKS.get(verdict, verdict)


def _cell_values_lookup(a) -> dict:
    """(seat, workload, concurrency, metric, statistic) -> the per-pass values of that cell; made
    once per analysis (the comparison table and the appendix's both ask)."""
    return once_per_table(a, "cell_values", a.cells, lambda: _make_cell_values_lookup(a))


def _make_cell_values_lookup(a) -> dict:
    cells = a.cells
    if cells is None or cells.empty or "values" not in cells.columns:
        return {}
    conc = pd.to_numeric(cells["concurrency"], errors="coerce").fillna(-1.0).astype(float)
    keys = zip(
        cells["seat"].astype(str),
        workloads(a, cells),
        conc,
        cells["metric"].astype(str),
        cells["statistic"].map(fmt.text),
    )
    return dict(zip(keys, cells["values"]))


def _comparison_display(a, c: pd.DataFrame) -> pd.DataFrame:
    """Comparisons sorted for display (candidate, metric, workload, concurrency, statistic), as strings.

    The columns of the long table, plus ``_k`` (one id per candidate and cell) and
    ``Mark`` (ratio and verdict mark, for the wide table's statistic columns).
    """
    metric_order = {m: i for i, m in enumerate(METRIC_PRIORITY)}
    keys = [k for k in _COMPARISON_KEYS if k in c.columns]
    c = c.assign(
        _m=c["metric"].map(lambda m: metric_order.get(m, 99)),
        _c=pd.to_numeric(c["concurrency"], errors="coerce").fillna(-1).astype(float),
        _w=workloads(a, c),
        _st=c["statistic"].map(stat_rank),
    )
    c = c.sort_values(["candidate", "_m", "_w", "_c", "_st"], kind="stable")
    lookup = _cell_values_lookup(a)
    metric, stat = c["metric"].astype(str).tolist(), c["statistic"].map(fmt.text).tolist()

    def side(seat_col: str, est_col: str) -> list[str]:
        out = []
        for seat, w, conc, m, st, est in zip(
            c[seat_col].astype(str), c["_w"], c["_c"], metric, stat, column(c, est_col)
        ):
            vals = parse_values(lookup.get((seat, w, conc, m, st)))
            # two passes give no reliable mean: both values, as the fleet paper does
            out.append(f"{fmt.num(vals[0])}, {fmt.num(vals[1])}" if len(vals) == 2 else fmt.num(est))
        return out

    ratio = [fmt.ratio3(x) for x in column(c, "ratio")]
    verdict = [fmt.text(v) for v in column(c, "verdict")]
    detail = [fmt.text(v) for v in column(c, "verdict_detail")] if "verdict_detail" in c else [""] * len(c)
    metric_labels = {m: F.metric_label(m, unit=False) for m in set(metric)}
    return pd.DataFrame(
        {
            "candidate": [f"{x} vs {y}" for x, y in zip(c["candidate"], c["baseline"])],
            "Metric": [metric_labels[m] for m in metric],
            "Workload": c["_w"].tolist(),
            "Conc.": [fmt.concurrency(x) for x in column(c, "concurrency")],
            "Stat.": stat,
            "Baseline": side("baseline", "baseline_estimate"),
            "Candidate": side("candidate", "candidate_estimate"),
            "Unit": [fmt.unit_of(m) for m in metric],
            "Ratio": ratio,
            "CI": [
                fmt.ci(lo, hi, fmt.ratio3) or within_ci(wl, wh, fmt.ratio3) or no_ci(m)
                for lo, hi, wl, wh, m in zip(
                    column(c, "ci_low"),
                    column(c, "ci_high"),
                    column(c, "within_low"),
                    column(c, "within_high"),
                    column(c, "ci_method"),
                )
            ],
            "Verdict": [v.replace("_", " ") + (f" ({d})" if d else "") for v, d in zip(verdict, detail)],
            "Mark": [f"{r} {_mark(v, d)}".strip() for r, v, d in zip(ratio, verdict, detail)],
            "_metric": metric,
            "_k": c.assign(candidate=c["candidate"].astype(str))
            .groupby([*(k for k in keys if k not in ("workload", "concurrency")), "_w", "_c"], sort=False, dropna=False)
            .ngroup()
            .tolist(),
        }
    )


def _comparison_frame(a, c: pd.DataFrame, *, note: str | None = None, wide: bool = False) -> Table:
    pct = ci_level(a)
    ci = f"{pct} CI"
    who = f"the {baseline_word(a)}"
    d = _comparison_display(a, c).rename(columns={"CI": ci})
    bands = f"The noise band of a verdict is that of its statistic: {band_words(a.options.thresholds)}."
    note = f"{note} {bands}" if note else bands
    if not wide:
        df = d[
            [
                "candidate",
                "Metric",
                "Workload",
                "Conc.",
                "Stat.",
                "Baseline",
                "Candidate",
                "Unit",
                "Ratio",
                ci,
                "Verdict",
            ]
        ]
        return Table(
            df,
            f"Comparison against {who}: candidate/baseline ratio with its {pct} CI and the verdict, per cell.",
            group="candidate",
            numeric=("Conc.", "Baseline", "Candidate", "Ratio"),
            small=True,
            key="comparisons",
            nowrap=("Metric", "Baseline", "Candidate", "Ratio", "Stat.", "Unit"),
            note=note,
            group_label="Comparison",
        )
    head, other = spread_statistics(d, "Mark")
    all_mean = bool((head["Stat."] == "mean").all())
    df = pd.DataFrame(
        {
            "candidate": head["candidate"],
            "Metric": [wide_metric(m, u) for m, u in zip(head["_metric"], head["Unit"])],
            "Workload": head["Workload"],
            "Conc.": head["Conc."],
            "Stat.": head["Stat."],
            "Baseline": head["Baseline"],
            "Candidate": head["Candidate"],
            "Ratio": head["Ratio"],
            ci: head[ci],
            "Verdict": head["Verdict"],
        }
    )
    if all_mean:
        df = df.drop(columns="Stat.")
    df = drop_empty(pd.concat([df, other], axis=1), list(other.columns))
    df, same = constant_columns(df, ["Workload"])
    stats = [s for s in other.columns if s in df.columns]
    bits = [note, same] if note else [same]
    bits.append(
        "Baseline, Candidate, Ratio, CI and Verdict are those of the mean"
        + (" (of the statistic under Stat. where a cell has no mean)" if not all_mean else "")
        + "."
    )
    if stats:
        bits.append(
            f"{fmt.join_words(stats)}: the candidate/baseline ratio of that statistic and its verdict "
            "(+ better, − worse, ≈ within noise, ≈+ or ≈− within noise but a real change for the better or "
            "the worse, ? too little data for one)."
        )
    bits += [
        abbreviations(df["Metric"]),
        ("Every comparison, with its CI, test and counts, is in tables/comparisons.csv beside this report."),
    ]
    return Table(
        df,
        f"Comparison against {who}: candidate/baseline ratio of the mean with its {pct} CI "
        "and the verdict, and the verdicts of the percentiles, per cell.",
        group="candidate",
        numeric=("Conc.", "Baseline", "Candidate", "Ratio", *stats),
        small=True,
        dense=True,
        key="comparisons",
        nowrap=("Metric", "Baseline", "Candidate", "Ratio", "Stat.", *stats),
        note=" ".join(b for b in bits if b),
        group_label="Comparison",
    )


def ratio_figure(a, *, max_rows: int = 24) -> FigureBlock | None:
    """Forest plot of the ratios against the baseline (only when at least one has a CI).

    At fleet scale (more than `max_rows` comparisons) it shows the headline cell only, one
    row per candidate, the best `max_rows` first.
    """
    c = baseline_comparisons(a)
    if c is None or c.empty or not (c["ci_low"].map(fmt.finite) & c["ci_high"].map(fmt.finite)).any():
        return None
    more = ""
    if len(c) > max_rows:
        row = headline_row(a)
        if row is not None:
            conc = pd.to_numeric(c["concurrency"], errors="coerce").fillna(-1)
            want = float(row["concurrency"]) if fmt.finite(row.get("concurrency")) else -1
            c = c[(c["metric"] == row["metric"]) & (c["workload"].astype(str) == str(row["workload"])) & (conc == want)]
            hib = higher_is_better(str(row["metric"])) if str(row["metric"]) in METRICS else True
            total = len(c)
            c = c.sort_values("ratio", ascending=not hib).head(max_rows)
            more = (
                f" Shown: {cell_words(row)}, the best {fmt.count(len(c))} of {fmt.count(total)} candidates; the "
                "appendix lists every comparison."
            )
        else:
            more = f" The first {fmt.count(max_rows)} of {fmt.count(len(c))} comparisons are shown; the appendix lists all."
    fig = F.ratio_forest(c, max_rows=max_rows)
    kinds = F.drawn(fig)
    marks = fmt.join_words(
        [
            w
            for k, w in (
                ("ci", "with their confidence intervals (filled)"),
                ("no_ci", "without a confidence interval (hollow)"),
            )
            if k in kinds
        ]
    )
    shown = getattr(fig, "benchreport_styles", {})
    verdicts = ", ".join(w for v, w in _VERDICT_MARK_WORDS.items() if v in shown)
    return figure_block(
        fig,
        f"Candidate/baseline ratios {marks}; the dashed line is parity. Colour and marker "
        f"give the verdict, which is also written at the right ({verdicts})." + more,
        "ratios",
    )


#: the forest plot's markers (figures.VERDICT_STYLES), as its caption names them
_VERDICT_MARK_WORDS = {
    "better": "▲ better",
    "worse": "▼ worse",
    "within_noise": "● within noise",
    "insufficient_data": "■ too little data",
}
