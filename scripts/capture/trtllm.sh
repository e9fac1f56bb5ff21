#!/usr/bin/env bash
# BUILD (not capture) trtllm-bench fixtures into tests/fixtures/harness/trtllm/.
#
# Usage: TRTLLM_FILES=<dir> scripts/capture/trtllm.sh [WORK_DIR]
#   TRTLLM_FILES  a folder holding, per pinned commit of NVIDIA/TensorRT-LLM,
#                 <commit>/tensorrt_llm/bench/dataclasses/{statistics,reporting}.py as
#                 they are at that commit (e.g. from a clone:
#                 git show <commit>:tensorrt_llm/bench/dataclasses/statistics.py).
#                 Nothing of TensorRT-LLM is committed here.
#
# trtllm-bench needs a GPU and cannot run here. scripts/capture/trtllm_build.py imports
# TensorRT-LLM's own pydantic models (RequestRecord, PercentileStats,
# BenchmarkStatistics) and, at the older commit, its StatsKeeper / report_statistics,
# fills them with timings measured against tiny_server.py, and writes what that code
# produces. See tests/fixtures/harness/trtllm/README.md.
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"

OLD="385626572df16175dd327fa785e4434cb7866a64"   # statistics.py + reporting.py
NEW="77d7fe1eb2d89753ae33a0745d1083c133064f92"   # statistics.py (renamed fields)
TRTLLM_DEPS=(pydantic==2.14.4 requests==2.34.2 tokenizers==0.23.3)
PORT=8260
BUILD="$REPO/scripts/capture/trtllm_build.py"
[ -n "${TRTLLM_FILES:-}" ] || { echo "set TRTLLM_FILES (see the header)"; exit 1; }
for c in "$OLD" "$NEW"; do
    [ -f "$TRTLLM_FILES/$c/tensorrt_llm/bench/dataclasses/statistics.py" ] \
        || { echo "missing statistics.py for $c under $TRTLLM_FILES"; exit 1; }
done

setup_server

log "trtllm-bench records built from NVIDIA/TensorRT-LLM @ $OLD and @ $NEW"
if [ ! -f venv-trtllm/.done ]; then
    mkvenv trtllm "${TRTLLM_DEPS[@]}"
    touch venv-trtllm/.done
fi
rm -rf out/trtllm && mkdir -p out/trtllm

start_server tiny_server.py "$PORT" --model-name tiny-gpt2-s1 --seed 1
pid=$LAST_PID
venv-trtllm/bin/python "$BUILD" --src "$TRTLLM_FILES/$OLD" --reporting \
    --url "http://127.0.0.1:$PORT" --model tiny-gpt2-s1 --tokenizer tokenizer-bpe4k \
    --out "out/trtllm/bench-${OLD:0:7}" --num-requests 12 --concurrency 4 --max-tokens 24
venv-trtllm/bin/python "$BUILD" --src "$TRTLLM_FILES/$NEW" --request-info \
    --url "http://127.0.0.1:$PORT" --model tiny-gpt2-s1 --tokenizer tokenizer-bpe4k \
    --out "out/trtllm/bench-${NEW:0:7}" --num-requests 12 --concurrency 4 --max-tokens 24
stop_server "$pid"

# expected.json: the figures their code wrote (statistics.json) and logged (report.txt)
venv-server/bin/python - out/trtllm "bench-${OLD:0:7}" <<'PY'
import json, re, sys
from pathlib import Path
root, name = Path(sys.argv[1]), sys.argv[2]
st = json.loads((root / name / "statistics.json").read_text())
rep = (root / name / "report.txt").read_text()
def line(label):
    m = re.search(re.escape(label) + r"\s*(\S+)", rep)
    return {"value": m.group(1) if m else None, "source": f"report.txt line '{label}'"}
r = {"file": f"{name}/statistics.json",
     "request_count": {"value": st["num_requests"], "source": "$.num_requests"},
     "failed": {"value": None, "source": "trtllm-bench reports no failed count "
                "(RequestRecord.error_tokens counts error responses; all 0 here)"},
     "ttft_p50_ns": {"value": st["ttft_percentiles"]["p50"], "source": "$.ttft_percentiles.p50"},
     "ttft_mean_ns": {"value": st["ttft_percentiles"]["average"], "source": "$.ttft_percentiles.average"},
     "itl_p50_ns": {"value": st["itl_percentiles"]["p50"], "source": "$.itl_percentiles.p50 (per-request mean ITL)"},
     "itl_mean_ns": {"value": st["itl_percentiles"]["average"], "source": "$.itl_percentiles.average"},
     "output_tok_per_ns": {"value": st["token_throughput_ns"], "source": "$.token_throughput_ns"},
     "total_output_tokens": {"value": st["total_output_tokens"], "source": "$.total_output_tokens"},
     "total_latency_ns": {"value": st["total_latency_ns"], "source": "$.total_latency_ns"},
     "report_lines": {"request_count": line("Number of requests:"),
                      "output_tok_s": line("Token Throughput (tokens/sec):"),
                      "ttft_mean_ms": line("Average time-to-first-token (ms):"),
                      "itl_mean_ms": line("Average inter-token latency (ms):"),
                      "request_latency_mean_ms": line("Average request latency (ms):")}}
doc = {"fixture_oracle": "not harness output: the figures TensorRT-LLM's own reporting code "
                         "produced from the built records, for importer tests",
       "tool": "trtllm-bench (BUILT from its dataclasses, not captured)",
       "version": "NVIDIA/TensorRT-LLM statistics.py + reporting.py at 385626572df16175dd327fa785e4434cb7866a64",
       "units": "ns for *_ns; tokens per ns for output_tok_per_ns; report lines as printed",
       "results": [r],
       "not_covered": "bench-77d7fe1/requests.json has per-request records only: no summary "
                      "was produced for that commit (see README)"}
(root / "expected.json").write_text(json.dumps(doc, indent=2) + "\n")
print("wrote expected.json")
PY
publish trtllm
