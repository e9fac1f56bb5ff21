"""The report's view-model and its templates: plain data in, escaped HTML out, no HTML in Python."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from markupsafe import Markup

from benchreport.report.render import html as render
from benchreport.report.model import sections
from benchreport.report.model.sections.blocks import Ident, Paragraph, Prose, division, ident, idents, para, prose

ROOT = Path(__file__).resolve().parents[1]
SECTIONS = ROOT / "analysis" / "benchreport" / "report" / "model" / "sections"
XSS = "<script>alert(1)</script>"


def test_a_paragraph_is_text_and_identifiers_in_order():
    p = para("Compared against the {} {}; {} seats.", "incumbent", ident("inc-tp2"), "3")
    assert p == Paragraph(("Compared against the incumbent ", Ident("inc-tp2"), "; 3 seats."))
    assert (
        str(render.prose_html(p)) == '<p>Compared against the incumbent <span class="id">inc-tp2</span>; 3 seats.</p>'
    )
    assert para("{}", idents(["a", "b", "c"])).parts == (Ident("a"), ", ", Ident("b"), ", ", Ident("c"))


def test_a_paragraph_takes_formatted_text_only():
    with pytest.raises(TypeError, match="benchreport.format"):
        para("{} runs", 3)
    with pytest.raises(TypeError):
        para("{}", object())
    with pytest.raises(ValueError):
        para("{:.1f}", "1.0")
    with pytest.raises(ValueError):
        para("{}", "a", "b")
    with pytest.raises(ValueError):
        para("{} {}", "a")


@pytest.mark.parametrize("text", [XSS, Markup(XSS), '" onmouseover="x', "&amp; & <b>"])
def test_every_string_of_a_block_is_escaped(text):
    block = prose(
        para("{} {}", text, ident(text), css="flag-note", lead=text),
        division("finding", [para("{}", text)], heading=text),
        sections.blocks.TitleBlock(text, (para("{}", text, css="subtitle"),)),
    )
    html = str(render.prose_html(block))
    assert "<script>" not in html and "<b>" not in html and 'onmouseover="x' not in html
    assert html.count("&lt;script&gt;") == (7 if "script" in text else 0)
    assert html == str(block)  # a block renders where HTML is asked for


def test_division_heading_lead_and_class():
    html = str(prose(division("finding", [para("{}", "body", lead="Sample sizes.")], heading="5.1 Title")))
    assert html == '<div class="finding"><h3>5.1 Title</h3><p><strong>Sample sizes.</strong> body</p></div>'
    assert isinstance(prose(para("a"), prose(para("b"))), Prose) and len(prose(para("a"), [para("b")]).blocks) == 2
    with pytest.raises(TypeError):
        prose("a plain string is not a block")


def test_table_cells_holding_markup_are_still_text():
    df = pd.DataFrame({"seat": ["s"], "Note": [Markup("<b>bold</b>")]})
    html = str(render.table_html(sections.Table(df, Markup("<i>c</i>")), "Table 1"))
    assert "<b>" not in html and "&lt;b&gt;bold&lt;/b&gt;" in html and "&lt;i&gt;c&lt;/i&gt;" in html


def test_figure_html_escapes_its_caption():
    html = str(render.figure_html(b"\x89PNG", "Figure 1", XSS, width_in=6.5, key="k"))
    assert html.startswith('<figure class="report-figure" id="figure-k"><img src="data:image/png;base64,')
    assert 'style="width:6.50in"' in html and "<script>" not in html and html.count("&lt;script&gt;") == 2
