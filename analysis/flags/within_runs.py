"""Flags about what happened inside runs: failed requests, correlated requests, and a
harness figure our recomputation from its own request records does not reproduce.

Each rule takes the tidy tables or the statistics layer's per-pass table
(analysis.stats.cells.PASS_COLUMNS) and returns `Flag` records (analysis.flags.rules).
"""
from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import pandas as pd

from analysis.stats.cells import failed_mask
from analysis.thresholds import DEFAULT, Thresholds

from analysis import format as F
from .rules import Flag, _cell_dict, _cell_order, _describe_cells, _one_cell, _plain, _used

__all__ = ["requests_failed", "correlated_requests", "figure_mismatch", "ERROR_EXAMPLES"]

#: how many distinct error messages a flag quotes
ERROR_EXAMPLES = 3


def requests_failed(requests: pd.DataFrame | None, runs: pd.DataFrame | None = None, *,
                    thresholds: Thresholds = DEFAULT) -> list[Flag]:
    """`requests.failed`: requests of a run that failed (an error, or finish_reason error/cancelled/incomplete).

    One flag per seat, with each run's failed share and the errors seen. Severity:
    critical above `failed_critical` of a run's requests (the successful ones are not
    representative of the seat), warn above `failed_warn`, info otherwise. The figures
    are of the successful requests only (analysis.stats.cells).
    """
    if requests is None or not len(requests):
        return []
    failed = failed_mask(requests)
    if not failed.any():
        return []
    r = requests.assign(_failed=failed)
    by_seat: dict[str, list[dict]] = {}
    for (seat, run_id), g in r.groupby(["seat", "run_id"], sort=True):
        n_failed = int(g["_failed"].sum())
        if not n_failed:
            continue
        errors = Counter(_error_text(e, f) for e, f in zip(g.loc[g["_failed"], "error"] if "error" in g else
                                                            [None] * n_failed,
                                                            g.loc[g["_failed"], "finish_reason"]
                                                            if "finish_reason" in g else [None] * n_failed))
        concs = sorted({int(c) for c in g["concurrency"].dropna()})
        by_seat.setdefault(str(seat), []).append({
            "run_id": str(run_id), "date": str(g["date"].iloc[0]), "pass": int(g["pass"].iloc[0]),
            "workloads": sorted({str(w) for w in g["workload"].dropna()}), "concurrencies": concs,
            "failed": n_failed, "requests": int(len(g)), "share": n_failed / len(g),
            "errors": [{"error": e, "count": c} for e, c in errors.most_common(ERROR_EXAMPLES)]})
    out = []
    for seat, items in sorted(by_seat.items()):
        worst = max(i["share"] for i in items)
        sev = ("critical" if worst > thresholds.failed_critical else
               "warn" if worst > thresholds.failed_warn else "info")
        n_failed, n_all = sum(i["failed"] for i in items), sum(i["requests"] for i in items)
        shown = "; ".join(_run_phrase(i) for i in sorted(items, key=lambda i: -i["share"])[:3])
        more = f"; and {len(items) - 3} more runs" if len(items) > 3 else ""
        tail = {"critical": " So many failed that the successful requests are not representative of the seat: "
                            "do not quote these figures.",
                "warn": " The figures are of the successful requests only.",
                "info": " The figures are of the successful requests only."}[sev]
        msg = (f"{seat}: {n_failed} of {n_all} requests failed ({shown}{more}).{tail}")
        ev = {"failed": n_failed, "requests": n_all, "worst_share": worst, "runs": items,
              "thresholds": _used(thresholds, "failed_warn", "failed_critical")}
        out.append(Flag("requests.failed", sev, (seat,), msg, ev))
    return out


def _error_text(error, finish_reason) -> str:
    if isinstance(error, str) and error.strip():
        return error.strip()[:200]
    return f"finish_reason {finish_reason}" if isinstance(finish_reason, str) else "failed"


def _run_phrase(i: dict) -> str:
    where = F.streams(i["concurrencies"][0]) if len(i["concurrencies"]) == 1 else f"pass {i['pass']}"
    errs = ", ".join(f"{e['count']}× {e['error']}" for e in i["errors"])
    return f"{i['failed']} of {i['requests']} ({F.pct(i['share'])}) at {where} on {i['date']}: {errs}"


def correlated_requests(passes: pd.DataFrame | None, *, thresholds: Thresholds = DEFAULT) -> list[Flag]:
    """`sample.correlated_requests`: requests of one pass, in send order, with a lag-1
    autocorrelation above `lag1_limit` (Box & Jenkins' r_1).

    Requests served in the same batches are not independent: a bootstrap over them one by
    one overstates what a single run shows. The within-run intervals use blocks (Politis &
    White 2004) for this reason; the flag says where it mattered. One flag per seat (info).
    """
    if passes is None or not len(passes) or "lag1" not in passes:
        return []
    p = passes[(passes["statistic"] == "mean") & passes["lag1"].notna()]
    p = p[p["lag1"].astype(float) > thresholds.lag1_limit]
    out = []
    for seat, g in p.groupby("seat", sort=True):
        cl = []
        for r in g.to_dict("records"):
            c = _cell_dict(r["workload"], r["concurrency"], r["metric"], None)
            c.update({"pass": int(r["pass"]), "date": str(r["date"]), "lag1": float(r["lag1"]),
                      "n_obs": None if pd.isna(r["n_obs"]) else int(r["n_obs"])})
            cl.append(c)
        cl = sorted(cl, key=_cell_order)
        top = max(c["lag1"] for c in cl)
        msg = (f"{seat}: requests next to each other in send order are correlated (lag-1 autocorrelation up to "
               f"{F.num(top)}) in {_describe_cells(cl)}. A run then holds fewer independent observations than "
               "requests; intervals within a run use blocks of consecutive requests.")
        ev = {"n_cells": len(cl), "cells": cl, "thresholds": _used(thresholds, "lag1_limit")}
        out.append(_one_cell(Flag("sample.correlated_requests", "info", (str(seat),), msg, ev), cl))
    return out


#: what our recomputation of a metric from request records is
RECOMPUTED_AS = {
    "decode_tok_s_per_stream": "per request (output tokens - 1) / (end-to-end - TTFT), then across requests",
    "ttft_ms": "from each request's time to first token",
    "itl_ms": "from each request's mean inter-token latency",
    "e2e_latency_ms": "from each request's end-to-end latency",
}


def figure_mismatch(passes: pd.DataFrame | None, runs: pd.DataFrame | None = None, *,
                    thresholds: Thresholds = DEFAULT) -> list[Flag]:
    """`import.figure_mismatch`: a figure the harness reported that its own request records,
    recomputed, do not reproduce beyond rounding.

    Two sources: the per-pass table (a run's reported figure against our statistic of its
    request records), and the checks an importer made of an aggregate the harness wrote against
    the files read (the runs table's `figure_checks`: e.g. AIPerf's mean over trials against the
    trials found). The report shows the harness's figure as printed and ours beside it; this
    flag says by how much they differ and what each is. warn when the difference exceeds the
    noise band (`noise`), info otherwise (different conventions: percentile definitions, token
    counts from the server or a re-tokenisation, a measurement window). One flag per seat.
    """
    by_seat: dict[str, list[dict]] = {}
    for c in _pass_mismatches(passes) + _import_mismatches(runs):
        by_seat.setdefault(c.pop("seat"), []).append(c)
    out = []
    for seat, cl in sorted(by_seat.items()):
        cl = sorted(cl, key=lambda c: (c.get("metric") != "trials", "against" not in c, _cell_order(c)))
        worst = max((abs(c["relative_difference"]) for c in cl if c["relative_difference"] is not None), default=0)
        sev = "warn" if worst > thresholds.noise else "info"
        parts = [_mismatch_phrase(c) for c in cl[:3]]
        more = f"; and {len(cl) - 3} more" if len(cl) > 3 else ""
        msg = (f"{seat}: figures as the harness printed them differ from a recomputation from its own "
               f"{'files' if any('against' in c for c in cl) else 'request records'} ({'; '.join(parts)}{more}). "
               "The report shows the harness's figure; the harness may aggregate differently (percentile "
               "definition, token counts, measurement window) or the files read are not all it aggregated.")
        ev = {"n_cells": len(cl), "cells": cl, "worst_relative_difference": worst,
              "thresholds": _used(thresholds, "noise")}
        out.append(_one_cell(Flag("import.figure_mismatch", sev, (str(seat),), msg, ev), cl))
    return out


def _pass_mismatches(passes: pd.DataFrame | None) -> list[dict]:
    """Cells (with `seat`) where a pass's reported figure and our recomputation differ beyond rounding."""
    if passes is None or not len(passes):
        return []
    rep = passes["reported"].astype(float).to_numpy()
    rec = passes["recomputed"].astype(float).to_numpy()
    ok = np.isfinite(rep) & np.isfinite(rec)
    if not ok.any():
        return []
    tol = np.array([F.printed_rounding(v) if math.isfinite(v) else math.nan for v in rep])
    hit = ok & (np.abs(rep - rec) > tol + 1e-12 * np.abs(rep))
    g = passes[hit].assign(_rel=(rec - rep)[hit] / np.where(rep[hit] == 0, np.nan, rep[hit]))
    cl = []
    for r in g.to_dict("records"):
        c = _cell_dict(r["workload"], r["concurrency"], r["metric"], r["statistic"])
        c.update({"seat": str(r["seat"]), "harness": None if pd.isna(r["harness"]) else str(r["harness"]),
                  "date": str(r["date"]), "pass": int(r["pass"]), "reported": float(r["reported"]),
                  "recomputed": float(r["recomputed"]), "relative_difference": _plain(r["_rel"]),
                  "n_obs": None if pd.isna(r["n_obs"]) else int(r["n_obs"])})
        cl.append(c)
    return cl


def _import_mismatches(runs: pd.DataFrame | None) -> list[dict]:
    """Cells (with `seat`) of the importers' checks that differ (runs.figure_checks, JSON lists)."""
    if runs is None or "figure_checks" not in runs or not len(runs):
        return []
    cl = []
    for r in runs[runs["figure_checks"].notna()].to_dict("records"):
        try:
            checks = json.loads(str(r["figure_checks"]))
        except ValueError:
            continue
        for k in checks if isinstance(checks, list) else []:
            rep, rec = k.get("reported"), k.get("recomputed")
            if not isinstance(rep, (int, float)) or not isinstance(rec, (int, float)):
                continue
            c = _cell_dict(k.get("workload"), k.get("concurrency"), k.get("metric"), k.get("statistic"))
            c.update({"seat": str(r["seat"]), "harness": None if pd.isna(r["harness"]) else str(r["harness"]),
                      "date": str(r["date"]), "pass": int(r["pass"]), "reported": float(rep),
                      "recomputed": float(rec), "relative_difference": (rec - rep) / rep if rep else None,
                      "n_obs": None, "against": str(k.get("against", "")), "label": str(k.get("label", "")),
                      "basis": str(k.get("basis", ""))})
            cl.append(c)
    return cl


def _mismatch_phrase(c: dict) -> str:
    """One mismatch in words: what the harness says, what ours gives, and how ours was made."""
    rel = F.pct(c["relative_difference"], signed=True) if c["relative_difference"] is not None else "differs"
    if "against" in c:
        where = f" at {F.streams(c['concurrency'])}" if c["concurrency"] is not None else ""
        return (f"{c['label']}{where}: {c['against']} says {F.num(c['reported'])}, ours gives "
                f"{F.num(c['recomputed'])} ({rel}; {c['basis']})")
    head = F.cell_phrase(c["workload"], c["concurrency"], c["metric"], c["statistic"])
    who = c["harness"] or "the harness"
    return (f"{head}: {who} reports {F.value_with_unit(c['reported'], c['metric'])}, its "
            f"{c['n_obs']} request records give {F.num(c['recomputed'])} "
            f"({rel}; ours {RECOMPUTED_AS.get(c['metric'], 'from the request records')})")
