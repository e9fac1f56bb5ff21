"""The sources of notebooks/report.ipynb and notebooks/explore.ipynb, kept in one place.

The report notebook's parameters cell lists every threshold of `analysis.thresholds`
(``name = default  # why``); writing the notebooks from here keeps that list from drifting
(tests/test_notebooks.py checks the files against these sources). To refresh after a
threshold was added:

    .venv/bin/python -m analysis.report.notebooks

The report notebook is thin: no ``def`` or ``class``, cells of one call each into
`analysis.report`; papermill parameters are data, passed to functions, never pasted into
code. The exploration notebook is for analysts in JupyterLab and not part of the build.
"""
from __future__ import annotations

import re
from pathlib import Path

from analysis.thresholds import Thresholds

__all__ = ["report_notebook", "explore_notebook", "parameters_source", "write", "NOTEBOOKS_DIR"]

NOTEBOOKS_DIR = Path(__file__).resolve().parents[2] / "notebooks"

_KERNEL = {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
           "language_info": {"name": "python"}}


def _help(text: str) -> str:
    """A help comment papermill can parse: its inspector skips any line with a second '='."""
    text = text.replace(">=", "≥").replace("<=", "≤")
    text = re.sub(r"\b(\w+)=(\d)", r"\1 of \2", text)
    return text.replace("=", " is ")


def parameters_source() -> str:
    """The report notebook's parameters cell: one `name = default  # help` line each."""
    lines = [
        "# Parameters: papermill injects the values of a build in a cell below this one.",
        'runs = ["../data/example"]  # run files and folders, searched recursively (paths as strings)',
        "store = None  # a run store folder (benchreport ingest RUNS --store DIR), in place of runs",
        "analysis_file = None  # the analysis benchreport build made (it analyses once); None: analyse here",
        'out = "../reports/notebook"  # folder for tables/*.csv, flags.json and figures/',
        'title = "Benchmark report"  # report title (shown as text, never as markup)',
        "baseline = None  # seat every candidate is compared against; None: the incumbent",
        "n_boot = 10000  # bootstrap resamples",
        "seed = 0  # random seed; the same data and seed give identical numbers",
        'ci_method = "BCa"  # bootstrap interval: "BCa" or "percentile"',
        'multiplicity = "holm"  # correction across comparisons before a verdict: "holm", "bh" or "none"',
        'primary_metric = "output_tok_s"  # the metric of each seat pair\'s headline cell',
        'primary_statistic = "mean"  # its statistic',
        'primary_workload = "decode"  # its workload, when the pair has it',
        "primary_concurrency = None  # its concurrency; None: the highest both seats were measured at",
    ]
    for name, default, why in Thresholds.describe():
        lines.append(f"{name} = {default!r}  # {_help(why)}")
    lines += [
        'formats = ["png", "svg"]  # figure files to write: png, svg, pdf',
        "skip_bad = False  # go on without refused files (they are listed in the appendix)",
        "max_file_mb = 512  # refuse run files larger than this",
    ]
    return "\n".join(lines)


def _nb(cells):
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    out = []
    for cid, kind, source, tags in cells:
        cell = new_markdown_cell(source) if kind == "md" else new_code_cell(source)
        cell["id"] = cid
        if tags:
            cell.metadata["tags"] = list(tags)
        out.append(cell)
    nb = new_notebook(cells=out, metadata=dict(_KERNEL))
    nbformat.validate(nb)
    return nb


def report_notebook():
    """notebooks/report.ipynb: the paper, section by section."""
    return _nb([
        ("about", "md",
         "# benchreport: the report notebook\n\n"
         "`benchreport build` executes this notebook with papermill (parameters below) and renders it "
         "with the `templates/benchreport` nbconvert template, which hides all code. Cells stay thin: "
         "they call `analysis.report`, which does the work. This cell is tagged `notebook-only` and is "
         "not part of the report.", ("notebook-only",)),
        ("parameters", "code", parameters_source(), ("parameters",)),
        ("open", "code",
         "from analysis.report import Report, sections, thresholds_from\n\n"
         "report = Report.open(runs, out=out, title=title, baseline=baseline, n_boot=n_boot, seed=seed,\n"
         "                     ci_method=ci_method, thresholds=thresholds_from(globals()), formats=formats,\n"
         "                     skip_bad=skip_bad, max_file_mb=max_file_mb, multiplicity=multiplicity,\n"
         "                     primary_metric=primary_metric, primary_statistic=primary_statistic,\n"
         "                     primary_workload=primary_workload, primary_concurrency=primary_concurrency,\n"
         "                     store=store, analysis_file=analysis_file)\n"
         "a = report.analysis\n"
         "report.title_block()", ()),
        ("h-abstract", "md", "## Abstract", ()),
        ("abstract", "code", "report.show(sections.abstract(a))", ()),
        ("h-setup", "md", "## 1 Seats and setup", ()),
        ("setup", "code", "report.show(sections.setup_text(a), sections.seats_table(a), sections.runs_table(a))", ()),
        ("h-results", "md", "## 2 Measured results", ()),
        ("results", "code", "report.show(sections.results_text(a), sections.results_table(a))", ()),
        ("fig-concurrency", "code",
         "report.show(sections.throughput_figure(a), sections.per_stream_figure(a),\n"
         "            sections.single_stream_figure(a), sections.ttft_figure(a))", ()),
        ("fig-passes", "code", "report.show(sections.per_pass_figure(a), sections.history_figure(a))", ()),
        ("h-comparison", "md", "## 3 Comparison against the incumbent", ()),
        ("comparison", "code",
         "report.show(sections.comparison_text(a), sections.comparison_table(a), sections.ratio_figure(a))", ()),
        ("h-exams", "md", "## 4 Exams", ()),
        ("exams", "code",
         "report.show(sections.exams_text(a), sections.exam_scores_table(a),\n"
         "            sections.exam_deltas_table(a), sections.exam_figure(a))", ()),
        ("h-traps", "md", "## 5 Measurement traps found", ()),
        ("traps", "code", "report.show(sections.traps(a))", ()),
        ("h-faults", "md", "## 6 Faults and open defects", ()),
        ("faults", "code", "report.show(sections.faults(a))", ()),
        ("h-limitations", "md", "## 7 What these numbers will not carry", ()),
        ("limitations", "code", "report.show(sections.limitations(a))", ()),
        ("h-appendix", "md", "## Appendix: provenance", ("appendix",)),
        ("provenance", "code",
         "report.show(sections.appendix_text(a), sections.all_cells_table(a), sections.all_comparisons_table(a),\n"
         "            sections.provenance_text(a), sections.files_table(a), sections.refused_table(a),\n"
         "            sections.skipped_table(a))", ()),
        ("settings", "code",
         "report.show(sections.parameters_table(a, report.parameters), sections.thresholds_table(a),\n"
         "            sections.packages_table())", ()),
    ])


def explore_notebook():
    """notebooks/explore.ipynb: load a folder, list seats and flags, plot, drill into a cell."""
    return _nb([
        ("about", "md",
         "# Exploring benchmark runs\n\n"
         "Load a folder of run files, list the seats and the flags, pick seats and metrics to plot, "
         "and drill into one cell's per-request distribution. Change the values in the next cell and "
         "run top to bottom (`make lab` opens this notebook). Nothing here is written to disk; "
         "`benchreport build` makes the report.", ()),
        ("parameters", "code",
         "runs = [\"../data/example\"]  # files and folders to load\n"
         "n_boot = 2000  # bootstrap resamples (the report uses 10000)\n"
         "seed = 0  # random seed\n"
         "metric = \"output_tok_s\"  # metric to plot against concurrency\n"
         "seats = None  # list of seat ids to plot; None: the baseline and the top seats\n"
         "cell_seat = None  # seat for the per-request drill-down; None: the first seat with request records\n"
         "request_field = \"output_tokens\"  # per-request field: ttft_ms, e2e_latency_ms, itl_ms, output_tokens",
         ("parameters",)),
        ("load", "code",
         "%matplotlib inline\n"
         "import pandas as pd\n"
         "from analysis.pipeline import Options, analyse_paths\n"
         "from analysis.report import figures, sections\n\n"
         "a = analyse_paths(runs, Options(n_boot=n_boot, seed=seed))\n"
         "print(f\"{len(a.tables.runs)} runs, {len(a.tables.seats)} seats, {len(a.flags)} flags; \"\n"
         "      f\"{len(a.loaded.refused)} refused, {len(a.loaded.skipped)} skipped; baseline: {a.baseline}\")", ()),
        ("h-seats", "md", "## Seats", ()),
        ("seats", "code", "a.tables.seats[[\"seat\", \"model\", \"role\", \"quantisation\", \"nodes\", \"gpus_per_node\", \"tensor_parallel\"]]", ()),
        ("h-flags", "md", "## Flags\n\nMost severe first; `flags.json` of a build has the same rows with their evidence.", ()),
        ("flags", "code", "sections.sorted_flags(a)[[\"severity\", \"code\", \"seats\", \"message\"]]", ()),
        ("h-cells", "md", "## Cells of one metric\n\nEstimates with their CI (or why none), per-pass values in pass order.", ()),
        ("cells", "code",
         "cols = [\"seat\", \"workload\", \"concurrency\", \"statistic\", \"n_passes\", \"estimate\", \"ci_low\", \"ci_high\", \"ci_method\", \"values\"]\n"
         "a.cells.loc[a.cells[\"metric\"] == metric, cols]", ()),
        ("plot-concurrency", "code",
         "fig = figures.metric_vs_concurrency(a.cells, metric, statistics=(\"mean\", \"p50\"), seats=seats, baseline=a.baseline)\n"
         "fig if fig is not None else print(f\"no seat has {metric} at two concurrency levels\")", ()),
        ("plot-dots", "code",
         "fig = figures.cell_dotplot(a.cells, \"decode_tok_s_per_stream\", concurrency=1, baseline=a.baseline)\n"
         "fig if fig is not None else print(\"no single-stream cells\")", ()),
        ("plot-passes", "code",
         "fig = figures.per_pass_values(a.cells, baseline=a.baseline)\n"
         "fig if fig is not None else print(\"no cell was measured in more than one pass\")", ()),
        ("h-compare", "md", "## Comparisons and exams", ()),
        ("compare", "code", "a.comparisons", ()),
        ("exams", "code", "a.exam_deltas", ()),
        ("h-requests", "md", "## One cell's requests\n\nThe per-request records behind a cell, when the harness kept them.", ()),
        ("requests", "code",
         "req = a.tables.requests\n"
         "seat = cell_seat or (str(req[\"seat\"].iloc[0]) if len(req) else None)\n"
         "cell = req[req[\"seat\"] == seat]\n"
         "cell.groupby([\"workload\", \"concurrency\", \"finish_reason\"], dropna=False).size().rename(\"requests\")", ()),
        ("plot-requests", "code",
         "fig = figures.request_distribution(req, request_field, seat=seat) if seat else None\n"
         "fig if fig is not None else print(f\"no {request_field} values for {seat}\")", ()),
        ("h-history", "md", "## History of a seat", ()),
        ("history", "code",
         "fig = figures.seat_history(a.tables.measurements)\n"
         "fig if fig is not None else print(\"no seat was measured on more than one date\")", ()),
    ])


def write(folder: Path = NOTEBOOKS_DIR) -> list[Path]:
    """Write both notebooks (without outputs) into `folder`."""
    import nbformat

    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, nb in (("report.ipynb", report_notebook()), ("explore.ipynb", explore_notebook())):
        path = folder / name
        nbformat.write(nb, str(path))
        paths.append(path)
    return paths


if __name__ == "__main__":
    for p in write():
        print(p)
