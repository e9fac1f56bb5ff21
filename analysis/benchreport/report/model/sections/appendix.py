"""Appendix: the full tables at fleet scale, and provenance (files, refusals, parameters, software)."""

from __future__ import annotations

import pathlib

import os
import platform
import re
from importlib import metadata

import pandas as pd

from benchreport import format as fmt
from benchreport.load.errors import NOT_A_RUN_WHY
from benchreport.pipeline import provenance
from benchreport.thresholds import Thresholds

from .blocks import Prose, Table, ident, para, prose
from .cellview import result_cells
from .comparisons import comparisons_cut
from .headline import band_words, baseline_comparisons
from .memo import once_per_table
from .tables import LONG_TABLE_ROWS, MAX_COMPARISON_ROWS, constant_columns


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


def _files_root(a) -> str | None:
    """`_common_root` of every path the report lists, worked out once per analysis (four sections
    ask, and a fleet's year lists 90,000 files)."""
    return once_per_table(a, "files_root", a.tables, lambda: _common_root(_paths(a)))


def _rel(p: str, root: str | None) -> str:
    if not root:
        return p
    if p.startswith(root) and p[len(root) : len(root) + 1] == os.sep and os.path.normpath(p) == p:
        return p[len(root) + 1 :]  # what relpath gives a plain path under the root, without its two abspath calls
    return os.path.relpath(p, root)


def _appendix_tables(a) -> list[str]:
    """The reference tables the appendix opens with: every seat and cell (Table 1 gives the
    headline figures), every comparison (when the body's table was cut)."""
    out = []
    cells = result_cells(a)
    if cells is not None and len(cells):
        out.append("every seat and cell")
    c = baseline_comparisons(a)
    if c is not None and len(c) and comparisons_cut(c, MAX_COMPARISON_ROWS):
        out.append("every comparison against the baseline")
    return out


def appendix_text(a) -> Prose | None:
    """Lead of the appendix: the full tables, and where the long ones are (None without cells)."""
    tables = _appendix_tables(a)
    if not tables:
        return None
    labels = "Table A1" if len(tables) == 1 else "Tables A1 and A2"
    return prose(
        para(
            "{} {} {}, one row per cell (a seat's workload, concurrency and metric) with the "
            "statistics side by side. The long tables, one row per statistic with its confidence "
            "interval, per-pass values and, for comparisons, the test and counts, are "
            "tables/cells.csv and tables/comparisons.csv beside this report.",
            labels,
            "lists" if len(tables) == 1 else "list",
            fmt.join_words(tables),
        )
    )


#: files the files table lists one by one, grouped by folder; past this many, one row per
#: folder (provenance.csv lists every file)
MAX_FILE_ROWS = LONG_TABLE_ROWS
#: hex digits of a SHA-256 the files table shows (provenance.csv has all 64)
SHA_SHOWN = 16


def _paths(a) -> list[str]:
    loaded = a.loaded
    return (
        [str(p) for p in a.tables.runs["source_file"]]
        + [r.path for r in loaded.refused]
        + [s.path for s in loaded.skipped]
    )


def _folder_and_name(path: str, root: str | None) -> tuple[str, str]:
    """A path relative to the common root as (folder with a trailing slash, or '.', file name)."""
    rel = _rel(path, root)
    folder, name = os.path.split(rel)
    return (folder + "/" if folder else "./"), name


def _files_table_number(a) -> int:
    """The files table's number in the appendix: after the reference tables and the table of flags
    (the report notebook's order)."""
    f = getattr(a, "flags", None)
    return 1 + len(_appendix_tables(a)) + (1 if f is not None and len(f) else 0)


def provenance_text(a, params: dict | None = None) -> Prose:
    """Lead of the appendix's provenance: where the files are, how many were refused and skipped."""
    t, loaded = a.tables, a.loaded
    root = _files_root(a)
    out = [
        para(
            "Every number in this report comes from the {} listed in Table {}, identified by SHA-256. "
            "{} refused and {} skipped (no results in {}). provenance.csv beside this report lists "
            "every file read, refused or skipped, with its full path, run, hash and reason.",
            fmt.counted(t.runs["source_file"].nunique(), "file"),
            f"A{fmt.count(_files_table_number(a))}",
            fmt.counted(len(loaded.refused), "file was", "files were"),
            fmt.counted(len(loaded.skipped), "file was", "files were"),
            "it" if len(loaded.skipped) == 1 else "them",
        )
    ]
    if root:
        out.append(para("Paths are relative to {}.", ident(root)))
    if loaded.refused:
        out.append(
            para(
                "The report was built with --skip-bad: the refused files below were left out, "
                "and nothing from them is in any table or figure."
            )
        )
    return prose(out)


def _harness(r) -> str:
    version = r.get("harness_version")
    return fmt.text(r.get("harness")) + (
        " " + fmt.text(version) if not fmt.missing(version) else " (version not stated)"
    )


def files_table(a) -> Table:
    """The files read, grouped by folder: name, format, harness and version, the start of the
    SHA-256 (provenance.csv has it whole, and the run ids); past `MAX_FILE_ROWS` files, one row
    per folder with its files, formats and harnesses."""
    runs = a.tables.runs
    root = _files_root(a)
    files = runs.drop_duplicates("source_file").sort_values("source_file")
    where = [_folder_and_name(str(p), root) for p in files["source_file"]]
    df = pd.DataFrame(
        {
            "Folder": [w[0] for w in where],
            "File": [w[1] for w in where],
            "Format": [fmt.text(x) for x in files.get("source_format", [None] * len(files))],
            "Harness and version": [
                _harness({"harness": h, "harness_version": v})
                for h, v in zip(
                    files.get("harness", [None] * len(files)), files.get("harness_version", [None] * len(files))
                )
            ],
            "SHA-256": [fmt.text(h)[:SHA_SHOWN] for h in files.get("source_sha256", [None] * len(files))],
        }
    )
    if len(df) > MAX_FILE_ROWS:
        return _folders_table(df)
    note = f"SHA-256: its first {SHA_SHOWN} hex digits; provenance.csv beside this report has all 64."
    return Table(
        df,
        "Files read, by folder, with their format, harness and version, and SHA-256.",
        kind="appendix",
        small=True,
        mono=("File", "SHA-256"),
        key="files",
        group="Folder",
        nowrap=("SHA-256",),
        note=note,
    )


def _folders_table(df: pd.DataFrame) -> Table:
    """Many files: one row per folder, with its files, formats and harnesses."""
    rows = []
    for folder, g in df.groupby("Folder", sort=True):
        rows.append(
            {
                "Folder": folder,
                "Files": fmt.count(len(g)),
                "Format": ", ".join(sorted(set(g["Format"]) - {""})),
                "Harness and version": ", ".join(sorted(set(g["Harness and version"]))),
            }
        )
    out, same = constant_columns(pd.DataFrame(rows), ["Format", "Harness and version"])
    return Table(
        out,
        f"Files read, {fmt.counted(len(df), 'file')} in {fmt.counted(len(rows), 'folder')}, one row "
        "per folder with their formats, harnesses and versions.",
        kind="appendix",
        small=True,
        mono=("Folder",),
        numeric=("Files",),
        key="files",
        note=" ".join(
            b for b in (same, "provenance.csv beside this report lists every file with its run and SHA-256.") if b
        ),
    )


def provenance_table(a) -> Table:
    """Every file read, refused or skipped (`pipeline.provenance`, as provenance.csv): not
    shown in the report, whose appendix summarises it; `benchreport table provenance`."""
    df = provenance(a).astype(object)
    df = df.where(df.notna(), "")
    return Table(
        df.astype(str),
        "Every file of the build: read, refused or skipped, with its run, SHA-256 and reason.",
        kind="appendix",
        small=True,
        mono=("path", "run_id", "sha256"),
        key="provenance",
    )


def refused_table(a) -> Table | None:
    """Refused files and why (present when --skip-bad let the build go on)."""
    loaded = a.loaded
    if not loaded.refused:
        return None
    root = _files_root(a)
    rows = [{"File": _rel(r.path, root), "Where": r.json_path, "Why": r.message} for r in loaded.refused]
    return Table(
        pd.DataFrame(rows),
        "Refused files: left out of every table and figure.",
        kind="appendix",
        small=True,
        mono=("File", "Where"),
        key="refused",
    )


_PATHLIKE = re.compile(r"\S*/\S*")
_QUOTED = re.compile(r"'[^']*'")
_NUMBER = re.compile(r"\d+")


def reason_kind(reason: str) -> str:
    """What a skip reason says with its particulars (paths, quoted names, numbers) left out:
    the files skipped for the same kind of reason count together."""
    if reason.startswith(NOT_A_RUN_WHY):  # files that are not run files: one kind, whatever each was
        return NOT_A_RUN_WHY
    r = _PATHLIKE.sub("…", fmt.text(reason))
    return _NUMBER.sub("N", _QUOTED.sub("'…'", r))


def skipped_table(a) -> Table | None:
    """Skipped files (written beside results, carrying none), counted by reason; provenance.csv
    lists each."""
    loaded = a.loaded
    if not loaded.skipped:
        return None
    root = _files_root(a)
    groups: dict[str, list] = {}
    for s in loaded.skipped:
        groups.setdefault(reason_kind(s.reason), []).append(s)
    rows = []
    for kind, items in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        folders = sorted({_folder_and_name(s.path, root)[0] for s in items})
        example = _rel(items[0].path, root)
        why = kind if kind == NOT_A_RUN_WHY else items[0].reason
        rows.append(
            {
                "Why skipped": fmt.shortened(why, 160),
                "Files": fmt.count(len(items)),
                "Folders": fmt.count(len(folders)),
                "For example": example,
            }
        )
    return Table(
        pd.DataFrame(rows),
        f"Skipped files (no results in them), {fmt.counted(len(loaded.skipped), 'file')} "
        "counted by reason, with one of each (provenance.csv beside this report lists every one).",
        kind="appendix",
        small=True,
        mono=("For example",),
        numeric=("Files", "Folders"),
        key="skipped",
        widths={"Why skipped": "52%"},
    )


#: build plumbing, not choices: the staging folder the build writes into before it swaps the
#: report in, and the temporary file of the analysis it hands the notebook
_PLUMBING = frozenset({"out", "analysis_file"})


def shown_path(path) -> str:
    """An input path as the report shows it: relative to the folder the build ran in (this
    machine's absolute paths are not the reader's business, issue 42); a path far outside it by
    its last two parts."""
    import os

    text = str(path)
    try:
        relative = os.path.relpath(text)
    except ValueError:  # another drive (Windows)
        relative = text
    if relative.startswith(os.pardir + os.sep + os.pardir + os.sep):
        parts = pathlib.PurePath(text).parts
        return os.path.join("…", *parts[-2:])
    return relative


def parameters_table(a, params: dict) -> Table:
    """The parameters this report was built with (papermill parameters): those that take effect;
    input paths relative (`shown_path`)."""
    rows = []
    th = set(a.options.thresholds.as_dict())
    for k, v in params.items():
        if k in th or k in _PLUMBING:
            continue
        if k in ("runs", "store") and v:
            v = [shown_path(x) for x in v] if isinstance(v, (list, tuple)) else shown_path(v)
        if isinstance(v, (list, tuple)):
            v = ", ".join(str(x) for x in v)
        rows.append({"Parameter": str(k), "Value": "none" if v is None else str(v)})
    return Table(
        pd.DataFrame(rows, columns=["Parameter", "Value"]),
        "Parameters of this build (the executed notebook records them too).",
        kind="appendix",
        small=True,
        mono=("Parameter",),
        key="parameters",
    )


def thresholds_table(a) -> Table:
    """Every threshold: value used, default and why."""
    used = a.options.thresholds.as_dict()
    rows = []
    for name, default, why in Thresholds.describe():
        v = used.get(name, default)
        rows.append({"Threshold": name, "Used": fmt.text(v), "Default": fmt.text(default), "Why this default": why})
    return Table(
        pd.DataFrame(rows),
        "Thresholds used by the statistics and the flags, with their defaults and the reason for each. The "
        f"noise bands that took effect: {band_words(a.options.thresholds)} (noise, noise_p90, noise_p95, noise_p99).",
        kind="appendix",
        small=True,
        mono=("Threshold",),
        numeric=("Used", "Default"),
        key="thresholds",
        widths={"Why this default": "62%"},
    )


PACKAGES = (
    "benchreport",
    "numpy",
    "pandas",
    "scipy",
    "statsmodels",
    "pingouin",
    "msgspec",
    "matplotlib",
    "seaborn",
    "papermill",
    "nbconvert",
    "nbformat",
    "ipykernel",
    "weasyprint",
    "markupsafe",
    "mistune",
)


def packages_table() -> Table:
    """Python and the versions of the packages that computed and rendered this report."""
    rows = [{"Package": "python", "Version": platform.python_version()}]
    for p in PACKAGES:
        try:
            v = metadata.version(p)
        except metadata.PackageNotFoundError:
            v = "not installed"
        rows.append({"Package": p, "Version": v})
    return Table(
        pd.DataFrame(rows),
        "Software versions.",
        kind="appendix",
        small=True,
        mono=("Package", "Version"),
        key="packages",
    )
