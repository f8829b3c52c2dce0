"""Choosing the evidence view of a result: the built-in views, the plugins', the user's.

:func:`load_views` imports every module that registers a built-in view (named in
:data:`clineval.plugins.BUILTIN_EVIDENCE`, so that nothing here imports a metric family)
and calls the plugins (:func:`clineval.plugins.load_plugins`), once per process.
:func:`load_views_of` imports the modules that a run's metric specs name by import path
(``my_metrics.py:dosage``), so that a view registered beside a user's own metric is found
by the registration alone. :func:`find_view` chooses.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from clineval.evidence.registry import EvidenceContext, EvidenceView, registered_views

__all__ = ["find_view", "load_views", "load_views_of"]

log = logging.getLogger(__name__)

_lock = threading.Lock()
_loaded = False
_imported_specs: set[tuple[str, str]] = set()


def load_views() -> None:
    """Register the built-in views and the plugins' (once per process)."""
    global _loaded
    if _loaded:
        return
    with _lock:
        if _loaded:
            return
        from clineval.plugins import BUILTIN_EVIDENCE, load_plugins

        for module in BUILTIN_EVIDENCE:
            importlib.import_module(module)
        load_plugins()
        _loaded = True


def load_views_of(specs: Iterable[Any], base_dir: str | Path | None = None) -> list[str]:
    """Import the modules of the metrics that ``specs`` name by import path, so that the
    views registered in them are found; the problems, one line each (logged, never raised:
    a page still shows the generic table)."""
    from clineval.importing import import_object
    from clineval.metrics.registry import MetricSpec

    problems: list[str] = []
    for spec in specs:
        try:
            head = MetricSpec.model_validate(spec).name
        except Exception:
            continue  # not a spec this version reads: nothing to import
        if ":" not in head:
            continue
        key = (head, str(base_dir or ""))
        if key in _imported_specs:
            continue
        _imported_specs.add(key)
        try:
            import_object(head, base_dir=Path(base_dir) if base_dir else None, what="metric")
        except Exception as exc:  # the metric's file moved or fails: the page still shows
            problems.append(f"metric {head!r}: its evidence view could not be loaded: {exc}")
            log.warning(problems[-1])
    return problems


def find_view(ctx: EvidenceContext) -> EvidenceView | None:
    """The view registered for the result's metric by name, else the first whose
    ``matches`` accepts the details (lowest ``order`` first), else ``None``."""
    load_views()
    views = registered_views()
    metric = ctx.result.metric
    for view in views:
        if metric in view.metrics:
            return view
    for view in sorted(views, key=lambda v: (v.order, v.name)):
        if view.matches is not None and view.matches(ctx):
            return view
    return None
