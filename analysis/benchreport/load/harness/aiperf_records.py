"""AIPerf's per-request records (`profile_export.jsonl`) as native request rows.

One record a request {metadata {request_start_ns, request_end_ns, benchmark_phase, ...},
metrics {tag: {value, unit}}, error {code, type, message} | null}; warm-up records are dropped.
Split from aiperf.py, which reads the folder and calls `requests_of` for each records file.
"""

from __future__ import annotations

import json

from benchreport.load.harness._common import Draft, count, first, ms_factor, num, short_text

LATENCIES = {"time_to_first_token": "ttft_ms", "inter_token_latency": "itl_ms", "request_latency": "e2e_latency_ms"}
CACHE_KEYS = ("usage_prompt_cache_read_tokens", "usage_prompt_cached_tokens", "usage_cached_tokens", "cached_tokens")


def _value(metric: dict | None) -> tuple[float | None, str | None]:
    """(value, unit) of a record's metric {value, unit}."""
    if not isinstance(metric, dict):
        return None, None
    return num(metric.get("value")), metric.get("unit")


def error_text(err) -> str:
    """`type (code N): message` of an AIPerf error {code, type, message} (the code first, so a
    shortened text keeps it); a message that is the server's JSON error body is reduced to that
    body's own message."""
    if not isinstance(err, dict):
        return short_text(err) or "error"
    message = err.get("message")
    if isinstance(message, str) and message.lstrip().startswith("{"):
        try:
            inner = json.loads(message)
        except ValueError:
            inner = None
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            message = inner["message"]
    code = err.get("code")
    kind = " ".join(str(x) for x in (err.get("type"), f"(code {code})" if code is not None else None) if x)
    return short_text(": ".join(x for x in (kind, str(message) if message else None) if x)) or "error"


def requests_of(d: Draft, recs: list, wl: str, conc: int | None, phase_name: str | None = None) -> int:
    """Add the profiling records of one records file to the draft run; returns how many were dropped."""
    dropped = 0
    mismatch = 0
    # cached counts come from the server's usage: pair them with the server's prompt counts when
    # the records have those (AIPerf's input_sequence_length is tokenised by the client)
    server_prompt = any(
        isinstance(r.get("metrics"), dict) and r["metrics"].get("usage_prompt_tokens") is not None for r in recs
    )
    if server_prompt:
        d.notes.append(
            "prompt_tokens are the server's usage counts, like the cached-token counts "
            "(AIPerf's input_sequence_length is tokenised by the client)"
        )
    warm_failed = 0
    for r in recs:
        meta = r.get("metadata") or {}
        phase = str(
            first(meta.get("benchmark_phase"), meta.get("credit_phase"), meta.get("phase_kind"), "profiling")
        ).lower()
        if phase != "profiling":
            dropped += 1
            warm_failed += bool(r.get("error"))
            continue
        if phase_name is not None and meta.get("phase_name") not in (None, phase_name):
            continue  # another profiling phase: read with that phase's run
        rec, over = _request(r, meta, wl, conc, server_prompt)
        mismatch += over
        d.requests.append(rec)
    if mismatch:
        d.notes.append(f"{mismatch} request(s): the server's cached-token count exceeded the prompt length; left out")
    if warm_failed:
        d.notes.append(f"{warm_failed} of the {dropped} warm-up request(s) failed (not part of the figures)")
    return dropped


def _request(r: dict, meta: dict, wl: str, conc: int | None, server_prompt: bool) -> tuple[dict, int]:
    """One request record, and 1 when its cached count was dropped for exceeding the prompt."""
    m = r.get("metrics") if isinstance(r.get("metrics"), dict) else {}
    rec: dict = {"workload": wl}
    if conc is not None:
        rec["concurrency"] = conc
    sent = num(first(meta.get("request_start_ns"), meta.get("timestamp_ns")))  # timestamp_ns: AIPerf 0.2x records
    if sent is not None and sent >= 0:
        rec["start_ms"] = sent / 1e6  # epoch ns: keeps the send order
    isl, _ = _value(m.get("input_sequence_length"))
    usage_prompt, _ = _value(m.get("usage_prompt_tokens"))
    cached = next((count(_value(m.get(k))[0]) for k in CACHE_KEYS if m.get(k) is not None), None)
    if server_prompt:
        prompt = count(first(usage_prompt, isl, _value(m.get("error_isl"))[0]))
    else:
        prompt = count(first(isl, _value(m.get("error_isl"))[0]))
    over = int(cached is not None and prompt is not None and cached > prompt)
    if over:
        cached = None
    if prompt is not None:
        rec["prompt_tokens"] = prompt
    if cached is not None:
        rec["cached_prompt_tokens"] = cached
    _tokens(rec, m)
    for tag, field in LATENCIES.items():
        v, unit = _value(m.get(tag))
        factor = ms_factor(unit)
        if v is not None and factor is not None and v >= 0:
            rec[field] = v * factor
    v, unit = _value(m.get("time_to_first_output_token"))  # the first non-reasoning token
    factor = ms_factor(unit)
    if v is not None and factor is not None and v >= 0:
        rec["first_content_ms"] = v * factor
    err = r.get("error")
    if err:
        rec["finish_reason"] = "error"
        rec["error"] = error_text(err)
    elif meta.get("was_cancelled") is True:
        rec["finish_reason"] = "cancelled"
        rec["error"] = "cancelled"
    return rec, over


def _tokens(rec: dict, m: dict) -> None:
    """Output tokens (content + reasoning, AIPerf's own count) and reasoning tokens of a record."""
    osl = count(_value(m.get("output_sequence_length"))[0])
    content = count(_value(m.get("output_token_count"))[0])
    reasoning = count(first(_value(m.get("reasoning_token_count"))[0], _value(m.get("usage_reasoning_tokens"))[0]))
    if osl is None and (content is not None or reasoning is not None):
        osl = (content or 0) + (reasoning or 0)
    if osl is None:
        osl = count(_value(m.get("usage_completion_tokens"))[0])
    if osl is not None:
        rec["output_tokens"] = osl
    if reasoning is not None and (osl is None or reasoning <= osl):
        rec["reasoning_tokens"] = reasoning


# --- aggregates over trials, checked against the trials read ----------------------------------
