"""The figures' one theme, sizes and colours, and `save_figure` (PNG, SVG, PDF with fixed bytes)."""
from __future__ import annotations

import contextlib
import os
import textwrap
from pathlib import Path
from typing import Iterable, Sequence

import matplotlib
from matplotlib.figure import Figure

from analysis import format as fmt
from analysis.columns import METRIC_WORDS, METRICS


#: raster resolution of every PNG (fixed, so files compare byte for byte across builds)
DPI = 200


#: text width of the PDF page (A4, 2 cm margins), in inches
WIDTH_IN = 6.5


#: figure formats save_figure understands
FORMATS = ("png", "svg", "pdf")


PALETTE = ["#1b4f72", "#c0392b", "#229954", "#b9770e", "#7d3c98", "#117a65",
           "#a04000", "#2e4053", "#d4ac0d", "#5d6d7e"]


#: one vocabulary for metrics across text, tables and figures
METRIC_LABELS = METRIC_WORDS


def metric_label(metric: str, *, unit: bool = True) -> str:
    """Human name of a metric, with its unit: 'aggregate throughput (tok/s)'."""
    name = METRIC_LABELS.get(metric, str(metric))
    if unit and metric in METRICS:
        return f"{name} ({METRICS[metric][0]})"
    return name


def _rc() -> dict:
    import seaborn as sns  # deferred: seaborn is heavy and only its styles are used, when drawing

    rc = {}
    rc.update(sns.axes_style("ticks"))
    rc.update(sns.plotting_context("paper"))
    rc.update({
        # deterministic vector output: fixed hash salt for SVG ids, text as paths
        "svg.hashsalt": "benchreport",
        "svg.fonttype": "path",
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
    })
    return rc


@contextlib.contextmanager
def theme():
    """The report's one theme (seaborn 'ticks' + 'paper', serif), as an rc context."""
    with matplotlib.rc_context(_rc()):
        yield


def save_figure(fig: Figure, folder: str | os.PathLike, stem: str,
                formats: Sequence[str] = ("png", "svg")) -> dict[str, Path]:
    """Write `fig` as FOLDER/STEM.png, .svg (and .pdf when asked); returns {format: path}.

    `stem` must be one of our own names (``figure-01``), never a data string. PNGs have a
    fixed dpi; SVG and PDF carry no date and a fixed hash salt, so the same figure gives
    the same bytes on every build.
    """
    if not stem or any(c in stem for c in "/\\\x00") or stem.startswith("."):
        raise ValueError(f"`stem` must be a plain file name, got {stem!r}")
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ValueError(f"`formats` must be among {', '.join(FORMATS)}; got {', '.join(map(str, unknown))}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    metadata = {"png": {"Software": None}, "svg": {"Date": None, "Creator": None},
                "pdf": {"CreationDate": None, "ModDate": None, "Creator": None, "Producer": None}}
    written = {}
    with theme():
        # constrained layout settles over a few draws; settle it first so every save of the
        # same figure, in any order, gives the same bytes
        if fig.get_layout_engine() is not None:
            for _ in range(3):
                fig.draw_without_rendering()
            fig.set_layout_engine("none")  # freeze the settled positions
        for kind in formats:
            path = folder / f"{stem}.{kind}"
            fig.savefig(path, format=kind, dpi=DPI, metadata=metadata[kind])
            written[kind] = path
    return written


def seat_colors(seats: Iterable[str], baseline: str | None = None) -> dict[str, str]:
    """A stable colour per seat: the baseline always first (dark blue), then sorted order."""
    ordered = sorted({str(s) for s in seats})
    if baseline in ordered:
        ordered.remove(baseline)
        ordered.insert(0, baseline)
    return {s: PALETTE[i % len(PALETTE)] for i, s in enumerate(ordered)}


def wrap_id(text: str, width: int = 34) -> str:
    """Wrap a long id at hyphens/dots for titles and legends (ids have no spaces)."""
    text = str(text)
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
    """A panel's title: the seat, then workload, concurrency, metric and statistic."""
    conc = row.get("concurrency")
    c = f", c={fmt.concurrency(conc)}" if fmt.finite(conc) else ""
    stat = row.get("statistic")
    st = "" if fmt.missing(stat) or stat == "mean" else f" {stat}"
    return f"{wrap_id(row['seat'], wrap)}\n{row['workload']}{c}: {metric_label(row['metric'], unit=False)}{st}"
