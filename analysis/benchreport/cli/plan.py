"""`benchreport plan` (spec/cli.md; issue 30): from the passes so far, how many more passes (or
days) per seat would settle each headline comparison, by a group-sequential rule under which
looking again after every added pass does not inflate false verdicts (benchreport.stats.sequential).

The headline comparisons are each seat pair's declared primary cell (column ``primary`` of
tables/comparisons.csv), and the baseline rows a user names with `--metric` and `--statistic`.
Each row is planned at the level its verdict faces after the report's correction for multiple
comparisons, at its worst case (benchreport.flags.rules.sampling.corrected_alpha: the primary
cell at the full alpha when it is the only one; other rows Holm's alpha/m), Bonferroni-like, which
stays valid when every hypothesis is tested group-sequentially.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from benchreport.cli.common import EXIT_OK, EXIT_REFUSED, UsageError, analyse_opened, open_checked, source_of

__all__ = ["plan_command", "FORMATS", "plan_text"]

#: --format's choices, and the suffix of --out each is written with
FORMATS = {"text": ".txt", "markdown": ".md", "csv": ".csv", "json": ".json"}

#: the columns the text and Markdown tables show (every column: csv and json)
SHOWN = (
    ("candidate", "candidate"),
    ("baseline", "baseline"),
    ("cell", "cell"),
    ("so far", "so_far"),
    ("ratio [CI]", "ratio_ci"),
    ("verdict now", "verdict"),
    ("alpha", "alpha_shown"),
    ("boundary (t)", "boundary"),
    ("repeated CI", "rci"),
    ("status", "status"),
    ("more per seat", "more"),
)


def _selected(comparisons, metrics: list[str], statistics: list[str]):
    """The baseline rows of the plan: primary rows, and those of the named metrics and statistics."""
    if comparisons is None or not len(comparisons):
        return comparisons
    base = comparisons[comparisons["kind"].astype(str) == "baseline"]
    primary = base["primary"].fillna(False).astype(bool) if "primary" in base else base["kind"] != base["kind"]
    named = primary & False
    if metrics or statistics:
        named = (base["metric"].isin(metrics) if metrics else True) & (
            base["statistic"].isin(statistics) if statistics else True
        )
    return base[primary | named]


def _names(text: str | None, known, option: str) -> list[str]:
    names = [x.strip() for x in (text or "").split(",") if x.strip()]
    bad = [x for x in names if x not in known]
    if bad:
        raise UsageError(f"{option}: unknown {', '.join(map(repr, bad))}; expected some of {', '.join(known)}")
    return names


def plan_frame(analysis, args):
    """The plan's rows (benchreport.stats.sequential.PLAN_COLUMNS) for an analysis and the options."""
    import pandas as pd

    from benchreport.columns import METRICS, STATISTICS, higher_is_better
    from benchreport.flags.rules.sampling import corrected_alpha, family_sizes
    from benchreport.stats.sequential import PLAN_COLUMNS, PlanDesign, plan_rows

    th = analysis.options.thresholds
    rows = _selected(
        analysis.comparisons,
        _names(args.metric, sorted(METRICS), "--metric"),
        _names(args.statistic, list(STATISTICS), "--statistic"),
    )
    if rows is None or not len(rows):
        return pd.DataFrame(columns=PLAN_COLUMNS)
    family = family_sizes(analysis.comparisons)
    fam = rows["family"].tolist() if "family" in rows else [None] * len(rows)
    fam_alpha = rows["family_alpha"].tolist() if "family_alpha" in rows else [None] * len(rows)
    levels = [
        corrected_alpha(r, float(th.alpha), family=f, family_alpha=a, **family)
        for r, f, a in zip(rows["multiplicity"].tolist(), fam, fam_alpha)
    ]
    design = PlanDesign(
        max_passes=int(args.max_passes),
        max_days=int(args.max_days),
        spending=args.spending,
        noise=float(th.noise),
        gamma=float(args.gamma),
        futility_effect=float(args.futility_effect),
        futility_power=float(args.futility_power),
    )
    direction = lambda m: higher_is_better(m) if m in METRICS else True  # noqa: E731
    records = rows.astype(object).where(rows.notna(), None).to_dict("records")
    out = plan_rows(
        records,
        alphas=[a for a, _ in levels],
        corrections=[w for _, w in levels],
        higher_is_better=direction,
        design=design,
        session_groups=analysis.session_groups,
    )
    return pd.DataFrame(out, columns=PLAN_COLUMNS)


def _num(x, fmt: str = ".3f") -> str:
    return format(float(x), fmt) if x is not None and isinstance(x, (int, float)) and math.isfinite(x) else "-"


def _count(n, unit: str) -> str:
    """ "1 pass", "2 passes", "1 day"."""
    n = int(n)
    return f"{n} {unit if n != 1 else {'passes': 'pass', 'days': 'day'}[unit]}"


def _shown_row(r: dict) -> dict:
    """One plan row in words for the text and Markdown tables."""
    conc = "" if r["concurrency"] is None or r["concurrency"] != r["concurrency"] else f" c={int(r['concurrency'])}"
    unit = r["unit"]
    more = "-"
    if r["status"] == "needs an interval":
        more = f"{_count(r['more_per_seat'], unit)} or more (to measure the spread)"
    elif str(r["status"]).startswith("stop:"):
        more = (
            f"none: {_num(100 * r['conditional_power'], '.0f')}% chance of better/worse by {r['max_n']} "
            f"{unit} even at a true +/-{_num(100 * r['futility_effect'], 'g')}% change"
        )
    elif r["settle_at"] is not None and r["settle_at"] == r["settle_at"]:
        more = f"{_count(r['more_per_seat'], unit)} ({r['settle_as']} at {int(r['settle_at'])})"
    return dict(
        candidate=str(r["candidate"]),
        baseline=str(r["baseline"]),
        cell=f"{r['workload']}{conc} {r['metric']} {r['statistic']}" + (" (primary)" if r["primary"] else ""),
        so_far=f"{_num(r['baseline_n'], 'g')}/{_num(r['candidate_n'], 'g')} of {r['max_n']} {unit}",
        ratio_ci=f"{_num(r['ratio'])} [{_num(r['ci_low'])}, {_num(r['ci_high'])}]",
        verdict=str(r["verdict"]),
        alpha_shown=_num(r["alpha"], ".4g"),
        boundary=f"{_num(r['t_boundary'], '.2f')} (z {_num(r['z_boundary'], '.2f')})",
        rci=f"[{_num(r['rci_low'])}, {_num(r['rci_high'])}]",
        status=str(r["status"]),
        more=more,
    )


def plan_text(df, fmt: str, design_words: str) -> str:
    """The plan as text (aligned columns), markdown (a pipe table), csv or json."""
    from benchreport.pipeline import neutralise_cell

    if fmt == "csv":
        return df.astype(object).map(neutralise_cell).to_csv(index=False, lineterminator="\n")
    records = df.astype(object).where(df.notna(), None).to_dict("records")
    if fmt == "json":
        return json.dumps(records, indent=2, ensure_ascii=False, default=str) + "\n"
    shown = [_shown_row(r) for r in records]
    heads = [h for h, _ in SHOWN]
    cells = [[s[k] for _, k in SHOWN] for s in shown]
    if fmt == "markdown":
        lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in cells]
        return "\n".join(lines) + f"\n\n{design_words}\n"
    width = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(heads)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(heads, width)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, width)).rstrip() for row in cells]
    return "\n".join(lines) + f"\n\n{design_words}\n"


def _design_words(args, alpha: float) -> str:
    kind = {
        "hsd": f"Hwang-Shih-DeCani (gamma {float(args.gamma):g})",
        "obf": "Lan-DeMets O'Brien-Fleming-type",
        "pocock": "Lan-DeMets Pocock-type",
    }[args.spending]
    futility = (
        f"a row stops for futility (non-binding: the boundaries ignore it) when its conditional power, the "
        f"chance of a verdict beyond the noise band by the maximum were the true change "
        f"+/-{100 * float(args.futility_effect):g}%, is below {100 * float(args.futility_power):g}%"
        if float(args.futility_effect) > 0
        else "no futility rule (--futility-effect 0)"
    )
    return (
        f"Group-sequential plan: {kind} alpha spending at alpha {alpha:g} (before the correction "
        f"for multiple comparisons, column alpha), a look at every pass per seat from 3 to --max-passes "
        f"{args.max_passes} (days from 2 to --max-days {args.max_days} where the interval holds the variance "
        f"between days); the boundary on the t scale at the row's df; {futility}; 'more per seat' assumes the "
        "ratio and the spread stay at their estimates (docs/statistics.md, 'A sequential plan')."
    )


def plan_command(args) -> int:
    """`benchreport plan RUNS|--store DIR`: the plan on stdout or in --out FILE."""
    from benchreport.cli.writers import out_file, write_atomic

    fmt = args.format or (_format_of(args.out) if args.out else "text")
    out = out_file(args, tuple(FORMATS.values())) if args.out else None
    source_of(args)
    opened = open_checked(args)
    if opened is None:
        return EXIT_REFUSED
    analysis = analyse_opened(args, opened)
    df = plan_frame(analysis, args)
    if not len(df) and not args.quiet:
        print(
            "benchreport plan: no comparison to plan (it needs a baseline seat and another seat sharing a cell)",
            file=sys.stderr,
        )
    text = plan_text(df, fmt, _design_words(args, float(analysis.options.thresholds.alpha)))
    if out is None:
        sys.stdout.write(text)
        return EXIT_OK
    return write_atomic(out, lambda stage: _written(stage / "plan", text), quiet=args.quiet)


def _format_of(out: str) -> str:
    suffix = Path(out).suffix.lower()
    for fmt, s in FORMATS.items():
        if s == suffix:
            return fmt
    raise UsageError(f"--out must end in {', '.join(FORMATS.values())} (or give --format), got {out!r}")


def _written(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path
