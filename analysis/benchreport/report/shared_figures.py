"""Figures drawn by the build beside its report notebook, each by whichever process gets to it first.

Most of a report's time is matplotlib laying out and writing its figures, and the build's own
process has nothing to do while its notebook runs. So once the build has written the tables
it draws figures too, from the end of the report backwards (`draw_from_end`), while the
notebook draws them from the start (`benchreport.report.document.Report.figure`). A figure
is claimed by a file made with ``O_EXCL`` in a folder both processes see (the build's own
temporary folder, beside the analysis it hands over); the claimer draws it once and the
other takes it. The same section function draws the same figure from the same analysis, so
the bytes are the same whichever process drew it (tests/test_shared_figures.py checks it);
the notebook still checks the caption, and draws a figure itself whenever the build's is
missing, failed, differs or is late.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

__all__ = ["SharedFigures", "draw_from_end"]

#: how long the notebook waits for a figure the build claimed before drawing it itself
WAIT_S = 600.0


class SharedFigures:
    """The folder the build and its notebook share figures in: NAME.claim (who draws it),
    NAME.FORMAT (the files) and NAME.json (written last: the caption, or why there is none)."""

    def __init__(self, folder: str | os.PathLike):
        self.folder = Path(folder)

    @classmethod
    def beside(cls, analysis_file: str | os.PathLike) -> "SharedFigures | None":
        """The folder of a build that draws figures beside the notebook reading `analysis_file`."""
        folder = Path(analysis_file).parent / "figures"
        return cls(folder) if (folder / ".drawing").exists() else None

    @classmethod
    def open(cls, analysis_file: str | os.PathLike) -> "SharedFigures":
        """The build's side: the folder made and marked before the notebook is given the analysis."""
        folder = Path(analysis_file).parent / "figures"
        folder.mkdir(exist_ok=True)
        (folder / ".drawing").touch()
        return cls(folder)

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


def draw_from_end(analysis, shared: SharedFigures, formats) -> list[str]:
    """The build's share: the report's figures from the last, each one not yet claimed by the
    notebook; stops at the first the notebook has (it claims them in order, so it has every
    earlier one). Returns the names drawn here. A figure that fails is left to the notebook."""
    from benchreport.report.catalog import FIGURES
    from benchreport.report.figures import save_figure

    drawn = []
    for name, entry in reversed(list(FIGURES.items())):
        if not shared.claim(name):
            break
        try:
            block = entry.make(analysis)
            if block is None or block.figure is None:
                shared.publish(name, none=True)
                continue
            save_figure(block.figure, shared.folder, name, formats)
            shared.publish(name, caption=block.caption, key=block.key, formats=list(formats))
            drawn.append(name)
        except Exception as exc:  # noqa: BLE001 - the notebook draws it, and says what is wrong
            shared.publish(name, failed=f"{type(exc).__name__}: {exc}")
    return drawn
