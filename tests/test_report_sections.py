"""Report building blocks without papermill: escaping, numbering, exclusions, fleet scale, figures."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from markupsafe import Markup

from benchreport import format as fmt
from benchreport.load import load
from benchreport.pipeline import Options, analyse
from benchreport.report import RefusedFiles, Report
from benchreport.report.model import figures
from benchreport.report.render import html as render
from benchreport.report.model import sections
from benchreport.report.model.sections.blocks import Paragraph, Prose
from runs import write_run
from test_report_e2e import XSS_MODEL, write_fixture_runs


@pytest.fixture(scope="module")
def fixture_analysis(tmp_path_factory):
    folder = write_fixture_runs(tmp_path_factory.mktemp("fx") / "data")
    return analyse(load([str(folder)]), Options(n_boot=200))


def _html(block) -> str:
    if isinstance(block, sections.Table):
        return str(render.table_html(block, "Table 9"))
    return str(block)


# --- escaping ------------------------------------------------------------------------------


def test_table_html_escapes_every_cell_caption_and_group():
    df = pd.DataFrame({"seat": ["<b>s</b>"], "Model": [XSS_MODEL], "Note": ['" onmouseover="x']})
    t = sections.Table(df, "caption <i>x</i>", group="seat", numeric=("Model",))
    html = str(render.table_html(t, "Table 1"))
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<b>s</b>" not in html and "<i>x</i>" not in html
    assert 'onmouseover="x' not in html
    assert '<span class="label">Table 1.</span>' in html


def test_sections_escape_data_strings(fixture_analysis):
    a = fixture_analysis
    html = "".join(
        _html(b)
        for b in (
            sections.title_block("<script>t</script>", a),
            sections.abstract(a),
            sections.seats_table(a),
            sections.runs_table(a),
            sections.results_table(a),
            sections.exam_scores_table(a),
            sections.traps(a),
            *sections.faults(a),
            sections.limitations(a),
            sections.files_table(a),
        )
    )
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img src=x" not in html


def test_check_offline_rejects_scripts_and_remote_resources():
    render.check_offline('<p>ok</p><img src="data:image/png;base64,AAAA">')
    for bad in (
        "<script>1</script>",
        '<img src="https://x/y.png">',
        '<link href="//cdn/x.css">',
        "<style>@import url(x.css)</style>",
    ):
        with pytest.raises(render.OfflineError):
            render.check_offline(bad)


def test_text_that_looks_like_css_is_not_a_stylesheet():
    """A model name or title with "@import" or "url(//x)" is escaped text, not CSS: the page is
    accepted (it used to fail the build)."""
    page = render.prose_html(Prose((Paragraph(("model @import url(//cdn.example/x.css)",)),)))
    render.check_offline(str(page))
    render.check_self_contained(str(page))
    with pytest.raises(render.OfflineError):
        render.check_offline('<p style="background: url(//cdn.example/x.png)">x</p>')


def test_self_contained_pages_load_data_uris_only():
    """What Chromium may load when it prints the report: data: URIs and in-page anchors only."""
    render.check_self_contained(
        '<img src="data:image/png;base64,AAAA"><a href="https://example.org">x</a>'
        '<a href="#table-1">t</a><style>.x{background:url("data:image/png;base64,AA")}</style>'
    )
    for bad in (
        '<img src="/etc/passwd">',
        "<img alt='x' src=file:///etc/hostname>",
        '<link href="x.css">',
        '<img src="data:x" srcset="a.png 2x">',
        '<div style="background:url(../x.png)">x</div>',
        "<style>.x{background:url(local.png)}</style>",
        '<iframe src="other.html">',
    ):
        with pytest.raises(render.OfflineError):
            render.check_self_contained(bad)


def test_pdf_fetcher_is_offline():
    from benchreport.report.render.pdf import offline_fetcher

    f = offline_fetcher()
    for url in ("http://example.invalid/x.png", "https://example.invalid/x.css", "file:///etc/hostname"):
        with pytest.raises(ValueError):
            f.fetch(url)
    assert f.fetch("data:text/plain;base64,aGk=") is not None


# --- results --------------------------------------------------------------------------------


def test_table1_drops_a_cell_that_still_holds_an_excluded_figure(fixture_analysis):
    """Even if the statistics kept the prefix-cache hit, Table 1 must not show it."""
    a = fixture_analysis
    assert sections.excluded_figures(a) and sections.excluded_figures(a)[0]["value"] == 95941
    leaked = a.cells.iloc[[0]].copy()
    leaked[["seat", "workload", "metric", "statistic"]] = ["glm-nvfp4-2node", "prefill", "prefill_tok_s", "max"]
    leaked[["estimate", "values", "n_passes"]] = [95941.0, "95941.0", 1]
    b = type(a)(
        a.loaded,
        a.tables,
        pd.concat([a.cells, leaked], ignore_index=True),
        a.comparisons,
        a.exam_deltas,
        a.flags,
        a.options,
    )
    html = _html(sections.results_table(b))
    assert "95,941" not in html and "4,711" in html
    assert "excluded from this table" in html


def test_abstract_states_headline_ci_and_strongest_caveat(fixture_analysis):
    text = re.sub(r"<[^>]+>", "", str(sections.abstract(fixture_analysis)))
    assert "inc-tp2" in text and "ratio of" in text
    assert "896.9 and 982.5 tok/s in two passes" in text
    assert "no CI for the seats" in text
    assert "The strongest caveat (critical): " in text and "prefix-cache hit" in text and "95,941" in text
    assert "trap.prefix_cache" not in text  # the reader gets the finding, not its code (issue 42)


def test_no_incumbent_means_no_comparison(tmp_path):
    for p, v in enumerate((47.7, 48.1), 1):
        run = {
            "format": "benchreport.run/1",
            "run_id": f"c-{p}",
            "date": "2026-10-25",
            "seat": {"id": "cand", "model": "GLM"},
            "harness": {"name": "x"},
            "pass": p,
            "measurements": [
                {"workload": "code", "concurrency": 1, "metric": "decode_tok_s_per_stream", "value": v, "unit": "tok/s"}
            ],
        }
        write_run(tmp_path, f"c-{p}.json", run)
    a = analyse(load([str(tmp_path)]), Options(n_boot=200))
    assert a.baseline is None
    text = str(sections.abstract(a)) + str(sections.comparison_text(a))
    assert "No seat is marked as the incumbent" in text
    assert sections.comparison_table(a) is None and sections.ratio_figure(a) is None


def test_report_open_refuses_bad_files_unless_skip_bad(tmp_path):
    folder = write_fixture_runs(tmp_path / "data")
    with pytest.raises(RefusedFiles, match="broken.json"):
        Report.open([str(folder)], out=tmp_path / "out", n_boot=200, display=False)
    assert not (tmp_path / "out").exists()
    rep = Report.open([str(folder)], out=tmp_path / "out", n_boot=200, skip_bad=True, display=False)
    assert (tmp_path / "out" / "flags.json").is_file()
    rep.show(sections.refused_table(rep.analysis))
    assert "broken.json" in rep.html() and "Table A1" in rep.html()


def test_report_numbers_tables_and_figures_and_names_files_by_counter(fixture_analysis, tmp_path):
    rep = Report(fixture_analysis, out=tmp_path, title=XSS_MODEL, display=False)
    rep.show(
        sections.results_table(fixture_analysis),
        sections.throughput_figure(fixture_analysis),
        sections.comparison_table(fixture_analysis),
        sections.per_pass_figure(fixture_analysis),
        sections.files_table(fixture_analysis),
        None,
    )
    html = rep.html()
    assert re.findall(r"(Table \d+|Table A\d+|Figure \d+)\.</span>", html) == [
        "Table 1",
        "Figure 1",
        "Table 2",
        "Figure 2",
        "Table A1",
    ]
    assert sorted(p.name for p in (tmp_path / "figures").iterdir()) == [
        "figure-01.png",
        "figure-01.svg",
        "figure-02.png",
        "figure-02.svg",
    ]
    with pytest.raises(TypeError):
        rep.show("a plain string is not safe to show")


# --- fleet scale ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """50 seats, 4 concurrency levels, 3 passes each: the scale the report must stay readable at."""
    folder = tmp_path_factory.mktemp("fleet")
    rng = np.random.default_rng(0)
    for s in range(50):
        seat = {
            "id": f"fleet-seat-{s:02d}-with-a-long-descriptive-name",
            "model": f"Model-{s % 5}",
            "role": "incumbent" if s == 0 else "candidate",
            "placement": {"nodes": 1, "gpus_per_node": 2, "tensor_parallel": 2},
        }
        base = 80 + 3 * s
        for p in range(1, 4):
            ms = []
            for c in (1, 4, 16, 64):
                ms.append(
                    {
                        "workload": "decode",
                        "concurrency": c,
                        "metric": "output_tok_s",
                        "unit": "tok/s",
                        "value": float(base * c**0.7 * (1 + 0.02 * rng.standard_normal())),
                    }
                )
                ms.append(
                    {
                        "workload": "decode",
                        "concurrency": c,
                        "metric": "ttft_ms",
                        "unit": "ms",
                        "statistic": "p50",
                        "value": float(30 + 5 * c + rng.uniform(0, 3)),
                    }
                )
            run = {
                "format": "benchreport.run/1",
                "run_id": f"s{s:02d}-p{p}",
                "date": "2026-11-01",
                "seat": seat,
                "harness": {"name": "in-house", "probe": "fixed-512"},
                "pass": p,
                "warmup_excluded": True,
                "measurements": ms,
            }
            write_run(folder, f"s{s:02d}-p{p}.json", run)
    return analyse(load([str(folder)]), Options(n_boot=200))


def test_fleet_table1_is_cut_and_the_appendix_has_every_cell(fleet):
    t1 = sections.results_table(fleet)
    every = sections.all_cells_table(fleet)
    assert len(t1) <= sections.MAX_BODY_ROWS
    assert "Table A1" in t1.note and every is not None and len(every) == len(fleet.cells) == 400
    seats_shown = set(t1.data["seat"])
    assert any("fleet-seat-00" in s for s in seats_shown)  # the baseline is always shown
    # one row per seat and cell; one workload and one pass count are said once, in the note
    assert every.data.groupby(["seat", "Metric", "Conc."]).size().max() == 1
    assert "Workload" not in every.data.columns and "Every row: workload decode, passes 3." in every.note
    # a cell with no mean (TTFT p50 here) names its statistic
    assert set(every.data["Stat."]) == {"mean", "p50"}


@pytest.fixture(scope="module")
def fleet_requests(tmp_path_factory):
    """25 seats with per-request records (benchmarks/generate.py): 200 requests a pass support a mean and
    p50, p90 and p95 (n(1-q) >= 10), not p99."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from generate import generate

    folder = tmp_path_factory.mktemp("fleet-requests")
    generate(folder, seats=25, passes=3, requests=200, concurrencies=(1, 4))
    return analyse(load([str(folder)]), Options(n_boot=200))


def test_fleet_appendix_has_one_row_per_seat_and_cell_with_statistics_as_columns(fleet_requests):
    a = fleet_requests
    cells = a.cells
    every = sections.all_cells_table(a)
    n_cells = cells.groupby(["seat", "workload", "concurrency", "metric"]).ngroups
    assert len(cells) >= 3 * n_cells and len(every) == n_cells == 25 * 2 * 5
    assert list(every.data.columns) == [
        "seat",
        "Metric",
        "Conc.",
        "n",
        "Mean",
        "95% CI",
        "p50",
        "p90",
        "p95",
        "Per pass, in order",
    ]
    assert every.dense and every.kind == "appendix"
    assert "tables/cells.csv" in every.note
    # the figures are the cells' own: one row checked against the long table
    row = every.data[
        (every.data["seat"].str.startswith("seat-003 "))
        & (every.data["Metric"] == "TTFT (ms)")
        & (every.data["Conc."] == "4")
    ].iloc[0]
    cell = cells[(cells["seat"] == "seat-003") & (cells["metric"] == "ttft_ms") & (cells["concurrency"] == 4)]
    est = dict(zip(cell["statistic"], cell["estimate"]))
    assert row["Mean"] == fmt.num(est["mean"]) and row["p95"] == fmt.num(est["p95"])
    mean = cell[cell["statistic"] == "mean"].iloc[0]
    assert row["95% CI"] == fmt.ci(mean["ci_low"], mean["ci_high"])
    # Table 1 keeps to its row budget, baseline first
    t1 = sections.results_table(a)
    assert len(t1) <= sections.MAX_BODY_ROWS and t1.data["seat"].iloc[0].startswith("seat-000 ")
    text = str(sections.results_text(a))
    assert f"{fmt.count(len(cells))} estimates in {fmt.count(n_cells)} cells" in text and "Table A1" in text


def test_fleet_comparisons_appendix_has_one_row_per_candidate_and_cell(fleet_requests):
    a = fleet_requests
    c = a.comparisons[a.comparisons["baseline"] == a.baseline]
    every = sections.all_comparisons_table(a)
    n_rows = c.groupby(["candidate", "workload", "concurrency", "metric"]).ngroups
    assert len(every) == n_rows < len(c)
    assert list(every.data.columns) == [
        "candidate",
        "Metric",
        "Conc.",
        "Baseline",
        "Candidate",
        "Ratio",
        "95% CI",
        "Verdict",
        "p50",
        "p90",
        "p95",
    ]
    row = every.data[
        (every.data["candidate"] == f"seat-007 vs {a.baseline}")
        & (every.data["Metric"] == "ITL (ms)")
        & (every.data["Conc."] == "1")
    ].iloc[0]
    comp = c[(c["candidate"] == "seat-007") & (c["metric"] == "itl_ms") & (c["concurrency"] == 1)]
    by_stat = {r["statistic"]: r for _, r in comp.iterrows()}
    assert row["Ratio"] == fmt.ratio3(by_stat["mean"]["ratio"])
    assert row["Verdict"] == by_stat["mean"]["verdict"].replace("_", " ")
    p95 = by_stat["p95"]
    assert row["p95"] == f"{fmt.ratio3(p95['ratio'])} {sections.VERDICT_MARKS[p95['verdict']]}"
    assert "tables/comparisons.csv" in every.note and "+ better" in every.note
    body = sections.comparison_table(a)
    assert len(body) <= sections.MAX_COMPARISON_ROWS and "appendix lists every comparison" in body.note


def test_fleet_appendix_text_names_the_long_tables_and_numbers_the_files_table(fleet_requests):
    a = fleet_requests
    lead = str(sections.appendix_text(a))
    assert "Tables A1 and A2" in lead and "tables/cells.csv" in lead and "tables/comparisons.csv" in lead
    assert f"listed in Table A{3 + bool(len(a.flags))}" in str(sections.provenance_text(a))
    files = sections.files_table(a)
    # many files: one row per folder (provenance.csv lists every file with its hash)
    assert list(files.data.columns) == ["Folder", "Files", "Format", "Harness and version"]
    assert files.data["Files"].tolist() == ["75"] and "provenance.csv" in files.note


def test_table1_is_the_headline_summary_and_table_a1_has_every_statistic(fixture_analysis):
    """Table 1 holds each seat and condition's headline figures (throughput at its mean, latencies at
    their median) with their intervals; Table A1 has every statistic, at any scale (issue 27)."""
    a = fixture_analysis
    t1 = sections.results_table(a)
    assert "Stat." not in t1.data.columns and t1.key == "results"
    heads = [c for c in t1.data.columns if "(" in c]
    assert "TTFT p50 (ms)" in heads and any(h.startswith("Throughput mean") for h in heads)
    # one row per seat, workload and concurrency; each figure is a cell's own estimate
    assert not t1.data.duplicated(["seat", "Workload", "Conc."]).any()
    cells = a.cells
    out = cells[
        (cells["metric"] == "output_tok_s") & (cells["statistic"] == "mean") & cells["estimate"].map(fmt.finite)
    ]
    shown = " ".join(t1.data[[h for h in heads if h.startswith("Throughput")][0]])
    for v, n, values in zip(out["estimate"], out["n_passes"], out["values"]):
        if n == 2:  # two passes show both values, not a mean
            assert ", ".join(fmt.num(float(x)) for x in str(values).split(";")) in shown
        else:
            assert fmt.num(v) in shown
    # a TTFT stated with no statistic is said so beside its figure, never headed as a p50
    assert "(not stated)" in " ".join(t1.data["TTFT p50 (ms)"]) or "not_stated" not in set(cells["statistic"])
    every = sections.all_cells_table(a)
    assert every is not None and every.kind == "appendix" and every.screen_only == "tables/cells.csv"
    assert "Table A1" in t1.note and "tables/cells.csv" in t1.note
    assert sections.appendix_text(a) is not None
    assert f"listed in Table A{2 + bool(len(a.flags))}" in str(sections.provenance_text(a))


def test_wide_tables_escape_data_strings(fleet_requests):
    a = fleet_requests
    every = sections.all_cells_table(a)
    every.data.loc[every.data.index[0], "95% CI"] = XSS_MODEL
    html = str(render.table_html(every, "Table A1"))
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert html.count("<tr>") == len(every) + 1 and html.count('<tr class="group">') == 25  # + the head


def test_fleet_figures_stay_readable(fleet):
    d, other_day, over = figures.select_series(fleet.cells, "output_tok_s", baseline=fleet.baseline, top_n=8)
    assert d.groupby(["seat", "workload"]).ngroups == 8 and (other_day, over) == (0, 42)
    assert "fleet-seat-00-with-a-long-descriptive-name" in set(d["seat"])
    block = sections.throughput_figure(fleet)
    assert "42 more are in the tables" in block.caption
    fig = block.figure
    assert fig.get_size_inches()[0] == pytest.approx(figures.WIDTH_IN)
    assert len(fig.legends[0].get_texts()) == 8
    passes = sections.per_pass_figure(fleet)
    # two rows of three panels (a third row pushed the exam tables to the next page, issue 27)
    assert len([ax for ax in passes.figure.axes if ax.get_visible()]) == 6 and "largest spread" in passes.caption
    assert "tables/cells.csv has every pass" in passes.caption


# --- figures --------------------------------------------------------------------------------------


def test_figures_return_none_without_data():
    empty = pd.DataFrame(
        columns=[
            "seat",
            "workload",
            "concurrency",
            "metric",
            "statistic",
            "estimate",
            "ci_low",
            "ci_high",
            "values",
            "n_passes",
        ]
    )
    assert figures.throughput_vs_concurrency(empty) is None
    assert figures.per_pass_values(empty) is None
    assert figures.cell_dotplot(empty, "decode_tok_s_per_stream") is None
    assert figures.exam_forest(pd.DataFrame()) is None


def test_save_figure_names_and_formats(fixture_analysis, tmp_path):
    fig = figures.throughput_vs_concurrency(fixture_analysis.cells, baseline="inc-tp2")
    for stem in ("../x", "a/b", ".hidden", ""):
        with pytest.raises(ValueError):
            figures.save_figure(fig, tmp_path, stem)
    with pytest.raises(ValueError):
        figures.save_figure(fig, tmp_path, "f", ("png", "gif"))
    paths = figures.save_figure(fig, tmp_path, "f", ("png", "svg", "pdf"))
    png = paths["png"].read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width_px = int.from_bytes(png[16:20], "big")
    assert abs(width_px / figures.DPI - figures.WIDTH_IN) < 0.3  # fixed dpi, page-width figure
    svg = paths["svg"].read_text()
    assert "<dc:date>" not in svg and "<script" not in svg


def test_mathtext_in_data_is_text(tmp_path):
    cells = pd.DataFrame(
        {
            "seat": ["$\\alpha$-seat", "$\\alpha$-seat"],
            "workload": ["w", "w"],
            "concurrency": [1, 4],
            "metric": ["output_tok_s"] * 2,
            "statistic": ["mean"] * 2,
            "estimate": [1.0, 2.0],
            "ci_low": [np.nan] * 2,
            "ci_high": [np.nan] * 2,
            "values": ["1.0", "2.0"],
            "n_passes": [1, 1],
        }
    )
    fig = figures.throughput_vs_concurrency(cells)
    figures.save_figure(fig, tmp_path, "f", ("svg",))
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert texts == ["$\\alpha$-seat"]


def test_formatting():
    assert fmt.num(95941) == "95,941" and fmt.num(763.9) == "763.9"
    assert fmt.num(35.0) == "35" and fmt.num(float("nan")) == "–"
    assert fmt.pval(1.0, "–") == "1.0" and fmt.pval(0.0004, "–") == "< 0.001" and fmt.pval(0.031, "–") == "0.03"
    assert fmt.points(-0.0061) == "−0.6 pp"
    assert fmt.ci(95.7, 102.1) == "[95.7, 102.1]" and fmt.ci(None, 1) == ""
    assert isinstance(sections.abstract.__doc__, str)
    assert isinstance(Markup("<p>{}</p>").format("<x>"), Markup)


def test_history_of_a_seat_across_dates(tmp_path):
    for i, (day, vals) in enumerate(
        (("2026-09-01", (880.0, 890.0)), ("2026-09-10", (896.9, 982.5)), ("2026-10-01", (940.0, 950.0)))
    ):
        for p, v in enumerate(vals, 1):
            run = {
                "format": "benchreport.run/1",
                "run_id": f"q-{i}-{p}",
                "date": day,
                "seat": {"id": "qwen-tp2", "model": "Qwen", "role": "incumbent"},
                "harness": {"name": "x"},
                "pass": p,
                "measurements": [
                    {"workload": "decode", "concurrency": 16, "metric": "output_tok_s", "value": v, "unit": "tok/s"}
                ],
            }
            write_run(tmp_path / "data", f"q-{i}-{p}.json", run)
    a = analyse(load([str(tmp_path / "data")]), Options(n_boot=200))
    block = sections.history_figure(a)
    assert block is not None and "more than one date" in block.caption
    ax = block.figure.axes[0]
    assert "qwen-tp2" in ax.get_title(loc="left") and len(ax.lines[0].get_xdata()) == 3
    figures.save_figure(block.figure, tmp_path, "history", ("png",))


def test_section5_reads_its_titles_and_order_from_the_codes_table(fixture_analysis):
    """No copy of per-code facts in the report: titles from codes.CODES, traps first, then stability."""
    from benchreport.flags import codes
    from benchreport.report.model.sections.traps import trap_order

    order = trap_order()
    assert sorted(order) == sorted(codes.trap_codes())
    groups = [codes.CODES[c].group for c in order]
    assert groups == sorted(groups, key=lambda g: g != "traps")
    html = str(sections.traps(fixture_analysis))
    titles = re.findall(r"<h3>5\.\d+ ([^<(]+?)(?: \(\d+ cases\))?</h3>", html)
    by_title = {codes.CODES[c].trap_title: i for i, c in enumerate(order)}
    assert titles and [by_title[t] for t in titles] == sorted(by_title[t] for t in titles)


def test_flags_are_ordered_by_severity_then_the_codes_tables_priority(fixture_analysis):
    from benchreport.flags import codes

    f = sections.sorted_flags(fixture_analysis)
    key = [(codes.SEVERITIES.index(s), codes.priority_of(c)) for s, c in zip(f["severity"], f["code"])]
    assert key == sorted(key)


# --- Table 1 on one page (issue 27) -------------------------------------------------------------


def _summary_rows(seat: str, n: int, passes: list[str] | None = None, long: bool = False) -> pd.DataFrame:
    workload = "decode (a harness, chat, 32±4 → 16 tok fixed, streaming, synthetic #4be6a0)" if long else "decode"
    return pd.DataFrame(
        {
            "seat": [seat] * n,
            "Workload": [f"{workload} {i}" for i in range(n)],
            "Conc.": [str(i) for i in range(n)],
            "Passes": passes or ["1"] * n,
        }
    )


def test_a_long_workload_counts_as_the_lines_it_wraps_to():
    from benchreport.report.model.sections.summary import WORKLOAD_LINE, row_lines

    df = pd.DataFrame(
        {"Workload": ["decode", "x" * WORKLOAD_LINE, "x" * (WORKLOAD_LINE + 1), "x" * (3 * WORKLOAD_LINE)]}
    )
    assert row_lines(df).tolist() == [1, 1, 2, 3]


def test_table1_keeps_whole_seats_in_rank_order_while_they_fit():
    from benchreport.report.model.sections.summary import fit_summary

    df = pd.concat([_summary_rows("a", 5), _summary_rows("b", 10), _summary_rows("c", 3)], ignore_index=True)
    # each seat costs its rows and a heading line: b (11) and c (4) fit in 16, a (6) then does not
    out, shown, part = fit_summary(df, ["b", "c", "a"], max_lines=16)
    assert shown == ["b", "c"] and part == {}
    assert out["seat"].tolist() == ["b"] * 10 + ["c"] * 3  # the table's own order kept
    out, shown, part = fit_summary(df, ["a", "b", "c"], max_lines=40)
    assert shown == ["a", "b", "c"] and len(out) == len(df)


def test_table1_shows_two_seats_the_second_with_its_best_measured_conditions():
    from benchreport.report.model.sections.summary import fit_summary

    passes = ["1", "3", "1", "2", "5", "1", "1", "1–2", "1", "1"]
    df = pd.concat([_summary_rows("top", 4), _summary_rows("big", 10, passes)], ignore_index=True)
    out, shown, part = fit_summary(df, ["top", "big"], max_lines=10)
    # top: 5 lines; big: 5 lines left, a heading and its 4 conditions with the most passes
    assert shown == ["top", "big"] and part == {"big": (4, 10)}
    kept = out[out["seat"] == "big"]
    assert sorted(kept["Passes"].tolist()) == sorted(["3", "2", "5", "1–2"])
    assert kept.index.is_monotonic_increasing


def test_table1_leaves_room_for_a_second_seat_when_the_first_is_too_long():
    from benchreport.report.model.sections.summary import fit_summary

    df = pd.concat([_summary_rows("huge", 30, long=True), _summary_rows("small", 3)], ignore_index=True)
    out, shown, part = fit_summary(df, ["huge", "small"], max_lines=20)
    assert shown == ["huge", "small"] and "small" not in part
    n_huge = part["huge"][0]
    assert part["huge"][1] == 30 and 2 * n_huge + 1 + 4 <= 20 and n_huge >= 6


def test_many_runs_give_section_1_one_row_per_harness_and_the_appendix_every_seat_and_day(fleet, fixture_analysis):
    """Past RUNS_BODY_ROWS rows (50 seats here), Section 1 has one row per harness and the appendix the
    runs per seat and day; a short table stays in Section 1 (issue 27: half a page left empty)."""
    from benchreport.report.model.sections.seats import RUNS_BODY_ROWS

    body, every = sections.runs_table(fleet), sections.runs_appendix_table(fleet)
    assert body.key == "methods" and list(body.data["Harness"]) == ["in-house"]
    assert body.data["Seats"].tolist() == ["50"] and body.data["Passes"].tolist() == ["3"]
    assert body.data["Rows"].tolist() == [str(len(every))] and len(every) == 50 > RUNS_BODY_ROWS
    assert every.kind == "appendix" and every.key == "runs" and "_name" not in every.data.columns
    short = sections.runs_table(fixture_analysis)
    assert short.key == "runs" and len(short) <= RUNS_BODY_ROWS
    assert sections.runs_appendix_table(fixture_analysis) is None


def test_blocks_render_whatever_was_imported_first_and_the_build_starts_light():
    """A fresh interpreter: a block made from a direct import of the sections renders as HTML (the
    renderer is found on first use), and importing the build loads neither matplotlib nor the
    sections, so `benchreport build` analyses as soon as `analyse` would."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import benchreport.report.build\n"
        "heavy = sorted(m for m in ('matplotlib', 'benchreport.report.model.sections', 'nbconvert', 'papermill') "
        "if m in sys.modules)\n"
        "from benchreport.report.model.sections.blocks import Paragraph, Prose\n"
        "print(heavy, str(Prose((Paragraph(('a <b>',)),))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.startswith("[] ") and "a &lt;b&gt;" in out, out


def test_a_files_path_under_the_root_is_what_relpath_gives():
    """The files table shortens each path by the common root without `os.path.relpath` where the
    path is a plain one under the root (90,000 of them a fleet's year); it must give relpath's text
    for those and defer to it for anything else."""
    import os

    from benchreport.report.model.sections.appendix import _rel

    root = os.path.join(os.sep, "data", "runs")
    paths = [
        os.path.join(root, "2026-01-01", "a.json"),
        os.path.join(root, "b.json"),
        os.path.join(root + "x", "c.json"),  # a sibling sharing the root's letters
        os.path.join(root, "..", "d.json"),
        root + os.sep + os.sep + "e.json",
        root,
        os.path.join(os.sep, "elsewhere", "f.json"),
    ]
    for p in paths:
        assert _rel(p, root) == os.path.relpath(p, root), p
    assert _rel("relative/g.json", None) == "relative/g.json"
    assert _rel(os.path.join(os.sep, "h.json"), os.sep) == os.path.relpath(os.path.join(os.sep, "h.json"), os.sep)
