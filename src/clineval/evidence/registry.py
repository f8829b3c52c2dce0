"""Where evidence views register themselves, beside the metrics they draw.

An evidence view turns one metric's result on one case into the HTML a reviewer reads to
see why the case scored as it did. A metric family registers its view with
:func:`evidence_view`, in a module next to the metric, the way the metric registers itself
with :func:`clineval.metrics.metric`::

    from clineval.evidence import EvidenceContext, evidence_view, h

    @evidence_view(metrics=["dosage_check"], title="dosage check")
    def dosage_view(ctx: EvidenceContext) -> Markup:
        return h("p", "dose found: ", h("strong", ctx.details.get("dose", "none")))

A view is chosen for a result by the metric's name first (``metrics=``), then by the shape
of the score's details (``matches=``, tried in ascending ``order``), so that a suite
evaluator built on TBFact gets TBFact's view. No view: the viewer's generic table.

A view of the case's input (a conversation drawn turn by turn, say) registers with
:func:`case_input_view`.

This module only records registrations; :mod:`clineval.evidence.lookup` loads the
built-in and plugin views and chooses one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from markupsafe import Markup

from clineval.errors import ConfigError
from clineval.model import Case, ResultRecord

__all__ = [
    "CaseInputView",
    "EvidenceContext",
    "EvidenceView",
    "case_input_view",
    "case_input_views",
    "drawn_case_keys",
    "evidence_view",
    "registered_views",
]


@dataclass
class EvidenceContext:
    """What a view is given: the case, the result, the score's details, and an id prefix.

    ``prefix`` is unique per block on a page; :meth:`id` derives ids from it, never at
    random, so that the same input gives the same HTML.
    """

    case: Case
    result: ResultRecord
    prefix: str
    details: dict[str, Any] = field(default_factory=dict)

    def id(self, *parts: Any) -> str:
        return "-".join([self.prefix, *(str(p) for p in parts)])


Render = Callable[[EvidenceContext], Markup | None]
Matches = Callable[[EvidenceContext], bool]


@dataclass(frozen=True)
class EvidenceView:
    """A registered evidence view.

    ``name`` names the view (the block's class ``ev-fam-NAME``); ``title`` is shown in the
    block's header; ``sub_scores_limit`` folds the sub-scores beyond that many (``None``:
    never folded, ``0``: always); ``when_unscored`` draws the view for an unscored result
    too (an episode that failed is still worth reading); ``case_keys`` are the keys of the
    case's metadata or agent output that the view draws, left out of the case's metadata
    table so that they are not shown twice as raw JSON.
    """

    name: str
    render: Render
    title: str = ""
    metrics: tuple[str, ...] = ()
    matches: Matches | None = None
    order: int = 100
    sub_scores_limit: int | None = 8
    when_unscored: bool = False
    case_keys: tuple[str, ...] = ()


_VIEWS: dict[str, EvidenceView] = {}

R = TypeVar("R", bound=Render)


def evidence_view(
    name: str | None = None,
    *,
    title: str = "",
    metrics: Iterable[str] = (),
    matches: Matches | None = None,
    order: int = 100,
    sub_scores_limit: int | None = 8,
    when_unscored: bool = False,
    case_keys: Iterable[str] = (),
) -> Callable[[R], R]:
    """Register the decorated function as an evidence view (see :class:`EvidenceView`).

    ``metrics`` names the metrics (as their scores are stored) whose results it draws;
    ``matches`` tells, from a result's details, that a result of another name is of the
    family too. A view needs one of the two. Registering the same function again is a
    no-op; another function under a taken name is an error.
    """

    def decorate(render: R) -> R:
        key = name or render.__name__
        wanted = tuple(metrics)
        if not wanted and matches is None:
            raise ConfigError(
                f"evidence view {key!r}: say which results it draws (metrics=... or matches=...)"
            )
        existing = _VIEWS.get(key)
        if existing is not None and existing.render.__qualname__ != render.__qualname__:
            raise ConfigError(f"an evidence view named {key!r} is already registered")
        _VIEWS[key] = EvidenceView(
            key, render, title, wanted, matches, order, sub_scores_limit, when_unscored, tuple(case_keys)
        )
        return render

    return decorate


def registered_views() -> list[EvidenceView]:
    """The views registered so far (nothing loaded), by name."""
    return [_VIEWS[k] for k in sorted(_VIEWS)]


CaseInputView = Callable[[Case, str | None], Markup | None]
_INPUT_VIEWS: dict[str, CaseInputView] = {}
_INPUT_KEYS: dict[str, tuple[str, ...]] = {}

C = TypeVar("C", bound=CaseInputView)


def case_input_view(name: str, *, case_keys: Iterable[str] = ()) -> Callable[[C], C]:
    """Register a view of a case's input: ``(case, id_prefix) -> Markup``, or ``None``
    when the case is not of its kind (the plain text or turns are shown then).
    ``case_keys``: the metadata or agent-output keys it draws (see :class:`EvidenceView`)."""

    def decorate(render: C) -> C:
        _INPUT_VIEWS[name] = render
        _INPUT_KEYS[name] = tuple(case_keys)
        return render

    return decorate


def drawn_case_keys() -> set[str]:
    """The case metadata and agent-output keys some registered view draws."""
    keys = {k for view in _VIEWS.values() for k in view.case_keys}
    return keys | {k for ks in _INPUT_KEYS.values() for k in ks}


def case_input_views() -> list[CaseInputView]:
    """The registered input views, by name."""
    return [_INPUT_VIEWS[k] for k in sorted(_INPUT_VIEWS)]
