"""benchmarks/measure.py: a child's peak memory is its own, not its parent's at the fork.

The check is against the kernel's own account read a second way (`os.wait4`'s ru_maxrss),
which on Linux starts from the parent's size: a parent holding 400 MiB gets >= 400 MiB from
wait4 for a child that used 60 MiB, and about 60 MiB from measure."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from measure import run_measured  # noqa: E402

CHILD = [
    sys.executable,
    "-c",
    "import time; b = bytearray(60 * 2**20); b[::4096] = b'x' * len(b[::4096]); time.sleep(0.5)",
]

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc (Linux)")


def test_a_large_parent_does_not_lend_its_size_to_the_child():
    ballast = bytearray(400 * 2**20)
    ballast[::4096] = b"y" * len(ballast[::4096])  # touched: resident, not just reserved
    proc = subprocess.Popen(CHILD)
    _, _, ru = os.wait4(proc.pid, 0)
    inherited = ru.ru_maxrss / 1024
    measured = run_measured(CHILD)
    del ballast
    assert measured.returncode == 0
    assert 60 <= measured.peak_mb < 150, measured
    if inherited >= 400:  # the kernel's account carries the parent's size (Linux): ours does not
        assert measured.peak_mb < inherited - 200


def test_the_tree_and_a_failure_are_reported():
    m = run_measured(
        [sys.executable, "-c", "import sys, subprocess; subprocess.run(sys.argv[1:]); sys.exit('no good')", *CHILD],
        tree=True,
    )
    assert m.returncode == 1 and "no good" in m.stderr
    assert m.tree_peak_mb >= 60 and m.tree_pss_mb and m.tree_pss_mb <= m.tree_peak_mb
    assert m.wall_s >= 0.5 and m.cpu_s > 0


def test_the_cpu_of_a_descendant_that_outlives_its_parent_is_counted(tmp_path):
    """A grandchild left running by the child (as Chromium's helpers outlive the browser process a
    build waits for) is waited for and its CPU counted: at least what it measured of itself."""
    said = tmp_path / "grandchild_cpu"
    burn = (
        "import sys, time\n"
        "t = time.process_time()\n"
        "while time.process_time() - t < 0.4: pass\n"
        "open(sys.argv[1], 'w').write(str(time.process_time()))\n"
    )
    m = run_measured(
        [
            sys.executable,
            "-c",
            "import subprocess, sys; subprocess.Popen([sys.executable, '-c', sys.argv[1], sys.argv[2]])",
            burn,
            str(said),
        ]
    )
    assert m.returncode == 0 and m.orphans == 1
    grandchild = float(said.read_text())
    assert grandchild >= 0.4
    assert m.cpu_s >= grandchild
