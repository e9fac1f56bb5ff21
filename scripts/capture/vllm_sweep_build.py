"""Build (not capture) the `vllm-sweep/` and `vllm-edge/` fixture folders.

`vllm bench sweep serve` (vLLM >= 0.11) needs the full vllm package (CUDA torch, ~10 GB) and
a server it starts itself with each `--serve-params` combination, so its output is reproduced
here instead: the layout and every key as vllm/benchmarks/sweep/serve.py writes them
(`run_comb`, `run_benchmark`, `_update_run_data`, `_get_comb_base_path`, `_get_comb_run_path`;
the failure records of `--continue-on-error`), and each result file with the keys, key order
and summary formulas of `vllm bench serve --save-result --save-detailed` 0.33
(vllm/benchmarks/serve.py `calculate_metrics`/`benchmark`: means, medians and percentiles
with numpy over the successful requests; TPOT = (latency - TTFT) / (output tokens - 1) for
requests of more than one token; ITL pooled over every gap; throughputs over the duration).
The per-request timings are drawn from a seeded generator, so the figures are synthetic;
`tests/fixtures/harness/README.md` says so.

    .venv/bin/python scripts/capture/vllm_sweep_build.py [OUT_DIR]   # default tests/fixtures/harness

`vllm-edge/` holds single `vllm bench serve` results showing three things seen in the
field: requests that produced nothing (0 tokens, TTFT 0, an empty error: vLLM counts them as
completed), a stream that delivers several tokens per chunk (`itls` has one gap per chunk),
and a `date` written as an ISO date-time.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

MODEL = "tiny-gpt2-s1"
PERCENTILES = (50, 90, 95, 99)


def _stats(prefix: str, values: list[float], out: dict) -> None:
    arr = np.asarray(values or [0.0], dtype=float)
    out[f"mean_{prefix}_ms"] = float(np.mean(arr) * 1000)
    out[f"median_{prefix}_ms"] = float(np.median(arr) * 1000)
    out[f"std_{prefix}_ms"] = float(np.std(arr) * 1000)
    for p in PERCENTILES:
        out[f"p{p}_{prefix}_ms"] = float(np.percentile(arr, p) * 1000)


def result(
    rng,
    *,
    date: str,
    n: int,
    conc: int,
    in_len: int,
    out_len: int,
    ttft_s: float,
    tpot_s: float,
    tokens_per_chunk: int = 1,
    empty: tuple = (),
    failed: tuple = (),
) -> dict:
    """One `vllm bench serve --save-result --save-detailed` result (0.33 key order)."""
    inputs, outputs, ttfts, itls, lats, starts, queues, texts, errors = ([] for _ in range(9))
    clock = 1000.0
    for i in range(n):
        p = int(in_len + rng.integers(-in_len // 4, in_len // 4 + 1))
        inputs.append(p)
        start = clock + i * 0.01 + (i // conc) * (out_len * tpot_s)
        starts.append(start)
        queues.append(float(rng.uniform(0.0001, 0.0005)))
        if i in failed:
            outputs.append(0), ttfts.append(0.0), itls.append([]), lats.append(0.0)
            texts.append(""), errors.append("Bad Request")
            continue
        if i in empty:  # the stream ended without a token and without an error
            outputs.append(0), ttfts.append(0.0), itls.append([]), lats.append(float(rng.uniform(0.002, 0.004)))
            texts.append(""), errors.append("")
            continue
        o = int(out_len + rng.integers(-out_len // 4, out_len // 4 + 1))
        ttft = float(ttft_s * rng.uniform(0.7, 1.3))
        chunks = -(-(o - 1) // tokens_per_chunk)  # chunks after the first token's
        gaps = [float(tpot_s * tokens_per_chunk * rng.uniform(0.8, 1.2)) for _ in range(chunks)]
        outputs.append(o), ttfts.append(ttft), itls.append(gaps), lats.append(ttft + sum(gaps) + 0.0004)
        texts.append("x" * (3 * o)), errors.append("")
    ok = [i for i in range(n) if i not in failed]
    duration = max(starts[i] + lats[i] for i in range(n)) - min(starts)
    total_out = sum(outputs[i] for i in ok)
    tpots = [(lats[i] - ttfts[i]) / (outputs[i] - 1) for i in ok if outputs[i] > 1]
    doc = {
        "date": date,
        "endpoint_type": "vllm",
        "backend": "vllm",
        "label": None,
        "model_id": MODEL,
        "tokenizer_id": "./tokenizer-bpe4k",
        "num_prompts": n,
        "request_rate": "inf",
        "burstiness": 1.0,
        "max_concurrency": conc,
        "duration": duration,
        "completed": len(ok),
        "failed": len(failed),
        "total_input_tokens": sum(inputs[i] for i in ok),
        "total_output_tokens": total_out,
        "request_throughput": len(ok) / duration,
        "request_goodput": None,
        "output_throughput": total_out / duration,
        "total_token_throughput": (total_out + sum(inputs[i] for i in ok)) / duration,
        "input_lens": inputs,
        "output_lens": outputs,
        "ttfts": ttfts,
        "itls": itls,
        "latencies": lats,
        "start_times": starts,
        "queue_times": queues,
        "generated_texts": texts,
        "errors": errors,
        "max_output_tokens_per_s": float(conc * tokens_per_chunk / tpot_s // tokens_per_chunk),
        "max_concurrent_requests": conc,
        "rtfx": 0.0,
    }
    _stats("ttft", [ttfts[i] for i in ok], doc)
    _stats("tpot", tpots, doc)
    _stats("itl", [g for i in ok for g in itls[i]], doc)
    _stats("e2el", [lats[i] for i in ok], doc)
    return doc


def sweep(out: Path) -> None:
    """`vllm bench sweep serve --serve-cmd 'vllm serve tiny-gpt2-s1' --bench-cmd 'vllm bench serve
    --backend vllm --model tiny-gpt2-s1 --tokenizer ./tokenizer-bpe4k --dataset-name random
    --random-output-len 32 --num-prompts 12 --max-concurrency 4 --seed 1 --save-detailed'
    --serve-params serve.json --bench-params bench.json --num-runs 2 --warmup-num-prompts 4
    --continue-on-error -o vllm-sweep -e 20261201_120000`, serve.json
    [{"max_num_seqs": 32}, {"max_num_seqs": 256}, {"max_num_seqs": 512}] (512: the server fails),
    bench.json [{"random_input_len": 48}, {"random_input_len": 96}]; run 1 of the last
    combination fails."""
    rng = np.random.default_rng(40)
    exp = out / "vllm-sweep" / "20261201_120000"
    rows = []
    minute = 0
    for seqs, ttft in ((32, 0.080), (256, 0.040)):
        for in_len in (48, 96):
            serve, bench = {"max_num_seqs": seqs}, {"random_input_len": in_len}
            base = exp / ("-".join(("SERVE-", f"max_num_seqs={seqs}", "BENCH-", f"random_input_len={in_len}")))
            base.mkdir(parents=True, exist_ok=True)
            comb = []
            for run in (-1, 0, 1):
                minute += 1
                date = f"20261201-12{minute:02d}00"
                if run == 1 and seqs == 256 and in_len == 96:
                    (base / "run=1.failure.json").write_text(
                        json.dumps(
                            {
                                "run_number": 1,
                                "error_type": "CalledProcessError",
                                "error": "Command '['vllm', 'bench', 'serve', '...']' returned non-zero exit status 1.",
                                "serve_overrides": serve,
                                "bench_overrides": bench,
                            },
                            indent=2,
                        )
                        + "\n"
                    )
                    continue
                n = 4 if run < 0 else 12
                doc = result(
                    rng, date=date, n=n, conc=4, in_len=in_len, out_len=32, ttft_s=ttft * in_len / 48, tpot_s=0.012
                )
                overrides = dict(bench, num_prompts=4) if run < 0 else bench
                doc["run_number"] = run
                doc.update(serve)
                doc.update(overrides)
                name = "warmup.json" if run < 0 else f"run={run}.json"
                (base / name).write_text(json.dumps(doc, indent=4))
                if run >= 0:
                    comb.append(doc)
            (base / "summary.json").write_text(json.dumps(comb, indent=4))
            rows += comb
    (exp / "SERVE-max_num_seqs=512-failure.json").write_text(
        json.dumps(
            {
                "error_type": "RuntimeError",
                "error": "Server failed to start within 300 seconds",
                "serve_overrides": {"max_num_seqs": 512},
            },
            indent=2,
        )
        + "\n"
    )
    keys = list(dict.fromkeys(k for r in rows for k in r if not isinstance(r[k], list)))
    lines = ["," + ",".join(keys)]
    lines += [f"{i}," + ",".join("" if r.get(k) is None else str(r.get(k)) for k in keys) for i, r in enumerate(rows)]
    (exp / "summary.csv").write_text("\n".join(lines) + "\n")


def edge(out: Path) -> None:
    rng = np.random.default_rng(41)
    folder = out / "vllm-edge"
    folder.mkdir(parents=True, exist_ok=True)
    docs = {
        # 3 of 12 requests ended without a token and without an error
        "vllm-infqps-concurrency4-tiny-gpt2-s1-20261201-130000.json": result(
            rng, date="20261201-130000", n=12, conc=4, in_len=48, out_len=32, ttft_s=0.05, tpot_s=0.01, empty=(2, 6, 9)
        ),
        # the server streams 8 tokens a chunk: itls holds one gap per chunk
        "vllm-infqps-concurrency2-tiny-gpt2-s1-20261201-130500.json": result(
            rng,
            date="20261201-130500",
            n=12,
            conc=2,
            in_len=48,
            out_len=128,
            ttft_s=0.05,
            tpot_s=0.006,
            tokens_per_chunk=8,
        ),
        # a date written as an ISO date-time
        "vllm-infqps-concurrency1-tiny-gpt2-s1-iso-date.json": result(
            rng, date="2026-12-01T13:10:00", n=12, conc=1, in_len=48, out_len=32, ttft_s=0.03, tpot_s=0.008
        ),
    }
    for name, doc in docs.items():
        (folder / name).write_text(json.dumps(doc))


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "tests/fixtures/harness"
    sweep(target)
    edge(target)
