"""What an analysis reads: run files and folders, or a run store, never both (one type for the
command line, `Report.open`, the build and the analyst's `open_runs`).

`Source` says what to read; `open_source` reads it once (a store at one state, whatever an
ingest does meanwhile) and gives an `OpenedSource`: what was loaded, refused and skipped, a key
of its content (a build is up to date when the key is), and `analyse`.

One rule for refused files, wherever the source is opened: they are listed (the caller says them
on stderr or shows them), and unless the caller was told to skip them (`--skip-bad`,
`skip_bad=True`) they stop the work before anything is written: `RefusedFiles`. A path that does
not exist is a `SourceError` even when refused files are skipped: a mistyped folder must not
pass for an empty one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable

from benchreport.load import LoadResult, load, missing

__all__ = ["Source", "OpenedSource", "SourceError", "RefusedFiles", "open_source", "DEFAULT_MAX_FILE_MB"]

#: the largest run file read, in MB (--max-file-mb)
DEFAULT_MAX_FILE_MB = 512.0


class SourceError(ValueError):
    """The source cannot be read as asked: nothing given, both paths and a store, a path that
    does not exist (the command line's exit 2)."""


class RefusedFiles(ValueError):
    """Some files were refused and the caller did not ask to skip them (the command line's exit
    1); `.refused` lists them (path, JSON path, reason)."""

    def __init__(self, refused, n_files: int | None = None):
        self.refused = list(refused)
        n = n_files if n_files is not None else len(self.refused)
        first = str(self.refused[0]) if self.refused else ""
        more = f" (and {len(self.refused) - 1} more)" if len(self.refused) > 1 else ""
        super().__init__(
            f"{n} file(s) refused; rerun with skip_bad=True (--skip-bad) to go on without them: {first}{more}"
        )


@dataclass(frozen=True)
class Source:
    """Run files and folders (`paths`, searched recursively), or a run store (`store`)."""

    paths: tuple[str, ...] = ()
    store: str | None = None
    max_file_mb: float = DEFAULT_MAX_FILE_MB
    strict: bool = False
    as_of: str | None = None  # a DuckLake store as of a snapshot (number) or a day (YYYY-MM-DD)

    @classmethod
    def of(
        cls,
        paths: Iterable | str | os.PathLike | None = None,
        store=None,
        *,
        max_file_mb: float = DEFAULT_MAX_FILE_MB,
        strict: bool = False,
        as_of: str | None = None,
    ) -> "Source":
        """A checked source: exactly one of `paths` (a path or several) and `store`; `as_of` only
        with a store."""
        if isinstance(paths, (str, os.PathLike)):
            paths = [paths]
        given = tuple(str(p) for p in (paths or ()))
        if store is None and not given:
            raise SourceError("give RUNS (files or folders) or --store DIR")
        if store is not None and given:
            raise SourceError("give RUNS or --store DIR, not both")
        if store is not None and str(store).startswith(("ducklake:", "parquet:")):  # made already: its folder says
            store = str(store).split(":", 1)[1]
        if as_of is not None and store is None:
            raise SourceError("--as-of needs --store (a DuckLake store's snapshot or day)")
        return cls(given, None if store is None else str(store), float(max_file_mb), bool(strict), as_of)

    def check_exists(self) -> None:
        """Every path given exists (a store is checked when it is opened)."""
        gone = missing(self.paths)
        if gone:
            raise SourceError(gone[0] + (f" (and {len(gone) - 1} more)" if len(gone) > 1 else ""))


@dataclass
class OpenedSource:
    """A source read once: `loaded` (runs, refused and skipped files; from a store, what its
    files.parquet says of them) and the store's snapshot when it is one."""

    source: Source
    loaded: LoadResult
    store: object = None

    def check_refused(self, *, skip_bad: bool) -> None:
        """The one rule for refused files: they stop the work unless `skip_bad`."""
        if self.loaded.refused and not skip_bad:
            raise RefusedFiles(self.loaded.refused, self.loaded.refused_files)

    def require_runs(self) -> None:
        """At least one run was read (a store is analysed as it is)."""
        if self.store is None and not self.loaded.runs:
            raise (
                RefusedFiles(self.loaded.refused)
                if self.loaded.refused
                else SourceError("no run could be read from " + ", ".join(self.source.paths))
            )

    def content_key(self) -> str:
        """A key of what would be analysed: equal keys, equal analyses (with equal options)."""
        if self.store is not None:
            return "store:" + self.store.content_key()
        return (
            "runs:"
            + ",".join(sorted(lr.sha256 for lr in self.loaded.runs))
            + "|refused:"
            + ",".join(sorted(f"{r.path}:{r.json_path}" for r in self.loaded.refused))
        )

    def analyse(self, options, *, quiet: bool = True):
        """Statistics and flags (benchreport.pipeline) of what was read."""
        from benchreport.pipeline import analyse, analyse_store

        if self.store is not None:
            return analyse_store(self.store, options, quiet=quiet)
        return analyse(self.loaded, options, quiet=quiet)


def open_source(source: Source, *, progress: bool | None = False) -> OpenedSource:
    """Read `source` once: the files loaded (`progress`: a bar on a terminal when None), or the
    store opened at one state with what its files.parquet says of the files it holds."""
    if source.store is not None:
        from benchreport.store import Store  # deferred: DuckDB loads only when a store is read
        from benchreport.store.layout import store_load_result

        store = Store.open(source.store).snapshot()
        if source.as_of is not None:
            if not getattr(store, "lake", False):
                raise SourceError(f"--as-of {source.as_of}: {source.store} keeps no snapshots (a DuckLake store does)")
            store = store.at(source.as_of)
        loaded = store_load_result(store)
        loaded.store_versions = len(store.current_shas())  # what the summary line counts
        return OpenedSource(source, loaded, store)
    source.check_exists()
    loaded = load(
        list(source.paths), max_file_bytes=int(source.max_file_mb * 1e6), progress=progress, strict=source.strict
    )
    return OpenedSource(source, loaded)
