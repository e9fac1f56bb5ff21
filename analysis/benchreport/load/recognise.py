"""What a file is, by its content: a native run (by its `format`), a harness's output (by the
importer that recognises it, `benchreport.load.harness`), or neither."""

from __future__ import annotations

from pathlib import Path

import msgspec

from benchreport.load import duplicates, harness, native
from benchreport.load.errors import Refusal, Skipped
from benchreport.load.parse import Parsed, parse_any
from benchreport.load.read import Unread, read_limited
from benchreport.load.walk import NOT_JSON, is_textual

__all__ = [
    "TEXT_HEAD_BYTES",
    "NATIVE_MARK",
    "Broken",
    "native_format",
    "claims_native",
    "harness_doc",
    "duplicate_key",
    "unrecognised_text",
]

#: how much of a text file is read to recognise it
TEXT_HEAD_BYTES = 4096
#: bytes every native run file holds near its start (its `format`): found, a parse is skipped
NATIVE_MARK = b'"benchreport.run/'


class Broken(ValueError):
    """A file an importer recognised that it could not read: refused, never skipped."""


def native_format(data: bytes, path: Path) -> str | None:
    """The `format` a file names when it may be a native run (None: a text log, an empty file,
    or one whose `format` cannot be read)."""
    if is_textual(path.name) or not data.strip():
        return None  # a text log or an empty file: never a native run
    if NATIVE_MARK in data[:1024] and data[:64].lstrip().startswith(b"{"):  # skips a parse
        return native.FORMAT
    try:
        return native.sniff_format(data)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None


def claims_native(doc) -> bool:
    """A document that names a format (as a native run does) rather than being a harness's."""
    return isinstance(doc, dict) and "format" in doc


def _claimed_text(data: bytes, path: Path):
    """(document, (importer, kind)) of a non-JSON file a harness importer recognises, or None
    (raises Broken with the reason when the importer cannot read it)."""
    found = harness.recognise_text(data[:TEXT_HEAD_BYTES], path)
    if not found:
        return None
    try:
        return found[0].parse_text(data, path), found
    except ValueError as exc:
        raise Broken(str(exc)) from None


def harness_doc(data: bytes, path: Path):
    """(parsed document, (importer, kind)) of a harness file; (importer, kind) None for no known kind.

    JSON (JSON Lines keep their good lines; NaN and Infinity read, as Python's json.dump writes
    them); else a text log an importer recognises (MLPerf LoadGen's `:::MLLOG` lines, an empty
    trace file of a known layout). Raises ValueError with the reason when none of these reads it
    (Broken when an importer recognised it).
    """
    if is_textual(path.name) and (claimed := _claimed_text(data, path)):
        return Parsed(claimed[0], text=True), claimed[1]
    try:
        parsed = parse_any(data, path)
    except ValueError:
        if claimed := _claimed_text(data, path):
            return Parsed(claimed[0], text=True), claimed[1]
        raise
    doc = parsed.doc
    if claims_native(doc):
        return parsed, None
    return parsed, (harness.recognise(doc, path) or harness.recognise_nonstandard(doc, path))


def duplicate_key(display: str, data: bytes, parsed: Parsed) -> Refusal | None:
    """A key given twice in an object, as file `display`'s refusal (None: there is none, or the
    file is a text log)."""
    if parsed.text or not duplicates.may_have_duplicates(data, parsed.doc):
        return None
    found = duplicates.find_duplicate(data, lines=parsed.lines)
    return None if found is None else Refusal(display, found[0], found[1])


def unrecognised_text(path: Path, display: str, max_file_bytes: int):
    """Skipped (or, when unreadable, Refusal) for a text file no importer recognises by its
    first bytes; None when one does (the file is then read in full)."""
    try:
        head = read_limited(path, max_file_bytes, head=TEXT_HEAD_BYTES)
    except Unread as exc:
        return Refusal(display, "$", str(exc))
    except OSError as exc:
        return Refusal(display, "$", f"could not read the file: {exc.strerror}")
    return None if harness.recognise_text(head, path) else Skipped(display, NOT_JSON)
