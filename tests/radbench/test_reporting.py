"""Radiology benchmark reporting: ECR, THR and OTS on hand-worked episodes; completion by
complexity over the solvable conditions; several cores side by side with pairwise
Wilcoxon tests and Holm's correction (hand-worked, and through the real command line).

Task chains (vocab.TASKS): 012 = AC MC OS (target OS); 014 = AC MC DD (target DD);
0126 = AC MC OS BQ (target BQ). Digits: 0 AC, 1 MC, 2 OS, 3 AD, 4 DD, 6 BQ.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import wilcoxon
from tests.clirun import clineval
from tests.radbench.test_metrics import call, episode, malformed, nocall

from clineval import api
from clineval.compare.stats import holm
from clineval.environments.radbench.metrics import episode_metrics, optimal_tool_score
from clineval.environments.radbench.model import StepRecord
from clineval.environments.radbench.runner import BenchSettings, metric_rows, run_bench
from clineval.environments.radbench.stats import Row, compare_runs, report_by, reporting_rows, summarise
from clineval.environments.radbench.vocab import task

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


# completion by complexity and scope ---------------------------------------------------


def _meta(record: str, key: str, condition: str) -> dict[str, str]:
    return {"record_id": record, "task": key, "condition": condition, "complexity": task(key).complexity}


def test_reporting_rows_scope_case_id_and_completion() -> None:
    rows: list[Row] = [
        (_meta("r1", "012", "baseline"), {"completion": 1.0, "uar": None}),
        (_meta("r1", "012", "insufficient_2"), {"completion": 0.0, "uar": 1.0}),
    ]
    plain = reporting_rows(rows)
    assert [m["scope"] for m, _ in plain] == ["solvable", "insufficient"]
    assert [m["case_id"] for m, _ in plain] == ["r1/012/baseline", "r1/012/insufficient_2"]
    # completion on an insufficient tool set only counts with automated tool building
    assert [v["completion"] for _, v in plain] == [1.0, None]
    assert [v["completion"] for _, v in reporting_rows(rows, auto_build=True)] == [1.0, 0.0]
    assert plain[1][1]["uar"] == 1.0
    assert report_by(("complexity",)) == ("complexity", "scope")
    assert report_by(("condition",)) == ("condition",)
    assert report_by(("task", "condition")) == ("task", "condition")


def test_oracle_completion_by_complexity_is_one(runs: dict[str, Any]) -> None:
    result = runs["oracle_result"]
    by = report_by(("complexity",))
    table = summarise(reporting_rows(metric_rows(result)), by=by, metrics=["completion", "uar", "ugr"])
    means = {(row.group, row.metric): row.mean for row in table if row.n}
    assert means == {
        (("simple", "solvable"), "completion"): 1.0,
        (("moderate", "solvable"), "completion"): 1.0,
        (("complex", "solvable"), "completion"): 1.0,
        (("simple", "insufficient"), "uar"): 1.0,
        (("simple", "insufficient"), "ugr"): 1.0,
        (("moderate", "insufficient"), "uar"): 1.0,
        (("moderate", "insufficient"), "ugr"): 1.0,
        (("complex", "insufficient"), "uar"): 1.0,
        (("complex", "insufficient"), "ugr"): 1.0,
    }


def test_summary_by_complexity_from_the_cli(runs: dict[str, Any], tmp_path: Path) -> None:
    store, oracle = runs["store"], runs["oracle"]
    shown = clineval("radbench", "summary", oracle, "--store", store, "--by", "complexity", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    lines = [line.replace("│", " ").split() for line in shown.stdout.splitlines() if "│" in line]
    # complexity, what the row covers, then done ... UGR: 1.000 completion on every solvable row
    solvable = [cells for cells in lines if cells[1:3] == ["2", "solvable"]]
    assert [cells[0] for cells in solvable] == ["simple", "moderate", "complex"]
    assert all(cells[3] == "1.000" for cells in solvable)
    insufficient = [cells for cells in lines if cells[1:3] == ["1", "insufficient"]]
    assert len(insufficient) == 3 and all(
        cells[3] == "–" and cells[-2:] == ["1.000", "1.000"] for cells in insufficient
    )
    assert "solvable: baseline, redundant_medium" in shown.stdout
    assert "insufficient: insufficient_1 (UAR, UGR)" in shown.stdout
    as_json = clineval(
        "radbench", "summary", oracle, "--store", store, "--by", "complexity", "--json", "-", cwd=tmp_path
    )
    rows = json.loads(as_json.stdout)["complexity"]
    done = {tuple(r["group"]): r["mean"] for r in rows if r["metric"] == "completion" and r["n"]}
    assert done == {("simple", "solvable"): 1.0, ("moderate", "solvable"): 1.0, ("complex", "solvable"): 1.0}


# several runs side by side --------------------------------------------------------------


def _ots_rows(values: dict[str, list[float]]) -> list[Row]:
    rows: list[Row] = []
    for condition, series in values.items():
        for i, value in enumerate(series):
            rows.append((_meta(f"r{i + 1}", "014", condition), {"ots": value, "ecr": 1.0}))
    return reporting_rows(rows)


def test_holm_hand_worked() -> None:
    # sorted 0.005, 0.01, 0.03, 0.04: x4 = 0.02; x3 = 0.03; x2 = 0.06; x1 = 0.04 -> 0.06 (monotone)
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_compare_runs_hand_worked() -> None:
    # baseline: A 0.5 on 5 episodes; B adds 0.1 .. 0.5 (all better, distinct sizes): W = 0,
    # exact two-sided p = 2 / 2^5 = 0.0625; C is 0.1 worse on the first, the rest like B:
    # W = rank 1, p = 2 * P(W <= 1) = 2 * 2/32 = 0.125; C against B: one untied episode, no test.
    # differentiated: B adds 0.1 .. 0.6 on 6 episodes: p = 2 / 2^6 = 0.03125; C has none there.
    a = _ots_rows({"baseline": [0.5] * 5, "differentiated": [0.5] * 6})
    b = _ots_rows({"baseline": [0.6, 0.7, 0.8, 0.9, 1.0], "differentiated": [0.6, 0.7, 0.8, 0.9, 1.0, 0.55]})
    c = _ots_rows({"baseline": [0.4, 0.7, 0.8, 0.9, 1.0]})
    b[-1][1]["ots"] = 1.1  # 6th difference 0.6 (OTS is not bounded here: rows are plain numbers)
    result = compare_runs([("A", a), ("B", b), ("C", c)], metrics=["ots", "ecr"])
    assert result.runs == ["A", "B", "C"] and result.common_cases == 5
    assert [f.family for f in result.families] == ["optimal orchestrating", "IO organizing"]
    ots = result.families[0]
    cells = {(r.group, r.metric): [(s.run, s.n, s.mean) for s in r.runs] for r in ots.rows}
    assert cells[(("baseline",), "ots")] == [
        ("A", 5, pytest.approx(0.5)),
        ("B", 5, pytest.approx(0.8)),
        ("C", 5, pytest.approx(0.76)),
    ]
    assert cells[(("differentiated",), "ots")][2] == ("C", 0, None)
    tests = {(t.group[0], t.b, t.a): t for t in ots.tests}
    ba, ca, cb = tests["baseline", "B", "A"], tests["baseline", "C", "A"], tests["baseline", "C", "B"]
    assert (ba.n_pairs, ba.wins, ba.ties, ba.losses, ba.statistic) == (5, 5, 0, 0, 0.0)
    assert ba.p_value == pytest.approx(0.0625)
    assert ba.mean_difference == pytest.approx(0.3)
    assert (ca.wins, ca.losses, ca.statistic) == (4, 1, 1.0)
    assert ca.p_value == pytest.approx(0.125)
    assert (cb.n_pairs, cb.wins, cb.ties, cb.losses, cb.p_value, cb.p_holm) == (5, 0, 4, 1, None, None)
    diff = tests["differentiated", "B", "A"]
    assert diff.p_value == pytest.approx(0.03125)
    assert tests["differentiated", "C", "A"].n_pairs == 0
    # Holm over the family's three p-values: 0.03125 x 3 = 0.09375; 0.0625 x 2 = 0.125; 0.125 x 1
    assert diff.p_holm == pytest.approx(0.09375)
    assert ba.p_holm == pytest.approx(0.125) and ca.p_holm == pytest.approx(0.125)
    # ECR is tied everywhere: its own family, no test
    assert all(t.p_value is None for t in result.families[1].tests)
    # the test agrees with scipy on the paired differences
    assert ba.p_value == pytest.approx(wilcoxon([0.1, 0.2, 0.3, 0.4, 0.5]).pvalue)


def test_compare_runs_refuses_what_cannot_be_paired() -> None:
    a = _ots_rows({"baseline": [0.5, 0.5]})
    other = reporting_rows([(_meta("r9", "012", "baseline"), {"ots": 1.0})])
    with pytest.raises(ValueError, match="runs A and B have no episode in common"):
        compare_runs([("A", a), ("B", other)])
    with pytest.raises(ValueError, match="at least two runs"):
        compare_runs([("A", a)])
    with pytest.raises(ValueError, match="distinct"):
        compare_runs([("A", a), ("A", a)])
    with pytest.raises(ValueError, match="unknown metric 'nope'"):
        compare_runs([("A", a), ("B", a)], metrics=["nope"])


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """An oracle and a greedy run over 2 records x 11 tasks x 3 conditions, stored as the CLI
    stores them (run_bench is what ``clineval radbench run`` calls)."""
    store = str(tmp_path_factory.mktemp("radbench-reporting") / "runs.db")
    conditions = ["baseline", "redundant_medium", "insufficient_1"]
    made: dict[str, Any] = {"store": store}
    for core in ("oracle", "greedy"):
        settings = BenchSettings(core=core, n_records=2, conditions=conditions)  # type: ignore[arg-type]
        result = run_bench(settings, store=store, progress=False)
        made[core], made[f"{core}_result"] = result.run.id, result
    return made


def test_two_cores_side_by_side_from_the_cli(runs: dict[str, Any], tmp_path: Path) -> None:
    store, oracle, greedy = runs["store"], runs["oracle"], runs["greedy"]
    shown = clineval(
        "radbench", "summary", oracle, greedy, "--store", store, cwd=tmp_path, env={"COLUMNS": "160"}
    )
    assert shown.returncode == 0, shown.stderr
    for family in ("task completion", "chain planning", "optimal orchestrating", "IO organizing"):
        assert f"{family}: mean [95% CI] per core" in shown.stdout
        assert f"{family}: pairwise Wilcoxon signed-rank over paired episodes, Holm-adjusted" in shown.stdout
    assert "unsolvability parsing: mean [95% CI] per core" in shown.stdout
    header = next(line for line in shown.stdout.splitlines() if "metric" in line and "oracle" in line)
    assert header.index("oracle") < header.index("greedy")  # one column per core, in the order given
    baseline_done = next(
        line
        for line in shown.stdout.splitlines()
        if line.replace("│", " ").split()[:2] == ["baseline", "done"]
    )
    assert "1.000 [1.00, 1.00]" in baseline_done

    payload = json.loads(
        clineval("radbench", "summary", oracle, greedy, "--store", store, "--json", "-", cwd=tmp_path).stdout
    )
    assert payload["runs"] == ["oracle", "greedy"] and payload["common_cases"] == 66
    families = {f["family"]: f for f in payload["families"]}
    done = {r["group"][0]: r for r in families["task completion"]["rows"]}
    assert set(done) == {"baseline", "redundant_medium"}  # not on the insufficient set
    assert done["baseline"]["runs"][0]["mean"] == 1.0
    # recompute the redundant_medium completion test from the stored runs
    rows_a = {
        m["record_id"] + m["task"]: v
        for m, v in metric_rows(runs["oracle_result"])
        if m["condition"] == "redundant_medium"
    }
    rows_b = {
        m["record_id"] + m["task"]: v
        for m, v in metric_rows(runs["greedy_result"])
        if m["condition"] == "redundant_medium"
    }
    diffs = [rows_b[k]["completion"] - rows_a[k]["completion"] for k in rows_a]
    test = next(t for t in families["task completion"]["tests"] if t["group"] == ["redundant_medium"])
    assert test["a"] == "oracle" and test["b"] == "greedy" and test["n_pairs"] == 22
    assert test["losses"] == sum(1 for d in diffs if d < 0) and test["wins"] == sum(1 for d in diffs if d > 0)
    assert test["mean_difference"] == pytest.approx(sum(diffs) / 22)
    untied = [d for d in diffs if d != 0]
    assert test["p_value"] == pytest.approx(wilcoxon(untied).pvalue)
    tested = [t for t in families["task completion"]["tests"] if t["p_value"] is not None]
    assert [t["p_holm"] for t in tested] == pytest.approx(holm([t["p_value"] for t in tested]))
    uar = families["unsolvability parsing"]["rows"]
    assert [(r["group"], r["metric"], [c["mean"] for c in r["runs"]]) for r in uar] == [
        (["insufficient_1"], "uar", [1.0, 0.0]),
        (["insufficient_1"], "ugr", [1.0, 0.0]),
    ]


def test_side_by_side_errors_are_one_line(runs: dict[str, Any], tmp_path: Path) -> None:
    store, oracle = runs["store"], runs["oracle"]
    other = BenchSettings(core="oracle", n_records=1, conditions=["differentiated"], tasks=["012"])
    other_id = run_bench(other, store=store, progress=False).run.id
    apart = clineval("radbench", "summary", oracle, other_id, "--store", store, cwd=tmp_path)
    assert apart.returncode == 2
    assert "have no episode in common" in apart.stderr and "Traceback" not in apart.stderr
    twice = clineval("radbench", "summary", oracle, oracle, "--store", store, cwd=tmp_path)
    assert twice.returncode == 2 and "given twice" in twice.stderr
    # an ordinary (not radbench) run in the same store
    plain = api.evaluate([{"id": "c1", "response": "a", "reference": "a"}], ["exact_match"], store=store)
    refused = clineval("radbench", "summary", oracle, plain.run.id, "--store", store, cwd=tmp_path)
    assert refused.returncode == 2
    assert "is not a radbench run" in refused.stderr and "Traceback" not in refused.stderr
    bad = clineval("radbench", "summary", oracle, "--store", store, "-m", "nope", cwd=tmp_path)
    assert bad.returncode == 2 and "--metric 'nope'" in bad.stderr


def test_the_viewer_splits_complexity_by_scope_too(runs: dict[str, Any]) -> None:
    from clineval.viewer.data import ViewerData

    summary = ViewerData(runs["store"]).radbench_summary(runs["oracle"], "complexity")
    assert summary is not None
    groups = dict(summary.groups)
    assert list(groups) == [
        "simple / solvable",
        "simple / insufficient",
        "moderate / solvable",
        "moderate / insufficient",
        "complex / solvable",
        "complex / insufficient",
    ]
    assert all(groups[f"{c} / solvable"]["completion"][0] == 1.0 for c in ("simple", "moderate", "complex"))
    assert all(
        groups[f"{c} / insufficient"]["completion"][0] is None for c in ("simple", "moderate", "complex")
    )
    assert groups["complex / insufficient"]["uar"][0] == 1.0
