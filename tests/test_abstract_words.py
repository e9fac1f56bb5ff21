"""The abstract on real harness output (issue 27): with no incumbent it still gives numbers, each
with its interval and what the interval is; it never prints a harness's raw error message."""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import pytest

from benchreport import format as fmt
from benchreport.load import load

from benchreport.pipeline import Options, analyse
from benchreport.report.model import sections

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    root = tmp_path_factory.mktemp("abstract")
    shutil.copytree(FIXTURES / "captures" / "aiperf-trials", root / "aiperf-trials")
    shutil.copytree(FIXTURES / "harness" / "sglang", root / "sglang")
    return analyse(load([str(root)], progress=False), Options(n_boot=500))


def _text(block) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", str(block)))


def test_with_no_incumbent_each_seat_is_given_a_number_and_its_interval(analysed):
    a = analysed
    assert not a.baseline
    text = " ".join(_text(sections.abstract(a)).split())
    assert "no comparison against an incumbent" in text
    # the AIPerf trials: 3 passes, a between-pass interval; its figure is the cell's own
    cells = a.cells
    best = sections.headline.seat_figure(cells, "tiny-gpt2-s1")
    assert int(best["n_passes"]) == 3 and fmt.finite(best["ci_low"])
    assert f"{fmt.num(best['estimate'])} tok/s" in text
    assert f"95% CI {fmt.ci(best['ci_low'], best['ci_high'])} over 3 passes" in text
    # the SGLang seat has single passes: said as such, never as a confidence interval
    assert "1 pass, too few for an interval" in text or "which leaves out run-to-run variation" in text
    assert text.index("tiny-gpt2-s1") < text.index("sglang:")  # the seat measured in more passes first


def test_the_strongest_caveat_quotes_no_error_text(analysed):
    text = " ".join(_text(sections.abstract(analysed)).split())
    assert "The strongest caveat (critical)" in text and "3 of 12 requests" in text
    assert "requests.failed" not in text  # said in words, not by its code (issue 42)
    assert not re.search(r"\d{4}-\d\d-\d{3}", text), "a date run into the next item of the list"
    assert "Bad Request" not in text and "“" not in text and "{" not in text
    assert "Section 6 quotes the errors" in text
    faults = " ".join(_text(sections.faults(analysed)[0]).split())
    assert "Bad Request: This model's maximum context length is 70 tokens." in faults


def test_the_caveat_without_its_error_texts_keeps_its_list_apart():
    """The abstract drops the quoted errors of a failure finding, not the '; ' between its items
    (the captures' abstract read 'on 2026-12-017 of 12')."""
    from benchreport.report.model.sections.abstract import unquoted

    text = (
        "s: 21 of 36 requests failed: 14 of 24 (58%) at 2 streams on 2026-12-01: 14× “Bad Request” "
        "(13 messages of this form); 7 of 12 (58%) at 2 streams on 2026-12-01: 7× “Bad”. So many failed."
    )
    assert unquoted(text) == (
        "s: 21 of 36 requests failed: 14 of 24 (58%) at 2 streams on 2026-12-01; 7 of 12 (58%) at 2 streams "
        "on 2026-12-01. So many failed. (Section 6 quotes the errors.)"
    )


def test_a_headline_whose_cell_a_trap_names_says_so():
    """Issue 42: the declared primary cell stays the headline, and where a failure or measurement
    trap names its runs, the headline says its figures are in question (the example's two-node
    seat: a prefix-cache hit, capped answers and tokens in the reasoning field in its one run)."""
    from pathlib import Path

    from benchreport.pipeline import analyse_paths

    a = analyse_paths([str(Path(__file__).resolve().parents[1] / "data" / "example")])
    text = " ".join(_text(sections.abstract(a)).split())
    assert "names runs of this cell for glm-5.3-flash-nvfp4-tp4-2node: its figures are in question" in text
    assert "for glm-5.3-flash-exl3-4.0bpw-1node: its figures are in question" not in text
