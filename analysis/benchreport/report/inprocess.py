"""The report notebook executed by papermill in this process: a papermill engine without a kernel.

`benchreport build` used to start a Jupyter kernel for ``notebooks/report.ipynb``, hand it
the analysis through a pickle and wait for it (kernel start, imports and the hand-over were
half of a build's time: docs/performance.md). The notebook is still parameterised and run by
papermill (its parameters cell, the injected cell, ``metadata.papermill``, per-cell timings,
error markers and `PapermillExecutionError` all come from papermill itself), but through
papermill's engine interface (`papermill.engines.Engine`, as papermill's own
``NBClientEngine``): this engine runs the code cells one by one in one namespace of the
build's own process, and what a cell shows with `Report` becomes the cell's ``display_data``
output, as a kernel would record it. The analysis the build made is held in memory for the
notebook's `Report.open` (`benchreport.report.document.held_analysis`), never copied.

The notebook is ours (``notebooks/report.ipynb``, with the package): its cells are code we
ship, not a user's. Strings from run files reach it only as parameter *values* (papermill
writes them as literals) and are never executed.
"""
from __future__ import annotations

import contextlib
import io
import sys
import traceback
from pathlib import Path

__all__ = ["ENGINE", "engine_class", "execute_in_process", "warm_up"]

#: the name this engine is registered under with papermill
ENGINE = "benchreport-in-process"
#: what a kernel records as the plain-text form of an HTML display
_HTML_PLAIN = "<IPython.core.display.HTML object>"


def engine_class():
    """The papermill engine (built on first use: papermill is imported only for a build)."""
    import nbformat
    from papermill.engines import Engine

    from benchreport.report.document import figures_last, shown_to

    class InProcessEngine(Engine):
        """Execute the code cells in this process, in order, stopping at the first error (as
        papermill's NBClientEngine does); papermill then raises `PapermillExecutionError`."""

        @classmethod
        def execute_managed_notebook(cls, nb_man, kernel_name, **kwargs):
            namespace: dict = {"__name__": "__main__", "__builtins__": __builtins__}
            count, last = 0, None
            with figures_last() as pending:
                for index, cell in enumerate(nb_man.nb.cells):
                    if cell.cell_type != "code":
                        continue
                    count += 1
                    nb_man.cell_start(cell, index)
                    cell.execution_count = count
                    ok = _run_cell(cell, namespace, nbformat, shown_to)
                    if not ok:
                        nb_man.cell_exception(cell, index)
                    nb_man.cell_complete(cell, index)
                    if not ok:
                        return
                    last = (cell, index)
                if pending and last is not None:
                    _place_figures(nb_man, pending, *last, nbformat)

    return InProcessEngine


def _place_figures(nb_man, pending: list, last_cell, last_index: int, nbformat) -> None:
    """The figures the notebook showed as placeholders (benchreport.report.document.figures_last),
    drawn or taken now and put in their places in the cells' outputs (a figure with nothing to
    draw leaves no output); a failure is the last cell's error, as papermill reports a cell's."""
    try:
        shown: dict[str, str] = {}
        for report in pending:
            shown.update(report.draw_pending())
    except Exception as exc:  # noqa: BLE001 - recorded as a cell's error, as a kernel does
        last_cell.outputs.append(nbformat.v4.new_output(
            "error", ename=type(exc).__name__, evalue=str(exc),
            traceback=traceback.format_exception(type(exc), exc, exc.__traceback__)))
        nb_man.cell_exception(last_cell, last_index)
        return
    for cell in nb_man.nb.cells:
        if cell.cell_type != "code" or not cell.get("outputs"):
            continue
        kept = []
        for output in cell.outputs:
            html = output.get("data", {}).get("text/html") if output.output_type == "display_data" else None
            if html is not None and html in shown:
                if not shown[html]:
                    continue
                output.data["text/html"] = shown[html]
            kept.append(output)
        cell.outputs = kept


def _run_cell(cell, namespace: dict, nbformat, shown_to) -> bool:
    """One cell: its displays and printed text as outputs; False (and an error output) when it
    raised an Exception. KeyboardInterrupt and other BaseExceptions stop the build as they are."""
    outputs = []

    def show(fragment) -> None:
        outputs.append(nbformat.v4.new_output("display_data", data={"text/html": str(fragment),
                                                                     "text/plain": _HTML_PLAIN}))

    out, err = io.StringIO(), io.StringIO()
    ok = True
    try:
        with shown_to(show), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            exec(compile(cell.source, f"<report notebook cell {cell.execution_count}>", "exec"), namespace)
    except Exception as exc:  # noqa: BLE001 - recorded as the cell's error, as a kernel does
        ok = False
        outputs.append(nbformat.v4.new_output(
            "error", ename=type(exc).__name__, evalue=str(exc),
            traceback=traceback.format_exception(type(exc), exc, exc.__traceback__)))
    streams = [nbformat.v4.new_output("stream", name=name, text=text)
               for name, text in (("stdout", out.getvalue()), ("stderr", err.getvalue())) if text]
    cell.outputs = streams + outputs
    return ok


def execute_in_process(notebook: Path, output: Path, parameters: dict, *, progress: bool) -> None:
    """papermill's `execute_notebook` of `notebook` with `parameters`, saved as `output`, its code
    cells run in this process (the engine above). Raises papermill's `PapermillExecutionError`
    for a cell that raised, as papermill does with a kernel."""
    import papermill as pm
    from papermill.engines import papermill_engines

    papermill_engines.register(ENGINE, engine_class())
    pm.execute_notebook(str(notebook), str(output), parameters=parameters, engine_name=ENGINE,
                        progress_bar=progress and sys.stderr.isatty(), log_output=False,
                        request_save_on_cell_execute=False)


def warm_up() -> None:
    """What executing and rendering the report needs first, done ahead (in the build's rendering
    process while the build analyses: benchreport.report.build.rendering_process): papermill,
    nbconvert, matplotlib and the report's sections imported, the templates compiled (a page
    rendered), a first figure saved."""
    import importlib
    import io

    import nbformat
    from matplotlib.figure import Figure

    for module in ("papermill", "benchreport.report.document"):
        importlib.import_module(module)
    from benchreport.report.figures import theme
    from benchreport.report.render import compile_templates, notebook_to_html

    engine_class()
    compile_templates()
    notebook_to_html(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("warm-up")]), title="warm-up")
    with theme():
        fig = Figure(figsize=(2, 1))
        fig.add_subplot().plot([0, 1], [0, 1], label="a")
        fig.savefig(io.BytesIO(), format="png")
        fig.savefig(io.BytesIO(), format="svg")
