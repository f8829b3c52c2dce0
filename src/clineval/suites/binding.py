"""An evaluator of a suite, ready to call: built from its spec, per-case arguments, inputs bound by name.

Per-case settings (``EvaluatorName: {...}`` in a case) override the suite's ``args``
for that case; each distinct set of arguments builds the evaluator once. An evaluator
that raises gives an *error* result carrying the message -- never a 0.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import inspect
import json
import math
import traceback
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from clineval.errors import ConfigError, JudgeConfigurationError
from clineval.importing import import_object
from clineval.judges.config import JudgeConfig
from clineval.metrics.base import ScoreContext, score_case, to_score
from clineval.model import Case, Score
from clineval.runner.threads import call_in_thread
from clineval.suites.evaluators import MetricEvaluator
from clineval.suites.modelconfig import (
    missing_model_config_message,
    model_config_from_environment,
    model_label,
    secret_values,
)
from clineval.suites.paths import MISSING
from clineval.suites.schema import EvaluatorSpec

#: Inputs given per evaluation item; an evaluator naming none of them runs once per case.
ITEM_INPUTS = ("response", "ground_truth", "query", "context", "conversation", "scores")
CASE_INPUTS = ("output", "latency_s", "case_id")
SECRET_WORDS = ("key", "secret", "password", "token", "credential")


def as_text(value: Any) -> str:
    """A looked-up or expected value as the text evaluators compare."""
    if value is None or value is MISSING:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(int(value)) if float(value).is_integer() else repr(value)
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def import_target(target: str) -> str:
    """``module:Class``; the dotted form ``package.module.Class`` (AutoAuth's example) is accepted too."""
    target = target.strip()
    if ":" not in target and "." in target:
        module, _, attr = target.rpartition(".")
        return f"{module}:{attr}"
    return target


#: The package of the Azure AI evaluators (the optional extra ``clineval[azure]``).
AZURE_MODULE = "azure.ai.evaluation"
AZURE_INSTALL = "pip install 'clineval[azure]'"


def evaluator_target(spec: EvaluatorSpec) -> str:
    """The evaluator's ``module:Class``; with ``type: azure`` a bare class name
    (``SimilarityEvaluator``) is one of azure-ai-evaluation's."""
    assert spec.class_ is not None
    target = import_target(spec.class_)
    if spec.type == "azure" and ":" not in target:
        target = f"{AZURE_MODULE}:{target}"
    return target


def require_azure(spec: EvaluatorSpec, target: str) -> None:
    """A :class:`ConfigError` with the install command when ``target`` is an Azure AI
    evaluator and azure-ai-evaluation is not installed."""
    module = target.partition(":")[0]
    if module != AZURE_MODULE and not module.startswith(AZURE_MODULE + "."):
        return
    try:
        importlib.import_module(AZURE_MODULE)
    except ImportError as exc:
        missing = getattr(exc, "name", None) or ""
        if missing and not AZURE_MODULE.startswith(missing) and missing != AZURE_MODULE:
            raise ConfigError(
                f"evaluator {spec.name!r}: {spec.class_} is an Azure AI evaluator; importing "
                f"azure-ai-evaluation failed ({exc}): reinstall it with: {AZURE_INSTALL}"
            ) from None
        raise ConfigError(
            f"evaluator {spec.name!r}: {spec.class_} is an Azure AI evaluator and azure-ai-evaluation "
            f"is not installed: {AZURE_INSTALL}"
        ) from None


def _overload_inputs(function: Any) -> set[str] | None:
    """The named inputs of a ``__call__(*args, **kwargs)`` declared by ``typing.overload``s
    (azure-ai-evaluation's evaluators), or ``None`` when it has none."""
    function = getattr(function, "__func__", function)
    try:
        overloads = typing.get_overloads(function)
    except Exception:
        return None
    names: set[str] = set()
    for item in overloads:
        sig = _signature(item)
        if sig is not None:
            names |= {
                n
                for n, p in sig.parameters.items()
                if n != "self"
                and p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
            }
    return names or None


def redacted_args(args: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments fit for a message or the store: secret-looking values masked."""
    out: dict[str, Any] = {}
    for key, value in args.items():
        if any(word in key.lower() for word in SECRET_WORDS) and value:
            out[key] = "***"
        elif isinstance(value, Mapping):
            out[key] = redacted_args(value)
        else:
            out[key] = value
    return out


def _signature(obj: Any) -> inspect.Signature | None:
    try:
        return inspect.signature(obj)
    except (TypeError, ValueError):
        return None


@dataclasses.dataclass
class ItemInputs:
    """What one evaluation item gives an evaluator."""

    query: str
    ground_truth: Any
    response: Any
    context: Any = None
    conversation: Any = None
    scores: Any = None
    contexts: list[str] | None = None


class BoundEvaluator:
    """One ``evaluators`` entry: importable, constructible, callable with the inputs it names."""

    def __init__(
        self,
        spec: EvaluatorSpec,
        *,
        base_dir: Path | None,
        judge: JudgeConfig | None,
        env: Mapping[str, str],
    ):
        self.spec = spec
        self.name = spec.name
        self.base_dir = base_dir
        self.judge = judge
        self.env = env
        self.secrets: set[str] = set()
        self.models: set[str] = set()
        """The models of the model configurations the evaluator was built with (``azure:gpt-4o``)."""
        self._instances: dict[str, Any] = {}
        if spec.metric is not None:
            self.factory: Any = MetricEvaluator
            self.fixed: dict[str, Any] = {"metric": spec.metric}
        else:
            target = evaluator_target(spec)
            require_azure(spec, target)
            self.factory = import_object(target, base_dir=base_dir, what=f"evaluator {spec.name!r} class")
            self.fixed = {}
        self.is_class = inspect.isclass(self.factory)
        self.higher_is_better = spec.higher_is_better and bool(
            getattr(self.factory, "higher_is_better", True)
        )
        self._call_params: set[str] | None = None
        self._call_required: set[str] = set()
        self._skip_none = False
        """Inputs named only by overloads: one the evaluation lacks is left out, not passed as None."""
        self.per_item = True

    # construction ---------------------------------------------------------------------

    def constructor_problems(self, args: Mapping[str, Any]) -> list[str]:
        """What is wrong with constructing the evaluator with ``args`` (nothing when it fits)."""
        if not self.is_class:
            if args:
                return [f"{self.spec.class_} is a function; it takes no args"]
            return []
        if self.factory is MetricEvaluator:
            return []
        sig = _signature(self.factory)
        if sig is None:
            return []
        params = sig.parameters
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
            known = None
        else:
            known = {n for n, p in params.items() if p.kind is not inspect.Parameter.VAR_POSITIONAL}
        problems = []
        if known is not None:
            for key in args:
                if key not in known:
                    problems.append(
                        f"{self.spec.class_} has no parameter {key!r} "
                        f"(its parameters: {', '.join(sorted(known)) or 'none'})"
                    )
        for name, param in params.items():
            if param.kind in (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL):
                continue
            if param.default is inspect.Parameter.empty and name not in args:
                if name == "model_config":
                    if model_config_from_environment(self.env, self.judge) is None:
                        problems.append(missing_model_config_message(self.name))
                else:
                    problems.append(f"{self.spec.class_} needs the argument {name!r}")
        return problems

    def argument_problems(self, args: Mapping[str, Any]) -> list[tuple[str, str]]:
        """Arguments whose value does not fit the constructor's annotations, as
        ``(argument, message)`` pairs; nothing is created."""
        if not self.is_class or self.factory is MetricEvaluator:
            return []
        from clineval.metrics.registry import settings_problems

        found = settings_problems(
            self.factory, dict(args), str(self.spec.class_), only_given=True, noun="argument"
        )
        return [(key, message) for key, message in found if key is not None]

    def check_call(self) -> None:
        """What :meth:`instance` learns about calling the evaluator, from signatures alone:
        a :class:`ConfigError` when its objects are not callable; nothing is created."""
        if self.factory is MetricEvaluator:
            self._call_params, self.per_item = None, True
            return
        if not self.is_class:
            if not callable(self.factory):
                raise ConfigError(f"evaluator {self.name!r}: {self.spec.class_} is not callable")
            self._inspect_signature(_signature(self.factory), self.factory)
            return
        owner = next((k for k in self.factory.__mro__ if "__call__" in vars(k)), None)
        if owner is None or owner is object:
            raise ConfigError(
                f"evaluator {self.name!r}: {self.spec.class_} objects are not callable "
                "(an evaluator class needs a __call__ method)"
            )
        bound = isinstance(inspect.getattr_static(self.factory, "__call__"), staticmethod | classmethod)
        sig = _signature(self.factory.__call__)
        if sig is not None and not bound:
            params = list(sig.parameters.values())
            sig = sig.replace(parameters=params[1:]) if params else sig
        self._inspect_signature(sig, self.factory.__call__)

    def _with_model_config(self, args: dict[str, Any]) -> dict[str, Any]:
        if "model_config" in args:
            label = model_label(args["model_config"])
            if label:
                self.models.add(label)
        if not self.is_class or self.factory is MetricEvaluator or "model_config" in args:
            return args
        sig = _signature(self.factory)
        if sig is None or "model_config" not in sig.parameters:
            return args
        config = model_config_from_environment(self.env, self.judge)
        if config is None:
            if sig.parameters["model_config"].default is inspect.Parameter.empty:
                raise ConfigError(missing_model_config_message(self.name))
            return args
        self.secrets |= secret_values(config)
        label = model_label(config)
        if label:
            self.models.add(label)
        return {**args, "model_config": config}

    def instance(self, overrides: Mapping[str, Any] | None = None) -> Any:
        """The evaluator built with ``args`` and this case's ``overrides`` (cached per argument set)."""
        args = {**self.fixed, **self.spec.args, **dict(overrides or {})}
        key = json.dumps(args, sort_keys=True, default=repr)
        if key in self._instances:
            return self._instances[key]
        if self.is_class:
            built_args = self._with_model_config(args)
            try:
                made = self.factory(**built_args)
            except ConfigError:
                raise
            except Exception as exc:
                raise ConfigError(
                    f"evaluator {self.name!r}: {self.spec.class_ or 'metric'} cannot be created with "
                    f"{redacted_args(args)}: {type(exc).__name__}: {exc}"
                ) from None
        else:
            made = self.factory
        if not isinstance(made, MetricEvaluator) and not callable(made):
            raise ConfigError(f"evaluator {self.name!r}: {self.spec.class_} does not make a callable")
        if self._call_params is None:
            self._inspect_call(made)
        self._instances[key] = made
        return made

    def _inspect_call(self, made: Any) -> None:
        if isinstance(made, MetricEvaluator):
            self._call_params, self.per_item = None, True
            return
        target = made if inspect.isroutine(made) else made.__call__
        self._inspect_signature(_signature(target), target)

    def _inspect_signature(self, sig: inspect.Signature | None, function: Any = None) -> None:
        if sig is None or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values()):
            declared = _overload_inputs(function) if function is not None else None
            if declared is not None:  # ``__call__(*args, **kwargs)`` with typed overloads
                self._call_params, self._call_required, self._skip_none = declared, set(), True
                self.per_item = bool(declared & set(ITEM_INPUTS))
                return
            self._call_params = None
            self.per_item = True
            return
        params = {n: p for n, p in sig.parameters.items() if p.kind is not inspect.Parameter.VAR_POSITIONAL}
        self._call_params = set(params)
        self._call_required = {n for n, p in params.items() if p.default is inspect.Parameter.empty}
        self.per_item = bool(self._call_params & set(ITEM_INPUTS))

    # calling --------------------------------------------------------------------------

    async def call(
        self,
        made: Any,
        *,
        item: ItemInputs | None,
        case: Case,
        output: Any,
        latency_s: float | None,
        ctx: ScoreContext,
    ) -> Score:
        """One call: the evaluator's result as a Score (an error score if it raised)."""
        try:
            if isinstance(made, MetricEvaluator):
                assert item is not None
                return await self._call_metric(made, item, case, ctx)
            available: dict[str, Any] = {"output": output, "latency_s": latency_s, "case_id": case.id}
            if item is not None:
                available.update(
                    response=as_text(item.response),
                    ground_truth=as_text(item.ground_truth),
                    query=item.query,
                    context=item.context,
                    conversation=item.conversation,
                    scores=item.scores,
                )
            if self._call_params is None:
                kwargs = {k: v for k, v in available.items() if v is not None}
            else:
                kwargs = {
                    k: v
                    for k, v in available.items()
                    if k in self._call_params and not (self._skip_none and v is None)
                }
                lacking = [k for k in self._call_required if k not in kwargs or kwargs[k] is None]
                if lacking:
                    return Score.failed(
                        f"evaluator {self.name!r} needs {', '.join(repr(k) for k in sorted(lacking))}, "
                        "which this evaluation does not give"
                    )
            try:
                result = await asyncio.wait_for(self._invoke(made, kwargs), self.spec.timeout_s)
            except TimeoutError:
                return Score(error=f"evaluator {self.name!r} timed out after {self.spec.timeout_s:g} s")
            return self.to_score(result)
        except JudgeConfigurationError:
            raise
        except Exception as exc:
            message = f"{type(exc).__name__}: {exc}"
            return Score(
                error=f"evaluator {self.name!r} raised {message}",
                details={"traceback": "".join(traceback.format_exception(exc, limit=-4))[-3000:]},
            )

    async def _invoke(self, made: Any, kwargs: dict[str, Any]) -> Any:
        target = made if inspect.isroutine(made) else made.__call__
        if inspect.iscoroutinefunction(target):
            return await made(**kwargs)
        # A daemon thread, not asyncio.to_thread: a hung evaluator must not keep the run alive.
        result = await call_in_thread(made, **kwargs)
        if inspect.isawaitable(result):
            result = await result
        return result

    async def _call_metric(
        self, made: MetricEvaluator, item: ItemInputs, case: Case, ctx: ScoreContext
    ) -> Score:
        probe = Case(
            id=case.id,
            input=case.input if case.input is not None else item.query,
            response=as_text(item.response),
            reference=as_text(item.ground_truth) if item.ground_truth is not None else None,
            contexts=item.contexts,
            metadata=case.metadata,
        )
        return await score_case(made.metric, probe, ctx)

    def to_score(self, result: Any) -> Score:
        """An evaluator's return value as a Score (dataclasses, pydantic models and azure-style dicts too)."""
        if isinstance(result, Score):
            return result
        if dataclasses.is_dataclass(result) and not isinstance(result, type):
            result = dataclasses.asdict(result)
        elif isinstance(result, BaseModel):
            result = result.model_dump()
        if isinstance(result, Mapping):
            data = dict(result)
            if self.spec.score_key is None:
                key = _azure_key(data)
                if key is not None:  # an Azure AI evaluator's result: {k, k_score, k_result, k_reason, ...}
                    reason = data.get(f"{key}_reason")
                    if str(data.get(f"{key}_status", "")).lower() == "skipped":
                        return Score.not_applicable(str(reason or "the evaluator skipped this evaluation"))
                    value = data.pop(key)
                    if isinstance(value, float) and math.isnan(value):
                        why = (
                            f": {reason}" if reason else " (the model's answer could not be read as a score)"
                        )
                        return Score(error=f"evaluator {self.name!r} gave no score (NaN){why}")
                    data["score"] = value
                    data.pop(f"{key}_score", None)
                    data.pop(f"gpt_{key}", None)
            if self.spec.score_key is not None:
                if self.spec.score_key not in data:
                    raise KeyError(
                        f"score_key {self.spec.score_key!r} is not in the result "
                        f"(keys: {', '.join(map(str, data))})"
                    )
                data["score"] = data.pop(self.spec.score_key)
            for key in list(data):
                lowered = str(key).lower()
                if lowered.endswith("result") and str(data[key]).lower() in ("pass", "fail"):
                    data.setdefault("label", str(data.pop(key)).lower())
                elif lowered.endswith("reason") and key != "reason" and isinstance(data[key], str):
                    data.setdefault("explanation", data.pop(key))
                elif lowered.endswith(("_passed", "_threshold")):
                    data.setdefault("_meta", {})[key] = data.pop(key)
            meta = data.pop("_meta", None)
            score = to_score(data, self.name)
            if meta:
                score = score.model_copy(update={"details": {**score.details, **meta}})
            return score
        return to_score(result, self.name)


def _azure_key(data: Mapping[str, Any]) -> str | None:
    """The score's key in an azure-ai-evaluation result (``similarity`` beside ``similarity_result``
    and ``similarity_score``), when there is exactly one such key."""
    keys = [
        key
        for key, value in data.items()
        if isinstance(value, int | float)
        and not isinstance(value, bool)
        and (f"{key}_result" in data or f"{key}_score" in data)
    ]
    return keys[0] if len(keys) == 1 else None


def combine(name: str, items: Sequence[tuple[ItemInputs | None, Score]]) -> Score:
    """The (case, evaluator) result from its per-evaluation results.

    The value is the mean over the evaluations that were scored; each evaluation's value
    is kept as a sub-score named by its query. If any evaluation's call raised, the
    result is an error naming it (the other values are kept in ``details``).
    The label is ``fail`` when any evaluation failed its threshold, ``pass`` when all passed.
    """
    if len(items) == 1:
        item, score = items[0]
        rows = [_row(item, score)]
        return score.model_copy(update={"details": {**score.details, "evaluations": rows}})
    rows = [_row(item, score) for item, score in items]
    errors = [(item, score) for item, score in items if score.status == "error"]
    if errors:
        item, first = errors[0]
        where = f" on {item.query!r}" if item is not None else ""
        more = f" (and {len(errors) - 1} more evaluations)" if len(errors) > 1 else ""
        return Score(error=f"{first.error}{where}{more}", details={"evaluations": rows})
    scored = [(item, score) for item, score in items if score.status == "scored" and score.value is not None]
    if not scored:
        reasons = "; ".join(sorted({s.explanation or "not applicable" for _, s in items}))
        return Score.not_applicable(reasons, evaluations=rows)
    sub_scores: dict[str, float | None] = {}
    for item, score in scored:
        key = item.query if item is not None else "case"
        n = 2
        while key in sub_scores:
            key = f"{item.query if item else 'case'}#{n}"
            n += 1
        sub_scores[key] = score.value
    values = [s.value for _, s in scored if s.value is not None]
    labels = {s.label for _, s in items if s.label in ("pass", "fail")}
    label = "fail" if "fail" in labels else "pass" if labels == {"pass"} else None
    failing = [item.query for item, s in items if item is not None and s.label == "fail"]
    return Score(
        value=sum(values) / len(values),
        label=label,
        explanation=f"failed: {', '.join(failing)}" if failing else None,
        sub_scores=sub_scores,
        details={"evaluations": rows},
    )


def _short(value: Any, limit: int = 400) -> Any:
    text = as_text(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _row(item: ItemInputs | None, score: Score) -> dict[str, Any]:
    row: dict[str, Any] = {"status": score.status, "value": score.value}
    if item is not None:
        row.update(query=item.query, ground_truth=_short(item.ground_truth), response=_short(item.response))
        if item.response is MISSING:
            row["missing"] = True
    for key in ("label", "explanation", "error"):
        value = getattr(score, key)
        if value is not None:
            row[key] = value
    return row
