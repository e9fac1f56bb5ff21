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

This module is the package's face; the work is done in its modules, in the order a file meets them:
`walk` (the files to read), `read` (their bytes, size-limited), `recognise` (native run or which
harness's output), `parse` and `json_errors` (untyped JSON and precise reasons), `dispatch` (each
file to its place, importers run), `across` (checks across files), `result` (what is returned).
"""

from __future__ import annotations

import os
from typing import Iterable

from benchreport._memory import gc_paused
from benchreport.load import duplicates, harness, native
from benchreport.load.dispatch import load_files
from benchreport.load.read import DEFAULT_MAX_FILE_BYTES
from benchreport.load.recognise import TEXT_HEAD_BYTES
from benchreport.load.result import LoadedRun, LoadResult
from benchreport.load.walk import MANIFEST_NAMES, NOT_JSON, RESULT_SUFFIXES, TEXT_SUFFIXES, discover, missing

__all__ = [
    "load",
    "discover",
    "missing",
    "LoadedRun",
    "LoadResult",
    "DEFAULT_MAX_FILE_BYTES",
    "RESULT_SUFFIXES",
    "TEXT_SUFFIXES",
    "TEXT_HEAD_BYTES",
    "MANIFEST_NAMES",
    "NOT_JSON",
    "duplicates",
    "harness",
    "native",
]


def load(
    paths: Iterable[str | os.PathLike],
    *,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    progress: bool | None = None,
    strict: bool = False,
    named: Iterable[str | os.PathLike] | None = None,
) -> LoadResult:
    """Load every run file under `paths`; never raises for bad input.

    A file no importer reads that does not claim to be a run is skipped as not a run file when
    it was found in a folder, refused when it was named (a file in `paths`; `named`: only these
    of them, for a caller that lists folders itself) and, with `strict`, refused wherever it is.
    """
    with gc_paused():
        return load_files(paths, max_file_bytes=max_file_bytes, progress=progress, strict=strict, named=named)
