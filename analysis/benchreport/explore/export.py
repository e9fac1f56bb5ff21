"""An executed explore notebook as one HTML page to read: results first, no code, offline.

`export_html` (nbconvert's HTMLExporter with templates/explore, the code and prompts left
out): the page opens on the title and the loaded runs, then the tables and figures. Its tables
keep their search box and sorting (DataTables is embedded); the widgets cannot run in a static
page, so each section says which selection it shows and that a table's search box filters its
rows. plotly.js (4.8 MB) and DataTables (itables' bundle) are embedded gzip-compressed (plotly.js
in about 2 MB) and unpacked by the browser (DecompressionStream), the figures drawn once plotly.js
is; nothing is fetched from a network.
"""

from __future__ import annotations

import base64
import gzip
import re
from pathlib import Path

__all__ = ["export_html", "EXPLORE_TEMPLATE", "NOTEBOOK_ONLY"]

#: the nbconvert template of an exported explore notebook (no require.js, MathJax, Mermaid or
#: widget scripts from a CDN: everything it runs is embedded in the notebook)
EXPLORE_TEMPLATE = "explore"

#: the cell tag of what only a notebook user needs (how to run it): left out of the page
NOTEBOOK_ONLY = "notebook-only"

_PLOTLY_MIME = "application/vnd.plotly.v1+json"
_PLOTLY_JS = re.compile(r'<script type="text/javascript">(/\*\*\s*\* plotly\.js v.*?)</script>', re.S)
_SCRIPT = re.compile(r"<script([^>]*)>(.*?)</script>", re.S)

#: unpacks the embedded plotly.js and runs it; `window.benchreportPlotly` resolves once it has
_LOADER = """<script>
window.benchreportPlotly = (async () => {
  const bytes = Uint8Array.from(atob("%s"), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  const script = document.createElement("script");
  script.text = await new Response(stream).text();
  document.head.appendChild(script);
  return window.Plotly;
})();
</script>"""


def _packed_plotly(match: re.Match) -> str:
    packed = base64.b64encode(gzip.compress(match.group(1).encode("utf-8"), 9, mtime=0)).decode("ascii")
    return _LOADER % packed


_ITABLES_MODULE = re.compile(r'injectModule\("([A-Za-z0-9+/=]{10000,})"\)')
_ITABLES_ATOB = "const jsText = atob(base64JS);"
_ITABLES_GUNZIP = (
    "const jsText = await new Response(new Blob([Uint8Array.from(atob(base64JS), (c) => c.charCodeAt(0))])"
    '.stream().pipeThrough(new DecompressionStream("gzip"))).text();'
)


def _packed_itables(page: str) -> str:
    """itables' offline DataTables bundle (base64 JavaScript, loaded as a module) gzip-compressed
    first; unchanged where the page is not as itables 2 writes it."""
    if _ITABLES_ATOB not in page or not _ITABLES_MODULE.search(page):
        return page

    def pack(m: re.Match) -> str:
        raw = base64.b64decode(m.group(1))
        return 'injectModule("' + base64.b64encode(gzip.compress(raw, 9, mtime=0)).decode("ascii") + '")'

    return _ITABLES_MODULE.sub(pack, page.replace(_ITABLES_ATOB, _ITABLES_GUNZIP))


def _waiting_for_plotly(page: str) -> str:
    """A figure's inline script run once the embedded plotly.js is unpacked."""
    return _SCRIPT.sub(
        lambda m: f"<script{m.group(1)}>window.benchreportPlotly.then(function () {{{m.group(2)}}});</script>", page
    )


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def for_reading(nb):
    """The notebook as the page shows it: no parameters or notebook-only cells, plotly.js packed,
    each figure drawn once it is unpacked, plotly's own JSON left out (the page draws the HTML)."""
    keep = []
    for cell in nb.cells:
        tags = set(cell.get("metadata", {}).get("tags", []))
        if tags & {"parameters", "injected-parameters", NOTEBOOK_ONLY}:
            continue
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            html = data.get("text/html")
            if html is None:
                continue
            if _PLOTLY_MIME in data:
                data.pop(_PLOTLY_MIME)
                data["text/html"] = _waiting_for_plotly(_text(html))
            elif "plotly.js v" in _text(html)[:200000]:
                data["text/html"] = _PLOTLY_JS.sub(_packed_plotly, _text(html))
            elif "injectModule(" in _text(html):
                data["text/html"] = _packed_itables(_text(html))
        keep.append(cell)
    nb.cells = keep
    return nb


def export_html(nb_path, out_path) -> str:
    """An executed explore notebook (papermill, or saved from JupyterLab) as one HTML page that
    works offline: results first, no code, searchable tables and live figures; the page's path."""
    import nbformat
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    from benchreport.report.render.html import TEMPLATES_DIR

    c = Config()
    c.HTMLExporter.extra_template_basedirs = [str(TEMPLATES_DIR)]
    c.HTMLExporter.template_name = EXPLORE_TEMPLATE
    # nbconvert's --no-input: no code, no prompts
    c.TemplateExporter.exclude_input = True
    c.TemplateExporter.exclude_input_prompt = True
    c.TemplateExporter.exclude_output_prompt = True
    nb = for_reading(nbformat.read(str(nb_path), as_version=4))
    body, _ = HTMLExporter(config=c).from_notebook_node(nb)
    Path(out_path).write_text(body, encoding="utf-8")
    return str(out_path)
