"""Every fact about each flag code, in one table: severities, group, what triggers it, where it is told.

spec/flags.md names the codes; they are stable (more may be added, none renamed). Each
`Code` says which severities the code can have, the group of "What these numbers will not
carry" it belongs to, what triggers it (one line, for the docs and the appendix), where the
report's flag list puts it (`priority`, lower first; None: after the listed ones, by
severity), its title in section 5 when it is a measurement trap, and how the abstract names
its family. The order of `CODES` is the reading order inside a group of the limitations
section. `compute` checks every finding's severity against it, `text` groups and orders the
limitations section by it, and the report reads `priority_of`, `trap_codes` and `topic`.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Code", "CODES", "GROUPS", "SEVERITIES", "group_of", "priority_of", "trap_codes"]

#: most severe first
SEVERITIES = ("critical", "warn", "info")

#: (group, title) in the order "What these numbers will not carry" reads
GROUPS = [
    ("sample", "Sample sizes"),
    ("stability", "Stability"),
    ("history", "History across dates"),
    ("traps", "Measurement traps"),
    ("comparisons", "Comparisons"),
    ("exams", "Exams"),
    ("deployment", "Deployment"),
    ("faults", "Faults and defects"),
    ("provenance", "Provenance"),
    ("other", "Other findings"),
]


@dataclass(frozen=True)
class Code:
    """The facts of one flag code."""

    code: str
    severities: tuple[str, ...]
    group: str
    trigger: str
    topic: str
    priority: int | None = None
    trap_title: str | None = None


def _c(code, severities, group, trigger, topic, priority=None, trap_title=None) -> tuple[str, Code]:
    return code, Code(code, tuple(severities), group, trigger, topic, priority, trap_title)


CODES: dict[str, Code] = dict(
    [
        _c("sample.single_pass", ("warn",), "sample", "a cell measured in one pass only", "sample sizes", 15, None),
        _c("sample.two_passes", ("warn",), "sample", "a cell measured in two passes", "sample sizes", 14, None),
        _c(
            "sample.few_passes",
            ("info",),
            "sample",
            "a cell measured in 3 to min_passes-1 passes",
            "sample sizes",
            16,
            None,
        ),
        _c(
            "sample.mixed_runs",
            ("warn",),
            "sample",
            "runs pooled as passes of one cell differ in harness, probe, cap, temperature, thinking or settings",
            "sample sizes",
            None,
            None,
        ),
        _c(
            "sample.mixed_conditions",
            ("warn",),
            "sample",
            "one stated probe names runs that sent different loads (endpoint, lengths, arrival, cap, ...): each load is its own cell",
            "sample sizes",
            None,
            None,
        ),
        _c(
            "sample.small_n",
            ("warn", "info"),
            "sample",
            "a CI from fewer than min_obs observations (warn when bootstrapped), or a tail quantile with n*(1-q) < min_tail_obs (warn)",
            "sample sizes",
            17,
            None,
        ),
        _c(
            "sample.correlated_requests",
            ("info",),
            "sample",
            "requests of one pass with lag-1 autocorrelation above lag1_limit and significant (one-sided Ljung-Box) under Holm's correction over the seat's passes and metrics of that date, at alpha",
            "sample sizes",
            None,
            None,
        ),
        _c(
            "sample.one_session",
            ("info",),
            "sample",
            "every pass of a seat with a cell of 2+ passes ran on one date (one session): its intervals leave out day-to-day variation",
            "sample sizes",
            None,
            None,
        ),
        _c(
            "sample.few_sessions",
            ("info",),
            "sample",
            "a seat measured on two dates only: too few to estimate the day effect, so its cells' intervals are over their latest date's passes and leave it out",
            "sample sizes",
            None,
            None,
        ),
        _c(
            "sample.underpowered",
            ("info",),
            "sample",
            "a comparison without a verdict (no run-to-run variation measured, or a CI not clear of the noise band), or an exam delta below its smallest detectable difference; states the passes or the difference needed",
            "sample sizes",
            12,
            None,
        ),
        _c(
            "drift.warmup",
            ("warn",),
            "stability",
            "values monotone across >= 3 passes of one day, total change > drift_limit (and beyond the passes' own sampling error where the data give it)",
            "stability across passes",
            3,
            "Warm-up drift across passes",
        ),
        _c(
            "drift.unstable",
            ("warn",),
            "stability",
            "passes of one cell with max/min > spread_limit or CV > cv_limit (and heterogeneous beyond sampling error where the data give it)",
            "stability across passes",
            4,
            "Passes that disagree",
        ),
        _c(
            "warmup.included",
            ("info",),
            "stability",
            "runs that say warm-up requests were measured",
            "warm-up",
            None,
            None,
        ),
        _c(
            "warmup.unknown",
            ("info",),
            "stability",
            "runs that do not say whether warm-up was excluded",
            "warm-up",
            21,
            "Warm-up exclusion not recorded",
        ),
        _c(
            "history.regression",
            ("warn",),
            "history",
            "a date whose value is worse than the cell's steady level beyond the noise band, p < history_alpha after Bonferroni over the seat's cells that date",
            "history across dates",
            None,
            None,
        ),
        _c(
            "history.improvement",
            ("info",),
            "history",
            "a date whose value is better than the cell's steady level beyond the noise band, p < history_alpha after Bonferroni over the seat's cells that date",
            "history across dates",
            None,
            None,
        ),
        _c(
            "trap.prefix_cache",
            ("critical", "warn"),
            "traps",
            "a prefill figure from a prompt that was not fresh, from a run whose requests report cached prompt tokens, or > cache_ratio x the seat's fresh prefill (critical, excluded); cached prompt tokens in a run without prefill figures (warn)",
            "measurement traps",
            1,
            "A prefix-cache hit reported as prefill",
        ),
        _c(
            "trap.reasoning_field",
            ("warn",),
            "traps",
            "share of answers with empty content but delivered tokens > reasoning_share",
            "measurement traps",
            5,
            "Tokens delivered in the reasoning field",
        ),
        _c(
            "trap.reasoning_ttft",
            ("warn",),
            "traps",
            "requests whose first content token (a harness's time to first output/content token) came after their TTFT, the first content token's p50 or mean > reasoning_ttft_ratio x TTFT's: TTFT times the reasoning, not the answer",
            "measurement traps",
            None,
            "A time to first token that times the reasoning",
        ),
        _c(
            "trap.first_chunk",
            ("warn",),
            "traps",
            "TTFT p50 < first_chunk_ratio x the p50 time to the first chunk that carried a token (streams with one chunk more than tokens), or x the ITL p50 of the same requests: TTFT timed an empty or role-only chunk, not a first token",
            "measurement traps",
            None,
            "A time to first token that times an empty first chunk",
        ),
        _c(
            "trap.capped_answers",
            ("warn",),
            "traps",
            "share of answers stopped at the token cap > capped_share",
            "measurement traps",
            6,
            "Answers stopped at the token cap",
        ),
        _c(
            "compare.no_incumbent",
            ("warn",),
            "comparisons",
            "seats measured on a day the incumbent was not measured with the same harness and probe, or no incumbent at all",
            "comparisons",
            0,
            None,
        ),
        _c(
            "compare.cross_model",
            ("warn", "info"),
            "comparisons",
            "compared seats serve different models (info when both took a common exam)",
            "comparisons",
            8,
            None,
        ),
        _c(
            "compare.not_like_for_like",
            ("warn", "info"),
            "comparisons",
            "compared runs differ in harness, probe, answer cap, temperature, thinking or seat settings (info when a setting is stated for one side only)",
            "comparisons",
            9,
            None,
        ),
        _c(
            "harness.disagree",
            ("warn",),
            "comparisons",
            "two harnesses measured one seat's cell under one load and differ beyond their intervals, unexplained by their definitions (tables/agreement.csv)",
            "harness agreement",
            None,
            None,
        ),
        _c(
            "harness.untested",
            ("info",),
            "comparisons",
            "two harnesses measured one seat's cell under one load, their figures are more than cv_limit apart and one has no interval (one pass of a figure no request record holds): not tested (tables/agreement.csv)",
            "harness agreement",
            None,
            None,
        ),
        _c(
            "compare.missing_metric",
            ("warn", "info"),
            "comparisons",
            "a figure in another form on the other side (warn) or on one side only (info)",
            "comparisons",
            10,
            None,
        ),
        _c(
            "compare.stale_scores",
            ("warn",),
            "exams",
            "exam scores measured on another date or placement than the runs",
            "comparisons",
            11,
            None,
        ),
        _c(
            "exam.not_significant",
            ("info",),
            "exams",
            "exam delta with p >= alpha (or Holm-adjusted p >= alpha)",
            "exams",
            13,
            None,
        ),
        _c(
            "exam.counts_only",
            ("info",),
            "exams",
            "exam delta tested unpaired because only counts are known",
            "exams",
            20,
            None,
        ),
        _c(
            "exam.score_not_a_count",
            ("warn",),
            "exams",
            "a 0-100 score given without counts that is no whole number of its stated items: its deltas are not tested",
            "exams",
            19,
            None,
        ),
        _c(
            "fit.exceeds_node",
            ("warn",),
            "deployment",
            "checkpoint bytes > (1 - fit_headroom) x one node's raw GPU memory",
            "whether a seat fits one node",
            2,
            None,
        ),
        _c(
            "license.noncommercial",
            ("warn",),
            "deployment",
            "a component licence forbids commercial use",
            "licences",
            7,
            None,
        ),
        _c(
            "license.unknown",
            ("info",),
            "deployment",
            "a component licence is absent, NOASSERTION or unknown",
            "licences",
            None,
            None,
        ),
        _c("fault.recorded", ("warn",), "faults", "an event of kind fault or crash", "faults", 19, None),
        _c(
            "fault.unreproduced", ("info",), "faults", "a fault or crash recorded as not reproduced", "faults", 18, None
        ),
        _c("defect.open", ("warn",), "faults", "an event of kind defect", "open defects", None, None),
        _c(
            "requests.failed",
            ("critical", "warn", "info"),
            "faults",
            "failed requests: critical above failed_critical of a run, warn above failed_warn",
            "failed requests",
            None,
            None,
        ),
        _c(
            "requests.missing",
            ("warn",),
            "faults",
            "a run whose files hold fewer request records than its harness was asked to send (or must have sent: one per llmperf worker thread)",
            "missing requests",
            None,
            None,
        ),
        _c(
            "import.assumed",
            ("info",),
            "provenance",
            "a run whose importer assumed seat, pass or date",
            "provenance",
            None,
            None,
        ),
        _c(
            "sample.repeated_figure",
            ("warn",),
            "provenance",
            "one run reports the same figure (cell, condition and context) more than once with different values",
            "provenance",
            None,
            None,
        ),
        _c(
            "import.figure_mismatch",
            ("warn", "info"),
            "provenance",
            "a reported figure its own request records do not reproduce beyond rounding (warn beyond the noise band, or when a count or error rate of the harness's summary contradicts its records)",
            "provenance",
            None,
            None,
        ),
    ]
)


def group_of(code: str, evidence=None) -> str:
    """The limitations group of a flag (an exam's power note reads with the exams)."""
    if code == "sample.underpowered" and isinstance(evidence, dict) and evidence.get("kind") == "exam":
        return "exams"
    return CODES[code].group if code in CODES else "other"


def priority_of(code: str) -> int:
    """Where the report's flag list puts a code: its priority, else after every listed one."""
    p = CODES[code].priority if code in CODES else None
    return len(CODES) if p is None else p


def trap_codes() -> list[str]:
    """The codes section 5 tells as measurement traps, in the order it tells them."""
    return [c.code for c in CODES.values() if c.trap_title]
