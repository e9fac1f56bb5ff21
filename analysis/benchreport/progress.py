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
    starting a child process and keeping its id, making a folder and handing it to its clean-up),
    then delivered: a signal that came meanwhile is raised again as the block ends, to the handler
    of before. Held by Python's handlers, not the thread's signal mask: a process-directed signal
    goes to any thread that does not block it (pyarrow and DuckDB start threads), and Python then
    runs its handler in the main thread all the same. Nothing is held outside the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []

    def hold(signum, frame):
        came.append(signum)

    held = (signal.SIGINT, signal.SIGTERM)
    previous = {}
    try:
        for signum in held:
            if signal.getsignal(signum) is not None:  # None: a handler not set from Python, left alone
                previous[signum] = signal.signal(signum, hold)
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if came:
            signal.raise_signal(came[0])  # to the handler of before (ignored if it ignores it)


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

    previous_hook = sys.unraisablehook

    def unraisable(info):  # "Exception ignored in ...": say nothing of our own signal's lost raise
        if _received and isinstance(info.exc_value, KeyboardInterrupt):
            return  # recorded: `stop_if_terminated` raises it again at the next checkpoint
        previous_hook(info)

    _received.clear()
    sys.unraisablehook = unraisable
    previous = signal.signal(signal.SIGTERM, handler)
    # Ctrl-C as Python raises it, recorded; left alone when it is ignored (a job started with nohup)
    previous_int = signal.getsignal(signal.SIGINT)
    if previous_int is signal.default_int_handler:
        signal.signal(signal.SIGINT, interrupt)
    try:
        yield
        stop_if_terminated()  # the raise was swallowed and the step ran to its end
    finally:
        sys.unraisablehook = previous_hook
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
