"""Same data and seed, the same tables: a regression guard for speed work.

The golden CSVs in tests/golden/ were written by tests/golden/make_golden.py from the
example data and a small generated fleet (several passes and single-pass request cells,
so every CI route is exercised).

Two checks, because "byte-identical" holds on one machine, not across CPUs: numpy picks
SIMD kernels for `log`, `exp` and reductions by the CPU it runs on, and those differ in
the last bit (a fresh clone on another CPU wrote 0.06836729956559412 for ...409). So:
- two builds on this machine are byte-identical (the reproducibility promise);
- against the committed goldens, every text cell is equal and every number agrees to
  1e-12 relative (each number of a `;`-separated list too), far below any printed digit and
  far above an ulp, so a real change of method, seed use or row order still fails.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

HERE = Path(__file__).parent / "golden"
sys.path.insert(0, str(HERE))
from make_golden import TABLES, golden_tables  # noqa: E402

RTOL = 1e-12


@pytest.fixture(scope="module")
def produced(tmp_path_factory):
    out = tmp_path_factory.mktemp("golden")
    golden_tables(out)
    return out


@pytest.fixture(scope="module")
def produced_again(tmp_path_factory):
    out = tmp_path_factory.mktemp("golden_again")
    golden_tables(out)
    return out


def _read(data: bytes) -> pd.DataFrame:
    return pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)


def differences(got: bytes, want: bytes) -> list[str]:
    """Where two CSVs differ beyond the last-bit noise of the CPU: cell by cell, named."""
    g, w = _read(got), _read(want)
    if list(g.columns) != list(w.columns):
        return [f"columns differ: {list(g.columns)} vs {list(w.columns)}"]
    if len(g) != len(w):
        return [f"{len(g)} rows vs {len(w)}"]
    found = []
    for column in g.columns:
        a, b = g[column].to_numpy(), w[column].to_numpy()
        same = a == b
        if same.all():
            continue
        close = np.array([_close(p, q) for p, q in zip(a, b)], dtype=bool)
        for row in np.flatnonzero(~(same | close))[:3]:
            found.append(f"row {row} column {column}: {a[row]!r} vs {b[row]!r}")
    return found


def _close(a: str, b: str) -> bool:
    """Two cells are the same numbers to `RTOL`: one number, or a `;`-separated list of them
    (the `values` column of a cell lists its passes' values)."""
    xs, ys = a.split(";"), b.split(";")
    if len(xs) != len(ys):
        return False
    x = pd.to_numeric(pd.Series(xs), errors="coerce").to_numpy()
    y = pd.to_numeric(pd.Series(ys), errors="coerce").to_numpy()
    return bool(np.all(np.isfinite(x) & np.isfinite(y) & np.isclose(x, y, rtol=RTOL, atol=0.0)))


@pytest.mark.parametrize("name", TABLES)
def test_tables_agree_with_the_golden_ones(produced, name):
    got = (produced / "tables" / f"{name}.csv").read_bytes()
    want = (HERE / f"{name}.csv").read_bytes()
    assert differences(got, want) == [], f"{name}.csv differs from tests/golden/{name}.csv"


@pytest.mark.parametrize("name", TABLES)
def test_two_builds_on_one_machine_are_byte_identical(produced, produced_again, name):
    assert (produced / "tables" / f"{name}.csv").read_bytes() == (
        produced_again / "tables" / f"{name}.csv"
    ).read_bytes()


def test_the_comparison_catches_a_real_change():
    want = b"seat,ratio,method\nA,1.0683672995655941,t\nB,2,t\n"
    assert differences(b"seat,ratio,method\nA,1.0683672995655943,t\nB,2,t\n", want) == []
    assert differences(b"seat,ratio,method\nA,1.0683672996655941,t\nB,2,t\n", want) != []
    assert differences(b"seat,ratio,method\nA,1.0683672995655941,t\nB,2,bootstrap\n", want) != []
    assert differences(b"seat,ratio,method\nB,2,t\nA,1.0683672995655941,t\n", want) != []
    assert differences(b"seat,ratio,method\nA,,t\nB,2,t\n", want) != []


def test_golden_tables_cover_every_ci_route(produced):
    text = (HERE / "cells.csv").read_text()
    for route in (
        "t with EWC long-run variance over requests in send order",
        "Woodruff with EWC long-run variance",
        "t on log pass values",
        "none: single pass",
        "none: two passes",
        "published",
    ):
        assert route in text, route
    comparisons = (HERE / "comparisons.csv").read_text()
    assert "Welch t on log pass values" in comparisons and "within one run" in comparisons
