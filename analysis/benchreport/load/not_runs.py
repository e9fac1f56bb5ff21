"""Files that are not run files: tables given where a run was expected, and the rule for a file
no importer reads (skipped as not a run file, or refused when it claims to be one: docs/importers.md,
"Files that are not run files")."""

from __future__ import annotations

from pathlib import Path

from benchreport.load import harness
from benchreport.load.errors import Refusal, Skipped, not_a_run

__all__ = ["TABLE_SUFFIXES", "table_kind", "table_message", "Unknown"]

#: how much of a file is looked at to tell a table
TEXT_HEAD_BYTES = 4096

#: endings of tables, which are never run files whatever they hold
TABLE_SUFFIXES = {
    ".csv": "a CSV file",
    ".tsv": "a TSV file",
    ".parquet": "a Parquet file",
    ".xlsx": "an Excel workbook",
    ".xls": "an Excel workbook",
}
#: how many first lines of a file are looked at to tell a CSV (or TSV) table
TABLE_SNIFF_LINES = 6


def table_kind(data: bytes, path: Path) -> str | None:
    """'a CSV file' (TSV, Parquet, Excel) for a table given where a run file was expected, by its
    ending or its first bytes (Parquet's `PAR1`; lines of one same number of commas or tabs), or None."""
    if path.suffix.lower() in TABLE_SUFFIXES:
        return TABLE_SUFFIXES[path.suffix.lower()]
    if data[:4] == b"PAR1":
        return TABLE_SUFFIXES[".parquet"]
    head = data[:TEXT_HEAD_BYTES]
    if b"\x00" in head or head.lstrip()[:1] in (b"{", b"[", b""):
        return None
    lines = [line for line in head.decode("utf-8", errors="replace").splitlines() if line.strip()]
    if len(data) > TEXT_HEAD_BYTES:
        lines = lines[:-1]  # the last line read may be cut short
    lines = lines[:TABLE_SNIFF_LINES]
    for sep, kind in (("\t", "a TSV file"), (",", "a CSV file")):
        counts = [line.count(sep) for line in lines]
        if len(lines) >= 2 and counts[0] >= 1 and all(c == counts[0] for c in counts):
            return kind
    return None


def table_message(kind: str) -> str:
    """The reason given for a table where a run file was expected."""
    return (
        f"{kind}, not a run file: benchreport reads JSON run files (a native benchreport.run/1 file or a "
        "harness's JSON output, docs/importers.md), not tables; give the JSON the harness wrote"
    )


class Unknown:
    """Whether a file no importer reads is refused or skipped: refused with `strict`, when it was
    named in `paths`, or when it claims to be a run (`harness.claim`); skipped as not a run file
    otherwise."""

    def __init__(self, *, strict: bool, named: set[str]):
        self.strict = strict
        self.named = named

    def __call__(
        self, display: str, data: bytes, path: Path, refusal: Refusal, what: str, *, parsed: bool
    ) -> Refusal | Skipped:
        table = None if parsed else table_kind(data, path)
        if table is not None:
            refusal, what = Refusal(display, "$", table_message(table)), table
        if self.strict or display in self.named:
            return refusal
        claimed = harness.claim(data, path, parsed=parsed)
        if claimed is not None:
            if claimed.startswith("it names the native format"):
                return refusal  # a native file: its own message says enough
            return Refusal(display, refusal.json_path, f"{refusal.message}; refused, not skipped: {claimed}")
        if not parsed and not data.strip():
            return refusal  # an empty file: most often a result not yet (or never) written
        return Skipped(display, not_a_run(what))
