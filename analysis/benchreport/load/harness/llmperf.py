"""ray-project/llmperf `token_benchmark_ray.py` results: `*_summary.json` + `*_individual_responses.json`.

What llmperf writes into `--results-dir` (token_benchmark_ray.py `run_token_benchmark`, summary
format `version` "2023-08-31"): `<model>_<mean-in>_<mean-out>_summary.json`, one flat object:
the set-up (`model`, `mean_input_tokens`, `stddev_input_tokens`, `mean_output_tokens`,
`stddev_output_tokens`, `num_concurrent_requests`, `additional_sampling_params_*`),
`results_<metric>_quantiles_p{25,50,75,90,95,99}` and `results_<metric>_{mean,min,max,stddev}`
for `ttft_s`, `inter_token_latency_s`, `end_to_end_latency_s` (SECONDS),
`request_output_throughput_token_per_s`, `number_input_tokens`, `number_output_tokens`, and the
totals `results_num_requests_started`, `results_num_completed_requests`, `results_number_errors`,
`results_error_rate`, `results_error_code_frequency` (a Python dict repr as a string),
`results_mean_output_throughput_token_per_s` (all output tokens / test time),
`results_num_completed_requests_per_min`, `timestamp` (epoch seconds). The stddev of a single
value is the bare token `NaN` (Python's json.dumps: not valid JSON). And
`<...>_individual_responses.json`: one record per completed request (`error_code`, `error_msg`,
`ttft_s`, `inter_token_latency_s` (the request's mean gap), `end_to_end_latency_s`,
`request_output_throughput_token_per_s`, `number_input_tokens`, `number_output_tokens` (the
answer re-tokenised by the client: reasoning not counted)); no start times.

Failed requests are lost: a request that fails returns an empty answer, the client's token
count divides by zero and the worker thread dies, so the files hold only what completed before
that (the run ends short; the error counts stay at 0). The importer says so in every run's notes.
"""

from __future__ import annotations

import ast
import math
import re

from benchreport.load.harness import ImportOutcome, SourceFile
from benchreport.load.harness._checks import draft_or_refuse, expect_count, expect_dict, expect_list, expect_number
from benchreport.load.harness._common import (
    Check,
    Draft,
    count,
    count_only_requests,
    failed_from_counts,
    finish,
    iso_from_epoch,
    measurement,
    positive_int,
    short_text,
    skip,
    successful_count,
    token_target,
)

NAME = "llmperf"
HARNESS_NAME = "llmperf"
#: summary suffix -> native statistic
STATS = {
    "mean": "mean",
    "quantiles_p50": "p50",
    "quantiles_p90": "p90",
    "quantiles_p95": "p95",
    "quantiles_p99": "p99",
    "min": "min",
    "max": "max",
}
#: llmperf metric (seconds) -> native metric (ms)
TIMES = {"ttft_s": "ttft_ms", "inter_token_latency_s": "itl_ms", "end_to_end_latency_s": "e2e_latency_ms"}
SUMMARY_TAIL = "_summary.json"
RESPONSES_TAIL = "_individual_responses.json"
LOST_FAILURES = (
    "llmperf loses failed requests: a failed request ends its worker thread (an empty answer divides "
    "by zero in token_benchmark_ray.py), so failures never reach these files and the run stops short; "
    "the error counts here are not all the errors (look for 'Client Error' in its console output)"
)


def _is_summary(doc) -> bool:
    return (
        isinstance(doc, dict)
        and "results_ttft_s_mean" in doc
        and ("num_concurrent_requests" in doc or "results_num_completed_requests" in doc)
    )


def _is_summary_map(doc) -> bool:
    """A wrapper's file of llmperf summaries keyed by their concurrency ({"1": {...}, "2": {...}}, as
    philschmid/llmperf-bench writes `<model>_results.json`)."""
    return (
        isinstance(doc, dict)
        and bool(doc)
        and len(doc) <= 1000
        and all(isinstance(v, dict) and _is_summary(v) for v in doc.values())
    )


def _is_response(r) -> bool:
    return isinstance(r, dict) and "ttft_s" in r and "end_to_end_latency_s" in r and "error_code" in r


def _is_responses(doc, path) -> bool:
    if isinstance(doc, list) and not doc:
        return path.name.endswith(RESPONSES_TAIL)  # no completed request at all
    return isinstance(doc, list) and all(_is_response(r) for r in doc)


class _Importer:
    name = NAME
    #: the formats it reads, in words (for refusals that list what was considered)
    label = "llmperf *_summary.json and *_individual_responses.json"
    #: keys only its files have (a file holding one is refused when not read, never skipped), and
    #: the names of its files
    signature = (
        "results_ttft_s_mean",
        "results_num_completed_requests",
        "num_concurrent_requests",
        "end_to_end_latency_s",
        "inter_token_latency_s",
        "ttft_s",
    )
    result_names = re.compile(r"(?:_summary|_individual_responses)\.json$")
    nonstandard_json = True  # `NaN` stddevs

    def recognise(self, doc, path):
        return "results" if _is_summary(doc) or _is_summary_map(doc) or _is_responses(doc, path) else None

    def import_files(self, files: list[SourceFile], manifests: list) -> ImportOutcome:
        """A run per summary with its responses file; responses without a summary skipped."""
        outcome = ImportOutcome()
        maps = [s for s in files if _is_summary_map(s.doc)]
        summaries = [s for s in files if _is_summary(s.doc)]
        responses = [s for s in files if s not in summaries and s not in maps]
        drafts = []
        for s in maps:
            for key, one in s.doc.items():
                d = draft_or_refuse(outcome, s, "llmperf summary", _draft_of, s, one, f"$[{key!r}]", None)
                if d is not None:
                    d.suffix = f"c{key}"[:24]
                    d.notes.append(
                        f"one of {len(s.doc)} llmperf summaries this file keeps by key (this one "
                        f"at key {key!r}); no per-request file"
                    )
                    drafts.append(d)
        for s in summaries:
            pair = _pair(s, responses, summaries)
            if pair is not None:
                responses.remove(pair)
            d = draft_or_refuse(outcome, s, "llmperf summary", _draft, s, pair)
            if d is not None:
                drafts.append(d)
        for s in responses:
            skip(
                outcome,
                s,
                "llmperf per-request responses without their *_summary.json beside them: the run's "
                "model, date and concurrency are only in the summary, so they are not read",
            )
        return finish(drafts, manifests, NAME, outcome)


def _stem(path) -> str:
    name = path.name
    for tail in (SUMMARY_TAIL, RESPONSES_TAIL, ".json"):
        if name.endswith(tail):
            return name[: -len(tail)]
    return name


def _pair(summary: SourceFile, responses: list[SourceFile], summaries: list[SourceFile]) -> SourceFile | None:
    """The responses file of a summary: same folder and name stem; else, in a folder of one summary,
    its only responses file; else the one responses file of the same stem in a sibling folder (the
    llmperf leaderboard keeps `raw_data/summary/<run>.json` beside `raw_data/individual/<run>.json`)."""
    here = [r for r in responses if r.path.parent == summary.path.parent]
    if summary.path.name.endswith(SUMMARY_TAIL):
        stem = summary.path.name[: -len(SUMMARY_TAIL)]
        named = [r for r in here if r.path.name == stem + RESPONSES_TAIL]
        if named:
            return named[0]
    alone = sum(s.path.parent == summary.path.parent for s in summaries) == 1
    if alone and len(here) == 1:
        return here[0]
    stem = _stem(summary.path)
    sibling = [
        r
        for r in responses
        if r.path.parent != summary.path.parent
        and r.path.parent.parent == summary.path.parent.parent
        and _stem(r.path) == stem
    ]
    same_stem = [s for s in summaries if s.path.parent.parent == summary.path.parent.parent and _stem(s.path) == stem]
    return sibling[0] if len(sibling) == 1 and len(same_stem) == 1 else None


def _draft(source: SourceFile, responses: SourceFile | None) -> Draft:
    """One run from a summary and, when beside it, its per-request responses."""
    return _draft_of(source, source.doc, "$", responses)


def _draft_of(source: SourceFile, doc: dict, where: str, responses: SourceFile | None) -> Draft:
    """One run from a summary `doc` (the file's whole document, or one at `where` in it)."""
    d = Draft(source, {"name": HARNESS_NAME}, source_format="llmperf results")
    if isinstance(doc.get("version"), str):
        d.harness["version"] = f"results format {doc['version']}"
    d.load = _load(doc)
    d.model = doc.get("model") if isinstance(doc.get("model"), str) and doc["model"].strip() else None
    d.model_where = "llmperf model"
    t = expect_number(doc.get("timestamp"), f"{where}.timestamp", "the run's epoch time in seconds", optional=True)
    if t:
        d.date, d.timestamp = iso_from_epoch(t), t
    conc = positive_int(doc.get("num_concurrent_requests"))
    n = expect_count(
        doc.get("results_num_completed_requests"),
        f"{where}.results_num_completed_requests",
        "the count of completed requests",
        optional=True,
    )
    _measurements(doc, conc, n or None, d, where)
    if responses is not None:
        d.extra_paths.append(responses.path)
        d.requests = [
            _request(r, f"$[{i}]", conc)
            for i, r in enumerate(expect_list(responses.doc, "$", "llmperf's per-request responses"))
        ]
        d.notes.append(
            f"per-request records read from {responses.path.name}"
            + (
                ""
                if responses.path.parent == source.path.parent
                else f" in the sibling folder {responses.path.parent.name}/"
            )
        )
        _no_content(d)
        _check_counts(doc, conc, d)
    else:
        _stated_requests(doc, conc, d)
    _notes(doc, d)
    return d


def error_codes(freq) -> list[tuple[str, int]]:
    """llmperf's `results_error_code_frequency` (the repr of a Python dict, e.g. "{429.0: 130}" or
    "{'429': 3, 500: 1}"; a dict where a tool re-wrote it) as [(code, count)], codes as written
    without a float's '.0'. Anything that is not such a mapping gives []."""
    if isinstance(freq, str):
        try:
            freq = ast.literal_eval(freq.strip()[:10_000] or "{}")
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            pairs = re.findall(r"""['"]?([^'",:{}\s]+)['"]?\s*:\s*(\d+)""", freq)
            freq = {k: int(v) for k, v in pairs}
    if not isinstance(freq, dict):
        return []
    out = []
    for code, n in freq.items():
        n = count(n)
        if n is None or n == 0:
            continue
        if isinstance(code, float) and code.is_integer():
            code = int(code)
        out.append((short_text(str(code), 40) or "?", n))
    return out


def _stated_requests(doc: dict, conc: int | None, d: Draft) -> None:
    """Without the per-request file (absent, or renamed as leaderboards do), what the summary
    states of its requests: as many request rows without timings as it says completed and failed,
    the failed ones with their HTTP codes, so a run that states 130 of 150 failed is never clean.
    The failed count is `results_number_errors`, else `results_error_rate` x the requests started."""
    started = count(doc.get("results_num_requests_started"))
    completed = count(doc.get("results_num_completed_requests"))
    errors = count(doc.get("results_number_errors"))
    rate = doc.get("results_error_rate")
    if (
        errors is None
        and started
        and isinstance(rate, (int, float))
        and not isinstance(rate, bool)
        and math.isfinite(rate)
        and 0 <= rate <= 1
    ):
        errors = round(rate * started)
    if completed is None and started is not None and errors is not None:
        completed = max(0, started - errors)
    if completed is None and errors is None:
        return
    codes = [
        (f"HTTP {code}" if code.isdigit() else f"error {code}", n)
        for code, n in error_codes(doc.get("results_error_code_frequency"))
    ]
    d.requests = failed_from_counts(codes, errors, "", conc)[: errors if errors is not None else None]
    d.requests += count_only_requests(completed or 0, "", conc)
    failed = len(d.requests) - (completed or 0)
    d.notes.append(
        f"no per-request file beside this summary: its request counts are read as stated "
        f"({completed or 0} completed, {failed} failed), as rows without timings"
    )


def _check_counts(doc: dict, conc: int | None, d: Draft) -> None:
    """The summary's counts and `results_error_rate` against the responses file; and the requests
    llmperf must have sent against the records (issue 26). Each of its `num_concurrent_requests`
    worker threads sends at least one request, so a run with fewer records than threads lost
    requests (a failure kills its thread before it is written); the count asked
    (`--max-num-completed-requests`) is not in the files."""
    against = "llmperf's summary"
    n_rec = len(d.requests)
    ok = successful_count(d.requests)
    for key, metric, ours, basis in (
        ("results_num_requests_started", "total", n_rec, "response records"),
        ("results_num_completed_requests", "requests", ok, "response records without an error"),
        ("results_number_errors", "failed", n_rec - ok, "response records with an error"),
    ):
        theirs = count(doc.get(key))
        if theirs is not None:
            d.checks.append(Check(against, "", conc, metric, "count", float(theirs), float(ours), basis, field=key))
    rate = doc.get("results_error_rate")
    rate = rate if isinstance(rate, (int, float)) and not isinstance(rate, bool) and math.isfinite(rate) else None
    if rate is not None and n_rec:
        d.checks.append(
            Check(
                against,
                "",
                conc,
                "error_rate",
                "share",
                float(rate),
                (n_rec - ok) / n_rec,
                f"{n_rec - ok} of {n_rec} response records failed",
                field="results_error_rate",
                of=n_rec,
            )
        )
    if conc:
        d.checks.append(
            Check(
                against,
                "",
                conc,
                "sent",
                "count",
                float(conc),
                float(n_rec),
                f"response records; one per worker thread, `num_concurrent_requests` {conc}",
                field="num_concurrent_requests",
                at_least=True,
            )
        )


def _load(doc: dict) -> dict:
    """What the summary says was sent: the prompt and output length asked (mean, spread; the output
    as `max_tokens`), the concurrency's closed loop, and the flattened `--additional-sampling-params`
    (`additional_sampling_params_<key>`: ignore_eos, temperature, ...). llmperf always streams chat
    completions (`--llm-api openai`); the API is not written, nor the request count."""
    params = {
        k[len("additional_sampling_params_") :]: v
        for k, v in doc.items()
        if isinstance(k, str) and k.startswith("additional_sampling_params_") and isinstance(v, (int, float, str, bool))
    }
    load = {
        "prompt_tokens": token_target(doc.get("mean_input_tokens"), doc.get("stddev_input_tokens")),
        "output_tokens": token_target(doc.get("mean_output_tokens"), doc.get("stddev_output_tokens")),
        "streaming": True,
        "arrival": "concurrent",
        "sampling": {k: v for k, v in params.items() if k not in ("ignore_eos", "max_tokens")} or None,
    }
    if isinstance(params.get("ignore_eos"), bool):
        load["fixed_output"] = params["ignore_eos"]
    return load


def _measurements(doc: dict, conc: int | None, n: int | None, d: Draft, where: str = "$") -> None:
    """llmperf's summary statistics (seconds -> ms); NaN statistics are left out."""
    for key, metric in TIMES.items():
        for suffix, stat in STATS.items():
            v = doc.get(f"results_{key}_{suffix}")
            if isinstance(v, float) and math.isnan(v):
                continue  # a statistic llmperf could not compute (written as NaN)
            v = expect_number(v, f"{where}.results_{key}_{suffix}", f"llmperf's {suffix} of {key}", optional=True)
            if v is not None:
                d.measurements.append(measurement("", conc, metric, v * 1000.0, "ms", stat, n))
    for key, metric, unit, factor in (
        ("results_mean_output_throughput_token_per_s", "output_tok_s", "tok/s", 1.0),
        ("results_num_completed_requests_per_min", "request_rate", "req/s", 1 / 60),
    ):
        v = expect_number(doc.get(key), f"{where}.{key}", key, optional=True)
        if v is not None:
            d.measurements.append(measurement("", conc, metric, v * factor, unit, "mean", n))


def _request(r, where: str, conc: int | None) -> dict:
    """One per-request response (seconds -> ms); an error record keeps only its error."""
    r = expect_dict(r, where, "a per-request response")
    out: dict = {"workload": ""}
    if conc is not None:
        out["concurrency"] = conc
    if r.get("error_code") is not None:
        msg = r.get("error_msg")
        out.update(
            finish_reason="error",
            error=short_text(f"HTTP {r['error_code']}: {msg}" if msg else f"HTTP {r['error_code']}") or "failed",
        )
        return out
    for key, field in (("number_input_tokens", "prompt_tokens"), ("number_output_tokens", "output_tokens")):
        v = expect_count(r.get(key), f"{where}.{key}", f"a token count ({key})", optional=True)
        if v is not None:
            out[field] = v
    for key, field in TIMES.items():
        v = expect_number(r.get(key), f"{where}.{key}", f"the request's {key}", optional=True)
        if v is not None:
            out[field] = v * 1000.0
    if out.get("ttft_ms") == 0.0:
        # llmperf times the first chunk that carries content and leaves 0 when none did: no first
        # token was timed (an answer that was all reasoning), so neither TTFT nor ITL is a time
        out.pop("ttft_ms")
        out.pop("itl_ms", None)
        out["content_chars"] = 0
    return out


def _no_content(d: Draft) -> None:
    """Say how many successful answers carried no content token (llmperf's TTFT 0)."""
    empty = sum(1 for r in d.requests if r.get("content_chars") == 0)
    if empty:
        d.assumptions.append(
            f"{empty} of {len(d.requests)} answers carried no content token (llmperf's TTFT 0: it "
            "times the first chunk with content and saw none, as an answer that was all reasoning "
            "does): their TTFT and ITL are left out of our figures, not counted as 0; llmperf's "
            "own means include them as 0"
        )


def _notes(doc: dict, d: Draft) -> None:
    """What the counts say, that llmperf loses failed requests, and the NaN it wrote."""
    codes = dict(error_codes(doc.get("results_error_code_frequency")))
    d.notes.append(
        f"llmperf run: {doc.get('results_num_requests_started')} requests started, "
        f"{doc.get('results_num_completed_requests')} completed, {doc.get('results_number_errors')} errors"
        + (f" (HTTP {', '.join(f'{c}: {k}' for c, k in codes.items())})" if codes else "")
    )
    d.notes.append(LOST_FAILURES)
    if any(isinstance(v, float) and math.isnan(v) for v in doc.values()):
        d.notes.append(
            "the summary holds NaN (llmperf's standard deviation of a single value, not valid JSON): read as missing"
        )
    d.assumptions.append(
        "output tokens are llmperf's count of the answer re-tokenised by the client (reasoning tokens not counted)"
    )
    if count(doc.get("results_num_requests_started")) == 0:
        d.notes.append("no request completed")


IMPORTER = _Importer()
