"""The report's layout on real harness output (issue 15): the PDF of every harness fixture
(tests/fixtures/harness, built with --skip-bad) has no text past the right margin, CIs on one
line, a compact appendix (at most a fifth of the pages), section 7 as a list per topic, an
abstract that names only flags there are, provenance.csv beside it, and an HTML page that
never scrolls sideways on a 400-pixel screen (headless Chromium).

The PDF's text layout is read with poppler's ``pdftotext -bbox`` (every word and its box) and
its pages with pypdf.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
from html import unescape
from pathlib import Path

import pytest
from pypdf import PdfReader

from benchreport.report.render.html import TEMPLATES_DIR
from browser import needs_browser, page_at

HARNESS = Path(__file__).parent / "fixtures" / "harness"
CAPTURES = Path(__file__).parent / "fixtures" / "captures"
BAD = Path(__file__).parent / "bad_inputs" / "negative-rate.json"
MM = 72 / 25.4

pytestmark = pytest.mark.slow


EXAMPLE = Path(__file__).parents[1] / "data" / "example"


def _build(tmp_path_factory, runs, *extra: str) -> Path:
    out = tmp_path_factory.mktemp("layout") / "report"
    runs = [str(r) for r in (runs if isinstance(runs, (list, tuple)) else [runs])]
    proc = subprocess.run(
        [sys.executable, "-m", "benchreport", "build", *runs, "--out", str(out), "--quiet", *extra],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def harness_report(tmp_path_factory):
    # every harness fixture validates; one refused file beside them, as a real folder would hold
    return _build(tmp_path_factory, [HARNESS, BAD], "--skip-bad")


@pytest.fixture(scope="module")
def captures_report(tmp_path_factory):
    """A folder of many harnesses' captures (issue 27): every harness fixture and the real captures.
    Not captures/agreement (issue 46): five harnesses on two seats of one load, a capture of its own
    whose report tests/test_agreement.py reads; it would add its seats to this page budget."""
    folders = [p for p in sorted(CAPTURES.iterdir()) if p.is_dir() and p.name != "agreement"]
    return _build(tmp_path_factory, [HARNESS, *folders], "--skip-bad")


@pytest.fixture(scope="module")
def example_report(tmp_path_factory):
    return _build(tmp_path_factory, EXAMPLE)


def page_margins() -> tuple[float, float]:
    """The left and right page margins (points) the stylesheet sets (``@page { margin: ... }``)."""
    css = (TEMPLATES_DIR / "benchreport" / "static" / "report.css").read_text(encoding="utf-8")
    m = re.search(r"@page\s*\{[^}]*?margin:\s*([\d.]+)mm\s+([\d.]+)mm\s+([\d.]+)mm\s+([\d.]+)mm", css)
    assert m, "the stylesheet's @page margin"
    return float(m.group(4)) * MM, float(m.group(2)) * MM


def words_by_page(pdf: Path) -> list[tuple[float, float, list[tuple[float, float, float, float, str]]]]:
    """(width, height, words) per page: each word as (x0, y0, x1, y1, text), from pdftotext -bbox."""
    if not shutil.which("pdftotext"):
        pytest.skip("poppler's pdftotext is not installed")
    html = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    pages = []
    for page in re.findall(r"<page (.*?)</page>", html, flags=re.S):
        w = float(re.search(r'width="([\d.]+)"', page).group(1))
        h = float(re.search(r'height="([\d.]+)"', page).group(1))
        words = [
            (float(a), float(b), float(c), float(d), t)
            for a, b, c, d, t in re.findall(
                r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">(.*?)</word>', page
            )
        ]
        pages.append((w, h, words))
    return pages


@pytest.mark.parametrize("which", ["harness_report", "example_report"])
def test_no_text_lies_past_the_right_margin(request, which):
    report = request.getfixturevalue(which)
    left, right = page_margins()
    pages = words_by_page(report / "report.pdf")
    assert len(pages) == len(PdfReader(report / "report.pdf").pages)
    over = []
    # 1.5 pt of slack: Chromium sets the page and its margins in whole CSS pixels, so its line
    # box ends about 1.1 pt right of the exact margin on every line (WeasyPrint's within 1 pt);
    # text run past the margin by a table or a long word is several points over
    slack = 1.5
    for i, (w, _, words) in enumerate(pages, 1):
        over += [(i, t, round(x1 - (w - right), 1)) for x0, _, x1, _, t in words if x1 > w - right + slack]
        over += [(i, t, round(left - x0, 1)) for x0, _, x1, _, t in words if x0 < left - slack]
    assert not over, f"{len(over)} words past the margins (page, word, points over): {over[:10]}"


def test_wide_tables_are_set_landscape(harness_report):
    pages = words_by_page(harness_report / "report.pdf")
    landscape = [i for i, (w, h, _) in enumerate(pages, 1) if w > h]
    text = [" ".join(t for *_, t in words) for _, _, words in pages]
    assert landscape, "Table 1 (one row per cell, statistics side by side) goes on landscape pages"
    assert "Table 1." in text[landscape[0] - 1]


def test_confidence_intervals_are_on_one_line(harness_report):
    """Every '[low, high]' in the PDF starts and ends on the same line (pdftotext gives an
    interval as one word or two: '[74.5,' and '92.9]' side by side)."""
    broken, seen = [], 0
    for i, (_, _, words) in enumerate(words_by_page(harness_report / "report.pdf"), 1):
        for k, (_x0, y0, _x1, _y1, t) in enumerate(words):
            if re.match(r"^\[[−\-+]?[\d.,]+,\s?[−\-+]?[\d.,]+\]", t):
                seen += 1  # one word: on one line
            elif re.match(r"^\[[−\-+]?[\d.,]+,$", t):
                nxt = words[k + 1] if k + 1 < len(words) else None
                seen += 1
                if nxt is None or not nxt[4].rstrip(".,;)").endswith("]") or abs(nxt[1] - y0) > 1.0:
                    broken.append((i, t, nxt[4] if nxt else None))
    # fewer since issue 40: runs of other fixture folders are other seats, no longer pooled as passes
    assert seen >= 3, "the harness report has confidence intervals"
    assert not broken, broken[:10]


def appendix_start(pdf: Path) -> tuple[int, list[str]]:
    """The pages before the appendix, and every page's text."""
    texts = [p.extract_text() or "" for p in PdfReader(pdf).pages]
    start = next(i for i, t in enumerate(texts) if re.search(r"^Appendix: provenance", t, flags=re.M))
    return start, texts


def test_the_body_and_the_appendix_stay_short(harness_report):
    start, texts = appendix_start(harness_report / "report.pdf")
    appendix = len(texts) - start
    # the table of every seat and cell (223 rows here, 13 landscape pages when printed) is a
    # reference: collapsed in the HTML, one line in the PDF saying where it is; Table 1 is the
    # headline summary (this folder: 29 pages before the appendix in stop 34, 15 after issue 27's
    # summary table, Section 7 that names what Sections 5 and 6 state, and a paper's leading;
    # 12 once Table 1 kept to one page and the figures and tables to their content)
    # 8: since issue 40 the fixtures' folders are more seats (their runs are not passes of one cell)
    # 14: issue 42's views of load, latency and requests (six figures) are in the appendix
    assert appendix <= 14, f"the appendix is {appendix} of {len(texts)} pages"
    assert start <= 12, f"{start} pages before the appendix"
    every = re.search(r"Table A1\. Every seat and cell.*?Not printed \((\d+)\s+rows\)", texts[start], flags=re.S)
    assert every and int(every.group(1)) > 100, texts[start][:2000]
    assert "tables/cells.csv" in texts[start]


@pytest.mark.parametrize("which", ["captures_report", "example_report"])
def test_at_most_ten_pages_before_the_appendix(request, which):
    """Issue 42: the example and a folder of many harnesses' captures each have at most 10 PDF pages
    before the appendix (12 in issue 27, 13 once issue 46 added section 9; 10 once the findings
    list two cells each, a finding's evidence line stays on screen, and a history with nothing
    judged yet says so in one paragraph); Table 1 takes one page (landscape when it is), never two."""
    report = request.getfixturevalue(which)
    start, texts = appendix_start(report / "report.pdf")
    assert start <= 10, f"{start} pages before the appendix"
    flat = [" ".join(t.split()) for t in texts[:start]]
    caption = [i for i, t in enumerate(flat) if "Table 1. Measured results" in t]
    note = [i for i, t in enumerate(flat) if "Every statistic (p90" in t]
    assert len(caption) == 1 and note == caption, (caption, note)  # the caption and the note on one page


def test_the_captures_folder_holds_six_harnesses_or_more(captures_report):
    with (captures_report / "provenance.csv").open(encoding="utf-8") as f:
        harnesses = {row["harness"].split()[0] for row in csv.DictReader(f) if row.get("harness")}
    assert len(harnesses) >= 6, harnesses


@pytest.mark.parametrize("which", ["harness_report", "captures_report"])
def test_every_flag_message_is_whole_in_the_html(request, which):
    """Every message of flags.json appears whole (never cut, never with a middle ellipsis) in
    report.html's text (Section 7 may join several; the appendix's table of flags has each)."""
    from report_text import html_text

    report = request.getfixturevalue(which)
    text = html_text(report / "report.html")
    flags = json.loads((report / "flags.json").read_text(encoding="utf-8"))
    assert len(flags) >= 20
    missing = [f["message"][:80] for f in flags if " ".join(f["message"].split()) not in text]
    assert not missing, missing


def test_the_table_of_every_cell_is_in_the_html_collapsed_with_every_row(harness_report):
    html = (harness_report / "report.html").read_text(encoding="utf-8")
    blocks = re.finditer(r'<details class="screen-only"><summary>(.*?)</summary>(.*?)</details>', html, flags=re.S)
    block = next((b for b in blocks if "Table A1." in b.group(1)), None)  # section 9's table is one too
    assert block and 'id="table-all-cells"' in block.group(2)
    shown = int(re.search(r"(\d+) rows", block.group(1)).group(1))
    with (harness_report / "tables" / "cells.csv").open(encoding="utf-8") as f:
        cells = list(csv.DictReader(f))
    body = re.search(r"<tbody>(.*?)</tbody>", block.group(2), flags=re.S).group(1)
    rows = len(re.findall(r"<tr>", body))
    assert rows == shown and 100 < rows <= len(cells)


def test_provenance_csv_lists_every_file_and_the_appendix_counts_them(harness_report):
    rows = list(csv.DictReader((harness_report / "provenance.csv").open(encoding="utf-8")))
    by = {s: [r for r in rows if r["status"] == s] for s in ("read", "refused", "skipped")}
    assert by["read"] and by["refused"] and len(by["skipped"]) > 100
    assert all(re.fullmatch(r"[0-9a-f]{64}", r["sha256"]) for r in by["read"])
    assert all(r["reason"] for r in by["skipped"] + by["refused"])
    html = (harness_report / "report.html").read_text(encoding="utf-8")
    skipped = re.search(r'<table class="[^"]*" id="table-skipped">(.*?)</table>', html, flags=re.S).group(1)
    counts = [int(c.replace(",", "")) for c in re.findall(r'<td class="num">([\d,]+)</td><td class="num">', skipped)]
    assert sum(counts) == len(by["skipped"]), "the skipped files counted by reason add up to provenance.csv"
    assert len(counts) < len(by["skipped"]) / 4, "skipped files are counted by reason, not listed"


def _section(html: str, heading: str) -> str:
    start = html.index(f">{heading}<")
    end = html.index("<h2", start + 1)
    return html[start:end]


def test_section_7_is_a_list_per_topic(harness_report):
    html = (harness_report / "report.html").read_text(encoding="utf-8")
    s7 = _section(html, "7 What these numbers will not carry")
    topics = re.findall(r'<div class="topic"><h3>(.*?)</h3>', s7)
    assert len(topics) >= 4, topics
    assert s7.count("<li>") >= 10
    paragraphs = [re.sub(r"<[^>]+>", "", p) for p in re.findall(r"<(?:p|li)\b[^>]*>(.*?)</(?:p|li)>", s7, flags=re.S)]
    longest = max(len(p) for p in paragraphs)
    assert longest < 1500, f"a paragraph or item of {longest} characters in section 7"


def test_abstract_names_only_flags_there_are(harness_report):
    html = (harness_report / "report.html").read_text(encoding="utf-8")
    abstract = re.sub(r"<[^>]+>", "", _section(html, "Abstract"))
    m = re.search(r"The analysis raised (\d+) flags \((\d+) critical, (\d+) warnings\)", abstract)
    assert m, abstract[:500]
    critical = int(m.group(2))
    if critical <= 1:
        assert "other critical" not in abstract
    assert not re.search(r"The other warnings", abstract) or critical == 0


@needs_browser
def test_html_never_scrolls_sideways_on_a_narrow_screen(harness_report):
    with page_at(harness_report / "report.html", 400) as page:
        width = page.evaluate("() => document.documentElement.scrollWidth")
        wraps = page.evaluate(
            "() => [...document.querySelectorAll('div.table-wrap')].map(d => ({"
            "right: d.getBoundingClientRect().right, scroll: d.scrollWidth, client: d.clientWidth,"
            "overflow: getComputedStyle(d).overflowX}))"
        )
        images = page.evaluate("() => [...document.images].map(i => i.getBoundingClientRect().right)")
    assert width <= 400, f"the page is {width}px wide on a 400px screen"
    assert wraps and all(w["right"] <= 400 and w["overflow"] == "auto" for w in wraps)
    assert any(w["scroll"] > w["client"] for w in wraps), "a wide table scrolls inside its box"
    assert all(r <= 400 for r in images)


def test_table1_says_which_seats_and_conditions_it_shows(captures_report):
    """Cut to a page, Table 1 says how many seats it shows and, for a seat shown in part, which of
    its conditions: everything else is in Table A1 (collapsed in the HTML) and tables/cells.csv."""
    html = (captures_report / "report.html").read_text(encoding="utf-8")
    text = " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())  # the text a reader sees
    m = re.search(
        r"This table shows (\d+) of (\d+) seats \(the highest aggregate throughput\);( of (.+?)'s (\d+) "
        r"conditions, the (\d+) measured with the most passes;)? Table A1 in the appendix lists every seat",
        text,
    )
    assert m, "Table 1's note says what it leaves out"
    assert 2 <= int(m.group(1)) < int(m.group(2))
    if m.group(3):  # a seat shown in part says which of its conditions
        assert int(m.group(6)) < int(m.group(5))


def test_a_long_runs_table_goes_to_the_appendix_and_section_1_has_one_row_per_harness(captures_report, example_report):
    html = (captures_report / "report.html").read_text(encoding="utf-8")
    appendix = (
        html.index('id="Appendix:-provenance"')
        if 'id="Appendix:-provenance"' in html
        else html.index("Appendix: provenance")
    )
    methods, runs = html.index('id="table-methods"'), html.index('id="table-runs"')
    assert methods < appendix < runs
    table = html[methods : html.index("</table>", methods)]
    assert table.count("<tr") - 1 >= 6  # a row per harness, past the heading
    example = (example_report / "report.html").read_text(encoding="utf-8")
    assert 'id="table-methods"' not in example and 'id="table-runs"' in example


@needs_browser
def test_every_estimate_of_table1_is_reachable_on_a_phone(captures_report):
    """At 390 px Table 1 scrolls inside its box with its first column held in view: scrolled to the
    end, the last column is on screen and every row still shows its name (issue 27)."""
    with page_at(captures_report / "report.html", 390) as page:
        seen = page.evaluate("""() => {
                const wrap = document.querySelector('#table-results').closest('div.table-wrap');
                wrap.scrollLeft = wrap.scrollWidth;
                const box = wrap.getBoundingClientRect();
                const rows = [...wrap.querySelectorAll('tbody tr:not(.group)')];
                const inside = r => r.left >= box.left - 1 && r.right <= box.right + 1;
                return {scrolled: wrap.scrollLeft > 0, rows: rows.length,
                        last: rows.filter(tr => inside(tr.lastElementChild.getBoundingClientRect())).length,
                        first: rows.filter(tr => inside(tr.firstElementChild.getBoundingClientRect())).length};
            }""")
    assert seen["scrolled"] and seen["rows"] >= 6
    assert seen["last"] == seen["rows"] and seen["first"] == seen["rows"], seen


def test_what_these_numbers_will_not_carry_fits_a_page_for_the_example(example_report):
    """Issue 42: Section 7 of the example, from its heading to the next section's, is no taller than
    one page's text block (its lines measured with pdftotext -bbox, across the pages it spans)."""
    css = (TEMPLATES_DIR / "benchreport" / "static" / "report.css").read_text(encoding="utf-8")
    m = re.search(r"@page\s*\{[^}]*?margin:\s*([\d.]+)mm\s+([\d.]+)mm\s+([\d.]+)mm", css)
    top, bottom = float(m.group(1)) * MM, float(m.group(3)) * MM
    pages = words_by_page(example_report / "report.pdf")

    def heading(words, first: str, second: str):
        return next(
            (words[k][1] for k in range(len(words) - 1) if words[k][4] == first and words[k + 1][4] == second), None
        )

    start = next(i for i, (_, _, w) in enumerate(pages) if heading(w, "7", "What") is not None)
    height, i = 0.0, start
    while True:
        _, page_h, words = pages[i]
        body = [w for w in words if top - 2 <= w[1] <= page_h - bottom]
        begin = heading(words, "7", "What") if i == start else min(w[1] for w in body)
        end = heading(words, "8", "History") or heading(words, "Appendix:", "provenance")
        mine = [w for w in body if w[1] >= begin and (end is None or w[1] < end)]
        if mine:
            height += max(w[3] for w in mine) - begin
        if end is not None:
            break
        i += 1
    text_block = pages[start][1] - top - bottom
    assert height <= text_block, f"Section 7 is {height:.0f} pt, a page's text is {text_block:.0f} pt"


@needs_browser
@pytest.mark.parametrize("which", ["example_report", "captures_report"])
def test_no_identifier_is_set_a_letter_a_line_on_a_phone(request, which):
    """At 390 px every identifier cell (a seat's id in the seats table and the others) keeps room for
    several characters a line; the table scrolls instead (issue 42: the example's seat ids were one
    letter a line, the column squeezed to one character)."""
    report = request.getfixturevalue(which)
    with page_at(report / "report.html", 390) as page:
        cells = page.evaluate(
            "() => [...document.querySelectorAll('table.report-table td.mono')]"
            ".filter(td => td.offsetParent !== null && td.textContent.trim().length > 8)"
            ".map(td => ({text: td.textContent.trim(), width: td.getBoundingClientRect().width,"
            " ch: parseFloat(getComputedStyle(td).fontSize)}))"
        )
    assert cells, "the report has identifier cells on screen"
    narrow = [c for c in cells if c["width"] < 6 * c["ch"]]  # fewer than about ten characters a line
    assert not narrow, narrow[:5]
