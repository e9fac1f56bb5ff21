"""`--log FILE` (issue 45): opened without blocking, so a FIFO nobody reads is refused at once (it
hung forever), a device (`/dev/full`) is refused, and a log that stops being writable mid-command
(a full disk) stops the log with one line, never the command; a full disk under a command's
output is one line and exit 4; `validate --store` says what it counted."""

from __future__ import annotations

import os
import shutil
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


def test_the_log_tee_answers_what_stderr_answers():
    """A build asks stderr whether it is a terminal (its step lines): the tee answers as stderr."""
    from benchreport.cli.log import _Tee

    tee = _Tee(sys.stderr, open(os.devnull, "w"))
    assert tee.isatty() == sys.stderr.isatty()


# --- a full disk (issue 45): one line naming what was written, exit 4, never a traceback ---------


def test_a_full_disk_is_one_line_and_exit_4(monkeypatch, capsys, tmp_path):
    from benchreport.cli import commands

    def full(args):
        raise OSError(28, "Error writing bytes to file. Detail: [errno 28] No space left on device")

    monkeypatch.setitem(commands.COMMANDS, "ingest", full)
    code = commands.main(["ingest", str(EXAMPLE), "--store", str(tmp_path / "store")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 4 and len(err) == 1, err
    assert "could not write the run store" in err[0] and "No space left" in err[0] and "(exit 4)" in err[0]


def test_other_os_errors_are_not_called_a_full_disk(monkeypatch):
    from benchreport.cli import commands

    def broken(args):
        raise OSError(5, "Input/output error")

    monkeypatch.setitem(commands.COMMANDS, "validate", broken)
    with pytest.raises(OSError):
        commands.main(["validate", str(EXAMPLE)])


def test_a_store_on_a_full_file_system_keeps_what_it_held(tmp_path):
    """`ingest --store` on a small tmpfs (in a mount namespace): the first folder fits, the whole
    example does not: one line, exit 4; the store then holds the runs it held, and the next ingest,
    with room again, sweeps the unfinished batch (store check clean)."""
    unshare = shutil.which("unshare")
    if not unshare:
        pytest.skip("no unshare here to make a small file system")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    br = f'"{sys.executable}" -m benchreport'
    store = mnt / "store"
    script = (
        f'mount -t tmpfs -o size=200k tmpfs "{mnt}" || exit 99; '
        f'{br} ingest "{EXAMPLE / "field-note"}" --store "{store}" --quiet || exit 98; '
        f'{br} validate --store "{store}" 2>&1; '
        f'{br} ingest "{EXAMPLE}" --store "{store}" --quiet; echo "rc=$?"; '
        f'{br} validate --store "{store}" 2>&1; '
        f'mount -o remount,size=8m "{mnt}"; {br} ingest "{EXAMPLE}" --store "{store}" --quiet; '
        f'{br} store check --store "{store}" --quiet; echo "check=$?"'
    )
    # the Parquet store: the DuckLake store's full disk is tests/test_store_lake.py's (its catalog
    # alone needs more than 200 KB)
    env = {**os.environ, "BENCHREPORT_STORE_ENGINE": "parquet"}
    done = subprocess.run([unshare, "-m", "sh", "-c", script], capture_output=True, text=True, timeout=600, env=env)
    if done.returncode == 99:
        pytest.skip("no mount namespace here to make a small file system")
    assert "rc=4" in done.stdout and "check=0" in done.stdout, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    full = [line for line in done.stderr.splitlines() if "could not write" in line]
    assert len(full) == 1 and "the run store" in full[0] and "No space left" in full[0], done.stderr
    counts = [line.split(" run(s)")[0] for line in done.stdout.splitlines() if "run(s) in the store" in line]
    assert len(counts) == 2 and counts[0] == counts[1] and int(counts[0]) > 0, done.stdout


def test_validate_store_says_what_it_counted(tmp_path):
    """`validate --store` counts the store's runs (it said "0 run(s) valid" of a store of 180)."""
    from benchreport.store import ingest

    ingest([EXAMPLE], tmp_path / "store")
    runs = sum(1 for p in EXAMPLE.rglob("*.json") if '"benchreport.run/1"' in p.read_text(encoding="utf-8"))
    proc = subprocess.run(
        [sys.executable, "-m", "benchreport", "validate", "--store", str(tmp_path / "store")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"{runs} run(s) in the store, each validated when it was ingested" in proc.stderr
    assert runs > 0  # the example's native files, counted independently of the store
