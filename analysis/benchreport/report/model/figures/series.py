"""What a figure's series is: one seat's cells of one workload, harness, probe and load.

A line or a CI band joins points of one series only, so it never runs between figures of
different harnesses or of different recorded loads (benchreport.conditions): those measure
different things. A series is named by its workload, with the harness, probe and load in
words where the frame holds the workload measured more than one way.
"""

from __future__ import annotations

import pandas as pd

from benchreport import format as fmt

__all__ = ["with_series"]

_METHOD = ("harness", "probe", "load")


def with_series(cells: pd.DataFrame) -> pd.DataFrame:
    """`cells` with a `series` column: the workload (and its measurement condition), plus the
    harness, probe and load that tell it from the workload's other series in this frame."""
    d = cells.copy()
    work = [
        fmt.workload_label(w, c) for w, c in zip(d["workload"], d["condition"] if "condition" in d else [None] * len(d))
    ]
    parts = {c: (d[c].map(fmt.text).tolist() if c in d else [""] * len(d)) for c in _METHOD}
    methods: dict[str, set] = {}
    for i, w in enumerate(work):
        methods.setdefault(w, set()).add(tuple(parts[c][i] for c in _METHOD))
    names = []
    for i, w in enumerate(work):
        mine = tuple(parts[c][i] for c in _METHOD)
        ways = methods[w]
        told = [x for j, x in enumerate(mine) if x and len({m[j] for m in ways}) > 1]
        names.append(f"{w} ({', '.join(told)})" if told else w)
    d["series"] = names
    return d
