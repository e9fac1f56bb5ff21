"""`--site DIR`: every dated report kept, an index newest first with relative links, strings escaped."""

from __future__ import annotations

import html.parser
import json
from pathlib import Path

import pytest

from benchreport import site

ROOT = Path(__file__).resolve().parents[1]


def _report(folder: Path, *, flags: list[dict], formats=("html",)) -> Path:
    folder.mkdir(parents=True)
    (folder / "flags.json").write_text(json.dumps(flags), encoding="utf-8")
    for f in formats:
        (folder / f"report.{f}").write_text("report", encoding="utf-8")
    (folder / "tables").mkdir()
    (folder / "tables" / "cells.csv").write_text("seat\n", encoding="utf-8")
    return folder


class _Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.rows, self.text = [], 0, []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.links.append(dict(attrs)["href"])
        if tag == "tr":
            self.rows += 1

    def handle_data(self, data):
        self.text.append(data)


def test_reports_are_kept_by_date_and_listed_newest_first(tmp_path):
    root = site.open_site(tmp_path / "site")
    flags = [{"severity": "critical"}, {"severity": "warn"}, {"severity": "warn"}, {"severity": "info"}]
    for date, title in (
        ("2026-11-29", "Nightly"),
        ("2026-11-30", "Nightly <script>alert(1)</script>"),
        ("2026-11-28", "Nightly & co"),
    ):
        out = _report(tmp_path / f"out-{date}", flags=flags[: 1 + int(date[-1]) % 4], formats=("html", "pdf"))
        site.add_report(root, out, date=date, title=title, headline=f"Headline of {date}: <b>x</b>", inputs=[])
    page = site.write_index(root).read_text(encoding="utf-8")
    p = _Links()
    p.feed(page)
    assert p.links == [
        "2026-11-30/report.html",
        "2026-11-30/report.pdf",
        "2026-11-29/report.html",
        "2026-11-29/report.pdf",
        "2026-11-28/report.html",
        "2026-11-28/report.pdf",
    ]
    assert all((root / link).is_file() for link in p.links)  # relative to the index, and there
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<b>x</b>" not in page
    assert "Nightly &amp; co" in page and p.rows == 4
    assert "script" not in page.replace("&lt;script&gt;", "").replace("&lt;/script&gt;", "")
    text = " ".join("".join(p.text).split())
    assert "3 reports, newest first" in text
    # a later build of the same date replaces that date's report whole
    out = _report(tmp_path / "again", flags=[])
    site.add_report(root, out, date="2026-11-30", title="Rebuilt", headline="h", inputs=[])
    site.write_index(root)
    assert [e["date"] for e in site.entries(root)] == ["2026-11-30", "2026-11-29", "2026-11-28"]
    assert site.entries(root)[0]["title"] == "Rebuilt" and site.entries(root)[0]["formats"] == ["html"]
    assert not (root / "2026-11-30" / "report.pdf").exists()


def test_a_folder_that_is_not_a_site_is_refused(tmp_path):
    from benchreport.outdir import OutputFolderError

    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    with pytest.raises(OutputFolderError, match="not empty and was not made by benchreport"):
        site.open_site(tmp_path / "mine")
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        site.add_report(
            site.open_site(tmp_path / "s"),
            _report(tmp_path / "o", flags=[]),
            date="../x",
            title="t",
            headline="h",
            inputs=[],
        )


def test_build_with_site_keeps_the_report_and_refuses_a_foreign_site(cli, tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    res = cli(
        "build",
        ROOT / "data" / "example",
        "--out",
        tmp_path / "out",
        "--format",
        "html",
        "--site",
        tmp_path / "mine",
        "--quiet",
    )
    assert res.returncode == 2 and "--site" in res.stderr and "not made by benchreport" in res.stderr
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == ["notes.txt"]
    assert not (tmp_path / "out").exists()  # refused before anything was built
    res = cli(
        "build",
        ROOT / "data" / "example",
        "--out",
        tmp_path / "out",
        "--format",
        "html",
        "--site",
        tmp_path / "site",
        "--quiet",
    )
    assert res.returncode == 0, res.stderr
    (entry,) = site.entries(tmp_path / "site")
    assert entry["date"] == "2026-10-28" and entry["href"] == {"html": "2026-10-28/report.html"}
    flags = json.loads((tmp_path / "out" / "flags.json").read_text())
    assert entry["flags"]["critical"] == sum(f["severity"] == "critical" for f in flags)
    assert entry["headline"].startswith("Headline: on per-stream decode")
    assert (tmp_path / "site" / "2026-10-28" / "report.html").read_bytes() == (
        tmp_path / "out" / "report.html"
    ).read_bytes()


@pytest.mark.parametrize(
    "damage, where",
    [
        ("[1, 2]", "$: expected an object, got list"),
        ('{"title": "t", "flags": {"warn": "many"}}', "$.flags.warn: expected a count"),
        ('{"title": "t", "formats": "html"}', '$.formats: expected a list of "html" and "pdf"'),
        ('{"title": "t", "formats": ["../../etc/passwd"]}', '$.formats: expected a list of "html" and "pdf"'),
        ('{"title": 7}', "$.title: expected text"),
        ('{"title": "t", "flags": {"warn": true}}', "$.flags.warn: expected a count"),
        ('{"title": ', "$: expected JSON"),
    ],
)
def test_a_damaged_site_entry_is_left_out_and_named_never_a_traceback(tmp_path, capsys, damage, where):
    root = site.open_site(tmp_path / "site")
    for date in ("2026-11-29", "2026-11-30"):
        site.add_report(
            root, _report(tmp_path / f"out-{date}", flags=[]), date=date, title=f"Night {date}", headline="h", inputs=[]
        )
    bad = root / "2026-11-30" / site.ENTRY_FILE
    bad.write_text(damage, encoding="utf-8")
    page = site.write_index(root).read_text(encoding="utf-8")
    err = capsys.readouterr().err
    assert f"{bad}: {where}" in err and "left out of the index" in err
    assert "Night 2026-11-29" in page and "Night 2026-11-30" not in page
    assert [e["date"] for e in site.entries(root)] == ["2026-11-29"]
