"""One writer at a time: an OS lock on a lock file, with who holds it written inside.

The store (`STORE/.lock`) and every output folder (`.OUT.lock` beside `--out` or `--site`) use
it. The lock is the operating system's, taken in one function (`try_flock`): `fcntl.flock` on
POSIX, `msvcrt.locking` on Windows (one byte far past the holder's line, since Windows keeps a
locked range from being read). Either is released by the kernel when its process ends, however
it ends, so a killed job never leaves a stale lock; it holds on one machine and on NFSv4, not on
object storage.

Not the `filelock` package: its lock opens the file with ``O_TRUNC`` on every attempt, so a job
waiting for the lock would erase the holder's line that a busy job's message quotes
("(pid N, ingest since T)"), and on Windows it deletes the file on release.
"""

from __future__ import annotations

import errno
import json
import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None
    import msvcrt

__all__ = ["Busy", "acquire", "held", "lock_file", "try_flock", "holder_of"]

#: Windows: the byte locked (msvcrt locks byte ranges, and another process cannot read a locked
#: range): far past the holder's line, which stays readable to a job that finds the lock taken
_WINDOWS_LOCK_OFFSET = 1 << 30


class Busy(Exception):
    """Another process holds the lock (`holder`: ' (pid N, doing since T)' or '')."""

    def __init__(self, path: Path, holder: str, waited: float | None):
        self.path, self.holder, self.waited = path, holder, waited
        super().__init__(f"{path}: held by another job{holder}")


def lock_file(path: Path) -> int:
    """An open descriptor of a lock file (made when missing), not inherited by child processes."""
    return os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)


def try_flock(fd: int) -> bool:
    """Take the exclusive lock of `fd` without waiting: True when taken, False when another holds
    it (any other failure raises OSError). The one place the platform's lock is chosen."""
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        else:
            os.lseek(fd, _WINDOWS_LOCK_OFFSET, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        return True
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK, errno.EDEADLK):
            return False
        raise


def _read_start(fd: int, size: int) -> bytes:
    """The first `size` bytes of `fd` (where there is no `os.pread`: a seek and a read)."""
    if hasattr(os, "pread"):
        return os.pread(fd, size, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    return os.read(fd, size)


def holder_of(fd: int) -> str:
    """' (pid N, ingest since T)' from the lock file, when its holder wrote it."""
    try:
        info = json.loads(_read_start(fd, 4096) or b"{}")
        return f" (pid {int(info['pid'])}, {str(info['doing'])[:20]} since {str(info['since'])[:25]})"
    except (OSError, ValueError, KeyError, TypeError):
        return ""


def acquire(path: Path, *, doing: str, wait: float | None = None) -> int:
    """Take the lock at `path` (at once, or polling for up to `wait` seconds) and write who holds
    it; the open descriptor is returned (closing it releases the lock).

    Raises `Busy` when another job keeps it, OSError when the lock file cannot be made or locked.
    """
    fd = lock_file(path)
    try:
        deadline = time.monotonic() + (wait or 0)
        while not try_flock(fd):
            if time.monotonic() >= deadline:
                raise Busy(path, holder_of(fd), wait)
            time.sleep(0.1)
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(
            fd, json.dumps({"pid": os.getpid(), "doing": doing, "since": time.strftime("%Y-%m-%dT%H:%M:%S%z")}).encode()
        )
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextmanager
def held(path: Path, *, doing: str, wait: float | None = None) -> Iterator[None]:
    """Hold the lock at `path` for the block (`acquire`; released when the block ends)."""
    fd = acquire(path, doing=doing, wait=wait)
    try:
        yield
    finally:
        os.close(fd)
