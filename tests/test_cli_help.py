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
    "example",
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


#: each command that reads runs, and an option or heading of its own (issue 45: in figure and
#: table --help their own options came after some 130 lines of thresholds)
OWN = {
    "analyse": "--out DIR",
    "flags": "--fail-on",
    "build": "--out DIR",
    "compare": "--fail-on",
    "figure": "size and content:",
    "table": "columns and rows:",
    "plan": "the plan:",
}


@pytest.mark.parametrize("command", sorted(OWN))
def test_help_leads_with_an_example_and_its_own_options_and_ends_with_the_thresholds(command):
    text = build_parser().commands[command].format_help()
    head = text.splitlines()[:8]
    assert any(line.startswith(f"  benchreport {command} ") for line in head), head
    at = [text.index(name) for name in (OWN[command], "reading runs:", "analysis options:", "thresholds:")]
    assert at == sorted(at), at
    headings = re.findall(r"^(\S[^\n]*):$", text, re.M)
    after = headings[headings.index("thresholds") + 1 :]
    assert after in (["more examples", "exit codes"], ["exit codes"]), headings


def test_the_top_level_help_names_every_harness_read():
    """Every importer (benchreport.load.harness) is named, by the first word of its label."""
    from benchreport.load.harness import IMPORTERS, ORACLE_KEY, considered

    labels = [label for label in considered() if "oracle" not in label]
    assert len(labels) == len(IMPORTERS) - 1 and ORACLE_KEY  # the fixture oracle is no harness
    text = " ".join(build_parser().format_help().split()).lower()
    missing = [label for label in labels if label.split()[0].lower() not in text]
    assert not missing, missing


def test_an_option_a_command_refuses_is_not_in_its_help():
    text = build_parser().commands["compare"].format_help()
    assert "--baseline" not in text and "--multiplicity" in text
    proc = run("compare", ROOT_DATA, ROOT_DATA, "--baseline", "x")
    assert proc.returncode == 2 and "--baseline does not apply" in proc.stderr


def test_bootstrap_options_take_effect_reproducibly(cli, tmp_path):
    """--ci-method bootstrap, --n-boot and --seed take effect since issue 43 (no warning): the
    same data and seed give byte-identical tables, another seed other cell intervals; the
    comparisons (t) do not move; the default is t."""
    data = ROOT_DATA
    plain = cli("analyse", data, "--out", tmp_path / "plain", "--quiet")
    boot = [
        cli(
            "analyse",
            data,
            "--out",
            tmp_path / f"b{i}",
            "--quiet",
            "--ci-method",
            "bootstrap",
            "--n-boot",
            "500",
            "--seed",
            s,
        )
        for i, s in enumerate(("7", "7", "8"))
    ]
    assert plain.returncode == 0 and all(b.returncode == 0 for b in boot), boot[0].stderr
    assert all("has no effect" not in r.stderr for r in (plain, *boot))
    tables = lambda d, n: (tmp_path / d / "tables" / n).read_bytes()  # noqa: E731
    for name in ("cells.csv", "comparisons.csv", "passes.csv"):
        assert tables("b0", name) == tables("b1", name), name
    assert tables("b0", "comparisons.csv") == tables("plain", "comparisons.csv")
    assert tables("b0", "cells.csv") != tables("b2", "cells.csv") != tables("plain", "cells.csv")
    assert b"bootstrap percentile over" in tables("b0", "cells.csv")
    assert b"bootstrap" not in tables("plain", "cells.csv")
    with pytest.raises(SystemExit) as bad:  # still checked: exit 2 naming the range
        cli("analyse", data, "--out", tmp_path / "bad", "--n-boot", "5")
    assert bad.value.code == 2
