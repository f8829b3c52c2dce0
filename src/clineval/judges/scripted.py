"""A scripted judge: fixed answers chosen by regular expressions over the prompt.

For users' own tests of metrics and pipelines, with no network. Each rule has a pattern
(searched in the text of all messages) and an answer: a JSON object, a string (sent as
is, so a malformed answer can be scripted), a callable that receives the messages, or a
list of these given out in turn (the last one repeats). A field written ``{each: ITEM}``
becomes one ITEM per item the question asks for, numbered in ``id`` (so one rule answers a
question about any number of facts). The answer goes through the same validation and
re-ask path as a real judge's.

>>> judge = ScriptedJudge({"allergy": {"rating": 1, "explanation": "misses the allergy"}},
...                       default={"rating": 5, "explanation": "fine"})
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict

from clineval.errors import ConfigError
from clineval.judges.base import JudgeError
from clineval.judges.structured import Completion, ResponseMode, StructuredJudge

AnswerFn = Callable[[list[dict[str, str]]], str | Mapping[str, Any]]
Answer = str | Mapping[str, Any] | AnswerFn


class ScriptRule(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    pattern: str
    answer: Any


class ScriptedBackend:
    """Backend that answers from rules; records every request in ``requests``."""

    def __init__(self, rules: Sequence[ScriptRule], default: Any = None):
        self.rules = list(rules)
        self._compiled = []
        for rule in self.rules:
            try:
                self._compiled.append(re.compile(rule.pattern, re.IGNORECASE | re.DOTALL))
            except re.error as exc:
                raise ConfigError(f"scripted judge: bad pattern {rule.pattern!r}: {exc}") from None
        self.default = default
        self._turn: dict[int, int] = {}
        self.requests: list[list[dict[str, str]]] = []

    @property
    def name(self) -> str:
        return "scripted"

    def identity(self) -> dict[str, Any]:
        return {"provider": "scripted", "rules": [r.pattern for r in self.rules]}

    def _pick(self, index: int, answer: Any) -> Any:
        if isinstance(answer, list):
            if not answer:
                raise JudgeError("scripted judge: a rule has an empty list of answers")
            turn = self._turn.get(index, 0)
            self._turn[index] = turn + 1
            return answer[min(turn, len(answer) - 1)]
        return answer

    async def chat(
        self,
        messages: list[dict[str, str]],
        *,
        schema_name: str,
        json_schema: dict[str, Any],
        mode: ResponseMode,
        max_tokens: int | None,
    ) -> Completion:
        self.requests.append(messages)
        text = "\n".join(m["content"] for m in messages)
        answer: Any = None
        for index, (pattern, rule) in enumerate(zip(self._compiled, self.rules, strict=True)):
            if pattern.search(text):
                answer = self._pick(index, rule.answer)
                break
        else:
            if self.default is None:
                raise JudgeError("scripted judge: no rule matches this prompt and there is no default")
            answer = self._pick(-1, self.default)
        if callable(answer):
            answer = answer(messages)
        if isinstance(answer, Mapping):
            answer = expand_each(answer, json_schema)
        content = answer if isinstance(answer, str) else json.dumps(answer)
        return Completion(
            text=content, prompt_tokens=len(text) // 4, completion_tokens=len(content) // 4, model="scripted"
        )

    async def aclose(self) -> None:
        return None


def _list_length(schema: Mapping[str, Any]) -> int | None:
    """The exact number of items a list field asks for (``minItems == maxItems``), if any."""
    low, high = schema.get("minItems"), schema.get("maxItems")
    return low if isinstance(low, int) and low == high else None


def expand_each(answer: Mapping[str, Any], json_schema: Mapping[str, Any]) -> dict[str, Any]:
    """``{"verdicts": {"each": {...}}}``: one copy of the item for each of the items the
    question asks for, numbered from 1 in ``id``, so that one rule answers a question about
    any number of facts or sentences (``{"each": {"label": "entailed"}}`` says every fact is
    entailed). A field without ``each`` is kept as written."""
    properties = json_schema.get("properties")
    out = dict(answer)
    for key, value in answer.items():
        if not (isinstance(value, Mapping) and set(value) == {"each"}):
            continue
        field = properties.get(key) if isinstance(properties, Mapping) else None
        n = _list_length(field) if isinstance(field, Mapping) else None
        if n is None:
            raise JudgeError(
                f"scripted judge: '{key}: {{each: ...}}' answers a question about a list of a set length, "
                f"and this question's '{key}' is not one"
            )
        item = value["each"]
        out[key] = [{"id": i, **item} if isinstance(item, Mapping) else item for i in range(1, n + 1)]
    return out


def _rules(rules: Mapping[str, Any] | Sequence[ScriptRule | Mapping[str, Any]] | None) -> list[ScriptRule]:
    if rules is None:
        return []
    if isinstance(rules, Mapping):
        return [ScriptRule(pattern=p, answer=a) for p, a in rules.items()]
    return [r if isinstance(r, ScriptRule) else ScriptRule.model_validate(r) for r in rules]


class ScriptedJudge(StructuredJudge):
    """A judge with scripted answers (see the module docstring)."""

    def __init__(
        self,
        rules: Mapping[str, Any] | Sequence[ScriptRule | Mapping[str, Any]] | None = None,
        *,
        default: Any = None,
        reask: bool = True,
    ):
        self.scripted = ScriptedBackend(_rules(rules), default)
        super().__init__(self.scripted, cache=None, mode="text", reask=reask)

    @property
    def requests(self) -> list[list[dict[str, str]]]:
        """Every request the judge received, in order (re-asks included)."""
        return self.scripted.requests

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedJudge:
        """Load ``{rules: [{pattern, answer}], default: ...}`` from a YAML or JSON file."""
        file = Path(path)
        try:
            data = yaml.safe_load(file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"scripted judge file not found: {file}") from None
        except yaml.YAMLError as exc:
            raise ConfigError(f"{file}: not valid YAML: {exc}") from None
        if not isinstance(data, dict) or not ("rules" in data or "default" in data):
            raise ConfigError(f"{file}: expected a mapping with 'rules' and/or 'default'")
        try:
            return cls(data.get("rules"), default=data.get("default"))
        except ValueError as exc:
            raise ConfigError(f"{file}: {exc}") from None
