"""What every family's words share: the registries of writers, and phrases for cells, exams, fields."""

from __future__ import annotations

import re
from typing import Callable

from benchreport import format as F

from .._common import key_sort, stat_rank

__all__ = [
    "WRITERS",
    "COMBINERS",
    "writes",
    "combines",
    "describe_cells",
    "phrase",
    "exam_name",
    "test_words",
    "field_words",
    "show",
    "sentences",
    "generic",
    "more",
]

#: finding type -> function writing its message
WRITERS: dict[type, Callable] = {}
#: code -> function writing the limitations sentences of that code's findings
COMBINERS: dict[str, Callable] = {}


def writes(*types):
    """Register a function as the message writer of finding `types`."""

    def register(fn):
        for t in types:
            WRITERS[t] = fn
        return fn

    return register


def combines(*codes):
    """Register a function writing the limitations sentences of `codes` (findings, messages) -> sentences."""

    def register(fn):
        for c in codes:
            COMBINERS[c] = fn
        return fn

    return register


def phrase(c) -> str:
    """A cell record in words: 'per-stream decode at 16 streams (code)'."""
    return F.cell_phrase(c.workload, c.concurrency, c.metric, getattr(c, "statistic", None))


def describe_cells(cells: list, limit: int = 4) -> str:
    """Cells grouped by (metric, statistic, workload) with concurrencies listed:
    'per-stream decode at 1, 4, 8 and 16 streams; prefill throughput; per-stream decode at 1 stream (code)'."""
    groups: dict[tuple, list] = {}
    for c in cells:
        groups.setdefault((c.metric, c.statistic, c.workload), []).append(c.concurrency)
    parts = []
    order = sorted(groups.items(), key=lambda kv: (key_sort(kv[0][0]), key_sort(kv[0][2]), stat_rank(kv[0][1])))
    for (metric, stat, workload), concs in order:
        head = F.metric_words(metric)
        if stat and stat != "mean":
            head += f" {stat}"
        known = sorted({int(c) for c in concs if c is not None})
        if known:
            head += f" at {F.int_list(known)} streams" if known != [1] else " at 1 stream"
        parts.append(head + F.workload_note(workload))
    if len(parts) > limit:
        return "; ".join(parts[:limit]) + f"; and {len(parts) - limit} more"
    return "; ".join(parts)


#: how many cells a finding about many cells lists with their figures before "and N more": the
#: rest are in its flag's evidence (flags.json) and the tables; two keep a finding to a few lines
#: (issue 42: a report of many harnesses' captures within ten pages before its appendix)
LISTED = 2


def more(n_shown: int, n: int, what: str = "") -> str:
    """'; and more' (or '; and 3 more cells') when a list was cut at `n_shown` of `n`."""
    if n <= n_shown:
        return ""
    return f"; and {n - n_shown} more {what}".rstrip() if what else "; and more"


def exam_name(benchmark, dimension) -> str:
    return f"{benchmark} ({dimension})" if not F.missing(dimension) else str(benchmark)


def test_words(test) -> str:
    """'Fisher exact (counts)' -> "Fisher's exact test", 'McNemar exact (paired items)' -> 'the exact McNemar test'."""
    t = str(test).lower()
    if "boschloo" in t:
        return "Boschloo's exact test"
    if "fisher" in t:
        return "Fisher's exact test"
    if "barnard" in t:
        return "Barnard's exact test"
    if "mcnemar" in t:
        return "the mid-p McNemar test" if "mid" in t else "the exact McNemar test"
    return str(test)


#: how a run field and a seat setting read in a sentence
FIELD_WORDS = {
    "harness": "harness",
    "probe": "probe",
    "max_tokens": "answer cap (max_tokens)",
    "temperature": "temperature",
    "thinking": "thinking mode",
}
SETTING_WORDS = {
    "max_model_len": "context length",
    "kv_cache_dtype": "KV-cache type",
    "speculative": "speculation",
    "prefix_caching": "prefix caching",
    "gpu_memory_utilization": "GPU memory utilisation",
}


def field_words(f: str) -> str:
    if f.startswith("settings."):
        k = f[len("settings.") :]
        return SETTING_WORDS.get(k, k)
    return FIELD_WORDS.get(f, f)


def show(vals) -> str:
    """Stated values of a field: 'true / false', '512 / 1,024'."""
    return " / ".join(
        str(v).lower() if isinstance(v, bool) else F.num(v) if isinstance(v, (int, float)) else str(v)
        for v in sorted(set(vals), key=str)
    )


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def sentences(message: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(str(message).strip()) if s]


def generic(messages: list[str]) -> list[str]:
    """Messages in order; a closing sentence shared by all of them is said once, at the end."""
    msgs = [sentences(m) for m in messages]
    if len(msgs) > 1 and all(len(m) > 1 for m in msgs) and len({m[-1] for m in msgs}) == 1:
        return [" ".join(m[:-1]) for m in msgs] + [msgs[0][-1]]
    return [" ".join(m) for m in msgs]
