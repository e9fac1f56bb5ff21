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

Both are computed by ``statsmodels.stats.multitest.multipletests``.

References
----------
Holm, S. (1979). A simple sequentially rejective multiple test procedure.
Scandinavian Journal of Statistics 6, 65-70.
Benjamini, Y. & Hochberg, Y. (1995). Controlling the false discovery rate.
JRSS B 57(1), 289-300.
"""
from __future__ import annotations

import numpy as np
from statsmodels.stats.multitest import multipletests

__all__ = ["METHODS", "adjust", "describe"]

#: adjustment name -> statsmodels method
METHODS = {"holm": "holm", "bh": "fdr_bh", "none": None}


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
    else:
        out[ok] = multipletests(p[ok], method=METHODS[method])[1]
    return out


def describe(method: str, m: int, alpha: float) -> str:
    """One sentence on what the adjustment guarantees for m tests."""
    if method == "holm":
        return (f"{m} comparisons were tested; with Holm's correction the chance of any false "
                f"better/worse verdict among them is at most {alpha:.0%} (without it, about "
                f"{alpha * m:.1f} would be expected by chance if no seat differed).")
    if method == "bh":
        return (f"{m} comparisons were tested; with the Benjamini-Hochberg correction at most "
                f"{alpha:.0%} of the better/worse verdicts are expected to be false (without it, about "
                f"{alpha * m:.1f} false verdicts would be expected if no seat differed).")
    return (f"{m} comparisons were tested without correction: about {alpha * m:.1f} false "
            "better/worse verdicts are expected by chance if no seat differed.")
