"""The per-pass request figures of a run store by one SQL query (issue 44, "history at the speed
of SQL"): every group summary of some dates, as `benchreport.stats.requests.summarise` gives it,
bit for bit.

A group is the request records of one (run, workload, concurrency) of a date. Per group the
query counts its requests and failures (`failed_mask`: an error, or finish_reason error,
cancelled or incomplete) and, per metric of REQUEST_METRICS (decode_tok_s_per_stream derived as
`metric_values` derives it, the same IEEE operations in the same order), over its successful
requests' finite values:

- the mean: the left-to-right sum of the sorted values (`list_sum(list_sort(...))`) over n,
  `benchreport.stats.common.sorted_mean`;
- numpy's 'linear' quantiles (`quantile_positions` and numpy's `_lerp`, macro `lin`) and the
  tail quantiles' pass estimates (Hyndman & Fan definition 8, `median_unbiased_sorted`, macro
  `hf8`), over the sorted values;
- n, and the lag-1 autocorrelation in send order (`lag1_autocorrelation`: centred on the mean
  above, both sums left to right). Send order: by start_ms, then stored order, when every
  record of the group has a finite start_ms; else stored order (`_send_order`).

The rows are those `benchreport.store.read` reads for the same dates: of a Parquet store the
listed parts' rows of the file versions in use, of a DuckLake store the rows of the (version,
batch) pairs in use at its snapshot; each request row kept only where its run's row is there.

A group's figures depend on one stored file version only, so the ingest that writes a version
computes them (`batch_figures`) and keeps them in the stored table `pass_figures`; a reader reads
them (`kept_summaries`) and runs the query only for versions that have none of this
SUMMARY_VERSION (`store_summaries`).
"""

from __future__ import annotations

import math

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.compute  # noqa: F401 - pa.compute

from benchreport.columns import QUANTILES, REQUEST_METRICS, REQUEST_STATISTICS
from benchreport.stats.requests import FAILED_REASONS, TAIL_STATISTICS, GroupSummary, estimate_key

from .layout import StoreDamaged

__all__ = [
    "FIGURES_TABLE",
    "MACROS_SQL",
    "READ_COLUMNS",
    "RUNS_PER_QUERY",
    "SUMMARY_VERSION",
    "batch_figures",
    "date_batches",
    "figures_sql",
    "kept_summaries",
    "store_summaries",
    "summaries_of_rows",
]

#: bump when what a group summary holds changes: cached summaries and the stored `pass_figures`
#: rows of older code are not used (those versions' figures are computed again, by SQL)
SUMMARY_VERSION = 3  # 2: the tail quantiles' Harrell-Davis estimates (issue 43); 3: the mean and lag-1
# as left-to-right sums, by SQL (issue 44)

#: the stored table of every group's figures, written by the ingest that writes its run's rows
FIGURES_TABLE = "pass_figures"

#: the linear quantile (`quantile_positions` + `lerp`), definition 8 (`median_unbiased_sorted`)
#: and the lag-1 autocorrelation's last step, as DuckDB macros over a sorted list xs of n values
MACROS_SQL = """
CREATE OR REPLACE TEMP MACRO lin_lerp(a, b, t) AS
  CASE WHEN t >= 0.5::DOUBLE THEN b - (b - a) * (1.0::DOUBLE - t) ELSE a + (b - a) * t END;
CREATE OR REPLACE TEMP MACRO lin_at(xs, n, v) AS
  CASE WHEN v >= CAST(n - 1 AS DOUBLE) THEN lin_lerp(xs[n], xs[n], v - floor(v))
       ELSE lin_lerp(xs[CAST(floor(v) AS BIGINT) + 1], xs[CAST(floor(v) AS BIGINT) + 2], v - floor(v)) END;
CREATE OR REPLACE TEMP MACRO lin(xs, n, q) AS lin_at(xs, n, CAST(n - 1 AS DOUBLE) * q);
CREATE OR REPLACE TEMP MACRO hf8_at(xs, n, v) AS
  xs[CAST(floor(v) AS BIGINT) + 1]
  + (xs[least(CAST(floor(v) AS BIGINT) + 2, n)] - xs[CAST(floor(v) AS BIGINT) + 1]) * (v - floor(v));
CREATE OR REPLACE TEMP MACRO hf8(xs, n, q) AS hf8_at(xs, n, least(greatest(
  (CAST(n AS DOUBLE) + 1.0::DOUBLE / 3.0::DOUBLE) * q + 1.0::DOUBLE / 3.0::DOUBLE - 1.0::DOUBLE,
  0.0::DOUBLE), CAST(n AS DOUBLE) - 1.0::DOUBLE));
CREATE OR REPLACE TEMP MACRO lag1_ratio(num, den) AS CASE WHEN den = 0.0::DOUBLE THEN NULL ELSE num / den END;
"""

#: the columns the query reads (absent ones are NULL)
READ_COLUMNS = (
    "day",
    "run_id",
    "seat",
    "date",
    "pass",
    "workload",
    "concurrency",
    "output_tokens",
    "ttft_ms",
    "e2e_latency_ms",
    "itl_ms",
    "finish_reason",
    "error",
    "start_ms",
    "seq",
)
_GROUP = "day, run_id, workload, concurrency"


def _double(q: float) -> str:
    """A DOUBLE literal of exactly q (parsed from its shortest repr, never a DECIMAL)."""
    return f"CAST('{float(q)!r}' AS DOUBLE)"


def _metric_sql() -> str:
    """Each metric of a request row: its finite value (+ 0.0: -0.0 is 0.0, as `metric_values`
    has it) when the request succeeded, else NULL."""
    failed = ", ".join(f"'{r}'" for r in FAILED_REASONS)
    dec = (
        "CASE WHEN tok > 1 AND e2e > ttft AND isfinite(tok) AND isfinite(e2e) AND isfinite(ttft) "
        "THEN (tok - 1.0::DOUBLE) / ((e2e - ttft) / 1000.0::DOUBLE) END"
    )
    raw = {"ttft_ms": "ttft", "itl_ms": "itl", "e2e_latency_ms": "e2e", "decode_tok_s_per_stream": dec}
    if set(raw) != set(REQUEST_METRICS):
        raise ValueError(f"the SQL figures know {sorted(raw)}, REQUEST_METRICS is {sorted(REQUEST_METRICS)}")
    cols = ",\n    ".join(
        f"CASE WHEN NOT failed AND isfinite({raw[m]}) THEN {raw[m]} + 0.0::DOUBLE END AS {m}" for m in REQUEST_METRICS
    )
    return f"""SELECT {_GROUP}, seat, date, pass, seq, start, failed,
    {cols}
  FROM (SELECT *, error IS NOT NULL OR coalesce(finish_reason IN ({failed}), false) AS failed FROM typed)"""


def figures_sql(rows: str) -> str:
    """The query of every group's figures over `rows` (a FROM item with the columns `READ_COLUMNS`):
    one row per group and metric with finite values (metric NULL for a group with none)."""
    stats = ",\n    ".join(
        [
            "u.mean AS mean" if s == "mean" else f"lin(u.xs, u.n, {_double(QUANTILES[s])}) AS {s}"
            for s in REQUEST_STATISTICS
        ]
        + [f'hf8(u.xs, u.n, {_double(QUANTILES[s])}) AS "{estimate_key(s)}"' for s in TAIL_STATISTICS]
    )
    return f"""
WITH typed AS (
  SELECT CAST(day AS VARCHAR) AS day, coalesce(CAST(run_id AS VARCHAR), '<NA>') AS run_id,
         coalesce(CAST(seat AS VARCHAR), '<NA>') AS seat, coalesce(CAST(date AS VARCHAR), '<NA>') AS date,
         CAST(pass AS BIGINT) AS pass, coalesce(CAST(workload AS VARCHAR), '<NA>') AS workload,
         coalesce(TRY_CAST(concurrency AS BIGINT), -1) AS concurrency, CAST(seq AS BIGINT) AS seq,
         TRY_CAST(output_tokens AS DOUBLE) AS tok, TRY_CAST(ttft_ms AS DOUBLE) AS ttft,
         TRY_CAST(e2e_latency_ms AS DOUBLE) AS e2e, TRY_CAST(itl_ms AS DOUBLE) AS itl,
         TRY_CAST(start_ms AS DOUBLE) AS start, CAST(finish_reason AS VARCHAR) AS finish_reason,
         CAST(error AS VARCHAR) AS error
  FROM {rows}
), r AS (
  {_metric_sql()}
), w AS (
  SELECT *, CASE WHEN bool_and(coalesce(isfinite(start), false)) OVER (PARTITION BY {_GROUP}) THEN start END AS okey
  FROM r
), g AS (
  SELECT {_GROUP}, count(*) AS n_requests, count(*) FILTER (WHERE failed) AS n_failed,
         first(seat ORDER BY okey NULLS LAST, seq) AS seat, first(date ORDER BY okey NULLS LAST, seq) AS date,
         first(pass ORDER BY okey NULLS LAST, seq) AS pass
  FROM w GROUP BY ALL
), long AS (
  UNPIVOT (SELECT {_GROUP}, okey, seq, {", ".join(REQUEST_METRICS)} FROM w)
  ON {", ".join(REQUEST_METRICS)} INTO NAME metric VALUE x
), m AS (
  SELECT {_GROUP}, metric, count(*) AS n, list(x ORDER BY okey NULLS LAST, seq) AS xo FROM long GROUP BY ALL
), s AS (
  SELECT *, list_sort(xo) AS xs FROM m
), t AS (
  SELECT *, list_sum(xs) / n AS mean FROM s
), u AS (
  SELECT *, CASE WHEN n >= 3 THEN list_transform(xo, lambda v: v - mean) END AS d FROM t
)
SELECT g.day, g.run_id, g.workload, g.concurrency, g.seat, g.date, g.pass, g.n_requests, g.n_failed,
    u.metric, u.n,
    {stats},
    lag1_ratio(list_sum(list_transform(range(1, u.n), lambda i: u.d[i] * u.d[i + 1])),
               list_sum(list_transform(u.d, lambda v: v * v))) AS lag1
FROM g LEFT JOIN u USING ({_GROUP})
"""


def _columns(con, from_sql: str, params: list) -> set[str]:
    return {row[0] for row in con.execute(f"DESCRIBE SELECT * FROM {from_sql}", params).fetchall()}


def _select_list(have: set[str], alias: str) -> str:
    return ", ".join(f"{alias}.{c}" if c in have else f"NULL AS {c}" for c in READ_COLUMNS)


def _parquet_rows(con, store, shas, days) -> tuple[str, list] | None:
    """The FROM item (and its parameters) of the Parquet store's request rows of `days`: the
    listed parts' rows of the versions in use, each where its run's row (of its date) is read."""
    want = set(shas)
    pairs, run_pairs = [], []
    for day in days:
        for table, out in (("requests", pairs), ("runs", run_pairs)):
            for f, ss in store.part_files(table, day):
                out.extend((f, s) for s in ss if s in want)
    if not pairs or not run_pairs:
        return None
    for name, p in (("figures_use", pairs), ("figures_use_runs", run_pairs)):
        con.register(name, pa.table({"filename": [f for f, _ in p], "sha": [s for _, s in p]}))
    src = (
        "read_parquet(?::VARCHAR[], hive_partitioning = true, hive_types_autocast = false, "
        "union_by_name = true, filename = true)"
    )
    files = sorted({f for f, _ in pairs})
    run_files = sorted({f for f, _ in run_pairs})
    have = _columns(con, src, [files])
    rows = (
        f"(SELECT {_select_list(have, 't')} FROM {src} AS t "
        "SEMI JOIN figures_use AS u ON t.filename = u.filename AND t.file_sha = u.sha "
        f"JOIN (SELECT r.run_id, r.day FROM {src} AS r SEMI JOIN figures_use_runs AS v "
        "ON r.filename = v.filename AND r.file_sha = v.sha) AS o ON o.run_id = t.run_id AND o.day = t.day)"
    )
    return rows, [files, run_files]


def _lake_rows(con, store, shas, days) -> tuple[str, list] | None:
    """The FROM item of a DuckLake store's request rows of `days`: the rows of the (version,
    batch) pairs in use at its snapshot, each where its run's row is there."""
    use = store.in_use()
    use = use[use["sha256"].astype(str).isin(set(shas))] if len(use) else use
    if not len(use) or not store.has("requests") or not store.has("runs"):
        return None
    con.register(
        "figures_pairs", pa.table({"sha": use["sha256"].astype(str).tolist(), "b": use["batch"].astype(str).tolist()})
    )
    days = sorted({str(d) for d in days})

    def rows(table: str) -> str:
        return (
            f"(SELECT * FROM {store.table_sql(table)} WHERE list_contains(?::VARCHAR[], day)) AS x "
            "SEMI JOIN figures_pairs AS u ON x.file_sha = u.sha AND x.batch = u.b"
        )

    have = _columns(con, store.table_sql("requests"), [])
    sql = (
        f"(SELECT {_select_list(have, 't')} FROM (SELECT x.* FROM {rows('requests')}) AS t "
        f"JOIN (SELECT x.run_id, x.day FROM {rows('runs')}) AS o ON o.run_id = t.run_id AND o.day = t.day)"
    )
    return sql, [days, days]


#: at most this many runs' request records in one query (a batch of dates): DuckDB holds a
#: batch's lists of values at once, about 0.5 MB a run of 4,000 requests (10 seats x 30 nights
#: of such runs in one query: 0.7 GB), while a query of one date costs as little CPU per date
RUNS_PER_QUERY = 256


def date_batches(days, runs_on: dict, budget: int = RUNS_PER_QUERY) -> list[list[str]]:
    """`days` in order, cut into consecutive batches of at most `budget` runs (`runs_on`: runs
    of each date; a date of more runs is a batch alone): one query each, bounded memory."""
    batches: list[list[str]] = []
    held = 0
    for day in days:
        runs = int(runs_on.get(day, 0))
        if not batches or held + runs > budget:
            batches.append([])
            held = 0
        batches[-1].append(day)
        held += runs
    return batches


def store_summaries(con, store, shas, days) -> dict[str, list[GroupSummary]]:
    """Every group summary of some dates of a store (`store.snapshot()`; `shas`: its versions in
    use; `con`: its connection, `benchreport.store.read.connect`), by one query: {date: its
    groups' summaries in key order}, as `FrameSource(requests of that date).summaries()` gives
    them (`summarise`, bit for bit). Every date asked for has an entry (empty without groups)."""
    days = [str(d) for d in days]
    return _summaries(_computed_rows(con, store, shas, days) if days else [], {d: [] for d in days})


def _computed_rows(con, store, shas, days: list[str]) -> list[tuple]:
    """The rows of `figures_sql` over the request rows of some dates of a store's versions `shas`."""
    lake = getattr(store, "lake", False)
    found = (_lake_rows if lake else _parquet_rows)(con, store, shas, days)
    if found is None:
        return []
    rows, params = found
    try:
        con.execute(MACROS_SQL)
        return con.execute(figures_sql(rows), list(params)).fetchall()
    except duckdb.OutOfMemoryException:
        raise
    except duckdb.Error as exc:
        where = store if lake else store.root / "requests"
        raise StoreDamaged(
            f"damaged store: {where}: the request records of {days[0]}..{days[-1]} cannot be read "
            f"({' '.join(str(exc).split())[:300]}); `benchreport store check --store STORE`"
        ) from None
    finally:
        for name in ("figures_pairs",) if lake else ("figures_use", "figures_use_runs"):
            try:
                con.unregister(name)
            except duckdb.Error:
                pass


def summaries_of_rows(con, rows: str, days, params=()) -> dict[str, list[GroupSummary]]:
    """Every group summary of request rows by one query: `rows` a FROM item (with `params`) with
    the columns `READ_COLUMNS` (absent ones as NULL; `day` the date a row is filed under, `seq` its
    stored order), each row a request record of a run in use. {date of `days`: its groups'
    summaries in key order}."""
    out: dict[str, list[GroupSummary]] = {str(d): [] for d in days}
    con.execute(MACROS_SQL)
    return _summaries(con.execute(figures_sql(rows), list(params)).fetchall(), out)


def _summaries(result: list[tuple], out: dict) -> dict[str, list[GroupSummary]]:
    """GroupSummary objects of the query's rows, each date's in key order (run, workload,
    concurrency: `FrameSource`'s), each group's metrics in REQUEST_METRICS order."""
    names = [*REQUEST_STATISTICS, *(estimate_key(s) for s in TAIL_STATISTICS)]
    groups: dict[tuple, tuple] = {}
    for row in result:
        day, run_id, workload, conc, seat, date, pass_, n_req, n_failed, metric, n, *vals, lag1 = row
        key = (day, (run_id, workload, int(conc)))
        if key not in groups:
            groups[key] = (seat, date[:10], int(pass_), int(n_req), int(n_failed), {})
        if metric is not None:
            values = {name: float(v) for name, v in zip(names, vals)}
            groups[key][5][metric] = (values, int(n), math.nan if lag1 is None else float(lag1))
    for (day, key), (seat, date, pass_, n_req, n_failed, stats) in sorted(groups.items()):
        ordered = {m: stats[m] for m in REQUEST_METRICS if m in stats}
        out.setdefault(day, []).append(GroupSummary(key, seat, date, pass_, n_req, n_failed, ordered))
    return out


# --- the figures kept in the store (`pass_figures`): written by the ingest, read by the reader -------

#: the statistics' columns of a `pass_figures` row (a pass estimate's key "pass:p90" as "pass_p90")
_STAT_COLUMNS = {
    **{s: s for s in REQUEST_STATISTICS},
    **{estimate_key(s): estimate_key(s).replace(":", "_") for s in TAIL_STATISTICS},
}
#: a `pass_figures` row's figures, in the order `figures_sql` gives them (then `file_sha`, `batch`,
#: `summary_version`); a row with no workload marks a run whose figures are all there (a run of no
#: request records has this row alone)
FIGURE_COLUMNS = (
    "day",
    "run_id",
    "workload",
    "concurrency",
    "seat",
    "date",
    "pass",
    "n_requests",
    "n_failed",
    "metric",
    "n",
    *_STAT_COLUMNS.values(),
    "lag1",
)


def batch_figures(store, parts: list[dict], batch: str, runs_on: dict) -> list[dict]:
    """Write the `pass_figures` rows of the runs an ingest chunk has just written (`parts`, the
    parts' rows `write_part` returned; `batch` their batch; `runs_on`: runs of each date), computed
    by `figures_sql` over the rows written (of a DuckLake store inside the writer's transaction,
    of the Parquet store from the parts just written), one query a batch of dates
    (`date_batches`): a row per group and metric, and a row per run marking its figures there.
    Returns the parts written (rows of the parts table)."""
    days = sorted({str(p["day"]) for p in parts if p["table"] == "runs"})
    lake = getattr(store, "lake", False)
    con = store.connection() if lake else memory_connection()
    out = []
    for some in date_batches(days, runs_on):
        sql, params = _written_figures_sql(con, store, parts, batch, some)
        con.execute(MACROS_SQL)
        table = con.execute(sql, params).to_arrow_table()
        for day in some:
            rows = table.filter(pa.compute.equal(table["day"], day)).drop_columns(["day"])
            if len(rows):
                out.append(store.write_part(FIGURES_TABLE, day, rows.to_pandas(types_mapper=pd.ArrowDtype), batch))
    return out


def memory_connection() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection as every store reader and writer opens one: one thread (reads
    in a fixed order, bounded memory), rows in insertion order, and no cache of the Parquet files
    read (each is read once per analysis; on by default and bounded only by DuckDB's memory limit,
    it held a year's files through a build, most of its peak memory)."""
    con = duckdb.connect(":memory:")
    con.execute("SET threads TO 1")
    con.execute("SET preserve_insertion_order TO true")
    con.execute("SET enable_external_file_cache = false")
    return con


def _written_figures_sql(con, store, parts: list[dict], batch: str, days: list[str]) -> tuple[str, dict]:
    """The query of the `pass_figures` rows of some dates of a batch just written, and its parameters."""
    if getattr(store, "lake", False):
        req = "(SELECT * FROM lake.requests WHERE batch = $batch AND list_contains($days, day))"
        runs = "(SELECT day, run_id, file_sha FROM lake.runs WHERE batch = $batch AND list_contains($days, day))"
        have = _columns(con, "lake.requests", []) if store.has("requests") else set()
        params = {"batch": batch, "days": days}
    else:
        src = "read_parquet({}::VARCHAR[], hive_partitioning = true, hive_types_autocast = false, union_by_name = true)"
        files = {
            t: [str(store.root / p["name"]) for p in parts if p["table"] == t and str(p["day"]) in days]
            for t in ("requests", "runs")
        }
        req = src.format("$req_files") if files["requests"] else None
        runs = f"(SELECT day, run_id, file_sha FROM {src.format('$run_files')})"
        have = _columns(con, src.format("?"), [files["requests"]]) if req else set()
        params = {"run_files": files["runs"], **({"req_files": files["requests"]} if req else {})}
    stats = ", ".join(f'"{k}" AS {v}' for k, v in _STAT_COLUMNS.items())
    version = f"CAST({int(SUMMARY_VERSION)} AS BIGINT) AS summary_version"
    marks = f"SELECT day, run_id, file_sha, {version} FROM written_runs"
    if req is None or "run_id" not in have:  # runs with no request records: their marks alone
        return f"WITH written_runs AS {runs} {marks} ORDER BY day, run_id", params
    rows = (
        f"(SELECT {_select_list(have, 't')} FROM {req} AS t "
        "JOIN written_runs AS o ON o.run_id = t.run_id AND o.day = t.day)"
    )
    figures = ", ".join(c for c in FIGURE_COLUMNS[:11]) + f", {stats}, lag1"
    sql = f"""WITH written_runs AS {runs}
SELECT {figures}, o.file_sha, {version}
FROM ({figures_sql(rows)}) AS f JOIN written_runs AS o USING (day, run_id)
UNION ALL BY NAME {marks}
ORDER BY day, run_id, workload NULLS FIRST, concurrency, metric NULLS FIRST"""
    return sql, params


def kept_summaries(con, store, shas, days, run_shas: dict) -> tuple[dict[str, list[GroupSummary]], list[str]]:
    """`store_summaries`, from the `pass_figures` rows the ingest kept (of the versions in use, at
    the store's snapshot, of this SUMMARY_VERSION): only the versions with no such rows for a run of
    theirs (`run_shas`: run -> version, of the runs of `days`) computed by the query now (a store
    ingested before these rows were kept, or by code of another summary version). Returns (the
    summaries, the versions computed now)."""
    days = [str(d) for d in days]
    out: dict[str, list[GroupSummary]] = {d: [] for d in days}
    if not days or not shas:
        return out, []
    rows, marked = _kept_rows(con, store, shas, days)
    missing = sorted({sha for run, sha in run_shas.items() if run not in marked} & set(shas))
    if missing:
        rows += _computed_rows(con, store, missing, days)
    return _summaries(rows, out), missing


def _kept_rows(con, store, shas, days) -> tuple[list[tuple], set[str]]:
    """(the kept figure rows of `days`, as `figures_sql` gives them; the runs marked complete)."""
    if not days:
        return [], set()
    lake = getattr(store, "lake", False)
    if lake:
        if not store.has(FIGURES_TABLE):
            return [], set()
        pairs = store.use_pairs(shas)
        src, on, args = f"(SELECT * FROM {store.table_sql(FIGURES_TABLE)})", "x.batch = u.b", []
    else:
        want = set(shas)
        found = [(f, s) for d in days for f, ss in store.part_files(FIGURES_TABLE, d) for s in ss if s in want]
        if not found:
            return [], set()
        pairs = pa.table({"filename": [f for f, _ in found], "sha": [s for _, s in found]})
        src = (
            "read_parquet(?::VARCHAR[], hive_partitioning = true, hive_types_autocast = false, "
            "union_by_name = true, filename = true)"
        )
        on, args = "x.filename = u.filename", [sorted({f for f, _ in found})]
    if not set(FIGURE_COLUMNS) | {"summary_version", "file_sha"} <= _columns(con, src, args):
        return [], set()  # rows of code that kept other figures: computed again
    con.register("kept_pairs", pairs)
    try:
        got = con.execute(
            f"SELECT {', '.join(f'x.{c}' for c in FIGURE_COLUMNS)} FROM {src} AS x SEMI JOIN kept_pairs AS u "
            f"ON x.file_sha = u.sha AND {on} WHERE x.day BETWEEN ? AND ? AND list_contains(?::VARCHAR[], x.day) "
            "AND x.summary_version = ?",
            # the range lets the scan skip the other dates' files (the list alone did not: a year's
            # new night read every date's figures for each date it read, 0.3 s a date)
            [*args, min(days), max(days), days, SUMMARY_VERSION],
        ).fetchall()
    except duckdb.Error as exc:
        raise StoreDamaged(
            f"damaged store: {store}: the kept figures of {days[0]}..{days[-1]} cannot be read "
            f"({' '.join(str(exc).split())[:300]}); `benchreport store check --store STORE`"
        ) from None
    finally:
        con.unregister("kept_pairs")
    marked = {r[1] for r in got if r[2] is None}
    return [r for r in got if r[2] is not None], marked
