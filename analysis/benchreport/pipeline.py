"""The analysis in one call: loaded runs -> tidy tables -> statistics -> flags.

Pure in the middle: `analyse` takes a LoadResult and returns an `Analysis` holding
DataFrames; only `write_analysis` touches the file system. The report notebook, the
command line and the exploration notebook all go through here, so every route gives
the same numbers for the same data and seed.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from typing import TYPE_CHECKING

import pandas as pd

from benchreport.columns import PROVENANCE_COLUMNS
from benchreport.load import LoadResult, load
from benchreport.options import Options, options_from, primary_cell  # noqa: F401 - importable from here too
from benchreport.progress import note
from benchreport.stats.cells import described_runs
from benchreport.tables import Tables, build_tables

if TYPE_CHECKING:
    from benchreport.flags import Exclusions


@dataclass
class Analysis:
    """One data set analysed: the loaded files, the tidy tables, statistics and flags."""

    loaded: LoadResult
    tables: Tables
    cells: pd.DataFrame
    comparisons: pd.DataFrame
    exam_deltas: pd.DataFrame
    flags: pd.DataFrame
    options: Options = field(default_factory=Options)
    #: the pass table (benchreport.stats.cells.PASS_COLUMNS); from a run store a PassDays, read one
    #: date at a time (`passes` gives it whole)
    pass_table: Any = None
    #: the figures excluded from results, decided once (benchreport.flags.Exclusions)
    excluded: "Exclusions | None" = None
    #: the typed findings behind `flags`, in rule order (benchreport.flags.findings)
    findings: list = field(default_factory=list)
    #: dated verdicts of every seat's cells against their steady level (benchreport.stats.history);
    #: from a run store a HistoryDays, read one date at a time (`history` gives it whole)
    history_table: Any = None
    #: what the report and the flags read of it (benchreport.stats.history_summary.HistorySummary)
    history_summary: Any = None
    #: {date: token} of the pass rows (benchreport.days.entries), when a day cache was used
    day_tokens: dict | None = None
    #: where passes.csv and history.csv keep each date's lines (the run store's cache), or None
    csv_fragments: Any = None
    #: {date: token} of the history rows (benchreport.stats.history), for history.csv's kept lines
    history_tokens: dict | None = None
    #: request records per run and cell as the pass rows count them (benchreport.stats.notable.request_counts)
    request_counts: pd.DataFrame | None = None
    #: each cell key's log pass values per date (benchreport.stats.sessions.session_groups): the
    #: comparisons' between-session variance and tables/sessions.csv
    session_groups: dict | None = None
    #: one row per pair of harnesses that measured one seat's cell (benchreport.stats.agreement;
    #: tables/agreement.csv)
    agreement: pd.DataFrame | None = None

    @property
    def history(self) -> pd.DataFrame | None:
        """The history table whole (tables/history.csv). From a run store it is read from the
        store's cache when asked, and kept."""
        from benchreport.days.history import HistoryDays

        if isinstance(self.history_table, HistoryDays):
            self.history_table = self.history_table.frame()
        return self.history_table

    @property
    def passes(self) -> pd.DataFrame | None:
        """The pass table whole: one row per cell, date and pass. From a run store it is read from
        the store's cache when asked (a year of a 50-seat fleet is six million rows), and kept."""
        from benchreport.days.entries import PassDays

        if isinstance(self.pass_table, PassDays):
            self.pass_table = self.pass_table.frame()
        return self.pass_table

    def flags_records(self) -> list[dict]:
        """The flags in the JSON shape of spec/flags.md."""
        from benchreport.flags import flags_to_records

        return flags_to_records(self.flags)

    @property
    def baseline(self) -> str | None:
        """The seat every other seat is compared against (option, else the incumbent)."""
        if self.options.baseline:
            return self.options.baseline
        seats = self.tables.seats
        cached = self.__dict__.get("_benchreport_incumbent")
        if cached is None or cached[0] is not seats:  # once per seats table: a report asks often
            inc = seats.loc[seats["role"] == "incumbent", "seat"]
            cached = (seats, str(inc.iloc[0]) if len(inc) else None)
            self.__dict__["_benchreport_incumbent"] = cached
        return cached[1]


def analyse(loaded: LoadResult, options: Options = Options(), *, quiet: bool = True) -> Analysis:
    """Statistics and flags for loaded runs (no I/O)."""
    return analyse_tables(build_tables(loaded), options, loaded=loaded, quiet=quiet)


def analyse_store(store, options: Options = Options(), *, quiet: bool = True, cache: bool = True) -> Analysis:
    """Statistics and flags for a run store (benchreport.store): its request records are read one
    date at a time; unless `cache` is false, each date's request summaries, pass rows and cells
    are kept in the store (benchreport.days.entries), so a new night computes its own date
    only. Only the records of the runs the report describes are held in memory."""
    from benchreport.store import StoreRequests, read_tables
    from benchreport.days.store_files import StoreCsvFragments, StoreDayCache, StoreHistoryCache
    from benchreport.store.read import store_load_result

    store = store.snapshot()  # one state of the store, whatever an ingest does meanwhile
    tables = read_tables(store)
    with store.cache_lock() as (root, note):
        if note and cache:
            _say_once(note, quiet)
        cache = cache and root is not None
        source = StoreRequests(store, tables.runs, cache=cache, cache_root=root)
        tables = replace(tables, requests=source.requests_of(described_runs(tables.runs)))
        return analyse_tables(
            tables,
            options,
            loaded=store_load_result(store),
            requests=source,
            quiet=quiet,
            day_cache=StoreDayCache(root) if cache else None,
            history_cache=StoreHistoryCache(root) if cache else None,
            csv_fragments=StoreCsvFragments(root) if cache else None,
        )


_SAID: set[str] = set()


def _say_once(note: str, quiet: bool) -> None:
    """A note about where the store's cache went, on stderr once per process (never with --quiet)."""
    if not quiet and note not in _SAID:
        _SAID.add(note)
        print(f"benchreport: {note}", file=sys.stderr)


def _described_requests(tables: Tables) -> Tables:
    """The tables with the request records of the described runs only (`described_runs`)."""
    r = tables.requests
    if r is None or not len(r):
        return tables
    keep = r["run_id"].astype(str).isin(described_runs(tables.runs)).to_numpy()
    return tables if keep.all() else replace(tables, requests=r[keep].reset_index(drop=True))


def analyse_tables(
    tables: Tables,
    options: Options = Options(),
    *,
    loaded: LoadResult | None = None,
    requests=None,
    quiet: bool = True,
    day_cache=None,
    history_cache=None,
    csv_fragments=None,
) -> Analysis:
    """Statistics and flags for tidy tables; `requests` a request source (benchreport.stats.requests)
    when the tables do not hold every request record (the run store), `day_cache` where each
    date's cells are kept (benchreport.days.entries), `history_cache` where the history walk is
    kept (benchreport.stats.history.HistoryDayCache)."""
    from benchreport.flags import decide_exclusions, drop_excluded, find, to_frame
    from benchreport.stats.compare import comparisons as compute_comparisons
    from benchreport.stats.exams import exam_deltas as compute_exam_deltas, exam_family
    from benchreport.stats.history import HistoryRule, history as compute_history
    from benchreport.days.history import history_days
    from benchreport.stats.history_summary import summarise_history
    from benchreport.stats.cells import bootstrap_cells
    from benchreport.stats.sessions import session_groups, session_level_cells, since_dates
    from benchreport.stats.agreement import agreement as compute_agreement

    th = options.thresholds
    note(f"analysing {len(tables.runs)} run(s) of {len(tables.seats)} seat(s)", quiet=quiet)
    # figures excluded from results (a prefix-cache hit is not prefill) are decided once, with
    # the user's thresholds: they never reach the statistics, and the flags say why from the
    # same decision
    excluded = decide_exclusions(tables, thresholds=th)
    kept = drop_excluded(tables, excluded)
    cellset = _estimate_cells(kept, requests, options, day_cache)
    rule = HistoryRule.from_thresholds(th)
    if history_cache is not None:  # a run store: the walk resumes, the table is kept date by date
        history, summary, history_tokens = history_days(
            cellset.dated, rule=rule, cache=history_cache, day_tokens=cellset.day_tokens
        )
    else:
        history, history_tokens = compute_history(cellset.dated, rule=rule), {}
        summary = summarise_history(history)
    sessions = session_groups(cellset.passes)  # passes within dates: the variance above the pass
    exam_deltas = compute_exam_deltas(
        tables.exams, tables.exam_items, tables.seats, baseline=options.baseline, alpha=th.alpha, power=th.power
    )
    comparisons = compute_comparisons(
        cellset,
        kept.seats,
        baseline=options.baseline,
        thresholds=th,
        multiplicity=options.multiplicity,
        primary=options.primary,
        history="all" if options.history_comparisons == "all" else "previous",
        levels=summary.latest,
        sessions=sessions,
        elsewhere=exam_family(exam_deltas),
    )
    # a cell measured on several dates of its steady level: the date as the unit (issue 43);
    # the history rows of `comparisons` above compare the dates themselves
    since = since_dates(summary.latest)
    cells = session_level_cells(cellset.cells, sessions, level=cellset.level, since=since)
    if options.ci_method != "t":  # --ci-method bootstrap: the cells' intervals resampled (issue 43)
        cells = bootstrap_cells(
            cells,
            cellset.pass_frame(),
            method=options.ci_method,
            n_resamples=options.n_boot,
            seed=options.seed,
            level=cellset.level,
            since=since,
        )
    # the same cell measured by several harnesses, each difference explained or not (issue 46)
    agreement = compute_agreement(cells, kept.runs, _described_requests(kept).requests, tolerance=th.cv_limit)
    findings = find(
        _described_requests(tables),
        cells=cells,
        comparisons=comparisons,
        exam_deltas=exam_deltas,
        excluded=excluded,
        thresholds=th,
        baseline=options.baseline,
        passes=cellset.notable,
        history=summary,
        agreement=agreement,
    )
    return Analysis(
        loaded or LoadResult(),
        tables,
        cells,
        comparisons,
        exam_deltas,
        to_frame(findings),
        options,
        pass_table=cellset.passes,
        excluded=excluded,
        findings=findings,
        history_table=history,
        history_summary=summary,
        day_tokens=cellset.day_tokens or None,
        csv_fragments=csv_fragments,
        history_tokens=history_tokens,
        request_counts=cellset.request_counts,
        session_groups=sessions,
        agreement=agreement,
    )


def _estimate_cells(kept: Tables, requests, options: Options, day_cache):
    """The cells by the route the data allows: a run store with a day cache is read date by date
    (benchreport.days.cells), anything else is estimated whole (benchreport.stats.cells). Both
    give the same tables."""
    from benchreport.days.cells import estimate_cells_by_day
    from benchreport.stats.cells import estimate_cells

    settings = dict(
        method=options.ci_method, n_resamples=options.n_boot, seed=options.seed, thresholds=options.thresholds
    )
    if day_cache is not None and hasattr(requests, "day_token"):
        return estimate_cells_by_day(kept.measurements, requests, kept.runs, cache=day_cache, **settings)
    return estimate_cells(kept.measurements, kept.requests if requests is None else requests, kept.runs, **settings)


def analyse_paths(
    paths, options: Options = Options(), *, max_file_bytes: int | None = None, quiet: bool = True
) -> Analysis:
    """Load and analyse in one call (for notebooks)."""
    kwargs = {} if max_file_bytes is None else {"max_file_bytes": max_file_bytes}
    return analyse(load(paths, progress=None if not quiet else False, **kwargs), options, quiet=quiet)


#: a text cell starting with one of these is a formula to a spreadsheet (OWASP "CSV Injection";
#: ASVS 1.2.10 adds NUL; the fullwidth forms are read as their ASCII twins by some)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n", "\x00", "\uff1d", "\uff0b", "\uff0d", "\uff20")
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def provenance(analysis: Analysis) -> pd.DataFrame:
    """Every file of the build, one row each (a file with several runs, one row per run):
    status ``read``, ``refused`` or ``skipped``, its path as given, and what was read from
    it or why not. The report's appendix summarises it; provenance.csv holds it in full."""
    t, loaded = analysis.tables, analysis.loaded
    runs = t.runs.sort_values(["source_file", "run_id"])
    read = pd.DataFrame(
        {
            "status": "read",
            "path": runs["source_file"].astype(str),
            "run_id": runs["run_id"].astype(str),
            "format": runs.get("source_format", pd.Series(None, index=runs.index)),
            "harness": runs.get("harness", pd.Series(None, index=runs.index)),
            "harness_version": runs.get("harness_version", pd.Series(None, index=runs.index)),
            "sha256": runs.get("source_sha256", pd.Series(None, index=runs.index)),
        }
    )
    refused = pd.DataFrame(
        [
            {"status": "refused", "path": r.path, "json_path": r.json_path, "reason": r.message}
            for r in (loaded.refused if loaded is not None else [])
        ]
    )
    skipped = pd.DataFrame(
        [
            {"status": "skipped", "path": s.path, "reason": s.reason}
            for s in (loaded.skipped if loaded is not None else [])
        ]
    )
    companions = _companion_rows(
        loaded, set(read["path"]) | set(refused.get("path", ())) | set(skipped.get("path", ()))
    )
    frames = [f for f in (read, companions, refused, skipped) if len(f)]
    out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return out.reindex(columns=PROVENANCE_COLUMNS)


#: provenance.csv's reason for a file read into the runs of another file
COMPANION_REASON = "read with the run file beside it (its request records, metadata or a twin)"


def _companion_rows(loaded, listed: set) -> pd.DataFrame:
    """Files read into the runs of another file (a harness's request records, metadata, twins): every
    file whose bytes were read and that is neither a run's source, refused nor skipped."""
    digests = getattr(loaded, "digests", None) or {}
    rows = [
        {"status": "read", "path": path, "sha256": digest, "reason": COMPANION_REASON}
        for path, digest in sorted(digests.items())
        if path not in listed
    ]
    return pd.DataFrame(rows)


def neutralise_cell(value):
    """A text cell a spreadsheet would run as a formula, prefixed with `'` (OWASP's rule); numbers,
    and text that is a plain number such as "-5.2", are left as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_START) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def _neutralised(col: pd.Series) -> pd.Series:
    """`neutralise_cell` over a column, calling it only where a text starts like a formula (a year
    of pass rows is millions of cells, almost none of them suspect)."""
    try:
        suspect = col.str.startswith(FORMULA_START).fillna(False).to_numpy(dtype=bool)
    except (AttributeError, TypeError):  # not a text column after all
        return col.map(neutralise_cell, na_action="ignore")
    if not suspect.any():
        return col
    out = col.astype(object).copy()
    out[suspect] = [neutralise_cell(v) for v in out[suspect]]
    return out


def _safe_frame(df: pd.DataFrame) -> pd.DataFrame:
    """The frame with every text cell a spreadsheet would run as a formula neutralised."""
    text_cols = [
        c for c in df.columns if not (pd.api.types.is_numeric_dtype(df[c]) or pd.api.types.is_bool_dtype(df[c]))
    ]
    if text_cols:
        df = df.copy()
        for c in text_cols:
            df[c] = _neutralised(df[c])
    return df


def write_csv(df: pd.DataFrame, path: Path) -> None:
    """`df` as CSV at `path`, text cells a spreadsheet would read as formulas made safe (`FORMULA_START`)."""
    _safe_frame(df).to_csv(path, index=False, lineterminator="\n", float_format=None)


def _csv_text(df: pd.DataFrame, *, header: bool = True) -> str:
    return _safe_frame(df).to_csv(index=False, header=header, lineterminator="\n", float_format=None)


def _csv_bytes(df: pd.DataFrame) -> bytes | None:
    """The CSV lines of some rows (each ending in a newline) as UTF-8, or None when a text cell
    holds a newline (its row would span two lines)."""
    for c in df.columns:
        if (df[c].dtype == object or isinstance(df[c].dtype, pd.StringDtype)) and _has_line_break(df[c]):
            return None
    return _csv_text(df, header=False).encode("utf-8")


def _has_line_break(col: pd.Series) -> bool:
    """Whether a text cell of `col` holds a newline (cells that are not text never do): the text's
    own search where the column is text (a year of pass rows is millions of cells), else cell by cell."""
    try:
        found = col.str.contains("\n", regex=False)
    except (AttributeError, TypeError):  # not a column of text after all
        return bool(col.astype(object).map(lambda v: isinstance(v, str) and "\n" in v).any())
    return bool(found.fillna(False).astype(bool).any())


def _csv_of_days(days, path: Path, fragments, header: pd.DataFrame, tokens: dict | None = None) -> None:
    """A table kept date by date (the pass table of a run store, benchreport.days.entries.PassDays;
    its history, benchreport.days.history.HistoryDays) as CSV, one date at a time: both tables
    are their dates' rows one after another, so each date's lines (kept in `fragments` by the
    date's token, as the bytes written) are written in turn and a year of them is never held.
    A kept date is copied as it is, checked only to hold one line per row: a year of a fleet's
    pass rows is a gigabyte of CSV, not to be split into lines and joined again on every build.
    The same bytes as `_csv` of the whole table (a test checks it). `header`: an empty frame
    with the table's columns."""
    tokens = days.tokens if tokens is None else tokens
    with open(path, "wb") as f:
        f.write(_csv_text(header).encode("utf-8"))
        for d in days.days:
            token = tokens.get(d) if fragments is not None else None
            data = fragments.load(d, token) if token else None
            if data is None or data.count(b"\n") != days.counts[d]:
                data = _csv_bytes(days.typed(d))
                if data is None:  # a text cell holds a line break: the whole table, as `_csv` writes it
                    f.close()
                    return write_csv(days.frame(), path)
                if token:
                    fragments.save(d, token, data)
            f.write(data)


def _history_or_empty(analysis: Analysis) -> pd.DataFrame:
    from benchreport.stats.history import history

    return analysis.history if analysis.history is not None else history(None)


def write_analysis(analysis: Analysis, out_dir: str | os.PathLike) -> list[Path]:
    """`OUT/tables/{cells,comparisons,exam_deltas,passes,history,sessions,seats,agreement}.csv`, `OUT/flags.json`,
    `OUT/refused.json`, `OUT/provenance.csv` (`provenance`)."""
    from benchreport.days.entries import PassDays, typed_passes
    from benchreport.stats.history import history
    from benchreport.days.history import HistoryDays

    out = Path(out_dir)
    tables_dir = out / "tables"
    tables_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name in ("cells", "comparisons", "exam_deltas", "passes", "history"):
        path = tables_dir / f"{name}.csv"
        frag = analysis.csv_fragments
        if name == "passes" and isinstance(analysis.pass_table, PassDays):
            _csv_of_days(analysis.pass_table, path, frag.of("passes") if frag is not None else None, typed_passes(None))
        elif name == "history" and isinstance(analysis.history_table, HistoryDays):
            _csv_of_days(
                analysis.history_table,
                path,
                frag.of("history") if frag is not None else None,
                history(None),
                analysis.history_tokens or {},
            )
        else:
            write_csv(_history_or_empty(analysis) if name == "history" else getattr(analysis, name), path)
        written.append(path)
    # variance between sessions (dates) where a cell was measured on several (issue 30)
    from benchreport.stats.sessions import session_table

    path = tables_dir / "sessions.csv"
    write_csv(session_table(analysis.pass_table, analysis.session_groups), path)
    written.append(path)
    # the seats as the run files name them, whole (the report shortens long names for display)
    path = tables_dir / "seats.csv"
    write_csv(analysis.tables.seats, path)
    written.append(path)
    # one seat's cell measured by several harnesses, side by side (issue 46)
    from benchreport.stats.agreement import AGREEMENT_COLUMNS

    path = tables_dir / "agreement.csv"
    agreement = analysis.agreement if analysis.agreement is not None else pd.DataFrame(columns=AGREEMENT_COLUMNS)
    write_csv(agreement, path)
    written.append(path)
    path = out / "flags.json"
    path.write_text(json.dumps(analysis.flags_records(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    written.append(path)
    path = out / "refused.json"
    path.write_text(analysis.loaded.refused_json(), encoding="utf-8")
    written.append(path)
    path = out / "provenance.csv"
    write_csv(provenance(analysis), path)
    written.append(path)
    return written


def save_analysis(analysis: Analysis, path: str | os.PathLike) -> str:
    """Save an analysis for a report notebook to read (`Report.open(analysis_file=...)`; pickle:
    written and read by the same benchreport, never a user's file, so never one from elsewhere).
    Written beside and renamed into place, so a reader never reads half a file."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.part")
    with open(tmp, "wb") as f:
        pickle.dump(analysis, f, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, path)
    return str(path)


def load_analysis(path: str | os.PathLike) -> Analysis:
    """The analysis `save_analysis` wrote."""
    with open(path, "rb") as f:
        return pickle.load(f)
