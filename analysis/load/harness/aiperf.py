"""NVIDIA AIPerf exports (and GenAI-Perf's `profile_export_genai_perf.json`, which shares the layout).

What AIPerf writes into an artifact folder (docs/reference/json-export-schema.md,
docs/tutorials/working-with-profile-exports.md, multi-run-confidence.md, multi-phase-workflows.md):
- `profile_export_aiperf.json`: one block per metric tag {unit, avg, min, max, p1..p99, std,
  count, sum} (`request_throughput`, `time_to_first_token`, `inter_token_latency`,
  `request_latency`, `output_token_throughput`, `output_token_throughput_per_user`, ...),
  plus `input_config`, `start_time`/`end_time`, `aiperf_version`, `schema_version`,
  `run_info` {trial, ...} (1.2+), `warmup_metrics` (1.4+, warm-up only: never read).
  GenAI-Perf's `profile_export_genai_perf.json` has the same metric blocks and `input_config`.
- `profile_export.jsonl`: one record a request {metadata {request_start_ns, request_end_ns,
  benchmark_phase "warmup"|"profiling", was_cancelled, ...}, metrics {tag: {value, unit}},
  error {code, type, message} | null}. Warm-up records are dropped here.
- twins and side files: `inputs.json`, `run_config.json`, `outputs.json`, `phase_manifest.json`,
  `phases/<phase>/profile_export_aiperf.json` (a phase-scoped copy; the warm-up phase is not a
  measurement), `profile_runs/run_NNNN/` (one folder a trial: each trial is a pass),
  `aggregate/profile_export_aiperf_aggregate.json` (mean and t-CI over the trials: it duplicates
  them, so it is skipped), `profile_export_aiperf_collated.json`, and GenAI-Perf's raw
  perf_analyzer `profile_export.json` (skipped: the summary is read instead).
The summary JSON and the records JSONL of one artifact folder are one run: aggregates from the
JSON, requests from the JSONL.
"""
from __future__ import annotations

import os
import re
from pathlib import PurePosixPath

from analysis.load.harness import ImportOutcome, SourceFile
from analysis.load.harness._common import (Draft, count, dig, epoch_from_iso, epoch_seconds, finish, first,
                                           guarded, iso_from_epoch, ms_factor, num, positive_int, rate_ok, short_text,
                                           skip, valid_iso)

NAME = "aiperf"
SUMMARY_TAGS = ("request_throughput", "time_to_first_token", "request_latency", "inter_token_latency",
                "output_token_throughput", "request_count", "output_sequence_length")
STATS = (("avg", "mean"), ("p50", "p50"), ("p90", "p90"), ("p95", "p95"), ("p99", "p99"))
LATENCIES = {"time_to_first_token": "ttft_ms", "inter_token_latency": "itl_ms", "request_latency": "e2e_latency_ms"}
CACHE_KEYS = ("usage_prompt_cache_read_tokens", "usage_prompt_cached_tokens", "usage_cached_tokens",
              "cached_tokens")
WARMUP_CLI = re.compile(r"--(warmup-request-count|warmup-duration|num-warmup-sessions|warmup-requests)\b")


# --- recognising --------------------------------------------------------------------------

def _block(v) -> bool:
    return isinstance(v, dict) and "unit" in v and ("avg" in v or "p50" in v)


def _is_summary(doc) -> bool:
    return (isinstance(doc, dict) and any(_block(doc.get(t)) for t in SUMMARY_TAGS)
            and any(k in doc for k in ("input_config", "aiperf_version", "schema_version", "benchmark_id")))


def _is_record(r) -> bool:
    return (isinstance(r, dict) and isinstance(r.get("metadata"), dict) and "metrics" in r
            and any(k in r["metadata"] for k in ("request_start_ns", "session_num", "benchmark_phase")))


def _is_records(doc) -> bool:
    return isinstance(doc, list) and bool(doc) and all(_is_record(r) for r in doc)


def _is_aggregate(doc) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("metadata"), dict) and isinstance(doc.get("metrics"), dict) \
        and ("aggregation_type" in doc["metadata"] or "num_profile_runs" in doc["metadata"])


def _is_collated(doc) -> bool:
    return isinstance(doc, dict) and "combined" in doc and "per_run" in doc


def _is_phase_manifest(doc) -> bool:
    phases = doc.get("phases") if isinstance(doc, dict) else None
    return isinstance(phases, list) and bool(phases) and all(
        isinstance(p, dict) and ("phase_kind" in p or "metrics_json" in p) for p in phases)


def _is_pa_raw(doc) -> bool:
    """perf_analyzer's raw export that GenAI-Perf summarises (its `profile_export.json`)."""
    exps = doc.get("experiments") if isinstance(doc, dict) else None
    return isinstance(exps, list) and bool(exps) and all(
        isinstance(e, dict) and ("requests" in e or "experiment" in e) for e in exps)


def _is_aux(doc) -> bool:
    if isinstance(doc, list):
        # gpu_telemetry_export.jsonl / server_metrics_export.jsonl: timestamped samples, no requests
        return bool(doc) and all(isinstance(x, dict) and "timestamp_ns" in x and any(
            k in x for k in ("telemetry_data", "gpu_uuid", "dcgm_url", "endpoint_url", "metrics")) for x in doc)
    if not isinstance(doc, dict):
        return False
    data = doc.get("data")
    if isinstance(data, list) and data and all(isinstance(x, dict) for x in data[:5]):
        if all("payloads" in x or "session_id" in x for x in data[:5]):
            return True  # inputs.json
        if all("response_text" in x for x in data[:5]):
            return True  # outputs.json
    if "benchmark_id" in doc and ("cfg" in doc or "artifact_dir" in doc):
        return True  # run_config.json
    if set(doc) and set(doc) <= {"ready", "was_cancelled", "partial"}:
        return True  # .aiperf_results_ready.json
    if "aiperf_version" in doc and not any(_block(v) for v in doc.values()):
        return True  # other AIPerf side files (telemetry, server metrics)
    return False


class _Importer:
    name = NAME

    def recognise(self, doc, path):
        if _is_summary(doc) or _is_records(doc):
            return "results"
        if _is_aggregate(doc) or _is_collated(doc) or _is_phase_manifest(doc) or _is_pa_raw(doc):
            return "results"  # read for context or skipped in import_files with the precise reason
        if _is_aux(doc):
            return "auxiliary"
        return None

    def import_files(self, files: list[SourceFile], manifests: list) -> ImportOutcome:
        outcome = ImportOutcome()
        phase_of: dict[str, tuple[str, str]] = {}
        summaries, records = [], []
        for s in files:
            doc = s.doc
            if _is_phase_manifest(doc):
                phase_of.update(_phase_map(s))
                skip(outcome, s, "AIPerf phase manifest (no results; used to tell the warm-up phase export "
                                 "from the profiling ones)")
            elif _is_aggregate(doc):
                skip(outcome, s, "AIPerf aggregate over trials (mean and CI of the per-trial figures): it "
                                 "duplicates its trials, which are read one by one as passes")
            elif _is_collated(doc):
                skip(outcome, s, "AIPerf collated export (per-request values of all trials pooled): it "
                                 "duplicates its trials, which are read one by one as passes")
            elif _is_pa_raw(doc):
                skip(outcome, s, "perf_analyzer raw export behind GenAI-Perf: read once, through its "
                                 "profile_export_genai_perf.json summary")
            elif _is_summary(doc):
                summaries.append(s)
            elif _is_records(doc):
                records.append(s)
        roots = {}  # benchmark id -> root summary
        kept = []
        for s in summaries:
            phase = _phase(s, phase_of)
            if phase is None:
                kept.append(s)
                bid = s.doc.get("benchmark_id")
                if isinstance(bid, str):
                    roots[bid] = s
        per_phase: list[tuple[SourceFile, SourceFile | None, str]] = []  # (phase export, its root, name)
        warm_dirs = set()
        for s in summaries:
            phase = _phase(s, phase_of)
            if phase is None:
                continue
            name, kind = phase
            run_dir = s.path.parent.parent.parent
            if kind == "warmup":
                warm_dirs.add(str(run_dir))
                skip(outcome, s, f"AIPerf warm-up phase export (phase '{name}'): not a measurement")
                continue
            bid = s.doc.get("benchmark_id")
            root = roots.get(bid) if isinstance(bid, str) else None
            if root is None:
                root = next((k for k in kept if k.path.parent == run_dir), None)
            if root is not None and len(_profiling_phases(root.doc.get("input_config"))) > 1:
                per_phase.append((s, root, name))  # the root blends several profiling phases
            elif root is not None:
                skip(outcome, s, f"AIPerf phase-scoped copy of the profiling phase '{name}': read once, "
                                 f"from the run's export {root.display}")
            else:
                per_phase.append((s, None, name))
        blended = {id(root) for _, root, _ in per_phase if root is not None}
        drafts = []
        used_records = set()
        for s in kept:
            if id(s) in blended:
                names = ", ".join(n for _, r, n in per_phase if r is s)
                skip(outcome, s, f"AIPerf export blending {len(_profiling_phases(s.doc.get('input_config')))} "
                                 f"profiling phases: read phase by phase instead ({names})")
                _pair(s, records, used_records)  # its records are read per phase below
                continue
            rec = _pair(s, records, used_records)
            d = guarded(outcome, s, "AIPerf export", _draft, s, rec, warm_dirs)
            if d is not None:
                drafts.append(d)
        for s, root, name in per_phase:
            rec = next((r for r in records if root is not None and r.path.parent == root.path.parent), None)
            d = guarded(outcome, s, "AIPerf phase export", _draft, s, rec, warm_dirs, name,
                        root.doc.get("input_config") if root is not None else None)
            if d is not None:
                drafts.append(d)
        for r in records:
            if id(r) not in used_records:
                d = guarded(outcome, r, "AIPerf records", _draft, None, r, warm_dirs)
                if d is not None:
                    drafts.append(d)
        return finish(drafts, manifests, NAME, outcome)


def _phase_map(s: SourceFile) -> dict[str, tuple[str, str]]:
    out = {}
    for p in s.doc.get("phases", []):
        rel = p.get("metrics_json")
        if not isinstance(rel, str) or not rel or len(rel) > 300:
            continue
        parts = PurePosixPath(rel.replace("\\", "/")).parts
        if rel.startswith("/") or ".." in parts:
            continue  # only ever compared with files already found, but keep it inside the folder
        key = os.path.normpath(str(s.path.parent.joinpath(*parts)))
        out[key] = (str(p.get("phase_name", "?"))[:60], str(p.get("phase_kind", "")).lower())
    return out


def _phase(s: SourceFile, phase_of: dict) -> tuple[str, str] | None:
    """(phase name, kind) when the summary is a phase-scoped export, else None."""
    hit = phase_of.get(os.path.normpath(str(s.path)))
    if hit:
        return hit
    if s.path.parent.parent.name == "phases":
        name = s.path.parent.name
        return name, ("warmup" if "warmup" in name.lower() else "profiling")
    return None


def _pair(summary: SourceFile, records: list[SourceFile], used: set) -> SourceFile | None:
    """The records file of the summary's run: same folder, and the matching name when several."""
    same = [r for r in records if r.path.parent == summary.path.parent and id(r) not in used]
    if len(same) > 1:
        stem = summary.path.name
        for suffix in ("_aiperf.json", "_genai_perf.json"):
            if stem.endswith(suffix):
                stem = stem[: -len(suffix)]
        named = [r for r in same if r.path.stem == stem]
        same = named or []
    if len(same) == 1:
        used.add(id(same[0]))
        return same[0]
    return None


# --- reading --------------------------------------------------------------------------------

def _find(obj, key: str, *, avoid=("warmup", "prefill", "session", "ramp"), depth: int = 0):
    """First value under `key` in nested config, skipping sections whose names contain `avoid`."""
    if depth > 6:
        return None
    if isinstance(obj, dict):
        if key in obj and obj[key] is not None:
            return obj[key]
        for k, v in obj.items():
            if isinstance(k, str) and any(a in k.lower() for a in avoid):
                continue
            found = _find(v, key, avoid=avoid, depth=depth + 1)
            if found is not None:
                return found
    elif isinstance(obj, list):
        for v in obj:
            found = _find(v, key, avoid=avoid, depth=depth + 1)
            if found is not None:
                return found
    return None


def _profiling_phases(cfg) -> list[dict]:
    phases = cfg.get("phases") if isinstance(cfg, dict) else None
    if not isinstance(phases, list):
        return []
    return [p for p in phases if isinstance(p, dict) and str(p.get("kind", p.get("name", ""))).lower()
            == "profiling"]


def _profiling_phase(cfg, name: str | None = None) -> dict | None:
    prof = _profiling_phases(cfg)
    if name is not None:
        named = [p for p in prof if p.get("name") == name]
        prof = named or (prof if len(prof) == 1 else [])
    return prof[0] if prof else None


def _load(cfg, phase_name: str | None = None) -> tuple[int | None, float | None]:
    """(concurrency, request rate) of the profiling load (of the named phase, when given)."""
    if isinstance(cfg, dict) and isinstance(cfg.get("phases"), list):  # AIPerf with named phases
        phase = _profiling_phase(cfg, phase_name)
        if phase is None:
            return None, None
        return positive_int(phase.get("concurrency")), num(first(phase.get("rate"), phase.get("request_rate")))
    for section in (dig(cfg, "loadgen"), dig(cfg, "perf_analyzer", "stimulus"), cfg):
        if isinstance(section, dict):
            c, r = positive_int(section.get("concurrency")), num(section.get("request_rate"))
            if c is not None or r is not None:
                return c, r
    return positive_int(_find(cfg, "concurrency")), num(_find(cfg, "request_rate"))


def _model(cfg) -> str | None:
    items = dig(cfg, "models", "items")
    if isinstance(items, list):
        names = [i.get("name") for i in items if isinstance(i, dict) and isinstance(i.get("name"), str)]
        if names:
            return names[0]
    for path in (("endpoint", "model_names"), ("model_names",), ("model",), ("models",)):
        v = dig(cfg, *path)
        if isinstance(v, list) and v and isinstance(v[0], str):
            return v[0]
        if isinstance(v, str) and v:
            return v
    return None


def _warmup_configured(cfg) -> bool | None:
    phases = cfg.get("phases") if isinstance(cfg, dict) else None
    if isinstance(phases, list):
        return any(isinstance(p, dict) and str(p.get("kind", "")).lower() == "warmup" for p in phases)
    for path in (("loadgen", "warmup_request_count"), ("perf_analyzer", "warmup_request_count"),
                 ("warmup_request_count",), ("loadgen", "warmup_duration")):
        v = dig(cfg, *path)
        if v is not None:
            return bool(num(v))
    return None


def _value(metric: dict | None) -> tuple[float | None, str | None]:
    if not isinstance(metric, dict):
        return None, None
    return num(metric.get("value")), metric.get("unit")


def _draft(summary: SourceFile | None, records: SourceFile | None, warm_dirs: set,
           phase_name: str | None = None, root_cfg: dict | None = None) -> Draft:
    """One run from a summary and/or its records; `phase_name` restricts both to one profiling
    phase of a multi-phase workflow (its export under phases/<name>/, its records by phase_name)."""
    primary = summary or records
    doc = summary.doc if summary else {}
    cfg = doc.get("input_config") if isinstance(doc.get("input_config"), dict) else {}
    is_aiperf = bool(summary is None or "aiperf_version" in doc or "schema_version" in doc
                     or any(k in cfg for k in ("models", "phases", "loadgen")))
    harness = {"name": "aiperf" if is_aiperf else "genai-perf"}
    if isinstance(doc.get("aiperf_version"), str):
        harness["version"] = doc["aiperf_version"][:40]
    d = Draft(primary, harness, source_format=("aiperf profile export" if is_aiperf else "genai-perf profile export"))
    if summary and records:
        d.extra_paths.append(records.path)
        d.notes.append(f"aggregates from {summary.path.name}, requests from {records.path.name} (one run)")
    d.model = _model(cfg)
    d.model_where = "input_config model name"
    start = valid_iso(doc.get("start_time"))
    if start:
        d.date, d.timestamp = start, epoch_from_iso(start)
    if phase_name is not None and not any(p.get("name") == phase_name for p in _profiling_phases(cfg)) \
            and any(p.get("name") == phase_name for p in _profiling_phases(root_cfg)):
        cfg = root_cfg  # the run's root export describes the phase
    conc, rate = _load(cfg, phase_name)
    wl = f"-{rate:g}rps" if rate is not None else ""
    if phase_name is not None:
        d.suffix = phase_name
        if phase_name != "profiling":
            wl += "-" + re.sub(r"[^A-Za-z0-9_-]", "_", phase_name)[:40]
        d.notes.append(f"profiling phase '{phase_name}' of a multi-phase AIPerf workflow")
    warm = _warmup_configured(cfg) if cfg else None
    run_dir = primary.path.parent.parent.parent if phase_name is not None else primary.path.parent
    if isinstance(doc.get("warmup_metrics"), dict) or str(run_dir) in warm_dirs:
        warm = True
    trial = count(dig(doc, "run_info", "trial"))
    cli = dig(doc, "run_info", "cli_command")
    if not warm and trial and isinstance(cli, str) and WARMUP_CLI.search(cli):
        warm = True
        d.assumptions.append("warm-up taken as excluded: AIPerf ran it before the first trial only and this "
                             f"is trial {trial + 1} of the same invocation")
    if trial is not None and (trial > 0 or re.match(r"run_\d+$", primary.path.parent.name)):
        d.notes.append(f"AIPerf trial {trial + 1} ({dig(doc, 'run_info', 'run_label') or primary.path.parent.name})")
    if summary:
        _measurements(d, doc, wl, conc)
    if records:
        dropped = _requests(d, records.doc, wl, conc, phase_name)
        if dropped:
            warm = True
            d.notes.append(f"{dropped} warm-up record(s) in {records.path.name} left out")
        if d.date is None:
            starts = [epoch_seconds(dig(r, "metadata", "request_start_ns")) for r in records.doc]
            starts = [t for t in starts if t is not None]
            if starts:
                d.timestamp = min(starts)
                d.date = iso_from_epoch(d.timestamp)
    d.warmup_excluded = warm
    if doc.get("was_cancelled") is True:
        d.notes.append("AIPerf reports the run as cancelled (partial results)")
    return d


def _measurements(d: Draft, doc: dict, wl: str, conc: int | None) -> None:
    n = positive_int(dig(doc, "request_count", "avg"))

    def add(metric, unit, value, stat, count_=None):
        v = num(value)
        if v is None:
            return
        m = {"workload": wl, "metric": metric, "value": v, "unit": unit, "statistic": stat}
        if conc is not None:
            m["concurrency"] = conc
        if count_:
            m["n"] = count_
        d.measurements.append(m)

    for tag, metric in LATENCIES.items():
        block = doc.get(tag)
        if not _block(block):
            continue
        factor = ms_factor(block.get("unit"))
        if factor is None:
            d.notes.append(f"{tag} in unknown unit {block.get('unit')!r}: not read")
            continue
        c = positive_int(block.get("count")) or n
        for key, stat in STATS:
            v = num(block.get(key))
            add(metric, "ms", v * factor if v is not None else None, stat, c)
    for tag, metric, kind, unit in (("output_token_throughput", "output_tok_s", "tok", "tok/s"),
                                    ("request_throughput", "request_rate", "req", "req/s")):
        block = doc.get(tag)
        if _block(block):
            if rate_ok(block.get("unit"), kind):
                add(metric, unit, block.get("avg"), "mean", n)
            else:
                d.notes.append(f"{tag} in unknown unit {block.get('unit')!r}: not read")
    block = doc.get("output_token_throughput_per_user")
    if _block(block) and rate_ok(block.get("unit"), "tok"):
        c = positive_int(block.get("count")) or n
        for key, stat in STATS:
            add("decode_tok_s_per_stream", "tok/s", block.get(key), stat, c)


def _requests(d: Draft, recs: list, wl: str, conc: int | None, phase_name: str | None = None) -> int:
    dropped = 0
    mismatch = 0
    # cached counts come from the server's usage: pair them with the server's prompt counts when
    # the records have those (AIPerf's input_sequence_length is tokenised by the client)
    server_prompt = any(isinstance(r.get("metrics"), dict) and r["metrics"].get("usage_prompt_tokens") is not None
                        for r in recs)
    if server_prompt:
        d.notes.append("prompt_tokens are the server's usage counts, like the cached-token counts "
                       "(AIPerf's input_sequence_length is tokenised by the client)")
    for r in recs:
        meta = r.get("metadata") or {}
        phase = str(first(meta.get("benchmark_phase"), meta.get("phase_kind"), "profiling")).lower()
        if phase != "profiling":
            dropped += 1
            continue
        if phase_name is not None and meta.get("phase_name") not in (None, phase_name):
            continue  # another profiling phase: read with that phase's run
        m = r.get("metrics") if isinstance(r.get("metrics"), dict) else {}
        rec: dict = {"workload": wl}
        if conc is not None:
            rec["concurrency"] = conc
        sent = num(meta.get("request_start_ns"))
        if sent is not None and sent >= 0:
            rec["start_ms"] = sent / 1e6  # epoch ns: keeps the send order
        isl, _ = _value(m.get("input_sequence_length"))
        usage_prompt, _ = _value(m.get("usage_prompt_tokens"))
        cached = next((count(_value(m.get(k))[0]) for k in CACHE_KEYS if m.get(k) is not None), None)
        if server_prompt:
            prompt = count(first(usage_prompt, isl, _value(m.get("error_isl"))[0]))
        else:
            prompt = count(first(isl, _value(m.get("error_isl"))[0]))
        if cached is not None and prompt is not None and cached > prompt:
            cached = None
            mismatch += 1
        if prompt is not None:
            rec["prompt_tokens"] = prompt
        if cached is not None:
            rec["cached_prompt_tokens"] = cached
        osl = count(_value(m.get("output_sequence_length"))[0])
        content = count(_value(m.get("output_token_count"))[0])
        reasoning = count(first(_value(m.get("reasoning_token_count"))[0], _value(m.get("usage_reasoning_tokens"))[0]))
        if osl is None and (content is not None or reasoning is not None):
            osl = (content or 0) + (reasoning or 0)
        if osl is None:
            osl = count(_value(m.get("usage_completion_tokens"))[0])
        if osl is not None:
            rec["output_tokens"] = osl
        if reasoning is not None and (osl is None or reasoning <= osl):
            rec["reasoning_tokens"] = reasoning
        for tag, field in LATENCIES.items():
            v, unit = _value(m.get(tag))
            factor = ms_factor(unit)
            if v is not None and factor is not None and v >= 0:
                rec[field] = v * factor
        err = r.get("error")
        if isinstance(err, dict) or (err and not isinstance(err, dict)):
            rec["finish_reason"] = "error"
            if isinstance(err, dict):
                text = ": ".join(str(x) for x in (err.get("type"), err.get("message")) if x)
                code = err.get("code")
                rec["error"] = short_text(f"{text} (code {code})" if code is not None else text) or "error"
            else:
                rec["error"] = short_text(err) or "error"
        elif meta.get("was_cancelled") is True:
            rec["finish_reason"] = "cancelled"
            rec["error"] = "cancelled"
        d.requests.append(rec)
    if mismatch:
        d.notes.append(f"{mismatch} request(s): the server's cached-token count exceeded the prompt length; "
                       "left out")
    return dropped


IMPORTER = _Importer()
