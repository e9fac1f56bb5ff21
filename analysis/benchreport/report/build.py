"""`benchreport build`: the report notebook through papermill, rendered to HTML and PDF, atomically.

One process, read top to bottom as papermill's own `execute_notebook` (`build`, then
`_build_locked`):

1. Check, before anything is written: output formats, the output folder (`benchreport.outdir`:
   benchreport's own, marked by `.benchreport-output`, or empty or new; never an input, around
   one or inside one), every run file (a refused file without ``--skip-bad`` ends the build here
   with exit 1: nothing is written) and ``--baseline``.
2. Lock ``--out`` (and ``--site``): a second build of the same folder waits or stops.
3. Read the inputs once; a report already in DIR built from the same inputs, options and code
   is "up to date" and nothing more is done (nothing is started).
4. Stage: staging folders of killed builds are removed; a fresh marked folder beside DIR (same
   parent, so the same filesystem), named ``.DIR.tmp-XXXX``. Analyse once (the same
   `open_source(...).analyse` as `benchreport analyse`) and write the tables, ``flags.json`` and
   ``refused.json`` into it.
5. Parameterise and execute ``notebooks/report.ipynb`` with papermill, in this process
   (benchreport.report.inprocess: papermill's engine interface, no kernel); its `Report` is given
   the analysis in memory and draws the figures; papermill saves the executed notebook as
   ``report.ipynb``. Its parameters are plain data (lists of path strings, numbers, strings).
6. Render ``report.html`` (benchreport.report.render.html: nbconvert, ``templates/benchreport``).
7. Print ``report.pdf`` from the page, now that it exists (benchreport.report.render.pdf: headless
   Chromium where installed, else WeasyPrint; ``--pdf-engine``). Chromium is started here and only
   here, and its profile and temporary files are in one temporary folder removed however the
   print ends.
8. Publish: the marker is rewritten to list every file; when DIR does not exist, one ``rename``;
   when it does, an atomic exchange of the two folders (Linux ``renameat2(RENAME_EXCHANGE)``),
   falling back to two renames. The previous DIR is replaced only when everything above succeeded.

Whatever happens (an error, Ctrl-C, SIGTERM: benchreport.progress turns it into an exception),
the staging folder is removed, so a failed build leaves the last good report byte for byte as it
was and no temporary folder behind.

`build(BuildRequest)` returns a `BuildResult` or raises `BuildError`, whose `kind` says what
went wrong: "refused" (a file was refused without ``--skip-bad``, or no run could be read),
"usage" (an unknown format, a baseline that is no seat, an output path that is not
benchreport's to replace), "failed" (the notebook raised, rendering failed, DIR could not be
written: the previous report is unchanged). benchreport.cli turns them into exit codes (1, 2,
4; 3 when the result met ``--fail-on``). Every message is one line.
"""

from __future__ import annotations

import time

import contextlib
import hashlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from benchreport import outdir
from benchreport.load.errors import DataSetError, one_line, refusal_lines
from benchreport.outdir import replace_dir
from benchreport.options import notebook_parameters
from benchreport.progress import stop_if_terminated, terminate_as_interrupt
from benchreport.resources import notebook_path
from benchreport.source import RefusedFiles, Source, SourceError, open_source

__all__ = ["build", "BuildRequest", "BuildResult", "BuildError", "NOTEBOOK", "replace_dir", "staging_dir"]

#: the parameterised report notebook (never overwritten: papermill writes a copy)
NOTEBOOK = notebook_path("report.ipynb")
KERNEL = "python3"
REPORT_FORMATS = ("html", "pdf")
FIGURE_FORMATS = ("png", "svg", "pdf")
#: what a build records of its inputs in DIR, so that the next build of the same inputs does nothing
BUILD_FILE = "build.json"


class BuildError(Exception):
    """A build that cannot go on: a one-line message and its `kind`: "usage" (cannot be done as
    asked), "refused" (a file was refused, or nothing could be read), "failed" (the build itself
    failed; the previous report is unchanged)."""

    def __init__(self, message: str, kind: str = "failed"):
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class BuildRequest:
    """What to build: the report of `source` (benchreport.source) into `out`, with `options`
    (benchreport.options) and the build's own settings, as `benchreport build` takes them."""

    source: Source
    out: str
    options: object
    title: str = "Benchmark report"
    formats: str | None = None  # None: html and pdf, or html alone without the PDF engine
    figure_formats: str = "png,svg"
    site: str | None = None
    wait: float | None = None
    skip_bad: bool = False
    fail_on: str | None = None
    quiet: bool = False
    pdf_engine: str = "auto"  # benchreport.report.render.pdf: auto, chromium or weasyprint


@dataclass(frozen=True)
class BuildResult:
    """A report in `out` (written now, or already there from the same inputs: `up_to_date`),
    its flags (flags.json), formats and figure files, and whether `--fail-on` was met."""

    out: Path
    shown: str
    flags: list
    formats: list
    figures: list
    up_to_date: bool
    fail_on_met: bool
    #: the reference of a "new-" --fail-on: the flags of the report `out` held before (code,
    #: severity, seats, cell), or None when it held none (benchreport.flags.gate)
    previous_flags: list | None = None


def _output_error(exc: outdir.OutputFolderError) -> BuildError:
    """An output folder's error as the build's: a folder that cannot be written is a failed build."""
    return BuildError(str(exc), exc.kind)


# --- small helpers -----------------------------------------------------------------------


def _say(message: str, *, quiet: bool, progress_only: bool = False) -> None:
    """One line on stderr; step lines only on a terminal (cron logs stay short)."""
    if quiet or (progress_only and not sys.stderr.isatty()):
        return
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def _formats(text: str, allowed: tuple[str, ...], option: str) -> list[str]:
    items = [t.strip().lower() for t in str(text or "").split(",") if t.strip()]
    bad = [t for t in items if t not in allowed]
    if bad or not items:
        raise BuildError(f"{option} takes a comma-separated list of {', '.join(allowed)}; got {text!r}", "usage")
    return list(dict.fromkeys(items))


def _report_formats(given: str | None, engine: str, *, quiet: bool) -> list[str]:
    """--format's list; not given: html and pdf, or html alone (said once) where no PDF engine
    is here (benchreport.report.render.pdf). PDF asked for without its engine is a usage error."""
    from benchreport.report.render.pdf import ENGINES, engine_missing

    if engine not in ENGINES:  # a wrong name is a usage error, not a PDF left out
        raise BuildError(engine_missing(engine), "usage")
    absent = engine_missing(engine)
    if given is None:
        if absent:
            _say(f"PDF left out: {absent}; writing report.html", quiet=quiet)
            return ["html"]
        given = "html,pdf"
    formats = _formats(given, REPORT_FORMATS, "--format")
    if "pdf" in formats and absent:
        raise BuildError(absent + " (or --format html)", "usage")
    return formats


def _check_out(given: str, runs: list[str]) -> outdir.Target:
    try:
        return outdir.check_out(given, runs)
    except outdir.OutputFolderError as exc:
        raise _output_error(exc) from None


def staging_dir(out: Path):
    """A fresh marked folder beside `out` (same filesystem), removed on exit unless moved away."""
    return outdir.staging(out, "build")


@contextlib.contextmanager
def _staging(out: Path) -> Iterator[Path]:
    try:
        with staging_dir(out) as stage:
            yield stage
    except outdir.OutputFolderError as exc:
        raise _output_error(exc) from None


# --- the steps ---------------------------------------------------------------------------


def _parameters(request: BuildRequest, figure_formats: list[str]) -> dict:
    """papermill parameters: plain data only (benchreport.options.notebook_parameters); `out` is
    the report's folder (the notebook writes into the staging folder: HeldAnalysis.out)."""
    source = request.source
    return notebook_parameters(
        request.options,
        runs=[_absolute(p) for p in source.paths],
        store=_absolute(source.store) if source.store else None,
        out=_absolute(request.out),
        title=request.title,
        formats=figure_formats,
        skip_bad=request.skip_bad,
        max_file_mb=source.max_file_mb,
        strict=source.strict,
    )


def _execute(params: dict, output: Path, analysis, *, quiet: bool) -> None:
    """papermill executes the report notebook in this process (benchreport.report.inprocess) into
    `output`, its `Report` given `analysis` (benchreport.report.document.held_analysis) and writing
    its figures beside `output`."""
    from papermill.exceptions import PapermillExecutionError

    from benchreport.report.document import HeldAnalysis, held_analysis
    from benchreport.report.inprocess import execute_in_process

    if not NOTEBOOK.is_file():
        raise BuildError(f"the report notebook is missing: {NOTEBOOK}")
    _say("executing the report notebook (papermill)", quiet=quiet, progress_only=True)
    try:
        with held_analysis(HeldAnalysis(analysis, out=output.parent)):
            execute_in_process(NOTEBOOK, output, params, progress=not quiet)
    except PapermillExecutionError as exc:
        # SIGTERM inside a cell can surface as another error (raised in an extension module's
        # import, it becomes "ImportError: initialization failed"): the signal is what happened
        stop_if_terminated()
        if exc.ename == "RefusedFiles":
            raise BuildError(exc.evalue, "refused") from None
        if exc.ename in ("DataSetError", "StoreError"):  # the data cannot be analysed as asked
            raise BuildError(exc.evalue, "usage") from None
        raise BuildError(f"the report notebook failed in cell {exc.exec_count}: {exc.ename}: {exc.evalue}") from None


def _cannot_be_done_as_asked(exc: Exception) -> bool:
    """The data cannot be analysed as asked (several incumbents, a store that is not one): the
    command line's exit 2, not a failed build."""
    from benchreport.store.layout import StoreError

    return isinstance(exc, (DataSetError, StoreError))


def _render(stage: Path, title: str, formats: list[str], *, quiet: bool) -> str:
    """report.html from the executed notebook (written when asked for); the page, returned."""
    import nbformat

    from benchreport.report.render.html import notebook_to_html

    nb = nbformat.read(stage / "report.ipynb", as_version=4)
    _say("rendering report.html", quiet=quiet, progress_only=True)
    html = notebook_to_html(nb, title=title)
    if "html" in formats:
        (stage / "report.html").write_text(html, encoding="utf-8")
    return html


def _print(html: str, stage: Path, pdf_engine: str, *, quiet: bool) -> None:
    """report.pdf of the page (benchreport.report.render.pdf.html_to_pdf), which exists by now."""
    from benchreport.report.render.pdf import choose_engine, html_to_pdf

    _say(f"rendering report.pdf ({choose_engine(pdf_engine)})", quiet=quiet, progress_only=True)
    html_to_pdf(html, stage / "report.pdf", engine=pdf_engine, warn=lambda m: _say(m, quiet=quiet), when=time.time())


def _check_outputs(stage: Path, formats: list[str]) -> dict:
    missing = [
        n
        for n in ("report.ipynb", "flags.json", "tables/cells.csv", "tables/comparisons.csv", "tables/exam_deltas.csv")
        if not (stage / n).is_file()
    ]
    missing += [f"report.{f}" for f in formats if not (stage / f"report.{f}").is_file()]
    if missing:
        raise BuildError("the build did not produce " + ", ".join(missing))
    return {
        "flags": json.loads((stage / "flags.json").read_text(encoding="utf-8")),
        "figures": sorted(p.name for p in (stage / "figures").glob("*")) if (stage / "figures").is_dir() else [],
    }


def write_analysis(analysis, out_dir: Path) -> list[Path]:
    """`benchreport.pipeline.write_analysis`, imported when a build analyses: the pipeline brings the
    statistics (SciPy), which a build that finds its report up to date never needs."""
    from benchreport.pipeline import write_analysis as write

    return write(analysis, out_dir)


def _fail_on_met(flags: list[dict], level: str | None, previous: list[dict] | None) -> bool:
    """Whether --fail-on LEVEL is met (a "new-" level: by a flag `previous` did not raise)."""
    from benchreport.flags.gate import judge_gate

    return bool(level) and judge_gate(flags, level, previous).met


def _previous_flags(out: Path) -> list[dict] | None:
    """The flags of the report in `out` before this build (what a "new-" --fail-on compares with),
    kept as code, severity, seats and cell; None when `out` holds no readable flags.json."""
    try:
        flags = json.loads((out / "flags.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(flags, list):
        return None
    return [{k: f.get(k) for k in ("code", "severity", "seats", "cell")} for f in flags if isinstance(f, dict)]


def _recorded_reference(out: Path) -> list[dict] | None:
    """The reference the report in `out` was judged against (build.json), so that a build that
    finds it up to date judges its gate as the build that wrote it did."""
    try:
        done = json.loads((out / BUILD_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    previous = done.get("previous_flags") if isinstance(done, dict) else None
    return previous if isinstance(previous, list) else None


def _absolute(path: str) -> str:
    if "://" in path:  # a store's URL (postgresql://...: benchreport.store.lake), not a path
        return path
    return str(Path(path).expanduser().absolute())


def _input_paths(source: Source) -> list[str]:
    """The inputs as absolute paths: RUNS, or the run store's folder (a mistyped folder is a
    usage error, even with --skip-bad)."""
    try:
        source.check_exists()
    except SourceError as exc:
        raise BuildError(str(exc), "usage") from None
    return [_absolute(p) for p in ([source.store] if source.store else source.paths)]


def _inputs(request: BuildRequest):
    """What the build analyses, read once (RUNS loaded, or the run store at one state). The build
    analyses once; the notebook reads that analysis (`analysis_file`). A refused file without
    --skip-bad ends the build here, before anything is written (benchreport.source's one rule)."""
    opened = open_source(request.source, progress=None if not request.quiet else False)
    loaded = opened.loaded
    for line in refusal_lines(loaded.refused, loaded.skipped, quiet=request.quiet, listed_in="refused.json"):
        print(line, file=sys.stderr)
    try:
        opened.check_refused(skip_bad=request.skip_bad)
        opened.require_runs()
    except RefusedFiles:
        raise BuildError(
            f"{loaded.refused_files} file(s) refused; nothing was written "
            "(use --skip-bad to build from the other files)",
            "refused",
        ) from None
    except SourceError as exc:
        raise BuildError(str(exc), "refused") from None
    return opened


def _code_digest() -> str:
    """A digest of benchreport's own files (library, notebooks, templates: their names, sizes and
    modification times), so a changed installation is never "up to date" with an old report. A
    stat per file: a few milliseconds."""
    from benchreport.resources import notebook_path, templates_dir

    h = hashlib.sha256()
    for root in (Path(__file__).resolve().parents[1], notebook_path().parent, templates_dir()):
        for f in sorted(root.rglob("*")):
            if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc":
                st = f.stat()
                h.update(f"{f.relative_to(root)}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def _build_key(content: str, request: BuildRequest, formats, figure_formats) -> str:
    """What the report depends on: the data's content, every option, the formats, the title,
    benchreport's version and its own files (`_code_digest`). Equal keys: the report already in DIR
    is this build's."""
    from benchreport.version import __version__

    spec = {
        "content": content,
        "options": request.options.as_dict(),
        "formats": formats,
        "figures": figure_formats,
        "title": request.title,
        "skip_bad": request.skip_bad,
        "strict": request.source.strict,
        "version": __version__,
        "code": _code_digest(),
    }
    return hashlib.sha256(json.dumps(spec, sort_keys=True, default=str).encode()).hexdigest()


def _up_to_date(out: Path, key: str, formats: list[str]) -> list[dict] | None:
    """The flags of the report in `out` when it was built from the same inputs, else None."""
    try:
        done = json.loads((out / BUILD_FILE).read_text(encoding="utf-8"))
        flags = json.loads((out / "flags.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if done.get("build_key") != key or not all((out / f"report.{f}").is_file() for f in formats):
        return None
    return flags


def _site_facts(analysis, title: str) -> dict:
    """What a site's index shows of this build: the data's newest date, the title, the headline."""
    from benchreport.site import headline_text

    dates = analysis.tables.runs["date"].astype(str) if len(analysis.tables.runs) else []
    return {"date": max(dates) if len(dates) else None, "title": title, "headline": headline_text(analysis)}


def _check_site(site_dir: str | None) -> None:
    """--site DIR must be a site benchreport keeps (or missing, or empty): checked before anything is built."""
    if site_dir:
        from benchreport import site

        try:
            site.check_site(site_dir)
        except outdir.OutputFolderError as exc:
            raise _output_error(exc) from None


def _to_site(site_dir: str | None, out: Path, inputs: list[str], *, quiet: bool) -> None:
    """With --site DIR: the report in `out` kept as SITE/DATE/, and SITE/index.html rewritten."""
    if not site_dir:
        return
    from benchreport import site

    facts = json.loads((out / BUILD_FILE).read_text(encoding="utf-8"))
    if not facts.get("date"):
        raise BuildError("--site: the data hold no dated run, so the report has no date to be kept under", "usage")
    try:
        root = site.open_site(site_dir)
        entry = site.add_report(
            root,
            out,
            date=facts["date"],
            title=facts.get("title") or "Benchmark report",
            headline=facts.get("headline") or "",
            inputs=inputs,
        )
        site.write_index(root)
    except outdir.OutputFolderError as exc:
        raise _output_error(exc) from None
    except OSError as exc:
        raise BuildError(f"--site: could not write {one_line(str(site_dir))}: {exc}") from None
    _say(f"kept in the site as {one_line(str(entry))}; index.html rewritten", quiet=quiet)


def build(request: BuildRequest) -> BuildResult:
    """Build the report of `request.source` into `request.out` (see the module docstring)."""
    quiet = request.quiet
    formats = _report_formats(request.formats, request.pdf_engine, quiet=quiet)
    figure_formats = _formats(request.figure_formats, FIGURE_FORMATS, "--figure-formats")
    inputs = _input_paths(request.source)
    target = _check_out(request.out, inputs)
    _check_site(request.site)
    with _locks(request, target):
        return _build_locked(request, formats, figure_formats, inputs, target)


@contextlib.contextmanager
def _locks(request: BuildRequest, target: outdir.Target) -> Iterator[None]:
    """--out locked (and --site): a second build of the same folder waits or stops."""
    locks = contextlib.ExitStack()
    try:
        locks.enter_context(outdir.locked(target, "build", wait=request.wait))
        if request.site:
            site_target = outdir.Target(Path(os.path.abspath(request.site)), one_line(str(request.site)))
            locks.enter_context(outdir.locked(site_target, "build --site", wait=request.wait, option="--site"))
    except outdir.OutputFolderError as exc:
        locks.close()
        raise _output_error(exc) from None
    with locks:
        yield


def _build_locked(request: BuildRequest, formats, figure_formats, inputs, target) -> BuildResult:
    """`build` with --out (and --site) locked: analyse, stage, execute, render, print, publish."""
    quiet, out = request.quiet, target.path
    opened = _inputs(request)
    key = _build_key(opened.content_key(), request, formats, figure_formats)
    existing = _up_to_date(out, key, formats)
    if existing is not None:
        _say(f"{target.shown} is up to date (same data, options and version): nothing to do", quiet=quiet)
        _to_site(request.site, out, inputs, quiet=quiet)
        previous = _recorded_reference(out)
        met = _fail_on_met(existing, request.fail_on, previous)
        return BuildResult(out, target.shown, existing, formats, [], True, met, previous)
    previous = _previous_flags(out)
    for path in outdir.clean_leftovers(out):
        _say(f"removed {one_line(path.name)}, left beside --out by a build that was stopped", quiet=quiet)
    with terminate_as_interrupt(), _staging(out) as stage:
        step = "the analysis"
        try:
            analysis = _analyse(request, opened)
            write_analysis(analysis, stage)  # tables/*.csv, flags.json, refused.json
            # a SIGTERM whose raise Python swallowed (it landed in a weakref callback or `__del__`)
            # stops the build at the next step, never after a Chromium that prints for minutes
            stop_if_terminated()
            step = "the report notebook"
            _execute(_parameters(request, figure_formats), stage / "report.ipynb", analysis, quiet=quiet)
            stop_if_terminated()
            step = "rendering"
            html = _render(stage, request.title, formats, quiet=quiet)
            if "pdf" in formats:
                stop_if_terminated()
                step = "printing report.pdf"
                _print(html, stage, request.pdf_engine, quiet=quiet)
            facts = _site_facts(analysis, request.title)
            (stage / BUILD_FILE).write_text(
                json.dumps({"build_key": key, **facts, "previous_flags": previous}, indent=2, ensure_ascii=False)
                + "\n",
                encoding="utf-8",
            )
            step = "checking the outputs"
            written = _check_outputs(stage, formats)
            step = f"moving the report into {target.shown}"
            outdir.publish(stage, out, "build")
        except BuildError:
            raise
        except outdir.OutputFolderError as exc:
            raise _output_error(exc) from None
        except Exception as exc:  # one line for a scheduled build's log; the traceback on request
            stop_if_terminated()  # an error the signal caused is the signal
            if os.environ.get("BENCHREPORT_DEBUG") or _cannot_be_done_as_asked(exc):
                raise
            raise BuildError(
                f"{step} failed: {type(exc).__name__}: {exc} (set BENCHREPORT_DEBUG=1 for the traceback)"
            ) from None
    _to_site(request.site, out, inputs, quiet=quiet)
    flags = written["flags"]
    met = _fail_on_met(flags, request.fail_on, previous)
    return BuildResult(out, target.shown, flags, formats, written["figures"], False, met, previous)


def _analyse(request: BuildRequest, opened):
    """The analysis of what `_inputs` read; a --baseline that is no seat of it is a usage error."""
    options = request.options
    analysis = opened.analyse(options, quiet=request.quiet)
    seats = sorted(set(analysis.tables.seats["seat"].astype(str)))
    if options.baseline is not None and options.baseline not in seats:
        shown = ", ".join(seats[:8]) + (", ..." if len(seats) > 8 else "")
        raise BuildError(f"--baseline {options.baseline!r} is not a seat in the data (seats: {shown})", "usage")
    loaded = analysis.loaded
    _say(
        f"{len(analysis.tables.runs)} run(s) of {len(seats)} seat(s) analysed, "
        f"{loaded.refused_files} file(s) refused, {len(loaded.skipped)} skipped",
        quiet=request.quiet,
    )
    return analysis
