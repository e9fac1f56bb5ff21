"""papermill executing a notebook in the build's own process (benchreport.report.inprocess): what
papermill records is papermill's own (its parameters, metadata, error markers and exception); the
cells' displays become their outputs as a kernel would record them."""

from __future__ import annotations

import json

import nbformat
import pytest
from benchreport.report.inprocess import execute_in_process


def _notebook(path, *cells) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    params = nbformat.v4.new_code_cell("x = 1\nname = 'default'")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [nbformat.v4.new_markdown_cell("# A notebook"), params, *[nbformat.v4.new_code_cell(c) for c in cells]]
    nbformat.write(nb, str(path))


SHOW = (
    "from markupsafe import Markup\nfrom benchreport.report import Report\nreport = Report(None, out='.', title='t')\n"
)


def test_papermill_parameters_outputs_and_metadata(tmp_path):
    _notebook(
        tmp_path / "in.ipynb",
        SHOW + "report.show(Markup(f'<p>x is {x}, name is {name}</p>'))",
        "print('to stdout')\ny = x * 2",
        "report.show(Markup(f'<p>y is {y}</p>'))",
    )
    execute_in_process(tmp_path / "in.ipynb", tmp_path / "out.ipynb", {"x": 21, "name": "given"}, progress=False)
    nb = nbformat.read(str(tmp_path / "out.ipynb"), as_version=4)
    assert nb["metadata"]["papermill"]["parameters"] == {"x": 21, "name": "given"}
    injected = [c for c in nb["cells"] if "injected-parameters" in c["metadata"].get("tags", [])]
    assert len(injected) == 1 and "x = 21" in "".join(injected[0]["source"])
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert [c["execution_count"] for c in code] == [1, 2, 3, 4, 5]
    shown = code[2]["outputs"]
    assert shown == [
        {
            "output_type": "display_data",
            "metadata": {},
            "data": {"text/html": "<p>x is 21, name is given</p>", "text/plain": "<IPython.core.display.HTML object>"},
        }
    ]
    assert code[3]["outputs"] == [{"output_type": "stream", "name": "stdout", "text": "to stdout\n"}]
    assert code[4]["outputs"][0]["data"]["text/html"] == "<p>y is 42</p>"  # one namespace for the cells
    assert all(c["metadata"]["papermill"]["status"] == "completed" for c in code)


def test_a_cell_that_raises_stops_the_notebook_as_papermill_does(tmp_path):
    from papermill.exceptions import PapermillExecutionError

    _notebook(tmp_path / "in.ipynb", "y = 1", "raise ValueError('no such seat')", "z = 3")
    with pytest.raises(PapermillExecutionError) as raised:
        execute_in_process(tmp_path / "in.ipynb", tmp_path / "out.ipynb", {}, progress=False)
    assert (raised.value.exec_count, raised.value.ename, raised.value.evalue) == (3, "ValueError", "no such seat")
    nb = json.loads((tmp_path / "out.ipynb").read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code[2]["outputs"][0]["output_type"] == "error"
    assert code[3]["outputs"] == [] and code[3]["execution_count"] is None  # never run
    assert nb["metadata"]["papermill"]["exception"] is True


def test_an_interrupt_is_not_a_cell_error(tmp_path):
    _notebook(tmp_path / "in.ipynb", "raise KeyboardInterrupt")
    with pytest.raises(KeyboardInterrupt):
        execute_in_process(tmp_path / "in.ipynb", tmp_path / "out.ipynb", {}, progress=False)


@pytest.fixture(scope="module")
def example_analysis():
    from pathlib import Path

    from benchreport.pipeline import Options, analyse_paths

    return analyse_paths([Path(__file__).resolve().parents[1] / "data" / "example"], Options())


def test_the_notebook_opens_the_analysis_the_build_holds(example_analysis, tmp_path):
    """Inside a build (`held_analysis`), `Report.open` takes the build's analysis from memory and
    writes its figures where the build says (the staging folder), not into its `out` parameter."""
    from benchreport.report import Report
    from benchreport.report.document import HeldAnalysis, held_analysis

    with held_analysis(HeldAnalysis(example_analysis, out=tmp_path / "stage")):
        report = Report.open(runs=["no-such-folder"], out=tmp_path / "out", display=False)
    assert report.analysis is example_analysis and report.out == tmp_path / "stage"
    report.figures("throughput")
    assert sorted(p.name for p in (tmp_path / "stage" / "figures").iterdir()) == ["figure-01.png", "figure-01.svg"]
    assert not (tmp_path / "out").exists()


def test_a_saved_analysis_is_reported_as_it_is(example_analysis, tmp_path):
    """`analysis_file` (the report notebook's parameter): an analysis saved by save_analysis is
    reported on without analysing or writing anything, the same page as from the analysis itself."""
    from benchreport.pipeline import save_analysis
    from benchreport.report import Report
    from benchreport.report.model import sections

    save_analysis(example_analysis, tmp_path / "analysis.pickle")
    report = Report.open(
        analysis_file=tmp_path / "analysis.pickle", out=tmp_path / "out", display=False, runs=["no-such-folder"]
    )
    report.show(sections.abstract(report.analysis), sections.results_table(report.analysis))
    alone = Report(example_analysis, out=tmp_path / "alone", title="t", display=False)
    alone.show(sections.abstract(example_analysis), sections.results_table(example_analysis))
    assert report.html() == alone.html()
    assert not (tmp_path / "out").exists()  # nothing written
