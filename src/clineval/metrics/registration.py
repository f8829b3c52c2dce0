"""Where metrics register themselves: the :func:`metric` decorator and the table it fills.

Its own module, apart from the look-ups of :mod:`clineval.metrics.registry` (which load
the built-in metrics the first time they are asked), so that a metric module imports
what registers it without importing what imports it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from clineval.errors import ConfigError
from clineval.metrics.base import FunctionMetric, Metric

__all__ = ["REGISTERED", "MetricEntry", "metric"]

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class MetricEntry:
    """A registered metric: how to build it and what the catalogue says of it."""

    name: str
    factory: Callable[..., Metric]
    description: str
    requires: tuple[str, ...]
    needs_judge: bool
    source: str | None


#: Every registered metric by name (the metric modules register themselves on import).
REGISTERED: dict[str, MetricEntry] = {}


def metric(
    name: str | Callable[..., Any] | None = None,
    *,
    description: str | None = None,
    source: str | None = None,
) -> Any:
    """Register a metric class or function under ``name`` (default: its own name).

    Use as ``@metric``, ``@metric()`` or ``@metric("name", description=...)``.
    ``description`` is the one line shown by ``clineval metrics`` (default: the first line
    of the docstring); ``source`` names the system or paper the definition follows.
    """
    if callable(name):  # used bare: @metric
        return metric()(name)

    def decorate(obj: F) -> F:
        target: Any = obj
        key = name or getattr(target, "name", None) or target.__name__
        doc = description or (inspect.getdoc(target) or "").split("\n")[0]
        if inspect.isclass(target):
            factory: Callable[..., Metric] = cast(Callable[..., Metric], target)
            requires = tuple(getattr(target, "requires", ()))
            needs_judge = bool(getattr(target, "needs_judge", False))
            if not getattr(target, "name", None):
                cast(Any, target).name = key
        else:
            fn = obj

            def factory(**settings: Any) -> Metric:
                return FunctionMetric(fn, name=key, description=doc, **settings)

            probe = _probe_function(fn, key, doc)
            requires = probe.requires if probe else ()
            needs_judge = probe.needs_judge if probe else False
        if key in REGISTERED and REGISTERED[key].factory is not factory:
            existing = REGISTERED[key]
            if getattr(existing.factory, "__qualname__", None) != getattr(obj, "__qualname__", None):
                raise ConfigError(f"a metric named {key!r} is already registered")
        REGISTERED[key] = MetricEntry(key, factory, doc, requires, needs_judge, source)
        return obj

    return decorate


def _probe_function(fn: Callable[..., Any], key: str, doc: str) -> FunctionMetric | None:
    try:
        return FunctionMetric(fn, name=key, description=doc)
    except ConfigError:
        # Has required settings; the catalogue reads the case fields from the signature.
        params = inspect.signature(fn).parameters
        from clineval.model import CASE_FIELDS

        probe = FunctionMetric.__new__(FunctionMetric)
        probe.requires = tuple(
            p for p, v in params.items() if p in CASE_FIELDS and v.default is inspect.Parameter.empty
        )
        probe.needs_judge = "judge" in params
        return probe
