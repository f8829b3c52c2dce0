"""The registry: names, specs with settings, import paths, and clear errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from clineval.errors import ConfigError, MetricNotFoundError
from clineval.metrics import MetricSpec, build_metric, catalogue, metric, parse_metric_spec, resolve_metric
from clineval.metrics.base import FunctionMetric, ScoreContext, score_case
from clineval.model import Case

SEED_NAMES = {
    "trajectory_exact_match",
    "trajectory_in_order_match",
    "trajectory_any_order_match",
    "trajectory_precision",
    "trajectory_recall",
    "trajectory_single_tool_use",
    "latency",
    "failure",
    "rouge",
    "bleu",
    "exact_match",
    "token_f1",
    "rubric",
}


def test_catalogue_has_the_seed_names_with_descriptions() -> None:
    entries = {e.name: e for e in catalogue()}
    assert set(entries) >= SEED_NAMES
    assert all(entries[n].description for n in SEED_NAMES)
    assert entries["rubric"].needs_judge
    assert entries["trajectory_recall"].requires == ("trajectory", "reference_trajectory")


def test_builtin_metrics_name_their_source_readably() -> None:
    builtins = [e for e in catalogue() if getattr(e.factory, "__module__", "").startswith("clineval.")]
    assert len(builtins) >= len(SEED_NAMES)
    for entry in builtins:
        assert entry.source, entry.name
        for text in (entry.source, entry.description):
            assert not re.search(r"seed\W*00\d", text, re.IGNORECASE), (entry.name, text)
    entries = {e.name: e for e in builtins}
    assert entries["conversational_faithfulness"].source == "ASTRID (Chowdhury et al.)"
    assert entries["faithfulness"].source == "RAGAS (Es et al.), as in ASTRID's appendix"
    assert entries["tbfact"].source == "TBFact (Healthcare Agent Orchestrator evaluation)"
    assert entries["latency"].source == "Vertex AI Gen AI evaluation (agent performance metrics)"
    assert entries["rubric"].source == "Vertex AI Gen AI evaluation (custom model-based metric)"


def test_metric_records_the_source_it_is_given() -> None:
    @metric("test_sourced_metric", source="Doe et al. (2024)")
    def sourced(response: str) -> float:
        """1 when there is a response."""
        return float(bool(response))

    entry = {e.name: e for e in catalogue()}["test_sourced_metric"]
    assert (entry.source, entry.description) == ("Doe et al. (2024)", "1 when there is a response.")


def test_parse_spec_forms() -> None:
    assert parse_metric_spec("rouge") == MetricSpec(name="rouge")
    spec = parse_metric_spec("uses_ct=trajectory_single_tool_use(tool_name=order_ct)")
    assert spec == MetricSpec(
        name="trajectory_single_tool_use", args={"tool_name": "order_ct"}, alias="uses_ct"
    )
    spec = parse_metric_spec("pkg.mod:Dose(threshold=0.5, units=['mg', 'g'], strict=true)")
    assert spec.args == {"threshold": 0.5, "units": ["mg", "g"], "strict": True}
    assert spec.result_name == "Dose"
    for bad in (
        "rouge(",
        "rouge(1)",
        "rouge(**x)",
        "",
        "rouge(a=b.c())",
        "rouge(a=1, a=2)",
        "rouge(a=1,,b=2)",
    ):
        with pytest.raises(ConfigError):
            parse_metric_spec(bad)


def test_bare_paths_and_dotted_words_are_strings() -> None:
    spec = parse_metric_spec("tbfact(reference_facts=facts.jsonl, policy=strict)")
    assert spec.args == {"reference_facts": "facts.jsonl", "policy": "strict"}
    spec = parse_metric_spec("tbfact(reference_facts=../curated/facts-v2.jsonl)")
    assert spec.args == {"reference_facts": "../curated/facts-v2.jsonl"}
    with pytest.raises(ConfigError, match="quote it if it is text"):
        parse_metric_spec("x(path=/tmp/a b.jsonl)")  # a space needs quotes
    assert parse_metric_spec("x(path='/tmp/a b.jsonl')").args == {"path": "/tmp/a b.jsonl"}
    spec = parse_metric_spec("rubric(rating_scale={1: 'poor', 5: 'good'}, instruction='a=b, c',)")
    assert spec.args == {"rating_scale": {1: "poor", 5: "good"}, "instruction": "a=b, c"}
    assert parse_metric_spec("rouge()").args == {}


def test_unknown_name_lists_catalogue_and_closest() -> None:
    with pytest.raises(MetricNotFoundError) as info:
        build_metric("trajectory_precison")
    message = str(info.value)
    assert "Did you mean 'trajectory_precision'?" in message
    assert "Known metrics:" in message and "rouge" in message


def test_alias_names_the_results_and_spec_is_kept() -> None:
    built = build_metric("uses_labs=trajectory_single_tool_use(tool_name=get_labs)")
    assert built.name == "uses_labs"
    assert built.spec == MetricSpec(  # type: ignore[attr-defined]
        name="trajectory_single_tool_use", args={"tool_name": "get_labs"}, alias="uses_labs"
    )


async def test_user_metric_by_file_path(tmp_path: Path) -> None:
    (tmp_path / "my_metrics.py").write_text(
        "from clineval import BaseMetric, Score\n"
        "class MentionsUnit(BaseMetric):\n"
        "    requires = ('response',)\n"
        "    def __init__(self, unit='mg'):\n"
        "        self.unit = unit\n"
        "    def score(self, case, ctx):\n"
        "        return Score(value=float(self.unit in case.response))\n"
        "def length(response):\n"
        "    return len(response)\n"
        "class AzureStyle:\n"
        "    def __init__(self, threshold=3):\n"
        "        self.threshold = threshold\n"
        "    def __call__(self, *, response, ground_truth):\n"
        "        return {'similar': float(response == ground_truth), 'threshold': self.threshold}\n",
        encoding="utf-8",
    )
    case = Case(id="1", response="give 5 mmol", reference="give 5 mmol")
    klass = build_metric(f"{tmp_path}/my_metrics.py:MentionsUnit(unit=mmol)")
    assert klass.name == "MentionsUnit"
    assert (await score_case(klass, case, ScoreContext())).value == 1.0
    fn = build_metric("my_metrics.py:length", base_dir=tmp_path)
    assert (await score_case(fn, case, ScoreContext())).value == 11.0
    evaluator = build_metric(
        MetricSpec(name="my_metrics.py:AzureStyle", args={"threshold": 4}), base_dir=tmp_path
    )
    score = await score_case(evaluator, case, ScoreContext())
    assert score.sub_scores == {"similar": 1.0, "threshold": 4.0}


def test_bad_import_paths_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot be imported"):
        build_metric("no_such_pkg.mod:Metric")
    with pytest.raises(ConfigError, match="has no attribute"):
        build_metric("clineval.metrics.text:NoSuchMetric")
    with pytest.raises(ConfigError, match="does not exist"):
        build_metric("missing_file.py:m", base_dir=tmp_path)
    with pytest.raises(ConfigError, match="bad settings"):
        build_metric("rouge(rouge_type=rouge9)")


def test_decorator_registers_function_with_settings() -> None:
    @metric("test_contains_word", description="1 when the response contains a word.")
    def contains_word(response: str, *, word: str) -> float:
        return float(word in response)

    entry = {e.name: e for e in catalogue()}["test_contains_word"]
    assert entry.requires == ("response",)
    built = build_metric("test_contains_word(word=potassium)")
    assert isinstance(built, FunctionMetric) and built.settings == {"word": "potassium"}


def test_resolve_accepts_functions_and_instances() -> None:
    def plain(response: str) -> float:
        return 1.0

    assert resolve_metric(plain).name == "plain"
    rouge = build_metric("rouge")
    assert resolve_metric(rouge) is rouge
    with pytest.raises(ConfigError):
        resolve_metric(42)  # type: ignore[arg-type]


def test_bare_decorator_registers() -> None:
    @metric
    def test_bare_registered(response: str) -> float:
        return 1.0

    assert "test_bare_registered" in {e.name for e in catalogue()}


def test_unregistered_instance_gets_its_class_name() -> None:
    from clineval.metrics.base import BaseMetric

    class ConciseEnough(BaseMetric):
        requires = ("response",)

        def score(self, case: Case, ctx: ScoreContext) -> float:  # type: ignore[override]
            return 1.0

    assert resolve_metric(ConciseEnough()).name == "ConciseEnough"
