#!/usr/bin/env bash
# Capture SGLang bench_serving fixtures into tests/fixtures/harness/sglang/.
#
# Usage: scripts/capture/sglang.sh [WORK_DIR]
#
# The real benchmark client, sglang/bench_serving.py, is taken unchanged from the
# sglang==0.5.10.post1 wheel on PyPI (the newest release there). The full sglang package
# needs CUDA, but bench_serving only imports sglang.benchmark.* and
# sglang.srt.utils.network; so only those files are extracted, and the three package
# __init__ files above them (sglang, sglang.srt, sglang.srt.utils) are replaced with
# empty stubs: the real ones import the engine (torch, triton, kernels), which
# bench_serving never calls. The client runs in a venv with its light dependencies at
# the versions pinned below (transformers as pinned by that wheel).
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"

SGLANG_VERSION="0.5.10.post1"
SGLANG_CLIENT_PKGS=(transformers==5.3.0 tokenizers==0.22.2 huggingface_hub==1.33.0
                    aiohttp==3.14.5 numpy==2.4.6 requests==2.34.2 tqdm==4.70.1
                    pybase64==1.5.1 pillow==13.0.0 datasets==5.0.1 psutil==7.2.2
                    pyzmq==27.3.0)
NUM_PROMPTS=12
P_OK=8210; P_FAIL=8211; P_REASON=8212

setup_server

log "sglang: bench_serving.py from sglang==$SGLANG_VERSION"
if [ ! -f venv-sglang/.done ]; then
    mkvenv sglang "${SGLANG_CLIENT_PKGS[@]}"
    touch venv-sglang/.done
fi
if [ ! -f sglang-src/sglang/bench_serving.py ]; then
    mkdir -p sglang-whl
    venv-sglang/bin/pip download -q --no-deps "sglang==$SGLANG_VERSION" -d sglang-whl \
        > pip-sglang-wheel.log 2>&1 || { tail -20 pip-sglang-wheel.log; exit 1; }
    rm -rf sglang-src && mkdir sglang-src
    venv-sglang/bin/python - "sglang-whl/sglang-$SGLANG_VERSION-py3-none-any.whl" sglang-src <<'PY'
import sys, zipfile
whl, dest = sys.argv[1:3]
with zipfile.ZipFile(whl) as z:
    names = [n for n in z.namelist()
             if n == "sglang/bench_serving.py" or n.startswith("sglang/benchmark/")
             or n == "sglang/srt/utils/network.py"]
    z.extractall(dest, names)
    print(f"extracted {len(names)} files from {whl}")
for pkg in ("sglang", "sglang/srt", "sglang/srt/utils"):
    with open(f"{dest}/{pkg}/__init__.py", "w") as f:
        f.write("# stub: the real __init__ imports the serving engine (torch/CUDA), "
                "which bench_serving does not use\n")
PY
fi

sgl_bench() {  # sgl_bench LOGNAME ARGS...
    local name="$1"; shift
    (cd sglang-src && HF_HUB_OFFLINE=1 ../venv-sglang/bin/python -m sglang.bench_serving \
        --tokenizer ../tokenizer-bpe4k --dataset-name random-ids \
        --random-range-ratio 0.5 --num-prompts "$NUM_PROMPTS" --seed 1 \
        --output-details --disable-tqdm "$@") > "$name.stdout" 2> "$name.stderr" \
        || { tail -40 "$name.stdout" "$name.stderr"; return 1; }
    grep -E '^(Successful requests|Median TTFT|Median ITL|Output token throughput)' "$name.stdout" || true
}

rm -rf out/sglang && mkdir -p out/sglang/console

# 1. /v1/completions, three concurrencies appended to one JSONL file
start_server tiny_server.py "$P_OK" --model-name tiny-gpt2-s1 --seed 1
pid=$LAST_PID
for c in 1 2 4; do
    sgl_bench "out/sglang/console/completions-c$c" --backend vllm \
        --base-url "http://127.0.0.1:$P_OK" --model tiny-gpt2-s1 \
        --random-input-len 48 --random-output-len 32 --max-concurrency "$c" \
        --output-file ../out/sglang/completions.jsonl
done
stop_server "$pid"

# 2. failed requests: a server with a 70-token context refuses (HTTP 400) every request
#    whose prompt + max_tokens exceeds it
start_server tiny_server.py "$P_FAIL" --model-name tiny-gpt2-s1 --seed 1 --ctx 70
pid=$LAST_PID
sgl_bench out/sglang/console/failed-c2 --backend vllm \
    --base-url "http://127.0.0.1:$P_FAIL" --model tiny-gpt2-s1 \
    --random-input-len 64 --random-output-len 32 --max-concurrency 2 \
    --output-file ../out/sglang/failed.jsonl
stop_server "$pid"

# 3. reasoning: /v1/chat/completions against a server that streams about 40% of every
#    second answer as reasoning_content (bench_serving reads only delta.content)
start_server tiny_server.py "$P_REASON" --model-name tiny-gpt2-r1 --seed 3 --reasoning some
pid=$LAST_PID
sgl_bench out/sglang/console/reasoning-chat-c2 --backend vllm-chat \
    --base-url "http://127.0.0.1:$P_REASON" --model tiny-gpt2-r1 \
    --random-input-len 48 --random-output-len 32 --max-concurrency 2 \
    --output-file ../out/sglang/reasoning-chat.jsonl
stop_server "$pid"

rm -f out/sglang/console/*.stderr   # progress noise and warnings only

# expected.json: the tool's own summary figures, copied (not computed) from each JSONL
# line and from the matching console summary, for importer tests
venv-server/bin/python - out/sglang <<'PY'
import json, re, sys
from pathlib import Path
root = Path(sys.argv[1])
runs = [("completions.jsonl", ["completions-c1", "completions-c2", "completions-c4"]),
        ("failed.jsonl", ["failed-c2"]), ("reasoning-chat.jsonl", ["reasoning-chat-c2"])]
KEYS = {"completed": "completed", "ttft_p50_ms": "median_ttft_ms", "ttft_mean_ms": "mean_ttft_ms",
        "itl_p50_ms": "median_itl_ms", "itl_mean_ms": "mean_itl_ms",
        "output_tok_s": "output_throughput", "duration_s": "duration",
        "total_output_tokens": "total_output_tokens"}
CONSOLE = {"completed": "Successful requests:", "ttft_p50_ms": "Median TTFT (ms):",
           "ttft_mean_ms": "Mean TTFT (ms):", "itl_p50_ms": "Median ITL (ms):",
           "itl_mean_ms": "Mean ITL (ms):", "output_tok_s": "Output token throughput (tok/s):"}
results = []
for fname, consoles in runs:
    lines = (root / fname).read_text().splitlines()
    for i, (line, con) in enumerate(zip(lines, consoles), 1):
        d = json.loads(line)
        text = (root / "console" / f"{con}.stdout").read_text()
        num_prompts = int(re.search(r"num_prompts=(\d+)", text).group(1))
        r = {"file": fname, "line": i, "console": f"console/{con}.stdout",
             "max_concurrency": d["max_concurrency"],
             "request_count": {"value": num_prompts,
                               "source": "console: Namespace(... num_prompts=N ...); also len($.errors)"},
             "failed": {"value": sum(1 for e in d["errors"] if e),
                        "source": "non-empty entries of $.errors (the tool prints no failed count)"}}
        for k, key in KEYS.items():
            r[k] = {"value": d[key], "source": f"$.{key}"}
        r["console_lines"] = {}
        for k, label in CONSOLE.items():
            m = re.search(r"^" + re.escape(label) + r"\s+(\S+)", text, re.M)
            r["console_lines"][k] = {"value": m.group(1), "source": f"console line '{label}'"}
        results.append(r)
doc = {"fixture_oracle": "not harness output: the harness's own figures for importer tests",
       "tool": "sglang bench_serving (python -m sglang.bench_serving)",
       "version": "sglang==0.5.10.post1 (PyPI wheel)",
       "units": "ms for *_ms, tok/s for output_tok_s, s for duration_s; console values are the "
                "printed strings (2 decimals)",
       "results": results}
(root / "expected.json").write_text(json.dumps(doc, indent=2) + "\n")
print("wrote expected.json with", len(results), "results")
PY
publish sglang
