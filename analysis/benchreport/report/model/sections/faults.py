"""Section 6, Faults and open defects: events recorded in the runs, the fault flags, failed requests."""

from __future__ import annotations

import pandas as pd

from benchreport import format as fmt

from .blocks import Prose, Table, para, prose
from .flagview import flags_of
from .labels import seat_label


def faults(a) -> tuple[Prose, Table | None]:
    """Section 6: faults, crashes and defects recorded in the runs, and the fault flags."""
    ev = a.tables.events
    ev = ev[ev["kind"].astype(str).isin(["fault", "crash", "defect"])] if ev is not None and len(ev) else ev
    f = flags_of(a)
    ff = f[f["code"].astype(str).str.match(r"^(fault|defect)\.")] if len(f) else f
    failed = f[f["code"].astype(str).isin(["requests.failed", "requests.missing"])] if len(f) else f
    failed_text = [para("{}", fmt.text(r.get("message")), css="flag-note") for _, r in failed.iterrows()]
    if ev is None or ev.empty:
        if len(failed):
            lost = "failed" if set(failed["code"].astype(str)) == {"requests.failed"} else "failed or went missing"
            return prose(
                [para(f"No fault, crash or defect was recorded as an event, but requests {lost}:"), *failed_text]
            ), None
        return prose(para("No fault, crash or defect was recorded in the runs, and no request failed.")), None
    n_unrep = int((ev["reproduced"] == False).sum()) if "reproduced" in ev.columns else 0  # noqa: E712
    n_open = int(ev["reproduced"].isna().sum()) if "reproduced" in ev.columns else len(ev)
    text = [
        para(
            "{} recorded: {} not seen again in later runs, {} with no record of whether "
            "it recurred. None of them is resolved by the data; each is an open defect until a "
            "run shows otherwise.",
            fmt.counted(len(ev), "fault or defect", "faults or defects"),
            fmt.count(n_unrep),
            fmt.count(n_open),
        )
    ]
    for _, r in ff.iterrows():
        text.append(para("{}", fmt.text(r.get("message")), css="flag-note"))
    text += failed_text
    rows = []
    for _, r in ev.sort_values(["seat", "date", "pass"]).iterrows():
        rep = r.get("reproduced")
        rows.append(
            {
                "seat": seat_label(a, str(r["seat"])),
                "Date": fmt.text(r["date"]),
                "Pass": fmt.count(r["pass"]),
                "Kind": fmt.text(r["kind"]),
                "Conc.": fmt.concurrency(r.get("concurrency")),
                "Reproduced": "unknown" if fmt.missing(rep) else ("yes" if rep else "no"),
                "What happened": fmt.text(r.get("message")),
            }
        )
    tbl = Table(
        pd.DataFrame(rows),
        "Faults, crashes and defects recorded in the runs.",
        group="seat",
        small=True,
        key="faults",
        numeric=("Pass", "Conc."),
        widths={"What happened": "50%", "Seat": "22%"},
    )
    return prose(text), tbl
