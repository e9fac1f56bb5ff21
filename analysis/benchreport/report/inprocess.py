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

__all__ = ["ENGINE", "engine_class", "execute_in_process"]

#: the name this engine is registered under with papermill
ENGINE = "benchreport-in-process"
#: what a kernel records as the plain-text form of an HTML display
_HTML_PLAIN = "<IPython.core.display.HTML object>"


def engine_class():
    """The papermill engine (built on first use: papermill is imported only for a build)."""
    import nbformat
    from papermill.engines import Engine

    from benchreport.report.document import shown_to

    class InProcessEngine(Engine):
        """Execute the code cells in this process, in order, stopping at the first error (as
        papermill's NBClientEngine does); papermill then raises `PapermillExecutionError`."""

        @classmethod
        def execute_managed_notebook(cls, nb_man, kernel_name, **kwargs):
            namespace: dict = {"__name__": "__main__", "__builtins__": __builtins__}
            count = 0
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

    return InProcessEngine


def _run_cell(cell, namespace: dict, nbformat, shown_to) -> bool:
    """One cell: its displays and printed text as outputs; False (and an error output) when it
    raised an Exception. KeyboardInterrupt and other BaseExceptions stop the build as they are."""
    outputs = []

    def show(fragment) -> None:
        outputs.append(
            nbformat.v4.new_output("display_data", data={"text/html": str(fragment), "text/plain": _HTML_PLAIN})
        )

    out, err = io.StringIO(), io.StringIO()
    ok = True
    try:
        with shown_to(show), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            exec(compile(cell.source, f"<report notebook cell {cell.execution_count}>", "exec"), namespace)
    except Exception as exc:  # noqa: BLE001 - recorded as the cell's error, as a kernel does
        ok = False
        outputs.append(
            nbformat.v4.new_output(
                "error",
                ename=type(exc).__name__,
                evalue=str(exc),
                traceback=traceback.format_exception(type(exc), exc, exc.__traceback__),
            )
        )
    streams = [
        nbformat.v4.new_output("stream", name=name, text=text)
        for name, text in (("stdout", out.getvalue()), ("stderr", err.getvalue()))
        if text
    ]
    cell.outputs = streams + outputs
    return ok


def execute_in_process(notebook: Path, output: Path, parameters: dict, *, progress: bool) -> None:
    """papermill's `execute_notebook` of `notebook` with `parameters`, saved as `output`, its code
    cells run in this process (the engine above). Raises papermill's `PapermillExecutionError`
    for a cell that raised, as papermill does with a kernel."""
    import papermill as pm
    from papermill.engines import papermill_engines

    papermill_engines.register(ENGINE, engine_class())
    pm.execute_notebook(
        str(notebook),
        str(output),
        parameters=parameters,
        engine_name=ENGINE,
        progress_bar=progress and sys.stderr.isatty(),
        log_output=False,
        request_save_on_cell_execute=False,
    )
