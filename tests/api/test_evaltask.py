"""EvalTask: a script written for Vertex AI's Gen AI evaluation service (agent evaluation) runs
with its import changed, offline, and gives Vertex AI's summary keys and table columns.

Three cases, hand-worked. Case "bed 4": the agent makes exactly the reference calls. Case
"bed 7": it calls the reference's two tools in the other order plus an extra lab order
(exact 0, in-order 0, any-order 1, precision 2/3, recall 1). Case "bed 9": the agent
raises (failure 1, no latency, trajectory metrics unscored).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest

import clineval
from clineval import load_run
from clineval.errors import ConfigError
from clineval.metrics import trajectory

LOOKUP_4 = {"tool_name": "lookup_patient", "tool_input": {"bed": 4}}
POTASSIUM = {"tool_name": "order_lab", "tool_input": {"test": "potassium"}}
LOOKUP_7 = {"tool_name": "lookup_patient", "tool_input": {"bed": 7}}
HEAD_CT = {"tool_name": "order_imaging", "tool_input": {"modality": "CT", "region": "head"}}
SODIUM = {"tool_name": "order_lab", "tool_input": {"test": "sodium"}}

PROMPTS = [
    "Order a potassium level for the patient in bed 4.",
    "The patient in bed 7 fell: does she need a head CT?",
    "Summarise the last sodium results for bed 9.",
]
REFERENCE_TRAJECTORIES = [[LOOKUP_4, POTASSIUM], [LOOKUP_7, HEAD_CT], [{"tool_name": "lookup_patient"}]]
PREDICTED = {
    PROMPTS[0]: ("Potassium ordered for bed 4.", [LOOKUP_4, POTASSIUM]),
    PROMPTS[1]: ("Head CT ordered; sodium added.", [HEAD_CT, LOOKUP_7, SODIUM]),
}
#: Seconds each call takes on the test's clock.
LATENCY = {PROMPTS[0]: 0.5, PROMPTS[1]: 1.5, PROMPTS[2]: 0.25}
TRAJECTORY_METRICS = [
    "trajectory_exact_match",
    "trajectory_in_order_match",
    "trajectory_any_order_match",
    "trajectory_precision",
    "trajectory_recall",
]
SQRT_HALF = math.sqrt(0.5)  # sample std of two values 1 apart


def agent_parsed_outcome(prompt: str) -> dict[str, Any]:
    """The custom agent function of Vertex AI's agent evaluation notebooks: prompt in, dict out."""
    if prompt not in PREDICTED:
        raise RuntimeError("lab system unavailable")
    response, calls = PREDICTED[prompt]
    return {"response": response, "predicted_trajectory": calls}


def vertex_script() -> Any:
    """A Vertex AI agent evaluation script; only its import line was changed."""
    from clineval import EvalTask, TrajectorySingleToolUse  # was: vertexai.preview.evaluation(.metrics)

    eval_sample_dataset = pd.DataFrame({"prompt": PROMPTS, "reference_trajectory": REFERENCE_TRAJECTORIES})
    metrics: list[Any] = [*TRAJECTORY_METRICS, TrajectorySingleToolUse(tool_name="order_lab")]
    EXPERIMENT_NAME = "evaluate-ward-agent"  # as the notebooks write it
    trajectory_eval_task = EvalTask(dataset=eval_sample_dataset, metrics=metrics, experiment=EXPERIMENT_NAME)
    return trajectory_eval_task.evaluate(runnable=agent_parsed_outcome, experiment_run_name="ward-run-1")


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Work in an empty folder (the default run store is ./.clineval/clineval.db), no judge set."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CLINEVAL_JUDGE", raising=False)
    return tmp_path


def test_a_vertex_script_runs_with_its_import_changed(in_tmp: Path) -> None:
    result = vertex_script()
    summary = result.summary_metrics
    expected = {
        "row_count": 3,
        "trajectory_exact_match/mean": 0.5,
        "trajectory_exact_match/std": SQRT_HALF,
        "trajectory_in_order_match/mean": 0.5,
        "trajectory_in_order_match/std": SQRT_HALF,
        "trajectory_any_order_match/mean": 1.0,
        "trajectory_any_order_match/std": 0.0,
        "trajectory_precision/mean": 5 / 6,  # (1 + 2/3) / 2
        "trajectory_precision/std": (1 / 3) / math.sqrt(2),
        "trajectory_recall/mean": 1.0,
        "trajectory_recall/std": 0.0,
        "trajectory_single_tool_use/mean": 1.0,
        "trajectory_single_tool_use/std": 0.0,
        "failure/mean": 1 / 3,
        "failure/std": math.sqrt(1 / 3),  # 0, 0, 1: squared deviations 2/3 over n-1 = 2
    }
    metric_keys = [
        f"{m}/{s}" for m in [*TRAJECTORY_METRICS, "trajectory_single_tool_use"] for s in ("mean", "std")
    ]
    tail = ["latency_in_seconds/mean", "latency_in_seconds/std", "failure/mean", "failure/std"]
    assert list(summary) == ["row_count", *metric_keys, *tail]  # Vertex AI's order: metrics, then agent
    for key, value in expected.items():
        assert summary[key] == pytest.approx(value), key

    table = result.metrics_table
    assert list(table.columns) == [
        "prompt",
        "reference_trajectory",
        "response",
        "predicted_trajectory",
        "latency_in_seconds",
        "failure",
        "failure/explanation",
        *(f"{name}/{part}" for name in TRAJECTORY_METRICS for part in ("score", "explanation")),
        "trajectory_single_tool_use/score",
        "trajectory_single_tool_use/explanation",
    ]
    assert list(table["prompt"]) == PROMPTS
    assert list(table["failure"]) == [0, 0, 1]
    assert table["response"].tolist()[:2] == [
        "Potassium ordered for bed 4.",
        "Head CT ordered; sodium added.",
    ]
    assert table["predicted_trajectory"][1] == [HEAD_CT, LOOKUP_7, SODIUM]  # as Vertex AI writes calls
    latency = table["latency_in_seconds"]
    assert latency[0] > 0 and latency[1] > 0 and pd.isna(latency[2])  # no latency for a failed call
    assert summary["latency_in_seconds/mean"] == pytest.approx((latency[0] + latency[1]) / 2)
    assert table["failure/explanation"][2] == "RuntimeError: lab system unavailable"
    assert table["trajectory_exact_match/score"].tolist()[:2] == [1.0, 0.0]
    assert table["trajectory_in_order_match/score"].tolist()[:2] == [1.0, 0.0]
    assert table["trajectory_precision/score"][1] == pytest.approx(2 / 3)
    assert pd.isna(table["trajectory_recall/score"][2])  # unscored, never 0
    assert "agent failed" in table["trajectory_recall/explanation"][2]
    assert table["trajectory_precision/explanation"][1].startswith("2 of 3 predicted calls")

    # The run is in the default store under the run name and the experiment's tags.
    assert result.metadata == {"experiment": "evaluate-ward-agent", "experiment_run": "ward-run-1"}
    stored = load_run(result.run_id, store=in_tmp / ".clineval" / "clineval.db")
    assert stored.run.name == "ward-run-1"
    assert stored.run.tags == {"experiment": "evaluate-ward-agent", "experiment_run": "ward-run-1"}
    specs = stored.run.config["metrics"]
    assert {"name": "trajectory_single_tool_use", "args": {"tool_name": "order_lab"}} in specs
    assert stored.run.metrics == [*TRAJECTORY_METRICS, "trajectory_single_tool_use", "latency", "failure"]


def test_latency_summary_on_a_known_clock(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Latency is the agent call's wall time: on a clock the agent moves by a known step."""
    from clineval import EvalTask
    from clineval.runner import agent as agent_module

    clock = SimpleNamespace(now=100.0)
    monkeypatch.setattr(agent_module, "time", SimpleNamespace(perf_counter=lambda: clock.now))

    def runnable(prompt: str) -> dict[str, Any]:
        clock.now += LATENCY[prompt]
        return agent_parsed_outcome(prompt)

    task = EvalTask(
        pd.DataFrame({"prompt": PROMPTS, "reference_trajectory": REFERENCE_TRAJECTORIES}),
        ["trajectory_recall"],
    )
    result = task.evaluate(runnable, agent_concurrency=1)  # one call at a time on the shared clock
    assert result.metrics_table["latency_in_seconds"].tolist()[:2] == [0.5, 1.5]
    assert result.summary_metrics["latency_in_seconds/mean"] == pytest.approx(1.0)
    assert result.summary_metrics["latency_in_seconds/std"] == pytest.approx(SQRT_HALF)
    assert result.summary_metrics["failure/mean"] == pytest.approx(1 / 3)


def test_every_trajectory_metric_is_importable_from_the_top_level() -> None:
    names = {
        "TrajectoryExactMatch": "trajectory_exact_match",
        "TrajectoryInOrderMatch": "trajectory_in_order_match",
        "TrajectoryAnyOrderMatch": "trajectory_any_order_match",
        "TrajectoryPrecision": "trajectory_precision",
        "TrajectoryRecall": "trajectory_recall",
        "TrajectorySingleToolUse": "trajectory_single_tool_use",
    }
    for cls_name, metric_name in names.items():
        cls = getattr(clineval, cls_name)
        assert cls is getattr(trajectory, cls_name) and cls_name in clineval.__all__
        assert cls.name == metric_name
    assert clineval.TrajectorySingleToolUse(tool_name="order_lab").tool_name == "order_lab"
    # importing the package stays light: the names load on first use
    code = (
        "import sys, clineval\n"
        "assert 'clineval.evaltask' not in sys.modules and 'clineval.metrics' not in sys.modules\n"
        "from clineval import TrajectoryRecall\n"
        "assert 'clineval.api' not in sys.modules and 'pandas' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_metric_objects_with_settings_are_stored_with_them(in_tmp: Path) -> None:
    from clineval import EvalTask, TrajectoryExactMatch

    rows = [{"prompt": "q", "predicted_trajectory": [LOOKUP_7], "reference_trajectory": [LOOKUP_4]}]
    result = EvalTask(rows, [TrajectoryExactMatch(match="name")]).evaluate()
    assert result.summary_metrics == {
        "row_count": 1,
        "trajectory_exact_match/mean": 1.0,
        "trajectory_exact_match/std": None,
    }
    assert result.result is not None
    assert result.result.run.config["metrics"] == [
        {"name": "trajectory_exact_match", "args": {"match": "name"}}
    ]


def test_bring_your_own_response_from_a_file(in_tmp: Path) -> None:
    """No runnable: the dataset's own responses, trajectories, latencies and failures are scored."""
    from clineval import EvalTask

    first: dict[str, Any] = {"prompt": PROMPTS[0], "response": "K+ ordered", "reference": "K+ ordered"}
    first |= {"predicted_trajectory": [LOOKUP_4], "reference_trajectory": [LOOKUP_4, POTASSIUM]}
    first |= {"latency_in_seconds": 2.0, "failure": 0, "ward": "renal"}
    second: dict[str, Any] = {"prompt": PROMPTS[1], "response": "CT ordered", "reference": "CT head ordered"}
    second |= {"predicted_trajectory": [], "reference_trajectory": [HEAD_CT]}
    second |= {"latency_in_seconds": 4.0, "failure": 0, "ward": "ed"}
    rows = [first, second]
    path = in_tmp / "outputs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = EvalTask(dataset=str(path), metrics=["exact_match", "trajectory_recall"]).evaluate()
    assert result.summary_metrics == pytest.approx(
        {
            "row_count": 2,
            "exact_match/mean": 0.5,
            "exact_match/std": SQRT_HALF,
            "trajectory_recall/mean": 0.25,  # 1 of 2, then 0 of 1
            "trajectory_recall/std": 0.25 * math.sqrt(2),
            "latency_in_seconds/mean": 3.0,
            "latency_in_seconds/std": math.sqrt(2),
            "failure/mean": 0.0,
            "failure/std": 0.0,
        }
    )
    table = result.metrics_table
    assert list(table.columns[:8]) == list(first)  # the file's columns as given, in order
    assert table["ward"].tolist() == ["renal", "ed"] and table["exact_match/score"].tolist() == [1.0, 0.0]
    assert "exact_match/explanation" not in table.columns  # exact match explains nothing


def test_prompt_template_and_column_mapping(in_tmp: Path) -> None:
    from clineval import EvalTask

    frame = pd.DataFrame({"bed": [4, 7], "question": ["potassium?", "head CT?"], "gold": ["bed 4", "bed 7"]})
    task = EvalTask(dataset=frame, metrics=["exact_match"], metric_column_mapping={"reference": "gold"})

    def echo(prompt: str) -> str:
        return prompt.split(":")[0]

    result = task.evaluate(runnable=echo, prompt_template="bed {bed}: {question}")
    assert result.metrics_table["prompt"].tolist() == ["bed 4: potassium?", "bed 7: head CT?"]
    assert result.metrics_table["response"].tolist() == ["bed 4", "bed 7"]
    assert result.summary_metrics["exact_match/mean"] == 1.0
    # the dataset property is the frame as given
    assert task.dataset.equals(frame) and task.metrics == ["exact_match"] and task.experiment is None


def test_bad_input_is_reported_clearly_before_anything_runs(in_tmp: Path) -> None:
    from clineval import EvalTask

    frame = pd.DataFrame({"prompt": PROMPTS, "reference_trajectory": REFERENCE_TRAJECTORIES})
    with pytest.raises(
        ConfigError, match=r"unknown metric 'trajectory_exact_mach'\. Did you mean 'trajectory_exact_match'"
    ):
        EvalTask(dataset=frame, metrics=["trajectory_exact_mach"])
    with pytest.raises(ValueError, match="tool_name must be a non-empty tool name"):
        clineval.TrajectorySingleToolUse(tool_name="")
    with pytest.raises(ConfigError, match="no metrics"):
        EvalTask(dataset=frame, metrics=[])
    with pytest.raises(ConfigError, match="dataset item 2 is a str, not a dict"):
        EvalTask(dataset=[{"prompt": "a"}, "b"], metrics=["exact_match"])
    with pytest.raises(ConfigError, match="metric_column_mapping 'response' -> 'answer': no column 'answer'"):
        EvalTask(dataset=frame, metrics=["exact_match"], metric_column_mapping={"response": "answer"})
    task = EvalTask(dataset=frame, metrics=["trajectory_recall"])
    with pytest.raises(ConfigError, match="the runnable is a int; give a function that takes the prompt"):
        task.evaluate(runnable=3)
    with pytest.raises(ConfigError, match="prompt_template variable 'ward' is not a dataset column"):
        task.evaluate(runnable=agent_parsed_outcome, prompt_template="{ward}: {prompt}")
    no_prompt = EvalTask(dataset=[{"reference": "x"}], metrics=["exact_match"])
    with pytest.raises(ConfigError, match="case 1 has no prompt: the dataset needs a 'prompt' column"):
        no_prompt.evaluate(runnable=agent_parsed_outcome)
    assert not (in_tmp / ".clineval").exists()  # nothing was stored


def test_a_runnable_that_always_raises_gives_failures_not_an_exception(in_tmp: Path) -> None:
    from clineval import EvalTask

    def broken(prompt: str) -> dict[str, Any]:
        raise KeyError("tool registry")

    frame = pd.DataFrame({"prompt": PROMPTS, "reference_trajectory": REFERENCE_TRAJECTORIES})
    result = EvalTask(dataset=frame, metrics=["trajectory_recall"]).evaluate(runnable=broken)
    assert result.summary_metrics["failure/mean"] == 1.0
    assert result.summary_metrics["latency_in_seconds/mean"] is None  # no call returned
    assert result.summary_metrics["trajectory_recall/mean"] is None  # nothing scored, nothing counted as 0
    assert result.metrics_table["failure/explanation"].tolist() == ["KeyError: 'tool registry'"] * 3


def test_a_queryable_runnable_and_its_intermediate_steps(in_tmp: Path) -> None:
    """An object with query(input=...) (a LangChain agent on Agent Engine): output and intermediate steps."""
    from clineval import EvalTask

    class Queryable:
        def query(self, *, input: str) -> dict[str, Any]:  # Vertex AI's keyword
            step = {"kwargs": {"tool": "lookup_patient", "tool_input": {"bed": 4}}}
            return {"output": "done", "intermediate_steps": [[step, "found"]]}

    frame = pd.DataFrame({"prompt": [PROMPTS[0]], "reference_trajectory": [[LOOKUP_4]]})
    result = EvalTask(dataset=frame, metrics=["trajectory_exact_match"]).evaluate(runnable=Queryable())
    assert result.metrics_table["predicted_trajectory"][0] == [LOOKUP_4]
    assert result.summary_metrics["trajectory_exact_match/mean"] == 1.0


def test_the_example_of_docs_vertex_md_prints_what_the_page_shows(
    in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "vertex.md").read_text(encoding="utf-8")
    code = page.split("```python\n")[2].split("```")[0]  # the first block is the import lines
    shown = page.split("prints (latencies vary):\n\n```\n")[1].split("```")[0].splitlines()
    exec(compile(code, "docs/vertex.md", "exec"), {"__name__": "vertex_example"})
    printed = capsys.readouterr().out.splitlines()
    assert printed[1:] == shown[1:]  # the columns and the table, exactly
    summary, expected = eval(printed[0]), eval(shown[0])  # dict reprs
    assert list(summary) == list(expected)
    for key, value in expected.items():
        if not key.startswith("latency_in_seconds/"):
            assert summary[key] == pytest.approx(value), key
