"""benchreport.columns.TableSchema: one schema per table gives its columns and dtypes, whatever
the rows were made from (dicts, an empty frame, a frame with a shuffled index)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from benchreport import columns as C


def _mixed(schema: C.TableSchema) -> pd.DataFrame:
    """Every column as objects with every kind of missing value, on a shuffled index."""
    values = {
        C.STRING: ["a", None, np.nan, pd.NA],
        C.STR: ["a", None, np.nan, pd.NA],
        C.INT: [1, None, 3.0, pd.NA],
        C.INT_OR_NONE: [1, None, 3.0, np.nan],
        C.FLOAT: [1.5, None, "2.5", np.nan],
        C.BOOL: [True, None, False, np.nan],
    }
    index = [7, 2, 5, 0]
    return pd.DataFrame({c: pd.Series(values[t], index=index, dtype=object) for c, t in schema.columns})


STATS = (C.CELLS, C.PASSES, C.DATED, C.COMPARISONS, C.HISTORY, C.EXAM_DELTAS)


@pytest.mark.parametrize("schema", STATS, ids=lambda s: s.name)
def test_typed_gives_each_column_its_dtype_and_values(schema):
    out = schema.typed(_mixed(schema))
    assert list(out.columns) == schema.names
    assert list(out.index) == [0, 1, 2, 3]
    for c, t in schema.columns:
        col = out[c]
        if t == C.STRING:
            assert isinstance(col.dtype, pd.StringDtype) and col.dtype.na_value is pd.NA
            assert col.iloc[0] == "a" and col.iloc[1:].isna().all()
        elif t == C.STR:  # pandas' default text: missing is NaN
            assert isinstance(col.dtype, pd.StringDtype) and col.dtype.na_value is not pd.NA
            assert col.iloc[0] == "a" and col.iloc[1:].isna().all()
        elif t == C.INT:
            assert str(col.dtype) == "Int64" and col.tolist()[0] == 1 and col.tolist()[2] == 3
            assert col.isna().tolist() == [False, True, False, True]
        elif t == C.INT_OR_NONE:
            assert col.dtype == object and col.tolist() == [1, None, 3, None]
            assert type(col.iloc[0]) is int
        elif t == C.FLOAT:
            assert col.dtype == np.float64
            assert col.iloc[0] == 1.5 and np.isnan(col.iloc[1]) and col.iloc[2] == 2.5
        elif t == C.BOOL:
            assert col.dtype == bool and col.tolist() == [True, False, False, False]


@pytest.mark.parametrize("schema", STATS, ids=lambda s: s.name)
def test_empty_has_the_dtypes_of_a_typed_frame(schema):
    empty = schema.empty()
    assert len(empty) == 0
    assert list(empty.dtypes.astype(str)) == list(schema.typed(_mixed(schema)).dtypes.astype(str))


def test_a_missing_column_is_added_all_missing():
    out = C.CELLS.typed(pd.DataFrame({"seat": ["s"], "estimate": [2.0]}))
    assert list(out.columns) == C.CELLS.names
    assert out["n_passes"].isna().all() and str(out["n_passes"].dtype) == "Int64"


def test_schema_of_finds_a_table_by_its_columns_and_refuses_others():
    assert C.schema_of(C.PASS_COLUMNS) is C.PASSES
    assert C.schema_of(C.CELL_COLUMNS + C.CELL_EXTRA_COLUMNS) is C.CELLS
    with pytest.raises(ValueError, match="no table has the columns"):
        C.schema_of(C.PASS_COLUMNS[::-1])


def test_an_unknown_dtype_is_refused_by_name():
    with pytest.raises(ValueError, match="'x'.*'text'"):
        C.TableSchema("t", (("x", "text"),))


def test_tidy_tables_from_arrow_keep_nullable_dtypes():
    runs = C.TABLE_SCHEMAS["runs"]
    df = runs.from_arrow(pa.table({"run_id": ["r"], "pass": [1], "max_tokens": pa.array([None], pa.int64())}))
    assert list(df.columns) == runs.names
    assert df["pass"].dtype == np.int64 and str(df["max_tokens"].dtype) == "Int64"
    assert str(df["thinking"].dtype) == "boolean" and isinstance(df["seat"].dtype, pd.StringDtype)
    assert df["temperature"].dtype == np.float64 and np.isnan(df["temperature"].iloc[0])
    assert C.TABLE_SCHEMAS["exam_items"].dtype("correct") == C.BOOLEAN
    assert C.TABLE_SCHEMAS["exams"].dtype("correct") == C.INT
