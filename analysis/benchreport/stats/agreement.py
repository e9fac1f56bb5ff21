"""Do the harnesses agree? One seat and load measured by several harnesses, side by side (issue 46).

For every cell (seat, workload, concurrency, metric, statistic) that two harnesses measured
under a comparable load, `agreement` gives each harness's figure with its interval, the ratio
between them with its interval, and, where the interval of the ratio excludes 1, which
definitional difference (`load.harness.definitions`) can explain it. Where request records
allow, the figure is recomputed under one common definition for both harnesses (TTFT: request
sent to the first token, reasoning included, or to the first answer token where one harness
cannot see reasoning; per-stream decode and ITL: (latency - TTFT) / (server tokens - 1) per
request) and the ratio again: the gap is explained when the common figures agree. Where a
figure has no interval (one pass of a figure no request record holds: output throughput, timed
on the harness's own wall clock), the pair is not tested: figures within `tolerance` of each
other are "not tested, figures close", further apart "not tested, figures differ" (the
`harness.untested` flag: measure several passes). Pairs of cells that are not comparable
(another endpoint, lengths, day) are listed with the reason. Pure: DataFrames in, one DataFrame out.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as sps

from benchreport.load.harness.definitions import Definitions, definitions as default_definitions
from benchreport.thresholds import DEFAULT

from .intervals import t_interval, welch_log_ratio

__all__ = [
    "AGREEMENT_COLUMNS",
    "ALIKE_BAND",
    "EXPLAINED",
    "FLAGGED",
    "METRICS",
    "LENGTH_TOLERANCE",
    "UNTESTED_TOLERANCE",
    "agreement",
    "common_values",
]

#: the figures compared: the four a write-up quotes, each harness's mean (every harness states
#: a mean with the n it is over; percentiles are compared through their definitions only)
METRICS = ("ttft_ms", "itl_ms", "decode_tok_s_per_stream", "output_tok_s")
STATISTIC = "mean"
#: prompt and output lengths of two loads within this relative difference are one load: client
#: tokenisers count one prompt a few tokens apart, and a harness may record what it sent
#: rather than what it asked for (vLLM's input_lens)
LENGTH_TOLERANCE = 0.25
#: reasoning counts as present in a seat's answers when at least this share of its records
#: carry reasoning (text or tokens) or an answer token later than their first token
REASONING_SHARE = 0.25
LEVEL = 0.95
#: two figures without an interval within this relative difference (|B / A - 1|, either way) are
#: "not tested, figures close": the pass-to-pass spread a stable seat may show (thresholds.cv_limit,
#: 10%), so one pass of each cannot tell them apart; further apart they are flagged harness.untested
UNTESTED_TOLERANCE = DEFAULT.cv_limit
#: passes each harness needs for the common recomputation to be compared over pass means (the pass
#: as the unit of replication, as for the cells); with fewer, over the requests of the one pass
COMMON_MIN_PASSES = 3
#: an agreeing pair is shown alike (not merely not told apart) when the ratio's interval lies inside
#: this band: 80-125%, the average-bioequivalence limits (FDA, Statistical Approaches to Establishing
#: Bioequivalence, 2001); the report counts such pairs, the verdict stays `agree`
ALIKE_BAND = (0.8, 1.25)
#: every value of the `explained` column: a pair's verdict, each explained, agreeing or flagged
EXPLAINED = (
    "agree",
    "explained",
    "explained by definition",
    "unexplained",
    "not tested, figures close",
    "not tested, figures differ",
)
#: the verdicts that raise a flag, and which
FLAGGED = {"unexplained": "harness.disagree", "not tested, figures differ": "harness.untested"}

AGREEMENT_COLUMNS = [
    "seat",
    "workload",
    "concurrency",
    "metric",
    "statistic",
    "harness_a",
    "harness_b",
    "load_a",
    "load_b",
    "date_a",
    "date_b",
    "estimate_a",
    "low_a",
    "high_a",
    "estimate_b",
    "low_b",
    "high_b",
    "ratio",
    "ratio_low",
    "ratio_high",
    "ci_level",
    "verdict",
    "left_out",
    "differs_in",
    "common",
    "common_a",
    "common_a_low",
    "common_a_high",
    "common_b",
    "common_b_low",
    "common_b_high",
    "common_ratio",
    "common_ratio_low",
    "common_ratio_high",
    "common_verdict",
    "explained",
    "explanation",
]


@dataclass(frozen=True)
class _Side:
    """One harness's cell of a pair, with what comparing it needs."""

    row: pd.Series
    load: dict
    records: pd.DataFrame

    @property
    def harness(self) -> str:
        return str(self.row["harness"])

    @property
    def endpoint(self) -> str | None:
        return self.load.get("endpoint")

    def interval(self) -> tuple[float, float]:
        """The cell's interval: over passes where there are several, else within its one pass."""
        lo, hi = self.row.get("ci_low"), self.row.get("ci_high")
        if pd.isna(lo) or pd.isna(hi):
            lo, hi = self.row.get("within_low"), self.row.get("within_high")
        return (float(lo), float(hi)) if pd.notna(lo) and pd.notna(hi) else (math.nan, math.nan)


def _mean_length(spec) -> float | None:
    if not isinstance(spec, dict):
        return None
    if spec.get("mean") is not None:
        return float(spec["mean"])
    if spec.get("min") is not None and spec.get("max") is not None:
        return (float(spec["min"]) + float(spec["max"])) / 2
    return None


#: load fields that must be equal where both harnesses record them (lengths are compared apart, with
#: `LENGTH_TOLERANCE`; the data set's name is not: harnesses name one random prompt set differently)
_SAME_FIELDS = (
    ("streaming", "streaming"),
    ("prefix_tokens", "shared prefixes"),
    ("max_tokens", "answer caps"),
    ("arrival", "arrivals"),
    ("rate", "request rates"),
)


def _not_comparable(a: _Side, b: _Side) -> str | None:
    """Why two cells' loads are not one condition (None: comparable). Only what both record is compared."""
    reasons = []
    if a.endpoint and b.endpoint and a.endpoint != b.endpoint:
        reasons.append(f"endpoints differ ({a.endpoint} / {b.endpoint})")
    for field, words in _SAME_FIELDS:
        va, vb = a.load.get(field), b.load.get(field)
        if va is not None and vb is not None and va != vb:
            reasons.append(f"{words} differ ({va} / {vb})")
    da, db = a.load.get("dataset"), b.load.get("dataset")
    if da and db and da != db and ("." in str(da) or "." in str(db)):  # a prompt file is its own prompt set
        reasons.append(f"prompt sets differ ({da} / {db})")
    for side in (a, b):
        if _mean_length(side.load.get("prompt_tokens")) is None:
            reasons.append(f"{side.harness} records no prompt length")
    for field, words in (("prompt_tokens", "prompt lengths"), ("output_tokens", "output lengths")):
        la, lb = _mean_length(a.load.get(field)), _mean_length(b.load.get(field))
        if la and lb and abs(la - lb) / max(la, lb) > LENGTH_TOLERANCE:
            reasons.append(f"{words} differ ({la:.0f} / {lb:.0f} tokens)")
    da, db = str(a.row.get("date") or ""), str(b.row.get("date") or "")
    if da and db and da != db:
        reasons.append(f"measured on different days ({da} / {db})")
    return "; ".join(reasons) or None


def _log_se(estimate: float, low: float, high: float, level: float) -> float:
    """The log-scale standard error an interval implies: from its log half-width when both bounds are
    positive, else (an additive interval reaching below 0, as a t-interval over a few noisy requests
    can) from its half-width relative to the estimate, se(log X) ~ se(X) / X (the delta method)."""
    z = float(sps.norm.ppf(0.5 + level / 2))
    if low > 0 and high > 0:
        return (math.log(high) - math.log(low)) / (2 * z)
    return (high - low) / (2 * z * estimate)


def ratio_interval(a: tuple, b: tuple, *, level: float = LEVEL) -> tuple[float, float, float]:
    """b / a with an interval from each side's interval: log-scale standard errors read off each
    interval (`_log_se`) and added in quadrature (delta method on log b - log a; Casella &
    Berger, Statistical Inference, 2nd ed., §5.5.4). NaN bounds where either side has none."""
    (ea, la, ha), (eb, lb, hb) = a, b
    if not (ea > 0 and eb > 0):
        return math.nan, math.nan, math.nan
    r = eb / ea
    se = math.hypot(_log_se(ea, la, ha, level), _log_se(eb, lb, hb, level))
    if not math.isfinite(se):
        return r, math.nan, math.nan
    z = float(sps.norm.ppf(0.5 + level / 2))
    return r, r * math.exp(-z * se), r * math.exp(z * se)


def _reasoning_seats(requests: pd.DataFrame) -> set:
    """Seats whose answers carry reasoning, by any harness's records (`REASONING_SHARE`)."""
    if requests is None or not len(requests):
        return set()
    r = requests
    rc = pd.to_numeric(r["reasoning_chars"], errors="coerce").fillna(0)
    rt = pd.to_numeric(r["reasoning_tokens"], errors="coerce").fillna(0)
    later = (pd.to_numeric(r["first_content_ms"], errors="coerce") - pd.to_numeric(r["ttft_ms"], errors="coerce")) > 0
    has = (rc > 0) | (rt > 0) | later.fillna(False)
    share = has.groupby(r["seat"].astype(str)).mean()
    return set(share[share >= REASONING_SHARE].index)


def _first(frame: pd.DataFrame, fields: list[str]) -> pd.Series:
    out = pd.Series(np.nan, index=frame.index, dtype=float)
    for f in fields:
        out = out.fillna(pd.to_numeric(frame[f], errors="coerce").astype(float))
    return out


def common_values(
    side_records: pd.DataFrame,
    harness: str,
    metric: str,
    *,
    ttft_kind: str,
    forced_tokens: float | None,
    defs: Definitions,
    reasoning: bool = False,
) -> tuple[np.ndarray | None, str]:
    """Per-request values of `metric` under the common definition, or None and why not.

    TTFT: `ttft_kind` "first_token" (reasoning included) or "first_content" (the answer's first
    token), from the fields the definitions name for the harness. ITL and per-stream decode:
    (latency - first token) / (tokens - 1) with the server's token count (the harness's own
    count where it is the server's; else the forced output length of a load that forced one); not
    for a harness that cannot see reasoning on `reasoning` answers (its first token is the answer's).
    """
    common = defs.common(harness)
    ok = side_records[side_records["error"].isna()] if "error" in side_records else side_records
    if not len(ok) or not common:
        return None, "no request records"
    if metric == "ttft_ms":
        fields = common.get(ttft_kind) or []
        v = _first(ok, fields).to_numpy()
        return (v, "") if fields and np.isfinite(v).sum() >= 2 else (None, f"{harness} records no {ttft_kind}")
    if metric not in ("itl_ms", "decode_tok_s_per_stream"):
        return None, "not recomputed from requests (needs each harness's own wall clock)"
    if reasoning and common.get("first_token_needs_no_reasoning"):
        return None, f"{harness} cannot see reasoning, so its records hold no first token of these answers"
    first = _first(ok, common.get("first_token") or ["ttft_ms"])
    if common.get("server_tokens"):
        tokens = pd.to_numeric(ok["output_tokens"], errors="coerce").astype(float)
    elif forced_tokens:
        tokens = pd.Series(float(forced_tokens), index=ok.index)
    else:
        return None, f"{harness} counts tokens on the client and the load forced no length"
    gap = (pd.to_numeric(ok["e2e_latency_ms"], errors="coerce").astype(float) - first) / (tokens - 1)
    gap = gap[(tokens > 1) & (gap > 0)].to_numpy()
    if np.isfinite(gap).sum() < 2:
        return None, "fewer than 2 requests with a decode time"
    return (gap if metric == "itl_ms" else 1000.0 / gap), ""


def _forced_tokens(load: dict) -> float | None:
    out = load.get("output_tokens") or {}
    if load.get("fixed_output") and out.get("mean") is not None and not out.get("stdev"):
        return float(out["mean"])
    lo, hi = out.get("min"), out.get("max")
    return float(hi) if lo is not None and lo == hi else None


def _aspects(defs: Definitions, metric: str, a: _Side, b: _Side, reasoning: bool) -> list[str]:
    """The definitional differences that bear on `metric` for this pair, in words."""
    out = []
    for aspect, spec in defs.aspects.items():
        if metric not in spec["metrics"] or spec.get("statistics"):
            continue
        va, vb = defs.value(a.harness, aspect, a.endpoint), defs.value(b.harness, aspect, b.endpoint)
        if va is None or vb is None or va == vb:
            continue
        if aspect == "ttft_stop" and not _ttft_difference_bites(va, vb, reasoning, a.endpoint):
            continue
        out.append(f"{spec['title']}: {a.harness} {va}, {b.harness} {vb}")
    return out


def _ttft_difference_bites(va: str, vb: str, reasoning: bool, endpoint: str | None) -> bool:
    """Whether two TTFT stops can differ on these answers: reasoning splits first token from first
    content; a chat stream's role-only first chunk splits first chunk from first token."""
    pair = {va, vb}
    if "first_content" in pair and reasoning:
        return True
    return "first_chunk" in pair and endpoint == "chat"


def _common_kind(defs: Definitions, a: _Side, b: _Side, reasoning: bool) -> str | None:
    """The TTFT both harnesses can give: the first token where both see reasoning, else the answer's."""
    for kind in ("first_token", "first_content"):
        if all(
            defs.common(s.harness).get(kind)
            and not (
                kind == "first_token" and reasoning and defs.common(s.harness).get("first_token_needs_no_reasoning")
            )
            for s in (a, b)
        ):
            return kind
    if not reasoning:  # without reasoning the answer's first token is the first token
        return "first_token"
    return None


def _common_block(defs: Definitions, metric: str, a: _Side, b: _Side, reasoning: bool) -> dict:
    kind = _common_kind(defs, a, b, reasoning) if metric == "ttft_ms" else "first_token"
    if metric == "ttft_ms" and kind is None:
        return {"common_verdict": "not recomputed", "common": "no TTFT both harnesses record on reasoning answers"}
    vals, why = [], []
    for s in (a, b):
        v, reason = _side_common_values(s, metric, kind, defs, reasoning)
        vals.append(v)
        why.append(reason)
    label = _common_label(metric, kind)
    if vals[0] is None or vals[1] is None:
        return {"common_verdict": "not recomputed", "common": f"{label}: {'; '.join(w for w in why if w)}"}
    by_pass = all(len(v) >= COMMON_MIN_PASSES for v in vals)
    if by_pass:  # each pass one value: the mean of its requests' common values
        vals = [np.array([float(np.mean(x)) for x in v]) for v in vals]
        label += f", over pass means ({len(vals[0])} and {len(vals[1])} passes)"
    else:  # the requests of every pass as one sample (one pass each, as a rule)
        vals = [np.concatenate(v) for v in vals]
    out = {"common": label}
    for tag, v in zip("ab", vals):
        ti = t_interval(v, level=LEVEL)
        out.update({f"common_{tag}": ti.estimate, f"common_{tag}_low": ti.low, f"common_{tag}_high": ti.high})
    rc = welch_log_ratio(vals[0], vals[1], level=LEVEL)
    out.update(common_ratio=rc.estimate, common_ratio_low=rc.low, common_ratio_high=rc.high)
    out["common_verdict"] = "agree" if rc.low <= 1 <= rc.high else "differ"
    return out


def _side_common_values(
    side: _Side, metric: str, kind: str, defs: Definitions, reasoning: bool
) -> tuple[list[np.ndarray] | None, str]:
    """One side's per-request common values, one array per pass (run), or None and why not."""
    records = side.records
    groups = [g for _, g in records.groupby("run_id", sort=True)] if "run_id" in records else [records]
    out, reason = [], ""
    for g in groups:
        v, reason = common_values(
            g,
            side.harness,
            metric,
            ttft_kind=kind,
            forced_tokens=_forced_tokens(side.load),
            defs=defs,
            reasoning=reasoning,
        )
        if v is not None and np.isfinite(v).sum() >= 2:
            out.append(v[np.isfinite(v)])
    return (out, "") if out else (None, reason or "no request records")


def _common_label(metric: str, kind: str | None) -> str:
    if metric == "ttft_ms":
        return (
            "TTFT from request sent to the first token, reasoning included"
            if kind == "first_token"
            else "TTFT from request sent to the answer's first token"
        )
    return "(latency - first token) / (server output tokens - 1) per request" + (
        "" if metric == "itl_ms" else ", decode = 1 / that"
    )


def _untested(ratio: float, differs: list[str], common: dict, tolerance: float) -> tuple[str, str]:
    """(explained, explanation) of a pair one of whose figures has no interval."""
    why = (
        "not tested: a figure without an interval (one pass, and no request record holds this figure: "
        "measure several passes)"
    )
    named = f"; definitions differ in {'; '.join(differs)}" if differs else ""
    if math.isfinite(ratio) and abs(ratio - 1) <= tolerance:
        return "not tested, figures close", f"{why}; the figures are within {tolerance:.0%} of each other{named}"
    if common.get("common_verdict") == "agree":
        return "explained", "recomputed under one definition the figures agree" + (
            f": the gap is {'; '.join(differs)}" if differs else ""
        )
    return "not tested, figures differ", f"{why}; the figures are more than {tolerance:.0%} apart{named}"


def _explain(
    verdict: str, ratio: float, differs: list[str], common: dict, tolerance: float = UNTESTED_TOLERANCE
) -> tuple[str, str]:
    """(explained, explanation) of one comparable pair: one of `EXPLAINED`."""
    cv = common.get("common_verdict")
    if verdict == "agree":
        return "agree", "the figures agree within their intervals"
    if verdict == "no interval":
        return _untested(ratio, differs, common, tolerance)
    if cv == "agree":
        named = "; ".join(differs) if differs else "the harnesses' own computation from the same requests"
        return "explained", f"recomputed under one definition the figures agree: the gap is {named}"
    if cv == "differ":
        return "unexplained", "recomputed under one definition from the request records the figures still differ"
    if differs:
        return (
            "explained by definition",
            f"not recomputed ({common.get('common', '')}); definitions differ: " + "; ".join(differs),
        )
    return "unexplained", "no definitional difference in the table explains it"


def _pair_row(
    cell_a: _Side, cell_b: _Side, metric: str, defs: Definitions, reasoning_seats: set, tolerance: float
) -> dict:
    ra, rb = cell_a.row, cell_b.row
    row = {k: ra[k] for k in ("seat", "workload", "concurrency", "metric", "statistic")}
    row.update(
        harness_a=cell_a.harness,
        harness_b=cell_b.harness,
        load_a=ra.get("load"),
        load_b=rb.get("load"),
        date_a=ra.get("date"),
        date_b=rb.get("date"),
        ci_level=LEVEL,
    )
    la, ha = cell_a.interval()
    lb, hb = cell_b.interval()
    row.update(
        estimate_a=float(ra["estimate"]), low_a=la, high_a=ha, estimate_b=float(rb["estimate"]), low_b=lb, high_b=hb
    )
    left = _not_comparable(cell_a, cell_b)
    if left:
        row.update(verdict="left out", left_out=left)
        return row
    r, lo, hi = ratio_interval((row["estimate_a"], la, ha), (row["estimate_b"], lb, hb))
    verdict = (
        "no interval" if not (math.isfinite(lo) and math.isfinite(hi)) else ("agree" if lo <= 1 <= hi else "differ")
    )
    reasoning = str(ra["seat"]) in reasoning_seats
    differs = _aspects(defs, metric, cell_a, cell_b, reasoning)
    common = _common_block(defs, metric, cell_a, cell_b, reasoning)
    explained, explanation = _explain(verdict, r, differs, common, tolerance)
    row.update(ratio=r, ratio_low=lo, ratio_high=hi, verdict=verdict, differs_in="; ".join(differs))
    row.update(common)
    row.update(explained=explained, explanation=explanation)
    return row


def _records_by_cell(requests: pd.DataFrame | None, runs: pd.DataFrame) -> dict:
    """Request records keyed by (seat, harness, load_id, workload, concurrency)."""
    if requests is None or not len(requests):
        return {}
    meta = runs[["run_id", "harness", "load_id"]].astype({"run_id": str})
    r = requests.assign(run_id=requests["run_id"].astype(str)).merge(meta, on="run_id", how="left")
    if "counted_only" in r:
        r = r[~r["counted_only"].fillna(False).astype(bool)]
    keys = ["seat", "harness", "load_id", "workload", "concurrency"]
    r = r.assign(**{k: r[k].astype(object).where(r[k].notna(), None) for k in keys})
    return {tuple(k): g for k, g in r.groupby(keys, dropna=False, sort=False)}


def _loads(runs: pd.DataFrame) -> dict:
    out = {}
    for hid, lid, text in runs[["harness", "load_id", "load"]].itertuples(index=False):
        if (hid, lid) not in out:
            try:
                out[(hid, lid)] = json.loads(text) if isinstance(text, str) and text else {}
            except ValueError:
                out[(hid, lid)] = {}
    return out


def agreement(
    cells: pd.DataFrame,
    runs: pd.DataFrame,
    requests: pd.DataFrame | None = None,
    *,
    defs: Definitions | None = None,
    tolerance: float = UNTESTED_TOLERANCE,
) -> pd.DataFrame:
    """One row per pair of harnesses that measured one seat's cell (`AGREEMENT_COLUMNS`).

    `verdict`: agree (the ratio's interval holds 1), differ, no interval, or left out (the loads
    are not one condition; `left_out` says why). `explained`: agree, explained (the common
    definition recomputed from request records closes the gap), explained by definition (not
    recomputable, and the definitions differ in an aspect that bears on the metric), unexplained
    (the `harness.disagree` flag); a pair without an interval: "not tested, figures close" (within
    `tolerance`), else explained where the common recomputation agrees, else "not tested, figures
    differ" (the `harness.untested` flag). Every pair gets one of `EXPLAINED`.
    """
    defs = defs or default_definitions()
    if cells is None or not len(cells) or runs is None or not len(runs):
        return pd.DataFrame(columns=AGREEMENT_COLUMNS)
    c = cells[cells["metric"].isin(METRICS) & (cells["statistic"] == STATISTIC) & cells["harness"].notna()]
    # only seats some cell of which two harnesses measured: a fleet measured by one harness costs nothing
    n_harness = c.groupby(["seat", "workload", "concurrency", "metric"], dropna=False)["harness"].transform("nunique")
    c = c[n_harness >= 2]
    if not len(c):
        return pd.DataFrame(columns=AGREEMENT_COLUMNS)
    seats = set(c["seat"].astype(str))
    if requests is not None and len(requests):
        requests = requests[requests["seat"].astype(str).isin(seats)]
    loads, records = _loads(runs), _records_by_cell(requests, runs)
    reasoning_seats = _reasoning_seats(requests)
    rows = []
    for (seat, workload, conc, metric), g in c.groupby(
        ["seat", "workload", "concurrency", "metric"], dropna=False, sort=True
    ):
        sides = [
            _Side(
                row,
                loads.get((row["harness"], row["load_id"]), {}),
                records.get(
                    (seat, row["harness"], row["load_id"], workload, None if pd.isna(conc) else conc),
                    pd.DataFrame(columns=["error"]),
                ),
            )
            for _, row in g.sort_values(["harness", "load_id"]).iterrows()
        ]
        for i, a in enumerate(sides):
            for b in sides[i + 1 :]:
                if a.harness != b.harness:
                    rows.append(_pair_row(a, b, metric, defs, reasoning_seats, tolerance))
    return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)
