"""Two seats side by side in one call: `compare(a, "seat-x", "seat-y")`.

Every cell the two seats share, with the candidate/baseline ratio, its CI, the verdict and
the flags that touch the cell, as one tidy table; every exam task both took, with its delta
(``.exams``, the report's exam test). `default_pair` picks the two seats sharing the most. When the first seat is the analysis's
baseline the rows are the report's own (tables/comparisons.csv); otherwise they are
computed as a report with ``--baseline seat-x`` would (same cells, thresholds and
multiplicity correction, the family being that report's comparisons), so a verdict here is
one the report would give.
"""

from __future__ import annotations

import pandas as pd
from jinja2 import Environment

from benchreport import format as fmt
from benchreport.columns import PAIR_COLUMNS
from benchreport.report.model.sections.flagview import flag_cell, flag_seats, flags_of
from benchreport.stats.common import parse_values

from .views import check_seats, seat_labels

__all__ = ["Comparison", "compare", "COMPARE_COLUMNS", "pair_exams", "shared_counts", "default_pair"]

#: columns of a `compare` table, in order (benchreport.columns.PAIR_COLUMNS)
COMPARE_COLUMNS = PAIR_COLUMNS


class Comparison(pd.DataFrame):
    """A `compare` table: one row per shared cell (COMPARE_COLUMNS), plus the two seats
    (`baseline`, `candidate`) and the flag rows that touch them (`flag_rows`).

    A derived frame (a filter, a column) is a plain DataFrame again.
    """

    _metadata = ["baseline", "candidate", "labels", "flag_rows", "noise", "exams"]

    @property
    def _constructor(self):
        return pd.DataFrame

    def summary(self) -> str:
        """One line: how many cells, the verdicts among them, and how many exam tasks."""
        counts = self["verdict"].value_counts() if len(self) else pd.Series(dtype=int)
        verdicts = ", ".join(f"{fmt.count(n)} {v.replace('_', ' ')}" for v, n in counts.items())
        exams = getattr(self, "exams", None)
        n_exams = 0 if exams is None else len(exams)
        return (
            f"{self.candidate} against {self.baseline}: {fmt.counted(len(self), 'shared cell')}"
            + (f" ({verdicts})" if verdicts else "")
            + f" and {fmt.counted(n_exams, 'shared exam task')}"
            + f"; {fmt.counted(len(self.flag_rows), 'flag')} touch them"
        )

    def _repr_html_(self) -> str:
        rows = []
        for r in self.itertuples(index=False):
            rows.append(
                {
                    "cell": fmt.cell_phrase(r.workload, r.concurrency, r.metric, r.statistic),
                    "baseline": fmt.value_with_unit(r.baseline_estimate, r.metric),
                    "candidate": fmt.value_with_unit(r.candidate_estimate, r.metric),
                    "ratio": fmt.ratio3(r.ratio),
                    "ci": fmt.ci(r.ci_low, r.ci_high, fmt.ratio3) if fmt.finite(r.ci_low) else str(r.ci_method),
                    "verdict": str(r.verdict).replace("_", " ")
                    + (f" ({fmt.text(r.verdict_detail)})" if fmt.text(r.verdict_detail) else ""),
                    "reason": fmt.text(r.verdict_reason),
                    "passes": f"{len(r.baseline_values)} / {len(r.candidate_values)}",
                    "flags": list(r.flags),
                    "primary": bool(r.primary),
                }
            )
        from benchreport.report.model.sections.flagview import SEVERITY_RANK

        fr = self.flag_rows
        order = sorted(range(len(fr)), key=lambda i: SEVERITY_RANK.get(str(fr.iloc[i]["severity"]), 99))
        flags = [
            {
                "severity": str(fr.iloc[i]["severity"]),
                "code": str(fr.iloc[i]["code"]),
                "message": fmt.text(fr.iloc[i].get("message")),
            }
            for i in order
        ]
        return _TEMPLATE.render(
            summary=self.summary(),
            base=self.labels[self.baseline],
            cand=self.labels[self.candidate],
            rows=rows,
            exams=_exam_rows(getattr(self, "exams", None)),
            flags=flags,
        )


def _exam_rows(exams) -> list[dict]:
    """The exam deltas as the comparison's HTML shows them (scores as shares, the difference in points)."""
    if exams is None or not len(exams):
        return []

    def share(correct, total) -> str:
        return f"{fmt.num(100 * correct / total)} % ({int(correct)} / {int(total)})" if total else ""

    return [
        {
            "task": fmt.text(r["benchmark"])
            + ("" if fmt.missing(r["dimension"]) else f" ({fmt.text(r['dimension'])})"),
            "baseline": share(r["baseline_correct"], r["baseline_total"]),
            "candidate": share(r["candidate_correct"], r["candidate_total"]),
            "diff": f"{100 * r['diff']:+.1f} points" if fmt.finite(r["diff"]) else "",
            "ci": f"[{100 * r['diff_ci_low']:+.1f}, {100 * r['diff_ci_high']:+.1f}]"
            if fmt.finite(r["diff_ci_low"])
            else "",
            "test": fmt.text(r["test"]),
            "p": fmt.pval(r["p_value"], missing_text=""),
            "p_holm": fmt.pval(r["p_holm"], missing_text=""),
        }
        for _, r in exams.iterrows()
    ]


_TEMPLATE = Environment(autoescape=True).from_string("""\
<div class="benchreport-compare">
<p><strong>{{ cand }}</strong> against <strong>{{ base }}</strong> (ratio = candidate / baseline, direction-aware verdicts)</p>
<p>{{ summary }}</p>
{% if rows %}<table>
<thead><tr><th>cell</th><th>baseline</th><th>candidate</th><th>ratio</th><th>CI</th><th>verdict</th>
<th>why</th><th>passes (b / c)</th><th>flags</th></tr></thead>
<tbody>{% for r in rows %}<tr{% if r.primary %} style="font-weight:bold" title="the pair's headline cell"{% endif %}>
<td>{{ r.cell }}</td><td style="text-align:right">{{ r.baseline }}</td><td style="text-align:right">{{ r.candidate }}</td>
<td style="text-align:right">{{ r.ratio }}</td><td>{{ r.ci }}</td><td>{{ r.verdict }}</td><td>{{ r.reason }}</td>
<td>{{ r.passes }}</td><td>{% if r.flags|length > 3 %}<details><summary>{{ r.flags|length }} flags</summary>\
{{ r.flags|join(", ") }}</details>{% else %}{{ r.flags|join(", ") }}{% endif %}</td></tr>
{% endfor %}</tbody></table>{% else %}<p>The two seats share no cell (same harness, probe, workload,
concurrency, metric and statistic).</p>{% endif %}
{% if exams %}<p>Exam tasks both seats took (difference = candidate − baseline score; the report's exact test):</p>
<table><thead><tr><th>task</th><th>baseline</th><th>candidate</th><th>difference</th><th>CI</th><th>test</th><th>p</th>
<th>p (Holm)</th></tr></thead><tbody>{% for e in exams %}<tr><td>{{ e.task }}</td><td style="text-align:right">{{ e.baseline }}</td>
<td style="text-align:right">{{ e.candidate }}</td><td style="text-align:right">{{ e.diff }}</td><td>{{ e.ci }}</td>
<td>{{ e.test }}</td><td>{{ e.p }}</td><td>{{ e.p_holm }}</td></tr>{% endfor %}</tbody></table>{% endif %}
{% if flags %}<details><summary>{{ flags|length }} flag(s) on these two seats, most severe first</summary><ul>{% for f in flags %}
<li><strong>{{ f.severity }}</strong> <code>{{ f.code }}</code>: {{ f.message }}</li>{% endfor %}</ul></details>{% endif %}
</div>""")


def _pair_rows(a, baseline: str, candidate: str) -> pd.DataFrame:
    c = a.comparisons
    if a.baseline == baseline and len(c):
        rows = c[(c["kind"] == "baseline") & (c["baseline"] == baseline) & (c["candidate"] == candidate)]
        if len(rows):
            return rows
    from benchreport.stats.cells import CellSet
    from benchreport.stats.compare import comparisons

    th = a.options.thresholds
    cs = CellSet(a.cells, a.passes if a.passes is not None else pd.DataFrame(), 1 - th.alpha)
    c = comparisons(
        cs,
        a.tables.seats,
        baseline=baseline,
        thresholds=th,
        history=False,
        multiplicity=a.options.multiplicity,
        primary=a.options.primary,
        sessions=a.session_groups,
    )  # day-to-day variance, as the report's
    return c[c["candidate"] == candidate] if len(c) else c


def pair_exams(a, baseline: str, candidate: str) -> pd.DataFrame:
    """The exam deltas of `candidate` against `baseline` on every exam task (benchmark, dimension)
    both took: the report's own rows (tables/exam_deltas.csv) where it compared this pair this way
    round, else computed as the report computes them (`benchreport.stats.exams.exam_deltas`:
    McNemar exact on paired items, Fisher exact on counts; Holm over this pair's tasks)."""
    from benchreport.columns import EXAM_DELTA_COLUMNS, EXAM_DELTA_EXTRA_COLUMNS
    from benchreport.stats.exams import exam_deltas

    columns = EXAM_DELTA_COLUMNS + EXAM_DELTA_EXTRA_COLUMNS
    d = getattr(a, "exam_deltas", None)
    if d is not None and len(d):
        own = d[(d["baseline"].astype(str) == baseline) & (d["candidate"].astype(str) == candidate)]
        if len(own):
            return own.reset_index(drop=True)
    exams = a.tables.exams
    if exams is None or not len(exams):
        return pd.DataFrame(columns=columns)
    pair = exams[exams["seat"].astype(str).isin([baseline, candidate])]
    if pair["seat"].astype(str).nunique() < 2:
        return pd.DataFrame(columns=columns)
    items = a.tables.exam_items
    if items is not None and len(items):
        items = items[items["seat"].astype(str).isin([baseline, candidate])]
    th = a.options.thresholds
    out = exam_deltas(pair, items, baseline=baseline, alpha=th.alpha, power=th.power)
    return out[out["candidate"].astype(str) == candidate].reset_index(drop=True) if len(out) else out


def _match_key(df: pd.DataFrame) -> pd.Series:
    """Each cell's key as `comparisons` matches two seats' cells: harness, probe, load, workload,
    concurrency, metric, statistic (missing parts as empty text)."""
    parts = [df[k].astype(object).where(df[k].notna(), "").astype(str) if k in df else "" for k in _MATCH_PARTS]
    key = parts[0]
    for part in parts[1:]:
        key = key + "\x1f" + part
    return key


_MATCH_PARTS = ("harness", "probe", "load_id", "workload", "concurrency", "metric", "statistic")


def shared_counts(a) -> dict[frozenset, tuple[int, int]]:
    """{two seats: (cells they share, exam tasks they share)} for every pair of seats sharing any."""
    from collections import Counter
    from itertools import combinations

    cells, tasks = Counter(), Counter()
    c = a.cells
    if c is not None and len(c):
        keyed = pd.DataFrame({"seat": c["seat"].astype(str), "key": _match_key(c)}).drop_duplicates()
        for seats in keyed.groupby("key")["seat"].agg(sorted):
            cells.update(frozenset(p) for p in combinations(seats, 2))
    e = a.tables.exams
    if e is not None and len(e):
        task = (
            e["benchmark"].astype(str)
            + "\x1f"
            + e["dimension"].astype(object).where(e["dimension"].notna(), "").astype(str)
        )
        keyed = pd.DataFrame({"seat": e["seat"].astype(str), "key": task}).drop_duplicates()
        for seats in keyed.groupby("key")["seat"].agg(sorted):
            tasks.update(frozenset(p) for p in combinations(seats, 2))
    return {p: (cells[p], tasks[p]) for p in set(cells) | set(tasks)}


def default_pair(a, baseline: str | None = None) -> tuple[str | None, str | None, str]:
    """The two seats to show side by side first: (baseline, candidate, why in words).

    With `baseline` (else the analysis's), its candidate is the seat sharing the most cells and
    exam tasks with it; without one, the pair sharing the most of any, the first in the report's
    seat order as baseline (a tie goes to more cells, then to the report's seat order). When no pair shares anything the why says so (and the candidate is
    the next seat, or None for a single seat)."""
    order = list(seat_labels(a))
    base = baseline or a.baseline
    counts = shared_counts(a)
    pairs = [p for p in counts if base in p] if base else list(counts)
    if pairs:
        rank = {s: i for i, s in enumerate(order)}
        best = min(pairs, key=lambda p: (-sum(counts[p]), -counts[p][0], sorted(rank.get(s, len(order)) for s in p)))
        x, y = sorted(best, key=lambda s: rank.get(s, len(order)))
        if base:
            x, y = base, (y if x == base else x)
        n_cells, n_tasks = counts[best]
        why = f"the pair sharing the most: {fmt.counted(n_cells, 'cell')} and {fmt.counted(n_tasks, 'exam task')}"
        return x, y, why
    first = base or (order[0] if order else None)
    rest = [s for s in order if s != first]
    if not rest:
        return first, None, "one seat only: nothing to compare"
    whom = f"{first} shares" if base else "no two seats share"
    return (
        first,
        rest[0],
        f"{whom} no cell and no exam task with another seat (the same harness, probe, load, workload, "
        "concurrency, metric and statistic, or the same exam): each seat was measured on its own",
    )


def _touches(flag, row, seats: set) -> bool:
    if not set(flag_seats(flag.get("seats"))) & seats:
        return False
    cell = flag_cell(flag)
    for k in ("workload", "metric", "statistic"):
        if cell[k] is None or str(cell[k]) == str(row[k]):
            continue
        # a flag on a workload touches its cells of every measurement condition ("prefill:31,000-token context")
        if not (k == "workload" and str(row[k]).startswith(f"{cell[k]}:")):
            return False
    conc = cell["concurrency"]
    return conc is None or (fmt.finite(row["concurrency"]) and int(conc) == int(row["concurrency"]))


def _cell_values(a, seat: str, r) -> list[float]:
    c = a.cells
    m = (
        (c["seat"] == seat)
        & (c["workload"] == r["workload"])
        & (c["metric"] == r["metric"])
        & (c["statistic"] == r["statistic"])
    )
    for k in ("harness", "probe", "load_id"):  # missing on both sides matches (pd.NA is never truthy)
        if k in c.columns:
            m &= c[k].astype(object).fillna("").astype(str) == fmt.text(r.get(k) if hasattr(r, "get") else r[k])
    conc = pd.to_numeric(c["concurrency"], errors="coerce")
    m &= conc.isna() if not fmt.finite(r["concurrency"]) else conc == float(r["concurrency"])
    hit = c[m]
    return parse_values(hit["values"].iloc[0]) if len(hit) else []


def compare(a, baseline: str, candidate: str) -> Comparison:
    """Seat `candidate` against seat `baseline`, every cell they share: ratio, CI, verdict, flags.

    Parameters
    ----------
    a : Analysis
        From `benchreport.pipeline.analyse_paths` (or `analyse`).
    baseline, candidate : str
        Seat ids of the analysis (ValueError naming the seats there are otherwise).

    Returns
    -------
    Comparison
        A DataFrame of COMPARE_COLUMNS (`flags`: the codes of the flags that touch the cell's
        seats and cell), with the flag rows about either seat or both in ``.flag_rows``, the exam
        deltas of every exam task both took in ``.exams`` (`pair_exams`) and a readable HTML view.

    References
    ----------
    `benchreport.stats.compare` (Welch t on log pass values; verdicts after Holm or BH,
    criterion.rs's noise band).
    """
    baseline, candidate = check_seats(a, [baseline, candidate])
    if baseline == candidate:
        raise ValueError(f"compare two different seats; got {baseline!r} twice")
    rows = _pair_rows(a, baseline, candidate).reset_index(drop=True)
    f = flags_of(a)
    pair = {baseline, candidate}
    # flags about either seat or the two together (not those pairing one with a third seat)
    touching = (
        [
            i
            for i, fl in f.iterrows()
            if set(flag_seats(fl.get("seats"))) & pair and set(flag_seats(fl.get("seats"))) <= pair
        ]
        if len(f)
        else []
    )
    table = pd.DataFrame(
        {
            **{k: rows[k] for k in ("workload", "concurrency", "metric", "statistic")},
            "unit": [fmt.unit_of(m) for m in rows["metric"]],
            **{
                k: rows[k]
                for k in (
                    "baseline_estimate",
                    "candidate_estimate",
                    "ratio",
                    "ci_low",
                    "ci_high",
                    "ci_level",
                    "ci_method",
                    "p_value",
                    "p_adj",
                    "verdict",
                    "verdict_reason",
                    "verdict_detail",
                    "noise_band",
                    "primary",
                )
            },
            "baseline_values": [_cell_values(a, baseline, r) for _, r in rows.iterrows()],
            "candidate_values": [_cell_values(a, candidate, r) for _, r in rows.iterrows()],
            "flags": [
                list(dict.fromkeys(str(f.loc[i, "code"]) for i in touching if _touches(f.loc[i], r, pair)))
                for _, r in rows.iterrows()
            ],
        },
        columns=COMPARE_COLUMNS,
    )
    out = Comparison(table)
    out.baseline, out.candidate = baseline, candidate
    out.labels = seat_labels(a)
    out.noise = a.options.thresholds.noise
    out.flag_rows = f.loc[touching].reset_index(drop=True) if touching else f.iloc[0:0]
    out.exams = pair_exams(a, baseline, candidate)
    return out
