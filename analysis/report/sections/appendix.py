"""Appendix: the full tables at fleet scale, and provenance (files, refusals, parameters, software)."""
from __future__ import annotations

import os
import platform
from importlib import metadata

import pandas as pd

from analysis import format as fmt
from analysis.thresholds import Thresholds

from .blocks import Prose, Table, ident, para, prose
from .cellview import cells_cut, result_cells
from .comparisons import comparisons_cut
from .headline import baseline_comparisons
from .tables import FILES_LINE_CHARS, LONG_TABLE_ROWS, MAX_BODY_ROWS, MAX_COMPARISON_ROWS, constant_columns


def _common_root(paths: list[str]) -> str | None:
    absolute = [p for p in paths if os.path.isabs(p)]
    if len(absolute) != len(paths) or not paths:
        return None
    try:
        root = os.path.commonpath(absolute)
    except ValueError:
        return None
    if len(paths) == 1:
        root = os.path.dirname(root)
    return root


def _rel(p: str, root: str | None) -> str:
    return os.path.relpath(p, root) if root else p


def _appendix_tables(a) -> list[str]:
    """What the appendix lists before the files: every cell, every comparison (fleet scale only)."""
    out = []
    cells = result_cells(a)
    if cells is not None and len(cells) and cells_cut(cells, MAX_BODY_ROWS):
        out.append("every seat and cell")
    c = baseline_comparisons(a)
    if c is not None and len(c) and comparisons_cut(c, MAX_COMPARISON_ROWS):
        out.append("every comparison against the baseline")
    return out


def appendix_text(a) -> Prose | None:
    """Lead of the appendix at fleet scale: the full tables, and where the long ones are.

    None when the body's tables hold everything (no Table A1 of cells).
    """
    tables = _appendix_tables(a)
    if not tables:
        return None
    labels = "Table A1" if len(tables) == 1 else "Tables A1 and A2"
    return prose(para("{} {} {}, one row per cell (a seat's workload, concurrency and metric) with the "
                      "statistics side by side. The long tables, one row per statistic with its confidence "
                      "interval, per-pass values and, for comparisons, the test and counts, are "
                      "tables/cells.csv and tables/comparisons.csv beside this report.",
                      labels, "lists" if len(tables) == 1 else "list", fmt.join_words(tables)))


def provenance_text(a, params: dict | None = None) -> Prose:
    """Lead of the appendix's provenance: where the files are, how many were refused and skipped."""
    t, loaded = a.tables, a.loaded
    paths = [str(p) for p in t.runs["source_file"]] + [r.path for r in loaded.refused] + [s.path for s in loaded.skipped]
    root = _common_root(paths)
    out = [para("Every number in this report comes from the {} listed in Table {}, identified by "
                "SHA-256. {} refused and {} skipped (no results in {}).",
                fmt.counted(t.runs["source_file"].nunique(), "file"), f"A{fmt.count(1 + len(_appendix_tables(a)))}",
                fmt.counted(len(loaded.refused), "file was", "files were"),
                fmt.counted(len(loaded.skipped), "file was", "files were"),
                "it" if len(loaded.skipped) == 1 else "them")]
    if root:
        out.append(para("Paths are relative to {}.", ident(root)))
    if loaded.refused:
        out.append(para("The report was built with --skip-bad: the refused files below were left out, "
                        "and nothing from them is in any table or figure."))
    return prose(out)


def files_table(a) -> Table:
    """Every file read: path, format, harness and version, run id, SHA-256."""
    t, loaded = a.tables, a.loaded
    paths = [str(p) for p in t.runs["source_file"]] + [r.path for r in loaded.refused] + [s.path for s in loaded.skipped]
    root = _common_root(paths)
    rows = []
    for _, r in t.runs.sort_values(["source_file", "run_id"]).iterrows():
        rows.append({"File": _rel(str(r["source_file"]), root),
                     "Run": fmt.text(r["run_id"]),
                     "Format": fmt.text(r.get("source_format")),
                     "Harness and version": fmt.text(r.get("harness")) + (" " + fmt.text(r.get("harness_version")) if not fmt.missing(r.get("harness_version")) else " (version not stated)"),
                     "SHA-256": fmt.text(r.get("source_sha256"))})
    df = pd.DataFrame(rows, columns=["File", "Run", "Format", "Harness and version", "SHA-256"])
    # a native file is named after its run: say it once
    same = [os.path.splitext(os.path.basename(f))[0] == r for f, r in zip(df["File"], df["Run"])]
    if all(same):
        df = df.drop(columns=["Run"])
    note = None
    if len(df) > LONG_TABLE_ROWS:
        # fleet scale: one format and harness for hundreds of files is said once
        df, note = constant_columns(df, ["Format", "Harness and version"])
    widths, nowrap = {"SHA-256": "30%", "File": "34%"}, ()
    if len(df) and df["File"].str.len().max() + len(df["SHA-256"].iloc[0]) <= FILES_LINE_CHARS:
        # short paths (fleet scale): a row per line, the hash unbroken
        widths, nowrap = {}, ("SHA-256",)
    return Table(df, "Files read, with their format, harness and version, and SHA-256.",
                 kind="appendix", small=True, mono=("File", "Run", "SHA-256"), key="files",
                 widths=widths, nowrap=nowrap, note=note or None)


def refused_table(a) -> Table | None:
    """Refused files and why (present when --skip-bad let the build go on)."""
    loaded = a.loaded
    if not loaded.refused:
        return None
    paths = [r.path for r in loaded.refused]
    root = _common_root([str(p) for p in a.tables.runs["source_file"]] + paths)
    rows = [{"File": _rel(r.path, root), "Where": r.json_path, "Why": r.message} for r in loaded.refused]
    return Table(pd.DataFrame(rows), "Refused files: left out of every table and figure.",
                 kind="appendix", small=True, mono=("File", "Where"), key="refused")


def skipped_table(a) -> Table | None:
    """Skipped files: written beside results, carrying none."""
    loaded = a.loaded
    if not loaded.skipped:
        return None
    root = _common_root([str(p) for p in a.tables.runs["source_file"]] + [s.path for s in loaded.skipped])
    rows = [{"File": _rel(s.path, root), "Why skipped": s.reason} for s in loaded.skipped]
    return Table(pd.DataFrame(rows), "Skipped files (no results in them).", kind="appendix", small=True,
                 mono=("File",), key="skipped")


def parameters_table(a, params: dict) -> Table:
    """The parameters this report was built with (papermill parameters), seed included."""
    rows = []
    th = set(a.options.thresholds.as_dict())
    for k, v in params.items():
        if k in th:
            continue
        if isinstance(v, (list, tuple)):
            v = ", ".join(str(x) for x in v)
        rows.append({"Parameter": str(k), "Value": "none" if v is None else str(v)})
    return Table(pd.DataFrame(rows, columns=["Parameter", "Value"]),
                 "Parameters of this build (the executed notebook records them too).",
                 kind="appendix", small=True, mono=("Parameter",), key="parameters")


def thresholds_table(a) -> Table:
    """Every threshold: value used, default and why."""
    used = a.options.thresholds.as_dict()
    rows = []
    for name, default, why in Thresholds.describe():
        v = used.get(name, default)
        rows.append({"Threshold": name, "Used": fmt.text(v), "Default": fmt.text(default),
                     "Why this default": why})
    return Table(pd.DataFrame(rows), "Thresholds used by the statistics and the flags, with their "
                 "defaults and the reason for each.", kind="appendix", small=True,
                 mono=("Threshold",), numeric=("Used", "Default"), key="thresholds",
                 widths={"Why this default": "62%"})


PACKAGES = ("benchreport", "numpy", "pandas", "scipy", "statsmodels", "pingouin", "msgspec",
            "matplotlib", "seaborn", "papermill", "nbconvert", "nbformat", "ipykernel", "weasyprint",
            "markupsafe", "mistune")


def packages_table() -> Table:
    """Python and the versions of the packages that computed and rendered this report."""
    rows = [{"Package": "python", "Version": platform.python_version()}]
    for p in PACKAGES:
        try:
            v = metadata.version(p)
        except metadata.PackageNotFoundError:
            v = "not installed"
        rows.append({"Package": p, "Version": v})
    return Table(pd.DataFrame(rows), "Software versions.", kind="appendix", small=True,
                 mono=("Package", "Version"), key="packages")
