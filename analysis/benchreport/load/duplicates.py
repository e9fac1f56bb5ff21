"""Keys given twice in one JSON object: msgspec and Python's json keep the last silently
(`"value": 100, "value": 999` reads as 999, even for `format`); the loader refuses them.

Finding them exactly means parsing again, three to four times the cost of the typed decode, so
a cheap test comes first (`may_have_duplicates`): every key of the text is followed by a colon,
and so is every key the decoder kept; strings hold the same colons on both sides. So the colons
of the text equal the colons of the decoded document re-encoded unless the decoder dropped
something: a key given twice, or (for typed runs) an unknown field or an explicit null. Only
then is the text parsed again with an `object_pairs_hook` (`find_duplicate`), which names the
object and the key. A colon written as the escape `\\u003a` would be one more on the re-encoded
side and could hide a duplicate, so a text holding one is always parsed again.

Cost on the ingest benchmark (200,000 requests in 250 files): see docs/performance.md.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from benchreport.load.errors import one_line

__all__ = ["may_have_duplicates", "find_duplicate"]

_ENCODER = msgspec.json.Encoder()


def may_have_duplicates(data: bytes, decoded: Any) -> bool:
    """False when `data` (JSON text, or JSON Lines) certainly has no key twice in an object.

    `decoded` is what was decoded from `data`: a typed run, a document, or the list of a JSON
    Lines file's documents (re-encoded, its colons are compared with the text's).
    """
    if b"\\" in data and (b"\\u003a" in data or b"\\u003A" in data):
        return True
    try:
        encoded = _ENCODER.encode(decoded)
    except (TypeError, ValueError, UnicodeError):  # e.g. a lone surrogate Python's json let through
        return True
    return data.count(b":") != encoded.count(b":")


class _Twice(dict):
    """An object that held a key more than once (the hook marks it; the walk finds it)."""

    key: str = ""
    values: tuple = ()


def _hook(pairs: list) -> dict:
    out = dict(pairs)
    if len(out) == len(pairs):
        return out
    seen: dict = {}
    for key, value in pairs:
        if key in seen:
            twice = _Twice(out)
            twice.key, twice.values = key, (seen[key], value)
            return twice
        seen[key] = value
    return out  # unreachable: a shorter dict means a repeated key


def _shown(value: Any) -> str:
    text = (
        json.dumps(value, ensure_ascii=False, default=str)
        if not isinstance(value, (dict, list))
        else ("an object" if isinstance(value, dict) else "a list")
    )
    return one_line(text if len(text) <= 40 else text[:39] + "…")


def _first_twice(doc: Any, path: str) -> tuple[str, str] | None:
    stack = [(doc, path)]
    while stack:
        obj, here = stack.pop()
        if isinstance(obj, _Twice):
            first, then = obj.values
            return (
                f"{here}.{one_line(obj.key)}",
                f'expected each key once in an object, got "{one_line(obj.key)}" twice '
                f"({_shown(first)}, then {_shown(then)}; JSON readers disagree on which counts)",
            )
        if isinstance(obj, dict):
            stack.extend((v, f"{here}.{k}") for k, v in reversed(list(obj.items())))
        elif isinstance(obj, list):
            stack.extend((v, f"{here}[{i}]") for i, v in reversed(list(enumerate(obj))))
    return None


def find_duplicate(data: bytes, *, lines: bool = False) -> tuple[str, str] | None:
    """(JSON path of the key, message) of the first key given twice in an object, or None.

    `lines`: the text is JSON Lines; a line's documents are at `$[i]` (line i + 1).
    """
    try:
        text = data.decode("utf-8")
        if not lines:
            return _first_twice(json.loads(text, object_pairs_hook=_hook), "$")
        i = 0
        for line in text.splitlines():
            if not line.strip():
                continue
            try:
                found = _first_twice(json.loads(line, object_pairs_hook=_hook), f"$[{i}]")
            except ValueError:
                found = None  # a bad line is reported as such, elsewhere
            if found:
                return found
            i += 1
    except (ValueError, RecursionError):  # not JSON Python reads: reported as such, elsewhere
        return None
    return None
