"""The automated verifier of the LLM core's self-reflection (RadA-BenchPlat's self-reflection
strategy: the agent verifies its inputs before each tool invocation, "supported by an
automated verifier", and "a built-in sanity check ensures that the reflection process is
properly followed before proceeding with tool invocation").

The verifier is part of the agent system, not of the environment: it sees only what the
core sees (the question, the tool cards, the memory bank, the steps so far), never the
record or the tool set's gap. It checks a drafted reply *before* it is accepted:

* every reply (plan or step): the reflection was written -- a ``"reflection"`` entry in the
  plan's JSON, a non-empty ``<Reflection>`` block before the action block of a step -- and
  the reply can be read (one plan; exactly one ``<Call>``, ``<EndCall>`` or ``<NoCall>``);
* a ``<Call>``/``<EndCall>`` (a tool invocation), its inputs, by the simulator's own rules
  (:func:`~clineval.environments.radbench.simulator.check_call`): the tool exists, a tool
  for one region and modality is used on that region and modality in the memory bank,
  every compulsory input is listed and in the memory bank, every listed input is on the
  card; and the reflection names the chosen tool (it considered the tool it calls);
* a ``<NoCall>`` (no invocation): only that its category and kind can be read. Whether
  declining is right is the core's judgement, not an input check.

What happens on failure: the draft is not executed. The core is told the problems and asked
to reflect again and send a corrected reply, at most ``max_revisions`` times per reply; if
the last revision still fails, it goes to the environment as it is (the verifier reduces
execution errors, it never hides them). Every rejected draft is kept
(:class:`~clineval.environments.radbench.model.Revision`, in ``Episode.revisions``).
"""

from __future__ import annotations

import re

from clineval.environments.radbench.model import Call, EpisodeView, Malformed, NoCall, Plan, ToolCard
from clineval.environments.radbench.parsing import json_objects
from clineval.environments.radbench.simulator import check_call, normalize_variable

__all__ = ["find_card", "has_reflection", "verify_action", "verify_plan"]

_REFLECTION = re.compile(r"<\s*reflection\s*>(?P<body>.*?)<\s*/\s*reflection\s*>", re.IGNORECASE | re.DOTALL)
_PLAN_REFLECTION_KEY = re.compile(r"[\"']?(?:self[\s_-]*)?reflection[\"']?\s*:", re.IGNORECASE)


def has_reflection(reply: str) -> str | None:
    """The text of the reply's ``<Reflection>`` block, if it has a non-empty one."""
    match = _REFLECTION.search(reply)
    if match is None or not match.group("body").strip():
        return None
    return match.group("body").strip()


def find_card(name: str, tools: list[ToolCard]) -> ToolCard | None:
    """The card a call names, found as the simulator finds it (exact, then ignoring case)."""
    exact = next((t for t in tools if t.name == name.strip()), None)
    return exact or next((t for t in tools if t.name.casefold() == name.strip().casefold()), None)


def _plan_reflection(reply: str) -> bool:
    for obj in json_objects(reply):
        for key, value in obj.items():
            if "reflection" in str(key).lower() and str(value).strip():
                return True
    return bool(_PLAN_REFLECTION_KEY.search(reply))


def verify_plan(reply: str, plan: Plan | Malformed) -> list[str]:
    """Problems of a drafted plan (empty: accepted)."""
    problems = []
    if isinstance(plan, Malformed):
        problems.append(f"the plan cannot be read: {plan.reason}")
    if not _plan_reflection(reply):
        problems.append('the plan has no "reflection" entry: check the chain before you give it')
    return problems


def verify_action(reply: str, action: Call | NoCall | Malformed, view: EpisodeView) -> list[str]:
    """Problems of a drafted step (empty: accepted); see the module docs for what is checked."""
    problems = []
    reflection = has_reflection(reply)
    if reflection is None:
        problems.append("no <Reflection> block before the action: reflect on the step first")
    if isinstance(action, Malformed):
        problems.append(f"the action cannot be read: {action.reason}")
        return problems
    if isinstance(action, NoCall):
        if action.category is None:
            problems.append(
                f"the <NoCall> category {action.category_text!r} is not one of the ten categories"
            )
        if action.ability is None:
            problems.append(
                f"the <NoCall> ability {action.ability_text!r} is not CategoryMissing, "
                "SpecificToolMissing or InsufficientCapability"
            )
        return problems
    card = find_card(action.tool, view.tools)
    if card is None:
        problems.append(f"there is no tool {action.tool!r} among the available tools")
        return problems
    inputs = list(dict.fromkeys(normalize_variable(v) for v in action.inputs))
    found = check_call(card, inputs, view.memory)
    if found is not None:
        problems.append(found[1])
    if reflection is not None and not re.search(rf"\b{re.escape(card.name)}\b", reflection, re.IGNORECASE):
        problems.append(f"the reflection does not consider {card.name}, the tool the step calls")
    return problems
