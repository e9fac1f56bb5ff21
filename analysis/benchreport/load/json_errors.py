"""Why bytes are not the JSON a run file must be, said precisely: line and column, a document cut
short, NaN or Infinity, a lone surrogate, undecodable bytes."""

from __future__ import annotations

import json
import re

from benchreport.load.errors import Refusal, one_line

__all__ = ["json_error", "find_bad_value", "refusal_from_text", "reason_only", "PATH_SEPARATOR"]

#: joins a JSON path to its reason in `json_error`'s text (`refusal_from_text` splits them again)
PATH_SEPARATOR = "\x00"

_SURROGATE = re.compile("[\ud800-\udfff]")


def _undecodable(data: bytes) -> tuple[str | None, str | None]:
    """(text, None) of bytes that are UTF-8 text; (None, reason) of those that are not."""
    if not data.strip():
        return None, "expected a JSON document, found an empty file"
    if b"\x00" in data[:65536]:
        return None, "expected UTF-8 JSON text, found binary data (NUL bytes)"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"expected UTF-8 JSON text, found undecodable bytes at byte {exc.start}"
    if "\x00" in text:
        return None, "expected UTF-8 JSON text, found binary data (NUL bytes)"
    return text, None


def json_error(data: bytes) -> str:
    """A precise reason for bytes msgspec could not parse (line and column, NaN, encoding); a
    reason at a JSON path is `PATH PATH_SEPARATOR REASON`."""
    text, reason = _undecodable(data)
    if reason is not None:
        return reason
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        if exc.pos >= len(text.rstrip()) - 1 or exc.msg.startswith("Unterminated"):
            return f"expected complete JSON, found a document that ends early (truncated?) at {where}"
        return f"expected valid JSON, found an error at {where}: {exc.msg}"
    except RecursionError:
        return "expected JSON nested at most a few hundred levels, found deeper nesting"
    bad = find_bad_value(doc, "$")
    if bad:
        return f"{bad[0]}{PATH_SEPARATOR}{bad[1]}"
    return "expected valid JSON"


def find_bad_value(doc, path) -> tuple[str, str] | None:
    """The JSON path and reason of the first value msgspec refuses but Python's json reads: a
    non-finite number (NaN, Infinity) or a lone surrogate in a string or key."""
    stack = [(doc, path)]
    while stack:
        obj, here = stack.pop()
        if isinstance(obj, float) and (obj != obj or obj in (float("inf"), float("-inf"))):
            found = "NaN" if obj != obj else str(obj).replace("inf", "Infinity")
            return here, f"expected a finite number, got {found} (not valid JSON)"
        if isinstance(obj, str) and _SURROGATE.search(obj):
            return (
                here,
                f"expected text, got a lone surrogate (U+{ord(_SURROGATE.search(obj).group()):04X}), which no UTF-8 text can hold",
            )
        if isinstance(obj, dict):
            for k in obj:
                if _SURROGATE.search(k):
                    return f"{here}.{one_line(k)}", "expected a key of text, got a lone surrogate in it"
            stack.extend((v, f"{here}.{k}") for k, v in reversed(list(obj.items())))
        elif isinstance(obj, list):
            stack.extend((v, f"{here}[{i}]") for i, v in reversed(list(enumerate(obj))))
    return None


def refusal_from_text(display: str, reason: str) -> Refusal:
    """The refusal of file `display` for a `json_error` reason (at its JSON path, if it has one)."""
    if PATH_SEPARATOR in reason:
        where, _, what = reason.partition(PATH_SEPARATOR)
        return Refusal(display, where, what)
    return Refusal(display, "$", reason)


def reason_only(reason: str) -> str:
    """A `json_error` reason without its JSON path."""
    return reason.rpartition(PATH_SEPARATOR)[2]
