"""`--log FILE` (issue 45): opened without blocking, so a FIFO nobody reads is refused at once (it
hung forever), a device (`/dev/full`) is refused, and a log that stops being writable mid-command
(a full disk) stops the log with one line, never the command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "data" / "example"


def _validate(*extra):
    return subprocess.run(
        [sys.executable, "-m", "benchreport", "validate", str(EXAMPLE), "--quiet", *map(str, extra)],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_nobody_reads_is_refused_at_once(tmp_path):
    fifo = tmp_path / "log"
    os.mkfifo(fifo)
    proc = _validate("--log", fifo)  # the timeout above fails the test if it waits
    assert proc.returncode == 2 and "a FIFO nobody reads" in proc.stderr


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
def test_a_device_is_refused():
    proc = _validate("--log", "/dev/full")
    assert proc.returncode == 2 and "not a regular file" in proc.stderr and "Traceback" not in proc.stderr


def test_a_regular_log_gets_the_command_and_its_exit(tmp_path):
    proc = _validate("--log", tmp_path / "log")
    assert proc.returncode == 0
    lines = (tmp_path / "log").read_text().splitlines()
    assert "benchreport" in lines[0] and "validate" in lines[0] and lines[-1].endswith("exit 0")


def test_a_log_that_fails_mid_command_stops_the_log_not_the_command(capsys):
    from benchreport.cli.log import _Tee

    class Full:
        def write(self, text):
            raise OSError(28, "No space left on device")

        def flush(self):
            raise OSError(28, "No space left on device")

    tee = _Tee(sys.stderr, Full())
    tee.write("one\n")
    tee.write("two\n")
    tee.flush()
    err = capsys.readouterr().err
    assert err.count("--log stopped") == 1 and "No space left on device" in err and "two" in err
