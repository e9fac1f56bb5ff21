"""Forest plots: exam deltas and candidate/baseline ratios with their intervals."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from benchreport import format as fmt

from .theme import NEUTRAL, PALETTE, WIDTH_IN, Style, metric_label, record_drawn, record_styles, theme, wrap_id


#: a verdict's colour and marker (Okabe-Ito blue and vermillion, grey for no verdict; the marker
#: points the way of the verdict, so it reads without colour too)
VERDICT_STYLES = {
    "better": Style("#0072B2", "^"),
    "worse": Style("#D55E00", "v"),
    "within_noise": Style(NEUTRAL, "o"),
    "insufficient_data": Style(NEUTRAL, "s"),
}


def exam_forest(exam_deltas: pd.DataFrame, *, max_rows: int = 30) -> Figure | None:
    """Exam deltas (candidate − baseline, percentage points) with their CIs, as a forest plot.

    The p-value of the exact test is written at the right of each row; a dashed line marks
    no difference.
    """
    if exam_deltas is None or exam_deltas.empty:
        return None
    d = exam_deltas[exam_deltas["diff"].map(fmt.finite)].head(max_rows)
    if d.empty:
        return None
    labels = []
    for _, r in d.iterrows():
        dim = fmt.text(r.get("dimension"))
        dim = f" / {dim}" if dim else ""
        labels.append(
            f"{fmt.short(r['benchmark'])}{fmt.short(dim)}\n{wrap_id(r['candidate'], 48)}\nvs {wrap_id(r['baseline'], 48)}"
        )
    n = len(d)
    with theme():
        fig = Figure(
            figsize=(WIDTH_IN, 0.45 * n + 0.6), layout="constrained"
        )  # three-line labels: seat ids on one line
        ax = fig.add_subplot()
        y = np.arange(n)[::-1]
        diff = d["diff"].astype(float).to_numpy() * 100
        lo = pd.to_numeric(d["diff_ci_low"], errors="coerce").to_numpy(float) * 100
        hi = pd.to_numeric(d["diff_ci_high"], errors="coerce").to_numpy(float) * 100
        ok = np.isfinite(lo) & np.isfinite(hi)
        ax.hlines(y[ok], lo[ok], hi[ok], color=PALETTE[0], linewidth=1.6)
        ax.scatter(diff, y, color=PALETTE[0], zorder=3, s=26, marker="D")
        _forest_axes(
            ax, y, labels, ref=0, xlabel="difference in share correct, candidate − baseline (percentage points)"
        )
        for yi, (_, r) in zip(y, d.iterrows()):
            p = r.get("p_value")
            txt = f"p = {fmt.pval(p)}" if fmt.finite(p) else ""
            ax.annotate(txt, (1.01, yi), xycoords=("axes fraction", "data"), va="center", fontsize=7)
    record_drawn(fig, "ci" if ok.any() else "")
    return record_styles(fig, {"exam delta": Style(PALETTE[0], "D")})


def _forest_axes(ax, y, labels, *, ref: float, xlabel: str) -> None:
    """Shared look of the forest plots: a dashed line at `ref`, one labelled row per y."""
    ax.axvline(ref, color="#777", linestyle="--", linewidth=0.9)
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=6.8)
    ax.set_xlabel(xlabel)
    ax.grid(axis="x", color="#dddddd")
    ax.grid(axis="y", visible=False)
    ax.set_ylim(-0.7, len(y) - 0.3)


def ratio_forest(comparisons: pd.DataFrame, *, max_rows: int = 24) -> Figure | None:
    """Candidate / baseline ratios with CIs, one row per comparison; 1 marks parity.

    Rows without a CI are hollow; labels say metric, concurrency and candidate.
    """
    if comparisons is None or comparisons.empty:
        return None
    d = comparisons[comparisons["ratio"].map(fmt.finite)].head(max_rows)
    if d.empty:
        return None
    n = len(d)
    used = {}
    with theme():
        fig = Figure(figsize=(WIDTH_IN, 0.42 * n + 0.9), layout="constrained")
        ax = fig.add_subplot()
        y = np.arange(n)[::-1]
        labels = []
        for yi, (_, r) in zip(y, d.iterrows()):
            labels.append(_ratio_label(r))
            verdict = str(r.get("verdict"))
            style = VERDICT_STYLES.get(verdict, Style("#444444", "o"))
            used[verdict] = style
            ratio = float(r["ratio"])
            if fmt.finite(r.get("ci_low")) and fmt.finite(r.get("ci_high")):
                ax.hlines(yi, float(r["ci_low"]), float(r["ci_high"]), color=style.color, linewidth=1.6)
                ax.scatter([ratio], [yi], color=style.color, marker=style.marker, s=26, zorder=3)
                record_drawn(fig, "ci")
            else:
                ax.scatter(
                    [ratio],
                    [yi],
                    facecolor="white",
                    edgecolor=style.color,
                    marker=style.marker,
                    s=28,
                    zorder=3,
                    linewidth=1.2,
                )
                record_drawn(fig, "no_ci")
            ax.annotate(
                verdict.replace("_", " "),
                (1.01, yi),
                xycoords=("axes fraction", "data"),
                va="center",
                fontsize=7,
                color=style.color,
            )
        _forest_axes(ax, y, labels, ref=1, xlabel="candidate / baseline (ratio; > 1 means a larger figure)")
    return record_styles(fig, used)


def _ratio_label(r) -> str:
    """A forest row's label: the candidate, then metric, statistic and concurrency."""
    c = r.get("concurrency")
    cs = f" c={fmt.concurrency(c)}" if fmt.finite(c) else ""
    st = fmt.text(r.get("statistic"))
    return f"{wrap_id(r['candidate'], 40)}\n{metric_label(r['metric'], unit=False)}{' ' + st if st else ''}{cs}"
