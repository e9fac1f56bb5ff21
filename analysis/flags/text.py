"""The report's section "What these numbers will not carry", written from the flags alone.

Plain sentences with the figures in them, grouped the way the fleet paper's section 9
reads: sample sizes, stability, measurement traps, comparisons, exams, deployment,
faults (and provenance). Every sentence comes from a flag's message or evidence, so the
section cannot say more than the analysis found, nor drift from it. Nothing is escaped
here and no HTML is built: the renderer escapes.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import pandas as pd

from analysis import format as F
from .rules import CODES

__all__ = ["Paragraph", "GROUPS", "limitations_paragraphs", "limitations_markdown", "NO_FLAGS"]

#: (group, title) in the order the section reads
GROUPS = [
    ("sample", "Sample sizes"),
    ("stability", "Stability"),
    ("traps", "Measurement traps"),
    ("comparisons", "Comparisons"),
    ("exams", "Exams"),
    ("deployment", "Deployment"),
    ("faults", "Faults and defects"),
    ("provenance", "Provenance"),
    ("other", "Other findings"),
]
_GROUP_OF_PREFIX = {"sample": "sample", "drift": "stability", "warmup": "stability", "trap": "traps",
                    "compare": "comparisons", "exam": "exams", "fit": "deployment", "license": "deployment",
                    "fault": "faults", "defect": "faults", "import": "provenance", "requests": "faults"}
#: reading order of codes inside a paragraph (codes not listed follow, in CODES order)
TEXT_ORDER = ["sample.single_pass", "sample.two_passes", "sample.few_passes", "sample.mixed_runs", "sample.small_n",
              "sample.correlated_requests", "sample.underpowered", "drift.warmup", "drift.unstable", "warmup.included", "warmup.unknown",
              "trap.prefix_cache", "trap.reasoning_field", "trap.capped_answers",
              "compare.no_incumbent", "compare.cross_model", "compare.not_like_for_like",
              "compare.missing_metric", "compare.stale_scores", "exam.not_significant", "exam.counts_only",
              "fit.exceeds_node", "license.noncommercial", "license.unknown",
              "fault.recorded", "fault.unreproduced", "defect.open", "requests.failed", "import.assumed",
              "import.figure_mismatch"]
_CODE_ORDER = {c: i for i, c in enumerate(TEXT_ORDER + [c for c in CODES if c not in TEXT_ORDER])}

NO_FLAGS = ("The checks found nothing in these data that limits what the numbers carry: "
            "no flag was raised.")


@dataclass
class Paragraph:
    """One group of the section: its title, its sentences, and the flags behind them."""

    group: str
    title: str
    sentences: list[str] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)
    n_flags: int = 0

    @property
    def text(self) -> str:
        return " ".join(self.sentences)


def _group(code: str, evidence) -> str:
    if code == "sample.underpowered" and isinstance(evidence, dict) and evidence.get("kind") == "exam":
        return "exams"
    if code in CODES:
        return CODES[code][1]
    return _GROUP_OF_PREFIX.get(code.split(".", 1)[0], "other")


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def _sentences(message: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(str(message).strip()) if s]


def _generic(rows: list[dict]) -> list[str]:
    """Messages in order; a closing sentence shared by all of them is said once, at the end."""
    msgs = [_sentences(r["message"]) for r in rows]
    if len(rows) > 1 and all(len(m) > 1 for m in msgs) and len({m[-1] for m in msgs}) == 1:
        tail = msgs[0][-1]
        return [" ".join(m[:-1]) for m in msgs] + [tail]
    return [" ".join(m) for m in msgs]


def _seat_list(rows: list[dict], describe) -> str:
    return F.join_words([describe(r) for r in rows])


def _single_pass(rows: list[dict]) -> list[str]:
    if len(rows) == 1:
        return _generic(rows)
    def desc(r):
        n = r["evidence"].get("n_cells", 0)
        return f"{r['seats'][0]} ({F.plural(int(n), 'cell')})"
    out = [f"{_seat_list(rows, desc)} were measured in a single pass."]
    with_ci = [r["seats"][0] for r in rows if any(c.get("has_ci") for c in r["evidence"].get("cells", []))]
    if not with_ci:
        out.append("One pass says nothing about run-to-run variability, so no confidence interval can be given.")
    else:
        out.append("One pass says nothing about run-to-run variability: where a confidence interval is given "
                   f"({F.join_words(with_ci)}), it covers the spread within that pass only.")
    return out


def _small_n(rows: list[dict]) -> list[str]:
    info = [r for r in rows if r["evidence"].get("kind") == "ci"]
    rest = [r for r in rows if r["evidence"].get("kind") != "ci"]
    out = _generic(rest) if rest else []
    if len(info) == 1:
        out += _generic(info)
    elif info:
        ns = sorted({c["n_obs"] for r in info for c in r["evidence"].get("cells", [])})
        out.append(f"The confidence intervals of {F.join_words([r['seats'][0] for r in info])} rest on "
                   f"{F.join_words([str(n) for n in ns], 'or')} observations, fewer than the "
                   f"{info[0]['evidence']['thresholds']['min_obs']} this analysis asks for; they hold only as far "
                   "as the values are close to normally distributed.")
    return out


def _warmup(rows: list[dict], included: bool) -> list[str]:
    if len(rows) == 1:
        return _generic(rows)
    def desc(r):
        return f"{r['seats'][0]} ({F.plural(len(r['evidence'].get('runs', [])), 'run')})"
    if included:
        return [f"The runs of {_seat_list(rows, desc)} measured the warm-up requests too, so their figures "
                "include start-up effects."]
    return [f"The runs of {_seat_list(rows, desc)} do not say whether warm-up requests were excluded, so "
            "their first requests may carry start-up effects."]


def _stale(rows: list[dict]) -> list[str]:
    if len(rows) == 1:
        return _generic(rows)
    parts = []
    for r in rows:
        m = re.search(r"\(([^()]*)\)", r["message"])
        parts.append(f"{r['seats'][0]} ({m.group(1)})" if m else r["seats"][0])
    whys = set()
    for r in rows:
        for e in r["evidence"].get("exams", []):
            whys |= set(e.get("reasons", {}))
    reason = []
    if "from_earlier_run" in whys:
        reason.append("come from earlier runs whose dates are not recorded")
    dates = sorted({e["reasons"]["measured_on"] for r in rows for e in r["evidence"].get("exams", [])
                    if "measured_on" in e.get("reasons", {})})
    if dates:
        reason.append(f"were measured on {F.join_words(dates)}")
    if "placement_note" in whys:
        reason.append("ran on another placement")
    return [f"The exam scores of {F.join_words(parts)} {F.join_words(reason, 'or')}, not in the runs they are "
            "shown with."]


def _license_unknown(rows: list[dict]) -> list[str]:
    if len(rows) == 1:
        return _generic(rows)
    names = F.join_words([f"{r['evidence'].get('component')} ({r['evidence'].get('license') or 'none recorded'})"
                          for r in rows])
    seats = sorted({s for r in rows for s in r["seats"]})
    return [f"These components declare no licence: {names}; {F.join_words(seats)} use them. Whether they may be "
            "used commercially is unknown until their licences are known."]


_COMBINE = {
    "sample.single_pass": _single_pass,
    "sample.small_n": _small_n,
    "warmup.unknown": lambda rows: _warmup(rows, included=False),
    "warmup.included": lambda rows: _warmup(rows, included=True),
    "compare.stale_scores": _stale,
    "license.unknown": _license_unknown,
}

_LEADS = {
    "sample": lambda codes: "The sample sizes are small." if codes & {
        "sample.single_pass", "sample.two_passes", "sample.few_passes"} else None,
}


#: above this many findings of one code, the section states a few in full and names the rest:
#: a fleet of 50 seats must not turn the section into pages of near-identical sentences
MAX_STATED = 6
STATED_WHEN_CONDENSED = 3
MAX_NAMED = 20


def _condensed(code: str, rows: list[dict]) -> list[str]:
    """The sentences of one code: all of them, or a few in full and the others named."""
    combine = _COMBINE.get(code, _generic)
    if len(rows) <= MAX_STATED:
        return combine(rows)
    shown, rest = rows[:STATED_WHEN_CONDENSED], rows[STATED_WHEN_CONDENSED:]
    seats = sorted({s for r in rest for s in r["seats"]})
    named = F.join_words(seats[:MAX_NAMED] + ([f"{len(seats) - MAX_NAMED} more"] if len(seats) > MAX_NAMED else []))
    return combine(shown) + [
        f"The same finding ({code}) holds for {F.plural(len(rest), 'more case')}, concerning {named}; "
        "each is stated with its figures in flags.json."]


def _exam_key(ev: dict) -> tuple:
    return (ev.get("benchmark"), ev.get("dimension"), ev.get("baseline"), ev.get("candidate"))


def limitations_paragraphs(flags: pd.DataFrame) -> list[Paragraph]:
    """The section as structured paragraphs, one per group that has flags, in reading order."""
    if flags is None or flags.empty:
        return []
    by_group: dict[str, dict[str, list]] = {}
    rows = [{"code": str(r["code"]), "severity": str(r["severity"]), "seats": tuple(r["seats"]),
             "message": str(r["message"]), "evidence": r["evidence"] if isinstance(r["evidence"], dict) else {}}
            for _, r in flags.iterrows()]
    said = {_exam_key(r["evidence"]) for r in rows if r["code"] == "exam.not_significant"}
    for row in rows:
        if row["code"] == "sample.underpowered" and row["evidence"].get("kind") == "exam" \
                and _exam_key(row["evidence"]) in said:
            continue  # the not-significant sentence already gives the smallest detectable difference
        g = _group(row["code"], row["evidence"])
        by_group.setdefault(g, {}).setdefault(row["code"], []).append(row)
    out = []
    for group, title in GROUPS:
        codes = by_group.get(group)
        if not codes:
            continue
        para = Paragraph(group, title)
        lead = _LEADS.get(group, lambda c: None)(set(codes))
        if lead:
            para.sentences.append(lead)
        for code in sorted(codes, key=lambda c: (_CODE_ORDER.get(c, len(_CODE_ORDER)), c)):
            rows = codes[code]
            para.sentences.extend(s for s in _condensed(code, rows) if s)
            para.codes.append(code)
            para.n_flags += len(rows)
        out.append(para)
    return out


def limitations_markdown(flags: pd.DataFrame, *, title: str | None = "What these numbers will not carry",
                         level: int = 2, group_titles: bool = True) -> str:
    """The section as Markdown: an optional heading, then one paragraph per group
    (led by the group's title in bold when `group_titles`), or a plain statement that
    nothing was flagged. Built from the flags alone; nothing is escaped."""
    parts = []
    if title:
        parts.append("#" * level + " " + title)
    paras = limitations_paragraphs(flags)
    if not paras:
        parts.append(NO_FLAGS)
    for p in paras:
        parts.append((f"**{p.title}.** " if group_titles else "") + p.text)
    return "\n\n".join(parts) + "\n"
