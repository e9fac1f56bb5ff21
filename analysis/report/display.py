"""Display labels of strings from run files: shortened to named maxima, with break opportunities.

A run file may hold a 5,000-character model name or a 20,000-character error text (the
loader's limits, `analysis.load.native`). Laid out unshortened, one such string in a
table cell costs WeasyPrint minutes (an unbreakable run of text is measured at every
position it could wrap) and pushes a figure's legend off the page. So every string from a
run file is shown at most `MAX_LABEL` (identifiers: seat ids, models, workloads, probes,
harness names) or `MAX_TEXT` (free text: error texts, messages) characters long, shortened
in the middle with an ellipsis (the head and the tail of an id are what tell two ids
apart), and a long unbroken token gets break opportunities (``<wbr>``) after its
punctuation, or every `BREAK_EVERY` characters where it has none. The full text stays in
``tables/*.csv`` and, up to `MAX_TITLE` characters, in the element's ``title`` attribute
(shown on hover).
"""
from __future__ import annotations

import re

from markupsafe import Markup, escape

__all__ = ["MAX_LABEL", "MAX_TEXT", "MAX_TOKEN", "MAX_TITLE", "BREAK_EVERY", "ELLIPSIS", "short",
           "short_tokens", "shortened", "break_points", "breakable_html", "title_of"]

#: an identifier from a run file (seat id, model, workload, probe, harness) as a label:
#: the longest seat id of the fleet paper is 46 characters
MAX_LABEL = 60
#: free text from a run file (an error text, a message) in a table cell or a paragraph
MAX_TEXT = 300
#: an unbroken run of characters inside any displayed text (a path, a hash, an id in a message);
#: a SHA-256 is 64 hex digits and the harness fixtures' longest relative path 96 characters
MAX_TOKEN = 100
#: the full text kept in a title attribute (hover) when it was shortened, up to this length
MAX_TITLE = 1000
#: a break opportunity at least this often in an unbroken token
BREAK_EVERY = 16
#: what stands for the characters left out
ELLIPSIS = "…"

_TOKEN = re.compile(r"\S{%d,}" % (MAX_TOKEN + 1))
_LONG_RUN = re.compile(r"\S{%d,}" % (BREAK_EVERY + 1))
#: a break opportunity after these characters (as in a URL or a path)
_AFTER = re.compile(r"(?<=[-_/:,;=+@|\\)\]}])|(?<=\.)(?!\d)")


def short(text, limit: int = MAX_LABEL) -> str:
    """`text` at most `limit` characters: the head and the tail kept, an ellipsis between.

    ``short("a" * 100, 11)`` is ``"aaaaaa…aaaa"``; text within the limit is returned as is.
    """
    text = "" if text is None else str(text)
    if len(text) <= limit:
        return text
    if limit < 3:
        return text[:limit]
    keep = limit - 1
    head = (keep * 2 + 2) // 3
    return text[:head] + ELLIPSIS + text[len(text) - (keep - head):]


def short_tokens(text, limit: int = MAX_TOKEN) -> str:
    """`text` with every unbroken run of more than `limit` characters shortened (`short`)."""
    text = "" if text is None else str(text)
    if len(text) <= limit:
        return text
    rx = _TOKEN if limit == MAX_TOKEN else re.compile(r"\S{%d,}" % (limit + 1))
    return rx.sub(lambda m: short(m.group(0), limit), text)


def shortened(text, limit: int = MAX_TEXT) -> str:
    """Display text: long tokens shortened, then the whole at most `limit` characters."""
    return short(short_tokens(text), limit)


def title_of(full, shown: str) -> str:
    """The title (hover) text for a shortened display: the full text when it fits, else ''."""
    full = "" if full is None else str(full)
    return full if full != shown and len(full) <= MAX_TITLE else ""


def _split_run(run: str) -> list[str]:
    """One unbroken run as pieces: after punctuation, and every BREAK_EVERY characters."""
    pieces = []
    for part in _AFTER.split(run):
        while len(part) > BREAK_EVERY:
            pieces.append(part[:BREAK_EVERY])
            part = part[BREAK_EVERY:]
        if part:
            pieces.append(part)
    return pieces


def break_points(text: str) -> list[str]:
    """`text` as pieces between which a line may break (no piece longer than BREAK_EVERY
    inside a run without spaces); ``"".join`` of them is `text`."""
    out: list[str] = []
    last = 0
    for m in _LONG_RUN.finditer(text):
        if m.start() > last:
            out.append(text[last:m.start()])
        out += _split_run(m.group(0))
        last = m.end()
    if last < len(text):
        out.append(text[last:])
    return out


def breakable_html(text: str):
    """`text` for an HTML element: a plain `str` when it has no long run (the template escapes
    it), else escaped pieces joined by ``<wbr>`` (a break opportunity that adds no character)."""
    if not _LONG_RUN.search(text):
        return text
    return Markup("<wbr>").join(escape(p) for p in break_points(text))
