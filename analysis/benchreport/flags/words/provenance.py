"""Words for provenance findings: importer assumptions, harness figures that do not reproduce."""

from __future__ import annotations

from benchreport import format as F

from ..rules.provenance import FigureMismatch, ImportAssumed, RepeatedFigure
from ._common import LISTED, phrase, writes

__all__ = ["RECOMPUTED_AS", "import_assumed", "figure_mismatch", "repeated_figure"]

#: what our recomputation of a metric from request records is
RECOMPUTED_AS = {
    "decode_tok_s_per_stream": "per request (output tokens - 1) / (end-to-end - TTFT), then across requests",
    "ttft_ms": "from each request's time to first token",
    "itl_ms": "from each request's mean inter-token latency",
    "e2e_latency_ms": "from each request's end-to-end latency",
}


@writes(ImportAssumed)
def import_assumed(f: ImportAssumed) -> str:
    n = len(f.runs)
    src = f" from {F.join_words(f.source_formats)} output" if f.source_formats else ""
    return (
        f"{f.seats[0]}: {F.plural(n, 'run')} {'was' if n == 1 else 'were'} imported{src} without a manifest, so "
        f"the importer assumed: {'; '.join(f.assumptions)}."
    )


def _count_phrase(c) -> str:
    """A count or share of the harness's summary its own records contradict, its key named:
    "genai-bench's `error_rate` says 0, its records show 10 of 19 failed (53%)"."""
    where = f" at {F.streams(c.concurrency)}" if c.concurrency is not None else ""
    who = f"{c.harness}'s `{c.field}`" if c.harness else f"`{c.field}`"
    if c.statistic == "share" and c.of:
        shown = round(c.recomputed * c.of)
        return (
            f"{who}{where} says {c.reported:g}, its records show {F.count(shown)} of {F.count(c.of)} "
            f"failed ({F.pct(c.recomputed)})"
        )
    return f"{who}{where} says {F.count(c.reported)}, its records show {F.count(c.recomputed)} ({c.basis})"


def _mismatch_phrase(c) -> str:
    """One mismatch in words: what the harness says, what ours gives, and how ours was made."""
    rel = F.pct(c.relative_difference, signed=True) if c.relative_difference is not None else "differs"
    if c.against is not None and c.field and c.statistic in ("count", "share"):
        return _count_phrase(c)
    if c.against is not None:
        where = f" at {F.streams(c.concurrency)}" if c.concurrency is not None else ""
        return f"{c.label}{where}: {c.against} says {F.num(c.reported)}, ours gives {F.num(c.recomputed)} ({rel}; {c.basis})"
    return (
        f"{phrase(c)}: {c.harness or 'the harness'} reports {F.value_with_unit(c.reported, c.metric)}, "
        f"its {c.n_obs} request records give {F.num(c.recomputed)} ({rel}; ours "
        f"{RECOMPUTED_AS.get(c.metric, 'from the request records')})"
    )


def _is_count(c) -> bool:
    return c.against is not None and bool(c.field) and c.statistic in ("count", "share")


@writes(FigureMismatch)
def figure_mismatch(f: FigureMismatch) -> str:
    parts = [_mismatch_phrase(c) for c in f.cells[:LISTED]]
    more = f"; and {len(f.cells) - LISTED} more" if len(f.cells) > LISTED else ""
    files = any(c.against is not None for c in f.cells)
    if all(_is_count(c) for c in f.cells):
        return (
            f"{f.seats[0]}: the harness's summary contradicts its own records ({'; '.join(parts)}{more}). "
            "The report counts requests and failures from the records, not from the summary."
        )
    return (
        f"{f.seats[0]}: figures as the harness printed them differ from a recomputation from its own "
        f"{'files' if files else 'request records'} ({'; '.join(parts)}{more}). The report shows the "
        "harness's figure; the harness may aggregate differently (percentile definition, token counts, "
        "measurement window)" + (" or the files read are not all it aggregated." if files else ".")
    )


@writes(RepeatedFigure)
def repeated_figure(f: RepeatedFigure) -> str:
    values = ", ".join(F.value_with_unit(v, f.metric) for v in f.values)
    where = f" ({f.condition})" if f.condition else ""
    src = f" in {f.source_file}" if f.source_file else ""
    return (
        f"{f.seats[0]}: run {f.run_id}{src} reports {phrase(f)}{where} {F.spelled(len(f.values))} times with "
        f"different values ({values}); the first, {F.value_with_unit(f.used, f.metric)}, is used. Say which "
        "figure is meant, or give the others their own context or condition."
    )
