"""`benchreport example DIR` (issue 45): the example runs shipped with the package, written into a
new folder, byte for byte the repository's data/example/, and a report builds from them; a folder
that is not new and empty, a file or a symbolic link is refused with nothing written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "data" / "example"


def cli(*argv, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "benchreport", *map(str, argv)], capture_output=True, text=True, timeout=900, cwd=cwd
    )


def _files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file() and p.suffix in (".json", ".md")
    }


def test_example_then_build(tmp_path):
    proc = cli("example", "runs", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    runs = tmp_path / "runs"
    assert _files(runs) == _files(EXAMPLE) and len(_files(runs)) >= 10
    assert "benchreport build runs --out runs-report" in proc.stderr
    built = cli("build", "runs", "--out", "runs-report", "--format", "html", "--quiet", cwd=tmp_path)
    assert built.returncode == 0, built.stderr[-3000:]
    page = (tmp_path / "runs-report" / "report.html").read_text(encoding="utf-8")
    assert "qwen3.8-flash-next-tp2" in page  # the example's baseline seat, read from the written runs


def test_example_refuses_what_is_not_a_new_folder(tmp_path):
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "mine.json").write_text("{}", encoding="utf-8")
    proc = cli("example", busy)
    assert (
        proc.returncode == 2 and "not empty" in proc.stderr and sorted(p.name for p in busy.iterdir()) == ["mine.json"]
    )
    afile = tmp_path / "a-file"
    afile.write_text("x", encoding="utf-8")
    proc = cli("example", afile)
    assert proc.returncode == 2 and "a file, not a folder" in proc.stderr and afile.read_text(encoding="utf-8") == "x"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "link").symlink_to(elsewhere)
    proc = cli("example", tmp_path / "link")
    assert proc.returncode == 2 and "symbolic link" in proc.stderr and not any(elsewhere.iterdir())
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli("example", empty).returncode == 0 and _files(empty) == _files(EXAMPLE)
