"""What the browser tests share: Debian's Chromium (never downloaded), its flags, and a page's
console, errors, dialogs and requests recorded for the assertions."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Iterator

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: the marks of a test module that needs the browser
MARKS = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK), reason="Debian's chromium is not installed"),
]


def needs_browser(test):
    """A test function with `MARKS` (for a module with a few browser tests among others)."""
    for mark in MARKS:
        test = mark(test)
    return test


def record_events(page) -> dict:
    """{console, errors, dialogs, requests} of `page` as they happen (dialogs are dismissed)."""
    events = {"console": [], "errors": [], "dialogs": [], "requests": []}
    page.on("console", lambda m: events["console"].append((m.type, m.text)))
    page.on("pageerror", lambda e: events["errors"].append(str(e)))

    def on_dialog(d):
        events["dialogs"].append(d.message)
        d.dismiss()

    page.on("dialog", on_dialog)
    page.on("request", lambda r: events["requests"].append(r.url))
    return events


@contextlib.contextmanager
def page_at(html: Path, width: int, height: int = 800) -> Iterator:
    """`html` loaded in Chromium at a `width` x `height` pixel viewport; the browser is closed after."""
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.goto(Path(html).as_uri(), wait_until="load")
            yield page
        finally:
            browser.close()
