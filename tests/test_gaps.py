"""The build never fails on what `analyse` accepted (issue 40): analyses with gaps (no concurrency,
no samples, exams with scores only, one date or several, one request, failed requests only) drawn
by hypothesis through every section and figure of the report, rendered as the report renders them;
and the two folders that crashed `build` (exit 4) through the command line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runs import make_run, write_run

ROOT = Path(__file__).resolve().parents[1]
LMEVAL = ROOT / "tests" / "fixtures" / "harness" / "lmeval"
DATES = ("2026-11-02", "2026-11-03", "2026-11-09")
UNITS = {
    "output_tok_s": "tok/s",
    "decode_tok_s_per_stream": "tok/s",
    "ttft_ms": "ms",
    "itl_ms": "ms",
    "e2e_latency_ms": "ms",
    "request_rate": "req/s",
    "prefill_tok_s": "tok/s",
}


@st.composite
def measurement(draw):
    metric = draw(st.sampled_from(sorted(UNITS)))
    m = {
        "workload": draw(st.sampled_from(["decode", "prefill", "code"])),
        "metric": metric,
        "value": draw(st.floats(0.5, 5000)),
        "unit": UNITS[metric],
        "statistic": draw(st.sampled_from(["mean", "p50", "p99"])),
    }
    if draw(st.booleans()):
        m["concurrency"] = draw(st.sampled_from([1, 4, 16]))
    return m


@st.composite
def request(draw):
    r = {"workload": "decode"}
    if draw(st.booleans()):
        r["concurrency"] = draw(st.sampled_from([1, 4]))
    if draw(st.integers(0, 4)) == 0:
        r.update(finish_reason="error", error="HTTP 500")
        return r
    if draw(st.booleans()):
        r["ttft_ms"] = draw(st.floats(1, 900))
        r["e2e_latency_ms"] = r["ttft_ms"] + draw(st.floats(1, 9000))
    if draw(st.booleans()):
        r["output_tokens"] = draw(st.integers(0, 400))
    return r


@st.composite
def exam(draw):
    kind = draw(st.sampled_from(["items", "counts", "score"]))
    e = {"benchmark": draw(st.sampled_from(["HumanEval", "frontier"]))}
    if kind == "items":
        e["items"] = [{"id": f"q{i}", "correct": draw(st.booleans())} for i in range(draw(st.integers(1, 12)))]
    elif kind == "counts":
        total = draw(st.integers(1, 200))
        e.update(correct=draw(st.integers(0, total)), total=total)
    else:
        e["score"] = draw(st.floats(0, 100))
    return e


@st.composite
def run(draw, i):
    seat = draw(st.sampled_from(["s0", "s1", "s2"]))
    r = make_run(run_id=f"r{i}", date=draw(st.sampled_from(DATES)), **{"pass": draw(st.integers(1, 3))})
    r["seat"] = {"id": seat, "model": f"model {seat}"}
    if seat == "s0" and draw(st.booleans()):
        r["seat"]["role"] = "incumbent"
    r.pop("measurements", None)
    parts = draw(st.sets(st.sampled_from(["measurements", "requests", "exams"]), min_size=1))
    if "measurements" in parts:
        r["measurements"] = draw(st.lists(measurement(), min_size=1, max_size=4))
    if "requests" in parts:
        r["requests"] = draw(st.lists(request(), min_size=1, max_size=5))
    if "exams" in parts:
        r["exams"] = draw(st.lists(exam(), min_size=1, max_size=2, unique_by=lambda e: e["benchmark"]))
    return r


@st.composite
def datasets(draw):
    n = draw(st.integers(1, 5))
    runs = [draw(run(i)) for i in range(n)]
    if draw(st.booleans()):  # the first run's seat measured again on the other dates: a history
        import copy

        for j, date in enumerate(d for d in DATES if d != runs[0]["date"]):
            again = copy.deepcopy(runs[0])
            again.update(run_id=f"h{j}", date=date)
            for m in again.get("measurements", []):
                m["value"] *= draw(st.floats(0.8, 1.25))
            runs.append(again)
    return runs


def _every_block(a):
    """Every section and figure the report notebook shows, rendered as the report renders them."""
    import matplotlib.pyplot as plt

    from benchreport.report import sections  # noqa: F401 - render registers the HTML renderer
    from benchreport.report.catalog import FIGURES

    blocks = [
        sections.title_block("Gaps", a),
        sections.abstract(a),
        sections.setup_text(a),
        sections.seats_table(a),
        sections.runs_table(a),
        sections.results_text(a),
        sections.results_table(a),
        sections.comparison_text(a),
        sections.comparison_table(a),
        sections.exams_text(a),
        sections.exam_scores_table(a),
        sections.exam_deltas_table(a),
        sections.traps(a),
        sections.faults(a),
        sections.limitations(a),
        sections.history_text(a),
        sections.history_table(a),
        sections.appendix_text(a),
        sections.all_cells_table(a),
        sections.all_comparisons_table(a),
        sections.flags_table(a),
        sections.provenance_text(a),
        sections.files_table(a),
        sections.refused_table(a),
        sections.skipped_table(a),
        sections.parameters_table(a, {}),
        sections.thresholds_table(a),
        sections.runs_appendix_table(a),
    ]
    blocks += [entry.make(a) for entry in FIGURES.values()]
    try:
        for block in blocks:
            for b in block if isinstance(block, (list, tuple)) else [block]:
                if b is not None:
                    str(b)
    finally:
        plt.close("all")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(datasets())
def test_every_section_and_figure_takes_what_analyse_accepted(runs):
    from benchreport.pipeline import analyse_paths

    with tempfile.TemporaryDirectory() as tmp:
        seen = set()
        for r in runs:
            key = (r["seat"]["id"], r["date"], r["pass"])
            if key in seen:  # one run per seat, day and pass, as the loader requires
                continue
            seen.add(key)
            write_run(Path(tmp), f"{r['run_id']}.json", r)
        a = analyse_paths([tmp])
        if not a.loaded.runs:
            return
        _every_block(a)


def _build(folder, out):
    return subprocess.run(
        [sys.executable, "-m", "benchreport", "build", str(folder), "--out", str(out), "--format", "html", "--quiet"],
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
def test_lmeval_results_without_samples_build(tmp_path):
    """lm-eval results files published without their samples files (the usual way): a report."""
    for s in ("s1", "s2"):
        (tmp_path / "runs" / s).mkdir(parents=True)
        for f in (LMEVAL / s).rglob("results_*.json"):
            shutil.copy(f, tmp_path / "runs" / s / f.name)
    proc = _build(tmp_path / "runs", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out" / "report.html").exists()


@pytest.mark.slow
def test_a_seat_on_two_dates_with_no_concurrency_builds(tmp_path):
    """Runs of one seat on two dates whose measurements record no concurrency: the history figure
    draws them (it read np.isfinite(pd.NA))."""
    for i, date in enumerate(("2026-11-02", "2026-11-05")):
        r = make_run(run_id=f"r{i}", date=date)
        r["measurements"] = [
            {"workload": "decode", "metric": "output_tok_s", "value": 100.0 + i, "unit": "tok/s"},
            {"workload": "decode", "metric": "ttft_ms", "value": 40.0 + i, "unit": "ms"},
        ]
        write_run(tmp_path / "runs", f"r{i}.json", r)
    proc = _build(tmp_path / "runs", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "out" / "flags.json").read_text()) is not None
