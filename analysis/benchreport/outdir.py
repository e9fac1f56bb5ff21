"""Output folders: a folder is benchreport's to replace only if benchreport made it.

`build`, `analyse` and `ingest` write into `--out` the same way:

1. `check_out`: resolve `--out` (a symlink is followed: the folder it points to is written,
   the link is kept); refuse, with exit 2, a path that is a file, the root of a filesystem,
   an input or a folder around or inside an input, and a folder benchreport did not make.
   A folder benchreport made holds the marker file `.benchreport-output` (JSON: the format,
   the command and every file it wrote). Such a folder is replaced only while it holds
   nothing else: a file someone put there since stops the build. A folder without the marker
   (an older benchreport wrote none) is replaced only when it is empty or holds nothing but
   names benchreport writes (`report.*`, `flags.json`, `refused.json`, `tables/*.csv`,
   `figures/figure-NN.*`, the tidy `*.parquet` tables).
2. `clean_leftovers`: staging folders of builds that were killed (`.NAME.tmp-*`, and
   `.NAME.old-*` of an interrupted swap) are removed, but only those holding the marker and
   not owned by a build that is still running.
3. `staging`: a fresh `.NAME.tmp-*` folder beside the target (same filesystem), marked at once.
4. `publish`: the final marker (listing every file) is written and the staging folder swapped
   into place atomically (`replace_dir`); the previous folder is replaced only now.

Errors writing are `OutputFolderError` with exit code 4: the previous folder is unchanged.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import re
import shutil
import socket
import stat
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

from benchreport.load.errors import one_line
from benchreport.progress import signals_held, stop_if_terminated
from benchreport.reserved import OUTPUT_MARKER

__all__ = [
    "MARKER",
    "OutputFolderError",
    "Target",
    "check_out",
    "clean_leftovers",
    "staging",
    "publish",
    "replace_dir",
    "write_output",
    "is_output_folder",
]

#: the file that makes a folder benchreport's own (hidden, so never read as a run file; the name
#: lives in benchreport.reserved, which the loader reads too)
MARKER = OUTPUT_MARKER
MARKER_FORMAT = "benchreport.output/1"
#: what a folder made before the marker existed may hold and still be replaced
LEGACY_TOP = frozenset(
    {
        "report.html",
        "report.pdf",
        "report.ipynb",
        "flags.json",
        "refused.json",
        *(
            f"{t}.parquet"
            for t in ("seats", "components", "runs", "measurements", "requests", "exams", "exam_items", "events")
        ),
    }
)
LEGACY_DIRS = {
    "tables": re.compile(r"^(cells|comparisons|exam_deltas)\.csv$"),
    "figures": re.compile(r"^figure-\d{2,3}\.(png|svg|pdf)$"),
}
#: files an operating system's file browser drops into folders it shows; removed with the folder
OS_CLUTTER = re.compile(r"^(\.DS_Store|Thumbs\.db|desktop\.ini|\._.+)$")
#: how many foreign names a refusal shows
SHOWN = 5
#: an interrupted swap's `.NAME.old-*` folder younger than this may belong to a running build
OLD_GRACE_S = 600


class OutputFolderError(Exception):
    """An output folder that cannot be used or written: one line and its `kind`: "usage" (cannot be
    used as asked) or "failed" (writing failed, or another job holds it: the previous output is
    unchanged). benchreport.cli turns the kind into an exit code."""

    def __init__(self, message: str, kind: str = "usage"):
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Target:
    """Where a command writes: `path` resolved (symlinks followed), `shown` as the user gave it."""

    path: Path
    shown: str


# --- checking ----------------------------------------------------------------------------------


def _resolve(given: str | os.PathLike, option: str) -> Path:
    try:
        return Path(given).expanduser().absolute().resolve(strict=False)
    except (RuntimeError, OSError) as exc:  # a symlink loop
        raise OutputFolderError(
            f"{option} {one_line(str(given))} cannot be resolved: {getattr(exc, 'strerror', None) or exc}"
        ) from None


def _read_marker(folder: Path) -> dict | None:
    """The marker's content when `folder` holds a valid benchreport marker, else None."""
    path = folder / MARKER
    try:
        st = path.lstat()
        if not stat.S_ISREG(st.st_mode) or st.st_size > 16 * 1024 * 1024:
            return None
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) and doc.get("format") == MARKER_FORMAT else None


def is_output_folder(folder: Path) -> bool:
    """True when `folder` was written by benchreport (holds a valid marker)."""
    return _read_marker(folder) is not None


def _walk_entries(folder: Path) -> Iterator[str]:
    """Every entry under `folder` as a POSIX relative path (folders end in '/'); links not followed."""
    for root, dirs, files in os.walk(folder, followlinks=False):
        rel_root = Path(root).relative_to(folder)
        for d in sorted(dirs):
            rel = (rel_root / d).as_posix()
            yield rel + "/"
        for f in sorted(files):
            yield (rel_root / f).as_posix()


def _foreign_in_marked(folder: Path, marker: dict) -> list[str]:
    listed = marker.get("files")
    listed = {f for f in listed if isinstance(f, str)} if isinstance(listed, list) else set()
    parents = {p.as_posix() + "/" for f in listed for p in Path(f).parents if p.as_posix() != "."}
    foreign = []
    for rel in _walk_entries(folder):
        name = rel.rstrip("/").rsplit("/", 1)[-1]
        if rel == MARKER or rel in listed or rel in parents or OS_CLUTTER.match(name):
            continue
        foreign.append(rel)
        if len(foreign) > SHOWN:
            break
    return foreign


def _foreign_in_legacy(folder: Path) -> list[str]:
    """Entries of an unmarked folder that are not names benchreport writes (a few suffice)."""
    foreign = []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if OS_CLUTTER.match(entry.name):
            continue
        if entry.name in LEGACY_DIRS and entry.is_dir(follow_symlinks=False):
            pattern = LEGACY_DIRS[entry.name]
            for sub in sorted(os.scandir(entry.path), key=lambda e: e.name):
                if not (pattern.match(sub.name) and sub.is_file(follow_symlinks=False)) and not OS_CLUTTER.match(
                    sub.name
                ):
                    foreign.append(f"{entry.name}/{sub.name}" + ("/" if sub.is_dir(follow_symlinks=False) else ""))
        elif not (entry.name in LEGACY_TOP and entry.is_file(follow_symlinks=False)):
            foreign.append(entry.name + ("/" if entry.is_dir(follow_symlinks=False) else ""))
        if len(foreign) > SHOWN:
            break
    return foreign


def _shown(names: list[str]) -> str:
    text = ", ".join(one_line(n) for n in names[:SHOWN])
    return text + (", ..." if len(names) > SHOWN else "")


def check_out(given: str | os.PathLike, inputs: Iterable[str | os.PathLike], *, option: str = "--out") -> Target:
    """The folder to write, after every check that keeps a user's files safe (exit 2 when not)."""
    shown = one_line(str(given))
    path = _resolve(given, option)
    if path == Path(path.anchor):
        raise OutputFolderError(f"{option} {shown} is the root of a filesystem; choose a folder of its own")
    if path.exists() and not path.is_dir():
        raise OutputFolderError(f"{option} {shown} exists and is not a folder; choose another {option}")
    for raw in inputs:
        inp = _resolve(raw, "input")
        inp_shown = one_line(str(raw))
        if inp == path:
            raise OutputFolderError(f"{option} {shown} is the input {inp_shown}; write the output elsewhere")
        if inp.is_relative_to(path):
            raise OutputFolderError(
                f"{option} {shown} contains the input {inp_shown}; replacing it would "
                f"delete the runs: choose an {option} outside them"
            )
        if path.is_relative_to(inp):
            raise OutputFolderError(
                f"{option} {shown} lies inside the input {inp_shown}; the next run would "
                f"read its own output: choose an {option} outside the runs"
            )
    if path.is_dir():
        try:
            marker = _read_marker(path)
            if marker is not None:
                foreign = _foreign_in_marked(path, marker)
                if foreign:
                    raise OutputFolderError(
                        f"refusing to replace {option} {shown}: it holds {_count(foreign)} benchreport did "
                        f"not write ({_shown(foreign)}); move them out or choose another {option}"
                    )
            else:
                foreign = _foreign_in_legacy(path)
                if foreign:
                    raise OutputFolderError(
                        f"refusing to replace {option} {shown}: benchreport did not make it (no {MARKER} "
                        f"marker) and it holds {_count(foreign)} benchreport does not write "
                        f"({_shown(foreign)}); choose another {option}"
                    )
        except OSError as exc:
            raise OutputFolderError(f"{option} {shown} cannot be read: {exc.strerror}") from None
    return Target(path, shown)


def _count(foreign: list[str]) -> str:
    return (
        "an entry"
        if len(foreign) == 1
        else (f"{len(foreign)} entries" if len(foreign) <= SHOWN else f"more than {SHOWN} entries")
    )


# --- staging, leftovers and the swap ------------------------------------------------------------


def _host() -> str:
    return socket.gethostname()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OverflowError, ValueError):
        return False
    return True


def clean_leftovers(target: Path) -> list[Path]:
    """Remove staging folders of killed builds beside `target` (only marked ones, never a live build's)."""
    removed = []
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return removed
    prefixes = (f".{target.name}.tmp-", f".{target.name}.old-")
    for entry in entries:
        if not entry.name.startswith(prefixes) or not entry.is_dir(follow_symlinks=False):
            continue
        path = Path(entry.path)
        marker = _read_marker(path)
        if marker is None:
            continue  # not ours: never touched
        if (
            marker.get("state") == "staging"
            and marker.get("host") == _host()
            and isinstance(marker.get("pid"), int)
            and _alive(marker["pid"])
        ):
            continue  # a build that is still running
        if entry.name.startswith(prefixes[1]):
            try:
                if time.time() - entry.stat(follow_symlinks=False).st_ctime < OLD_GRACE_S:
                    continue  # a swap in progress, perhaps
            except OSError:
                continue
        _remove(path)
        if not path.exists():
            removed.append(path)
    return removed


def _write_marker(folder: Path, content: dict) -> None:
    from benchreport.version import __version__

    doc = {"format": MARKER_FORMAT, "written_by": f"benchreport {__version__}", **content}
    (folder / MARKER).write_text(json.dumps(doc, indent=1, ensure_ascii=True) + "\n", encoding="utf-8")


def _remove(path: Path) -> None:
    """Remove a folder we created; finishes even if interrupted once (then re-raises)."""
    interrupted = None
    for _ in range(3):
        try:
            shutil.rmtree(path)
            break
        except FileNotFoundError:
            break
        except KeyboardInterrupt as exc:  # finish cleaning up before giving in
            interrupted = exc
        except OSError:
            shutil.rmtree(path, ignore_errors=True)
            break
    if interrupted is not None:
        raise interrupted


def _failed(what: str, target: Path, exc: OSError) -> OutputFolderError:
    where = one_line(exc.filename if isinstance(exc.filename, str) else str(target))
    return OutputFolderError(f"could not {what}: {exc.strerror or exc} ({where})", "failed")


@contextlib.contextmanager
def staging(target: Path, command: str) -> Iterator[Path]:
    """A fresh marked folder beside `target` (same filesystem), removed on exit unless published.
    SIGINT and SIGTERM are held while it is made, so a signal cannot fall between the folder made
    and its removal assured (a fresh clone's `make test`: Ctrl-C half a second into a build left
    `.out.tmp-*` behind); one that came meanwhile is raised as the folder is ready, and removes it."""
    tmp = None
    try:
        with signals_held():
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
            except OSError as exc:
                raise _failed(f"create a folder beside {target}", target, exc) from None
        try:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o777 & ~umask)  # mkdtemp's 0700 would hide the published report
            _write_marker(
                tmp,
                {
                    "state": "staging",
                    "command": command,
                    "pid": os.getpid(),
                    "host": _host(),
                    "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                },
            )
        except OSError as exc:
            raise _failed(f"write into {tmp}", target, exc) from None
        yield tmp
    finally:
        if tmp is not None and tmp.exists():
            _remove(tmp)


def publish(stage: Path, target: Path, command: str) -> None:
    """Mark the finished `stage` with every file it holds and swap it into place at `target`
    (unless SIGTERM arrived meanwhile: its raise can be swallowed, see `progress`)."""
    stop_if_terminated()
    try:
        files = [rel for rel in _walk_entries(stage) if not rel.endswith("/") and rel != MARKER]
        _write_marker(
            stage,
            {"state": "published", "command": command, "files": files, "written": time.strftime("%Y-%m-%dT%H:%M:%S%z")},
        )
        replace_dir(stage, target)
    except OSError as exc:
        raise _failed(f"move the output into {target}", target, exc) from None


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2 RENAME_EXCHANGE); False if unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    rc = fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EPERM):
        return False
    raise OSError(err, os.strerror(err), str(b))


def replace_dir(new: Path, out: Path) -> None:
    """Put the finished folder `new` at `out`, replacing an earlier `out` only now.

    `new` must be on the same filesystem (a sibling) and `out` a real folder or nothing (never a
    symlink: `check_out` resolves them). Afterwards `new` no longer exists.
    """
    if out.is_symlink():
        raise OSError(errno.ELOOP, "refusing to replace a symlink", str(out))
    if not out.exists():
        os.rename(new, out)
        return
    if _exchange(new, out):
        _remove(new)  # `new` now holds the previous folder
        return
    old = out.parent / f".{out.name}.old-{uuid.uuid4().hex[:8]}"
    os.rename(out, old)
    try:
        os.rename(new, out)
    except BaseException:
        os.rename(old, out)
        raise
    _remove(old)


@contextlib.contextmanager
def locked(target: Target, command: str, *, wait: float | None = None, option: str = "--out") -> Iterator[None]:
    """One writer per output folder: an OS lock (benchreport.locks) held for the whole command, so
    two builds into one folder never race; the second exits 4 naming the first, or waits up to
    `wait` seconds. The lock file lives in the user's cache folder, named by the folder's path, so
    nothing is left beside the output; it holds for the jobs of one user on one machine."""
    from benchreport import locks

    try:
        path = _lock_path(target.path)
        fd = locks.acquire(path, doing=command, wait=wait)
    except locks.Busy as busy:
        waited = f" after waiting {wait:g} s" if wait else ""
        raise OutputFolderError(
            f"another job is writing {option} {target.shown}{busy.holder}{waited}; "
            "nothing was written (give --wait SECONDS to wait for it)",
            "failed",
        ) from None
    except OSError as exc:
        raise _failed(f"lock {option} {target.shown}", target.path, exc) from None
    try:
        yield
    finally:
        os.close(fd)


def _lock_path(folder: Path) -> Path:
    """`$XDG_CACHE_HOME/benchreport/locks/<digest of the folder's path>.lock` (made when missing)."""
    import hashlib

    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "benchreport" / "locks"
    base.mkdir(parents=True, exist_ok=True)
    return base / f"{hashlib.sha256(os.fsencode(folder)).hexdigest()[:24]}.lock"


def write_output(target: Target, command: str, write: Callable[[Path], None]) -> None:
    """Stage, `write(stage)`, publish: the whole output folder replaced at once or not at all."""
    clean_leftovers(target.path)
    with staging(target.path, command) as stage:
        try:
            write(stage)
        except OSError as exc:
            raise _failed(f"write the output for {target.shown}", target.path, exc) from None
        publish(stage, target.path, command)
