"""The report's view-model: paragraphs, divisions, tables and figure blocks (plain data, no HTML).

Section functions build these; `benchreport.report.render.html` turns them into HTML through the
Jinja2 templates in ``templates/sections/`` (autoescaped: every string here is text, and a
seat id, model name or message from a run file can never become markup). Paragraphs are
written from our literal templates with `para`: ``para("Compared against {} {}.", word,
ident(seat))``; an `Ident` is an identifier set in monospace.
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field
from typing import Any, Iterable, Union

import numpy as np
import pandas as pd

from benchreport import format as fmt
from benchreport.report.model.html_hook import html_renderer, use_html_renderer

__all__ = [
    "Ident",
    "Paragraph",
    "Items",
    "Division",
    "TitleBlock",
    "Prose",
    "Table",
    "FigureBlock",
    "ident",
    "idents",
    "para",
    "items",
    "division",
    "prose",
    "figure_block",
    "use_html_renderer",
]


class _HTML:
    """A block renders as HTML where HTML is asked for (``str``, Markup, Jupyter's display), once
    a renderer is registered (importing benchreport.report does it)."""

    def __html__(self) -> str:
        render_block = html_renderer()
        if render_block is None:
            raise RuntimeError("no HTML renderer for report blocks: import benchreport.report first")
        return str(render_block(self))

    __str__ = __html__
    _repr_html_ = __html__


def _plain(block, *names) -> None:
    """Make the named text fields plain `str`: a markupsafe.Markup handed in is still text."""
    for name in names:
        v = getattr(block, name)
        if isinstance(v, str):
            object.__setattr__(block, name, str(v))


@dataclass(frozen=True)
class Ident:
    """An identifier (seat id, path) set in monospace inside a paragraph."""

    text: str

    def __post_init__(self):
        _plain(self, "text")


@dataclass(frozen=True)
class Paragraph(_HTML):
    """One paragraph: text and identifiers in order; `css` its class, `lead` a bold lead-in."""

    parts: tuple[Union[str, Ident], ...]
    css: str | None = None
    lead: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "parts", tuple(str(p) if isinstance(p, str) else p for p in self.parts))
        _plain(self, "css", "lead")


@dataclass(frozen=True)
class Items(_HTML):
    """A bulleted list, one paragraph per item (a topic's findings, one each)."""

    entries: tuple[Paragraph, ...]
    css: str | None = None

    def __post_init__(self):
        _plain(self, "css")


@dataclass(frozen=True)
class Division(_HTML):
    """A division of blocks with a class (``abstract``, ``finding``) and an optional heading."""

    css: str
    blocks: tuple["Block", ...]
    heading: str | None = None

    def __post_init__(self):
        _plain(self, "css", "heading")


@dataclass(frozen=True)
class TitleBlock(_HTML):
    """The report's title and the lines under it."""

    title: str
    lines: tuple[Paragraph, ...]

    def __post_init__(self):
        _plain(self, "title")


Block = Union[Paragraph, Items, Division, TitleBlock]


@dataclass(frozen=True)
class Prose(_HTML):
    """Blocks shown as one element of the report, in order (what a section's text function returns)."""

    blocks: tuple[Block, ...]


@dataclass
class Table:
    """A captioned table of display strings.

    kind: "table" (numbered Table N), "appendix" (Table A N) or "plain" (no number).
    group: a column whose value becomes a full-width row above its rows (saves width
    when seat ids are long). numeric: right-aligned columns. mono: monospace columns.
    """

    data: pd.DataFrame
    caption: str
    kind: str = "table"
    note: str | None = None
    group: str | None = None
    numeric: tuple[str, ...] = ()
    mono: tuple[str, ...] = ()
    small: bool = False
    key: str = ""
    widths: dict[str, str] = field(default_factory=dict)
    nowrap: tuple[str, ...] = ()
    group_label: str | None = None
    #: a long table of figures (one row per seat and cell): smaller type, tighter cells
    dense: bool = False
    #: set on landscape pages in the PDF (None: when dense, as a wide table of cells is)
    landscape: bool | None = None
    #: a reference table too long to print (every seat and cell at fleet scale), named by the
    #: file beside the report that has it in full ("tables/cells.csv"): the HTML has it
    #: collapsed, the PDF a line saying where it is
    screen_only: str = ""
    #: columns shown whole, never shortened (a flag's message: the disclosure is the sentence);
    #: long unbroken runs still get break opportunities
    whole: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.data)


@dataclass
class FigureBlock:
    """A matplotlib figure and its caption (plain text), numbered when shown."""

    figure: Any
    caption: str
    key: str = ""
    wide: bool = True


def ident(x) -> Ident:
    """An identifier for a paragraph: set in monospace."""
    return Ident(_text(x))


def idents(xs: Iterable) -> list:
    """Identifiers separated by commas ('a, b, c'), for one placeholder of a paragraph."""
    out: list = []
    for i, x in enumerate(xs):
        out += [", ", ident(x)] if i else [ident(x)]
    return out


def _text(x) -> str:
    """Text of a data value: always a plain `str` (a markupsafe.Markup would be taken as markup)."""
    return str(fmt.text(x))


def para(template: str, *args, css: str | None = None, lead: str | None = None) -> Paragraph:
    """A paragraph from our literal `template`, each ``{}`` filled by one argument.

    An argument is text (a `str`, already formatted: numbers go through benchreport.format
    first), an `Ident`, or a list of them (`idents`).
    """
    parts: list = []
    fields = iter(args)
    for literal, name, spec, conv in string.Formatter().parse(template):
        if literal:
            parts.append(literal)
        if name is None:
            continue
        if name != "" or spec or conv:
            raise ValueError(f"paragraph templates take plain {{}} placeholders: {template!r}")
        try:
            parts.extend(_parts(next(fields)))
        except StopIteration:
            raise ValueError(f"fewer arguments than placeholders in {template!r}") from None
    if next(fields, None) is not None:
        raise ValueError(f"more arguments than placeholders in {template!r}")
    return Paragraph(tuple(_merged(parts)), css=css, lead=lead)


def _parts(arg) -> list:
    if isinstance(arg, Ident):
        return [arg]
    if isinstance(arg, (list, tuple)):
        return [p for x in arg for p in _parts(x)]
    if isinstance(arg, (int, float, np.number)) and not isinstance(arg, bool):
        raise TypeError(f"format numbers with benchreport.format before they reach a paragraph: {arg!r}")
    if not isinstance(arg, str):
        raise TypeError(f"a paragraph takes text or identifiers, not {type(arg).__name__}")
    return [str(arg)]


def _merged(parts: list) -> list:
    """Adjacent texts as one."""
    out: list = []
    for p in parts:
        if out and isinstance(p, str) and isinstance(out[-1], str):
            out[-1] += p
        elif p != "":
            out.append(p)
    return out


def items(entries: Iterable, *, css: str | None = None) -> Items:
    """A bulleted list: each entry a `Paragraph`, or text (our own words or words the flags
    wrote, taken as one text part)."""
    return Items(tuple(e if isinstance(e, Paragraph) else para("{}", str(e)) for e in entries), css=css)


def division(css: str, blocks: Iterable, *, heading: str | None = None) -> Division:
    """A division of `blocks` (paragraphs, divisions, or the blocks of a `Prose`)."""
    return Division(css, tuple(_blocks(blocks)), heading)


def prose(*blocks) -> Prose:
    """Blocks (or lists of them, or other `Prose`) as one element of the report."""
    return Prose(tuple(_blocks(blocks)))


def _blocks(items) -> list:
    out: list = []
    for b in items:
        if isinstance(b, Prose):
            out += b.blocks
        elif isinstance(b, (Paragraph, Items, Division, TitleBlock)):
            out.append(b)
        elif isinstance(b, (list, tuple)):
            out += _blocks(b)
        else:
            raise TypeError(f"prose is made of paragraphs and divisions, not {type(b).__name__}")
    return out


def figure_block(fig, caption: str, key: str) -> FigureBlock | None:
    """A figure and its caption, or None when there was nothing to draw."""
    return None if fig is None else FigureBlock(fig, caption, key=key)
