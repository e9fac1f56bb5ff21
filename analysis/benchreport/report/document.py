"""`Report`: what the report notebook holds on to while it is executed.

The notebook stays thin (no ``def`` or ``class``): its cells call `Report.open` once, then
`report.show(sections.something(report.analysis))` per element. `Report` numbers tables
(Table 1, 2, ...; appendix Table A1, ...) and figures (Figure 1, ...), writes every figure
to ``OUT/figures/figure-NN.{png,svg}`` (names from our counter, never from data), and
displays each element as escaped HTML (``text/html`` outputs) that the nbconvert template
turns into the paper.
"""

from __future__ import annotations

import contextlib
import os
import struct
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from markupsafe import Markup

from benchreport.load.errors import DataSetError
from benchreport.options import notebook_parameters, parameters_from
from benchreport.pipeline import Options, load_analysis, options_from, write_analysis
from benchreport.report.render import html as render
from benchreport.report.model import sections
from benchreport.report.model.figures import DPI, save_figure
from benchreport.report.model.sections.blocks import Division, Items, Paragraph, Prose, TitleBlock
from benchreport.source import RefusedFiles, Source, SourceError, open_source

__all__ = ["Report", "RefusedFiles", "HeldAnalysis", "held_analysis", "shown_to"]


@dataclass(frozen=True)
class HeldAnalysis:
    """The analysis a build made, held for the report notebook it executes in the same process
    (benchreport.report.inprocess): `Report.open` without an `analysis_file` takes it instead of
    analysing the runs again (the executed notebook, opened later by hand, analyses them).
    `out`: where the notebook writes its figures (the build's staging folder), in place of its
    `out` parameter, which names the report's own folder (so the executed notebook, run again by
    hand, writes there)."""

    analysis: Any
    out: Path | None = None


_HELD: ContextVar[HeldAnalysis | None] = ContextVar("benchreport_held_analysis", default=None)
_SHOWN_TO: ContextVar[Callable[[Markup], None] | None] = ContextVar("benchreport_shown_to", default=None)


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


def _png_width_in(png: bytes) -> float | None:
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    width = struct.unpack(">I", png[16:20])[0]
    return width / DPI


class Report:
    """One report being written: the analysis, the output folder and the numbering."""

    def __init__(
        self,
        analysis,
        *,
        out: str | os.PathLike,
        title: str,
        formats: Sequence[str] = ("png", "svg"),
        parameters: Mapping[str, Any] | None = None,
        display: bool = True,
    ):
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

    @classmethod
    def open(
        cls,
        runs: str | os.PathLike | Iterable[str | os.PathLike] = (),
        *,
        out: str | os.PathLike,
        title: str = "Benchmark report",
        formats: Sequence[str] = ("png", "svg"),
        skip_bad: bool = False,
        max_file_mb: float = 512,
        strict: bool = False,
        store: str | os.PathLike | None = None,
        analysis_file: str | os.PathLike | None = None,
        options: Options | None = None,
        write: bool = True,
        display: bool = True,
        **option_values,
    ) -> "Report":
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
        params = notebook_parameters(
            options,
            runs=paths,
            store=None if store is None else str(store),
            out=str(out),
            title=title,
            formats=list(formats),
            skip_bad=skip_bad,
            max_file_mb=max_file_mb,
            strict=strict,
        )
        return cls(analysis, out=out, title=title, formats=formats, parameters=params, display=display)

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
                raise TypeError(
                    f"Report.show cannot display a {type(block).__name__}; give it "
                    "a section's text, a sections.Table or a sections.FigureBlock"
                )

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
        paths = save_figure(block.figure, folder, stem, tuple(dict.fromkeys(("png", *self.formats))))
        png = paths["png"].read_bytes()
        if "png" not in self.formats:
            paths["png"].unlink()
        return self._show_figure(png, label, block.caption, block.key)

    def figures(self, *names: str) -> None:
        """Show the report's figures by name (benchreport.report.catalog.FIGURES), in order, each
        drawn here from its section function."""
        from benchreport.report.catalog import FIGURES

        for name in names:
            if name not in FIGURES:
                raise ValueError(f"no figure named {name!r}; the report's figures: {', '.join(FIGURES)}")
        for name in names:
            self.figure(FIGURES[name].make(self.analysis))

    def _show_figure(self, png: bytes, label: str, caption: str, key: str) -> str:
        if key:
            self.labels[key] = label
        self._emit(render.figure_html(png, label, caption, width_in=_png_width_in(png), key=key))
        return label

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
