"""Section 1, Seats and setup: what was measured, how often, with what."""

from __future__ import annotations

import pandas as pd

from benchreport import format as fmt

from .blocks import Prose, Table, ident, para, prose
from .memo import once_per_table
from .labels import baseline_word, models_words, runs_date_range, seat_label
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
        rows.append(
            {
                "Seat": seat,
                "Role": role,
                "Model": fmt.text(r.get("model")),
                "Quantisation": fmt.text(r.get("quantisation"), "not stated"),
                "Engine": fmt.text(r.get("engine"), "not stated"),
                "Placement": _placement(r),
                "Checkpoint": fmt.gb(r.get("checkpoint_bytes")) if fmt.finite(r.get("checkpoint_bytes")) else "–",
                "Licences": ", ".join(lic) or "–",
            }
        )
    df = pd.DataFrame(
        rows, columns=["Seat", "Role", "Model", "Quantisation", "Engine", "Placement", "Checkpoint", "Licences"]
    )
    df, note = drop_unstated(df, ["Quantisation", "Engine", "Checkpoint", "Licences"])
    return Table(
        df,
        "Seats: model, quantisation, engine and placement, with the licences of their "
        "components as declared in the run files.",
        kind="plain",
        small=True,
        dense=True,
        landscape=False,
        key="seats",
        mono=("Seat",),
        widths={"Seat": "24%"},
        note=note,
    )


def _request_counts(a) -> pd.DataFrame:
    """Request records per run and cell (run_id, workload, concurrency, n): counted from the records
    held in memory, else as the pass table counts them (`Analysis.request_counts`: the run store
    holds only the described runs' records in memory; each pass row knows its group's count)."""
    frames, have = [], set()
    rq = a.tables.requests
    if rq is not None and len(rq):
        c = rq.groupby(["run_id", "workload", "concurrency"], dropna=False).size().rename("n").reset_index()
        frames.append(c)
        have = set(c["run_id"].astype(str))
    q = a.request_counts
    if q is not None and len(q):
        q = q[~q["run_id"].astype(str).isin(have)]
        frames.append(q.rename(columns={"n_requests": "n"}))
    if not frames:
        return pd.DataFrame({"run_id": [], "workload": [], "concurrency": [], "n": []})
    out = pd.concat([f.astype({"run_id": object, "workload": object}) for f in frames], ignore_index=True)
    out["concurrency"] = pd.array(out["concurrency"], dtype="Int64")
    return out


def _runs_rows(a) -> list[dict]:
    """One row per seat, date, harness (version), probe and load."""
    t = a.tables
    runs = t.runs
    if "load_label" not in runs:
        runs = runs.assign(load_label=None)
    keys = ["seat", "date", "harness", "harness_version", "probe", "load_label"]
    gid = runs.groupby(keys, dropna=False, sort=True).ngroup()
    of_run = dict(zip(runs["run_id"].astype(str), gid))
    meas = t.measurements
    ncells: dict = {}
    if meas is not None and len(meas):
        m = meas.assign(_g=meas["run_id"].astype(str).map(of_run))
        ncells = (
            m.drop_duplicates(["_g", "workload", "concurrency", "metric", "statistic"]).groupby("_g").size().to_dict()
        )
    counts = _request_counts(a)
    per_group: dict = {}
    if len(counts):
        counts["_g"] = counts["run_id"].astype(str).map(of_run)
        cells = counts.dropna(subset=["_g"]).groupby(["_g", "workload", "concurrency"], dropna=False)["n"].sum()
        # each group's cells by their positions, not a pandas group at a time (a fleet's year: 36,500)
        values = cells.to_numpy()
        per_group = {g: values[pos] for g, pos in cells.groupby(level=0).indices.items()}
    cap_t = [fmt.text(x) for x in runs["max_tokens"]]
    think_t = [fmt.text(x) for x in runs["thinking"]]
    warm_t = [fmt.text(x) for x in runs["warmup_excluded"]]
    passes = runs["pass"].tolist()
    rows = []
    groups = runs.groupby(keys, dropna=False, sort=True).indices  # positions, in ngroup's order
    for gi, (k, pos) in enumerate(groups.items()):
        seat, date, harness, hver, probe, load = k
        per = per_group.get(gi)
        if per is not None and len(per):
            spread = fmt.count(per[0]) if len(set(per.tolist())) == 1 else fmt.span(per.min(), per.max())
            req = spread + (f" in {fmt.counted(len(per), 'cell')}" if len(per) > 1 else "")
        else:
            req = "none"
        cap = {cap_t[i] for i in pos} - {""}
        think = {think_t[i] for i in pos} - {""}
        warm = {warm_t[i] for i in pos}
        rows.append(
            {
                "seat": str(seat),
                "Date": fmt.text(date),
                "Harness": fmt.text(harness) + (f" {hver}" if not fmt.missing(hver) else ""),
                "Probe": fmt.text(probe, "not stated"),
                "Load": fmt.text(load, "not described"),
                "Answer cap": ", ".join(sorted(cap)) or "not stated",
                "Thinking": ", ".join(sorted(think)) or "not stated",
                "Warm-up excluded": ", ".join(sorted(w or "unknown" for w in warm)),
                "Passes": fmt.count(len({passes[i] for i in pos})),
                "Cells": fmt.count(ncells.get(gi, 0)),
                "Requests per cell": req,
                "_name": fmt.text(harness),
                "_version": "" if fmt.missing(hver) else str(hver),
            }
        )
    return rows


_SETTING = (
    "Harness",
    "Probe",
    "Load",
    "Answer cap",
    "Thinking",
    "Warm-up excluded",
    "Passes",
    "Cells",
    "Requests per cell",
)


def _collapse_dates(rows: list[dict]) -> list[dict]:
    """A seat's consecutive dates measured the same way as one row, 'first to last (N dates)': a
    year of nightly runs is one row per seat and setting, not 365 ("consecutive" in the seat's
    own dates, so a second harness on the same nights does not break the run)."""
    out: list[tuple] = []
    by_seat: dict[str, list[tuple[int, dict]]] = {}
    for i, r in enumerate(rows):
        by_seat.setdefault(r["seat"], []).append((i, r))
    for _seat, items in by_seat.items():
        dates = sorted({r["Date"] for _, r in items})
        at = {d: n for n, d in enumerate(dates)}
        runs: dict[tuple, list] = {}
        for i, r in items:
            key = tuple(r[c] for c in _SETTING)
            open_runs = runs.setdefault(key, [])
            if open_runs and at[r["Date"]] == at[open_runs[-1][-1][1]["Date"]] + 1:
                open_runs[-1].append((i, r))
            else:
                open_runs.append([(i, r)])
        for chunks in runs.values():
            for chunk in chunks:
                first_i, first = chunk[0]
                row = dict(first)
                if len(chunk) > 1:
                    row["Date"] = f"{first['Date']} to {chunk[-1][1]['Date']} ({fmt.counted(len(chunk), 'date')})"
                out.append((first_i, row))
    return [r for _, r in sorted(out, key=lambda x: x[0])]


#: rows the runs table may have in Section 1; past them, Section 1 has one row per harness and the
#: appendix the runs per seat and day (a folder of many harnesses' captures: 55 rows, a page and a
#: half, left half a page empty before Table 1's landscape page, issue 27)
RUNS_BODY_ROWS = 30


def _runs_frame(a) -> tuple[pd.DataFrame, str | None]:
    """The runs per seat and day (`_runs_rows`, consecutive dates collapsed) as the table shows them;
    made once per analysis (Section 1 and the appendix both ask, and a fleet's year has 90,000 runs)."""
    return once_per_table(a, "runs_frame", a.tables, lambda: _make_runs_frame(a))


def _make_runs_frame(a) -> tuple[pd.DataFrame, str | None]:
    rows = _collapse_dates(_runs_rows(a))
    df = pd.DataFrame(
        rows,
        columns=[
            "seat",
            "Date",
            "Harness",
            "Probe",
            "Load",
            "Answer cap",
            "Thinking",
            "Warm-up excluded",
            "Passes",
            "Cells",
            "Requests per cell",
            "_name",
            "_version",
        ],
    )
    labels = {s: seat_label(a, s) for s in set(df["seat"])}
    df["seat"] = [labels[s] for s in df["seat"]]
    return drop_unstated(df, ["Probe", "Load", "Answer cap", "Thinking", "Requests per cell"])


def _runs_per_seat_table(df: pd.DataFrame, note: str | None, kind: str) -> Table:
    return Table(
        df.drop(columns=["_name", "_version"]),
        "Runs per seat and day: harness, probe, the load sent (as the harness recorded it), "
        "answer cap, whether warm-up was excluded, passes, measured cells and request records "
        "per cell.",
        kind=kind,
        group="seat",
        small=True,
        dense=True,
        landscape=False,
        key="runs",
        numeric=("Passes", "Cells"),
        note=note,
        nowrap=("Date",),
    )


def _joined(values) -> str:
    return ", ".join(sorted({str(v) for v in values} - {""})) or "not stated"


def _methods_table(df: pd.DataFrame) -> Table:
    """One row per harness: its versions, the seats and dates it measured, its loads, warm-up and passes."""
    rows = []
    for name, g in df.groupby("_name", sort=True):
        dates = sorted({d for v in g["Date"] for d in str(v).replace(" to ", " ").split() if d[:2] == "20"})
        passes = pd.to_numeric(g["Passes"], errors="coerce")
        loads = g["Load"] if "Load" in g else pd.Series(dtype=str)
        rows.append(
            {
                "Harness": name,
                "Versions": _joined(g["_version"]),
                "Seats": fmt.count(g["seat"].nunique()),
                "Dates": dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}" if dates else "not stated",
                "Loads": fmt.count(loads.nunique()) if len(loads) else "not described",
                "Warm-up excluded": _joined(w.strip() for v in g["Warm-up excluded"] for w in str(v).split(",")),
                "Passes": fmt.span(passes.min(), passes.max())
                if passes.min() != passes.max()
                else fmt.count(passes.min()),
                "Rows": fmt.count(len(g)),
            }
        )
    return Table(
        pd.DataFrame(rows),
        "How the runs were measured, per harness: its versions, the seats and dates it "
        "measured, the number of distinct loads it sent, whether warm-up was excluded and the passes "
        "per seat and day.",
        kind="plain",
        small=True,
        key="methods",
        numeric=("Seats", "Loads", "Rows"),
        note="Rows: the harness's rows in the appendix's table of runs per seat and day, which gives "
        "each load, answer cap, cell count and request records.",
    )


def runs_table(a) -> Table:
    """Section 1: harness, probe, answer cap, passes, cells and request records per seat and day
    (consecutive days measured the same way in one row); past `RUNS_BODY_ROWS` rows, one row per
    harness (`runs_appendix_table` has the runs per seat and day)."""
    df, note = _runs_frame(a)
    if len(df) > RUNS_BODY_ROWS:
        return _methods_table(df)
    return _runs_per_seat_table(df, note, "plain")


def runs_appendix_table(a) -> Table | None:
    """The runs per seat and day in the appendix, when Section 1 has one row per harness instead."""
    df, note = _runs_frame(a)
    if len(df) <= RUNS_BODY_ROWS:
        return None
    return _runs_per_seat_table(df, note, "appendix")


def setup_text(a) -> Prose:
    """Section 1's prose: what was measured, how often, with what."""
    t = a.tables
    seats, runs = t.seats, t.runs
    harnesses = sorted({fmt.text(h) for h in runs["harness"]})
    probes = sorted({fmt.text(p) for p in runs["probe"]} - {""})
    passes = runs.groupby(["seat", "date"])["pass"].nunique()
    conc = sorted(
        {
            int(c)
            for frame in (t.measurements, t.requests)
            if len(frame)
            for c in pd.to_numeric(frame["concurrency"], errors="coerce").dropna()
        }
    )
    base = a.baseline
    out = [
        para(
            "The data set holds {} of {} ({}), measured {}. {} {} used: {}; {}.",
            fmt.counted(len(runs), "run"),
            fmt.counted(len(seats), "seat"),
            models_words(seats),
            runs_date_range(runs),
            fmt.counted(len(harnesses), "harness", "harnesses"),
            "was" if len(harnesses) == 1 else "were",
            fmt.join_words(harnesses),
            f"{fmt.counted(len(probes), 'probe')}: {fmt.join_words(probes)}" if probes else "no run names its probe",
        )
    ]
    if len(passes):
        out.append(
            para(
                "Passes per seat and day range from {} to {}. Concurrency levels measured: {}. "
                "{} of {} runs record per-request data.",
                fmt.count(passes.min()),
                fmt.count(passes.max()),
                ", ".join(fmt.concurrency(c) for c in conc) or "none",
                fmt.count(t.requests["run_id"].nunique() if len(t.requests) else 0),
                fmt.count(len(runs)),
            )
        )
    if base:  # with none, the abstract and Section 3 say so (each fact once, issue 27)
        out.append(para("Every candidate is compared against the {} {}.", baseline_word(a), ident(base)))
    return prose(out)
