"""Load run files: discover, read, recognise by content, validate, check across files.

`load(paths)` never raises for bad input: every file ends up loaded, refused (with
`PATH: JSON-PATH: what was expected, what was found`) or skipped (carries no results).
One bad file never stops or loses the others.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import msgspec

from analysis.load import harness, native
from analysis.load.errors import Refusal, RunFileError, Skipped, one_line
from analysis._memory import gc_paused
from analysis.progress import Progress

#: files bigger than this are refused with a size message instead of exhausting memory
DEFAULT_MAX_FILE_BYTES = 512 * 1024 * 1024
#: in folders, only these endings are read; other files are listed as skipped
RESULT_SUFFIXES = {".json", ".jsonl"}
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


@dataclass
class LoadResult:
    runs: list[LoadedRun] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.refused

    def refused_json(self) -> str:
        """`refused.json`: every refused and skipped file, and why."""
        return json.dumps({"refused": [r.as_dict() for r in self.refused],
                           "skipped": [s.as_dict() for s in self.skipped]}, indent=2) + "\n"


def discover(paths: Iterable[str | os.PathLike]) -> tuple[list[tuple[Path, str]], list[Skipped], list[Refusal]]:
    """Files to read (path, display name), sorted; folders searched recursively.

    Files named on the command line are always read; inside folders only .json/.jsonl
    files are, the rest are listed as skipped. Symlinks inside folders are not followed.
    """
    from analysis.outdir import MARKER as OUTPUT_MARKER

    files: list[tuple[Path, str]] = []
    skipped: list[Skipped] = []
    refused: list[Refusal] = []
    for given in paths:
        p = Path(given)
        if p.is_dir():
            for root, dirs, names in os.walk(p):
                if OUTPUT_MARKER in names:  # benchreport's own output is never read back as runs
                    dirs[:] = []
                    skipped.append(Skipped(one_line(root), f"a benchreport output folder (it holds "
                                                           f"{OUTPUT_MARKER}): not read as runs"))
                    continue
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(names):
                    f = Path(root) / name
                    if name.startswith(".") or f.is_symlink():
                        continue
                    if f.suffix.lower() in RESULT_SUFFIXES or name in MANIFEST_NAMES:
                        files.append((f, str(f)))
                    else:
                        skipped.append(Skipped(str(f), "not a JSON file (no results read from it)"))
        elif p.is_file():
            files.append((p, str(p)))
        else:
            refused.append(Refusal(str(p), "$", "expected a file or folder, found nothing at this path"))
    seen: set[Path] = set()
    unique = []
    for f, shown in files:
        key = f.resolve()
        if key not in seen:
            seen.add(key)
            unique.append((f, shown))
    return unique, skipped, refused


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
    bad = _find_nonfinite(doc, "$")
    if bad:
        return f"{bad[0]}\x00expected a finite number, got {bad[1]} (not valid JSON)"
    return "expected valid JSON"


def _find_nonfinite(doc, path):
    stack = [(doc, path)]
    while stack:
        obj, here = stack.pop()
        if isinstance(obj, float) and (obj != obj or obj in (float("inf"), float("-inf"))):
            return here, ("NaN" if obj != obj else str(obj).replace("inf", "Infinity"))
        if isinstance(obj, dict):
            stack.extend((v, f"{here}.{k}") for k, v in reversed(list(obj.items())))
        elif isinstance(obj, list):
            stack.extend((v, f"{here}[{i}]") for i, v in reversed(list(enumerate(obj))))
    return None


def _refusal_from_text(display: str, reason: str) -> Refusal:
    if "\x00" in reason:
        where, _, what = reason.partition("\x00")
        return Refusal(display, where, what)
    return Refusal(display, "$", reason)


def _parse_any(data: bytes, path: Path):
    """Untyped parse of a JSON or JSON Lines document (raises ValueError with a reason)."""
    try:
        return msgspec.json.decode(data)
    except (msgspec.DecodeError, RecursionError):
        pass
    if path.suffix.lower() == ".jsonl" or data.count(b"\n") > 0:
        lines = [ln for ln in data.splitlines() if ln.strip()]
        try:
            docs = [msgspec.json.decode(ln) for ln in lines]
        except (msgspec.DecodeError, RecursionError):
            docs = None
        if docs and all(isinstance(d, dict) for d in docs):
            return docs
    raise ValueError(_json_error(data))


def load(paths: Iterable[str | os.PathLike], *, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
         progress: bool | None = None) -> LoadResult:
    """Load every run file under `paths`; never raises for bad input."""
    with gc_paused():
        return _load(paths, max_file_bytes=max_file_bytes, progress=progress)


def _load(paths, *, max_file_bytes: int, progress: bool | None) -> LoadResult:
    paths = list(paths)
    roots = [Path(p) for p in paths if Path(p).is_dir()]  # harness run ids use paths relative to these
    files, skipped, refused = discover(paths)
    result = LoadResult(skipped=skipped, refused=refused)
    by_importer: dict[str, tuple[object, list[harness.SourceFile]]] = {}
    manifests: list[harness.SourceFile] = []
    with Progress("reading run files", len(files), enabled=progress) as prog:
        for path, display in files:
            prog.step()
            try:
                size = path.stat().st_size
                if size > max_file_bytes:
                    result.refused.append(Refusal(display, "$", (
                        f"expected a file of at most {max_file_bytes / 1e6:.0f} MB "
                        f"(--max-file-mb), found {size / 1e6:.1f} MB")))
                    continue
                data = path.read_bytes()
            except OSError as exc:
                result.refused.append(Refusal(display, "$", f"could not read the file: {exc.strerror}"))
                continue
            digest = hashlib.sha256(data).hexdigest()
            if not data.isascii():
                try:
                    data.decode("utf-8")
                except UnicodeDecodeError:
                    result.refused.append(_refusal_from_text(display, _json_error(data)))
                    continue
            if path.name in MANIFEST_NAMES:
                manifests.append(harness.SourceFile(path, display, digest, data, kind="manifest",
                                                     root=harness.root_of(path, roots)))
                continue
            if _NATIVE_MARK in data[:1024] and data[:64].lstrip().startswith(b"{"):  # skips a parse
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
                    result.refused.append(Refusal(display, exc.json_path, exc.message))
                    continue
                except (msgspec.DecodeError, RecursionError):
                    result.refused.append(_refusal_from_text(display, _json_error(data)))
                    continue
                result.runs.append(LoadedRun(run, display, digest))
                continue
            try:
                doc = _parse_any(data, path)
            except ValueError as exc:
                result.refused.append(_refusal_from_text(display, str(exc)))
                continue
            if isinstance(doc, dict) and "format" in doc:
                result.refused.append(Refusal(display, "$.format", native.unknown_format_message(doc["format"])))
                continue
            found = harness.recognise(doc, path)
            if found is None:
                what = "an object" if isinstance(doc, dict) else (
                    "JSON Lines" if isinstance(doc, list) and path.suffix == ".jsonl" else f"a JSON {type(doc).__name__}")
                result.refused.append(Refusal(display, "$", (
                    f'expected a native run file ("format": "{native.FORMAT}") or a supported harness '
                    f"output (vLLM bench serve, GuideLLM, AIPerf/GenAI-Perf, lm-evaluation-harness), "
                    f"found {what} of no known kind")))
                continue
            importer, kind = found
            source = harness.SourceFile(path, display, digest, doc, kind=kind, root=harness.root_of(path, roots))
            if kind == "auxiliary":
                result.skipped.append(Skipped(display, f"{importer.name} file that carries no results"))
                continue
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
                                         imported.source_format, tuple(imported.assumptions)))
    _check_across_files(result)
    result.refused.sort(key=lambda r: (r.path, r.json_path))
    result.skipped.sort(key=lambda s: s.path)
    return result


def _placement_key(seat: native.Seat):
    return None if seat.placement is None else msgspec.to_builtins(seat.placement)


def _check_across_files(result: LoadResult) -> None:
    """run_id unique in the data set; one seat id means one model and placement.

    The first file (in path order) wins; each later conflicting file is refused with a
    message naming both files.
    """
    first_run: dict[str, LoadedRun] = {}
    first_seat: dict[str, LoadedRun] = {}
    kept: list[LoadedRun] = []
    for lr in sorted(result.runs, key=lambda r: (r.source_file, r.run.run_id)):
        rid, seat = lr.run.run_id, lr.run.seat
        if rid in first_run:
            result.refused.append(Refusal(lr.source_file, "$.run_id", (
                f'expected a run_id unique in the data set, got "{rid}", '
                f"which {first_run[rid].source_file} already uses")))
            continue
        prior = first_seat.get(seat.id)
        if prior is not None:
            ps = prior.run.seat
            if ps.model != seat.model:
                result.refused.append(Refusal(lr.source_file, "$.seat.model", (
                    f'expected model "{ps.model}" for seat "{seat.id}" as in {prior.source_file}, '
                    f'got "{seat.model}" (one seat id means one model)')))
                continue
            a, b = _placement_key(ps), _placement_key(seat)
            if a is not None and b is not None and a != b:
                result.refused.append(Refusal(lr.source_file, "$.seat.placement", (
                    f'expected the placement of seat "{seat.id}" as in {prior.source_file} '
                    f"({json.dumps(a, sort_keys=True)}), got {json.dumps(b, sort_keys=True)} "
                    "(one seat id means one placement)")))
                continue
        else:
            first_seat[seat.id] = lr
        first_run[rid] = lr
        kept.append(lr)
    result.runs = kept
