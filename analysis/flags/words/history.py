"""Words for the history findings: a seat's dated regressions and improvements against its steady level."""
from __future__ import annotations

from benchreport import format as F

from ..rules.history import HistoryChanges
from ._common import combines, phrase, sentences, writes

__all__ = ["history_changes", "change_words", "history_sentences", "STATUS_WORDS", "LEAD"]

#: what the next date said of a change, as a clause
STATUS_WORDS = {"level_shift": "the next date confirmed it as a new level",
                "one_date": "the next date was back at the level: one date off",
                "latest": "the newest date, not yet confirmed"}
#: dates told in full in a message, and cells told in full per date
DATES_SHOWN, CELLS_SHOWN = 3, 2


def change_words(c, level_pct: str) -> str:
    """One change in words: 'aggregate throughput at 16 streams fell 5.1% to 1,234 tok/s (95% CI of the
    change −6.0% to −4.2%; the next date confirmed it as a new level)'."""
    moved = "rose" if c.change > 1 else "fell"
    ci = (f"{level_pct} CI of the change {F.pct(c.ci_low - 1, signed=True)} to {F.pct(c.ci_high - 1, signed=True)}"
          if F.finite(c.ci_low) and F.finite(c.ci_high) else "no interval")
    return (f"{phrase(c)} {moved} {F.pct(abs(c.change - 1))} to {F.value_with_unit(c.estimate, c.metric)} "
            f"({ci}; {STATUS_WORDS.get(c.status, c.status)})")


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
        head, parts, more = (f"{f.seats[0]}: {F.plural(n, what)} against its steady level on {f.dates[0]}",
                             [told + rest], "")
    else:
        head = f"{f.seats[0]}: {F.plural(n, what)} against its steady level on {F.plural(k, 'date')}"
        parts = [_date_part(d, f.changes, level_pct) for d in f.dates[:DATES_SHOWN]]
        more = f"; and {F.plural(k - DATES_SHOWN, 'earlier date')}" if k > DATES_SHOWN else ""
    return (f"{head}: {'; '.join(parts)}{more}. Each date is judged against the mean of up to "
            f"{F.count(th.get('history_window'))} earlier dates since the last confirmed change (a prediction "
            f"interval): a change beyond the ±{F.pct(th.get('noise'))} noise band, significant at "
            f"p < {th.get('history_alpha'):g} after a Bonferroni correction over the seat's cells that date; "
            "tables/history.csv has every date.")


#: the sentence that opens the history paragraph of "What these numbers will not carry" (the
#: method once; each seat's sentence then gives its changes, the thresholds are in the appendix)
LEAD = ("Each seat's cells are judged date by date against their steady level, the mean of earlier dates "
        "since the last confirmed change (a prediction interval, Hahn & Meeker 1991): a change counts when "
        "it lies beyond the noise band and stays significant after a Bonferroni correction over the seat's "
        "cells that date; tables/history.csv has every date.")


@combines("history.regression", "history.improvement")
def history_sentences(findings: list, messages: list[str]) -> list[str]:
    """Each seat's changes, without the method sentence its message closes with (the paragraph's lead says it)."""
    return [" ".join(sentences(m)[:-1]) or m for m in messages]
