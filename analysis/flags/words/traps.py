"""Words for the measurement traps: prefix-cache hits, the reasoning field, capped answers."""
from __future__ import annotations

from benchreport import format as F

from ..exclusions import PREFILL_METRICS
from ..rules.traps import CachedPromptTokens, CappedAnswers, PrefixCacheHit, ReasoningField
from ._common import writes

__all__ = ["prefix_cache_hit", "cached_prompt_tokens", "reasoning_field", "capped_answers"]


def _hit_clauses(f: PrefixCacheHit) -> list[str]:
    clauses = []
    if "not_fresh" in f.reasons:
        clauses.append("the prompt had been sent before")
    if "cached_tokens" in f.reasons:
        cr = f.cache
        clauses.append(f"{cr.requests_with_cache_hits} of {cr.requests} requests of its run report "
                       f"{F.num(cr.cached_prompt_tokens)} cached prompt tokens")
    if "ratio" in f.reasons:
        ref = "fresh-prompt prefill" if f.reference_kind == "fresh" else "other prefill figures"
        clauses.append(f"it is {F.ratio(f.ratio)} times the seat's {ref} of "
                       f"{F.value_with_unit(f.reference, 'prefill_tok_s')}")
    return clauses


@writes(PrefixCacheHit)
def prefix_cache_hit(f: PrefixCacheHit) -> str:
    prefill = f.metric in PREFILL_METRICS
    what = "prefill figure" if prefill else f"{F.metric_words(f.metric)} figure"
    not_what = "prefill" if prefill else "a fresh-prompt measurement"
    return (f"{f.seats[0]}: the {what} of {F.value_with_unit(f.value, f.metric)} ({f.date}, pass {f.pass_}) "
            f"is a prefix-cache hit, not {not_what}: {'; '.join(_hit_clauses(f))}. It is excluded from results.")


@writes(CachedPromptTokens)
def cached_prompt_tokens(f: CachedPromptTokens) -> str:
    rs = f.runs
    shares = [r.cached_prompt_tokens / r.prompt_tokens for r in rs if r.prompt_tokens]
    where = f"run {rs[0].run_id}" if len(rs) == 1 else f"{len(rs)} runs"
    share = ""
    if shares:
        lo, hi = min(shares), max(shares)
        share = (f" ({F.pct(lo)} of their prompt tokens)" if F.pct(lo) == F.pct(hi)
                 else f" ({F.pct(lo)} to {F.pct(hi)} of the prompt tokens of a run)")
    dates = F.join_words(sorted({r.date for r in rs}))
    return (f"{f.seats[0]}: {f.requests_with_cache_hits} of {f.requests} requests in {where} ({dates}) report cached "
            f"prompt tokens{share}: their time to first token measures prefix-cache hits, not prefill.")


@writes(ReasoningField)
def reasoning_field(f: ReasoningField) -> str:
    tokens = f.reasoning_tokens if not F.missing(f.reasoning_tokens) else f.output_tokens
    delivered = f"{F.num(tokens)} tokens were" if not F.missing(tokens) else "tokens were"
    return (f"{f.seats[0]}: {f.empty_content} of {f.with_content_field} answers ({F.pct(f.share)}) had an empty "
            f"content field while {delivered} delivered in the reasoning field: the model is working and the "
            "client reads the wrong field. Count delivered tokens including reasoning.")


@writes(CappedAnswers)
def capped_answers(f: CappedAnswers) -> str:
    c = f.max_tokens
    cap = f"the {F.num(c)}-token cap" if c is not None else "the token cap (finish reason 'length')"
    same = f"capped at {F.num(c)} tokens." if c is not None else "under the same cap."
    return (f"{f.seats[0]}: {f.capped} of {f.answers} answers ({F.pct(f.share)}) stopped at {cap}, so the figures "
            f"measure truncated answers; compare them only with runs {same}")
