"""Result files saved gzip-compressed, or as UTF-16/UTF-32 (PowerShell's `>`), or with a UTF-8
byte-order mark are read as the same run; a decompression past the size limit, or bytes that do
not decode, are refused with the reason (issue 40)."""

from __future__ import annotations

import codecs
import gzip
import subprocess
import sys
from pathlib import Path

import pytest

from benchreport.load import load

LLMPERF = Path(__file__).resolve().parent / "fixtures" / "harness" / "llmperf" / "reasoning-c2"


def _summary() -> bytes:
    return next(LLMPERF.glob("*_summary.json")).read_bytes()


@pytest.mark.parametrize(
    "name, encode",
    [
        ("x_summary.json.gz", gzip.compress),
        ("x_summary.json", lambda b: codecs.BOM_UTF16_LE + b.decode().encode("utf-16-le")),
        ("x_summary.json", lambda b: codecs.BOM_UTF16_BE + b.decode().encode("utf-16-be")),
        ("x_summary.json", lambda b: b.decode().encode("utf-16-le")),  # no byte-order mark
        ("x_summary.json", lambda b: codecs.BOM_UTF8 + b),
        ("x_summary.json", lambda b: codecs.BOM_UTF32_LE + b.decode().encode("utf-32-le")),
    ],
)
def test_the_same_run_whatever_the_encoding(tmp_path, name, encode):
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "x_summary.json").write_bytes(_summary())
    other = tmp_path / "other"
    other.mkdir()
    (other / name).write_bytes(encode(_summary()))
    (a,), (b,) = load([str(plain)]).runs, load([str(other)]).runs
    assert a.run.measurements == b.run.measurements and a.run.seat == b.run.seat


def test_a_gzip_bomb_is_refused_by_the_size_limit(tmp_path):
    (tmp_path / "big.json.gz").write_bytes(gzip.compress(b"[" + b"0," * 1_500_000 + b"0]"))
    proc = subprocess.run(
        [sys.executable, "-m", "benchreport", "validate", str(tmp_path), "--max-file-mb", "1", "--quiet"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    assert "once decompressed" in proc.stdout + proc.stderr


def test_bytes_that_do_not_decode_are_refused_naming_the_encoding(tmp_path):
    (tmp_path / "x_summary.json").write_bytes(codecs.BOM_UTF16_LE + b"{\x00\x00\xd8")  # a lone surrogate
    result = load([str(tmp_path)])
    assert result.refused and "UTF-16-LE" in str(result.refused[0])
