"""The LLM agent core: a chat model behind an OpenAI-compatible endpoint or Azure OpenAI
plans, calls tools one at a time and concludes (RadA-BenchPlat's agent workflow).

Two forms (``mode``):

``single``
    one growing conversation: the system prompt; the question, the patient information
    and the tool cards with the plan request; then per step the last step's result
    (including the simulator's error message when a call failed), any newly available
    tool and the current memory bank; finally the conclusion request.
``multi``
    three conversations (RadA-BenchPlat's multi-agent collaboration): the *planner* gets the
    question and the patient and returns the plan; the *executor* gets the plan and the
    tool cards and, per step, the last result and the memory bank; the *concluder* gets
    the question, the plan, the steps taken and the final memory bank, and answers.

``self_reflection`` and ``few_shot`` add the optional prompt sections of
:mod:`clineval.environments.radbench.prompts`. With ``self_reflection`` an automated
verifier (:mod:`.verifier`) checks each drafted plan and step before it is accepted and
asks for a corrected reply, at most ``max_revisions`` times (0: the reflection prompts
only, no verifier); rejected drafts are kept in :attr:`LLMCore.revisions`.
``build_request`` asks the core to add a natural-language ``<Request>`` for a missing tool
to its NoCall (automated tool building from the request). ``guidance`` is learned prompt
back-propagation guidance (:mod:`.backprop`), added to the system prompts.

Replies are read by :mod:`clineval.environments.radbench.parsing`: an unreadable reply
comes back as :class:`~clineval.environments.radbench.model.Malformed` (the episode
records an I/O error), never as an exception and never re-asked. A request that still
fails after the backend's own bounded retries raises :class:`LLMCoreError` (the episode
loop turns it into ``core_error``); a refused key or unknown model raises
:class:`~clineval.errors.JudgeConfigurationError`, which stops the run.

A core instance runs one episode (the benchmark runner makes one per episode); calling
:meth:`LLMCore.plan` again starts over.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from clineval.environments.radbench import prompts as P
from clineval.environments.radbench.cores.backprop import Guidance
from clineval.environments.radbench.cores.verifier import verify_action, verify_plan
from clineval.environments.radbench.model import (
    Call,
    EpisodeView,
    Malformed,
    NoCall,
    Plan,
    Revision,
    ToolCard,
)
from clineval.environments.radbench.parsing import parse_action, parse_plan
from clineval.errors import ConfigError
from clineval.judges.base import JudgeError, Usage
from clineval.judges.config import JudgeConfig, build_judge
from clineval.judges.structured import ChatBackend, StructuredJudge

__all__ = ["LLMCore", "LLMCoreConfig", "LLMCoreError"]

Role = Literal["agent", "planner", "executor", "concluder"]


class LLMCoreError(RuntimeError):
    """The endpoint could not answer (after its retries): the episode ends as ``core_error``."""


class LLMCoreConfig(BaseModel):
    """Settings of the LLM core (stored with the run; secrets never are).

    ``endpoint`` is a judge spec or a full judge config for a chat endpoint:
    ``"openai:MODEL"``, ``"openai:MODEL@http://host:port/v1"``, ``"azure"``,
    ``"azure:DEPLOYMENT"`` or ``{"provider": "openai", "model": ..., "base_url": ...,
    "max_attempts": ..., "timeout_s": ...}`` (see :mod:`clineval.judges.config`).
    """

    model_config = ConfigDict(extra="forbid")

    endpoint: JudgeConfig = Field(validation_alias=AliasChoices("endpoint", "judge", "llm"))
    mode: Literal["single", "multi"] = "single"
    self_reflection: bool = False
    few_shot: bool = False
    temperature: float | None = Field(default=None, ge=0, le=2)
    """Sampling temperature; None keeps the endpoint's (0 by default)."""
    max_tokens: int | None = Field(default=None, gt=0)
    """Reply length cap; None keeps the endpoint's (none by default)."""
    max_revisions: int = Field(default=2, ge=0, le=5)
    """With ``self_reflection``: how often the verifier may send a reply back for revision
    (0: no verifier)."""
    build_request: bool = False
    """Ask for a natural-language ``<Request>`` in a NoCall (automated tool building)."""
    guidance: Guidance | None = None
    """Learned prompt back-propagation guidance (text and version) added to the prompts."""
    name: str | None = None
    """The core's name in episodes; default
    ``llm:<endpoint>:<mode>[+reflection][+few-shot][+backprop]``."""

    @field_validator("endpoint")
    @classmethod
    def _chat_endpoint(cls, value: JudgeConfig) -> JudgeConfig:
        if value.provider not in ("openai", "azure"):
            raise ValueError(
                f"the LLM core needs a chat endpoint ('openai:MODEL[@BASE_URL]' or "
                f"'azure[:DEPLOYMENT]'), not {value.label!r}"
            )
        return value

    @property
    def verifier(self) -> bool:
        """Whether the self-reflection verifier checks replies."""
        return self.self_reflection and self.max_revisions > 0

    @property
    def label(self) -> str:
        flags = ("+reflection" if self.self_reflection else "") + ("+few-shot" if self.few_shot else "")
        flags += "+backprop" if self.guidance is not None else ""
        return self.name or f"llm:{self.endpoint.label}:{self.mode}{flags}"

    def prompt_versions(self) -> dict[str, str]:
        """The versions of every prompt this configuration sends (recorded with the run)."""
        return P.prompt_versions(
            self.mode,
            self_reflection=self.self_reflection,
            few_shot=self.few_shot,
            verifier=self.verifier,
            build_request=self.build_request,
            guidance=self.guidance.version if self.guidance is not None else None,
        )


def _backend_for(config: LLMCoreConfig) -> ChatBackend:
    updates: dict[str, Any] = {"cache": False}
    if config.temperature is not None:
        updates["temperature"] = config.temperature
    judge = build_judge(config.endpoint.model_copy(update=updates))
    if not isinstance(judge, StructuredJudge):  # pragma: no cover - the validator allows only chat endpoints
        raise ConfigError(f"the LLM core cannot use the endpoint {config.endpoint.label!r}")
    return judge.backend


class LLMCore:
    """An agent core backed by a chat model (see the module docstring).

    Attributes the episode loop and reports may read: ``name``, ``privileged`` (False:
    the core never sees the record), ``prompt_versions`` (copy into
    ``Episode.prompt_versions``), ``usage`` (tokens and requests, also per role in
    ``usage_by_role``) and ``transcripts`` (the messages of each conversation).
    """

    privileged: bool = False

    def __init__(self, config: LLMCoreConfig, *, backend: ChatBackend | None = None):
        self.config = config
        self.name: str = config.label
        self.prompt_versions: dict[str, str] = config.prompt_versions()
        self.revisions: list[Revision] = []
        self.usage = Usage()
        self.usage_by_role: dict[str, Usage] = {}
        self.transcripts: dict[str, list[dict[str, str]]] = {}
        self._owns_backend = backend is None
        self._backend: ChatBackend = backend if backend is not None else _backend_for(config)
        self._max_tokens = config.max_tokens if config.max_tokens is not None else config.endpoint.max_tokens
        self._reset()

    def _reset(self) -> None:
        self.transcripts = {}
        self.revisions = []
        self._plan: Plan | None = None
        self._plan_problem: str | None = None
        self._reported = 0
        self._acted = False
        self._shown_tools: set[str] = set()

    def describe(self) -> dict[str, Any]:
        """Settings that shape the replies (never secrets)."""
        return {
            "name": self.name,
            "mode": self.config.mode,
            "self_reflection": self.config.self_reflection,
            "few_shot": self.config.few_shot,
            "max_revisions": self.config.max_revisions if self.config.self_reflection else None,
            "build_request": self.config.build_request,
            "guidance": self.config.guidance.version if self.config.guidance is not None else None,
            "max_tokens": self._max_tokens,
            "endpoint": self._backend.identity(),
            "prompt_versions": dict(self.prompt_versions),
        }

    # ------------------------------------------------------------------ transport

    async def _ask(self, role: Role) -> str:
        messages = self.transcripts[role]
        try:
            completion = await self._backend.chat(
                list(messages),
                schema_name="radbench_reply",
                json_schema={},
                mode="text",
                max_tokens=self._max_tokens,
            )
        except JudgeError as exc:
            raise LLMCoreError(f"{self.name}: the {role} request failed: {exc.reason}") from exc
        finally:
            if self._owns_backend:
                # One episode is a handful of sequential requests; releasing the HTTP session
                # after each leaves nothing open whichever way the episode ends.
                await self._backend.aclose()
        step = Usage(
            prompt_tokens=completion.prompt_tokens, completion_tokens=completion.completion_tokens, calls=1
        )
        self.usage.add(step)
        self.usage_by_role.setdefault(role, Usage()).add(step)
        messages.append({"role": "assistant", "content": completion.text})
        return completion.text

    def _say(self, role: Role, content: str) -> None:
        self.transcripts[role].append({"role": "user", "content": content})

    # ------------------------------------------------------------------ helpers

    def _plan_of(self, view: EpisodeView) -> Plan | None:
        return view.plan if view.plan is not None else self._plan

    def _new_tools(self, view: EpisodeView) -> list[ToolCard]:
        new = [t for t in view.tools if t.name not in self._shown_tools]
        self._shown_tools.update(t.name for t in new)
        return new

    def _unreported(self, view: EpisodeView) -> list[str]:
        results = [P.render_step_result(s, view.tools) for s in view.steps[self._reported :]]
        self._reported = len(view.steps)
        return results

    @property
    def _guidance(self) -> str | None:
        return self.config.guidance.text if self.config.guidance is not None else None

    def _start_single(self, view: EpisodeView) -> None:
        self.transcripts["agent"] = [
            {
                "role": "system",
                "content": P.system_prompt(
                    self_reflection=self.config.self_reflection,
                    few_shot=self.config.few_shot,
                    build_request=self.config.build_request,
                    guidance=self._guidance,
                ),
            }
        ]

    async def _verified(
        self,
        role: Role,
        reply: str,
        read: Callable[[str], Any],
        check: Callable[[str, Any], list[str]],
        *,
        step: int | None,
    ) -> Any:
        """Read a reply; with the verifier, send it back until it passes or revisions run out."""
        result = read(reply)
        if not self.config.verifier:
            return result
        stage: Literal["plan", "step"] = "plan" if step is None else "step"
        for attempt in range(self.config.max_revisions + 1):
            problems = check(reply, result)
            if not problems:
                return result
            last = attempt == self.config.max_revisions
            self.revisions.append(
                Revision(stage=stage, step=step, problems=problems, reply=reply, revised=not last)
            )
            if last:
                break
            self._say(role, P.revision_request(problems))
            reply = await self._ask(role)
            result = read(reply)
        return result

    # ------------------------------------------------------------------ Core protocol

    async def plan(self, view: EpisodeView) -> Plan | Malformed:
        """Stage 1: the plan (a new episode starts here)."""
        self._reset()
        role: Role
        if self.config.mode == "single":
            role = "agent"
            self._start_single(view)
            self._say(role, P.plan_request(view.question, view.information, view.tools))
            self._shown_tools.update(t.name for t in view.tools)
        else:
            role = "planner"
            system = P.planner_system(
                self_reflection=self.config.self_reflection,
                few_shot=self.config.few_shot,
                guidance=self._guidance,
            )
            self.transcripts[role] = [{"role": "system", "content": system}]
            self._say(role, P.plan_request(view.question, view.information))
        result: Plan | Malformed = await self._verified(
            role, await self._ask(role), parse_plan, verify_plan, step=None
        )
        if isinstance(result, Plan):
            self._plan, self._plan_problem = result, None
        else:
            self._plan, self._plan_problem = None, result.reason
        return result

    async def act(self, view: EpisodeView) -> Call | NoCall | Malformed:
        """Stage 2: one action for the current memory bank."""
        if self.config.mode == "single":
            return await self._act_single(view)
        return await self._act_multi(view)

    async def _act_single(self, view: EpisodeView) -> Call | NoCall | Malformed:
        header: str | None = None
        if "agent" not in self.transcripts:  # no plan stage: introduce the case here
            self._start_single(view)
            header = P.case_briefing(view.question, view.information, view.tools)
            header += "\n\n" + P.stage_two_header(step_limit=view.step_limit)
            self._shown_tools.update(t.name for t in view.tools)
        elif not self._acted:
            header = P.stage_two_header(step_limit=view.step_limit, plan_problem=self._plan_problem)
        self._acted = True
        return await self._step("agent", view, header)

    async def _act_multi(self, view: EpisodeView) -> Call | NoCall | Malformed:
        header: str | None = None
        if "executor" not in self.transcripts:
            system = P.executor_system(
                self_reflection=self.config.self_reflection,
                few_shot=self.config.few_shot,
                build_request=self.config.build_request,
                guidance=self._guidance,
            )
            self.transcripts["executor"] = [{"role": "system", "content": system}]
            header = P.executor_briefing(
                view.question, view.information, self._plan_of(view), view.tools, step_limit=view.step_limit
            )
            self._shown_tools.update(t.name for t in view.tools)
        return await self._step("executor", view, header)

    async def _step(self, role: Role, view: EpisodeView, header: str | None) -> Call | NoCall | Malformed:
        """Send the step request (results so far, new tools, the memory bank) and read the action."""
        self._say(
            role,
            P.step_request(
                view.memory,
                results=self._unreported(view),
                new_tools=self._new_tools(view),
                header=header,
            ),
        )
        result: Call | NoCall | Malformed = await self._verified(
            role,
            await self._ask(role),
            parse_action,
            lambda reply, action: verify_action(reply, action, view),
            step=len(view.steps),
        )
        return result

    async def conclude(self, view: EpisodeView) -> str:
        """Stage 3: the answer to the question, from the final memory bank."""
        if self.config.mode == "single":
            if "agent" not in self.transcripts:
                self._start_single(view)
                self._say("agent", self._full_conclusion_request(view))
            else:
                self._say("agent", P.conclusion_request(view.memory, results=self._unreported(view)))
            return (await self._ask("agent")).strip()
        self.transcripts["concluder"] = [{"role": "system", "content": P.concluder_system()}]
        self._say("concluder", self._full_conclusion_request(view))
        return (await self._ask("concluder")).strip()

    def _full_conclusion_request(self, view: EpisodeView) -> str:
        """The conclusion request for a conversation that has not seen the episode: everything."""
        return P.conclusion_request(
            view.memory,
            question=view.question,
            information=view.information,
            plan=self._plan_of(view),
            steps=[P.render_step_result(s, view.tools) for s in view.steps],
        )
