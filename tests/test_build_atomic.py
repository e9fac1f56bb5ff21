"""`benchreport build` never leaves a half-written report: exit codes, refusals, atomic replace.

Most tests stop the build before papermill (a refused file, a usage error) or replace the
notebook step with a stand-in, so they run in seconds; the real build is in
tests/test_report_e2e.py.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
from pathlib import Path

import pytest

from benchreport import outdir
from benchreport.pipeline import Options
from benchreport.report import build as B
from test_report_e2e import write_fixture_runs


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under `folder` with its SHA-256 (and every folder), for byte-identity checks."""
    out = {}
    for root, dirs, files in os.walk(folder):
        for d in dirs:
            out[os.path.relpath(os.path.join(root, d), folder) + "/"] = "dir"
        for f in files:
            p = Path(root) / f
            out[os.path.relpath(p, folder)] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def previous_report(parent: Path) -> Path:
    """A stand-in for the last good report (what matters: it must not change)."""
    out = parent / "report"
    (out / "figures").mkdir(parents=True)
    (out / "tables").mkdir()
    (out / "report.html").write_text("<html>last good report</html>")
    (out / "report.pdf").write_bytes(b"%PDF-1.7 last good\x00\x01")
    (out / "flags.json").write_text("[]\n")
    (out / "figures" / "figure-01.png").write_bytes(os.urandom(256))
    (out / "tables" / "cells.csv").write_text("seat\n")
    return out


def leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if ".tmp-" in p.name or ".old-" in p.name)


def test_refused_file_leaves_previous_report_byte_identical(tmp_path, cli):
    data = write_fixture_runs(tmp_path / "data")  # includes broken.json
    out = previous_report(tmp_path)
    before = snapshot(out)
    proc = cli("build", str(data), "--out", str(out))
    assert proc.returncode == 1
    assert "broken.json: $: expected complete JSON" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert "nothing was written" in proc.stderr
    assert snapshot(out) == before
    assert leftovers(tmp_path) == []


def test_refused_file_without_previous_report_writes_nothing(tmp_path, cli):
    data = write_fixture_runs(tmp_path / "data")
    proc = cli("build", str(data), "--out", str(tmp_path / "new"), "--quiet")
    assert proc.returncode == 1
    assert not (tmp_path / "new").exists()
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--format", "html,docx"], "--format takes"),
        (["--figure-formats", "png,gif"], "--figure-formats takes"),
        (["--baseline", "no-such-seat"], "is not a seat in the data"),
    ],
)
def test_usage_errors_exit_2_in_one_line(tmp_path, cli, argv, message):
    data = write_fixture_runs(tmp_path / "data", bad=False)
    out = previous_report(tmp_path)
    before = snapshot(out)
    proc = cli("build", str(data), "--out", str(out), *argv)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert snapshot(out) == before and leftovers(tmp_path) == []


def test_refuses_to_replace_a_folder_that_is_not_a_report(tmp_path, cli):
    data = write_fixture_runs(tmp_path / "data", bad=False)
    home = tmp_path / "home"
    home.mkdir()
    (home / "thesis.tex").write_text("precious")
    proc = cli("build", str(data), "--out", str(home))
    assert proc.returncode == 2 and "refusing to replace" in proc.stderr
    assert (home / "thesis.tex").read_text() == "precious"


def test_no_run_files_exit_1(tmp_path, cli):
    (tmp_path / "empty").mkdir()
    proc = cli("build", str(tmp_path / "empty"), "--out", str(tmp_path / "out"))
    assert proc.returncode == 1 and "no run could be read" in proc.stderr
    assert not (tmp_path / "out").exists()


# --- in-process: the notebook step replaced by stand-ins ---------------------------------------


def _args(data: Path, out: Path, **kw) -> argparse.Namespace:
    base = dict(
        runs=[str(data)],
        out=str(out),
        format="html,pdf",
        title="T",
        baseline=None,
        fail_on=None,
        figure_formats="png,svg",
        skip_bad=False,
        quiet=True,
        max_file_mb=512,
        n_boot=200,
        seed=0,
        ci_method="BCa",
    )
    base.update(kw)
    return argparse.Namespace(**base)


def _build(args: argparse.Namespace) -> int:
    """`benchreport build` as the command line runs it: a request, the build, the exit code."""
    from benchreport.cli import build_request, run_build

    return run_build(build_request(args, Options()))


def _fake_tables(stage: Path, flags: list[dict]) -> None:
    """What the build writes beside the notebook: the tables and flags.json."""
    (stage / "tables").mkdir(parents=True, exist_ok=True)
    for name in ("cells", "comparisons", "exam_deltas"):
        (stage / "tables" / f"{name}.csv").write_text("x\n")
    (stage / "flags.json").write_text(json.dumps(flags))


def _fake_outputs(stage: Path) -> None:
    """What the notebook writes: the executed notebook and the figures."""
    (stage / "report.ipynb").write_text("{}")
    (stage / "figures").mkdir(parents=True, exist_ok=True)
    (stage / "figures" / "figure-01.png").write_bytes(b"png")


@pytest.fixture
def fake_steps(monkeypatch):
    """Replace papermill, the tables and rendering by stand-ins that write plausible outputs."""
    state = {"flags": [{"code": "sample.single_pass", "severity": "warn"}], "fail_in": None}

    def write_tables(analysis, stage):
        _fake_tables(Path(stage), state["flags"])

    def execute(params, output, analysis, *, quiet):
        stage = Path(output).parent
        _fake_outputs(stage)
        if state["fail_in"] == "execute":
            raise RuntimeError("the kernel died")
        if state["fail_in"] == "interrupt":
            raise KeyboardInterrupt
        if state["fail_in"] == "signal then error":  # SIGTERM seen, its raise turned into another error
            from benchreport import progress

            progress._received.append(15)
            raise ImportError("initialization failed")

    def render(stage, title, formats, *, quiet):
        if state["fail_in"] == "render":
            raise OSError("disk full")
        if "html" in formats:
            (stage / "report.html").write_text("new html")
        return "<html>new</html>"

    def print_pdf(html, stage, pdf_engine, *, quiet):
        state["printed"] = state.get("printed", 0) + 1
        if state["fail_in"] == "print":
            raise OSError("no space for the PDF")
        (stage / "report.pdf").write_text("new pdf")

    monkeypatch.setattr(B, "_execute", execute)
    monkeypatch.setattr(B, "write_analysis", write_tables)
    monkeypatch.setattr(B, "_render", render)
    monkeypatch.setattr(B, "_print", print_pdf)
    return state


def test_successful_build_replaces_previous_report(tmp_path, fake_steps):
    data = write_fixture_runs(tmp_path / "data", bad=False)
    out = previous_report(tmp_path)
    assert _build(_args(data, out)) == 0
    assert (out / "report.html").read_text() == "new html"
    assert not (out / "report.pdf").read_text().startswith("%PDF-1.7 last good")
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("where", ["execute", "render", "print"])
def test_failed_build_leaves_previous_report_byte_identical(tmp_path, fake_steps, where, capsys):
    fake_steps["fail_in"] = where
    data = write_fixture_runs(tmp_path / "data", bad=False)
    out = previous_report(tmp_path)
    before = snapshot(out)
    assert _build(_args(data, out)) == 4
    err = capsys.readouterr().err
    assert "Traceback" not in err and "unchanged" in err
    assert snapshot(out) == before
    assert leftovers(tmp_path) == []


def test_interrupted_build_cleans_up(tmp_path, fake_steps):
    fake_steps["fail_in"] = "interrupt"
    data = write_fixture_runs(tmp_path / "data", bad=False)
    out = previous_report(tmp_path)
    before = snapshot(out)
    with pytest.raises(KeyboardInterrupt):
        _build(_args(data, out))
    assert snapshot(out) == before
    assert leftovers(tmp_path) == []


def test_an_error_the_signal_caused_is_the_signal(tmp_path, fake_steps):
    """SIGTERM inside the notebook can surface as another exception (an extension module's import
    interrupted: "ImportError: initialization failed"): the build stops as terminated, not as a
    failed notebook, and the previous report is untouched."""
    from benchreport.progress import Terminated, terminate_as_interrupt

    fake_steps["fail_in"] = "signal then error"
    data = write_fixture_runs(tmp_path / "data", bad=False)
    out = previous_report(tmp_path)
    before = snapshot(out)
    with pytest.raises(Terminated), terminate_as_interrupt():
        _build(_args(data, out))
    assert snapshot(out) == before
    assert leftovers(tmp_path) == []


def test_interrupt_through_the_cli_exits_130(tmp_path, fake_steps, capsys):
    from benchreport.cli import main

    fake_steps["fail_in"] = "interrupt"
    data = write_fixture_runs(tmp_path / "data", bad=False)
    assert main(["build", str(data), "--out", str(tmp_path / "out"), "--quiet"]) == 130
    assert not (tmp_path / "out").exists() and leftovers(tmp_path) == []


@pytest.mark.parametrize(
    "level, severity, code",
    [("warn", "warn", 3), ("critical", "warn", 0), ("critical", "critical", 3), (None, "critical", 0)],
)
def test_fail_on_exit_3_after_a_successful_build(tmp_path, fake_steps, level, severity, code):
    fake_steps["flags"] = [{"code": "x", "severity": severity}]
    data = write_fixture_runs(tmp_path / "data", bad=False)
    out = tmp_path / "out"
    assert _build(_args(data, out, fail_on=level)) == code
    assert (out / "report.html").is_file()  # the report is written either way


def test_skip_bad_goes_on(tmp_path, fake_steps):
    data = write_fixture_runs(tmp_path / "data")
    assert _build(_args(data, tmp_path / "out", skip_bad=True)) == 0


def test_pdf_only(tmp_path, fake_steps):
    data = write_fixture_runs(tmp_path / "data", bad=False)
    out = tmp_path / "out"
    assert _build(_args(data, out, format="pdf")) == 0
    assert (out / "report.pdf").exists() and not (out / "report.html").exists()


# --- the swap itself ---------------------------------------------------------------------------


def _tree(folder: Path, text: str) -> Path:
    folder.mkdir()
    (folder / "report.html").write_text(text)
    return folder


def test_replace_dir_into_nothing(tmp_path):
    new = _tree(tmp_path / ".r.tmp-1", "new")
    B.replace_dir(new, tmp_path / "r")
    assert (tmp_path / "r" / "report.html").read_text() == "new" and not new.exists()


@pytest.mark.parametrize("exchange", [True, False])
def test_replace_dir_over_an_old_report(tmp_path, monkeypatch, exchange):
    if not exchange:
        monkeypatch.setattr(outdir, "_exchange", lambda a, b: False)  # filesystems without renameat2
    old = _tree(tmp_path / "r", "old")
    new = _tree(tmp_path / ".r.tmp-1", "new")
    B.replace_dir(new, old)
    assert (tmp_path / "r" / "report.html").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r"]


def test_staging_dir_is_removed_on_error(tmp_path):
    with pytest.raises(ValueError):
        with B.staging_dir(tmp_path / "r") as stage:
            (stage / "half.html").write_text("half")
            assert stage.parent == tmp_path and stage.name.startswith(".r.tmp-")
            raise ValueError("boom")
    assert list(tmp_path.iterdir()) == []


def test_sigterm_during_the_notebook_cleans_up(tmp_path):
    """A scheduler's timeout (SIGTERM) mid-build: exit, previous report intact, no staging folder."""
    import signal
    import subprocess
    import sys
    import time

    from test_report_e2e import ROOT

    data = write_fixture_runs(tmp_path / "data", bad=False)
    out = previous_report(tmp_path)
    before = snapshot(out)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchreport", "build", str(data), "--out", str(out)],
        cwd=str(ROOT),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60

    def drawing() -> bool:  # the notebook has begun its figures: inside papermill
        return any((tmp_path / name / "figures").is_dir() for name in leftovers(tmp_path))

    while time.monotonic() < deadline and not drawing() and proc.poll() is None:
        time.sleep(0.01)
    assert drawing(), "the build never reached the notebook's figures"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err  # 128 + SIGTERM, as a shell reports a terminated command
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert err.strip().splitlines()[-1] == ("benchreport build: terminated (SIGTERM); nothing half-written was left"), (
        err
    )
    assert snapshot(out) == before
    assert leftovers(tmp_path) == []
    assert _processes_of(str(out)) == []  # nothing the build started is left


def _processes_of(argument: str) -> list[int]:
    """Live processes (not zombies) whose command line holds `argument` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if argument.encode() in cmd and state != "Z":
            found.append(int(entry.name))
    return found


def test_a_changed_installation_is_never_up_to_date(monkeypatch):
    """The build's key covers benchreport's own files: the same data, options and version after a
    code change (a new template, a fixed statistic) build anew instead of answering "up to date"."""
    from benchreport.report import build as B

    from benchreport.pipeline import Options
    from benchreport.source import Source

    request = B.BuildRequest(Source.of(["data"]), "out", Options())
    key = B._build_key("data", request, ["html"], ["png"])
    assert key == B._build_key("data", request, ["html"], ["png"])
    monkeypatch.setattr(B, "_code_digest", lambda: "another installation")
    assert key != B._build_key("data", request, ["html"], ["png"])
