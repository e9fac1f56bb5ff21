"""Importers for the real harnesses' own output files, recognised by content.

Each importer module exposes an `IMPORTER` with
- `name`: short format name (`vllm`, `guidellm`, `aiperf`, `lmeval`);
- `recognise(doc, path) -> str | None`: `"results"` for a file that carries results,
  `"auxiliary"` for a file the harness writes beside them that carries none, None if
  the document is not this harness's;
- `import_files(files, manifest) -> ImportOutcome`: turns that harness's results files
  into native run objects (validated later by `analysis.load.native.from_object`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analysis.load.errors import Refusal, Skipped


@dataclass
class SourceFile:
    """One file the loader read: its display path, bytes' SHA-256 and parsed document."""

    path: Path
    display: str
    sha256: str
    doc: Any
    kind: str = "results"
    #: the folder given to the loader under which this file was found (None: file named directly);
    #: importers derive run ids from the path relative to it
    root: Path | None = None

    @property
    def relative(self) -> str:
        """The file's path relative to the folder it was found under (POSIX separators)."""
        if self.root is not None:
            try:
                return self.path.relative_to(self.root).as_posix()
            except ValueError:
                pass
        return self.path.name


@dataclass
class ImportedRun:
    """A native run object made from harness files, with where it came from."""

    obj: dict
    source: SourceFile
    source_format: str
    assumptions: list[str] = field(default_factory=list)
    json_path: str = "$"


@dataclass
class ImportOutcome:
    runs: list[ImportedRun] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


IMPORTERS: list = []


def root_of(path: Path, roots: list[Path]) -> Path | None:
    """The deepest of the given folders that contains `path` (lexically), or None."""
    best = None
    for root in roots:
        try:
            path.relative_to(root)
        except ValueError:
            continue
        if best is None or len(root.parts) > len(best.parts):
            best = root
    return best


def _importers() -> list:
    """The registered importers (registered on first use)."""
    if not IMPORTERS:
        _register()
    return IMPORTERS


def recognise_text(head: bytes, path: Path) -> tuple[Any, str] | None:
    """(importer, kind) of the first importer that recognises a non-JSON file by its first bytes.

    For a harness that writes results or set-up as text (a `.txt`/`.log`/`.yaml` file, or an empty
    file of its layout), an importer has `recognise_text(head, path) -> str | None` and
    `parse_text(data, path)`, which returns the document `import_files` gets (raising ValueError,
    "JSON-PATH\\x00what was expected" or a plain reason, when the file is broken).
    """
    for importer in _importers():
        fn = getattr(importer, "recognise_text", None)
        kind = fn(head, path) if fn else None
        if kind:
            return importer, kind
    return None


def recognise_nonstandard(doc: Any, path: Path) -> tuple[Any, str] | None:
    """(importer, kind) for a document with NaN/Infinity, from the importers whose harness writes them
    (`nonstandard_json = True`: Python's json.dumps writes these tokens, so the harness's JSON is read
    with them, as NaN/inf, instead of being refused)."""
    for importer in _importers():
        if getattr(importer, "nonstandard_json", False):
            kind = importer.recognise(doc, path)
            if kind:
                return importer, kind
    return None


def _register() -> None:
    """Import the importer modules that exist (each appends itself to IMPORTERS)."""
    import importlib
    import pkgutil

    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            module = importlib.import_module(f"{__name__}.{info.name}")
            if hasattr(module, "IMPORTER") and module.IMPORTER not in IMPORTERS:
                IMPORTERS.append(module.IMPORTER)


def recognise(doc: Any, path: Path) -> tuple[Any, str] | None:
    """(importer, kind) of the first importer that recognises the document, or None."""
    if not IMPORTERS:
        _register()
    for importer in IMPORTERS:
        kind = importer.recognise(doc, path)
        if kind:
            return importer, kind
    return None
