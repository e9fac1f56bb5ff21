"""`benchreport build ... --site DIR`: keep every dated report and an index of them, newest first.

    SITE/
      .benchreport-site           marks the folder as a site benchreport keeps (refused otherwise)
      index.html                  one row per report: date, title, headline, flag counts, links
      2026-11-30/                 the report of the data's newest date (an output folder of its
        report.html, report.pdf   own: replaced whole by a later build of the same date, never
        flags.json, tables/, ...  half-written), and `site-entry.json` with what the index shows

Like `asv publish`: one folder a web server can serve as it is. Links are relative
(``2026-11-30/report.html``), the page is self-contained (no script, no remote resource) and
every string from the data (title, headline, seat ids in it) is escaped by Jinja2's autoescape.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import uuid
from pathlib import Path
from typing import Iterable

import jinja2

from benchreport import outdir
from benchreport.load.errors import one_line

__all__ = [
    "SITE_MARKER",
    "ENTRY_FILE",
    "check_site",
    "open_site",
    "add_report",
    "entries",
    "index_html",
    "write_index",
    "headline_text",
]

SITE_MARKER = ".benchreport-site"
ENTRY_FILE = "site-entry.json"
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
#: files of a report folder copied into the site (the build's own marker is written afresh)
_SKIP = {outdir.MARKER, "report.ipynb"}

_PAGE = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined).from_string("""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ title }}</title>
<style>
body { font-family: "DejaVu Serif", Georgia, serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem;
       color: #222; line-height: 1.45; }
h1 { font-size: 1.5rem; margin-bottom: .2rem; }
p.lead { color: #555; margin-top: 0; }
table { border-collapse: collapse; width: 100%; font-size: .92rem; }
th, td { text-align: left; vertical-align: top; padding: .35rem .5rem; border-bottom: 1px solid #ddd; }
th { border-bottom: 2px solid #333; }
td.n { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
td.date { white-space: nowrap; }
.critical { color: #a00; font-weight: bold; }
</style>
</head>
<body>
<h1>{{ title }}</h1>
<p class="lead">{{ entries|length }} report{{ "" if entries|length == 1 else "s" }}, newest first. Each is the
report of the runs up to its date; the flags are those of that report (critical: a number that must not be
quoted as it stands).</p>
<table>
<thead><tr><th>Date</th><th>Report</th><th>Headline</th><th>Critical</th><th>Warn</th><th>Info</th></tr></thead>
<tbody>
{% for e in entries %}<tr>
<td class="date">{{ e.date }}</td>
<td>{% for f in e.formats %}<a href="{{ e.href[f] }}">{{ f|upper }}</a>{{ ", " if not loop.last }}{% endfor %}<br>{{ e.title }}</td>
<td>{{ e.headline }}</td>
<td class="n{{ ' critical' if e.flags.critical }}">{{ e.flags.critical }}</td>
<td class="n">{{ e.flags.warn }}</td>
<td class="n">{{ e.flags.info }}</td>
</tr>
{% endfor %}</tbody>
</table>
</body>
</html>
""")


def check_site(site: str | os.PathLike) -> Path:
    """The site folder, if benchreport may fill it: missing, empty, or marked as a site (else
    OutputFolderError, exit 2: a folder of someone else's is not ours to fill). Changes nothing."""
    path = Path(site).expanduser().absolute()
    shown = one_line(str(site))
    if path.exists() and not path.is_dir():
        raise outdir.OutputFolderError(f"--site {shown} exists and is not a folder; choose another --site")
    if path.is_dir() and not (path / SITE_MARKER).is_file():
        if any(path.iterdir()):
            raise outdir.OutputFolderError(
                f"--site {shown} is not empty and was not made by benchreport (no "
                f"{SITE_MARKER}); choose an empty or new folder"
            )
    return path


def open_site(site: str | os.PathLike) -> Path:
    """The site folder (`check_site`), made and marked when it is missing or empty."""
    path = check_site(site)
    path.mkdir(parents=True, exist_ok=True)
    marker = path / SITE_MARKER
    if not marker.is_file():
        marker.write_text(json.dumps({"format": "benchreport.site/1"}) + "\n", encoding="utf-8")
    return path


def headline_text(analysis) -> str:
    """The report's headline sentence as plain text (sections.headline_sentence)."""
    from benchreport.report.model.sections import headline_sentence
    from benchreport.report.model.sections.blocks import Ident, Paragraph

    out = []
    for block in headline_sentence(analysis).blocks:
        if isinstance(block, Paragraph):
            text = "".join(p.text if isinstance(p, Ident) else str(p) for p in block.parts).strip()
            out.append(text[:1].upper() + text[1:])
    return " ".join(out)


def _flag_counts(flags: list[dict]) -> dict:
    return {s: sum(1 for f in flags if f.get("severity") == s) for s in ("critical", "warn", "info")}


def add_report(site: Path, out: Path, *, date: str, title: str, headline: str, inputs: Iterable[str]) -> Path:
    """Copy the report in `out` into SITE/DATE/ (replacing an earlier report of that date whole),
    with its entry for the index; returns the entry folder."""
    if not _DATE.match(str(date)):
        raise ValueError(f"`date` must be YYYY-MM-DD, got {date!r}")
    flags = json.loads((out / "flags.json").read_text(encoding="utf-8"))
    formats = [f for f in ("html", "pdf") if (out / f"report.{f}").is_file()]
    entry = {"date": date, "title": title, "headline": headline, "flags": _flag_counts(flags), "formats": formats}
    target = outdir.check_out(site / date, inputs, option="--site")

    def write(stage: Path) -> None:
        for item in sorted(out.iterdir()):
            if item.name in _SKIP or item.name.startswith("."):
                continue
            if item.is_dir():
                shutil.copytree(item, stage / item.name)
            else:
                shutil.copy2(item, stage / item.name)
        (stage / ENTRY_FILE).write_text(json.dumps(entry, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

    outdir.write_output(target, "build --site", write)
    return target.path


def entries(site: Path, problems: list[str] | None = None) -> list[dict]:
    """Every report the site holds, newest first (folders named by date with an entry file).
    An entry file that is not what `add_report` writes is left out of the index, and said in
    `problems` (file, JSON path, what was expected); it never stops the index of the others."""
    out = []
    for d in sorted(site.iterdir()):
        f = d / ENTRY_FILE
        if not (d.is_dir() and _DATE.match(d.name) and f.is_file()):
            continue
        try:
            e = _entry(json.loads(f.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            where, what = (
                exc.args if isinstance(exc, _BadEntry) else ("$", f"expected JSON ({one_line(str(exc))[:120]})")
            )
            if problems is not None:
                problems.append(f"{f}: {where}: {what}; left out of the index")
            continue
        formats = e["formats"]
        out.append(
            {
                "date": d.name,
                "title": e["title"],
                "headline": e["headline"],
                "flags": e["flags"],
                "formats": formats,
                "href": {x: f"{d.name}/report.{x}" for x in formats},
            }
        )
    return sorted(out, key=lambda e: e["date"], reverse=True)


class _BadEntry(ValueError):
    """(JSON path, what was expected) of a site entry file that is not as written."""


def _entry(doc) -> dict:
    """A site entry checked field by field: title and headline text (at most 2,000 characters),
    flag counts whole numbers, formats a list of "html"/"pdf"."""
    if not isinstance(doc, dict):
        raise _BadEntry("$", f"expected an object, got {type(doc).__name__}")
    out = {}
    for key in ("title", "headline"):
        v = doc.get(key, "")
        if not isinstance(v, str) or len(v) > 2000:
            raise _BadEntry(f"$.{key}", "expected text of at most 2,000 characters")
        out[key] = v
    flags = doc.get("flags", {})
    if not isinstance(flags, dict):
        raise _BadEntry("$.flags", "expected an object of counts")
    out["flags"] = {}
    for sev in ("critical", "warn", "info"):
        n = flags.get(sev, 0)
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n < 10**9:
            raise _BadEntry(f"$.flags.{sev}", f"expected a count (a whole number >= 0), got {json.dumps(n)[:40]}")
        out["flags"][sev] = n
    formats = doc.get("formats", [])
    if not isinstance(formats, list) or any(x not in ("html", "pdf") for x in formats):
        raise _BadEntry("$.formats", 'expected a list of "html" and "pdf"')
    out["formats"] = [x for x in ("html", "pdf") if x in formats]
    return out


def index_html(items: list[dict], *, title: str = "Benchmark reports") -> str:
    """The index page (autoescaped)."""
    return _PAGE.render(entries=items, title=title)


def write_index(site: Path, *, title: str = "Benchmark reports") -> Path:
    """Write SITE/index.html from the entries (atomically: a reader never sees half a page)."""
    path = site / "index.html"
    tmp = site / f".index.{uuid.uuid4().hex}.tmp"
    problems: list[str] = []
    items = entries(site, problems)
    for p in problems:
        print(f"benchreport: {p}", file=sys.stderr)
    tmp.write_text(index_html(items, title=title), encoding="utf-8")
    os.replace(tmp, path)
    return path
