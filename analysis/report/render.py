"""Rendering: view-model blocks to HTML fragments; an executed notebook to HTML; HTML to PDF.

Three layers, one direction:

- `table_html`, `figure_html`: a `sections.Table` or a PNG plus caption as an HTML
  fragment. Every data string passes through ``html.escape`` (table cells, built column
  by column) or ``markupsafe.escape`` (``Markup.format``); nothing from a run file is
  ever marked safe.
- `notebook_to_html`: nbconvert's HTMLExporter with our template
  (``templates/benchreport``: extends the ``lab`` template, hides code and prompts,
  drops require.js, MathJax and widget scripts, inlines one stylesheet). The result is
  one self-contained file: images are data URIs, no external CSS, JS or fonts.
- `html_to_pdf`: WeasyPrint, offline: its URL fetcher accepts only ``data:`` URIs.
"""
from __future__ import annotations

import base64
import copy
import html
import re
from pathlib import Path
from typing import Iterable

from markupsafe import Markup

from analysis import format as fmt
from analysis.report.sections.blocks import Table

__all__ = ["TEMPLATES_DIR", "TEMPLATE_NAME", "table_html", "figure_html", "notebook_to_html",
           "html_to_pdf", "offline_fetcher", "check_offline", "OfflineError"]

#: the repository's templates folder (templates/benchreport/ is the nbconvert template)
TEMPLATES_DIR = Path(__file__).resolve().parents[2] / "templates"
TEMPLATE_NAME = "benchreport"
#: a table with at most this many rows is kept on one page
SHORT_ROWS = 24


def _cls(*names: str) -> str:
    return " ".join(n for n in names if n)


def _esc(value) -> str:
    """A table cell's text, HTML-escaped ('' for None)."""
    return "" if value is None else html.escape(str(value), quote=True)


def table_html(table: Table, label: str | None) -> Markup:
    """A `Table` as ``<table>`` with a numbered caption above and an optional note below.

    Built column by column with ``html.escape`` on every cell (fleet-scale appendix tables
    have thousands of rows, where one ``Markup.format`` per cell costs seconds); only our
    own tag literals are unescaped.
    """
    df = table.data
    group = table.group
    if group is not None and df[group].is_unique:
        # one row per group: a plain first column reads better than a header per row
        glabel = table.group_label or group[:1].upper() + group[1:]
        df = df.rename(columns={group: glabel if glabel not in df.columns else f"{glabel} "})
        group = None
    cols = [c for c in df.columns if c != group]
    numeric, mono, nowrap = set(table.numeric), set(table.mono), set(table.nowrap)

    def cls_attr(c) -> str:
        names = _cls("num" if c in numeric else "", "mono" if c in mono else "", "nowrap" if c in nowrap else "")
        return f' class="{names}"' if names else ""

    head = "".join(
        "<th{}{}>{}</th>".format(cls_attr(c), f' style="width:{_esc(table.widths[c])}"' if c in table.widths else "",
                                 _esc(c))
        for c in cols)
    columns = []
    for c in cols:
        td = f"<td{cls_attr(c)}>"
        columns.append([td + _esc(v) + "</td>" for v in df[c].tolist()])
    rows = ["<tr>" + "".join(cells) + "</tr>" for cells in zip(*columns)]
    if group is not None:
        body, last = [], object()
        for g, row in zip(df[group].tolist(), rows):
            if g != last:
                body.append(f'<tr class="group"><th colspan="{len(cols)}">{_esc(g)}</th></tr>')
                last = g
            body.append(row)
        rows = body
    caption = Markup('<caption><span class="label">{}</span> {}</caption>').format(
        label + "." if label else "", table.caption) if label else Markup(
        '<caption>{}</caption>').format(table.caption)
    note = Markup('<p class="table-note">{}</p>').format(table.note) if table.note else Markup("")
    ident = Markup(' id="{}"').format(f"table-{table.key}") if table.key else Markup("")
    short = len(df) + (df[group].nunique() if group else 0) <= SHORT_ROWS
    # every cell was escaped above; the tags around them are our own literals
    return Markup('<div class="{}"><table class="{}"{}>{}<thead><tr>{}</tr></thead>'
                  '<tbody>{}</tbody></table>{}</div>').format(
        _cls("table-wrap", "short" if short else ""),
        _cls("report-table", "small" if table.small else "", "dense" if table.dense else "",
             "grouped" if group else ""),
        ident, caption, Markup(head), Markup("".join(rows)), note)


def figure_html(png: bytes, label: str, caption: str, *, width_in: float | None = None,
                key: str = "") -> Markup:
    """A PNG as a data-URI ``<img>`` inside ``<figure>`` with a numbered caption below."""
    data = base64.b64encode(png).decode("ascii")
    style = Markup(' style="width:{}in"').format(fmt.inches(width_in)) if width_in else Markup("")
    ident = Markup(' id="{}"').format(f"figure-{key}") if key else Markup("")
    return Markup('<figure class="report-figure"{}><img src="data:image/png;base64,{}" alt="{}"{}>'
                  '<figcaption><span class="label">{}.</span> {}</figcaption></figure>').format(
        ident, data, f"{label}: {caption}", style, label, caption)


def notebook_to_html(nb, *, title: str, template_dir: Path | None = None) -> str:
    """An executed notebook as one self-contained HTML page, code and prompts hidden."""
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    c = Config()
    c.HTMLExporter.extra_template_basedirs = [str(template_dir or TEMPLATES_DIR)]
    c.HTMLExporter.template_name = TEMPLATE_NAME
    c.HTMLExporter.exclude_input = True
    c.HTMLExporter.exclude_input_prompt = True
    c.HTMLExporter.exclude_output_prompt = True
    c.HTMLExporter.embed_images = True
    c.HTMLExporter.anchor_link_text = ""
    # cells for notebook readers only (the notebook's own explanation) stay out of the paper
    c.TagRemovePreprocessor.enabled = True
    c.TagRemovePreprocessor.remove_cell_tags = ("notebook-only",)
    exporter = HTMLExporter(config=c)
    # code cells that show nothing (the parameters, papermill's injected parameters with its
    # random cell id) are left out, so the same data give the same page, byte for byte
    nb = copy.deepcopy(nb)
    nb.cells = [cell for cell in nb.cells if cell.cell_type != "code" or cell.get("outputs")]
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": str(title)},
                                                         "report_title": str(title)})
    check_offline(body)
    return body


class OfflineError(RuntimeError):
    """The rendered HTML would load something from the network."""


_REMOTE = re.compile(r"""<(?:script|link|img|iframe|object|embed|source|video|audio)\b[^>]*?\b(?:src|href|data)\s*=\s*["']?\s*(?:https?:)?//""",
                     re.IGNORECASE)
_SCRIPT = re.compile(r"<script\b", re.IGNORECASE)
_CSS_URL = re.compile(r"""url\(\s*["']?\s*(?:https?:)?//|@import""", re.IGNORECASE)


def check_offline(html: str) -> None:
    """Raise OfflineError if the page has a script, a remote resource or a remote CSS import."""
    for rx, what in ((_SCRIPT, "a <script> element"), (_REMOTE, "a remote resource"),
                     (_CSS_URL, "a remote stylesheet reference")):
        m = rx.search(html)
        if m:
            raise OfflineError(f"the rendered HTML has {what} near: {html[m.start():m.start() + 80]!r}")


def offline_fetcher():
    """WeasyPrint's URL fetcher, restricted to ``data:`` URIs: no network, no local files."""
    from weasyprint.urls import URLFetcher

    return URLFetcher(allowed_protocols={"data"})


def html_to_pdf(html: str, path: str | Path, *, base_url: str | Path | None = None) -> Path:
    """Render the report HTML to PDF with WeasyPrint, offline (``data:`` URIs only)."""
    import logging

    from weasyprint import HTML

    logging.getLogger("weasyprint").setLevel(logging.ERROR)
    logging.getLogger("fontTools").setLevel(logging.ERROR)
    fetcher = offline_fetcher()
    path = Path(path)
    HTML(string=html, base_url=str(base_url) if base_url else None, url_fetcher=fetcher).write_pdf(
        path, pdf_identifier=b"benchreport-report")
    return path


def join_fragments(fragments: Iterable[Markup]) -> Markup:
    return Markup("\n").join(fragments)
