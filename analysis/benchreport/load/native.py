"""The native run file `benchreport.run/1` (spec/run-format.md): typed decoding plus the rules
a schema cannot say.

Decoding uses msgspec Structs: one pass over the bytes validates types, enums, ranges and
patterns and reports the first problem with its JSON path (`$.measurements[3].unit`), at
several times the speed of json.load. `check_rules` then applies the cross-field rules
(units match metrics, counts within totals, finite numbers, dates that are dates). The JSON
Schema kept in `analysis/benchreport/schema/run-1.schema.json` is generated from these Structs
(`python -m benchreport schema`) and tested to agree with them.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from typing import Annotated, Any, Optional

import msgspec
from msgspec import UNSET, UnsetType

from benchreport.columns import METRICS
from benchreport.load import duplicates
from benchreport.load.errors import RunFileError
from benchreport.load.native_load import Load, TokenTarget, check_load
from benchreport.load.native_types import *  # noqa: F401,F403  (the vocabulary, re-exported)
from benchreport.load.native_types import (
    MAX_COMPONENTS,
    MAX_EVENTS,
    MAX_EXAMS,
    MAX_INT,
    MAX_ITEM_ID,
    MAX_ITEMS,
    MAX_MEASUREMENTS,
    MAX_NAME,
    MAX_REQUESTS,
    MAX_SETTINGS_DEPTH,
    MAX_SETTINGS_VALUES,
    MAX_TEXT,
    FORMAT,
    Base,
    EventKind,
    Id,
    Metric,
    Name,
    NonNegFloat,
    NonNegInt,
    OptName,
    PosInt,
    Role,
    Statistic,
    Text,
)
from benchreport.load.native_types import check_text as _check_text, finite as _finite, text_problem

__all__ = [
    "FORMAT",
    "Run",
    "Seat",
    "Harness",
    "Load",
    "TokenTarget",
    "Measurement",
    "Request",
    "Exam",
    "Event",
    "decode",
    "from_object",
    "check_rules",
    "is_iso_date",
    "text_problem",
    "sniff_format",
    "value_at",
]


class Placement(Base):
    nodes: Optional[PosInt] = None
    gpus_per_node: Optional[PosInt] = None
    gpu_memory_bytes: Optional[Annotated[float, msgspec.Meta(gt=0)]] = None
    tensor_parallel: Optional[PosInt] = None
    interconnect: Optional[OptName] = None


class Component(Base):
    name: OptName
    role: Optional[OptName] = None
    license: Optional[OptName] = None


class Seat(Base):
    id: Id
    model: Name
    quantisation: Optional[OptName] = None
    engine: Optional[OptName] = None
    #: UNSET when absent (then "candidate", set by check_rules): a default the encoder would omit
    #: would hide the key from the duplicate-key test (benchreport.load.duplicates)
    role: Annotated[Role, msgspec.Meta(extra_json_schema={"default": "candidate"})] | UnsetType = UNSET
    checkpoint_bytes: Optional[Annotated[float, msgspec.Meta(gt=0)]] = None
    placement: Optional[Placement] = None
    settings: Optional[dict[str, Any]] = None
    components: Optional[Annotated[list[Component], msgspec.Meta(max_length=MAX_COMPONENTS)]] = None


class Harness(Base):
    name: Name
    version: Optional[OptName] = None
    probe: Optional[OptName] = None
    max_tokens: Optional[PosInt] = None
    temperature: Optional[NonNegFloat] = None
    thinking: Optional[bool] = None
    #: extension: runs whose harnesses share a group measured the same thing (one cell)
    group: Optional[OptName] = None


class Measurement(Base):
    workload: Name
    metric: Metric
    value: float
    unit: OptName
    concurrency: Optional[PosInt] = None
    #: UNSET when absent (then "mean", set by check_rules), as Seat.role
    statistic: Annotated[Statistic, msgspec.Meta(extra_json_schema={"default": "mean"})] | UnsetType = UNSET
    n: Optional[PosInt] = None
    context_tokens: Optional[PosInt] = None
    fresh_prompt: Optional[bool] = None
    condition: Optional[OptName] = None
    ci_low: Optional[float] = None
    ci_high: Optional[float] = None
    ci_level: Optional[Annotated[float, msgspec.Meta(gt=0, lt=1)]] = None


class Request(Base):
    workload: Name
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
    finish_reason: Optional[OptName] = None
    error: Optional[Text] = None
    #: when the request was sent (ms from the run's start, or since the epoch): keeps send order
    start_ms: Optional[NonNegFloat] = None
    #: extension: a request the harness counted but did not record (a summary-only export):
    #: it counts towards how many requests there were and failed, and has no figures
    counted_only: Optional[bool] = None
    #: extension: time to the first token of the content field (the answer, after any reasoning),
    #: when the harness timed it apart from ttft_ms (GuideLLM's time_to_first_output_token_ms,
    #: AIPerf's time_to_first_output_token)
    first_content_ms: Optional[NonNegFloat] = None
    #: extension: time to the first streamed chunk that carried a token, when the chunk ttft_ms
    #: timed carried none (a role-only first chunk: the stream had one chunk more than tokens)
    first_token_chunk_ms: Optional[NonNegFloat] = None


class ExamItem(Base):
    id: Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_ITEM_ID)]
    correct: bool


class Exam(Base):
    benchmark: Name
    dimension: Optional[OptName] = None
    items: Optional[Annotated[list[ExamItem], msgspec.Meta(max_length=MAX_ITEMS)]] = None
    correct: Optional[NonNegInt] = None
    total: Optional[PosInt] = None
    score: Optional[Annotated[float, msgspec.Meta(ge=0, le=100)]] = None
    measured_on: Optional[OptName] = None
    placement_note: Optional[Text] = None
    #: extension: the scores come from an earlier run than this one, date unknown
    from_earlier_run: Optional[bool] = None


class Event(Base):
    kind: EventKind
    message: Text
    concurrency: Optional[PosInt] = None
    reproduced: Optional[bool] = None


class Run(Base):
    format: OptName
    run_id: Id
    date: OptName
    seat: Seat
    harness: Harness
    # `pass` is a Python keyword: stored as pass_, named "pass" in JSON.
    pass_: PosInt = msgspec.field(name="pass")
    warmup_excluded: Optional[bool] = None
    load: Optional[Load] = None
    measurements: Optional[Annotated[list[Measurement], msgspec.Meta(max_length=MAX_MEASUREMENTS)]] = None
    requests: Optional[Annotated[list[Request], msgspec.Meta(max_length=MAX_REQUESTS)]] = None
    exams: Optional[Annotated[list[Exam], msgspec.Meta(max_length=MAX_EXAMS)]] = None
    events: Optional[Annotated[list[Event], msgspec.Meta(max_length=MAX_EVENTS)]] = None
    notes: Optional[Text] = None


class _Sniff(msgspec.Struct, forbid_unknown_fields=False):
    """Reads only the `format` field (the rest is skipped without building objects)."""

    format: Any = None


_DECODER = msgspec.json.Decoder(Run)
_SNIFFER = msgspec.json.Decoder(_Sniff)


def sniff_format(data: bytes) -> Any:
    """The `format` field of a JSON object, or None; raises msgspec errors on bad JSON."""
    return _SNIFFER.decode(data).format


def decode(data: bytes) -> Run:
    """Decode and fully validate one native run file's bytes (raises RunFileError); a key given
    twice in an object is refused (`benchreport.load.duplicates`)."""
    try:
        run = _DECODER.decode(data)
    except msgspec.ValidationError as exc:
        raise _from_msgspec(exc, lambda: msgspec.json.decode(data)) from None
    if duplicates.may_have_duplicates(data, run):  # before check_rules fills in defaults
        found = duplicates.find_duplicate(data)
        if found:
            raise RunFileError(*found)
    check_rules(run, from_json=True, text_checked=text_is_safe(data))
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
    if message.startswith("expected at most ") and message.endswith(("characters", "items", "entries")):
        try:
            found = value_at(document(), path)
            message += f", got {len(found)}"
        except Exception:  # the length is a courtesy; the path and the limit are the message
            pass
    elif "got" not in message and not message.startswith("missing"):
        try:
            found = value_at(document(), path)
        except Exception:  # the value is a courtesy; the path and expectation are the message
            found = _MISSING
        if found is not _MISSING:
            shown = json.dumps(found) if not isinstance(found, (dict, list)) else type(found).__name__
            message += f", got {shown[:80]}"
    return RunFileError(path, message)


_MISSING = object()
_PATH_PART = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


def value_at(doc, path: str):
    """The value at a msgspec JSON path such as `$.measurements[3].unit`."""
    for key, index in _PATH_PART.findall(path[1:]):
        doc = doc[int(index)] if index else doc[key]
    return doc


_ALLOWED = {
    "metric": tuple(METRICS),
    "statistic": ("mean", "p50", "p90", "p95", "p99", "min", "max", "not_stated"),
    "role": ("incumbent", "candidate", "reference"),
    "kind": ("fault", "crash", "defect", "note"),
}


def _plain(text: str, path: str = "$") -> str:
    """msgspec's 'Expected `int` >= 1, got `0`' into our 'expected ..., got ...' wording."""
    text = text.replace("`", "").replace(" | null", "")
    if text.startswith("Expected "):
        text = "expected " + text[len("Expected ") :]
    if text.startswith("expected str matching regex"):
        text = "expected an id of 1 to 128 letters, digits, '.', '_' or '-' (no '/' or spaces)" + (
            text[text.index(", got") :] if ", got" in text else ""
        )
    if text.startswith("Invalid enum value "):
        field = path.rsplit(".", 1)[-1]
        allowed = _ALLOWED.get(field)
        found = text[len("Invalid enum value ") :]
        text = f"expected one of {', '.join(allowed)}, got {found}" if allowed else f"unknown value {found}"
    if text.startswith("Object missing required field "):
        text = "missing required field " + text[len("Object missing required field ") :]
    m = re.match(r"expected (str|array|object) of length <= (\d+)$", text)
    if m:
        unit = {"str": "characters", "array": "items", "object": "entries"}[m.group(1)]
        text = f"expected at most {m.group(2)} {unit}"
    if text.startswith(f"expected int <= {MAX_INT}"):
        text = "expected an integer below 2^63" + text[len(f"expected int <= {MAX_INT}") :]
    if text == "Number out of range":
        text = "expected a finite number, got one out of range (Infinity)"
    return text


def unknown_format_message(found) -> str:
    """Unknown versions are refused by name (pyperf refuses unknown file versions likewise)."""
    return f'expected "{FORMAT}" (the only version this release reads), got {json.dumps(found)[:80]}'


#: the only dates accepted: a calendar date, or an RFC 3339 date-time (the offset may be left out
#: for local time, as vLLM writes it). ISO 8601's other forms (basic `20260910T080000`, week
#: `2026-W37-4`, ordinal `2026-253`) are refused: Python's fromisoformat reads them, the tables
#: would not normalise them, and the wrong run would be taken as the latest.
DATE_FORMS = 'an ISO date YYYY-MM-DD or an RFC 3339 date-time such as "2026-09-10T08:00:00Z"'
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATETIME = re.compile(r"(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})?")


def is_iso_date(text) -> bool:
    """True for a calendar date ("2026-09-10") or an RFC 3339 date-time ("2026-09-10T08:00:00Z",
    "2026-09-10T08:00:00.5+02:00", or without the offset); False for anything else."""
    if not isinstance(text, str) or len(text) > 40:
        return False
    try:
        if _DATE.fullmatch(text):
            _dt.date.fromisoformat(text)
            return True
        m = _DATETIME.fullmatch(text)
        if m is None:
            return False
        day, clock, frac, zone = m.groups()
        frac = (frac or "")[:7]  # Python reads at most microseconds
        zone = "+00:00" if zone in ("Z", "z") else (zone or "")
        _dt.datetime.fromisoformat(f"{day}T{clock}{frac}{zone}")
    except ValueError:
        return False
    return True


def _parse_date(value: str, path: str) -> None:
    if not is_iso_date(value):
        raise RunFileError(path, f'expected {DATE_FORMS}, got "{value}"')


def _check_settings(value: Any, path: str, budget: list[int], depth: int = 0, *, text: bool = True) -> None:
    """seat.settings: JSON values, at most MAX_SETTINGS_VALUES of them, MAX_SETTINGS_DEPTH deep
    (and, with `text`, strings and keys free of unsafe characters)."""
    budget[0] -= 1
    if budget[0] < 0:
        raise RunFileError("$.seat.settings", f"expected at most {MAX_SETTINGS_VALUES} values in settings, got more")
    if depth > MAX_SETTINGS_DEPTH:
        raise RunFileError(path, f"expected settings nested at most {MAX_SETTINGS_DEPTH} levels, got deeper")
    if isinstance(value, str):
        if len(value) > MAX_TEXT:
            raise RunFileError(path, f"expected at most {MAX_TEXT} characters, got {len(value)}")
        if text:
            _check_text(value, path)
    elif isinstance(value, float):
        _finite(value, path)
    elif isinstance(value, int) and not isinstance(value, bool):
        if not -MAX_INT - 1 <= value <= MAX_INT:
            raise RunFileError(path, f"expected an integer of at most 2^63 in size, got {value}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_settings(v, f"{path}[{i}]", budget, depth + 1, text=text)
    elif isinstance(value, dict):
        for k, v in value.items():
            if len(k) > MAX_NAME:
                raise RunFileError(path, f"expected keys of at most {MAX_NAME} characters, got {len(k)}")
            if text:
                _check_text(k, f"{path} (a key)")
            _check_settings(v, f"{path}.{k}", budget, depth + 1, text=text)


def _check_run_text(run: Run) -> None:
    """Every string of a run that can reach the report or a table, except the requests' (checked in
    their own loop) and those already held to a pattern, a list or a date."""
    seat, h = run.seat, run.harness
    _check_text(run.notes, "$.notes", free_text=True)
    for name in ("model", "quantisation", "engine"):
        _check_text(getattr(seat, name), f"$.seat.{name}")
    if seat.placement is not None:
        _check_text(seat.placement.interconnect, "$.seat.placement.interconnect")
    for i, c in enumerate(seat.components or ()):
        for name in ("name", "role", "license"):
            _check_text(getattr(c, name), f"$.seat.components[{i}].{name}")
    for name in ("name", "version", "probe"):
        _check_text(getattr(h, name), f"$.harness.{name}")
    for i, m in enumerate(run.measurements or ()):
        _check_text(m.workload, f"$.measurements[{i}].workload")
        _check_text(m.condition, f"$.measurements[{i}].condition")
    for i, e in enumerate(run.exams or ()):
        _check_text(e.benchmark, f"$.exams[{i}].benchmark")
        _check_text(e.dimension, f"$.exams[{i}].dimension")
        _check_text(e.placement_note, f"$.exams[{i}].placement_note", free_text=True)
        for j, item in enumerate(e.items or ()):
            _check_text(item.id, f"$.exams[{i}].items[{j}].id")
    for i, ev in enumerate(run.events or ()):
        _check_text(ev.message, f"$.events[{i}].message", free_text=True)


#: metrics one run may report more than once for the same cell: prefill figures of prompts whose
#: freshness the run does not state, which the prefix-cache flag compares with each other
REPEATABLE_METRICS = frozenset({"prefill_tok_s"})
#: a request's TTFT may exceed its end-to-end latency by this much (clock rounding) and no more
LATENCY_SLACK_MS = 1e-6
#: an exam's score may differ from 100 * correct / total by this much: rounding to whole percent
SCORE_SLACK = 0.5


def _check_plausible(m: Measurement, base: str) -> None:
    """Every metric is a rate, a latency or a duration: never negative; a CI holds its value."""
    if m.value < 0:
        raise RunFileError(
            f"{base}.value", f"expected a value >= 0 for {m.metric} ({METRICS[m.metric][0]}), got {m.value:g}"
        )
    if m.ci_low is not None and not m.ci_low <= m.value <= m.ci_high:
        raise RunFileError(
            f"{base}.value",
            f"expected a value inside its confidence interval [{m.ci_low:g}, {m.ci_high:g}], got {m.value:g}",
        )


def _check_request_text(i: int, r: Request, checked: set) -> None:
    for name in ("workload", "finish_reason", "error"):
        value = getattr(r, name)
        if value is not None and value not in checked:
            _check_text(value, f"$.requests[{i}].{name}", free_text=name == "error")
            checked.add(value)


def text_is_safe(data: bytes) -> bool:
    """True when JSON text cannot hold an unsafe character (ASCII, no escapes, no DEL): then the
    strings need no check one by one (the common case, and the fast one)."""
    return data.isascii() and b"\\" not in data and b"\x7f" not in data


def check_rules(run: Run, *, from_json: bool = False, text_checked: bool = False) -> None:
    """Rules of spec/run-format.md that types alone cannot say; first violation raises.

    `from_json`: the run was decoded from JSON text, where msgspec already refused NaN,
    Infinity and out-of-range numbers, so the per-request finiteness checks are skipped.
    `text_checked`: the text was shown to hold no unsafe character (`text_is_safe`), so the
    strings are not checked one by one.
    """
    if run.format != FORMAT:
        raise RunFileError("$.format", unknown_format_message(run.format))
    _parse_date(run.date, "$.date")
    if not (run.measurements or run.requests or run.exams):
        raise RunFileError("$", "expected at least one of measurements, requests, exams (non-empty), found none")
    if run.seat.role is UNSET:
        run.seat.role = "candidate"
    if not text_checked:
        _check_run_text(run)
    _check_seat_and_load(run, text=not text_checked)
    _check_measurements(run.measurements or ())
    _check_requests(run.requests or (), finite=not from_json, text=not text_checked)
    _check_exams(run.exams or ())


def _check_seat_and_load(run: Run, *, text: bool) -> None:
    """The seat's settings and sizes, and the load the run was measured under."""
    seat = run.seat
    if seat.settings:
        _check_settings(seat.settings, "$.seat.settings", [MAX_SETTINGS_VALUES + 1], text=text)
    if run.load is not None:
        check_load(run, text=text)
    if seat.checkpoint_bytes is not None:
        _finite(seat.checkpoint_bytes, "$.seat.checkpoint_bytes")
    if seat.placement is not None and seat.placement.gpu_memory_bytes is not None:
        _finite(seat.placement.gpu_memory_bytes, "$.seat.placement.gpu_memory_bytes")


def _check_measurement(m: Measurement, base: str) -> None:
    """One measurement: the statistic defaulted, the metric's unit, finite figures, an ordered
    interval given whole, a plausible value."""
    if m.statistic is UNSET:
        m.statistic = "mean"
    expected = METRICS[m.metric][0]
    if m.unit != expected:
        raise RunFileError(f"{base}.unit", f'expected "{expected}" for {m.metric}, got "{m.unit}"')
    for name in ("value", "ci_low", "ci_high"):
        _finite(getattr(m, name), f"{base}.{name}")
    if (m.ci_low is None) != (m.ci_high is None):
        raise RunFileError(base, "expected both ci_low and ci_high, or neither")
    if m.ci_low is not None and m.ci_low > m.ci_high:
        raise RunFileError(f"{base}.ci_low", f"expected ci_low <= ci_high, got {m.ci_low} > {m.ci_high}")
    _check_plausible(m, base)


def _check_measurements(measurements) -> None:
    """Each measurement, and one value per cell (workload, concurrency, metric, statistic,
    condition, context) unless the metric may repeat."""
    cells: dict[tuple, int] = {}
    for i, m in enumerate(measurements):
        base = f"$.measurements[{i}]"
        _check_measurement(m, base)
        key = (m.workload, m.concurrency, m.metric, m.statistic, m.condition, m.context_tokens, m.fresh_prompt)
        if key in cells and m.metric not in REPEATABLE_METRICS:
            raise RunFileError(
                base,
                f"expected one value per workload, concurrency, metric and statistic, "
                f"got a second {m.metric} {m.statistic} for {m.workload}"
                + (f" at concurrency {m.concurrency}" if m.concurrency else "")
                + f" (as $.measurements[{cells[key]}])",
            )
        cells[key] = i


def _check_request_tokens(i: int, r: Request) -> None:
    """Token counts that hold others: cached prompt tokens within the prompt, reasoning tokens
    within the output."""
    cached, prompt = r.cached_prompt_tokens, r.prompt_tokens
    if cached is not None and prompt is not None and cached > prompt:
        raise RunFileError(
            f"$.requests[{i}].cached_prompt_tokens", f"expected at most prompt_tokens ({prompt}), got {cached}"
        )
    reasoning, output = r.reasoning_tokens, r.output_tokens
    if reasoning is not None and output is not None and reasoning > output:
        raise RunFileError(
            f"$.requests[{i}].reasoning_tokens",
            f"expected at most output_tokens ({output}) since delivered tokens include reasoning, got {reasoning}",
        )


def _has_no_figure(r: Request) -> bool:
    """A request with every figure absent or null (and not one only counted)."""
    return (
        r.ttft_ms is None
        and r.e2e_latency_ms is None
        and r.output_tokens is None
        and r.prompt_tokens is None
        and r.itl_ms is None
        and r.finish_reason is None
        and r.error is None
        and r.content_chars is None
        and r.reasoning_chars is None
        and r.cached_prompt_tokens is None
        and r.reasoning_tokens is None
        and not r.counted_only
    )


def _check_request_times(i: int, r: Request) -> None:
    """Times in the order tokens arrive: every first token before the last (within
    LATENCY_SLACK_MS), the first token's chunk not before the first token; and some figure."""
    ttft, e2e = r.ttft_ms, r.e2e_latency_ms
    if ttft is not None and e2e is not None and ttft > e2e + LATENCY_SLACK_MS:
        raise RunFileError(
            f"$.requests[{i}].ttft_ms",
            f"expected at most e2e_latency_ms ({e2e:g}) since the first token comes before the last, got {ttft:g}",
        )
    if _has_no_figure(r):
        raise RunFileError(
            f"$.requests[{i}]",
            "expected at least one figure (tokens, times, finish_reason or "
            "error), got none: every field is absent or null",
        )
    for name in ("first_content_ms", "first_token_chunk_ms"):
        later = getattr(r, name)
        if later is not None and e2e is not None and later > e2e + LATENCY_SLACK_MS:
            raise RunFileError(
                f"$.requests[{i}].{name}",
                f"expected at most e2e_latency_ms ({e2e:g}) since a first token comes before the last, got {later:g}",
            )
    chunk = r.first_token_chunk_ms
    if chunk is not None and ttft is not None and chunk + LATENCY_SLACK_MS < ttft:
        raise RunFileError(
            f"$.requests[{i}].first_token_chunk_ms",
            f"expected at least ttft_ms ({ttft:g}) since it times a later chunk, got {chunk:g}",
        )


def _check_requests(requests, *, finite: bool, text: bool) -> None:
    """Each request: finite times (`finite`: not already refused by the JSON decoder), safe text
    (`text`), token counts and times in order."""
    checked: set[str] = set()
    for i, r in enumerate(requests):
        if finite:
            for name in ("ttft_ms", "e2e_latency_ms", "itl_ms", "first_content_ms", "first_token_chunk_ms"):
                _finite(getattr(r, name), f"$.requests[{i}].{name}")
        if text:
            _check_request_text(i, r, checked)
        _check_request_tokens(i, r)
        _check_request_times(i, r)


def _check_exam_items(e: Exam, base: str) -> None:
    """An exam given item by item: at least one item, unique ids, a total that counts them."""
    if not e.items:
        raise RunFileError(f"{base}.items", "expected at least one item, got an empty list")
    seen = set()
    for j, item in enumerate(e.items):
        if item.id in seen:
            raise RunFileError(f"{base}.items[{j}].id", f'expected unique item ids, got "{item.id}" twice')
        seen.add(item.id)
    if e.total is not None and e.total != len(e.items):
        raise RunFileError(f"{base}.total", f"expected {len(e.items)} (the number of items), got {e.total}")


def _check_exam_counts(e: Exam, base: str) -> None:
    """An exam given as counts: a total, at most that many correct, a finite score that agrees
    with correct/total (within SCORE_SLACK percentage points)."""
    if e.total is None:
        raise RunFileError(f"{base}.total", "expected the number of items (total), found none")
    if e.correct is not None and e.correct > e.total:
        raise RunFileError(f"{base}.correct", f"expected at most total ({e.total}), got {e.correct}")
    if e.score is not None:
        _finite(e.score, f"{base}.score")
        if e.correct is not None and abs(e.score - 100.0 * e.correct / e.total) > SCORE_SLACK:
            raise RunFileError(
                f"{base}.score",
                f"expected {100.0 * e.correct / e.total:.2f} "
                f"(correct/total = {e.correct}/{e.total}, as a percentage), "
                f"got {e.score:g}",
            )


def _check_exams(exams) -> None:
    """One result per benchmark and dimension; each given either as items or as counts, with a
    valid date it was measured on."""
    seen: dict[tuple, int] = {}
    for i, e in enumerate(exams):
        base = f"$.exams[{i}]"
        key = (e.benchmark, e.dimension)
        if key in seen:
            raise RunFileError(
                base,
                f'expected one result per benchmark and dimension, got a second "{e.benchmark}"'
                + (f' "{e.dimension}"' if e.dimension else "")
                + f" (as $.exams[{seen[key]}])",
            )
        seen[key] = i
        has_items = e.items is not None
        has_counts = e.correct is not None or e.score is not None
        if has_items == has_counts:
            raise RunFileError(
                base,
                "expected either items or correct/total (or score/total), "
                + ("got both" if has_items else "got neither"),
            )
        if has_items:
            _check_exam_items(e, base)
        else:
            _check_exam_counts(e, base)
        if e.measured_on is not None:
            _parse_date(e.measured_on, f"{base}.measured_on")
