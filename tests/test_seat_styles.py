"""One style per seat for the whole report (issue 42): every figure of the report draws a seat in
the colour and marker shape it has in every other figure, read from the figures themselves (the
style each figure notes it drew, and that colour in the figure's SVG)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from benchreport.pipeline import analyse_paths
from benchreport.report.catalog import FIGURES
from harness_oracle import FOLDERS

EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "example"


def _drawn_styles(analysis) -> dict[str, dict[str, tuple]]:
    """{figure name: {seat: (colour, marker)}} for every figure of the catalog that draws seats,
    each colour checked to be in the figure's SVG."""
    seats = set(analysis.tables.seats["seat"].astype(str))
    drawn = {}
    for name, entry in FIGURES.items():
        block = entry.make(analysis)
        fig = getattr(block, "figure", block)
        if fig is None:
            continue
        styles = {s: st for s, st in getattr(fig, "benchreport_styles", {}).items() if s in seats}
        if not styles:
            continue
        svg = io.StringIO()
        fig.savefig(svg, format="svg")
        text = svg.getvalue().lower()
        for seat, st in styles.items():
            assert str(st.color).lower() in text, f"{name}: {seat}'s colour {st.color} is not in the SVG"
        drawn[name] = {s: (str(st.color).lower(), str(st.marker)) for s, st in styles.items()}
    return drawn


@pytest.mark.parametrize("folders", [[EXAMPLE], FOLDERS], ids=["example", "harness-captures"])
def test_every_seat_has_one_style_in_every_figure(folders):
    drawn = _drawn_styles(analyse_paths([str(f) for f in folders]))
    assert len(drawn) >= 2, "at least two figures draw seats"
    seen: dict[str, tuple] = {}
    for name, styles in drawn.items():
        for seat, style in styles.items():
            first = seen.setdefault(seat, (name, style))
            assert style == first[1], f"{seat}: {first[1]} in {first[0]}, {style} in {name}"


def test_no_two_seats_share_a_style():
    from benchreport.report.model.sections.labels import report_styles

    styles = report_styles(analyse_paths([str(f) for f in FOLDERS]))
    pairs = [(st.color, st.marker, st.linestyle) for st in styles.values()]
    assert len(set(pairs)) == len(pairs)
