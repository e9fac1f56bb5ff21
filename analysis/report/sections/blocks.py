"""The report's building blocks: tables, figure blocks and paragraphs (a view-model, no I/O)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np
import pandas as pd
from markupsafe import Markup, escape

from analysis import format as fmt



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

    def __len__(self) -> int:
        return len(self.data)


@dataclass
class FigureBlock:
    """A matplotlib figure and its caption (plain text), numbered when shown."""

    figure: Any
    caption: str
    key: str = ""
    wide: bool = True


def para(template: str, *args, **kwargs) -> Markup:
    """A paragraph from our literal template; every argument is escaped."""
    bad = [x for x in (*args, *kwargs.values()) if isinstance(x, (int, float, np.number)) and not isinstance(x, bool)]
    if bad:
        raise TypeError(f"format numbers with analysis.format before they reach a paragraph: {bad!r}")
    return Markup("<p>" + template + "</p>").format(*args, **kwargs)


def ident(x) -> Markup:
    return Markup('<span class="id">{}</span>').format(fmt.text(x))


def prose(parts: Iterable) -> Markup:
    out = Markup("")
    for p in parts:
        out += p if isinstance(p, Markup) else escape(p)
    return out


def figure_block(fig, caption: str, key: str) -> FigureBlock | None:
    return None if fig is None else FigureBlock(fig, caption, key=key)
