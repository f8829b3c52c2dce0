"""How clineval creates a suite's pipeline and hands it one case: read from the signatures.

``generate_responses`` may take the case in any of the forms suites are written with:

* one positional parameter (``generate_responses(self, case)``, whatever its name): the
  :class:`~clineval.suites.pipeline.SuiteCase`, positionally;
* keyword-only or several parameters (``generate_responses(self, *, context, input)``):
  the case's fields by name (:data:`CASE_KEYWORDS`: ``case`` is the whole case,
  ``case_id`` its id);
* ``**kwargs`` (the form the AutoAuth framework documents): every field of
  :data:`CASE_KEYWORDS`.

:func:`response_call` reads the signature once (a signature no case could be given to is
a :class:`ConfigError`), :func:`case_problems` says what one case lacks for it, and
:func:`call_generate` makes the call. ``clineval validate`` uses the first two and
:func:`create_pipeline` so that what would fail on every case at run time fails there,
with the file's line or the case id.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from clineval.errors import ConfigError
from clineval.suites.pipeline import PipelineEvaluator, SuiteCase, SuiteInfo
from clineval.suites.source import mask, one_line

#: What a ``generate_responses`` may name: ``case`` (the whole case), ``case_id`` and the
#: case's fields.
CASE_KEYWORDS = (
    "case",
    "case_id",
    "id",
    "description",
    "input",
    "metadata",
    "context",
    "evaluations",
    "metrics",
    "settings",
    "conversation",
    "scores",
)


@dataclass(frozen=True)
class ResponseCall:
    """How ``generate_responses`` takes a case."""

    positional: bool
    """The case is given as the one positional argument."""
    keywords: tuple[str, ...]
    """The case fields given by name."""
    required: tuple[str, ...]
    """The named fields without a default: a case must give each (not ``None``)."""


def _describe(cls: type) -> str:
    return f"{cls.__qualname__}.generate_responses"


def response_call(cls: type[PipelineEvaluator]) -> ResponseCall:
    """How ``cls.generate_responses`` is called; a :class:`ConfigError` (one line, naming the
    parameter and what is accepted) when no case could be given to it."""
    try:
        signature = inspect.signature(cls.generate_responses)
    except (TypeError, ValueError):
        return ResponseCall(positional=True, keywords=(), required=())
    params = list(signature.parameters.values())[1:]  # without self
    P = inspect.Parameter
    if any(p.kind is P.VAR_KEYWORD for p in params):
        named = [p for p in params if p.kind is not P.VAR_KEYWORD]
        if any(p.kind in (P.POSITIONAL_ONLY, P.VAR_POSITIONAL) for p in named):
            raise ConfigError(
                f"{_describe(cls)}{signature}: with **kwargs, take no positional parameter "
                "(the case's fields are given by name)"
            )
        return _keywords(cls, signature, named, var_keyword=True)
    if len(params) == 1 and params[0].kind is not P.KEYWORD_ONLY:  # (self, case), whatever its name
        return ResponseCall(positional=True, keywords=(), required=())
    if not params:
        raise ConfigError(
            f"{_describe(cls)}{signature} takes no case: give it a parameter 'case' "
            f"(or named case fields: {', '.join(CASE_KEYWORDS)}; or **kwargs)"
        )
    return _keywords(cls, signature, params, var_keyword=False)


def _keywords(
    cls: type, signature: inspect.Signature, params: list[inspect.Parameter], *, var_keyword: bool
) -> ResponseCall:
    for param in params:
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            raise ConfigError(
                f"{_describe(cls)}{signature}: *{param.name} beside named parameters cannot be "
                "given a case; name the case fields you need (or take one parameter, 'case')"
            )
        if param.name not in CASE_KEYWORDS:
            raise ConfigError(
                f"{_describe(cls)}{signature}: parameter {param.name!r} is not a case field "
                f"(expected one of: {', '.join(CASE_KEYWORDS)}; or a single parameter for the case)"
            )
    keywords = CASE_KEYWORDS if var_keyword else tuple(p.name for p in params)
    required = tuple(p.name for p in params if p.default is inspect.Parameter.empty)
    return ResponseCall(positional=False, keywords=keywords, required=required)


def case_keywords(case: SuiteCase) -> dict[str, Any]:
    """Every field of :data:`CASE_KEYWORDS` for ``case``."""
    fields = {name: getattr(case, name) for name in CASE_KEYWORDS if name not in ("case", "case_id")}
    return {"case": case, "case_id": case.id, **fields}


def case_problems(call: ResponseCall, case: SuiteCase) -> list[str]:
    """What ``case`` lacks for ``call`` (nothing when it can be given)."""
    if call.positional:
        return []
    given = case_keywords(case)
    return [
        f"generate_responses needs {name!r}, which this case does not give (add '{name}:' to the case)"
        for name in call.required
        if given.get(name) is None
    ]


async def call_generate(pipeline: PipelineEvaluator, call: ResponseCall, case: SuiteCase) -> Any:
    """``pipeline.generate_responses`` on ``case``, in the form its signature takes."""
    if call.positional:
        return await pipeline.generate_responses(case)
    given = case_keywords(case)
    generate: Any = pipeline.generate_responses
    return await generate(**{name: given[name] for name in call.keywords})


def create_pipeline(suite: SuiteInfo, cls: type[PipelineEvaluator], params: Mapping[str, Any]) -> Any:
    """The pipeline object (not started); a one-line :class:`ConfigError` naming the suite file
    and the class when its constructor raises."""
    try:
        return cls(suite, params)
    except Exception as exc:
        reason = mask(one_line(exc), suite.secrets)
        raise ConfigError(f"{suite.file}: pipeline {cls.__qualname__} cannot be created: {reason}") from None
