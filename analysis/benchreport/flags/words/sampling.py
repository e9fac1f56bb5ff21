"""Words for the sampling findings: messages and their sentences in "What these numbers will not carry"."""

from __future__ import annotations

from benchreport import conditions
from benchreport import format as F

from ..rules.sampling import (
    CorrelatedRequests,
    MixedConditions,
    MixedRuns,
    FewSessions,
    OneSession,
    PassCount,
    SmallN,
    UnderpoweredComparison,
    UnderpoweredExam,
)
from ._common import LISTED, combines, describe_cells, exam_name, field_words, generic, more, phrase, show, writes

__all__ = [
    "LEAD",
    "pass_count",
    "small_n",
    "underpowered_comparison",
    "underpowered_exam",
    "mixed_runs",
    "mixed_conditions",
    "correlated_requests",
    "one_session",
    "few_sessions",
]

#: the sentence that opens the sample-size paragraph when cells have too few passes
LEAD = "The sample sizes are small."
LEAD_CODES = {"sample.single_pass", "sample.two_passes", "sample.few_passes"}

_ONE_PASS = (
    " One pass says nothing about run-to-run variability: there is no confidence interval "
    "for the seat, intervals over its requests describe that one run only, and no verdict "
    "of better or worse rests on it."
)


def _values(c) -> str:
    return f"{F.series(c.values, ' and ')} {F.unit_of(c.metric)}".rstrip()


def _told_apart(cells: list) -> list[str]:
    """Each cell's phrase; where two read alike, the harness that measured each (and the load it
    sent, where that is what differs) in brackets (issue 42: 'per-stream decode at 1 stream' three
    times, no harness named)."""
    phrases = [phrase(c) for c in cells]
    out = []
    for c, p in zip(cells, phrases):
        if phrases.count(p) > 1:
            same_harness = [d for d, q in zip(cells, phrases) if q == p and d.harness == c.harness]
            said = [x for x in (c.harness, c.load if len(same_harness) > 1 else None) if isinstance(x, str)]
            p += f" ({'; '.join(said)})" if said else ""
        out.append(p)
    return out


@writes(PassCount)
def pass_count(f: PassCount) -> str:
    seat, cl = f.seats[0], f.cells
    if f.code == "sample.single_pass":
        if len(cl) == 1:
            return f"{seat} was measured in a single pass for {phrase(cl[0])}." + _ONE_PASS
        return f"{seat} was measured in a single pass in {len(cl)} cells ({describe_cells(cl)})." + _ONE_PASS
    if f.code == "sample.two_passes":
        names = _told_apart(cl[:LISTED])
        shown = [f"{names[i]}: {_values(c)}" for i, c in enumerate(cl[:LISTED])]
        return (
            f"{seat} was measured in two passes for {'; '.join(shown)}{more(LISTED, len(cl), 'cells')}. "
            "Two observations do not give a reliable mean: report both values."
        )
    same_n = len({c.n_passes for c in cl}) == 1
    names = _told_apart(cl[:LISTED])
    shown = [
        f"{names[i]}: "
        + ("" if same_n else f"{c.n_passes} passes, ")
        + f"{F.series(c.values)} {F.unit_of(c.metric)}".rstrip()
        for i, c in enumerate(cl[:LISTED])
    ]
    ns = F.join_words(sorted({str(c.n_passes) for c in cl}), "or")
    return (
        f"{seat} was measured in only {ns} passes for {'; '.join(shown)}{more(LISTED, len(cl), 'cells')}. "
        "Report the median and the range (the range of k passes covers the median with "
        "probability 1 - 2^(1-k): 75% at 3, 88% at 4); a confidence interval from so few passes "
        "is wide and rests on the passes varying lognormally."
    )


#: seats the single-pass sentence names before it counts the rest (it says every seat's finding in
#: one sentence, at any fleet size: `benchreport.flags.text` does not condense it)
SINGLE_PASS_NAMED = 2


@combines("sample.single_pass")
def single_pass_sentences(findings: list[PassCount], messages: list[str]) -> list[str]:
    """One sentence for all single-pass seats, then why one pass carries no interval."""
    if len(findings) == 1:
        return generic(messages)
    named = [f"{f.seats[0]} ({F.plural(f.n_cells, 'cell')})" for f in findings[:SINGLE_PASS_NAMED]]
    rest = len(findings) - len(named)
    seats = F.join_words(named + ([F.plural(rest, "more seat")] if rest else []))
    return [
        f"{seats} were measured in a single pass{' (flags.json names each)' if rest else ''}.",
        "One pass says nothing about run-to-run variability, so no confidence interval can be given.",
    ]


@writes(SmallN)
def small_n(f: SmallN) -> str:
    seat, cl = f.seats[0], f.cells
    if f.kind == "tail":
        parts = [
            f"{phrase(c)} from {c.n_obs} observations ({F.num(c.beyond_quantile)} beyond it; {c.needed_n} needed)"
            for c in cl[:LISTED]
        ]
        return (
            f"{seat}: tail figures rest on too few observations beyond the quantile: "
            f"{'; '.join(parts)}{more(LISTED, len(cl))}. "
            f"A tail quantile needs at least {f.thresholds['min_tail_obs']} observations beyond it to be more than "
            "the slowest few requests."
        )
    ns = F.join_words([str(n) for n in sorted({c.n_obs for c in cl})], "or")
    how = "bootstrap confidence intervals" if f.kind == "bootstrap" else "confidence intervals"
    msg = (
        f"{seat}: the {how} of {describe_cells(cl)} rest on {ns} observations, "
        f"fewer than the {f.thresholds['min_obs']} this analysis asks for"
    )
    if f.kind == "bootstrap":
        return msg + "; a bootstrap interval from so few observations covers less than its stated level."
    return msg + "; they hold only as far as the values are close to normally distributed."


@combines("sample.small_n")
def small_n_sentences(findings: list[SmallN], messages: list[str]) -> list[str]:
    """Tail and bootstrap findings as they are; the seats whose published CIs rest on few observations at once."""
    info = [f for f in findings if f.kind == "ci"]
    out = generic([m for f, m in zip(findings, messages) if f.kind != "ci"]) if len(info) < len(findings) else []
    if len(info) == 1:
        return out + generic([m for f, m in zip(findings, messages) if f.kind == "ci"])
    if info:
        ns = sorted({c.n_obs for f in info for c in f.cells})
        out.append(
            f"The confidence intervals of {F.join_words([f.seats[0] for f in info])} rest on "
            f"{F.join_words([str(n) for n in ns], 'or')} observations, fewer than the "
            f"{info[0].thresholds['min_obs']} this analysis asks for; they hold only as far "
            "as the values are close to normally distributed."
        )
    return out


def _unmeasured_reason(f) -> tuple | None:
    """(passes needed, the level faced) when every cell of an underpowered comparison had no
    run-to-run variation measured and needs the same passes at the same level; else None."""
    if not isinstance(f, UnderpoweredComparison) or not f.cells:
        return None
    if any(getattr(c, "withheld", None) is True or c.passes_needed is None or not F.missing(c.ci_low) for c in f.cells):
        return None
    reasons = {(c.passes_needed, _faces(c)) for c in f.cells}
    return reasons.pop() if len(reasons) == 1 else None


@combines("sample.underpowered")
def underpowered_sentences(findings: list, messages: list[str]) -> list[str]:
    """The comparisons against one seat that are underpowered for one reason (no run-to-run variation
    measured: the same passes needed at the same level) in one sentence; every other finding as it is
    (issue 42: the reason and the power said once)."""
    groups: dict[tuple, list] = {}
    for f in findings:
        reason = _unmeasured_reason(f)
        if reason is not None:
            groups.setdefault((f.baseline, reason), []).append(f)
    out, said = [], set()
    for f, m in zip(findings, messages):
        key = (getattr(f, "baseline", None), _unmeasured_reason(f))
        if key not in groups or len(groups[key]) == 1:
            out.append(m)
            continue
        if key in said:
            continue
        said.add(key)
        group, (needed, faces) = groups[key], key[1]
        th = group[0].thresholds
        who = F.join_words(
            [
                f"{g.candidate} in {F.plural(len(g.cells), 'cell')} ({F.join_words([phrase(c) for c in g.cells[:3]])}"
                f"{more(3, len(g.cells))})"
                for g in group
            ]
        )
        out.append(
            f"Against {key[0]}, these data cannot tell a {F.pct(th['min_effect'])} difference from none at "
            f"{F.pct(th['power'])} power with the interval clear of {_band(th)}: {who}. "
            f"No run-to-run variation was measured; at least {needed} passes per seat are needed{faces}."
        )
    return out


@writes(UnderpoweredComparison)
def underpowered_comparison(f: UnderpoweredComparison) -> str:
    th = f.thresholds
    withheld = [c for c in f.cells if getattr(c, "withheld", None) is True]
    short = [c for c in f.cells if getattr(c, "withheld", None) is not True]
    parts = []
    # cells with no run-to-run variation measured, said together where they need the same passes
    # at the same level (one reason, not one per cell: issue 42)
    unmeasured: dict[tuple, list[str]] = {}
    for c in short[:3]:
        faces = _faces(c)
        if c.passes_needed is None:  # the interval holds the variation between sessions
            parts.append(
                f"{phrase(c)}: ratio {F.num(c.ratio)} (CI {F.num(c.ci_low)}–{F.num(c.ci_high)}, with the "
                "variation between days in it): more passes on one day cannot narrow it, more days can"
            )
        elif F.missing(c.ci_low):
            if (c.passes_needed, faces) not in unmeasured:
                parts.append((c.passes_needed, faces))
            unmeasured.setdefault((c.passes_needed, faces), []).append(phrase(c))
        else:
            parts.append(
                f"{phrase(c)}: ratio {F.num(c.ratio)} (CI {F.num(c.ci_low)}–{F.num(c.ci_high)}), about "
                f"{c.passes_needed} passes per seat needed{faces}"
            )
    parts = [
        p
        if isinstance(p, str)
        else f"{F.join_words(unmeasured[p])}: no run-to-run variation measured, at least {p[0]} passes per seat "
        f"needed{p[1]}"
        for p in parts
    ]
    out = []
    if short:
        out.append(
            f"{f.candidate} against {f.baseline}: these data cannot tell a {F.pct(th['min_effect'])} "
            f"difference from none in {F.plural(len(short), 'cell')} ({'; '.join(parts)}"
            f"{more(3, len(short))}), at {F.pct(th['power'])} power with the interval clear of "
            f"{_band(th)}."
        )
    if withheld:  # issue 43: the sample was enough; the correction for multiple comparisons withheld it
        shown = [
            f"{phrase(c)}: ratio {F.num(c.ratio)} (CI {F.num(c.ci_low)}–{F.num(c.ci_high)}), {c.reason}"
            for c in withheld[:3]
        ]
        out.append(
            f"{f.candidate} against {f.baseline}: {F.plural(len(withheld), 'cell')} whose interval clears "
            f"{_band(th)} {'has' if len(withheld) == 1 else 'have'} no verdict because of "
            f"the correction for multiple comparisons, not the sample; more passes are not what "
            f"{'it lacks' if len(withheld) == 1 else 'they lack'} ({'; '.join(shown)}{more(3, len(withheld))})."
        )
    return " ".join(out)


def _faces(c) -> str:
    """What the passes needed allow for: the significance level the cell's test faces, and why."""
    if F.missing(getattr(c, "test_alpha", None)) or not isinstance(getattr(c, "correction", None), str):
        return ""
    # the correction's working (families, Holm's steps) is in the comparisons table and flags.json;
    # the sentence says the level it leaves (issue 42: each fact once, in a reader's words)
    return f" (tested at the {float(c.test_alpha):.2g} level the correction for multiple comparisons leaves)"


@writes(UnderpoweredExam)
def underpowered_exam(f: UnderpoweredExam) -> str:
    return (
        f"{exam_name(f.benchmark, f.dimension)}, {f.candidate} against {f.baseline}: with {f.n_items} items this "
        f"test detects only differences of about {F.points_words(f.mde)} or more at {F.pct(f.thresholds['power'])} "
        f"power; the observed difference of {F.points_words(f.diff, signed=True)} is below that."
    )


@writes(MixedRuns)
def mixed_runs(f: MixedRuns) -> str:
    cl = f.cells
    fields = "; ".join(f"{field_words(k)} {show(v)}" for k, v in sorted(f.differences.items()))
    what = (
        "per-request figures"
        if all(c.metric is None for c in cl)
        else describe_cells([c for c in cl if c.metric is not None])
    )
    return (
        f"{f.seats[0]} on {f.date}: the runs pooled as passes of {F.plural(len(cl), 'cell')} ({what}) were "
        f"measured differently ({fields}). Their spread is not run-to-run variability and their mean "
        "describes no single set-up; give each set-up its own seat or workload."
    )


@writes(MixedConditions)
def mixed_conditions(f: MixedConditions) -> str:
    cl = f.cells
    fields = "; ".join(f"{conditions.FIELD_WORDS.get(k, k)} {' / '.join(v)}" for k, v in f.differences.items())
    loads = "; ".join(f"{d['label']} ({F.plural(len(d['runs']), 'run')})" for d in f.loads)
    what = (
        "per-request figures"
        if all(c.metric is None for c in cl)
        else describe_cells([c for c in cl if c.metric is not None])
    )
    return (
        f'{f.seats[0]} on {f.date}: the probe "{f.probe}" ({f.harness}) names runs that sent '
        f"{F.spelled(len(f.loads))} different loads ({loads})"
        + (f", differing in {fields}" if fields else "")
        + f". Each load is reported as its own cell ({what}), never pooled as passes of one; do not read "
        "them as repetitions of one probe."
    )


@writes(CorrelatedRequests)
def correlated_requests(f: CorrelatedRequests) -> str:
    top = max(c.lag1 for c in f.cells)
    return (
        f"{f.seats[0]}: requests next to each other in send order are correlated (lag-1 autocorrelation up to "
        f"{F.num(top)}, more than chance gives over all the seat's passes) in {describe_cells(f.cells)}. A run then holds fewer independent observations than "
        "requests; intervals within a run use blocks of consecutive requests."
    )


def _session_subject(intervals: bool) -> str:
    return "the intervals" if intervals else "the spread between passes"


@writes(OneSession)
def one_session(f: OneSession) -> str:
    seat = f.seats[0]
    what = _session_subject(f.n_intervals > 0)
    verb = "leave" if f.n_intervals > 0 else "leaves"
    return (
        f"For {seat}, {what} {verb} out day-to-day variation: every pass of {seat} ran on {f.date} "
        f"({F.plural(f.n_runs, 'run')}); repeat on another day to include it."
    )


@combines("sample.one_session")
def one_session_sentences(findings: list[OneSession], messages: list[str]) -> list[str]:
    """The seats whose passes all ran on one date, in one sentence, seats grouped by date."""
    if len(findings) == 1:
        return generic(messages)
    by_date: dict[str, list[str]] = {}
    for f in findings:
        by_date.setdefault(f.date, []).append(f.seats[0])
    parts = [f"{F.join_words(seats)} ran on {d}" for d, seats in sorted(by_date.items())]
    head = "every pass of " + parts[0] + "".join(f", every pass of {p}" for p in parts[1:])
    with_ci = {f.n_intervals > 0 for f in findings}
    what = (
        "The intervals"
        if with_ci == {True}
        else "The spread between passes"
        if with_ci == {False}
        else "The intervals and the spread between passes"
    )
    verb = "leave" if what.startswith("The intervals") else "leaves"
    return [f"{what} {verb} out day-to-day variation: {head}; repeat on another day."]


@writes(FewSessions)
def few_sessions(f: FewSessions) -> str:
    seat = f.seats[0]
    what = _session_subject(f.n_intervals > 0)
    verb = "leave" if f.n_intervals > 0 else "leaves"
    return (
        f"For {seat}, {what} {verb} out day-to-day variation: {seat} was measured on "
        f"{F.join_words(list(f.dates))} ({F.plural(f.n_runs, 'run')}), too few dates to estimate it; "
        f"measure on {F.plural(f.min_sessions, 'date')} or more to include it."
    )


def _band(th: dict) -> str:
    """The noise band a comparison flag names: one band ('the ±2% noise band') or, where the tails
    have wider ones (issue 43), 'the noise band of its statistic (±2% for means and medians, wider
    for tails)'."""
    noise = th.get("noise")
    tails = [th.get(k, noise) for k in ("noise_p90", "noise_p95", "noise_p99")]
    if all(t == noise for t in tails):
        return f"the ±{F.pct(noise)} noise band"
    return f"the noise band of its statistic (±{F.pct(noise)} for means and medians, wider for tails)"
