"""The writer's options of `benchreport figure` and `benchreport table` (issue 31): a figure sized
for a two-column paper (its file's dimensions read back from the bytes), narrowed to seats, a
metric and a statistic; a table cut to columns, rows and seats; a LaTeX table that fits a page
(compiled by pdflatex when it is installed: no "Overfull \\hbox").
"""

from __future__ import annotations

import csv
import io
import re
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchreport.cli import main
from runs import write_run

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "data" / "example"
SEATS = ("seat-a-fp8", "seat-b-nvfp4", "seat-c-bf16", "seat-d-int4-awq")


@pytest.fixture(scope="module")
def curves(tmp_path_factory):
    """Four seats, three passes, throughput and TTFT (p50, p99) at four concurrency levels."""
    d = tmp_path_factory.mktemp("curves")
    rng = np.random.default_rng(3)
    for s, seat in enumerate(SEATS):
        for p in range(1, 4):
            ms = []
            for c in (1, 4, 16, 64):
                ms.append(
                    {
                        "workload": "decode",
                        "concurrency": c,
                        "metric": "output_tok_s",
                        "unit": "tok/s",
                        "value": float((90 + 10 * s) * c**0.7 * (1 + 0.02 * rng.standard_normal())),
                    }
                )
                for st in ("p50", "p99"):
                    ms.append(
                        {
                            "workload": "decode",
                            "concurrency": c,
                            "metric": "ttft_ms",
                            "unit": "ms",
                            "statistic": st,
                            "value": float(30 + 5 * c + (20 if st == "p99" else 0) + s),
                        }
                    )
            run = {
                "format": "benchreport.run/1",
                "run_id": f"{seat}-p{p}",
                "date": "2026-11-01",
                "seat": {"id": seat, "model": "M", "role": "incumbent" if s == 0 else "candidate"},
                "harness": {"name": "in-house", "probe": "fixed-512"},
                "pass": p,
                "warmup_excluded": True,
                "measurements": ms,
            }
            write_run(d, f"{seat}-p{p}.json", run)
    return d


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


# --- figure size ------------------------------------------------------------------------------
def _png_size(path: Path) -> tuple[int, int]:
    """Width and height from the PNG's IHDR chunk (PNG spec 11.2.2), read from the bytes."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_a_png_for_one_column_of_a_paper_through_the_command(curves, tmp_path):
    out = tmp_path / "fig.png"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchreport",
            "figure",
            "throughput",
            str(curves),
            "--out",
            str(out),
            "--width",
            "3.3",
            "--height",
            "2.4",
            "--dpi",
            "300",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert _png_size(out) == (990, 720)  # 3.3 in x 300 dpi, 2.4 in x 300 dpi
    assert "past its edges" not in proc.stderr  # the legend and labels fit inside


def test_svg_and_pdf_have_the_size_asked_for(curves, tmp_path, capsys):
    svg, pdf = tmp_path / "fig.svg", tmp_path / "fig.pdf"
    for out in (svg, pdf):
        code, _, err = cli(capsys, "figure", "ttft", curves, "--out", out, "--width", "3.3", "--height", "2.5")
        assert code == 0, err
    root = ET.parse(svg).getroot()
    assert (root.get("width"), root.get("height")) == ("237.6pt", "180pt")  # 72 pt to the inch
    from pypdf import PdfReader

    box = PdfReader(pdf).pages[0].mediabox
    assert (float(box.width), float(box.height)) == pytest.approx((237.6, 180.0), abs=0.01)


def test_only_the_width_makes_the_figure_as_tall_as_its_plot_needs(curves, tmp_path, capsys):
    """With --width alone the height is the figure's own, grown (or cut) so that its plot is at
    least `PLOT_IN` tall under the legend laid out for that width: measured on the drawn figure."""
    from benchreport.explore import open_runs
    from benchreport.report import catalog
    from benchreport.report.model.figures.theme import PLOT_IN, fit_figure

    out = tmp_path / "fig.png"
    code, _, err = cli(capsys, "figure", "throughput", curves, "--out", out, "--width", "3.3")
    assert code == 0, err
    fig = catalog.figure(open_runs(str(curves), n_boot=200), "throughput").figure
    assert fit_figure(fig, (3.3, None)) == []
    (ax,) = fig.axes
    assert ax.bbox.height / fig.dpi == pytest.approx(PLOT_IN, abs=0.02)
    w, h = _png_size(out)
    assert w == 660 and h == round(fig.get_size_inches()[1] * 200)  # 3.3 in and that height, at 200 dpi


def _svg_text(path: Path) -> str:
    return " ".join(t.text or "" for t in ET.parse(path).getroot().iter() if t.tag.endswith("text"))


def test_seats_metric_and_statistic_choose_what_is_drawn(curves, tmp_path, capsys):
    out = tmp_path / "fig.svg"
    code, _, err = cli(capsys, "figure", "throughput", curves, "--out", out, "--seats", "seat-a-fp8,seat-c-bf16")
    assert code == 0, err
    text = _svg_text(out)
    assert "seat-a-fp8" in text and "seat-c-bf16" in text and "seat-b-nvfp4" not in text
    code, _, err = cli(
        capsys, "figure", "throughput", curves, "--out", out, "--metric", "ttft_ms", "--statistic", "p99"
    )
    assert code == 0, err
    assert "TTFT p99 (ms)" in _svg_text(out)  # the axis names the metric and statistic drawn


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--seats", "nope"], "the seats are: seat-a-fp8, seat-b-nvfp4, seat-c-bf16, seat-d-int4-awq"),
        (["--metric", "bogus"], "invalid choice"),
        (["--statistic", "p42"], "invalid choice"),
        (["--width", "0"], "--width"),
        (["--dpi", "5"], "--dpi"),
    ],
)
def test_bad_figure_options_are_exit_2_in_one_line(curves, tmp_path, capsys, argv, words):
    try:
        code, _, err = cli(capsys, "figure", "throughput", curves, "--out", tmp_path / "f.png", *argv, "--quiet")
    except SystemExit as exc:  # argparse's own refusals
        code, err = exc.code, capsys.readouterr().err
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "f.png").exists()


def test_metric_on_a_figure_it_does_not_apply_to_is_exit_2(capsys, tmp_path):
    code, _, err = cli(capsys, "figure", "exams", EXAMPLE, "--out", tmp_path / "f.png", "--metric", "ttft_ms")
    assert code == 2 and "do not apply" in err


# --- table columns, rows, seats ---------------------------------------------------------------
def _csv(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_columns_and_rows_cut_the_table(curves, capsys):
    code, out, err = cli(
        capsys, "table", "all-cells", curves, "--columns", "seat,metric,conc.", "--rows", "Conc.=16|64", "--quiet"
    )
    assert code == 0, err
    rows = _csv(out)
    assert rows[0] == ["Seat", "Metric", "Conc."]
    assert {r[2] for r in rows[1:]} == {"16", "64"} and len(rows) > 3
    code, out, err = cli(
        capsys, "table", "results", curves, "--columns", "seat,conc.", "--rows", "Conc.=16|64", "--quiet"
    )
    assert code == 0, err
    assert _csv(out)[0] == ["Seat", "Conc."] and {r[1] for r in _csv(out)[1:]} == {"16", "64"}
    code, out, _ = cli(capsys, "table", "results", curves, "--rows", "Conc.=16|64", "--rows", "2-3", "--quiet")
    assert code == 0 and len(_csv(out)) == 3  # the heading and rows 2 and 3 of those


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--columns", "Seat,Nope"], "no column 'Nope' in this table; its columns are: Seat, "),
        (["--rows", "Nope=1"], "expected COLUMN=VALUE or FIRST-LAST"),
        (["--rows", "3-1"], "FIRST <= LAST"),
        (["--rows", "Conc.=999"], "no row shows '999' in Conc.; it shows: '1', '4', '16', '64'"),
        (["--seats", "seat-x"], "no run of 'seat-x'"),
    ],
)
def test_bad_table_options_are_exit_2(curves, capsys, argv, words):
    code, out, err = cli(capsys, "table", "results", curves, *argv, "--quiet")
    assert code == 2 and words in err and out == "", err


def test_seats_keep_those_seats_runs(curves, capsys):
    code, out, err = cli(capsys, "table", "seats", curves, "--seats", "seat-b-nvfp4", "--quiet")
    assert code == 0, err
    rows = _csv(out)
    assert len(rows) == 2 and rows[1][0].startswith("seat-b-nvfp4")


def test_latex_keeps_the_headline_columns_unless_asked_for_all(curves, capsys):
    code, out, _ = cli(capsys, "table", "all-cells", curves, "--format", "tex", "--quiet")
    assert code == 0
    header = out.split(r"\toprule")[1].split(r"\midrule")[0]
    assert "Metric" in header and "Per pass" not in header
    code, out, _ = cli(capsys, "table", "all-cells", curves, "--format", "tex", "--columns", "all", "--quiet")
    assert "Per pass, in order" in out.split(r"\toprule")[1].split(r"\midrule")[0]
    code, out, _ = cli(capsys, "table", "all-cells", curves, "--format", "csv", "--quiet")
    assert "Per pass, in order" in _csv(out)[0]  # CSV keeps every column
    code, out, _ = cli(capsys, "table", "results", curves, "--format", "tex", "--quiet")
    assert "TTFT p50 (ms)" in out.split(r"\toprule")[1].split(r"\midrule")[0]  # Table 1 is the headline already


def test_many_rows_make_a_longtable_with_a_row_per_seat(curves, capsys):
    from benchreport.report.render.text import LONGTABLE_ROWS, latex_table

    df = pd.DataFrame(
        {
            "seat": [SEATS[i % len(SEATS)] for i in range(LONGTABLE_ROWS + 8)],
            "Conc.": [str(i) for i in range(LONGTABLE_ROWS + 8)],
            "TTFT p50 (ms)": [f"{30 + i} [{29 + i}, {31 + i}]" for i in range(LONGTABLE_ROWS + 8)],
        }
    )
    df = df.sort_values("seat", kind="stable")
    out = latex_table(df, "Many rows.", ("Conc.", "TTFT p50 (ms)"), group="seat")
    assert out.count(r"\begin{longtable}") == 1 and r"\endhead" in out and r"\caption{" in out
    assert out.count(r"\multicolumn{") - out.count("Continued on next page") == len(SEATS)
    code, out, _ = cli(capsys, "table", "all-cells", curves, "--format", "tex", "--rows", "1-5", "--quiet")
    assert r"\begin{tabular}" in out and "longtable" not in out.split("\n", 1)[1]


# --- a LaTeX compile --------------------------------------------------------------------------
PDFLATEX = shutil.which("pdflatex")


def _compile(tmp_path: Path, table: str) -> str:
    """The pdflatex log of an article holding `table` (a float for a tabular, as its caption comment says)."""
    (tmp_path / "t.tex").write_text(table, encoding="utf-8")
    body = (
        r"\input{t.tex}"
        if "longtable" in table.split("\n", 1)[1]
        else r"\begin{table}\centering\input{t.tex}\end{table}"
    )
    (tmp_path / "doc.tex").write_text(
        "\\documentclass{article}\\usepackage[T1]{fontenc}\n"
        "\\usepackage{booktabs,array,longtable}\n\\begin{document}\n"
        f"{body}\n\\end{{document}}\n",
        encoding="utf-8",
    )
    return _pdflatex(tmp_path, timeout=120)


@pytest.mark.skipif(PDFLATEX is None, reason="pdflatex is not installed (Debian: texlive-latex-recommended)")
@pytest.mark.parametrize("runs", ["example", "curves"])
def test_every_latex_table_compiles_and_fits_the_page(runs, curves, tmp_path, capsys):
    from benchreport.report import catalog

    folder = EXAMPLE if runs == "example" else curves
    compiled = 0
    for name in catalog.TABLES:
        code, out, err = cli(capsys, "table", name, folder, "--format", "tex", "--quiet")
        if code == 2 and "has no rows" in err:
            continue
        assert code == 0, err
        log = _compile(tmp_path / name, out) if (tmp_path / name).mkdir() is None else ""
        assert not re.search(r"Overfull \\hbox", log), (name, re.findall(r"Overfull \\hbox.*", log))
        compiled += 1
    assert compiled >= (10 if runs == "example" else 6)


@pytest.mark.parametrize("name", ["throughput", "single-stream", "ttft"])
def test_the_examples_column_figures_fit_inside_their_edges(name, tmp_path, capsys):
    """At one column's width the legend, seat names and axis labels are laid out again to fit
    (the command measures what reaches past the edges, and says so when anything does)."""
    out = tmp_path / "f.svg"
    code, _, err = cli(capsys, "figure", name, EXAMPLE, "--out", out, "--width", "3.3")
    assert code == 0, err
    assert "past its edges" not in err
    assert ET.parse(out).getroot().get("width") == "237.6pt"


def test_a_figure_too_crowded_for_its_size_is_an_error_naming_what_to_leave_out(tmp_path, capsys):
    """Measured once drawn, not warned about (--quiet hid the warning): exit 2, nothing written,
    the edge it runs past and by how much, and the options that would draw less."""
    out = tmp_path / "f.png"
    code, _, err = cli(capsys, "figure", "per-pass", EXAMPLE, "--out", out, "--width", "2", "--quiet")
    assert code == 2 and not out.exists()
    assert re.search(r"does not fit 2\.00 x \d\.\d\d in: its contents reach past its \w+ edge by \d\.\d\d in", err), err
    assert "--seats (it draws" in err and "larger --width" in err


# --- a two-column paper (issue 45) ------------------------------------------------------------
FIXTURES = ROOT / "tests" / "fixtures"
CAPTURES = FIXTURES / "captures"


def _edge_pixels(path: Path) -> np.ndarray:
    """The outermost row and column of pixels on each side of a PNG, as 0-255 grey levels."""
    from PIL import Image

    grey = np.asarray(Image.open(path).convert("L"), dtype=int)
    return np.concatenate([grey[0], grey[-1], grey[:, 0], grey[:, -1]])


@pytest.mark.parametrize("width", ["3.3", "3.0"])
def test_a_column_figure_of_many_harnesses_draws_everything_inside_its_canvas(width, tmp_path, capsys):
    """The reviewer's figure: throughput of the folder of every captured harness, one column wide.
    Measured two ways: matplotlib's renderer (the tight box of every artist, legend and labels
    included, lies within the canvas and the plot is no strip), and the PNG itself (no ink on
    its outermost pixels, where an artist cut by an edge would leave some)."""
    from benchreport.explore import open_runs
    from benchreport.report import catalog
    from benchreport.report.model.figures.theme import MIN_PLOT_IN, fit_figure

    out = tmp_path / "f.png"
    code, _, err = cli(capsys, "figure", "throughput", FIXTURES, "--out", out, "--width", width, "--quiet")
    assert code == 0, err
    assert _png_size(out)[0] == round(float(width) * 200)
    assert _edge_pixels(out).min() > 235  # white (or the faintest grid) all round: nothing cut off

    a = open_runs(str(FIXTURES), n_boot=50)
    fig = catalog.figure(a, "throughput").figure
    assert fit_figure(fig, (float(width), None)) == []
    box = fig.get_tightbbox(fig.canvas.get_renderer() if hasattr(fig.canvas, "get_renderer") else None)
    w, h = fig.get_size_inches()
    assert box.x0 >= 0 and box.y0 >= 0 and box.x1 <= w + 0.01 and box.y1 <= h + 0.01, (box, w, h)
    assert min(ax.bbox.height for ax in fig.axes) / fig.dpi >= MIN_PLOT_IN
    # every seat that has a curve (two or more concurrency levels) is drawn
    cells = a.cells[(a.cells["metric"] == "output_tok_s") & a.cells["estimate"].notna()]
    with_curve = {s for s, g in cells.groupby("seat") if g["concurrency"].nunique() >= 2}
    assert len(with_curve) >= 4 and with_curve <= set(fig.benchreport_cells["seat"])


def test_the_caption_names_line_styles_only_for_what_differs(capsys, tmp_path):
    """One seat of the captures measured one workload with several harnesses: its line styles are
    the harnesses (and loads), never 'the seat's workload'."""
    import dataclasses

    from benchreport.explore import open_runs
    from benchreport.report import catalog

    a = open_runs(str(CAPTURES), n_boot=50)
    one = dataclasses.replace(a, cells=a.cells[a.cells["seat"] == "tiny-gpt2-s1"])
    block = catalog.figure(one, "throughput")
    drawn = block.figure.benchreport_cells
    assert drawn["workload"].nunique() == 1 and drawn["harness"].nunique() > 1  # the premise
    assert "workload" not in block.caption.split("line style", 1)[1].split(".")[0], block.caption
    assert "line style, the seat's harness" in block.caption, block.caption


def test_filters_name_what_there_is_when_a_value_matches_nothing(capsys, tmp_path):
    out = tmp_path / "f.png"
    code, _, err = cli(capsys, "figure", "throughput", CAPTURES, "--out", out, "--harness", "nope", "--quiet")
    assert code == 2 and "--harness: no run of 'nope'; the harnesses are: " in err and "aiperf" in err
    code, _, err = cli(capsys, "table", "results", CAPTURES, "--condition", "nope", "--quiet")
    assert code == 2 and "--condition: no run of 'nope'; the conditions are: " in err
    code, _, err = cli(capsys, "table", "results", CAPTURES, "--metric", "engine_init_s", "--quiet")
    assert code == 2 and "--metric: these runs hold no 'engine_init_s'; they hold: " in err and "ttft_ms" in err


def test_harness_and_condition_keep_only_those_runs(capsys):
    code, out, err = cli(capsys, "table", "runs", CAPTURES, "--harness", "AIPerf", "--quiet")
    assert code == 0, err
    rows = _csv(out)
    harness = rows[0].index("Harness")
    assert rows[1:] and all(r[harness].startswith("aiperf ") for r in rows[1:])  # "aiperf 0.13.0"
    code, out, err = cli(capsys, "table", "results", CAPTURES, "--condition", "completions", "--quiet")
    assert code == 0, err
    workload = _csv(out)[0].index("Workload")
    assert all("completions" in r[workload] for r in _csv(out)[1:])
    code, out, err = cli(capsys, "table", "all-cells", CAPTURES, "--statistic", "p99", "--metric", "ttft_ms", "--quiet")
    assert code == 0, err
    rows = _csv(out)
    stat, metric = rows[0].index("Stat."), rows[0].index("Metric")
    assert rows[1:] and {(r[stat], r[metric]) for r in rows[1:]} == {("p99", rows[1][metric])}


def _pdflatex(folder: Path, *, timeout: int) -> str:
    """pdflatex run on FOLDER/doc.tex; its log (the run must succeed)."""
    proc = subprocess.run(
        [PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    log = (folder / "doc.log").read_text(encoding="latin-1")
    assert proc.returncode == 0, log[-2000:]
    return log


def _compile_two_column(tmp_path: Path, table: str, paper: str) -> str:
    """The pdflatex log of a two-column article (10 pt, `paper`) holding `table` (whole floats)."""
    (tmp_path / "t.tex").write_text(table, encoding="utf-8")
    (tmp_path / "doc.tex").write_text(
        f"\\documentclass[twocolumn,{paper}]{{article}}\\usepackage[T1]{{fontenc}}\n"
        "\\usepackage{booktabs,array}\n\\begin{document}\n"
        "\\typeout{COLUMNWIDTH=\\the\\columnwidth}\n\\input{t.tex}\nText.\n\\end{document}\n",
        encoding="utf-8",
    )
    return _pdflatex(tmp_path, timeout=300)


@pytest.mark.skipif(PDFLATEX is None, reason="pdflatex is not installed (Debian: texlive-latex-recommended)")
@pytest.mark.parametrize("runs", ["example", "captures"])
@pytest.mark.parametrize("width", ["column", "text"])
def test_a_latex_table_fits_a_two_column_page(runs, width, tmp_path, capsys):
    """`--width column` (table) and `--width text` (table*) compiled in a two-column article on
    A4 (its column, 221 pt, is the narrowest of the common classes) and on letter: no overfull line."""
    from benchreport.report.render.text import WIDTHS_PT

    folder = EXAMPLE if runs == "example" else CAPTURES
    code, out, err = cli(capsys, "table", "results", folder, "--format", "tex", "--width", width, "--quiet")
    assert code == 0, err
    env = "table" if width == "column" else "table*"
    assert out.count(f"\\begin{{{env}}}") >= 1 and "longtable" not in out
    for paper in ("a4paper", "letterpaper"):
        (tmp_path / paper).mkdir()
        log = _compile_two_column(tmp_path / paper, out, paper)
        assert not re.search(r"Overfull \\hbox", log), re.findall(r"Overfull \\hbox.*", log)
        assert not re.search(r"Float too large", log), re.findall(r"Float too large.*", log)
        column = float(re.search(r"COLUMNWIDTH=([\d.]+)pt", log).group(1))
        assert column >= WIDTHS_PT["column"]  # the width fitted to is no wider than this page's


@pytest.mark.skipif(PDFLATEX is None, reason="pdflatex is not installed (Debian: texlive-latex-recommended)")
def test_the_column_width_stated_is_the_article_classes(tmp_path):
    """The numbers --help and docs/cli.md give for a column, as pdflatex reports them."""
    from benchreport.report.model.figures.theme import COLUMN_IN
    from benchreport.report.render.text import WIDTHS_PT

    widths = {}
    for paper in ("a4paper", "letterpaper"):
        (tmp_path / paper).mkdir()
        log = _compile_two_column(tmp_path / paper, "", paper)
        widths[paper] = float(re.search(r"COLUMNWIDTH=([\d.]+)pt", log).group(1))
    assert widths == {"a4paper": 221.0, "letterpaper": 229.5}
    assert WIDTHS_PT["column"] == min(widths.values())
    assert COLUMN_IN * 72.27 <= min(widths.values())


def test_small_multiples_go_to_fewer_columns_for_one_column_of_a_paper(tmp_path, capsys):
    """The example's per-pass panels (three side by side in the report) are one column at 3.0 in,
    each panel as tall as the report's and everything inside the canvas."""
    from benchreport.explore import open_runs
    from benchreport.report import catalog
    from benchreport.report.model.figures.theme import MIN_PLOT_IN, fit_figure

    fig = catalog.figure(open_runs(str(EXAMPLE), n_boot=50), "per-pass").figure
    assert len({round(ax.get_position().x0, 3) for ax in fig.axes if ax.axison}) > 1  # side by side first
    assert fit_figure(fig, (3.0, None)) == []
    shown = [ax for ax in fig.axes if ax.axison]
    assert len({round(ax.get_position().x0, 3) for ax in shown}) == 1
    assert min(ax.bbox.height for ax in shown) / fig.dpi >= MIN_PLOT_IN - 0.01
    out = tmp_path / "f.png"
    code, _, err = cli(capsys, "figure", "per-pass", EXAMPLE, "--out", out, "--width", "3.0", "--quiet")
    assert code == 0, err
    assert _edge_pixels(out).min() > 235


def test_a_figure_taller_than_a_page_is_refused(tmp_path, capsys):
    out = tmp_path / "f.png"
    code, _, err = cli(capsys, "figure", "lengths-sent", FIXTURES, "--out", out, "--width", "3.0", "--quiet")
    assert code == 2 and not out.exists()
    assert re.search(r"it would be \d+\.\d\d in tall, more than a page holds \(7\.3 in\)", err), err


def test_a_metric_the_runs_do_not_hold_names_those_they_do(tmp_path, capsys):
    code, _, err = cli(capsys, "figure", "throughput", EXAMPLE, "--out", tmp_path / "f.png", "--metric", "itl_ms")
    assert code == 2 and "--metric: these runs hold no 'itl_ms'; they hold: " in err, err
