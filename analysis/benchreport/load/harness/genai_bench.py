"""genai-bench experiment folders (sgl-project/genai-bench `genai-bench benchmark`), one run per run file.

What genai-bench writes into an experiment folder (genai_bench/metrics, 0.0.x):
- `experiment_metadata.json`: the settings: `benchmark_version`, `api_backend`,
  `api_model_name` (the served model), `model` (the tokenizer's name), `task`,
  `traffic_scenario` and `num_concurrency` (lists), `iteration_type`, `server_engine`,
  `server_version`, `server_gpu_type`, `server_gpu_count`, `metrics_time_unit` ("s" or "ms").
- one run file per scenario and concurrency (`<scenario>_<task>_num_concurrency_<N>_time_<T>s.json`):
  `aggregated_metrics` {scenario, num_concurrency, batch_size, iteration_type, run_duration (s),
  mean_output_throughput_tokens_per_s, requests_per_second, num_requests,
  num_completed_requests, num_error_requests, error_rate, error_codes_frequency, stats {ttft,
  tpot, e2e_latency, output_latency, num_input_tokens, num_output_tokens, num_reasoning_tokens,
  ...: {min, max, mean, stddev, sum, p25, p50, p75, p90, p95, p99}}}, `individual_request_metrics`
  (one record a request: ttft, tpot, e2e_latency, output_latency in the TIME UNIT,
  output_inference_speed (tok/s: 1 / TPOT),
  num_input_tokens, num_output_tokens (reasoning included), num_reasoning_tokens (the server's),
  error_code, error_message; every metric null for a failed request), and `_time_unit`.
- twins and logs: `<folder>_summary.xlsx` and plots (not JSON), `genai_bench.log`.
There is no date, start time, per-token time or ITL; genai-bench calls the per-request mean time
per output token after the first TPOT.
"""

from __future__ import annotations

import json
import re

from benchreport.load.harness import ImportOutcome, SourceFile
from benchreport.load.harness._checks import (
    Broken,
    draft_or_refuse,
    expect_count,
    expect_dict,
    expect_list,
    expect_number,
)
from benchreport.load.harness.genai_bench_load import genai_load, started as _started
from benchreport.load.harness._common import (
    Check,
    Draft,
    count,
    finish,
    first,
    measurement,
    ms_factor,
    num,
    positive_int,
    short_text,
    skip,
    successful_count,
)

NAME = "genai-bench"
HARNESS_NAME = "genai-bench"
STATS = {"mean": "mean", "p50": "p50", "p90": "p90", "p95": "p95", "p99": "p99", "min": "min", "max": "max"}
#: stats key -> native metric (a time, in the file's unit)
TIMES = {"ttft": "ttft_ms", "e2e_latency": "e2e_latency_ms"}
UNITS = {"s": 1000.0, "ms": 1.0}


def _is_run(doc) -> bool:
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("aggregated_metrics"), dict)
        and isinstance(doc.get("individual_request_metrics"), list)
        and "stats" in doc["aggregated_metrics"]
    )


def _is_metadata(doc) -> bool:
    return (
        isinstance(doc, dict)
        and "benchmark_version" in doc
        and "traffic_scenario" in doc
        and ("api_backend" in doc or "metrics_time_unit" in doc)
    )


class _Importer:
    name = NAME
    #: the formats it reads, in words (for refusals that list what was considered)
    label = "genai-bench run files and experiment_metadata.json"
    #: keys only its files have (a file holding one is refused when not read, never skipped), and
    #: the name of its metadata
    signature = ("aggregated_metrics", "individual_request_metrics", "traffic_scenario", "benchmark_version")
    result_names = re.compile(r"^experiment_metadata\.json$")

    def recognise(self, doc, path):
        return "results" if _is_run(doc) or _is_metadata(doc) else None

    def import_files(self, files: list[SourceFile], manifests: list) -> ImportOutcome:
        """Run files as runs, each with the experiment_metadata.json of its folder; the metadata skipped."""
        outcome = ImportOutcome()
        folders: dict = {}
        for s in files:
            folders.setdefault(s.path.parent, []).append(s)
        drafts = []
        for group in folders.values():
            meta = next((s for s in group if _is_metadata(s.doc)), None)
            runs = [s for s in group if _is_run(s.doc)]
            for s in group:
                if _is_metadata(s.doc):
                    skip(
                        outcome,
                        s,
                        "genai-bench experiment settings (no results; read for the model, the time "
                        "unit and the version of the run files beside it)"
                        if runs
                        else "genai-bench experiment settings without any run file beside them (no results)",
                    )
            for s in runs:
                d = draft_or_refuse(outcome, s, "genai-bench run file", _draft, s, meta)
                if d is not None:
                    drafts.append(d)
        return finish(drafts, manifests, NAME, outcome)


def _time_factor(doc: dict, meta: dict, d: Draft) -> float:
    """ms per unit of the run's times: its own `_time_unit`, else the experiment's `metrics_time_unit`."""
    unit = first(doc.get("_time_unit"), meta.get("metrics_time_unit"))
    if unit is None:
        d.assumptions.append("times read as seconds, genai-bench's default unit (the files do not say)")
        return 1000.0
    factor = UNITS.get(str(unit).strip().lower(), ms_factor(unit))
    if factor is None:
        raise Broken("$._time_unit", f"expected a time unit genai-bench writes (s or ms), got {unit!r}")
    if meta.get("metrics_time_unit") not in (None, unit):
        d.notes.append(f"the run file says {unit}, the experiment {meta.get('metrics_time_unit')}: read as {unit}")
    return factor


def _draft(source: SourceFile, meta_source: SourceFile | None) -> Draft:
    """One run from one run file, with its experiment's settings (model, version, time unit)."""
    doc = source.doc
    meta = meta_source.doc if meta_source is not None else {}
    agg = expect_dict(doc["aggregated_metrics"], "$.aggregated_metrics", "genai-bench's aggregated metrics")
    d = Draft(source, {"name": HARNESS_NAME}, source_format="genai-bench run")
    if isinstance(meta.get("benchmark_version"), str):
        d.harness["version"] = meta["benchmark_version"]
    d.load = genai_load(meta, agg.get("scenario"), d)
    d.date, d.timestamp = _started(meta, source)
    d.model = first(*(meta.get(k) for k in ("api_model_name", "model") if isinstance(meta.get(k), str) and meta[k]))
    d.model_where = "genai-bench api_model_name"
    d.config = {
        "engine": meta.get("server_engine"),
        "engine_version": meta.get("server_version"),
        "hardware": meta.get("server_gpu_type"),
        "accelerators": meta.get("server_gpu_count"),
    }
    if meta_source is not None:
        d.extra_paths.append(meta_source.path)
    else:
        d.notes.append("no experiment_metadata.json beside this run file: model and time unit not stated")
    factor = _time_factor(doc, meta, d)
    wl, conc = _load(agg)
    n = expect_count(
        agg.get("num_completed_requests"),
        "$.aggregated_metrics.num_completed_requests",
        "the count of completed requests",
        optional=True,
    )
    _measurements(agg, factor, wl, conc, n or None, d)
    d.requests = [
        _request(r, f"$.individual_request_metrics[{i}]", factor, wl, conc)
        for i, r in enumerate(
            expect_list(doc["individual_request_metrics"], "$.individual_request_metrics", "the per-request records")
        )
    ]
    _count_notes(agg, d)
    _check_counts(agg, meta, wl, conc, d)
    return d


def _check_counts(agg: dict, meta: dict, wl: str, conc: int | None, d: Draft) -> None:
    """genai-bench's request counts and `error_rate` against its own request records (issue 26:
    its `error_rate` can say 0 where half the records failed); and, in a run that ended before
    its time limit, the requests it was asked for (`max_requests_per_run`) against the records."""
    against = "genai-bench's aggregated_metrics"
    n_rec = len(d.requests)
    ok = successful_count(d.requests)
    failed = n_rec - ok
    for key, metric, ours, basis in (
        ("num_requests", "total", n_rec, "request records"),
        ("num_completed_requests", "requests", ok, "request records without an error"),
        ("num_error_requests", "failed", failed, "request records with an error"),
    ):
        theirs = count(agg.get(key))
        if theirs is not None:
            d.checks.append(Check(against, wl, conc, metric, "count", float(theirs), float(ours), basis, field=key))
    rate = num(agg.get("error_rate"))
    if rate is not None and n_rec:
        d.checks.append(
            Check(
                against,
                wl,
                conc,
                "error_rate",
                "share",
                rate,
                failed / n_rec,
                f"{failed} of {n_rec} request records failed",
                field="error_rate",
                of=n_rec,
            )
        )
    asked = positive_int(meta.get("max_requests_per_run"))
    limit, took = num(meta.get("max_time_per_run_s")), num(agg.get("run_duration"))
    if asked and limit and took is not None and took < limit:
        d.checks.append(
            Check(
                against,
                wl,
                conc,
                "sent",
                "count",
                float(asked),
                float(n_rec),
                f"request records; the run ended after {took:.3g} s of its {limit:g} s limit, so "
                f"by its request limit, `max_requests_per_run` {asked}",
                field="max_requests_per_run",
            )
        )


def _load(agg: dict) -> tuple[str, int | None]:
    """(workload suffix, concurrency): locust users are the concurrency; a batch size (embedding
    tasks) is not a concurrency and names the workload instead."""
    if agg.get("iteration_type") == "batch_size" and positive_int(agg.get("batch_size")):
        return f"-batch{positive_int(agg['batch_size'])}", None
    return "", positive_int(agg.get("num_concurrency"))


def _measurements(agg: dict, factor: float, wl: str, conc: int | None, n: int | None, d: Draft) -> None:
    """genai-bench's own summaries: times converted from the file's unit once, rates per second."""
    stats = expect_dict(agg["stats"], "$.aggregated_metrics.stats", "the per-metric summaries")
    for key, metric in TIMES.items():
        block = stats.get(key)
        if block is None:
            continue
        block = expect_dict(block, f"$.aggregated_metrics.stats.{key}", "a summary {mean, p50, ...}")
        for k, stat in STATS.items():
            v = expect_number(block.get(k), f"$.aggregated_metrics.stats.{key}.{k}", f"the {k} of {key}", optional=True)
            if v is not None:
                d.measurements.append(measurement(wl, conc, metric, v * factor, "ms", stat, n))
    speed = stats.get("output_inference_speed")  # per request 1 / TPOT, in tok/s whatever the time unit
    if speed is not None:
        speed = expect_dict(speed, "$.aggregated_metrics.stats.output_inference_speed", "a summary {mean, p50, ...}")
        for k, stat in STATS.items():
            v = expect_number(
                speed.get(k),
                f"$.aggregated_metrics.stats.output_inference_speed.{k}",
                f"the {k} of output_inference_speed",
                optional=True,
            )
            if v is not None:
                d.measurements.append(measurement(wl, conc, "decode_tok_s_per_stream", v, "tok/s", stat, n))
    for key, metric, unit in (
        ("mean_output_throughput_tokens_per_s", "output_tok_s", "tok/s"),
        ("requests_per_second", "request_rate", "req/s"),
    ):
        v = expect_number(agg.get(key), f"$.aggregated_metrics.{key}", key, optional=True)
        if v is not None:
            d.measurements.append(measurement(wl, conc, metric, v, unit, "mean", n))


def _request(r, where: str, factor: float, wl: str, conc: int | None) -> dict:
    """One request record (times in the file's unit); a failed one keeps only its error."""
    r = expect_dict(r, where, "a request record")
    out: dict = {"workload": wl}
    if conc is not None:
        out["concurrency"] = conc
    if r.get("error_code") is not None or r.get("error_message"):
        out.update(finish_reason="error", error=_error_text(r.get("error_code"), r.get("error_message")))
        return out
    for key, field in (
        ("num_input_tokens", "prompt_tokens"),
        ("num_output_tokens", "output_tokens"),
        ("num_reasoning_tokens", "reasoning_tokens"),
    ):
        v = expect_count(r.get(key), f"{where}.{key}", f"a token count ({key})", optional=True)
        if v is not None:
            out[field] = v
    for key, field in (("ttft", "ttft_ms"), ("e2e_latency", "e2e_latency_ms")):
        v = expect_number(r.get(key), f"{where}.{key}", f"the request's {key}", optional=True)
        if v is not None:
            out[field] = v * factor
    return out


def _error_text(code, message) -> str:
    """`HTTP <code>: <message>`, the message taken out of the server's JSON body when it is one."""
    try:
        body = json.loads(message) if isinstance(message, str) else None
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        message = body["message"]
    head = f"HTTP {code}" if code is not None else "error"
    return short_text(f"{head}: {message}" if message else head) or "failed"


def _count_notes(agg: dict, d: Draft) -> None:
    n_all, failed = count(agg.get("num_requests")), count(agg.get("num_error_requests"))
    d.notes.append(
        f"genai-bench run: scenario {agg.get('scenario')}, {agg.get('iteration_type')} "
        f"{agg.get('num_concurrency')}, {n_all} requests, {agg.get('num_completed_requests')} completed, "
        f"{failed} failed, {num(agg.get('run_duration'))} s"
    )
    rate = num(agg.get("error_rate"))
    if failed and n_all and rate is not None and abs(rate - failed / n_all) > 1e-9:
        d.notes.append(f"genai-bench's error_rate says {rate:g}, but {failed} of {n_all} requests failed")


IMPORTER = _Importer()
