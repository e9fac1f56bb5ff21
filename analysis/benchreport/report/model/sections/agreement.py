"""Section "Do the harnesses agree?": one seat's cell measured by several harnesses, side by side,
each difference explained by a named definition or flagged (issue 46). Reads `a.agreement`
(benchreport.stats.agreement; tables/agreement.csv) and nothing else."""

from __future__ import annotations

import pandas as pd

from benchreport import format as fmt
from benchreport.stats.agreement import ALIKE_BAND

from .blocks import Prose, Table, para, prose
from .labels import seat_label

__all__ = ["agreement_text", "agreement_table"]


def _rows(a) -> pd.DataFrame:
    t = getattr(a, "agreement", None)
    return t if t is not None else pd.DataFrame()


#: the reasons for leaving pairs out that the section counts, most common first (the rest counted)
LEFT_OUT_REASONS = 3


def agreement_text(a) -> Prose | None:
    """What the agreement table holds, in counts: pairs compared, agreeing, explained, flagged, not
    tested (close, or apart and flagged), left out. None when no seat's cell was measured by two
    harnesses (an empty section is not printed)."""
    t = _rows(a)
    if not len(t):
        return None
    kept = t[t["verdict"] != "left out"]
    counts = kept["explained"].value_counts()
    agree = kept[kept["explained"] == "agree"]
    alike = int(((agree["ratio_low"] >= ALIKE_BAND[0]) & (agree["ratio_high"] <= ALIKE_BAND[1])).sum())
    untested = int(counts.get("not tested, figures close", 0)), int(counts.get("not tested, figures differ", 0))
    text = [
        para(
            "Pairs of harnesses that measured one seat's cell under one load: {}. Agree within their "
            "intervals: {} ({} with the ratio's interval inside {}-{}, alike; the rest not told apart); "
            "differ, explained: {} (by recomputing both under one definition from their request records: {}); "
            "differ, unexplained (each said in Section 7): {}.{}",
            fmt.count(len(kept)),
            fmt.count(len(agree)),
            fmt.count(alike),
            fmt.ratio(ALIKE_BAND[0]),
            fmt.ratio(ALIKE_BAND[1]),
            fmt.count(int(counts.get("explained", 0)) + int(counts.get("explained by definition", 0))),
            fmt.count(int(counts.get("explained", 0))),
            fmt.count(int(counts.get("unexplained", 0))),
            f" Not tested, a figure having no interval (one pass): figures close {fmt.count(untested[0])}, "
            f"apart {fmt.count(untested[1])} (each said in Section 7)."
            if any(untested)
            else "",
        )
    ]
    left = t[t["verdict"] == "left out"]
    if len(left):
        # one count per kind of reason ("prompt lengths differ"), the most common few; their figures
        # and every other reason are in the CSV
        kinds = left["left_out"].astype(str).str.split("; ").explode().str.replace(r" \(.*\)$", "", regex=True)
        counts = kinds.value_counts()
        shown = "; ".join(f"{r}: {fmt.count(n)}" for r, n in counts.head(LEFT_OUT_REASONS).items())
        others = len(counts) - LEFT_OUT_REASONS
        text.append(
            para(
                "Pairs left out as not one condition: {} ({}{}; a pair may have several reasons; "
                "tables/agreement.csv says which and why).",
                fmt.count(len(left)),
                shown,
                f"; {fmt.counted(others, 'other reason')}" if others > 0 else "",
            )
        )
    return prose(text)


def agreement_table(a) -> Table | None:
    """Each pair that differs beyond its interval: both figures with their intervals, the ratio, the
    common recomputation and the definition that explains it, or "unexplained". The pairs that agree
    are counted in `agreement_text`; every pair is in tables/agreement.csv."""
    t = _rows(a)
    if not len(t):
        return None
    t = t[t["verdict"] == "differ"]
    if not len(t):
        return None
    rows = []
    for r in t.itertuples(index=False):
        rows.append(
            {
                "seat": seat_label(a, str(r.seat)),
                "Conc.": fmt.concurrency(r.concurrency),
                "Metric": fmt.metric_words(r.metric),
                "Harnesses": f"{r.harness_a} / {r.harness_b}",
                "A": f"{fmt.num(r.estimate_a)} {fmt.ci(r.low_a, r.high_a)}".strip(),
                "B": f"{fmt.num(r.estimate_b)} {fmt.ci(r.low_b, r.high_b)}".strip(),
                "B / A": f"{fmt.ratio(r.ratio)} {fmt.ci(r.ratio_low, r.ratio_high, fmt.ratio)}".strip(),
                "Common B / A": f"{fmt.ratio(r.common_ratio)} {fmt.ci(r.common_ratio_low, r.common_ratio_high, fmt.ratio)}".strip()
                if pd.notna(r.common_ratio)
                else "–",
                "Verdict": fmt.text(r.explained),
                "Why": fmt.text(r.differs_in) or fmt.text(r.explanation),
            }
        )
    return Table(
        pd.DataFrame(rows),
        "Pairs of harnesses whose figures for one seat's cell differ beyond their intervals (means, 95% "
        "intervals). Common: both recomputed from their request records under one definition. Every pair, "
        "agreeing or not, is in tables/agreement.csv.",
        group="seat",
        small=True,
        key="agreement",
        numeric=("Conc.",),
        widths={"Why": "30%"},
        nowrap=("A", "B", "B / A", "Common B / A"),
        dense=True,
        # the CSV's to print: the PDF names the file, the HTML keeps it collapsed; the counts above
        # are what the page says (a report's page budget has no room for a table per harness pair)
        screen_only="tables/agreement.csv",
    )
