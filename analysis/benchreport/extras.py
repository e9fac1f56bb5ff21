"""The optional parts of benchreport and the packages each needs (pyproject.toml's extras).

A cron machine that builds HTML reports needs neither a notebook server nor a PDF engine, so
they are extras: ``pip install 'benchreport[pdf]'`` (WeasyPrint, for report.pdf),
``'benchreport[explore]'`` (the analyst's notebook: itables, ipywidgets, plotly),
``'benchreport[lab]'`` (JupyterLab with those) and ``'benchreport[all]'``. What a part
needs is looked up without importing it (`importlib.util.find_spec`), so asking is cheap.
"""

from __future__ import annotations

from importlib.util import find_spec

__all__ = ["EXTRAS", "MissingExtra", "missing", "require"]

#: extra -> the import names it brings (pyproject.toml [project.optional-dependencies])
EXTRAS = {
    "pdf": ("weasyprint",),
    "explore": ("itables", "ipywidgets", "plotly"),
    "lab": ("jupyterlab", "itables", "ipywidgets", "plotly"),
}


class MissingExtra(ImportError):
    """An optional part was asked for without its packages; the message says what to install."""


def missing(extra: str) -> list[str]:
    """The import names of `extra` that are not installed (none: the part can run)."""
    return [name for name in EXTRAS[extra] if find_spec(name) is None]


def require(extra: str, what: str) -> None:
    """Raise `MissingExtra` naming the install command when `extra`'s packages are missing."""
    absent = missing(extra)
    if absent:
        raise MissingExtra(
            f"{what} needs {', '.join(absent)}, which is not installed: pip install 'benchreport[{extra}]'"
        )
