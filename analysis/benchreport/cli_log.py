"""`--log FILE`: what a command says on stderr also appended to a file, for scheduled jobs."""
from __future__ import annotations

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

    def write(self, text: str) -> int:
        self._log.write(text)
        return self._stream.write(text)

    def flush(self) -> None:
        self._log.flush()
        self._stream.flush()

    def __getattr__(self, name):
        return getattr(self._stream, name)


def logged(args, argv: list[str], run: Callable) -> int:
    """`run(args)` with stderr also appended to `args.log`, between a line naming the command
    and one giving its exit code, each with the time."""
    try:
        log = open(args.log, "a", encoding="utf-8", errors="backslashreplace")
    except OSError as exc:
        print(f"benchreport {args.command}: --log {UNSAFE_CHARS.sub('?', str(args.log))!r} cannot be written ({exc.strerror})",
              file=sys.stderr)
        return 2  # usage: the log cannot be written
    stamp = lambda: time.strftime("%Y-%m-%dT%H:%M:%S%z")  # noqa: E731
    shown = " ".join(UNSAFE_CHARS.sub("?", str(a)) for a in argv)
    with log:
        log.write(f"[{stamp()}] benchreport {__version__}: {shown}\n")
        log.flush()
        saved, sys.stderr = sys.stderr, _Tee(sys.stderr, log)
        code = 4
        try:
            code = run(args)
        finally:
            sys.stderr = saved
            log.write(f"[{stamp()}] exit {code}\n")
    return code
