"""A sequential plan: how many more passes (or days) would settle a seat-versus-seat comparison,
with a rule under which adding passes and looking again does not inflate false verdicts (issue 30).

A user who adds a pass per seat and reads the report's verdict after each addition tests the same
hypothesis again at every look, and the chance of a false ``better``/``worse`` somewhere along
the way grows with the number of looks (Armitage, McPherson & Rowe 1969). The plan uses a
group-sequential design instead:

* the test statistic of a comparisons row of kind ``baseline`` is Z = log ratio / se, its
  information proportional to the passes per seat (the harmonic mean of the two seats' counts,
  since se^2 is proportional to 1/k_b + 1/k_c); the information fraction at a look is the passes
  so far over the plan's maximum passes per seat (`--max-passes`);
* looks are taken to happen at every pass count from the first that gives an interval (3 passes
  per seat) up to the current one: the error spent at a look is then never more than the design
  allows, and a user who looked less often only spent less (the spending-function approach of
  Lan & DeMets 1983 lets looks fall at any information fraction);
* the two-sided boundary at each look follows from an alpha-spending function, by default the
  Hwang-Shih-DeCani family at gamma = -4, alpha (1 - e^{-gamma t}) / (1 - e^{-gamma}) (Hwang, Shih &
  DeCani 1990; Jennison & Turnbull 2000, section 7.2), whose final boundary is the
  O'Brien-Fleming type's to 0.03 but which spends enough at the first looks that a large change
  can settle at 3 passes (t boundary 8.4 at 3 passes and 4 df where the O'Brien-Fleming type asks
  27.6, both at alpha 0.025 over looks at 3..10 of 10); or the O'Brien-Fleming type,
  2 - 2 Phi(z_{1-alpha/4} / sqrt t) on each side, which spends almost nothing at the first looks,
  or the Pocock type, alpha(t) = alpha ln(1 + (e - 1) t), which spends evenly (Lan & DeMets 1983;
  Kim & DeMets 1987);
* the boundaries are found by the recursive numerical integration of Armitage, McPherson & Rowe
  (1969), as Jennison & Turnbull (2000, ch. 19) lay it out: the density of Z_k on the continuation
  region is carried from look to look on a grid (Simpson's rule), and the boundary at look k is the
  root at which the probability of first crossing at look k equals alpha(t_k) - alpha(t_{k-1});
* the variance is estimated from few passes, so each z boundary is turned into its nominal
  significance level and the t quantile at the row's degrees of freedom is used (Jennison &
  Turnbull 2000, ch. 11, "significance level approach"); the study in docs/statistics.md
  measures that this keeps the false verdicts under alpha at 3 to 10 passes;
* a non-binding futility rule (Jennison & Turnbull 2000, ch. 10, stochastic curtailment; Lachin
  2005): a row that has not settled stops when its conditional power under the planned effect, the chance that the
  repeated interval at the maximum clears the band if the true change were +/- the planned effect
  (10% by default) given the passes so far (the B-value computation of Lan & Wittes 1988, the
  spread per pass at its estimate), falls below a floor (10% by default). The boundaries are
  computed as if it did not exist, so following it or not never raises the false verdicts; it
  only saves passes where a verdict beyond the band has become unlikely;
* a verdict needs the repeated confidence interval (d +/- c_k se, Jennison & Turnbull 2000,
  ch. 9; simultaneous coverage over the looks) to clear the noise band as compare.py's verdict
  needs its interval to: wholly beyond 1 +/- noise for ``better``/``worse``, wholly inside it for
  ``within noise``. A repeated interval beyond the band also lies beyond the boundary, so the
  test's level is kept.

Why a group-sequential design and not an anytime-valid confidence sequence: a confidence
sequence (e.g. Howard et al. 2021) covers at every sample size, with no maximum, but at 3 to 10
passes it is several times wider than the fixed-sample interval (its boundaries grow like
sqrt(log log n) plus a constant tuned for large n), and with an estimated variance from 3 passes
it needs a bound on the pass values that a benchmark cannot give. A benchmark plan has a natural
maximum (the passes a team will pay for), and the spending function at that maximum leaves the
final boundary within a few percent of the fixed-sample one (O'Brien-Fleming type: 2.03 against
1.96 at 5 looks).

Where the comparisons row's interval holds the variance between sessions (``variance_levels``
``passes+sessions``), passes on one day cannot narrow it; the unit is then the day. The plan
estimates such a row from every date of both seats: each date's mean log pass value is one
observation, a two-sample t on the date means (pooled variance, D_b + D_c - 2 df), and counts days
(`--max-days`), the first look at 2 days per seat.

References
----------
Armitage, P., McPherson, C. K. & Rowe, B. C. (1969). Repeated significance tests on accumulating
data. JRSS A 132, 235-244.
Lan, K. K. G. & DeMets, D. L. (1983). Discrete sequential boundaries for clinical trials.
Biometrika 70, 659-663.
Reboussin, D. M., DeMets, D. L., Kim, K. & Lan, K. K. G. (2000). Computations for group
sequential boundaries using the Lan-DeMets spending function method. Controlled Clinical Trials
21, 190-207 (the ldbounds program; its two-sided O'Brien-Fleming-type bounds for 5 equal looks at
0.05: 4.877, 3.357, 2.680, 2.290, 2.031).
Hwang, I. K., Shih, W. J. & DeCani, J. S. (1990). Group sequential designs using a family of
type I error probability spending functions. Statistics in Medicine 9, 1439-1445.
Lan, K. K. G. & Wittes, J. (1988). The B-value: a tool for monitoring data. Biometrics 44, 579-585.
Lachin, J. M. (2005). A review of methods for futility stopping based on conditional power.
Statistics in Medicine 24, 2747-2764.
Kim, K. & DeMets, D. L. (1987). Design and analysis of group sequential tests based on the type I
error spending rate function. Biometrika 74, 149-154.
Jennison, C. & Turnbull, B. W. (2000). Group Sequential Methods with Applications to Clinical
Trials. Chapman & Hall/CRC: ch. 2 (Pocock and O'Brien-Fleming constants), 7 (error spending),
9 (repeated confidence intervals), 11 (unknown variance), 19 (numerical computation).
Howard, S. R., Ramdas, A., McAuliffe, J. & Sekhon, J. (2021). Time-uniform, nonparametric,
nonasymptotic confidence sequences. Annals of Statistics 49, 1055-1080.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq
from scipy.special import ndtr, ndtri, stdtrit

from .sessions import plain_key

__all__ = [
    "SPENDING",
    "HSD_GAMMA",
    "spending",
    "boundaries",
    "conditional_power",
    "exit_probabilities",
    "t_boundary",
    "look_fractions",
    "Rule",
    "SequentialLook",
    "sequential_look",
    "DaySummary",
    "day_summary",
    "STATUSES",
    "PLAN_COLUMNS",
    "PlanDesign",
    "plan_rows",
]

#: the alpha-spending functions: Hwang-Shih-DeCani (default), O'Brien-Fleming type, Pocock type
SPENDING = ("hsd", "obf", "pocock")
#: the Hwang-Shih-DeCani family's default gamma: near the O'Brien-Fleming type at the end, less
#: strict at the first looks (Jennison & Turnbull 2000, section 7.2)
HSD_GAMMA = -4.0
#: a plan row's status
STATUSES = (
    "settled: better",
    "settled: worse",
    "settled: within noise",
    "continue",
    "stop: no verdict beyond the band is likely",
    "cannot settle within the maximum",
    "needs an interval",
)

#: grid intervals of Simpson's rule per look (2 * HALF_GRID + 1 points)
HALF_GRID = 200
#: where an infinite boundary is cut for the grid: the normal tail beyond it is below 1e-20
Z_CAP = 9.5


def spending(t, alpha: float = 0.05, kind: str = "hsd", gamma: float = HSD_GAMMA) -> float:
    """The two-sided type I error spent by information fraction t (0 at 0, alpha at 1 and beyond).

    ``hsd``: the Hwang-Shih-DeCani family, alpha (1 - e^{-gamma t}) / (1 - e^{-gamma}) (alpha t at
    gamma 0; Hwang, Shih & DeCani 1990; gsDesign's sfHSD). Each side of the symmetric two-sided
    test spends half: ``obf`` 2 - 2 Phi(z_{1-alpha/4} / sqrt t) a side (the O'Brien-Fleming type of
    Lan & DeMets 1983 at alpha/2, as the ldbounds program of Reboussin, DeMets, Kim & Lan 2000 and
    gsDesign's sfLDOF compute two-sided bounds), so alpha(t) = 4 - 4 Phi(z_{1-alpha/4} / sqrt t);
    ``pocock``: alpha ln(1 + (e - 1) t) (Lan & DeMets 1983; Kim & DeMets 1987; Jennison & Turnbull
    2000, section 7.2.1). `gamma` is used by ``hsd`` only."""
    if kind not in SPENDING:
        raise ValueError(f"`kind` must be one of {SPENDING}; got {kind!r}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"`alpha` must lie in (0, 1); got {alpha!r}")
    if not (math.isfinite(gamma) and -40.0 <= gamma <= 40.0):
        raise ValueError(f"`gamma` must lie in [-40, 40]; got {gamma!r}")
    t = min(max(float(t), 0.0), 1.0)
    if t == 0.0:
        return 0.0
    if kind == "hsd":
        return float(alpha * t) if gamma == 0 else float(alpha * math.expm1(-gamma * t) / math.expm1(-gamma))
    if kind == "obf":
        return float(4.0 * ndtr(-float(ndtri(1.0 - alpha / 4.0)) / math.sqrt(t)))
    return float(alpha * math.log1p((math.e - 1.0) * t))


def _simpson(lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """Points and Simpson's weights over [lo, hi]."""
    x = np.linspace(lo, hi, 2 * HALF_GRID + 1)
    w = np.ones_like(x)
    w[1:-1:2], w[2:-1:2] = 4.0, 2.0
    return x, w * (hi - lo) / (6.0 * HALF_GRID)


def _exit(c: float, u: np.ndarray, mass: np.ndarray, t_prev: float, t_now: float) -> float:
    """P(|Z_k| >= c, still running) from the mass of Z_{k-1} on the points u (weights times density)."""
    sd = math.sqrt(t_now - t_prev)
    mean = u * math.sqrt(t_prev)
    edge = c * math.sqrt(t_now)
    return float(np.sum(mass * (ndtr((-edge - mean) / sd) + ndtr((mean - edge) / sd))))


def _carry(c: float, u: np.ndarray, mass: np.ndarray, t_prev: float, t_now: float):
    """The grid and Simpson mass of Z_k on (-c, c), from Z_{k-1}'s."""
    x, w = _simpson(-min(c, Z_CAP), min(c, Z_CAP))
    sd = math.sqrt(t_now - t_prev)
    z = (x[:, None] * math.sqrt(t_now) - u[None, :] * math.sqrt(t_prev)) / sd
    dens = (np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)) @ mass * math.sqrt(t_now) / sd
    return x, w * dens


def _check_fractions(fractions) -> np.ndarray:
    t = np.asarray(fractions, dtype=float)
    if t.ndim != 1 or not len(t) or np.any(~np.isfinite(t)) or np.any(t <= 0) or np.any(np.diff(t) <= 0):
        raise ValueError(f"`fractions` must be positive and increasing; got {fractions!r}")
    return t


def exit_probabilities(fractions, z) -> np.ndarray:
    """The probability under the null of first crossing the two-sided boundaries `z` at each look
    (information fractions `fractions`; an infinite boundary is never crossed), by the recursive
    integration of Armitage, McPherson & Rowe (1969; Jennison & Turnbull 2000, section 19.2)."""
    t = _check_fractions(fractions)
    c = np.asarray(z, dtype=float)
    if c.shape != t.shape:
        raise ValueError("`fractions` and `z` must have the same length")
    out = np.zeros(len(t))
    out[0] = 2.0 * float(ndtr(-c[0]))
    u, w = _simpson(-min(c[0], Z_CAP), min(c[0], Z_CAP))
    mass = w * np.exp(-0.5 * u * u) / math.sqrt(2 * math.pi)
    for k in range(1, len(t)):
        out[k] = 0.0 if math.isinf(c[k]) else _exit(c[k], u, mass, t[k - 1], t[k])
        u, mass = _carry(c[k], u, mass, t[k - 1], t[k])
    return out


def boundaries(fractions, alpha: float = 0.05, kind: str = "hsd", gamma: float = HSD_GAMMA) -> np.ndarray:
    """Two-sided z boundaries at looks with information fractions `fractions` (increasing, in
    (0, 1]; a fraction above 1 is taken as 1, so a look after the maximum has nothing left to spend
    and an infinite boundary), alpha spent by `spending` (Lan & DeMets 1983), each the root of
    P(first crossing at look k) = alpha(t_k) - alpha(t_{k-1}) (Jennison & Turnbull 2000, ch. 7, 19)."""
    t = _check_fractions(fractions)
    return np.array(_boundaries(tuple(float(x) for x in t), float(alpha), kind, float(gamma)))


@functools.lru_cache(maxsize=4096)
def _boundaries(t: tuple, alpha: float, kind: str, gamma: float) -> tuple:
    """`boundaries` of checked fractions (kept: a plan asks for the same looks again and again)."""
    capped = np.minimum(np.array(t), 1.0)
    spent = np.array([spending(x, alpha, kind, gamma) for x in capped])
    target = np.diff(np.r_[0.0, spent])
    c = np.full(len(t), math.inf)
    if target[0] > 0:
        c[0] = -float(ndtri(target[0] / 2.0))
    u, w = _simpson(-min(c[0], Z_CAP), min(c[0], Z_CAP))
    mass = w * np.exp(-0.5 * u * u) / math.sqrt(2 * math.pi)
    for k in range(1, len(t)):
        if capped[k] > capped[k - 1] and target[k] > 1e-15:

            def excess(b, k=k):
                return _exit(b, u, mass, capped[k - 1], capped[k]) - target[k]

            c[k] = brentq(excess, 1e-6, 40.0, xtol=1e-10) if excess(40.0) < 0 < excess(1e-6) else math.inf
            u, mass = _carry(c[k], u, mass, capped[k - 1], capped[k])
        else:  # no information gained or no alpha left: this look cannot reject
            u, mass = (u, mass) if capped[k] == capped[k - 1] else _carry(math.inf, u, mass, capped[k - 1], capped[k])
    return tuple(float(x) for x in c)


def t_boundary(z: float, df: float) -> float:
    """The boundary on the t scale: the t quantile at `df` of the z boundary's nominal two-sided
    level 2 Phi(-z) (Jennison & Turnbull 2000, section 11.3)."""
    if math.isinf(z):
        return math.inf
    if not (df > 0 and math.isfinite(df)):
        return z if math.isinf(df) else math.nan
    return float(stdtrit(df, float(ndtr(z))))


def look_fractions(n: float, max_n: int, first: int) -> np.ndarray:
    """The information fractions of the looks up to `n` units per seat: one at every whole count
    from `first` below `n`, then `n` itself, each over `max_n`."""
    whole = [j for j in range(first, int(math.ceil(n))) if j < n]
    return np.array(whole + [float(n)]) / float(max_n)


@dataclass(frozen=True)
class SequentialLook:
    """One comparison at the current look, and where it would settle if its estimate held."""

    status: str
    #: the boundary at this look on the z scale and on the t scale (at the row's df)
    z_boundary: float
    t_boundary: float
    #: the repeated confidence interval of the ratio at this look
    rci_low: float
    rci_high: float
    #: units per seat at which the comparison would settle if the log ratio stayed at its
    #: estimate and the spread at its estimate (None: not within the maximum)
    settle_at: int | None
    #: that status
    settle_as: str | None
    #: the conditional power under the planned effect (`conditional_power`; NaN where the row
    #: settled, is at the maximum, or no futility rule was asked for)
    conditional_power: float = math.nan


def _status(d: float, half: float, noise: float, higher_is_better: bool) -> str | None:
    """The verdict of the interval d +/- half on the log scale, as compare.verdict_reason's rule."""
    low, high = math.exp(d - half), math.exp(d + half)
    if 1.0 - noise <= low and high <= 1.0 + noise:
        return "settled: within noise"
    if low > 1.0 + noise or high < 1.0 - noise:
        good = (low > 1.0 + noise) == bool(higher_is_better)
        return "settled: better" if good else "settled: worse"
    return None


def _per_seat(n_b: float, n_c: float) -> float:
    """Units per seat of a comparison for its information: the harmonic mean of the two counts
    (se^2 is proportional to 1/n_b + 1/n_c)."""
    return 2.0 * n_b * n_c / (n_b + n_c) if n_b > 0 and n_c > 0 else 0.0


@dataclass(frozen=True)
class Rule:
    """The sequential rule a look is read under: the level, the looks (a look at every whole count
    from `first` to `max_n` units per seat), the spending function, the noise band and the futility
    rule (`futility_effect` 0: none)."""

    alpha: float
    max_n: int
    first: int = 3
    kind: str = "hsd"
    gamma: float = HSD_GAMMA
    noise: float = 0.02
    futility_effect: float = 0.0
    futility_power: float = 0.10

    def final_t(self) -> float:
        """The boundary at the maximum on the t scale, at 2 max_n - 2 df (two equal seats)."""
        z = boundaries(np.arange(self.first, self.max_n + 1) / float(self.max_n), self.alpha, self.kind, self.gamma)
        return t_boundary(float(z[-1]), 2.0 * self.max_n - 2.0)


def conditional_power(log_ratio: float, unit_sd: float, here: float, effect: float, rule: Rule) -> float:
    """The chance that the repeated interval at the maximum (`rule.max_n` units per seat) lies
    wholly beyond the noise band, better or worse, given the estimate `log_ratio` at `here` units
    per seat, if the true ratio were 1 + `effect` or 1 / (1 + `effect`) (the larger of the two) and
    the spread per unit were `unit_sd` (the B-value computation of Lan & Wittes 1988: the final
    mean is (n d + (N - n) D) / N with D ~ N(theta, 2 sd^2 / (N - n)) independent of the data so
    far). Only the final look is counted, so it is a lower bound on settling at some later look
    (Lachin 2005). NaN at or past the maximum."""
    big_n, n = float(rule.max_n), float(here)
    if not (n < big_n and unit_sd > 0 and math.isfinite(unit_sd) and math.isfinite(log_ratio)):
        return math.nan
    half = rule.final_t() * unit_sd * math.sqrt(2.0 / big_n)
    sd_rest = unit_sd * math.sqrt(2.0 / (big_n - n))
    above = (big_n * (math.log1p(rule.noise) + half) - n * log_ratio) / (big_n - n)
    below = (big_n * (math.log1p(-rule.noise) - half) - n * log_ratio) / (big_n - n)
    theta = math.log1p(effect)
    return max(float(ndtr((th - above) / sd_rest) + ndtr((below - th) / sd_rest)) for th in (theta, -theta))


def sequential_look(
    log_ratio: float,
    se: float,
    df: float,
    n_b: float,
    n_c: float,
    rule: Rule,
    *,
    higher_is_better: bool = True,
) -> SequentialLook:
    """The comparison at the current look (`n_b`, `n_c` units per seat so far, the log ratio with
    its standard error `se` on `df` degrees of freedom) under `rule`, and the smallest units per
    seat, at most `rule.max_n`, at which it would settle if the log ratio and the per-unit spread
    stayed as estimated (the standard error at n per seat taken as se sqrt((1/n_b + 1/n_c) / (2/n)),
    the t boundary at 2n - 2 df, as Welch's df of two equal seats). Looks are taken at every whole
    count from `rule.first` (module docstring). A row that has not settled before the maximum stops
    for futility when its `conditional_power` under `rule.futility_effect` is below
    `rule.futility_power`."""
    here = _per_seat(float(n_b), float(n_c))
    first, max_n = rule.first, rule.max_n
    if not (here >= first and math.isfinite(se) and se > 0 and math.isfinite(log_ratio) and max_n >= first):
        return SequentialLook("needs an interval", math.nan, math.nan, math.nan, math.nan, None, None)
    z_now = float(boundaries(look_fractions(here, max_n, first), rule.alpha, rule.kind, rule.gamma)[-1])
    t_now = t_boundary(z_now, df)
    half = t_now * se if math.isfinite(t_now) else math.inf
    status = _status(log_ratio, half, rule.noise, higher_is_better)
    low, high = (math.exp(log_ratio - half), math.exp(log_ratio + half)) if math.isfinite(half) else (0.0, math.inf)
    if status is not None:
        return SequentialLook(status, z_now, t_now, low, high, int(math.ceil(here)), status)
    unit_sd = se / math.sqrt(1.0 / n_b + 1.0 / n_c)
    settle_at, settle_as = _projection(log_ratio, unit_sd, here, rule, higher_is_better)
    status, power = ("continue" if here < max_n else "cannot settle within the maximum"), math.nan
    if status == "continue" and rule.futility_effect > 0:
        power = conditional_power(log_ratio, unit_sd, here, rule.futility_effect, rule)
        if power < rule.futility_power:
            status = "stop: no verdict beyond the band is likely"
    return SequentialLook(status, z_now, t_now, low, high, settle_at, settle_as, power)


def _projection(
    log_ratio: float, unit_sd: float, here: float, rule: Rule, higher_is_better: bool
) -> tuple[int | None, str | None]:
    """(n, status): the first whole count per seat above `here`, at most `max_n`, whose look would
    settle the comparison with the log ratio at its estimate and a spread of `unit_sd` a unit."""
    first, max_n = rule.first, rule.max_n
    start = max(first, int(math.floor(here)) + 1)
    if start > max_n:
        return None, None
    z = boundaries(np.arange(first, max_n + 1) / float(max_n), rule.alpha, rule.kind, rule.gamma)
    for n in range(start, max_n + 1):
        c = t_boundary(float(z[n - first]), 2.0 * n - 2.0)
        status = _status(log_ratio, c * unit_sd * math.sqrt(2.0 / n), rule.noise, higher_is_better)
        if status is not None:
            return n, status
    return None, None


@dataclass(frozen=True)
class DaySummary:
    """Two seats' log ratio with the day as the unit: each date's mean log pass value one observation."""

    log_ratio: float
    se: float
    df: float
    days_baseline: int
    days_candidate: int


def day_summary(baseline_days, candidate_days) -> DaySummary | None:
    """The difference of the two seats' means of their date means (log pass values) with a pooled
    two-sample t (D_b + D_c - 2 df; Student 1908; Kalibera & Jones 2013: replicate, and test, at
    the level that varies). `*_days`: each seat's (n, mean, within SS) per date of the cell
    (benchreport.stats.sessions.session_groups). None without a df or a spread."""
    yb = np.array([g[1] for g in baseline_days if g[0] >= 1], dtype=float)
    yc = np.array([g[1] for g in candidate_days if g[0] >= 1], dtype=float)
    df = len(yb) + len(yc) - 2
    if not len(yb) or not len(yc) or df < 1:
        return None
    ss = float(((yb - yb.mean()) ** 2).sum() + ((yc - yc.mean()) ** 2).sum())
    se = math.sqrt(ss / df * (1.0 / len(yb) + 1.0 / len(yc)))
    if not se > 0:
        return None
    return DaySummary(float(yc.mean() - yb.mean()), se, float(df), len(yb), len(yc))


#: the plan's columns (`benchreport plan --format csv|json`)
PLAN_COLUMNS = [
    "baseline",
    "candidate",
    "harness",
    "probe",
    "workload",
    "concurrency",
    "metric",
    "statistic",
    "primary",
    "unit",
    "baseline_n",
    "candidate_n",
    "max_n",
    "information",
    "ratio",
    "ci_low",
    "ci_high",
    "verdict",
    "plan_ratio",
    "log_se",
    "df",
    "alpha",
    "correction",
    "spending",
    "gamma",
    "z_boundary",
    "t_boundary",
    "rci_low",
    "rci_high",
    "status",
    "settle_at",
    "more_per_seat",
    "settle_as",
    "conditional_power",
    "futility_effect",
]


@dataclass(frozen=True)
class PlanDesign:
    """The plan's design: maximum units per seat, spending function, noise band, futility rule."""

    max_passes: int = 10
    max_days: int = 10
    spending: str = "hsd"
    noise: float = 0.02
    first_pass: int = 3
    first_day: int = 2
    gamma: float = HSD_GAMMA
    #: the planned effect of the futility rule (0: no futility rule) and its conditional power floor
    futility_effect: float = 0.10
    futility_power: float = 0.10


def _days_of(row: dict, seat: str, groups: dict | None) -> list:
    if not groups:
        return []
    key = (
        seat,
        *(
            plain_key(row.get(k))
            for k in ("harness", "probe", "load_id", "workload", "concurrency", "metric", "statistic")
        ),
    )
    return groups.get(key, [])


def _row_input(row: dict, groups: dict | None, design: PlanDesign):
    """(unit, log ratio, se, df, n_b, n_c, max_n, first) of one comparisons row: passes, or days where
    its interval holds the variance between sessions."""
    if str(row.get("variance_levels") or "") == "passes+sessions":
        s = day_summary(_days_of(row, str(row["baseline"]), groups), _days_of(row, str(row["candidate"]), groups))
        if s is None:
            return "days", math.nan, math.nan, math.nan, 0, 0, design.max_days, design.first_day
        return ("days", s.log_ratio, s.se, s.df, s.days_baseline, s.days_candidate, design.max_days, design.first_day)
    lo, hi, df, level = (_float(row.get(k)) for k in ("ci_low", "ci_high", "df", "ci_level"))
    ratio = _float(row.get("ratio"))
    se = math.nan
    if lo > 0 and hi > lo and df > 0 and 0 < level < 1:
        se = (math.log(hi) - math.log(lo)) / (2.0 * float(stdtrit(df, 0.5 + level / 2.0)))
    d = math.log(ratio) if ratio > 0 else math.nan
    return (
        "passes",
        d,
        se,
        df,
        _int(row.get("baseline_n_passes")),
        _int(row.get("candidate_n_passes")),
        design.max_passes,
        design.first_pass,
    )


def _float(x) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return math.nan
    return v


def _int(x) -> int:
    v = _float(x)
    return int(v) if math.isfinite(v) else 0


def plan_rows(
    rows,
    *,
    alphas,
    corrections,
    higher_is_better,
    design: PlanDesign = PlanDesign(),
    session_groups: dict | None = None,
) -> list[dict]:
    """The plan of comparisons rows of kind baseline (records of tables/comparisons.csv): for each,
    the units so far, the sequential boundary at this look (`sequential_look`) at the row's test
    level `alphas[i]` (the level its verdict faces after the correction for multiple comparisons,
    said in `corrections[i]`), its status, and the units per seat that would settle it. Rows whose
    interval holds the variance between sessions count days (`day_summary`). `higher_is_better`:
    metric -> direction."""
    out = []
    for row, alpha, words in zip(rows, alphas, corrections):
        unit, d, se, df, nb, nc, max_n, first = _row_input(row, session_groups, design)
        rule = Rule(
            float(alpha),
            max_n,
            first,
            design.spending,
            design.gamma,
            design.noise,
            design.futility_effect,
            design.futility_power,
        )
        look = sequential_look(d, se, df, nb, nc, rule, higher_is_better=higher_is_better(str(row["metric"])))
        here = _per_seat(float(nb), float(nc))
        more = None if look.settle_at is None else max(0, look.settle_at - min(nb, nc))
        if look.status == "needs an interval":  # the fewest units that measure the spread
            more = max(0, first - min(nb, nc))
        out.append(
            dict(
                {
                    k: row.get(k)
                    for k in (
                        "baseline",
                        "candidate",
                        "harness",
                        "probe",
                        "workload",
                        "concurrency",
                        "metric",
                        "statistic",
                        "primary",
                        "ratio",
                        "ci_low",
                        "ci_high",
                        "verdict",
                    )
                },
                unit=unit,
                baseline_n=nb,
                candidate_n=nc,
                max_n=max_n,
                information=min(here / max_n, 1.0),
                plan_ratio=math.exp(d) if math.isfinite(d) else math.nan,
                log_se=se,
                df=df,
                alpha=float(alpha),
                correction=words,
                spending=design.spending,
                gamma=design.gamma if design.spending == "hsd" else math.nan,
                z_boundary=look.z_boundary,
                t_boundary=look.t_boundary,
                rci_low=look.rci_low,
                rci_high=look.rci_high,
                status=look.status,
                settle_at=look.settle_at,
                more_per_seat=more,
                settle_as=look.settle_as,
                conditional_power=look.conditional_power,
                futility_effect=design.futility_effect,
            )
        )
    return [{k: r[k] for k in PLAN_COLUMNS} for r in out]
