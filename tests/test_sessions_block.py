"""A date's session statistics (n, mean, within SS, date per cell key) made for all the groups of one
size at once are, bit for bit, those of the one-group loop they replace (kept here as the reference)."""

from __future__ import annotations

import struct

import numpy as np
import pandas as pd
import pytest

from benchreport.stats.sessions import KEY, _date_stats, plain_key


def _reference(passes: pd.DataFrame, acc: dict) -> None:
    """The loop of before: each group's values taken in table order, reduced as a 1-D array."""
    v = pd.to_numeric(passes["value"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    ok = np.isfinite(v) & (v > 0)
    p = passes.loc[ok, list(KEY) + ["date"]].astype(object)
    log_values = np.log(v[ok])
    codes = p.groupby(list(KEY) + ["date"], dropna=False, sort=False).ngroup().to_numpy()
    order = np.argsort(codes, kind="stable")
    counts = np.bincount(codes)
    ends = np.cumsum(counts)
    keys = p.to_numpy(dtype=object)[order[ends - counts]]
    for key, end, n in zip(keys, ends.tolist(), counts.tolist()):
        x = log_values[order[end - n : end]]
        mean = x.mean()
        acc.setdefault(tuple(plain_key(part) for part in key[:-1]), []).append(
            (x.shape[0], float(mean), float(((x - mean) ** 2).sum()), str(key[-1]))
        )


def _bits(acc: dict) -> list:
    return [(k, [(n, struct.pack("<d", m), struct.pack("<d", s), d) for n, m, s, d in days]) for k, days in acc.items()]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_session_statistics_made_a_size_at_a_time_are_the_loops(seed):
    rng = np.random.default_rng(seed)
    rows = []
    for g in range(700):
        k = int(rng.choice([1, 2, 3, 5, 5, 7, 8, 9, 16, 33]))
        values = 10.0 ** rng.uniform(-5, 5) * rng.lognormal(0, rng.choice([1e-9, 0.05, 1.0]), k)
        if g % 17 == 0:
            values[0] = -1.0  # left out, as a non-positive value is
        for i in range(k):
            rows.append(
                dict(
                    seat=f"s{g % 9}",
                    harness=None if g % 4 else "h",
                    probe=None,
                    load_id=None if g % 3 else "L",
                    workload="decode",
                    concurrency=None if g % 13 == 0 else int(g % 6),
                    metric=["output_tok_s", "ttft_ms"][g % 2],
                    statistic=["mean", "p99"][(g // 2) % 2],
                    date=f"2026-02-{1 + g % 5:02d}",
                    value=values[i],
                )
            )
    frame = pd.DataFrame(rows).sample(frac=1.0, random_state=seed).reset_index(drop=True)
    frame["concurrency"] = pd.array(frame["concurrency"].tolist(), dtype="Int64")
    got, want = {}, {}
    _date_stats(frame, got)
    _reference(frame, want)
    assert len(want) > 50 and sum(len(days) for days in want.values()) > 200
    assert list(got) == list(want)
    assert _bits(got) == _bits(want)
    assert repr(got) == repr(want)  # the same types: n an int, the floats Python floats
