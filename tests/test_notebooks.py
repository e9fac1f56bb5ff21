"""The notebooks: thin, parameterised, in step with their sources, and executable top to bottom.

The report notebook's execution through papermill is in tests/test_report_e2e.py (one
build shared by the session); here the exploration notebook runs on the example data.
"""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import pytest

from benchreport.options import parameters_cell
from benchreport.thresholds import Thresholds

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "notebooks" / "report.ipynb"
EXPLORE = ROOT / "notebooks" / "explore.ipynb"


def test_the_parameters_cell_is_written_from_the_options():
    """The .ipynb is the notebook's only source; its parameters cell is analysis/benchreport/options.py's
    (run `python -m benchreport.options --write-notebook` when this fails)."""
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
        pm.execute_notebook(
            str(REPORT),
            str(tmp_path / "a.ipynb"),
            parameters={**base, "n_bot": 5},
            kernel_name="python3",
            progress_bar=False,
            cwd=str(REPORT.parent),
        )
    with pytest.raises(PapermillExecutionError, match="does not exist"):
        pm.execute_notebook(
            str(REPORT),
            str(tmp_path / "b.ipynb"),
            parameters={**base, "runs": "../no/such"},
            kernel_name="python3",
            progress_bar=False,
            cwd=str(REPORT.parent),
        )
    assert not (tmp_path / "o").exists()  # nothing ran


def test_bootstrap_parameters_are_checked_and_taken():
    """n_boot, seed and ci_method drive the cell bootstrap since issue 43: taken, and checked."""
    from benchreport.options import parameters_from

    given = parameters_from(
        {"runs": str(ROOT / "data" / "example"), "n_boot": 500, "seed": 3, "ci_method": "bootstrap"}
    )
    assert (given.options.n_boot, given.options.seed, given.options.ci_method) == (500, 3, "bootstrap")
    assert parameters_from({"runs": str(ROOT / "data" / "example")}).options.ci_method == "t"
    with pytest.raises(ValueError, match="ci_method"):
        parameters_from({"ci_method": "x"})


def test_a_string_where_a_list_is_expected_is_one_path():
    from benchreport.options import parameters_from

    p = parameters_from({"runs": str(ROOT / "data" / "example"), "primary_concurrency": 16})
    assert p.build["runs"] == [str(ROOT / "data" / "example")] and p.options.primary.concurrency == 16
    with pytest.raises(ValueError, match="primary_concurrency"):
        parameters_from({"primary_concurrency": 0})
    with pytest.raises(ValueError, match="multiplicity"):
        parameters_from({"multiplicity": "sidak"})


def test_report_parameters_cell_lists_every_threshold_once():
    import papermill as pm

    params = pm.inspect_notebook(str(REPORT))
    for name, default, _why in Thresholds.describe():
        assert name in params, name
        assert ast.literal_eval(params[name]["default"]) == default
        assert params[name]["help"], name
    for name in ("runs", "out", "title", "baseline", "alpha", "formats", "skip_bad"):
        assert name in params and params[name]["help"], name
    for name in ("n_boot", "seed", "ci_method"):  # the cell bootstrap's (issue 43)
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
        assert not [
            n
            for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda))
        ], cell.source
        if "parameters" not in cell.metadata.get("tags", []):
            assert len(tree.body) <= 4, cell.source  # a few statements, each a call into analysis
    headings = [c.source for c in nb.cells if c.cell_type == "markdown" and c.source.startswith("## ")]
    assert headings == [
        "## Abstract",
        "## 1 Seats and setup",
        "## 2 Measured results",
        "## 3 Comparison against the incumbent",
        "## 4 Exams",
        "## 5 Measurement traps found",
        "## 6 Faults and open defects",
        "## 7 What these numbers will not carry",
        "## 8 History across dates",
        "## 9 Do the harnesses agree?",
        "## Appendix: provenance",
    ]


def test_parameters_are_never_pasted_into_code():
    """Code cells name parameters as variables; no cell formats a parameter into source."""
    nb = nbformat.read(REPORT, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert "exec(" not in cell.source and "eval(" not in cell.source and ".format(" not in cell.source


EXPLORE_DATA = {
    "example": ROOT / "data" / "example",
    "harness": ROOT / "tests" / "fixtures" / "harness" / "aiperf-sweep",
    # every harness format we have, as captured: ten harnesses, several loads in one folder
    "every-format": ROOT / "tests" / "fixtures",
}


@pytest.fixture(scope="module", params=sorted(EXPLORE_DATA))
def explored(request, tmp_path_factory):
    """explore.ipynb executed by papermill (no browser) on the example and on a harness folder."""
    import papermill as pm

    out = tmp_path_factory.mktemp("explore") / f"explore-{request.param}.ipynb"
    pm.execute_notebook(
        str(EXPLORE),
        str(out),
        parameters={"n_boot": 200, "runs": str(EXPLORE_DATA[request.param])},
        kernel_name="python3",
        progress_bar=False,
        cwd=str(EXPLORE.parent),
        extra_arguments=["--IPKernelApp.log_level=ERROR"],
    )
    return request.param, out, nbformat.read(out, as_version=4)


def _outputs(nb):
    return {c.id: c.outputs for c in nb.cells if c.cell_type == "code"}


def test_explore_notebook_runs_top_to_bottom(explored):
    name, _, nb = explored
    outputs = _outputs(nb)
    assert not [o for os_ in outputs.values() for o in os_ if o.output_type == "error"]
    data = {c: [o.get("data", {}) for o in os_] for c, os_ in outputs.items()}
    for cell in ("seats", "flags", "request-records", "comparisons", "files"):  # searchable tables
        html = "".join(d.get("text/html", "") for d in data[cell])
        assert "new ITable" in html and "window._itables_" in html, cell
    if name == "every-format":  # five harnesses measured one seat alike (captures/agreement): issue 46
        html = "".join(d.get("text/html", "") for d in data["agreement"])
        assert "new ITable" in html and "Do the harnesses agree?" in html and "genai-bench" in html
    plots = [c for c, ds in data.items() if any("application/vnd.plotly.v1+json" in d for d in ds)]
    assert {"cells", "requests"} <= set(plots)
    if name == "example":
        assert "compare" in plots
        assert any("image/png" in d for d in data["report-figure"])
    for cell in ("cells", "compare", "requests"):  # widgets, with what they select as plain text
        widget = next(d for d in data[cell] if "application/vnd.jupyter.widget-view+json" in d)
        assert widget["text/plain"].startswith("Selection: ")


def test_explore_notebook_loads_nothing_from_a_network(explored):
    """Every script is inline: no <script src>, no module import of a URL, no stylesheet link."""
    import re

    _, _, nb = explored
    html = "".join(o.get("data", {}).get("text/html", "") for os_ in _outputs(nb).values() for o in os_)
    assert len(html) > 1_000_000  # plotly.js and DataTables embedded
    assert not re.search(r"<script[^>]+src\s*=", html, re.I)
    assert not re.search(r"import\s*[^;]*from\s*['\"]https?:", html)
    assert not re.search(r"<link[^>]+href\s*=\s*['\"]?https?:", html, re.I)
    assert "cdn.jsdelivr.net/npm/mathjax" not in html  # plotly's own notebook renderer would add it


def test_explore_notebook_is_thin():
    nb = nbformat.read(EXPLORE, as_version=4)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tree = ast.parse("\n".join(ln for ln in cell.source.splitlines() if not ln.startswith("%")))
        assert not [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.Lambda))]
        if "parameters" not in cell.metadata.get("tags", []):
            assert len(tree.body) <= 6, cell.source
