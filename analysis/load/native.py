"""The native run file `benchreport.run/1` (spec/run-format.md): typed decoding plus the rules
a schema cannot say.

Decoding uses msgspec Structs: one pass over the bytes validates types, enums, ranges and
patterns and reports the first problem with its JSON path (`$.measurements[3].unit`), at
several times the speed of json.load. `check_rules` then applies the cross-field rules
(units match metrics, counts within totals, finite numbers, dates that are dates). The JSON
Schema kept in `analysis/schema/run-1.schema.json` is generated from these Structs
(`python -m analysis schema`) and tested to agree with them.
"""
from __future__ import annotations

import datetime as _dt
import json
import math
import re
from typing import Annotated, Any, Literal, Optional

import msgspec

from analysis.columns import METRICS
from analysis.load.errors import RunFileError

FORMAT = "benchreport.run/1"
ID_PATTERN = r"^[A-Za-z0-9._-]{1,128}$"

#: the largest integer any field may hold: the tidy tables' columns are int64 (Parquet, pandas)
MAX_INT = 2**63 - 1

Id = Annotated[str, msgspec.Meta(pattern=ID_PATTERN, description="[A-Za-z0-9._-]{1,128}")]
PosInt = Annotated[int, msgspec.Meta(ge=1, le=MAX_INT)]
NonNegInt = Annotated[int, msgspec.Meta(ge=0, le=MAX_INT)]
NonNegFloat = Annotated[float, msgspec.Meta(ge=0)]
Metric = Literal[tuple(METRICS)]  # type: ignore[valid-type]
Statistic = Literal["mean", "p50", "p90", "p95", "p99", "min", "max"]
Role = Literal["incumbent", "candidate", "reference"]
EventKind = Literal["fault", "crash", "defect", "note"]


class Base(msgspec.Struct, omit_defaults=True, forbid_unknown_fields=False, gc=False):
    """Readers ignore fields they do not know (spec: fields may be added later)."""


class Placement(Base):
    nodes: Optional[PosInt] = None
    gpus_per_node: Optional[PosInt] = None
    gpu_memory_bytes: Optional[Annotated[float, msgspec.Meta(gt=0)]] = None
    tensor_parallel: Optional[PosInt] = None
    interconnect: Optional[str] = None


class Component(Base):
    name: str
    role: Optional[str] = None
    license: Optional[str] = None


class Seat(Base):
    id: Id
    model: Annotated[str, msgspec.Meta(min_length=1)]
    quantisation: Optional[str] = None
    engine: Optional[str] = None
    role: Role = "candidate"
    checkpoint_bytes: Optional[Annotated[float, msgspec.Meta(gt=0)]] = None
    placement: Optional[Placement] = None
    settings: Optional[dict[str, Any]] = None
    components: Optional[list[Component]] = None


class Harness(Base):
    name: Annotated[str, msgspec.Meta(min_length=1)]
    version: Optional[str] = None
    probe: Optional[str] = None
    max_tokens: Optional[PosInt] = None
    temperature: Optional[NonNegFloat] = None
    thinking: Optional[bool] = None
    #: extension: runs whose harnesses share a group measured the same thing (one cell)
    group: Optional[str] = None


class Measurement(Base):
    workload: Annotated[str, msgspec.Meta(min_length=1)]
    metric: Metric
    value: float
    unit: str
    concurrency: Optional[PosInt] = None
    statistic: Statistic = "mean"
    n: Optional[PosInt] = None
    context_tokens: Optional[PosInt] = None
    fresh_prompt: Optional[bool] = None
    condition: Optional[str] = None
    ci_low: Optional[float] = None
    ci_high: Optional[float] = None
    ci_level: Optional[Annotated[float, msgspec.Meta(gt=0, lt=1)]] = None


class Request(Base):
    workload: Annotated[str, msgspec.Meta(min_length=1)]
    concurrency: Optional[PosInt] = None
    prompt_tokens: Optional[NonNegInt] = None
    cached_prompt_tokens: Optional[NonNegInt] = None
    output_tokens: Optional[NonNegInt] = None
    reasoning_tokens: Optional[NonNegInt] = None
    content_chars: Optional[NonNegInt] = None
    reasoning_chars: Optional[NonNegInt] = None
    ttft_ms: Optional[NonNegFloat] = None
    e2e_latency_ms: Optional[NonNegFloat] = None
    itl_ms: Optional[NonNegFloat] = None
    finish_reason: Optional[str] = None
    error: Optional[str] = None
    #: when the request was sent (ms from the run's start, or since the epoch): keeps send order
    start_ms: Optional[NonNegFloat] = None


class ExamItem(Base):
    id: Annotated[str, msgspec.Meta(min_length=1)]
    correct: bool


class Exam(Base):
    benchmark: Annotated[str, msgspec.Meta(min_length=1)]
    dimension: Optional[str] = None
    items: Optional[list[ExamItem]] = None
    correct: Optional[NonNegInt] = None
    total: Optional[PosInt] = None
    score: Optional[Annotated[float, msgspec.Meta(ge=0, le=100)]] = None
    measured_on: Optional[str] = None
    placement_note: Optional[str] = None
    #: extension: the scores come from an earlier run than this one, date unknown
    from_earlier_run: Optional[bool] = None


class Event(Base):
    kind: EventKind
    message: str
    concurrency: Optional[PosInt] = None
    reproduced: Optional[bool] = None


class Run(Base):
    format: str
    run_id: Id
    date: str
    seat: Seat
    harness: Harness
    # `pass` is a Python keyword: stored as pass_, named "pass" in JSON.
    pass_: PosInt = msgspec.field(name="pass")
    warmup_excluded: Optional[bool] = None
    measurements: Optional[list[Measurement]] = None
    requests: Optional[list[Request]] = None
    exams: Optional[list[Exam]] = None
    events: Optional[list[Event]] = None
    notes: Optional[str] = None


class _Sniff(msgspec.Struct, forbid_unknown_fields=False):
    """Reads only the `format` field (the rest is skipped without building objects)."""

    format: Any = None


_DECODER = msgspec.json.Decoder(Run)
_SNIFFER = msgspec.json.Decoder(_Sniff)


def sniff_format(data: bytes) -> Any:
    """The `format` field of a JSON object, or None; raises msgspec errors on bad JSON."""
    return _SNIFFER.decode(data).format


def decode(data: bytes) -> Run:
    """Decode and fully validate one native run file's bytes (raises RunFileError)."""
    try:
        run = _DECODER.decode(data)
    except msgspec.ValidationError as exc:
        raise _from_msgspec(exc, lambda: msgspec.json.decode(data)) from None
    check_rules(run, from_json=True)
    return run


def from_object(obj: Any) -> Run:
    """Validate a run given as Python objects (what the harness importers build)."""
    try:
        run = msgspec.convert(obj, Run)
    except msgspec.ValidationError as exc:
        raise _from_msgspec(exc, lambda: obj) from None
    check_rules(run)
    return run


def _from_msgspec(exc: msgspec.ValidationError, document) -> RunFileError:
    """Our wording for msgspec's message, with the value found when msgspec leaves it out."""
    text = str(exc)
    path = "$"
    if " - at `" in text:
        text, _, rest = text.partition(" - at `")
        path = rest.rstrip("`")
    message = _plain(text, path)
    if "got" not in message and not message.startswith("missing"):
        try:
            found = _at_path(document(), path)
        except Exception:  # the value is a courtesy; the path and expectation are the message
            found = _MISSING
        if found is not _MISSING:
            shown = json.dumps(found) if not isinstance(found, (dict, list)) else type(found).__name__
            message += f", got {shown[:80]}"
    return RunFileError(path, message)


_MISSING = object()
_PATH_PART = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


def _at_path(doc, path: str):
    """The value at a msgspec JSON path such as `$.measurements[3].unit`."""
    for key, index in _PATH_PART.findall(path[1:]):
        doc = doc[int(index)] if index else doc[key]
    return doc


_ALLOWED = {
    "metric": tuple(METRICS),
    "statistic": ("mean", "p50", "p90", "p95", "p99", "min", "max"),
    "role": ("incumbent", "candidate", "reference"),
    "kind": ("fault", "crash", "defect", "note"),
}


def _plain(text: str, path: str = "$") -> str:
    """msgspec's 'Expected `int` >= 1, got `0`' into our 'expected ..., got ...' wording."""
    text = text.replace("`", "").replace(" | null", "")
    if text.startswith("Expected "):
        text = "expected " + text[len("Expected "):]
    if text.startswith("expected str matching regex"):
        text = "expected an id of 1 to 128 letters, digits, '.', '_' or '-' (no '/' or spaces)" + (
            text[text.index(", got"):] if ", got" in text else "")
    if text.startswith("Invalid enum value "):
        field = path.rsplit(".", 1)[-1]
        allowed = _ALLOWED.get(field)
        found = text[len("Invalid enum value "):]
        text = (f"expected one of {', '.join(allowed)}, got {found}" if allowed
                else f"unknown value {found}")
    if text.startswith("Object missing required field "):
        text = "missing required field " + text[len("Object missing required field "):]
    if text.startswith(f"expected int <= {MAX_INT}"):
        text = "expected an integer below 2^63" + text[len(f"expected int <= {MAX_INT}"):]
    if text == "Number out of range":
        text = "expected a finite number, got one out of range (Infinity)"
    return text


def unknown_format_message(found) -> str:
    """Unknown versions are refused by name (pyperf refuses unknown file versions likewise)."""
    return (f'expected "{FORMAT}" (the only version this release reads), '
            f"got {json.dumps(found)[:80]}")


def is_iso_date(text) -> bool:
    """True for an ISO date ("2026-09-10") or date-time ("2026-09-10T08:00:00Z")."""
    if not isinstance(text, str) or len(text) > 40:
        return False
    try:
        if len(text) == 10:
            _dt.date.fromisoformat(text)
        else:
            _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def _parse_date(value: str, path: str) -> None:
    if not is_iso_date(value):
        raise RunFileError(path, f'expected an ISO date such as "2026-09-10", got "{value}"')


def _finite(value: Optional[float], path: str) -> None:
    if value is not None and not math.isfinite(value):
        raise RunFileError(path, f"expected a finite number, got {value}")


def check_rules(run: Run, *, from_json: bool = False) -> None:
    """Rules of spec/run-format.md that types alone cannot say; first violation raises.

    `from_json`: the run was decoded from JSON text, where msgspec already refused NaN,
    Infinity and out-of-range numbers, so the per-request finiteness checks are skipped.
    """
    if run.format != FORMAT:
        raise RunFileError("$.format", unknown_format_message(run.format))
    _parse_date(run.date, "$.date")
    if not (run.measurements or run.requests or run.exams):
        raise RunFileError("$", "expected at least one of measurements, requests, exams (non-empty), found none")
    seat = run.seat
    if seat.checkpoint_bytes is not None:
        _finite(seat.checkpoint_bytes, "$.seat.checkpoint_bytes")
    if seat.placement is not None and seat.placement.gpu_memory_bytes is not None:
        _finite(seat.placement.gpu_memory_bytes, "$.seat.placement.gpu_memory_bytes")
    for i, m in enumerate(run.measurements or ()):
        base = f"$.measurements[{i}]"
        expected = METRICS[m.metric][0]
        if m.unit != expected:
            raise RunFileError(f"{base}.unit", f'expected "{expected}" for {m.metric}, got "{m.unit}"')
        for name in ("value", "ci_low", "ci_high"):
            _finite(getattr(m, name), f"{base}.{name}")
        if (m.ci_low is None) != (m.ci_high is None):
            raise RunFileError(base, "expected both ci_low and ci_high, or neither")
        if m.ci_low is not None and m.ci_low > m.ci_high:
            raise RunFileError(f"{base}.ci_low", f"expected ci_low <= ci_high, got {m.ci_low} > {m.ci_high}")
    for i, r in enumerate(run.requests or ()):
        if not from_json:
            for name in ("ttft_ms", "e2e_latency_ms", "itl_ms"):
                _finite(getattr(r, name), f"$.requests[{i}].{name}")
        cached, prompt = r.cached_prompt_tokens, r.prompt_tokens
        if cached is not None and prompt is not None and cached > prompt:
            raise RunFileError(f"$.requests[{i}].cached_prompt_tokens",
                               f"expected at most prompt_tokens ({prompt}), got {cached}")
        reasoning, output = r.reasoning_tokens, r.output_tokens
        if reasoning is not None and output is not None and reasoning > output:
            raise RunFileError(f"$.requests[{i}].reasoning_tokens",
                               f"expected at most output_tokens ({output}) since delivered tokens "
                               f"include reasoning, got {reasoning}")
    for i, e in enumerate(run.exams or ()):
        base = f"$.exams[{i}]"
        has_items = e.items is not None
        has_counts = e.correct is not None or e.score is not None
        if has_items == has_counts:
            raise RunFileError(base, "expected either items or correct/total (or score/total), "
                                     + ("got both" if has_items else "got neither"))
        if has_items:
            if not e.items:
                raise RunFileError(f"{base}.items", "expected at least one item, got an empty list")
            seen = set()
            for j, item in enumerate(e.items):
                if item.id in seen:
                    raise RunFileError(f"{base}.items[{j}].id", f'expected unique item ids, got "{item.id}" twice')
                seen.add(item.id)
            if e.total is not None and e.total != len(e.items):
                raise RunFileError(f"{base}.total", f"expected {len(e.items)} (the number of items), got {e.total}")
        else:
            if e.total is None:
                raise RunFileError(f"{base}.total", "expected the number of items (total), found none")
            if e.correct is not None and e.correct > e.total:
                raise RunFileError(f"{base}.correct", f"expected at most total ({e.total}), got {e.correct}")
            if e.score is not None:
                _finite(e.score, f"{base}.score")
        if e.measured_on is not None:
            _parse_date(e.measured_on, f"{base}.measured_on")
