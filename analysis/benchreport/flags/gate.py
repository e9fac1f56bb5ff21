"""`--fail-on` as a nightly gate: which flags meet it, and which of those are new since a
reference (the previous build's flags.json), so that a standing flag is said, not re-fired.

    gate = judge_gate(records, "new-critical", previous)   # previous: a list of flag records, or None
    gate.met            # exit 3?
    gate_lines(gate)    # what a scheduled job prints: the new flags, then the standing ones

A flag is identified by its code and its subject (its seats and its cell), never its text: the
same failed-request share of the same seat, worded with tonight's figures, is the same flag.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

__all__ = ["FAIL_ON_LEVELS", "Gate", "flag_key", "flag_line", "judge_gate", "gate_lines", "new_and_standing"]

#: the severities each --fail-on level fails on; a "new-" level only on flags the reference lacks
_SEVERITIES = {"warn": ("critical", "warn"), "critical": ("critical",)}
FAIL_ON_LEVELS = ("warn", "critical", "new-warn", "new-critical")

#: at most this many flags are named in each list of `gate_lines` (the rest are counted)
SHOWN = 20


def flag_key(record: dict) -> str:
    """A flag's identity across builds: its code, seats (as a set) and cell, as one string."""
    seats = record.get("seats") or []
    seats = sorted(map(str, seats if isinstance(seats, (list, tuple)) else [seats]))
    cell = record.get("cell") or None
    return json.dumps([str(record.get("code")), seats, cell], sort_keys=True, default=str)


def new_and_standing(records: list[dict], previous: list[dict] | None) -> tuple[list[dict], list[dict]]:
    """`records` split into those `previous` did not raise and those it did (same `flag_key`);
    with no reference (None: the first build) every flag is new."""
    if previous is None:
        return list(records), []
    before = {flag_key(f) for f in previous}
    new = [f for f in records if flag_key(f) not in before]
    standing = [f for f in records if flag_key(f) in before]
    return new, standing


@dataclass(frozen=True)
class Gate:
    """`--fail-on LEVEL` judged: the flags at its severities, new and standing (`standing` is empty
    when there was no reference), and whether it is met."""

    level: str
    new: list
    standing: list
    has_reference: bool

    @property
    def met(self) -> bool:
        """A "new-" level is met by a new flag only; a plain level by any flag at its severities."""
        return bool(self.new) if self.level.startswith("new-") else bool(self.new or self.standing)


def judge_gate(records: list[dict], level: str, previous: list[dict] | None) -> Gate:
    """The gate `--fail-on LEVEL` over the flag `records`, against the reference `previous`."""
    if level not in FAIL_ON_LEVELS:
        raise ValueError(f"`level` must be one of {', '.join(FAIL_ON_LEVELS)}; got {level!r}")
    wanted = _SEVERITIES[level.removeprefix("new-")]
    hits = sorted((f for f in records if f.get("severity") in wanted), key=lambda f: f.get("severity") != "critical")
    new, standing = new_and_standing(hits, previous)
    return Gate(level, new, standing, previous is not None)


def flag_line(record: dict) -> str:
    """One flag on one line: severity, code, [seats], (cell), the message's first sentence."""
    seats = record.get("seats")
    seats = ", ".join(map(str, seats)) if isinstance(seats, (list, tuple)) else str(seats or "")
    message = " ".join(str(record.get("message") or "").split())
    first = message.split(". ")[0].rstrip(".")
    first = first if len(first) <= 200 else first[:199] + "\u2026"
    where = _cell_words(record.get("cell") or {})
    return (
        f"{record.get('severity')} {record.get('code')}"
        + (f" [{seats}]" if seats else "")
        + (f" ({where})" if where else "")
        + f": {first}"
    )


def _cell_words(cell: dict) -> str:
    """A flag's cell as `decode c=8 ttft_ms:p99` (the statistic left out when it is the mean)."""
    words = [str(cell["workload"])] if cell.get("workload") else []
    if cell.get("concurrency") is not None:
        words.append(f"c={cell['concurrency']}")
    if cell.get("metric"):
        stat = cell.get("statistic")
        words.append(str(cell["metric"]) + (f":{stat}" if stat and stat != "mean" else ""))
    return " ".join(words)


def gate_lines(gate: Gate, reference: str | None = "the previous build") -> list[str]:
    """What a job prints for its gate: a head line (met or not, counts), then the new flags and the
    standing ones, each named (at most `SHOWN` a list). Said whether met or not, so that a mail
    sent for another reason still tells which flags stand. `reference` names what was compared
    with (None: nothing was asked for, the flags are listed as `raised`)."""
    n_new, n_standing = len(gate.new), len(gate.standing)
    verdict = "met" if gate.met else "not met"
    if reference is None:
        lines = [f"--fail-on {gate.level}: {verdict} ({n_new} flag(s) at this level)"]
        return lines + [f"  raised: {flag_line(f)}" for f in gate.new[:SHOWN]] + _more(gate.new, "raised")
    if not gate.has_reference:
        against = f"{reference}: none, so every flag is new"
    else:
        against = f"against {reference}: {n_new} new, {n_standing} standing"
    extra = "; a standing flag is said, not failed on" if gate.level.startswith("new-") and n_standing else ""
    lines = [f"--fail-on {gate.level}: {verdict} ({against}{extra})"]
    for label, flags in (("new", gate.new), ("standing", gate.standing)):
        lines += [f"  {label}: {flag_line(f)}" for f in flags[:SHOWN]] + _more(flags, label)
    return lines


def _more(flags: list, label: str) -> list[str]:
    return [f"  ... and {len(flags) - SHOWN} more {label} (flags.json lists them all)"] if len(flags) > SHOWN else []
