"""What every `benchreport` command shares: its exit codes, the usage error, and the one way in
from the command line to what it reads (RUNS or --store DIR: benchreport.source), with the
refusals said on stderr the same way by every command.

Nothing heavier is imported at module level: `--version` and `--help` answer without pandas.
"""

from __future__ import annotations

import signal
import sys

__all__ = [
    "EXIT_OK",
    "EXIT_REFUSED",
    "EXIT_USAGE",
    "EXIT_FLAGS",
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_TERMINATED",
    "EXIT_OF_KIND",
    "UsageError",
    "one_line",
    "refusal_lines",
    "not_a_run_summary",
    "source_of",
    "open_args",
    "analyse_opened",
    "options_of",
    "report_refused",
    "exist",
    "open_checked",
]

#: the exit codes of spec/cli.md
EXIT_OK, EXIT_REFUSED, EXIT_USAGE, EXIT_FLAGS, EXIT_FAILED = 0, 1, 2, 3, 4
#: a command stopped by a signal, as shells report it (128 + the signal's number)
EXIT_INTERRUPTED, EXIT_TERMINATED = 128 + signal.SIGINT, 128 + signal.SIGTERM
#: an error's kind (outdir.OutputFolderError, store.StoreError, report.build.BuildError) -> the exit code
EXIT_OF_KIND = {"refused": EXIT_REFUSED, "usage": EXIT_USAGE, "failed": EXIT_FAILED}


def one_line(text: str) -> str:
    """`text` on one line, control characters shown (a run file's strings are untrusted)."""
    from benchreport.load.errors import one_line as _one_line

    return _one_line(text)


def refusal_lines(*args, **kwargs) -> list[str]:
    """benchreport.load.errors.refusal_lines (deferred import)."""
    from benchreport.load.errors import refusal_lines as _refusal_lines

    return _refusal_lines(*args, **kwargs)


def not_a_run_summary(*args, **kwargs) -> str | None:
    """benchreport.load.errors.not_a_run_summary (deferred import)."""
    from benchreport.load.errors import not_a_run_summary as _summary

    return _summary(*args, **kwargs)


class UsageError(Exception):
    """A command line that asks for something impossible (exit 2, one line)."""


def source_of(args):
    """RUNS or --store DIR as a checked benchreport.source.Source (a usage error otherwise)."""
    from benchreport.source import DEFAULT_MAX_FILE_MB, Source, SourceError

    try:
        return Source.of(
            getattr(args, "runs", None) or None,
            getattr(args, "store", None),
            max_file_mb=float(getattr(args, "max_file_mb", DEFAULT_MAX_FILE_MB)),
            strict=bool(getattr(args, "strict", False)),
            as_of=getattr(args, "as_of", None),
        )
    except SourceError as exc:
        raise UsageError(str(exc)) from None


def open_args(args):
    """The source of the command line read once (benchreport.source.open_source)."""
    from benchreport.source import SourceError, open_source

    try:
        return open_source(source_of(args), progress=None if not args.quiet else False)
    except SourceError as exc:
        raise UsageError(str(exc)) from None


def open_checked(args, *, listed_in: str | None = None):
    """`open_args`, its refusals said on stderr (`report_refused`); None when a refused file stops
    the command (benchreport.source's one rule, `OpenedSource.check_refused`): the caller exits 1."""
    from benchreport.source import RefusedFiles

    opened = open_args(args)
    report_refused(opened.loaded, quiet=args.quiet, listed_in=listed_in)
    try:
        opened.check_refused(skip_bad=args.skip_bad)
    except RefusedFiles:
        return None
    return opened


def options_of(args):
    """The analysis options of the command line (benchreport.options)."""
    from benchreport.options import options_from_args

    return options_from_args(args)


def analyse_opened(args, opened):
    """Statistics and flags of what `open_args` read, with the command line's options."""
    return opened.analyse(options_of(args), quiet=args.quiet)


def exist(paths) -> None:
    """Every path given exists (else a usage error, exit 2, even with --skip-bad: a mistyped
    folder must not pass for an empty one): benchreport.source's check."""
    from benchreport.source import Source, SourceError

    try:
        Source(tuple(str(p) for p in paths or ())).check_exists()
    except SourceError as exc:
        raise UsageError(str(exc)) from None


def report_refused(result, *, quiet: bool, listed_in: str | None = None) -> None:
    """The refusals on stderr (with `quiet` one short line per refused file), then the counts and
    one line for the files that are not run files (errors.refusal_lines)."""
    lines = refusal_lines(result.refused, quiet=quiet)
    if not quiet:
        what = (
            f"{result.store_versions} file version(s) in the store"
            if result.store_versions is not None
            else f"{len(result.runs)} run(s) loaded"
        )
        lines.append(f"{what}, {result.refused_files} file(s) refused, {len(result.skipped)} skipped")
        lines += [line for line in [not_a_run_summary(result.skipped, listed_in=listed_in)] if line]
    for line in lines:
        print(line, file=sys.stderr)
