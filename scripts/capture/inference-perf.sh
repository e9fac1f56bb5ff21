#!/usr/bin/env bash
# Capture kubernetes-sigs inference-perf fixtures into tests/fixtures/harness/inference-perf/.
#
# Usage: scripts/capture/inference-perf.sh [WORK_DIR]
#
# inference-perf 0.7.0 (PyPI) declares Requires-Python >=3.12; its code runs on the
# 3.11 here. So its dependencies are installed first at pinned versions that support
# 3.11, then the package itself with --no-deps --ignore-requires-python.
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"

IPERF="inference-perf==0.7.0"
IPERF_DEPS=(aiohttp==3.14.5 pydantic==2.14.4 numpy==2.4.6 datasets==5.0.1 transformers==5.13.0
            tokenizers==0.22.2 jinja2==3.1.6 google-cloud-storage==3.17.1 pyyaml==6.0.4
            boto3==1.44.8 uvloop==0.23.0 tqdm==4.70.1 aiofiles==25.1.0 tiktoken==0.14.0
            rich==15.0.0 av==18.1.0 pillow==13.0.0 prometheus-client==0.26.0)
P_MAIN=8220; P_FAIL=8221; P_REASON=8222

setup_server

log "inference-perf: $IPERF"
if [ ! -f venv-iperf/.done ]; then
    mkvenv iperf "${IPERF_DEPS[@]}"
    venv-iperf/bin/pip install -q --no-deps --ignore-requires-python "$IPERF" >> pip-iperf.log 2>&1
    touch venv-iperf/.done
fi
rm -rf out/inference-perf iperf-run && mkdir -p out/inference-perf/console iperf-run

# 1. shared-prefix prompts (2 groups with a 32-token system prompt each), two concurrent
#    stages (1 then 4), against a server that reports cached prompt tokens (16-token
#    blocks). The shared_prefix generator always sends /v1/completions, whatever api.type.
cat > iperf-run/completion-cached-two-stages.yaml <<'YAML'
load:
  type: concurrent
  interval: 1
  stages:
    - num_requests: 8
      concurrency_level: 1
    - num_requests: 12
      concurrency_level: 4
  num_workers: 1
api:
  type: completion
  streaming: true
server:
  type: vllm
  model_name: tiny-gpt2-s1
  base_url: http://127.0.0.1:8220
  ignore_eos: true
tokenizer:
  pretrained_model_name_or_path: ../tokenizer-bpe4k
data:
  type: shared_prefix
  shared_prefix:
    num_groups: 2
    num_prompts_per_group: 10
    system_prompt_len: 32
    question_len: 16
    output_len: 24
    seed: 1
report:
  request_lifecycle:
    summary: true
    per_stage: true
    per_request: true
    per_request_fields:
      computed_metrics: true
  prometheus:
    summary: false
    per_stage: false
storage:
  local_storage:
    path: reports-completion-cached-two-stages
YAML

# 2. failed requests: completions against a server with a 64-token context; prompts of
#    24-56 tokens and 24 output tokens, so the longer ones get HTTP 400
cat > iperf-run/completion-failed.yaml <<'YAML'
load:
  type: concurrent
  stages:
    - num_requests: 12
      concurrency_level: 2
  num_workers: 1
api:
  type: completion
  streaming: true
server:
  type: vllm
  model_name: tiny-gpt2-s1
  base_url: http://127.0.0.1:8221
  ignore_eos: true
tokenizer:
  pretrained_model_name_or_path: ../tokenizer-bpe4k
data:
  type: random
  input_distribution:
    min: 24
    max: 56
    mean: 40
    std_dev: 10
  output_distribution:
    min: 24
    max: 24
    mean: 24
    std_dev: 0
report:
  request_lifecycle:
    summary: true
    per_stage: true
    per_request: true
    per_request_fields:
      computed_metrics: true
  prometheus:
    summary: false
    per_stage: false
storage:
  local_storage:
    path: reports-completion-failed
YAML

# 3. reasoning: chat, streaming, the "mock" generator (the only synthetic one that speaks
#    chat), against a server that streams ~40% of every second answer as reasoning_content
cat > iperf-run/chat-reasoning.yaml <<'YAML'
load:
  type: concurrent
  stages:
    - num_requests: 10
      concurrency_level: 2
  num_workers: 1
api:
  type: chat
  streaming: true
server:
  type: vllm
  model_name: tiny-gpt2-r1
  base_url: http://127.0.0.1:8222
  ignore_eos: true
tokenizer:
  pretrained_model_name_or_path: ../tokenizer-bpe4k
data:
  type: mock
report:
  request_lifecycle:
    summary: true
    per_stage: true
    per_request: true
    per_request_fields:
      computed_metrics: true
  prometheus:
    summary: false
    per_stage: false
storage:
  local_storage:
    path: reports-chat-reasoning
YAML

iperf_run() {  # iperf_run NAME
    (cd iperf-run && HF_HUB_OFFLINE=1 ../venv-iperf/bin/inference-perf -c "$1.yaml") \
        > "out/inference-perf/console/$1.log" 2>&1 || { tail -40 "out/inference-perf/console/$1.log"; return 1; }
    cp -r "iperf-run/reports-$1" out/inference-perf/
    cp "iperf-run/$1.yaml" "out/inference-perf/console/$1.config.yaml"
}

start_server tiny_server_cached.py "$P_MAIN" --model-name tiny-gpt2-s1 --seed 1 \
    --reasoning some --report-cached 16
pid=$LAST_PID
iperf_run completion-cached-two-stages
stop_server "$pid"

start_server tiny_server.py "$P_REASON" --model-name tiny-gpt2-r1 --seed 3 --reasoning some
pid=$LAST_PID
iperf_run chat-reasoning
stop_server "$pid"

start_server tiny_server.py "$P_FAIL" --model-name tiny-gpt2-s1 --seed 1 --ctx 64
pid=$LAST_PID
iperf_run completion-failed
stop_server "$pid"

# expected.json: the tool's own figures, copied (not computed) from every summary and
# stage report, with the JSON key path each came from
venv-server/bin/python - out/inference-perf <<'PY'
import json, sys
from pathlib import Path
root = Path(sys.argv[1])
def get(d, path):
    for k in path.split("."):
        if d is None:
            return None
        d = d.get(k)
    return d
FIELDS = {"request_count": "load_summary.count", "completed": "successes.count",
          "failed": "failures.count",
          "ttft_p50_s": "successes.latency.time_to_first_token.median",
          "ttft_mean_s": "successes.latency.time_to_first_token.mean",
          "itl_p50_s": "successes.latency.inter_token_latency.median",
          "itl_mean_s": "successes.latency.inter_token_latency.mean",
          "output_tok_s": "successes.throughput.output_tokens_per_sec",
          "benchmark_time_s": "benchmark_time_seconds",
          "output_tokens_total": "successes.output_tokens.total",
          "prompt_tokens_total": "successes.prompt_tokens.total",
          "prompt_tokens_cached": "successes.prompt_tokens.cached"}
results = []
for f in sorted(root.glob("reports-*/*_lifecycle_metrics.json")):
    if f.name.startswith("per_request"):
        continue
    d = json.loads(f.read_text())
    r = {"file": f.relative_to(root).as_posix()}
    for k, path in FIELDS.items():
        r[k] = {"value": get(d, path), "source": "$." + path}
    results.append(r)
doc = {"fixture_oracle": "not harness output: the harness's own figures for importer tests",
       "tool": "inference-perf", "version": "inference-perf==0.7.0 (PyPI)",
       "units": "seconds for *_s latencies, tokens/s for output_tok_s",
       "results": results}
(root / "expected.json").write_text(json.dumps(doc, indent=2) + "\n")
print("wrote expected.json with", len(results), "results")
PY
publish inference-perf
