#!/usr/bin/env bash
# Re-capture the real harness output fixtures under tests/fixtures/harness/.
#
# Usage: scripts/capture_fixtures.sh [WORK_DIR]
#   WORK_DIR  throwaway folder for venvs, tokenizer, server logs and raw outputs
#             (default: a new mktemp -d folder). Re-using a WORK_DIR re-uses its venvs.
#
# Environment:
#   HARNESS_CAPTURE_DIR  folder holding tiny_server.py and build_tokenizer.py
#                        (default: ../shared/tools/harness-capture next to the repo)
#   STAGES               which stages to run, in order (default: all of them)
#                        "setup vllm guidellm guidellm_reasoning aiperf lmeval
#                         aiperf_sweep aiperf_failures aiperf_export aiperf_versions
#                         genai_perf vllm_old guidellm_versions vllm_bench"
#                        (every stage after setup needs setup's tokenizer and server venv)
#   PYTHON               interpreter used to create the venvs (default: python3)
#
# Everything talks to 127.0.0.1 only: a tiny, randomly initialised GPT-2-style model
# served by tiny_server.py on the CPU. Nothing is downloaded from a model hub; packages
# come from PyPI through pip. Each harness gets its own venv with pinned versions.
# The only files written inside the repository are the harness folders under
# tests/fixtures/harness/ (each replaced wholesale by the stage that writes it), their
# expected.json (scripts/harness_expected.py: the harness's own figures) and the inputs
# under tests/fixtures/harness-inputs/. The genai_perf stage installs the Debian package
# libb64-0d when run as root; vllm_bench installs vllm with its CUDA dependencies (~10 GB).
set -euo pipefail

# the prologue (REPO, WORK, SHARED, PYTHON, FIX, the server pins, HF_HOME, cd "$WORK") and the
# helpers (cleanup, log, mkvenv, start/stop_server, scrub, publish, setup_server) are shared
# with the per-tool scripts under scripts/capture/
source "$(dirname "${BASH_SOURCE[0]}")/capture/_common.sh"
STAGES="${STAGES:-setup vllm guidellm guidellm_reasoning aiperf lmeval aiperf_sweep aiperf_failures aiperf_export aiperf_versions genai_perf vllm_old guidellm_versions vllm_bench}"

# ---- pinned versions -------------------------------------------------------------
VLLM_VERSION="0.7.3"                       # last release whose benchmark_serving.py
                                           # runs without importing vllm itself
VLLM_CLIENT_PKGS=(numpy==2.4.6 pandas==3.1.1 aiohttp==3.14.5 datasets==5.0.1
                  pillow==13.0.0 tqdm==4.70.1 transformers==4.49.0 tokenizers==0.21.1
                  huggingface_hub==0.36.2)
VLLM_SDIST_BUILD_PKGS=(setuptools==84.2.1 setuptools_scm==10.3.4 wheel==0.48.0
                       packaging==26.4 jinja2==3.1.6)
VLLM_OLD_VERSION="0.6.4.post1"   # 0.6.6.post1 calls get_tokenizer(tokenizer_mode=) that its own
                                 # fallback lacks without vllm; 0.6.3 has no --max-concurrency
VLLM_FAIL_SEED=27
VLLM_BENCH="vllm==0.33.0"                  # current release: vllm bench serve
GUIDELLM="guidellm==0.8.1"
GUIDELLM_OLD_VERSIONS=(0.3.1 0.4.0 0.5.4 0.6.1 0.7.4)
AIPERF="aiperf==0.13.0"
LMEVAL="lm_eval[api]==0.4.13"
AIPERF_OLD_VERSIONS=(0.1.1 0.6.0 0.9.0 0.12.0)   # earliest, middle and last before 0.13
GENAI_PERF="genai-perf==0.0.16"
GENAI_PERF_EXTRA=(pandas==2.2.3 nvidia-cuda-runtime-cu12==12.4.127)
GENAI_PERF_TRITON="tritonclient==2.49.0"   # its wheel ships the perf_analyzer binary
LMEVAL_EXTRA=(transformers==5.24.0)

# ---- capture sizes ---------------------------------------------------------------
VLLM_NUM_PROMPTS=12
GUIDELLM_REQUESTS=12
AIPERF_C1_REQUESTS=12
AIPERF_C4_REQUESTS=16
AIPERF_SWEEP_CONCURRENCY=1,2,4,8
AIPERF_SWEEP_REQUESTS=10


# ---- stage: setup ----------------------------------------------------------------
stage_setup() {
    setup_server
}

# ---- stage: vLLM benchmark_serving.py (release 0.7.3) ------------------------------
stage_vllm() {
    log "vllm: benchmarks/benchmark_serving.py from vllm==$VLLM_VERSION"
    mkvenv vllm "$TORCH" "${VLLM_SDIST_BUILD_PKGS[@]}"
    mkvenv vllm "$TORCH" "${VLLM_SDIST_BUILD_PKGS[@]}" "${VLLM_CLIENT_PKGS[@]}"
    local src="vllm-src/vllm-$VLLM_VERSION"
    if [ ! -f "$src/benchmarks/benchmark_serving.py" ]; then
        mkdir -p vllm-src
        local sdist="vllm-src/vllm-$VLLM_VERSION.tar.gz"
        if [ ! -f "$sdist" ]; then
            # The sdist's metadata step needs VLLM_TARGET_DEVICE=empty (no CUDA), which
            # gives it the version "X+empty"; pip then refuses it as inconsistent with
            # the index's "X". So take the sdist's address from pip's own message and
            # download it as a direct reference, which skips that check.
            local url
            url="$(VLLM_TARGET_DEVICE=empty venv-vllm/bin/pip download "vllm==$VLLM_VERSION" \
                    --no-deps --no-binary :all: --no-build-isolation -d vllm-src 2>&1 \
                  | grep -o "https://[^ ]*/vllm-$VLLM_VERSION\.tar\.gz" | head -1 || true)"
            if [ ! -f "$sdist" ]; then
                [ -n "$url" ] || { echo "could not locate the vllm sdist"; return 1; }
                VLLM_TARGET_DEVICE=empty venv-vllm/bin/pip download "vllm @ $url" \
                    --no-deps --no-build-isolation -d vllm-src > pip-vllm-sdist.log 2>&1
            fi
        fi
        tar -xzf "$sdist" -C vllm-src "vllm-$VLLM_VERSION/benchmarks"
    fi
    start_server tiny_server.py 8000 --model-name tiny-gpt2-s1 --seed 1
    local pid=$LAST_PID
    rm -rf out/vllm
    local pass c
    for pass in 1 2; do
        for c in 1 4; do
            mkdir -p "out/vllm/pass$pass"
            # --save-detailed does not exist in 0.7.3: per-request lists are always saved
            HF_HUB_OFFLINE=1 venv-vllm/bin/python "$src/benchmarks/benchmark_serving.py" \
                --backend vllm --base-url http://127.0.0.1:8000 --endpoint /v1/completions \
                --model tiny-gpt2-s1 --tokenizer ./tokenizer-bpe4k \
                --dataset-name random --random-input-len 48 --random-output-len 32 \
                --random-range-ratio 0.5 --num-prompts "$VLLM_NUM_PROMPTS" \
                --max-concurrency "$c" --ignore-eos --seed 1 \
                --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,90,95,99 \
                --save-result --result-dir "out/vllm/pass$pass" \
                > "vllm-pass$pass-c$c.log" 2>&1 || { tail -40 "vllm-pass$pass-c$c.log"; return 1; }
            grep -A4 '^Successful requests' "vllm-pass$pass-c$c.log" || true
            sleep 1   # result file names carry a per-second timestamp
        done
    done
    stop_server "$pid"
    publish vllm
}

# ---- stage: GuideLLM ---------------------------------------------------------------
stage_guidellm() {
    log "guidellm: $GUIDELLM"
    mkvenv guidellm "$TORCH"
    mkvenv guidellm "$TORCH" "$GUIDELLM"
    start_server tiny_server_cached.py 8002 --model-name tiny-gpt2-s1 --seed 1 \
        --reasoning some --report-cached 16
    local pid=$LAST_PID
    rm -rf out/guidellm
    local pass outs
    for pass in 1 2; do
        mkdir -p "out/guidellm/pass$pass"
        if [ "$pass" = 1 ]; then   # every output format, to test skipping the twins
            outs=(--output "kind=json,path=out/guidellm/pass1/benchmarks.json"
                  --output "kind=yaml,path=out/guidellm/pass1/benchmarks.yaml"
                  --output "kind=csv,path=out/guidellm/pass1/benchmarks.csv"
                  --output "kind=html,path=out/guidellm/pass1/benchmarks.html")
        else                        # GuideLLM's default output set: json + csv
            outs=(--output "kind=json,path=out/guidellm/pass2/benchmarks.json"
                  --output "kind=csv,path=out/guidellm/pass2/benchmarks.csv")
        fi
        HF_HUB_OFFLINE=1 venv-guidellm/bin/guidellm run \
            --backend kind=openai_http,target=http://127.0.0.1:8002,model=tiny-gpt2-s1,request_format=/v1/chat/completions \
            --profile kind=concurrent --override profile.streams 1,4 \
            --data kind=synthetic_text,prompt_tokens=32,prompt_tokens_stdev=4,prompt_tokens_min=24,prompt_tokens_max=40,output_tokens=24,prefix_tokens=16,prefix_count=1 \
            --tokenizer kind=hf_auto,model=./tokenizer-bpe4k \
            --constraint "kind=max_requests,count=$GUIDELLM_REQUESTS" \
            "${outs[@]}" --disable-console-interactive \
            > "guidellm-pass$pass.log" 2>&1 || { tail -40 "guidellm-pass$pass.log"; return 1; }
        grep -A12 'Request Latency Statistics' "guidellm-pass$pass.log" || true
    done
    stop_server "$pid"
    local f
    for f in out/guidellm/*/benchmarks.html; do   # keep the HTML twin only while small
        if [ "$(stat -c %s "$f")" -gt 307200 ]; then echo "dropping large $f"; rm -f "$f"; fi
    done
    publish guidellm
}

# ---- stage: GuideLLM against a server that answers only in a "reasoning" field --------
# The fleet paper's third trap: the build returns its reasoning in a field named
# "reasoning", the token budget is spent on it, and the content field stays empty.
stage_guidellm_reasoning() {
    log "guidellm (reasoning-only answers): $GUIDELLM"
    mkvenv guidellm "$TORCH"
    mkvenv guidellm "$TORCH" "$GUIDELLM"
    start_server tiny_server_cached.py 8003 --model-name tiny-gpt2-r1 --seed 3 \
        --reasoning all --reasoning-field reasoning --reasoning-frac 1.0
    local pid=$LAST_PID
    rm -rf out/guidellm-reasoning
    mkdir -p out/guidellm-reasoning
    HF_HUB_OFFLINE=1 venv-guidellm/bin/guidellm run \
        --backend kind=openai_http,target=http://127.0.0.1:8003,model=tiny-gpt2-r1,request_format=/v1/chat/completions \
        --profile kind=concurrent --override profile.streams 2 \
        --data kind=synthetic_text,prompt_tokens=32,prompt_tokens_stdev=4,prompt_tokens_min=24,prompt_tokens_max=40,output_tokens=24 \
        --tokenizer kind=hf_auto,model=./tokenizer-bpe4k \
        --constraint "kind=max_requests,count=$GUIDELLM_REQUESTS" \
        --output "kind=json,path=out/guidellm-reasoning/benchmarks.json" --disable-console-interactive \
        > guidellm-reasoning.log 2>&1 || { tail -40 guidellm-reasoning.log; return 1; }
    stop_server "$pid"
    publish guidellm-reasoning
}

# ---- stage: NVIDIA AIPerf ----------------------------------------------------------
stage_aiperf() {
    log "aiperf: $AIPERF"
    mkvenv aiperf "$AIPERF"
    start_server tiny_server_cached.py 8002 --model-name tiny-gpt2-s1 --seed 1 \
        --reasoning some --report-cached 16
    local pid=$LAST_PID
    rm -rf out/aiperf
    mkdir -p out/aiperf
    local c n runs warm
    for c in 1 4; do
        if [ "$c" = 1 ]; then n=$AIPERF_C1_REQUESTS; runs=3; warm=3
        else n=$AIPERF_C4_REQUESTS; runs=1; warm=4; fi
        # tokenizer given as ./DIR with HF_HUB_OFFLINE unset, as AIPerf wants it;
        # TMPDIR inside the work folder so its logged mmap paths get scrubbed too
        mkdir -p "$WORK/tmpdir"
        TMPDIR="$WORK/tmpdir" venv-aiperf/bin/aiperf profile --model tiny-gpt2-s1 --url http://127.0.0.1:8002 \
            --endpoint-type chat --streaming --tokenizer ./tokenizer-bpe4k \
            --concurrency "$c" --request-count "$n" --warmup-request-count "$warm" \
            --num-profile-runs "$runs" \
            --synthetic-input-tokens-mean 32 --synthetic-input-tokens-stddev 4 \
            --output-tokens-mean 24 --output-tokens-stddev 0 --extra-inputs ignore_eos:true \
            --prefix-prompt-length 16 --num-prefix-prompts 1 --random-seed 1 \
            --artifact-dir "out/aiperf/c$c" --ui-type none --no-server-metrics \
            > "aiperf-c$c.log" 2>&1 || { tail -40 "aiperf-c$c.log"; return 1; }
        tail -5 "aiperf-c$c.log"
    done
    stop_server "$pid"
    local f   # trim only large logs
    while IFS= read -r f; do
        echo "trimming large log $f"; tail -c 20000 "$f" > "$f.tmp" && mv "$f.tmp" "$f"
    done < <(find out/aiperf -name '*.log' -size +100k)
    publish aiperf
}

# ---- helpers for the stages below (issue 12 fixtures) ---------------------------------
aiperf_run() {  # aiperf_run VENV LOGNAME ARGS... : one aiperf profile, TMPDIR in the work folder
    local venv="$1" name="$2"; shift 2
    mkdir -p "$WORK/tmpdir"
    TMPDIR="$WORK/tmpdir" "venv-$venv/bin/aiperf" profile "$@" > "$name.log" 2>&1 \
        || { tail -40 "$name.log"; return 1; }
    tail -3 "$name.log"
}

trim_logs() {  # trim_logs DIR : tail-trim any log larger than 100 KB to its last 20 KB
    local f
    while IFS= read -r f; do
        echo "trimming large log $f"; tail -c 20000 "$f" > "$f.tmp" && mv "$f.tmp" "$f"
    done < <(find "$1" -name '*.log' -size +100k)
}

make_mixed_prompts() {  # make_mixed_prompts OUT N LONG_POSITIONS : single_turn JSONL
    # Deterministic prompts: short ones (~30 tokens) and long ones (~700 tokens, past
    # the 256-token context the failure stages give the server), long at the listed
    # 0-based positions (comma-separated).
    venv-server/bin/python - "$@" <<'PY'
import json, random, sys
out, n, longs = sys.argv[1], int(sys.argv[2]), {int(x) for x in sys.argv[3].split(",") if x}
words = ("the model serves tokens fast while a cache keeps every block of the prompt "
         "and the scheduler steps each request in turn until it stops").split()
rng = random.Random(12)
with open(out, "w") as f:
    for i in range(n):
        k = 600 if i in longs else 24
        f.write(json.dumps({"text": " ".join(rng.choice(words) for _ in range(k))}) + "\n")
PY
}

expected() {  # expected KIND FOLDER TOOL VERSION [ARGS...] : FOLDER/expected.json, the tool's own figures
    local kind="$1" folder="$2" tool="$3" version="$4"; shift 4
    venv-server/bin/python "$REPO/scripts/harness_expected.py" "$kind" "$FIX/$folder" \
        --tool "$tool" --version "$version" "$@"
}

publish_inputs() {  # publish_inputs NAME FILE... : harness inputs, kept outside harness/
    local name="$1"; shift
    rm -rf "${FIX:?}/../harness-inputs/$name"
    mkdir -p "$FIX/../harness-inputs/$name"
    cp "$@" "$FIX/../harness-inputs/$name/"
}

# ---- stage: AIPerf 0.13 concurrency sweep x 3 trials -------------------------------------
stage_aiperf_sweep() {
    log "aiperf sweep: $AIPERF, concurrency $AIPERF_SWEEP_CONCURRENCY x 3 trials"
    mkvenv aiperf "$AIPERF"
    start_server tiny_server.py 8110 --model-name tiny-gpt2-s1 --seed 1
    local pid=$LAST_PID
    rm -rf out/aiperf-sweep
    # a comma-separated --concurrency is AIPerf's own sweep: one invocation writes
    # profile_runs/trial_000T/concurrency_C/, aggregate/concurrency_C/ and
    # aggregate/sweep_aggregate/
    aiperf_run aiperf aiperf-sweep --model tiny-gpt2-s1 --url http://127.0.0.1:8110 \
        --endpoint-type chat --streaming --tokenizer ./tokenizer-bpe4k \
        --concurrency "$AIPERF_SWEEP_CONCURRENCY" --request-count "$AIPERF_SWEEP_REQUESTS" \
        --warmup-request-count 2 --num-profile-runs 3 \
        --synthetic-input-tokens-mean 32 --synthetic-input-tokens-stddev 4 \
        --output-tokens-mean 16 --output-tokens-stddev 0 --extra-inputs ignore_eos:true \
        --random-seed 1 --artifact-dir out/aiperf-sweep --ui-type none --no-server-metrics
    stop_server "$pid"
    trim_logs out/aiperf-sweep
    publish aiperf-sweep
    expected aiperf aiperf-sweep aiperf "${AIPERF#aiperf==}"
}

# ---- stage: AIPerf 0.13 runs with failed requests -----------------------------------------
# The server gets a 256-token context, so prompts of ~700 tokens are answered HTTP 400.
# A single_turn input file sampled sequentially decides which requests fail: AIPerf
# draws warm-up and profiling conversations from one shared sampler, so the first
# entries go to the warm-up phase.
stage_aiperf_failures() {
    log "aiperf failed requests: $AIPERF"
    mkvenv aiperf "$AIPERF"
    make_mixed_prompts aiperf_warmup_failed.jsonl 13 0,1,2
    make_mixed_prompts aiperf_errors.jsonl 24 0,1,3,4,6,7,9,10,12,14,16,18,20,22
    start_server tiny_server.py 8111 --model-name tiny-gpt2-s1 --seed 1 --ctx 256
    local pid=$LAST_PID
    rm -rf out/aiperf-warmup-failed out/aiperf-errors
    # warm-up: 3 requests, all too long (HTTP 400); profiling: the next 10, all short
    aiperf_run aiperf aiperf-warmup-failed --model tiny-gpt2-s1 --url http://127.0.0.1:8111 \
        --endpoint-type chat --streaming --tokenizer ./tokenizer-bpe4k \
        --input-file aiperf_warmup_failed.jsonl --custom-dataset-type single_turn \
        --dataset-sampling-strategy sequential \
        --concurrency 2 --warmup-request-count 3 --request-count 10 \
        --output-tokens-mean 16 --output-tokens-stddev 0 --extra-inputs ignore_eos:true \
        --random-seed 1 --artifact-dir out/aiperf-warmup-failed --ui-type none --no-server-metrics
    # 24 requests, 14 of them too long (HTTP 400), no warm-up
    aiperf_run aiperf aiperf-errors --model tiny-gpt2-s1 --url http://127.0.0.1:8111 \
        --endpoint-type chat --streaming --tokenizer ./tokenizer-bpe4k \
        --input-file aiperf_errors.jsonl --custom-dataset-type single_turn \
        --dataset-sampling-strategy sequential \
        --concurrency 2 --request-count 24 \
        --output-tokens-mean 16 --output-tokens-stddev 0 --extra-inputs ignore_eos:true \
        --random-seed 1 --artifact-dir out/aiperf-errors --ui-type none --no-server-metrics
    stop_server "$pid"
    trim_logs out/aiperf-warmup-failed
    trim_logs out/aiperf-errors
    publish aiperf-warmup-failed
    publish aiperf-errors
    expected aiperf aiperf-warmup-failed aiperf "${AIPERF#aiperf==}"
    expected aiperf aiperf-errors aiperf "${AIPERF#aiperf==}"
    publish_inputs aiperf-failures aiperf_warmup_failed.jsonl aiperf_errors.jsonl
}

# ---- stage: AIPerf 0.13 export options -----------------------------------------------------
stage_aiperf_export() {
    log "aiperf export options: $AIPERF"
    mkvenv aiperf "$AIPERF"
    start_server tiny_server.py 8112 --model-name tiny-gpt2-s1 --seed 1
    local pid=$LAST_PID
    rm -rf out/aiperf-export
    local common=(--model tiny-gpt2-s1 --url http://127.0.0.1:8112 --endpoint-type chat
                  --streaming --tokenizer ./tokenizer-bpe4k --concurrency 2 --request-count 8
                  --synthetic-input-tokens-mean 32 --synthetic-input-tokens-stddev 4
                  --output-tokens-mean 16 --output-tokens-stddev 0
                  --extra-inputs ignore_eos:true --random-seed 1 --ui-type none
                  --no-server-metrics)
    aiperf_run aiperf aiperf-export-summary "${common[@]}" --export-level summary \
        --artifact-dir out/aiperf-export/summary
    aiperf_run aiperf aiperf-export-prefix "${common[@]}" --profile-export-prefix tinybench \
        --artifact-dir out/aiperf-export/prefix
    stop_server "$pid"
    trim_logs out/aiperf-export
    publish aiperf-export
    expected aiperf aiperf-export aiperf "${AIPERF#aiperf==}"
}

# ---- stage: older AIPerf releases ------------------------------------------------------
# One small run per release, the same flags in each (all of them exist since 0.1.1):
# concurrency 2, 8 requests, 2 warm-up requests. Each release gets its own venv.
stage_aiperf_versions() {
    log "aiperf older releases: ${AIPERF_OLD_VERSIONS[*]}"
    start_server tiny_server.py 8120 --model-name tiny-gpt2-s1 --seed 1
    local pid=$LAST_PID v
    rm -rf out/aiperf-versions
    for v in "${AIPERF_OLD_VERSIONS[@]}"; do
        mkvenv "aiperf-$v" "aiperf==$v"
        aiperf_run "aiperf-$v" "aiperf-$v" --model tiny-gpt2-s1 --url http://127.0.0.1:8120 \
            --endpoint-type chat --streaming --tokenizer ./tokenizer-bpe4k \
            --concurrency 2 --request-count 8 --warmup-request-count 2 \
            --synthetic-input-tokens-mean 32 --synthetic-input-tokens-stddev 4 \
            --output-tokens-mean 16 --output-tokens-stddev 0 --extra-inputs ignore_eos:true \
            --random-seed 1 --artifact-dir "out/aiperf-versions/$v" --ui-type none
    done
    stop_server "$pid"
    trim_logs out/aiperf-versions
    publish aiperf-versions
    for v in "${AIPERF_OLD_VERSIONS[@]}"; do
        expected aiperf "aiperf-versions/$v" aiperf "$v"
    done
}

# ---- stage: GenAI-Perf ---------------------------------------------------------------------
# GenAI-Perf drives the perf_analyzer C++ binary. The perf_analyzer package on PyPI is a
# placeholder; the binary ships inside the tritonclient manylinux wheel up to 2.5x.
# 2.55's needs glibc 2.38 (Debian 12 has 2.36); 2.49's runs with libb64 (Debian
# libb64-0d) and libcudart.so.12 (the nvidia-cuda-runtime-cu12 wheel; no GPU is used).
# perf_analyzer 2.49 has no --warmup-request-count, so this run has no warm-up.
stage_genai_perf() {
    log "genai-perf: $GENAI_PERF with $GENAI_PERF_TRITON"
    if ! dpkg-query -W -f='${Status}' libb64-0d 2>/dev/null | grep -q 'install ok installed'; then
        if [ "$(id -u)" = 0 ]; then
            apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libb64-0d >/dev/null
        else
            echo "perf_analyzer needs libb64: sudo apt-get install libb64-0d"; return 1
        fi
    fi
    mkvenv genai-perf "$GENAI_PERF" "${GENAI_PERF_EXTRA[@]}"
    venv-genai-perf/bin/pip install -q --no-deps --force-reinstall "$GENAI_PERF_TRITON" \
        > pip-genai-perf-triton.log 2>&1 || { tail -20 pip-genai-perf-triton.log; return 1; }
    local cudart
    cudart="$(dirname "$(find "$WORK/venv-genai-perf" -name 'libcudart.so.12' | head -1)")"
    start_server tiny_server.py 8121 --model-name tiny-gpt2-s1 --seed 1
    local pid=$LAST_PID
    rm -rf out/genai-perf
    LD_LIBRARY_PATH="$cudart" PATH="$WORK/venv-genai-perf/bin:$PATH" \
        venv-genai-perf/bin/genai-perf profile -m tiny-gpt2-s1 --endpoint-type chat --streaming \
        -u 127.0.0.1:8121 --tokenizer ./tokenizer-bpe4k --concurrency 2 --request-count 8 \
        --synthetic-input-tokens-mean 32 --synthetic-input-tokens-stddev 4 \
        --output-tokens-mean 16 --output-tokens-stddev 0 --extra-inputs ignore_eos:true \
        --random-seed 1 --artifact-dir out/genai-perf > genai-perf.log 2>&1 \
        || { tail -40 genai-perf.log; return 1; }
    stop_server "$pid"
    publish genai-perf
    expected aiperf genai-perf genai-perf "${GENAI_PERF#genai-perf==}"
}

# ---- stage: vLLM benchmark_serving.py from an older release (0.6.x) ------------------------
vllm_benchmarks_src() {  # vllm_benchmarks_src VERSION : unpack benchmarks/ of the vllm sdist
    local v="$1" src="vllm-src/vllm-$1"
    [ -f "$src/benchmarks/benchmark_serving.py" ] && return 0
    mkdir -p vllm-src
    local sdist="vllm-src/vllm-$v.tar.gz" url
    if [ ! -f "$sdist" ]; then   # see stage_vllm: the direct reference skips pip's version check
        url="$(VLLM_TARGET_DEVICE=empty venv-vllm/bin/pip download "vllm==$v" \
                --no-deps --no-binary :all: --no-build-isolation -d vllm-src 2>&1 \
              | grep -o "https://[^ ]*/vllm-$v\.tar\.gz" | head -1 || true)"
        if [ ! -f "$sdist" ]; then
            [ -n "$url" ] || { echo "could not locate the vllm $v sdist"; return 1; }
            VLLM_TARGET_DEVICE=empty venv-vllm/bin/pip download "vllm @ $url" \
                --no-deps --no-build-isolation -d vllm-src > "pip-vllm-sdist-$v.log" 2>&1
        fi
    fi
    tar -xzf "$sdist" -C vllm-src "vllm-$v/benchmarks"
}

stage_vllm_old() {
    log "vllm: benchmarks/benchmark_serving.py from vllm==$VLLM_OLD_VERSION"
    mkvenv vllm "$TORCH" "${VLLM_SDIST_BUILD_PKGS[@]}"
    mkvenv vllm "$TORCH" "${VLLM_SDIST_BUILD_PKGS[@]}" "${VLLM_CLIENT_PKGS[@]}"
    vllm_benchmarks_src "$VLLM_OLD_VERSION"
    local bs="vllm-src/vllm-$VLLM_OLD_VERSION/benchmarks/benchmark_serving.py"
    start_server tiny_server.py 8140 --model-name tiny-gpt2-s1 --seed 1
    local pid=$LAST_PID
    start_server tiny_server.py 8141 --model-name tiny-gpt2-s1 --seed 1 --ctx 256
    local pid_short=$LAST_PID
    rm -rf out/vllm-0.6
    local c common=(--backend vllm --endpoint /v1/completions --model tiny-gpt2-s1
                    --tokenizer ./tokenizer-bpe4k --dataset-name random --ignore-eos
                    --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,90,95,99
                    --save-result)
    mkdir -p out/vllm-0.6/ok out/vllm-0.6/failed
    for c in 1 4; do
        HF_HUB_OFFLINE=1 venv-vllm/bin/python "$bs" "${common[@]}" --base-url http://127.0.0.1:8140 \
            --random-input-len 48 --random-output-len 32 --random-range-ratio 0.5 \
            --num-prompts "$VLLM_NUM_PROMPTS" --max-concurrency "$c" --seed 1 \
            --result-dir out/vllm-0.6/ok > "vllm-old-c$c.log" 2>&1 \
            || { tail -40 "vllm-old-c$c.log"; return 1; }
        grep -A4 '^Successful requests' "vllm-old-c$c.log" || true
        sleep 1   # result file names carry a per-second timestamp
    done
    # prompts of 100-400 tokens against a 256-token context: the longer ones are answered
    # HTTP 400. The script's initial test request uses the first prompt and aborts if it
    # fails; with seed 27 the first prompt is short (119 tokens).
    HF_HUB_OFFLINE=1 venv-vllm/bin/python "$bs" "${common[@]}" --base-url http://127.0.0.1:8141 \
        --random-input-len 400 --random-output-len 16 --random-range-ratio 0.25 \
        --num-prompts "$VLLM_NUM_PROMPTS" --max-concurrency 2 --seed "$VLLM_FAIL_SEED" \
        --result-dir out/vllm-0.6/failed > vllm-old-failed.log 2>&1 \
        || { tail -40 vllm-old-failed.log; return 1; }
    grep -A4 '^Successful requests' vllm-old-failed.log || true
    stop_server "$pid"
    stop_server "$pid_short"
    publish vllm-0.6
    expected vllm vllm-0.6 vllm "$VLLM_OLD_VERSION" \
        --console "ok/*concurrency1*=vllm-old-c1.log" --console "ok/*concurrency4*=vllm-old-c4.log" \
        --console "failed=vllm-old-failed.log"
}

# ---- stage: older GuideLLM releases ---------------------------------------------------------
# One small run per release (concurrency 2, 8 chat requests, a shared 32-token prefix)
# against the patched server with reasoning and cached-token reporting, so each release's
# report shows whether it records cached prompt tokens and reasoning at all. Their JSON
# layouts differ (see the fixtures README).
stage_guidellm_versions() {
    log "guidellm older releases: ${GUIDELLM_OLD_VERSIONS[*]}"
    start_server tiny_server_cached.py 8130 --model-name tiny-gpt2-s1 --seed 1 \
        --reasoning some --report-cached 16
    local pid=$LAST_PID v out extra
    rm -rf out/guidellm-versions
    for v in "${GUIDELLM_OLD_VERSIONS[@]}"; do
        extra=()
        [ "$v" = 0.4.0 ] && extra=(transformers==4.57.6)   # 0.4.0 imports a name transformers 5 dropped
        mkvenv "guidellm-$v" "$TORCH"
        mkvenv "guidellm-$v" "$TORCH" "guidellm==$v" "${extra[@]}"
        out="out/guidellm-versions/$v"
        mkdir -p "$out"
        if [ "$v" = 0.3.1 ]; then   # 0.3: --rate-type/--output-path; the chat route by setting
            COLUMNS=200 HF_HUB_OFFLINE=1 GUIDELLM__PREFERRED_ROUTE=chat_completions \
            "venv-guidellm-$v/bin/guidellm" benchmark run --target http://127.0.0.1:8130 \
                --model tiny-gpt2-s1 --processor ./tokenizer-bpe4k \
                --data "prompt_tokens=32,output_tokens=16,prefix_tokens=32" \
                --rate-type concurrent --rate 2 --max-requests 8 --random-seed 1 \
                --output-path "$out/benchmarks.json" --disable-progress \
                > "guidellm-$v.log" 2>&1 || { tail -40 "guidellm-$v.log"; return 1; }
        elif [ "${v%.*}" = 0.7 ]; then   # 0.7 has the 0.8 CLI: guidellm run, kind=... specs;
            # its synthetic_text takes prefixes only as a prefix_buckets list, so none here
            COLUMNS=200 HF_HUB_OFFLINE=1 "venv-guidellm-$v/bin/guidellm" run \
                --backend kind=openai_http,target=http://127.0.0.1:8130,model=tiny-gpt2-s1,request_format=/v1/chat/completions \
                --profile kind=concurrent --override profile.streams 2 \
                --data kind=synthetic_text,prompt_tokens=32,output_tokens=16 \
                --tokenizer kind=hf_auto,model=./tokenizer-bpe4k \
                --constraint kind=max_requests,count=8 \
                --output "kind=json,path=$out/benchmarks.json" --disable-console-interactive \
                > "guidellm-$v.log" 2>&1 || { tail -40 "guidellm-$v.log"; return 1; }
        else
            COLUMNS=200 HF_HUB_OFFLINE=1 "venv-guidellm-$v/bin/guidellm" benchmark run \
                --target http://127.0.0.1:8130 --model tiny-gpt2-s1 --processor ./tokenizer-bpe4k \
                --request-type chat_completions \
                --data "prompt_tokens=32,output_tokens=16,prefix_tokens=32,prefix_count=1" \
                --profile concurrent --rate 2 --max-requests 8 --random-seed 1 \
                --output-dir "$out" --outputs benchmarks.json --disable-console-interactive \
                > "guidellm-$v.log" 2>&1 || { tail -40 "guidellm-$v.log"; return 1; }
        fi
    done
    stop_server "$pid"
    publish guidellm-versions
    for v in "${GUIDELLM_OLD_VERSIONS[@]}"; do
        expected guidellm "guidellm-versions/$v" guidellm "$v" --console "console=guidellm-$v.log"
    done
}

# ---- stage: current vLLM client, `vllm bench serve` -------------------------------------------
# The full vllm wheel with its own dependencies (CUDA torch, about 10 GB installed); the
# benchmark client itself runs on the CPU and needs no GPU.
stage_vllm_bench() {
    log "vllm bench serve: $VLLM_BENCH"
    mkvenv vllm-bench "$VLLM_BENCH"
    start_server tiny_server.py 8150 --model-name tiny-gpt2-s1 --seed 1
    local pid=$LAST_PID
    start_server tiny_server.py 8151 --model-name tiny-gpt2-s1 --seed 1 --ctx 256
    local pid_short=$LAST_PID
    rm -rf out/vllm-bench-serve
    local c i common=(--backend vllm --endpoint /v1/completions --model tiny-gpt2-s1
                      --tokenizer ./tokenizer-bpe4k --dataset-name random --ignore-eos
                      --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,90,95,99)
    vb() {  # vb LOG ARGS... : one vllm bench serve run
        local name="$1"; shift
        HF_HUB_OFFLINE=1 venv-vllm-bench/bin/vllm bench serve "${common[@]}" "$@" > "$name.log" 2>&1 \
            || { tail -40 "$name.log"; return 1; }
        grep -A2 '^Successful requests' "$name.log" || true
        sleep 1   # result file names carry a per-second timestamp
    }
    # per-request lists kept (--save-detailed), concurrency 1 and 4
    for c in 1 4; do
        vb "vllm-bench-detailed-c$c" --base-url http://127.0.0.1:8150 --random-input-len 48 \
            --random-output-len 32 --random-range-ratio 0.5 --num-prompts "$VLLM_NUM_PROMPTS" \
            --max-concurrency "$c" --seed 1 --save-result --save-detailed \
            --result-dir out/vllm-bench-serve/detailed
    done
    # the default result file: summary only
    vb vllm-bench-summary-c2 --base-url http://127.0.0.1:8150 --random-input-len 48 \
        --random-output-len 32 --random-range-ratio 0.5 --num-prompts "$VLLM_NUM_PROMPTS" \
        --max-concurrency 2 --seed 1 --save-result --result-dir out/vllm-bench-serve/summary
    # --append-result: three runs appended as lines of one file
    for c in 1 2 4; do
        vb "vllm-bench-append-c$c" --base-url http://127.0.0.1:8150 --random-input-len 48 \
            --random-output-len 32 --random-range-ratio 0.5 --num-prompts 8 \
            --max-concurrency "$c" --seed 1 --append-result \
            --result-dir out/vllm-bench-serve/append --result-filename appended.json \
            --label "append-c$c"
    done
    # prompts of 100-400 tokens against a 256-token context; the ready check (a test
    # request with the first prompt, retried until it succeeds) is turned off
    vb vllm-bench-failed --base-url http://127.0.0.1:8151 --random-input-len 250 \
        --random-output-len 16 --random-range-ratio 0.6 --num-prompts "$VLLM_NUM_PROMPTS" \
        --max-concurrency 2 --seed 1 --ready-check-timeout-sec 0 --save-result --save-detailed \
        --result-dir out/vllm-bench-serve/failed
    stop_server "$pid"
    stop_server "$pid_short"
    publish vllm-bench-serve
    local cons=() f
    for f in vllm-bench-*.log; do cons+=(--console "${f%.log}=$f"); done
    expected vllm vllm-bench-serve vllm "${VLLM_BENCH#vllm==}" "${cons[@]}"
}

# ---- stage: lm-evaluation-harness --------------------------------------------------
stage_lmeval() {
    log "lm-eval: $LMEVAL"
    mkvenv lmeval "$TORCH"
    mkvenv lmeval "$TORCH" "$LMEVAL" "${LMEVAL_EXTRA[@]}"
    rm -rf lmeval_tasks out/lmeval
    mkdir -p lmeval_tasks
    # Two local tasks, data generated deterministically: a 2-way multiple-choice
    # addition task (loglikelihood; a random model scores about 50%, so both verdicts
    # occur) and a short generate_until task with exact_match.
    venv-server/bin/python - <<'PY'
import json, random
rng = random.Random(7)
rows, seen = [], set()
while len(rows) < 32:
    a, b = rng.randint(2, 49), rng.randint(2, 49)
    if (a, b) in seen:
        continue
    seen.add((a, b))
    c = a + b
    wrong = c + rng.choice([-3, -2, -1, 1, 2, 3, 10, -10])
    opts = [str(c), str(wrong)]
    rng.shuffle(opts)
    rows.append({"id": f"add-{len(rows):02d}", "question": f"What is {a} + {b}?",
                 "choices": opts, "label": opts.index(str(c))})
with open("lmeval_tasks/arith2_mc.jsonl", "w") as f:
    for r in rows:
        f.write(json.dumps(r) + "\n")
rng = random.Random(11)
with open("lmeval_tasks/arith_gen.jsonl", "w") as f:
    for i in range(20):
        a, b = rng.randint(2, 49), rng.randint(2, 49)
        f.write(json.dumps({"id": f"gen-{i:02d}", "question": f"What is {a} + {b}?",
                            "answer": str(a + b)}) + "\n")
PY
    cat > lmeval_tasks/arith2_mc.yaml <<'EOF'
task: arith2_mc
dataset_path: json
dataset_name: null
dataset_kwargs:
  data_files:
    test: lmeval_tasks/arith2_mc.jsonl
test_split: test
output_type: multiple_choice
doc_to_text: "Question: {{question}}\nAnswer:"
doc_to_choice: "{{choices}}"
doc_to_target: label
target_delimiter: " "
metric_list:
  - metric: acc
    aggregation: mean
    higher_is_better: true
  - metric: acc_norm
    aggregation: mean
    higher_is_better: true
metadata:
  version: 1.0
EOF
    cat > lmeval_tasks/arith_gen.yaml <<'EOF'
task: arith_gen
dataset_path: json
dataset_name: null
dataset_kwargs:
  data_files:
    test: lmeval_tasks/arith_gen.jsonl
test_split: test
output_type: generate_until
doc_to_text: "Question: {{question}}\nAnswer:"
doc_to_target: "{{answer}}"
target_delimiter: " "
generation_kwargs:
  until:
    - "\n"
  max_gen_toks: 8
  do_sample: false
  temperature: 0.0
filter_list:
  - name: strip
    filter:
      - function: regex
        regex_pattern: "(-?[0-9]+)"
      - function: take_first
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
metadata:
  version: 1.0
EOF
    start_server tiny_server.py 8000 --model-name tiny-gpt2-s1 --seed 1
    local pid1=$LAST_PID
    start_server tiny_server.py 8001 --model-name tiny-gpt2-s2 --seed 2
    local pid2=$LAST_PID
    local seat port
    for seat in s1 s2; do
        if [ "$seat" = s1 ]; then port=8000; else port=8001; fi
        HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 venv-lmeval/bin/lm_eval \
            --model local-completions \
            --model_args "model=tiny-gpt2-$seat,base_url=http://127.0.0.1:$port/v1/completions,tokenizer=./tokenizer-bpe4k,tokenizer_backend=huggingface,tokenized_requests=False,num_concurrent=1,max_retries=1" \
            --include_path ./lmeval_tasks --tasks arith2_mc,arith_gen \
            --log_samples --output_path "out/lmeval/$seat" --seed 1234 \
            > "lmeval-$seat.log" 2>&1 || { tail -40 "lmeval-$seat.log"; return 1; }
        grep -A6 '^|  Tasks' "lmeval-$seat.log" || true
    done
    stop_server "$pid1"
    stop_server "$pid2"
    publish lmeval
    # the task definitions are inputs to lm-eval, not its output: kept apart from the
    # harness folders, which must hold only what the harnesses wrote
    rm -rf "${FIX:?}/../harness-inputs/lmeval-tasks"
    mkdir -p "$FIX/../harness-inputs/lmeval-tasks"
    cp lmeval_tasks/* "$FIX/../harness-inputs/lmeval-tasks/"
}

for s in $STAGES; do
    "stage_$s"
done
log "done; fixtures in $FIX"
# Proof that no path of this machine is left: the work folder, the repository, $HOME and
# the temp folder, in the harness folders and their inputs. Exits 1 if any is found.
TMP_PREFIX="$(cd "${TMPDIR:-/tmp}" && pwd -P)/"
MACHINE_PATHS=("$WORK" "$(cd "$WORK" && pwd -P)" "$REPO" "$TMP_PREFIX")
if [ -n "${HOME:-}" ] && [ "$HOME" != / ]; then MACHINE_PATHS+=("${HOME%/}/"); fi
GREP_ARGS=()
for p in "${MACHINE_PATHS[@]}"; do GREP_ARGS+=(-e "$p"); done
if grep -rlF "${GREP_ARGS[@]}" "$FIX" "$FIX/../harness-inputs"; then
    echo "ERROR: machine paths left in the fixtures listed above"; exit 1
fi
echo "no machine path in $FIX or harness-inputs (checked: ${MACHINE_PATHS[*]})"
