"""Plugins: how feature packages add metrics and dataset formats to the generic registries.

The generic packages (:mod:`clineval.metrics`, :mod:`clineval.datasets`, the runner, the
judges, the store) import no feature package. A feature package contributes by
registration instead: a ``register()`` function that registers its metrics (with
:func:`clineval.metrics.metric`) and its dataset formats (with
:func:`clineval.datasets.formats.register_folder_format`).

:func:`load_plugins` is the one place that calls them, the first time a registry is
consulted (the metric catalogue or a metric looked up by name, a folder given as a
dataset). It calls

* the built-in feature packages listed in :data:`BUILTIN_PLUGINS` (named here as import
  paths, so that this module, and the registries that call it, import none of them), and
* every ``register`` callable that an installed distribution declares under the entry-point
  group ``clineval.plugins``, e.g. in its ``pyproject.toml``::

      [project.entry-points."clineval.plugins"]
      my_metrics = "my_package.clineval_plugin:register"

A plugin's ``register()`` may also register evidence views
(:func:`clineval.evidence.evidence_view`): the viewer calls the plugins before it chooses one.

A plugin that fails to load is reported by name (:class:`~clineval.errors.ConfigError`),
not skipped in silence.
"""

from __future__ import annotations

import importlib
import threading

from clineval.errors import ConfigError

#: The built-in feature packages' registration functions (``module:function``).
BUILTIN_PLUGINS: tuple[str, ...] = ("clineval.conversations.plugin:register",)

#: The modules whose import registers the built-in evidence views, each beside its metric
#: family (:func:`clineval.evidence.evidence_view`); imported by
#: :func:`clineval.evidence.lookup.load_views` when a view is first looked up (a run never
#: imports them), as the metric modules are by :mod:`clineval.metrics.builtin`.
BUILTIN_EVIDENCE: tuple[str, ...] = (
    "clineval.metrics.factuality_evidence",
    "clineval.metrics.rag_evidence",
    "clineval.metrics.trajectory_evidence",
    "clineval.conversations.evidence",
    "clineval.environments.radbench.evidence",
    "clineval.suites.evidence",
)

#: The entry-point group that installed distributions register their plugins under.
ENTRY_POINT_GROUP = "clineval.plugins"

_lock = threading.RLock()
_loaded = False
_loading = False


def load_plugins() -> None:
    """Call every plugin's ``register()`` once per process (later calls return at once).

    Another thread that asks meanwhile waits until the plugins are registered; a look-up
    made by a plugin while it registers (same thread) returns at once.
    """
    global _loaded, _loading
    if _loaded:
        return
    with _lock:
        if _loaded or _loading:
            return
        _loading = True
        try:
            for target in BUILTIN_PLUGINS:
                module_name, _, function = target.partition(":")
                getattr(importlib.import_module(module_name), function)()
            _load_entry_points()
            _loaded = True
        finally:
            _loading = False


def _load_entry_points() -> None:
    from importlib.metadata import entry_points

    for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda p: p.name):
        try:
            register = point.load()
            register()
        except ConfigError:
            raise
        except Exception as exc:
            raise ConfigError(
                f"plugin {point.name!r} ({point.value}, entry point group {ENTRY_POINT_GROUP!r}) "
                f"failed to load: {type(exc).__name__}: {exc}"
            ) from exc
