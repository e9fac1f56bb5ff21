"""The report's content as a view-model: paragraphs, tables and figure blocks per section.

Pure functions of an `analysis.pipeline.Analysis` (no I/O, no HTML beyond paragraphs).
Paragraphs are `markupsafe.Markup` built from our own literal templates with
``Markup(TEMPLATE).format(data...)``, which escapes every data argument: a seat id, model
name, message or note from a run file can never become markup. Tables are `Table`
objects holding display strings; `analysis.report.render` escapes every cell.

Sections follow the fleet paper: Abstract, 1 Seats and setup, 2 Measured results,
3 Comparison against the incumbent, 4 Exams, 5 Measurement traps found, 6 Faults and
open defects, 7 What these numbers will not carry, Appendix: provenance.
"""
from __future__ import annotations

import json
import os
import platform
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd
from markupsafe import Markup, escape

from analysis import __version__
from analysis import format as fmt
from analysis.columns import METRICS, STATISTICS, higher_is_better
from analysis.flags import codes, limitations_paragraphs as flag_paragraphs
from analysis.flags.text import NO_FLAGS
from analysis.report import figures as F
from analysis.thresholds import Thresholds
from analysis.stats._common import parse_values
from analysis.stats.multiplicity import describe as describe_multiplicity

__all__ = [
    "Table", "FigureBlock",
    "title_block", "abstract", "setup_text", "seats_table", "runs_table",
    "results_text", "results_table", "excluded_figures", "all_cells_table", "single_stream_figure",
    "throughput_figure", "per_stream_figure", "ttft_figure", "per_pass_figure", "history_figure",
    "comparison_text", "comparison_table", "all_comparisons_table", "ratio_figure",
    "exams_text", "exam_scores_table", "exam_deltas_table", "exam_figure",
    "traps", "faults", "limitations", "limitations_html", "limitations_paragraphs", "evidence_text",
    "provenance_text", "files_table", "refused_table", "skipped_table", "parameters_table",
    "thresholds_table", "packages_table", "appendix_text",
]

#: how many rows Table 1 may have before the full table moves to the appendix
MAX_BODY_ROWS = 80
#: a table longer than this says a column with one value once, in its note
LONG_TABLE_ROWS = 24
#: monospace characters of path and hash that fit on one line of the files table
FILES_LINE_CHARS = 92
#: how many rows the comparison table may have before every comparison moves to the appendix
MAX_COMPARISON_ROWS = 60
#: display order of statistics inside a cell group (the one order, analysis.columns.STATISTICS)
STAT_ORDER = {s: i for i, s in enumerate(STATISTICS)}
#: seats a figure shows before it falls back to the baseline plus the top seats
TOP_SEATS = 8


# --- view-model -------------------------------------------------------------------------

@dataclass
class Table:
    """A captioned table of display strings.

    kind: "table" (numbered Table N), "appendix" (Table A N) or "plain" (no number).
    group: a column whose value becomes a full-width row above its rows (saves width
    when seat ids are long). numeric: right-aligned columns. mono: monospace columns.
    """

    data: pd.DataFrame
    caption: str
    kind: str = "table"
    note: str | None = None
    group: str | None = None
    numeric: tuple[str, ...] = ()
    mono: tuple[str, ...] = ()
    small: bool = False
    key: str = ""
    widths: dict[str, str] = field(default_factory=dict)
    nowrap: tuple[str, ...] = ()
    group_label: str | None = None
    #: a long table of figures (one row per seat and cell): smaller type, tighter cells
    dense: bool = False

    def __len__(self) -> int:
        return len(self.data)


@dataclass
class FigureBlock:
    """A matplotlib figure and its caption (plain text), numbered when shown."""

    figure: Any
    caption: str
    key: str = ""
    wide: bool = True


# --- formatting -----------------------------------------------------------------------------



def _ci_pct(a) -> str:
    """The level of the report's intervals: '95%' (`format.level` of the alpha used)."""
    return fmt.level(a.options.thresholds.alpha)


def _p(template: str, *args, **kwargs) -> Markup:
    """A paragraph from our literal template; every argument is escaped."""
    bad = [x for x in (*args, *kwargs.values()) if isinstance(x, (int, float, np.number)) and not isinstance(x, bool)]
    if bad:
        raise TypeError(f"format numbers with analysis.format before they reach a paragraph: {bad!r}")
    return Markup("<p>" + template + "</p>").format(*args, **kwargs)


def _code(x) -> Markup:
    return Markup('<span class="id">{}</span>').format(fmt.text(x))


def _concat(parts: Iterable) -> Markup:
    out = Markup("")
    for p in parts:
        out += p if isinstance(p, Markup) else escape(p)
    return out


# --- flags access (rows as in spec/flags.md) --------------------------------------------------

#: most severe first (analysis.flags.codes.SEVERITIES); an unknown severity after them
SEVERITY_RANK = {s: i for i, s in enumerate(codes.SEVERITIES)}


def flag_seats(value) -> list[str]:
    """The `seats` of a flag row as a list (list, tuple, array, JSON text or ';'-joined)."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return [str(s) for s in value]
    if fmt.missing(value):
        return []
    text = str(value)
    if text.startswith("["):
        try:
            return [str(s) for s in json.loads(text)]
        except ValueError:
            pass
    return [s.strip() for s in text.replace(",", ";").split(";") if s.strip()]


def _flags(a) -> pd.DataFrame:
    f = getattr(a, "flags", None)
    if f is None or len(f) == 0:
        return pd.DataFrame(columns=["code", "severity", "seats", "workload", "concurrency",
                                     "metric", "statistic", "message", "evidence"])
    return f


def _flag_cell(row) -> dict:
    """workload/concurrency/metric/statistic of a flag row (flat columns or a `cell` dict)."""
    cell = row.get("cell") if hasattr(row, "get") else None
    out = {}
    for k in ("workload", "concurrency", "metric", "statistic"):
        v = row.get(k) if hasattr(row, "get") else None
        if fmt.missing(v) and isinstance(cell, dict):
            v = cell.get(k)
        out[k] = None if fmt.missing(v) else v
    return out


def _evidence(row) -> dict:
    ev = row.get("evidence") if hasattr(row, "get") else None
    if isinstance(ev, dict):
        return ev
    if isinstance(ev, str) and ev.startswith("{"):
        try:
            return json.loads(ev)
        except ValueError:
            return {}
    return {}


def sorted_flags(a) -> pd.DataFrame:
    """Flags, most severe first, then by the fleet paper's order of importance (`codes.priority_of`)."""
    f = _flags(a)
    if f.empty:
        return f
    key_sev = f["severity"].map(lambda s: SEVERITY_RANK.get(str(s), len(SEVERITY_RANK)))
    key_code = f["code"].map(lambda c: codes.priority_of(str(c)))
    return f.assign(_s=key_sev, _c=key_code).sort_values(["_s", "_c"], kind="stable").drop(columns=["_s", "_c"])


# --- seats and runs ------------------------------------------------------------------------------

def _seat_row(a, seat: str) -> dict:
    s = a.tables.seats
    r = s[s["seat"] == seat]
    return r.iloc[0].to_dict() if len(r) else {"seat": seat}


def _role(a, seat: str) -> str:
    return fmt.text(_seat_row(a, seat).get("role"), "candidate")


def _baseline_word(a) -> str:
    """What the report calls `Analysis.baseline`: 'incumbent' when that is its role, else 'baseline'."""
    return "incumbent" if _role(a, a.baseline) == "incumbent" else "baseline"


def _seat_label(a, seat: str) -> str:
    """A seat as tables name it: 'id (model, incumbent)'; the one seat label of the report."""
    r = _seat_row(a, seat)
    bits = [str(seat)]
    extra = []
    if not fmt.missing(r.get("model")):
        extra.append(str(r["model"]))
    role = fmt.text(r.get("role"))
    if seat == a.baseline:
        extra.append(_baseline_word(a))
    elif role and role != "candidate":
        extra.append(role)
    if extra:
        bits.append("(" + ", ".join(extra) + ")")
    return " ".join(bits)


def _placement(r: dict) -> str:
    nodes, gpn = r.get("nodes"), r.get("gpus_per_node")
    parts = []
    if fmt.finite(nodes) and fmt.finite(gpn):
        parts.append(f"{fmt.counted(nodes, 'node')} × {fmt.counted(gpn, 'GPU')}")
    elif fmt.finite(nodes):
        parts.append(fmt.counted(nodes, "node"))
    if fmt.finite(r.get("gpu_memory_bytes")):
        parts.append(f"{fmt.gb(r['gpu_memory_bytes'])} per GPU")
    if fmt.finite(r.get("tensor_parallel")):
        parts.append(f"TP {fmt.count(r['tensor_parallel'])}")
    if not fmt.missing(r.get("interconnect")):
        parts.append(str(r["interconnect"]))
    return ", ".join(parts) or "not stated"


def _date_range(dates: Iterable) -> str:
    ds = sorted({str(d) for d in dates if not fmt.missing(d)})
    if not ds:
        return "on an unstated date"
    if len(ds) == 1:
        return f"on {ds[0]}"
    return f"between {ds[0]} and {ds[-1]}"


def title_block(title: str, a) -> Markup:
    """The title and a one-line description of the data set (no build time: reproducible)."""
    t = a.tables
    n_files = len(t.runs)
    sub = (f"{fmt.counted(n_files, 'run')} of {fmt.counted(len(t.seats), 'seat')}, measured "
           f"{_date_range(t.runs['date'])}; seed {fmt.text(a.options.seed)}, "
           f"{fmt.count(a.options.n_boot)} bootstrap resamples ({a.options.ci_method}).")
    return Markup('<header class="title-block"><h1 class="title">{}</h1>'
                  '<p class="subtitle">{}</p><p class="generator">benchreport {}</p></header>'
                  ).format(title, sub, __version__)


_EMPTY = {"", "–", "not stated", "none", "unknown"}


def _drop_unstated(df: pd.DataFrame, cols: Sequence[str]) -> tuple[pd.DataFrame, str | None]:
    """Drop columns stated for no row, and say which: an empty column says nothing, a note does."""
    gone = [c for c in cols if c in df.columns and df[c].map(lambda v: str(v).strip() in _EMPTY).all()]
    if not gone:
        return df, None
    return df.drop(columns=gone), f"Not stated for any seat: {', '.join(c.lower() for c in gone)}."


def seats_table(a) -> Table:
    """Section 1: model, quantisation, engine and placement of every seat."""
    s = a.tables.seats
    comps = a.tables.components
    rows = []
    for _, r in s.iterrows():
        r = r.to_dict()
        seat = str(r["seat"])
        role = fmt.text(r.get("role"), "candidate")
        if seat == a.baseline and _baseline_word(a) == "baseline":
            role += " (baseline)"
        c = comps[comps["seat"] == seat] if len(comps) else comps
        lic = sorted({fmt.text(x) for x in c["license"]} - {""}) if len(c) else []
        rows.append({"Seat": seat, "Role": role, "Model": fmt.text(r.get("model")),
                     "Quantisation": fmt.text(r.get("quantisation"), "not stated"),
                     "Engine": fmt.text(r.get("engine"), "not stated"), "Placement": _placement(r),
                     "Checkpoint": fmt.gb(r.get("checkpoint_bytes")) if fmt.finite(r.get("checkpoint_bytes")) else "–",
                     "Licences": ", ".join(lic) or "–"})
    df = pd.DataFrame(rows, columns=["Seat", "Role", "Model", "Quantisation", "Engine", "Placement",
                                     "Checkpoint", "Licences"])
    df, note = _drop_unstated(df, ["Quantisation", "Engine", "Checkpoint", "Licences"])
    return Table(df, "Seats: model, quantisation, engine and placement, with the licences of their "
                     "components as declared in the run files.", kind="plain", small=True, key="seats",
                 mono=("Seat",), widths={"Seat": "24%"}, note=note)


def runs_table(a) -> Table:
    """Section 1: harness, probe, answer cap, passes, cells and request records per seat and day."""
    t = a.tables
    runs = t.runs
    meas, reqs = t.measurements, t.requests
    rows = []
    keys = ["seat", "date", "harness", "harness_version", "probe"]
    for k, g in runs.groupby(keys, dropna=False, sort=True):
        seat, date, harness, hver, probe = k
        ids = set(g["run_id"])
        m = meas[meas["run_id"].isin(ids)]
        rq = reqs[reqs["run_id"].isin(ids)]
        ncells = len(m.drop_duplicates(["workload", "concurrency", "metric", "statistic"])) if len(m) else 0
        if len(rq):
            per = rq.groupby(["workload", "concurrency"], dropna=False).size()
            spread = fmt.count(per.iloc[0]) if per.nunique() == 1 else fmt.span(per.min(), per.max())
            req = spread + (f" in {fmt.counted(len(per), 'cell')}" if len(per) > 1 else "")
        else:
            req = "none"
        cap = {fmt.text(x) for x in g["max_tokens"]} - {""}
        think = {fmt.text(x) for x in g["thinking"]} - {""}
        warm = {fmt.text(x) for x in g["warmup_excluded"]}
        rows.append({
            "seat": str(seat),
            "Date": fmt.text(date), "Harness": fmt.text(harness) + (f" {hver}" if not fmt.missing(hver) else ""),
            "Probe": fmt.text(probe, "not stated"),
            "Answer cap": ", ".join(sorted(cap)) or "not stated",
            "Thinking": ", ".join(sorted(think)) or "not stated",
            "Warm-up excluded": ", ".join(sorted(w or "unknown" for w in warm)),
            "Passes": fmt.count(g["pass"].nunique()),
            "Cells": fmt.count(ncells),
            "Requests per cell": req,
        })
    df = pd.DataFrame(rows, columns=["seat", "Date", "Harness", "Probe", "Answer cap", "Thinking",
                                     "Warm-up excluded", "Passes", "Cells", "Requests per cell"])
    df["seat"] = [_seat_label(a, s) for s in df["seat"]]
    df, note = _drop_unstated(df, ["Probe", "Answer cap", "Thinking", "Requests per cell"])
    return Table(df, "Runs per seat and day: harness, probe, answer cap, whether warm-up was "
                     "excluded, passes, measured cells and request records per cell.", kind="plain",
                 group="seat", small=True, key="runs", numeric=("Passes", "Cells"), note=note,
                 nowrap=("Date",))


def setup_text(a) -> Markup:
    """Section 1's prose: what was measured, how often, with what."""
    t = a.tables
    seats, runs = t.seats, t.runs
    models = sorted({fmt.text(m) for m in seats["model"]})
    harnesses = sorted({fmt.text(h) for h in runs["harness"]})
    probes = sorted({fmt.text(p) for p in runs["probe"]} - {""})
    passes = runs.groupby(["seat", "date"])["pass"].nunique()
    conc = sorted({int(c) for frame in (t.measurements, t.requests) if len(frame)
                   for c in pd.to_numeric(frame["concurrency"], errors="coerce").dropna()})
    base = a.baseline
    out = [_p("The data set holds {} of {} ({}: {}), measured {}. {} {} used: {}; {}: {}.",
              fmt.counted(len(runs), "run"), fmt.counted(len(seats), "seat"),
              fmt.counted(len(models), "model"), fmt.join_words(models), _date_range(runs["date"]),
              fmt.counted(len(harnesses), "harness", "harnesses"),
              "was" if len(harnesses) == 1 else "were", fmt.join_words(harnesses),
              fmt.counted(len(probes), "probe"), fmt.join_words(probes) or "none stated")]
    if len(passes):
        out.append(_p("Passes per seat and day range from {} to {}. Concurrency levels measured: {}. "
                      "{} of {} runs record per-request data.",
                      fmt.count(passes.min()), fmt.count(passes.max()),
                      ", ".join(fmt.concurrency(c) for c in conc) or "none",
                      fmt.count(t.requests["run_id"].nunique() if len(t.requests) else 0), fmt.count(len(runs))))
    if base:
        out.append(_p("Every candidate is compared against the {} {}.", _baseline_word(a), _code(base)))
    else:
        out.append(_p("No seat is marked as the incumbent and no baseline was given, so no "
                      "comparison against an incumbent is made."))
    return _concat(out)


# --- measured results ---------------------------------------------------------------------------

def excluded_figures(a) -> list[dict]:
    """Figures a flag excludes from results (trap.prefix_cache), from the flags' evidence.

    Each: seat, workload, concurrency, metric, statistic, value, run_id and the flag's
    message. The statistics layer may already have left them out of the cells; either
    way `_result_cells` makes sure no cell in Table 1 carries one.
    """
    f = _flags(a)
    out = []
    if f.empty:
        return out
    for _, fr in f[f["code"].astype(str) == "trap.prefix_cache"].iterrows():
        ev = _evidence(fr)
        seats = flag_seats(fr.get("seats"))
        entries = ev.get("excluded") or []
        if not entries and fmt.finite(ev.get("value")):
            entries = [{**_flag_cell(fr), "value": ev.get("value")}]
        for e in entries:
            if not isinstance(e, dict) or not fmt.finite(e.get("value")):
                continue
            out.append({"seat": e.get("seat") or (seats[0] if seats else None),
                        "workload": e.get("workload"), "concurrency": e.get("concurrency"),
                        "metric": e.get("metric"), "statistic": e.get("statistic"),
                        "value": float(e["value"]), "run_id": e.get("run_id"),
                        "message": fmt.text(fr.get("message"))})
    return out


def _close(x: float, v: float) -> bool:
    return abs(float(x) - v) <= 1e-9 * max(1.0, abs(v))


def _result_cells(a) -> pd.DataFrame:
    """The cells Table 1 and the figures show: without any cell holding an excluded figure."""
    cells = a.cells
    if cells is None or cells.empty:
        return cells
    drop = []
    for e in excluded_figures(a):
        m = cells["seat"].astype(str) == str(e["seat"])
        if e.get("metric") is not None:
            m &= cells["metric"].astype(str) == str(e["metric"])
        if e.get("workload") is not None:
            m &= cells["workload"].astype(str) == str(e["workload"])
        for idx, r in cells[m].iterrows():
            vals = parse_values(r.get("values")) if "values" in cells.columns else []
            if any(_close(x, e["value"]) for x in vals) or (fmt.finite(r.get("estimate")) and _close(r["estimate"], e["value"])):
                drop.append(idx)
    return cells.drop(index=sorted(set(drop))) if drop else cells


def _method_labels(a) -> dict:
    """(workload, harness, probe) -> the workload as tables show it: with the harness and probe
    where one workload was measured by several of them (they are different cells)."""
    cells = a.cells
    if cells is None or cells.empty or "harness" not in cells.columns:
        return {}
    keys = list(zip(_workload_names(cells), cells["harness"].map(fmt.text), cells["probe"].map(fmt.text)))
    methods: dict[str, set] = {}
    for w, h, p in keys:
        methods.setdefault(w, set()).add((h, p))
    return {(w, h, p): (f"{w} ({', '.join(x for x in (h, p) if x)})" if len(methods[w]) > 1 else w)
            for w, h, p in set(keys)}


def _workload_names(df: pd.DataFrame) -> list[str]:
    """Each row's workload with its measurement condition (`format.workload_label`: the
    `condition` column where the frame has one, never a split of the workload string)."""
    return [fmt.workload_label(w, c) for w, c in zip(df["workload"], _column(df, "condition"))]


def _workloads(a, df: pd.DataFrame) -> list[str]:
    """The display workload of each row of a cells or comparisons frame (`_method_labels`)."""
    labels = _method_labels(a)
    h = df["harness"].map(fmt.text) if "harness" in df.columns else [""] * len(df)
    p = df["probe"].map(fmt.text) if "probe" in df.columns else [""] * len(df)
    return [labels.get((w, hh, pp), w) for w, hh, pp in zip(_workload_names(df), h, p)]


def _as_printed(reported, recomputed, estimate) -> str:
    """The estimate as the harness printed it, with our recomputation beside it where they differ."""
    text = fmt.num(estimate)
    if fmt.finite(reported) and fmt.finite(recomputed) and \
            abs(reported - recomputed) > fmt.printed_rounding(reported) + 1e-12:
        return f"{fmt.num(reported)} (recomputed {fmt.num(recomputed)})"
    return text


def _within_ci(lo, hi, style=None) -> str:
    ci = fmt.ci(lo, hi, style or fmt.num)
    return f"within one run {ci}" if ci else ""


def _order_seats(a, seats: Iterable[str]) -> list[str]:
    seats = sorted({str(s) for s in seats})
    b = a.baseline
    if b in seats:
        seats.remove(b)
        seats.insert(0, b)
    return seats


def _stat_rank(st) -> int:
    return STAT_ORDER.get(str(st), 99)


def _column(df: pd.DataFrame, name: str) -> list:
    return df[name].tolist() if name in df.columns else [None] * len(df)


def _cell_display(a, cells: pd.DataFrame) -> pd.DataFrame:
    """Cells sorted for display (seat, metric, workload, concurrency, statistic), as strings.

    The columns of the long table, plus ``_k``: one id per seat and cell (seat, workload,
    concurrency, metric; date where the data have one), for `_spread`. Formatting goes
    column by column over plain lists: fleet scale has thousands of cells, and pandas'
    per-row access (iterrows) would cost seconds.
    """
    order = {s: i for i, s in enumerate(_order_seats(a, cells["seat"]))}
    metric_order = {m: i for i, m in enumerate(METRICS)}
    seat = cells["seat"].astype(str)
    c = cells.assign(_seat=seat, _o=seat.map(order),
                     _m=cells["metric"].map(lambda m: metric_order.get(m, 99)),
                     _c=pd.to_numeric(cells["concurrency"], errors="coerce").fillna(-1),
                     _st=cells["statistic"].map(_stat_rank),
                     _w=_workloads(a, cells),
                     _d=cells["date"].map(fmt.text) if "date" in cells.columns else "")
    c = c.sort_values(["_o", "_m", "_w", "_c", "_d", "_st"], kind="stable")
    vals = [parse_values(v) for v in _column(c, "values")]
    n_passes = [int(p) if fmt.finite(p) else len(v) for p, v in zip(_column(c, "n_passes"), vals)]
    estimate = [_as_printed(r, q, e) if p == 1 else fmt.num(e) for r, q, e, p in
                zip(_column(c, "reported"), _column(c, "recomputed"), _column(c, "estimate"), n_passes)]
    per_pass = [", ".join(fmt.num(x) for x in v) if 1 < len(v) <= 4 else "" for v in vals]
    for i, (p, v, med) in enumerate(zip(n_passes, vals, _column(c, "median"))):
        if p == 2 and len(v) == 2:
            # two observations give no reliable mean: both values, as the fleet paper does
            estimate[i], per_pass[i] = f"{fmt.num(v[0])}, {fmt.num(v[1])}", "both shown"
        elif 3 <= p <= 4 and len(v) == p and fmt.finite(med):
            per_pass[i] += f"; median {fmt.num(med)}, range {fmt.num(min(v))}–{fmt.num(max(v))}"
    ci = [fmt.ci(lo, hi) or _within_ci(wl, wh) or _no_ci(m)
          for lo, hi, wl, wh, m in zip(_column(c, "ci_low"), _column(c, "ci_high"), _column(c, "within_low"),
                                       _column(c, "within_high"), _column(c, "ci_method"))]
    labels = {s: _seat_label(a, s) for s in c["_seat"].unique()}
    metric_labels = {m: F.metric_label(str(m), unit=False) for m in c["metric"].unique()}
    return pd.DataFrame({
        "seat": c["_seat"].map(labels).tolist(),
        "Metric": c["metric"].map(metric_labels).tolist(),
        "Workload": c["_w"].tolist(),
        "Conc.": [fmt.concurrency(x) for x in _column(c, "concurrency")],
        "Stat.": [fmt.text(x) for x in _column(c, "statistic")],
        "Passes": [str(p) for p in n_passes],
        "n": [fmt.count(x) for x in _column(c, "n_obs")],
        "Estimate": estimate,
        "Unit": [fmt.text(u) or _unit(m) for u, m in zip(_column(c, "unit"), _column(c, "metric"))],
        "CI": ci,
        "Per pass, in order": per_pass,
        "_metric": c["metric"].astype(str).tolist(),
        "_k": c.groupby(["_o", "_m", "_w", "_c", "_d", "_seat"], sort=False, dropna=False).ngroup().tolist(),
    })


def _cells_frame(a, cells: pd.DataFrame, ci_pct: str) -> pd.DataFrame:
    """The long table: one row per seat, cell and statistic (the layout for small data)."""
    d = _cell_display(a, cells).rename(columns={"CI": f"{ci_pct} CI"})
    return d[["seat", "Metric", "Workload", "Conc.", "Stat.", "Passes", "n", "Estimate", "Unit",
              f"{ci_pct} CI", "Per pass, in order"]]


def _stat_heading(st) -> str:
    return {"mean": "Mean", "min": "Min", "max": "Max"}.get(str(st), str(st))


def _spread(d: pd.DataFrame, value: str) -> tuple[pd.DataFrame, pd.DataFrame]:
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
    stats = sorted(wide.columns, key=lambda st: (_stat_rank(st), str(st)))
    wide = wide.reindex(index=head["_k"].to_numpy(), columns=stats).fillna("")
    wide.columns = [_stat_heading(st) for st in stats]
    return head, wide.reset_index(drop=True)


#: metric names in a wide table, where every column counts (the note spells out the short ones)
WIDE_METRIC_LABELS = {"output_tok_s": "aggregate throughput", "decode_tok_s_per_stream": "per-stream decode",
                      "prefill_tok_s": "prefill", "ttft_ms": "TTFT", "itl_ms": "ITL",
                      "e2e_latency_ms": "E2E latency", "request_rate": "request rate",
                      "engine_init_s": "engine start-up"}
_ABBREVIATIONS = {"TTFT": "time to first token", "ITL": "inter-token latency", "E2E": "end-to-end"}


def _abbreviations(labels: Iterable[str]) -> str:
    """'TTFT: time to first token; ...' for the short names among `labels`."""
    used = {w for label in set(labels) for w in str(label).split() if w in _ABBREVIATIONS}
    return ("; ".join(f"{k}: {v}" for k, v in _ABBREVIATIONS.items() if k in used) + ".") if used else ""


def _wide_metric(metric: str, unit: str) -> str:
    """'TTFT (ms)': a metric and its unit in one column."""
    name = WIDE_METRIC_LABELS.get(metric) or F.metric_label(metric, unit=False)
    return f"{name} ({unit})" if unit else name


def _constant_columns(df: pd.DataFrame, cols: Sequence[str]) -> tuple[pd.DataFrame, str]:
    """Move the columns of `cols` that hold one value on every row (of several) to a note."""
    if len(df) < 2:
        return df, ""
    same = [c for c in cols if c in df.columns and df[c].nunique(dropna=False) == 1]
    if not same:
        return df, ""
    said = ", ".join(f"{c.rstrip('.').lower()} {df[c].iloc[0]}" for c in same)
    return df.drop(columns=same), f"Every row: {said}."


def _drop_empty(df: pd.DataFrame, cols: Iterable[str]) -> pd.DataFrame:
    """Leave out the columns of `cols` that no row fills."""
    gone = [c for c in cols if c in df.columns and not (df[c].astype(str).str.strip() != "").any()]
    return df.drop(columns=gone) if gone else df


def _cells_wide(a, cells: pd.DataFrame, ci_pct: str) -> pd.DataFrame:
    """The wide table: one row per seat and cell (workload, concurrency, metric).

    The mean (or, where a cell has none, its first statistic, named in a Stat. column)
    comes with its passes, n, CI or why none, and per-pass values (3 or 4 passes); the
    other statistics (p50 ... p99, min, max) with their estimates. Columns no row fills
    are left out.
    """
    ci = f"{ci_pct} CI"
    head, other = _spread(_cell_display(a, cells), "Estimate")
    all_mean = bool((head["Stat."] == "mean").all())
    out = pd.DataFrame({
        "seat": head["seat"], "Metric": [_wide_metric(m, u) for m, u in zip(head["_metric"], head["Unit"])],
        "Workload": head["Workload"], "Conc.": head["Conc."], "Passes": head["Passes"], "n": head["n"],
        "Stat.": head["Stat."], "Mean" if all_mean else "Estimate": head["Estimate"], ci: head["CI"],
    })
    if all_mean:
        out = out.drop(columns="Stat.")
    out = pd.concat([out, other.drop(columns=[c for c in other.columns if c in out.columns])], axis=1)
    out["Per pass, in order"] = head["Per pass, in order"]
    return _drop_empty(out, [*other.columns, "Per pass, in order"])


_SHORT_REASONS = (("two passes, both values reported", "2 passes"), ("single pass", "1 pass"),
                  ("baseline 1 pass; candidate 1 pass", "1 pass each"))


def _no_ci(method) -> str:
    """Why a cell or comparison has no CI, from its ci_method, shortened for a table cell."""
    m = fmt.text(method) or "none"
    for long, short in _SHORT_REASONS:
        m = m.replace(long, short)
    return m


def _cell_rows_per_seat(cells: pd.DataFrame) -> pd.Series:
    """Rows of the wide table per seat: its cells (workload, concurrency, metric, date)."""
    keys = [k for k in ("seat", "workload", "concurrency", "metric", "date") if k in cells.columns]
    return cells.assign(seat=cells["seat"].astype(str)).drop_duplicates(keys).groupby("seat").size()


def _cells_cut(cells: pd.DataFrame, max_rows: int) -> bool:
    """Whether Table 1 shows only some seats (and Table A1 all): not even one row per cell fits."""
    return len(cells) > max_rows and int(_cell_rows_per_seat(cells).sum()) > max_rows


_CELLS_NOTE = ("Conc.: concurrent streams; n: observations behind the figure where the run states "
               "them. With several passes the estimate is the geometric mean of the pass values and the "
               "CI a log-scale t-interval over passes (run-to-run variation included); a single pass has "
               "no such CI, and an interval over its requests is marked 'within one run'. A harness's "
               "figure is shown as printed, with our recomputation from its requests beside it where they "
               "differ.")
_TWO_PASSES = ("Cells with two passes show both values, not a mean; cells with 3 or 4 passes list every "
               "pass in order.")


def _wide_note(pct: str, columns: Sequence[str]) -> str:
    """What a wide table of cells holds, for its note."""
    stats = [c for c in columns if c in {_stat_heading(s) for s in STAT_ORDER} and c != "Mean"]
    bits = [f"One row per seat and cell. The mean is given with its {pct} CI"
            + (" (a cell without a mean: its first statistic, named under Stat.)" if "Stat." in columns else "")
            + (f"; {fmt.join_words(stats)}: the estimates of those statistics" if stats else "") + ".",
            "tables/cells.csv beside this report has every statistic with its CI and per-pass values."]
    return " ".join(bits)


def results_table(a, *, max_rows: int = MAX_BODY_ROWS, top_n: int = TOP_SEATS) -> Table | None:
    """Table 1: every cell's estimate with its CI (or why none) and n; per-pass values if n ≤ 4.

    Figures a flag excludes (a prefix-cache hit) are not in it. One row per statistic while
    that fits in `max_rows`; else one row per cell with the statistics as columns; at fleet
    scale (not even that fits) the baseline and the top seats, as many as fit in
    `max_rows` (at least two, at most `top_n`), and Table A1 has every seat.
    """
    cells = _result_cells(a)
    if cells is None or cells.empty:
        return None
    pct = _ci_pct(a)
    note_bits = []
    shown = cells
    wide = len(cells) > max_rows
    if wide and _cells_cut(cells, max_rows):
        per_seat = int(_cell_rows_per_seat(cells).max())
        n_seats = max(2, min(top_n, max_rows // max(per_seat, 1)))
        keep, total = F.pick_seats(cells, "output_tok_s", baseline=a.baseline, top_n=n_seats)
        if not keep:
            keep = _order_seats(a, cells["seat"])[:n_seats]
            total = cells["seat"].nunique()
        shown = cells[cells["seat"].astype(str).isin(keep)]
        note_bits.append(f"This table shows {fmt.count(len(keep))} of {fmt.count(total)} seats (the baseline and the "
                         "highest aggregate throughput); Table A1 in the appendix lists every seat "
                         "and cell.")
    ex = excluded_figures(a)
    if ex:
        note_bits.append(f"{fmt.counted(len(ex), 'figure')} flagged as a prefix-cache hit "
                         f"{'is' if len(ex) == 1 else 'are'} excluded from this table (Section 5).")
    if wide:
        return _cells_wide_table(_cells_wide(a, shown, pct), "table", "results",
                                 f"Measured results: estimates per seat and cell, the mean with its {pct} "
                                 "confidence interval, number of passes and observations.", note_bits, pct)
    note_bits += [_CELLS_NOTE, _TWO_PASSES]
    df = _cells_frame(a, shown, pct)
    return Table(df, f"Measured results: estimate per seat and cell with its {pct} confidence "
                     "interval, number of passes and observations.", kind="table", group="seat",
                 numeric=("Conc.", "Passes", "n", "Estimate"), note=" ".join(note_bits), small=True,
                 key="results", nowrap=("Metric", "Workload", "Estimate", "Unit", "Stat.", "Per pass, in order"))


def _cells_wide_table(df: pd.DataFrame, kind: str, key: str, caption: str, lead: Sequence[str],
                      pct: str) -> Table:
    """A wide table of cells (`_cells_wide`) with its note; a column with one value moves to the note."""
    passes = []
    if (df["Passes"] == "2").any():
        passes.append("Cells with two passes show both values, not a mean.")
    if "Per pass, in order" in df.columns:
        passes.append("Cells with 3 or 4 passes list every pass in order.")
    df, same = _constant_columns(df, ["Workload", "Passes"])
    stats = [c for c in df.columns if c in {_stat_heading(s) for s in STAT_ORDER} or c == "Estimate"]
    bits = [*lead, same, _wide_note(pct, list(df.columns)), _abbreviations(df["Metric"]), _CELLS_NOTE, *passes]
    note = " ".join(b for b in bits if b)
    return Table(df, caption, kind=kind, group="seat", numeric=("Conc.", "Passes", "n", *stats),
                 note=note, small=True, dense=True, key=key,
                 nowrap=("Metric", "Workload", "Stat.", "Per pass, in order"))


def all_cells_table(a, *, max_rows: int = MAX_BODY_ROWS) -> Table | None:
    """Table A1 (fleet scale only): one row per seat and cell, when Table 1 had to be cut.

    The statistics are columns (`_cells_wide`); the long table, one row per statistic with
    every CI, is tables/cells.csv beside the report.
    """
    cells = _result_cells(a)
    if cells is None or not _cells_cut(cells, max_rows):
        return None
    pct = _ci_pct(a)
    return _cells_wide_table(
        _cells_wide(a, cells, pct), "appendix", "all-cells",
        f"Every seat and cell: the mean with its {pct} CI, number of passes and observations, and the "
        "percentiles (Table 1 shows the baseline and the top seats).", [], pct)


def results_text(a) -> Markup:
    """Section 2's lead: what Table 1 holds and how many cells rest on one pass."""
    cells = _result_cells(a)
    if cells is None or cells.empty:
        return _p("No measurement could be turned into a cell estimate.")
    n = len(cells)
    np_ = pd.to_numeric(cells.get("n_passes"), errors="coerce")
    one = int((np_ == 1).sum())
    two = int((np_ == 2).sum())
    with_ci = int((cells["ci_low"].map(fmt.finite) & cells["ci_high"].map(fmt.finite)).sum())
    carry = "carries" if with_ci == 1 else "carry"
    if n <= MAX_BODY_ROWS:
        out = [_p("Table 1 lists {} estimates. {} rest on a single pass, {} on two passes; {} "
                  "{} a confidence interval.", fmt.count(n), fmt.count(one), fmt.count(two), fmt.count(with_ci),
                  carry)]
    else:
        where = ("Table 1 lists them" if not _cells_cut(cells, MAX_BODY_ROWS) else
                 "Table 1 lists them for the baseline and the top seats, Table A1 in the appendix for "
                 "every seat")
        out = [_p("The analysis gives {} estimates in {} (a seat's workload, concurrency and metric); {}, "
                  "one row per cell with its statistics side by side. {} rest on a single pass, {} on two "
                  "passes; {} {} a confidence interval.", fmt.count(n),
                  fmt.counted(_cell_rows_per_seat(cells).sum(), "cell"), where, fmt.count(one), fmt.count(two),
                  fmt.count(with_ci), carry)]
    ex = excluded_figures(a)
    if ex:
        out.append(_p("{} excluded from the results: a prefix-cache hit is not a prefill "
                      "measurement (Section 5).", fmt.counted(len(ex), "figure") + (" is" if len(ex) == 1 else " are")))
    return _concat(out)


def _fig(fig, caption: str, key: str) -> FigureBlock | None:
    return None if fig is None else FigureBlock(fig, caption, key=key)


def _omitted_note(cells, metric: str, a, top_n: int, statistics) -> str:
    d, other_day, over = F.select_series(cells, metric, statistics=statistics, baseline=a.baseline, top_n=top_n)
    if d.empty:
        return ""
    bits = []
    if over > 0:
        bits.append(f"the figure shows {fmt.counted(d.groupby(['seat', 'workload']).ngroups, 'series', 'series')} "
                    f"(the baseline and the best at the highest concurrency); {fmt.count(over)} more are in the "
                    "tables")
    if other_day > 0:
        bits.append(f"{fmt.counted(other_day, 'series', 'series')} measured at a single concurrency level on "
                    "days without a curve to compare with are not drawn")
    return (" " + "; ".join(bits)[0].upper() + "; ".join(bits)[1:] + ".") if bits else ""


def throughput_figure(a, *, top_n: int = TOP_SEATS) -> FigureBlock | None:
    """Aggregate throughput against concurrency, per seat, with CI bands."""
    cells = _result_cells(a)
    stats = ("mean", "p50")
    fig = F.throughput_vs_concurrency(cells, baseline=a.baseline, top_n=top_n)
    return _fig(fig, "Aggregate throughput (all streams together) against concurrency, per seat. "
                     "Filled markers with bars and bands carry a confidence interval; hollow markers "
                     "have none (too few passes); small dots are the values of individual passes."
                + _omitted_note(cells, "output_tok_s", a, top_n, stats), "throughput")


def per_stream_figure(a, *, top_n: int = TOP_SEATS) -> FigureBlock | None:
    """Per-stream decode rate against concurrency."""
    cells = _result_cells(a)
    stats = ("mean", "p50")
    fig = F.metric_vs_concurrency(cells, "decode_tok_s_per_stream", statistics=stats,
                                  baseline=a.baseline, top_n=top_n)
    return _fig(fig, "Per-stream decode rate against concurrency (markers as in Figure 1)."
                + _omitted_note(cells, "decode_tok_s_per_stream", a, top_n, stats), "per-stream")


def single_stream_figure(a, *, top_n: int = 30, min_rows: int = 3) -> FigureBlock | None:
    """Per-stream decode at one stream, every seat and workload (the field note's table)."""
    cells = _result_cells(a)
    if cells is None or cells.empty:
        return None
    conc = pd.to_numeric(cells["concurrency"], errors="coerce")
    d = cells[(cells["metric"] == "decode_tok_s_per_stream") & (conc == 1)]
    n = d.groupby(["seat", "workload"]).ngroups if len(d) else 0
    if n < min_rows:
        return None
    fig = F.cell_dotplot(cells, "decode_tok_s_per_stream", concurrency=1, baseline=a.baseline, top_n=top_n)
    more = f" The top {fmt.count(top_n)} of {fmt.count(n)} are shown; Table 1 has all." if n > top_n else ""
    return _fig(fig, "Single-stream decode rate of every seat and workload, best first. A filled dot "
                     "with a bar has a confidence interval, a hollow dot has none; a grey bar is the "
                     "min-max range where the run reported one. Workloads are different probes: "
                     "compare rows only within one workload." + more, "single-stream")


def ttft_figure(a, *, top_n: int = TOP_SEATS) -> FigureBlock | None:
    """Time to first token against concurrency."""
    cells = _result_cells(a)
    fig = F.ttft_vs_concurrency(cells, baseline=a.baseline, top_n=top_n)
    if fig is None:
        return None
    stats = sorted(set(cells.loc[cells["metric"] == "ttft_ms", "statistic"].astype(str)))
    extra = (" Seats report TTFT in different forms (" + ", ".join(stats) + "); the legend names "
             "each, and they are not directly comparable.") if len(stats) > 1 else ""
    return _fig(fig, "Time to first token against concurrency (lower is better)." + extra
                + _omitted_note(cells, "ttft_ms", a, top_n, ("p50", "mean", "p90", "p95", "p99")), "ttft")


def per_pass_figure(a, *, max_panels: int = 9) -> FigureBlock | None:
    """Per-pass values in pass order for every cell with two or more passes."""
    cells = _result_cells(a)
    fig = F.per_pass_values(cells, max_panels=max_panels, baseline=a.baseline)
    n = 0
    if cells is not None and "values" in cells.columns:
        n = int(cells["values"].map(lambda v: len(parse_values(v)) >= 2).sum())
    more = (f" The {fmt.count(max_panels)} cells with the largest spread of {fmt.count(n)} are shown."
            if n > max_panels else "")
    return _fig(fig, "Values of each pass in the order measured, for every cell measured more than "
                     "once: a rise from pass to pass is warm-up drift, a swing is instability. Each "
                     "panel has its own scale; max/min is the ratio of the extreme passes." + more,
                "per-pass")


def history_figure(a) -> FigureBlock | None:
    """A seat's figures across dates, when a seat was measured on more than one day."""
    fig = F.seat_history(a.tables.measurements)
    return _fig(fig, "History: seats measured on more than one date, the median of each day's "
                     "passes (line) and the individual passes (dots).", "history")


# --- comparisons --------------------------------------------------------------------------------

METRIC_PRIORITY = ["output_tok_s", "decode_tok_s_per_stream", "prefill_tok_s", "ttft_ms",
                   "e2e_latency_ms", "itl_ms", "request_rate", "engine_init_s"]


def _baseline_comparisons(a) -> pd.DataFrame:
    c = a.comparisons
    if c is None or c.empty or not a.baseline:
        return c.iloc[0:0] if c is not None else pd.DataFrame()
    return c[c["baseline"].astype(str) == str(a.baseline)]


#: up to this many candidates, the headline gives each one's primary comparison in full
HEADLINE_PAIRS = 3


def _primary_rows(a) -> pd.DataFrame:
    """Each candidate's primary comparison against the baseline (the declared headline cells)."""
    c = _baseline_comparisons(a)
    if c is None or c.empty or "primary" not in c.columns:
        return c.iloc[0:0] if c is not None else pd.DataFrame()
    c = c[c["primary"].astype(bool) & (c["kind"].astype(str) == "baseline")]
    return c.sort_values("candidate", kind="stable")


def _headline_row(a):
    """The primary comparison the abstract names: the first with a verdict of better or worse, else the first."""
    c = _primary_rows(a)
    if c is None or c.empty:
        return None
    decided = c[c["verdict"].astype(str).isin(["better", "worse"])]
    return (decided if len(decided) else c).iloc[0]


def _cell_values(a, seat: str, row) -> list[float]:
    cells = a.cells
    m = (cells["seat"].astype(str) == seat) & (cells["metric"] == row["metric"]) & \
        (cells["workload"].astype(str) == str(row["workload"]))
    for k in ("statistic", "harness", "probe"):
        if k in cells.columns and k in row:
            m &= cells[k].map(fmt.text) == fmt.text(row.get(k))
    cc = pd.to_numeric(cells["concurrency"], errors="coerce")
    if fmt.finite(row.get("concurrency")):
        m &= cc == float(row["concurrency"])
    else:
        m &= cc.isna()
    sel = cells[m]
    return parse_values(sel["values"].iloc[0]) if len(sel) and "values" in sel.columns else []


def _side(a, seat: str, estimate, row) -> str:
    """A seat's figure in a sentence: '763.9 tok/s in one pass', '896.9 and 982.5 tok/s in two passes'."""
    vals = _cell_values(a, seat, row)
    unit = _unit(row["metric"])
    if 1 < len(vals) <= 4:
        return f"{fmt.join_words([fmt.num(v) for v in vals])} {unit} in {fmt.spelled(len(vals))} passes"
    if len(vals) == 1:
        return f"{fmt.num(estimate)} {unit} in one pass"
    return f"{fmt.num(estimate)} {unit}"


def _cell_words(row) -> str:
    c = row.get("concurrency")
    at = f" at {fmt.counted(c, 'concurrent stream')}" if fmt.finite(c) else ""
    stat = fmt.text(row.get("statistic"))
    st = f" {stat}" if stat and stat != "mean" else ""
    return f"{F.metric_label(str(row['metric']), unit=False)}{st} ({fmt.text(row['workload'])}){at}"


def _unit(metric) -> str:
    return METRICS.get(str(metric), ("",))[0]


def verdict_rule(a) -> str:
    """The rule a verdict follows, in words (analysis.stats.compare.verdict)."""
    th = a.options.thresholds
    c = a.comparisons
    m = int(c["p_value"].notna().sum()) if c is not None and len(c) and "p_value" in c.columns else 0
    family = (f"across the {m} comparisons with a between-pass interval" if m else
              "across the comparisons with a between-pass interval (none here has passes on both sides)")
    how = {"holm": f"after Holm's correction {family}",
           "bh": f"after the Benjamini-Hochberg correction {family}",
           "none": "at the stated level, without a correction for multiple comparisons"}[a.options.multiplicity]
    return (f"'better' or 'worse' needs passes on both sides, the {_ci_pct(a)} CI of the ratio wholly outside "
            f"1 ± {fmt.pct(th.noise)}, and the change still significant {how}; 'within noise' means the CI lies "
            f"inside 1 ± {fmt.pct(th.noise)}; anything else is 'insufficient data'")


def _primary_words(a) -> str:
    p = a.options.primary
    bits = [F.metric_label(p.metric, unit=False) + ("" if p.statistic == "mean" else f" {p.statistic}")]
    if p.workload:
        bits.append(f"({p.workload})")
    bits.append(f"at {fmt.streams(p.concurrency)}" if p.concurrency else "at the highest concurrency both seats share")
    return " ".join(bits) + "; else the first metric both seats share"


def _one_headline(a, row, lead: str, who: str) -> Markup:
    base, cand = str(row["baseline"]), str(row["candidate"])
    ci = fmt.ci(row.get("ci_low"), row.get("ci_high"), fmt.ratio3)
    method = fmt.text(row.get("ci_method"))
    verdict = fmt.text(row.get("verdict")).replace("_", " ")
    reason = fmt.text(row.get("verdict_reason"))
    if ci:
        ci_words = f"{_ci_pct(a)} CI {ci}, {method}" if method else f"{_ci_pct(a)} CI {ci}"
    else:
        ci_words = "no CI for the seats: " + (method.replace("none: ", "") if method else "too few passes")
        wi = _within_ci(row.get("within_low"), row.get("within_high"), fmt.ratio3)
        if wi:
            ci_words += f" ({wi}, which leaves out run-to-run variation)"
    return _p("{}on {}, {} measured {} against {} for {} {}: a ratio of {} ({}); verdict: {}{}.",
              f"{lead}: " if lead else "", _cell_words(row), _code(cand), _side(a, cand, row.get("candidate_estimate"), row),
              _side(a, base, row.get("baseline_estimate"), row), who, _code(base), fmt.ratio3(row.get("ratio")),
              ci_words, verdict or "none", f" ({reason})" if reason and verdict != "better" and verdict != "worse" else "")


def headline_sentence(a, lead: str = "Headline") -> Markup:
    """The headline: each candidate's declared primary cell against the incumbent, never the best of many."""
    base = a.baseline
    if not base:
        return _p("No seat is marked as the incumbent and no baseline was given, so this report "
                  "makes no comparison against an incumbent and supports no claim that any seat is "
                  "the best.")
    who = f"the {_baseline_word(a)}"
    prim = _primary_rows(a)
    if prim is None or prim.empty:
        return _p("{} {} was measured, but no candidate shares a cell with it (same harness, probe, workload, "
                  "concurrency, metric and statistic), so no comparison against it can be made.",
                  who[0].upper() + who[1:], _code(base))
    if len(prim) <= HEADLINE_PAIRS:
        return _concat([_one_headline(a, r, lead if i == 0 else "", who)
                        for i, (_, r) in enumerate(prim.iterrows())])
    v = prim["verdict"].astype(str)
    better = sorted(prim.loc[v == "better", "candidate"].astype(str))
    worse = sorted(prim.loc[v == "worse", "candidate"].astype(str))
    rest = len(prim) - len(better) - len(worse)
    if not better and not worse:
        return _p("{}: on each candidate's primary cell ({}), none of the {} candidates is shown to be better "
                  "or worse than {} {}; {} no verdict the data can carry.", lead, _primary_words(a),
                  fmt.count(len(prim)), who, _code(base), "all have" if rest == len(prim) else f"{fmt.count(rest)} have")
    parts = []
    if better:
        parts.append(f"{fmt.count(len(better))} better ({', '.join(better)})")
    if worse:
        parts.append(f"{fmt.count(len(worse))} worse ({', '.join(worse)})")
    if rest:
        parts.append(f"{fmt.count(rest)} without a verdict")
    return _p("{}: on each candidate's primary cell ({}), of {} candidates against {} {}: {}.", lead,
              _primary_words(a), fmt.count(len(prim)), who, _code(base), "; ".join(parts))


def _verdict_counts(a) -> dict:
    c = _baseline_comparisons(a)
    if c is None or c.empty:
        return {}
    return c["verdict"].astype(str).value_counts().to_dict()


def strongest_caveat(a):
    """The flag the abstract names: the most severe, preferring the headline's seats."""
    f = sorted_flags(a)
    if f.empty:
        return None
    row = _headline_row(a)
    if row is not None:
        seats = {str(row["candidate"]), str(row["baseline"])}
        rank = f["severity"].map(lambda s: SEVERITY_RANK.get(str(s), len(SEVERITY_RANK)))
        same = f[rank == rank.min()]
        mine = same[same["seats"].map(lambda s: bool(seats & set(flag_seats(s))))]
        if len(mine):
            return mine.iloc[0]
    return f.iloc[0]


def _topic(code: str) -> str:
    """How the abstract names a flag's family (`codes.Code.topic`)."""
    c = codes.CODES.get(code)
    return c.topic if c else "other findings"


def abstract(a) -> Markup:
    """Generated abstract: data set, headline comparison with CI, verdict counts, strongest caveat."""
    t = a.tables
    models = sorted({fmt.text(m) for m in t.seats["model"]})
    out = [_p("We analysed {} of {} ({}: {}) measured {}, with {} bootstrap resamples and seed {}. "
              "Every figure below is given with its number of passes and, where the passes allow "
              "one, a {} confidence interval.",
              fmt.counted(len(t.runs), "run"), fmt.counted(len(t.seats), "seat"), fmt.counted(len(models), "model"),
              fmt.join_words(models), _date_range(t.runs["date"]), fmt.count(a.options.n_boot), fmt.text(a.options.seed),
              _ci_pct(a))]
    out.append(headline_sentence(a))
    counts = _verdict_counts(a)
    if counts:
        total = sum(counts.values())
        out.append(_p("Of {} against the baseline, {} favour the candidate, {} the baseline, {} "
                      "within noise and {} too little data for a verdict (Section 3).",
                      fmt.counted(total, "comparison"), fmt.count(counts.get("better", 0)),
                      fmt.count(counts.get("worse", 0)),
                      fmt.counted(counts.get("within_noise", 0), "is", "are"),
                      fmt.counted(counts.get("insufficient_data", 0), "has", "have")))
    f = _flags(a)
    if len(f):
        sev = f["severity"].astype(str).value_counts()
        cav = strongest_caveat(a)
        out.append(_p("The analysis raised {} ({} critical, {} warnings). The strongest caveat "
                      "({}, {}): {}", fmt.counted(len(f), "flag"), fmt.count(sev.get("critical", 0)),
                      fmt.count(sev.get("warn", 0)), fmt.text(cav["code"]), fmt.text(cav["severity"]), fmt.text(cav["message"])))
        rest = f.drop(index=cav.name) if cav.name in f.index else f
        rest = rest[rest["severity"].astype(str).isin(["critical", "warn"])]
        topics = rest["code"].astype(str).map(_topic)
        counts = topics.value_counts()
        if len(counts):
            listed = fmt.join_words([f"{t} ({fmt.count(n)})" for t, n in counts.items()])
            kinds = fmt.join_words([w for w, n in (("critical flags", int(rest["severity"].eq("critical").sum())),
                                          ("warnings", int(rest["severity"].eq("warn").sum()))) if n])
            out.append(_p("The other {} concern {}. Section 7 states what these numbers will not carry.",
                          kinds, listed))
        else:
            out.append(_p("Section 7 states what these numbers will not carry."))
    else:
        out.append(_p("The analysis raised no flags."))
    return Markup('<div class="abstract">') + _concat(out) + Markup("</div>")


def comparison_text(a) -> Markup:
    """Section 3's prose: against whom, how ratios and verdicts are read."""
    base = a.baseline
    if not base:
        return _p("No seat is marked as the incumbent and no baseline was given: no comparison is "
                  "made. A claim that any seat is the best would need the incumbent measured the "
                  "same day with the same harness.")
    c = _baseline_comparisons(a)
    pct = _ci_pct(a)
    noise = getattr(a.options.thresholds, "noise", 0.02)
    out = [headline_sentence(a, "The headline comparison")]
    if c is None or c.empty:
        return _concat(out)
    out.append(_p("The next table compares every candidate cell that matches a cell of {} (same harness, probe, "
                  "workload, concurrency, metric and statistic). The ratio is candidate over baseline, of the "
                  "geometric means of the pass values; the verdict is direction aware (lower is better for "
                  "latencies): {}. Each candidate's headline is its primary cell ({}), declared before the "
                  "analysis, never the best of many.", _code(base), verdict_rule(a), _primary_words(a)))
    m = int(a.comparisons["p_value"].notna().sum()) if "p_value" in a.comparisons.columns else 0
    if m:
        out.append(_p("{}", describe_multiplicity(a.options.multiplicity, m, a.options.thresholds.alpha)))
    return _concat(out)


def _comparison_candidates(a, c: pd.DataFrame, max_rows: int, rows: pd.Series | None = None) -> list[str]:
    """Candidates whose comparisons fit in `max_rows`, best on the headline cell first.

    `rows`: table rows per candidate (default: one per comparison).
    """
    row = _headline_row(a)
    order = list(dict.fromkeys(c["candidate"].astype(str)))
    if row is not None:
        same = c[(c["metric"] == row["metric"]) & (c["workload"].astype(str) == str(row["workload"]))]
        same = same[pd.to_numeric(same["concurrency"], errors="coerce").fillna(-1) ==
                    (float(row["concurrency"]) if fmt.finite(row.get("concurrency")) else -1)]
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


_COMPARISON_KEYS = ("candidate", "baseline", "kind", "candidate_date", "baseline_date", "workload",
                    "concurrency", "metric")


def _comparison_rows_per_candidate(c: pd.DataFrame) -> pd.Series:
    """Rows of the wide comparison table per candidate: one per cell (workload, concurrency, metric)."""
    keys = [k for k in _COMPARISON_KEYS if k in c.columns]
    return c.assign(candidate=c["candidate"].astype(str)).drop_duplicates(keys).groupby("candidate").size()


def _comparisons_cut(c: pd.DataFrame, max_rows: int) -> bool:
    """Whether the body shows only some candidates: not even one row per cell fits in `max_rows`."""
    return len(c) > max_rows and int(_comparison_rows_per_candidate(c).sum()) > max_rows


def comparison_table(a, *, max_rows: int = MAX_COMPARISON_ROWS) -> Table | None:
    """Ratios against the baseline with CIs and verdicts, grouped by candidate.

    One row per statistic while that fits in `max_rows`; else one row per cell with the
    verdict of each statistic as a column; at fleet scale (not even that fits) the
    candidates best on the headline cell, and `all_comparisons_table` puts every
    comparison in the appendix.
    """
    c = _baseline_comparisons(a)
    if c is None or c.empty:
        return None
    note = None
    wide = len(c) > max_rows
    if wide and _comparisons_cut(c, max_rows):
        keep = _comparison_candidates(a, c, max_rows, _comparison_rows_per_candidate(c))
        note = (f"This table shows {fmt.count(len(keep))} of {fmt.count(c['candidate'].nunique())} candidates, the best on the "
                "headline cell; the appendix lists every comparison.")
        c = c[c["candidate"].astype(str).isin(keep)]
    return _comparison_frame(a, c, note=note, wide=wide)


def all_comparisons_table(a, *, max_rows: int = MAX_COMPARISON_ROWS) -> Table | None:
    """Every comparison against the baseline (appendix), when the body's table had to be cut.

    One row per candidate and cell, the verdict of each statistic as a column; the long
    table is tables/comparisons.csv beside the report.
    """
    c = _baseline_comparisons(a)
    if c is None or not _comparisons_cut(c, max_rows):
        return None
    t = _comparison_frame(a, c, wide=True)
    t.kind, t.key = "appendix", "all-comparisons"
    t.caption = ("Every comparison against the baseline, one row per candidate and cell: the mean's "
                 f"ratio with its {_ci_pct(a)} CI and verdict, and the verdicts of the percentiles.")
    return t


#: a verdict in a wide table's statistic column, after the ratio
VERDICT_MARKS = {"better": "+", "worse": "−", "within_noise": "≈", "insufficient_data": "?"}


def _cell_values_lookup(a) -> dict:
    """(seat, workload, concurrency, metric, statistic) -> the per-pass values of that cell."""
    cells = a.cells
    if cells is None or cells.empty or "values" not in cells.columns:
        return {}
    conc = pd.to_numeric(cells["concurrency"], errors="coerce").fillna(-1.0).astype(float)
    keys = zip(cells["seat"].astype(str), _workloads(a, cells), conc, cells["metric"].astype(str),
               cells["statistic"].map(fmt.text))
    return dict(zip(keys, cells["values"]))


def _comparison_display(a, c: pd.DataFrame) -> pd.DataFrame:
    """Comparisons sorted for display (candidate, metric, workload, concurrency, statistic), as strings.

    The columns of the long table, plus ``_k`` (one id per candidate and cell) and
    ``Mark`` (ratio and verdict mark, for the wide table's statistic columns).
    """
    metric_order = {m: i for i, m in enumerate(METRIC_PRIORITY)}
    keys = [k for k in _COMPARISON_KEYS if k in c.columns]
    c = c.assign(_m=c["metric"].map(lambda m: metric_order.get(m, 99)),
                 _c=pd.to_numeric(c["concurrency"], errors="coerce").fillna(-1).astype(float),
                 _w=_workloads(a, c), _st=c["statistic"].map(_stat_rank))
    c = c.sort_values(["candidate", "_m", "_w", "_c", "_st"], kind="stable")
    lookup = _cell_values_lookup(a)
    metric, stat = c["metric"].astype(str).tolist(), c["statistic"].map(fmt.text).tolist()

    def side(seat_col: str, est_col: str) -> list[str]:
        out = []
        for seat, w, conc, m, st, est in zip(c[seat_col].astype(str), c["_w"], c["_c"], metric, stat,
                                             _column(c, est_col)):
            vals = parse_values(lookup.get((seat, w, conc, m, st)))
            # two passes give no reliable mean: both values, as the fleet paper does
            out.append(f"{fmt.num(vals[0])}, {fmt.num(vals[1])}" if len(vals) == 2 else fmt.num(est))
        return out

    ratio = [fmt.ratio3(x) for x in _column(c, "ratio")]
    verdict = [fmt.text(v) for v in _column(c, "verdict")]
    metric_labels = {m: F.metric_label(m, unit=False) for m in set(metric)}
    return pd.DataFrame({
        "candidate": [f"{x} vs {y}" for x, y in zip(c["candidate"], c["baseline"])],
        "Metric": [metric_labels[m] for m in metric],
        "Workload": c["_w"].tolist(),
        "Conc.": [fmt.concurrency(x) for x in _column(c, "concurrency")],
        "Stat.": stat,
        "Baseline": side("baseline", "baseline_estimate"),
        "Candidate": side("candidate", "candidate_estimate"),
        "Unit": [_unit(m) for m in metric],
        "Ratio": ratio,
        "CI": [fmt.ci(lo, hi, fmt.ratio3) or _within_ci(wl, wh, fmt.ratio3) or _no_ci(m)
               for lo, hi, wl, wh, m in zip(_column(c, "ci_low"), _column(c, "ci_high"), _column(c, "within_low"),
                                            _column(c, "within_high"), _column(c, "ci_method"))],
        "Verdict": [v.replace("_", " ") for v in verdict],
        "Mark": [f"{r} {VERDICT_MARKS.get(v, v)}".strip() for r, v in zip(ratio, verdict)],
        "_metric": metric,
        "_k": c.assign(candidate=c["candidate"].astype(str)).groupby(
            [*(k for k in keys if k not in ("workload", "concurrency")), "_w", "_c"],
            sort=False, dropna=False).ngroup().tolist(),
    })


def _comparison_frame(a, c: pd.DataFrame, *, note: str | None = None, wide: bool = False) -> Table:
    pct = _ci_pct(a)
    ci = f"{pct} CI"
    who = f"the {_baseline_word(a)}"
    d = _comparison_display(a, c).rename(columns={"CI": ci})
    if not wide:
        df = d[["candidate", "Metric", "Workload", "Conc.", "Stat.", "Baseline", "Candidate", "Unit",
                "Ratio", ci, "Verdict"]]
        return Table(df, f"Comparison against {who}: candidate/baseline ratio with its {pct} CI and the "
                         "verdict, per cell.",
                     group="candidate", numeric=("Conc.", "Baseline", "Candidate", "Ratio"), small=True,
                     key="comparisons", nowrap=("Metric", "Baseline", "Candidate", "Ratio", "Stat.", "Unit"),
                     note=note, group_label="Comparison")
    head, other = _spread(d, "Mark")
    all_mean = bool((head["Stat."] == "mean").all())
    df = pd.DataFrame({
        "candidate": head["candidate"],
        "Metric": [_wide_metric(m, u) for m, u in zip(head["_metric"], head["Unit"])],
        "Workload": head["Workload"], "Conc.": head["Conc."], "Stat.": head["Stat."],
        "Baseline": head["Baseline"], "Candidate": head["Candidate"], "Ratio": head["Ratio"],
        ci: head[ci], "Verdict": head["Verdict"]})
    if all_mean:
        df = df.drop(columns="Stat.")
    df = _drop_empty(pd.concat([df, other], axis=1), list(other.columns))
    df, same = _constant_columns(df, ["Workload"])
    stats = [s for s in other.columns if s in df.columns]
    bits = [note, same] if note else [same]
    bits.append("Baseline, Candidate, Ratio, CI and Verdict are those of the mean"
                + (" (of the statistic under Stat. where a cell has no mean)" if not all_mean else "") + ".")
    if stats:
        bits.append(f"{fmt.join_words(stats)}: the candidate/baseline ratio of that statistic and its verdict "
                    "(+ better, − worse, ≈ within noise, ? too little data for one).")
    bits += [_abbreviations(df["Metric"]), ("Every comparison, with its CI, test and counts, is in "
                                            "tables/comparisons.csv beside this report.")]
    return Table(df, f"Comparison against {who}: candidate/baseline ratio of the mean with its {pct} CI "
                     "and the verdict, and the verdicts of the percentiles, per cell.",
                 group="candidate", numeric=("Conc.", "Baseline", "Candidate", "Ratio", *stats), small=True,
                 dense=True, key="comparisons", nowrap=("Metric", "Baseline", "Candidate", "Ratio", "Stat.", *stats),
                 note=" ".join(b for b in bits if b), group_label="Comparison")


def ratio_figure(a, *, max_rows: int = 24) -> FigureBlock | None:
    """Forest plot of the ratios against the baseline (only when at least one has a CI).

    At fleet scale (more than `max_rows` comparisons) it shows the headline cell only, one
    row per candidate, the best `max_rows` first.
    """
    c = _baseline_comparisons(a)
    if c is None or c.empty or not (c["ci_low"].map(fmt.finite) & c["ci_high"].map(fmt.finite)).any():
        return None
    more = ""
    if len(c) > max_rows:
        row = _headline_row(a)
        if row is not None:
            conc = pd.to_numeric(c["concurrency"], errors="coerce").fillna(-1)
            want = float(row["concurrency"]) if fmt.finite(row.get("concurrency")) else -1
            c = c[(c["metric"] == row["metric"]) & (c["workload"].astype(str) == str(row["workload"])) &
                  (conc == want)]
            hib = higher_is_better(str(row["metric"])) if str(row["metric"]) in METRICS else True
            total = len(c)
            c = c.sort_values("ratio", ascending=not hib).head(max_rows)
            more = (f" Shown: {_cell_words(row)}, the best {fmt.count(len(c))} of {fmt.count(total)} candidates; the "
                    "appendix lists every comparison.")
        else:
            more = f" The first {fmt.count(max_rows)} of {fmt.count(len(c))} comparisons are shown; the appendix lists all."
    fig = F.ratio_forest(c, max_rows=max_rows)
    return _fig(fig, "Candidate/baseline ratios with their confidence intervals (filled) or without "
                     "one (hollow); the dashed line is parity. Colour gives the verdict." + more, "ratios")


# --- exams ---------------------------------------------------------------------------------------

def exam_scores_table(a) -> Table | None:
    """Exam scores per seat (counts, published score, when measured)."""
    e = a.tables.exams
    if e is None or e.empty:
        return None
    rows = []
    for _, r in e.sort_values(["seat", "benchmark", "dimension"], na_position="first").iterrows():
        when = fmt.text(r.get("measured_on"))
        if not when and r.get("from_earlier_run") is True:
            when = "earlier run, date unknown"
        elif not when:
            when = fmt.text(r.get("date"))
        rows.append({"seat": _seat_label(a, str(r["seat"])), "Benchmark": fmt.text(r["benchmark"]),
                     "Dimension": fmt.text(r.get("dimension"), "–"),
                     "Correct": fmt.fraction(r.get("correct"), r.get("total")),
                     "Published score": fmt.num(r.get("score")),
                     "Measured": when,
                     "Note": ("from items" if r.get("from_items") is True else
                              ("count from score: " + fmt.text(r.get("count_rounding"))) if not fmt.missing(r.get("count_rounding"))
                              else "counts only") + ("; " + fmt.text(r.get("placement_note")) if not fmt.missing(r.get("placement_note")) else "")})
    df = pd.DataFrame(rows)
    return Table(df, "Exam scores as recorded: correct answers of the items asked, the published "
                     "score where given, and when the exam ran.", group="seat", small=True,
                 numeric=("Published score",), key="exam-scores", nowrap=("Correct",))


def exam_deltas_table(a) -> Table | None:
    """Exam deltas: both proportions, the difference with its CI, exact test, p and MDE."""
    d = a.exam_deltas
    if d is None or d.empty:
        return None
    pct = _ci_pct(a)
    rows = []
    for _, r in d.iterrows():
        n = r.get("n_items")
        disc = ""
        if fmt.finite(r.get("baseline_only")) and fmt.finite(r.get("candidate_only")):
            disc = f"{fmt.count(r['baseline_only'])} / {fmt.count(r['candidate_only'])}"
        rows.append({
            "pair": f"{r['candidate']} vs {r['baseline']}",
            "Benchmark": fmt.text(r["benchmark"]) + (f" / {r['dimension']}" if not fmt.missing(r.get("dimension")) else ""),
            "Baseline": fmt.fraction(r.get("baseline_correct"), n),
            "Candidate": fmt.fraction(r.get("candidate_correct"), n),
            "Difference": fmt.points(r.get("diff")),
            f"{pct} CI": fmt.points_ci(r.get("diff_ci_low"), r.get("diff_ci_high")) or "–",
            "Test": fmt.text(r.get("test")),
            "Discordant": disc or "–",
            "p": fmt.pval(r.get("p_value"), "–"),
            "p (Holm)": fmt.pval(r.get("p_holm"), "–"),
            "MDE": fmt.points_size(r.get("mde")),
        })
    df = pd.DataFrame(rows)
    return Table(df, f"Exam deltas (candidate − baseline) in percentage points with their {pct} CI, "
                     "the exact test used, its p-value (raw and Holm-adjusted) and the smallest "
                     "difference this many items could detect (MDE, 80% power).", group="pair",
                 small=True, numeric=("Difference", "p", "p (Holm)", "MDE"), key="exam-deltas",
                 group_label="Comparison",
                 nowrap=("Baseline", "Candidate", "Difference", f"{pct} CI", "MDE"),
                 note="Discordant: items only the baseline / only the candidate answered correctly "
                      "(paired tests only).")


def exams_text(a) -> Markup:
    """Section 4's prose."""
    e = a.tables.exams
    d = a.exam_deltas
    if (e is None or e.empty) and (d is None or d.empty):
        return _p("No exam results were recorded.")
    out = []
    if e is not None and len(e):
        out.append(_p("{} recorded for {}.", fmt.counted(len(e), "exam score"),
                      fmt.counted(e["seat"].nunique(), "seat")))
    if d is not None and len(d):
        sig_alpha = a.options.thresholds.alpha
        p = pd.to_numeric(d["p_value"], errors="coerce")
        n_sig = int((p < sig_alpha).sum())
        out.append(_p("{} tested with an exact test; {} significant at alpha = {}. A delta that is "
                      "not significant is not evidence of equality: the MDE column gives the smallest "
                      "difference these items could have detected.", fmt.counted(len(d), "delta"),
                      fmt.counted(n_sig, "is", "are"), fmt.num(sig_alpha)))
    return _concat(out)


def exam_figure(a) -> FigureBlock | None:
    """Forest plot of exam deltas."""
    return _fig(F.exam_forest(a.exam_deltas), "Exam deltas (candidate − baseline) with their "
                "confidence intervals; the dashed line is no difference, p is the exact test's.", "exams")


# --- traps, faults, limitations ------------------------------------------------------------------

def trap_order() -> list[str]:
    """The codes section 5 tells, in its order: the measurement traps first, then the stability
    findings, each in the order of `codes.CODES` (`codes.trap_codes`)."""
    return sorted(codes.trap_codes(), key=lambda c: codes.CODES[c].group != "traps")


_EVIDENCE_SKIP = {"excluded", "cells", "exams", "models", "only", "source"}


def _evidence_value(v) -> str | None:
    if v is None or isinstance(v, dict) and not v:
        return None
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (int, np.integer, float, np.floating)):
        return fmt.num(v)
    if isinstance(v, (list, tuple)):
        if not v or any(isinstance(x, (dict, list, tuple)) for x in v):
            return None
        shown = [_evidence_value(x) or "" for x in v[:8]]
        return ", ".join(shown) + (f" and {fmt.count(len(v) - 8)} more" if len(v) > 8 else "")
    if isinstance(v, dict):
        if any(isinstance(x, (dict, list, tuple)) for x in v.values()):
            return None
        return ", ".join(f"{k} {_evidence_value(x)}" for k, x in v.items())
    return str(v)


def evidence_text(ev: dict) -> str:
    """A flag's evidence as one line of 'name: value' pairs (nested records left to flags.json)."""
    bits = []
    for k, v in ev.items():
        if k in _EVIDENCE_SKIP:
            continue
        shown = _evidence_value(v)
        if shown:
            bits.append(f"{str(k).replace('_', ' ')}: {shown}")
    return "; ".join(bits)


def traps(a, *, max_each: int = 4) -> Markup:
    """Section 5: one numbered finding per trap or drift flag, with its figures and evidence.

    A code raised more than `max_each` times (fleet scale) becomes one finding: two
    examples and the list of the other seats.
    """
    f = sorted_flags(a)
    order = {c: i for i, c in enumerate(trap_order())}
    sel = f[f["code"].astype(str).isin(list(order))] if len(f) else f
    if sel.empty:
        return _p("No measurement trap was found: no prefix-cache hit, no reasoning-field "
                  "mismatch, no capped answers, no drift between passes.")
    sel = sel.assign(_o=sel["code"].map(order)).sort_values("_o", kind="stable")
    items = []
    for code, g in sel.groupby("code", sort=False):
        if code == "warmup.unknown":
            seats = sorted({s for v in g["seats"] for s in flag_seats(v)})
            body = _p("{} {} not say whether warm-up requests were excluded, so their first "
                      "requests may carry start-up effects: {}.",
                      fmt.counted(len(seats), "seat's runs", "seats' runs"), "does" if len(seats) == 1 else "do",
                      Markup(", ").join(_code(x) for x in seats))
            items.append((codes.CODES[code].trap_title, body, ""))
            continue
        if len(g) > max_each:
            shown = g.head(2)
            rest = sorted({x for v in g.iloc[2:]["seats"] for x in flag_seats(v)})
            body = _concat([_p("{}", fmt.text(r.get("message"))) for _, r in shown.iterrows()])
            body += _p("The same holds for {} more: {}. Each is in Section 7 and in flags.json, with its "
                       "figures.", fmt.counted(len(g) - 2, "case"), Markup(", ").join(_code(x) for x in rest))
            items.append((f"{codes.CODES[code].trap_title} ({fmt.counted(len(g), 'case')})", body, ""))
            continue
        for _, r in g.iterrows():
            items.append((codes.CODES[code].trap_title, _p("{}", fmt.text(r.get("message"))),
                          evidence_text(_evidence(r))))
    out = [_p("{} found. Each is stated with its figures; a figure excluded here is not in "
              "Table 1 or any figure.", fmt.counted(len(items), "trap or instability", "traps or instabilities"))]
    for i, (title, body, ev) in enumerate(items, 1):
        out.append(Markup('<div class="finding"><h3>5.{} {}</h3>{}').format(i, title, body))
        if ev:
            out.append(Markup('<p class="evidence">Evidence: {}</p>').format(ev))
        out.append(Markup("</div>"))
    return Markup('<div class="findings">') + _concat(out) + Markup("</div>")


def faults(a) -> tuple[Markup, Table | None]:
    """Section 6: faults, crashes and defects recorded in the runs, and the fault flags."""
    ev = a.tables.events
    ev = ev[ev["kind"].astype(str).isin(["fault", "crash", "defect"])] if ev is not None and len(ev) else ev
    f = _flags(a)
    ff = f[f["code"].astype(str).str.match(r"^(fault|defect)\.")] if len(f) else f
    failed = f[f["code"].astype(str) == "requests.failed"] if len(f) else f
    failed_text = [Markup('<p class="flag-note">{}</p>').format(fmt.text(r.get("message"))) for _, r in failed.iterrows()]
    if ev is None or ev.empty:
        if len(failed):
            return _concat([_p("No fault, crash or defect was recorded as an event, but requests failed:"),
                            *failed_text]), None
        return _p("No fault, crash or defect was recorded in the runs, and no request failed."), None
    n_unrep = int((ev["reproduced"] == False).sum()) if "reproduced" in ev.columns else 0  # noqa: E712
    n_open = int(ev["reproduced"].isna().sum()) if "reproduced" in ev.columns else len(ev)
    text = [_p("{} recorded: {} not seen again in later runs, {} with no record of whether "
               "it recurred. None of them is resolved by the data; each is an open defect until a "
               "run shows otherwise.", fmt.counted(len(ev), "fault or defect", "faults or defects"),
               fmt.count(n_unrep), fmt.count(n_open))]
    for _, r in ff.iterrows():
        text.append(Markup('<p class="flag-note">{}</p>').format(fmt.text(r.get("message"))))
    text += failed_text
    rows = []
    for _, r in ev.sort_values(["seat", "date", "pass"]).iterrows():
        rep = r.get("reproduced")
        rows.append({"seat": _seat_label(a, str(r["seat"])), "Date": fmt.text(r["date"]), "Pass": fmt.count(r["pass"]),
                     "Kind": fmt.text(r["kind"]), "Conc.": fmt.concurrency(r.get("concurrency")),
                     "Reproduced": "unknown" if fmt.missing(rep) else ("yes" if rep else "no"),
                     "What happened": fmt.text(r.get("message"))})
    tbl = Table(pd.DataFrame(rows), "Faults, crashes and defects recorded in the runs.", group="seat",
                small=True, key="faults", numeric=("Pass", "Conc."), widths={"What happened": "58%"})
    return _concat(text), tbl


def limitations_paragraphs(a) -> list[tuple[str, str]]:
    """(title, text) per group of flags, as `analysis.flags.limitations_paragraphs` writes them."""
    return [(p.title, p.text) for p in flag_paragraphs(a.flags)]


def limitations_html(a) -> Markup:
    """Section 7 from the flags alone: one paragraph per group, its title in bold; all escaped."""
    f = _flags(a)
    if f.empty:
        return _p("{}", NO_FLAGS)
    out = []
    for title, text in limitations_paragraphs(a):
        if title:
            out.append(_p("<strong>{}.</strong> {}", title, text))
        else:
            out.append(_p("{}", text))
    return _concat(out)


def limitations(a) -> Markup:
    """Section 7 with a one-line lead saying where it comes from."""
    f = _flags(a)
    sev = f["severity"].astype(str).value_counts() if len(f) else {}
    lead = _p("This section is written from the {} the analysis raised ({} critical, {} warnings, {} "
              "for information), and from nothing else; flags.json holds each with its evidence.",
              fmt.counted(len(f), "flag"), fmt.count(sev.get("critical", 0)), fmt.count(sev.get("warn", 0)),
              fmt.count(sev.get("info", 0)))
    return lead + Markup('<div class="limitations">') + limitations_html(a) + Markup("</div>")


# --- appendix: provenance ---------------------------------------------------------------------

def _common_root(paths: list[str]) -> str | None:
    absolute = [p for p in paths if os.path.isabs(p)]
    if len(absolute) != len(paths) or not paths:
        return None
    try:
        root = os.path.commonpath(absolute)
    except ValueError:
        return None
    if len(paths) == 1:
        root = os.path.dirname(root)
    return root


def _rel(p: str, root: str | None) -> str:
    return os.path.relpath(p, root) if root else p


def _appendix_tables(a) -> list[str]:
    """What the appendix lists before the files: every cell, every comparison (fleet scale only)."""
    out = []
    cells = _result_cells(a)
    if cells is not None and len(cells) and _cells_cut(cells, MAX_BODY_ROWS):
        out.append("every seat and cell")
    c = _baseline_comparisons(a)
    if c is not None and len(c) and _comparisons_cut(c, MAX_COMPARISON_ROWS):
        out.append("every comparison against the baseline")
    return out


def appendix_text(a) -> Markup | None:
    """Lead of the appendix at fleet scale: the full tables, and where the long ones are.

    None when the body's tables hold everything (no Table A1 of cells).
    """
    tables = _appendix_tables(a)
    if not tables:
        return None
    labels = "Table A1" if len(tables) == 1 else "Tables A1 and A2"
    return _p("{} {} {}, one row per cell (a seat's workload, concurrency and metric) with the "
              "statistics side by side. The long tables, one row per statistic with its confidence "
              "interval, per-pass values and, for comparisons, the test and counts, are "
              "tables/cells.csv and tables/comparisons.csv beside this report.",
              labels, "lists" if len(tables) == 1 else "list", fmt.join_words(tables))


def provenance_text(a, params: dict | None = None) -> Markup:
    """Lead of the appendix's provenance: where the files are, how many were refused and skipped."""
    t, loaded = a.tables, a.loaded
    paths = [str(p) for p in t.runs["source_file"]] + [r.path for r in loaded.refused] + [s.path for s in loaded.skipped]
    root = _common_root(paths)
    out = [_p("Every number in this report comes from the {} listed in Table {}, identified by "
              "SHA-256. {} refused and {} skipped (no results in {}).",
              fmt.counted(t.runs["source_file"].nunique(), "file"), f"A{fmt.count(1 + len(_appendix_tables(a)))}",
              fmt.counted(len(loaded.refused), "file was", "files were"),
              fmt.counted(len(loaded.skipped), "file was", "files were"),
              "it" if len(loaded.skipped) == 1 else "them")]
    if root:
        out.append(_p("Paths are relative to {}.", _code(root)))
    if loaded.refused:
        out.append(_p("The report was built with --skip-bad: the refused files below were left out, "
                      "and nothing from them is in any table or figure."))
    return _concat(out)


def files_table(a) -> Table:
    """Every file read: path, format, harness and version, run id, SHA-256."""
    t, loaded = a.tables, a.loaded
    paths = [str(p) for p in t.runs["source_file"]] + [r.path for r in loaded.refused] + [s.path for s in loaded.skipped]
    root = _common_root(paths)
    rows = []
    for _, r in t.runs.sort_values(["source_file", "run_id"]).iterrows():
        rows.append({"File": _rel(str(r["source_file"]), root),
                     "Run": fmt.text(r["run_id"]),
                     "Format": fmt.text(r.get("source_format")),
                     "Harness and version": fmt.text(r.get("harness")) + (" " + fmt.text(r.get("harness_version")) if not fmt.missing(r.get("harness_version")) else " (version not stated)"),
                     "SHA-256": fmt.text(r.get("source_sha256"))})
    df = pd.DataFrame(rows, columns=["File", "Run", "Format", "Harness and version", "SHA-256"])
    # a native file is named after its run: say it once
    same = [os.path.splitext(os.path.basename(f))[0] == r for f, r in zip(df["File"], df["Run"])]
    if all(same):
        df = df.drop(columns=["Run"])
    note = None
    if len(df) > LONG_TABLE_ROWS:
        # fleet scale: one format and harness for hundreds of files is said once
        df, note = _constant_columns(df, ["Format", "Harness and version"])
    widths, nowrap = {"SHA-256": "30%", "File": "34%"}, ()
    if len(df) and df["File"].str.len().max() + len(df["SHA-256"].iloc[0]) <= FILES_LINE_CHARS:
        # short paths (fleet scale): a row per line, the hash unbroken
        widths, nowrap = {}, ("SHA-256",)
    return Table(df, "Files read, with their format, harness and version, and SHA-256.",
                 kind="appendix", small=True, mono=("File", "Run", "SHA-256"), key="files",
                 widths=widths, nowrap=nowrap, note=note or None)


def refused_table(a) -> Table | None:
    """Refused files and why (present when --skip-bad let the build go on)."""
    loaded = a.loaded
    if not loaded.refused:
        return None
    paths = [r.path for r in loaded.refused]
    root = _common_root([str(p) for p in a.tables.runs["source_file"]] + paths)
    rows = [{"File": _rel(r.path, root), "Where": r.json_path, "Why": r.message} for r in loaded.refused]
    return Table(pd.DataFrame(rows), "Refused files: left out of every table and figure.",
                 kind="appendix", small=True, mono=("File", "Where"), key="refused")


def skipped_table(a) -> Table | None:
    """Skipped files: written beside results, carrying none."""
    loaded = a.loaded
    if not loaded.skipped:
        return None
    root = _common_root([str(p) for p in a.tables.runs["source_file"]] + [s.path for s in loaded.skipped])
    rows = [{"File": _rel(s.path, root), "Why skipped": s.reason} for s in loaded.skipped]
    return Table(pd.DataFrame(rows), "Skipped files (no results in them).", kind="appendix", small=True,
                 mono=("File",), key="skipped")


def parameters_table(a, params: dict) -> Table:
    """The parameters this report was built with (papermill parameters), seed included."""
    rows = []
    th = set(a.options.thresholds.as_dict())
    for k, v in params.items():
        if k in th:
            continue
        if isinstance(v, (list, tuple)):
            v = ", ".join(str(x) for x in v)
        rows.append({"Parameter": str(k), "Value": "none" if v is None else str(v)})
    return Table(pd.DataFrame(rows, columns=["Parameter", "Value"]),
                 "Parameters of this build (the executed notebook records them too).",
                 kind="appendix", small=True, mono=("Parameter",), key="parameters")


def thresholds_table(a) -> Table:
    """Every threshold: value used, default and why."""
    used = a.options.thresholds.as_dict()
    rows = []
    for name, default, why in Thresholds.describe():
        v = used.get(name, default)
        rows.append({"Threshold": name, "Used": fmt.text(v), "Default": fmt.text(default),
                     "Why this default": why})
    return Table(pd.DataFrame(rows), "Thresholds used by the statistics and the flags, with their "
                                     "defaults and the reason for each.", kind="appendix", small=True,
                 mono=("Threshold",), numeric=("Used", "Default"), key="thresholds",
                 widths={"Why this default": "62%"})


PACKAGES = ("benchreport", "numpy", "pandas", "scipy", "statsmodels", "pingouin", "msgspec",
            "matplotlib", "seaborn", "papermill", "nbconvert", "nbformat", "ipykernel", "weasyprint",
            "markupsafe", "mistune")


def packages_table() -> Table:
    """Python and the versions of the packages that computed and rendered this report."""
    rows = [{"Package": "python", "Version": platform.python_version()}]
    for p in PACKAGES:
        try:
            v = metadata.version(p)
        except metadata.PackageNotFoundError:
            v = "not installed"
        rows.append({"Package": p, "Version": v})
    return Table(pd.DataFrame(rows), "Software versions.", kind="appendix", small=True,
                 mono=("Package", "Version"), key="packages")
