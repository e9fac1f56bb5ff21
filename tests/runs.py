"""Builders of native run objects for tests (valid by default; override what a test needs)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

BASE_RUN = {
    "format": "benchreport.run/1",
    "run_id": "qwen-tp2-2026-09-10-p1",
    "date": "2026-09-10",
    "seat": {
        "id": "qwen-tp2",
        "model": "Qwen3.8-Flash-Next",
        "role": "incumbent",
        "placement": {"nodes": 1, "gpus_per_node": 2, "gpu_memory_bytes": 102641958912, "tensor_parallel": 2},
    },
    "harness": {"name": "in-house", "probe": "fixed-512", "max_tokens": 512},
    "pass": 1,
    "warmup_excluded": True,
    "measurements": [
        {"workload": "decode", "concurrency": 16, "metric": "output_tok_s", "value": 896.9, "unit": "tok/s"},
        {
            "workload": "prefill",
            "metric": "prefill_tok_s",
            "value": 7412,
            "unit": "tok/s",
            "context_tokens": 31000,
            "fresh_prompt": True,
        },
        {"workload": "decode", "concurrency": 1, "metric": "ttft_ms", "statistic": "p50", "value": 35, "unit": "ms"},
    ],
}


def make_run(**overrides) -> dict:
    """A valid run; keyword overrides replace top-level fields (use set_path for nested ones)."""
    run = copy.deepcopy(BASE_RUN)
    run.update(copy.deepcopy(overrides))
    return run


def set_path(obj: dict, path: str, value) -> dict:
    """Set a dotted path like 'measurements.0.unit' (list indices as numbers); returns obj."""
    parts = path.split(".")
    target = obj
    for part in parts[:-1]:
        target = target[int(part)] if isinstance(target, list) else target[part]
    last = parts[-1]
    if isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value
    return obj


def write_run(folder: Path, name: str, run) -> Path:
    """Write a run (dict, or raw str/bytes) as folder/name."""
    path = Path(folder) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(run, bytes):
        path.write_bytes(run)
    elif isinstance(run, str):
        path.write_text(run, encoding="utf-8")
    else:
        path.write_text(json.dumps(run, indent=1), encoding="utf-8")
    return path
