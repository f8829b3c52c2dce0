"""The metrics of the radiology agent benchmark (RadA-BenchPlat, section 4.3 "Evaluation Metrics",
Observations 1-6), computed from one :class:`~clineval.environments.radbench.model.Episode`.

:func:`episode_metrics` returns every metric of one episode by name; a value of ``None``
means "does not apply to this episode" (never 0). RadA-BenchPlat says that all metrics except
the two unsolvability ones "evaluate the LLM performance in solvable cases", so they are
``None`` on unsolvable episodes; the unsolvability metrics are ``None`` on solvable ones;
task completion applies to every episode. Which tool-set conditions a table uses
(Observation 2 reads the chain metrics under "Redundant", Observation 3 OTS under
"Differentiated", ...) is a choice of the summary, not of this module.

The chains (all sequences of tool categories):

* **ground truth** ``GT`` = ``episode.gt_chain`` (the task's execution chain, the biomarker
  quantifier twice where both biomarkers are needed, see ``vocab.Task.chain``);
* **planned** = ``episode.plan.chain``; a missing plan (``plan is None``) makes the planned
  metrics ``None``, an empty plan is an empty chain;
* **executed** = the category of every ``call``/``endcall`` step in order, the failing call
  included (it was chosen, then failed), ``nocall`` and ``malformed`` steps excluded; a call
  of a tool the tool set does not have (no category) enters as an *unknown* entry that
  matches no category.

A step *failed* when it is a ``call``, ``endcall`` or ``malformed`` step that is not ``ok``
(a ``nocall`` is a decision, not a failure). The chain *ended with a successful EndCall*
when the episode's last step is an ``ok`` ``endcall``.

Definitions (RadA-BenchPlat's wording in quotes; range; direction):

Chain planning (solvable episodes only)
    ``ld_plan_gt``, ``ld_exec_gt``, ``ld_plan_exec`` -- Levenshtein distance, "the minimum
    number of edit operation steps (insertion, deletion, substitution) required to transform
    a generated tool chain into the ground-truth chain", between planned and GT, executed and
    GT, planned and executed (``rapidfuzz.distance.Levenshtein`` on the category lists).
    0 .. max(len of both); lower is better; an empty chain is ``len`` of the other.
    ``fdr_plan``, ``fdr_exec`` -- false discovery rate, "the proportion of incorrectly
    included tools (tools present in the generated chain but absent in the ground-truth
    chain) relative to all tools in the generated chain": entries (duplicates counted) whose
    category is not in GT / length of the chain. 0-1, lower is better; ``None`` for an
    empty chain (nothing was included).
    ``tma_plan``, ``tma_exec`` -- tool matching accuracy, "how many positions in the
    ground-truth tool sequence can be hit (the same tool appears in the same position) by
    the prediction chain ... ratio of matched tools to the total length of the ground-truth":
    #{i < len(GT): gen[i] == GT[i]} / len(GT). 0-1, higher is better; 0 for an empty chain.

Optimal orchestrating (solvable episodes only)
    ``ots`` -- optimal tool score. RadA-BenchPlat: "The score is defined as [formula], where N
    is the total number of suitable tools for the tool category in the provided tool set,
    and R is the performance rank of the selected tool (1 for the best). For example, if
    there are 4 suitable tools and the agent selects the second-best one, the score would be
    [value]. The final score is determined by averaging all relevant tool selection steps."
    The paper's text leaves the formula and the example's value blank; **(N - R + 1) / N is
    the project's definition**, chosen because it is 1 for the best tool, 1/N for the worst
    suitable one, 0.75 in the paper's example, and equals the public code's per-run score
    (N - i) / N with i = R - 1. Per step: the call/endcall steps with ``n_suitable >= 1``
    (the simulator's N); a step whose chosen tool is not suitable (``rank is None``) scores
    0. The episode's value is the mean over those steps; ``None`` when no step had a
    suitable tool. 1/N .. 1 per step, 0-1 overall, higher is better.

IO organizing (solvable episodes only)
    ``ecr`` -- execution completion, "whether the agent can complete the entire planned chain
    without any input/output errors. A pass is awarded when all tools in the chain execute
    successfully regardless of the final output's correctness": 1 if no step failed and the
    core completed its chain, else 0. *Completed* means closed with a successful EndCall,
    the protocol's mark of the terminal step ("<EndCall> for terminal steps that fulfill the
    clinical query"); a decline (NoCall) or the step limit leaves the chain incomplete (0),
    as does a malformed reply (an I/O error). Not checked, as the paper says: which tool
    ended the chain (that is THR) and the answer (a conclusion that fails after the EndCall
    keeps ECR 1). Choices: the executed chain is not compared with the plan (the paper's
    Observation 2 reports plan-execution deviations separately, ``ld_plan_exec``), and the
    EndCall stands for "complete" as in the public code, whose loop ends only at an EndCall
    or an error, so its "no exception" rule and this one agree.
    ``pfsp`` -- pre-failure success percentage, "performed exclusively on failed cases by
    comparing the number of successfully executed tools before a failure occurs and then
    dividing the total length of the ground-truth chain": on episodes with ``ecr == 0``, the
    number of ``ok`` call/endcall steps before the first failed step (all of them when no
    step failed: a decline or the step limit) / len(GT), capped at 1. 0-1, higher is better.

Response synthesizing (solvable episodes only)
    ``thr`` -- target hit, "whether the execution chain ends with an appropriate tool that
    provides the required response format. A pass means the final output matches the
    expected response type and format for the given task": 1 if no step failed and the last
    call/endcall step (which then succeeded) is of the task's target category
    (``Task.target``: the category whose output is the answer's type), else 0. An I/O error
    anywhere (a failed call or a malformed reply) is a miss, as in the paper's Observation
    5 (low THR "stems from ... deviations from the correct tool path and I/O errors during
    execution"). Unlike ``ecr`` the chain need not be closed with an EndCall: reaching the
    target with a ``<Call>`` and then declining or running into the step limit still ends
    the executed chain with the required output. The answer is not checked (that is
    ``completion`` and the text metrics).
    ``mhr`` -- milestone hit, "whether the agent can generate useful intermediate outputs ...
    we manually set a milestone for each radiology task": 1 if an ``ok`` call/endcall step
    ran the task's milestone category (``Task.milestone``), else 0.
    ``bleu``, ``rouge_l``, ``token_f1`` -- the final answer against the reference answer,
    ``None`` when the episode has no answer (``answer is None``; an empty answer is scored,
    as 0 against a non-empty reference): sentence BLEU of sacrebleu (13a tokens, exponential
    smoothing) / 100, ROUGE-L F-measure of rouge-score (Porter stemmer), and the project's
    token F1 (:class:`clineval.metrics.text.TokenF1`, clinical tokens). 0-1, higher is better.

Unsolvability parsing (unsolvable episodes only)
    ``uar`` -- unsolvability awareness, "a pass means the agent correctly declines to provide
    an invalid answer, while a fail means it attempts to solve an impossible task": 1 if the
    core declined (a ``nocall`` step) and did not complete an EndCall with the insufficient
    tool set (a successful EndCall counts only after automated tool building added a tool,
    a step with ``built_tool``), else 0.
    ``ugr`` -- unsolvability grounding, "a pass requires the agent to correctly point out what
    is missing": 1 if ``uar == 1`` and the *first* NoCall states the episode's gap
    (:func:`grounds`): the same category (the biomarker kind is not needed), the same Ability
    kind (CategoryMissing / SpecificToolMissing / InsufficientCapability), and for
    SpecificToolMissing the gap's anatomy and modality (the record's; "Universal" does not
    pass), else 0. ``None`` when the episode has no recorded gap.

Solvable episodes only
    ``false_refusal`` -- 1 if the core declined (a ``nocall`` step) although the task was
    solvable, else 0. Lower is better. (Not a RadA-BenchPlat metric; the complement of awareness.)

Task completion (every episode)
    ``completion`` -- the paper's primary metric, "successfully solving a query by
    appropriately utilizing available tools without incurring any intermediate errors during
    response synthesis": 1 if the episode ended with a successful EndCall and concluded
    (``finished == "endcall"``: the conclusion did not fail), no step failed, every
    category of the task key (``Task.categories``, each at least once) ran in an ``ok``
    step, and the last executed category is the target; on an unsolvable episode it further
    needs automated tool building to have added a tool (a step with ``built_tool``) first.
    Else 0. 0-1, higher is better.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache, lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict
from rapidfuzz.distance import Levenshtein

from clineval.environments.radbench.model import Episode, Gap, NoCall, StepRecord
from clineval.environments.radbench.vocab import task
from clineval.metrics.base import ScoreContext
from clineval.metrics.text import Bleu, Rouge, TokenF1
from clineval.model import Case

AppliesTo = Literal["solvable", "unsolvable", "all"]
CapabilityGroup = Literal[
    "chain planning",
    "optimal orchestrating",
    "IO organizing",
    "response synthesizing",
    "unsolvability parsing",
    "task completion",
]

#: The entry of an executed chain for a call of a tool with no category (an unknown tool).
UNKNOWN = -1


class MetricInfo(BaseModel):
    """What one benchmark metric means: range, direction, which episodes, which capability."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str
    range: tuple[float, float | None]
    """Lowest and highest value; None: no fixed upper bound (edit distances)."""
    higher_is_better: bool
    applies_to: AppliesTo
    group: CapabilityGroup


def _info(
    name: str,
    description: str,
    group: CapabilityGroup,
    *,
    applies_to: AppliesTo = "solvable",
    higher_is_better: bool = True,
    upper: float | None = 1.0,
) -> MetricInfo:
    return MetricInfo(
        name=name,
        description=description,
        range=(0.0, upper),
        higher_is_better=higher_is_better,
        applies_to=applies_to,
        group=group,
    )


METRICS: tuple[MetricInfo, ...] = (
    _info(
        "completion",
        "task completion: a successful EndCall, no failed step, every category of the task run, target hit "
        "(unsolvable: only after automated tool building)",
        "task completion",
        applies_to="all",
    ),
    _info(
        "ld_plan_gt",
        "Levenshtein distance between the planned and the ground-truth category chain",
        "chain planning",
        higher_is_better=False,
        upper=None,
    ),
    _info(
        "ld_exec_gt",
        "Levenshtein distance between the executed and the ground-truth category chain",
        "chain planning",
        higher_is_better=False,
        upper=None,
    ),
    _info(
        "ld_plan_exec",
        "Levenshtein distance between the planned and the executed category chain",
        "chain planning",
        higher_is_better=False,
        upper=None,
    ),
    _info(
        "fdr_plan",
        "false discovery rate: share of planned entries whose category is not in the ground-truth chain",
        "chain planning",
        higher_is_better=False,
    ),
    _info(
        "fdr_exec",
        "false discovery rate: share of executed entries whose category is not in the ground-truth chain",
        "chain planning",
        higher_is_better=False,
    ),
    _info(
        "tma_plan",
        "tool matching accuracy: ground-truth positions the plan hits, over the ground-truth length",
        "chain planning",
    ),
    _info(
        "tma_exec",
        "tool matching accuracy: ground-truth positions the executed chain hits, over the GT length",
        "chain planning",
    ),
    _info(
        "ots",
        "optimal tool score: mean of (N - R + 1) / N over the selection steps (0 for an unsuitable tool; "
        "the formula is the project's, the paper leaves it blank)",
        "optimal orchestrating",
    ),
    _info(
        "ecr",
        "execution completion: no step failed and the chain was closed with a successful EndCall "
        "(whatever its last tool)",
        "IO organizing",
    ),
    _info(
        "pfsp",
        "pre-failure success percentage (incomplete episodes): successful steps before the first failure "
        "over the ground-truth length, capped at 1",
        "IO organizing",
    ),
    _info(
        "thr",
        "target hit: no step failed and the last executed tool is of the task's target category "
        "(no EndCall needed)",
        "response synthesizing",
    ),
    _info(
        "mhr",
        "milestone hit: a step of the task's milestone category succeeded",
        "response synthesizing",
    ),
    _info(
        "bleu", "sentence BLEU of the answer against the reference (sacrebleu, 0-1)", "response synthesizing"
    ),
    _info("rouge_l", "ROUGE-L F-measure of the answer against the reference", "response synthesizing"),
    _info(
        "token_f1", "token F1 of the answer against the reference (clinical tokens)", "response synthesizing"
    ),
    _info(
        "uar",
        "unsolvability awareness: declined and did not complete with the insufficient tool set",
        "unsolvability parsing",
        applies_to="unsolvable",
    ),
    _info(
        "ugr",
        "unsolvability grounding: declined and the NoCall names the gap (category, ability, scope)",
        "unsolvability parsing",
        applies_to="unsolvable",
    ),
    _info(
        "false_refusal",
        "declined although the task was solvable",
        "unsolvability parsing",
        higher_is_better=False,
    ),
)
METRICS_BY_NAME: dict[str, MetricInfo] = {m.name: m for m in METRICS}
METRIC_NAMES: tuple[str, ...] = tuple(m.name for m in METRICS)


# chains -------------------------------------------------------------------------------


def executed_chain(steps: Sequence[StepRecord]) -> list[int]:
    """Categories of the call/endcall steps in order (failing calls included, :data:`UNKNOWN`
    for a tool without a category); nocall and malformed steps are left out."""
    return [
        UNKNOWN if step.category is None else int(step.category)
        for step in steps
        if step.action in ("call", "endcall")
    ]


def levenshtein(generated: Sequence[int], truth: Sequence[int]) -> int:
    """Edit distance (insertions, deletions, substitutions) between two category chains."""
    return int(Levenshtein.distance(list(generated), list(truth)))


def false_discovery_rate(generated: Sequence[int], truth: Sequence[int]) -> float | None:
    """Share of the generated entries whose category is not in ``truth``; None if empty."""
    if not generated:
        return None
    wanted = set(truth)
    return sum(1 for c in generated if c not in wanted) / len(generated)


def tool_matching_accuracy(generated: Sequence[int], truth: Sequence[int]) -> float | None:
    """Positions of ``truth`` hit by ``generated`` (same category, same position) / len(truth)."""
    if not truth:
        return None
    hits = sum(1 for i, c in enumerate(truth) if i < len(generated) and generated[i] == c)
    return hits / len(truth)


def optimal_tool_score(steps: Sequence[StepRecord]) -> float | None:
    """Mean (N - R + 1) / N over the call/endcall steps with N >= 1 suitable tools; 0 for a
    step whose tool was not suitable (no rank); None when no step had a suitable tool."""
    scores: list[float] = []
    for step in steps:
        if step.action not in ("call", "endcall"):
            continue
        n = step.n_suitable
        if n is None or n < 1:
            continue
        if step.rank is None:
            scores.append(0.0)
            continue
        if not 1 <= step.rank <= n:
            raise ValueError(f"step {step.index}: rank {step.rank} outside 1..{n} suitable tools")
        scores.append((n - step.rank + 1) / n)
    return sum(scores) / len(scores) if scores else None


# steps --------------------------------------------------------------------------------


def failed(step: StepRecord) -> bool:
    """A call, endcall or malformed step that did not succeed (a nocall never fails)."""
    return step.action != "nocall" and not step.ok


def ended_with_endcall(ep: Episode) -> bool:
    """The episode's last step is a successful EndCall."""
    return bool(ep.steps) and ep.steps[-1].action == "endcall" and ep.steps[-1].ok


def _norm(text: str | None) -> str:
    return " ".join((text or "universal").casefold().split())


def grounds(nocall: NoCall, gap: Gap) -> bool:
    """The NoCall names the gap: same category and Ability kind, and for a missing specific
    tool the same anatomy and modality (case and spacing ignored; a gap without anatomy or
    modality stands for "Universal")."""
    if nocall.category is None or nocall.category != gap.category or nocall.ability != gap.kind:
        return False
    if gap.kind == "SpecificToolMissing":
        return _norm(nocall.anatomy) == _norm(gap.anatomy) and _norm(nocall.modality) == _norm(gap.modality)
    return True


# text ---------------------------------------------------------------------------------


@cache
def _text_metrics() -> tuple[Bleu, Rouge, TokenF1]:
    return Bleu(), Rouge(rouge_type="rougeL"), TokenF1()


def text_scores(answer: str, reference: str) -> dict[str, float | None]:
    """BLEU (0-1), ROUGE-L F and token F1 of ``answer`` against ``reference`` (the project's
    text metrics, with their rule for empty texts)."""
    bleu, rouge_l, f1 = _text_scores(answer, reference)
    return {"bleu": bleu, "rouge_l": rouge_l, "token_f1": f1}


@lru_cache(maxsize=4096)
def _text_scores(answer: str, reference: str) -> tuple[float | None, float | None, float | None]:
    # Cached: a core often gives the same answer to the same question under several
    # conditions, and stemming for ROUGE is the costliest part of the metrics.
    case = Case(id="radbench-answer", response=answer, reference=reference)
    bleu, rouge, f1 = _text_metrics()
    return (
        bleu.score(case, ScoreContext()).value,
        rouge.score(case, ScoreContext()).value,
        f1.score(case, ScoreContext()).value,
    )


# the episode --------------------------------------------------------------------------


def episode_metrics(ep: Episode) -> dict[str, float | None]:
    """Every benchmark metric of one episode, by the names of :data:`METRICS` (see the module
    docstring for the definitions); None where a metric does not apply to the episode."""
    values: dict[str, float | None] = dict.fromkeys(METRIC_NAMES)
    spec = task(ep.task)
    gt = [int(c) for c in ep.gt_chain]
    executed = executed_chain(ep.steps)
    ok_categories = {
        int(s.category) for s in ep.steps if s.action != "nocall" and s.ok and s.category is not None
    }
    declined = any(s.action == "nocall" for s in ep.steps)
    no_failure = not any(failed(s) for s in ep.steps)
    ended = ended_with_endcall(ep)
    completed_chain = ended and no_failure
    # The executed chain (failing calls included) ends with an ok step of the target category.
    target_hit = no_failure and bool(executed) and executed[-1] == int(spec.target)
    all_categories = all(int(c) in ok_categories for c in spec.categories)
    built = any(s.built_tool for s in ep.steps)

    solved = completed_chain and target_hit and all_categories and ep.finished == "endcall"
    values["completion"] = float(solved and (ep.solvable or built))

    if ep.solvable:
        planned = None if ep.plan is None else [int(c) for c in ep.plan.chain]
        values["ld_exec_gt"] = float(levenshtein(executed, gt))
        values["fdr_exec"] = false_discovery_rate(executed, gt)
        values["tma_exec"] = tool_matching_accuracy(executed, gt)
        if planned is not None:
            values["ld_plan_gt"] = float(levenshtein(planned, gt))
            values["ld_plan_exec"] = float(levenshtein(planned, executed))
            values["fdr_plan"] = false_discovery_rate(planned, gt)
            values["tma_plan"] = tool_matching_accuracy(planned, gt)
        values["ots"] = optimal_tool_score(ep.steps)
        values["ecr"] = float(completed_chain)
        if not completed_chain and gt:
            before = 0
            for step in ep.steps:
                if failed(step):
                    break
                if step.action in ("call", "endcall"):
                    before += 1
            values["pfsp"] = min(1.0, before / len(gt))
        values["thr"] = float(target_hit)
        values["mhr"] = float(int(spec.milestone) in ok_categories)
        if ep.answer is not None:
            values.update(text_scores(ep.answer, ep.reference_answer))
        values["false_refusal"] = float(declined)
    else:
        # An EndCall with the insufficient tool set is an attempt to solve the impossible task;
        # after automated tool building added a tool it is a legitimate completion.
        aware = declined and (not ended or built)
        values["uar"] = float(aware)
        if ep.gap is not None:
            first = next((s.nocall for s in ep.steps if s.action == "nocall"), None)
            values["ugr"] = float(aware and first is not None and grounds(first, ep.gap))
    return values
