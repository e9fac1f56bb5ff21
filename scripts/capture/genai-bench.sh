#!/usr/bin/env bash
# Capture genai-bench fixtures into tests/fixtures/harness/genai-bench/.
#
# Usage: scripts/capture/genai-bench.sh [WORK_DIR]
#
# genai-bench 0.0.5 from PyPI (no torch needed: it only tokenises). Two experiment
# folders, each as genai-bench writes it, minus its PNG plots (about 0.7 MB per
# experiment; they carry no numbers that the JSON files do not).
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"

GENAI_BENCH="genai-bench==0.0.5"
GENAI_BENCH_DEPS=(click==8.5.1 datasets==5.2.0 gevent==26.9.0 httpx==0.28.1 locust==2.47.0
                  matplotlib==3.11.2 numpy==2.4.6 oci==2.189.0 openai==3.57.0 openpyxl==3.1.5
                  pandas==3.1.1 pydantic==2.14.4 requests==2.34.2 rich==15.0.0
                  tokenizers==0.23.3 transformers==5.24.0)
P_REASON=8230; P_FAIL=8231

setup_server

log "genai-bench: $GENAI_BENCH"
if [ ! -f venv-gb/.done ]; then
    mkvenv gb "$GENAI_BENCH" "${GENAI_BENCH_DEPS[@]}"
    touch venv-gb/.done
fi
rm -rf out/genai-bench gb-run && mkdir -p out/genai-bench gb-run

gb_run() {  # gb_run NAME PORT ARGS...
    local name="$1" port="$2"; shift 2
    mkdir -p "gb-run/$name-logs"
    (cd gb-run && HF_HUB_OFFLINE=1 ../venv-gb/bin/genai-bench benchmark \
        --api-backend vllm --api-key dummy --api-base "http://127.0.0.1:$port" \
        --task text-to-text --model-tokenizer ../tokenizer-bpe4k --server-engine vLLM \
        --max-time-per-run 1 --experiment-base-dir experiments \
        --experiment-folder-name "$name" --log-dir "$name-logs" "$@") \
        > "gb-run/$name.console.log" 2>&1 || { tail -40 "gb-run/$name.console.log"; return 1; }
    mkdir -p "out/genai-bench/$name"
    find "gb-run/experiments/$name" -maxdepth 1 -type f ! -name '*.png' -exec cp {} "out/genai-bench/$name/" \;
    cp "gb-run/$name-logs/genai_bench.log" "out/genai-bench/$name/genai_bench.log"
}

# 1. two traffic scenarios x concurrency 1 and 4, against a server that streams ~40% of
#    every second answer as reasoning_content; times in seconds (the default)
start_server tiny_server.py "$P_REASON" --model-name tiny-gpt2-r1 --seed 3 --reasoning some
pid=$LAST_PID
gb_run reasoning-2scenarios "$P_REASON" --api-model-name tiny-gpt2-r1 \
    --num-concurrency 1 --num-concurrency 4 \
    --traffic-scenario "D(32,24)" --traffic-scenario "U(24,40)/(16,32)" \
    --max-requests-per-run 12 --metrics-time-unit s
stop_server "$pid"

# 2. failed requests: a server with a 64-token context; prompts of 16-48 tokens (about 8
#    more after the server's chat rendering) and 24 output tokens; times in milliseconds
start_server tiny_server.py "$P_FAIL" --model-name tiny-gpt2-s1 --seed 1 --ctx 64
pid=$LAST_PID
gb_run failed-ms "$P_FAIL" --api-model-name tiny-gpt2-s1 \
    --num-concurrency 2 --traffic-scenario "U(16,48)/(24,24)" \
    --max-requests-per-run 12 --metrics-time-unit ms
stop_server "$pid"

# expected.json: the tool's own figures, copied (not computed) from each run file's
# aggregated_metrics, with the key path each came from
venv-server/bin/python - out/genai-bench <<'PY'
import json, sys
from pathlib import Path
root = Path(sys.argv[1])
def get(d, path):
    for k in path.split("."):
        if d is None:
            return None
        d = d.get(k)
    return d
FIELDS = {"scenario": "scenario", "num_concurrency": "num_concurrency",
          "request_count": "num_requests", "completed": "num_completed_requests",
          "failed": "num_error_requests", "error_rate": "error_rate",
          "error_codes_frequency": "error_codes_frequency",
          "ttft_p50": "stats.ttft.p50", "ttft_mean": "stats.ttft.mean",
          "tpot_p50": "stats.tpot.p50", "tpot_mean": "stats.tpot.mean",
          "output_tok_s": "mean_output_throughput_tokens_per_s",
          "run_duration_s": "run_duration",
          "output_tokens_total": "stats.num_output_tokens.sum",
          "reasoning_tokens_total": "stats.num_reasoning_tokens.sum"}
results = []
for f in sorted(root.glob("*/*.json")):
    if f.name == "experiment_metadata.json":
        continue
    d = json.loads(f.read_text())
    r = {"file": f.relative_to(root).as_posix(), "time_unit": {"value": d.get("_time_unit"), "source": "$._time_unit"}}
    for k, path in FIELDS.items():
        r[k] = {"value": get(d["aggregated_metrics"], path), "source": "$.aggregated_metrics." + path}
    r["itl_p50"] = r["itl_mean"] = {"value": None, "source": "genai-bench reports no ITL; TPOT is stats.tpot"}
    results.append(r)
doc = {"fixture_oracle": "not harness output: the harness's own figures for importer tests",
       "tool": "genai-bench", "version": "genai-bench==0.0.5 (PyPI)",
       "units": "ttft/tpot in the file's _time_unit (experiment_metadata.json metrics_time_unit): "
                "s in reasoning-2scenarios, ms in failed-ms; output_tok_s in tokens/s; run_duration in s",
       "results": results}
(root / "expected.json").write_text(json.dumps(doc, indent=2) + "\n")
print("wrote expected.json with", len(results), "results")
PY
publish genai-bench
