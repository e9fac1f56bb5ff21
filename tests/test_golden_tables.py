"""Same data and seed, byte-identical tables: a regression guard for speed work.

The golden CSVs in tests/golden/ were written by tests/golden/make_golden.py from the
example data and a small generated fleet (several passes and single-pass request cells,
so every CI route is exercised).
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "golden"
sys.path.insert(0, str(HERE))
from make_golden import TABLES, golden_tables  # noqa: E402


@pytest.fixture(scope="module")
def produced(tmp_path_factory):
    out = tmp_path_factory.mktemp("golden")
    golden_tables(out)
    return out


@pytest.mark.parametrize("name", TABLES)
def test_tables_are_byte_identical_to_the_golden_ones(produced, name):
    got = (produced / "tables" / f"{name}.csv").read_bytes()
    want = (HERE / f"{name}.csv").read_bytes()
    assert got == want, f"{name}.csv differs from tests/golden/{name}.csv"


def test_golden_tables_cover_every_ci_route(produced):
    text = (HERE / "cells.csv").read_text()
    for route in ("bootstrap BCa over requests, within one run", "t on log pass values", "none: single pass",
                  "none: two passes", "published"):
        assert route in text, route
    comparisons = (HERE / "comparisons.csv").read_text()
    assert "Welch t on log pass values" in comparisons and "within one run" in comparisons
