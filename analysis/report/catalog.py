"""The report's figures and tables by name, for one of them without a full build.

`benchreport figure NAME` and `benchreport table NAME` (benchreport.cli) and the exploration
notebook look them up here. Names are the keys the report gives them (``throughput``,
``results``); the functions are the report's own section functions, so a figure or table
got this way is the one the report shows, drawn from the same analysis.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pandas as pd

from benchreport.report import sections

__all__ = ["Entry", "FIGURES", "TABLES", "figure", "table", "figure_numbers", "markdown_table", "latex_table",
           "table_text", "TABLE_FORMATS", "FIGURE_SUFFIXES"]


@dataclass(frozen=True)
class Entry:
    """One figure or table of the report: its name, what it shows and the section function."""

    name: str
    what: str
    make: Callable


def _faults_table(a):
    return sections.faults(a)[1]


#: the report's figures in the order the report shows them (so Figure N is the Nth drawn)
FIGURES = {e.name: e for e in (
    Entry("throughput", "aggregate throughput against concurrency, per seat", sections.throughput_figure),
    Entry("per-stream", "per-stream decode rate against concurrency", sections.per_stream_figure),
    Entry("ttft", "time to first token against concurrency", sections.ttft_figure),
    Entry("single-stream", "single-stream decode rate of every seat and workload", sections.single_stream_figure),
    Entry("per-pass", "values of each pass in the order measured", sections.per_pass_figure),
    Entry("ratios", "candidate/baseline ratios with their confidence intervals", sections.ratio_figure),
    Entry("exams", "exam deltas with their confidence intervals", sections.exam_figure),
    Entry("history", "each seat's cells across dates, regressions and level shifts marked (section 8)",
          sections.history_panels_figure),
)}

#: the report's tables in the order the report shows them
TABLES = {e.name: e for e in (
    Entry("seats", "seats and their setup", sections.seats_table),
    Entry("runs", "runs per seat: dates, harnesses, passes", sections.runs_table),
    Entry("results", "Table 1: measured results per seat and cell", sections.results_table),
    Entry("comparisons", "comparisons against the incumbent (or --baseline)", sections.comparison_table),
    Entry("exam-scores", "exam scores per seat", sections.exam_scores_table),
    Entry("exam-deltas", "exam deltas with exact tests", sections.exam_deltas_table),
    Entry("faults", "faults, crashes and defects recorded in the runs", _faults_table),
    Entry("history", "dated regressions and improvements, newest first (section 8)", sections.history_table),
    Entry("all-cells", "appendix: every cell", sections.all_cells_table),
    Entry("all-comparisons", "appendix: every comparison", sections.all_comparisons_table),
    Entry("flags", "appendix: every flag, its message whole", sections.flags_table),
    Entry("files", "appendix: the files read, by folder", sections.files_table),
    Entry("refused", "appendix: refused files and why", sections.refused_table),
    Entry("skipped", "appendix: skipped files, counted by reason", sections.skipped_table),
    Entry("provenance", "every file read, refused or skipped, with its SHA-256 (provenance.csv)",
          sections.provenance_table),
    Entry("thresholds", "appendix: the thresholds used", sections.thresholds_table),
)}

TABLE_FORMATS = ("csv", "md", "tex")
FIGURE_SUFFIXES = (".png", ".svg", ".pdf")


def _entry(catalog: dict, name: str, kind: str) -> Entry:
    if name not in catalog:
        raise KeyError(f"no {kind} named {name!r}; the report's {kind}s are: {', '.join(catalog)}")
    return catalog[name]


def figure(a, name: str):
    """The report's figure `name` (a `sections.FigureBlock`), or None when the data hold nothing to draw.

    Raises KeyError naming the figures there are when `name` is not one of them.
    """
    return _entry(FIGURES, name, "figure").make(a)


def table(a, name: str):
    """The report's table `name` (a `sections.Table`), or None when the data hold no such rows."""
    return _entry(TABLES, name, "table").make(a)


def figure_numbers(a) -> dict[str, int]:
    """Figure N of this data's report for each figure drawn (draws every figure once)."""
    out, n = {}, 0
    for name, e in FIGURES.items():
        if e.make(a) is not None:
            n += 1
            out[name] = n
    return out


# --- table text ----------------------------------------------------------------------------
def _cell_text(v) -> str:
    from benchreport import format as fmt

    return fmt.text(v) if not isinstance(v, str) else v


#: what a Markdown renderer would read as markup in a cell: HTML (as entities, so `<script>` from a
#: run file is text, never an element), then links, images, code spans and emphasis (a backslash)
_MD_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_MD_PUNCT = set("\\|[]`*~")


def markdown_table(df: pd.DataFrame, caption: str | None = None) -> str:
    """A GitHub/pandoc pipe table. Cells are untrusted text (seat names, notes from run files):
    `<`, `>` and `&` become entities (CommonMark passes raw HTML through, and a rendered
    `<script>` runs), and `|`, backslash, brackets, backticks, `*` and `~` are
    backslash-escaped (CommonMark 0.31, "Backslash escapes"), so no cell makes a link, an image,
    code or a new column; line breaks become spaces.

    Cells are text (`Table.data` holds display strings); the caption follows in pandoc's
    ``Table: ...`` form.
    """
    def esc(v) -> str:
        s = "".join(_MD_HTML.get(ch) or (f"\\{ch}" if ch in _MD_PUNCT else ch) for ch in _cell_text(v))
        return " ".join(s.split("\n")).replace("\r", " ")

    cols = [esc(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    lines += ["| " + " | ".join(esc(v) for v in row) + " |" for row in df.itertuples(index=False)]
    if caption:
        lines += ["", "Table: " + esc(caption)]
    return "\n".join(lines) + "\n"


#: LaTeX's special characters, then the typographic characters the report's tables use
_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
          "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
          "<": r"\textless{}", ">": r"\textgreater{}",
          "−": "$-$", "–": "--", "—": "---", "±": r"$\pm$", "×": r"$\times$", "≤": r"$\le$", "≥": r"$\ge$",
          "…": r"\ldots{}", "≈": r"$\approx$", "·": r"$\cdot$", "\n": " ", "\r": " ", "\t": " "}


def latex_escape(text: str) -> str:
    """Text safe in a LaTeX document (every special character escaped, one line)."""
    return "".join(_LATEX.get(ch, ch) for ch in str(text))


def latex_table(df: pd.DataFrame, caption: str | None = None, numeric=()) -> str:
    """A booktabs ``tabular`` (numeric columns right-aligned), every cell escaped; the caption
    as a comment above it, for the author's own ``table`` environment."""
    align = "".join("r" if c in numeric else "l" for c in df.columns)
    lines = []
    if caption:
        lines.append("% " + latex_escape(caption))
    lines += [r"\begin{tabular}{" + align + "}", r"\toprule",
              " & ".join(latex_escape(c) for c in df.columns) + r" \\", r"\midrule"]
    lines += [" & ".join(latex_escape(_cell_text(v)) for v in row) + r" \\" for row in df.itertuples(index=False)]
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def _flat(t) -> pd.DataFrame:
    """A table's rows with its group column (shown as a row above its rows) as a first column."""
    df = t.data.copy()
    if t.group and t.group in df.columns:
        df = df[[t.group] + [c for c in df.columns if c != t.group]]
        df = df.rename(columns={t.group: t.group_label or t.group.capitalize()})
    return df


def table_text(t, fmt: str) -> str:
    """A report table (`sections.Table`) as CSV, Markdown or LaTeX text."""
    if fmt not in TABLE_FORMATS:
        raise ValueError(f"`fmt` must be one of {', '.join(TABLE_FORMATS)}; got {fmt!r}")
    df = _flat(t)
    if fmt == "csv":
        from benchreport.pipeline import neutralise_cell

        return df.map(neutralise_cell).to_csv(index=False, lineterminator="\n")
    caption = " ".join(str(t.caption).split())
    if fmt == "md":
        return markdown_table(df, caption)
    return latex_table(df, caption, numeric=t.numeric)
