"""Wall, CPU and peak memory of one child process, measured from outside it.

Why not just the child's `ru_maxrss` from `os.wait4`: on Linux a child's maximum resident set
starts from its parent's at the fork (the kernel keeps the old image's high-water mark across
`exec`), so a benchmark driver that has grown (`run_all.py` runs several benchmarks in one
process) would report its own size as the child's. The child's `VmHWM` (the high-water mark of
its current image, /proc/PID/status) is read every `interval` seconds instead; `ru_maxrss` is
used only where /proc is not there. The process tree (a build runs its report kernel beside
itself) is summed at each sample in resident memory (libraries both processes map counted
twice) and in proportional memory (PSS: each shared page divided among the processes that map
it). Memory in MiB.

CPU is the child's and that of every process descended from it. `os.wait4` gives the child's
own and that of the descendants it waited for; a descendant whose parent ended first (Chromium's
helpers: its zygote, renderer and utility processes outlive the browser process the build waits
for) is reparented and its CPU is in no one's account of ours. So the measuring process makes
itself the child subreaper (Linux `prctl(PR_SET_CHILD_SUBREAPER)`): such orphans are reparented to
it, and it waits for them and adds their CPU (`orphans` counts them). For the example's report
Chromium's helpers are 1.3 of its 2.0 CPU seconds (2026-12-07): counted before that day's change,
a build's CPU was short by that much.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from dataclasses import dataclass


@dataclass
class Measured:
    returncode: int
    wall_s: float
    cpu_s: float
    peak_mb: int
    tree_peak_mb: int
    tree_pss_mb: int | None
    stderr: str
    #: descendants that outlived their parent, waited for here and their CPU counted in `cpu_s`
    orphans: int = 0


#: PR_SET_CHILD_SUBREAPER (linux/prctl.h)
_PR_SET_CHILD_SUBREAPER = 36
#: the longest an orphaned descendant is waited for after the child ended (seconds)
ORPHAN_WAIT_S = 60.0


def _adopt_orphans(adopt: bool = True) -> bool:
    """Make this process the subreaper of its descendants, or no longer (Linux); False where it
    cannot be."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, int(adopt), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _reap_orphans(timeout: float = ORPHAN_WAIT_S) -> tuple[float, int]:
    """(CPU seconds, how many) of the orphaned descendants reparented to this process, each waited
    for to its end (at most `timeout` seconds in all: one still running then is not counted)."""
    cpu, count = 0.0, 0
    deadline = time.monotonic() + timeout
    while True:
        try:
            pid, _, ru = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return cpu, count
        if pid == 0:
            if time.monotonic() > deadline:
                return cpu, count
            time.sleep(0.01)
            continue
        cpu += ru.ru_utime + ru.ru_stime
        count += 1


def _hwm_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _tree(proc) -> tuple[int, int]:
    import psutil

    rss = pss = 0
    try:
        procs = [proc] + proc.children(recursive=True)
    except psutil.Error:
        return 0, 0
    for p in procs:
        try:
            info = p.memory_full_info()
        except psutil.Error:
            continue
        rss += info.rss
        pss += getattr(info, "pss", info.rss)
    return rss, pss


def run_measured(cmd: list[str], *, interval: float = 0.1, tree: bool = False, **popen) -> Measured:
    """Run `cmd` to its end; stdout as `popen` says (default: discarded), stderr kept."""
    popen.setdefault("stdout", subprocess.DEVNULL)
    adopting = _adopt_orphans()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, **popen)
    hwm, tree_rss, tree_pss, done = [0], [0], [0], threading.Event()
    errors: list[str] = []
    watched = None
    if tree:
        import psutil

        watched = psutil.Process(proc.pid)

    def sample():
        while True:
            hwm[0] = max(hwm[0], _hwm_bytes(proc.pid))
            if watched is not None:
                rss, pss = _tree(watched)
                tree_rss[0], tree_pss[0] = max(tree_rss[0], rss), max(tree_pss[0], pss)
            if done.wait(interval):
                return

    def drain():  # a child writing much to stderr must not block on a full pipe
        errors.append(proc.stderr.read())

    sampler, reader = threading.Thread(target=sample, daemon=True), threading.Thread(target=drain, daemon=True)
    sampler.start()
    reader.start()
    if hasattr(os, "waitid"):  # exited but not reaped: its pid is not reused while the sampler stops
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
    done.set()
    sampler.join()
    _, status, ru = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    reader.join()
    wall = time.perf_counter() - t0
    orphan_cpu, orphans = _reap_orphans() if adopting else (0.0, 0)
    if adopting:
        _adopt_orphans(False)
    own = hwm[0] or ru.ru_maxrss * 1024
    return Measured(
        returncode=proc.returncode,
        wall_s=wall,
        cpu_s=ru.ru_utime + ru.ru_stime + orphan_cpu,
        peak_mb=round(own / 2**20),
        tree_peak_mb=round(max(own, tree_rss[0]) / 2**20),
        tree_pss_mb=round(tree_pss[0] / 2**20) or None,
        stderr="".join(errors),
        orphans=orphans,
    )
