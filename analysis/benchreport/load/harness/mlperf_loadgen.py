"""MLPerf Inference LoadGen logs (mlcommons/inference `loadgen`): `mlperf_log_detail.txt`, one run each.

What LoadGen writes into its output folder (loadgen/logging.cc, results.cc):
- `mlperf_log_detail.txt`: one `:::MLLOG {json}` record a line, {key, value, time_ms, namespace,
  event_type, metadata {is_error, is_warning, file, line_no, pid, tid}}. Keys: `loadgen_version`,
  `test_datetime` (UTC), `sut_name`, `qsl_name`, `requested_*` and `effective_*` settings
  (`effective_scenario`, `effective_target_qps`, `effective_samples_per_query`, ...),
  `generated_query_count`, `generated_samples_per_query`, `result_validity` ("VALID" /
  "INVALID"), `result_perf_constraints_met`, `result_min_duration_met`, `result_min_queries_met`,
  `result_invalid_reason`, `early_stopping_met`, `early_stopping_{ttft,tpot}_result` (texts),
  `result_query_count`, `result_{min,max,mean}_latency_ns`,
  `result_<pct>_percentile_latency_ns` (pct with two decimals: 50.00, 90.00, 95.00, 97.00,
  99.00, 99.90), with token latencies (LLM benchmarks) `result_first_token_*_latency_ns`,
  `result_time_per_output_token_<pct>_percentile_ns`, `result_time_to_output_token_{min,max,mean}`
  (ns, no suffix), `result_completed_tokens_per_second` and `result_completed_samples_per_sec`
  (Server) or `result_tokens_per_second` and `result_samples_per_second` (Offline), and
  `num_errors` (LoadGen's own error log lines, not failed samples: a SUT must complete every
  sample). Latencies are over samples; Offline issues one query of many samples.
- `mlperf_log_summary.txt` (and a SUT's stdout with `copy_summary_to_stdout`): the same results
  as human-readable text; `mlperf_log_accuracy.json` (`[]` in performance mode, else the raw
  outputs for the accuracy script); `mlperf_log_trace.json` (empty unless tracing is on; trace
  events, not requests).
No model name is logged (the benchmark is the SUT's business): it comes from a manifest. An
INVALID result is carried into the run's notes and recorded as a `fault` event, so the report's
fault flag says it; it is never dropped silently.
"""
from __future__ import annotations

import json
import re

from benchreport.load.harness import ImportOutcome, SourceFile
from benchreport.load.harness._checks import Broken, draft_or_refuse, expect_count, expect_number
from benchreport.load.harness._common import (Draft, count, epoch_from_iso, finish, first, iso_from_epoch,
                                           measurement, num, positive_int, skip)

NAME = "mlperf-loadgen"
HARNESS_NAME = "mlperf loadgen"
MARK = ":::MLLOG"
SUMMARY_MARK = b"MLPerf Results Summary"
#: LoadGen's percentile in a key -> native statistic (97.00 and 99.90 have none)
PCTS = {"50.00": "p50", "90.00": "p90", "95.00": "p95", "99.00": "p99"}


# --- recognising and parsing --------------------------------------------------------------

def _is_detail(doc) -> bool:
    return isinstance(doc, dict) and doc.get("mlperf_log") == "detail"


def _is_accuracy(doc, path) -> bool:
    if isinstance(doc, list) and not doc:
        return path.name == "mlperf_log_accuracy.json"
    return isinstance(doc, list) and all(isinstance(r, dict) and {"seq_id", "qsl_idx", "data"} <= set(r) for r in doc)


def _is_trace(doc, path) -> bool:
    return path.name == "mlperf_log_trace.json" and (
        doc == {"mlperf_log": "empty trace"} or (isinstance(doc, dict) and "traceEvents" in doc))


class _Importer:
    name = NAME
    #: the formats it reads, in words (for refusals that list what was considered)
    label = "MLPerf LoadGen mlperf_log_detail.txt and its side files"
    #: keys only its files have (a file holding one is refused when not read, never skipped), and
    #: the names of its files
    signature = ("mlperf_log", "qsl_idx")
    result_names = re.compile(r"^mlperf_log_")

    def recognise(self, doc, path):
        if _is_detail(doc) or (isinstance(doc, dict) and doc.get("mlperf_log")) or _is_accuracy(doc, path) \
                or _is_trace(doc, path):
            return "results"
        return None

    def recognise_text(self, head: bytes, path):
        if head.lstrip().startswith(MARK.encode()):
            return "results"
        if SUMMARY_MARK in head[:400] and b"=====" in head[:200]:
            return "results"
        if not head.strip() and path.name == "mlperf_log_trace.json":
            return "results"
        return None

    def parse_text(self, data: bytes, path) -> dict:
        if not data.strip():
            return {"mlperf_log": "empty trace"}
        if SUMMARY_MARK in data[:400]:
            return {"mlperf_log": "summary"}
        return {"mlperf_log": "detail", **_records(data.decode("utf-8", errors="replace"))}

    def import_files(self, files: list[SourceFile], manifests: list) -> ImportOutcome:
        """Each detail log a run; summaries, stdout twins, accuracy and trace logs skipped."""
        outcome = ImportOutcome()
        details = {s.path.parent for s in files if _is_detail(s.doc)}
        drafts = []
        for s in files:
            if _is_detail(s.doc):
                d = draft_or_refuse(outcome, s, "MLPerf LoadGen detail log", _draft, s)
                if d is not None:
                    drafts.append(d)
            else:
                skip(outcome, s, _side_reason(s, s.path.parent in details))
        return finish(drafts, manifests, NAME, outcome)


def _records(text: str) -> dict:
    """The `:::MLLOG` records of a detail log, in order (raises ValueError naming a broken line)."""
    records, stray = [], 0
    for n, line in enumerate(text.splitlines(), 1):
        if not line.startswith(MARK):
            stray += bool(line.strip())
            continue
        try:
            rec = json.loads(line[len(MARK):])
        except ValueError as exc:
            raise ValueError(f"$\x00expected a JSON record after {MARK} on line {n}, found an error: {exc}") from None
        if not isinstance(rec, dict) or not isinstance(rec.get("key"), str):
            raise ValueError(f"$\x00expected a record with a key after {MARK} on line {n}")
        records.append(rec)
    return {"records": records, "stray_lines": stray}


def _side_reason(s: SourceFile, with_detail: bool) -> str:
    """Why a LoadGen file other than the detail log is skipped."""
    doc, kind = s.doc, s.doc.get("mlperf_log") if isinstance(s.doc, dict) else None
    if kind == "summary":
        return ("MLPerf LoadGen summary: the human-readable twin of mlperf_log_detail.txt beside it (same results, "
                "read once from there)" if with_detail else
                "MLPerf LoadGen summary without its mlperf_log_detail.txt: not read (the detail log carries "
                "the figures)")
    if kind == "empty trace":
        return "MLPerf LoadGen trace log, empty: tracing was off (it would hold trace events, not requests)"
    if _is_trace(doc, s.path):
        return "MLPerf LoadGen trace log: trace events, not requests or results"
    if isinstance(doc, list) and not doc:
        return "MLPerf LoadGen accuracy log with no entries (a performance-mode run)"
    return "MLPerf LoadGen accuracy log: the raw outputs for the benchmark's accuracy script, not performance results"


# --- one detail log -----------------------------------------------------------------------

def _values(records: list[dict]) -> dict:
    """{key: first value}: the oracle's and LoadGen's own summary reading."""
    out: dict = {}
    for r in records:
        out.setdefault(r["key"], r.get("value"))
    return out


def _draft(source: SourceFile) -> Draft:
    """One run from a detail log: its scenario's aggregates, validity and LoadGen's own errors."""
    v = _values(source.doc["records"])
    if "result_validity" not in v:
        raise Broken("$", f"expected a finished LoadGen run (a {MARK} result_validity record), found none: the test "
                          "did not finish or the log is cut short")
    d = Draft(source, {"name": HARNESS_NAME}, source_format="mlperf loadgen detail log")
    if isinstance(v.get("loadgen_version"), str):
        d.harness["version"] = v["loadgen_version"][:100]
    d.load = _load_description(v)
    if "test_datetime" in v:  # what LoadGen recorded; a date it cannot have written is refused, never the mtime
        raw = v["test_datetime"]
        t = epoch_from_iso(raw) if isinstance(raw, str) else None
        if t is None or not 0 < t < 32503680000:  # before 3000-01-01
            raise Broken("$.test_datetime", "expected the ISO date-time LoadGen writes (2026-12-01T10:54:40Z), "
                                            f"got {json.dumps(raw)[:60]}")
        d.date, d.timestamp = iso_from_epoch(t), t
    d.model_where = "LoadGen log"
    wl, conc = _load(v)
    n = _samples(v)
    d.measurements = [m for m in _measurements(v, wl, conc, n) if m]
    _validity(v, d)
    _errors(source.doc["records"], d)
    d.notes.append(f"MLPerf LoadGen {v.get('effective_scenario')} scenario, {v.get('effective_test_mode')}: "
                   f"{v.get('result_query_count')} queries, {n} samples; LoadGen keeps no per-request records")
    if source.doc.get("stray_lines"):
        d.notes.append(f"{source.doc['stray_lines']} lines without {MARK} were left out")
    return d


def _load_description(v: dict) -> dict:
    """What LoadGen sent: the scenario's arrival (Server: Poisson at the target QPS; Offline: every
    sample in one query; SingleStream / MultiStream: one query after another) and the query set
    (its name and size). Prompts, lengths and the endpoint are the system under test's, not in the log."""
    scenario = v.get("effective_scenario")
    arrival = {"Server": "poisson", "Offline": "offline", "SingleStream": "sequential",
               "MultiStream": "multistream"}.get(scenario, scenario if isinstance(scenario, str) else None)
    qsl = v.get("qsl_name")
    load = {"arrival": arrival, "rate": num(v.get("effective_target_qps")) if scenario == "Server" else None,
            "dataset": f"{qsl} ({v.get('qsl_reported_performance_count')} samples)"[:200]
            if isinstance(qsl, str) else None,
            "seed": count(v.get("effective_schedule_rng_seed")),
            "duration_s": num(v.get("effective_min_duration_ms")) / 1000.0
            if num(v.get("effective_min_duration_ms")) is not None else None}
    return load


def _load(v: dict) -> tuple[str, int | None]:
    """(workload suffix, concurrency) of the LoadGen scenario."""
    scenario = str(v.get("effective_scenario") or "")
    qps = num(v.get("effective_target_qps"))
    if scenario == "Server":
        return (f"-server-poisson-{qps:g}rps" if qps else "-server"), None
    if scenario == "SingleStream":
        return "", 1
    if scenario == "MultiStream":
        return f"-multistream-{positive_int(v.get('effective_samples_per_query')) or ''}".rstrip("-"), None
    return f"-{scenario.lower() or 'unknown-scenario'}", None


def _samples(v: dict) -> int | None:
    """Samples the latency figures are over: queries x samples per query (Offline: one query of many)."""
    queries = expect_count(v.get("result_query_count"), "$.result_query_count", "the query count", optional=True)
    per = positive_int(first(v.get("generated_samples_per_query"), v.get("effective_samples_per_query"))) or 1
    return queries * per if queries else None


def _ns(v: dict, key: str) -> float | None:
    return expect_number(v.get(key), f"$.{key}", f"LoadGen's {key} in ns", optional=True)


def _measurements(v: dict, wl: str, conc: int | None, n: int | None) -> list:
    """Latency and first-token percentiles (ns -> ms), decode rate from TPOT, throughputs."""
    out = []
    for prefix, metric in (("result", "e2e_latency_ms"), ("result_first_token", "ttft_ms")):
        for stat in ("min", "max", "mean"):
            val = _ns(v, f"{prefix}_{stat}_latency_ns")
            out.append(measurement(wl, conc, metric, val / 1e6 if val is not None else None, "ms", stat, n))
        for pct, stat in PCTS.items():
            val = _ns(v, f"{prefix}_{pct}_percentile_latency_ns")
            out.append(measurement(wl, conc, metric, val / 1e6 if val is not None else None, "ms", stat, n))
    for key, stat in (("result_time_to_output_token_mean", "mean"),
                      ("result_time_per_output_token_50.00_percentile_ns", "p50")):
        tpot = _ns(v, key)  # the time per output token after the first: its inverse is the stream's decode rate
        if tpot:
            out.append(measurement(wl, conc, "decode_tok_s_per_stream", 1e9 / tpot, "tok/s", stat, n))
    tokens = first(v.get("result_completed_tokens_per_second"), v.get("result_tokens_per_second"))
    samples = first(v.get("result_completed_samples_per_sec"), v.get("result_samples_per_second"))
    out.append(measurement(wl, conc, "output_tok_s", tokens, "tok/s", "mean", n))
    out.append(measurement(wl, conc, "request_rate", samples, "req/s", "mean", n))
    return out


def _validity(v: dict, d: Draft) -> None:
    """`result_validity` and why, in the notes; an INVALID result also as a fault event."""
    checks = {"performance constraints": v.get("result_perf_constraints_met"),
              "min duration": v.get("result_min_duration_met"), "min queries": v.get("result_min_queries_met"),
              "early stopping": v.get("early_stopping_met")}
    failed = [k for k, ok in checks.items() if ok is False]
    early = {k: _one_line(v.get(f"early_stopping_{k}_result")) for k in ("ttft", "tpot")}
    early = {k: t for k, t in early.items() if t}
    why = "; ".join(filter(None, [
        ("not met: " + ", ".join(failed)) if failed else "",
        _one_line(v.get("result_invalid_reason")),
        "; ".join(f"{k.upper()} early stopping: {t}" for k, t in early.items())]))
    validity = str(v.get("result_validity"))
    d.notes.append(f"LoadGen result_validity {validity}" + (f" ({why})" if why else ""))
    over = positive_int(v.get("result_overlatency_query_count"))
    if over:
        d.notes.append(f"{over} of {v.get('result_query_count')} queries over LoadGen's latency target")
    if validity != "VALID":
        d.events.append({"kind": "fault", "message": (f"MLPerf LoadGen ruled this result {validity}: "
                                                      f"{why or 'no reason logged'}")[:1000]})


def _errors(records: list[dict], d: Draft) -> None:
    """LoadGen's own error and warning log lines (not failed samples) into the notes."""
    for kind in ("is_error", "is_warning"):
        lines = [f"{r['key']}: {_one_line(r.get('value'))}" for r in records
                 if isinstance(r.get("metadata"), dict) and r["metadata"].get(kind)]
        if lines:
            word = "error" if kind == "is_error" else "warning"
            d.notes.append(f"LoadGen logged {len(lines)} {word}(s), not failed samples: " + "; ".join(lines)[:400])


def _one_line(text) -> str:
    return re.sub(r"\s+", " ", str(text)).strip(" *") if text else ""


IMPORTER = _Importer()
