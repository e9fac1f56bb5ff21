"""kubernetes-sigs inference-perf report folders (`reports-*/`), one invocation a run.

What inference-perf writes (inference_perf/reportgen, 0.7): into `storage.local_storage.path`
- `summary_lifecycle_metrics.json`: the whole run; `stage_N_lifecycle_metrics.json`: one per
  load stage (a stage is one concurrency or rate of the sweep, not a repetition). Each holds
  `load_summary.count` (requests sent), `successes` {count, latency {time_to_first_token,
  inter_token_latency (all gaps pooled), time_per_output_token, request_latency, ...: each
  {mean, min, max, median, p0.1 ... p99.9} in SECONDS}, throughput {output_tokens_per_sec,
  requests_per_sec, ...}, prompt_tokens {total, cached, ...}, output_tokens {total, ...}} and
  `failures` {count, by_label {label: {count, messages}}}. With several stages the summary
  pools them (and the pauses between them), so it is not a measurement of any one load.
- `per_request_lifecycle_metrics.json` (report.request_lifecycle.per_request): one record a
  request, in send order: `start_time`/`end_time` (seconds, monotonic clock), `request` and
  `response` (the raw SSE text) as strings, `info.response_metrics` {output_tokens (client
  count), server_usage (the server's usage object: prompt_tokens_details.cached_tokens,
  completion_tokens_details.reasoning_tokens), output_token_times (seconds)} (null when the
  request failed), `computed_metrics`, and `error` {error_type, error_msg} or null. Records
  carry no stage: stages run one after the other, so the first `load_summary.count` records
  (in send order) are stage 0, the next stage 1's, and so on.
- beside them, not read (each skipped with its reason): `adapter_<name>_lifecycle_metrics.json` and
  `adapter_<name>_stage_N_lifecycle_metrics.json` (report.request_lifecycle.per_adapter[_stage]: the
  requests of one LoRA adapter), `summary_prometheus_metrics.json` / `stage_N_prometheus_metrics.json`
  (report.prometheus: the model server's own metrics, a lifecycle-shaped summary with an empty
  load_summary), `summary_session_lifecycle_metrics.json`, `stage_N_session_lifecycle_metrics.json`
  and `per_session_lifecycle_metrics.json` (report.session_lifecycle: multi-turn sessions).
- set-up and twins, none with results: `config.yaml` (the effective config: `load.type`,
  `load.stages[N]` {concurrency_level | rate}, `server.model_name`, `data.type`),
  `inference-perf.partial.stage_N.yaml` (the stage report again in the llm-d benchmark-report
  schema, with the stage's UTC `run.time.start`), `validation.json` (the tool's self-checks).
The JSON reports carry no date, model or load: those come from the YAML files beside them.
"""

from __future__ import annotations

import json
import re

from benchreport.load.harness import ImportOutcome, SourceFile
from benchreport.load.harness._checks import (
    draft_or_refuse,
    expect_count,
    expect_dict,
    expect_list,
    expect_number,
    safe_yaml,
)
from benchreport.load.harness._common import (
    Draft,
    count,
    dig,
    epoch_from_iso,
    first,
    finish,
    iso_from_epoch,
    mean,
    measurement,
    num,
    positive_int,
    short_text,
    skip,
    token_target,
)

NAME = "inference-perf"
HARNESS_NAME = "inference-perf"
#: lifecycle distribution key -> native statistic
STATS = {"mean": "mean", "median": "p50", "p90": "p90", "p95": "p95", "p99": "p99", "min": "min", "max": "max"}
#: successes.latency key -> native metric (seconds -> ms)
LATENCIES = {"time_to_first_token": "ttft_ms", "inter_token_latency": "itl_ms", "request_latency": "e2e_latency_ms"}
CONFIG_KEYS = (b"api", b"data", b"load", b"metrics", b"report", b"storage", b"server", b"tokenizer")
STAGE_FILE = re.compile(r"(?:^|_)stage_(\d+)_lifecycle_metrics\.json$")
SUMMARY_FILE = re.compile(r"(?:^|_)summary_lifecycle_metrics\.json$")
#: report.request_lifecycle.per_adapter / per_adapter_stage: the requests of one LoRA adapter
ADAPTER_FILE = re.compile(r"^adapter_(.+?)(?:_stage_(\d+))?_lifecycle_metrics\.json$")
#: report.prometheus: the model server's own metrics over the run or a stage (ResponsesSummary with
#: an empty load_summary and failures)
PROMETHEUS_FILE = re.compile(r"^(?:summary|stage_(\d+))_prometheus_metrics\.json$")
#: report.session_lifecycle: multi-turn sessions (summary, per stage, per session)
SESSION_KEYS = ("num_sessions", "num_sessions_succeeded", "num_sessions_failed")


# --- recognising --------------------------------------------------------------------------


def _is_lifecycle(doc) -> bool:
    return (
        isinstance(doc, dict) and isinstance(doc.get("load_summary"), dict) and isinstance(doc.get("successes"), dict)
    )


def _is_record(r) -> bool:
    return (
        isinstance(r, dict)
        and "start_time" in r
        and "end_time" in r
        and isinstance(r.get("info"), dict)
        and ("computed_metrics" in r or "error" in r)
    )


def _is_per_request(doc) -> bool:
    return isinstance(doc, list) and bool(doc) and all(_is_record(r) for r in doc)


def _is_prometheus(doc, name: str = "") -> bool:
    """A Prometheus metrics report: by its name, or a lifecycle-shaped summary whose load summary and
    failures are empty and whose successes hold server-side gauges."""
    if PROMETHEUS_FILE.match(name):
        return True
    return (
        _is_lifecycle(doc)
        and doc.get("load_summary") == {}
        and doc.get("failures") in ({}, None)
        and any(k in doc["successes"] for k in ("kv_cache_usage_percentage", "num_requests_running", "queue_len"))
    )


def _is_session_report(doc) -> bool:
    """A session lifecycle report: a summary (or stage summary) of sessions, or the per-session list."""
    if isinstance(doc, dict):
        return sum(k in doc for k in SESSION_KEYS) >= 2
    return (
        isinstance(doc, list)
        and bool(doc)
        and all(isinstance(r, dict) and "session_id" in r and "num_events" in r and "duration_sec" in r for r in doc)
    )


def _is_validation(doc) -> bool:
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("global"), dict)
        and isinstance(doc.get("reports"), dict)
        and "warnings" in doc["global"]
    )


def _yaml_kind(doc) -> str | None:
    return doc.get("inference_perf_yaml") if isinstance(doc, dict) else None


class _Importer:
    name = NAME
    #: the formats it reads, in words (for refusals that list what was considered)
    label = "inference-perf lifecycle reports (summary, stage_N, per-request)"
    #: keys only its reports have (a file holding one is refused when not read, never skipped), and
    #: the names of its reports
    signature = ("load_summary",)
    result_names = re.compile(f"{STAGE_FILE.pattern}|{SUMMARY_FILE.pattern}")

    def recognise(self, doc, path):
        if (
            _is_lifecycle(doc)
            or _is_per_request(doc)
            or _is_validation(doc)
            or _yaml_kind(doc)
            or _is_session_report(doc)
        ):
            return "results"  # side files are sorted and skipped, each with its reason, in import_files
        return None

    def recognise_text(self, head: bytes, path):
        if path.suffix.lower() not in (".yaml", ".yml"):
            return None  # its console log prints the config too, but is no YAML file
        if re.search(rb"^version:", head, re.M) and re.search(rb"^run:", head, re.M) and b"inference-perf" in head:
            return "results"  # inference-perf.partial.stage_N.yaml
        tops = sum(bool(re.search(rb"^" + k + rb":\s*$", head, re.M)) for k in CONFIG_KEYS)
        return "results" if tops >= 4 and re.search(rb"^load:\s*$", head, re.M) else None

    def parse_text(self, data: bytes, path) -> dict:
        try:
            doc = safe_yaml(data)
        except ValueError as exc:  # a set-up file, not a result: skipped with the reason, never refused
            return {"inference_perf_yaml": "unreadable", "error": str(exc)}
        kind = "stage_report" if isinstance(doc, dict) and isinstance(doc.get("run"), dict) else "config"
        return {"inference_perf_yaml": kind, "doc": doc}

    def import_files(self, files: list[SourceFile], manifests: list) -> ImportOutcome:
        outcome = ImportOutcome()
        folders: dict = {}
        for s in files:
            folders.setdefault(s.path.parent, []).append(s)
        drafts = [d for group in folders.values() if (d := _folder(outcome, group)) is not None]
        return finish(drafts, manifests, NAME, outcome)


# --- one report folder --------------------------------------------------------------------


class _Folder:
    """The files of one report folder, by role."""

    def __init__(self, files: list[SourceFile]):
        self.summary = self.config = self.records = self.validation = None
        self.stages: dict[int, SourceFile] = {}
        self.stage_yaml: dict[int, SourceFile] = {}
        self.other: list[SourceFile] = []
        #: reports beside the lifecycle ones, each with why it is not read
        self.aside: list[tuple[SourceFile, str]] = []
        for s in files:
            self._place(s)

    def _place(self, s: SourceFile) -> None:
        """File one source under its role in the folder (by content; stage numbers from the file names)."""
        kind = _yaml_kind(s.doc)
        stage = STAGE_FILE.search(s.path.name)
        adapter = ADAPTER_FILE.match(s.path.name)
        if adapter:
            where = f"stage {adapter.group(2)}" if adapter.group(2) is not None else "the whole run"
            self.aside.append(
                (
                    s,
                    f"inference-perf per-adapter report (LoRA adapter '{adapter.group(1)[:60]}', "
                    f"{where}): a subset of the requests the stage reports and the per-request "
                    "records already hold; not read",
                )
            )
        elif _is_prometheus(s.doc, s.path.name):
            m = PROMETHEUS_FILE.match(s.path.name)
            where = f"stage {m.group(1)}" if m and m.group(1) is not None else "the run"
            self.aside.append(
                (
                    s,
                    f"inference-perf Prometheus report: the model server's own metrics over {where} "
                    "(server-side queue, cache and latency gauges), not the client's measurements; "
                    "not read",
                )
            )
        elif _is_session_report(s.doc):
            self.aside.append(
                (
                    s,
                    "inference-perf session report (multi-turn sessions: per-session durations, "
                    "event and token totals); the sessions' requests are read from the lifecycle "
                    "reports and the per-request records; not read",
                )
            )
        elif kind == "unreadable":
            self.other.append(s)
        elif kind == "config":
            self.config = s
        elif kind == "stage_report":
            m = re.search(r"stage_(\d+)", s.path.name)
            self.stage_yaml[int(m.group(1)) if m else len(self.stage_yaml)] = s
        elif _is_validation(s.doc):
            self.validation = s
        elif _is_per_request(s.doc):
            self.records = s
        elif stage and int(stage.group(1)) not in self.stages:
            self.stages[int(stage.group(1))] = s
        elif SUMMARY_FILE.search(s.path.name) and self.summary is None:
            self.summary = s
        else:
            self.other.append(s)


def _folder(outcome: ImportOutcome, files: list[SourceFile]) -> Draft | None:
    """The run of one report folder (None when it holds no lifecycle report), its side files skipped."""
    f = _Folder(files)
    reports = dict(sorted(f.stages.items())) or ({0: f.summary} if f.summary else {})
    if not reports and f.other:
        reports = {0: f.other.pop(0)}
    if not reports:
        aside = dict((id(s), r) for s, r in f.aside)
        for s in files:  # set-up files or records without any report: nothing to measure
            skip(
                outcome,
                s,
                aside.get(id(s))
                or "inference-perf file without its lifecycle reports beside it (no results of its own)",
            )
        return None
    main = reports[min(reports)]
    draft = draft_or_refuse(outcome, main, "inference-perf report", _draft, main, f, reports)
    if draft is not None:
        _skip_side_files(outcome, f, reports, draft)
    return draft


def _skip_side_files(outcome: ImportOutcome, f: _Folder, reports: dict, d: Draft) -> None:
    """List the folder's files that are not results, each with why (and record them for the manifest)."""
    n = len(reports)
    side = []
    if f.summary and f.stages:
        side.append(
            (
                f.summary,
                "inference-perf summary of a one-stage run: the same figures as its stage_0 report, "
                "read once from there"
                if n == 1
                else f"inference-perf summary pooling all {n} stages of the run (each stage, a load of its "
                "own, is read from its stage_N report)",
            )
        )
    if f.config:
        side.append((f.config, "inference-perf config (no results; read for the stages' load and the model)"))
    for i, s in f.stage_yaml.items():
        side.append(
            (
                s,
                f"inference-perf stage {i} report in the llm-d benchmark-report schema: a twin of "
                f"stage_{i}_lifecycle_metrics.json (read for the stage's start time)",
            )
        )
    if f.validation:
        side.append((f.validation, "inference-perf self-checks (no results; their warnings are in the run's notes)"))
    for s in f.other:
        if _yaml_kind(s.doc) == "unreadable":
            side.append((s, f"inference-perf YAML set-up file that could not be read ({s.doc['error']}): no results"))
        else:
            side.append(
                (
                    s,
                    "inference-perf lifecycle report that is neither the summary nor a stage report "
                    "(e.g. per adapter): not read, the stage reports are",
                )
            )
    side += f.aside
    for s, reason in side:
        skip(outcome, s, reason)
        d.extra_paths.append(s.path)
    if f.records is not None:
        d.extra_paths.append(f.records.path)


def _draft(main: SourceFile, f: _Folder, reports: dict) -> Draft:
    """One run: a workload per stage from its stage report, the records assigned to their stages."""
    config = f.config.doc["doc"] if f.config else {}
    config = config if isinstance(config, dict) else {}
    d = Draft(main, {"name": HARNESS_NAME}, source_format="inference-perf reports", load=_load(config))
    d.model = _model(config, f.records)
    d.model_where = "inference-perf server model"
    d.config.update(_config(config))
    d.date, d.timestamp = _start(f.stage_yaml)
    loads = _stage_loads(config, sorted(reports), f.summary is reports.get(0) and len(_config_stages(config)) > 1, d)
    for i, source in reports.items():
        wl, conc = loads[i]
        n = _stage_measurements(source.doc, f"{source.path.name}", wl, conc, d)
        d.notes.append(
            f"stage {i} ({_load_words(wl, conc)}): {n} successful of "
            f"{dig(source.doc, 'load_summary', 'count')} requests, "
            f"{dig(source.doc, 'failures', 'count')} failed"
        )
    if f.records is not None:
        d.requests = _requests(f.records.doc, reports, loads, d)
    _validation_notes(f.validation, d)
    return d


def _config_stages(config: dict) -> list:
    stages = dig(config, "load", "stages")
    return stages if isinstance(stages, list) else []


def _stage_loads(config: dict, indices: list[int], pooled: bool, d: Draft) -> dict[int, tuple[str, int | None]]:
    """{stage: (workload suffix, concurrency)} from `load.type` and `load.stages[N]`."""
    kind = str(dig(config, "load", "type") or "")
    stages = _config_stages(config)
    out: dict[int, tuple[str, int | None]] = {}
    for i in indices:
        st = stages[i] if i < len(stages) and isinstance(stages[i], dict) else {}
        if pooled:
            wl, conc = "-all-stages", None
        elif kind == "concurrent" and positive_int(st.get("concurrency_level")):
            wl, conc = "", positive_int(st.get("concurrency_level"))
        elif kind in ("constant", "poisson") and num(st.get("rate")) is not None:
            wl, conc = f"-{kind}-{num(st.get('rate')):g}rps", None
        else:
            wl, conc = f"-stage{i}", None
        if (wl, conc) in out.values():
            wl += f"-stage{i}"
        out[i] = (wl, conc)
    if not config:
        d.notes.append("no config.yaml beside the reports: each stage is its own workload, without concurrency")
    elif pooled:
        d.notes.append("only the summary over several stages was written (per_stage off): read as one pooled load")
    return out


def _load_words(wl: str, conc: int | None) -> str:
    return f"concurrency {conc}" if conc else (wl.lstrip("-") or "unstated load")


def _distribution(dist) -> dict:
    """inference-perf's `{min, max, mean, std_dev}` as a token target."""
    if not isinstance(dist, dict):
        return {}
    return token_target(dist.get("mean"), dist.get("std_dev"), dist.get("min"), dist.get("max"))


def _load(config: dict) -> dict:
    """What config.yaml says was sent: `api.type` and `api.streaming`, `data.type` with its input and
    output distributions (or the shared-prefix shape: system prompt + question -> output),
    `server.ignore_eos`, `load.type` (concurrent, constant, poisson) and `load.base_seed`."""
    data = config.get("data") if isinstance(config.get("data"), dict) else {}
    sp = data.get("shared_prefix") if isinstance(data.get("shared_prefix"), dict) else {}
    load = {
        "endpoint": dig(config, "api", "type"),
        "dataset": data.get("type"),
        "streaming": dig(config, "api", "streaming") if isinstance(dig(config, "api", "streaming"), bool) else None,
        "prompt_tokens": _distribution(data.get("input_distribution")),
        "output_tokens": _distribution(data.get("output_distribution")),
        "fixed_output": dig(config, "server", "ignore_eos")
        if isinstance(dig(config, "server", "ignore_eos"), bool)
        else None,
        "arrival": dig(config, "load", "type"),
        "seed": count(dig(config, "load", "base_seed")),
    }
    if sp:
        load["prefix_tokens"] = count(sp.get("system_prompt_len"))
        load["prompt_tokens"] = token_target(sp.get("question_len"))
        load["output_tokens"] = token_target(sp.get("output_len"))
        shape = {
            k: v
            for k, v in sp.items()
            if k in ("num_unique_system_prompts", "num_users_per_system_prompt") and isinstance(v, (int, float))
        }
        load["extra"] = shape or None
    if not isinstance(load["dataset"], str):
        load["dataset"] = None
    if not isinstance(load["endpoint"], str):
        load["endpoint"] = None
    if not isinstance(load["arrival"], str):
        load["arrival"] = None
    return load


#: `server.type` values that say nothing of the engine: `vllm` is the default every effective config
#: writes whether or not the user chose it, `mock` is inference-perf's own stand-in
SERVER_TYPE_DEFAULTS = ("vllm", "mock")


def _config(config: dict) -> dict:
    """The seat's configuration the config records: `server.type` (the model server benchmarked,
    sglang or tgi) as the engine; the default `vllm` is no evidence and is left out."""
    kind = dig(config, "server", "type")
    if isinstance(kind, str) and kind.strip() and kind.strip().lower() not in SERVER_TYPE_DEFAULTS:
        return {"engine": kind.strip()[:40]}
    return {}


def _model(config: dict, records: SourceFile | None) -> str | None:
    """The served model: config.yaml's `server.model_name`, else the `model` of the requests' bodies."""
    name = dig(config, "server", "model_name")
    if isinstance(name, str) and name.strip():
        return name.strip()
    if records is not None:
        for r in records.doc[:50]:
            try:
                body = json.loads(r.get("request")) if isinstance(r.get("request"), str) else None
            except ValueError:
                body = None
            if isinstance(body, dict) and isinstance(body.get("model"), str) and body["model"].strip():
                return body["model"].strip()
    return None


def _start(stage_yaml: dict) -> tuple[str | None, float | None]:
    """The run's start: the earliest stage start of the llm-d stage reports (UTC)."""
    times = [
        epoch_from_iso(dig(s.doc, "doc", "run", "time", "start"))
        for s in stage_yaml.values()
        if isinstance(dig(s.doc, "doc", "run", "time", "start"), str)
    ]
    times = [t for t in times if t is not None]
    return (iso_from_epoch(min(times)), min(times)) if times else (None, None)


def _stage_measurements(doc: dict, where: str, wl: str, conc: int | None, d: Draft) -> int | None:
    """A stage's figures: latency distributions (s -> ms), throughputs; n = successful requests."""
    ok = expect_dict(doc.get("successes"), "$.successes", "the successful requests' figures")
    n = expect_count(ok.get("count"), "$.successes.count", "the count of successful requests")
    latency = expect_dict(ok.get("latency") or {}, "$.successes.latency", "latency distributions")
    for key, metric in LATENCIES.items():
        dist = latency.get(key)
        if dist is None:
            continue
        dist = expect_dict(dist, f"$.successes.latency.{key}", "a distribution {mean, median, p90, ...}")
        for k, stat in STATS.items():
            if dist.get(k) is not None:
                v = expect_number(dist[k], f"$.successes.latency.{key}.{k}", f"the {k} of {key} in seconds")
                d.measurements.append(measurement(wl, conc, metric, v * 1000.0, "ms", stat, n or None))
    tpot = num(dig(latency, "time_per_output_token", "mean"))
    if tpot and tpot > 0:
        d.measurements.append(measurement(wl, conc, "decode_tok_s_per_stream", 1.0 / tpot, "tok/s", "mean", n or None))
    for key, metric, unit in (
        ("output_tokens_per_sec", "output_tok_s", "tok/s"),
        ("requests_per_sec", "request_rate", "req/s"),
    ):
        v = dig(ok, "throughput", key)
        if v is not None:
            v = expect_number(v, f"$.successes.throughput.{key}", key)
            d.measurements.append(measurement(wl, conc, metric, v, unit, "mean", n or None))
    cached, total = num(dig(ok, "prompt_tokens", "cached")), num(dig(ok, "prompt_tokens", "total"))
    if cached and total:
        d.notes.append(f"{cached:g} of {total:g} prompt tokens of {_load_words(wl, conc)} served from the prefix cache")
    return n


# --- per-request records ------------------------------------------------------------------


def _requests(doc, reports: dict, loads: dict, d: Draft) -> list[dict]:
    """The records, each with the load of the stage it belongs to (by send order and stage counts)."""
    recs = expect_list(doc, "$", "inference-perf per-request records")
    starts = [
        expect_number(r.get("start_time"), f"$[{i}].start_time", "a start time in seconds") for i, r in enumerate(recs)
    ]
    order = sorted(range(len(recs)), key=lambda i: starts[i])
    counts = [count(dig(reports[i].doc, "load_summary", "count")) for i in sorted(reports)]
    if None in counts or sum(counts) != len(recs):
        d.notes.append(
            f"{len(recs)} per-request records do not add up to the stages' request counts {counts}: "
            "requests not imported"
        )
        return []
    stage_of = {}
    pos = 0
    for i, c in zip(sorted(reports), counts):
        for j in order[pos : pos + c]:
            stage_of[j] = i
        pos += c
    t0 = min(starts)
    out = []
    for j in range(len(recs)):
        wl, conc = loads[stage_of[j]]
        out.append(_request(expect_dict(recs[j], f"$[{j}]", "a request record"), f"$[{j}]", t0, wl, conc))
    if len(reports) > 1:
        d.notes.append("per-request records assigned to stages in send order by the stages' request counts")
    return out


def _request(r: dict, where: str, t0: float, wl: str, conc: int | None) -> dict:
    """One request record: send time, error or token counts, times and answer lengths."""
    start = expect_number(r["start_time"], f"{where}.start_time", "a start time in seconds")
    out: dict = {"workload": wl, "start_ms": (start - t0) * 1000.0}
    if conc is not None:
        out["concurrency"] = conc
    if r.get("error") is not None:
        out.update(finish_reason="error", error=_error_text(r["error"]))
        return out
    end = expect_number(r["end_time"], f"{where}.end_time", "an end time in seconds")
    metrics = expect_dict(
        dig(r, "info", "response_metrics"),
        f"{where}.info.response_metrics",
        "the response metrics of a successful request",
    )
    usage = metrics.get("server_usage") if isinstance(metrics.get("server_usage"), dict) else {}
    _tokens(out, usage, metrics, r, where)
    _times(out, metrics.get("output_token_times"), start, end, r, where)
    _sse(out, r.get("response"))
    return out


def _tokens(out: dict, usage: dict, metrics: dict, r: dict, where: str) -> None:
    """Token counts: the server's usage where it sent one (reasoning included), else the client's."""
    prompt = first(count(usage.get("prompt_tokens")), count(dig(r, "info", "request_metrics", "text", "input_tokens")))
    if prompt is not None:
        out["prompt_tokens"] = prompt
    completion = first(
        count(usage.get("completion_tokens")),
        expect_count(
            metrics.get("output_tokens"),
            f"{where}.info.response_metrics.output_tokens",
            "an output token count",
            optional=True,
        ),
    )
    if completion is not None:
        out["output_tokens"] = completion
    cached = count(dig(usage, "prompt_tokens_details", "cached_tokens"))
    if cached is not None and (prompt is None or cached <= prompt):
        out["cached_prompt_tokens"] = cached
    reasoning = count(dig(usage, "completion_tokens_details", "reasoning_tokens"))
    if reasoning is not None:
        out["reasoning_tokens"] = reasoning


def _times(out: dict, times, start: float, end: float, r: dict, where: str) -> None:
    """TTFT, mean ITL and end-to-end latency from `output_token_times` (seconds on the same clock)."""
    if times is not None:
        times = expect_list(times, f"{where}.info.response_metrics.output_token_times", "token times in seconds")
        times = [
            expect_number(t, f"{where}.info.response_metrics.output_token_times[{k}]", "a time in seconds")
            for k, t in enumerate(times)
        ]
    if times:
        out["ttft_ms"] = max(times[0] - start, 0.0) * 1000.0
        if len(times) > 1:
            out["itl_ms"] = mean(b - a for a, b in zip(times, times[1:])) * 1000.0
    else:
        cm = r.get("computed_metrics") if isinstance(r.get("computed_metrics"), dict) else {}
        for key, field in (("time_to_first_token", "ttft_ms"), ("inter_token_latency", "itl_ms")):
            if num(cm.get(key)) is not None:
                out[field] = num(cm[key]) * 1000.0
    if end >= start:
        out["e2e_latency_ms"] = (end - start) * 1000.0


def _sse(out: dict, response) -> None:
    """Answer and reasoning lengths and the finish reason from the raw SSE text, when it was kept."""
    if not isinstance(response, str) or "data:" not in response:
        return
    content = reasoning = 0
    reason = None
    for line in response.splitlines():
        if not line.startswith("data:") or line.strip() == "data: [DONE]":
            continue
        try:
            chunk = json.loads(line[5:])
        except ValueError:
            continue
        choice = dig(chunk, "choices", 0)
        if not isinstance(choice, dict):
            continue
        delta = choice.get("delta") if isinstance(choice.get("delta"), dict) else {}
        content += len(first(delta.get("content"), choice.get("text")) or "")
        reasoning += len(first(delta.get("reasoning_content"), delta.get("reasoning")) or "")
        reason = choice.get("finish_reason") or reason
    out["content_chars"] = content
    if reasoning:
        out["reasoning_chars"] = reasoning
    if isinstance(reason, str) and reason in ("stop", "length"):
        out["finish_reason"] = reason


def _error_text(error) -> str:
    """`error_type: message`, the message taken out of the server's JSON body when it is one."""
    if not isinstance(error, dict):
        return short_text(error) or "failed"
    msg = error.get("error_msg")
    try:
        body = json.loads(msg) if isinstance(msg, str) else None
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        msg = body["message"]
    kind = error.get("error_type")
    return short_text(f"{kind}: {msg}" if kind and msg else (kind or msg)) or "failed"


def _validation_notes(source: SourceFile | None, d: Draft) -> None:
    if source is None:
        return
    reports = source.doc.get("reports") if isinstance(source.doc.get("reports"), dict) else {}
    found = {
        (w.get("severity"), w.get("message"))
        for rep in reports.values()
        if isinstance(rep, dict)
        for w in (rep.get("warnings") or []) + (rep.get("errors") or [])
        if isinstance(w, dict)
    }
    if found:
        d.notes.append("inference-perf self-checks: " + "; ".join(f"{s}: {m}" for s, m in sorted(found, key=str))[:600])


IMPORTER = _Importer()
