"""Progress on stderr for long steps, only when stderr is a terminal (cron logs stay clean),
and how a long step is stopped: SIGTERM (a scheduler's timeout) unwinds like Ctrl-C.
"""
from __future__ import annotations

import contextlib
import signal
import sys
import threading
import time
from typing import Iterator

#: exit codes of a command stopped by a signal, as shells report them (128 + the signal number)
EXIT_INTERRUPTED, EXIT_TERMINATED = 128 + signal.SIGINT, 128 + signal.SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM received: unwinds like Ctrl-C (clean-up runs), reported as exit 143."""


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """While inside, SIGTERM raises `Terminated`, so `finally` blocks (staging folders) run."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise Terminated(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class Progress:
    """`with Progress("loading", total) as p: p.step()`; silent unless stderr is a TTY."""

    def __init__(self, label: str, total: int | None = None, *, enabled: bool | None = None):
        self.label, self.total, self.done = label, total, 0
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._last = 0.0

    def __enter__(self) -> "Progress":
        return self

    def step(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        if self.enabled and now - self._last > 0.2:
            self._last = now
            of = f"/{self.total}" if self.total else ""
            sys.stderr.write(f"\r{self.label}: {self.done}{of}")
            sys.stderr.flush()

    def __exit__(self, *exc) -> None:
        if self.enabled:
            of = f"/{self.total}" if self.total else ""
            sys.stderr.write(f"\r{self.label}: {self.done}{of} done\n")
            sys.stderr.flush()


def note(message: str, *, quiet: bool = False) -> None:
    """One line on stderr for a step a user waits on (suppressed by --quiet)."""
    if not quiet:
        sys.stderr.write(message + "\n")
        sys.stderr.flush()

