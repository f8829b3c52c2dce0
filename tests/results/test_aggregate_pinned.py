"""Aggregates pinned to values worked out by hand: counts of errors and "not applicable"
scores in any order, sub-scores' shared counts, group labels and their order, and the
bootstrap interval on samples small enough to work out exactly."""

from __future__ import annotations

import math

import pytest

from clineval.model import Case, ResultRecord, Score
from clineval.results import aggregate, bootstrap_ci


def _r(case_id: str, metric: str, score: Score) -> ResultRecord:
    return ResultRecord(run_id="r", case_id=case_id, metric=metric, score=score)


def _row(value: float | None = None, **sub: float | None) -> Score:
    return Score(value=value, sub_scores=sub)


# --- counts ----------------------------------------------------------------------------


def test_every_error_and_not_applicable_is_counted_wherever_it_comes() -> None:
    # not applicable first, errors between values: none of them stops the count
    results = [
        _r("1", "m", Score.not_applicable("no reference")),
        _r("2", "m", Score(value=0.2)),
        _r("3", "m", Score.failed("judge timed out")),
        _r("4", "m", Score.not_applicable("no reference")),
        _r("5", "m", Score(value=0.6)),
        _r("6", "m", Score.failed("judge timed out")),
        _r("7", "m", Score(value=1.0)),
    ]
    (agg,) = aggregate(results)
    assert (agg.n, agg.scored, agg.errors, agg.not_applicable) == (7, 3, 2, 2)
    # mean of [0.2, 0.6, 1.0] = 0.6; sample variance ((−0.4)² + 0 + 0.4²) / 2 = 0.16 -> std 0.4
    assert agg.mean == pytest.approx(0.6) and agg.std == pytest.approx(0.4)
    assert (agg.min, agg.max) == (0.2, 1.0)


def test_two_values_give_std_and_an_interval_and_no_phantom_errors() -> None:
    (agg,) = aggregate([_r("1", "k", Score(value=3.0)), _r("2", "k", Score(value=5.0))])
    assert (agg.n, agg.scored, agg.errors, agg.not_applicable) == (2, 2, 0, 0)
    # deviations ±1: sample variance 2 / (2 − 1) = 2, std √2
    assert agg.mean == 4.0 and agg.std == pytest.approx(math.sqrt(2))
    # resampled means 3, 4, 5 with probabilities 1/4, 1/2, 1/4: the interval is (3, 5)
    assert (agg.ci_low, agg.ci_high) == (3.0, 5.0)


def test_a_metric_with_only_errors_has_counts_and_no_statistics() -> None:
    results = [_r("1", "m", Score.failed("boom")), _r("2", "m", Score.not_applicable("n/a"))]
    (agg,) = aggregate(results)
    assert (agg.n, agg.scored, agg.errors, agg.not_applicable) == (2, 0, 1, 1)
    assert (agg.mean, agg.std, agg.min, agg.max, agg.ci_low, agg.ci_high) == (None,) * 6


# --- sub-scores ----------------------------------------------------------------------------


def test_sub_scores_share_their_metrics_errors_and_count_their_own_gaps() -> None:
    results = [
        _r("1", "r", _row(0.5, s1=0.4, s2=None)),
        _r("2", "r", _row(0.7, s1=None, s2=None)),
        _r("3", "r", Score.not_applicable("no reference")),
        _r("4", "r", Score.failed("judge timed out")),
        _r("5", "r", _row(0.9, s1=0.8)),
        _r("6", "r", _row(0.3, s1=None)),
    ]
    rows = aggregate(results)
    # s2 has no value in any case: it gets no row
    assert [a.metric for a in rows] == ["r", "r.s1"]
    r, s1 = rows
    assert (r.n, r.scored, r.errors, r.not_applicable) == (6, 4, 1, 1)
    assert r.mean == pytest.approx(0.6)  # (0.5 + 0.7 + 0.9 + 0.3) / 4
    # s1: values 0.4 and 0.8; the metric's error (case 4) and its "not applicable" (case 3)
    # plus its own two missing values (cases 2 and 6): n = 2 + 1 + (1 + 2) = 6
    assert (s1.n, s1.scored, s1.errors, s1.not_applicable) == (6, 2, 1, 3)
    assert s1.mean == pytest.approx(0.6)


def test_sub_score_in_a_group_without_errors_has_none() -> None:
    cases = [Case(id="1", metadata={"ward": "a"}), Case(id="2", metadata={"ward": "b"})]
    results = [
        _r("1", "r", _row(0.5, s1=0.4)),
        _r("2", "r", Score.failed("boom")),
        _r("3", "r", _row(0.1, s1=0.2)),  # case 3 is not among the cases: "(missing)"
    ]
    rows = {(a.metric, a.group): a for a in aggregate(results, cases=cases, by="ward")}
    assert sorted(rows) == [
        ("r", "(missing)"),
        ("r", "a"),
        ("r", "b"),
        ("r.s1", "(missing)"),
        ("r.s1", "a"),
    ]
    s1 = rows[("r.s1", "a")]
    assert (s1.n, s1.scored, s1.errors, s1.not_applicable) == (1, 1, 0, 0)
    assert (rows[("r", "b")].errors, rows[("r", "b")].scored) == (1, 0)


# --- groups ---------------------------------------------------------------------------------


def test_rows_come_metric_by_metric_with_groups_sorted() -> None:
    cases = [
        Case(id="1", metadata={"site": "delta"}),
        Case(id="2", metadata={"site": "alpha"}),
        Case(id="3", metadata={"site": "charlie"}),
        Case(id="4", metadata={"site": "bravo"}),
        Case(id="5"),
    ]
    results = [_r(c.id, "y", Score(value=1.0)) for c in cases]
    # x is scored only in the last two groups: the groups before them give no row and do not
    # end the metric's rows
    results += [_r("1", "x", Score(value=0.0)), _r("3", "x", Score(value=0.5))]
    rows = [(a.metric, a.group) for a in aggregate(results, cases=cases, by="site")]
    assert rows == [
        ("y", "(missing)"),
        ("y", "alpha"),
        ("y", "bravo"),
        ("y", "charlie"),
        ("y", "delta"),
        ("x", "charlie"),
        ("x", "delta"),
    ]


def test_metric_order_puts_named_metrics_first() -> None:
    results = [_r("1", "a", Score(value=1.0)), _r("1", "c", Score(value=1.0)), _r("1", "b", Score(value=1.0))]
    rows = aggregate(results, metric_order=["b", "unused", "a"])
    assert [a.metric for a in rows] == ["b", "a", "c"]  # "unused" has no result: no row


@pytest.mark.parametrize(
    ("by", "expected"),
    [
        ("ward", ["renal", "42", "(missing)", "(missing)"]),
        ("metadata.ward", ["renal", "42", "(missing)", "(missing)"]),
        ("id", ["c1", "c2", "c3", "(missing)"]),  # a case field
        ("reference", ["from metadata", "ref 2", "(missing)", "(missing)"]),  # metadata first
        ("metadata", ["(missing)"] * 4),  # not the metadata dict as text
    ],
)
def test_group_labels(by: str, expected: list[str]) -> None:
    cases = [
        Case(id="c1", reference="ref 1", metadata={"ward": "renal", "reference": "from metadata"}),
        Case(id="c2", reference="ref 2", metadata={"ward": 42}),
        Case(id="c3", metadata={"ward": None}),
    ]
    ids = ["c1", "c2", "c3", "c4"]  # c4 has results but no case
    results = [_r(i, f"m{n}", Score(value=1.0)) for n, i in enumerate(ids)]
    groups = [a.group for a in aggregate(results, cases=cases, by=by)]
    assert groups == expected


def test_precomputed_group_labels_replace_the_cases() -> None:
    results = [_r("1", "m", Score(value=0.2)), _r("2", "m", Score(value=0.4)), _r("3", "m", Score(value=0.9))]
    rows = aggregate(results, by="ward", group_of={"1": "renal", "2": "renal"})
    assert [(a.group, a.scored) for a in rows] == [("(missing)", 1), ("renal", 2)]
    assert rows[1].mean == pytest.approx(0.3)


# --- bootstrap interval ----------------------------------------------------------------------

# With the percentile method the interval's ends are quantiles of the resampled means. On a
# tiny sample those means take a few values (atoms), and with 2,000 resamples each quantile
# lands on an atom whenever the atoms' probabilities are far from the quantile's level.


def test_interval_of_two_values() -> None:
    # means 0, 1/2, 1 with probabilities 1/4, 1/2, 1/4: both 2.5 % and 97.5 % quantiles are
    # atoms 0 and 1 (about 500 resamples each), and so are the 5 % and 95 % ones
    assert bootstrap_ci([0.0, 1.0]) == (0.0, 1.0)
    assert bootstrap_ci([0.0, 1.0], confidence=0.90) == (0.0, 1.0)


def test_interval_of_three_values_tells_95_from_90_percent() -> None:
    # [0, 0, 1]: means 0, 1/3, 2/3, 1 with probabilities 8/27, 12/27, 6/27, 1/27. The top
    # atom holds 1/27 = 3.7 %: more than 2.5 % (the 95 % interval reaches 1), less than 5 %
    # (the 90 % interval stops at 2/3, which with the top holds 7/27 = 26 %)
    assert bootstrap_ci([0.0, 0.0, 1.0]) == (0.0, 1.0)
    low, high = bootstrap_ci([0.0, 0.0, 1.0], confidence=0.90) or (math.nan, math.nan)
    assert low == 0.0 and high == pytest.approx(2 / 3)


def test_interval_options_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        bootstrap_ci([0.0, 1.0], 0.9)  # type: ignore[call-arg]


def test_interval_defaults_are_the_documented_ones() -> None:
    # 95 %, 2,000 resamples, seed 0: the same results always give the same interval
    values = [0.31, 0.12, 0.45, 0.08, 0.27, 0.19, 0.66, 0.41, 0.05, 0.23, 0.09, 0.37]
    default = bootstrap_ci(values)
    assert default == bootstrap_ci(values, confidence=0.95, n_resamples=2_000, seed=0)
    assert default != bootstrap_ci(values, n_resamples=2_001)
    assert default != bootstrap_ci(values, seed=1)


def test_interval_of_a_sample_larger_than_one_batch() -> None:
    # 3,000 values (resampled in batches of 4,000,000 // 3,000 = 1,333): half ones, half
    # zeros. A resampled mean has s.e. 0.5 / √3000 = 0.00913, so the 95 % interval is
    # 0.5 ± 1.96 · 0.00913 = (0.4821, 0.5179)
    low, high = bootstrap_ci([1.0] * 1_500 + [0.0] * 1_500) or (math.nan, math.nan)
    assert low == pytest.approx(0.4821, abs=0.003) and high == pytest.approx(0.5179, abs=0.003)


def test_interval_of_equal_values_is_that_value_exactly() -> None:
    # every resample of [0.1, 0.1, 0.1] is the sample itself, so both ends are 0.1 (not the
    # 0.10000000000000002 that summing three 0.1 and dividing by 3 gives)
    assert bootstrap_ci([0.1, 0.1, 0.1]) == (0.1, 0.1)


def test_group_by_metadata_named_at_run_time_is_missing_not_the_dict() -> None:
    # `by` arrives from the command line as a new string, not the interned literal
    by = "".join(["meta", "data"])
    results = [_r("1", "m", Score(value=1.0))]
    (agg,) = aggregate(results, cases=[Case(id="1", metadata={"ward": "renal"})], by=by)
    assert agg.group == "(missing)"


def test_aggregate_options_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        aggregate([], [])  # type: ignore[call-arg]


# --- counts whose bits overlap (a sum, not a bitwise or) -------------------------------------


def test_one_value_and_one_error_count_two_cases() -> None:
    # 1 value + 1 error = 2 cases (1 | 1 would be 1)
    (agg,) = aggregate([_r("1", "m", Score(value=1.0)), _r("2", "m", Score.failed("boom"))])
    assert (agg.n, agg.scored, agg.errors, agg.not_applicable) == (2, 1, 1, 0)


def test_a_sub_score_adds_its_own_gap_to_its_metrics_not_applicable() -> None:
    # case 3: the metric does not apply (1); case 2: the sub-score has no value (1): 1 + 1 = 2
    results = [
        _r("1", "r", _row(0.5, s=0.4)),
        _r("2", "r", _row(0.7, s=None)),
        _r("3", "r", Score.not_applicable("no reference")),
        _r("4", "r", _row(0.9, s=0.6)),
    ]
    rows = {a.metric: a for a in aggregate(results)}
    assert (rows["r.s"].n, rows["r.s"].scored, rows["r.s"].not_applicable) == (4, 2, 2)


# --- the bootstrap's memory bound ------------------------------------------------------------


@pytest.mark.parametrize(
    ("n_values", "batch"),
    [
        (10, 2000),  # 4,000,000 // 10 = 400,000 resamples fit: all 2,000 at once
        (3_000, 1333),  # 4,000,000 // 3,000 = 1,333 resamples of 3,000 values a batch
        (100_000, 40),  # 40 resamples of 100,000 values: 4,000,000 values, not 200,000,000
        (4_000_001, 1),  # more values than a batch holds: one resample at a time, never 0
    ],
)
def test_resamples_are_drawn_in_batches_of_at_most_four_million_values(
    monkeypatch: pytest.MonkeyPatch, n_values: int, batch: int
) -> None:
    """The interval of 100,000 cases is computed in bounded memory: scipy is asked for batches
    of at most RESAMPLE_BATCH_VALUES (4,000,000) resampled values (all 2,000 resamples at once
    would take 2,000 x 100,000 floats and indices, 3.2 GB)."""
    import scipy.stats

    asked: list[int] = []

    def record(*args: object, **kwargs: object) -> object:
        asked.append(int(kwargs["batch"]))  # type: ignore[call-overload]
        raise _Recorded

    monkeypatch.setattr(scipy.stats, "bootstrap", record)
    with pytest.raises(_Recorded):
        bootstrap_ci([0.0, 1.0] * (n_values // 2) + [0.5] * (n_values % 2))
    assert asked == [batch]


class _Recorded(Exception):
    """Raised by the stand-in once it has recorded what it was asked (nothing is computed)."""
