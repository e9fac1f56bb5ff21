"""The `benchreport` command line's parser (spec/cli.md): every command, its arguments and help.

Kept apart from the commands (benchreport.cli) so the options can be read in one place.
"""

from __future__ import annotations

import argparse
import difflib
import re

from benchreport.version import __version__
from benchreport.columns import METRICS, STATISTICS
from benchreport.options import add_cli_options, number

__all__ = ["build_parser", "MAX_TITLE", "STRICT_HELP"]

#: a usage error's exit code (benchreport.cli's EXIT_USAGE)
_EXIT_USAGE = 2

#: the report title is shown in the abstract, page headers and the PDF's metadata
MAX_TITLE = 300


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (then exit 2), as cron logs want, with a
    suggestion for a mistyped option, command or choice ("did you mean --skip-bad?")."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def parse_args(self, args=None, namespace=None):
        ns, extras = self.parse_known_args(args, namespace)
        if extras:  # the command's parser knows its options: suggest from those
            commands = getattr(self, "commands", {})
            own = commands.get(getattr(ns, "command", None), self)
            self.error(f"unrecognized arguments: {' '.join(extras)}" + suggestion(extras, own))
        return ns

    def error(self, message: str):
        from benchreport.load.errors import one_line

        choice = re.search(r"invalid choice: '?([^'(]*?)'? \(choose from (.*)\)", message)
        if choice:
            choices = [c.strip().strip("'") for c in choice.group(2).split(",")]
            close = difflib.get_close_matches(choice.group(1), choices, n=1, cutoff=0.6)
            message += f"; did you mean {close[0]}?" if close else ""
        self.exit(_EXIT_USAGE, f"{self.prog}: {one_line(message)} (see {self.prog} --help)\n")


def suggestion(unknown: list[str], parser: argparse.ArgumentParser) -> str:
    """ "; did you mean --skip-bad?" for the first unknown option close to one of `parser`'s
    (difflib's ratio of at least 0.6), else ""."""
    known = [o for o in parser._option_string_actions if o.startswith("--")]
    for token in unknown:
        if token.startswith("-"):
            close = difflib.get_close_matches(token.split("=", 1)[0], known, n=1, cutoff=0.6)
            if close:
                return f"; did you mean {close[0]}?"
    return ""


def _title(text: str) -> str:
    from benchreport.load.errors import UNSAFE_CHARS

    if len(text) > MAX_TITLE or UNSAFE_CHARS.search(text):
        raise argparse.ArgumentTypeError(
            f"expected a title of at most {MAX_TITLE} characters without control "
            f"or bidi characters, got {len(text)} characters"
        )
    return text


#: --seats's help (figure and table)
SEATS_HELP = (
    "only these seats' runs, analysed as the report analyses them (name the baseline too for its "
    "comparisons); needs RUNS"
)

#: --harness's and --condition's help (figure and table)
HARNESS_HELP = "only the runs of this harness, as its runs name it (repeat for several); needs RUNS"
CONDITION_HELP = (
    "only the runs of this condition (what they sent): its 12-digit id or words of it, e.g. "
    "completions (repeat for several); needs RUNS"
)

#: the width of a column of a two-column paper, as --help gives it (figures.theme.COLUMN_IN)
COLUMN_HELP = (
    "one column of a two-column paper: 3.0 (article: 221 pt on A4, 229.5 pt on letter; "
    "IEEEtran and acmart sigconf are wider)"
)

#: --strict's help: what it changes (docs/importers.md, "Files that are not run files")
STRICT_HELP = (
    "refuse files that are not run files (a JSON no importer reads that claims no format) instead of skipping them"
)


#: --fail-on's levels (flags and build; benchreport.flags.gate.FAIL_ON_LEVELS, not imported: no pandas for --help)
FAIL_ON = ["warn", "critical", "new-warn", "new-critical"]
FAIL_ON_HELP = (
    "exit 3 when a flag this severe or worse is raised (warn, critical), or only when one is new, "
    "not raised by {ref} (new-warn, new-critical: a standing flag is said, not failed on; a flag is "
    "its code, seats and cell)"
)


#: the harnesses whose output files are read (benchreport.load.harness's importers; a test keeps
#: this list whole), named in the top-level --help
HARNESSES = (
    "AIPerf",
    "GenAI-Perf",
    "genai-bench",
    "GuideLLM",
    "inference-perf",
    "LLMPerf",
    "lm-evaluation-harness",
    "MLPerf LoadGen",
    "SGLang bench_serving",
    "TensorRT-LLM trtllm-bench",
    "vLLM bench serve",
)


def _add_loading(parser: argparse.ArgumentParser) -> None:
    """The options of every command that loads run files, under their own heading."""
    p = parser.add_argument_group("reading runs")
    p.add_argument("--skip-bad", action="store_true", help="go on without refused files (listed, not fatal)")
    p.add_argument("--strict", action="store_true", help=STRICT_HELP)
    p.add_argument(
        "--quiet", action="store_true", help="no progress or summary on stderr; one short line per refused file"
    )
    p.add_argument(
        "--max-file-mb",
        type=number(float, 0, 1e7, low_in=False),
        default=512,
        help="refuse files larger than this (default 512)",
    )


def _add_common(p: argparse.ArgumentParser, *, stats: bool = True) -> None:
    p.add_argument("runs", nargs="*", metavar="RUNS", help="run files and folders (searched recursively)")
    p.add_argument(
        "--store",
        default=None,
        metavar="DIR",
        help="a run store (made by `benchreport ingest RUNS --store DIR`), in place of RUNS",
    )
    p.add_argument(
        "--as-of",
        default=None,
        metavar="SNAPSHOT",
        help="with a DuckLake --store: the store as of a snapshot number or a day (YYYY-MM-DD, UTC)",
    )
    _add_loading(p)
    if stats:
        add_cli_options(p)


#: what each command's --help ends with: a few examples (and then `EXIT_CODES`)
EXAMPLES = {
    "validate": ["benchreport validate runs/", "benchreport validate runs/ --strict --quiet"],
    "ingest": ["benchreport ingest runs/ --out tidy/", "benchreport ingest /data/runs --store /srv/store --skip-bad"],
    "analyse": ["benchreport analyse runs/ --out analysis/", "benchreport analyse --store /srv/store --out analysis/"],
    "flags": [
        "benchreport flags runs/",
        "benchreport flags runs/ --json --fail-on critical",
        "benchreport flags runs/ --fail-on new-critical --previous report/flags.json",
    ],
    "build": [
        "benchreport build runs/ --out report/",
        'benchreport build runs/ --out report/ --format html --title "Fleet, November"',
        "benchreport build /data/runs --out /srv/www/bench --skip-bad --fail-on new-critical",
    ],
    "compare": [
        "benchreport compare before/ after/",
        "benchreport compare --store /srv/store previous latest --fail-on regression",
    ],
    "figure": [
        "benchreport figure throughput runs/ --out fig.pdf --width 3.0 --harness aiperf",
        "benchreport figure --list runs/",
        "benchreport figure ttft runs/ --out ttft.png --seats a,b --statistic p99 --dpi 300",
    ],
    "table": [
        "benchreport table results runs/ --out table1.tex --width column",
        "benchreport table results runs/ --format md --columns Seat,Metric,Estimate --rows Conc.=16",
    ],
    "exam-delta": ["benchreport exam-delta 153/164 154/164"],
    "plan": [
        "benchreport plan runs/",
        "benchreport plan runs/ --futility-effect 0.05 --spending obf",
        "benchreport plan --store /srv/store --max-passes 12 --spending pocock --format markdown --out plan.md",
    ],
    "schema": ["benchreport schema > run-1.schema.json"],
    "store": ["benchreport store check --store /srv/store", "benchreport store repair --store /srv/store"],
    "lab": ["benchreport lab ~/bench/runs", "benchreport lab ~/bench/runs --no-start"],
    "example": ["benchreport example runs && benchreport build runs --out report"],
}

#: each command's usage line: what a user must give, then [options] (--help lists them all)
USAGE = {
    "validate": "RUNS... [options]",
    "ingest": "RUNS... (--out DIR | --store DIR) [options]",
    "analyse": "(RUNS... | --store DIR) --out DIR [options]",
    "flags": "(RUNS... | --store DIR) [--json] [--fail-on LEVEL [--previous FILE]] [options]",
    "build": "(RUNS... | --store DIR) --out DIR [--format html,pdf] [--site DIR] [options]",
    "compare": "A B [--store DIR] [--json] [--out DIR] [--fail-on WHEN] [options]",
    "figure": "NAME (RUNS... | --store DIR) --out FILE [--width IN] [--height IN] [--dpi N] [options]",
    "table": "NAME (RUNS... | --store DIR) [--format csv|md|tex] [--out FILE] [--columns A,B] [options]",
    "exam-delta": "A B [--json] [options]",
    "plan": "(RUNS... | --store DIR) [--max-passes N] [--spending hsd|obf|pocock] [--out FILE] [options]",
    "store": "{check,repair} --store DIR [options]",
    "schema": "[options]",
    "lab": "DIR [--no-start] [options]",
    "example": "DIR",
}

#: every command's exit codes (docs/cli.md), at the end of its --help
EXIT_CODES = """exit codes:
  0    done
  1    a file was refused and --skip-bad was not given (nothing written)
  2    usage error: a malformed option, a path that does not exist, an --out that is not ours to replace
  3    --fail-on was met (the output is still written)
  4    the build failed, --out or a store could not be written (a full disk too), or is busy or damaged
  130  interrupted (Ctrl-C); 143 terminated (SIGTERM): the previous output unchanged"""


#: the headings every command that reads runs shares: shown after the command's own options, in this order
SHARED_GROUPS = ("reading runs", "analysis options", "thresholds")

#: options a command accepts from the shared headings but refuses (one line), hidden from its --help
REFUSED_HERE = {"compare": ("--baseline",)}


def _explain(commands: dict) -> None:
    """Each command's --help: its usage line, what it does and one example, then its own options
    (every heading of its own), then the shared headings (`SHARED_GROUPS`, the thresholds last),
    then more examples and the exit codes."""
    for name, p in commands.items():
        first, *more = EXAMPLES.get(name, ()) or [None]
        if first:
            p.description = f"{p.description}\n\nfor example:\n  {first}"
        examples = "\n".join(f"  {e}" for e in more)
        p.epilog = (f"more examples:\n{examples}\n\n" if examples else "") + EXIT_CODES
        if name in USAGE:
            p.usage = f"%(prog)s {USAGE[name]}"
        shared = [g for title in SHARED_GROUPS for g in p._action_groups if g.title == title]
        p._action_groups = [g for g in p._action_groups if g not in shared] + shared
        for action in p._actions:
            if set(action.option_strings) & set(REFUSED_HERE.get(name, ())):
                action.help = argparse.SUPPRESS


def _add_data_commands(sub) -> None:
    """validate, ingest, analyse, flags and build."""
    p = sub.add_parser("validate", help="check every file; one line per refused file")
    _add_common(p, stats=False)
    p = sub.add_parser("ingest", help="load into tidy tables (Parquet) and refused.json, or add to a run store")
    _add_common(p, stats=False)
    p.add_argument("--out", default=None, metavar="DIR", help="output folder for the tidy tables (or use --store)")
    p.add_argument(
        "--wait",
        type=number(float, 0, 86400),
        default=None,
        metavar="SECONDS",
        help="wait up to SECONDS for another job holding the store or writing --out (default: exit 4 at once)",
    )
    p = sub.add_parser("analyse", help="statistics and flags, no rendering")
    _add_common(p)
    p.add_argument("--out", required=True, metavar="DIR", help="output folder")
    p.add_argument(
        "--wait",
        type=number(float, 0, 86400),
        default=None,
        metavar="SECONDS",
        help="wait up to SECONDS for another job writing --out (default: exit 4 at once)",
    )
    p = sub.add_parser("flags", help="compute the flags")
    _add_common(p)
    p.add_argument("--json", action="store_true", help="JSON array of flags on stdout")
    p.add_argument("--fail-on", choices=FAIL_ON, default=None, help=FAIL_ON_HELP.format(ref="--previous"))
    p.add_argument(
        "--previous",
        default=None,
        metavar="FILE",
        help="the flags a new-warn or new-critical gate compares with: an earlier report's flags.json "
        "or `flags --json` output",
    )
    p = sub.add_parser("build", help="statistics, flags, figures and the rendered report")
    _add_common(p)
    p.add_argument("--out", required=True, metavar="DIR", help="output folder (replaced only when the build succeeds)")
    p.add_argument(
        "--wait",
        type=number(float, 0, 86400),
        default=None,
        metavar="SECONDS",
        help="wait up to SECONDS for another job writing --out or --site (default: exit 4 at once)",
    )
    p.add_argument(
        "--format",
        default=None,
        help="comma-separated: html, pdf (default html,pdf; html alone when no PDF engine is here)",
    )
    _add_pdf_engine(p)
    p.add_argument("--title", type=_title, default=None, help=f"report title (at most {MAX_TITLE} characters)")
    p.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default=None,
        help=FAIL_ON_HELP.format(ref="the report --out held before this build") + "; the report is still written",
    )
    p.add_argument("--figure-formats", default="png,svg", help="figure files to write (png,svg[,pdf])")
    p.add_argument(
        "--site",
        default=None,
        metavar="DIR",
        help="also keep the report as DIR/DATE/ (the data's newest date) and rewrite DIR/index.html, "
        "every kept report newest first",
    )


def _add_pdf_engine(p) -> None:
    p.add_argument(
        "--pdf-engine",
        choices=["auto", "chromium", "weasyprint"],
        default="auto",
        help="what prints the PDF: auto (default: headless Chromium where installed, else WeasyPrint), "
        "chromium or weasyprint",
    )


def _add_compare(sub) -> None:
    """compare A B."""
    p = sub.add_parser(
        "compare", help="before against after: B's cells against the same seat's in A, verdicts as in comparisons.csv"
    )
    p.add_argument(
        "a",
        metavar="A",
        help="before: run files or a folder, or with --store a selection DATE or "
        "SEAT@DATE (DATE: YYYY-MM-DD, latest or previous)",
    )
    p.add_argument("b", metavar="B", help="after: as A")
    p.add_argument("--store", default=None, metavar="DIR", help="select A and B from this run store")
    _add_loading(p)
    add_cli_options(p)
    p.add_argument("--json", action="store_true", help="the rows as a JSON array on stdout")
    p.add_argument(
        "--out", default=None, metavar="DIR", help="also write compare.html (and PDF), tables/compare.csv here"
    )
    p.add_argument(
        "--wait",
        type=number(float, 0, 86400),
        default=None,
        metavar="SECONDS",
        help="wait up to SECONDS for another job writing --out (default: exit 4 at once)",
    )
    p.add_argument("--format", default="html", help="with --out: comma-separated html, pdf (default html)")
    _add_pdf_engine(p)
    p.add_argument(
        "--fail-on",
        choices=["regression", "regression-within-band"],
        default=None,
        help="exit 3 when a cell of B is worse than in A (regression: verdict worse, beyond the noise band; "
        "regression-within-band: also a change for the worse that is real but inside the band, "
        "verdict_detail 'worse, within tolerance')",
    )


def _add_writers(sub) -> None:
    """figure and table: one of the report's, sized and cut for a write-up."""
    p = sub.add_parser("figure", help="one figure of the report (png, svg or pdf by the suffix of --out)")
    p.add_argument("name", nargs="?", metavar="NAME", help="the figure's name (--list names them)")
    _add_common(p)
    p.add_argument("--out", default=None, metavar="FILE", help="the file to write: .png, .svg or .pdf")
    p.add_argument("--list", action="store_true", help="list the figures (with RUNS: which this data draws, numbered)")
    g = p.add_argument_group("size and content")
    g.add_argument(
        "--width",
        type=number(float, 0.5, 50),
        default=None,
        metavar="INCHES",
        help="the file's width in inches, exactly; "
        + COLUMN_HELP
        + "; the page of a one-column article (345 pt): 4.75 (default: the report's 6.5, trimmed to the contents)",
    )
    g.add_argument(
        "--height",
        type=number(float, 0.5, 50),
        default=None,
        metavar="INCHES",
        help="the file's height in inches, exactly (default: the figure's own; with --width, as tall as its plots "
        "need under a legend laid out for that width, at most a page)",
    )
    g.add_argument(
        "--dpi", type=number(int, 50, 1200), default=200, metavar="N", help="resolution of a PNG (default 200)"
    )
    g.add_argument("--seats", default=None, metavar="A,B", help=SEATS_HELP)
    g.add_argument(
        "--metric",
        default=None,
        choices=sorted(METRICS),
        metavar="M",
        help="the metric a throughput, per-stream, ttft or single-stream figure draws; the cells "
        "per-pass and ratios keep (e.g. ttft_ms, itl_ms, output_tok_s)",
    )
    g.add_argument(
        "--statistic",
        default=None,
        choices=STATISTICS,
        metavar="S",
        help="the statistic drawn or kept, as --metric (" + ", ".join(STATISTICS) + ")",
    )
    _add_run_filters(g)
    p = sub.add_parser("table", help="one table of the report as CSV, Markdown or LaTeX")
    p.add_argument("name", nargs="?", metavar="NAME", help="the table's name (--list names them)")
    _add_common(p)
    p.add_argument(
        "--format",
        default=None,
        choices=["csv", "md", "tex"],
        help="csv, md or tex (default: from the suffix of --out, else csv)",
    )
    p.add_argument("--out", default=None, metavar="FILE", help="write to FILE instead of stdout")
    p.add_argument("--list", action="store_true", help="list the tables (with RUNS: which this data has)")
    g = p.add_argument_group("columns and rows")
    g.add_argument(
        "--columns",
        default=None,
        metavar="A,B",
        help="the columns to keep, as headed, in this order, or all (default: every column; LaTeX: the "
        "headline ones, so that it fits a page)",
    )
    g.add_argument(
        "--rows",
        action="append",
        default=None,
        metavar="FILTER",
        help="keep the rows whose COLUMN shows VALUE (COLUMN=VALUE, several values as V1|V2), or rows "
        "FIRST-LAST (from 1); repeat to combine",
    )
    g.add_argument("--seats", default=None, metavar="A,B", help=SEATS_HELP)
    _add_run_filters(g)
    g.add_argument(
        "--metric",
        default=None,
        choices=sorted(METRICS),
        metavar="M",
        help="only the rows of this metric (ttft_ms, ...)",
    )
    g.add_argument(
        "--statistic", default=None, choices=STATISTICS, metavar="S", help="only the rows of this statistic (p50, ...)"
    )
    g.add_argument(
        "--width",
        default=None,
        choices=["column", "text"],
        help="LaTeX: a float that fits \\columnwidth of a two-column paper, 221 pt (columns split into several "
        "tables where they must be), or \\textwidth, 452 pt, in table* (default: a tabular for a one-column page)",
    )


def _add_run_filters(g) -> None:
    """--harness and --condition: which runs a figure or table is made of."""
    g.add_argument("--harness", action="append", default=None, metavar="NAME", help=HARNESS_HELP)
    g.add_argument("--condition", action="append", default=None, metavar="ID|WORDS", help=CONDITION_HELP)


def _add_plan(sub) -> None:
    """plan: how many more passes would settle each headline comparison (benchreport.cli.plan)."""
    p = sub.add_parser(
        "plan",
        help="from the passes so far, how many more passes (or days) per seat would settle "
        "each headline comparison, by a group-sequential rule (looking after every pass does not "
        "inflate false verdicts)",
    )
    _add_common(p)
    g = p.add_argument_group("the plan")
    g.add_argument(
        "--max-passes",
        type=number(int, 3, 1000),
        default=10,
        metavar="N",
        help="the most passes per seat the plan will run (default 10): the information fraction of a "
        "look is the passes so far over N",
    )
    g.add_argument(
        "--max-days",
        type=number(int, 2, 1000),
        default=10,
        metavar="N",
        help="the most days per seat, for comparisons whose interval holds the variance between days (default 10)",
    )
    g.add_argument(
        "--spending",
        choices=["hsd", "obf", "pocock"],
        default="hsd",
        help="the alpha-spending function: hsd (Hwang-Shih-DeCani, default, at --gamma: near the "
        "fixed-sample bound at the end, a large change can settle at 3 passes), obf (O'Brien-Fleming "
        "type: strictest early) or pocock (Pocock type: even)",
    )
    g.add_argument(
        "--gamma",
        type=number(float, -40.0, 40.0),
        default=-4.0,
        metavar="G",
        help="the Hwang-Shih-DeCani gamma of --spending hsd (default -4; lower is stricter early, 1 is near Pocock's)",
    )
    g.add_argument(
        "--futility-effect",
        type=number(float, 0.0, 10.0),
        default=0.10,
        metavar="X",
        help="the planned change of the futility rule, as a fraction (default 0.10: 10%%): a row stops "
        "when, were the true change this large, a verdict beyond the noise band by the maximum would "
        "be unlikely; 0 turns the rule off",
    )
    g.add_argument(
        "--futility-power",
        type=number(float, 0.0, 1.0),
        default=0.10,
        metavar="P",
        help="the conditional power below which the futility rule stops a row (default 0.10)",
    )
    g.add_argument(
        "--metric",
        default=None,
        metavar="M,N",
        help="also plan the baseline rows of these metrics (default: the primary cells only)",
    )
    g.add_argument(
        "--statistic",
        default=None,
        metavar="S,T",
        help="also plan the baseline rows of these statistics (with --metric: both must match)",
    )
    g.add_argument(
        "--format",
        default=None,
        choices=["text", "markdown", "csv", "json"],
        help="text (default), markdown, csv or json (default: from the suffix of --out, else text)",
    )
    g.add_argument(
        "--out", default=None, metavar="FILE", help="write to FILE (.txt, .md, .csv, .json) instead of stdout"
    )


def _add_other(sub) -> None:
    """exam-delta, store, schema and lab."""
    p = sub.add_parser("exam-delta", help="exact test of an exam delta given as counts, e.g. 153/164 154/164")
    p.add_argument("a", metavar="A", help="baseline correct/total, e.g. 153/164")
    p.add_argument("b", metavar="B", help="candidate correct/total, e.g. 154/164")
    p.add_argument(
        "--alpha",
        type=number(float, 0, 1, False, False),
        default=0.05,
        help="significance level, between 0 and 1 (default 0.05)",
    )
    p.add_argument(
        "--power",
        type=number(float, 0, 1, False, False),
        default=0.80,
        help="power for the detectable difference, between 0 and 1 (default 0.8)",
    )
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p = sub.add_parser("store", help="check a run store, or repair it (`store check|repair --store DIR`)")
    p.add_argument(
        "action",
        choices=("check", "repair", "migrate"),
        help="check: say what is wrong; repair: mend it; migrate: copy it into a new DuckLake store (--to)",
    )
    p.add_argument("--store", required=True, metavar="DIR", help="the run store")
    p.add_argument(
        "--to", default=None, metavar="NEW", help="migrate: the new store (ducklake:DIR or postgresql://...)"
    )
    p.add_argument("--fast", action="store_true", help="check: sizes only, no SHA-256 of every part")
    p.add_argument(
        "--wait",
        type=number(float, 0, 86400),
        default=None,
        metavar="SECONDS",
        help="repair: wait up to SECONDS for another job holding the store",
    )
    p.add_argument("--json", action="store_true", help="check: the problems as a JSON array on stdout")
    p.add_argument("--quiet", action="store_true", help="no summary on stderr")
    p = sub.add_parser("schema", help="print the JSON Schema of the native run format")
    p = sub.add_parser(
        "lab",
        help="put the analyst's notebook (explore.ipynb) beside your runs, its runs set to "
        "DIR, and start JupyterLab there",
    )
    p.add_argument("dir", metavar="DIR", help="the folder of your runs; explore.ipynb is written there unless one is")
    p.add_argument("--no-start", action="store_true", help="only place the notebook; say how to start JupyterLab")
    p.add_argument(
        "--allow-root",
        action="store_true",
        help="pass Jupyter's own --allow-root (given for you when running as root, as in most GPU "
        "containers, and said)",
    )
    p = sub.add_parser(
        "example", help="write the example runs shipped with benchreport into DIR, to try the other commands on"
    )
    p.add_argument("dir", metavar="DIR", help="a new (or empty) folder")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="benchreport",
        description=(
            "Honest, paper-style reports from LLM-serving benchmark runs: native benchreport.run/1 files "
            f"and the output files of {', '.join(HARNESSES[:-1])} and {HARNESSES[-1]} "
            "(docs/importers.md)."
        ),
    )
    parser.add_argument("--version", action="version", version=f"benchreport {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)

    _add_data_commands(sub)
    _add_compare(sub)
    _add_writers(sub)
    _add_plan(sub)
    _add_other(sub)
    for p in sub.choices.values():
        p.add_argument(
            "--log",
            default=None,
            metavar="FILE",
            help="also append what is said on stderr to FILE, with the command, its times and exit code",
        )
    helps = {a.dest: a.help for a in sub._choices_actions}
    for name, p in sub.choices.items():
        p.description = p.description or (helps.get(name, "")[:1].upper() + helps.get(name, "")[1:] + ".")
    parser.commands = sub.choices
    _explain(sub.choices)
    parser.epilog = (
        "examples:\n  benchreport build runs/ --out report/\n  benchreport figure throughput runs/ --out "
        "fig.pdf --width 3.0\n  benchreport lab runs/\n\nbenchreport COMMAND --help says more.\n\n" + EXIT_CODES
    )
    return parser
