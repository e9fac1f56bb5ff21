"""Tables an analyst reads: seats as labels, per-pass values as lists and columns, whole messages.

Pure functions of an `benchreport.pipeline.Analysis` returning DataFrames (no display, no
I/O); `benchreport.explore.display` shows them as interactive tables. Filters take a value,
a list of values or None (everything).
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np
import pandas as pd

from benchreport import format as fmt
from benchreport.columns import METRIC_WORDS, STATISTICS
from benchreport.report.model.sections.flagview import flag_seats, sorted_flags
from benchreport.report.model.sections.labels import order_seats, seat_label
from benchreport.stats.common import parse_values

__all__ = [
    "seat_labels",
    "check_seats",
    "choices",
    "seats_view",
    "flags_view",
    "cells_view",
    "comparisons_view",
    "requests_view",
    "request_summary",
    "pass_columns",
    "files_view",
    "REQUEST_FIELDS",
]

#: per-request numeric fields, in the order a drill-down offers them
REQUEST_FIELDS = (
    "ttft_ms",
    "e2e_latency_ms",
    "itl_ms",
    "output_tokens",
    "prompt_tokens",
    "cached_prompt_tokens",
    "reasoning_tokens",
)


def seat_labels(a) -> dict[str, str]:
    """Seat id -> the report's label ('id (model, incumbent)'), the baseline first."""
    return {s: seat_label(a, s) for s in order_seats(a, a.tables.seats["seat"].astype(str))}


def check_seats(a, seats: Iterable[str]) -> list[str]:
    """The seats given, each a seat of the analysis (ValueError naming the seats there are)."""
    known = seat_labels(a)
    out = [str(s) for s in ([seats] if isinstance(seats, str) else seats)]
    unknown = [s for s in out if s not in known]
    if unknown:
        raise ValueError(f"unknown seat(s) {', '.join(map(repr, unknown))}; the seats are: {', '.join(known)}")
    return out


def _as_list(v) -> list | None:
    if v is None:
        return None
    if isinstance(v, (list, tuple, set, np.ndarray, pd.Series)):
        return list(v)
    return [v]


def _keep(df: pd.DataFrame, column: str, wanted) -> pd.DataFrame:
    """Rows whose `column` is one of `wanted` (all rows when wanted is None)."""
    wanted = _as_list(wanted)
    if wanted is None or df.empty or column not in df.columns:
        return df
    if column in ("concurrency", "pass"):
        col = pd.to_numeric(df[column], errors="coerce")
        return df[col.isin([float(w) for w in wanted])]
    return df[df[column].astype(str).isin([str(w) for w in wanted])]


def _stat_key(s) -> int:
    return STATISTICS.index(s) if s in STATISTICS else len(STATISTICS)


def choices(a) -> dict[str, list]:
    """What the data offer to pick: seats, metrics, statistics, workloads, concurrencies,
    harnesses, passes and per-request fields (each list sorted as a reader expects)."""
    c = a.cells
    runs = a.tables.runs
    req = a.tables.requests
    conc = pd.to_numeric(c["concurrency"], errors="coerce").dropna() if len(c) else pd.Series(dtype=float)
    fields = [
        f
        for f in REQUEST_FIELDS
        if req is not None and f in req.columns and pd.to_numeric(req[f], errors="coerce").notna().any()
    ]
    passes = sorted({int(p) for p in pd.to_numeric(runs["pass"], errors="coerce").dropna()}) if len(runs) else []
    return {
        "seats": list(seat_labels(a)),
        "metrics": sorted(set(c["metric"].astype(str)), key=lambda m: (m not in METRIC_WORDS, m)) if len(c) else [],
        "statistics": sorted(set(c["statistic"].astype(str)), key=_stat_key) if len(c) else [],
        "workloads": sorted(set(c["workload"].dropna().astype(str))) if len(c) else [],
        "concurrencies": sorted({int(x) for x in conc}),
        "harnesses": sorted(set(runs["harness"].dropna().astype(str))) if len(runs) else [],
        "passes": passes,
        "request_fields": fields,
    }


def seats_view(a) -> pd.DataFrame:
    """One row per seat: its label, model, role, placement and what was measured (runs, dates, harnesses)."""
    s = a.tables.seats.copy()
    runs = a.tables.runs
    labels = seat_labels(a)
    per = runs.groupby(runs["seat"].astype(str)) if len(runs) else None

    def agg(seat, col):
        if per is None or seat not in per.groups:
            return []
        return sorted({str(v) for v in per.get_group(seat)[col].dropna()})

    s["seat"] = s["seat"].astype(str)
    out = pd.DataFrame(
        {
            "seat": [labels[x] for x in s["seat"]],
            "model": s["model"],
            "role": s["role"],
            "quantisation": s.get("quantisation"),
            "engine": s.get("engine"),
            "nodes": s.get("nodes"),
            "gpus per node": s.get("gpus_per_node"),
            "tensor parallel": s.get("tensor_parallel"),
            "interconnect": s.get("interconnect"),
            "runs": [len(agg(x, "run_id")) for x in s["seat"]],
            "dates": [", ".join(agg(x, "date")) for x in s["seat"]],
            "harnesses": [", ".join(agg(x, "harness")) for x in s["seat"]],
        }
    )
    order = {lab: i for i, lab in enumerate(labels.values())}
    return out.sort_values("seat", key=lambda col: col.map(order)).reset_index(drop=True)


def flags_view(a, *, seats=None, severity=None, evidence: bool = False) -> pd.DataFrame:
    """The flags most severe first: seats as labels (comma-separated), the cell in words, the
    whole message (never cut), and with `evidence` the evidence as a dict."""
    f = sorted_flags(a)
    cols = ["severity", "code", "seats", "cell", "message", "evidence"]
    if f.empty:
        return pd.DataFrame(columns=cols)
    labels = seat_labels(a)
    rows = []
    for _, r in f.iterrows():
        ss = flag_seats(r.get("seats"))
        if seats is not None and not set(ss) & set(_as_list(seats)):
            continue
        cell = (
            fmt.cell_phrase(r.get("workload"), r.get("concurrency"), r.get("metric"), r.get("statistic"))
            if any(not fmt.missing(r.get(k)) for k in ("workload", "concurrency", "metric"))
            else ""
        )
        rows.append(
            {
                "severity": str(r["severity"]),
                "code": str(r["code"]),
                "seats": ", ".join(labels.get(s, s) for s in ss),
                "cell": cell,
                "message": fmt.text(r.get("message")),
                "evidence": r.get("evidence"),
            }
        )
    out = _keep(pd.DataFrame(rows, columns=cols), "severity", severity).reset_index(drop=True)
    return out if evidence else out.drop(columns="evidence")


def pass_columns(df: pd.DataFrame, column: str = "values", *, max_passes: int = 12) -> pd.DataFrame:
    """`df` with its list column `column` also spread as ``pass 1`` .. ``pass k`` (k at most `max_passes`)."""
    k = min(max((len(v) for v in df[column]), default=0), max_passes)
    out = df.copy()
    for i in range(k):
        out[f"pass {i + 1}"] = [v[i] if len(v) > i else np.nan for v in df[column]]
    return out


def cells_view(
    a,
    *,
    metric=None,
    statistic=None,
    seats=None,
    workload=None,
    concurrency=None,
    harness=None,
    passes_as: str = "list",
) -> pd.DataFrame:
    """The cells (estimates with their CI or why none), filtered; per-pass values as a list
    (``values``), and with ``passes_as="columns"`` also as ``pass 1`` .. ``pass k``."""
    if passes_as not in ("list", "columns"):
        raise ValueError(f"`passes_as` must be 'list' or 'columns'; got {passes_as!r}")
    c = a.cells
    if seats is not None:
        check_seats(a, seats)
    for col, want in (
        ("metric", metric),
        ("statistic", statistic),
        ("seat", seats),
        ("workload", workload),
        ("concurrency", concurrency),
        ("harness", harness),
    ):
        c = _keep(c, col, want)
    labels = seat_labels(a)
    order = {s: i for i, s in enumerate(labels)}
    c = c.assign(
        _o=c["seat"].astype(str).map(order),
        _c=pd.to_numeric(c["concurrency"], errors="coerce").fillna(-1),
        _s=c["statistic"].map(_stat_key),
    )
    c = c.sort_values(["_o", "metric", "workload", "_c", "_s"], kind="stable")
    out = pd.DataFrame(
        {
            # what tells two rows apart first (on screen at 1,366 px): seat, harness, load, date, cell
            "seat": c["seat"].astype(str).map(labels).to_numpy(),
            "harness": c["harness"].to_numpy(),
            "load": _load_words(a, c),
            "date": c["date"].to_numpy(),
            "workload": c["workload"].to_numpy(),
            "concurrency": c["concurrency"].to_numpy(),
            "metric": c["metric"].to_numpy(),
            "statistic": c["statistic"].to_numpy(),
            "estimate": c["estimate"].to_numpy(),
            "ci_low": c["ci_low"].to_numpy(),
            "ci_high": c["ci_high"].to_numpy(),
            "unit": c["unit"].to_numpy(),
            "ci_method": c["ci_method"].to_numpy(),
            "n_passes": c["n_passes"].to_numpy(),
            "n_obs": c["n_obs"].to_numpy(),
            "values": [parse_values(v) for v in c["values"]],
        }
    )
    return pass_columns(out) if passes_as == "columns" else out


def _load_words(a, df: pd.DataFrame) -> list[str]:
    """Each row's load in words (`benchreport.stats.pass_rows.load_labels`: loads that read alike
    told apart by what they sent); empty where the row has no load."""
    from benchreport.stats.pass_rows import load_labels

    if "load_id" not in df:
        return [""] * len(df)
    words = load_labels(a.tables.runs)
    return [words.get(str(x), "") if not fmt.missing(x) else "" for x in df["load_id"]]


def comparisons_view(a) -> pd.DataFrame:
    """tables/comparisons.csv with what tells its rows apart first: kind, the two seats, harness,
    the load in words and the two dates, then the cell, the figures and the verdict (the load's
    id and JSON after the rest)."""
    c = a.comparisons
    if c is None or not len(c):
        return pd.DataFrame(columns=["kind", "baseline", "candidate", "harness", "load", "workload"])
    out = c.copy()
    out.insert(0, "load_words", _load_words(a, c))
    lead = ["kind", "baseline", "candidate", "harness", "load_words", "baseline_date", "candidate_date"]
    lead += ["workload", "concurrency", "metric", "statistic", "baseline_estimate", "candidate_estimate"]
    lead += ["ratio", "ci_low", "ci_high", "verdict"]
    lead = [k for k in lead if k in out]
    rest = [k for k in out.columns if k not in lead and k not in ("load_id", "load")]
    tail = [k for k in ("load_id", "load") if k in out]
    return (
        out[lead + rest + tail].rename(columns={"load_words": "load", "load": "load (as sent)"}).reset_index(drop=True)
    )


def _requests(a) -> pd.DataFrame:
    """Request records with the harness, probe and load of their run."""
    req = a.tables.requests
    if req is None or not len(req):
        return pd.DataFrame(
            columns=["run_id", "seat", "harness", "probe", "load", "load_label", "workload", "concurrency", "pass"]
        )
    cols = [c for c in ("run_id", "harness", "probe", "load_id", "load_label") if c in a.tables.runs.columns]
    runs = a.tables.runs[cols].drop_duplicates("run_id")
    out = req.merge(runs, on="run_id", how="left")
    return out.assign(load=_load_words(a, out))


def requests_view(a, *, seats=None, workload=None, concurrency=None, pass_=None, harness=None) -> pd.DataFrame:
    """Per-request records, filtered by seat, workload, concurrency, pass and harness."""
    r = _requests(a)
    if seats is not None:
        check_seats(a, seats)
    for col, want in (
        ("seat", seats),
        ("workload", workload),
        ("concurrency", concurrency),
        ("pass", pass_),
        ("harness", harness),
    ):
        r = _keep(r, col, want)
    labels = seat_labels(a)
    lead = ["seat", "harness", "load", "workload", "concurrency", "pass", "run_id"]
    rest = [c for c in ("finish_reason", "error", *REQUEST_FIELDS, "start_ms", "counted_only") if c in r.columns]
    out = r[lead + rest].copy()
    out["seat"] = out["seat"].astype(str).map(labels)
    return out.reset_index(drop=True)


def _quantile(x: pd.Series, q: float) -> float:
    x = pd.to_numeric(x, errors="coerce").dropna()
    return float(np.quantile(x.to_numpy(float), q)) if len(x) else np.nan


def request_summary(
    a,
    field: str = "ttft_ms",
    *,
    by: Iterable[str] = ("seat", "harness", "load", "workload", "concurrency", "pass"),
    **filters: Any,
) -> pd.DataFrame:
    """Requests per group (seat, harness, load in words, workload, concurrency, pass by default): how many,
    how many failed, how they finished, and the mean, p50, p90 and p99 of `field`
    (linear-interpolation quantiles, numpy's default)."""
    r = requests_view(a, **filters)
    by = list(by)
    cols = by + ["requests", "failed", "finish", f"{field} mean", f"{field} p50", f"{field} p90", f"{field} p99"]
    if r.empty:
        return pd.DataFrame(columns=cols)
    if field not in r.columns:
        raise ValueError(f"`field` must be a per-request field ({', '.join(REQUEST_FIELDS)}); got {field!r}")
    rows = []
    for key, g in r.groupby(by, dropna=False, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        failed = g["error"].notna() & (g["error"].astype(str) != "") if "error" in g else pd.Series(False, g.index)
        reasons = g["finish_reason"].fillna("unstated").astype(str).value_counts() if "finish_reason" in g else {}
        x = pd.to_numeric(g[field], errors="coerce")
        rows.append(
            {
                **dict(zip(by, key)),
                "requests": len(g),
                "failed": int(failed.sum()),
                "finish": ", ".join(f"{k}: {v}" for k, v in reasons.items()),
                f"{field} mean": float(x.mean()) if x.notna().any() else np.nan,
                f"{field} p50": _quantile(x, 0.5),
                f"{field} p90": _quantile(x, 0.9),
                f"{field} p99": _quantile(x, 0.99),
            }
        )
    return pd.DataFrame(rows, columns=cols)


def agreement_view(a) -> pd.DataFrame:
    """Each pair of harnesses that measured one seat's cell (tables/agreement.csv): the figures,
    their ratio with its interval and what explains a difference; empty where no cell was
    measured by two harnesses."""
    from benchreport.stats.agreement import AGREEMENT_COLUMNS

    table = getattr(a, "agreement", None)
    return table if isinstance(table, pd.DataFrame) else pd.DataFrame(columns=AGREEMENT_COLUMNS)


def files_view(a) -> pd.DataFrame:
    """Refused and skipped files with the whole reason (refused first)."""
    rows = [{"file": r.path, "status": "refused", "where": r.json_path, "why": r.message} for r in a.loaded.refused]
    rows += [{"file": s.path, "status": "skipped", "where": "", "why": s.reason} for s in a.loaded.skipped]
    return pd.DataFrame(rows, columns=["file", "status", "where", "why"])
