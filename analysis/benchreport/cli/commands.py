"""The `benchreport` command (spec/cli.md): validate, ingest, analyse, flags, build, figure, table, plan,
exam-delta.

Exit codes are a contract relied on by scheduled builds:
0 success; 1 a file was refused (unless --skip-bad where allowed); 2 usage error or
malformed input to exam-delta, or an --out that is not benchreport's to replace; 3
`--fail-on` was met; 4 writing the output (or, for build, the build itself) failed, the
previous output untouched; 130 interrupted (Ctrl-C); 143 terminated (SIGTERM).
"""

from __future__ import annotations

import errno
import json
import sys
import time
from pathlib import Path

from benchreport.progress import Terminated, terminate_as_interrupt
from benchreport.cli.common import (
    EXIT_FAILED,
    EXIT_FLAGS,
    EXIT_INTERRUPTED,
    EXIT_OF_KIND,
    EXIT_OK,
    EXIT_REFUSED,
    EXIT_TERMINATED,
    EXIT_USAGE,
    UsageError,
    analyse_opened,
    exist,
    not_a_run_summary,
    one_line,
    open_args,
    open_checked,
    options_of,
    refusal_lines,
    report_refused,
    source_of,
)
from benchreport.cli.parser import build_parser
from benchreport.options import warn_retired

# Nothing heavier is imported here: `benchreport --version` and `--help` answer without pandas,
# numpy or the loaders (docs/performance.md); each command imports what it needs.


def cmd_validate(args) -> int:
    opened = open_args(args)
    result = opened.loaded
    for line in refusal_lines(result.refused, quiet=args.quiet):  # --quiet: one short line a file
        print(line)
    if not args.quiet:
        for s in result.skipped:
            if not s.not_a_run:  # those are counted in one line below
                print(str(s), file=sys.stderr)
        if opened.store is not None:  # a store holds tables, checked when each run was ingested
            from benchreport.store.read import read_tables

            n = len(read_tables(opened.store).runs)
            print(
                f"{n} run(s) in the store, each validated when it was ingested; {result.refused_files} file(s) "
                f"refused and {len(result.skipped)} skipped then (benchreport store check checks its files)",
                file=sys.stderr,
            )
        else:
            print(
                f"{len(result.runs)} run(s) valid, {result.refused_files} file(s) refused, "
                f"{len(result.skipped)} skipped",
                file=sys.stderr,
            )
        summary = not_a_run_summary(result.skipped)
        if summary:
            print(summary, file=sys.stderr)
    return EXIT_OK if result.ok else EXIT_REFUSED


def cmd_ingest(args) -> int:
    from benchreport import outdir

    from benchreport.tables import build_tables, write_parquet

    if args.store is not None:
        return _ingest_store(args)
    if not args.runs or args.out is None:
        raise UsageError("ingest needs RUNS and --out DIR (tidy tables) or --store DIR (a run store)")
    exist(args.runs)
    target = outdir.check_out(args.out, args.runs)
    with outdir.locked(target, "ingest", wait=args.wait):
        result = open_args(args).loaded
        report_refused(result, quiet=args.quiet, listed_in="refused.json")
        tables = build_tables(result)

        def write(stage: Path) -> None:
            write_parquet(tables, stage)
            (stage / "refused.json").write_text(result.refused_json(), encoding="utf-8")

        outdir.write_output(target, "ingest", write)
    return EXIT_OK if result.ok or args.skip_bad else EXIT_REFUSED


def _ingest_store(args) -> int:
    """`ingest RUNS --store DIR`: add to the run store what it has not seen."""
    from benchreport.store import ingest

    if not args.runs:
        raise UsageError("ingest --store DIR needs RUNS to add")
    exist(args.runs)
    report = ingest(
        args.runs,
        args.store,
        max_file_bytes=int(args.max_file_mb * 1e6),
        progress=None if not args.quiet else False,
        wait=args.wait,
        strict=args.strict,
    )
    for line in refusal_lines(report.refused, quiet=args.quiet):
        print(line, file=sys.stderr)
    for n in report.notes:
        print(f"note: {n}", file=sys.stderr)
    if not args.quiet:
        print(report.summary(), file=sys.stderr)
        summary = not_a_run_summary(report.skipped, listed_in="the store's files.parquet")
        if summary:
            print(summary, file=sys.stderr)
    return EXIT_OK if report.ok or args.skip_bad else EXIT_REFUSED


def cmd_analyse(args) -> int:
    from benchreport import outdir

    from benchreport.pipeline import write_analysis

    exist(args.runs)
    target = outdir.check_out(args.out, args.runs or [args.store])
    with outdir.locked(target, "analyse", wait=args.wait):
        opened = open_checked(args, listed_in="refused.json")
        if opened is None:
            return EXIT_REFUSED
        analysis = analyse_opened(args, opened)
        outdir.write_output(target, "analyse", lambda stage: write_analysis(analysis, stage))
    return EXIT_OK


def cmd_flags(args) -> int:
    from benchreport.flags import render_table

    previous = _previous_of(args)
    opened = open_args(args)
    result = opened.loaded
    report_refused(result, quiet=args.quiet)
    analysis = analyse_opened(args, opened)
    if args.json:
        print(json.dumps(analysis.flags_records(), indent=2, ensure_ascii=False))
    else:
        print(render_table(analysis.flags))
    if not result.ok and not args.skip_bad:
        return EXIT_REFUSED
    shown = f"--previous {one_line(str(args.previous))}" if args.previous else None
    if args.fail_on and _say_gate(analysis.flags_records(), args.fail_on, previous, shown, quiet=args.quiet):
        return EXIT_FLAGS
    return EXIT_OK


def _previous_of(args) -> list[dict] | None:
    """`flags --previous FILE`: the flags a "new-" --fail-on compares with (a flags.json, or what
    `flags --json` printed); a "new-" level without it is a usage error."""
    if args.previous is None:
        if args.fail_on and args.fail_on.startswith("new-"):
            raise UsageError(
                f"--fail-on {args.fail_on} needs --previous FILE (the flags.json of the previous report or "
                "`flags --json` output) to know which flags are new; `build` compares with its --out"
            )
        return None
    try:
        previous = json.loads(Path(args.previous).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"--previous {one_line(str(args.previous))}: cannot be read as flags JSON ({exc})") from None
    if not isinstance(previous, list) or not all(isinstance(f, dict) and "code" in f for f in previous):
        raise UsageError(
            f"--previous {one_line(str(args.previous))}: expected a JSON array of flags (flags.json), got something else"
        )
    return previous


def _say_gate(records: list[dict], level: str, previous, reference: str | None, *, quiet: bool) -> bool:
    """Judge --fail-on LEVEL and say it on stderr: the new and the standing flags at its level.
    Said even with --quiet when met (a gate that fails says why); returns whether it is met."""
    from benchreport.flags import gate_lines, judge_gate

    gate = judge_gate(records, level, previous)
    if gate.met or not quiet:
        for line in gate_lines(gate, reference):
            print(line, file=sys.stderr)
    return gate.met


def build_request(args, options):
    """`benchreport build`'s command line as a typed request (benchreport.report.build)."""
    from benchreport.report.build import BuildRequest

    return BuildRequest(
        source_of(args),
        args.out,
        options,
        title=str(args.title) if getattr(args, "title", None) else "Benchmark report",
        formats=getattr(args, "format", None),
        figure_formats=getattr(args, "figure_formats", "png,svg"),
        site=getattr(args, "site", None),
        wait=getattr(args, "wait", None),
        skip_bad=bool(getattr(args, "skip_bad", False)),
        fail_on=getattr(args, "fail_on", None),
        quiet=bool(getattr(args, "quiet", False)),
        pdf_engine=getattr(args, "pdf_engine", "auto"),
    )


def run_build(request) -> int:
    """Build, say what was written (or why not, in one line) and return the exit code."""
    from benchreport.report.build import BuildError, build

    try:
        result = build(request)
    except BuildError as exc:
        unchanged = "; the previous report, if any, is unchanged" if exc.kind == "failed" else ""
        print(f"benchreport build: {one_line(str(exc))}{unchanged}", file=sys.stderr)
        return EXIT_OF_KIND[exc.kind]
    if not result.up_to_date and not request.quiet:
        flags = result.flags
        sev = {s: sum(1 for f in flags if f.get("severity") == s) for s in ("critical", "warn", "info")}
        n_fig = len({f.rsplit(".", 1)[0] for f in result.figures})
        print(
            f"report written to {result.shown} ({', '.join(f'report.{f}' for f in result.formats)}, {n_fig} "
            f"figure(s)); {len(flags)} flag(s): {sev['critical']} critical, {sev['warn']} warn, "
            f"{sev['info']} info" + _new_since(flags, result.previous_flags),
            file=sys.stderr,
        )
    if request.fail_on:
        reference = f"the previous build in {result.shown}"
        _say_gate(result.flags, request.fail_on, result.previous_flags, reference, quiet=request.quiet)
    return EXIT_FLAGS if result.fail_on_met else EXIT_OK


def _new_since(flags: list[dict], previous: list[dict] | None) -> str:
    """ "; 1 new since the previous build, 4 standing" (empty when --out held no earlier report)."""
    from benchreport.flags.gate import new_and_standing

    if previous is None:
        return ""
    new, standing = new_and_standing(flags, previous)
    return f"; {len(new)} new since the previous build, {len(standing)} standing"


def cmd_build(args) -> int:
    return run_build(build_request(args, options_of(args)))


def _compare_side(args, text: str, store, tables_cache: dict):
    """(tables, label, LoadResult) of one side of `compare`."""
    from benchreport.before_after import parse_selection, select_store
    from benchreport.load import load
    from benchreport.tables import build_tables

    if store is not None:
        from benchreport.store import read_tables

        try:
            sel = parse_selection(text)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if "all" not in tables_cache:
            tables_cache["all"] = read_tables(store)
        tables, date = select_store(store, sel, tables=tables_cache["all"])
        return tables, date, None
    if not Path(text).exists():
        raise UsageError(
            f"{one_line(text)}: no such file or folder (give two run folders, or --store DIR and two selections)"
        )
    result = load(
        [text],
        max_file_bytes=int(args.max_file_mb * 1e6),
        progress=None if not args.quiet else False,
        strict=args.strict,
    )
    return build_tables(result), None, result


def cmd_compare(args) -> int:
    from benchreport import outdir

    import contextlib

    if args.baseline is not None:
        raise UsageError("compare takes each pair's seat in A as the baseline; --baseline does not apply")
    store = None
    if args.store is not None:
        from benchreport.store import Store

        store = Store.open(args.store).snapshot()
    formats = [f.strip() for f in str(args.format).split(",") if f.strip()]
    bad = [f for f in formats if f not in ("html", "pdf")]
    if bad or not formats:
        raise UsageError(f"--format: expected html and/or pdf, got {args.format!r}")
    if "pdf" in formats and args.out is not None:
        from benchreport.report.render.pdf import engine_missing

        why = engine_missing(args.pdf_engine)
        if why:
            raise UsageError(why)
    target = (
        outdir.check_out(args.out, [args.store] if store is not None else [args.a, args.b])
        if args.out is not None
        else None
    )
    with outdir.locked(target, "compare", wait=args.wait) if target is not None else contextlib.nullcontext():
        return _compare(args, store, target, formats)


def _compare(args, store, target, formats) -> int:
    from benchreport.before_after import COMPARE_COLUMNS, NothingToCompare, compare, terminal_table

    cache: dict = {}
    try:
        ta, la, ra = _compare_side(args, args.a, store, cache)
        tb, lb, rb = _compare_side(args, args.b, store, cache)
    except NothingToCompare as exc:  # the first night of a nightly gate: not an error
        if not args.quiet:
            print(f"benchreport compare: {one_line(str(exc))}", file=sys.stderr)
        if args.json:
            print("[]")
        return EXIT_OK
    refused = [*(ra.refused if ra else []), *(rb.refused if rb else [])]
    for line in refusal_lines(refused, quiet=args.quiet):
        print(line, file=sys.stderr)
    if refused and not args.skip_bad:
        print(
            f"benchreport compare: {len(refused)} file(s) refused; nothing compared (use --skip-bad to compare "
            "the others)",
            file=sys.stderr,
        )
        return EXIT_REFUSED
    for text, r in ((args.a, ra), (args.b, rb)):
        if r is not None and not r.runs:
            raise UsageError(f"{one_line(text)}: no run could be read from it")
    labels = (la, lb) if la and lb and la != lb else ("A", "B")
    opts = options_of(args)
    nights = None
    if store is not None:
        from benchreport.before_after import store_nights

        window = int(opts.thresholds.history_window)
        nights = lambda seat, date: store_nights(store, cache["all"], seat, date, window)  # noqa: E731
    result = compare(ta, tb, opts, labels=labels, nights=nights)
    if args.json:
        rows = result.rows[COMPARE_COLUMNS].astype(object).where(result.rows[COMPARE_COLUMNS].notna(), None)
        print(json.dumps(rows.to_dict("records"), indent=2, ensure_ascii=False, default=str))
    elif not args.quiet:
        print(terminal_table(result))
    if target is not None:
        _write_compare(result, args, target, formats)
    regressed = result.regressed(within_band=args.fail_on == "regression-within-band") if args.fail_on else None
    if regressed is not None and len(regressed):
        # said even with --quiet: a gate that fails says why
        inside = " (or worse within the noise band)" if args.fail_on == "regression-within-band" else ""
        print(f"--fail-on {args.fail_on}: {len(regressed)} cell(s) worse in B than in A{inside}:", file=sys.stderr)
        for line in regression_lines(regressed):
            print(f"  {line}", file=sys.stderr)
        return EXIT_FLAGS
    return EXIT_OK


def _write_compare(result, args, target, formats) -> None:
    from benchreport import outdir

    from benchreport.pipeline import write_csv
    from benchreport.report.render.compare_page import compare_html
    from benchreport.report.render.pdf import html_to_pdf

    page = compare_html(result, a_text=args.a, b_text=args.b)

    def write(stage: Path) -> None:
        (stage / "tables").mkdir()
        write_csv(result.rows, stage / "tables" / "compare.csv")
        (stage / "compare.html").write_text(page, encoding="utf-8")
        if "pdf" in formats:
            html_to_pdf(
                page,
                stage / "compare.pdf",
                engine=args.pdf_engine,
                warn=lambda m: print(f"benchreport compare: {m}", file=sys.stderr),
                when=time.time(),
            )

    outdir.write_output(target, "compare", write)


#: at most this many regressed cells are named on stderr (the rest are counted)
SHOWN_CAUSES = 20


def regression_lines(rows) -> list[str]:
    """One line per cell of B worse than A (seat, cell, ratio and interval; a change inside the noise
    band says so), for a failing gate's log: the rows given (`CompareResult.regressed`)."""
    from benchreport import format as F

    worse = rows
    out = []
    for r in worse.head(SHOWN_CAUSES).itertuples(index=False):
        conc = f" at {F.streams(int(r.concurrency))}" if F.finite(r.concurrency) else ""
        ci = f" [{r.ci_low:.3f}, {r.ci_high:.3f}]" if F.finite(r.ci_low) and F.finite(r.ci_high) else ""
        inside = f", {r.verdict_detail} (±{F.pct(r.noise_band)} noise band)" if r.verdict != "worse" else ""
        out.append(
            one_line(
                f"{r.after}: {r.workload}{conc}, {r.metric} {r.statistic}: ratio {r.ratio:.3f}{ci}{inside} "
                f"({r.before} -> {r.after})"
            )
        )
    if len(worse) > SHOWN_CAUSES:
        out.append(f"... and {len(worse) - SHOWN_CAUSES} more (all in the rows of --json or --out)")
    return out


def cmd_figure(args) -> int:
    from benchreport.cli.writers import figure_command

    return figure_command(args)


def cmd_table(args) -> int:
    from benchreport.cli.writers import table_command

    return table_command(args)


def cmd_plan(args) -> int:
    from benchreport.cli.plan import plan_command

    return plan_command(args)


def cmd_exam_delta(args) -> int:
    from benchreport.stats.exams import exam_delta_counts, parse_counts

    try:
        a_correct, a_total = parse_counts(args.a)
        b_correct, b_total = parse_counts(args.b)
        if not 0 < args.alpha < 1:
            raise ValueError(f"--alpha must be between 0 and 1, got {args.alpha}")
    except ValueError as exc:
        print(f"benchreport exam-delta: {exc}", file=sys.stderr)
        return EXIT_USAGE
    res = exam_delta_counts(a_correct, a_total, b_correct, b_total, alpha=args.alpha, power=args.power)
    record = res.as_dict()
    if args.json:
        print(json.dumps(record, indent=2))
    else:
        print(res.summary())
    return EXIT_OK


def cmd_schema(args) -> int:
    from benchreport.schema import schema_text

    sys.stdout.write(schema_text())
    return EXIT_OK


def cmd_store(args) -> int:
    """`store check` (0 sound, 1 clutter only: strays, leftovers, lost versions, 4 damaged) and
    `store repair` (0 when the store then checks clean, else as check after the repair)."""
    from benchreport.store import Store
    from benchreport.store.check import check, repair

    store = Store.open(args.store)
    if args.action == "migrate":
        from benchreport.store.lake import migrate

        if not args.to:
            raise UsageError("store migrate needs --to NEW (ducklake:DIR or postgresql://...)")
        rows = migrate(store, args.to)
        if not args.quiet:
            print(
                f"{args.to}: {sum(rows.values())} row(s) of {len(rows)} table(s) copied, checked equal", file=sys.stderr
            )
        return EXIT_OK
    if args.action == "check":
        problems = check(store, hashed=not args.fast)
        if args.json:
            print(json.dumps([{"kind": p.kind, "name": p.name, "detail": p.detail} for p in problems], indent=2))
        else:
            for p in problems:
                print(str(p))
        if not args.quiet:
            print(
                f"{store.root}: {len(store.parts())} part(s) listed, {len(problems)} problem(s)"
                + ("; `benchreport store repair --store DIR` mends them" if problems else ""),
                file=sys.stderr,
            )
    else:
        done = repair(store, wait=args.wait)
        problems = done.problems_after
        for p in problems:
            print(str(p))
        if not args.quiet:
            for name in done.moved:
                print(f"moved to lost+found/: {name}", file=sys.stderr)
            for path in done.lost:
                print(f"lost (its source is gone or changed; ingest it again): {path}", file=sys.stderr)
            print(done.summary(store.root), file=sys.stderr)
    if any(p.damages_data for p in problems):
        return EXIT_FAILED
    return EXIT_REFUSED if problems else EXIT_OK


def cmd_lab(args) -> int:
    from benchreport.cli.lab import lab_command

    return lab_command(args)


def cmd_example(args) -> int:
    from benchreport.cli.example import example_command

    return example_command(args)


COMMANDS = {
    "validate": cmd_validate,
    "ingest": cmd_ingest,
    "analyse": cmd_analyse,
    "flags": cmd_flags,
    "build": cmd_build,
    "compare": cmd_compare,
    "figure": cmd_figure,
    "table": cmd_table,
    "plan": cmd_plan,
    "exam-delta": cmd_exam_delta,
    "schema": cmd_schema,
    "store": cmd_store,
    "lab": cmd_lab,
    "example": cmd_example,
}


def without_rfc3987_syntax() -> None:
    """Keep jsonschema from importing rfc3987-syntax in this process (the command's own, where no
    user code runs): JupyterLab's jupyter-events asks for ``jsonschema[format-nongpl]``, which brings
    it, and jsonschema imports it with itself, compiling a Lark grammar: importing papermill,
    nbconvert and nbformat took 1.4 s instead of 0.5 s (docs/performance.md). Only the "iri" and
    "iri-reference" JSON Schema formats go unchecked, and no schema benchreport validates uses them."""
    if "jsonschema" not in sys.modules:
        sys.modules.setdefault("rfc3987_syntax", None)  # None in sys.modules: an ImportError, caught by jsonschema


def run() -> None:
    """The `benchreport` command (console script and `python -m benchreport`): `main`, then exit.

    After Ctrl-C or SIGTERM (exit 130 or 143), every clean-up has run (the `finally` blocks, then
    the `atexit` functions, temporary folders' included); the process then leaves without
    CPython's finalization, which can crash (SIGABRT, "PyThreadState_Get: the GIL is released")
    when the signal landed in an extension module's import and left that module half made."""
    code = main()
    if code in (EXIT_INTERRUPTED, EXIT_TERMINATED):
        import atexit
        import os

        sys.stdout.flush()
        sys.stderr.flush()
        atexit._run_exitfuncs()
        os._exit(code)
    sys.exit(code)


def main(argv: list[str] | None = None) -> int:
    without_rfc3987_syntax()
    # SIGTERM unwinds like Ctrl-C from the first line on, so that a command stopped at any moment
    # (a scheduler's timeout) runs its clean-up and exits 143, and Ctrl-C exits 130, never a traceback
    try:
        with terminate_as_interrupt():
            args = build_parser().parse_args(argv)
            warn_retired(args)  # --n-boot, --seed, --ci-method: accepted, said to do nothing
            if not getattr(args, "log", None):
                return _main(args)
            from benchreport.cli.log import logged

            return logged(args, sys.argv[1:] if argv is None else argv, _main)
    except Terminated:
        print("benchreport: terminated (SIGTERM)", file=sys.stderr)
        return EXIT_TERMINATED
    except KeyboardInterrupt:
        print("benchreport: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # a signal inside an import turns into the module's own error
        stop = _signal_behind(exc)
        if stop is None:
            raise
        print(
            "benchreport: terminated (SIGTERM)" if isinstance(stop, Terminated) else "benchreport: interrupted",
            file=sys.stderr,
        )
        return EXIT_TERMINATED if isinstance(stop, Terminated) else EXIT_INTERRUPTED


def _signal_behind(exc: BaseException) -> BaseException | None:
    """The SIGTERM or Ctrl-C behind an error, or None: a signal that lands while an extension module
    is imported (numpy, pandas) reaches us as that module's ImportError raised from it."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, (Terminated, KeyboardInterrupt)):
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


def _main(args) -> int:
    from benchreport import outdir
    from benchreport.load.errors import DataSetError
    from benchreport.store.layout import StoreError

    try:
        with terminate_as_interrupt():
            return COMMANDS[args.command](args)
    except (DataSetError, UsageError) as exc:  # cannot be done as asked
        print(f"benchreport {args.command}: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except StoreError as exc:  # 2: not a store as asked; 4: busy or damaged (docs/cli.md)
        print(f"benchreport {args.command}: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_OF_KIND[exc.kind]
    except outdir.OutputFolderError as exc:
        unchanged = "; the previous output is unchanged" if exc.kind == "failed" else ""
        print(f"benchreport {args.command}: {one_line(str(exc))}{unchanged}", file=sys.stderr)
        return EXIT_OF_KIND[exc.kind]
    except Terminated:
        print(f"benchreport {args.command}: terminated (SIGTERM); nothing half-written was left", file=sys.stderr)
        return EXIT_TERMINATED
    except KeyboardInterrupt:
        print(f"benchreport {args.command}: interrupted; nothing half-written was left", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:  # a full disk: one line and exit 4, never a traceback
        if exc.errno not in DISK_FULL:
            raise
        print(f"benchreport {args.command}: {disk_full_line(args, exc)}", file=sys.stderr)
        return EXIT_FAILED


#: the errors of a disk that takes no more (ENOSPC, EDQUOT, EFBIG): exit 4 in one line
DISK_FULL = frozenset(getattr(errno, n) for n in ("ENOSPC", "EDQUOT", "EFBIG") if hasattr(errno, n))


def disk_full_line(args, exc: OSError) -> str:
    """What a command was writing when the disk filled, and what is left: the store as it was
    (its unfinished batch is swept by the next ingest) or --out unchanged (written in a staging folder)."""
    why = exc.strerror or "no space left on the device"
    if "No space" not in why and exc.errno == errno.ENOSPC:
        why = "no space left on the device"
    if getattr(args, "store", None) and args.command == "ingest":
        what = f"the run store {one_line(str(args.store))}"
        after = "the store holds what it held before (the next ingest sweeps the unfinished batch)"
    elif getattr(args, "store", None) and args.command == "store":
        what = f"the run store {one_line(str(args.store))}"
        after = "`benchreport store check` says what is left to mend"
    elif getattr(args, "out", None):
        what = f"--out {one_line(str(args.out))}"
        after = "the previous output is unchanged"
    else:
        what, after = "the output", "nothing half-written is used"
    return f"could not write {what}: {one_line(why)} (exit {EXIT_FAILED}); {after}"
