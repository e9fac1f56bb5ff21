"""The flags as the report reads them: rows, seats, cells, evidence, order, excluded figures."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from benchreport import format as fmt
from benchreport.flags import codes


#: most severe first (benchreport.flags.codes.SEVERITIES); an unknown severity after them
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


def flags_of(a) -> pd.DataFrame:
    """The analysis's flags; an empty frame with the flag columns when there are none."""
    f = getattr(a, "flags", None)
    if f is None or len(f) == 0:
        return pd.DataFrame(
            columns=[
                "code",
                "severity",
                "seats",
                "workload",
                "concurrency",
                "metric",
                "statistic",
                "message",
                "evidence",
            ]
        )
    return f


def flag_cell(row) -> dict:
    """workload/concurrency/metric/statistic of a flag row (flat columns or a `cell` dict)."""
    cell = row.get("cell") if hasattr(row, "get") else None
    out = {}
    for k in ("workload", "concurrency", "metric", "statistic"):
        v = row.get(k) if hasattr(row, "get") else None
        if fmt.missing(v) and isinstance(cell, dict):
            v = cell.get(k)
        out[k] = None if fmt.missing(v) else v
    return out


def evidence(row) -> dict:
    """A flag row's evidence as a dict (JSON text read; {} when there is none)."""
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
    f = flags_of(a)
    if f.empty:
        return f
    key_sev = f["severity"].map(lambda s: SEVERITY_RANK.get(str(s), len(SEVERITY_RANK)))
    key_code = f["code"].map(lambda c: codes.priority_of(str(c)))
    return f.assign(_s=key_sev, _c=key_code).sort_values(["_s", "_c"], kind="stable").drop(columns=["_s", "_c"])


def excluded_figures(a) -> list[dict]:
    """Figures a flag excludes from results (trap.prefix_cache), from the flags' evidence.

    Each: seat, workload, concurrency, metric, statistic, value, run_id and the flag's
    message. The statistics layer may already have left them out of the cells; either
    way `result_cells` makes sure no cell in Table 1 carries one.
    """
    f = flags_of(a)
    out = []
    if f.empty:
        return out
    for _, fr in f[f["code"].astype(str) == "trap.prefix_cache"].iterrows():
        ev = evidence(fr)
        seats = flag_seats(fr.get("seats"))
        entries = ev.get("excluded") or []
        if not entries and fmt.finite(ev.get("value")):
            entries = [{**flag_cell(fr), "value": ev.get("value")}]
        for e in entries:
            if not isinstance(e, dict) or not fmt.finite(e.get("value")):
                continue
            out.append(
                {
                    "seat": e.get("seat") or (seats[0] if seats else None),
                    "workload": e.get("workload"),
                    "concurrency": e.get("concurrency"),
                    "metric": e.get("metric"),
                    "statistic": e.get("statistic"),
                    "value": float(e["value"]),
                    "run_id": e.get("run_id"),
                    "message": fmt.text(fr.get("message")),
                }
            )
    return out


def first_chunk_cells(a) -> list[dict]:
    """TTFT cells `trap.first_chunk` says time a chunk that carried no token (a role-only first
    chunk): seat, workload, concurrency, harness and load (in words), from the flags' evidence.
    Such a TTFT is not quoted as a time to first token (`result_cells` leaves it out)."""
    f = flags_of(a)
    out = []
    if f.empty:
        return out
    for _, fr in f[f["code"].astype(str) == "trap.first_chunk"].iterrows():
        seats = flag_seats(fr.get("seats"))
        for c in evidence(fr).get("cells") or []:
            if isinstance(c, dict):
                out.append(
                    {
                        "seat": seats[0] if seats else None,
                        "workload": c.get("workload"),
                        "concurrency": c.get("concurrency"),
                        "harness": c.get("harness"),
                        "load": c.get("load"),
                    }
                )
    return out
