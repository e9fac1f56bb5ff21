"""Noise bands per statistic and a real change inside the band (issue 43), through the command line.

Request-level native runs from benchmarks/verdict_study.py's generator. A candidate truly 1.2%
slower (every rate x 1/1.012, every time x 1.012) measured with little noise (pass CV 0.2%, 10
passes a seat) has an interval that excludes 1 and lies inside the ±2% band: the verdict stays
`within_noise` (the contract's four verdicts) and `verdict_detail` says `worse, within tolerance`.
Identical seats give no detail on the same cells. Each row is judged against the band of its
statistic (`noise_band`): recomputed here from the row's interval and adjusted p-value with the
band the thresholds give that statistic.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import verdict_study as vs  # noqa: E402

from benchreport.columns import higher_is_better  # noqa: E402
from benchreport.stats.compare import NOT_BEYOND_BAND, verdict_detail, verdict_reason  # noqa: E402
from benchreport.thresholds import DEFAULT  # noqa: E402

THROUGHPUT = ["output_tok_s", "decode_tok_s_per_stream"]  # the generator writes the per-stream rate


def _runs(folder: Path, effect: float, *, passes: int = 10, cv: float = 0.002, n: int = 200) -> Path:
    folder.mkdir(parents=True)
    cfg = vs.Config("power", 2, passes, cv, 0.0, effect)
    vs.write_replicate(folder, cfg, 0, vs.Model(n_requests=n), seed=3, start_ms=True)
    return folder


def _baseline_rows(out: Path) -> pd.DataFrame:
    c = pd.read_csv(out / "tables" / "comparisons.csv")
    return c[c["kind"] == "baseline"]


@pytest.fixture(scope="module")
def slower(tmp_path_factory):
    """The comparisons of a candidate truly 1.2% slower, little noise."""
    from benchreport.cli import main

    root = tmp_path_factory.mktemp("slower")
    assert main(["analyse", str(_runs(root / "runs", 1 / 1.012)), "--out", str(root / "out"), "--quiet"]) == 0
    return _baseline_rows(root / "out")


def test_a_true_small_slowdown_is_within_noise_and_said_worse_within_tolerance(slower):
    means = slower[slower["metric"].isin(THROUGHPUT) & (slower["statistic"] == "mean")]
    assert len(means) == 2, means  # concurrency 1 and 4
    # the fact the detail must follow: each interval lies inside the 2% band and wholly below 1
    assert ((means["ci_low"] >= 0.98) & (means["ci_high"] < 1.0)).all(), means[["ci_low", "ci_high"]]
    assert (means["verdict"] == "within_noise").all()
    assert (means["verdict_detail"] == "worse, within tolerance").all(), means[["verdict_detail", "p_adj"]]
    assert (means["noise_band"] == DEFAULT.noise).all()
    # no row calls it: the verdicts stay the contract's four, no detail on a row that is not within noise
    assert set(slower["verdict"]) <= {"better", "worse", "within_noise", "insufficient_data"}
    others = slower[slower["verdict"] != "within_noise"]
    assert set(others["verdict_detail"].dropna()) <= set(NOT_BEYOND_BAND)
    assert (others.loc[others["verdict_detail"].notna(), "verdict"] == "insufficient_data").all()
    # a latency is lower-better: a slower TTFT detail, where there is one, is "worse" too
    lat = slower[slower["metric"].isin(["ttft_ms", "e2e_latency_ms", "itl_ms"]) & slower["verdict_detail"].notna()]
    assert set(lat["verdict_detail"]) <= {"worse, within tolerance"}


def test_identical_seats_give_no_detail(cli, tmp_path):
    runs = _runs(tmp_path / "runs", 1.0)
    assert cli("analyse", runs, "--out", tmp_path / "out", "--quiet").returncode == 0
    c = _baseline_rows(tmp_path / "out")
    means = c[c["metric"].isin(THROUGHPUT) & (c["statistic"] == "mean")]
    assert len(means) == 2 and (means["verdict"] == "within_noise").all(), means[["ci_low", "ci_high", "verdict"]]
    assert c["verdict_detail"].isna().all(), c.loc[c["verdict_detail"].notna(), ["metric", "statistic", "ci_low"]]


def test_compare_text_and_the_within_band_gate(cli, tmp_path):
    runs = _runs(tmp_path / "runs", 1 / 1.012)
    a, b = tmp_path / "A", tmp_path / "B"
    a.mkdir()
    b.mkdir()
    for f in runs.iterdir():
        (a if f.name.startswith("seat-00") else b).joinpath(f.name).write_bytes(f.read_bytes())
    plain = cli("compare", a, b, "--fail-on", "regression")
    assert plain.returncode == 0, plain.stderr  # nothing beyond the band: the gate keeps its meaning
    assert "within_noise (worse, within tolerance ±2%)" in plain.stdout
    assert "worse and 0 better, within tolerance)" in plain.stdout
    inside = cli("compare", a, b, "--fail-on", "regression-within-band", "--out", tmp_path / "page")
    assert inside.returncode == 3
    assert (
        "worse, within tolerance (±2% noise band)" in inside.stderr and "decode_tok_s_per_stream mean" in inside.stderr
    )
    page = (tmp_path / "page" / "compare.html").read_text(encoding="utf-8")
    assert "within noise (worse, within tolerance ±2%)" in page


@pytest.fixture(scope="module")
def tails(tmp_path_factory):
    """Two seats of 1,000 requests a pass (p99 cells), 5 passes, pass CV 2%, seat 1 3% faster."""
    root = tmp_path_factory.mktemp("tails")
    return _runs(root / "runs", 1.03, passes=5, cv=0.02, n=1000)


def _check_bands(c: pd.DataFrame, th) -> None:
    for r in c.itertuples(index=False):
        assert r.noise_band == th.noise_band(r.statistic), (r.statistic, r.noise_band)
        v, _ = verdict_reason(
            r.ci_low,
            r.ci_high,
            higher_is_better=higher_is_better(r.metric),
            noise=th.noise_band(r.statistic),
            p_adj=r.p_adj if pd.notna(r.p_value) else None,
            alpha=th.alpha,
        )
        assert v == r.verdict, (r.metric, r.statistic, r.ci_low, r.ci_high, r.verdict)


def test_tail_rows_use_their_band(cli, tails, tmp_path):
    assert cli("analyse", tails, "--out", tmp_path / "d", "--quiet").returncode == 0
    c = _baseline_rows(tmp_path / "d")
    assert {"mean", "p50", "p90", "p95", "p99"} <= set(c["statistic"])
    by_stat = c.groupby("statistic")["noise_band"].unique().to_dict()
    assert list(by_stat["mean"]) == [0.02] and list(by_stat["p50"]) == [0.02]
    assert list(by_stat["p90"]) == [0.03] and list(by_stat["p95"]) == [0.04] and list(by_stat["p99"]) == [0.05]
    _check_bands(c, DEFAULT)
    # a band given is that band; the others keep theirs
    assert cli("analyse", tails, "--out", tmp_path / "p", "--quiet", "--noise-p99", "0.2").returncode == 0
    p = _baseline_rows(tmp_path / "p")
    _check_bands(p, DEFAULT.replace(noise_p99=0.2))
    assert set(p.loc[p["statistic"] == "mean", "noise_band"]) == {0.02}


def test_noise_given_alone_is_one_band_for_every_statistic(cli, tails, tmp_path):
    assert cli("analyse", tails, "--out", tmp_path / "one", "--quiet", "--noise", "0.025").returncode == 0
    c = _baseline_rows(tmp_path / "one")
    assert set(c["noise_band"]) == {0.025}
    _check_bands(c, DEFAULT.replace(noise=0.025, noise_p90=0.025, noise_p95=0.025, noise_p99=0.025))


def test_the_help_names_the_bands(capsys):
    from benchreport.cli import main

    with pytest.raises(SystemExit):
        main(["analyse", "--help"])
    words = " ".join(capsys.readouterr().out.split())
    for band in ("--noise NOISE", "--noise-p90 NOISE_P90", "--noise-p95 NOISE_P95", "--noise-p99 NOISE_P99"):
        assert band in words
    assert "the noise band of means and medians" in words
    assert "given alone on the command line, the one band of every statistic" in words
    assert "the noise band of p99, min and max cells (5%)" in words


def test_the_report_says_the_change_inside_the_band(tmp_path):
    """The headline sentence, the comparison table and the thresholds appendix of the report model."""
    from benchreport.pipeline import analyse_paths
    from benchreport.report.model import sections
    from benchreport.report.model.sections import appendix, headline

    a = analyse_paths([_runs(tmp_path / "runs", 1 / 1.012)])
    row = headline.headline_row(a)
    assert row["verdict"] == "within_noise" and row["verdict_detail"] == "worse, within tolerance"
    text = " ".join(str(p) for p in headline.headline_sentence(a).blocks)
    assert "verdict: within noise: worse, within tolerance (a change smaller than the ±2% noise band" in text
    table = sections.comparison_table(a)
    shown = set(table.data["Verdict"])
    assert "within noise (worse, within tolerance)" in shown
    assert "±2% for means and medians, ±3% for p90, ±4% for p95, ±5% for p99, min and max" in table.note
    th = appendix.thresholds_table(a)
    used = dict(zip(th.data["Threshold"], th.data["Used"]))
    assert {k: used[k] for k in ("noise", "noise_p90", "noise_p95", "noise_p99")} == {
        "noise": "0.02",
        "noise_p90": "0.03",
        "noise_p95": "0.04",
        "noise_p99": "0.05",
    }
    assert "noise bands that took effect: ±2% for means and medians" in th.caption


@pytest.mark.parametrize(
    "low, high, higher, p_adj, expected",
    [
        (0.985, 0.995, True, 0.001, "worse, within tolerance"),
        (0.985, 0.995, False, 0.001, "better, within tolerance"),  # a latency 1% lower
        (0.985, 0.995, True, 0.2, ""),  # excludes 1, not significant after the correction
        (0.99, 1.01, True, 0.001, ""),  # includes 1
        (1.01, 1.05, True, 0.001, "better, not shown beyond the band"),  # reaches into the band
        (1.01, 1.05, False, 0.001, "worse, not shown beyond the band"),
        (1.01, 1.05, True, 0.2, ""),
        (0.97, 1.01, True, 0.001, ""),  # reaches into the band but includes 1
        (1.03, 1.05, True, 0.001, ""),  # beyond the band: the verdict says it
    ],
)
def test_verdict_detail_rule(low, high, higher, p_adj, expected):
    assert verdict_detail(low, high, higher_is_better=higher, noise=0.02, p_adj=p_adj, alpha=0.05) == expected


def _underpowered_words(out: Path) -> str:
    import json

    flags = json.loads((out / "flags.json").read_text(encoding="utf-8"))
    flags = flags if isinstance(flags, list) else flags["flags"]
    return " ".join(f["message"] for f in flags if f["code"] == "sample.underpowered")


def test_the_underpowered_flag_names_the_band_it_used(cli, tails, tmp_path):
    assert cli("analyse", tails, "--out", tmp_path / "d", "--quiet").returncode == 0
    words = _underpowered_words(tmp_path / "d")
    assert "the noise band of its statistic (±2% for means and medians, wider for tails)" in words
    assert cli("analyse", tails, "--out", tmp_path / "one", "--quiet", "--noise", "0.025").returncode == 0
    words = _underpowered_words(tmp_path / "one")
    assert "the ±2.5% noise band" in words and "wider for tails" not in words
