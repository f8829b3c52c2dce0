"""Aggregates per metric: mean, standard deviation, counts, errors and a bootstrap CI.

For every metric (and every sub-score, named ``metric.sub``) over the cases that were
scored: the mean, the sample standard deviation (n - 1), min and max, and a 95 %
percentile bootstrap confidence interval of the mean (2,000 resamples, fixed seed, so
the same results always give the same interval). Errors and "not applicable" scores are
counted apart and never enter a mean. The same table can be grouped by any metadata
field of the cases.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from clineval.model import Case, ResultRecord

MISSING_GROUP = "(missing)"
#: Values resampled at once by :func:`bootstrap_ci` (bounds its memory: 4 M values, 64 MB).
RESAMPLE_BATCH_VALUES = 4_000_000  # pragma: no mutate (batch size only: same random stream, same interval)


class MetricAggregate(BaseModel):
    """Summary statistics of one metric (or sub-score), optionally within one group."""

    model_config = ConfigDict(extra="forbid")

    metric: str
    group: str | None = None
    n: int
    scored: int
    errors: int
    not_applicable: int
    mean: float | None = None
    std: float | None = None
    min: float | None = None
    max: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None


def bootstrap_ci(
    values: Sequence[float], *, confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean; ``None`` with fewer than two values."""
    import numpy as np  # here, not at the top: `clineval runs` and `--help` do not need it

    data = np.asarray(values, dtype=float)
    if data.size < 2:
        return None
    if np.ptp(data) == 0:
        return float(data[0]), float(data[0])  # pragma: no mutate (all values equal: any index)
    from scipy.stats import bootstrap

    result = bootstrap(
        (data,),
        np.mean,
        confidence_level=confidence,
        n_resamples=n_resamples,
        # resamples drawn in batches of about RESAMPLE_BATCH_VALUES values: all 2,000 at once
        # take 2,000 x n floats and indices (3.2 GB at 100,000 cases); the interval is the same
        # (one random stream, drawn in order) and batches that fit the CPU cache are faster
        batch=max(1, min(n_resamples, RESAMPLE_BATCH_VALUES // data.size)),
        method="percentile",
        vectorized=True,  # pragma: no mutate (False gives the same interval, one resample at a time)
        rng=np.random.default_rng(seed),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def _summarise(name: str, group: str | None, values: list[float], errors: int, na: int) -> MetricAggregate:
    n = len(values) + errors + na
    if not values:
        return MetricAggregate(metric=name, group=group, n=n, scored=0, errors=errors, not_applicable=na)
    import numpy as np

    data = np.asarray(values, dtype=float)
    ci = bootstrap_ci(values)
    return MetricAggregate(
        metric=name,
        group=group,
        n=n,
        scored=len(values),
        errors=errors,
        not_applicable=na,
        mean=float(data.mean()),
        std=float(data.std(ddof=1)) if data.size > 1 else None,
        min=float(data.min()),
        max=float(data.max()),
        ci_low=ci[0] if ci else None,
        ci_high=ci[1] if ci else None,
    )


def group_value(case: Case | None, field: str) -> str:
    """The value of ``field`` (a metadata key, ``metadata.key`` or a case field) as a group label."""
    if case is None:
        return MISSING_GROUP
    key = field.removeprefix("metadata.")
    value = case.metadata.get(key) if key in case.metadata else None
    if value is None and field in type(case).model_fields and field != "metadata":
        value = getattr(case, field)
    if value is None:
        return MISSING_GROUP
    return str(value)


def aggregate(
    results: Iterable[ResultRecord],
    *,
    cases: Sequence[Case] | None = None,
    by: str | None = None,
    metric_order: Sequence[str] | None = None,
    group_of: Mapping[str, str] | None = None,
) -> list[MetricAggregate]:
    """Aggregates per metric and sub-score (and per group of ``by`` when given).

    ``results`` is read once (it may be a stream); only the numbers are kept. The group of a
    case is ``group_value(case, by)`` from ``cases``, or, when ``group_of`` is given instead,
    ``group_of[case_id]`` (labels computed beforehand, so that no case need be held).
    """
    by_id = {c.id: c for c in cases or ()}
    values: dict[tuple[str, str | None], list[float]] = defaultdict(list)
    errors: dict[tuple[str, str | None], int] = defaultdict(int)
    na: dict[tuple[str, str | None], int] = defaultdict(int)
    order: dict[str, None] = dict.fromkeys(metric_order or ())
    sub_order: dict[str, dict[str, None]] = defaultdict(dict)
    for result in results:
        if not by:
            group = None
        elif group_of is not None:
            group = group_of.get(result.case_id, MISSING_GROUP)
        else:
            group = group_value(by_id.get(result.case_id), by)
        score = result.score
        order.setdefault(result.metric)
        key = (result.metric, group)
        if score.status == "error":
            errors[key] += 1
            continue
        if score.status == "not_applicable":
            na[key] += 1
            continue
        if score.value is not None:
            values[key].append(score.value)
        for sub, sub_value in score.sub_scores.items():
            sub_order[result.metric].setdefault(sub)
            if sub_value is not None:
                values[(f"{result.metric}.{sub}", group)].append(sub_value)
            else:
                na[(f"{result.metric}.{sub}", group)] += 1
    # every group is None (no `by`) or every one is a label
    groups = sorted({g for (_, g) in (*values, *errors, *na)}, key=lambda g: g or "")
    out: list[MetricAggregate] = []
    for metric in order:
        names = [metric] + [f"{metric}.{sub}" for sub in sub_order[metric]]
        for name in names:
            for group in groups:
                key, parent = (name, group), (metric, group)
                if name == metric:
                    if key not in values and key not in errors and key not in na:
                        continue
                    out.append(
                        _summarise(name, group, values.get(key, []), errors.get(key, 0), na.get(key, 0))
                    )
                elif values.get(key):
                    # A sub-score shares its metric's errors and not-applicable cases.
                    out.append(
                        _summarise(
                            name,
                            group,
                            values[key],
                            errors.get(parent, 0),
                            na.get(parent, 0) + na.get(key, 0),
                        )
                    )
    return out
