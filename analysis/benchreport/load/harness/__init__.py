"""Importers for the real harnesses' own output files, recognised by content.

Each importer module exposes an `IMPORTER` with
- `name`: short format name (`vllm`, `guidellm`, `aiperf`, `lmeval`);
- `label` (optional): the formats it reads, in words, for refusals ("considered: ...");
- `recognise(doc, path) -> str | None`: `"results"` for a file that carries results,
  `"auxiliary"` for a file the harness writes beside them that carries none, None if
  the document is not this harness's;
- `skip_reason(doc, path) -> str` (optional): why an auxiliary file carries no results;
- `signature` (optional): keys only this harness's result files hold, and `result_names`
  (optional, a compiled pattern): the names it gives them. A file no importer reads that holds
  one of these keys in its first bytes (or, when it is not valid JSON, has one of these names)
  claims to be this harness's result and is refused, never skipped as "not a run file" (`claim`);
  `early_keys` (optional): keys its results open with, two of which claim a file that is not
  valid JSON (cut short while it was written) to be its result;
- `import_files(files, manifest) -> ImportOutcome`: turns that harness's results files
  into native run objects (validated later by `benchreport.load.native.from_object`).

The general rule for every harness: a file of a recognised layout that holds no results of
its own (an aggregate, a phase copy, a manifest, inputs, a twin) is skipped with its reason,
told from the tool's own markers; a file that claims to be a result and is broken is refused.
Fixture oracles (`expected.json` with a top-level `fixture_oracle` key: a harness's own
figures copied for tests) are skipped here, before any importer sees them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchreport.load.errors import Refusal, Skipped


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
    #: figures the importer checked against an aggregate the harness wrote and found different
    #: (`benchreport.load.harness._common.Check` as dicts; the `import.figure_mismatch` flag reads them)
    checks: list[dict] = field(default_factory=list)


@dataclass
class ImportOutcome:
    runs: list[ImportedRun] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


IMPORTERS: list = []
#: the top-level key that marks a test oracle (tests/fixtures/harness/*/expected.json)
ORACLE_KEY = "fixture_oracle"
#: how many top-level keys a refusal quotes
KEYS_SHOWN = 8


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


class _Oracle:
    """Test oracles: a harness's own summary figures copied into `expected.json`, not its output."""

    name = "fixture oracle"

    def recognise(self, doc, path):
        return "auxiliary" if isinstance(doc, dict) and ORACLE_KEY in doc else None

    def skip_reason(self, doc, path):
        return (
            f"a test oracle ({ORACLE_KEY}: the harness's own figures copied for the importer tests), not harness output"
        )


ORACLE = _Oracle()


def recognise(doc: Any, path: Path) -> tuple[Any, str] | None:
    """(importer, kind) of the first importer that recognises the document, or None."""
    if not IMPORTERS:
        _register()
    for importer in (ORACLE, *IMPORTERS):
        kind = importer.recognise(doc, path)
        if kind:
            return importer, kind
    return None


def skip_reason(importer: Any, doc: Any, path: Path) -> str:
    """Why a file the importer called auxiliary carries no results (its own words when it has them)."""
    reason = getattr(importer, "skip_reason", None)
    text = reason(doc, path) if callable(reason) else None
    return text or f"{importer.name} file that carries no results"


def considered() -> list[str]:
    """The harness formats benchreport reads, in words (each importer's `label`, else its name)."""
    if not IMPORTERS:
        _register()
    return [str(getattr(i, "label", i.name)) for i in IMPORTERS]


def describe(doc: Any, path: Path | None = None) -> str:
    """What a parsed document is, for a refusal: its type and its first top-level keys.

    The keys are what a user needs to tell a wrong file from a layout benchreport does not read
    yet; they are quoted (JSON strings), so odd characters cannot break the line.
    """
    if isinstance(doc, dict):
        return "an object " + _keys_phrase(doc)
    if isinstance(doc, list):
        lines = path is not None and path.suffix.lower() == ".jsonl"
        what = f"JSON Lines of {len(doc)} record(s)" if lines else f"a JSON list of {len(doc)} item(s)"
        if doc and isinstance(doc[0], dict):
            return f"{what} (the first an object {_keys_phrase(doc[0])})"
        if doc:
            return f"{what} (the first a {_json_type(doc[0])})"
        return what
    return f"a JSON {_json_type(doc)}"


def _keys_phrase(obj: dict) -> str:
    if not obj:
        return "with no keys"
    keys = [json.dumps(str(k)[:40], ensure_ascii=True) for k in list(obj)[:KEYS_SHOWN]]
    more = f" and {len(obj) - KEYS_SHOWN} more" if len(obj) > KEYS_SHOWN else ""
    return f"with keys {', '.join(keys)}{more}"


def _json_type(v: Any) -> str:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if v is None:
        return "null"
    return "list" if isinstance(v, list) else "object"


#: how much of a file is searched for a harness's signature keys (`claim`)
CLAIM_HEAD_BYTES = 64 * 1024
_NATIVE_CLAIM = re.compile(rb'"benchreport\.run/')
#: the top-level keys of a native run (spec/run-format.md): two of them claim the format
_NATIVE_KEYS = ("run_id", "seat", "measurements")
_ANY_KEY = re.compile(rb'(?<!\\)"([A-Za-z_][A-Za-z0-9_\-]{0,63})"\s*:')
#: how many of a harness's `early_keys` claim a file that is not valid JSON (one is too common)
EARLY_KEYS_CLAIM = 2
_signature: list = []


def _signature_pattern():
    """(compiled pattern of every importer's signature keys as JSON keys, key -> importer name)."""
    if not _signature:
        owner: dict[str, str] = {}
        for importer in _importers():
            for key in getattr(importer, "signature", ()):
                owner.setdefault(key, importer.name)
        keys = sorted(owner, key=len, reverse=True)
        # a key: quoted, not escaped inside a string, followed by a colon
        _signature.append(
            (re.compile(rb'(?<!\\)"(' + b"|".join(re.escape(k.encode()) for k in keys) + rb')"\s*:'), owner)
        )
    return _signature[0]


def claim(data: bytes, path: Path, *, parsed: bool) -> str | None:
    """Why a file no importer reads still claims to be a run (refused, not skipped), or None.

    A native run's format (`"benchreport.run/`) or a harness's signature key in its first
    CLAIM_HEAD_BYTES; for a file that could not be parsed (`parsed` False: truncated, still being
    written) also a name a harness gives its results, or two of the keys its results open with. A parsed document is judged by its content
    alone, so another tool's `run_summary.json` is not taken for llmperf's.
    """
    head = data[:CLAIM_HEAD_BYTES]
    if _NATIVE_CLAIM.search(head):
        return 'it names the native format ("benchreport.run/...")'
    keys = {k.decode() for k in _ANY_KEY.findall(head)}
    native = [k for k in _NATIVE_KEYS if k in keys]
    if len(native) >= 2:  # a native run that lost (or never had) its "format"
        return f"it holds the keys of a native run ({', '.join(native)}) without its format"
    pattern, owner = _signature_pattern()
    found = pattern.search(head)
    if found:
        key = found.group(1).decode()
        return f'it holds "{key}", a key of {owner[key]} results'
    if not parsed:
        for importer in _importers():
            names = getattr(importer, "result_names", None)
            if names is not None and names.search(path.name):
                return f"its name is one {importer.name} gives its results"
        early = max(([k for k in getattr(i, "early_keys", ()) if k in keys], i.name) for i in _importers())
        if len(early[0]) >= EARLY_KEYS_CLAIM:
            return f"it opens as {early[1]} results do ({', '.join(early[0][:3])})"
    return None


def unknown_message(doc: Any, path: Path, native_format: str) -> str:
    """The refusal of a JSON file no importer recognises: what it is, and what was considered."""
    return (
        f'expected a native run file ("format": "{native_format}") or a harness output benchreport '
        f"reads (considered: {'; '.join(considered())}), found {describe(doc, path)}, of no known kind"
    )
