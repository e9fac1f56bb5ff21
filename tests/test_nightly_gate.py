"""`--fail-on new-critical` (issue 45): a nightly gate that fires on what is new since the previous
build, so that a standing critical flag is said each night but fails the job once, when it appears.

Three nights through the command line on request-level data (benchmarks/generate.py), each night's
runs added to one folder as a nightly archive grows: night 1 plants failed requests in seat-000 (a
critical `requests.failed`), night 2 repeats them (standing), night 3 adds them in seat-001 (new).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from generate import generate  # noqa: E402

from benchreport.flags import flag_key, gate_lines, judge_gate  # noqa: E402

NIGHTS = {"2026-12-01": ("seat-000",), "2026-12-02": ("seat-000",), "2026-12-03": ("seat-000", "seat-001")}


def _night(runs: Path, date: str, failing: tuple[str, ...]) -> None:
    """One night's runs in runs/DATE: every fifth request of the `failing` seats an HTTP 503 (20%,
    above the 10% of failed_critical)."""
    for f in generate(runs / date, seats=2, passes=3, requests=40, concurrencies=(1, 8), seed=1, date=date):
        run = json.loads(f.read_text())
        run["run_id"] = f"{run['run_id']}-{date}"
        if run["seat"]["id"] in failing:
            for i, r in enumerate(run["requests"]):
                if i % 5 == 0:
                    r["finish_reason"], r["error"] = "error", "HTTP 503: upstream overloaded"
        f.write_text(json.dumps(run))


def _cli(*args) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "benchreport", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def _lines(stderr: str, label: str) -> list[str]:
    return [line.strip() for line in stderr.splitlines() if line.strip().startswith(f"{label}: ")]


@pytest.fixture(scope="module")
def nights(tmp_path_factory):
    """Each night's build into one --out (--fail-on new-critical), after that night's runs arrived;
    the flags.json of each night kept aside for `flags --previous`."""
    root = tmp_path_factory.mktemp("nightly")
    runs, out, done = root / "runs", root / "site" / "latest", {}
    for date, failing in NIGHTS.items():
        _night(runs, date, failing)
        proc = _cli("build", runs, "--out", out, "--format", "html", "--fail-on", "new-critical")
        done[date] = proc
        (root / f"flags-{date}.json").write_bytes((out / "flags.json").read_bytes())
    return root, done


def test_the_first_night_fires_on_its_critical_flag(nights):
    _, done = nights
    night = done["2026-12-01"]
    assert night.returncode == 3, night.stderr
    assert "none, so every flag is new" in night.stderr
    assert [line.split(" [")[1].split("]")[0] for line in _lines(night.stderr, "new")] == ["seat-000"]


def test_a_standing_critical_flag_is_said_not_fired(nights):
    root, done = nights
    night = done["2026-12-02"]
    assert night.returncode == 0, night.stderr
    assert "--fail-on new-critical: not met" in night.stderr and "0 new, 1 standing" in night.stderr
    standing = _lines(night.stderr, "standing")
    assert len(standing) == 1 and "requests.failed [seat-000]" in standing[0]
    assert not _lines(night.stderr, "new")
    # the flag is really there and critical in this night's report (the old gate would fire)
    flags = json.loads((root / "flags-2026-12-02.json").read_text())
    assert any(f["severity"] == "critical" and f["seats"] == ["seat-000"] for f in flags)
    old = _cli("flags", root / "runs", "--fail-on", "critical", "--quiet")
    assert old.returncode == 3  # --fail-on critical keeps its meaning: any critical flag


def test_a_new_critical_flag_fires_beside_the_standing_one(nights):
    _, done = nights
    night = done["2026-12-03"]
    assert night.returncode == 3, night.stderr
    assert "--fail-on new-critical: met" in night.stderr
    new, standing = _lines(night.stderr, "new"), _lines(night.stderr, "standing")
    assert len(new) == 1 and "requests.failed [seat-001]" in new[0], night.stderr
    assert len(standing) == 1 and "requests.failed [seat-000]" in standing[0], night.stderr


def test_a_rebuild_of_the_same_night_judges_as_the_build_that_wrote_it(nights):
    """Cron run twice on the same data: the up-to-date build keeps the reference it was judged
    against (build.json), so its verdict does not change."""
    root, _ = nights
    again = _cli(
        "build", root / "runs", "--out", root / "site" / "latest", "--format", "html", "--fail-on", "new-critical"
    )
    assert again.returncode == 3 and "up to date" in again.stderr, again.stderr


def test_flags_previous_is_the_reference_of_the_flags_command(nights):
    root, _ = nights
    runs = root / "runs"
    fired = _cli("flags", runs, "--fail-on", "new-critical", "--previous", root / "flags-2026-12-02.json", "--quiet")
    assert fired.returncode == 3 and "requests.failed [seat-001]" in _lines(fired.stderr, "new")[0]
    same = _cli("flags", runs, "--fail-on", "new-critical", "--previous", root / "flags-2026-12-03.json", "--quiet")
    assert same.returncode == 0 and same.stderr == "", same.stderr
    missing = _cli("flags", runs, "--fail-on", "new-critical", "--quiet")
    assert missing.returncode == 2 and "needs --previous FILE" in missing.stderr
    (root / "bad.json").write_text('{"not": "flags"}')
    bad = _cli("flags", runs, "--fail-on", "new-critical", "--previous", root / "bad.json")
    assert bad.returncode == 2 and "expected a JSON array of flags" in bad.stderr


# --- the rule itself ----------------------------------------------------------------------------


def _flag(code, seats, severity="critical", cell=None, message="x"):
    return {"code": code, "severity": severity, "seats": seats, "cell": cell, "message": message}


def test_a_flag_is_its_code_seats_and_cell_not_its_text():
    cell = {"workload": "decode", "concurrency": 8, "metric": "ttft_ms", "statistic": "p99"}
    a = _flag("drift.unstable", ["b", "a"], cell=cell, message="a threefold swing tonight")
    assert flag_key(a) == flag_key(_flag("drift.unstable", ["a", "b"], cell=cell, message="twofold today"))
    assert flag_key(a) != flag_key(_flag("drift.unstable", ["a", "b"], cell={**cell, "concurrency": 1}))
    assert flag_key(a) != flag_key(_flag("drift.warmup", ["a", "b"], cell=cell))
    assert flag_key(a) != flag_key(_flag("drift.unstable", ["a"], cell=cell))


def test_the_levels():
    tonight = [_flag("requests.failed", ["s0"]), _flag("drift.unstable", ["s1"], severity="warn")]
    before = [_flag("requests.failed", ["s0"], message="another night's figures")]
    assert not judge_gate(tonight, "new-critical", before).met
    assert judge_gate(tonight, "new-warn", before).met  # the warn flag is new
    assert judge_gate(tonight, "critical", before).met  # unchanged: any critical flag
    assert judge_gate(tonight, "new-critical", None).met  # no reference: every flag is new
    assert not judge_gate(tonight[1:], "critical", None).met
    lines = gate_lines(judge_gate(tonight, "new-warn", before), "the previous build in out")
    assert lines[0].startswith("--fail-on new-warn: met (against the previous build in out: 1 new, 1 standing")
    assert lines[1].startswith("  new: warn drift.unstable [s1]") and lines[2].startswith("  standing: critical")
    plain = gate_lines(judge_gate(tonight, "critical", None), None)  # `flags --fail-on` without --previous
    assert plain == [plain[0], plain[1]] and plain[1].startswith("  raised: critical requests.failed [s0]")
    with pytest.raises(ValueError):
        judge_gate(tonight, "info", None)


def test_the_readme_cron_line_mails_the_gate_once_and_not_for_a_standing_flag(tmp_path):
    """README's cron line, run as printed by sh (its paths put here, a stand-in for mail(1) on
    PATH): night 1 mails the build's lines with the new critical flag, subject "exit 3"; night 2,
    with the same flag standing, mails nothing."""
    import os
    import re
    import stat

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    line = re.search(r"^    15 6 \* \* \*  (cd /srv/benchreport && .*--fail-on new-critical.*)$", readme, re.M).group(1)
    bench = str(Path(sys.executable).parent / "benchreport")
    job = (
        line.replace("cd /srv/benchreport", f"cd '{tmp_path}'")
        .replace(".venv/bin/benchreport", f"'{bench}'")
        .replace("/data/runs", "runs")
        .replace("/srv/www/bench", "www")
    )
    mail = tmp_path / "bin" / "mail"
    mail.parent.mkdir()
    mail.write_text('#!/bin/sh\n{ echo "Subject: $2"; cat; } >> "$MAILBOX"\n')
    mail.chmod(mail.stat().st_mode | stat.S_IXUSR)
    env = {**os.environ, "PATH": f"{mail.parent}{os.pathsep}{os.environ['PATH']}", "MAILBOX": str(tmp_path / "box")}
    for date, failing in list(NIGHTS.items())[:2]:
        _night(tmp_path / "runs", date, failing)
        done = subprocess.run(["sh", "-c", job], capture_output=True, text=True, env=env, timeout=600)
        assert done.returncode == 0 and done.stdout == done.stderr == "", done  # nothing for cron to mail
        if date == "2026-12-01":
            first = (tmp_path / "box").read_text()
            assert first.startswith("Subject: benchreport: exit 3\n"), first
            assert "new: critical requests.failed [seat-000]" in first and "report written to www" in first
    assert (tmp_path / "box").read_text() == first  # night 2: the standing flag sends no mail
    assert "1 standing" in (tmp_path / "last-night.txt").read_text()
