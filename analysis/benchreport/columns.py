"""Names defined once: metrics with their units and direction, table keys, table columns.

Every other module takes its column names from here, so a renamed column is a
one-line change and a typo is an ImportError, not a silent empty column.
"""
from __future__ import annotations

#: metric name -> (unit, higher_is_better). From spec/run-format.md, "Metric names and units".
METRICS: dict[str, tuple[str, bool]] = {
    "decode_tok_s_per_stream": ("tok/s", True),
    "output_tok_s": ("tok/s", True),
    "prefill_tok_s": ("tok/s", True),
    "ttft_ms": ("ms", False),
    "itl_ms": ("ms", False),
    "e2e_latency_ms": ("ms", False),
    "request_rate": ("req/s", True),
    "engine_init_s": ("s", False),
}

#: statistics a measurement may carry (spec: `statistic`), and which request-level
#: statistics the analysis computes from request records.
#: `not_stated`: the source gives the figure without saying which statistic it is (an extension:
#: an absent statistic is `mean`, as spec/run-format.md says; a converter that does not know says so)
STATISTICS = ("mean", "p50", "p90", "p95", "p99", "min", "max", "not_stated")
REQUEST_STATISTICS = ("mean", "p50", "p90", "p95", "p99")
#: quantile level of each quantile statistic
QUANTILES = {"p50": 0.50, "p90": 0.90, "p95": 0.95, "p99": 0.99}

#: request-record fields from which a per-request metric value is read directly
#: (decode_tok_s_per_stream is derived, see benchreport.stats.cells.request_metrics).
REQUEST_METRICS = ("ttft_ms", "itl_ms", "e2e_latency_ms", "decode_tok_s_per_stream")


#: how a metric reads in a sentence, a caption or an axis label
METRIC_WORDS: dict[str, str] = {
    "decode_tok_s_per_stream": "per-stream decode",
    "output_tok_s": "aggregate throughput",
    "prefill_tok_s": "prefill throughput",
    "ttft_ms": "time to first token",
    "itl_ms": "inter-token latency",
    "e2e_latency_ms": "end-to-end latency",
    "request_rate": "request rate",
    "engine_init_s": "engine start-up time",
}


def unit_of(metric: str) -> str:
    """Unit of a metric (KeyError for an unknown metric)."""
    return METRICS[metric][0]


def higher_is_better(metric: str) -> bool:
    """Direction of a metric: throughput up is good, latency up is bad."""
    return METRICS[metric][1]


# --- tidy tables: keys and columns, in order ---------------------------------
#: the key of a cell (spec: "cell: one (seat, workload, concurrency, metric)")
CELL_KEY = ["seat", "workload", "concurrency", "metric", "statistic"]

TABLE_COLUMNS: dict[str, list[str]] = {
    "seats": [
        "seat", "model", "quantisation", "engine", "role", "checkpoint_bytes",
        "nodes", "gpus_per_node", "gpu_memory_bytes", "tensor_parallel", "interconnect",
    ],
    "components": ["seat", "name", "component_role", "license"],
    "runs": [
        "run_id", "seat", "date", "pass", "harness", "harness_version", "probe",
        "max_tokens", "temperature", "thinking", "warmup_excluded", "settings",
        "quantisation", "engine", "source_file", "source_sha256", "source_format",
        "notes", "assumptions", "harness_group", "figure_checks", "load", "load_id", "load_label",
    ],
    "measurements": [
        "run_id", "seat", "date", "pass", "workload", "concurrency", "metric", "statistic",
        "value", "unit", "n", "context_tokens", "fresh_prompt", "condition",
        "ci_low", "ci_high", "ci_level",
    ],
    "requests": [
        "run_id", "seat", "date", "pass", "workload", "concurrency", "prompt_tokens",
        "cached_prompt_tokens", "output_tokens", "reasoning_tokens", "content_chars",
        "reasoning_chars", "ttft_ms", "e2e_latency_ms", "itl_ms", "finish_reason", "error",
        "start_ms", "counted_only", "first_content_ms", "first_token_chunk_ms",
    ],
    "exams": [
        "run_id", "seat", "date", "benchmark", "dimension", "correct", "total", "score",
        "from_items", "count_rounding", "measured_on", "from_earlier_run", "placement_note",
    ],
    "exam_items": ["run_id", "seat", "date", "benchmark", "dimension", "item_id", "correct"],
    "events": ["run_id", "seat", "date", "pass", "kind", "message", "concurrency", "reproduced"],
}


#: how `exams.count_rounding` starts when a score is no whole number of its items (then no exact test)
NOT_A_COUNT = "not a count: "


def is_not_a_count(count_rounding) -> bool:
    """Whether an exams row's `count_rounding` says its count is made up from a score that is no
    whole number of its items (benchreport.tables._rounding)."""
    return isinstance(count_rounding, str) and count_rounding.startswith(NOT_A_COUNT)
