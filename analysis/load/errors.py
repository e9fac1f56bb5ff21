"""What the loader says about a file it could not use: refused (bad) or skipped (no results)."""
from __future__ import annotations

import re
from dataclasses import dataclass

#: characters that must never reach a one-line output as they are: C0 and C1 controls, DEL,
#: bidi marks, embeddings, overrides and isolates (Trojan Source, CVE-2021-42574), line and
#: paragraph separators, and surrogates (a file name's undecodable bytes, a lone U+D800)
UNSAFE_CHARS = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
                          "\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match) -> str:
    c = match.group()
    if c in _NAMED:
        return _NAMED[c]
    code = ord(c)
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: the file name's original byte
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def one_line(text: str) -> str:
    """`text` with every unsafe character escaped visibly (`\\n`, `\\xff`, `\\u202e`), so that a
    name or value can neither forge an output line nor reorder one on screen."""
    return text if UNSAFE_CHARS.search(text) is None else UNSAFE_CHARS.sub(_escape, text)


@dataclass(frozen=True)
class Refusal:
    """A file that breaks the contract: `PATH: JSON-PATH: what was expected, what was found`."""

    path: str
    json_path: str
    message: str

    def __post_init__(self) -> None:
        for name in ("path", "json_path", "message"):
            object.__setattr__(self, name, one_line(str(getattr(self, name))))

    def __str__(self) -> str:
        return f"{self.path}: {self.json_path}: {self.message}"

    def as_dict(self) -> dict:
        return {"path": self.path, "json_path": self.json_path, "message": self.message}


@dataclass(frozen=True)
class Skipped:
    """A file a harness writes beside its results that carries none (logs, twins, inputs)."""

    path: str
    reason: str

    def __post_init__(self) -> None:
        for name in ("path", "reason"):
            object.__setattr__(self, name, one_line(str(getattr(self, name))))

    def __str__(self) -> str:
        return f"{self.path}: skipped: {self.reason}"

    def as_dict(self) -> dict:
        return {"path": self.path, "reason": self.reason}


class RunFileError(ValueError):
    """Raised inside the loader for one bad field; becomes a Refusal naming the file."""

    def __init__(self, json_path: str, message: str):
        super().__init__(f"{json_path}: {message}")
        self.json_path = json_path
        self.message = message


class DataSetError(ValueError):
    """The data set as a whole cannot be analysed as asked (e.g. an unknown --baseline,
    several incumbents); the command line prints it as one line and exits 2."""
