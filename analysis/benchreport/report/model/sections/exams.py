"""Section 4, Exams: scores as recorded, exact tests of the deltas, the forest plot."""

from __future__ import annotations

import pandas as pd

from benchreport import format as fmt
from benchreport.report.model import figures as F

from .blocks import FigureBlock, Prose, Table, figure_block, para, prose
from .labels import ci_level, seat_label


def exam_scores_table(a) -> Table | None:
    """Exam scores per seat (counts, published score, when measured)."""
    e = a.tables.exams
    if e is None or e.empty:
        return None
    rows = []
    for _, r in e.sort_values(["seat", "benchmark", "dimension"], na_position="first").iterrows():
        when = fmt.text(r.get("measured_on"))
        if not when and r.get("from_earlier_run") is True:
            when = "earlier run, date unknown"
        elif not when:
            when = fmt.text(r.get("date"))
        rows.append(
            {
                "seat": seat_label(a, str(r["seat"])),
                "Benchmark": fmt.text(r["benchmark"]),
                "Dimension": fmt.text(r.get("dimension"), "–"),
                "Correct": fmt.fraction(r.get("correct"), r.get("total")),
                "Published score": fmt.num(r.get("score")),
                "Measured": when,
                "Note": (
                    "from items"
                    if r.get("from_items") is True
                    else ("count from score: " + fmt.text(r.get("count_rounding")))
                    if not fmt.missing(r.get("count_rounding"))
                    else "counts only"
                )
                + ("; " + fmt.text(r.get("placement_note")) if not fmt.missing(r.get("placement_note")) else ""),
            }
        )
    df = pd.DataFrame(rows)
    return Table(
        df,
        "Exam scores as recorded: correct answers of the items asked, the published "
        "score where given, and when the exam ran.",
        group="seat",
        small=True,
        numeric=("Published score",),
        key="exam-scores",
        nowrap=("Correct",),
    )


def exam_deltas_table(a) -> Table | None:
    """Exam deltas: both proportions, the difference with its CI, exact test, p and MDE."""
    d = a.exam_deltas
    if d is None or d.empty:
        return None
    pct = ci_level(a)
    rows = []
    for _, r in d.iterrows():
        n = r.get("n_items")
        disc = ""
        if fmt.finite(r.get("baseline_only")) and fmt.finite(r.get("candidate_only")):
            disc = f"{fmt.count(r['baseline_only'])} / {fmt.count(r['candidate_only'])}"
        rows.append(
            {
                "pair": f"{r['candidate']} vs {r['baseline']}",
                "Benchmark": fmt.text(r["benchmark"])
                + (f" / {r['dimension']}" if not fmt.missing(r.get("dimension")) else ""),
                "Baseline": fmt.fraction(r.get("baseline_correct"), n),
                "Candidate": fmt.fraction(r.get("candidate_correct"), n),
                "Difference": fmt.points(r.get("diff")),
                f"{pct} CI": fmt.points_ci(r.get("diff_ci_low"), r.get("diff_ci_high")) or "–",
                "Test": fmt.text(r.get("test")),
                "Discordant": disc or "–",
                "p": fmt.pval(r.get("p_value"), "–"),
                "p (Holm)": fmt.pval(r.get("p_holm"), "–"),
                "MDE": fmt.points_size(r.get("mde")),
            }
        )
    df = pd.DataFrame(rows)
    return Table(
        df,
        f"Exam deltas (candidate − baseline) in percentage points with their {pct} CI, "
        "the exact test used, its p-value (raw and Holm-adjusted) and the smallest "
        "difference this many items could detect (MDE, 80% power).",
        group="pair",
        small=True,
        numeric=("Difference", "p", "p (Holm)", "MDE"),
        key="exam-deltas",
        group_label="Comparison",
        nowrap=("Baseline", "Candidate", "Difference", f"{pct} CI", "MDE"),
        note="Discordant: items only the baseline / only the candidate answered correctly (paired tests only).",
    )


def exams_text(a) -> Prose:
    """Section 4's prose."""
    e = a.tables.exams
    d = a.exam_deltas
    if (e is None or e.empty) and (d is None or d.empty):
        return prose(para("No exam results were recorded."))
    out = []
    if e is not None and len(e):
        out.append(
            para("{} recorded for {}.", fmt.counted(len(e), "exam score"), fmt.counted(e["seat"].nunique(), "seat"))
        )
    if d is not None and len(d):
        sig_alpha = a.options.thresholds.alpha
        p = pd.to_numeric(d["p_value"], errors="coerce")
        n_sig = int((p < sig_alpha).sum())
        out.append(
            para(
                "{} tested with an exact test; {} significant at alpha = {}. A delta that is "
                "not significant is not evidence of equality: the MDE column gives the smallest "
                "difference these items could have detected.",
                fmt.counted(len(d), "delta"),
                fmt.counted(n_sig, "is", "are"),
                fmt.num(sig_alpha),
            )
        )
    return prose(out)


def exam_figure(a) -> FigureBlock | None:
    """Forest plot of exam deltas."""
    return figure_block(
        F.exam_forest(a.exam_deltas),
        "Exam deltas (candidate − baseline) with their "
        "confidence intervals; the dashed line is no difference, p is the exact test's.",
        "exams",
    )
