"""The appendix's views of load and latency (report.model.sections.views): each is drawn from a
fixture that holds what it needs and is absent (None, no empty figure) from one that does not; every
seat is drawn in the one style the report gives it (read back from the figure's SVG); each is
exported by `benchreport figure NAME`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchreport.cli import main
from benchreport.pipeline import analyse_paths
from benchreport.report.catalog import FIGURES
from benchreport.report.model.figures import save_figure
from benchreport.report.model.figures.views import pareto_front
from benchreport.report.model.sections import views as sections_views
from runs import make_run, write_run

ROOT = Path(__file__).resolve().parents[1]
HARNESS = ROOT / "tests" / "fixtures" / "harness"
EXAMPLE = ROOT / "data" / "example"
#: real captures with request records, failures and several concurrency levels
CAPTURES = [HARNESS / h for h in ("aiperf", "aiperf-errors", "guidellm", "sglang", "genai-bench")]
#: the views drawn from those captures (the rate sweep needs runs sent at a request rate)
FROM_CAPTURES = ("throughput-latency", "latency-ecdf", "lengths-sent", "pass-timeline", "failures-by-load")


def _rate_runs(folder: Path) -> Path:
    """Two seats swept over offered request rates 1, 2 and 4 req/s, two passes each (no concurrency)."""
    for seat, scale in (("rate-a", 1.0), ("rate-b", 0.8)):
        for rate in (1, 2, 4):
            for p in (1, 2):
                run = make_run(run_id=f"{seat}-r{rate}-p{p}", **{"pass": p})
                run["seat"] = {"id": seat, "model": f"model {seat}", "role": "candidate"}
                run["harness"] = {"name": "guidellm"}
                run["load"] = {"endpoint": "chat", "streaming": True, "arrival": "poisson", "rate": rate}
                tok = scale * 60.0 * min(rate, 3) * (1 + 0.01 * p)
                run["measurements"] = [
                    {"workload": "decode", "metric": "output_tok_s", "value": tok, "unit": "tok/s"},
                    {
                        "workload": "decode",
                        "metric": "ttft_ms",
                        "statistic": "p95",
                        "value": 40.0 * rate / scale + p,
                        "unit": "ms",
                    },
                ]
                write_run(folder, f"{seat}-{rate}-{p}.json", run)
    return folder


@pytest.fixture(scope="module")
def captures():
    return analyse_paths([str(p) for p in CAPTURES])


@pytest.fixture(scope="module")
def example():
    return analyse_paths([str(EXAMPLE)])


@pytest.fixture(scope="module")
def rate_folder(tmp_path_factory):
    return _rate_runs(tmp_path_factory.mktemp("rate-sweep"))


@pytest.fixture(scope="module")
def rates(rate_folder):
    return analyse_paths([str(rate_folder)])


@pytest.mark.parametrize("name", FROM_CAPTURES)
def test_drawn_from_captures_and_absent_where_runs_lack_it(captures, rates, name):
    block = FIGURES[name].make(captures)
    assert block is not None and block.figure is not None and block.key == name
    assert FIGURES[name].make(rates) is None  # no request records, no concurrency levels


def test_rate_sweep_on_a_rate_axis_only_where_runs_were_sent_at_a_rate(rates, captures):
    block = FIGURES["rate-sweep"].make(rates)
    assert block is not None
    ax = block.figure.axes[0]
    assert ax.get_xlabel() == "offered request rate (req/s)"
    xs = sorted({float(x) for line in ax.get_lines() for x in line.get_xdata()})
    assert xs == [1.0, 2.0, 4.0]
    assert FIGURES["rate-sweep"].make(captures) is None


def test_example_draws_only_the_lengths_its_request_records_hold(example):
    assert [b.key for b in sections_views.load_views(example)[1:]] == ["lengths-sent"]


def test_views_part_is_empty_without_data_and_leads_with_its_heading(captures, rates, tmp_path):
    bare = analyse_paths([str(write_run(tmp_path, "bare.json", make_run()))])
    assert sections_views.load_views(bare) == []
    blocks = sections_views.load_views(captures)
    assert blocks[0].blocks[0].heading == "Load, latency and requests"
    assert [b.key for b in blocks[1:]] == list(FROM_CAPTURES)


def _svg_colours(path: Path) -> set[str]:
    text = path.read_text()
    return {c.lower() for c in re.findall(r"#[0-9A-Fa-f]{6}\b", text)}


@pytest.mark.parametrize("name", (*FROM_CAPTURES, "rate-sweep"))
def test_every_seat_keeps_the_report_style(captures, rates, tmp_path, name):
    a = rates if name == "rate-sweep" else captures
    block = FIGURES[name].make(a)
    report = sections_views.report_styles(a)
    drawn = block.figure.benchreport_styles
    assert drawn and all(drawn[s] == report[s] for s in drawn)
    svg = save_figure(block.figure, tmp_path, name, ("svg",))["svg"]
    colours = _svg_colours(svg)
    for seat in drawn:
        assert report[seat].color.lower() in colours, (name, seat)
    others = {report[s].color.lower() for s in report if s not in drawn} - {report[s].color.lower() for s in drawn}
    assert not (others & colours), f"{name} carries the colour of a seat it does not draw"


def test_captions_use_readers_words(captures, rates):
    for name in (*FROM_CAPTURES, "rate-sweep"):
        block = FIGURES[name].make(rates if name == "rate-sweep" else captures)
        cap = block.caption
        assert not re.search(r"issue \d|\.py\b|/[a-z_]+/|#[0-9a-f]{6}|\b[a-z]+\.[a-z_]+\b", cap), (name, cap)


def test_pareto_front():
    #    (latency, throughput): the third is beaten by the second on both
    front = pareto_front([10, 20, 30, 40], [100, 150, 140, 200])
    assert front.tolist() == [True, True, False, True]


@pytest.mark.parametrize("name", ("throughput-latency", "failures-by-load"))
def test_figure_command_exports_it(capsys, tmp_path, name):
    out = tmp_path / f"{name}.svg"
    code = main(["figure", name, *map(str, CAPTURES), "--out", str(out)])
    capsys.readouterr()
    assert code == 0 and out.read_text().lstrip().startswith("<?xml")


def test_figure_command_exports_the_rate_sweep(capsys, tmp_path, rate_folder):
    out = tmp_path / "rate.png"
    assert main(["figure", "rate-sweep", str(rate_folder), "--out", str(out)]) == 0
    capsys.readouterr()
    assert out.read_bytes()[:4] == b"\x89PNG"


def test_figure_command_says_nothing_to_draw(capsys, tmp_path):
    code = main(["figure", "latency-ecdf", str(EXAMPLE), "--out", str(tmp_path / "x.svg")])
    capsys.readouterr()
    assert code == 2 and not (tmp_path / "x.svg").exists()


def test_each_request_names_its_runs_harness_and_what_was_sent(captures):
    """The request rows joined to their runs once per run and workload (issue 41) say, row by row,
    what the run table says of that row's run: its harness, and its load's label or else the
    request's workload."""
    from benchreport import format as fmt

    rows = sections_views._requests(captures)
    runs = captures.tables.runs.drop_duplicates("run_id").set_index("run_id")
    assert len(rows) > 100 and rows["harness"].nunique() > 1
    for run_id, workload, harness, condition in zip(
        rows["run_id"], rows["workload"], rows["harness"], rows["condition"]
    ):
        assert harness == fmt.text(runs.at[run_id, "harness"])
        assert condition == (fmt.text(runs.at[run_id, "load_label"]) or fmt.text(workload))
