"""Judge prompts stored as versioned files in the package.

Each prompt is a YAML file ``<name>.yaml`` with ``name``, ``version``, ``system`` and
``user`` (Jinja2 templates; an undefined variable is an error, never an empty string).
The text is part of every judge request, so editing a prompt changes the judge cache
key; the version goes into each score's details so that results say which prompt made
them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import jinja2
import yaml

from clineval.judges.base import ChatMessage

_ENV = jinja2.Environment(
    undefined=jinja2.StrictUndefined,
    autoescape=False,
    keep_trailing_newline=False,
    trim_blocks=True,
    lstrip_blocks=True,
)


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    version: int
    system: str
    user: str

    @property
    def id(self) -> str:
        return f"{self.name}@v{self.version}"

    def render(self, **variables: Any) -> list[ChatMessage]:
        return [self.render_system(**variables), self.render_user(**variables)]

    def render_system(self, **variables: Any) -> ChatMessage:
        """The system message alone: metrics whose instructions do not depend on the case
        render it once and reuse it."""
        return ChatMessage(role="system", content=_compiled(self.system).render(**variables).strip())

    def render_user(self, **variables: Any) -> ChatMessage:
        return ChatMessage(role="user", content=_compiled(self.user).render(**variables).strip())


@cache
def _compiled(source: str) -> jinja2.Template:
    return _ENV.from_string(source)


@cache
def load_prompt(name: str) -> PromptTemplate:
    """The packaged prompt ``name`` (e.g. ``"rubric"``)."""
    text = resources.files(__package__).joinpath(f"{name}.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    return PromptTemplate(
        name=data["name"], version=int(data["version"]), system=data["system"], user=data["user"]
    )
