"""The version of benchreport (one place: the package, its reports, its caches and pyproject.toml agree)."""

__version__ = "0.1.0"
