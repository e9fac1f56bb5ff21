"""The flags layer's own rules (issue 13), over the whole layer: no import inside a function, no
default thresholds inside, every rule taking `thresholds` keyword-only and required. Sizes and
imports are checked for the whole library in tests/test_layout.py."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from benchreport.flags import rules as R

ROOT = Path(__file__).resolve().parents[1]
MODULES = sorted((ROOT / "analysis" / "benchreport" / "flags").rglob("*.py")) + [
    ROOT / "analysis" / "benchreport" / "stats" / "stability.py"
]


def test_no_import_inside_a_function_and_no_default_thresholds():
    found = []
    for path in MODULES:
        src = path.read_text(encoding="utf-8")
        if "DEFAULT" in src or "Thresholds()" in src:
            found.append(f"{path.name}: default thresholds")
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in ast.walk(node)):
                    found.append(f"{path.name}: import inside {node.name}")
    assert found == []


@pytest.mark.parametrize("name", R.__all__)
def test_rules_take_thresholds_explicitly(name):
    params = inspect.signature(getattr(R, name)).parameters
    if "thresholds" in params:
        p = params["thresholds"]
        assert p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is inspect.Parameter.empty
