"""A tiny MLPerf LoadGen system under test (SUT) for fixture capture.

Each query sample is a list of prompt token ids; the SUT sends it to an
OpenAI-compatible /v1/completions endpoint with streaming, reports the first token
to LoadGen (FirstTokenComplete) and the whole answer with its token count
(QuerySamplesComplete), so LoadGen can measure TTFT and TPOT (use_token_latencies).

Usage: python mlperf_sut.py --scenario Server|Offline --url http://127.0.0.1:PORT \
           --model NAME --outdir DIR [--samples 24] [--qps 4] [--max-tokens 16]
           [--ttft-ms 500] [--tpot-ms 100] [--min-duration-ms 4000]
"""

import argparse
import array
import json
import random
import threading
from concurrent.futures import ThreadPoolExecutor

import mlperf_loadgen as lg
import requests

p = argparse.ArgumentParser()
p.add_argument("--scenario", choices=["Server", "Offline"], required=True)
p.add_argument("--url", required=True)
p.add_argument("--model", required=True)
p.add_argument("--outdir", required=True)
p.add_argument("--samples", type=int, default=24)
p.add_argument("--qps", type=float, default=4.0)
p.add_argument("--max-tokens", type=int, default=16)
p.add_argument("--workers", type=int, default=4)
p.add_argument("--ttft-ms", type=float, default=500.0)
p.add_argument("--tpot-ms", type=float, default=100.0)
p.add_argument("--min-duration-ms", type=int, default=4000)
args = p.parse_args()

rng = random.Random(1)
PROMPTS = [[rng.randrange(10, 4000) for _ in range(rng.randint(24, 40))] for _ in range(args.samples)]
pool = ThreadPoolExecutor(max_workers=args.workers)
session_local = threading.local()
keep = []  # keep response buffers alive until LoadGen has copied them


def session():
    if not hasattr(session_local, "s"):
        session_local.s = requests.Session()
    return session_local.s


def run_one(qs):
    body = {
        "model": args.model,
        "prompt": PROMPTS[qs.index],
        "max_tokens": args.max_tokens,
        "temperature": 0.0,
        "ignore_eos": True,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    tokens, first_sent, n_tokens = [], False, None
    with session().post(args.url + "/v1/completions", json=body, stream=True, timeout=120) as r:
        r.raise_for_status()
        for line in r.iter_lines():
            if not line.startswith(b"data: ") or line == b"data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            if chunk.get("usage"):
                n_tokens = chunk["usage"]["completion_tokens"]
            for ch in chunk.get("choices", []):
                if ch.get("text"):
                    tokens.append(len(tokens) + 1)  # token ordinal: the text itself is not needed
                    if not first_sent:
                        first = array.array("q", [tokens[0]])
                        keep.append(first)
                        addr, n = first.buffer_info()
                        lg.FirstTokenComplete([lg.QuerySampleResponse(qs.id, addr, n * first.itemsize)])
                        first_sent = True
    out = array.array("q", tokens or [0])
    keep.append(out)
    addr, n = out.buffer_info()
    lg.QuerySamplesComplete(
        [lg.QuerySampleResponse(qs.id, addr, n * out.itemsize, n_tokens if n_tokens is not None else len(tokens))]
    )


def run_logged(qs):
    try:
        run_one(qs)
    except Exception as e:  # a query the SUT cannot answer would hang LoadGen: say so
        print(f"query {qs.id} (sample {qs.index}) failed: {e!r}", flush=True)
        raise


def issue_queries(query_samples):
    for qs in query_samples:
        pool.submit(run_logged, qs)


def flush_queries():
    pass


settings = lg.TestSettings()
settings.scenario = lg.TestScenario.Server if args.scenario == "Server" else lg.TestScenario.Offline
settings.mode = lg.TestMode.PerformanceOnly
settings.use_token_latencies = True
settings.ttft_latency = int(args.ttft_ms * 1e6)
settings.tpot_latency = int(args.tpot_ms * 1e6)
settings.min_query_count = args.samples
settings.max_query_count = args.samples
settings.min_duration_ms = args.min_duration_ms
if args.scenario == "Server":
    settings.server_target_qps = args.qps
else:
    settings.offline_expected_qps = args.qps

out = lg.LogOutputSettings()
out.outdir = args.outdir
out.copy_summary_to_stdout = True
log_settings = lg.LogSettings()
log_settings.log_output = out
log_settings.enable_trace = False

sut = lg.ConstructSUT(issue_queries, flush_queries)
qsl = lg.ConstructQSL(args.samples, args.samples, lambda idx: None, lambda idx: None)
lg.StartTestWithLogSettings(sut, qsl, settings, log_settings)
lg.DestroyQSL(qsl)
lg.DestroySUT(sut)
pool.shutdown()
