"""A report table as Markdown or LaTeX text, and the columns and rows `benchreport table` keeps.

Cells are untrusted text (seat names, notes from run files): every writer escapes them. The
LaTeX writer fits a page by default: the group column (the seat) becomes a full-width row
above its rows, long text columns wrap (``p`` columns sized from their longest cell), a table
of more than `LONGTABLE_ROWS` rows is a ``longtable`` that breaks across pages, and
`HEADLINE_COLUMNS` leaves the detail columns out unless asked for (``--columns all``).
The environments (``tabular`` or ``longtable`` with booktabs rules, its caption and repeated
head) are written by pandas' ``Styler.to_latex``; the cells are escaped here first.
"""

from __future__ import annotations

import re
from typing import Sequence

import pandas as pd

__all__ = [
    "markdown_table",
    "latex_escape",
    "latex_table",
    "select_columns",
    "select_rows",
    "HEADLINE_COLUMNS",
    "LONGTABLE_ROWS",
    "LINE_PT",
    "SIZES",
    "LATEX_PACKAGES",
    "WIDTHS_PT",
    "FLOAT_LINES",
    "headline",
]


def _cell_text(v) -> str:
    from benchreport import format as fmt

    return fmt.text(v) if not isinstance(v, str) else v


# --- Markdown ---------------------------------------------------------------------------------
#: what a Markdown renderer would read as markup in a cell: HTML (as entities, so `<script>` from a
#: run file is text, never an element), then links, images, code spans and emphasis (a backslash)
_MD_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_MD_PUNCT = set("\\|[]`*~")


def _md_escape(v) -> str:
    s = "".join(_MD_HTML.get(ch) or (f"\\{ch}" if ch in _MD_PUNCT else ch) for ch in _cell_text(v))
    return " ".join(s.split("\n")).replace("\r", " ")


def markdown_table(df: pd.DataFrame, caption: str | None = None, numeric: Sequence[str] = ()) -> str:
    """A GitHub/pandoc pipe table. Cells are untrusted text (seat names, notes from run files):
    `<`, `>` and `&` become entities (CommonMark passes raw HTML through, and a rendered
    `<script>` runs), and `|`, backslash, brackets, backticks, `*` and `~` are
    backslash-escaped (CommonMark 0.31, "Backslash escapes"), so no cell makes a link, an image,
    code or a new column; line breaks become spaces. `numeric` columns are right-aligned (``---:``).

    Cells are text (`Table.data` holds display strings); the caption follows in pandoc's
    ``Table: ...`` form. Written here rather than by ``DataFrame.to_markdown``: that needs
    `tabulate` (not a dependency of its own here) and the escaping would still be ours.
    """
    cols = [_md_escape(c) for c in df.columns]
    rule = ["---:" if c in numeric else "---" for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join(rule) + "|"]
    lines += ["| " + " | ".join(_md_escape(v) for v in row) + " |" for row in df.itertuples(index=False)]
    if caption:
        lines += ["", "Table: " + _md_escape(caption)]
    return "\n".join(lines) + "\n"


# --- LaTeX ------------------------------------------------------------------------------------
#: LaTeX's special characters, then the typographic characters the report's tables use
_LATEX = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "−": "$-$",
    "–": "--",
    "—": "---",
    "±": r"$\pm$",
    "×": r"$\times$",
    "≤": r"$\le$",
    "≥": r"$\ge$",
    "…": r"\ldots{}",
    "≈": r"$\approx$",
    "·": r"$\cdot$",
    "\n": " ",
    "\r": " ",
    "\t": " ",
}

#: the packages the LaTeX tables need in the document's preamble
LATEX_PACKAGES = ("booktabs", "array", "longtable")

#: more body rows than this and the LaTeX table is a longtable (it breaks across pages)
LONGTABLE_ROWS = 40

#: the text width the LaTeX table is fitted to, in points: an article's at 10 pt (345 pt); a
#: wider page only leaves more room (tests/test_cli_writers_options.py compiles it and checks)
LINE_PT = 345.0

#: the widths `latex_table(width=...)` fits, in points: a column of a two-column paper and the text
#: width there, the narrowest of the common classes (article two-column on A4: \columnwidth 221 pt,
#: \textwidth 452 pt, as pdflatex gives them; on letter 229.5 and 469 pt; IEEEtran's and acmart's
#: are wider): a table fitted to them fits any of these pages
WIDTHS_PT = {"column": 221.0, "text": 452.0}

#: at most this many lines of type in one float of `latex_table(width=...)` (a longer table is
#: several floats: a float cannot break across pages or columns, and longtable cannot be used in
#: two columns); a two-column article's column holds about 70 lines of \footnotesize
FLOAT_LINES = 44

#: the type sizes tried, largest first, with their size and \tabcolsep in points: the first
#: at which the columns fit (each at least its longest unbreakable word) is used
SIZES = (("small", 9.0, 6.0), ("footnotesize", 8.0, 4.0), ("scriptsize", 7.0, 3.0))

#: the width of an average character, in ems of its type size (Computer Modern, Latin Modern),
#: erring wide: the compile test (tests/test_cli_writers_options.py) finds no overfull line with it
_EM = 0.55

#: a wrapping column's least width over its longest word's estimate (a word must never stick out)
_WORD_ROOM = 1.15

#: the share of the text width the columns are fitted to (a little room for rounding)
_MARGIN = 0.97

#: a text column no wider than this (in characters) is set on one line (``l``)
_SHORT_TEXT = 12

#: a wrapping column is widened up to its longest cell, at most this many characters
_MAX_WRAP = 60

#: a word longer than this may break after ``/ _ . - : = @ ,`` (a path, a flag code, a seat id)
_LONG_WORD = 12
_BREAK_AFTER = set("/_.-:=@,")

#: a group row (the seat) longer than this is shortened in the middle
_GROUP_CHARS = 70

#: the columns a LaTeX table shows unless `--columns` says otherwise: the headline figures,
#: not the detail (passes, n, per-pass values, digests), which CSV and Markdown keep (Table 1,
#: `results`, is the headline summary already: every column)
HEADLINE_COLUMNS = {
    "all-cells": (
        "Seat",
        "Metric",
        "Workload",
        "Conc.",
        "Stat.",
        "Estimate",
        "Unit",
        "mean",
        "p50",
        "p90",
        "p99",
        "CI",
    ),
    "comparisons": ("Candidate", "Comparison", "Metric", "Workload", "Conc.", "Stat.", "Ratio", "CI", "Verdict"),
    "all-comparisons": ("Candidate", "Comparison", "Metric", "Workload", "Conc.", "Stat.", "Ratio", "CI", "Verdict"),
    "runs": ("Seat", "Date", "Harness", "Passes", "Cells"),
    "seats": ("Seat", "Role", "Model", "Quantisation", "Placement"),
    "exam-deltas": ("Comparison", "Benchmark", "Difference", "CI", "p", "p (Holm)", "MDE"),
    "files": ("Folder", "File", "Format", "Harness and version"),
    "provenance": ("status", "path", "format", "reason"),
}


def latex_escape(text: str, *, breaks: bool = False) -> str:
    """Text safe in a LaTeX document (every special character escaped, one line). `breaks`: a
    word longer than `_LONG_WORD` may break after ``/ _ . - : = @ ,`` (``\allowbreak``)."""
    out = []
    for word in re.split(r"(\s+)", str(text)):
        long = breaks and len(word) > _LONG_WORD
        for i, ch in enumerate(word):
            out.append(_LATEX.get(ch, ch))
            if long and ch in _BREAK_AFTER and i < len(word) - 1:
                out.append(r"\allowbreak{}")
    return "".join(out)


def _is_ci(column: str) -> bool:
    return column.endswith("CI")


def headline(df: pd.DataFrame, key: str) -> list[str]:
    """The table's headline columns (`HEADLINE_COLUMNS`) that it has, in its own order; all when
    it has none listed."""
    wanted = HEADLINE_COLUMNS.get(key)
    if not wanted:
        return list(df.columns)
    lower = {w.lower() for w in wanted}
    keep = [c for c in df.columns if str(c).lower() in lower or ("CI" in wanted and _is_ci(str(c)))]
    return keep or list(df.columns)


def _chars(text: str) -> float:
    """The width of `text` in average characters (`_EM`), roughly (capitals wider, i/l/. narrower)."""
    return sum(1.4 if ch.isupper() or ch in "mwMW%" else 0.6 if ch in "il.,:;|!'()[]" else 1.0 for ch in text)


def _words(text: str) -> list[str]:
    """The pieces a line may not break inside (`latex_escape` with breaks)."""
    pieces = []
    for word in str(text).split():
        if len(word) > _LONG_WORD:
            pieces += re.findall(r"[^/_.\-:=@,]*[/_.\-:=@,]?", word)
        else:
            pieces.append(word)
    return pieces or [""]


#: a number column's heading is set on lines of about this many characters (its figures never wrap)
_HEADING_CHARS = 14


def _stacked(heading: str) -> list[str]:
    """A number column's heading as lines of whole words, each about `_HEADING_CHARS` long at most
    ('Decode per stream mean (tok/s)' -> 'Decode per', 'stream mean', '(tok/s)')."""
    lines: list[str] = []
    for word in str(heading).split():
        if lines and len(lines[-1]) + 1 + len(word) <= _HEADING_CHARS:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines or [""]


_INTERVAL = re.compile(r" (?=[\[{(])")


def _figure_lines(text: str) -> list[str]:
    """A number cell as lines: a figure and its interval ('98.9 [95.7, 102.1]') on two."""
    return _INTERVAL.split(str(text), maxsplit=1)


def _column_specs(df: pd.DataFrame, numeric: Sequence[str], line_pt: float = LINE_PT) -> tuple[list[str], tuple, bool]:
    """The tabular column types, the type size (a row of `SIZES`), and whether the table fits the line: numbers
    right-aligned, short text on one line, long text in ``p`` columns (ragged right) that share
    what the others leave of the line, each at least its longest unbreakable word."""
    cells = {
        c: (_stacked(c) + [x for v in df[c] for x in _figure_lines(_cell_text(v))])
        if c in numeric
        else [str(c)] + [_cell_text(v) for v in df[c]]
        for c in df.columns
    }
    natural = {c: max(_chars(t) for t in cells[c]) for c in df.columns}
    fixed = {c: natural[c] for c in df.columns if c in numeric or max(map(len, cells[c])) <= _SHORT_TEXT}
    least = {c: _WORD_ROOM * max(_chars(w) for t in cells[c] for w in _words(t)) for c in df.columns if c not in fixed}
    for size, pt, sep in SIZES:  # noqa: B007 - the size the loop stops at is returned
        line = (line_pt * _MARGIN - len(df.columns) * 2 * sep) / (_EM * pt)
        left = line - sum(fixed.values())
        if left >= sum(least.values()):
            break
    fits = left >= sum(least.values())
    width = dict(least)
    grow = {c: min(natural[c], _MAX_WRAP) - least[c] for c in least if min(natural[c], _MAX_WRAP) > least[c]}
    spare = left - sum(least.values())
    for c in sorted(grow, key=lambda c: (grow[c], str(c))):  # the narrowest first: as few wrap as can
        if grow[c] <= spare:
            width[c] += grow.pop(c)
            spare -= width[c] - least[c]
    for c, g in grow.items():  # the rest share what is left
        width[c] += max(0.0, min(g, spare * g / sum(grow.values())))
    specs = []
    for c in df.columns:
        if c in numeric:
            specs.append("r")
        elif c in fixed or width[c] >= natural[c]:
            specs.append("l")
        else:
            specs.append(r">{\raggedright\arraybackslash}p{%.3f\linewidth}" % (width[c] * _EM * pt / line_pt))
    return specs, (size, pt, sep), fits


def latex_table(
    df: pd.DataFrame,
    caption: str | None = None,
    numeric: Sequence[str] = (),
    *,
    group: str | None = None,
    longtable: bool | None = None,
    width: str | None = None,
) -> str:
    r"""A booktabs table that fits an article's text width (`LINE_PT`): numeric columns
    right-aligned, long text wrapped (long words may break after ``/ _ . -``), in \small type,
    or smaller where that is what fits (`SIZES`); every cell escaped (`latex_escape`). `group`:
    a column whose value becomes a full-width row above its rows (not a column). More than
    `LONGTABLE_ROWS` rows (or `longtable`) make a ``longtable`` with its caption and a head
    repeated on each page; otherwise a ``tabular`` with the caption as a comment above it, for
    the author's own ``table`` environment. Needs `LATEX_PACKAGES` in the preamble. A table
    whose columns cannot fit even in the smallest size says so in a comment at its top.

    `width`: ``"column"`` or ``"text"`` for a two-column paper (`WIDTHS_PT`): whole floats
    (``table``, or ``table*`` across the page) with their caption, fitted to that width; the
    columns that do not fit beside each other are split into several tables, each repeating the
    leading text columns, and more than `FLOAT_LINES` lines into several floats. ValueError when
    even the leading columns and one more cannot fit.
    """
    if width is not None:
        return _floats(df, caption, numeric, group, width)
    groups, df, numeric = _split_group(df, numeric, group)
    long = len(df) > LONGTABLE_ROWS if longtable is None else longtable
    caption = " ".join(str(caption or "").split())
    lines, size, fits = _tabular(
        df, numeric, groups, LINE_PT, long, latex_escape(caption) if long and caption else None
    )
    head = ["% needs \\usepackage{" + ",".join(LATEX_PACKAGES if long else LATEX_PACKAGES[:2]) + "}"]
    if not fits:
        head.append("% wider than a page even in \\scriptsize: choose fewer columns (benchreport table --columns)")
    if caption and not long:
        head.append("% " + latex_escape(caption))
    name, _, sep = size
    open_, close = (r"\begingroup\%s" % name, r"\endgroup") if long else (r"{\%s%%" % name, "}")
    spacing = [] if sep == 6.0 else [r"\setlength{\tabcolsep}{%gpt}%%" % sep]
    return "\n".join([*head, open_, *spacing, *lines, close]) + "\n"


def _split_group(df: pd.DataFrame, numeric: Sequence[str], group: str | None):
    """(the group column's cells or None, the frame without it, its numeric columns)."""
    groups = None
    if group is not None and group in df.columns:
        groups = df[group].map(_cell_text).tolist()
        df = df.drop(columns=[group])
    return groups, df, [c for c in df.columns if c in numeric]


def _tabular(df, numeric, groups, line_pt: float, long: bool, caption: str | None, group_chars: int = _GROUP_CHARS):
    """The lines of one tabular (or longtable) of `df` fitted to `line_pt`, its size (a row of
    `SIZES`) and whether it fits."""
    from benchreport import format as fmt

    specs, size, fits = _column_specs(df, numeric, line_pt)
    styler = _escaped(df, numeric).style.hide(axis="index")
    text = styler.to_latex(
        hrules=True,
        column_format="".join(specs),
        environment="longtable" if long else None,
        caption=caption,
    )
    lines = text.rstrip("\n").split("\n")
    if groups is not None:
        lines = _with_group_rows(lines, groups, len(specs), long, fmt, group_chars)
    return lines, size, fits


def _floats(df: pd.DataFrame, caption, numeric: Sequence[str], group: str | None, width: str) -> str:
    """`latex_table(width=...)`: the table as floats that fit `WIDTHS_PT[width]`."""
    if width not in WIDTHS_PT:
        raise ValueError(f"`width` must be one of {', '.join(WIDTHS_PT)}; got {width!r}")
    line_pt = WIDTHS_PT[width]
    groups, df, numeric = _split_group(df, numeric, group)
    parts = _column_parts(df, numeric, line_pt, width)
    caption = latex_escape(" ".join(str(caption or "").split()))
    env = "table" if width == "column" else "table*"
    out = [
        "% needs \\usepackage{" + ",".join(LATEX_PACKAGES[:2]) + "}",
        f"% fitted to \\{width}width of a two-column page ({line_pt:g} pt or wider)"
        + (f"; its columns split into {len(parts)} tables" if len(parts) > 1 else ""),
    ]
    n = 0
    for columns in parts:
        sub = [c for c in numeric if c in columns]
        specs, size, _ = _column_specs(df[columns], sub, line_pt)
        for rows in _row_chunks(df[columns], groups, specs, size, line_pt):
            part_groups = [groups[i] for i in rows] if groups is not None else None
            lines, (name, _, sep), _ = _tabular(df[columns].iloc[rows], sub, part_groups, line_pt, False, None, 0)
            n += 1
            title = caption if n == 1 else (caption + " (continued)" if caption else "(continued)")
            spacing = [] if sep == 6.0 else [r"\setlength{\tabcolsep}{%gpt}%%" % sep]
            out += [
                r"\begin{%s}[tbp]" % env,
                r"\centering",
                *([r"\caption{%s}" % title] if title else []),
                r"{\%s%%" % name,
                *spacing,
                *lines,
                "}",
                r"\end{%s}" % env,
            ]
    return "\n".join(out) + "\n"


def _row_chunks(df: pd.DataFrame, groups, specs: list[str], size, line_pt: float) -> list[list[int]]:
    """The row numbers of each float: as many rows as `FLOAT_LINES` lines of type hold, a row
    taking as many lines as its longest wrapped cell (`specs`' ``p`` widths) or its interval, a
    group row (the seat) two."""
    pt = size[1]
    widths = [
        float(m.group(1)) * line_pt if (m := re.search(r"p\{([\d.]+)\\linewidth\}", sp)) else None for sp in specs
    ]
    chunks: list[list[int]] = [[]]
    used, last = 0.0, None
    for i in range(len(df)):
        need = 1.0
        for v, w in zip(df.iloc[i], widths):
            text = _cell_text(v)
            need = max(need, len(_figure_lines(text)) if w is None else -(-_chars(text) * _EM * pt // w))
        if groups is not None and groups[i] != last:
            need += 2.5
            last = groups[i]
        if chunks[-1] and used + need > FLOAT_LINES:
            chunks.append([])
            used = 0.0
        chunks[-1].append(i)
        used += need
    return chunks if chunks[0] else [list(range(len(df)))]


#: number columns that say which row it is (repeated in each table a wide table is split into)
KEY_COLUMNS = {"Conc.", "Stat.", "Date", "Pass"}


def _column_parts(df: pd.DataFrame, numeric: Sequence[str], line_pt: float, width: str) -> list[list]:
    """The columns of each table `df` is split into to fit `line_pt`: all in one when they fit;
    otherwise each table holds the leading text columns (what a row is) and as many of the others
    as fit beside them. ValueError when the leading columns and one more cannot fit."""
    columns = list(df.columns)
    if _column_specs(df, numeric, line_pt)[2]:
        return [columns]
    lead = []
    for c in columns:
        if (c in numeric and str(c) not in KEY_COLUMNS) or len(lead) == len(columns) - 1:
            break
        lead.append(c)
    lead = lead or columns[:1]
    parts: list[list] = []
    for c in columns:
        if c in lead:
            continue
        if parts and _column_specs(df[parts[-1] + [c]], numeric, line_pt)[2]:
            parts[-1].append(c)
            continue
        if not _column_specs(df[lead + [c]], numeric, line_pt)[2]:
            raise ValueError(
                f"the columns {', '.join(map(str, lead + [c]))} do not fit \\{width}width ({line_pt:g} pt) "
                "even in \\scriptsize: choose shorter --columns" + (", or --width text" if width == "column" else "")
            )
        parts.append(lead + [c])
    return parts or [lead]


def _escaped(df: pd.DataFrame, numeric: Sequence[str] = ()) -> pd.DataFrame:
    """Every heading and cell escaped; headings that would collide made distinct by a number; a
    number column's heading stacked on lines (`_stacked`, a nested right-aligned tabular)."""
    seen: dict[str, int] = {}
    data = {}
    for c in df.columns:
        lines = _stacked(c) if c in numeric else [str(c)]
        name = (
            latex_escape(c)
            if len(lines) == 1
            else r"\begin{tabular}[b]{@{}r@{}}" + r"\\{}".join(latex_escape(x) for x in lines) + r"\end{tabular}"
        )
        seen[name] = seen.get(name, 0) + 1
        data[name if seen[name] == 1 else f"{name} ({seen[name]})"] = [
            _figure_cell(_cell_text(v)) if c in numeric else latex_escape(_cell_text(v), breaks=True) for v in df[c]
        ]
    return pd.DataFrame(data)


def _figure_cell(text: str) -> str:
    """A number cell escaped, its interval on a second line (a nested right-aligned tabular)."""
    lines = _figure_lines(text)
    if len(lines) == 1:
        return latex_escape(text, breaks=True)
    return r"\begin{tabular}[t]{@{}r@{}}" + r"\\{}".join(latex_escape(x) for x in lines) + r"\end{tabular}"


def _with_group_rows(
    lines: list[str], groups: list[str], n_cols: int, long: bool, fmt, chars: int = _GROUP_CHARS
) -> list[str]:
    """Styler's lines with a full-width row (``\\multicolumn``) above each group's first row."""
    start = lines.index(r"\endlastfoot" if long else r"\midrule", 0) + 1
    body = lines[start : start + len(groups)]
    if len(body) != len(groups) or not all(ln.endswith(r"\\") for ln in body):
        raise RuntimeError("pandas' Styler.to_latex wrote an unexpected layout: one line per row expected")
    out, last = lines[:start], None
    for g, row in zip(groups, body):
        if g != last:
            if last is not None:
                out.append(r"\addlinespace")
            label = (
                r"\parbox[t]{0.95\linewidth}{\raggedright\textit{%s}}"
                % latex_escape(fmt.short(g, _GROUP_CHARS), breaks=True)
                if chars == 0  # wrapped within the line (a float's column) rather than shortened
                else r"\textit{%s}" % latex_escape(fmt.short(g, chars))
            )
            out.append(r"\multicolumn{%d}{@{}l}{%s} \\" % (n_cols, label))
            last = g
        out.append(row)
    return out + lines[start + len(groups) :]


# --- choosing columns and rows ----------------------------------------------------------------
def select_columns(df: pd.DataFrame, wanted: Sequence[str]) -> list[str]:
    """The table's columns named in `wanted` (case-insensitive, in the order given; ``all`` for
    every one); ValueError naming the columns there are when one is not among them."""
    if [w.strip().lower() for w in wanted] == ["all"]:
        return list(df.columns)
    by_name = {str(c).lower(): c for c in df.columns}
    out, unknown = [], []
    for w in wanted:
        c = by_name.get(w.strip().lower())
        (out.append(c) if c is not None else unknown.append(w))
    if unknown:
        raise ValueError(
            f"--columns: no column {', '.join(map(repr, unknown))} in this table; its columns are: "
            f"{', '.join(map(str, df.columns))} (or all)"
        )
    return list(dict.fromkeys(out))


_RANGE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+))?\s*$")


def select_rows(df: pd.DataFrame, wanted: Sequence[str]) -> pd.DataFrame:
    """The rows `wanted` keeps: each ``COLUMN=VALUE[|VALUE...]`` keeps the rows whose COLUMN
    shows one of the values (case-insensitive; several such filters all apply), then
    ``FIRST-LAST`` (or ``N``) keeps those row numbers, counted from 1. ValueError when a
    filter is malformed, names a column the table does not have, or matches no row (it names
    the values there are: a typo, not an empty table)."""
    by_name = {str(c).lower(): c for c in df.columns}
    ranges = []
    for w in wanted:
        m = _RANGE.match(w)
        if m:
            first, last = int(m.group(1)), int(m.group(2) or m.group(1))
            if first < 1 or last < first:
                raise ValueError(f"--rows: expected FIRST-LAST with 1 <= FIRST <= LAST, got {w!r}")
            ranges.append((first, last))
            continue
        column, sep, values = w.partition("=")
        col = by_name.get(column.strip().lower())
        if not sep or col is None:
            raise ValueError(
                f"--rows: expected COLUMN=VALUE or FIRST-LAST, got {w!r}; the columns are: "
                f"{', '.join(map(str, df.columns))}"
            )
        keep = {v.strip().lower() for v in values.split("|")}
        kept = df[df[col].map(lambda v: _cell_text(v).strip().lower() in keep)]
        if kept.empty and len(df):
            shown = list(dict.fromkeys(_cell_text(v) for v in df[col]))
            raise ValueError(
                f"--rows: no row shows {values!r} in {col}; it shows: "
                f"{', '.join(map(repr, shown[:12]))}{' ...' if len(shown) > 12 else ''}"
            )
        df = kept
    for first, last in ranges:
        df = df.iloc[first - 1 : last]
    return df
