"""Progress on stderr for long steps (tqdm), only when stderr is a terminal (cron logs stay clean),
and how a long step is stopped: SIGTERM (a scheduler's timeout) unwinds like Ctrl-C.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from typing import Iterator


class Terminated(KeyboardInterrupt):
    """SIGTERM received: unwinds like Ctrl-C (clean-up runs), reported as exit 143."""


#: the SIGTERM received inside `terminate_as_interrupt`, kept because Python swallows an exception
#: raised while it runs a weakref callback or `__del__` ("Exception ignored in ..."): the raise can
#: be lost, the record cannot, and `stop_if_terminated` raises it again at the next checkpoint
_received: list[int] = []


def stop_if_terminated() -> None:
    """Raise `Terminated` if SIGTERM arrived (KeyboardInterrupt if Ctrl-C did), even when its
    first raise was swallowed or turned into another error (a KeyboardInterrupt inside an
    extension module's import becomes "ImportError: initialization failed"); called between the
    build's steps and before anything is published, so a stopped build never replaces the
    previous output."""
    if _received:
        if _received[0] == signal.SIGINT:
            raise KeyboardInterrupt
        raise Terminated(f"signal {_received[0]}")


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM held back while the block runs (a step that must not be cut in two:
    starting a child process and keeping its id, removing a temporary folder), then delivered:
    a signal that came meanwhile raises as the block ends. Nothing is held outside the main
    thread or where the platform cannot (`signal.pthread_sigmask`)."""
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    held = {signal.SIGINT, signal.SIGTERM}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """While inside, SIGTERM raises `Terminated`, so `finally` blocks (staging folders) run."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        _received.append(signum)
        raise Terminated(f"signal {signum}")

    def interrupt(signum, frame):  # Python's own Ctrl-C, recorded as well
        _received.append(signum)
        raise KeyboardInterrupt

    _received.clear()
    previous = signal.signal(signal.SIGTERM, handler)
    # Ctrl-C as Python raises it, recorded; left alone when it is ignored (a job started with nohup)
    previous_int = signal.getsignal(signal.SIGINT)
    if previous_int is signal.default_int_handler:
        signal.signal(signal.SIGINT, interrupt)
    try:
        yield
        stop_if_terminated()  # the raise was swallowed and the step ran to its end
    finally:
        signal.signal(signal.SIGTERM, previous)
        if previous_int is signal.default_int_handler:
            signal.signal(signal.SIGINT, previous_int)
        _received.clear()


def progress(items, label: str, *, enabled: bool | None = None, unit: str = "file"):
    """A context giving `items` with a tqdm bar on stderr: shown when `enabled`, never when False
    (--quiet), and when None only if stderr is a terminal, so cron logs stay clean. Without a bar
    tqdm is not even imported (80 ms of every command's start)."""
    if not (_stderr_is_terminal() if enabled is None else enabled):
        return contextlib.nullcontext(items)
    from tqdm import tqdm

    return tqdm(items, desc=label, unit=unit, file=sys.stderr, mininterval=0.2, **_unsized_terminal())


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced by an object without isatty, or closed
        return False


def _unsized_terminal() -> dict:
    """80 x 24 for a terminal that reports no size (a bare pseudo-terminal), where tqdm would
    draw nothing; else nothing (tqdm measures stderr itself)."""
    try:
        size = os.get_terminal_size(sys.stderr.fileno())
    except (OSError, ValueError, AttributeError):  # not a terminal, or no file descriptor
        return {}
    return {} if size.columns > 0 and size.lines > 0 else {"ncols": 80, "nrows": 24}


def note(message: str, *, quiet: bool = False) -> None:
    """One line on stderr for a step a user waits on (suppressed by --quiet)."""
    if not quiet:
        sys.stderr.write(message + "\n")
        sys.stderr.flush()
