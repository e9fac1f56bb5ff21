"""The headline says when its cell is not the declared one (issue 43: it was chosen silently when
the declared metric, aggregate throughput by default, was missing)."""

from __future__ import annotations

from pathlib import Path

from test_noise_bands import _runs

from benchreport.pipeline import analyse_paths, options_from
from benchreport.report.model.sections import headline

NOTE = "The declared headline cell, aggregate throughput, was not measured for both seats"


def _headline(a) -> str:
    return " ".join(str(p) for p in headline.headline_sentence(a).blocks)


def test_a_headline_on_a_fallback_metric_says_so(tmp_path: Path):
    runs = _runs(tmp_path / "runs", 1.0, passes=3)
    a = analyse_paths([runs])
    assert "output_tok_s" not in set(a.comparisons["metric"])  # the runs carry no aggregate throughput
    row = headline.headline_row(a)
    assert row["metric"] == "decode_tok_s_per_stream"
    text = _headline(a)
    assert NOTE in text
    assert "this headline is the first metric of the declared order both share (per-stream decode" in text


def test_a_headline_on_the_declared_cell_adds_nothing(tmp_path: Path):
    runs = _runs(tmp_path / "runs", 1.0, passes=3)
    a = analyse_paths([runs], options_from({"primary_metric": "decode_tok_s_per_stream"}))
    assert headline.headline_row(a)["metric"] == "decode_tok_s_per_stream"
    assert "The declared headline cell" not in _headline(a)
