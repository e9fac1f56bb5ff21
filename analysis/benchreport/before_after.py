"""`benchreport compare A B`: before against after, the same cells matched, verdicts as in comparisons.csv.

A and B are two data sets: two run folders (or files), or with ``--store DIR`` two selections
of the run store, ``DATE``, ``SEAT@DATE``, where DATE is ``YYYY-MM-DD``, ``latest`` (the store's
newest date) or ``previous`` (the one before it). Each seat of B is compared with the same seat
of A; when the two share no seat and each holds one, those two are compared.

Nothing new is estimated: each pair's runs are put in one data set (a seat in both is named
``SEAT@A`` and ``SEAT@B``, or by its dates) and analysed as `benchreport analyse` would with A's
seat as the baseline (benchreport.pipeline.analyse_tables). The rows are that analysis's
comparisons of B's seat against A's (kind ``baseline``), so the ratios, CIs and verdicts are
exactly those comparisons.csv gives for the same runs; a ``worse`` verdict is a regression.

One seat on two dates of a store is a seat against itself on another night: its passes say
nothing of how much nights differ, so those rows are comparisons.csv's dated rows (kind
``history``, benchreport.stats.compare) of the seat's runs up to B's date, the noise the
night-to-night spread of the nights before it, corrected for multiplicity within the pair.
With too few earlier nights they say so (``insufficient_data``) rather than read the passes
of two nights as the variation of the seat. Two folders hold no earlier nights: their rows
rest on the passes alone (`CompareResult.notes` says so).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field, replace

import pandas as pd

from benchreport.columns import BEFORE_AFTER_COLUMNS
from benchreport.load import LoadResult
from benchreport.load.errors import DataSetError
from benchreport.stats.compare import nights_needed
from benchreport.tables import Tables

__all__ = [
    "NothingToCompare",
    "Selection",
    "parse_selection",
    "select_store",
    "seat_pairs",
    "relabel",
    "CompareResult",
    "compare",
    "terminal_table",
    "verdict_words",
    "COMPARE_COLUMNS",
    "store_nights",
    "night_rows",
]

#: the columns `compare` prints and writes (benchreport.columns.BEFORE_AFTER_COLUMNS)
COMPARE_COLUMNS = BEFORE_AFTER_COLUMNS
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_SELECTION = re.compile(r"^(?:(?P<seat>[^@]+)@)?(?P<date>" + _DATE.pattern[1:-1] + r"|latest|previous)$")


class NothingToCompare(DataSetError):
    """`previous` asked of a store that holds one date: a nightly gate's first night (exit 0)."""


@dataclass(frozen=True)
class Selection:
    """Runs of the store on one date (of one seat, when given)."""

    text: str
    date: str
    seat: str | None = None


def parse_selection(text: str) -> Selection:
    """``DATE`` or ``SEAT@DATE`` (DATE: YYYY-MM-DD, latest or previous); ValueError naming it otherwise."""
    m = _SELECTION.match(str(text))
    if not m:
        raise ValueError(
            f"store selection {text!r}: expected DATE or SEAT@DATE, with DATE as YYYY-MM-DD, latest or previous"
        )
    date = m["date"]
    if date not in ("latest", "previous"):
        try:
            dt.date.fromisoformat(date)
        except ValueError:
            raise ValueError(f"store selection {text!r}: {date} is not a calendar date") from None
    return Selection(str(text), date, m["seat"])


def _resolve_date(sel: Selection, dates: list[str]) -> str:
    if not dates:
        raise DataSetError("the store holds no runs")
    if sel.date == "latest":
        return dates[-1]
    if sel.date == "previous":
        if len(dates) < 2:
            raise NothingToCompare(
                f"store selection {sel.text!r}: the store holds one date only ({dates[0]}); "
                "nothing to compare yet (the first night is kept as the one the next is "
                "compared with)"
            )
        return dates[-2]
    if sel.date not in dates:
        raise DataSetError(
            f"store selection {sel.text!r}: no runs on {sel.date} (the store holds "
            f"{len(dates)} date(s), {dates[0]} to {dates[-1]})"
        )
    return sel.date


def _subset(tables: Tables, run_ids: set[str], seats: set[str]) -> Tables:
    out = {}
    for name, df in tables.items():
        if "run_id" in df.columns:
            out[name] = df[df["run_id"].astype(str).isin(run_ids)].reset_index(drop=True)
        else:
            out[name] = df[df["seat"].astype(str).isin(seats)].reset_index(drop=True)
    return Tables(**out)


def select_store(store, sel: Selection, *, tables: Tables | None = None) -> tuple[Tables, str]:
    """The tidy tables of a selection (request records of its runs included) and its date."""
    from benchreport.store import StoreRequests, read_tables

    tables = tables if tables is not None else read_tables(store)
    runs = tables.runs
    date = _resolve_date(sel, sorted(set(runs["date"].astype(str))))
    keep = runs["date"].astype(str) == date
    if sel.seat is not None:
        keep &= runs["seat"].astype(str) == sel.seat
        if not keep.any():
            seats = sorted(set(runs.loc[runs["date"].astype(str) == date, "seat"].astype(str)))
            raise DataSetError(
                f"store selection {sel.text!r}: no runs of {sel.seat} on {date} (seats that date: "
                f"{', '.join(seats[:10])}{', ...' if len(seats) > 10 else ''})"
            )
    ids = set(runs.loc[keep, "run_id"].astype(str))
    sub = _subset(tables, ids, set(runs.loc[keep, "seat"].astype(str)))
    requests = StoreRequests(store, sub.runs).requests_of(ids)
    return replace(sub, requests=requests), date


def store_nights(store, tables: Tables, seat: str, date: str, window: int) -> Tables:
    """One seat's runs on `date` and on the up to `window` dates before it, request records
    included: the nights a dated comparison takes its noise from."""
    from benchreport.store import StoreRequests

    runs = tables.runs
    mine = runs["seat"].astype(str) == seat
    dates = sorted(d for d in set(runs.loc[mine, "date"].astype(str)) if d <= date)[-(window + 1) :]
    keep = mine & runs["date"].astype(str).isin(dates)
    ids = set(runs.loc[keep, "run_id"].astype(str))
    sub = _subset(tables, ids, {seat})
    return replace(sub, requests=StoreRequests(store, sub.runs).requests_of(ids))


def night_rows(tables: Tables, seat: str, before: str, after: str, options):
    """(rows, analysis): comparisons.csv's dated row of each cell of `seat` on date `after`
    against `before` (tables: the seat's runs up to `after`, analysed as `benchreport analyse`
    would, every earlier date compared), judged again as one family: the pair's cells."""
    from benchreport.pipeline import analyse_tables
    from benchreport.stats.compare import rejudge

    an = analyse_tables(tables, replace(options, baseline=None, history_comparisons="all"), loaded=LoadResult())
    c = an.comparisons
    c = c[
        (c["kind"] == "history")
        & (c["candidate"] == seat)
        & (c["baseline_date"] == before)
        & (c["candidate_date"] == after)
    ]
    return rejudge(c, options.thresholds, options.multiplicity), an


def seat_pairs(a: Tables, b: Tables) -> list[tuple[str, str]]:
    """(seat of A, seat of B) to compare: every seat in both, else the one seat of each."""
    sa, sb = set(a.runs["seat"].astype(str)), set(b.runs["seat"].astype(str))
    both = sorted(sa & sb)
    if both:
        return [(s, s) for s in both]
    if len(sa) == 1 and len(sb) == 1:
        return [(next(iter(sa)), next(iter(sb)))]
    raise DataSetError(
        f"A and B share no seat, and they hold {len(sa)} and {len(sb)} seats: give two data sets "
        "with the same seats, or one seat each"
    )


def relabel(tables: Tables, seat: str, label: str, prefix: str) -> Tables:
    """One seat's tables, the seat renamed `label` and every run id prefixed (two data sets in one)."""
    ids = set(tables.runs.loc[tables.runs["seat"].astype(str) == seat, "run_id"].astype(str))
    sub = _subset(tables, ids, {seat})
    out = {}
    for name, df in sub.items():
        df = df.copy()
        if "seat" in df.columns:
            df["seat"] = (
                df["seat"]
                .astype("object")
                .map(lambda s: label if str(s) == seat else s)
                .astype(sub.runs["seat"].dtype if len(sub.runs) else "string")
            )
        if "run_id" in df.columns:
            df["run_id"] = (prefix + df["run_id"].astype(str)).astype(df["run_id"].dtype)
        out[name] = df
    seats = out["seats"]
    if "role" in seats.columns:  # the baseline is named, never inferred from a role
        seats["role"] = seats["role"].where(seats["role"].astype(str) != "incumbent", "candidate")
    return Tables(**out)


def _concat(a: Tables, b: Tables) -> Tables:
    return Tables(**{name: pd.concat([df, getattr(b, name)], ignore_index=True) for name, df in a.items()})


@dataclass
class CompareResult:
    """The rows of every pair (COMPARE_COLUMNS plus comparisons.csv's), and each pair's analysis."""

    rows: pd.DataFrame
    pairs: list[tuple[str, str]]
    analyses: list = field(default_factory=list)
    #: what the reader must know about how the rows were made (one sentence each)
    notes: list = field(default_factory=list)

    @property
    def regressions(self) -> int:
        return int((self.rows["verdict"] == "worse").sum()) if len(self.rows) else 0

    def regressed(self, within_band: bool = False) -> pd.DataFrame:
        """The rows of B worse than A: verdict ``worse``, and with `within_band` also the real changes
        for the worse inside the noise band (``verdict_detail`` "worse, within tolerance")."""
        rows = self.rows
        if not len(rows):
            return rows
        hit = rows["verdict"] == "worse"
        if within_band and "verdict_detail" in rows:
            hit = hit | rows["verdict_detail"].astype(object).isin(
                ["worse, within tolerance", "worse, not shown beyond the band"]
            )
        return rows[hit]

    def counts(self) -> dict:
        v = self.rows["verdict"].astype(str).value_counts() if len(self.rows) else {}
        return {k: int(v.get(k, 0)) for k in ("better", "worse", "within_noise", "insufficient_data")}


def compare(a: Tables, b: Tables, options, *, labels: tuple[str, str] = ("A", "B"), nights=None) -> CompareResult:
    """Every seat of B against the same seat of A (see the module docstring).

    `nights`: for store selections, ``nights(seat, date)`` gives that seat's runs up to `date`
    (`store_nights`); with it, a seat on two dates (labels are the dates, A's first) is judged
    by the night-to-night spread (`night_rows`)."""
    from benchreport.pipeline import analyse_tables

    frames, analyses, notes = [], [], []
    pairs = seat_pairs(a, b)
    dated = nights is not None and labels[0] < labels[1] and all(_DATE.match(x) for x in labels)
    for sa, sb in pairs:
        before, after = (f"{sa}@{labels[0]}", f"{sb}@{labels[1]}") if sa == sb else (sa, sb)
        if sa == sb and dated:
            c, an = night_rows(nights(sa, labels[1]), sa, labels[0], labels[1], options)
            c = c.assign(baseline=before, candidate=after)
            notes.append(
                "a seat on two dates: the noise is the night-to-night spread of its nights before B "
                f"(up to {int(options.thresholds.history_window)}; a verdict needs "
                f"{nights_needed(options.thresholds)})"
            )
        else:
            both = _concat(relabel(a, sa, before, f"{labels[0]}:"), relabel(b, sb, after, f"{labels[1]}:"))
            an = analyse_tables(both, replace(options, baseline=before), loaded=LoadResult())
            c = an.comparisons
            c = c[(c["kind"] == "baseline") & (c["baseline"] == before) & (c["candidate"] == after)]
            if sa == sb:
                how = (
                    "A's date is not before B's"
                    if nights is not None
                    else "one data set against another, without the nights between them"
                )
                notes.append(
                    f"{sa}: {how}: the intervals hold the variation between passes only, not the "
                    "variation between nights (compare an earlier date of a run store with a later "
                    "one to include it)"
                )
        frames.append(c.assign(before=before, after=after))
        analyses.append(an)
    rows = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COMPARE_COLUMNS)
    rest = [col for col in rows.columns if col not in COMPARE_COLUMNS]
    return CompareResult(
        rows[COMPARE_COLUMNS + rest].reset_index(drop=True), pairs, analyses, list(dict.fromkeys(notes))
    )


def _cell(r) -> str:
    from benchreport import format as fmt

    stat = "" if str(r["statistic"]) == "mean" else f" {r['statistic']}"
    conc = f" c={fmt.concurrency(r['concurrency'])}" if fmt.finite(r["concurrency"]) else ""
    return f"{r['workload']}{conc} {r['metric']}{stat}"


#: cells named per reason under a pair's table (the rest are counted)
SHOWN_REASON_CELLS = 4


def _reasons(g: pd.DataFrame) -> list[str]:
    """Why the pair's insufficient_data rows have no verdict, one line per reason with the cells it
    holds for (issue 43: the reason was in --json only)."""
    none = g[g["verdict"].astype(str) == "insufficient_data"]
    if not len(none) or "verdict_reason" not in none:
        return []
    out = []
    reasons = none["verdict_reason"].astype(object).where(none["verdict_reason"].notna(), "").astype(str)
    for why in dict.fromkeys(reasons):
        cells = [_cell(r) for _, r in none[reasons == why].iterrows()]
        named = ", ".join(cells[:SHOWN_REASON_CELLS]) + (
            f" and {len(cells) - SHOWN_REASON_CELLS} more" if len(cells) > SHOWN_REASON_CELLS else ""
        )
        out.append(f"  insufficient data, {why or 'no reason recorded'}: {named}")
    return out


def verdict_words(r) -> str:
    """A row's verdict as the text table says it: a regression named, a real change inside the noise
    band with its direction and the band (issue 43: "within_noise (worse, within tolerance ±2%)")."""
    from benchreport import format as fmt

    v = str(r["verdict"])
    detail = fmt.text(r.get("verdict_detail"))
    if detail:
        band = r.get("noise_band")
        return f"{v} ({detail}" + (f" ±{fmt.pct(band)})" if fmt.finite(band) else ")")
    return v.replace("worse", "worse (regression)")


def terminal_table(result: CompareResult) -> str:
    """The rows as a plain-text table, one block per pair with why each row without a verdict has none,
    and a count of the verdicts."""
    from benchreport import format as fmt

    lines = []
    for before, after in dict.fromkeys(zip(result.rows["before"], result.rows["after"])):
        g = result.rows[(result.rows["before"] == before) & (result.rows["after"] == after)]
        lines.append(f"{before} (before) -> {after} (after)")
        body = [("cell", "before", "after", "ratio", "CI", "verdict")]
        for _, r in g.iterrows():
            ci = f"{fmt.ratio3(r['ci_low'])}-{fmt.ratio3(r['ci_high'])}" if fmt.finite(r["ci_low"]) else "–"
            body.append(
                (
                    _cell(r),
                    fmt.num(r["baseline_estimate"]),
                    fmt.num(r["candidate_estimate"]),
                    fmt.ratio3(r["ratio"]),
                    ci,
                    verdict_words(r),
                )
            )
        widths = [max(len(row[i]) for row in body) for i in range(len(body[0]))]
        for row in body:
            lines.append(
                "  "
                + "  ".join(
                    v.ljust(w) if i in (0, 5) else v.rjust(w) for i, (v, w) in enumerate(zip(row, widths))
                ).rstrip()
            )
        lines += _reasons(g)
    if not len(result.rows):
        lines.append("no cell is measured in both A and B")
    for note in result.notes:
        lines.append(f"note: {note}")
    c = result.counts()
    lines.append(
        f"{len(result.rows)} cell(s): {c['worse']} worse (regression), {c['better']} better, "
        f"{c['within_noise']} within noise{_within_band_count(result.rows)}, {c['insufficient_data']} insufficient data"
    )
    return "\n".join(lines)


def _within_band_count(rows: pd.DataFrame) -> str:
    """' (N worse and M better, within tolerance)' for the within-noise rows with a real change, and
    '; K a real change not shown beyond the band' for such insufficient-data rows, or ''."""
    if "verdict_detail" not in rows or not len(rows):
        return ""
    detail = rows["verdict_detail"].astype(object).where(rows["verdict_detail"].notna(), "").astype(str)
    worse, better = int((detail == "worse, within tolerance").sum()), int((detail == "better, within tolerance").sum())
    out = f" ({worse} worse and {better} better, within tolerance)" if worse or better else ""
    reach = int(detail.str.endswith("not shown beyond the band").sum())
    return out + (f"; {reach} a real change not shown beyond the band" if reach else "")
