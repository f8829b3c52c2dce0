"""The metric registry: metrics by name, by import path, and the specs that rebuild them.

Built-in metrics register themselves with :func:`metric`; users do the same in their own
modules, or name any class or function by its import path (``mypkg.metrics:Dosage`` or
``metrics.py:dosage``). A :class:`MetricSpec` (name, settings, optional alias) is what a
run stores, so that ``clineval run --resume`` and ``clineval score`` rebuild exactly the
metrics that ran.

On the command line and in run files a spec is written ``NAME``, ``NAME(key=value, ...)``
or ``ALIAS=NAME(key=value)``, e.g. ``trajectory_single_tool_use(tool_name=order_ct)``.
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import importlib
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field, model_validator

from clineval.errors import ConfigError, MetricNotFoundError
from clineval.importing import import_object
from clineval.metrics.base import FunctionMetric, Metric

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


_REGISTRY: dict[str, MetricEntry] = {}
_BUILTINS_LOADED = False


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
        if key in _REGISTRY and _REGISTRY[key].factory is not factory:
            existing = _REGISTRY[key]
            if getattr(existing.factory, "__qualname__", None) != getattr(obj, "__qualname__", None):
                raise ConfigError(f"a metric named {key!r} is already registered")
        _REGISTRY[key] = MetricEntry(key, factory, doc, requires, needs_judge, source)
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


def _load_builtins() -> None:
    global _BUILTINS_LOADED
    if not _BUILTINS_LOADED:
        _BUILTINS_LOADED = True
        importlib.import_module("clineval.metrics.builtin")


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
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.5)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    return (
        f"unknown metric {name!r}.{hint} Known metrics: {', '.join(names)}. "
        "A metric of your own can be named by its import path, 'package.module:Name' or 'file.py:name'."
    )


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


def build_metric(spec: MetricSpec | str, *, base_dir: Path | None = None) -> Metric:
    """Build the metric a spec names, with its settings; the instance carries the spec."""
    if isinstance(spec, str):
        spec = parse_metric_spec(spec)
    if ":" in spec.name:
        obj = import_object(spec.name, base_dir=base_dir, what="metric")
        instance = _instantiate(obj, spec)
    else:
        entry = get_entry(spec.name)
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
        return FunctionMetric(obj, name=spec.result_name, **spec.args)
    raise ConfigError(f"metric {spec.name!r} is neither a metric class, an instance nor a function")


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
