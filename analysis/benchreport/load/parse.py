"""Untyped parsing of a JSON or JSON Lines document, keeping the good lines of a damaged JSON
Lines file and reading NaN and Infinity in harness files (Python's json.dump writes them)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from benchreport.load.json_errors import json_error

__all__ = ["Parsed", "lenient", "parse_any"]


@dataclass
class Parsed:
    """An untyped document and how it was read: JSON Lines keep the good lines of a damaged file."""

    doc: object
    lines: bool = False
    #: (line number, reason) of each JSON Lines line that could not be read
    bad_lines: list[tuple[int, str]] = field(default_factory=list)
    #: a text file an importer recognised (no JSON checks apply)
    text: bool = False


def lenient(data: bytes):
    """Python's json, which reads NaN and Infinity (Python's json.dump writes them by default):
    harness files only, where a number the importer never reads must not refuse the file."""
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(str(exc)) from None


def _json_lines(data: bytes, path: Path) -> Parsed | None:
    """The document as JSON Lines (every line an object; the lines that cannot be read listed),
    or None when it is not JSON Lines."""
    docs, bad = [], []
    for number, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            docs.append(msgspec.json.decode(line))
        except (msgspec.DecodeError, RecursionError):
            try:
                docs.append(lenient(line))
            except ValueError:
                bad.append((number, json_error(line).replace("at line 1 column", "at column")))
    if docs and all(isinstance(d, dict) for d in docs) and (len(docs) > 1 or path.suffix.lower() == ".jsonl"):
        return Parsed(docs, True, bad)
    return None


def parse_any(data: bytes, path: Path) -> Parsed:
    """Untyped parse of a JSON or JSON Lines document (raises ValueError with a reason)."""
    try:
        return Parsed(msgspec.json.decode(data))
    except (msgspec.DecodeError, RecursionError):
        pass
    if path.suffix.lower() == ".jsonl" or data.count(b"\n") > 0:
        lines = _json_lines(data, path)
        if lines is not None:
            return lines
    try:
        doc = lenient(data)
    except ValueError:
        raise ValueError(json_error(data)) from None
    if isinstance(doc, dict) and isinstance(doc.get("format"), str) and doc["format"].startswith("benchreport.run/"):
        raise ValueError(json_error(data))  # a native file is held to the contract: finite numbers
    return Parsed(doc)
