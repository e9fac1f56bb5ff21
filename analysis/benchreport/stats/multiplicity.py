"""Multiple comparisons: adjusted p-values across a report's tests.

A report of ten seats makes hundreds of comparisons; at alpha = 0.05 each, a
fleet of identical seats would show about one "better" per twenty. The
comparisons' verdicts therefore rest on adjusted p-values:

* ``holm`` (default): Holm's step-down method controls the family-wise error
  rate, the chance of any false verdict in the report, at alpha (Holm 1979);
* ``bh``: Benjamini-Hochberg controls the expected share of false verdicts among
  the verdicts given (Benjamini & Hochberg 1995); more power when many real
  differences exist, the same guarantee as Holm when none do;
* ``none``: no adjustment (each verdict on its own at alpha).

Holm's step-down is computed here (`_holm`), Benjamini-Hochberg by
``statsmodels.stats.multitest.multipletests``.

Under ``holm`` the candidate-vs-baseline rows of a report are tested as a serial
gatekeeping procedure (`gatekeeping`, issue 30): the declared primary cell of each seat
pair (family 1) first, with Holm over the primary rows at alpha, which is the full alpha
when the report compares one pair (the fixed-sequence procedure, Westfall & Krishen 2001);
only when every primary row is rejected are the other rows (family 2) tested, with Holm at
alpha over them (Dmitrienko & Tamhane 2007, serial gatekeeping; Dmitrienko, Tamhane & Wiens
2008). The family-wise error rate over both families stays at most alpha, and the primary
cell no longer pays for the 30 or more secondary rows it used to be corrected with.

Families with their own share of alpha (issue 43, `family_gatekeeping`): one gatekeeping sequence
for all metrics let an unchanged throughput cell close the gate on every latency row, so a
latency-only regression was never called. The baseline rows are now split by what they measure
(`FAMILIES`: throughput, latency, start-up; exam deltas are a family of their own in their
table) and alpha is split equally across the families the report tests, by Bonferroni's
inequality: each family gets alpha/F and runs the serial gatekeeping procedure above within
itself (its own first cell, then Holm over the rest). The family-wise error rate over all
families is at most F x alpha/F = alpha under any dependence (the union bound; this is the
Bonferroni-weighted case of the graphical procedures of Bretz et al. 2009 with no alpha passed
between families, kept for its simplicity: weights fixed before any outcome, one number per
family). It is again a closed testing procedure: the local test of an intersection is
Bonferroni over the families it touches, each family's alpha/F spent on its first cells in
the intersection when it has any, else on its other members (tests/test_gatekeeping.py checks
the adjusted p-values against that closure computed by brute force).

References
----------
Holm, S. (1979). A simple sequentially rejective multiple test procedure.
Scandinavian Journal of Statistics 6, 65-70.
Benjamini, Y. & Hochberg, Y. (1995). Controlling the false discovery rate.
JRSS B 57(1), 289-300.
Westfall, P. H. & Krishen, A. (2001). Optimally weighted, fixed sequence and gatekeeper
multiple testing procedures. Journal of Statistical Planning and Inference 99(1), 25-40.
Dmitrienko, A. & Tamhane, A. C. (2007). Gatekeeping procedures with clinical trial
applications. Pharmaceutical Statistics 6(3), 171-180.
Dmitrienko, A., Tamhane, A. C. & Wiens, B. L. (2008). General multistage gatekeeping
procedures. Biometrical Journal 50(5), 667-677.
Bretz, F., Maurer, W., Brannath, W. & Posch, M. (2009). A graphical approach to sequentially
rejective multiple test procedures. Statistics in Medicine 28(4), 586-604.
Dmitrienko, A., Tamhane, A. C. & Bretz, F. (2010). Multiple Testing Problems in Pharmaceutical
Statistics, ch. 5 (gatekeeping within families, Bonferroni across them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from statsmodels.stats.multitest import multipletests

__all__ = [
    "METHODS",
    "FAMILIES",
    "EXAMS",
    "family_of",
    "adjust",
    "describe",
    "Gatekeeping",
    "gatekeeping",
    "FamilyGatekeeping",
    "family_gatekeeping",
]

#: adjustment name -> statsmodels method
METHODS = {"holm": "holm", "bh": "fdr_bh", "none": None}

#: metric -> the family of hypotheses it is tested in (each family gets its own share of alpha):
#: how fast the seat serves, how long a user waits, how long the engine takes to start
FAMILIES = {
    "output_tok_s": "throughput",
    "decode_tok_s_per_stream": "throughput",
    "prefill_tok_s": "throughput",
    "request_rate": "throughput",
    "ttft_ms": "latency",
    "itl_ms": "latency",
    "e2e_latency_ms": "latency",
    "engine_init_s": "start-up",
}
#: the family of the exam deltas (tables/exam_deltas.csv)
EXAMS = "exams"


def family_of(metric) -> str:
    """The family a metric is tested in (`FAMILIES`; "other" for a metric not listed)."""
    return FAMILIES.get(str(metric), "other")


def adjust(p_values, method: str = "holm") -> np.ndarray:
    """Adjusted p-values; NaN entries are left out of the family and stay NaN."""
    if method not in METHODS:
        raise ValueError(f"`method` must be one of {sorted(METHODS)}; got {method!r}")
    p = np.asarray(p_values, dtype=float)
    if p.ndim != 1:
        raise ValueError(f"`p_values` must be 1-D; got shape {p.shape}")
    ok = ~np.isnan(p)
    if np.any((p[ok] < 0) | (p[ok] > 1)):
        raise ValueError("`p_values` must lie in [0, 1]")
    out = np.full(p.shape, np.nan)
    if not ok.any():
        return out
    if METHODS[method] is None:
        out[ok] = p[ok]
    elif method == "holm":
        out[ok] = _holm(p[ok])
    else:
        out[ok] = multipletests(p[ok], method=METHODS[method])[1]
    return out


def _holm(p: np.ndarray) -> np.ndarray:
    """Holm's (1979) step-down adjusted p-values: the running maximum of (m - i + 1) p_(i) over the
    sorted p-values, capped at 1; statsmodels' `multipletests` gives the same but runs a full
    garbage collection on every Holm call (a second per `analyse` of a small report)."""
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(np.maximum.accumulate(p[order] * np.arange(len(p), 0, -1)), 1.0)
    out = np.empty_like(stepped)
    out[order] = stepped
    return out


@dataclass(frozen=True)
class Gatekeeping:
    """Adjusted p-values of a serial gatekeeping procedure and what each row faced."""

    p_adj: np.ndarray
    #: 1 for a primary row, 2 for a secondary row (family of the procedure)
    family: np.ndarray
    #: tested primary rows (family 1 with a p-value) and tested secondary rows (family 2)
    n_primary: int
    n_secondary: int
    #: the largest adjusted p-value of the tested primary rows (0.0 when no primary row has a
    #: test): family 2 is tested only when it is below alpha
    gate: float
    #: primary rows declared but without a test (too few passes): not in the sequence
    n_untested_primary: int = 0

    def is_open(self, alpha: float) -> bool:
        """Whether the secondary family is tested at all: every primary row rejected at alpha."""
        return self.gate < alpha

    def rule(self, alpha: float) -> list[str]:
        """The rule each row was tested by, in words (the `multiplicity` column)."""
        k, m = self.n_primary, self.n_secondary
        first = (
            "gatekeeping, primary: tested first, at the full alpha"
            if k <= 1
            else f"gatekeeping, primary: tested first, Holm over the {k} primary rows at alpha"
        )
        if k == 0 and self.n_untested_primary:
            second = (
                f"gatekeeping, secondary: the primary cell had no test (too few passes), so Holm over {m} rows at alpha"
            )
        elif self.is_open(alpha):
            second = f"gatekeeping, secondary: tested after every primary row was rejected, Holm over {m} rows at alpha"
        else:
            second = "gatekeeping, secondary: not tested (a primary row was not rejected); p_adj carries the gate"
        return [first if f == 1 else second for f in self.family]


def gatekeeping(p_values, primary) -> Gatekeeping:
    """Serial gatekeeping: the primary rows with Holm, then, behind them, the others with Holm.

    Family 1 (rows where `primary` is true) gets Holm's adjusted p-values within itself;
    family 2 (the others) gets p_adj = max(g, Holm's adjusted p within family 2), where g is
    the largest adjusted p-value of family 1 (Dmitrienko & Tamhane 2007, serial gatekeeper;
    with one primary row this is the fixed sequence of Westfall & Krishen 2001: p_adj =
    max(p_primary, ...)). A secondary row is thus rejected at alpha only when every primary row
    is. This is the closed testing procedure whose local test of an intersection is Bonferroni
    over its family-1 members when it has any, else over its family-2 members (tests/
    test_gatekeeping.py checks it against that closure computed by brute force), so the
    family-wise error rate is at most alpha. A primary row without a p-value (too few passes
    for a test: a matter of design, known before any outcome) is not in the sequence: the gate is
    the testable primary rows', and with none of them family 2 gets Holm alone, as it would
    had no primary been declared. NaN p-values stay NaN.
    """
    p = np.asarray(p_values, dtype=float)
    first = np.asarray(primary, dtype=bool)
    if p.ndim != 1 or first.shape != p.shape:
        raise ValueError("`p_values` and `primary` must be 1-D of equal length")
    adj = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    adj[first] = adjust(p[first], "holm")
    adj[~first] = adjust(p[~first], "holm")
    tested = first & ok
    gate = float(np.max(adj[tested])) if tested.any() else 0.0
    second = ~first & ok
    adj[second] = np.maximum(adj[second], gate)
    return Gatekeeping(
        p_adj=adj,
        family=np.where(first, 1, 2),
        n_primary=int(tested.sum()),
        n_secondary=int(second.sum()),
        gate=gate,
        n_untested_primary=int((first & ~ok).sum()),
    )


@dataclass(frozen=True)
class FamilyGatekeeping:
    """Adjusted p-values of serial gatekeeping within families with Bonferroni across them."""

    p_adj: np.ndarray
    #: each row's family name
    family: np.ndarray
    #: families sharing alpha (those with a test here, plus any tested elsewhere, e.g. exams)
    n_families: int
    #: the families' names in that count, in order
    names: tuple
    #: each family's Gatekeeping (p-values adjusted within the family, before the x F)
    within: dict

    def family_alpha(self, alpha: float) -> float:
        """The level each family is tested at: alpha / F."""
        return float(alpha) / max(1, self.n_families)

    def rule(self, alpha: float) -> list[str]:
        """The rule each row was tested by, in words (the `multiplicity` column): its family, its
        share of alpha, then the gatekeeping step within the family."""
        f = max(1, self.n_families)
        share = (
            "the full alpha (the only family tested)"
            if f == 1
            else f"alpha/{f} (Bonferroni across {f} families: {', '.join(self.names)})"
        )
        words = {}
        for name, gk in self.within.items():
            k, m = gk.n_primary, gk.n_secondary
            first = (
                "gatekeeping, primary: tested first in its family, at the family's alpha"
                if k <= 1
                else f"gatekeeping, primary: tested first in its family, Holm over its {k} first rows"
            )
            if k == 0 and gk.n_untested_primary:
                second = (
                    f"gatekeeping, secondary: the family's first cell had no test (too few passes), so Holm "
                    f"over {m} rows at the family's alpha"
                )
            elif gk.is_open(self.family_alpha(alpha)):
                second = (
                    f"gatekeeping, secondary: tested after the family's first cell was rejected, Holm over "
                    f"{m} rows at the family's alpha"
                )
            else:
                second = (
                    "gatekeeping, secondary: not tested (the family's first cell was not rejected); p_adj "
                    "carries the gate"
                )
            words[name] = (f"{name} family, at {share}; {first}", f"{name} family, at {share}; {second}")
        return [
            words[fam][0 if stage == 1 else 1] if fam in words else f"{fam} family: no test"
            for fam, stage in zip(self.family, self._stage())
        ]

    def _stage(self) -> np.ndarray:
        out = np.full(len(self.family), 2)
        for name, gk in self.within.items():
            out[self.family == name] = gk.family
        return out


def family_gatekeeping(p_values, families, first, *, elsewhere=()) -> FamilyGatekeeping:
    """Serial gatekeeping within each family, Bonferroni across the families (issue 43).

    Rows are grouped by `families` (names, e.g. from `family_of`); within each, `gatekeeping`
    with `first` marking the family's first cells. The families that share alpha are those with
    at least one p-value here, plus the names in `elsewhere` (families tested in another table,
    e.g. `EXAMS`, which must then be tested at alpha/F too): F of them. Which rows have a test is
    a matter of design (passes per seat), known before any outcome, so F is fixed before the
    p-values are seen. Each row's adjusted p-value is min(1, F x its adjusted p within its
    family): it is below alpha exactly when the family's gatekeeping rejects it at alpha/F. The
    family-wise error rate over all families is at most alpha (the union bound). NaN stays NaN.

    References
    ----------
    Bretz, Maurer, Brannath & Posch (2009), Statistics in Medicine 28, 586-604 (a weighted
    Bonferroni split of alpha across families; here equal weights and no propagation);
    Dmitrienko & Tamhane (2007) (serial gatekeeping within a family).
    """
    p = np.asarray(p_values, dtype=float)
    fam = np.asarray([str(f) for f in families], dtype=object)
    one = np.asarray(first, dtype=bool)
    if p.ndim != 1 or fam.shape != p.shape or one.shape != p.shape:
        raise ValueError("`p_values`, `families` and `first` must be 1-D of equal length")
    order = list(dict.fromkeys(fam.tolist()))
    tested = [f for f in order if np.isfinite(p[fam == f]).any()]
    names = tuple(tested + [str(e) for e in elsewhere if str(e) not in tested])
    n = max(1, len(names))
    adj = np.full(p.shape, np.nan)
    within = {}
    for f in order:
        mask = fam == f
        gk = gatekeeping(p[mask], one[mask])
        within[f] = gk
        adj[mask] = np.minimum(1.0, n * gk.p_adj)
    return FamilyGatekeeping(p_adj=adj, family=fam, n_families=len(names), names=names, within=within)


def describe(method: str, m: int, alpha: float) -> str:
    """One sentence on what the adjustment guarantees for m tests."""
    if method == "holm":
        return (
            f"{m} comparisons were tested; with alpha split equally across the families of metrics "
            f"(throughput, latency, start-up, exams), and in each family its first cell of each pair tested "
            f"first and Holm's correction over the rest (a gatekeeping procedure), the chance of any false "
            f"better/worse verdict among them is at most {alpha:.0%} (without it, about "
            f"{alpha * m:.1f} would be expected by chance if no seat differed)."
        )
    if method == "bh":
        return (
            f"{m} comparisons were tested; with the Benjamini-Hochberg correction at most "
            f"{alpha:.0%} of the better/worse verdicts are expected to be false (without it, about "
            f"{alpha * m:.1f} false verdicts would be expected if no seat differed)."
        )
    return (
        f"{m} comparisons were tested without correction: about {alpha * m:.1f} false "
        "better/worse verdicts are expected by chance if no seat differed."
    )
