"""Section 7, What these numbers will not carry: written from the flags and nothing else."""
from __future__ import annotations


from analysis import format as fmt
from analysis.flags import limitations_paragraphs as flag_paragraphs
from analysis.flags.text import NO_FLAGS

from .blocks import Prose, division, para, prose
from .flagview import flags_of


def limitations_paragraphs(a) -> list[tuple[str, str]]:
    """(title, text) per group of flags, as `analysis.flags.limitations_paragraphs` writes them."""
    return [(p.title, p.text) for p in flag_paragraphs(a.flags)]


def limitations_html(a) -> Prose:
    """Section 7 from the flags alone: one paragraph per group, its title in bold; all escaped."""
    f = flags_of(a)
    if f.empty:
        return prose(para("{}", NO_FLAGS))
    out = []
    for title, text in limitations_paragraphs(a):
        if title:
            out.append(para("{}", text, lead=f"{title}."))
        else:
            out.append(para("{}", text))
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
