"""`benchreport example DIR`: the example runs shipped with the package, written into DIR.

The example (the fleet paper and the four-node field note, data/example/ in the repository) is
package data (`benchreport.resources.example_dir`), so a pip user can try every command before
having runs of their own: ``benchreport example runs && benchreport build runs --out report``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["example_command", "write_example"]


def write_example(folder: Path) -> list[Path]:
    """Copy the example's files into `folder` (created; it may exist only as an empty folder);
    the files written. Never writes through a symbolic link or over a file (OSError)."""
    from benchreport.resources import example_dir

    source = example_dir()
    files = sorted(p for p in source.rglob("*") if p.is_file() and _is_example_file(p.relative_to(source)))
    if folder.is_symlink():
        raise OSError(0, "a symbolic link: not written through (give a new folder)")
    if folder.exists() and not folder.is_dir():
        raise OSError(0, "a file, not a folder: nothing written (give a new folder)")
    if folder.is_dir() and any(folder.iterdir()):
        raise OSError(0, "not empty: nothing written (give a new or empty folder)")
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for f in files:
        target = folder / f.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        # created here and only here: never through a link or over a file that appeared meanwhile
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        with os.fdopen(fd, "wb") as out:
            out.write(f.read_bytes())
        written.append(target)
    return written


def _is_example_file(rel: Path) -> bool:
    """A run file or the example's README (not Python's caches or package markers)."""
    return "__pycache__" not in rel.parts and rel.suffix in (".json", ".md")


def example_command(args) -> int:
    """Write the example runs into DIR and say what to run next."""
    from benchreport.cli.common import EXIT_OK, UsageError, one_line

    folder = Path(args.dir)
    shown = one_line(str(folder))
    try:
        written = write_example(folder)
    except OSError as exc:
        raise UsageError(f"{shown}: {exc.strerror or exc}") from None
    runs = sum(1 for p in written if p.suffix == ".json")
    print(f"wrote {runs} example run files and README.md to {shown}", file=sys.stderr)
    print(
        f"next: benchreport build {shown} --out {shown}-report   (then open {shown}-report/report.html)",
        file=sys.stderr,
    )
    return EXIT_OK
