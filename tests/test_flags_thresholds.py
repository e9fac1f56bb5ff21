"""Every threshold through the whole pipeline (benchreport.pipeline.analyse), set away from its default:
each changes what it governs (a flag appears, disappears or changes severity, or the statistics
change), and every flag that records a threshold records the value used."""

from __future__ import annotations

from dataclasses import fields

import pytest

from benchreport.load import load
from benchreport.pipeline import Options, analyse
from benchreport.thresholds import DEFAULT, Thresholds
from flag_fixtures import EXAMPLE, ROOT, m_, mkrun, write_runs

HARNESS = ROOT / "tests" / "fixtures" / "harness"
N_BOOT = 100

pytestmark = pytest.mark.skipif(not (EXAMPLE.exists() and HARNESS.exists()), reason="example data not present")


def _extra_runs() -> list[dict]:
    """What data/example and the harness fixtures lack: failed requests in a run of 250 requests (8 failed:
    3.2%), answers 30% of which have an empty content field, a TTFT far below one inter-token gap, and a
    prefill cache hit that only its ratio
    to the seat's fresh figure gives away (95,941 against 4,711 tok/s, in a pass of its own)."""
    ok = [
        {
            "workload": "decode",
            "concurrency": 4,
            "ttft_ms": 50 + i % 7,
            "e2e_latency_ms": 900 + (i * 37) % 101,
            "output_tokens": 200,
            "finish_reason": "stop",
        }
        for i in range(242)
    ]
    failed = [{"workload": "decode", "concurrency": 4, "error": "HTTP 500", "finish_reason": "error"}] * 8
    answers = [
        {"workload": "decode", "concurrency": 1, "output_tokens": 300, "reasoning_tokens": 300, "content_chars": 0}
    ] * 3 + [{"workload": "decode", "concurrency": 1, "output_tokens": 300, "content_chars": 900}] * 7
    prefill = [
        m_(4711, "prefill_tok_s", workload="prefill", concurrency=None, fresh_prompt=True, context_tokens=31000),
        m_(95941, "prefill_tok_s", workload="prefill", concurrency=None),
    ]
    # a TTFT of 3 ms against gaps of 20 ms between tokens: a chunk without a token was timed
    chunked = [
        {
            "workload": "decode",
            "concurrency": 2,
            "ttft_ms": 3.0 + i % 3,
            "itl_ms": 20.0 + i % 5,
            "e2e_latency_ms": 700.0,
            "output_tokens": 32,
        }
        for i in range(12)
    ]
    return [
        mkrun("failing-seat", 1, requests=ok + failed),
        mkrun("reasoning-seat", 1, requests=answers),
        mkrun("chunk-seat", 1, requests=chunked),
        mkrun("cache-seat", 1, measurements=prefill[:1]),
        mkrun("cache-seat", 2, measurements=prefill[1:]),
    ]


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    extra = write_runs(_extra_runs(), tmp_path_factory.mktemp("extra") / "runs")
    # the first five harness captures (what each threshold below is checked against)
    folders = [HARNESS / n for n in ("aiperf", "guidellm", "guidellm-reasoning", "lmeval", "vllm")]
    result = load([str(EXAMPLE), *map(str, folders), str(extra)], progress=False)
    assert not result.refused
    return result


@pytest.fixture(scope="module")
def default(loaded):
    return analyse(loaded, Options(n_boot=N_BOOT))


def rows(a, code, **evidence):
    f = a.flags[a.flags["code"] == code]
    return [r for _, r in f.iterrows() if all(r["evidence"].get(k) == v for k, v in evidence.items())]


def seats_of(a, code, **evidence) -> set:
    return {s for r in rows(a, code, **evidence) for s in r["seats"]}


def severities(a, code) -> list[str]:
    return sorted(r["severity"] for r in rows(a, code))


def n_cells(a, code, **evidence) -> int:
    return sum(len(r["evidence"]["cells"]) for r in rows(a, code, **evidence))


def prefill_values(a, seat) -> list[float]:
    c = a.cells[(a.cells["seat"] == seat) & (a.cells["metric"] == "prefill_tok_s")]
    return sorted(float(v) for vals in c["values"].astype(str) for v in vals.split(";"))


def _alpha(d, c):
    # the intervals the analysis computes are at 1 - alpha (published ones keep their own level)
    assert (c.cells["ci_level"] == 0.7).any() and not (d.cells["ci_level"] == 0.7).any()
    assert rows(c, "exam.not_significant") and all(
        r["evidence"]["thresholds"]["alpha"] == 0.3 for r in rows(c, "exam.not_significant")
    )
    return True


def _max_bootstrap_obs(d, c):
    def methods(a):
        return set(a.cells.loc[a.cells["seat"] == "failing-seat", "within_method"].dropna())

    assert not any("sectioning" in m for m in methods(d)) and any("sectioning" in m for m in methods(c))
    return True


def _cache_ratio(d, c):
    assert "cache-seat" in seats_of(d, "trap.prefix_cache") and "cache-seat" not in seats_of(c, "trap.prefix_cache")
    assert prefill_values(d, "cache-seat") == [4711.0] and prefill_values(c, "cache-seat") == [4711.0, 95941.0]
    # marked not fresh: excluded at any ratio, the ratio no longer a reason
    (nvfp4,) = [r for r in rows(c, "trap.prefix_cache") if r["severity"] == "critical"]
    assert nvfp4["evidence"]["reasons"] == ["not_fresh"]
    return True


def _power(d, c):
    # the smallest detectable exam difference grows with the power asked for, and the flags say so
    assert (c.exam_deltas["mde"].dropna() > d.exam_deltas["mde"].dropna()).all()
    assert all(r["evidence"]["thresholds"]["power"] == 0.95 for r in rows(c, "sample.underpowered"))
    assert len(rows(c, "sample.underpowered", kind="exam")) >= len(rows(d, "sample.underpowered", kind="exam")) > 0
    return True


#: threshold -> (value away from its default, what must change between the default analysis and this one)
CHANGED = {
    "alpha": (0.3, _alpha),
    "min_obs": (10, lambda d, c: rows(d, "sample.small_n", kind="ci") and not rows(c, "sample.small_n", kind="ci")),
    "min_tail_obs": (
        2,
        lambda d, c: 0 < n_cells(c, "sample.small_n", kind="tail") < n_cells(d, "sample.small_n", kind="tail"),
    ),
    "max_bootstrap_obs": (100, _max_bootstrap_obs),
    "min_passes": (3, lambda d, c: rows(d, "sample.few_passes") and not rows(c, "sample.few_passes")),
    "noise": (
        0.5,
        lambda d, c: (
            severities(d, "import.figure_mismatch") == ["warn", "warn"]
            and severities(c, "import.figure_mismatch") == ["info", "info"]
        ),
    ),
    "cv_limit": (0.01, lambda d, c: n_cells(c, "drift.unstable") > n_cells(d, "drift.unstable")),
    "spread_limit": (1.05, lambda d, c: n_cells(c, "drift.unstable") > n_cells(d, "drift.unstable")),
    "drift_limit": (0.5, lambda d, c: rows(d, "drift.warmup") and not rows(c, "drift.warmup")),
    "cache_ratio": (25.0, _cache_ratio),
    "capped_share": (
        0.95,
        lambda d, c: (
            "gb10x4-glm-5.3-flash-2026-10-25-entry" in seats_of(d, "trap.capped_answers")
            and "gb10x4-glm-5.3-flash-2026-10-25-entry" not in seats_of(c, "trap.capped_answers")
        ),
    ),
    "reasoning_share": (
        0.5,
        lambda d, c: (
            "reasoning-seat" in seats_of(d, "trap.reasoning_field")
            and "reasoning-seat" not in seats_of(c, "trap.reasoning_field")
        ),
    ),
    # guidellm/ and aiperf/ (seat tiny-gpt2-s1): first content 2-3.6x later than TTFT
    "reasoning_ttft_ratio": (
        5.0,
        lambda d, c: "tiny-gpt2-s1" in seats_of(d, "trap.reasoning_ttft") and not seats_of(c, "trap.reasoning_ttft"),
    ),
    "first_chunk_ratio": (
        0.1,
        lambda d, c: seats_of(d, "trap.first_chunk") == {"chunk-seat"} and not seats_of(c, "trap.first_chunk"),
    ),
    "fit_headroom": (
        0.2,
        lambda d, c: (
            seats_of(c, "fit.exceeds_node") - seats_of(d, "fit.exceeds_node") == {"glm-5.3-flash-exl3-4.0bpw-1node"}
        ),
    ),
    "min_effect": (
        0.01,
        lambda d, c: (
            rows(d, "sample.underpowered", kind="comparison") and not rows(c, "sample.underpowered", kind="comparison")
        ),
    ),
    "failed_warn": (
        0.05,
        lambda d, c: severities(d, "requests.failed") == ["warn"] and severities(c, "requests.failed") == ["info"],
    ),
    "failed_critical": (
        0.02,
        lambda d, c: severities(d, "requests.failed") == ["warn"] and severities(c, "requests.failed") == ["critical"],
    ),
    "lag1_limit": (
        0.9,
        lambda d, c: rows(d, "sample.correlated_requests") and not rows(c, "sample.correlated_requests"),
    ),
    "power": (0.95, _power),
}


def _nightly_runs() -> list[dict]:
    """One seat measured on 20 nights (one pass each, 0.4% night-to-night noise), 6% slower from night 14."""
    import numpy as np

    noise = np.exp(np.random.default_rng(14).normal(0, 0.004, 20))
    return [
        mkrun(
            "nightly-seat",
            1,
            date=f"2026-03-{k + 1:02d}",
            measurements=[m_(round(1000 * noise[k] * (0.94 if k >= 13 else 1.0), 2))],
        )
        for k in range(20)
    ]


@pytest.fixture(scope="module")
def nightly(tmp_path_factory):
    result = load([str(write_runs(_nightly_runs(), tmp_path_factory.mktemp("nightly") / "runs"))], progress=False)
    assert not result.refused
    return result


def _regression_dates(a) -> list[str]:
    return [d for r in rows(a, "history.regression") for d in r["evidence"]["dates"]]


#: the history thresholds, swept on a seat measured night after night (the data above have no history)
def _step_found(a) -> bool:
    """The 6% step from 2026-03-14 is one regression, found on one of its first nights."""
    dates = _regression_dates(a)
    return len(dates) == 1 and "2026-03-14" <= dates[0] <= "2026-03-17"


HISTORY_CHANGED = {
    "history_alpha": (1e-9, lambda d, c: _step_found(d) and not _regression_dates(c)),
    "history_window": (3, lambda d, c: d.history["level_nights"].max() > 3 and c.history["level_nights"].max() == 3),
    # a level of 15 nights takes in two nights of the step: it is found later, against that level
    "history_min_level": (
        15,
        lambda d, c: (
            _step_found(d)
            and _regression_dates(c) > _regression_dates(d)
            and (c.history["verdict"].iloc[:15] == "insufficient_data").all()
        ),
    ),
}


#: thresholds of the statistics alone, swept in their own test file
STATS_CHANGED = {
    "history_prior_cv": "tests/test_stats_compare.py::test_history_prior_cv_governs_the_first_nights",
    **{
        band: "tests/test_noise_bands.py::test_tail_rows_use_their_band"
        for band in ("noise_p90", "noise_p95", "noise_p99")
    },
}


def test_every_threshold_is_swept_away_from_its_default():
    assert set(CHANGED) | set(HISTORY_CHANGED) | set(STATS_CHANGED) == {f.name for f in fields(Thresholds)}
    for name, (value, _) in {**CHANGED, **HISTORY_CHANGED}.items():
        assert value != getattr(DEFAULT, name), name


@pytest.mark.parametrize("name", sorted(HISTORY_CHANGED))
def test_history_threshold_changes_what_it_governs(name, nightly):
    value, check = HISTORY_CHANGED[name]
    default = analyse(nightly, Options(n_boot=N_BOOT))
    changed = analyse(nightly, Options(n_boot=N_BOOT, thresholds=DEFAULT.replace(**{name: value})))
    assert check(default, changed), f"{name} = {value} did not change what it governs"
    recorded = [ev["thresholds"][name] for ev in changed.flags["evidence"] if name in ev.get("thresholds", {})]
    assert all(v == value for v in recorded), name
    assert all(
        ev["thresholds"][name] == getattr(DEFAULT, name)
        for ev in default.flags["evidence"]
        if name in ev.get("thresholds", {})
    )


@pytest.mark.parametrize("name", sorted(CHANGED))
def test_threshold_changes_what_it_governs(name, loaded, default):
    value, check = CHANGED[name]
    changed = analyse(loaded, Options(n_boot=N_BOOT, thresholds=DEFAULT.replace(**{name: value})))
    assert check(default, changed), f"{name} = {value} did not change what it governs"
    recorded = [ev["thresholds"][name] for ev in changed.flags["evidence"] if name in ev.get("thresholds", {})]
    assert all(v == value for v in recorded), name
    assert changed.excluded.cache_ratio == changed.options.thresholds.cache_ratio
