"""The harness manifest (`benchreport.yaml` / `.yml` / `.json`): which seat, pass, probe and date
the harness files beside it measured.

Harness output files do not say which seat (model x quantisation x engine x placement) they
measured, nor which pass of the day they were. A manifest maps files to that information:

    runs:
      - files: ["vllm/*.json", "guidellm/**"]     # glob patterns relative to this file's folder
        seat: {id: qwen3-8b-fp8, model: Qwen/Qwen3-8B-FP8, role: incumbent, quantisation: FP8}
        pass: 1
        probe: random-1024x128
        date: 2026-09-10
        warmup_excluded: true

Every entry whose patterns match a file applies to it, in file order, later entries overriding
earlier ones field by field (seat fields one by one); a manifest in a deeper folder overrides one
above it. Manifest text is untrusted: every value is checked (ids against the run-id pattern,
strings for length and control characters, numbers for range), and patterns are only ever
matched against the files the loader already found, never opened as paths. A bad entry is
refused, naming the manifest, the entry and the field; the other entries still apply.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal, Union

import msgspec
from msgspec import UNSET, UnsetType

from benchreport.load import native
from benchreport.load.errors import Refusal, one_line

ID_RE = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
ROLES = ("incumbent", "candidate", "reference")
MAX_STRING = 200
MAX_NOTES = 2000
MAX_SETTINGS_NODES = 500
MAX_SETTINGS_DEPTH = 6
#: entries of one manifest, glob patterns of one entry and of the whole manifest: every
#: harness file is matched against every pattern, so their product is the cost
MAX_ENTRIES = 1_000
MAX_PATTERNS = 200
MAX_MANIFEST_PATTERNS = 2_000
#: a manifest is a few kilobytes; this bounds the YAML parser's work
MAX_MANIFEST_BYTES = 1_000_000
#: YAML aliases (`*name`) of one manifest: each may stand for a whole subtree, so a few hundred
#: nested ones expand to billions of nodes ("billion laughs"); 10,000 took 17 minutes
MAX_YAML_ALIASES = 100


class ManifestError(ValueError):
    def __init__(self, json_path: str, message: str):
        super().__init__(f"{json_path}: {message}")
        self.json_path = json_path
        self.message = message


@dataclass
class Entry:
    """One validated manifest entry: compiled patterns and the fields it sets."""

    patterns: list[re.Pattern]
    fields: dict[str, Any]
    where: str  # "manifest.yaml $.runs[2]" for provenance notes


@dataclass
class Manifest:
    folder: Path
    display: str
    entries: list[Entry] = field(default_factory=list)
    #: what was refused: (the patterns of a refused entry, or None for a manifest that could not be
    #: read at all: every file below it; why), so the files they were meant for are refused too
    #: instead of being imported under a guessed seat. A refused entry whose patterns cannot be
    #: read names no file; it is refused itself, and the other entries apply.
    broken: list[tuple[list[re.Pattern] | None, str]] = field(default_factory=list)


@dataclass
class Applied:
    """What the manifests say about one file: merged fields and where each came from."""

    fields: dict[str, Any] = field(default_factory=dict)
    seat: dict[str, Any] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)
    #: why what the manifests say about this file cannot be trusted (a refused entry, two seats)
    problems: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.fields or self.seat)


# --- parsing and validation ---------------------------------------------------------------
# The entry's shape is declared as msgspec Structs (types, lengths, ranges, patterns, unknown
# fields); `msgspec.convert` checks it in one pass and names the JSON path of the first problem,
# which `_refusal` words as the rest of the loader does. What a type cannot say (dates that are
# dates, patterns inside the manifest's folder, the bounded free-form settings, a key given
# twice) is checked after it.

#: printable text: no control characters but tab and line feed
PRINTABLE = r"^[^\x00-\x08\x0b-\x1f\x7f]*$"
Text = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_STRING, pattern=PRINTABLE)]
Notes = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_NOTES, pattern=PRINTABLE)]
Ident = Annotated[str, msgspec.Meta(pattern=ID_RE.pattern)]
Count = Annotated[int, msgspec.Meta(ge=1, le=10**15)]
Positive = Annotated[float, msgspec.Meta(gt=0, lt=1e18)]
Pattern = Annotated[str, msgspec.Meta(min_length=1, max_length=500, pattern=PRINTABLE)]
Files = Union[Pattern, Annotated[list[Pattern], msgspec.Meta(min_length=1, max_length=MAX_PATTERNS)]]


class _Fields(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """Absent fields stay UNSET, so `msgspec.to_builtins` gives exactly the fields set."""


class PlacementFields(_Fields):
    nodes: Count | UnsetType = UNSET
    gpus_per_node: Count | UnsetType = UNSET
    gpu_memory_bytes: Positive | UnsetType = UNSET
    tensor_parallel: Count | UnsetType = UNSET
    interconnect: Text | UnsetType = UNSET


class ComponentFields(_Fields):
    name: Text
    role: Text | UnsetType = UNSET
    license: Text | UnsetType = UNSET


class SeatFields(_Fields):
    id: Ident | UnsetType = UNSET
    model: Text | UnsetType = UNSET
    role: Literal[ROLES] | UnsetType = UNSET  # type: ignore[valid-type]
    quantisation: Text | UnsetType = UNSET
    engine: Text | UnsetType = UNSET
    placement: PlacementFields | UnsetType = UNSET
    #: free-form engine settings: bounded and checked by `_settings`
    settings: dict[str, Any] | UnsetType = UNSET
    components: Annotated[list[ComponentFields], msgspec.Meta(max_length=50)] | UnsetType = UNSET
    checkpoint_bytes: Positive | UnsetType = UNSET


class EntryFields(_Fields):
    files: Files
    seat: SeatFields | UnsetType = UNSET
    pass_: Count | UnsetType = msgspec.field(default=UNSET, name="pass")
    #: checked by `native.is_iso_date` (YAML dates are read as text)
    date: Annotated[str, msgspec.Meta(min_length=1, max_length=40, pattern=PRINTABLE)] | UnsetType = UNSET
    probe: Text | UnsetType = UNSET
    warmup_excluded: bool | UnsetType = UNSET
    workload: Ident | UnsetType = UNSET
    exam_metric: Text | UnsetType = UNSET
    notes: Notes | UnsetType = UNSET
    harness_group: Text | UnsetType = UNSET


#: the Struct a map at a path holds, by the path's last key (names are unique in the manifest)
_STRUCTS = {
    "$": (EntryFields, "entry"),
    "seat": (SeatFields, "seat"),
    "placement": (PlacementFields, "placement"),
    "components": (ComponentFields, "component"),
}
#: fields that hold an id (`Ident`)
_IDS = ("id", "workload")
_WORDS = {
    "str": "a string",
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
    "object": "a map",
    "array": "a list",
    "id": "an id of 1 to 128 characters from [A-Za-z0-9._-]",
}


def field_names(struct) -> list[str]:
    """The JSON names of a Struct's fields, in declaration order."""
    return [f.encode_name for f in msgspec.structs.fields(struct)]


def _shown(value) -> str:
    if isinstance(value, dict):
        return "a map"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    return json.dumps(value, default=str)[:60]


def _refusal(exc: msgspec.ValidationError, raw: Any, base: str) -> ManifestError:
    """msgspec's 'Expected `int` >= 1, got `0` - at `$.pass`' in our words, at the entry's path."""
    text, _, at = str(exc).partition(" - at `")
    key_error = at.startswith("key` in `")  # a map's key: "... - at `key` in `$.seat.settings`"
    path = at.removeprefix("key` in `").rstrip("`") or "$"
    where = base + path[1:]
    if key_error:  # msgspec does not say which key
        try:
            bad = next((k for k in native.value_at(raw, path) if not isinstance(k, str)), "?")
        except (KeyError, IndexError, TypeError):
            bad = "?"
        return ManifestError(where, f"expected string keys, got the key {_shown(bad)}")
    struct, what = _STRUCTS.get(re.sub(r"\[\d+\]$", "", path).rsplit(".", 1)[-1], (None, ""))
    m = re.fullmatch(r"Object contains unknown field `(.+)`", text)
    if m:
        noun = "" if what == "entry" else f"{what} "
        return ManifestError(f"{where}.{m[1]}", f"unknown {noun}field (known: {', '.join(field_names(struct))})")
    m = re.fullmatch(r"Object missing required field `(.+)`", text)
    if m:
        hint = " (glob patterns relative to the manifest)" if m[1] == "files" else ""
        return ManifestError(where, f"missing required field {m[1]}{hint}")
    try:
        found = native.value_at(raw, path)
    except (KeyError, IndexError, TypeError):  # the value is a courtesy; path and expectation are the message
        found = None
    return ManifestError(where, _expected(text, found, path.rsplit(".", 1)[-1], struct, what))


def _expected(text: str, found: Any, key: str, struct, what: str) -> str:
    """msgspec's expectation in words ("Expected `int` >= 1" -> "expected an integer >= 1"),
    then what was found."""
    got = _shown(found)
    if text.startswith("Expected `str` matching regex"):
        if ID_RE.pattern not in text:
            return "expected printable text, found control characters"
        text = "Expected `id`"
    elif text.startswith("Invalid enum value"):
        return f"expected one of {', '.join(ROLES)}, got {got}"
    elif re.match(r"Expected `str`(,|$)", text) and key in _IDS:
        text = "Expected `id`"
    elif text.startswith("Expected `object`") and struct is not None:
        return f"expected a map of {what} fields ({', '.join(field_names(struct))}), got {got}"
    if " of length " in text and isinstance(found, (str, list)):
        got = f"{len(found)} {'characters' if isinstance(found, str) else 'items'}"
    text = re.sub(r", got `[^`]*`$", "", text)
    text = re.sub(
        r"`([a-z |]+)`", lambda m: " or ".join(_WORDS.get(t, t) for t in m[1].split(" | ") if t != "null"), text
    )
    return f"e{text[1:]}, got {got}"


def _typed(value: Any, kind, path: str):
    """`value` converted to `kind` (a Struct or an Annotated type); raises ManifestError at `path`."""
    try:
        return msgspec.convert(value, kind)
    except msgspec.ValidationError as exc:
        raise _refusal(exc, value, path) from None


def _settings(value: Any, path: str, budget: list[int], depth: int = 0) -> Any:
    """A settings value: JSON scalars, lists and string-keyed maps, bounded in size and depth
    (walked here, not by msgspec: YAML aliases can make a small file a huge tree)."""
    budget[0] -= 1
    if budget[0] < 0:
        raise ManifestError(path, f"expected at most {MAX_SETTINGS_NODES} values in settings")
    if depth > MAX_SETTINGS_DEPTH:
        raise ManifestError(path, f"expected settings nested at most {MAX_SETTINGS_DEPTH} levels")
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ManifestError(path, "expected a finite number")
        return value
    if isinstance(value, str):
        return _typed(value, Notes, path)
    if isinstance(value, list):
        return [_settings(v, f"{path}[{i}]", budget, depth + 1) for i, v in enumerate(value)]
    if isinstance(value, dict):
        _once(value, path)
        out = {}
        for k, v in value.items():
            key = _typed(k, Text, f"{path} (a key)")
            out[key] = _settings(v, f"{path}.{key}", budget, depth + 1)
        return out
    raise ManifestError(path, f"expected a JSON value, got {type(value).__name__}")


def _no_duplicates(raw: Any, path: str) -> None:
    """A key given twice in the entry, its seat, placement or components (settings: `_settings`)."""
    _once(raw, path)
    seat = raw.get("seat") if isinstance(raw, dict) else None
    if isinstance(seat, dict):
        _once(seat, f"{path}.seat")
        _once(seat.get("placement"), f"{path}.seat.placement")
        components = seat.get("components")
        for i, c in enumerate(components if isinstance(components, list) else ()):
            _once(c, f"{path}.seat.components[{i}]")


def glob_regex(pattern: str) -> re.Pattern:
    """A regex for a glob over POSIX relative paths: `*` and `?` stay within one folder, `**`
    crosses folders, `[...]` is a character class; a pattern naming a folder matches all under it."""
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:[^/]+/)*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            j = pattern.find("]", i + 1)
            body = pattern[i + 1 : j] if j > i + 1 else None
            if body is None or "/" in body:
                out.append(re.escape(c))
                i += 1
            else:
                neg = body.startswith("!")
                body = body[1:] if neg else body
                out.append("[" + ("^" if neg else "") + re.escape(body).replace("\\-", "-") + "]")
                i = j + 1
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("^" + "".join(out) + "(?:/.*)?$")


def _patterns(value: str | list[str], path: str) -> list[re.Pattern]:
    """The entry's `files` (already checked as EntryFields.files) as compiled globs."""
    out = []
    for i, p in enumerate(value if isinstance(value, list) else [value]):
        here = f"{path}[{i}]" if isinstance(value, list) else path
        text = p.replace("\\", "/")
        parts = PurePosixPath(text).parts
        if text.startswith("/") or re.match(r"^[A-Za-z]:", text) or ".." in parts:
            raise ManifestError(
                here,
                f'expected a pattern relative to the manifest\'s folder (no "/" '
                f'start, drive or ".."), got "{text[:80]}"',
            )
        out.append(glob_regex(text.removeprefix("./")))
    return out


def _entry(raw: Any, path: str, display: str) -> Entry:
    _no_duplicates(raw, path)
    spec = _typed(raw, EntryFields, path)
    settings = UNSET
    if spec.seat is not UNSET and spec.seat.settings is not UNSET:
        # walked from the parsed map (which remembers keys given twice), never by to_builtins,
        # which would walk it unbounded
        settings, spec.seat.settings = raw["seat"]["settings"], UNSET
    fields = msgspec.to_builtins(spec)
    files = fields.pop("files")
    if "date" in fields and not native.is_iso_date(fields["date"]):
        raise ManifestError(f"{path}.date", f'expected {native.DATE_FORMS}, got "{fields["date"]}"')
    if settings is not UNSET:
        fields["seat"]["settings"] = _settings(settings, f"{path}.seat.settings", [MAX_SETTINGS_NODES])
    return Entry(_patterns(files, f"{path}.files"), fields, f"{display} {path}")


def _decode(source) -> Any:
    data = source.doc if isinstance(source.doc, (bytes, bytearray)) else bytes(str(source.doc), "utf-8")
    if len(data) > MAX_MANIFEST_BYTES:
        raise ManifestError(
            "$", f"expected a manifest of at most {MAX_MANIFEST_BYTES // 1000} kB, found {len(data) / 1000:.0f} kB"
        )
    if source.path.suffix.lower() == ".json":
        try:
            return json.loads(data.decode("utf-8"), object_pairs_hook=_Map.from_pairs)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ManifestError("$", f"expected a JSON manifest, found an error: {exc}") from None
        except RecursionError:
            raise ManifestError("$", "expected a JSON manifest nested a few levels, found deeper nesting") from None
    import yaml

    try:
        return yaml.load(data, Loader=_loader())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ManifestError("$", f"expected a YAML manifest, found an error{where}: {problem}") from None
    except RecursionError:
        raise ManifestError("$", "expected a YAML manifest nested a few levels, found deeper nesting") from None


class _Map(dict):
    """A map as parsed, remembering keys it held more than once (JSON and YAML keep the last
    silently; a manifest entry that says two things is refused instead)."""

    duplicates: tuple = ()

    @classmethod
    def from_pairs(cls, pairs, where=None) -> "_Map":
        out = cls(pairs)
        if len(out) != len(pairs):
            seen, dupes = set(), []
            for key, _ in pairs:
                if key in seen and key not in dupes:
                    dupes.append(key)
                seen.add(key)
            out.duplicates = tuple((k, where) for k in dupes)
        return out


def _once(value: Any, path: str) -> None:
    """Refuse a map that held a key twice, naming the key (and its line in YAML)."""
    for key, line in getattr(value, "duplicates", ()):
        at = f" (line {line})" if line else ""
        raise ManifestError(f"{path}.{key}", f"expected each field once, got it more than once{at}")


_LOADER = None


def _loader():
    """PyYAML's SafeLoader with two changes: dates stay text (checked by `_date`, so a bad one
    names its entry instead of failing the whole manifest), and aliases are counted."""
    global _LOADER
    if _LOADER is None:
        import yaml

        class Loader(yaml.SafeLoader):
            aliases = 0

            def compose_node(self, parent, index):
                if self.check_event(yaml.AliasEvent):
                    self.aliases += 1
                    if self.aliases > MAX_YAML_ALIASES:
                        mark = self.peek_event().start_mark
                        raise ManifestError(
                            "$",
                            f"expected at most {MAX_YAML_ALIASES} YAML aliases (*name), "
                            f"found more (line {mark.line + 1})",
                        )
                return super().compose_node(parent, index)

            def construct_mapping(self, node, deep=False):
                lines: dict = {}
                for key_node, _ in node.value:
                    if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                        lines.setdefault(key_node.value, []).append(key_node.start_mark.line + 1)
                out = _Map(super().construct_mapping(node, deep=deep))
                out.duplicates = tuple((k, ls[1]) for k, ls in lines.items() if len(ls) > 1)
                return out

            def construct_yaml_map(self, node):
                data = _Map()
                yield data
                value = self.construct_mapping(node)
                data.update(value)
                data.duplicates = value.duplicates

        Loader.add_constructor("tag:yaml.org,2002:map", Loader.construct_yaml_map)

        Loader.yaml_implicit_resolvers = {
            first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
            for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
        }
        _LOADER = Loader
    return _LOADER


def parse(source) -> tuple[Manifest, list[Refusal]]:
    """Parse and validate one manifest file; bad entries are refused, good ones kept."""
    manifest, refused = _parse(source)
    for r in refused:  # the manifest as a whole is unusable: every file below it is in doubt
        if r.json_path in ("$", "$.version", "$.runs"):
            manifest.broken.append((None, f"{r.path} could not be read ({r.json_path}: {r.message})"))
    return manifest, refused


def _parse(source) -> tuple[Manifest, list[Refusal]]:
    folder = source.path.parent
    manifest = Manifest(folder, source.display)
    refused: list[Refusal] = []
    try:
        doc = _decode(source)
    except ManifestError as exc:
        return manifest, [Refusal(source.display, exc.json_path, exc.message)]
    if isinstance(doc, list):
        entries, base = doc, "$"
    elif isinstance(doc, dict):
        try:
            _once(doc, "$")
        except ManifestError as exc:
            return manifest, [Refusal(source.display, exc.json_path, exc.message)]
        unknown = [k for k in doc if k not in ("runs", "version")]
        if unknown:
            refused.append(Refusal(source.display, f"$.{unknown[0]}", "unknown field (known: runs, version)"))
        if "version" in doc and doc["version"] != 1:
            return manifest, refused + [
                Refusal(
                    source.display, "$.version", f"expected 1 (the only manifest version), got {doc['version']!r}"[:120]
                )
            ]
        entries, base = doc.get("runs"), "$.runs"
        if not isinstance(entries, list):
            return manifest, refused + [Refusal(source.display, base, "expected a list of entries under runs")]
    elif doc is None:
        return manifest, [Refusal(source.display, "$", "expected manifest entries, found an empty file")]
    else:
        return manifest, [Refusal(source.display, "$", f"expected a map with runs, got {type(doc).__name__}")]
    if len(entries) > MAX_ENTRIES:
        return manifest, refused + [
            Refusal(source.display, base, f"expected at most {MAX_ENTRIES} entries, got {len(entries)}")
        ]
    n_patterns = 0
    for i, raw in enumerate(entries):
        try:
            entry = _entry(raw, f"{base}[{i}]", source.display)
            n_patterns += len(entry.patterns)
            if n_patterns > MAX_MANIFEST_PATTERNS:
                raise ManifestError(
                    f"{base}[{i}].files",
                    f"expected at most {MAX_MANIFEST_PATTERNS} glob patterns in the whole manifest, got more",
                )
            manifest.entries.append(entry)
        except ManifestError as exc:
            refusal = Refusal(source.display, exc.json_path, exc.message + " (entry ignored)")
            refused.append(refusal)
            meant_for = _patterns_or_none(raw)
            if meant_for:
                manifest.broken.append(
                    (meant_for, f"{source.display} {base}[{i}] was refused ({exc.json_path}: {exc.message})")
                )
    return manifest, refused


def _patterns_or_none(raw: Any) -> list[re.Pattern] | None:
    """The patterns of a refused entry when they are readable (None: they may match anything)."""
    try:
        return _patterns(_typed(raw["files"], Files, "$"), "$") if isinstance(raw, dict) and "files" in raw else None
    except ManifestError:
        return None


class Index:
    """All manifests of one load, ready to answer 'what do they say about this file'."""

    def __init__(self, manifests: list[Manifest]):
        # shallow folders first so deeper manifests override them
        self.manifests = sorted(manifests, key=lambda m: (len(m.folder.parts), m.display))

    def lookup(self, path: Path) -> Applied:
        applied = Applied()
        for m in self.manifests:
            try:
                rel = path.relative_to(m.folder).as_posix()
            except ValueError:
                try:
                    rel = path.resolve().relative_to(m.folder.resolve()).as_posix()
                except (ValueError, OSError):
                    continue
            for patterns, why in m.broken:
                if patterns is None or any(p.match(rel) for p in patterns):
                    applied.problems.append(why)
            seat_from: dict[str, tuple[Any, str]] = {}
            for entry in m.entries:
                if any(p.match(rel) for p in entry.patterns):
                    for key, value in entry.fields.items():
                        if key == "seat":
                            for k in ("id", "model"):  # one manifest, one seat per file
                                if k in value:
                                    prior = seat_from.setdefault(k, (value[k], entry.where))
                                    if prior[0] != value[k]:
                                        applied.problems.append(
                                            f"{prior[1]} gives it seat {k} '{prior[0]}' and {entry.where} "
                                            f"gives it '{value[k]}'"
                                        )
                            applied.seat.update(value)
                        else:
                            applied.fields[key] = value
                    applied.sources.append(entry.where)
        return applied


_LAST: dict[str, Any] = {"manifests": None, "index": None, "reported": False}


def index_for(manifests: list) -> tuple[Index, list[Refusal]]:
    """The Index for the loader's manifest list; refusals are returned only to the first caller
    of one load (every importer gets the same list object, and a bad manifest is one refusal)."""
    if _LAST["manifests"] is manifests and _LAST["index"] is not None:
        return _LAST["index"], []
    parsed, refused = [], []
    by_folder: dict[Path, list] = {}
    for source in manifests or ():
        by_folder.setdefault(source.path.parent, []).append(source)
    for folder, sources in by_folder.items():
        if len(sources) > 1:  # which one applies would be a guess
            names = " and ".join(sorted(s.path.name for s in sources))
            why = f"expected one manifest in a folder, found {names}: neither applied"
            for source in sources:
                refused.append(Refusal(source.display, "$", why))
            parsed.append(
                Manifest(folder, sources[0].display, broken=[(None, f"{one_line(str(folder))} holds {names}")])
            )
            continue
        m, r = parse(sources[0])
        parsed.append(m)
        refused.extend(r)
    index = Index(parsed)
    _LAST.update(manifests=manifests, index=index)
    return index, refused
