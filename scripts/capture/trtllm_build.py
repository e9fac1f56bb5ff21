"""Build trtllm-bench style records from TensorRT-LLM's own reporting models.

trtllm-bench needs a GPU and cannot run here. This script imports TensorRT-LLM's own
`tensorrt_llm/bench/dataclasses/statistics.py` (and, where given, `reporting.py`) from a
folder holding those files at one pinned commit (never from this repository), fills
their `RequestRecord`s with timings measured against an OpenAI-compatible test server
(streaming /v1/completions, time.perf_counter_ns() like trtllm-bench), and writes what
their code produces:

  requests.json    the per-request records (RequestRecord.model_dump()); with
                   --request-info, shaped as ReportUtility.get_request_info() shapes them
                   for --request_json (tokens replaced by "output" and "output_tokens")
  statistics.json  with --reporting: BenchmarkStatistics from StatsKeeper.
                   generate_statistics_summary(), model_dump(mode="json")
  report.txt       with --reporting: the text report_statistics() logs

Only the imports these files make that are not used on this path are stubbed:
tensorrt_llm.logger.Logger (captures the logged text), and
tensorrt_llm.bench.dataclasses.configuration.RuntimeConfig (an annotation only; the run
configuration passed in is a plain namespace with placeholder engine settings).

Usage: python trtllm_build.py --src DIR --url http://127.0.0.1:PORT --model NAME \
           --tokenizer DIR --out DIR [--reporting] [--request-info] \
           [--num-requests 12] [--concurrency 4] [--max-tokens 24] [--seed 1]
"""

import argparse
import json
import random
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import requests
from tokenizers import Tokenizer

p = argparse.ArgumentParser()
p.add_argument("--src", required=True, help="folder with tensorrt_llm/bench/dataclasses/*.py")
p.add_argument("--url", required=True)
p.add_argument("--model", required=True)
p.add_argument("--tokenizer", required=True)
p.add_argument("--out", required=True)
p.add_argument("--reporting", action="store_true", help="also run reporting.py from --src")
p.add_argument(
    "--request-info", action="store_true", help="shape requests.json as ReportUtility.get_request_info() does"
)
p.add_argument("--num-requests", type=int, default=12)
p.add_argument("--concurrency", type=int, default=4)
p.add_argument("--max-tokens", type=int, default=24)
p.add_argument("--seed", type=int, default=1)
args = p.parse_args()

# --- a throwaway package tree: their files, plus stubs for what this path does not use
pkg_root = Path(tempfile.mkdtemp(prefix="trtllm-pkg-"))
dc = pkg_root / "tensorrt_llm" / "bench" / "dataclasses"
dc.mkdir(parents=True)
for init in (pkg_root / "tensorrt_llm", pkg_root / "tensorrt_llm" / "bench", dc):
    (init / "__init__.py").write_text("")
src_dc = Path(args.src) / "tensorrt_llm" / "bench" / "dataclasses"
shutil.copy(src_dc / "statistics.py", dc / "statistics.py")
if args.reporting:
    shutil.copy(src_dc / "reporting.py", dc / "reporting.py")
(dc / "configuration.py").write_text(
    "class RuntimeConfig:  # stub: only used as a type annotation by reporting.py\n    pass\n"
)
(pkg_root / "tensorrt_llm" / "logger.py").write_text(
    "class Logger:  # stub: collects what report_statistics() logs\n"
    "    def __init__(self):\n        self.lines = []\n"
    "    def info(self, msg):\n        self.lines.append(msg)\n"
)
sys.path.insert(0, str(pkg_root))

from tensorrt_llm.bench.dataclasses.statistics import RequestRecord  # noqa: E402

tok = Tokenizer.from_file(str(Path(args.tokenizer) / "tokenizer.json"))
rng = random.Random(args.seed)
prompts = [[rng.randrange(10, 4000) for _ in range(rng.randint(24, 40))] for _ in range(args.num_requests)]


def measure(i):
    """One streaming request; returns what trtllm-bench's LLM-API path records."""
    body = {
        "model": args.model,
        "prompt": prompts[i],
        "max_tokens": args.max_tokens,
        "temperature": 0.0,
        "ignore_eos": True,
        "stream": True,
    }
    tokens, first_ns = [], None
    start_ns = time.perf_counter_ns()
    with requests.post(args.url + "/v1/completions", json=body, stream=True, timeout=120) as r:
        r.raise_for_status()
        for line in r.iter_lines():
            if not line.startswith(b"data: ") or line == b"data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            for ch in chunk.get("choices", []):
                if ch.get("text"):
                    if first_ns is None:
                        first_ns = time.perf_counter_ns()
                    # the server streams text; its token ids are the chunk re-encoded
                    tokens += tok.encode(ch["text"]).ids
    end_ns = time.perf_counter_ns()
    return dict(
        start_timestamp=start_ns,
        end_timestamp=end_ns,
        request_id=i,
        num_input_tokens=len(prompts[i]),
        response_is_final=True,
        error=False,
        tokens=tokens,
        decoding_iteration=max(len(tokens) - 1, 0),
        time_on_first_token=first_ns,
    )


results, lock, queue = [], threading.Lock(), list(range(args.num_requests))


def worker():
    while True:
        with lock:
            if not queue:
                return
            i = queue.pop(0)
        item = measure(i)
        with lock:
            results.append(item)


threads = [threading.Thread(target=worker) for _ in range(args.concurrency)]
for t in threads:
    t.start()
for t in threads:
    t.join()
results.sort(key=lambda d: d["request_id"])

out = Path(args.out)
out.mkdir(parents=True, exist_ok=True)

if args.reporting:
    from tensorrt_llm.bench.dataclasses import reporting  # noqa: E402
    from tensorrt_llm.logger import Logger  # noqa: E402

    keeper = reporting.StatsKeeper()
    for item in results:
        keeper.register_request_perf_item(reporting.NewRequestPerfItemTuple(**item))
    engine_dir = out.parent / (out.name + "-engine-placeholder")
    engine_dir.mkdir(exist_ok=True)
    # report_statistics() reads the engine's config.json: placeholder values describing
    # the test server's model (float32, no quantisation), not a TensorRT engine
    (engine_dir / "config.json").write_text(
        json.dumps(
            {
                "build_config": {"max_input_len": 2048, "max_seq_len": 2048},
                "pretrained_config": {
                    "dtype": "float32",
                    "quantization": {"kv_cache_quant_algo": None, "quant_algo": None},
                },
            }
        )
    )
    rt_cfg = SimpleNamespace(
        model=args.model,
        engine_dir=engine_dir,
        sw_version="n/a (built, not a TensorRT-LLM run)",
        world_config=SimpleNamespace(tp_size=1, pp_size=1),
        settings_config=SimpleNamespace(
            max_batch_size=args.concurrency,
            max_num_tokens=2048,
            scheduler_policy=SimpleNamespace(values=(0, "Guaranteed No Evict")),
            kv_cache_percent=0.9,
        ),
    )
    logger = Logger()
    stats = reporting.report_statistics(keeper, rt_cfg, logger, streaming=True)
    shutil.rmtree(engine_dir)
    (out / "report.txt").write_text("".join(logger.lines))
    (out / "statistics.json").write_text(json.dumps(stats.model_dump(mode="json"), indent=4) + "\n")
    records = [r.model_dump(mode="json") for r in keeper.requests.values()]
else:
    records = []
    for item in results:
        rec = RequestRecord()
        rec.id = item["request_id"]
        rec.num_input_tokens = item["num_input_tokens"]
        rec.start_timestamp = item["start_timestamp"]
        rec.register_event(
            item["error"],
            item["response_is_final"],
            item["end_timestamp"],
            item["decoding_iteration"],
            item["tokens"],
            item["time_on_first_token"],
        )
        records.append(rec)
    if args.request_info:
        # ReportUtility.get_request_info(), tensorrt_llm/bench/dataclasses/reporting.py:
        #   entry = request.model_dump(); entry["output"] = tokenizer.decode(entry["tokens"])
        #   entry["output_tokens"] = len(entry["tokens"]); entry.pop("tokens")
        shaped = []
        for request in records:
            entry = request.model_dump()
            entry["output"] = tok.decode(entry["tokens"])
            entry["output_tokens"] = len(entry["tokens"])
            entry.pop("tokens")
            shaped.append(entry)
        records = shaped
    else:
        records = [r.model_dump(mode="json") for r in records]
(out / "requests.json").write_text(json.dumps(records, indent=4) + "\n")
shutil.rmtree(pkg_root)
print(f"wrote {len(records)} records to {out}")
