"""RadA-BenchPlat metrics and statistics on hand-built episodes, with hand-worked values.

Task chains used (vocab.TASKS): 012 = AC MC OS (target OS, milestone OS); 014 = AC MC DD
(target DD, milestone DD); 0126 = AC MC OS BQ (target BQ, milestone OS); 0136 = AC MC AD BQ
(target BQ, milestone AD). Digits: 0 AC, 1 MC, 2 OS, 3 AD, 4 DD, 6 BQ.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from sacrebleu import sentence_bleu
from scipy.stats import wilcoxon

from clineval.environments.radbench.metrics import (
    METRIC_NAMES,
    METRICS,
    METRICS_BY_NAME,
    UNKNOWN,
    episode_metrics,
    executed_chain,
    false_discovery_rate,
    grounds,
    levenshtein,
    optimal_tool_score,
    tool_matching_accuracy,
)
from clineval.environments.radbench.model import Episode, Gap, NoCall, Plan, StepRecord
from clineval.environments.radbench.stats import (
    Row,
    compare_cores,
    episode_frame,
    rows_from_episodes,
    summarise,
    summary_frame,
)
from clineval.environments.radbench.vocab import Category, task
from clineval.results.aggregate import bootstrap_ci

C = Category
SOLVABLE_ONLY = [m.name for m in METRICS if m.applies_to == "solvable"]
UNSOLVABLE_ONLY = [m.name for m in METRICS if m.applies_to == "unsolvable"]


# builders -----------------------------------------------------------------------------


def call(
    category: int | None,
    *,
    ok: bool = True,
    final: bool = False,
    rank: int | None = None,
    n: int | None = None,
    error_kind: Any = None,
) -> dict[str, Any]:
    return {
        "action": "endcall" if final else "call",
        "tool": "TOOLX" if category is None else f"TOOL{category}",
        "category": None if category is None else C(category),
        "ok": ok,
        "rank": rank,
        "n_suitable": n,
        "error_kind": error_kind if not ok else None,
    }


def nocall(
    category: int | None,
    ability: Any,
    anatomy: str = "Universal",
    modality: str = "Universal",
    built: str | None = None,
) -> dict[str, Any]:
    return {  # as the simulator records it: the stated category on the step, ok
        "action": "nocall",
        "category": None if category is None else C(category),
        "ok": True,
        "nocall": NoCall(
            category=None if category is None else C(category),
            ability=ability,
            anatomy=anatomy,
            modality=modality,
        ),
        "built_tool": built,
    }


def malformed() -> dict[str, Any]:
    return {"action": "malformed", "ok": False, "error_kind": "malformed_reply"}


def episode(
    key: str,
    steps: list[dict[str, Any]],
    *,
    plan: list[int] | None = None,
    no_plan: bool = False,
    solvable: bool = True,
    gap: Gap | None = None,
    answer: str | None = "an answer",
    reference: str = "an answer",
    condition: str | None = None,
    record: str = "r1",
    core: str = "oracle",
    finished: str | None = None,
) -> Episode:
    spec = task(key)
    records = [StepRecord(index=i, **s) for i, s in enumerate(steps)]
    if finished is None:
        last = records[-1] if records else None
        if last is None:
            finished = "step_limit"
        elif any(r.action != "nocall" and not r.ok for r in records):
            finished = "io_error"
        elif last.action == "endcall":
            finished = "endcall"
        elif last.action == "nocall":
            finished = "nocall"
        else:
            finished = "step_limit"
    return Episode(
        record_id=record,
        task=key,
        condition=condition or ("baseline" if solvable else "insufficient_1"),
        seed=0,
        core=core,
        question="q",
        reference_answer=reference,
        gt_chain=list(spec.chain),
        solvable=solvable,
        gap=gap,
        plan=None if no_plan else Plan(chain=[C(c) for c in (spec.chain if plan is None else plan)]),
        steps=records,
        answer=answer,
        finished=finished,  # type: ignore[arg-type]
    )


def perfect(key: str, **kwargs: Any) -> Episode:
    chain = task(key).chain
    steps = [call(int(c), final=i == len(chain) - 1) for i, c in enumerate(chain)]
    return episode(key, steps, **kwargs)


# chain helpers ------------------------------------------------------------------------


def test_chain_helpers_hand_worked() -> None:
    # [0,2,3] -> [0,1,2]: substitute 2->1 and 3->2 (or insert 1, delete 3): 2 edits
    assert levenshtein([0, 2, 3], [0, 1, 2]) == 2
    assert levenshtein([], [0, 1, 2]) == 3
    assert levenshtein([0, 1, 2], [0, 1, 2]) == 0
    # 3 is not in the truth: 1 of 3 entries; duplicates of a true category are not false
    assert false_discovery_rate([0, 2, 3], [0, 1, 2]) == pytest.approx(1 / 3)
    assert false_discovery_rate([0, 1, 1, 2], [0, 1, 2]) == 0.0
    assert false_discovery_rate([], [0, 1, 2]) is None
    # positions 0 (0=0) hit, 1 (1 vs 2) and 2 (2 vs 3) miss: 1/3
    assert tool_matching_accuracy([0, 2, 3], [0, 1, 2]) == pytest.approx(1 / 3)
    # a longer chain: only the first len(GT) positions count
    assert tool_matching_accuracy([0, 1, 2, 9, 9], [0, 1, 2]) == 1.0
    assert tool_matching_accuracy([], [0, 1, 2]) == 0.0


# solvable episodes --------------------------------------------------------------------


def test_perfect_episode() -> None:
    values = episode_metrics(perfect("0126"))
    assert set(values) == set(METRIC_NAMES)
    assert values["ld_plan_gt"] == values["ld_exec_gt"] == values["ld_plan_exec"] == 0.0
    assert values["fdr_plan"] == values["fdr_exec"] == 0.0
    assert values["tma_plan"] == values["tma_exec"] == 1.0
    assert values["ecr"] == values["thr"] == values["mhr"] == values["completion"] == 1.0
    assert values["pfsp"] is None  # only on episodes that did not complete
    assert values["ots"] is None  # no step recorded suitable alternatives
    assert values["false_refusal"] == 0.0
    assert values["bleu"] == values["rouge_l"] == values["token_f1"] == 1.0  # answer == reference
    for name in UNSOLVABLE_ONLY:
        assert values[name] is None


def test_plan_offset_and_duplicated_calls() -> None:
    # task 012, GT [0,1,2]; plan [0,2,3]; executed [0,1,1,2] (MC called twice)
    ep = episode("012", [call(0), call(1), call(1), call(2, final=True)], plan=[0, 2, 3])
    values = episode_metrics(ep)
    assert values["ld_plan_gt"] == 2.0  # see test_chain_helpers_hand_worked
    assert values["ld_exec_gt"] == 1.0  # delete one of the two MC
    # [0,2,3] vs [0,1,1,2]: 0 matches; DP on [2,3] vs [1,1,2] gives 3
    assert values["ld_plan_exec"] == 3.0
    assert values["fdr_plan"] == pytest.approx(1 / 3)  # 3 (AD) not in GT
    assert values["fdr_exec"] == 0.0  # the duplicate MC is a true category
    assert values["tma_plan"] == pytest.approx(1 / 3)
    assert values["tma_exec"] == pytest.approx(2 / 3)  # 0=0, 1=1, GT[2]=2 vs 1
    # every step ran, the chain ends on the target OS, every key category ran
    assert values["ecr"] == values["thr"] == values["mhr"] == values["completion"] == 1.0


def test_failing_first_step() -> None:
    # task 0136, GT [0,1,3,6]: the anatomy classifier fails at once (input missing)
    ep = episode("0136", [call(0, ok=False, error_kind="missing_input")])
    values = episode_metrics(ep)
    assert executed_chain(ep.steps) == [0]  # the failing call is part of the executed chain
    assert values["ld_exec_gt"] == 3.0  # insert 1, 3, 6
    assert values["fdr_exec"] == 0.0
    assert values["tma_exec"] == 0.25  # 1 of 4 positions
    assert values["ecr"] == 0.0
    assert values["pfsp"] == 0.0  # 0 successful steps before the failure / 4
    assert values["thr"] == values["mhr"] == values["completion"] == 0.0


def test_pfsp_counts_successes_before_first_failure_and_caps() -> None:
    # task 0126, GT length 4: AC, MC, OS succeed, BQ fails -> 3/4
    ep = episode("0126", [call(0), call(1), call(2), call(6, ok=False, error_kind="invalid_input")])
    values = episode_metrics(ep)
    assert values["pfsp"] == 0.75
    assert values["mhr"] == 1.0  # the milestone (OS) succeeded before the failure
    assert values["thr"] == 0.0 and values["completion"] == 0.0
    # task 012, GT length 3: four successes (repeats) then a failure: 4/3 capped at 1
    ep = episode("012", [call(0), call(1), call(0), call(1), call(2, ok=False, error_kind="missing_input")])
    assert episode_metrics(ep)["pfsp"] == 1.0
    # a malformed reply is a failure too, and is not part of the executed chain
    ep = episode("012", [call(0), malformed()])
    values = episode_metrics(ep)
    assert executed_chain(ep.steps) == [0]
    assert values["ecr"] == 0.0
    assert values["pfsp"] == pytest.approx(1 / 3)


def test_unknown_tool_is_an_unmatched_entry() -> None:
    # task 012: AC, then a tool the tool set does not have (no category): executed [0, ?]
    ep = episode("012", [call(0), call(None, ok=False, error_kind="unknown_tool")])
    values = episode_metrics(ep)
    assert executed_chain(ep.steps) == [0, UNKNOWN]
    assert values["fdr_exec"] == 0.5  # the unknown entry is not in GT
    assert values["ld_exec_gt"] == 2.0  # substitute ? -> 1, insert 2
    assert values["tma_exec"] == pytest.approx(1 / 3)
    assert values["pfsp"] == pytest.approx(1 / 3)


def test_ots_with_wrong_scope_tool() -> None:
    # task 014 under "differentiated": AC and MC have 1 suitable tool each (score 1);
    # the diagnoser call picks a tool for another anatomy (not suitable: rank None, 3 suitable) -> 0
    steps = [
        call(0, rank=1, n=1),
        call(1, rank=1, n=1),
        call(4, ok=False, error_kind="anatomy_mismatch", rank=None, n=3),
    ]
    values = episode_metrics(episode("014", steps, condition="differentiated"))
    assert values["ots"] == pytest.approx((1 + 1 + 0) / 3)
    # 4 suitable diagnosers, the second best chosen: (4 - 2 + 1) / 4 = 0.75; mean with AC's 1 -> 0.875
    steps = [call(0, rank=1, n=1), call(1), call(4, final=True, rank=2, n=4)]
    values = episode_metrics(episode("014", steps, condition="differentiated"))
    assert values["ots"] == pytest.approx((1 + 0.75) / 2)
    assert values["completion"] == 1.0


def test_ots_direct_and_inconsistent_rank() -> None:
    steps = [StepRecord(index=0, action="call", category=C(2), ok=True, rank=3, n_suitable=3)]
    assert optimal_tool_score(steps) == pytest.approx(1 / 3)  # the worst of 3: (3-3+1)/3
    assert optimal_tool_score([StepRecord(index=0, action="call", ok=True, n_suitable=0)]) is None
    with pytest.raises(ValueError, match=r"rank 4 outside 1\.\.3"):
        optimal_tool_score([StepRecord(index=0, action="call", ok=True, rank=4, n_suitable=3)])


def test_target_missed_though_chain_completed() -> None:
    # task 0126 (target BQ) ends on the organ segmentor: the chain ran, the target did not
    ep = episode("0126", [call(0), call(1), call(2, final=True)])
    values = episode_metrics(ep)
    assert values["ecr"] == 1.0
    assert values["thr"] == 0.0
    assert values["mhr"] == 1.0  # OS is the milestone of 0126
    assert values["completion"] == 0.0


def test_completion_needs_every_key_category() -> None:
    # task 0136 (AC MC AD BQ) ending on BQ but skipping the anomaly detector
    ep = episode("0136", [call(0), call(1), call(6, final=True)])
    values = episode_metrics(ep)
    assert values["ecr"] == values["thr"] == 1.0
    assert values["mhr"] == 0.0  # the milestone AD never ran
    assert values["completion"] == 0.0


def test_empty_plan_missing_plan_and_empty_executed_chain() -> None:
    # empty plan: 3 insertions; FDR undefined (nothing planned); TMA 0
    values = episode_metrics(perfect("012", plan=[]))
    assert values["ld_plan_gt"] == 3.0
    assert values["ld_plan_exec"] == 3.0
    assert values["fdr_plan"] is None
    assert values["tma_plan"] == 0.0
    # no plan at all: every planned metric is not applicable, the executed ones are
    values = episode_metrics(perfect("012", no_plan=True))
    for name in ("ld_plan_gt", "ld_plan_exec", "fdr_plan", "tma_plan"):
        assert values[name] is None
    assert values["ld_exec_gt"] == 0.0
    # no step at all (step limit hit on replies that were not steps)
    values = episode_metrics(episode("012", [], plan=[0, 1, 2], answer=None))
    assert values["ld_exec_gt"] == 3.0
    assert values["ld_plan_exec"] == 3.0
    assert values["fdr_exec"] is None
    assert values["tma_exec"] == 0.0
    assert values["ots"] is None
    assert values["ecr"] == 0.0
    assert values["pfsp"] == 0.0  # no success before the end / 3
    assert values["thr"] == values["mhr"] == values["completion"] == 0.0


def test_no_answer_and_text_scores() -> None:
    values = episode_metrics(perfect("014", answer=None))
    assert values["bleu"] is None and values["rouge_l"] is None and values["token_f1"] is None
    assert values["completion"] == 1.0  # the answer text does not enter completion

    answer, reference = "pneumonia in the left lung", "left lower lobe pneumonia"
    values = episode_metrics(perfect("014", answer=answer, reference=reference))
    # clinical tokens: [pneumonia, in, left, lung] vs [left, lower, lobe, pneumonia] ("the" dropped):
    # overlap 2, P = R = 2/4, F1 = 0.5
    assert values["token_f1"] == pytest.approx(0.5)
    # ROUGE-L on [pneumonia, in, the, left, lung] vs [left, lower, lobe, pneumonia]: LCS 1,
    # P = 1/5, R = 1/4, F = 2 * 0.05 / 0.45 = 0.2222
    assert values["rouge_l"] == pytest.approx(2 / 9)
    # BLEU: 1-gram 2/5, no higher n-gram; exp smoothing 1/8, 1/12, 1/16; BP 1 (5 > 4):
    # (0.4 * 0.125 * 0.0833 * 0.0625) ** 0.25 = 0.12703
    assert values["bleu"] == pytest.approx(0.12703, abs=1e-5)
    assert values["bleu"] == pytest.approx(sentence_bleu(answer, [reference]).score / 100)
    # an empty answer is scored (0 against a non-empty reference), not "not applicable"
    assert episode_metrics(perfect("014", answer=""))["token_f1"] == 0.0


def test_solvable_declined_is_a_false_refusal() -> None:
    # task 012 in the baseline: AC and MC run, then the core declines
    ep = episode("012", [call(0), call(1), nocall(2, "CategoryMissing")])
    values = episode_metrics(ep)
    assert values["false_refusal"] == 1.0
    assert values["ecr"] == 0.0
    assert values["pfsp"] == pytest.approx(2 / 3)  # 2 successes, no failure, / 3
    assert values["thr"] == values["completion"] == 0.0
    assert values["mhr"] == 0.0  # the NoCall named OS (the milestone) but did not run it
    assert values["uar"] is None and values["ugr"] is None


def test_conclusion_failure_after_endcall() -> None:
    # the chain ran, then the core failed to conclude: the chain completed, the task did not
    ep = perfect("012", answer=None, finished="core_error")
    values = episode_metrics(ep)
    assert values["ecr"] == values["thr"] == 1.0
    assert values["completion"] == 0.0


# unsolvable episodes ------------------------------------------------------------------

GAP_SPECIFIC = Gap(kind="SpecificToolMissing", category=C(2), anatomy="Chest", modality="CT")


def test_unsolvable_declined_with_right_grounding() -> None:
    ep = episode(
        "012",
        [call(0), call(1), nocall(2, "SpecificToolMissing", anatomy="chest", modality="CT")],
        solvable=False,
        gap=GAP_SPECIFIC,
        condition="insufficient_2",
        answer=None,
    )
    values = episode_metrics(ep)
    assert values["uar"] == 1.0
    assert values["ugr"] == 1.0  # case is ignored
    assert values["completion"] == 0.0
    for name in SOLVABLE_ONLY:
        assert values[name] is None


@pytest.mark.parametrize(
    "wrong",
    [
        {"category": 3, "ability": "SpecificToolMissing", "anatomy": "Chest", "modality": "CT"},  # category
        {"category": 2, "ability": "CategoryMissing", "anatomy": "Chest", "modality": "CT"},  # ability kind
        {"category": 2, "ability": "SpecificToolMissing", "anatomy": "Universal", "modality": "CT"},  # scope
        {"category": 2, "ability": "SpecificToolMissing", "anatomy": "Chest", "modality": "MRI"},  # modality
        {
            "category": None,
            "ability": "SpecificToolMissing",
            "anatomy": "Chest",
            "modality": "CT",
        },  # unparsed
    ],
)
def test_unsolvable_declined_with_wrong_grounding(wrong: dict[str, Any]) -> None:
    ep = episode(
        "012",
        [call(0), call(1), nocall(**wrong)],
        solvable=False,
        gap=GAP_SPECIFIC,
        condition="insufficient_2",
    )
    values = episode_metrics(ep)
    assert values["uar"] == 1.0  # aware ...
    assert values["ugr"] == 0.0  # ... but not grounded


def test_grounding_rules() -> None:
    # a missing category needs the category and the kind only; the biomarker kind is not asked
    gap = Gap(kind="CategoryMissing", category=C(6))
    assert grounds(NoCall(category=C(6), ability="CategoryMissing", anatomy="Chest"), gap)
    assert not grounds(NoCall(category=C(6), ability="InsufficientCapability"), gap)
    gap = Gap(kind="InsufficientCapability", category=C(4), label_field="disease", needed_label="pneumonia")
    assert grounds(NoCall(category=C(4), ability="InsufficientCapability"), gap)


def test_unsolvable_attempted() -> None:
    # the core used an inappropriate tool and completed: an attempt at an impossible task
    ep = episode("014", [call(0), call(1), call(4, final=True)], solvable=False, gap=GAP_SPECIFIC)
    values = episode_metrics(ep)
    assert values["uar"] == values["ugr"] == values["completion"] == 0.0
    # never declined, ran into an I/O error
    ep = episode(
        "014", [call(0), call(4, ok=False, error_kind="anatomy_mismatch")], solvable=False, gap=GAP_SPECIFIC
    )
    assert episode_metrics(ep)["uar"] == 0.0
    # no recorded gap: grounding cannot be judged
    ep = episode("014", [nocall(4, "CategoryMissing")], solvable=False, gap=None)
    values = episode_metrics(ep)
    assert values["uar"] == 1.0 and values["ugr"] is None


def test_auto_built_completion() -> None:
    # insufficient_1 without an organ segmentor: the core names the gap, a tool is built, the
    # chain completes on it
    gap = Gap(kind="CategoryMissing", category=C(2))
    steps = [call(0), call(1), nocall(2, "CategoryMissing", built="TOOL13"), call(2, final=True)]
    values = episode_metrics(episode("012", steps, solvable=False, gap=gap))
    assert values["completion"] == 1.0
    assert values["uar"] == 1.0  # the EndCall came after building: not an attempt at the impossible
    assert values["ugr"] == 1.0
    # the same decline without a built tool, and a completion without building: 0
    steps = [call(0), call(1), nocall(2, "CategoryMissing")]
    assert episode_metrics(episode("012", steps, solvable=False, gap=gap))["completion"] == 0.0
    steps = [call(0), call(1), nocall(3, "CategoryMissing"), call(2, final=True)]  # build failed
    values = episode_metrics(episode("012", steps, solvable=False, gap=gap))
    assert values["completion"] == 0.0 and values["uar"] == 0.0 and values["ugr"] == 0.0


def test_metric_table() -> None:
    assert [m.name for m in METRICS] == list(METRIC_NAMES)
    assert set(episode_metrics(perfect("012"))) == set(METRIC_NAMES)
    lower = {m.name for m in METRICS if not m.higher_is_better}
    assert lower == {"ld_plan_gt", "ld_exec_gt", "ld_plan_exec", "fdr_plan", "fdr_exec", "false_refusal"}
    assert METRICS_BY_NAME["ld_exec_gt"].range == (0.0, None)
    assert METRICS_BY_NAME["completion"].applies_to == "all"
    assert METRICS_BY_NAME["uar"].applies_to == "unsolvable"
    assert {m.group for m in METRICS} == {
        "chain planning",
        "optimal orchestrating",
        "IO organizing",
        "response synthesizing",
        "unsolvability parsing",
        "task completion",
    }


# summaries ----------------------------------------------------------------------------


def _row(condition: str, complexity: str, **metrics: float | None) -> Row:
    return {"record_id": "r", "condition": condition, "complexity": complexity}, metrics


def test_summarise_by_condition() -> None:
    rows = [
        _row("insufficient_1", "simple", completion=0.0, uar=1.0),
        _row("baseline", "simple", completion=1.0, uar=None),
        _row("baseline", "complex", completion=0.0, uar=None),
        _row("baseline", "simple", completion=1.0, uar=None),
        _row("insufficient_1", "complex", completion=0.0, uar=0.0),
    ]
    summary = summarise(rows, by=("condition",), metrics=["completion", "uar"])
    # baseline comes first (benchmark order), metrics in the order asked
    assert [(r.group, r.metric) for r in summary] == [
        (("baseline",), "completion"),
        (("baseline",), "uar"),
        (("insufficient_1",), "completion"),
        (("insufficient_1",), "uar"),
    ]
    base_completion, base_uar, ins_completion, ins_uar = summary
    assert base_completion.n == base_completion.n_episodes == 3
    assert base_completion.mean == pytest.approx(2 / 3)
    assert (base_completion.ci_low, base_completion.ci_high) == bootstrap_ci([1.0, 0.0, 1.0])
    assert base_uar.n == 0 and base_uar.mean is None and base_uar.ci_low is None  # not applicable, not 0
    assert ins_completion.mean == 0.0 and (ins_completion.ci_low, ins_completion.ci_high) == (0.0, 0.0)
    assert ins_uar.n == 2 and ins_uar.mean == 0.5
    assert ins_uar.higher_is_better is True

    two = summarise(rows, by=("condition", "complexity"), metrics=["completion"])
    assert [(r.group, r.n, r.mean) for r in two] == [
        (("baseline", "simple"), 2, 1.0),
        (("baseline", "complex"), 1, 0.0),
        (("insufficient_1", "simple"), 1, 0.0),
        (("insufficient_1", "complex"), 1, 0.0),
    ]
    assert two[1].ci_low is None  # a single value has no interval
    overall = summarise(rows, by=(), metrics=["completion"])
    assert overall[0].group == () and overall[0].mean == pytest.approx(2 / 5)


def test_summarise_episodes_by_complexity_and_frames() -> None:
    episodes = [
        perfect("012"),  # simple, completed
        episode("014", [call(0, ok=False, error_kind="missing_input")]),  # simple, failed
        perfect("0126"),  # moderate, completed
        episode("012", [call(0), call(1), nocall(2, "CategoryMissing")], solvable=False, gap=GAP_SPECIFIC),
    ]
    rows = rows_from_episodes(episodes)
    assert rows[2][0] == {
        "record_id": "r1",
        "task": "0126",
        "complexity": "moderate",
        "condition": "baseline",
        "core": "oracle",
    }
    summary = {(r.group, r.metric): r for r in summarise(rows, by=("complexity",))}
    simple = summary[(("simple",), "completion")]
    assert (simple.n, simple.n_episodes, simple.mean) == (3, 3, pytest.approx(1 / 3))
    assert summary[(("simple",), "ecr")].n == 2  # the unsolvable episode has no ECR
    assert summary[(("simple",), "ecr")].mean == 0.5
    assert summary[(("simple",), "uar")].n == 1
    assert summary[(("moderate",), "thr")].mean == 1.0
    assert [g for (g, m) in summary if m == "completion"] == [("simple",), ("moderate",)]

    frame = summary_frame(rows, by=("complexity",), metrics=["completion", "ecr"])
    assert list(frame.columns) == [
        "complexity",
        "metric",
        "n",
        "n_episodes",
        "mean",
        "ci_low",
        "ci_high",
        "higher_is_better",
    ]
    wide = frame.pivot(index="complexity", columns="metric", values="mean")
    assert wide.loc["simple", "ecr"] == 0.5
    per_episode = episode_frame(rows)
    assert len(per_episode) == 4
    assert math.isnan(per_episode.loc[3, "ecr"])  # not applicable -> NaN
    assert per_episode.loc[3, "uar"] == 1.0


# core comparison ----------------------------------------------------------------------


def _rows(core: str, values: dict[str, list[float | None]], metric: str) -> list[Row]:
    return [({"record_id": rec, "core": core}, {metric: v}) for rec, vs in values.items() for v in vs]


def test_compare_cores_hand_worked() -> None:
    # B - A per record (tenths): +1, +2, -3, +4, +5, 0, 0, +6.5; r1 of A averages two episodes
    a = {f"r{i}": [0.0] for i in range(1, 9)} | {"r1": [0.0, 0.2], "only_a": [1.0]}
    b = {"r1": [0.2], "r2": [0.2], "r3": [-0.3], "r4": [0.4], "r5": [0.5], "r6": [0.0], "r7": [0.0]}
    b |= {"r8": [0.65], "r9_none": [None]}
    diffs = [0.1, 0.2, -0.3, 0.4, 0.5, 0.0, 0.0, 0.65]
    result = compare_cores(_rows("A", a, "tma_exec"), _rows("B", b, "tma_exec"), "tma_exec")
    assert result.n_records == 8 and result.only_a == 1 and result.only_b == 0  # r9 has no value
    assert (result.wins, result.ties, result.losses) == (5, 2, 1)  # higher is better for TMA
    assert result.mean_difference == pytest.approx(sum(diffs) / 8)  # 1.55 / 8
    assert result.records[0].key == "r1" and result.records[0].a == pytest.approx(0.1)
    assert result.records[0].n_a == 2
    ci = bootstrap_ci([r.b - r.a for r in result.records])
    assert ci is not None and (result.ci_low, result.ci_high) == pytest.approx(ci)
    # Wilcoxon, zeros dropped: |d| ranks 1..6, the only negative has rank 3 -> W = 3;
    # exact two-sided p = 2 * #{subsets of 1..6 with sum <= 3} / 2**6 = 2 * 5 / 64
    assert result.statistic == 3.0
    assert result.p_value == pytest.approx(10 / 64)
    assert result.p_value == pytest.approx(wilcoxon(diffs, zero_method="wilcox").pvalue)

    # the same numbers as edit distances: lower is better, so wins and losses swap
    result = compare_cores(_rows("A", a, "ld_exec_gt"), _rows("B", b, "ld_exec_gt"), "ld_exec_gt")
    assert (result.wins, result.ties, result.losses) == (1, 2, 5)
    assert result.p_value == pytest.approx(10 / 64)


def test_compare_cores_seed_shape_and_degenerate() -> None:
    # RadA-BenchPlat's multi-agent result shape: 17 wins, 2 ties, 1 loss over 20 patients (LD, lower better)
    a = {f"p{i:02d}": [2.0] for i in range(20)}
    b = {f"p{i:02d}": [2.0 - 0.05 * (i + 1)] for i in range(17)} | {"p17": [2.0], "p18": [2.0], "p19": [2.01]}
    result = compare_cores(_rows("A", a, "ld_exec_gt"), _rows("B", b, "ld_exec_gt"), "ld_exec_gt")
    assert (result.wins, result.ties, result.losses) == (17, 2, 1)
    untied = [r.b - r.a for r in result.records if r.b != r.a]
    assert result.p_value == pytest.approx(wilcoxon(untied).pvalue)
    # 18 non-tied records, distinct magnitudes; the one loss (+0.01) has the smallest, rank 1:
    # W = 1, exact two-sided p = 2 * #{subsets of 1..18 with sum <= 1} / 2**18 = 4 / 262144
    assert result.statistic == 1.0
    assert result.p_value == pytest.approx(4 / 2**18)

    # one non-tied record: no test
    result = compare_cores(
        _rows("A", {"x": [0.0], "y": [1.0], "z": [0.5]}, "completion"),
        _rows("B", {"x": [0.0], "y": [1.0], "z": [1.0]}, "completion"),
        "completion",
    )
    assert (result.wins, result.ties, result.losses) == (1, 2, 0)
    assert result.p_value is None and result.statistic is None
    # nothing in common
    result = compare_cores(_rows("A", {"x": [1.0]}, "ecr"), _rows("B", {"y": [1.0]}, "ecr"), "ecr")
    assert result.n_records == 0 and result.mean_difference is None and result.p_value is None
    assert (result.only_a, result.only_b) == (1, 1)
    # a metric this module does not know: higher is better unless told
    rows_a, rows_b = _rows("A", {"x": [1.0]}, "custom"), _rows("B", {"x": [0.0]}, "custom")
    assert compare_cores(rows_a, rows_b, "custom").losses == 1
    assert compare_cores(rows_a, rows_b, "custom", higher_is_better=False).wins == 1
