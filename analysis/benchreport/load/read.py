"""Reading a file's bytes: regular files only, never more than a size limit."""

from __future__ import annotations

import codecs
import gzip
import io
import os
import stat
import zlib
from pathlib import Path

__all__ = ["DEFAULT_MAX_FILE_BYTES", "Unread", "read_limited", "not_opened", "file_kind", "as_utf8"]

#: files bigger than this are refused with a size message instead of exhausting memory
DEFAULT_MAX_FILE_BYTES = 512 * 1024 * 1024


class Unread(Exception):
    """A file not read: the reason is the refusal's message."""


def file_kind(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    for test, name in (
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a folder"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def not_opened(mode: int) -> str:
    """The refusal's message for a path that is not a regular file."""
    return f"expected a regular file, found {file_kind(mode)}: not opened"


def read_limited(path: Path, max_file_bytes: int, head: int | None = None) -> bytes:
    """The bytes of a regular file of at most `max_file_bytes` (raises Unread with the reason);
    with `head`, only its first `head` bytes, whatever its size.

    Opened without blocking and checked after opening, so a FIFO put in a file's place
    between discovery and reading is refused, never waited on.
    """
    fd = os.open(
        path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    )
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise Unread(not_opened(st.st_mode))
        if head is not None:
            return f.read(head)
        if st.st_size > max_file_bytes:
            raise Unread(_too_big(max_file_bytes, st.st_size))
        data = f.read(st.st_size + 1)
        if len(data) > st.st_size:  # grew since: read on, up to the limit
            data += f.read(max_file_bytes + 1 - len(data))
    if len(data) > max_file_bytes:
        raise Unread(_too_big(max_file_bytes, len(data)))
    return data


def _too_big(limit: int, size: int) -> str:
    return f"expected a file of at most {limit / 1e6:.0f} MB (--max-file-mb), found {size / 1e6:.1f} MB"


#: byte-order marks of the encodings a result file may be saved in (PowerShell's `>` writes UTF-16)
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def as_utf8(data: bytes, max_file_bytes: int) -> bytes:
    """A file's bytes as UTF-8 JSON text: a gzip
    file is decompressed (never past `max_file_bytes`: raises Unread), a UTF-16 or UTF-32 file
    (told by its byte-order mark, or by the zero bytes of an ASCII '{' or '[') and a UTF-8 byte-order
    mark are decoded. Bytes that do not decode raise Unread with the reason."""
    if data[:2] == b"\x1f\x8b":
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as z:
                out = z.read(max_file_bytes + 1)
        except (OSError, EOFError, zlib.error) as exc:
            raise Unread(f"expected a readable gzip file, found a damaged one ({exc})") from None
        if len(out) > max_file_bytes:
            raise Unread(_too_big(max_file_bytes, len(out)) + " once decompressed")
        data = out
    encoding = next((enc for bom, enc in _BOMS if data.startswith(bom)), None)
    if encoding is None and len(data) >= 4 and data[0:1] in (b"{", b"[") and data[1:2] == b"\x00":
        encoding = "utf-32-le" if data[1:4] == b"\x00\x00\x00" else "utf-16-le"
    elif encoding is None and len(data) >= 4 and data[0:1] == b"\x00" and data[1:2] in (b"{", b"["):
        encoding = "utf-16-be"
    if encoding is not None:
        bom = next((b for b, enc in _BOMS if enc == encoding and data.startswith(b)), b"")
        try:
            data = data[len(bom) :].decode(encoding).encode("utf-8")
        except UnicodeError as exc:
            raise Unread(
                f"expected {encoding.upper()} text (its byte-order mark says so), found bytes that "
                f"do not decode ({exc.reason} at byte {exc.start})"
            ) from None
    return data
