"""Checks of a harness's own figures against ours from the files read (`Check`), and the notes
that say which agree; the importers add them to their drafts (`benchreport.load.harness._common`)
and the `import.figure_mismatch` and `requests.missing` flags read the ones that differ."""

from __future__ import annotations

from dataclasses import dataclass

from benchreport.format import printed_rounding

__all__ = ["CHECK_WORDS", "COUNT_STATISTICS", "Check", "check_notes"]

#: how notes name a checked figure
CHECK_WORDS = {
    "ttft_ms": "TTFT",
    "itl_ms": "ITL",
    "e2e_latency_ms": "request latency",
    "output_tok_s": "output throughput",
    "request_rate": "request rate",
    "decode_tok_s_per_stream": "per-stream decode",
    "requests": "successful request count",
    "failed": "failed request count",
    "trials": "trial count",
    "sent": "requests sent",
    "total": "request count",
    "error_rate": "error rate",
}

#: statistics of checks on counts: exact quantities, any difference a contradiction (warn)
COUNT_STATISTICS = ("count", "share")


@dataclass
class Check:
    """A figure the harness wrote (in an aggregate or a summary) against ours from the data read.

    `reported` is the harness's figure in the native unit, `recomputed` ours; `against` names the
    harness's file and figure set, `basis` how ours was obtained. They agree when they differ by
    no more than the harness figure's printed rounding (`benchreport.format.printed_rounding`, the
    tolerance of the per-pass comparison behind `import.figure_mismatch`), plus float noise.

    Checks of the harness's summary against its own records (issue 26): statistic `count` (a
    request count, exact), or `share` (a rate such as genai-bench's `error_rate`, of `of`
    requests: it agrees when it names the same whole number of them, within its printed
    rounding; a printed 0 or 1 is exact). `field` is the harness's own key, so a contradiction
    names it. Metric `sent` is the requests the harness was asked to send (or, `at_least`, must
    have sent) against the records its files hold: fewer records is `requests.missing`, not a
    figure mismatch; more is no contradiction (a harness may overshoot its target).
    """

    against: str
    workload: str
    concurrency: int | None
    metric: str
    statistic: str
    reported: float
    recomputed: float
    basis: str
    field: str | None = None
    of: int | None = None
    at_least: bool = False

    @property
    def agrees(self) -> bool:
        if self.metric == "sent":
            return self.recomputed >= self.reported
        if self.statistic == "share" and self.of:
            printed = printed_rounding(self.reported)
            tol = (0.5 / self.of) + (printed if printed < 0.5 else 0.0) + 1e-9
            return abs(self.reported - self.recomputed) <= tol
        tol = printed_rounding(self.reported) + 1e-9 * abs(self.reported)
        return abs(self.reported - self.recomputed) <= tol

    def words(self) -> str:
        name = CHECK_WORDS.get(self.metric, self.metric)
        return name if self.statistic in COUNT_STATISTICS else f"{name} {self.statistic}"

    def as_dict(self, base: str) -> dict:
        """The check for the runs table (`figure_checks`), its workload with the base prefixed."""
        out = {
            "against": self.against,
            "workload": base + self.workload,
            "concurrency": self.concurrency,
            "metric": self.metric,
            "statistic": self.statistic,
            "label": self.words(),
            "reported": self.reported,
            "recomputed": self.recomputed,
            "basis": self.basis,
        }
        if self.field is not None:
            out["field"] = self.field
        if self.of is not None:
            out["of"] = self.of
        if self.at_least:
            out["at_least"] = True
        return out


def check_notes(checks: list[Check]) -> list[str]:
    """One note per harness figure set: which figures ours reproduce, and which differ."""
    notes = []
    for against in dict.fromkeys(c.against for c in checks):
        mine = [c for c in checks if c.against == against]
        ok = [c for c in mine if c.agrees]
        bad = [c for c in mine if not c.agrees]
        basis = "; ".join(dict.fromkeys(c.basis for c in mine))
        if ok:
            notes.append(
                f"checked against {against}: {', '.join(dict.fromkeys(c.words() for c in ok))} "
                f"agree with ours ({basis})"
            )
        if bad:
            diffs = ", ".join(
                f"{c.words()}{f' (`{c.field}`)' if c.field else ''} {c.reported:.6g} vs ours {c.recomputed:.6g}"
                for c in bad[:4]
            )
            notes.append(f"{against} differs from ours: {diffs}" + (" and more" if len(bad) > 4 else ""))
    return notes
