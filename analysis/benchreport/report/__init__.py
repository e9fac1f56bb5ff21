"""The paper-style report: figures, section content, rendering and the atomic build.

Layers (each usable on its own):

- `figures`: tidy tables -> matplotlib Figures in one theme; `save_figure` (PNG, SVG, PDF).
- `sections`: an `Analysis` -> the view-model (paragraphs, divisions, `Table`, `FigureBlock`),
  one module per section (Abstract, 1 Seats and setup ... 7 What these numbers will not
  carry, Appendix).
- `render`: view-model -> HTML fragments through the Jinja2 templates in templates/sections/
  (autoescaped); executed notebook -> self-contained HTML (templates/benchreport); HTML ->
  PDF (WeasyPrint, offline).
- `document.Report`: what notebooks/report.ipynb drives (numbering, figure files, display).
- `build.build(BuildRequest) -> BuildResult`: `benchreport build`: papermill, render, atomic replace of DIR
  (benchreport.cli turns its result and `BuildError.kind` into exit codes).
"""
from benchreport.report.document import RefusedFiles, Report

__all__ = ["Report", "RefusedFiles", "figures", "sections", "render", "build"]


def __getattr__(name):
    if name in ("figures", "sections", "render", "build", "document"):
        import importlib

        return importlib.import_module(f"benchreport.report.{name}")
    raise AttributeError(name)
