"""NVIDIA AIPerf exports (and GenAI-Perf's `profile_export_genai_perf.json`, which shares the layout).

What AIPerf writes into an artifact folder (docs/reference/json-export-schema.md,
docs/tutorials/working-with-profile-exports.md, multi-run-confidence.md, multi-phase-workflows.md):
- `profile_export_aiperf.json` (or `<prefix>.json` with `--profile-export-prefix`): one block per
  metric tag {unit, avg, min, max, p1..p99, std, count, sum} (`request_throughput`,
  `time_to_first_token`, `inter_token_latency`, `request_latency`, `output_token_throughput`,
  `output_token_throughput_per_user`, ...), plus `input_config`, `start_time`/`end_time`,
  `aiperf_version`, `schema_version` (from 0.4), `run_info` {trial, ...} (1.2+), `error_summary`
  [{error_details {code, type, message}, count}], `error_request_count`, `warmup_metrics` (1.4+,
  warm-up only: never read). Releases 0.1-0.3 keep the blocks under `records.<tag>` and tag TTFT
  `ttft`. A phase or a run whose requests all failed has no metric blocks, only error counts.
  GenAI-Perf's `profile_export_genai_perf.json` has the same metric blocks and `input_config`.
- `profile_export.jsonl`: one record a request {metadata {request_start_ns, request_end_ns,
  benchmark_phase "warmup"|"profiling", was_cancelled, ...}, metrics {tag: {value, unit}},
  error {code, type, message} | null}. Warm-up records are dropped here. `--export-level summary`
  writes no records file (before 0.4 none was written).
- beside them, no results of their own: `inputs.json`, `run_config.json`, `outputs.json`,
  `phase_manifest.json`, `phases/<phase>/profile_export_aiperf.json` (a phase-scoped copy; the
  warm-up phase is not a measurement), `aggregate/...aggregate.json` (mean and t-CI over the
  trials, `metadata.aggregation_type` "confidence"), `aggregate/sweep_aggregate/...sweep.json`
  (top-level `aggregation_type` "sweep": per parameter combination the same, plus the Pareto
  front), the collated export, telemetry exports, the `.aiperf_results_ready.json` marker and
  GenAI-Perf's raw perf_analyzer `profile_export.json`, `profile_export_raw.jsonl` (payloads and
  responses, `--export-level raw`), `profile_export_aiperf_collated.json` (every run's requests
  pooled). Trials are `profile_runs/run_NNNN/`, or `profile_runs/trial_NNNN/<variation>/` in a
  sweep: each trial is a pass, numbered `run_info.trial` + 1 (else by its folder's number).
The summary JSON and the records JSONL of one artifact folder are one run: aggregates from the
JSON, requests from the JSONL. An aggregate over trials is checked against the trials read.
"""

from __future__ import annotations

import os
import re
from pathlib import PurePosixPath

from benchreport.load.errors import Refusal
from benchreport.load.harness import ImportOutcome, SourceFile, describe
from benchreport.load.harness.aiperf_load import load_description
from benchreport.load.harness._common import (
    Check,
    Draft,
    count,
    count_only_requests,
    dig,
    epoch_from_iso,
    epoch_seconds,
    failed_from_counts,
    finish,
    first,
    guarded,
    iso_from_epoch,
    ms_factor,
    num,
    positive_int,
    rate_ok,
    skip,
    successful_count,
    valid_iso,
)
from benchreport.load.harness.aiperf_aggregate import aggregation, check_aggregate
from benchreport.load.harness.aiperf_records import LATENCIES, error_text, requests_of

NAME = "aiperf"
LABEL = "AIPerf 0.1-0.13 / GenAI-Perf profile export"
SUMMARY_TAGS = (
    "request_throughput",
    "time_to_first_token",
    "request_latency",
    "inter_token_latency",
    "output_token_throughput",
    "request_count",
    "output_sequence_length",
)
#: tags of releases before 0.4 (`records.<tag>`) -> today's tag
OLD_TAGS = {"ttft": "time_to_first_token", "ttst": "time_to_second_token"}
#: keys only AIPerf's (and GenAI-Perf's) profile exports carry beside their metric blocks
EXPORT_MARKERS = ("error_summary", "error_request_count", "was_cancelled", "is_complete", "records")
STATS = (("avg", "mean"), ("p50", "p50"), ("p90", "p90"), ("p95", "p95"), ("p99", "p99"))
WARMUP_CLI = re.compile(r"--(warmup-request-count|warmup-duration|num-warmup-sessions|warmup-requests)\b")


# --- recognising: each file's role from AIPerf's own markers ---------------------------------


def _block(v) -> bool:
    return isinstance(v, dict) and "unit" in v and ("avg" in v or "p50" in v)


def _blocks(doc: dict) -> dict:
    """Where the metric blocks are: the top level, `records` (releases before 0.4, by today's tags),
    or `metrics` (schema 2.0, beside `warmup_metrics`)."""
    rec = doc.get("records")
    if isinstance(rec, dict) and any(_block(v) for v in rec.values()):
        return {OLD_TAGS.get(k, k): v for k, v in rec.items() if _block(v)}
    nested = doc.get("metrics")
    if (
        isinstance(nested, dict)
        and not any(_block(v) for v in doc.values())
        and any(_block(v) for v in nested.values())
    ):
        return {**{k: v for k, v in doc.items() if k != "metrics"}, **nested}
    return doc


def _has_metrics(doc: dict) -> bool:
    blocks = _blocks(doc)
    return any(_block(blocks.get(t)) for t in SUMMARY_TAGS)


def _is_export(doc) -> bool:
    """A profile export (summary): metric blocks, or AIPerf's export markers without any (a phase
    or run whose requests all failed has only error counts)."""
    if not isinstance(doc, dict) or aggregation(doc) is not None:
        return False
    has_cfg = isinstance(doc.get("input_config"), dict)
    marked = any(k in doc for k in ("aiperf_version", "schema_version", "benchmark_id"))
    if _has_metrics(doc):
        return has_cfg or marked
    return has_cfg and (marked or "error_summary" in doc) and any(k in doc for k in EXPORT_MARKERS)


def _is_record(r) -> bool:
    return (
        isinstance(r, dict)
        and isinstance(r.get("metadata"), dict)
        and "metrics" in r
        and any(k in r["metadata"] for k in ("request_start_ns", "session_num", "benchmark_phase", "credit_phase"))
    )


def _is_records(doc) -> bool:
    return isinstance(doc, list) and bool(doc) and all(_is_record(r) for r in doc)


#: `metadata.aggregation_type` of AIPerf's collated export (per-request values of all runs pooled)
COLLATED_TYPES = ("detailed", "collated")


def _is_collated(doc) -> bool:
    """AIPerf's collated export: {combined, per_run} (0.12-0.13), or `profile_export_aiperf_collated.json`
    (per-request values of every run pooled: `metadata.aggregation_type` "detailed", its description
    says "Collated")."""
    if not isinstance(doc, dict):
        return False
    if "combined" in doc and "per_run" in doc:
        return True
    kind = dig(doc, "metadata", "aggregation_type")
    text = doc.get("description")
    return isinstance(doc.get("metrics"), dict) and (
        str(kind).lower() in COLLATED_TYPES or (isinstance(text, str) and text.startswith("Collated per-request"))
    )


def _is_raw(doc) -> bool:
    """AIPerf's raw request/response export (`profile_export_raw.jsonl`, `--export-level raw`):
    records {metadata, start_perf_ns, payload, status, responses, error} without metrics."""
    return (
        isinstance(doc, list)
        and bool(doc)
        and all(
            isinstance(r, dict)
            and isinstance(r.get("metadata"), dict)
            and "metrics" not in r
            and "start_perf_ns" in r
            and any(k in r for k in ("payload", "responses"))
            for r in doc
        )
    )


def _is_phase_manifest(doc) -> bool:
    phases = doc.get("phases") if isinstance(doc, dict) else None
    return (
        isinstance(phases, list)
        and bool(phases)
        and all(isinstance(p, dict) and ("phase_kind" in p or "metrics_json" in p) for p in phases)
    )


def _is_pa_raw(doc) -> bool:
    """perf_analyzer's raw export that GenAI-Perf summarises (its `profile_export.json`)."""
    exps = doc.get("experiments") if isinstance(doc, dict) else None
    return (
        isinstance(exps, list)
        and bool(exps)
        and all(isinstance(e, dict) and ("requests" in e or "experiment" in e) for e in exps)
    )


def _aux_kind(doc) -> str | None:
    """What an AIPerf/GenAI-Perf side file is (it carries no results), or None."""
    if _is_raw(doc):
        return (
            "the raw request/response export (profile_export_raw.jsonl, --export-level raw): the payloads "
            "and responses of the requests whose timings profile_export.jsonl holds, no figures of its own"
        )
    if isinstance(doc, list):
        if bool(doc) and all(
            isinstance(x, dict)
            and "timestamp_ns" in x
            and any(k in x for k in ("telemetry_data", "gpu_uuid", "dcgm_url", "endpoint_url", "metrics"))
            for x in doc
        ):
            return "telemetry or server-metrics samples"
        return None
    if not isinstance(doc, dict):
        return None
    data = doc.get("data")
    if isinstance(data, list) and data and all(isinstance(x, dict) for x in data[:5]):
        if all(any(k in x for k in ("payloads", "payload", "session_id")) for x in data[:5]):
            return "the request payloads sent (inputs.json): input, not results"
        if all("response_text" in x for x in data[:5]):
            return "the responses received (outputs.json), without timings"
    if "benchmark_id" in doc and ("cfg" in doc or "artifact_dir" in doc):
        return "the resolved configuration (run_config.json)"
    if set(doc) and set(doc) <= {"ready", "was_cancelled", "partial"}:
        return "the completion marker (.aiperf_results_ready.json)"
    if "aiperf_version" in doc and not any(_block(v) for v in doc.values()):
        return "a side export (telemetry or server metrics)"
    return None


def _role(doc) -> str | None:
    """The file's role in an AIPerf/GenAI-Perf artifact folder, or None if it is not one of theirs."""
    if _is_records(doc):
        return "records"
    for role, test in (
        ("collated", _is_collated),
        ("aggregate", aggregation),
        ("phase_manifest", _is_phase_manifest),
        ("pa_raw", _is_pa_raw),
        ("export", _is_export),
    ):
        if test(doc):
            return role
    return "aux" if _aux_kind(doc) else None


class _Importer:
    name = NAME
    label = LABEL
    #: keys only its exports have (a file holding one is refused when not read, never skipped), and
    #: the names of its exports
    signature = (
        "aiperf_version",
        "time_to_first_token",
        "inter_token_latency",
        "output_token_throughput",
        "error_request_count",
        "request_start_ns",
        "benchmark_phase",
    )
    result_names = re.compile(r"^profile_export.*\.jsonl?$")

    def recognise(self, doc, path):
        role = _role(doc)
        if role is None:
            return None
        return "auxiliary" if role == "aux" else "results"  # the others are sorted in import_files

    def skip_reason(self, doc, path):
        return f"AIPerf/GenAI-Perf side file: {_aux_kind(doc)}"

    def import_files(self, files: list[SourceFile], manifests: list) -> ImportOutcome:
        outcome = ImportOutcome()
        by_role: dict[str, list[SourceFile]] = {}
        for s in files:
            by_role.setdefault(_role(s.doc) or "aux", []).append(s)
        phase_of: dict[str, tuple[str, str]] = {}
        for s in by_role.get("phase_manifest", []):
            phase_of.update(_phase_map(s))
            skip(
                outcome,
                s,
                "AIPerf phase manifest (no results; used to tell the warm-up phase export from the profiling ones)",
            )
        for s in by_role.get("collated", []):
            skip(
                outcome,
                s,
                "AIPerf collated export (per-request values of all trials pooled into one "
                "population): it duplicates its trials, which are read one by one as passes, and its "
                "pooled percentiles are no pass's figures",
            )
        for s in by_role.get("pa_raw", []):
            skip(
                outcome,
                s,
                "perf_analyzer raw export behind GenAI-Perf: read once, through its "
                "profile_export_genai_perf.json summary",
            )
        aggregates = by_role.get("aggregate", [])
        for s in aggregates:
            skip(outcome, s, _aggregate_reason(s.doc))
        drafts = _read_runs(outcome, by_role.get("export", []), by_role.get("records", []), phase_of)
        for s in aggregates:
            guarded(outcome, s, "AIPerf aggregate", check_aggregate, s, drafts)
        return finish(drafts, manifests, NAME, outcome)


def _aggregate_reason(doc: dict) -> str:
    """Why an aggregate is skipped, in words (sweep or trials)."""
    kind = aggregation(doc)
    if kind == "sweep":
        n = len(doc.get("per_combination_metrics") or [])
        return (
            f"AIPerf sweep aggregate ({n} parameter combination(s): mean and CI over their trials, best "
            "configurations, Pareto front): it duplicates the trials, which are read one by one as passes"
        )
    return (
        f"AIPerf aggregate over trials (aggregation '{kind}': mean and CI of the per-trial figures): it "
        "duplicates its trials, which are read one by one as passes"
    )


# --- which exports are runs --------------------------------------------------------------


def _read_runs(
    outcome: ImportOutcome, exports: list[SourceFile], records: list[SourceFile], phase_of: dict
) -> list[Draft]:
    """Drafts of the runs: root exports (with their records), per-phase exports of multi-phase
    workflows, records without a summary. Phase copies and broken exports are sorted out here."""
    kept = [s for s in exports if _phase(s, phase_of) is None]
    roots = {s.doc["benchmark_id"]: s for s in kept if isinstance(s.doc.get("benchmark_id"), str)}
    per_phase, warm_dirs = _sort_phase_exports(outcome, exports, kept, roots, phase_of)
    blended = {id(root) for _, root, _ in per_phase if root is not None}
    drafts, used = [], set()
    for s in kept:
        if id(s) in blended:
            names = ", ".join(n for _, r, n in per_phase if r is s)
            skip(
                outcome,
                s,
                f"AIPerf export blending {len(_profiling_phases(s.doc.get('input_config')))} "
                f"profiling phases: read phase by phase instead ({names})",
            )
            _pair(s, records, used)  # its records are read per phase below
            continue
        rec = _pair(s, records, used)
        if not _has_metrics(s.doc) and not _error_total(s.doc) and rec is None:
            outcome.refused.append(
                Refusal(
                    s.display,
                    "$",
                    (
                        "expected an AIPerf profile export with metric blocks (time_to_first_token, request_count, "
                        f"...) or error counts, found {describe(s.doc)}: no results, and no records file beside it"
                    )[:600],
                )
            )
            continue
        d = guarded(outcome, s, "AIPerf export", _draft, s, rec, warm_dirs)
        if d is not None:
            drafts.append(d)
    for s, root, name in per_phase:
        rec = next((r for r in records if root is not None and r.path.parent == root.path.parent), None)
        d = guarded(
            outcome,
            s,
            "AIPerf phase export",
            _draft,
            s,
            rec,
            warm_dirs,
            name,
            root.doc.get("input_config") if root is not None else None,
        )
        if d is not None:
            drafts.append(d)
    for r in records:
        if id(r) not in used:
            d = guarded(outcome, r, "AIPerf records", _draft, None, r, warm_dirs)
            if d is not None:
                drafts.append(d)
    return drafts


def _sort_phase_exports(outcome, exports, kept, roots, phase_of):
    """Phase exports: warm-up ones skipped, profiling copies of a root skipped, the phases of a
    multi-phase workflow kept as runs of their own. Returns (per-phase runs, warm-up run folders)."""
    per_phase: list[tuple[SourceFile, SourceFile | None, str]] = []
    warm_dirs = set()
    for s in exports:
        phase = _phase(s, phase_of)
        if phase is None:
            continue
        name, kind = phase
        run_dir = s.path.parent.parent.parent
        if kind == "warmup":
            warm_dirs.add(str(run_dir))
            skip(outcome, s, f"AIPerf warm-up phase export (phase '{name}'{_failed_words(s.doc)}): not a measurement")
            continue
        bid = s.doc.get("benchmark_id")
        root = roots.get(bid) if isinstance(bid, str) else None
        if root is None:
            root = next((k for k in kept if k.path.parent == run_dir), None)
        if root is not None and len(_profiling_phases(root.doc.get("input_config"))) > 1:
            per_phase.append((s, root, name))  # the root blends several profiling phases
        elif root is not None:
            skip(
                outcome,
                s,
                f"AIPerf phase-scoped copy of the profiling phase '{name}': read once, "
                f"from the run's export {root.display}",
            )
        elif _has_metrics(s.doc) or _error_total(s.doc):
            per_phase.append((s, None, name))
        else:
            skip(outcome, s, f"AIPerf phase export (phase '{name}') with no metrics and no error counts")
    return per_phase, warm_dirs


def _failed_words(doc: dict) -> str:
    """ ", N request(s) failed[, no metrics]" for a phase export whose requests failed, else ""."""
    n = _error_total(doc)
    if not n:
        return ""
    return f", {n} request(s) failed" + (", no metrics" if not _has_metrics(doc) else "")


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
        for suffix in ("_aiperf.json", "_genai_perf.json", ".json"):
            if stem.endswith(suffix):
                stem = stem[: -len(suffix)]
                break
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
    return [p for p in phases if isinstance(p, dict) and str(p.get("kind", p.get("name", ""))).lower() == "profiling"]


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
    for path in (
        ("loadgen", "warmup_request_count"),
        ("perf_analyzer", "warmup_request_count"),
        ("warmup_request_count",),
        ("loadgen", "warmup_duration"),
    ):
        v = dig(cfg, *path)
        if v is not None:
            return bool(num(v))
    return None


def _harness(doc: dict, cfg: dict, summary: SourceFile | None) -> dict:
    """`aiperf` (with its version) or `genai-perf`, told by AIPerf's markers and config sections."""
    is_aiperf = bool(
        summary is None
        or "aiperf_version" in doc
        or "schema_version" in doc
        or "records" in doc
        or any(k in cfg for k in ("models", "phases", "loadgen"))
    )
    harness = {"name": "aiperf" if is_aiperf else "genai-perf"}
    if isinstance(doc.get("aiperf_version"), str):
        harness["version"] = doc["aiperf_version"][:40]
    return harness


def _draft(
    summary: SourceFile | None,
    records: SourceFile | None,
    warm_dirs: set,
    phase_name: str | None = None,
    root_cfg: dict | None = None,
) -> Draft:
    """One run from a summary and/or its records; `phase_name` restricts both to one profiling
    phase of a multi-phase workflow (its export under phases/<name>/, its records by phase_name)."""
    primary = summary or records
    doc = summary.doc if summary else {}
    cfg = doc.get("input_config") if isinstance(doc.get("input_config"), dict) else {}
    harness = _harness(doc, cfg, summary)
    d = Draft(primary, harness, source_format=f"{harness['name']} profile export")
    if summary and records:
        d.extra_paths.append(records.path)
        d.notes.append(f"aggregates from {summary.path.name}, requests from {records.path.name} (one run)")
    d.model = _model(cfg)
    d.model_where = "input_config model name"
    start = valid_iso(doc.get("start_time"))
    if start:
        d.date, d.timestamp = start, epoch_from_iso(start)
    if (
        phase_name is not None
        and not any(p.get("name") == phase_name for p in _profiling_phases(cfg))
        and any(p.get("name") == phase_name for p in _profiling_phases(root_cfg))
    ):
        cfg = root_cfg  # the run's root export describes the phase
    conc, rate = _load(cfg, phase_name)
    d.load = load_description(
        cfg,
        _profiling_phase(cfg, phase_name) if isinstance(cfg.get("phases"), list) else None,
        dig(doc, "run_info", "random_seed"),
    )
    wl = f"-{rate:g}rps" if rate is not None else ""
    if phase_name is not None:
        d.suffix = phase_name
        if phase_name != "profiling":
            wl += "-" + re.sub(r"[^A-Za-z0-9_-]", "_", phase_name)[:40]
        d.notes.append(f"profiling phase '{phase_name}' of a multi-phase AIPerf workflow")
    warm = _warmup(d, doc, cfg, primary, warm_dirs, phase_name)
    if summary:
        _measurements(d, _blocks(doc), wl, conc)
    if records:
        dropped = requests_of(d, records.doc, wl, conc, phase_name)
        if dropped:
            warm = True
            d.notes.append(f"{dropped} warm-up record(s) in {records.path.name} left out")
        if d.date is None:
            _date_from_records(d, records.doc)
    if summary:
        _counted_failures(d, doc, wl, conc, has_records=records is not None)
    d.warmup_excluded = warm
    if doc.get("was_cancelled") is True:
        d.notes.append("AIPerf reports the run as cancelled (partial results)")
    return d


def _warmup(d: Draft, doc: dict, cfg: dict, primary: SourceFile, warm_dirs: set, phase_name) -> bool | None:
    """Whether warm-up requests were left out of the run's figures (and trial notes)."""
    warm = _warmup_configured(cfg) if cfg else None
    run_dir = primary.path.parent.parent.parent if phase_name is not None else primary.path.parent
    if isinstance(doc.get("warmup_metrics"), dict) or str(run_dir) in warm_dirs:
        warm = True
    trial = count(dig(doc, "run_info", "trial"))
    cli = first(dig(doc, "run_info", "cli_command"), dig(cfg, "cli_command"))
    if not warm and trial and isinstance(cli, str) and WARMUP_CLI.search(cli):
        warm = True
        d.assumptions.append(
            "warm-up taken as excluded: AIPerf ran it before the first trial only and this "
            f"is trial {trial + 1} of the same invocation"
        )
    folder = _trial_folder(primary, phase_name)
    if trial is not None and (trial > 0 or folder is not None):
        label = dig(doc, "run_info", "run_label") or primary.path.parent.name
        d.notes.append(f"AIPerf trial {trial + 1} ({label})")
        d.pass_ = trial + 1
        d.pass_note = (
            f"pass {trial + 1} from AIPerf's trial number ({label}: run_info.trial {trial}, "
            "counted from 0, of --num-profile-runs)"
        )
    elif folder is not None:
        d.pass_ = int(folder.group(2))
        d.pass_note = (
            f"pass {d.pass_} from AIPerf's run folder {folder.group(0)} (--num-profile-runs numbers "
            "its runs from 1; the export has no run_info)"
        )
    return warm


#: the folders AIPerf gives the runs of `--num-profile-runs` (`profile_runs/run_0001`, a sweep's
#: `profile_runs/trial_0001/<variation>`), numbered from 1
TRIAL_FOLDER = re.compile(r"^(run|trial)_(\d{4})$")


def _trial_folder(primary: SourceFile, phase_name: str | None):
    """The run folder (`run_NNNN`, `trial_NNNN`) the export lies in (its match), or None."""
    folder = primary.path.parent.parent.parent if phase_name is not None else primary.path.parent
    for f in (folder, folder.parent):
        m = TRIAL_FOLDER.match(f.name)
        if m and int(m.group(2)) >= 1:
            return m
    return None


def _date_from_records(d: Draft, recs: list) -> None:
    starts = [
        epoch_seconds(first(dig(r, "metadata", "request_start_ns"), dig(r, "metadata", "timestamp_ns"))) for r in recs
    ]
    starts = [t for t in starts if t is not None]
    if starts:
        d.timestamp = min(starts)
        d.date = iso_from_epoch(d.timestamp)


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
    for tag, metric, kind, unit in (
        ("output_token_throughput", "output_tok_s", "tok", "tok/s"),
        ("request_throughput", "request_rate", "req", "req/s"),
    ):
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


def _error_tally(doc: dict) -> list[tuple[str, int]]:
    """[(error text, count)] from the export's `error_summary`."""
    out = []
    for e in doc.get("error_summary") or []:
        n = count(e.get("count")) if isinstance(e, dict) else None
        if n:
            out.append((error_text(e.get("error_details")), n))
    return out


def _error_total(doc: dict) -> int:
    """How many requests the export counts as failed (`error_request_count`, else its error summary)."""
    n = count(dig(_blocks(doc), "error_request_count", "avg"))
    if n is None:
        n = sum(c for _, c in _error_tally(doc))
    return n or 0


def _counted_failures(d: Draft, doc: dict, wl: str, conc: int | None, has_records: bool) -> None:
    """The export's request counts against the records read. Failed requests the export counts
    but no record holds (no records file: `--export-level summary`, releases before 0.4) become
    records without timings, so the failure share is AIPerf's."""
    total = _error_total(doc)
    ok = count(dig(_blocks(doc), "request_count", "avg"))
    have = len(d.requests) - successful_count(d.requests)
    against = "AIPerf's request_count and error counts"
    if has_records and ok is not None:
        d.checks.append(
            Check(
                against,
                wl,
                conc,
                "requests",
                "count",
                float(ok),
                float(successful_count(d.requests)),
                "profiling records without an error",
            )
        )
    missing = total - have
    if missing <= 0:
        if has_records and (total or "error_summary" in doc):
            d.checks.append(
                Check(
                    against, wl, conc, "failed", "count", float(total), float(have), "profiling records with an error"
                )
            )
        return
    d.requests += failed_from_counts(_error_tally(doc), missing, wl, conc)[:missing]
    if not has_records:
        d.requests += count_only_requests(ok or 0, wl, conc)
        d.notes.append(
            f"AIPerf kept no per-request records here: its {total} failed and {ok or 0} successful "
            "requests are request rows without timings (from error_summary and request_count), so "
            "the failure share is seen; the figures are the export's"
        )
    else:
        d.notes.append(
            f"{missing} failed request(s) counted in the export but missing from the records file "
            "are request rows without timings"
        )


IMPORTER = _Importer()
