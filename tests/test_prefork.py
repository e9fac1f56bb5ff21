"""The process a build forks before its analysis (benchreport.report.prefork): it warms up while
the parent works, runs the job it is sent, and answers with the outcome; every way it can end
(an error in the job, death before or after the job, the parent leaving early) ends the same way
for the parent: an answer, an exception, or the job run in the parent."""
from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from benchreport.report import prefork

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forked processes are used on Linux only")


def _alive(pid: int) -> bool:
    """A live process (not a zombie) with this id."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _double(job, notes, tell):
    notes["pid"] = os.getpid()
    notes["value"] = job * 2


def _nothing():
    return None


def test_the_job_runs_in_the_forked_process_and_its_notes_come_back():
    with prefork.forked(_double, _nothing) as handle:
        assert handle is not None
        assert handle.send(21)
        notes = handle.result()
    assert notes["value"] == 42
    assert notes["pid"] == handle.pid != os.getpid()


def test_the_warm_up_runs_before_the_job(tmp_path):
    marker = tmp_path / "warm"

    def warm():
        marker.write_text(str(os.getpid()))

    def job(path, notes, tell):
        notes["warm"] = Path(path).read_text()

    with prefork.forked(job, warm) as handle:
        handle.send(str(marker))
        notes = handle.result()
    assert notes["warm"] == str(handle.pid)


def test_what_the_job_tells_reaches_the_parent_before_the_answer():
    def job(_, notes, tell):
        tell({"page": "<p>1</p>"})
        tell({"page": "<p>2</p>"})
        notes["done"] = True

    told = []
    with prefork.forked(job, _nothing) as handle:
        handle.send(None)
        assert handle.result(on_tell=told.append) == {"done": True}
    assert told == [{"page": "<p>1</p>"}, {"page": "<p>2</p>"}]


def test_a_failed_warm_up_is_no_failure():
    def warm():
        raise RuntimeError("no matplotlib here")

    with prefork.forked(_double, warm) as handle:
        handle.send(1)
        assert handle.result()["value"] == 2


class Refusal(ValueError):
    pass


def test_the_jobs_exception_is_raised_in_the_parent_with_its_notes():
    def job(_, notes, tell):
        notes["step"] = "rendering"
        raise Refusal("the page is not self-contained")

    with prefork.forked(job, _nothing) as handle:
        handle.send(None)
        with pytest.raises(Refusal, match="not self-contained") as raised:
            handle.result()
    assert raised.value.forked_notes == {"step": "rendering"}


def test_an_exception_that_cannot_cross_is_described():
    class Local(Exception):  # defined in a function: cannot be pickled
        pass

    def job(_, notes, tell):
        raise Local("made here")

    with prefork.forked(job, _nothing) as handle:
        handle.send(None)
        with pytest.raises(RuntimeError, match="Local: made here"):
            handle.result()


def test_an_interrupt_in_the_job_is_an_interrupt_in_the_parent():
    def job(_, notes, tell):
        raise KeyboardInterrupt

    with prefork.forked(job, _nothing) as handle:
        handle.send(None)
        with pytest.raises(KeyboardInterrupt):
            handle.result()


def test_a_process_killed_during_its_job_is_an_error_not_a_hang():
    def job(_, notes, tell):
        os.kill(os.getpid(), signal.SIGKILL)

    with prefork.forked(job, _nothing) as handle:
        handle.send(None)
        with pytest.raises(prefork.ForkedProcessError, match="killed by signal 9"):
            handle.result()


def test_a_process_gone_before_its_job_leaves_the_job_to_the_parent():
    def warm():
        os.kill(os.getpid(), signal.SIGKILL)

    with prefork.forked(_double, warm) as handle:
        time.sleep(0.2)
        big = "x" * (1 << 20)  # more than a pipe holds: the write finds the reader gone
        assert handle.send(big) is False


def test_leaving_early_ends_the_process_and_what_it_started(tmp_path):
    """The parent leaves before the answer (an error, SIGTERM): the forked process and a process it
    started in its group are ended, and its clean-up ran (SIGTERM first)."""
    cleaned = tmp_path / "cleaned"

    def warm():
        pid = os.fork()
        if pid == 0:  # a grandchild, as the figure process is
            time.sleep(60)
            os._exit(0)
        (tmp_path / "grandchild").write_text(str(pid))

    def job(_, notes, tell):
        try:
            time.sleep(60)
        finally:
            cleaned.write_text("yes")

    from benchreport.progress import terminate_as_interrupt

    with terminate_as_interrupt():  # as in a build: SIGTERM unwinds the job
        with prefork.forked(job, warm) as handle:
            handle.send(None)
            deadline = time.monotonic() + 20
            while not (tmp_path / "grandchild").exists() and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(0.2)
    grandchild = int((tmp_path / "grandchild").read_text())
    assert not _alive(handle.pid)
    deadline = time.monotonic() + 5
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _alive(grandchild)
    assert cleaned.read_text() == "yes"


def test_one_process_where_none_can_be_forked(monkeypatch):
    monkeypatch.setenv("BENCHREPORT_DRAW_BESIDE", "0")
    with prefork.forked(_double, _nothing) as handle:
        assert handle is None


def test_the_forked_process_ends_with_its_parent(tmp_path):
    """A parent killed outright (SIGKILL: no clean-up of its own) takes the forked process with it."""
    import subprocess
    import textwrap

    script = textwrap.dedent(f"""
        import os, sys, time
        from benchreport.report import prefork
        def job(_, notes, tell):
            time.sleep(60)
        def warm():
            open({str(tmp_path / 'child')!r}, 'w').write(str(os.getpid()))
        with prefork.forked(job, warm) as handle:
            handle.send(None)
            time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.monotonic() + 30
    while not (tmp_path / "child").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.1)
    child = int((tmp_path / "child").read_text())
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _alive(child)


def test_the_builds_warm_up_runs_without_error():
    """`warm_up` (what the rendering process readies beside the analysis) swallows nothing of its
    own: a failure there would only be ignored (the job does without), so it is run here."""
    from benchreport.report.inprocess import warm_up

    warm_up()


@pytest.mark.slow
def test_a_build_in_one_process_is_the_same_report(tmp_path):
    """Where no process can be forked (BENCHREPORT_DRAW_BESIDE=0, or not Linux) the build renders
    in its own process, in the same order: the same figures, page and PDF, byte for byte."""
    import subprocess

    root = Path(__file__).resolve().parents[1]
    outs = {}
    for mode, value in (("forked", "1"), ("one", "0")):
        out = tmp_path / mode
        env = {**os.environ, "BENCHREPORT_DRAW_BESIDE": value}
        proc = subprocess.run([sys.executable, "-m", "benchreport", "build", str(root / "data" / "example"),
                               "--out", str(out), "--quiet"], env=env, capture_output=True, text=True, cwd=root)
        assert proc.returncode == 0, proc.stderr
        outs[mode] = out
    forked, one = outs["forked"], outs["one"]
    assert sorted(p.name for p in (forked / "figures").iterdir()) == sorted(p.name for p in (one / "figures").iterdir())
    for f in (forked / "figures").iterdir():
        assert f.read_bytes() == (one / "figures" / f.name).read_bytes(), f.name
    for name in ["report.html", "flags.json", *(f"tables/{p.name}" for p in (forked / "tables").iterdir())]:
        assert (forked / name).read_bytes() == (one / name).read_bytes(), name
    if (forked / "report.pdf").exists():
        assert (forked / "report.pdf").read_bytes() == (one / "report.pdf").read_bytes()


@pytest.mark.parametrize("how", ["raises", "terminated", "returns None", "returns a string"])
def test_a_forked_child_never_returns_into_the_callers_code(tmp_path, how):
    """`fork_child`: whatever the child does (raises, is sent SIGTERM while a handler that raises
    is installed), it leaves with os._exit; only the parent goes on past the call. A child that
    went on would run the test runner's code as a second worker."""
    from benchreport.progress import terminate_as_interrupt

    parent = os.getpid()

    def child():
        if how == "raises":
            raise KeyboardInterrupt
        if how == "returns None":
            return None
        if how == "returns a string":
            return "done"
        time.sleep(30)
        return 0

    with terminate_as_interrupt():
        pid = prefork.fork_child(child)
        (tmp_path / f"after-{os.getpid()}").write_text("went on")
        if os.getpid() != parent:  # pragma: no cover - only if the guard failed
            os._exit(3)
        if how == "terminated":
            time.sleep(0.2)
            os.kill(pid, signal.SIGTERM)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == {"returns None": 0}.get(how, 1)
    assert [p.name for p in tmp_path.iterdir()] == [f"after-{parent}"]


def test_a_process_sent_no_job_ends_where_it_is(tmp_path):
    """The parent leaves before sending a job (a usage error found after the analysis, a report
    already up to date), at once or while the process warms up: the process ends, and only the
    parent goes on past the block."""
    parent = os.getpid()
    for pause in (0.0, 0.3):
        def warm():
            time.sleep(pause)

        with prefork.forked(_double, warm) as handle:
            pid = handle.pid
            time.sleep(pause / 2)
        (tmp_path / f"after-{os.getpid()}-{pause}").write_text("went on")
        if os.getpid() != parent:  # pragma: no cover - only if the child came back up the stack
            os._exit(3)
        assert not _alive(pid)
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"after-{parent}-0.0", f"after-{parent}-0.3"]
