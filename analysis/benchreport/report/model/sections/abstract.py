"""The title block and the abstract: data set, headline comparison, verdict counts, strongest caveat."""

from __future__ import annotations

import pandas as pd

import re

from benchreport.version import __version__
from benchreport import format as fmt
from benchreport.flags import codes

from .blocks import Prose, TitleBlock, division, para, prose
from .flagview import SEVERITY_RANK, flag_seats, flags_of, sorted_flags
from .headline import baseline_comparisons, headline_row, headline_sentence
from .labels import ci_level, date_range, models_words, runs_date_range


def title_block(title: str, a) -> TitleBlock:
    """The title and a one-line description of the data set (no build time: reproducible)."""
    t = a.tables
    n_files = len(t.runs)
    sub = (
        f"{fmt.counted(n_files, 'run')} of {fmt.counted(len(t.seats), 'seat')}, measured {date_range(t.runs['date'])}."
    )
    return TitleBlock(
        str(title), (para("{}", sub, css="subtitle"), para("{}", f"benchreport {__version__}", css="generator"))
    )


def _verdict_counts(a) -> dict:
    c = baseline_comparisons(a)
    if c is None or c.empty:
        return {}
    return c["verdict"].astype(str).value_counts().to_dict()


def strongest_caveat(a):
    """The flag the abstract names: the most severe, preferring the headline's seats; among flags
    of that code, the one with the worst share (the 58% failure before the 50% one, issue 42)."""
    f = sorted_flags(a)
    if f.empty:
        return None
    pool = f
    row = headline_row(a)
    if row is not None:
        seats = {str(row["candidate"]), str(row["baseline"])}
        rank = f["severity"].map(lambda s: SEVERITY_RANK.get(str(s), len(SEVERITY_RANK)))
        same = f[rank == rank.min()]
        mine = same[same["seats"].map(lambda s: bool(seats & set(flag_seats(s))))]
        if len(mine):
            pool = mine
    first = pool.iloc[0]
    alike = pool[(pool["code"] == first["code"]) & (pool["severity"] == first["severity"])]
    share = alike["evidence"].map(lambda e: e.get("worst_share") if isinstance(e, dict) else None)
    share = pd.to_numeric(share, errors="coerce")
    return alike.loc[share.idxmax()] if share.notna().any() else first


def _topic(code: str) -> str:
    """How the abstract names a flag's family (`codes.Code.topic`)."""
    c = codes.CODES.get(code)
    return c.topic if c else "other findings"


#: the strongest caveat's message in the abstract: its first sentences up to this long, never cut
#: inside a sentence (Section 7, the appendix's flag table and flags.json have it whole)
CAVEAT_CHARS = 600


def first_sentences(text: str, limit: int = CAVEAT_CHARS) -> str:
    """The first whole sentences of `text` that fit in `limit` characters (at least the first
    one, whole), then ' (Section 7 has the rest.)' when something was left out."""
    parts = re.split(r"(?<=[.;:!?])\s+(?=[A-Z0-9])", fmt.text(text).strip())
    out = parts[0]
    for p in parts[1:]:
        if len(out) + 1 + len(p) > limit:
            return out + " (Section 7 has the rest.)"
        out += " " + p
    return out


#: a harness's error texts as a flag quotes them ('3× “Bad Request: ...” (3 messages of this form ...)')
_QUOTED_ERRORS = re.compile(r":\s*(?:\d+× “[^”]*”(?: \([^)]*\))?(?:;\s*)?)+")


def unquoted(text: str) -> str:
    """A flag's message without the error texts it quotes: the abstract never prints a raw error
    message (Section 6 and the appendix quote them)."""
    out, n = _QUOTED_ERRORS.subn("; ", text)
    # the list's items stay apart ('on 2026-12-01; 7 of 12 ...'), and no '; ' is left before a stop
    out = re.sub(r";\s*(?=[.)]|$)", "", out)
    return out + " (Section 6 quotes the errors.)" if n else out


def others_phrase(caveat_severity: str, n_critical: int, n_warn: int) -> str:
    """The abstract's sentence on the flags besides the strongest caveat, up to its object:
    'The 2 other critical flags and the 19 warnings concern', 'The 19 warnings concern' (no
    'other' for a kind the caveat is not), 'The one other warning concerns'. At least one
    count is positive."""
    bits = []
    for severity, n, one, many in (
        ("critical", n_critical, "critical flag", "critical flags"),
        ("warn", n_warn, "warning", "warnings"),
    ):
        if n:
            other = " other" if severity == caveat_severity else ""
            bits.append(f"{fmt.spelled(n)}{other} {one if n == 1 else many}")
    verb = "concerns" if n_critical + n_warn == 1 else "concern"
    return "The " + " and the ".join(bits) + " " + verb


def abstract(a) -> Prose:
    """Generated abstract: data set, headline comparison with CI, verdict counts, strongest caveat."""
    t = a.tables
    out = [
        para(
            "We analysed {} of {} ({}) measured {}. Every figure below is given with its number of "
            "passes and, where the passes allow one, a {} confidence interval over passes; a single pass "
            "has at most an interval over its requests, which describes that run only.",
            fmt.counted(len(t.runs), "run"),
            fmt.counted(len(t.seats), "seat"),
            models_words(t.seats, fmt.short),
            runs_date_range(t.runs),
            ci_level(a),
        )
    ]
    out.append(headline_sentence(a))
    counts = _verdict_counts(a)
    if counts:
        total = sum(counts.values())
        out.append(
            para(
                "Of {} against the baseline, {} favour the candidate, {} the baseline, {} "
                "within noise and {} too little data for a verdict (Section 3).",
                fmt.counted(total, "comparison"),
                fmt.count(counts.get("better", 0)),
                fmt.count(counts.get("worse", 0)),
                fmt.counted(counts.get("within_noise", 0), "is", "are"),
                fmt.counted(counts.get("insufficient_data", 0), "has", "have"),
            )
        )
    f = flags_of(a)
    if len(f):
        sev = f["severity"].astype(str).value_counts()
        cav = strongest_caveat(a)
        out.append(
            para(
                "The analysis raised {} ({} critical, {} warnings). The strongest caveat ({}): {}",
                fmt.counted(len(f), "flag"),
                fmt.count(sev.get("critical", 0)),
                fmt.count(sev.get("warn", 0)),
                fmt.text(cav["severity"]),
                fmt.short_tokens(first_sentences(unquoted(fmt.text(cav["message"])))),
            )
        )
        rest = f.drop(index=cav.name) if cav.name in f.index else f
        rest = rest[rest["severity"].astype(str).isin(["critical", "warn"])]
        counts = rest["code"].astype(str).map(_topic).value_counts()
        if len(counts):
            listed = fmt.join_words([f"{t} ({fmt.count(n)})" for t, n in counts.items()])
            out.append(
                para(
                    "{} {}. Section 7 states what these numbers will not carry.",
                    others_phrase(
                        str(cav["severity"]),
                        int(rest["severity"].eq("critical").sum()),
                        int(rest["severity"].eq("warn").sum()),
                    ),
                    listed,
                )
            )
        else:
            out.append(para("Section 7 states what these numbers will not carry."))
    else:
        out.append(para("The analysis raised no flags."))
    return prose(division("abstract", out))
