"""benchreport: honest, paper-style reports from LLM-serving benchmark runs.

Data flows one way: `load` (files -> validated runs) -> `tables` (tidy DataFrames)
-> `stats` (estimates, CIs, comparisons, exam tests) -> `flags` (what the numbers
will not carry) -> `report` (figures, HTML, PDF). `explore` is the analyst's side:
``benchreport.compare(a, "seat-x", "seat-y")`` puts two seats side by side. This module is
the package's face (the top layer: it re-exports from the analyst's side); the version lives
in `benchreport.version`, which every layer may read.
"""

from benchreport.version import __version__

__all__ = ["__version__", "compare"]


def __getattr__(name):
    # deferred: pandas and the statistics load only when asked for (the CLI starts light)
    if name == "compare":
        from benchreport.explore.pairs import compare

        return compare
    raise AttributeError(f"module 'benchreport' has no attribute {name!r}")
