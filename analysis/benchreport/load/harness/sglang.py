"""SGLang `python -m sglang.bench_serving` (now `sglang.benchmark.serving`) `--output-file` JSON Lines.

What SGLang writes (python/sglang/bench_serving.py `benchmark`, 0.5.x; later
python/sglang/benchmark/serving.py and metrics.py): each invocation APPENDS one JSON object as a
line to the output file, so a file holds one run a line. A line has the set-up (`tag`,
`backend`, `dataset_name`, `request_rate` (the bare token `Infinity` for an unlimited rate:
`json.dumps(float("inf"))`, or "trace"), `max_concurrency`, `random_*`), `server_info` (the
SGLang server's own config when the server answers `/server_info`: `model_path`,
`served_model_name`, ...; null otherwise), the totals (`duration` s, `completed` = successful
requests, `total_input_tokens`/`total_output_tokens`, later `total_input`/`total_output`,
`request_throughput` req/s, `output_throughput` tok/s), and per metric
`mean_/median_/std_/p90_/p95_/p99_{ttft,tpot,itl,e2e_latency}_ms` (which percentiles exist
depends on the release). With `--output-details`: per-request arrays `input_lens`,
`output_lens` (tokens; 0 for a failed request), `ttfts` (SECONDS), `itls` (list of SECONDS per
request), `generated_texts`, `errors` ("" on success); with `--cache-report` (later releases)
`cache_report` {total_prompt_tokens, total_cached_tokens, cache_hit_rate_pct, ...} and the
per-request `cached_tokens`. There is no model id (outside `server_info`), no date, no per-request
start time or end-to-end latency. The first request is sent once as a warm-up and is not in the
file.
"""

from __future__ import annotations

from benchreport.load.harness import ImportOutcome, SourceFile
from benchreport.load.harness._checks import draft_or_refuse, expect_count, expect_dict, expect_list, expect_number
from benchreport.load.harness._common import (
    BACKEND_ENDPOINTS,
    Check,
    Draft,
    count,
    finish,
    first,
    mean,
    measurement,
    num,
    positive_int,
    short_text,
    successful_count,
    token_target,
)

NAME = "sglang"
HARNESS_NAME = "sglang bench_serving"
#: summary prefix in the file -> native statistic
STATS = {"mean": "mean", "median": "p50", "p90": "p90", "p95": "p95", "p99": "p99", "max": "max"}
#: SGLang metric -> native metric (all in ms)
METRICS = {"ttft": "ttft_ms", "itl": "itl_ms", "e2e_latency": "e2e_latency_ms"}
#: keys only SGLang's result line has (vLLM's has `model_id` and `*_e2el_ms` instead)
MARKERS = (
    "total_output_tokens_retokenized",
    "total_output_retokenized",
    "max_concurrent_requests",
    "max_output_tokens_per_s",
    "accept_length",
    "server_info",
    "total_input_text_tokens",
    "mean_e2e_latency_ms",
)
DETAIL_KEYS = ("input_lens", "output_lens", "ttfts", "itls", "generated_texts", "errors", "cached_tokens")


def _is_result(doc) -> bool:
    return (
        isinstance(doc, dict)
        and "model_id" not in doc
        and isinstance(doc.get("backend"), str)
        and "completed" in doc
        and ("mean_ttft_ms" in doc or "median_ttft_ms" in doc)
        and sum(k in doc for k in MARKERS) >= 2
    )


class _Importer:
    name = NAME
    #: the formats it reads, in words (for refusals that list what was considered)
    label = "SGLang bench_serving --output-file JSON Lines"
    #: keys only its result lines have (a file holding one is refused when not read, never skipped)
    signature = (
        "total_output_tokens_retokenized",
        "total_output_retokenized",
        "max_output_tokens_per_s",
        "total_input_text_tokens",
        "mean_e2e_latency_ms",
        "median_e2e_latency_ms",
    )
    #: keys its result line opens with, before any figure: two of them claim a file cut short
    early_keys = (
        "backend",
        "dataset_name",
        "request_rate",
        "max_concurrency",
        "sharegpt_output_len",
        "random_input_len",
        "random_output_len",
        "random_range_ratio",
    )
    nonstandard_json = True  # `request_rate: Infinity`

    def recognise(self, doc, path):
        if _is_result(doc) or (isinstance(doc, list) and doc and all(_is_result(d) for d in doc)):
            return "results"
        return None

    def import_files(self, files: list[SourceFile], manifests: list) -> ImportOutcome:
        """Every line of every file a run (a file written by several invocations holds several)."""
        outcome = ImportOutcome()
        drafts = []
        for source in files:
            lines = source.doc if isinstance(source.doc, list) else [source.doc]
            for i, line in enumerate(lines):
                where = f"$[{i}]" if isinstance(source.doc, list) else "$"
                suffix = f"line{i + 1:03d}" if len(lines) > 1 else None
                draft = draft_or_refuse(
                    outcome, source, "SGLang bench_serving result", _draft, source, line, where, suffix
                )
                if draft is None:
                    continue
                if len(lines) > 1:
                    draft.notes.append(f"line {i + 1} of {len(lines)} of this file (each run appends one line)")
                drafts.append(draft)
        return finish(drafts, manifests, NAME, outcome)


def _model(doc: dict) -> str | None:
    """The served model as SGLang's `/server_info` names it (absent when the server is not SGLang)."""
    info = doc.get("server_info")
    if isinstance(info, dict) and "decode" in info and isinstance(info["decode"], list) and info["decode"]:
        info = info["decode"][0]  # prefill/decode disaggregation: the decode server's config
    if not isinstance(info, dict):
        return None
    for key in ("served_model_name", "model_path"):
        if isinstance(info.get(key), str) and info[key].strip():
            return info[key].strip()
    return None


def _workload_suffix(doc: dict) -> str:
    rate = doc.get("request_rate")
    if rate == "trace":
        return "-trace"
    rate = num(rate)
    return f"-{rate:g}rps" if rate is not None else ""


def _draft(source: SourceFile, doc, where: str, suffix: str | None) -> Draft:
    """One run from one result line: figures, requests, the cache report, and what the line says of itself."""
    doc = expect_dict(doc, where, "an SGLang result line")
    d = Draft(source, {"name": HARNESS_NAME}, source_format="sglang bench_serving result", load=_load(doc))
    d.suffix = suffix
    d.model = _model(doc)
    d.model_where = "SGLang server_info model"
    d.warmup_excluded = True
    d.assumptions.append(
        "warm-up excluded: bench_serving sends its warm-up requests (--warmup-requests, "
        "default 1) before the timed run and keeps them out of the file"
    )
    conc = positive_int(doc.get("max_concurrency"))
    wl = _workload_suffix(doc)
    completed = expect_count(doc.get("completed"), f"{where}.completed", "the count of successful requests")
    n = completed or None
    d.measurements = _measurements(doc, wl, conc, n)
    d.requests = _requests(doc, where, wl, conc, d)
    _cache_report(doc, d)
    if d.requests and completed is not None:  # SGLang's count against its own records (a figure check)
        d.checks.append(
            Check(
                "SGLang's completed count",
                wl,
                conc,
                "requests",
                "count",
                float(completed),
                float(successful_count(d.requests)),
                "request records without an error",
            )
        )
    failed = sum(1 for r in d.requests if r.get("finish_reason") == "error")
    total_out = first(count(doc.get("total_output_tokens")), count(doc.get("total_output")))
    d.notes.append(
        ", ".join(
            str(x)
            for x in (
                f"SGLang bench_serving result: backend {doc.get('backend')}",
                f"dataset {doc.get('dataset_name')}",
                f"request rate {doc.get('request_rate')}",
                f"max concurrency {doc.get('max_concurrency')}",
                f"{completed} completed"
                + (f", {failed} failed" if d.requests else " (failed count not saved without --output-details)"),
                f"{total_out} output tokens",
            )
        )
    )
    if conc is None:
        d.notes.append("no --max-concurrency was set, so the measurements carry no concurrency")
    return d


def _load(doc: dict) -> dict:
    """What the line says was sent: the API (from the client backend), the dataset, the random
    lengths asked for (SGLang draws each in [len * range_ratio, len]: benchmark/datasets
    compute_random_lens), the arrival (an infinite rate is a closed loop; a finite one Poisson).
    Streaming, ignore_eos (on by default), the prompt count and the seed are not written."""
    rate = num(doc.get("request_rate"))
    load = {
        "endpoint": BACKEND_ENDPOINTS.get(
            str(doc.get("backend")), doc.get("backend") if isinstance(doc.get("backend"), str) else None
        ),
        "dataset": doc.get("dataset_name") if isinstance(doc.get("dataset_name"), str) else None,
        "arrival": "concurrent" if rate is None else "poisson",
        "rate": rate,
    }
    ratio = num(doc.get("random_range_ratio"))
    for key, name in (("random_input_len", "prompt_tokens"), ("random_output_len", "output_tokens")):
        n = num(doc.get(key))
        if n is not None and str(load["dataset"] or "").startswith("random"):
            load[name] = token_target(
                None if ratio not in (None, 1.0) else n,
                None,
                n * ratio if ratio is not None else None,
                n if ratio is not None else None,
            )
    if count(doc.get("sharegpt_output_len")):
        load["output_tokens"] = token_target(doc["sharegpt_output_len"])
    return load


def _measurements(doc: dict, wl: str, conc: int | None, n: int | None) -> list[dict]:
    """SGLang's own summary figures (already in ms and tok/s), each with n = completed requests."""
    out = []
    for sname, metric in METRICS.items():
        for prefix, stat in STATS.items():
            m = measurement(wl, conc, metric, doc.get(f"{prefix}_{sname}_ms"), "ms", stat, n)
            if m:
                out.append(m)
    for m in (
        measurement(wl, conc, "output_tok_s", doc.get("output_throughput"), "tok/s", "mean", n),
        measurement(wl, conc, "request_rate", doc.get("request_throughput"), "req/s", "mean", n),
    ):
        if m:
            out.append(m)
    tpot = num(doc.get("mean_tpot_ms"))
    if tpot and tpot > 0:
        out.append(measurement(wl, conc, "decode_tok_s_per_stream", 1000.0 / tpot, "tok/s", "mean", n))
    return out


def _detail_lists(doc: dict, where: str) -> dict[str, list] | None:
    """The `--output-details` arrays, all of one length (None when the line has none)."""
    lists = {k: doc[k] for k in DETAIL_KEYS if k in doc and doc[k] is not None}
    if not any(k in lists for k in ("ttfts", "output_lens", "errors")):
        return None
    size = len(
        expect_list(
            lists.get("errors", lists.get("ttfts", lists.get("output_lens"))),
            f"{where}.errors",
            "the per-request errors",
        )
    )
    for k, v in lists.items():
        expect_list(v, f"{where}.{k}", f"{k}, one entry per request", size)
    return lists


def _requests(doc: dict, where: str, wl: str, conc: int | None, d: Draft) -> list[dict]:
    """The `--output-details` arrays as request records (none without them), with what had to be assumed."""
    lists = _detail_lists(doc, where)
    if lists is None:
        return []
    if "errors" not in lists and count(doc.get("completed")) != len(next(iter(lists.values()))):
        d.notes.append("per-request arrays without errors while some requests failed: requests not imported")
        return []
    if "itls" in lists and "ttfts" in lists:
        d.assumptions.append(
            "per-request end-to-end latency computed as TTFT + the sum of inter-token gaps "
            "(SGLang saves no per-request latency)"
        )
    if str(doc.get("backend", "")).endswith("-chat") and "output_lens" in lists:
        d.assumptions.append(
            f"output tokens of backend {doc.get('backend')} are SGLang's output_lens, which are "
            "the requested lengths unless the server streams a usage count"
        )
    return [_request(lists, i, f"{where}", wl, conc) for i in range(len(next(iter(lists.values()))))]


def _request(lists: dict, i: int, where: str, wl: str, conc: int | None) -> dict:
    """One request from index i of the arrays; a failed one keeps its error and prompt length only
    (SGLang leaves placeholder zeros in its other slots)."""
    r: dict = {"workload": wl}
    if conc is not None:
        r["concurrency"] = conc
    if "input_lens" in lists:
        r["prompt_tokens"] = expect_count(lists["input_lens"][i], f"{where}.input_lens[{i}]", "a prompt length")
    error = lists["errors"][i] if "errors" in lists else ""
    if isinstance(error, str) and error.strip():
        r["finish_reason"] = "error"
        r["error"] = short_text(error) or "failed"
        return r
    if "output_lens" in lists:
        r["output_tokens"] = expect_count(lists["output_lens"][i], f"{where}.output_lens[{i}]", "an output length")
    ttft = None
    if "ttfts" in lists:
        ttft = expect_number(lists["ttfts"][i], f"{where}.ttfts[{i}]", "a TTFT in seconds")
        r["ttft_ms"] = ttft * 1000.0
    if "itls" in lists:
        gaps = expect_list(lists["itls"][i], f"{where}.itls[{i}]", "the inter-token gaps of a request")
        gaps = [expect_number(g, f"{where}.itls[{i}][{j}]", "a gap in seconds") for j, g in enumerate(gaps)]
        if gaps:
            r["itl_ms"] = mean(gaps) * 1000.0
        if ttft is not None:
            r["e2e_latency_ms"] = (ttft + sum(gaps)) * 1000.0
    text = lists["generated_texts"][i] if "generated_texts" in lists else None
    if isinstance(text, str):
        r["content_chars"] = len(text)
    if "cached_tokens" in lists:
        cached = expect_count(
            lists["cached_tokens"][i], f"{where}.cached_tokens[{i}]", "a cached token count", optional=True
        )
        if cached is not None and (r.get("prompt_tokens") is None or cached <= r["prompt_tokens"]):
            r["cached_prompt_tokens"] = cached
    return r


def _cache_report(doc: dict, d: Draft) -> None:
    """`--cache-report`: the totals go to the notes; cache hits without per-request counts mark the
    TTFT figures as not from fresh prompts (the prefix-cache trap reads that)."""
    report = doc.get("cache_report")
    if not isinstance(report, dict):
        return
    cached, total = count(report.get("total_cached_tokens")), count(report.get("total_prompt_tokens"))
    d.notes.append(
        f"SGLang cache report: {cached} of {total} prompt tokens served from the prefix cache "
        f"({report.get('cache_hit_rate_pct')}%)"
    )
    has_requests = any("cached_prompt_tokens" in r for r in d.requests)
    if cached and not has_requests:
        for m in d.measurements:
            if m["metric"] == "ttft_ms":
                m["fresh_prompt"] = False


IMPORTER = _Importer()
