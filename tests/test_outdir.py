"""An output folder is benchreport's only if benchreport made it: every way a build, `analyse`
or `ingest` could destroy a user's files, each checked by hashing every file before and after.

The commands stop before any statistics when the folder is refused, so these run in-process
through `benchreport.cli.main` in well under a second each.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from benchreport import outdir
from benchreport.cli import main
from benchreport.load import load
from test_build_atomic import snapshot

GOOD = Path(__file__).parent / "bad_inputs" / "good"
COMMANDS = ["build", "analyse", "ingest"]


def runs_folder(path: Path) -> Path:
    """A small folder of valid run files (the corpus' good files)."""
    shutil.copytree(GOOD, path)
    return path


def cli(capsys, *argv) -> tuple[int, str]:
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


def fast(command: str) -> list[str]:
    """Options that keep a command quick (stats commands only)."""
    return ["--quiet"]


def made_by(capsys, runs: Path, out: Path, command: str = "ingest") -> Path:
    """`out` as a command writes it (ingest by default: no statistics, so quick)."""
    code, err = cli(capsys, command, runs, "--out", out, *fast(command))
    assert code == 0, err
    assert (out / outdir.MARKER).is_file()
    return out


# --- item 1: a folder benchreport did not make is never replaced or emptied -------------------


@pytest.mark.parametrize("command", COMMANDS)
def test_user_folder_with_a_report_like_entry_is_refused(tmp_path, capsys, command):
    runs = runs_folder(tmp_path / "runs")
    user = tmp_path / "U"
    (user / "tables").mkdir(parents=True)
    (user / "thesis.docx").write_bytes(b"four years of work")
    before = snapshot(user)
    code, err = cli(capsys, command, runs, "--out", user, *fast(command))
    assert code == 2
    assert err.count("\n") == 1 and "thesis.docx" in err and "did not make it" in err
    assert snapshot(user) == before


def test_marked_folder_with_a_file_added_since_is_refused(tmp_path, capsys):
    runs = runs_folder(tmp_path / "runs")
    out = made_by(capsys, runs, tmp_path / "out")
    (out / "notes").mkdir()
    (out / "notes" / "mine.txt").write_text("mine")
    before = snapshot(out)
    code, err = cli(capsys, "analyse", runs, "--out", out, *fast("analyse"))
    assert code == 2 and "notes/" in err and "did not write" in err
    assert snapshot(out) == before


def test_marked_folder_is_replaced_and_lists_its_files(tmp_path, capsys):
    runs = runs_folder(tmp_path / "runs")
    out = made_by(capsys, runs, tmp_path / "out")
    (out / ".DS_Store").write_bytes(b"clutter")  # a file browser's, removed with the folder
    made_by(capsys, runs, out, "analyse")
    marker = json.loads((out / outdir.MARKER).read_text())
    assert marker["format"] == "benchreport.output/1" and marker["command"] == "analyse"
    assert sorted(marker["files"]) == [
        "flags.json",
        "provenance.csv",
        "refused.json",
        "tables/agreement.csv",
        "tables/cells.csv",
        "tables/comparisons.csv",
        "tables/exam_deltas.csv",
        "tables/history.csv",
        "tables/passes.csv",
        "tables/seats.csv",
        "tables/sessions.csv",
    ]
    assert not (out / ".DS_Store").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "runs"]


def test_unmarked_folder_of_only_benchreport_names_is_replaced(tmp_path, capsys):
    """A report folder written before the marker existed: replaced when it holds nothing else."""
    runs = runs_folder(tmp_path / "runs")
    old = tmp_path / "old"
    (old / "tables").mkdir(parents=True)
    (old / "figures").mkdir()
    (old / "tables" / "cells.csv").write_text("seat\n")
    (old / "figures" / "figure-01.png").write_bytes(b"png")
    (old / "report.html").write_text("<html></html>")
    made_by(capsys, runs, old)
    assert not (old / "report.html").exists()


def test_unmarked_folder_with_a_foreign_file_in_figures_is_refused(tmp_path, capsys):
    runs = runs_folder(tmp_path / "runs")
    old = tmp_path / "old"
    (old / "figures").mkdir(parents=True)
    (old / "report.html").write_text("<html></html>")
    (old / "figures" / "poster.psd").write_bytes(b"layers")
    before = snapshot(old)
    code, err = cli(capsys, "analyse", runs, "--out", old, *fast("analyse"))
    assert code == 2 and "figures/poster.psd" in err
    assert snapshot(old) == before


# --- items 2-4: --out must not contain, be, or lie inside an input ------------------------------


@pytest.mark.parametrize("command", COMMANDS)
def test_input_inside_out_is_refused(tmp_path, capsys, command):
    """Item 2: `build A --out P; cp -r B P/runs; build P/runs --out P` deleted P/runs."""
    out = made_by(capsys, runs_folder(tmp_path / "A"), tmp_path / "P")
    runs_folder(out / "runs")
    before = snapshot(out)
    code, err = cli(capsys, command, out / "runs", "--out", out, *fast(command))
    assert code == 2 and "contains the input" in err
    assert snapshot(out) == before


@pytest.mark.parametrize("command", COMMANDS)
def test_out_equal_to_the_input_is_refused(tmp_path, capsys, command):
    """Item 3: `analyse R --out R; build R --out R --skip-bad` deleted every run file in R."""
    runs = runs_folder(tmp_path / "R")
    before = snapshot(runs)
    code, err = cli(capsys, command, runs, "--out", runs, "--skip-bad", *fast(command))
    assert code == 2 and "is the input" in err
    assert snapshot(runs) == before


@pytest.mark.parametrize("command", COMMANDS)
def test_out_inside_the_input_is_refused(tmp_path, capsys, command):
    """Item 4: the next build read its own flags.json and refused.json and exited 1."""
    runs = runs_folder(tmp_path / "R")
    before = snapshot(runs)
    code, err = cli(capsys, command, runs, "--out", runs / "report", *fast(command))
    assert code == 2 and "lies inside the input" in err
    assert snapshot(runs) == before


def test_input_reached_through_a_symlink_counts(tmp_path, capsys):
    runs = runs_folder(tmp_path / "R")
    (tmp_path / "alias").symlink_to(runs)
    before = snapshot(runs)
    code, err = cli(capsys, "analyse", tmp_path / "alias", "--out", runs / "out", *fast("analyse"))
    assert code == 2 and "lies inside the input" in err
    assert snapshot(runs) == before


def test_an_output_folder_inside_runs_is_not_read_back(tmp_path, capsys):
    """A report folder that ended up among the runs is skipped by name, not refused."""
    runs = runs_folder(tmp_path / "R")
    made_by(capsys, runs_folder(tmp_path / "other"), tmp_path / "report")
    shutil.move(tmp_path / "report", runs / "report")
    result = load([runs])
    assert result.ok and len(result.runs) == 3
    assert [s.reason for s in result.skipped] == [
        f"a benchreport output folder (it holds {outdir.MARKER}): not read as runs"
    ]


# --- item 20: leftovers of killed builds, symlinked --out ------------------------------------------


def _dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(proc.stdout)


def _staging_leftover(parent: Path, name: str, pid: int) -> Path:
    path = parent / name
    path.mkdir()
    (path / "report.html").write_text("half")
    (path / outdir.MARKER).write_text(
        json.dumps({"format": outdir.MARKER_FORMAT, "state": "staging", "pid": pid, "host": outdir._host()})
    )
    return path


def test_leftovers_of_killed_builds_are_cleaned_but_only_ours(tmp_path, capsys):
    runs = runs_folder(tmp_path / "runs")
    killed = _staging_leftover(tmp_path, ".out.tmp-killed1", _dead_pid())
    running = _staging_leftover(tmp_path, ".out.tmp-running", os.getpid())
    users = tmp_path / ".out.tmp-mine"  # same pattern, no marker: not ours
    users.mkdir()
    (users / "keep.txt").write_text("mine")
    other = _staging_leftover(tmp_path, ".other.tmp-x", _dead_pid())  # another --out's
    before = {p: snapshot(p) for p in (running, users, other)}
    made_by(capsys, runs, tmp_path / "out")
    assert not killed.exists()
    assert {p: snapshot(p) for p in (running, users, other)} == before


def test_symlinked_out_is_followed_and_the_link_kept(tmp_path, capsys):
    runs = runs_folder(tmp_path / "runs")
    real = made_by(capsys, runs, tmp_path / "real")
    link = tmp_path / "link"
    link.symlink_to(real)
    (real / "refused.json").write_text("stale")
    made_by(capsys, runs, link)
    assert link.is_symlink() and link.resolve() == real.resolve()
    assert (real / "refused.json").read_text() != "stale"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "real", "runs"]


def test_symlink_to_a_user_folder_is_refused_and_nothing_touched(tmp_path, capsys):
    runs = runs_folder(tmp_path / "runs")
    home = tmp_path / "home"
    home.mkdir()
    (home / "thesis.tex").write_text("precious")
    link = tmp_path / "link"
    link.symlink_to(home)
    before = snapshot(home)
    code, err = cli(capsys, "analyse", runs, "--out", link, *fast("analyse"))
    assert code == 2 and "thesis.tex" in err
    assert snapshot(home) == before and link.is_symlink()


def test_dangling_symlink_out_is_followed(tmp_path, capsys):
    runs = runs_folder(tmp_path / "runs")
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "target")
    made_by(capsys, runs, link)
    assert link.is_symlink() and (tmp_path / "target" / "refused.json").is_file()


def test_symlink_loop_out_is_refused(tmp_path, capsys):
    runs = runs_folder(tmp_path / "runs")
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    code, err = cli(capsys, "analyse", runs, "--out", tmp_path / "a", *fast("analyse"))
    assert code == 2 and "cannot be resolved" in err


# --- impossible --out: exit 4, previous output intact ---------------------------------------------


@pytest.mark.parametrize("command", COMMANDS)
def test_out_under_a_file_exits_4(tmp_path, capsys, command):
    runs = runs_folder(tmp_path / "runs")
    (tmp_path / "afile").write_text("not a folder")
    code, err = cli(capsys, command, runs, "--out", tmp_path / "afile" / "out", *fast(command))
    assert code == 4 and err.count("\n") == 1 and "unchanged" in err
    assert (tmp_path / "afile").read_text() == "not a folder"


def test_out_that_is_a_file_is_refused(tmp_path, capsys):
    runs = runs_folder(tmp_path / "runs")
    (tmp_path / "afile").write_text("not a folder")
    code, err = cli(capsys, "analyse", runs, "--out", tmp_path / "afile", *fast("analyse"))
    assert code == 2 and "is not a folder" in err
    assert (tmp_path / "afile").read_text() == "not a folder"


def test_failed_write_leaves_the_previous_output_byte_identical(tmp_path, capsys, monkeypatch):
    runs = runs_folder(tmp_path / "runs")
    out = made_by(capsys, runs, tmp_path / "out")
    before = snapshot(out)

    def full_disk(analysis, out_dir):
        raise OSError(28, "No space left on device", str(out_dir))

    monkeypatch.setattr("benchreport.pipeline.write_analysis", full_disk)
    code, err = cli(capsys, "analyse", runs, "--out", out, *fast("analyse"))
    assert code == 4 and "No space left on device" in err and "unchanged" in err
    assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "runs"]


_SIGNAL_IN_MKDTEMP = r"""
import os, signal, sys, tempfile
from pathlib import Path
from benchreport import outdir

real = tempfile.mkdtemp

def mkdtemp_then_signal(*args, **kwargs):
    made = real(*args, **kwargs)  # the folder exists: a signal now fell between it and its clean-up
    os.kill(os.getpid(), signal.SIGINT)
    for _ in range(10000):
        pass
    return made

tempfile.mkdtemp = mkdtemp_then_signal
target = Path(sys.argv[1]) / "out"
try:
    with outdir.staging(target, "build"):
        print("staged", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
print(sorted(p.name for p in target.parent.iterdir()), flush=True)
"""


def test_ctrl_c_while_the_staging_folder_is_made_leaves_no_folder(tmp_path):
    """Ctrl-C arriving while the staging folder is made (after the folder exists, before its
    removal is assured) still leaves nothing behind: the signal is held over that step and raised
    once the folder is in the clean-up's hands (a fresh clone's `make test`, Ctrl-C 0.5 s into a
    build, left `.out.tmp-*`)."""
    res = subprocess.run(
        [sys.executable, "-c", _SIGNAL_IN_MKDTEMP, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a background job ignores it
    )
    assert res.stdout.splitlines() == ["interrupted", "[]"], res
