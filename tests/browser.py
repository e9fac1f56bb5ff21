"""What the browser tests share: Debian's Chromium (never downloaded), its flags, and a page's
console, errors, dialogs and requests recorded for the assertions."""
from __future__ import annotations

import os

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
#: the marks of a test module that needs the browser
MARKS = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK), reason="Debian's chromium is not installed"),
]


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
