"""The per-pass rows the cells are estimated from: one row per run (pass) and cell key, from the
figures a harness reported (`measurements`) and from its request records (summarised per pass).

Split from cells.py, which calls `pass_rows` once and estimates every cell from its result.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..columns import PASS_COLUMNS, REQUEST_STATISTICS
from ..conditions import measurement_condition
from ..thresholds import Thresholds
from .common import missing
from .requests import RequestSource, estimate_key, from_requests, supported


def run_labels(runs: pd.DataFrame | None) -> dict[str, tuple]:
    """{run_id: (harness, probe, load_id)}: the harness group where a manifest gives one, else its
    name; the probe the run names; the fingerprint of the load it describes
    (benchreport.conditions), None when it describes none."""
    if runs is None or not len(runs):
        return {}
    none = pd.Series([None] * len(runs), index=runs.index)
    name = runs["harness"].astype("object") if "harness" in runs else none
    if "harness_group" in runs:
        grp = runs["harness_group"].astype("object")
        name = grp.where(grp.notna(), name)
    probe = runs["probe"].astype("object") if "probe" in runs else none
    load = runs["load_id"].astype("object") if "load_id" in runs else none
    return {
        str(rid): (_str_or_none(h), _str_or_none(p), _str_or_none(lid))
        for rid, h, p, lid in zip(runs["run_id"].astype(str).tolist(), name.tolist(), probe.tolist(), load.tolist())
    }


def load_labels(runs: pd.DataFrame | None) -> dict[str, str]:
    """{load_id: the load in words} of the runs table; loads that read alike are told apart by what
    they sent differently ('chat, 32 → 24 tok, streaming; sampling {temperature 0.7}'), named by
    what was sent, never by a hash (issue 42)."""
    if runs is None or not len(runs) or "load_id" not in runs or "load_label" not in runs:
        return {}
    columns = ["load_id", "load_label"] + (["load"] if "load" in runs else [])
    pairs = runs[columns].dropna(subset=["load_id"]).drop_duplicates("load_id")
    ids, words = pairs["load_id"].astype(str).tolist(), pairs["load_label"].astype(object).tolist()
    words = [w if isinstance(w, str) and w else "load not described" for w in words]
    loads = [_load_of(x) for x in (pairs["load"].tolist() if "load" in pairs else [None] * len(ids))]
    labels = dict(zip(ids, words))
    for word in {w for w in words if words.count(w) > 1}:
        group = [k for k, w in enumerate(words) if w == word]
        for rank, k in enumerate(group, start=1):
            labels[ids[k]] = f"{word}; {_told_apart(loads[k], [loads[j] for j in group if j != k], rank, len(group))}"
    return labels


def _load_of(text):
    import json

    try:
        return json.loads(text) if isinstance(text, str) and text else None
    except ValueError:
        return None


def _told_apart(load, others: list, rank: int, n: int) -> str:
    """What `load` sent that the loads reading alike did not (at most two fields, in words), or its
    place among them ('load 2 of 3') where nothing stated tells them apart."""
    from ..conditions import FIELD_WORDS, differences, value_words

    said: dict[str, str] = {}
    for other in others:
        for field, (mine, theirs) in differences(load, other).items():
            words = value_words(field, mine)
            if words == value_words(field, theirs) and isinstance(mine, dict):  # '32±4' both: the bounds differ
                low, high = mine.get("min"), mine.get("max")
                words += f" from {low:g} to {high:g}" if low is not None and high is not None else " without bounds"
            said.setdefault(field, f"{FIELD_WORDS.get(field, field)} {words}")
    return ", ".join(list(said.values())[:2]) if said else f"load {rank} of {n}"


def _str_or_none(v):
    return None if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)) else str(v)


def _workload_key(workload, condition) -> str:
    return f"{workload}:{condition}" if isinstance(condition, str) and condition else str(workload)


#: the pass table's columns as the rows are built, with the request group and the measurement's
#: condition (the sort keys _c, _h, _p are added after)
_ROW_COLUMNS = (*PASS_COLUMNS, "group", "condition")
_KEY_COLUMNS = _ROW_COLUMNS[:11]


class _Table:
    """The pass rows as one list per column, and {row key: position}: a year of nightly dates is
    about two million rows, which as one dict each were most of the 3.5 GB peak."""

    __slots__ = ("cols", "index")

    def __init__(self):
        self.cols = {c: [] for c in _ROW_COLUMNS}
        self.index: dict[tuple, int] = {}

    def __len__(self) -> int:
        return len(self.index)

    def put(self, row: dict) -> None:
        """A new row, or in place of the row of the same key (which keeps its position)."""
        key = _row_key(row)
        i = self.index.get(key)
        if i is None:
            self.index[key] = len(self.cols["seat"])
            for c in _ROW_COLUMNS:
                self.cols[c].append(row[c])
        else:
            for c in _ROW_COLUMNS:
                self.cols[c][i] = row[c]

    def get(self, key: tuple) -> dict | None:
        i = self.index.get(key)
        return None if i is None else {c: self.cols[c][i] for c in _ROW_COLUMNS}


def _request_rows(source: RequestSource, labels: dict, th: Thresholds) -> tuple[_Table, dict]:
    """Pass rows of the statistics the request records support, and every group's summary
    ({group key: (stats, n_requests, n_failed)}) for the reported figures."""
    rows = _Table()
    cols, index = rows.cols, rows.index
    col_list = [cols[c] for c in _ROW_COLUMNS]
    per_group: dict[tuple, tuple] = {}
    nan = math.nan
    for gsum in source.summaries():
        run_id, workload, c = gsum.key
        conc = None if c < 0 else int(c)
        group = tuple(gsum.key)
        h, p, lid = labels.get(str(run_id), (None, None, None))
        seat, date, pss, rid = str(gsum.seat), str(gsum.date)[:10], int(gsum.pass_), str(run_id)
        for metric, (values, n, rho) in gsum.stats.items():
            for stat in REQUEST_STATISTICS:
                if not supported(stat, n, th):
                    continue
                vals = (
                    seat,
                    h,
                    p,
                    lid,
                    workload,
                    conc,
                    metric,
                    stat,
                    date,
                    pss,
                    rid,
                    nan,
                    nan,
                    values[estimate_key(stat)],
                    n,
                    gsum.n_requests,
                    gsum.n_failed,
                    nan,
                    nan,
                    nan,
                    rho,
                    "requests",
                    group,
                    None,
                )
                key = vals[:11]
                i = index.get(key)
                if i is None:
                    index[key] = len(col_list[0])
                    for lst, v in zip(col_list, vals):
                        lst.append(v)
                else:
                    for lst, v in zip(col_list, vals):
                        lst[i] = v
        per_group[group] = (gsum.stats, gsum.n_requests, gsum.n_failed)
    return rows, per_group


def _base_row(labels, run_id, seat, date, pss, workload, conc, metric, stat) -> dict:
    h, p, lid = labels.get(str(run_id), (None, None, None))
    return dict(
        seat=str(seat),
        harness=h,
        probe=p,
        load_id=lid,
        workload=workload,
        concurrency=conc,
        metric=metric,
        statistic=stat,
        date=str(date)[:10],
        **{"pass": int(pss)},
        run_id=str(run_id),
        value=math.nan,
        reported=math.nan,
        recomputed=math.nan,
        n_obs=None,
        n_requests=None,
        n_failed=None,
        ci_low=math.nan,
        ci_high=math.nan,
        ci_level=math.nan,
        lag1=math.nan,
        source="",
        group=None,
        condition=None,
    )


def _measurement_columns(m: pd.DataFrame) -> dict:
    stat = (
        m["statistic"].astype("object").where(m["statistic"].notna(), "mean")
        if "statistic" in m
        else pd.Series(["mean"] * len(m), index=m.index)
    )
    cols = {
        c: (m[c].astype("object").to_numpy() if c in m else np.full(len(m), None, dtype=object))
        for c in (
            "run_id",
            "seat",
            "date",
            "pass",
            "workload",
            "concurrency",
            "metric",
            "value",
            "n",
            "condition",
            "context_tokens",
            "ci_low",
            "ci_high",
            "ci_level",
        )
    }
    cols["statistic"] = stat.to_numpy(dtype=object)
    return cols


def _add_reported(rows: _Table, measurements: pd.DataFrame, per_group: dict, labels: dict) -> None:
    """Each reported figure into its pass row: shown as printed, with our recomputation from the
    same run's requests beside it where the statistic can be recomputed."""
    cols = _measurement_columns(measurements)
    for i in range(len(measurements)):
        value = _float(cols["value"][i])
        if not math.isfinite(value):
            continue
        conc = None if missing(cols["concurrency"][i]) else int(cols["concurrency"][i])
        cond = measurement_condition(_str_or_none(cols["condition"][i]), cols["context_tokens"][i])
        pss = 1 if missing(cols["pass"][i]) else int(cols["pass"][i])
        row = _base_row(
            labels,
            cols["run_id"][i],
            cols["seat"][i],
            cols["date"][i],
            pss,
            _workload_key(cols["workload"][i], cond),
            conc,
            str(cols["metric"][i]),
            str(cols["statistic"][i]),
        )
        key = _row_key(row)
        known = rows.get(key)
        if known is not None and math.isfinite(known["reported"]):
            continue  # a figure repeated in one run: the first one stands (flags: sample.repeated_figure)
        gkey = (row["run_id"], str(cols["workload"][i]), -1 if conc is None else conc)
        if known is not None:
            row = known
        elif gkey in per_group and row["metric"] in per_group[gkey][0] and from_requests(row["statistic"]):
            values, n, rho = per_group[gkey][0][row["metric"]]
            row.update(n_requests=per_group[gkey][1], n_failed=per_group[gkey][2], lag1=rho, group=gkey, n_obs=n)
        if gkey in per_group and row["metric"] in per_group[gkey][0] and from_requests(row["statistic"]):
            # checked under the harnesses' convention (numpy-'linear'), not the pass estimate
            row["recomputed"] = per_group[gkey][0][row["metric"]][0][row["statistic"]]
        if (
            gkey in per_group
            and row["metric"] in per_group[gkey][0]
            and _from_a_sample(
                per_group[gkey][0][row["metric"]][1], cols["n"][i], per_group[gkey][1], per_group[gkey][2]
            )
        ):
            row["recomputed"] = math.nan  # a sample's statistic is no check of the whole run's figure
        row.update(
            reported=value,
            condition=cond,
            source="reported",
            ci_low=_float(cols["ci_low"][i]),
            ci_high=_float(cols["ci_high"][i]),
            ci_level=_float(cols["ci_level"][i]),
        )
        if not missing(cols["n"][i]):
            row["n_obs"] = int(cols["n"][i])
        rows.put(row)


#: records below this share of the requests a figure is over: the recomputation is a sample's
SAMPLED_SHARE = 0.8


def _from_a_sample(n_records: int, n_reported, n_rows: int, n_failed: int) -> bool:
    """Whether a recomputation rests on a sample of the requests the harness's figure is over:
    the figure says it is over more successful requests than have a record of the metric, by
    more than a fifth (GuideLLM's `sample_size` keeps 8 records of 48; a few answers of one token
    without an inter-token gap are not a sample). Such a figure is shown as printed and not
    checked against the sample (issue 26: at n = 8 of 48 the sample's mean differs from the
    whole run's by sampling error alone, which made hundreds of false mismatches); the
    importer's note says the request-level statistics come from a sample."""
    if missing(n_reported):
        return False
    return int(n_records) < SAMPLED_SHARE * min(int(n_reported), int(n_rows) - int(n_failed or 0))


def pass_rows(measurements, source: RequestSource, runs, th: Thresholds) -> pd.DataFrame:
    """One row per (cell, date, pass, run): reported figure, our recomputation, the value used."""
    labels = run_labels(runs)
    rows, per_group = _request_rows(source, labels, th)
    if measurements is not None and len(measurements):
        _add_reported(rows, measurements, per_group, labels)
    if not len(rows):
        return pd.DataFrame()
    rows.index.clear()
    df = pd.DataFrame(rows.cols)
    rows.cols.clear()
    df["value"] = np.where(np.isfinite(df["reported"].to_numpy(float)), df["reported"], df["recomputed"])
    return sort_passes(df)


#: the pass table's order: date, cell key, pass, run id. Date first, so a nightly archive's table
#: is its dates' rows one after another (a new night's rows come last, and a run store can keep and
#: write each date's rows on their own: benchreport.days.entries)
PASS_ORDER = ["date", "seat", "_h", "_p", "_l", "workload", "_c", "metric", "statistic", "pass", "run_id"]


def add_sort_keys(df: pd.DataFrame) -> pd.DataFrame:
    """The sort keys of the pass rows: _c (concurrency, -1 when none), _h, _p and _l (harness,
    probe and load id, "" when none)."""
    df["_c"] = pd.array(df["concurrency"], dtype="Int64").fillna(-1).astype("int64")
    if "load_id" not in df:
        df["load_id"] = None
    for c in ("harness", "probe", "load_id"):
        df[c] = df[c].astype("object")
    df["_h"] = df["harness"].fillna("")
    df["_p"] = df["probe"].fillna("")
    df["_l"] = df["load_id"].fillna("")
    return df


def sort_passes(df: pd.DataFrame) -> pd.DataFrame:
    """The pass rows with their sort keys in the pass table's order (`PASS_ORDER`)."""
    return add_sort_keys(df).sort_values(PASS_ORDER, kind="stable").reset_index(drop=True)


def _row_key(row) -> tuple:
    return (
        row["seat"],
        row["harness"],
        row["probe"],
        row["load_id"],
        row["workload"],
        row["concurrency"],
        row["metric"],
        row["statistic"],
        row["date"],
        row["pass"],
        row["run_id"],
    )


def _float(v) -> float:
    try:
        return math.nan if missing(v) else float(v)
    except (TypeError, ValueError):
        return math.nan
