"""Parse-and-validate time of a harness manifest at its limits: 1,000 entries, each with a full
seat (placement, settings, components), pass, date, probe and two patterns; as JSON and YAML.

Times `benchreport.load.harness._manifest.parse` (decoding, every check, pattern compilation) in
this process, the median of `--repeat` runs, CPU time (fairer on a shared machine); then the
same with glob compilation stubbed out, which leaves decoding and the checks.

    python benchmarks/bench_manifest.py [--entries 1000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from benchreport.load.harness import SourceFile
from benchreport.load.harness import _manifest


def manifest(n: int) -> dict:
    """A manifest of `n` entries, every field used."""
    return {
        "version": 1,
        "runs": [
            {
                "files": [f"vllm/seat-{i:04d}/**", f"guidellm/seat-{i:04d}/*.json"],
                "seat": {
                    "id": f"seat-{i:04d}",
                    "model": "Qwen/Qwen3-8B-FP8",
                    "role": "candidate",
                    "quantisation": "FP8",
                    "engine": "vllm 0.11.0",
                    "placement": {
                        "nodes": 1,
                        "gpus_per_node": 8,
                        "tensor_parallel": 8,
                        "gpu_memory_bytes": 85899345920,
                        "interconnect": "NVLink",
                    },
                    "settings": {
                        "max_model_len": 8192,
                        "prefix_caching": True,
                        "block_size": 16,
                        "scheduler": {"max_num_seqs": 256, "chunked_prefill": True},
                    },
                    "components": [{"name": "Qwen3-8B-FP8", "role": "checkpoint", "license": "Apache-2.0"}],
                    "checkpoint_bytes": 8.9e9,
                },
                "pass": i % 5 + 1,
                "date": "2026-09-10",
                "probe": "random-1024x128",
                "warmup_excluded": True,
                "notes": "nightly sweep",
            }
            for i in range(n)
        ],
    }


def _yaml(doc: dict) -> str:
    import yaml

    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=200)


def time_parse(name: str, text: str, repeat: int) -> float:
    """Median CPU seconds of one parse (the manifest must come back with no refusal)."""
    data = text.encode("utf-8")
    times = []
    for _ in range(repeat):
        source = SourceFile(Path("/bench") / name, f"/bench/{name}", "0" * 64, data, kind="manifest")
        t0 = time.process_time()
        m, refused = _manifest.parse(source)
        times.append(time.process_time() - t0)
        assert not refused and len(m.entries) == text.count("seat-") // 3, [str(r) for r in refused[:3]]
    return statistics.median(times)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args(argv)
    doc = manifest(args.entries)
    out = {}
    texts = (("benchreport.json", json.dumps(doc)), ("benchreport.yaml", _yaml(doc)))
    for name, text in texts:
        out[name] = s = time_parse(name, text, args.repeat)
        print(f"{name}: {args.entries} entries, {len(text) / 1000:.0f} kB: {s * 1000:.1f} ms CPU per parse")
    compile_globs = _manifest.glob_regex
    _manifest.glob_regex = lambda pattern: None
    try:
        for name, text in texts:
            out[name + " checks"] = s = time_parse(name, text, args.repeat)
            print(f"{name}: without glob compilation: {s * 1000:.1f} ms CPU per parse")
    finally:
        _manifest.glob_regex = compile_globs
    return out


if __name__ == "__main__":
    main()
