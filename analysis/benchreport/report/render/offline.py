"""The rendered page's checks: it loads nothing from the network, and, to be printed, nothing but
``data:`` URIs (benchreport.report.render.pdf).

Kept apart from benchreport.report.render.html (regular expressions only, no Jinja2 or sections), so
that the build's own process checks a page its rendering process made without importing the
renderer (benchreport.report.build).
"""

from __future__ import annotations

import re

__all__ = ["OfflineError", "check_offline", "check_self_contained"]


class OfflineError(RuntimeError):
    """The rendered HTML would load something from the network."""


_REMOTE = re.compile(
    r"""<(?:script|link|img|iframe|object|embed|source|video|audio)\b[^>]*?\b(?:src|href|data)\s*=\s*["']?\s*(?:https?:)?//""",
    re.IGNORECASE,
)
_SCRIPT = re.compile(r"<script\b", re.IGNORECASE)
_CSS_URL = re.compile(r"""url\(\s*["']?\s*(?:https?:)?//|@import""", re.IGNORECASE)
_STYLE_BLOCK = re.compile(r"<style\b[^>]*>(.*?)</style>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[a-zA-Z][^>]*>")
_STYLE_ATTR = re.compile(r"""\bstyle\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.IGNORECASE)


def _stylesheets(html: str) -> list[str]:
    """The page's CSS: <style> blocks and style attributes (text from run files is escaped, so
    it is neither; "url(" or "@import" in a model name is not a stylesheet)."""
    css = [m.group(1) for m in _STYLE_BLOCK.finditer(html)]
    css += [
        next(g for g in m.groups() if g is not None)
        for tag in _TAG.finditer(html)
        for m in _STYLE_ATTR.finditer(tag.group(0))
    ]
    return css


def check_offline(html: str) -> None:
    """Raise OfflineError if the page has a script, a remote resource or a remote CSS import."""
    for rx, what in ((_SCRIPT, "a <script> element"), (_REMOTE, "a remote resource")):
        m = rx.search(html)
        if m:
            raise OfflineError(f"the rendered HTML has {what} near: {html[m.start() : m.start() + 80]!r}")
    for css in _stylesheets(html):
        m = _CSS_URL.search(css)
        if m:
            raise OfflineError(
                f"the rendered HTML has a remote stylesheet reference near: {css[m.start() : m.start() + 80]!r}"
            )


_LOADING_TAG = re.compile(
    r"<(?:img|script|link|iframe|object|embed|source|video|audio|track|image|use|input|frame)\b[^>]*>", re.IGNORECASE
)
_LOADING_ATTR = re.compile(
    r"""\b(?:src|href|xlink:href|data|srcset|poster)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.IGNORECASE
)
_CSS_URL_VALUE = re.compile(r"""url\(\s*(?:"([^"]*)"|'([^']*)'|([^)\s]*))""", re.IGNORECASE)


def _not_inline(value: str) -> bool:
    value = value.strip().lower()
    return not (value.startswith("data:") or value.startswith("#"))


def check_self_contained(html: str) -> None:
    """Raise OfflineError if the page would load anything but ``data:`` URIs (a local file
    included): what a browser printing it may read is the page alone (benchreport.report.render.pdf)."""
    check_offline(html)
    found = [
        m
        for tag in _LOADING_TAG.finditer(html)
        for m in _LOADING_ATTR.finditer(tag.group(0))
        if _not_inline(next(g for g in m.groups() if g is not None))
    ]
    found += [
        m
        for css in _stylesheets(html)
        for m in _CSS_URL_VALUE.finditer(css)
        if _not_inline(next(g for g in m.groups() if g is not None))
    ]
    if found:
        near = found[0].group(0)[:80]
        raise OfflineError(f"the rendered HTML loads something other than a data: URI: {near!r}")
