"""The paper-style report: figures, section content, rendering and the atomic build.

Layers (each usable on its own):

- `figures`: tidy tables -> matplotlib Figures in one theme; `save_figure` (PNG, SVG, PDF).
- `sections`: an `Analysis` -> the view-model (paragraphs, divisions, `Table`, `FigureBlock`),
  one module per section (Abstract, 1 Seats and setup ... 7 What these numbers will not
  carry, Appendix).
- `render`: view-model -> HTML fragments through the Jinja2 templates in templates/sections/
  (autoescaped); executed notebook -> self-contained HTML (templates/benchreport).
- `pdf`: that HTML -> PDF, offline (headless Chromium where installed, else WeasyPrint).
- `document.Report`: what notebooks/report.ipynb drives (numbering, figure files, display).
- `build.build(BuildRequest) -> BuildResult`: `benchreport build`, in one process: analyse,
  papermill (in this process: `inprocess`), render, print, atomic replace of DIR
  (benchreport.cli turns its result and `BuildError.kind` into exit codes).
"""

from benchreport.report.model import html_hook

__all__ = ["Report", "RefusedFiles", "figures", "sections", "model", "render", "build"]


def _render_block(block):
    """Blocks as HTML through benchreport.report.render.html, imported on first use (it then registers
    its own function: html_hook)."""
    from benchreport.report.render.html import prose_html

    return prose_html(block)


if html_hook.html_renderer() is None:
    html_hook.use_html_renderer(_render_block)


def __getattr__(name):
    """Everything on first use: `benchreport build` checks its request and analyses before it
    needs matplotlib, Jinja2 or papermill (imported once the analysis is done: benchreport.report.build)."""
    import importlib

    if name in ("Report", "RefusedFiles"):
        return getattr(importlib.import_module("benchreport.report.document"), name)
    if name in ("figures", "sections"):
        return importlib.import_module(f"benchreport.report.model.{name}")
    if name in ("build", "document", "inprocess", "catalog", "model", "render"):
        return importlib.import_module(f"benchreport.report.{name}")
    raise AttributeError(name)
