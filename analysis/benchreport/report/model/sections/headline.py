"""The headline comparison: each candidate's declared primary cell against the baseline, in words."""

from __future__ import annotations

import pandas as pd

from benchreport import format as fmt
from benchreport.report.model import figures as F
from benchreport.thresholds import PrimaryCell

from . import quote
from .blocks import Prose, ident, para, prose
from .labels import baseline_word, ci_level, order_seats, seat_label


#: the metrics a headline is taken from, in order: the declared primary cell's fallbacks
METRIC_PRIORITY = list(PrimaryCell.fallback)


def baseline_comparisons(a) -> pd.DataFrame:
    """The comparisons against `Analysis.baseline` (none without a baseline)."""
    c = a.comparisons
    if c is None or c.empty or not a.baseline:
        return c.iloc[0:0] if c is not None else pd.DataFrame()
    return c[c["baseline"].astype(str) == str(a.baseline)]


#: up to this many candidates, the headline gives each one's primary comparison in full
HEADLINE_PAIRS = 3


def primary_rows(a) -> pd.DataFrame:
    """Each candidate's primary comparison against the baseline (the declared headline cells)."""
    c = baseline_comparisons(a)
    if c is None or c.empty or "primary" not in c.columns:
        return c.iloc[0:0] if c is not None else pd.DataFrame()
    c = c[c["primary"].astype(bool) & (c["kind"].astype(str) == "baseline")]
    return c.sort_values("candidate", kind="stable")


def headline_row(a):
    """The primary comparison the abstract names: the first with a verdict of better or worse, else the first."""
    c = primary_rows(a)
    if c is None or c.empty:
        return None
    decided = c[c["verdict"].astype(str).isin(["better", "worse"])]
    return (decided if len(decided) else c).iloc[0]


def _cell_of(a, side: str, row) -> quote.RowId | None:
    """The cells-table row of one side ('baseline' or 'candidate') of a comparison row, when exactly
    one row holds that seat's cell (the side's date told when the comparison records it)."""
    fields = {k: row.get(k) for k in ("workload", "concurrency", "metric", "statistic", "harness", "probe", "load_id")}
    date = fmt.text(row.get(f"{side}_date"))
    return quote.find(a, "cells", seat=row[side], **fields, **({"date": date} if date else {}))


def _side(a, comparison: quote.RowId, side: str, row) -> str:
    """A seat's figure in a sentence: '763.9 tok/s in one pass', '896.9 and 982.5 tok/s in two passes'
    (each figure quoted from its table row: the comparison's estimate, the cell's pass values)."""
    cell = _cell_of(a, side, row)
    vals = quote.pass_values(a, cell) if cell is not None else []
    unit = fmt.unit_of(row["metric"])
    if 1 < len(vals) <= 4:
        return f"{fmt.join_words(vals)} {unit} in {fmt.spelled(len(vals))} passes"
    estimate = quote.figure(a, comparison, f"{side}_estimate")
    if len(vals) == 1:
        return f"{estimate} {unit} in one pass"
    return f"{estimate} {unit}"


def cell_words(row) -> str:
    """A comparison's cell in words: 'aggregate throughput (decode) at 16 concurrent streams'."""
    c = row.get("concurrency")
    at = f" at {fmt.counted(c, 'concurrent stream')}" if fmt.finite(c) else ""
    stat = fmt.text(row.get("statistic"))
    st = "" if not stat or stat == "mean" else (f" ({fmt.stat_words(stat)})" if stat == fmt.NOT_STATED else f" {stat}")
    return f"{F.metric_label(str(row['metric']), unit=False)}{st} ({fmt.text(row['workload'])}){at}"


def verdict_rule(a) -> str:
    """The rule a verdict follows, in words (benchreport.stats.compare.verdict)."""
    th = a.options.thresholds
    c = a.comparisons
    m = int(c["p_value"].notna().sum()) if c is not None and len(c) and "p_value" in c.columns else 0
    family = (
        f"across the {m} comparisons with a between-pass interval"
        if m
        else "across the comparisons with a between-pass interval (none here has passes on both sides)"
    )
    how = {
        "holm": f"after Holm's correction {family}",
        "bh": f"after the Benjamini-Hochberg correction {family}",
        "none": "at the stated level, without a correction for multiple comparisons",
    }[a.options.multiplicity]
    return (
        f"'better' or 'worse' needs passes on both sides, the {ci_level(a)} CI of the ratio wholly outside "
        f"1 ± the noise band of its statistic ({band_words(th)}), and the change still significant {how}; "
        "'within noise' means the CI lies inside the band, and says 'better, within tolerance' or 'worse, "
        "within tolerance' when it excludes 1 on that side and the change is still significant; anything "
        "else is 'insufficient data'"
    )


def band_words(th) -> str:
    """The noise bands in words: '±2% for means and medians, ±3% for p90, ±4% for p95, ±5% for p99,
    min and max' (one band: '±2% for every statistic'); `Thresholds.bands`."""
    b = th.bands()
    if len(set(b.values())) == 1:
        return f"±{fmt.pct(b['noise'])} for every statistic"
    return (
        f"±{fmt.pct(b['noise'])} for means and medians, ±{fmt.pct(b['noise_p90'])} for p90, "
        f"±{fmt.pct(b['noise_p95'])} for p95, ±{fmt.pct(b['noise_p99'])} for p99, min and max"
    )


def _declared_label(p) -> str:
    """The declared primary cell's metric and statistic in words ('aggregate throughput', '... p90')."""
    return F.metric_label(p.metric, unit=False) + ("" if p.statistic == "mean" else f" {p.statistic}")


def primary_words(a) -> str:
    """The declared primary cell in words, as the headline and Section 3 state it."""
    p = a.options.primary
    bits = [_declared_label(p)]
    if p.workload:
        bits.append(f"({p.workload})")
    bits.append(f"at {fmt.streams(p.concurrency)}" if p.concurrency else "at the highest concurrency both seats share")
    return " ".join(bits) + "; else the first metric both seats share"


def _one_headline(a, row, lead: str, who: str) -> Prose:
    base, cand = str(row["baseline"]), str(row["candidate"])
    rid = quote.row_id("comparisons", row)
    ci = quote.interval(a, rid, style=fmt.ratio3)
    method = fmt.text(row.get("ci_method"))
    verdict = fmt.text(row.get("verdict")).replace("_", " ")
    reason = fmt.text(row.get("verdict_reason"))
    if ci:
        ci_words = f"{ci_level(a)} CI {ci}, {method}" if method else f"{ci_level(a)} CI {ci}"
    else:
        ci_words = "no CI for the seats: " + (method.replace("none: ", "") if method else "too few passes")
        wi = quote.interval(a, rid, "within_low", "within_high", style=fmt.ratio3)
        if wi:
            wi = f"within one run {wi}"
            ci_words += f" ({wi}, which leaves out run-to-run variation)"
    return prose(
        para(
            "{} {}, {} measured {} against {} for {} {}: a ratio of {} ({}); verdict: {}{}.",
            f"{lead}: on" if lead else "On",
            cell_words(row),
            ident(cand),
            _side(a, rid, "candidate", row),
            _side(a, rid, "baseline", row),
            who,
            ident(base),
            quote.figure(a, rid, "ratio", fmt.ratio3),
            ci_words,
            verdict or "none",
            _why(a, rid, verdict, reason),
        ),
        *_fallback_note(a, row),
        *_unquotable_note(a, row, (base, cand)),
    )


def _fallback_note(a, row) -> list:
    """A sentence under a headline whose cell is not the declared one (issue 43: the headline cell
    was chosen silently when the declared metric was missing): the pair shares no cell of the
    declared metric and statistic, so its headline is the first metric of the declared order
    (`benchreport.thresholds.PrimaryCell.fallback`) both seats share."""
    p = a.options.primary
    if (fmt.text(row.get("metric")), fmt.text(row.get("statistic"))) == (p.metric, p.statistic):
        return []
    return [
        para(
            "The declared headline cell, {}, was not measured for both seats, so this headline is the first "
            "metric of the declared order both share ({}).",
            _declared_label(p),
            F.metric_label(str(row["metric"]), unit=False),
        )
    ]


def _why(a, rid, verdict: str, reason: str) -> str:
    """What follows a headline's verdict: for a real change inside the noise band its direction and
    the band (issue 43: 'within noise: worse, within tolerance, a change smaller than the ±2% noise
    band ...'), else the reason of a non-verdict; both from the comparisons row `rid` names."""
    detail = fmt.text(quote.row(a, rid).get("verdict_detail"))
    if verdict == "within noise" and detail:
        band = quote.figure(a, rid, "noise_band", fmt.pct)
        return f": {detail} (a change smaller than the ±{band} noise band of this statistic; the interval excludes 1)"
    if detail:
        band = quote.figure(a, rid, "noise_band", fmt.pct)
        return f" ({reason}; {detail}: the change is significant, its size not shown beyond ±{band})"
    return f" ({reason})" if reason and verdict != "better" and verdict != "worse" else ""


def _unquotable_note(a, row, seats: tuple[str, str]) -> list:
    """A sentence under a headline whose cell a failure or measurement-trap flag names (issue 42:
    the declared primary cell is kept, never swapped for a better-looking one, but its reader is
    told that its figures are in question)."""
    places = unquotable_places(a)
    if not places:
        return []
    named = [
        s
        for s in seats
        if (
            s,
            fmt.text(row.get("harness")),
            fmt.text(row.get("load_id")),
            fmt.text(row.get("workload")),
            fmt.num(row.get("concurrency")),
        )
        in places
    ]
    if not named:
        return []
    return [
        para(
            "A failure or measurement-trap finding names runs of this cell for {}: its figures are in question "
            "(Sections 5 and 6).",
            fmt.join_words(named),
        )
    ]


def headline_sentence(a, lead: str = "Headline") -> Prose:
    """The headline: each candidate's declared primary cell against the incumbent, never the best of many."""
    base = a.baseline
    if not base:
        return prose(
            [
                para(
                    "No seat is marked as the incumbent and no baseline was given, so this report "
                    "makes no comparison against an incumbent and supports no claim that any seat is "
                    "the best."
                ),
                *seat_figures(a),
            ]
        )
    who = f"the {baseline_word(a)}"
    prim = primary_rows(a)
    if prim is None or prim.empty:
        return prose(
            para(
                "{} {} was measured, but no candidate shares a cell with it (same harness, probe, workload, "
                "concurrency, metric and statistic), so no comparison against it can be made.",
                who[0].upper() + who[1:],
                ident(base),
            )
        )
    if len(prim) <= HEADLINE_PAIRS:
        return prose([_one_headline(a, r, lead if i == 0 else "", who) for i, (_, r) in enumerate(prim.iterrows())])
    v = prim["verdict"].astype(str)
    better = sorted(prim.loc[v == "better", "candidate"].astype(str))
    worse = sorted(prim.loc[v == "worse", "candidate"].astype(str))
    rest = len(prim) - len(better) - len(worse)
    if not better and not worse:
        return prose(
            para(
                "{}: on each candidate's primary cell ({}), none of the {} candidates is shown to be better "
                "or worse than {} {}; {} no verdict the data can carry.",
                lead,
                primary_words(a),
                fmt.count(len(prim)),
                who,
                ident(base),
                "all have" if rest == len(prim) else f"{fmt.count(rest)} have",
            )
        )
    parts = []
    if better:
        parts.append(f"{fmt.count(len(better))} better ({', '.join(better)})")
    if worse:
        parts.append(f"{fmt.count(len(worse))} worse ({', '.join(worse)})")
    if rest:
        parts.append(f"{fmt.count(rest)} without a verdict")
    return prose(
        para(
            "{}: on each candidate's primary cell ({}), of {} candidates against {} {}: {}.",
            lead,
            primary_words(a),
            fmt.count(len(prim)),
            who,
            ident(base),
            "; ".join(parts),
        )
    )


#: seats whose headline figure the abstract states when there is no incumbent (Table 1 has the rest)
ABSTRACT_SEATS = 4
#: the figure that stands for a seat, most wanted first: (metric, statistic)
SEAT_FIGURE = (
    ("output_tok_s", "mean"),
    ("decode_tok_s_per_stream", "mean"),
    ("ttft_ms", "p50"),
    ("e2e_latency_ms", "p50"),
)


#: flag families whose findings at warn or above make a cell's figure unquotable in the abstract
UNQUOTABLE_FAMILIES = ("requests", "trap")
#: a cell's key as the pass rows and the cells share it
_CELL_PLACE = ["seat", "harness", "load_id", "workload", "concurrency"]


def _run_ids_in(value, known: set) -> set:
    """Every run id of `known` named anywhere in a flag's evidence (its shape differs by code)."""
    if isinstance(value, str):
        return {value} & known
    if isinstance(value, dict):
        return set().union(*(_run_ids_in(v, known) for v in value.values())) if value else set()
    if isinstance(value, (list, tuple)):
        return set().union(*(_run_ids_in(v, known) for v in value)) if value else set()
    return set()


def _place(row) -> tuple:
    return tuple(fmt.text(row.get(k)) if k != "concurrency" else fmt.num(row.get(k)) for k in _CELL_PLACE)


def unquotable_places(a) -> set[tuple]:
    """The places (seat, harness, load, workload, concurrency) of cells the abstract must not quote
    (issue 42): a run of theirs is named by a failure or measurement-trap flag at warn or above, or
    more than `failed_warn` of their requests failed. Worked out once per analysis (the abstract
    asks for the seats' figures and for each headline), kept while its flags are the same."""
    kept = a.__dict__.get("_benchreport_unquotable")
    if kept is None or kept[0] is not a.flags:
        kept = (a.flags, _unquotable_places(a))
        a.__dict__["_benchreport_unquotable"] = kept
    return kept[1]


def _unquotable_places(a) -> set[tuple]:
    from .flagview import flags_of

    f = flags_of(a)
    if f.empty:
        return set()
    family = f["code"].astype(str).str.split(".").str[0]
    bad = f[family.isin(UNQUOTABLE_FAMILIES) & f["severity"].astype(str).isin(["warn", "critical"])]
    if bad.empty:
        return set()  # the pass table (a run store's may be large) is read only when a flag names runs
    passes = a.passes
    if passes is None or passes.empty:
        return set()
    known = set(passes["run_id"].astype(str))
    runs = set().union(*(_run_ids_in(e, known) for e in bad["evidence"])) if len(bad) else set()
    named = passes[passes["run_id"].astype(str).isin(runs)]
    return {_place(r) for _, r in named.iterrows()}


def quotable(a, cells: pd.DataFrame) -> pd.Series:
    """True for each cell the abstract may quote: not at an `unquotable_places` place, and no more
    than `failed_warn` of its requests failed (the cell's own counts)."""
    places = unquotable_places(a)
    at_bad = cells.apply(lambda r: _place(r) in places, axis=1) if places and len(cells) else False
    requests = pd.to_numeric(cells.get("n_requests"), errors="coerce") if "n_requests" in cells else None
    failed = pd.to_numeric(cells.get("n_failed"), errors="coerce") if "n_failed" in cells else None
    too_many = False
    if requests is not None and failed is not None:
        too_many = (failed / requests.where(requests > 0)).fillna(0) > a.options.thresholds.failed_warn
    return ~(pd.Series(at_bad, index=cells.index) | pd.Series(too_many, index=cells.index))


def seat_figure(cells, seat: str):
    """A seat's headline cell: the first of `SEAT_FIGURE` it has, over the most passes, at the
    highest concurrency among those (the cell most worth quoting); None without one. `cells` are
    those the abstract may quote (`quotable`)."""
    mine = cells[cells["seat"].astype(str) == seat]
    if mine.empty:
        return None
    for metric, statistic in SEAT_FIGURE:
        c = mine[(mine["metric"] == metric) & (mine["statistic"] == statistic) & mine["estimate"].map(fmt.finite)]
        if len(c):
            order = c.assign(
                _p=pd.to_numeric(c["n_passes"], errors="coerce").fillna(0),
                _c=pd.to_numeric(c["concurrency"], errors="coerce").fillna(-1),
            )
            return order.sort_values(["_p", "_c"], ascending=False, kind="stable").iloc[0]
    return None


def _seat_figure_words(a, row) -> str:
    """'tiny-gpt2-s1: aggregate throughput 251.0 tok/s at 2 streams (aiperf; chat, 32±4 → 16 tok),
    95% CI [232.9, 270.5] over 3 passes'."""
    unit = fmt.text(row.get("unit")) or fmt.unit_of(row["metric"])
    what = F.metric_label(str(row["metric"]), unit=False) + (
        "" if row["statistic"] == "mean" else f" {row['statistic']}"
    )
    where = f" at {fmt.streams(row['concurrency'])}" if fmt.finite(row.get("concurrency")) else ""
    how = "; ".join(x for x in (fmt.text(row.get("harness")), fmt.text(row.get("load"))) if x)
    n = int(row["n_passes"]) if fmt.finite(row.get("n_passes")) else 1
    rid = quote.row_id("cells", row)
    ci = quote.interval(a, rid)
    wi = quote.interval(a, rid, "within_low", "within_high")
    if ci:
        interval = f"{ci_level(a)} CI {ci} over {fmt.counted(n, 'pass', 'passes')}"
    elif wi:
        interval = f"one pass; {wi} over its requests, which leaves out run-to-run variation"
    else:
        interval = f"{fmt.counted(n, 'pass', 'passes')}, too few for an interval"
    return (
        f"{seat_label(a, str(row['seat']))}: {what} {quote.figure(a, rid, 'estimate')} {unit}{where}"
        f"{f' ({how})' if how else ''}, {interval}"
    )


def seat_figures(a) -> list:
    """With no incumbent, what each seat measured: its headline figure (`seat_figure`) with its
    interval and what the interval is, for `ABSTRACT_SEATS` seats, the most passes first."""
    cells = a.cells
    if cells is None or cells.empty:
        return []
    seats = order_seats(a, cells["seat"])
    cells = cells[quotable(a, cells)]
    rows = [r for r in (seat_figure(cells, s) for s in seats) if r is not None]
    # the best-measured seats first: an interval over passes before a single pass
    rows.sort(key=lambda r: -(float(r["n_passes"]) if fmt.finite(r.get("n_passes")) else 1.0))
    if not rows:
        return []
    shown = [_seat_figure_words(a, r) for r in rows[:ABSTRACT_SEATS]]
    more = len(rows) - len(shown)
    left = len(seats) - len(rows)
    tail = (f" Table 1 has {fmt.counted(more, 'more seat', 'more seats')}." if more else "") + (
        f" {fmt.counted(left, 'seat has', 'seats have')} no figure clear of failed requests and"
        " measurement traps to quote here (Sections 5 and 6)."
        if left
        else ""
    )
    tail += " Table A1 in the appendix and tables/cells.csv have every condition."
    return [
        para(
            "What each seat measured, at its best-covered condition clear of failed requests and measurement "
            "traps: {}.{}",
            "; ".join(shown),
            tail,
        )
    ]
