#!/usr/bin/env bash
# Capture MLPerf LoadGen fixtures into tests/fixtures/harness/mlperf-loadgen/.
#
# Usage: scripts/capture/mlperf-loadgen.sh [WORK_DIR]
#
# LoadGen is the real mlcommons-loadgen 6.0.17 wheel from PyPI. The system under test is
# our own scripts/capture/mlperf_sut.py: it sends each query sample (a list of prompt
# token ids) to tiny_server.py's streaming /v1/completions and reports the first token
# and the finished answer with its token count back to LoadGen (token latencies on).
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"

LOADGEN="mlcommons-loadgen==6.0.17"
LOADGEN_DEPS=(requests==2.34.2)
SUT="$REPO/scripts/capture/mlperf_sut.py"
PORT=8240

setup_server

log "mlperf loadgen: $LOADGEN"
if [ ! -f venv-loadgen/.done ]; then
    mkvenv loadgen "$LOADGEN" "${LOADGEN_DEPS[@]}"
    touch venv-loadgen/.done
fi
rm -rf out/mlperf-loadgen && mkdir -p out/mlperf-loadgen

lg_run() {  # lg_run NAME ARGS... ; LoadGen waits forever for a lost query, so time out and retry once
    local name="$1"; shift
    local try
    for try in 1 2; do
        rm -rf "out/mlperf-loadgen/$name" && mkdir -p "out/mlperf-loadgen/$name"
        if timeout 120 venv-loadgen/bin/python "$SUT" --url "http://127.0.0.1:$PORT" \
                --model tiny-gpt2-s1 --outdir "out/mlperf-loadgen/$name" "$@" \
                > "out/mlperf-loadgen/$name/stdout.txt" 2>&1; then
            grep -E '^(Scenario|Result is|Completed samples per second|Samples per second)' \
                "out/mlperf-loadgen/$name/stdout.txt" || true
            return 0
        fi
        echo "$name: attempt $try failed or timed out"; tail -5 "out/mlperf-loadgen/$name/stdout.txt"
    done
    return 1
}

start_server tiny_server.py "$PORT" --model-name tiny-gpt2-s1 --seed 1
pid=$LAST_PID
# Server: Poisson arrivals at 4 queries/s, 24 queries, TTFT bound 500 ms, TPOT 100 ms
lg_run server-qps4 --scenario Server --samples 24 --qps 4 --max-tokens 16 \
    --ttft-ms 500 --tpot-ms 100 --min-duration-ms 4000
# Offline: one query with every sample, expected 16 samples/s, at least 2 s
lg_run offline --scenario Offline --samples 24 --qps 16 --max-tokens 16 \
    --ttft-ms 500 --tpot-ms 100 --min-duration-ms 2000
stop_server "$pid"

# expected.json: LoadGen's own figures, copied (not computed) from the :::MLLOG lines
venv-server/bin/python - out/mlperf-loadgen <<'PY'
import json, sys
from pathlib import Path
root = Path(sys.argv[1])
KEYS = {"scenario": "effective_scenario", "result_validity": "result_validity",
        "request_count": "result_query_count",
        "generated_query_count": "generated_query_count",
        "generated_samples_per_query": "generated_samples_per_query",
        "loadgen_errors": "num_errors",
        "ttft_p50_ns": "result_first_token_50.00_percentile_latency_ns",
        "ttft_mean_ns": "result_first_token_mean_latency_ns",
        "tpot_p50_ns": "result_time_per_output_token_50.00_percentile_ns",
        "tpot_mean_ns": "result_time_to_output_token_mean",
        "latency_p50_ns": "result_50.00_percentile_latency_ns",
        "latency_p90_ns": "result_90.00_percentile_latency_ns",
        "latency_p99_ns": "result_99.00_percentile_latency_ns",
        "latency_mean_ns": "result_mean_latency_ns",
        "output_tok_s": "result_completed_tokens_per_second",
        "tokens_per_second": "result_tokens_per_second",
        "samples_per_second": "result_samples_per_second",
        "completed_samples_per_sec": "result_completed_samples_per_sec",
        "overlatency_query_count": "result_overlatency_query_count",
        "early_stopping_met": "early_stopping_met",
        "min_duration_met": "result_min_duration_met", "min_queries_met": "result_min_queries_met"}
results = []
for d in sorted(p for p in root.iterdir() if p.is_dir()):
    found = {}
    for line in (d / "mlperf_log_detail.txt").read_text().splitlines():
        if line.startswith(":::MLLOG "):
            rec = json.loads(line[len(":::MLLOG "):])
            found.setdefault(rec["key"], rec["value"])
    r = {"file": f"{d.name}/mlperf_log_detail.txt"}
    for k, key in KEYS.items():
        r[k] = ({"value": found[key], "source": f':::MLLOG "key": "{key}"'} if key in found
                else {"value": None, "source": f'no :::MLLOG "{key}" line in this scenario'})
    r["failed"] = {"value": None, "source": "LoadGen has no failed-request count: a SUT must "
                   "complete every sample (num_errors counts LoadGen's own error log lines)"}
    r["itl_p50_ns"] = r["itl_mean_ns"] = {"value": None,
        "source": "LoadGen reports no ITL; TPOT (time per output token) is the nearest"}
    results.append(r)
doc = {"fixture_oracle": "not harness output: the harness's own figures for importer tests",
       "tool": "MLPerf Inference LoadGen", "version": "mlcommons-loadgen==6.0.17 (PyPI)",
       "units": "ns for *_ns; tokens/s and samples/s for throughputs",
       "results": results}
(root / "expected.json").write_text(json.dumps(doc, indent=2) + "\n")
print("wrote expected.json with", len(results), "results")
PY
publish mlperf-loadgen
