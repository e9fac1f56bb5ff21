"""The native run format's vocabulary: its version, the named limits, the field types and the
low-level checks every part of the format shares (finite numbers, safe text).

Split from benchreport.load.native (the Structs and the cross-field rules) and
benchreport.load.native_load (the load description), which both build on it.
"""

from __future__ import annotations

import math
from typing import Annotated, Literal, Optional

import msgspec

from benchreport.columns import METRICS
from benchreport.load.errors import UNSAFE_CHARS, RunFileError, one_line

FORMAT = "benchreport.run/1"
ID_PATTERN = r"^[A-Za-z0-9._-]{1,128}$"

#: the largest integer any field may hold: the tidy tables' columns are int64 (Parquet, pandas)
MAX_INT = 2**63 - 1

# Named limits: one field can neither make a build take minutes nor take gigabytes (issue 16:
# a 100,000-character workload took 8 minutes and 7.4 GB, and 10,000 of anything is far more
# than a report can show). Lists are bounded far above real runs; a file over its limit is
# refused with the limit in the message.
#: names shown in the report: model, quantisation, engine, workload, benchmark, harness, ...;
#: a Hugging Face model id is at most 96 + 1 + 96 characters
MAX_NAME = 5_000
#: free text: notes, event messages, request errors, placement notes
MAX_TEXT = 20_000
#: an exam item's id (lm-evaluation-harness doc hashes are 64 characters)
MAX_ITEM_ID = 500
MAX_MEASUREMENTS = 100_000
#: requests of one run: 10 million records is about 1.6 GB of JSON, above any file size limit
MAX_REQUESTS = 10_000_000
MAX_EXAMS = 10_000
MAX_ITEMS = 1_000_000
MAX_EVENTS = 10_000
MAX_COMPONENTS = 100
#: seat.settings: at most this many values, nested at most this deep (as in the manifest)
MAX_SETTINGS_VALUES = 500
MAX_SETTINGS_DEPTH = 6

Id = Annotated[str, msgspec.Meta(pattern=ID_PATTERN, description="[A-Za-z0-9._-]{1,128}")]
Name = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_NAME)]
OptName = Annotated[str, msgspec.Meta(max_length=MAX_NAME)]
Text = Annotated[str, msgspec.Meta(max_length=MAX_TEXT)]
PosInt = Annotated[int, msgspec.Meta(ge=1, le=MAX_INT)]
NonNegInt = Annotated[int, msgspec.Meta(ge=0, le=MAX_INT)]
NonNegFloat = Annotated[float, msgspec.Meta(ge=0)]
Metric = Literal[tuple(METRICS)]  # type: ignore[valid-type]
Statistic = Literal["mean", "p50", "p90", "p95", "p99", "min", "max", "not_stated"]
Role = Literal["incumbent", "candidate", "reference"]
EventKind = Literal["fault", "crash", "defect", "note"]


class Base(msgspec.Struct, omit_defaults=True, forbid_unknown_fields=False, gc=False):
    """Readers ignore fields they do not know (spec: fields may be added later)."""


def finite(value: Optional[float], path: str) -> None:
    if value is not None and not math.isfinite(value):
        raise RunFileError(path, f"expected a finite number, got {value}")


#: free text may hold line breaks and tabs; names may not
_LINE_BREAKS = "\n\r\t"
_BIDI = {0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)}


def text_problem(value: str, *, free_text: bool = False) -> str | None:
    """Why `value` may not reach a report as it is (a control, bidi or surrogate character), or None.

    Bidi overrides reverse what follows them on screen, numbers and dates included (Trojan
    Source, CVE-2021-42574); NUL and other controls end up raw in HTML and CSV; a lone
    surrogate cannot be written as UTF-8 at all.
    """
    m = UNSAFE_CHARS.search(value)
    while m is not None and free_text and m.group() in _LINE_BREAKS:
        m = UNSAFE_CHARS.search(value, m.end())
    if m is None:
        return None
    code = ord(m.group())
    kind = (
        "a lone surrogate"
        if 0xD800 <= code <= 0xDFFF
        else "a bidi control"
        if code in _BIDI
        else "a line break"
        if m.group() in _LINE_BREAKS
        else "a control character"
    )
    shown = one_line(value[:60]) + ("..." if len(value) > 60 else "")
    return (
        f"expected text without control, bidi or surrogate characters, got {kind} (U+{code:04X}) "
        f'at character {m.start() + 1}: "{shown}"'
    )


def check_text(value: str | None, path: str, *, free_text: bool = False) -> None:
    if value is not None:
        problem = text_problem(value, free_text=free_text)
        if problem:
            raise RunFileError(path, problem)
