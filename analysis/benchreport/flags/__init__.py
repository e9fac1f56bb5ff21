"""Flags: findings about the data that limit what a reader may conclude (spec/flags.md).

    excluded = decide_exclusions(tables, thresholds=th)       # prefix-cache hits, decided once
    kept = drop_excluded(tables, excluded)                     # what the statistics see
    flags = compute_flags(tables, cells=cells, comparisons=comparisons, exam_deltas=exam_deltas,
                          excluded=excluded, thresholds=th, baseline=None, passes=passes)
    flags_to_records(flags)      # the JSON shape of `benchreport flags --json`
    render_table(flags)          # plain-text table for the terminal
    fail_on_met(flags, "warn")   # --fail-on
    judge_gate(records, "new-critical", previous)  # --fail-on new-critical: flags new since `previous`
    limitations_paragraphs(flags)  # the report's "What these numbers will not carry"

Where things are: a flag is decided in `rules/<family>.py` (its finding type beside it),
its sentences are written in `words/<family>.py`, every per-code fact (severities, group,
order, titles) is in `codes.py`, the exclusions in `exclusions.py`, the run over all rules
in `compute.py`, the limitations section's composition in `text.py`, the `--fail-on` gate (new
flags against a previous build's) in `gate.py`; the statistics the
stability rules use are in `benchreport.stats.stability`.
"""

from __future__ import annotations

import importlib

#: where each name lives: imported when first named (PEP 562), so that `benchreport.flags.gate`
#: (a build's --fail-on against the report it found up to date) does not bring every rule and
#: the statistics (SciPy) with it
_HOME = {
    **dict.fromkeys(("CODES", "SEVERITIES", "Code"), ".codes"),
    **dict.fromkeys(("FLAG_COLUMNS", "compute_flags", "empty_flags", "find", "to_frame"), ".compute"),
    **dict.fromkeys(("Exclusions", "decide_exclusions", "drop_excluded", "excluded_measurements"), ".exclusions"),
    **dict.fromkeys(("Finding", "finding_from_flag"), ".findings"),
    **dict.fromkeys(("FAIL_ON_LEVELS", "Gate", "flag_key", "gate_lines", "judge_gate"), ".gate"),
    **dict.fromkeys(("fail_on_met", "flags_to_records", "render_table"), ".output"),
    "limitations_paragraphs": ".text",
}


def __getattr__(name: str):
    if name in _HOME:
        return getattr(importlib.import_module(_HOME[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = list(_HOME)
