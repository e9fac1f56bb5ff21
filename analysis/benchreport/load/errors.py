"""What the loader says about a file it could not use: refused (bad) or skipped (no results)."""

from __future__ import annotations

import re
from dataclasses import dataclass

#: characters that must never reach a one-line output as they are: C0 and C1 controls, DEL,
#: bidi marks, embeddings, overrides and isolates (Trojan Source, CVE-2021-42574), line and
#: paragraph separators, and surrogates (a file name's undecodable bytes, a lone U+D800)
UNSAFE_CHARS = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
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

    def short(self) -> str:
        """`PATH: JSON-PATH: ` and the message's first clause (`first_clause`): the one line
        `--quiet` prints."""
        return f"{self.path}: {self.json_path}: {first_clause(self.message)}"


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

    @property
    def not_a_run(self) -> bool:
        """A file that is not a run file (`not_a_run`), not a harness's side file, log or copy."""
        return self.reason.startswith(NOT_A_RUN_WHY)

    def as_dict(self) -> dict:
        return {"path": self.path, "reason": self.reason}


#: the longest first clause `--quiet` prints of a refusal's message
SHORT_CLAUSE = 160


_ASIDE = re.compile(r" \([^()]*\)")


def first_clause(message: str) -> str:
    """What is wrong, without the explanation: the message with its asides in parentheses left
    out, up to its first `; `, at most SHORT_CLAUSE characters."""
    text, done = message, None
    while done != text:  # asides inside asides, from the inside out
        done, text = text, _ASIDE.sub("", text)
    head = text.split("; ", 1)[0]
    return head if len(head) <= SHORT_CLAUSE else head[: SHORT_CLAUSE - 3].rstrip() + "..."


#: how every skip reason of a file that is not a run file begins (`Skipped.not_a_run`): a JSON
#: file no importer recognises that claims to be no run (docs/importers.md, "Files that are not
#: run files"); `--strict` refuses these instead
NOT_A_RUN = "not a run file"
NOT_A_RUN_WHY = (
    f"{NOT_A_RUN} (neither a native run nor a harness output benchreport reads, and nothing in it claims to be one)"
)


def not_a_run(what: str) -> str:
    """The skip reason of a file that is not a run file: NOT_A_RUN_WHY, then what was found."""
    return f"{NOT_A_RUN_WHY}: {what}"


def refusal_lines(refused, skipped=(), *, quiet: bool, listed_in: str | None = None) -> list[str]:
    """What a command prints on stderr about the files it could not use.

    Every refusal in full; with `quiet`, one short line per refused file instead (its first
    refusal's first clause, and how many more it has). Files that are not run files
    (`Skipped.not_a_run`) in one summary line, never one each, and not with `quiet`;
    `listed_in` names where they are listed (e.g. "refused.json").
    """
    lines = []
    if quiet:
        by_file: dict[str, list] = {}
        for r in refused:
            by_file.setdefault(r.path, []).append(r)
        for rs in by_file.values():
            more = f" (and {len(rs) - 1} more)" if len(rs) > 1 else ""
            lines.append(rs[0].short() + more)
        return lines
    lines += [str(r) for r in refused]
    lines += [line for line in [not_a_run_summary(skipped, listed_in=listed_in)] if line]
    return lines


#: how many of the files that are not run files the summary line names
NAMES_SHOWN = 3


def not_a_run_summary(skipped, *, listed_in: str | None = None) -> str | None:
    """One line for every skipped file that is not a run file (None when there is none)."""
    names = [s.path for s in skipped if s.not_a_run]
    if not names:
        return None
    shown = ", ".join(names[:NAMES_SHOWN]) + (
        f" and {len(names) - NAMES_SHOWN} more" if len(names) > NAMES_SHOWN else ""
    )
    where = f"listed in {listed_in}; " if listed_in else ""
    return f"skipped {len(names)} file(s) that are not run files: {shown} ({where}--strict refuses them)"


class RunFileError(ValueError):
    """Raised inside the loader for one bad field; becomes a Refusal naming the file."""

    def __init__(self, json_path: str, message: str):
        super().__init__(f"{json_path}: {message}")
        self.json_path = json_path
        self.message = message


class DataSetError(ValueError):
    """The data set as a whole cannot be analysed as asked (e.g. an unknown --baseline,
    several incumbents); the command line prints it as one line and exits 2."""
