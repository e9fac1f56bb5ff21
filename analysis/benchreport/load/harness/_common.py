"""Shared by the harness importers: numbers and times, and `finish`, which turns drafts (what a
harness file says) into native run objects (seat, date, pass, run id from the manifest or by
stated inference).

An importer reads its files into `Draft`s; `finish` then applies the manifest, infers what is
missing and records every inference in the run's assumptions (the loader raises the
`import.assumed` flag from them). Nothing here trusts a string from a file as a path or id.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import math
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from benchreport import conditions
from benchreport.load import native
from benchreport.load.errors import Refusal, Skipped, one_line
from benchreport.load.harness import ImportedRun, ImportOutcome, SourceFile, describe
from benchreport.load.harness import _manifest
from benchreport.load.harness._unusable import unusable_values
from benchreport.load.harness._figure_checks import CHECK_WORDS, COUNT_STATISTICS, Check, check_notes  # noqa: F401

FORMAT = "benchreport.run/1"
ID_BAD = re.compile(r"[^A-Za-z0-9._-]+")
#: placeholder base of workload names; the manifest's `workload` replaces it
BASE_WORKLOAD = "decode"


# --- numbers --------------------------------------------------------------------------------


def num(value: Any) -> float | None:
    """A finite float, or None for anything else (bools, strings, NaN, infinities)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def count(value: Any) -> int | None:
    """A non-negative integer count (integral floats accepted), or None."""
    v = num(value)
    if v is None or v < 0 or v != int(v):
        return None
    return int(v)


def positive_int(value: Any) -> int | None:
    v = count(value)
    return v if v and v >= 1 else None


def first(*values):
    """The first value that is not None."""
    for v in values:
        if v is not None:
            return v
    return None


def dig(doc: Any, *keys, default=None):
    """doc[k1][k2]... or `default` when any level is missing or not a mapping/list."""
    for k in keys:
        if isinstance(doc, dict) and k in doc:
            doc = doc[k]
        elif isinstance(doc, list) and isinstance(k, int) and -len(doc) <= k < len(doc):
            doc = doc[k]
        else:
            return default
    return doc


def short_text(value: Any, limit: int = 300) -> str | None:
    """The most telling line of an error text (the last non-empty one), shortened."""
    if value is None:
        return None
    text = str(value).strip()
    if not text:
        return None
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    line = one_line(lines[-1] if lines else text)  # a terminal's colour codes shown, not run
    return line if len(line) <= limit else line[: limit - 1] + "…"


# --- times ----------------------------------------------------------------------------------


def iso_from_epoch(seconds: float) -> str:
    """UTC ISO date-time (seconds precision) of a POSIX time."""
    return _dt.datetime.fromtimestamp(seconds, tz=_dt.timezone.utc).isoformat(timespec="seconds")


def epoch_from_iso(text: str) -> float | None:
    """POSIX time of an ISO date-time (naive ones read as UTC for ordering only), or None."""
    try:
        t = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (ValueError, TypeError, AttributeError):
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=_dt.timezone.utc)
    return t.timestamp()


def valid_iso(text: Any) -> str | None:
    """`text` when it is an ISO date or date-time the native format accepts, else None."""
    return text if native.is_iso_date(text) else None


def epoch_seconds(value: Any) -> float | None:
    """A POSIX time in seconds from seconds, milli-, micro- or nanoseconds (by magnitude)."""
    v = num(value)
    if v is None or v <= 0:
        return None
    for scale in (1, 1e3, 1e6, 1e9):
        s = v / scale
        if 3e8 < s < 1e10:  # 1979 .. 2286
            return s
    return None


def mtime_iso(source: SourceFile) -> tuple[str | None, float | None]:
    try:
        t = source.path.stat().st_mtime
    except OSError:
        return None, None
    return iso_from_epoch(t), t


#: the client backend -> the API it calls (vLLM's benchmark_serving
#: ASYNC_REQUEST_FUNCS, SGLang's bench_serving likewise)
BACKEND_ENDPOINTS = {
    "vllm": "completions",
    "openai": "completions",
    "sglang-oai": "completions",
    "lmdeploy": "completions",
    "deepspeed-mii": "completions",
    "tgi": "generate",
    "tensorrt-llm": "generate",
    "sglang": "generate",
    "scalellm": "completions",
    "openai-chat": "chat",
    "vllm-chat": "chat",
    "sglang-oai-chat": "chat",
    "openai-audio": "audio",
}


# --- measurements ---------------------------------------------------------------------------


def measurement(
    workload: str,
    concurrency: int | None,
    metric: str,
    value: float | None,
    unit: str,
    statistic: str = "mean",
    n: int | None = None,
) -> dict | None:
    """A native Measurement dict, or None when the value is missing or not finite."""
    v = num(value)
    if v is None:
        return None
    m = {"workload": workload, "metric": metric, "value": v, "unit": unit, "statistic": statistic}
    if concurrency is not None:
        m["concurrency"] = concurrency
    if n is not None and n >= 1:
        m["n"] = n
    return m


def ms_factor(unit: Any) -> float | None:
    """Factor turning a duration in `unit` into milliseconds (None for unknown units)."""
    u = str(unit).strip().lower() if unit is not None else ""
    return {
        "ms": 1.0,
        "msec": 1.0,
        "milliseconds": 1.0,
        "s": 1000.0,
        "sec": 1000.0,
        "secs": 1000.0,
        "seconds": 1000.0,
        "us": 1e-3,
        "µs": 1e-3,
        "microseconds": 1e-3,
        "ns": 1e-6,
        "nanoseconds": 1e-6,
    }.get(u)


def rate_ok(unit: Any, kind: str) -> bool:
    """Whether a harness's rate unit is tokens/s (kind 'tok') or requests/s (kind 'req')."""
    u = str(unit).strip().lower().replace(" ", "") if unit is not None else ""
    if kind == "tok":
        return u in (
            "tokens/sec",
            "tokens/s",
            "tok/s",
            "tokens/second",
            "tokens/sec/user",
            "tok/s/user",
            "tokens/s/user",
        )
    return u in ("requests/sec", "requests/s", "req/s", "requests/second")


# --- failed requests known only as counts ---------------------------------------------------


def count_only_requests(n: int, workload: str, concurrency: int | None, error: str | None = None) -> list[dict]:
    """`n` request records without timings: failed ones (`error` given) or successful ones.

    For a harness that keeps requests only as counts (a summary-only export), so the request
    table still shows how many requests there were and how many failed; with no timings they
    add nothing to any latency or throughput figure (benchreport.stats.cells reads only timed
    records). The importer says so in the run's notes.
    """
    rec: dict = {"workload": workload, "counted_only": True}
    if concurrency is not None:
        rec["concurrency"] = concurrency
    if error is not None:
        rec.update(finish_reason="error", error=short_text(error) or "failed")
    return [dict(rec) for _ in range(max(0, n))]


def failed_from_counts(
    errors: list[tuple[str, int]], total: int | None, workload: str, concurrency: int | None
) -> list[dict]:
    """Failed-request records from a harness's error tally [(error text, count)], topped up to
    `total` (the harness's failed count) with a generic text when the tally says less."""
    out: list[dict] = []
    for text, n in errors:
        out += count_only_requests(n, workload, concurrency, text)
    if total is not None and total > len(out):
        out += count_only_requests(
            total - len(out), workload, concurrency, "failed (counted by the harness; no error text kept)"
        )
    return out


# --- checks against the harness's own figures: Check and check_notes in _figure_checks.py ----


def linear_quantile(values: list[float], q: float) -> float:
    """The q-quantile with linear interpolation between order statistics (numpy's default)."""
    v = sorted(values)
    pos = (len(v) - 1) * q
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def statistic_of(values: list[float], statistic: str) -> float | None:
    """mean or pNN of the values (None when there are none)."""
    vals = [v for v in values if v is not None and math.isfinite(v)]
    if not vals:
        return None
    if statistic == "mean":
        return sum(vals) / len(vals)
    return linear_quantile(vals, int(statistic[1:]) / 100.0)


def request_values(requests: list[dict], field_: str) -> list[float]:
    """A field of the successful requests that have it (failed records are not results)."""
    return [r[field_] for r in requests if r.get("finish_reason") not in FAILED_REASONS and field_ in r]


#: finish reasons of requests whose figures are not results (benchreport.stats.cells.failed_mask)
FAILED_REASONS = ("error", "cancelled", "incomplete")


def successful_count(requests: list[dict]) -> int:
    """How many of the request records are not failed (no error, no failing finish reason)."""
    return sum(1 for r in requests if r.get("finish_reason") not in FAILED_REASONS and "error" not in r)


# --- drafts and finishing -------------------------------------------------------------------


@dataclass
class Draft:
    """What one harness invocation's file(s) say, before seat, date and pass are settled.

    Measurement and request workloads hold only a suffix ("" or "-2rps"); `finish` prefixes the
    base workload ("decode" unless the manifest names another).
    """

    source: SourceFile
    harness: dict
    measurements: list[dict] = field(default_factory=list)
    requests: list[dict] = field(default_factory=list)
    exams: list[dict] = field(default_factory=list)
    events: list[dict] = field(default_factory=list)  # native Events (e.g. a result the harness ruled invalid)
    model: str | None = None  # model id as the file names it
    model_where: str = "model id"  # how to describe where it came from
    date: str | None = None  # ISO date(-time) from the file's own timestamp
    date_text: str | None = None  # the file's own date when it could not be read (said so)
    timestamp: float | None = None  # POSIX seconds, for pass order
    warmup_excluded: bool | None = None
    pass_: int | None = None  # pass the harness itself numbered (AIPerf trials)
    pass_note: str | None = None  # an assumption behind pass_ (e.g. from a folder name)
    concurrency_key: tuple = ()
    suffix: str | None = None  # run id suffix when one file gives several runs
    extra_paths: list = field(default_factory=list)  # twins read into this run (manifest lookup)
    notes: list[str] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)  # the harness's figures checked against ours
    source_format: str = ""
    #: what the run sent, as the harness records it (the native `load`; benchreport.conditions)
    load: dict = field(default_factory=dict)
    #: the seat's configuration as the files record it (CONFIG_KEYS, plus engine arguments and sweep
    #: parameters by their own names): runs whose recorded configurations differ are never one seat
    config: dict = field(default_factory=dict)
    #: the seat was named by a manifest (the user's word: never split by `_apart_by_name`)
    seat_named: bool = False

    def set_concurrency_key(self) -> None:
        keys = {(m.get("workload", ""), m.get("concurrency")) for m in self.measurements}
        keys |= {(r.get("workload", ""), r.get("concurrency")) for r in self.requests}
        keys |= {("exam", e.get("benchmark"), e.get("dimension")) for e in self.exams}
        self.concurrency_key = tuple(sorted(keys, key=repr))


def clean_load(load: dict, harness: dict) -> dict:
    """A draft's load description as the native format takes it: no empty values, token targets
    with numbers only, the endpoint in words (benchreport.conditions.normal_endpoint), the answer
    cap the harness section states (they must agree)."""
    out: dict = {}
    for k, v in (load or {}).items():
        if isinstance(v, dict):
            v = {kk: vv for kk, vv in v.items() if vv is not None and not (isinstance(vv, float) and vv != vv)}
        if v is None or v == {} or v == "":
            continue
        out[k] = v
    endpoint = conditions.normal_endpoint(out.pop("endpoint", None))
    if endpoint:
        out["endpoint"] = endpoint
    if harness.get("max_tokens") is not None:
        out["max_tokens"] = harness["max_tokens"]
    return out


def token_target(mean=None, stdev=None, min_=None, max_=None) -> dict:
    """A token-length target from a harness's numbers (anything not a finite number left out)."""
    vals = {"mean": num(mean), "stdev": num(stdev), "min": num(min_), "max": num(max_)}
    vals = {k: v for k, v in vals.items() if v is not None and v >= 0}
    if "stdev" in vals and vals["stdev"] == 0:
        del vals["stdev"]
    return vals


def sanitise_id(text: str, limit: int = 128) -> str:
    """Characters outside [A-Za-z0-9._-] become '_' (runs of them one '_'); at most `limit` long."""
    out = ID_BAD.sub("_", text).strip("_") or "x"
    return out[:limit]


def make_run_id(harness_key: str, source: SourceFile, suffix: str | None = None) -> str:
    """`<harness>-<path relative to the given folder>-<sha256[:10]>[-suffix]`, pattern-safe.

    The content hash makes it unique and stable; the path makes it readable; a long path keeps
    its end (the file name).
    """
    rel = source.relative
    rel = re.sub(r"\.(jsonl?|json)$", "", rel, flags=re.I)
    tail = f"-{source.sha256[:10]}" + (f"-{sanitise_id(suffix, 24)}" if suffix else "")
    head = f"{harness_key}-"
    room = 128 - len(head) - len(tail)
    slug = ID_BAD.sub("_", rel.replace("/", ".")).strip("_.") or "file"
    if len(slug) > room:
        slug = slug[-room:].lstrip("_.-") or "file"
    return head + slug + tail


def folder_name(source: SourceFile) -> str:
    """The folder a file lies in, as the seat of a file that names no model is called: its path
    below the folder the user gave, led by that folder's name ('sglang-runs/node-a'), so two
    folders of one name in different places are never one seat."""
    root = source.root
    parent = source.path.parent
    if root is not None:
        try:
            rel = parent.relative_to(root).as_posix()
        except ValueError:
            rel = ""
        base = root.name or "runs"
        return base if rel in ("", ".") else f"{base}/{rel}"
    return parent.name or "runs"


#: configuration keys in the order a seat's id and name show them, with how each is written
CONFIG_KEYS = (
    ("system_id", "{}"),
    ("submitter", "{}"),
    ("system", "{}"),
    ("hardware", "{}"),
    ("accelerators", "{}x"),
    ("nodes", "{} nodes"),
    ("tensor_parallel", "tp{}"),
    ("pipeline_parallel", "pp{}"),
    ("data_parallel", "dp{}"),
    ("expert_parallel", "ep{}"),
    ("quantisation", "{}"),
    ("engine", "{}"),
    ("engine_version", "{}"),
)
_CONFIG_ORDER = {k: i for i, (k, _fmt) in enumerate(CONFIG_KEYS)}
#: what an inferred seat id shows of a configuration that names its system (`system_id`)
ID_KEYS = ("system_id", "submitter")


def clean_config(config: dict) -> dict:
    """A draft's recorded configuration with empty values left out and every value a short
    string, number or boolean (what a seat's settings can hold and its id can show)."""
    out = {}
    for key, value in (config or {}).items():
        if value is None or value == "" or (isinstance(value, float) and not math.isfinite(value)):
            continue
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, (str, int, float, bool)):
            value = str(value)
        if isinstance(value, str):
            value = one_line(value)[:120]
        out[str(key)[:60]] = value
    return out


def config_words(config: dict) -> str:
    """A recorded configuration in a few words, in CONFIG_KEYS order then the rest by name
    ('8x H100-SXM-80GB, tp4, vllm 0.6.3, max_num_seqs=32')."""
    parts = []
    acc = config.get("accelerators")
    for key in sorted(config, key=lambda k: (_CONFIG_ORDER.get(k, len(_CONFIG_ORDER)), k)):
        value = config[key]
        if key == "accelerators" and "hardware" in config:
            continue
        if key == "hardware" and acc is not None:
            parts.append(f"{acc}x {value}")
        elif key == "engine_version" and "engine" in config:
            parts[-1] = f"{parts[-1]} {value}" if parts else str(value)
        elif key in _CONFIG_ORDER:
            parts.append(dict(CONFIG_KEYS)[key].format(value))
        else:
            parts.append(f"{key}={value}")
    return ", ".join(parts)


def _apply_config(seat: dict, config: dict) -> None:
    """The recorded configuration into the seat's fields where the run format has one
    (quantisation, engine, placement.tensor_parallel), and whole into its settings; what the
    manifest gave is kept."""
    if "quantisation" in config:
        seat.setdefault("quantisation", str(config["quantisation"])[:200])
    if "engine" in config:
        engine = str(config["engine"]) + (f" {config['engine_version']}" if "engine_version" in config else "")
        seat.setdefault("engine", engine[:200])
    tp = config.get("tensor_parallel")
    if isinstance(tp, int) and not isinstance(tp, bool) and tp >= 1:
        placement = dict(seat.get("placement") or {})
        placement.setdefault("tensor_parallel", tp)
        seat["placement"] = placement
    settings = dict(seat.get("settings") or {})
    for key, value in config.items():
        settings.setdefault(key, value)
    seat["settings"] = settings


def _seat_from(draft: Draft, applied: _manifest.Applied) -> tuple[dict | None, list[str], str | None]:
    """Seat object and the assumptions behind it. A file whose harness records no model (SGLang's
    bench_serving) is never refused for that alone: its seat is named from the manifest, else from
    its folder (`folder_name`), and the assumption says so.

    Identity from evidence: where the files record the seat's configuration (`Draft.config`:
    hardware, parallelism, quantisation, engine, engine arguments, sweep parameters), an inferred
    seat id carries it ('<model>--<configuration>'), so runs whose recorded configurations differ
    are never passes of one seat, however the model id reads; a manifest's seat id is the user's
    word and is kept."""
    assumptions = []
    seat = dict(applied.seat)
    config = clean_config(draft.config)
    if "model" not in seat:
        if draft.model:
            seat["model"] = draft.model[:200]
        else:
            folder = folder_name(draft.source)[:200]
            seat["model"] = f"not recorded ({folder})"
            if "id" not in seat:
                seat["id"] = sanitise_id(folder)
            assumptions.append(
                f"the harness recorded no model name: seat '{seat['id']}' named after the folder "
                f"'{folder}' (name the seat and model in a benchreport.yaml manifest)"
            )
    if "id" not in seat:
        basis = seat["model"]
        where = "the manifest's model" if "model" in applied.seat else f"{draft.model_where}"
        if config:
            words = config_words(config)
            # a submission names its system (MLPerf's results folder): that name and the submitter
            # are its identity; the whole configuration is in the seat's settings
            short = {k: config[k] for k in ID_KEYS if k in config} if "system_id" in config else config
            seat["id"] = configured_id(basis, config_words(short))
            assumptions.insert(
                0,
                f"seat id inferred from {where} '{basis[:80]}' and the configuration the files record ({words[:200]})",
            )
        else:
            seat["id"] = sanitise_id(basis)
            assumptions.insert(0, f"seat id inferred from {where} '{basis[:80]}'")
    if config:
        _apply_config(seat, config)
    return seat, assumptions, None


def configured_id(model: str, words: str) -> str:
    """'<model>--<configuration words>' as a seat id (pattern-safe, at most 128 characters; a
    long configuration keeps a digest of the whole so two long ones never meet)."""
    head = sanitise_id(model, 80)
    tail = sanitise_id(words.replace(", ", "-").replace(" ", ""), 400)
    full = f"{head}--{tail}"
    if len(full) <= 128:
        return full
    digest = hashlib.sha256(words.encode()).hexdigest()[:8]
    return f"{head}--{tail[: 128 - len(head) - 3 - 9]}-{digest}"


def _manifest_for(d: Draft, index) -> _manifest.Applied:
    """What the manifests say about a draft's file (or, when nothing, about its other paths)."""
    applied = index.lookup(d.source.path)
    for extra in d.extra_paths:
        if not applied:
            applied = index.lookup(extra)
    return applied


def _run_date(d: Draft, fields: dict, assumptions: list[str]) -> str | None:
    """The run's date: the manifest's, else the file's own, else the file's modification time (an
    assumption said; the draft's timestamp taken from it too when it has none)."""
    date = fields.get("date")
    if date is None:
        date = d.date
        if date is None:
            date, t = mtime_iso(d.source)
            if d.timestamp is None:
                d.timestamp = t
            assumptions.append(
                "date taken from the file's modification time (the file has no timestamp of its own)"
                if not d.date_text
                else f"date taken from the file's modification time (its own date "
                f"'{d.date_text[:40]}' is not one benchreport reads)"
            )
    return date


def _run_notes(d: Draft, fields: dict, applied: _manifest.Applied) -> str | None:
    """The run's notes: the importer's, the figure checks', the manifest's, and where the manifest
    entries came from; each a sentence."""
    notes = list(d.notes) + check_notes(d.checks)
    if "notes" in fields:
        notes.append(fields["notes"])
    if applied.sources:
        notes.append("manifest: " + "; ".join(applied.sources)[:500])
    return " ".join(n if n.endswith(".") else n + "." for n in notes) if notes else None


def _run_object(d: Draft, fields: dict, applied: _manifest.Applied, seat: dict, date: str) -> dict[str, Any]:
    """The native run document of a draft (without its run id and pass): the manifest's probe,
    group, warm-up and base workload applied."""
    base = fields.get("workload", BASE_WORKLOAD)
    harness = dict(d.harness)
    if "probe" in fields:
        harness["probe"] = fields["probe"]
    if "harness_group" in fields:
        harness["group"] = fields["harness_group"]
    obj: dict[str, Any] = {"format": FORMAT, "date": date, "seat": seat, "harness": harness}
    warm = fields.get("warmup_excluded", d.warmup_excluded)
    if warm is not None:
        obj["warmup_excluded"] = warm
    load = clean_load(d.load, harness)
    if load:
        obj["load"] = load
    if d.events:
        obj["events"] = d.events
    if d.measurements:
        obj["measurements"] = [{**m, "workload": base + m.get("workload", "")} for m in d.measurements]
    if d.requests:
        obj["requests"] = [{**r, "workload": base + r.get("workload", "")} for r in d.requests]
    if d.exams:
        obj["exams"] = d.exams
    notes = _run_notes(d, fields, applied)
    if notes:
        obj["notes"] = notes
    return obj


def _prepare(d: Draft, index, outcome: ImportOutcome) -> tuple | None:
    """(draft, run document, manifest fields, assumptions) of one draft, or None when it is
    refused (a manifest unclear about it, no seat, no date)."""
    if not d.concurrency_key:
        d.set_concurrency_key()
    applied = _manifest_for(d, index)
    if applied.problems:
        outcome.refused.append(
            Refusal(
                d.source.display,
                "$",
                "expected a manifest that says clearly which "
                "seat, pass and date this file measured; " + "; ".join(applied.problems),
            )
        )
        return None
    seat, seat_notes, error = _seat_from(d, applied)
    d.seat_named = "id" in applied.seat
    if error:
        outcome.refused.append(Refusal(d.source.display, "$", error))
        return None
    assumptions = list(seat_notes)
    fields = applied.fields
    date = _run_date(d, fields, assumptions)
    if date is None:
        outcome.refused.append(
            Refusal(
                d.source.display,
                "$",
                "expected a date for the run; the file has "
                "none and its modification time is unreadable; add one in a manifest",
            )
        )
        return None
    obj = _run_object(d, fields, applied, seat, date)
    assumptions.extend(d.assumptions)
    assumptions.extend(unusable_values(d.source.doc).sentences())
    assumptions = [a.replace(";", ",") for a in assumptions]  # the runs table joins them with "; "
    return d, obj, fields, assumptions


def finish(
    drafts: list[Draft], manifests: list, harness_key: str, outcome: ImportOutcome | None = None
) -> ImportOutcome:
    """Apply manifests, infer seat/date/pass, build run ids; one ImportedRun per draft."""
    outcome = outcome or ImportOutcome()
    index, manifest_refusals = _manifest.index_for(manifests)
    outcome.refused.extend(manifest_refusals)
    ready = []
    seen: dict[tuple, SourceFile] = {}
    for d in drafts:
        key = (d.source.sha256, d.suffix)
        if key in seen and seen[key].path != d.source.path:
            skip(outcome, d.source, f"identical content to {seen[key].display}: read once, from there")
            continue
        seen.setdefault(key, d.source)
        prepared = _prepare(d, index, outcome)
        if prepared is not None:
            ready.append(prepared)
    _apart_by_name(ready, harness_key)
    _assign_passes(ready, harness_key)
    for d, obj, fields, assumptions in ready:
        obj["run_id"] = make_run_id(harness_key, d.source, d.suffix)
        base = fields.get("workload", BASE_WORKLOAD)
        differ = [c.as_dict(base) for c in d.checks if not c.agrees]
        outcome.runs.append(ImportedRun(obj, d.source, d.source_format or harness_key, assumptions, checks=differ))
    return outcome


#: path tokens that tell repetitions apart, not configurations: numbers (timestamps, dates, counters),
#: run/pass/trial counters, hashes and ids
_COUNTER = re.compile(
    r"^(\d+|(run|pass|trial|rep|repeat|repetition|iter|iteration|attempt|try|round|seed|r|p|t)"
    r"\d+|[0-9a-f]{8,}|\d+(am|pm|z)?)$",
    re.I,
)
_TOKEN = re.compile(r"[/_\-.\s=+,@]+")


def _tokens(path: str) -> list[str]:
    return [t.lower() for t in _TOKEN.split(re.sub(r"\.(jsonl?|json\.gz|txt)$", "", path, flags=re.I)) if t]


def _apart_by_name(ready: list, harness_key: str) -> None:
    """Runs whose passes would be inferred (nothing numbered them) but whose file paths differ in
    more than counters, dates and hashes ('..._tp2_...' against '..._tp4_...') are not repetitions
    of one configuration: each keeps its seat apart, named by the words that tell its file from the
    others ('<seat>--tp2'), and says so. The words carry over to that seat's other runs whose path
    holds them. A manifest's seat, or a pass the harness or the manifest numbered, is never split."""
    groups: dict[tuple, list] = {}
    for item in ready:
        d, obj, fields, _a = item
        if "pass" in fields or d.pass_ is not None or d.seat_named:
            continue
        groups.setdefault(_pass_group(d, obj, fields, harness_key), []).append(item)
    words_of: dict[str, dict[tuple, list]] = {}  # seat -> distinguishing words -> runs
    for items in groups.values():
        if len(items) < 2:
            continue
        toks = [_tokens(it[0].source.relative) for it in items]
        common = set.intersection(*map(set, toks))
        own = [tuple(t for t in dict.fromkeys(ts) if t not in common and not _COUNTER.match(t)) for ts in toks]
        if len(set(own)) < 2:
            continue  # the paths differ only in counters, dates and hashes: repetitions
        for item, words in zip(items, own):
            words_of.setdefault(item[1]["seat"]["id"], {})[words] = []
    for item in ready:
        d, obj, _f, assumptions = item
        kinds = words_of.get(obj["seat"]["id"])
        if not kinds:
            continue
        mine = set(_tokens(d.source.relative))
        match = [w for w in kinds if w and set(w) <= mine]
        if len(match) != 1:
            continue
        words = match[0]
        base = obj["seat"]["id"]
        obj["seat"] = {**obj["seat"], "id": sanitise_id(f"{base[:100]}--{'-'.join(words)}")}
        assumptions.append(
            f"kept apart from other runs of '{base[:80]}' as seat '{obj['seat']['id']}': their "
            f"files differ by '{' '.join(words)}' and nothing records that they are repetitions of "
            "one configuration (name the seat in a benchreport.yaml manifest, or number the passes)"
        )


def _pass_group(d: Draft, obj: dict, fields: dict, harness_key: str) -> tuple:
    """The runs whose passes are numbered together: one seat, day, harness, probe and recorded load
    (benchreport.conditions: runs of another load are another cell), base workload and
    workload/concurrency set."""
    return (
        obj["seat"]["id"],
        obj["date"][:10],
        harness_key,
        obj["harness"].get("probe"),
        conditions.fingerprint(obj.get("load")),
        fields.get("workload"),
        d.concurrency_key,
    )


def _assign_passes(ready: list, harness_key: str) -> None:
    """Pass from the manifest, else one the importer read from the file (`Draft.pass_`), else by
    timestamp order among runs of the same seat, day, harness, probe, load and workload/concurrency
    set (stated as an assumption). Passes the manifest gave are not reused by the inference."""
    groups: dict[tuple, list] = {}
    for item in ready:
        d, obj, fields, assumptions = item
        if "pass" in fields:
            obj["pass"] = fields["pass"]
            continue
        if d.pass_ is not None:
            obj["pass"] = d.pass_
            if d.pass_note:
                assumptions.append(d.pass_note)
            continue
        groups.setdefault(_pass_group(d, obj, fields, harness_key), []).append(item)
    taken: dict[tuple, set] = {}
    for d, obj, fields, _a in ready:
        if "pass" in obj:
            taken.setdefault(_pass_group(d, obj, fields, harness_key), set()).add(obj["pass"])
    for key, items in groups.items():
        items.sort(
            key=lambda it: (
                it[0].timestamp if it[0].timestamp is not None else math.inf,
                it[0].source.relative,
                it[0].suffix or "",
            )
        )
        used = taken.get(key, set())
        n = 0
        for d, obj, _f, assumptions in items:
            n += 1
            while n in used:
                n += 1
            obj["pass"] = n
            if len(items) == 1 and not used:
                assumptions.append(f"pass {n} assumed (the only run of this seat, load, workload/concurrency and day)")
            else:
                basis = "start time" if d.timestamp is not None else "path"
                assumptions.append(
                    f"pass {n} inferred from the runs' {basis} order among "
                    f"{len(items)} runs of this seat, load, workload/concurrency and day"
                )


def guarded(outcome: ImportOutcome, source: SourceFile, harness: str, build, *args):
    """`build(*args)`, or None with the file refused when it fails on an unexpected shape (one odd
    file must not stop the others of its harness from loading)."""
    try:
        return build(*args)
    except Exception as exc:  # noqa: BLE001 - reported as a refusal naming the file
        outcome.refused.append(
            Refusal(
                source.display,
                "$",
                (
                    f"expected a readable {harness} file; the importer could not read this one "
                    f"({type(exc).__name__}: {str(exc)[:120]}); found {describe(source.doc, source.path)}"
                )[:600],
            )
        )
        return None


def skip(outcome: ImportOutcome, source: SourceFile, reason: str) -> None:
    outcome.skipped.append(Skipped(source.display, reason))


def mean(values: Iterable[float]) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None
