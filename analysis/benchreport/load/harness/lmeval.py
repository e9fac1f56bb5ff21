"""lm-evaluation-harness `results_<date>.json` and `samples_<task>_<date>.jsonl` (`--log_samples`).

What lm-eval writes (lm_eval/evaluator.py, lm_eval/loggers/evaluation_tracker.py):
- results: `results` {task: {"<metric>,<filter>": value, "<metric>_stderr,<filter>": ..., alias}},
  `group_subtasks`, `configs`, `versions`, `n-shot`, `higher_is_better`, `n-samples`
  {task: {original, effective}}, `config` {model, model_args, ...}, `model_name`, `date`
  (POSIX start time), `lm_eval_version`, `task_hashes` {task: sha256 of its samples' hashes}.
- samples: one line a (document, filter): `doc_id`, `doc`, `target`, `arguments`, `resps`,
  `filtered_resps`, `filter`, `metrics` (names), `doc_hash`, `prompt_hash`, `target_hash`
  (from v0.4.3 or so), and one key a metric with its per-document value.
Samples become item-level exams (native `items` [{id, correct}]) so two seats on the same task
pair item by item (McNemar): the id is `doc_hash` when present, else `doc_id`; `correct` is the
task's primary metric, which must be a 0/1 verdict (acc, exact_match, pass@1, ...). A task's
samples are tied to the results file of the same invocation by `task_hashes` (the samples file
does not name its task); results scores of tasks without samples become count exams.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import re

from benchreport.load.harness import ImportOutcome, SourceFile, _manifest
from benchreport.load.harness._common import (
    Draft,
    dig,
    epoch_seconds,
    finish,
    first,
    guarded,
    iso_from_epoch,
    num,
    positive_int,
    skip,
)

NAME = "lmeval"
HARNESS_NAME = "lm-evaluation-harness"
#: metrics that are per-document verdicts, in order of preference as the task's primary metric
VERDICTS = (
    "acc",
    "exact_match",
    "pass@1",
    "pass_at_1",
    "em",
    "correct",
    "accuracy",
    "acc_norm",
    "strict_match",
    "mc1",
    "is_correct",
)
RESULTS_MARKERS = (
    "configs",
    "versions",
    "n-shot",
    "lm_eval_version",
    "higher_is_better",
    "n-samples",
    "group_subtasks",
    "task_hashes",
)
SAMPLE_FILE = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.jsonl?$")
RESULT_FILE = re.compile(r"^results_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.json$")


def _is_results(doc) -> bool:
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("results"), dict)
        and any(k in doc for k in RESULTS_MARKERS)
        and all(isinstance(v, dict) for v in doc["results"].values())
    )


def _is_sample(r) -> bool:
    return (
        isinstance(r, dict)
        and "doc_id" in r
        and any(k in r for k in ("filtered_resps", "resps", "target", "doc_hash", "filter"))
    )


def _is_samples(doc) -> bool:
    return isinstance(doc, list) and bool(doc) and all(_is_sample(r) for r in doc)


class _Importer:
    name = NAME
    label = "lm-evaluation-harness results or samples"
    #: keys only its files have (a file holding one is refused when not read, never skipped), and
    #: the names of its files
    signature = (
        "lm_eval_version",
        "n-shot",
        "higher_is_better",
        "group_subtasks",
        "task_hashes",
        "filtered_resps",
        "doc_hash",
    )
    result_names = re.compile(r"^(?:results|samples)_.*\d{4}-\d{2}-\d{2}T[0-9.\-]+\.jsonl?$")

    def recognise(self, doc, path):
        if _is_results(doc) or _is_samples(doc):
            return "results"
        return None

    def import_files(self, files: list[SourceFile], manifests: list) -> ImportOutcome:
        outcome = ImportOutcome()
        index, manifest_refusals = _manifest.index_for(manifests)
        outcome.refused.extend(manifest_refusals)
        results = [s for s in files if _is_results(s.doc)]
        samples = [s for s in files if _is_samples(s.doc)]
        attached: dict[int, list[tuple[SourceFile, str]]] = {id(r): [] for r in results}
        by_hash: dict[str, list] = {}
        for r in results:
            hashes = r.doc.get("task_hashes")
            for task, h in hashes.items() if isinstance(hashes, dict) else ():
                if isinstance(h, str) and isinstance(task, str):
                    by_hash.setdefault(h, []).append((r, task))
        loose: list[SourceFile] = []
        for s in samples:
            hit = _nearest(s, by_hash.get(_task_hash(s.doc), []))
            if hit is None:
                hit = _by_name(s, results)
            if hit is not None:
                attached[id(hit[0])].append((s, hit[1]))
            else:
                loose.append(s)
        drafts = []
        for r in results:
            d = guarded(outcome, r, "lm-eval results", _results_draft, r, attached[id(r)], index)
            if d is not None:
                (drafts.append(d) if d.exams else skip(outcome, r, _nothing(d)))
        groups: dict[tuple, list[SourceFile]] = {}
        for s in loose:
            m = SAMPLE_FILE.match(s.path.name)
            key = (str(s.path.parent), m.group("date") if m else s.path.name)
            groups.setdefault(key, []).append(s)
        for _key, members in sorted(groups.items()):
            d = guarded(outcome, members[0], "lm-eval samples", _samples_draft, members, index)
            if d is None:
                continue
            if d.exams:
                drafts.append(d)
            else:
                for s in members:
                    skip(outcome, s, _nothing(d))
        return finish(drafts, manifests, NAME, outcome)


def _nothing(d: Draft) -> str:
    why = " ".join(d.notes) if d.notes else "no task scores"
    return f"lm-evaluation-harness file with no 0/1 verdicts or proportions to read: {why}"[:600]


def _task_hash(samples: list) -> str | None:
    """lm-eval's task hash: sha256 of the concatenated doc/prompt/target hashes of its samples."""
    parts = []
    for s in samples:
        h = [s.get("doc_hash"), s.get("prompt_hash"), s.get("target_hash")]
        if not all(isinstance(x, str) for x in h):
            return None
        parts.append("".join(h))
    return hashlib.sha256("".join(parts).encode("utf-8")).hexdigest()


def _nearest(s: SourceFile, candidates: list):
    """The results file the samples belong to among those whose task hash matches.

    The hash covers documents, prompts and targets, not answers, so every seat that ran the same
    task has it: the results file must also sit in the samples' folder (lm-eval writes both
    there), the one with the same date in its name winning when several do.
    """
    here = [c for c in candidates if c[0].path.parent == s.path.parent]
    if len(here) > 1:
        m = SAMPLE_FILE.match(s.path.name)
        dated = [
            c for c in here if m and (rm := RESULT_FILE.match(c[0].path.name)) and rm.group("date") == m.group("date")
        ]
        here = dated
    return here[0] if len(here) == 1 else None


def _by_name(s: SourceFile, results: list[SourceFile]):
    """Fallback when samples carry no hashes: same folder, same date in the two file names."""
    m = SAMPLE_FILE.match(s.path.name)
    if not m:
        return None
    for r in results:
        rm = RESULT_FILE.match(r.path.name)
        if (
            r.path.parent == s.path.parent
            and rm
            and rm.group("date") == m.group("date")
            and m.group("task") in (r.doc.get("results") or {})
        ):
            return r, m.group("task")
    return None


def _model(doc: dict) -> str | None:
    name = doc.get("model_name")
    if isinstance(name, str) and name:
        return name
    args = dig(doc, "config", "model_args")
    if isinstance(args, str):
        for key in ("pretrained", "model", "path", "engine", "model_name"):
            m = re.search(rf"(?:^|,)\s*{key}=([^,]+)", args)
            if m:
                return m.group(1).strip()
    if isinstance(args, dict):
        for key in ("pretrained", "model", "path", "engine", "model_name"):
            if isinstance(args.get(key), str):
                return args[key]
    model = dig(doc, "config", "model")
    return model if isinstance(model, str) and model else None


def _split(key: str) -> tuple[str, str]:
    metric, _, flt = key.partition(",")
    return metric, (flt or "none")


def _primary(metrics: list[str], wanted: str | None) -> str | None:
    if wanted and wanted in metrics:
        return wanted
    for name in VERDICTS:
        if name in metrics:
            return name
    return metrics[0] if metrics else None


def _verdict(value):
    """True/False for a 0/1 verdict (bool, 0, 1, 0.0, 1.0), else None."""
    if isinstance(value, bool):
        return value
    v = num(value)
    if v in (0.0, 1.0):
        return v == 1.0
    return None


def _item_exams(task: str, samples: list, wanted: str | None, notes: list[str]) -> list[dict]:
    """One exam per filter with items [{id, correct}] from the primary metric."""
    by_filter: dict[str, list] = {}
    for s in samples:
        by_filter.setdefault(str(s.get("filter") or "none"), []).append(s)
    exams = []
    for flt, rows in by_filter.items():
        names = rows[0].get("metrics")
        if not isinstance(names, list):
            skipkeys = {
                "doc_id",
                "doc",
                "target",
                "arguments",
                "resps",
                "filtered_resps",
                "filter",
                "metrics",
                "doc_hash",
                "prompt_hash",
                "target_hash",
            }
            names = [k for k, v in rows[0].items() if k not in skipkeys and _verdict(v) is not None]
        names = [n for n in names if isinstance(n, str)]
        metric = _primary(names, wanted)
        label = f"task '{task}'" + (f" filter '{flt}'" if flt != "none" else "")
        if metric is None:
            notes.append(f"{label}: no metric in its samples")
            continue
        rows = sorted(
            rows,
            key=lambda r: (
                (0, r["doc_id"], "")
                if isinstance(r.get("doc_id"), int) and not isinstance(r.get("doc_id"), bool)
                else (1, 0, str(r.get("doc_id")))
            ),
        )
        items, seen, bad = [], {}, None
        for r in rows:
            v = _verdict(r.get(metric))
            if v is None:
                bad = r.get(metric)
                break
            base = r.get("doc_hash") if isinstance(r.get("doc_hash"), str) and r.get("doc_hash") else None
            base = base or str(r.get("doc_id"))
            seen[base] = seen.get(base, 0) + 1
            items.append({"id": base if seen[base] == 1 else f"{base}#{seen[base]}", "correct": v})
        if bad is not None:
            shown = repr(bad)[:40]
            notes.append(f"{label}: metric '{metric}' is not a 0/1 verdict (a value {shown}); its items are not read")
            continue
        exam = {"benchmark": task[:120], "items": items}
        if flt != "none":
            exam["dimension"] = flt[:120]
        id_kind = "doc_hash" if any(isinstance(r.get("doc_hash"), str) for r in rows) else "doc_id"
        notes.append(f"{label}: {len(items)} items, verdict from '{metric}', item ids from {id_kind}")
        exams.append(exam)
    return exams


def _results_draft(src: SourceFile, attached: list, index) -> Draft:
    doc = src.doc
    version = doc.get("lm_eval_version")
    harness = {"name": HARNESS_NAME}
    if isinstance(version, str) and version and len(version) < 40:
        harness["version"] = version
    d = Draft(src, harness, source_format="lm-eval results")
    d.model = _model(doc)
    d.model_where = "model name"
    t = epoch_seconds(doc.get("date"))
    if t is not None:
        d.timestamp, d.date = t, iso_from_epoch(t)
    wanted = index.lookup(src.path).fields.get("exam_metric")
    tasks_with_items = set()
    for s, task in attached:
        d.extra_paths.append(s.path)
        exams = _item_exams(task, s.doc, wanted, d.notes)
        if exams:
            tasks_with_items.add(task)
            d.exams.extend(exams)
    groups = doc.get("group_subtasks") if isinstance(doc.get("group_subtasks"), dict) else {}
    nsamples = doc.get("n-samples") if isinstance(doc.get("n-samples"), dict) else {}
    for task, scores in sorted(doc["results"].items()):
        if task in tasks_with_items or (isinstance(groups.get(task), list) and groups[task]):
            continue
        total = positive_int(first(dig(nsamples, task, "effective"), dig(nsamples, task, "original")))
        by_filter: dict[str, dict] = {}
        paired = any(isinstance(k, str) and "," in k for k in scores)  # "<metric>,<filter>" (v0.4+)
        for key, value in scores.items():
            if not isinstance(key, str) or "_stderr" in key or key in ("alias", "name", "sample_len", "samples"):
                continue
            if (paired and "," not in key) or num(value) is None:
                continue
            metric, flt = _split(key)
            by_filter.setdefault(flt, {})[metric] = value
        for flt, metrics in by_filter.items():
            metric = _primary(list(metrics), wanted)
            value = num(metrics.get(metric)) if metric else None
            label = f"task '{task}'" + (f" filter '{flt}'" if flt != "none" else "")
            if value is None or not 0 <= value <= 1:
                d.notes.append(f"{label}: '{metric}' is not a proportion; not read")
                continue
            if total is None:
                d.notes.append(
                    f"{label}: {metric} = {value:.4g} with no sample count (n-samples, which lm-eval "
                    "writes from 0.4 on): a score without its count cannot be tested, so it is not read"
                )
                continue
            exam = {"benchmark": task[:120], "score": value * 100.0, "total": total}
            if flt != "none":
                exam["dimension"] = flt[:120]
            d.exams.append(exam)
            d.notes.append(f"{label}: {metric} = {value:.4g} of {total} (no samples file: counts only)")
    d.config = _configuration(doc)
    return d


#: lm-eval backends that call a server (its model arguments configure the client, not the seat)
API_BACKENDS = re.compile(r"^(local-|openai|anthropic|textsynth|gguf|ggml|watsonx|api)", re.I)
#: model_args keys that name the model, or configure the client rather than the served model
NOT_SEAT = {
    "pretrained",
    "model",
    "path",
    "engine",
    "model_name",
    "tokenizer",
    "trust_remote_code",
    "use_accelerate",
    "device_map",
    "parallelize",
    "batch_size",
    "max_batch_size",
    "device",
    "revision",
    "cache_dir",
    "base_url",
    "num_concurrent",
    "max_retries",
    "tokenized_requests",
    "timeout",
    "seed",
}


def _configuration(doc: dict) -> dict:
    """What a results file records of the seat's configuration: for a backend that loads the
    model itself (`hf`, `vllm`, `sglang`, ...), the backend and its model arguments other than
    the model's name and client settings (dtype, tensor_parallel_size, quantization,
    max_model_len, ...), so two configurations of one model are two seats. A backend that calls a
    server (`local-completions`, `openai-*`) records only the client: nothing of the seat."""
    config = doc.get("config") if isinstance(doc.get("config"), dict) else {}
    backend = config.get("model")
    if not isinstance(backend, str) or not backend or API_BACKENDS.match(backend):
        return {}
    out: dict = {"engine": backend}
    args = config.get("model_args")
    if isinstance(args, str):
        args = dict(kv.split("=", 1) for kv in args.split(",") if "=" in kv)
    if isinstance(args, dict):
        for key, value in sorted(args.items()):
            key = str(key).strip()
            if key in NOT_SEAT or not isinstance(value, (str, int, float, bool)):
                continue
            out["tensor_parallel" if key == "tensor_parallel_size" else key] = value
    return out


def _samples_draft(members: list[SourceFile], index) -> Draft:
    members = sorted(members, key=lambda s: s.path.name)
    src = members[0]
    d = Draft(src, {"name": HARNESS_NAME}, source_format="lm-eval samples")
    d.extra_paths.extend(s.path for s in members[1:])
    folder = src.path.parent.name
    applied = index.lookup(src.path)
    if "model" not in applied.seat and folder:
        d.model = folder
        d.model_where = "folder name (lm-eval names its output folder after the model; no results file found)"
    m = SAMPLE_FILE.match(src.path.name)
    if m:
        try:
            t = _dt.datetime.strptime(m.group("date"), "%Y-%m-%dT%H-%M-%S.%f")
        except ValueError:
            t = None
        if t is not None:
            d.date = t.isoformat(timespec="seconds")
            d.timestamp = t.replace(tzinfo=_dt.timezone.utc).timestamp()
            d.assumptions.append("date taken from the samples file's name (lm-eval's local start time)")
    wanted = applied.fields.get("exam_metric")
    for s in members:
        sm = SAMPLE_FILE.match(s.path.name)
        if sm:
            task = sm.group("task")
            d.assumptions.append(f"task '{task}' taken from the samples file's name (no results file to tie it to)")
        else:
            task = re.sub(r"\.jsonl?$", "", s.path.name)
            d.assumptions.append(
                f"task named '{task}' after the samples file (no results file, and the file "
                "name is not lm-eval's samples_<task>_<date>.jsonl)"
            )
        d.exams.extend(_item_exams(task, s.doc, wanted, d.notes))
    return d


IMPORTER = _Importer()
