"""Section 7, What these numbers will not carry: written from the flags and nothing else."""
from __future__ import annotations


from benchreport import format as fmt
from benchreport.flags import limitations_paragraphs as flag_paragraphs
from benchreport.flags import words
from benchreport.flags.text import NO_FLAGS

import pandas as pd

from .blocks import Prose, Table, division, items, para, prose
from .flagview import flag_seats, flags_of, sorted_flags


def limitations_paragraphs(a) -> list[tuple[str, str]]:
    """(title, text) per group of flags, as `benchreport.flags.limitations_paragraphs` writes them."""
    return [(p.title, p.text) for p in flag_paragraphs(a.flags)]


#: a finding's sentence in the section at most this long (its middle left out: an error text
#: quoted many times); flags.json, and the appendix's table of every flag, have every message whole
MAX_SENTENCE = 700


def limitations_html(a) -> Prose:
    """Section 7 from the flags alone: per topic a heading, the group's lead sentence, and its
    findings as a list, one item each (a topic with one finding: one short paragraph); all escaped."""
    f = flags_of(a)
    if f.empty:
        return prose(para("{}", NO_FLAGS))
    out = []
    for p in flag_paragraphs(a.flags):
        sentences = [fmt.shortened(x, MAX_SENTENCE) for x in p.sentences]
        lead = words.group_lead(p.group, set(p.codes))
        blocks = []
        if lead and sentences and sentences[0] == fmt.shortened(lead, MAX_SENTENCE):
            blocks.append(para("{}", sentences.pop(0)))
        if len(sentences) == 1:
            blocks.append(para("{}", sentences[0]))
        elif sentences:
            blocks.append(items(sentences))
        out.append(division("topic", blocks, heading=p.title or None))
    return prose(out)


def limitations(a) -> Prose:
    """Section 7 with a one-line lead saying where it comes from."""
    f = flags_of(a)
    sev = f["severity"].astype(str).value_counts() if len(f) else {}
    lead = para("This section is written from the {} the analysis raised ({} critical, {} warnings, {} "
                "for information), and from nothing else; flags.json holds each with its evidence.",
                fmt.counted(len(f), "flag"), fmt.count(sev.get("critical", 0)), fmt.count(sev.get("warn", 0)),
                fmt.count(sev.get("info", 0)))
    return prose(lead, division("limitations", limitations_html(a).blocks))


def flags_table(a) -> Table | None:
    """Table A: every flag as flags.json has it, most severe first, each message whole (Section 7
    says them by topic, and may join several into one sentence). A reference: collapsed in the
    HTML, one line in the PDF saying where it is."""
    f = sorted_flags(a)
    if f.empty:
        return None
    data = pd.DataFrame({"Severity": f["severity"].astype(str).tolist(), "Code": f["code"].astype(str).tolist(),
                         "Seats": [", ".join(flag_seats(s)) for s in f["seats"]],
                         "Message": [fmt.text(m) for m in f["message"]]})
    return Table(data, "Every flag the analysis raised, most severe first, each message whole as flags.json has "
                 "it (Section 7 says them by topic).", kind="appendix", key="flags", mono=("Code",),
                 small=True, whole=("Message",), screen_only="flags.json")
