"""Names defined once: metrics with their units and direction, table keys, table columns and dtypes.

Every table the library makes has its columns here, and those it types (the tidy tables and
the statistics tables) a `TableSchema`: its columns in order, each with its dtype, and the one
function that gives a frame those dtypes (`typed`, `empty`, `from_arrow`). Every other module
takes its column names and dtypes from here, so a renamed column is a one-line change, a typo
is an ImportError, not a silent empty column, and a table has the same dtypes however its rows
were made (Parquet files compare byte for byte).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, cached_property
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas and numpy are imported where a table is typed: `benchreport --help`,
    import pandas as pd  # `--version` and the parser read the names here without loading them


#: metric name -> (unit, higher_is_better). From spec/run-format.md, "Metric names and units".
METRICS: dict[str, tuple[str, bool]] = {
    "decode_tok_s_per_stream": ("tok/s", True),
    "output_tok_s": ("tok/s", True),
    "prefill_tok_s": ("tok/s", True),
    "ttft_ms": ("ms", False),
    "itl_ms": ("ms", False),
    "e2e_latency_ms": ("ms", False),
    "request_rate": ("req/s", True),
    "engine_init_s": ("s", False),
}

#: statistics a measurement may carry (spec: `statistic`), and which request-level
#: statistics the analysis computes from request records.
#: `not_stated`: the source gives the figure without saying which statistic it is (an extension:
#: an absent statistic is `mean`, as spec/run-format.md says; a converter that does not know says so)
STATISTICS = ("mean", "p50", "p90", "p95", "p99", "min", "max", "not_stated")
REQUEST_STATISTICS = ("mean", "p50", "p90", "p95", "p99")
#: quantile level of each quantile statistic
QUANTILES = {"p50": 0.50, "p90": 0.90, "p95": 0.95, "p99": 0.99}

#: request-record fields from which a per-request metric value is read directly
#: (decode_tok_s_per_stream is derived, see benchreport.stats.cells.request_metrics).
REQUEST_METRICS = ("ttft_ms", "itl_ms", "e2e_latency_ms", "decode_tok_s_per_stream")


#: how a metric reads in a sentence, a caption or an axis label
METRIC_WORDS: dict[str, str] = {
    "decode_tok_s_per_stream": "per-stream decode",
    "output_tok_s": "aggregate throughput",
    "prefill_tok_s": "prefill throughput",
    "ttft_ms": "time to first token",
    "itl_ms": "inter-token latency",
    "e2e_latency_ms": "end-to-end latency",
    "request_rate": "request rate",
    "engine_init_s": "engine start-up time",
}


def unit_of(metric: str) -> str:
    """Unit of a metric (KeyError for an unknown metric)."""
    return METRICS[metric][0]


def higher_is_better(metric: str) -> bool:
    """Direction of a metric: throughput up is good, latency up is bad."""
    return METRICS[metric][1]


# --- table schemas: every table's columns, in order, with their pandas dtypes ---------------
#: the dtypes a schema's columns take (pandas names, and two of our own)
STRING = "string"  # pandas' nullable text (missing is <NA>)
STR = "str"  # pandas' default text (missing is NaN: the history table, compared with ==)
INT = "Int64"  # nullable integer
INT64 = "int64"  # integer that is never missing
FLOAT = "float64"  # float, missing is NaN
BOOLEAN = "boolean"  # nullable boolean
BOOL = "bool"  # boolean, missing is False
INT_OR_NONE = "int_or_none"  # objects: Python ints, None where missing (a year of history rows, no NA scalars)


def _as_string(col: pd.Series):
    return col.astype("object").where(col.notna(), None).astype("string")


def _as_str(col: pd.Series):
    import pandas as pd

    vals = col.astype(object)
    return pd.Series(vals.where(vals.notna(), None).to_numpy(), dtype=object).astype("str")


def _as_int(col: pd.Series):
    import pandas as pd

    return pd.array(pd.to_numeric(col.astype("object"), errors="coerce"), dtype="Int64")


def _as_int64(col: pd.Series):
    import pandas as pd

    return pd.to_numeric(col).astype("int64")


def _as_float(col: pd.Series):
    import pandas as pd

    return pd.to_numeric(col, errors="coerce").astype(float)


def _as_boolean(col: pd.Series):
    return col.astype("object").where(col.notna(), None).astype("boolean")


def _as_bool(col: pd.Series):
    return col.astype("object").where(col.notna(), False).astype(bool)


def _as_int_or_none(col: pd.Series):
    import numpy as np
    import pandas as pd

    vals = pd.to_numeric(col.astype(object), errors="coerce")
    known = vals.notna().to_numpy()
    ints = np.full(len(vals), None, dtype=object)
    ints[known] = vals.to_numpy()[known].astype("int64").tolist()
    return pd.Series(ints, dtype=object)


_CONVERT = {
    STRING: _as_string,
    STR: _as_str,
    INT: _as_int,
    INT64: _as_int64,
    FLOAT: _as_float,
    BOOLEAN: _as_boolean,
    BOOL: _as_bool,
    INT_OR_NONE: _as_int_or_none,
}


@dataclass(frozen=True)
class TableSchema:
    """One table's columns, in order, each with its dtype (one of STRING, STR, INT, INT64, FLOAT,
    BOOLEAN, BOOL, INT_OR_NONE): the one place a table's dtypes are said."""

    name: str
    columns: tuple[tuple[str, str], ...]

    def __post_init__(self):
        unknown = [(c, t) for c, t in self.columns if t not in _CONVERT]
        if unknown:
            raise ValueError(f"table {self.name!r}: column {unknown[0][0]!r} has no known dtype {unknown[0][1]!r}")

    @property
    def names(self) -> list[str]:
        """The column names, in order (a new list: callers may extend it)."""
        return [c for c, _ in self.columns]

    @cached_property
    def dtypes(self) -> dict[str, str]:
        """{column: dtype}."""
        return dict(self.columns)

    def dtype(self, column: str) -> str:
        """The dtype of one column (KeyError for a column the table does not have)."""
        return self.dtypes[column]

    def typed(self, frame: pd.DataFrame) -> pd.DataFrame:
        """`frame` as this table: its columns in order (absent ones missing), each of its dtype,
        with a fresh index; the same dtypes however the rows were made."""
        import pandas as pd

        frame = frame.reindex(columns=self.names).reset_index(drop=True)
        return pd.DataFrame({c: _CONVERT[t](frame[c]) for c, t in self.columns}, columns=self.names)

    def empty(self) -> pd.DataFrame:
        """The table with no rows, its columns of their dtypes."""
        import pandas as pd

        return self.typed(pd.DataFrame({c: pd.Series(dtype="object") for c in self.names}))

    def arrow_type(self, column: str):
        """The Arrow type a column is kept as (Parquet, the run store)."""
        return _arrow_types()[self.dtype(column)]

    def from_arrow(self, table) -> pd.DataFrame:
        """The table from Arrow columns (absent ones all null), through pandas' nullable dtypes:
        Int64, boolean, string; float64 with NaN; int64 where never missing."""
        import pyarrow as pa

        present, names, types = set(table.column_names), self.names, _arrow_types()
        arrays = []
        for c, t in self.columns:
            col = table.column(c) if c in present else pa.nulls(table.num_rows, type=types[t])
            arrays.append(col if col.type == types[t] else col.cast(types[t]))
        df = pa.Table.from_arrays(arrays, names=names).to_pandas(types_mapper=arrow_to_pandas_types().get)
        for c, t in self.columns:
            if t in (INT64, FLOAT):
                df[c] = df[c].astype(t)
        return df


@cache
def _arrow_types() -> dict:
    import pyarrow as pa

    return {FLOAT: pa.float64(), INT64: pa.int64(), INT: pa.int64(), BOOLEAN: pa.bool_(), STRING: pa.string()}


@cache
def arrow_to_pandas_types() -> dict:
    """{Arrow type: pandas' nullable dtype} for `pyarrow.Table.to_pandas(types_mapper=...get)`."""
    import pandas as pd
    import pyarrow as pa

    return {pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype(), pa.string(): pd.StringDtype()}


def _names(columns: tuple[tuple[str, str], ...]) -> list[str]:
    return [c for c, _ in columns]


#: the key of a cell across dates: one (seat, harness, probe, load, workload, concurrency, metric, statistic)
CELL_KEY = ["seat", "harness", "probe", "load_id", "workload", "concurrency", "metric", "statistic"]
_CELL_KEY_TYPES = (
    ("seat", STRING),
    ("harness", STRING),
    ("probe", STRING),
    ("load_id", STRING),
    ("workload", STRING),
    ("concurrency", INT),
    ("metric", STRING),
    ("statistic", STRING),
)

# --- the tidy tables (benchreport.tables), one row per observation ---
_SEATS = (
    ("seat", STRING),
    ("model", STRING),
    ("quantisation", STRING),
    ("engine", STRING),
    ("role", STRING),
    ("checkpoint_bytes", FLOAT),
    ("nodes", INT),
    ("gpus_per_node", INT),
    ("gpu_memory_bytes", FLOAT),
    ("tensor_parallel", INT),
    ("interconnect", STRING),
)
_COMPONENTS = (("seat", STRING), ("name", STRING), ("component_role", STRING), ("license", STRING))
_RUNS = (
    ("run_id", STRING),
    ("seat", STRING),
    ("date", STRING),
    ("pass", INT64),
    ("harness", STRING),
    ("harness_version", STRING),
    ("probe", STRING),
    ("max_tokens", INT),
    ("temperature", FLOAT),
    ("thinking", BOOLEAN),
    ("warmup_excluded", BOOLEAN),
    ("settings", STRING),
    ("quantisation", STRING),
    ("engine", STRING),
    ("source_file", STRING),
    ("source_sha256", STRING),
    ("source_format", STRING),
    ("notes", STRING),
    ("assumptions", STRING),
    ("harness_group", STRING),
    ("figure_checks", STRING),
    ("load", STRING),
    ("load_id", STRING),
    ("load_label", STRING),
)
#: a measurement's own fields (after the run's keys run_id, seat, date, pass)
_MEASUREMENT_FIELDS = (
    ("workload", STRING),
    ("concurrency", INT),
    ("metric", STRING),
    ("statistic", STRING),
    ("value", FLOAT),
    ("unit", STRING),
    ("n", INT),
    ("context_tokens", INT),
    ("fresh_prompt", BOOLEAN),
    ("condition", STRING),
    ("ci_low", FLOAT),
    ("ci_high", FLOAT),
    ("ci_level", FLOAT),
)
_RUN_KEYS = (("run_id", STRING), ("seat", STRING), ("date", STRING), ("pass", INT64))
_REQUESTS = _RUN_KEYS + (
    ("workload", STRING),
    ("concurrency", INT),
    ("prompt_tokens", INT),
    ("cached_prompt_tokens", INT),
    ("output_tokens", INT),
    ("reasoning_tokens", INT),
    ("content_chars", INT),
    ("reasoning_chars", INT),
    ("ttft_ms", FLOAT),
    ("e2e_latency_ms", FLOAT),
    ("itl_ms", FLOAT),
    ("finish_reason", STRING),
    ("error", STRING),
    ("start_ms", FLOAT),
    ("counted_only", BOOLEAN),
    ("first_content_ms", FLOAT),
    ("first_token_chunk_ms", FLOAT),
)
_EXAMS = (
    ("run_id", STRING),
    ("seat", STRING),
    ("date", STRING),
    ("benchmark", STRING),
    ("dimension", STRING),
    ("correct", INT),
    ("total", INT),
    ("score", FLOAT),
    ("from_items", BOOLEAN),
    ("count_rounding", STRING),
    ("measured_on", STRING),
    ("from_earlier_run", BOOLEAN),
    ("placement_note", STRING),
)
_EXAM_ITEMS = (
    ("run_id", STRING),
    ("seat", STRING),
    ("date", STRING),
    ("benchmark", STRING),
    ("dimension", STRING),
    ("item_id", STRING),
    ("correct", BOOLEAN),
)
_EVENTS = _RUN_KEYS + (("kind", STRING), ("message", STRING), ("concurrency", INT), ("reproduced", BOOLEAN))

#: the tidy tables, by name
TABLE_SCHEMAS: dict[str, TableSchema] = {
    s.name: s
    for s in (
        TableSchema("seats", _SEATS),
        TableSchema("components", _COMPONENTS),
        TableSchema("runs", _RUNS),
        TableSchema("measurements", _RUN_KEYS + _MEASUREMENT_FIELDS),
        TableSchema("requests", _REQUESTS),
        TableSchema("exams", _EXAMS),
        TableSchema("exam_items", _EXAM_ITEMS),
        TableSchema("events", _EVENTS),
    )
}
TABLE_COLUMNS: dict[str, list[str]] = {name: s.names for name, s in TABLE_SCHEMAS.items()}
#: a measurement's fields as the tidy table copies them from a run file
MEASUREMENT_FIELDS = _names(_MEASUREMENT_FIELDS)
#: columns of the per-run component rows the run store keeps
COMPONENT_RUN_COLUMNS = TABLE_COLUMNS["components"] + ["run_id"]

# --- statistics tables (benchreport.stats) ---
_CELL_SPEC = (
    ("seat", STRING),
    ("workload", STRING),
    ("concurrency", INT),
    ("metric", STRING),
    ("statistic", STRING),
    ("unit", STRING),
    ("n_passes", INT),
    ("n_obs", INT),
    ("estimate", FLOAT),
    ("ci_low", FLOAT),
    ("ci_high", FLOAT),
    ("ci_level", FLOAT),
    ("ci_method", STRING),
    ("values", STRING),
)
_CELL_EXTRA = (
    ("harness", STRING),
    ("probe", STRING),
    ("load_id", STRING),
    ("load", STRING),
    ("date", STRING),
    ("condition", STRING),
    ("ci_route", STRING),
    ("ci_reason", STRING),
    ("log_se", FLOAT),
    ("df", FLOAT),
    ("median", FLOAT),
    ("min", FLOAT),
    ("max", FLOAT),
    ("range_level", FLOAT),
    ("within_low", FLOAT),
    ("within_high", FLOAT),
    ("within_level", FLOAT),
    ("within_method", STRING),
    ("within_log_se", FLOAT),
    ("reported", FLOAT),
    ("recomputed", FLOAT),
    ("n_requests", INT),
    ("n_failed", INT),
    ("lag1", FLOAT),
    ("block", INT),
    ("source", STRING),
)
#: columns of tables/cells.csv (spec/cli.md), in order
CELL_COLUMNS = _names(_CELL_SPEC)
#: the cells table's extra columns after the spec's
CELL_EXTRA_COLUMNS = _names(_CELL_EXTRA)
CELLS = TableSchema("cells", _CELL_SPEC + _CELL_EXTRA)

#: the long-form per-pass table (one row per cell and pass)
PASSES = TableSchema(
    "passes",
    _CELL_KEY_TYPES[:8]
    + (
        ("date", STRING),
        ("pass", INT),
        ("run_id", STRING),
        ("value", FLOAT),
        ("reported", FLOAT),
        ("recomputed", FLOAT),
        ("n_obs", INT),
        ("n_requests", INT),
        ("n_failed", INT),
        ("ci_low", FLOAT),
        ("ci_high", FLOAT),
        ("ci_level", FLOAT),
        ("lag1", FLOAT),
        ("source", STRING),
    ),
)
PASS_COLUMNS = PASSES.names
#: what the history and the dated comparisons read of a cell on each date (`CellSet.dated` of a run store)
DATED = TableSchema("dated", _CELL_KEY_TYPES + (("date", STRING), ("estimate", FLOAT), ("n_passes", INT)))
DATED_COLUMNS = DATED.names

_COMPARISON_SPEC = (
    ("workload", STRING),
    ("concurrency", INT),
    ("metric", STRING),
    ("statistic", STRING),
    ("baseline", STRING),
    ("candidate", STRING),
    ("baseline_estimate", FLOAT),
    ("candidate_estimate", FLOAT),
    ("ratio", FLOAT),
    ("ci_low", FLOAT),
    ("ci_high", FLOAT),
    ("ci_method", STRING),
    ("verdict", STRING),
)
_COMPARISON_EXTRA = (
    ("harness", STRING),
    ("probe", STRING),
    ("load_id", STRING),
    ("load", STRING),
    ("kind", STRING),
    ("baseline_date", STRING),
    ("candidate_date", STRING),
    ("ci_level", FLOAT),
    ("p_value", FLOAT),
    ("p_adj", FLOAT),
    ("multiplicity", STRING),
    ("verdict_reason", STRING),
    ("primary", BOOL),
    ("within_low", FLOAT),
    ("within_high", FLOAT),
    ("within_method", STRING),
    ("df", FLOAT),
    ("baseline_n_passes", INT),
    ("candidate_n_passes", INT),
    ("n_baseline", INT),
    ("n_candidate", INT),
    ("variance_levels", STRING),
    ("family", STRING),
    ("family_first", BOOL),
    ("family_alpha", FLOAT),
    ("noise_band", FLOAT),
    ("verdict_detail", STRING),
)
#: columns of tables/comparisons.csv (spec/cli.md), in order
COMPARISON_COLUMNS = _names(_COMPARISON_SPEC)
#: the comparisons table's extra columns after the spec's
COMPARISON_EXTRA_COLUMNS = _names(_COMPARISON_EXTRA)
COMPARISONS = TableSchema("comparisons", _COMPARISON_SPEC + _COMPARISON_EXTRA)

#: tables/history.csv: text as pandas' str (missing is NaN: flags compare cells with ==), counts as
#: Python ints or None (a year of rows: no per-value Python calls)
HISTORY = TableSchema(
    "history",
    tuple(
        (c, STR if t == STRING else INT_OR_NONE if t == INT else t)
        for c, t in (
            _CELL_KEY_TYPES
            + (
                ("date", STRING),
                ("estimate", FLOAT),
                ("n_passes", INT),
                ("level", FLOAT),
                ("level_nights", INT),
                ("level_since", STRING),
                ("change", FLOAT),
                ("ci_low", FLOAT),
                ("ci_high", FLOAT),
                ("p_value", FLOAT),
                ("p_adj", FLOAT),
                ("verdict", STRING),
                ("verdict_reason", STRING),
                ("change_kind", STRING),
                ("change_since", STRING),
                ("cusum", FLOAT),
            )
        )
    ),
)
HISTORY_COLUMNS = HISTORY.names

_EXAM_DELTA_SPEC = (
    ("benchmark", STRING),
    ("dimension", STRING),
    ("baseline", STRING),
    ("candidate", STRING),
    ("test", STRING),
    ("n_items", INT),
    ("baseline_correct", INT),
    ("candidate_correct", INT),
    ("baseline_only", INT),
    ("candidate_only", INT),
    ("p_value", FLOAT),
    ("p_mid", FLOAT),
    ("p_holm", FLOAT),
    ("diff", FLOAT),
    ("diff_ci_low", FLOAT),
    ("diff_ci_high", FLOAT),
    ("diff_ci_method", STRING),
    ("mde", FLOAT),
)
_EXAM_DELTA_EXTRA = (
    ("p_boschloo", FLOAT),
    ("baseline_total", INT),
    ("candidate_total", INT),
    ("ci_level", FLOAT),
    ("note", STRING),
)
#: columns of tables/exam_deltas.csv (spec/cli.md), in order
EXAM_DELTA_COLUMNS = _names(_EXAM_DELTA_SPEC)
#: the exam deltas' extra columns after the spec's
EXAM_DELTA_EXTRA_COLUMNS = _names(_EXAM_DELTA_EXTRA)
EXAM_DELTAS = TableSchema("exam_deltas", _EXAM_DELTA_SPEC + _EXAM_DELTA_EXTRA)

#: tables/sessions.csv (benchreport.stats.sessions): between-session variance per cell
SESSION_COLUMNS = CELL_KEY + [
    "n_sessions",
    "n_passes",
    "within_log_var",
    "between_log_var",
    "between_session_cv",
    "icc",
    "method",
]

#: the statistics tables whose dtypes `TableSchema.typed` gives, by their columns (see `schema_of`)
_BY_COLUMNS = {tuple(s.names): s for s in (CELLS, PASSES, DATED, COMPARISONS, HISTORY, EXAM_DELTAS)}


def schema_of(columns) -> TableSchema:
    """The statistics table whose columns are `columns`, in order (ValueError for any other list)."""
    try:
        return _BY_COLUMNS[tuple(columns)]
    except KeyError:
        raise ValueError(f"no table has the columns {list(columns)!r}") from None


# --- other tables the library writes ---
#: columns of flags.json / tables/flags.csv (benchreport.flags), in order
FLAG_COLUMNS = ["code", "severity", "seats", "workload", "concurrency", "metric", "statistic", "message", "evidence"]
#: columns of provenance.csv, in order: every file the build read, refused or skipped
PROVENANCE_COLUMNS = [
    "status",
    "path",
    "run_id",
    "format",
    "harness",
    "harness_version",
    "sha256",
    "json_path",
    "reason",
]
#: the columns `benchreport compare` prints and writes (benchreport.before_after: comparisons.csv's,
#: with the pair's data sets)
BEFORE_AFTER_COLUMNS = [
    "before",
    "after",
    "workload",
    "concurrency",
    "metric",
    "statistic",
    "baseline_date",
    "candidate_date",
    "baseline_estimate",
    "candidate_estimate",
    "ratio",
    "ci_low",
    "ci_high",
    "ci_level",
    "ci_method",
    "p_adj",
    "verdict",
    "verdict_reason",
    "verdict_detail",
    "noise_band",
]
#: columns of the explorer's two-seat `compare` table (benchreport.explore.pairs), in order
PAIR_COLUMNS = [
    "workload",
    "concurrency",
    "metric",
    "statistic",
    "unit",
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
    "baseline_values",
    "candidate_values",
    "flags",
]
#: the run store's files table: one row per file version seen (`context`: a digest of the manifests the
#: version was read with, "" for none; a file read with another manifest is another version)
FILE_COLUMNS = ["path", "sha256", "size", "mtime_ns", "status", "reason", "run_ids", "current", "batch", "context"]
#: the run store's parts table: one row per part file written (`name` relative to the store, POSIX)
PART_COLUMNS = ["table", "day", "batch", "name", "size", "sha256"]


#: how `exams.count_rounding` starts when a score is no whole number of its items (then no exact test)
NOT_A_COUNT = "not a count: "


def is_not_a_count(count_rounding) -> bool:
    """Whether an exams row's `count_rounding` says its count is made up from a score that is no
    whole number of its items (benchreport.tables._rounding)."""
    return isinstance(count_rounding, str) and count_rounding.startswith(NOT_A_COUNT)
