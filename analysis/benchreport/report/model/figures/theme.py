"""The figures' one theme, sizes, colours and markers, and `save_figure` (PNG, SVG, PDF with fixed bytes).

Colours are Okabe and Ito's colour-blind-safe set (Okabe & Ito 2008, "Color Universal
Design"; also seaborn's "colorblind"), without its yellow (too light on white); every seat
also gets its own marker shape, and, past the seven colours, its own line style, so seats
are told apart in greyscale and by readers with a colour-vision deficiency
(tests/test_figures_paper.py checks the colours under deuteranopia and protanopia).
SVG text stays text (``svg.fonttype: none``), so a figure can be edited in Inkscape or
Illustrator.
"""

from __future__ import annotations

import contextlib
import os
import textwrap
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import matplotlib
import matplotlib.dates as mdates
from matplotlib.backend_bases import _get_renderer
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox

from benchreport import format as fmt
from benchreport.columns import METRIC_WORDS, METRICS


#: raster resolution of every PNG (fixed, so files compare byte for byte across builds)
DPI = 200


#: text width of the PDF page (A4, 2 cm margins), in inches
WIDTH_IN = 6.5


#: one column of a two-column paper, in inches: the narrowest \columnwidth of the common classes
#: (article two-column: 221 pt = 3.06 in on A4, 229.5 pt = 3.18 in on letter, as pdflatex's
#: ``\the\columnwidth`` gives them; IEEEtran's 3.5 in and acmart sigconf's 241 pt are wider), so a
#: figure this wide fits a column of any of them at its own size
COLUMN_IN = 3.0

#: the least height of a plot (inches) in a figure sized for a page: below it the data are a strip
MIN_PLOT_IN = 0.9

#: the tallest figure (inches) a page holds with its caption: a two-column article's \textheight on
#: letter is 550 pt (7.6 in; 598 pt on A4), less two lines of caption
PAGE_IN = 7.3

#: the height (inches) a figure's only plot is given, at least, when its height is not asked for
PLOT_IN = 1.3

#: figure formats save_figure understands
FORMATS = ("png", "svg", "pdf")


#: Okabe-Ito: blue, orange, bluish green, vermillion, reddish purple, sky blue, black
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000"]


#: the second cue: one marker shape per seat, in this order (filled shapes, distinct outlines)
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]


#: the third cue, past len(PALETTE) seats (and per workload within one seat)
LINESTYLES = ["-", "--", ":", "-."]


#: neutral colours for what is not a seat (reference lines, ranges, annotations)
NEUTRAL = "#777777"


@dataclass(frozen=True)
class Style:
    """How one seat is drawn: colour, marker shape and line style (three independent cues)."""

    color: str
    marker: str
    linestyle: str = "-"


#: one vocabulary for metrics across text, tables and figures
METRIC_LABELS = METRIC_WORDS


def metric_label(metric: str, *, unit: bool = True) -> str:
    """Human name of a metric, with its unit: 'aggregate throughput (tok/s)'."""
    name = METRIC_LABELS.get(metric, fmt.short(metric))
    if unit and metric in METRICS:
        return f"{name} ({METRICS[metric][0]})"
    return name


#: a metric's name on an axis, where the statistic and unit follow it
AXIS_NAMES = {
    "output_tok_s": "aggregate throughput",
    "decode_tok_s_per_stream": "per-stream decode",
    "prefill_tok_s": "prefill throughput",
    "ttft_ms": "TTFT",
    "itl_ms": "ITL",
    "e2e_latency_ms": "E2E latency",
    "request_rate": "request rate",
    "engine_init_s": "engine start-up",
    "output_tokens": "output tokens",
    "input_tokens": "input tokens",
}


#: units of the per-request fields that are not metrics
FIELD_UNITS = {"output_tokens": "tokens", "input_tokens": "tokens"}


def axis_label(metric: str, statistics=(), *, per: str = "") -> str:
    """An axis label with the statistic drawn and the unit: 'TTFT p50 (ms)', 'TTFT p50 or mean (ms)'.

    `per`: what one value is ('per request'); a figure drawing several statistics names
    each in its legend.
    """
    name = AXIS_NAMES.get(metric) or METRIC_LABELS.get(metric) or fmt.short(metric)
    stats = list(dict.fromkeys(fmt.stat_words(s) for s in statistics if not fmt.missing(s)))
    unit = METRICS[metric][0] if metric in METRICS else FIELD_UNITS.get(metric, "")
    bits = [name, " or ".join(stats), per]
    text = " ".join(b for b in bits if b)
    return f"{text} ({unit})" if unit else text


#: seaborn 0.13's "ticks" style and "paper" context (`sns.axes_style("ticks")` updated with
#: `sns.plotting_context("paper")`), the theme's base, written out: importing seaborn for two
#: dictionaries cost a build 0.1 s of CPU (it imports ipywidgets and IPython). Its "image.cmap"
#: ("rocket", a colour map that exists only once seaborn is imported) is left out: no figure
#: of the report uses a colour map. tests/test_figures_theme_rc.py holds it to seaborn's own.
SEABORN_TICKS_PAPER = {
    "axes.axisbelow": True,
    "axes.edgecolor": ".15",
    "axes.facecolor": "white",
    "axes.grid": False,
    "axes.labelcolor": ".15",
    "axes.labelsize": 9.600000000000001,
    "axes.linewidth": 1.0,
    "axes.spines.bottom": True,
    "axes.spines.left": True,
    "axes.spines.right": True,
    "axes.spines.top": True,
    "axes.titlesize": 9.600000000000001,
    "figure.facecolor": "white",
    "font.family": ["sans-serif"],
    "font.sans-serif": ["Arial", "DejaVu Sans", "Liberation Sans", "Bitstream Vera Sans", "sans-serif"],
    "font.size": 9.600000000000001,
    "grid.color": ".8",
    "grid.linestyle": "-",
    "grid.linewidth": 0.8,
    "legend.fontsize": 8.8,
    "legend.title_fontsize": 9.600000000000001,
    "lines.linewidth": 1.2000000000000002,
    "lines.markersize": 4.800000000000001,
    "lines.solid_capstyle": "round",
    "patch.edgecolor": "w",
    "patch.force_edgecolor": True,
    "patch.linewidth": 0.8,
    "text.color": ".15",
    "xtick.bottom": True,
    "xtick.color": ".15",
    "xtick.direction": "out",
    "xtick.labelsize": 8.8,
    "xtick.major.size": 4.800000000000001,
    "xtick.major.width": 1.0,
    "xtick.minor.size": 3.2,
    "xtick.minor.width": 0.8,
    "xtick.top": False,
    "ytick.color": ".15",
    "ytick.direction": "out",
    "ytick.labelsize": 8.8,
    "ytick.left": True,
    "ytick.major.size": 4.800000000000001,
    "ytick.major.width": 1.0,
    "ytick.minor.size": 3.2,
    "ytick.minor.width": 0.8,
    "ytick.right": False,
}


def _rc() -> dict:
    rc = {key: list(value) if isinstance(value, list) else value for key, value in SEABORN_TICKS_PAPER.items()}
    rc.update(
        {
            # deterministic vector output: fixed hash salt for SVG ids, text as paths
            "svg.hashsalt": "benchreport",
            # text stays text: editable in a vector editor, searchable, and smaller
            "svg.fonttype": "none",
            "pdf.fonttype": 42,
            # data strings (seat ids, workloads) are text, never TeX/mathtext
            "text.parse_math": False,
            "text.usetex": False,
            "font.family": "serif",
            "font.serif": ["DejaVu Serif", "Bitstream Vera Serif", "serif"],
            "font.size": 8.5,
            "axes.titlesize": 8.5,
            "axes.labelsize": 8.5,
            "xtick.labelsize": 7.5,
            "ytick.labelsize": 7.5,
            "legend.fontsize": 7.5,
            "legend.title_fontsize": 7.5,
            "legend.frameon": False,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.grid": True,
            "axes.grid.axis": "y",
            "grid.color": "#dddddd",
            "grid.linewidth": 0.6,
            "lines.linewidth": 1.4,
            "lines.markersize": 4.5,
            "figure.dpi": 100,
            "savefig.dpi": DPI,
            "savefig.bbox": "tight",
            "savefig.pad_inches": 0.05,
            "figure.facecolor": "white",
            "savefig.facecolor": "white",
            "axes.prop_cycle": matplotlib.cycler(color=PALETTE),
        }
    )
    return rc


@contextlib.contextmanager
def theme():
    """The report's one theme (seaborn's 'ticks' + 'paper', `SEABORN_TICKS_PAPER`, serif), as an rc context."""
    with matplotlib.rc_context(_rc()):
        yield


def save_figure(
    fig: Figure,
    folder: str | os.PathLike,
    stem: str,
    formats: Sequence[str] = ("png", "svg"),
    *,
    size: tuple[float | None, float | None] | None = None,
    dpi: int = DPI,
) -> dict[str, Path]:
    """Write `fig` as FOLDER/STEM.png, .svg (and .pdf when asked); returns {format: path}.

    `stem` must be one of our own names (``figure-01``), never a data string. PNGs have a
    fixed dpi (`dpi`); SVG and PDF carry no date and a fixed hash salt, so the same figure
    gives the same bytes on every build. `size`: (width, height) in inches the file is to
    have exactly, None for the figure's own (a column of a two-column paper: `COLUMN_IN`): the figure is laid out
    again at that size, its legends in one column where two would not fit, and saved whole
    instead of trimmed to its contents (`fit_figure`, called first, says whether they fit).
    """
    if not stem or any(c in stem for c in "/\\\x00") or stem.startswith("."):
        raise ValueError(f"`stem` must be a plain file name, got {stem!r}")
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ValueError(f"`formats` must be among {', '.join(FORMATS)}; got {', '.join(map(str, unknown))}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    metadata = {
        "png": {"Software": None},
        "svg": {"Date": None, "Creator": None},
        "pdf": {"CreationDate": None, "ModDate": None, "Creator": None, "Producer": None},
    }
    written = {}
    with theme(), warnings.catch_warnings():
        # at a size too small for its labels matplotlib gives up on the layout with a warning;
        # `fit_problems` measures what then reaches past the edges, and the command refuses it
        warnings.filterwarnings("ignore", "constrained_layout not applied", UserWarning)
        if size is not None and getattr(fig, "benchreport_fitted", None) != tuple(size):
            _resize(fig, size)
        renderer = _settle(fig)
        if size is not None:
            bbox = Bbox.from_bounds(0, 0, *fig.get_size_inches())
        else:
            # the tight box once, from the settled figure: `bbox_inches="tight"` would draw the
            # figure again for each format just to find it (two of a figure's seven draws)
            bbox = fig.get_tightbbox(renderer).padded(float(matplotlib.rcParams["savefig.pad_inches"]))
        for kind in formats:
            path = folder / f"{stem}.{kind}"
            fig.savefig(path, format=kind, dpi=dpi, metadata=metadata[kind], bbox_inches=bbox)
            written[kind] = path
    return written


def fit_figure(fig: Figure, size: tuple[float | None, float | None]) -> list[str]:
    """Lay `fig` out at `size` inches as `save_figure` will save it, and say what does not fit.

    Legends are fitted to the width (fewer columns, then labels wrapped); with no height given
    the figure grows as tall as its plots need to keep their own height under a taller legend.
    Returns what is wrong once drawn (`fit_problems`), empty when everything fits; a later
    `save_figure` at the same `size` saves this layout as it is.
    """
    with theme(), warnings.catch_warnings():
        warnings.filterwarnings("ignore", "constrained_layout not applied", UserWarning)
        own_width = fig.get_size_inches()[0]
        own, legends = _plot_heights(fig), _legend_height(fig)
        if size[0] is not None and size[0] < own_width:
            _reflow(fig, size[0] / own_width)
        _resize(fig, size)
        if size[1] is None:
            _grow_to(fig, own, legends)
        renderer = _settle(fig)
    fig.benchreport_fitted = tuple(size)
    problems = fit_problems(fig, renderer)
    tall = fig.get_size_inches()[1]
    if size[1] is None and tall > PAGE_IN:
        problems.append(f"it would be {tall:.2f} in tall, more than a page holds ({PAGE_IN:g} in)")
    return problems


def _reflow(fig: Figure, narrower: float) -> None:
    """Small multiples on a figure `narrower` times as wide: in fewer columns (and more rows), in
    the order they were read, row by row; a grid of panels that span several cells is left as is."""
    from matplotlib.gridspec import GridSpec

    cells: dict[tuple[int, int], list] = {}
    grids = set()
    for ax in fig.axes:
        spec = ax.get_subplotspec()
        if spec is None or len(spec.rowspan) != 1 or len(spec.colspan) != 1:
            return
        grids.add(id(spec.get_gridspec()))
        cells.setdefault((spec.rowspan.start, spec.colspan.start), []).append(ax)
    if len(grids) != 1:
        return
    grid = next(iter(cells.values()))[0].get_subplotspec().get_gridspec()
    ncols = max(1, int(grid.ncols * narrower + 0.25))
    if ncols >= grid.ncols:
        return
    shown = [axes for _, axes in sorted(cells.items()) if any(a.get_visible() and a.axison for a in axes)]
    for axes in [axes for axes in cells.values() if axes not in shown]:  # empty panels of the old grid
        for ax in axes:
            fig.delaxes(ax)
    nrows = -(-len(shown) // ncols)
    new = GridSpec(nrows, ncols, figure=fig)
    for i, axes in enumerate(shown):
        for ax in axes:
            ax.set_subplotspec(new[i // ncols, i % ncols])


def _plot_heights(fig: Figure) -> dict:
    """{axes: (its height as laid out at the figure's own size, the height it is to keep)} in
    inches: its own, and at least `PLOT_IN` for a figure of one plot (`MIN_PLOT_IN` for small
    multiples)."""
    if fig.get_layout_engine() is None:
        fig.set_layout_engine("constrained")
    fig.draw_without_rendering()
    least = PLOT_IN if len(fig.axes) == 1 else MIN_PLOT_IN
    return {ax: (ax.bbox.height / fig.dpi, max(least, ax.bbox.height / fig.dpi)) for ax in fig.axes}


def _legend_height(fig: Figure) -> float:
    """The height (inches) of the figure's own legends (outside its plots), as last drawn."""
    return sum(legend.get_window_extent().height for legend in fig.legends) / fig.dpi


def _grow_to(fig: Figure, own: dict, legends: float) -> None:
    """Make the figure as tall as its axes need to be as tall as `own` says (`_plot_heights`)
    under legends that may have grown (wrapped onto more lines at a narrower width) and in the
    rows small multiples may have been given (`_reflow`)."""
    own = {ax: hw for ax, hw in own.items() if ax in fig.axes}
    width, floor = fig.get_size_inches()  # never shorter than its own height
    rows = len({round(ax.get_position().y0, 3) for ax in own}) or 1
    lift = max((want - was for was, want in own.values()), default=0.0)
    fig.set_size_inches(width, floor + max(0.0, lift) * rows + max(0.0, _legend_height(fig) - legends))
    fig.draw_without_rendering()
    for _ in range(6):  # then by what the axes still lack (or have to spare) once laid out
        short = max((want - ax.bbox.height / fig.dpi for ax, (_, want) in own.items()), default=0.0)
        height = fig.get_size_inches()[1]
        if abs(short) < 0.01 or (short < 0 and height <= floor):
            return
        fig.set_size_inches(width, max(floor, height + short * rows))
        fig.draw_without_rendering()


def fit_problems(fig: Figure, renderer=None) -> list[str]:
    """What does not fit in `fig` as drawn, in words (empty when all fits): any artist reaching
    past the figure's edges (the renderer's tight box of every artist against the canvas), and a
    plot squeezed under `MIN_PLOT_IN` tall."""
    renderer = renderer or _get_renderer(fig)
    box = fig.get_tightbbox(renderer)
    w, h = fig.get_size_inches()
    problems = []
    edges = {"left": -box.x0, "bottom": -box.y0, "right": box.x1 - w, "top": box.y1 - h}
    past = {side: d for side, d in edges.items() if d > 0.01}
    if past:
        problems.append(
            "its contents reach past its " + " and ".join(f"{side} edge by {d:.2f} in" for side, d in past.items())
        )
    plots = [ax.bbox.height / fig.dpi for ax in fig.axes if ax.get_visible() and ax.axison]
    if plots and min(plots) < MIN_PLOT_IN - 0.01:
        problems.append(f"a plot is only {min(plots):.2f} in tall (at least {MIN_PLOT_IN:g} in to be read)")
    return problems


def _settle(fig: Figure):
    """Lay the figure out once and for all (constrained layout settles over a few passes; settled
    first, every save of the same figure, in any order, gives the same bytes); returns the renderer
    it measured with. The passes run the layout engine alone, not a whole draw: the engine measures
    what it places (axes, labels, legends) with that one renderer, whose text measurements are cached,
    and the draws that follow (one per saved format) find the positions final. Against three
    disabled draws a figure, the example's figures lose a third of their layout time and keep
    their PNG and SVG bytes (issue 41)."""
    renderer = _get_renderer(fig)
    engine = fig.get_layout_engine()
    if engine is None:
        return renderer
    with renderer._draw_disabled():
        engine.execute(fig)
        for _ in range(2):  # at most three passes; stop once the axes stay where they are
            before = [ax.get_position().bounds for ax in fig.axes]
            engine.execute(fig)
            if [ax.get_position().bounds for ax in fig.axes] == before:
                break
    fig.set_layout_engine("none")  # freeze the settled positions
    # and no engine at all, not matplotlib's placeholder for one: with any engine set, savefig
    # draws the figure once more before drawing it (matplotlib 3.11's print_figure); the
    # positions are already final
    fig._layout_engine = None
    return renderer


def _resize(fig: Figure, size: tuple[float | None, float | None]) -> None:
    """The figure at `size` inches (None: as it is), laid out again; a legend wider than the
    figure in one column."""
    own = fig.get_size_inches()
    fig.set_size_inches(size[0] or own[0], size[1] or own[1])
    if fig.get_layout_engine() is None:
        fig.set_layout_engine("constrained")
    fig.draw_without_rendering()
    width = fig.bbox.width
    for legend in fig.legends + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]:
        _fit_legend(legend, 0.98 * width)
    fig.draw_without_rendering()
    for ax in fig.axes:
        _narrow_tick_labels(ax, 0.4 * width)
    for ax in fig.axes:  # an axis label longer than its axis: on two lines
        for label, room in ((ax.yaxis.label, ax.bbox.height), (ax.xaxis.label, ax.bbox.width)):
            text = label.get_text()
            box = label.get_window_extent()
            if "\n" not in text and " " in text and max(box.width, box.height) > room:
                label.set_text(textwrap.fill(text, width=len(text) // 2 + 1, break_long_words=False))


#: the least type size (points) of a legend in one column (a figure's two-column legend may be smaller)
LEGEND_PT = 6.5


def _fit_legend(legend, most: float) -> None:
    """A legend wider than `most` pixels: in fewer columns, then (in one column, in at least
    `LEGEND_PT` type) its labels wrapped onto more lines, until it fits or the labels are 16
    characters a line."""
    labels = [t.get_text() for t in legend.texts]
    longest = max((len(line) for t in labels for line in t.split("\n")), default=0)
    ncols, chars = legend._ncols, longest
    while legend.get_window_extent().width > most:
        if ncols > 1:
            ncols -= 1
        elif chars > 16:
            chars = max(16, int(chars * 0.85))
        else:
            return
        if ncols == 1 and legend._fontsize < LEGEND_PT:  # small type was for two columns side by side
            legend.prop.set_size(LEGEND_PT)
            legend._fontsize = LEGEND_PT
        texts = [_wrap_label(t, chars) for t in labels]
        title = legend.get_title().get_text()
        # set_ncols alone keeps the box laid out as it was (matplotlib 3.11): lay it out again, with
        # its title again (a new box has an empty title that still takes a line: a gap above it)
        legend.set_ncols(ncols)
        legend._init_legend_box(list(legend.legend_handles), texts, markerfirst=True)
        legend.set_title(title)
        legend._set_loc(legend._get_loc())  # the new box placed where the old one was


def _wrap_label(text: str, chars: int) -> str:
    """A legend label on lines of at most `chars` characters, broken at spaces (an id, at hyphens)."""
    flat = " ".join(text.split("\n")) if " " in text else text.replace("\n", "")
    if len(flat) <= chars:
        return flat
    if " " not in flat:
        return wrap_id(flat, chars)
    return "\n".join(textwrap.wrap(flat, width=chars, break_long_words=True, break_on_hyphens=False))


def _narrow_tick_labels(ax, most: float) -> None:
    """Seat names on a value axis (a dot plot's rows) wider than `most` pixels: wrapped again
    (`wrap_id`) to fit, each keeping its weight and size."""
    labels = [t for t in ax.get_yticklabels() if t.get_text()]
    if not labels:
        return
    widest = max(t.get_window_extent().width for t in labels)
    if widest <= most:
        return
    longest = max(len(line) for t in labels for line in t.get_text().split("\n"))
    chars = max(12, int(longest * most / widest))
    styles = [(t.get_fontweight(), t.get_fontsize()) for t in labels]
    texts = [wrap_id(t.get_text().replace("\n", ""), chars) for t in labels]
    ax.set_yticks([t.get_position()[1] for t in labels], labels=texts)
    for t, (weight, size) in zip(ax.get_yticklabels(), styles):
        t.set_fontweight(weight)
        t.set_fontsize(size)


def overflow(fig: Figure) -> float:
    """How far (inches) the figure's contents reach past its edges once drawn (0 when they fit)."""
    box = fig.get_tightbbox()
    w, h = fig.get_size_inches()
    return max(0.0, -box.x0, -box.y0, box.x1 - w, box.y1 - h)


def seat_styles(
    seats: Iterable[str], baseline: str | None = None, registry: dict[str, Style] | None = None
) -> dict[str, Style]:
    """A stable style per seat: the baseline first (blue, circle), then in sorted order.

    Seat i has colour i mod 7 and marker i mod 8, so no two of the first 56 seats share
    both; past seven seats the line style changes as well. With `registry` (the report's one
    style per seat, made over every seat of the report: issue 42), each seat keeps the style it
    has there, whichever seats a figure draws.
    """
    if registry is not None:
        mine = {str(s) for s in seats}
        return {s: registry[s] for s in sorted(mine) if s in registry} | {
            s: st for s, st in seat_styles(mine - set(registry), baseline).items()
        }
    ordered = sorted({str(s) for s in seats})
    if baseline in ordered:
        ordered.remove(baseline)
        ordered.insert(0, baseline)
    n = len(PALETTE)
    return {
        s: Style(PALETTE[i % n], MARKERS[i % len(MARKERS)], LINESTYLES[(i // n) % len(LINESTYLES)])
        for i, s in enumerate(ordered)
    }


def seat_colors(seats: Iterable[str], baseline: str | None = None) -> dict[str, str]:
    """A stable colour per seat (`seat_styles`' colours)."""
    return {s: st.color for s, st in seat_styles(seats, baseline).items()}


def record_styles(fig: Figure | None, styles: dict[str, Style | str]) -> Figure | None:
    """Note on `fig` the style each seat (or verdict) was drawn in: tests and captions read it."""
    if fig is not None:
        fig.benchreport_styles = {str(k): (v if isinstance(v, Style) else Style(v, "o")) for k, v in styles.items()}
    return fig


def record_drawn(fig: Figure | None, *kinds: str) -> None:
    """Note on `fig` which kinds of mark it drew ('ci', 'no_ci', 'passes', 'range'), for its caption."""
    if fig is not None:
        fig.benchreport_drawn = set(getattr(fig, "benchreport_drawn", set())) | {k for k in kinds if k}


def drawn(fig) -> set[str]:
    """The kinds of mark `record_drawn` noted on `fig` (empty for a figure that noted none)."""
    return set(getattr(fig, "benchreport_drawn", set()))


def date_axis(ax) -> None:
    """Dates on the x axis that stay readable at hundreds of dates: matplotlib's
    AutoDateLocator picks the ticks and ConciseDateFormatter writes each only as far as it
    changes (year once, then months, then days)."""
    locator = mdates.AutoDateLocator(minticks=3, maxticks=8)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))


def wrap_id(text: str, width: int = 34) -> str:
    """Wrap a long id at hyphens/dots for titles and legends (ids have no spaces); an id
    longer than `format.MAX_LABEL` is shortened first (with an ellipsis)."""
    text = fmt.short(str(text))
    if len(text) <= width:
        return text
    spaced = text.replace("-", "- ").replace("_", "_ ")
    lines = textwrap.wrap(spaced, width=width, break_long_words=True, break_on_hyphens=False)
    return "\n".join(line.replace("- ", "-").replace("_ ", "_").rstrip() for line in lines)


def log2_axis(ax, levels: Iterable[int]) -> None:
    """Concurrency on a log-2 axis, ticked at the measured levels."""
    levels = sorted({int(c) for c in levels})
    if not levels:
        return
    if len(levels) > 1:
        ax.set_xscale("log", base=2)
        lo, hi = levels[0], levels[-1]
        ax.set_xlim(lo / 1.35, hi * 1.35)
    else:
        ax.set_xlim(levels[0] - 1, levels[0] + 1)
    ax.set_xticks(levels)
    ax.set_xticklabels([fmt.concurrency(c) for c in levels])
    ax.minorticks_off()


def cell_title(row, wrap: int = 30) -> str:
    """A panel's title: the seat, then workload, concurrency, metric and statistic, each wrapped
    at `wrap` characters (a panel a third of the page wide clipped a longer line)."""
    conc = row.get("concurrency")
    c = f", c={fmt.concurrency(conc)}" if fmt.finite(conc) else ""
    stat = row.get("statistic")
    st = "" if fmt.missing(stat) or stat == "mean" else f" {stat}"
    workload = fmt.short(fmt.text(row.get("workload")))
    what = textwrap.fill(f"{workload}{c}: {metric_label(row['metric'], unit=False)}{st}", width=wrap)
    return f"{wrap_id(row['seat'], wrap)}\n{what}"
