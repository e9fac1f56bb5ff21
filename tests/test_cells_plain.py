"""The cells of plain groups (3+ positive, finite, not all equal pass values) made a block at a time
(`benchreport.stats.cells._plain_rows`) are the cells the one-group route makes (`summarise_passes`
and `_cell_row`), bit for bit: every float's bits, every type, NA where NA, the rows' order."""

from __future__ import annotations

import importlib
import math
import struct

import numpy as np
import pandas as pd
import pytest

from benchreport.columns import PASSES
from benchreport.stats.pass_rows import add_sort_keys
from benchreport.thresholds import DEFAULT

C = importlib.import_module("benchreport.stats.cells")  # the module (the package exports a function `cells`)


def _pass_table(seed: int) -> pd.DataFrame:
    """Pass rows of many cells and dates: 1 to 17 passes, values across twelve orders of magnitude,
    some equal, zero, negative or missing; counts sometimes missing; reported figures sometimes
    absent or non-positive; several sources and conditions."""
    rng = np.random.default_rng(seed)
    rows = []
    for g in range(900):
        k = int(rng.choice([1, 2, 3, 3, 4, 5, 5, 5, 6, 7, 8, 9, 10, 17]))
        scale = 10.0 ** rng.uniform(-6, 6)
        values = scale * rng.lognormal(0, rng.choice([1e-9, 0.01, 0.3, 2.0]), k)
        kind = g % 23
        if kind == 1:
            values[:] = values[0]  # equal values: no interval
        elif kind == 2:
            values[rng.integers(k)] = 0.0
        elif kind == 3:
            values[rng.integers(k)] = -1.5
        elif kind == 4:
            values = np.round(values, 1) + 1  # ties
        n_obs = rng.integers(1, 400, k).astype(float)
        if kind == 5:
            n_obs[rng.integers(k)] = np.nan
        reported = values * rng.lognormal(0, 0.01, k) if g % 3 else np.full(k, np.nan)
        if kind == 6:
            reported[0] = 0.0
        for i in range(k):
            rows.append(
                dict(
                    seat=f"s{g % 7}",
                    harness=["vllm", "guidellm", None][g % 3],
                    probe=None if g % 4 else "p",
                    load_id=None if g % 5 else "L1",
                    workload="decode" if g % 2 else "prefill",
                    concurrency=None if g % 11 == 0 else int(2 ** (g % 6)),
                    metric=["output_tok_s", "ttft_ms", "e2e_latency_ms", "made_up"][g % 4],
                    statistic=["mean", "p50", "p99"][g % 3],
                    date=f"2026-0{1 + g % 3}-{10 + g % 17}",
                    **{"pass": i + 1},
                    run_id=f"r{g}-{i}",
                    value=values[i],
                    reported=reported[i],
                    recomputed=values[i] if g % 2 else np.nan,
                    n_obs=n_obs[i],
                    n_requests=n_obs[i] + 1,
                    n_failed=float(i % 2),
                    ci_low=np.nan,
                    ci_high=np.nan,
                    ci_level=np.nan,
                    lag1=0.1 * i,
                    source=["requests", "summary"][(g + i * (g % 2)) % 2],
                    group=None,
                    condition=None if (i + g) % 3 else f"c{g % 2}",
                )
            )
    frame = PASSES.typed(pd.DataFrame(rows))
    frame["group"] = pd.Series([None] * len(frame), dtype=object)
    frame["condition"] = pd.Series([r["condition"] for r in rows], dtype=object)
    for c in ("harness", "probe", "load_id"):  # as the pass rows hold them: None where none
        frame[c] = frame[c].astype(object).where(frame[c].notna(), None)
    frame = add_sort_keys(frame)
    return frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)  # groups interleaved


def _bits(x):
    if isinstance(x, float):
        return ("float", struct.pack("<d", x))
    return (type(x).__name__, repr(x))


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("level", [0.95, 0.9])
def test_plain_groups_made_at_once_are_the_one_group_routes_cells(seed, level, monkeypatch):
    passes = _pass_table(seed)
    cfg = C.CellConfig(DEFAULT, "t", 0, level, 0, {"L1": "one load"})
    latest = set(passes.index[passes["date"] == "2026-01-10"].tolist())
    fast_rows, fast_frames = C.estimate_rows(passes, passes, cfg, level, latest)
    monkeypatch.setattr(C, "_plain_rows", lambda *a, **k: {})
    slow_rows, slow_frames = C.estimate_rows(passes, passes, cfg, level, latest)
    assert len(fast_rows) == len(slow_rows) > 0
    for a, b in zip(fast_rows, slow_rows):
        assert list(a) == list(b)
        assert [_bits(v) for v in a.values()] == [_bits(v) for v in b.values()], (a, b)
    fast, slow = pd.concat(fast_frames, ignore_index=True), pd.concat(slow_frames, ignore_index=True)
    pd.testing.assert_frame_equal(fast, slow, check_exact=True)
    for c in fast.columns:
        if fast[c].dtype == "float64":
            assert np.array_equal(fast[c].to_numpy().view(np.uint64), slow[c].to_numpy().view(np.uint64)), c


def test_most_groups_of_the_table_take_the_block_route():
    """The comparison above is not vacuous: most groups are plain, and the others are not."""
    passes = _pass_table(1)
    cfg = C.CellConfig(DEFAULT, "t", 0, 0.95, 0, {})
    groups = passes.groupby(C._GROUP_KEYS, sort=False).indices
    plain = C._plain_rows(groups, C._columns(passes), 0.95, cfg)
    assert 0.5 * len(groups) < len(plain) < len(groups)
    assert not any(math.isnan(r["ci_low"]) for r in plain.values())
