"""Shape checks for harness files: a broken result file is refused with the JSON path of what is
wrong and what was expected (spec/run-format.md, "Bad input"), never read half-way.

An importer calls `expect_list`, `expect_dict`, `expect_number` ... while it reads a file; each
raises `Broken` naming the path. `draft_or_refuse` runs the importer's reading function and turns
`Broken` (and, as a last resort, any other error) into a refusal of that file only.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from benchreport.load.errors import Refusal
from benchreport.load.harness import ImportOutcome, SourceFile


class Broken(Exception):
    """A harness file that claims to hold results but does not have the shape its harness writes."""

    def __init__(self, json_path: str, expected: str):
        super().__init__(f"{json_path}: {expected}")
        self.json_path = json_path
        self.expected = expected


def kind_of(value: Any) -> str:
    """What a JSON value is, in the words of a refusal ("a string", "null", "a list of 3")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"the number {value!r}" if math.isfinite(value) else f"the non-finite number {value!r}"
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def expect_dict(value: Any, path: str, what: str) -> dict:
    if not isinstance(value, dict):
        raise Broken(path, f"expected {what} (an object), got {kind_of(value)}")
    return value


def expect_list(value: Any, path: str, what: str, length: int | None = None) -> list:
    if not isinstance(value, list):
        raise Broken(path, f"expected {what} (a list), got {kind_of(value)}")
    if length is not None and len(value) != length:
        raise Broken(path, f"expected {what}: {length} entries, one per request, got {len(value)}")
    return value


def expect_number(
    value: Any, path: str, what: str, *, optional: bool = False, nonnegative: bool = True
) -> float | None:
    """A finite number (None when `optional` and null/absent); raises Broken otherwise."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise Broken(path, f"expected {what} (a finite number), got {kind_of(value)}")
    if nonnegative and value < 0:
        raise Broken(path, f"expected {what} (a number >= 0), got {value!r}")
    return float(value)


def expect_count(value: Any, path: str, what: str, *, optional: bool = False) -> int | None:
    """A non-negative whole number (integral floats accepted); raises Broken otherwise."""
    v = expect_number(value, path, what, optional=optional)
    if v is None:
        return None
    if v != int(v):
        raise Broken(path, f"expected {what} (a whole number), got {value!r}")
    return int(v)


def draft_or_refuse(outcome: ImportOutcome, source: SourceFile, harness: str, build: Callable, *args):
    """`build(*args)`, or None with the file refused: at the JSON path `Broken` names, or at `$`
    for any other error (one odd file must not stop the others of its harness)."""
    try:
        return build(*args)
    except Broken as exc:
        outcome.refused.append(Refusal(source.display, exc.json_path, f"{exc.expected} ({harness})"[:400]))
    except Exception as exc:  # noqa: BLE001 - reported as a refusal naming the file
        why = f"{type(exc).__name__}: {exc}"
        outcome.refused.append(
            Refusal(
                source.display,
                "$",
                f"expected a readable {harness} file; the importer could not read this one ({why})"[:400],
            )
        )
    return None


#: YAML set-up files a harness writes are small; anything bigger is not one of them
MAX_YAML_BYTES = 1_000_000


def safe_yaml(data: bytes):
    """A harness's YAML file as Python data: safe types only, no aliases (no alias bombs), at most
    MAX_YAML_BYTES. Raises ValueError with the reason."""
    import yaml

    class _NoAliases(yaml.SafeLoader):
        def compose_node(self, parent, index):  # noqa: D401 - PyYAML hook
            if self.check_event(yaml.AliasEvent):
                raise yaml.YAMLError("YAML aliases are not read")
            return super().compose_node(parent, index)

    if len(data) > MAX_YAML_BYTES:
        raise ValueError(f"expected a YAML set-up file of at most {MAX_YAML_BYTES // 1000} kB, found {len(data)} bytes")
    try:
        return yaml.load(data.decode("utf-8"), Loader=_NoAliases)  # noqa: S506 - a SafeLoader subclass
    except (yaml.YAMLError, UnicodeDecodeError, RecursionError) as exc:
        raise ValueError(f"expected valid YAML, found an error: {str(exc).splitlines()[0][:200]}") from None
