"""Words for the measurement traps: prefix-cache hits, the reasoning field, a TTFT of the reasoning or
of an empty first chunk, capped answers."""

from __future__ import annotations

from benchreport import format as F

from ..exclusions import PREFILL_METRICS
from ..rules.traps import (
    CachedPromptTokens,
    CappedAnswers,
    FirstChunk,
    FirstChunkCell,
    PrefixCacheHit,
    ReasoningField,
    ReasoningTtft,
    ReasoningTtftCell,
)
from ._common import writes

__all__ = [
    "prefix_cache_hit",
    "cached_prompt_tokens",
    "reasoning_field",
    "reasoning_ttft",
    "first_chunk",
    "capped_answers",
]


def _hit_clauses(f: PrefixCacheHit) -> list[str]:
    clauses = []
    if "not_fresh" in f.reasons:
        clauses.append("the prompt had been sent before")
    if "cached_tokens" in f.reasons:
        cr = f.cache
        clauses.append(
            f"{cr.requests_with_cache_hits} of {cr.requests} requests of its run report "
            f"{F.num(cr.cached_prompt_tokens)} cached prompt tokens"
        )
    if "ratio" in f.reasons:
        ref = "fresh-prompt prefill" if f.reference_kind == "fresh" else "other prefill figures"
        clauses.append(
            f"it is {F.ratio(f.ratio)} times the seat's {ref} of {F.value_with_unit(f.reference, 'prefill_tok_s')}"
        )
    return clauses


@writes(PrefixCacheHit)
def prefix_cache_hit(f: PrefixCacheHit) -> str:
    prefill = f.metric in PREFILL_METRICS
    what = "prefill figure" if prefill else f"{F.metric_words(f.metric)} figure"
    not_what = "prefill" if prefill else "a fresh-prompt measurement"
    return (
        f"{f.seats[0]}: the {what} of {F.value_with_unit(f.value, f.metric)} ({f.date}, pass {f.pass_}) "
        f"is a prefix-cache hit, not {not_what}: {'; '.join(_hit_clauses(f))}. It is excluded from results."
    )


@writes(CachedPromptTokens)
def cached_prompt_tokens(f: CachedPromptTokens) -> str:
    rs = f.runs
    shares = [r.cached_prompt_tokens / r.prompt_tokens for r in rs if r.prompt_tokens]
    where = f"run {rs[0].run_id}" if len(rs) == 1 else f"{len(rs)} runs"
    share = ""
    if shares:
        lo, hi = min(shares), max(shares)
        share = (
            f" ({F.pct(lo)} of their prompt tokens)"
            if F.pct(lo) == F.pct(hi)
            else f" ({F.pct(lo)} to {F.pct(hi)} of the prompt tokens of a run)"
        )
    dates = F.join_words(sorted({r.date for r in rs}))
    return (
        f"{f.seats[0]}: {f.requests_with_cache_hits} of {f.requests} requests in {where} ({dates}) report cached "
        f"prompt tokens{share}: their time to first token measures prefix-cache hits, not prefill."
    )


@writes(ReasoningField)
def reasoning_field(f: ReasoningField) -> str:
    tokens = f.reasoning_tokens if not F.missing(f.reasoning_tokens) else f.output_tokens
    delivered = f"{F.num(tokens)} tokens were" if not F.missing(tokens) else "tokens were"
    timed = ""
    if not F.missing(f.with_ttft) and f.with_ttft:
        which = "its" if f.with_ttft == 1 else "their"
        timed = (
            f" {F.plural(f.with_ttft, 'such answer')} {'has' if f.with_ttft == 1 else 'have'} a time to first "
            f"token (p50 {F.value_with_unit(f.ttft_p50_ms, 'ttft_ms')}) that times reasoning, not an answer, "
            f"and {which} TTFT is in the TTFT figures."
        )
    return (
        f"{f.seats[0]}: {f.empty_content} of {f.with_content_field} answers ({F.pct(f.share)}) had an empty "
        f"content field while {delivered} delivered in the reasoning field: the model is working and the "
        f"client reads the wrong field. Count delivered tokens including reasoning.{timed}"
    )


#: harness -> (what its TTFT field is called, what its first-content field is called)
_FIRST_TOKEN_FIELDS = {
    "guidellm": ("GuideLLM's time_to_first_token_ms", "its time_to_first_output_token_ms"),
    "aiperf": ("AIPerf's time_to_first_token", "its time_to_first_output_token"),
}


def _where(c) -> str:
    head = f"at {F.streams(c.concurrency)}" if c.concurrency is not None else ""
    note = F.workload_note(c.workload).strip()
    load = f" ({c.load})" if c.load else ""
    return (" ".join(x for x in (head, note) if x) or "in its requests") + load


def _reasoning_cell(c: ReasoningTtftCell) -> str:
    return (
        f"{_where(c)}, {c.reasoning_first} of {c.requests} requests got reasoning first: TTFT p50 "
        f"{F.value_with_unit(c.ttft_p50_ms, 'ttft_ms')} against {F.value_with_unit(c.first_content_p50_ms, 'ttft_ms')}"
        f" to the answer (means {F.num(c.ttft_mean_ms)} and {F.value_with_unit(c.first_content_mean_ms, 'ttft_ms')})"
    )


def _cells(cells: list, one) -> str:
    """The cells of a first-token finding, said one by one (at most three), first letter capital."""
    text = "; ".join(one(c) for c in cells[:3])
    more = f"; and {F.plural(len(cells) - 3, 'more cell')}" if len(cells) > 3 else ""
    return text[:1].upper() + text[1:] + more + "."


@writes(ReasoningTtft)
def reasoning_ttft(f: ReasoningTtft) -> str:
    names = {_FIRST_TOKEN_FIELDS.get(str(c.harness).lower()) for c in f.cells}
    ttft_name, content_name = (
        names.pop() if len(names) == 1 and None not in names else ("its time to first token", "the first content token")
    )
    return (
        f"{f.seats[0]}: TTFT here is {ttft_name}, the first token of reasoning or answer, and the answer's "
        f"first token ({content_name}) came later: quote TTFT as the time to the first token with reasoning "
        f"included, not as the wait for the answer. {_cells(f.cells, _reasoning_cell)}"
    )


def _chunk_cell(c: FirstChunkCell) -> str:
    if c.basis == "chunks":
        why = (
            f"{c.empty_first_chunk} of {c.requests} streams had one chunk more than tokens, and TTFT p50 "
            f"{F.value_with_unit(c.ttft_p50_ms, 'ttft_ms')} is {F.pct(c.ratio)} of the "
            f"{F.value_with_unit(c.first_token_p50_ms, 'ttft_ms')} (p50) to the first chunk that carried a token"
        )
    else:
        why = (
            f"TTFT p50 {F.value_with_unit(c.ttft_p50_ms, 'ttft_ms')} over {c.requests} requests is "
            f"{F.pct(c.ratio)} of one inter-token gap of the same requests (p50 "
            f"{F.value_with_unit(c.itl_p50_ms, 'itl_ms')})"
        )
    return f"{_where(c)}, {why}"


@writes(FirstChunk)
def first_chunk(f: FirstChunk) -> str:
    vllm = any("vllm" in str(c.harness).lower() for c in f.cells)
    client = (
        " (vLLM's client on the chat endpoint times the first chunk, which may carry only the role)" if vllm else ""
    )
    return (
        f"{f.seats[0]}: its time to first token cannot be a first token: it times an empty first chunk"
        f"{client}, not a token, and is not to be quoted as TTFT. {_cells(f.cells, _chunk_cell)}"
    )


@writes(CappedAnswers)
def capped_answers(f: CappedAnswers) -> str:
    c = f.max_tokens
    cap = f"the {F.num(c)}-token cap" if c is not None else "the token cap (finish reason 'length')"
    same = f"capped at {F.num(c)} tokens." if c is not None else "under the same cap."
    return (
        f"{f.seats[0]}: {f.capped} of {f.answers} answers ({F.pct(f.share)}) stopped at {cap}, so the figures "
        f"measure truncated answers; compare them only with runs {same}"
    )
