#!/usr/bin/env bash
# Capture ray-project/llmperf fixtures into tests/fixtures/harness/llmperf/.
#
# Usage: scripts/capture/llmperf.sh [WORK_DIR]
# Environment: LLMPERF_SRC  a checkout (or git dir) of github.com/ray-project/llmperf;
#              the script uses commit $LLMPERF_COMMIT of it (git archive). llmperf is not
#              on PyPI (PyPI "llmperf" 0.0.1 is an unrelated project), so the source
#              must be provided; nothing of it is committed here.
#
# llmperf declares requires-python "<3.11" and pydantic<2.5; its code runs on 3.11 with
# pydantic 2.4.2. Its token_benchmark_ray.py is run from the source tree with
# PYTHONPATH=src, with the dependencies it imports at run time (ray, pandas, requests,
# transformers, boto3 for a module-level import of its SageMaker client). It loads
# LlamaTokenizerFast.from_pretrained("hf-internal-testing/llama-tokenizer"), a hub name;
# a folder of that relative name is created in the run folder holding the local test
# tokenizer, so transformers loads it from disk (no hub access, no code change).
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"

LLMPERF_COMMIT="f1d6bed47e4501b0e371082b41601b59ab55269f"
LLMPERF_DEPS=(ray==2.60.0 pydantic==2.4.2 pandas==3.1.1 requests==2.34.2 tqdm==4.70.1
              transformers==4.49.0 tokenizers==0.21.1 boto3==1.44.8 num2words==0.5.14)
P_REASON=8250; P_FAIL=8251
export RAY_AUTH_MODE=disabled          # no auth token written to the home folder
export RAY_USAGE_STATS_ENABLED=0

setup_server

log "llmperf: ray-project/llmperf @ $LLMPERF_COMMIT"
[ -n "${LLMPERF_SRC:-}" ] || { echo "set LLMPERF_SRC to a clone of ray-project/llmperf"; exit 1; }
if [ ! -f venv-llmperf/.done ]; then
    mkvenv llmperf "${LLMPERF_DEPS[@]}"
    touch venv-llmperf/.done
fi
rm -rf llmperf-src && mkdir llmperf-src
git -C "$LLMPERF_SRC" archive "$LLMPERF_COMMIT" | tar -x -C llmperf-src
mkdir -p llmperf-src/hf-internal-testing
cp -r tokenizer-bpe4k llmperf-src/hf-internal-testing/llama-tokenizer
rm -rf out/llmperf && mkdir -p out/llmperf

llmperf_run() {  # llmperf_run NAME PORT MODEL ARGS...
    local name="$1" port="$2" model="$3"; shift 3
    mkdir -p "out/llmperf/$name"
    (cd llmperf-src && OPENAI_API_BASE="http://127.0.0.1:$port/v1" OPENAI_API_KEY=dummy \
        HF_HUB_OFFLINE=1 PYTHONPATH=src timeout 300 ../venv-llmperf/bin/python token_benchmark_ray.py \
        --model "$model" --llm-api openai --timeout 120 \
        --additional-sampling-params '{"ignore_eos": true}' \
        --results-dir "../out/llmperf/$name" "$@") > "out/llmperf/$name/console.txt" 2>&1 \
        || { tail -40 "out/llmperf/$name/console.txt"; return 1; }
    grep -E '^(Number Of|Overall Output)' "out/llmperf/$name/console.txt" || true
}

# 1. chat against a server that streams ~40% of every second answer as reasoning_content;
#    concurrency 1 and 2, 12 requests each (separate folders: the file names do not
#    carry the concurrency)
start_server tiny_server.py "$P_REASON" --model-name tiny-gpt2-r1 --seed 3 --reasoning some
pid=$LAST_PID
for c in 1 2; do
    llmperf_run "reasoning-c$c" "$P_REASON" tiny-gpt2-r1 --num-concurrent-requests "$c" \
        --mean-input-tokens 64 --stddev-input-tokens 8 --mean-output-tokens 24 \
        --stddev-output-tokens 4 --max-num-completed-requests 12
done
stop_server "$pid"

# 2. failed requests: a server with a 96-token context; prompts of about 64 +- 16 tokens
#    (Llama-tokenizer counts done with the local tokenizer) plus the chat rendering
start_server tiny_server.py "$P_FAIL" --model-name tiny-gpt2-s1 --seed 1 --ctx 96
pid=$LAST_PID
llmperf_run failed-c2 "$P_FAIL" tiny-gpt2-s1 --num-concurrent-requests 2 \
    --mean-input-tokens 64 --stddev-input-tokens 16 --mean-output-tokens 24 \
    --stddev-output-tokens 4 --max-num-completed-requests 12
stop_server "$pid"

# expected.json: the tool's own figures, copied (not computed) from each *_summary.json
venv-server/bin/python - out/llmperf <<'PY'
import json, re, sys
from pathlib import Path
root = Path(sys.argv[1])
FIELDS = {"request_count": "results_num_requests_started",
          "completed": "results_num_completed_requests", "failed": "results_number_errors",
          "error_rate": "results_error_rate", "error_code_frequency": "results_error_code_frequency",
          "ttft_p50_s": "results_ttft_s_quantiles_p50", "ttft_mean_s": "results_ttft_s_mean",
          "itl_p50_s": "results_inter_token_latency_s_quantiles_p50",
          "itl_mean_s": "results_inter_token_latency_s_mean",
          "output_tok_s": "results_mean_output_throughput_token_per_s",
          "num_concurrent_requests": "num_concurrent_requests"}
results = []
for f in sorted(root.glob("*/*_summary.json")):
    d = json.loads(f.read_text())
    r = {"file": f.relative_to(root).as_posix()}
    for k, key in FIELDS.items():
        r[k] = {"value": d.get(key), "source": f"$.{key}"}
    con = (f.parent / "console.txt").read_text()
    m = re.search(r"^Overall Output Throughput: (\S+)", con, re.M)
    r["console_output_throughput"] = {"value": m.group(1) if m else None,
                                      "source": "console line 'Overall Output Throughput:'"}
    results.append(r)
doc = {"fixture_oracle": "not harness output: the harness's own figures for importer tests",
       "tool": "llmperf (ray-project/llmperf token_benchmark_ray.py)",
       "version": "git commit f1d6bed47e4501b0e371082b41601b59ab55269f",
       "units": "seconds for *_s; tokens/s for output_tok_s",
       "results": results}
(root / "expected.json").write_text(json.dumps(doc, indent=2) + "\n")
print("wrote expected.json with", len(results), "results")
PY
publish llmperf
