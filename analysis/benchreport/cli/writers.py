"""`benchreport figure` and `benchreport table` (spec/cli.md): one figure or table of the report, no build.

A figure may be sized for the page it goes on (`--width`, `--height`, `--dpi`); a table to some
columns and rows (`--columns`, `--rows`) and, in LaTeX, to a column or the text width of the page
(`--width column|text`). Both may be narrowed to the runs of some seats, harnesses and conditions
(`--seats`, `--harness`, `--condition`) and to one metric and statistic (`--metric`,
`--statistic`). A figure sized for a page is measured once drawn: one that does not fit inside
its edges is an error naming what to leave out, and nothing is written.
"""

from __future__ import annotations

import sys
from pathlib import Path

from benchreport import outdir
from benchreport.cli.common import EXIT_OK, EXIT_REFUSED, UsageError, analyse_opened, open_checked, source_of
from benchreport.load.errors import UNSAFE_CHARS

__all__ = ["figure_command", "table_command", "out_file", "write_atomic"]


def _one_name(args, catalog: dict, kind: str) -> None:
    """Before anything is read: a known NAME (unless --list)."""
    if args.list:
        if args.name:  # `--list RUNS`: the positional NAME took the first of RUNS
            args.runs = [args.name, *args.runs]
            args.name = None
        return
    if not args.name:
        raise UsageError(f"give the {kind}'s NAME (benchreport {kind} --list names them)")
    if args.name not in catalog:
        raise UsageError(f"no {kind} named {_shown(args.name)}; the report's {kind}s are: {', '.join(catalog)}")


def _shown(text: str) -> str:
    """A user's string in a message: quoted, control and bidi characters escaped."""
    return repr(UNSAFE_CHARS.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text))


def out_file(args, suffixes) -> Path | None:
    """--out as a file: its suffix one of `suffixes`, not a folder, not one of the inputs."""
    if args.out is None:
        return None
    out = Path(args.out)
    if out.suffix.lower() not in suffixes:
        raise UsageError(f"--out must end in {', '.join(suffixes[:-1])} or {suffixes[-1]}, got {_shown(str(out))}")
    if out.is_dir():
        raise UsageError(f"--out {_shown(str(out))} is a folder; give a file name")
    if not out.parent.is_dir():
        raise UsageError(f"--out: the folder {_shown(str(out.parent))} does not exist")
    target = out.resolve()
    for r in args.runs or []:
        if Path(r).resolve() == target:
            raise UsageError(f"--out {_shown(str(out))} is one of the inputs")
    return out


def write_atomic(out: Path, write, *, quiet: bool) -> int:
    """`write(folder)` makes FOLDER/file in a temporary folder beside `out`; that file is then
    moved into place, so `out` is never half written. Exit 0, or exit 4 naming `out`."""
    import os
    import shutil
    import tempfile

    try:
        stage = Path(tempfile.mkdtemp(dir=out.parent, prefix=".benchreport-tmp-"))
        try:
            os.replace(write(stage), out)
        finally:
            shutil.rmtree(stage, ignore_errors=True)
    except OSError as exc:
        raise outdir.OutputFolderError(f"could not write {out}: {exc.strerror or exc}", "failed") from exc
    if not quiet:
        print(f"wrote {out}", file=sys.stderr)
    return EXIT_OK


def _text_file(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _listing(args, catalog: dict, kind: str) -> int:
    """`--list`: each name and what it shows; with RUNS, whether this data has it (and its number)."""
    numbers = present = None
    if args.runs or args.store:
        from benchreport.report import catalog as cat

        opened = open_checked(args)
        if opened is None:
            return EXIT_REFUSED
        a = analyse_opened(args, opened)
        if kind == "figure":
            numbers = cat.figure_numbers(a)
        else:
            present = {n for n in catalog if cat.table(a, n) is not None}
    for name, e in catalog.items():
        mark = ""
        if numbers is not None:
            mark = f"Figure {numbers[name]}" if name in numbers else "(nothing to draw)"
        elif present is not None:
            mark = "" if name in present else "(no rows)"
        print(
            f"{name:<16} {mark:<18} {e.what}" if numbers is not None or present is not None else f"{name:<16} {e.what}"
        )
    return EXIT_OK


def _analysis_for_one(args):
    """Load and analyse as `analyse` does (only the runs of `--seats`, `--harness` and
    `--condition` when given); None (after saying why) when a file was refused."""
    from benchreport.report.catalog import restrict_runs

    seats = _seats(args)
    harnesses, wanted = _named(args, "harness"), _named(args, "condition")
    opened = open_checked(args)
    if opened is None:
        return None
    if seats or harnesses or wanted:
        try:
            opened.loaded = restrict_runs(opened.loaded, seats, harnesses=harnesses, conditions=wanted)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    return analyse_opened(args, opened)


def _named(args, option: str) -> list[str]:
    """The values of a repeatable `--harness` or `--condition` (none: every one); only with RUNS."""
    given = getattr(args, option, None) or []
    values = [" ".join(v.split()) for v in given]
    if any(not v for v in values):
        raise UsageError(f"--{option}: expected a name, got nothing")
    if values and args.store is not None:
        raise UsageError(f"--{option} needs RUNS (files or folders), not --store")
    return values


def _seats(args) -> list[str]:
    """The seats of `--seats A,B` (none: every seat); only with RUNS (a run store is read whole)."""
    seats = [s.strip() for s in (args.seats or "").split(",") if s.strip()]
    if args.seats is not None and not seats:
        raise UsageError("--seats: expected seat ids separated by commas, got nothing")
    if seats and args.store is not None:
        raise UsageError("--seats needs RUNS (files or folders), not --store")
    return seats


def figure_command(args) -> int:
    from benchreport.report import catalog as cat

    _one_name(args, cat.FIGURES, "figure")
    if args.list:
        return _listing(args, cat.FIGURES, "figure")
    out = out_file(args, cat.FIGURE_SUFFIXES)
    if out is None:
        raise UsageError("give --out FILE (.png, .svg or .pdf)")
    size = _size(args)
    if (args.metric or args.statistic) and args.name not in cat.METRIC_FIGURES + cat.FILTERED_FIGURES:
        raise UsageError(
            f"--metric and --statistic do not apply to the figure {args.name!r}; they apply to "
            f"{', '.join(cat.METRIC_FIGURES + cat.FILTERED_FIGURES)}"
        )
    if size is not None and size[0] and size[1]:
        _check_canvas(out.suffix.lower()[1:], size, size, args.dpi)  # before anything is read
    source_of(args)  # RUNS or --store, before anything is read
    a = _analysis_for_one(args)
    if a is None:
        return EXIT_REFUSED
    try:
        cat.narrow(a, metric=args.metric, statistic=args.statistic)  # one the runs hold, or say which they do
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    block = cat.figure(a, args.name, metric=args.metric, statistic=args.statistic)
    if block is None:
        raise UsageError(
            f"figure {args.name!r} has nothing to draw for these runs "
            f"({cat.FIGURES[args.name].what}); benchreport figure --list RUNS says which do"
        )
    from benchreport.report.model.figures import save_figure
    from benchreport.report.model.figures.theme import fit_figure

    kind = out.suffix.lower()[1:]
    if size is not None:
        problems = fit_figure(block.figure, size)
        if problems:
            raise UsageError(_misfit(args, block.figure, problems, a))
    _check_canvas(kind, size, tuple(block.figure.get_size_inches()), args.dpi)
    return write_atomic(
        out,
        lambda stage: save_figure(block.figure, stage, "figure", (kind,), size=size, dpi=args.dpi)[kind],
        quiet=args.quiet,
    )


#: the options that leave runs or cells out of a figure, and the column of the drawn cells each narrows
_NARROWING = (("--seats", "seat"), ("--harness", "harness"), ("--condition", "load_id"), ("--statistic", "statistic"))


def _misfit(args, fig, problems: list[str], a) -> str:
    """Why the figure does not fit its size, and what would make it: a larger size, or fewer of
    what it draws (only the options that would leave something out: a seat's several harnesses
    are not fewer --seats)."""
    w, h = fig.get_size_inches()
    drawn = getattr(fig, "benchreport_cells", None)
    if drawn is None:
        drawn = a.cells if a.cells is not None else None
    options = []
    for option, column in _NARROWING:
        if drawn is None or column not in drawn.columns:
            continue
        values = sorted({str(v) for v in drawn[column].dropna()})
        if len(values) > 1:
            shown = ", ".join(_shown(v) for v in values[:6]) + (
                f" and {len(values) - 6} more" if len(values) > 6 else ""
            )
            options.append(f"{option} (it draws {shown})")
    leave = "; or draw less with " + "; ".join(options) if options else ""
    return (
        f"the figure {args.name!r} does not fit {w:.2f} x {h:.2f} in: {'; '.join(problems)}. Give a larger "
        f"--width{'' if args.height is None else ' or --height'}{leave}"
    )


#: the largest raster a figure is drawn to: 100 megapixels is 400 MB of RGBA before compression
MAX_PIXELS = 100_000_000


def _check_canvas(kind: str, size, own: tuple[float, float], dpi: int) -> None:
    """Refuse a PNG canvas beyond MAX_PIXELS (`--width 50 --height 50 --dpi 1200` is 3,600
    megapixels, which died with MemoryError) with what to lower; vector formats are not rasters."""
    if kind != "png":
        return
    w = (size[0] if size and size[0] else own[0]) * dpi
    h = (size[1] if size and size[1] else own[1]) * dpi
    if w * h > MAX_PIXELS:
        raise UsageError(
            f"a {w:,.0f} x {h:,.0f} pixel PNG ({w * h / 1e6:,.0f} megapixels) is beyond the "
            f"{MAX_PIXELS / 1e6:.0f}-megapixel limit; lower --dpi, --width or --height, or write "
            ".svg or .pdf (vector: any size)"
        )


def _size(args) -> tuple[float, float] | None:
    """(width, height) in inches from --width and --height (None: the figure's own), or None."""
    if args.width is None and args.height is None:
        return None
    return (args.width, args.height)


def table_command(args) -> int:
    from benchreport.report import catalog as cat

    _one_name(args, cat.TABLES, "table")
    if args.list:
        return _listing(args, cat.TABLES, "table")
    out = out_file(args, tuple(f".{f}" for f in cat.TABLE_FORMATS)) if args.out else None
    fmt = args.format or (out.suffix.lower()[1:] if out is not None else "csv")
    if args.width is not None and fmt != "tex":
        raise UsageError(f"--width {args.width} sizes a LaTeX table; give --format tex (or --out FILE.tex)")
    source_of(args)
    a = _analysis_for_one(args)
    if a is None:
        return EXIT_REFUSED
    try:
        a = cat.narrow(a, metric=args.metric, statistic=args.statistic)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    t = cat.table(a, args.name)
    if t is None:
        raise UsageError(f"table {args.name!r} has no rows for these runs ({cat.TABLES[args.name].what})")
    columns = [c.strip() for c in args.columns.split(",") if c.strip()] if args.columns else None
    try:
        text = cat.table_text(t, fmt, columns=columns, rows=args.rows or (), name=args.name, width=args.width)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if "\n% wider than a page" in text:
        raise UsageError(
            "the LaTeX table is wider than a page even in \\scriptsize; choose fewer --columns, or "
            "--width text (several tables where the columns must be split)"
        )
    if out is None:
        sys.stdout.write(text)
        return EXIT_OK
    return write_atomic(out, lambda stage: _text_file(stage / "table", text), quiet=args.quiet)
