"""Every run option in one place: what it is, its default and range, why.

From this table come the command line's options (`add_cli_options`), the report notebook's
parameters cell (`parameters_cell`, written into notebooks/report.ipynb by
`python -m benchreport.options --write-notebook`; a test keeps it current), the parameters a
build hands papermill (`notebook_parameters`) and the checks a notebook's parameters get
before anything runs (`parameters_from`: a string where a list is expected is one path, an
unknown name or a path that does not exist stops with one line).

Two kinds: *analysis options* change the numbers (`Options`, with the thresholds of
`benchreport.thresholds`); *build options* say what to read and write. A third list,
`RETIRED_OPTIONS`, holds options that no longer change anything: still accepted (a warning on
the command line, `warn_retired`), so that scripts keep running, but never passed on: not in the
notebook's parameters, the report's parameters table or a build's key.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Mapping

from benchreport.thresholds import DEFAULT, NOISE_BANDS, PrimaryCell, Thresholds, one_band_or_bands

__all__ = [
    "Opt",
    "ANALYSIS_OPTIONS",
    "BUILD_OPTIONS",
    "RETIRED_OPTIONS",
    "ParameterError",
    "add_cli_options",
    "number",
    "options_from_args",
    "warn_retired",
    "parameters_cell",
    "notebook_parameters",
    "parameters_from",
    "write_notebook",
]


@dataclass(frozen=True)
class Opt:
    """One option: name, default, help; `choices` or `range` (low, high, low in, high in) when bounded."""

    name: str
    default: Any
    help: str
    kind: type = str
    choices: tuple | None = None
    range: tuple | None = None
    nullable: bool = False
    cli: bool = True  # also a command-line option (build options like `out` are commands' own)
    metavar: str | None = None


N_BOOT_RANGE = (100, 1_000_000, True, True)
MAX_SEED = 2**63 - 1

ANALYSIS_OPTIONS = (
    Opt(
        "baseline", None, "seat every candidate is compared against; None: the incumbent", nullable=True, metavar="SEAT"
    ),
    Opt(
        "multiplicity",
        "holm",
        "correction across the report's comparisons before a verdict: holm (family-wise), "
        "bh (false discovery rate) or none",
        choices=("holm", "bh", "none"),
    ),
    Opt(
        "history_comparisons",
        "previous",
        "dated comparisons of a seat's cell with itself (kind history in "
        "comparisons.csv): its latest date against the previous one, or against every earlier date (all); "
        "tables/history.csv judges every date against the steady level either way",
        choices=("previous", "all"),
    ),
    Opt("primary_metric", "output_tok_s", "the metric of each seat pair's headline cell", metavar="METRIC"),
    Opt("primary_statistic", "mean", "its statistic", metavar="STAT"),
    Opt("primary_workload", "decode", "its workload, when the pair has it", nullable=True, metavar="WORKLOAD"),
    Opt(
        "primary_concurrency",
        None,
        "its concurrency; None: the highest both seats were measured at",
        int,
        range=(1, 10**9, True, True),
        nullable=True,
        metavar="N",
    ),
)

#: options that no longer change anything, accepted so that command lines keep running (a warning
#: each); empty since issue 43 gave --ci-method, --n-boot and --seed a bootstrap to drive
RETIRED_OPTIONS: tuple = ()

#: the cell interval's method and the bootstrap's settings (issue 43; benchreport.stats.cells.bootstrap_cells)
ANALYSIS_OPTIONS += (
    Opt(
        "ci_method",
        "t",
        "the cell interval over passes (and dates, where there are 3 or more): t on log values (t), or a "
        "two-stage bootstrap, dates then passes, percentile (bootstrap, also percentile) or BCa; "
        "docs/statistics.md measures each one's coverage",
        choices=("t", "bootstrap", "percentile", "BCa"),
    ),
    Opt(
        "n_boot", 2000, "resamples of the bootstrap (with --ci-method bootstrap)", int, range=N_BOOT_RANGE, metavar="N"
    ),
    Opt(
        "seed",
        0,
        "seed of the bootstrap: the same data and seed give byte-identical tables",
        int,
        range=(0, MAX_SEED, True, True),
        metavar="N",
    ),
)

BUILD_OPTIONS = (
    Opt("runs", ["../data/example"], "run files and folders, searched recursively (paths as strings)", list, cli=False),
    Opt(
        "store",
        None,
        "a run store folder (benchreport ingest RUNS --store DIR), in place of runs",
        nullable=True,
        cli=False,
    ),
    Opt(
        "analysis_file",
        None,
        "an analysis saved by benchreport.pipeline.save_analysis, reported on as it is; "
        "None: analyse here (benchreport build hands its own over in memory)",
        nullable=True,
        cli=False,
    ),
    Opt("out", "../reports/notebook", "folder for tables/*.csv, flags.json and figures/", cli=False),
    Opt("title", "Benchmark report", "report title (shown as text, never as markup)", cli=False),
    Opt("formats", ["png", "svg"], "figure files to write: png, svg, pdf", list, cli=False),
    Opt("skip_bad", False, "go on without refused files (they are listed in the appendix)", bool, cli=False),
    Opt("max_file_mb", 512, "refuse run files larger than this", float, range=(0, 1e7, False, True), cli=False),
    Opt(
        "strict",
        False,
        "refuse files that are not run files (a JSON no importer reads that claims no format) instead of skipping them",
        bool,
        cli=False,
    ),
)


class ParameterError(ValueError):
    """A notebook parameter that cannot be used (one line, names the parameter)."""


# --- the command line ---------------------------------------------------------------------
def _shown(value) -> str:
    if value == MAX_SEED:
        return "2^63-1"
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _bounds(low, high, low_in: bool, high_in: bool) -> str:
    if low_in and high_in:
        return f"from {_shown(low)} to {_shown(high)}"
    left = f">= {_shown(low)}" if low_in else f"> {_shown(low)}"
    right = f"<= {_shown(high)}" if high_in else f"< {_shown(high)}"
    return f"{left} and {right}"


def number(kind: type, low, high, low_in: bool = True, high_in: bool = True):
    """An argparse `type` for a finite number of `kind` within bounds (else a one-line refusal)."""
    what = "an integer" if kind is int else "a number"

    def parse(text: str):
        try:
            value = kind(text)
        except (TypeError, ValueError):
            raise argparse.ArgumentTypeError(
                f"expected {what} {_bounds(low, high, low_in, high_in)}, got {text!r}"
            ) from None
        ok = (
            math.isfinite(value)
            and (low <= value if low_in else low < value)
            and (value <= high if high_in else value < high)
        )
        if not ok:
            raise argparse.ArgumentTypeError(f"expected {what} {_bounds(low, high, low_in, high_in)}, got {text!r}")
        return value

    parse.__name__ = kind.__name__  # argparse names the type in its own messages
    return parse


def add_cli_options(p: argparse.ArgumentParser) -> None:
    """Every analysis option and threshold as `--name-with-dashes`, with its range and reason: the
    analysis options under one heading of `--help`, the thresholds under their own."""
    analysis = p.add_argument_group("analysis options")
    for o in ANALYSIS_OPTIONS:
        kw: dict = {"default": o.default, "dest": o.name, "metavar": o.metavar}
        if o.choices:
            kw["choices"] = list(o.choices)
        elif o.range:
            kw["type"] = number(o.kind, *o.range)
        bounds = f"; {_bounds(*o.range)}" if o.range else ""
        analysis.add_argument(
            "--" + o.name.replace("_", "-"), help=f"{o.help} (default {o.default}{bounds})".replace("%", "%%"), **kw
        )
    for o in RETIRED_OPTIONS:
        kw = {"default": None, "dest": o.name, "metavar": o.metavar}
        if o.choices:
            kw["choices"] = list(o.choices)
        else:
            kw["type"] = number(o.kind, *o.range)
        analysis.add_argument("--" + o.name.replace("_", "-"), help=o.help.replace("%", "%%"), **kw)
    ranges = Thresholds.ranges()
    thresholds = p.add_argument_group(
        "thresholds", "when a figure is flagged or a difference is believed; each default with its reason"
    )
    for name, default, why in Thresholds.describe():
        thresholds.add_argument(
            "--" + name.replace("_", "-"),
            type=number(type(default), *ranges[name]),
            default=None if name in NOISE_BANDS else default,  # a band not given: `one_band_or_bands`
            dest=f"th_{name}",
            metavar=name.upper(),
            help=f"{why} (default {default}; {_bounds(*ranges[name])})".replace("%", "%%"),
        )


def warn_retired(args, stderr=None) -> list[str]:
    """One line on stderr for each retired option given on the command line (`RETIRED_OPTIONS`):
    what it no longer does and that it will be removed; the lines, returned."""
    import sys

    lines = [
        f"warning: --{o.name.replace('_', '-')} {o.help}"
        for o in RETIRED_OPTIONS
        if getattr(args, o.name, None) is not None
    ]
    for line in lines:
        print(line, file=stderr or sys.stderr)
    return lines


def options_from_args(args):
    """The analysis options of a parsed command line."""
    values = {o.name: getattr(args, o.name) for o in ANALYSIS_OPTIONS}
    given = {k[3:]: v for k, v in vars(args).items() if k.startswith("th_")}
    values.update({k: v for k, v in given.items() if k not in NOISE_BANDS})
    values.update(one_band_or_bands(given))  # --noise alone: one band for every statistic
    return options_from(values)


# --- the notebook ----------------------------------------------------------------------------
def _help(text: str) -> str:
    """A help comment papermill can parse: its inspector skips any line with a second '='."""
    text = text.replace(">=", "≥").replace("<=", "≤")
    text = re.sub(r"\b(\w+)=(\d)", r"\1 of \2", text)
    return text.replace("=", " is ")


def _literal(value) -> str:
    return json.dumps(value) if isinstance(value, (str, list)) else repr(value)


def parameters_cell() -> str:
    """The report notebook's parameters cell: one `name = default  # help` line per option."""
    lines = ["# Parameters: papermill injects the values of a build in a cell below this one."]
    build = {o.name: o for o in BUILD_OPTIONS}
    for name in ("runs", "store", "analysis_file", "out", "title"):
        o = build[name]
        lines.append(f"{o.name} = {_literal(o.default)}  # {_help(o.help)}")
    for o in ANALYSIS_OPTIONS:
        lines.append(f"{o.name} = {_literal(o.default)}  # {_help(o.help)}")
    for name, default, why in Thresholds.describe():
        lines.append(f"{name} = {default!r}  # {_help(why)}")
    for name in ("formats", "skip_bad", "max_file_mb", "strict"):
        o = build[name]
        lines.append(f"{o.name} = {_literal(o.default)}  # {_help(o.help)}")
    return "\n".join(lines)


def write_notebook(path: str | os.PathLike) -> bool:
    """Rewrite the parameters cell of a notebook from this table; True when it changed."""
    import nbformat

    nb = nbformat.read(str(path), as_version=4)
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    new = parameters_cell()
    if cell.source == new:
        return False
    cell.source = new
    nbformat.write(nb, str(path))
    return True


def notebook_parameters(
    options,
    *,
    runs: list[str],
    store: str | None,
    out: str,
    title: str,
    formats: list[str],
    skip_bad: bool,
    max_file_mb: float,
    analysis_file: str | None = None,
    strict: bool = False,
) -> dict:
    """What a build hands papermill: plain data only (strings, numbers, lists of strings, None)."""
    return {
        "runs": list(runs),
        "store": store,
        "analysis_file": analysis_file,
        "out": str(out),
        "title": str(title),
        **options.parameters(),
        "formats": list(formats),
        "skip_bad": bool(skip_bad),
        "max_file_mb": float(max_file_mb),
        "strict": bool(strict),
        **options.thresholds.as_dict(),
    }


@dataclass
class Parameters:
    """A notebook's parameters, checked: the analysis options and the build options."""

    options: Any
    build: dict = field(default_factory=dict)


#: names a notebook's namespace holds besides its parameters (IPython's own)
_IPYTHON_NAMES = {"In", "Out", "get_ipython", "exit", "quit", "open"}


def _check_value(o: Opt, value):
    if value is None and o.nullable:
        return None
    if o.kind is list:
        if isinstance(value, (str, os.PathLike)):
            return [str(value)]  # papermill's `-p runs ../data/x` passes a string: one path, not its characters
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, (str, os.PathLike)) for v in value):
            raise ParameterError(f"parameter {o.name}: expected a list of strings, got {value!r}")
        return [str(v) for v in value]
    if o.choices and value not in o.choices:
        raise ParameterError(f"parameter {o.name}: expected one of {', '.join(o.choices)}, got {value!r}")
    if o.kind is bool and not isinstance(value, bool):
        raise ParameterError(f"parameter {o.name}: expected True or False, got {value!r}")
    if o.kind in (int, float) and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise ParameterError(f"parameter {o.name}: expected a number, got {value!r}")
    if o.range:
        low, high, low_in, high_in = o.range
        ok = (low <= value if low_in else low < value) and (value <= high if high_in else value < high)
        if not (math.isfinite(value) and ok):
            raise ParameterError(f"parameter {o.name}: expected {_bounds(*o.range)}, got {value!r}")
    return value


def parameters_from(namespace: Mapping[str, Any]) -> Parameters:
    """The parameters in a notebook's namespace, checked before anything runs.

    Raises ParameterError (one line) for an unknown name, a value of the wrong kind or out of
    range, or a run path or store that does not exist.
    """
    known = {o.name: o for o in (*ANALYSIS_OPTIONS, *BUILD_OPTIONS)}
    thresholds = {name for name, _, _ in Thresholds.describe()}
    retired = {o.name for o in RETIRED_OPTIONS}  # accepted (papermill -p n_boot 200 still runs), not used
    user = {
        k
        for k, v in namespace.items()
        if not k.startswith("_")
        and k not in _IPYTHON_NAMES
        and k not in retired
        and not callable(v)
        and type(v).__name__ != "module"
    }
    unknown = sorted(user - set(known) - thresholds)
    if unknown:
        raise ParameterError(
            f"unknown parameter(s) {', '.join(unknown)}: the report notebook takes "
            f"{', '.join(sorted(set(known) | thresholds))}"
        )
    values = {n: _check_value(o, namespace.get(n, o.default)) for n, o in known.items()}
    ranges = Thresholds.ranges()
    th = {}
    for n in thresholds & set(namespace):
        th[n] = _check_value(Opt(n, None, "", float, range=ranges[n]), namespace[n])
    for p in values["runs"] if values["store"] is None and values["analysis_file"] is None else ():
        if not Path(p).exists():
            raise ParameterError(f"parameter runs: {p} does not exist")
    store = values["store"]
    if store is not None and "://" not in str(store) and not Path(store).is_dir():  # a URL: a catalog's
        raise ParameterError(f"parameter store: {values['store']} is not a folder")
    options = options_from({**{o.name: values[o.name] for o in ANALYSIS_OPTIONS}, **th})
    return Parameters(options, {o.name: values[o.name] for o in BUILD_OPTIONS})


if __name__ == "__main__":  # python -m benchreport.options --write-notebook
    import sys

    if sys.argv[1:] != ["--write-notebook"]:
        sys.exit("usage: python -m benchreport.options --write-notebook")
    from benchreport.resources import notebook_path

    nb = notebook_path("report.ipynb")
    print(f"{nb}: {'updated' if write_notebook(nb) else 'already current'}")


# --- the analysis options (what changes the numbers; benchreport.pipeline uses them) ----------
@dataclass(frozen=True)
class Options:
    """Everything that changes the numbers, printed in the report's appendix. `ci_method` "t" (the
    default) or a bootstrap ("bootstrap", "percentile", "BCa": benchreport.stats.cells.bootstrap_cells,
    `n_boot` resamples drawn from `seed`; issue 43)."""

    baseline: str | None = None
    n_boot: int = 2000
    seed: int = 0
    ci_method: str = "t"
    thresholds: Thresholds = DEFAULT
    multiplicity: str = "holm"
    primary: PrimaryCell = PrimaryCell()
    history_comparisons: str = "previous"

    def parameters(self) -> dict:
        """The options that take effect as plain data (papermill parameters, the appendix, a build's
        key), thresholds excluded."""
        return {
            "baseline": self.baseline,
            "multiplicity": self.multiplicity,
            "history_comparisons": self.history_comparisons,
            "primary_metric": self.primary.metric,
            "primary_statistic": self.primary.statistic,
            "primary_workload": self.primary.workload,
            "primary_concurrency": self.primary.concurrency,
            "ci_method": self.ci_method,
            # the bootstrap's settings take effect only with a bootstrap (issue 43)
            **({"n_boot": self.n_boot, "seed": self.seed} if self.ci_method != "t" else {}),
        }

    def as_dict(self) -> dict:
        return {**self.parameters(), **self.thresholds.as_dict()}


def primary_cell(
    metric: str = "output_tok_s",
    statistic: str = "mean",
    workload: str | None = "decode",
    concurrency: int | None = None,
) -> PrimaryCell:
    """The declared headline cell from plain parameters (CLI options, notebook parameters)."""
    return PrimaryCell(
        metric=metric,
        statistic=statistic,
        workload=workload or None,
        concurrency=None if concurrency in (None, "", "max") else int(concurrency),
    )


def options_from(values: Mapping[str, Any]) -> Options:
    """Options from flat values: the analysis options of `benchreport.options` and any thresholds
    (unknown names raise TypeError; missing ones take their defaults)."""
    names = {f.name for f in fields(Thresholds)}
    th = {k: v for k, v in values.items() if k in names}
    v = {k: x for k, x in values.items() if k not in names}
    primary = primary_cell(
        v.pop("primary_metric", "output_tok_s"),
        v.pop("primary_statistic", "mean"),
        v.pop("primary_workload", "decode"),
        v.pop("primary_concurrency", None),
    )
    return Options(**v, primary=primary, thresholds=Thresholds(**th))
