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
No model name is logged (the benchmark is the SUT's business): it comes from a manifest, or from
the benchmark folder of an MLPerf submission tree. An INVALID result is carried into the run's
notes and recorded as a `fault` event, so the report's fault flag says it; it is never dropped
silently.

An official submission tree (mlcommons/inference_results_vX.Y, checked against v4.1 and v5.1):
`<division>/<Submitter>/results/<system>/<benchmark>/<scenario>/performance/run_1/` (the run),
`.../<scenario>/accuracy/` (an AccuracyOnly log, which writes no results and no validity record;
the accuracy checker's `accuracy.txt`; `mlperf_log_accuracy.json` cut to its first and last 4 KiB
by the submission tools' truncate_accuracy_log.py), `<Submitter>/systems/<system>.json` (the
system description: name, accelerators, nodes, framework), `<Submitter>/measurements/<system>/
<benchmark>/<scenario>/` (`<system>_<scenario>.json`: weight data types, ...; user.conf, README)
and `<Submitter>/compliance/<system>/<benchmark>/<scenario>/TEST0N/` (audit runs). The Interactive
scenario is LoadGen's Server scenario with tighter TTFT/TPOT limits: the log says Server, the
folder says Interactive.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from pathlib import Path

from benchreport.load.harness import ImportOutcome, SourceFile
from benchreport.load.harness._checks import Broken, draft_or_refuse, expect_count, expect_number
from benchreport.load.harness._common import (
    Draft,
    count,
    epoch_from_iso,
    finish,
    first,
    iso_from_epoch,
    measurement,
    num,
    positive_int,
    skip,
)
from benchreport.load.errors import one_line

NAME = "mlperf-loadgen"
HARNESS_NAME = "mlperf loadgen"
MARK = ":::MLLOG"
SUMMARY_MARK = b"MLPerf Results Summary"
#: LoadGen's percentile in a key -> native statistic (97.00 and 99.90 have none)
PCTS = {"50.00": "p50", "90.00": "p90", "95.00": "p95", "99.00": "p99"}
#: the scenario folders of a submission tree (lower case: some submitters write them so)
SCENARIOS = {
    "offline": "Offline",
    "server": "Server",
    "interactive": "Interactive",
    "singlestream": "SingleStream",
    "multistream": "MultiStream",
}
#: the areas of a submitter's folder that hold <system>/<benchmark>/<scenario>/... below them
AREAS = ("results", "measurements", "compliance")
#: keys every MLPerf system description has (the submission checker's required fields)
SYSTEM_KEYS = {"system_name", "accelerator_model_name", "accelerators_per_node"}
#: keys of the per-scenario implementation description in measurements/ (`<system>_<scenario>.json`)
MEASUREMENT_KEYS = {"weight_data_types", "starting_weights_filename"}
#: what the submission tools' truncate_accuracy_log.py puts between the first and last 4 KiB it keeps
#: (with the line ends of the system it ran on)
TRUNCATION = re.compile(rb"\r?\n\r?\n\.\.\.\r?\n\r?\n")


# --- recognising and parsing --------------------------------------------------------------


def _is_detail(doc) -> bool:
    return isinstance(doc, dict) and doc.get("mlperf_log") == "detail"


def _is_accuracy(doc, path) -> bool:
    if isinstance(doc, list) and not doc:
        return path.name == "mlperf_log_accuracy.json"
    return isinstance(doc, list) and all(isinstance(r, dict) and {"seq_id", "qsl_idx", "data"} <= set(r) for r in doc)


def _is_trace(doc, path) -> bool:
    return path.name == "mlperf_log_trace.json" and (
        doc == {"mlperf_log": "empty trace"} or (isinstance(doc, dict) and "traceEvents" in doc)
    )


def _is_system(doc) -> bool:
    return isinstance(doc, dict) and SYSTEM_KEYS <= set(doc) and "mlperf_log" not in doc


def _is_implementation(doc) -> bool:
    return isinstance(doc, dict) and MEASUREMENT_KEYS <= set(doc) and "mlperf_log" not in doc


@dataclass(frozen=True)
class Where:
    """Where a file lies in an MLPerf submission tree: `<submitter>/<area>/<system>/<benchmark>/
    <folder>/<rest...>/<file>` (area: results, measurements or compliance; folder: the scenario)."""

    submitter: Path
    area: str
    system: str
    benchmark: str
    folder: str  # the scenario folder as spelled (Offline, server, Interactive, ...)
    rest: tuple  # the folders between the scenario and the file

    @property
    def scenario(self) -> str:
        """The scenario as MLPerf spells it."""
        return SCENARIOS[self.folder.lower()]

    @property
    def scenario_dir(self) -> Path:
        return self.submitter / self.area / self.system / self.benchmark / self.folder


def where_in_submission(path: Path) -> Where | None:
    """The file's place in an MLPerf submission tree, from its path alone (the deepest
    results/measurements/compliance folder with <system>/<benchmark>/<scenario> below it), or None."""
    parts = Path(path).absolute().parts
    for i in range(len(parts) - 5, 0, -1):
        if parts[i] in AREAS and parts[i + 3].lower() in SCENARIOS:
            return Where(Path(*parts[:i]), parts[i], parts[i + 1], parts[i + 2], parts[i + 3], tuple(parts[i + 4 : -1]))
    return None


class _Tree:
    """What the files given say about the submission around a result: the system descriptions
    (`<submitter>/systems/<system>.json`), the implementation descriptions (measurements/) and the
    accuracy checker's results (`<scenario>/accuracy/accuracy.txt`). Only files given to the loader
    are read: nothing is looked up outside the folders the user named."""

    def __init__(self, files: list[SourceFile]):
        self.systems: dict[Path, SourceFile] = {}
        self.implementations: dict[Path, list[SourceFile]] = {}
        self.accuracy: dict[Path, SourceFile] = {}
        self.used: set[Path] = set()  # descriptions read into a run's seat or notes
        for s in files:
            path = s.path.absolute()
            if _is_system(s.doc):
                self.systems[path] = s
            elif _is_implementation(s.doc):
                self.implementations.setdefault(path.parent, []).append(s)
            elif _kind(s.doc) == "accuracy text" and path.name == "accuracy.txt":
                w = where_in_submission(path)
                if w is not None and w.area == "results" and w.rest == ("accuracy",):
                    self.accuracy[w.scenario_dir] = s

    def system(self, w: Where) -> SourceFile | None:
        return self.systems.get(w.submitter / "systems" / f"{w.system}.json")

    def implementation(self, w: Where) -> SourceFile | None:
        found = self.implementations.get(w.submitter / "measurements" / w.system / w.benchmark / w.folder, [])
        named = [s for s in found if s.path.name == f"{w.system}_{w.folder}.json"]
        return (named or found or [None])[0]


def _kind(doc) -> str | None:
    return doc.get("mlperf_log") if isinstance(doc, dict) else None


def _scores(text: str) -> dict:
    """The accuracy checker's figures: the numbers of the last line that is a Python dict literal
    (`{'rouge1': 44.43, ..., 'tokens_per_sample': 294.4}`, `{'exact_match': 81.4, ...}`)."""
    found: dict = {}
    for line in text.splitlines():
        line = line.strip()
        if not (line.startswith("{") and line.endswith("}")) or len(line) > 4000:
            continue
        try:
            doc = ast.literal_eval(line)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        if isinstance(doc, dict):
            nums = {str(k)[:40]: _number(v) for k, v in doc.items()}
            nums = {k: v for k, v in nums.items() if v is not None}
            if nums:
                found = nums
    return dict(list(found.items())[:12])


def _number(value) -> float | int | None:
    """A finite number, or a string holding one (the checker writes some scores as '38.4887')."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    return value if num(value) is not None else None


def _score_words(scores: dict) -> str:
    return ", ".join(f"{k} {v:.6g}" if isinstance(v, float) else f"{k} {v}" for k, v in scores.items())


class _Importer:
    name = NAME
    #: the formats it reads, in words (for refusals that list what was considered)
    label = "MLPerf LoadGen mlperf_log_detail.txt and its side files"
    #: keys only its files have (a file holding one is refused when not read, never skipped), and
    #: the names of its files
    signature = ("mlperf_log", "qsl_idx")
    result_names = re.compile(r"^mlperf_log_")

    def recognise(self, doc, path):
        if (
            _is_detail(doc)
            or (isinstance(doc, dict) and doc.get("mlperf_log"))
            or _is_accuracy(doc, path)
            or _is_trace(doc, path)
            or _is_system(doc)
            or _is_implementation(doc)
        ):
            return "results"  # system and implementation descriptions are read into the runs' seats
        return None

    def recognise_text(self, head: bytes, path):
        if head.lstrip().startswith(MARK.encode()):
            return "results"
        if SUMMARY_MARK in head[:400] and b"=====" in head[:200]:
            return "results"
        if not head.strip() and path.name == "mlperf_log_trace.json":
            return "results"
        if path.name == "mlperf_log_accuracy.json" and head.lstrip().startswith(b"[") and b'"qsl_idx"' in head:
            return "results"  # not valid JSON: cut short by the submission tools (parse_text tells)
        if path.name in ("accuracy.txt", "verify_accuracy.txt") and where_in_submission(path) is not None:
            return "results"  # the accuracy checker's output in a submission tree
        return None

    def parse_text(self, data: bytes, path) -> dict:
        if path.name == "mlperf_log_accuracy.json":
            if not TRUNCATION.search(data):
                raise ValueError(
                    "$\x00expected the JSON list LoadGen writes, or one the MLPerf submission tools cut "
                    "to its first and last 4 KiB (with \\n\\n...\\n\\n between them), found neither: "
                    "the file is damaged"
                )
            return {"mlperf_log": "truncated accuracy", "bytes": len(data)}
        if path.name in ("accuracy.txt", "verify_accuracy.txt"):
            return {"mlperf_log": "accuracy text", "scores": _scores(data.decode("utf-8", errors="replace"))}
        if not data.strip():
            return {"mlperf_log": "empty trace"}
        if SUMMARY_MARK in data[:400]:
            return {"mlperf_log": "summary"}
        return {"mlperf_log": "detail", **_records(data.decode("utf-8", errors="replace"))}

    def import_files(self, files: list[SourceFile], manifests: list) -> ImportOutcome:
        """Each performance detail log a run; summaries, stdout twins, accuracy and trace logs,
        accuracy-mode and compliance logs skipped; a submission's system and implementation
        descriptions (only those given in the folder) read into the seats of its results."""
        outcome = ImportOutcome()
        tree = _Tree(files)
        details = {s.path.parent for s in files if _is_detail(s.doc)}
        drafts, side = [], []
        for s in files:
            if not _is_detail(s.doc):
                side.append(s)  # after the runs: its reason says whether a run read it
            elif why := _not_a_pass(s):
                skip(outcome, s, why)
            elif (d := draft_or_refuse(outcome, s, "MLPerf LoadGen detail log", _draft, s, tree)) is not None:
                drafts.append(d)
        for s in side:
            skip(outcome, s, _side_reason(s, s.path.parent in details, tree))
        return finish(drafts, manifests, NAME, outcome)


def _records(text: str) -> dict:
    """The `:::MLLOG` records of a detail log, in order (raises ValueError naming a broken line)."""
    records, stray = [], 0
    for n, line in enumerate(text.splitlines(), 1):
        if not line.startswith(MARK):
            stray += bool(line.strip())
            continue
        try:
            rec = json.loads(line[len(MARK) :])
        except ValueError as exc:
            raise ValueError(f"$\x00expected a JSON record after {MARK} on line {n}, found an error: {exc}") from None
        if not isinstance(rec, dict) or not isinstance(rec.get("key"), str):
            raise ValueError(f"$\x00expected a record with a key after {MARK} on line {n}")
        records.append(rec)
    return {"records": records, "stray_lines": stray}


def _not_a_pass(source: SourceFile) -> str | None:
    """Why a finished-or-not detail log is no performance pass of its seat (skipped, not refused):
    a compliance audit run, or an accuracy-mode run (which writes no results and no validity
    record: normal, not damage). None for a performance run."""
    w = where_in_submission(source.path)
    if w is not None and w.area == "compliance":
        test = next((p for p in w.rest if re.fullmatch(r"TEST\d+", p)), "audit")
        return (
            f"MLPerf compliance run ({test} of {w.benchmark} {w.scenario} on {w.system}): an audit the "
            "submission rules ask for, not a performance pass of the seat (the pass is results/.../"
            "performance/run_1)"
        )
    v = _values(source.doc["records"])
    accuracy_folder = w is not None and w.area == "results" and w.rest[:1] == ("accuracy",)
    if "result_validity" not in v and (v.get("effective_test_mode") == "AccuracyOnly" or accuracy_folder):
        return (
            "MLPerf LoadGen accuracy-mode log (AccuracyOnly): it runs every sample once for the accuracy "
            "checker and writes no performance results and no validity record (normal, not damage); the "
            "score is in accuracy.txt"
        )
    return None


def _side_reason(s: SourceFile, with_detail: bool, tree: _Tree) -> str:
    """Why a LoadGen file other than the detail log is skipped."""
    doc, kind = s.doc, _kind(s.doc)
    w = where_in_submission(s.path)
    compliance = w is not None and w.area == "compliance"
    if _is_system(doc):
        return (
            "an MLPerf system description, read into the seats of the results beside it"
            if s.path.absolute() in tree.used
            else "an MLPerf system description; none of the files given are results of this system (nothing "
            "to read it into)"
        )
    if _is_implementation(doc):
        return (
            "an MLPerf implementation description (measurements/), its weight data types read into the seats "
            "of the results beside it"
            if s.path.absolute() in tree.used
            else "an MLPerf implementation description (measurements/); none of the files given are results of "
            "its system, benchmark and scenario"
        )
    if kind == "truncated accuracy":
        return (
            "MLPerf LoadGen accuracy log cut to its first and last 4 KiB by the MLPerf submission tools "
            "before publishing (normal: accuracy.txt keeps the full log's hash and the checker's score); "
            "raw outputs, not results"
        )
    if kind == "accuracy text":
        scores = doc.get("scores") or {}
        if compliance or s.path.name == "verify_accuracy.txt":
            return "MLPerf compliance check output (an audit's verdict), not performance results"
        what = f" ({_score_words(scores)[:300]})" if scores else ""
        return (
            f"MLPerf accuracy checker output{what}: read into the notes of the performance run of "
            f"this benchmark and scenario"
            if s.path.absolute() in tree.used
            else f"MLPerf accuracy checker output{what}: no performance run of this benchmark and scenario "
            "was given, so it is not read"
        )
    if kind == "summary":
        return (
            "MLPerf LoadGen summary: the human-readable twin of mlperf_log_detail.txt beside it (same results, "
            "read once from there)"
            if with_detail
            else "MLPerf LoadGen summary without its mlperf_log_detail.txt: not read (the detail log carries "
            "the figures)"
        )
    if kind == "empty trace":
        return "MLPerf LoadGen trace log, empty: tracing was off (it would hold trace events, not requests)"
    if _is_trace(doc, s.path):
        return "MLPerf LoadGen trace log: trace events, not requests or results"
    if compliance:
        return "MLPerf compliance (audit) accuracy log: raw outputs of an audit run, not performance results"
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


def _draft(source: SourceFile, tree: _Tree | None = None) -> Draft:
    """One run from a detail log: its scenario's aggregates, validity and LoadGen's own errors; in a
    submission tree, the seat from the results path and the system description beside it."""
    v = _values(source.doc["records"])
    if "result_validity" not in v:
        raise Broken(
            "$",
            f"expected a finished LoadGen run (a {MARK} result_validity record), found none: the test "
            "did not finish or the log is cut short",
        )
    d = Draft(source, {"name": HARNESS_NAME}, source_format="mlperf loadgen detail log")
    if isinstance(v.get("loadgen_version"), str):
        d.harness["version"] = v["loadgen_version"][:100]
    d.load = _load_description(v)
    if "test_datetime" in v:  # what LoadGen recorded; a date it cannot have written is refused, never the mtime
        raw = v["test_datetime"]
        t = epoch_from_iso(raw) if isinstance(raw, str) else None
        if t is None or not 0 < t < 32503680000:  # before 3000-01-01
            raise Broken(
                "$.test_datetime",
                f"expected the ISO date-time LoadGen writes (2026-12-01T10:54:40Z), got {json.dumps(raw)[:60]}",
            )
        d.date, d.timestamp = iso_from_epoch(t), t
    d.model_where = "LoadGen log"
    w = where_in_submission(source.path)
    w = w if w is not None and w.area == "results" else None
    wl, conc = _load(v)
    if w is not None and w.scenario == "Interactive" and v.get("effective_scenario") == "Server":
        wl = wl.replace("-server", "-interactive", 1)
        d.notes.append(
            "the submission files this run under the Interactive scenario, which LoadGen runs as its "
            "Server scenario with tighter first-token and per-token latency limits" + _limits(v)
        )
    n = _samples(v)
    d.measurements = [m for m in _measurements(v, wl, conc, n, d.notes) if m]
    _validity(v, d)
    _errors(source.doc["records"], d)
    d.notes.append(
        f"MLPerf LoadGen {v.get('effective_scenario')} scenario, {v.get('effective_test_mode')}: "
        f"{v.get('result_query_count')} queries, {n} samples; LoadGen keeps no per-request records"
    )
    if source.doc.get("stray_lines"):
        d.notes.append(f"{source.doc['stray_lines']} lines without {MARK} were left out")
    if w is not None:
        _submission(d, w, tree or _Tree([]))
    return d


def _limits(v: dict) -> str:
    """The TTFT and TPOT limits LoadGen was given (Server and Interactive), in words."""
    ttft, tpot = num(v.get("requested_server_ttft_latency")), num(v.get("requested_server_tpot_latency"))
    if not ttft and not tpot:
        return ""
    parts = [f"TTFT {ttft / 1e6:g} ms" if ttft else "", f"TPOT {tpot / 1e6:g} ms" if tpot else ""]
    return " (" + ", ".join(p for p in parts if p) + ")"


def _submission(d: Draft, w: Where, tree: _Tree) -> None:
    """A result of an MLPerf submission tree: the model is the benchmark folder (LoadGen logs none);
    the seat's configuration is the system description `<submitter>/systems/<system>.json` when it
    was given (else the system folder's name, stated), and the weight data types of the
    implementation description in measurements/; the accuracy checker's scores go to the notes."""
    d.model, d.model_where = w.benchmark[:200], "the MLPerf results path's benchmark folder"
    d.notes.append(f"MLPerf submission: {w.benchmark}, {w.scenario} scenario, system {w.system}")
    system = tree.system(w)
    # the submitter (its folder) too: one system name (NVIDIA DGX B200 ...) is submitted by several,
    # and their results are not passes of one measurement
    d.config["submitter"] = w.submitter.name[:120]
    d.config["system_id"] = w.system[:120]  # the submission's short name of its system: the seat's id
    if system is not None:
        tree.used.add(system.path.absolute())
        d.config.update(_system_config(system.doc))
        d.config.setdefault("system", w.system)  # a description without a name: its folder's
        d.notes.append(f"seat configuration from the system description systems/{system.path.name}")
    else:
        d.config["system"] = w.system
        d.assumptions.append(
            f"system named after its results folder '{w.system[:80]}' (its systems/{w.system[:80]}"
            ".json was not among the files given: give the submitter's whole folder to read it)"
        )
    impl = tree.implementation(w)
    if impl is not None and isinstance(impl.doc.get("weight_data_types"), str) and impl.doc["weight_data_types"]:
        tree.used.add(impl.path.absolute())
        d.config["quantisation"] = impl.doc["weight_data_types"]
    accuracy = tree.accuracy.get(w.scenario_dir)
    if accuracy is not None and accuracy.doc.get("scores"):
        tree.used.add(accuracy.path.absolute())
        d.notes.append(
            f"MLPerf accuracy run of this benchmark and scenario (accuracy/accuracy.txt, the accuracy "
            f"checker's output): {_score_words(accuracy.doc['scores'])[:400]}"
        )


def _system_config(doc: dict) -> dict:
    """What an MLPerf system description records of the seat: its name, accelerator, accelerator
    count (per node x nodes), nodes and framework."""
    config: dict = {}
    for key, field in (("system", "system_name"), ("hardware", "accelerator_model_name"), ("engine", "framework")):
        value = doc.get(field)
        if isinstance(value, str) and value.strip():
            config[key] = one_line(value.strip())[:120]
    per_node, nodes = _whole(doc.get("accelerators_per_node")), _whole(doc.get("number_of_nodes"))
    if nodes:
        config["nodes"] = nodes
    if per_node:
        config["accelerators"] = per_node * (nodes or 1)
    return config


def _whole(value) -> int | None:
    """A positive whole number from a number or a string of digits (system descriptions write both)."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    return positive_int(value)


def _load_description(v: dict) -> dict:
    """What LoadGen sent: the scenario's arrival (Server: Poisson at the target QPS; Offline: every
    sample in one query; SingleStream / MultiStream: one query after another) and the query set
    (its name and size). Prompts, lengths and the endpoint are the system under test's, not in the log."""
    scenario = v.get("effective_scenario")
    arrival = {
        "Server": "poisson",
        "Offline": "offline",
        "SingleStream": "sequential",
        "MultiStream": "multistream",
    }.get(scenario, scenario if isinstance(scenario, str) else None)
    qsl = v.get("qsl_name")
    load = {
        "arrival": arrival,
        "rate": num(v.get("effective_target_qps")) if scenario == "Server" else None,
        "dataset": f"{qsl} ({v.get('qsl_reported_performance_count')} samples)"[:200] if isinstance(qsl, str) else None,
        "seed": count(v.get("effective_schedule_rng_seed")),
        "duration_s": num(v.get("effective_min_duration_ms")) / 1000.0
        if num(v.get("effective_min_duration_ms")) is not None
        else None,
    }
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


def _measurements(v: dict, wl: str, conc: int | None, n: int | None, notes: list[str]) -> list:
    """Latency and first-token percentiles (ns -> ms), decode rate from TPOT, throughputs. Offline
    gives throughput only: its one query's latencies are times since that query was issued."""
    out = []
    offline = v.get("effective_scenario") == "Offline"
    p50 = _ns(v, "result_50.00_percentile_latency_ns")
    if offline and p50 is not None:
        notes.append(
            f"Offline scenario: LoadGen's latencies (p50 {p50 / 1e6:,.0f} ms) are the times from the one "
            "query's issue to each sample's completion, not request latencies: left out (Offline gives "
            "throughput only)"
        )
    for prefix, metric in () if offline else (("result", "e2e_latency_ms"), ("result_first_token", "ttft_ms")):
        for stat in ("min", "max", "mean"):
            val = _ns(v, f"{prefix}_{stat}_latency_ns")
            out.append(measurement(wl, conc, metric, val / 1e6 if val is not None else None, "ms", stat, n))
        for pct, stat in PCTS.items():
            val = _ns(v, f"{prefix}_{pct}_percentile_latency_ns")
            out.append(measurement(wl, conc, metric, val / 1e6 if val is not None else None, "ms", stat, n))
    for key, stat in (
        ("result_time_to_output_token_mean", "mean"),
        ("result_time_per_output_token_50.00_percentile_ns", "p50"),
    ):
        tpot = _ns(v, key)  # the time per output token after the first: its inverse is the stream's decode rate
        if tpot:
            out.append(measurement(wl, conc, "decode_tok_s_per_stream", 1e9 / tpot, "tok/s", stat, n))
    counted = first(v.get("result_completed_tokens_per_second"), v.get("result_tokens_per_second"))
    inferred = first(v.get("result_inferred_completed_tokens_per_second"), v.get("result_inferred_tokens_per_second"))
    if counted is None and num(inferred) is not None:
        notes.append(
            "tokens per second as LoadGen inferred them (result_inferred_*tokens_per_second: samples "
            "per second x the benchmark's fixed tokens per sample), not counted tokens"
        )
    samples = first(v.get("result_completed_samples_per_sec"), v.get("result_samples_per_second"))
    scheduled = num(v.get("result_scheduled_samples_per_sec"))
    if scheduled is not None:
        notes.append(f"LoadGen scheduled {scheduled:g} samples/s (the request rate is the completed samples/s)")
    out.append(measurement(wl, conc, "output_tok_s", first(counted, inferred), "tok/s", "mean", n))
    out.append(measurement(wl, conc, "request_rate", samples, "req/s", "mean", n))
    return out


def _validity(v: dict, d: Draft) -> None:
    """`result_validity` and why, in the notes; an INVALID result also as a fault event."""
    checks = {
        "performance constraints": v.get("result_perf_constraints_met"),
        "min duration": v.get("result_min_duration_met"),
        "min queries": v.get("result_min_queries_met"),
        "early stopping": v.get("early_stopping_met"),
    }
    failed = [k for k, ok in checks.items() if ok is False]
    early = {k: _one_line(v.get(f"early_stopping_{k}_result")) for k in ("ttft", "tpot")}
    early = {k: t for k, t in early.items() if t}
    why = "; ".join(
        filter(
            None,
            [
                ("not met: " + ", ".join(failed)) if failed else "",
                _one_line(v.get("result_invalid_reason")),
                "; ".join(f"{k.upper()} early stopping: {t}" for k, t in early.items()),
            ],
        )
    )
    validity = str(v.get("result_validity"))
    d.notes.append(f"LoadGen result_validity {validity}" + (f" ({why})" if why else ""))
    over = positive_int(v.get("result_overlatency_query_count"))
    if over and num(v.get("effective_target_latency_ns")):  # with no latency target (0), every query is "over"
        d.notes.append(f"{over} of {v.get('result_query_count')} queries over LoadGen's latency target")
    if validity != "VALID":
        d.events.append(
            {
                "kind": "fault",
                "message": (f"MLPerf LoadGen ruled this result {validity}: {why or 'no reason logged'}")[:1000],
            }
        )


def _errors(records: list[dict], d: Draft) -> None:
    """LoadGen's own error and warning log lines (not failed samples) into the notes."""
    for kind in ("is_error", "is_warning"):
        lines = [
            f"{r['key']}: {_one_line(r.get('value'))}"
            for r in records
            if isinstance(r.get("metadata"), dict) and r["metadata"].get(kind)
        ]
        if lines:
            word = "error" if kind == "is_error" else "warning"
            d.notes.append(f"LoadGen logged {len(lines)} {word}(s), not failed samples: " + "; ".join(lines)[:400])


def _one_line(text) -> str:
    return re.sub(r"\s+", " ", str(text)).strip(" *") if text else ""


IMPORTER = _Importer()
