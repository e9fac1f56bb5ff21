"""Every threshold the analysis uses: one named value, one line of why, one place.

`Thresholds` is passed to the statistics and the flags; its fields become
papermill parameters (notebooks/report.ipynb) and command-line options
(`--min-obs`, `--spread-limit`, ...), and the report's appendix prints the values
used. Defaults are anchored on published practice, cited per field.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, fields


@dataclass(frozen=True)
class Thresholds:
    """Named thresholds with documented defaults (see each field's metadata `why`)."""

    alpha: float = field(
        default=0.05,
        metadata={
            "range": (0, 1, False, False),
            "why": "significance level of exact tests, family-wise level of the test for requests that depend on each other (per seat and date), and 1 - level of every CI",
        },
    )
    min_obs: int = field(
        default=50,
        metadata={
            "range": (2, 1000000000, True, True),
            "why": "below 50 observations a bootstrap CI of a skewed latency's mean covers too "
            "little (91.8% at n=20 for lognormal data when 95% is asked, 93.7% at n=50: "
            "in our coverage simulation); below it a run's within-run interval of a mean is kept (a t "
            "interval on equally weighted cosine averages of the series, flagged as few requests) and a "
            "quantile gets none",
        },
    )
    min_tail_obs: int = field(
        default=10,
        metadata={
            "range": (1, 1000000000, True, True),
            "why": "a tail quantile (p90..p99) needs this many observations beyond it, "
            "i.e. n*(1-q) >= 10, in the spirit of MLPerf's minimum query counts for tail latency",
        },
    )
    max_bootstrap_obs: int = field(
        default=20000,
        metadata={
            "range": (100, 1000000000, True, True),
            "why": "a within-run interval over more requests than this uses sectioning (30 contiguous "
            "sections, Nakayama 2014) instead of the cosine-average t interval (Lazarus, Lewis, Stock "
            "and Watson 2018) or Woodruff's quantile interval; at this size both are accurate",
        },
    )
    min_passes: int = field(
        default=5,
        metadata={
            "range": (1, 1000000, True, True),
            "why": "3 to 4 passes are 'few': report the range and median; "
            "5 passes give a t-interval 4 degrees of freedom",
        },
    )
    noise: float = field(
        default=0.02,
        metadata={
            "range": (0, 1, True, False),
            "why": "the noise band of means and medians: a ratio whose CI lies inside 1 +/- 2% is 'within noise' "
            "(criterion.rs noise_threshold defaults to 0.02); given alone on the command line, the one band of "
            "every statistic (tails included), as before the bands per statistic",
        },
    )
    # the bands per statistic: measured by benchmarks/band_study.py --cv-of (docs/statistics.md)
    noise_p90: float = field(
        default=0.03,
        metadata={
            "range": (0, 1, True, False),
            "why": "the noise band of p90 cells (3%): a pass's p90 varies 0.9-1.6x as much from pass to pass as "
            "its mean (median pass-to-pass CVs in two real captures with repeated passes and in simulated "
            "request-level seats of 200 and 1,000 requests a pass at a 2% pass CV, measured through the "
            "command line), so 1.5 x the means' 2%",
        },
    )
    noise_p95: float = field(
        default=0.04,
        metadata={
            "range": (0, 1, True, False),
            "why": "the noise band of p95 cells (4%): a pass's p95 varies 1.0-2.3x as much from pass to pass as "
            "its mean (same measurements), so 2 x the means' 2%",
        },
    )
    noise_p99: float = field(
        default=0.05,
        metadata={
            "range": (0, 1, True, False),
            "why": "the noise band of p99, min and max cells (5%): a pass's p99 varies 1.2-4.3x as much from pass "
            "to pass as its mean, latencies 1.5-3.6x (same measurements; an extreme at least as much), so "
            "2.5 x the means' 2%",
        },
    )
    cv_limit: float = field(
        default=0.10,
        metadata={
            "range": (0, 1000000.0, False, True),
            "why": "passes with a coefficient of variation above 10% are unstable "
            "(pyperf warns when the standard deviation exceeds 10% of the mean)",
        },
    )
    spread_limit: float = field(
        default=1.5,
        metadata={
            "range": (1, 1000000.0, True, True),
            "why": "max/min across passes above 1.5 is unstable (pyperf warns when "
            "min or max is more than 50% away from the mean)",
        },
    )
    drift_limit: float = field(
        default=0.05,
        metadata={
            "range": (0, 1000000.0, True, True),
            "why": "monotone movement across 3+ passes totalling more than 5% of the "
            "first pass is warm-up drift; judged by effect size since 3 passes "
            "cannot reach p < 0.05 (Mann-Kendall's smallest two-sided p at n=3 is 1/3)",
        },
    )
    cache_ratio: float = field(
        default=3.0,
        metadata={
            "range": (1, 1000000.0, False, True),
            "why": "a prefill figure more than 3x the same seat's fresh-prompt prefill is "
            "a prefix-cache hit, not prefill (the seeds' 95,941 vs 4,711 is 20x)",
        },
    )
    capped_share: float = field(
        default=0.10,
        metadata={
            "range": (0, 1, True, True),
            "why": "more than 10% of answers stopped at the token cap means the run measures truncated answers",
        },
    )
    reasoning_share: float = field(
        default=0.0,
        metadata={
            "range": (0, 1, True, False),
            "why": "any answer with an empty content field but delivered tokens is a "
            "client reading the wrong field; share above this value is flagged",
        },
    )
    reasoning_ttft_ratio: float = field(
        default=1.25,
        metadata={
            "range": (1, 1000000.0, True, True),
            "why": "where a harness times the first content token apart from TTFT, a first content token "
            "more than 1.25x later than TTFT (p50 or mean) means TTFT times the reasoning, not the "
            "answer; without reasoning the two are the same time",
        },
    )
    first_chunk_ratio: float = field(
        default=0.5,
        metadata={
            "range": (0, 1, False, True),
            "why": "a first token needs a forward pass over the prompt, at least about one decode step: "
            "a TTFT p50 below half the inter-token p50 of the same requests (or below half the "
            "time to the first chunk that carried a token) timed a chunk without a token",
        },
    )
    fit_headroom: float = field(
        default=0.10,
        metadata={
            "range": (0, 1, True, False),
            "why": "a checkpoint must leave at least 10% of one node's raw GPU memory "
            "for KV cache and activations to be a seat, not a lab result",
        },
    )
    min_effect: float = field(
        default=0.05,
        metadata={
            "range": (0, 10, False, True),
            "why": "the difference a comparison should be able to detect (5%: the size of the seeds' "
            "'+5%' claims); the flag for an under-sampled comparison says how many passes per seat that needs",
        },
    )
    failed_warn: float = field(
        default=0.01,
        metadata={
            "range": (0, 1, True, False),
            "why": "more than 1% of a run's requests failed: its figures are of the successful requests "
            "only (a 99% success objective is the usual floor for a serving SLO)",
        },
    )
    failed_critical: float = field(
        default=0.10,
        metadata={
            "range": (0, 1, True, False),
            "why": "more than 10% failed: the successful requests are not representative of the seat "
            "(the failures select which requests were measured)",
        },
    )
    lag1_limit: float = field(
        default=0.3,
        metadata={
            "range": (0, 1, True, False),
            "why": "a lag-1 autocorrelation of requests in send order above 0.3 leaves about half the "
            "effective observations, n(1-r)/(1+r) (Box & Jenkins); the within-run interval then "
            "uses blocks. The flag for dependent requests also needs the correlation significant under "
            "Holm's correction over the seat's passes of the date, at alpha",
        },
    )
    power: float = field(
        default=0.80,
        metadata={
            "range": (0, 1, False, False),
            "why": "power for the smallest detectable difference (Miller 2024, 'Adding Error Bars to Evals', uses 80%)",
        },
    )
    history_alpha: float = field(
        default=0.001,
        metadata={
            "range": (0, 1, False, False),
            "why": "the cumulative-sum (CUSUM) test's decision line is set for about 3 x 2m / 0.001 nights between false alarms per "
            "side (Siegmund's approximation, m the seat's cells that night; asv uses p < 0.002): under "
            "one false alarm per stable seat-year, measured in our simulation with heavy-tailed nights",
        },
    )
    history_window: int = field(
        default=64,
        metadata={
            "range": (2, 1000000, True, True),
            "why": "the reference level is the first 64 nights since the last change (Bencher's default "
            "sample size), then frozen: long enough for a stable spread, and a frozen reference lets "
            "slow drift accumulate in the CUSUM instead of being followed",
        },
    )
    history_prior_cv: float = field(
        default=0.05,
        metadata={
            "range": (0, 10, False, True),
            "why": "until a cell has enough earlier nights (history_min_level), nights are taken to differ by 5% "
            "(log SD), a stated assumption rather than a measurement: a dated row of the first nights "
            "is a t interval widened by it, so only a change well beyond night-to-night variation of "
            "that size is called (with 3 passes a night and Holm over 76 cells, about 1.3x)",
        },
    )
    history_min_level: int = field(
        default=5,
        metadata={
            "range": (2, 1000000, True, True),
            "why": "no cumulative-sum verdict until the reference has 5 nights: a spread from fewer is too uncertain "
            "to standardise against (the first nights are judged with the assumed night-to-night spread instead)",
        },
    )

    def as_dict(self) -> dict:
        """Plain dict of the values, in field order (for the appendix and JSON)."""
        return dataclasses.asdict(self)

    @classmethod
    def ranges(cls) -> dict[str, tuple]:
        """name -> (low, high, low included, high included): the values a threshold may take."""
        return {f.name: f.metadata["range"] for f in fields(cls)}

    @classmethod
    def describe(cls) -> list[tuple[str, object, str]]:
        """(name, default, why) for every threshold, for help texts and the appendix."""
        return [(f.name, f.default, f.metadata["why"]) for f in fields(cls)]

    def noise_band(self, statistic) -> float:
        """The noise band of a cell of this statistic (`NOISE_BAND_OF`; `noise` for any other)."""
        return float(getattr(self, NOISE_BAND_OF.get(str(statistic), "noise")))

    def bands(self) -> dict[str, float]:
        """{band field: value} of the noise bands, `noise` first (for the appendix and help texts)."""
        return {name: float(getattr(self, name)) for name in NOISE_BANDS}

    def replace(self, **changes) -> "Thresholds":
        """A copy with some values changed; unknown names raise TypeError."""
        return dataclasses.replace(self, **changes)


#: the noise-band fields, the means' and medians' first
NOISE_BANDS = ("noise", "noise_p90", "noise_p95", "noise_p99")
#: which band a statistic's comparisons use (a statistic not listed: `noise`)
NOISE_BAND_OF = {"p90": "noise_p90", "p95": "noise_p95", "p99": "noise_p99", "min": "noise_p99", "max": "noise_p99"}


def one_band_or_bands(given: dict) -> dict:
    """The noise bands of a command line or parameter set that gives some of `NOISE_BANDS` (None:
    not given): `noise` given alone sets every band (its meaning before the bands per statistic);
    a band given is that band; the rest keep their defaults (left out of the result)."""
    out = {k: float(v) for k, v in given.items() if k in NOISE_BANDS and v is not None}
    if "noise" in out and not any(k in out for k in NOISE_BANDS[1:]):
        out.update({k: out["noise"] for k in NOISE_BANDS[1:]})
    return out


DEFAULT = Thresholds()


@dataclass(frozen=True)
class PrimaryCell:
    """The cell a seat pair's headline comes from, declared before looking at the results.

    Default: aggregate throughput (``output_tok_s``), its mean, of the ``decode``
    workload, at the highest concurrency both seats were measured at. When the pair
    shares no such cell, the first metric of `fallback` they share, in that order.
    """

    metric: str = "output_tok_s"
    statistic: str = "mean"
    workload: str | None = "decode"
    concurrency: int | None = None  # None: the highest shared
    fallback: tuple = (
        "output_tok_s",
        "decode_tok_s_per_stream",
        "prefill_tok_s",
        "ttft_ms",
        "e2e_latency_ms",
        "itl_ms",
        "request_rate",
        "engine_init_s",
    )
