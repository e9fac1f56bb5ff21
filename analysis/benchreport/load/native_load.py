"""The load description of a run (`load`, an extension of format 1): what the run sent, as each
harness records it (docs/importers.md). Runs of different loads are different cells
(benchreport.conditions).
"""

from __future__ import annotations

from typing import Any, Optional

from benchreport.load.errors import RunFileError
from benchreport.load.native_types import (
    MAX_INT,
    MAX_NAME,
    Base,
    NonNegFloat,
    NonNegInt,
    OptName,
    PosInt,
    check_text,
    finite,
)

__all__ = ["TokenTarget", "Load", "check_load", "MAX_LOAD_VALUES"]


class TokenTarget(Base):
    """A token-length target as the harness asked for it: mean, spread (standard deviation) and
    bounds; any may be absent. `sent`: these are the lengths the client sent, counted, not a
    target it was given (a harness that writes no target, e.g. vLLM's `input_lens`); another
    draw of the same target gives other numbers, so the condition keys them by octave only
    (benchreport.conditions.fingerprint)."""

    mean: Optional[NonNegFloat] = None
    stdev: Optional[NonNegFloat] = None
    min: Optional[NonNegFloat] = None
    max: Optional[NonNegFloat] = None
    sent: Optional[bool] = None


class Load(Base):
    """What the run sent (docs/importers.md, "The load description"): an extension of format 1.

    Runs of different loads are different cells (benchreport.conditions); `seed`, `requests`,
    `duration_s`, `warmup_requests`, `warmup_s` and `concurrency` are stated, not part of the
    condition.
    """

    endpoint: Optional[OptName] = None
    streaming: Optional[bool] = None
    dataset: Optional[OptName] = None
    prompt_tokens: Optional[TokenTarget] = None
    prefix_tokens: Optional[NonNegInt] = None
    output_tokens: Optional[TokenTarget] = None
    fixed_output: Optional[bool] = None
    max_tokens: Optional[PosInt] = None
    sampling: Optional[dict[str, Any]] = None
    arrival: Optional[OptName] = None
    rate: Optional[NonNegFloat] = None
    concurrency: Optional[PosInt] = None
    requests: Optional[PosInt] = None
    duration_s: Optional[NonNegFloat] = None
    warmup_requests: Optional[NonNegInt] = None
    warmup_s: Optional[NonNegFloat] = None
    seed: Optional[int] = None
    extra: Optional[dict[str, Any]] = None


#: what a load description's `sampling` and `extra` may hold: one level of named scalars
_LOAD_SCALARS = (str, int, float, bool, type(None))
MAX_LOAD_VALUES = 100


def check_load(run, *, text: bool) -> None:
    """The load description: text safe, numbers finite, targets whose bounds hold their mean,
    `sampling` and `extra` flat maps of scalars, an answer cap that agrees with the harness's."""
    load = run.load
    if text:
        for name in ("endpoint", "dataset", "arrival"):
            check_text(getattr(load, name), f"$.load.{name}")
    for name in ("rate", "duration_s", "warmup_s"):
        finite(getattr(load, name), f"$.load.{name}")
    for name in ("prompt_tokens", "output_tokens"):
        t = getattr(load, name)
        if t is None:
            continue
        for k in ("mean", "stdev", "min", "max"):
            finite(getattr(t, k), f"$.load.{name}.{k}")
        if t.min is not None and t.max is not None and t.min > t.max:
            raise RunFileError(f"$.load.{name}.min", f"expected min <= max, got {t.min:g} > {t.max:g}")
        if t.mean is not None and ((t.min is not None and t.mean < t.min) or (t.max is not None and t.mean > t.max)):
            raise RunFileError(f"$.load.{name}.mean", f"expected a mean between min and max, got {t.mean:g}")
    for name in ("sampling", "extra"):
        values = getattr(load, name)
        if values is None:
            continue
        if len(values) > MAX_LOAD_VALUES:
            raise RunFileError(f"$.load.{name}", f"expected at most {MAX_LOAD_VALUES} entries, got {len(values)}")
        for k, v in values.items():
            if not isinstance(v, _LOAD_SCALARS):
                raise RunFileError(
                    f"$.load.{name}.{k}",
                    f"expected a string, number, boolean or null, got "
                    f"{'an object' if isinstance(v, dict) else 'a list'}",
                )
            if len(k) > MAX_NAME:
                raise RunFileError(f"$.load.{name}", f"expected keys of at most {MAX_NAME} characters, got {len(k)}")
            if isinstance(v, float):
                finite(v, f"$.load.{name}.{k}")
            if isinstance(v, int) and not isinstance(v, bool) and not -MAX_INT - 1 <= v <= MAX_INT:
                raise RunFileError(f"$.load.{name}.{k}", f"expected an integer of at most 2^63 in size, got {v}")
            if isinstance(v, str) and len(v) > MAX_NAME:
                raise RunFileError(f"$.load.{name}.{k}", f"expected at most {MAX_NAME} characters, got {len(v)}")
            if text:
                check_text(k, f"$.load.{name} (a key)")
                if isinstance(v, str):
                    check_text(v, f"$.load.{name}.{k}")
    cap = run.harness.max_tokens
    if load.max_tokens is not None and cap is not None and load.max_tokens != cap:
        raise RunFileError(
            "$.load.max_tokens", f"expected the answer cap of $.harness.max_tokens ({cap}), got {load.max_tokens}"
        )
