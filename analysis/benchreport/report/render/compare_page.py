"""The short "before vs after" page of `benchreport compare`: the verdicts, then one table per pair.

Built from the report's own blocks (sections.blocks, rendered by analysis.report.render with
autoescape) inside the report's stylesheet, so it reads like the report and is as safe: every
seat id and selection is text, the page loads nothing (same Content-Security-Policy).
"""

from __future__ import annotations

import html

import pandas as pd
from markupsafe import Markup

from benchreport import format as fmt
from benchreport.before_after import verdict_words
from benchreport.report.model.sections.headline import band_words
from benchreport.thresholds import DEFAULT
from benchreport.report.render import html as render
from benchreport.report.model.sections.blocks import Table, ident, para, prose

__all__ = ["compare_html"]

_HEAD = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'">
<meta name="generator" content="benchreport">
<title>{title}</title>
<style>{css}</style>
</head>
<body class="benchreport">
<main class="paper">
"""


def _table(rows: pd.DataFrame, before: str, after: str, level: str) -> Table:
    d = pd.DataFrame(
        {
            "Cell": [
                fmt.cell_phrase(w, c, m, s)
                for w, c, m, s in zip(rows["workload"], rows["concurrency"], rows["metric"], rows["statistic"])
            ],
            "Before": [fmt.value_with_unit(v, m) for v, m in zip(rows["baseline_estimate"], rows["metric"])],
            "After": [fmt.value_with_unit(v, m) for v, m in zip(rows["candidate_estimate"], rows["metric"])],
            "Ratio": [fmt.ratio3(r) for r in rows["ratio"]],
            f"{level} CI": [
                f"{fmt.ratio3(lo)}–{fmt.ratio3(hi)}" if fmt.finite(lo) else "–"
                for lo, hi in zip(rows["ci_low"], rows["ci_high"])
            ],
            "Verdict": [verdict_words(r).replace("_", " ") for _, r in rows.iterrows()],
        }
    )
    return Table(
        d.reset_index(drop=True),
        f"{after} (after) against {before} (before): the ratio after/before of "
        "the geometric means of the pass values, its CI and the verdict (direction aware).",
        numeric=("Before", "After", "Ratio", f"{level} CI"),
        small=True,
    )


def compare_html(result, *, a_text: str, b_text: str, title: str = "Before vs after") -> str:
    """The page for a `benchreport.before_after.CompareResult` (A and B as the user named them)."""
    c = result.counts()
    level = fmt.level(result.analyses[0].options.thresholds.alpha) if result.analyses else "95%"
    th = result.analyses[0].options.thresholds if result.analyses else DEFAULT
    parts = [
        render.prose_html(
            prose(
                para(
                    "Before: {}. After: {}. Each seat of the second data set is compared with the same seat of the first "
                    "(or the one seat of each), on every cell both measured, exactly as comparisons.csv compares a "
                    "candidate with its baseline: {} ratios of geometric means with a {} CI (between passes; between "
                    "nights for one seat on two dates of a run store, as comparisons.csv's dated rows); better or "
                    "worse when the CI lies beyond the noise band of its statistic ({}) and the change stays "
                    "significant after the correction over the comparisons, within noise when the CI lies inside "
                    "the band ('worse, within tolerance' or 'better, within tolerance' when it also excludes 1 and "
                    "the change stays significant).",
                    ident(a_text),
                    ident(b_text),
                    fmt.count(len(result.rows)),
                    level,
                    band_words(th),
                ),
                para(
                    "Verdicts: {} worse (regressions), {} better, {} within noise, {} with too little data for a verdict.",
                    fmt.count(c["worse"]),
                    fmt.count(c["better"]),
                    fmt.count(c["within_noise"]),
                    fmt.count(c["insufficient_data"]),
                ),
                *[para("Note: {}.", n) for n in result.notes],
            )
        )
    ]
    for i, (before, after) in enumerate(dict.fromkeys(zip(result.rows["before"], result.rows["after"])), 1):
        g = result.rows[(result.rows["before"] == before) & (result.rows["after"] == after)]
        parts.append(render.table_html(_table(g, before, after, level), f"Table {i}"))
    css = (render.TEMPLATES_DIR / "benchreport" / "static" / "report.css").read_text(encoding="utf-8")
    body = Markup("\n").join([Markup(f"<h1>{html.escape(title)}</h1>"), *parts])
    page = _HEAD.format(title=html.escape(title), css=css) + str(body) + "\n</main>\n</body>\n</html>\n"
    render.check_offline(page)
    return page
