"""The report end to end: `benchreport build` on a small data set written here, through papermill.

One build is shared by this module, tests/test_browser_report.py and
tests/test_build_atomic.py (`report_build`, session scoped and guarded by a file lock so
pytest-xdist workers build once). The data set carries the traps the seed documents
describe (a prefix-cache hit of 95,941 against 4,711 tok/s fresh, warm-up drift 79.4 ->
91.5 -> 104.0, two passes of 896.9 and 982.5, an unreproduced fault, a reasoning-field
answer, a 153 vs 154 of 164 exam delta), a model named ``<script>alert(1)</script>`` and a
refused file (built with --skip-bad).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from runs import write_run

ROOT = Path(__file__).resolve().parents[1]
XSS_MODEL = "<script>alert(1)</script>"
XSS_NOTE = '<img src=x onerror="alert(2)">'
TITLE = 'Fixture report <b>not bold</b> & "quoted"'

GPU = 102641958912
PLACE_1 = {"nodes": 1, "gpus_per_node": 2, "gpu_memory_bytes": GPU, "tensor_parallel": 2}
PLACE_2 = {"nodes": 2, "gpus_per_node": 2, "gpu_memory_bytes": GPU, "tensor_parallel": 4, "interconnect": "200GbE RDMA"}
HARNESS = {"name": "in-house", "version": "1.2", "probe": "fixed-512", "max_tokens": 512}


def _m(workload, metric, value, unit, concurrency=None, **kw):
    m = {"workload": workload, "metric": metric, "value": value, "unit": unit}
    if concurrency is not None:
        m["concurrency"] = concurrency
    m.update(kw)
    return m


def _run(run_id, seat, pass_, measurements, **extra):
    run = {
        "format": "benchreport.run/1",
        "run_id": run_id,
        "date": "2026-09-10",
        "seat": seat,
        "harness": HARNESS,
        "pass": pass_,
        "warmup_excluded": True,
        "measurements": measurements,
    }
    run.update(extra)
    return run


def write_fixture_runs(folder: Path, *, bad: bool = True) -> Path:
    """The test data set: three seats on one day, one refused file."""
    inc = {"id": "inc-tp2", "model": "Qwen3.8-Flash-Next", "role": "incumbent", "placement": PLACE_1}
    cand = {
        "id": "cand-exl3",
        "model": XSS_MODEL,
        "quantisation": "EXL3-4.0bpw",
        "placement": PLACE_1,
        "checkpoint_bytes": 175.8e9,
        "settings": {"speculative": True, "prefix_caching": True},
    }
    two = {
        "id": "glm-nvfp4-2node",
        "model": "GLM-5.3-Flash",
        "quantisation": "NVFP4",
        "placement": PLACE_2,
        "checkpoint_bytes": 204.5e9,
        "components": [{"name": "DFlash2 drafter", "role": "drafter", "license": "CC-BY-NC-ND-4.0"}],
    }
    for p, (c1, c4, c16) in enumerate([(120.0, 420.0, 896.9), (121.0, 425.0, 982.5)], 1):
        ms = [
            _m("decode", "output_tok_s", c1, "tok/s", 1),
            _m("decode", "output_tok_s", c4, "tok/s", 4),
            _m("decode", "output_tok_s", c16, "tok/s", 16),
            _m("decode", "ttft_ms", 35.0 + p, "ms", 1, statistic="p50"),
            _m("decode", "decode_tok_s_per_stream", 108.6 + p / 10, "tok/s", 1),
        ]
        if p == 1:
            ms.append(_m("prefill", "prefill_tok_s", 7412, "tok/s", context_tokens=31000, fresh_prompt=True))
        extra = {"exams": [{"benchmark": "HumanEval", "correct": 154, "total": 164}]} if p == 1 else {}
        write_run(folder, f"inc-p{p}.json", _run(f"inc-p{p}", inc, p, ms, **extra))
    for p, (c1, c16) in enumerate([(79.4, 700.0), (91.5, 760.0), (104.0, 790.0)], 1):
        ms = [
            _m("decode", "output_tok_s", c1, "tok/s", 1),
            _m("decode", "output_tok_s", c16, "tok/s", 16),
            _m("decode", "decode_tok_s_per_stream", 112.8, "tok/s", 1),
        ]
        extra = {}
        if p == 1:
            extra = {
                "exams": [{"benchmark": "HumanEval", "correct": 153, "total": 164}],
                "events": [{"kind": "defect", "message": "grammar engine failed " + XSS_NOTE}],
                "notes": "operator note " + XSS_NOTE,
            }
        write_run(folder, f"cand-p{p}.json", _run(f"cand-p{p}", cand, p, ms, **extra))
    ms = [
        _m("decode", "decode_tok_s_per_stream", v, "tok/s", c)
        for c, v in ((1, 124.2), (4, 92.7), (8, 74.1), (16, 51.5))
    ]
    ms += [_m("decode", "output_tok_s", 117.9, "tok/s", 1), _m("decode", "output_tok_s", 763.9, "tok/s", 16)]
    ms += [_m("decode", "ttft_ms", v, "ms", c) for c, v in ((1, 226), (4, 466), (8, 626), (16, 796))]
    ms += [
        _m("prefill", "prefill_tok_s", 4711, "tok/s", context_tokens=31000, fresh_prompt=True),
        _m("prefill", "prefill_tok_s", 95941, "tok/s", fresh_prompt=False),
    ]
    run = _run(
        "two-p1",
        two,
        1,
        ms,
        events=[
            {
                "kind": "fault",
                "message": "RDMA local-protection fault killed the engine",
                "concurrency": 16,
                "reproduced": False,
            }
        ],
        requests=[
            {
                "workload": "decode",
                "output_tokens": 512,
                "reasoning_tokens": 512,
                "content_chars": 0,
                "finish_reason": "length",
            }
        ],
    )
    run.pop("warmup_excluded")
    write_run(folder, "two-p1.json", run)
    if bad:
        write_run(folder, "broken.json", '{"format": "benchreport.run/1", "run_id": "x", "seat": ')
    return folder


@contextlib.contextmanager
def _locked(path: Path):
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def shared_dir(tmp_path_factory, name: str) -> tuple[Path, Path]:
    """A folder shared by all xdist workers of this session, and its lock file."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    return base / name, base / f"{name}.lock"


def run_cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "benchreport", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=str(ROOT),
        env=env,
    )


@pytest.fixture(scope="session")
def report_build(tmp_path_factory):
    """(data folder, output folder, CompletedProcess) of one build shared by the session."""
    folder, lock = shared_dir(tmp_path_factory, "report-build")
    with _locked(lock):
        result_file = folder / "result.json"
        if not result_file.exists():
            folder.mkdir(parents=True, exist_ok=True)
            data = write_fixture_runs(folder / "data")
            out = folder / "out"
            proc = run_cli(
                "build", str(data), "--out", str(out), "--title", TITLE, "--skip-bad", "--figure-formats", "png,svg,pdf"
            )
            result_file.write_text(
                json.dumps({"returncode": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr})
            )
    r = json.loads(result_file.read_text())
    proc = subprocess.CompletedProcess(["benchreport", "build"], r["returncode"], r["stdout"], r["stderr"])
    return folder / "data", folder / "out", proc


def pdf_text(path: Path) -> str:
    """All text of a PDF with whitespace collapsed (pypdf)."""
    from pypdf import PdfReader

    reader = PdfReader(str(path))
    return re.sub(r"\s+", " ", " ".join(page.extract_text() or "" for page in reader.pages))


# --- the shared build -------------------------------------------------------------------


def test_build_succeeds_quietly(report_build):
    _, out, proc = report_build
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "broken.json" in proc.stderr  # the refused file is named, once, on stderr
    assert "report written to" in proc.stderr


def test_build_writes_every_output(report_build):
    _, out, _ = report_build
    for name in (
        "report.html",
        "report.pdf",
        "report.ipynb",
        "flags.json",
        "refused.json",
        "tables/cells.csv",
        "tables/comparisons.csv",
        "tables/exam_deltas.csv",
    ):
        assert (out / name).is_file(), name
    pngs = sorted(p.stem for p in (out / "figures").glob("*.png"))
    assert pngs and pngs == sorted(p.stem for p in (out / "figures").glob("*.svg"))
    assert pngs == sorted(p.stem for p in (out / "figures").glob("*.pdf"))
    assert all(re.fullmatch(r"figure-\d\d", s) for s in pngs)  # our counter, never a seat name
    assert not [p for p in out.parent.iterdir() if ".tmp-" in p.name or ".old-" in p.name]
    refused = json.loads((out / "refused.json").read_text())["refused"]
    assert [Path(r["path"]).name for r in refused] == ["broken.json"]


def test_executed_notebook_records_parameters(report_build):
    import nbformat

    _, out, _ = report_build
    nb = nbformat.read(out / "report.ipynb", as_version=4)
    params = nb.metadata["papermill"]["parameters"]
    assert params["skip_bad"] is True
    assert params["ci_method"] == "t" and "seed" not in params  # a seed takes effect with a bootstrap only
    assert params["title"] == TITLE and isinstance(params["runs"], list)
    assert all(isinstance(r, str) for r in params["runs"])
    # the report's own folder, not the staging folder it was built in (gone once published): the
    # executed notebook run again by hand writes beside itself, not into a stray hidden folder
    assert params["out"] == str(out.absolute()) and params["analysis_file"] is None
    from benchreport.thresholds import Thresholds

    assert {n for n, _, _ in Thresholds.describe()} <= set(params)
    assert not [
        c for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.get("output_type") == "error"
    ]


def test_pdf_has_sections_caveats_and_page_numbers(report_build):
    _, out, _ = report_build
    text = pdf_text(out / "report.pdf")
    for heading in (
        "Abstract",
        "1 Seats and setup",
        "2 Measured results",
        "3 Comparison against the incumbent",
        "4 Exams",
        "5 Measurement traps found",
        "6 Faults and open defects",
        "7 What these numbers will not carry",
        "Appendix: provenance",
    ):
        assert heading in text, heading
    assert "History across dates" not in text  # one date per cell: the empty section is not printed (issue 42)
    assert "Page 1 of" in text
    n_pages = int(re.search(r"Page 1 of (\d+)", text).group(1))
    assert f"Page {n_pages} of {n_pages}" in text
    assert "Table 1." in text and "Figure 1." in text
    # the caveats, with their numbers
    assert "95,941" in text and "4,711" in text  # prefix-cache hit against fresh prefill
    assert "79.4" in text and "91.5" in text and "104" in text  # warm-up drift
    assert "896.9" in text and "982.5" in text  # two passes: both values
    assert "RDMA" in text  # the unreproduced fault
    assert "153" in text and "154" in text  # the exam delta
    assert "CC-BY-NC-ND-4.0" in text
    # data strings appear as text
    assert XSS_MODEL in text
    assert "broken.json" in text  # --skip-bad: the refused file is listed in the appendix


def test_pdf_has_running_title(report_build):
    from pypdf import PdfReader

    _, out, _ = report_build
    pages = PdfReader(str(out / "report.pdf")).pages
    assert len(pages) >= 3
    second = re.sub(r"\s+", " ", pages[1].extract_text())
    assert "Fixture report <b>not bold</b>" in second  # the title, as text, on every later page


def _table(html: str, key: str) -> str:
    m = re.search(rf'<table[^>]*id="table-{key}".*?</table>', html, re.S)
    assert m, key
    return m.group(0)


def test_html_is_self_contained_and_escaped(report_build):
    _, out, _ = report_build
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "<script" not in html.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    # nbconvert re-serialises the page (BeautifulSoup): text stays text, quotes may be literal
    assert "<img src=x" not in html and "&lt;img src=x onerror=" in html
    assert "<b>not bold</b>" not in html and "&lt;b&gt;not bold&lt;/b&gt;" in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html, re.I)
    assert "@import" not in html and "require.js" not in html and "mathjax" not in html.lower()
    assert "Content-Security-Policy" in html
    imgs = re.findall(r'<img[^>]*src="([^"]+)"', html)
    assert imgs and all(src.startswith("data:image/png;base64,") for src in imgs)
    assert "report.show(" not in html and "Report.open" not in html  # code is hidden


def test_table1_excludes_the_prefix_cache_hit(report_build):
    _, out, _ = report_build
    html = (out / "report.html").read_text(encoding="utf-8")
    table1 = _table(html, "results")
    assert "Table 1." in table1
    assert "95,941" not in table1 and "95941" not in table1
    assert "4,711" in table1
    assert "896.9, 982.5" in table1  # two passes: both values, not a mean
    every = _table(html, "all-cells")
    assert "79.4, 91.5, 104" in every and "95,941" not in every  # Table A1: three passes listed in order
    cells = (out / "tables" / "cells.csv").read_text()
    assert "95941" not in cells


def test_numbering_is_sequential(report_build):
    _, out, _ = report_build
    html = (out / "report.html").read_text(encoding="utf-8")
    tables = [int(n) for n in re.findall(r'<span class="label">Table (\d+)\.</span>', html)]
    figures = [int(n) for n in re.findall(r'<span class="label">Figure (\d+)\.</span>', html)]
    assert tables == list(range(1, len(tables) + 1)) and len(tables) >= 3
    assert figures == list(range(1, len(figures) + 1)) and len(figures) >= 3
    assert len(figures) == len(list((out / "figures").glob("*.png")))
    heads = re.findall(r"<h2[^>]*>(.*?)<", html)
    numbered = [h for h in heads if re.match(r"\d ", h)]
    # 1 to 7: section 8 (history) is empty without a cell measured on two dates, and not printed
    assert [h.split()[0] for h in numbered] == [str(i) for i in range(1, 8)]


def test_svg_figures_are_deterministic(report_build):
    _, out, _ = report_build
    svg = (out / "figures" / "figure-01.svg").read_text()
    assert "<dc:date>" not in svg
    from benchreport.report.model import figures

    # the same figure saved again gives the same bytes
    import pandas as pd

    cells = pd.read_csv(out / "tables" / "cells.csv")
    fig = figures.throughput_vs_concurrency(cells, baseline="inc-tp2")
    a = figures.save_figure(fig, out.parent / "svg-a", "figure-01", ("svg", "pdf"))
    b = figures.save_figure(fig, out.parent / "svg-b", "figure-01", ("svg", "pdf"))
    assert a["svg"].read_bytes() == b["svg"].read_bytes()
    assert a["pdf"].read_bytes() == b["pdf"].read_bytes()


def test_rendering_is_reproducible_from_the_executed_notebook(report_build):
    """report.html is a pure function of report.ipynb: papermill's random cell ids do not leak."""
    import nbformat

    from benchreport.report.render.html import notebook_to_html

    _, out, _ = report_build
    nb = nbformat.read(out / "report.ipynb", as_version=4)
    for cell in nb.cells:
        if "injected-parameters" in cell.metadata.get("tags", []):
            cell["id"] = "another-random-id"
    assert notebook_to_html(nb, title=TITLE) == (out / "report.html").read_text(encoding="utf-8")


def _pdf_dates(data: bytes) -> set[bytes]:
    return set(re.findall(rb"/(?:CreationDate|ModDate) \(D:(\d{14})", data))


def test_pdf_is_reproducible_from_the_html_and_its_date(report_build, tmp_path, monkeypatch):
    """report.pdf is a pure function of report.html and its date: no random id; the date is the
    build's (issue 42: not 1970-01-01), and SOURCE_DATE_EPOCH sets it."""
    import datetime as dt

    from benchreport.report.render.pdf import html_to_pdf

    _, out, _ = report_build
    built = (out / "report.pdf").read_bytes()
    (stamp,) = _pdf_dates(built)
    when = dt.datetime.strptime(stamp.decode(), "%Y%m%d%H%M%S").replace(tzinfo=dt.timezone.utc)
    assert abs((dt.datetime.now(dt.timezone.utc) - when).days) <= 2  # the build's day, not 1970
    html = (out / "report.html").read_text(encoding="utf-8")
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    again = html_to_pdf(html, tmp_path / "again.pdf", when=when.timestamp())
    assert again.read_bytes() == built
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1765000000")  # 2025-12-06 05:46:40 UTC
    dated = html_to_pdf(html, tmp_path / "dated.pdf", when=when.timestamp()).read_bytes()
    assert _pdf_dates(dated) == {b"20251206054640"} and len(dated) == len(built)


# --- the example data (make report) -------------------------------------------------------


@pytest.fixture(scope="session")
def example_build(tmp_path_factory):
    folder, lock = shared_dir(tmp_path_factory, "example-build")
    with _locked(lock):
        result_file = folder / "result.json"
        if not result_file.exists():
            folder.mkdir(parents=True, exist_ok=True)
            proc = run_cli(
                "build",
                str(ROOT / "data" / "example"),
                "--out",
                str(folder / "out"),
                "--title",
                "Example: the fleet paper and the four-node field note",
            )
            result_file.write_text(json.dumps({"returncode": proc.returncode, "stderr": proc.stderr}))
    r = json.loads(result_file.read_text())
    assert r["returncode"] == 0, r["stderr"]
    return folder / "out", pdf_text(folder / "out" / "report.pdf")


@pytest.mark.slow
@pytest.mark.parametrize(
    "caveat",
    [
        "95,941",
        "4,711",  # prefix-cache hit against fresh-prompt prefill
        "79.4 → 91.5 → 104",  # EXL3 warm-up drift
        "896.9 and 982.5",  # two Qwen passes, both values
        "763.9",  # the cross-node figure at 16 streams
        "204.5 GB",  # the checkpoint against one node
        "205.3 GB",
        "28 of 30",  # capped answers on 25 Oct
        "CC-BY-NC-ND-4.0",  # the non-commercial drafter
        "RDMA",  # the unreproduced fabric fault
        "Grammar-engine failure",  # the open defect
        "reasoning field",  # the response-field trap
        "different models",  # cross-model comparison
        "earlier runs",  # stale exam scores
        "which was not measured those days",  # no incumbent beside the field-note seats
    ],
)
def test_example_report_states_every_seed_caveat(example_build, caveat):
    _, text = example_build
    assert caveat in text


@pytest.mark.slow
def test_example_report_states_the_humaneval_delta(example_build):
    """153 vs 154 of 164: a one-problem difference, p = 1.0 (the field note's exam caveat)."""
    _, text = example_build
    m = re.search(r"HumanEval\b(.{0,300}?)p = 1\.0", text)
    assert m, "the HumanEval delta with its exact test"
    assert "153 of 164" in m.group(1) and "154 of 164" in m.group(1)


def test_the_parameters_table_names_no_staging_folder_or_temporary_file(example_build):
    """The build writes into a hidden staging folder and hands the notebook a temporary analysis
    file: neither is a choice of the user, and neither path exists once the build is done."""
    _, text = example_build
    start = text.index("Parameters of this build")
    table = text[start : start + 1500]
    assert ".tmp-" not in table and "analysis.pickle" not in table
    assert "multiplicity" in table and "n_boot" not in table and "seed" not in table  # what took effect only
    assert "ci_method" in table  # t, the default (issue 43); n_boot and seed only with a bootstrap


def test_the_example_report_speaks_a_readers_words(example_build):
    """Issue 42: no issue numbers, project files, flag codes, hashes or unexplained abbreviations
    in the report's text (HTML and PDF)."""
    from report_text import html_text, internal_tokens

    out, pdf_text = example_build
    assert internal_tokens(html_text(out / "report.html")) == []
    assert internal_tokens(" ".join(pdf_text.split())) == []


def test_every_figure_in_the_example_reports_words_is_a_table_row(example_build):
    """Issue 42: each measured figure a sentence states is in tables/*.csv or flags.json at the
    decimals the sentence gives; a figure the report made up in a sentence fails."""
    from report_text import unsourced_figures

    out, _ = example_build
    assert unsourced_figures(out) == []


def test_a_figure_no_table_holds_is_found(tmp_path):
    """The check itself: a sentence's number that no table holds is reported, one that a table
    holds (rounded, or as a percentage of a share) is not."""
    from report_text import unsourced_figures

    (tmp_path / "tables").mkdir()
    (tmp_path / "tables" / "cells.csv").write_text("estimate,share\n112.84,0.0745\n", encoding="utf-8")
    (tmp_path / "flags.json").write_text('[{"evidence": {"value": 95941.2}}]', encoding="utf-8")
    (tmp_path / "report.html").write_text(
        "<p>112.8 tok/s, 7.4% of them, 95,941 tok/s; but 113.9 tok/s and 4,711 tok/s</p><table><td>1.5</td></table>",
        encoding="utf-8",
    )
    assert [x.split(":")[0] for x in unsourced_figures(tmp_path)] == ["113.9", "4,711"]


def test_the_token_scan_finds_each_kind():
    """The scan itself: each kind of internal token is found."""
    from report_text import internal_tokens

    text = "as issue 30 said (spec/flags.md; benchmarks/coverage.py) sample.single_pass, load #3fa2c1, EWC t, CUSUM, 52 → ? tok"
    kinds = {x.split(":")[0] for x in internal_tokens(text)}
    assert kinds == {
        "an issue number",
        "a contract file",
        "a project file",
        "a flag code",
        "a hash as a name",
        "an unexplained method",
        "CUSUM never spelled out",
        "a placeholder figure",
    }


def test_the_parameters_table_shows_input_paths_relative():
    """Issue 42: this machine's absolute input paths are not printed; a path under the folder the
    build ran in is relative to it, one far outside it is named by its last two parts."""
    import os

    from benchreport.report.model.sections.appendix import shown_path

    here = Path.cwd()
    assert shown_path(here / "data" / "example") == os.path.join("data", "example")
    assert shown_path(here.parent / "x") == os.path.join(os.pardir, "x")
    far = Path(here.anchor, "srv", "deep", "runs", "nightly")
    if len(here.parts) >= 3:
        assert shown_path(far) == os.path.join("…", "runs", "nightly")


def test_every_flag_message_is_in_the_html_whole(example_build):
    """Section 7 says the flags by topic (and may join several into one sentence); the appendix's
    table of every flag has each message of flags.json whole, never cut (issue 27)."""
    from report_text import html_text

    out, pdf = example_build
    text = html_text(out / "report.html")
    flags = json.loads((out / "flags.json").read_text(encoding="utf-8"))
    assert flags
    missing = [f["message"][:80] for f in flags if " ".join(f["message"].split()) not in text]
    assert not missing, missing
    assert "flags.json beside this report has every value" in " ".join(pdf.split())  # the PDF says where
