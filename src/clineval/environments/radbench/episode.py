"""One episode: an agent core answers one question about one record with one tool set.

RadA-BenchPlat's workflow: the core plans (task decomposition), then acts one step at a time
(``<Call>``, ``<EndCall>`` for the last step, or ``<NoCall>`` when no tool fits) while the
simulator executes each call and fills the memory bank, and finally concludes with an
answer from the memory bank.

How an episode ends (``Episode.finished``):

* ``endcall``: an ``<EndCall>`` ran without error.
* ``io_error``: a call failed (unknown tool, scope mismatch, missing, unavailable or
  invalid input): the chain is broken, as in RadA-BenchPlat.
* ``nocall``: the core declined. With automated tool building a NoCall that states the
  gap adds a tool and the episode goes on instead.
* ``malformed``: the core's reply could not be read.
* ``step_limit``: the core used all its steps without an ``<EndCall>``.
* ``no_plan``: the plan could not be read; nothing is executed.
* ``core_error``: the core raised; the message is kept in ``Episode.error``. An exception
  never escapes :func:`run_episode`.

The core concludes after ``endcall``, ``nocall`` (typically a decline message) and
``step_limit``; after a failure (``io_error``, ``malformed``, ``no_plan``,
``core_error``) there is no answer, as in the public harness where an exception ended
the run.

Deviations from the public harness (research note 1.6), each a fix or a stated choice:

* A step limit (default 20 actions) ends an episode; the public loop had none. A core's
  exception ends the episode (``core_error``) instead of a recursive retry of the whole
  run; retrying a transport error is the LLM core's business.
* The core sees the patient information (``EpisodeView.information`` and
  ``$Information$`` in the memory bank) from the start, as in RadA-BenchPlat's case study; the
  public harness kept a placeholder until the conclusion prompt.
* An unreadable plan ends the episode (``no_plan``); the public harness found plan steps
  by substring search and never failed there.
* Nothing the core writes in its plan enters the memory bank (the public harness copied
  the true anatomy, modality and disease when the plan named them).
"""

from __future__ import annotations

from clineval.environments.radbench.model import (
    BuildFrom,
    Call,
    Core,
    Episode,
    EpisodeView,
    Finish,
    Malformed,
    NoCall,
    Plan,
    Privileged,
    QAPair,
    Record,
    ToolSet,
)
from clineval.environments.radbench.simulator import ToolEnvironment
from clineval.environments.radbench.vocab import task
from clineval.errors import JudgeConfigurationError

__all__ = ["run_episode", "view_for"]

_CONCLUDES: frozenset[Finish] = frozenset({"endcall", "nocall", "step_limit"})


def view_for(
    core: Core, env: ToolEnvironment, qa: QAPair, plan: Plan | None, *, task_key: str | None = None
) -> EpisodeView:
    """What the core sees now (privileged ground truth only for privileged cores).

    The view's lists are its own, but the cards, steps and record in them are the
    environment's objects, shared without copying (a deep copy per step dominated the
    environment's run time): cores read them and must not modify them.
    """
    privileged = None
    if getattr(core, "privileged", False):
        privileged = Privileged.model_construct(
            record=env.record,
            task=task_key or qa.task,
            tool_set=env.tool_set.model_copy(update={"tools": list(env.tools)}),
        )
    return EpisodeView.model_construct(
        question=qa.question,
        information=env.record.information.text(),
        tools=list(env.tools),
        memory=dict(env.memory),
        plan=plan,
        steps=list(env.steps),
        step_limit=env.step_limit,
        privileged=privileged,
    )


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def run_episode(
    core: Core,
    record: Record,
    qa: QAPair,
    tool_set: ToolSet,
    *,
    step_limit: int = 20,
    auto_build: bool = False,
    build_from: BuildFrom = "fields",
) -> Episode:
    """Run one episode to its end and return its full trace."""
    spec = task(qa.task)
    env = ToolEnvironment(
        record, tool_set, step_limit=step_limit, auto_build=auto_build, build_from=build_from
    )
    plan: Plan | None = None
    error: str | None = None
    finished: Finish
    answer: str | None = None

    try:
        planned = await core.plan(view_for(core, env, qa, None, task_key=spec.key))
    except JudgeConfigurationError:
        raise  # a refused key or an unknown model: every episode would fail the same way
    except Exception as exc:
        finished, error = "core_error", f"plan: {_describe(exc)}"
    else:
        if isinstance(planned, Malformed):
            finished, error = "no_plan", planned.reason
        else:
            plan = planned
            finished, error = await _act(core, env, qa, plan, spec.key)

    if finished in _CONCLUDES:
        try:
            answer = await core.conclude(view_for(core, env, qa, plan, task_key=spec.key))
        except JudgeConfigurationError:
            raise
        except Exception as exc:
            finished, error = "core_error", f"conclude: {_describe(exc)}"

    return Episode(
        record_id=record.id,
        task=spec.key,
        condition=tool_set.condition,
        seed=tool_set.seed,
        core=str(getattr(core, "name", type(core).__name__)),
        question=qa.question,
        reference_answer=qa.answer,
        gt_chain=list(spec.chain),
        solvable=tool_set.solvable,
        gap=tool_set.gap,
        n_tools=len(tool_set.tools),
        plan=plan,
        steps=env.steps,
        answer=answer,
        finished=finished,
        error=error,
        memory=dict(env.memory),
        scores=dict(env.scores),
        prompt_versions=dict(getattr(core, "prompt_versions", None) or {}),
        revisions=list(getattr(core, "revisions", None) or []),
    )


async def _act(
    core: Core, env: ToolEnvironment, qa: QAPair, plan: Plan, key: str
) -> tuple[Finish, str | None]:
    """The step loop: until an EndCall, an error, a NoCall or the step limit."""
    while not env.exhausted:
        try:
            action = await core.act(view_for(core, env, qa, plan, task_key=key))
        except JudgeConfigurationError:
            raise
        except Exception as exc:
            return "core_error", f"step {len(env.steps)}: {_describe(exc)}"
        if isinstance(action, Malformed):
            env.malformed(action)
            return "malformed", None
        if isinstance(action, NoCall):
            step = env.decline(action)
            if step.built_tool is None:
                return "nocall", None
            continue
        if not isinstance(action, Call):
            return "core_error", f"step {len(env.steps)}: the core returned {type(action).__name__}"
        step = env.execute(action)
        if not step.ok:
            return "io_error", None
        if action.final:
            return "endcall", None
    return "step_limit", None
