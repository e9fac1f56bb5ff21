"""How a figure reads, in one place: flag messages, the limitations section, tables and figures.

"95,941", "763.9", "79.4 → 91.5 → 104.0", "p = 1.0", "204.5 GB", "[95.7, 102.1]": one
formatter per kind of figure, so a flag, Table 1 and a figure caption never show the same
number two ways. Plain text only: no HTML, no escaping (the renderer escapes).
"""

from __future__ import annotations

import math
import re
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from benchreport.columns import (
    METRIC_WORDS,  # noqa: F401  (re-exported: flags speak of metrics in words)
    METRICS,
)


def missing(value) -> bool:
    """True for None, pd.NA, NaN and NaT (a scalar test that never raises)."""
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    try:
        return bool(isinstance(value, float) and math.isnan(value)) or bool(pd.isna(value) is True)
    except (TypeError, ValueError):
        return False


def plain_values(column: pd.Series, kind=str) -> list:
    """`kind(value)` of each value of `column`, None where missing: the missing ones found for the
    whole column at once (`Series.isna`, as `missing` says of one value), for columns of a fleet's
    hundreds of thousands of rows."""
    return [None if gone else kind(v) for v, gone in zip(column.tolist(), column.isna().tolist())]


def finite(x) -> bool:
    """True for a finite number (False for missing values, text and infinities)."""
    if missing(x):
        return False
    try:
        return math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def num(x, *, digits: int | None = None, missing_text: str = "–") -> str:
    """A figure as a reader expects it: 95,941 · 763.9 · 35 · 0.812 (`missing_text` when missing).

    Thousands and above: whole numbers with separators; from 1: one decimal unless whole;
    below 1: three significant digits. `digits` fixes the decimals instead.
    """
    if not finite(x):
        return missing_text
    x = float(x)
    if digits is not None:
        return f"{x:,.{digits}f}"
    ax = abs(x)
    if ax >= 1000:
        return f"{x:,.0f}"
    if ax >= 1:
        return f"{x:,.0f}" if abs(x - round(x)) < 1e-9 else f"{x:,.1f}"
    if ax == 0:
        return "0"
    return f"{x:.3g}"


def ratio3(x) -> str:
    """A candidate/baseline ratio to three significant digits (0.812, 1.05); '–' when missing."""
    return f"{float(x):.3g}" if finite(x) else "–"


def ci(lo, hi, fmt=num) -> str:
    """'[95.7, 102.1]', or '' when the interval is missing."""
    if not (finite(lo) and finite(hi)):
        return ""
    return f"[{fmt(lo)}, {fmt(hi)}]"


def points(x) -> str:
    """A difference of proportions in percentage points with its sign: +0.6 pp, −7.4 pp."""
    if not finite(x):
        return "–"
    return f"{float(x) * 100:+.1f} pp".replace("-", "−")


def points_words(x, *, signed: bool = False) -> str:
    """A difference of proportions in percentage points, as a sentence says it: '7.6 points',
    '+0.6 points' with `signed` ('n/a' when missing; a value above 1 is taken as points already)."""
    if missing(x):
        return "n/a"
    v = float(x)
    v = v * 100 if abs(v) <= 1 else v
    sign = "+" if signed and v > 0 else ""
    return f"{sign}{v:.1f} points"


def text(x, default: str = "") -> str:
    """A data value as a plain display string ('' for missing; yes/no; 16 not 16.0)."""
    if missing(x):
        return default
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else "no"
    if isinstance(x, (float, np.floating)) and float(x).is_integer():
        return str(int(x))
    return str(x)


def concurrency(c) -> str:
    """A concurrency level for a table cell: '16', or '–' where it has no meaning."""
    return str(int(float(c))) if finite(c) else "–"


def _decimals(text: str) -> int:
    return len(text.split(".", 1)[1]) if "." in text and "e" not in text else 0


def series(values: Iterable, sep: str = ", ") -> str:
    """Several figures with a common number of decimals: '79.4 → 91.5 → 104.0' with sep=' → '."""
    vals = [float(v) for v in values if not missing(v)]
    if not vals:
        return ""
    texts = [num(v) for v in vals]
    if any(abs(v) >= 1000 for v in vals):
        return sep.join(texts)
    d = max(_decimals(t) for t in texts)
    return sep.join(f"{v:.{d}f}" for v in vals)


def pct(x, *, signed: bool = False) -> str:
    """A share or relative change as per cent: 93%, 0.4%, 99.6%, +31%."""
    if missing(x):
        return "–"
    x = float(x) * 100.0
    sign = "+" if signed and x > 0 else ""
    one = f"{x:.1f}"
    if (abs(x) < 10 or 99 < abs(x) < 100) and not one.endswith(".0"):
        return f"{sign}{one}%"
    return f"{sign}{x:.0f}%"


def pval(p, missing_text: str = "n/a") -> str:
    """A p-value as in a paper: 1.0, 0.31, 0.05, 0.003, < 0.001 (one formatter for the
    flags, the report's tables and its figures)."""
    if missing(p):
        return missing_text
    p = float(p)
    if p >= 0.995:
        return "1.0"
    if p >= 0.01:
        return f"{p:.2f}"
    if p >= 0.001:
        return f"{p:.3f}"
    return "< 0.001"


def gb(n_bytes) -> str:
    """Bytes as decimal gigabytes with one decimal: 204.5 GB ('–' when missing)."""
    return f"{float(n_bytes) / 1e9:,.1f} GB" if finite(n_bytes) else "–"


def ratio(x) -> str:
    """A ratio as 'N times' figure: 20.4, 1.31, 3.0."""
    x = float(x)
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}".rstrip("0").rstrip(".") if x != round(x) else f"{x:.1f}"


def streams(c) -> str:
    """'1 stream', '16 streams'."""
    c = int(c)
    return f"{c} stream" if c == 1 else f"{c} streams"


def join_words(items: Sequence[str], conj: str = "and") -> str:
    """'a', 'a and b', 'a, b and c'."""
    items = [str(i) for i in items]
    if not items:
        return ""
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + f" {conj} " + items[-1]


def int_list(values: Iterable) -> str:
    """Concurrency levels as '1, 4, 8 and 16'."""
    return join_words([str(int(v)) for v in values])


def metric_words(metric) -> str:
    return METRIC_WORDS.get(str(metric), str(metric))


def unit_of(metric) -> str:
    return METRICS.get(str(metric), ("", True))[0]


#: workloads whose meaning the metric already carries: not repeated in a cell's phrase
PLAIN_WORKLOADS = {"decode", "prefill", "init"}


def cell_phrase(workload=None, concurrency=None, metric=None, statistic=None) -> str:
    """A cell as a reader reads it: 'aggregate throughput at 16 streams',
    'time to first token p50 at 1 stream', 'prefill throughput', 'per-stream decode at 1 stream (code)'."""
    head = metric_words(metric) if not missing(metric) else "figures"
    if not missing(statistic) and str(statistic) != "mean":
        head += " (statistic not stated)" if str(statistic) == NOT_STATED else f" {statistic}"
    if not missing(concurrency):
        head += f" at {streams(concurrency)}"
    return head + workload_note(workload)


#: the statistic of a figure whose source does not say which it is (benchreport.columns.STATISTICS)
NOT_STATED = "not_stated"


def stat_words(statistic, *, short: bool = False) -> str:
    """A statistic as a reader reads it: 'p50', 'mean', 'statistic not stated' ('not stated'
    with `short`, in a column headed by the statistic)."""
    if str(statistic) == NOT_STATED:
        return "not stated" if short else "statistic not stated"
    return str(statistic)


def workload_note(workload) -> str:
    """' (code)' for a workload a reader needs named; '' for decode/prefill/init; ' (cold)' for
    'init:cold' (the statistics layer writes a measurement condition as 'workload:condition')."""
    if missing(workload):
        return ""
    w = str(workload)
    base, _, cond = w.partition(":")
    if base in PLAIN_WORKLOADS:
        return f" ({cond})" if cond else ""
    return f" ({w})"


def value_with_unit(value, metric) -> str:
    unit = unit_of(metric)
    return f"{num(value)} {unit}".rstrip()


def plural(n: int, word: str, many: str | None = None) -> str:
    """'1 run', '3 runs'."""
    return f"{n} {word}" if n == 1 else f"{n} {many or word + 's'}"


def first_sentence(text, limit: int = 200) -> str:
    """The first sentence of a free-text message (events), cut at `limit` characters."""
    if missing(text):
        return ""
    text = " ".join(str(text).split())
    i = text.find(". ")
    if 0 < i < limit:
        return text[: i + 1]
    if len(text) > limit:
        return text[:limit].rsplit(" ", 1)[0] + " …"
    return text if text.endswith(".") else text + "."


def words_cut(text: str, limit: int) -> str:
    """`text` at most `limit` characters, cut after its last whole word that fits, with "…"
    (a quoted message is never cut mid-word)."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    cut = head.rsplit(" ", 1)[0] if " " in head else head
    return cut.rstrip(" ,;:") + "…"


def printed_rounding(value: float) -> float:
    """Half a unit of the last digit a figure was written with (its shortest repr): 70.2 -> 0.05.

    Two figures closer than this are the same figure rounded; farther apart, they differ.
    """
    text = repr(float(value))
    if "e" in text or "E" in text:
        return abs(value) * 5e-16
    decimals = len(text.split(".")[1].rstrip("0")) if "." in text else 0
    return 0.5 * 10.0 ** (-decimals)


# --- what the report's tables, prose and figures add (one formatter per kind, as above) -------


def count(n, missing_text: str = "–") -> str:
    """A count as the report writes it: 35, 1,024 (whole numbers; `missing_text` when missing)."""
    return num(round(float(n)), missing_text=missing_text) if finite(n) else missing_text


def counted(n, word: str, many: str | None = None) -> str:
    """'1 run', '1,024 runs': `plural` with the count written by `count`."""
    return f"{count(n)} {word if finite(n) and float(n) == 1 else many or word + 's'}"


_SPELLED = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def spelled(n) -> str:
    """A small count in words, as prose writes it: 'two' passes; 10 and above as digits."""
    return _SPELLED[int(n)] if finite(n) and float(n).is_integer() and 0 <= n < 10 else num(n)


def span(lo, hi) -> str:
    """A range of two figures: '79.4–104', '16–24' (the lowest and highest of several)."""
    return f"{num(lo)}–{num(hi)}"


def fraction(k, n) -> str:
    """k of n as a fraction: '153/164' (an exam's correct answers of its items)."""
    return f"{count(k)}/{count(n)}"


def points_ci(lo, hi) -> str:
    """An interval of a difference in percentage points, signed, its unit said by the column:
    '[−7.4, +0.6]' ('' when missing, like `ci`)."""
    if not (finite(lo) and finite(hi)):
        return ""
    return "[{}, {}]".format(*(f"{float(x) * 100:+.1f}".replace("-", "−") for x in (lo, hi)))


def points_size(x) -> str:
    """A size in percentage points, unsigned (a smallest detectable difference): '7.4 pp'."""
    return f"{float(x) * 100:.1f} pp".replace("-", "−") if finite(x) else "–"


def level(alpha) -> str:
    """The confidence level of intervals at significance `alpha`, as a percentage: '95%'."""
    return pct(1 - float(alpha))


def inches(x) -> str:
    """A length in inches for a layout attribute: '6.50' (two decimals)."""
    return num(x, digits=2)


def workload_label(workload, condition=None) -> str:
    """A cell's workload as tables and figures name it: 'decode', 'init:cold'.

    The measurement condition comes from the cells' `condition` column where given; a
    workload key that already carries it ('init:cold', as the statistics layer writes it)
    is not told twice.
    """
    w = text(workload)
    c = text(condition)
    if not c or w.endswith(f":{c}"):
        return w
    return f"{w}:{c}"


# --- display length: strings from run files, shortened for tables, prose and figures ---------
#
# A run file may hold a 5,000-character model name or a 20,000-character error text. Laid out
# unshortened, one such string costs WeasyPrint minutes (an unbreakable run of text is measured
# at every position it could wrap) and pushes a table or legend off the page. So what the report
# shows is at most `MAX_LABEL` (identifiers) or `MAX_TEXT` (free text) characters, shortened in
# the middle (the head and the tail are what tell two ids apart); an unbroken run longer than
# `MAX_TOKEN` is shortened inside any text, and runs longer than `BREAK_RUN` get break
# opportunities (`break_points`). The full value stays in tables/*.csv and, up to `MAX_TITLE`
# characters, in the HTML element's title attribute (shown on hover).

#: an identifier from a run file (seat id, model, workload, probe, run id, harness) as a label:
#: the longest seat id of the fleet paper is 46 characters
MAX_LABEL = 60
#: free text from a run file (an error text, a message) in a table cell
MAX_TEXT = 500
#: an unbroken run of characters inside any displayed text (a path, a hash, an id in a message):
#: a SHA-256 is 64 hex digits, the harness fixtures' longest relative path 96 characters
MAX_TOKEN = 100
#: the full text kept in a title attribute (hover) when it was shortened, up to this length:
#: twice a name's limit (`benchreport.load.native.MAX_NAME`), so a label with a name is whole
MAX_TITLE = 10_000
#: an unbroken run longer than this gets break opportunities (the fleet paper's longest seat
#: id, 46 characters, stays whole)
BREAK_RUN = 48
#: ... after its punctuation, and at least this often
BREAK_EVERY = 16
#: what stands for the characters left out
ELLIPSIS = "…"

_LONG_RUN = re.compile(r"\S{%d,}" % (BREAK_RUN + 1))
#: a break opportunity after these characters (as in a URL or a path), and after a dot not
#: followed by a digit (so 1.25 stays whole)
_AFTER = re.compile(r"(?<=[-_/:,;=+@|\\)\]}])|(?<=\.)(?!\d)")


def short(value, limit: int = MAX_LABEL) -> str:
    """`value` as text of at most `limit` characters: head and tail kept, an ellipsis between.

    ``short("a" * 100, 11)`` is ``"aaaaaaa…aaa"``; text within the limit is returned as is.
    """
    s = text(value)
    if len(s) <= limit:
        return s
    if limit < 3:
        return s[:limit]
    keep = limit - 1
    head = (keep * 2 + 2) // 3
    return s[:head] + ELLIPSIS + s[len(s) - (keep - head) :]


def short_tokens(value, limit: int = MAX_TOKEN) -> str:
    """`value` as text with every unbroken run longer than `limit` characters shortened (`short`)."""
    s = text(value)
    if len(s) <= limit:
        return s
    return re.sub(r"\S{%d,}" % (limit + 1), lambda m: short(m.group(0), limit), s)


def shortened(value, limit: int = MAX_TEXT) -> str:
    """Free text for display: long runs shortened (`short_tokens`), then the whole to `limit`."""
    return short(short_tokens(value), limit)


def title_of(full, shown: str) -> str:
    """The hover text of a shortened display: the full text (at most `MAX_TITLE` characters),
    '' when nothing was left out."""
    s = text(full)
    return short(s, MAX_TITLE) if s != shown else ""


def _split_run(run: str) -> list[str]:
    pieces = []
    for part in _AFTER.split(run):
        while len(part) > BREAK_EVERY:
            pieces.append(part[:BREAK_EVERY])
            part = part[BREAK_EVERY:]
        if part:
            pieces.append(part)
    return pieces


def break_points(value) -> list[str]:
    """`value` as pieces between which a line may break: unbroken runs longer than `BREAK_RUN`
    are split after punctuation and every `BREAK_EVERY` characters; ``"".join`` of the
    pieces is the text."""
    s = text(value)
    out: list[str] = []
    last = 0
    for m in _LONG_RUN.finditer(s):
        if m.start() > last:
            out.append(s[last : m.start()])
        out += _split_run(m.group(0))
        last = m.end()
    if last < len(s):
        out.append(s[last:])
    return out
