"""A process forked before the analysis that readies the report's rendering while it runs.

What a build does after its analysis needs papermill, nbconvert, matplotlib and the report's
sections: about 0.9 s of imports and first-use set-up, as long as the analysis of a small
folder (docs/performance.md). A process forked at the start of the analysis (`forked`) does
that set-up (`warm`) on another core, then waits for its job: the parent sends the analysis
pickled once it has it (7 ms at the example's size, about 0.5 s at 50 seats), and the forked
process runs the job (`work`: the report notebook, its figures and the HTML), may tell the
parent something before it is done (the page, which the parent has printed while the job writes
the rest), and answers with the outcome, the job's exception included, which the parent raises
as its own. Messages are pickles with a length in front, on two pipes.

The forked process leads a process group of its own (the figure process it forks in turn is in
it), and is asked to end with SIGTERM when its parent dies (Linux ``PR_SET_PDEATHSIG``). The
parent ends the group when it leaves `forked` before the answer came (an error, an interrupt,
SIGTERM): first SIGTERM, so the job's own clean-up runs (temporary folders, Chromium's process
group), then SIGKILL after `STOP_GRACE_S`; the forked process turns SIGTERM into `Terminated`
(benchreport.progress) whatever the parent's handler was. Where no process can be forked (not Linux,
``BENCHREPORT_DRAW_BESIDE=0``, fork failed) or the forked process died before its job, the caller
runs the job itself: `Forked.send` says which.
"""
from __future__ import annotations

import contextlib
import os
import pickle
import signal
import struct
import sys
import time
import traceback
import warnings
from typing import Any, Callable, Iterator

__all__ = ["Forked", "ForkedProcessError", "can_fork", "fork_child", "forked"]

#: how long the forked process has to end after SIGTERM (its clean-up) before it is killed
STOP_GRACE_S = 5.0
_LENGTH = struct.Struct("<Q")
_PR_SET_PDEATHSIG = 1


class ForkedProcessError(RuntimeError):
    """The forked process ended without answering (killed, crashed): its job's outcome is unknown."""


def can_fork() -> bool:
    """Forked processes are used on Linux only (fork without exec is unsafe with macOS's system
    frameworks), and not when BENCHREPORT_DRAW_BESIDE=0 asks for one process."""
    return sys.platform.startswith("linux") and hasattr(os, "fork") and os.environ.get("BENCHREPORT_DRAW_BESIDE") != "0"


def _write_message(fd: int, message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_LENGTH.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def _read_exactly(fd: int, n: int) -> bytes | None:
    chunks, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _read_message(fd: int) -> tuple[bool, Any]:
    """(True, message), or (False, None) when the writer closed its end first."""
    head = _read_exactly(fd, _LENGTH.size)
    if head is None:
        return False, None
    data = _read_exactly(fd, _LENGTH.unpack(head)[0])
    if data is None:
        return False, None
    return True, pickle.loads(data)


def _portable(exc: BaseException) -> BaseException:
    """`exc` if it survives pickling (raised again in the parent as it is), else a RuntimeError
    with its type's name and message."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001 - any exception that cannot cross is described instead
        return RuntimeError(f"{type(exc).__name__}: {exc}")


class Forked:
    """The parent's handle on the forked process: `send` a job, then `result`."""

    def __init__(self, pid: int, job_w: int, answer_r: int):
        self.pid = pid
        self._job_w = job_w
        self._answer_r = answer_r
        self._answered = False

    def send(self, job: Any) -> bool:
        """Hand `job` over; False when the forked process is gone (the caller then runs it)."""
        try:
            _write_message(self._job_w, job)
        except (BrokenPipeError, OSError):
            return False
        finally:
            os.close(self._job_w)
            self._job_w = -1
        return True

    def result(self, on_tell: Callable[[Any], None] = lambda message: None) -> dict:
        """The job's notes (what `work` put in its `notes` dict) once it succeeded; raises what the
        job raised, with its notes as `exc.forked_notes`; `ForkedProcessError` when the process
        ended without an answer. What the job tells before its answer goes to `on_tell`, as it
        comes."""
        while True:
            ok, answer = _read_message(self._answer_r)
            if not ok:
                raise ForkedProcessError(f"the report process ended without an answer ({self._status()})")
            if answer[0] != "tell":
                break
            on_tell(answer[1])
        self._answered = True
        outcome, notes, exc, shown = answer
        if outcome == "ok":
            return notes
        if shown and os.environ.get("BENCHREPORT_DEBUG"):
            sys.stderr.write(shown)
        exc.forked_notes = notes
        raise exc

    def _status(self) -> str:
        try:
            pid, status = os.waitpid(self.pid, 0)
        except ChildProcessError:
            return "its status is unknown"
        if os.WIFSIGNALED(status):
            return f"killed by signal {os.WTERMSIG(status)}"
        return f"exit status {os.waitstatus_to_exitcode(status)}"

    def stop(self) -> None:
        """End the process group unless it has answered (SIGTERM, then SIGKILL after
        `STOP_GRACE_S`), and reap the process."""
        for fd in (self._job_w, self._answer_r):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._job_w = self._answer_r = -1
        if not self._answered:
            _signal_group(self.pid, signal.SIGTERM)
            end = time.monotonic() + STOP_GRACE_S
            while time.monotonic() < end:
                if _reaped(self.pid):
                    _signal_group(self.pid, signal.SIGKILL)  # what it left (its figure process)
                    return
                time.sleep(0.01)
            _signal_group(self.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)


def _signal_group(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signum)


def _reaped(pid: int) -> bool:
    try:
        return os.waitpid(pid, os.WNOHANG)[0] == pid
    except ChildProcessError:
        return True


@contextlib.contextmanager
def forked(work: Callable[[Any, dict, Callable[[Any], None]], None],
           warm: Callable[[], None]) -> Iterator[Forked | None]:
    """A process forked now, doing `warm()` (a failure there is ignored: the job does without)
    and then ``work(job, notes, tell)`` on the job it is sent (``tell(message)`` sends the parent
    a message before the answer: `Forked.result`'s `on_tell`); None where none can be forked
    (`can_fork`). Leaving the block ends the process unless it answered."""
    if not can_fork():
        yield None
        return
    job_r, job_w = os.pipe()
    answer_r, answer_w = os.pipe()
    parent = os.getpid()

    def child() -> int:  # pragma: no cover - the forked process (measured through the build's tests)
        os.close(job_w)
        os.close(answer_r)
        return _child(job_r, answer_w, work, warm, parent=parent)

    try:
        pid = fork_child(child)
    except OSError:
        for fd in (job_r, job_w, answer_r, answer_w):
            os.close(fd)
        yield None
        return
    os.close(job_r)
    os.close(answer_w)
    with contextlib.suppress(OSError):  # the child does it too: whichever runs first
        os.setpgid(pid, pid)
    handle = Forked(pid, job_w, answer_r)
    try:
        yield handle
    finally:
        handle.stop()


#: the signals whose Python handlers raise (Ctrl-C, and SIGTERM inside a build): blocked across a
#: fork until the child is inside its guard (`fork_child`)
_RAISING = (signal.SIGINT, signal.SIGTERM)


def fork_child(child: Callable[[], int]) -> int:
    """Fork; the child runs `child()` and leaves with ``os._exit`` (its status, 1 if it raised),
    whatever happens, so it never returns into the parent's code. The signals whose handlers
    raise are blocked across the fork and unblocked only inside the child's guard: one landing
    between the fork and the guard would otherwise send the child back up the parent's stack (in a
    test runner's worker, a second worker reporting the same test). Returns the child's id."""
    sys.stdout.flush()
    sys.stderr.flush()
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _RAISING)
    try:
        with warnings.catch_warnings():  # Python 3.12 warns of fork() with threads; the child has its own streams
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        raise
    if pid == 0:  # pragma: no cover - the forked process
        status = 1
        try:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
            status = child()
        except BaseException:  # noqa: BLE001 - nothing may escape into the parent's code
            status = 1
        finally:
            os._exit(status if isinstance(status, int) else 0 if status is None else 1)
    signal.pthread_sigmask(signal.SIG_SETMASK, previous)
    return pid


def _child(job_r: int, answer_w: int, work, warm, *, parent: int) -> int:  # pragma: no cover
    """The forked process: its own process group and streams, `warm`, then the job; it answers and
    returns its exit status (`fork_child` leaves with it: none of the parent's clean-up or exit
    handlers run here)."""
    status = 1
    try:
        signal.signal(signal.SIGTERM, _stop_on_sigterm)  # unwinds the job: its clean-up runs
        with contextlib.suppress(OSError):
            os.setpgid(0, 0)
        _end_with_parent(parent)
        # fresh stream objects on the same descriptors: the parent's may be a test's capture, or
        # hold a lock a thread of the parent had at the fork
        sys.stdout = open(1, "w", encoding="utf-8", errors="replace", closefd=False, buffering=1)
        sys.stderr = open(2, "w", encoding="utf-8", errors="replace", closefd=False, buffering=1)
        _warm(warm)
        got, job = _read_message(job_r)
        if not got:  # the parent went on without it (an error, an up-to-date report)
            return 0
        notes: dict = {}

        def tell(message) -> None:
            _write_message(answer_w, ("tell", message, None, ""))

        try:
            work(job, notes, tell)
            answer = ("ok", notes, None, "")
        except BaseException as exc:  # noqa: BLE001 - every outcome goes back to the parent
            answer = ("error", notes, _portable(exc), "".join(traceback.format_exception(exc)))
        _write_message(answer_w, answer)
        status = 0
    except BaseException:  # noqa: BLE001 - nothing may escape into the parent's code
        status = 1
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
    return status


def _warm(warm) -> None:  # pragma: no cover - the forked process
    """`warm()`; a failure is ignored (the job does without it), and shown with BENCHREPORT_DEBUG."""
    try:
        warm()
    except Exception:  # noqa: BLE001 - a warm-up is an optimisation, never a failure
        if os.environ.get("BENCHREPORT_DEBUG"):
            traceback.print_exc()


def _stop_on_sigterm(signum, frame):  # pragma: no cover - the forked process
    """SIGTERM in the forked process: recorded and raised as `Terminated` (benchreport.progress),
    so the job unwinds (its clean-up runs) and the parent learns what stopped it."""
    from benchreport.progress import Terminated, note_signals

    note_signals([signum])
    raise Terminated(f"signal {signum}")


def _end_with_parent(parent: int) -> None:  # pragma: no cover - the forked process
    """SIGTERM to this process when its parent dies (Linux), so a killed build leaves none behind."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the request was made
        os.kill(os.getpid(), signal.SIGTERM)
