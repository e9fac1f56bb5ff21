"""Values in a harness file that cannot be used, counted and said, never silently missing.

An importer reads a number with `num`/`count`, which give None for a value that is not a finite
number; without this module such a value would simply be missing from the run. `unusable_values`
walks the harness's own document and finds, by the harness's own JSON paths:
- a figure (a key named like a time, rate, count or length) that is not a finite number: NaN,
  Infinity, a string that is no number ("abc", "four"), or a negative count or time;
- in a list of numbers (per-request `ttfts`, `itls`, `latencies`, ...), the entries that are not;
- per-request lists of one object whose lengths differ (a `ttfts` list shorter than `output_lens`).
The run's assumptions then say how many, which field and why (the `import.assumed` flag shows
them), so a reader knows a figure was computed without them.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

#: keys that hold a figure an importer reads (times, rates, throughputs, counts, lengths, concurrency)
FIGURE_KEY = re.compile(
    r"(ttft|itl|tpot|latenc|e2e|throughput|duration|concurren|completed|num_prompts|"
    r"request_rate|tokens_per|_lens?$|tok_s|_ms$|_ns$|_s$|_sec)",
    re.I,
)
#: keys whose NaN is a harness's own way of saying "not computable" (llmperf's stddev of one value)
NAN_ALLOWED = re.compile(r"(std|stdev|stddev|variance|_cv$)", re.I)
#: keys that may be written as text or as Infinity by design (an "inf" request rate: no limit) or
#: that name a kind rather than hold a figure (`request_rate_mode`, `latency_unit`)
TEXT_ALLOWED = re.compile(
    r"(^(request_rate|rate|burstiness|arrival|profile|strategy)$|"
    r"_(mode|type|kind|name|unit|units|strategy|dist|distribution|id)$)",
    re.I,
)
#: lists per request whose lengths must agree when they sit in one object (vLLM, SGLang)
PER_REQUEST = ("input_lens", "output_lens", "ttfts", "itls", "latencies", "start_times", "errors", "generated_texts")
MAX_NODES = 2_000_000  # walk no further in a huge document (its other checks still apply)
MAX_SHOWN = 4


@dataclass
class Unusable:
    """What was found: (path pattern, reason) -> count, with the first paths of each."""

    counts: dict = field(default_factory=dict)
    examples: dict = field(default_factory=dict)
    lengths: list = field(default_factory=list)

    def add(self, pattern: str, reason: str, path: str) -> None:
        key = (pattern, reason)
        self.counts[key] = self.counts.get(key, 0) + 1
        shown = self.examples.setdefault(key, [])
        if len(shown) < MAX_SHOWN:
            shown.append(path)

    def sentences(self) -> list[str]:
        """One sentence per field and reason, and one per mismatch of list lengths."""
        out = []
        for (pattern, reason), n in sorted(self.counts.items()):
            paths = ", ".join(self.examples[(pattern, reason)]) + (", ..." if n > MAX_SHOWN else "")
            out.append(
                f"{n} value(s) of {pattern} cannot be used ({reason}: {paths}); they are left out of every figure"
            )
        out.extend(self.lengths)
        return out


def _bad_number(value) -> str | None:
    """Why a value where a number belongs is not one, or None when it is a usable number."""
    if isinstance(value, bool):
        return None  # a flag of that name (`completed: true`), not a figure
    if isinstance(value, (int, float)):
        if isinstance(value, float) and math.isnan(value):
            return "NaN"
        if isinstance(value, float) and math.isinf(value):
            return "Infinity"
        return "negative" if value < 0 else None
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return f"the text {value[:20]!r}"
        return None  # a number written as text: the importers read it or say so
    return None


def unusable_values(doc, root: str = "$") -> Unusable:
    """Every unusable figure in a harness document (see the module docstring)."""
    found = Unusable()
    stack = [(doc, root, root)]
    seen = 0
    while stack and seen < MAX_NODES:
        node, path, pattern = stack.pop()
        seen += 1
        if isinstance(node, dict):
            _lengths(node, path, found)
            for key, value in node.items():
                if not isinstance(key, str):
                    continue
                sub, subpattern = f"{path}.{key}", f"{pattern}.{key}"
                if isinstance(value, (dict, list)):
                    stack.append((value, sub, subpattern))
                elif FIGURE_KEY.search(key) and value is not None:
                    why = _bad_number(value)
                    if why is None or (why == "NaN" and NAN_ALLOWED.search(key)):
                        continue
                    if (why == "Infinity" or why.startswith("the text")) and TEXT_ALLOWED.search(key):
                        continue
                    if why == "negative" and re.search(r"(delay|offset|skew|drift|cooldown|warmup)", key, re.I):
                        continue
                    found.add(subpattern, why, sub)
        elif isinstance(node, list):
            numbers = sum(isinstance(v, (int, float)) and not isinstance(v, bool) for v in node)
            key = pattern.rsplit(".", 1)[-1]
            if node and numbers >= len(node) / 2 and FIGURE_KEY.search(key) and not NAN_ALLOWED.search(key):
                for i, v in enumerate(node):
                    why = _bad_number(v) if v is not None else None
                    if isinstance(v, (list, dict)):
                        why = "not a number"
                    if why is not None and not (why == "negative" and key in ("start_times",)):
                        found.add(f"{pattern}[i]", why, f"{path}[{i}]")
                continue
            for i, v in enumerate(node):
                if isinstance(v, (dict, list)):
                    stack.append((v, f"{path}[{i}]", f"{pattern}[i]"))
    return found


def _lengths(node: dict, path: str, found: Unusable) -> None:
    """Per-request lists of one object whose lengths differ."""
    sizes = {k: len(node[k]) for k in PER_REQUEST if isinstance(node.get(k), list)}
    if len(set(sizes.values())) > 1:
        longest = max(sizes.values())
        short = ", ".join(f"{k} {n}" for k, n in sizes.items() if n < longest)
        found.lengths.append(
            f"per-request lists of {path} differ in length ({short} against {longest} in "
            f"{', '.join(k for k, n in sizes.items() if n == longest)}): the requests past the end "
            "of a shorter list lack its figure"
        )
