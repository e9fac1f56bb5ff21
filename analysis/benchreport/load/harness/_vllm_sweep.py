"""`vllm bench sweep serve` folders (vLLM >= 0.11): which of its files are passes, and what each
combination's serve and bench parameters are.

vllm/benchmarks/sweep/serve.py runs `vllm bench serve` `--num-runs` times for every combination
of `--serve-params` (arguments of `vllm serve`: the seat's configuration) and `--bench-params`
(arguments of `vllm bench serve`: the load), each combination in its own folder
(`_get_comb_base_path`): `SERVE--<serve name>-BENCH--<bench name>` (0.11.1+; a name is
`k=v-k=v` or the combination's `_benchmark_name`), `SERVE-<k=v-...>-BENCH-<k=v-...>` (0.11.0),
`serve-...-bench-...` (the first version). In it:
- `run=<N>.json`: the `vllm bench serve` result with `run_number` N (from 0) and the
  combination's parameters merged in at the top level (`_update_run_data`; the first versions
  merged the serve parameters only): pass N + 1;
- `warmup.json`: `run_number` -1, the `--warmup-num-prompts` run before the measured ones: never
  a pass;
- `summary.json`: the list of the combination's run results again: never passes, checked against
  the run files (a run whose file is missing is read from it);
- `run=<N>.failure.json`, `warmup.failure.json` (`--continue-on-error`): {run_number, error_type,
  error, serve_overrides, bench_overrides}; `SERVE-<name>-failure.json` beside the folders: the
  server of a serve combination failed (no runs);
- `summary.csv` beside the folders: every run as a table (not read: tables are not run files).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from benchreport.load.harness._common import Check, Draft, num, short_text

RUN_FILE = re.compile(r"^run=(-?\d+)\.json$")
WARMUP_FILE = "warmup.json"
#: the combination folder's name: serve part, bench part
_SERVE = re.compile(r"^(?:SERVE|serve)-(.*)$", re.S)
_BENCH = re.compile(r"^(?:BENCH|bench)-(.*)$", re.S)
_SPLIT = re.compile(r"-(?:BENCH|bench)-")
#: serve parameters with a configuration key of their own (benchreport's names)
SERVE_CONFIG = {
    "tensor_parallel_size": "tensor_parallel",
    "tp": "tensor_parallel",
    "pipeline_parallel_size": "pipeline_parallel",
    "pp": "pipeline_parallel",
    "data_parallel_size": "data_parallel",
    "dp": "data_parallel",
    "quantization": "quantisation",
}
#: bench parameters the importer reads already (load, concurrency, workload) or that only size the sample
BENCH_READ = {
    "max_concurrency",
    "request_rate",
    "num_prompts",
    "burstiness",
    "random_input_len",
    "random_output_len",
    "random_range_ratio",
    "dataset_name",
    "ignore_eos",
    "seed",
}
#: figures of a summary item checked against the run file it repeats: key -> (metric, statistic)
SUMMARY_FIGURES = {
    "mean_ttft_ms": ("ttft_ms", "mean"),
    "median_ttft_ms": ("ttft_ms", "p50"),
    "p99_ttft_ms": ("ttft_ms", "p99"),
    "mean_e2el_ms": ("e2e_latency_ms", "mean"),
    "output_throughput": ("output_tok_s", "mean"),
    "request_throughput": ("request_rate", "mean"),
    "completed": ("requests", "count"),
    "failed": ("failed", "count"),
}
SUMMARY_AGAINST = "the sweep's summary.json"


def run_number(doc) -> int | None:
    v = doc.get("run_number") if isinstance(doc, dict) else None
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def is_summary(doc) -> bool:
    """A combination's summary.json: a list of results, each with its run_number."""
    return isinstance(doc, list) and bool(doc) and all(run_number(d) is not None for d in doc)


def failure_kind(doc) -> str | None:
    """'run' for a run's failure record, 'server' for a serve combination's, else None."""
    if not isinstance(doc, dict) or not {"error_type", "error", "serve_overrides"} <= set(doc):
        return None
    if not isinstance(doc.get("serve_overrides"), dict):
        return None
    if run_number(doc) is not None and isinstance(doc.get("bench_overrides"), dict):
        return "run"
    return "server" if set(doc) <= {"error_type", "error", "serve_overrides"} else None


def _words(params: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items()) or "(none)"


def failure_reason(doc: dict) -> str:
    error = short_text(f"{doc.get('error_type')}: {doc.get('error')}", 200)
    if failure_kind(doc) == "server":
        return (
            f"vllm bench sweep serve failure record: the server of serve combination "
            f"{_words(doc['serve_overrides'])} failed ({error}), so none of its runs were measured"
        )
    n = run_number(doc)
    which = "the warm-up run" if n < 0 else f"run {n} (pass {n + 1})"
    return (
        f"vllm bench sweep serve failure record: {which} of serve {_words(doc['serve_overrides'])}, "
        f"bench {_words(doc.get('bench_overrides') or {})} failed ({error}); it has no results, so that "
        "pass is missing"
    )


def warmup_reason(doc: dict) -> str:
    return (
        f"vllm bench sweep serve warm-up run (run_number {run_number(doc)}, --warmup-num-prompts: "
        f"{doc.get('num_prompts')} prompts before the measured runs of its combination): not a measured pass"
    )


def summary_reason(doc: list) -> str:
    return (
        f"vllm bench sweep serve summary.json: the {len(doc)} run(s) of its combination repeated "
        "(run_number " + ", ".join(str(run_number(d)) for d in doc) + "), not passes of their own; "
        "its figures are checked against the run=N.json files"
    )


def _comb_texts(folder: str) -> tuple[str, str]:
    """(serve text, bench text) of a combination folder's name ('' where it names none)."""
    serve = bench = ""
    m = _SERVE.match(folder)
    if m:
        parts = _SPLIT.split(m.group(1), maxsplit=1)
        serve, bench = parts[0], (parts[1] if len(parts) > 1 else "")
    else:
        m = _BENCH.match(folder)
        if m:
            bench = m.group(1)
    return serve[1:] if serve.startswith("-") else serve, bench[1:] if bench.startswith("-") else bench


def _token(key: str, value) -> str:
    """'key=value' as the sweep writes it into a folder name (Python's str, sanitised)."""
    return f"{key}={value}".replace("/", "_").replace("..", "__")


def _in(text: str, token: str) -> bool:
    return bool(text) and re.search(r"(?:^|-)" + re.escape(token) + r"(?:-|$)", text) is not None


def parameters(folder: str, doc: dict) -> tuple[dict, dict, str | None, str | None]:
    """(serve parameters, bench parameters, serve name, bench name) of a run in `folder`: the
    run's top-level keys whose `key=value` the folder's serve or bench part names; a part that
    names none is a `_benchmark_name` (returned as the name)."""
    serve_text, bench_text = _comb_texts(folder)
    serve, bench = {}, {}
    for key, value in doc.items():
        if key in ("run_number", "_benchmark_name") or isinstance(value, list):
            continue
        token = _token(key, value)
        if _in(serve_text, token):
            serve[key] = value
        elif _in(bench_text, token):
            bench[key] = value
    serve_name = serve_text if serve_text and not serve else None
    bench_name = bench_text if bench_text and not bench else None
    return serve, bench, serve_name, bench_name


def apply(d: Draft, doc: dict, path: Path, warmed: bool) -> None:
    """A sweep run's pass (run_number + 1), its serve parameters as the seat's configuration and
    its bench parameters in the load (so two combinations are never passes of one cell)."""
    n = run_number(doc)
    d.pass_ = n + 1
    d.pass_note = (
        f"pass {n + 1} from the sweep's run_number {n} (vllm bench sweep serve numbers the runs of a "
        "combination from 0)"
    )
    serve, bench, serve_name, bench_name = parameters(path.parent.name, doc)
    for key, value in serve.items():
        name = key.replace("-", "_")
        d.config[SERVE_CONFIG.get(name, name)] = value if not isinstance(value, dict) else json.dumps(value)
    if serve_name:
        d.config["sweep_serve"] = serve_name
    extra = dict(d.load.get("extra") or {})
    for key, value in bench.items():
        if key.replace("-", "_") in BENCH_READ:
            continue
        extra[key.replace("-", "_")] = value if isinstance(value, (str, int, float, bool)) else json.dumps(value)
    if bench_name:
        extra["sweep_bench"] = bench_name
    if extra:
        d.load["extra"] = extra
    words = [
        f"serve {_words(serve) if serve else serve_name or '(none)'}",
        f"bench {_words(bench) if bench else bench_name or '(none)'}",
    ]
    d.notes.append(f"vllm bench sweep serve run {n} of combination {'; '.join(words)}")
    if warmed:
        d.warmup_excluded = True
        d.notes.append("the combination's warm-up run (warmup.json) came before it and is not a pass")


def check_summary(d: Draft, run_doc: dict, item: dict, wl: str, conc: int | None) -> None:
    """The summary item's figures against the run file's (they should be the same numbers)."""
    for key, (metric, stat) in SUMMARY_FIGURES.items():
        reported, ours = num(item.get(key)), num(run_doc.get(key))
        if reported is None or ours is None:
            continue
        d.checks.append(
            Check(SUMMARY_AGAINST, wl, conc, metric, stat, reported, ours, f"{d.source.path.name}", field=key)
        )
