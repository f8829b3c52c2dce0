"""How many reviewed cases give a κ interval of a given width: answered by simulation.

A review team wants to know how far it is: how wide the 95 % interval of κ (the judge's
verdicts against the reviewers', yes or no) will be after N reviewed cases. The width
depends on κ itself, on how often the answer is "yes", on how many items a case has and on
how alike the items of one case are. Here it is simulated:

**The labels.** Two raters (a reviewer and a judge) say yes or no with the same rate of
yes, ``positive_rate`` = p, and Cohen's κ ``kappa``. With equal marginals the 2×2 table of
one item is fixed by the two (:func:`joint_distribution`)::

    p_yy = p² + κ·p(1−p)        p_yn = p_ny = (1 − κ)·p(1−p)        p_nn = (1−p)² + κ·p(1−p)

(κ = (p_o − p_e)/(1 − p_e) with p_e = p² + (1−p)² gives exactly this).

**The cases.** Each case has ``items_per_case`` items (1 for a case-level scale; the facts
of a case for a fact-level one). The items of one case are made alike by a shared draw:
each case draws one pair of labels from the table (its *case pair*), and each of its items
takes the case pair with probability √c, otherwise a pair of its own drawn afresh from the
same table (c = ``within_case_correlation``). Every item on its own still has exactly the
table above, and for two items of one case every label they carry (the reviewer's yes,
the judge's yes, whether the two agree) is correlated exactly c (both take the case pair
with probability c, and otherwise they are independent): c is the intraclass correlation
of every item-level label, so a case of m items counts as 1 + (m − 1)·c independent items.
c = 0 makes the items of a case independent, c = 1 gives them all the same pair (a case
counts as one item).

**The interval.** On each simulated set of cases, κ and its 95 % percentile interval are
computed exactly as ``clineval agreement --reviews`` computes an agreement row's:
:func:`clineval.agreement.cluster.cluster_interval` of :func:`clineval.agreement.cluster.kappa`,
resampling whole cases with all their items (with one item per case this is the ordinary
case bootstrap, the one :func:`clineval.agreement.stats.bootstrap_ci` draws). The result is
the median width and its 10th and 90th percentiles over the simulations, and how many
simulations gave no usable interval: κ undefined (both raters said the same of every
item), no interval (κ undefined on more than half the resamples), or an interval of no
width. That last one is what the percentile bootstrap gives when every resample has the
same κ: the two agreed on every item (κ 1.00, interval 1.00–1.00) or one of them said the
same of every item (κ 0 on every resample). It is common with few cases and a rate of yes
far from one half (at 10 cases, κ 0.8 and 80 % yes, in about half the simulations), and it
says nothing of how precise κ is: such a simulation counts as wider than any, so a median
or percentile that falls among them is infinite.

Simulation ``s`` draws its cases from a generator seeded ``(seed, s)``, one row of random
numbers per case in order, so a simulation of 30 cases holds the 20 cases of the same
simulation with 20 (the widths of neighbouring case counts share their noise and fall
smoothly); its resamples are seeded ``(seed, s)`` too, by a separate stream.

:func:`required_cases` searches the case count that brings the median width down to a
target; :func:`width_note` is the one line the CLI prints, a 1/√n estimate with no
simulation at call time. The tables in docs/reviewing.md (``#how-many-cases``) are made
by ``validation/review_sample_size.py`` from these functions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from clineval.agreement import cluster

FloatArray = npt.NDArray[np.float64]
LEVEL = 0.95
#: The largest number of cases :func:`required_cases` tries.
MAX_CASES = 2000
#: The work of one case count inside :func:`required_cases`, in items × resamples × simulations
#: (about half a second): its simulations are this over items × resamples, from 10 to 200.
SEARCH_BUDGET = 6_000_000
SEARCH_SIMS = (10, 200)
#: The case counts :func:`required_cases` tries first, before it narrows down between two.
SEARCH_GRID = (2, 5, 10, 20, 30, 50, 75, 100, 150, 200, 300, 400, 600, 800, 1200, 1600, MAX_CASES)
#: Where the simulated tables are (the CLI's line points there).
TABLE_LINK = "docs/reviewing.md#how-many-cases"
#: An interval this narrow has no width (every resample gave the same κ).
_NO_WIDTH = 1e-9
#: Stands for "no usable interval" among the widths (which are at most 2).
_WIDER = 1e9


@dataclass(frozen=True)
class WidthResult:
    """The widths of the 95 % κ interval over simulated review sets of ``n_cases`` cases."""

    n_cases: int
    items_per_case: int
    kappa: float
    positive_rate: float
    within_case_correlation: float
    n_sims: int
    n_resamples: int
    median: float
    """Median width over all the simulations; one without a usable interval counts as wider
    than any, so this is ``math.inf`` when half of them or more had none."""
    p10: float
    p90: float
    undefined: int
    """Simulations in which κ was undefined (both raters gave one and the same label to every item)."""
    no_interval: int
    """Simulations in which κ was defined but undefined on more than half the resamples."""
    degenerate: int
    """Simulations whose interval had no width: every resample gave the same κ (the two
    agreed on every item, or one of them said the same of every item), which says nothing
    of how precise κ is."""

    @property
    def usable(self) -> int:
        """Simulations with an interval of some width."""
        return self.n_sims - self.undefined - self.no_interval - self.degenerate


def _check(kappa: float, positive_rate: float) -> None:
    p = positive_rate
    if not (math.isfinite(p) and 0 < p < 1):
        raise ValueError(f"positive_rate must be strictly between 0 and 1, got {positive_rate}")
    lowest = -min(p / (1 - p), (1 - p) / p)
    if not (math.isfinite(kappa) and lowest - 1e-12 <= kappa <= 1):
        raise ValueError(
            f"kappa must be between {lowest:.3g} and 1 for a yes rate of {p:g} "
            f"(two raters with equal yes rates), got {kappa}"
        )


def joint_distribution(kappa: float, positive_rate: float) -> FloatArray:
    """The 2×2 table of one item: rows the reviewer (yes, no), columns the judge (yes, no).

    Both say yes with probability ``positive_rate`` and their Cohen's κ is ``kappa`` (see the
    module docstring). κ = 0.6, p = 0.5: p_yy = 0.25 + 0.6·0.25 = 0.4, p_yn = p_ny = 0.1,
    p_nn = 0.4.
    """
    _check(kappa, positive_rate)
    p = positive_rate
    q = 1 - p
    off = (1 - kappa) * p * q
    table = np.array([[p * p + kappa * p * q, off], [off, q * q + kappa * p * q]], dtype=float)
    return np.asarray(np.clip(table, 0.0, 1.0), dtype=np.float64)


def simulate_ratings(
    n_cases: int,
    *,
    kappa: float,
    positive_rate: float,
    items_per_case: int = 1,
    within_case_correlation: float = 0.0,
    rng: np.random.Generator,
) -> tuple[list[bool], list[bool], list[str]]:
    """One simulated review set: the reviewer's labels, the judge's labels (True = yes) and
    each item's case id, items of a case together (see the module docstring for the model).

    The random numbers are drawn one row per case (the case pair, then each item's choice
    and own pair), so the first k cases are the same whatever ``n_cases`` is.
    """
    if n_cases < 1:
        raise ValueError(f"n_cases must be at least 1, got {n_cases}")
    if items_per_case < 1:
        raise ValueError(f"items_per_case must be at least 1, got {items_per_case}")
    c = within_case_correlation
    if not (math.isfinite(c) and 0 <= c <= 1):
        raise ValueError(f"within_case_correlation must be between 0 and 1, got {c}")
    table = joint_distribution(kappa, positive_rate)
    # cells in the order yes/yes, yes/no, no/yes, no/no
    edges = np.cumsum(table.ravel())[:3]
    m = items_per_case
    u = rng.random((n_cases, 1 + 2 * m))
    case_cell = np.searchsorted(edges, u[:, 0], side="right")
    takes_case = u[:, 1 : 1 + m] < math.sqrt(c)
    own_cell = np.searchsorted(edges, u[:, 1 + m :], side="right")
    cell = np.where(takes_case, case_cell[:, None], own_cell).ravel()
    reviewer = (cell == 0) | (cell == 1)
    judge = (cell == 0) | (cell == 2)
    groups = [f"case{i:05d}" for i in range(n_cases) for _ in range(m)]
    return reviewer.tolist(), judge.tolist(), groups


def _percentiles(widths: list[float], n_sims: int) -> tuple[float, float, float]:
    """10th, 50th and 90th percentile of the widths of ``n_sims`` simulations, those without a
    usable interval (missing from ``widths``) counting as wider than any: a percentile that
    falls among them, or between one of them and a width, is ``math.inf``."""
    values = np.full(n_sims, _WIDER, dtype=float)
    values[: len(widths)] = widths
    found = np.percentile(values, [10, 50, 90])
    p10, median, p90 = (float(v) if v < 1e3 else math.inf for v in found)
    return p10, median, p90


def _bootstrap_seed(seed: int, sim: int) -> int:
    return int(np.random.SeedSequence([seed, sim, 1]).generate_state(1)[0])


def simulate_widths(
    n_cases: int,
    *,
    kappa: float,
    positive_rate: float,
    items_per_case: int = 1,
    within_case_correlation: float = 0.0,
    n_sims: int = 200,
    n_resamples: int = 1000,
    seed: int = 0,
) -> WidthResult:
    """The width of the 95 % case-bootstrap interval of κ over ``n_sims`` simulated review
    sets of ``n_cases`` cases: median, 10th and 90th percentile (see the module docstring).

    Each interval is :func:`clineval.agreement.cluster.cluster_interval` of
    :func:`clineval.agreement.cluster.kappa` (yes or no) with ``n_resamples`` resamples,
    as ``clineval agreement --reviews`` computes it (which uses 2,000).
    """
    if n_cases < 2:
        raise ValueError(f"n_cases must be at least 2 (an interval needs two cases), got {n_cases}")
    if n_sims < 1 or n_resamples < 1:
        raise ValueError(f"n_sims and n_resamples must be at least 1, got {n_sims} and {n_resamples}")
    widths: list[float] = []
    undefined = no_interval = degenerate = 0
    for sim in range(n_sims):
        rng = np.random.default_rng([seed, sim])
        reviewer, judge, groups = simulate_ratings(
            n_cases,
            kappa=kappa,
            positive_rate=positive_rate,
            items_per_case=items_per_case,
            within_case_correlation=within_case_correlation,
            rng=rng,
        )
        interval = cluster.cluster_interval(
            cluster.kappa(judge, reviewer, labels=[False, True]),
            groups,
            n_resamples=n_resamples,
            seed=_bootstrap_seed(seed, sim),
            level=LEVEL,
        )
        if interval.value is None:
            undefined += 1
        elif interval.low is None or interval.high is None:
            no_interval += 1
        elif interval.high - interval.low <= _NO_WIDTH:
            degenerate += 1
        else:
            widths.append(interval.high - interval.low)
    p10, median, p90 = _percentiles(widths, n_sims)
    return WidthResult(
        n_cases=n_cases,
        items_per_case=items_per_case,
        kappa=kappa,
        positive_rate=positive_rate,
        within_case_correlation=within_case_correlation,
        n_sims=n_sims,
        n_resamples=n_resamples,
        median=median,
        p10=p10,
        p90=p90,
        undefined=undefined,
        no_interval=no_interval,
        degenerate=degenerate,
    )


def required_cases(
    target_width: float,
    *,
    kappa: float,
    positive_rate: float,
    items_per_case: int = 1,
    within_case_correlation: float = 0.0,
    n_sims: int | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    max_cases: int = MAX_CASES,
) -> int | None:
    """The smallest number of cases whose median simulated κ interval is at most
    ``target_width`` wide, or ``None`` when ``max_cases`` (2,000) are not enough.

    The search simulates the case counts of :data:`SEARCH_GRID`, starting near the 1/√n
    guess from 50 cases, until one is narrow enough and the one below is not, then narrows
    the gap between the two (probing where 1/width², about linear in the cases, reaches the
    target) down to 2 % of the answer (at least one case). A simulation without a usable
    interval counts as wider than any (see :class:`WidthResult`).

    Precision: each case count is simulated with ``n_resamples`` = 1,000 resamples, as in
    :func:`simulate_widths`, but with fewer simulations where the cases are many, which is
    where the widths vary least from one simulation to the next: :data:`SEARCH_BUDGET` /
    (items × 1,000), from 10 to 200 (200 up to 30 cases, 60 at 100, 15 at 400 and 10 from 600
    cases of one item), so that each case count takes about half a second and a search a
    few seconds (up to about 10 on a 2-core machine). On the 36 settings of the table in
    docs/reviewing.md (200 simulations at every case count) 32 answers were within ±6 % of the
    table's and the other four 10 to 24 % above it (51 cases against 41 at most): all for a
    few dozen cases of five facts, where the widths vary most between simulations and the
    search runs only about 30. ``n_sims`` fixes the number of simulations instead.
    Simulations are nested (see the module docstring), so the widths fall smoothly with the
    number of cases and the search is reproducible.
    """
    if not (math.isfinite(target_width) and target_width > 0):
        raise ValueError(f"target_width must be a positive number, got {target_width}")
    if max_cases < 2:
        raise ValueError(f"max_cases must be at least 2, got {max_cases}")
    results: dict[int, WidthResult] = {}

    def widths_at(n: int) -> WidthResult:
        if n not in results:
            results[n] = simulate_widths(
                n,
                kappa=kappa,
                positive_rate=positive_rate,
                items_per_case=items_per_case,
                within_case_correlation=within_case_correlation,
                n_sims=n_sims if n_sims is not None else search_sims(n * items_per_case, n_resamples),
                n_resamples=n_resamples,
                seed=seed,
            )
        return results[n]

    def narrow_enough(n: int) -> bool:
        return widths_at(n).median <= target_width

    grid = sorted({n for n in SEARCH_GRID if n < max_cases} | {max_cases})
    # a first guess from 50 cases (or the cap), widths shrinking as 1/sqrt(n)
    pilot = widths_at(min(50, max_cases))
    guess = pilot.n_cases
    if math.isfinite(pilot.median) and pilot.median > 0:
        guess = math.ceil(pilot.n_cases * (pilot.median / target_width) ** 2)
    start = min(range(len(grid)), key=lambda i: abs(grid[i] - guess))
    i = start
    if narrow_enough(grid[i]):
        while i > 0 and narrow_enough(grid[i - 1]):
            i -= 1
        if i == 0:
            return grid[0]
        low, high = grid[i - 1], grid[i]
    else:
        while i + 1 < len(grid) and not narrow_enough(grid[i + 1]):
            i += 1
        if i + 1 == len(grid):
            return None
        low, high = grid[i], grid[i + 1]
    # low is too wide, high narrow enough: 1/width² grows about linearly with the cases, so
    # probe where the line between the two reaches the target, then one step beside it
    while high - low > (step := max(1, high // 50)):
        probe = _interpolate(low, high, widths_at(low).median, widths_at(high).median, target_width)
        if narrow_enough(probe):
            high = probe
            beside = probe - step
        else:
            low = probe
            beside = probe + step
        if low < beside < high:
            if narrow_enough(beside):
                high = beside
            else:
                low = beside
    return high


def search_sims(n_items: int, n_resamples: int = 1000) -> int:
    """Simulations per case count in :func:`required_cases` (see there)."""
    low, high = SEARCH_SIMS
    return max(low, min(high, round(SEARCH_BUDGET / (n_items * n_resamples))))


def _interpolate(low: int, high: int, w_low: float, w_high: float, target: float) -> int:
    """A case count strictly between ``low`` and ``high`` where the width should reach ``target``."""
    guess = (low + high) / 2
    if w_low > w_high > 0 and math.isfinite(w_high):  # 1/inf² is 0
        a, b = w_low**-2, w_high**-2
        guess = low + (target**-2 - a) * (high - low) / (b - a)
    return int(min(max(round(guess), low + 1), high - 1))


def width_note(
    width: float | None,
    n_cases: int,
    n_items: int,
    *,
    target: float = 0.2,
    items: str = "items",
    statistic: str = "κ",
) -> str:
    """One line for the CLI: how wide the κ interval is and about how many cases would
    bring it to ``target``.

    The estimate scales the width by 1/√(cases): n·(width/target)² cases in all (0.4 wide
    from 20 cases, target 0.2: 20·2² = 80). That is a first estimate, no simulation is run;
    the simulated tables (``docs/reviewing.md#how-many-cases``) show how it varies with κ,
    the rate of yes and the number of items per case. ``items`` names the items ("facts");
    with one item per case (``n_items == n_cases``) they are not mentioned. ``statistic``
    names the figure (the same scaling holds roughly for an AUC or a correlation).
    """
    if n_cases < 0 or n_items < 0:
        raise ValueError(f"n_cases and n_items must not be negative, got {n_cases} and {n_items}")
    if not (math.isfinite(target) and target > 0):
        raise ValueError(f"target must be a positive number, got {target}")
    cases = f"{n_cases} case" + ("" if n_cases == 1 else "s")
    source = cases if n_items == n_cases else f"{cases} ({n_items} {items})"
    if width is None or not math.isfinite(width):
        return (
            f"no {statistic} interval yet from {source}: review more cases, and cases where the answer "
            f"differs (table: {TABLE_LINK})"
        )
    if width < 0:
        raise ValueError(f"width must not be negative, got {width}")
    head = f"{statistic} interval {width:.2f} wide from {source}"
    if width <= target:
        return f"{head}: narrower than {target:.2f} already (table: {TABLE_LINK})"
    needed = math.ceil(round(n_cases * (width / target) ** 2, 9))
    return (
        f"{head}; about {needed} cases ({needed - n_cases} more) for {target:.2f}, "
        f"if the width shrinks as 1/√cases (table: {TABLE_LINK})"
    )
