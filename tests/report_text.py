"""The visible text of a built report.html, whitespace collapsed (what a reader can find in it)."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path


class _Text(HTMLParser):
    def __init__(self):
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data):
        self.parts.append(data)


def html_text(path: Path) -> str:
    """The text of the HTML file at `path`, every run of whitespace one space."""
    parser = _Text()
    parser.feed(Path(path).read_text(encoding="utf-8"))
    return " ".join("".join(parser.parts).split())
