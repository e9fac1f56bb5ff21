"""Processes as the tests see them (Linux /proc): shared by the build's and the PDF engines' tests."""

from __future__ import annotations

from pathlib import Path


def alive(pid: int) -> bool:
    """A live process (not a zombie) with this id."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
