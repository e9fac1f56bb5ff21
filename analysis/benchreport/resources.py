"""Where the package data the build reads is: the report notebook, the templates and the example runs.

Found through importlib.resources, so an installed wheel, an editable install and a clone
agree (the folders are `notebooks/` and `templates/` in the repository, mapped to
`benchreport.notebooks` and `benchreport.templates` in pyproject.toml).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["notebook_path", "templates_dir", "example_dir"]


def _package_dir(package: str) -> Path:
    return Path(str(resources.files(package)))


def notebook_path(name: str = "report.ipynb") -> Path:
    """A notebook shipped with the package (report.ipynb, explore.ipynb)."""
    return _package_dir("benchreport.notebooks") / name


def templates_dir() -> Path:
    """The folder of the nbconvert template (`benchreport/`) and the section templates (`sections/`)."""
    return _package_dir("benchreport.templates")


def example_dir() -> Path:
    """The example runs (`benchreport example DIR` copies them): in an installed wheel the package
    data ``benchreport/example/``, in a clone (or an editable install) the repository's
    ``data/example/``, the one copy both are made from (pyproject.toml maps it to the package)."""
    here = Path(__file__).resolve().parent
    for folder in (here / "example", here.parents[1] / "data" / "example"):
        if (folder / "README.md").is_file():
            return folder
    raise FileNotFoundError("the example runs are not installed with this copy of benchreport (reinstall it)")
