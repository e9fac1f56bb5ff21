"""sample.one_session (issue 30): a seat whose every pass ran on one date is told that its
intervals leave out day-to-day variation, through the CLI on request-level native runs, and the
report's section "What these numbers will not carry" says it."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from benchreport.cli import main
from benchreport.flags import rules as R
from benchreport.flags import words
from benchreport.flags.text import limitations_paragraphs

from request_runs import request_records, request_run, write_request_runs


def _flags(tmp_path, runs):
    folder = write_request_runs(tmp_path / "runs", runs)
    out = tmp_path / "out"
    assert main(["analyse", str(folder), "--out", str(out), "--quiet"]) == 0
    return json.loads((out / "flags.json").read_text())


def _runs(rng):
    one_day = [request_run("a", p, request_records(rng, 60), date="2026-12-01", role="incumbent") for p in (1, 2, 3)]
    two_days = [
        request_run("b", p, request_records(rng, 60), date=d) for d in ("2026-11-30", "2026-12-01") for p in (1, 2, 3)
    ]
    single = [request_run("c", 1, request_records(rng, 60), date="2026-12-01")]
    also_one_day = [
        request_run("d", p, request_records(rng, 60), date="2026-12-01T09:30:00Z" if p == 1 else "2026-12-01T17:00:00Z")
        for p in (1, 2, 3)
    ]
    return one_day + two_days + single + also_one_day


def test_cli_flags_only_the_seats_measured_in_one_session(tmp_path):
    flags = _flags(tmp_path, _runs(np.random.default_rng(3)))
    one = [f for f in flags if f["code"] == "sample.one_session"]
    assert [f["seats"] for f in one] == [["a"], ["d"]]
    a = one[0]
    assert a["severity"] == "info"
    assert a["message"] == (
        "For a, the intervals leave out day-to-day variation: every pass of a ran on 2026-12-01 "
        "(3 runs); repeat on another day to include it."
    )
    assert a["evidence"]["date"] == "2026-12-01" and a["evidence"]["n_runs"] == 3
    assert a["evidence"]["n_intervals"] >= 1
    assert "full" not in a["message"].lower()


def test_section_7_says_it_once_for_the_seats_of_one_date(tmp_path):
    flags = pd.DataFrame(_flags(tmp_path, _runs(np.random.default_rng(4))))
    text = " ".join(p.text for p in limitations_paragraphs(flags))
    assert (
        "The intervals leave out day-to-day variation: every pass of a and d ran on 2026-12-01; repeat on another day."
    ) in text
    assert text.count("every pass of") == 1
    # b, on two dates: sample.few_sessions (issue 43), said apart
    assert (
        "For b, the intervals leave out day-to-day variation: b was measured on 2026-11-30 and 2026-12-01 "
        "(6 runs), too few dates to estimate it; measure on 3 dates or more to include it."
    ) in text


def test_cli_few_sessions_only_below_three_dates(tmp_path):
    rng = np.random.default_rng(5)
    runs = [
        request_run(s, p, request_records(rng, 60), date=d, role="incumbent" if s == "a" else "candidate")
        for s, dates in (("a", ("2026-11-30", "2026-12-01")), ("b", ("2026-11-29", "2026-11-30", "2026-12-01")))
        for d in dates
        for p in (1, 2)
    ]
    few = [f for f in _flags(tmp_path, runs) if f["code"] == "sample.few_sessions"]
    assert [f["seats"] for f in few] == [["a"]]
    assert few[0]["evidence"]["dates"] == ["2026-11-30", "2026-12-01"] and few[0]["evidence"]["min_sessions"] == 3
    cells = pd.read_csv(tmp_path / "out" / "tables" / "cells.csv")
    assert set(cells.loc[cells["seat"] == "b", "ci_route"]) == {"t_log_sessions"}
    assert "t_log_sessions" not in set(cells.loc[cells["seat"] == "a", "ci_route"])


def test_rule_on_frames():
    cells = pd.DataFrame(
        {
            "seat": ["a", "b"],
            "workload": ["decode"] * 2,
            "concurrency": [1, 1],
            "metric": ["ttft_ms"] * 2,
            "statistic": ["mean"] * 2,
            "n_passes": [2, 5],
            "ci_low": [None, 1.0],
            "ci_high": [None, 2.0],
            "values": ["1;2", "1;2;3;4;5"],
            "date": ["2026-01-01", "2026-01-02"],
        }
    )
    runs = pd.DataFrame(
        {"seat": ["a", "a", "b", "b"], "date": ["2026-01-01", "2026-01-01", "2026-01-02", "2026-01-02"]}
    )
    f = R.one_session(cells, runs)
    assert [x.seats for x in f] == [("a",), ("b",)]
    assert [x.n_intervals for x in f] == [0, 1]
    assert "the spread between passes leaves out day-to-day variation" in words.message(f[0])
    assert R.one_session(cells, runs.assign(date=["2026-01-01", "2026-01-03", "2026-01-02", "2026-01-02"]))[
        0
    ].seats == ("b",)
