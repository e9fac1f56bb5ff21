"""The flags table as others read it: JSON records (`benchreport flags --json`), a plain-text
table for the terminal, and whether `--fail-on` is met."""

from __future__ import annotations

import shutil
import textwrap

import pandas as pd

from benchreport import format as F
from .codes import SEVERITIES

__all__ = ["flags_to_records", "render_table", "fail_on_met"]

_LEVELS = {"warn": {"warn", "critical"}, "critical": {"critical"}}


def _cell(row) -> dict | None:
    vals = {k: row[k] for k in ("workload", "concurrency", "metric", "statistic")}
    if all(F.missing(v) for v in vals.values()):
        return None
    return {
        "workload": None if F.missing(vals["workload"]) else str(vals["workload"]),
        "concurrency": None if F.missing(vals["concurrency"]) else int(vals["concurrency"]),
        "metric": None if F.missing(vals["metric"]) else str(vals["metric"]),
        "statistic": None if F.missing(vals["statistic"]) else str(vals["statistic"]),
    }


def flags_to_records(df: pd.DataFrame) -> list[dict]:
    """The flags in the JSON shape of spec/flags.md, in table order:
    `{code, severity, seats: [...], cell: {workload, concurrency, metric, statistic} | null,
    message, evidence}` (JSON-ready Python objects)."""
    out = []
    for _, row in df.iterrows():
        out.append(
            {
                "code": str(row["code"]),
                "severity": str(row["severity"]),
                "seats": [str(s) for s in row["seats"]],
                "cell": _cell(row),
                "message": str(row["message"]),
                "evidence": row["evidence"] or {},
            }
        )
    return out


def fail_on_met(df: pd.DataFrame, level: str) -> bool:
    """Whether `--fail-on LEVEL` is met: "warn" by any warn or critical flag, "critical" by a critical one."""
    if level not in _LEVELS:
        raise ValueError(f"`level` must be 'warn' or 'critical'; got {level!r}")
    if df is None or df.empty:
        return False
    return bool(df["severity"].isin(_LEVELS[level]).any())


def _cell_text(row) -> str:
    c = _cell(row)
    if c is None:
        return "-"
    parts = [c["workload"] or "-"]
    if c["concurrency"] is not None:
        parts.append(f"c={c['concurrency']}")
    if c["metric"]:
        parts.append(c["metric"] + (f":{c['statistic']}" if c["statistic"] and c["statistic"] != "mean" else ""))
    return " ".join(parts)


def render_table(df: pd.DataFrame, *, width: int | None = None) -> str:
    """A plain-text table of the flags for the terminal (severity, code, seats, cell, message),
    messages wrapped to `width` (default: the terminal's, at least 100), and a count line."""
    if df is None or df.empty:
        return "No flags raised: nothing in these data limits what the numbers carry."
    if width is None:
        width = max(100, shutil.get_terminal_size((120, 24)).columns)
    rows = [
        [str(r["severity"]), str(r["code"]), ", ".join(r["seats"]) or "-", _cell_text(r), str(r["message"])]
        for _, r in df.iterrows()
    ]
    head = ["SEVERITY", "CODE", "SEATS", "CELL", "MESSAGE"]
    caps = [8, 25, 34, 26]
    widths = [min(cap, max(len(head[i]), *(len(r[i]) for r in rows))) for i, cap in enumerate(caps)]
    while width - sum(widths) - 2 * len(widths) < 40 and (widths[2] > 14 or widths[3] > 14):
        j = 2 if widths[2] >= widths[3] else 3  # narrow the seats and cell columns first
        widths[j] -= 1
    msg_w = max(30, width - sum(widths) - 2 * len(widths))
    widths.append(msg_w)
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip(), "  ".join("-" * w for w in widths)]
    for r in rows:
        wrapped = [
            textwrap.wrap(text, w, break_long_words=True, break_on_hyphens=False) or [""] for text, w in zip(r, widths)
        ]
        for i in range(max(len(w) for w in wrapped)):
            lines.append("  ".join((w[i] if i < len(w) else "").ljust(wd) for w, wd in zip(wrapped, widths)).rstrip())
    counts = df["severity"].value_counts()
    summary = ", ".join(f"{int(counts.get(s, 0))} {s}" for s in SEVERITIES)
    lines.append("")
    lines.append(f"{len(df)} flag{'s' if len(df) != 1 else ''}: {summary}")
    return "\n".join(lines)
