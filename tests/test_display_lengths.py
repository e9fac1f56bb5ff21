"""Long strings from run files (issue 16, item 6): shortened for display with a middle
ellipsis, the full value kept in tables/*.csv and in the HTML title attribute, and a PDF
that costs about what it costs with ordinary names."""

from __future__ import annotations

import csv
import io
import re
import time

import pytest
from pypdf import PdfReader

from benchreport import format as fmt
from benchreport.load import load
from benchreport.pipeline import Options, analyse, write_analysis
from benchreport.report import Report
from benchreport.report.render import html as render
from benchreport.report.model import sections
from test_report_e2e import write_fixture_runs

LONG = "M" * 2000 + "-middle-" + "x" * 2989 + "END"  # 5,000 characters (a name's limit), no space


def test_short_keeps_head_and_tail():
    s = fmt.short("abcdefghijklmnopqrstuvwxyz", 11)
    assert len(s) == 11 and s.startswith("abcdefg") and s.endswith("xyz") and fmt.ELLIPSIS in s
    assert fmt.short("abc", 11) == "abc"
    assert fmt.short(None) == ""
    assert len(fmt.short(LONG)) == fmt.MAX_LABEL and fmt.short(LONG).endswith("END")


def test_short_tokens_only_shortens_unbroken_runs():
    text = "a sentence with " + "z" * 500 + " inside"
    out = fmt.short_tokens(text)
    assert out.startswith("a sentence with ") and out.endswith(" inside")
    assert max(len(w) for w in out.split()) == fmt.MAX_TOKEN


@pytest.mark.parametrize(
    "text",
    [
        "",
        "short",
        "x" * 49,
        LONG,
        "prompt_tokens=32,output_tokens=16,prefix_tokens=32,prefix_count=1",
        "a b " + "y" * 200 + " c",
    ],
)
def test_break_points_rejoin_and_bound_every_piece(text):
    pieces = fmt.break_points(text)
    assert "".join(pieces) == text
    for run in re.findall(r"\S{%d,}" % (fmt.BREAK_RUN + 1), text):
        assert all(len(p) <= fmt.BREAK_EVERY for p in fmt.break_points(run))


def test_a_long_cell_is_shortened_with_the_full_text_as_title():
    shown, title = render.display_cell(LONG)
    flat = "".join(shown) if isinstance(shown, tuple) else shown
    assert len(flat) <= fmt.MAX_TEXT and fmt.ELLIPSIS in flat and flat.endswith("END")
    assert title == LONG
    assert render.display_cell("tiny-gpt2-s1") == ("tiny-gpt2-s1", "")


def test_table_html_keeps_the_full_name_in_the_title_escaped():
    import pandas as pd

    name = "<b>" + LONG + "</b>"
    t = sections.Table(pd.DataFrame({"Seat": ["s"], "Model": [name]}), "Seats.")
    html = str(render.table_html(t, "Table 1"))
    assert "<b>" not in html
    title = re.search(r'title="([^"]*)"', html).group(1)
    assert title == "&lt;b&gt;" + LONG + "&lt;/b&gt;"
    # what is shown: no unbroken run longer than BREAK_EVERY between break opportunities
    cell = re.search(r"<td title=[^>]*>(.*?)</td>", html).group(1)
    assert max(len(p) for p in cell.split("<wbr>")) <= fmt.BREAK_EVERY + 8  # an escaped '&lt;b&gt;' piece


def _long_model_runs(folder, model):
    import json

    write_fixture_runs(folder, bad=False)
    for f in folder.glob("cand-*.json"):
        d = json.loads(f.read_text(encoding="utf-8"))
        d["seat"]["model"] = model
        f.write_text(json.dumps(d), encoding="utf-8")
    return folder


def _pdf_seconds(a, tmp_path, name) -> tuple[float, str, str]:
    """Every section of the report as one page of HTML, and the seconds WeasyPrint takes for it
    (WeasyPrint's table layout is the one whose cost grows with a cell's text; Chromium's start-up
    would hide a difference)."""
    from benchreport.report.render.pdf import html_to_pdf

    rep = Report(a, out=tmp_path / name, title="t", display=False)
    rep.title_block()
    for f in (
        "abstract",
        "setup_text",
        "seats_table",
        "runs_table",
        "results_text",
        "results_table",
        "comparison_text",
        "comparison_table",
        "exams_text",
        "exam_scores_table",
        "exam_deltas_table",
        "traps",
        "faults",
        "limitations",
        "provenance_text",
        "files_table",
        "skipped_table",
    ):
        rep.show(getattr(sections, f)(a))
    css = (render.TEMPLATES_DIR / "benchreport" / "static" / "report.css").read_text(encoding="utf-8")
    html = f"<html><head><style>{css}</style></head><body class='benchreport'><main class='paper'>{rep.html()}</main></body></html>"
    t0 = time.perf_counter()
    html_to_pdf(html, tmp_path / f"{name}.pdf", engine="weasyprint")
    seconds = time.perf_counter() - t0
    text = "".join(p.extract_text() or "" for p in PdfReader(tmp_path / f"{name}.pdf").pages)
    return seconds, html, text


@pytest.mark.slow
def test_a_5000_character_model_costs_the_pdf_at_most_twice_the_time(tmp_path):
    normal = analyse(load([str(_long_model_runs(tmp_path / "a", "Model-1"))]), Options(n_boot=200))
    long = analyse(load([str(_long_model_runs(tmp_path / "b", LONG))]), Options(n_boot=200))
    t_normal, _, _ = _pdf_seconds(normal, tmp_path, "normal")
    t_long, html, text = _pdf_seconds(long, tmp_path, "long")
    assert t_long <= 2 * t_normal + 1.0, f"{t_long:.1f} s with a 5,000-character model, {t_normal:.1f} s without"
    assert f'title="{LONG}' in html or f'title="cand-exl3 ({LONG}' in html
    assert "MMMM" in text and LONG not in text.replace("\n", "")
    # the full name stays in the CSV tables
    write_analysis(long, tmp_path / "out")
    seats = list(csv.DictReader(io.StringIO((tmp_path / "out" / "tables" / "seats.csv").read_text(encoding="utf-8"))))
    assert LONG in {r["model"] for r in seats}
