"""The metric registry: metrics by name, by import path, and the specs that rebuild them.

Built-in metrics register themselves with :func:`metric`; users do the same in their own
modules, or name any class or function by its import path (``mypkg.metrics:Dosage`` or
``metrics.py:dosage``). A :class:`MetricSpec` (name, settings, optional alias) is what a
run stores, so that ``clineval run --resume`` and ``clineval score`` rebuild exactly the
metrics that ran.

On the command line and in run files a spec is written ``NAME``, ``NAME(key=value, ...)``
or ``ALIAS=NAME(key=value)``, e.g. ``trajectory_single_tool_use(tool_name=order_ct)``.

Other tools' names for clineval metrics are accepted wherever a metric is named
(:data:`SYNONYMS`, e.g. Vertex AI's ``rouge_l_sum`` and ``latency_in_seconds``): a spec
that names one is read as the metric it stands for, with the settings it implies, when
the spec is made (:func:`apply_synonym`).

Settings are checked against the metric's typed signature before anything is built
(:func:`settings_problems`: a pydantic model made from the parameters and their
annotations), so ``rubric(criteria=5)`` is reported as "setting 'criteria': expected a
string or a mapping of strings to strings, got 5", every bad setting at once.
"""

from __future__ import annotations

import ast
import collections.abc
import contextlib
import difflib
import inspect
import re
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any, Literal, Union, cast, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model, model_validator

from clineval.errors import ConfigError, MetricNotFoundError
from clineval.importing import import_object
from clineval.metrics.base import FunctionMetric, Metric
from clineval.metrics.registration import REGISTERED
from clineval.metrics.registration import MetricEntry as MetricEntry  # re-exported
from clineval.metrics.registration import (
    metric as metric,  # re-exported: metric modules outside register with it
)

_REGISTRY = REGISTERED
_BUILTINS_LOADED = False


def _load_builtins() -> None:
    """Register the generic built-in metrics, then the plugins' (:mod:`clineval.plugins`)."""
    global _BUILTINS_LOADED
    if not _BUILTINS_LOADED:
        _BUILTINS_LOADED = True
        from clineval.metrics import builtin  # noqa: F401  (each module registers its metrics)
    from clineval.plugins import load_plugins

    load_plugins()  # once per process; feature packages register their own metrics


def catalogue() -> list[MetricEntry]:
    """Every registered metric, sorted by name."""
    _load_builtins()
    return [_REGISTRY[k] for k in sorted(_REGISTRY)]


def get_entry(name: str) -> MetricEntry:
    _load_builtins()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise MetricNotFoundError(_unknown_message(name)) from None


def _unknown_message(name: str) -> str:
    names = sorted(_REGISTRY)
    if re.search(r"\s-\s|^-\s", name):
        return (
            f"unknown metric {name!r}: it looks like list items run together. In YAML each "
            "'- item' of a list starts on its own line, at the same indentation as the item above it"
        )
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.5)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    return (
        f"unknown metric {name!r}.{hint} Known metrics: {', '.join(names)}. "
        "A metric of your own can be named by its import path, 'package.module:Name' or 'file.py:name'."
    )


@dataclass(frozen=True)
class MetricSynonym:
    """Another tool's name for a clineval metric, and the settings that name implies.

    A synonym without settings is another spelling: its scores are stored under the
    metric's own name (``latency_in_seconds`` gives ``latency``). One with settings names
    a configuration: its scores keep the name written (``rouge_l_sum`` is
    ``rouge_l_sum=rouge(rouge_type=rougeLsum)``), so that several sit side by side.
    """

    name: str
    target: str
    settings: tuple[tuple[str, Any], ...] = ()
    source: str = ""

    def __str__(self) -> str:
        if not self.settings:
            return self.target
        return f"{self.target}(" + ", ".join(f"{k}={v!r}" for k, v in self.settings) + ")"


VERTEX_AI = "Vertex AI Gen AI evaluation"

#: Other tools' metric names, by name.
SYNONYMS: dict[str, MetricSynonym] = {}


def metric_synonym(name: str, target: str, *, source: str, **settings: Any) -> None:
    """Accept ``name`` wherever a metric is named, as ``target`` with ``settings``."""
    SYNONYMS[name] = MetricSynonym(name, target, tuple(settings.items()), source)


for _name, _type in (
    ("rouge_1", "rouge1"),
    ("rouge_2", "rouge2"),
    ("rouge_l", "rougeL"),
    ("rouge_l_sum", "rougeLsum"),
):
    metric_synonym(_name, "rouge", source=VERTEX_AI, rouge_type=_type)
metric_synonym("latency_in_seconds", "latency", source=VERTEX_AI)


def apply_synonym(
    name: str, args: dict[str, Any], alias: str | None
) -> tuple[str, dict[str, Any], str | None]:
    """``(name, args, alias)`` with a synonym replaced by the metric it stands for.

    A metric registered under the name wins over a synonym. A setting the synonym fixes
    may be repeated with the same value, not changed (:class:`ConfigError`).
    """
    synonym = SYNONYMS.get(name)
    if synonym is None or name in _REGISTRY:
        return name, args, alias
    for key, value in synonym.settings:
        if key in args and args[key] != value:
            raise ConfigError(
                f"metric {name!r} is {synonym} ({synonym.source}'s name) and cannot take "
                f"{key}={args[key]!r}; write {synonym.target}({key}={args[key]!r}) instead"
            )
    merged = {**dict(synonym.settings), **args}
    return synonym.target, merged, alias or (name if synonym.settings else None)


class MetricSpec(BaseModel):
    """A metric to build: registry name or import path, settings, and the name its scores get."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)
    alias: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, data: Any) -> Any:
        if isinstance(data, str):
            return parse_metric_spec(data).model_dump()
        return data

    @model_validator(mode="after")
    def _synonym(self) -> MetricSpec:
        try:
            self.name, self.args, self.alias = apply_synonym(self.name, self.args, self.alias)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        return self

    @property
    def result_name(self) -> str:
        """The name this metric's scores are stored and shown under."""
        if self.alias:
            return self.alias
        if ":" in self.name:
            return self.name.rpartition(":")[2].rpartition(".")[2]
        return self.name

    def __str__(self) -> str:
        text = self.name
        if self.args:
            text += "(" + ", ".join(f"{k}={v!r}" for k, v in self.args.items()) + ")"
        return f"{self.alias}={text}" if self.alias else text


def split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside parentheses, brackets or quotes."""
    parts: list[str] = []
    current: list[str] = []
    depth, quote = 0, ""
    for ch in text:
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(ch)
    parts.append("".join(current))
    return parts


#: A value written without quotes that is not a Python literal: a word, a path, a dotted name.
_BARE = re.compile(r"[^\s,()\[\]{}'\"=]+")


def _value(raw: str, text: str) -> Any:
    """A setting's value: a Python literal, else a bare word or path taken as a string."""
    try:
        return _literal(ast.parse(raw, mode="eval").body, text)
    except (SyntaxError, ConfigError):
        if _BARE.fullmatch(raw):
            return raw
        raise ConfigError(f"metric {text!r}: cannot read the value {raw!r}; quote it if it is text") from None


def parse_metric_spec(text: str) -> MetricSpec:
    """Parse ``[ALIAS=]NAME[(key=value, ...)]``.

    Values are Python literals (numbers, quoted strings, lists, dicts), ``true``/``false``/
    ``none``, or bare words and paths (``tool_name=get_labs``, ``reference_facts=facts.jsonl``)
    taken as strings.
    """
    text = text.strip()
    if not text:
        raise ConfigError("empty metric name")
    head, paren, rest = text.partition("(")
    alias: str | None = None
    if "=" in head:
        alias, _, head = head.partition("=")
        alias = alias.strip() or None
    name = head.strip()
    args: dict[str, Any] = {}
    if paren:
        if not rest.rstrip().endswith(")"):
            raise ConfigError(f"metric {text!r}: missing closing parenthesis")
        body = rest.rstrip()[:-1]
        parts = split_top_level(body)
        for index, part in enumerate(parts):
            if not part.strip():
                if index == len(parts) - 1 and (index > 0 or not body.strip()):
                    continue  # a trailing comma, or no settings at all: NAME()
                raise ConfigError(f"metric {text!r}: settings must look like NAME(key=value, key2=value2)")
            key, eq, raw = part.partition("=")
            key = key.strip()
            if not eq or not key.isidentifier():
                raise ConfigError(f"metric {text!r}: settings must be given as key=value")
            if key in args:
                raise ConfigError(f"metric {text!r}: the setting {key!r} is given twice")
            args[key] = _value(raw.strip(), text)
    if not name:
        raise ConfigError(f"metric {text!r}: no metric name")
    name, args, alias = apply_synonym(name, args, alias)
    return MetricSpec(name=name, args=args, alias=alias)


def _literal(node: ast.expr, text: str) -> Any:
    if isinstance(node, ast.Name):
        return {"true": True, "false": False, "none": None, "null": None}.get(node.id.lower(), node.id)
    if isinstance(node, ast.List | ast.Tuple):
        return [_literal(e, text) for e in node.elts]
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise ConfigError(f"metric {text!r}: cannot read the value {ast.unparse(node)!r}") from None


_NO_MODEL = object()
_SETTINGS_MODELS: dict[Any, Any] = {}


def _annotation(param: inspect.Parameter, namespace: dict[str, Any]) -> Any:
    """A parameter's annotation as a type pydantic can check (``Any`` when it cannot)."""
    annotation = param.annotation
    if annotation is inspect.Parameter.empty:
        return Any
    if isinstance(annotation, str):
        try:
            annotation = eval(annotation, {**vars(typing), **namespace})  # the code's own annotation
        except Exception:
            return Any
    try:
        TypeAdapter(annotation)
    except Exception:
        return Any
    return annotation


def _settings_model(factory: Any) -> Any:
    """A pydantic model of ``factory``'s keyword parameters (cached), or ``_NO_MODEL``."""
    try:
        return _SETTINGS_MODELS[factory]
    except (KeyError, TypeError):
        pass
    result: Any = _NO_MODEL
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        signature = None
    if signature is not None:
        target = factory.__init__ if inspect.isclass(factory) else factory
        namespace = dict(getattr(inspect.unwrap(target), "__globals__", {}))
        fields: dict[str, Any] = {}
        extra: Literal["allow", "forbid"] = "forbid"
        for name, param in signature.parameters.items():
            if param.kind is inspect.Parameter.VAR_KEYWORD:
                extra = "allow"
            elif param.kind is inspect.Parameter.VAR_POSITIONAL:
                continue
            elif name.startswith(("_", "model_")):
                extra = "allow"  # names pydantic keeps for itself: not checked
            else:
                default = ... if param.default is inspect.Parameter.empty else param.default
                fields[name] = (_annotation(param, namespace), default)
        try:
            result = cast(Any, create_model)(
                f"{getattr(factory, '__name__', 'metric')}_settings",
                __config__=ConfigDict(extra=extra, arbitrary_types_allowed=True),
                **fields,
            )
        except Exception:
            result = _NO_MODEL
    with contextlib.suppress(TypeError):
        _SETTINGS_MODELS[factory] = result
    return result


def describe_type(tp: Any, plural: bool = False) -> str:
    """A type as a user reads it: ``list[str]`` is "a list of strings"."""
    origin, args = get_origin(tp), get_args(tp)
    if tp is Any or tp is object:
        return "values" if plural else "anything"
    if tp is type(None):
        return "none"
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    if origin is Union or origin is types.UnionType:
        members = [a for a in args if a is not type(None)]
        if str in members:
            members = [m for m in members if not (inspect.isclass(m) and issubclass(m, PurePath))]
        members.sort(key=lambda m: 0 if m is str else 1)
        return " or ".join(dict.fromkeys(describe_type(m, plural) for m in members))
    if origin is typing.Annotated:
        return describe_type(args[0], plural)
    simple = {
        str: ("a string", "strings"),
        bool: ("true or false", "true/false values"),
        int: ("an integer", "integers"),
        float: ("a number", "numbers"),
    }
    if tp in simple:
        return simple[tp][plural]
    if inspect.isclass(tp) and issubclass(tp, PurePath):
        return "file paths" if plural else "a file path"
    sequences = (list, tuple, set, frozenset, collections.abc.Sequence, collections.abc.Iterable)
    if tp in sequences or origin in sequences:
        item = args[0] if args else Any
        inner = "" if item is Any else f" of {describe_type(item, True)}"
        return ("lists" if plural else "a list") + inner
    if tp in (dict, collections.abc.Mapping) or origin in (dict, collections.abc.Mapping):
        key, value = (*args, Any, Any)[:2]
        if value is Any:
            inner = ""
        elif key in (Any, str):
            inner = (" of strings" if key is str else "") + f" to {describe_type(value, True)}"
        else:
            inner = f" of {describe_type(key, True)} to {describe_type(value, True)}"
        return ("mappings" if plural else "a mapping") + inner
    name = getattr(tp, "__name__", str(tp))
    return f"{name} values" if plural else f"a {name}"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def settings_problems(
    factory: Any, args: dict[str, Any], label: str, *, only_given: bool = False, noun: str = "setting"
) -> list[tuple[str | None, str]]:
    """What is wrong with calling ``factory(**args)``, from its signature and annotations,
    without calling it: ``(setting, message)`` pairs (setting ``None`` for the whole call).

    ``label`` starts each message (``"metric 'rubric'"``). With ``only_given``, only the
    types of the given settings that are parameters are checked (for metrics whose unknown
    and missing settings are reported elsewhere). ``noun`` names what the settings are
    (``"argument"`` for a suite evaluator's constructor).
    """
    model = _settings_model(factory)
    if model is _NO_MODEL:
        return []
    fields = model.model_fields
    if only_given:
        return [
            (key, _expected(label, key, fields[key].annotation, value, noun))
            for key, value in args.items()
            if key in fields and _fails(fields[key].annotation, value)
        ]
    problems: list[tuple[str | None, str]] = []
    try:
        model.model_validate(dict(args))
    except ValidationError as exc:
        reported: set[str] = set()
        for err in exc.errors():
            loc = err.get("loc", ())
            key = str(loc[0]) if loc else None
            if key is None or key in reported:
                continue
            reported.add(key)
            if err.get("type") == "extra_forbidden":
                known = ", ".join(sorted(fields)) or "none"
                problems.append((key, f"{label}: unknown {noun} {key!r} (its {noun}s: {known})"))
            elif err.get("type") == "missing":
                problems.append((key, f"{label}: the {noun} {key!r} is required"))
            else:
                problems.append((key, _expected(label, key, fields[key].annotation, args.get(key), noun)))
    return problems


def _fails(annotation: Any, value: Any) -> bool:
    try:
        TypeAdapter(annotation).validate_python(value)
    except ValidationError:
        return True
    return False


def _expected(label: str, key: str, annotation: Any, value: Any, noun: str = "setting") -> str:
    return f"{label}, {noun} {key!r}: expected {describe_type(annotation)}, got {_shown(value)}"


def _raise_settings(spec: MetricSpec, factory: Any, *, only_given: bool = False) -> None:
    found = settings_problems(factory, dict(spec.args), f"metric {spec.name!r}", only_given=only_given)
    if found:
        raise ConfigError("; ".join(message for _, message in found))


def check_metric(spec: MetricSpec, *, base_dir: Path | None = None) -> list[tuple[str | None, str]]:
    """Every problem of a metric spec, as ``(setting, message)`` pairs, without creating
    anything from user code: a registered metric is built (clineval's own classes), a
    class named by import path is only imported and its signature checked."""
    if ":" not in spec.name:
        try:
            entry = get_entry(spec.name)
        except ConfigError as exc:
            return [(None, str(exc))]
        if inspect.isclass(entry.factory):
            found = settings_problems(entry.factory, dict(spec.args), f"metric {spec.name!r}")
            if found:
                return found
        try:
            build_metric(spec, base_dir=base_dir)
        except ConfigError as exc:
            return [(None, str(exc))]
        return []
    try:
        obj = import_object(spec.name, base_dir=base_dir, what="metric")
    except ConfigError as exc:
        return [(None, str(exc))]
    label = f"metric {spec.name!r}"
    if inspect.isclass(obj):
        found = settings_problems(obj, dict(spec.args), label)
        if not found and not (hasattr(obj, "score") or "__call__" in dir(obj)):
            found = [(None, f"{label}: {obj.__name__} has no score() and is not callable")]
        return found
    if isinstance(obj, Metric):
        return [(None, f"{label} is an instance; it takes no settings")] if spec.args else []
    if callable(obj):
        try:
            FunctionMetric(obj, name=spec.result_name, **spec.args)
        except ConfigError as exc:
            return [(None, str(exc))]
        return settings_problems(obj, dict(spec.args), label, only_given=True)
    return [(None, f"{label} is neither a metric class, an instance nor a function")]


def build_metric(spec: MetricSpec | str, *, base_dir: Path | None = None) -> Metric:
    """Build the metric a spec names, with its settings; the instance carries the spec."""
    if isinstance(spec, str):
        spec = parse_metric_spec(spec)
    if ":" in spec.name:
        obj = import_object(spec.name, base_dir=base_dir, what="metric")
        instance = _instantiate(obj, spec)
    else:
        entry = get_entry(spec.name)
        _raise_settings(spec, entry.factory, only_given=not inspect.isclass(entry.factory))
        args = dict(spec.args)
        if base_dir is not None and "base_dir" not in args and _takes_base_dir(entry.factory):
            args["base_dir"] = base_dir  # the metric resolves relative paths in its settings
        try:
            instance = entry.factory(**args)
        except ConfigError:
            raise
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"metric {spec.name!r}: bad settings {spec.args}: {exc}") from None
    try:
        instance.name = spec.result_name
    except AttributeError:
        raise ConfigError(f"metric {spec.name!r}: its 'name' cannot be set") from None
    with contextlib.suppress(AttributeError):
        instance.spec = spec  # type: ignore[attr-defined]
    return instance


def _takes_base_dir(factory: Callable[..., Any]) -> bool:
    """Whether a registered metric takes ``base_dir`` (the run file's folder, against which
    it resolves relative paths given in its settings)."""
    try:
        return "base_dir" in inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return False


def _instantiate(obj: Any, spec: MetricSpec) -> Metric:
    if inspect.isclass(obj):
        _raise_settings(spec, obj)
        try:
            made = obj(**spec.args)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"metric {spec.name!r}: cannot be created with {spec.args}: {exc}") from None
        instance: Any = made
        if hasattr(instance, "score"):
            if not hasattr(instance, "requires"):
                instance.requires = ()
            return instance  # type: ignore[no-any-return]
        if callable(made):
            # An evaluator object called with named inputs, as other frameworks write them.
            return FunctionMetric(made.__call__, name=spec.result_name)
        raise ConfigError(f"metric {spec.name!r}: {obj.__name__} has no score() and is not callable")
    if isinstance(obj, Metric):
        if spec.args:
            raise ConfigError(f"metric {spec.name!r} is an instance; it takes no settings")
        return obj
    if callable(obj):
        made_fn = FunctionMetric(obj, name=spec.result_name, **spec.args)
        _raise_settings(spec, obj, only_given=True)
        return made_fn
    raise ConfigError(f"metric {spec.name!r} is neither a metric class, an instance nor a function")


def resolve_metrics(
    items: Sequence[Metric | MetricSpec | str | Callable[..., Any]], *, base_dir: Path | None = None
) -> list[Metric]:
    """:func:`resolve_metric` for each item; a :class:`ConfigError` lists every bad one at once."""
    built: list[Metric] = []
    problems: list[str] = []
    for item in items:
        try:
            built.append(resolve_metric(item, base_dir=base_dir))
        except ConfigError as exc:
            problems.append(str(exc))
    if len(problems) == 1:
        raise ConfigError(problems[0])
    if problems:
        raise ConfigError(f"{len(problems)} bad metrics:\n" + "\n".join(f"  {p}" for p in problems))
    return built


def resolve_metric(
    item: Metric | MetricSpec | str | Callable[..., Any], *, base_dir: Path | None = None
) -> Metric:
    """Whatever a user passes in ``metrics=[...]`` as a metric instance."""
    if isinstance(item, str | MetricSpec):
        return build_metric(item, base_dir=base_dir)
    if isinstance(item, Metric):
        if not item.name:
            item.name = type(item).__name__
        return item
    if callable(item):
        return FunctionMetric(item)
    raise ConfigError(f"cannot use {item!r} as a metric: give a name, a Metric or a function")
