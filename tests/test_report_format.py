"""What the report adds to analysis/benchreport/format.py: counts, ranges, fractions, points, levels, workloads."""

from __future__ import annotations

import math

import pytest

from benchreport import format as fmt


def test_counts_are_whole_numbers_with_separators():
    assert fmt.count(35) == "35" and fmt.count(3.0) == "3" and fmt.count(1024) == "1,024"
    assert fmt.count(None) == "–" and fmt.count(math.nan) == "–"
    assert fmt.counted(1, "run") == "1 run" and fmt.counted(1000, "run") == "1,000 runs"
    assert fmt.counted(2.0, "series", "series") == "2 series" and fmt.counted(1.0, "node") == "1 node"
    # below 1,000 a count reads as `plural` writes it (the flags' messages)
    for n in (0, 1, 2, 999):
        assert fmt.counted(n, "cell") == fmt.plural(n, "cell")


def test_small_counts_are_spelled_in_prose():
    assert [fmt.spelled(n) for n in (1, 2, 3, 4)] == ["one", "two", "three", "four"]
    assert fmt.spelled(12) == "12" and fmt.spelled(2.5) == "2.5"


def test_ranges_fractions_and_points():
    assert fmt.span(79.4, 104.0) == "79.4–104" and fmt.span(16, 24) == "16–24"
    assert fmt.fraction(153, 164) == "153/164" and fmt.fraction(13500, 14042) == "13,500/14,042"
    assert fmt.points_ci(-0.074, 0.006) == "[−7.4, +0.6]" and fmt.points_ci(None, 0.1) == ""
    # the interval drops the unit its column names; the bounds read as `points` writes them
    assert fmt.points_ci(-0.074, 0.006) == fmt.ci(-0.074, 0.006, fmt.points).replace(" pp", "")
    assert fmt.points_size(0.074) == "7.4 pp" and fmt.points_size(None) == "–"


@pytest.mark.parametrize("alpha, text", [(0.05, "95%"), (0.1, "90%"), (0.01, "99%"), (0.005, "99.5%")])
def test_confidence_level(alpha, text):
    assert fmt.level(alpha) == text


def test_workload_label_prefers_the_condition_column():
    assert fmt.workload_label("init:cold", "cold") == "init:cold"  # the key already carries it
    assert fmt.workload_label("init", "cold") == "init:cold"
    assert fmt.workload_label("decode", None) == "decode" and fmt.workload_label("decode", math.nan) == "decode"


def test_inches():
    assert fmt.inches(6.5) == "6.50"
