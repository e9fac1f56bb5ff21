"""The ledger of the corpus from the wild (tests/wild/): for every file, what must happen to it.

Each entry of tests/wild_ledger.json says of one file (its path below tests/wild/):
- `outcome`: `read`, `skipped` or `refused`, and for a file not read, `reason`: words its
  refusal or skip must contain;
- for a file read: `runs` (how many runs it gives), `seats` (their ids), `figures`: figures the
  file states itself, each taken from the file by the small readers below (written apart from the
  importers, from each harness's own field names) and equal to what `analyse` reports for those
  runs, and `absent`: metrics that must not be reported (MLPerf Offline has no request latency).

The test (tests/test_wild_ledger.py) runs the command line over the whole corpus and checks every
entry. `python tests/wild_ledger.py` proposes a ledger from today's behaviour and these readers,
for review: a change that moves a ledger line says why in its commit.
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

WILD = Path(__file__).resolve().parent / "wild"
LEDGER = Path(__file__).resolve().parent / "wild_ledger.json"
#: relative tolerance for a figure the file states against ours (MLPerf's summary rounds to 2 decimals)
REL = 1e-3


def _fig(metric, statistic, value, source, concurrency=None):
    out = {"metric": metric, "statistic": statistic, "value": value, "from": source}
    if concurrency is not None:
        out["concurrency"] = concurrency
    return out


def _mlperf(path: Path) -> tuple[list, list]:
    """From mlperf_log_summary.txt beside a detail log (the human-readable twin; not what the importer
    reads): tokens per second, and the first-token latencies (ns) of Server and Interactive."""
    summary = path.with_name("mlperf_log_summary.txt")
    if not summary.exists():
        return [], []
    text = summary.read_text(encoding="utf-8", errors="replace")
    figures, absent = [], []
    scenario = re.search(r"^Scenario\s*:\s*(\S+)", text, re.M)
    scenario = scenario.group(1) if scenario else ""
    m = re.search(r"^(?:Completed tokens per second|Tokens per second)\s*:\s*([0-9.eE+]+)", text, re.M)
    if m:
        figures.append(_fig("output_tok_s", "mean", float(m.group(1)), summary.name + ": tokens per second"))
    for label, stat in (("Mean First Token latency", "mean"), ("50.00 percentile first token latency", "p50")):
        m = re.search(rf"^{re.escape(label)} \(ns\)\s*:\s*([0-9]+)", text, re.M)
        if m:
            figures.append(_fig("ttft_ms", stat, int(m.group(1)) / 1e6, f"{summary.name}: {label} (ns)"))
    if scenario == "Offline":
        absent.append("e2e_latency_ms")
    return figures, absent


def _llmperf(doc: dict) -> list:
    out = []
    if isinstance(doc.get("results_mean_output_throughput_token_per_s"), (int, float)):
        out.append(
            _fig(
                "output_tok_s",
                "mean",
                doc["results_mean_output_throughput_token_per_s"],
                "results_mean_output_throughput_token_per_s",
                doc.get("num_concurrent_requests"),
            )
        )
    if isinstance(doc.get("results_ttft_s_mean"), (int, float)):
        out.append(
            _fig(
                "ttft_ms",
                "mean",
                doc["results_ttft_s_mean"] * 1000,
                "results_ttft_s_mean x 1000",
                doc.get("num_concurrent_requests"),
            )
        )
    return out


def _serving(doc: dict) -> list:
    """vLLM benchmark_serving / SGLang bench_serving: their own throughput and TTFT."""
    out = []
    for key, metric, stat in (
        ("output_throughput", "output_tok_s", "mean"),
        ("median_ttft_ms", "ttft_ms", "p50"),
        ("mean_ttft_ms", "ttft_ms", "mean"),
    ):
        if isinstance(doc.get(key), (int, float)) and not isinstance(doc.get(key), bool):
            out.append(_fig(metric, stat, float(doc[key]), key))
    return out


def _aiperf(doc: dict) -> list:
    recs = doc.get("records") if isinstance(doc.get("records"), dict) else {}
    out = []
    for tag, metric in (("output_token_throughput", "output_tok_s"), ("request_throughput", "request_rate")):
        avg = (recs.get(tag) or {}).get("avg")
        if isinstance(avg, (int, float)):
            out.append(_fig(metric, "mean", avg, f"records.{tag}.avg"))
    return out


def _guidellm(doc: dict) -> list:
    """GuideLLM's own throughput of each benchmark (one concurrency or rate each)."""
    out = []
    for i, b in enumerate(doc.get("benchmarks") or []):
        ok = ((b.get("metrics") or {}).get("output_tokens_per_second") or {}).get("successful") or {}
        if isinstance(ok.get("mean"), (int, float)):
            out.append(
                _fig(
                    "output_tok_s",
                    "mean",
                    ok["mean"],
                    f"benchmarks[{i}].metrics.output_tokens_per_second.successful.mean",
                )
            )
    return out


def _inference_perf(doc: dict) -> list:
    tp = (doc.get("successes") or {}).get("throughput") or {}
    if isinstance(tp.get("output_tokens_per_sec"), (int, float)):
        return [_fig("output_tok_s", "mean", tp["output_tokens_per_sec"], "successes.throughput.output_tokens_per_sec")]
    return []


def _genai_bench(doc: dict) -> list:
    agg = doc.get("aggregated_metrics") or {}
    if isinstance(agg.get("mean_output_throughput_tokens_per_s"), (int, float)):
        return [
            _fig(
                "output_tok_s",
                "mean",
                agg["mean_output_throughput_tokens_per_s"],
                "aggregated_metrics.mean_output_throughput_tokens_per_s",
                agg.get("num_concurrency"),
            )
        ]
    return []


def own_figures(rel: str) -> tuple[list, list]:
    """(figures, absent metrics) the file states of itself, read apart from the importers."""
    path = WILD / rel
    if path.name == "mlperf_log_detail.txt" and "/performance/" in rel:
        return _mlperf(path)
    if path.suffix == ".jsonl" and rel.startswith("sglang/"):
        figs = []
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                figs += _serving(json.loads(line))
        return figs, []
    if path.suffix != ".json":
        return [], []
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return [], []
    if rel.startswith("llmperf/") and isinstance(doc, dict):
        if doc and all(isinstance(v, dict) and "results_ttft_s_mean" in v for v in doc.values()):
            return [f for v in doc.values() for f in _llmperf(v)], []  # a wrapper's summaries by concurrency
        return _llmperf(doc), []
    if rel.startswith("aiperf/") and isinstance(doc, dict):
        return _aiperf(doc), []
    if rel.startswith("guidellm/") and isinstance(doc, dict):
        return _guidellm(doc), []
    if rel.startswith("inference-perf/") and isinstance(doc, dict) and "stage_" in rel and "lifecycle" in rel:
        return _inference_perf(doc), []
    if rel.startswith("genai-bench/") and isinstance(doc, dict):
        return _genai_bench(doc), []
    if rel.startswith("vllm/") and isinstance(doc, dict) and "model_id" in doc:
        return _serving(doc), []
    return [], []


def analyse(out: Path) -> dict:
    """`benchreport analyse tests/wild --skip-bad` through the command line: the exit code and, per
    file, its outcome, reason and runs; per run, its seat and pass rows."""
    proc = subprocess.run(
        [sys.executable, "-m", "benchreport", "analyse", str(WILD), "--out", str(out), "--skip-bad", "--quiet"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    files: dict = {}
    for row in csv.DictReader(open(out / "provenance.csv", encoding="utf-8")):
        rel = Path(row["path"]).resolve().relative_to(WILD).as_posix()
        f = files.setdefault(rel, {"status": row["status"], "reason": row["reason"], "runs": []})
        if row["run_id"]:
            f["runs"].append(row["run_id"])
    passes = defaultdict(list)
    for row in csv.DictReader(open(out / "tables" / "passes.csv", encoding="utf-8")):
        passes[row["run_id"]].append(row)
    by_folder = defaultdict(list)  # a file read into a run of another file (a stage, a twin) is checked there
    for rel, f in files.items():
        by_folder[str(Path(rel).parent)].extend(f["runs"])
    for rel, f in files.items():
        f["folder_runs"] = by_folder[str(Path(rel).parent)]
    return {"returncode": proc.returncode, "stderr": proc.stderr, "files": files, "passes": passes}


def rows_of(got: dict, rel: str) -> list[dict]:
    """The pass rows of a file's runs; for a file read into the run of another file beside it (an
    inference-perf stage report, AIPerf's records), those of its folder's runs."""
    f = got["files"][rel]
    return [r for run in (f["runs"] or f["folder_runs"]) for r in got["passes"].get(run, [])]


def propose() -> list[dict]:
    """A ledger from today's outcome and the files' own figures (to review, not to trust)."""
    with tempfile.TemporaryDirectory() as tmp:
        got = analyse(Path(tmp) / "out")
    entries = []
    for line in csv.DictReader(open(WILD / "SOURCES.tsv", encoding="utf-8"), delimiter="\t"):
        rel = line["file"]
        f = got["files"].get(rel, {"status": "missing", "reason": "", "runs": []})
        e = {"file": rel, "harness": line["harness"], "hardware": line["hardware"], "outcome": f["status"]}
        if f["status"] == "read":
            seats = sorted({r["seat"] for r in rows_of(got, rel)})
            e.update(runs=len(f["runs"]), seats=seats)
            e["figures"], e["absent"] = own_figures(rel)
        else:
            e["reason"] = f["reason"][:80]
        entries.append(e)
    return entries


if __name__ == "__main__":
    LEDGER.write_text(json.dumps(propose(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {LEDGER.name}: review every changed line before committing it")
