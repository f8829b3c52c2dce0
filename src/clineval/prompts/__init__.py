"""Judge prompts stored as versioned files in the package.

Each prompt is a YAML file ``<name>.yaml`` with ``name``, ``version``, ``system`` and
``user`` (Jinja2 templates; an undefined variable is an error, never an empty string),
an optional ``description`` and optional few-shot ``examples``::

    examples:
      - variables: {text: "..."}     # rendered with this prompt's `user` template, or
        # user: "literal user message"
        assistant: {facts: [...]}    # the answer: a mapping (sent as JSON) or a string

Examples become alternating user/assistant messages between the system message and the
final user message, so a model sees worked answers in exactly the format it must produce.
An example given with ``variables`` is rendered once, when the prompt is loaded, with its
own variables only (never the caller's): its text cannot drift from the ``user`` template.

The text is part of every judge request, so editing a prompt (instructions, template or
examples) changes the judge cache key; the version goes into each score's details so that
results say which prompt made them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
import jinja2.meta
import yaml

from clineval.errors import ConfigError
from clineval.judges.base import ChatMessage

_ENV = jinja2.Environment(
    undefined=jinja2.StrictUndefined,
    autoescape=False,
    keep_trailing_newline=False,
    trim_blocks=True,
    lstrip_blocks=True,
)

_REQUIRED_KEYS = ("name", "version", "system", "user")
_OPTIONAL_KEYS = ("description", "examples")


@dataclass(frozen=True)
class PromptExample:
    """One worked example: the user message and the assistant's answer, both as sent."""

    user: str
    assistant: str


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    version: int
    system: str
    user: str
    examples: tuple[PromptExample, ...] = field(default=())
    description: str = ""

    def __post_init__(self) -> None:
        # a list given by a caller would make the template unhashable
        object.__setattr__(self, "examples", tuple(self.examples))

    @property
    def id(self) -> str:
        return f"{self.name}@v{self.version}"

    def render(self, **variables: Any) -> list[ChatMessage]:
        """System message, the few-shot examples (user/assistant pairs), then the user message."""
        return [self.render_system(**variables), *self.render_examples(), self.render_user(**variables)]

    def render_system(self, **variables: Any) -> ChatMessage:
        """The system message alone. A system template that uses none of the variables (the
        instructions of most packaged prompts) is rendered once per template and the same
        message returned for every case; metrics whose instructions depend on settings only
        render it once and reuse it."""
        if not _variables(self.system):
            return _static_message("system", self.system)
        return ChatMessage(role="system", content=_render(self.system, variables).strip())

    def render_user(self, **variables: Any) -> ChatMessage:
        return ChatMessage(role="user", content=_render(self.user, variables).strip())

    def render_examples(self) -> list[ChatMessage]:
        """The few-shot examples as alternating user and assistant messages (built once per
        set of examples: the same message objects are returned for every case)."""
        return list(_example_messages(self.examples))


def _render(source: str, variables: dict[str, Any]) -> str:
    """``source`` rendered with ``variables``. The template's own render function runs on a
    context built from the variables and the environment's globals directly (half the time
    of ``Template.render``, which is called once every case); an error is raised again by
    ``Template.render``, with Jinja's report of where it happened."""
    template = _compiled(source)
    try:
        context = template.new_context({**_ENV.globals, **variables}, shared=True)
        return "".join(template.root_render_func(context))
    except Exception:
        return template.render(**variables)


@cache
def _variables(source: str) -> frozenset[str]:
    """The variables a template reads."""
    return frozenset(jinja2.meta.find_undeclared_variables(_ENV.parse(source)))


@cache
def _static_message(role: str, source: str) -> ChatMessage:
    return ChatMessage(role=role, content=_compiled(source).render().strip())


@cache
def _example_messages(examples: tuple[PromptExample, ...]) -> tuple[ChatMessage, ...]:
    out: list[ChatMessage] = []
    for example in examples:
        out.append(ChatMessage(role="user", content=example.user))
        out.append(ChatMessage(role="assistant", content=example.assistant))
    return tuple(out)


@cache
def _compiled(source: str) -> jinja2.Template:
    return _ENV.from_string(source)


def _example(raw: Any, index: int, user_template: str, where: str) -> PromptExample:
    label = f"{where}: examples[{index}]"
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{label}: expected a mapping with 'user' or 'variables', and 'assistant'")
    unknown = sorted(set(raw) - {"user", "variables", "assistant"})
    if unknown:
        raise ConfigError(f"{label}: unknown key(s) {', '.join(map(repr, unknown))}")
    if ("user" in raw) == ("variables" in raw):
        raise ConfigError(f"{label}: give exactly one of 'user' (literal text) and 'variables'")
    if "assistant" not in raw:
        raise ConfigError(f"{label}: missing 'assistant' (the expected answer)")
    if "variables" in raw:
        variables = raw["variables"]
        if not isinstance(variables, Mapping):
            raise ConfigError(f"{label}: 'variables' must be a mapping")
        try:
            user = _compiled(user_template).render(**variables).strip()
        except jinja2.TemplateError as exc:
            raise ConfigError(f"{label}: cannot render the user template: {exc}") from None
    elif isinstance(raw["user"], str):
        user = raw["user"].strip()
    else:
        raise ConfigError(f"{label}: 'user' must be a string")
    answer = raw["assistant"]
    if isinstance(answer, Mapping | list):
        assistant = json.dumps(answer, ensure_ascii=False)
    elif isinstance(answer, str):
        assistant = answer.strip()
    else:
        raise ConfigError(f"{label}: 'assistant' must be a mapping, a list or a string")
    if not user or not assistant:
        raise ConfigError(f"{label}: the user message and the answer must not be empty")
    return PromptExample(user=user, assistant=assistant)


def parse_prompt(data: Any, *, source: str = "prompt") -> PromptTemplate:
    """A :class:`PromptTemplate` from a parsed YAML mapping; ``source`` names it in errors."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: expected a mapping with {', '.join(_REQUIRED_KEYS)}")
    missing = [key for key in _REQUIRED_KEYS if key not in data]
    if missing:
        raise ConfigError(f"{source}: missing key(s) {', '.join(map(repr, missing))}")
    unknown = sorted(set(data) - set(_REQUIRED_KEYS) - set(_OPTIONAL_KEYS))
    if unknown:
        raise ConfigError(f"{source}: unknown key(s) {', '.join(map(repr, unknown))}")
    name, system, user = data["name"], data["system"], data["user"]
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{source}: 'name' must be a non-empty string")
    if not isinstance(system, str) or not isinstance(user, str):
        raise ConfigError(f"{source}: 'system' and 'user' must be strings (Jinja2 templates)")
    version = data["version"]
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ConfigError(f"{source}: 'version' must be a positive integer, got {version!r}")
    for part, text in (("system", system), ("user", user)):
        try:
            _compiled(text)
        except jinja2.TemplateSyntaxError as exc:
            raise ConfigError(f"{source}: '{part}' is not a valid template: {exc}") from None
    raw_examples = data.get("examples") or []
    if not isinstance(raw_examples, list):
        raise ConfigError(f"{source}: 'examples' must be a list")
    examples = tuple(_example(raw, i, user, source) for i, raw in enumerate(raw_examples))
    description = data.get("description") or ""
    if not isinstance(description, str):
        raise ConfigError(f"{source}: 'description' must be a string")
    return PromptTemplate(
        name=name.strip(),
        version=version,
        system=system,
        user=user,
        examples=examples,
        description=description.strip(),
    )


def parse_prompt_text(text: str, *, source: str = "prompt") -> PromptTemplate:
    """A :class:`PromptTemplate` from YAML text."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: not valid YAML: {exc}") from None
    return parse_prompt(data, source=source)


def load_prompt_file(path: str | Path) -> PromptTemplate:
    """A prompt from a YAML file of one's own (e.g. to override a packaged prompt)."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"prompt file not found: {file}") from None
    return parse_prompt_text(text, source=str(file))


@cache
def load_prompt(name: str) -> PromptTemplate:
    """The packaged prompt ``name`` (e.g. ``"rubric"``)."""
    resource = resources.files(__package__).joinpath(f"{name}.yaml")
    if not resource.is_file():
        raise ConfigError(f"no packaged prompt named {name!r}; available: {', '.join(available_prompts())}")
    return parse_prompt_text(resource.read_text(encoding="utf-8"), source=f"{name}.yaml")


def available_prompts() -> list[str]:
    """Names of the packaged prompts."""
    return sorted(
        entry.name.removesuffix(".yaml")
        for entry in resources.files(__package__).iterdir()
        if entry.name.endswith(".yaml")
    )
