"""`--log FILE`: what a command says on stderr also appended to a file, for scheduled jobs."""

from __future__ import annotations

import errno
import os
import stat
import sys
import time
from typing import Callable

from benchreport.version import __version__
from benchreport.load.errors import UNSAFE_CHARS

__all__ = ["logged"]


class _Tee:
    """stderr that also goes to a log file (`--log FILE`)."""

    def __init__(self, stream, log):
        self._stream, self._log = stream, log
        self.failed: str | None = None

    def write(self, text: str) -> int:
        self._to_log(self._log.write, text)
        return self._stream.write(text)

    def flush(self) -> None:
        self._to_log(self._log.flush)
        self._stream.flush()

    def _to_log(self, call, *args) -> None:
        """Write to the log unless it failed before; a full disk stops the log, never the command."""
        if self.failed is not None:
            return
        try:
            call(*args)
        except OSError as exc:
            self.failed = exc.strerror or str(exc)
            self._stream.write(
                f"benchreport: --log stopped: the log file cannot be written ({self.failed}); the command goes on\n"
            )

    def __getattr__(self, name):  # isatty, encoding, fileno: the terminal's
        return getattr(self._stream, name)


def open_log(path) -> object:
    """The log file opened for appending, never blocking: a FIFO, a device or anything but a
    regular file is refused (OSError), so `--log` cannot hang on a pipe nobody reads."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags, 0o644)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise OSError(0, "not a regular file (a FIFO, device or socket is refused)")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "a", encoding="utf-8", errors="backslashreplace")
    except BaseException:
        os.close(fd)
        raise


def logged(args, argv: list[str], run: Callable) -> int:
    """`run(args)` with stderr also appended to `args.log`, between a line naming the command
    and one giving its exit code, each with the time."""
    try:
        log = open_log(args.log)
    except OSError as exc:
        why = "a FIFO nobody reads: refused, not waited on" if exc.errno == errno.ENXIO else exc.strerror or str(exc)
        print(
            f"benchreport {args.command}: --log {UNSAFE_CHARS.sub('?', str(args.log))!r} cannot be written ({why})",
            file=sys.stderr,
        )
        return 2  # usage: the log cannot be written
    stamp = lambda: time.strftime("%Y-%m-%dT%H:%M:%S%z")  # noqa: E731
    shown = " ".join(UNSAFE_CHARS.sub("?", str(a)) for a in argv)
    tee = _Tee(sys.stderr, log)
    try:
        tee._to_log(log.write, f"[{stamp()}] benchreport {__version__}: {shown}\n")
        tee._to_log(log.flush)
        saved, sys.stderr = sys.stderr, tee
        code = 4
        try:
            code = run(args)
        finally:
            sys.stderr = saved
            tee._to_log(log.write, f"[{stamp()}] exit {code}\n")
    finally:
        try:
            log.close()
        except OSError:
            pass
    return code
