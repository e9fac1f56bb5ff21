"""Section 5, Measurement traps found: one numbered finding per trap or drift flag, with its evidence."""

from __future__ import annotations

import numpy as np

from benchreport import format as fmt
from benchreport.flags import codes

from .blocks import Prose, division, idents, para, prose
from .flagview import evidence, flag_seats, sorted_flags


def trap_order() -> list[str]:
    """The codes section 5 tells, in its order: the measurement traps first, then the stability
    findings, each in the order of `codes.CODES` (`codes.trap_codes`)."""
    return sorted(codes.trap_codes(), key=lambda c: codes.CODES[c].group != "traps")


#: evidence a finding's line leaves out: nested records (flags.json has them) and the thresholds,
#: which are the build's and stated once, in the appendix's table of thresholds (issue 27)
_EVIDENCE_SKIP = {"excluded", "cells", "exams", "models", "only", "source", "thresholds"}


def _evidence_value(v) -> str | None:
    """One evidence value as text; None for what is not shown (missing, empty, nested records)."""
    if fmt.missing(v) or isinstance(v, dict) and not v:
        return None
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (int, np.integer, float, np.floating)):
        return fmt.num(v)
    if isinstance(v, (list, tuple)):
        if not v or any(isinstance(x, (dict, list, tuple)) for x in v):
            return None
        shown = [_evidence_value(x) or "" for x in v[:8]]
        return ", ".join(shown) + (f" and {fmt.count(len(v) - 8)} more" if len(v) > 8 else "")
    if isinstance(v, dict):
        if any(isinstance(x, (dict, list, tuple)) for x in v.values()):
            return None
        return ", ".join(f"{k} {_evidence_value(x)}" for k, x in v.items())
    return str(v)


def evidence_text(ev: dict) -> str:
    """A flag's evidence as one line of 'name: value' pairs (nested records left to flags.json)."""
    bits = []
    for k, v in ev.items():
        if k in _EVIDENCE_SKIP:
            continue
        shown = _evidence_value(v)
        if shown:
            bits.append(f"{str(k).replace('_', ' ')}: {shown}")
    return "; ".join(bits)


def traps(a, *, max_each: int = 4) -> Prose:
    """Section 5: one numbered heading per kind of trap or drift, each of its flags with its
    figures and evidence beneath it (a heading per flag repeated the same title, issue 27).

    A code raised more than `max_each` times (fleet scale) becomes one finding: two
    examples and the list of the other seats.
    """
    f = sorted_flags(a)
    order = {c: i for i, c in enumerate(trap_order())}
    sel = f[f["code"].astype(str).isin(list(order))] if len(f) else f
    if sel.empty:
        return prose(
            para(
                "No measurement trap was found: no prefix-cache hit, no reasoning-field "
                "mismatch, no capped answers, no drift between passes."
            )
        )
    sel = sel.assign(_o=sel["code"].map(order)).sort_values("_o", kind="stable")
    items = []
    for code, g in sel.groupby("code", sort=False):
        if code == "warmup.unknown":
            seats = sorted({s for v in g["seats"] for s in flag_seats(v)})
            body = para(
                "{} {} not say whether warm-up requests were excluded, so their first "
                "requests may carry start-up effects: {}.",
                fmt.counted(len(seats), "seat's runs", "seats' runs"),
                "does" if len(seats) == 1 else "do",
                idents(seats),
            )
            items.append((codes.CODES[code].trap_title, [body], ""))
            continue
        if len(g) > max_each:
            shown = g.head(2)
            rest = sorted({x for v in g.iloc[2:]["seats"] for x in flag_seats(v)})
            body = [para("{}", fmt.text(r.get("message"))) for _, r in shown.iterrows()]
            body.append(
                para(
                    "The same holds for {} more: {}. Each is in Section 7 and in flags.json, with its figures.",
                    fmt.counted(len(g) - 2, "case"),
                    idents(rest),
                )
            )
            items.append((f"{codes.CODES[code].trap_title} ({fmt.counted(len(g), 'case')})", body, ""))
            continue
        # one heading per kind of finding: each case its message, then its evidence line
        body = []
        for _, r in g.iterrows():
            ev = evidence_text(evidence(r))
            body += [
                para("{}", fmt.text(r.get("message"))),
                *([para("Evidence: {}", ev, css="evidence")] if ev else []),
            ]
        title = codes.CODES[code].trap_title
        items.append((title if len(g) == 1 else f"{title} ({fmt.counted(len(g), 'case')})", body, ""))
    # findings: each flag, but the seats without a warm-up record are one, and so is a code condensed
    counts = sel["code"].value_counts()
    n = int(sum(1 if c == "warmup.unknown" or k > max_each else k for c, k in counts.items()))
    out = [
        para(
            "{} found. Each is stated with its figures; a figure excluded here is not in Table 1 or any figure.",
            fmt.counted(n, "trap or instability", "traps or instabilities"),
        )
    ]
    for i, (title, body, ev) in enumerate(items, 1):
        evidence_line = [para("Evidence: {}", ev, css="evidence")] if ev else []
        out.append(division("finding", [*body, *evidence_line], heading=f"5.{fmt.count(i)} {title}"))
    return prose(division("findings", out))
