"""Words for the history findings: a seat's dated regressions and improvements against its steady level."""

from __future__ import annotations

from benchreport import format as F

from ..rules.history import HistoryChanges
from ._common import combines, phrase, sentences, writes

__all__ = ["history_changes", "change_words", "kind_words", "history_sentences", "STATUS_WORDS", "NIGHT_WORDS", "LEAD"]

#: what the next date said of a change, as a clause
STATUS_WORDS = {
    "level_shift": "the next date confirmed it as a new level",
    "one_date": "the next date was back at the level: one date off",
    "latest": "the newest date, not yet confirmed",
}
#: one far night, by what the next date said of it
NIGHT_WORDS = {
    "level_shift": "one far night, and the next date repeated it: a step from that night",
    "one_date": "one bad night: the next date was back at the level",
    "latest": "one far night, the newest date: not yet repeated",
}
#: dates told in full in a message, and cells told in full per date
DATES_SHOWN, CELLS_SHOWN = 3, 2


def kind_words(c) -> str:
    """What kind of change: 'a step since 2026-03-02', 'a slow drift since ...', or of one far night
    what the next date said of it (a table of older code: the next date's word only)."""
    kind = getattr(c, "change_kind", "") or ""
    if kind == "night":
        return NIGHT_WORDS.get(c.status, STATUS_WORDS.get(c.status, c.status))
    if kind in ("step", "drift"):
        since = getattr(c, "change_since", None)
        what = "a step" if kind == "step" else "a slow drift"
        return f"{what} since {since}, found in the nights since taken together" if since else what
    return STATUS_WORDS.get(c.status, c.status)


def change_words(c, level_pct: str) -> str:
    """One change in words: 'aggregate throughput at 16 streams fell 5.1% to 1,234 tok/s (95% CI of the
    change −6.0% to −4.2%; a step since 2026-03-02, found in the nights since taken together)'."""
    moved = "rose" if c.change > 1 else "fell"
    ci = (
        f"{level_pct} CI of the change {F.pct(c.ci_low - 1, signed=True)} to {F.pct(c.ci_high - 1, signed=True)}"
        if F.finite(c.ci_low) and F.finite(c.ci_high)
        else "no interval"
    )
    return (
        f"{phrase(c)} {moved} {F.pct(abs(c.change - 1))} to {F.value_with_unit(c.estimate, c.metric)} "
        f"({ci}; {kind_words(c)})"
    )


def _date_part(date: str, changes: list, level_pct: str) -> str:
    mine = [c for c in changes if c.date == date]
    told = "; ".join(change_words(c, level_pct) for c in mine[:CELLS_SHOWN])
    rest = len(mine) - CELLS_SHOWN
    return f"on {date}, {told}" + (f"; and {F.plural(rest, 'more cell')} that date" if rest > 0 else "")


@writes(HistoryChanges)
def history_changes(f: HistoryChanges) -> str:
    th = f.thresholds
    level_pct = F.level(th.get("alpha", 0.05))
    what = "regression" if f.code == "history.regression" else "improvement"
    n, k = f.n_changes, len(f.dates)
    if k == 1:
        mine = f.changes
        told = "; ".join(change_words(c, level_pct) for c in mine[:CELLS_SHOWN])
        rest = f"; and {F.plural(len(mine) - CELLS_SHOWN, 'more cell')}" if len(mine) > CELLS_SHOWN else ""
        head, parts, more = (
            f"{f.seats[0]}: {F.plural(n, what)} against its steady level on {f.dates[0]}",
            [told + rest],
            "",
        )
    else:
        head = f"{f.seats[0]}: {F.plural(n, what)} against its steady level on {F.plural(k, 'date')}"
        parts = [_date_part(d, f.changes, level_pct) for d in f.dates[:DATES_SHOWN]]
        more = f"; and {F.plural(k - DATES_SHOWN, 'earlier date')}" if k > DATES_SHOWN else ""
    return (
        f"{head}: {'; '.join(parts)}{more}. Each cell's nights are watched for a change over all the "
        f"nights since it (a two-sided CUSUM, Page 1954) against the level of up to "
        f"{F.count(th.get('history_window'))} nights since the last change, which later nights never move: "
        f"a step or a drift counts when it lies beyond the ±{F.pct(th.get('noise'))} noise band, at a false "
        f"signal rate under p < {th.get('history_alpha'):g} a night after a Bonferroni correction over the "
        "seat's cells; one far night is told on its own night; tables/history.csv has every date."
    )


#: the sentence that opens the history paragraph of "What these numbers will not carry" (the
#: method once; each seat's sentence then gives its changes, the thresholds are in the appendix)
LEAD = (
    "Each seat's cells are judged date by date against their steady level, the level of the first nights "
    "since the last change, which later nights never move: a two-sided CUSUM over all the nights since a "
    "change (Page 1954) finds a sustained step or a slow drift, and one far night is told on its own night "
    "(Lucas 1982); a change counts when it lies beyond the noise band, and each is called a step, a drift or "
    "one bad night; tables/history.csv has every date, and tells a sustained change inside the band when it "
    "is found, with its size, as within noise."
)


@combines("history.regression", "history.improvement")
def history_sentences(findings: list, messages: list[str]) -> list[str]:
    """Each seat's changes, without the method sentence its message closes with (the paragraph's lead says it)."""
    return [" ".join(sentences(m)[:-1]) or m for m in messages]
