"""vLLM `vllm bench serve --save-result` (and the older `benchmarks/benchmark_serving.py`) result JSON.

What vLLM writes (vllm/benchmarks/serve.py, `main_async` and `benchmark`): one flat JSON object
with the set-up (`date` as `%Y%m%d-%H%M%S` local time, `backend`, `model_id`, `tokenizer_id`,
`num_prompts`, `request_rate` ("inf" or a number), `burstiness`, `max_concurrency`), the
totals (`duration` s, `completed`, `failed` (newer releases), `total_input_tokens`,
`total_output_tokens`, `request_throughput` req/s, `output_throughput` tok/s), and per metric
`mean_/median_/std_/pNN_{ttft,tpot,itl,e2el}_ms` for the metrics chosen with
`--percentile-metrics` (default ttft,tpot,itl). With `--save-detailed` (and always in releases
before the option worked) the per-request lists `input_lens`, `output_lens` (tokens; 0 for
failed requests), `ttfts` (SECONDS), `itls` (list per request, SECONDS), `generated_texts`,
`errors` ("" on success) are kept; newer releases also keep `latencies` (SECONDS) and
`start_times`. `--append-result` appends further results to the same file, one JSON object a
line: each line is one invocation (a run of its own).

The PyTorch-benchmark-format twin (`*.pytorch.json`) repeats the same figures and is skipped.

`vllm bench sweep serve` (vLLM >= 0.11, vllm/benchmarks/sweep/serve.py) runs `vllm bench serve`
`--num-runs` times per combination of `--serve-params` (the server's engine arguments) and
`--bench-params` (the client's), into `<output dir>/<experiment>/SERVE--<serve>-BENCH--<bench>/`
(earlier `SERVE-<k=v-...>-BENCH-<k=v-...>`, earliest lower case): `run=<N>.json` (N from 0) is the
result with `run_number` and the combination's parameters merged in at the top level (before
0.11.1 the serve parameters only), `warmup.json` (`run_number` -1, `--warmup-num-prompts`) an
unmeasured warm-up, `summary.json` the list of the combination's runs again, `run=<N>.failure.json`
and `SERVE-<name>-failure.json` (`--continue-on-error`) what failed, and `summary.csv` all runs as
a table. `sweep` below sorts them.
"""

from __future__ import annotations

import datetime as _dt
import re

from benchreport.load.harness import ImportOutcome, SourceFile
from benchreport.load.harness import _vllm_sweep as sweep
from benchreport.load.harness._common import (
    Check,
    Draft,
    count,
    count_only_requests,
    finish,
    guarded,
    mean,
    measurement,
    num,
    positive_int,
    short_text,
    skip,
    successful_count,
    token_target,
    BACKEND_ENDPOINTS,
)

NAME = "vllm"
HARNESS_NAME = "vllm bench serve"
#: summary prefix in the file -> native statistic
STATS = {"mean": "mean", "median": "p50", "p90": "p90", "p95": "p95", "p99": "p99"}
#: vLLM metric -> native metric (all in ms)
METRICS = {"ttft": "ttft_ms", "itl": "itl_ms", "e2el": "e2e_latency_ms"}
SUMMARY_KEYS = ("completed", "request_throughput", "mean_ttft_ms", "mean_e2el_ms", "output_throughput")


def _is_result(doc) -> bool:
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("model_id"), str)
        and any(k in doc for k in SUMMARY_KEYS)
        and any(k in doc for k in ("backend", "endpoint_type", "date", "num_prompts"))
    )


def _is_pytorch_twin(doc) -> bool:
    return (
        isinstance(doc, list)
        and bool(doc)
        and all(
            isinstance(r, dict)
            and isinstance(r.get("benchmark"), dict)
            and isinstance(r.get("metric"), dict)
            and str(r["benchmark"].get("name", "")).lower().startswith("vllm")
            for r in doc
        )
    )


#: why vLLM's offline benchmark outputs are not read
OFFLINE_REASON = (
    "vLLM {}: the engine run in-process on a fixed batch, with no server, no streams and no "
    "per-request timings; not a serving measurement, so not read (its figures are not comparable to "
    "a serving run's)"
)


def _offline_kind(doc) -> str | None:
    """`benchmark_latency.py` ({avg_latency, latencies, percentiles}) or `benchmark_throughput.py`
    ({elapsed_time, num_requests, total_num_tokens, requests_per_second, tokens_per_second}), or None."""
    if not isinstance(doc, dict):
        return None
    if {"avg_latency", "latencies", "percentiles"} <= doc.keys() and len(doc) <= 6:
        return "benchmark_latency.py output (the latency of one batch)"
    if {"elapsed_time", "num_requests", "requests_per_second", "tokens_per_second"} <= doc.keys() and len(doc) <= 8:
        return "benchmark_throughput.py output (offline throughput)"
    return None


class _Importer:
    name = NAME
    label = "vLLM bench serve / benchmark_serving.py result"
    #: keys only a serving benchmark's result has: a file that holds one is refused when it is not
    #: read, never skipped as "not a run file"; and a name vLLM gives its results
    signature = (
        "request_throughput",
        "output_throughput",
        "total_token_throughput",
        "mean_ttft_ms",
        "median_ttft_ms",
        "p99_ttft_ms",
        "mean_tpot_ms",
        "mean_itl_ms",
        "mean_e2el_ms",
    )
    result_names = re.compile(r"-(?:inf|\d+(?:\.\d+)?)qps.*\.json$")
    #: keys its result opens with, before any figure: two of them claim a file cut short
    early_keys = (
        "date",
        "backend",
        "model_id",
        "tokenizer_id",
        "best_of",
        "num_prompts",
        "request_rate",
        "burstiness",
        "max_concurrency",
    )

    def recognise(self, doc, path):
        if _is_result(doc):
            return "results"
        if isinstance(doc, list) and doc and all(_is_result(d) for d in doc):
            return "results"  # --append-result: one result a line; a sweep's summary.json (sorted later)
        if _is_pytorch_twin(doc):
            return "results"  # skipped in import_files, with the reason
        if sweep.failure_kind(doc) or _offline_kind(doc):
            return "auxiliary"
        return None

    def skip_reason(self, doc, path):
        if _offline_kind(doc):
            return OFFLINE_REASON.format(_offline_kind(doc))
        return sweep.failure_reason(doc) if sweep.failure_kind(doc) else None

    def import_files(self, files: list[SourceFile], manifests: list) -> ImportOutcome:
        outcome = ImportOutcome()
        drafts = []
        summaries = []
        #: sweep runs by (folder, run_number): their draft and result, for the summaries' checks
        sweep_runs: dict[tuple, tuple[Draft, dict]] = {}
        warmed = {s.path.parent for s in files if isinstance(s.doc, dict) and _is_warmup(s)}
        for source in files:
            if _is_pytorch_twin(source.doc):
                skip(
                    outcome,
                    source,
                    "vLLM PyTorch-benchmark-format twin of a result file (same figures, "
                    "read once from the result JSON)",
                )
                continue
            if sweep.is_summary(source.doc):
                summaries.append(source)
                continue
            if isinstance(source.doc, dict) and _is_warmup(source):
                skip(outcome, source, sweep.warmup_reason(source.doc))
                continue
            docs = source.doc if isinstance(source.doc, list) else [source.doc]
            for i, doc in enumerate(docs):
                draft = guarded(
                    outcome, source, "vLLM result", _draft, source, doc, f"r{i + 1}" if len(docs) > 1 else None
                )
                if draft is None:
                    continue  # refused by `guarded`; one odd result must not lose the others
                if len(docs) > 1:
                    draft.notes.append(f"result {i + 1} of {len(docs)} appended to this file (--append-result)")
                if sweep.run_number(doc) is not None:
                    sweep.apply(draft, doc, source.path, source.path.parent in warmed)
                    sweep_runs[(source.path.parent, sweep.run_number(doc))] = (draft, doc)
                drafts.append(draft)
        for source in summaries:
            drafts += _sweep_summary(outcome, source, sweep_runs, source.path.parent in warmed)
        return finish(drafts, manifests, NAME, outcome)


def _is_warmup(source: SourceFile) -> bool:
    """A sweep's warm-up run: `warmup.json` with a run_number, or any negative run_number."""
    n = sweep.run_number(source.doc)
    return n is not None and (n < 0 or source.path.name == sweep.WARMUP_FILE)


def _sweep_summary(outcome: ImportOutcome, source: SourceFile, runs: dict, warmed: bool) -> list[Draft]:
    """A sweep's summary.json: skipped (its runs are read from their own files) and checked against
    them; a run whose file is not there is read from it, so no run is lost."""
    out = []
    for item in source.doc:
        n = sweep.run_number(item)
        found = runs.get((source.path.parent, n))
        if found is not None:
            draft, run_doc = found
            sweep.check_summary(
                draft, run_doc, item, _workload_suffix(run_doc), positive_int(run_doc.get("max_concurrency"))
            )
            continue
        if n < 0:
            continue
        draft = guarded(outcome, source, "vLLM sweep summary", _draft, source, item, f"run{n}")
        if draft is None:
            continue
        sweep.apply(draft, item, source.path, warmed)
        draft.notes.append(f"read from the sweep's summary.json: run={n}.json is not in its folder")
        out.append(draft)
    if not out:
        skip(outcome, source, sweep.summary_reason(source.doc))
    return out


#: the forms of `date` read: vLLM's own (`%Y%m%d-%H%M%S`, local time), and an ISO date-time (with a
#: space or a T; forks and post-processing write it so) kept as written
DATE_FORMATS = ("%Y%m%d-%H%M%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S")


def _parse_date(text) -> tuple[str | None, float | None]:
    """vLLM's `date` is local time `%Y%m%d-%H%M%S` without a zone: kept as a naive ISO date-time; an
    ISO date-time (with or without fraction or zone) is read as it is written."""
    if not isinstance(text, str):
        return None, None
    text = text.strip()
    for fmt in DATE_FORMATS:
        try:
            t = _dt.datetime.strptime(text, fmt)
        except ValueError:
            continue
        return t.isoformat(), t.replace(tzinfo=_dt.timezone.utc).timestamp()
    try:
        t = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None, None
    if not re.match(r"^\d{4}-\d{2}-\d{2}", text):
        return None, None
    stamp = (t if t.tzinfo else t.replace(tzinfo=_dt.timezone.utc)).timestamp()
    return t.isoformat(), stamp


def _workload_suffix(doc) -> str:
    if doc.get("ramp_up_strategy"):
        return f"-ramp-{doc.get('ramp_up_strategy')}-{doc.get('ramp_up_start_rps')}-{doc.get('ramp_up_end_rps')}rps"
    rate = num(doc.get("request_rate"))
    return f"-{rate:g}rps" if rate is not None else ""


def _draft(source: SourceFile, doc: dict, suffix: str | None) -> Draft:
    d = Draft(source, {"name": HARNESS_NAME}, source_format="vllm bench serve result", load=_load(doc))
    if d.load.get("prompt_tokens") and num(doc.get("random_input_len")) is None:
        d.notes.append(
            "prompt length in the load description from the lengths sent ("
            + ("input_lens" if isinstance(doc.get("input_lens"), list) else "total_input_tokens / completed")
            + "): vLLM writes no target length"
        )
    d.suffix = suffix
    d.model = doc.get("model_id") if isinstance(doc.get("model_id"), str) else None
    d.model_where = "model id"
    d.date, d.timestamp = _parse_date(doc.get("date"))
    if d.date is None and doc.get("date") not in (None, ""):
        d.date_text = short_text(doc.get("date"), 40)  # read neither as %Y%m%d-%H%M%S nor as ISO
    d.config.update(_config(doc))
    conc = positive_int(doc.get("max_concurrency"))
    wl = _workload_suffix(doc)
    completed = count(doc.get("completed"))
    failed = count(doc.get("failed"))
    n = completed if completed else None

    d.requests, empty, chunked = _requests(doc, wl, conc, d)
    #: figures vLLM pooled the no-output requests into (as completed, TTFT 0) are left out: the
    #: records, which read them as failed, give them instead
    pooled = {"ttft", "itl", "e2el"} if empty else set()
    for vname, metric in METRICS.items():
        if vname in pooled or (vname == "itl" and chunked):
            continue  # a chunked stream's gaps are per chunk, not per token
        for prefix, stat in STATS.items():
            m = measurement(wl, conc, metric, doc.get(f"{prefix}_{vname}_ms"), "ms", stat, n)
            if m:
                d.measurements.append(m)
    for m in (
        measurement(wl, conc, "output_tok_s", doc.get("output_throughput"), "tok/s", "mean", n),
        None if empty else measurement(wl, conc, "request_rate", doc.get("request_throughput"), "req/s", "mean", n),
    ):
        if m:
            d.measurements.append(m)
    tpot = num(doc.get("mean_tpot_ms"))
    if tpot and tpot > 0:  # TPOT leaves out requests of one token or none: the no-output ones too
        d.measurements.append(measurement(wl, conc, "decode_tok_s_per_stream", 1000.0 / tpot, "tok/s", "mean", n))

    total = len(doc.get("ttfts") or doc.get("output_lens") or [])
    if failed is None and total and completed is not None:
        failed = total - completed
    _check_counts(d, completed, failed, wl, conc, empty)
    desc = [
        f"vLLM bench serve result: backend {doc.get('backend')}",
        f"{doc.get('num_prompts')} prompts",
        f"request rate {doc.get('request_rate')}",
        f"max concurrency {doc.get('max_concurrency')}",
        f"{completed} completed, {failed if failed is not None else 'unknown'} failed",
    ]
    d.notes.append(", ".join(str(x) for x in desc))
    if conc is None:
        d.notes.append("no --max-concurrency was set, so the measurements carry no concurrency")
    return d


def _load(doc: dict) -> dict:
    """What the run sent, as far as the result file says: the API (from the client backend, or
    `endpoint_type` in `vllm bench serve`), streaming (the client always streams), the arrival
    (an infinite rate is a closed loop at the concurrency; a finite one Poisson at burstiness 1,
    gamma otherwise), the prompt count and the prompt lengths sent (`_prompt_lengths`). The
    length targets, dataset, ignore_eos and the seed are not written by vLLM (docs/importers.md);
    `--metadata` keys of those names are read when given."""
    backend = doc.get("endpoint_type") or doc.get("backend")
    rate = doc.get("request_rate")
    rate = None if isinstance(rate, str) or num(rate) is None or num(rate) == float("inf") else num(rate)
    burst = num(doc.get("burstiness"))
    arrival = "concurrent" if rate is None else ("poisson" if burst in (None, 1.0) else f"gamma {burst:g}")
    load = {
        "endpoint": BACKEND_ENDPOINTS.get(str(backend), backend if isinstance(backend, str) else None),
        "streaming": True,
        "arrival": arrival,
        "rate": rate,
        "requests": positive_int(doc.get("num_prompts")),
        "dataset": doc.get("dataset_name") if isinstance(doc.get("dataset_name"), str) else None,
    }
    p, o = num(doc.get("random_input_len")), num(doc.get("random_output_len"))
    if p is not None or o is not None:  # `--metadata` keys (the range ratio's meaning changed in 0.8)
        load["prompt_tokens"], load["output_tokens"] = token_target(p), token_target(o)
        if num(doc.get("random_range_ratio")) is not None:
            load["extra"] = {"random_range_ratio": num(doc.get("random_range_ratio"))}
    else:
        sent = _prompt_lengths(doc)
        if sent:
            load["prompt_tokens"] = sent
    if isinstance(doc.get("ignore_eos"), bool):
        load["fixed_output"] = doc["ignore_eos"]
    return load


#: `--metadata KEY=VALUE` keys (written at the top level, as strings) that record the seat's
#: configuration -> benchreport's configuration keys; vLLM itself records none of it
METADATA_CONFIG = {
    "tensor_parallel_size": "tensor_parallel",
    "tensor_parallel": "tensor_parallel",
    "tp": "tensor_parallel",
    "pipeline_parallel_size": "pipeline_parallel",
    "pipeline_parallel": "pipeline_parallel",
    "data_parallel_size": "data_parallel",
    "quantization": "quantisation",
    "quantisation": "quantisation",
    "hardware": "hardware",
    "gpu": "hardware",
    "gpu_type": "hardware",
    "accelerator": "hardware",
    "num_gpus": "accelerators",
    "accelerators": "accelerators",
    "gpu_count": "accelerators",
    "engine": "engine",
    "vllm_version": "engine_version",
    "engine_version": "engine_version",
    "kv_cache_dtype": "kv_cache_dtype",
    "max_model_len": "max_model_len",
}


def _config(doc: dict) -> dict:
    """The seat's configuration as `--metadata` recorded it (METADATA_CONFIG; numbers from their
    text); a vLLM version without an engine name is vLLM's."""
    out: dict = {}
    for key, name in METADATA_CONFIG.items():
        v = doc.get(key)
        if isinstance(v, bool) or v is None or isinstance(v, (list, dict)):
            continue
        if isinstance(v, str):
            v = v.strip()
            if re.fullmatch(r"\d+", v):
                v = int(v)
        if v != "" and name not in out:
            out[name] = v
    if "engine_version" in out and "engine" not in out:
        out["engine"] = "vllm"
    return out


def _prompt_lengths(doc: dict) -> dict:
    """The prompt lengths the client sent, when no target was written: vLLM keeps no
    `--random-input-len` (or dataset), but `input_lens` holds every request's prompt length as
    the client counted it (the length drawn for the random dataset, its own tokenisation for
    the others; failed requests included), so their mean, spread and range describe the load.
    Without the list (`vllm bench serve` without --save-detailed), `total_input_tokens` over
    `completed` gives the mean. The output lengths are not read: `output_lens` are the
    server's answers (what the runs compare), not what was asked."""
    lens = doc.get("input_lens")
    if isinstance(lens, list) and lens:
        vals = [count(v) for v in lens]
        if all(v is not None for v in vals):
            m = sum(vals) / len(vals)
            sd = (sum((v - m) ** 2 for v in vals) / len(vals)) ** 0.5
            return {**token_target(m, sd, min(vals), max(vals)), "sent": True}
        return {}
    total, done = count(doc.get("total_input_tokens")), count(doc.get("completed"))
    if total is not None and done:
        return {**token_target(total / done), "sent": True}
    return {}


def _check_counts(
    d: Draft, completed: int | None, failed: int | None, wl: str, conc: int | None, empty: int = 0
) -> None:
    """The file's `completed`/`failed` against the request records read. Failed requests the file
    only counts (no per-request lists: a result saved without --save-detailed) become records
    without timings, with the completed ones beside them, so the failure share is vLLM's. Requests
    that produced nothing (`empty`) are failed records here and completed ones in vLLM's count."""
    if not d.requests:
        if failed:
            d.requests = count_only_requests(
                failed, wl, conc, "failed (counted by vLLM; no per-request lists saved)"
            ) + count_only_requests(completed or 0, wl, conc)
            d.notes.append(
                f"no per-request lists in this file: its {failed} failed and {completed or 0} "
                "completed requests are request rows without timings, so the failure share is seen; "
                "the figures are the file's"
            )
        return
    against = "vLLM's completed/failed counts"
    ok = successful_count(d.requests)
    extra = f", plus the {empty} without output that vLLM counts as completed" if empty else ""
    if completed is not None:
        d.checks.append(
            Check(
                against,
                wl,
                conc,
                "requests",
                "count",
                float(completed),
                float(ok + empty),
                "request records without an error" + extra,
            )
        )
    if failed is not None:
        d.checks.append(
            Check(
                against,
                wl,
                conc,
                "failed",
                "count",
                float(failed),
                float(len(d.requests) - ok - empty),
                "request records with an error" + (f", less the {empty} without output" if empty else ""),
            )
        )


def _seconds_factor(doc: dict, ttfts: list, ok: list[bool]) -> tuple[float, str | None]:
    """vLLM keeps per-request times in seconds; check against the file's own mean TTFT."""
    vals = [num(t) for t, good in zip(ttfts, ok) if good]
    vals = [v for v in vals if v is not None]
    target = num(doc.get("mean_ttft_ms"))
    if not vals or not target:
        return 1000.0, None
    m = sum(vals) / len(vals)
    if abs(m * 1000.0 - target) <= 0.01 * target + 1e-9:
        return 1000.0, None
    if abs(m - target) <= 0.01 * target + 1e-9:
        return 1.0, "per-request times found in ms (they agree with mean_ttft_ms as ms)"
    return 1000.0, (
        "per-request TTFTs read as seconds, but their mean does not reproduce mean_ttft_ms "
        f"({m * 1000:.3f} ms vs {target:.3f} ms)"
    )


def _successful(doc: dict, lists: dict, size: int, d: Draft) -> list[bool] | None:
    """Which requests of the per-request lists succeeded, or None when that cannot be told.

    From `errors` ("" on success) when saved. Without it (a result saved without
    --save-detailed keeps only `latencies`), a failed request is the one with vLLM's
    placeholder latency 0.0, accepted only when as many latencies are 0 as the file's `failed`.
    """
    if "errors" in lists:
        return [not (isinstance(e, str) and e.strip()) for e in lists["errors"]]
    failed = count(doc.get("failed"))
    if failed == 0 or count(doc.get("completed")) == size:
        return [True] * size
    zero = [num(v) == 0 for v in lists.get("latencies", [])]
    if failed and len(zero) == size and sum(zero) == failed:
        d.notes.append(
            f"no errors list in this file: the {failed} failed requests are those with vLLM's "
            "placeholder latency 0 (as many as its failed count)"
        )
        return [not z for z in zero]
    d.notes.append(
        "per-request lists without errors and with failed requests; requests not imported (rerun with --save-detailed)"
    )
    return None


def _empty_first_chunk(gaps: list[float], tokens: int | None) -> bool:
    """Whether the first chunk the client timed carried no token: the stream had one chunk more than
    the server's token count (`itls` holds a gap per chunk after the first) and the first gap, which
    then holds the prefill, is longer than the typical one. vLLM's chat client times the first chunk
    with `choices` whatever it carries, and OpenAI-compatible servers send the role alone first."""
    if tokens is None or tokens < 2 or len(gaps) != tokens:
        return False
    rest = sorted(gaps[1:])
    return gaps[0] > rest[len(rest) // 2]


def _per_request_lists(doc: dict, d: Draft) -> tuple[dict, int] | None:
    """The per-request lists the result holds (by key) and their common length; None when it has
    none, or lists of different lengths (noted)."""
    lists = {
        k: doc.get(k)
        for k in ("input_lens", "output_lens", "ttfts", "itls", "latencies", "generated_texts", "errors", "start_times")
    }
    lists = {k: v for k, v in lists.items() if isinstance(v, list)}
    if not any(k in lists for k in ("ttfts", "output_lens", "latencies")):
        return None
    sizes = {len(v) for v in lists.values()}
    if len(sizes) != 1:
        d.notes.append("per-request lists of different lengths; requests not imported")
        return None
    return lists, sizes.pop()


#: tokens a chunk, on average over a request's stream, from which its `itls` are taken to time
#: chunks of several tokens rather than tokens. A token or three more than chunks is common without
#: any batching of the stream (releases that re-count the output tokens from the text, a server that
#: merges an odd pair of tokens: 22 gaps for 25 tokens in the 0.33 captures), so fewer gaps than
#: tokens - 1 alone does not make a stream chunked.
CHUNKED_TOKENS = 1.5


def _add_successful(r: dict, lists: dict, i: int, factor: float, derive_e2e: bool) -> bool:
    """The figures of successful request `i`: output tokens, times in ms (`factor` from the
    lists' unit), end-to-end latency given or (`derive_e2e`) TTFT + the gaps, content length.
    True when its stream carried several tokens a chunk (CHUNKED_TOKENS or more on average): its
    gaps are then per chunk, and no itl_ms is given."""
    o = count(lists["output_lens"][i]) if "output_lens" in lists else None
    if o is not None:
        r["output_tokens"] = o
    ttft = num(lists["ttfts"][i]) if "ttfts" in lists else None
    if ttft is not None and ttft >= 0:
        r["ttft_ms"] = ttft * factor
    gaps = lists["itls"][i] if "itls" in lists and isinstance(lists["itls"][i], list) else None
    gaps = [num(g) for g in gaps] if gaps is not None else None
    # gaps that time chunks of several tokens (a stream with no gap at all gives no ITL either way)
    chunked = bool(gaps and r.get("output_tokens") and r["output_tokens"] >= CHUNKED_TOKENS * (len(gaps) + 1))
    if gaps and all(g is not None and g >= 0 for g in gaps) and not chunked:
        r["itl_ms"] = mean(gaps) * factor
        if ttft is not None and ttft >= 0 and _empty_first_chunk(gaps, r.get("output_tokens")):
            r["first_token_chunk_ms"] = (ttft + gaps[0]) * factor
    if "latencies" in lists:
        lat = num(lists["latencies"][i])
        if lat is not None and lat >= 0:
            r["e2e_latency_ms"] = lat * factor
    elif derive_e2e and ttft is not None and gaps is not None and all(g is not None for g in gaps):
        r["e2e_latency_ms"] = (ttft + sum(gaps)) * factor
    text = lists["generated_texts"][i] if "generated_texts" in lists else None
    if isinstance(text, str):
        r["content_chars"] = len(text)
    return chunked


#: the error given a request that vLLM counted as completed but that produced nothing
NO_OUTPUT = "no output: 0 tokens, TTFT 0 and an empty error"


def _no_output(lists: dict, i: int) -> bool:
    """A request vLLM counted as successful (empty error) that produced nothing: 0 output tokens
    and a TTFT of 0 (vLLM's placeholder: no token ever arrived)."""
    o = count(lists["output_lens"][i]) if "output_lens" in lists else None
    t = num(lists["ttfts"][i]) if "ttfts" in lists else None
    return o == 0 and t == 0


def _request(
    lists: dict, i: int, good: bool, wl: str, conc: int | None, factor: float, derive_e2e: bool
) -> tuple[dict, bool]:
    """Request `i` as a native request: when it was sent, its prompt, and its figures when it
    succeeded or its error when it failed (or produced nothing); and whether its stream was chunked."""
    r: dict = {"workload": wl}
    if conc is not None:
        r["concurrency"] = conc
    sent = num(lists["start_times"][i]) if "start_times" in lists else None
    if sent is not None and sent >= 0:
        r["start_ms"] = sent * 1000.0  # seconds (perf_counter): keeps the send order
    p = count(lists["input_lens"][i]) if "input_lens" in lists else None
    if p is not None:
        r["prompt_tokens"] = p
    if good and _no_output(lists, i):
        r.update(finish_reason="error", error=NO_OUTPUT, output_tokens=0)
        return r, False
    if good:
        return r, _add_successful(r, lists, i, factor, derive_e2e)
    r["finish_reason"] = "error"
    text = lists["errors"][i] if "errors" in lists else None
    r["error"] = short_text(text) or "failed (vLLM keeps no error text without --save-detailed)"
    return r, False


def _requests(doc: dict, wl: str, conc: int | None, d: Draft) -> tuple[list[dict], int, int]:
    """The result's per-request lists (saved with --save-detailed) as native requests (none when it
    has none or they do not line up), how many produced no output, and how many streams were chunked."""
    found = _per_request_lists(doc, d)
    if found is None:
        return [], 0, 0
    lists, size = found
    ok = _successful(doc, lists, size, d)
    if ok is None:
        return [], 0, 0
    factor, note = _seconds_factor(doc, lists.get("ttfts", []), ok)
    if note:
        d.notes.append(note)
    derive_e2e = "latencies" not in lists and "ttfts" in lists and "itls" in lists
    if derive_e2e:
        d.assumptions.append(
            "per-request end-to-end latency computed as TTFT + the sum of inter-token gaps "
            "(this vLLM release saves no per-request latencies)"
        )
    out = [_request(lists, i, ok[i], wl, conc, factor, derive_e2e) for i in range(size)]
    requests = [r for r, _c in out]
    empty = sum(1 for r in requests if r.get("error") == NO_OUTPUT)
    chunked = sum(1 for _r, c in out if c)
    if empty:
        d.notes.append(
            f"{empty} of {size} requests produced no output ({NO_OUTPUT.split(': ', 1)[1]}): read as "
            "failed; vLLM counted them as completed, so its TTFT, ITL, request latency and request rate "
            "figures, which pool their zeros, are left out (the other requests' records give them)"
        )
    if chunked:
        tokens = sum(r.get("output_tokens") or 0 for (r, c) in out if c)
        gaps = sum(len(lists["itls"][i]) + 1 for i, (_r, c) in enumerate(out) if c)
        d.notes.append(
            f"{chunked} of {size} streams carried several tokens a chunk (about {tokens / gaps:.1f}; "
            f"itls has one gap a chunk, {CHUNKED_TOKENS:g} tokens a chunk or more): vLLM's itls and its "
            "ITL figures time the gaps "
            "between chunks, not tokens, so no ITL is reported for this run (the per-stream decode rate "
            "comes from TPOT, which is per token)"
        )
    return requests, empty, chunked


IMPORTER = _Importer()
