"""Figures drawn beside the build's notebook (benchreport.report.shared_figures): each drawn once,
by whichever process claims it, the same bytes either way; the notebook draws a figure itself
when the drawing process's failed, differs or never comes."""
from __future__ import annotations

import threading
from pathlib import Path

import pytest

from benchreport.pipeline import Options, analyse_paths
from benchreport.report import Report, sections
from benchreport.report.catalog import FIGURES
from benchreport.report.document import HeldAnalysis, held_analysis
from benchreport.report.shared_figures import SharedFigures, draw_from_end, drawing_beside

ROOT = Path(__file__).resolve().parents[1]
FORMATS = ("png", "svg")


@pytest.fixture(scope="module")
def analysis():
    return analyse_paths([ROOT / "data" / "example"], Options(n_boot=200))


def _all_figures(report: Report, held: HeldAnalysis | None = None) -> None:
    """Every figure, as the report shows them; in a build (`held`) then the files written while
    the PDF is printed (HeldAnalysis.finish)."""
    report.figures(*FIGURES)
    if held is not None:
        held.finish()


def _alone(analysis, out: Path) -> dict:
    """Every figure drawn by one process, as a report without a build draws them."""
    report = Report(analysis, out=out, title="t", formats=FORMATS, display=False)
    _all_figures(report)
    return {p.name: p.read_bytes() for p in sorted((out / "figures").iterdir())}, report.html()


def _opened(held: HeldAnalysis, out: Path) -> Report:
    """The report notebook's `Report.open`, as the build executes it (the analysis held in memory)."""
    with held_analysis(held):
        report = Report.open(out=out, formats=FORMATS, display=False, runs=[str(ROOT / "data" / "example")],
                             n_boot=200)
    assert report.analysis is held.analysis
    return report


def _beside(analysis, tmp: Path, out: Path):
    """The drawing process's share and the notebook's, as `benchreport build` shares them."""
    shared = SharedFigures(tmp / "figures")
    held = HeldAnalysis(analysis, shared, lambda: False)
    report = _opened(held, out)
    assert report.shared is shared
    drawn = draw_from_end(analysis, shared, FORMATS)
    _all_figures(report, held)
    return drawn, {p.name: p.read_bytes() for p in sorted((out / "figures").iterdir())}, report.html()


def test_figures_drawn_beside_the_notebook_are_the_figures_drawn_alone(analysis, tmp_path):
    alone, html_alone = _alone(analysis, tmp_path / "alone")
    drawn, beside, html_beside = _beside(analysis, tmp_path / "tmp", tmp_path / "beside")
    assert drawn, "the build drew nothing"
    assert beside == alone  # same names, same bytes
    assert html_beside == html_alone
    leftover = {p.suffix for p in (tmp_path / "tmp" / "figures").iterdir()}
    assert ".png" not in leftover and ".svg" not in leftover  # every figure the build drew was taken


def test_each_figure_is_claimed_once_when_both_race(analysis, tmp_path):
    shared = SharedFigures(tmp_path / "figures")
    wins = {"build": [], "notebook": []}

    def claim_all(who, names):
        for n in names:
            if shared.claim(n):
                wins[who].append(n)

    names = list(FIGURES)
    threads = [threading.Thread(target=claim_all, args=("build", names[::-1])),
               threading.Thread(target=claim_all, args=("notebook", names))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(wins["build"] + wins["notebook"]) == sorted(names)
    assert not set(wins["build"]) & set(wins["notebook"])


def test_the_notebook_draws_a_figure_the_other_failed_or_lost(analysis, tmp_path, monkeypatch):
    alone, _ = _alone(analysis, tmp_path / "alone")
    shared = SharedFigures(tmp_path / "tmp" / "figures")
    shared.claim("ratios")
    shared.publish("ratios", failed="RuntimeError: drawing failed")
    shared.claim("history")  # said to be drawn, its files gone
    shared.publish("history", caption="a caption", key="history", formats=list(FORMATS))
    shared.claim("exams")  # drawn in other formats than this report's
    shared.publish("exams", caption="a caption", key="exams", formats=["pdf"])
    held = HeldAnalysis(analysis, shared, lambda: False)
    report = _opened(held, tmp_path / "out")
    _all_figures(report, held)
    got = {p.name: p.read_bytes() for p in sorted((tmp_path / "out" / "figures").iterdir())}
    assert got == alone


def test_an_ended_drawing_process_is_not_waited_for(analysis, tmp_path):
    shared = SharedFigures(tmp_path / "figures")
    assert shared.claim("throughput")  # claimed, never published: the drawing process went away
    held = HeldAnalysis(analysis, shared, lambda: True)
    report = _opened(held, tmp_path / "out")
    report.figures("throughput")
    held.finish()
    assert report.labels["throughput"] == "Figure 1"
    assert (tmp_path / "out" / "figures" / "figure-01.png").is_file()


def test_without_a_build_nothing_is_shared(analysis, tmp_path):
    report = Report(analysis, out=tmp_path, title="t", display=False)
    assert report.shared is None


def test_a_forked_drawing_process_draws_the_same_figures(analysis, tmp_path):
    """`drawing_beside` as the build uses it: a real forked process, the same files and page as one
    process drawing alone, and nothing left behind (the process reaped, its folder removed)."""
    import os

    alone, html_alone = _alone(analysis, tmp_path / "alone")
    with drawing_beside(analysis, FORMATS) as (shared, ended):
        assert shared is not None
        folder = shared.folder
        held = HeldAnalysis(analysis, shared, ended)
        report = _opened(held, tmp_path / "beside")
        _all_figures(report, held)
        drawn_there = [p.stem for p in folder.glob("*.json")]
    assert {p.name: p.read_bytes() for p in sorted((tmp_path / "beside" / "figures").iterdir())} == alone
    assert report.html() == html_alone
    assert drawn_there, "the forked process drew nothing"
    assert not folder.exists()
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)  # no child left unreaped


def test_a_drawing_process_killed_midway_leaves_the_notebook_to_draw(analysis, tmp_path, monkeypatch):
    """The drawing process dies after claiming a figure: the notebook sees it ended and draws it."""
    import signal
    import time

    from benchreport.report import shared_figures

    alone, _ = _alone(analysis, tmp_path / "alone")

    def claim_then_die(analysis, shared, formats):
        for name in reversed(list(FIGURES)):
            shared.claim(name)
        os.kill(os.getpid(), signal.SIGKILL)

    import os

    monkeypatch.setattr(shared_figures, "draw_from_end", claim_then_die)
    t0 = time.perf_counter()
    with drawing_beside(analysis, FORMATS) as (shared, ended):
        held = HeldAnalysis(analysis, shared, ended)
        report = _opened(held, tmp_path / "out")
        _all_figures(report, held)
    assert {p.name: p.read_bytes() for p in sorted((tmp_path / "out" / "figures").iterdir())} == alone
    assert time.perf_counter() - t0 < 60


def test_one_process_where_none_can_be_forked(analysis, tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHREPORT_DRAW_BESIDE", "0")
    with drawing_beside(analysis, FORMATS) as (shared, ended):
        assert shared is None and ended()


def test_a_saved_analysis_is_reported_as_it_is(analysis, tmp_path):
    """`analysis_file` (the report notebook's parameter): an analysis saved by save_analysis is
    reported on without analysing or writing anything, the same page as from the analysis itself."""
    from benchreport.pipeline import save_analysis

    save_analysis(analysis, tmp_path / "analysis.pickle")
    report = Report.open(analysis_file=tmp_path / "analysis.pickle", out=tmp_path / "out", display=False,
                         runs=["no-such-folder"], n_boot=200)
    report.show(sections.abstract(report.analysis), sections.results_table(report.analysis))
    alone = Report(analysis, out=tmp_path / "alone", title="t", display=False)
    alone.show(sections.abstract(analysis), sections.results_table(analysis))
    assert report.html() == alone.html()
    assert not (tmp_path / "out").exists()  # nothing written
