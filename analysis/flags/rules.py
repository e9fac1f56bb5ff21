"""The flag rules: pure functions of the tidy tables and the statistics, one per finding.

A flag is a finding about the data that limits what a reader may conclude
(spec/flags.md). Each rule below takes DataFrames (the tidy tables of
`analysis.tables`, and the `cells`, `comparisons` and `exam_deltas` frames of the
statistics layer, columns as in spec/cli.md) plus the `Thresholds` in force, and
returns `Flag` records. `compute_flags` runs them all and returns one DataFrame,
one row per finding, sorted deterministically.

Every threshold a rule uses is read from the `Thresholds` object by name and
written into the flag's evidence under that name; the defaults and their reasons
live in `analysis.thresholds` (pyperf's 10% CV and +/-50% spread, MLPerf-style
minimum tail counts, criterion's 2% noise band). `LOCAL_THRESHOLDS` holds the one
threshold the flags need that `Thresholds` does not have yet (`min_passes`); it is
read from the Thresholds object first, so adding the field there takes over.

Repetitive findings are grouped so a reader can bear them: sampling, stability and
sample-size flags are one row per seat (per seat and day for stability), with every
cell concerned listed in `evidence["cells"]`; the flag's cell fields are filled when
exactly one cell is concerned. Comparison flags are one row per compared pair.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import numpy as np
import pandas as pd
from scipy.stats import norm, t as student_t

from analysis.columns import QUANTILES, REQUEST_METRICS, STATISTICS
from analysis.stats._common import parse_values
from analysis.stats.stability import adjust_bh, change_test, cochrans_q, within_pass_se
from analysis.thresholds import DEFAULT, Thresholds

from analysis import format as F
from .exclusions import PREFILL_METRICS, CacheHit, Exclusions, drop_excluded, excluded_measurements
from .licenses import classify

__all__ = [
    "Flag", "FLAG_COLUMNS", "SEVERITIES", "CODES", "LOCAL_THRESHOLDS", "RULES",
    "compute_flags", "excluded_measurements", "drop_excluded", "empty_flags",
    "sample_passes", "small_n", "underpowered", "drift", "warmup_unknown",
    "mixed_runs", "prefix_cache", "reasoning_field", "capped_answers", "no_incumbent", "cross_model",
    "not_like_for_like", "missing_metric", "stale_scores", "exam_not_significant",
    "exam_counts_only", "fit_exceeds_node", "licenses", "faults", "import_assumed",
]

FLAG_COLUMNS = ["code", "severity", "seats", "workload", "concurrency", "metric", "statistic",
                "message", "evidence"]
#: most severe first; the sort order of the flags table
SEVERITIES = ("critical", "warn", "info")
_SEV_RANK = {s: i for i, s in enumerate(SEVERITIES)}

#: every code this module emits: (severities it can have, group, what triggers it).
#: Codes are stable (spec/flags.md: more may be added, none renamed).
CODES: dict[str, tuple[tuple[str, ...], str, str]] = {
    "sample.single_pass": (("warn",), "sample", "a cell measured in one pass only"),
    "sample.two_passes": (("warn",), "sample", "a cell measured in two passes"),
    "sample.few_passes": (("info",), "sample", "a cell measured in 3 to min_passes-1 passes"),
    "sample.mixed_runs": (("warn",), "sample",
                          "runs pooled as passes of one cell differ in harness, probe, cap, temperature, "
                          "thinking or settings"),
    "sample.small_n": (("warn", "info"), "sample",
                       "a CI from fewer than min_obs observations (warn when bootstrapped), or a tail "
                       "quantile with n*(1-q) < min_tail_obs (warn)"),
    "sample.underpowered": (("info",), "sample",
                            "a comparison without a verdict (no run-to-run variation measured, or a CI not "
                            "clear of the noise band), or an exam delta below its smallest detectable "
                            "difference; states the passes or the difference needed"),
    "drift.warmup": (("warn",), "stability",
                     "values monotone across >= 3 passes of one day, total change > drift_limit (and beyond "
                     "the passes' own sampling error where the data give it)"),
    "drift.unstable": (("warn",), "stability",
                       "passes of one cell with max/min > spread_limit or CV > cv_limit (and heterogeneous "
                       "beyond sampling error where the data give it)"),
    "warmup.unknown": (("info",), "stability", "runs that do not say whether warm-up was excluded"),
    "warmup.included": (("info",), "stability", "runs that say warm-up requests were measured"),
    "trap.prefix_cache": (("critical", "warn"), "traps",
                          "a prefill figure from a prompt that was not fresh, from a run whose requests "
                          "report cached prompt tokens, or > cache_ratio x the seat's fresh prefill "
                          "(critical, excluded); cached prompt tokens in a run without prefill figures (warn)"),
    "trap.reasoning_field": (("warn",), "traps",
                             "share of answers with empty content but delivered tokens > reasoning_share"),
    "trap.capped_answers": (("warn",), "traps", "share of answers stopped at the token cap > capped_share"),
    "compare.no_incumbent": (("warn",), "comparisons",
                             "seats measured on a day the incumbent was not measured with the same "
                             "harness and probe, or no incumbent at all"),
    "compare.cross_model": (("warn", "info"), "comparisons",
                            "compared seats serve different models (info when both took a common exam)"),
    "compare.not_like_for_like": (("warn", "info"), "comparisons",
                                  "compared runs differ in harness, probe, answer cap, temperature, thinking "
                                  "or seat settings (info when a setting is stated for one side only)"),
    "compare.missing_metric": (("warn", "info"), "comparisons",
                               "a figure in another form on the other side (warn) or on one side only (info)"),
    "compare.stale_scores": (("warn",), "exams",
                             "exam scores measured on another date or placement than the runs"),
    "exam.not_significant": (("info",), "exams", "exam delta with p >= alpha (or Holm-adjusted p >= alpha)"),
    "exam.counts_only": (("info",), "exams", "exam delta tested unpaired because only counts are known"),
    "fit.exceeds_node": (("warn",), "deployment",
                         "checkpoint bytes > (1 - fit_headroom) x one node's raw GPU memory"),
    "license.noncommercial": (("warn",), "deployment", "a component licence forbids commercial use"),
    "license.unknown": (("info",), "deployment", "a component licence is absent, NOASSERTION or unknown"),
    "fault.recorded": (("warn",), "faults", "an event of kind fault or crash"),
    "fault.unreproduced": (("info",), "faults", "a fault or crash recorded as not reproduced"),
    "defect.open": (("warn",), "faults", "an event of kind defect"),
    "import.assumed": (("info",), "provenance", "a run whose importer assumed seat, pass or date"),
    "import.figure_mismatch": (("warn", "info"), "provenance",
                               "a reported figure its own request records do not reproduce beyond rounding "
                               "(warn beyond the noise band)"),
    "requests.failed": (("critical", "warn", "info"), "faults",
                        "failed requests: critical above failed_critical of a run, warn above failed_warn"),
    "sample.correlated_requests": (("info",), "sample",
                                   "requests of one pass with lag-1 autocorrelation above lag1_limit"),
}

#: thresholds the flags need that analysis.thresholds.Thresholds does not define (yet):
#: name -> (default, why). Read from Thresholds first when it has the field.
LOCAL_THRESHOLDS: dict[str, tuple[Any, str]] = {
    "min_passes": (5, "a cell needs at least 5 passes for a median and range to be more than the "
                      "passes themselves and a t-interval to have 4 degrees of freedom; spec/flags.md "
                      "calls 3 to 4 passes 'few'"),
}


@dataclass
class Flag:
    """One finding (spec/flags.md): code, severity, seats, optional cell, message, evidence."""

    code: str
    severity: str
    seats: tuple
    message: str
    evidence: dict = field(default_factory=dict)
    workload: Any = None
    concurrency: Any = None
    metric: Any = None
    statistic: Any = None


# --- small helpers --------------------------------------------------------------------------

def _th(thresholds, name: str):
    """A threshold by name: from the Thresholds object, else the local default."""
    if hasattr(thresholds, name):
        return getattr(thresholds, name)
    return LOCAL_THRESHOLDS[name][0]


def _used(thresholds, *names) -> dict:
    return {n: _plain(_th(thresholds, n)) for n in names}


def _plain(v):
    """JSON-ready Python values (numpy scalars, NA, tuples, nested containers)."""
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set)):
        seq = sorted(v, key=str) if isinstance(v, set) else v
        return [_plain(x) for x in seq]
    if isinstance(v, np.ndarray):
        return [_plain(x) for x in v.tolist()]
    if F.missing(v):
        return None
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, (np.floating, float)):
        f = float(v)
        return f if math.isfinite(f) else None
    return v


def _na(v):
    return None if F.missing(v) else v


def _int_or_none(v):
    return None if F.missing(v) else int(v)


def _key_sort(v):
    """Sort key tolerant of None/NA mixed with values."""
    if F.missing(v):
        return (1, "")
    if isinstance(v, (int, float, np.integer, np.floating)):
        return (0, f"{float(v):020.6f}")
    return (0, str(v))


def _true(s: pd.Series) -> pd.Series:
    """Boolean mask with NA as False."""
    return s.astype("boolean").fillna(False).astype(bool)


def _settings(value) -> dict:
    if F.missing(value):
        return {}
    if isinstance(value, dict):
        return value
    try:
        out = json.loads(value)
    except (TypeError, ValueError):
        return {}
    return out if isinstance(out, dict) else {}


def _cell_dict(workload, concurrency, metric, statistic) -> dict:
    return {"workload": _na(workload), "concurrency": _int_or_none(concurrency),
            "metric": _na(metric), "statistic": _na(statistic)}


def _describe_cells(cells: list[dict], limit: int = 4) -> str:
    """Cells grouped by (metric, statistic, workload) with concurrencies listed:
    'per-stream decode at 1, 4, 8 and 16 streams; prefill throughput; per-stream decode at 1 stream (code)'."""
    groups: dict[tuple, list] = {}
    for c in cells:
        key = (c.get("metric"), c.get("statistic"), c.get("workload"))
        groups.setdefault(key, []).append(c.get("concurrency"))
    parts = []
    order = sorted(groups.items(), key=lambda kv: (_key_sort(kv[0][0]), _key_sort(kv[0][2]), _stat_rank(kv[0][1])))
    for (metric, stat, workload), concs in order:
        head = F.metric_words(metric)
        if stat and stat != "mean":
            head += f" {stat}"
        known = sorted({int(c) for c in concs if c is not None})
        if known:
            head += f" at {F.int_list(known)} streams" if known != [1] else " at 1 stream"
        parts.append(head + F.workload_note(workload))
    if len(parts) > limit:
        rest = len(parts) - limit
        return "; ".join(parts[:limit]) + f"; and {rest} more"
    return "; ".join(parts)


def _cell_order(c: dict) -> tuple:
    """Sort key of a cell dict: workload, metric, statistic, concurrency, date."""
    return tuple(_key_sort(c.get(k)) for k in ("workload", "metric", "statistic", "concurrency", "date"))


def _stat_rank(stat) -> int:
    s = "mean" if F.missing(stat) else str(stat)
    return STATISTICS.index(s) if s in STATISTICS else len(STATISTICS)


def _one_cell(flag: Flag, cells: list[dict]) -> Flag:
    if len(cells) == 1:
        c = cells[0]
        flag.workload, flag.concurrency = c.get("workload"), c.get("concurrency")
        flag.metric, flag.statistic = c.get("metric"), c.get("statistic")
    return flag


def _norm_cells(cells: pd.DataFrame | None) -> pd.DataFrame | None:
    if cells is None:
        return None
    df = cells.copy()
    for col in ("seat", "workload", "concurrency", "metric", "statistic", "n_passes", "n_obs",
                "ci_low", "ci_high", "ci_method", "values", "date", "unit", "estimate"):
        if col not in df.columns:
            df[col] = pd.NA
    df["statistic"] = df["statistic"].astype(object).where(df["statistic"].notna(), "mean")
    return df


# --- sampling ---------------------------------------------------------------------------------

def sample_passes(cells: pd.DataFrame | None, *, thresholds: Thresholds = DEFAULT) -> list[Flag]:
    """`sample.single_pass` / `sample.two_passes` / `sample.few_passes`, one flag per seat and kind.

    From `cells.n_passes`. One pass says nothing of run-to-run variability (no CI);
    two passes are reported as both values, not a mean; 3 to `min_passes - 1` passes
    as median and range (a CI from so few clusters is fragile: Cameron & Miller 2015).
    The fleet paper says it in one sentence per seat ("measured in a single sweep per
    concurrency level"), so the cells of a seat are listed in one flag.
    """
    cells = _norm_cells(cells)
    if cells is None or cells.empty:
        return []
    min_passes = int(_th(thresholds, "min_passes"))
    kinds = {}
    for row in cells.itertuples(index=False):
        n = _int_or_none(row.n_passes)
        if n is None or n < 1:
            continue
        if n == 1:
            code = "sample.single_pass"
        elif n == 2:
            code = "sample.two_passes"
        elif n < min_passes:
            code = "sample.few_passes"
        else:
            continue
        cell = _cell_dict(row.workload, row.concurrency, row.metric, row.statistic)
        cell["n_passes"] = n
        cell["values"] = parse_values(row.values)
        if not F.missing(row.date):
            cell["date"] = str(row.date)
        kinds.setdefault((row.seat, code), []).append(cell)
    out = []
    for (seat, code), cl in sorted(kinds.items()):
        cl = sorted(cl, key=_cell_order)
        desc = _describe_cells(cl)
        if code == "sample.single_pass":
            if len(cl) == 1:
                c0 = cl[0]
                phrase = F.cell_phrase(c0["workload"], c0["concurrency"], c0["metric"], c0["statistic"])
                what = f"{seat} was measured in a single pass for {phrase}."
            else:
                what = f"{seat} was measured in a single pass in {len(cl)} cells ({desc})."
            tail = (" One pass says nothing about run-to-run variability: there is no confidence interval "
                    "for the seat, intervals over its requests describe that one run only, and no verdict "
                    "of better or worse rests on it.")
            msg = what + tail
            sev = "warn"
        elif code == "sample.two_passes":
            shown = [f"{F.cell_phrase(c['workload'], c['concurrency'], c['metric'], c['statistic'])}: "
                     f"{F.series(c['values'], ' and ')} {F.unit_of(c['metric'])}".rstrip() for c in cl[:4]]
            more = f"; and {len(cl) - 4} more cells" if len(cl) > 4 else ""
            msg = (f"{seat} was measured in two passes for {'; '.join(shown)}{more}. "
                   "Two observations do not give a reliable mean: report both values.")
            sev = "warn"
        else:
            same_n = len({c["n_passes"] for c in cl}) == 1
            shown = [f"{F.cell_phrase(c['workload'], c['concurrency'], c['metric'], c['statistic'])}: "
                     + ("" if same_n else f"{c['n_passes']} passes, ")
                     + f"{F.series(c['values'])} {F.unit_of(c['metric'])}".rstrip() for c in cl[:4]]
            more = f"; and {len(cl) - 4} more cells" if len(cl) > 4 else ""
            ns = F.join_words(sorted({str(c["n_passes"]) for c in cl}), "or")
            msg = (f"{seat} was measured in only {ns} passes for {'; '.join(shown)}{more}. "
                   "Report the median and the range (the range of k passes covers the median with "
                   "probability 1 - 2^(1-k): 75% at 3, 88% at 4); a confidence interval from so few passes "
                   "is wide and rests on the passes varying lognormally.")
            sev = "info"
        ev = {"n_cells": len(cl), "cells": cl, "thresholds": _used(thresholds, "min_passes")}
        out.append(_one_cell(Flag(code, sev, (seat,), msg, ev), cl))
    return out


def _is_bootstrap(method) -> bool:
    m = "" if F.missing(method) else str(method).lower()
    return any(k in m for k in ("bootstrap", "bca", "percentile"))


def small_n(cells: pd.DataFrame | None, *, thresholds: Thresholds = DEFAULT) -> list[Flag]:
    """`sample.small_n`: a figure a run reported whose CI rests on fewer than `min_obs`
    observations, or a reported tail quantile with fewer than `min_tail_obs` observations
    beyond it (n*(1-q) < min_tail_obs). Statistics the analysis derives itself are only
    computed where the sample supports them (analysis.stats.cells), so they are never flagged.

    A bootstrap CI below `min_obs` under-covers (percentile/BCa give about 75% at n=3
    when 95% is asked: Davison & Hinkley 1997, ch. 5), hence warn; a t-interval or a
    published CI from few observations is noted (info). A p99 from 100 requests is
    essentially the maximum of one or two requests (MLPerf sets minimum query counts
    for its tail-latency percentiles for this reason), hence warn.
    """
    cells = _norm_cells(cells)
    if cells is None or cells.empty:
        return []
    if "source" in cells:  # only figures the runs claim: what we computed ourselves is never warned about
        cells = cells[cells["source"].astype("string").fillna("").str.contains("reported")]
    min_obs, min_tail = int(thresholds.min_obs), int(thresholds.min_tail_obs)
    found: dict[tuple, list] = {}
    for row in cells.itertuples(index=False):
        n = _int_or_none(row.n_obs)
        if n is None:
            continue
        q = QUANTILES.get(str(row.statistic))
        cell = _cell_dict(row.workload, row.concurrency, row.metric, row.statistic)
        cell["n_obs"] = n
        if q is not None and q > 0.5 and n * (1 - q) < min_tail:
            cell["beyond_quantile"] = n * (1 - q)
            cell["needed_n"] = int(math.ceil(min_tail / (1 - q) - 1e-9))
            found.setdefault((row.seat, "tail"), []).append(cell)
        elif n < min_obs and ((not F.missing(row.ci_low) and not F.missing(row.ci_high))
                              or not F.missing(getattr(row, "within_low", None))):
            cell["ci_method"] = _na(row.ci_method)
            kind = "bootstrap" if _is_bootstrap(row.ci_method) else "ci"
            found.setdefault((row.seat, kind), []).append(cell)
    out = []
    for (seat, kind), cl in sorted(found.items()):
        cl = sorted(cl, key=_cell_order)
        if kind == "tail":
            parts = [f"{F.cell_phrase(c['workload'], c['concurrency'], c['metric'], c['statistic'])} from "
                     f"{c['n_obs']} observations ({F.num(c['beyond_quantile'])} beyond it; {c['needed_n']} needed)"
                     for c in cl[:4]]
            msg = (f"{seat}: tail figures rest on too few observations beyond the quantile: "
                   f"{'; '.join(parts)}{'; and more' if len(cl) > 4 else ''}. "
                   f"A tail quantile needs at least {min_tail} observations beyond it to be more than "
                   "the slowest few requests.")
            sev = "warn"
        else:
            ns = sorted({c["n_obs"] for c in cl})
            desc = _describe_cells(cl)
            how = ("bootstrap confidence intervals" if kind == "bootstrap" else "confidence intervals")
            msg = (f"{seat}: the {how} of {desc} rest on {F.join_words([str(n) for n in ns], 'or')} observations, "
                   f"fewer than the {min_obs} this analysis asks for")
            if kind == "bootstrap":
                msg += "; a bootstrap interval from so few observations covers less than its stated level."
                sev = "warn"
            else:
                msg += "; they hold only as far as the values are close to normally distributed."
                sev = "info"
        ev = {"n_cells": len(cl), "cells": cl, "kind": kind,
              "thresholds": _used(thresholds, "min_obs", "min_tail_obs")}
        out.append(_one_cell(Flag("sample.small_n", sev, (seat,), msg, ev), cl))
    return out


def _z(p: float) -> float:
    return float(norm.ppf(p))


def underpowered(comparisons: pd.DataFrame | None, exam_deltas: pd.DataFrame | None = None, *,
                 thresholds: Thresholds = DEFAULT) -> list[Flag]:
    """`sample.underpowered`: a difference this sample could not have told from none.

    Comparisons (kind baseline) without a verdict: how many passes per seat would detect
    a true `min_effect` difference with the interval clear of the noise band
    (`passes_needed`). One flag per compared pair, cells listed.

    Exam deltas: a delta with p >= alpha whose observed difference lies below the
    `mde` the statistics layer gives (smallest difference detectable at `power`).
    """
    out = []
    alpha, power, noise = float(thresholds.alpha), float(thresholds.power), float(thresholds.noise)
    effect = float(thresholds.min_effect)
    if comparisons is not None and not comparisons.empty:
        pairs: dict[tuple, list] = {}
        for row in comparisons.itertuples(index=False):
            if getattr(row, "verdict", None) in ("better", "worse", "within_noise") or \
                    getattr(row, "kind", "baseline") == "history":
                continue
            cell = _cell_dict(row.workload, row.concurrency, row.metric, getattr(row, "statistic", "mean"))
            cell.update({"ratio": _plain(getattr(row, "ratio", None)), "verdict": _na(getattr(row, "verdict", None)),
                         "reason": _na(getattr(row, "verdict_reason", None))})
            cell["passes_needed"] = passes_needed(row, alpha=alpha, power=power, effect=effect, noise=noise)
            if cell["passes_needed"] is None:
                continue
            cell.update({"ci_low": _plain(row.ci_low), "ci_high": _plain(row.ci_high)})
            pairs.setdefault((row.baseline, row.candidate), []).append(cell)
        for (base, cand), cl in sorted(pairs.items(), key=lambda kv: tuple(map(str, kv[0]))):
            cl = sorted(cl, key=_cell_order)
            parts = []
            for c in cl[:3]:
                head = F.cell_phrase(c["workload"], c["concurrency"], c["metric"], c["statistic"])
                if F.missing(c["ci_low"]):
                    parts.append(f"{head}: no run-to-run variation measured, at least "
                                 f"{c['passes_needed']} passes per seat needed")
                else:
                    parts.append(f"{head}: ratio {F.num(c['ratio'])} (CI {F.num(c['ci_low'])}–"
                                 f"{F.num(c['ci_high'])}), about {c['passes_needed']} passes per seat needed")
            msg = (f"{cand} against {base}: these data cannot tell a {F.pct(effect)} difference from none in "
                   f"{F.plural(len(cl), 'cell')} ({'; '.join(parts)}{'; and more' if len(cl) > 3 else ''}), "
                   f"at {F.pct(power)} power with the interval clear of the ±{F.pct(noise)} noise band.")
            ev = {"kind": "comparison", "baseline": base, "candidate": cand, "n_cells": len(cl), "cells": cl,
                  "thresholds": _used(thresholds, "alpha", "power", "noise", "min_effect")}
            seats = tuple(sorted({str(base), str(cand)}))
            out.append(_one_cell(Flag("sample.underpowered", "info", seats, msg, ev), cl))
    if exam_deltas is not None and not exam_deltas.empty:
        for row in exam_deltas.itertuples(index=False):
            p = getattr(row, "p_value", None)
            mde, diff = getattr(row, "mde", None), getattr(row, "diff", None)
            if F.missing(p) or float(p) < alpha or F.missing(mde):
                continue
            if not F.missing(diff) and abs(float(diff)) >= float(mde):
                continue
            n = _int_or_none(getattr(row, "n_items", None))
            bench = _exam_name(row.benchmark, getattr(row, "dimension", None))
            msg = (f"{bench}, {row.candidate} against {row.baseline}: with {n} items this test detects only "
                   f"differences of about {_points(mde)} or more at {F.pct(power)} power; the observed "
                   f"difference of {_points(diff, signed=True)} is below that.")
            ev = {"kind": "exam", "benchmark": row.benchmark, "dimension": _na(getattr(row, "dimension", None)),
                  "baseline": row.baseline, "candidate": row.candidate, "n_items": n, "diff": _plain(diff),
                  "mde": _plain(mde), "p_value": _plain(p), "thresholds": _used(thresholds, "alpha", "power")}
            seats = tuple(sorted({str(row.baseline), str(row.candidate)}))
            out.append(Flag("sample.underpowered", "info", seats, msg, ev))
    return out


def passes_needed(row, *, alpha: float, power: float, effect: float, noise: float) -> int | None:
    """Passes per seat a comparison needs to detect a true `effect` with its CI clear of the noise band.

    n = 2 s^2 (z_{1-alpha/2} + z_power)^2 / (ln(1 + effect) - ln(1 + noise))^2 (Cohen 1988,
    ch. 2, on the log scale), s^2 the per-pass log variance recovered from the Welch interval
    (s^2 = se^2 / (1/k_b + 1/k_c), the two sides taken as equally variable). Without a
    between-pass interval: 3, the fewest passes that measure run-to-run variation. None when
    the effect does not clear the noise band. Before any correction for multiple comparisons,
    so a lower bound.
    """
    gap = math.log1p(effect) - math.log1p(noise)
    if gap <= 0:
        return None
    lo, hi, df = getattr(row, "ci_low", None), getattr(row, "ci_high", None), getattr(row, "df", None)
    if F.missing(lo) or F.missing(hi) or F.missing(df) or lo <= 0 or hi <= lo:
        return 3
    kb, kc = _int_or_none(getattr(row, "baseline_n_passes", None)), _int_or_none(getattr(row, "candidate_n_passes", None))
    if not kb or not kc:
        return 3
    level = getattr(row, "ci_level", None)
    level = 1 - alpha if F.missing(level) else float(level)
    se = (math.log(hi) - math.log(lo)) / (2 * float(student_t.ppf(0.5 + level / 2, float(df))))
    s2 = se * se / (1 / kb + 1 / kc)
    n = 2 * s2 * (_z(1 - alpha / 2) + _z(power)) ** 2 / gap ** 2
    return max(3, int(math.ceil(n)))


#: how a test name reads in a sentence (matched on lower-case words of the name)
def test_words(test) -> str:
    """'Fisher exact (counts)' -> "Fisher's exact test", 'McNemar exact (paired items)' -> 'the exact McNemar test'."""
    t = str(test).lower()
    if "boschloo" in t:
        return "Boschloo's exact test"
    if "fisher" in t:
        return "Fisher's exact test"
    if "barnard" in t:
        return "Barnard's exact test"
    if "mcnemar" in t:
        return "the mid-p McNemar test" if "mid" in t else "the exact McNemar test"
    return str(test)


def _exam_name(benchmark, dimension) -> str:
    return f"{benchmark} ({dimension})" if not F.missing(dimension) else str(benchmark)


def _points(x, signed: bool = False) -> str:
    """A difference of proportions in percentage points ('7.6 points', '-0.6 points')."""
    if F.missing(x):
        return "n/a"
    v = float(x)
    v = v * 100 if abs(v) <= 1 else v
    sign = "+" if signed and v > 0 else ""
    return f"{sign}{v:.1f} points"


# --- stability ----------------------------------------------------------------------------------

def _pass_series(cells: pd.DataFrame | None, tables) -> list[dict]:
    """Per-day series of per-pass values: (seat, date, cell, values in pass order).

    From `cells` when it has a `date` column (one row per seat and day); otherwise from
    `cells` for seats measured on one day only and from the measurements table for
    seats measured on several days (so passes of different days are never mixed).
    """
    cells = _norm_cells(cells)
    out = []
    runs = tables.runs if tables is not None else None
    days = {}
    if runs is not None and not runs.empty:
        days = runs.groupby("seat")["date"].apply(lambda s: sorted(set(s.dropna().astype(str)))).to_dict()
    multi_day = {s for s, d in days.items() if len(d) > 1}
    if cells is not None and not cells.empty:
        has_date = cells["date"].notna().any()
        for row in cells.itertuples(index=False):
            if not has_date and row.seat in multi_day:
                continue
            vals = parse_values(row.values)
            date = str(row.date) if not F.missing(row.date) else (days.get(row.seat, [None]) or [None])[0]
            out.append({"seat": row.seat, "date": date,
                        **_cell_dict(row.workload, row.concurrency, row.metric, row.statistic), "values": vals})
        if has_date:
            return out
    if tables is not None and multi_day and not tables.measurements.empty:
        m = tables.measurements
        m = m[m["seat"].isin(multi_day)]
        for key, g in m.groupby(["seat", "date", "workload", "concurrency", "metric", "statistic"], dropna=False):
            per_pass = g.groupby("pass")["value"].median().sort_index()
            out.append({"seat": key[0], "date": str(key[1]),
                        **_cell_dict(key[2], key[3], key[4], key[5]), "values": per_pass.tolist()})
    return out


def drift(cells: pd.DataFrame | None, tables=None, *, thresholds: Thresholds = DEFAULT) -> list[Flag]:
    """`drift.warmup` and `drift.unstable`, one flag per seat, day and code.

    Warm-up: values strictly monotone across >= 3 passes of one day with a total change
    |last - first| / |first| above `drift_limit`. Judged by effect size, not a trend test:
    Mann-Kendall's smallest two-sided p at n = 3 is 1/3, so three passes can never be
    "significant" (Hamed & Rao 1998). Unstable: passes of one cell with max/min above
    `spread_limit` or a coefficient of variation (sample SD / mean) above `cv_limit`
    (pyperf's checks, `pyperf/_cli.py`). A series already flagged as warm-up is not
    flagged again as unstable (the monotone climb explains the spread; its CV and
    spread are in the warm-up evidence).

    Where each pass's own sampling error is known (request records, or a CI given with
    the figure), a movement the passes' sampling error explains is not a finding: a
    warm-up also needs the change |last - first| to be significant against
    sqrt(se_first^2 + se_last^2) (normal test), and instability also needs Cochran's Q test
    of the pass values (weights 1/se^2) to reject homogeneity (Cochran 1954), both at
    `alpha` after Benjamini-Hochberg adjustment across all cells tested (a fleet has
    hundreds of cells; at 5% each, some would move by chance). Without this, a p95 from
    200 requests per pass moves by 10-20% between passes from sampling alone and would be
    reported as drift. Tail quantiles with fewer than `min_tail_obs` requests beyond them
    in a pass are not judged at all.
    """
    drift_limit, spread_limit, cv_limit = (float(thresholds.drift_limit), float(thresholds.spread_limit),
                                           float(thresholds.cv_limit))
    alpha = float(thresholds.alpha)
    z = _z(1 - alpha / 2)
    noise = {} if tables is None else within_pass_se(tables.requests, tables.measurements, z=z,
                                                     min_tail_obs=int(thresholds.min_tail_obs))

    series = []
    for s in _pass_series(cells, tables):
        vals = s["values"]
        if len(vals) < 2:
            continue
        mean = float(np.mean(vals))
        cv = float(np.std(vals, ddof=1) / abs(mean)) if mean != 0 else math.inf
        spread = max(vals) / min(vals) if min(vals) > 0 else None
        diffs = np.diff(vals)
        monotone = len(vals) >= 3 and (bool(np.all(diffs > 0)) or bool(np.all(diffs < 0)))
        change = (vals[-1] - vals[0]) / abs(vals[0]) if vals[0] != 0 else math.inf
        cell = {k: s[k] for k in ("workload", "concurrency", "metric", "statistic")}
        cell.update({"values": vals, "n_passes": len(vals), "cv": cv, "spread": spread,
                     "total_change": change})
        key = (str(s["seat"]), str(s["date"]), s["workload"], s["concurrency"], str(s["metric"]),
               str(s["statistic"] or "mean"))
        se_by_pass = noise.get(key, {})
        se = [se_by_pass[p] for p in sorted(se_by_pass)] if len(se_by_pass) == len(vals) else None
        if se is not None and any(math.isinf(x) for x in se):
            continue  # per-pass tail figures too thin to compare (sample.small_n speaks for them)
        if se is not None and all(x > 0 for x in se):
            cell["within_pass_se"] = se
            cell["change_p"] = change_test(vals[0], vals[-1], se[0], se[-1])
            q = cochrans_q(vals, se)
            cell["cochran_q"], cell["cochran_p"] = q.statistic, q.pvalue
        series.append((s, cell, monotone))
    # many cells are tested at once: adjust across them (Benjamini & Hochberg 1995)
    for name in ("change_p", "cochran_p"):
        tested = [c for _, c, _ in series if name in c]
        for c, adj in zip(tested, adjust_bh([c[name] for c in tested])):
            c[name + "_adj"] = adj
    groups: dict[tuple, list] = {}
    for s, cell, monotone in series:
        change, cv, spread = cell["total_change"], cell["cv"], cell["spread"]
        if monotone and abs(change) > drift_limit and cell.get("change_p_adj", 0.0) < alpha:
            groups.setdefault((s["seat"], s["date"], "drift.warmup"), []).append(cell)
        elif ((spread is not None and spread > spread_limit) or cv > cv_limit) \
                and cell.get("cochran_p_adj", 0.0) < alpha:
            groups.setdefault((s["seat"], s["date"], "drift.unstable"), []).append(cell)
    out = []
    for (seat, date, code), cl in sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0]))):
        cl = sorted(cl, key=_cell_order)
        if code == "drift.warmup":
            parts = [f"{F.cell_phrase(c['workload'], c['concurrency'], c['metric'], c['statistic'])} "
                     f"{'climbed' if c['total_change'] > 0 else 'fell'} {F.series(c['values'], ' → ')} "
                     f"{F.unit_of(c['metric'])} ({F.pct(c['total_change'], signed=True)})".replace("  ", " ")
                     for c in cl[:3]]
            msg = (f"{seat} on {date}: {'; '.join(parts)}{'; and more' if len(cl) > 3 else ''} across consecutive "
                   "passes, so the seat was not at steady state. Report the median and the range; "
                   "the first passes are not representative.")
        else:
            parts = []
            for c in cl[:3]:
                spread_txt = f"{F.ratio(c['spread'])}-fold" if c["spread"] is not None else "spread n/a"
                parts.append(f"{F.cell_phrase(c['workload'], c['concurrency'], c['metric'], c['statistic'])} "
                             f"ranged {F.num(min(c['values']))}–{F.num(max(c['values']))} {F.unit_of(c['metric'])} "
                             f"over {c['n_passes']} passes ({spread_txt}, CV {F.pct(c['cv'])})".replace("  ", " "))
            msg = (f"{seat} on {date}: {'; '.join(parts)}{'; and more' if len(cl) > 3 else ''}. "
                   "One pass is not representative of this seat; report the median and the range.")
        ev = {"date": date, "n_cells": len(cl), "cells": cl,
              "thresholds": _used(thresholds, "drift_limit", "spread_limit", "cv_limit", "alpha", "min_tail_obs")}
        out.append(_one_cell(Flag(code, "warn", (seat,), msg, ev), cl))
    return out


def warmup_unknown(runs: pd.DataFrame) -> list[Flag]:
    """`warmup.unknown` (warm-up exclusion not stated) and `warmup.included` (stated as measured),
    one flag per seat listing its runs."""
    out = []
    if runs is None or runs.empty:
        return out
    w = runs["warmup_excluded"].astype("boolean")
    for code, mask in (("warmup.unknown", w.isna()), ("warmup.included", w.fillna(True).eq(False))):
        sub = runs[mask.to_numpy()]
        for seat, g in sub.groupby("seat"):
            dates = sorted(set(g["date"].astype(str)))
            ids = sorted(g["run_id"].astype(str))
            if code == "warmup.unknown":
                msg = (f"{seat}: {F.plural(len(ids), 'run')} ({F.join_words(dates)}) do not say whether warm-up "
                       "requests were excluded, so the first requests may carry start-up effects.")
                if len(ids) == 1:
                    msg = msg.replace(" do not say", " does not say")
            else:
                msg = (f"{seat}: {F.plural(len(ids), 'run')} ({F.join_words(dates)}) measured the warm-up "
                       "requests too, so the figures include start-up effects.")
            ev = {"runs": ids, "dates": dates, "total_runs": int((runs["seat"] == seat).sum())}
            out.append(Flag(code, "info", (str(seat),), msg, ev))
    return out


# --- measurement traps --------------------------------------------------------------------------

def _measurement_id(h: CacheHit) -> dict:
    """How a flag names one excluded measurement (evidence["excluded"] entries)."""
    return {"seat": h.seat, "run_id": h.run_id, "workload": h.workload, "concurrency": h.concurrency,
            "metric": h.metric, "statistic": h.statistic, "value": h.value}


def _cache_dict(cr) -> dict:
    return {"requests_with_cache_hits": cr.requests_with_cache_hits, "requests": cr.requests,
            "cached_prompt_tokens": cr.cached_prompt_tokens, "prompt_tokens": cr.prompt_tokens,
            "seat": cr.seat, "date": cr.date}


def prefix_cache(excluded: Exclusions) -> list[Flag]:
    """`trap.prefix_cache`: a prefill figure that is a prefix-cache hit, not prefill.

    Critical, one flag per figure `decide_exclusions` excluded from results. A run whose
    requests report cached prompt tokens but which has no excluded figure is flagged warn:
    its TTFT includes cache hits.
    """
    th = {"cache_ratio": excluded.cache_ratio}
    out = []
    flagged_runs = set()
    for h in excluded.hits:
        seat, metric = h.seat, h.metric
        mid = _measurement_id(h)
        flagged_runs.add(h.run_id)
        clauses = []
        if "not_fresh" in h.reasons:
            clauses.append("the prompt had been sent before")
        if "cached_tokens" in h.reasons:
            cr = excluded.cached_run(h.run_id)
            clauses.append(f"{cr.requests_with_cache_hits} of {cr.requests} requests of its run report "
                           f"{F.num(cr.cached_prompt_tokens)} cached prompt tokens")
        if "ratio" in h.reasons:
            ref_txt = "fresh-prompt prefill" if h.reference_kind == "fresh" else "other prefill figures"
            clauses.append(f"it is {F.ratio(h.ratio)} times the seat's {ref_txt} of "
                           f"{F.value_with_unit(h.reference, 'prefill_tok_s')}")
        what = "prefill figure" if metric in PREFILL_METRICS else f"{F.metric_words(metric)} figure"
        not_what = "prefill" if metric in PREFILL_METRICS else "a fresh-prompt measurement"
        msg = (f"{seat}: the {what} of {F.value_with_unit(h.value, metric)} ({h.date}, pass {h.pass_}) "
               f"is a prefix-cache hit, not {not_what}: "
               f"{'; '.join(clauses)}. It is excluded from results.")
        ev = {"value": h.value, "run_id": h.run_id, "date": h.date,
              "pass": h.pass_, "reasons": list(h.reasons),
              "fresh_prompt": h.fresh_prompt, "context_tokens": h.context_tokens,
              "excluded": [mid], "thresholds": dict(th)}
        if h.reference_kind is not None:
            ev.update({"reference": h.reference, "reference_kind": h.reference_kind, "ratio": h.ratio})
        if "cached_tokens" in h.reasons:
            ev["cache"] = _cache_dict(excluded.cached_run(h.run_id))
        out.append(Flag("trap.prefix_cache", "critical", (seat,), msg, ev,
                        workload=h.workload, concurrency=h.concurrency,
                        metric=metric, statistic=h.statistic))
    per_seat: dict[str, list] = {}
    for cr in excluded.cached_runs:
        if cr.run_id not in flagged_runs:
            per_seat.setdefault(cr.seat, []).append({"run_id": cr.run_id, **_cache_dict(cr)})
    for seat, rs in sorted(per_seat.items()):
        hits = sum(r["requests_with_cache_hits"] for r in rs)
        total = sum(r["requests"] for r in rs)
        shares = [r["cached_prompt_tokens"] / r["prompt_tokens"] for r in rs if r["prompt_tokens"]]
        dates = sorted({r["date"] for r in rs})
        where = f"run {rs[0]['run_id']}" if len(rs) == 1 else f"{len(rs)} runs"
        share_txt = ""
        if shares:
            lo, hi = min(shares), max(shares)
            share_txt = (f" ({F.pct(lo)} of their prompt tokens)" if F.pct(lo) == F.pct(hi)
                         else f" ({F.pct(lo)} to {F.pct(hi)} of the prompt tokens of a run)")
        msg = (f"{seat}: {hits} of {total} requests in {where} ({F.join_words(dates)}) report cached prompt "
               f"tokens{share_txt}: their time to first token measures prefix-cache hits, not prefill.")
        ev = {"runs": rs, "requests_with_cache_hits": hits, "requests": total, "excluded": [],
              "thresholds": dict(th)}
        out.append(Flag("trap.prefix_cache", "warn", (seat,), msg, ev))
    return out


def reasoning_field(requests: pd.DataFrame, *, thresholds: Thresholds = DEFAULT) -> list[Flag]:
    """`trap.reasoning_field`: answers with an empty content field although tokens were delivered.

    A request counts when `content_chars` is 0 while `output_tokens`, `reasoning_tokens`
    or `reasoning_chars` is positive; the share is over requests whose `content_chars`
    is known, per seat, and flagged above `reasoning_share` (default 0: any such answer
    means the client reads the wrong field, the fleet paper's third trap).
    """
    if requests is None or requests.empty:
        return []
    limit = float(thresholds.reasoning_share)
    cc = requests["content_chars"].astype("Int64")
    known = cc.notna()
    delivered = (_true(requests["output_tokens"].astype("Int64").gt(0))
                 | _true(requests["reasoning_tokens"].astype("Int64").gt(0))
                 | _true(requests["reasoning_chars"].astype("Int64").gt(0)))
    empty = _true(cc.eq(0)) & delivered
    out = []
    for seat, idx in requests.groupby("seat").groups.items():
        n_known = int(known.loc[idx].sum())
        n_empty = int(empty.loc[idx].sum())
        if n_known == 0 or n_empty == 0:
            continue
        share = n_empty / n_known
        if share <= limit:
            continue
        sub = requests.loc[idx][empty.loc[idx].to_numpy()]
        rt = sub["reasoning_tokens"].astype("Int64").sum(min_count=1)
        ot = sub["output_tokens"].astype("Int64").sum(min_count=1)
        tokens = rt if not F.missing(rt) else ot
        msg = (f"{seat}: {n_empty} of {n_known} answers ({F.pct(share)}) had an empty content field while "
               + (f"{F.num(tokens)} tokens were" if not F.missing(tokens) else "tokens were")
               + " delivered in the reasoning field: the model is working and the client reads the wrong field. "
               "Count delivered tokens including reasoning.")
        ev = {"empty_content": n_empty, "with_content_field": n_known, "share": share,
              "reasoning_tokens": _plain(rt), "output_tokens": _plain(ot),
              "runs": sorted(set(sub["run_id"].astype(str))), "thresholds": _used(thresholds, "reasoning_share")}
        out.append(Flag("trap.reasoning_field", "warn", (str(seat),), msg, ev))
    return out


def capped_answers(requests: pd.DataFrame, runs: pd.DataFrame, *, thresholds: Thresholds = DEFAULT) -> list[Flag]:
    """`trap.capped_answers`: a large share of answers stopped at the token cap.

    An answer is capped when `finish_reason` is "length" or `output_tokens` reaches the
    harness's `max_tokens`; the share is over answers where either is known, per seat and
    cap, and flagged above `capped_share`. The figures then measure truncated answers and
    compare only with runs under the same cap (the field note's 28 of 30 at 1,024 tokens).
    """
    if requests is None or requests.empty:
        return []
    limit = float(thresholds.capped_share)
    cap = requests["run_id"].map(runs.set_index("run_id")["max_tokens"]).astype("Int64")
    fr = requests["finish_reason"].astype("string")
    ot = requests["output_tokens"].astype("Int64")
    capped = _true(fr.eq("length")) | _true(ot.ge(cap))
    known = fr.notna() | (ot.notna() & cap.notna())
    df = pd.DataFrame({"seat": requests["seat"], "cap": cap, "capped": capped, "known": known,
                       "run_id": requests["run_id"]})
    out = []
    for (seat, c), g in df.groupby(["seat", "cap"], dropna=False):
        n = int(g["known"].sum())
        k = int((g["capped"] & g["known"]).sum())
        if n == 0 or k / n <= limit:
            continue
        share = k / n
        cap_txt = f"the {F.num(c)}-token cap" if not F.missing(c) else "the token cap (finish reason 'length')"
        msg = (f"{seat}: {k} of {n} answers ({F.pct(share)}) stopped at {cap_txt}, so the figures measure "
               "truncated answers; compare them only with runs "
               + (f"capped at {F.num(c)} tokens." if not F.missing(c) else "under the same cap."))
        ev = {"capped": k, "answers": n, "share": share, "max_tokens": _int_or_none(c),
              "runs": sorted(set(g["run_id"].astype(str))), "thresholds": _used(thresholds, "capped_share")}
        out.append(Flag("trap.capped_answers", "warn", (str(seat),), msg, ev))
    return out


# --- comparisons --------------------------------------------------------------------------------

def _reference_seats(seats: pd.DataFrame, baseline) -> tuple[list[str], str]:
    inc = sorted(seats.loc[seats["role"].astype("string").eq("incumbent").fillna(False).astype(bool), "seat"]
                 .astype(str))
    if inc:
        return inc, "incumbent"
    if baseline is not None and baseline in set(seats["seat"].astype(str)):
        return [str(baseline)], "baseline"
    return [], "none"


def compared_pairs(tables, comparisons: pd.DataFrame | None, baseline=None) -> list[tuple[str, str]]:
    """(baseline, candidate) pairs of different seats that the analysis compares.

    From `comparisons` when given; otherwise the incumbent (or `baseline`) against every
    other seat with which it shares at least one (workload, concurrency, metric).
    """
    if comparisons is not None:
        if comparisons.empty:
            return []
        c = comparisons[comparisons["baseline"].astype(str) != comparisons["candidate"].astype(str)]
        return sorted({(str(a), str(b)) for a, b in zip(c["baseline"], c["candidate"])})
    refs, _ = _reference_seats(tables.seats, baseline)
    if not refs:
        return []
    m = tables.measurements
    keys = _seat_keys(m)
    pairs = set()
    for r in refs:
        for s, k in keys.items():
            if s != r and keys.get(r, set()) & k:
                pairs.add((r, str(s)))
    return sorted(pairs)


def no_incumbent(tables, comparisons: pd.DataFrame | None = None, *, baseline=None) -> list[Flag]:
    """`compare.no_incumbent`: seats measured without the incumbent beside them.

    Any claim that a seat is best, or beats what serves today, needs the incumbent
    (role "incumbent", else the chosen `baseline`) measured the same day with the same
    harness and probe (the fleet paper's section 4). One flag per day listing the seats
    measured that day with no such incumbent run; when the data have no incumbent at all
    and several seats (or comparisons), every day's seats are listed.
    """
    seats, runs = tables.seats, tables.runs
    if runs is None or runs.empty:
        return []
    refs, ref_kind = _reference_seats(seats, baseline)
    n_seats = runs["seat"].nunique()
    has_cmp = comparisons is not None and not comparisons.empty
    if not refs and n_seats < 2 and not has_cmp:
        return []
    role = dict(zip(seats["seat"].astype(str), seats["role"].astype("string").fillna("candidate")))
    ref_keys = {(str(r.date), _na(r.harness), _na(r.probe)) for r in runs.itertuples(index=False) if r.seat in refs}
    ref_days = {k[0] for k in ref_keys}
    out = []
    for date, g in runs[~runs["seat"].isin(refs)].groupby("date"):
        date = str(date)
        missing_seats, how = [], {}
        for seat, gs in g.groupby("seat"):
            keys = {(date, _na(r.harness), _na(r.probe)) for r in gs.itertuples(index=False)}
            if keys & ref_keys:
                continue
            missing_seats.append(str(seat))
            how[str(seat)] = sorted({f"{k[1]} / {k[2]}" for k in keys})
        if not missing_seats:
            continue
        names = F.join_words(missing_seats)
        if not refs:
            one = len(missing_seats) == 1
            msg = (f"On {date}, {names} {'was' if one else 'were'} measured with no incumbent seat in the data: "
                   f"a claim that {'it' if one else 'any of them'} is the best seat, or beats what serves today, "
                   "is not supported.")
        else:
            ref_names = F.join_words(refs)
            if date in ref_days:
                why = f"{ref_names} was measured that day only with another harness or probe"
            else:
                why = f"{ref_names} was not measured that day"
            msg = (f"On {date}, {names} {'was' if len(missing_seats) == 1 else 'were'} measured without the "
                   f"{'incumbent' if ref_kind == 'incumbent' else 'baseline'} beside "
                   f"{'it' if len(missing_seats) == 1 else 'them'} ({why}): "
                   "a comparison with it, or a 'best' claim, is not supported by runs of that day.")
        ev = {"date": date, "seats": missing_seats, "roles": {s: role.get(s) for s in missing_seats},
              "harness_probe": how, "reference": refs, "reference_kind": ref_kind,
              "reference_days": sorted(ref_days)}
        out.append(Flag("compare.no_incumbent", "warn", tuple(sorted(missing_seats)), msg, ev))
    return out


def _exam_scores(exams: pd.DataFrame) -> dict:
    """seat -> {(benchmark, dimension): score on 0-100 (published score, else correct/total)}."""
    out: dict = {}
    if exams is None or exams.empty:
        return out
    for r in exams.itertuples(index=False):
        score = r.score if not F.missing(r.score) else (
            100.0 * r.correct / r.total if not F.missing(r.correct) and not F.missing(r.total) and r.total else None)
        if score is None:
            continue
        out.setdefault(str(r.seat), {})[(str(r.benchmark), _na(r.dimension))] = float(score)
    return out


def cross_model(tables, comparisons: pd.DataFrame | None = None, *, baseline=None) -> list[Flag]:
    """`compare.cross_model`: compared seats serve different models.

    Throughput does not say which seat is more useful when capability differs. One flag
    per compared pair; the exam scores both seats have are quoted (then info: the report
    carries the capability comparison), otherwise warn.
    """
    model = dict(zip(tables.seats["seat"].astype(str), tables.seats["model"].astype(str)))
    scores = _exam_scores(tables.exams)
    out = []
    done = set()
    for a, b in compared_pairs(tables, comparisons, baseline):
        key = tuple(sorted((a, b)))
        if key in done or a not in model or b not in model or model[a] == model[b]:
            continue
        done.add(key)
        shared = sorted(set(scores.get(a, {})) & set(scores.get(b, {})), key=lambda k: (k[0], _key_sort(k[1])))
        msg = (f"{b} ({model[b]}) and {a} ({model[a]}) serve different models, so throughput alone does not "
               "say which seat is more useful.")
        if shared:
            by_bench: dict[str, list] = {}
            for bench, dim in shared:
                label = f"{dim} " if dim else ""
                by_bench.setdefault(bench, []).append(
                    f"{label}{F.num(scores[b][(bench, dim)])} against {F.num(scores[a][(bench, dim)])}")
            msg += " Exam scores both took: " + "; ".join(f"{k} {', '.join(v)}" for k, v in by_bench.items()) + "."
            sev = "info"
        else:
            msg += " No exam taken by both seats is in the data to weigh capability."
            sev = "warn"
        ev = {"baseline": a, "candidate": b, "models": {a: model[a], b: model[b]},
              "exams": [{"benchmark": k[0], "dimension": k[1], a: scores[a][k], b: scores[b][k]} for k in shared]}
        out.append(Flag("compare.cross_model", sev, key, msg, ev))
    return out


#: run fields that change what is measured (spec/flags.md compare.not_like_for_like)
LIKE_FIELDS = {"harness": "harness", "probe": "probe", "max_tokens": "answer cap (max_tokens)",
               "temperature": "temperature", "thinking": "thinking mode"}
SETTING_WORDS = {"max_model_len": "context length", "kv_cache_dtype": "KV-cache type",
                 "speculative": "speculation", "prefix_caching": "prefix caching",
                 "gpu_memory_utilization": "GPU memory utilisation"}


def _seat_keys(m: pd.DataFrame) -> dict[str, set]:
    """seat -> set of (workload, concurrency, metric) it has measurements for."""
    return {str(s_): set(zip([_na(x) for x in g["workload"]], [_int_or_none(x) for x in g["concurrency"]],
                             g["metric"].astype(str)))
            for s_, g in m.groupby("seat")}


def _wl(workload):
    """A cells-table workload back to the measurements' one ('init:cold' -> 'init')."""
    if F.missing(workload):
        return None
    return str(workload).split(":", 1)[0]


class _RunIndex:
    """Which runs carry which cell, and what each run says about how it measured (built once).

    Keys are plain Python values so that a comparison row is a dictionary lookup, not a
    scan of the measurements (a fleet has thousands of comparison rows).
    """

    def __init__(self, tables):
        self.by_cell: dict[tuple, set] = {}
        self.by_req: dict[tuple, set] = {}
        m = tables.measurements
        if m is not None and len(m):
            g = m.groupby(["seat", "date", "workload", "concurrency", "metric"], dropna=False, sort=False)["run_id"]
            for (seat, date, w, c, mt), ids in g.unique().items():
                key = (str(seat), str(date), _na(w), _int_or_none(c), str(mt))
                self.by_cell.setdefault(key, set()).update(map(str, ids))
                self.by_cell.setdefault(key[:1] + (None,) + key[2:], set()).update(map(str, ids))
        r = tables.requests
        if r is not None and len(r):
            g = r.groupby(["seat", "date", "workload", "concurrency"], dropna=False, sort=False)["run_id"]
            for (seat, date, w, c), ids in g.unique().items():
                key = (str(seat), str(date), _na(w), _int_or_none(c))
                self.by_req.setdefault(key, set()).update(map(str, ids))
                self.by_req.setdefault(key[:1] + (None,) + key[2:], set()).update(map(str, ids))
        self.profiles: dict[str, dict] = {}
        runs = tables.runs
        if runs is not None and len(runs):
            for r_ in runs.itertuples(index=False):
                prof = {f: getattr(r_, f) for f in LIKE_FIELDS}
                prof["harness_group"] = getattr(r_, "harness_group", None)
                prof = {f: (None if F.missing(v) else _plain(v)) for f, v in prof.items()}
                for k, v in _settings(r_.settings).items():
                    prof["settings." + k] = json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v
                self.profiles[str(r_.run_id)] = prof
        self._cache: dict[frozenset, dict] = {}

    def cell_runs(self, seat, workload, concurrency, metric, date=None) -> set:
        """run_ids carrying a seat's figures for one cell (measurements; requests for request metrics)."""
        key = (str(seat), None if date is None else str(date), _wl(workload), _int_or_none(concurrency))
        ids = self.by_cell.get(key + (str(metric),), set())
        if not ids and metric in REQUEST_METRICS:
            ids = self.by_req.get(key, set())
        return ids

    def by_method(self, ids: set) -> list[set]:
        """`ids` split by (harness group or harness, probe): the runs that can be passes of one cell."""
        parts: dict[tuple, set] = {}
        for rid in ids:
            p = self.profiles.get(rid, {})
            parts.setdefault((str(p.get("harness_group") or p.get("harness")), str(p.get("probe"))), set()).add(rid)
        return [parts[k] for k in sorted(parts)]

    def profile(self, ids: set) -> dict[str, set]:
        """field -> set of stated values over the runs (unstated left out); settings keys as 'settings.KEY'."""
        fs = frozenset(ids)
        if fs not in self._cache:
            prof: dict[str, set] = {}
            for rid in sorted(fs):
                for f, v in self.profiles.get(rid, {}).items():
                    prof.setdefault(f, set())
                    if v is not None:
                        prof[f].add(v)
            self._cache[fs] = prof
        return self._cache[fs]


def _field_words(f: str) -> str:
    if f.startswith("settings."):
        k = f[len("settings."):]
        return SETTING_WORDS.get(k, k)
    return LIKE_FIELDS.get(f, f)


def _show(vals: set) -> str:
    return " / ".join(str(v).lower() if isinstance(v, bool) else F.num(v) if isinstance(v, (int, float)) else str(v)
                      for v in sorted(vals, key=str))


def not_like_for_like(tables, comparisons: pd.DataFrame | None = None, *, baseline=None) -> list[Flag]:
    """`compare.not_like_for_like`: compared runs measured differently.

    For every compared cell, the runs behind each side are found and their harness,
    probe, answer cap, temperature, thinking mode and seat `settings` (context length,
    KV-cache type, speculation, prefix caching, anything else recorded) compared. A field
    stated on both sides with different values makes the flag warn; a field stated on one
    side only is listed and, alone, makes it info. The seat's identity (model,
    quantisation, engine, placement) is what a comparison compares and is not looked at.
    One flag per compared pair.
    """
    runs = tables.runs
    if runs is None or runs.empty:
        return []
    rows = []
    if comparisons is not None and not comparisons.empty:
        for r in comparisons.itertuples(index=False):
            if str(r.baseline) == str(r.candidate):
                bd, cd = _na(getattr(r, "baseline_date", None)), _na(getattr(r, "candidate_date", None))
                if bd is None or cd is None or bd == cd:
                    continue
            rows.append((str(r.baseline), str(r.candidate), r.workload, r.concurrency, r.metric,
                         _na(getattr(r, "baseline_date", None)), _na(getattr(r, "candidate_date", None))))
    else:
        m = tables.measurements
        keys = _seat_keys(m)
        for a, b in compared_pairs(tables, None, baseline):
            shared = keys.get(a, set()) & keys.get(b, set())
            for w, c, mt in sorted(shared, key=lambda k: tuple(_key_sort(x) for x in k)):
                rows.append((a, b, w, c, mt, None, None))
    pairs: dict[tuple, dict] = {}
    index = _RunIndex(tables)
    for a, b, w, c, mt, da, db in rows:
        ids_a = index.cell_runs(a, w, c, mt, da)
        ids_b = index.cell_runs(b, w, c, mt, db)
        if not ids_a or not ids_b or ids_a == ids_b:
            continue
        pa, pb = index.profile(ids_a), index.profile(ids_b)
        diff, one_sided = {}, {}
        for f in sorted(set(pa) | set(pb)):
            va, vb = pa.get(f, set()), pb.get(f, set())
            if va and vb and va != vb:
                diff[f] = {"baseline": sorted(va, key=str), "candidate": sorted(vb, key=str)}
            elif bool(va) != bool(vb):
                one_sided[f] = {"stated_for": "baseline" if va else "candidate", "value": sorted(va or vb, key=str)}
        if not diff and not one_sided:
            continue
        history = a == b
        key = (a, b, da if history else None, db if history else None)
        entry = pairs.setdefault(key, {"diff": {}, "one_sided": {}, "cells": []})
        for f, v in diff.items():
            entry["diff"].setdefault(f, v)
        for f, v in one_sided.items():
            entry["one_sided"].setdefault(f, v)
        entry["cells"].append(_cell_dict(w, c, mt, None)
                              | {"baseline_runs": sorted(ids_a), "candidate_runs": sorted(ids_b)})
    out = []
    for (a, b, da, db), e in sorted(pairs.items(), key=lambda kv: tuple(map(str, kv[0]))):
        name = {"baseline": a if da is None else f"{a} on {da}", "candidate": b if db is None else f"{b} on {db}"}
        one_sided = {f: v for f, v in e["one_sided"].items() if f not in e["diff"]}
        parts = [f"{_field_words(f)} {_show(set(v['candidate']))} against {_show(set(v['baseline']))}"
                 for f, v in sorted(e["diff"].items())]
        side = [f"{_field_words(f)} ({_show(set(v['value']))}) is stated for {name[v['stated_for']]} only"
                for f, v in sorted(one_sided.items())]
        if parts:
            msg = (f"{name['candidate']} and {name['baseline']} were not measured alike: {'; '.join(parts)}. "
                   "Differences between them may come from how they were measured, not from the seats.")
            if side:
                msg += f" Also, {'; '.join(side)}."
            sev = "warn"
        else:
            msg = (f"{name['candidate']} and {name['baseline']} may not have been measured alike: "
                   f"{'; '.join(side)}, so whether the other side matched is unknown.")
            sev = "info"
        cl = e["cells"]
        ev = {"baseline": a, "candidate": b, "baseline_date": da, "candidate_date": db,
              "differences": e["diff"], "stated_one_side": one_sided, "n_cells": len(cl), "cells": cl}
        flag = Flag("compare.not_like_for_like", sev, tuple(sorted({a, b})), msg, ev)
        if len(cl) == 1:
            flag.workload, flag.concurrency, flag.metric = cl[0]["workload"], cl[0]["concurrency"], cl[0]["metric"]
        out.append(flag)
    return out


def mixed_runs(tables) -> list[Flag]:
    """`sample.mixed_runs`: the passes pooled in one cell come from runs measured differently.

    The statistics treat the runs of one (seat, day, harness, probe, workload, concurrency)
    as passes of one sweep. When those runs differ in answer cap, temperature, thinking
    mode or settings, their spread is not run-to-run variability and their mean describes
    no set-up. One flag per seat and day.
    """
    index = _RunIndex(tables)
    found: dict[tuple, dict] = {}
    cells = [(k[0], k[1], k[2], k[3], k[4], ids) for k, ids in index.by_cell.items() if k[1] is not None]
    cells += [(k[0], k[1], k[2], k[3], None, ids) for k, ids in index.by_req.items() if k[1] is not None]
    # runs of different harnesses or probes are different cells (analysis.stats.cells)
    split = [(seat, date, w, c, metric, ids) for seat, date, w, c, metric, all_ids in cells
             for ids in index.by_method(all_ids)]
    for seat, date, w, c, metric, ids in split:
        if len(ids) < 2:
            continue
        prof = index.profile(ids)
        differing = {f: sorted(v, key=str) for f, v in prof.items() if len(v) > 1}
        if not differing:
            continue
        g = found.setdefault((seat, date), {"fields": {}, "cells": [], "runs": set()})
        for f, v in differing.items():
            g["fields"].setdefault(f, set()).update(v)
        g["cells"].append(_cell_dict(w, c, metric, None))
        g["runs"].update(ids)
    out = []
    for (seat, date), g in sorted(found.items()):
        cl = sorted(g["cells"], key=_cell_order)
        fields = "; ".join(f"{_field_words(f)} {_show(v)}" for f, v in sorted(g["fields"].items()))
        what = "per-request figures" if all(c["metric"] is None for c in cl) else _describe_cells(
            [c for c in cl if c["metric"] is not None])
        msg = (f"{seat} on {date}: the runs pooled as passes of {F.plural(len(cl), 'cell')} ({what}) were "
               f"measured differently ({fields}). Their spread is not run-to-run variability and their mean "
               "describes no single set-up; give each set-up its own seat or workload.")
        ev = {"date": date, "differences": {f: sorted(v, key=str) for f, v in g["fields"].items()},
              "runs": sorted(g["runs"]), "n_cells": len(cl), "cells": cl}
        out.append(_one_cell(Flag("sample.mixed_runs", "warn", (seat,), msg, ev), cl))
    return out


def _seat_cell_keys(tables, cells: pd.DataFrame | None) -> dict[str, set]:
    src = _norm_cells(cells) if cells is not None and not cells.empty else None
    if src is None:
        src = tables.measurements
    out: dict[str, set] = {}
    for r in src.itertuples(index=False):
        out.setdefault(str(r.seat), set()).add(
            (_na(r.workload), _int_or_none(r.concurrency), str(r.metric),
             "mean" if F.missing(r.statistic) else str(r.statistic)))
    return out


def missing_metric(tables, comparisons: pd.DataFrame | None = None, cells: pd.DataFrame | None = None, *,
                   baseline=None) -> list[Flag]:
    """`compare.missing_metric`: a figure one side of a comparison has and the other lacks.

    For each compared pair sharing at least one workload: a (workload, concurrency,
    metric) both report but in disjoint statistics (p50 on one side, a mean or single
    figure on the other: the fleet paper's cross-node TTFT) is warn; a (workload,
    concurrency, metric) reported on one side only is info (extra statistics beside a
    shared one, such as a min/max range next to the mean, are not counted). One flag of
    each kind per pair.
    """
    keys = _seat_cell_keys(tables, cells)
    out = []
    done = set()
    for a, b in compared_pairs(tables, comparisons, baseline):
        pair = tuple(sorted((a, b)))
        if pair in done:
            continue
        done.add(pair)
        ka, kb = keys.get(a, set()), keys.get(b, set())
        if not ({k[0] for k in ka} & {k[0] for k in kb}):
            continue
        sa, sb = {}, {}
        for w, c, m, s in ka:
            sa.setdefault((w, c, m), set()).add(s)
        for w, c, m, s in kb:
            sb.setdefault((w, c, m), set()).add(s)
        forms, only = [], {a: [], b: []}
        for k in sorted(set(sa) | set(sb), key=lambda k: tuple(_key_sort(x) for x in k)):
            if k in sa and k in sb:
                if not (sa[k] & sb[k]):
                    forms.append({"workload": k[0], "concurrency": k[1], "metric": k[2],
                                  "statistics": {a: sorted(sa[k], key=_stat_rank), b: sorted(sb[k], key=_stat_rank)}})
                # statistics reported beside a shared one (a min/max range next to the mean) are extras,
                # not a missing comparison
            else:
                side = a if k in sa else b
                only[side].append(_cell_dict(k[0], k[1], k[2], None))
        if forms:
            parts = [f"{F.cell_phrase(f['workload'], f['concurrency'], f['metric'])} is a "
                     f"{F.join_words(f['statistics'][a], 'or')} for {a} but a {F.join_words(f['statistics'][b], 'or')} "
                     f"for {b}" for f in forms[:4]]
            msg = (f"{a} and {b} report figures in different forms: {'; '.join(parts)}"
                   f"{'; and more' if len(forms) > 4 else ''}. Such figures are not directly comparable.")
            ev = {"seats": list(pair), "kind": "form", "cells": forms}
            flag = Flag("compare.missing_metric", "warn", pair, msg, ev)
            if len(forms) == 1:
                f0 = forms[0]
                flag.workload, flag.concurrency, flag.metric = f0["workload"], f0["concurrency"], f0["metric"]
            out.append(flag)
        if only[a] or only[b]:
            parts = [f"for {s} only: {_describe_cells(only[s])}" for s in (a, b) if only[s]]
            msg = (f"Compared with each other, {a} and {b} do not report the same figures ("
                   f"{'; '.join(parts)}). Those figures have nothing to be compared with.")
            ev = {"seats": list(pair), "kind": "one_side", "only": {s: only[s] for s in (a, b) if only[s]}}
            out.append(Flag("compare.missing_metric", "info", pair, msg, ev))
    return out


def stale_scores(exams: pd.DataFrame) -> list[Flag]:
    """`compare.stale_scores`: exam scores shown with runs they were not measured in.

    An exam row whose `measured_on` differs from its run's date, that comes from an
    earlier run (`from_earlier_run`), or that ran elsewhere (`placement_note`). One flag
    per seat listing the scores.
    """
    if exams is None or exams.empty:
        return []
    out = []
    by_seat: dict[str, list] = {}
    for r in exams.itertuples(index=False):
        reasons = []
        mo = _na(getattr(r, "measured_on", None))
        if mo is not None and str(mo)[:10] != str(r.date)[:10]:
            reasons.append(("measured_on", str(mo)[:10]))
        if getattr(r, "from_earlier_run", None) is True or (
                not F.missing(getattr(r, "from_earlier_run", None)) and bool(r.from_earlier_run)):
            reasons.append(("from_earlier_run", True))
        pn = _na(getattr(r, "placement_note", None))
        if pn is not None:
            reasons.append(("placement_note", str(pn)))
        if reasons:
            score = r.score if not F.missing(r.score) else (
                f"{r.correct} of {r.total}" if not F.missing(r.correct) else None)
            by_seat.setdefault(str(r.seat), []).append({
                "benchmark": str(r.benchmark), "dimension": _na(r.dimension), "run_date": str(r.date),
                "score": _plain(score), "reasons": dict(reasons)})
    for seat, items in sorted(by_seat.items()):
        items = sorted(items, key=lambda i: (i["benchmark"], _key_sort(i["dimension"])))
        scores = F.join_words([f"{i['benchmark']}{' ' + i['dimension'] if i['dimension'] else ''} "
                               f"{F.num(i['score']) if isinstance(i['score'], (int, float)) else i['score']}"
                               for i in items])
        whys = []
        dates = sorted({i["reasons"]["measured_on"] for i in items if "measured_on" in i["reasons"]})
        if dates:
            whys.append(f"were measured on {F.join_words(dates)}")
        if any("from_earlier_run" in i["reasons"] for i in items):
            whys.append("come from an earlier run whose date is not recorded")
        notes = sorted({i["reasons"]["placement_note"] for i in items if "placement_note" in i["reasons"]})
        if notes:
            whys.append(f"ran elsewhere ({'; '.join(notes)})")
        run_dates = sorted({i["run_date"] for i in items})
        msg = (f"{seat}: the exam scores shown with its runs of {F.join_words(run_dates)} ({scores}) "
               f"{F.join_words(whys)}, not in those runs.")
        out.append(Flag("compare.stale_scores", "warn", (seat,), msg, {"exams": items}))
    return out


# --- exams ---------------------------------------------------------------------------------------

def exam_not_significant(exam_deltas: pd.DataFrame | None, *, thresholds: Thresholds = DEFAULT) -> list[Flag]:
    """`exam.not_significant`: an exam delta whose exact test does not reject equality at `alpha`
    (raw p, or Holm-adjusted p across the exam deltas when that is >= alpha).

    The field note's HumanEval 153 against 154 of 164 has p = 1.0: a one-problem
    difference is no difference. The smallest detectable difference (`mde`) is quoted
    when the statistics give it.
    """
    if exam_deltas is None or exam_deltas.empty:
        return []
    alpha = float(thresholds.alpha)
    out = []
    for r in exam_deltas.itertuples(index=False):
        p = getattr(r, "p_value", None)
        if F.missing(p):
            continue
        p_holm = _na(getattr(r, "p_holm", None))
        raw_ns = float(p) >= alpha
        holm_ns = p_holm is not None and float(p_holm) >= alpha
        if not (raw_ns or holm_ns):
            continue
        n = _int_or_none(getattr(r, "n_items", None))
        bc, cc = _int_or_none(getattr(r, "baseline_correct", None)), _int_or_none(getattr(r, "candidate_correct", None))
        name = _exam_name(r.benchmark, getattr(r, "dimension", None))
        test = _na(getattr(r, "test", None))
        if None not in (bc, cc, n):
            msg = (f"{name}: {r.candidate} {cc} of {n}, {r.baseline} {bc} of {n} "
                   f"({_points(getattr(r, 'diff', None), signed=True)}), ")
        else:
            msg = f"{name}: {r.candidate} against {r.baseline}, "
        if raw_ns:
            named = f" ({test_words(test)})" if test else ""
            msg += f"p = {F.pval(p)}{named}: no difference is shown at alpha = {F.num(alpha)}."
        else:
            msg += (f"p = {F.pval(p)} but {F.pval(p_holm)} after Holm's correction for the other exam comparisons: "
                    f"no difference is shown at alpha = {F.num(alpha)}.")
        mde = _na(getattr(r, "mde", None))
        if mde is not None:
            msg += f" This sample detects only differences of about {_points(mde)} or more."
        ev = {"benchmark": str(r.benchmark), "dimension": _na(getattr(r, "dimension", None)),
              "baseline": str(r.baseline), "candidate": str(r.candidate), "test": test, "n_items": n,
              "baseline_correct": bc, "candidate_correct": cc, "p_value": _plain(p), "p_holm": _plain(p_holm),
              "diff": _plain(getattr(r, "diff", None)), "mde": _plain(mde),
              "thresholds": _used(thresholds, "alpha")}
        out.append(Flag("exam.not_significant", "info", tuple(sorted({str(r.baseline), str(r.candidate)})), msg, ev))
    return out


_PAIRED_TESTS = ("mcnemar", "paired", "tango", "sign")


def exam_counts_only(exam_deltas: pd.DataFrame | None, exams: pd.DataFrame | None = None) -> list[Flag]:
    """`exam.counts_only`: an exam delta tested unpaired because only counts are known.

    Both seats took the same items (same benchmark and item count), but without
    item-level verdicts the test cannot use the pairing (McNemar / exact conditional
    tests on discordant items are sharper: Fagerland, Lydersen & Laake 2013). Detected
    from empty `baseline_only`/`candidate_only` or an unpaired test name. One flag per
    pair; counts reconstructed from published 0-100 scores are named.
    """
    if exam_deltas is None or exam_deltas.empty:
        return []
    rounding = {}
    if exams is not None and not exams.empty and "count_rounding" in exams.columns:
        for r in exams.itertuples(index=False):
            if not F.missing(r.count_rounding):
                rounding[(str(r.seat), str(r.benchmark), _na(r.dimension))] = str(r.count_rounding)
    pairs: dict[tuple, list] = {}
    for r in exam_deltas.itertuples(index=False):
        test = "" if F.missing(getattr(r, "test", None)) else str(r.test).lower()
        named_paired = any(k in test for k in _PAIRED_TESTS) and "unpaired" not in test
        paired = (not F.missing(getattr(r, "baseline_only", None)) or not F.missing(getattr(r, "candidate_only", None))
                  or named_paired)
        unpaired = not paired
        if not unpaired:
            continue
        pairs.setdefault((str(r.baseline), str(r.candidate)), []).append(
            {"benchmark": str(r.benchmark), "dimension": _na(getattr(r, "dimension", None)),
             "test": _na(getattr(r, "test", None)), "n_items": _int_or_none(getattr(r, "n_items", None))})
    out = []
    for (a, b), items in sorted(pairs.items()):
        items = sorted(items, key=lambda i: (i["benchmark"], _key_sort(i["dimension"])))
        names = F.join_words([_exam_name(i["benchmark"], i["dimension"]) for i in items])
        tests = sorted({str(i["test"]) for i in items if i["test"]})
        used = ("an unpaired test" if not tests
                else F.join_words([test_words(t) for t in tests]) + ", an unpaired test,")
        msg = (f"{b} against {a}: only counts are known for {names}, so "
               f"{used} was used although both "
               "seats took the same items; item-level verdicts would allow a sharper paired test.")
        rounded = [(s, k) for s in (a, b) for k in [(i["benchmark"], i["dimension"]) for i in items]
                   if (s, k[0], k[1]) in rounding]
        if rounded:
            ex = rounding[(rounded[0][0], rounded[0][1][0], rounded[0][1][1])]
            msg += f" Some counts are reconstructed from published scores ({ex})."
        ev = {"baseline": a, "candidate": b, "exams": items,
              "rounded": [{"seat": s, "benchmark": k[0], "dimension": k[1], "rounding": rounding[(s, k[0], k[1])]}
                          for s, k in rounded]}
        out.append(Flag("exam.counts_only", "info", tuple(sorted((a, b))), msg, ev))
    return out


# --- deployment ----------------------------------------------------------------------------------

def fit_exceeds_node(seats: pd.DataFrame, *, thresholds: Thresholds = DEFAULT) -> list[Flag]:
    """`fit.exceeds_node`: the checkpoint does not fit one node with KV-cache headroom.

    One node's raw GPU memory is `gpus_per_node * gpu_memory_bytes`; a checkpoint above
    (1 - `fit_headroom`) of it cannot serve from one node at a useful context length
    (the fleet paper: 204.5 GB against 205.3 GB raw, "cannot fit one node even at 100
    per cent utilisation with zero KV cache"). A seat spread over several nodes for that
    reason is a lab result, not a seat. This is a heuristic: it ignores activation memory
    and the KV cache a workload actually needs.
    """
    if seats is None or seats.empty:
        return []
    headroom = float(thresholds.fit_headroom)
    out = []
    for r in seats.itertuples(index=False):
        if F.missing(r.checkpoint_bytes) or F.missing(r.gpus_per_node) or F.missing(r.gpu_memory_bytes):
            continue
        node = float(r.gpus_per_node) * float(r.gpu_memory_bytes)
        ck = float(r.checkpoint_bytes)
        used = ck / node
        if used <= 1 - headroom:
            continue
        nodes = _int_or_none(r.nodes)
        if used > 1:
            first = (f"its checkpoint ({F.gb(ck)}) exceeds one node's raw GPU memory "
                     f"({int(r.gpus_per_node)} × {F.gb(r.gpu_memory_bytes)} = {F.gb(node)})")
        else:
            first = (f"its checkpoint ({F.gb(ck)}) fills {(used * 100):.1f}% of one node's raw GPU memory "
                     f"({int(r.gpus_per_node)} × {F.gb(r.gpu_memory_bytes)} = {F.gb(node)}), leaving "
                     f"{F.gb(node - ck)}, less than the {F.pct(headroom)} needed for KV cache and activations")
        if nodes and nodes > 1:
            tail = (f" It runs across {nodes} nodes, which a seat cannot afford: the figures are a lab result, "
                    "not a seat.")
        else:
            tail = (" Served from one node it has too little room for a useful KV cache: the figures are a lab "
                    "result, not a seat.")
        msg = f"{r.seat}: {first}.{tail}"
        ev = {"checkpoint_bytes": ck, "node_bytes": node, "gpus_per_node": int(r.gpus_per_node),
              "gpu_memory_bytes": float(r.gpu_memory_bytes), "used_share": used, "headroom_left": 1 - used,
              "nodes": nodes, "thresholds": _used(thresholds, "fit_headroom")}
        out.append(Flag("fit.exceeds_node", "warn", (str(r.seat),), msg, ev))
    return out


def licenses(components: pd.DataFrame) -> list[Flag]:
    """`license.noncommercial` (warn) and `license.unknown` (info), one flag per component and licence.

    Matched against the maintained list in `analysis/flags/licenses.json` (SPDX ids
    case-insensitively, spellings such as "cc-by-nc-4.0" or "CC BY-NC-ND 4.0", the whole
    CC NonCommercial family, named non-commercial model licences, SPDX expressions with
    AND/OR). Unknown: no licence given, NOASSERTION, NONE, "other", LicenseRef-.
    """
    if components is None or components.empty:
        return []
    groups: dict[tuple, dict] = {}
    for r in components.itertuples(index=False):
        v = classify(r.license)
        if v.kind == "ok":
            continue
        key = (v.kind, str(r.name), _na(r.license))
        g = groups.setdefault(key, {"seats": set(), "role": _na(r.component_role), "verdict": v})
        g["seats"].add(str(r.seat))
    out = []
    for (kind, name, lic), g in sorted(groups.items(), key=lambda kv: tuple(_key_sort(x) for x in kv[0])):
        seats = tuple(sorted(g["seats"]))
        role = f" ({g['role']})" if g["role"] else ""
        if kind == "noncommercial":
            msg = (f"{name}{role} is licensed {lic}, which forbids commercial use; "
                   f"{F.join_words(list(seats))} {'uses' if len(seats) == 1 else 'use'} it, so "
                   f"{'its' if len(seats) == 1 else 'their'} figures cannot be carried to a commercial seat.")
            code, sev = "license.noncommercial", "warn"
        else:
            said = f"declares no licence ({lic})" if lic else "has no licence recorded"
            msg = (f"{name}{role} {said}; {F.join_words(list(seats))} {'uses' if len(seats) == 1 else 'use'} it. "
                   "Whether it may be used commercially is unknown until its licence is known.")
            code, sev = "license.unknown", "info"
        ev = {"component": name, "role": g["role"], "license": lic, "matched": g["verdict"].matched,
              "source": g["verdict"].source}
        out.append(Flag(code, sev, seats, msg, ev))
    return out


# --- faults --------------------------------------------------------------------------------------

def faults(events: pd.DataFrame) -> list[Flag]:
    """`fault.recorded` (fault or crash, warn), `fault.unreproduced` (recorded as not seen again,
    info) and `defect.open` (a defect, warn), one flag per event."""
    if events is None or events.empty:
        return []
    out = []
    for r in events.itertuples(index=False):
        kind = str(r.kind)
        if kind not in ("fault", "crash", "defect"):
            continue
        at = f" at {F.streams(r.concurrency)}" if not F.missing(r.concurrency) else ""
        what = F.first_sentence(r.message)
        rep = None if F.missing(r.reproduced) else bool(r.reproduced)
        ev = {"kind": kind, "run_id": str(r.run_id), "date": str(r.date), "concurrency": _int_or_none(r.concurrency),
              "reproduced": _plain(rep), "message": str(r.message)}
        conc = _int_or_none(r.concurrency)
        if kind in ("fault", "crash"):
            msg = f"{r.seat}: a {kind} was recorded{at} ({r.date}): {what}"
            if rep is True:
                msg += " It reproduced in a later run."
            out.append(Flag("fault.recorded", "warn", (str(r.seat),), msg, ev, concurrency=conc))
            if rep is False:
                msg2 = (f"{r.seat}: the {kind}{at} on {r.date} did not reproduce, so whether it would recur under "
                        "sustained load is unknown.")
                out.append(Flag("fault.unreproduced", "info", (str(r.seat),), msg2, dict(ev), concurrency=conc))
        else:
            msg = f"{r.seat}: an open defect was recorded{at} ({r.date}): {what}"
            if rep is False:
                msg += " It was not seen again."
            out.append(Flag("defect.open", "warn", (str(r.seat),), msg, ev, concurrency=conc))
    return out


def import_assumed(runs: pd.DataFrame) -> list[Flag]:
    """`import.assumed`: runs an importer read from harness output without a manifest, so that
    seat, pass, date or a derived figure were inferred; one flag per seat.

    The clauses of `runs.assumptions` ('; '-joined per run) are listed once per seat; clauses
    that differ between runs only in their numbers ("pass 1 inferred ...", "pass 2 inferred
    ...") are said once, with the number of runs they apply to.
    """
    if runs is None or runs.empty or "assumptions" not in runs.columns:
        return []
    sub = runs[runs["assumptions"].notna() & runs["assumptions"].astype(str).str.strip().ne("")]
    out = []
    for seat, g in sub.groupby("seat"):
        ids = sorted(g["run_id"].astype(str))
        shapes: dict[str, list[str]] = {}
        for text in g.sort_values("run_id")["assumptions"].astype(str):
            for clause in (c.strip() for c in text.split(";")):
                if clause:
                    shapes.setdefault(re.sub(r"\d+", "#", clause), []).append(clause)
        said = []
        for clauses in shapes.values():
            distinct = list(dict.fromkeys(clauses))
            said.append(distinct[0] if len(distinct) == 1
                        else f"{distinct[0]} (and so on for each of {len(clauses)} runs)")
        fmts = sorted(set(g["source_format"].dropna().astype(str))) if "source_format" in g else []
        src = f" from {F.join_words(fmts)} output" if fmts else ""
        msg = (f"{seat}: {F.plural(len(ids), 'run')} {'was' if len(ids) == 1 else 'were'} imported{src} without a "
               f"manifest, so the importer assumed: {'; '.join(said)}.")
        ev = {"runs": ids, "assumptions": said, "source_formats": fmts,
              "source_files": sorted(set(g["source_file"].dropna().astype(str))) if "source_file" in g else []}
        out.append(Flag("import.assumed", "info", (str(seat),), msg, ev))
    return out


# --- entry point ----------------------------------------------------------------------------------

#: (name, function of the context) in the order they run
RULES: list[tuple[str, Callable]] = [
    ("sample_passes", lambda c: sample_passes(c["cells"], thresholds=c["th"])),
    ("small_n", lambda c: small_n(c["cells"], thresholds=c["th"])),
    ("mixed_runs", lambda c: mixed_runs(c["tables"])),
    ("underpowered", lambda c: underpowered(c["comparisons"], c["exam_deltas"], thresholds=c["th"])),
    ("drift", lambda c: drift(c["cells"], c["tables"], thresholds=c["th"])),
    ("warmup_unknown", lambda c: warmup_unknown(c["tables"].runs)),
    ("prefix_cache", lambda c: prefix_cache(c["excluded"])),
    ("reasoning_field", lambda c: reasoning_field(c["tables"].requests, thresholds=c["th"])),
    ("capped_answers", lambda c: capped_answers(c["tables"].requests, c["tables"].runs, thresholds=c["th"])),
    ("no_incumbent", lambda c: no_incumbent(c["tables"], c["comparisons"], baseline=c["baseline"])),
    ("cross_model", lambda c: cross_model(c["tables"], c["comparisons"], baseline=c["baseline"])),
    ("not_like_for_like", lambda c: not_like_for_like(c["tables"], c["comparisons"], baseline=c["baseline"])),
    ("missing_metric", lambda c: missing_metric(c["tables"], c["comparisons"], c["cells"], baseline=c["baseline"])),
    ("stale_scores", lambda c: stale_scores(c["tables"].exams)),
    ("exam_not_significant", lambda c: exam_not_significant(c["exam_deltas"], thresholds=c["th"])),
    ("exam_counts_only", lambda c: exam_counts_only(c["exam_deltas"], c["tables"].exams)),
    ("fit_exceeds_node", lambda c: fit_exceeds_node(c["tables"].seats, thresholds=c["th"])),
    ("licenses", lambda c: licenses(c["tables"].components)),
    ("faults", lambda c: faults(c["tables"].events)),
    ("import_assumed", lambda c: import_assumed(c["tables"].runs)),
]


def empty_flags() -> pd.DataFrame:
    """A flags table with no rows and the right columns."""
    return _frame([])


def _frame(flags: Iterable[Flag]) -> pd.DataFrame:
    rows = []
    for f in flags:
        if f.code not in CODES:
            raise ValueError(f"unknown flag code {f.code!r}")
        if f.severity not in _SEV_RANK:
            raise ValueError(f"unknown severity {f.severity!r} for {f.code}")
        rows.append({"code": f.code, "severity": f.severity, "seats": tuple(str(s) for s in f.seats),
                     "workload": _na(f.workload), "concurrency": _int_or_none(f.concurrency),
                     "metric": _na(f.metric), "statistic": _na(f.statistic),
                     "message": f.message, "evidence": _plain(f.evidence)})
    rows.sort(key=lambda r: (_SEV_RANK[r["severity"]], r["code"], r["seats"],
                             _key_sort(r["workload"]), _key_sort(r["concurrency"]),
                             _key_sort(r["metric"]), _key_sort(r["statistic"]), r["message"]))
    df = pd.DataFrame(rows, columns=FLAG_COLUMNS)
    for col in ("code", "severity", "workload", "metric", "statistic", "message"):
        df[col] = df[col].astype(object)
    df["concurrency"] = pd.array(list(df["concurrency"]) if len(df) else [], dtype="Int64")
    df.index = pd.RangeIndex(len(df))
    return df


def compute_flags(tables, *, cells: pd.DataFrame | None, comparisons: pd.DataFrame | None,
                  exam_deltas: pd.DataFrame | None, excluded: Exclusions, thresholds: Thresholds = DEFAULT,
                  baseline: str | None = None, passes: pd.DataFrame | None = None,
                  **extra_thresholds) -> pd.DataFrame:
    """Every flag the data raise, as a DataFrame (columns `FLAG_COLUMNS`), most severe first.

    Parameters
    ----------
    tables : analysis.tables.Tables
        The tidy tables (`build_tables(load(...))`).
    cells, comparisons, exam_deltas : DataFrame or None
        The statistics layer's frames (columns of tables/cells.csv, comparisons.csv,
        exam_deltas.csv in spec/cli.md). None skips the rules that need them
        (comparison rules then derive the compared pairs from the incumbent or `baseline`).
    thresholds : Thresholds
        Every threshold a rule uses is read from here and recorded in the evidence.
    baseline : str, optional
        The seat comparisons are made against when no seat has role incumbent.
    passes : DataFrame, optional
        The per-pass table of the statistics layer (analysis.stats.cells.PASS_COLUMNS):
        reported and recomputed figures, failed requests, lag-1 autocorrelation.
    **extra_thresholds
        Values for thresholds `Thresholds` does not define yet (`LOCAL_THRESHOLDS`:
        `min_passes`).

    Returns
    -------
    DataFrame with columns code, severity ("info"/"warn"/"critical"), seats (tuple of
    seat ids), workload, concurrency, metric, statistic (NA where the flag concerns no
    single cell), message (plain sentences with the figures) and evidence (dict: the
    numbers behind it and the thresholds used, by name). Sorted by severity (critical
    first), code, seats, cell.
    """
    unknown = set(extra_thresholds) - set(LOCAL_THRESHOLDS)
    if unknown:
        raise TypeError(f"unknown threshold(s): {', '.join(sorted(unknown))}")
    th = thresholds
    if extra_thresholds:
        th = _Overlay(thresholds, extra_thresholds)
    if float(excluded.cache_ratio) != float(thresholds.cache_ratio):
        raise ValueError(f"`excluded` was decided with cache_ratio {excluded.cache_ratio}, the thresholds "
                         f"say {thresholds.cache_ratio}: decide the exclusions with the same thresholds")
    ctx = {"tables": tables, "cells": cells, "comparisons": comparisons, "exam_deltas": exam_deltas,
           "th": th, "baseline": baseline, "passes": passes, "excluded": excluded}
    flags: list[Flag] = []
    for _name, rule in RULES:
        flags.extend(rule(ctx))
    return _frame(flags)


class _Overlay:
    """Thresholds plus local extras (read-only attribute view)."""

    def __init__(self, base, extra):
        self._base, self._extra = base, dict(extra)

    def __getattr__(self, name):
        if name in self._extra:
            return self._extra[name]
        return getattr(self._base, name)


# rules in sibling modules: they use this module's Flag and helpers, so they are added last
from .within_runs import correlated_requests, figure_mismatch, requests_failed  # noqa: E402

RULES += [
    ("requests_failed", lambda c: requests_failed(c["tables"].requests, c["tables"].runs, thresholds=c["th"])),
    ("correlated_requests", lambda c: correlated_requests(c.get("passes"), thresholds=c["th"])),
    ("figure_mismatch", lambda c: figure_mismatch(c.get("passes"), thresholds=c["th"])),
]
