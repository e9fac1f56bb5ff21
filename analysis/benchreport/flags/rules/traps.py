"""Measurement traps: a prefix-cache hit read as prefill, tokens in the reasoning field, a TTFT
that times the reasoning or an empty first chunk, answers stopped at the token cap (spec/flags.md,
"Measurement traps")."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from benchreport.stats.requests import failed_mask
from benchreport.thresholds import Thresholds

from .._common import int_or_none, na, plain, true_mask, used
from ..exclusions import CachedRun, Exclusions
from ..findings import ABSENT, Finding, Record, key

__all__ = [
    "ExcludedFigure",
    "CacheCounts",
    "PrefixCacheHit",
    "CachedPromptTokens",
    "ReasoningField",
    "ReasoningTtftCell",
    "ReasoningTtft",
    "FirstChunkCell",
    "FirstChunk",
    "CappedAnswers",
    "prefix_cache",
    "reasoning_field",
    "reasoning_ttft",
    "first_chunk",
    "capped_answers",
    "fixed_output_runs",
]


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
    #: of the empty answers, how many have a time to first token (it times reasoning, not an
    #: answer, and is counted in the TTFT figures), and its p50
    with_ttft: int = ABSENT
    ttft_p50_ms: float = ABSENT


@dataclass(frozen=True, kw_only=True)
class ReasoningTtftCell(Record):
    """One cell (seat, workload, concurrency, harness, load) where the first content token came after TTFT."""

    workload: str | None
    concurrency: int | None
    harness: str | None
    load: str | None
    runs: list[str]
    requests: int
    reasoning_first: int
    ttft_p50_ms: float
    first_content_p50_ms: float
    ttft_mean_ms: float
    first_content_mean_ms: float
    ratio: float


@dataclass(frozen=True, kw_only=True)
class ReasoningTtft(Finding):
    """A TTFT that times the first reasoning token while the answer's first token came much later (warn)."""

    CODES = ("trap.reasoning_ttft",)
    cells: list[ReasoningTtftCell]
    thresholds: dict[str, float]


@dataclass(frozen=True, kw_only=True)
class FirstChunkCell(Record):
    """One cell whose TTFT cannot be a first token.

    `basis`: "chunks" (the importer saw one chunk more than tokens: `first_token_chunk_ms`) or
    "itl" (TTFT p50 below `first_chunk_ratio` x the ITL p50 of the same requests).
    """

    workload: str | None
    concurrency: int | None
    harness: str | None
    load: str | None
    runs: list[str]
    requests: int
    basis: str
    empty_first_chunk: int
    ttft_p50_ms: float
    itl_p50_ms: float | None
    first_token_p50_ms: float | None
    ratio: float


@dataclass(frozen=True, kw_only=True)
class FirstChunk(Finding):
    """A TTFT that times a chunk that carried no token (a role-only first chunk), not a first token (warn)."""

    CODES = ("trap.first_chunk",)
    cells: list[FirstChunkCell]
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
    return CacheCounts(
        requests_with_cache_hits=cr.requests_with_cache_hits,
        requests=cr.requests,
        cached_prompt_tokens=cr.cached_prompt_tokens,
        prompt_tokens=cr.prompt_tokens,
        seat=cr.seat,
        date=cr.date,
    )


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
        ref = (
            {}
            if h.reference_kind is None
            else {"reference": h.reference, "reference_kind": h.reference_kind, "ratio": h.ratio}
        )
        cache = _counts(excluded.cached_run(h.run_id)) if "cached_tokens" in h.reasons else ABSENT
        figure = ExcludedFigure(
            seat=h.seat,
            run_id=h.run_id,
            workload=h.workload,
            concurrency=h.concurrency,
            metric=h.metric,
            statistic=h.statistic,
            value=h.value,
        )
        out.append(
            PrefixCacheHit(
                code="trap.prefix_cache",
                severity="critical",
                seats=(h.seat,),
                workload=h.workload,
                concurrency=h.concurrency,
                metric=h.metric,
                statistic=h.statistic,
                value=h.value,
                run_id=h.run_id,
                date=h.date,
                pass_=h.pass_,
                reasons=list(h.reasons),
                fresh_prompt=h.fresh_prompt,
                context_tokens=h.context_tokens,
                excluded=[figure],
                thresholds=dict(th),
                cache=cache,
                **ref,
            )
        )
    flagged_runs = {h.run_id for h in excluded.hits}
    per_seat: dict[str, list] = {}
    for cr in excluded.cached_runs:
        if cr.run_id not in flagged_runs:
            per_seat.setdefault(cr.seat, []).append(cr)
    for seat, rs in sorted(per_seat.items()):
        out.append(
            CachedPromptTokens(
                code="trap.prefix_cache",
                severity="warn",
                seats=(seat,),
                runs=rs,
                requests_with_cache_hits=sum(r.requests_with_cache_hits for r in rs),
                requests=sum(r.requests for r in rs),
                excluded=[],
                thresholds=dict(th),
            )
        )
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
    delivered = (
        true_mask(requests["output_tokens"].astype("Int64").gt(0))
        | true_mask(requests["reasoning_tokens"].astype("Int64").gt(0))
        | true_mask(requests["reasoning_chars"].astype("Int64").gt(0))
    )
    empty = true_mask(cc.eq(0)) & delivered
    out = []
    for seat, idx in requests.groupby("seat").groups.items():
        n_known = int(known.loc[idx].sum())
        n_empty = int(empty.loc[idx].sum())
        if n_known == 0 or n_empty == 0 or n_empty / n_known <= float(thresholds.reasoning_share):
            continue
        sub = requests.loc[idx][empty.loc[idx].to_numpy()]
        ttft = _times(sub, "ttft_ms")
        ttft = ttft[~np.isnan(ttft)]
        timed = {"with_ttft": int(ttft.size), "ttft_p50_ms": float(np.median(ttft))} if ttft.size else {}
        out.append(
            ReasoningField(
                code="trap.reasoning_field",
                severity="warn",
                seats=(str(seat),),
                empty_content=n_empty,
                with_content_field=n_known,
                share=n_empty / n_known,
                reasoning_tokens=plain(sub["reasoning_tokens"].astype("Int64").sum(min_count=1)),
                output_tokens=plain(sub["output_tokens"].astype("Int64").sum(min_count=1)),
                runs=sorted(set(sub["run_id"].astype(str))),
                thresholds=used(thresholds, "reasoning_share"),
                **timed,
            )
        )
    return out


def _times(df: pd.DataFrame, col: str) -> np.ndarray:
    """A request time column as floats (NaN where absent)."""
    if col not in df.columns:
        return np.full(len(df), np.nan)
    return pd.to_numeric(df[col], errors="coerce").astype("Float64").to_numpy(dtype=float, na_value=np.nan)


#: (workload, concurrency, harness, load) groups of a seat's successful requests
_GROUP = ["seat", "workload", "concurrency", "harness", "load_label"]


def _timed_groups(requests: pd.DataFrame, runs: pd.DataFrame, needed: str):
    """(key, group) of successful, recorded requests per seat and cell (workload, concurrency,
    harness, load: passes of one cell pooled), for requests whose table has column `needed` set."""
    if requests is None or requests.empty or needed not in requests.columns or not requests[needed].notna().any():
        return
    keep = ~failed_mask(requests)
    if "counted_only" in requests.columns:
        keep &= ~true_mask(requests["counted_only"]).to_numpy()
    df = requests[keep]
    info = runs.set_index("run_id") if runs is not None and not runs.empty else None
    df = df.assign(
        harness=df["run_id"].map(info["harness"]) if info is not None else None,
        load_label=df["run_id"].map(info["load_label"]) if info is not None and "load_label" in info else None,
    )
    for k, g in df.groupby(_GROUP, dropna=False, sort=True):
        if g[needed].notna().any():
            yield k, g


def reasoning_ttft(requests: pd.DataFrame, runs: pd.DataFrame, *, thresholds: Thresholds) -> list[ReasoningTtft]:
    """`trap.reasoning_ttft`: a TTFT that times the reasoning while the answer's first token came later.

    Where a harness times the first content token apart from TTFT (`first_content_ms`: GuideLLM's
    time_to_first_output_token_ms, AIPerf's time_to_first_output_token), a cell of a seat (its
    successful requests of one workload, concurrency, harness and load, passes pooled) is flagged
    when some requests got their first content token after their TTFT (reasoning came first) and
    the first content token's p50 or mean exceeds `reasoning_ttft_ratio` x TTFT's. The TTFT figures
    are then times to the first token of reasoning, not of the answer. One finding per seat.
    """
    limit = float(thresholds.reasoning_ttft_ratio)
    per_seat: dict[str, list[ReasoningTtftCell]] = {}
    for (seat, workload, conc, harness, load), g in _timed_groups(requests, runs, "first_content_ms"):
        t, c = _times(g, "ttft_ms"), _times(g, "first_content_ms")
        both = ~np.isnan(t) & ~np.isnan(c)
        if not both.any():
            continue
        t, c = t[both], c[both]
        later = int(np.sum(c > t + np.maximum(1e-3, 1e-6 * t)))
        p50_t, p50_c, mean_t, mean_c = (float(np.median(t)), float(np.median(c)), float(np.mean(t)), float(np.mean(c)))
        ratio = max(p50_c / p50_t if p50_t > 0 else np.inf, mean_c / mean_t if mean_t > 0 else np.inf)
        if later == 0 or ratio <= limit:
            continue
        per_seat.setdefault(str(seat), []).append(
            ReasoningTtftCell(
                workload=na(workload),
                concurrency=int_or_none(conc),
                harness=na(harness),
                load=na(load),
                runs=sorted(set(g["run_id"].astype(str)[both])),
                requests=int(both.sum()),
                reasoning_first=later,
                ttft_p50_ms=p50_t,
                first_content_p50_ms=p50_c,
                ttft_mean_ms=mean_t,
                first_content_mean_ms=mean_c,
                ratio=float(ratio),
            )
        )
    return [
        ReasoningTtft(
            code="trap.reasoning_ttft",
            severity="warn",
            seats=(seat,),
            cells=cells,
            thresholds=used(thresholds, "reasoning_ttft_ratio"),
        )
        for seat, cells in sorted(per_seat.items())
    ]


#: fewest requests of a cell whose TTFT the ITL test judges (a median of fewer is one or two requests)
FIRST_CHUNK_MIN_REQUESTS = 3


def first_chunk(requests: pd.DataFrame, runs: pd.DataFrame, *, thresholds: Thresholds) -> list[FirstChunk]:
    """`trap.first_chunk`: a TTFT that cannot be a first token (an empty or role-only first chunk).

    A cell of a seat (successful requests of one workload, concurrency, harness and load) is
    flagged when its TTFT p50 is below `first_chunk_ratio` x
    - the p50 time to the first chunk that carried a token, where the importer saw a stream
      with one chunk more than tokens (`first_token_chunk_ms`; vLLM's chat client times the
      role-only chunk an OpenAI-compatible server sends first), on at least half the requests;
    - else the p50 inter-token latency of the same requests (at least 3 with both): a first
      token needs a forward pass over the prompt, which takes at least about one decode step,
      so a TTFT far below one inter-token gap timed something that carried no token.
    A prefix-cache hit or a tiny prompt still needs that one step, so neither trips the ITL test.
    One finding per seat.
    """
    limit = float(thresholds.first_chunk_ratio)
    per_seat: dict[str, list[FirstChunkCell]] = {}
    for (seat, workload, conc, harness, load), g in _timed_groups(requests, runs, "ttft_ms"):
        t, itl, chunk = _times(g, "ttft_ms"), _times(g, "itl_ms"), _times(g, "first_token_chunk_ms")
        timed = ~np.isnan(t)
        n = int(timed.sum())
        marked = timed & ~np.isnan(chunk)
        with_itl = timed & ~np.isnan(itl)
        itl_p50 = float(np.median(itl[with_itl])) if with_itl.any() else None
        if n and marked.sum() * 2 >= n:
            basis, sel, ref = "chunks", marked, float(np.median(chunk[marked]))
        elif with_itl.sum() >= FIRST_CHUNK_MIN_REQUESTS:
            basis, sel, ref = "itl", with_itl, itl_p50
        else:
            continue
        p50 = float(np.median(t[sel]))
        if not ref or ref <= 0 or p50 >= limit * ref:
            continue
        per_seat.setdefault(str(seat), []).append(
            FirstChunkCell(
                workload=na(workload),
                concurrency=int_or_none(conc),
                harness=na(harness),
                load=na(load),
                runs=sorted(set(g["run_id"].astype(str)[sel])),
                requests=int(sel.sum()),
                basis=basis,
                empty_first_chunk=int(marked.sum()),
                ttft_p50_ms=p50,
                itl_p50_ms=itl_p50,
                first_token_p50_ms=float(np.median(chunk[marked])) if marked.any() else None,
                ratio=p50 / ref,
            )
        )
    return [
        FirstChunk(
            code="trap.first_chunk",
            severity="warn",
            seats=(seat,),
            cells=cells,
            thresholds=used(thresholds, "first_chunk_ratio"),
        )
        for seat, cells in sorted(per_seat.items())
    ]


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
    df = pd.DataFrame(
        {"seat": requests["seat"], "cap": cap, "capped": capped, "known": known, "run_id": requests["run_id"]}
    )
    out = []
    for (seat, c), g in df.groupby(["seat", "cap"], dropna=False):
        n = int(g["known"].sum())
        k = int((g["capped"] & g["known"]).sum())
        if n == 0 or k / n <= float(thresholds.capped_share):
            continue
        out.append(
            CappedAnswers(
                code="trap.capped_answers",
                severity="warn",
                seats=(str(seat),),
                capped=k,
                answers=n,
                share=k / n,
                max_tokens=int_or_none(c),
                runs=sorted(set(g["run_id"].astype(str))),
                thresholds=used(thresholds, "capped_share"),
            )
        )
    return out
