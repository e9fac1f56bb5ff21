"""Untrusted text never becomes notebook code: folder names and titles reach papermill as data,
and a refused corpus is listed in the report's appendix."""

from __future__ import annotations

import html
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CORPUS = Path(__file__).parent / "bad_inputs"
EXPECTED = json.loads((Path(__file__).parent / "bad_inputs_expected.json").read_text())


def build(*args):
    return subprocess.run(
        [sys.executable, "-m", "benchreport", "build", *map(str, args), "--format", "html", "--quiet"],
        capture_output=True,
        text=True,
    )


@pytest.mark.slow
def test_folder_names_and_titles_are_data_not_code(tmp_path):
    marker = tmp_path / "PWNED"
    evil = f'x"; open({str(marker)!r}, "w").close()  # \\'
    data = tmp_path / ('runs "quoted" \\ ' + "'single'")
    shutil.copytree(CORPUS / "good", data)
    out = tmp_path / "out"
    proc = build(data, "--out", out, "--title", evil)
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists()
    page = (out / "report.html").read_text(encoding="utf-8")
    # shown as text, escaped (whichever entity forms), never as markup
    from markupsafe import escape

    assert any(form in page for form in (html.escape(evil, quote=False), html.escape(evil), str(escape(evil))))
    params = json.loads((out / "report.ipynb").read_text())["metadata"]["papermill"]["parameters"]
    assert params["title"] == evil and params["runs"] == [str(data.absolute())]


@pytest.mark.slow
def test_skip_bad_lists_every_refused_file_in_the_appendix(tmp_path):
    out = tmp_path / "out"
    # --strict: the corpus's files that are not run files (binary.json, deep-nesting.json) are
    # refused too, as every corpus file is (without it they are skipped, issue 31)
    proc = build(CORPUS, "--out", out, "--skip-bad", "--strict")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    page = (out / "report.html").read_text(encoding="utf-8")
    for name in EXPECTED:
        assert html.escape(name) in page, name
    refused = json.loads((out / "refused.json").read_text())["refused"]
    assert len(refused) == len(EXPECTED)
    proc = build(CORPUS, "--out", tmp_path / "strict")
    assert proc.returncode == 1 and not (tmp_path / "strict").exists()
    assert "Traceback" not in proc.stderr
