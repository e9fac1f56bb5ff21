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
    own = hwm[0] or ru.ru_maxrss * 1024
    return Measured(
        returncode=proc.returncode,
        wall_s=wall,
        cpu_s=ru.ru_utime + ru.ru_stime,
        peak_mb=round(own / 2**20),
        tree_peak_mb=round(max(own, tree_rss[0]) / 2**20),
        tree_pss_mb=round(tree_pss[0] / 2**20) or None,
        stderr="".join(errors),
    )
