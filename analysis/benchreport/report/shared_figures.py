"""Figures drawn beside the build's report notebook, each by whichever process gets to it first.

Most of a report's time is matplotlib laying out and writing its figures, and a machine has
more than one core. So once the build has its analysis it forks a drawing process
(`drawing_beside`), which draws figures from the end of the report backwards
(`draw_from_end`), while the notebook (executed in the build's own process:
benchreport.report.inprocess) draws them from the start (`benchreport.report.document.
Report.figure`). The forked process reads the analysis the build holds (copy-on-write
memory: nothing is pickled). A figure is claimed by a file made with ``O_EXCL`` in a folder
both processes see (a temporary folder of the build's); the claimer draws it once and the
other takes it. The same section function draws the same figure from the same analysis, so
the bytes are the same whichever process drew it (tests/test_shared_figures.py checks it);
the notebook still checks the caption, and draws a figure itself whenever the drawing
process's is missing, failed, differs, or that process has ended without it.
"""
from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Callable, Iterator

from benchreport.report.pdf import yield_to_printing
from benchreport.report.prefork import can_fork, fork_child

__all__ = ["SharedFigures", "draw_from_end", "drawing_beside"]

#: how long the notebook waits for a figure the drawing process claimed before drawing it itself
#: (a figure of 50 seats takes about a second; a late one is drawn twice, never missing)
WAIT_S = 120.0


class SharedFigures:
    """The folder the build and its notebook share figures in: NAME.claim (who draws it),
    NAME.FORMAT (the files) and NAME.json (written last: the caption, or why there is none)."""

    def __init__(self, folder: str | os.PathLike):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)

    def claim(self, name: str) -> bool:
        """True for the first process to ask for this figure (it then draws it)."""
        try:
            os.close(os.open(self.folder / f"{name}.claim", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        except FileExistsError:
            return False
        return True

    def publish(self, name: str, **facts) -> None:
        """Say what became of a claimed figure (its caption and files, or why there are none)."""
        tmp = self.folder / f".{name}.json.tmp"
        tmp.write_text(json.dumps(facts), encoding="utf-8")
        os.replace(tmp, self.folder / f"{name}.json")

    def wait(self, name: str, *, gone=lambda: False, timeout: float = WAIT_S, poll_s: float = 0.01) -> dict | None:
        """What the build said of a figure it claimed, once said; None when it stopped (`gone`)
        or did not say in time."""
        path, end = self.folder / f"{name}.json", time.monotonic() + timeout
        while time.monotonic() < end:
            if path.exists():
                try:
                    return json.loads(path.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    return None
            if gone():
                return None
            time.sleep(poll_s)
        return None

    def files(self, name: str, formats) -> dict:
        return {kind: self.folder / f"{name}.{kind}" for kind in formats}


def draw_from_end(analysis, shared: SharedFigures, formats, *, before_later: Callable[[], None] = lambda: None
                  ) -> list[str]:
    """The build's share: the report's figures from the last, each one not yet claimed by the
    notebook; stops at the first the notebook has (it claims them in order, so it has every
    earlier one). Each figure's PNG (what the page shows) is published first (NAME.json), its
    other `formats` once every PNG is out (NAME.later.json). Returns the names drawn here. A
    figure that fails is left to the notebook."""
    from benchreport.report.catalog import FIGURES
    from benchreport.report.figures import save_figure

    drawn, first, later = {}, ("png",), tuple(f for f in formats if f != "png")
    for name, entry in reversed(list(FIGURES.items())):
        if not shared.claim(name):
            break
        try:
            block = entry.make(analysis)
            if block is None or block.figure is None:
                shared.publish(name, none=True)
                continue
            save_figure(block.figure, shared.folder, name, first)
            shared.publish(name, caption=block.caption, key=block.key, formats=list(first), later=list(later))
            drawn[name] = block.figure
        except Exception as exc:  # noqa: BLE001 - the notebook draws it, and says what is wrong
            shared.publish(name, failed=f"{type(exc).__name__}: {exc}")
    before_later()
    for name, figure in drawn.items():  # the files the page does not show, once its PNGs are out
        try:
            if later:
                save_figure(figure, shared.folder, name, later)
            shared.publish(f"{name}.later", formats=list(later))
        except Exception as exc:  # noqa: BLE001 - the notebook draws them
            shared.publish(f"{name}.later", failed=f"{type(exc).__name__}: {exc}")
    return list(drawn)


def _fork_drawer(analysis, shared: SharedFigures, formats) -> int:
    """The drawing process's id; the child draws from the end and exits without running any of
    the parent's clean-up (benchreport.report.prefork.fork_child), its output sent nowhere (its
    failures are published)."""

    def draw() -> int:  # pragma: no cover - the forked process
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        # new stream objects (new locks: a thread of the parent may have held the old ones at the
        # fork) and no warnings printed: nothing this process does waits on the parent's state
        sys.stdout = sys.stderr = open(os.devnull, "w", encoding="utf-8")
        warnings.simplefilter("ignore")
        draw_from_end(analysis, shared, formats, before_later=yield_to_printing)
        return 0

    return fork_child(draw)


def _ended(pid: int) -> Callable[[], bool]:
    """A test of whether the child `pid` has ended (reaping it when it has)."""
    state = {"ended": False}

    def ended() -> bool:
        if not state["ended"]:
            try:
                state["ended"] = os.waitpid(pid, os.WNOHANG)[0] == pid
            except ChildProcessError:  # reaped already
                state["ended"] = True
        return state["ended"]

    return ended


@contextlib.contextmanager
def drawing_beside(analysis, formats) -> Iterator[tuple[SharedFigures | None, Callable[[], bool]]]:
    """(shared folder, ended) while a forked process draws the report's figures from the end;
    (None, ...) where no process can be forked (benchreport.report.prefork.can_fork): the notebook then draws them all.
    Leaving the block stops the process if it is still drawing (a failed or stopped build) and
    removes the folder."""
    if not can_fork():
        yield None, lambda: True
        return
    with tempfile.TemporaryDirectory(prefix="benchreport-figures-") as tmp:
        shared = SharedFigures(Path(tmp) / "figures")
        pid = _fork_drawer(analysis, shared, formats)
        ended = _ended(pid)
        try:
            yield shared, ended
        finally:
            if not ended():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, 9)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
