"""History across dates end to end: flags history.regression/improvement from a nightly archive,
tables/history.csv, the words, the report section (text, figure, table) and the site index."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import matplotlib.dates as mdates
import numpy as np
import pandas as pd
import pytest

from benchreport.flags.rules.history import history_changes
from benchreport.stats.history_summary import change_status
from benchreport.pipeline import Options, analyse_paths, write_analysis
from benchreport.report.model import sections
from benchreport.report.model.figures import save_figure
from benchreport.report.model.figures.history import MARKS, history_panels, panel_keys
from benchreport.stats.history import HISTORY_COLUMNS, history
from benchreport.thresholds import DEFAULT

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from generate_archive import generate_archive, nights  # noqa: E402
from history_study import DATES as YEAR, seat_year  # noqa: E402

DATES = nights("2026-01-01", 30)


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    """30 nights of 4 seats (5 passes of measurements, 1% pass noise); seat-001 10% slower from night 20
    (index 19); seat-003 8% faster on night 25 only (about 17 prediction SDs: one far night)."""
    root = tmp_path_factory.mktemp("archive") / "runs"
    generate_archive(root, seats=4, n_nights=30, passes=5, requests=0, concurrencies=(1, 16), step=(1, 19, 0.9))
    for f in (root / DATES[24]).glob("seat-003-p*.json"):
        doc = json.loads(f.read_text(encoding="utf-8"))
        for m in doc["measurements"]:
            m["value"] = round(m["value"] * 1.08, 3)
        f.write_text(json.dumps(doc), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def analysed(archive):
    return analyse_paths([archive], Options(n_boot=200))


def test_the_step_is_a_regression_on_its_night_and_the_one_night_jump_an_improvement(analysed):
    f = analysed.flags
    reg = f[f["code"] == "history.regression"]
    imp = f[f["code"] == "history.improvement"]
    assert list(reg["seats"]) == [("seat-001",)] and list(reg["severity"]) == ["warn"]
    assert list(imp["seats"]) == [("seat-003",)] and list(imp["severity"]) == ["info"]
    ev = reg.iloc[0]["evidence"]
    assert ev["dates"] == [DATES[19]] and ev["n_changes"] == 2
    assert {c["status"] for c in ev["changes"]} == {"level_shift"}
    assert {c["status"] for c in imp.iloc[0]["evidence"]["changes"]} == {"one_date"}
    assert ev["thresholds"] == {
        "history_alpha": 0.001,
        "history_window": 64,
        "history_min_level": 5,
        "noise": 0.02,
        "alpha": 0.05,
    }
    msg = reg.iloc[0]["message"]
    assert msg.startswith(
        f"seat-001: 2 regressions against its steady level on {DATES[19]}: aggregate throughput "
        "at 1 stream fell 9.9% to "
    )
    assert "one far night, and the next date repeated it: a step from that night" in msg and "p < 0.001" in msg
    assert "one bad night: the next date was back at the level" in imp.iloc[0]["message"]
    assert {c["change_kind"] for c in ev["changes"]} == {"night"} and {c["change_since"] for c in ev["changes"]} == {
        DATES[19]
    }
    # the stable seats raise nothing
    assert not {s for seats in f.loc[f["code"].str.startswith("history"), "seats"] for s in seats} & {
        "seat-000",
        "seat-002",
    }


def test_history_csv_and_the_section_7_words(analysed, tmp_path):
    write_analysis(analysed, tmp_path)
    h = pd.read_csv(tmp_path / "tables" / "history.csv")
    assert list(h.columns) == HISTORY_COLUMNS and len(h) == 4 * 2 * 30
    step = h[(h["seat"] == "seat-001") & (h["date"] == DATES[19])]
    assert set(step["verdict"]) == {"regression"} and np.allclose(step["change"], 0.9, atol=0.02)
    # a stable night's interval is the prediction interval around the level: the winsorised mean and
    # SD of the earlier nights (median +/- 2.5 x 1.4826 MAD), here recomputed with numpy and scipy
    one = h[(h["seat"] == "seat-000") & (h["concurrency"] == 16)].reset_index(drop=True)
    logs = np.log(one["estimate"].to_numpy())
    k = 12
    ref = logs[:k]
    med = np.median(ref)
    mad = 1.4826 * np.median(np.abs(ref - med))
    w = np.clip(ref, med - 2.5 * mad, med + 2.5 * mad)
    m, s = w.mean(), w.std(ddof=1)
    from scipy import stats

    t = stats.t.ppf(0.975, len(ref) - 1) * s * np.sqrt(1 + 1 / len(ref))
    assert one.loc[k, "verdict"] == "within_noise" and one.loc[k, "level_nights"] == len(ref)
    assert one.loc[k, "ci_low"] == pytest.approx(np.exp(logs[k] - m - t))
    assert one.loc[k, "ci_high"] == pytest.approx(np.exp(logs[k] - m + t))
    assert {"change_kind", "change_since", "cusum"} <= set(h.columns)
    flags = json.loads((tmp_path / "flags.json").read_text())
    assert {f["code"] for f in flags} >= {"history.regression", "history.improvement"}
    paras = dict(sections.limitations_paragraphs(analysed))
    assert "History across dates" in paras
    said = paras["History across dates"]
    assert said.startswith("Each seat's cells are judged date by date") and "Each date is judged" not in said
    assert f"seat-001: 2 regressions against its steady level on {DATES[19]}" in paras["History across dates"]


def test_no_history_without_several_dates(tmp_path):
    a = analyse_paths([ROOT / "data" / "example"], Options(n_boot=200))
    assert not a.flags["code"].str.startswith("history").any()
    assert sections.history_table(a) is None and sections.history_panels_figure(a) is None
    assert sections.history_text(a) is None  # the section is not printed (issue 42)
    write_analysis(a, tmp_path)
    assert list(pd.read_csv(tmp_path / "tables" / "history.csv").columns) == HISTORY_COLUMNS


def test_change_status_follows_the_next_date():
    rng = np.random.default_rng(5)
    vals = 100 * np.exp(rng.normal(0, 0.003, 50))
    vals[15] *= 0.9  # one date off
    vals[30:] *= 0.9  # a new level
    vals[49] *= 1.2  # the newest date, not confirmed yet
    rows = [
        dict(
            seat="S",
            harness="h",
            probe="p",
            workload="decode",
            concurrency=4,
            metric="output_tok_s",
            statistic="mean",
            date=d,
            estimate=float(v),
            n_passes=5,
        )
        for d, v in zip(nights("2026-01-01", 50), vals)
    ]
    h = history(pd.DataFrame(rows))
    st = change_status(h)
    decided = h["verdict"].isin(["regression", "improvement"]).to_numpy()
    assert list(zip(h.loc[decided, "date"], st[decided])) == [
        ("2026-01-16", "one_date"),
        ("2026-01-31", "level_shift"),
        ("2026-02-19", "latest"),
    ]
    assert list(h.loc[decided, "change_kind"]) == ["night"] * 3
    found = history_changes(h, thresholds=DEFAULT)
    assert [(f.code, f.severity, f.dates) for f in found] == [
        ("history.improvement", "info", ["2026-02-19"]),
        ("history.regression", "warn", ["2026-01-31", "2026-01-16"]),
    ]


def test_section_text_and_table(analysed):
    text = str(sections.history_text(analysed))
    assert "8 cells of 4 seats measured on more than one date" in text
    assert "p &lt; 0.001 a night of a false signal after a Bonferroni correction" in text
    assert "two-sided CUSUM" in text and "a step, a drift or one bad night" in text
    assert "2 regressions and 2 improvements on 2 dates (2 followed by a new level)" in text
    t = sections.history_table(analysed)
    assert list(t.data["Date"]) == [DATES[24]] * 2 + [DATES[19]] * 2  # newest first
    assert list(t.data["Verdict"]) == ["improvement"] * 2 + ["regression"] * 2
    assert list(t.data["Next date"]) == ["one date off its level"] * 2 + ["confirmed: new level"] * 2
    assert list(t.data["Kind"]) == ["one night"] * 4
    assert t.data["Change"].iloc[2].startswith("−") or t.data["Change"].iloc[2].startswith("-")


def _year(n_seats: int) -> pd.DataFrame:
    rng = np.random.default_rng(9)
    frames = [
        seat_year(rng, pass_cv=0.01, night_cv=0.0, outliers=0.0, step=0.05 if s == 1 else None).assign(
            seat=f"seat-{s:03d}"
        )
        for s in range(n_seats)
    ]
    return history(pd.concat(frames, ignore_index=True))


def test_the_figure_at_365_dates_reads_and_marks_by_shape(tmp_path):
    h = _year(3)
    keys, n = panel_keys(h, max_panels=8)
    assert n == 15 and len(keys) == 8
    assert [k[0] for k in keys[:3]] == ["seat-001", "seat-000", "seat-002"]  # every seat's first panel first
    fig = history_panels(h, max_panels=8)
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        assert isinstance(ax.xaxis.get_major_locator(), mdates.AutoDateLocator)
        assert isinstance(ax.xaxis.get_major_formatter(), mdates.ConciseDateFormatter)
    save_figure(fig, tmp_path, "history", ("png",))
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    ax0, bottom = fig.axes[0], fig.axes[7]  # the first panel; a panel of the bottom row (labelled dates)
    labels = [t.get_text() for t in bottom.get_xticklabels() if t.get_text()]
    assert 3 <= len(labels) <= 8, labels
    assert "2026" in labels[0] and not any(len(x) > 8 for x in labels), labels  # concise: 'Mar', not dates
    boxes = [t.get_window_extent(canvas.get_renderer()) for t in bottom.get_xticklabels() if t.get_text()]
    assert all(a.x1 <= b.x0 for a, b in zip(boxes, boxes[1:])), "tick labels overlap"
    # the confirmed shift of seat-001 is a diamond, told apart from the triangles by its shape
    shapes = {tuple(np.round(c.get_paths()[0].vertices, 3).ravel()) for c in ax0.collections if c.get_paths()}
    from matplotlib.markers import MarkerStyle

    diamond = tuple(
        np.round(
            MarkerStyle(MARKS["level_shift"][0])
            .get_path()
            .transformed(MarkerStyle(MARKS["level_shift"][0]).get_transform())
            .vertices,
            3,
        ).ravel()
    )
    assert diamond in shapes
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "confirmed level shift" in legend


def test_a_stable_year_raises_at_most_one_false_regression_per_seat():
    h = _year(4)
    stable = h[h["seat"] != "seat-001"]
    per_seat = stable[stable["verdict"] == "regression"].groupby("seat")["date"].nunique()
    assert per_seat.sum() <= 3  # three stable seat-years
    # the 5% step from night 200: every cell a regression within a few nights, called a step since then
    step = h[(h["seat"] == "seat-001") & (h["verdict"] == "regression")]
    first = step.groupby(["concurrency", "metric", "statistic"])["date"].min()
    assert len(first) == 20 and (first >= YEAR[200]).all() and (first <= YEAR[206]).all()
    assert set(step["change_kind"]) <= {"step", "night"} and (step["change_since"] >= YEAR[198]).all()


def test_a_history_without_changes_says_so_and_shows_the_headline_metric_first():
    rng = np.random.default_rng(2)
    rows = [
        dict(
            seat="S",
            harness="h",
            probe="p",
            workload="decode",
            concurrency=4,
            metric=m,
            statistic="mean",
            date=d,
            estimate=float(100 * np.exp(rng.normal(0, 0.002))),
            n_passes=5,
        )
        for m in ("decode_tok_s_per_stream", "output_tok_s", "ttft_ms")
        for d in DATES
    ]
    h = history(pd.DataFrame(rows))
    assert not h["verdict"].isin(["regression", "improvement"]).any()
    keys, n = panel_keys(h, max_panels=2)
    assert n == 3 and [k[1] for k in keys] == ["output_tok_s", "ttft_ms"]
    a = SimpleNamespace(history=h, options=Options())
    text = str(sections.history_text(a))
    assert "Of 90 dated verdicts none is a regression or an improvement" in text
    assert "no seat&#39;s cell moved beyond its noise band" in text and sections.history_table(a) is None


def test_cells_of_one_concurrency_in_a_panel_are_told_apart_by_line_style():
    """Two workloads of one seat at the same concurrency share the concurrency's colour: their lines
    differ in style and the figure notes it for its caption (issue 42: two like lines in one panel)."""
    from benchreport.report.model.figures.theme import drawn

    h = _year(1)
    two = pd.concat([h, h.assign(workload="other", estimate=h["estimate"] * 1.1)], ignore_index=True)
    fig = history_panels(two, max_panels=1)
    lines = [ln for ln in fig.axes[0].get_lines() if len(ln.get_xdata()) > 2]
    by_colour: dict = {}
    for ln in lines:
        by_colour.setdefault(ln.get_color(), set()).add(ln.get_linestyle())
    assert any(len(styles) == 2 for styles in by_colour.values()), by_colour
    assert "line_styles" in drawn(fig)
    assert "line_styles" not in drawn(history_panels(h, max_panels=1))  # one cell per concurrency: no note
