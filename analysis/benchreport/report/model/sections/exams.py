"""Section 4, Exams: scores as recorded, exact tests of the deltas, the forest plot."""

from __future__ import annotations

import pandas as pd

from benchreport import format as fmt
from benchreport.columns import is_not_a_count
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
                # counts only where they were given (issue 42): none made up from a score that is
                # no whole number of its items
                "Correct": "–"
                if is_not_a_count(r.get("count_rounding"))
                else fmt.fraction(r.get("correct"), r.get("total")),
                "Published score": fmt.num(r.get("score")),
                "Chance": _chance_words(r["benchmark"]),
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
    chance = df["Chance"].ne("–").any()
    if not chance:
        df = df.drop(columns=["Chance"])
    return Table(
        df,
        "Exam scores as recorded: correct answers of the items asked, the published "
        "score where given, and when the exam ran"
        + ("; Chance: the score of random guessing on a multiple-choice exam." if chance else "."),
        group="seat",
        small=True,
        numeric=("Published score", "Chance"),
        key="exam-scores",
        nowrap=("Correct",),
    )


def _count_of(correct, n) -> str:
    """'153/164', or '–' where no count was given (a delta of scores)."""
    return "–" if fmt.missing(correct) else fmt.fraction(correct, n)


def _chance_words(benchmark) -> str:
    """'25%' for a four-option multiple-choice exam, '–' where chance is not known."""
    from benchreport.stats.exams import chance_level

    level = chance_level(benchmark)
    return "–" if level is None else f"{100 * level:g}%"


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
                "Baseline": _count_of(r.get("baseline_correct"), n),
                "Candidate": _count_of(r.get("candidate_correct"), n),
                "Difference": fmt.points(r.get("diff"))
                + (" (scores)" if fmt.missing(r.get("candidate_correct")) and fmt.finite(r.get("diff")) else ""),
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


#: fewer exam deltas than this are not drawn: Table 3 gives each one's difference, interval and p,
#: and a plot of one or two intervals says nothing the table does not (each fact once, issue 42)
MIN_DELTAS_DRAWN = 3


def exam_figure(a) -> FigureBlock | None:
    """Forest plot of exam deltas (None for fewer than `MIN_DELTAS_DRAWN`)."""
    deltas = a.exam_deltas
    if deltas is None or len(deltas) < MIN_DELTAS_DRAWN:
        return None
    return figure_block(
        F.exam_forest(a.exam_deltas),
        "Exam deltas (candidate − baseline) with their "
        "confidence intervals; the dashed line is no difference, p is the exact test's.",
        "exams",
    )
