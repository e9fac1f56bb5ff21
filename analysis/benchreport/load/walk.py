"""Finding the files to read: the paths given, and folders searched depth-first.

Only regular files are ever opened (a FIFO or device is refused by name); a symlink is followed
once; hidden names and benchreport's own output folders are passed over; a folder that cannot be
read is refused, never silently passed over.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Iterable

from benchreport.load.errors import Refusal, Skipped, one_line
from benchreport.load.read import not_opened
from benchreport.reserved import OUTPUT_MARKER

__all__ = [
    "RESULT_SUFFIXES",
    "TEXT_SUFFIXES",
    "MANIFEST_NAMES",
    "NOT_JSON",
    "Found",
    "is_wanted",
    "is_textual",
    "discover",
    "discover_named",
    "missing",
]

#: in folders, only these endings are read; other files are listed as skipped
RESULT_SUFFIXES = {".json", ".jsonl"}
#: in folders, files with these endings are opened as text only when a harness importer
#: recognises their first bytes (MLPerf LoadGen's `:::MLLOG` log, a harness's config YAML);
#: the others are skipped as before
TEXT_SUFFIXES = {".txt", ".log", ".yaml", ".yml"}
#: manifest names (spec: a small manifest beside harness files maps them to seats)
MANIFEST_NAMES = {"benchreport.yaml", "benchreport.yml", "benchreport.json"}

NOT_JSON = "not a JSON file (no results read from it)"


def is_wanted(name: str) -> bool:
    """A file a folder is searched for: a JSON (Lines) file or a manifest."""
    lower = name.lower()
    lower = lower[:-3] if lower.endswith(".gz") else lower  # gzip-compressed JSON is read too
    return Path(lower).suffix in RESULT_SUFFIXES or name in MANIFEST_NAMES


def is_textual(name: str) -> bool:
    """A text file a harness may write its results or set-up into (read only if recognised)."""
    return Path(name).suffix.lower() in TEXT_SUFFIXES and name not in MANIFEST_NAMES


class Found:
    """What discovery collects: files to read, and files and folders refused or skipped."""

    def __init__(self) -> None:
        self.files: list[tuple[Path, str]] = []
        self.named: set[str] = set()  # display names of the files given by name, not found in a folder
        self.skipped: list[Skipped] = []
        self.refused: list[Refusal] = []
        self.folders: set[Path] = set()  # real paths of folders read, so a symlink is followed once


def _entries(folder: Path, found: Found) -> list[os.DirEntry] | None:
    """The entries of `folder`, sorted by name; None (refused or skipped) when it cannot be read
    or is benchreport's own output."""
    shown = one_line(str(folder))
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as exc:
        found.refused.append(
            Refusal(shown, "$", f"could not read the folder: {exc.strerror}; any run files in it were not read")
        )
        return None
    if any(e.name == OUTPUT_MARKER for e in entries):  # benchreport's own output, never runs
        found.skipped.append(
            Skipped(shown, f"a benchreport output folder (it holds {OUTPUT_MARKER}): not read as runs")
        )
        return None
    return entries


def _entry_mode(entry: os.DirEntry, name: str, found: Found) -> int | None:
    """The mode of what `entry` is (a symlink followed); None (refused) for a symlink to nothing
    or an entry that cannot be read."""
    try:
        return entry.stat(follow_symlinks=True).st_mode
    except FileNotFoundError:
        found.refused.append(
            Refusal(
                name,
                "$",
                f"expected a file or folder, found a symlink to nothing ({one_line(os.readlink(Path(entry.path)))})",
            )
        )
    except OSError as exc:
        found.refused.append(Refusal(name, "$", f"could not read: {exc.strerror}"))
    return None


def _sort_entry(entry: os.DirEntry, found: Found, subfolders: list[Path]) -> None:
    """File one entry of a folder: a subfolder to search, a file to read, or skipped or refused."""
    path = Path(entry.path)
    name = one_line(entry.path)
    mode = _entry_mode(entry, name, found)
    if mode is None:
        return
    if stat.S_ISDIR(mode):
        real = path.resolve()
        if real in found.folders:
            found.skipped.append(Skipped(name, f"a symlink to a folder already read ({one_line(str(real))})"))
        else:
            subfolders.append(path)
            found.folders.add(real)
    elif not is_wanted(entry.name) and not (is_textual(entry.name) and stat.S_ISREG(mode)):
        found.skipped.append(Skipped(name, NOT_JSON))
    elif stat.S_ISREG(mode):
        found.files.append((path, name))
    else:
        found.refused.append(Refusal(name, "$", not_opened(mode)))


def walk(top: Path, found: Found) -> None:
    """Depth-first, sorted, over `top`: regular files by suffix; symlinks followed once; hidden
    names skipped; unreadable folders, dangling symlinks and FIFOs or devices reported by name."""
    stack = [top]
    while stack:
        entries = _entries(stack.pop(), found)
        if entries is None:
            continue
        subfolders: list[Path] = []
        for entry in entries:
            if not entry.name.startswith("."):
                _sort_entry(entry, found, subfolders)
        stack.extend(reversed(subfolders))


def _take_given(given: str | os.PathLike, found: Found) -> None:
    """A path given by name: a folder searched, a file read, or refused."""
    p = Path(given)
    shown = one_line(str(given))
    try:
        mode = p.stat().st_mode
    except FileNotFoundError:
        kind = "a symlink to nothing" if p.is_symlink() else "nothing"
        found.refused.append(Refusal(shown, "$", f"expected a file or folder, found {kind} at this path"))
        return
    except OSError as exc:
        found.refused.append(Refusal(shown, "$", f"could not read: {exc.strerror}"))
        return
    if stat.S_ISDIR(mode):
        found.folders.add(p.resolve())
        walk(p, found)
    elif stat.S_ISREG(mode):
        found.files.append((p, shown))
        found.named.add(shown)
    else:
        found.refused.append(Refusal(shown, "$", not_opened(mode)))


def _read_once(found: Found) -> list[tuple[Path, str]]:
    """The files found, each real file once (under the first name it was found by); the others
    skipped as the same file."""
    seen: dict[Path, str] = {}
    unique = []
    for f, shown in found.files:
        key = f.resolve()
        if key in seen:
            if seen[key] != shown:
                found.skipped.append(Skipped(shown, f"the same file as {seen[key]}: read once, from there"))
            continue
        seen[key] = shown
        unique.append((f, shown))
    return unique


def discover_named(
    paths: Iterable[str | os.PathLike],
) -> tuple[list[tuple[Path, str]], list[Skipped], list[Refusal], set[str]]:
    """Files to read (path, display name), sorted; folders searched recursively; and the files
    skipped and refused on the way, and the display names of the files given by name.

    Files named on the command line are always read; inside folders only .json/.jsonl files
    and manifests are, the rest are listed as skipped. Only regular files are ever opened
    (a FIFO or device is refused by name). A symlink is followed once: a file it points to is
    read under the link's name, a folder searched unless already searched; a symlink to
    nothing is refused. A folder that cannot be read is refused, never silently passed over.
    Display names have unsafe characters escaped (`errors.one_line`).
    """
    found = Found()
    for given in paths:
        _take_given(given, found)
    unique = _read_once(found)
    return unique, found.skipped, found.refused, found.named


def discover(paths: Iterable[str | os.PathLike]) -> tuple[list[tuple[Path, str]], list[Skipped], list[Refusal]]:
    """Files to read (path, display name), sorted, and the files skipped and refused on the way
    (`discover_named`, without which of the files were named)."""
    files, skipped, refused, _ = discover_named(paths)
    return files, skipped, refused


def missing(paths: Iterable[str | os.PathLike]) -> list[str]:
    """One line for each of `paths` that does not exist (a symlink to nothing included): what a
    command line says before reading anything, since a mistyped folder must not pass for an empty
    one. `load` itself refuses such a path, by name."""
    gone = []
    for given in paths:
        if not os.path.exists(given):
            kind = "a symlink to nothing" if os.path.islink(given) else "no such file or folder"
            gone.append(f"{one_line(str(given))}: {kind}")
    return gone
