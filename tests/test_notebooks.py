"""The notebooks: thin, parameterised, in step with their sources, and executable top to bottom.

The report notebook's execution through papermill is in tests/test_report_e2e.py (one
build shared by the session); here the exploration notebook runs on the example data.
"""
from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import pytest

from analysis.report import notebooks as NB
from analysis.thresholds import Thresholds

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "notebooks" / "report.ipynb"
EXPLORE = ROOT / "notebooks" / "explore.ipynb"


@pytest.mark.parametrize("path, source", [(REPORT, NB.report_notebook), (EXPLORE, NB.explore_notebook)])
def test_notebook_files_match_their_sources(path, source):
    """A threshold added to analysis.thresholds must reach the notebook: rerun
    `python -m analysis.report.notebooks` when this fails."""
    on_disk = nbformat.read(path, as_version=4)
    expected = source()
    assert [(c.cell_type, c.source, c.metadata.get("tags", [])) for c in on_disk.cells] == \
           [(c.cell_type, c.source, c.metadata.get("tags", [])) for c in expected.cells]
    assert all(not c.get("outputs") for c in on_disk.cells if c.cell_type == "code")


def test_report_parameters_cell_lists_every_threshold_once():
    import papermill as pm

    params = pm.inspect_notebook(str(REPORT))
    for name, default, why in Thresholds.describe():
        assert name in params, name
        assert ast.literal_eval(params[name]["default"]) == default
        assert params[name]["help"], name
    for name in ("runs", "out", "title", "baseline", "alpha", "n_boot", "seed", "formats", "skip_bad"):
        assert name in params and params[name]["help"], name
    nb = nbformat.read(REPORT, as_version=4)
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1
    lines = [ln for ln in tagged[0].source.splitlines() if ln and not ln.startswith("#")]
    assert all(" = " in ln and "  # " in ln for ln in lines)  # name = default  # help


def test_report_notebook_is_thin():
    nb = nbformat.read(REPORT, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    for cell in code:
        tree = ast.parse(cell.source)
        assert not [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                               ast.ClassDef, ast.Lambda))], cell.source
        if "parameters" not in cell.metadata.get("tags", []):
            assert len(tree.body) <= 4, cell.source  # a few statements, each a call into analysis
    headings = [c.source for c in nb.cells if c.cell_type == "markdown" and c.source.startswith("## ")]
    assert headings == ["## Abstract", "## 1 Seats and setup", "## 2 Measured results",
                        "## 3 Comparison against the incumbent", "## 4 Exams",
                        "## 5 Measurement traps found", "## 6 Faults and open defects",
                        "## 7 What these numbers will not carry", "## Appendix: provenance"]


def test_parameters_are_never_pasted_into_code():
    """Code cells name parameters as variables; no cell formats a parameter into source."""
    nb = nbformat.read(REPORT, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert "exec(" not in cell.source and "eval(" not in cell.source and ".format(" not in cell.source


def test_explore_notebook_runs_top_to_bottom_on_the_example(tmp_path):
    import papermill as pm

    out = tmp_path / "explore.ipynb"
    pm.execute_notebook(str(EXPLORE), str(out), parameters={"n_boot": 200}, kernel_name="python3",
                        progress_bar=False, cwd=str(EXPLORE.parent),
                        extra_arguments=["--IPKernelApp.log_level=ERROR"])
    nb = nbformat.read(out, as_version=4)
    outputs = {c.id: c.outputs for c in nb.cells if c.cell_type == "code"}
    assert not [o for os_ in outputs.values() for o in os_ if o.output_type == "error"]
    images = [c for c, os_ in outputs.items() if any("image/png" in o.get("data", {}) for o in os_)]
    assert {"plot-concurrency", "plot-dots", "plot-passes", "plot-requests"} <= set(images)
    tables = [c for c, os_ in outputs.items() if any("text/html" in o.get("data", {}) for o in os_)]
    assert {"seats", "flags", "cells"} <= set(tables)
