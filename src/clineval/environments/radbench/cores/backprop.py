"""Prompt back-propagation: refine the LLM core's instructions from the episodes it failed.

RadA-BenchPlat refines its prompts over three rounds with an LLM's feedback on failed
episodes of the "Baseline" and "Insufficient" conditions (human-in-the-loop), then applies
the refined prompt to the whole benchmark. Here one round (:func:`backpropagate`) shows an
*optimiser* model (:data:`~clineval.environments.radbench.prompts.BACKPROP`, versioned)
the current guidance and the failed episodes -- the question, the plan, every step with its
error, how the episode ended, the correct chain, whether the task was solvable and what
went wrong (the "loss") -- and it writes revised guidance: general numbered rules.
:func:`clineval.environments.radbench.runner.optimise` runs rounds of episodes and
back-propagation (three by default).

The result is a :class:`Guidance` saved as YAML (:func:`save_guidance`): a person reviews
and edits the text (the human in the loop) and the LLM core uses it with
``guidance=load_guidance(path)`` (``clineval radbench run --backprop FILE``), as a
"Lessons from earlier episodes" section of its system prompts. Its version is a hash of
the text, so an edited file is a new version; the run records it with the optimiser
prompt's version among its prompt versions.

To keep the benchmark honest, learn on other records than you evaluate on (another
``--seed`` or other records): the guidance is asked to stay general, but it is learned from
the failures it is shown.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from clineval.environments.radbench import prompts as P
from clineval.environments.radbench.model import Episode
from clineval.environments.radbench.vocab import CATEGORY_NAMES
from clineval.errors import ConfigError
from clineval.judges.base import JudgeError

if TYPE_CHECKING:
    from clineval.judges.structured import ChatBackend

__all__ = [
    "BackpropError",
    "Guidance",
    "RoundReport",
    "backpropagate",
    "failed",
    "failure_reasons",
    "load_guidance",
    "render_failure",
    "save_guidance",
]


class BackpropError(RuntimeError):
    """The optimiser could not be asked or gave no guidance."""


class RoundReport(BaseModel):
    """One round of :func:`~clineval.environments.radbench.runner.optimise`: the episodes run
    with the guidance of that round."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    round: int
    episodes: int
    failures: int
    completion: float
    """Mean task completion of the round's solvable episodes, declines counted for unsolvable ones
    (1 - share of failed episodes)."""


def _version(text: str) -> str:
    return "bp-" + hashlib.sha256(text.strip().encode("utf-8")).hexdigest()[:12]


class Guidance(BaseModel):
    """Learned guidance for the LLM core; ``version`` is always the hash of ``text``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str = Field(min_length=1)
    version: str = ""
    """``bp-`` and 12 hex digits of the text's SHA-256 (recomputed on load: edit the text freely)."""
    optimiser_prompt: str = P.BACKPROP.version
    """The version of the optimiser prompt that wrote it."""
    rounds: list[RoundReport] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _hash(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("text"), str):
            data = {**data, "version": _version(data["text"])}
        return data


def load_guidance(path: str | Path) -> Guidance:
    """Guidance from a YAML file written by :func:`save_guidance` (and perhaps edited)."""
    file = Path(path)
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"guidance file not found: {file}") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"{file}: cannot read the guidance: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{file}: expected a mapping with 'text' (the guidance)")
    try:
        return Guidance.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error.get("loc", ())) or "(top level)"
        raise ConfigError(f"{file}: field '{field}': {error.get('msg')}") from None


def save_guidance(path: str | Path, guidance: Guidance) -> None:
    """Write guidance as YAML (the text as a block, for a person to review and edit)."""

    class _Dumper(yaml.SafeDumper):
        pass

    def _text(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    _Dumper.add_representer(str, _text)
    data = guidance.model_dump(mode="json")
    text = (
        "# Prompt back-propagation guidance for the radiology benchmark's LLM core.\n"
        "# Review and edit 'text' freely; the version is recomputed from it when loaded.\n"
        + yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    )
    Path(path).write_text(text, encoding="utf-8")


# --------------------------------------------------------------------------- the loss


def failure_reasons(episode: Episode) -> list[str]:
    """What went wrong in an episode, in words (empty: it did not fail)."""
    from clineval.environments.radbench.metrics import episode_metrics

    values = episode_metrics(episode)
    reasons = []
    if episode.solvable:
        if values.get("completion") == 1.0:
            return []
        if episode.finished == "nocall":
            reasons.append("declined although the tools could solve the task")
        failed_steps = [s for s in episode.steps if not s.ok]
        if failed_steps:
            first = failed_steps[0]
            reasons.append(
                f"step {first.index + 1} failed [{first.error_kind}]: {first.error or 'no reason given'}"
            )
        if episode.finished == "step_limit":
            reasons.append("used every step without finishing with <EndCall>")
        if episode.finished == "no_plan":
            reasons.append(f"the plan could not be read: {episode.error}")
        if values.get("thr") == 0.0 and episode.finished == "endcall":
            reasons.append("finished with a tool whose output does not answer the question")
        if not reasons:
            reasons.append("did not complete the task (a needed category was not run)")
        return reasons
    if episode.gap is None:  # pragma: no cover - an unsolvable set always records its gap
        return []
    if values.get("ugr") == 1.0:
        return []
    gap = f"{episode.gap.kind} of the {CATEGORY_NAMES[episode.gap.category]}"
    if values.get("uar") != 1.0:
        reasons.append(f"tried to solve an unsolvable task instead of declining (the gap: {gap})")
    else:
        reasons.append(f"declined, but the <NoCall> did not state the gap ({gap})")
    return reasons


def failed(episode: Episode) -> bool:
    return bool(failure_reasons(episode))


def render_failure(episode: Episode) -> str:
    """One failed episode as the optimiser sees it."""
    chain = " -> ".join(CATEGORY_NAMES[c] for c in episode.gt_chain)
    lines = [
        f"### Episode ({episode.condition}, {'solvable' if episode.solvable else 'unsolvable'})",
        f"Question: {episode.question}",
        f"Plan: {P.render_plan(episode.plan).replace(chr(10), '; ')}",
        "Steps:",
    ]
    for step in episode.steps:
        if step.action == "nocall" and step.nocall is not None:
            n = step.nocall
            lines.append(
                f"- {step.index + 1}. <NoCall> {n.category_text or '?'} / {n.anatomy} / {n.modality} / "
                f"{n.ability_text or '?'}"
            )
        elif step.action == "malformed":
            lines.append(f"- {step.index + 1}. unreadable reply: {step.error}")
        else:
            category = CATEGORY_NAMES[step.category] if step.category is not None else "?"
            outcome = "ok" if step.ok else f"failed [{step.error_kind}]: {step.error}"
            lines.append(
                f"- {step.index + 1}. <{'EndCall' if step.action == 'endcall' else 'Call'}> {step.tool} "
                f"({category}) inputs {', '.join(step.inputs) or 'none'}: {outcome}"
            )
    if not episode.steps:
        lines.append("- (none)")
    lines.append(f"Ended: {episode.finished}")
    lines.append(
        f"Correct chain: {chain}"
        if episode.solvable
        else "Correct behaviour: decline with a <NoCall> stating the gap"
    )
    lines.append("What went wrong: " + "; ".join(failure_reasons(episode)))
    return "\n".join(lines)


def _request(episodes: Sequence[Episode], current: Guidance | None) -> str:
    parts = [
        "## Current guidance\n" + (current.text.strip() if current is not None else "(none yet)"),
        f"## Failed episodes ({len(episodes)})",
        *(render_failure(e) for e in episodes),
        "Write the revised guidance inside <Guidance> and </Guidance>.",
    ]
    return "\n\n".join(parts)


_GUIDANCE = re.compile(r"<\s*guidance\s*>(.*?)(?:<\s*/\s*guidance\s*>|$)", re.IGNORECASE | re.DOTALL)


async def backpropagate(
    backend: ChatBackend,
    episodes: Sequence[Episode],
    current: Guidance | None = None,
    *,
    max_failures: int = 12,
    max_tokens: int | None = None,
    report: RoundReport | None = None,
) -> Guidance | None:
    """One round: the optimiser's revised guidance from the failed episodes (at most
    ``max_failures``, the first ones); ``current`` unchanged (None if none) when nothing failed."""
    failures = [e for e in episodes if failed(e)][:max_failures]
    history = [*(current.rounds if current is not None else []), *([report] if report else [])]
    if not failures:
        return current.model_copy(update={"rounds": history}) if current is not None else None
    messages = [
        {"role": "system", "content": P.BACKPROP.text},
        {"role": "user", "content": _request(failures, current)},
    ]
    try:
        completion = await backend.chat(
            messages, schema_name="radbench_backprop", json_schema={}, mode="text", max_tokens=max_tokens
        )
    except JudgeError as exc:
        raise BackpropError(f"the optimiser request failed: {exc.reason}") from exc
    match = _GUIDANCE.search(completion.text)
    text = (match.group(1) if match else completion.text).strip()
    if not text:
        raise BackpropError("the optimiser gave no guidance (an empty <Guidance> block)")
    return Guidance(text=text, rounds=history)
