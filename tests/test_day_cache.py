"""The run store's per-date cache of pass rows and cells (benchreport.days.entries): a cold,
a warm and a one-new-night analysis give the tables a full analysis without the cache gives,
byte for byte, and only the dates whose inputs changed are computed."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from benchreport.days.cells import estimate_cells_by_day
from benchreport.days.store_files import StoreDayCache
from benchreport.pipeline import Options, analyse_store
from benchreport.stats import estimate_cells
from benchreport.store import Store, StoreRequests, ingest, read_tables
from benchreport.thresholds import Thresholds

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from generate import generate  # noqa: E402

TABLES = ("cells", "comparisons", "passes", "history", "flags", "exam_deltas")


@pytest.fixture()
def archive(tmp_path):
    """Three passes one night, one pass the next (its cells borrow the first night's variance),
    two passes the third, and the example data (reported figures, exams, a prefix-cache hit)."""
    runs = tmp_path / "runs"
    kw = dict(seats=3, requests=40, concurrencies=(1, 4))
    generate(runs / "2026-11-01", passes=3, date="2026-11-01", **kw)
    generate(runs / "2026-11-02", passes=1, date="2026-11-02", seed=3, **kw)
    generate(runs / "2026-11-03", passes=2, date="2026-11-03", seed=5, **kw)
    shutil.copytree(ROOT / "data" / "example", runs / "example")
    return runs


def _same(a, b) -> None:
    for name in TABLES:
        x, y = getattr(a, name), getattr(b, name)
        assert x.to_csv(index=False) == y.to_csv(index=False), name
        assert list(x.dtypes.astype(str)) == list(y.dtypes.astype(str)), name
    assert a.flags_records() == b.flags_records()
    _same_summary(a.history_summary, b.history_summary)


def _cells(store: Store, th: Thresholds = Thresholds()):  # noqa: B008 - a frozen value
    """The cells as analyse_store estimates them (exclusions first), with the cache it used."""
    from benchreport.flags import decide_exclusions, drop_excluded

    t = read_tables(store)
    t = drop_excluded(t, decide_exclusions(t, thresholds=th))
    cache = StoreDayCache(store.root)
    cs = estimate_cells_by_day(
        t.measurements,
        StoreRequests(store, t.runs),
        t.runs,
        cache=cache,
        thresholds=th,
        method="BCa",
        n_resamples=300,
        seed=0,
    )
    return cs, cache


def _dated(cs) -> str:
    """The dated cells as the history reads them (a store keeps DATED_COLUMNS only), in one order."""
    from benchreport.stats.cells import DATED_COLUMNS

    d = cs.dated[DATED_COLUMNS]
    return d.sort_values(
        ["seat", "harness", "probe", "workload", "concurrency", "metric", "statistic", "date"], kind="stable"
    ).to_csv(index=False)


def test_cold_warm_and_new_night_equal_a_full_analysis(archive, tmp_path):
    ingest([archive / d for d in ("example", "2026-11-01", "2026-11-02", "2026-11-03")], tmp_path / "store")
    store = Store.open(tmp_path / "store")
    opts = Options(n_boot=300, baseline="seat-000")
    full = analyse_store(store, opts, cache=False)
    routes = set(full.cells["ci_route"].dropna())
    # cells of one date and cells over the store's dates (issue 43: t on the dates' means) are both here
    assert "t_log" in routes and routes & {"t_log_sessions", "t_log_pooled"}, routes
    _same(analyse_store(store, opts), full)  # cold: every date computed and kept
    _same(analyse_store(store, opts), full)  # warm: every date read back
    cs, cache = _cells(store)
    assert cache.written == [] and sorted(cache.read) == store.dates()
    generate(archive / "2026-11-04", seats=3, passes=3, requests=40, concurrencies=(1, 4), date="2026-11-04", seed=7)
    ingest([archive / "2026-11-04"], store.root)
    _same(analyse_store(store, opts), analyse_store(store, opts, cache=False))
    cs, cache = _cells(store)
    assert cache.written == [] and "2026-11-04" in cache.read


def test_only_the_dates_whose_inputs_changed_are_computed(archive, tmp_path):
    ingest([archive / d for d in ("2026-11-01", "2026-11-02", "2026-11-03")], tmp_path / "store")
    store = Store.open(tmp_path / "store")
    _cells(store)
    generate(archive / "2026-11-04", seats=3, passes=3, requests=40, concurrencies=(1, 4), date="2026-11-04", seed=7)
    ingest([archive / "2026-11-04"], store.root)
    _, cache = _cells(store)
    assert cache.written == ["2026-11-04"]
    # a changed file of an old night is a new version: that night, and only it, is computed again
    f = sorted((archive / "2026-11-01").glob("*.json"))[0]
    doc = json.loads(f.read_text())
    doc["requests"][0]["ttft_ms"] = float(doc["requests"][0]["ttft_ms"]) * 3
    f.write_text(json.dumps(doc))
    ingest([archive / "2026-11-01"], store.root)
    cs, cache = _cells(store)
    assert cache.written == ["2026-11-01"]
    t = read_tables(store)
    plain = estimate_cells(t.measurements, StoreRequests(store, t.runs), t.runs, n_resamples=300)
    assert _dated(cs) == _dated(plain)
    assert cs.pass_frame().to_csv(index=False) == plain.passes.to_csv(index=False)
    # other thresholds are other inputs: every date is computed with them
    _, cache = _cells(store, Thresholds(min_tail_obs=20))
    assert sorted(cache.written) == store.dates()


def test_a_damaged_entry_is_computed_again(archive, tmp_path):
    ingest([archive / "2026-11-01", archive / "2026-11-02"], tmp_path / "store")
    store = Store.open(tmp_path / "store")
    first, _ = _cells(store)
    for p in (store.root / ".cache" / "cells").glob("2026-11-01-*.cells.arrow"):
        p.write_bytes(b"not parquet")
    again, cache = _cells(store)
    assert cache.written == ["2026-11-01"]  # the damaged date computed and kept again, the other read
    assert _dated(again) == _dated(first)
    assert again.pass_frame().to_csv(index=False) == first.pass_frame().to_csv(index=False)


def _same_summary(a, b) -> None:
    for name in ("n_rows", "dates", "seats", "n_cells", "verdicts", "concurrencies"):
        assert getattr(a, name) == getattr(b, name), name
    for name in ("decided", "latest", "panels"):
        assert getattr(a, name).to_csv(index=False) == getattr(b, name).to_csv(index=False), name


def test_the_history_walk_resumes_after_the_last_date_it_saw(archive, tmp_path):
    from benchreport.stats.history import HistoryRule, history
    from benchreport.days.history import history_days
    from benchreport.stats.history_summary import summarise_history
    from benchreport.days.store_files import StoreHistoryCache

    ingest([archive / d for d in ("2026-11-01", "2026-11-02", "2026-11-03")], tmp_path / "store")
    store = Store.open(tmp_path / "store")
    rule = HistoryRule(min_level=2)  # a test from the third date on: the resumed walk tests against its level
    first, _ = _cells(store)
    cache = StoreHistoryCache(store.root)
    history_days(first.dated, rule=rule, cache=cache)
    assert cache.resumed_after is None  # nothing saved yet: walked from the start
    generate(archive / "2026-11-04", seats=3, passes=3, requests=40, concurrencies=(1, 4), date="2026-11-04", seed=7)
    ingest([archive / "2026-11-04"], store.root)
    now, _ = _cells(store)
    cache = StoreHistoryCache(store.root)
    days, summary, _ = history_days(now.dated, rule=rule, cache=cache)
    assert cache.resumed_after == "2026-11-03"
    walked = history(now.dated, rule=rule)
    assert days.frame().to_csv(index=False) == walked.to_csv(index=False)
    assert walked.loc[walked["date"] == "2026-11-04", "p_value"].notna().all()
    _same_summary(summary, summarise_history(walked))
    # an earlier date that changed is not resumed over: the walk starts again
    changed = now.dated.copy()
    changed.loc[changed["date"] == "2026-11-02", "estimate"] *= 1.5
    cache = StoreHistoryCache(store.root)
    days, summary, _ = history_days(changed, rule=rule, cache=cache)
    assert cache.resumed_after is None
    assert days.frame().to_csv(index=False) == history(changed, rule=rule).to_csv(index=False)
    # another rule is another walk
    cache = StoreHistoryCache(store.root)
    history_days(changed, rule=HistoryRule(min_level=3), cache=cache)
    assert cache.resumed_after is None
    # an earlier date's kept rows gone: walked again from the start, the same table
    cache = StoreHistoryCache(store.root)
    history_days(changed, rule=rule, cache=cache)
    (f,) = (store.root / ".cache" / "history").glob("2026-11-02-*.arrow")
    f.unlink()
    cache = StoreHistoryCache(store.root)
    days, summary, _ = history_days(changed, rule=rule, cache=cache)
    assert cache.resumed_after is None
    assert days.frame().to_csv(index=False) == history(changed, rule=rule).to_csv(index=False)
    _same_summary(summary, summarise_history(history(changed, rule=rule)))


def test_passes_csv_from_each_dates_kept_lines_is_the_same_file(archive, tmp_path):
    from benchreport.pipeline import write_analysis

    ingest([archive / d for d in ("example", "2026-11-01", "2026-11-02", "2026-11-03")], tmp_path / "store")
    store = Store.open(tmp_path / "store")
    opts = Options(n_boot=300, baseline="seat-000")
    write_analysis(analyse_store(store, opts, cache=False), tmp_path / "plain")
    for run in ("cold", "warm"):
        a = analyse_store(store, opts)
        assert a.csv_fragments is not None and a.day_tokens
        write_analysis(a, tmp_path / run)
        for name in ("passes", "cells", "comparisons", "history"):
            got = (tmp_path / run / "tables" / f"{name}.csv").read_bytes()
            assert got == (tmp_path / "plain" / "tables" / f"{name}.csv").read_bytes(), (run, name)
    assert len(list((store.root / ".cache" / "csv").glob("*.passes.csv"))) == len(store.dates())
    assert len(list((store.root / ".cache" / "csv").glob("*.history.csv"))) >= 2


def test_lines_by_date_keep_formulas_neutralised_and_fall_back_on_a_newline(tmp_path):
    import pandas as pd

    from benchreport.pipeline import _csv_of_days, write_csv

    class Memory:
        def __init__(self):
            self.kept = {}

        def load(self, day, token):
            return self.kept.get((day, token))

        def save(self, day, token, lines):
            self.kept[(day, token)] = lines

    class Days:  # a table kept date by date, as PassDays and HistoryDays are
        def __init__(self, df, tokens):
            self.df, self.tokens = df, tokens
            self.days = sorted(set(df["date"]))
            self.counts = {d: int((df["date"] == d).sum()) for d in self.days}

        def typed(self, d):
            return self.df[self.df["date"] == d].reset_index(drop=True)

        def frame(self):
            return self.df

    df = pd.DataFrame(
        {
            "seat": pd.array(["b", "=HYPERLINK(1)", "a", "séat\rcarriage"], dtype="string"),
            "date": pd.array(["2026-01-01", "2026-01-01", "2026-01-02", "2026-01-02"], dtype="string"),
            "value": [1.5, float("nan"), 1e-7, 3.0],
            "n": pd.array([1, None, 3, 4], dtype="Int64"),
        }
    )
    write_csv(df, tmp_path / "plain.csv")
    frag = Memory()
    days = Days(df, {"2026-01-01": "t1", "2026-01-02": "t2"})
    for run in ("cold", "warm"):
        _csv_of_days(days, tmp_path / f"{run}.csv", frag, df.iloc[:0])
        assert (tmp_path / f"{run}.csv").read_bytes() == (tmp_path / "plain.csv").read_bytes()
    assert len(frag.kept) == 2 and "'=HYPERLINK(1)" in (tmp_path / "warm.csv").read_text()
    frag.kept[("2026-01-02", "t2")] = frag.kept[("2026-01-02", "t2")].split(b"\n", 1)[1]  # a line lost
    _csv_of_days(days, tmp_path / "mended.csv", frag, df.iloc[:0])
    assert (tmp_path / "mended.csv").read_bytes() == (tmp_path / "plain.csv").read_bytes()
    df.loc[0, "seat"] = "two\nlines"
    write_csv(df, tmp_path / "plain2.csv")
    _csv_of_days(Days(df, {"2026-01-01": "u1", "2026-01-02": "u2"}), tmp_path / "nl.csv", Memory(), df.iloc[:0])
    assert (tmp_path / "nl.csv").read_bytes() == (tmp_path / "plain2.csv").read_bytes()


def test_cells_made_in_batches_are_the_cells_made_at_once(archive, tmp_path, monkeypatch):
    import importlib

    cells_module = importlib.import_module("benchreport.stats.cells")

    ingest([archive / d for d in ("example", "2026-11-01", "2026-11-02", "2026-11-03")], tmp_path / "store")
    store = Store.open(tmp_path / "store")
    t = read_tables(store)
    whole = estimate_cells(t.measurements, StoreRequests(store, t.runs), t.runs, n_resamples=300)
    monkeypatch.setattr(cells_module, "_BATCH", 7)
    batched = estimate_cells(t.measurements, StoreRequests(store, t.runs), t.runs, n_resamples=300)
    assert _dated(batched) == _dated(whole)
    assert batched.cells.to_csv(index=False) == whole.cells.to_csv(index=False)


def test_a_date_that_is_not_a_plain_date_is_never_a_file_name(tmp_path):
    from benchreport.days.store_files import StoreCsvFragments

    frag = StoreCsvFragments(tmp_path)
    frag.save("../../escape", "a" * 64, b"x\n")
    frag.save("2026-01-01", "../" + "a" * 61, b"x\n")
    assert not (tmp_path / ".cache").exists() and not (tmp_path.parent / "escape").exists()
    assert frag.load("../../escape", "a" * 64) is None
    days = StoreDayCache(tmp_path)
    assert days.load("2026-01-01/../../x", "b" * 64) is None
    frag.save("2026-01-01", "c" * 64, b"x\n")
    assert frag.load("2026-01-01", "c" * 64) == b"x\n"


def test_session_statistics_are_kept_per_date_and_read_back_the_same(archive, tmp_path):
    """Each date's per-cell session statistics (benchreport.stats.sessions) are kept beside its
    pass rows: a warm analysis reads them, a damaged file is computed again, and the statistics,
    their order and sessions.csv equal an analysis with no cache."""
    from benchreport.stats.sessions import SESSION_STATS_NAME, session_table

    ingest([archive / d for d in ("2026-11-01", "2026-11-02", "2026-11-03")], tmp_path / "store")
    store = Store.open(tmp_path / "store")
    opts = Options(n_boot=300)
    plain = analyse_store(store, opts, cache=False)
    cold = analyse_store(store, opts)
    kept = sorted((tmp_path / "store" / ".cache" / "cells").glob(f"*.{SESSION_STATS_NAME}.arrow"))
    assert [p.name[:10] for p in kept] == store.dates()
    kept[1].write_text("{ damaged")
    kept[2].write_bytes(kept[2].read_bytes()[: len(kept[2].read_bytes()) // 2])  # cut short
    for other in (cold, analyse_store(store, opts), analyse_store(store, opts)):
        assert list(other.session_groups) == list(plain.session_groups)
        assert other.session_groups == plain.session_groups
        assert repr(other.session_groups) == repr(plain.session_groups)  # the same types: 4, not 4.0
        assert session_table(None, other.session_groups).equals(session_table(None, plain.session_groups))


def test_a_dates_session_statistics_read_back_as_computed_whatever_their_keys():
    """A date's session statistics kept as Arrow read back to the keys, numbers, types and order
    `_date_stats` gives; keys Arrow's columns cannot hold as they are (a concurrency of 1.5, a
    numeric probe) are kept as JSON and read back the same."""
    import pandas as pd

    from benchreport.stats.sessions import KEY, _add_date_stats, _date_stats, _date_stats_table

    def passes(over=None):
        over = over or {}
        rows = []
        for i, (seat, conc) in enumerate([("a", 1), ("a", 4), ("b", None), ("a", 1), ("b", None)]):
            row = dict(
                seat=seat,
                harness="h",
                probe=None,
                load_id=None,
                workload="decode",
                concurrency=conc,
                metric="output_tok_s",
                statistic="mean",
                date="2026-01-02",
                value=[3.0, 5.0, 7.0, 11.0, 1e-300][i],
            )
            rows.append({**row, **over.get(i, {})})
        frame = pd.DataFrame(rows, columns=[*KEY, "date", "value"])
        if all(r["concurrency"] is None or isinstance(r["concurrency"], int) for r in rows):
            frame["concurrency"] = pd.array([r["concurrency"] for r in rows], dtype="Int64")  # as a pass table has it
        return frame

    for frame in (passes(), passes({1: {"concurrency": 1.5}}), passes({2: {"probe": 7}})):
        direct: dict = {}
        _date_stats(frame, direct)
        table = _date_stats_table(frame)
        back: dict = {}
        _add_date_stats(back, table)
        assert repr(back) == repr(direct) and list(back) == list(direct)
    assert "json" not in _date_stats_table(passes()).column_names
    assert _date_stats_table(passes({1: {"concurrency": 1.5}})).column_names == ["json"]


def test_row_hashes_made_a_block_at_a_time_are_the_hashes_of_the_whole_table(monkeypatch):
    """A date's key hashes each row of the measurements; hashed a block of rows at a time (to hold
    a block, not a year, as Python objects) they are the numbers pandas gives for the whole table,
    whatever the block size and with missing values, mixed types and text."""
    import numpy as np
    import pandas as pd

    from benchreport.days import entries

    rng = np.random.default_rng(7)
    n = 53
    frame = pd.DataFrame(
        {
            "run_id": [f"r{i % 11}" for i in range(n)],
            "date": pd.array([None if i % 13 == 0 else f"2026-01-{1 + i % 28:02d}" for i in range(n)], dtype="string"),
            "concurrency": pd.array([None if i % 7 == 0 else int(i % 5) for i in range(n)], dtype="Int64"),
            "value": np.where(rng.random(n) < 0.1, np.nan, rng.lognormal(3, 1, n)),
            "unit": ["tok/s", "ms", "é", None] * 13 + ["x"],
        }
    )
    whole = pd.util.hash_pandas_object(frame.astype(object), index=False).to_numpy()
    for block in (1, 5, 7, 52, 53, 1000):
        monkeypatch.setattr(entries, "_HASH_ROWS", block)
        assert np.array_equal(entries._row_hashes(frame), whole)
    assert entries._row_hashes(frame.iloc[:0]).shape == (0,)


def test_a_line_break_is_found_in_any_kind_of_text_column():
    """A date's CSV lines are kept as bytes only when no text cell holds a line break; the search
    is the text's own where the column is text, cell by cell where it is not (the same answer)."""
    import pandas as pd

    from benchreport.pipeline import _has_line_break

    cases = [
        (pd.Series(["a", None, "b"], dtype="string"), False),
        (pd.Series(["a", None, "b\nc"], dtype="string"), True),
        (pd.Series(["a", pd.NA, "x\r\ny"], dtype="string[pyarrow]"), True),
        (pd.Series([1, None, "b\n", 2.5], dtype=object), True),
        (pd.Series([1, None, "b", 2.5], dtype=object), False),
        (pd.Series([1, 2, 3], dtype=object), False),  # no text at all: cell by cell
        (pd.Series([None, None], dtype=object), False),
        (pd.Series([["a\n"], "b"], dtype=object), False),  # only text cells count
        (pd.Series([], dtype=object), False),
    ]
    for col, want in cases:
        assert _has_line_break(col) is want, (col.tolist(), col.dtype)
        assert col.astype(object).map(lambda v: isinstance(v, str) and "\n" in v).any() == want
