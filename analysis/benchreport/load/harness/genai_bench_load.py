"""What a genai-bench run sent, and when it started (docs/importers.md).

genai-bench writes its traffic scenario as a string: `D(in,out)` (deterministic lengths),
`U(min_in,max_in)/(min_out,max_out)` (uniform), `N(mean_in,sd_in)/(mean_out,sd_out)` (normal);
its task says the API (`text-to-text` is chat completions, always streamed: user/openai_user.py).
For the vLLM and SGLang backends it sends `ignore_eos` with the scenario's output length unless
`additional_request_params` says otherwise (the same file), so the output length is fixed.

No JSON file holds a time: a run starts when its experiment folder was made, whose default name
ends `_%Y%m%d_%H%M%S` (local time; cli/utils.py) and which `experiment_metadata.json` records as
`experiment_folder_name`. Copying the folder keeps that name, so the date survives a copy that
changes every file time.
"""

from __future__ import annotations

import re

from benchreport.load.harness._common import count, epoch_from_iso, num, positive_int, token_target

__all__ = ["genai_load", "started", "scenario_lengths"]

_SCENARIO = re.compile(r"\s*([DUN])\(\s*([\d.]+)\s*,\s*([\d.]+)\s*\)(?:\s*/\s*\(\s*([\d.]+)\s*,\s*([\d.]+)\s*\))?\s*$")
_STAMP = re.compile(r"_(\d{4})(\d{2})(\d{2})_(\d{2})(\d{2})(\d{2})$")
#: genai-bench task -> the API it calls
TASK_ENDPOINTS = {
    "text-to-text": "chat",
    "image-text-to-text": "chat",
    "text-to-embeddings": "embeddings",
    "text-to-rerank": "rerank",
    "image-to-embeddings": "embeddings",
}


def scenario_lengths(scenario) -> tuple[dict, dict]:
    """(prompt, output) token targets of a traffic scenario string; ({}, {}) when it is another kind."""
    m = _SCENARIO.match(scenario) if isinstance(scenario, str) else None
    if m is None:
        return {}, {}
    kind, a, b, c, e = m.groups()
    a, b = float(a), float(b)
    if kind == "D":
        return token_target(a), token_target(b)
    if c is None:
        return {}, {}
    c, e = float(c), float(e)
    if kind == "U":
        return token_target(None, None, a, b), token_target(None, None, c, e)
    return token_target(a, b), token_target(c, e)


def genai_load(meta: dict, scenario, d) -> dict:
    """The native `load` of one run file (its scenario) with its experiment's settings."""
    prompt, output = scenario_lengths(scenario)
    params = meta.get("additional_request_params") if isinstance(meta.get("additional_request_params"), dict) else {}
    task = meta.get("task") if isinstance(meta.get("task"), str) else None
    load = {
        "endpoint": TASK_ENDPOINTS.get(task, task),
        "streaming": True if task == "text-to-text" else None,
        "dataset": None if str(meta.get("dataset_path")) in ("None", "") else "file",
        "prompt_tokens": prompt,
        "output_tokens": output,
        "arrival": "concurrent",
        "requests": positive_int(meta.get("max_requests_per_run")),
        "duration_s": num(meta.get("max_time_per_run_s")),
        "sampling": {
            k: v for k, v in params.items() if k in ("temperature", "top_p", "top_k") and isinstance(v, (int, float))
        }
        or None,
    }
    if isinstance(params.get("ignore_eos"), bool):
        load["fixed_output"] = params["ignore_eos"]
    elif meta.get("api_backend") in ("vllm", "sglang") and output:
        load["fixed_output"] = True
        d.assumptions.append(
            f"output length taken as fixed: genai-bench sends ignore_eos to the "
            f"{meta['api_backend']} backend unless additional_request_params says otherwise"
        )
    if isinstance(scenario, str) and not prompt and scenario:
        load["extra"] = {"scenario": scenario[:200]}
    if count(params.get("max_tokens")):
        load["max_tokens"] = count(params.get("max_tokens"))
    return load


def started(meta: dict, source) -> tuple[str | None, float | None]:
    """(local date-time, POSIX seconds for ordering) from the experiment folder's default name, as
    `experiment_metadata.json` records it or as the run file's folder is called; (None, None)
    when the folder was named by the user."""
    for name in (
        str(meta.get("experiment_folder_name") or "").replace("\\", "/").rstrip("/").rsplit("/", 1)[-1],
        source.path.parent.name,
    ):
        m = _STAMP.search(name)
        if m:
            y, mo, dd, h, mi, se = m.groups()
            text = f"{y}-{mo}-{dd}T{h}:{mi}:{se}"
            t = epoch_from_iso(text)
            if t is not None:
                return text, t
    return None, None
