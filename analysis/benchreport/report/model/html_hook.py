"""Where the report's blocks find the function that turns them into HTML.

The view-model (benchreport.report.model.sections) never imports its renderer
(benchreport.report.render.html): the renderer registers itself here when it is imported. This module
imports nothing, so `benchreport.report` registers a lazy stand-in on import (it imports the
renderer on first use) without loading the sections, matplotlib or Jinja2: `benchreport build`
analyses before it needs any of them.
"""

from __future__ import annotations

from typing import Callable

__all__ = ["use_html_renderer", "html_renderer"]

_renderer: Callable | None = None


def use_html_renderer(render_block: Callable) -> None:
    """Set the function that turns a block into HTML (benchreport.report.render.html sets its own)."""
    global _renderer
    _renderer = render_block


def html_renderer() -> Callable | None:
    """The function set last, or None."""
    return _renderer
