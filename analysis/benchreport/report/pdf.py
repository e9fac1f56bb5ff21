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
(`benchreport.report.offline.check_self_contained`, on top of `check_offline`), the copy it
prints carries a Content Security Policy that allows no script and no load but ``data:``,
every host name resolves to nothing, and it runs with a profile of its own in a
temporary folder that is removed afterwards. Its PDF carries the time it was printed;
that date is set to a fixed one, so the same HTML gives the same bytes (as WeasyPrint's
does with its fixed identifier).

A build starts Chromium before its page exists (`ChromiumAhead`, while the report notebook
runs), so that its start (about 0.25 s) is not on the build's path: Chromium asks for the page
at a loopback address (127.0.0.1, a port of the system's choosing, a random path), and the
answer is held until the page is there. Only that one path is served, once; the page is the
same checked, inert copy; and a Chromium that ended before it was given the page printed
nothing of ours, so that case is printed again the plain way (`html_to_pdf`).
"""
from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
from pathlib import Path

__all__ = ["ENGINES", "ChromiumAhead", "chromium_ahead", "yield_to_printing", "PdfEngineError", "find_chromium", "choose_engine", "html_to_pdf", "engine_missing",
           "offline_fetcher"]

ENGINES = ("auto", "chromium", "weasyprint")
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: seconds Chromium may take to print before the build gives up on it
CHROMIUM_TIMEOUT_S = 300.0
_CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
    "--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--disable-extensions", "--disable-default-apps", "--mute-audio",
    "--disable-breakpad", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--no-pdf-header-footer",
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


def html_to_pdf(html: str, path: str | Path, *, engine: str = "auto", warn=None,
                ahead: "ChromiumAhead | None" = None) -> Path:
    """Print the report's HTML to `path` with `engine` (`choose_engine`), offline. With ``auto``, a
    Chromium that cannot print (a sandboxed snap that cannot read the page's temporary folder, a
    broken install) hands the page to WeasyPrint when it is installed, and `warn` is told why.
    `ahead`: a Chromium started before the page existed, given it now (printed again the plain
    way if that one fails)."""
    from benchreport.report.offline import check_self_contained

    path = Path(path)
    if choose_engine(engine) == "weasyprint":
        return _weasyprint_pdf(html, path)
    check_self_contained(html)
    try:
        if ahead is not None:
            try:
                return ahead.print(html, path)
            except PdfEngineError:
                pass  # printed again below, from the start: the page is the same
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
    _finish_chromium(_start_chromium(args), args[0])


def _start_chromium(args: list[str], stderr=subprocess.PIPE) -> subprocess.Popen:
    """Chromium in a session (and process group) of its own; its output to a pipe or `stderr`."""
    return subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr,
                            start_new_session=True)


def _finish_chromium(proc: subprocess.Popen, name: str, stderr_file: Path | None = None) -> None:
    """Wait for Chromium to end (`CHROMIUM_TIMEOUT_S`); PdfEngineError when it failed, with the end
    of what it said (its stderr pipe, or `stderr_file`)."""
    try:
        _, err = proc.communicate(timeout=CHROMIUM_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        raise PdfEngineError(f"Chromium ({name}) did not finish printing within {CHROMIUM_TIMEOUT_S:.0f} s") from None
    except BaseException:
        _kill_group(proc)
        raise
    if proc.returncode != 0:
        if stderr_file is not None:
            err = stderr_file.read_bytes() if stderr_file.is_file() else b""
        tail = " ".join((err or b"").decode("utf-8", "replace").split()[-40:])
        raise PdfEngineError(f"Chromium ({name}) exited with status {proc.returncode}: {tail}")


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()



#: how much lower Chromium started ahead runs (`nice -n`) than the build: its start-up waits for
#: spare time; the build lowers its own work below it once the page is handed over
AHEAD_NICENESS = 5
#: the build's work that runs while Chromium prints the page (files the page does not need), below it
BESIDE_PRINT_NICENESS = 10


def yield_to_printing() -> None:
    """This process below Chromium from now on (`BESIDE_PRINT_NICENESS`): for the build's work that
    runs while Chromium prints the page (files the page does not need)."""
    with contextlib.suppress(OSError, AttributeError):
        os.nice(BESIDE_PRINT_NICENESS)


def chromium_ahead(engine: str = "auto", pdf: bool = True) -> "ChromiumAhead | contextlib.nullcontext":
    """A `ChromiumAhead` (a context manager) for a build that makes a PDF (`pdf`) with `engine`;
    a null context giving None where Chromium does not print it, or cannot be started here (no
    loopback socket, Chromium would not start): the PDF is then printed the plain way, which says
    why if it fails too."""
    if not pdf or engine_missing(engine) or choose_engine(engine) != "chromium":
        return contextlib.nullcontext(None)
    try:
        return ChromiumAhead(find_chromium())
    except (OSError, TypeError):
        return contextlib.nullcontext(None)


class ChromiumAhead:
    """Chromium started now for a page given later (`print`): it loads
    ``http://127.0.0.1:PORT/TOKEN.html`` from a server in this process that holds its answer
    until the page is given, then prints it as `html_to_pdf` does. `close` ends it (always:
    use it as a context manager)."""

    #: connections served at most (Chromium opens one or two)
    MAX_CONNECTIONS = 16

    def __init__(self, chromium: str):
        self.chromium = chromium
        self._tmp = tempfile.TemporaryDirectory(prefix="benchreport-chromium-")
        self._printed = Path(self._tmp.name) / "page.pdf"
        self._page: bytes | None = None
        self._html: str | None = None
        self._given = threading.Event()
        self._served = threading.Event()
        self._closed = threading.Event()
        self._answering: list[threading.Thread] = []
        try:
            self._listener = socket.create_server(("127.0.0.1", 0))
        except BaseException:
            self._tmp.cleanup()
            raise
        self._listener.settimeout(0.2)
        self._path = f"/{secrets.token_urlsafe(18)}.html"
        url = f"http://127.0.0.1:{self._listener.getsockname()[1]}{self._path}"
        args = [chromium, *_CHROMIUM_FLAGS, f"--user-data-dir={Path(self._tmp.name) / 'profile'}",
                f"--print-to-pdf={self._printed}", url]
        nice = shutil.which("nice")
        if nice:  # its start-up yields to the build's own work; its print, later, has the machine
            args = [nice, "-n", str(AHEAD_NICENESS), *args]
        self._said = Path(self._tmp.name) / "chromium.log"
        try:
            with open(self._said, "wb") as said:  # a file, not a pipe: nobody reads it while the page is awaited
                self._proc = _start_chromium(args, stderr=said)
        except BaseException:
            self._listener.close()
            self._tmp.cleanup()
            raise
        self._thread = threading.Thread(target=self._serve, name="benchreport-chromium-page", daemon=True)
        self._thread.start()

    def __enter__(self) -> "ChromiumAhead":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def give(self, html: str) -> None:
        """Hand `html` to Chromium, which prints it while the caller goes on; `print` waits for the
        PDF. The page is checked first (`offline.check_self_contained`: OfflineError), as
        `html_to_pdf` checks it: nothing but a self-contained page is ever served."""
        from benchreport.report.offline import check_self_contained

        if not self._given.is_set():
            check_self_contained(html)
            self._html = html
            self._page = _inert(html).encode("utf-8")
            self._given.set()

    def print(self, html: str, path: str | Path) -> Path:
        """`html` (checked by `html_to_pdf`; given already, or now) printed to `path`;
        PdfEngineError when Chromium failed, or ended without having been given the page."""
        if not self._given.is_set() and self._proc.poll() is not None:
            raise PdfEngineError(f"Chromium ({self.chromium}) ended before the page was ready")
        self.give(html)
        if self._html is not html and self._html != html:
            raise PdfEngineError("Chromium was given another page")
        _finish_chromium(self._proc, self.chromium, self._said)
        for answering in list(self._answering):  # Chromium has ended: their sends are over
            answering.join(timeout=5)
        if not self._served.is_set():  # it printed something, but not our page
            raise PdfEngineError(f"Chromium ({self.chromium}) printed without loading the page")
        if not self._printed.is_file() or self._printed.stat().st_size == 0:
            raise PdfEngineError(f"Chromium ({self.chromium}) printed no PDF")
        Path(path).write_bytes(_PDF_DATE.sub(_fixed_date, self._printed.read_bytes()))
        return Path(path)

    def close(self) -> None:
        """Chromium's process group killed if it still runs, the server stopped, the folder removed."""
        self._closed.set()
        if self._proc.poll() is None:
            _kill_group(self._proc)
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread at once (Linux)
        self._listener.close()
        self._thread.join(timeout=5)
        self._tmp.cleanup()

    def _serve(self) -> None:
        """Accept connections until closed; each answered in a thread of its own (Chromium may
        ask on any of the connections it opens)."""
        for _ in range(self.MAX_CONNECTIONS):
            conn = None
            while conn is None and not self._closed.is_set():
                try:
                    conn, _ = self._listener.accept()
                except socket.timeout:
                    continue
                except OSError:
                    return
            if conn is None:
                return
            answering = threading.Thread(target=self._answer, args=(conn,), daemon=True)
            self._answering.append(answering)
            answering.start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(0.2)
            request = b""
            while b"\r\n\r\n" not in request and len(request) < 16384 and not self._closed.is_set():
                try:
                    chunk = conn.recv(4096)
                except socket.timeout:
                    continue
                except OSError:
                    return
                if not chunk:
                    return
                request += chunk
            line = request.split(b"\r\n", 1)[0].split()
            if len(line) < 2 or line[0] != b"GET" or line[1] != self._path.encode("ascii") or self._served.is_set():
                self._send(conn, b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            while not self._given.wait(0.2):
                if self._closed.is_set():
                    return
            page = self._page or b""
            head = (f"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
                    f"Content-Length: {len(page)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n")
            if self._send(conn, head.encode("ascii") + page):
                self._served.set()

    @staticmethod
    def _send(conn: socket.socket, data: bytes) -> bool:
        conn.settimeout(30)
        try:
            conn.sendall(data)
            return True
        except OSError:
            return False
