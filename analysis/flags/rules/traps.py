"""Measurement traps: a prefix-cache hit read as prefill, tokens in the reasoning field, answers
stopped at the token cap (spec/flags.md, "Measurement traps")."""
from __future__ import annotations

import json
from dataclasses import dataclass

import pandas as pd

from benchreport.thresholds import Thresholds

from .._common import int_or_none, plain, true_mask, used
from ..exclusions import CachedRun, Exclusions
from ..findings import ABSENT, Finding, Record, key

__all__ = ["ExcludedFigure", "CacheCounts", "PrefixCacheHit", "CachedPromptTokens", "ReasoningField",
           "CappedAnswers", "prefix_cache", "reasoning_field", "capped_answers", "fixed_output_runs"]


@dataclass(frozen=True, kw_only=True)
class ExcludedFigure(Record):
    """How a flag names one excluded measurement (evidence["excluded"])."""

    seat: str
    run_id: str
    workload: str | None
    concurrency: int | None
    metric: str
    statistic: str | None
    value: float


@dataclass(frozen=True, kw_only=True)
class CacheCounts(Record):
    """What a run's requests say about cached prompt tokens."""

    requests_with_cache_hits: int
    requests: int
    cached_prompt_tokens: int
    prompt_tokens: int | None
    seat: str
    date: str


@dataclass(frozen=True, kw_only=True)
class PrefixCacheHit(Finding):
    """A figure excluded from results as a prefix-cache hit (critical)."""

    CODES = ("trap.prefix_cache",)
    value: float
    run_id: str
    date: str
    pass_: int = key("pass")
    reasons: list[str]
    fresh_prompt: bool | None
    context_tokens: int | None
    excluded: list[ExcludedFigure]
    thresholds: dict[str, float]
    reference: float = ABSENT
    reference_kind: str = ABSENT
    ratio: float = ABSENT
    cache: CacheCounts = ABSENT

    @classmethod
    def matches(cls, evidence: dict) -> bool:
        return "value" in evidence


@dataclass(frozen=True, kw_only=True)
class CachedPromptTokens(Finding):
    """Runs of one seat whose requests report cached prompt tokens but have no excluded figure (warn)."""

    CODES = ("trap.prefix_cache",)
    runs: list[CachedRun]
    requests_with_cache_hits: int
    requests: int
    excluded: list[ExcludedFigure]
    thresholds: dict[str, float]

    @classmethod
    def matches(cls, evidence: dict) -> bool:
        return "runs" in evidence


@dataclass(frozen=True, kw_only=True)
class ReasoningField(Finding):
    CODES = ("trap.reasoning_field",)
    empty_content: int
    with_content_field: int
    share: float
    reasoning_tokens: int | None
    output_tokens: int | None
    runs: list[str]
    thresholds: dict[str, float]


@dataclass(frozen=True, kw_only=True)
class CappedAnswers(Finding):
    CODES = ("trap.capped_answers",)
    capped: int
    answers: int
    share: float
    max_tokens: int | None
    runs: list[str]
    thresholds: dict[str, float]


def _counts(cr: CachedRun) -> CacheCounts:
    return CacheCounts(requests_with_cache_hits=cr.requests_with_cache_hits, requests=cr.requests,
                       cached_prompt_tokens=cr.cached_prompt_tokens, prompt_tokens=cr.prompt_tokens,
                       seat=cr.seat, date=cr.date)


def prefix_cache(excluded: Exclusions) -> list[Finding]:
    """`trap.prefix_cache`: a prefill figure that is a prefix-cache hit, not prefill.

    Critical, one finding per figure the decision (`benchreport.flags.exclusions`) excluded
    from results, with the `cache_ratio` it was made with. A run whose requests report
    cached prompt tokens but which has no excluded figure is a warn finding per seat: its
    TTFT includes cache hits.
    """
    th = {"cache_ratio": excluded.cache_ratio}
    out: list[Finding] = []
    for h in excluded.hits:
        ref = {} if h.reference_kind is None else {"reference": h.reference, "reference_kind": h.reference_kind,
                                                   "ratio": h.ratio}
        cache = _counts(excluded.cached_run(h.run_id)) if "cached_tokens" in h.reasons else ABSENT
        figure = ExcludedFigure(seat=h.seat, run_id=h.run_id, workload=h.workload, concurrency=h.concurrency,
                                metric=h.metric, statistic=h.statistic, value=h.value)
        out.append(PrefixCacheHit(
            code="trap.prefix_cache", severity="critical", seats=(h.seat,), workload=h.workload,
            concurrency=h.concurrency, metric=h.metric, statistic=h.statistic, value=h.value, run_id=h.run_id,
            date=h.date, pass_=h.pass_, reasons=list(h.reasons), fresh_prompt=h.fresh_prompt,
            context_tokens=h.context_tokens, excluded=[figure], thresholds=dict(th), cache=cache, **ref))
    flagged_runs = {h.run_id for h in excluded.hits}
    per_seat: dict[str, list] = {}
    for cr in excluded.cached_runs:
        if cr.run_id not in flagged_runs:
            per_seat.setdefault(cr.seat, []).append(cr)
    for seat, rs in sorted(per_seat.items()):
        out.append(CachedPromptTokens(
            code="trap.prefix_cache", severity="warn", seats=(seat,), runs=rs,
            requests_with_cache_hits=sum(r.requests_with_cache_hits for r in rs),
            requests=sum(r.requests for r in rs), excluded=[], thresholds=dict(th)))
    return out


def reasoning_field(requests: pd.DataFrame, *, thresholds: Thresholds) -> list[ReasoningField]:
    """`trap.reasoning_field`: answers with an empty content field although tokens were delivered.

    A request counts when `content_chars` is 0 while `output_tokens`, `reasoning_tokens`
    or `reasoning_chars` is positive; the share is over requests whose `content_chars`
    is known, per seat, and flagged above `reasoning_share` (default 0: any such answer
    means the client reads the wrong field, the fleet paper's third trap).
    """
    if requests is None or requests.empty:
        return []
    cc = requests["content_chars"].astype("Int64")
    known = cc.notna()
    delivered = (true_mask(requests["output_tokens"].astype("Int64").gt(0))
                 | true_mask(requests["reasoning_tokens"].astype("Int64").gt(0))
                 | true_mask(requests["reasoning_chars"].astype("Int64").gt(0)))
    empty = true_mask(cc.eq(0)) & delivered
    out = []
    for seat, idx in requests.groupby("seat").groups.items():
        n_known = int(known.loc[idx].sum())
        n_empty = int(empty.loc[idx].sum())
        if n_known == 0 or n_empty == 0 or n_empty / n_known <= float(thresholds.reasoning_share):
            continue
        sub = requests.loc[idx][empty.loc[idx].to_numpy()]
        out.append(ReasoningField(
            code="trap.reasoning_field", severity="warn", seats=(str(seat),), empty_content=n_empty,
            with_content_field=n_known, share=n_empty / n_known,
            reasoning_tokens=plain(sub["reasoning_tokens"].astype("Int64").sum(min_count=1)),
            output_tokens=plain(sub["output_tokens"].astype("Int64").sum(min_count=1)),
            runs=sorted(set(sub["run_id"].astype(str))), thresholds=used(thresholds, "reasoning_share")))
    return out


def fixed_output_runs(runs: pd.DataFrame) -> set[str]:
    """Runs whose load asked for a fixed output length (`load.fixed_output`: ignore_eos with an
    output length): every answer runs to its length by design, so stopping there is no trap."""
    if runs is None or runs.empty or "load" not in runs.columns:
        return set()
    out = set()
    for run_id, text in zip(runs["run_id"].astype(str), runs["load"]):
        if isinstance(text, str) and text:
            load = json.loads(text)
            if isinstance(load, dict) and load.get("fixed_output") is True:
                out.add(run_id)
    return out


def capped_answers(requests: pd.DataFrame, runs: pd.DataFrame, *, thresholds: Thresholds) -> list[CappedAnswers]:
    """`trap.capped_answers`: a large share of answers stopped at the token cap.

    An answer is capped when `finish_reason` is "length" or `output_tokens` reaches the
    harness's `max_tokens`; the share is over answers where either is known, per seat and
    cap, and flagged above `capped_share`. The figures then measure truncated answers and
    compare only with runs under the same cap (the field note's 28 of 30 at 1,024 tokens).
    Answers of fixed-output runs (`fixed_output_runs`: ignore_eos) are not counted: they were
    not free to stop, so reaching the length is the design, not a cut.
    """
    if requests is None or requests.empty:
        return []
    fixed = fixed_output_runs(runs)
    if fixed:
        requests = requests[~requests["run_id"].astype(str).isin(fixed)]
        if requests.empty:
            return []
    cap = requests["run_id"].map(runs.set_index("run_id")["max_tokens"]).astype("Int64")
    fr = requests["finish_reason"].astype("string")
    ot = requests["output_tokens"].astype("Int64")
    capped = true_mask(fr.eq("length")) | true_mask(ot.ge(cap))
    known = fr.notna() | (ot.notna() & cap.notna())
    df = pd.DataFrame({"seat": requests["seat"], "cap": cap, "capped": capped, "known": known,
                       "run_id": requests["run_id"]})
    out = []
    for (seat, c), g in df.groupby(["seat", "cap"], dropna=False):
        n = int(g["known"].sum())
        k = int((g["capped"] & g["known"]).sum())
        if n == 0 or k / n <= float(thresholds.capped_share):
            continue
        out.append(CappedAnswers(
            code="trap.capped_answers", severity="warn", seats=(str(seat),), capped=k, answers=n, share=k / n,
            max_tokens=int_or_none(c), runs=sorted(set(g["run_id"].astype(str))),
            thresholds=used(thresholds, "capped_share")))
    return out

