"""What a run sent, as a condition: a fingerprint for the cell key and words for the reader.

A pass is one repetition of one condition. Runs that sent different loads (another endpoint,
other prompt or output lengths, another arrival process, another answer cap) measure different
things, so they are different cells, never passes of one cell. The native format's `load`
(spec/run-format.md, extended in docs/importers.md) describes what was sent, and every importer
fills it from what its harness records.

The fingerprint covers what shapes each request and its arrival: endpoint, streaming, prompt
source, prompt / shared-prefix / output token targets, fixed output length, answer cap,
sampling, arrival process and rate, and any `extra` condition. It leaves out what only sizes or
seeds the sample (requests, duration, warm-up, seed) and the concurrency (the cell key holds it):
two runs that differ only in those are repeated passes of one condition.

Pure functions on plain dicts (the native `Load` as `msgspec.to_builtins` gives it).
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any, Mapping

__all__ = [
    "FINGERPRINT_LEFT_OUT",
    "measurement_condition",
    "normal_endpoint",
    "canonical",
    "keyed",
    "fingerprint",
    "words",
    "differences",
    "difference_words",
    "value_words",
    "FIELD_WORDS",
]

#: fields of a load description that are not part of its condition, and why
FINGERPRINT_LEFT_OUT = {
    "seed": "a seed draws another sample of the same condition",
    "requests": "how many requests were sent sizes the sample, it does not change the condition",
    "duration_s": "how long the run lasted sizes the sample",
    "warmup_requests": "warm-up is what the passes' drift shows (drift.warmup); it is stated, not keyed",
    "warmup_s": "as warmup_requests",
    "concurrency": "the cell key holds the concurrency of each figure",
}

#: how each field reads in a flag's sentence
FIELD_WORDS = {
    "endpoint": "endpoint",
    "streaming": "streaming",
    "dataset": "prompt source",
    "prompt_tokens": "prompt length",
    "prefix_tokens": "shared prefix",
    "output_tokens": "output length",
    "fixed_output": "fixed output length (ignore_eos)",
    "max_tokens": "answer cap",
    "sampling": "sampling",
    "arrival": "arrival",
    "rate": "request rate",
    "extra": "other settings",
}

_ENDPOINTS = {
    "chat": "chat",
    "chat_completions": "chat",
    "chat/completions": "chat",
    "openai-chat": "chat",
    "completions": "completions",
    "completion": "completions",
    "text_completions": "completions",
    "generate": "generate",
    "embeddings": "embeddings",
}


def normal_endpoint(value: Any) -> str | None:
    """'chat' for '/v1/chat/completions', 'chat_completions', 'openai-chat'; 'completions' for
    '/v1/completions'; other text as given (lower case, without a leading /v1/)."""
    if not isinstance(value, str) or not value.strip():
        return None
    v = value.strip().lower().rstrip("/")
    for prefix in ("http://", "https://"):
        if v.startswith(prefix):
            v = v[len(prefix) :].partition("/")[2]
    v = v.lstrip("/")
    if v.startswith("v1/"):
        v = v[3:]
    return _ENDPOINTS.get(v, v)


def _round(x: Any) -> Any:
    """Numbers to 6 significant digits (a float written by another harness version must not make
    another condition); integral floats as ints; other values as they are."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return x
    if isinstance(x, float):
        if not math.isfinite(x):
            return None
        x = float(f"{x:.6g}")
        return int(x) if x == int(x) and abs(x) < 2**53 else x
    return x


def _clean(value: Any) -> Any:
    if isinstance(value, Mapping):
        out = {str(k): _clean(v) for k, v in value.items()}
        return {k: v for k, v in sorted(out.items()) if v is not None and v != {}}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return _round(value)


def canonical(load: Mapping | None) -> dict:
    """The condition of a load description: its fingerprinted fields, normalised (endpoint
    words, numbers to 6 significant digits, no empty values), sorted."""
    if not load:
        return {}
    out = {k: v for k, v in load.items() if k not in FINGERPRINT_LEFT_OUT and v is not None}
    if "endpoint" in out:
        out["endpoint"] = normal_endpoint(out["endpoint"])
    return _clean(out)


def keyed(load: Mapping | None) -> dict:
    """The condition as the cell key takes it: `canonical`, with token lengths that were counted
    as sent rather than asked for (`sent: true`) reduced to their octave, round(log2(mean)):
    two draws of one target (another seed, another sample of a data set) differ by a few
    percent and are one condition; 64- and 512-token prompts are three octaves apart. A draw
    within a few percent of a half-octave boundary (45, 91, 181, 362, 724, ... tokens) can
    still fall on either side; the load in words shows the lengths themselves."""
    c = canonical(load)
    for name in ("prompt_tokens", "output_tokens"):
        t = c.get(name)
        if isinstance(t, Mapping) and t.get("sent") and isinstance(t.get("mean"), (int, float)):
            c[name] = {"sent": True, "octave": round(math.log2(max(float(t["mean"]), 1.0)))}
    return c


def fingerprint(load: Mapping | None) -> str:
    """12 hexadecimal digits of SHA-256 over the keyed condition (`keyed`); "" when nothing was recorded."""
    c = keyed(load)
    if not c:
        return ""
    text = json.dumps(c, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:12]


def _n(x) -> str:
    x = float(x)
    return f"{x:,.0f}" if abs(x - round(x)) < 0.05 or abs(x) >= 100 else f"{x:,.1f}"


def _tokens(t: Mapping | None) -> str | None:
    """'256±64', '256 (128-384)', '256', or None."""
    if not t:
        return None
    mean, sd, lo, hi = (t.get(k) for k in ("mean", "stdev", "min", "max"))
    if mean is None and lo is not None and hi is not None:
        return _n(lo) if lo == hi else f"{_n(lo)}-{_n(hi)}"
    if mean is None:
        return None
    text = _n(mean)
    if sd:
        text += f"±{_n(sd)}"
    elif lo is not None and hi is not None and lo != hi:
        text += f" ({_n(lo)}-{_n(hi)})"
    return text


def words(load: Mapping | None) -> str:
    """The condition in words, e.g. 'chat, 256±64 → 64±16 tok, streaming'; "" when none.

    Says the endpoint, the prompt and output lengths (output 'fixed' under ignore_eos), the
    answer cap where no output target is given, streaming, the prompt source and the arrival
    when it is a rate. Sampling and `extra` are left to the fingerprint (two conditions that
    read alike are told apart where they are shown: `benchreport.format.load_label`).
    """
    c = canonical(load)
    if not c:
        return ""
    parts = []
    if c.get("endpoint"):
        parts.append(str(c["endpoint"]))
    p, o = _tokens(c.get("prompt_tokens")), _tokens(c.get("output_tokens"))
    if c.get("prefix_tokens"):
        p = f"{_n(c['prefix_tokens'])}+{p}" if p else f"{_n(c['prefix_tokens'])}-token prefix"
    if p and o:
        parts.append(f"{p} → {o} tok" + (" fixed" if c.get("fixed_output") else ""))
    elif p:  # a length not stated is said so, never a '?' where a figure would be (issue 42)
        parts.append(f"{p}-token prompts, output length not stated" + (" (fixed)" if c.get("fixed_output") else ""))
    elif o:
        parts.append(f"prompt length not stated, {o}-token outputs" + (" fixed" if c.get("fixed_output") else ""))
    elif c.get("fixed_output"):
        parts.append("fixed output length")
    if c.get("max_tokens") is not None and not o:
        parts.append(f"cap {_n(c['max_tokens'])}")
    if c.get("streaming") is not None:
        parts.append("streaming" if c["streaming"] else "not streaming")
    if c.get("dataset"):
        parts.append(str(c["dataset"]))
    if c.get("arrival") not in (None, "concurrent", "concurrency", "synchronous"):
        rate = c.get("rate")
        parts.append(f"{c['arrival']} {_n(rate)} req/s" if rate is not None else str(c["arrival"]))
    elif c.get("rate") is not None:
        parts.append(f"{_n(c['rate'])} req/s")
    if not parts:
        keys = sorted(c)
        parts.append(", ".join(f"{FIELD_WORDS.get(k, k)} {_shown(c[k])}" for k in keys[:3]))
    return ", ".join(parts)


def _shown(v) -> str:
    if isinstance(v, Mapping):
        return "{" + ", ".join(f"{k} {_shown(x)}" for k, x in v.items()) + "}"
    if isinstance(v, bool):
        return "on" if v else "off"
    if isinstance(v, (int, float)):
        return _n(v)
    return str(v)


def differences(a: Mapping | None, b: Mapping | None) -> dict[str, tuple]:
    """{field: (value in a, value in b)} for every fingerprinted field the two conditions differ in
    (None where one side does not state it)."""
    ca, cb = canonical(a), canonical(b)
    ka, kb = keyed(a), keyed(b)  # lengths counted as sent differ only where their octaves do
    return {k: (ca.get(k), cb.get(k)) for k in sorted(set(ca) | set(cb)) if ka.get(k) != kb.get(k)}


def value_words(field: str, value: Any) -> str:
    """One field's value as a reader reads it: '256±64' for a token target, 'not stated' for None."""
    if value is None:
        return "not stated"
    if field.endswith("_tokens") and isinstance(value, Mapping):
        return _tokens(value) or _shown(value)
    return _shown(value)


def difference_words(diff: Mapping[str, tuple]) -> str:
    """'prompt length 256±64 vs 1,900±200; endpoint chat vs completions' for a reader."""
    return "; ".join(
        f"{FIELD_WORDS.get(k, k)} {value_words(k, va)} vs {value_words(k, vb)}" for k, (va, vb) in diff.items()
    )


def measurement_condition(condition: Any, context_tokens: Any) -> str | None:
    """A measurement's own condition as its cell names it: 'cold', '31,000-token context',
    'warm, 8,192-token context'; None when it states neither. Two figures of one run at different
    context lengths are two cells, never one figure standing for the other."""
    parts = []
    if isinstance(condition, str) and condition:
        parts.append(condition)
    try:
        ctx = (
            None
            if context_tokens is None or context_tokens is _NA or context_tokens != context_tokens
            else int(context_tokens)
        )
    except (TypeError, ValueError):
        ctx = None
    if ctx is not None:
        parts.append(f"{ctx:,}-token context")
    return ", ".join(parts) or None


try:  # pandas' missing value, compared by identity (this module needs no pandas otherwise)
    from pandas import NA as _NA
except ImportError:  # pragma: no cover
    _NA = object()
