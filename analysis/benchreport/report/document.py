"""`Report`: what the report notebook holds on to while it is executed.

The notebook stays thin (no ``def`` or ``class``): its cells call `Report.open` once, then
`report.show(sections.something(report.analysis))` per element. `Report` numbers tables
(Table 1, 2, ...; appendix Table A1, ...) and figures (Figure 1, ...), writes every figure
to ``OUT/figures/figure-NN.{png,svg}`` (names from our counter, never from data), and
displays each element as escaped HTML (``text/html`` outputs) that the nbconvert template
turns into the paper. In a build, the build's own process draws some figures while the
notebook runs (benchreport.report.shared_figures); they are put in their places here.
"""
from __future__ import annotations

import contextlib
import functools
import os
import secrets
import shutil
import struct
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from markupsafe import Markup

from benchreport.load.errors import DataSetError
from benchreport.options import notebook_parameters, parameters_from
from benchreport.pipeline import Options, load_analysis, options_from, write_analysis
from benchreport.report import render, sections
from benchreport.report.figures import DPI, save_figure
from benchreport.report.sections.blocks import Division, Items, Paragraph, Prose, TitleBlock
from benchreport.report.shared_figures import SharedFigures
from benchreport.source import RefusedFiles, Source, SourceError, open_source

__all__ = ["Report", "RefusedFiles", "HeldAnalysis", "held_analysis", "shown_to"]


@dataclass(frozen=True)
class HeldAnalysis:
    """The analysis a build made, held for the report notebook it executes in the same process
    (benchreport.report.inprocess): `Report.open` without an `analysis_file` takes it instead of
    analysing the runs again (the executed notebook, opened later by hand, analyses them).
    `shared`: figures a process beside the build draws (benchreport.report.shared_figures);
    `gone`: true once that process ended, so nothing waits for it; `out`: where the notebook
    writes its figures (the build's staging folder), in place of its `out` parameter, which names
    the report's own folder (so the executed notebook, run again by hand, writes there). A figure's
    files other than its PNG (which the page shows) are left to `later`: the build writes them
    once the page is rendered, while the PDF is printed."""

    analysis: Any
    shared: SharedFigures | None = None
    gone: Callable[[], bool] = lambda: False
    out: Path | None = None
    #: work the page does not wait for (a figure's SVG and PDF files), done by `finish`
    later: list = field(default_factory=list)

    def finish(self) -> None:
        """Do the work left for later (the build does it while Chromium prints the page)."""
        while self.later:
            self.later.pop(0)()


_HELD: ContextVar[HeldAnalysis | None] = ContextVar("benchreport_held_analysis", default=None)
_SHOWN_TO: ContextVar[Callable[[Markup], None] | None] = ContextVar("benchreport_shown_to", default=None)
_PENDING: ContextVar[list | None] = ContextVar("benchreport_pending_figures", default=None)


@contextlib.contextmanager
def held_analysis(held: HeldAnalysis) -> Iterator[HeldAnalysis]:
    """`held` is what `Report.open` opens while the block runs (unless given an `analysis_file`)."""
    token = _HELD.set(held)
    try:
        yield held
    finally:
        _HELD.reset(token)


@contextlib.contextmanager
def shown_to(sink: Callable[[Markup], None]) -> Iterator[None]:
    """What every `Report` shows while the block runs goes to `sink` (a notebook cell's outputs,
    when the build executes the notebook in its own process) instead of IPython's display."""
    token = _SHOWN_TO.set(sink)
    try:
        yield
    finally:
        _SHOWN_TO.reset(token)


@contextlib.contextmanager
def figures_last() -> Iterator[list]:
    """While the block runs (the build's notebook: benchreport.report.inprocess), a `Report` with
    a process drawing figures beside it (`HeldAnalysis.shared`) shows each figure as a placeholder
    and goes on with the next cell; the block's owner calls `Report.draw_pending` on each report of
    the yielded list once the last cell has run. The notebook then never waits mid-notebook for a
    figure the other process is drawing: it writes the rest of the report meanwhile, and the two
    processes share the figures between them as they come (docs/performance.md)."""
    pending: list = []
    token = _PENDING.set(pending)
    try:
        yield pending
    finally:
        _PENDING.reset(token)


def _png_width_in(png: bytes) -> float | None:
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    width = struct.unpack(">I", png[16:20])[0]
    return width / DPI


class Report:
    """One report being written: the analysis, the output folder and the numbering."""

    def __init__(self, analysis, *, out: str | os.PathLike, title: str,
                 formats: Sequence[str] = ("png", "svg"), parameters: Mapping[str, Any] | None = None,
                 display: bool = True):
        self.analysis = analysis
        self.out = Path(out)
        self.title = str(title)
        self.formats = tuple(formats)
        self.parameters = dict(parameters or {})
        self.display = display
        self.fragments: list[Markup] = []
        self._tables = 0
        self._appendix = 0
        self._figures = 0
        self.labels: dict[str, str] = {}
        #: figures shown as placeholders (`figures_last`): (placeholder, name), drawn by `draw_pending`
        self._slots: list[tuple[Markup, str]] = []
        self._slot_mark = secrets.token_hex(8)
        #: where `_emit` puts what it is given while `draw_pending` draws a figure
        self._capture: list[Markup] | None = None
        #: figures the build draws beside this notebook (benchreport.report.shared_figures), or None
        self.shared = None
        self._gone = lambda: False
        #: in a build, where the work the page does not wait for goes (HeldAnalysis.later)
        self._later: list | None = None

    @classmethod
    def open(cls, runs: str | os.PathLike | Iterable[str | os.PathLike] = (), *, out: str | os.PathLike,
             title: str = "Benchmark report", formats: Sequence[str] = ("png", "svg"), skip_bad: bool = False,
             max_file_mb: float = 512, strict: bool = False, store: str | os.PathLike | None = None,
             analysis_file: str | os.PathLike | None = None, options: Options | None = None,
             write: bool = True, display: bool = True, **option_values) -> "Report":
        """The analysis of `runs` (or of the run store `store`), its tables/*.csv, flags.json and
        refused.json written to `out`. `analysis_file`: an analysis saved by
        `benchreport.pipeline.save_analysis`, reported on as it is (nothing is written). Inside
        `benchreport build` (`held_analysis`) the build's own analysis is taken from memory (the
        build writes the tables). Otherwise the notebook analyses the data itself and writes them.
        `options`, or the analysis options and thresholds by name (benchreport.options).

        Raises RefusedFiles when a file is refused and `skip_bad` is false (nothing is
        written), DataSetError for a `baseline` that is not a seat of the data.
        """
        options = options if options is not None else options_from(option_values)
        paths = [str(runs)] if isinstance(runs, (str, os.PathLike)) else [str(r) for r in runs]
        held = _HELD.get() if analysis_file is None else None
        if held is not None:
            analysis = held.analysis
            out = held.out if held.out is not None else out
        elif analysis_file is not None:
            analysis = load_analysis(analysis_file)
        else:
            analysis = _analyse(paths, store, options, skip_bad=skip_bad, max_file_mb=max_file_mb, strict=strict)
        seats = set(analysis.tables.seats["seat"].astype(str))
        if options.baseline is not None and options.baseline not in seats:
            raise DataSetError(f"the baseline seat {options.baseline!r} is not a seat in the data")
        if write and analysis_file is None and held is None:
            write_analysis(analysis, out)
        params = notebook_parameters(options, runs=paths, store=None if store is None else str(store), out=str(out),
                                     title=title, formats=list(formats), skip_bad=skip_bad, max_file_mb=max_file_mb,
                                     strict=strict)
        report = cls(analysis, out=out, title=title, formats=formats, parameters=params, display=display)
        if held is not None:  # a build: it may draw figures beside, and writes files the page needs not first
            report.shared, report._gone, report._later = held.shared, held.gone, held.later
        return report

    @classmethod
    def from_parameters(cls, namespace: Mapping[str, Any]) -> "Report":
        """`open` with the report notebook's parameters, checked before anything runs
        (benchreport.options.parameters_from: unknown names, kinds, ranges, paths)."""
        params = parameters_from(namespace)
        return cls.open(**params.build, options=params.options)

    # --- numbering --------------------------------------------------------------------------

    def _next_label(self, kind: str) -> str | None:
        if kind == "table":
            self._tables += 1
            return f"Table {self._tables}"
        if kind == "appendix":
            self._appendix += 1
            return f"Table A{self._appendix}"
        if kind == "figure":
            self._figures += 1
            return f"Figure {self._figures}"
        return None

    # --- showing ----------------------------------------------------------------------------

    def _emit(self, fragment: Markup) -> None:
        if self._capture is not None:
            self._capture.append(fragment)
            return
        self.fragments.append(fragment)
        sink = _SHOWN_TO.get()
        if sink is not None:
            sink(fragment)
        elif self.display:
            # deferred: IPython is heavy and only needed when a kernel displays the report
            from IPython.display import HTML, display

            display(HTML(str(fragment)))

    def show(self, *blocks) -> None:
        """Display text (`sections.blocks.Prose` or one of its blocks), tables, figure blocks
        or lists of them, in order; each as one element of the report.

        ``None`` is skipped (an element with no data), so a cell can always call show.
        A `markupsafe.Markup` is shown as it is (HTML the caller vouches for).
        """
        for block in blocks:
            if block is None:
                continue
            if isinstance(block, (list, tuple)):
                self.show(*block)
            elif isinstance(block, sections.Table):
                self.table(block)
            elif isinstance(block, sections.FigureBlock):
                self.figure(block)
            elif isinstance(block, (Prose, Paragraph, Items, Division, TitleBlock)):
                self._emit(render.prose_html(block))
            elif isinstance(block, Markup):
                self._emit(block)
            else:
                raise TypeError(f"Report.show cannot display a {type(block).__name__}; give it "
                                "a section's text, a sections.Table or a sections.FigureBlock")

    def table(self, table: sections.Table) -> str | None:
        """Number and display a table; returns its label ('Table 2')."""
        if table is None:
            return None
        label = self._next_label(table.kind)
        if label and table.key:
            self.labels[table.key] = label
        self._emit(render.table_html(table, label))
        return label

    def figure(self, block: sections.FigureBlock | Any, caption: str | None = None) -> str | None:
        """Number a figure, save it as OUT/figures/figure-NN.* and display it with its caption."""
        if block is None:
            return None
        if not isinstance(block, sections.FigureBlock):
            block = sections.FigureBlock(block, caption or "")
        if block.figure is None:
            return None
        label = self._next_label("figure")
        stem = f"figure-{self._figures:02d}"
        folder = self.out / "figures"
        formats = tuple(dict.fromkeys(("png", *self.formats)))
        now = formats if self._later is None else ("png",)
        paths = save_figure(block.figure, folder, stem, now)
        png = paths["png"].read_bytes()
        if "png" not in self.formats:
            paths["png"].unlink()
        if len(now) < len(formats):
            self._later.append(functools.partial(save_figure, block.figure, folder, stem, formats[len(now):]))
        return self._show_figure(png, label, block.caption, block.key)

    def figures(self, *names: str) -> None:
        """Show the report's figures by name (benchreport.report.catalog.FIGURES), in order, each
        drawn here from its section function. In a build, a figure the process drawing beside the
        notebook has claimed (benchreport.report.shared_figures) is taken from it instead, without
        being made here at all; one it failed, or left when it ended, is drawn here."""
        from benchreport.report.catalog import FIGURES

        for name in names:
            if name not in FIGURES:
                raise ValueError(f"no figure named {name!r}; the report's figures: {', '.join(FIGURES)}")
        pending = _PENDING.get()
        if self.shared is not None and pending is not None:  # placeholders, drawn at the end
            if not self._slots:
                pending.append(self)
            for name in names:
                placeholder = Markup(f"<!-- benchreport figure {self._slot_mark} {len(self._slots)} -->")
                self._slots.append((placeholder, name))
                self._emit(placeholder)
            return
        for name in names:
            if not self._taken(name):
                self.figure(FIGURES[name].make(self.analysis))

    def draw_pending(self) -> dict[str, str]:
        """The figures shown as placeholders (`figures_last`), in the report's order: each drawn
        here (claimed from the front) or taken from the process drawing from the end, then numbered,
        written and rendered as `figures` does; returns {placeholder: its HTML}, "" for a figure
        with nothing to draw. The report's own fragments get the same replacements."""
        from benchreport.report.catalog import FIGURES

        slots, self._slots = self._slots, []
        shown: dict[str, str] = {}
        for placeholder, name in slots:
            self._capture = []
            try:
                if not self._taken(name):
                    self.figure(FIGURES[name].make(self.analysis))
                html = Markup("").join(self._capture)
            finally:
                self._capture = None
            shown[str(placeholder)] = str(html)
        self.fragments = [Markup(shown[str(f)]) if str(f) in shown else f for f in self.fragments]
        self.fragments = [f for f in self.fragments if str(f)]
        return shown

    def _show_figure(self, png: bytes, label: str, caption: str, key: str) -> str:
        if key:
            self.labels[key] = label
        self._emit(render.figure_html(png, label, caption, width_in=_png_width_in(png), key=key))
        return label

    def _taken(self, name: str) -> bool:
        """True when figure `name` came from the drawing process (shown here, or it had nothing to
        draw); False when this process is to draw it (it claimed it first, or the other's failed or
        never came)."""
        shared = self.shared
        if shared is None or shared.claim(name):
            return False
        facts = shared.wait(name, gone=self._gone)
        formats = tuple(dict.fromkeys(("png", *self.formats)))
        have = set(facts.get("formats", ())) if facts else set()
        rest = [f for f in formats if f not in have]
        if not facts or facts.get("failed") or not (facts.get("none") or "png" in have):
            return False
        if facts.get("none"):
            return True
        if rest and (self._later is None or not set(rest) <= set(facts.get("later", ()))):
            return False  # files this report needs that the other process does not write
        files, stem = shared.files(name, formats), f"figure-{self._figures + 1:02d}"
        folder = self.out / "figures"
        try:
            png = files["png"].read_bytes()
            folder.mkdir(parents=True, exist_ok=True)
            for kind in formats:
                if kind in self.formats and kind in have:
                    shutil.move(files[kind], folder / f"{stem}.{kind}")
        except OSError:
            return False
        if rest:
            self._later.append(functools.partial(self._take_later, name, stem, rest))
        self._show_figure(png, self._next_label("figure"), facts.get("caption", ""), facts.get("key", ""))
        return True

    def _take_later(self, name: str, stem: str, formats: list[str]) -> None:
        """A figure's files the drawing process writes after its PNGs (`draw_from_end`), moved into
        place once written; drawn here when that process failed or ended without them."""
        folder = self.out / "figures"
        done = self.shared.wait(f"{name}.later", gone=self._gone)
        files = self.shared.files(name, formats)
        if done and not done.get("failed") and all(files[kind].is_file() for kind in formats):
            for kind in formats:
                shutil.move(files[kind], folder / f"{stem}.{kind}")
            return
        from benchreport.report.catalog import FIGURES

        save_figure(FIGURES[name].make(self.analysis).figure, folder, stem, tuple(formats))

    def title_block(self) -> None:
        """The title, and one line on what the data set holds."""
        self._emit(render.prose_html(sections.title_block(self.title, self.analysis)))

    def html(self) -> str:
        """Everything shown so far, as one HTML fragment (for tests and quick looks)."""
        return str(render.join_fragments(self.fragments))


def _analyse(paths: list[str], store, options, *, skip_bad: bool, max_file_mb: float, strict: bool = False):
    """The analysis of run files, or of a run store (a notebook opened by hand): one source,
    refused files stopping it unless `skip_bad` (benchreport.source)."""
    try:
        opened = open_source(Source.of(paths or None, store, max_file_mb=max_file_mb, strict=strict))
    except SourceError as exc:
        raise ValueError(f"`runs`: {exc}") from None
    opened.check_refused(skip_bad=skip_bad)
    opened.require_runs()
    return opened.analyse(options)
