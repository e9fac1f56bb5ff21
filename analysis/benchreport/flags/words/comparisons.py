"""Words for the comparison findings."""

from __future__ import annotations

from benchreport import format as F

from ..rules.comparisons import CrossModel, MissingForm, MissingOneSide, NoIncumbent, NotLikeForLike, StaleScores
from ._common import combines, describe_cells, field_words, generic, more, phrase, show, writes

__all__ = [
    "no_incumbent",
    "cross_model",
    "not_like_for_like",
    "missing_form",
    "missing_one_side",
    "stale_scores",
    "stale_sentences",
]


@writes(NoIncumbent)
def no_incumbent(f: NoIncumbent) -> str:
    one = len(f.missing) == 1
    names = F.join_words(f.missing)
    if not f.reference:
        return (
            f"On {f.date}, {names} {'was' if one else 'were'} measured with no incumbent seat in the data: "
            f"a claim that {'it' if one else 'any of them'} is the best seat, or beats what serves today, "
            "is not supported."
        )
    refs = F.join_words(f.reference)
    why = (
        f"{refs} was measured that day only with another harness or probe"
        if f.date in f.reference_days
        else f"{refs} was not measured that day"
    )
    return (
        f"On {f.date}, {names} {'was' if one else 'were'} measured without the "
        f"{'incumbent' if f.reference_kind == 'incumbent' else 'baseline'} beside {'it' if one else 'them'} "
        f"({why}): a comparison with it, or a 'best' claim, is not supported by runs of that day."
    )


@combines("compare.no_incumbent")
def no_incumbent_sentences(findings: list[NoIncumbent], messages: list[str]) -> list[str]:
    """The days a reference seat was not measured, in one sentence when the same reference was missing
    each day for the same reason (issue 42: the reason once, not once a day)."""
    kinds = {(tuple(f.reference), f.reference_kind) for f in findings}
    if len(findings) == 1 or len(kinds) != 1 or any(not f.reference or f.date in f.reference_days for f in findings):
        return generic(messages)
    days = F.join_words(
        [
            f"{f.date} ({F.join_words(f.missing) if len(f.missing) <= 2 else F.plural(len(f.missing), 'seat')})"
            for f in findings
        ]
    )
    refs = F.join_words(findings[0].reference)
    what = "incumbent" if findings[0].reference_kind == "incumbent" else "baseline"
    return [
        f"On {days}, seats were measured without the {what}, {refs}, which was not measured those days: no "
        "comparison with it, nor a 'best' claim, rests on those days' runs."
    ]


@writes(CrossModel)
def cross_model(f: CrossModel) -> str:
    a, b, model = f.baseline, f.candidate, f.models
    msg = (
        f"{b} ({model[b]}) and {a} ({model[a]}) serve different models, so throughput alone does not "
        "say which seat is more useful."
    )
    if not f.exams:
        return msg + " No exam taken by both seats is in the data to weigh capability."
    by_bench: dict[str, list] = {}
    for e in f.exams:
        label = f"{e['dimension']} " if e["dimension"] else ""
        by_bench.setdefault(e["benchmark"], []).append(f"{label}{F.num(e[b])} against {F.num(e[a])}")
    return msg + " Exam scores both took: " + "; ".join(f"{k} {', '.join(v)}" for k, v in by_bench.items()) + "."


@writes(NotLikeForLike)
def not_like_for_like(f: NotLikeForLike) -> str:
    name = {
        "baseline": f.baseline if f.baseline_date is None else f"{f.baseline} on {f.baseline_date}",
        "candidate": f.candidate if f.candidate_date is None else f"{f.candidate} on {f.candidate_date}",
    }
    parts = [
        f"{field_words(k)} {show(v['candidate'])} against {show(v['baseline'])}"
        for k, v in sorted(f.differences.items())
    ]
    side = [
        f"{field_words(k)} ({show(v['value'])}) is stated for {name[v['stated_for']]} only"
        for k, v in sorted(f.stated_one_side.items())
    ]
    if not parts:
        return (
            f"{name['candidate']} and {name['baseline']} may not have been measured alike: "
            f"{'; '.join(side)}, so whether the other side matched is unknown."
        )
    msg = (
        f"{name['candidate']} and {name['baseline']} were not measured alike: {'; '.join(parts)}. "
        "Differences between them may come from how they were measured, not from the seats."
    )
    return msg + (f" Also, {'; '.join(side)}." if side else "")


@writes(MissingForm)
def missing_form(f: MissingForm) -> str:
    a, b = f.compared or tuple(f.cells[0].statistics)  # read back from a flag: in its statistics' order

    def form(stats) -> str:  # 'a p50', 'a mean or a p50', 'a figure of no stated statistic'
        return F.join_words(["a figure of no stated statistic" if s == F.NOT_STATED else f"a {s}" for s in stats], "or")

    parts = [f"{phrase(c)} is {form(c.statistics[a])} for {a} but {form(c.statistics[b])} for {b}" for c in f.cells[:4]]
    return (
        f"{a} and {b} report figures in different forms: {'; '.join(parts)}{more(4, len(f.cells))}. "
        "Such figures are not directly comparable."
    )


@writes(MissingOneSide)
def missing_one_side(f: MissingOneSide) -> str:
    a, b = f.compared or f.pair  # read back from a flag, the direction of the comparison is not known
    parts = [f"for {s} only: {describe_cells(f.only[s])}" for s in (a, b) if s in f.only]
    return (
        f"Compared with each other, {a} and {b} do not report the same figures ({'; '.join(parts)}). "
        "Those figures have nothing to be compared with."
    )


def _scores(f: StaleScores) -> str:
    return F.join_words(
        [
            f"{i.benchmark}{' ' + i.dimension if i.dimension else ''} "
            f"{F.num(i.score) if isinstance(i.score, (int, float)) else i.score}"
            for i in f.exams
        ]
    )


@writes(StaleScores)
def stale_scores(f: StaleScores) -> str:
    whys = []
    dates = sorted({i.reasons["measured_on"] for i in f.exams if "measured_on" in i.reasons})
    if dates:
        whys.append(f"were measured on {F.join_words(dates)}")
    if any("from_earlier_run" in i.reasons for i in f.exams):
        whys.append("come from an earlier run whose date is not recorded")
    notes = sorted({i.reasons["placement_note"] for i in f.exams if "placement_note" in i.reasons})
    if notes:
        whys.append(f"ran elsewhere ({'; '.join(notes)})")
    run_dates = F.join_words(sorted({i.run_date for i in f.exams}))
    return (
        f"{f.seats[0]}: the exam scores shown with its runs of {run_dates} ({_scores(f)}) "
        f"{F.join_words(whys)}, not in those runs."
    )


@combines("compare.stale_scores")
def stale_sentences(findings: list[StaleScores], messages: list[str]) -> list[str]:
    """Every seat's stale scores in one sentence, with why they are stale."""
    if len(findings) == 1:
        return generic(messages)
    exams = [i for f in findings for i in f.exams]
    reason = []
    if any("from_earlier_run" in i.reasons for i in exams):
        reason.append("come from earlier runs with no date")
    dates = sorted({i.reasons["measured_on"] for i in exams if "measured_on" in i.reasons})
    if dates:
        reason.append(f"were measured on {F.join_words(dates)}")
    if any("placement_note" in i.reasons for i in exams):
        reason.append("ran on another placement")
    seats = F.join_words([f"{f.seats[0]} ({_scores(f)})" for f in findings])
    return [f"The exam scores of {seats} {F.join_words(reason, 'or')}, not the runs they are shown with."]
