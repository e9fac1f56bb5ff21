"""GuideLLM benchmarks report (`benchmarks.json`; the YAML/CSV/HTML twins are not read).

What GuideLLM writes (src/guidellm/benchmark/schemas/report.py, benchmark.py, metrics.py,
src/guidellm/schemas/request_stats.py, statistics.py):
- v0.7+ : `metadata` {version: 2, guidellm_version}, `config` (the scenario), `benchmarks[]`;
  v0.4-0.6: `args` (+ `metadata` version 1 from v0.5), `benchmarks[]`;
  v0.2-0.3: `benchmarks[]` only, each with `args`, `run_stats`, `worker.backend_model`.
- each benchmark: the strategy (`config.strategy`, or `args.strategy` before v0.4) with
  `type_` synchronous / concurrent (`streams`) / throughput / constant / poisson (`rate`);
  `metrics.<name>.{successful,errored,incomplete,total}` distribution summaries
  {mean, median, percentiles.p50..p99, count, and from v0.8 `mean_ci`, `percentile_cis`};
  `time_to_first_token_ms`, `inter_token_latency_ms` (token-weighted over requests),
  `request_latency` (SECONDS), `output_tokens_per_second` and `requests_per_second`
  (time-weighted rates whose mean is total / measured window);
  `requests.{successful,errored,incomplete}[]` per request with `prompt_tokens`,
  `cached_tokens` (v0.7+), `output_tokens` (all delivered, from the server's usage),
  `request_latency` (s), `time_to_first_token_ms`, `inter_token_latency_ms`, `output`,
  `reasoning_output` (v0.7+), `info.timings`, `info.error`.
- from v0.4 the request lists hold every request, including warm-up/cool-down ones; the
  metrics use only those overlapping [`scheduler_metrics.measure_start_time`,
  `measure_end_time`], and so do we.
One report is one GuideLLM invocation: one run, its benchmarks being the concurrencies/rates.
"""

from __future__ import annotations

import re

from benchreport.load.errors import Refusal
from benchreport.load.harness import ImportOutcome, SourceFile, describe
from benchreport.load.harness._common import (
    Check,
    Draft,
    count,
    count_only_requests,
    dig,
    epoch_seconds,
    finish,
    first,
    guarded,
    iso_from_epoch,
    num,
    positive_int,
    short_text,
    token_target,
)

NAME = "guidellm"
STATS = (("mean", "mean"), ("median", "p50"), ("p90", "p90"), ("p95", "p95"), ("p99", "p99"))
#: GuideLLM metric -> (native metric, unit, factor to the native unit)
LATENCIES = {
    "time_to_first_token_ms": ("ttft_ms", "ms", 1.0),
    "inter_token_latency_ms": ("itl_ms", "ms", 1.0),
    "request_latency": ("e2e_latency_ms", "ms", 1000.0),
}


def _benchmarks(doc):
    b = doc.get("benchmarks") if isinstance(doc, dict) else None
    return b if isinstance(b, list) else None


def _is_benchmark(b) -> bool:
    """A benchmark with results: GuideLLM's metrics (a `generative_benchmark` without them is broken)."""
    return (
        isinstance(b, dict)
        and isinstance(b.get("metrics"), dict)
        and any(k in b["metrics"] for k in ("time_to_first_token_ms", "requests_per_second", "request_latency"))
    )


def _is_report(doc) -> bool:
    """GuideLLM's own markers: `metadata.guidellm_version` (0.6+) or a benchmark typed
    `generative_benchmark` in the `benchmarks` list."""
    benches = _benchmarks(doc)
    if benches is None:
        return False
    return isinstance(dig(doc, "metadata", "guidellm_version"), str) or any(
        isinstance(b, dict) and b.get("type_") == "generative_benchmark" for b in benches
    )


class _Importer:
    name = NAME
    label = "GuideLLM 0.3-0.8 benchmarks report"
    #: keys only its report has (a file holding one is refused when not read, never skipped), and its
    #: default output name
    signature = ("guidellm_version", "time_to_first_token_ms", "inter_token_latency_ms", "time_per_output_token_ms")
    result_names = re.compile(r"^benchmarks\.json$")
    #: keys its report opens with, before any figure: two of them claim a file cut short
    early_keys = ("benchmarks", "type_", "id_", "run_id", "run_stats", "request_loader")

    def recognise(self, doc, path):
        benches = _benchmarks(doc)
        if benches is None:
            return None
        if benches and all(_is_benchmark(b) for b in benches):
            return "results"
        if not _is_report(doc):
            return None
        return "results" if benches else "auxiliary"  # broken benchmarks are refused in import_files

    def skip_reason(self, doc, path):
        return "GuideLLM report with no benchmarks (the run ended before any benchmark completed)"

    def import_files(self, files: list[SourceFile], manifests: list) -> ImportOutcome:
        outcome = ImportOutcome()
        drafts = []
        for s in files:
            bad = next((i for i, b in enumerate(_benchmarks(s.doc)) if not _is_benchmark(b)), None)
            if bad is not None:
                outcome.refused.append(
                    Refusal(
                        s.display,
                        f"$.benchmarks[{bad}]",
                        (
                            "expected a GuideLLM benchmark with metrics (time_to_first_token_ms, requests_per_second, "
                            f"...), found {describe(_benchmarks(s.doc)[bad])}"
                        )[:600],
                    )
                )
                continue
            d = guarded(outcome, s, "GuideLLM report", _draft, s)
            if d is not None:
                drafts.append(d)
        return finish(drafts, manifests, NAME, outcome)


def _strategy(b: dict) -> dict:
    s = dig(b, "config", "strategy")
    if not isinstance(s, dict):
        s = dig(b, "args", "strategy")
    return s if isinstance(s, dict) else {}


def strategy_cell(strategy: dict) -> tuple[str, int | None]:
    """(workload suffix, concurrency) of a benchmark's strategy (the oracle tests name cells by it too)."""
    kind = str(strategy.get("type_") or strategy.get("type") or "")
    if kind == "synchronous":
        return "", 1
    if kind == "concurrent":
        return "", positive_int(strategy.get("streams"))
    if kind == "throughput":
        return "-throughput", positive_int(strategy.get("max_concurrency"))
    rate = num(strategy.get("rate"))
    if kind in ("constant", "poisson", "async") and rate is not None:
        return f"-{kind}-{rate:g}rps", None
    return (f"-{kind}" if kind else "-unknown"), None


def _model(doc: dict, benches: list) -> str | None:
    for path in (("config", "backend", "model"),):
        for b in benches:
            v = dig(b, *path)
            if isinstance(v, str) and v:
                return v
    for path in (
        ("config", "spec", "backend", "model"),
        ("config", "backend", "model"),
        ("config", "backend_kwargs", "model"),
        ("config", "model"),
        ("args", "model"),
        ("args", "backend_kwargs", "model"),
    ):
        v = dig(doc, *path)
        if isinstance(v, str) and v:
            return v
    for b in benches:
        v = dig(b, "worker", "backend_model")
        if isinstance(v, str) and v:
            return v
    return None


def _data_spec(doc: dict) -> dict:
    """The first data source as a dict: v0.7+ `config.spec.data[0]`; v0.4-0.6 `args.data[0]`, a
    'prompt_tokens=32,output_tokens=16' string (read into numbers) or a dataset name."""
    data = dig(doc, "config", "spec", "data")
    if data is None:
        data = first(dig(doc, "config", "data"), dig(doc, "args", "data"))
    if isinstance(data, list):
        data = data[0] if data else None
    if isinstance(data, dict):
        return data
    if isinstance(data, str) and data:
        pairs = [p.partition("=") for p in data.split(",")]
        if all(sep and k.strip() for k, sep, _ in pairs):
            return {
                "kind": "synthetic_text",
                **{k.strip(): (num(_number(v)) if _number(v) is not None else v.strip()) for k, _, v in pairs},
            }
        return {"kind": data[:200]}
    return {}


def _number(text: str):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def _load(doc: dict) -> dict:
    """What the run sent (docs/importers.md): endpoint, streaming, data source and token targets
    (GuideLLM sends ignore_eos whenever an output length is asked: v0.7+ request handlers), the
    cap when none is, arrival, request limit and seed."""
    spec = dig(doc, "config", "spec")
    spec = spec if isinstance(spec, dict) else {}
    args = doc.get("args") if isinstance(doc.get("args"), dict) else {}
    backend = spec.get("backend") if isinstance(spec.get("backend"), dict) else {}
    data = _data_spec(doc)
    kind = data.get("kind")
    load = {
        "endpoint": first(
            backend.get("request_format"),
            dig(args, "backend_kwargs", "request_format"),
            args.get("data_request_formatter"),
        ),
        "streaming": backend.get("stream") if isinstance(backend.get("stream"), bool) else None,
        "dataset": (kind if kind != "synthetic_text" else "synthetic") if isinstance(kind, str) else None,
        "prompt_tokens": token_target(
            data.get("prompt_tokens"),
            data.get("prompt_tokens_stdev"),
            data.get("prompt_tokens_min"),
            data.get("prompt_tokens_max"),
        ),
        "output_tokens": token_target(
            data.get("output_tokens"),
            data.get("output_tokens_stdev"),
            data.get("output_tokens_min"),
            data.get("output_tokens_max"),
        ),
        "prefix_tokens": count(first(dig(data, "prefix_buckets", 0, "prefix_tokens"), data.get("prefix_tokens"))),
        "arrival": first(
            dig(spec, "profile", "kind"), args.get("profile") if isinstance(args.get("profile"), str) else None
        ),
        "requests": positive_int(first(_constraint(spec, "max_requests"), args.get("max_requests"))),
        "duration_s": num(first(_constraint(spec, "max_duration"), args.get("max_seconds"))),
        "seed": count(first(dig(spec, "seed", "value"), args.get("random_seed"))),
    }
    if spec and load["output_tokens"]:
        load["fixed_output"] = True
    cap = positive_int(backend.get("max_tokens"))
    if cap is not None and not load["output_tokens"]:
        load["max_tokens"] = cap
    body = dig(backend, "extras", "body")
    if isinstance(body, dict):
        load["sampling"] = {k: v for k, v in body.items() if isinstance(v, (int, float, str, bool))} or None
    return load


def _constraint(spec: dict, kind: str):
    for c in spec.get("constraints") or ():
        if isinstance(c, dict) and c.get("kind") == kind:
            return first(c.get("count"), c.get("duration"), c.get("value"))
    return None


def _start(b: dict) -> float | None:
    for path in (
        ("scheduler_metrics", "request_start_time"),
        ("start_time",),
        ("run_stats", "start_time"),
        ("scheduler_metrics", "start_time"),
    ):
        t = epoch_seconds(dig(b, *path))
        if t is not None:
            return t
    return None


def _warmup(b: dict) -> bool | None:
    cfg = dig(b, "config", "warmup")
    if isinstance(cfg, dict):
        if (num(cfg.get("percent")) or 0) > 0 or (num(cfg.get("value")) or 0) > 0:
            return True
        ms, rs = (
            num(dig(b, "scheduler_metrics", "measure_start_time")),
            num(dig(b, "scheduler_metrics", "request_start_time")),
        )
        if ms is not None and rs is not None and ms > rs + 1e-6:
            return True
        return False
    args = b.get("args")
    if isinstance(args, dict) and ("warmup_number" in args or "warmup_duration" in args):
        return bool(args.get("warmup_number") or args.get("warmup_duration"))
    return None


def _draft(source: SourceFile) -> Draft:
    doc = source.doc
    benches = _benchmarks(doc) or []
    version = dig(doc, "metadata", "guidellm_version")
    harness = {"name": "guidellm"}
    if isinstance(version, str) and version:
        harness["version"] = version[:40]
    d = Draft(source, harness, source_format="guidellm benchmarks report", load=_load(doc))
    d.model = _model(doc, benches)
    d.model_where = "backend model"
    starts = [t for t in (_start(b) for b in benches) if t is not None]
    if starts:
        d.timestamp = min(starts)
        d.date = iso_from_epoch(d.timestamp)
    warm = [_warmup(b) for b in benches]
    if any(w is True for w in warm):
        d.warmup_excluded = True
    elif warm and all(w is False for w in warm):
        d.warmup_excluded = False
    described = []
    for i, b in enumerate(benches):
        strategy = _strategy(b)
        wl, conc = strategy_cell(strategy)
        described.append(f"{strategy.get('type_', '?')}" + (f"@{conc}" if conc else wl))
        level = num(dig(b, "config", "confidence"))
        _measurements(d, b, wl, conc, level)
        _requests(d, b, wl, conc, i)
    d.notes.append(f"GuideLLM report with {len(benches)} benchmark(s): " + ", ".join(described))
    return d


def _measurements(d: Draft, b: dict, wl: str, conc: int | None, level: float | None) -> None:
    metrics = b.get("metrics") if isinstance(b.get("metrics"), dict) else {}
    for name, (metric, unit, factor) in LATENCIES.items():
        dist = dig(metrics, name, "successful")
        if not isinstance(dist, dict):
            continue
        n = positive_int(dist.get("count"))
        for key, stat in STATS:
            value = num(dist.get(key)) if key in ("mean", "median") else num(dig(dist, "percentiles", key))
            if value is None:
                continue
            m = {"workload": wl, "metric": metric, "value": value * factor, "unit": unit, "statistic": stat}
            if conc is not None:
                m["concurrency"] = conc
            if n:
                m["n"] = n
            ci = dist.get("mean_ci") if key == "mean" else dig(dist, "percentile_cis", stat)
            lo, hi = num(dig(ci, "lower")), num(dig(ci, "upper"))
            if lo is not None and hi is not None and lo <= hi and level and 0 < level < 1:
                m.update(ci_low=lo * factor, ci_high=hi * factor, ci_level=level)
            d.measurements.append(m)
    for name, metric, unit in (
        ("output_tokens_per_second", "output_tok_s", "tok/s"),
        ("requests_per_second", "request_rate", "req/s"),
    ):
        value = num(dig(metrics, name, "successful", "mean"))
        if value is not None:
            m = {"workload": wl, "metric": metric, "value": value, "unit": unit, "statistic": "mean"}
            if conc is not None:
                m["concurrency"] = conc
            d.measurements.append(m)
    itl = num(dig(metrics, "inter_token_latency_ms", "successful", "mean"))
    if itl and itl > 0:
        m = {
            "workload": wl,
            "metric": "decode_tok_s_per_stream",
            "value": 1000.0 / itl,
            "unit": "tok/s",
            "statistic": "mean",
        }
        if conc is not None:
            m["concurrency"] = conc
        d.measurements.append(m)


def _window(b: dict) -> tuple[float | None, float | None]:
    sm = b.get("scheduler_metrics") if isinstance(b.get("scheduler_metrics"), dict) else {}
    return num(sm.get("measure_start_time")), num(sm.get("measure_end_time"))


def _times(r: dict) -> tuple[float | None, float | None]:
    start = num(r.get("request_start_time"))
    end = num(r.get("request_end_time"))
    if start is None:
        start = num(first(dig(r, "info", "timings", "request_start"), r.get("start_time")))
    if end is None:
        end = num(
            first(dig(r, "info", "timings", "request_end"), dig(r, "info", "timings", "resolve_end"), r.get("end_time"))
        )
    return start, end


def _requests(d: Draft, b: dict, wl: str, conc: int | None, index: int) -> None:
    """The benchmark's request records inside its measured window, each with its send time; the
    kept counts are then checked against GuideLLM's own `request_totals`."""
    groups = b.get("requests") if isinstance(b.get("requests"), dict) else {}
    lo, hi = _window(b)
    outside = 0
    kept = dict.fromkeys(STATUSES, 0)
    for status in STATUSES:
        items = groups.get(status)
        for r in items if isinstance(items, list) else ():
            if not isinstance(r, dict):
                continue
            start, end = _times(r)
            if lo is not None and hi is not None and end is not None:
                in_window = end >= lo and ((start is not None and start <= hi) or (start is None and end <= hi))
                if not in_window:
                    outside += 1
                    continue
            rec = _request(r, status, wl, conc)
            if start is not None and start >= 0:
                rec["start_ms"] = start * 1000.0  # epoch seconds: keeps the send order
            d.requests.append(rec)
            kept[status] += 1
    if outside:
        d.notes.append(
            f"benchmark {index + 1}: {outside} request(s) outside the measured window "
            "(warm-up/cool-down) left out, as GuideLLM's own metrics do"
        )
    _check_totals(d, b, kept, outside, wl, conc, index)


#: GuideLLM's request statuses, as its report lists them
STATUSES = ("successful", "errored", "incomplete")


def _check_totals(d: Draft, b: dict, kept: dict, outside: int, wl: str, conc: int | None, index: int) -> None:
    """Kept records against `request_totals` (under `metrics` from v0.4, beside them before).

    A report that keeps only a sample of the requests (`sample_size`/`sample_requests`) lists
    fewer records than its totals: the missing ones become records without timings, so the
    share of failed requests is GuideLLM's, not the sample's. Otherwise the counts are a check
    (a note when they agree, `import.figure_mismatch` when not); not when records outside the
    measured window were left out, since releases differ in whether their totals count those."""
    totals = first(dig(b, "metrics", "request_totals"), b.get("request_totals"))
    if not isinstance(totals, dict):
        return
    want = {s: count(totals.get(s)) for s in STATUSES}
    missing = {s: (want[s] or 0) - kept[s] for s in STATUSES}
    against = "GuideLLM's request_totals"
    if outside:
        return  # whether the totals count the warm-up/cool-down requests differs between releases
    if any(m > 0 for m in missing.values()) and all(m >= 0 for m in missing.values()):
        _sampled(d, missing, kept, wl, conc, index)
        return
    for status, metric in (("successful", "requests"), ("errored", "failed")):
        if want[status] is not None:
            d.checks.append(
                Check(
                    against,
                    wl,
                    conc,
                    metric,
                    "count",
                    float(want[status]),
                    float(kept[status]),
                    "records kept in the measured window",
                )
            )


def _sampled(d: Draft, missing: dict, kept: dict, wl: str, conc: int | None, index: int) -> None:
    """Records without timings for the requests a sampled report counts but does not list."""
    d.requests += count_only_requests(missing["successful"], wl, conc)
    d.requests += count_only_requests(
        missing["errored"], wl, conc, "errored (counted by GuideLLM; its record was not kept in the report's sample)"
    )
    for _ in range(missing["incomplete"]):
        d.requests += [
            dict(
                r,
                finish_reason="incomplete",
                error="incomplete (counted by GuideLLM; its record was not kept in the report's sample)",
            )
            for r in count_only_requests(1, wl, conc)
        ]
    shown = ", ".join(f"{kept[s]} of {kept[s] + missing[s]} {s}" for s in STATUSES if kept[s] + missing[s])
    d.notes.append(
        f"benchmark {index + 1}: the report keeps a sample of its requests ({shown}; GuideLLM "
        "sample_size): request-level statistics are from that sample, and the requests it only "
        "counts are request rows without timings, so the failure share is GuideLLM's; GuideLLM's "
        "figures are over all its requests and are shown as printed, not checked against the sample"
    )


def _request(r: dict, status: str, wl: str, conc: int | None) -> dict:
    rec: dict = {"workload": wl}
    if conc is not None:
        rec["concurrency"] = conc
    prompt = count(first(r.get("prompt_tokens"), dig(r, "input_metrics", "text_tokens")))
    cached = count(first(r.get("cached_tokens"), dig(r, "input_metrics", "cached_tokens")))
    output = count(first(r.get("output_tokens"), dig(r, "output_metrics", "total_tokens")))
    reasoning = count(first(r.get("reasoning_tokens"), dig(r, "output_metrics", "reasoning_tokens")))
    if prompt is not None:
        rec["prompt_tokens"] = prompt
    if cached is not None and (prompt is None or cached <= prompt):
        rec["cached_prompt_tokens"] = cached
    if output is not None:
        rec["output_tokens"] = output
    if reasoning is not None and (output is None or reasoning <= output):
        rec["reasoning_tokens"] = reasoning
    if isinstance(r.get("output"), str):
        rec["content_chars"] = len(r["output"])
    if isinstance(r.get("reasoning_output"), str):
        rec["reasoning_chars"] = len(r["reasoning_output"])
    ttft = num(r.get("time_to_first_token_ms"))
    if ttft is not None and ttft >= 0:
        rec["ttft_ms"] = ttft
    first_output = num(r.get("time_to_first_output_token_ms"))  # 0.7+: the first content token
    if first_output is not None and first_output >= 0:
        rec["first_content_ms"] = first_output
    lat = num(r.get("request_latency"))
    if lat is not None and lat >= 0:
        rec["e2e_latency_ms"] = lat * 1000.0
    itl = num(r.get("inter_token_latency_ms"))
    if itl is not None and itl >= 0:
        rec["itl_ms"] = itl
    if status == "errored":
        rec["finish_reason"] = "error"
        rec["error"] = short_text(first(dig(r, "info", "error"), r.get("error"))) or "errored"
    elif status == "incomplete":
        rec["finish_reason"] = "incomplete"
        rec["error"] = "incomplete: cancelled when the benchmark ended"
    return rec


IMPORTER = _Importer()
