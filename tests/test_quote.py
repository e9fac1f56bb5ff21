"""A measured figure in the report's sentences comes from one function that takes a row id (issue 42).

`report.model.sections.quote` finds a row of the analysis's cells or comparisons by its id and
formats one of its columns. Checked here against the tables as `benchreport analyse --out` writes
them (read with the csv module, not through the analysis's frames), and, over the whole of
`report/model/sections/`, that no other function formats a measured column itself but the
functions that build tables.
"""

from __future__ import annotations

import ast
import csv
import subprocess
import sys
from pathlib import Path

import pytest

from benchreport import format as fmt
from benchreport.load import load
from benchreport.pipeline import analyse
from benchreport.report.model.sections import headline, quote

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "data" / "example"
SECTIONS = ROOT / "analysis" / "benchreport" / "report" / "model" / "sections"

#: columns that hold a measured figure (or its interval)
MEASURED = {
    "estimate",
    "ratio",
    "ci_low",
    "ci_high",
    "within_low",
    "within_high",
    "baseline_estimate",
    "candidate_estimate",
}
#: benchreport.format's functions that turn a figure into text
FORMATTERS = {"num", "ci", "ratio", "ratio3", "pct", "value_with_unit", "series", "signed"}
#: functions that format measured columns into a table's cells, not into a sentence
TABLE_BUILDERS = {
    ("agreement.py", "agreement_table"),
    ("cellview.py", "_as_printed"),
    ("comparisons.py", "_comparison_display"),
    ("quote.py", "figure"),
    ("quote.py", "interval"),
}


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    out = tmp_path_factory.mktemp("quote") / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "benchreport", "analyse", str(EXAMPLE), "--out", str(out), "--quiet"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return analyse(load([str(EXAMPLE)])), out / "tables"


def _csv_rows(path: Path) -> list[dict]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def test_every_row_of_the_cells_and_comparisons_has_an_id_of_its_own(example):
    a, tables = example
    for table in ("cells", "comparisons"):
        rows = _csv_rows(tables / f"{table}.csv")
        assert rows, table
        ids = [quote.row_id(table, r) for r in rows]
        assert len(set(ids)) == len(ids), f"{table}: {len(ids) - len(set(ids))} ids name several rows"


def test_a_quoted_figure_is_the_tables_row_at_the_reports_rounding(example):
    a, tables = example
    checked = 0
    for table, columns in (("cells", ("estimate", "ci_low", "ci_high")), ("comparisons", ("ratio", "ci_low"))):
        for r in _csv_rows(tables / f"{table}.csv"):
            rid = quote.row_id(table, r)
            for column in columns:
                written = r[column]
                expected = fmt.num(float(written)) if written else "–"
                assert quote.figure(a, rid, column) == expected, (str(rid), column, written)
                checked += 1
    assert checked > 100


def test_a_row_id_that_names_no_row_is_an_error_not_a_guess(example):
    a, tables = example
    r = dict(_csv_rows(tables / "cells.csv")[0])
    r["seat"] = "no-such-seat"
    with pytest.raises(LookupError, match="names 0 rows"):
        quote.figure(a, quote.row_id("cells", r), "estimate")
    with pytest.raises(ValueError, match="no table named"):
        quote.row_id("passes", r)


def test_the_headline_quotes_its_rows(example):
    """The example's headline (an incumbent and its candidates) and the figures it gives: each is the
    comparison row's, formatted as the quote function formats it."""
    a, tables = example
    row = headline.headline_row(a)
    assert row is not None
    text = " ".join(str(p) for p in headline.headline_sentence(a).blocks)
    rid = quote.row_id("comparisons", row)
    assert quote.figure(a, rid, "ratio", fmt.ratio3) in text
    written = next(r for r in _csv_rows(tables / "comparisons.csv") if quote.row_id("comparisons", r) == rid)
    assert f"{float(written['ratio']):.3g}" in text


def _measured_formatting(tree: ast.AST):
    """(function, line) of each fmt.<f>(...) call whose arguments read a measured column."""
    found = []

    def reads_measured(node) -> bool:
        for n in ast.walk(node):
            if isinstance(n, ast.Constant) and n.value in MEASURED:
                return True
            if isinstance(n, ast.Attribute) and n.attr in MEASURED:
                return True
        return False

    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for call in ast.walk(fn):
            if (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and isinstance(call.func.value, ast.Name)
                and call.func.value.id == "fmt"
                and call.func.attr in FORMATTERS
                and any(reads_measured(arg) for arg in call.args)
            ):
                found.append((fn.name, call.lineno))
    return found


def test_no_sentence_formats_a_measured_figure_but_through_quote():
    """Over every module of report/model/sections: a measured column is formatted only by the quote
    functions and by the functions that build a table's cells."""
    offenders = []
    for path in sorted(SECTIONS.glob("*.py")):
        for name, line in _measured_formatting(ast.parse(path.read_text(encoding="utf-8"))):
            if (path.name, name) not in TABLE_BUILDERS:
                offenders.append(f"{path.name}:{line} {name}")
    assert not offenders, offenders


def test_the_check_finds_a_sentence_that_formats_a_figure_itself():
    source = "def words(row):\n    return f'{fmt.num(row[\"estimate\"])} tok/s'\n"
    assert _measured_formatting(ast.parse(source)) == [("words", 2)]
