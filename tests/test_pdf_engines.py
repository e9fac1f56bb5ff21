"""The two PDF engines (benchreport.report.pdf): which is chosen, what Chromium may load, the running
title it is given, and fixed dates; WeasyPrint still prints the report on its own."""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from benchreport.report import pdf, render

HAVE_CHROMIUM = pdf.find_chromium() is not None
needs_chromium = pytest.mark.skipif(not HAVE_CHROMIUM, reason="no Chromium here")


def _pdf_text(path) -> str:
    if not shutil.which("pdftotext"):
        pytest.skip("poppler's pdftotext is not installed")
    return " ".join(subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True,
                                   check=True).stdout.split())


def _page(title: str, body: str = "<p>body</p>") -> str:
    css = (render.TEMPLATES_DIR / "benchreport" / "static" / "report.css").read_text(encoding="utf-8")
    paras = "".join(f"<p>paragraph {i} of a long text that runs over pages.</p>" for i in range(120))
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>t</title><style>{css}</style></head>"
            f"<body class='benchreport'><main class='paper'><header class='title-block'><h1 class=\"title\">"
            f"{title}</h1></header>{body}{paras}</main></body></html>")


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


def test_dates_are_fixed_without_moving_a_byte():
    raw = b"/CreationDate (D:20261206064117+01'00')\n/ModDate (D:20261206064117Z)"
    fixed = pdf._PDF_DATE.sub(pdf._fixed_date, raw)
    assert fixed == b"/CreationDate (D:19700101000000+01'00')\n/ModDate (D:19700101000000Z)"
    assert len(fixed) == len(raw)


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

    png = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC")
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
        pdf._run_chromium([str(script)])
    helper = int(pids.read_text())
    with pytest.raises(ProcessLookupError):
        for _ in range(50):
            os.kill(helper, 0)
            import time
            time.sleep(0.05)


@needs_chromium
def test_chromium_started_ahead_prints_the_same_bytes(tmp_path):
    """Chromium started before the page exists (`ChromiumAhead`, as a build starts it while it
    renders the HTML) prints the page it is given later, byte for byte as the plain print."""
    import time

    html = _page("Fixture report")
    plain = pdf.html_to_pdf(html, tmp_path / "plain.pdf", engine="chromium").read_bytes()
    with pdf.ChromiumAhead(pdf.find_chromium()) as ahead:
        time.sleep(0.5)  # it has asked for the page by now, and waits
        printed = pdf.html_to_pdf(html, tmp_path / "ahead.pdf", engine="chromium", ahead=ahead).read_bytes()
        assert ahead._served.is_set()
    assert printed == plain


@needs_chromium
def test_chromium_started_ahead_serves_its_one_path_once(tmp_path):
    """The loopback server answers only Chromium's own random path, once; anything else on that
    port is told 404, and is never given the page."""
    import socket

    with pdf.ChromiumAhead(pdf.find_chromium()) as ahead:
        port = ahead._listener.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port), timeout=5) as other:
            other.sendall(b"GET /page.html HTTP/1.1\r\nHost: x\r\n\r\n")
            assert other.recv(100).startswith(b"HTTP/1.1 404")
        pdf.html_to_pdf(_page("t"), tmp_path / "a.pdf", engine="chromium", ahead=ahead)
        with socket.create_connection(("127.0.0.1", port), timeout=5) as late:
            late.sendall(f"GET {ahead._path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            assert late.recv(100).startswith(b"HTTP/1.1 404")  # served already
    assert "127.0.0.1" not in _pdf_text(tmp_path / "a.pdf")


def test_a_chromium_started_ahead_that_never_loaded_the_page_prints_again(monkeypatch, tmp_path):
    """A Chromium that ended without being given the page printed nothing of ours (an error page,
    or nothing): the page is printed the plain way instead, never that PDF."""
    script = tmp_path / "chromium"
    script.write_text("#!/bin/sh\nfor a in \"$@\"; do case $a in --print-to-pdf=*) printf '%%PDF-1.4 error page' > "
                      "\"${a#--print-to-pdf=}\";; esac; done\nexit 0\n")
    script.chmod(0o755)
    printed = []

    def plain(html, path, chromium):
        printed.append(chromium)
        path.write_bytes(b"%PDF-1.4 the page")
        return path

    monkeypatch.setattr(pdf, "_chromium_pdf", plain)
    monkeypatch.setattr(pdf, "find_chromium", lambda: str(script))
    with pdf.ChromiumAhead(str(script)) as ahead:
        out = pdf.html_to_pdf(_page("t"), tmp_path / "a.pdf", engine="chromium", ahead=ahead)
    assert out.read_bytes() == b"%PDF-1.4 the page" and printed == [str(script)]


def test_a_chromium_that_cannot_be_started_ahead_is_no_failure(monkeypatch, tmp_path):
    """No loopback socket, or a Chromium that will not start: no Chromium ahead (the PDF is printed
    the plain way, which says why if it fails too)."""
    import socket

    def refuse(*args, **kwargs):
        raise OSError("no loopback here")

    monkeypatch.setattr(socket, "create_server", refuse)
    monkeypatch.setattr(pdf, "find_chromium", lambda: str(tmp_path / "chromium"))
    with pdf.chromium_ahead() as ahead:
        assert ahead is None


def test_a_chromium_that_will_not_start_leaves_nothing(monkeypatch, tmp_path):
    """A Chromium that cannot be run: no Chromium ahead, and no temporary folder or socket left."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(pdf, "find_chromium", lambda: str(tmp_path / "no-such-chromium"))
    with pdf.chromium_ahead() as ahead:
        if ahead is not None:  # started through `nice`, which then fails: it prints nothing
            with pytest.raises(pdf.PdfEngineError):
                ahead.print("<p>x</p>", tmp_path / "x.pdf")
    assert not list(tmp_path.glob("benchreport-chromium-*")) and not (tmp_path / "x.pdf").exists()
