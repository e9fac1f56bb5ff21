"""Does a component's licence forbid commercial use? Read from a maintained list (licenses.json).

`classify(text)` answers "noncommercial", "unknown" or "ok" for an SPDX id, an SPDX
expression (`MIT OR CC-BY-NC-4.0`) or a licence named in words (`CC BY-NC-ND 4.0`).
The list is data, each entry with the address of its terms, so adding a licence is a
one-line change reviewed against its source.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from importlib import resources

import pandas as pd

__all__ = ["LicenseVerdict", "classify", "normalise", "load_list"]

#: order used to combine parts of an expression: AND takes the worst part, OR the best choice
_RANK = {"ok": 0, "unknown": 1, "noncommercial": 2}


@dataclass(frozen=True)
class LicenseVerdict:
    """What a licence value says about commercial use."""

    kind: str  # "noncommercial", "unknown" or "ok"
    matched: str | None = None  # the list entry (id or pattern) that decided it
    source: str | None = None  # where the terms can be read


def normalise(text: str) -> str:
    """Upper case, spaces/underscores/slashes as hyphens, runs of hyphens collapsed."""
    t = re.sub(r"[\s_/]+", "-", str(text).strip().upper())
    return re.sub(r"-{2,}", "-", t).strip("-")


@functools.lru_cache(maxsize=1)
def load_list() -> dict:
    """The licence list shipped as package data (analysis/benchreport/flags/licenses.json)."""
    data = json.loads(resources.files("benchreport.flags").joinpath("licenses.json").read_text("utf-8"))
    ids = {}
    for entry in data["noncommercial"]["ids"]:
        for name in [entry["id"], *entry.get("aliases", [])]:
            ids[normalise(name)] = entry
    patterns = [(re.compile(p["pattern"]), p) for p in data["noncommercial"]["patterns"]]
    unknown = {normalise(i) for i in data["unknown"]["ids"]}
    prefixes = tuple(normalise(p) for p in data["unknown"]["prefixes"])
    return {
        "ids": ids,
        "patterns": patterns,
        "unknown": unknown,
        "prefixes": prefixes,
        "unknown_source": data["unknown"]["source"],
    }


def _one(text: str) -> LicenseVerdict:
    lst = load_list()
    key = normalise(text)
    if not key:
        return LicenseVerdict("unknown", None, lst["unknown_source"])
    if key in lst["ids"]:
        entry = lst["ids"][key]
        return LicenseVerdict("noncommercial", entry["id"], entry["source"])
    for rx, entry in lst["patterns"]:
        if rx.search(key):
            return LicenseVerdict("noncommercial", entry["pattern"], entry["source"])
    if key in lst["unknown"] or key.startswith(lst["prefixes"]):
        return LicenseVerdict("unknown", key, lst["unknown_source"])
    return LicenseVerdict("ok")


_TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")


def _tokens(text: str) -> list[str]:
    return [m.group(1) for m in _TOKEN.finditer(text)]


class _Parser:
    """SPDX license expression (spec annex D): OR binds loosest, then AND, then WITH."""

    def __init__(self, tokens):
        self.t, self.i = tokens, 0

    def peek(self):
        return self.t[self.i] if self.i < len(self.t) else None

    def take(self):
        tok = self.peek()
        self.i += 1
        return tok

    def expr(self) -> LicenseVerdict:
        best = self.term()
        while self.peek() == "OR":
            self.take()
            other = self.term()
            if _RANK[other.kind] < _RANK[best.kind]:
                best = other
        return best

    def term(self) -> LicenseVerdict:
        worst = self.factor()
        while self.peek() == "AND":
            self.take()
            other = self.factor()
            if _RANK[other.kind] > _RANK[worst.kind]:
                worst = other
        return worst

    def factor(self) -> LicenseVerdict:
        tok = self.take()
        if tok is None or tok in (")", "AND", "OR", "WITH"):
            raise ValueError("malformed expression")
        if tok == "(":
            v = self.expr()
            if self.take() != ")":
                raise ValueError("unbalanced parenthesis")
        else:
            v = _one(tok)
        if self.peek() == "WITH":  # an exception only adds permissions
            self.take()
            if self.take() is None:
                raise ValueError("WITH without exception")
        return v


def classify(text) -> LicenseVerdict:
    """Classify a licence value: 'noncommercial', 'unknown' (absent, NOASSERTION, ...) or 'ok'.

    An SPDX expression (upper-case AND/OR/WITH, parentheses) is evaluated: a choice
    (OR) is non-commercial only when every alternative is, a conjunction (AND) when any
    part is. Anything else is matched as one licence name.
    """
    if text is None or text is pd.NA or (isinstance(text, float) and text != text):
        return _one("")
    text = str(text)
    toks = _tokens(text)
    if any(t in ("AND", "OR", "WITH", "(", ")") for t in toks):
        try:
            parser = _Parser(toks)
            verdict = parser.expr()
            if parser.peek() is None:
                return verdict
        except ValueError:
            pass
    return _one(text)
