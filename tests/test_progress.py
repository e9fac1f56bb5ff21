"""Progress on long steps (spec/cli.md): a tqdm bar on stderr when it is a terminal, nothing in
a log or with --quiet."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from benchreport.load import load
from benchreport.progress import progress

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "data" / "example" / "field-note"


def test_bar_counts_the_files_on_stderr_when_enabled(capsys):
    result = load([EXAMPLE], progress=True)
    n = len(result.runs) + len(result.skipped) + len(result.refused)
    err = capsys.readouterr().err
    assert "reading run files" in err and f"{n}/{n}" in err
    assert capsys.readouterr().out == ""  # stdout stays the command's output


@pytest.mark.parametrize("enabled", [None, False])
def test_no_bar_when_stderr_is_not_a_terminal_or_disabled(capsys, enabled):
    load([EXAMPLE], progress=enabled)  # capsys' stderr is not a terminal
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("enabled", [True, False])
def test_progress_passes_every_item_through(capsys, enabled):
    with progress(range(5), "x", enabled=enabled) as items:
        assert list(items) == [0, 1, 2, 3, 4]
    assert ("5/5" in capsys.readouterr().err) is enabled


def _stderr_on_a_terminal(*args: str, columns: int = 0) -> str:
    """`benchreport ARGS` with stderr on a pseudo-terminal (stdout a pipe): what it printed there.
    A new pseudo-terminal reports 0 columns until `columns` sets its width."""
    master, slave = pty.openpty()
    if columns:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchreport", *args],
        stdout=subprocess.PIPE,
        stderr=slave,
        stdin=subprocess.DEVNULL,
        env=env,
        cwd=ROOT,
    )
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            proc.kill()
            raise AssertionError("no output for 60 s")
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.communicate(timeout=60)
    os.close(master)
    return b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
@pytest.mark.parametrize("columns", [100, 0])
def test_cli_shows_the_bar_on_a_terminal_and_quiet_hides_it(columns):
    shown = _stderr_on_a_terminal("validate", str(EXAMPLE), columns=columns)
    n = shown.split(" run(s) valid")[0].split()[-1]
    assert "reading run files" in shown and f"| {n}/{n} [" in shown, shown
    quiet = _stderr_on_a_terminal("validate", str(EXAMPLE), "--quiet", columns=columns)
    assert quiet.strip() == ""


def test_cli_shows_no_bar_in_a_log():
    proc = subprocess.run(
        [sys.executable, "-m", "benchreport", "validate", str(EXAMPLE)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 0 and "run(s) valid" in proc.stderr
    assert "reading run files" not in proc.stderr and "\r" not in proc.stderr


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the swallowed raise
def test_a_sigterm_swallowed_inside_a_finaliser_is_raised_again(tmp_path):
    """Python ignores an exception raised in `__del__` or a weakref callback ("Exception ignored"):
    CI saw a build run to its end and publish after SIGTERM landed in one. The signal is recorded,
    so leaving the step, or publishing, still stops with Terminated; the previous output stays."""
    import gc
    import signal

    from benchreport import outdir
    from benchreport.progress import Terminated, terminate_as_interrupt

    class KillsOnCollection:
        def __del__(self):
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(1000):  # the handler runs here, inside the finaliser, and its raise is lost
                pass

    stage, target = tmp_path / "stage", tmp_path / "out"
    stage.mkdir()
    target.mkdir()
    (target / "old.txt").write_text("previous")
    with pytest.raises(Terminated):
        with terminate_as_interrupt():
            KillsOnCollection()
            gc.collect()
            with pytest.raises(Terminated):
                outdir.publish(stage, target, "build")
    assert (target / "old.txt").read_text() == "previous"
    assert signal.getsignal(signal.SIGTERM) is not None
