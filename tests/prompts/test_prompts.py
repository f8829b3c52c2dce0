"""The packaged prompt files: loading, rendering, few-shot examples and their schemas."""

from __future__ import annotations

import dataclasses
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
import pytest
import yaml
from pydantic import BaseModel

from clineval.errors import ConfigError
from clineval.judges.llm_primitives import (
    PROMPT_NAMES,
    FactExtractionAnswer,
    NumberedAnswer,
    StatementsAnswer,
    schema_for,
)
from clineval.judges.openai_compat import OpenAIBackend
from clineval.judges.primitives import DEFAULT_CATEGORIES
from clineval.judges.structured import StructuredJudge
from clineval.prompts import (
    PromptExample,
    PromptTemplate,
    available_prompts,
    load_prompt,
    load_prompt_file,
    parse_prompt,
    parse_prompt_text,
)

#: Variables of each primitive prompt, as LLMPrimitives passes them.
SAMPLE_VARIABLES: dict[str, dict[str, Any]] = {
    "fact_extraction": {"categories": list(DEFAULT_CATEGORIES), "text": "Ms. Moreau, 44, has asthma."},
    "entailment": {"facts": ["Ms. Moreau has asthma.", "Ms. Moreau is 45."], "text": "Asthma; age 44."},
    "sentence_types": {"sentences": ["Thanks.", "Use the inhaler twice daily."], "question": "How often?"},
    "refusal": {"question": "Can I double my inhaler dose?", "answer": "Please ask your GP."},
    "should_decline": {
        "question": "Can I double my inhaler dose?",
        "contexts": ["Use two puffs twice daily."],
    },
    "context_relevance": {
        "question": "How often?",
        "contexts": ["Use two puffs twice daily.", "Rinse mouth."],
    },
    "relevant_sentences": {"question": "How often?", "sentences": ["Two puffs twice daily.", "Parking."]},
    "statements": {"question": "Can I swim?", "answer": "Yes, after two weeks."},
    "grounding": {
        "question": "Can I swim?",
        "text": "Do not swim for two weeks.",
        "sentences": ["Yes, after two weeks.", "Avoid saunas."],
    },
    "question_generation": {"answer": "Yes, you can swim after two weeks.", "n": 3},
}
#: Prompts whose text changed since version 1 (every change bumps the version).
VERSIONS: dict[str, int] = {"statements": 2}


def raw_prompt(name: str) -> dict[str, Any]:
    text = resources.files("clineval.prompts").joinpath(f"{name}.yaml").read_text(encoding="utf-8")
    data: dict[str, Any] = yaml.safe_load(text)
    return data


def squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def test_every_primitive_has_a_packaged_prompt() -> None:
    assert set(PROMPT_NAMES) | {"rubric"} <= set(available_prompts())
    assert set(SAMPLE_VARIABLES) == set(PROMPT_NAMES)


@pytest.mark.parametrize("name", PROMPT_NAMES)
def test_prompt_loads_and_renders_with_its_variables(name: str) -> None:
    prompt = load_prompt(name)
    version = VERSIONS.get(name, 1)
    assert prompt.name == name and prompt.version == version and prompt.id == f"{name}@v{version}"
    assert prompt.description
    assert len(prompt.examples) >= 1
    messages = prompt.render(**SAMPLE_VARIABLES[name])
    roles = [m.role for m in messages]
    assert roles == ["system", *["user", "assistant"] * len(prompt.examples), "user"]
    assert all(m.content and m.content == m.content.strip() for m in messages)
    assert "{{" not in messages[0].content and "{%" not in messages[-1].content
    for value in SAMPLE_VARIABLES[name].values():
        for item in value if isinstance(value, list) else [value]:
            if name != "fact_extraction" or item != "other":  # categories are in the system message
                assert str(item) in messages[-1].content or str(item) in messages[0].content


@pytest.mark.parametrize("name", PROMPT_NAMES)
def test_every_variable_is_required(name: str) -> None:
    prompt = load_prompt(name)
    for missing in SAMPLE_VARIABLES[name]:
        if name == "sentence_types" and missing == "question":
            continue  # optional: `question=None` leaves the section out
        partial = {k: v for k, v in SAMPLE_VARIABLES[name].items() if k != missing}
        with pytest.raises(jinja2.UndefinedError):
            prompt.render(**partial)


@pytest.mark.parametrize("name", PROMPT_NAMES)
def test_examples_validate_against_their_schema(name: str) -> None:
    raw_examples = raw_prompt(name)["examples"]
    prompt = load_prompt(name)
    assert len(raw_examples) == len(prompt.examples)
    for raw, example in zip(raw_examples, prompt.examples, strict=True):
        variables = raw["variables"]
        # the example's user turn is the prompt's own user template with the example's variables
        assert example.user == prompt.render_user(**variables).content
        assert json.loads(example.assistant) == raw["assistant"]
        schema: type[BaseModel] = schema_for(name, variables)
        parsed = schema.model_validate_json(example.assistant)
        if isinstance(parsed, NumberedAnswer):
            items = getattr(parsed, parsed.items_field)
            ids = [item["id"] for item in raw["assistant"][parsed.items_field]]
            assert ids == list(range(1, len(items) + 1)), "examples list their ids in order"


def test_fact_examples_use_default_categories_and_faithful_wording() -> None:
    schema = schema_for("fact_extraction", {"categories": list(DEFAULT_CATEGORIES)})
    for example in load_prompt("fact_extraction").examples:
        data = json.loads(example.assistant)
        assert {f["category"] for f in data["facts"]} <= set(DEFAULT_CATEGORIES)  # none mapped to other
        parsed = schema.model_validate(data)
        assert isinstance(parsed, FactExtractionAnswer) and len(parsed.facts) == len(data["facts"])
    assert any(not json.loads(e.assistant)["facts"] for e in load_prompt("fact_extraction").examples)


def test_entailment_examples_quote_evidence_verbatim_and_cover_every_label() -> None:
    labels, reasons = set(), set()
    for raw in raw_prompt("entailment")["examples"]:
        text = squash(raw["variables"]["text"])
        for verdict in raw["assistant"]["verdicts"]:
            assert squash(verdict["evidence"]) in text
            assert (verdict["reason"] is None) == (verdict["label"] == "entailed")
            assert verdict["explanation"]
            labels.add(verdict["label"])
            reasons.add(verdict["reason"])
    assert labels == {"entailed", "partial", "not_entailed"}
    assert {"missing", "incorrect", "ambiguous"} <= reasons


def test_grounding_examples_quote_evidence_and_read_replies_with_the_question() -> None:
    labels = set()
    for raw in raw_prompt("grounding")["examples"]:
        text = squash(raw["variables"]["text"])
        assert raw["variables"]["question"]
        for verdict in raw["assistant"]["verdicts"]:
            assert squash(verdict["evidence"]) in text
            assert (verdict["reason"] is None) == (verdict["label"] == "entailed")
            labels.add(verdict["label"])
        # every example opens with a bare yes/no reply that the passages support
        first = raw["variables"]["sentences"][0]
        assert first.split(",")[0] in ("Yes", "No")
        assert raw["assistant"]["verdicts"][0]["label"] == "entailed"
    assert labels == {"entailed", "partial", "not_entailed"}
    user = load_prompt("grounding").render_user(question=None, text="t", sentences=["s"]).content
    assert user == "## Retrieved passages\nt\n\n## Sentences of the answer to check (1)\n[1] s"


def test_statements_turn_every_sentence_into_statements() -> None:
    for raw in raw_prompt("statements")["examples"]:
        assert raw["assistant"]["statements"], "only a blank answer gives no statement"
    conversational = [
        s for raw in raw_prompt("statements")["examples"] for s in raw["assistant"]["statements"]
    ]
    assert any(s.startswith("The assistant thanks") for s in conversational)
    assert any(s.startswith("The assistant asks") for s in conversational)


def test_question_generation_examples_write_n_questions() -> None:
    noncommittal = set()
    for raw in raw_prompt("question_generation")["examples"]:
        n = raw["variables"]["n"]
        assert len(raw["assistant"]["questions"]) == n
        assert all(q.endswith("?") for q in raw["assistant"]["questions"])
        noncommittal.add(raw["assistant"]["noncommittal"])
    assert noncommittal == {True, False}


def test_decision_examples_show_both_answers() -> None:
    for name, field in [("refusal", "refused"), ("context_relevance", "relevant")]:
        values = {raw["assistant"][field] for raw in raw_prompt(name)["examples"]}
        assert values == {True, False}
    reasons = {raw["assistant"]["reason"] for raw in raw_prompt("should_decline")["examples"]}
    assert reasons == {"none", "insufficient_context", "harmful", "out_of_scope"}
    kinds = {
        i["kind"] for raw in raw_prompt("sentence_types")["examples"] for i in raw["assistant"]["sentences"]
    }
    assert kinds == {"acknowledgement", "question", "informative"}


def test_should_decline_renders_both_modes() -> None:
    prompt = load_prompt("should_decline")
    without = prompt.render_user(question="Can I drive?", contexts=None).content
    assert without.endswith("(No retrieved passages: judge the request itself.)")
    with_passages = prompt.render_user(question="Can I drive?", contexts=["a", "b"]).content
    assert "## Retrieved passages (2)\n### Passage 1\na\n\n### Passage 2\nb" in with_passages
    assert "No retrieved passages" not in with_passages


def test_numbered_items_are_one_line_each() -> None:
    user = load_prompt("entailment").render_user(facts=["one\nfact", "two"], text="t").content
    assert user.endswith("## Facts to check (2)\n[1] one fact\n[2] two")
    no_question = load_prompt("sentence_types").render_user(sentences=["s"], question=None).content
    assert no_question == "## Sentences of the answer (1)\n[1] s"


# --- the loader ------------------------------------------------------------------------------


def test_rubric_prompt_is_unchanged_in_behaviour() -> None:
    rubric = load_prompt("rubric")
    assert rubric.id == "rubric@v1" and rubric.examples == ()
    messages = rubric.render(
        instruction=None, criteria={"safety": "safe"}, scale=[(1, "bad")], examples=[], sections=[("Q", "x")]
    )
    assert [m.role for m in messages] == ["system", "user"]
    assert messages[1].content == "## Q\nx"
    listed = PromptTemplate("p", 1, "s", "u", [PromptExample(user="x", assistant="{}")])  # type: ignore[arg-type]
    assert listed.examples == (PromptExample(user="x", assistant="{}"),) and hash(listed)
    # positional construction, as before examples existed
    assert PromptTemplate("p", 1, "sys", "usr").render() == PromptTemplate("p", 1, "sys", "usr", ()).render()


def test_literal_and_rendered_examples(tmp_path: Path) -> None:
    file = tmp_path / "custom.yaml"
    file.write_text(
        """
name: custom
version: 2
system: Rate {{ what }}.
user: "Text: {{ text }}"
examples:
  - user: "Text: hand-written example"
    assistant: '{"ok": true}'
  - variables: {text: rendered example}
    assistant: {ok: false, note: "é"}
""",
        encoding="utf-8",
    )
    prompt = load_prompt_file(file)
    assert prompt.id == "custom@v2"
    assert prompt.examples == (
        PromptExample(user="Text: hand-written example", assistant='{"ok": true}'),
        PromptExample(user="Text: rendered example", assistant='{"ok": false, "note": "é"}'),
    )
    messages = prompt.render(what="notes", text="case")
    assert [(m.role, m.content) for m in messages] == [
        ("system", "Rate notes."),
        ("user", "Text: hand-written example"),
        ("assistant", '{"ok": true}'),
        ("user", "Text: rendered example"),
        ("assistant", '{"ok": false, "note": "é"}'),
        ("user", "Text: case"),
    ]


BASE = {"name": "p", "version": 1, "system": "s", "user": "u {{ x }}"}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("just text", "expected a mapping"),
        ({k: v for k, v in BASE.items() if k != "user"}, "missing key(s) 'user'"),
        ({**BASE, "temperature": 0}, "unknown key(s) 'temperature'"),
        ({**BASE, "version": "1"}, "'version' must be a positive integer"),
        ({**BASE, "version": 0}, "'version' must be a positive integer"),
        ({**BASE, "name": ""}, "'name' must be a non-empty string"),
        ({**BASE, "system": "{% if %}"}, "'system' is not a valid template"),
        ({**BASE, "examples": {"user": "u"}}, "'examples' must be a list"),
        ({**BASE, "examples": ["u"]}, "examples[0]: expected a mapping"),
        ({**BASE, "examples": [{"user": "u", "variables": {"x": 1}, "assistant": "{}"}]}, "exactly one of"),
        ({**BASE, "examples": [{"assistant": "{}"}]}, "exactly one of"),
        ({**BASE, "examples": [{"user": "u"}]}, "missing 'assistant'"),
        ({**BASE, "examples": [{"user": "u", "assistant": "{}", "note": 1}]}, "unknown key(s) 'note'"),
        ({**BASE, "examples": [{"variables": {}, "assistant": "{}"}]}, "cannot render the user template"),
        ({**BASE, "examples": [{"user": "u", "assistant": 3}]}, "'assistant' must be"),
        ({**BASE, "examples": [{"user": " ", "assistant": "{}"}]}, "must not be empty"),
    ],
)
def test_invalid_prompts_are_refused_with_the_reason(data: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        parse_prompt(data, source="custom.yaml")


def test_unknown_and_missing_prompts() -> None:
    with pytest.raises(ConfigError, match="no packaged prompt named 'nope'"):
        load_prompt("nope")
    with pytest.raises(ConfigError, match="prompt file not found"):
        load_prompt_file("/nonexistent/prompt.yaml")
    with pytest.raises(ConfigError, match="not valid YAML"):
        parse_prompt_text("name: [unclosed", source="x.yaml")


def test_prompt_text_is_part_of_the_cache_key() -> None:
    def key(prompt: PromptTemplate) -> str:
        messages = prompt.render(**SAMPLE_VARIABLES["statements"])
        judge = StructuredJudge(OpenAIBackend(model="m", base_url="http://127.0.0.1:9/v1"))
        return judge.key_for(messages, StatementsAnswer)

    prompt = load_prompt("statements")
    assert key(prompt) == key(load_prompt("statements"))
    changed = [
        dataclasses.replace(prompt, system=prompt.system + "Be brief."),
        dataclasses.replace(prompt, user=prompt.user.replace("## The assistant's answer", "## Answer")),
        dataclasses.replace(
            prompt,
            examples=(PromptExample(user="x", assistant='{"statements": []}'), *prompt.examples[1:]),
        ),
        dataclasses.replace(prompt, examples=()),
    ]
    keys = {key(p) for p in changed}
    assert key(prompt) not in keys and len(keys) == len(changed)
    # the version alone is metadata: it names the prompt in score details, the text is the key;
    # rendered messages are stripped, so whitespace at the ends of a template changes nothing
    assert key(dataclasses.replace(prompt, version=9)) == key(prompt)
    assert key(dataclasses.replace(prompt, system=prompt.system + "\n\n")) == key(prompt)
