"""The metric protocol, plain callables as metrics, and scoring one case safely.

A metric is any object with a ``name``, the case fields it ``requires`` and a ``score``
method (sync or async) that takes a :class:`~clineval.model.Case` and a
:class:`ScoreContext` and returns a :class:`~clineval.model.Score`. Metrics hold no state
per case, so one instance scores many cases concurrently.

A plain function works too: its parameters named after case fields (``response``,
``reference``, ``trajectory``, ...) receive those fields, ``case``, ``judge`` and ``ctx``
receive what their names say, and any other parameter is a setting given when the metric
is created. It may return a number, a bool, a dict or a :class:`Score`::

    def mentions_allergy(response: str) -> float:
        return float("allerg" in response.lower())
"""

from __future__ import annotations

import inspect
import traceback
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol, runtime_checkable

from clineval.errors import ConfigError, JudgeConfigurationError
from clineval.judges.base import Judge, JudgeAnswer, JudgeError, MessagesLike, T, Usage
from clineval.judges.primitives import Primitives
from clineval.model import CASE_FIELDS, Case, Score

#: Parameter names a function metric may use for a case field, beyond the field names
#: themselves, so that evaluators written for other frameworks plug in unchanged.
FIELD_ALIASES: dict[str, str] = {
    "query": "input",
    "prompt": "input",
    "question": "input",
    "output": "response",
    "answer": "response",
    "ground_truth": "reference",
    "predicted_trajectory": "trajectory",
    "context": "contexts",
}

INJECTED = ("case", "ctx", "judge")


class JudgeRequiredError(Exception):
    """Raised by :meth:`ScoreContext.require_judge` when the run has no judge."""


class RecordingJudge:
    """Wraps a judge so that every call's token usage lands on one score."""

    def __init__(self, inner: Judge, usage: Usage):
        self._inner = inner
        self._usage = usage

    @property
    def inner(self) -> Judge:
        return self._inner

    @property
    def name(self) -> str:
        return self._inner.name

    def describe(self) -> dict[str, Any]:
        return self._inner.describe()

    async def ask(
        self, messages: MessagesLike, schema: type[T], *, max_tokens: int | None = None
    ) -> JudgeAnswer[T]:
        try:
            answer = await self._inner.ask(messages, schema, max_tokens=max_tokens)
        except JudgeError as exc:
            self._usage.add(exc.usage)
            raise
        self._usage.add(answer.usage)
        return answer

    async def aclose(self) -> None:
        return None


class ScoreContext:
    """What a metric may use besides the case: the judge, and the usage of this score."""

    def __init__(self, judge: Judge | None = None):
        self.usage = Usage()
        self.judge: Judge | None = RecordingJudge(judge, self.usage) if judge is not None else None

    def require_judge(self) -> Judge:
        if self.judge is None:
            raise JudgeRequiredError()
        return self.judge

    def primitives(self) -> Primitives:
        """The judgement primitives of this run's judge (see :mod:`clineval.judges.primitives`).

        A judge with primitives of its own (the offline judge) answers them directly; any
        other judge answers them through the packaged prompts, with usage recorded here.
        """
        judge = self.require_judge()
        inner = judge.inner if isinstance(judge, RecordingJudge) else judge
        own = getattr(inner, "primitives", None)
        # a runtime protocol check costs tens of microseconds: not for judges without primitives
        if own is not None and isinstance(own, Primitives):
            return own
        from clineval.judges.llm_primitives import LLMPrimitives

        return LLMPrimitives(judge)


@runtime_checkable
class Metric(Protocol):
    """The metric protocol (see the module docstring)."""

    name: str
    requires: tuple[str, ...]

    def score(self, case: Case, ctx: ScoreContext) -> Score | Awaitable[Score]: ...


class BaseMetric:
    """A convenient base for metric classes: set the class attributes, write ``score``."""

    name: str = ""
    requires: tuple[str, ...] = ()
    description: str = ""
    needs_judge: bool = False
    higher_is_better: bool = True
    """False for metrics where a smaller value is better (latency, failure, error rates)."""

    def score(self, case: Case, ctx: ScoreContext) -> Score | Awaitable[Score]:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<metric {self.name}>"


def to_score(result: Any, metric_name: str) -> Score:
    """Turn what a metric returned into a :class:`Score`.

    A number or bool is the value. A dict gives its value under the metric's name,
    ``score`` or ``value`` (or its only number); ``label``, ``explanation`` (or ``reason``)
    and ``error`` keep their meaning; other numbers become sub-scores and anything else
    goes to details.
    """
    if isinstance(result, Score):
        return result
    if isinstance(result, bool | int | float):
        return Score(value=float(result))
    if isinstance(result, Mapping):
        data = dict(result)
        value: Any = None
        for key in (metric_name, "score", "value"):
            if key in data and _is_number(data[key]):
                value = data.pop(key)
                break
        label = data.pop("label", None)
        explanation = data.pop("explanation", None) or data.pop("reason", None)
        error = data.pop("error", None)
        numbers = {k: float(v) for k, v in data.items() if _is_number(v)}
        details = {k: v for k, v in data.items() if k not in numbers}
        if value is None and len(numbers) == 1:
            value = numbers.popitem()[1]
        if error is not None:
            if value is not None:
                numbers = {**numbers, "value": float(value)}
            return Score(
                error=str(error),
                label=_opt_str(label),
                explanation=_opt_str(explanation),
                details={**details, **numbers},
            )
        return Score(
            value=value,
            label=_opt_str(label),
            explanation=_opt_str(explanation),
            sub_scores=numbers,
            details=details,
        )
    if result is None:
        raise TypeError("the metric returned None; return a number, a dict or a Score")
    raise TypeError(f"the metric returned a {type(result).__name__}; return a number, a dict or a Score")


def _is_number(value: Any) -> bool:
    return isinstance(value, bool | int | float)


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


class FunctionMetric(BaseMetric):
    """A plain (sync or async) function used as a metric."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        needs_judge: bool | None = None,
        **settings: Any,
    ):
        self.fn = fn
        self.name = name or str(getattr(fn, "__name__", type(fn).__name__))
        doc = description or (inspect.getdoc(fn) or "").split("\n")[0]
        self.description = doc
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError):
            raise ConfigError(f"metric {self.name!r}: cannot read the parameters of {fn!r}") from None
        self._fields: dict[str, str] = {}
        self._injected: list[str] = []
        required: list[str] = []
        known_settings: set[str] = set()
        accepts_any = False
        for param in signature.parameters.values():
            if param.kind is inspect.Parameter.VAR_KEYWORD:
                accepts_any = True
                continue
            if param.kind is inspect.Parameter.VAR_POSITIONAL:
                continue
            field = param.name if param.name in CASE_FIELDS else FIELD_ALIASES.get(param.name)
            if param.name in INJECTED:
                self._injected.append(param.name)
            elif field is not None:
                self._fields[param.name] = field
                if param.default is inspect.Parameter.empty:
                    required.append(field)
            else:
                known_settings.add(param.name)
                if param.default is inspect.Parameter.empty and param.name not in settings:
                    raise ConfigError(
                        f"metric {self.name!r} needs the setting {param.name!r} "
                        f"(e.g. {self.name}({param.name}=...))"
                    )
        unknown = set(settings) - known_settings
        if unknown and not accepts_any:
            raise ConfigError(
                f"metric {self.name!r} has no setting {sorted(unknown)[0]!r}; "
                f"its settings are: {', '.join(sorted(known_settings)) or 'none'}"
            )
        self.settings = settings
        self.requires = tuple(dict.fromkeys(required))
        self.needs_judge = bool(needs_judge) if needs_judge is not None else "judge" in self._injected

    async def score(self, case: Case, ctx: ScoreContext) -> Score:
        kwargs: dict[str, Any] = dict(self.settings)
        for param, field in self._fields.items():
            value = getattr(case, field)
            if value is None:
                continue  # optional field not on this case: the default applies
            if param == "context" and isinstance(value, list):
                value = "\n\n".join(value)
            kwargs[param] = value
        for param in self._injected:
            kwargs[param] = {"case": case, "ctx": ctx, "judge": ctx.judge}[param]
        result = self.fn(**kwargs)
        if inspect.isawaitable(result):
            result = await result
        return to_score(result, self.name)


def higher_is_better(metric: Metric) -> bool:
    """Whether a larger value of this metric is better (the default for any metric)."""
    return bool(getattr(metric, "higher_is_better", True))


def missing_fields(metric: Metric, case: Case) -> list[str]:
    return [f for f in getattr(metric, "requires", ()) if getattr(case, f, None) is None]


async def score_case(metric: Metric, case: Case, ctx: ScoreContext) -> Score:
    """Score one case, never raising for the case's sake.

    A missing required field, a metric that needs a judge when there is none, a judge
    that could not answer and an exception in the metric each give an error score that
    says why. Only a judge configuration error (bad key, unknown model) propagates, since
    every other case would fail the same way.
    """
    missing = missing_fields(metric, case)
    if missing:
        if case.agent_run is not None and case.agent_run.failed and set(missing) & {"response", "trajectory"}:
            return Score.failed(f"the agent failed on this case: {case.agent_run.error or 'unknown error'}")
        names = ", ".join(repr(f) for f in missing)
        return Score.failed(
            f"the case has no {names}, which metric {metric.name!r} requires", missing_fields=missing
        )
    if getattr(metric, "needs_judge", False) and ctx.judge is None:
        return Score.failed(_no_judge(metric.name))
    try:
        result = metric.score(case, ctx)
        if inspect.isawaitable(result):
            result = await result
        return to_score(result, metric.name)
    except JudgeConfigurationError:
        raise
    except JudgeRequiredError:
        return Score.failed(_no_judge(metric.name))
    except JudgeError as exc:
        details: dict[str, Any] = {}
        if exc.raw is not None:
            details["judge_raw"] = exc.raw[:2000]
        return Score(error=f"unscored: {exc.reason}", details=details)
    except Exception as exc:
        return Score(
            error=f"{type(exc).__name__}: {exc}",
            details={"traceback": "".join(traceback.format_exception(exc, limit=-6))[-4000:]},
        )


def _no_judge(name: str) -> str:
    return (
        f"unscored: metric {name!r} needs an LLM judge and none is configured "
        "(set --judge openai:MODEL, judge: in the run file, or CLINEVAL_JUDGE)"
    )
