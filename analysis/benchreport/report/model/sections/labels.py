"""Words every section shares: the seat label, what the baseline is called, dates, the CI level."""

from __future__ import annotations

from typing import Iterable

import pandas as pd

from benchreport import format as fmt


def report_styles(a) -> dict:
    """The report's one style (colour, marker, line) per seat, made over every seat of the report
    with the baseline first: every figure draws a seat in it, whichever seats the figure shows
    (issue 42: a seat never changes colour between figures)."""
    from benchreport.report.model.figures import seat_styles

    seats = a.tables.seats["seat"].astype(str) if a.tables.seats is not None and len(a.tables.seats) else []
    return seat_styles(seats, a.baseline)


def ci_level(a) -> str:
    """The level of the report's intervals: '95%' (`format.level` of the alpha used)."""
    return fmt.level(a.options.thresholds.alpha)


def seat_row(a, seat: str) -> dict:
    """A seat's row of the seats table as a dict ({'seat': id} for an unknown seat)."""
    return dict(_seat_rows(a).get(seat) or {"seat": seat})


def _seat_rows(a) -> dict:
    """Every seat's row by id, made once per seats table (a report asks for a seat's label some
    fifty times; filtering the table each time was a tenth of the report's text)."""
    s = a.tables.seats
    cached = getattr(a, "_benchreport_seat_rows", None)
    if cached is None or cached[0] is not s:
        rows: dict = {}
        for index in range(len(s)):
            rows.setdefault(s["seat"].iloc[index], s.iloc[index].to_dict())
        cached = (s, rows)
        try:
            a._benchreport_seat_rows = cached
        except AttributeError:  # an object that takes no attributes: no cache
            pass
    return cached[1]


def seat_role(a, seat: str) -> str:
    """A seat's declared role ('candidate' when none is stated)."""
    return fmt.text(seat_row(a, seat).get("role"), "candidate")


def baseline_word(a) -> str:
    """What the report calls `Analysis.baseline`: 'incumbent' when that is its role, else 'baseline'."""
    return "incumbent" if seat_role(a, a.baseline) == "incumbent" else "baseline"


def seat_label(a, seat: str) -> str:
    """A seat as tables name it: 'id (model, incumbent)'; the one seat label of the report.

    Whole: the renderer shortens it for display (`render.display_cell`) and keeps it as the
    cell's title; tables/*.csv keep it whole too.
    """
    r = seat_row(a, seat)
    bits = [str(seat)]
    extra = []
    if not fmt.missing(r.get("model")):
        extra.append(str(r["model"]))
    role = fmt.text(r.get("role"))
    if seat == a.baseline:
        extra.append(baseline_word(a))
    elif role and role != "candidate":
        extra.append(role)
    if extra:
        bits.append("(" + ", ".join(extra) + ")")
    return " ".join(bits)


def order_seats(a, seats: Iterable[str]) -> list[str]:
    """Seats sorted, `Analysis.baseline` first."""
    seats = sorted({str(s) for s in seats})
    b = a.baseline
    if b in seats:
        seats.remove(b)
        seats.insert(0, b)
    return seats


def date_range(dates: Iterable) -> str:
    """'on 2026-09-10', 'between 2026-09-10 and 2026-10-28'."""
    ds = sorted({str(d) for d in dates if not fmt.missing(d)})
    if not ds:
        return "on an unstated date"
    if len(ds) == 1:
        return f"on {ds[0]}"
    return f"between {ds[0]} and {ds[-1]}"


def column(df: pd.DataFrame, name: str) -> list:
    """A frame's column as a list (Nones where the frame has no such column)."""
    return df[name].tolist() if name in df.columns else [None] * len(df)
