"""Load run files: discover, read, recognise by content, validate, check across files.

`load(paths)` never raises for bad input: every file ends up loaded, refused (with
`PATH: JSON-PATH: what was expected, what was found`) or skipped (carries no results).
One bad file never stops or loses the others.

A file found in a folder that no importer reads and that does not claim to be a run (no
native `format`, no harness's signature key; when it is not valid JSON, neither a harness's
result name nor its opening keys: `harness.claim`; and not empty) is *skipped* as not a run file (`errors.not_a_run`): a tokenizer, a data set,
any other tool's JSON. A file that claims to be a run and breaks its format is refused. A file
named in `paths` is the user's choice and is refused when it is not a run file, as every such
file is with `strict` (docs/importers.md, "Files that are not run files").
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import msgspec

from benchreport.load import duplicates, harness, native
from benchreport.load.across import check_across_files
from benchreport.load.not_runs import Unknown
from benchreport.load.errors import Refusal, RunFileError, Skipped, one_line
from benchreport._memory import gc_paused
from benchreport.progress import progress as progress_bar
from benchreport.reserved import OUTPUT_MARKER

#: files bigger than this are refused with a size message instead of exhausting memory
DEFAULT_MAX_FILE_BYTES = 512 * 1024 * 1024
#: in folders, only these endings are read; other files are listed as skipped
RESULT_SUFFIXES = {".json", ".jsonl"}
#: in folders, files with these endings are opened as text only when a harness importer
#: recognises their first bytes (MLPerf LoadGen's `:::MLLOG` log, a harness's config YAML);
#: the others are skipped as before
TEXT_SUFFIXES = {".txt", ".log", ".yaml", ".yml"}
#: how much of a text file is read to recognise it
TEXT_HEAD_BYTES = 4096
#: manifest names (spec: a small manifest beside harness files maps them to seats)
MANIFEST_NAMES = {"benchreport.yaml", "benchreport.yml", "benchreport.json"}
_NATIVE_MARK = b'"benchreport.run/'


@dataclass
class LoadedRun:
    """A validated run and where it came from."""

    run: native.Run
    source_file: str
    sha256: str
    source_format: str = "native"
    assumptions: tuple[str, ...] = ()
    #: figures an importer found to differ from an aggregate the harness wrote (dicts; see
    #: benchreport.load.harness._common.Check); the runs table's `figure_checks`
    checks: tuple[dict, ...] = ()


@dataclass
class LoadResult:
    runs: list[LoadedRun] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    #: the SHA-256 of the bytes read of every file that was read (shown path -> digest), the
    #: refused ones too: the run store compares a refusal's content to see that a cause is fixed
    digests: dict[str, str] = field(default_factory=dict)
    #: read from a run store: how many file versions it has in use (the runs are in the store)
    store_versions: int | None = None

    @property
    def ok(self) -> bool:
        return not self.refused

    @property
    def refused_files(self) -> int:
        """How many files were refused (one file may be refused for several reasons, or lines)."""
        return len({r.path for r in self.refused})

    def refused_json(self) -> str:
        """`refused.json`: every refused and skipped file, and why."""
        return json.dumps({"refused": [r.as_dict() for r in self.refused],
                           "skipped": [s.as_dict() for s in self.skipped]}, indent=2) + "\n"


def _kind(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    for test, name in ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a regular file"


def _wanted(name: str) -> bool:
    return Path(name).suffix.lower() in RESULT_SUFFIXES or name in MANIFEST_NAMES


def _textual(name: str) -> bool:
    """A text file a harness may write its results or set-up into (read only if recognised)."""
    return Path(name).suffix.lower() in TEXT_SUFFIXES and name not in MANIFEST_NAMES


NOT_JSON = "not a JSON file (no results read from it)"


def _not_opened(mode: int) -> str:
    return f"expected a regular file, found {_kind(mode)}: not opened"


class _Found:
    """What discovery collects: files to read, and files and folders refused or skipped."""

    def __init__(self) -> None:
        self.files: list[tuple[Path, str]] = []
        self.named: set[str] = set()  # display names of the files given by name, not found in a folder
        self.skipped: list[Skipped] = []
        self.refused: list[Refusal] = []
        self.folders: set[Path] = set()  # real paths of folders read, so a symlink is followed once


def _walk(top: Path, found: _Found) -> None:
    """Depth-first, sorted, over `top`: regular files by suffix; symlinks followed once; hidden
    names skipped; unreadable folders, dangling symlinks and FIFOs or devices reported by name."""
    stack = [top]
    while stack:
        folder = stack.pop()
        shown = one_line(str(folder))
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            found.refused.append(Refusal(shown, "$", f"could not read the folder: {exc.strerror}; "
                                                     "any run files in it were not read"))
            continue
        if any(e.name == OUTPUT_MARKER for e in entries):  # benchreport's own output, never runs
            found.skipped.append(Skipped(shown, f"a benchreport output folder (it holds {OUTPUT_MARKER}): "
                                                "not read as runs"))
            continue
        subfolders = []
        for entry in entries:
            if entry.name.startswith("."):
                continue
            path = Path(entry.path)
            name = one_line(entry.path)
            try:
                mode = entry.stat(follow_symlinks=True).st_mode
            except FileNotFoundError:
                found.refused.append(Refusal(name, "$", f"expected a file or folder, found a symlink to "
                                                        f"nothing ({one_line(os.readlink(path))})"))
                continue
            except OSError as exc:
                found.refused.append(Refusal(name, "$", f"could not read: {exc.strerror}"))
                continue
            if stat.S_ISDIR(mode):
                real = path.resolve()
                if real in found.folders:
                    found.skipped.append(Skipped(name, f"a symlink to a folder already read ({one_line(str(real))})"))
                else:
                    subfolders.append(path)
                    found.folders.add(real)
            elif not _wanted(entry.name) and not (_textual(entry.name) and stat.S_ISREG(mode)):
                found.skipped.append(Skipped(name, NOT_JSON))
            elif stat.S_ISREG(mode):
                found.files.append((path, name))
            else:
                found.refused.append(Refusal(name, "$", _not_opened(mode)))
        stack.extend(reversed(subfolders))


def discover(paths: Iterable[str | os.PathLike]) -> tuple[list[tuple[Path, str]], list[Skipped], list[Refusal]]:
    """Files to read (path, display name), sorted, and the files skipped and refused on the way
    (`_discover`, without which of the files were named)."""
    files, skipped, refused, _ = _discover(paths)
    return files, skipped, refused


def _discover(paths: Iterable[str | os.PathLike]) -> tuple[list[tuple[Path, str]], list[Skipped], list[Refusal],
                                                           set[str]]:
    """Files to read (path, display name), sorted; folders searched recursively.

    Files named on the command line are always read; inside folders only .json/.jsonl files
    and manifests are, the rest are listed as skipped. Only regular files are ever opened
    (a FIFO or device is refused by name). A symlink is followed once: a file it points to is
    read under the link's name, a folder searched unless already searched; a symlink to
    nothing is refused. A folder that cannot be read is refused, never silently passed over.
    Display names have unsafe characters escaped (`errors.one_line`).
    """
    found = _Found()
    for given in paths:
        p = Path(given)
        shown = one_line(str(given))
        try:
            mode = p.stat().st_mode
        except FileNotFoundError:
            kind = "a symlink to nothing" if p.is_symlink() else "nothing"
            found.refused.append(Refusal(shown, "$", f"expected a file or folder, found {kind} at this path"))
            continue
        except OSError as exc:
            found.refused.append(Refusal(shown, "$", f"could not read: {exc.strerror}"))
            continue
        if stat.S_ISDIR(mode):
            found.folders.add(p.resolve())
            _walk(p, found)
        elif stat.S_ISREG(mode):
            found.files.append((p, shown))
            found.named.add(shown)
        else:
            found.refused.append(Refusal(shown, "$", _not_opened(mode)))
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
    return unique, found.skipped, found.refused, found.named


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


def _read(path: Path, max_file_bytes: int, head: int | None = None) -> bytes:
    """The bytes of a regular file of at most `max_file_bytes` (raises _Unread with the reason);
    with `head`, only its first `head` bytes, whatever its size.

    Opened without blocking and checked after opening, so a FIFO put in a file's place
    between discovery and reading is refused, never waited on.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
                 | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise _Unread(_not_opened(st.st_mode))
        if head is not None:
            return f.read(head)
        if st.st_size > max_file_bytes:
            raise _Unread(_too_big(max_file_bytes, st.st_size))
        data = f.read(st.st_size + 1)
        if len(data) > st.st_size:  # grew since: read on, up to the limit
            data += f.read(max_file_bytes + 1 - len(data))
    if len(data) > max_file_bytes:
        raise _Unread(_too_big(max_file_bytes, len(data)))
    return data


def _too_big(limit: int, size: int) -> str:
    return f"expected a file of at most {limit / 1e6:.0f} MB (--max-file-mb), found {size / 1e6:.1f} MB"


class _Unread(Exception):
    """A file not read: the reason is the refusal's message."""


def _json_error(data: bytes) -> str:
    """A precise reason for bytes msgspec could not parse (line and column, NaN, encoding)."""
    if not data.strip():
        return "expected a JSON document, found an empty file"
    if b"\x00" in data[:65536]:
        return "expected UTF-8 JSON text, found binary data (NUL bytes)"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"expected UTF-8 JSON text, found undecodable bytes at byte {exc.start}"
    if "\x00" in text:
        return "expected UTF-8 JSON text, found binary data (NUL bytes)"
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        if exc.pos >= len(text.rstrip()) - 1 or exc.msg.startswith("Unterminated"):
            return f"expected complete JSON, found a document that ends early (truncated?) at {where}"
        return f"expected valid JSON, found an error at {where}: {exc.msg}"
    except RecursionError:
        return "expected JSON nested at most a few hundred levels, found deeper nesting"
    bad = _find_bad_value(doc, "$")
    if bad:
        return f"{bad[0]}\x00{bad[1]}"
    return "expected valid JSON"


_SURROGATE = re.compile("[\ud800-\udfff]")


def _find_bad_value(doc, path) -> tuple[str, str] | None:
    """The JSON path and reason of the first value msgspec refuses but Python's json reads: a
    non-finite number (NaN, Infinity) or a lone surrogate in a string or key."""
    stack = [(doc, path)]
    while stack:
        obj, here = stack.pop()
        if isinstance(obj, float) and (obj != obj or obj in (float("inf"), float("-inf"))):
            found = "NaN" if obj != obj else str(obj).replace("inf", "Infinity")
            return here, f"expected a finite number, got {found} (not valid JSON)"
        if isinstance(obj, str) and _SURROGATE.search(obj):
            return here, f"expected text, got a lone surrogate (U+{ord(_SURROGATE.search(obj).group()):04X}), which no UTF-8 text can hold"
        if isinstance(obj, dict):
            for k in obj:
                if _SURROGATE.search(k):
                    return f"{here}.{one_line(k)}", "expected a key of text, got a lone surrogate in it"
            stack.extend((v, f"{here}.{k}") for k, v in reversed(list(obj.items())))
        elif isinstance(obj, list):
            stack.extend((v, f"{here}[{i}]") for i, v in reversed(list(enumerate(obj))))
    return None


def _refusal_from_text(display: str, reason: str) -> Refusal:
    if "\x00" in reason:
        where, _, what = reason.partition("\x00")
        return Refusal(display, where, what)
    return Refusal(display, "$", reason)


@dataclass
class _Parsed:
    """An untyped document and how it was read: JSON Lines keep the good lines of a damaged file."""

    doc: object
    lines: bool = False
    #: (line number, reason) of each JSON Lines line that could not be read
    bad_lines: list[tuple[int, str]] = field(default_factory=list)
    #: a text file an importer recognised (no JSON checks apply)
    text: bool = False


def _lenient(data: bytes):
    """Python's json, which reads NaN and Infinity (Python's json.dump writes them by default):
    harness files only, where a number the importer never reads must not refuse the file."""
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(str(exc)) from None


def _parse_any(data: bytes, path: Path) -> _Parsed:
    """Untyped parse of a JSON or JSON Lines document (raises ValueError with a reason)."""
    try:
        return _Parsed(msgspec.json.decode(data))
    except (msgspec.DecodeError, RecursionError):
        pass
    if path.suffix.lower() == ".jsonl" or data.count(b"\n") > 0:
        docs, bad = [], []
        for number, line in enumerate(data.splitlines(), 1):
            if not line.strip():
                continue
            try:
                docs.append(msgspec.json.decode(line))
            except (msgspec.DecodeError, RecursionError):
                try:
                    docs.append(_lenient(line))
                except ValueError:
                    bad.append((number, _json_error(line).replace("at line 1 column", "at column")))
        if docs and all(isinstance(d, dict) for d in docs) and (len(docs) > 1 or path.suffix.lower() == ".jsonl"):
            return _Parsed(docs, True, bad)
    try:
        doc = _lenient(data)
    except ValueError:
        raise ValueError(_json_error(data)) from None
    if isinstance(doc, dict) and isinstance(doc.get("format"), str) and doc["format"].startswith("benchreport.run/"):
        raise ValueError(_json_error(data))  # a native file is held to the contract: finite numbers
    return _Parsed(doc)


def _duplicate(data: bytes, decoded, *, lines: bool = False) -> Refusal | None:
    """A key given twice in an object, as the file's refusal (None: there is none)."""
    if not duplicates.may_have_duplicates(data, decoded):
        return None
    found = duplicates.find_duplicate(data, lines=lines)
    return None if found is None else Refusal("", found[0], found[1])


class _Broken(ValueError):
    """A file an importer recognised that it could not read: refused, never skipped."""


def _claimed_text(data: bytes, path: Path):
    """(document, (importer, kind)) of a non-JSON file a harness importer recognises, or None
    (raises _Broken with the reason when the importer cannot read it)."""
    found = harness.recognise_text(data[:TEXT_HEAD_BYTES], path)
    if not found:
        return None
    try:
        return found[0].parse_text(data, path), found
    except ValueError as exc:
        raise _Broken(str(exc)) from None


def _harness_doc(data: bytes, path: Path):
    """(parsed document, (importer, kind)) of a harness file; (importer, kind) None for no known kind.

    JSON (JSON Lines keep their good lines; NaN and Infinity read, as Python's json.dump writes
    them); else a text log an importer recognises (MLPerf LoadGen's `:::MLLOG` lines, an empty
    trace file of a known layout). Raises ValueError with the reason when none of these reads it
    (_Broken when an importer recognised it).
    """
    if _textual(path.name) and (claimed := _claimed_text(data, path)):
        return _Parsed(claimed[0], text=True), claimed[1]
    try:
        parsed = _parse_any(data, path)
    except ValueError:
        if claimed := _claimed_text(data, path):
            return _Parsed(claimed[0], text=True), claimed[1]
        raise
    doc = parsed.doc
    if isinstance(doc, dict) and "format" in doc:
        return parsed, None
    return parsed, (harness.recognise(doc, path) or harness.recognise_nonstandard(doc, path))


def _unrecognised_text(path: Path, display: str, max_file_bytes: int):
    """Skipped (or, when unreadable, Refusal) for a text file no importer recognises by its
    first bytes; None when one does (the file is then read in full)."""
    try:
        head = _read(path, max_file_bytes, head=TEXT_HEAD_BYTES)
    except _Unread as exc:
        return Refusal(display, "$", str(exc))
    except OSError as exc:
        return Refusal(display, "$", f"could not read the file: {exc.strerror}")
    return None if harness.recognise_text(head, path) else Skipped(display, NOT_JSON)


def _add(result: LoadResult, outcome: Refusal | Skipped) -> None:
    (result.skipped if isinstance(outcome, Skipped) else result.refused).append(outcome)


def load(paths: Iterable[str | os.PathLike], *, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
         progress: bool | None = None, strict: bool = False,
         named: Iterable[str | os.PathLike] | None = None) -> LoadResult:
    """Load every run file under `paths`; never raises for bad input.

    A file no importer reads that does not claim to be a run is skipped as not a run file when
    it was found in a folder, refused when it was named (a file in `paths`; `named`: only these
    of them, for a caller that lists folders itself) and, with `strict`, refused wherever it is.
    """
    with gc_paused():
        return _load(paths, max_file_bytes=max_file_bytes, progress=progress, strict=strict, named=named)


def _load(paths, *, max_file_bytes: int, progress: bool | None, strict: bool = False, named=None) -> LoadResult:
    paths = list(paths)
    roots = [Path(p) for p in paths if Path(p).is_dir()]  # harness run ids use paths relative to these
    files, skipped, refused, given = _discover(paths)
    if named is not None:
        given &= {one_line(str(p)) for p in named}
    unknown = Unknown(strict=strict, named=given)
    result = LoadResult(skipped=skipped, refused=refused)
    by_importer: dict[str, tuple[object, list[harness.SourceFile]]] = {}
    manifests: list[harness.SourceFile] = []
    with progress_bar(files, "reading run files", enabled=progress) as bar:
        for path, display in bar:
            if _textual(path.name):
                unread = _unrecognised_text(path, display, max_file_bytes)
                if unread is not None:
                    _add(result, unread)
                    continue
            try:
                data = _read(path, max_file_bytes)
            except _Unread as exc:
                result.refused.append(Refusal(display, "$", str(exc)))
                continue
            except OSError as exc:
                result.refused.append(Refusal(display, "$", f"could not read the file: {exc.strerror}"))
                continue
            digest = hashlib.sha256(data).hexdigest()
            result.digests[display] = digest
            if not data.isascii():
                try:
                    data.decode("utf-8")
                except UnicodeDecodeError:
                    reason = _json_error(data)
                    _add(result, unknown(display, data, path, _refusal_from_text(display, reason),
                                         f"not JSON ({reason.rpartition(chr(0))[2]})", parsed=False))
                    continue
            if path.name in MANIFEST_NAMES:
                manifests.append(harness.SourceFile(path, display, digest, data, kind="manifest",
                                                     root=harness.root_of(path, roots)))
                continue
            if _textual(path.name) or not data.strip():
                fmt = None  # a text log or an empty file: never a native run
            elif _NATIVE_MARK in data[:1024] and data[:64].lstrip().startswith(b"{"):  # skips a parse
                fmt = native.FORMAT
            else:
                try:
                    fmt = native.sniff_format(data)
                except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
                    fmt = None
            if isinstance(fmt, str) and fmt.startswith("benchreport.run/"):
                try:
                    run = native.decode(data)
                except RunFileError as exc:
                    found = duplicates.find_duplicate(data)  # a key given twice is the likelier cause
                    result.refused.append(Refusal(display, *(found or (exc.json_path, exc.message))))
                    continue
                except (msgspec.DecodeError, RecursionError):
                    result.refused.append(_refusal_from_text(display, _json_error(data)))
                    continue
                result.runs.append(LoadedRun(run, display, digest))
                continue
            try:
                parsed, found = _harness_doc(data, path)
            except _Broken as exc:
                result.refused.append(_refusal_from_text(display, str(exc)))
                continue
            except ValueError as exc:
                _add(result, unknown(display, data, path, _refusal_from_text(display, str(exc)),
                                     f"not JSON ({str(exc).rpartition(chr(0))[2]})", parsed=False))
                continue
            doc = parsed.doc
            if found is None and not (isinstance(doc, dict) and "format" in doc):
                outcome = unknown(display, data, path,
                                  Refusal(display, "$", harness.unknown_message(doc, path, native.FORMAT)),
                                  harness.describe(doc, path), parsed=True)
                if isinstance(outcome, Skipped):
                    result.skipped.append(outcome)
                    continue
            twice = None if parsed.text else _duplicate(data, doc, lines=parsed.lines)
            if twice is not None:
                result.refused.append(Refusal(display, twice.json_path, twice.message))
                continue
            if found is None and isinstance(doc, dict) and "format" in doc:
                result.refused.append(Refusal(display, "$.format", native.unknown_format_message(doc["format"])))
                continue
            if found is None:
                result.refused.append(outcome)
                continue
            importer, kind = found
            source = harness.SourceFile(path, display, digest, doc, kind=kind, root=harness.root_of(path, roots))
            if kind == "auxiliary":
                result.skipped.append(Skipped(display, harness.skip_reason(importer, doc, path)))
                continue
            for number, reason in parsed.bad_lines:  # partial damage stays partial
                result.refused.append(Refusal(display, f"$[{number - 1}]", (
                    f"line {number}: {reason}; the file's other {len(doc)} line(s) were read")))
            by_importer.setdefault(importer.name, (importer, []))[1].append(source)
    for name in sorted(by_importer):
        importer, sources = by_importer[name]
        try:
            outcome = importer.import_files(sources, manifests)
        except Exception as exc:  # an importer bug must not lose the other files
            for s in sources:
                result.refused.append(Refusal(s.display, "$", f"the {name} importer failed: {exc!r}"))
            continue
        result.refused.extend(outcome.refused)
        result.skipped.extend(outcome.skipped)
        for imported in outcome.runs:
            try:
                run = native.from_object(imported.obj)
            except RunFileError as exc:
                result.refused.append(Refusal(imported.source.display, exc.json_path,
                                              f"{exc.message} (after import as {name})"))
                continue
            result.runs.append(LoadedRun(run, imported.source.display, imported.source.sha256,
                                         imported.source_format, tuple(imported.assumptions),
                                         tuple(imported.checks)))
    check_across_files(result)
    result.refused.sort(key=lambda r: (r.path, r.json_path))
    result.skipped.sort(key=lambda s: s.path)
    return result
