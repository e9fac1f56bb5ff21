"""The figures' theme without seaborn (report.model.figures.theme): its written-out base is
seaborn's own "ticks" style and "paper" context, and drawing and saving a report figure no
longer imports seaborn (issue 41: 0.1 s of a build's CPU for two dictionaries)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

# the module, not the package's `theme` (the rc context it exports under the same name)
theme = importlib.import_module("benchreport.report.model.figures.theme")
ROOT = Path(__file__).resolve().parents[1]


def test_the_base_is_seaborns_ticks_and_paper():
    sns = pytest.importorskip("seaborn")
    theirs = {**sns.axes_style("ticks"), **sns.plotting_context("paper")}
    assert theirs.pop("image.cmap") == "rocket"  # the one entry left out: a colour map of seaborn's
    assert theme.SEABORN_TICKS_PAPER == theirs


def test_the_theme_keeps_our_settings_over_seaborns():
    rc = theme._rc()
    assert rc["font.family"] == "serif" and rc["font.size"] == 8.5 and rc["axes.grid"] is True
    assert rc["xtick.direction"] == "out" and rc["patch.force_edgecolor"] is True
    assert "image.cmap" not in rc


def test_a_figure_is_drawn_and_saved_without_importing_seaborn(tmp_path):
    code = (
        "import sys\n"
        "from benchreport.pipeline import analyse_paths\n"
        "from benchreport.report.catalog import FIGURES\n"
        "from benchreport.report.model.figures import save_figure\n"
        f"a = analyse_paths([{str(ROOT / 'data' / 'example')!r}])\n"
        "paths = save_figure(FIGURES['throughput'].make(a).figure, sys.argv[1], 'figure-01')\n"
        "assert sorted(paths) == ['png', 'svg'] and all(p.stat().st_size for p in paths.values())\n"
        "print('seaborn' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
