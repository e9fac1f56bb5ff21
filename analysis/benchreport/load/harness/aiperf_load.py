"""What an AIPerf or GenAI-Perf run sent, from its export's `input_config` (docs/importers.md).

AIPerf 0.13: `endpoint {type, streaming, extra}`, `datasets[] {name, type, path, prompts {isl, osl}
| osl, random_seed}`, `phases[] {kind, type, requests, concurrency, rate}`, `run_info.random_seed`.
GenAI-Perf: `endpoint {type, streaming}`, `input {prompt_source, synthetic_tokens, output_tokens
{mean, stddev, deterministic}, extra, random_seed}`, `perf_analyzer {stimulus, measurement}`.
`extra` holds what `--extra-inputs` added to every request (ignore_eos, sampling).
"""

from __future__ import annotations

from benchreport.load.harness._common import count, dig, first, num, positive_int, token_target

__all__ = ["load_description"]

#: `--extra-inputs` keys that are sampling settings (the rest go to `extra`)
SAMPLING_KEYS = (
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "repetition_penalty",
    "frequency_penalty",
    "presence_penalty",
    "seed",
)


def _target(t) -> dict:
    return token_target(dig(t, "mean"), dig(t, "stddev")) if isinstance(t, dict) else {}


def _inputs(cfg: dict) -> dict:
    """`--extra-inputs` as a dict (AIPerf before 0.9 wrote them as [key, value] pairs)."""
    extra = first(dig(cfg, "endpoint", "extra"), dig(cfg, "input", "extra"))
    if isinstance(extra, list):
        extra = {p[0]: p[1] for p in extra if isinstance(p, list) and len(p) == 2 and isinstance(p[0], str)}
    return extra if isinstance(extra, dict) else {}


def load_description(cfg: dict, phase: dict | None, run_seed=None) -> dict:
    """The native `load` of one run from its config and profiling phase (None when it has none)."""
    if not isinstance(cfg, dict) or not cfg:
        return {}
    ds = dig(cfg, "datasets", 0)
    ds = ds if isinstance(ds, dict) else {}
    gp = cfg.get("input") if isinstance(cfg.get("input"), dict) else {}
    extra = _inputs(cfg)
    lg = cfg.get("loadgen") if isinstance(cfg.get("loadgen"), dict) else {}
    output = _target(
        first(dig(ds, "prompts", "osl"), ds.get("osl"), gp.get("output_tokens"), dig(gp, "prompt", "output_tokens"))
    )
    fixed = extra.get("ignore_eos") if isinstance(extra.get("ignore_eos"), bool) else None
    if fixed is None and dig(gp, "output_tokens", "deterministic") is True:
        fixed = True
    kind = str(phase.get("type") or "") if phase else ""
    rate = (
        num(first(phase.get("rate"), phase.get("request_rate")))
        if phase
        else num(first(dig(cfg, "perf_analyzer", "stimulus", "request_rate"), lg.get("request_rate")))
    )
    pattern = first(lg.get("arrival_pattern"), lg.get("request_rate_mode"))
    load = {
        "endpoint": first(dig(cfg, "endpoint", "type"), dig(cfg, "endpoint", "custom")),
        "streaming": dig(cfg, "endpoint", "streaming") if isinstance(dig(cfg, "endpoint", "streaming"), bool) else None,
        "dataset": _dataset(ds, gp),
        "prompt_tokens": _target(
            first(dig(ds, "prompts", "isl"), gp.get("synthetic_tokens"), dig(gp, "prompt", "input_tokens"))
        ),
        "output_tokens": output,
        "fixed_output": fixed,
        "arrival": ("concurrent" if kind == "concurrency" else kind or None)
        if phase
        else (
            "concurrent"
            if str(pattern).startswith("concurrency")
            else pattern
            if isinstance(pattern, str)
            else "constant"
            if rate is not None
            else "concurrent"
            if first(dig(cfg, "perf_analyzer", "stimulus", "concurrency"), lg.get("concurrency"))
            else None
        ),
        "rate": rate,
        "requests": positive_int(
            first(
                phase.get("requests") if phase else None,
                dig(cfg, "perf_analyzer", "measurement", "num"),
                lg.get("request_count"),
            )
        ),
        "warmup_requests": count(lg.get("warmup_request_count")),
        "seed": count(first(run_seed, ds.get("random_seed"), gp.get("random_seed"))),
        "sampling": {k: v for k, v in extra.items() if k in SAMPLING_KEYS and isinstance(v, (int, float, str, bool))}
        or None,
        "extra": {
            k: v
            for k, v in extra.items()
            if k not in SAMPLING_KEYS
            and k not in ("ignore_eos", "max_tokens")
            and isinstance(v, (int, float, str, bool))
        }
        or None,
    }
    cap = positive_int(first(extra.get("max_tokens"), extra.get("max_completion_tokens")))
    if cap is not None:
        load["max_tokens"] = cap
    return load


def _dataset(ds: dict, gp: dict) -> str | None:
    """'synthetic', or a file's name (never its path: a string from a file is not a path here)."""
    if ds:
        if ds.get("type") == "synthetic" or not ds.get("path"):
            return str(ds.get("type") or ds.get("name") or "") or None
        return f"file {str(ds.get('path')).replace(chr(92), '/').rsplit('/', 1)[-1][:120]}"
    src = gp.get("prompt_source")
    if isinstance(src, str) and src:
        return src
    if isinstance(dig(gp, "prompt", "input_tokens"), dict) and not gp.get("file"):
        return "synthetic"  # AIPerf before 0.9: synthetic prompts unless an input file is given
    return None
