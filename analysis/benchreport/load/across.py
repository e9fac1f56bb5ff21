"""Checks across the files of one data set: a run id once, one model and placement per seat id,
and a pass of one cell and condition claimed by one run.

Split from benchreport.load (the folder walk and dispatch), which calls `check_across_files` once
after every file is read.
"""

from __future__ import annotations

import dataclasses
import json

import msgspec

from benchreport import conditions
from benchreport.load import native
from benchreport.load.errors import Refusal

__all__ = ["check_across_files", "renumbered_note"]


def _placement_key(seat: native.Seat):
    return None if seat.placement is None else msgspec.to_builtins(seat.placement)


def _cells(run: native.Run) -> set[tuple]:
    """What a run measured: its measurement cells, request cells and exams."""
    out = {
        ("measurement", m.workload, m.concurrency, m.metric, m.statistic, m.condition, m.context_tokens, m.fresh_prompt)
        for m in run.measurements or ()
    }
    out |= {("requests", w, c) for w, c in {(r.workload, r.concurrency) for r in run.requests or ()}}
    out |= {("exam", e.benchmark, e.dimension) for e in run.exams or ()}
    return out


def _load_id(run: native.Run) -> str:
    return conditions.fingerprint(msgspec.to_builtins(run.load)) if run.load is not None else ""


def renumbered_note(pass_: int, new: int, other: str) -> str:
    """The assumption recorded on a run whose claimed pass another run already holds."""
    return (
        f"pass {pass_} was claimed also by {other} (another run of the same cell and condition): "
        f"read as pass {new}, since two runs are never one pass"
    )


def _check_passes(runs: list) -> list:
    """Two runs are never one pass: where two runs (different files, different run ids) claim the
    same pass of a seat, day, harness, probe and load for one cell, the later one (by path) is read
    as the next pass no run of that group holds, and says so in its assumptions (the
    `import.assumed` flag). Files of one sweep that measure different cells (vLLM writes one per
    concurrency) share a pass number and are left alone."""
    groups: dict[tuple, list] = {}
    for lr in runs:
        r = lr.run
        groups.setdefault((r.seat.id, r.date[:10], r.harness.name, r.harness.probe, _load_id(r)), []).append(lr)
    replaced: dict[int, object] = {}
    for members in groups.values():
        if len(members) < 2:
            continue  # the common case costs nothing
        claimed: dict[tuple, object] = {}  # (pass, cell) -> the run holding it
        taken = {lr.run.pass_ for lr in members}
        for original in members:
            lr = original
            cells = _cells(lr.run)
            clash = sorted((c for c in cells if (lr.run.pass_, c) in claimed), key=repr)
            if clash:
                new = max(taken) + 1
                taken.add(new)
                note = renumbered_note(lr.run.pass_, new, claimed[(lr.run.pass_, clash[0])].source_file)
                lr = replaced[id(original)] = dataclasses.replace(
                    lr, run=msgspec.structs.replace(lr.run, pass_=new), assumptions=tuple(lr.assumptions) + (note,)
                )
            for c in cells:
                claimed[(lr.run.pass_, c)] = lr
    return [replaced.get(id(lr), lr) for lr in runs]


def check_across_files(result) -> None:
    """run_id unique in the data set; one seat id means one model and placement; a pass of a
    seat, day, harness, probe and load claimed by one run per cell (`_check_passes`).

    The first file (in path order) wins; each later conflicting file is refused with a
    message naming both files (a repeated pass is renumbered, not refused).
    """
    first_run: dict = {}
    first_seat: dict = {}
    kept: list = []
    for lr in sorted(result.runs, key=lambda r: (r.source_file, r.run.run_id)):
        rid, seat = lr.run.run_id, lr.run.seat
        if rid in first_run:
            result.refused.append(
                Refusal(
                    lr.source_file,
                    "$.run_id",
                    (
                        f'expected a run_id unique in the data set, got "{rid}", '
                        f"which {first_run[rid].source_file} already uses"
                    ),
                )
            )
            continue
        prior = first_seat.get(seat.id)
        if prior is not None:
            ps = prior.run.seat
            if ps.model != seat.model:
                result.refused.append(
                    Refusal(
                        lr.source_file,
                        "$.seat.model",
                        (
                            f'expected model "{ps.model}" for seat "{seat.id}" as in {prior.source_file}, '
                            f'got "{seat.model}" (one seat id means one model)'
                        ),
                    )
                )
                continue
            a, b = _placement_key(ps), _placement_key(seat)
            if a is not None and b is not None and a != b:
                result.refused.append(
                    Refusal(
                        lr.source_file,
                        "$.seat.placement",
                        (
                            f'expected the placement of seat "{seat.id}" as in {prior.source_file} '
                            f"({json.dumps(a, sort_keys=True)}), got {json.dumps(b, sort_keys=True)} "
                            "(one seat id means one placement)"
                        ),
                    )
                )
                continue
        else:
            first_seat[seat.id] = lr
        first_run[rid] = lr
        kept.append(lr)
    result.runs = _check_passes(kept)
