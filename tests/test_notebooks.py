"""The notebooks: thin, parameterised, in step with their sources, and executable top to bottom.

The report notebook's execution through papermill is in tests/test_report_e2e.py (one
build shared by the session); here the exploration notebook runs on the example data.
"""
from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import pytest

from analysis.options import parameters_cell
from analysis.thresholds import Thresholds

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "notebooks" / "report.ipynb"
EXPLORE = ROOT / "notebooks" / "explore.ipynb"


def test_the_parameters_cell_is_written_from_the_options():
    """The .ipynb is the notebook's only source; its parameters cell is analysis/options.py's
    (run `python -m analysis.options --write-notebook` when this fails)."""
    nb = nbformat.read(REPORT, as_version=4)
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    assert cell.source == parameters_cell()
    for path in (REPORT, EXPLORE):
        assert all(not c.get("outputs") for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")


def test_notebook_parameters_are_checked_before_anything_runs(tmp_path):
    import papermill as pm
    from papermill.exceptions import PapermillExecutionError

    base = {"out": str(tmp_path / "o"), "n_boot": 200}
    with pytest.raises(PapermillExecutionError, match="unknown parameter.*n_bot"):
        pm.execute_notebook(str(REPORT), str(tmp_path / "a.ipynb"), parameters={**base, "n_bot": 5},
                            kernel_name="python3", progress_bar=False, cwd=str(REPORT.parent))
    with pytest.raises(PapermillExecutionError, match="does not exist"):
        pm.execute_notebook(str(REPORT), str(tmp_path / "b.ipynb"), parameters={**base, "runs": "../no/such"},
                            kernel_name="python3", progress_bar=False, cwd=str(REPORT.parent))
    assert not (tmp_path / "o").exists()  # nothing ran


def test_a_string_where_a_list_is_expected_is_one_path():
    from analysis.options import parameters_from

    p = parameters_from({"runs": str(ROOT / "data" / "example"), "n_boot": 300})
    assert p.build["runs"] == [str(ROOT / "data" / "example")] and p.options.n_boot == 300
    with pytest.raises(ValueError, match="n_boot"):
        parameters_from({"n_boot": 5})
    with pytest.raises(ValueError, match="multiplicity"):
        parameters_from({"multiplicity": "sidak"})


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
                        "## 7 What these numbers will not carry", "## 8 History across dates",
                        "## Appendix: provenance"]


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
