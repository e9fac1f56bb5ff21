"""The command line's comforts (issue 31): --help leads with what a user gives and shows examples,
thresholds under their own heading, exit codes at the end; a mistyped option, command or choice
gets a suggestion; `--version` and `--help` answer without loading pandas or numpy.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from benchreport.cli.parser import build_parser

ROOT_DATA = str(__import__("pathlib").Path(__file__).resolve().parents[1] / "data" / "example")
COMMANDS = [
    "validate",
    "ingest",
    "analyse",
    "flags",
    "build",
    "compare",
    "figure",
    "table",
    "plan",
    "exam-delta",
    "store",
    "schema",
    "lab",
]


def run(*argv, timeout=120):
    return subprocess.run([sys.executable, "-m", "benchreport", *argv], capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("command", COMMANDS)
def test_help_ends_with_examples_and_exit_codes(command):
    text = build_parser().commands[command].format_help()
    assert "exit codes:" in text and re.search(r"^  3 +--fail-on was met", text, re.M)
    assert text.rstrip().endswith("the previous output unchanged")
    examples = text.split("examples:\n")[1].split("\n\n")[0] if "examples:" in text else ""
    assert all(line.startswith(f"  benchreport {command}") for line in examples.splitlines()), examples
    assert len(text.splitlines()[0]) < 120  # one usage line, not a wall of every option


def test_build_help_leads_with_runs_out_and_format_and_groups_the_thresholds():
    text = build_parser().commands["build"].format_help()
    at = {
        name: text.index(name)
        for name in (
            "RUNS",
            "--out DIR",
            "--format",
            "reading runs:",
            "--skip-bad",
            "analysis options:",
            "--n-boot",
            "thresholds:",
            "--alpha",
            "--min-passes",
            "examples:",
            "exit codes:",
        )
    }
    assert (
        at["RUNS"]
        < at["--out DIR"]
        < at["--format"]
        < at["reading runs:"]
        < at["--skip-bad"]
        < at["analysis options:"]
        < at["--n-boot"]
        < at["thresholds:"]
        < at["--alpha"]
        < at["examples:"]
        < at["exit codes:"]
    )
    thresholds = text[at["thresholds:"] : at["examples:"]]
    assert "--min-passes" in thresholds and "--out" not in thresholds and "--skip-bad" not in thresholds


@pytest.mark.parametrize(
    "argv, hint",
    [
        (["build", "data", "--out", "x", "--skip-bda"], "did you mean --skip-bad?"),
        (["validate", "data", "--strcit"], "did you mean --strict?"),
        (["biuld", "data"], "did you mean build?"),
        (["table", "results", "data", "--format", "tx"], "did you mean tex?"),
        (["figure", "throughput", "data", "--out", "f.png", "--metric", "ttft_m"], "did you mean ttft_ms?"),
    ],
)
def test_a_typo_gets_a_suggestion_in_one_line_and_exit_2(argv, hint, tmp_path):
    proc = run(*argv)
    assert proc.returncode == 2 and hint in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and proc.stdout == ""


def test_nothing_close_gets_no_suggestion():
    proc = run("validate", "data", "--zzzzzz")
    assert proc.returncode == 2 and "unrecognized arguments: --zzzzzz" in proc.stderr
    assert "did you mean" not in proc.stderr


@pytest.mark.parametrize("argv", [["--version"], ["build", "--help"], ["figure", "--help"]])
def test_version_and_help_load_neither_pandas_nor_numpy(argv):
    code = (
        "import sys\nfrom benchreport.cli import main\ntry:\n    main(%r)\nexcept SystemExit:\n    pass\n"
        "print('heavy:', sorted(m for m in ('pandas', 'numpy', 'scipy', 'matplotlib') if m in sys.modules))" % argv
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("heavy: []"), proc.stdout[-300:]
    if argv == ["--version"]:
        assert re.match(r"benchreport \d+\.\d+", proc.stdout)


def test_the_top_level_help_names_every_command_and_ends_with_exit_codes():
    text = build_parser().format_help()
    assert all(re.search(rf"^    {c}\b", text, re.M) for c in COMMANDS), text
    assert "examples:\n  benchreport build runs/ --out report/" in text
    assert text.rstrip().endswith("the previous output unchanged")


def test_options_that_do_nothing_warn_once_and_change_nothing(cli, tmp_path):
    """--n-boot, --seed and --ci-method are accepted (scripts keep running), each said once on
    stderr to do nothing; the analysis is the one without them, byte for byte."""
    data = ROOT_DATA
    plain = cli("analyse", data, "--out", tmp_path / "plain", "--quiet")
    given = cli(
        "analyse",
        data,
        "--out",
        tmp_path / "given",
        "--quiet",
        "--n-boot",
        "200",
        "--seed",
        "7",
        "--ci-method",
        "percentile",
    )
    assert plain.returncode == given.returncode == 0, given.stderr
    assert "has no effect" not in plain.stderr
    warned = [line for line in given.stderr.splitlines() if "has no effect" in line]
    assert [w.split()[1] for w in warned] == ["--n-boot", "--seed", "--ci-method"]
    assert all(w.startswith("warning: ") and w.endswith("it will be removed") for w in warned)
    for name in ("cells.csv", "comparisons.csv", "passes.csv"):
        assert (tmp_path / "plain" / "tables" / name).read_bytes() == (
            tmp_path / "given" / "tables" / name
        ).read_bytes()
    with pytest.raises(SystemExit) as bad:  # still checked: exit 2 naming the range
        cli("analyse", data, "--out", tmp_path / "bad", "--n-boot", "5")
    assert bad.value.code == 2
