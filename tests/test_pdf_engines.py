"""The two PDF engines (benchreport.report.render.pdf): which is chosen, what Chromium may load, the running
title it is given, and fixed dates; WeasyPrint still prints the report on its own."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from benchreport.report.render import pdf
from benchreport.report.render import html as render
from procs import alive

HAVE_CHROMIUM = pdf.find_chromium() is not None
needs_chromium = pytest.mark.skipif(not HAVE_CHROMIUM, reason="no Chromium here")


def _pdf_text(path) -> str:
    if not shutil.which("pdftotext"):
        pytest.skip("poppler's pdftotext is not installed")
    return " ".join(
        subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True, check=True).stdout.split()
    )


def _page(title: str, body: str = "<p>body</p>") -> str:
    css = (render.TEMPLATES_DIR / "benchreport" / "static" / "report.css").read_text(encoding="utf-8")
    paras = "".join(f"<p>paragraph {i} of a long text that runs over pages.</p>" for i in range(120))
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>t</title><style>{css}</style></head>"
        f"<body class='benchreport'><main class='paper'><header class='title-block'><h1 class=\"title\">"
        f"{title}</h1></header>{body}{paras}</main></body></html>"
    )


def test_the_engine_chosen(monkeypatch, tmp_path):
    monkeypatch.setenv("BENCHREPORT_CHROMIUM", "")  # never a Chromium
    assert pdf.find_chromium() is None
    assert pdf.choose_engine("auto") == "weasyprint"
    assert "no Chromium found" in pdf.engine_missing("chromium")
    with pytest.raises(pdf.PdfEngineError, match="BENCHREPORT_CHROMIUM"):
        pdf.choose_engine("chromium")
    fake = tmp_path / "chromium"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.setenv("BENCHREPORT_CHROMIUM", str(fake))
    assert pdf.choose_engine("auto") == "chromium"
    assert "takes auto, chromium, weasyprint" in pdf.engine_missing("latex")


def test_a_chromium_that_prints_nothing_is_an_error(monkeypatch, tmp_path):
    fake = tmp_path / "chromium"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.setenv("BENCHREPORT_CHROMIUM", str(fake))
    with pytest.raises(pdf.PdfEngineError, match="printed no PDF"):
        pdf.html_to_pdf(_page("t"), tmp_path / "x.pdf", engine="chromium")
    fake.write_text("#!/bin/sh\necho 'cannot open display' >&2\nexit 5\n")
    with pytest.raises(pdf.PdfEngineError, match="status 5: cannot open display"):
        pdf.html_to_pdf(_page("t"), tmp_path / "x.pdf", engine="chromium")


def test_auto_falls_back_to_weasyprint_when_chromium_cannot_print(monkeypatch, tmp_path):
    from benchreport import extras

    if extras.missing("pdf"):
        pytest.skip("WeasyPrint is not installed")
    fake = tmp_path / "chromium"
    fake.write_text("#!/bin/sh\necho 'cannot read the page' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("BENCHREPORT_CHROMIUM", str(fake))
    said = []
    out = pdf.html_to_pdf(_page("Fixture report"), tmp_path / "w.pdf", engine="auto", warn=said.append)
    assert out.read_bytes().startswith(b"%PDF") and "Page 2 of" in _pdf_text(out)
    assert len(said) == 1 and "cannot read the page" in said[0] and "WeasyPrint" in said[0]
    with pytest.raises(pdf.PdfEngineError, match="cannot read the page"):  # asked for by name: no fallback
        pdf.html_to_pdf(_page("t"), tmp_path / "c.pdf", engine="chromium")


def test_the_running_title_is_a_css_literal_of_escapes():
    page = pdf._inert(_page("a &lt;/style&gt;&lt;script&gt; &quot;q&quot; \\ ü"))
    style = re.search(r"<style>@page \{ @top-left \{ content: \"(.*?)\"; \} \}", page).group(1)
    assert re.fullmatch(r"(?:[A-Za-z0-9]|\\[0-9a-f]+ )*", style), style  # nothing but escapes and letters
    decoded = re.sub(r"\\([0-9a-f]+) ", lambda m: chr(int(m.group(1), 16)), style)
    assert decoded == 'a </style><script> "q" \\ ü'
    assert page.index("Content-Security-Policy") < page.index("<style>")


def test_dates_are_set_without_moving_a_byte(monkeypatch):
    """The printed dates become the build's (or SOURCE_DATE_EPOCH's), in UTC, each in the space
    the printer gave it: the file's byte offsets stay (issue 42)."""
    raw = b"/CreationDate (D:20261206064117+01'00')\n/ModDate (D:20261206064117Z)"
    when = 1765000000  # 2025-12-06 05:46:40 UTC
    fixed = pdf._PDF_DATE.sub(lambda m: pdf._dated(m, when), raw)
    assert fixed == b"/CreationDate (D:20251206054640+00'00')\n/ModDate (D:20251206054640Z)"
    assert len(fixed) == len(raw)
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    assert pdf.pdf_date_of(None) == 0.0 and pdf.pdf_date_of(when) == when
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "86400")
    assert pdf.pdf_date_of(when) == 86400.0
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    with pytest.raises(pdf.PdfEngineError, match="SOURCE_DATE_EPOCH must be an integer"):
        pdf.pdf_date_of(when)


@needs_chromium
def test_chromium_prints_the_running_title_and_the_same_bytes_twice(tmp_path):
    html = _page("Fixture report &lt;b&gt;not bold&lt;/b&gt;")
    a = pdf.html_to_pdf(html, tmp_path / "a.pdf", engine="chromium")
    b = pdf.html_to_pdf(html, tmp_path / "b.pdf", engine="chromium")
    assert a.read_bytes() == b.read_bytes()
    text = _pdf_text(a)
    assert "Fixture report <b>not bold</b>" in text and "Page 2 of" in text
    assert text.count("Fixture report <b>not bold</b>") >= 2  # the title, then the running head


@needs_chromium
def test_chromium_loads_nothing_but_the_page(tmp_path):
    """Even a page that slipped past check_self_contained loads no local file: the printed copy's
    Content Security Policy allows data: URIs only."""
    import base64

    png = base64.b64decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
    )
    local = tmp_path / "red.png"
    local.write_bytes(png)
    body = f'<p>before</p><img src="{local.as_uri()}" width="200" height="200"><p>after</p>'
    with pytest.raises(render.OfflineError):
        pdf.html_to_pdf(_page("t", body), tmp_path / "refused.pdf", engine="chromium")
    printed = pdf._chromium_pdf(_page("t", body), tmp_path / "x.pdf", pdf.find_chromium()).read_bytes()
    inline = f'<img src="data:image/png;base64,{base64.b64encode(png).decode()}" width="200" height="200">'
    allowed = pdf._chromium_pdf(_page("t", inline), tmp_path / "y.pdf", pdf.find_chromium()).read_bytes()
    one_pixel = re.compile(rb"/Subtype /Image\s*/Width 1\s*/Height 1\b")
    assert one_pixel.search(allowed)  # the image as a data: URI is printed, 1 x 1 pixel
    assert not one_pixel.search(printed)  # from a file: blocked (Chromium draws its broken-image icon)


def test_weasyprint_still_prints_the_report(tmp_path):
    from benchreport import extras

    if extras.missing("pdf"):
        pytest.skip("WeasyPrint is not installed")
    out = pdf.html_to_pdf(_page("Fixture report"), tmp_path / "w.pdf", engine="weasyprint")
    text = _pdf_text(out)
    assert "Page 2 of" in text and text.count("Fixture report") >= 2


def test_an_interrupted_chromium_is_killed_with_its_helpers(monkeypatch, tmp_path):
    """The browser runs in a session of its own; an interrupt kills the whole group."""
    script = tmp_path / "chromium"
    pids = tmp_path / "pids"
    script.write_text(f"#!/bin/sh\nsleep 300 &\necho $! > {pids}\nwait\n")
    script.chmod(0o755)
    monkeypatch.setattr(pdf, "CHROMIUM_TIMEOUT_S", 1.0)
    with pytest.raises(pdf.PdfEngineError, match="did not finish"):
        pdf._run_chromium([str(script)], tmp_path)
    helper = int(pids.read_text())
    with pytest.raises(ProcessLookupError):
        for _ in range(50):
            os.kill(helper, 0)
            import time

            time.sleep(0.05)


def _recording_chromium(folder, body: str = ""):
    """A stand-in Chromium that records its arguments, its TMPDIR and its pid, then runs `body`."""
    script = folder / "chromium"
    script.write_text(f'#!/bin/sh\necho "$$ $TMPDIR $*" >> {folder / "calls"}\n{body}\n')
    script.chmod(0o755)
    return script


def test_chromium_leaves_nothing_in_the_temp_folder(monkeypatch, tmp_path):
    """Chromium's profile, the page it loads and its own temporary files (TMPDIR) are in one
    folder of ours, removed after the print, as after a failed one."""
    import tempfile

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    body = (
        'for a in "$@"; do case $a in --print-to-pdf=*) printf "%%PDF-1.4 x" > "${a#--print-to-pdf=}";; '
        '--user-data-dir=*) mkdir -p "${a#--user-data-dir=}";; esac; done\n'
        'mkdir "$TMPDIR/org.chromium.Chromium.x"'
    )
    script = _recording_chromium(tmp_path, body)
    monkeypatch.setenv("BENCHREPORT_CHROMIUM", str(script))
    out = pdf.html_to_pdf(_page("t"), tmp_path / "a.pdf", engine="chromium")
    assert out.read_bytes() == b"%PDF-1.4 x"
    pid, tmpdir, args = (tmp_path / "calls").read_text().split(" ", 2)
    assert tmpdir.startswith(str(tmp / "benchreport-pdf-")) and f"--user-data-dir={Path(tmpdir).parent}" in args
    assert list(tmp.iterdir()) == []
    script.write_text('#!/bin/sh\nmkdir "$TMPDIR/org.chromium.Chromium.y"\nexit 3\n')
    with pytest.raises(pdf.PdfEngineError, match="status 3"):
        pdf.html_to_pdf(_page("t"), tmp_path / "b.pdf", engine="chromium")
    assert list(tmp.iterdir()) == []


def test_an_interrupt_while_printing_kills_chromium_and_removes_its_folder(monkeypatch, tmp_path):
    """Ctrl-C (or SIGTERM, which a command turns into the same exception) while Chromium prints: its
    process group is killed and its folder removed before the interrupt goes on."""
    import signal
    import tempfile
    import threading
    import time

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    script = _recording_chromium(tmp_path, f"sleep 300 &\necho $! > {tmp_path / 'helper'}\nwait")
    monkeypatch.setenv("BENCHREPORT_CHROMIUM", str(script))
    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # a test runner's worker may ignore it
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            pdf.html_to_pdf(_page("t"), tmp_path / "a.pdf", engine="chromium")
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    browser = int((tmp_path / "calls").read_text().split()[0])
    helper = int((tmp_path / "helper").read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(_alive(p) for p in (browser, helper)):
        time.sleep(0.05)
    assert not _alive(browser) and not _alive(helper)
    assert list(tmp.iterdir()) == [] and not (tmp_path / "a.pdf").exists()


_alive = alive  # tests/procs.py
