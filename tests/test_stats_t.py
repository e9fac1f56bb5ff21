"""Student's t as the pass statistics compute it (scipy.special directly, for speed) against
published table values and against scipy.stats.t, a second route to the same distribution."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from benchreport.stats.passes import t_ppf, t_sf


@pytest.mark.parametrize(
    ("df", "q975"), [(1, 12.7062), (2, 4.3027), (4, 2.7764), (9, 2.2622), (17, 2.1098), (30, 2.0423)]
)
def test_t_quantiles_match_the_printed_table(df, q975):
    """Two-sided 95% critical values (e.g. NIST/SEMATECH e-Handbook, Table 1.4.2.4)."""
    assert t_ppf(0.975, df) == pytest.approx(q975, abs=5e-5)
    assert t_sf(q975, df) == pytest.approx(0.025, abs=2e-5)


def test_t_matches_scipy_stats_including_the_edges():
    rng = np.random.default_rng(11)
    qs = rng.uniform(0, 1, 2000)
    dfs = rng.uniform(0.5, 60, 2000)
    xs = rng.normal(0, 4, 2000)
    for q, df, x in zip(qs, dfs, xs):
        assert t_ppf(q, df) == pytest.approx(stats.t.ppf(q, df), rel=1e-12, abs=1e-12)
        assert t_sf(x, df) == pytest.approx(stats.t.sf(x, df), rel=1e-12, abs=1e-300)
    for q, df in [(0.0, 3), (1.0, 3), (0.5, np.inf), (0.975, np.inf)]:
        assert t_ppf(q, df) == stats.t.ppf(q, df)
    for x, df in [(np.inf, 3), (-np.inf, 3), (1.5, np.inf)]:
        assert t_sf(x, df) == stats.t.sf(x, df)
    assert np.isnan(t_ppf(0.5, 0)) and np.isnan(t_sf(np.nan, 3))
