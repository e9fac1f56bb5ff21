"""The library's layout, checked over the whole tree (analysis/benchreport/, every module): no
import circles, no import running upwards through the layers, no private name used across a
module line, every function at most 60 lines, and every module placed in a layer. (A cap on a
module's lines was dropped in issue 41: it was met by moving code between modules, not by making
it simpler; the function-size rule stays.) Measured by tests/structure.py (docs/architecture.md, "Structure in numbers");
the last test shows the measure finds each kind of fault in a package made to have them."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

import structure as S

STRUCTURE = S.measure()


def test_there_are_no_import_circles():
    assert STRUCTURE.circles() == []


def test_no_import_runs_upwards_through_the_layers():
    assert STRUCTURE.upward() == []


def test_no_private_name_crosses_a_module_line():
    assert STRUCTURE.private_uses == []


def test_no_private_module_is_imported_from_outside_its_package():
    """`load.harness._common` is `load.harness`'s own; a module shared across packages has a public name."""
    assert STRUCTURE.private_module_uses() == []


def test_function_size_is_checked_by_ruff_on_the_whole_tree():
    """The function-size habit is pylint's too-many-statements (PLR0915) in ruff, run by `make lint`
    on the whole tree: statements, not lines, so the formatter cannot move it (issue 41)."""
    tomllib = pytest.importorskip("tomllib")

    ruff = tomllib.loads((S.PACKAGE.parents[1] / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]
    assert "PLR0915" in ruff["lint"]["select"] and ruff["lint"]["pylint"]["max-statements"] <= 50


def test_every_module_has_a_layer():
    """A new module is placed in docs/architecture.md's layers (structure.LAYERS) before it lands."""
    unplaced = sorted({m.split(".")[1] for m in STRUCTURE.modules if "." in m} - set(S.LAYERS))
    assert unplaced == []


def test_report_sections_build_no_html():
    """HTML lives in templates/sections/: the section modules hold data and words only."""
    import re

    found = []
    for path in sorted((S.PACKAGE / "report" / "model" / "sections").glob("*.py")):
        src = path.read_text(encoding="utf-8")
        code = "\n".join(line for line in src.splitlines() if not line.lstrip().startswith("#"))
        if re.search(r"^\s*(from|import) markupsafe", src, re.M) or re.search(
            r"<(p|div|span|table|tr|td|th|h\d|strong|header|figure|img)\b", code
        ):
            found.append(path.name)
    assert found == []


def _package(root: Path, files: dict[str, str]) -> Path:
    package = root / "benchreport"
    for name, text in files.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return package


def test_the_measure_finds_each_kind_of_fault(tmp_path):
    """A package with one of each fault: the measure counts each once (an import inside a
    function counts, a relative import is resolved, `module._name` counts like `import _name`)."""
    package = _package(
        tmp_path,
        {
            "__init__.py": "",
            "columns.py": "def helper():\n    from benchreport.stats import cells\n    return cells\n",
            "stats/__init__.py": "",
            "stats/cells.py": "from ..columns import helper\nfrom . import exact\n\ndef _hidden():\n    return 1\n",
            "stats/exact.py": "from benchreport.stats import cells\n\ndef f():\n    return cells._hidden()\n",
            "flags/__init__.py": "",
            "stats/_shared.py": "",
            "flags/rules.py": "from benchreport.stats.cells import _hidden\nfrom benchreport.stats import _shared\n",
        },
    )
    found = S.measure(package)
    # columns -> cells (inside a function) -> columns, and cells -> exact -> cells: one circle
    assert found.circles() == [["benchreport.columns", "benchreport.stats.cells", "benchreport.stats.exact"]]
    assert found.upward() == [("benchreport.columns", "benchreport.stats.cells")]
    assert sorted(found.private_uses) == [
        ("benchreport.flags.rules", "benchreport.stats.cells", "_hidden"),
        ("benchreport.stats.exact", "benchreport.stats.cells", "_hidden"),
    ]
    assert found.private_module_uses() == [("benchreport.flags.rules", "benchreport.stats._shared")]
    assert ast.parse((package / "flags" / "rules.py").read_text())  # the package is valid Python
