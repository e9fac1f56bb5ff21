"""The flags layer stays small enough to read (issue 13): modules under 600 lines, functions under
60, no import inside a function, no default thresholds inside, every rule taking `thresholds`
keyword-only and required."""
from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from benchreport.flags import rules as R

ROOT = Path(__file__).resolve().parents[1]
MODULES = sorted((ROOT / "analysis" / "benchreport" / "flags").rglob("*.py")) + [ROOT / "analysis" / "benchreport" / "stats" / "stability.py"]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_module_size_and_functions(path):
    src = path.read_text(encoding="utf-8")
    assert src.count("\n") < 600
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            assert node.end_lineno - node.lineno + 1 < 60, f"{node.name} is {node.end_lineno - node.lineno + 1} lines"
            inner = [n for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom))]
            assert not inner, f"import inside {node.name}"
    assert "DEFAULT" not in src and "Thresholds()" not in src


@pytest.mark.parametrize("name", R.__all__)
def test_rules_take_thresholds_explicitly(name):
    params = inspect.signature(getattr(R, name)).parameters
    if "thresholds" in params:
        p = params["thresholds"]
        assert p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is inspect.Parameter.empty


@pytest.mark.parametrize("path", sorted((ROOT / "analysis" / "benchreport").rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_library_module_is_under_600_lines(path):
    """Issue 13's size rule for the whole library, not only the flags layer."""
    assert path.read_text(encoding="utf-8").count("\n") < 600
