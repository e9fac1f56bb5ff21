#!/usr/bin/env python3
"""Write a fixture folder's expected.json: the harness's OWN summary figures.

Usage: harness_expected.py KIND FOLDER --tool NAME --version V [--console FILE ...]

KIND is aiperf (AIPerf and GenAI-Perf summary exports), guidellm or vllm. Every figure is
copied from a file the harness wrote, at a JSON path that is recorded beside it ("from");
nothing is computed, converted or rounded. A figure the harness did not write is null,
with the reason. The unit is the one the harness wrote beside the value, or the one its
key names (vLLM's "_ms" keys, GuideLLM's "_ms" metric names), said as such.

Console files given with --console (the harness's printed summary, kept outside the
fixture) add the printed lines for the figures the harness prints, as a second source.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

MISSING = object()


def get(doc, path: str):
    """Value at a "$.a.b[0].c" path, or MISSING."""
    cur = doc
    for part in re.findall(r"\.([^.\[\]]+)|\[(\d+)\]", path[1:]):
        key, idx = part
        if key:
            if not isinstance(cur, dict) or key not in cur:
                return MISSING
            cur = cur[key]
        else:
            i = int(idx)
            if not isinstance(cur, list) or i >= len(cur):
                return MISSING
            cur = cur[i]
    return cur


def pick(doc, candidates, base="$"):
    """First candidate (value_path, unit_path_or_literal) present under base."""
    for value_path, unit in candidates:
        full = base + value_path[1:]
        v = get(doc, full)
        if v is MISSING:
            continue
        if unit is None:
            u = None
        elif unit.startswith("$"):
            u = get(doc, base + unit[1:])
            u = None if u is MISSING else u
        else:
            u = unit
        return {"value": v, "unit": u, "from": full}
    return None


def figure(doc, candidates, base="$", absent="not in this file"):
    found = pick(doc, candidates, base)
    return found if found else {"value": None, "unit": None, "from": None, "note": absent}


# ---- AIPerf / GenAI-Perf -----------------------------------------------------------------
#: AIPerf 0.1.x nests the metrics under "records", keyed by tag ("ttft", "ttst")
_AIPERF_01_TAGS = {"time_to_first_token": "ttft", "time_to_second_token": "ttst"}


def _aiperf_metric(name, stat):
    # AIPerf and GenAI-Perf write {"unit": ..., "avg": ..., "p50": ...} per metric
    old = _AIPERF_01_TAGS.get(name, name)
    return [(f"$.{name}.{stat}", f"$.{name}.unit"), (f"$.records.{old}.{stat}", f"$.records.{old}.unit")]


def aiperf_summary(doc):
    fig = {}
    fig["request_count"] = figure(doc, _aiperf_metric("request_count", "avg"), absent="no request_count in this export")
    errs = pick(doc, _aiperf_metric("error_request_count", "avg"))
    if errs is None and get(doc, "$.error_summary") == []:
        errs = {
            "value": 0,
            "unit": None,
            "from": "$.error_summary",
            "note": "no error_request_count written; error_summary is an empty list",
        }
    fig["failed_count"] = errs or {
        "value": None,
        "unit": None,
        "from": None,
        "note": "this version writes no error count",
    }
    fig["ttft_p50"] = figure(doc, _aiperf_metric("time_to_first_token", "p50"))
    fig["ttft_mean"] = figure(doc, _aiperf_metric("time_to_first_token", "avg"))
    fig["itl_p50"] = figure(doc, _aiperf_metric("inter_token_latency", "p50"))
    fig["itl_mean"] = figure(doc, _aiperf_metric("inter_token_latency", "avg"))
    fig["output_token_throughput"] = figure(doc, _aiperf_metric("output_token_throughput", "avg"))
    return fig


def aiperf_aggregate(doc):
    """aggregate/.../profile_export_aiperf_aggregate.json: mean across trials of each stat."""
    fig = {}
    for key, metric in (
        ("request_count", "request_count_avg"),
        ("failed_count", "error_request_count_avg"),
        ("ttft_p50", "time_to_first_token_p50"),
        ("ttft_mean", "time_to_first_token_avg"),
        ("itl_p50", "inter_token_latency_p50"),
        ("itl_mean", "inter_token_latency_avg"),
        ("output_token_throughput", "output_token_throughput_avg"),
    ):
        fig[key + "_across_trials_mean"] = figure(
            doc, [(f"$.metrics.{metric}.mean", f"$.metrics.{metric}.unit")], absent=f"no {metric} in this aggregate"
        )
    return fig


def aiperf_sweep(doc):
    out = []
    for i, combo in enumerate(doc.get("per_combination_metrics", [])):
        base = f"$.per_combination_metrics[{i}]"
        fig = {}
        for key, metric in (
            ("request_count", "request_count_avg"),
            ("ttft_p50", "time_to_first_token_p50"),
            ("ttft_mean", "time_to_first_token_avg"),
            ("itl_p50", "inter_token_latency_p50"),
            ("itl_mean", "inter_token_latency_avg"),
            ("output_token_throughput", "output_token_throughput_avg"),
        ):
            fig[key + "_across_trials_mean"] = figure(
                doc, [(f"$.metrics.{metric}.mean", f"$.metrics.{metric}.unit")], base=base
            )
        out.append({"entry": base, "parameters": combo.get("parameters"), "figures": fig})
    return out


def aiperf_files(folder: Path):
    results, aggregates = [], []
    for p in sorted(folder.rglob("*.json")):
        if p.name in ("expected.json", "inputs.json", "run_config.json", "phase_manifest.json") or p.name.startswith(
            "."
        ):
            continue
        try:
            doc = json.loads(p.read_text())
        except ValueError:
            continue
        if not isinstance(doc, dict):
            continue
        rel = p.relative_to(folder).as_posix()
        agg_type = get(doc, "$.metadata.aggregation_type")
        if doc.get("aggregation_type") == "sweep":
            aggregates.append(
                {
                    "file": rel,
                    "kind": "sweep aggregate (per concurrency, across trials)",
                    "combinations": aiperf_sweep(doc),
                }
            )
        elif agg_type is not MISSING:
            aggregates.append(
                {
                    "file": rel,
                    "kind": f"{agg_type} aggregate across trials",
                    "variation": get(doc, "$.metadata.variation_values")
                    if get(doc, "$.metadata.variation_values") is not MISSING
                    else None,
                    "figures": aiperf_aggregate(doc),
                }
            )
        elif any(
            k in doc
            for k in (
                "time_to_first_token",
                "request_count",
                "error_request_count",
                "request_latency",
                "error_summary",
                "records",
            )
        ):
            phase = (
                "warmup"
                if "/phases/warmup/" in f"/{rel}"
                else ("profiling (phase copy)" if "/phases/profiling/" in f"/{rel}" else "profiling")
            )
            results.append({"file": rel, "phase": phase, "figures": aiperf_summary(doc)})
    return results, aggregates


# ---- GuideLLM -----------------------------------------------------------------------------
def _gl_metric(name, stat, unit):
    """GuideLLM 0.4+ nests per status (successful/errored/total); 0.3 has flat distributions."""
    paths = [
        (f"$.metrics.{name}.successful.{stat}", unit),
        (f"$.metrics.{name}.total.{stat}", unit),
        (f"$.metrics.{name}.{stat}", unit),
    ]
    return paths


def guidellm_benchmark(doc, base):
    fig = {}
    fig["request_count"] = figure(
        doc,
        [
            ("$.metrics.request_totals.successful", "requests"),
            ("$.request_totals.successful", "requests"),
            ("$.run_stats.requests_made.successful", "requests"),
            ("$.request_count", "requests"),
            ("$.completed_request_count", "requests"),
        ],
        base,
    )
    fig["failed_count"] = figure(
        doc,
        [
            ("$.metrics.request_totals.errored", "requests"),
            ("$.request_totals.errored", "requests"),
            ("$.run_stats.requests_made.errored", "requests"),
            ("$.error_count", "requests"),
            ("$.errored_request_count", "requests"),
        ],
        base,
    )
    fig["incomplete_count"] = figure(
        doc,
        [
            ("$.metrics.request_totals.incomplete", "requests"),
            ("$.request_totals.incomplete", "requests"),
            ("$.run_stats.requests_made.incomplete", "requests"),
        ],
        base,
    )
    ms = "ms (in the metric name)"
    for key, metric, stat in (
        ("ttft_p50", "time_to_first_token_ms", "median"),
        ("ttft_mean", "time_to_first_token_ms", "mean"),
        ("itl_p50", "inter_token_latency_ms", "median"),
        ("itl_mean", "inter_token_latency_ms", "mean"),
    ):
        fig[key] = figure(doc, _gl_metric(metric, stat, ms), base)
    fig["output_token_throughput"] = figure(
        doc, _gl_metric("output_tokens_per_second", "mean", "tokens/s (in the metric name)"), base
    )
    return fig


def guidellm_files(folder: Path):
    results = []
    for p in sorted(folder.rglob("*.json")):
        if p.name == "expected.json":
            continue
        doc = json.loads(p.read_text())
        rel = p.relative_to(folder).as_posix()
        benches = doc.get("benchmarks") if isinstance(doc, dict) else None
        if not isinstance(benches, list):
            continue
        for i, _b in enumerate(benches):
            base = f"$.benchmarks[{i}]"
            strat = None
            for sp in (".config.strategy", ".args.strategy", ".worker.strategy", ".strategy"):
                s = get(doc, base + sp)
                if s is not MISSING:
                    strat = {"from": base + sp, "value": s}
                    break
            results.append({"file": rel, "entry": base, "strategy": strat, "figures": guidellm_benchmark(doc, base)})
    return results, []


# ---- vLLM benchmark_serving.py / vllm bench serve ------------------------------------------
def vllm_doc(doc, base="$"):
    ms = "ms (in the key name)"
    fig = {}
    fig["request_count"] = figure(doc, [("$.completed", "requests")], base)
    fig["failed_count"] = figure(
        doc,
        [("$.failed", "requests")],
        base,
        absent="this version writes no failed count in its JSON (see num_prompts and completed)",
    )
    fig["num_prompts"] = figure(doc, [("$.num_prompts", "requests")], base)
    fig["ttft_p50"] = figure(doc, [("$.median_ttft_ms", ms), ("$.p50_ttft_ms", ms)], base)
    fig["ttft_mean"] = figure(doc, [("$.mean_ttft_ms", ms)], base)
    fig["itl_p50"] = figure(doc, [("$.median_itl_ms", ms), ("$.p50_itl_ms", ms)], base)
    fig["itl_mean"] = figure(doc, [("$.mean_itl_ms", ms)], base)
    fig["output_token_throughput"] = figure(doc, [("$.output_throughput", "tok/s")], base)
    return fig


def vllm_files(folder: Path):
    results = []
    for p in sorted(list(folder.rglob("*.json")) + list(folder.rglob("*.jsonl"))):
        if p.name == "expected.json":
            continue
        rel = p.relative_to(folder).as_posix()
        text = p.read_text()
        try:
            docs = [("$", json.loads(text))]
        except ValueError:  # --append-result: one JSON object per line
            docs = [(f"line {n}", json.loads(line)) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
        for where, doc in docs:
            entry = {"file": rel, "figures": vllm_doc(doc)}
            if where != "$":
                entry["line"] = int(where.split()[1])
            entry["max_concurrency"] = doc.get("max_concurrency")
            results.append(entry)
    return results, []


CONSOLE_PATTERNS = {
    "vllm": [
        r"^Successful requests:.*$",
        r"^Failed requests:.*$",
        r"^Benchmark duration.*$",
        r"^Output token throughput.*$",
        r"^Mean TTFT.*$",
        r"^Median TTFT.*$",
        r"^Mean ITL.*$",
        r"^Median ITL.*$",
    ],
    "aiperf": [
        r"^.*(Time to First Token|Inter Token Latency|Output Token Throughput|Request Count"
        r"|Error Request Count).*$"
    ],
    # GuideLLM prints its summary as tables: keep the table rows and section titles
    "guidellm": [
        r"^\s*\|.*\|\s*$",
        r"^.*\|.*\|.*$",
        r"^\S*\s*(Benchmarks? \w+|Request Latency|Server Throughput|Run Summary).*$",
    ],
}


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["aiperf", "guidellm", "vllm"])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--tool", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument(
        "--console", action="append", default=[], help="LABEL=FILE: a console log whose summary lines are quoted"
    )
    ap.add_argument("--note", default=None)
    a = ap.parse_args(argv)
    results, aggregates = {"aiperf": aiperf_files, "guidellm": guidellm_files, "vllm": vllm_files}[a.kind](a.folder)
    out = {
        # the loader skips a file with this key (a test oracle, not harness output)
        "fixture_oracle": "not harness output: the harness's own figures for importer tests",
        "tool": a.tool,
        "version": a.version,
        "how": (
            "every figure copied from the file and JSON path given in 'from', as the harness "
            "wrote it (not computed, converted or rounded); null where the harness wrote none"
        ),
        "results": results,
    }
    if aggregates:
        out["aggregates"] = aggregates
    if a.note:
        out["note"] = a.note
    consoles = {}
    for spec in a.console:
        label, _, fname = spec.partition("=")
        lines = Path(fname).read_text(errors="replace").splitlines()
        pats = [re.compile(p) for p in CONSOLE_PATTERNS[a.kind]]
        consoles[label] = [ln.rstrip() for ln in lines if any(p.match(ln) for p in pats)]
    if consoles:
        out["console"] = consoles
    (a.folder / "expected.json").write_text(json.dumps(out, indent=2) + "\n")
    print(f"{a.folder}/expected.json: {len(results)} results, {len(aggregates)} aggregates")
    return 0


if __name__ == "__main__":
    sys.exit(main())
