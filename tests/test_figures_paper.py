"""Figures fit for a paper (issue 15): colours a reader with a colour-vision deficiency tells
apart, a marker shape per seat, SVG text that is text, the statistic on every value axis,
readable date axes at hundreds of dates, and captions that say only what is drawn.

The colour test simulates deuteranopia and protanopia (Machado, Oliveira & Fernandes 2009)
and measures CIEDE2000 differences (tests/cvd.py); both are checked here against published
values (Sharma, Wu & Dalal 2005) and a second implementation (colorspacious).
"""

from __future__ import annotations

import itertools
import re
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.colors import to_hex, to_rgb, to_rgba

import cvd
from benchreport import format as fmt
from benchreport.load import load
from benchreport.pipeline import Options, analyse
from benchreport.report.model import figures as F
from benchreport.report.model import sections
from benchreport.report.model.figures import save_figure
from runs import write_run

#: the smallest CIEDE2000 difference two seat colours must keep under each simulation: above
#: ~10 two flat colours are told apart at a glance (Okabe-Ito's closest pair scores 12.2)
MIN_DELTA_E = 10.0
#: colours with less CIELAB chroma than this are neutral (greys, white, black: reference
#: lines, ranges, text), never a seat's colour
NEUTRAL_CHROMA = 6.0

STATISTIC = re.compile(r"\b(mean|median|p50|p90|p95|p99|min|max)\b")


# --- the simulation and the difference, against published values --------------------------

#: Sharma, Wu & Dalal (2005), Table 1: CIELAB pairs and their CIEDE2000 difference
SHARMA = [
    ((50.0000, 2.6772, -79.7751), (50.0000, 0.0000, -82.7485), 2.0425),
    ((50.0000, 3.1571, -77.2803), (50.0000, 0.0000, -82.7485), 2.8615),
    ((50.0000, 2.8361, -74.0200), (50.0000, 0.0000, -82.7485), 3.4412),
    ((50.0000, 0.0000, 0.0000), (50.0000, -1.0000, 2.0000), 2.3669),
    ((50.0000, 2.5000, 0.0000), (73.0000, 25.0000, -18.0000), 27.1492),
    ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),
    ((63.0109, -31.0961, -5.8663), (62.8187, -29.7946, -4.0864), 1.2630),
    ((35.0831, -44.1164, 3.7933), (35.0232, -40.0716, 1.5901), 1.8645),
    ((22.7233, 20.0904, -46.6940), (23.0331, 14.9730, -42.5619), 2.0373),
    ((2.0776, 0.0795, -1.1350), (0.9033, -0.0636, -0.5514), 0.9082),
]


@pytest.mark.parametrize("lab1, lab2, expected", SHARMA)
def test_ciede2000_matches_sharma_test_data(lab1, lab2, expected):
    assert cvd.ciede2000(lab1, lab2) == pytest.approx(expected, abs=1e-4)
    assert cvd.ciede2000(lab2, lab1) == pytest.approx(expected, abs=1e-4)  # symmetric


def test_cielab_of_srgb_primaries():
    """sRGB white is L*=100, a*=b*=0; red (1, 0, 0) is (53.24, 80.09, 67.20) under D65."""
    assert cvd.lab((1, 1, 1)) == pytest.approx([100, 0, 0], abs=1e-2)
    assert cvd.lab((1, 0, 0)) == pytest.approx([53.24, 80.09, 67.20], abs=0.02)


def test_machado_matrices_are_the_published_ones():
    """The matrices at severity 1.0 as Machado et al. publish them (colorspacious's table)."""
    cs = pytest.importorskip("colorspacious.cvd")
    for kind, name in (("deuteranopia", "deuteranomaly"), ("protanopia", "protanomaly")):
        np.testing.assert_allclose(cvd.MACHADO[kind], cs.machado_et_al_2009_matrix(name, 100), atol=1e-6)
    # a physiological model keeps white white (each row sums to 1)
    for m in cvd.MACHADO.values():
        np.testing.assert_allclose(m.sum(axis=1), 1, atol=1e-3)


@pytest.mark.parametrize("kind, name", [("deuteranopia", "deuteranomaly"), ("protanopia", "protanomaly")])
def test_simulation_matches_colorspacious(kind, name):
    cs = pytest.importorskip("colorspacious")
    space = {"name": "sRGB1+CVD", "cvd_type": name, "severity": 100}
    colours = list(F.PALETTE) + ["#777777", "#ff0000", "#00ff00", "#123456"]
    for c in colours:
        expected = np.clip(cs.cspace_convert(to_rgb(c), space, "sRGB1"), 0, 1)
        np.testing.assert_allclose(cvd.simulate(c, kind), expected, atol=2e-3, err_msg=c)


def test_red_and_green_collide_under_deuteranopia():
    """The check can fail: the old palette's red and green are near twins to a deuteranope."""
    assert cvd.cvd_difference("#c0392b", "#229954", "deuteranopia") < MIN_DELTA_E


# --- every figure of a report, drawn from a data set with many seats -----------------------


def _m(workload, metric, value, unit, concurrency=None, **kw):
    m = {"workload": workload, "metric": metric, "value": value, "unit": unit}
    if concurrency is not None:
        m["concurrency"] = concurrency
    return {**m, **kw}


SEATS = [f"seat-{i}" for i in range(9)]  # more seats than colours: markers and line styles take over


@pytest.fixture(scope="module")
def many_seats(tmp_path_factory):
    folder = tmp_path_factory.mktemp("many") / "runs"
    rng = np.random.default_rng(15)
    for i, seat in enumerate(SEATS):
        role = "incumbent" if i == 0 else "candidate"
        for p in (1, 2, 3):
            for date in ("2026-09-10", "2026-09-17"):
                base = 100 + 15 * i
                ms = [
                    _m("decode", "output_tok_s", base * c**0.8 * rng.uniform(0.95, 1.05), "tok/s", c)
                    for c in (1, 4, 16)
                ]
                ms += [
                    _m("decode", "decode_tok_s_per_stream", base * rng.uniform(0.95, 1.05) / c**0.3, "tok/s", c)
                    for c in (1, 4, 16)
                ]
                ms += [
                    _m("decode", "ttft_ms", 30 + 2 * i * c * rng.uniform(0.9, 1.1), "ms", c, statistic="p50")
                    for c in (1, 4, 16)
                ]
                run = {
                    "format": "benchreport.run/1",
                    "run_id": f"{seat}-{date}-p{p}",
                    "date": date,
                    "seat": {"id": seat, "model": f"Model-{i}", "role": role},
                    "harness": {"name": "in-house", "probe": "fixed-512", "max_tokens": 512},
                    "pass": p,
                    "warmup_excluded": True,
                    "measurements": ms,
                }
                if p == 1 and date == "2026-09-10":
                    run["exams"] = [{"benchmark": "HumanEval", "correct": 150 + i % 5, "total": 164}]
                write_run(folder, f"{seat}-{date}-p{p}.json", run)
    return analyse(load([str(folder)]), Options(n_boot=200))


FIGURES = [
    "throughput_figure",
    "per_stream_figure",
    "single_stream_figure",
    "ttft_figure",
    "per_pass_figure",
    "history_figure",
    "ratio_figure",
    "exam_figure",
]


@pytest.fixture(scope="module")
def blocks(many_seats):
    out = {name: getattr(sections, name)(many_seats) for name in FIGURES}
    missing = [n for n, b in out.items() if b is None]
    assert not missing, f"figures not drawn from the many-seats data: {missing}"
    return out


def drawn_colours(fig) -> set[str]:
    """Every colour a figure's data marks are drawn in (lines, markers, bars, bands), as hex."""
    out = set()
    for ax in fig.axes:
        for line in ax.get_lines():
            out.add(to_hex(line.get_color()))
            if line.get_marker() not in (None, "None", "", " "):
                out.add(to_hex(line.get_markerfacecolor()))
        for coll in ax.collections:
            for c in (*coll.get_facecolors(), *coll.get_edgecolors()):
                if to_rgba(c)[3] > 0:
                    out.add(to_hex(c))
        for patch in ax.patches:
            out.add(to_hex(patch.get_facecolor()))
    return out


def seat_colours(fig) -> set[str]:
    """The colours of `drawn_colours` that are not neutral (greys, white, black)."""
    out = set()
    for c in drawn_colours(fig):
        L, a, b = cvd.lab(to_rgb(c))
        if np.hypot(a, b) >= NEUTRAL_CHROMA:
            out.add(c)
    return out


@pytest.mark.parametrize("name", FIGURES)
@pytest.mark.parametrize("kind", ["deuteranopia", "protanopia"])
def test_every_figures_colours_are_distinct_under_colour_blindness(blocks, name, kind):
    colours = sorted(seat_colours(blocks[name].figure))
    assert colours, name
    for c1, c2 in itertools.combinations(colours, 2):
        d = cvd.cvd_difference(c1, c2, kind)
        assert d >= MIN_DELTA_E, f"{name}: {c1} and {c2} differ by only {d:.1f} (CIEDE2000) under {kind}"


@pytest.mark.parametrize("name", FIGURES)
def test_seat_colours_come_from_the_okabe_ito_palette(blocks, name):
    allowed = {c.lower() for c in F.PALETTE} | {s.color.lower() for s in F.VERDICT_STYLES.values()}
    assert seat_colours(blocks[name].figure) <= allowed, name


def test_seats_differ_by_colour_and_marker_even_past_seven_seats():
    styles = F.seat_styles(SEATS + [f"extra-{i}" for i in range(20)], baseline="seat-0")
    keys = [(s.color, s.marker, s.linestyle) for s in styles.values()]
    assert len(set(keys)) == len(keys)
    assert len({(s.color, s.marker) for s in list(styles.values())[:56]}) == min(56, len(styles))
    assert styles["seat-0"].color == F.PALETTE[0]  # the baseline is first


@pytest.mark.parametrize("name", ["throughput_figure", "per_stream_figure", "ttft_figure"])
def test_a_seat_has_one_colour_and_one_marker_in_a_figure(blocks, name):
    """Each seat's markers are drawn in its own colour and shape: no two seats of the legend alike.
    The shapes are the report's (one per seat for the whole report, issue 42), so with more seats
    in the report than shapes two seats of one figure may share a shape, never a colour with it."""
    fig = blocks[name].figure
    legend = fig.legends[0]
    handles = legend.legend_handles
    assert len({(to_hex(h.get_color()), h.get_marker()) for h in handles}) == len(handles)
    assert len({h.get_marker() for h in handles}) >= min(len(handles), len(F.MARKERS)) - 1


def _value_labels(fig, name) -> list[str]:
    """The labels of the axes that carry a metric's value (y, or x for the dot plot)."""
    out = []
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        out.append(ax.get_xlabel() if name == "single_stream_figure" else ax.get_ylabel())
    return out


@pytest.mark.parametrize(
    "name",
    [
        "throughput_figure",
        "per_stream_figure",
        "single_stream_figure",
        "ttft_figure",
        "per_pass_figure",
        "history_figure",
    ],
)
def test_every_value_axis_names_its_statistic(blocks, name):
    labels = _value_labels(blocks[name].figure, name)
    assert labels and all(STATISTIC.search(lab) for lab in labels), labels


def test_ttft_axis_says_p50(blocks):
    assert "p50" in blocks["ttft_figure"].figure.axes[0].get_ylabel()


def test_ratio_rows_name_their_statistic(blocks):
    labels = [t.get_text() for t in blocks["ratio_figure"].figure.axes[0].get_yticklabels()]
    assert labels and all(STATISTIC.search(lab) for lab in labels), labels


def test_svg_text_is_text(blocks, tmp_path):
    paths = save_figure(blocks["throughput_figure"].figure, tmp_path, "f", ("svg",))
    root = ET.parse(paths["svg"]).getroot()
    texts = ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")]
    joined = " ".join(texts)
    assert "seat-0" in joined and "concurrent streams" in joined, texts[:10]
    assert "aggregate throughput mean (tok/s)" in joined


# --- captions say what is drawn --------------------------------------------------------------


def artist_kinds(fig) -> set[str]:
    """What a concurrency figure shows, read from its artists (not from its own notes):
    'ci' (vertical CI bars), 'band', 'no_ci' (white-filled markers), 'passes' (small dots)."""
    out = set()
    for ax in fig.axes:
        for coll in ax.collections:
            if isinstance(coll, LineCollection) and len(coll.get_segments()):
                out.add("ci")
            elif isinstance(coll, PathCollection) and len(coll.get_offsets()):
                fc = coll.get_facecolors()
                sizes = coll.get_sizes()
                if len(fc) and np.allclose(fc[0][:3], 1):
                    out.add("no_ci")
                elif len(sizes) and sizes[0] <= 8:
                    out.add("passes")
            elif not isinstance(coll, (LineCollection, PathCollection)):
                out.add("band")  # fill_between
    return out


def _caption_kinds(caption: str) -> set[str]:
    words = {"ci": "filled markers", "no_ci": "hollow markers", "passes": "small dots", "band": "bands"}
    return {k for k, w in words.items() if w in caption.lower()}


@pytest.mark.parametrize("name", ["throughput_figure", "per_stream_figure", "ttft_figure"])
def test_concurrency_captions_describe_exactly_what_is_drawn(blocks, name):
    b = blocks[name]
    assert _caption_kinds(b.caption) == artist_kinds(b.figure), b.caption


def test_a_figure_without_intervals_promises_none(fixture_single_pass):
    b = sections.ttft_figure(fixture_single_pass)
    assert b is not None
    assert artist_kinds(b.figure) == {"no_ci"}
    assert _caption_kinds(b.caption) == {"no_ci"}, b.caption
    assert "legend" not in b.caption  # one statistic: no legend entry is promised


def test_several_ttft_statistics_are_each_in_the_legend(tmp_path):
    folder = tmp_path / "runs"
    for seat, stat in (("a-seat", "p50"), ("b-seat", "mean")):
        for p in (1, 2):
            ms = [_m("decode", "ttft_ms", 30 + c + p, "ms", c, statistic=stat) for c in (1, 4)]
            write_run(
                folder,
                f"{seat}-{p}.json",
                {
                    "format": "benchreport.run/1",
                    "run_id": f"{seat}-{p}",
                    "date": "2026-09-10",
                    "seat": {"id": seat, "model": "M", "role": "candidate"},
                    "harness": {"name": "in-house", "probe": "x", "max_tokens": 64},
                    "pass": p,
                    "warmup_excluded": True,
                    "measurements": ms,
                },
            )
    a = analyse(load([str(folder)]), Options(n_boot=200))
    b = sections.ttft_figure(a)
    assert "legend names each" in b.caption
    legend = " ".join(t.get_text() for t in b.figure.legends[0].get_texts())
    assert "(p50)" in legend and "(mean)" in legend
    assert "p50 or mean" in b.figure.axes[0].get_ylabel() or "mean or p50" in b.figure.axes[0].get_ylabel()


@pytest.fixture(scope="module")
def fixture_single_pass(tmp_path_factory):
    folder = tmp_path_factory.mktemp("single") / "runs"
    for i, seat in enumerate(("one-seat", "two-seat")):
        ms = [_m("decode", "ttft_ms", 30 + 5 * i + c, "ms", c, statistic="p50") for c in (1, 4, 16)]
        write_run(
            folder,
            f"{seat}.json",
            {
                "format": "benchreport.run/1",
                "run_id": seat,
                "date": "2026-09-10",
                "seat": {"id": seat, "model": "M", "role": "candidate"},
                "harness": {"name": "in-house", "probe": "x", "max_tokens": 64},
                "pass": 1,
                "warmup_excluded": True,
                "measurements": ms,
            },
        )
    return analyse(load([str(folder)]), Options(n_boot=200))


# --- dates -------------------------------------------------------------------------------------


def _history_measurements(n_dates: int) -> pd.DataFrame:
    dates = pd.date_range("2025-12-01", periods=n_dates, freq="D").strftime("%Y-%m-%d")
    rng = np.random.default_rng(1)
    return pd.DataFrame(
        {
            "seat": "seat-a",
            "workload": "decode",
            "concurrency": 16,
            "metric": "output_tok_s",
            "statistic": "mean",
            "date": np.repeat(dates, 2),
            "value": rng.normal(900, 20, 2 * n_dates),
            "pass": np.tile([1, 2], n_dates),
        }
    )


@pytest.mark.parametrize("n_dates", [30, 365])
def test_date_labels_do_not_overlap(n_dates):
    fig = F.seat_history(_history_measurements(n_dates))
    assert fig is not None
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    ax = fig.axes[0]
    boxes = [t.get_window_extent(renderer) for t in ax.get_xticklabels() if t.get_visible() and t.get_text()]
    assert len(boxes) >= 3, "too few date labels"
    boxes.sort(key=lambda b: b.x0)
    for left, right in zip(boxes, boxes[1:]):
        assert left.x1 <= right.x0, f"date labels overlap: {left} and {right}"
    # the labels stay inside the figure
    width = fig.get_figwidth() * fig.dpi
    assert boxes[0].x0 >= 0 and boxes[-1].x1 <= width
    assert "mean" in ax.get_ylabel()


# --- long names ------------------------------------------------------------------------------


def test_a_5000_character_seat_id_is_shortened_in_every_label():
    seat = "s" * 2500 + "-" + "t" * 2499
    cells = pd.DataFrame(
        {
            "seat": [seat, seat, "short"],
            "workload": "decode",
            "concurrency": [1, 4, 1],
            "metric": "output_tok_s",
            "statistic": "mean",
            "estimate": [100.0, 300.0, 90.0],
            "ci_low": np.nan,
            "ci_high": np.nan,
            "n_passes": 1,
            "values": ["100", "300", "90"],
        }
    )
    fig = F.throughput_vs_concurrency(cells)
    texts = [t.get_text() for t in fig.findobj(lambda o: hasattr(o, "get_text"))]
    assert max(len(t) for t in texts) <= fmt.MAX_LABEL + 10
    assert any(fmt.ELLIPSIS in t for t in texts)


def test_history_caption_says_how_many_panels_are_left_out(many_seats):
    b = sections.history_figure(many_seats)
    shown = sum(ax.get_visible() for ax in b.figure.axes)
    m = re.search(r"The first (\d+) of (\d+) are shown", b.caption)
    assert m and int(m.group(1)) == shown < int(m.group(2)), b.caption
