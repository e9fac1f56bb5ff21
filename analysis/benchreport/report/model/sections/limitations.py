"""Section 7, What these numbers will not carry: written from the flags and nothing else."""

from __future__ import annotations


from benchreport import format as fmt
from benchreport.flags import codes
from benchreport.flags import limitations_paragraphs as flag_paragraphs
from benchreport.flags import words
from benchreport.flags.text import NO_FLAGS

import pandas as pd

from .blocks import Prose, Table, division, items, para, prose
from .flagview import flag_seats, flags_of, sorted_flags


def limitations_paragraphs(a) -> list[tuple[str, str]]:
    """(title, text) per group of flags, as `benchreport.flags.limitations_paragraphs` writes them."""
    return [(p.title, p.text) for p in flag_paragraphs(a.flags)]


#: the codes Sections 5 and 6 state whole with their figures: Section 7 names them, it does not
#: say them again (issue 27: each fact stated once)
TOLD_IN_FAULTS = {
    "fault.recorded": "faults and crashes",
    "fault.unreproduced": "faults not seen again",
    "defect.open": "open defects",
    "requests.failed": "failed requests",
    "requests.missing": "requests missing from the files",
}


#: codes Section 3 states whole (with no incumbent, it says no comparison is made and why): Section 7
#: names them (an exam delta that shows no difference stays: Section 4 gives its figures in a table,
#: Section 7 says in words what it does not show)
TOLD_IN_RESULTS = {"compare.no_incumbent": ("Section 3", "no incumbent to compare against")}


def _told_elsewhere(a=None) -> dict[str, str]:
    """code -> the section that states it whole (`a`: the analysis, which says whether there is an
    incumbent: with one, Section 3 compares, and a date without one is said only here)."""
    told = {c: "Section 5" for c in codes.trap_codes()}
    told.update({c: "Section 6" for c in TOLD_IN_FAULTS})
    told.update({c: section for c, (section, _) in TOLD_IN_RESULTS.items()})
    if a is not None and a.baseline:
        told.pop("compare.no_incumbent")
    return told


def _topic_title(code: str) -> str:
    title = TOLD_IN_FAULTS.get(code) or TOLD_IN_RESULTS.get(code, ("", ""))[1] or codes.CODES[code].trap_title
    return title[0].lower() + title[1:]


def _told_sentence(f: pd.DataFrame, told: dict[str, str]) -> str | None:
    """One sentence naming what Sections 3, 5 and 6 stated, by topic and seats, most severe first."""
    sel = f[f["code"].astype(str).isin(list(told))]
    if sel.empty:
        return None
    parts, stated = [], []
    for section in ("Section 3", "Section 5", "Section 6"):
        mine = sel[sel["code"].astype(str).map(told) == section]
        if mine.empty:
            continue
        # the topics counted, with the seats they concern (the sections name both: each fact once)
        kinds = list(dict.fromkeys(mine["code"].astype(str)))
        seats = {s for v in mine["seats"] for s in flag_seats(v)}
        if section == "Section 3":
            parts.append(f"Section 3 states whole: {'; '.join(_topic_title(c) for c in kinds)}")
            continue
        what = "measurement trap" if section == "Section 5" else "fault"
        stated.append(
            (
                section,
                f"{fmt.counted(len(kinds), f'kind of {what}', f'kinds of {what}')} ({fmt.counted(len(seats), 'seat')})",
            )
        )
    if stated:
        sections = stated[0][0] if len(stated) == 1 else "Sections 5 and 6"  # stated holds at most these two
        verb = "state" if len(stated) > 1 else "states"
        parts.append(f"{sections} {verb} whole, with their figures, {fmt.join_words([w for _, w in stated])}")
    return "; ".join(parts) + ". Each holds here too: those figures do not carry what their names say."


def limitations_html(a) -> Prose:
    """Section 7 from the flags alone: per topic a heading, the group's lead sentence, and its
    findings as a list, one item each (a topic with one finding: one short paragraph); all escaped.
    What Sections 3, 5 and 6 state whole is named in one sentence, not said again; nothing is cut."""
    f = sorted_flags(a)
    if f.empty:
        return prose(para("{}", NO_FLAGS))
    told = _told_elsewhere(a)
    rest = f[~f["code"].astype(str).isin(list(told))]
    noted = rest["severity"].astype(str).eq("info") & ~rest["code"].astype(str).isin(list(INFO_SAID_WHOLE))
    notes, rest = rest[noted], rest[~noted]
    out = []
    named = _told_sentence(f, told)
    if named:
        out.append(para("{}", named))
    for p in flag_paragraphs(rest):
        sentences = list(p.sentences)
        lead = words.group_lead(p.group, set(p.codes))
        blocks = []
        if lead and sentences and sentences[0] == lead:
            sentences.pop(0)
            if lead != words.sampling.LEAD:  # "The sample sizes are small." under the heading "Sample sizes"
                blocks.append(para("{}", lead))
        if len(sentences) == 1:
            blocks.append(para("{}", sentences[0]))
        elif sentences:
            blocks.append(items(sentences))
        out.append(division("topic", blocks, heading=p.title or None))
    if len(notes):
        # one closing line, no heading of its own: the notes are counted here, each said in the appendix
        out.append(division("topic", [para("{}", _notes_sentence(notes))]))
    return prose(out)


#: notes for information that Section 7 still says whole: what a comparison or an exam delta
#: cannot show, and the scope of the intervals (the rest are counted by topic, each whole in the
#: appendix's table of flags: issue 42, the section fits a page for the example)
INFO_SAID_WHOLE = frozenset(
    {"exam.not_significant", "sample.underpowered", "sample.one_session", "sample.few_sessions"}
)


def _notes_sentence(notes: pd.DataFrame) -> str:
    """'Notes for information, in the appendix's flags: sample sizes (3), ...' (each whole there)."""
    topics = notes["code"].astype(str).map(lambda c: codes.CODES[c].topic if c in codes.CODES else "other findings")
    counted = fmt.join_words([f"{t} ({fmt.count(n)})" for t, n in topics.value_counts().items()])
    return f"Notes for information, in the appendix's flags: {counted}."


def limitations(a) -> Prose:
    """Section 7 with a one-line lead saying where it comes from."""
    f = flags_of(a)
    sev = f["severity"].astype(str).value_counts() if len(f) else {}
    lead = para(
        "Written from the {} raised ({} critical, {} warnings, {} for information) and nothing else.",
        fmt.counted(len(f), "flag"),
        fmt.count(sev.get("critical", 0)),
        fmt.count(sev.get("warn", 0)),
        fmt.count(sev.get("info", 0)),
    )
    return prose(lead, division("limitations", limitations_html(a).blocks))


def flags_table(a) -> Table | None:
    """Table A: every flag as flags.json has it, most severe first, each message whole (Section 7
    says them by topic, and may join several into one sentence). A reference: collapsed in the
    HTML, one line in the PDF saying where it is."""
    f = sorted_flags(a)
    if f.empty:
        return None
    data = pd.DataFrame(
        {
            "Severity": f["severity"].astype(str).tolist(),
            "Code": f["code"].astype(str).tolist(),
            "Seats": [", ".join(flag_seats(s)) for s in f["seats"]],
            "Message": [fmt.text(m) for m in f["message"]],
        }
    )
    return Table(
        data,
        "Every flag the analysis raised, most severe first, each message whole as flags.json has "
        "it (Section 7 says them by topic).",
        kind="appendix",
        key="flags",
        mono=("Code",),
        small=True,
        whole=("Message",),
        screen_only="flags.json",
    )
