"""The visible text of a built report.html, whitespace collapsed (what a reader can find in it)."""

from __future__ import annotations

import re

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


#: a measured figure in a sentence: any number with a decimal point, and a whole number with a
#: thousands separator followed by a unit (a count such as '1,514 estimates' is a count of rows)
_FIGURE = re.compile(
    r"(?<![\w.,-])\d+\.\d+(?![\w.])"
    r"|(?<![\w.-])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?=[ -]?(?:tok/s|tok\b|ms\b|s\b|GB\b|MB\b|tokens?\b|-token|%))"
)
_VALUE = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?(?:e-?\d+)?")


def _values_of(out: Path) -> set[float]:
    """Every number in OUT's tables/*.csv and flags.json (the report's sources), as floats."""
    import csv
    import json

    found: set[float] = set()

    def add(text: str) -> None:
        found.update(float(m.replace(",", "")) for m in _VALUE.findall(text))

    def walk(x) -> None:
        if isinstance(x, bool):
            return
        if isinstance(x, (int, float)):
            found.add(abs(float(x)))
        elif isinstance(x, str):
            add(x)
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    for table in sorted((out / "tables").glob("*.csv")):
        with table.open(encoding="utf-8", newline="") as f:
            for row in csv.reader(f):
                for cell in row:
                    add(cell)
    walk(json.loads((out / "flags.json").read_text(encoding="utf-8")))
    return found


def unsourced_figures(out: Path) -> list[str]:
    """Each measured figure in the prose of OUT/report.html (tables and headings left out: a
    table row is its own source) that no table of OUT/tables nor flags.json holds at the number
    of decimals the sentence gives (a share also as a percentage): issue 42, a sentence quotes a
    table row, never a number of its own."""
    import html as _html

    page = (out / "report.html").read_text(encoding="utf-8")
    page = re.sub(r"(?s)<style.*?</style>|<table.*?</table>|<h[1-6][^>]*>.*?</h[1-6]>", " ", page)
    text = " ".join(_html.unescape(re.sub(r"<[^>]+>", " ", page)).split())
    values = _values_of(out)
    missing = []
    for m in _FIGURE.finditer(text):
        number = m.group(0)
        x = float(number.replace(",", ""))
        places = len(number.split(".")[1]) if "." in number else 0
        if not any(abs(round(v, places) - x) < 1e-9 or abs(round(100 * v, places) - x) < 1e-9 for v in values):
            missing.append(f"{number}: …{text[max(0, m.start() - 80) : m.end() + 20]}…")
    return missing
