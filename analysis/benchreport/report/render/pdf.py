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
(`benchreport.report.render.offline.check_self_contained`, on top of `check_offline`), the copy it
prints carries a Content Security Policy that allows no script and no load but ``data:``,
every host name resolves to nothing, and it runs with a profile of its own in a
temporary folder that is removed afterwards. Its PDF carries the time it was printed; that
date is replaced by the one the caller gives (a build gives its own start), or by
``$SOURCE_DATE_EPOCH`` where it is set (reproducible-builds.org), so the same HTML and date give
the same bytes (as WeasyPrint's print does with its fixed identifier).

Chromium is started only when a PDF is printed, after the page exists, and only here: its
profile, the inert copy of the page it loads, what it prints and the temporary files it makes
(its ``TMPDIR``) are all in one temporary folder of ours, removed however the print ends (an
error, Ctrl-C, SIGTERM: the build turns the signal into an exception, benchreport.progress), and
its whole process group is killed if it still runs.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Iterator

from benchreport.progress import signals_held

__all__ = [
    "ENGINES",
    "PdfEngineError",
    "find_chromium",
    "choose_engine",
    "html_to_pdf",
    "engine_missing",
    "offline_fetcher",
    "scratch_folder",
]

ENGINES = ("auto", "chromium", "weasyprint")
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: seconds Chromium may take to print before the build gives up on it
CHROMIUM_TIMEOUT_S = 300.0
_CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--mute-audio",
    "--disable-breakpad",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--no-pdf-header-footer",
)
#: the page Chromium prints may run nothing and load nothing but data: URIs (a Content Security
#: Policy in the printed copy; Chromium's switch that turns scripts off also stops its printing)
_POLICY = (
    '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; img-src data:; '
    "style-src 'unsafe-inline' data:; font-src data:\">"
)
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
        return (
            "--pdf-engine chromium: no Chromium found (install Debian's chromium, or set "
            "BENCHREPORT_CHROMIUM to its path)"
        )
    if engine == "weasyprint" and not _weasyprint_installed():
        return "--pdf-engine weasyprint: WeasyPrint is not installed: pip install 'benchreport[pdf]'"
    if engine == "auto" and find_chromium() is None and not _weasyprint_installed():
        return (
            "a PDF needs Chromium (Debian's chromium, or BENCHREPORT_CHROMIUM) or WeasyPrint "
            "(pip install 'benchreport[pdf]'), and neither is here"
        )
    return None


def choose_engine(engine: str = "auto") -> str:
    """ "chromium" or "weasyprint" for `engine` (auto: Chromium where found); PdfEngineError if none."""
    why = engine_missing(engine)
    if why:
        raise PdfEngineError(why)
    if engine == "auto":
        return "chromium" if find_chromium() is not None else "weasyprint"
    return engine


def html_to_pdf(html: str, path: str | Path, *, engine: str = "auto", warn=None, when: float | None = None) -> Path:
    """Print the report's HTML to `path` with `engine` (`choose_engine`), offline. With ``auto``, a
    Chromium that cannot print (a sandboxed snap that cannot read the page's temporary folder, a
    broken install) hands the page to WeasyPrint when it is installed, and `warn` is told why.

    `when` (seconds since the epoch) is the PDF's creation and modification date;
    ``$SOURCE_DATE_EPOCH`` overrides it; with neither, 1970-01-01 (`pdf_date_of`)."""
    from benchreport.report.render.offline import check_self_contained

    path = Path(path)
    if choose_engine(engine) == "weasyprint":
        return _weasyprint_pdf(html, path)
    check_self_contained(html)
    try:
        return _chromium_pdf(html, path, find_chromium(), pdf_date_of(when))
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


@contextlib.contextmanager
def scratch_folder(prefix: str = "benchreport-pdf-") -> Iterator[Path]:
    """A temporary folder of ours for the block, removed however the block ends; made and removed
    with SIGINT and SIGTERM held back (`progress.signals_held`), so a signal never leaves it half
    made or half removed."""
    tmp = None
    try:  # a signal held while the folder is made is raised as the hold ends: inside, so it is removed
        with signals_held():
            tmp = Path(tempfile.mkdtemp(prefix=prefix))
        yield tmp
    finally:
        if tmp is not None:
            with signals_held():
                shutil.rmtree(tmp, ignore_errors=True)


def pdf_date_of(when: float | None) -> float:
    """The date a PDF is given: ``$SOURCE_DATE_EPOCH`` where set (an integer, as
    reproducible-builds.org defines it), else `when`, else 0 (1970-01-01)."""
    import os

    said = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if said:
        try:
            return float(int(said))
        except ValueError:
            raise PdfEngineError(f"SOURCE_DATE_EPOCH must be an integer (seconds since 1970), got {said!r}") from None
    return 0.0 if when is None else float(when)


def _chromium_pdf(html: str, path: Path, chromium: str, when: float = 0.0) -> Path:
    """Chromium's print of `html` to `path`: its profile, the page it loads, the PDF and its own
    temporary files (TMPDIR) in one folder of ours (`scratch_folder`)."""
    with scratch_folder() as tmp:
        page = tmp / "page.html"
        page.write_text(_inert(html), encoding="utf-8")
        printed = tmp / "page.pdf"
        (tmp / "tmp").mkdir()
        args = [
            chromium,
            *_CHROMIUM_FLAGS,
            f"--user-data-dir={tmp / 'profile'}",
            f"--print-to-pdf={printed}",
            page.as_uri(),
        ]
        _run_chromium(args, tmp)
        if not printed.is_file() or printed.stat().st_size == 0:
            raise PdfEngineError(f"Chromium ({chromium}) printed no PDF")
        data = _PDF_DATE.sub(lambda m: _dated(m, when), printed.read_bytes())
    path.write_bytes(data)
    return path


def _inert(html: str) -> str:
    """The copy of `html` Chromium prints: `_POLICY` first in its head (a page without a head gets
    one), and the running title as a literal (`_running_title`)."""
    m = _HEAD.search(html)
    if m is None:
        return f"<head>{_POLICY}{_running_title(html)}</head>" + html
    html = html[: m.end()] + _POLICY + html[m.end() :]
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
    return (
        f'<style>@page {{ @top-left {{ content: "{literal}"; }} }} '
        f"@page :first {{ @top-left {{ content: none; }} }}</style>"
    )


def _dated(m: re.Match, when: float) -> bytes:
    """A PDF date (ISO 32000-1, 7.9.4) set to `when` in UTC, the same length as the one it replaces
    (the file's byte offsets stay): its zone written ``Z`` or ``+00'00'`` in the space it had."""
    import datetime as dt

    stamp = dt.datetime.fromtimestamp(when, dt.timezone.utc).strftime("%Y%m%d%H%M%S").encode()
    zone = m.group(2)
    utc = {0: b"", 1: b"Z", 6: b"+00'00", 7: b"+00'00'"}.get(len(zone), zone)
    return b"/" + m.group(1) + b" (D:" + stamp + utc + b")"


def _run_chromium(args: list[str], tmp: Path) -> None:
    """Run Chromium in a session (and process group) of its own, its temporary files in `tmp`
    (TMPDIR), what it says in `tmp`/chromium.log; however this ends (done, a timeout, an error, an
    interrupt), its whole group (the browser and its helpers) is killed if it still runs."""
    said = tmp / "chromium.log"
    pid = None
    try:
        with signals_held():  # started and its id kept, or not started: never one without the other
            pid = _spawn(args, said, {**os.environ, "TMPDIR": str(tmp / "tmp")})
        status = _wait(pid, CHROMIUM_TIMEOUT_S)
        if status is None:
            raise PdfEngineError(f"Chromium ({args[0]}) did not finish printing within {CHROMIUM_TIMEOUT_S:.0f} s")
        pid = None  # ended and reaped
    finally:
        if pid is not None:
            with signals_held():
                _kill_group(pid)
    if status != 0:
        err = said.read_bytes() if said.is_file() else b""
        tail = " ".join(err.decode("utf-8", "replace").split()[-40:])
        raise PdfEngineError(f"Chromium ({args[0]}) exited with status {status}: {tail}")


def _spawn(args: list[str], said: Path, env: dict) -> int:
    """Start `args` in a new session, stdin and stdout on /dev/null, stderr to `said`; its pid.
    POSIX: `os.posix_spawn` with an empty signal mask (whatever this thread's mask, the child
    inherits no blocked signal); elsewhere `subprocess.Popen`."""
    if hasattr(os, "posix_spawn") and hasattr(os, "POSIX_SPAWN_OPEN"):
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_OPEN, 2, str(said), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
        ]
        try:
            return os.posix_spawn(args[0], args, env, file_actions=actions, setsid=True, setsigmask=())
        except OSError as exc:
            raise PdfEngineError(f"Chromium ({args[0]}) could not be started: {exc}") from None
    with open(said, "wb") as err:
        try:
            proc = subprocess.Popen(
                args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env=env, start_new_session=True
            )
        except OSError as exc:
            raise PdfEngineError(f"Chromium ({args[0]}) could not be started: {exc}") from None
    _POPENED[proc.pid] = proc
    return proc.pid


#: processes started by `subprocess.Popen` (where there is no posix_spawn), by pid
_POPENED: dict[int, subprocess.Popen] = {}


def _wait(pid: int, timeout: float) -> int | None:
    """The exit status of `pid` (a negative signal number when a signal ended it), or None when it
    still runs after `timeout` seconds."""
    proc = _POPENED.get(pid)
    if proc is not None:
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        _POPENED.pop(pid, None)
        return code
    deadline = time.monotonic() + timeout
    pause = 0.005
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() >= deadline:
            return None
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def _kill_group(pid: int) -> None:
    """Chromium's process group killed (SIGKILL) and the browser reaped."""
    proc = _POPENED.pop(pid, None)
    with contextlib.suppress(ProcessLookupError, PermissionError, AttributeError):
        os.killpg(pid, signal.SIGKILL)
    if proc is not None:
        proc.kill()
        proc.wait()
        return
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
