"""The visible text of a built report.html, whitespace collapsed (what a reader can find in it)."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path


class _Text(HTMLParser):
    """The page's visible text: what is inside <style> and <script> is not."""

    def __init__(self):
        super().__init__()
        self.parts: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag, attrs):
        self._hidden += tag in ("style", "script")

    def handle_endtag(self, tag):
        self._hidden -= tag in ("style", "script") and self._hidden > 0

    def handle_data(self, data):
        if not self._hidden:
            self.parts.append(data)


def html_text(path: Path) -> str:
    """The text of the HTML file at `path`, every run of whitespace one space."""
    parser = _Text()
    parser.feed(Path(path).read_text(encoding="utf-8"))
    return " ".join("".join(parser.parts).split())


#: what a reader cannot use (issue 42): issue numbers, the project's files, method abbreviations
#: never spelled out, hashes as names, placeholders where a figure should be
_INTERNAL = {
    "an issue number": r"\bissue \d+",
    "a contract file": r"\bspec/[\w./-]+",
    "a project file": r"\b(?:benchmarks|docs|tests|analysis|notebooks)/[\w./-]+\.(?:py|md|ipynb)\b",
    "a hash as a name": r"(?<![\w&])#[0-9a-f]{6}\b",
    "an unexplained method": r"\bEWC\b",
    "a placeholder figure": r"→ \? tok|\b0 probes: none stated",
}


def internal_tokens(text: str) -> list[str]:
    """Each internal token in a report's text with its context: flag codes (a finding is said in
    words), the patterns above, and CUSUM unless the text spells it out once."""
    import re

    from benchreport.flags.codes import CODES

    found = []
    patterns = dict(_INTERNAL)
    patterns["a flag code"] = r"\b(?:%s)\b" % "|".join(re.escape(c) for c in sorted(CODES, key=len, reverse=True))
    if "cumulative-sum (CUSUM)" not in text:
        patterns["CUSUM never spelled out"] = r"\bCUSUM\b"
    for what, pattern in patterns.items():
        for m in re.finditer(pattern, text):
            found.append(f"{what}: …{text[max(0, m.start() - 60) : m.end() + 30]}…")
    return found
