"""The analyst's side (benchreport.explore): readable views, `compare`, interactive figures, widgets.

Checked against independent routes: per-pass values against the passes table, request
quantiles against numpy on the raw records, a comparison's interval against scipy's Welch
test on log pass values, and `compare(a, x, y)` against a report analysed with baseline x.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import benchreport
from benchreport import explore
from benchreport.explore import plots
from benchreport.pipeline import Options, analyse_paths
from benchreport.report.model.sections.labels import seat_label
from runs import make_run, set_path, write_run

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "data" / "example"
XSS_MODEL = "<script>alert(1)</script>"
BASE = [896.9, 910.2, 902.5]
CAND = [951.0, 960.4, 955.1]
OTHER = [700.0, 820.0, 760.0]


def three_seats(d: Path) -> Path:
    """An incumbent and two candidates, three passes each of one cell (the second candidate's
    model named like a script)."""
    for p in range(3):
        for seat, values, role, model in (
            ("base", BASE, "incumbent", "Qwen"),
            ("cand", CAND, "candidate", "GLM"),
            ("other", OTHER, "candidate", XSS_MODEL),
        ):
            run = make_run(run_id=f"{seat}-p{p + 1}", **{"pass": p + 1})
            run["seat"] = {**run["seat"], "id": seat, "role": role, "model": model}
            run["measurements"] = run["measurements"][:1]  # aggregate throughput at 16 streams
            set_path(run, "measurements.0.value", values[p])
            write_run(d, f"{seat}-{p + 1}.json", run)
    return d


@pytest.fixture(scope="module")
def example():
    return analyse_paths([str(EXAMPLE)], Options(n_boot=200))


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    return analyse_paths([str(three_seats(tmp_path_factory.mktemp("three")))], Options(n_boot=200))


# --- views -----------------------------------------------------------------------------------
def test_seats_are_labels_and_flags_whole(example):
    sv = explore.seats_view(example)
    assert list(sv["seat"]) == [seat_label(example, s) for s in explore.seat_labels(example)]
    assert sv["seat"].iloc[0].startswith(example.baseline)  # the baseline first
    fv = explore.flags_view(example)
    assert len(fv) == len(example.flags)
    assert all(isinstance(s, str) and "(" not in s[:1] and "'" not in s for s in fv["seats"])  # not tuples
    assert sorted(fv["message"]) == sorted(example.flags["message"].astype(str))  # never cut
    assert max(map(len, fv["message"])) > 200


def test_per_pass_values_are_lists_in_pass_order(example):
    cv = explore.cells_view(example, passes_as="columns")
    assert len(cv) == len(example.cells)
    assert all(isinstance(v, list) for v in cv["values"])
    p = example.passes
    multi = cv[cv["values"].map(len) >= 2]
    assert len(multi) >= 2
    ids = {v: k for k, v in explore.seat_labels(example).items()}
    for i, r in zip(multi.index, multi.itertuples()):
        c = p[
            (p["seat"] == ids[r.seat])
            & (p["metric"] == r.metric)
            & (p["statistic"] == r.statistic)
            & (p["workload"] == r.workload)
            & (p["date"] == r.date)
        ]
        if pd.notna(r.concurrency):
            c = c[c["concurrency"] == r.concurrency]
        assert list(c.sort_values("pass")["value"]) == pytest.approx(r.values)  # independent: the passes table
        assert [multi.loc[i, f"pass {k + 1}"] for k in range(len(r.values))] == pytest.approx(r.values)
    assert "pass 1" in cv.columns and "values" in cv.columns


def test_filters_and_unknown_seats(example):
    cv = explore.cells_view(example, metric="output_tok_s", concurrency=16)
    assert set(cv["metric"]) == {"output_tok_s"} and set(cv["concurrency"]) == {16}
    with pytest.raises(ValueError, match="unknown seat.*'nope'.*the seats are: qwen3.8-flash-next-tp2"):
        explore.cells_view(example, seats=["nope"])


def test_request_summary_matches_numpy_on_the_records():
    a = analyse_paths([str(ROOT / "tests" / "fixtures" / "harness" / "aiperf-sweep")], Options(n_boot=200))
    s = explore.request_summary(a, "ttft_ms")
    r = a.tables.requests
    assert s["requests"].sum() == len(r)
    assert len(s) == r.groupby(["seat", "workload", "concurrency", "pass"], dropna=False).ngroups
    row = s.iloc[-1]
    raw = r[(r["concurrency"] == row["concurrency"]) & (r["pass"] == row["pass"])]["ttft_ms"].dropna().to_numpy(float)
    assert row["ttft_ms p90"] == pytest.approx(np.percentile(raw, 90))
    assert row["ttft_ms mean"] == pytest.approx(raw.mean())
    one = explore.request_summary(
        a, "ttft_ms", pass_=int(row["pass"]), concurrency=int(row["concurrency"]), harness="aiperf"
    )
    assert len(one) == 1 and one["requests"].iloc[0] == len(raw) + int(
        np.isnan(
            r[(r["concurrency"] == row["concurrency"]) & (r["pass"] == row["pass"])]["ttft_ms"].astype(float)
        ).sum()
    )
    assert explore.request_summary(a, "ttft_ms", harness="vllm").empty


# --- compare ---------------------------------------------------------------------------------
def test_compare_with_the_baseline_is_the_reports_row(example):
    c = benchreport.compare(example, example.baseline, "glm-5.3-flash-nvfp4-tp4-2node")
    rep = example.comparisons
    rep = rep[(rep["kind"] == "baseline") & (rep["candidate"] == "glm-5.3-flash-nvfp4-tp4-2node")]
    assert len(c) == len(rep) >= 2
    assert list(c["ratio"]) == pytest.approx(list(rep["ratio"]))
    assert list(c["verdict"]) == list(rep["verdict"])
    prefill = c[c["metric"] == "prefill_tok_s"]
    assert "trap.prefix_cache" in prefill["flags"].iloc[0]  # the flag on the prefill cell touches it ...
    assert all("trap.prefix_cache" not in f for f in c[c["metric"] != "prefill_tok_s"]["flags"])  # ... only it


def test_compare_any_pair_is_what_a_report_with_that_baseline_says(tmp_path, three):
    c = benchreport.compare(three, "cand", "other")
    again = analyse_paths([str(three_seats(tmp_path))], Options(n_boot=200, baseline="cand")).comparisons
    again = again[(again["kind"] == "baseline") & (again["candidate"] == "other")]
    assert len(c) == len(again) == 1
    for col in ("ratio", "ci_low", "ci_high", "p_value", "p_adj"):
        assert c[col].iloc[0] == pytest.approx(again[col].iloc[0]), col
    assert c["verdict"].iloc[0] == again["verdict"].iloc[0]


def test_compare_interval_is_welchs_on_log_pass_values(three):
    from scipy import stats

    c = benchreport.compare(three, "base", "cand")
    lb, lc = np.log(BASE), np.log(CAND)
    res = stats.ttest_ind(lc, lb, equal_var=False)
    ci = res.confidence_interval(0.95)
    row = c.iloc[0]
    assert row["ratio"] == pytest.approx(math.exp(lc.mean() - lb.mean()))
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((math.exp(ci.low), math.exp(ci.high)))
    assert row["p_value"] == pytest.approx(res.pvalue)
    assert row["baseline_values"] == pytest.approx(BASE) and row["candidate_values"] == pytest.approx(CAND)
    assert row["verdict"] == "better"  # +5.9%, CI clear of the 2% band, one comparison per family... Holm
    assert isinstance(c, explore.Comparison) and type(c[c["verdict"] == "better"]) is pd.DataFrame


def test_compare_refuses_unknown_or_equal_seats(three):
    with pytest.raises(ValueError, match=r"unknown seat\(s\) 'nope'; the seats are: base, cand, other"):
        benchreport.compare(three, "base", "nope")
    with pytest.raises(ValueError, match="two different seats"):
        benchreport.compare(three, "base", "base")


def test_compare_html_is_readable_and_escaped(three):
    c = benchreport.compare(three, "base", "other")
    page = c._repr_html_()
    assert XSS_MODEL not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<table>" in page and "aggregate throughput at 16 streams" in page
    assert f"<td>{c['verdict'].iloc[0].replace('_', ' ')}</td>" in page and c.summary() in page


# --- plots -----------------------------------------------------------------------------------
def test_concurrency_plot_draws_the_cis_it_is_given(example):
    fig = plots.concurrency_plot(example, "output_tok_s")
    tr = {t.name: t for t in fig.data}
    exl3 = next(t for n, t in tr.items() if n.startswith("glm-5.3-flash-exl3"))
    cell = example.cells[
        (example.cells["seat"] == "glm-5.3-flash-exl3-4.0bpw-1node")
        & (example.cells["metric"] == "output_tok_s")
        & (example.cells["statistic"] == "mean")
    ]
    cell = cell.sort_values("concurrency")
    assert list(exl3.y) == pytest.approx(list(cell["estimate"]))
    assert list(exl3.error_y.array) == pytest.approx(list((cell["ci_high"] - cell["estimate"]).fillna(0)))
    solid = [not str(s).endswith("-open") for s in exl3.marker.symbol]
    assert solid == list(cell["ci_low"].notna())  # hollow exactly where there is no CI
    assert fig.layout.xaxis.type == "log" and "mean" in fig.layout.yaxis.title.text
    assert (
        len({t.marker.symbol[0] if isinstance(t.marker.symbol, tuple) else t.marker.symbol for t in fig.data}) > 1
    )  # shape as a second cue


def test_plot_text_from_data_is_escaped(three):
    from dataclasses import replace

    hostile = replace(three, cells=three.cells.assign(workload="<script>alert(1)</script>"))
    figs = [plots.passes_plot(hostile, "output_tok_s"), plots.concurrency_plot(hostile, "output_tok_s")]
    text = json.dumps([f.to_plotly_json() for f in figs], default=str)
    assert "&lt;script&gt;alert(1)" in text and "<script>" not in text


def test_requests_plot_has_every_request():
    a = analyse_paths([str(ROOT / "tests" / "fixtures" / "harness" / "guidellm")], Options(n_boot=200))
    fig = plots.requests_plot(a, "ttft_ms")
    assert sum(len(t.y) for t in fig.data) == int(a.tables.requests["ttft_ms"].notna().sum())
    assert plots.requests_plot(a, "ttft_ms", harness="none-such") is None


# --- the explorer ----------------------------------------------------------------------------
def test_explorer_state_drives_the_views(example):
    ex = explore.Explorer(example)
    assert ex.state["baseline"] == example.baseline
    # the default candidate shares the most cells with the baseline
    counts = example.comparisons[example.comparisons["kind"] == "baseline"]["candidate"].value_counts()
    assert ex.state["candidate"] == counts.index[0]
    n_all = len(ex.cells_table())
    ex.state.update(metric="decode_tok_s_per_stream", concurrency=1)
    t = ex.cells_table()
    assert 0 < len(t) and set(t["metric"]) == {"decode_tok_s_per_stream"} and len(t) != n_all
    assert "metric: decode_tok_s_per_stream; concurrency: 1" == ex.describe("metric", "concurrency")
    with pytest.raises(ValueError, match="unknown seat"):
        explore.Explorer(example, baseline="nope")


def test_widgets_redraw_on_change(example, monkeypatch):
    """A change of a widget's value replaces each view through its display id."""
    pytest.importorskip("ipywidgets")
    import IPython.display as ipd

    handles = []

    class Handle:
        def __init__(self, obj):
            self.shown = [obj]
            handles.append(self)

        def update(self, obj):
            self.shown.append(obj)

    monkeypatch.setattr(ipd, "display", lambda obj, display_id=False: Handle(obj) if display_id else None)
    ex = explore.Explorer(example)
    ex.show_cells()
    table, conc, _passes = handles
    assert "output_tok_s" in table.shown[-1].data
    ex.widgets["metric"].value = "decode_tok_s_per_stream"
    assert ex.state["metric"] == "decode_tok_s_per_stream"
    assert "decode_tok_s_per_stream" in table.shown[-1].data and "output_tok_s" not in table.shown[-1].data
    bundle = conc.shown[-1]._repr_mimebundle_()
    assert "per-stream decode" in bundle["application/vnd.plotly.v1+json"]["layout"]["title"]["text"]
    assert "cdn" not in bundle["text/html"].lower()
    ex.widgets["concurrency"].value = 1
    assert ex.state["concurrency"] == 1
    from benchreport.explore.display import ALL

    ex.widgets["concurrency"].value = ALL
    assert ex.state["concurrency"] is None


def test_interactive_table_is_offline_and_escaped(three):
    html = explore.interactive_table(explore.seats_view(three)).data
    assert "new ITable" in html and "window._itables_" in html  # the embedded bundle, not a URL
    assert "cdn" not in html.lower() and "<script>alert" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_compare_html_folds_a_long_flag_list(example):
    c = benchreport.compare(example, example.baseline, "glm-5.3-flash-nvfp4-tp4-2node")
    html = c._repr_html_()
    many = [f for f in c["flags"] if len(f) > 3]
    assert many, "the example pair has cells touched by more than three flags"
    assert f"<summary>{len(many[0])} flags</summary>" in html


# --- every harness format ----------------------------------------------------------------------
def test_compare_any_pair_of_seats_of_every_harness_format():
    """`compare` on every ordered pair of seats of the folder of every captured harness format (a real
    folder: no model names, several loads, NA probes) gives a table or a clear ValueError, never a
    crash (issue 31: `r["probe"] or ""` raised on NA)."""
    from itertools import permutations

    a = explore.open_runs(str(Path(__file__).parent / "fixtures"), n_boot=100)
    seats = sorted(a.tables.seats["seat"].astype(str))
    assert len(seats) >= 5
    shared = 0
    for x, y in permutations(seats, 2):
        table = explore.compare(a, x, y)
        assert list(table.columns[: len(explore.COMPARE_COLUMNS)]) == list(explore.COMPARE_COLUMNS)
        page = table._repr_html_()
        assert "benchreport-compare" in page and ("<table" in page or not len(table))
        shared += len(table)
    assert shared > 0


def test_tables_show_figures_rounded_as_the_report_while_the_data_keep_them_whole(example):
    """A cell's estimate shows as the report prints it (format.num: 50.9, 7,412), a p-value as
    format.pval and a ratio as format.ratio3; the view's frame keeps the full value."""
    from benchreport.explore.display import _flat_for_display

    df = pd.DataFrame(
        {
            "estimate": [50.9011, 7412.4, 0.81234, np.nan],
            "ratio": [1.04567, 0.81234, 2.0, 1.0],
            "ci_low": [0.9512, 0.7, 1.9, np.nan],
            "p_value": [0.31234, 0.0004, 0.004567, 0.05],
            "values": [[50.9011, 51.02], [7412.4], [], [1.0]],
        }
    )
    shown = _flat_for_display(df)
    assert shown["estimate"].tolist() == ["50.9", "7,412", "0.812", ""]
    assert shown["ratio"].tolist() == ["1.05", "0.812", "2", "1"]
    assert shown["ci_low"].tolist() == ["0.951", "0.7", "1.9", ""]  # a ratio's interval, in a table of ratios
    assert shown["p_value"].tolist() == ["0.31", "< 0.001", "0.005", "0.05"]
    assert shown["values"].tolist()[0] == "[50.9, 51.0]"
    assert df["estimate"].iloc[0] == 50.9011  # the frame given is not changed
    cells = explore.cells_view(example)
    raw = cells["estimate"].dropna()
    assert (raw != raw.round(1)).any()  # full precision in the data
    html = explore.interactive_table(cells).data
    assert f"{raw[raw != raw.round(1)].iloc[0]:.6g}" not in html  # and rounded on screen
