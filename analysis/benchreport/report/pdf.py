"""report.pdf from report.html: headless Chromium's print where it is installed, else WeasyPrint.

Both engines print the same self-contained HTML with the same print stylesheet
(``templates/benchreport/static/report.css``: A4 pages, running heads, "Page N of M"), so
the PDF is the HTML report on paper whichever prints it. They differ in cost: for the
example report Chromium takes about 0.8 s, WeasyPrint about 2.5 s (0.35 s to import, most
of the rest automatic table layout); docs/performance.md has the measurements.

`--pdf-engine` chooses: ``auto`` (the default) takes Chromium when one is found, else
WeasyPrint (the ``pdf`` extra); ``chromium`` and ``weasyprint`` insist. Chromium is found
as ``$BENCHREPORT_CHROMIUM`` (a path; empty to never use one), else ``chromium``,
``chromium-browser``, ``google-chrome`` or ``google-chrome-stable`` on ``PATH``. It is
never downloaded.

Chromium prints offline and inert: the page must load nothing but ``data:`` URIs
(`benchreport.report.render.check_self_contained`, on top of `check_offline`), the copy it
prints carries a Content Security Policy that allows no script and no load but ``data:``,
every host name resolves to nothing, and it runs with a profile of its own in a
temporary folder that is removed afterwards. Its PDF carries the time it was printed;
that date is set to a fixed one, so the same HTML gives the same bytes (as WeasyPrint's
does with its fixed identifier).
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

__all__ = ["ENGINES", "PdfEngineError", "find_chromium", "choose_engine", "html_to_pdf", "engine_missing",
           "offline_fetcher"]

ENGINES = ("auto", "chromium", "weasyprint")
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: seconds Chromium may take to print before the build gives up on it
CHROMIUM_TIMEOUT_S = 300.0
_CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
    "--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--disable-extensions", "--disable-default-apps", "--mute-audio",
    "--disable-breakpad", "--host-resolver-rules=MAP * ~NOTFOUND", "--no-pdf-header-footer",
)
#: the page Chromium prints may run nothing and load nothing but data: URIs (a Content Security
#: Policy in the printed copy; Chromium's switch that turns scripts off also stops its printing)
_POLICY = ('<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; img-src data:; '
           'style-src \'unsafe-inline\' data:; font-src data:">')
_HEAD = re.compile(r"<head\b[^>]*>", re.IGNORECASE)
_PDF_DATE = re.compile(rb"/(CreationDate|ModDate) \(D:\d{14}([^)]*)\)")


class PdfEngineError(RuntimeError):
    """No PDF engine as asked, or the engine failed; the message says which and why."""


def find_chromium() -> str | None:
    """The Chromium to print with: $BENCHREPORT_CHROMIUM, else the first of `CHROMIUM_NAMES` on PATH."""
    given = os.environ.get("BENCHREPORT_CHROMIUM")
    if given is not None:
        return given if given and os.access(given, os.X_OK) else None
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def _weasyprint_installed() -> bool:
    from benchreport import extras

    return not extras.missing("pdf")


def engine_missing(engine: str = "auto") -> str | None:
    """Why `engine` cannot print here (one sentence), or None when it can."""
    if engine not in ENGINES:
        return f"--pdf-engine takes {', '.join(ENGINES)}; got {engine!r}"
    if engine == "chromium" and find_chromium() is None:
        return ("--pdf-engine chromium: no Chromium found (install Debian's chromium, or set "
                "BENCHREPORT_CHROMIUM to its path)")
    if engine == "weasyprint" and not _weasyprint_installed():
        return "--pdf-engine weasyprint: WeasyPrint is not installed: pip install 'benchreport[pdf]'"
    if engine == "auto" and find_chromium() is None and not _weasyprint_installed():
        return ("a PDF needs Chromium (Debian's chromium, or BENCHREPORT_CHROMIUM) or WeasyPrint "
                "(pip install 'benchreport[pdf]'), and neither is here")
    return None


def choose_engine(engine: str = "auto") -> str:
    """"chromium" or "weasyprint" for `engine` (auto: Chromium where found); PdfEngineError if none."""
    why = engine_missing(engine)
    if why:
        raise PdfEngineError(why)
    if engine == "auto":
        return "chromium" if find_chromium() is not None else "weasyprint"
    return engine


def html_to_pdf(html: str, path: str | Path, *, engine: str = "auto", warn=None) -> Path:
    """Print the report's HTML to `path` with `engine` (`choose_engine`), offline. With ``auto``, a
    Chromium that cannot print (a sandboxed snap that cannot read the page's temporary folder, a
    broken install) hands the page to WeasyPrint when it is installed, and `warn` is told why."""
    from benchreport.report.render import check_self_contained

    path = Path(path)
    if choose_engine(engine) == "weasyprint":
        return _weasyprint_pdf(html, path)
    check_self_contained(html)
    try:
        return _chromium_pdf(html, path, find_chromium())
    except PdfEngineError as exc:
        if engine != "auto" or not _weasyprint_installed():
            raise
        if warn is not None:
            warn(f"{exc}; printed with WeasyPrint instead (--pdf-engine weasyprint says so at once)")
        return _weasyprint_pdf(html, path)


def offline_fetcher():
    """WeasyPrint's URL fetcher, restricted to ``data:`` URIs: no network, no local files."""
    from weasyprint.urls import URLFetcher  # deferred: heavy, for the PDF only

    return URLFetcher(allowed_protocols={"data"})


def _weasyprint_pdf(html: str, path: Path) -> Path:
    """WeasyPrint's print of `html`, offline (`offline_fetcher`), with a fixed identifier."""
    import logging

    from weasyprint import HTML  # deferred: WeasyPrint (Pango) is heavy and needed for the PDF only

    logging.getLogger("weasyprint").setLevel(logging.ERROR)
    logging.getLogger("fontTools").setLevel(logging.ERROR)
    HTML(string=html, url_fetcher=offline_fetcher()).write_pdf(path, pdf_identifier=b"benchreport-report")
    return path


def _chromium_pdf(html: str, path: Path, chromium: str) -> Path:
    """Chromium's print of `html` to `path` (its own profile and page file in a temporary folder)."""
    with tempfile.TemporaryDirectory(prefix="benchreport-chromium-") as tmp:
        page = Path(tmp) / "page.html"
        page.write_text(_inert(html), encoding="utf-8")
        printed = Path(tmp) / "page.pdf"
        args = [chromium, *_CHROMIUM_FLAGS, f"--user-data-dir={Path(tmp) / 'profile'}",
                f"--print-to-pdf={printed}", page.as_uri()]
        _run_chromium(args)
        if not printed.is_file() or printed.stat().st_size == 0:
            raise PdfEngineError(f"Chromium ({chromium}) printed no PDF")
        data = _PDF_DATE.sub(_fixed_date, printed.read_bytes())
    path.write_bytes(data)
    return path


def _inert(html: str) -> str:
    """The copy of `html` Chromium prints: `_POLICY` first in its head (a page without a head gets
    one), and the running title as a literal (`_running_title`)."""
    m = _HEAD.search(html)
    if m is None:
        return f"<head>{_POLICY}{_running_title(html)}</head>" + html
    html = html[:m.end()] + _POLICY + html[m.end():]
    end = html.lower().find("</head>")  # after the stylesheet, so that it wins
    return html[:end] + _running_title(html) + html[end:] if end >= 0 else html


_TITLE = re.compile(r"<h1\b[^>]*\bclass=\"[^\"]*\btitle\b[^\"]*\"[^>]*>(.*?)</h1>", re.IGNORECASE | re.DOTALL)


def _running_title(html: str) -> str:
    """The report's title in the head of every page but the first. The stylesheet takes it from the
    title with CSS named strings (``string-set``), which WeasyPrint prints and Chromium does not;
    Chromium gets it as a literal, every character a CSS escape (the title is the user's text).
    The running section name stays WeasyPrint's alone (named strings again)."""
    import html as html_lib

    m = _TITLE.search(html)
    if m is None:
        return ""
    text = " ".join(html_lib.unescape(re.sub(r"<[^>]*>", "", m.group(1))).split())
    literal = "".join(ch if ch.isascii() and ch.isalnum() else f"\\{ord(ch):x} " for ch in text)
    return (f'<style>@page {{ @top-left {{ content: "{literal}"; }} }} '
            f'@page :first {{ @top-left {{ content: none; }} }}</style>')


def _fixed_date(m: re.Match) -> bytes:
    """A PDF date set to 1970-01-01, the same length as the one it replaces (the file's byte offsets stay)."""
    return b"/" + m.group(1) + b" (D:19700101000000" + m.group(2) + b")"


def _run_chromium(args: list[str]) -> None:
    """Run Chromium in a session of its own; on a timeout, an error or an interrupt its whole
    process group (the browser and its helpers) is killed."""
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        _, err = proc.communicate(timeout=CHROMIUM_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        raise PdfEngineError(f"Chromium ({args[0]}) did not finish printing within {CHROMIUM_TIMEOUT_S:.0f} s") from None
    except BaseException:
        _kill_group(proc)
        raise
    if proc.returncode != 0:
        tail = " ".join(err.decode("utf-8", "replace").split()[-40:])
        raise PdfEngineError(f"Chromium ({args[0]}) exited with status {proc.returncode}: {tail}")


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()

