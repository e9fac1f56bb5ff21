"""Between-session variance (issue 30): the ANOVA estimator of a one-way random-effects model on
log pass values, against statsmodels' MixedLM, and tables/sessions.csv through the CLI."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

from benchreport.cli import main
from benchreport.stats.sessions import session_variance

from request_runs import request_records, request_run, write_request_runs


def test_balanced_anova_equals_mixedlm_reml():
    rng = np.random.default_rng(0)
    a, k = 8, 5
    s = np.repeat(np.arange(a), k)
    logs = 4.0 + rng.normal(0, 0.05, a)[s] + rng.normal(0, 0.02, a * k)
    est = session_variance(np.exp(logs), s)
    fit = smf.mixedlm("y ~ 1", pd.DataFrame({"y": logs, "g": s}), groups="g").fit(reml=True)
    assert est.between_log_var > 0
    assert est.between_log_var == pytest.approx(float(fit.cov_re.iloc[0, 0]), rel=1e-4)
    assert est.within_log_var == pytest.approx(float(fit.scale), rel=1e-4)
    assert est.between_session_cv == pytest.approx(math.sqrt(math.expm1(est.between_log_var)))


def test_unbalanced_by_hand_and_truncated_at_zero():
    # sessions {1, 2}, {4}, {3, 5, 7} on the log scale
    logs = np.array([1, 2, 4, 3, 5, 7], dtype=float)
    s = np.array([0, 0, 1, 2, 2, 2])
    est = session_variance(np.exp(logs), s)
    # SSW = 0.5 + 0 + 8 = 8.5 over N - a = 3; means 1.5, 4, 5, grand 11/3... by hand:
    n, m = np.array([2, 1, 3]), np.array([1.5, 4.0, 5.0])
    grand = (n * m).sum() / 6
    msb = (n * (m - grand) ** 2).sum() / 2
    msw = 8.5 / 3
    n0 = (6 - (n**2).sum() / 6) / 2
    assert est.within_log_var == pytest.approx(msw)
    assert est.between_log_var == pytest.approx(max(0.0, (msb - msw) / n0))
    flat = session_variance(np.exp([1.0, 3.0, 1.0, 3.0]), [0, 0, 1, 1])
    assert flat.between_log_var == 0.0
    assert session_variance([1.0, 2.0], [0, 0]) is None  # one session: not estimable


def test_cli_writes_sessions_csv(tmp_path):
    rng = np.random.default_rng(9)
    runs = [
        request_run("a", p, request_records(rng, 40), date=d, role="incumbent")
        for d in ("2026-11-29", "2026-11-30", "2026-12-01")
        for p in (1, 2, 3)
    ]
    runs += [request_run("b", p, request_records(rng, 40), date="2026-12-01") for p in (1, 2, 3)]
    folder = write_request_runs(tmp_path / "runs", runs)
    out = tmp_path / "out"
    assert main(["analyse", str(folder), "--out", str(out), "--quiet"]) == 0
    t = pd.read_csv(out / "tables" / "sessions.csv")
    assert set(t["seat"]) == {"a"}  # b has one session: nothing to estimate
    row = t[(t["metric"] == "ttft_ms") & (t["statistic"] == "mean")].iloc[0]
    assert row["n_sessions"] == 3 and row["n_passes"] == 9
    p = pd.read_csv(out / "tables" / "passes.csv")
    p = p[(p["seat"] == "a") & (p["metric"] == "ttft_ms") & (p["statistic"] == "mean")]
    ref = session_variance(p["value"].to_numpy(), p["date"].to_numpy())
    assert row["between_log_var"] == pytest.approx(ref.between_log_var)
    assert row["within_log_var"] == pytest.approx(ref.within_log_var)


def test_a_run_store_gives_the_same_table(tmp_path):
    from benchreport.pipeline import Options, analyse_store
    from benchreport.stats.sessions import session_table
    from benchreport.store import Store, ingest

    rng = np.random.default_rng(10)
    runs = [request_run("a", p, request_records(rng, 30), date=d) for d in ("2026-11-29", "2026-11-30") for p in (1, 2)]
    ingest([write_request_runs(tmp_path / "runs", runs)], tmp_path / "store")
    store = Store.open(tmp_path / "store")
    cached = session_table(analyse_store(store, Options(n_boot=100)).pass_table)
    full = session_table(analyse_store(store, Options(n_boot=100), cache=False).pass_table)
    assert len(full) and cached.to_csv(index=False) == full.to_csv(index=False)


def _session_groups_by_pandas_loop(pass_table: pd.DataFrame) -> dict:
    """The per-date statistics as a loop over pandas' groups computes them (the code before the
    positional grouping in `_date_stats`): the reference the faster route must equal bit for bit."""
    from benchreport.stats.sessions import KEY, plain_key

    acc: dict = {}
    for _, passes in pass_table.groupby("date", sort=True):
        v = pd.to_numeric(passes["value"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        ok = np.isfinite(v) & (v > 0)
        p = passes.loc[ok, list(KEY) + ["date"]].astype(object).assign(_lv=np.log(v[ok]))
        for k, g in p.groupby(list(KEY) + ["date"], dropna=False, sort=False):
            x = g["_lv"].to_numpy()
            acc.setdefault(tuple(plain_key(x) for x in k[:-1]), []).append(
                (x.shape[0], float(x.mean()), float(((x - x.mean()) ** 2).sum()), str(k[-1]))
            )
    return acc


def test_session_groups_equal_a_loop_over_pandas_groups():
    """Rows in shuffled order, keys missing (None, NaN, pd.NA), cells of 1 to 40 passes (numpy's
    pairwise sum from 8 values on), values zero, negative, NaN or text: the same dict, the same
    key order and every float identical."""
    from benchreport.stats.sessions import session_groups

    rng = np.random.default_rng(44)
    rows = []
    for date in ("2026-11-01", "2026-11-02", "2026-11-03"):
        for seat in ("a", "b", None):
            for conc in (1, 4, None, float("nan")):
                for metric in ("ttft_ms", "e2e_latency_ms"):
                    for _ in range(int(rng.integers(1, 41))):
                        value = float(rng.lognormal(3, 0.4))
                        roll = rng.random()
                        value = 0.0 if roll < 0.02 else -1.0 if roll < 0.04 else np.nan if roll < 0.06 else value
                        rows.append(
                            dict(
                                seat=seat,
                                harness="vllm",
                                probe=pd.NA if rng.random() < 0.3 else "p",
                                load_id=None,
                                workload="chat",
                                concurrency=conc,
                                metric=metric,
                                statistic="mean",
                                date=date,
                                value="n/a" if roll > 0.995 else value,
                            )
                        )
    table = pd.DataFrame(rows).sample(frac=1.0, random_state=3).reset_index(drop=True)
    got, want = session_groups(table), _session_groups_by_pandas_loop(table)
    assert list(got) == list(want) and got == want
    assert max(n for days in want.values() for n, *_ in days) > 8
