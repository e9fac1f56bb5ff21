"""TensorRT-LLM `trtllm-bench`: per-request records, its statistics, its JSON and text reports.

What trtllm-bench writes (tensorrt_llm/bench/dataclasses/statistics.py and reporting.py):
- `--request_json FILE` (`ReportUtility.get_request_info()`): a list of `RequestRecord` dumps,
  times as integer NANOSECONDS on `perf_counter`'s clock (not epoch): `start_timestamp`,
  `first_token_timestamp`, `end_timestamp`, `num_input_tokens`, `error_tokens` (error responses
  of the request), `decode_iteration`, and computed `time_to_first_token`, `end_to_end_latency`,
  `intertoken_latency` (ns per generated token), `generation_time`. Field names changed between
  releases: `num_output_tokens` (and `tokens`, the ids) became `num_total_output_tokens`
  (with `output`, the text, and `output_tokens`, a count); `output_token_throughput` became
  `generation_token_throughput` (tokens per ns).
- the `BenchmarkStatistics` model (as dumped at commit 3856265, before `--report_json`
  existed): `num_requests`, `total_latency_ns`, `total_output_tokens`, `token_throughput_ns`
  and `request_throughput_ns` (per ns), and `PercentileStats` {p50, [p90,] p95, p99, minimum,
  maximum, average} for `ttft_percentiles`, `itl_percentiles` (later `tpot_percentiles`: the
  per-request mean time per output token after the first), `request_latency_percentiles` (ns)
  and `generation_tp_percentiles` (tokens per ns per request, first token excluded).
  Percentiles are `sorted[int(n * q)]`, not interpolated.
- `--report_json FILE` (`get_statistics_dict()`, later releases): `engine` {model, version,
  dtype, quantization, ...}, `world_info` {tp_size, ...}, `request_info` {num_requests, ...},
  `performance` {request_throughput_req_s, system_output_throughput_tok_s,
  request_latency_percentiles_ms, ...}, `streaming_metrics` {ttft_percentiles, tpot_percentiles
  (ms), gen_tps_percentiles (tok/s), ...}.
- the text report it logs ("= ENGINE DETAILS" ... "= PERFORMANCE OVERVIEW" ...
  "= STREAMING STATISTICS"): the only output at 3856265; read for the model and the engine
  details, and as the run's figures when no JSON summary sits beside it.
The files of one output folder are one run: figures from the summary, requests from the records.
trtllm-bench drives the engine in-process: there are no HTTP failures, no reasoning or cached
token counts, and no date or concurrency in any of these files.
"""

from __future__ import annotations

import re

from benchreport.load.errors import Refusal
from benchreport.load.harness import ImportOutcome, SourceFile
from benchreport.load.harness._checks import draft_or_refuse, expect_count, expect_dict, expect_list, expect_number
from benchreport.load.harness._common import Draft, dig, finish, first, measurement, num

NAME = "trtllm"
HARNESS_NAME = "trtllm-bench"
WORKLOAD = "-throughput"  # trtllm-bench throughput: every request issued as fast as the engine takes them
#: PercentileStats field -> native statistic
PCT = {"average": "mean", "p50": "p50", "p90": "p90", "p95": "p95", "p99": "p99", "minimum": "min", "maximum": "max"}
#: BenchmarkStatistics block (ns) -> native metric (ms)
NS_BLOCKS = {
    "ttft_percentiles": "ttft_ms",
    "itl_percentiles": "itl_ms",
    "tpot_percentiles": "itl_ms",
    "request_latency_percentiles": "e2e_latency_ms",
}
RECORD_KEYS = ("start_timestamp", "first_token_timestamp", "end_timestamp", "num_input_tokens")
REPORT_MARK = re.compile(rb"^= (ENGINE DETAILS|PYTORCH BACKEND)\s*$", re.M)
REPORT_FIGURES = {  # text report line -> (metric, statistic, unit factor)
    "Average time-to-first-token (ms)": ("ttft_ms", "mean"),
    "Average time-to-first-token [TTFT] (ms)": ("ttft_ms", "mean"),
    "Average inter-token latency (ms)": ("itl_ms", "mean"),
    "Average time-per-output-token [TPOT] (ms)": ("itl_ms", "mean"),
    "Average request latency (ms)": ("e2e_latency_ms", "mean"),
    "Token Throughput (tokens/sec)": ("output_tok_s", "mean"),
    "Total Output Throughput (tokens/sec)": ("output_tok_s", "mean"),
    "Request Throughput (req/sec)": ("request_rate", "mean"),
}


# --- recognising --------------------------------------------------------------------------


def _is_records(doc) -> bool:
    return (
        isinstance(doc, list)
        and bool(doc)
        and all(isinstance(r, dict) and all(k in r for k in RECORD_KEYS) for r in doc)
    )


def _is_statistics(doc) -> bool:
    return (
        isinstance(doc, dict)
        and "total_latency_ns" in doc
        and "num_requests" in doc
        and any(isinstance(doc.get(k), dict) for k in NS_BLOCKS)
    )


def _is_report_json(doc) -> bool:
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("engine"), dict)
        and isinstance(doc.get("performance"), dict)
        and isinstance(doc.get("request_info"), dict)
    )


def _is_report_text(doc) -> bool:
    return isinstance(doc, dict) and doc.get("trtllm_report_text") is True


class _Importer:
    name = NAME
    #: the formats it reads, in words (for refusals that list what was considered)
    label = "trtllm-bench request records, statistics, --report_json or text report"
    #: keys only its files have (a file holding one is refused when not read, never skipped)
    signature = ("total_latency_ns", "first_token_timestamp", "ttft_percentiles", "request_latency_percentiles")

    def recognise(self, doc, path):
        if _is_records(doc) or _is_statistics(doc) or _is_report_json(doc) or _is_report_text(doc):
            return "results"
        return None

    def recognise_text(self, head: bytes, path):
        return "results" if REPORT_MARK.search(head) and b"TensorRT" in head else None

    def parse_text(self, data: bytes, path) -> dict:
        return _parse_report(data.decode("utf-8", errors="replace"))

    def import_files(self, files: list[SourceFile], manifests: list) -> ImportOutcome:
        outcome = ImportOutcome()
        drafts = []
        for group in _by_folder(files).values():
            draft = _group_draft(outcome, group)
            if draft is not None:
                drafts.append(draft)
        return finish(drafts, manifests, NAME, outcome)


def _parse_report(text: str) -> dict:
    """The text report as {section: {label: value text}} (labels as printed, without the colon)."""
    sections: dict[str, dict[str, str]] = {}
    current = sections.setdefault("", {})
    for line in text.splitlines():
        if line.startswith("= "):
            current = sections.setdefault(line[2:].strip(), {})
        elif ":" in line and not line.startswith("="):
            label, _, val = line.partition(":")
            current[label.strip()] = val.strip()
    return {"trtllm_report_text": True, "sections": sections}


def _by_folder(files: list[SourceFile]) -> dict:
    """{folder: {"summary": [...], "records": [...], "text": [...]}}: one output folder is one run."""
    groups: dict = {}
    for s in files:
        g = groups.setdefault(s.path.parent, {"summary": [], "records": [], "text": []})
        key = "records" if _is_records(s.doc) else "text" if _is_report_text(s.doc) else "summary"
        g[key].append(s)
    return groups


def _group_draft(outcome: ImportOutcome, group: dict) -> Draft | None:
    """One run from a folder's summary, records and text report (each used when it is there)."""
    summary = group["summary"][0] if group["summary"] else None
    records = group["records"][0] if group["records"] else None
    text = group["text"][0] if group["text"] else None
    for extra in group["summary"][1:] + group["records"][1:] + group["text"][1:]:
        outcome.refused.append(_ambiguous(extra))
    main = summary or records or text
    draft = draft_or_refuse(outcome, main, "trtllm-bench output", _draft, main, summary, records, text)
    if draft is None:
        return None
    for other, what in ((records, "per-request records"), (text, "text report")):
        if other is not None and other is not main:
            draft.extra_paths.append(other.path)
            draft.notes.append(f"{what} read from {other.path.name}")
    return draft


def _ambiguous(source: SourceFile) -> Refusal:
    return Refusal(
        source.display,
        "$",
        "expected one trtllm-bench output of its kind per folder (a folder is one "
        "run); move each run's files into a folder of its own",
    )


def _draft(main: SourceFile, summary, records, text) -> Draft:
    """One run: figures from the summary (JSON) or the text report, requests from the records."""
    d = Draft(main, {"name": HARNESS_NAME}, source_format="trtllm-bench output")
    report = text.doc["sections"] if text is not None else {}
    if summary is not None and _is_report_json(summary.doc):
        n = _report_json(summary.doc, d)
    elif summary is not None:
        n = _statistics(summary.doc, d)
    else:
        n = _report_text_figures(report, d) if report else None
    _engine_from_text(report, d)
    if records is not None:
        d.requests = _records(records.doc, d)
        if n is not None and n != len(d.requests):
            d.notes.append(f"the summary counts {n} requests, the record file holds {len(d.requests)}")
    d.notes.append("trtllm-bench records no date: the run's date is the file's")
    return d


# --- summaries ----------------------------------------------------------------------------


def _percentiles(block, path: str, metric: str, factor: float, n: int | None, d: Draft) -> None:
    """Measurements from one PercentileStats block, its values times `factor`."""
    block = expect_dict(block, path, "a percentile block {p50, p95, p99, minimum, maximum, average}")
    for key, stat in PCT.items():
        if key in block:
            v = expect_number(block[key], f"{path}.{key}", f"the {key} of {metric}")
            d.measurements.append(
                measurement(
                    WORKLOAD,
                    None,
                    metric,
                    v * factor,
                    "tok/s" if metric == "decode_tok_s_per_stream" else "ms",
                    stat,
                    n,
                )
            )


def _statistics(doc: dict, d: Draft) -> int:
    """BenchmarkStatistics: percentiles in ns, throughputs per ns."""
    n = expect_count(doc.get("num_requests"), "$.num_requests", "the number of requests")
    for key, metric in NS_BLOCKS.items():
        if doc.get(key) is not None:
            _percentiles(doc[key], f"$.{key}", metric, 1e-6, n, d)
    if doc.get("generation_tp_percentiles") is not None:
        _percentiles(
            doc["generation_tp_percentiles"], "$.generation_tp_percentiles", "decode_tok_s_per_stream", 1e9, n, d
        )
    for key, metric, unit in (
        ("token_throughput_ns", "output_tok_s", "tok/s"),
        ("output_throughput_tok_ns", "output_tok_s", "tok/s"),
        ("request_throughput_ns", "request_rate", "req/s"),
    ):
        if doc.get(key) is not None and not any(m["metric"] == metric for m in d.measurements):
            v = expect_number(doc[key], f"$.{key}", f"{key} (per ns)")
            d.measurements.append(measurement(WORKLOAD, None, metric, v * 1e9, unit, "mean", n))
    span = num(doc.get("total_latency_ns"))
    d.notes.append(
        f"trtllm-bench statistics: {n} requests, {doc.get('total_output_tokens')} output tokens"
        + (f" in {span / 1e9:.6g} s" if span else "")
        + "; percentiles are trtllm-bench's sorted[int(n*q)], not interpolated"
    )
    _speculative(first(doc.get("acceptance_rate"), doc.get("acceptance_length")), d)
    return n


def _report_json(doc: dict, d: Draft) -> int:
    """`--report_json`: figures already in ms and tok/s."""
    n = expect_count(dig(doc, "request_info", "num_requests"), "$.request_info.num_requests", "the number of requests")
    d.model = first(dig(doc, "engine", "model"), dig(doc, "engine", "model_path"))
    d.model_where = "trtllm-bench engine model"
    perf, stream = doc["performance"], doc.get("streaming_metrics") or {}
    if perf.get("request_latency_percentiles_ms") is not None:
        _percentiles(
            perf["request_latency_percentiles_ms"],
            "$.performance.request_latency_percentiles_ms",
            "e2e_latency_ms",
            1.0,
            n,
            d,
        )
    for key, metric in (
        ("ttft_percentiles", "ttft_ms"),
        ("tpot_percentiles", "itl_ms"),
        ("gen_tps_percentiles", "decode_tok_s_per_stream"),
    ):
        if stream.get(key) is not None:
            _percentiles(stream[key], f"$.streaming_metrics.{key}", metric, 1.0, n, d)
    for key, metric, unit in (
        ("system_output_throughput_tok_s", "output_tok_s", "tok/s"),
        ("request_throughput_req_s", "request_rate", "req/s"),
    ):
        if perf.get(key) is not None:
            v = expect_number(perf[key], f"$.performance.{key}", key)
            d.measurements.append(measurement(WORKLOAD, None, metric, v, unit, "mean", n))
    eng, world = doc["engine"], doc.get("world_info") or {}
    d.config = {
        "engine": eng.get("backend") and f"trtllm {eng['backend']}",
        "engine_version": eng.get("version"),
        "quantisation": eng.get("quantization"),
        "dtype": eng.get("dtype"),
        "tensor_parallel": world.get("tp_size"),
        "pipeline_parallel": world.get("pp_size"),
        "expert_parallel": world.get("ep_size"),
        "max_batch_size": world.get("max_batch_size"),
        "max_num_tokens": world.get("max_num_tokens"),
    }
    d.notes.append(
        "trtllm-bench report: "
        + ", ".join(
            f"{k} {v}"
            for k, v in (
                ("version", eng.get("version")),
                ("backend", eng.get("backend")),
                ("dtype", eng.get("dtype")),
                ("quantization", eng.get("quantization")),
                ("TP", world.get("tp_size")),
                ("PP", world.get("pp_size")),
                ("max batch size", world.get("max_batch_size")),
                ("mean concurrent requests", dig(doc, "request_info", "avg_num_concurrent_requests")),
            )
            if v is not None
        )
    )
    return n


def _report_text_figures(report: dict, d: Draft) -> int | None:
    """Figures of the text report when it is the only output (as at commit 3856265)."""
    overview = report.get("PERFORMANCE OVERVIEW", {})
    n = _text_number(overview.get("Number of requests"))
    n = int(n) if n is not None else None
    for section in report.values():
        for label, (metric, stat) in REPORT_FIGURES.items():
            v = _text_number(section.get(label))
            if v is not None and not any(m["metric"] == metric and m["statistic"] == stat for m in d.measurements):
                unit = {"output_tok_s": "tok/s", "request_rate": "req/s"}.get(metric, "ms")
                d.measurements.append(measurement(WORKLOAD, None, metric, v, unit, stat, n))
    d.notes.append("figures as printed in trtllm-bench's text report (4 decimals)")
    return n


def _engine_from_text(report: dict, d: Draft) -> None:
    engine = report.get("ENGINE DETAILS") or report.get("PYTORCH BACKEND") or {}
    world = report.get("WORLD + RUNTIME INFORMATION", {})
    if d.model is None and engine.get("Model"):
        d.model, d.model_where = engine["Model"], "trtllm-bench report's model"
    shown = {k: v for k, v in {**engine, **world}.items() if k != "Issue Rate (req/sec)"}
    text_keys = {
        "TP Size": "tensor_parallel",
        "PP Size": "pipeline_parallel",
        "EP Size": "expert_parallel",
        "Quantization": "quantisation",
        "Engine Dtype": "dtype",
        "Max Batch Size": "max_batch_size",
        "Max Num Tokens": "max_num_tokens",
        "Backend": "engine",
        "TensorRT-LLM Version": "engine_version",
    }
    for label, key in text_keys.items():
        value = shown.get(label)
        if value is not None and str(value).strip() not in ("", "None") and not str(value).lower().startswith("n/a"):
            d.config.setdefault(
                key,
                _text_number(value)
                if key
                in ("tensor_parallel", "pipeline_parallel", "expert_parallel", "max_batch_size", "max_num_tokens")
                else str(value).strip(),
            )
    if shown:
        d.notes.append("trtllm-bench engine: " + ", ".join(f"{k} {v}" for k, v in shown.items())[:600])


def _text_number(text) -> float | None:
    try:
        return num(float(str(text).split()[0]))
    except (ValueError, IndexError):
        return None


def _speculative(rate, d: Draft) -> None:
    rate = num(rate)
    if rate is not None:
        d.notes.append(f"trtllm-bench acceptance rate {rate:.4g} (output tokens per decoding iteration)")


# --- records ------------------------------------------------------------------------------


def _records(doc, d: Draft) -> list[dict]:
    recs = expect_list(doc, "$", "trtllm-bench request records")
    t0 = min(
        expect_number(r.get("start_timestamp"), f"$[{i}].start_timestamp", "a start time in ns")
        for i, r in enumerate(recs)
    )
    out = [_record(expect_dict(r, f"$[{i}]", "a request record"), f"$[{i}]", t0) for i, r in enumerate(recs)]
    d.notes.append("request start times are ms from the first request's (trtllm-bench's perf_counter clock)")
    return out


def _record(r: dict, where: str, t0: float) -> dict:
    """One RequestRecord: ns -> ms; the output count under its old or new name."""
    start = expect_number(r["start_timestamp"], f"{where}.start_timestamp", "a start time in ns")
    first_tok = expect_number(
        r["first_token_timestamp"], f"{where}.first_token_timestamp", "a time in ns", nonnegative=False
    )
    end = expect_number(r["end_timestamp"], f"{where}.end_timestamp", "an end time in ns", nonnegative=False)
    out: dict = {
        "workload": WORKLOAD,
        "start_ms": (start - t0) / 1e6,
        "prompt_tokens": expect_count(r["num_input_tokens"], f"{where}.num_input_tokens", "a prompt token count"),
    }
    errors = expect_count(r.get("error_tokens", 0), f"{where}.error_tokens", "a count of error responses")
    if errors:
        out.update(finish_reason="error", error=f"{errors} error response(s) (trtllm-bench error_tokens)")
        return out
    tokens = first(
        r.get("num_total_output_tokens"),
        r.get("num_output_tokens"),
        r.get("output_tokens"),
        len(r["tokens"]) if isinstance(r.get("tokens"), list) else None,
    )
    out["output_tokens"] = expect_count(tokens, f"{where}.num_total_output_tokens", "an output token count")
    if first_tok > 0:
        out["ttft_ms"] = (first_tok - start) / 1e6
    if end >= start:
        out["e2e_latency_ms"] = (end - start) / 1e6
    itl = num(r.get("intertoken_latency"))
    if itl is not None and itl > 0:
        out["itl_ms"] = itl / 1e6
    if isinstance(r.get("output"), str):
        out["content_chars"] = len(r["output"])
    return out


IMPORTER = _Importer()
