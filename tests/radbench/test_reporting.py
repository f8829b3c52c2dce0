"""Radiology benchmark reporting: ECR, THR and OTS on hand-worked episodes; completion by
complexity over the solvable conditions; several cores side by side with pairwise
Wilcoxon tests and Holm's correction (hand-worked, and through the real command line).

Task chains (vocab.TASKS): 012 = AC MC OS (target OS); 014 = AC MC DD (target DD);
0126 = AC MC OS BQ (target BQ). Digits: 0 AC, 1 MC, 2 OS, 3 AD, 4 DD, 6 BQ.
"""

from __future__ import annotations

import pytest
from tests.radbench.test_metrics import call, episode, malformed, nocall

from clineval.environments.radbench.metrics import episode_metrics, optimal_tool_score
from clineval.environments.radbench.model import StepRecord

# ECR and THR --------------------------------------------------------------------------


def _ecr_thr(ep: object) -> tuple[float | None, float | None]:
    values = episode_metrics(ep)  # type: ignore[arg-type]
    return values["ecr"], values["thr"]


def test_ecr_and_thr_on_a_closed_chain() -> None:
    # AC, MC, then OS as the EndCall: the chain is closed without error and ends on the target
    assert _ecr_thr(episode("012", [call(0), call(1), call(2, final=True)])) == (1.0, 1.0)
    # OS called twice, the second time as the EndCall: still closed, still the target
    assert _ecr_thr(episode("012", [call(0), call(1), call(2), call(2, final=True)])) == (1.0, 1.0)


def test_ecr_ignores_which_tool_ended_the_chain_thr_does_not() -> None:
    # AC, OS, then MC as the EndCall: every tool ran ("regardless of the final output's
    # correctness") -> ECR 1; the chain ends on MC, not the target OS -> THR 0
    ep = episode("012", [call(0), call(2), call(1, final=True)])
    assert _ecr_thr(ep) == (1.0, 0.0)
    assert episode_metrics(ep)["completion"] == 0.0


def test_target_reached_with_a_call_then_declined() -> None:
    # AC, MC, OS (a <Call>), then a NoCall on a solvable task: the chain was not closed
    # (ECR 0) but it ends on the target with its output in the bank (THR 1)
    ep = episode("012", [call(0), call(1), call(2), nocall(2, "CategoryMissing")])
    values = episode_metrics(ep)
    assert (values["ecr"], values["thr"]) == (0.0, 1.0)
    assert values["false_refusal"] == 1.0 and values["completion"] == 0.0
    assert values["pfsp"] == 1.0  # 3 successful steps, no failure, / 3


def test_target_reached_with_a_call_then_the_step_limit() -> None:
    ep = episode("012", [call(0), call(1), call(2)], finished="step_limit")
    assert _ecr_thr(ep) == (0.0, 1.0)


def test_an_io_error_misses_both() -> None:
    # the target OS ran, then the next reply was malformed (an I/O error): both 0
    assert _ecr_thr(episode("012", [call(0), call(1), call(2), malformed()])) == (0.0, 0.0)
    # the last call is of the target category (BQ) but failed: it gave no output
    ep = episode(
        "0126", [call(0), call(1), call(2), call(6, final=True, ok=False, error_kind="invalid_input")]
    )
    assert _ecr_thr(ep) == (0.0, 0.0)


def test_a_failed_conclusion_keeps_ecr_and_thr() -> None:
    # the chain closed on the target; the conclusion then failed: ECR and THR are about the
    # tools, task completion needs the conclusion
    ep = episode("012", [call(0), call(1), call(2, final=True)], finished="core_error", answer=None)
    values = episode_metrics(ep)
    assert (values["ecr"], values["thr"], values["completion"]) == (1.0, 1.0, 0.0)


def test_ecr_and_thr_do_not_apply_to_unsolvable_episodes() -> None:
    ep = episode("012", [call(0), call(1), nocall(2, "CategoryMissing")], solvable=False)
    assert _ecr_thr(ep) == (None, None)


# OTS ----------------------------------------------------------------------------------


def _step(i: int, category: int, *, rank: int | None, n: int | None, final: bool = False) -> StepRecord:
    return StepRecord(index=i, **call(category, rank=rank, n=n, final=final))


def test_ots_hand_worked() -> None:
    # the paper's example: 4 suitable tools, the second best chosen -> (4 - 2 + 1) / 4
    assert optimal_tool_score([_step(0, 4, rank=2, n=4)]) == 0.75
    # the worst of 5 suitable -> 1/5; the best -> 1
    assert optimal_tool_score([_step(0, 4, rank=5, n=5)]) == pytest.approx(0.2)
    assert optimal_tool_score([_step(0, 4, rank=1, n=5)]) == 1.0
    # AC the only suitable (1), OS third of 3 (1/3), AD not suitable (0), DD without
    # alternatives recorded (left out), a NoCall (left out): (1 + 1/3 + 0) / 3 = 4/9
    steps = [
        _step(0, 0, rank=1, n=1),
        _step(1, 2, rank=3, n=3),
        _step(2, 3, rank=None, n=2),
        _step(3, 4, rank=None, n=None),
        StepRecord(index=4, **nocall(5, "CategoryMissing")),
    ]
    assert optimal_tool_score(steps) == pytest.approx(4 / 9)
    # no step with a suitable tool: not applicable
    assert optimal_tool_score([_step(0, 4, rank=None, n=None)]) is None
    assert optimal_tool_score([]) is None
    # the same through an episode
    ep = episode("014", [call(0, rank=1, n=1), call(1, rank=1, n=1), call(4, final=True, rank=2, n=4)])
    assert episode_metrics(ep)["ots"] == pytest.approx((1 + 1 + 0.75) / 3)
