"""Section 1, Seats and setup: what was measured, how often, with what."""
from __future__ import annotations

import pandas as pd

from benchreport import format as fmt

from .blocks import Prose, Table, ident, para, prose
from .labels import baseline_word, date_range, seat_label
from .tables import drop_unstated


def _placement(r: dict) -> str:
    """Nodes, GPUs, memory per GPU, tensor parallelism and interconnect in one phrase."""
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


def seats_table(a) -> Table:
    """Section 1: model, quantisation, engine and placement of every seat."""
    s = a.tables.seats
    comps = a.tables.components
    rows = []
    for _, r in s.iterrows():
        r = r.to_dict()
        seat = str(r["seat"])
        role = fmt.text(r.get("role"), "candidate")
        if seat == a.baseline and baseline_word(a) == "baseline":
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
    df, note = drop_unstated(df, ["Quantisation", "Engine", "Checkpoint", "Licences"])
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
    df["seat"] = [seat_label(a, s) for s in df["seat"]]
    df, note = drop_unstated(df, ["Probe", "Answer cap", "Thinking", "Requests per cell"])
    return Table(df, "Runs per seat and day: harness, probe, answer cap, whether warm-up was "
                 "excluded, passes, measured cells and request records per cell.", kind="plain",
                 group="seat", small=True, key="runs", numeric=("Passes", "Cells"), note=note,
                 nowrap=("Date",))


def setup_text(a) -> Prose:
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
    out = [para("The data set holds {} of {} ({}: {}), measured {}. {} {} used: {}; {}: {}.",
                fmt.counted(len(runs), "run"), fmt.counted(len(seats), "seat"),
                fmt.counted(len(models), "model"), fmt.join_words(models), date_range(runs["date"]),
                fmt.counted(len(harnesses), "harness", "harnesses"),
                "was" if len(harnesses) == 1 else "were", fmt.join_words(harnesses),
                fmt.counted(len(probes), "probe"), fmt.join_words(probes) or "none stated")]
    if len(passes):
        out.append(para("Passes per seat and day range from {} to {}. Concurrency levels measured: {}. "
                        "{} of {} runs record per-request data.",
                        fmt.count(passes.min()), fmt.count(passes.max()),
                        ", ".join(fmt.concurrency(c) for c in conc) or "none",
                        fmt.count(t.requests["run_id"].nunique() if len(t.requests) else 0), fmt.count(len(runs))))
    if base:
        out.append(para("Every candidate is compared against the {} {}.", baseline_word(a), ident(base)))
    else:
        out.append(para("No seat is marked as the incumbent and no baseline was given, so no "
                        "comparison against an incumbent is made."))
    return prose(out)
