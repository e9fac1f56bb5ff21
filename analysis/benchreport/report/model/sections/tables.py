"""Row budgets of the report's tables and the helpers that keep wide tables readable."""

from __future__ import annotations

from typing import Iterable, Sequence

import pandas as pd

from benchreport.report.model import figures as F


#: how many rows Table 1 may have before the full table moves to the appendix
MAX_BODY_ROWS = 80


#: how many rows the comparison table may have before every comparison moves to the appendix
MAX_COMPARISON_ROWS = 60


#: seats a figure shows before it falls back to the baseline plus the top seats
TOP_SEATS = 8


#: a table longer than this says a column with one value once, in its note
LONG_TABLE_ROWS = 24


UNSTATED = {"", "–", "not stated", "not described", "none", "unknown"}


def drop_unstated(df: pd.DataFrame, cols: Sequence[str]) -> tuple[pd.DataFrame, str | None]:
    """Drop columns stated for no row, and say which: an empty column says nothing, a note does."""
    gone = [c for c in cols if c in df.columns and df[c].map(lambda v: str(v).strip() in UNSTATED).all()]
    if not gone:
        return df, None
    return df.drop(columns=gone), f"Not stated for any seat: {', '.join(c.lower() for c in gone)}."


#: metric names in a wide table, where every column counts (the note spells out the short ones)
WIDE_METRIC_LABELS = {
    "output_tok_s": "aggregate throughput",
    "decode_tok_s_per_stream": "per-stream decode",
    "prefill_tok_s": "prefill",
    "ttft_ms": "TTFT",
    "itl_ms": "ITL",
    "e2e_latency_ms": "E2E latency",
    "request_rate": "request rate",
    "engine_init_s": "engine start-up",
}


_ABBREVIATIONS = {"TTFT": "time to first token", "ITL": "inter-token latency", "E2E": "end-to-end"}


def abbreviations(labels: Iterable[str]) -> str:
    """'TTFT: time to first token; ...' for the short names among `labels`."""
    used = {w for label in set(labels) for w in str(label).split() if w in _ABBREVIATIONS}
    return ("; ".join(f"{k}: {v}" for k, v in _ABBREVIATIONS.items() if k in used) + ".") if used else ""


def wide_metric(metric: str, unit: str) -> str:
    """'TTFT (ms)': a metric and its unit in one column."""
    name = WIDE_METRIC_LABELS.get(metric) or F.metric_label(metric, unit=False)
    return f"{name} ({unit})" if unit else name


def constant_columns(df: pd.DataFrame, cols: Sequence[str]) -> tuple[pd.DataFrame, str]:
    """Move the columns of `cols` that hold one value on every row (of several) to a note."""
    if len(df) < 2:
        return df, ""
    same = [c for c in cols if c in df.columns and df[c].nunique(dropna=False) == 1]
    if not same:
        return df, ""
    said = ", ".join(f"{c.rstrip('.').lower()} {df[c].iloc[0]}" for c in same)
    return df.drop(columns=same), f"Every row: {said}."


def drop_empty(df: pd.DataFrame, cols: Iterable[str]) -> pd.DataFrame:
    """Leave out the columns of `cols` that no row fills."""
    gone = [c for c in cols if c in df.columns and not (df[c].astype(str).str.strip() != "").any()]
    return df.drop(columns=gone) if gone else df
