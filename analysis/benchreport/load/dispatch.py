"""Reading every file found and sending it where it belongs: a native run is decoded here, a
harness's file is queued for its importer, a file no importer reads is skipped or refused
(`not_runs.Unknown`); then each importer reads its files at once and the runs are checked
across files (`across.check_across_files`)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Iterable

import msgspec

from benchreport.load import duplicates, harness, native
from benchreport.load.across import check_across_files
from benchreport.load.errors import Refusal, RunFileError, Skipped, one_line
from benchreport.load.json_errors import json_error, reason_only, refusal_from_text
from benchreport.load.not_runs import Unknown
from benchreport.load.parse import Parsed
from benchreport.load.read import Unread, as_utf8, read_limited
from benchreport.load.recognise import (
    Broken,
    claims_native,
    duplicate_key,
    harness_doc,
    native_format,
    unrecognised_text,
)
from benchreport.load.result import LoadedRun, LoadResult
from benchreport.load.walk import MANIFEST_NAMES, discover_named, is_textual
from benchreport.progress import progress as progress_bar

__all__ = ["load_files", "Reading", "import_harness_files"]


class Reading:
    """One load's files read in turn: the result so far, and the harness files and manifests
    waiting for their importers."""

    def __init__(self, result: LoadResult, unknown: Unknown, roots: list[Path], max_file_bytes: int):
        self.result = result
        self.unknown = unknown
        self.roots = roots  # harness run ids use paths relative to these
        self.max_file_bytes = max_file_bytes
        self.by_importer: dict[str, tuple[object, list[harness.SourceFile]]] = {}
        self.manifests: list[harness.SourceFile] = []

    def read(self, path: Path, display: str) -> None:
        """Read one file: a native run loaded, a harness file or manifest queued, or the file
        refused or skipped."""
        data = self._bytes(path, display)
        if data is None:
            return
        digest = hashlib.sha256(data).hexdigest()
        self.result.digests[display] = digest
        if not self._is_text(data, path, display):
            return
        if path.name in MANIFEST_NAMES:
            self.manifests.append(
                harness.SourceFile(path, display, digest, data, kind="manifest", root=harness.root_of(path, self.roots))
            )
            return
        fmt = native_format(data, path)
        if isinstance(fmt, str) and fmt.startswith("benchreport.run/"):
            self._native(data, display, digest)
        else:
            self._harness(data, path, display, digest)

    def _bytes(self, path: Path, display: str) -> bytes | None:
        """The file's bytes; None when it is refused (unreadable, too big) or skipped (a text
        file no importer recognises)."""
        if is_textual(path.name):
            unread = unrecognised_text(path, display, self.max_file_bytes)
            if unread is not None:
                self.result.add(unread)
                return None
        try:
            return as_utf8(read_limited(path, self.max_file_bytes), self.max_file_bytes)
        except Unread as exc:
            self.result.refused.append(Refusal(display, "$", str(exc)))
        except OSError as exc:
            self.result.refused.append(Refusal(display, "$", f"could not read the file: {exc.strerror}"))
        return None

    def _is_text(self, data: bytes, path: Path, display: str) -> bool:
        """Whether the bytes are UTF-8; when not, the file is refused or skipped as not JSON."""
        if data.isascii():
            return True
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            reason = json_error(data)
            self.result.add(
                self.unknown(
                    display,
                    data,
                    path,
                    refusal_from_text(display, reason),
                    f"not JSON ({reason_only(reason)})",
                    parsed=False,
                )
            )
            return False
        return True

    def _native(self, data: bytes, display: str, digest: str) -> None:
        """A native run file: decoded and checked against the run format, or refused."""
        try:
            run = native.decode(data)
        except RunFileError as exc:
            found = duplicates.find_duplicate(data)  # a key given twice is the likelier cause
            self.result.refused.append(Refusal(display, *(found or (exc.json_path, exc.message))))
            return
        except (msgspec.DecodeError, RecursionError):
            self.result.refused.append(refusal_from_text(display, json_error(data)))
            return
        self.result.runs.append(LoadedRun(run, display, digest))

    def _harness(self, data: bytes, path: Path, display: str, digest: str) -> None:
        """A file that is not a native run: queued for the importer that recognises it, or
        refused or skipped."""
        try:
            parsed, found = harness_doc(data, path)
        except Broken as exc:
            self.result.refused.append(refusal_from_text(display, str(exc)))
            return
        except ValueError as exc:
            self.result.add(
                self.unknown(
                    display,
                    data,
                    path,
                    refusal_from_text(display, str(exc)),
                    f"not JSON ({reason_only(str(exc))})",
                    parsed=False,
                )
            )
            return
        if found is None:
            self._unrecognised(data, path, display, parsed)
            return
        twice = duplicate_key(display, data, parsed)
        if twice is not None:
            self.result.refused.append(twice)
            return
        self._queue(parsed, found, path, display, digest)

    def _unrecognised(self, data: bytes, path: Path, display: str, parsed: Parsed) -> None:
        """A parsed file no importer recognises: skipped as not a run file, or refused (a key
        given twice first, then a format that is not the native one, then `Unknown`'s reason)."""
        doc = parsed.doc
        outcome = None
        if not claims_native(doc):
            outcome = self.unknown(
                display,
                data,
                path,
                Refusal(display, "$", harness.unknown_message(doc, path, native.FORMAT)),
                harness.describe(doc, path),
                parsed=True,
            )
            if isinstance(outcome, Skipped):
                self.result.skipped.append(outcome)
                return
        twice = duplicate_key(display, data, parsed)
        if twice is not None:
            self.result.refused.append(twice)
        elif outcome is None:
            self.result.refused.append(Refusal(display, "$.format", native.unknown_format_message(doc["format"])))
        else:
            self.result.refused.append(outcome)

    def _queue(self, parsed: Parsed, found: tuple, path: Path, display: str, digest: str) -> None:
        """A recognised harness file: skipped when auxiliary, else queued for its importer (its
        damaged JSON Lines lines refused, the file's other lines read)."""
        importer, kind = found
        doc = parsed.doc
        source = harness.SourceFile(path, display, digest, doc, kind=kind, root=harness.root_of(path, self.roots))
        if kind == "auxiliary":
            self.result.skipped.append(Skipped(display, harness.skip_reason(importer, doc, path)))
            return
        for number, reason in parsed.bad_lines:  # partial damage stays partial
            self.result.refused.append(
                Refusal(
                    display,
                    f"$[{number - 1}]",
                    (f"line {number}: {reason}; the file's other {len(doc)} line(s) were read"),
                )
            )
        self.by_importer.setdefault(importer.name, (importer, []))[1].append(source)


def _add_imported(result: LoadResult, name: str, outcome) -> None:
    """What one importer returned: its refusals and skips, and its runs checked against the run
    format (a run that fails is refused, after import)."""
    result.refused.extend(outcome.refused)
    result.skipped.extend(outcome.skipped)
    for imported in outcome.runs:
        try:
            run = native.from_object(imported.obj)
        except RunFileError as exc:
            own = [a for a in imported.assumptions if " cannot be used (" in a or " differ in length " in a]
            where = ("; in the file itself: " + " ".join(own))[:600] if own else ""
            result.refused.append(
                Refusal(imported.source.display, exc.json_path, f"{exc.message} (after import as {name})" + where)
            )
            continue
        result.runs.append(
            LoadedRun(
                run,
                imported.source.display,
                imported.source.sha256,
                imported.source_format,
                tuple(imported.assumptions),
                tuple(imported.checks),
            )
        )


def import_harness_files(reading: Reading) -> None:
    """Each importer, in name order, reads the files queued for it (with the manifests); an
    importer that fails refuses its own files and loses no other."""
    result = reading.result
    for name in sorted(reading.by_importer):
        importer, sources = reading.by_importer[name]
        try:
            outcome = importer.import_files(sources, reading.manifests)
        except Exception as exc:  # an importer bug must not lose the other files
            for s in sources:
                result.refused.append(Refusal(s.display, "$", f"the {name} importer failed: {exc!r}"))
            continue
        _add_imported(result, name, outcome)


def load_files(
    paths: Iterable[str | os.PathLike],
    *,
    max_file_bytes: int,
    progress: bool | None,
    strict: bool = False,
    named: Iterable[str | os.PathLike] | None = None,
) -> LoadResult:
    """`benchreport.load.load` without pausing the garbage collector: discover, read each file,
    import the harness files, check across files; refusals and skips sorted by path."""
    paths = list(paths)
    roots = [Path(p) for p in paths if Path(p).is_dir()]
    files, skipped, refused, given = discover_named(paths)
    if named is not None:
        given &= {one_line(str(p)) for p in named}
    reading = Reading(
        LoadResult(skipped=skipped, refused=refused), Unknown(strict=strict, named=given), roots, max_file_bytes
    )
    with progress_bar(files, "reading run files", enabled=progress) as bar:
        for path, display in bar:
            reading.read(path, display)
    import_harness_files(reading)
    result = reading.result
    check_across_files(result)
    result.refused.sort(key=lambda r: (r.path, r.json_path))
    result.skipped.sort(key=lambda s: s.path)
    return result
