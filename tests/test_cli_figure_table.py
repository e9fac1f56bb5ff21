"""`benchreport figure` and `benchreport table`: one figure or table of the report, no build.

The figure must be the report's own (same bytes as the build's figure-NN file for the same
data and seed); tables are the report's rows in CSV, Markdown or LaTeX with every special
character escaped; refusals are one line with the spec's exit codes.
"""

from __future__ import annotations

import csv
import io
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from benchreport.cli import main
from benchreport.report import catalog
from runs import make_run, set_path, write_run

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "data" / "example"
HOSTILE = "q|w&x_%$#{y}~^\\z<b>"


@pytest.fixture(scope="module")
def two_seats(tmp_path_factory):
    """Two seats of three passes each, the candidate's model named with every special character."""
    d = tmp_path_factory.mktemp("runs")
    for p, (a, b) in enumerate([(896.9, 951.0), (910.2, 960.4), (902.5, 955.1)], start=1):
        set_path(base := make_run(run_id=f"base-p{p}", **{"pass": p}), "measurements.0.value", a)
        write_run(d, f"base-{p}.json", base)
        cand = make_run(run_id=f"cand-p{p}", **{"pass": p})
        cand["seat"] = {
            **cand["seat"],
            "id": "cand-x",
            "role": "candidate",
            "model": HOSTILE,
            "quantisation": "=HYPERLINK(1)",
        }
        set_path(cand, "measurements.0.value", b)
        write_run(d, f"cand-{p}.json", cand)
    return d


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_list_names_every_figure_and_table(capsys):
    code, out, _ = cli(capsys, "figure", "--list")
    assert code == 0 and [ln.split()[0] for ln in out.splitlines()] == list(catalog.FIGURES)
    code, out, _ = cli(capsys, "table", "--list")
    assert code == 0 and [ln.split()[0] for ln in out.splitlines()] == list(catalog.TABLES)


def test_list_with_runs_numbers_the_figures_this_data_draws(capsys):
    code, out, _ = cli(capsys, "figure", "--list", EXAMPLE, "--quiet")
    assert code == 0
    marks = {ln.split()[0]: ln for ln in out.splitlines()}
    assert "Figure 1" in marks["throughput"]
    assert "nothing to draw" in marks["history"]  # the example has one date per seat
    numbers = [int(m) for m in re.findall(r"Figure (\d+)", out)]
    assert numbers == list(range(1, len(numbers) + 1))


def test_the_figure_is_the_reports_own(tmp_path, capsys):
    """Same data, seed and figure as a report's Figure 1: the same bytes (PNG and SVG)."""
    from benchreport.report import Report
    from benchreport.report.model import sections

    rep = Report.open([str(EXAMPLE)], out=tmp_path / "report", n_boot=200, display=False)
    assert rep.figure(sections.throughput_figure(rep.analysis)) == "Figure 1"
    for kind in ("png", "svg"):
        out = tmp_path / f"one.{kind}"
        code, _, err = cli(capsys, "figure", "throughput", EXAMPLE, "--out", out, "--quiet")
        assert code == 0, err
        assert out.read_bytes() == (tmp_path / "report" / "figures" / f"figure-01.{kind}").read_bytes()
    assert ET.fromstring((tmp_path / "one.svg").read_bytes()).tag.endswith("svg")
    assert not list(tmp_path.glob(".benchreport-tmp-*"))  # no staging folder left


def test_a_pdf_figure_opens(tmp_path, capsys):
    from pypdf import PdfReader

    out = tmp_path / "f.pdf"
    code, _, err = cli(capsys, "figure", "ttft", EXAMPLE, "--out", out, "--quiet")
    assert code == 0, err
    assert len(PdfReader(str(out)).pages) == 1


@pytest.mark.parametrize(
    "argv, code, words",
    [
        (
            ["figure", "nope", "R", "--out", "x.png"],
            2,
            "no figure named 'nope'; the report's figures are: throughput, ",
        ),
        (["table", "nope", "R"], 2, "no table named 'nope'; the report's tables are: seats, runs, results"),
        (["figure", "throughput", "R"], 2, "give --out FILE"),
        (["figure"], 2, "give the figure's NAME"),
        (["figure", "throughput", "R", "--out", "x.gif"], 2, "--out must end in .png, .svg or .pdf, got 'x.gif'"),
        (["table", "results", "R", "--out", "x.txt"], 2, "--out must end in .csv, .md or .tex"),
        (["table", "results", "R", "--format", "html"], 2, "argument --format: invalid choice"),
        (["figure", "throughput", "R", "--out", "x.png", "--n-boot", "0"], 2, "argument --n-boot: expected an integer"),
        (["figure", "throughput", "--out", "x.png"], 2, "give RUNS (files or folders) or --store DIR"),
        (["table", "results", "R\x1b[31m", "--out", "no/such/dir/x.csv"], 2, "the folder 'no/such/dir' does not exist"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(capsys, argv, code, words):
    try:
        got = main(argv)
    except SystemExit as exc:  # argparse's own refusals
        got = exc.code
    err = capsys.readouterr().err
    assert got == code
    assert words in err and len(err.strip().splitlines()) == 1, err


def test_nothing_to_draw_is_exit_2_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "h.png"
    code, _, err = cli(capsys, "figure", "history", EXAMPLE, "--out", out, "--quiet")
    assert code == 2 and "has nothing to draw for these runs" in err and not out.exists()


def test_out_may_not_be_an_input_or_a_folder(two_seats, capsys):
    victim = two_seats / "base-1.json"
    before = victim.read_bytes()
    code, _, err = cli(capsys, "table", "results", victim, "--out", victim.with_suffix(".csv"), "--quiet")
    assert code == 0  # a new file beside the inputs is fine
    victim.with_suffix(".csv").unlink()
    code, _, err = cli(capsys, "figure", "throughput", two_seats, "--out", two_seats, "--quiet")
    assert code == 2 and "--out must end in" in err
    (two_seats.parent / "d.png").mkdir()
    code, _, err = cli(capsys, "figure", "throughput", two_seats, "--out", two_seats.parent / "d.png")
    assert code == 2 and "is a folder" in err
    assert victim.read_bytes() == before


def test_a_refused_file_is_exit_1_unless_skip_bad(tmp_path, two_seats, capsys):
    import shutil

    runs = tmp_path / "runs"
    shutil.copytree(two_seats, runs)
    write_run(runs, "broken.json", '{"format": "benchreport.run/1", "run_id": ')  # a native run cut short
    # ("{not json" claims to be no run: skipped as not a run file since issue 31)
    out = tmp_path / "t.csv"
    code, _, err = cli(capsys, "table", "results", runs, "--out", out, "--quiet")
    assert code == 1 and "broken.json" in err and not out.exists()
    code, _, err = cli(capsys, "table", "results", runs, "--out", out, "--quiet", "--skip-bad")
    assert code == 0 and out.exists()


def _analysis(path):
    from benchreport.pipeline import Options, analyse_paths

    return analyse_paths([str(path)], Options(n_boot=200))


def test_csv_is_the_reports_rows_with_formulas_neutralised(two_seats, capsys):
    code, out, err = cli(capsys, "table", "seats", two_seats, "--quiet")
    assert code == 0, err
    rows = list(csv.reader(io.StringIO(out)))
    expected = catalog.table(_analysis(two_seats), "seats")
    assert rows[0] == list(catalog._flat(expected).columns)
    assert len(rows) - 1 == len(expected.data)
    cells = [c for r in rows[1:] for c in r]
    assert "'=HYPERLINK(1)" in cells and "=HYPERLINK(1)" not in cells
    assert any(HOSTILE in c for c in cells)


def test_markdown_escapes_pipes_and_keeps_one_row_per_line(two_seats, capsys):
    code, out, _ = cli(capsys, "table", "results", two_seats, "--format", "md", "--quiet")
    assert code == 0
    lines = out.splitlines()
    header, rule = lines[0], lines[1]
    n_cols = header.count(" | ") + 1
    body = [ln for ln in lines[2:] if ln.startswith("| ")]
    expected = catalog.table(_analysis(two_seats), "results")
    assert len(body) == len(expected.data) and rule.count("---") == n_cols
    for ln in body:  # every | inside a cell is escaped, so each row has exactly the header's cells
        assert len(re.split(r"(?<!\\)\|", ln)) - 2 == n_cols, ln
    assert any("q\\|w" in ln for ln in body)
    assert lines[-1].startswith("Table: Measured results")


def test_latex_escapes_every_special_character(tmp_path, two_seats, capsys):
    out = tmp_path / "t.tex"
    code, _, err = cli(capsys, "table", "results", two_seats, "--out", out, "--quiet")  # format from the suffix
    assert code == 0, err
    text = out.read_text(encoding="utf-8")
    # one table (a heading or figure set on two lines is a nested tabular[b]/[t] inside a cell)
    assert text.count(r"\begin{tabular}{") == 1 and r"\toprule" in text and r"\bottomrule" in text
    assert r"q|w\&x\_\%\$\#\{y\}\textasciitilde{}\textasciicircum{}\textbackslash{}z\textless{}b\textgreater{}" in text
    head, rest = text.split(r"\midrule")
    n_cols = head.strip().splitlines()[-1].count(" & ") + 1
    body = rest.split(r"\bottomrule")[0].strip().splitlines()
    groups = [ln for ln in body if ln.startswith(r"\multicolumn")]
    assert len(groups) == 2 and all(ln.startswith(r"\multicolumn{%d}" % n_cols) for ln in groups)  # a row per seat
    for ln in body:  # one row per line, an unescaped & between each pair of cells
        if ln.startswith((r"\multicolumn", r"\addlinespace")):
            continue
        assert ln.endswith(r"\\") and len(re.findall(r"(?<!\\)&", ln)) == n_cols - 1, ln
    assert not re.search(r"[−–±×≤≥]", text)  # typographic characters as LaTeX commands


def test_latex_escape_round_trips_through_an_independent_reading():
    """Reading the escapes back (a small independent decoder) gives the text."""
    text = "a&b%c$d#e_f{g}h~i^j\\k<l>m"
    decoded = catalog.latex_escape(text)
    for esc, ch in [
        (r"\textbackslash{}", "\\"),
        (r"\textasciitilde{}", "~"),
        (r"\textasciicircum{}", "^"),
        (r"\textless{}", "<"),
        (r"\textgreater{}", ">"),
    ]:
        decoded = decoded.replace(esc, ch)
    decoded = re.sub(r"\\([&%$#_{}])", r"\1", decoded)
    assert decoded == text


def test_table_store_or_runs_not_both(two_seats, tmp_path, capsys):
    code, _, err = cli(capsys, "table", "results", two_seats, "--store", tmp_path)
    assert code == 2 and "not both" in err


def test_markdown_cells_render_as_text_in_an_independent_renderer(tmp_path, capsys):
    """A run file's strings in a Markdown table are text when rendered (mistune, the renderer
    nbconvert uses): no element, link, image or code span from them, and the words as written."""
    from html.parser import HTMLParser

    import mistune

    hostile = "<script>alert(1)</script> [x](javascript:alert(1)) ![i](http://e/i.png) `c` *e* a&amp;b"
    d = tmp_path / "runs"
    run = make_run(run_id="r1")
    run["seat"] = {**run["seat"], "model": hostile}
    write_run(d, "r1.json", run)
    code, out, err = cli(capsys, "table", "seats", d, "--format", "md", "--quiet")
    assert code == 0, err
    rendered = mistune.create_markdown(escape=False, plugins=["table"])(out)  # raw HTML passed, as CommonMark does

    class Tags(HTMLParser):
        def __init__(self):
            super().__init__()
            self.tags, self.text = [], []

        def handle_starttag(self, tag, attrs):
            self.tags.append(tag)

        def handle_data(self, data):
            self.text.append(data)

    p = Tags()
    p.feed(rendered)
    assert set(p.tags) <= {"table", "thead", "tbody", "tr", "th", "td", "p"}, set(p.tags)
    assert hostile in "".join(p.text)  # the parser has turned the entities back into characters


def test_a_canvas_beyond_the_pixel_limit_is_refused_before_reading(cli, tmp_path):
    """`--width 50 --height 50 --dpi 1200` is a 3,600-megapixel PNG (it died with MemoryError):
    refused at once as a usage error naming what to lower; an SVG of that size is drawn."""
    res = cli(
        "figure", "throughput", EXAMPLE, "--out", tmp_path / "big.png", "--width", 50, "--height", 50, "--dpi", 1200
    )
    assert res.returncode == 2 and "3,600 megapixels" in res.stderr and "lower --dpi" in res.stderr
    assert "analysing" not in res.stderr and not (tmp_path / "big.png").exists()
