"""Rendering: view-model blocks to HTML fragments; an executed notebook to HTML; HTML to PDF.

Three layers, one direction:

- `prose_html`, `table_html`, `figure_html`: the blocks of `benchreport.report.model.sections`
  (paragraphs and divisions, a `Table`, a PNG and its caption) as HTML fragments, through
  the Jinja2 templates in ``templates/sections/``. The templates are fed plain data
  (`table_view`, `figure_view`: classes, labels and display strings decided here) and
  never compute; autoescape is on, so every string is text: nothing from a run file is
  ever marked safe.
- `notebook_to_html`: nbconvert's HTMLExporter with our template, through its public API
  only (``HTMLExporter(template_name=..., extra_template_basedirs=...)
  .from_notebook_node``); ``templates/benchreport`` extends the ``lab`` template, hides code
  and prompts, drops require.js, MathJax and widget scripts and inlines one stylesheet. The
  result is one self-contained file: images are data URIs, no external CSS, JS or fonts.
  HTMLExporter's last pass re-serialises the page with BeautifulSoup (0.3 s of CPU for the
  example report: docs/performance.md); whatever the page needs changed is changed in the
  template, never in nbconvert's output.
- `check_offline`, `check_self_contained`: what the page may load (benchreport.report.render.pdf prints it).
"""

from __future__ import annotations

import base64
import copy
import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import jinja2
from markupsafe import Markup

from benchreport import format as fmt
from benchreport.report.model.sections.blocks import (
    Division,
    Ident,
    Items,
    Paragraph,
    Prose,
    Table,
    TitleBlock,
    use_html_renderer,
)
from benchreport.report.render.offline import OfflineError, check_offline, check_self_contained  # noqa: F401 - the page's checks, here too
from benchreport.resources import templates_dir

__all__ = [
    "TEMPLATES_DIR",
    "TEMPLATE_NAME",
    "prose_html",
    "table_view",
    "table_html",
    "figure_view",
    "figure_html",
    "notebook_to_html",
    "check_offline",
    "check_self_contained",
    "OfflineError",
]

#: the repository's templates folder (templates/benchreport/ is the nbconvert template,
#: templates/sections/ the report's blocks)
TEMPLATES_DIR = templates_dir()
TEMPLATE_NAME = "benchreport"
#: a table with at most this many rows is kept on one page
SHORT_ROWS = 24
#: characters of a text cell counted as one line when a table's height is estimated
LINE_CHARS = 90


def _height(df) -> int:
    """A table's height in lines, about: a row whose longest cell runs to several lines counts as
    that many (the thresholds table's reasons), so a tall table may break across pages."""
    if not len(df):
        return 0
    longest = df.astype(str).apply(lambda col: col.str.len()).max(axis=1).to_numpy()
    return int(sum(max(1, -(-int(n) // LINE_CHARS)) for n in longest))


@dataclass(frozen=True)
class GroupRow:
    """A table's full-width row naming the group of the rows below it."""

    text: str | tuple[str, ...]
    title: str = ""


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES_DIR / "sections")),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters.update(
        pieces=display_text,
        hover=lambda full, limit=None: fmt.title_of(
            full, fmt.short(fmt.short_tokens(full), limit) if limit else fmt.short_tokens(full)
        ),
    )
    env.tests.update(
        ident=lambda x: isinstance(x, Ident),
        paragraph=lambda x: isinstance(x, Paragraph),
        item_list=lambda x: isinstance(x, Items),
        division=lambda x: isinstance(x, Division),
        title_block=lambda x: isinstance(x, TitleBlock),
        group_row=lambda x: isinstance(x, GroupRow),
    )
    return env


def _render(name: str, **data) -> Markup:
    return Markup(_ENV.get_template(name).render(**data))


def prose_html(block) -> Markup:
    """A section's text (a `Prose`, or one paragraph, division or title block) as HTML."""
    blocks = block.blocks if isinstance(block, Prose) else (block,)
    # an interval in a sentence never wraps inside either ('95% CI [47.8,' / '134.3]')
    return Markup(whole_intervals(str(_render("prose.html.j2", blocks=blocks))))


use_html_renderer(prose_html)  # str(block) and Jupyter's display of a block give this HTML


def _classes(*names: str) -> str:
    return " ".join(n for n in names if n)


def _cell(value) -> str:
    """A caption's or heading's text ('' for None): a plain `str`, so the template escapes it."""
    return "" if value is None else str(value)


def display_cell(value, limit: int = fmt.MAX_TEXT) -> tuple[str | tuple[str, ...], str]:
    """A table cell as the template shows it, and its hover title ('' when shown in full).

    The text is shortened for display (`format.shortened`: at most `limit` characters, no
    unbroken run longer than `format.MAX_TOKEN`); a text with a long unbroken run comes as
    a tuple of pieces the template joins with ``<wbr>`` (a break opportunity). Plain `str`
    throughout, so the template escapes every piece.
    """
    full = "" if value is None else str(value)
    if len(full) <= fmt.BREAK_RUN:
        return full, ""
    shown = fmt.shortened(full, limit)
    if _LONG_RUN.search(shown):
        return tuple(fmt.break_points(shown)), fmt.title_of(full, shown)
    return shown, fmt.title_of(full, shown)


_LONG_RUN = re.compile(r"\S{%d,}" % (fmt.BREAK_RUN + 1))


def display_whole(value) -> tuple[tuple[str, ...], str]:
    """A table cell shown whole (`Table.whole`): never shortened, its long unbroken runs given
    break opportunities (``<wbr>``); no hover title, since nothing is left out."""
    return tuple(fmt.break_points("" if value is None else str(value))), ""


def display_text(value, limit: int | None = None) -> tuple[str, ...]:
    """Text inside a paragraph as pieces joined by ``<wbr>`` (`format.break_points`): unbroken
    runs longer than `format.MAX_TOKEN` shortened, the whole shortened to `limit` if given."""
    shown = fmt.short_tokens(value)
    if limit is not None:
        shown = fmt.short(shown, limit)
    return tuple(fmt.break_points(shown))


def _is_ci(column) -> bool:
    """A confidence-interval column ('95% CI', 'CI'): its intervals are never wrapped."""
    return str(column) == "CI" or str(column).endswith(" CI")


_INTERVAL = re.compile(r"(\[[^\[\]\s]*,) ([^\[\]\s]*\])")


def whole_intervals(text: str) -> str:
    """'[95.7, 102.1]' with a no-break space after its comma: an interval never wraps inside,
    while the words around it ('within one run', a reason for no CI) still may."""
    return _INTERVAL.sub("\\1\u00a0\\2", text) if "[" in text else text


def table_view(table: Table, label: str | None) -> dict:
    """What table.html.j2 shows of `table`: columns with their classes, rows of text, group rows.

    A group with one row each becomes a plain first column (a header per row reads worse).
    A CI column is never wrapped; a dense table goes on landscape pages in the PDF.
    Built column by column (fleet-scale appendix tables have thousands of rows).
    """
    df, group = table.data, table.group
    if group is not None and df[group].is_unique:
        glabel = table.group_label or group[:1].upper() + group[1:]
        df = df.rename(columns={group: glabel if glabel not in df.columns else f"{glabel} "})
        group = None
    cols = [c for c in df.columns if c != group]
    numeric, mono, nowrap = set(table.numeric), set(table.mono), set(table.nowrap)
    classes = [
        _classes(
            "num" if c in numeric else "",
            "mono" if c in mono else "",
            "nowrap" if c in nowrap else "",
            "ci" if _is_ci(c) else "",
        )
        for c in cols
    ]
    # each row a tuple of (class, text or pieces, title) per column
    whole = set(table.whole)
    rows = list(
        zip(
            *(
                [
                    (
                        k,
                        *(
                            display_whole(v)
                            if c in whole
                            else display_cell(whole_intervals(_cell(v)) if _is_ci(c) else v)
                        ),
                    )
                    for v in df[c].tolist()
                ]
                for c, k in zip(cols, classes)
            )
        )
    )
    if group is not None:
        body, last = [], object()
        for g, row in zip(df[group].tolist(), rows):
            if g != last:
                body.append(GroupRow(*display_cell(g)))
                last = g
            body.append(row)
        rows = body
    short = _height(df) + (df[group].nunique() if group else 0) <= SHORT_ROWS
    landscape = table.dense if table.landscape is None else table.landscape
    return {
        "wrap_class": _classes("table-wrap", "short" if short else "", "landscape" if landscape else ""),
        "table_class": _classes(
            "report-table", "small" if table.small else "", "dense" if table.dense else "", "grouped" if group else ""
        ),
        "id": f"table-{table.key}" if table.key else "",
        "label": f"{label}." if label else "",
        "caption": _cell(table.caption),
        "columns": [
            {"name": _cell(c), "cls": k, "width": _cell(table.widths.get(c)) if c in table.widths else ""}
            for c, k in zip(cols, classes)
        ],
        "n_columns": len(cols),
        "body": rows,
        "note": _cell(table.note) if table.note else "",
        "screen_only": _cell(table.screen_only),
        "n_rows": fmt.counted(len(df), "row"),
    }


def table_html(table: Table, label: str | None) -> Markup:
    """A `Table` as ``<table>`` with a numbered caption above and an optional note below."""
    return _render("table.html.j2", t=table_view(table, label))


def figure_view(png: bytes, label: str, caption: str, *, width_in: float | None = None, key: str = "") -> dict:
    """What figure.html.j2 shows: the PNG as base64, its label, caption, alt text and width."""
    return {
        "png_base64": base64.b64encode(png).decode("ascii"),
        "label": f"{label}.",
        "caption": _cell(caption),
        "alt": f"{label}: {caption}",
        "width": f"{fmt.inches(width_in)}in" if width_in else "",
        "id": f"figure-{key}" if key else "",
    }


def figure_html(png: bytes, label: str, caption: str, *, width_in: float | None = None, key: str = "") -> Markup:
    """A PNG as a data-URI ``<img>`` inside ``<figure>`` with a numbered caption below."""
    return _render("figure.html.j2", f=figure_view(png, label, caption, width_in=width_in, key=key))


def _is_heading(cell) -> bool:
    return cell.cell_type == "markdown" and str(cell.source).lstrip().startswith("## ")


_NUMBERED = re.compile(r"^(\s*## )\d+ ")


def _without_empty_sections(cells: list) -> list:
    """The cells without a section heading whose section showed nothing (issue 42: an empty
    section is not printed): a heading followed by another heading or by nothing. The numbered
    sections left are numbered again in order; sections 1 to 7 always show something (the text
    refers to them by number), so only the later ones, referred to by name, can move up."""
    kept = [
        cell
        for i, cell in enumerate(cells)
        if not (_is_heading(cell) and (i + 1 == len(cells) or _is_heading(cells[i + 1])))
    ]
    number = 0
    for cell in kept:
        if _is_heading(cell) and _NUMBERED.match(str(cell.source)):
            number += 1
            cell.source = _NUMBERED.sub(lambda m, n=number: f"{m.group(1)}{n} ", str(cell.source), count=1)
    return kept


def notebook_to_html(nb, *, title: str, template_dir: Path | None = None) -> str:
    """An executed notebook as one self-contained HTML page, code and prompts hidden."""
    exporter = _exporter(str(template_dir or TEMPLATES_DIR))
    # code cells that show nothing (the parameters, papermill's injected parameters with its
    # random cell id) are left out, so the same data give the same page, byte for byte
    nb = copy.deepcopy(nb)
    nb.cells = _without_empty_sections([cell for cell in nb.cells if cell.cell_type != "code" or cell.get("outputs")])
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": str(title)}, "report_title": str(title)})
    check_offline(body)
    return body


@functools.lru_cache(maxsize=4)
def _exporter(template_dir: str):
    """The page's exporter: nbconvert's HTMLExporter with the benchreport template (its public
    traits only), made once per process (making one compiles its templates; `notebook_to_html`
    passes the title in the resources, so one exporter serves every page). Cells tagged
    ``notebook-only`` (the notebook's own explanation, for its readers) stay out of the paper."""
    # deferred: nbconvert (and traitlets with it) is heavy and needed for rendering only
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    c = Config()
    c.TagRemovePreprocessor.enabled = True
    c.TagRemovePreprocessor.remove_cell_tags = ("notebook-only",)
    return HTMLExporter(
        config=c,
        template_name=TEMPLATE_NAME,
        extra_template_basedirs=[template_dir],
        exclude_input=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
        embed_images=True,
        anchor_link_text="",
    )


def join_fragments(fragments: Iterable[Markup]) -> Markup:
    """Fragments one per line, as the report shows them."""
    return Markup("\n").join(fragments)


_ENV = _environment()
