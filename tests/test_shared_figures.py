"""Figures the build draws beside its notebook (benchreport.report.shared_figures): each drawn once,
by whichever process claims it, the same bytes either way; the notebook draws a figure itself
when the build's failed, differs or never comes."""
from __future__ import annotations

import threading
from pathlib import Path

import pytest

from benchreport.pipeline import Options, analyse_paths, handoff_marker, save_analysis
from benchreport.report import Report, sections
from benchreport.report.catalog import FIGURES
from benchreport.report.shared_figures import SharedFigures, draw_from_end

ROOT = Path(__file__).resolve().parents[1]
FORMATS = ("png", "svg")


@pytest.fixture(scope="module")
def analysis():
    return analyse_paths([ROOT / "data" / "example"], Options(n_boot=200))


def _all_figures(report: Report) -> None:
    a = report.analysis
    for entry in FIGURES.values():
        report.show(entry.make(a))


def _alone(analysis, out: Path) -> dict:
    """Every figure drawn by one process, as a report without a build draws them."""
    report = Report(analysis, out=out, title="t", formats=FORMATS, display=False)
    _all_figures(report)
    return {p.name: p.read_bytes() for p in sorted((out / "figures").iterdir())}, report.html()


def _beside(analysis, tmp: Path, out: Path):
    """The build's process and the notebook's, sharing figures as `benchreport build` does."""
    tmp.mkdir()
    handoff = tmp / "analysis.pickle"
    shared = SharedFigures.open(handoff)
    save_analysis(analysis, handoff)
    report = Report.open(analysis_file=handoff, out=out, formats=FORMATS, display=False, write=False,
                         runs=[str(ROOT / "data" / "example")], n_boot=200)
    assert report.shared is not None
    drawn = draw_from_end(analysis, shared, FORMATS)
    _all_figures(report)
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
    handoff = tmp_path / "analysis.pickle"
    shared = SharedFigures.open(handoff)
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


def test_the_notebook_draws_a_figure_the_build_failed_or_drew_differently(analysis, tmp_path, monkeypatch):
    alone, _ = _alone(analysis, tmp_path / "alone")
    handoff = tmp_path / "tmp" / "analysis.pickle"
    handoff.parent.mkdir()
    shared = SharedFigures.open(handoff)
    shared.claim("ratios")
    shared.publish("ratios", failed="RuntimeError: drawing failed")
    shared.claim("history")
    shared.publish("history", caption="another caption", key="history", formats=list(FORMATS))
    save_analysis(analysis, handoff)
    report = Report.open(analysis_file=handoff, out=tmp_path / "out", formats=FORMATS, display=False, write=False,
                         runs=[str(ROOT / "data" / "example")], n_boot=200)
    _all_figures(report)
    got = {p.name: p.read_bytes() for p in sorted((tmp_path / "out" / "figures").iterdir())}
    assert got == alone


def test_a_stopped_build_is_not_waited_for(analysis, tmp_path):
    handoff = tmp_path / "analysis.pickle"
    shared = SharedFigures.open(handoff)
    assert shared.claim("throughput")  # claimed, never published: the build went away
    handoff_marker(handoff, "abandoned").touch()
    save_analysis(analysis, handoff)
    report = Report.open(analysis_file=handoff, out=tmp_path / "out", formats=FORMATS, display=False, write=False,
                         runs=[str(ROOT / "data" / "example")], n_boot=200)
    assert report.figure(sections.throughput_figure(analysis)) == "Figure 1"
    assert (tmp_path / "out" / "figures" / "figure-01.png").is_file()


def test_without_a_build_nothing_is_shared(analysis, tmp_path):
    report = Report(analysis, out=tmp_path, title="t", display=False)
    assert report.shared is None
    assert SharedFigures.beside(tmp_path / "analysis.pickle") is None
